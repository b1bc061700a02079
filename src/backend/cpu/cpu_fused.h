/* The CPU backend's fused elementwise work (dg_backend_i.fused, cpu_fused.c).
 *
 * A fused chain (dg_fused.h) runs tile by tile, as numexpr evaluates an
 * expression: the space is walked in runs of the innermost axis cut into
 * tiles of a few thousand elements, and every step runs over one tile (with
 * the same inner loops as unfused work: NumPy's, where the binding handed
 * them over) before the next tile starts, so the values passed between steps
 * stay in the cache. */
#ifndef DG_CPU_FUSED_H
#define DG_CPU_FUSED_H

#include <stddef.h>
#include "../../core/dg_backend.h"

/* Bytes of scratch memory dg_cpu_fused_run needs for d's temporaries. */
size_t dg_cpu_fused_scratch_bytes(const dg_fused_desc *d);

/* Runs d (validated by the core: loops in range, values of their dtypes)
 * with `scratch` of dg_cpu_fused_scratch_bytes(d) bytes, 64-byte aligned.
 * Cannot fail.  d (the task's own copy) is coalesced in place; both
 * borrowed. */
void dg_cpu_fused_run(dg_fused_desc *d, void *scratch);

#endif /* DG_CPU_FUSED_H */
