/* Unit tests of the box algebra (dg_box.c), the reshard planner (dg_plan.c)
 * and error records (dg_status.c), without Python or a GPU.
 *
 * Every box operation and every plan is also checked against brute force:
 * the indices of small boxes are enumerated one by one.  The random planner
 * cases draw uneven, strided, overlapping and replicated layouts on up to 4
 * devices (and the host) over shapes of up to 3 axes of up to 9 indices.
 *
 * Usage: test_plan [seed]   (prints "N passed, M failed"; exit 1 on failure) */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dg_box.h"
#include "dg_plan.h"
#include "dg_status.h"

#define HOST (-1) /* DG_HOST of dg_backend.h, not included to stay pure */

#include "harness.h"

/* ---- helpers ---------------------------------------------------------- */

/* A box from ndim (start, stop, step) triples, canonicalised. */
static dg_box bx(int ndim, ...)
{
    dg_box b;
    va_list ap;

    memset(&b, 0, sizeof b);
    b.ndim = ndim;
    va_start(ap, ndim);
    for (int i = 0; i < ndim; i++) {
        int64_t s = va_arg(ap, int), e = va_arg(ap, int), st = va_arg(ap, int);
        b.r[i] = dg_range_make(s, e, st);
    }
    va_end(ap);
    return b;
}

static int range_is_canon(dg_range r)
{
    int64_t n = dg_range_len(r);

    if (r.step < 1)
        return 0;
    if (n == 0)
        return r.stop == r.start && r.step == 1;
    if (n == 1)
        return r.step == 1 && r.stop == r.start + 1;
    return r.stop == r.start + (n - 1) * r.step + 1;
}

static int box_is_canon(const dg_box *b)
{
    for (int i = 0; i < b->ndim; i++)
        if (!range_is_canon(b->r[i]))
            return 0;
    return 1;
}

/* Iterates idx over the grid [0, lim)^ndim in C order: call with idx all 0
 * first; returns 0 when done. */
static int grid_next(int ndim, int64_t *idx, int64_t lim)
{
    for (int i = ndim - 1; i >= 0; i--) {
        if (++idx[i] < lim)
            return 1;
        idx[i] = 0;
    }
    return 0;
}

/* Iterates idx over the indices of the non-empty box b in C order: start
 * with box_first; returns 0 when done. */
static void box_first(const dg_box *b, int64_t *idx)
{
    for (int i = 0; i < b->ndim; i++)
        idx[i] = b->r[i].start;
}

static int box_next(const dg_box *b, int64_t *idx)
{
    for (int i = b->ndim - 1; i >= 0; i--) {
        idx[i] += b->r[i].step;
        if (idx[i] < b->r[i].stop)
            return 1;
        idx[i] = b->r[i].start;
    }
    return 0;
}

static void idx_str(int ndim, const int64_t *idx, char *buf, size_t size)
{
    size_t used = 0;

    used += (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < ndim && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used,
                                 i == 0 ? "%lld" : ", %lld",
                                 (long long)idx[i]);
    if (used < size)
        snprintf(buf + used, size - used, ndim == 1 ? ",)" : ")");
}

/* ---- ranges and boxes ------------------------------------------------- */

static void test_range_canon(void)
{
    dg_range r;

    r = dg_range_make(3, 3, 5);
    EXPECT(r.start == 3 && r.stop == 3 && r.step == 1);
    r = dg_range_make(5, 2, 1);
    EXPECT(dg_range_len(r) == 0 && r.stop == r.start && r.step == 1);
    r = dg_range_make(2, 10, 3); /* 2 5 8 */
    EXPECT(r.start == 2 && r.stop == 9 && r.step == 3 && dg_range_len(r) == 3);
    r = dg_range_make(2, 9, 3); /* 2 5 8 */
    EXPECT(r.start == 2 && r.stop == 9 && r.step == 3);
    r = dg_range_make(2, 8, 3); /* 2 5 */
    EXPECT(r.start == 2 && r.stop == 6 && r.step == 3);
    r = dg_range_make(4, 6, 7); /* 4 */
    EXPECT(r.start == 4 && r.stop == 5 && r.step == 1);
    r = dg_range_make(0, 7, 1);
    EXPECT(r.start == 0 && r.stop == 7 && r.step == 1 && dg_range_len(r) == 7);
    for (int s = 0; s < 8; s++)
        for (int e = 0; e < 16; e++)
            for (int st = 1; st < 7; st++) {
                dg_range a = dg_range_make(s, e, st);
                EXPECT(range_is_canon(a));
                for (int x = -1; x < 18; x++)
                    EXPECT(range_has(a, x) ==
                           (x >= s && x < e && (x - s) % st == 0));
            }
    {
        dg_box b = bx(2, 0, 10, 4, 1, 2, 3), c = b;
        c.r[0].stop = 11;
        c.r[1].step = 9;
        dg_box_canon(&c);
        EXPECT(dg_box_equal(&b, &c));
        EXPECT(memcmp(&b.r[0], &c.r[0], 2 * sizeof(dg_range)) == 0);
    }
}

