/* fft(): FFTs on one GPU (dg_fft.h) through cuFFT.
 *
 * A transform whose axes and batch the advanced data layout of cuFFT can
 * describe (positive strides in whole elements, the transformed axes nested
 * in one another, one batch axis, the others walked here) runs on the
 * operands where they are: a rank-1 to rank-3 plan, so a whole plane held
 * by one GPU is one 2-d cuFFT transform.  Otherwise the side that does not
 * fit is packed into (or unpacked from) a dense temporary by the copy
 * kernel; a C2R's input always is, since cuFFT overwrites it.  A scale other
 * than 1 is one elementwise multiply of the output afterwards.
 *
 * Plans are cached per device (CU_FFT_PLANS, least recently used out), keyed
 * by everything cufftMakePlanMany64 takes; they hold no work area (auto
 * allocation off): each execution takes its work area from the device's
 * pool and gives it back in stream order. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cufft.h>

#include "cuda_internal.h"

#define CU_FFT_PLANS 16

/* What a plan is made of. */
typedef struct fft_key {
    int type, rank;
    long long n[DG_FFT_MAXRANK], inembed[DG_FFT_MAXRANK], onembed[DG_FFT_MAXRANK];
    long long istride, idist, ostride, odist, batch;
} fft_key;

typedef struct fft_plan {
    int used;
    unsigned long long tick;
    fft_key key;
    cufftHandle h;
    size_t work;
} fft_plan;

struct cu_fft {
    pthread_mutex_t mu;
    int ndev;
    fft_plan *plans; /* [ndev * CU_FFT_PLANS] [mu] */
    unsigned long long tick;
};

static pthread_mutex_t fft_init_mu = PTHREAD_MUTEX_INITIALIZER;

static dg_status fft_fail(dg_error *err, cufftResult r, int dev, const char *what)
{
    (void)cudaGetLastError();
    if (r == CUFFT_ALLOC_FAILED)
        return dg_error_set(err, DG_ERR_DEVICE_NOMEM, dev, "out of memory on device %d in %s",
                            dev, what);
    dg_error_set(err, DG_ERR_DEVICE, dev, "cuFFT error %d in %s on device %d", (int)r, what,
                 dev);
    if (err != NULL && err->code == DG_ERR_DEVICE && err->backend_code == 0)
        err->backend_code = (long)r;
    return DG_ERR_DEVICE;
}

static dg_status fft_state(cu_be *b, struct cu_fft **out, dg_error *err)
{
    struct cu_fft *f = NULL;
    pthread_mutex_lock(&fft_init_mu);
    f = b->fft;
    if (f == NULL) {
        f = (struct cu_fft *)calloc(1, sizeof(*f));
        if (f != NULL) {
            f->plans = (fft_plan *)calloc((size_t)b->ndev * CU_FFT_PLANS, sizeof(fft_plan));
            if (f->plans == NULL) {
                free(f);
                f = NULL;
            } else {
                f->ndev = b->ndev;
                pthread_mutex_init(&f->mu, NULL);
                b->fft = f;
            }
        }
    }
    pthread_mutex_unlock(&fft_init_mu);
    if (f == NULL)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory for cuFFT");
    *out = f;
    return DG_OK;
}

void cu_fft_destroy(cu_be *b)
{
    struct cu_fft *f = b->fft;
    int i, j;
    if (f == NULL)
        return;
    for (i = 0; i < f->ndev; i++) {
        if (cudaSetDevice(b->devs[i].id) != cudaSuccess)
            (void)cudaGetLastError();
        for (j = 0; j < CU_FFT_PLANS; j++)
            if (f->plans[i * CU_FFT_PLANS + j].used)
                cufftDestroy(f->plans[i * CU_FFT_PLANS + j].h);
    }
    pthread_mutex_destroy(&f->mu);
    free(f->plans);
    free(f);
    b->fft = NULL;
}

/* The plan of key k on device dev (current), made now if not cached.  Call
 * with f->mu held. */
