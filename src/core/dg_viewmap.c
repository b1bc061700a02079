/* How a view maps one strided chunk (see dg_viewmap.h).
 *
 * A basic key maps each axis on its own: an index keeps the chunk if the
 * chunk holds it (its position moves the offset), a slice keeps the
 * intersection of its indices with the chunk's range.  A slice of step s
 * selects the base indices start + s * v; the intersection is one strided
 * range of base indices (dg_range_intersect), whose view indices v form a
 * range of positive step again (for s < 0 the largest base index is the
 * smallest v), and one step of it moves s * vstep base indices: that many
 * steps of the chunk's box times its stride, which is negative for s < 0.
 *
 * A reshape maps groups of axes: the shortest runs of the old and new axes
 * (length-1 axes aside) whose sizes have the same product.  Within a group
 * the chunk's elements are consecutive in C order when it holds one index
 * on the leading axes, a step-1 range on one axis and every index of the
 * axes after it; that run [s, e) of flat indices is a box of the new axes
 * when s and e are multiples of the size of the new axes after some axis u
 * and the run stays within one index of the axes before u.  Its addresses
 * keep uniform strides when the old axes after the range are laid out in C
 * order in memory (any element stride, negative and 0 included). */
#include "dg_viewmap.h"

#include <assert.h>
#include <string.h>

static int range_has(dg_range r, int64_t x)
{
    return x >= r.start && x < r.stop && (x - r.start) % r.step == 0;
}

dg_status dg_key_check(const dg_key *key, int ndim, const int64_t *shape, int *out_ndim,
                       int64_t *out_shape, dg_error *err)
{
    int i, ax = 0, o = 0;
    if (key->n < 0 || key->n > DG_MAXKEY)
        return dg_error_set(err, DG_ERR_INDEX, -1, "an index of %d entries", key->n);
    for (i = 0; i < key->n; i++) {
        const dg_key_entry *k = &key->e[i];
        if (k->kind != DG_KEY_NEW && ax >= ndim)
            return dg_error_set(err, DG_ERR_INDEX, -1,
                                "too many indices for array: array is %d-dimensional", ndim);
        if (k->kind == DG_KEY_INT) {
            if (k->start < 0 || k->start >= shape[ax])
                return dg_error_set(err, DG_ERR_INDEX, -1,
                                    "index %lld is out of bounds for axis %d with size %lld",
                                    (long long)k->start, ax, (long long)shape[ax]);
            ax++;
            continue;
        }
        if (o >= DG_MAXDIM)
            return dg_error_set(err, DG_ERR_INDEX, -1,
                                "a view of more than %d dimensions", DG_MAXDIM);
        if (k->kind == DG_KEY_NEW) {
            out_shape[o++] = 1;
            continue;
        }
        if (k->kind != DG_KEY_SLICE || k->step == 0 || k->len < 0 ||
            (k->len > 0 && (k->start < 0 || k->start >= shape[ax] ||
                            k->start + (k->len - 1) * k->step < 0 ||
                            k->start + (k->len - 1) * k->step >= shape[ax])))
            return dg_error_set(err, DG_ERR_INDEX, -1, "a bad slice of axis %d", ax);
        out_shape[o++] = k->len;
        ax++;
    }
    if (ax != ndim)
        return dg_error_set(err, DG_ERR_INDEX, -1, "an index of %d axes for a %d-d array", ax,
                            ndim);
    *out_ndim = o;
    return DG_OK;
}

int dg_key_map(const dg_key *key, const dg_strided *in, dg_strided *out)
{
    dg_strided r;
    int i, ax = 0, o = 0;

    if (dg_box_size(&in->box) == 0)
        return 0;
    memset(&r, 0, sizeof r);
    r.offset = in->offset;
    for (i = 0; i < key->n; i++) {
        const dg_key_entry *k = &key->e[i];
        dg_range b, sel, I;
        int64_t st, ast, lo, m, first, v0, vstep;
        if (k->kind == DG_KEY_NEW) {
            r.box.r[o] = dg_range_make(0, 1, 1);
            r.strides[o++] = 0;
            continue;
        }
        b = in->box.r[ax];
        if (k->kind == DG_KEY_INT) {
            if (!range_has(b, k->start))
                return 0;
            r.offset += (k->start - b.start) / b.step * in->strides[ax++];
            continue;
        }
        if (k->len == 0)
            return 0;
        st = k->step;
        ast = st < 0 ? -st : st;
        lo = st > 0 ? k->start : k->start + (k->len - 1) * st;
        sel = dg_range_make(lo, lo + (k->len - 1) * ast + 1, ast);
        I = dg_range_intersect(sel, b);
        m = dg_range_len(I);
        if (m == 0)
            return 0;
        /* the base index of the view's first element, and the view step */
        first = st > 0 ? I.start : I.start + (m - 1) * I.step;
        v0 = (first - k->start) / st;
        vstep = m > 1 ? I.step / ast : 1;
        r.box.r[o] = dg_range_make(v0, v0 + (m - 1) * vstep + 1, vstep);
        r.offset += (first - b.start) / b.step * in->strides[ax];
        r.strides[o++] = m > 1 ? in->strides[ax] * (st * vstep / b.step) : 0;
        ax++;
    }
    r.box.ndim = o;
    *out = r;
    return 1;
}

