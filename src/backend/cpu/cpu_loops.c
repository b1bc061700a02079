/* The CPU backend's elementwise loops, generated from DG_LOOP_LIST, and fills.
 *
 * One kernel per loop runs the innermost axis: a contiguous fast path (every
 * operand dense, or a broadcast scalar input) written as a plain indexed loop
 * that gcc -O3 vectorises for the simple ops, and a strided path (any byte
 * strides, the where mask).  dg_cpu_ew_run drops length-1 axes, merges axes
 * that are contiguous with each other, and walks the outer axes with an index
 * counter.  The scalar math is kernels/dg_scalar.h, shared with CUDA.  One
 * loop depends on strides as NumPy's does (see dg_loops.h): float power with
 * a stride-0 exponent.
 *
 * Where the binding handed over NumPy's own loop (cpu_ext.h), that loop runs
 * the innermost axis instead, and reductions and scans call it the way
 * NumPy's reduce and accumulate do, so that results are NumPy's bits. */
#include <fenv.h>
#include <math.h>
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cpu_ext.h"
#include "cpu_loops.h"
#include "../../core/dg_box.h"
#include "../../core/dg_loops.h"
#include "../../core/dg_ufunc.h"
#include "../../../kernels/dg_scalar.h"
#include "../../../kernels/dg_random.h"

/* Runs one loop over n elements of the innermost axis: operand k at p[k] with
 * byte stride s[k]; w (may be NULL) the where mask with byte stride ws. */
typedef void (*dg_cpu_kernel)(char *const *p, const int64_t *s, int64_t n,
                              const char *w, int64_t ws);

#define DG_SZ(t) ((int64_t)sizeof(dg_ct_##t))
#define DG_AT(t, ptr) (*(dg_ct_##t *)(ptr))

#define DG_CPU_K1(uf, ti, to, fn)                                              \
    static void fn##_loop(char *const *p, const int64_t *s, int64_t n,         \
                          const char *w, int64_t ws)                           \
    {                                                                          \
        if (w == NULL && s[0] == DG_SZ(ti) && s[1] == DG_SZ(to)) {             \
            const dg_ct_##ti *a = (const dg_ct_##ti *)p[0];                    \
            dg_ct_##to *o = (dg_ct_##to *)p[1];                                \
            for (int64_t i = 0; i < n; i++)                                    \
                o[i] = fn(a[i]);                                               \
            return;                                                            \
        }                                                                      \
        const char *a = p[0];                                                  \
        char *o = p[1];                                                        \
        for (int64_t i = 0; i < n; i++) {                                      \
            if (w == NULL || w[i * ws])                                        \
                DG_AT(to, o + i * s[1]) = fn(DG_AT(ti, a + i * s[0]));         \
        }                                                                      \
    }

#define DG_CPU_K2(uf, ta, tb, to, fn)                                          \
    static void fn##_loop(char *const *p, const int64_t *s, int64_t n,         \
                          const char *w, int64_t ws)                           \
    {                                                                          \
        if (w == NULL && s[2] == DG_SZ(to)) {                                  \
            dg_ct_##to *o = (dg_ct_##to *)p[2];                                \
            if (s[0] == DG_SZ(ta) && s[1] == DG_SZ(tb)) {                      \
                const dg_ct_##ta *a = (const dg_ct_##ta *)p[0];                \
                const dg_ct_##tb *b = (const dg_ct_##tb *)p[1];                \
                for (int64_t i = 0; i < n; i++)                                \
                    o[i] = fn(a[i], b[i]);                                     \
                return;                                                        \
            }                                                                  \
            if (s[0] == 0 && s[1] == DG_SZ(tb)) {                              \
                const dg_ct_##ta a = DG_AT(ta, p[0]);                          \
                const dg_ct_##tb *b = (const dg_ct_##tb *)p[1];                \
                for (int64_t i = 0; i < n; i++)                                \
                    o[i] = fn(a, b[i]);                                        \
                return;                                                        \
            }                                                                  \
            if (s[0] == DG_SZ(ta) && s[1] == 0) {                              \
                const dg_ct_##ta *a = (const dg_ct_##ta *)p[0];                \
                const dg_ct_##tb b = DG_AT(tb, p[1]);                          \
                for (int64_t i = 0; i < n; i++)                                \
                    o[i] = fn(a[i], b);                                        \
                return;                                                        \
            }                                                                  \
        }                                                                      \
        const char *a = p[0], *b = p[1];                                       \
        char *o = p[2];                                                        \
        for (int64_t i = 0; i < n; i++) {                                      \
            if (w == NULL || w[i * ws])                                        \
                DG_AT(to, o + i * s[2]) =                                      \
                    fn(DG_AT(ta, a + i * s[0]), DG_AT(tb, b + i * s[1]));      \
        }                                                                      \
    }

/* Two outputs: written through temporaries, so that an output aliasing an
 * input is read before it is written. */
#define DG_CPU_K12(uf, ti, to0, to1, fn)                                       \
    static void fn##_loop(char *const *p, const int64_t *s, int64_t n,         \
                          const char *w, int64_t ws)                           \
    {                                                                          \
        for (int64_t i = 0; i < n; i++) {                                      \
            if (w == NULL || w[i * ws]) {                                      \
                dg_ct_##to0 r0;                                                \
                dg_ct_##to1 r1;                                                \
                fn(DG_AT(ti, p[0] + i * s[0]), &r0, &r1);                      \
                DG_AT(to0, p[1] + i * s[1]) = r0;                              \
                DG_AT(to1, p[2] + i * s[2]) = r1;                              \
            }                                                                  \
        }                                                                      \
    }

#define DG_CPU_K22(uf, ta, tb, to0, to1, fn)                                   \
    static void fn##_loop(char *const *p, const int64_t *s, int64_t n,         \
                          const char *w, int64_t ws)                           \
    {                                                                          \
        for (int64_t i = 0; i < n; i++) {                                      \
            if (w == NULL || w[i * ws]) {                                      \
                dg_ct_##to0 r0;                                                \
                dg_ct_##to1 r1;                                                \
                fn(DG_AT(ta, p[0] + i * s[0]), DG_AT(tb, p[1] + i * s[1]),     \
                   &r0, &r1);                                                  \
                DG_AT(to0, p[2] + i * s[2]) = r0;                              \
                DG_AT(to1, p[3] + i * s[3]) = r1;                              \
            }                                                                  \
        }                                                                      \
    }

DG_LOOP_LIST(DG_CPU_K1, DG_CPU_K2, DG_CPU_K12, DG_CPU_K22)

/* power of float32/float64 with a stride-0 exponent: NumPy's fast path
 * (dg_power_<t>_sexp); any other strides take the generated kernel. */