static dg_status plan_of(struct cu_fft *f, int dev, const fft_key *k, fft_plan **out,
                         dg_error *err)
{
    fft_plan *row = f->plans + (size_t)dev * CU_FFT_PLANS, *p = NULL;
    cufftResult r;
    int j;
    for (j = 0; j < CU_FFT_PLANS; j++)
        if (row[j].used && memcmp(&row[j].key, k, sizeof *k) == 0) {
            row[j].tick = ++f->tick;
            *out = &row[j];
            return DG_OK;
        }
    /* an unused slot, else the least recently used plan */
    for (j = 0; j < CU_FFT_PLANS; j++) {
        if (!row[j].used) {
            p = &row[j];
            break;
        }
        if (p == NULL || row[j].tick < p->tick)
            p = &row[j];
    }
    if (p->used) {
        cufftDestroy(p->h);
        p->used = 0;
    }
    memset(p, 0, sizeof *p);
    p->key = *k;
    r = cufftCreate(&p->h);
    if (r != CUFFT_SUCCESS)
        return fft_fail(err, r, dev, "cufftCreate");
    r = cufftSetAutoAllocation(p->h, 0);
    if (r == CUFFT_SUCCESS)
        r = cufftMakePlanMany64(p->h, k->rank, (long long *)k->n, (long long *)k->inembed,
                                k->istride, k->idist, (long long *)k->onembed, k->ostride,
                                k->odist, (cufftType)k->type, k->batch, &p->work);
    if (r != CUFFT_SUCCESS) {
        cufftDestroy(p->h);
        return fft_fail(err, r, dev, "cufftMakePlanMany64");
    }
    p->used = 1;
    p->tick = ++f->tick;
    *out = p;
    return DG_OK;
}

/* One side of a transform: a pointer, the byte strides of the transformed
 * axes and of the batch. */
typedef struct side {
    char *p;
    int64_t st[DG_FFT_MAXRANK];
    int64_t bs[DG_MAXDIM];
} side;

/* cuFFT's layout of side s (element size esz, logical lengths len[]):
 * stride, embeds and the batch axis `bax` distance; 0 if it has none. */
static int layout_of(const side *s, int rank, const int64_t *len, int64_t esz, int bax,
                     long long *stride, long long *embed, long long *dist)
{
    int q;
    for (q = 0; q < rank; q++)
        if (s->st[q] <= 0 || s->st[q] % esz != 0)
            return 0;
    *stride = s->st[rank - 1] / esz;
    embed[0] = len[0];
    for (q = 1; q < rank; q++) {
        if (s->st[q - 1] % s->st[q] != 0 || s->st[q - 1] / s->st[q] < len[q])
            return 0;
        embed[q] = s->st[q - 1] / s->st[q];
    }
    if (bax < 0) {
        *dist = 1;
        return 1;
    }
    if (s->bs[bax] <= 0 || s->bs[bax] % esz != 0)
        return 0;
    *dist = s->bs[bax] / esz;
    return 1;
}

/* A dense C-order layout over (batch..., transformed axes) of element size
 * esz in tmp: strides into s. */
static void dense_side(char *tmp, const dg_fft_desc *d, const int64_t *len, int64_t esz,
                       side *s)
{
    int64_t acc = esz;
    int q;
    s->p = tmp;
    for (q = d->rank - 1; q >= 0; q--) {
        s->st[q] = acc;
        acc *= len[q];
    }
    for (q = d->nbatch - 1; q >= 0; q--) {
        s->bs[q] = acc;
        acc *= d->batch[q];
    }
}

/* Copies between a side and a dense temporary (pack: from `from` to `to`). */
static dg_status copy_side(cu_be *b, int dev, cudaStream_t s, const dg_fft_desc *d,
                           const int64_t *len, int esz, const side *from, const side *to,
                           dg_error *err)
{
    int64_t shape[DG_MAXDIM], st[2][DG_MAXDIM], total = 1;
    int nd = 0, q;
    for (q = 0; q < d->nbatch; q++) {
        shape[nd] = d->batch[q];
        st[0][nd] = from->bs[q];
        st[1][nd++] = to->bs[q];
    }
    for (q = 0; q < d->rank; q++) {
        shape[nd] = len[q];
        st[0][nd] = from->st[q];
        st[1][nd++] = to->st[q];
    }
    for (q = 0; q < nd; q++)
        total *= shape[q];
    nd = cu_coalesce(nd, shape, 2, st);
    return cu_copy_kernel(b, dev, s, nd, shape, st, esz, from->p, to->p, 0, total, err);
}

