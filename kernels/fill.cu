/* Fill kernels: DG_FILL_CONST, DG_FILL_EYE, DG_FILL_ARANGE and DG_FILL_RANDOM
 * (dg_backend.h), matching the CPU backend (src/backend/cpu/cpu_loops.c).
 *
 * CONST and EYE write bit patterns, so they depend only on the itemsize;
 * a dense CONST is a byte-pattern fill with 16-byte stores.  ARANGE computes
 * value + g * delta in the dtype, g the element's global index, as NumPy's
 * arange fill functions do (float16 through float, complex per component,
 * integers modulo 2^bits), with the conversions of kernels/dg_scalar.h. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cu_kernels.h"
#include "dg_random.h"
#include "dg_scalar.h"

/* ---- dense byte-pattern fill ------------------------------------------- */

typedef struct dg_fp_args {
    uint4 vec;              /* the 16 bytes every aligned 16-byte word gets */
    unsigned char value[16];
    char *dst;
    int64_t nbytes;
    int64_t head;           /* bytes before the first 16-byte aligned address */
    int64_t nvec;           /* aligned 16-byte words after the head */
    int32_t itemsize;
} dg_fp_args;

__global__ void __launch_bounds__(DG_CU_THREADS) dg_fill_pattern_k(const __grid_constant__ dg_fp_args a)
{
    const int64_t first = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x;
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;
    uint4 *v = reinterpret_cast<uint4 *>(a.dst + a.head);
    int64_t i;

    for (i = first; i < a.nvec; i += step)
        v[i] = a.vec;
    /* the unaligned bytes at both ends: fewer than 32, block 0 only */
    if (first < 16 && first < a.head)
        a.dst[first] = a.value[first % a.itemsize];
    i = a.head + a.nvec * 16 + first;
    if (first < 16 && i < a.nbytes)
        a.dst[i] = a.value[i % a.itemsize];
}

extern "C" cudaError_t dg_cu_fill_pattern(char *dst, int64_t nbytes, const unsigned char *value,
                                          int itemsize, unsigned blocks, cudaStream_t s)
{
    dg_fp_args a;
    unsigned char pat[16];
    int64_t j;

    if (itemsize < 1 || itemsize > 16 || 16 % itemsize != 0)
        return cudaErrorInvalidValue;
    memset(&a, 0, sizeof a);
    memcpy(a.value, value, (size_t)itemsize);
    a.dst = dst;
    a.nbytes = nbytes;
    a.itemsize = itemsize;
    a.head = (int64_t)((16 - (uintptr_t)dst % 16) % 16);
    if (a.head > nbytes)
        a.head = nbytes;
    a.nvec = (nbytes - a.head) / 16;
    /* the word at offset head + 16 k starts with byte (head % itemsize) of
     * the pattern, since itemsize divides 16 */
    for (j = 0; j < 16; j++)
        pat[j] = value[(a.head + j) % itemsize];
    memcpy(&a.vec, pat, 16);
    void *args[] = {&a};
    return cudaLaunchKernel((const void *)dg_fill_pattern_k, dim3(blocks), dim3(DG_CU_THREADS),
                            args, 0, s);
}

/* ---- strided CONST and EYE ---------------------------------------------- */

struct dg_fl_pair {
    uint64_t a, b;
};

template <class T>
__global__ void __launch_bounds__(DG_CU_THREADS)
dg_fill_k(const __grid_constant__ dg_fill_desc d, int64_t n)
{
    const T v = *reinterpret_cast<const T *>(d.value);
    const bool eye = d.kind == DG_FILL_EYE;
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; i < n; i += step) {
        int64_t r = i, off = 0, c0 = 0, c1 = 0;
        for (int a = d.ndim - 1; a >= 0; a--) {
            const int64_t c = a > 0 ? r % d.shape[a] : r;
            r = a > 0 ? r / d.shape[a] : 0;
            off += c * d.strides[a];
            if (a == 0)
                c0 = c;
            else if (a == 1)
                c1 = c;
        }
        T x = v;
        if (eye) {
            const int64_t gi = d.origin[0] + c0 * d.gstep[0];
            const int64_t gj = d.origin[1] + c1 * d.gstep[1];
            if (gj - gi != d.k)
                x = T{};
        }
        *reinterpret_cast<T *>(d.dst + off) = x;
    }
}

