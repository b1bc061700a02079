/* Self-test of the CUDA backend on the GPUs present, against the CPU
 * backend's loops and fills (src/backend/cpu/cpu_loops.c, the same scalar
 * functions compiled for the host).  Build and run with run.sh beside it.
 *
 * Every elementwise loop runs on the contiguous path (n not a multiple of the
 * vector width) and on the strided path (a row-strided input, a broadcast or
 * scalar input, a reversed output, a where mask); its output must match the
 * CPU's bit for bit, except the transcendental functions (device libm), which
 * must lie within MAX_ULP.  Then fills, copies in every direction (dense,
 * strided, small, large), the index work (compactions dense and strided,
 * routings, keyed row copies, sorts of every real dtype, bit for bit against
 * the CPU backend's cpu_index.c), waits between streams, out-of-memory, and
 * a few timings.  Prints FAIL lines and a summary; exits 1 on any failure.
 * With a loop id as argument, only that loop, the fills and the stream test
 * run (short enough for compute-sanitizer). */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_index.h"
#include "cpu_loops.h"
#include "dg_backend.h"
#include "dg_cuda.h"
#include "dg_loops.h"
#include "dg_scalar.h"
#include "dg_ufunc.h"

#define MAX_ULP 4

static dg_backend_i *be;
static int nfail;

#define FAIL(...)                      \
    do {                               \
        printf("FAIL: " __VA_ARGS__);  \
        printf("\n");                  \
        nfail++;                       \
    } while (0)

static dg_error gerr;
#define E (dg_error_clear(&gerr), &gerr)
#define DIE_ON(st)                                                            \
    do {                                                                      \
        if ((st) != DG_OK) {                                                  \
            printf("FATAL %s:%d: status %d: %s\n", __FILE__, __LINE__, (int)(st), \
                   gerr.msg);                                                 \
            exit(2);                                                          \
        }                                                                     \
    } while (0)

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static double rndu(void) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0); }

/* A random value of dtype dt into out: mostly moderate numbers, some specials. */
static void rnd_value(int dt, void *out)
{
    static const double specials[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e30, -1e-30,
                                      INFINITY, -INFINITY, NAN, 3.0, 65504.0, 1e-6};
    double v = (rndu() * 2 - 1) * 8;
    double w = (rndu() * 2 - 1) * 8;
    if (rnd() % 12 == 0)
        v = specials[rnd() % (sizeof specials / sizeof specials[0])];
    switch (dt) {
    case DG_BOOL: *(uint8_t *)out = (uint8_t)(rnd() & 1); break;
    case DG_INT8: case DG_UINT8: *(uint8_t *)out = (uint8_t)rnd(); break;
    case DG_INT16: case DG_UINT16: *(uint16_t *)out = (uint16_t)rnd(); break;
    case DG_INT32: case DG_UINT32: *(uint32_t *)out = (uint32_t)rnd(); break;
    case DG_INT64: case DG_UINT64: *(uint64_t *)out = rnd() >> (rnd() % 64); break;
    case DG_FLOAT16: *(dg_half *)out = dg_float_to_half((float)v); break;
    case DG_FLOAT32: *(float *)out = (float)v; break;
    case DG_FLOAT64: *(double *)out = v; break;
    case DG_COMPLEX64: ((float *)out)[0] = (float)v; ((float *)out)[1] = (float)w; break;
    case DG_COMPLEX128: ((double *)out)[0] = v; ((double *)out)[1] = w; break;
    }
    /* small shift counts, moderate exponents, small ints now and then */
    if (dt >= DG_INT8 && dt <= DG_UINT64 && rnd() % 3 == 0) {
        int64_t s = (int64_t)(rnd() % 70) - 5;
        memcpy(out, &s, (size_t)dg_dtype_size(dt)); /* little-endian truncation */
    }
}

/* ulp distance of two floats of kind 'f' of size sz (NaN == NaN). */
static uint64_t ulp_f(const void *a, const void *b, int sz)
{
    if (sz == 2) {
        float x = dg_half_to_float(*(const dg_half *)a), y = dg_half_to_float(*(const dg_half *)b);
        int16_t ia = *(const int16_t *)a, ib = *(const int16_t *)b;
        if (x != x && y != y)
            return 0;
        if (ia < 0) ia = (int16_t)(INT16_MIN - ia);
        if (ib < 0) ib = (int16_t)(INT16_MIN - ib);
        return (uint64_t)(ia > ib ? ia - ib : ib - ia);
    }
    if (sz == 4) {
        float x, y;
        int32_t ia, ib;
        memcpy(&x, a, 4); memcpy(&y, b, 4);
        if (x != x && y != y)
            return 0;
        memcpy(&ia, a, 4); memcpy(&ib, b, 4);
        if (ia < 0) ia = INT32_MIN - ia;
        if (ib < 0) ib = INT32_MIN - ib;
        return (uint64_t)(ia > ib ? (int64_t)ia - ib : (int64_t)ib - ia);
    }
    {
        double x, y;
        int64_t ia, ib;
        memcpy(&x, a, 8); memcpy(&y, b, 8);
        if (x != x && y != y)
            return 0;
        memcpy(&ia, a, 8); memcpy(&ib, b, 8);
        if (ia < 0) ia = INT64_MIN - ia;
        if (ib < 0) ib = INT64_MIN - ib;
        return ia > ib ? (uint64_t)(ia - ib) : (uint64_t)(ib - ia);
    }
}

/* ufuncs whose results IEEE rounding fixes: these must match bit for bit.
 * The others call libm (device libm on the GPU, glibc on the host), or, for
 * complex sqrt and sign, hypot. */
static int exact_ufunc(const char *name, int dt)
{
    if (dg_dtype_kind(dt) == 'c' && (strcmp(name, "sqrt") == 0 || strcmp(name, "sign") == 0))
        return 0;
    static const char *const inexact[] = {
        "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "logaddexp",
        "logaddexp2", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2",
        "hypot", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "power",
        "float_power", "cbrt", "absolute", NULL};
    int i;
    for (i = 0; inexact[i]; i++)
        if (strcmp(inexact[i], name) == 0)
            return 0;
    return 1;
}

/* ---- helpers on the backend ------------------------------------------------ */

static void *dalloc(int dev, size_t n)
{
    void *p = NULL;
    dg_status st = be->alloc(be, dev, n, &p, E);
    DIE_ON(st);
    return p;
}

static void copy1(int dev, int sdev, const void *src, int ddev, void *dst, size_t bytes)
{
    dg_copy_desc c;
    dg_status st;
    memset(&c, 0, sizeof c);
    c.ndim = 1;
    c.shape[0] = (int64_t)bytes;
    c.itemsize = 1;
    c.src_dev = sdev;
    c.src = (const char *)src;
    c.src_strides[0] = 1;
    c.dst_dev = ddev;
    c.dst = (char *)dst;
    c.dst_strides[0] = 1;
    st = be->copy(be, dev, DG_STREAM_COMPUTE, &c, E);
    DIE_ON(st);
}

static void sync_dev(int dev)
{
    dg_status st;
    int k;
    for (k = 0; k < DG_NSTREAMS; k++) {
        st = be->sync(be, be->pos(be, dev, k), E);
        DIE_ON(st);
    }
}

