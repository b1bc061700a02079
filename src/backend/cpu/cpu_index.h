/* The CPU backend's data-dependent index work: compaction, keyed row
 * copies, routing and sorting (dg_select_desc ... dg_sort_desc of
 * dg_backend.h).
 *
 * Each runs synchronously on the calling thread (a virtual device's worker)
 * and cannot fail: the descriptor was validated and its memory allocated
 * before it was enqueued.  Descriptors are borrowed. */
#ifndef DG_CPU_INDEX_H
#define DG_CPU_INDEX_H

#include <stddef.h>

#include "../../core/dg_backend.h"

void dg_cpu_select_run(const dg_select_desc *d);
void dg_cpu_rows_run(const dg_rows_desc *d);
void dg_cpu_route_run(const dg_route_desc *d);

/* Bytes of workspace dg_cpu_sort_run needs for d. */
size_t dg_cpu_sort_work_bytes(const dg_sort_desc *d);
/* Sorts with `work` (dg_cpu_sort_work_bytes of it, 8-byte aligned). */
void dg_cpu_sort_run(const dg_sort_desc *d, void *work);

#endif /* DG_CPU_INDEX_H */
