/* Views (see dg_view.h): arrays made of another array's chunks mapped by
 * dg_viewmap.c, sharing their buffers.
 *
 * Every kind of view is one walk over the base's chunks with a map function:
 * a chunk the map keeps becomes a chunk of the view on the same device, with
 * the same buffer (a new reference) at the mapped offset and strides; the
 * base's logical layout, when it has one, is mapped the same way.  A view of
 * no element keeps one empty chunk, so that every array has a chunk. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dg_array_impl.h"
#include "dg_view.h"

/* Maps chunk `in` into the view; 1 if it keeps any element. */
typedef int (*view_map_fn)(const void *ctx, const dg_strided *in, dg_strided *out);

/* Chunk c as the view maps see it. */
static dg_strided strided_of(const dg_chunk *c)
{
    dg_strided s;
    s.box = c->box;
    s.offset = c->offset;
    memcpy(s.strides, c->strides, sizeof(s.strides));
    return s;
}

/* The logical layout of the view r of a: a's logical boxes mapped by fn
 * (those it drops hold none of the view's elements), or, when `strict` and
 * fn cannot map some box (a reshape), none: r's chunks are then its layout. */
static dg_status view_logical(const dg_array *a, dg_array *r, view_map_fn fn, const void *ctx,
                              int strict, dg_error *err)
{
    int i, n = 0;
    dg_plan_chunk *l;
    if (!a->logical)
        return DG_OK;
    l = (dg_plan_chunk *)malloc((size_t)a->nlogical * sizeof(dg_plan_chunk));
    if (!l)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i < a->nlogical; i++) {
        dg_strided in, o;
        memset(&in, 0, sizeof in);
        in.box = a->logical[i].box;
        if (dg_box_size(&in.box) == 0)
            continue;
        if (!fn(ctx, &in, &o)) {
            if (strict) {
                free(l);
                return DG_OK;
            }
            continue;
        }
        if (dg_box_size(&o.box) == 0)
            continue;
        l[n].device = a->logical[i].device;
        l[n].box = o.box;
        n++;
    }
    if (n == 0) {
        free(l);
        return DG_OK;
    }
    r->logical = l;
    r->nlogical = n;
    return DG_OK;
}

/* The view of a of shape (ndim, shape) whose chunks are a's mapped by fn
 * (strict: fn maps every chunk that holds an element of the view, as a
 * reshape's does once reshape_maps said so).  New reference in *out. */
static dg_status view_build(dg_array *a, int ndim, const int64_t *shape, view_map_fn fn,
                            const void *ctx, int strict, int readonly, dg_array **out,
                            dg_error *err)
{
    dg_array *r = NULL;
    dg_status st;
    int i;

    DG_CHECK(dg_array_alloc_shell(a->be, a->dtype, ndim, shape, a->nchunks > 0 ? a->nchunks : 1,
                                  a->mode, &r, err));
    r->has_mode_fpe = a->has_mode_fpe;
    r->mode_fpe = a->mode_fpe;
    for (i = 0; i < a->nchunks; i++) {
        const dg_chunk *c = &a->chunks[i];
        dg_chunk *d = &r->chunks[r->nchunks];
        dg_strided in = strided_of(c), o;
        if (dg_box_size(&c->box) == 0)
            continue;
        if (!fn(ctx, &in, &o) || dg_box_size(&o.box) == 0)
            continue;
        memset(d, 0, sizeof(*d));
        d->device = c->device;
        d->box = o.box;
        d->offset = o.offset;
        memcpy(d->strides, o.strides, sizeof(d->strides));
        d->buf = c->buf;
        d->buf->refcnt++;
        r->nchunks++;
    }
    if (r->nchunks == 0) {
        dg_chunk *d = &r->chunks[0];
        if (dg_shape_size(ndim, shape) != 0 || a->nchunks == 0) {
            dg_array_decref(r);
            return dg_error_set(err, DG_ERR_INTERNAL, -1, "a view that no chunk holds");
        }
        memset(d, 0, sizeof(*d));
        d->device = a->chunks[0].device;
        d->box.ndim = ndim;
        for (i = 0; i < ndim; i++)
            d->box.r[i] = dg_range_make(0, 0, 1);
        d->buf = a->chunks[0].buf;
        d->buf->refcnt++;
        r->nchunks = 1;
    }
    r->readonly = a->readonly || readonly;
    st = view_logical(a, r, fn, ctx, strict, err);
    if (st != DG_OK) {
        dg_array_decref(r);
        return st;
    }
    *out = r;
    return DG_OK;
}

/* ---- keys, permutations, broadcasts ----------------------------------------- */

static int key_fn(const void *ctx, const dg_strided *in, dg_strided *out)
{
    return dg_key_map((const dg_key *)ctx, in, out);
}