/* The cuFFT type of d. */
static int fft_type(const dg_fft_desc *d)
{
    const int dbl = d->dtype == DG_COMPLEX128;
    switch (d->kind) {
    case DG_FFT_R2C: return dbl ? CUFFT_D2Z : CUFFT_R2C;
    case DG_FFT_C2R: return dbl ? CUFFT_Z2D : CUFFT_C2R;
    default: return dbl ? CUFFT_Z2Z : CUFFT_C2C;
    }
}

/* Runs the plan p on (in, out) with a work area from the pool. */
static dg_status exec_plan(cu_be *b, int dev, cudaStream_t s, fft_plan *p, const dg_fft_desc *d,
                           char *in, char *out, dg_error *err)
{
    void *work = NULL;
    cufftResult r;
    dg_status st;
    r = cufftSetStream(p->h, s);
    if (r != CUFFT_SUCCESS)
        return fft_fail(err, r, dev, "cufftSetStream");
    if (p->work)
        DG_CHECK(b->iface.alloc(&b->iface, dev, p->work, &work, err));
    r = cufftSetWorkArea(p->h, work);
    if (r == CUFFT_SUCCESS) {
        const int dir = d->forward ? CUFFT_FORWARD : CUFFT_INVERSE;
        switch (p->key.type) {
        case CUFFT_C2C: r = cufftExecC2C(p->h, (cufftComplex *)in, (cufftComplex *)out, dir); break;
        case CUFFT_Z2Z:
            r = cufftExecZ2Z(p->h, (cufftDoubleComplex *)in, (cufftDoubleComplex *)out, dir);
            break;
        case CUFFT_R2C: r = cufftExecR2C(p->h, (cufftReal *)in, (cufftComplex *)out); break;
        case CUFFT_D2Z:
            r = cufftExecD2Z(p->h, (cufftDoubleReal *)in, (cufftDoubleComplex *)out);
            break;
        case CUFFT_C2R: r = cufftExecC2R(p->h, (cufftComplex *)in, (cufftReal *)out); break;
        default:
            r = cufftExecZ2D(p->h, (cufftDoubleComplex *)in, (cufftDoubleReal *)out);
            break;
        }
    }
    st = r == CUFFT_SUCCESS ? DG_OK : fft_fail(err, r, dev, "cufftExec");
    if (work)
        b->iface.release(&b->iface, dev, work);
    return st;
}

/* The output multiplied by d->scale in place (the backend's elementwise
 * multiply by a scalar). */
static dg_status scale_out(dg_backend_i *be, int dev, int stream, const dg_fft_desc *d,
                           const int64_t *olen, int odt, dg_error *err)
{
    dg_ew_desc ew;
    int dts[3] = {odt, odt, odt}, q;
    memset(&ew, 0, sizeof ew);
    ew.loop = dg_loop_find(DG_UF_multiply, dts);
    if (ew.loop < 0)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "no multiply loop for %s",
                            dg_dtype_name(odt));
    ew.nop = 3;
    ew.data[0] = ew.data[2] = d->dst;
    ew.data[1] = NULL;
    if (odt == DG_FLOAT32 || odt == DG_COMPLEX64) {
        float v = (float)d->scale;
        memcpy(ew.scalar[1], &v, sizeof v);
    } else {
        memcpy(ew.scalar[1], &d->scale, sizeof d->scale);
    }
    for (q = 0; q < d->nbatch; q++) {
        ew.shape[ew.ndim] = d->batch[q];
        ew.strides[0][ew.ndim] = ew.strides[2][ew.ndim] = d->dst_bs[q];
        ew.ndim++;
    }
    for (q = 0; q < d->rank; q++) {
        ew.shape[ew.ndim] = olen[q];
        ew.strides[0][ew.ndim] = ew.strides[2][ew.ndim] = d->dst_strides[q];
        ew.ndim++;
    }
    return cu_elementwise(be, dev, stream, &ew, err);
}