#define DG_CPU_POWER_SEXP(t)                                                   \
    static void dg_power_##t##_sexp_loop(char *const *p, const int64_t *s,     \
                                         int64_t n, const char *w, int64_t ws) \
    {                                                                          \
        if (s[1] != 0) {                                                       \
            dg_power_##t##_loop(p, s, n, w, ws);                               \
            return;                                                            \
        }                                                                      \
        const dg_ct_##t b = DG_AT(t, p[1]);                                    \
        if (w == NULL && s[0] == DG_SZ(t) && s[2] == DG_SZ(t)) {               \
            const dg_ct_##t *a = (const dg_ct_##t *)p[0];                      \
            dg_ct_##t *o = (dg_ct_##t *)p[2];                                  \
            for (int64_t i = 0; i < n; i++)                                    \
                o[i] = dg_power_##t##_sexp(a[i], b);                           \
            return;                                                            \
        }                                                                      \
        for (int64_t i = 0; i < n; i++) {                                      \
            if (w == NULL || w[i * ws])                                        \
                DG_AT(t, p[2] + i * s[2]) =                                    \
                    dg_power_##t##_sexp(DG_AT(t, p[0] + i * s[0]), b);         \
        }                                                                      \
    }
DG_CPU_POWER_SEXP(f4)
DG_CPU_POWER_SEXP(f8)

#define DG_CPU_PTR1(uf, ti, to, fn) fn##_loop,
#define DG_CPU_PTR2(uf, ta, tb, to, fn) fn##_loop,
#define DG_CPU_PTR12(uf, ti, to0, to1, fn) fn##_loop,
#define DG_CPU_PTR22(uf, ta, tb, to0, to1, fn) fn##_loop,

/* Indexed by loop id: the same order as dg_loops[]. */
static const dg_cpu_kernel dg_cpu_kernels[] = {
    DG_LOOP_LIST(DG_CPU_PTR1, DG_CPU_PTR2, DG_CPU_PTR12, DG_CPU_PTR22)
};

_Static_assert(sizeof dg_cpu_kernels / sizeof dg_cpu_kernels[0] == DG_NLOOPS,
               "one CPU kernel per loop of DG_LOOP_LIST");

/* ---- casts into float16 and the floating-point status -------------------
 * NumPy's conversions to float16 (npy_float_to_half, npy_double_to_half,
 * integers through float) are integer arithmetic that raises overflow (a
 * finite value rounding to inf) and underflow (a value not 0 below 2^-14,
 * the smallest normal, not held exactly: tiny before rounding) in the status
 * by hand.  kernels/dg_scalar.h's conversions, shared with the GPUs, raise
 * nothing, so that the CPU's casts into float16 ran silent under fenv
 * (found in session 17: astype, out= and dtype= casts, copies into a
 * float16 array).  These loops raise them as NumPy's do, tile by tile: the
 * tile's inputs tested first (one compare each: |v| below 2^-14 and not 0,
 * or at least 65520, the first value that rounds to inf; NaN never), and
 * only a tile holding such a value has its elements classified (each one
 * converted again).  Sources that reach neither bound (bool, 8-bit and int16
 * integers, float16) keep the plain loop. */
#define DG_HALF_TILE 1024

/* The cheap tests, on the bits of |x| (integer compares: a float compare
 * of a NaN, vectorised, raises invalid in the status being read): not 0 and
 * below 2^-14, or at least 65520 (inf included, NaN not). */
static inline int dg_half_odd32(uint32_t u)
{
    const uint32_t b = u & 0x7fffffffu;
    return ((b != 0) & (b < 0x38800000u)) | ((b >= 0x477ff000u) & (b <= 0x7f800000u));
}
static inline int dg_half_odd64(uint64_t u)
{
    const uint64_t b = u & 0x7fffffffffffffffull;
    return ((b != 0) & (b < 0x3f10000000000000ull)) |
           ((b >= 0x40effe0000000000ull) & (b <= 0x7ff0000000000000ull));
}
static inline int dg_half_odd_int(double v) { return fabs(v) >= 65520.0; }

/* The status flags NumPy's conversion of v (not NaN) raises where it gives h. */
static int dg_half_flags(double v, dg_half h)
{
    if ((h & 0x7fffu) == 0x7c00u && !isinf(v))
        return FE_OVERFLOW | FE_INEXACT;
    if (v != 0 && fabs(v) < 0x1p-14 && (double)dg_half_to_float(h) != v)
        return FE_UNDERFLOW | FE_INEXACT;
    return 0;
}

/* ODD(x): the cheap test of a source element; RE(x): its value (or its real
 * part's) as double, read only where ODD holds (never a NaN) */
#define DG_HALF_ODD_I(x) dg_half_odd_int((double)(x))
#define DG_HALF_ODD_F4(x) dg_half_odd32(dg_f4_bits(x))
#define DG_HALF_ODD_F8(x) dg_half_odd64(dg_f8_bits(x))
#define DG_HALF_ODD_C8(x) dg_half_odd32(dg_f4_bits((x).re))
#define DG_HALF_ODD_C16(x) dg_half_odd64(dg_f8_bits((x).re))
#define DG_HALF_RE_R(x) ((double)(x))
#define DG_HALF_RE_C(x) ((double)(x).re)
#define DG_CPU_HALF_RAISE(t, ODD, RE)                                          \
    static void dg_cast_##t##_f2_raise(char *const *q, const int64_t *s,       \
                                       int64_t m, const char *wq, int64_t ws)  \
    {                                                                          \
        int f = 0;                                                             \
        for (int64_t i = 0; i < m; i++) {                                      \
            const dg_ct_##t v = DG_AT(t, q[0] + i * s[0]);                     \
            if ((wq == NULL || wq[i * ws]) && ODD(v))                          \
                f |= dg_half_flags(RE(v), dg_cast_##t##_f2(v));                \
        }                                                                      \
        if (f)                                                                 \
            feraiseexcept(f);                                                  \
    }
#define DG_CPU_HALF_CAST(t, ODD, RE)                                           \
    static void dg_cast_##t##_f2_fenv_loop(char *const *p, const int64_t *s,   \
                                           int64_t n, const char *w, int64_t ws)\
    {                                                                          \
        for (int64_t i0 = 0; i0 < n; i0 += DG_HALF_TILE) {                     \
            const int64_t m = n - i0 < DG_HALF_TILE ? n - i0 : DG_HALF_TILE;   \
            char *const q[2] = {p[0] + i0 * s[0], p[1] + i0 * s[1]};           \
            const char *wq = w ? w + i0 * ws : NULL;                           \
            int odd = 0;                                                       \
            if (s[0] == DG_SZ(t)) { /* dense: the test vectorised */           \
                const dg_ct_##t *a = (const dg_ct_##t *)q[0];                  \
                for (int64_t i = 0; i < m; i++)                                \
                    odd |= ODD(a[i]);                                          \
            } else {                                                           \
                for (int64_t i = 0; i < m; i++)                                \
                    odd |= ODD(DG_AT(t, q[0] + i * s[0]));                     \
            }                                                                  \
            if (odd) /* classified before the tile is written: in place */     \
                dg_cast_##t##_f2_raise(q, s, m, wq, ws);                       \
            dg_cast_##t##_f2_loop(q, s, m, wq, ws);                            \
        }                                                                      \
    }
#define DG_CPU_HALF_CASTS(X)                                                   \
    X(u2, DG_HALF_ODD_I, DG_HALF_RE_R) X(i4, DG_HALF_ODD_I, DG_HALF_RE_R)      \
    X(u4, DG_HALF_ODD_I, DG_HALF_RE_R) X(i8, DG_HALF_ODD_I, DG_HALF_RE_R)      \
    X(u8, DG_HALF_ODD_I, DG_HALF_RE_R) X(f4, DG_HALF_ODD_F4, DG_HALF_RE_R)     \
    X(f8, DG_HALF_ODD_F8, DG_HALF_RE_R) X(c8, DG_HALF_ODD_C8, DG_HALF_RE_C)    \
    X(c16, DG_HALF_ODD_C16, DG_HALF_RE_C)
