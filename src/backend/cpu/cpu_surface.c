/* The CPU backend's searches and counts (see cpu_surface.h): a binary
 * search per value in NumPy's sort order, and one pass adding each element
 * to its bin; both in the order of kernels/dg_order.h, which the CUDA
 * kernels share. */
#include <stdint.h>
#include <string.h>

#include "cpu_keys.h"
#include "cpu_surface.h"
#include "dg_order.h"

/* Byte offsets of row r (C order over the first ndim - 1 axes of shape)
 * along two sets of strides. */
static void row_offsets(int ndim, const int64_t *shape, const int64_t *s0, const int64_t *s1,
                        int64_t r, int64_t *o0, int64_t *o1)
{
    int a;
    *o0 = *o1 = 0;
    for (a = ndim - 2; a >= 0; a--) {
        const int64_t q = r / shape[a], c = r - q * shape[a];
        r = q;
        *o0 += c * s0[a];
        *o1 += c * s1[a];
    }
}

/* Rows of the block (the product of all but the last extent; 1 for 0-d). */
static int64_t nrows(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    int a;
    for (a = 0; a < ndim - 1; a++)
        n *= shape[a];
    return n;
}

static int empty_block(int ndim, const int64_t *shape)
{
    int a;
    for (a = 0; a < ndim; a++)
        if (shape[a] == 0)
            return 1;
    return 0;
}

/* ---- searches ------------------------------------------------------------------------ */

/* How many of the n sorted elements at seq (stride ss) order before v (or
 * not after it, right). */
#define DG_SEARCH_ONE(E, t, ct)                                                  \
    static int64_t search_one_##t(const char *seq, int64_t n, int64_t ss, ct v, int right) \
    {                                                                            \
        int64_t lo = 0, hi = n;                                                  \
        while (lo < hi) {                                                        \
            const int64_t mid = lo + (hi - lo) / 2;                              \
            ct s;                                                                \
            int before;                                                          \
            memcpy(&s, seq + mid * ss, sizeof s);                                \
            before = right ? !dg_order_less_##t(v, s) : dg_order_less_##t(s, v); \
            if (before)                                                          \
                lo = mid + 1;                                                    \
            else                                                                 \
                hi = mid;                                                        \
        }                                                                        \
        return lo;                                                               \
    }
#define DG_SEARCH_ALL(X) DG_ORDER_KEYED(X) X(COMPLEX64, c8, dg_c64) X(COMPLEX128, c16, dg_c128)
DG_SEARCH_ALL(DG_SEARCH_ONE)

void dg_cpu_search_run(const dg_search_desc *d)
{
    const int nd = d->ndim;
    const int64_t n = nd ? d->shape[nd - 1] : 1, rows = nrows(nd, d->shape);
    const int64_t vs = nd ? d->val_strides[nd - 1] : 0, ds = nd ? d->dst_strides[nd - 1] : 0;
    int64_t r, i, vo, dof;

    if (empty_block(nd, d->shape))
        return;
    for (r = 0; r < rows; r++) {
        row_offsets(nd, d->shape, d->val_strides, d->dst_strides, r, &vo, &dof);
        for (i = 0; i < n; i++) {
            int64_t *out = (int64_t *)((char *)d->dst + dof + i * ds), c = 0;
            const char *v = d->val + vo + i * vs;
            switch (d->dtype) {
#define DG_SEARCH_CASE(E, t, ct)                                                  \
            case DG_##E: {                                                       \
                ct x;                                                            \
                memcpy(&x, v, sizeof x);                                         \
                c = search_one_##t(d->seq, d->n, d->seq_stride, x, d->right);    \
                break;                                                           \
            }
                DG_SEARCH_ALL(DG_SEARCH_CASE)
#undef DG_SEARCH_CASE
            default: break;
            }
            *out = d->accumulate ? *out + c : c;
        }
    }
}

/* ---- counts -------------------------------------------------------------------------- */

/* The bin of the element at x among the nbins + 1 increasing edges (the
 * last bin closed), or -1 outside them (NaN too). */
