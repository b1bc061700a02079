/* Unit tests of layouts (dg_layout.c): the layout an index map names, by
 * CuPy's rules, the layout that keeps given axes whole, and the check every
 * layout passes, without Python or a GPU.
 *
 * Random keys (ints and slices with any bounds, absent or not, negative or
 * beyond the axis) are checked against brute force: the indices a key
 * selects are enumerated from the definition of Python's slicing (the
 * reference manual's "s[i:j:k]"), not from the code under test.  Every rule
 * that refuses a key is checked for its error kind and words.
 *
 * Usage: test_layout [seed]   (prints "N passed, M failed"; exit 1 on failure) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dg_box.h"
#include "dg_layout.h"
#include "dg_status.h"

#include "harness.h"

/* ---- helpers ---------------------------------------------------------- */

static dg_map_entry an_int(int64_t i)
{
    dg_map_entry e;
    memset(&e, 0, sizeof e);
    e.is_int = 1;
    e.start = i;
    return e;
}

/* A slice; INT64_MIN for a bound means absent. */
static dg_map_entry a_slice(int64_t start, int64_t stop, int64_t step)
{
    dg_map_entry e;
    memset(&e, 0, sizeof e);
    e.has_start = start != INT64_MIN;
    e.has_stop = stop != INT64_MIN;
    e.has_step = step != INT64_MIN;
    e.start = e.has_start ? start : 0;
    e.stop = e.has_stop ? stop : 0;
    e.step = e.has_step ? step : 0;
    return e;
}

#define NONE INT64_MIN

/* Whether entry e selects index x of an axis of size n, by the reference
 * manual's definition of s[i:j:k] for k > 0 (and s[i] for an int). */
static int selects(const dg_map_entry *e, int64_t n, int64_t x)
{
    int64_t i, j, k;
    if (e->is_int)
        return x == (e->start < 0 ? e->start + n : e->start);
    k = e->has_step ? e->step : 1;
    i = e->has_start ? e->start : 0;
    j = e->has_stop ? e->stop : n;
    if (i < 0)
        i = i + n < 0 ? 0 : i + n;
    if (j < 0)
        j = j + n < 0 ? 0 : j + n;
    if (i > n)
        i = n;
    if (j > n)
        j = n;
    for (int64_t y = i; y < j; y += k) /* items i + m*k with 0 <= m < (j-i)/k */
        if (y == x)
            return 1;
    return 0;
}

/* Runs dg_layout_of_index_map on one key per entry of `keys`; returns its
 * status, *l the layout on success (caller frees). */
static dg_status layout_of(int ndev, int ndim, const int64_t *shape, const dg_map_key *keys,
                           int n, dg_plan_chunk **l, dg_error *err)
{
    *l = NULL;
    return dg_layout_of_index_map(ndev, ndim, shape, keys, n, l, err);
}

static int has_words(const dg_error *err, const char *words)
{
    return strstr(err->msg, words) != NULL;
}

/* ---- tests ------------------------------------------------------------- */

/* Random keys of one or two entries on a 2-d shape, with a whole-array key
 * beside them (so coverage holds): each chunk holds exactly what the key
 * selects, or the key is refused for the reason brute force sees. */
