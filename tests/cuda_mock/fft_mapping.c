/* The cuFFT calls of src/backend/cuda/cuda_fft.c checked without a GPU.
 *
 * cuda_fft.c is compiled against the real CUDA headers and linked with the
 * stand-ins below instead of cudart and cuFFT: a plan records what
 * cufftMakePlanMany64 was given (the advanced data layout: n, embeds,
 * strides, distances, batch) and an execution computes the transform on host
 * memory from that layout, holding cuFFT to the rules the GPU holds it to:
 * data pointers aligned to the complex type (a real side starting at an odd
 * element is CUFFT_INVALID_VALUE, as it was on an H200), embeds at least the
 * lengths, a work area set when the plan has one (auto allocation off), a
 * C2R's input overwritten.  Random transforms (every kind, both precisions,
 * rank 1 to 3 over 1 to 4 axes in any order, strided and offset views of
 * padded buffers on both sides, scales) then go through cu_fft and must
 * match a direct DFT of the same logical arrays; the input must be left
 * as it was, and the output's buffer outside the view too.  What this cannot
 * check is the GPU itself.  Built and run by tests/test_cufft_mapping.py
 * (under AddressSanitizer: every element touched is inside its buffer). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cufft.h>

#include "mock_backend.h"

/* ---- backend stand-ins (the others: mock_backend.c) --------------------------- */

/* the loop's number is its dtype here: cu_elementwise below reads it back */
int dg_loop_find(int ufunc, const int *dtypes)
{
    return ufunc == DG_UF_multiply ? dtypes[0] : -1;
}

/* The C-order walk over shape of elements [base, base + count). */
dg_status cu_copy_kernel(cu_be *b, int dev, cudaStream_t s, int ndim, const int64_t *shape,
                         int64_t (*st)[DG_MAXDIM], int isz, const char *src, char *dst,
                         int64_t base, int64_t count, dg_error *err)
{
    int64_t e;
    (void)b, (void)dev, (void)s, (void)err;
    for (e = base; e < base + count; e++) {
        int64_t rest = e, so = 0, dof = 0;
        int a;
        for (a = ndim - 1; a >= 0; a--) {
            const int64_t i = rest % shape[a];
            rest /= shape[a];
            so += i * st[0][a];
            dof += i * st[1][a];
        }
        memcpy(dst + dof, src + so, (size_t)isz);
    }
    return DG_OK;
}

/* The multiply by a scalar (operand 1) that scales an FFT's output. */
dg_status cu_elementwise(dg_backend_i *be, int dev, int stream, const dg_ew_desc *d,
                         dg_error *err)
{
    const int dt = d->loop;
    int64_t e, total = 1;
    int a;
    (void)be, (void)stream;
    if (d->nop != 3 || d->data[1] != NULL || d->data[0] != d->data[2])
        return dg_error_set(err, DG_ERR_INTERNAL, dev, "not the scale's multiply");
    for (a = 0; a < d->ndim; a++)
        total *= d->shape[a];
    for (e = 0; e < total; e++) {
        int64_t rest = e, off = 0;
        char *p;
        for (a = d->ndim - 1; a >= 0; a--) {
            off += (rest % d->shape[a]) * d->strides[0][a];
            rest /= d->shape[a];
        }
        p = d->data[0] + off;
        if (dt == DG_FLOAT32 || dt == DG_COMPLEX64) {
            float v;
            memcpy(&v, d->scalar[1], sizeof v);
            ((float *)p)[0] *= v;
            if (dt == DG_COMPLEX64)
                ((float *)p)[1] *= v;
        } else {
            double v;
            memcpy(&v, d->scalar[1], sizeof v);
            ((double *)p)[0] *= v;
            if (dt == DG_COMPLEX128)
                ((double *)p)[1] *= v;
        }
    }
    return DG_OK;
}

/* ---- the DFT of a dense logical array (the mock's cuFFT and the reference) --- */

typedef struct { double re, im; } cplx;

static const double PI = 3.14159265358979323846;

/* x (dense C order over len[0..rank), complex) transformed in place along
 * axis `ax` with sign (-1 forward, +1 backward). */
