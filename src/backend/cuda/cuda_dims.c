/* Coalescing of N-d iteration spaces before a launch (see cuda_internal.h).
 *
 * Fewer axes mean fewer divisions per element in the strided kernels, and a
 * space every operand walks densely becomes 1-d, which the contiguous fast
 * paths (vector loads, cudaMemcpyAsync, memset) recognise. */
#include "cuda_internal.h"

int cu_coalesce(int ndim, int64_t *shape, int nop, int64_t (*strides)[DG_MAXDIM])
{
    int out = 0, a, k;

    for (a = 0; a < ndim; a++) {
        int merge;
        if (shape[a] == 1)
            continue;
        merge = out > 0;
        for (k = 0; k < nop && merge; k++)
            merge = strides[k][out - 1] == strides[k][a] * shape[a];
        if (merge) {
            shape[out - 1] *= shape[a];
            for (k = 0; k < nop; k++)
                strides[k][out - 1] = strides[k][a];
        } else {
            shape[out] = shape[a];
            for (k = 0; k < nop; k++)
                strides[k][out] = strides[k][a];
            out++;
        }
    }
    if (out == 0) {
        shape[0] = 1;
        for (k = 0; k < nop; k++)
            strides[k][0] = 0;
        out = 1;
    }
    return out;
}
