/* Box algebra: canonical strided ranges and boxes, their intersection and
 * difference (see dg_box.h).
 *
 * Two strided ranges meet on a lattice found by the Chinese remainder theorem:
 * x = s0 (mod p) and x = s1 (mod q) has a solution iff gcd(p, q) divides
 * s1 - s0, and the solutions step by lcm(p, q).  Every product below is
 * either checked before it is formed or reduced modulo a bound, so no int64
 * overflows for indices and steps of magnitude below 2^62 (array indices are
 * far below that).
 *
 * The difference a \ b of boxes is cut axis by axis: piece j keeps a ∩ b on
 * the axes before j, takes a_j \ b_j on axis j and keeps a whole on the axes
 * after j.  The pieces are disjoint (they differ on the first axis where one
 * leaves a ∩ b) and their union is a \ b. */
#include "dg_box.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DG_RANGE_EMPTY_AT(s) ((dg_range){(s), (s), 1})

/* a / b rounded up, for a >= 0 and b >= 1. */
static int64_t ceil_div_nonneg(int64_t a, int64_t b)
{
    assert(a >= 0 && b >= 1);
    return a / b + (a % b != 0);
}

/* Greatest common divisor of a, b >= 0 (gcd(0, 0) == 0). */
static int64_t gcd64(int64_t a, int64_t b)
{
    assert(a >= 0 && b >= 0);
    while (b != 0) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* (x + y) mod m for x, y in [0, m); never forms x + y >= 2^64. */
static uint64_t addmod_u64(uint64_t x, uint64_t y, uint64_t m)
{
    assert(x < m && y < m);
    return x >= m - y ? x - (m - y) : x + y;
}

/* (x * y) mod m by doubling, for m >= 1: no wider integer type needed. */
static uint64_t mulmod_u64(uint64_t x, uint64_t y, uint64_t m)
{
    uint64_t res = 0;

    assert(m >= 1);
    x %= m;
    y %= m;
    while (y != 0) {
        if (y & 1u)
            res = addmod_u64(res, x, m);
        x = addmod_u64(x, x, m);
        y >>= 1;
    }
    return res;
}

/* The inverse of a modulo m, in [0, m), for m >= 1 and gcd(a, m) == 1.  The
 * Bezout coefficients of the extended Euclid stay below m in magnitude. */
static int64_t modinv64(int64_t a, int64_t m)
{
    int64_t r0 = m, r1 = a % m, t0 = 0, t1 = 1;

    assert(m >= 1 && a >= 0);
    if (m == 1)
        return 0;
    while (r1 != 0) {
        int64_t qt = r0 / r1, tmp;
        tmp = r0 - qt * r1;
        r0 = r1;
        r1 = tmp;
        tmp = t0 - qt * t1;
        t0 = t1;
        t1 = tmp;
    }
    assert(r0 == 1);
    return t0 < 0 ? t0 + m : t0;
}

/* Canonical form of the indices start, start+step, ... below stop.  A step
 * below 1 is a caller bug; it is asserted and treated as 1. */
dg_range dg_range_make(int64_t start, int64_t stop, int64_t step)
{
    int64_t last_off;

    assert(step >= 1);
    if (step < 1)
        step = 1;
    if (stop <= start)
        return DG_RANGE_EMPTY_AT(start);
    last_off = (stop - start - 1) / step * step; /* <= stop - start - 1 */
    if (last_off == 0)
        return (dg_range){start, start + 1, 1};
    return (dg_range){start, start + last_off + 1, step};
}

/* r0 ∩ r1 as one canonical range (the intersection of two arithmetic
 * progressions is one).  Inputs need not be canonical. */
dg_range dg_range_intersect(dg_range r0, dg_range r1)
{
    int64_t lo, hi, p, q, g, a0, d, qg, k, x, pg;

    if (r0.step == 1 && r1.step == 1) { /* the common case: no lattice to solve */
        lo = r0.start > r1.start ? r0.start : r1.start;
        hi = r0.stop < r1.stop ? r0.stop : r1.stop;
        return hi > lo ? (dg_range){lo, hi, 1} : DG_RANGE_EMPTY_AT(lo);
    }
    r0 = dg_range_make(r0.start, r0.stop, r0.step);
    r1 = dg_range_make(r1.start, r1.stop, r1.step);
    lo = r0.start > r1.start ? r0.start : r1.start;
    hi = r0.stop < r1.stop ? r0.stop : r1.stop;
    if (dg_range_len(r0) == 0 || dg_range_len(r1) == 0 || hi <= lo)
        return DG_RANGE_EMPTY_AT(lo);
    p = r0.step;
    q = r1.step;
    /* a0: first index of r0 at or after lo.  Any common index >= lo is >= a0,
     * and an index >= lo >= r1.start on r1's lattice is in r1 below hi. */
    a0 = r0.start + ceil_div_nonneg(lo - r0.start, p) * p;
    if (a0 >= hi)
        return DG_RANGE_EMPTY_AT(lo);
    g = gcd64(p, q);
    d = (r1.start - a0) % q;
    if (d < 0)
        d += q;
    if (d % g != 0)
        return DG_RANGE_EMPTY_AT(lo);
    /* Solve a0 + p*k = r1.start (mod q): (p/g) k = d/g (mod q/g). */
    qg = q / g;
    pg = (p / g) % qg;
    k = (int64_t)mulmod_u64((uint64_t)(d / g), (uint64_t)modinv64(pg, qg),
                            (uint64_t)qg);
    /* x = a0 + p*k, the first common index >= lo; it is past hi when p*k
     * exceeds hi - 1 - a0, which is tested without forming p*k. */
    if (k > 0 && p > (hi - 1 - a0) / k)
        return DG_RANGE_EMPTY_AT(lo);
    x = a0 + p * k;
    assert(x >= lo && x < hi);
    /* lcm = (p/g)*q; when it overflows it exceeds hi - x: one index. */
    if (p / g > INT64_MAX / q)
        return (dg_range){x, x + 1, 1};
    return dg_range_make(x, hi, (p / g) * q);
}

/* Canonicalises axes 0..ndim-1 of b (borrowed) in place. */
void dg_box_canon(dg_box *b)
{
    assert(b != NULL && b->ndim >= 0 && b->ndim <= DG_MAXDIM);
    for (int i = 0; i < b->ndim; i++)
        b->r[i] = dg_range_make(b->r[i].start, b->r[i].stop, b->r[i].step);
}

/* Fills *b (borrowed) with the whole array of the given shape (borrowed,
 * ndim entries, each >= 0).  Unused axes are zeroed so that boxes built here
 * compare bytewise. */
void dg_box_full(dg_box *b, int ndim, const int64_t *shape)
{
    assert(b != NULL && ndim >= 0 && ndim <= DG_MAXDIM);
    assert(ndim == 0 || shape != NULL);
    memset(b, 0, sizeof *b);
    b->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        assert(shape[i] >= 0);
        b->r[i] = dg_range_make(0, shape[i], 1);
    }
}