static void dft_axis(cplx *x, int rank, const int64_t *len, int ax, int sign)
{
    int64_t outer = 1, inner = 1, o, i, j, k;
    const int64_t n = len[ax];
    cplx *t = (cplx *)malloc((size_t)n * sizeof(cplx));
    int a;
    for (a = 0; a < ax; a++)
        outer *= len[a];
    for (a = ax + 1; a < rank; a++)
        inner *= len[a];
    for (o = 0; o < outer; o++)
        for (i = 0; i < inner; i++) {
            cplx *v = x + o * n * inner + i;
            for (k = 0; k < n; k++) {
                cplx acc = {0, 0};
                for (j = 0; j < n; j++) {
                    const double ang = sign * 2 * PI * (double)((j * k) % n) / (double)n;
                    const cplx y = v[j * inner];
                    acc.re += y.re * cos(ang) - y.im * sin(ang);
                    acc.im += y.re * sin(ang) + y.im * cos(ang);
                }
                t[k] = acc;
            }
            for (k = 0; k < n; k++)
                v[k * inner] = t[k];
        }
    free(t);
}

/* The transform of one dense logical array x (complex; for C2R its last
 * axis holds n/2 + 1 points) of kind / direction into y (complex, for R2C
 * n/2 + 1 points on the last axis; for C2R real values in .re): C2C every
 * axis; R2C every axis, then the half kept; C2R the other axes backward
 * first, then the half axis as NumPy's irfft (imaginary parts of its first
 * point, and of its last for even n, ignored). */
static void transform(int kind, int sign, int rank, const int64_t *n, const cplx *x, cplx *y)
{
    int64_t len[3], total = 1, half = n[rank - 1] / 2 + 1, o, j, k;
    const int last = rank - 1;
    int a;
    cplx *w;
    for (a = 0; a < rank; a++) {
        len[a] = n[a];
        total *= n[a];
    }
    if (kind != DG_FFT_C2R) {
        w = (cplx *)malloc((size_t)total * sizeof(cplx));
        memcpy(w, x, (size_t)total * sizeof(cplx));
        for (a = rank - 1; a >= 0; a--)
            dft_axis(w, rank, len, a, kind == DG_FFT_R2C ? -1 : sign);
        if (kind == DG_FFT_C2C) {
            memcpy(y, w, (size_t)total * sizeof(cplx));
        } else {
            for (o = 0; o < total / n[last]; o++)
                for (k = 0; k < half; k++)
                    y[o * half + k] = w[o * n[last] + k];
        }
        free(w);
        return;
    }
    len[last] = half;
    total = total / n[last] * half;
    w = (cplx *)malloc((size_t)total * sizeof(cplx));
    memcpy(w, x, (size_t)total * sizeof(cplx));
    for (a = rank - 2; a >= 0; a--)
        dft_axis(w, rank, len, a, +1);
    for (o = 0; o < total / half; o++) {
        const cplx *v = w + o * half;
        const int64_t nn = n[last];
        for (j = 0; j < nn; j++) {
            double acc = v[0].re;
            for (k = 1; k < half; k++) {
                const double ang = 2 * PI * (double)((j * k) % nn) / (double)nn;
                const double f = (nn % 2 == 0 && k == half - 1) ? 1.0 : 2.0;
                if (f == 1.0)
                    acc += v[k].re * cos(ang);
                else
                    acc += f * (v[k].re * cos(ang) - v[k].im * sin(ang));
            }
            y[o * nn + j].re = acc;
            y[o * nn + j].im = 0;
        }
    }
    free(w);
}

/* ---- cuFFT stand-ins ------------------------------------------------------------- */

#define MAXPLANS 64
#define PLAN_WORK 512

typedef struct mock_plan {
    int live, made, autoalloc;
    void *work;
    int type, rank;
    long long n[3], inembed[3], onembed[3], istride, idist, ostride, odist, batch;
} mock_plan;

static mock_plan plans[MAXPLANS];
static int nexec, nmisaligned;

cufftResult cufftCreate(cufftHandle *h)
{
    int i;
    for (i = 1; i < MAXPLANS; i++)
        if (!plans[i].live) {
            memset(&plans[i], 0, sizeof plans[i]);
            plans[i].live = 1;
            plans[i].autoalloc = 1;
            *h = i;
            return CUFFT_SUCCESS;
        }
    return CUFFT_ALLOC_FAILED;
}
static mock_plan *plan_of(cufftHandle h)
{
    return h > 0 && h < MAXPLANS && plans[h].live ? &plans[h] : NULL;
}
cufftResult cufftDestroy(cufftHandle h)
{
    mock_plan *p = plan_of(h);
    if (!p)
        return CUFFT_INVALID_PLAN;
    p->live = 0;
    return CUFFT_SUCCESS;
}
cufftResult cufftSetAutoAllocation(cufftHandle h, int on)
{
    mock_plan *p = plan_of(h);
    if (!p || p->made)
        return CUFFT_INVALID_PLAN;
    p->autoalloc = on;
    return CUFFT_SUCCESS;
}
cufftResult cufftSetStream(cufftHandle h, cudaStream_t s)
{
    (void)s;
    return plan_of(h) ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}