static void test_box_basics(void)
{
    int64_t shape[3] = {4, 0, 5}, shape2[2] = {3, 7};
    dg_box f, g, e1, e2, z0a, z0b;

    dg_box_full(&f, 2, shape2);
    EXPECT(f.ndim == 2 && dg_box_size(&f) == 21);
    EXPECT(f.r[1].start == 0 && f.r[1].stop == 7 && f.r[1].step == 1);
    dg_box_full(&g, 3, shape);
    EXPECT(dg_box_size(&g) == 0);
    dg_box_full(&z0a, 0, NULL);
    dg_box_full(&z0b, 0, NULL);
    EXPECT(dg_box_size(&z0a) == 1 && dg_box_equal(&z0a, &z0b));
    EXPECT(dg_box_contains(&z0a, &z0b));
    EXPECT(dg_box_subtract_count(&z0a, &z0b) == 0);
    EXPECT(dg_box_intersect(&z0a, &z0b, &g) == 1 && g.ndim == 0);

    /* equal: same indices, whatever the spelling; empties of one ndim */
    e1 = bx(2, 0, 0, 1, 0, 5, 1);
    e2 = bx(2, 3, 9, 2, 4, 4, 1);
    EXPECT(dg_box_equal(&e1, &e2));
    EXPECT(!dg_box_equal(&e1, &f));
    g = bx(2, 0, 3, 1, 0, 7, 1);
    EXPECT(dg_box_equal(&f, &g));
    g = bx(2, 0, 3, 1, 0, 7, 2);
    EXPECT(!dg_box_equal(&f, &g));
    g = bx(1, 0, 3, 1);
    EXPECT(!dg_box_equal(&f, &g));

    /* contains */
    g = bx(2, 0, 3, 2, 1, 7, 3); /* rows 0 2, cols 1 4 */
    EXPECT(dg_box_contains(&f, &g) && !dg_box_contains(&g, &f));
    {
        dg_box o = bx(1, 0, 20, 2), in1 = bx(1, 4, 17, 4), in2 = bx(1, 4, 17, 3),
               in3 = bx(1, 6, 7, 1), in4 = bx(1, 7, 8, 1), in5 = bx(1, 18, 23, 4);
        EXPECT(dg_box_contains(&o, &in1));  /* 4 8 12 16 */
        EXPECT(!dg_box_contains(&o, &in2)); /* 4 7 ... */
        EXPECT(dg_box_contains(&o, &in3));
        EXPECT(!dg_box_contains(&o, &in4));
        EXPECT(!dg_box_contains(&o, &in5)); /* 18 22: 22 beyond */
        EXPECT(dg_box_contains(&o, &e1) == 0); /* ndim differs */
        e2 = bx(1, 5, 5, 1);
        EXPECT(dg_box_contains(&o, &e2)); /* empty inside anything */
    }
}

static void test_intersect_steps(void)
{
    dg_box a, b, c;
    dg_range r;

    /* 0 4 8 ... ∩ 2 5 8 11 ...: x = 0 mod 4, x = 2 mod 3 -> 8, 20, ... */
    r = dg_range_intersect(dg_range_make(0, 40, 4), dg_range_make(2, 40, 3));
    EXPECT(r.start == 8 && r.step == 12 && r.stop == 33);
    /* no solution: even vs odd */
    r = dg_range_intersect(dg_range_make(0, 40, 2), dg_range_make(1, 40, 4));
    EXPECT(dg_range_len(r) == 0);
    /* gcd 2 solvable: 0 6 12 ... ∩ 2 6 10 ... -> 6 18 30 */
    r = dg_range_intersect(dg_range_make(0, 40, 6), dg_range_make(2, 40, 4));
    EXPECT(r.start == 6 && r.step == 12 && r.stop == 31);
    /* single index result gets step 1 */
    r = dg_range_intersect(dg_range_make(0, 10, 3), dg_range_make(6, 30, 5));
    EXPECT(r.start == 6 && r.stop == 7 && r.step == 1);

    a = bx(2, 0, 10, 2, 0, 9, 1);
    b = bx(2, 3, 10, 1, 1, 9, 3);
    EXPECT(dg_box_intersect(&a, &b, &c) == 1);
    EXPECT(c.r[0].start == 4 && c.r[0].stop == 9 && c.r[0].step == 2);
    EXPECT(c.r[1].start == 1 && c.r[1].stop == 8 && c.r[1].step == 3);
    b = bx(2, 1, 10, 2, 0, 9, 1);
    EXPECT(dg_box_intersect(&a, &b, &c) == 0 && dg_box_size(&c) == 0);
    EXPECT(c.ndim == 2 && box_is_canon(&c));

    /* brute force over all small ranges */
    for (int s0 = 0; s0 < 7; s0++)
        for (int e0 = s0; e0 < 19; e0 += 2)
            for (int p = 1; p < 7; p++)
                for (int s1 = 0; s1 < 7; s1++)
                    for (int e1 = s1; e1 < 19; e1 += 3)
                        for (int q = 1; q < 7; q++) {
                            dg_range x = dg_range_make(s0, e0, p);
                            dg_range y = dg_range_make(s1, e1, q);
                            dg_range z = dg_range_intersect(x, y);
                            if (!range_is_canon(z)) {
                                failf("intersect (%d,%d,%d)&(%d,%d,%d) not "
                                      "canonical", s0, e0, p, s1, e1, q);
                                continue;
                            }
                            for (int v = 0; v < 20; v++)
                                if (range_has(z, v) !=
                                    (range_has(x, v) && range_has(y, v)))
                                    failf("intersect (%d,%d,%d)&(%d,%d,%d) "
                                          "wrong at %d", s0, e0, p, s1, e1,
                                          q, v);
                        }

    /* large values: no overflow, and the result is the true intersection:
     * its start solves both congruences, and start - step is below both
     * ranges' starts, so start is the first solution. */
    {
        const int64_t P = 1000000007, Q = 999999937, BIG = 4000000000000000000;
        dg_range x = dg_range_make(0, BIG, P), y = dg_range_make(5, BIG, Q);
        dg_range z = dg_range_intersect(x, y);
        EXPECT(dg_range_len(z) >= 1);
        EXPECT(z.start % P == 0 && (z.start - 5) % Q == 0);
        EXPECT(z.step == P * Q || dg_range_len(z) == 1);
        EXPECT(z.start - P * Q < 5);
        EXPECT(range_is_canon(z));
        /* lcm overflowing int64: at most one common index */
        x = dg_range_make(3, BIG, 3037000493);
        y = dg_range_make(3, BIG, 3037000453);
        z = dg_range_intersect(x, y);
        EXPECT(z.start == 3 && dg_range_len(z) == 1);
        x = dg_range_make(INT64_C(1) << 61, (INT64_C(1) << 62), 7);
        y = dg_range_make((INT64_C(1) << 61) + 1, (INT64_C(1) << 62), 11);
        z = dg_range_intersect(x, y);
        EXPECT(dg_range_len(z) > 1 && z.step == 77);
        EXPECT((z.start - x.start) % 7 == 0 && (z.start - y.start) % 11 == 0);
        EXPECT(z.start - 77 < y.start);
    }
}

