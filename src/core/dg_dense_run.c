/* dg_array_dense: the backend's dense slot on the matrices of every chunk.
 *
 * The call names the op and LAPACK's sizes; here each operand is checked
 * against them (dtype, trailing extents, strides a LAPACK matrix can have),
 * the chunks of the operands are matched by device and batch box, and one
 * descriptor per chunk of A is enqueued (dg_enqueue) on its device's compute
 * stream with its buffers' accesses.  Every operand is written in place (copy on
 * write first), so the caller passes arrays it made for the result.  Empty
 * matrices are answered here (info 0 for each), so no backend sees them. */
#include <stdint.h>
#include <string.h>

#include "dg_array_impl.h"
#include "dg_dense_run.h"

/* What role r of op c needs: returns 0 (unused), 1 (optional) or 2
 * (required), the trailing axes *nt (2: a matrix, 1: a vector, 0: one value
 * per matrix) and their LAPACK extents rows (the last axis), cols. */
static int role_need(const dg_dense_call *c, int r, int *nt, int64_t *rows, int64_t *cols)
{
    const int64_t m = c->m, n = c->n, k = c->k, mn = m < n ? m : n;
    *nt = r == DG_DR_INFO ? 0 : (r == DG_DR_W || r == DG_DR_IPIV) ? 1 : 2;
    *rows = *cols = 1;
    if (r == DG_DR_INFO)
        return (c->op == DG_DENSE_POTRF || c->op == DG_DENSE_GETRF || c->op == DG_DENSE_SYEVD ||
                c->op == DG_DENSE_GESVD || c->op == DG_DENSE_GEEV) ? 2 : 1;
    switch (c->op) {
    case DG_DENSE_POTRF:
        if (r != DG_DR_A)
            return 0;
        *rows = *cols = n;
        return 2;
    case DG_DENSE_GETRF:
        if (r == DG_DR_A) {
            *rows = m;
            *cols = n;
            return 2;
        }
        *rows = mn;
        return r == DG_DR_IPIV ? 2 : 0;
    case DG_DENSE_GETRS:
        if (r == DG_DR_A) {
            *rows = *cols = n;
            return 2;
        }
        if (r == DG_DR_B) {
            *rows = n;
            *cols = k;
            return 2;
        }
        *rows = n;
        return r == DG_DR_IPIV ? 2 : 0;
    case DG_DENSE_TRSM:
        if (r == DG_DR_A) {
            *rows = *cols = c->right ? n : m;
            return 2;
        }
        *rows = m;
        *cols = n;
        return r == DG_DR_B ? 2 : 0;
    case DG_DENSE_GEQRF:
    case DG_DENSE_ORGQR:
        if (r == DG_DR_A) {
            *rows = m;
            *cols = n;
            return 2;
        }
        *rows = c->op == DG_DENSE_GEQRF ? mn : k;
        return r == DG_DR_W ? 2 : 0;
    case DG_DENSE_SYEVD:
        if (r == DG_DR_A) {
            *rows = *cols = n;
            return 2;
        }
        *rows = n;
        return r == DG_DR_W ? 2 : 0;
    case DG_DENSE_GESVD:
        if (r == DG_DR_A) {
            *rows = m;
            *cols = n;
            return 2;
        }
        if (r == DG_DR_W) {
            *rows = mn;
            return 2;
        }
        if (r == DG_DR_U && c->job) {
            *rows = m;
            *cols = c->job == 2 ? m : mn;
            return 2;
        }
        if (r == DG_DR_VT && c->job) {
            *rows = c->job == 2 ? n : mn;
            *cols = n;
            return 2;
        }
        return 0;
    case DG_DENSE_TRIZERO:
        *rows = m;
        *cols = n;
        return r == DG_DR_A ? 2 : 0;
    case DG_DENSE_GEEV:
        *rows = n;
        if (r == DG_DR_A || (r == DG_DR_U && c->job)) {
            *cols = n;
            return 2;
        }
        return r == DG_DR_W ? 2 : 0;
    default:
        return 0;
    }
}

