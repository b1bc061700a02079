/* Chunk by chunk between the devices and the host: the module functions that
 * pickling, checkpoint files and Zarr are built on (python/dgarray/_pickle.py,
 * _checkpoint.py).
 *
 *   _chunk_layout(a)          [(device, box), ...]: a's chunks as they are
 *                             (not its logical layout)
 *   _chunk_get(a, i, box=None, private=False)   ndarray (C order) of box
 *                             (default: all) of chunk i (private: read by
 *                             this process alone, its own chunk: [multihost])
 *   _chunk_put(a, i, host, box=None)   host's values into box of chunk i
 *   _chunk_lend(a, writable, i=-1)   [(device, box, address, byte_strides)]
 *                             of every chunk (or chunk i), lent in place
 *   _chunk_copy(a, i)         a one-chunk array holding a copy of chunk i
 *   _chunk_cover(a)           [(i, box), ...]: disjoint boxes, each inside chunk
 *                             i, whose union is the array (the planner's)
 *   _npy_write(a, fd, offset)     a's values in C order into file fd from byte
 *                             offset on, each piece of a chunk at its offset
 *                             (in a job: the pieces of this process's chunks)
 *   _npy_read(a, fd, offset, fortran_order, byteswap)   every chunk of a
 *                             from its elements in the file (in a job: this
 *                             process's chunks)
 *
 * The file functions run as host copies do (hostcopy.c): in steps of at most
 * one piece (`_core._piece_bytes`), without the GIL, with Ctrl-C and
 * progress between steps.  A step takes pieces of chunks (a chunk's box cut
 * into slabs of whole rows of at most a piece) until they fill one host
 * buffer of a piece: the only host memory they use.  Writing: the step's
 * device-to-host copies, one wait, then each slab's runs (the elements
 * consecutive in the file) written at their offsets with pwrite.  Reading:
 * the runs read with pread, then the host-to-device copies and one wait.
 * The file is neither created, sized nor synced here (the Python side does:
 * temporary name, fsync, rename). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dg_chunkio.h"
#include "dg_dist.h"
#include "dg_surface.h"
#include "dgpy.h"

/* 1 if device dev is this process's ([multihost]: in a job, each process
 * writes and reads the file for its own devices' chunks only; alone, every
 * device is). */
static int local_dev(const dg_backend_i *be, int dev)
{
    int first, n;
    dg_dist_local_range(be, &first, &n);
    return dev >= first && dev < first + n;
}

int dgpy_own_chunk(const dg_array *a, int i)
{
    if (i < 0 || i >= a->nchunks) {
        PyErr_Format(PyExc_IndexError, "chunk %d of an array of %d chunks", i, a->nchunks);
        return -1;
    }
    if (!local_dev(a->be, a->chunks[i].device)) {
        PyErr_Format(PyExc_BufferError, "chunk %d is on device %d, another process's: its "
                     "memory is not in this process", i, a->chunks[i].device);
        return -1;
    }
    return 0;
}

/* ---- arguments ---------------------------------------------------------------- */

/* *box = the box `o` ((start, stop, step), ...) of a, or chunk i's box for None. */
static int box_arg(const dg_array *a, int i, PyObject *o, dg_box *box)
{
    PyObject *wrapped;
    dg_plan_chunk *l;
    int n, r;
    if (i < 0 || i >= a->nchunks) {
        PyErr_Format(PyExc_IndexError, "chunk %d of an array of %d chunks", i, a->nchunks);
        return -1;
    }
    if (o == NULL || o == Py_None) {
        *box = a->chunks[i].box;
        return 0;
    }
    wrapped = Py_BuildValue("[(iO)]", 0, o);
    if (!wrapped)
        return -1;
    r = dgpy_layout_from_py(wrapped, a->ndim, &l, &n);
    Py_DECREF(wrapped);
    if (r < 0)
        return -1;
    *box = l[0].box;
    PyMem_Free(l);
    if (!dg_box_contains(&a->chunks[i].box, box)) {
        PyErr_Format(PyExc_ValueError, "the box is not inside chunk %d", i);
        return -1;
    }
    return 0;
}

