/* The CPU backend's searches and counts (see cpu_surface.h): a binary
 * search per value in NumPy's sort order, and one pass adding each element
 * to its bin; both in the order of kernels/dg_order.h, which the CUDA
 * kernels share. */
#include <stdint.h>
#include <string.h>

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

/* The radix counts (DG_COUNT_RADIX) of one row of n elements ss bytes
 * apart (dtype sfx t, C type ct) into cnt: a key under prefix p1 at pshift
 * into bin (k >> shift) & mask, one under p2 (two) into half + that; every
 * key where pshift is 64 or more (no prefix).  radix_bin's bins, the
 * desc's fields as locals and the dtype's switch out of the loop.
 *
 * A block of DG_RADIX_BLOCK elements is read twice: first each key's bin
 * and whether it is counted are found with no branch on the data (in 32-bit
 * arithmetic for keys of at most 32 bits, dg_order_narrow, vectorised on a
 * dense row), then each counted key's bin is incremented (by whether it is
 * counted: no branch either); a block of which none is counted (most,
 * under a prefix) is not read again.  The loop's speed is then its
 * instructions', not that of a branch per key placed wherever gcc put it:
 * the one-loop version, a key's cases and the prefixes' tests branches,
 * took 1.37 to 1.66 ns a float32 key from one placement of its code to
 * another. */
#define DG_RADIX_BLOCK 64
#define DG_RADIX_KEYS(t, ct, kt, out, step, sh, mk, ps1, lo1, sp1, ps2, lo2, sp2) \
    for (i = 0; i < m; i++) {                                                    \
        ct v;                                                                    \
        kt k;                                                                    \
        uint32_t a, c;                                                           \
        memcpy(&v, b + i * (step), sizeof v);                                    \
        k = (kt)dg_order_key_##t(v);                                             \
        a = ((k >> (ps1)) - (lo1)) <= (sp1);                                     \
        c = (((k >> (ps2)) - (lo2)) <= (sp2)) & use2 & ~a;                       \
        out[i] = (kt)((k >> (sh)) & (mk)) + ((kt)half & ((kt)0 - (kt)c));        \
        in[i] = (uint8_t)(a | c);                                                \
        hits += a | c;                                                           \
    }
#define DG_RADIX_ROW(E, t, ct)                                                   \
    static void radix_row_##t(const char *s, int64_t n, int64_t ss, int shift,  \
                              int pshift, uint64_t p1, uint64_t p2, int two,     \
                              int64_t half, uint64_t mask, int64_t *cnt)         \
    {                                                                            \
        const int64_t sz = (int64_t)sizeof(ct);                                  \
        /* keys of at most 32 bits and bins that fit: 32-bit arithmetic */      \
        const int narrow = sz <= 4 && half <= ((int64_t)1 << 30) &&              \
                           mask < ((uint64_t)1 << 31);                           \
        const int all = pshift >= 64;                                            \
        dg_order_test t1 = {0, 0, 0}, t2 = {0, 0, 0};                            \
        uint32_t use1 = 1, use2 = two != 0;                                      \
        int64_t i0, i;                                                           \
        if (narrow) {                                                            \
            use1 = all ? (uint32_t)dg_order_narrow(8 * (int)sz, 64, 0, 0, &t1)   \
                       : (uint32_t)dg_order_narrow(8 * (int)sz, pshift, p1, 0, &t1); \
            use2 &= !all && dg_order_narrow(8 * (int)sz, pshift, p2, 0, &t2);   \
            if (!use1) /* a test that no key passes */                           \
                t1.ps = 31, t1.lo = 2, t1.span = 0;                              \
            if (!use2)                                                           \
                t2 = t1;                                                         \
            if (!use1 && !use2)                                                  \
                return;                                                          \
        }                                                                        \
        for (i0 = 0; i0 < n; i0 += DG_RADIX_BLOCK) {                             \
            const int64_t m = n - i0 < DG_RADIX_BLOCK ? n - i0 : DG_RADIX_BLOCK; \
            const char *b = s + i0 * ss;                                         \
            uint64_t bin[DG_RADIX_BLOCK];                                        \
            uint32_t bin32[DG_RADIX_BLOCK];                                      \
            uint8_t in[DG_RADIX_BLOCK];                                          \
            uint32_t hits = 0;                                                   \
            if (narrow) {                                                        \
                const uint32_t sh = shift < 32 ? (uint32_t)shift : 0;            \
                const uint32_t mk = shift < 32 ? (uint32_t)mask : 0;             \
                if (ss == sz)                                                    \
                    DG_RADIX_KEYS(t, ct, uint32_t, bin32, sz, sh, mk, t1.ps, t1.lo, t1.span, \
                                  t2.ps, t2.lo, t2.span)                         \
                else                                                             \
                    DG_RADIX_KEYS(t, ct, uint32_t, bin32, ss, sh, mk, t1.ps, t1.lo, t1.span, \
                                  t2.ps, t2.lo, t2.span)                         \
                if (hits)                                                        \
                    for (i = 0; i < m; i++)                                      \
                        cnt[bin32[i]] += in[i];                                  \
            } else {                                                             \
                const int ps = all ? 0 : pshift;                                 \
                const uint64_t lo1 = all ? 0 : p1, sp1 = all ? ~(uint64_t)0 : 0; \
                DG_RADIX_KEYS(t, ct, uint64_t, bin, ss, shift, mask, ps, lo1, sp1, ps, p2, \
                              (uint64_t)0)                                       \
                if (hits)                                                        \
                    for (i = 0; i < m; i++)                                      \
                        cnt[bin[i]] += in[i];                                    \
            }                                                                    \
        }                                                                        \
    }
DG_ORDER_KEYED(DG_RADIX_ROW)
#undef DG_RADIX_ROW
#undef DG_RADIX_KEYS

/* The radix counts of d's block without weights (radix_row_<t> a row). */
static void radix_run(const dg_count_desc *d)
{
    const int nd = d->ndim;
    const int64_t n = nd ? d->shape[nd - 1] : 1, rows = nrows(nd, d->shape);
    const int64_t ss = nd ? d->src_strides[nd - 1] : 0;
    const int two = d->nprefix == 2;
    const int64_t half = two ? d->nbins / 2 : 0;
    const uint64_t mask = (uint64_t)(two ? half : d->nbins) - 1;
    int64_t r, so, unused;

    for (r = 0; r < rows; r++) {
        row_offsets(nd, d->shape, d->src_strides, d->src_strides, r, &so, &unused);
        switch (d->dtype) {
#define DG_RADIX_CASE(E, t, ct)                                                  \
    case DG_##E:                                                                 \
        radix_row_##t(d->src + so, n, ss, d->shift, d->pshift, d->prefix, d->prefix2, two, \
                      half, mask, d->cnt);                                       \
        break;
            DG_ORDER_KEYED(DG_RADIX_CASE)
#undef DG_RADIX_CASE
        default:
            return;
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