/* Number of indices in b (borrowed); saturates at INT64_MAX rather than
 * overflow, which no real array reaches. */
int64_t dg_box_size(const dg_box *b)
{
    int64_t n = 1;

    assert(b != NULL && b->ndim >= 0 && b->ndim <= DG_MAXDIM);
    for (int i = 0; i < b->ndim; i++) {
        int64_t len = dg_range_len(b->r[i]);
        if (len == 0)
            return 0;
        n = n > INT64_MAX / len ? INT64_MAX : n * len;
    }
    return n;
}

/* 1 if a and b (borrowed) hold the same indices: both empty with the same
 * ndim, or the same canonical range on every axis. */
int dg_box_equal(const dg_box *a, const dg_box *b)
{
    int64_t na, nb;

    assert(a != NULL && b != NULL);
    if (a->ndim != b->ndim)
        return 0;
    na = dg_box_size(a);
    nb = dg_box_size(b);
    if (na == 0 || nb == 0)
        return na == nb;
    for (int i = 0; i < a->ndim; i++) {
        dg_range ra = dg_range_make(a->r[i].start, a->r[i].stop, a->r[i].step);
        dg_range rb = dg_range_make(b->r[i].start, b->r[i].stop, b->r[i].step);
        if (ra.start != rb.start || ra.stop != rb.stop || ra.step != rb.step)
            return 0;
    }
    return 1;
}

/* 1 if the canonical, non-empty range `in` lies in the canonical range
 * `out`: its ends are in `out` and, if it has two or more indices, its step
 * is a multiple of out's step (then every index between is in `out` too). */