/* Waits for the copies of used[] (without the GIL); raises on error. */
static int sync_used(dg_backend_i *be, const char *used, dg_status st, dg_error *err)
{
    Py_BEGIN_ALLOW_THREADS
    st = dg_devices_sync(be, used, st, err);
    Py_END_ALLOW_THREADS
    return st == DG_OK ? 0 : dgpy_raise_int(err);
}

/* ---- one chunk ---------------------------------------------------------------------- */

static PyObject *f_chunk_layout(PyObject *mod, PyObject *arg)
{
    dg_array *a;
    dg_plan_chunk *l = NULL;
    dg_error err = DG_ERROR_INIT;
    PyObject *res;
    (void)mod;
    if (!DgArray_Check(arg))
        return PyErr_Format(PyExc_TypeError, "_chunk_layout needs a DistributedArray");
    a = ((DgArrayObject *)arg)->arr;
    if (dg_array_layout(a, &l, &err) != DG_OK)
        return dgpy_raise(&err);
    res = dgpy_chunks_to_py(l, a->nchunks);
    free(l);
    return res;
}

static PyObject *f_chunk_get(PyObject *mod, PyObject *args)
{
    PyObject *arr, *boxo = Py_None, *host;
    dg_array *a;
    dg_box box;
    int i, ax, nd, hdt;
    int64_t shape[DG_MAXDIM], strides[DG_MAXDIM];
    char *data, *used;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    int private_ = 0, was;
    if (!PyArg_ParseTuple(args, "O!i|Op", dgpy_st->array_type, &arr, &i, &boxo, &private_))
        return NULL;
    a = ((DgArrayObject *)arr)->arr;
    if (box_arg(a, i, boxo, &box) < 0)
        return NULL;
    for (ax = 0; ax < a->ndim; ax++)
        shape[ax] = dg_range_len(box.r[ax]);
    host = dgpy_ndarray_new(a->ndim, shape, a->dtype);
    if (!host)
        return NULL;
    dgpy_ndarray_info(host, &nd, shape, strides, &data, &hdt);
    used = (char *)calloc((size_t)a->be->ndevices, 1);
    if (!used) {
        Py_DECREF(host);
        return PyErr_NoMemory();
    }
    if (private_ && !local_dev(a->be, a->chunks[i].device)) {
        free(used);
        Py_DECREF(host);
        return PyErr_Format(PyExc_ValueError, "chunk %d is on another process's device", i);
    }
    was = dg_dist_private_reads(a->be, private_);
    st = dg_chunk_to_host(a, i, &box, data, strides, used, &err);
    dg_dist_private_reads(a->be, was);
    if (sync_used(a->be, used, st, &err) < 0)
        Py_CLEAR(host);
    free(used);
    return host;
}

/* _chunk_lend(a, writable, i=-1): [(device, box, address, byte_strides), ...]
 * of every chunk of a, in a's chunk order (with i >= 0: of chunk i alone,
 * which must be this process's), after a's pending writes (and, when
 * writable, copy on write), for users' kernels run on each chunk where it
 * lives and the chunks' array interfaces (dgarray/_chunks.py).  The
 * addresses live as long as a's chunks: the caller keeps a. */