/* ---- ARANGE ---------------------------------------------------------------- */

/* value + g * delta in dtype DT (C type T), as the CPU backend computes it
 * (src/backend/cpu/cpu_loops.c, dg_cpu_arange_at): element 0 is the start
 * itself for the floating types (so -0.0 stays -0.0, and an infinite delta
 * does not turn it into NaN). */
template <int DT, class T>
__device__ __forceinline__ T dg_arange_at(const T &s, const T &dl, int64_t g)
{
    if constexpr (DT == DG_BOOL) {
        return (T)((int64_t)(s != 0) + g * (int64_t)(dl != 0) != 0);
    } else if constexpr (DT == DG_FLOAT16) {
        if (g == 0)
            return s;
        return dg_float_to_half(dg_half_to_float(s) + (float)g * dg_half_to_float(dl));
    } else if constexpr (DT == DG_FLOAT32 || DT == DG_FLOAT64) {
        return g == 0 ? s : s + (T)g * dl;
    } else if constexpr (DT == DG_COMPLEX64 || DT == DG_COMPLEX128) {
        typedef decltype(s.re) R;
        T r = s;
        if (g != 0) {
            r.re = s.re + (R)g * dl.re;
            r.im = s.im + (R)g * dl.im;
        }
        return r;
    } else {
        /* integers: modulo 2^bits, as the C loop's wrap-around gives */
        return (T)((uint64_t)(int64_t)s + (uint64_t)g * (uint64_t)(int64_t)dl);
    }
}

/* 1-d (or 0-d: one element, global index origin[0] or 0). */
template <int DT, class T>
__global__ void __launch_bounds__(DG_CU_THREADS)
dg_arange_k(const __grid_constant__ dg_fill_desc d, int64_t n)
{
    const T s = *reinterpret_cast<const T *>(d.value);
    const T dl = *reinterpret_cast<const T *>(d.delta);
    const int64_t stride = d.ndim > 0 ? d.strides[0] : 0;
    const int64_t gstep = d.ndim > 0 ? d.gstep[0] : 0;
    const int64_t origin = d.ndim > 0 ? d.origin[0] : 0;
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; i < n; i += step)
        *reinterpret_cast<T *>(d.dst + i * stride) = dg_arange_at<DT, T>(s, dl, origin + i * gstep);
}

/* ---- RANDOM ---------------------------------------------------------------- */

/* One thread per group of 1 << shift elements (the elements of one Philox
 * block when the innermost axis is dense in global indices): the code the
 * CPU backend runs (kernels/dg_random.h). */
__global__ void __launch_bounds__(DG_CU_THREADS)
dg_random_k(const __grid_constant__ dg_fill_desc d, int64_t n, int32_t isz, int32_t shift)
{
    const int64_t ngroups = (n + ((int64_t)1 << shift) - 1) >> shift;
    const int64_t step = (int64_t)gridDim.x * DG_CU_THREADS;
    for (int64_t g = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; g < ngroups; g += step)
        dg_random_group(&d, isz, shift, g, n);
}

/* A run's kernel (dg_cu_rand_run): each thread takes a unit of UE elements
 * (16 bytes), UB whole Philox blocks of E elements, computes every element
 * of the unit with dg_rand_bits and stores the unit at once.  The units are
 * aligned to blocks in flat indices, so every word index is a constant and
 * the words of a block come from one Philox call. */
template <int DIST, int ISZ>
struct dg_rr_geom {
    static constexpr int SHIFT = ISZ <= 4 ? 2 : 1; /* dg_rand_shift */
    static constexpr int E = 1 << SHIFT;
    static constexpr int UE = 16 / ISZ;
    static constexpr int UB = UE / E;
};