static void test_random_keys_select_what_python_selects(void)
{
    for (int trial = 0; trial < 4000; trial++) {
        int64_t shape[2] = {rnd_in(1, 7), rnd_in(1, 7)};
        dg_map_key keys[2];
        dg_plan_chunk *l = NULL;
        dg_error err = DG_ERROR_INIT;
        int ok_expected = 1, nent = (int)rnd_in(0, 2), empty = 0;
        memset(keys, 0, sizeof keys);
        keys[0].device = rnd_in(0, 3);
        keys[0].item = 0;
        keys[0].nentries = nent;
        for (int ax = 0; ax < nent; ax++) {
            int64_t n = shape[ax];
            if (rnd() % 3 == 0) {
                int64_t i = rnd_in(-n - 2, n + 1);
                keys[0].e[ax] = an_int(i);
                if (i < -n || i >= n)
                    ok_expected = 0;
            } else {
                int64_t b[3];
                for (int q = 0; q < 2; q++)
                    b[q] = rnd() % 4 == 0 ? NONE : rnd_in(-2 * n, 2 * n);
                b[2] = rnd() % 3 == 0 ? NONE : rnd_in(-1, n + 1);
                keys[0].e[ax] = a_slice(b[0], b[1], b[2]);
                if (b[2] != NONE && b[2] <= 0) {
                    ok_expected = 0;
                    continue;
                }
                empty = 1;
                for (int64_t x = 0; x < n; x++)
                    if (selects(&keys[0].e[ax], n, x))
                        empty = 0;
                if (empty)
                    ok_expected = 0;
            }
        }
        keys[1].device = 0;
        keys[1].item = 1;
        keys[1].nentries = 0;
        if (layout_of(4, 2, shape, keys, 2, &l, &err) != DG_OK) {
            if (ok_expected)
                failf("trial %d: refused (%s)", trial, err.msg);
            else
                EXPECT(err.code == DG_ERR_VALUE || err.code == DG_ERR_INDEX);
            continue;
        }
        if (!ok_expected) {
            failf("trial %d: accepted a key brute force refuses", trial);
            free(l);
            continue;
        }
        EXPECT(l[0].device == keys[0].device && l[1].device == 0);
        for (int ax = 0; ax < 2; ax++) {
            dg_map_entry whole = a_slice(NONE, NONE, NONE);
            const dg_map_entry *e = ax < nent ? &keys[0].e[ax] : &whole;
            for (int64_t x = 0; x < shape[ax]; x++) {
                if (range_has(l[0].box.r[ax], x) != selects(e, shape[ax], x))
                    failf("trial %d: axis %d index %lld", trial, ax, (long long)x);
                EXPECT(range_has(l[1].box.r[ax], x));
            }
            EXPECT(l[0].box.r[ax].stop <= shape[ax]);
        }
        free(l);
    }
}