static PyObject *f_chunk_lend(PyObject *mod, PyObject *args)
{
    PyObject *arr, *res;
    dg_array *a;
    dg_plan_chunk *l = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st = DG_OK;
    int writable, i, ax, only = -1, lo, hi;
    (void)mod;
    if (!PyArg_ParseTuple(args, "O!p|i", dgpy_st->array_type, &arr, &writable, &only))
        return NULL;
    a = ((DgArrayObject *)arr)->arr;
    if (only >= 0 && dgpy_own_chunk(a, only) < 0)
        return NULL;
    lo = only >= 0 ? only : 0;
    hi = only >= 0 ? only + 1 : a->nchunks;
    if (dg_array_layout(a, &l, &err) != DG_OK)
        return dgpy_raise(&err);
    res = PyList_New(hi - lo);
    for (i = lo; res && i < hi; i++) {
        char *ptr;
        int64_t strides[DG_MAXDIM];
        PyObject *box, *strs, *item = NULL;
        Py_BEGIN_ALLOW_THREADS
        st = dg_array_lend_chunk(a, i, !writable, &ptr, strides, &err);
        Py_END_ALLOW_THREADS
        if (st != DG_OK) {
            Py_CLEAR(res);
            dgpy_raise(&err);
            break;
        }
        box = dgpy_box_to_py(&l[i].box);
        strs = box ? PyTuple_New(a->ndim) : NULL;
        for (ax = 0; strs && ax < a->ndim; ax++) {
            PyObject *v = PyLong_FromLongLong(strides[ax]);
            if (!v) {
                Py_CLEAR(strs);
                break;
            }
            PyTuple_SET_ITEM(strs, ax, v);
        }
        if (strs)
            item = Py_BuildValue("(iNKN)", l[i].device, box,
                                 (unsigned long long)(uintptr_t)ptr, strs);
        else
            Py_XDECREF(box);
        if (!item)
            Py_CLEAR(res);
        else
            PyList_SET_ITEM(res, i - lo, item);
    }
    free(l);
    return res;
}

/* _chunk_copy(a, i): a new one-chunk DistributedArray on chunk i's device
 * holding a copy of chunk i (this process's), for DLPack's copy=True of a
 * chunk. */
static PyObject *f_chunk_copy(PyObject *mod, PyObject *args)
{
    PyObject *arr;
    dg_array *a, *out = NULL;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    int i;
    (void)mod;
    if (!PyArg_ParseTuple(args, "O!i", dgpy_st->array_type, &arr, &i))
        return NULL;
    a = ((DgArrayObject *)arr)->arr;
    if (dgpy_own_chunk(a, i) < 0)
        return NULL;
    Py_BEGIN_ALLOW_THREADS
    st = dg_array_chunk_copy(a, i, &out, &err);
    Py_END_ALLOW_THREADS
    return st == DG_OK ? dgpy_wrap(out) : dgpy_raise(&err);
}

static PyObject *f_chunk_put(PyObject *mod, PyObject *args)
{
    PyObject *arr, *obj, *boxo = Py_None, *host;
    dg_array *a;
    dg_box box;
    int i, ax, nd, hdt, bad;
    int64_t shape[DG_MAXDIM], strides[DG_MAXDIM];
    char *data, *used;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    (void)mod;
    if (!PyArg_ParseTuple(args, "O!iO|O", dgpy_st->array_type, &arr, &i, &obj, &boxo))
        return NULL;
    a = ((DgArrayObject *)arr)->arr;
    if (box_arg(a, i, boxo, &box) < 0)
        return NULL;
    host = dgpy_as_ndarray(obj, a->dtype);
    if (!host)
        return NULL;
    dgpy_ndarray_info(host, &nd, shape, strides, &data, &hdt);
    bad = nd != a->ndim;
    for (ax = 0; ax < a->ndim && !bad; ax++)
        bad = shape[ax] != dg_range_len(box.r[ax]);
    if (bad) {
        Py_DECREF(host);
        return PyErr_Format(PyExc_ValueError, "the values for chunk %d have the wrong shape",
                            i);
    }
    used = (char *)calloc((size_t)a->be->ndevices, 1);
    if (!used) {
        Py_DECREF(host);
        return PyErr_NoMemory();
    }
    st = dg_chunk_from_host(a, i, &box, data, strides, used, &err);
    bad = sync_used(a->be, used, st, &err) < 0;
    free(used);
    Py_DECREF(host);
    if (bad)
        return NULL;
    Py_RETURN_NONE;
}

/* The planner's copies of a's chunks to one host array of the whole: *plan,
 * with copy k's box in chunk plan->copies[k].src. */
static dg_status cover_plan(const dg_array *a, dg_plan *plan, dg_error *err)
{
    dg_plan_chunk *src = NULL, dst;
    dg_status st;
    dst.device = DG_HOST;
    dg_box_full(&dst.box, a->ndim, a->shape);
    DG_CHECK(dg_array_layout(a, &src, err));
    st = dg_plan_build(src, a->nchunks, &dst, 1, plan, err);
    free(src);
    return st;
}

