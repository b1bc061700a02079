/* Reduction kernels (the CUDA backend's reduce slot), generated from the lists.
 *
 * A fold is an Op: LoopOp<I> folds with loop I of DG_LOOP_LIST (those of add,
 * multiply, maximum, minimum, fmax, fmin and the logical and bitwise ufuncs
 * whose three dtypes are equal), ArgOp<DT, MIN> keeps (value, index) pairs in
 * NumPy's argmax / argmin order (dg_arg<max|min>_better_<t>, dg_scalar.h).
 * Every thread folds its elements into a State (value, index, have: an empty
 * state is the fold's neutral element, so no identity is needed), the block
 * merges its threads' states in shared memory in a fixed tree order
 * (deterministic results), and one state per (output, chunk) is written: the
 * result itself, or a partial that the final pass folds.
 *
 * Three passes (cu_kernels.h, dg_cu_red): inner (one block per output and
 * chunk, threads along the reduced dims), outer (32 outputs x 8 reduced rows
 * per block, for kept dims that are the inner ones, so that a warp reads
 * consecutive outputs) and final. */
#include <stdint.h>
#include <type_traits>
#include <utility>

#include "ew.cuh"

/* ---- the folds ------------------------------------------------------------ */

template <class T> struct dg_red_state {
    T v;
    int64_t i;
    bool have;
};

template <int I> struct dg_red_loop_op {
    typedef dg_ew_loop<I> L;
    typedef typename L::T0 T;
    static constexpr bool ARG = false;
    static __device__ __forceinline__ void fold(T &acc, int64_t &, const T &x, int64_t)
    {
        T a = acc, b = x, o;
        dg_ew_none none;
        L::eval(a, b, o, none);
        acc = o;
    }
};

template <int DT> struct dg_red_dt;
#define DG_RED_DT(E, t, ct, sz, ch, nm, kd)                                     \
    template <> struct dg_red_dt<DG_##E> {                                      \
        typedef ct T;                                                           \
        static __device__ __forceinline__ bool better(const ct &a, const ct &b, bool min) \
        {                                                                       \
            return min ? dg_argmin_better_##t(a, b) : dg_argmax_better_##t(a, b); \
        }                                                                       \
    };
DG_DTYPE_LIST(DG_RED_DT)
#undef DG_RED_DT

template <int DT, bool MIN> struct dg_red_arg_op {
    typedef typename dg_red_dt<DT>::T T;
    static constexpr bool ARG = true;
    static __device__ __forceinline__ void fold(T &acc, int64_t &ai, const T &x, int64_t xi)
    {
        if (dg_red_dt<DT>::better(x, acc, MIN) ||
            (!dg_red_dt<DT>::better(acc, x, MIN) && xi < ai)) {
            acc = x;
            ai = xi;
        }
    }
};

template <class Op>
__device__ __forceinline__ void dg_red_merge(dg_red_state<typename Op::T> &a,
                                             const dg_red_state<typename Op::T> &b)
{
    if (!b.have)
        return;
    if (!a.have) {
        a = b;
        return;
    }
    Op::fold(a.v, a.i, b.v, b.i);
}

/* ---- addressing ----------------------------------------------------------- */

/* Byte offsets of kept output m: in src, dst, idx and where. */
__device__ __forceinline__ void dg_red_kept(const dg_cu_red &a, int64_t m, int64_t &src,
                                            int64_t &dst, int64_t &idx, int64_t &wh)
{
    src = dst = idx = wh = 0;
    for (int d = a.nk - 1; d >= 0; d--) {
        const int64_t n = a.kshape[d], q = m / n, c = m - q * n;
        m = q;
        src += c * a.kstr[d];
        dst += c * a.kdst[d];
        idx += c * a.kidx[d];
        wh += c * a.kwhere[d];
    }
}

/* Byte offsets (src, where) and index value of reduced element k. */
__device__ __forceinline__ void dg_red_red(const dg_cu_red &a, int64_t k, int64_t &src,
                                           int64_t &wh, int64_t &gi)
{
    if (a.nr == 1) {
        src = k * a.rstr[0];
        wh = k * a.rwhere[0];
        gi = k * a.rgs[0];
        return;
    }
    src = wh = gi = 0;
    for (int d = a.nr - 1; d >= 0; d--) {
        const int64_t n = a.rshape[d], q = k / n, c = k - q * n;
        k = q;
        src += c * a.rstr[d];
        wh += c * a.rwhere[d];
        gi += c * a.rgs[d];
    }
}

/* Folds the reduced elements [k0, k1) with step `step` of the output whose
 * kept offsets are (ks, kw) into st. */
