/* Layouts: the default one, the one that keeps given axes whole, the check
 * every layout passes, and the layout an index map names (CuPy's rules, their
 * one statement in dgarray). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dg_layout.h"

dg_status dg_layout_default(int ndevices, int ndim, const int64_t *shape,
                            size_t itemsize, size_t min_split_bytes,
                            dg_plan_chunk **out, int *n, dg_error *err)
{
    int64_t size = 1;
    int ax, k, i;
    dg_plan_chunk *l;

    for (ax = 0; ax < ndim; ax++)
        size *= shape[ax];
    k = 1;
    if (ndim > 0 && size > 0 && (size_t)size * itemsize >= min_split_bytes)
        k = (int)(shape[0] < ndevices ? shape[0] : ndevices);
    if (k < 1)
        k = 1;
    l = (dg_plan_chunk *)calloc((size_t)k, sizeof(dg_plan_chunk));
    if (!l)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i < k; i++) {
        l[i].device = i;
        dg_box_full(&l[i].box, ndim, shape);
        if (ndim > 0 && k > 1)
            l[i].box.r[0] = dg_range_make(shape[0] * i / k, shape[0] * (i + 1) / k, 1);
    }
    *out = l;
    *n = k;
    return DG_OK;
}

dg_status dg_layout_axes_whole(int ndevices, int ndim, const int64_t *shape, const int *want,
                               int nwant, dg_plan_chunk **out, int *n, int *nkept,
                               dg_error *err)
{
    dg_plan_chunk *l;
    int keep, split = -1, ax, j, nd = ndevices, i;
    for (keep = nwant; keep >= 1 && split < 0; keep--) {
        for (ax = 0; ax < ndim; ax++) {
            int in = 0;
            for (j = 0; j < keep; j++)
                in |= want[j] == ax;
            if (!in && shape[ax] >= 2 && (split < 0 || shape[ax] > shape[split]))
                split = ax;
        }
        if (split >= 0)
            break;
    }
    if (split < 0) {
        nd = 1;
        keep = nwant;
    } else if (shape[split] < nd) {
        nd = (int)shape[split];
    }
    l = (dg_plan_chunk *)calloc((size_t)nd, sizeof(*l));
    if (!l)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i < nd; i++) {
        l[i].device = i;
        dg_box_full(&l[i].box, ndim, shape);
        if (nd > 1)
            l[i].box.r[split] = dg_range_make(shape[split] * i / nd, shape[split] * (i + 1) / nd,
                                              1);
    }
    *out = l;
    *n = nd;
    if (nkept)
        *nkept = keep;
    return DG_OK;
}

/* ---- the checks, each with its one message -------------------------------- */

/* ValueError unless 0 <= ndim <= DG_MAXDIM and no size is negative. */
static dg_status check_shape(int ndim, const int64_t *shape, dg_error *err)
{
    int ax;
    if (ndim < 0 || ndim > DG_MAXDIM)
        return dg_error_set(err, DG_ERR_VALUE, -1,
                            "dgarray supports at most %d dimensions, not %d", DG_MAXDIM, ndim);
    for (ax = 0; ax < ndim; ax++)
        if (shape[ax] < 0)
            return dg_error_set(err, DG_ERR_VALUE, -1, "negative dimensions are not allowed");
    return DG_OK;
}

/* ValueError for a layout of no chunk. */
static dg_status check_some(int n, dg_error *err)
{
    if (n > 0)
        return DG_OK;
    return dg_error_set(err, DG_ERR_VALUE, -1,
                        "the index map names no chunk: give at least one device a key "
                        "(every element must be held by some device)");
}

/* ValueError unless device `dev` exists. */
static dg_status check_device(int64_t dev, int ndevices, dg_error *err)
{
    if (dev >= 0 && dev < ndevices)
        return DG_OK;
    return dg_error_set(err, DG_ERR_VALUE, -1,
                        "device %lld does not exist: this backend has devices 0 to %d",
                        (long long)dev, ndevices - 1);
}

/* Whether the n chunks (borrowed; their boxes inside *whole, as the callers
 * check first) surely hold every element of *whole, seen without the
 * planner's piece lists: one chunk holds all of it, or chunks that do not
 * overlap (found in n log n, dg_boxes_disjoint) hold as many elements as it
 * has (so every one).  0: not seen so (or no memory to look); the planner's
 * walk, dg_plan_check_cover, decides.  Every new array's layout is checked,
 * and these are the layouts the core makes and the block-cyclic ones. */
