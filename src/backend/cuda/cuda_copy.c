/* copy(): strided N-d copies between buffers of one GPU, between GPUs, and
 * between a GPU and host memory (the last in cuda_hostcopy.c).
 *
 * Device to device: a dense copy is one cudaMemcpyAsync (cudaMemcpyPeerAsync
 * across GPUs, which uses NVLink when peer access is on); anything else runs
 * on the stream's device, reading or writing the peer's memory directly when
 * peer access is on: the row copy kernel where the innermost axis is dense on
 * both sides (16-byte stores, cu_copy_rows), else the strided copy kernel.  Between GPUs without peer
 * access, a strided copy goes through host memory (slow, but only on machines
 * whose GPUs cannot reach each other). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_internal.h"

/* Largest power of two <= 16 dividing isz and every address of the copy. */
static int64_t copy_unit(int ndim, int64_t (*st)[DG_MAXDIM], int isz, const char *src,
                         const char *dst)
{
    int64_t w = 16;
    int a;
    while (w > 1) {
        int ok = isz % w == 0 && (uintptr_t)src % (uint64_t)w == 0 &&
                 (uintptr_t)dst % (uint64_t)w == 0;
        for (a = 0; a < ndim && ok; a++)
            ok = st[0][a] % w == 0 && st[1][a] % w == 0;
        if (ok)
            break;
        w /= 2;
    }
    return w;
}

/* DGARRAY_COPY_ROWS, read once: 0 turns the row copy off, 1 loads a shifted
 * source word by word, 2 (the default) by aligned vectors and the next lane's
 * words (a measuring aid: kernels/copy.cu). */
static int copy_rows_mode(void)
{
    static _Atomic int mode = -1;
    int m = atomic_load_explicit(&mode, memory_order_relaxed);
    if (m < 0) {
        const char *e = getenv("DGARRAY_COPY_ROWS");
        m = e && (e[0] == '0' || e[0] == '1') && e[1] == '\0' ? e[0] - '0' : 2;
        atomic_store_explicit(&mode, m, memory_order_relaxed);
    }
    return m;
}

int cu_copy_rows(cu_be *b, int dev, cudaStream_t s, int ndim, const int64_t *shape,
                 int64_t (*st)[DG_MAXDIM], int isz, const char *src, char *dst,
                 cudaError_t *ce)
{
    dg_cu_copy_args a;
    int64_t n = 1;
    int d, mode = copy_rows_mode();
    if (!mode || ndim < 1 || st[0][ndim - 1] != isz || st[1][ndim - 1] != isz ||
        shape[ndim - 1] * isz < 256 || (shape[ndim - 1] * isz) % 4 ||
        (uintptr_t)src % 4u || (uintptr_t)dst % 4u)
        return 0;
    memset(&a, 0, sizeof a);
    for (d = 0; d < ndim; d++) {
        if (d < ndim - 1 && (st[0][d] % 4 || st[1][d] % 4))
            return 0;
        a.shape[d] = shape[d];
        a.strides[d][0] = st[0][d];
        a.strides[d][1] = st[1][d];
        n *= shape[d];
    }
    a.ndim = ndim;
    a.itemsize = isz;
    a.n = n;
    a.src = src;
    a.dst = dst;
    *ce = dg_cu_copy_rows_launch(&a, mode, (unsigned)b->devs[dev].nsm * 8u, s);
    return 1;
}

