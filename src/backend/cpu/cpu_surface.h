/* The CPU backend's searches and counts (dg_search_desc, dg_count_desc of
 * dg_backend.h): what NumPy's searchsorted, bincount, histogram and the
 * order statistics of median and percentile run on.
 *
 * Each runs synchronously on the calling thread (a virtual device's worker)
 * and cannot fail: the descriptor was validated and its memory allocated
 * before it was enqueued.  Descriptors are borrowed. */
#ifndef DG_CPU_SURFACE_H
#define DG_CPU_SURFACE_H

#include "../../core/dg_backend.h"

void dg_cpu_search_run(const dg_search_desc *d);
void dg_cpu_count_run(const dg_count_desc *d);

#endif /* DG_CPU_SURFACE_H */