/* d with its batch axes of extent 1 dropped and neighbours that both sides
 * walk as one merged. */
static void coalesce_batch(dg_fft_desc *d)
{
    int q, k = 0;
    for (q = 0; q < d->nbatch; q++) {
        if (d->batch[q] == 1)
            continue;
        if (k > 0 && d->src_bs[k - 1] == d->src_bs[q] * d->batch[q] &&
            d->dst_bs[k - 1] == d->dst_bs[q] * d->batch[q]) {
            d->batch[k - 1] *= d->batch[q];
            d->src_bs[k - 1] = d->src_bs[q];
            d->dst_bs[k - 1] = d->dst_bs[q];
            continue;
        }
        d->batch[k] = d->batch[q];
        d->src_bs[k] = d->src_bs[q];
        d->dst_bs[k++] = d->dst_bs[q];
    }
    d->nbatch = k;
}

/* The whole transform on stream s of the current device dev. */
static dg_status run(dg_backend_i *be, int dev, int stream, const dg_fft_desc *d0, dg_error *err)
{
    cu_be *b = cu_of(be);
    cudaStream_t s = b->devs[dev].st[stream].s;
    dg_fft_desc dd = *d0;
    const dg_fft_desc *d = &dd;
    const int cdt = d->dtype, rdt = cdt == DG_COMPLEX64 ? DG_FLOAT32 : DG_FLOAT64;
    const int idt = d->kind == DG_FFT_R2C ? rdt : cdt, odt = d->kind == DG_FFT_C2R ? rdt : cdt;
    const int iesz = dg_dtype_size(idt), oesz = dg_dtype_size(odt), last = d->rank - 1;
    int64_t ilen[DG_FFT_MAXRANK], olen[DG_FFT_MAXRANK], nb = 1;
    int64_t idx[DG_MAXDIM] = {0};
    side in, out, tin, tout;
    struct cu_fft *f = NULL;
    fft_plan *p = NULL;
    fft_key k;
    void *itmp = NULL, *otmp = NULL;
    dg_status st = DG_OK;
    int q, bax = -1, pack_in, pack_out;

    coalesce_batch(&dd);
    for (q = 0; q < d->rank; q++)
        ilen[q] = olen[q] = d->n[q];
    if (d->kind == DG_FFT_R2C)
        olen[last] = d->n[last] / 2 + 1;
    if (d->kind == DG_FFT_C2R)
        ilen[last] = d->n[last] / 2 + 1;
    in.p = (char *)d->src;
    out.p = d->dst;
    memcpy(in.st, d->src_strides, sizeof in.st);
    memcpy(out.st, d->dst_strides, sizeof out.st);
    memcpy(in.bs, d->src_bs, sizeof in.bs);
    memcpy(out.bs, d->dst_bs, sizeof out.bs);
    for (q = 0; q < d->nbatch; q++) {
        nb *= d->batch[q];
        if (bax < 0 || d->batch[q] > d->batch[bax])
            bax = q;
    }
    memset(&k, 0, sizeof k);
    for (q = 0; q < d->rank; q++)
        k.n[q] = d->n[q];
    k.type = fft_type(d);
    k.rank = d->rank;
    pack_in = d->kind == DG_FFT_C2R ||
              !layout_of(&in, d->rank, ilen, iesz, bax, &k.istride, k.inembed, &k.idist);
    pack_out = !layout_of(&out, d->rank, olen, oesz, bax, &k.ostride, k.onembed, &k.odist);
    if (pack_in || pack_out) {
        /* dense temporaries on the side(s) that need one (their batch laid
         * out as the desc's, so both are walked alike) */
        if (pack_in) {
            int64_t n = nb * iesz;
            for (q = 0; q < d->rank; q++)
                n *= ilen[q];
            DG_CHECK(b->iface.alloc(be, dev, (size_t)n, &itmp, err));
            dense_side((char *)itmp, d, ilen, iesz, &tin);
            st = copy_side(b, dev, s, d, ilen, iesz, &in, &tin, err);
        } else {
            tin = in;
        }
        if (st == DG_OK && pack_out) {
            int64_t n = nb * oesz;
            for (q = 0; q < d->rank; q++)
                n *= olen[q];
            st = b->iface.alloc(be, dev, (size_t)n, &otmp, err);
            if (st == DG_OK)
                dense_side((char *)otmp, d, olen, oesz, &tout);
        } else {
            tout = out;
        }
        if (st == DG_OK) {
            in = tin;
            out = tout;
            if (!layout_of(&in, d->rank, ilen, iesz, bax, &k.istride, k.inembed, &k.idist) ||
                !layout_of(&out, d->rank, olen, oesz, bax, &k.ostride, k.onembed, &k.odist))
                st = dg_error_set(err, DG_ERR_INTERNAL, dev, "an FFT layout cuFFT cannot take "
                                  "after packing");
        }
    }
    if (st == DG_OK) {
        k.batch = bax < 0 ? 1 : d->batch[bax];
        st = fft_state(b, &f, err);
    }
    if (st == DG_OK) {
        pthread_mutex_lock(&f->mu);
        st = plan_of(f, dev, &k, &p, err);
        /* the other batch axes, walked here */
        while (st == DG_OK) {
            char *ip = in.p, *op = out.p;
            for (q = 0; q < d->nbatch; q++)
                if (q != bax) {
                    ip += idx[q] * in.bs[q];
                    op += idx[q] * out.bs[q];
                }
            st = exec_plan(b, dev, s, p, d, ip, op, err);
            for (q = d->nbatch - 1; q >= 0; q--) {
                if (q == bax)
                    continue;
                if (++idx[q] < d->batch[q])
                    break;
                idx[q] = 0;
            }
            if (q < 0)
                break;
        }
        pthread_mutex_unlock(&f->mu);
    }
    if (st == DG_OK && otmp) {
        side dst;
        dst.p = d->dst;
        memcpy(dst.st, d->dst_strides, sizeof dst.st);
        memcpy(dst.bs, d->dst_bs, sizeof dst.bs);
        st = copy_side(b, dev, s, d, olen, oesz, &out, &dst, err);
    }
    if (itmp)
        b->iface.release(be, dev, itmp);
    if (otmp)
        b->iface.release(be, dev, otmp);
    if (st == DG_OK && d->scale != 1.0)
        st = scale_out(be, dev, stream, d, olen, odt, err);
    return st;
}

dg_status cu_fft(dg_backend_i *be, int dev, int stream, const dg_fft_desc *d, dg_error *err)
{
    cu_be *b = cu_of(be);
    dg_status st;
    int q;
    DG_CHECK(cu_check_stream(b, dev, stream, "fft", err));
    if (stream != DG_STREAM_COMPUTE)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "an FFT on stream %d: its work area is "
                            "ordered on the compute stream", stream);
    if (d->rank < 1 || d->rank > DG_FFT_MAXRANK || d->nbatch < 0 || d->nbatch > DG_MAXDIM ||
        (d->dtype != DG_COMPLEX64 && d->dtype != DG_COMPLEX128) || d->kind < DG_FFT_C2C ||
        d->kind > DG_FFT_C2R)
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "a malformed FFT (kind %d, rank %d)",
                            d->kind, d->rank);
    for (q = 0; q < d->nbatch; q++)
        if (d->batch[q] <= 0)
            return DG_OK;
    for (q = 0; q < d->rank; q++)
        if (d->n[q] <= 0)
            return DG_OK;
    DG_CHECK(cu_set_device(b, dev, err));
    st = run(be, dev, stream, d, err);
    cu_bump(b, dev, stream);
    return st;
}