static int range_contains(dg_range out, dg_range in)
{
    int64_t last = in.stop - 1;

    assert(dg_range_len(in) > 0);
    if (in.start < out.start || last >= out.stop)
        return 0;
    if ((in.start - out.start) % out.step != 0)
        return 0;
    return dg_range_len(in) == 1 || in.step % out.step == 0;
}

/* 1 if every index of `inner` is in `outer` (both borrowed).  An empty inner
 * box is contained in any box of its ndim. */
int dg_box_contains(const dg_box *outer, const dg_box *inner)
{
    assert(outer != NULL && inner != NULL);
    if (outer->ndim != inner->ndim)
        return 0;
    if (dg_box_size(inner) == 0)
        return 1;
    for (int i = 0; i < inner->ndim; i++) {
        dg_range ro = dg_range_make(outer->r[i].start, outer->r[i].stop,
                                    outer->r[i].step);
        dg_range ri = dg_range_make(inner->r[i].start, inner->r[i].stop,
                                    inner->r[i].step);
        if (!range_contains(ro, ri))
            return 0;
    }
    return 1;
}

/* *out = a ∩ b (all borrowed; out may alias a or b), on a's axes alone
 * (out's ranges past them are left as they were: a box is 776 bytes, and
 * the planner intersects boxes of layouts of many chunks millions of times).
 * A disjoint result is written in the one canonical empty form, (0, 0, 1)
 * on every axis.  Boxes of different ndim are disjoint. */
int dg_box_intersect(const dg_box *a, const dg_box *b, dg_box *out)
{
    dg_range res[DG_MAXDIM];
    const int nd = a->ndim;
    int i = 0;

    assert(a != NULL && b != NULL && out != NULL);
    assert(a->ndim == b->ndim);
    assert(a->ndim >= 0 && a->ndim <= DG_MAXDIM);
    if (a->ndim == b->ndim)
        for (i = 0; i < nd; i++) {
            res[i] = dg_range_intersect(a->r[i], b->r[i]);
            if (dg_range_len(res[i]) == 0)
                break;
        }
    out->ndim = nd;
    if (a->ndim == b->ndim && i == nd) {
        for (i = 0; i < nd; i++)
            out->r[i] = res[i];
        return 1;
    }
    for (i = 0; i < nd; i++)
        out->r[i] = DG_RANGE_EMPTY_AT(0);
    return 0;
}

/* x + y for counts >= 0, saturating at INT64_MAX. */
static int64_t add_sat(int64_t x, int64_t y)
{
    assert(x >= 0 && y >= 0);
    return x > INT64_MAX - y ? INT64_MAX : x + y;
}

/* The indices of a \ in, for canonical non-empty ranges with `in` inside
 * `a` (so in's step is a multiple of a's), as a list of ranges numbered
 * 0..range_diff_count()-1, each built on demand by range_diff_piece.
 *
 * The indices of a before in's first and after in's last make one range
 * each.  Between the two ends, a's lattice holds m = in.step / a.step residue
 * classes modulo in.step, of which `in` is one: the rest is either the other
 * m - 1 classes (step in.step) or the len(in) - 1 gaps between consecutive
 * indices of `in` (step a.step), whichever is fewer. */
static int64_t range_diff_middle(dg_range a, dg_range in)
{
    int64_t len_in = dg_range_len(in), m;

    if (len_in < 2 || in.step == a.step)
        return 0;
    assert(in.step % a.step == 0);
    m = in.step / a.step;
    return m - 1 <= len_in - 1 ? m - 1 : len_in - 1;
}

static int64_t range_diff_count(dg_range a, dg_range in)
{
    assert(dg_range_len(a) > 0 && dg_range_len(in) > 0);
    assert(range_contains(a, in));
    return (in.start > a.start) + range_diff_middle(a, in) +
           (in.stop < a.stop);
}

static dg_range range_diff_piece(dg_range a, dg_range in, int64_t i)
{
    int64_t p = a.step, last = in.stop - 1, mid = range_diff_middle(a, in);

    assert(i >= 0 && i < range_diff_count(a, in));
    if (in.start > a.start) {
        if (i == 0)
            return dg_range_make(a.start, in.start, p);
        i--;
    }
    if (i < mid) {
        int64_t L = in.step, m = L / p;
        if (m - 1 == mid) /* residue class i + 1 of a's lattice modulo L */
            return dg_range_make(in.start + (i + 1) * p, last, L);
        /* gap i: strictly between in's indices i and i + 1 */
        return dg_range_make(in.start + i * L + p, in.start + (i + 1) * L, p);
    }
    assert(i == mid && in.stop < a.stop);
    return dg_range_make(last + p, a.stop, p);
}