dg_status dg_array_view(dg_array *a, const dg_key *key, dg_array **out, dg_error *err)
{
    int64_t shape[DG_MAXDIM];
    int ndim;
    DG_CHECK(dg_key_check(key, a->ndim, a->shape, &ndim, shape, err));
    return view_build(a, ndim, shape, key_fn, key, 0, 0, out, err);
}

static int transpose_fn(const void *ctx, const dg_strided *in, dg_strided *out)
{
    dg_transpose_map((const int *)ctx, in, out);
    return 1;
}

dg_status dg_array_transpose(dg_array *a, const int *perm, dg_array **out, dg_error *err)
{
    int64_t shape[DG_MAXDIM];
    char seen[DG_MAXDIM];
    int i;
    memset(seen, 0, sizeof seen);
    for (i = 0; i < a->ndim; i++) {
        if (perm[i] < 0 || perm[i] >= a->ndim || seen[perm[i]])
            return dg_error_set(err, DG_ERR_VALUE, -1, "axes don't match array");
        seen[perm[i]] = 1;
        shape[i] = a->shape[perm[i]];
    }
    return view_build(a, a->ndim, shape, transpose_fn, perm, 1, 0, out, err);
}

/* What a broadcast or a reshape maps between. */
typedef struct shapes {
    int ndim, out_ndim;
    const int64_t *shape, *out_shape;
} shapes;

static int broadcast_fn(const void *ctx, const dg_strided *in, dg_strided *out)
{
    const shapes *s = (const shapes *)ctx;
    dg_broadcast_map(s->ndim, s->shape, s->out_ndim, s->out_shape, in, out);
    return 1;
}

/* "(2, 3)" into buf. */
static void shape_str(int ndim, const int64_t *shape, char *buf, size_t size)
{
    size_t used = 0;
    int a;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, size, "(");
    for (a = 0; a < ndim && used < size; a++)
        used += (size_t)snprintf(buf + used, size - used, a ? ", %lld" : "%lld",
                                 (long long)shape[a]);
    if (used < size)
        snprintf(buf + used, size - used, ndim == 1 ? ",)" : ")");
}

dg_status dg_array_broadcast(dg_array *a, int ndim, const int64_t *shape, dg_array **out,
                             dg_error *err)
{
    shapes s;
    int a_ax, k = ndim - a->ndim;
    for (a_ax = 0; a_ax < a->ndim && k >= 0; a_ax++)
        if (a->shape[a_ax] != 1 && a->shape[a_ax] != shape[a_ax + k])
            break;
    if (k < 0 || a_ax < a->ndim || ndim > DG_MAXDIM) {
        char s1[DG_MAXDIM * 22 + 4], s2[DG_MAXDIM * 22 + 4];
        shape_str(a->ndim, a->shape, s1, sizeof s1);
        shape_str(ndim < DG_MAXDIM ? ndim : DG_MAXDIM, shape, s2, sizeof s2);
        return dg_error_set(err, DG_ERR_VALUE, -1,
                            "operands could not be broadcast together with remapped shapes "
                            "[original->remapped]: %s  and requested shape %s", s1, s2);
    }
    s.ndim = a->ndim;
    s.shape = a->shape;
    s.out_ndim = ndim;
    s.out_shape = shape;
    return view_build(a, ndim, shape, broadcast_fn, &s, 1, 1, out, err);
}

/* ---- dtypes ---------------------------------------------------------------------- */

/* A view of other elements: `offset` bytes into each; along the last axis
 * `mul` new elements per old one (mul > 1: a smaller itemsize) or one new
 * per `div` old ones (a larger itemsize), the last stride `stride`. */
typedef struct retype {
    int64_t offset;
    int64_t mul, div;
    int64_t stride;
} retype;

static int retype_fn(const void *ctx, const dg_strided *in, dg_strided *out)
{
    const retype *t = (const retype *)ctx;
    const int last = in->box.ndim - 1;
    *out = *in;
    out->offset += t->offset;
    if (t->mul == 1 && t->div == 1)
        return 1;
    {
        dg_range r = in->box.r[last];
        const int64_t n = dg_range_len(r);
        if (n > 1 && r.step != 1)
            return 0;
        if (t->mul > 1) {
            out->box.r[last] = dg_range_make(r.start * t->mul, (r.start + n) * t->mul, 1);
        } else {
            if (r.start % t->div || n % t->div)
                return 0;
            out->box.r[last] = dg_range_make(r.start / t->div, (r.start + n) / t->div, 1);
        }
        out->strides[last] = t->stride;
    }
    return 1;
}