template <class Op>
__device__ __forceinline__ void dg_red_run(const dg_cu_red &a, int64_t ks, int64_t kw,
                                           int64_t k0, int64_t k1, int64_t step,
                                           dg_red_state<typename Op::T> &st)
{
    typedef typename Op::T T;
    const char *src = a.src + ks;
    const unsigned char *where = a.where ? a.where + kw : NULL;
    if (a.nr == 1 && where == NULL) {
        const int64_t rs = a.rstr[0], gs = a.rgs[0];
        int64_t k = k0;
        if (!st.have && k < k1) {
            st.v = *reinterpret_cast<const T *>(src + k * rs);
            st.i = k * gs;
            st.have = true;
            k += step;
        }
#pragma unroll 4
        for (; k < k1; k += step)
            Op::fold(st.v, st.i, *reinterpret_cast<const T *>(src + k * rs), k * gs);
        return;
    }
    for (int64_t k = k0; k < k1; k += step) {
        int64_t so, wo, gi;
        dg_red_red(a, k, so, wo, gi);
        if (where && !where[wo])
            continue;
        const T x = *reinterpret_cast<const T *>(src + so);
        if (!st.have) {
            st.v = x;
            st.i = gi;
            st.have = true;
        } else {
            Op::fold(st.v, st.i, x, gi);
        }
    }
}

/* Writes the state of output m (and chunk s): the result with init folded
 * in, or a partial. */
template <class Op>
__device__ __forceinline__ void dg_red_put(const dg_cu_red &a, int64_t m, int s,
                                           const dg_red_state<typename Op::T> &st)
{
    typedef typename Op::T T;
    if (a.nsplit > 1 && s >= 0) {
        const int64_t p = m * a.nsplit + s;
        reinterpret_cast<T *>(a.part)[p] = st.v;
        if (Op::ARG)
            a.part_idx[p] = st.i;
        a.part_have[p] = st.have;
        return;
    }
    int64_t ks, kd, ki, kw;
    dg_red_kept(a, m, ks, kd, ki, kw);
    T v = st.v;
    if (a.has_init) {
        v = *reinterpret_cast<const T *>(a.init);
        if (st.have) {
            int64_t dummy = 0;
            Op::fold(v, dummy, st.v, 0);
            if (Op::ARG)
                v = st.v;
        }
    }
    *reinterpret_cast<T *>(a.dst + kd) = v;
    if (Op::ARG)
        *reinterpret_cast<int64_t *>(reinterpret_cast<char *>(a.idx) + ki) = st.have ? st.i : 0;
}

/* ---- kernels ---------------------------------------------------------------- */

/* Merges the DG_CU_THREADS states of a block (slot t of sv/si/sh is thread t's)
 * in a fixed tree order; slot 0 holds the result. */
template <class Op>
__device__ __forceinline__ void dg_red_block(dg_red_state<typename Op::T> &st,
                                             typename Op::T *sv, int64_t *si, bool *sh,
                                             int t, int lanes, int stride)
{
    sv[t] = st.v;
    si[t] = st.i;
    sh[t] = st.have;
    __syncthreads();
    for (int w = lanes / 2; w >= 1; w /= 2) {
        if ((t / stride) < w) {
            dg_red_state<typename Op::T> o{sv[t + w * stride], si[t + w * stride],
                                           sh[t + w * stride]};
            dg_red_merge<Op>(st, o);
            sv[t] = st.v;
            si[t] = st.i;
            sh[t] = st.have;
        }
        __syncthreads();
    }
}

template <class Op>
__global__ void __launch_bounds__(DG_CU_THREADS) dg_red_inner_k(const __grid_constant__ dg_cu_red a)
{
    typedef typename Op::T T;
    __shared__ T sv[DG_CU_THREADS];
    __shared__ int64_t si[DG_CU_THREADS];
    __shared__ bool sh[DG_CU_THREADS];
    const int64_t m = blockIdx.x;
    const int s = (int)blockIdx.y, t = (int)threadIdx.x;
    int64_t ks, kd, ki, kw;
    dg_red_kept(a, m, ks, kd, ki, kw);
    const int64_t k0 = (int64_t)s * a.kchunk;
    const int64_t k1 = k0 + a.kchunk < a.k ? k0 + a.kchunk : a.k;
    dg_red_state<T> st;
    st.have = false;
    st.i = 0;
    dg_red_run<Op>(a, ks, kw, k0 + t, k1, DG_CU_THREADS, st);
    dg_red_block<Op>(st, sv, si, sh, t, DG_CU_THREADS, 1);
    if (t == 0)
        dg_red_put<Op>(a, m, s, st);
}

template <class Op>
__global__ void __launch_bounds__(DG_CU_THREADS) dg_red_outer_k(const __grid_constant__ dg_cu_red a)
{
    typedef typename Op::T T;
    __shared__ T sv[DG_CU_THREADS];
    __shared__ int64_t si[DG_CU_THREADS];
    __shared__ bool sh[DG_CU_THREADS];
    const int tx = (int)threadIdx.x % 32, ty = (int)threadIdx.x / 32, t = ty * 32 + tx;
    const int64_t m = (int64_t)blockIdx.x * 32 + tx;
    const int s = (int)blockIdx.y;
    dg_red_state<T> st;
    st.have = false;
    st.i = 0;
    if (m < a.m) {
        int64_t ks, kd, ki, kw;
        dg_red_kept(a, m, ks, kd, ki, kw);
        const int64_t k0 = (int64_t)s * a.kchunk;
        const int64_t k1 = k0 + a.kchunk < a.k ? k0 + a.kchunk : a.k;
        dg_red_run<Op>(a, ks, kw, k0 + ty, k1, DG_CU_THREADS / 32, st);
    }
    /* merge the 8 rows of each column: slots t = ty * 32 + tx, stride 32 */
    dg_red_block<Op>(st, sv, si, sh, t, DG_CU_THREADS / 32, 32);
    if (ty == 0 && m < a.m)
        dg_red_put<Op>(a, m, s, st);
}