void dg_transpose_map(const int *perm, const dg_strided *in, dg_strided *out)
{
    dg_strided r;
    int a;
    memset(&r, 0, sizeof r);
    r.box.ndim = in->box.ndim;
    r.offset = in->offset;
    for (a = 0; a < in->box.ndim; a++) {
        r.box.r[a] = in->box.r[perm[a]];
        r.strides[a] = in->strides[perm[a]];
    }
    *out = r;
}

void dg_broadcast_map(int ndim, const int64_t *shape, int out_ndim, const int64_t *out_shape,
                      const dg_strided *in, dg_strided *out)
{
    dg_strided r;
    int k = out_ndim - ndim, a;
    assert(k >= 0);
    memset(&r, 0, sizeof r);
    r.box.ndim = out_ndim;
    r.offset = in->offset;
    for (a = 0; a < out_ndim; a++) {
        int j = a - k;
        if (j < 0 || (shape[j] == 1 && out_shape[a] != 1)) {
            r.box.r[a] = dg_range_make(0, out_shape[a], 1);
            r.strides[a] = 0;
        } else {
            r.box.r[a] = in->box.r[j];
            r.strides[a] = in->strides[j];
        }
    }
    *out = r;
}

/* One group of a reshape: old axes oax[0..k) of sizes osz, new axes
 * nax[0..q) of sizes nsz (the same product).  Fills the new axes of *out
 * from the old axes of *in; 0 if the chunk's elements there are not a box
 * of uniform strides. */
static int reshape_group(const dg_strided *in, const int *oax, const int64_t *osz, int k,
                         const int *nax, const int64_t *nsz, int q, dg_strided *out)
{
    int t, ts = k - 1, u, us = -1;
    int64_t w = 1, s = 0, len, e, es, qv[DG_MAXDIM];

    for (t = 0; t < k; t++)
        if (dg_range_len(in->box.r[oax[t]]) > 1) {
            ts = t;
            break;
        }
    for (t = k - 1; t > ts; t--) {
        dg_range r = in->box.r[oax[t]];
        if (r.start != 0 || dg_range_len(r) != osz[t] || r.step != 1)
            return 0;
        if (t < k - 1 && in->strides[oax[t]] != in->strides[oax[t + 1]] * osz[t + 1])
            return 0;
    }
    len = dg_range_len(in->box.r[oax[ts]]);
    if (len > 1 && in->box.r[oax[ts]].step != 1)
        return 0;
    if (len > 1 && ts < k - 1 && in->strides[oax[ts]] != in->strides[oax[ts + 1]] * osz[ts + 1])
        return 0;
    es = in->strides[oax[k - 1]];
    /* the run [s, e) of flat indices of the group */
    for (t = k - 1; t >= 0; t--) {
        if (t <= ts)
            s += in->box.r[oax[t]].start * w;
        if (t == ts)
            len *= w;
        w *= osz[t];
    }
    e = s + len;
    w = 1;
    for (u = q - 1; u >= 0; u--) {
        qv[u] = w;
        w *= nsz[u];
    }
    for (u = 0; u < q && us < 0; u++)
        if (s % qv[u] == 0 && e % qv[u] == 0 && s / (nsz[u] * qv[u]) == (e - 1) / (nsz[u] * qv[u]))
            us = u;
    if (us < 0)
        return 0;
    for (u = 0; u < q; u++) {
        int64_t d = (s / qv[u]) % nsz[u];
        if (u < us)
            out->box.r[nax[u]] = dg_range_make(d, d + 1, 1);
        else if (u == us)
            out->box.r[nax[u]] = dg_range_make(d, (e - 1) / qv[u] % nsz[u] + 1, 1);
        else
            out->box.r[nax[u]] = dg_range_make(0, nsz[u], 1);
        out->strides[nax[u]] = es * qv[u];
    }
    return 1;
}

int dg_reshape_map(int ndim, const int64_t *shape, int out_ndim, const int64_t *out_shape,
                   const dg_strided *in, dg_strided *out)
{
    int oi[DG_MAXDIM], ni[DG_MAXDIM], p = 0, q = 0, i = 0, j = 0, a;
    int64_t osz[DG_MAXDIM], nsz[DG_MAXDIM];
    dg_strided r;

    for (a = 0; a < ndim; a++)
        if (shape[a] != 1) {
            osz[p] = shape[a];
            oi[p++] = a;
        }
    for (a = 0; a < out_ndim; a++)
        if (out_shape[a] != 1) {
            nsz[q] = out_shape[a];
            ni[q++] = a;
        }
    memset(&r, 0, sizeof r);
    r.box.ndim = out_ndim;
    r.offset = in->offset;
    for (a = 0; a < out_ndim; a++)
        r.box.r[a] = dg_range_make(0, 1, 1);
    while (i < p && j < q) {
        int i0 = i, j0 = j;
        int64_t po = osz[i++], pn = nsz[j++];
        while (po != pn) {
            if (po < pn) {
                if (i == p)
                    return 0; /* sizes differ: a caller bug */
                po *= osz[i++];
            } else {
                if (j == q)
                    return 0;
                pn *= nsz[j++];
            }
        }
        if (!reshape_group(in, oi + i0, osz + i0, i - i0, ni + j0, nsz + j0, j - j0, &r))
            return 0;
    }
    if (i != p || j != q)
        return 0;
    *out = r;
    return 1;
}
