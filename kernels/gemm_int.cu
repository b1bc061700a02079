/* Matrix products of bool and integer dtypes (cuBLAS has none that wrap as
 * NumPy's do).  One kernel per dtype, generated from DG_DTYPE_LIST: 16 x 16
 * threads compute a 16 x 16 block of C, staging 16-wide slices of A and B
 * in shared memory; every product and sum is taken in 64-bit unsigned
 * arithmetic, which wraps as the dtype does once truncated (bool: the OR of
 * ANDs).  Any byte strides; grid-stride loops over blocks and batch
 * entries, so any size fits the grid. */
#include <stddef.h>
#include <stdint.h>

#include "cu_gemm_kernels.h"

#define DG_GI_TILE 16

typedef unsigned long long dg_gi_acc;

/* The argument block: the descriptor with the batch unrolled to one count. */
struct dg_gi_args {
    dg_gemm_desc d;
    int64_t nbat; /* product of d.batch */
};

template <class T, bool IS_BOOL>
__device__ __forceinline__ dg_gi_acc dg_gi_load(const char *p)
{
    const T v = *reinterpret_cast<const T *>(p);
    if (IS_BOOL)
        return v != 0;
    /* sign-extend signed types: the 64-bit product then wraps as T's */
    return (dg_gi_acc)(long long)v;
}

template <class T, bool IS_BOOL>
__global__ void __launch_bounds__(DG_GI_TILE * DG_GI_TILE)
    dg_gemm_int_k(const __grid_constant__ dg_gi_args g)
{
    __shared__ dg_gi_acc as[DG_GI_TILE][DG_GI_TILE + 1];
    __shared__ dg_gi_acc bs[DG_GI_TILE][DG_GI_TILE + 1];
    const dg_gemm_desc &d = g.d;
    const int tx = threadIdx.x, ty = threadIdx.y;
    for (int64_t z = blockIdx.z; z < g.nbat; z += gridDim.z) {
        const char *a = d.a, *b = d.b;
        char *c = d.c;
        int64_t r = z;
        for (int ax = d.nbatch - 1; ax >= 0; ax--) {
            const int64_t i = r % d.batch[ax];
            r /= d.batch[ax];
            a += i * d.a_bs[ax];
            b += i * d.b_bs[ax];
            c += i * d.c_bs[ax];
        }
        for (int64_t i0 = (int64_t)blockIdx.y * DG_GI_TILE; i0 < d.m;
             i0 += (int64_t)gridDim.y * DG_GI_TILE) {
            for (int64_t j0 = (int64_t)blockIdx.x * DG_GI_TILE; j0 < d.n;
                 j0 += (int64_t)gridDim.x * DG_GI_TILE) {
                const int64_t i = i0 + ty, j = j0 + tx;
                dg_gi_acc acc = 0;
                for (int64_t p0 = 0; p0 < d.k; p0 += DG_GI_TILE) {
                    as[ty][tx] = i < d.m && p0 + tx < d.k
                                     ? dg_gi_load<T, IS_BOOL>(a + i * d.a_rs + (p0 + tx) * d.a_cs)
                                     : 0;
                    bs[ty][tx] = p0 + ty < d.k && j < d.n
                                     ? dg_gi_load<T, IS_BOOL>(b + (p0 + ty) * d.b_rs + j * d.b_cs)
                                     : 0;
                    __syncthreads();
#pragma unroll
                    for (int q = 0; q < DG_GI_TILE; q++) {
                        if (IS_BOOL)
                            acc |= as[ty][q] & bs[q][tx];
                        else
                            acc += as[ty][q] * bs[q][tx];
                    }
                    __syncthreads();
                }
                if (i < d.m && j < d.n) {
                    T *out = reinterpret_cast<T *>(c + i * d.c_rs + j * d.c_cs);
                    if (d.beta)
                        acc = IS_BOOL ? (acc | (dg_gi_acc)(*out != 0))
                                      : acc + dg_gi_load<T, false>((const char *)out);
                    *out = IS_BOOL ? (T)(acc != 0) : (T)acc;
                }
            }
        }
    }
}

template <char KIND, class T>
static cudaError_t dg_gi_launch(const dg_gi_args *g, dim3 grid, cudaStream_t s)
{
    if constexpr (KIND == 'b' || KIND == 'i' || KIND == 'u') {
        void *args[] = {(void *)g};
        return cudaLaunchKernel((const void *)dg_gemm_int_k<T, KIND == 'b'>, grid,
                                dim3(DG_GI_TILE, DG_GI_TILE), args, 0, s);
    } else {
        (void)g;
        (void)grid;
        (void)s;
        return cudaErrorInvalidValue;
    }
}

static unsigned dg_gi_blocks(int64_t n, int64_t cap)
{
    int64_t b = (n + DG_GI_TILE - 1) / DG_GI_TILE;
    return (unsigned)(b < 1 ? 1 : b > cap ? cap : b);
}

extern "C" cudaError_t dg_cu_gemm_int_launch(const dg_gemm_desc *d, cudaStream_t s)
{
    dg_gi_args g;
    int64_t nbat = 1;
    if (d->nbatch < 0 || d->nbatch > DG_MAXDIM - 2 || d->m < 1 || d->n < 1 || d->k < 0)
        return cudaErrorInvalidValue;
    for (int ax = 0; ax < d->nbatch; ax++)
        nbat *= d->batch[ax];
    if (nbat == 0)
        return cudaSuccess;
    g.d = *d;
    g.nbat = nbat;
    dim3 grid(dg_gi_blocks(d->n, 1 << 20), dg_gi_blocks(d->m, 32768),
              (unsigned)(nbat < 32768 ? nbat : 32768));
    switch (d->dtype) {
#define DG_X_GI(E, sfx, ct, sz, ch, nm, kd) \
    case DG_##E: return dg_gi_launch<kd, ct>(&g, grid, s);
        DG_DTYPE_LIST(DG_X_GI)
#undef DG_X_GI
    default: return cudaErrorInvalidValue;
    }
}