DG_CPU_HALF_CASTS(DG_CPU_HALF_RAISE)
DG_CPU_HALF_CASTS(DG_CPU_HALF_CAST)

#define DG_CPU_HALF_PTR(t, ODD, RE) [DG_DT_##t] = dg_cast_##t##_f2_fenv_loop,
static const dg_cpu_kernel dg_cpu_half_casts[DG_NDTYPES] = {DG_CPU_HALF_CASTS(DG_CPU_HALF_PTR)};

/* The CPU kernel of a loop: dg_cpu_kernels[], but the casts into float16
 * above.  (A cast's loop id is from * DG_NDTYPES + to: dg_loops.h.) */
static dg_cpu_kernel dg_cpu_kernel_of(int loop)
{
    if (loop >= 0 && loop < DG_NDTYPES * DG_NDTYPES && loop % DG_NDTYPES == DG_DT_f2 &&
        dg_cpu_half_casts[loop / DG_NDTYPES])
        return dg_cpu_half_casts[loop / DG_NDTYPES];
    return dg_cpu_kernels[loop];
}

/* Operands of the where mask and the loop, as one strided space. */
#define DG_CPU_NOPS (DG_MAXLOOPOPS + 1)

/* Drops length-1 axes and merges each axis into the next inner one when every
 * operand steps over the inner axis exactly once per outer step.  On return
 * shape[0..*ndim) and st[k][0..*ndim) describe the same elements; *ndim >= 1. */
static void dg_cpu_coalesce(int *ndim, int64_t *shape, int nops,
                            int64_t st[][DG_MAXDIM])
{
    int nd = 0;
    for (int a = 0; a < *ndim; a++) {
        if (shape[a] == 1)
            continue;
        int merge = nd > 0;
        for (int k = 0; merge && k < nops; k++)
            merge = st[k][nd - 1] == st[k][a] * shape[a];
        if (merge) {
            shape[nd - 1] *= shape[a];
            for (int k = 0; k < nops; k++)
                st[k][nd - 1] = st[k][a];
        } else {
            shape[nd] = shape[a];
            for (int k = 0; k < nops; k++)
                st[k][nd] = st[k][a];
            nd++;
        }
    }
    if (nd == 0) {
        shape[0] = 1;
        for (int k = 0; k < nops; k++)
            st[k][0] = 0;
        nd = 1;
    }
    *ndim = nd;
}

/* ---- the software rule of floating-point errors (cpu_loops.h) ---------- */

static _Thread_local int t_soft;          /* 1: between begin and end */
static _Thread_local int t_soft_under;    /* underflow is watched */
static _Thread_local unsigned t_soft_kinds;

void dg_cpu_soft_begin(uint32_t actions)
{
    t_soft = 1;
    t_soft_under = ((actions >> 8) & 0xFu) != 0;
    t_soft_kinds = 0;
}

unsigned dg_cpu_soft_end(void)
{
    t_soft = 0;
    return t_soft_kinds;
}

/* kern (loop `loop`) over n elements as dg_cpu_kernel says, one at a time:
 * each element's inputs copied first (an output may be an input), then
 * classified with its results (dg_fpe_rule), as a CUDA kernel does. */
static void dg_cpu_soft_run(int loop, dg_cpu_kernel kern, char *const *p, const int64_t *s,
                            int64_t n, const char *w, int64_t ws)
{
    const dg_loop_info *li = &dg_loops[loop];
    const int nin = li->nin, nop = li->nin + li->nout;
    const int cls = dg_loop_fpe_cls(loop);
    int dt[DG_MAXLOOPOPS];
    for (int k = 0; k < nop; k++)
        dt[k] = li->dtypes[k];
    for (int64_t i = 0; i < n; i++) {
        alignas(16) unsigned char in[DG_MAXLOOPOPS][16];
        char *q[DG_MAXLOOPOPS];
        const void *v[DG_MAXLOOPOPS];
        if (w != NULL && !w[i * ws])
            continue;
        for (int k = 0; k < nop; k++) {
            if (k < nin) {
                memcpy(in[k], p[k] + i * s[k], (size_t)dg_dtype_size(dt[k]));
                q[k] = (char *)in[k];
            } else {
                q[k] = p[k] + i * s[k];
            }
            v[k] = q[k];
        }
        /* one element: the strides only pick the loop's path (power's) */
        kern(q, s, 1, NULL, 0);
        if (cls != DG_FPC_NONE)
            t_soft_kinds |= dg_fpe_rule_at(cls, t_soft_under, nin, nop, dt, v);
    }
}

/* ---- stores that bypass the cache (cpu_loops.h) ---------------------------- */

/* The last-level cache when the system does not say (bytes). */
#define DG_STREAM_LLC_DEFAULT ((size_t)32 << 20)
/* Never below this: small outputs stay in the cache whatever the count of
 * devices. */
#define DG_STREAM_FLOOR ((size_t)1 << 20)
/* A single loop's output, or a copy, is streamed only with this many
 * devices or more (the fused chains whatever the count).  a + b of 2^25
 * float64, streamed against plain: on a 16-core Xeon 1.08x faster on 1
 * device, 1.03x on 8, 1.18x on 16; on the 2-core EPYC 0.91x on 1 device and
 * 0.98x on 2.  The Jacobi step (fused) gained everywhere: 1.05-1.22x on the
 * Xeon, 1.24-1.25x on the EPYC (2026-11-27-s16-cpu16.md). */
#define DG_STREAM_PLAIN_DEVICES 8
/* Bytes of one streamed tile: well inside the first-level cache. */
#define DG_STREAM_TILE 8192

static size_t g_stream_min = (size_t)-1; /* -1: never */
/* the same for a single loop's output and a copy: never below
 * DG_STREAM_PLAIN_DEVICES devices, unless set (dg_cpu_stream_plain_min) */
static size_t g_stream_plain_min = (size_t)-1;
static int g_stream_all;                  /* DGARRAY_CPU_STREAM_LOOPS=all: every loop */
static _Atomic long long g_stream_runs;  /* runs that streamed, for tests */

/* Bytes of the last-level cache over the whole machine (each instance's size,
 * from sysfs, times the cores over the cores that share one), or 0 where the
 * system does not say.  glibc's sysconf(_SC_LEVEL3_CACHE_SIZE) is not used: on
 * an AMD EPYC virtual machine it gave ten times the cache that sysfs and
 * lscpu give (320 MiB against one 32 MiB instance). */