static PyObject *f_chunk_cover(PyObject *mod, PyObject *arg)
{
    dg_array *a;
    dg_plan plan = {0, 0, NULL};
    dg_error err = DG_ERROR_INIT;
    PyObject *lst;
    int k;
    (void)mod;
    if (!DgArray_Check(arg))
        return PyErr_Format(PyExc_TypeError, "_chunk_cover needs a DistributedArray");
    a = ((DgArrayObject *)arg)->arr;
    if (dg_shape_size(a->ndim, a->shape) == 0)
        return PyList_New(0);
    if (cover_plan(a, &plan, &err) != DG_OK)
        return dgpy_raise(&err);
    lst = PyList_New(plan.ncopies);
    for (k = 0; lst && k < plan.ncopies; k++) {
        PyObject *box = dgpy_box_to_py(&plan.copies[k].box);
        PyObject *item = box ? Py_BuildValue("(iN)", plan.copies[k].src, box) : NULL;
        if (!item)
            Py_CLEAR(lst);
        else
            PyList_SET_ITEM(lst, k, item);
    }
    dg_plan_free(&plan);
    return lst;
}

/* ---- slabs ------------------------------------------------------------------------ */

/* A box cut into slabs of at most `cap` bytes: whole rows of axis `ax`
 * (`rows` of them a slab), one index of each axis before it. */
typedef struct slabs {
    dg_box box;
    int ax;
    int64_t rows, nblk, count;
} slabs;

static void slabs_init(slabs *s, const dg_box *b, int64_t isz, int64_t cap)
{
    int64_t inner = isz, len;
    int ax;
    s->box = *b;
    if (dg_box_size(b) == 0) {
        s->count = 0;
        return;
    }
    if (b->ndim == 0) {
        s->ax = -1;
        s->count = 1;
        return;
    }
    if (cap < isz)
        cap = isz;
    /* the outermost axis one index of which fits in cap */
    for (ax = b->ndim - 1; ax > 0; ax--) {
        len = dg_range_len(b->r[ax]);
        if (inner * len > cap)
            break;
        inner *= len;
    }
    /* here inner = bytes of one index of axis ax (fits), unless ax == 0 */
    len = dg_range_len(b->r[ax]);
    s->ax = ax;
    s->rows = cap / inner < len ? cap / inner : len;
    if (s->rows < 1)
        s->rows = 1;
    s->nblk = (len + s->rows - 1) / s->rows;
    s->count = s->nblk;
    for (ax = 0; ax < s->ax; ax++)
        s->count *= dg_range_len(b->r[ax]);
}

/* Slab j (< count) of s. */
static void slabs_get(const slabs *s, int64_t j, dg_box *out)
{
    int64_t blk, lo, hi;
    int ax;
    const dg_range *r;
    *out = s->box;
    if (s->ax < 0)
        return;
    blk = j % s->nblk;
    j /= s->nblk;
    for (ax = s->ax - 1; ax >= 0; ax--) {
        const int64_t len = dg_range_len(s->box.r[ax]);
        r = &s->box.r[ax];
        out->r[ax] = dg_range_make(r->start + (j % len) * r->step,
                                   r->start + (j % len) * r->step + 1, 1);
        j /= len;
    }
    r = &s->box.r[s->ax];
    lo = blk * s->rows;
    hi = lo + s->rows < dg_range_len(*r) ? lo + s->rows : dg_range_len(*r);
    out->r[s->ax] = dg_range_make(r->start + lo * r->step, r->start + (hi - 1) * r->step + 1,
                                  r->step);
}

/* ---- file runs ---------------------------------------------------------------------- */