/* Number of pieces dg_box_subtract writes for a \ b (a, b borrowed, same
 * ndim): 0 if a is empty or inside b, 1 if they are disjoint, else the sum
 * over the axes of the ranges of a_j \ b_j.  Saturates at INT64_MAX. */
int64_t dg_box_subtract_count(const dg_box *a, const dg_box *b)
{
    dg_box ca, in;
    int64_t n = 0;

    assert(a != NULL && b != NULL && a->ndim == b->ndim);
    if (a->ndim != b->ndim)
        return 0;
    if (dg_box_size(a) == 0)
        return 0;
    if (!dg_box_intersect(a, b, &in))
        return 1;
    dg_box_copy(&ca, a);
    dg_box_canon(&ca);
    for (int j = 0; j < ca.ndim; j++)
        n = add_sat(n, range_diff_count(ca.r[j], in.r[j]));
    return n;
}

/* Writes into out[0..*n) disjoint canonical non-empty boxes whose union is
 * a \ b (a, b borrowed; out borrowed, room for `cap` boxes, may not alias a
 * or b).  Fails with DG_ERR_INTERNAL and *n = 0 if the boxes differ in ndim
 * or more than cap pieces are needed (dg_box_subtract_count says how many). */
dg_status dg_box_subtract(const dg_box *a, const dg_box *b, dg_box *out,
                          int cap, int *n, dg_error *err)
{
    dg_box ca, in;
    int64_t need;
    int k = 0;

    assert(a != NULL && b != NULL && n != NULL && cap >= 0);
    assert(cap == 0 || out != NULL);
    *n = 0;
    if (a->ndim != b->ndim)
        return dg_error_set(err, DG_ERR_INTERNAL, -1,
                            "box difference of a %d-d and a %d-d box",
                            a->ndim, b->ndim);
    need = dg_box_subtract_count(a, b);
    if (need > cap)
        return dg_error_set(err, DG_ERR_INTERNAL, -1,
                            "box difference needs %lld pieces, room for %d",
                            (long long)need, cap);
    if (need == 0)
        return DG_OK;
    dg_box_copy(&ca, a);
    dg_box_canon(&ca);
    if (!dg_box_intersect(&ca, b, &in)) {
        dg_box_copy(&out[0], &ca);
        *n = 1;
        return DG_OK;
    }
    for (int j = 0; j < ca.ndim; j++) {
        int64_t np = range_diff_count(ca.r[j], in.r[j]);
        for (int64_t i = 0; i < np; i++) {
            dg_box *o = &out[k++];
            dg_box_copy(o, &ca);
            for (int t = 0; t < j; t++)
                o->r[t] = in.r[t];
            o->r[j] = range_diff_piece(ca.r[j], in.r[j], i);
            assert(dg_range_len(o->r[j]) > 0);
        }
    }
    assert((int64_t)k == need);
    *n = k;
    return DG_OK;
}

/* ---- an index of boxes along one axis ------------------------------------ */

/* b's range on axis ax: [0, 1) for a 0-d box (one element). */
static dg_range axis_range(const dg_box *b, int ax)
{
    dg_range one = {0, 1, 1};
    return ax < b->ndim ? b->r[ax] : one;
}

typedef struct start_id {
    int64_t start, stop;
    int id;
} start_id;

/* qsort order: by start, then by id (the same order on every libc). */
static int cmp_start_id(const void *pa, const void *pb)
{
    const start_id *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

void dg_box_index_free(dg_box_index *x)
{
    free(x->id);
    free(x->start);
    free(x->stop);
    free(x->maxstop);
    memset(x, 0, sizeof *x);
}

int dg_box_index_axis(const dg_box *const *boxes, int n)
{
    const int ndim = n > 0 ? boxes[0]->ndim : 0;
    int best = 0;
    double best_depth = 0;
    if (ndim <= 1)
        return 0;
    for (int ax = 0; ax < ndim; ax++) {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            const dg_range r = axis_range(boxes[i], ax);
            if (dg_range_len(r) == 0)
                continue;
            lo = r.start < lo ? r.start : lo;
            hi = r.stop > hi ? r.stop : hi;
            sum += (double)(r.stop - r.start);
        }
        if (hi > lo) {
            const double depth = sum / (double)(hi - lo);
            if (ax == 0 || depth < best_depth) {
                best = ax;
                best_depth = depth;
            }
        }
    }
    return best;
}