/* ---- elementwise ------------------------------------------------------------- */

/* Compares n elements of dtype dt; returns the worst ulp (UINT64_MAX: a
 * mismatch where bits must agree). */
static uint64_t compare(int dt, const char *g, const char *c, int64_t n, int64_t *where_bad)
{
    int sz = dg_dtype_size(dt);
    char kind = dg_dtype_kind(dt);
    uint64_t worst = 0;
    int64_t i;
    *where_bad = -1;
    for (i = 0; i < n; i++) {
        const char *x = g + i * sz, *y = c + i * sz;
        uint64_t u = 0;
        if (memcmp(x, y, (size_t)sz) == 0)
            continue;
        if (kind == 'f')
            u = ulp_f(x, y, sz);
        else if (kind == 'c') {
            uint64_t u1 = ulp_f(x, y, sz / 2), u2 = ulp_f(x + sz / 2, y + sz / 2, sz / 2);
            u = u1 > u2 ? u1 : u2;
        } else
            u = UINT64_MAX;
        if (u > worst) {
            worst = u;
            *where_bad = i;
        }
    }
    return worst;
}

static void fmt_value(int dt, const char *p, char *buf, size_t cap)
{
    switch (dg_dtype_kind(dt)) {
    case 'f':
        snprintf(buf, cap, "%.9g", dt == DG_FLOAT16 ? (double)dg_half_to_float(*(const dg_half *)p)
                                   : dt == DG_FLOAT32 ? (double)*(const float *)p
                                                      : *(const double *)p);
        break;
    case 'c':
        if (dt == DG_COMPLEX64)
            snprintf(buf, cap, "(%.9g,%.9g)", (double)((const float *)p)[0],
                     (double)((const float *)p)[1]);
        else
            snprintf(buf, cap, "(%.17g,%.17g)", ((const double *)p)[0], ((const double *)p)[1]);
        break;
    default: {
        uint64_t v = 0;
        memcpy(&v, p, (size_t)dg_dtype_size(dt));
        snprintf(buf, cap, "0x%llx", (unsigned long long)v);
    }
    }
}

/* Runs loop `loop` on the GPU and on the CPU with the same layout and
 * compares the outputs.  mode 0: dense 1-d.  mode 1: 2-d space (R x C),
 * input 0 every other row, input 1 broadcast along rows (or a scalar),
 * outputs reversed along columns, a where mask.  mode 2: dense 1-d but input 1
 * one element broadcast (stride 0). */
static int worst_ulp_seen;
static void ew_case(int dev, int loop, int mode)
{
    const int strided = mode == 1;
    const dg_loop_info *li = &dg_loops[loop];
    int nin = li->nin, nop = li->nin + li->nout, k;
    const int64_t R = strided ? 37 : 1, C = strided ? 53 : 4099;
    size_t bytes[DG_MAXLOOPOPS];
    char *h[DG_MAXLOOPOPS], *d[DG_MAXLOOPOPS], *hg[DG_MAXLOOPOPS];
    uint8_t *hw = NULL, *dw = NULL;
    dg_ew_desc ed;
    dg_status st;
    int scalar1 = strided && nin > 1 && loop % 2 == 0;
    int64_t i;

    memset(&ed, 0, sizeof ed);
    ed.loop = loop;
    ed.nop = nop;
    ed.ndim = strided ? 2 : 1;
    if (strided) {
        ed.shape[0] = R;
        ed.shape[1] = C;
    } else {
        ed.shape[0] = C;
    }
    for (k = 0; k < nop; k++) {
        int dt = li->dtypes[k], sz = dg_dtype_size(dt);
        int64_t elems;
        if (!strided)
            elems = C;
        else if (k == 0)
            elems = 2 * R * C;
        else if (k == 1 && k < nin)
            elems = C;
        else
            elems = R * C;
        if (mode == 2 && k == 1 && k < nin)
            elems = 1;
        bytes[k] = (size_t)(elems * sz);
        h[k] = (char *)malloc(bytes[k]);
        hg[k] = (char *)malloc(bytes[k]);
        for (i = 0; i < elems; i++)
            rnd_value(dt, h[k] + i * sz);
        d[k] = (char *)dalloc(dev, bytes[k]);
        copy1(dev, DG_HOST, h[k], dev, d[k], bytes[k]);
        if (mode == 2 && k == 1 && k < nin) {
            ed.strides[k][0] = 0;
        } else if (!strided) {
            ed.strides[k][0] = sz;
        } else if (k == 0) {
            ed.strides[k][0] = 2 * C * sz;
            ed.strides[k][1] = sz;
        } else if (k == 1 && k < nin) {
            ed.strides[k][0] = 0;
            ed.strides[k][1] = sz;
        } else {
            ed.strides[k][0] = C * sz;
            ed.strides[k][1] = -sz; /* reversed columns: data points at the row's end */
        }
    }
    if (strided) {
        hw = (uint8_t *)malloc((size_t)(R * C));
        for (i = 0; i < R * C; i++)
            hw[i] = (uint8_t)(rnd() % 3 != 0);
        dw = (uint8_t *)dalloc(dev, (size_t)(R * C));
        copy1(dev, DG_HOST, hw, dev, dw, (size_t)(R * C));
        ed.where_strides[0] = C;
        ed.where_strides[1] = 1;
    }
    /* GPU */
    for (k = 0; k < nop; k++) {
        int sz = dg_dtype_size(li->dtypes[k]);
        ed.data[k] = d[k] + (strided && k >= nin ? (C - 1) * sz : 0);
    }
    if (scalar1) {
        ed.data[1] = NULL;
        memcpy(ed.scalar[1], h[1] + 5 * dg_dtype_size(li->dtypes[1]),
               (size_t)dg_dtype_size(li->dtypes[1]));
    }
    ed.where = strided ? dw : NULL;
    st = be->elementwise(be, dev, DG_STREAM_COMPUTE, &ed, E);
    DIE_ON(st);
    for (k = nin; k < nop; k++)
        copy1(dev, dev, d[k], DG_HOST, hg[k], bytes[k]);
    sync_dev(dev);
    /* CPU */
    for (k = 0; k < nop; k++) {
        int sz = dg_dtype_size(li->dtypes[k]);
        ed.data[k] = h[k] + (strided && k >= nin ? (C - 1) * sz : 0);
    }
    if (scalar1)
        ed.data[1] = NULL;
    ed.where = strided ? hw : NULL;
    dg_cpu_ew_run(&ed);
    for (k = nin; k < nop; k++) {
        int dt = li->dtypes[k];
        int64_t bad;
        uint64_t u = compare(dt, hg[k], h[k], (int64_t)(bytes[k] / (size_t)dg_dtype_size(dt)), &bad);
        const char *name = dg_ufunc_name(li->ufunc);
        int exact = exact_ufunc(name, dt);
        int ok = u == 0 || (!exact && u <= MAX_ULP);
        if (!exact && u > (uint64_t)worst_ulp_seen)
            worst_ulp_seen = (int)(u > 1000000 ? 1000000 : u);
        if (!ok) {
            char gv[96], cv[96];
            fmt_value(dt, hg[k] + bad * dg_dtype_size(dt), gv, sizeof gv);
            fmt_value(dt, h[k] + bad * dg_dtype_size(dt), cv, sizeof cv);
            if (!exact) /* the scalar functions' accuracy, not the backend's */
                printf("WARN: ");
            else
                nfail++, printf("FAIL: ");
            printf("loop %d %s (%s) %s output %d: element %lld gpu %s cpu %s (ulp %llu)\n", loop,
                   name, mode == 1 ? "strided" : mode == 2 ? "bcast" : "contig",
                   dg_dtype_name(li->dtypes[0]), k - nin, (long long)bad, gv, cv,
                   (unsigned long long)(u == UINT64_MAX ? 0 : u));
        }
    }
    for (k = 0; k < nop; k++) {
        be->release(be, dev, d[k]);
        free(h[k]);
        free(hg[k]);
    }
    if (strided) {
        be->release(be, dev, dw);
        free(hw);
    }
}