typedef struct npy_io {
    dg_array *a;
    int fd;
    int64_t offset;         /* of element 0 in the file */
    int writing;
    int fortran;            /* the file's element order */
    int swap;               /* reading: swap the bytes of each element (or each half) */
    int64_t fstr[DG_MAXDIM]; /* bytes per index of each axis in the file */
    int isz;
    /* the pieces: n boxes, box k in chunk src[k] */
    int n;
    const int *src;
    const dg_box *boxes;
    int64_t piece;
    /* where the walk is */
    int k;
    slabs cur;
    int64_t next;
    /* the step's slabs, in the host buffer one after another */
    char *buf;
    int ngroup, capgroup;
    dg_box *gbox;
    int *gsrc;
    int64_t *goff;
    char *used;
    int sys_errno;          /* the errno of a failed read or write */
} npy_io;

/* Reads or writes `n` bytes at file offset `off` (whole: retries short
 * transfers); a read past the end is an error (ENODATA). */
static int io_all(npy_io *io, char *p, int64_t n, int64_t off)
{
    while (n > 0) {
        ssize_t r = io->writing ? pwrite(io->fd, p, (size_t)n, (off_t)off)
                                : pread(io->fd, p, (size_t)n, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            io->sys_errno = r < 0 ? errno : ENODATA;
            return -1;
        }
        p += r;
        off += r;
        n -= r;
    }
    return 0;
}

/* The host buffer's strides for slab b, dense in the file's element order. */
static void host_strides(const npy_io *io, const dg_box *b, int64_t *hs)
{
    int64_t s = io->isz;
    int i;
    for (i = 0; i < b->ndim; i++) {
        const int ax = io->fortran ? i : b->ndim - 1 - i;
        hs[ax] = s;
        s *= dg_range_len(b->r[ax]);
    }
}

/* Every run of slab b (its elements consecutive in the file) between the
 * file and the host buffer at p. */
static int io_slab(npy_io *io, const dg_box *b, char *p)
{
    const int nd = b->ndim;
    int64_t hs[DG_MAXDIM], idx[DG_MAXDIM], run = io->isz, base = io->offset;
    int outer[DG_MAXDIM], nout = 0, i, merged = 0, ax;
    host_strides(io, b, hs);
    /* merge axes from the file's innermost while the run stays consecutive */
    for (i = 0; i < nd; i++) {
        const int64_t len = dg_range_len(b->r[io->fortran ? i : nd - 1 - i]);
        ax = io->fortran ? i : nd - 1 - i;
        if (len > 1 && b->r[ax].step != 1)
            break;
        run *= len;
        merged++;
        if (b->r[ax].start != 0 || len != io->a->shape[ax]) {
            break;
        }
    }
    for (ax = 0; ax < nd; ax++)
        base += b->r[ax].start * io->fstr[ax];
    for (i = merged; i < nd; i++)
        outer[nout++] = io->fortran ? i : nd - 1 - i; /* innermost first */
    memset(idx, 0, sizeof(idx));
    for (;;) {
        int64_t foff = base, hoff = 0;
        int j;
        for (j = 0; j < nout; j++) {
            ax = outer[j];
            foff += idx[ax] * b->r[ax].step * io->fstr[ax];
            hoff += idx[ax] * hs[ax];
        }
        if (io_all(io, p + hoff, run, foff) < 0)
            return -1;
        for (j = 0; j < nout; j++) {
            ax = outer[j];
            if (++idx[ax] < dg_range_len(b->r[ax]))
                break;
            idx[ax] = 0;
        }
        if (j == nout)
            return 0;
    }
}

/* Swaps the bytes of the n elements at p (complex: of each half). */
static void swap_bytes(char *p, int64_t n, int isz, int complex_)
{
    const int unit = complex_ ? isz / 2 : isz;
    int64_t i, m = n * isz / unit;
    int k;
    for (i = 0; i < m; i++, p += unit)
        for (k = 0; k < unit / 2; k++) {
            const char t = p[k];
            p[k] = p[unit - 1 - k];
            p[unit - 1 - k] = t;
        }
}

/* The next slab of the walk into *b (its chunk into *src); 0 at the end. */
static int walk_next(npy_io *io, dg_box *b, int *src)
{
    while (io->next >= io->cur.count) {
        if (++io->k >= io->n)
            return 0;
        slabs_init(&io->cur, &io->boxes[io->k], io->isz, io->piece);
        io->next = 0;
    }
    slabs_get(&io->cur, io->next++, b);
    *src = io->src[io->k];
    return 1;
}