static size_t llc_bytes(void)
{
    char path[96], buf[256];
    size_t best = 0;
    int best_level = 0;
    for (int i = 0; i < 8; i++) {
        int level = 0, shared = 0;
        unsigned long long kb = 0;
        FILE *f;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (!(f = fopen(path, "r")))
            break;
        if (fscanf(f, "%d", &level) != 1)
            level = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (level <= best_level || !(f = fopen(path, "r")))
            continue;
        if (fscanf(f, "%llu", &kb) != 1)
            kb = 0;
        fclose(f);
        snprintf(path, sizeof path,
                 "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
        if ((f = fopen(path, "r"))) {
            /* "0-15,32-47": count the cores listed */
            if (fgets(buf, sizeof buf, f)) {
                char *q = buf;
                while (*q) {
                    char *end;
                    long lo = strtol(q, &end, 10), hi;
                    if (end == q)
                        break;
                    hi = lo;
                    if (*end == '-')
                        hi = strtol(end + 1, &end, 10);
                    shared += (int)(hi - lo + 1);
                    q = *end == ',' ? end + 1 : end;
                    if (*q == '\n')
                        break;
                }
            }
            fclose(f);
        }
        if (kb == 0)
            continue;
        best_level = level;
        best = (size_t)kb << 10;
        {
            const long cores = sysconf(_SC_NPROCESSORS_ONLN);
            if (shared > 0 && cores > shared)
                best = best * (size_t)cores / (size_t)shared;
        }
    }
    return best;
}

void dg_cpu_stream_setup(int ndev)
{
    const char *e = getenv("DGARRAY_CPU_STREAM_BYTES"), *l = getenv("DGARRAY_CPU_STREAM_LOOPS");
    size_t llc;
    g_stream_all = l && strcmp(l, "all") == 0;
    if (e && *e) {
        char *end = NULL;
        long long v = strtoll(e, &end, 10);
        if (end != e && v >= 0) {
            dg_cpu_stream_set_min(v == 0 ? (size_t)-1 : (size_t)v);
            return;
        }
    }
    llc = llc_bytes();
    if (llc == 0)
        llc = DG_STREAM_LLC_DEFAULT;
    llc /= (size_t)(ndev > 0 ? ndev : 1);
    g_stream_min = llc > DG_STREAM_FLOOR ? llc : DG_STREAM_FLOOR;
    g_stream_plain_min = ndev >= DG_STREAM_PLAIN_DEVICES || g_stream_all ? g_stream_min
                                                                         : (size_t)-1;
}

size_t dg_cpu_stream_min(void) { return g_stream_min; }

size_t dg_cpu_stream_plain_min(void) { return g_stream_plain_min; }

void dg_cpu_stream_set_min(size_t bytes) { g_stream_min = g_stream_plain_min = bytes; }

void dg_cpu_stream_set_plain_min(size_t bytes) { g_stream_plain_min = bytes; }

void dg_cpu_stream_copy(char *dst, const char *src, size_t n)
{
#if defined(__SSE2__)
    size_t head = (16u - ((uintptr_t)dst & 15u)) & 15u;
    if (head > n)
        head = n;
    memcpy(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    for (; n >= 64; n -= 64, dst += 64, src += 64) {
        const __m128i a = _mm_loadu_si128((const __m128i *)src);
        const __m128i b = _mm_loadu_si128((const __m128i *)(src + 16));
        const __m128i c = _mm_loadu_si128((const __m128i *)(src + 32));
        const __m128i d = _mm_loadu_si128((const __m128i *)(src + 48));
        _mm_stream_si128((__m128i *)dst, a);
        _mm_stream_si128((__m128i *)(dst + 16), b);
        _mm_stream_si128((__m128i *)(dst + 32), c);
        _mm_stream_si128((__m128i *)(dst + 48), d);
    }
    for (; n >= 16; n -= 16, dst += 16, src += 16)
        _mm_stream_si128((__m128i *)dst, _mm_loadu_si128((const __m128i *)src));
#endif
    memcpy(dst, src, n);
}

void dg_cpu_stream_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
    g_stream_runs++;
}

long long dg_cpu_stream_runs(void) { return g_stream_runs; }

int dg_cpu_loop_streams(int loop)
{
    if (loop < 0 || loop >= DG_NLOOPS)
        return 0;
    if (g_stream_all)
        return 1;
    switch (dg_loops[loop].ufunc) {
    case DG_UF_cast: case DG_UF_add: case DG_UF_subtract: case DG_UF_multiply:
    case DG_UF_negative: case DG_UF_positive: case DG_UF_absolute: case DG_UF_fabs:
    case DG_UF_conjugate: case DG_UF_square: case DG_UF_copysign:
    case DG_UF_greater: case DG_UF_greater_equal: case DG_UF_less: case DG_UF_less_equal:
    case DG_UF_equal: case DG_UF_not_equal: case DG_UF_logical_and: case DG_UF_logical_or:
    case DG_UF_logical_xor: case DG_UF_logical_not: case DG_UF_maximum: case DG_UF_minimum:
    case DG_UF_fmax: case DG_UF_fmin: case DG_UF_bitwise_and: case DG_UF_bitwise_or:
    case DG_UF_bitwise_xor: case DG_UF_invert: case DG_UF_isfinite: case DG_UF_isinf:
    case DG_UF_isnan: case DG_UF_signbit:
        return 1;
    default:
        return 0;
    }
}

/* 1 if the one output of an elementwise run (operand `o` of nop, inputs
 * before it) may be streamed: dense along the inner axis, at least the
 * threshold in bytes, and not meeting an input's bytes unless it is that
 * very view (an in-place loop reads each element before it writes it). */
static int ew_streams(int ndim, const int64_t *shape, char *const *ptr,
                      int64_t st[][DG_MAXDIM], const int *isz, int nin, int o)
{
    int64_t n = 1;
    for (int a = 0; a < ndim; a++)
        n *= shape[a];
    if (st[o][ndim - 1] != isz[o] || isz[o] > 16 || shape[ndim - 1] < 2 ||
        (size_t)n * (size_t)isz[o] < g_stream_plain_min)
        return 0;
    for (int k = 0; k < nin; k++) {
        if (isz[k] == 0 || !dg_spans_meet(ndim, ptr[o], st[o], shape, isz[o], ptr[k], st[k],
                                          shape, isz[k]))
            continue;
        if (ptr[k] != ptr[o] || isz[k] != isz[o] ||
            memcmp(st[k], st[o], sizeof(int64_t) * (size_t)ndim) != 0)
            return 0;
    }
    return 1;
}

void dg_cpu_ew_run(const dg_ew_desc *d)
{
    if (d->loop < 0 || d->loop >= DG_NLOOPS || d->ndim < 0 || d->ndim > DG_MAXDIM)
        return;
    const dg_loop_info *li = &dg_loops[d->loop];
    const int nin = li->nin, nop = li->nin + li->nout;
    const int wk = nop; /* index of the where mask among the operands */
    const int nops = d->where ? nop + 1 : nop;
    alignas(16) unsigned char scalars[DG_MAXLOOPOPS][16];
    char *ptr[DG_CPU_NOPS];
    int64_t st[DG_CPU_NOPS][DG_MAXDIM];
    int64_t shape[DG_MAXDIM];
    int ndim = d->ndim;

    for (int a = 0; a < ndim; a++) {
        if (d->shape[a] <= 0)
            return;
        shape[a] = d->shape[a];
    }
    for (int k = 0; k < nop; k++) {
        int scalar = k < nin && d->data[k] == NULL;
        if (scalar) {
            memcpy(scalars[k], d->scalar[k], sizeof scalars[k]);
            ptr[k] = (char *)scalars[k];
        } else {
            ptr[k] = d->data[k];
        }
        for (int a = 0; a < ndim; a++)
            st[k][a] = scalar ? 0 : d->strides[k][a];
    }
    if (d->where) {
        ptr[wk] = (char *)d->where;
        for (int a = 0; a < ndim; a++)
            st[wk][a] = d->where_strides[a];
    }
    dg_cpu_coalesce(&ndim, shape, nops, st);

    const dg_cpu_ext *ext = dg_cpu_ext_of(d->loop);
    dg_cpu_kernel kern = dg_cpu_kernel_of(d->loop);
    if (li->ufunc == DG_UF_power && li->dtypes[0] == DG_FLOAT32)
        kern = dg_power_f4_sexp_loop;
    else if (li->ufunc == DG_UF_power && li->dtypes[0] == DG_FLOAT64)
        kern = dg_power_f8_sexp_loop;
    const int inner = ndim - 1;
    int64_t s_in[DG_MAXLOOPOPS];
    for (int k = 0; k < nop; k++)
        s_in[k] = st[k][inner];
    /* One element per call: NumPy's loops choose their path by the strides
     * and take an output stride of 0 as a reduction into one element (for
     * complex64 multiply, a path without FMA: other bits than NumPy's own
     * call on one element gives); an output stride of one element is
     * NumPy's, and writes the same single element. */
    if (shape[inner] == 1)
        for (int k = nin; k < nop; k++)
            if (s_in[k] == 0)
                s_in[k] = dg_dtype_size(li->dtypes[k]);
    const int64_t ws = d->where ? st[wk][inner] : 0;
    int64_t idx[DG_MAXDIM] = {0};
    int isz[DG_MAXLOOPOPS];
    for (int k = 0; k < nop; k++)
        isz[k] = k < nin && d->data[k] == NULL ? 0 : dg_dtype_size(li->dtypes[k]);
    /* one output, no mask: written tile by tile past the cache where large */
    const int stream = !d->where && li->nout == 1 && dg_cpu_loop_streams(d->loop) &&
                       ew_streams(ndim, shape, ptr, st, isz, nin, nin);

    for (;;) {
        if (stream) {
            alignas(64) char tile[DG_STREAM_TILE];
            const int64_t per = DG_STREAM_TILE / isz[nin];
            char *q[DG_MAXLOOPOPS];
            for (int64_t i0 = 0; i0 < shape[inner]; i0 += per) {
                const int64_t m = shape[inner] - i0 < per ? shape[inner] - i0 : per;
                for (int k = 0; k < nin; k++)
                    q[k] = ptr[k] + i0 * s_in[k];
                q[nin] = tile;
                dg_cpu_loop_inner(d->loop, q, s_in, m); /* no mask here */
                dg_cpu_stream_copy(ptr[nin] + i0 * s_in[nin], tile, (size_t)(m * isz[nin]));
            }
        } else if (t_soft)
            dg_cpu_soft_run(d->loop, kern, ptr, s_in, shape[inner], d->where ? ptr[wk] : NULL, ws);
        else if (ext)
            dg_cpu_ext_run(ext, nop, ptr, s_in, shape[inner], d->where ? ptr[wk] : NULL, ws);
        else
            kern(ptr, s_in, shape[inner], d->where ? ptr[wk] : NULL, ws);
        /* next outer index; back at the start means done */
        int a = inner - 1;
        for (; a >= 0; a--) {
            for (int k = 0; k < nops; k++)
                ptr[k] += st[k][a];
            if (++idx[a] < shape[a])
                break;
            for (int k = 0; k < nops; k++)
                ptr[k] -= st[k][a] * shape[a];
            idx[a] = 0;
        }
        if (a < 0)
            break;
    }
    if (stream)
        dg_cpu_stream_fence();
}

void dg_cpu_loop_inner(int loop, char *const *p, const int64_t *s, int64_t n)
{
    const dg_loop_info *li = &dg_loops[loop];
    const dg_cpu_ext *ext = dg_cpu_ext_of(loop);
    dg_cpu_kernel kern = dg_cpu_kernel_of(loop);
    if (ext && !t_soft) {
        dg_cpu_ext_run(ext, li->nin + li->nout, p, s, n, NULL, 0);
        return;
    }
    if (li->ufunc == DG_UF_power && li->dtypes[0] == DG_FLOAT32)
        kern = dg_power_f4_sexp_loop;
    else if (li->ufunc == DG_UF_power && li->dtypes[0] == DG_FLOAT64)
        kern = dg_power_f8_sexp_loop;
    if (t_soft)
        dg_cpu_soft_run(loop, kern, p, s, n, NULL, 0);
    else
        kern(p, s, n, NULL, 0);
}

/* ---- fills --------------------------------------------------------------- */

/* NumPy's arange fill of element i (dtype arithmetic; float16 via float;
 * complex part by part); element 0 is the start itself. */
static void dg_cpu_arange_at(int dtype, const unsigned char *start,
                             const unsigned char *delta, int64_t i, void *out)
{
#define DG_AR_INT(t, W)                                                        \
    {                                                                          \
        dg_ct_##t s0, dl;                                                      \
        memcpy(&s0, start, sizeof s0);                                         \
        memcpy(&dl, delta, sizeof dl);                                         \
        dg_ct_##t v = (dg_ct_##t)((W)s0 + (W)i * (W)dl);                       \
        memcpy(out, &v, sizeof v);                                             \
        return;                                                                \
    }
#define DG_AR_FLT(t)                                                           \
    {                                                                          \
        dg_ct_##t s0, dl;                                                      \
        memcpy(&s0, start, sizeof s0);                                         \
        memcpy(&dl, delta, sizeof dl);                                         \
        dg_ct_##t v = i == 0 ? s0 : s0 + (dg_ct_##t)i * dl;                    \
        memcpy(out, &v, sizeof v);                                             \
        return;                                                                \
    }
#define DG_AR_CPX(t, T)                                                        \
    {                                                                          \
        dg_ct_##t s0, dl, v;                                                   \
        memcpy(&s0, start, sizeof s0);                                         \
        memcpy(&dl, delta, sizeof dl);                                         \
        v = s0;                                                                \
        if (i != 0) {                                                          \
            v.re = s0.re + (T)i * dl.re;                                       \
            v.im = s0.im + (T)i * dl.im;                                       \
        }                                                                      \
        memcpy(out, &v, sizeof v);                                             \
        return;                                                                \
    }
    switch (dtype) {
    case DG_BOOL: {
        dg_bool v = (dg_bool)((start[0] != 0) + i * (delta[0] != 0) != 0);
        memcpy(out, &v, 1);
        return;
    }
    case DG_INT8: DG_AR_INT(i1, uint64_t)
    case DG_UINT8: DG_AR_INT(u1, uint64_t)
    case DG_INT16: DG_AR_INT(i2, uint64_t)
    case DG_UINT16: DG_AR_INT(u2, uint64_t)
    case DG_INT32: DG_AR_INT(i4, uint64_t)
    case DG_UINT32: DG_AR_INT(u4, uint64_t)
    case DG_INT64: DG_AR_INT(i8, uint64_t)
    case DG_UINT64: DG_AR_INT(u8, uint64_t)
    case DG_FLOAT16: {
        dg_half s0, dl, v;
        memcpy(&s0, start, sizeof s0);
        memcpy(&dl, delta, sizeof dl);
        v = i == 0 ? s0
                   : dg_float_to_half(dg_half_to_float(s0)
                                      + (float)i * dg_half_to_float(dl));
        memcpy(out, &v, sizeof v);
        return;
    }
    case DG_FLOAT32: DG_AR_FLT(f4)
    case DG_FLOAT64: DG_AR_FLT(f8)
    case DG_COMPLEX64: DG_AR_CPX(c8, float)
    case DG_COMPLEX128: DG_AR_CPX(c16, double)
    default: return;
    }
#undef DG_AR_INT
#undef DG_AR_FLT
#undef DG_AR_CPX
}

/* Stores `val` (isz bytes) at n elements of stride s (bytes) from dst. */
static void dg_cpu_fill_row(char *dst, int64_t s, int64_t n, const unsigned char *val,
                            int isz)
{
#define DG_FILL_T(T)                                                           \
    {                                                                          \
        T v;                                                                   \
        memcpy(&v, val, sizeof v);                                             \
        if (s == (int64_t)sizeof v) {                                          \
            T *o = (T *)dst;                                                   \
            for (int64_t i = 0; i < n; i++)                                    \
                o[i] = v;                                                      \
        } else {                                                               \
            for (int64_t i = 0; i < n; i++)                                    \
                *(T *)(dst + i * s) = v;                                       \
        }                                                                      \
        return;                                                                \
    }
    switch (isz) {
    case 1: DG_FILL_T(uint8_t)
    case 2: DG_FILL_T(uint16_t)
    case 4: DG_FILL_T(uint32_t)
    case 8: DG_FILL_T(uint64_t)
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + i * s, val, (size_t)isz);
        return;
    }
#undef DG_FILL_T
}