cufftResult cufftSetWorkArea(cufftHandle h, void *w)
{
    mock_plan *p = plan_of(h);
    if (!p)
        return CUFFT_INVALID_PLAN;
    p->work = w;
    return CUFFT_SUCCESS;
}

static int is_real_in(int type) { return type == CUFFT_R2C || type == CUFFT_D2Z; }
static int is_real_out(int type) { return type == CUFFT_C2R || type == CUFFT_Z2D; }
static int is_double(int type)
{
    return type == CUFFT_Z2Z || type == CUFFT_D2Z || type == CUFFT_Z2D;
}

cufftResult cufftMakePlanMany64(cufftHandle h, int rank, long long *n, long long *inembed,
                                long long istride, long long idist, long long *onembed,
                                long long ostride, long long odist, cufftType type,
                                long long batch, size_t *work)
{
    mock_plan *p = plan_of(h);
    int r;
    if (!p)
        return CUFFT_INVALID_PLAN;
    if (rank < 1 || rank > 3 || batch < 1 || !inembed || !onembed || istride < 1 ||
        ostride < 1 || idist < 1 || odist < 1)
        return CUFFT_INVALID_VALUE;
    for (r = 0; r < rank; r++) {
        const long long half = r == rank - 1 ? n[r] / 2 + 1 : n[r];
        const long long il = is_real_out(type) ? half : n[r];
        const long long ol = is_real_in(type) ? half : n[r];
        if (n[r] < 1 || (r > 0 && (inembed[r] < il || onembed[r] < ol)))
            return CUFFT_INVALID_VALUE;
        p->n[r] = n[r];
        p->inembed[r] = inembed[r];
        p->onembed[r] = onembed[r];
    }
    p->type = type;
    p->rank = rank;
    p->istride = istride;
    p->idist = idist;
    p->ostride = ostride;
    p->odist = odist;
    p->batch = batch;
    p->made = 1;
    *work = PLAN_WORK;
    return CUFFT_SUCCESS;
}

/* Offset (in elements) of logical index idx of one transform of a side. */
static long long side_off(const mock_plan *p, const long long *embed, long long stride,
                          const int64_t *idx)
{
    long long off = idx[0];
    int r;
    for (r = 1; r < p->rank; r++)
        off = off * embed[r] + idx[r];
    return off * stride;
}