/* ---- fills --------------------------------------------------------------------- */

/* Runs fill f on a buffer of `bytes` bytes whose contents are known, at
 * byte offset `offset`, on the GPU and on the CPU; compares the buffers. */
static void fill_case(int dev, dg_fill_desc *f, size_t bytes, size_t offset)
{
    char *hg = (char *)malloc(bytes), *hc = (char *)malloc(bytes);
    char *dbuf = (char *)dalloc(dev, bytes);
    dg_status st;
    size_t i;
    for (i = 0; i < bytes; i++)
        hc[i] = (char)(i * 7);
    copy1(dev, DG_HOST, hc, dev, dbuf, bytes);
    f->dst = dbuf + offset;
    st = be->fill(be, dev, DG_STREAM_COMPUTE, f, E);
    DIE_ON(st);
    copy1(dev, dev, dbuf, DG_HOST, hg, bytes);
    sync_dev(dev);
    f->dst = hc + offset;
    dg_cpu_fill_run(f);
    if (memcmp(hg, hc, bytes) != 0) {
        for (i = 0; i < bytes && hg[i] == hc[i]; i++)
            ;
        FAIL("fill kind %d dtype %s ndim %d: byte %zu differs (gpu %02x cpu %02x)", f->kind,
             dg_dtype_name(f->dtype), f->ndim, i, (unsigned char)hg[i], (unsigned char)hc[i]);
    }
    be->release(be, dev, dbuf);
    free(hg);
    free(hc);
}

static void fill_tests(int dev)
{
    int dt;
    for (dt = 0; dt < DG_NDTYPES; dt++) {
        int sz = dg_dtype_size(dt);
        dg_fill_desc f;
        /* dense const, odd offset in bytes of items and an odd count */
        memset(&f, 0, sizeof f);
        f.kind = DG_FILL_CONST;
        f.dtype = dt;
        f.ndim = 1;
        f.shape[0] = 1001;
        f.strides[0] = sz;
        rnd_value(dt, f.value);
        fill_case(dev, &f, (size_t)(1100 * sz), (size_t)(3 * sz));
        /* all-equal bytes (memset path) */
        memset(f.value, 0, 16);
        fill_case(dev, &f, (size_t)(1100 * sz), 0);
        /* strided 2-d const, reversed inner axis */
        memset(&f, 0, sizeof f);
        f.kind = DG_FILL_CONST;
        f.dtype = dt;
        f.ndim = 2;
        f.shape[0] = 17;
        f.shape[1] = 23;
        f.strides[0] = 50 * sz;
        f.strides[1] = -2 * sz;
        rnd_value(dt, f.value);
        fill_case(dev, &f, (size_t)(17 * 50 * sz), (size_t)(46 * sz));
        /* arange, a strided block of a longer range */
        memset(&f, 0, sizeof f);
        f.kind = DG_FILL_ARANGE;
        f.dtype = dt;
        f.ndim = 1;
        f.shape[0] = 777;
        f.strides[0] = 2 * sz;
        f.origin[0] = 10;
        f.gstep[0] = 3;
        rnd_value(dt, f.value);
        rnd_value(dt, f.delta);
        fill_case(dev, &f, (size_t)(1600 * sz), 0);
        f.origin[0] = 0; /* element 0: the start itself */
        fill_case(dev, &f, (size_t)(1600 * sz), 0);
        /* eye block */
        memset(&f, 0, sizeof f);
        f.kind = DG_FILL_EYE;
        f.dtype = dt;
        f.ndim = 2;
        f.shape[0] = 30;
        f.shape[1] = 40;
        f.strides[0] = 40 * sz;
        f.strides[1] = sz;
        f.origin[0] = 5;
        f.origin[1] = 2;
        f.gstep[0] = 1;
        f.gstep[1] = 2;
        f.k = 3;
        rnd_value(dt, f.value);
        fill_case(dev, &f, (size_t)(1200 * sz), 0);
    }
}

/* The worst difference between normals a + b z drawn on the GPU (g) and on
 * the CPU (c), in units of the dtype's epsilon times |a| + 8 |b| + |c|: the
 * terms' size, not the result's, since a + b z may cancel to near zero,
 * where a few ulp of z are many ulp of the sum. */
static uint64_t normal_units(int dt, const char *g, const char *c, int64_t n, double a,
                             double b, int64_t *where_bad)
{
    const double eps = dt == DG_FLOAT32 ? 0x1p-23 : 0x1p-52;
    double worst = 0.0;
    int64_t i;
    *where_bad = -1;
    for (i = 0; i < n; i++) {
        const double x = dt == DG_FLOAT32 ? (double)((const float *)g)[i] : ((const double *)g)[i];
        const double y = dt == DG_FLOAT32 ? (double)((const float *)c)[i] : ((const double *)c)[i];
        const double u = fabs(x - y) / (eps * (fabs(a) + 8.0 * fabs(b) + fabs(y)));
        if (!(u <= worst)) { /* NaN counts as worst */
            worst = u != u ? 1e300 : u;
            *where_bad = i;
        }
    }
    return worst > 1e18 ? UINT64_MAX : (uint64_t)ceil(worst);
}

/* Random fills (kernels/dg_random.h) on the GPU and on the CPU: uniforms,
 * integers and float32 normals must agree bit for bit, float64 normals
 * (device libm) within MAX_ULP units of normal_units.  Two layouts: a
 * strided 2-d block of a larger array (a thread per Philox block), and
 * long 1-d runs from flat index 0, 3 and 8 (the run kernel: 16-byte units,
 * aligned or not, partial units at the ends). */
typedef struct rlayout {
    int ndim;
    int64_t shape[2], origin[2], gstep[2], gshape[2];
} rlayout;

