/* The CPU backend's data-dependent index work (see cpu_index.h).
 *
 * Compaction walks its block in C order with an index counter; keyed row
 * copies and routing are one pass over the keys; a sort turns each element
 * into one unsigned key (three for complex) whose order is NumPy's (NaN last,
 * -0.0 as 0.0) and merge-sorts positions by them, stably. */
#include <stdint.h>
#include <string.h>

#include "cpu_index.h"
#include "cpu_keys.h"
#include "../../core/dg_dtype.h"
#include "dg_order.h"

/* Copies one element of isz bytes. */
static inline void copy_item(char *dst, const char *src, int isz)
{
    switch (isz) {
    case 1: *(uint8_t *)dst = *(const uint8_t *)src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, (size_t)isz);
    }
}

/* Steps idx through the first ndim - 1 axes of shape in C order, moving the
 * pointers by their strides; 0 when done. */
static int step_outer(int ndim, const int64_t *shape, int64_t *idx, int nptr, char **ptr,
                      const int64_t (*const *strides))
{
    int a, k;
    for (a = ndim - 2; a >= 0; a--) {
        for (k = 0; k < nptr; k++)
            ptr[k] += strides[k][a];
        if (++idx[a] < shape[a])
            return 1;
        for (k = 0; k < nptr; k++)
            ptr[k] -= strides[k][a] * shape[a];
        idx[a] = 0;
    }
    return 0;
}

/* An N-d strided copy of a block of `shape` (ndim >= 0). */
static void copy_block(int ndim, const int64_t *shape, int isz, const char *src,
                       const int64_t *sst, char *dst, const int64_t *dst_st)
{
    int64_t idx[DG_MAXDIM], i, n;
    char *p[2];
    const int64_t(*st[2]) = {sst, dst_st};
    int a;
    if (ndim == 0) {
        copy_item(dst, src, isz);
        return;
    }
    for (a = 0; a < ndim; a++)
        if (shape[a] == 0)
            return;
    memset(idx, 0, sizeof idx);
    p[0] = (char *)src;
    p[1] = dst;
    n = shape[ndim - 1];
    do {
        for (i = 0; i < n; i++)
            copy_item(p[1] + i * dst_st[ndim - 1], p[0] + i * sst[ndim - 1], isz);
    } while (step_outer(ndim, shape, idx, 2, p, st));
}

/* Gathers the elements of a block of m whose in[] is set (in order) into
 * buf: each element written at the next place, which moves on where it is
 * kept (no branch on the data); returns how many. */
static int64_t gather_kept(const char *b, int64_t m, int64_t ss, int isz, const uint8_t *in,
                           char *buf)
{
    int64_t i, h = 0;
    switch (isz) {
#define DG_GATHER_KEPT(n)                                                        \
    case n:                                                                      \
        for (i = 0; i < m; i++) {                                                \
            memcpy(buf + h * (n), b + i * ss, (n));                              \
            h += in[i];                                                          \
        }                                                                        \
        break;
        DG_GATHER_KEPT(1)
        DG_GATHER_KEPT(2)
        DG_GATHER_KEPT(4)
        DG_GATHER_KEPT(8)
#undef DG_GATHER_KEPT
    default:
        break;
    }
    return h;
}

/* The keyed selection of one row of n elements of dtype ss bytes apart:
 * those whose keys are under lo .. lo + span at pshift appended to dst from
 * index k on, those from index cap on counted only; returns the new k.  A block of keys at a time (cpu_keys.h): a block with
 * none under the prefixes (most: a median's gathering keeps a small part of
 * x, at most 1/8 per device and mostly far less) is only read; one with
 * some is gathered into a local buffer and copied out up to cap. */
static int64_t keyed_row(int dtype, const char *s, int64_t n, int64_t ss, int pshift,
                         uint64_t lo, uint64_t span, char *dst, int64_t k, int64_t cap)
{
    const int bits = dg_order_key_bits(dtype), isz = dg_dtype_size(dtype);
    dg_order_test t = {0, 0, 0};
    int64_t i0;
    if (!bits || (bits <= 32 && !dg_order_narrow(bits, pshift, lo, span, &t)))
        return k;
    for (i0 = 0; i0 < n; i0 += DG_CPU_KEYS) {
        const int64_t m = n - i0 < DG_CPU_KEYS ? n - i0 : DG_CPU_KEYS;
        const char *b = s + i0 * ss;
        uint32_t k32[DG_CPU_KEYS];
        uint64_t k64[DG_CPU_KEYS], buf[DG_CPU_KEYS];
        uint8_t in[DG_CPU_KEYS];
        int64_t h;
        if (!(dg_cpu_keys(dtype, b, m, ss, 0, k32, k64) == 32
                  ? dg_cpu_keys_test32(k32, m, t.ps, t.lo, t.span, in)
                  : dg_cpu_keys_test64(k64, m, pshift, lo, span, in)))
            continue;
        h = gather_kept(b, m, ss, isz, in, (char *)buf);
        if (k < cap)
            memcpy(dst + k * isz, buf, (size_t)((h < cap - k ? h : cap - k) * isz));
        k += h;
    }
    return k;
}