dg_status dg_array_view_dtype(dg_array *a, int dtype, int64_t byte_offset, int part,
                              dg_array **out, dg_error *err)
{
    const int isz = dg_dtype_size(dtype), asz = dg_dtype_size(a->dtype);
    int64_t shape[DG_MAXDIM];
    retype t;
    int i;
    const int last = a->ndim - 1;

    *out = NULL;
    t.offset = byte_offset;
    t.mul = t.div = 1;
    t.stride = isz;
    memcpy(shape, a->shape, sizeof shape);
    if (isz <= 0 || byte_offset < 0 || (!part && byte_offset) ||
        (part && (byte_offset + isz > asz || byte_offset % isz)))
        return dg_error_set(err, DG_ERR_VALUE, -1,
                            "a view of %s elements as %s at byte %lld of each is not possible",
                            dg_dtype_name(a->dtype), dg_dtype_name(dtype),
                            (long long)byte_offset);
    if (!part && isz != asz) {
        if (a->ndim == 0)
            return dg_error_set(err, DG_ERR_VALUE, -1,
                                "Changing the dtype of a 0d array is only supported if the "
                                "itemsize is unchanged");
        for (i = 0; i < a->nchunks; i++) {
            const dg_chunk *c = &a->chunks[i];
            if (dg_range_len(c->box.r[last]) > 1 && c->strides[last] != asz)
                return dg_error_set(err, DG_ERR_VALUE, -1,
                                    "To change to a dtype of a different size, the last axis "
                                    "must be contiguous");
        }
        if (asz > isz) {
            t.mul = asz / isz;
            shape[last] *= t.mul;
        } else {
            if ((shape[last] * asz) % isz)
                return dg_error_set(err, DG_ERR_VALUE, -1,
                                    "When changing to a larger dtype, its size must be a divisor "
                                    "of the total size in bytes of the last axis of the array.");
            t.div = isz / asz;
            shape[last] /= t.div;
        }
        for (i = 0; i < a->nchunks; i++) {
            const dg_chunk *c = &a->chunks[i];
            dg_strided in = strided_of(c), o;
            if (dg_box_size(&c->box) > 0 && !retype_fn(&t, &in, &o))
                return dg_error_set(err, DG_ERR_VALUE, -1,
                                    "a chunk of the array does not hold whole elements of %s "
                                    "along the last axis: reshard it first",
                                    dg_dtype_name(dtype));
        }
    }
    DG_CHECK(view_build(a, a->ndim, shape, retype_fn, &t, 1, 0, out, err));
    (*out)->dtype = dtype;
    return DG_OK;
}

/* ---- reshapes ------------------------------------------------------------------ */

static int reshape_fn(const void *ctx, const dg_strided *in, dg_strided *out)
{
    const shapes *s = (const shapes *)ctx;
    return dg_reshape_map(s->ndim, s->shape, s->out_ndim, s->out_shape, in, out);
}

/* 1 if every non-empty chunk of a maps to the new shape. */
static int reshape_maps(const dg_array *a, const shapes *s)
{
    int i;
    for (i = 0; i < a->nchunks; i++) {
        dg_strided in = strided_of(&a->chunks[i]), o;
        if (dg_box_size(&in.box) == 0)
            continue;
        if (!reshape_fn(s, &in, &o))
            return 0;
    }
    return 1;
}

/* 1 if every buffer of v is one of a's (v is a view of a). */
static int buffers_of(const dg_array *v, const dg_array *a)
{
    int i, j;
    for (i = 0; i < v->nchunks; i++) {
        for (j = 0; j < a->nchunks && a->chunks[j].buf != v->chunks[i].buf; j++)
            ;
        if (j == a->nchunks)
            return 0;
    }
    return 1;
}

/* The 1-d layout whose chunks are the flat images of the rows of the default
 * layout of (ndim, shape): they map to any reshape into that shape.  *out
 * malloc'ed. */
static dg_status flat_rows_layout(dg_backend_i *be, int dtype, int ndim, const int64_t *shape,
                                  size_t min_split_bytes, dg_plan_chunk **out, int *n,
                                  dg_error *err)
{
    dg_plan_chunk *l = NULL;
    int64_t row = 1;
    int i, a;
    DG_CHECK(dg_layout_default(be->ndevices, ndim, shape, (size_t)dg_dtype_size(dtype),
                               min_split_bytes, &l, n, err));
    for (a = 1; a < ndim; a++)
        row *= shape[a];
    for (i = 0; i < *n; i++) {
        dg_range r = ndim ? l[i].box.r[0] : dg_range_make(0, 1, 1);
        l[i].box.ndim = 1;
        l[i].box.r[0] = dg_range_make(r.start * row, r.stop * row, 1);
    }
    *out = l;
    return DG_OK;
}

