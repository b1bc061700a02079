/* The CPU backend's FFTs: each transformed axis is one pass of NumPy's own
 * pocketfft gufunc loop (numpy.fft._pocketfft_umath), called as NumPy calls
 * it, with the batch's largest axis as the loop's outer dimension and the
 * others walked here; so a 1-d transform gives NumPy's bits.  Several axes
 * are passes in NumPy's order (dg_fft.h), the scale applied by the last.
 * The loops do their own planning (pocketfft keeps a cache of plans, locked,
 * so several virtual devices may transform at once, as NumPy's threads
 * may).
 *
 * A pass along an axis that is not contiguous (the columns of a chunk: the
 * second pass of fft2 after the reshard to columns, or the inner axes of an
 * n-d transform) runs in tiles of neighbouring transforms: each tile copied
 * into a dense block, a run of contiguous bytes per point, transformed there
 * by the loop and copied back.  Left to the loop, such a pass read and
 * wrote each point a whole stride from the last, a few transforms at a time
 * (half a cache line of complex64), and took twice the contiguous pass's
 * time.  Each transform sees the same values, so the bits are the same. */
#include <stdint.h>
#include <string.h>

#include "cpu_fft.h"

static dg_cpu_fft_loops loops;
static int have_loops;

/* Tiles of a pass along a strided axis: FFT_TILE_RUN bytes of neighbouring
 * transforms per point (four cache lines: on the development machine 32
 * complex64 columns of 4096 points took 39 ms of CPU time where 8 took 51
 * and the loop alone 59, and 32 of 16384 points 47 where 8 took 60), fewer
 * where a side's block would pass FFT_TILE_BYTES.  An axis stepping more
 * than FFT_TILE_LINE bytes is not tiled along. */
#define FFT_TILE_RUN 256
#define FFT_TILE_LINE 64
#define FFT_TILE_BYTES ((int64_t)1 << 22)

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
    int64_t isz_in, isz_out; /* bytes of an input and an output element */
    int64_t nin, nout;
    const char *src;
    int64_t s_in;
    char *dst;
    int64_t s_out;
    int ndim;
    int64_t shape[DG_MAXDIM + DG_FFT_MAXRANK];
    int64_t src_st[DG_MAXDIM + DG_FFT_MAXRANK], dst_st[DG_MAXDIM + DG_FFT_MAXRANK];
    double scale;
    char *tile;         /* two blocks of tile_side bytes, NULL for none */
    int64_t tile_side;
} pass;

/* Transforms per tile of pass p (at least 1): FFT_TILE_RUN bytes of its
 * smaller element, as many as a block of p->tile_side bytes holds. */
static int64_t tile_count(const pass *p)
{
    const int64_t isz = p->isz_in < p->isz_out ? p->isz_in : p->isz_out;
    const int64_t big = p->nin * p->isz_in > p->nout * p->isz_out ? p->nin * p->isz_in
                                                                  : p->nout * p->isz_out;
    int64_t c = FFT_TILE_RUN / isz;
    if (c * big > p->tile_side)
        c = p->tile_side / big;
    return c < 1 ? 1 : c;
}

/* Copies nk rows of nc elements of isz bytes: row k from src + k * sk (its
 * elements sc apart) to dst + k * dk (dc apart). */
static void tile_copy(char *dst, int64_t dk, int64_t dc, const char *src, int64_t sk,
                      int64_t sc, int64_t nk, int64_t nc, int64_t isz)
{
    int64_t k, c;
    if (sc == isz && dc == isz) {
        for (k = 0; k < nk; k++)
            memcpy(dst + k * dk, src + k * sk, (size_t)(nc * isz));
        return;
    }
    for (k = 0; k < nk; k++)
        for (c = 0; c < nc; c++)
            memcpy(dst + k * dk + c * dc, src + k * sk + c * sc, (size_t)isz);
}

/* The axis of p to tile along, -1 for none: p's transform axis is strided
 * on a side, and some other axis of at least 2 transforms steps at most
 * FFT_TILE_LINE bytes on every strided side (the least such). */
static int tile_axis(const pass *p)
{
    const int gather = p->s_in != p->isz_in, scatter = p->s_out != p->isz_out;
    int a, best = -1;
    int64_t cost = 0;
    if (!p->tile || (!gather && !scatter) ||
        (p->nin > p->nout ? p->nin * p->isz_in : p->nout * p->isz_out) > p->tile_side)
        return -1;
    for (a = 0; a < p->ndim; a++) {
        const int64_t si = p->src_st[a] < 0 ? -p->src_st[a] : p->src_st[a];
        const int64_t so = p->dst_st[a] < 0 ? -p->dst_st[a] : p->dst_st[a];
        const int64_t c = (gather ? si : 0) + (scatter ? so : 0);
        if (p->shape[a] < 2 || (gather && (si > FFT_TILE_LINE || si == 0)) ||
            (scatter && (so > FFT_TILE_LINE || so == 0)))
            continue;
        if (best < 0 || c < cost) {
            best = a;
            cost = c;
        }
    }
    return best;
}