/* The n elements of random fill d (elements of isz bytes): the code the
 * CUDA kernels run (kernels/dg_random.h), group by group. */
static inline __attribute__((always_inline)) void dg_cpu_random_body(const dg_fill_desc *d,
                                                                     int isz, int64_t n)
{
    const int shift = dg_rand_shift(d, isz);
    int64_t g;
    for (g = 0; g < (n + ((int64_t)1 << shift) - 1) >> shift; g++)
        dg_random_group(d, isz, shift, g, n);
}

static void dg_cpu_random_groups(const dg_fill_desc *d, int isz, int64_t n)
{
    dg_cpu_random_body(d, isz, n);
}

/* float32 normals call fmaf: the C library's (exact, in software where the
 * CPU has no FMA) unless compiled for FMA, when it is one instruction.  On
 * x86-64 a second copy of the loop is compiled for FMA and chosen at run time
 * where the CPU has it: the same bits, several times faster. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define DG_CPU_FMA_CLONE 1
__attribute__((target("fma"))) static void dg_cpu_random_groups_fma(const dg_fill_desc *d,
                                                                    int isz, int64_t n)
{
    dg_cpu_random_body(d, isz, n);
}
#else
#define DG_CPU_FMA_CLONE 0
#endif

void dg_cpu_fill_run(const dg_fill_desc *d)
{
    const int isz = dg_dtype_size(d->dtype);
    if (isz == 0 || d->ndim < 0 || d->ndim > DG_MAXDIM)
        return;
    const int ndim = d->ndim;
    for (int a = 0; a < ndim; a++)
        if (d->shape[a] <= 0)
            return;
    const unsigned char zero[16] = {0};
    unsigned char buf[16];

    if (d->kind == DG_FILL_ARANGE && ndim <= 1) {
        int64_t n = ndim ? d->shape[0] : 1;
        int64_t s = ndim ? d->strides[0] : 0;
        int64_t o = ndim ? d->origin[0] : 0, g = ndim ? d->gstep[0] : 1;
        for (int64_t p = 0; p < n; p++) {
            dg_cpu_arange_at(d->dtype, d->value, d->delta, o + p * g, buf);
            memcpy(d->dst + p * s, buf, (size_t)isz);
        }
        return;
    }
    if (d->kind == DG_FILL_RANDOM) {
        int64_t n = 1;
        for (int a = 0; a < ndim; a++)
            n *= d->shape[a];
#if DG_CPU_FMA_CLONE
        if (__builtin_cpu_supports("fma")) {
            dg_cpu_random_groups_fma(d, isz, n);
            return;
        }
#endif
        dg_cpu_random_groups(d, isz, n);
        return;
    }
    if (d->kind == DG_FILL_EYE && ndim == 2) {
        for (int64_t p = 0; p < d->shape[0]; p++) {
            int64_t gi = d->origin[0] + p * d->gstep[0];
            char *row = d->dst + p * d->strides[0];
            dg_cpu_fill_row(row, d->strides[1], d->shape[1], zero, isz);
            /* the one column j = gi + k, if this block holds it */
            int64_t dj = gi + d->k - d->origin[1];
            if (d->gstep[1] > 0 && dj >= 0 && dj % d->gstep[1] == 0) {
                int64_t q = dj / d->gstep[1];
                if (q < d->shape[1])
                    memcpy(row + q * d->strides[1], d->value, (size_t)isz);
            }
        }
        return;
    }
    if (d->kind != DG_FILL_CONST)
        return;
    /* constant: rows of the innermost axis, outer axes by index counter */
    if (ndim == 0) {
        memcpy(d->dst, d->value, (size_t)isz);
        return;
    }
    int64_t idx[DG_MAXDIM] = {0};
    char *p = d->dst;
    const int inner = ndim - 1;
    for (;;) {
        dg_cpu_fill_row(p, d->strides[inner], d->shape[inner], d->value, isz);
        int a = inner - 1;
        for (; a >= 0; a--) {
            p += d->strides[a];
            if (++idx[a] < d->shape[a])
                break;
            p -= d->strides[a] * d->shape[a];
            idx[a] = 0;
        }
        if (a < 0)
            return;
    }
}