static int surely_covered(const dg_box *whole, const dg_plan_chunk *layout, int n)
{
    const int64_t size = dg_box_size(whole);
    int64_t held = 0;
    const dg_box **boxes;
    dg_error err = DG_ERROR_INIT;
    int i, disjoint = 0;
    for (i = 0; i < n; i++)
        if (dg_box_contains(&layout[i].box, whole))
            return 1;
    for (i = 0; i < n && held <= size; i++)
        held += dg_box_size(&layout[i].box); /* each at most size: no overflow */
    if (held != size)
        return 0;
    boxes = (const dg_box **)malloc((size_t)(n > 0 ? n : 1) * sizeof *boxes);
    if (!boxes)
        return 0;
    for (i = 0; i < n; i++)
        boxes[i] = &layout[i].box;
    if (dg_boxes_disjoint(boxes, n, &disjoint, &err) != DG_OK) {
        dg_error_clear(&err);
        disjoint = 0;
    }
    free(boxes);
    return disjoint;
}

/* ValueError unless every element of `shape` is held by some chunk (the
 * chunks' boxes inside the shape). */
static dg_status check_cover(int ndim, const int64_t *shape, const dg_plan_chunk *layout,
                             int n, dg_error *err)
{
    dg_box whole;
    dg_box_full(&whole, ndim, shape);
    if (dg_box_size(&whole) == 0 || surely_covered(&whole, layout, n))
        return DG_OK;
    return dg_plan_check_cover(layout, n, &whole, err);
}

dg_status dg_layout_validate(int ndevices, int ndim, const int64_t *shape,
                             const dg_plan_chunk *layout, int n, dg_error *err)
{
    int i, ax;

    DG_CHECK(check_shape(ndim, shape, err));
    DG_CHECK(check_some(n, err));
    for (i = 0; i < n; i++) {
        const dg_box *b = &layout[i].box;
        DG_CHECK(check_device(layout[i].device, ndevices, err));
        if (b->ndim != ndim)
            return dg_error_set(err, DG_ERR_INTERNAL, -1, "chunk box of %d axes for a %d-d array",
                                b->ndim, ndim);
        for (ax = 0; ax < ndim; ax++) {
            const dg_range *r = &b->r[ax];
            if (r->step < 1 || r->start < 0 || r->stop > shape[ax] ||
                (r->stop > r->start && r->start >= shape[ax]))
                return dg_error_set(err, DG_ERR_INDEX, -1,
                                    "chunk %d (%lld:%lld:%lld on axis %d) is not a positive-step "
                                    "range inside the axis of size %lld", i,
                                    (long long)r->start, (long long)r->stop,
                                    (long long)r->step, ax, (long long)shape[ax]);
        }
    }
    return check_cover(ndim, shape, layout, n, err);
}

/* ---- index maps ------------------------------------------------------------ */

/* "index_map[dev]" or "index_map[dev][item]": where a key was written. */
static void key_name(const dg_map_key *k, char *buf, size_t size)
{
    if (k->item < 0)
        snprintf(buf, size, "index_map[%lld]", (long long)k->device);
    else
        snprintf(buf, size, "index_map[%lld][%d]", (long long)k->device, k->item);
}

/* Python's slice.indices bound for a positive step: absent -> dflt, negative
 * counts from the end, then clamped to [0, n]. */
static int64_t slice_bound(int has, int64_t v, int64_t dflt, int64_t n)
{
    if (!has)
        return dflt;
    if (v < 0) {
        v += n;
        return v < 0 ? 0 : v;
    }
    return v > n ? n : v;
}

/* The range entry `e` (borrowed) of key k selects on axis ax of size n.
 * The key's name is written for an error alone (a map may have 10^5 keys). */