static cufftResult exec(cufftHandle h, int type, void *in, void *out, int dir)
{
    mock_plan *p = plan_of(h);
    const int dbl = is_double(type), rin = is_real_in(type), rout = is_real_out(type);
    const size_t csz = dbl ? 16 : 8, rsz = csz / 2;
    const size_t isz = rin ? rsz : csz, osz = rout ? rsz : csz;
    const int kind = rin ? DG_FFT_R2C : rout ? DG_FFT_C2R : DG_FFT_C2C;
    int64_t ilen[3], olen[3], itot = 1, otot = 1, idx[3], e, q;
    long long b;
    int r;
    cplx *x, *y;
    if (!p || !p->made || p->type != type)
        return CUFFT_INVALID_PLAN;
    if (!p->autoalloc && p->work == NULL)
        return CUFFT_INVALID_VALUE; /* no work area (cuFFT: CUFFT_INVALID_VALUE or worse) */
    if ((uintptr_t)in % csz != 0 || (uintptr_t)out % csz != 0) {
        nmisaligned++;
        return CUFFT_INVALID_VALUE; /* what an H200 answered */
    }
    if (kind == DG_FFT_C2C && dir != CUFFT_FORWARD && dir != CUFFT_INVERSE)
        return CUFFT_INVALID_VALUE;
    if (!p->autoalloc)
        memset(p->work, 0x5a, PLAN_WORK);
    for (r = 0; r < p->rank; r++) {
        const int64_t half = p->n[r] / 2 + 1;
        ilen[r] = (rout && r == p->rank - 1) ? half : p->n[r];
        olen[r] = (rin && r == p->rank - 1) ? half : p->n[r];
        itot *= ilen[r];
        otot *= olen[r];
    }
    x = (cplx *)calloc((size_t)itot, sizeof(cplx));
    y = (cplx *)calloc((size_t)otot, sizeof(cplx));
    for (b = 0; b < p->batch; b++) {
        for (e = 0; e < itot; e++) {
            const char *src;
            int64_t rest = e;
            for (r = p->rank - 1; r >= 0; r--) {
                idx[r] = rest % ilen[r];
                rest /= ilen[r];
            }
            src = (const char *)in + (b * p->idist + side_off(p, p->inembed, p->istride, idx)) *
                                         (long long)isz;
            if (dbl) {
                x[e].re = ((const double *)src)[0];
                x[e].im = rin ? 0 : ((const double *)src)[1];
            } else {
                x[e].re = ((const float *)src)[0];
                x[e].im = rin ? 0 : ((const float *)src)[1];
            }
        }
        transform(kind, dir == CUFFT_FORWARD ? -1 : 1, p->rank, (const int64_t *)p->n, x, y);
        for (e = 0; e < otot; e++) {
            char *dst;
            int64_t rest = e;
            for (r = p->rank - 1; r >= 0; r--) {
                idx[r] = rest % olen[r];
                rest /= olen[r];
            }
            dst = (char *)out + (b * p->odist + side_off(p, p->onembed, p->ostride, idx)) *
                                    (long long)osz;
            if (dbl) {
                ((double *)dst)[0] = y[e].re;
                if (!rout)
                    ((double *)dst)[1] = y[e].im;
            } else {
                ((float *)dst)[0] = (float)y[e].re;
                if (!rout)
                    ((float *)dst)[1] = (float)y[e].im;
            }
        }
    }
    if (rout) /* cuFFT's C2R overwrites its input */
        for (b = 0; b < p->batch; b++)
            for (e = 0; e < itot; e++) {
                int64_t rest = e;
                for (r = p->rank - 1; r >= 0; r--) {
                    idx[r] = rest % ilen[r];
                    rest /= ilen[r];
                }
                q = b * p->idist + side_off(p, p->inembed, p->istride, idx);
                memset((char *)in + q * (long long)isz, 0xff, isz);
            }
    free(x);
    free(y);
    nexec++;
    return CUFFT_SUCCESS;
}

cufftResult cufftExecC2C(cufftHandle h, cufftComplex *i, cufftComplex *o, int dir)
{
    return exec(h, CUFFT_C2C, i, o, dir);
}
cufftResult cufftExecZ2Z(cufftHandle h, cufftDoubleComplex *i, cufftDoubleComplex *o, int dir)
{
    return exec(h, CUFFT_Z2Z, i, o, dir);
}
cufftResult cufftExecR2C(cufftHandle h, cufftReal *i, cufftComplex *o)
{
    return exec(h, CUFFT_R2C, i, o, CUFFT_FORWARD);
}
cufftResult cufftExecD2Z(cufftHandle h, cufftDoubleReal *i, cufftDoubleComplex *o)
{
    return exec(h, CUFFT_D2Z, i, o, CUFFT_FORWARD);
}
cufftResult cufftExecC2R(cufftHandle h, cufftComplex *i, cufftReal *o)
{
    return exec(h, CUFFT_C2R, i, o, CUFFT_INVERSE);
}
cufftResult cufftExecZ2D(cufftHandle h, cufftDoubleComplex *i, cufftDoubleReal *o)
{
    return exec(h, CUFFT_Z2D, i, o, CUFFT_INVERSE);
}

/* ---- the test ----------------------------------------------------------------------- */


/* A view of ndim axes of `shape` into a fresh padded buffer: a random start
 * (in elements), steps of 1 or 2 and padding per axis; *buf, *size its
 * buffer (filled with byte `fill`), strides in bytes. */
static char *view(int ndim, const int64_t *shape, int64_t esz, int fill, char **buf,
                  int64_t *size, int64_t *strides)
{
    int64_t acc = esz, start = mock_rnd(3);
    int a;
    for (a = ndim - 1; a >= 0; a--) {
        const int64_t step = mock_rnd(4) == 0 ? 2 : 1;
        strides[a] = acc * step;
        acc *= shape[a] * step + mock_rnd(2);
    }
    *size = acc + start * esz;
    *buf = (char *)aligned_alloc(64, (size_t)((*size + 63) / 64 * 64));
    memset(*buf, fill, (size_t)((*size + 63) / 64 * 64));
    return *buf + start * esz;
}