/* The first pointers of p's source and destination at index idx of its
 * other axes but `skip` (whose index is taken as 0). */
static void pass_at(const pass *p, int skip, const int64_t *idx, const char **src, char **dst)
{
    const char *s = p->src;
    char *t = p->dst;
    int a;
    for (a = 0; a < p->ndim; a++) {
        if (a == skip)
            continue;
        s += idx[a] * p->src_st[a];
        t += idx[a] * p->dst_st[a];
    }
    *src = s;
    *dst = t;
}

/* Steps idx to the next index of p's other axes but `skip` (last fastest);
 * 0 past the last one. */
static int pass_next(const pass *p, int skip, int64_t *idx)
{
    int a;
    for (a = p->ndim - 1; a >= 0; a--) {
        if (a == skip)
            continue;
        if (++idx[a] < p->shape[a])
            return 1;
        idx[a] = 0;
    }
    return 0;
}

/* Runs pass p in tiles along axis t (tile_axis): for each index of the
 * other axes, tiles of tile_count neighbouring transforms copied from a
 * strided input into a dense block (point by point: a run of contiguous
 * bytes per point), transformed there by one call of the loop (in place for
 * C2C) and copied back to a strided output; a side whose axis is contiguous
 * is read or written by the loop where it is. */
static void run_tiles(const pass *p, int t, dg_npy_gufunc_loop fn, void *data, char *factor)
{
    const int gather = p->s_in != p->isz_in, scatter = p->s_out != p->isz_out;
    const int c2c = p->loop == DG_NPFFT_FFT || p->loop == DG_NPFFT_IFFT;
    const int64_t nt = tile_count(p);
    const int64_t pin = nt * p->isz_in, pout = nt * p->isz_out;
    char *const bout = p->tile + p->tile_side;
    char *const bin = (c2c && scatter) ? bout : p->tile;
    int64_t idx[DG_MAXDIM + DG_FFT_MAXRANK] = {0}, dims[3], steps[5];
    int a;
    for (a = 0; a < p->ndim; a++)
        if (p->shape[a] <= 0)
            return;
    dims[1] = p->nin;
    dims[2] = p->nout;
    steps[1] = 0;
    do {
        const char *s0;
        char *t0;
        int64_t j;
        pass_at(p, t, idx, &s0, &t0);
        for (j = 0; j < p->shape[t]; j += nt) {
            const int64_t nc = p->shape[t] - j < nt ? p->shape[t] - j : nt;
            const char *s = s0 + j * p->src_st[t];
            char *o = t0 + j * p->dst_st[t];
            char *args[3];
            dims[0] = nc;
            if (gather) {
                tile_copy(bin, pin, p->isz_in, s, p->s_in, p->src_st[t], p->nin, nc,
                          p->isz_in);
                args[0] = bin;
                steps[0] = p->isz_in;
                steps[3] = pin;
            } else {
                args[0] = (char *)s;
                steps[0] = p->src_st[t];
                steps[3] = p->s_in;
            }
            args[1] = factor;
            if (scatter) {
                args[2] = bout;
                steps[2] = p->isz_out;
                steps[4] = pout;
            } else {
                args[2] = o;
                steps[2] = p->dst_st[t];
                steps[4] = p->s_out;
            }
            fn(args, dims, steps, data);
            if (scatter)
                tile_copy(o, p->s_out, p->dst_st[t], bout, pout, p->isz_out, p->nout, nc,
                          p->isz_out);
        }
    } while (pass_next(p, t, idx));
}

/* Runs a pass: in tiles where its axis is strided (run_tiles), else with the
 * longest other axis as the loop's outer dimension. */
static void run_pass(const pass *p)
{
    int64_t idx[DG_MAXDIM + DG_FFT_MAXRANK] = {0}, dims[3], steps[5];
    int a, outer = -1;
    float f32 = (float)p->scale;
    double f64 = p->scale;
    dg_npy_gufunc_loop fn = loops.fn[p->loop][p->prec];
    void *data = loops.data[p->loop][p->prec];
    const int t = tile_axis(p);
    if (t >= 0) {
        run_tiles(p, t, fn, data, p->prec ? (char *)&f64 : (char *)&f32);
        return;
    }
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
    do {
        char *args[3];
        const char *s;
        char *t;
        pass_at(p, outer, idx, &s, &t);
        args[0] = (char *)s;
        args[1] = p->prec ? (char *)&f64 : (char *)&f32;
        args[2] = t;
        fn(args, dims, steps, data);
    } while (pass_next(p, outer, idx));
}