dg_status dg_array_reshape_view(dg_array *a, int ndim, const int64_t *shape, dg_array **out,
                                dg_error *err)
{
    int64_t total = dg_shape_size(a->ndim, a->shape);
    shapes s;
    *out = NULL;
    if (ndim < 0 || ndim > DG_MAXDIM || dg_shape_size(ndim, shape) != total)
        return dg_error_set(err, DG_ERR_VALUE, -1, "cannot reshape an array of size %lld",
                            (long long)total);
    s.ndim = a->ndim;
    s.shape = a->shape;
    s.out_ndim = ndim;
    s.out_shape = shape;
    if (total == 0 || reshape_maps(a, &s))
        return view_build(a, ndim, shape, reshape_fn, &s, 1, 0, out, err);
    return DG_OK;
}

dg_status dg_array_reshape(dg_array *a, int ndim, const int64_t *shape, size_t min_split_bytes,
                           dg_array **out, int *is_view, dg_error *err)
{
    int64_t total = dg_shape_size(a->ndim, a->shape);
    dg_array *flat = NULL, *moved = NULL;
    dg_plan_chunk *l = NULL;
    shapes s;
    dg_status st;
    int n = 0;

    *is_view = 1;
    DG_CHECK(dg_array_reshape_view(a, ndim, shape, out, err));
    if (*out)
        return DG_OK;
    s.out_ndim = ndim;
    s.out_shape = shape;
    /* through the flattening (a view where a's chunks hold whole rows) */
    DG_CHECK(dg_array_flatten(a, min_split_bytes, &flat, err));
    s.ndim = 1;
    s.shape = &total;
    if (!reshape_maps(flat, &s)) {
        DG_CHECK_GOTO(flat_rows_layout(a->be, a->dtype, ndim, shape, min_split_bytes, &l, &n,
                                       err), st, done);
        DG_CHECK_GOTO(dg_array_reshard_ex(flat, l, n, DG_RESHARD_DENSE, &moved, err), st,
                      done);
        dg_array_decref(flat);
        flat = moved;
        moved = NULL;
    }
    DG_CHECK_GOTO(view_build(flat, ndim, shape, reshape_fn, &s, 1, 0, out, err), st, done);
    *is_view = buffers_of(*out, a);
done:
    free(l);
    if (flat)
        dg_array_decref(flat);
    return st;
}

/* ---- overlap ------------------------------------------------------------------- */

/* A chunk's buffer and index, ordered by buffer (dg_array_overlaps). */
typedef struct buf_chunk {
    uintptr_t buf;
    int idx;
} buf_chunk;

static int cmp_buf_chunk(const void *pa, const void *pb)
{
    const buf_chunk *a = pa, *b = pb;
    if (a->buf != b->buf)
        return a->buf < b->buf ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* 1 if chunks a and b use one buffer but not as the very same view. */
static int chunks_overlap(const dg_chunk *a, const dg_chunk *b)
{
    if (a->buf != b->buf || dg_box_size(&a->box) == 0 || dg_box_size(&b->box) == 0)
        return 0;
    return a->offset != b->offset || !dg_box_equal(&a->box, &b->box) ||
           memcmp(a->strides, b->strides, (size_t)a->box.ndim * sizeof(int64_t)) != 0;
}

/* Out's chunks sorted by buffer, so that each chunk of in meets only the
 * chunks of out on its own buffer (n log n, not all pairs: layouts of many
 * chunks).  Out of memory: all pairs. */
int dg_array_overlaps(const dg_array *in, const dg_array *out)
{
    buf_chunk *o;
    int i, j, res = 0;
    if (in == out)
        return 0;
    o = (buf_chunk *)malloc((size_t)(out->nchunks > 0 ? out->nchunks : 1) * sizeof(*o));
    if (!o) {
        for (i = 0; i < in->nchunks; i++)
            for (j = 0; j < out->nchunks; j++)
                if (chunks_overlap(&in->chunks[i], &out->chunks[j]))
                    return 1;
        return 0;
    }
    for (j = 0; j < out->nchunks; j++) {
        o[j].buf = (uintptr_t)out->chunks[j].buf;
        o[j].idx = j;
    }
    qsort(o, (size_t)out->nchunks, sizeof(*o), cmp_buf_chunk);
    for (i = 0; i < in->nchunks && !res; i++) {
        const uintptr_t b = (uintptr_t)in->chunks[i].buf;
        int lo = 0, hi = out->nchunks;
        while (lo < hi) { /* the first of out's chunks on buffer b */
            const int m = lo + (hi - lo) / 2;
            if (o[m].buf < b)
                lo = m + 1;
            else
                hi = m;
        }
        for (j = lo; j < out->nchunks && o[j].buf == b && !res; j++)
            res = chunks_overlap(&in->chunks[i], &out->chunks[o[j].idx]);
    }
    free(o);
    return res;
}