static double rand_val(void) { return (double)(mock_rnd(2001) - 1000) / 500.0; }

/* One random transform through cu_fft; returns the number of mismatches. */
static int one_case(dg_backend_i *be, int trial)
{
    const int kind = (int)mock_rnd(3), dbl = (int)mock_rnd(2), fwd = kind == DG_FFT_C2C ? (int)mock_rnd(2)
                                                       : kind == DG_FFT_R2C;
    const int ndim = 1 + (int)mock_rnd(4);
    const int rank = 1 + (int)mock_rnd(ndim < 3 ? ndim : 3);
    const int64_t csz = dbl ? 16 : 8, rsz = csz / 2;
    const int64_t iesz = kind == DG_FFT_R2C ? rsz : csz, oesz = kind == DG_FFT_C2R ? rsz : csz;
    int64_t shape[4], ishape[4], oshape[4], ist[4], ost[4], isize, osize, n[3];
    int axes[3], is_ax[4] = {0}, a, r, q, bad = 0;
    char *ibuf, *obuf, *ip, *op, *icopy, *obefore;
    dg_fft_desc d;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    int64_t e, total;
    for (a = 0; a < ndim; a++)
        shape[a] = 1 + mock_rnd(6);
    for (r = 0; r < rank; r++) {
        do
            axes[r] = (int)mock_rnd(ndim);
        while (is_ax[axes[r]]);
        is_ax[axes[r]] = 1;
        n[r] = shape[axes[r]];
    }
    memcpy(ishape, shape, sizeof shape);
    memcpy(oshape, shape, sizeof shape);
    if (kind == DG_FFT_R2C)
        oshape[axes[rank - 1]] = n[rank - 1] / 2 + 1;
    if (kind == DG_FFT_C2R)
        ishape[axes[rank - 1]] = n[rank - 1] / 2 + 1;
    ip = view(ndim, ishape, iesz, 0, &ibuf, &isize, ist);
    op = view(ndim, oshape, oesz, 0x77, &obuf, &osize, ost);
    total = 1;
    for (a = 0; a < ndim; a++)
        total *= ishape[a];
    for (e = 0; e < total; e++) {
        int64_t rest = e, off = 0;
        for (a = ndim - 1; a >= 0; a--) {
            off += (rest % ishape[a]) * ist[a];
            rest /= ishape[a];
        }
        for (q = 0; q < (int)(iesz / (dbl ? 8 : 4)); q++) {
            if (dbl)
                ((double *)(ip + off))[q] = rand_val();
            else
                ((float *)(ip + off))[q] = (float)rand_val();
        }
    }
    icopy = (char *)malloc((size_t)isize);
    memcpy(icopy, ibuf, (size_t)isize);
    memset(&d, 0, sizeof d);
    d.kind = kind;
    d.dtype = dbl ? DG_COMPLEX128 : DG_COMPLEX64;
    d.forward = fwd;
    d.scale = mock_rnd(3) == 0 ? 0.5 : 1.0;
    d.rank = rank;
    d.src = ip;
    d.dst = op;
    for (r = 0; r < rank; r++) {
        d.n[r] = n[r];
        d.src_strides[r] = ist[axes[r]];
        d.dst_strides[r] = ost[axes[r]];
    }
    for (a = 0; a < ndim; a++)
        if (!is_ax[a] && (shape[a] > 1 || mock_rnd(2))) {
            d.batch[d.nbatch] = shape[a];
            d.src_bs[d.nbatch] = ist[a];
            d.dst_bs[d.nbatch++] = ost[a];
        }
    /* the output buffer outside the view must stay as it was: remember it */
    obefore = (char *)malloc((size_t)osize);
    memcpy(obefore, obuf, (size_t)osize);
    st = cu_fft(be, 0, DG_STREAM_COMPUTE, &d, &err);
    if (st != DG_OK) {
        printf("trial %d: cu_fft failed: %s\n", trial, err.msg);
        bad = 1;
        goto done;
    }
    if (memcmp(icopy, ibuf, (size_t)isize) != 0) {
        printf("trial %d: the input changed\n", trial);
        bad = 1;
    }
    {
        /* the reference: each batch index's logical array through transform() */
        int64_t bidx[4] = {0}, nb = 1, itot = 1, otot = 1, ilen[3], olen[3], idx[3], bb;
        const double tol = dbl ? 1e-9 : 2e-4;
        cplx *x, *y;
        int baxes[4], nbax = 0;
        char *touched = (char *)calloc((size_t)osize, 1);
        for (a = 0; a < ndim; a++)
            if (!is_ax[a]) {
                baxes[nbax++] = a;
                nb *= shape[a];
            }
        for (r = 0; r < rank; r++) {
            ilen[r] = ishape[axes[r]];
            olen[r] = oshape[axes[r]];
            itot *= ilen[r];
            otot *= olen[r];
        }
        x = (cplx *)calloc((size_t)itot, sizeof(cplx));
        y = (cplx *)calloc((size_t)otot, sizeof(cplx));
        for (bb = 0; bb < nb; bb++) {
            int64_t rest = bb, ib = 0, ob = 0;
            double big = 1;
            for (q = nbax - 1; q >= 0; q--) {
                bidx[q] = rest % shape[baxes[q]];
                rest /= shape[baxes[q]];
                ib += bidx[q] * ist[baxes[q]];
                ob += bidx[q] * ost[baxes[q]];
            }
            for (e = 0; e < itot; e++) {
                int64_t off = ib, rr = e;
                for (r = rank - 1; r >= 0; r--) {
                    idx[r] = rr % ilen[r];
                    rr /= ilen[r];
                    off += idx[r] * ist[axes[r]];
                }
                x[e].re = dbl ? ((double *)(ip + off))[0] : ((float *)(ip + off))[0];
                x[e].im = kind == DG_FFT_R2C ? 0
                          : dbl ? ((double *)(ip + off))[1] : ((float *)(ip + off))[1];
            }
            transform(kind, fwd ? -1 : 1, rank, n, x, y);
            for (e = 0; e < otot; e++)
                big = fmax(big, fabs(y[e].re) + fabs(y[e].im));
            for (e = 0; e < otot; e++) {
                int64_t off = ob, rr = e;
                double gre, gim = 0, wre = y[e].re * d.scale, wim = y[e].im * d.scale;
                for (r = rank - 1; r >= 0; r--) {
                    idx[r] = rr % olen[r];
                    rr /= olen[r];
                    off += idx[r] * ost[axes[r]];
                }
                memset(touched + (op - obuf) + off, 1, (size_t)oesz);
                gre = dbl ? ((double *)(op + off))[0] : ((float *)(op + off))[0];
                if (kind != DG_FFT_C2R)
                    gim = dbl ? ((double *)(op + off))[1] : ((float *)(op + off))[1];
                else
                    wim = 0;
                if (!(fabs(gre - wre) <= tol * big) || !(fabs(gim - wim) <= tol * big)) {
                    if (bad < 3)
                        printf("trial %d (kind %d, %s, rank %d of %d axes): batch %lld "
                               "point %lld: got %g%+gi, want %g%+gi\n", trial, kind,
                               dbl ? "double" : "single", rank, ndim, (long long)bb,
                               (long long)e, gre, gim, wre, wim);
                    bad++;
                }
            }
        }
        for (e = 0; e < osize; e++)
            if (!touched[e] && obuf[e] != obefore[e]) {
                printf("trial %d: the output's buffer changed outside the view\n", trial);
                bad++;
                break;
            }
        free(touched);
        free(x);
        free(y);
    }
done:
    free(icopy);
    free(obefore);
    free(ibuf);
    free(obuf);
    return bad;
}

int main(int argc, char **argv)
{
    const int trials = argc > 1 ? atoi(argv[1]) : 3000;
    cu_dev dev;
    cu_be b;
    int t, failed = 0;
    mock_backend_init(&b, &dev);
    for (t = 0; t < trials; t++)
        failed += one_case(&b.iface, t) != 0;
    cu_fft_destroy(&b);
    for (t = 1; t < MAXPLANS; t++)
        if (plans[t].live) {
            printf("plan %d was not destroyed\n", t);
            failed++;
        }
    printf("%d transforms, %d executions, %d misaligned calls refused, %d failed\n", trials,
           nexec, nmisaligned, failed);
    return failed != 0;
}