dg_status dg_box_index_build(dg_box_index *x, const dg_box *const *boxes, int n, int ax,
                             dg_error *err)
{
    start_id *keys;
    int m = 0;
    x->ax = ax;
    x->n = 0;
    if (n > x->cap) {
        const size_t c = (size_t)n;
        int *id = realloc(x->id, c * sizeof *id);
        int64_t *st = id ? realloc(x->start, c * sizeof *st) : NULL;
        int64_t *sp = st ? realloc(x->stop, c * sizeof *sp) : NULL;
        int64_t *mx = sp ? realloc(x->maxstop, c * sizeof *mx) : NULL;
        if (id)
            x->id = id;
        if (st)
            x->start = st;
        if (sp)
            x->stop = sp;
        if (!mx)
            return dg_error_set(err, DG_ERR_NOMEM, -1,
                                "out of host memory indexing %d chunks", n);
        x->maxstop = mx;
        x->cap = n;
    }
    keys = malloc((size_t)(n > 0 ? n : 1) * sizeof *keys);
    if (!keys)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory indexing %d chunks", n);
    for (int i = 0; i < n; i++) {
        if (dg_box_size(boxes[i]) == 0)
            continue;
        keys[m].start = axis_range(boxes[i], ax).start;
        keys[m].stop = axis_range(boxes[i], ax).stop;
        keys[m].id = i;
        m++;
    }
    if (m > 1)
        qsort(keys, (size_t)m, sizeof *keys, cmp_start_id);
    for (int i = 0; i < m; i++) {
        x->id[i] = keys[i].id;
        x->start[i] = keys[i].start;
        x->stop[i] = keys[i].stop;
        x->maxstop[i] = i > 0 && x->maxstop[i - 1] > x->stop[i] ? x->maxstop[i - 1]
                                                                 : x->stop[i];
    }
    x->n = m;
    free(keys);
    return DG_OK;
}

dg_status dg_box_index_query(const dg_box_index *x, const dg_box *b, int **ids, int *n,
                             int *cap, dg_error *err)
{
    const int64_t lo = axis_range(b, x->ax).start, hi = axis_range(b, x->ax).stop;
    int a = 0, z = x->n;
    if (hi <= lo)
        return DG_OK;
    while (a < z) { /* the first position whose running stop passes lo */
        const int m = a + (z - a) / 2;
        if (x->maxstop[m] > lo)
            z = m;
        else
            a = m + 1;
    }
    for (int i = a; i < x->n && x->start[i] < hi; i++) {
        if (x->stop[i] <= lo)
            continue;
        if (*n == *cap)
            DG_CHECK(dg_grow((void **)ids, cap, *n + 1, sizeof(int), 64, err));
        (*ids)[(*n)++] = x->id[i];
    }
    return DG_OK;
}

int dg_box_cmp(const dg_box *a, const dg_box *b)
{
    const int64_t na = dg_box_size(a), nb = dg_box_size(b);
    if (a->ndim != b->ndim)
        return a->ndim < b->ndim ? -1 : 1;
    if ((na == 0) != (nb == 0))
        return na == 0 ? -1 : 1;
    if (na == 0)
        return 0;
    for (int ax = 0; ax < a->ndim; ax++) {
        const dg_range ra = dg_range_make(a->r[ax].start, a->r[ax].stop, a->r[ax].step);
        const dg_range rb = dg_range_make(b->r[ax].start, b->r[ax].stop, b->r[ax].step);
        if (ra.start != rb.start)
            return ra.start < rb.start ? -1 : 1;
        if (ra.stop != rb.stop)
            return ra.stop < rb.stop ? -1 : 1;
        if (ra.step != rb.step)
            return ra.step < rb.step ? -1 : 1;
    }
    return 0;
}

/* A box to sort, with the start of dg_box_cmp's order beside it (ndim,
 * emptiness, axis 0's canonical range): most comparisons of a layout's boxes
 * end there without reading the box itself, which lies in a table of
 * chunks (1 KiB apart: a cache miss each for 10^5 chunks). */
typedef struct box_key {
    const dg_box *b;
    int id;
    int ndim, full; /* full: the box is not empty */
    dg_range r0;    /* axis 0, canonical ({0, 0, 0} for an empty or 0-d box) */
} box_key;

