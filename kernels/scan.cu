/* Scan kernels (the CUDA backend's scan slot), one per foldable loop of
 * DG_LOOP_LIST (dg_ew_foldable, ew.cuh).
 *
 * One block scans one row at a time, in tiles of DG_CU_THREADS * DG_SCAN_ITEMS
 * elements: each thread scans its DG_SCAN_ITEMS neighbouring elements, the
 * block scans the threads' totals in shared memory (Hillis-Steele), and each
 * element gets carry (the rows's running total) op the totals of the threads
 * before it op its own prefix.  The fold is left to right; floating results
 * differ from a sequential fold by rounding only. */
#include <stdint.h>
#include <utility>

#include "ew.cuh"

#define DG_SCAN_ITEMS 4

template <int I>
__device__ __forceinline__ typename dg_ew_loop<I>::T0 dg_scan_op(typename dg_ew_loop<I>::T0 a,
                                                                 typename dg_ew_loop<I>::T0 b)
{
    typename dg_ew_loop<I>::T0 o;
    dg_ew_none none;
    dg_ew_loop<I>::eval(a, b, o, none);
    return o;
}

template <int I>
__global__ void __launch_bounds__(DG_CU_THREADS) dg_scan_k(const __grid_constant__ dg_cu_scan a)
{
    typedef typename dg_ew_loop<I>::T0 T;
    __shared__ T tot[DG_CU_THREADS];
    __shared__ bool have[DG_CU_THREADS];
    __shared__ T run;
    __shared__ bool run_have;
    const int t = (int)threadIdx.x;
    const int64_t tile = (int64_t)DG_CU_THREADS * DG_SCAN_ITEMS;

    for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
        int64_t so = 0, dof = 0, co = 0, r = row;
        for (int d = a.nrd - 1; d >= 0; d--) {
            const int64_t q = r / a.rshape[d], c = r - q * a.rshape[d];
            r = q;
            so += c * a.rsrc[d];
            dof += c * a.rdst[d];
            co += c * a.rcarry[d];
        }
        const char *src = a.src + so;
        char *dst = a.dst + dof;
        if (t == 0) {
            run_have = a.carry != NULL;
            if (run_have)
                run = *reinterpret_cast<const T *>(a.carry + co);
        }
        __syncthreads();
        for (int64_t base = 0; base < a.n; base += tile) {
            T x[DG_SCAN_ITEMS];
            int cnt = 0;
            const int64_t first = base + (int64_t)t * DG_SCAN_ITEMS;
#pragma unroll
            for (int e = 0; e < DG_SCAN_ITEMS; e++) {
                const int64_t j = first + e;
                if (j < a.n) {
                    x[e] = *reinterpret_cast<const T *>(src + j * a.ss);
                    if (e > 0)
                        x[e] = dg_scan_op<I>(x[e - 1], x[e]);
                    cnt = e + 1;
                }
            }
            tot[t] = cnt ? x[cnt - 1] : T{};
            have[t] = cnt > 0;
            __syncthreads();
            /* inclusive scan of the threads' totals */
            for (int off = 1; off < DG_CU_THREADS; off *= 2) {
                T v = tot[t];
                bool h = have[t];
                if (t >= off && have[t - off]) {
                    v = h ? dg_scan_op<I>(tot[t - off], v) : tot[t - off];
                    h = true;
                }
                __syncthreads();
                tot[t] = v;
                have[t] = h;
                __syncthreads();
            }
            /* prefix before this thread: run op tot[t - 1] */
            bool ph = run_have;
            T p = run;
            if (t > 0 && have[t - 1]) {
                p = ph ? dg_scan_op<I>(p, tot[t - 1]) : tot[t - 1];
                ph = true;
            }
#pragma unroll
            for (int e = 0; e < DG_SCAN_ITEMS; e++) {
                if (e < cnt) {
                    T v = ph ? dg_scan_op<I>(p, x[e]) : x[e];
                    *reinterpret_cast<T *>(dst + (first + e) * a.ds) = v;
                }
            }
            __syncthreads();
            if (t == DG_CU_THREADS - 1 && have[t]) {
                run = run_have ? dg_scan_op<I>(run, tot[t]) : tot[t];
                run_have = true;
            }
            __syncthreads();
        }
    }
}

typedef cudaError_t (*dg_scan_fn)(const dg_cu_scan *a, unsigned blocks, cudaStream_t s);

template <int I>
static cudaError_t dg_scan_launch_one(const dg_cu_scan *a, unsigned blocks, cudaStream_t s)
{
    void *args[] = {(void *)a};
    return cudaLaunchKernel((const void *)dg_scan_k<I>, dim3(blocks), dim3(DG_CU_THREADS), args,
                            0, s);
}

template <int I> constexpr dg_scan_fn dg_scan_entry()
{
    if constexpr (dg_ew_foldable<I>())
        return &dg_scan_launch_one<I>;
    else
        return NULL;
}

template <class Seq> struct dg_scan_table;
template <size_t... I> struct dg_scan_table<std::index_sequence<I...> > {
    static constexpr dg_scan_fn fns[] = {dg_scan_entry<(int)I>()...};
};
typedef dg_scan_table<std::make_index_sequence<dg_ew_nloops> > dg_scans;

extern "C" {
int dg_cu_scan_has(int loop) { return loop >= 0 && loop < dg_ew_nloops && dg_scans::fns[loop]; }

cudaError_t dg_cu_scan_launch(int loop, const dg_cu_scan *a, unsigned blocks, cudaStream_t s)
{
    if (!dg_cu_scan_has(loop))
        return cudaErrorInvalidValue;
    return dg_scans::fns[loop](a, blocks, s);
}
}