/* Bytes of C2R's complex intermediate (rank >= 2), rounded up to 64. */
static int64_t c2r_work_bytes(const dg_fft_desc *d)
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
    return (n * dg_dtype_size(d->dtype) + 63) / 64 * 64;
}

/* Bytes of each of the two tile blocks of d's passes, 0 where none can be
 * tiled (a 1-d transform contiguous on both sides or with no batch):
 * enough for FFT_TILE_RUN bytes of real elements per point of the longest
 * axis (so for any pass's tile_count), at most FFT_TILE_BYTES. */
static int64_t tile_side_bytes(const dg_fft_desc *d)
{
    const int64_t csz = dg_dtype_size(d->dtype);
    int64_t most = 0, b;
    int r;
    if (d->rank == 1 &&
        (d->nbatch == 0 || (d->src_strides[0] == (d->kind == DG_FFT_R2C ? csz / 2 : csz) &&
                            d->dst_strides[0] == (d->kind == DG_FFT_C2R ? csz / 2 : csz))))
        return 0;
    for (r = 0; r < d->rank; r++)
        if (d->n[r] > most)
            most = d->n[r];
    b = most * csz * (FFT_TILE_RUN / (csz / 2));
    return b < FFT_TILE_BYTES ? (b + 63) / 64 * 64 : FFT_TILE_BYTES;
}

size_t dg_cpu_fft_work_bytes(const dg_fft_desc *d)
{
    return (size_t)(c2r_work_bytes(d) + 2 * tile_side_bytes(d));
}

/* The pass along transformed axis r of d, from (src, sst) to (dst, dstt):
 * the strides of the other transformed axes are sst / dstt, the batch's
 * d's own (or, for the work buffer, ws_bs). */
static void make_pass(const dg_fft_desc *d, int r, int loop, int64_t nin, int64_t nout,
                      const char *src, const int64_t *sst, const int64_t *sbs, char *dst,
                      const int64_t *dstt, const int64_t *dbs, double scale, char *tile,
                      pass *p)
{
    const int64_t csz = dg_dtype_size(d->dtype);
    int b, q;
    memset(p, 0, sizeof *p);
    p->loop = loop;
    p->prec = d->dtype == DG_COMPLEX128;
    p->isz_in = loop == DG_NPFFT_RFFT_EVEN || loop == DG_NPFFT_RFFT_ODD ? csz / 2 : csz;
    p->isz_out = loop == DG_NPFFT_IRFFT ? csz / 2 : csz;
    p->tile = tile;
    p->tile_side = tile ? tile_side_bytes(d) : 0;
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
    const int64_t side = tile_side_bytes(d);
    char *tile = side ? (char *)work + c2r_work_bytes(d) : NULL;
    pass p;
    int r;
    if (!have_loops || d->rank < 1 || d->rank > DG_FFT_MAXRANK)
        return;
    if (d->kind == DG_FFT_C2C || d->kind == DG_FFT_R2C) {
        const int c2c = d->forward ? DG_NPFFT_FFT : DG_NPFFT_IFFT;
        if (d->kind == DG_FFT_C2C)
            make_pass(d, last, c2c, d->n[last], d->n[last], d->src, d->src_strides, d->src_bs,
                      d->dst, d->dst_strides, d->dst_bs, last == 0 ? d->scale : 1.0, tile, &p);
        else
            make_pass(d, last, d->n[last] % 2 ? DG_NPFFT_RFFT_ODD : DG_NPFFT_RFFT_EVEN,
                      d->n[last], half, d->src, d->src_strides, d->src_bs, d->dst,
                      d->dst_strides, d->dst_bs, last == 0 ? d->scale : 1.0, tile, &p);
        run_pass(&p);
        for (r = last - 1; r >= 0; r--) {
            make_pass(d, r, d->kind == DG_FFT_C2C ? c2c : DG_NPFFT_FFT, d->n[r], d->n[r],
                      d->dst, d->dst_strides, d->dst_bs, d->dst, d->dst_strides, d->dst_bs,
                      r == 0 ? d->scale : 1.0, tile, &p);
            run_pass(&p);
        }
        return;
    }
    /* C2R: the other axes backward into the work buffer (dense, C order
     * over batch then transformed axes), then the half axis into dst */
    if (d->rank == 1) {
        make_pass(d, 0, DG_NPFFT_IRFFT, half, d->n[0], d->src, d->src_strides, d->src_bs,
                  d->dst, d->dst_strides, d->dst_bs, d->scale, tile, &p);
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
                      wbs, 1.0, tile, &p);
            run_pass(&p);
        }
        make_pass(d, last, DG_NPFFT_IRFFT, half, d->n[last], (char *)work, wst, wbs, d->dst,
                  d->dst_strides, d->dst_bs, d->scale, tile, &p);
        run_pass(&p);
    }
}