/* The trailing axes of role r a chunk must hold whole: 2, or for the
 * operand written chunk by chunk at its own size (TRSM's b from the left:
 * any part of its columns, the second to last axis; TRIZERO's a without an
 * info: any box) fewer. */
static int whole_axes(const dg_dense_call *c, dg_array *const ops[DG_DR_N], int r, int nt)
{
    if (c->op == DG_DENSE_TRIZERO)
        return ops[DG_DR_INFO] ? nt : 0;
    if (c->op == DG_DENSE_TRSM && !c->right && r == DG_DR_B)
        return 1;
    return nt;
}

/* The dtype role r must have for an op in dtype dt. */
static int role_dtype(const dg_dense_call *c, int r, int dt)
{
    if (r == DG_DR_INFO)
        return DG_INT32;
    if (r == DG_DR_IPIV)
        return DG_INT64;
    if (r == DG_DR_W && (c->op == DG_DENSE_SYEVD || c->op == DG_DENSE_GESVD))
        return dt == DG_COMPLEX64 ? DG_FLOAT32 : dt == DG_COMPLEX128 ? DG_FLOAT64 : dt;
    if (r == DG_DR_W && c->op == DG_DENSE_GEEV)
        return dt == DG_FLOAT32 ? DG_COMPLEX64 : dt == DG_FLOAT64 ? DG_COMPLEX128 : dt;
    return dt;
}

/* 1 if the matrices of call c have no element to compute (LAPACK's quick
 * return): then every info is 0 and nothing else is written. */
static int empty_matrices(const dg_dense_call *c)
{
    switch (c->op) {
    case DG_DENSE_POTRF:
    case DG_DENSE_SYEVD:
    case DG_DENSE_GEEV:
        return c->n == 0;
    case DG_DENSE_GETRS:
        return c->n == 0 || c->k == 0;
    default:
        return c->m == 0 || c->n == 0;
    }
}

static const char *role_name[DG_DR_N] = {"a", "b", "u", "vt", "w", "ipiv", "info"};

/* Checks the operands against c: roles, dtypes, modes, batch axes and
 * trailing extents. */
static dg_status check_operands(const dg_dense_call *c, dg_array *const ops[DG_DR_N],
                                dg_error *err)
{
    const dg_array *a = ops[DG_DR_A];
    int r, nb, ax;
    if (!a || a->ndim < 2)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "a dense call needs a matrix");
    if (c->op < 0 || c->op >= DG_DENSE_NOPS || c->m < 0 || c->n < 0 || c->k < 0 ||
        c->job < 0 || c->job > (c->op == DG_DENSE_GESVD ? 2 : 1) || c->trans < 0 ||
        c->trans > 2)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "a bad dense call (op %d)", c->op);
    if (c->op == DG_DENSE_ORGQR && !(c->m >= c->n && c->n >= c->k))
        return dg_error_set(err, DG_ERR_VALUE, -1, "orgqr needs m >= n >= k");
    if (a->dtype != DG_FLOAT32 && a->dtype != DG_FLOAT64 && a->dtype != DG_COMPLEX64 &&
        a->dtype != DG_COMPLEX128)
        return dg_error_set(err, DG_ERR_TYPE, -1, "dense linear algebra in %s: use float32, "
                            "float64, complex64 or complex128", dg_dtype_name(a->dtype));
    nb = a->ndim - 2;
    for (r = 0; r < DG_DR_N; r++) {
        const dg_array *x = ops[r];
        int nt;
        int64_t rows, cols;
        const int need = role_need(c, r, &nt, &rows, &cols);
        if (!x) {
            if (need == 2)
                return dg_error_set(err, DG_ERR_INTERNAL, -1, "dense op %d needs its %s", c->op,
                                    role_name[r]);
            continue;
        }
        if (need == 0)
            return dg_error_set(err, DG_ERR_INTERNAL, -1, "dense op %d takes no %s", c->op,
                                role_name[r]);
        if (x->dtype != role_dtype(c, r, a->dtype) || x->mode != DG_MODE_REPLICA ||
            x->ndim != nb + nt)
            return dg_error_set(err, DG_ERR_INTERNAL, -1, "the %s of a dense op: %s, %d axes",
                                role_name[r], dg_dtype_name(x->dtype), x->ndim);
        for (ax = 0; ax < nb; ax++)
            if (x->shape[ax] != a->shape[ax])
                return dg_error_set(err, DG_ERR_INTERNAL, -1, "the %s of a dense op has "
                                    "other batch axes than its matrix", role_name[r]);
        if ((nt >= 1 && x->shape[x->ndim - 1] != rows) ||
            (nt == 2 && x->shape[x->ndim - 2] != cols))
            return dg_error_set(err, DG_ERR_VALUE, -1, "the %s of dense op %d is not %lld x "
                                "%lld (LAPACK's rows x columns)", role_name[r], c->op,
                                (long long)rows, (long long)cols);
    }
    return DG_OK;
}