/* One step: slabs up to a piece, copied and written (or read and copied). */
static dg_status npy_step(void *ctx, int64_t *nbytes, int *more, dg_error *err)
{
    npy_io *io = (npy_io *)ctx;
    dg_backend_i *be = io->a->be;
    int64_t fill = 0;
    dg_status st = DG_OK;
    dg_box b;
    int src, g;
    io->ngroup = 0;
    memset(io->used, 0, (size_t)be->ndevices);
    /* gather the step's slabs: the first always, the others while they fit */
    for (;;) {
        const int64_t save_next = io->next;
        const int save_k = io->k;
        const slabs save_cur = io->cur;
        int64_t sz;
        if (!walk_next(io, &b, &src))
            break;
        sz = dg_box_size(&b) * io->isz;
        if (io->ngroup > 0 && fill + sz > io->piece) {
            io->next = save_next; /* the slab waits for the next step */
            io->k = save_k;
            io->cur = save_cur;
            break;
        }
        if (io->ngroup == io->capgroup) {
            const int cap = io->capgroup ? 2 * io->capgroup : 16;
            dg_box *nb = (dg_box *)realloc(io->gbox, (size_t)cap * sizeof(dg_box));
            int *ns;
            int64_t *no;
            if (nb)
                io->gbox = nb;
            ns = nb ? (int *)realloc(io->gsrc, (size_t)cap * sizeof(int)) : NULL;
            if (ns)
                io->gsrc = ns;
            no = ns ? (int64_t *)realloc(io->goff, (size_t)cap * sizeof(int64_t)) : NULL;
            if (!no)
                return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
            io->goff = no;
            io->capgroup = cap;
        }
        io->gbox[io->ngroup] = b;
        io->gsrc[io->ngroup] = src;
        io->goff[io->ngroup] = fill;
        io->ngroup++;
        fill += sz;
    }
    if (!io->writing) {
        for (g = 0; g < io->ngroup; g++) {
            if (io_slab(io, &io->gbox[g], io->buf + io->goff[g]) < 0)
                return dg_error_set(err, DG_ERR_VALUE, -1, "reading the file failed");
            if (io->swap)
                swap_bytes(io->buf + io->goff[g], dg_box_size(&io->gbox[g]), io->isz,
                           dg_dtype_kind(io->a->dtype) == 'c');
        }
    }
    for (g = 0; g < io->ngroup && st == DG_OK; g++) {
        int64_t hs[DG_MAXDIM];
        host_strides(io, &io->gbox[g], hs);
        st = io->writing ? dg_chunk_to_host(io->a, io->gsrc[g], &io->gbox[g],
                                            io->buf + io->goff[g], hs, io->used, err)
                         : dg_chunk_from_host(io->a, io->gsrc[g], &io->gbox[g],
                                              io->buf + io->goff[g], hs, io->used, err);
    }
    /* wait even after a failure: the copies queued use the buffer */
    st = dg_devices_sync(be, io->used, st, err);
    if (st != DG_OK)
        return st;
    if (io->writing)
        for (g = 0; g < io->ngroup; g++)
            if (io_slab(io, &io->gbox[g], io->buf + io->goff[g]) < 0)
                return dg_error_set(err, DG_ERR_VALUE, -1, "writing the file failed");
    *nbytes = fill;
    {
        /* another step if another slab follows */
        const int64_t save_next = io->next;
        const int save_k = io->k;
        const slabs save_cur = io->cur;
        *more = walk_next(io, &b, &src);
        io->next = save_next;
        io->k = save_k;
        io->cur = save_cur;
    }
    return DG_OK;
}

/* Runs the walk over io's pieces; 0, or -1 with an exception (OSError for
 * the file). */