/* Checks dg_box_subtract(a, b) against enumeration over [0, lim)^ndim. */
static void check_subtract(const dg_box *a, const dg_box *b, int64_t lim)
{
    dg_box out[512];
    dg_error err = DG_ERROR_INIT;
    int n = -1;
    int64_t idx[DG_MAXDIM] = {0}, need = dg_box_subtract_count(a, b);
    dg_status st = dg_box_subtract(a, b, out, 512, &n, &err);

    if (st != DG_OK || n != need) {
        failf("subtract: status %d, %d pieces, count %lld: %s", (int)st, n,
              (long long)need, err.msg);
        return;
    }
    for (int i = 0; i < n; i++)
        if (dg_box_size(&out[i]) == 0 || !box_is_canon(&out[i]) ||
            out[i].ndim != a->ndim)
            failf("subtract: piece %d empty or not canonical", i);
    do {
        int want = box_has(a, idx) && !box_has(b, idx), got = 0;
        for (int i = 0; i < n; i++)
            got += box_has(&out[i], idx);
        if (got != want) {
            char s[128];
            idx_str(a->ndim, idx, s, sizeof s);
            failf("subtract: index %s in %d pieces, want %d", s, got, want);
            return;
        }
    } while (grid_next(a->ndim, idx, lim));
}

static dg_box random_box(int ndim, int64_t lim, int max_step)
{
    dg_box b;

    memset(&b, 0, sizeof b);
    b.ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        int64_t s = rnd_in(0, lim - 1), e = rnd_in(s, lim);
        b.r[i] = dg_range_make(s, e, rnd_in(1, max_step));
    }
    return b;
}

static void test_subtract(void)
{
    dg_box a, b, out[16];
    dg_error err = DG_ERROR_INIT;
    int n;

    /* a \ a and a \ (superset) are empty; a \ (disjoint) is a */
    a = bx(2, 0, 6, 1, 0, 4, 1);
    EXPECT(dg_box_subtract(&a, &a, out, 16, &n, &err) == DG_OK && n == 0);
    b = bx(2, 6, 9, 1, 0, 4, 1);
    EXPECT(dg_box_subtract(&a, &b, out, 16, &n, &err) == DG_OK && n == 1);
    EXPECT(dg_box_equal(&out[0], &a));
    /* a hole in the middle: 4 pieces */
    b = bx(2, 2, 4, 1, 1, 3, 1);
    EXPECT(dg_box_subtract(&a, &b, out, 16, &n, &err) == DG_OK && n == 4);
    check_subtract(&a, &b, 8);
    /* steps differ: 0..11 minus 0 3 6 9 leaves the classes 1 and 2 mod 3
     * up to 9, then 10 11 */
    a = bx(1, 0, 12, 1);
    b = bx(1, 0, 12, 3);
    EXPECT(dg_box_subtract(&a, &b, out, 16, &n, &err) == DG_OK && n == 3);
    EXPECT(out[0].r[0].start == 1 && out[0].r[0].step == 3 &&
           out[0].r[0].stop == 8);
    EXPECT(out[1].r[0].start == 2 && out[1].r[0].step == 3 &&
           out[1].r[0].stop == 9);
    EXPECT(out[2].r[0].start == 10 && out[2].r[0].stop == 12 &&
           out[2].r[0].step == 1);
    check_subtract(&a, &b, 14);
    /* few indices of b in a long span: gaps are fewer than classes */
    a = bx(1, 0, 30, 1);
    b = bx(1, 5, 30, 10); /* 5 15 25 */
    EXPECT(dg_box_subtract_count(&a, &b) == 4); /* before, 2 gaps, after */
    check_subtract(&a, &b, 32);
    /* a strided, b on a coarser lattice of a's */
    a = bx(2, 1, 20, 2, 0, 5, 1);
    b = bx(2, 3, 16, 6, 1, 5, 2);
    check_subtract(&a, &b, 22);
    /* not enough room: DG_ERR_INTERNAL, nothing reported */
    a = bx(2, 0, 6, 1, 0, 4, 1);
    b = bx(2, 2, 4, 1, 1, 3, 1);
    EXPECT(dg_box_subtract(&a, &b, out, 3, &n, &err) == DG_ERR_INTERNAL);
    EXPECT(n == 0 && err.code == DG_ERR_INTERNAL && strstr(err.msg, "4"));
    /* empty a */
    a = bx(2, 0, 0, 1, 0, 4, 1);
    EXPECT(dg_box_subtract(&a, &b, out, 16, &n, NULL) == DG_OK && n == 0);

    for (int t = 0; t < 6000; t++) {
        int ndim = (int)rnd_in(1, 3);
        int64_t lim = ndim == 1 ? 24 : ndim == 2 ? 12 : 7;
        a = random_box(ndim, lim, 4);
        b = random_box(ndim, lim, 5);
        check_subtract(&a, &b, lim + 1);
    }
}

/* contains, equal and intersect of random boxes against enumeration. */
static void test_box_random(void)
{
    for (int t = 0; t < 6000; t++) {
        int ndim = (int)rnd_in(1, 3);
        int64_t lim = ndim == 1 ? 24 : ndim == 2 ? 10 : 6;
        dg_box a = random_box(ndim, lim, 4), b = random_box(ndim, lim, 4), c;
        int64_t idx[DG_MAXDIM] = {0}, na = 0, nab = 0;
        int contains = 1, equal = 1, meet;

        if (rnd() % 4 == 0) { /* b inside a, likely */
            dg_box_intersect(&a, &b, &b);
        }
        meet = dg_box_intersect(&a, &b, &c);
        if (!box_is_canon(&c))
            failf("intersect not canonical");
        do {
            int ia = box_has(&a, idx), ib = box_has(&b, idx);
            na += ia;
            nab += ia && ib;
            if (box_has(&c, idx) != (ia && ib))
                failf("intersect wrong");
            if (ib && !ia)
                contains = 0;
            if (ia != ib)
                equal = 0;
        } while (grid_next(ndim, idx, lim + 1));
        EXPECT(meet == (nab > 0));
        EXPECT(dg_box_size(&a) == na && dg_box_size(&c) == nab);
        EXPECT(dg_box_contains(&a, &b) == contains);
        EXPECT(dg_box_equal(&a, &b) == equal);
    }
}