/* The count of bin b of d's bins: the sum of its nparts sets (at part[p],
 * or one after another from bins; dg_select_desc). */
static int64_t bin_count(const dg_select_desc *d, int64_t b)
{
    const int64_t parts = d->nparts > 0 ? d->nparts : 1;
    int64_t p, c = 0;
    for (p = 0; p < parts; p++)
        c += (d->part[0] ? d->part[p] : d->bins + p * d->nbins)[b];
    return c;
}

/* The bin of d's bins that holds rank r (dg_select_desc.bins): where the
 * counts before it sum to at most r and with it to more; the last bin
 * where r is past them all. */
static uint64_t rank_bin(const dg_select_desc *d, int64_t r)
{
    int64_t b, cum = 0;
    for (b = 0; b < d->nbins; b++) {
        cum += bin_count(d, b);
        if (cum > r)
            return (uint64_t)b;
    }
    return (uint64_t)(d->nbins > 0 ? d->nbins - 1 : 0);
}

/* A keyed selection (dg_select_desc.keyed): the values whose keys are under
 * the prefixes, in C order (at most cap of them written; with `whole`,
 * none where the bins of the ranks hold more than cap in all). */
static void select_keyed(const dg_select_desc *d)
{
    int64_t idx[DG_MAXDIM], n, k = 0;
    const int nd = d->ndim;
    const int64_t ss = nd ? d->src_strides[nd - 1] : 0;
    const int64_t cap = d->cap > 0 ? d->cap : INT64_MAX;
    uint64_t lo = d->lo, hi = d->hi;
    char *p[1];
    const int64_t(*st[1]) = {d->src_strides};
    int a;

    for (a = 0; a < nd; a++)
        if (d->shape[a] == 0) {
            *d->count = 0;
            return;
        }
    if (d->bins) {
        int64_t r[2] = {d->rank[0], d->rank[1]};
        if (d->rest) {
            int64_t b, m = 0;
            for (b = 0; b + 1 < d->nbins; b++)
                m += bin_count(d, b);
            dg_order_rest_ranks(m, d->q, r);
        }
        lo = rank_bin(d, r[0]);
        hi = rank_bin(d, r[1]);
    }
    if (d->bins && d->whole) {
        int64_t total = 0;
        uint64_t b;
        for (b = lo; b <= hi && (int64_t)b < d->nbins; b++)
            total += bin_count(d, (int64_t)b);
        if (total > cap) {
            *d->count = total;
            return;
        }
    }
    memset(idx, 0, sizeof idx);
    p[0] = (char *)d->src;
    n = nd ? d->shape[nd - 1] : 1;
    do {
        k = keyed_row(d->dtype, p[0], n, ss, d->pshift, lo, hi - lo, d->dst, k, cap);
    } while (nd > 0 && step_outer(nd, d->shape, idx, 1, p, st));
    *d->count = k;
}

void dg_cpu_select_run(const dg_select_desc *d)
{
    static const int64_t zero[DG_MAXDIM];
    int64_t idx[DG_MAXDIM], i, n, k = 0;
    const int nd = d->ndim;
    char *p[2];
    const int64_t(*st[2]) = {d->src ? d->src_strides : zero, d->mask_strides};
    int a;

    if (d->keyed) {
        select_keyed(d);
        return;
    }
    for (a = 0; a < nd; a++)
        if (d->shape[a] == 0) {
            *d->count = 0;
            return;
        }
    if (nd == 0) {
        if (d->mask[0]) {
            if (d->src)
                copy_item(d->dst, d->src, d->itemsize);
            else
                memcpy(d->dst, &d->base, 8);
            k = 1;
        }
        *d->count = k;
        return;
    }
    memset(idx, 0, sizeof idx);
    p[0] = (char *)d->src;
    p[1] = (char *)d->mask;
    n = d->shape[nd - 1];
    do {
        const char *m = p[1];
        const int64_t ms = d->mask_strides[nd - 1];
        if (d->src) {
            const char *s = p[0];
            const int64_t ss = d->src_strides[nd - 1];
            for (i = 0; i < n; i++)
                if (m[i * ms])
                    copy_item(d->dst + (k++) * d->itemsize, s + i * ss, d->itemsize);
        } else {
            int64_t g = d->base, *out = (int64_t *)d->dst;
            for (a = 0; a < nd - 1; a++)
                g += idx[a] * d->gstride[a];
            for (i = 0; i < n; i++)
                if (m[i * ms])
                    out[k++] = g + i * d->gstride[nd - 1];
        }
    } while (step_outer(nd, d->shape, idx, 2, p, st));
    *d->count = k;
}