/* ---- reductions ---------------------------------------------------------- */

/* Runs of at most this many elements are folded one after the other; longer
 * ones pairwise, which keeps float sums as accurate as NumPy's. */
#define DG_CPU_RED_BLOCK 128

/* Folds the n elements at x (byte stride s; where w, mask byte stride ws)
 * into the value at acc with the binary kernel k: acc = k(acc, x[i]). */
static void dg_cpu_fold(dg_cpu_kernel k, char *acc, const char *x, int64_t s, int64_t n,
                        const char *w, int64_t ws, int isz)
{
    if (w == NULL && n > DG_CPU_RED_BLOCK) {
        alignas(16) unsigned char acc2[16];
        int64_t h = n / 2;
        char *p[3] = {acc, (char *)acc2, acc};
        const int64_t s0[3] = {0, 0, 0};
        dg_cpu_fold(k, acc, x, s, h, NULL, 0, isz);
        memcpy(acc2, x + h * s, (size_t)isz);
        dg_cpu_fold(k, (char *)acc2, x + (h + 1) * s, s, n - h - 1, NULL, 0, isz);
        k(p, s0, 1, NULL, 0);
        return;
    }
    if (n <= 0)
        return;
    char *p[3] = {acc, (char *)x, acc};
    const int64_t st[3] = {0, s, 0};
    k(p, st, n, w, ws);
}

/* Steps the counter idx over dims [lo, hi) of shape (last fastest); returns
 * 0 when it wrapped around to all zeros. */
static int dg_cpu_next(int64_t *idx, const int64_t *shape, int lo, int hi)
{
    for (int a = hi - 1; a >= lo; a--) {
        if (++idx[a] < shape[a])
            return 1;
        idx[a] = 0;
    }
    return 0;
}