/* The UE elements' low ISZ bytes as one 16-byte word, element 0 first. */
template <int ISZ, int UE>
__device__ __forceinline__ uint4 dg_rr_pack(const uint64_t (&v)[UE])
{
    uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
    for (int j = 0; j < UE; j++) {
        const int bit = j * ISZ * 8;
        if constexpr (ISZ == 8) {
            w[bit / 32] = (uint32_t)v[j];
            w[bit / 32 + 1] = (uint32_t)(v[j] >> 32);
        } else if constexpr (ISZ == 4) {
            w[bit / 32] = (uint32_t)v[j];
        } else {
            w[bit / 32] |= ((uint32_t)v[j] & ((1u << (ISZ * 8)) - 1u)) << (bit % 32);
        }
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

/* The bits of the UE elements of unit u (flat indices u * UE on) of run a
 * (its fill r, in registers); its blocks' indices hi 2^32 + lo (the high
 * half given, for callers that know it common to several units). */
template <int DIST, int ISZ>
__device__ __forceinline__ void dg_rr_unit_hl(const dg_cu_rand_run &a, const dg_fill_random *r,
                                              uint64_t u, uint32_t hi,
                                              uint64_t (&v)[dg_rr_geom<DIST, ISZ>::UE])
{
    typedef dg_rr_geom<DIST, ISZ> G;
    const uint64_t f0 = u * G::UE;
#pragma unroll
    for (int j = 0; j < G::UB; j++) {
        const dg_u32x4 w = dg_rand_block_plan(a.plan, (uint32_t)(u * G::UB) + (uint32_t)j, hi);
        dg_rand_polar pr = {0.0, 0.0, 0.0, {0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
        if (DIST == DG_RAND_NORMAL)
            pr = dg_rand_normals(w, ISZ);
#pragma unroll
        for (int k = 0; k < G::E; k++)
            v[j * G::E + k] = dg_rand_bits(r, ISZ, f0 + (uint64_t)(j * G::E + k), w, pr);
    }
}

template <int DIST, int ISZ>
__device__ __forceinline__ void dg_rr_unit(const dg_cu_rand_run &a, const dg_fill_random *r,
                                           uint64_t u, uint64_t (&v)[dg_rr_geom<DIST, ISZ>::UE])
{
    dg_rr_unit_hl<DIST, ISZ>(a, r, u, (uint32_t)(u * dg_rr_geom<DIST, ISZ>::UB >> 32), v);
}

/* Stores the bits v of unit u of run a (dg_rr_unit) whole at p, the
 * unit's place (wholly inside the run and aligned: one 16-byte store). */
template <int ISZ, int UE>
__device__ __forceinline__ void dg_rr_put_full(char *p, const uint64_t (&v)[UE])
{
    *reinterpret_cast<uint4 *>(p) = dg_rr_pack<ISZ, UE>(v);
}

/* The same element by element: those of unit u's elements in the run. */
template <int ISZ, int UE>
__device__ __forceinline__ void dg_rr_put_part(const dg_cu_rand_run &a, uint64_t u,
                                               const uint64_t (&v)[UE])
{
    const uint64_t f0 = u * UE, end = a.first + (uint64_t)a.n;
#pragma unroll
    for (int q = 0; q < UE; q++)
        if (f0 + (uint64_t)q >= a.first && f0 + (uint64_t)q < end)
            dg_rand_put(ISZ, v[q], a.dst + (int64_t)(f0 + (uint64_t)q - a.first) * ISZ);
}

/* Index i of the range [lo0, hi0) followed by the one from lo1. */
__device__ __forceinline__ uint64_t dg_rr_nth(uint64_t i, uint64_t lo0, uint64_t hi0,
                                              uint64_t lo1)
{
    return i < hi0 - lo0 ? lo0 + i : lo1 + (i - (hi0 - lo0));
}

/* The units wholly inside an aligned run, [w0, w1), take one 16-byte store
 * each, UNR units a thread per step so that the compiler interleaves their
 * arithmetic; the partial units at its ends (or
 * every unit of a run that is not aligned) are stored element by element.
 * UNIT: uniforms of [0, 1) (a 0, b 1), computed as -0.0 + 1 * u, which the
 * compiler folds to u: the same bits as 0 + 1 * u for every u >= +0,
 * without the two operations; float32 standard normals, computed as
 * fmaf(1 * r, f, 0), folded to fmaf(r, f, 0) (one fma: r f may be -0).
 * Float32 normals are held to 32 registers (8 blocks an SM, full
 * occupancy: ptxas takes 38 otherwise, for no fewer instructions). */
template <int DIST, int ISZ, bool UNIT = false>
__global__ void __launch_bounds__(DG_CU_THREADS, DIST == DG_RAND_NORMAL && ISZ == 4 ? 8 : 0)
dg_random_run_k(const __grid_constant__ dg_cu_rand_run a)
{
    typedef dg_rr_geom<DIST, ISZ> G;
    /* units a thread takes a step: float32 normals are arithmetic-bound
     * (fewer loop instructions per unit with 4), uniforms memory-bound,
     * integers (rejection loops, more registers) one */
    constexpr int UNR = DIST == DG_RAND_NORMAL ? 4 : DIST == DG_RAND_UNIFORM ? 2 : 1;
    dg_fill_random r = a.r; /* in registers; the distribution a constant */
    r.dist = DIST;
    if (UNIT) {
        r.a = DIST == DG_RAND_UNIFORM ? -0.0 : 0.0;
        r.b = 1.0;
    }
    const uint64_t end = a.first + (uint64_t)a.n;
    const uint64_t u0 = a.first / G::UE, u1 = (end + G::UE - 1) / G::UE;
    uint64_t w0 = (a.first + G::UE - 1) / G::UE, w1 = end / G::UE;
    const uint64_t step = (uint64_t)gridDim.x * DG_CU_THREADS;
    const uint64_t tid = (uint64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x;
    uint64_t u, v[G::UE];
    if (!a.aligned)
        w0 = w1 = u1;
    if (w1 < w0)
        w1 = w0;
    if (UNR == 1) {
        /* one loop over every unit, each stored as it lies */
        for (u = u0 + tid; u < u1; u += step) {
            dg_rr_unit<DIST, ISZ>(a, &r, u, v);
            if (u >= w0 && u < w1)
                dg_rr_put_full<ISZ>(a.dst + (int64_t)(u * G::UE - a.first) * ISZ, v);
            else
                dg_rr_put_part<ISZ>(a, u, v);
        }
        return;
    }
    {
        /* whole chunks of CH = 32 UNR units from a multiple of CH, c0 to cl:
         * each warp stores one chunk a step, lane l its units l, l + 32, ...
         * (UNR 512-byte stores); the chunk's blocks share the high half of
         * their index (its low half at most 2^32 - CH) */
        const uint64_t CH = 32 * UNR, nw = step / 32;
        uint64_t c0 = (w0 + CH - 1) / CH * CH, cl = w1 / CH * CH, c;
        char *p;
        if (c0 > w1)
            c0 = w1;
        if (cl < c0)
            cl = c0;
        c = c0 + (tid >> 5) * CH;
        p = a.dst + (int64_t)((c + (tid & 31)) * G::UE - a.first) * ISZ;
        for (; c < cl; c += nw * CH, p += 16 * nw * CH) {
            const uint32_t hi = (uint32_t)(c * G::UB >> 32);
#pragma unroll
            for (int k = 0; k < UNR; k++) {
                dg_rr_unit_hl<DIST, ISZ>(a, &r, c + (tid & 31) + 32 * k, hi, v);
                dg_rr_put_full<ISZ>(p + 512 * k, v);
            }
        }
        /* the whole units outside those chunks, [w0, c0) and [cl, w1) */
        for (uint64_t i = tid; i < (c0 - w0) + (w1 - cl); i += step) {
            u = dg_rr_nth(i, w0, c0, cl);
            dg_rr_unit<DIST, ISZ>(a, &r, u, v);
            dg_rr_put_full<ISZ>(a.dst + (int64_t)(u * G::UE - a.first) * ISZ, v);
        }
    }
    /* the rest, [u0, w0) and [w1, u1), as one range of indices */
    for (uint64_t i = tid; i < (w0 - u0) + (u1 - w1); i += step) {
        u = dg_rr_nth(i, u0, w0, w1);
        dg_rr_unit<DIST, ISZ>(a, &r, u, v);
        dg_rr_put_part<ISZ>(a, u, v);
    }
}

extern "C" cudaError_t dg_cu_random_run(const dg_cu_rand_run *a, int nsm, cudaStream_t s)
{
    const int isz = dg_dtype_size(a->dtype), dist = a->r.dist;
    const bool unit = a->r.a == 0.0 && !signbit(a->r.a) && a->r.b == 1.0; /* see dg_random_run_k */
    const void *k = NULL;
    int64_t units, blocks;
    dg_cu_rand_run ak = *a;
    void *args[] = {(void *)&ak};
    dg_rand_plan(&a->r, ak.plan);
    if (dist == DG_RAND_UNIFORM && isz == 4)
        k = unit ? (const void *)dg_random_run_k<DG_RAND_UNIFORM, 4, true>
                 : (const void *)dg_random_run_k<DG_RAND_UNIFORM, 4>;
    else if (dist == DG_RAND_UNIFORM && isz == 8)
        k = unit ? (const void *)dg_random_run_k<DG_RAND_UNIFORM, 8, true>
                 : (const void *)dg_random_run_k<DG_RAND_UNIFORM, 8>;
    else if (dist == DG_RAND_NORMAL && (isz == 4 || isz == 8))
        k = isz == 8 ? (const void *)dg_random_run_k<DG_RAND_NORMAL, 8>
            : unit   ? (const void *)dg_random_run_k<DG_RAND_NORMAL, 4, true>
                     : (const void *)dg_random_run_k<DG_RAND_NORMAL, 4>;
    else if (dist == DG_RAND_INTEGERS && isz == 1)
        k = (const void *)dg_random_run_k<DG_RAND_INTEGERS, 1>;
    else if (dist == DG_RAND_INTEGERS && isz == 2)
        k = (const void *)dg_random_run_k<DG_RAND_INTEGERS, 2>;
    else if (dist == DG_RAND_INTEGERS && isz == 4)
        k = (const void *)dg_random_run_k<DG_RAND_INTEGERS, 4>;
    else if (dist == DG_RAND_INTEGERS && isz == 8)
        k = (const void *)dg_random_run_k<DG_RAND_INTEGERS, 8>;
    if (k == NULL || a->n <= 0)
        return cudaErrorInvalidValue;
    units = (a->n + 2 * (16 / isz)) / (16 / isz); /* with both ends' partial units */
    blocks = (units + DG_CU_THREADS - 1) / DG_CU_THREADS;
    if (blocks > (int64_t)nsm * 32)
        blocks = (int64_t)nsm * 32;
    if (blocks < 1)
        blocks = 1;
    return cudaLaunchKernel(k, dim3((unsigned)blocks), dim3(DG_CU_THREADS), args, 0, s);
}

extern "C" cudaError_t dg_cu_fill_launch(const dg_fill_desc *d, int64_t n, unsigned blocks,
                                         cudaStream_t s)
{
    void *args[] = {(void *)d, &n};
    const void *k;
    if (d->kind == DG_FILL_RANDOM) {
        int32_t isz = dg_dtype_size(d->dtype), shift = dg_rand_shift(d, isz);
        void *rargs[] = {(void *)d, &n, &isz, &shift};
        return cudaLaunchKernel((const void *)dg_random_k, dim3(blocks), dim3(DG_CU_THREADS),
                                rargs, 0, s);
    }
    if (d->kind == DG_FILL_ARANGE) {
        switch (d->dtype) {
#define DG_FL_X(E, sfx, ct, sz, ch, nm, kd)                    \
    case DG_##E:                                               \
        k = (const void *)dg_arange_k<DG_##E, ct>;             \
        break;
            DG_DTYPE_LIST(DG_FL_X)
#undef DG_FL_X
        default: return cudaErrorInvalidValue;
        }
    } else if (d->kind == DG_FILL_CONST || d->kind == DG_FILL_EYE) {
        switch (dg_dtype_size(d->dtype)) {
        case 1: k = (const void *)dg_fill_k<uint8_t>; break;
        case 2: k = (const void *)dg_fill_k<uint16_t>; break;
        case 4: k = (const void *)dg_fill_k<uint32_t>; break;
        case 8: k = (const void *)dg_fill_k<uint64_t>; break;
        case 16: k = (const void *)dg_fill_k<dg_fl_pair>; break;
        default: return cudaErrorInvalidValue;
        }
    } else {
        return cudaErrorInvalidValue;
    }
    return cudaLaunchKernel(k, dim3(blocks), dim3(DG_CU_THREADS), args, 0, s);
}
