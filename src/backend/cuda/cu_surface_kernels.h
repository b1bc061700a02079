/* The C interface of the search and count kernels (kernels/surface.cu):
 * argument blocks after coalescing, and their launchers (see cu_kernels.h
 * for the conventions: blocks by value, one launch on the given stream of
 * the current device, never a synchronisation). */
#ifndef DG_CU_SURFACE_KERNELS_H
#define DG_CU_SURFACE_KERNELS_H

#include "cu_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A search (dg_search_desc): the total values of an N-d block (shape; byte
 * strides vstr from val, dstr to dst), each searched in the n elements of
 * seq (seq_stride bytes apart), one thread per value. */
typedef struct dg_cu_search {
    int32_t dtype, right, accumulate, ndim;
    int64_t n, total, seq_stride;
    const char *seq;
    const char *val;
    int64_t *dst;
    int64_t shape[DG_MAXDIM], vstr[DG_MAXDIM], dstr[DG_MAXDIM];
} dg_cu_search;

/* cudaErrorInvalidValue (nothing enqueued) for a dtype it does not search. */
cudaError_t dg_cu_search_launch(const dg_cu_search *a, unsigned blocks, cudaStream_t s);

/* A count (dg_count_desc, its modes DG_COUNT_*) of the total elements of an
 * N-d block (shape; byte strides sstr from src, wstr from weight).  Where
 * the bins fit in DG_CU_SMEM_BYTES, each block counts in shared memory
 * (32-bit counters, or float64 sums) and adds its bins to the global ones
 * once.  A radix count under two prefixes (nprefix 2) has prefix2 set, else
 * prefix2 is prefix. */
#define DG_CU_SMEM_BYTES 32768
typedef struct dg_cu_count {
    int32_t radix, dtype, ndim, shift, pshift, nprefix;
    uint64_t prefix, prefix2;
    int64_t total, nbins;
    const char *src;
    const char *weight;
    const char *edges;
    unsigned long long *cnt;
    double *sum;
    int64_t shape[DG_MAXDIM], sstr[DG_MAXDIM], wstr[DG_MAXDIM];
} dg_cu_count;

/* cudaErrorInvalidValue (nothing enqueued) for a radix count of a dtype
 * without order keys. */
cudaError_t dg_cu_count_launch(const dg_cu_count *a, unsigned blocks, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif /* DG_CU_SURFACE_KERNELS_H */
