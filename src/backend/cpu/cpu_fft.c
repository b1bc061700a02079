/* The CPU backend's FFTs: each transformed axis is one pass of NumPy's own
 * pocketfft gufunc loop (numpy.fft._pocketfft_umath), called as NumPy calls
 * it, with the batch's largest axis as the loop's outer dimension and the
 * others walked here; so a 1-d transform gives NumPy's bits.  Several axes
 * are passes in NumPy's order (dg_fft.h), the scale applied by the last.
 * The loops do their own planning (pocketfft keeps a cache of plans, locked,
 * so several virtual devices may transform at once, as NumPy's threads
 * may). */
#include <stdint.h>
#include <string.h>

#include "cpu_fft.h"

static dg_cpu_fft_loops loops;
static int have_loops;

void dg_cpu_fft_set_loops(const dg_cpu_fft_loops *l)
{
    int i, p, ok = l != NULL;
    for (i = 0; ok && i < DG_NPFFT_NLOOPS; i++)
        for (p = 0; p < 2; p++)
            ok = ok && l->fn[i][p] != NULL;
    if (ok)
        loops = *l;
    have_loops = ok;
}

int dg_cpu_fft_available(void) { return have_loops; }

/* One pass: a 1-d transform along one axis (length nin in, nout out) for
 * every index of the other axes (ndim of them, strides in bytes). */
typedef struct pass {
    int loop, prec;
    int64_t nin, nout;
    const char *src;
    int64_t s_in;
    char *dst;
    int64_t s_out;
    int ndim;
    int64_t shape[DG_MAXDIM + DG_FFT_MAXRANK];
    int64_t src_st[DG_MAXDIM + DG_FFT_MAXRANK], dst_st[DG_MAXDIM + DG_FFT_MAXRANK];
    double scale;
} pass;

/* Runs a pass: the longest other axis as the loop's outer dimension. */
static void run_pass(const pass *p)
{
    int64_t idx[DG_MAXDIM + DG_FFT_MAXRANK] = {0}, dims[3], steps[5];
    int a, outer = -1;
    float f32 = (float)p->scale;
    double f64 = p->scale;
    dg_npy_gufunc_loop fn = loops.fn[p->loop][p->prec];
    void *data = loops.data[p->loop][p->prec];
    for (a = 0; a < p->ndim; a++) {
        if (p->shape[a] <= 0)
            return;
        if (outer < 0 || p->shape[a] > p->shape[outer])
            outer = a;
    }
    dims[0] = outer < 0 ? 1 : p->shape[outer];
    dims[1] = p->nin;
    dims[2] = p->nout;
    steps[0] = outer < 0 ? 0 : p->src_st[outer];
    steps[1] = 0;
    steps[2] = outer < 0 ? 0 : p->dst_st[outer];
    steps[3] = p->s_in;
    steps[4] = p->s_out;
    for (;;) {
        char *args[3];
        const char *s = p->src;
        char *t = p->dst;
        for (a = 0; a < p->ndim; a++) {
            if (a == outer)
                continue;
            s += idx[a] * p->src_st[a];
            t += idx[a] * p->dst_st[a];
        }
        args[0] = (char *)s;
        args[1] = p->prec ? (char *)&f64 : (char *)&f32;
        args[2] = t;
        fn(args, dims, steps, data);
        for (a = p->ndim - 1; a >= 0; a--) {
            if (a == outer)
                continue;
            if (++idx[a] < p->shape[a])
                break;
            idx[a] = 0;
        }
        if (a < 0)
            break;
    }
}

size_t dg_cpu_fft_work_bytes(const dg_fft_desc *d)
{
    int64_t n = 1;
    int r, b;
    if (d->kind != DG_FFT_C2R || d->rank < 2)
        return 0;
    for (b = 0; b < d->nbatch; b++)
        n *= d->batch[b];
    for (r = 0; r < d->rank - 1; r++)
        n *= d->n[r];
    n *= d->n[d->rank - 1] / 2 + 1;
    return (size_t)n * (size_t)dg_dtype_size(d->dtype);
}

/* The pass along transformed axis r of d, from (src, sst) to (dst, dstt):
 * the strides of the other transformed axes are sst / dstt, the batch's
 * d's own (or, for the work buffer, ws_bs). */