/* Each rule refuses with its error kind and says what is wrong. */
static void test_each_rule_has_its_error(void)
{
    const int64_t shape[2] = {4, 3};
    struct {
        dg_map_entry e;
        int nentries;
        int64_t device;
        dg_status code;
        const char *words;
    } cases[] = {
        {a_slice(NONE, NONE, -1), 1, 0, DG_ERR_VALUE, "step must be positive"},
        {a_slice(NONE, NONE, 0), 1, 0, DG_ERR_VALUE, "step must be positive"},
        {a_slice(3, 3, NONE), 1, 0, DG_ERR_VALUE, "empty on axis 0"},
        {an_int(0), 3, 0, DG_ERR_INDEX, "too many indices"},
        {an_int(4), 1, 0, DG_ERR_INDEX, "index 4 is out of bounds for axis 0 with size 4"},
        {an_int(-5), 1, 0, DG_ERR_INDEX, "index -5 is out of bounds"},
        {a_slice(NONE, NONE, NONE), 1, 4, DG_ERR_VALUE, "device 4 does not exist"},
        {a_slice(NONE, NONE, NONE), 1, -1, DG_ERR_VALUE, "device -1 does not exist"},
        {a_slice(0, 2, NONE), 1, 0, DG_ERR_VALUE, "leaves element (2, 0) on no device"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dg_map_key k;
        dg_plan_chunk *l = NULL;
        dg_error err = DG_ERROR_INIT;
        memset(&k, 0, sizeof k);
        k.device = cases[i].device;
        k.item = -1;
        k.nentries = cases[i].nentries;
        for (int ax = 0; ax < cases[i].nentries && ax < DG_MAXDIM; ax++)
            k.e[ax] = cases[i].e;
        if (layout_of(4, 2, shape, &k, 1, &l, &err) == DG_OK) {
            failf("case %zu accepted", i);
            free(l);
            continue;
        }
        if (err.code != cases[i].code || !has_words(&err, cases[i].words))
            failf("case %zu: code %d, message \"%s\"", i, (int)err.code, err.msg);
        EXPECT(l == NULL);
    }
    {
        dg_plan_chunk *l = NULL;
        dg_error err = DG_ERROR_INIT;
        EXPECT(layout_of(4, 2, shape, NULL, 0, &l, &err) == DG_ERR_VALUE);
        EXPECT(has_words(&err, "names no chunk"));
    }
}

/* The message names where the key was written: index_map[dev][item]. */
static void test_messages_name_the_key(void)
{
    const int64_t shape[1] = {5};
    dg_map_key k[2];
    dg_plan_chunk *l = NULL;
    dg_error err = DG_ERROR_INIT;
    memset(k, 0, sizeof k);
    k[0].device = 1;
    k[0].item = 0;
    k[0].nentries = 0;
    k[1].device = 1;
    k[1].item = 1;
    k[1].nentries = 1;
    k[1].e[0] = an_int(7);
    EXPECT(layout_of(2, 1, shape, k, 2, &l, &err) == DG_ERR_INDEX);
    EXPECT(has_words(&err, "index_map[1][1]: index 7"));
}

/* dg_layout_validate refuses what no array may have, with the same
 * messages for devices and coverage. */
static void test_validate_refuses_bad_layouts(void)
{
    const int64_t shape[1] = {6};
    dg_plan_chunk l[2];
    dg_error err = DG_ERROR_INIT;
    memset(l, 0, sizeof l);
    l[0].device = 0;
    l[0].box.ndim = 1;
    l[0].box.r[0] = dg_range_make(0, 6, 1);
    l[1] = l[0];
    EXPECT(dg_layout_validate(2, 1, shape, l, 2, &err) == DG_OK);
    l[1].device = 2;
    EXPECT(dg_layout_validate(2, 1, shape, l, 2, &err) == DG_ERR_VALUE);
    EXPECT(has_words(&err, "device 2 does not exist"));
    dg_error_clear(&err);
    l[1].device = 1;
    l[0].box.r[0] = dg_range_make(0, 3, 1);
    l[1].box.r[0] = dg_range_make(4, 7, 1);
    EXPECT(dg_layout_validate(2, 1, shape, l, 2, &err) == DG_ERR_INDEX);
    dg_error_clear(&err);
    l[1].box.r[0] = dg_range_make(4, 6, 1);
    EXPECT(dg_layout_validate(2, 1, shape, l, 2, &err) == DG_ERR_VALUE);
    EXPECT(has_words(&err, "leaves element (3,) on no device"));
    dg_error_clear(&err);
    EXPECT(dg_layout_validate(2, 1, shape, l, 0, &err) == DG_ERR_VALUE);
    EXPECT(has_words(&err, "names no chunk"));
}

/* Random layouts inside a shape (up to 6 chunks of up to 3 axes, strided,
 * overlapping or not, from the cut of a default-like split to any boxes):
 * dg_layout_validate accepts exactly those the planner's exact check
 * (dg_plan_check_cover) says cover the shape. */
static void test_validate_covers_as_the_planner_says(void)
{
    for (int trial = 0; trial < 6000; trial++) {
        int ndim = (int)rnd_in(1, 3), n = (int)rnd_in(1, 6);
        int64_t shape[3];
        dg_plan_chunk l[6];
        dg_box whole;
        dg_error e1 = DG_ERROR_INIT, e2 = DG_ERROR_INIT;
        memset(l, 0, sizeof l);
        for (int ax = 0; ax < ndim; ax++)
            shape[ax] = rnd_in(1, 6);
        for (int i = 0; i < n; i++) {
            l[i].device = (int)rnd_in(0, 3);
            l[i].box.ndim = ndim;
            for (int ax = 0; ax < ndim; ax++) {
                int64_t a = rnd_in(0, shape[ax] - 1), b = rnd_in(a + 1, shape[ax]);
                if (rnd() % 3 == 0) { /* a split of the axis among the chunks */
                    a = shape[ax] * i / n;
                    b = shape[ax] * (i + 1) / n;
                    if (b == a)
                        b = a + 1 <= shape[ax] ? a + 1 : a;
                    if (b == a)
                        a = b - 1;
                }
                l[i].box.r[ax] = dg_range_make(a, b, rnd() % 4 == 0 ? rnd_in(1, 3) : 1);
            }
        }
        dg_box_full(&whole, ndim, shape);
        {
            dg_status want = dg_plan_check_cover(l, n, &whole, &e1);
            dg_status got = dg_layout_validate(4, ndim, shape, l, n, &e2);
            if (got != want)
                failf("trial %d: validate %d, the planner's check %d", trial, (int)got,
                      (int)want);
            else if (got != DG_OK && strcmp(e1.msg, e2.msg) != 0)
                failf("trial %d: \"%s\" against \"%s\"", trial, e2.msg, e1.msg);
        }
    }
}

/* Random shapes (1 to 4 axes of 0 to 9 elements), device counts and axes
 * asked whole: dg_layout_axes_whole's layout passes the check every layout
 * passes, its chunks are disjoint (their sizes add up to the shape's), each
 * on its own device of 0..n-1, and hold the first *nkept asked axes whole;
 * *nkept is the most of them that leave an axis of 2 or more elements to
 * split (all where none ever does, then one chunk), found here by brute
 * force; the split axis is a longest such axis, in at most as many blocks
 * as it has elements. */
static void test_axes_whole(void)
{
    for (int trial = 0; trial < 4000; trial++) {
        const int ndim = (int)rnd_in(1, 4), ndev = (int)rnd_in(1, 8);
        const int nwant = (int)rnd_in(1, ndim < 3 ? ndim : 3);
        int64_t shape[4], size = 1, sum = 0, longest = -1;
        int want[3], n = 0, kept = 0, exp_keep = nwant, any = 0, split = -1;
        dg_plan_chunk *l = NULL;
        dg_error err = DG_ERROR_INIT;
        for (int ax = 0; ax < ndim; ax++) {
            shape[ax] = rnd_in(0, 9);
            size *= shape[ax];
        }
        for (int j = 0; j < nwant; j++) { /* distinct axes, any order */
            int ax, dup;
            do {
                ax = (int)rnd_in(0, ndim - 1);
                dup = 0;
                for (int q = 0; q < j; q++)
                    dup |= want[q] == ax;
            } while (dup);
            want[j] = ax;
        }
        for (int k = nwant; k >= 1 && !any; k--) {
            for (int ax = 0; ax < ndim; ax++) {
                int in = 0;
                for (int q = 0; q < k; q++)
                    in |= want[q] == ax;
                if (!in && shape[ax] >= 2) {
                    any = 1;
                    exp_keep = k;
                    if (shape[ax] > longest)
                        longest = shape[ax];
                }
            }
        }
        if (dg_layout_axes_whole(ndev, ndim, shape, want, nwant, &l, &n, &kept, &err) != DG_OK) {
            failf("trial %d: %s", trial, err.msg);
            continue;
        }
        EXPECT(dg_layout_validate(ndev, ndim, shape, l, n, &err) == DG_OK);
        EXPECT(kept == exp_keep);
        EXPECT(n >= 1 && n <= ndev && (any || n == 1));
        for (int i = 0; i < n; i++) {
            EXPECT(l[i].device == i);
            sum += dg_box_size(&l[i].box);
            for (int ax = 0; ax < ndim; ax++) {
                const dg_range r = l[i].box.r[ax];
                if (r.start != 0 || dg_range_len(r) != shape[ax]) {
                    EXPECT(split < 0 || split == ax);
                    split = ax;
                }
            }
        }
        EXPECT(sum == size);
        for (int q = 0; q < kept; q++)
            EXPECT(want[q] != split);
        if (split >= 0)
            EXPECT(shape[split] == longest && n <= shape[split]);
        free(l);
    }
}

static const test_case g_tests[] = {
    {"axes_whole", test_axes_whole},
    {"validate_covers_as_the_planner_says", test_validate_covers_as_the_planner_says},
    {"random_keys_select_what_python_selects", test_random_keys_select_what_python_selects},
    {"each_rule_has_its_error", test_each_rule_has_its_error},
    {"messages_name_the_key", test_messages_name_the_key},
    {"validate_refuses_bad_layouts", test_validate_refuses_bad_layouts},
};

int main(int argc, char **argv)
{
    return run_tests(g_tests, sizeof g_tests / sizeof g_tests[0], argc, argv);
}