static void random_fill_tests(int dev)
{
    static const struct {
        int dist, dtype;
        double a, b;
        uint64_t lo, range;
    } cases[] = {
        {DG_RAND_UNIFORM, DG_FLOAT64, 0.0, 1.0, 0, 0},
        {DG_RAND_UNIFORM, DG_FLOAT32, 0.0, 1.0, 0, 0},
        {DG_RAND_UNIFORM, DG_FLOAT64, -3.0, 7.5, 0, 0},
        {DG_RAND_NORMAL, DG_FLOAT64, 1.0, 2.0, 0, 0},
        {DG_RAND_NORMAL, DG_FLOAT32, 0.0, 1.0, 0, 0},
        {DG_RAND_NORMAL, DG_FLOAT32, -2.0, 3.5, 0, 0},
        {DG_RAND_INTEGERS, DG_INT64, 0, 0, (uint64_t)-5, 11},
        {DG_RAND_INTEGERS, DG_UINT64, 0, 0, 0, 0},
        {DG_RAND_INTEGERS, DG_INT64, 0, 0, 0, ((uint64_t)1 << 63) + 12345},
        {DG_RAND_INTEGERS, DG_UINT32, 0, 0, 0, ((uint64_t)1 << 31) + 1},
        {DG_RAND_INTEGERS, DG_UINT32, 0, 0, 0, (uint64_t)1 << 32},
        {DG_RAND_INTEGERS, DG_INT8, 0, 0, (uint64_t)-128, 256},
        {DG_RAND_INTEGERS, DG_BOOL, 0, 0, 0, 2},
    };
    const int64_t big = ((int64_t)1 << 22) + 5;
    const rlayout layouts[] = {
        {2, {37, 301}, {3, 5}, {2, 1}, {100, 400}},
        {1, {big, 1}, {0, 0}, {1, 1}, {big + 11, 1}},
        {1, {big, 1}, {3, 0}, {1, 1}, {big + 11, 1}},
        {1, {big, 1}, {8, 0}, {1, 1}, {big + 11, 1}},
    };
    size_t c, l;
    for (l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
        for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const rlayout *y = &layouts[l];
            const int dt = cases[c].dtype, sz = dg_dtype_size(dt);
            const int64_t n = y->shape[0] * (y->ndim > 1 ? y->shape[1] : 1);
            const size_t bytes = (size_t)(n * sz);
            char *hg = (char *)malloc(bytes), *hc = (char *)malloc(bytes);
            char *dbuf = (char *)dalloc(dev, bytes);
            int64_t bad;
            uint64_t worst;
            int libm, a;
            dg_fill_desc f;
            memset(&f, 0, sizeof f);
            f.kind = DG_FILL_RANDOM;
            f.dtype = dt;
            f.ndim = y->ndim;
            for (a = y->ndim - 1; a >= 0; a--) {
                f.shape[a] = y->shape[a];
                f.strides[a] = a == y->ndim - 1 ? sz : f.strides[a + 1] * f.shape[a + 1];
                f.origin[a] = y->origin[a];
                f.gstep[a] = y->gstep[a];
                f.gshape[a] = y->gshape[a];
            }
            f.rnd.dist = cases[c].dist;
            f.rnd.key[0] = 0x1234u;
            f.rnd.key[1] = 0xabcdu;
            f.rnd.stream = 42;
            f.rnd.a = cases[c].a;
            f.rnd.b = cases[c].b;
            f.rnd.lo = cases[c].lo;
            f.rnd.range = cases[c].range;
            f.dst = dbuf;
            DIE_ON(be->fill(be, dev, DG_STREAM_COMPUTE, &f, E));
            copy1(dev, dev, dbuf, DG_HOST, hg, bytes);
            sync_dev(dev);
            f.dst = hc;
            dg_cpu_fill_run(&f);
            libm = cases[c].dist == DG_RAND_NORMAL && dt == DG_FLOAT64;
            worst = libm ? normal_units(dt, hg, hc, n, cases[c].a, cases[c].b, &bad)
                         : compare(dt, hg, hc, n, &bad);
            if (worst > (libm ? (uint64_t)MAX_ULP : 0))
                FAIL("random fill dist %d dtype %s layout %d: element %lld differs (%llu ulp)",
                     cases[c].dist, dg_dtype_name(dt), (int)l, (long long)bad,
                     (unsigned long long)worst);
            be->release(be, dev, dbuf);
            free(hg);
            free(hc);
        }
}

/* ---- copies ---------------------------------------------------------------------- */

/* Host reference of a strided copy. */
static void ref_copy(const dg_copy_desc *c, const char *src, char *dst)
{
    int64_t idx[DG_MAXDIM] = {0}, n = 1, i;
    int a;
    for (a = 0; a < c->ndim; a++)
        n *= c->shape[a];
    for (i = 0; i < n; i++) {
        int64_t so = 0, dof = 0;
        for (a = 0; a < c->ndim; a++) {
            so += idx[a] * c->src_strides[a];
            dof += idx[a] * c->dst_strides[a];
        }
        memcpy(dst + dof, src + so, (size_t)c->itemsize);
        for (a = c->ndim - 1; a >= 0; a--) {
            if (++idx[a] < c->shape[a])
                break;
            idx[a] = 0;
        }
    }
}

/* A 3-d copy of shape sh between layouts: src transposed or dense, dst dense
 * or strided, between `sdev` and `ddev` (DG_HOST allowed), enqueued on dev. */
static void copy_case(int dev, int sdev, int ddev, const int64_t *sh, int isz, int src_t,
                      int dst_s, const char *label)
{
    int64_t n = sh[0] * sh[1] * sh[2];
    size_t sbytes = (size_t)(n * isz), dbytes = (size_t)(n * 2 * isz);
    char *hs = (char *)malloc(sbytes), *href = (char *)malloc(dbytes),
         *hout = (char *)malloc(dbytes);
    char *ds = NULL, *dd = NULL;
    dg_copy_desc c;
    dg_status st;
    size_t i;
    double t0, t;

    for (i = 0; i < sbytes; i++)
        hs[i] = (char)rnd();
    for (i = 0; i < dbytes; i++)
        href[i] = hout[i] = (char)(i * 13);
    memset(&c, 0, sizeof c);
    c.ndim = 3;
    c.itemsize = isz;
    memcpy(c.shape, sh, 3 * sizeof(int64_t));
    if (src_t) { /* memory laid out as (sh[2], sh[1], sh[0]) */
        c.src_strides[0] = isz;
        c.src_strides[1] = sh[0] * isz;
        c.src_strides[2] = sh[0] * sh[1] * isz;
    } else {
        c.src_strides[2] = isz;
        c.src_strides[1] = sh[2] * isz;
        c.src_strides[0] = sh[1] * sh[2] * isz;
    }
    if (dst_s) { /* every other element of a buffer twice as large */
        c.dst_strides[2] = 2 * isz;
        c.dst_strides[1] = 2 * sh[2] * isz;
        c.dst_strides[0] = 2 * sh[1] * sh[2] * isz;
    } else {
        c.dst_strides[2] = isz;
        c.dst_strides[1] = sh[2] * isz;
        c.dst_strides[0] = sh[1] * sh[2] * isz;
    }
    ref_copy(&c, hs, href);
    /* the source where it lives */
    if (sdev == DG_HOST) {
        c.src = hs;
    } else {
        ds = (char *)dalloc(sdev, sbytes);
        copy1(sdev, DG_HOST, hs, sdev, ds, sbytes);
        sync_dev(sdev);
        c.src = ds;
    }
    if (ddev == DG_HOST) {
        c.dst = hout;
    } else {
        dd = (char *)dalloc(ddev, dbytes);
        copy1(ddev, DG_HOST, hout, ddev, dd, dbytes);
        sync_dev(ddev);
        c.dst = dd;
    }
    c.src_dev = sdev;
    c.dst_dev = ddev;
    if (sdev != DG_HOST && ddev != DG_HOST && sdev != ddev) {
        /* the other device's data must be ready before dev's stream runs */
        st = be->wait(be, dev, DG_STREAM_COMPUTE, be->pos(be, dev == sdev ? ddev : sdev,
                                                          DG_STREAM_COMPUTE), E);
        DIE_ON(st);
    }
    t0 = now();
    st = be->copy(be, dev, DG_STREAM_COMPUTE, &c, E);
    DIE_ON(st);
    sync_dev(dev);
    t = now() - t0;
    if (ddev != DG_HOST) {
        copy1(ddev, ddev, dd, DG_HOST, hout, dbytes);
        sync_dev(ddev);
    }
    if (memcmp(hout, href, dbytes) != 0) {
        for (i = 0; i < dbytes && hout[i] == href[i]; i++)
            ;
        FAIL("copy %s (%d -> %d on %d, %lldx%lldx%lld of %d bytes): byte %zu differs", label,
             sdev, ddev, dev, (long long)sh[0], (long long)sh[1], (long long)sh[2], isz, i);
    } else if (sbytes >= ((size_t)32 << 20)) {
        printf("  copy %-28s %5.0f MiB: %.4f s, %.1f GB/s\n", label, sbytes / 1048576.0, t,
               sbytes / t / 1e9);
    }
    if (ds)
        be->release(be, sdev, ds);
    if (dd)
        be->release(be, ddev, dd);
    free(hs);
    free(href);
    free(hout);
}