/* ---- status ------------------------------------------------------------ */

static void test_status(void)
{
    dg_error err = DG_ERROR_INIT;

    EXPECT(dg_error_set(NULL, DG_ERR_VALUE, -1, "dropped %d", 1) ==
           DG_ERR_VALUE);
    EXPECT(dg_error_set(&err, DG_ERR_TYPE, 2, "first %s", "cause") ==
           DG_ERR_TYPE);
    EXPECT(err.code == DG_ERR_TYPE && err.device == 2);
    EXPECT(strcmp(err.msg, "first cause") == 0);
    EXPECT(dg_error_set(&err, DG_ERR_NOMEM, 3, "second") == DG_ERR_NOMEM);
    EXPECT(err.code == DG_ERR_TYPE && err.device == 2);
    EXPECT(strcmp(err.msg, "first cause") == 0);
    dg_error_clear(&err);
    EXPECT(err.code == DG_OK && err.device == -1 && err.msg[0] == '\0');
    {
        char big[600];
        memset(big, 'x', sizeof big - 1);
        big[sizeof big - 1] = '\0';
        dg_error_set(&err, DG_ERR_VALUE, -1, "%s", big);
        EXPECT(strlen(err.msg) == sizeof err.msg - 1);
    }
    dg_error_clear(NULL);
}

/* ---- planner: brute-force verification -------------------------------- */

/* Verifies plan (built from src into dst) element by element: every index of
 * every destination written exactly once, from a source chunk that holds it,
 * from a local chunk whenever one holds it; every copy non-empty, canonical,
 * inside its source and destination boxes.  Returns 0 on a failure. */
static int verify_plan(const dg_plan_chunk *src, int nsrc,
                       const dg_plan_chunk *dst, int ndst, const dg_plan *plan)
{
    int ok = 1;
    int64_t total = 0;

    for (int c = 0; c < plan->ncopies; c++) {
        const dg_plan_copy *cp = &plan->copies[c];
        if (cp->src < 0 || cp->src >= nsrc || cp->dst < 0 || cp->dst >= ndst) {
            failf("copy %d: bad chunk numbers %d -> %d", c, cp->src, cp->dst);
            return 0;
        }
        if (dg_box_size(&cp->box) == 0 || !box_is_canon(&cp->box) ||
            !dg_box_contains(&src[cp->src].box, &cp->box) ||
            !dg_box_contains(&dst[cp->dst].box, &cp->box)) {
            failf("copy %d: empty, not canonical or outside its chunks", c);
            ok = 0;
        }
        if (c > 0 && cp->dst < plan->copies[c - 1].dst) {
            failf("copy %d: not grouped by destination", c);
            ok = 0;
        }
        total += dg_box_size(&cp->box);
    }
    for (int t = 0; t < ndst; t++) {
        const dg_box *d = &dst[t].box;
        int64_t idx[DG_MAXDIM];
        if (dg_box_size(d) == 0)
            continue;
        box_first(d, idx);
        do {
            int hits = 0, from = -1, local = 0;
            for (int s = 0; s < nsrc; s++)
                if (src[s].device == dst[t].device && box_has(&src[s].box, idx))
                    local = 1;
            for (int c = 0; c < plan->ncopies; c++)
                if (plan->copies[c].dst == t &&
                    box_has(&plan->copies[c].box, idx)) {
                    hits++;
                    from = plan->copies[c].src;
                }
            if (hits != 1 || !box_has(&src[from].box, idx) ||
                (local && src[from].device != dst[t].device)) {
                char s[128];
                idx_str(d->ndim, idx, s, sizeof s);
                failf("dst %d index %s: %d copies, source %d (device %d), "
                      "local source %s", t, s, hits, from,
                      from >= 0 ? src[from].device : -9,
                      local ? "exists" : "absent");
                return 0;
            }
        } while (box_next(d, idx));
        total -= dg_box_size(d);
    }
    if (total != 0) {
        failf("copies hold %lld more indices than the destinations",
              (long long)total);
        ok = 0;
    }
    return ok;
}

/* The first destination index no source holds, in destination order then C
 * order, as a string in *buf; 0 if every index is held. */
static int first_uncovered(const dg_plan_chunk *src, int nsrc,
                           const dg_plan_chunk *dst, int ndst, char *buf,
                           size_t size)
{
    for (int t = 0; t < ndst; t++) {
        int64_t idx[DG_MAXDIM];
        if (dg_box_size(&dst[t].box) == 0)
            continue;
        box_first(&dst[t].box, idx);
        do {
            int held = 0;
            for (int s = 0; s < nsrc && !held; s++)
                held = box_has(&src[s].box, idx);
            if (!held) {
                idx_str(dst[t].box.ndim, idx, buf, size);
                return 1;
            }
        } while (box_next(&dst[t].box, idx));
    }
    return 0;
}

/* Builds the plan and checks it: success and verify_plan when the sources
 * cover the destinations, else DG_ERR_VALUE naming the first uncovered
 * index and an empty plan.  Returns 1 if the plan was built. */
static int build_and_check(const dg_plan_chunk *src, int nsrc,
                           const dg_plan_chunk *dst, int ndst, dg_plan *plan)
{
    dg_error err = DG_ERROR_INIT;
    char hole[128];
    int uncovered = first_uncovered(src, nsrc, dst, ndst, hole, sizeof hole);
    dg_status st = dg_plan_build(src, nsrc, dst, ndst, plan, &err);

    if (uncovered) {
        if (st != DG_ERR_VALUE || err.code != DG_ERR_VALUE ||
            strstr(err.msg, hole) == NULL || plan->copies != NULL ||
            plan->ncopies != 0)
            failf("uncovered %s: status %d, message \"%s\"", hole, (int)st,
                  err.msg);
        return 0;
    }
    if (st != DG_OK) {
        failf("plan failed: %s", err.msg);
        return 0;
    }
    verify_plan(src, nsrc, dst, ndst, plan);
    return 1;
}