#define DG_EDGE_BIN(E, t, ct)                                                    \
    static int64_t edge_bin_##t(const dg_count_desc *d, const char *x)           \
    {                                                                            \
        const ct *e = (const ct *)d->edges;                                      \
        ct v;                                                                    \
        int64_t lo = 0, hi = d->nbins + 1;                                       \
        memcpy(&v, x, sizeof v);                                                 \
        while (lo < hi) { /* how many edges are <= v */                          \
            const int64_t mid = lo + (hi - lo) / 2;                              \
            if (!dg_order_less_##t(v, e[mid]))                                   \
                lo = mid + 1;                                                    \
            else                                                                 \
                hi = mid;                                                        \
        }                                                                        \
        if (lo == d->nbins + 1 && !dg_order_less_##t(e[d->nbins], v))            \
            lo = d->nbins; /* the last edge itself: the last bin */              \
        return lo >= 1 && lo <= d->nbins ? lo - 1 : -1;                          \
    }
DG_EDGE_BIN(FLOAT16, f2, dg_half)
DG_EDGE_BIN(FLOAT32, f4, float)
DG_EDGE_BIN(FLOAT64, f8, double)

static int64_t edge_bin(const dg_count_desc *d, const char *x)
{
    switch (d->dtype) {
    case DG_FLOAT16: return edge_bin_f2(d, x);
    case DG_FLOAT32: return edge_bin_f4(d, x);
    case DG_FLOAT64: return edge_bin_f8(d, x);
    default: return -1;
    }
}

/* The bin of the element at x for a radix count, or -1 where its key does
 * not start with the prefix. */
static int64_t radix_bin(const dg_count_desc *d, const char *x)
{
    uint64_t k;
    if (!dg_order_key_bits(d->dtype))
        return -1;
    k = dg_order_key_at(d->dtype, x);
    if (d->nprefix == 2) { /* two prefixes: a half of the bins each */
        const int64_t half = d->nbins / 2;
        const uint64_t p = k >> d->pshift;
        if (p != d->prefix && p != d->prefix2)
            return -1;
        return (int64_t)((k >> d->shift) & (uint64_t)(half - 1)) + (p == d->prefix ? 0 : half);
    }
    if (d->pshift < 64 && (k >> d->pshift) != d->prefix)
        return -1;
    return (int64_t)((k >> d->shift) & (uint64_t)(d->nbins - 1));
}

/* The radix counts (DG_COUNT_RADIX) of d's block without weights into
 * d->cnt: a key under prefix p1 at pshift into bin (k >> shift) & mask, one
 * under p2 (nprefix 2) into half + that; every key where pshift is 64 or
 * more (no prefix): radix_bin's bins, a block of keys at a time
 * (cpu_keys.h), each counted key's bin incremented by whether it is counted
 * (no branch on the data either). */
static void radix_run(const dg_count_desc *d)
{
    const int nd = d->ndim;
    const int64_t n = nd ? d->shape[nd - 1] : 1, rows = nrows(nd, d->shape);
    const int64_t ss = nd ? d->src_strides[nd - 1] : 0;
    const int two = d->nprefix == 2, bits = dg_order_key_bits(d->dtype);
    const int64_t half = two ? d->nbins / 2 : 0;
    const uint64_t mask = (uint64_t)(two ? half : d->nbins) - 1;
    /* keys of at most 32 bits and bins that fit: 32-bit arithmetic */
    const int wide = bits > 32 || half > ((int64_t)1 << 30) || mask >= ((uint64_t)1 << 31);
    dg_cpu_radix32 r32;
    dg_cpu_radix64 r64;
    int64_t *const cnt = d->cnt;
    int64_t r, so, unused, i0, i;

    if (!bits)
        return;
    memset(&r32, 0, sizeof r32);
    memset(&r64, 0, sizeof r64);
    r64.all = d->pshift >= 64;
    r64.ps = r64.all ? 0 : d->pshift;
    r64.sh = d->shift < 64 ? d->shift : 0;
    r64.mk = d->shift < 64 ? mask : 0;
    r64.half = (uint64_t)half;
    r64.p1 = d->prefix;
    r64.p2 = d->prefix2;
    r64.use2 = two && !r64.all;
    if (!wide) {
        const int use1 = dg_order_narrow(bits, r64.all ? 64 : d->pshift, r64.all ? 0 : d->prefix,
                                         0, &r32.t1);
        r32.use2 = (uint32_t)(r64.use2 && dg_order_narrow(bits, d->pshift, d->prefix2, 0,
                                                           &r32.t2));
        if (!use1 && !r32.use2)
            return; /* no key is under the prefixes */
        if (!use1) { /* a test no key passes: its prefix of one bit is 2 */
            r32.t1.ps = 31;
            r32.t1.lo = 2;
            r32.t1.span = 0;
        }
        r32.sh = d->shift < 32 ? (uint32_t)d->shift : 0;
        r32.mk = d->shift < 32 ? (uint32_t)mask : 0;
        r32.half = (uint32_t)half;
    }
    for (r = 0; r < rows; r++) {
        row_offsets(nd, d->shape, d->src_strides, d->src_strides, r, &so, &unused);
        for (i0 = 0; i0 < n; i0 += DG_CPU_KEYS) {
            const int64_t m = n - i0 < DG_CPU_KEYS ? n - i0 : DG_CPU_KEYS;
            uint32_t k32[DG_CPU_KEYS], bin32[DG_CPU_KEYS];
            uint64_t k64[DG_CPU_KEYS], bin64[DG_CPU_KEYS];
            uint8_t in[DG_CPU_KEYS];
            if (dg_cpu_keys(d->dtype, d->src + so + i0 * ss, m, ss, wide, k32, k64) == 32) {
                if (dg_cpu_keys_bins32(k32, m, &r32, bin32, in))
                    for (i = 0; i < m; i++)
                        cnt[bin32[i]] += in[i];
            } else if (dg_cpu_keys_bins64(k64, m, &r64, bin64, in)) {
                for (i = 0; i < m; i++)
                    cnt[bin64[i]] += in[i];
            }
        }
    }
}

/* The sum of the squares of n elements of a float dtype, ss bytes apart, in
 * float64 (four partial sums); round: each square rounded to the dtype
 * first (NumPy's product x * x in the dtype, which can underflow or
 * overflow), DG_COUNT_SQUARES' shift. */
#define DG_SQUARES_ROW(t, ct, conv, rnd)                                         \
    static double squares_row_##t(const char *x, int64_t n, int64_t ss, int round) \
    {                                                                            \
        double s[4] = {0, 0, 0, 0};                                              \
        int64_t i;                                                               \
        for (i = 0; i < n; i++) {                                                \
            ct v;                                                                \
            double f;                                                            \
            memcpy(&v, x + i * ss, sizeof v);                                    \
            f = conv(v);                                                         \
            f *= f;                                                              \
            s[i & 3] += round ? rnd(f) : f;                                      \
        }                                                                        \
        return (s[0] + s[1]) + (s[2] + s[3]);                                    \
    }
#define DG_AS_DOUBLE(v) ((double)(v))
#define DG_ROUND_F2(f) ((double)dg_half_to_float(dg_float_to_half((float)(f))))
#define DG_ROUND_F4(f) ((double)(float)(f))
DG_SQUARES_ROW(f2, dg_half, dg_half_to_float, DG_ROUND_F2)
DG_SQUARES_ROW(f4, float, DG_AS_DOUBLE, DG_ROUND_F4)
DG_SQUARES_ROW(f8, double, DG_AS_DOUBLE, DG_AS_DOUBLE)
#undef DG_AS_DOUBLE
#undef DG_ROUND_F2
#undef DG_ROUND_F4

static void squares_run(const dg_count_desc *d)
{
    const int nd = d->ndim;
    const int64_t n = nd ? d->shape[nd - 1] : 1, rows = nrows(nd, d->shape);
    const int64_t ss = nd ? d->src_strides[nd - 1] : 0;
    double s = 0;
    int64_t r, so, unused;

    for (r = 0; r < rows; r++) {
        row_offsets(nd, d->shape, d->src_strides, d->src_strides, r, &so, &unused);
        switch (d->dtype) {
        case DG_FLOAT16: s += squares_row_f2(d->src + so, n, ss, d->shift); break;
        case DG_FLOAT32: s += squares_row_f4(d->src + so, n, ss, d->shift); break;
        case DG_FLOAT64: s += squares_row_f8(d->src + so, n, ss, d->shift); break;
        default: return;
        }
    }
    d->sum[0] += s;
}

void dg_cpu_count_run(const dg_count_desc *d)
{
    static const int64_t zero[DG_MAXDIM];
    const int nd = d->ndim;
    const int64_t n = nd ? d->shape[nd - 1] : 1, rows = nrows(nd, d->shape);
    const int64_t ss = nd ? d->src_strides[nd - 1] : 0;
    const int64_t ws = nd && d->weight ? d->weight_strides[nd - 1] : 0;
    int64_t r, i, so, wo;

    if (empty_block(nd, d->shape))
        return;
    if (d->radix == DG_COUNT_SQUARES) {
        squares_run(d);
        return;
    }
    if (d->radix == DG_COUNT_RADIX && !d->weight) {
        radix_run(d);
        return;
    }
    for (r = 0; r < rows; r++) {
        row_offsets(nd, d->shape, d->src_strides, d->weight ? d->weight_strides : zero, r, &so,
                    &wo);
        for (i = 0; i < n; i++) {
            int64_t b;
            if (d->radix == DG_COUNT_RADIX) {
                b = radix_bin(d, d->src + so + i * ss);
            } else if (d->radix == DG_COUNT_EDGES) {
                b = edge_bin(d, d->src + so + i * ss);
            } else {
                memcpy(&b, d->src + so + i * ss, sizeof b);
                if (b >= d->nbins)
                    b = -1;
            }
            if (b < 0)
                continue;
            if (d->weight) {
                double w;
                memcpy(&w, (const char *)d->weight + wo + i * ws, sizeof w);
                d->sum[b] += w;
            } else {
                d->cnt[b]++;
            }
        }
    }
}