static void copy_tests(int ndev)
{
    static const int64_t small[3] = {3, 5, 7}, mid[3] = {64, 33, 129}, big[3] = {64, 512, 1024};
    static const int sizes[] = {1, 2, 4, 8, 16};
    int si, dev = 0, other = ndev > 1 ? 1 : 0;
    for (si = 0; si < 5; si++) {
        int isz = sizes[si];
        copy_case(dev, DG_HOST, dev, small, isz, 0, 0, "h2d small dense");
        copy_case(dev, DG_HOST, dev, small, isz, 1, 1, "h2d small strided");
        copy_case(dev, dev, DG_HOST, small, isz, 1, 1, "d2h small strided");
        copy_case(dev, DG_HOST, dev, mid, isz, 1, 0, "h2d mid host-strided");
        copy_case(dev, DG_HOST, dev, mid, isz, 0, 1, "h2d mid dev-strided");
        copy_case(dev, dev, DG_HOST, mid, isz, 1, 0, "d2h mid dev-strided");
        copy_case(dev, dev, DG_HOST, mid, isz, 0, 1, "d2h mid host-strided");
        copy_case(dev, dev, dev, mid, isz, 1, 1, "d2d strided");
        copy_case(dev, dev, dev, mid, isz, 0, 0, "d2d dense");
        if (ndev > 1) {
            copy_case(dev, dev, other, mid, isz, 1, 1, "peer strided (src side)");
            copy_case(other, dev, other, mid, isz, 1, 1, "peer strided (dst side)");
            copy_case(dev, dev, other, mid, isz, 0, 0, "peer dense");
        }
    }
    copy_case(dev, DG_HOST, dev, big, 4, 0, 0, "h2d 128MiB dense");
    copy_case(dev, dev, DG_HOST, big, 4, 0, 0, "d2h 128MiB dense");
    copy_case(dev, DG_HOST, dev, big, 4, 1, 1, "h2d 128MiB both strided");
    copy_case(dev, dev, DG_HOST, big, 4, 1, 1, "d2h 128MiB both strided");
    copy_case(dev, DG_HOST, dev, big, 16, 0, 0, "h2d 512MiB dense c16");
    copy_case(dev, dev, DG_HOST, big, 16, 0, 0, "d2h 512MiB dense c16");
    if (ndev > 1) {
        copy_case(dev, dev, other, big, 4, 0, 0, "peer 128MiB dense");
        copy_case(other, dev, other, big, 4, 1, 0, "peer 128MiB transposed");
    }
}

/* ---- index work ------------------------------------------------------------------ */

/* Uploads n bytes of host memory h into new device memory on dev. */
static void *upload(int dev, const void *h, size_t n)
{
    void *d = dalloc(dev, n ? n : 1);
    if (n)
        copy1(dev, DG_HOST, h, dev, d, n);
    return d;
}

/* Downloads n bytes of device memory d into new host memory. */
static void *download(int dev, const void *d, size_t n)
{
    void *h = malloc(n ? n : 1);
    if (n)
        copy1(dev, dev, d, DG_HOST, h, n);
    sync_dev(dev);
    return h;
}

/* A selection of an h x w block of 4-byte items viewed with row stride rs
 * items (negative: rows reversed) and a mask of density 1/dens: values, then
 * indices, the GPU's against the CPU's. */
static void select_case(int dev, int64_t h, int64_t w, int64_t rs, int dens, const char *what)
{
    const int64_t span = (h - 1) * (rs < 0 ? -rs : rs) + w, n = h * w;
    uint32_t *src = (uint32_t *)malloc((size_t)span * 4);
    uint8_t *mask = (uint8_t *)malloc((size_t)n);
    char *want = (char *)malloc((size_t)n * 8), *dsrc, *dmask, *ddst, *got;
    int64_t wcount = 0, *dcount, *gcount, i;
    dg_select_desc d;
    int mode;
    for (i = 0; i < span; i++)
        src[i] = (uint32_t)rnd();
    for (i = 0; i < n; i++)
        mask[i] = rnd() % (uint64_t)dens == 0 ? (uint8_t)(1 + rnd() % 200) : 0;
    dsrc = (char *)upload(dev, src, (size_t)span * 4);
    dmask = (char *)upload(dev, mask, (size_t)n);
    ddst = (char *)dalloc(dev, (size_t)n * 8);
    dcount = (int64_t *)dalloc(dev, 8);
    for (mode = 0; mode < 2; mode++) {
        const int64_t first = rs < 0 ? (h - 1) * -rs : 0;
        memset(&d, 0, sizeof d);
        d.ndim = 2;
        d.shape[0] = h;
        d.shape[1] = w;
        d.itemsize = mode ? 8 : 4;
        d.src_strides[0] = rs * 4;
        d.src_strides[1] = 4;
        d.mask_strides[0] = w;
        d.mask_strides[1] = 1;
        d.base = 7;
        d.gstride[0] = 3 * w;
        d.gstride[1] = 1;
        /* the CPU on host memory */
        d.src = mode ? NULL : (const char *)(src + first);
        d.mask = mask;
        d.dst = want;
        d.count = &wcount;
        dg_cpu_select_run(&d);
        /* the GPU */
        d.src = mode ? NULL : dsrc + first * 4;
        d.mask = (const dg_bool *)dmask;
        d.dst = ddst;
        d.count = dcount;
        DIE_ON(be->select(be, dev, DG_STREAM_COMPUTE, &d, E));
        gcount = (int64_t *)download(dev, dcount, 8);
        got = (char *)download(dev, ddst, (size_t)wcount * d.itemsize);
        if (*gcount != wcount)
            FAIL("select %s (%s): %lld selected, want %lld", what, mode ? "indices" : "values",
                 (long long)*gcount, (long long)wcount);
        else if (memcmp(got, want, (size_t)(wcount * d.itemsize)) != 0)
            FAIL("select %s (%s): different elements", what, mode ? "indices" : "values");
        free(gcount);
        free(got);
    }
    be->release(be, dev, dsrc);
    be->release(be, dev, dmask);
    be->release(be, dev, ddst);
    be->release(be, dev, dcount);
    free(src);
    free(mask);
    free(want);
}