/* build_and_check on one case, counted as built or refused. */
static void count_case(const dg_plan_chunk *src, int nsrc, const dg_plan_chunk *dst, int ndst,
                       int *built, int *refused)
{
    dg_plan plan;
    if (build_and_check(src, nsrc, dst, ndst, &plan)) {
        (*built)++;
        dg_plan_free(&plan);
    } else {
        (*refused)++;
    }
}

/* dg_plan_check_cover agrees with brute force on whether the nsrc chunks
 * cover the whole of `shape`, and names the first index they leave. */
static void check_cover_agrees(const dg_plan_chunk *src, int nsrc, int ndim,
                               const int64_t *shape)
{
    dg_box whole;
    dg_error err = DG_ERROR_INIT;
    dg_plan_chunk all = {0, {0}};
    char hole[128];
    int un;
    dg_box_full(&whole, ndim, shape);
    all.box = whole;
    un = first_uncovered(src, nsrc, &all, 1, hole, sizeof hole);
    if ((dg_plan_check_cover(src, nsrc, &whole, &err) == DG_OK) == un ||
        (un && strstr(err.msg, hole) == NULL))
        failf("check_cover: hole %s, message \"%s\"", un ? hole : "none", err.msg);
}

/* ---- planner: named cases --------------------------------------------- */

/* Splits [0, n) into k near-equal blocks: block i is [lo, hi). */
static void block(int64_t n, int k, int i, int64_t *lo, int64_t *hi)
{
    *lo = n * i / k;
    *hi = n * (i + 1) / k;
}

static void test_plan_identity(void)
{
    dg_plan_chunk c[4];
    dg_plan plan;

    for (int i = 0; i < 4; i++) {
        int64_t lo, hi;
        block(10, 4, i, &lo, &hi);
        c[i].device = i;
        c[i].box = bx(2, (int)lo, (int)hi, 1, 0, 6, 1);
    }
    if (!build_and_check(c, 4, c, 4, &plan))
        return;
    EXPECT(plan.ncopies == 4);
    for (int i = 0; i < plan.ncopies && i < 4; i++) {
        EXPECT(plan.copies[i].src == i && plan.copies[i].dst == i);
        EXPECT(dg_box_equal(&plan.copies[i].box, &c[i].box));
    }
    dg_plan_free(&plan);
    EXPECT(plan.copies == NULL && plan.ncopies == 0);
    dg_plan_free(&plan); /* twice is harmless */
}

static void test_plan_rows_to_cols(void)
{
    dg_plan_chunk rows[4], cols[4];
    dg_plan plan;
    int seen[4][4] = {{0}};

    for (int i = 0; i < 4; i++) {
        int64_t lo, hi;
        block(9, 4, i, &lo, &hi);
        rows[i].device = i;
        rows[i].box = bx(2, (int)lo, (int)hi, 1, 0, 7, 1);
        block(7, 4, i, &lo, &hi);
        cols[i].device = i;
        cols[i].box = bx(2, 0, 9, 1, (int)lo, (int)hi, 1);
    }
    if (!build_and_check(rows, 4, cols, 4, &plan))
        return;
    /* one block (row block s, column block t) from each source */
    EXPECT(plan.ncopies == 16);
    for (int c = 0; c < plan.ncopies; c++) {
        dg_box want;
        const dg_plan_copy *cp = &plan.copies[c];
        seen[cp->src][cp->dst]++;
        dg_box_intersect(&rows[cp->src].box, &cols[cp->dst].box, &want);
        EXPECT(dg_box_equal(&cp->box, &want));
    }
    for (int s = 0; s < 4; s++)
        for (int t = 0; t < 4; t++)
            EXPECT(seen[s][t] == 1);
    /* the local block comes first in each destination's group */
    for (int c = 0; c < plan.ncopies; c++)
        if (c == 0 || plan.copies[c].dst != plan.copies[c - 1].dst)
            EXPECT(plan.copies[c].src == plan.copies[c].dst);
    dg_plan_free(&plan);
}

static void test_plan_replicated(void)
{
    dg_plan_chunk rep[4], rows[4], host[4];
    dg_plan plan;
    int used[4] = {0};

    for (int i = 0; i < 4; i++) {
        int64_t lo, hi;
        rep[i].device = i;
        rep[i].box = bx(2, 0, 8, 1, 0, 5, 1);
        block(8, 4, i, &lo, &hi);
        rows[i].device = i;
        rows[i].box = bx(2, (int)lo, (int)hi, 1, 0, 5, 1);
        host[i].device = HOST;
        host[i].box = rows[i].box;
    }
    /* replica -> rows: every block is already in place */
    if (build_and_check(rep, 4, rows, 4, &plan)) {
        EXPECT(plan.ncopies == 4);
        for (int c = 0; c < plan.ncopies; c++)
            EXPECT(plan.copies[c].src == plan.copies[c].dst);
        dg_plan_free(&plan);
    }
    /* replica -> host blocks: spread over the four devices */
    if (build_and_check(rep, 4, host, 4, &plan)) {
        EXPECT(plan.ncopies == 4);
        for (int c = 0; c < plan.ncopies; c++)
            used[rep[plan.copies[c].src].device]++;
        for (int d = 0; d < 4; d++)
            EXPECT(used[d] == 1);
        dg_plan_free(&plan);
    }
    /* overlapping sources with halos, to a shifted split */
    {
        dg_plan_chunk halo[3], shifted[3];
        for (int i = 0; i < 3; i++) {
            halo[i].device = i;
            halo[i].box = bx(1, i * 4 - (i > 0), i * 4 + 4 + (i < 2), 1);
            shifted[i].device = 2 - i;
            shifted[i].box = bx(1, i * 4 + (i > 0), i * 4 + 5 - (i == 2), 1);
        }
        if (build_and_check(halo, 3, shifted, 3, &plan))
            dg_plan_free(&plan);
    }
}