dg_status cu_copy_kernel(cu_be *b, int dev, cudaStream_t s, int ndim, const int64_t *shape,
                         int64_t (*st)[DG_MAXDIM], int isz, const char *src, char *dst,
                         int64_t base, int64_t count, dg_error *err)
{
    dg_cu_copy_args a;
    int64_t w, r;
    int d;
    cudaError_t ce;

    /* the whole space (not a range of it, as a host copy's pieces are) */
    if (base == 0 && count == dg_shape_size(ndim, shape) &&
        cu_copy_rows(b, dev, s, ndim, shape, st, isz, src, dst, &ce))
        return ce == cudaSuccess ? DG_OK : cu_fail(err, ce, dev, 0, "the row copy kernel");
    memset(&a, 0, sizeof a);
    a.ndim = ndim;
    for (d = 0; d < ndim; d++) {
        a.shape[d] = shape[d];
        a.strides[d][0] = st[0][d];
        a.strides[d][1] = st[1][d];
    }
    w = copy_unit(ndim, st, isz, src, dst);
    if (w < isz) {
        /* items moved as isz / w units of w bytes: one more, innermost axis */
        if (ndim >= DG_MAXDIM)
            return dg_error_set(err, DG_ERR_NOTIMPL, dev,
                                "a copy of %d-d unaligned %d-byte items on the GPU", ndim, isz);
        a.shape[ndim] = isz / w;
        a.strides[ndim][0] = a.strides[ndim][1] = w;
        a.ndim = ++ndim;
        base *= isz / w;
        count *= isz / w;
    }
    /* a dense innermost axis moves in wider units where alignment allows */
    r = 1;
    if (a.strides[ndim - 1][0] == w && a.strides[ndim - 1][1] == w) {
        int64_t v;
        for (v = 16; v > w; v /= 2) {
            int64_t q = v / w;
            int ok = a.shape[ndim - 1] % q == 0 && base % q == 0 && count % q == 0 &&
                     (uintptr_t)src % (uint64_t)v == 0 && (uintptr_t)dst % (uint64_t)v == 0;
            for (d = 0; d < ndim - 1 && ok; d++)
                ok = a.strides[d][0] % v == 0 && a.strides[d][1] % v == 0;
            if (ok) {
                r = q;
                break;
            }
        }
    }
    if (r > 1) {
        a.shape[ndim - 1] /= r;
        a.strides[ndim - 1][0] = a.strides[ndim - 1][1] = w * r;
        base /= r;
        count /= r;
        w *= r;
    }
    a.itemsize = (int32_t)w;
    a.src = src;
    a.dst = dst;
    a.base = base;
    a.n = count;
    ce = dg_cu_copy_launch(&a, cu_blocks(count, (int64_t)b->devs[dev].nsm * 64), s);
    if (ce != cudaSuccess)
        return cu_fail(err, ce, dev, 0, "the strided copy kernel");
    return DG_OK;
}

/* A strided copy between GPUs that cannot access each other: device to host
 * (dense), host to device.  (dev, stream) is one of the two sides; the other
 * side's stream of the same kind is used for its half, ordered after the
 * work enqueued so far on (dev, stream), and (dev, stream) is ordered after
 * it, so that the copy sits in (dev, stream)'s order as the contract says. */
static dg_status copy_bounce(cu_be *b, int dev, int stream, int ndim, const int64_t *shape,
                             int64_t (*st)[DG_MAXDIM], int isz, const dg_copy_desc *c,
                             dg_error *err)
{
    int64_t hs[2][DG_MAXDIM], n = 1, dense = isz;
    int other = dev == c->src_dev ? c->dst_dev : c->src_dev, a;
    dg_status rc;
    char *h;

    for (a = ndim - 1; a >= 0; a--) {
        n *= shape[a];
        hs[0][a] = st[0][a];
        hs[1][a] = dense;
        dense *= shape[a];
    }
    h = (char *)malloc((size_t)(n * isz));
    if (h == NULL)
        return dg_error_set(err, DG_ERR_NOMEM, dev, "out of host memory");
    /* the other device starts after what (dev, stream) waited for */
    rc = cu_wait(&b->iface, other, stream, cu_pos(&b->iface, dev, stream), err);
    if (rc == DG_OK)
        rc = cu_hc_copy(b, c->src_dev, stream, ndim, shape, hs, isz, c->src, h, 0, err);
    if (rc == DG_OK) {
        cu_bump(b, c->src_dev, stream);
        for (a = 0; a < ndim; a++) {
            hs[0][a] = hs[1][a];
            hs[1][a] = st[1][a];
        }
        rc = cu_hc_copy(b, c->dst_dev, stream, ndim, shape, hs, isz, h, c->dst, 1, err);
        cu_bump(b, c->dst_dev, stream);
    }
    free(h);
    if (rc == DG_OK)
        rc = cu_wait(&b->iface, dev, stream, cu_pos(&b->iface, other, stream), err);
    return rc;
}