/* Merges each reduced dim of r into the next inner one where every operand
 * (source, mask, global index, read indices) steps over the inner dim exactly
 * once per outer step, and drops reduced dims of length 1 (one is kept): a
 * contiguous block is then one run, folded by one call as NumPy's iterator
 * does.  Kept dims are left as they are.  Called only when every reduced
 * extent is >= 1. */
static void dg_cpu_red_coalesce(dg_reduce_desc *r)
{
    const int nk = r->ndim - r->nred;
    int nd = nk;
    for (int a = nk; a < r->ndim; a++) {
        if (r->shape[a] == 1 && (nd > nk || a < r->ndim - 1))
            continue;
        int merge = nd > nk;
        if (merge) {
            const int64_t n = r->shape[a];
            const int o = nd - 1;
            merge = r->src_strides[o] == r->src_strides[a] * n &&
                    (!r->where || r->where_strides[o] == r->where_strides[a] * n) &&
                    (r->kind == DG_RED_LOOP || r->idx_gstride[o] == r->idx_gstride[a] * n) &&
                    (!r->idx_in || r->idx_in_strides[o] == r->idx_in_strides[a] * n);
        }
        if (merge) {
            const int o = nd - 1;
            r->shape[o] *= r->shape[a];
            r->src_strides[o] = r->src_strides[a];
            r->where_strides[o] = r->where_strides[a];
            r->idx_gstride[o] = r->idx_gstride[a];
            r->idx_in_strides[o] = r->idx_in_strides[a];
        } else {
            r->shape[nd] = r->shape[a];
            r->src_strides[nd] = r->src_strides[a];
            r->where_strides[nd] = r->where_strides[a];
            r->idx_gstride[nd] = r->idx_gstride[a];
            r->idx_in_strides[nd] = r->idx_in_strides[a];
            nd++;
        }
    }
    r->nred = nd - nk;
    r->ndim = nd;
}

/* Folds n elements at x (byte stride s; mask w, stride ws) into acc: through
 * the handed loop ext where there is one, else pairwise with kernel k. */
static void dg_cpu_fold_any(const dg_cpu_ext *ext, dg_cpu_kernel k, char *acc, const char *x,
                            int64_t s, int64_t n, const char *w, int64_t ws, int isz)
{
    if (ext)
        dg_cpu_ext_fold(ext, acc, x, s, n, w, ws);
    else
        dg_cpu_fold(k, acc, x, s, n, w, ws, isz);
}

/* A reduction whose innermost kept dim K is contiguous in the source and
 * whose reduced elements are not (a sum over the first axis of a C-ordered
 * array), computed as NumPy's iterator does: each output row along K starts
 * from init (or the identity, else the first reduced row) and the reduced
 * rows are folded into it one after the other with the elementwise loop,
 * streaming the source in memory order instead of walking columns.  No where
 * mask; every extent >= 1. */
static void dg_cpu_reduce_rows(const dg_reduce_desc *d, const dg_cpu_ext *ext,
                               dg_cpu_kernel kern, int isz)
{
    const int nd = d->ndim, nk = d->ndim - d->nred, K = nk - 1;
    const int64_t L = d->shape[K];
    const int64_t ds = d->dst_strides[K], ss = d->src_strides[K];
    int64_t kidx[DG_MAXDIM] = {0};
    do {
        const char *src = d->src;
        char *dst = d->dst;
        for (int a = 0; a < K; a++) {
            src += kidx[a] * d->src_strides[a];
            dst += kidx[a] * d->dst_strides[a];
        }
        int64_t ridx[DG_MAXDIM] = {0};
        int first = 1;
        if (d->has_init || (ext && ext->has_identity)) {
            const unsigned char *v = d->has_init ? d->init : ext->identity;
            for (int64_t j = 0; j < L; j++)
                memcpy(dst + j * ds, v, (size_t)isz);
            first = 0;
        }
        do {
            const char *x = src;
            for (int a = nk; a < nd; a++)
                x += ridx[a] * d->src_strides[a];
            if (first) {
                for (int64_t j = 0; j < L; j++)
                    memcpy(dst + j * ds, x + j * ss, (size_t)isz);
                first = 0;
                continue;
            }
            char *const p[3] = {dst, (char *)x, dst};
            const int64_t st[3] = {ds, ss, ds};
            if (ext)
                dg_cpu_ext_run(ext, 3, p, st, L, NULL, 0);
            else
                kern(p, st, L, NULL, 0);
        } while (dg_cpu_next(ridx, d->shape, nk, nd));
    } while (dg_cpu_next(kidx, d->shape, 0, K));
}