static int npy_run(npy_io *io, const char *what, int64_t total)
{
    int r;
    io->k = -1;
    io->next = 0;
    io->cur.count = 0;
    io->buf = (char *)malloc((size_t)(io->piece < total ? io->piece : total) + 16);
    io->used = (char *)calloc((size_t)io->a->be->ndevices, 1);
    if (!io->buf || !io->used) {
        free(io->buf);
        free(io->used);
        PyErr_NoMemory();
        return -1;
    }
    r = total > 0 ? dgpy_run_steps(what, total, npy_step, io) : 0;
    if (r < 0 && io->sys_errno) {
        PyErr_Clear();
        errno = io->sys_errno;
        if (io->sys_errno == ENODATA)
            PyErr_SetString(PyExc_ValueError, "the file ends before the array's data does "
                            "(file seems not fully written?)");
        else
            PyErr_SetFromErrno(PyExc_OSError);
    }
    free(io->buf);
    free(io->used);
    free(io->gbox);
    free(io->gsrc);
    free(io->goff);
    return r;
}

/* The file strides of a's shape in C or Fortran order. */
static void file_strides(npy_io *io)
{
    int64_t s = io->isz;
    int i, nd = io->a->ndim;
    for (i = 0; i < nd; i++) {
        const int ax = io->fortran ? i : nd - 1 - i;
        io->fstr[ax] = s;
        s *= io->a->shape[ax];
    }
}