/* The chunk of x on device dev whose box over the first nb axes is that of
 * `box`, or NULL. */
static const dg_chunk *match_chunk(const dg_array *x, int dev, const dg_box *box, int nb)
{
    int i, ax;
    for (i = 0; i < x->nchunks; i++) {
        const dg_chunk *ch = &x->chunks[i];
        if (ch->device != dev)
            continue;
        for (ax = 0; ax < nb; ax++)
            if (ch->box.r[ax].start != box->r[ax].start ||
                dg_range_len(ch->box.r[ax]) != dg_range_len(box->r[ax]) ||
                (dg_range_len(box->r[ax]) > 1 && ch->box.r[ax].step != box->r[ax].step))
                break;
        if (ax == nb)
            return ch;
    }
    return NULL;
}

/* 1 if chunk ch of x holds its last nw axes whole. */
static int trailing_whole(const dg_array *x, const dg_chunk *ch, int nw)
{
    int ax;
    for (ax = x->ndim - nw; ax < x->ndim; ax++) {
        dg_range rg = ch->box.r[ax];
        if (x->shape[ax] > 0 && (rg.start != 0 || dg_range_len(rg) != x->shape[ax]))
            return 0;
    }
    return 1;
}

/* Fills the descriptor's fields of role r from chunk ch (of x): pointer,
 * leading dimension and batch strides; 0 if its strides are not ones a
 * LAPACK operand can have. */
static int fill_role(dg_dense_desc *d, int r, const dg_array *x, const dg_chunk *ch, int nb)
{
    char *p;
    int64_t st[DG_MAXDIM];
    const int64_t isz = dg_dtype_size(x->dtype);
    int ax;
    dg_chunk_view(ch, &ch->box, &p, st);
    if (r <= DG_DR_VT) {
        const int64_t rows = dg_range_len(ch->box.r[x->ndim - 1]);
        const int64_t cols = dg_range_len(ch->box.r[x->ndim - 2]);
        int64_t ld = rows > 1 ? rows : 1;
        dg_dense_mat *mt = r == DG_DR_A ? &d->a : r == DG_DR_B ? &d->b : r == DG_DR_U ? &d->u
                                                                                    : &d->vt;
        if (rows > 1 && st[x->ndim - 1] != isz)
            return 0;
        if (cols > 1) {
            if (st[x->ndim - 2] % isz != 0 || st[x->ndim - 2] / isz < rows)
                return 0;
            ld = st[x->ndim - 2] / isz;
        }
        mt->p = p;
        mt->ld = ld;
        for (ax = 0; ax < nb; ax++)
            mt->bs[ax] = st[ax];
        return 1;
    }
    if (r == DG_DR_W || r == DG_DR_IPIV) {
        if (dg_range_len(ch->box.r[x->ndim - 1]) > 1 && st[x->ndim - 1] != isz)
            return 0;
        for (ax = 0; ax < nb; ax++)
            (r == DG_DR_W ? d->w_bs : d->ipiv_bs)[ax] = st[ax];
        if (r == DG_DR_W)
            d->w = p;
        else
            d->ipiv = (int64_t *)p;
        return 1;
    }
    for (ax = 0; ax < nb; ax++)
        d->info_bs[ax] = st[ax];
    d->info = (int32_t *)p;
    return 1;
}