template <class Op>
__global__ void __launch_bounds__(DG_CU_THREADS) dg_red_final_k(const __grid_constant__ dg_cu_red a)
{
    typedef typename Op::T T;
    for (int64_t m = (int64_t)blockIdx.x * DG_CU_THREADS + threadIdx.x; m < a.m;
         m += (int64_t)gridDim.x * DG_CU_THREADS) {
        dg_red_state<T> st;
        st.have = false;
        st.i = 0;
        for (int s = 0; s < a.nsplit; s++) {
            const int64_t p = m * a.nsplit + s;
            dg_red_state<T> o{reinterpret_cast<const T *>(a.part)[p],
                              Op::ARG ? a.part_idx[p] : 0, a.part_have[p] != 0};
            dg_red_merge<Op>(st, o);
        }
        dg_red_put<Op>(a, m, -1, st);
    }
}

/* ---- launchers and tables ------------------------------------------------------ */

typedef cudaError_t (*dg_red_fn)(const dg_cu_red *a, unsigned gx, unsigned gy, cudaStream_t s);

template <class Op, int W>
static cudaError_t dg_red_launch_one(const dg_cu_red *a, unsigned gx, unsigned gy,
                                     cudaStream_t s)
{
    void *args[] = {(void *)a};
    const void *k = W == DG_CU_RED_INNER   ? (const void *)dg_red_inner_k<Op>
                    : W == DG_CU_RED_OUTER ? (const void *)dg_red_outer_k<Op>
                                           : (const void *)dg_red_final_k<Op>;
    return cudaLaunchKernel(k, dim3(gx, gy), dim3(DG_CU_THREADS), args, 0, s);
}

struct dg_red_entry {
    dg_red_fn fn[3];
};

template <class Op> constexpr dg_red_entry dg_red_entry_of()
{
    return dg_red_entry{{&dg_red_launch_one<Op, DG_CU_RED_INNER>,
                         &dg_red_launch_one<Op, DG_CU_RED_OUTER>,
                         &dg_red_launch_one<Op, DG_CU_RED_FINAL>}};
}

template <int I> constexpr dg_red_entry dg_red_loop_entry()
{
    if constexpr (dg_ew_foldable<I>())
        return dg_red_entry_of<dg_red_loop_op<I> >();
    else
        return dg_red_entry{{NULL, NULL, NULL}};
}

template <class Seq> struct dg_red_loop_table;
template <size_t... I> struct dg_red_loop_table<std::index_sequence<I...> > {
    static constexpr dg_red_entry entries[] = {dg_red_loop_entry<(int)I>()...};
};

template <class Seq> struct dg_red_arg_table;
template <size_t... D> struct dg_red_arg_table<std::index_sequence<D...> > {
    static constexpr dg_red_entry max[] = {dg_red_entry_of<dg_red_arg_op<(int)D, false> >()...};
    static constexpr dg_red_entry min[] = {dg_red_entry_of<dg_red_arg_op<(int)D, true> >()...};
};

typedef dg_red_loop_table<std::make_index_sequence<dg_ew_nloops> > dg_red_loops;
typedef dg_red_arg_table<std::make_index_sequence<DG_NDTYPES> > dg_red_args;

static const dg_red_entry *dg_red_find(int kind, int loop, int dtype)
{
    if (kind == DG_RED_LOOP) {
        if (loop < 0 || loop >= dg_ew_nloops || dg_red_loops::entries[loop].fn[0] == NULL)
            return NULL;
        return &dg_red_loops::entries[loop];
    }
    if (dtype < 0 || dtype >= DG_NDTYPES)
        return NULL;
    if (kind == DG_RED_ARGMAX)
        return &dg_red_args::max[dtype];
    if (kind == DG_RED_ARGMIN)
        return &dg_red_args::min[dtype];
    return NULL;
}

extern "C" {
int dg_cu_red_has(int kind, int loop, int dtype) { return dg_red_find(kind, loop, dtype) != NULL; }

cudaError_t dg_cu_red_launch(int kind, int loop, int dtype, int which, const dg_cu_red *a,
                             unsigned gx, unsigned gy, cudaStream_t s)
{
    const dg_red_entry *e = dg_red_find(kind, loop, dtype);
    if (e == NULL || which < 0 || which > 2)
        return cudaErrorInvalidValue;
    return e->fn[which](a, gx, gy, s);
}
}