dg_status cu_copy(dg_backend_i *be, int dev, int stream, const dg_copy_desc *c, dg_error *err)
{
    cu_be *b = cu_of(be);
    int64_t shape[DG_MAXDIM], st[2][DG_MAXDIM], n = 1;
    int ndim, a, isz = c->itemsize;
    cudaStream_t s;
    dg_status rc = DG_OK;
    cudaError_t ce;

    DG_CHECK(cu_check_stream(b, dev, stream, "copy", err));
    if (dev != c->src_dev && dev != c->dst_dev)
        return dg_error_set(err, DG_ERR_INTERNAL, dev,
                            "a copy from device %d to device %d enqueued on GPU %d", c->src_dev,
                            c->dst_dev, dev);
    if (c->src_dev < DG_HOST || c->src_dev >= b->ndev || c->dst_dev < DG_HOST ||
        c->dst_dev >= b->ndev || isz <= 0 || c->ndim < 0 || c->ndim > DG_MAXDIM)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed copy (devices %d -> %d, "
                            "itemsize %d, ndim %d)", c->src_dev, c->dst_dev, isz, c->ndim);
    for (a = 0; a < c->ndim; a++) {
        if (c->shape[a] < 0)
            return dg_error_set(err, DG_ERR_INTERNAL, dev, "a copy of negative shape");
        n *= c->shape[a];
        shape[a] = c->shape[a];
        st[0][a] = c->src_strides[a];
        st[1][a] = c->dst_strides[a];
    }
    if (n == 0)
        return DG_OK;
    ndim = cu_coalesce(c->ndim, shape, 2, st);
    if (c->src_dev == DG_HOST || c->dst_dev == DG_HOST) {
        rc = cu_hc_copy(b, dev, stream, ndim, shape, st, isz, c->src, c->dst,
                        c->src_dev == DG_HOST, err);
        cu_bump(b, dev, stream);
        return rc;
    }
    DG_CHECK(cu_set_device(b, dev, err));
    s = b->devs[dev].st[stream].s;
    if (n == 1 || (ndim == 1 && st[0][0] == isz && st[1][0] == isz)) {
        size_t bytes = (size_t)(n * isz);
        const int one_gpu = b->devs[c->src_dev].id == b->devs[c->dst_dev].id; /* logical too */
        if (one_gpu)
            ce = cudaMemcpyAsync(c->dst, c->src, bytes, cudaMemcpyDeviceToDevice, s);
        else
            ce = cudaMemcpyPeerAsync(c->dst, b->devs[c->dst_dev].id, c->src,
                                     b->devs[c->src_dev].id, bytes, s);
        if (ce != cudaSuccess)
            return cu_fail(err, ce, dev, 0, one_gpu ? "cudaMemcpyAsync" : "cudaMemcpyPeerAsync");
    } else if (c->src_dev == c->dst_dev ||
               b->peer[dev * b->ndev + (dev == c->src_dev ? c->dst_dev : c->src_dev)]) {
        rc = cu_copy_kernel(b, dev, s, ndim, shape, st, isz, c->src, c->dst, 0, n, err);
    } else {
        return copy_bounce(b, dev, stream, ndim, shape, st, isz, c, err);
    }
    cu_bump(b, dev, stream);
    return rc;
}

dg_status cu_exchange_copies(cu_be *b, const dg_xfer *x, int n, dg_error *err)
{
    int i;
    /* every destination waits for its source's side first, then every copy
     * is enqueued, then every source waits for its copy: waits made between
     * the copies would order them (a copy from GPU 1 to GPU 0 would wait
     * for one from GPU 0 to GPU 1 on GPU 1's stream), and the two
     * directions of a link would not run at once */
    for (i = 0; i < n; i++)
        if (x[i].nbytes > 0)
            DG_CHECK(cu_wait(&b->iface, x[i].dst_dev, DG_STREAM_TRANSFER,
                             cu_pos(&b->iface, x[i].src_dev, DG_STREAM_TRANSFER), err));
    for (i = 0; i < n; i++) {
        dg_copy_desc c;
        if (x[i].nbytes == 0)
            continue;
        memset(&c, 0, sizeof(c));
        c.ndim = 1;
        c.itemsize = 1;
        c.shape[0] = (int64_t)x[i].nbytes;
        c.src_strides[0] = c.dst_strides[0] = 1;
        c.src_dev = x[i].src_dev;
        c.src = (const char *)x[i].src;
        c.dst_dev = x[i].dst_dev;
        c.dst = (char *)x[i].dst;
        DG_CHECK(cu_copy(&b->iface, x[i].dst_dev, DG_STREAM_TRANSFER, &c, err));
    }
    for (i = 0; i < n; i++)
        if (x[i].nbytes > 0)
            DG_CHECK(cu_wait(&b->iface, x[i].src_dev, DG_STREAM_TRANSFER,
                             cu_pos(&b->iface, x[i].dst_dev, DG_STREAM_TRANSFER), err));
    return DG_OK;
}