dg_status dg_array_dense(const dg_dense_call *c, dg_array *const ops[DG_DR_N], dg_error *err)
{
    dg_array *a = ops[DG_DR_A];
    dg_backend_i *be;
    int r, i, nb, ax, prim;
    DG_CHECK(check_operands(c, ops, err));
    be = a->be;
    DG_CHECK(dg_be_need(be, DG_SLOT_DENSE, err));
    nb = a->ndim - 2;
    /* the operand whose chunks are the batches: the one the op writes */
    prim = ops[DG_DR_B] ? DG_DR_B : DG_DR_A;
    for (r = 0; r < DG_DR_N; r++)
        if (ops[r] && (r != DG_DR_A || c->op != DG_DENSE_TRSM))
            DG_CHECK(dg_array_unshare(ops[r], err));
    if (empty_matrices(c)) {
        dg_fill_desc zero;
        memset(&zero, 0, sizeof zero);
        zero.kind = DG_FILL_CONST;
        return ops[DG_DR_INFO] ? dg_array_fill(ops[DG_DR_INFO], &zero, NULL, err) : DG_OK;
    }
    for (i = 0; i < ops[prim]->nchunks; i++) {
        const dg_chunk *ca = &ops[prim]->chunks[i];
        const dg_chunk *cs[DG_DR_N] = {0};
        dg_dense_desc d;
        dg_access acc[DG_DR_N];
        int nacc;
        const int dev = ca->device;
        if (dg_box_size(&ca->box) == 0)
            continue;
        memset(&d, 0, sizeof d);
        d.op = c->op;
        d.dtype = a->dtype;
        d.lower = c->lower;
        d.trans = c->trans;
        d.right = c->right;
        d.unit = c->unit;
        d.job = c->job;
        d.m = c->m;
        d.n = c->n;
        d.k = c->k;
        d.nbatch = nb;
        for (ax = 0; ax < nb; ax++)
            d.batch[ax] = dg_range_len(ca->box.r[ax]);
        for (r = 0; r < DG_DR_N; r++) {
            int nt;
            int64_t rows, cols;
            if (!ops[r])
                continue;
            role_need(c, r, &nt, &rows, &cols);
            cs[r] = r == prim ? ca : match_chunk(ops[r], dev, &ca->box, nb);
            if (!cs[r] || !trailing_whole(ops[r], cs[r], whole_axes(c, ops, r, nt)))
                return dg_error_set(err, DG_ERR_INTERNAL, dev, "the %s of a dense op has no "
                                    "chunk of whole matrices beside the matrix's chunk %d on "
                                    "device %d", role_name[r], i, dev);
            if (!fill_role(&d, r, ops[r], cs[r], nb))
                return dg_error_set(err, DG_ERR_INTERNAL, dev, "the %s of a dense op is not "
                                    "dense along its rows", role_name[r]);
        }
        /* the sizes of a chunk written at its own size */
        if (c->op == DG_DENSE_TRSM && !c->right)
            d.n = dg_range_len(ca->box.r[nb]);
        if (c->op == DG_DENSE_TRIZERO) {
            const dg_range ri = ca->box.r[nb + 1], rj = ca->box.r[nb];
            if ((dg_range_len(ri) > 1 && ri.step != 1) || (dg_range_len(rj) > 1 && rj.step != 1))
                return dg_error_set(err, DG_ERR_INTERNAL, dev, "a triangle of a strided chunk");
            d.m = dg_range_len(ri);
            d.n = dg_range_len(rj);
            d.k = c->k - rj.start + ri.start;
        }
        /* TRSM reads its triangle (shared by many calls), writes b; every
         * other op writes all its operands in place */
        for (r = 0, nacc = 0; r < DG_DR_N; r++)
            if (cs[r])
                acc[nacc++] = dg_acc(cs[r]->buf, c->op == DG_DENSE_TRSM && r == DG_DR_A
                                                     ? DG_ACC_READ : DG_ACC_WRITE);
        DG_CHECK(dg_enqueue(be, dev, DG_STREAM_COMPUTE, acc, nacc, dg_work_dense(&d), err));
    }
    return DG_OK;
}