static void test_plan_strided_dst(void)
{
    dg_plan_chunk rows[3], dst[2];
    dg_plan plan;

    for (int i = 0; i < 3; i++) {
        rows[i].device = i;
        rows[i].box = bx(2, i * 3, i * 3 + 3, 1, 0, 8, 1);
    }
    dst[0].device = 1;
    dst[0].box = bx(2, 0, 9, 3, 0, 8, 2);   /* rows 0 3 6, even columns */
    dst[1].device = 2;
    dst[1].box = bx(2, 1, 9, 2, 1, 8, 3);   /* rows 1 3 5 7, columns 1 4 7 */
    if (build_and_check(rows, 3, dst, 2, &plan)) {
        EXPECT(plan.ncopies == 6); /* one row group per source and destination */
        dg_plan_free(&plan);
    }
    /* strided sources (interleaved rows) to a contiguous block */
    for (int i = 0; i < 3; i++) {
        rows[i].device = i;
        rows[i].box = bx(2, i, 9, 3, 0, 8, 1);
    }
    dst[0].device = 0;
    dst[0].box = bx(2, 2, 8, 1, 3, 8, 1);
    if (build_and_check(rows, 3, dst, 1, &plan)) {
        EXPECT(plan.ncopies == 3);
        dg_plan_free(&plan);
    }
}

static void test_plan_uncovered(void)
{
    dg_plan_chunk src[3], dst[1];
    dg_plan plan = {7, 7, NULL};
    dg_error err = DG_ERROR_INIT;
    dg_box whole;
    int64_t shape[2] = {6, 8};

    src[0].device = 0;
    src[0].box = bx(2, 0, 3, 1, 0, 8, 1);
    src[1].device = 1;
    src[1].box = bx(2, 3, 6, 1, 0, 5, 1);
    src[2].device = 1;
    src[2].box = bx(2, 3, 6, 1, 6, 8, 1); /* column 5 of rows 3..5 missing */
    dst[0].device = 2;
    dg_box_full(&whole, 2, shape);
    dst[0].box = whole;
    EXPECT(dg_plan_build(src, 3, dst, 1, &plan, &err) == DG_ERR_VALUE);
    EXPECT(err.code == DG_ERR_VALUE && strstr(err.msg, "(3, 5)") != NULL);
    EXPECT(strstr(err.msg, "on no device") != NULL);
    EXPECT(plan.copies == NULL && plan.ncopies == 0);
    dg_error_clear(&err);
    EXPECT(dg_plan_check_cover(src, 3, &whole, &err) == DG_ERR_VALUE);
    EXPECT(strcmp(err.msg, "index map leaves element (3, 5) on no device: "
                           "every element must be held by at least one "
                           "chunk") == 0);
    dg_error_clear(&err);
    src[2].box = bx(2, 3, 6, 1, 5, 8, 1);
    EXPECT(dg_plan_check_cover(src, 3, &whole, &err) == DG_OK);
    EXPECT(err.code == DG_OK);
    /* 1-d names a one-tuple; an empty layout misses index 0 */
    {
        int64_t n = 9;
        dg_box w1;
        dg_plan_chunk c1 = {0, bx(1, 0, 9, 2)};
        dg_box_full(&w1, 1, &n);
        EXPECT(dg_plan_check_cover(&c1, 1, &w1, &err) == DG_ERR_VALUE);
        EXPECT(strstr(err.msg, "element (1,) on") != NULL);
        dg_error_clear(&err);
        EXPECT(dg_plan_check_cover(NULL, 0, &w1, &err) == DG_ERR_VALUE);
        EXPECT(strstr(err.msg, "element (0,) on") != NULL);
        dg_error_clear(&err);
        n = 0;
        dg_box_full(&w1, 1, &n);
        EXPECT(dg_plan_check_cover(NULL, 0, &w1, &err) == DG_OK);
    }
    /* 0-d: one element, named () */
    {
        dg_box w0;
        dg_plan_chunk c0;
        dg_box_full(&w0, 0, NULL);
        EXPECT(dg_plan_check_cover(NULL, 0, &w0, &err) == DG_ERR_VALUE);
        EXPECT(strstr(err.msg, "element () on") != NULL);
        dg_error_clear(&err);
        c0.device = 3;
        c0.box = w0;
        EXPECT(dg_plan_check_cover(&c0, 1, &w0, &err) == DG_OK);
        dst[0].device = HOST;
        dst[0].box = w0;
        if (build_and_check(&c0, 1, dst, 1, &plan)) {
            EXPECT(plan.ncopies == 1 && plan.copies[0].box.ndim == 0);
            dg_plan_free(&plan);
        }
    }
}

static void test_plan_host(void)
{
    dg_plan_chunk rows[4], host[1];
    dg_plan plan;
    int64_t shape[3] = {5, 3, 4};

    for (int i = 0; i < 4; i++) {
        int64_t lo, hi;
        block(5, 4, i, &lo, &hi);
        rows[i].device = i;
        rows[i].box = bx(3, (int)lo, (int)hi, 1, 0, 3, 1, 0, 4, 1);
    }
    host[0].device = HOST;
    dg_box_full(&host[0].box, 3, shape);
    if (build_and_check(rows, 4, host, 1, &plan)) {
        EXPECT(plan.ncopies == 4);
        for (int c = 0; c < plan.ncopies; c++) {
            EXPECT(rows[plan.copies[c].src].device != HOST);
            EXPECT(dg_box_equal(&plan.copies[c].box,
                                &rows[plan.copies[c].src].box));
        }
        dg_plan_free(&plan);
    }
    /* host to devices (scatter): the host source is remote to all */
    host[0].device = HOST;
    if (build_and_check(host, 1, rows, 4, &plan)) {
        EXPECT(plan.ncopies == 4);
        dg_plan_free(&plan);
    }
    /* nothing to plan */
    EXPECT(dg_plan_build(rows, 4, NULL, 0, &plan, NULL) == DG_OK);
    EXPECT(plan.ncopies == 0);
    dg_plan_free(&plan);
}