void dg_cpu_reduce_run(const dg_reduce_desc *d0)
{
    dg_reduce_desc dc = *d0;
    const dg_reduce_desc *d = &dc;
    const int isz = dg_dtype_size(d0->dtype);
    int64_t nred = 1;
    int64_t kidx[DG_MAXDIM] = {0};

    if (d0->ndim < 0 || d0->ndim > DG_MAXDIM || d0->nred < 0 || d0->ndim - d0->nred < 0 ||
        isz == 0)
        return;
    for (int a = 0; a < d0->ndim - d0->nred; a++)
        if (d0->shape[a] <= 0)
            return;
    for (int a = d0->ndim - d0->nred; a < d0->ndim; a++)
        nred *= d0->shape[a];
    if (nred > 0 && d0->nred > 1)
        dg_cpu_red_coalesce(&dc);
    const int nd = d->ndim, nk = d->ndim - d->nred;
    const int is_loop = d->kind == DG_RED_LOOP;
    const dg_cpu_kernel kern = is_loop ? dg_cpu_kernels[d->loop] : NULL;
    const dg_cpu_ext *ext = is_loop ? dg_cpu_ext_of(d->loop) : NULL;
    const dg_arg_better_fn better =
        is_loop ? NULL : dg_arg_better(d->dtype, d->kind == DG_RED_ARGMIN);
    const dg_cpu_ext_argfn argfn =
        is_loop ? NULL : dg_cpu_ext_arg_of(d->dtype, d->kind == DG_RED_ARGMIN);
    /* NumPy starts a reduction without initial from the ufunc's identity */
    const int from_identity = ext && ext->has_identity && !d->has_init;
    if (is_loop && nred > 0 && d->where == NULL && nk >= 1 && d->nred >= 1 &&
        d->src_strides[nk - 1] == isz && d->src_strides[nd - 1] != isz) {
        dg_cpu_reduce_rows(d, ext, kern, isz);
        return;
    }
    /* the innermost reduced dim is folded as one run; the others counted */
    const int inner = nd - 1;
    const int64_t run = nred ? d->shape[inner] : 0;
    const int64_t rs = d->nred ? d->src_strides[inner] : 0;
    const int64_t wrs = d->nred && d->where ? d->where_strides[inner] : 0;

    do {
        const char *src = d->src;
        const char *w = (const char *)d->where;
        char *dst = d->dst;
        for (int a = 0; a < nk; a++) {
            src += kidx[a] * d->src_strides[a];
            dst += kidx[a] * d->dst_strides[a];
            if (w)
                w += kidx[a] * d->where_strides[a];
        }
        alignas(16) unsigned char acc[16];
        if (nred == 0 || d->nred == 0) {
            /* no reduced element (init), or no reduced dim (the element) */
            if (nred == 0) {
                memcpy(dst, d->init, (size_t)isz);
            } else if (is_loop && (d->has_init || from_identity)) {
                memcpy(acc, d->has_init ? d->init : ext->identity, (size_t)isz);
                dg_cpu_fold_any(ext, kern, (char *)acc, src, 0, 1, w, 0, isz);
                memcpy(dst, acc, (size_t)isz);
            } else {
                memcpy(dst, src, (size_t)isz);
            }
            if (!is_loop) {
                char *ib = (char *)d->idx;
                for (int a = 0; a < nk; a++)
                    ib += kidx[a] * d->idx_strides[a];
                *(int64_t *)ib = nred == 0 || d->idx_in ? 0 : d->idx_base;
            }
            continue;
        }
        int64_t ridx[DG_MAXDIM] = {0};
        int first = 1;
        int64_t best_i = 0;
        const char *best = NULL;
        if (is_loop && (d->has_init || from_identity)) {
            memcpy(acc, d->has_init ? d->init : ext->identity, (size_t)isz);
            first = 0;
        }
        do {
            const char *x = src;
            const char *wx = w;
            int64_t g = 0;
            for (int a = nk; a < inner; a++) {
                x += ridx[a] * d->src_strides[a];
                if (wx)
                    wx += ridx[a] * d->where_strides[a];
                g += ridx[a] * d->idx_gstride[a];
            }
            if (is_loop) {
                if (first) {
                    memcpy(acc, x, (size_t)isz);
                    dg_cpu_fold_any(ext, kern, (char *)acc, x + rs, rs, run - 1, NULL, 0, isz);
                    first = 0;
                } else {
                    dg_cpu_fold_any(ext, kern, (char *)acc, x, rs, run, wx, wrs, isz);
                }
                continue;
            }
            const int64_t gs = d->idx_gstride[inner];
            if (argfn && !d->idx_in && rs == isz) {
                /* NumPy's own argmax / argmin over the run, then merged */
                intptr_t i = 0;
                argfn((void *)x, (intptr_t)run, &i, NULL);
                const char *v = x + (int64_t)i * rs;
                const int64_t gi = g + (int64_t)i * gs;
                if (best == NULL || better(v, best) || (!better(best, v) && gi < best_i)) {
                    best = v;
                    best_i = gi;
                }
                continue;
            }
            const char *ii = NULL;
            if (d->idx_in) {
                ii = (const char *)d->idx_in;
                for (int a = 0; a < inner; a++)
                    ii += (a < nk ? kidx[a] : ridx[a]) * d->idx_in_strides[a];
            }
            for (int64_t i = 0; i < run; i++) {
                const char *v = x + i * rs;
                int64_t gi = ii ? *(const int64_t *)(ii + i * d->idx_in_strides[inner])
                                : g + i * gs;
                if (best == NULL || better(v, best) || (!better(best, v) && gi < best_i)) {
                    best = v;
                    best_i = gi;
                }
            }
        } while (dg_cpu_next(ridx, d->shape, nk, inner));
        if (is_loop) {
            memcpy(dst, acc, (size_t)isz);
        } else {
            char *ib = (char *)d->idx;
            for (int a = 0; a < nk; a++)
                ib += kidx[a] * d->idx_strides[a];
            memcpy(dst, best, (size_t)isz);
            *(int64_t *)ib = best_i + (d->idx_in ? 0 : d->idx_base);
        }
    } while (dg_cpu_next(kidx, d->shape, 0, nk));
}

/* ---- scans --------------------------------------------------------------- */

/* Under DGARRAY_FPE=soft, the class of loop `loop` where its folds are
 * checked as the GPU's scan kernels check them (add and multiply of floats:
 * dg_fpe_fold_odd at every fold), else DG_FPC_NONE. */
static int soft_fold_cls(int loop)
{
    const int uf = dg_loops[loop].ufunc, cls = dg_loop_fpe_cls(loop);
    return t_soft && (uf == DG_UF_add || uf == DG_UF_multiply) && (cls & 15) == DG_FPC_FLOAT
               ? cls
               : DG_FPC_NONE;
}

void dg_cpu_scan_run(const dg_scan_desc *d)
{
    const int nd = d->ndim, isz = dg_dtype_size(d->dtype);
    const int inner = nd - 1;
    int64_t ridx[DG_MAXDIM] = {0};

    if (nd < 1 || nd > DG_MAXDIM || isz == 0 || d->loop < 0 || d->loop >= DG_NLOOPS)
        return;
    for (int a = 0; a < nd; a++)
        if (d->shape[a] <= 0)
            return;
    const dg_cpu_kernel kern = dg_cpu_kernels[d->loop];
    const int soft = soft_fold_cls(d->loop);
    /* soft: every fold one at a time, classified with its operands */
    const dg_cpu_ext *ext = soft == DG_FPC_NONE ? dg_cpu_ext_of(d->loop) : NULL;
    const int64_t n = d->shape[inner], ss = d->src_strides[inner], ds = d->dst_strides[inner];
    do {
        const char *src = d->src;
        char *dst = d->dst;
        const char *carry = d->carry;
        for (int a = 0; a < inner; a++) {
            src += ridx[a] * d->src_strides[a];
            dst += ridx[a] * d->dst_strides[a];
            if (carry)
                carry += ridx[a] * d->carry_strides[a];
        }
        if (ext) {
            /* NumPy's accumulate: the first element (carry op it), then one
             * call with the output read one element behind where it is
             * written, dst[j] = dst[j - 1] op src[j] */
            if (carry) {
                char *const p1[3] = {(char *)carry, (char *)src, dst};
                const int64_t s1[3] = {0, 0, 0};
                dg_cpu_ext_run(ext, 3, p1, s1, 1, NULL, 0);
            } else {
                memmove(dst, src, (size_t)isz);
            }
            char *const pr[3] = {dst, (char *)src + ss, dst + ds};
            const int64_t sr[3] = {ds, ss, ds};
            if (n > 1)
                dg_cpu_ext_run(ext, 3, pr, sr, n - 1, NULL, 0);
            continue;
        }
        alignas(16) unsigned char acc[16];
        char *p[3] = {(char *)acc, NULL, (char *)acc};
        const int64_t s0[3] = {0, 0, 0};
        int64_t j = 0;
        if (carry) {
            memcpy(acc, carry, (size_t)isz);
        } else {
            memcpy(acc, src, (size_t)isz);
            memcpy(dst, acc, (size_t)isz);
            j = 1;
        }
        for (; j < n; j++) {
            alignas(16) unsigned char prev[16], x[16];
            if (soft != DG_FPC_NONE) { /* the operands, before dst (maybe src) is written */
                memcpy(prev, acc, (size_t)isz);
                memcpy(x, src + j * ss, (size_t)isz);
            }
            p[1] = (char *)src + j * ss;
            kern(p, s0, 1, NULL, 0);
            if (soft != DG_FPC_NONE)
                t_soft_kinds |= dg_fpe_fold_kinds(soft, d->dtype, prev, x, acc);
            memcpy(dst + j * ds, acc, (size_t)isz);
        }
    } while (dg_cpu_next(ridx, d->shape, 0, inner));
}