static dg_status entry_range(const dg_map_key *k, const dg_map_entry *e, int ax, int64_t n,
                             dg_range *out, dg_error *err)
{
    char where[64];
    int64_t start, stop;
    if (e->is_int) {
        int64_t j = e->start < 0 ? e->start + n : e->start;
        if (j < 0 || j >= n) {
            key_name(k, where, sizeof where);
            return dg_error_set(err, DG_ERR_INDEX, -1,
                                "%s: index %lld is out of bounds for axis %d with size %lld",
                                where, (long long)e->start, ax, (long long)n);
        }
        *out = dg_range_make(j, j + 1, 1);
        return DG_OK;
    }
    if (e->has_step && e->step <= 0) {
        key_name(k, where, sizeof where);
        return dg_error_set(err, DG_ERR_VALUE, -1,
                            "%s: slice step must be positive in an index map, got %lld on "
                            "axis %d (a chunk holds its elements in increasing order)",
                            where, (long long)e->step, ax);
    }
    start = slice_bound(e->has_start, e->start, 0, n);
    stop = slice_bound(e->has_stop, e->stop, n, n);
    if (start >= stop) {
        key_name(k, where, sizeof where);
        return dg_error_set(err, DG_ERR_VALUE, -1,
                            "%s: the index is empty on axis %d (size %lld): every chunk of an "
                            "index map must hold at least one element", where, ax,
                            (long long)n);
    }
    *out = dg_range_make(start, stop, e->has_step ? e->step : 1);
    return DG_OK;
}

dg_status dg_layout_of_index_map(int ndevices, int ndim, const int64_t *shape,
                                 const dg_map_key *keys, int n, dg_plan_chunk **out,
                                 dg_error *err)
{
    dg_plan_chunk *l;
    dg_status st = DG_OK;
    int i, ax;

    DG_CHECK(check_shape(ndim, shape, err));
    DG_CHECK(check_some(n, err));
    l = (dg_plan_chunk *)malloc((size_t)(n > 0 ? n : 1) * sizeof(dg_plan_chunk));
    if (!l)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i < n && st == DG_OK; i++) { /* each entry set whole (dg_box_full) */
        const dg_map_key *k = &keys[i];
        st = check_device(k->device, ndevices, err);
        if (st == DG_OK && k->nentries > ndim) {
            char where[64];
            key_name(k, where, sizeof where);
            st = dg_error_set(err, DG_ERR_INDEX, -1,
                              "%s: too many indices for array: array is %d-dimensional, but "
                              "%d were indexed", where, ndim, k->nentries);
        }
        l[i].device = (int)k->device;
        dg_box_full(&l[i].box, ndim, shape);
        for (ax = 0; ax < k->nentries && st == DG_OK; ax++)
            st = entry_range(k, &k->e[ax], ax, shape[ax], &l[i].box.r[ax], err);
    }
    if (st == DG_OK)
        st = check_cover(ndim, shape, l, n, err);
    if (st != DG_OK) {
        free(l);
        return st;
    }
    *out = l;
    return DG_OK;
}

/* qsort order of layout chunks: device, then dg_box_cmp. */
static int cmp_plan_chunk(const void *pa, const void *pb)
{
    const dg_plan_chunk *a = *(const dg_plan_chunk *const *)pa;
    const dg_plan_chunk *b = *(const dg_plan_chunk *const *)pb;
    if (a->device != b->device)
        return a->device < b->device ? -1 : 1;
    return dg_box_cmp(&a->box, &b->box);
}

dg_status dg_layout_same(const dg_plan_chunk *x, int nx, const dg_plan_chunk *y, int ny,
                         int *same, dg_error *err)
{
    const dg_plan_chunk **px, **py;
    int i;
    *same = 0;
    if (nx != ny)
        return DG_OK;
    px = malloc((size_t)(nx > 0 ? nx : 1) * sizeof *px);
    py = malloc((size_t)(ny > 0 ? ny : 1) * sizeof *py);
    if (!px || !py) {
        free(px);
        free(py);
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory comparing layouts");
    }
    for (i = 0; i < nx; i++) {
        px[i] = &x[i];
        py[i] = &y[i];
    }
    qsort(px, (size_t)nx, sizeof *px, cmp_plan_chunk);
    qsort(py, (size_t)ny, sizeof *py, cmp_plan_chunk);
    *same = 1;
    for (i = 0; i < nx && *same; i++)
        *same = px[i]->device == py[i]->device && dg_box_equal(&px[i]->box, &py[i]->box);
    free(px);
    free(py);
    return DG_OK;
}