static PyObject *f_npy_write(PyObject *mod, PyObject *args)
{
    PyObject *arr;
    dg_array *a = NULL;
    dg_plan plan = {0, 0, NULL};
    dg_error err = DG_ERROR_INIT;
    npy_io io;
    int *src = NULL, k, r;
    dg_box *boxes = NULL;
    long long offset;
    (void)mod;
    memset(&io, 0, sizeof(io));
    if (!PyArg_ParseTuple(args, "O!iL", dgpy_st->array_type, &arr, &io.fd, &offset))
        return NULL;
    if (dgpy_replica((DgArrayObject *)arr, &a, &err) != DG_OK)
        return dgpy_raise(&err);
    if (dg_shape_size(a->ndim, a->shape) == 0) {
        dg_array_decref(a); /* no element */
        Py_RETURN_NONE;
    }
    if (cover_plan(a, &plan, &err) != DG_OK) {
        dg_array_decref(a);
        return dgpy_raise(&err);
    }
    src = (int *)malloc(((size_t)plan.ncopies + 1) * sizeof(int));
    boxes = (dg_box *)malloc(((size_t)plan.ncopies + 1) * sizeof(dg_box));
    if (!src || !boxes) {
        r = -1;
        PyErr_NoMemory();
    } else {
        int64_t total = 0;
        int n = 0;
        for (k = 0; k < plan.ncopies; k++) {
            if (!local_dev(a->be, a->chunks[plan.copies[k].src].device))
                continue; /* another process writes it */
            src[n] = plan.copies[k].src;
            boxes[n] = plan.copies[k].box;
            total += dg_box_size(&boxes[n++]);
        }
        io.a = a;
        io.offset = offset;
        io.writing = 1;
        io.isz = dg_dtype_size(a->dtype);
        io.n = n;
        io.src = src;
        io.boxes = boxes;
        io.piece = dgpy_piece_bytes();
        int was;
        file_strides(&io);
        was = dg_dist_private_reads(a->be, 1); /* this process's chunks, read here alone */
        r = npy_run(&io, "devices to file", total * io.isz);
        dg_dist_private_reads(a->be, was);
    }
    free(src);
    free(boxes);
    dg_plan_free(&plan);
    dg_array_decref(a);
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *f_npy_read(PyObject *mod, PyObject *args)
{
    PyObject *arr;
    dg_array *a;
    npy_io io;
    int *src = NULL, k, r, fortran, swap;
    dg_box *boxes = NULL;
    long long offset;
    char what[64];
    (void)mod;
    memset(&io, 0, sizeof(io));
    if (!PyArg_ParseTuple(args, "O!iLpp", dgpy_st->array_type, &arr, &io.fd, &offset,
                          &fortran, &swap))
        return NULL;
    a = ((DgArrayObject *)arr)->arr;
    if (a->mode != DG_MODE_REPLICA) {
        PyErr_SetString(PyExc_ValueError, "_npy_read needs an array in replica mode");
        return NULL;
    }
    src = (int *)malloc(((size_t)a->nchunks + 1) * sizeof(int));
    boxes = (dg_box *)malloc(((size_t)a->nchunks + 1) * sizeof(dg_box));
    if (!src || !boxes) {
        r = -1;
        PyErr_NoMemory();
    } else {
        int64_t total = 0;
        int ndev = 0;
        char *seen = (char *)calloc((size_t)a->be->ndevices, 1);
        int n = 0;
        for (k = 0; k < a->nchunks; k++) {
            if (!local_dev(a->be, a->chunks[k].device))
                continue; /* another process reads it */
            src[n] = k;
            boxes[n] = a->chunks[k].box;
            total += dg_box_size(&boxes[n++]);
            if (seen && !seen[a->chunks[k].device]) {
                seen[a->chunks[k].device] = 1;
                ndev++;
            }
        }
        free(seen);
        io.a = a;
        io.offset = offset;
        io.fortran = fortran;
        io.swap = swap;
        io.isz = dg_dtype_size(a->dtype);
        io.n = n;
        io.src = src;
        io.boxes = boxes;
        io.piece = dgpy_piece_bytes();
        file_strides(&io);
        snprintf(what, sizeof what, "file to %d device%s", ndev, ndev == 1 ? "" : "s");
        r = npy_run(&io, what, total * io.isz);
    }
    free(src);
    free(boxes);
    if (r < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* _default_layout(shape, dtype) -> [(device, box), ...]: how a new array of
 * that shape is laid out when no index map is given. */
static PyObject *f_default_layout(PyObject *mod, PyObject *args)
{
    PyObject *shapeo, *dtypeo, *res;
    int nd, dt, n;
    int64_t shape[DG_MAXDIM];
    dg_plan_chunk *l;
    (void)mod;
    if (!PyArg_ParseTuple(args, "OO", &shapeo, &dtypeo))
        return NULL;
    if (dgpy_parse_shape(shapeo, &nd, shape) < 0 || dgpy_dtype_from_obj(dtypeo, &dt) < 0)
        return NULL;
    if (dgpy_default_layout(nd, shape, dt < 0 ? DG_FLOAT64 : dt, &l, &n) < 0)
        return NULL;
    res = dgpy_chunks_to_py(l, n);
    free(l);
    return res;
}

static PyObject *f_get_piece_bytes(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyLong_FromLongLong((long long)dgpy_piece_bytes());
}

PyMethodDef dgpy_chunkio_methods[] = {
    {"_get_piece_bytes", f_get_piece_bytes, METH_NOARGS,
     "the bytes of one piece of a host copy (see _piece_bytes)"},
    {"_default_layout", f_default_layout, METH_VARARGS,
     "_default_layout(shape, dtype) -> the layout of a new array"},
    {"_chunk_layout", f_chunk_layout, METH_O, "[(device, box), ...] of the chunks as they are"},
    {"_chunk_get", f_chunk_get, METH_VARARGS, "_chunk_get(a, i, box=None, private=False) -> ndarray"},
    {"_chunk_lend", f_chunk_lend, METH_VARARGS,
     "_chunk_lend(a, writable, i=-1) -> [(device, box, address, byte_strides), ...]"},
    {"_chunk_copy", f_chunk_copy, METH_VARARGS, "_chunk_copy(a, i): a copy of chunk i"},
    {"_chunk_put", f_chunk_put, METH_VARARGS, "_chunk_put(a, i, host, box=None)"},
    {"_chunk_cover", f_chunk_cover, METH_O, "[(chunk, box), ...]: disjoint, covering a"},
    {"_npy_write", f_npy_write, METH_VARARGS, "_npy_write(a, fd, offset)"},
    {"_npy_read", f_npy_read, METH_VARARGS,
     "_npy_read(a, fd, offset, fortran_order, byteswap)"},
    {NULL, NULL, 0, NULL},
};