/* Routes n keys in [0, kmax) by the range (start, stop, step); then gathers
 * rows of 3 x 2 int16 by the routed rows and scatters them back by position. */
static void route_rows_case(int dev, int64_t n, int64_t kmax, int64_t start, int64_t stop,
                            int64_t step)
{
    int64_t *key = (int64_t *)malloc((size_t)n * 8), *wrows = (int64_t *)malloc((size_t)n * 8);
    int64_t *wpos = (int64_t *)malloc((size_t)n * 8), wcount = 0, i, *gc, *gr, *gp;
    const int64_t nrows = (stop - start + step - 1) / step, rowb = 3 * 2 * 2;
    int16_t *rows = (int16_t *)malloc((size_t)(nrows * 6 * 2));
    char *wout = (char *)calloc((size_t)n, (size_t)rowb), *gout;
    char *dkey, *drows, *dpos, *dcnt, *dsrc, *dout;
    dg_route_desc r;
    dg_rows_desc q;
    for (i = 0; i < n; i++)
        key[i] = (int64_t)(rnd() % (uint64_t)kmax);
    for (i = 0; i < nrows * 6; i++)
        rows[i] = (int16_t)rnd();
    dkey = (char *)upload(dev, key, (size_t)n * 8);
    drows = (char *)dalloc(dev, (size_t)n * 8);
    dpos = (char *)dalloc(dev, (size_t)n * 8);
    dcnt = (char *)dalloc(dev, 8);
    memset(&r, 0, sizeof r);
    r.n = n;
    r.start = start;
    r.stop = stop;
    r.step = step;
    r.key = key;
    r.rows = wrows;
    r.pos = wpos;
    r.count = &wcount;
    dg_cpu_route_run(&r);
    r.key = (const int64_t *)dkey;
    r.rows = (int64_t *)drows;
    r.pos = (int64_t *)dpos;
    r.count = (int64_t *)dcnt;
    DIE_ON(be->route(be, dev, DG_STREAM_COMPUTE, &r, E));
    gc = (int64_t *)download(dev, dcnt, 8);
    gr = (int64_t *)download(dev, drows, (size_t)wcount * 8);
    gp = (int64_t *)download(dev, dpos, (size_t)wcount * 8);
    if (*gc != wcount || memcmp(gr, wrows, (size_t)wcount * 8) ||
        memcmp(gp, wpos, (size_t)wcount * 8))
        FAIL("route of %lld keys by (%lld, %lld, %lld): %lld routed, want %lld, or other "
             "lists", (long long)n, (long long)start, (long long)stop, (long long)step,
             (long long)*gc, (long long)wcount);
    /* a gather of the rows (3 x 2 blocks, rows reversed in memory), keyed by
     * the original keys, into dense rows; then the same, scattered back */
    dsrc = (char *)upload(dev, rows, (size_t)(nrows * rowb));
    dout = (char *)dalloc(dev, (size_t)(n * rowb));
    copy1(dev, DG_HOST, wout, dev, dout, (size_t)(n * rowb));
    memset(&q, 0, sizeof q);
    q.n = n;
    q.start = start;
    q.stop = stop;
    q.step = step;
    q.itemsize = 2;
    q.ndim = 2;
    q.shape[0] = 3;
    q.shape[1] = 2;
    q.src_rstride = -rowb;
    q.src_strides[0] = 2;  /* transposed within the row */
    q.src_strides[1] = 6;
    q.dst_rstride = rowb;
    q.dst_strides[0] = 4;
    q.dst_strides[1] = 2;
    q.key = key;
    q.src = (const char *)rows + (nrows - 1) * rowb;
    q.dst = wout;
    dg_cpu_rows_run(&q);
    q.key = (const int64_t *)dkey;
    q.src = dsrc + (nrows - 1) * rowb;
    q.dst = dout;
    DIE_ON(be->rows(be, dev, DG_STREAM_COMPUTE, &q, E));
    gout = (char *)download(dev, dout, (size_t)(n * rowb));
    if (memcmp(gout, wout, (size_t)(n * rowb)) != 0)
        FAIL("keyed gather of %lld rows: different rows", (long long)n);
    free(gout);
    /* scatter: the routed positions as keys into rows 0..n, one row each */
    memset(&q, 0, sizeof q);
    q.scatter = 1;
    q.n = wcount;
    q.start = 0;
    q.stop = n;
    q.step = 1;
    q.itemsize = 8;
    q.ndim = 0;
    q.src_rstride = 8;
    q.dst_rstride = 8;
    memset(wout, 0, (size_t)n * 8);
    copy1(dev, DG_HOST, wout, dev, dout, (size_t)n * 8);
    q.key = wpos;
    q.src = (const char *)wrows;
    q.dst = wout;
    dg_cpu_rows_run(&q);
    q.key = (const int64_t *)dpos;
    q.src = drows;
    q.dst = dout;
    DIE_ON(be->rows(be, dev, DG_STREAM_COMPUTE, &q, E));
    gout = (char *)download(dev, dout, (size_t)n * 8);
    if (memcmp(gout, wout, (size_t)n * 8) != 0)
        FAIL("keyed scatter of %lld rows: different rows", (long long)wcount);
    free(gout);
    free(gc);
    free(gr);
    free(gp);
    be->release(be, dev, dkey);
    be->release(be, dev, drows);
    be->release(be, dev, dpos);
    be->release(be, dev, dcnt);
    be->release(be, dev, dsrc);
    be->release(be, dev, dout);
    free(key);
    free(wrows);
    free(wpos);
    free(rows);
    free(wout);
}

/* Sorts `rows` rows of n elements of dtype dt (the rows strided, the
 * elements in order), values and positions, the GPU's against the CPU's. */
