/* Unit tests of the view maps (dg_viewmap.c), without Python or a GPU.
 *
 * Every map is checked against brute force on small random cases: a chunk
 * (a random strided box of a random shape of up to 3 axes, its elements at
 * byte addresses given by random strides, negative ones included) is mapped
 * through a random key, permutation, broadcast or reshape, and every index
 * of the view is looked up both ways: the base index it stands for must be
 * in the chunk exactly when the view index is in the mapped box, at the
 * same address.
 *
 * Usage: test_viewmap [seed]   (prints "N passed, M failed") */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dg_box.h"
#include "dg_status.h"
#include "dg_viewmap.h"

#include "harness.h"

/* Address of index idx (inside s's box). */
static int64_t addr(const dg_strided *s, const int64_t *idx)
{
    int64_t a = s->offset;
    for (int i = 0; i < s->box.ndim; i++)
        a += (idx[i] - s->box.r[i].start) / s->box.r[i].step * s->strides[i];
    return a;
}

/* Steps idx through [0, shape) in C order; 0 when done. */
static int next_index(int ndim, const int64_t *shape, int64_t *idx)
{
    for (int i = ndim - 1; i >= 0; i--) {
        if (++idx[i] < shape[i])
            return 1;
        idx[i] = 0;
    }
    return 0;
}