/* ---- planner: random layouts ------------------------------------------ */

#define MAXCH 24

/* Appends to c (*n chunks) a random layout of `shape`: block splits along
 * one or two axes, interleaved strided rows, replicas, or random boxes,
 * on random devices in [0, ndev) (or the host, when host_ok). */
static void random_layout(int ndim, const int64_t *shape, int ndev,
                          int host_ok, dg_plan_chunk *c, int *n)
{
    dg_box whole;
    int kind = (int)rnd_in(0, 5);

    dg_box_full(&whole, ndim, shape);
#define DEV() (host_ok && rnd() % 5 == 0 ? HOST : (int)rnd_in(0, ndev - 1))
    if (ndim == 0)
        kind = 3;
    if (kind == 0 || kind == 1) { /* uneven blocks along one or two axes */
        int ax0 = (int)rnd_in(0, ndim - 1), ax1 = (int)rnd_in(0, ndim - 1);
        int k0 = (int)rnd_in(1, 4), k1 = kind == 1 ? (int)rnd_in(1, 3) : 1;
        int64_t cut0[6], cut1[5];
        cut0[0] = 0;
        cut0[k0] = shape[ax0];
        for (int i = 1; i < k0; i++)
            cut0[i] = rnd_in(cut0[i - 1], shape[ax0]);
        cut1[0] = 0;
        cut1[k1] = shape[ax1];
        for (int i = 1; i < k1; i++)
            cut1[i] = rnd_in(cut1[i - 1], shape[ax1]);
        if (ax1 == ax0)
            k1 = 1;
        for (int i = 0; i < k0; i++)
            for (int j = 0; j < k1 && *n < MAXCH; j++) {
                dg_box b = whole;
                b.r[ax0] = dg_range_make(cut0[i], cut0[i + 1], 1);
                if (k1 > 1)
                    b.r[ax1] = dg_range_make(cut1[j], cut1[j + 1], 1);
                c[*n].device = DEV();
                c[*n].box = b;
                (*n)++;
            }
    } else if (kind == 2) { /* interleaved: start i, step k along an axis */
        int ax = (int)rnd_in(0, ndim - 1), k = (int)rnd_in(1, 4);
        for (int i = 0; i < k && *n < MAXCH; i++) {
            dg_box b = whole;
            b.r[ax] = dg_range_make(i, shape[ax], k);
            c[*n].device = i % ndev;
            c[*n].box = b;
            (*n)++;
        }
    } else if (kind == 3) { /* replicas */
        int k = (int)rnd_in(1, ndev);
        for (int i = 0; i < k && *n < MAXCH; i++) {
            c[*n].device = (int)rnd_in(0, ndev - 1);
            c[*n].box = whole;
            (*n)++;
        }
    } else { /* random strided boxes, overlapping, maybe not covering */
        int k = (int)rnd_in(1, 6);
        for (int i = 0; i < k && *n < MAXCH; i++) {
            dg_box b = whole;
            for (int a = 0; a < ndim; a++) {
                int64_t s = rnd_in(0, shape[a]), e = rnd_in(s, shape[a]);
                if (rnd() % 3 == 0)
                    s = 0, e = shape[a];
                b.r[a] = dg_range_make(s, e, rnd() % 3 ? 1 : rnd_in(2, 3));
            }
            c[*n].device = DEV();
            c[*n].box = b;
            (*n)++;
        }
    }
#undef DEV
}

static void test_plan_random(void)
{
    int built = 0, refused = 0;

    for (int t = 0; t < 4000; t++) {
        dg_plan_chunk src[MAXCH], dst[MAXCH];
        int nsrc = 0, ndst = 0, ndim = (int)rnd_in(0, 3),
            ndev = (int)rnd_in(1, 4), fail_before = g_fail;
        int64_t shape[3];

        for (int a = 0; a < ndim; a++)
            shape[a] = rnd() % 16 == 0 ? 0 : rnd_in(1, 9);
        random_layout(ndim, shape, ndev, 0, src, &nsrc);
        if (rnd() % 2) /* extra overlapping chunks */
            random_layout(ndim, shape, ndev, 0, src, &nsrc);
        if (rnd() % 6 == 0 && nsrc > 1) { /* drop one: maybe a hole */
            int64_t drop = rnd_in(0, nsrc - 1);
            nsrc--;
            src[drop] = src[nsrc];
        }
        random_layout(ndim, shape, ndev, 1, dst, &ndst);
        if (rnd() % 3 == 0)
            random_layout(ndim, shape, ndev, 1, dst, &ndst);
        count_case(src, nsrc, dst, ndst, &built, &refused);
        if (g_fail != fail_before) {
            fprintf(stderr, "  random case %d: ndim %d, %d sources, "
                            "%d destinations\n", t, ndim, nsrc, ndst);
            break;
        }
        /* the cover check agrees with the planner's view of holes */
        check_cover_agrees(src, nsrc, ndim, shape);
    }
    /* both outcomes must have been exercised for the test to mean much */
    EXPECT(built > 1000 && refused > 100);
}

/* ---- the box index ------------------------------------------------------ */

/* dg_box_index against brute force: a query returns every box that meets
 * the query box (and only boxes whose range on the axis meets its range),
 * each once, in order of start. */