static void sort_case(int dev, int dt, int64_t rows, int64_t n)
{
    const int isz = dg_dtype_size(dt);
    const int64_t total = rows * n;
    char *src = (char *)malloc((size_t)(total * isz));
    char *want = (char *)malloc((size_t)(total * isz));
    int64_t *wpos = (int64_t *)malloc((size_t)total * 8), i;
    void *work;
    char *dsrc, *ddst, *didx, *got, *gpos;
    dg_sort_desc d;
    dg_status st;
    for (i = 0; i < total; i++) {
        rnd_value(dt, src + i * isz);
        if (i % 3 == 1) /* ties */
            memcpy(src + i * isz, src + (i - 1) * isz, (size_t)isz);
    }
    memset(&d, 0, sizeof d);
    d.dtype = dt;
    d.ndim = 2;
    d.shape[0] = rows;
    d.shape[1] = n;
    d.src_strides[0] = d.dst_strides[0] = n * isz;
    d.src_strides[1] = d.dst_strides[1] = isz;
    d.idx_strides[0] = n * 8;
    d.idx_strides[1] = 8;
    d.src = src;
    d.dst = want;
    d.idx = wpos;
    work = malloc(dg_cpu_sort_work_bytes(&d));
    dg_cpu_sort_run(&d, work);
    free(work);
    dsrc = (char *)upload(dev, src, (size_t)(total * isz));
    ddst = (char *)dalloc(dev, (size_t)(total * isz));
    didx = (char *)dalloc(dev, (size_t)total * 8);
    d.src = dsrc;
    d.dst = ddst;
    d.idx = (int64_t *)didx;
    st = be->sort(be, dev, DG_STREAM_COMPUTE, &d, E);
    if (st == DG_ERR_NOTIMPL && dg_dtype_kind(dt) == 'c') {
        /* complex goes through the host (stated) */
    } else if (st != DG_OK) {
        FAIL("sort of %s: status %d: %s", dg_dtype_name(dt), (int)st, gerr.msg);
    } else {
        got = (char *)download(dev, ddst, (size_t)(total * isz));
        gpos = (char *)download(dev, didx, (size_t)total * 8);
        if (memcmp(gpos, wpos, (size_t)total * 8) != 0 ||
            memcmp(got, want, (size_t)(total * isz)) != 0)
            FAIL("sort of %lld x %lld %s: different order", (long long)rows, (long long)n,
                 dg_dtype_name(dt));
        free(got);
        free(gpos);
    }
    be->release(be, dev, dsrc);
    be->release(be, dev, ddst);
    be->release(be, dev, didx);
    free(src);
    free(want);
    free(wpos);
}

static void index_tests(int dev)
{
    int dt;
    select_case(dev, 1, 100003, 0, 2, "dense 1-d (one pass)");
    select_case(dev, 1, 5, 0, 1, "dense, tiny");
    select_case(dev, 300, 77, 80, 3, "row-strided");
    select_case(dev, 517, 33, -40, 5, "rows reversed");
    select_case(dev, 4096, 3, 3, 1000, "sparse");
    route_rows_case(dev, 100001, 5000, 100, 4900, 3);
    route_rows_case(dev, 77, 50, 10, 20, 1);
    route_rows_case(dev, 20000, 1000, 0, 1000, 1);
    for (dt = 0; dt < DG_NDTYPES; dt++) {
        sort_case(dev, dt, 1, 70001);
        sort_case(dev, dt, 37, 1001);
        sort_case(dev, dt, 3, 1);
    }
}

/* ---- streams ------------------------------------------------------------------ */

/* Fill on the transfer stream, wait, compute on the compute stream, read back
 * on the transfer stream: the order must hold without host syncs between. */
static void stream_test(int dev)
{
    const int64_t n = (int64_t)1 << 24;
    float *a = (float *)dalloc(dev, (size_t)n * 4), *b = (float *)dalloc(dev, (size_t)n * 4);
    float *h = (float *)malloc((size_t)n * 4);
    dg_fill_desc f;
    dg_ew_desc ed;
    dg_status st;
    int loop = -1, i, rep;
    int dts[3] = {DG_FLOAT32, DG_FLOAT32, DG_FLOAT32};
    int64_t j;

    loop = dg_loop_find(dg_ufunc_find("add"), dts);
    /* the allocation is ordered on the compute stream: transfer waits for it */
    st = be->wait(be, dev, DG_STREAM_TRANSFER, be->pos(be, dev, DG_STREAM_COMPUTE), E);
    DIE_ON(st);
    memset(&f, 0, sizeof f);
    f.kind = DG_FILL_CONST;
    f.dtype = DG_FLOAT32;
    f.ndim = 1;
    f.shape[0] = n;
    f.strides[0] = 4;
    *(float *)f.value = 1.5f;
    f.dst = (char *)a;
    st = be->fill(be, dev, DG_STREAM_TRANSFER, &f, E);
    DIE_ON(st);
    st = be->wait(be, dev, DG_STREAM_COMPUTE, be->pos(be, dev, DG_STREAM_TRANSFER), E);
    DIE_ON(st);
    memset(&ed, 0, sizeof ed);
    ed.loop = loop;
    ed.nop = 3;
    ed.ndim = 1;
    ed.shape[0] = n;
    for (i = 0; i < 3; i++)
        ed.strides[i][0] = 4;
    ed.data[0] = (char *)a;
    ed.data[1] = (char *)a;
    ed.data[2] = (char *)b;
    for (rep = 0; rep < 20; rep++) { /* b = a + a; a = b + b ... */
        st = be->elementwise(be, dev, DG_STREAM_COMPUTE, &ed, E);
        DIE_ON(st);
        char *t = ed.data[0];
        ed.data[0] = ed.data[1] = ed.data[2];
        ed.data[2] = t;
    }
    st = be->wait(be, dev, DG_STREAM_TRANSFER, be->pos(be, dev, DG_STREAM_COMPUTE), E);
    DIE_ON(st);
    {
        dg_copy_desc c;
        memset(&c, 0, sizeof c);
        c.ndim = 1;
        c.shape[0] = n;
        c.itemsize = 4;
        c.src_dev = dev;
        c.src = ed.data[0];
        c.src_strides[0] = 4;
        c.dst_dev = DG_HOST;
        c.dst = (char *)h;
        c.dst_strides[0] = 4;
        st = be->copy(be, dev, DG_STREAM_TRANSFER, &c, E);
        DIE_ON(st);
    }
    for (j = 0; j < n; j++)
        if (h[j] != 1.5f * 1048576.0f) {
            FAIL("stream order: element %lld is %g, not %g", (long long)j, (double)h[j],
                 1.5 * 1048576.0);
            break;
        }
    st = be->wait(be, dev, DG_STREAM_COMPUTE, be->pos(be, dev, DG_STREAM_TRANSFER), E);
    DIE_ON(st);
    be->release(be, dev, a);
    be->release(be, dev, b);
    free(h);
}

/* ---- timings ------------------------------------------------------------------- */