static int64_t shape_size(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

/* A random shape of ndim axes of 1..maxn. */
static void rand_shape(int ndim, int64_t maxn, int64_t *shape)
{
    for (int i = 0; i < ndim; i++)
        shape[i] = rnd_in(1, maxn);
}

/* A random non-empty chunk of `shape`: a strided range per axis, with
 * random non-zero strides (dense in C order when `dense`). */
static dg_strided rand_chunk(int ndim, const int64_t *shape, int dense)
{
    dg_strided s;
    int64_t st = 4;
    memset(&s, 0, sizeof s);
    s.box.ndim = ndim;
    s.offset = rnd_in(0, 1000);
    for (int i = ndim - 1; i >= 0; i--) {
        int64_t a = rnd_in(0, shape[i] - 1), b = rnd_in(a + 1, shape[i]);
        int64_t step = dense ? 1 : rnd_in(1, 3);
        s.box.r[i] = dg_range_make(a, b, step);
        s.strides[i] = dense ? st : rnd_in(-40, 40);
        st *= dg_range_len(s.box.r[i]);
    }
    return s;
}

/* ---- basic keys ---------------------------------------------------------- */

static void test_key_random(void)
{
    int mapped = 0, missed = 0;
    for (int trial = 0; trial < 4000; trial++) {
        int ndim = (int)rnd_in(0, 3), vnd = 0, ax = 0;
        int64_t shape[DG_MAXDIM], vshape[DG_MAXDIM], idx[DG_MAXDIM];
        dg_key key;
        dg_strided c, v;
        dg_error err = DG_ERROR_INIT;
        int got;

        rand_shape(ndim, 7, shape);
        c = rand_chunk(ndim, shape, 0);
        memset(&key, 0, sizeof key);
        while (ax < ndim || (key.n < 5 && rnd() % 4 == 0)) {
            dg_key_entry *k = &key.e[key.n++];
            int what = ax < ndim ? (int)rnd_in(0, 4) : 2;
            if (what == 2) {
                k->kind = DG_KEY_NEW;
                continue;
            }
            if (what == 0) {
                k->kind = DG_KEY_INT;
                k->start = rnd_in(0, shape[ax] - 1);
            } else {
                int64_t step = rnd_in(1, 3) * (rnd() % 2 ? 1 : -1);
                int64_t first = rnd_in(0, shape[ax] - 1), len;
                len = step > 0 ? (shape[ax] - 1 - first) / step + 1 : first / -step + 1;
                k->kind = DG_KEY_SLICE;
                k->start = first;
                k->step = step;
                k->len = rnd_in(0, len);
            }
            ax++;
        }
        if (dg_key_check(&key, ndim, shape, &vnd, vshape, &err) != DG_OK) {
            failf("trial %d: key refused: %s", trial, err.msg);
            continue;
        }
        got = dg_key_map(&key, &c, &v);
        if (got && v.box.ndim != vnd) {
            failf("trial %d: view of %d axes, want %d", trial, v.box.ndim, vnd);
            continue;
        }
        for (int i = 0; i < vnd; i++)
            if (got && (v.box.r[i].step < 1 || v.box.r[i].stop > vshape[i]))
                failf("trial %d: mapped box leaves the view on axis %d", trial, i);
        if (shape_size(vnd, vshape) == 0) {
            EXPECT(!got);
            continue;
        }
        memset(idx, 0, sizeof idx);
        do {
            int64_t b[DG_MAXDIM];
            int e, bax = 0, vax = 0;
            for (e = 0; e < key.n; e++) {
                const dg_key_entry *k = &key.e[e];
                if (k->kind == DG_KEY_NEW) {
                    vax++;
                } else if (k->kind == DG_KEY_INT) {
                    b[bax++] = k->start;
                } else {
                    b[bax++] = k->start + k->step * idx[vax++];
                }
            }
            if (box_has(&c.box, b)) {
                if (!got || !box_has(&v.box, idx))
                    failf("trial %d: a view index of the chunk is not in the mapped box",
                          trial);
                else if (addr(&v, idx) != addr(&c, b))
                    failf("trial %d: address %lld, want %lld", trial,
                          (long long)addr(&v, idx), (long long)addr(&c, b));
                else
                    mapped++;
            } else if (got && box_has(&v.box, idx)) {
                failf("trial %d: the mapped box holds an index the chunk does not", trial);
            } else {
                missed++;
            }
        } while (next_index(vnd, vshape, idx));
    }
    if (!(mapped > 1000 && missed > 1000))
        failf("mapped %d, missed %d", mapped, missed);
}

static void test_key_check(void)
{
    int64_t shape[2] = {4, 5}, vs[DG_MAXDIM];
    int vnd;
    dg_key key;
    dg_error err = DG_ERROR_INIT;

    memset(&key, 0, sizeof key);
    key.n = 3;
    key.e[0] = (dg_key_entry){DG_KEY_INT, 3, 0, 0};
    key.e[1] = (dg_key_entry){DG_KEY_NEW, 0, 0, 0};
    key.e[2] = (dg_key_entry){DG_KEY_SLICE, 4, -2, 3};
    EXPECT(dg_key_check(&key, 2, shape, &vnd, vs, &err) == DG_OK);
    EXPECT(vnd == 2 && vs[0] == 1 && vs[1] == 3);
    key.e[2].len = 4; /* 4, 2, 0, -2 */
    EXPECT(dg_key_check(&key, 2, shape, &vnd, vs, &err) == DG_ERR_INDEX);
    dg_error_clear(&err);
    key.n = 1; /* one axis left unnamed */
    EXPECT(dg_key_check(&key, 2, shape, &vnd, vs, &err) == DG_ERR_INDEX);
    dg_error_clear(&err);
    key.n = 2;
    key.e[0].start = 4;
    EXPECT(dg_key_check(&key, 2, shape, &vnd, vs, &err) == DG_ERR_INDEX);
}

/* ---- permutations and broadcasts ------------------------------------------- */

static void test_transpose_broadcast(void)
{
    for (int trial = 0; trial < 2000; trial++) {
        int ndim = (int)rnd_in(1, 3), perm[DG_MAXDIM], bnd;
        int64_t shape[DG_MAXDIM], bshape[DG_MAXDIM], idx[DG_MAXDIM], b[DG_MAXDIM];
        dg_strided c, v;

        rand_shape(ndim, 5, shape);
        c = rand_chunk(ndim, shape, 0);
        for (int i = 0; i < ndim; i++)
            perm[i] = i;
        for (int i = ndim - 1; i > 0; i--) {
            int j = (int)rnd_in(0, i), t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        dg_transpose_map(perm, &c, &v);
        for (int i = 0; i < ndim; i++)
            bshape[i] = shape[perm[i]];
        memset(idx, 0, sizeof idx);
        do {
            for (int i = 0; i < ndim; i++)
                b[perm[i]] = idx[i];
            EXPECT(box_has(&v.box, idx) == box_has(&c.box, b));
            if (box_has(&c.box, b))
                EXPECT(addr(&v, idx) == addr(&c, b));
        } while (next_index(ndim, bshape, idx));

        /* broadcast: length-1 axes of the chunk's shape grow, new axes lead */
        for (int i = 0; i < ndim; i++)
            if (rnd() % 2) {
                shape[i] = 1;
                c.box.r[i] = dg_range_make(0, 1, 1);
            }
        bnd = ndim + (int)rnd_in(0, 2);
        for (int i = 0; i < bnd; i++) {
            int j = i - (bnd - ndim);
            bshape[i] = j >= 0 && shape[j] != 1 ? shape[j] : rnd_in(1, 4);
        }
        dg_broadcast_map(ndim, shape, bnd, bshape, &c, &v);
        memset(idx, 0, sizeof idx);
        do {
            for (int j = 0; j < ndim; j++)
                b[j] = shape[j] == 1 ? 0 : idx[j + bnd - ndim];
            EXPECT(box_has(&v.box, idx) == box_has(&c.box, b));
            if (box_has(&c.box, b))
                EXPECT(addr(&v, idx) == addr(&c, b));
        } while (next_index(bnd, bshape, idx));
    }
}

/* ---- reshapes ----------------------------------------------------------------- */

/* A random shape of `size` elements with up to maxnd axes (ones included). */
static int rand_factor_shape(int64_t size, int maxnd, int64_t *shape)
{
    int nd = 0;
    while (nd < maxnd - 1 && (size > 1 || rnd() % 4 == 0)) {
        int64_t d = rnd_in(1, size);
        if (size % d != 0)
            continue;
        shape[nd++] = d;
        size /= d;
    }
    shape[nd++] = size;
    return nd;
}

static void test_reshape_random(void)
{
    int mapped = 0, refused = 0;
    for (int trial = 0; trial < 6000; trial++) {
        int ndim, nnd, boxlike;
        int64_t size = rnd_in(1, 48), shape[DG_MAXDIM], nshape[DG_MAXDIM];
        int64_t idx[DG_MAXDIM], nidx[DG_MAXDIM], n0 = 0, want = 0;
        dg_strided c, v;
        int got;

        ndim = rand_factor_shape(size, 4, shape);
        nnd = rand_factor_shape(size, 4, nshape);
        c = rand_chunk(ndim, shape, rnd() % 3 != 0);
        if (rnd() % 4 == 0) /* reversed along the last axis */
            c.strides[ndim - 1] = -c.strides[ndim - 1];
        got = dg_reshape_map(ndim, shape, nnd, nshape, &c, &v);
        /* brute force: the chunk's flat indices, and whether they are a box */
        memset(idx, 0, sizeof idx);
        {
            int64_t lo[DG_MAXDIM], hi[DG_MAXDIM];
            for (int i = 0; i < nnd; i++) {
                lo[i] = INT64_MAX;
                hi[i] = -1;
            }
            do {
                int64_t f = 0;
                for (int i = 0; i < ndim; i++)
                    f = f * shape[i] + idx[i];
                if (!box_has(&c.box, idx))
                    continue;
                n0++;
                for (int i = nnd - 1; i >= 0; i--) {
                    nidx[i] = f % nshape[i];
                    f /= nshape[i];
                    if (nidx[i] < lo[i]) lo[i] = nidx[i];
                    if (nidx[i] > hi[i]) hi[i] = nidx[i];
                }
            } while (next_index(ndim, shape, idx));
            want = 1;
            for (int i = 0; i < nnd; i++)
                want *= hi[i] - lo[i] + 1;
            boxlike = want == n0;
        }
        if (!got) {
            refused++;
            continue;
        }
        mapped++;
        if (!boxlike) {
            failf("trial %d: mapped a chunk whose elements are not a box", trial);
            continue;
        }
        memset(idx, 0, sizeof idx);
        do {
            int64_t f = 0;
            if (!box_has(&c.box, idx))
                continue;
            for (int i = 0; i < ndim; i++)
                f = f * shape[i] + idx[i];
            for (int i = nnd - 1; i >= 0; i--) {
                nidx[i] = f % nshape[i];
                f /= nshape[i];
            }
            if (!box_has(&v.box, nidx))
                failf("trial %d: an element left the mapped box", trial);
            else if (addr(&v, nidx) != addr(&c, idx))
                failf("trial %d: address %lld, want %lld", trial, (long long)addr(&v, nidx),
                      (long long)addr(&c, idx));
        } while (next_index(ndim, shape, idx));
        if (dg_box_size(&v.box) != n0)
            failf("trial %d: mapped box of %lld elements, want %lld", trial,
                  (long long)dg_box_size(&v.box), (long long)n0);
    }
    EXPECT(mapped > 1000 && refused > 500);
}

/* The layouts that matter map: row blocks of a C-contiguous array to any
 * shape whose rows they align with, and back. */
static void test_reshape_rows(void)
{
    int64_t s2[2] = {6, 4}, s1[1] = {24}, s3[3] = {3, 2, 4};
    dg_strided c, v;
    memset(&c, 0, sizeof c);
    c.box.ndim = 2;
    c.box.r[0] = dg_range_make(2, 4, 1);
    c.box.r[1] = dg_range_make(0, 4, 1);
    c.offset = 8;
    c.strides[0] = 16;
    c.strides[1] = 4;
    EXPECT(dg_reshape_map(2, s2, 1, s1, &c, &v) == 1);
    EXPECT(v.box.r[0].start == 8 && v.box.r[0].stop == 16 && v.strides[0] == 4);
    EXPECT(dg_reshape_map(2, s2, 3, s3, &c, &v) == 1);
    EXPECT(v.box.r[0].start == 1 && v.box.r[0].stop == 2 && v.strides[2] == 4);
    c.box.r[0] = dg_range_make(1, 4, 1); /* rows 1..3 straddle two blocks of 2 */
    EXPECT(dg_reshape_map(2, s2, 3, s3, &c, &v) == 0);
    c.box.r[1] = dg_range_make(0, 2, 1); /* half rows: not consecutive */
    EXPECT(dg_reshape_map(2, s2, 1, s1, &c, &v) == 0);
}

static const test_case g_tests[] = {
    {"key_random", test_key_random},
    {"key_check", test_key_check},
    {"transpose_broadcast", test_transpose_broadcast},
    {"reshape_random", test_reshape_random},
    {"reshape_rows", test_reshape_rows},
};

int main(int argc, char **argv)
{
    return run_tests(g_tests, sizeof g_tests / sizeof g_tests[0], argc, argv);
}