/* The row of key k in the range (start, stop, step), or -1. */
static inline int64_t key_row(int64_t k, int64_t start, int64_t stop, int64_t step)
{
    if (k < start || k >= stop)
        return -1;
    k -= start;
    if (step != 1) {
        if (k % step)
            return -1;
        k /= step;
    }
    return k;
}

void dg_cpu_rows_run(const dg_rows_desc *d)
{
    int64_t j;
    for (j = 0; j < d->n; j++) {
        int64_t r = key_row(d->key[j], d->start, d->stop, d->step), si, di;
        if (r < 0)
            continue;
        si = d->scatter ? j : r;
        di = d->scatter ? r : j;
        copy_block(d->ndim, d->shape, d->itemsize, d->src + si * d->src_rstride, d->src_strides,
                   d->dst + di * d->dst_rstride, d->dst_strides);
    }
}

void dg_cpu_route_run(const dg_route_desc *d)
{
    int64_t j, k = 0;
    for (j = 0; j < d->n; j++) {
        int64_t r = key_row(d->key[j], d->start, d->stop, d->step);
        if (r < 0)
            continue;
        d->rows[k] = r;
        d->pos[k] = j;
        k++;
    }
    *d->count = k;
}

/* ---- sorting ---------------------------------------------------------------------- */

/* An order-preserving unsigned key of a float's bits (w bits wide, exponent
 * mask em, mantissa mask mm): NaN largest of all, -0.0 as 0.0. */
static inline uint64_t float_key(uint64_t bits, int w, uint64_t em, uint64_t mm)
{
    const uint64_t sign = (uint64_t)1 << (w - 1);
    const uint64_t all = w == 64 ? ~(uint64_t)0 : (((uint64_t)1 << w) - 1);
    if ((bits & em) == em && (bits & mm))
        return ~(uint64_t)0;
    if (bits == sign)
        bits = 0;
    return bits & sign ? ~bits & all : bits | sign;
}

/* Sign-flipped key of a signed integer (two's complement order to
 * unsigned order). */
static inline uint64_t int_key(int64_t v) { return (uint64_t)v ^ ((uint64_t)1 << 63); }

/* The keys of element x of dtype dt: k[0] and, for complex, k[1], k[2]. */
static void sort_keys(int dt, const char *x, uint64_t *k)
{
    const uint64_t em64 = (uint64_t)0x7FF << 52, mm64 = ((uint64_t)1 << 52) - 1;
    union {
        uint8_t u8; int8_t i8; uint16_t u16; int16_t i16; uint32_t u32[2]; int32_t i32;
        uint64_t u64[2]; int64_t i64;
    } v;
    memcpy(&v, x, (size_t)dg_dtype_size(dt));
    switch (dt) {
    case DG_BOOL: case DG_UINT8: k[0] = v.u8; break;
    case DG_UINT16: k[0] = v.u16; break;
    case DG_UINT32: k[0] = v.u32[0]; break;
    case DG_UINT64: k[0] = v.u64[0]; break;
    case DG_INT8: k[0] = int_key(v.i8); break;
    case DG_INT16: k[0] = int_key(v.i16); break;
    case DG_INT32: k[0] = int_key(v.i32); break;
    case DG_INT64: k[0] = int_key(v.i64); break;
    case DG_FLOAT16: k[0] = float_key(v.u16, 16, 0x7C00, 0x03FF); break;
    case DG_FLOAT32: k[0] = float_key(v.u32[0], 32, 0x7F800000u, 0x007FFFFFu); break;
    case DG_FLOAT64: k[0] = float_key(v.u64[0], 64, em64, mm64); break;
    default: { /* complex: NumPy's order R + Rj, R + nanj, nan + Rj, nan + nanj */
        uint64_t re, im;
        if (dt == DG_COMPLEX64) {
            re = float_key(v.u32[0], 32, 0x7F800000u, 0x007FFFFFu);
            im = float_key(v.u32[1], 32, 0x7F800000u, 0x007FFFFFu);
        } else {
            re = float_key(v.u64[0], 64, em64, mm64);
            im = float_key(v.u64[1], 64, em64, mm64);
        }
        /* a NaN part's key is all ones (float_key) */
        k[0] = (uint64_t)(re == ~(uint64_t)0) * 2 + (uint64_t)(im == ~(uint64_t)0);
        k[1] = k[0] == 2 ? im : k[0] == 3 ? 0 : re;
        k[2] = k[0] == 0 ? im : 0;
    }
    }
}