static void bench(int ndev)
{
    const int64_t n = (int64_t)1 << 27; /* per device */
    char *a[8], *b[8], *o[8];
    dg_ew_desc ed;
    dg_status st;
    int dts[3] = {DG_FLOAT32, DG_FLOAT32, DG_FLOAT32}, dts1[2] = {DG_FLOAT32, DG_FLOAT32};
    int add = dg_loop_find(dg_ufunc_find("add"), dts);
    int sinl = dg_loop_find(dg_ufunc_find("sin"), dts1);
    int d, rep, i;
    double t = 0;

    if (ndev > 8)
        ndev = 8;
    for (d = 0; d < ndev; d++) {
        dg_fill_desc f;
        a[d] = (char *)dalloc(d, (size_t)n * 4);
        b[d] = (char *)dalloc(d, (size_t)n * 4);
        o[d] = (char *)dalloc(d, (size_t)n * 4);
        memset(&f, 0, sizeof f);
        f.kind = DG_FILL_ARANGE;
        f.dtype = DG_FLOAT32;
        f.ndim = 1;
        f.shape[0] = n;
        f.strides[0] = 4;
        f.gstep[0] = 1;
        *(float *)f.delta = 1e-6f;
        f.dst = a[d];
        DIE_ON(be->fill(be, d, DG_STREAM_COMPUTE, &f, E));
        f.dst = b[d];
        DIE_ON(be->fill(be, d, DG_STREAM_COMPUTE, &f, E));
    }
    for (i = 0; i < 2; i++) {
        int loop = i == 0 ? add : sinl;
        memset(&ed, 0, sizeof ed);
        ed.loop = loop;
        ed.nop = i == 0 ? 3 : 2;
        ed.ndim = 1;
        ed.shape[0] = n;
        ed.strides[0][0] = ed.strides[1][0] = ed.strides[2][0] = 4;
        for (rep = -2; rep < 20; rep++) {
            if (rep == 0) {
                for (d = 0; d < ndev; d++)
                    sync_dev(d);
                t = now();
            }
            for (d = 0; d < ndev; d++) {
                ed.data[0] = a[d];
                ed.data[1] = i == 0 ? b[d] : o[d];
                ed.data[2] = o[d];
                st = be->elementwise(be, d, DG_STREAM_COMPUTE, &ed, E);
                DIE_ON(st);
            }
        }
        for (d = 0; d < ndev; d++)
            sync_dev(d);
        t = (now() - t) / 20;
        printf("  %s f32 2^27 x %d GPUs: %.3f ms, %.0f GB/s\n", i == 0 ? "add" : "sin", ndev,
               t * 1e3, (double)n * ndev * 4 * (i == 0 ? 3 : 2) / t / 1e9);
    }
    /* latency: 1000 elements */
    ed.loop = add;
    ed.nop = 3;
    ed.shape[0] = 1000;
    ed.data[0] = a[0];
    ed.data[1] = b[0];
    ed.data[2] = o[0];
    sync_dev(0);
    t = now();
    for (rep = 0; rep < 20000; rep++)
        DIE_ON(be->elementwise(be, 0, DG_STREAM_COMPUTE, &ed, E));
    sync_dev(0);
    printf("  add f32 1000 elements, 1 GPU: %.2f us per call (enqueue+run)\n",
           (now() - t) / 20000 * 1e6);
    /* alloc + add + release */
    t = now();
    for (rep = 0; rep < 20000; rep++) {
        char *p = (char *)dalloc(0, 4000);
        ed.data[2] = p;
        DIE_ON(be->elementwise(be, 0, DG_STREAM_COMPUTE, &ed, E));
        be->release(be, 0, p);
    }
    sync_dev(0);
    printf("  alloc+add+release 1000 elements: %.2f us per op\n", (now() - t) / 20000 * 1e6);
    for (d = 0; d < ndev; d++) {
        be->release(be, d, a[d]);
        be->release(be, d, b[d]);
        be->release(be, d, o[d]);
    }
    /* 1 GiB host <-> all GPUs, one chunk per GPU, as the core's scatter does */
    {
        size_t total = (size_t)1 << 30, per = total / (size_t)ndev;
        char *h = (char *)malloc(total), *h2;
        for (i = 0; i < (int)(total / 4096); i++)
            h[(size_t)i * 4096] = (char)i;
        memset(h, 1, total);
        for (d = 0; d < ndev; d++)
            a[d] = (char *)dalloc(d, per);
        for (rep = 0; rep < 3; rep++) {
            t = now();
            for (d = 0; d < ndev; d++)
                copy1(d, DG_HOST, h + per * (size_t)d, d, a[d], per);
            for (d = 0; d < ndev; d++)
                sync_dev(d);
            printf("  h2d 1 GiB to %d GPUs: %.4f s\n", ndev, now() - t);
        }
        for (rep = 0; rep < 3; rep++) {
            h2 = (char *)malloc(total); /* fresh pages, as np.empty gives */
            t = now();
            for (d = 0; d < ndev; d++)
                copy1(d, d, a[d], DG_HOST, h2 + per * (size_t)d, per);
            printf("  d2h 1 GiB from %d GPUs into fresh memory: %.4f s\n", ndev, now() - t);
            t = now();
            for (d = 0; d < ndev; d++)
                copy1(d, d, a[d], DG_HOST, h2 + per * (size_t)d, per);
            printf("  d2h 1 GiB from %d GPUs into touched memory: %.4f s\n", ndev, now() - t);
            if (memcmp(h, h2, total) != 0)
                FAIL("1 GiB round trip differs");
            free(h2);
        }
        for (d = 0; d < ndev; d++)
            be->release(be, d, a[d]);
        free(h);
    }
}

int main(int argc, char **argv)
{
    int ndev, dev, loop, only = argc > 1 ? atoi(argv[1]) : -1;
    dg_status st;
    char name[256];
    size_t total = 0, freeb = 0;
    void *p = NULL;
    double t0 = now();

    st = dg_cuda_backend_create(0, &be, E);
    DIE_ON(st);
    ndev = be->ndevices;
    for (dev = 0; dev < ndev; dev++) {
        DIE_ON(be->device_info(be, dev, name, sizeof name, &total, &freeb, E));
        printf("GPU %d: %s, %.1f GiB, %.1f GiB free\n", dev, name, total / 1073741824.0,
               freeb / 1073741824.0);
    }
    printf("elementwise: %d loops x contig/strided on GPU 0\n", DG_NLOOPS);
    for (loop = 0; loop < DG_NLOOPS; loop++) {
        if (only >= 0 && loop != only)
            continue;
        ew_case(0, loop, 0);
        ew_case(0, loop, 1);
        if (dg_loops[loop].nin > 1)
            ew_case(0, loop, 2);
    }
    printf("  worst ulp among the libm loops: %d (WARN lines: over %d; %.1f s)\n",
           worst_ulp_seen, MAX_ULP, now() - t0);
    printf("fills\n");
    fill_tests(0);
    random_fill_tests(0);
    if (only < 0) {
        printf("copies\n");
        copy_tests(ndev);
    }
    printf("index work\n");
    index_tests(0);
    printf("streams\n");
    stream_test(0);
    printf("out of memory\n");
    st = be->alloc(be, 0, (size_t)1 << 50, &p, E);
    if (st != DG_ERR_DEVICE_NOMEM || gerr.bytes != ((size_t)1 << 50) || gerr.device != 0)
        FAIL("a 1 PiB alloc gave status %d bytes %zu device %d: %s", (int)st, gerr.bytes,
             gerr.device, gerr.msg);
    else
        printf("  ok: %s\n", gerr.msg);
    p = dalloc(0, 1024); /* still works */
    be->release(be, 0, p);
    if (only < 0) {
        printf("timings\n");
        bench(ndev);
    }
    for (dev = 0; dev < ndev; dev++) {
        sync_dev(dev);
        if (be->bytes_in_use(be, dev) != 0)
            FAIL("GPU %d: %zu bytes still in use", dev, be->bytes_in_use(be, dev));
    }
    st = be->sync_all(be, E);
    DIE_ON(st);
    be->destroy(be);
    printf("%s: %d failures (%.1f s)\n", nfail ? "FAILED" : "PASSED", nfail, now() - t0);
    return nfail ? 1 : 0;
}