static void box_key_make(box_key *k, const dg_box *b, int id)
{
    k->b = b;
    k->id = id;
    k->ndim = b->ndim;
    k->full = dg_box_size(b) > 0;
    k->r0.start = k->r0.stop = k->r0.step = 0;
    if (k->full && b->ndim > 0)
        k->r0 = dg_range_make(b->r[0].start, b->r[0].stop, b->r[0].step);
}

/* dg_box_cmp of the keys' boxes, from the keys where they differ. */
static int box_key_cmp(const box_key *a, const box_key *b)
{
    if (a->ndim != b->ndim)
        return a->ndim < b->ndim ? -1 : 1;
    if (a->full != b->full)
        return a->full ? 1 : -1;
    if (a->r0.start != b->r0.start)
        return a->r0.start < b->r0.start ? -1 : 1;
    if (a->r0.stop != b->r0.stop)
        return a->r0.stop < b->r0.stop ? -1 : 1;
    if (a->r0.step != b->r0.step)
        return a->r0.step < b->r0.step ? -1 : 1;
    return a->full && a->ndim > 1 ? dg_box_cmp(a->b, b->b) : 0;
}

/* qsort order of box keys: dg_box_cmp, ties by id, so that equal boxes lie
 * together in the order of their ids. */
static int cmp_box_key(const void *pa, const void *pb)
{
    const box_key *a = pa, *b = pb;
    const int c = box_key_cmp(a, b);
    if (c != 0)
        return c;
    return (a->id > b->id) - (a->id < b->id);
}

dg_status dg_box_equal_groups(const dg_box *const *boxes, int n, int *rank, int *count,
                              dg_error *err)
{
    box_key *k;
    int i, g0;
    if (n <= 0)
        return DG_OK;
    k = malloc((size_t)n * sizeof *k);
    if (!k)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory sorting %d chunks", n);
    for (i = 0; i < n; i++)
        box_key_make(&k[i], boxes[i], i);
    qsort(k, (size_t)n, sizeof *k, cmp_box_key);
    for (g0 = 0; g0 < n;) {
        int g1 = g0 + 1;
        while (g1 < n && box_key_cmp(&k[g0], &k[g1]) == 0)
            g1++;
        for (i = g0; i < g1; i++) {
            rank[k[i].id] = i - g0;
            count[k[i].id] = g1 - g0;
        }
        g0 = g1;
    }
    free(k);
    return DG_OK;
}

dg_status dg_boxes_disjoint(const dg_box *const *boxes, int n, int *disjoint, dg_error *err)
{
    dg_box_index x;
    int *hits = NULL, nhits = 0, cap = 0, i, j, apart;
    dg_status st = DG_OK;
    *disjoint = 1;
    if (n < 2)
        return DG_OK;
    memset(&x, 0, sizeof x);
    st = dg_box_index_build(&x, boxes, n, dg_box_index_axis(boxes, n), err);
    /* ranges on the index's axis that follow one another without overlap
     * (a block-cyclic layout's, say) are disjoint boxes: no query needed */
    for (i = 1; i < x.n && x.start[i] >= x.maxstop[i - 1]; i++)
        ;
    apart = i >= x.n;
    for (i = 0; i < n && !apart && st == DG_OK && *disjoint; i++) {
        nhits = 0;
        st = dg_box_index_query(&x, boxes[i], &hits, &nhits, &cap, err);
        for (j = 0; j < nhits && st == DG_OK; j++) {
            dg_box meet;
            if (hits[j] != i && dg_box_intersect(boxes[i], boxes[hits[j]], &meet)) {
                *disjoint = 0;
                break;
            }
        }
    }
    free(hits);
    dg_box_index_free(&x);
    return st;
}

int dg_spans_meet(int ndim, const char *d0, const int64_t *s0, const int64_t *h0, int isz0,
                  const char *d1, const int64_t *s1, const int64_t *h1, int isz1)
{
    const char *lo0 = d0, *hi0 = d0 + isz0, *lo1 = d1, *hi1 = d1 + isz1;
    int a;
    for (a = 0; a < ndim; a++) {
        const int64_t e0 = (h0[a] - 1) * s0[a], e1 = (h1[a] - 1) * s1[a];
        if (e0 < 0)
            lo0 += e0;
        else
            hi0 += e0;
        if (e1 < 0)
            lo1 += e1;
        else
            hi1 += e1;
    }
    return lo0 < hi1 && lo1 < hi0;
}