/* 1 if element i orders before j (keys of nk words per element, compared
 * in order). */
static inline int key_less(const uint64_t *key, int nk, int64_t i, int64_t j)
{
    int w;
    for (w = 0; w < nk; w++)
        if (key[i * nk + w] != key[j * nk + w])
            return key[i * nk + w] < key[j * nk + w];
    return 0;
}

/* Sorts the positions pos[0..n) by their keys, stably (bottom-up merges
 * through tmp). */
static void merge_sort(const uint64_t *key, int nk, int64_t *pos, int64_t *tmp, int64_t n)
{
    int64_t w, i, *a = pos, *b = tmp;
    for (w = 1; w < n; w *= 2) {
        for (i = 0; i < n; i += 2 * w) {
            int64_t lo = i, mid = i + w < n ? i + w : n, hi = i + 2 * w < n ? i + 2 * w : n;
            int64_t p = lo, q = mid, o = lo;
            while (p < mid && q < hi)
                b[o++] = key_less(key, nk, a[q], a[p]) ? a[q++] : a[p++];
            while (p < mid)
                b[o++] = a[p++];
            while (q < hi)
                b[o++] = a[q++];
        }
        {
            int64_t *t = a;
            a = b;
            b = t;
        }
    }
    if (a != pos)
        memcpy(pos, a, (size_t)n * sizeof(int64_t));
}

static int sort_nkeys(int dt) { return dt == DG_COMPLEX64 || dt == DG_COMPLEX128 ? 3 : 1; }

size_t dg_cpu_sort_work_bytes(const dg_sort_desc *d)
{
    int64_t n = d->ndim ? d->shape[d->ndim - 1] : 1;
    return (size_t)n * (size_t)(8 * sort_nkeys(d->dtype) + 32) + 8;
}

void dg_cpu_sort_run(const dg_sort_desc *d, void *work)
{
    static const int64_t zero[DG_MAXDIM];
    const int nd = d->ndim, nk = sort_nkeys(d->dtype), isz = dg_dtype_size(d->dtype);
    const int64_t n = nd ? d->shape[nd - 1] : 1;
    uint64_t *key = (uint64_t *)work;
    int64_t *pos = (int64_t *)(key + n * nk), *tmp = pos + n, idx[DG_MAXDIM], i;
    char *items = (char *)(tmp + n); /* the sorted values, 16 bytes each */
    const int64_t *dst_st = d->dst ? d->dst_strides : zero;
    const int64_t *idx_st = d->idx ? d->idx_strides : zero;
    const int64_t ss = nd ? d->src_strides[nd - 1] : 0;
    const int64_t ds = nd ? dst_st[nd - 1] : 0;
    const int64_t is = nd ? idx_st[nd - 1] : 0;
    char *p[3];
    const int64_t(*st[3]) = {d->src_strides, dst_st, idx_st};
    int a;

    for (a = 0; a < nd; a++)
        if (d->shape[a] == 0)
            return;
    memset(idx, 0, sizeof idx);
    p[0] = (char *)d->src;
    p[1] = d->dst;
    p[2] = (char *)d->idx;
    do {
        for (i = 0; i < n; i++) {
            sort_keys(d->dtype, p[0] + i * ss, key + i * nk);
            pos[i] = i;
        }
        merge_sort(key, nk, pos, tmp, n);
        if (d->dst) { /* through `items`: dst may be src */
            for (i = 0; i < n; i++)
                copy_item(items + i * 16, p[0] + pos[i] * ss, isz);
            for (i = 0; i < n; i++)
                copy_item(p[1] + i * ds, items + i * 16, isz);
        }
        if (d->idx)
            for (i = 0; i < n; i++)
                *(int64_t *)(p[2] + i * is) = pos[i];
    } while (step_outer(nd, d->shape, idx, 3, p, st));
}