static void make_pass(const dg_fft_desc *d, int r, int loop, int64_t nin, int64_t nout,
                      const char *src, const int64_t *sst, const int64_t *sbs, char *dst,
                      const int64_t *dstt, const int64_t *dbs, double scale, pass *p)
{
    int b, q;
    memset(p, 0, sizeof *p);
    p->loop = loop;
    p->prec = d->dtype == DG_COMPLEX128;
    p->nin = nin;
    p->nout = nout;
    p->src = src;
    p->dst = dst;
    p->s_in = sst[r];
    p->s_out = dstt[r];
    p->scale = scale;
    for (b = 0; b < d->nbatch; b++) {
        p->shape[p->ndim] = d->batch[b];
        p->src_st[p->ndim] = sbs[b];
        p->dst_st[p->ndim++] = dbs[b];
    }
    for (q = 0; q < d->rank; q++) {
        if (q == r)
            continue;
        /* a half axis keeps its complex length */
        p->shape[p->ndim] = (q == d->rank - 1 && d->kind != DG_FFT_C2C) ? d->n[q] / 2 + 1
                                                                          : d->n[q];
        p->src_st[p->ndim] = sst[q];
        p->dst_st[p->ndim++] = dstt[q];
    }
}

void dg_cpu_fft_run(const dg_fft_desc *d, void *work)
{
    const int last = d->rank - 1;
    const int64_t half = d->n[last] / 2 + 1;
    pass p;
    int r;
    if (!have_loops || d->rank < 1 || d->rank > DG_FFT_MAXRANK)
        return;
    if (d->kind == DG_FFT_C2C || d->kind == DG_FFT_R2C) {
        const int c2c = d->forward ? DG_NPFFT_FFT : DG_NPFFT_IFFT;
        if (d->kind == DG_FFT_C2C)
            make_pass(d, last, c2c, d->n[last], d->n[last], d->src, d->src_strides, d->src_bs,
                      d->dst, d->dst_strides, d->dst_bs, last == 0 ? d->scale : 1.0, &p);
        else
            make_pass(d, last, d->n[last] % 2 ? DG_NPFFT_RFFT_ODD : DG_NPFFT_RFFT_EVEN,
                      d->n[last], half, d->src, d->src_strides, d->src_bs, d->dst,
                      d->dst_strides, d->dst_bs, last == 0 ? d->scale : 1.0, &p);
        run_pass(&p);
        for (r = last - 1; r >= 0; r--) {
            make_pass(d, r, d->kind == DG_FFT_C2C ? c2c : DG_NPFFT_FFT, d->n[r], d->n[r],
                      d->dst, d->dst_strides, d->dst_bs, d->dst, d->dst_strides, d->dst_bs,
                      r == 0 ? d->scale : 1.0, &p);
            run_pass(&p);
        }
        return;
    }
    /* C2R: the other axes backward into the work buffer (dense, C order
     * over batch then transformed axes), then the half axis into dst */
    if (d->rank == 1) {
        make_pass(d, 0, DG_NPFFT_IRFFT, half, d->n[0], d->src, d->src_strides, d->src_bs,
                  d->dst, d->dst_strides, d->dst_bs, d->scale, &p);
        run_pass(&p);
        return;
    }
    {
        const int64_t isz = dg_dtype_size(d->dtype);
        int64_t wst[DG_FFT_MAXRANK], wbs[DG_MAXDIM], s = isz;
        int b;
        wst[last] = s;
        s *= half;
        for (r = last - 1; r >= 0; r--) {
            wst[r] = s;
            s *= d->n[r];
        }
        for (b = d->nbatch - 1; b >= 0; b--) {
            wbs[b] = s;
            s *= d->batch[b];
        }
        for (r = last - 1; r >= 0; r--) {
            const int first = r == last - 1;
            make_pass(d, r, DG_NPFFT_IFFT, d->n[r], d->n[r], first ? d->src : (char *)work,
                      first ? d->src_strides : wst, first ? d->src_bs : wbs, (char *)work, wst,
                      wbs, 1.0, &p);
            run_pass(&p);
        }
        make_pass(d, last, DG_NPFFT_IRFFT, half, d->n[last], (char *)work, wst, wbs, d->dst,
                  d->dst_strides, d->dst_bs, d->scale, &p);
        run_pass(&p);
    }
}