static void test_box_index(void)
{
    static dg_box boxes[300];
    const dg_box *ptr[300];
    dg_box_index x;
    int *ids = NULL, nids = 0, cap = 0;

    memset(&x, 0, sizeof x);
    for (int t = 0; t < 300; t++) {
        int ndim = (int)rnd_in(0, 3), n = (int)rnd_in(0, 300), ax;
        for (int i = 0; i < n; i++) {
            boxes[i] = random_box(ndim, 40, 3);
            ptr[i] = &boxes[i];
        }
        ax = dg_box_index_axis(ptr, n);
        EXPECT(ax >= 0 && (ndim == 0 || ax < ndim));
        EXPECT(dg_box_index_build(&x, ptr, n, ax, NULL) == DG_OK);
        for (int q = 0; q < 20; q++) {
            dg_box b = random_box(ndim, 40, 3), tmp;
            nids = 0;
            EXPECT(dg_box_index_query(&x, &b, &ids, &nids, &cap, NULL) == DG_OK);
            for (int i = 0; i < n; i++) {
                int found = 0;
                for (int k = 0; k < nids; k++)
                    found += ids[k] == i;
                if (dg_box_intersect(&b, &boxes[i], &tmp) && found != 1)
                    failf("box %d meets the query but was found %d times", i, found);
                if (found > 1)
                    failf("box %d found %d times", i, found);
            }
            for (int k = 0; k < nids; k++) {
                const dg_box *c = &boxes[ids[k]];
                if (ndim > 0 &&
                    (c->r[ax].stop <= b.r[ax].start || c->r[ax].start >= b.r[ax].stop))
                    failf("box %d found though its range misses the query's", ids[k]);
                if (k > 0 && ndim > 0 && boxes[ids[k - 1]].r[ax].start > c->r[ax].start)
                    failf("found boxes not in order of start");
            }
        }
    }
    dg_box_index_free(&x);
    free(ids);
}

/* ---- planner: many chunks ---------------------------------------------- */

#define MANY 700

/* Appends to c (*n chunks) blocks of `b` rows of axis `ax` (the other axes
 * whole, or cut in blocks of b1 along axis ax1 when b1 > 0), dealt round
 * robin over ndev devices starting at device `first`: a block-cyclic layout
 * of many chunks. */
static void cyclic_layout(int ndim, const int64_t *shape, int ax, int64_t b, int ax1,
                          int64_t b1, int ndev, int first, dg_plan_chunk *c, int *n)
{
    dg_box whole;
    int k = 0;
    dg_box_full(&whole, ndim, shape);
    for (int64_t i = 0; i < shape[ax]; i += b) {
        for (int64_t j = 0; j < (b1 > 0 ? shape[ax1] : 1); j += b1 > 0 ? b1 : 1) {
            dg_box x = whole;
            if (*n >= MANY)
                return;
            x.r[ax] = dg_range_make(i, i + b < shape[ax] ? i + b : shape[ax], 1);
            if (b1 > 0)
                x.r[ax1] = dg_range_make(j, j + b1 < shape[ax1] ? j + b1 : shape[ax1], 1);
            c[*n].device = (first + k++) % ndev;
            c[*n].box = x;
            (*n)++;
        }
    }
}

/* Layouts of hundreds of chunks (the planner's index finds the few sources
 * each destination meets, and a share meets few earlier ones): block-cyclic
 * rows and 2-d blocks to shifted blocks, to the host and to other grids,
 * with extra overlapping chunks and holes; each plan checked element by
 * element, and each cover check against brute force. */
static void test_plan_many(void)
{
    static dg_plan_chunk src[MANY + 8], dst[MANY + 8];
    int built = 0, refused = 0;

    for (int t = 0; t < 40; t++) {
        int ndim = (int)rnd_in(1, 3), nsrc = 0, ndst = 0, ndev = (int)rnd_in(1, 4);
        int fail_before = g_fail;
        int64_t shape[3];

        for (int a = 0; a < ndim; a++)
            shape[a] = a == 0 ? rnd_in(40, 300) : rnd_in(1, 6);
        if (ndim >= 2 && rnd() % 2) /* 2-d blocks */
            cyclic_layout(ndim, shape, 0, rnd_in(1, 6), 1, rnd_in(1, 2), ndev,
                          (int)rnd_in(0, 3), src, &nsrc);
        else
            cyclic_layout(ndim, shape, 0, rnd_in(1, 3), 0, 0, ndev, (int)rnd_in(0, 3), src,
                          &nsrc);
        for (int e = (int)rnd_in(0, 4); e > 0; e--) { /* overlapping extras */
            dg_box x;
            dg_box_full(&x, ndim, shape);
            x.r[0] = dg_range_make(rnd_in(0, shape[0] / 2), shape[0], rnd_in(1, 5));
            src[nsrc].device = (int)rnd_in(0, ndev - 1);
            src[nsrc].box = x;
            nsrc++;
        }
        if (rnd() % 4 == 0) { /* a hole */
            int64_t drop = rnd_in(0, nsrc - 1);
            nsrc--;
            src[drop] = src[nsrc];
        }
        switch (rnd() % 3) {
        case 0: /* shifted blocks */
            cyclic_layout(ndim, shape, 0, rnd_in(2, 7), 0, 0, ndev, (int)rnd_in(0, 3), dst,
                          &ndst);
            break;
        case 1: /* the host */
            dg_box_full(&dst[0].box, ndim, shape);
            dst[0].device = HOST;
            ndst = 1;
            break;
        default: /* a few big blocks */
            random_layout(ndim, shape, ndev, 1, dst, &ndst);
        }
        count_case(src, nsrc, dst, ndst, &built, &refused);
        check_cover_agrees(src, nsrc, ndim, shape);
        if (g_fail != fail_before) {
            fprintf(stderr, "  many-chunk case %d: ndim %d, %d sources, %d destinations\n", t,
                    ndim, nsrc, ndst);
            break;
        }
    }
    EXPECT(built > 10 && refused > 0);
}

/* ---- main --------------------------------------------------------------- */

static const test_case g_tests[] = {
    {"range_canon", test_range_canon},
    {"box_basics", test_box_basics},
    {"intersect_steps", test_intersect_steps},
    {"subtract", test_subtract},
    {"box_random", test_box_random},
    {"status", test_status},
    {"plan_identity", test_plan_identity},
    {"plan_rows_to_cols", test_plan_rows_to_cols},
    {"plan_replicated", test_plan_replicated},
    {"plan_strided_dst", test_plan_strided_dst},
    {"plan_uncovered", test_plan_uncovered},
    {"plan_host", test_plan_host},
    {"plan_random", test_plan_random},
    {"box_index", test_box_index},
    {"plan_many", test_plan_many},
};

int main(int argc, char **argv)
{
    return run_tests(g_tests, sizeof g_tests / sizeof g_tests[0], argc, argv);
}
