/* Unit tests of the counter-based random fill (kernels/dg_random.h), without
 * Python or a GPU:
 *   - Philox4x32-10 against the known-answer vectors of Salmon et al.
 *     (Random123's kat_vectors, philox4x32 10 lines);
 *   - every block of an array, strided or not, filled on its own, holds the
 *     values of the whole array filled at once (the values depend on the
 *     element's global index only);
 *   - integers in range, unbiased: the draws equal those of a plain
 *     reference of the rejection method (redraw while the low half of
 *     x * range is below 2^w mod range), and small ranges pass a chi-square
 *     test; uniforms in [0, 1) and normals with mean 0 and variance 1.
 *
 * Compiled as C11 by default and, with `make cuda-host`, as CUDA C++ by nvcc
 * (host code of the same __host__ __device__ functions): both print a
 * checksum of every value they drew, which must agree.
 *
 * Usage: test_random   (prints the checksum and "N passed, M failed") */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dg_random.h"
#include "harness.h"

static uint64_t g_sum = 1469598103934665603ull; /* FNV-1a of every value drawn */

static void checksum(const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    size_t i;
    for (i = 0; i < n; i++) {
        g_sum ^= b[i];
        g_sum *= 1099511628211ull;
    }
}

/* A fill descriptor for a block of an array of global shape gshape: the
 * block's axes are (origin, count, gstep), written densely in C order. */
static dg_fill_desc make_desc(int dist, int dtype, int ndim, const int64_t *gshape,
                              const int64_t *origin, const int64_t *count,
                              const int64_t *gstep, char *dst)
{
    dg_fill_desc d;
    int64_t s = dg_dtype_size(dtype);
    int a;
    memset(&d, 0, sizeof d);
    d.kind = DG_FILL_RANDOM;
    d.dtype = dtype;
    d.ndim = ndim;
    d.dst = dst;
    for (a = ndim - 1; a >= 0; a--) {
        d.shape[a] = count[a];
        d.strides[a] = s;
        s *= count[a];
        d.origin[a] = origin[a];
        d.gstep[a] = gstep[a];
        d.gshape[a] = gshape[a];
    }
    d.rnd.dist = dist;
    d.rnd.key[0] = 0x12345678u;
    d.rnd.key[1] = 0x9abcdef0u;
    d.rnd.stream = 77;
    return d;
}

/* What the CPU backend runs (src/backend/cpu/cpu_loops.c). */
static void run_fill(const dg_fill_desc *d)
{
    const int isz = dg_dtype_size(d->dtype), shift = dg_rand_shift(d, isz);
    int64_t n = 1, g;
    int a;
    for (a = 0; a < d->ndim; a++)
        n *= d->shape[a];
    for (g = 0; g < (n + ((int64_t)1 << shift) - 1) >> shift; g++)
        dg_random_group(d, isz, shift, g, n);
}

/* ---- tests -------------------------------------------------------------- */

static void test_philox_kat(void)
{
    static const uint32_t kat[3][10] = {
        {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
        {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
         0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
        {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
         0x94fdcceb, 0x5001e420, 0x24126ea1},
    };
    int i;
    for (i = 0; i < 3; i++) {
        dg_u32x4 c = {kat[i][0], kat[i][1], kat[i][2], kat[i][3]};
        dg_u32x4 r = dg_philox4x32_10(c, kat[i][4], kat[i][5]);
        EXPECT(r.x == kat[i][6] && r.y == kat[i][7] && r.z == kat[i][8] && r.w == kat[i][9]);
    }
}

/* A fill's parameters for each case below. */
typedef struct rcase {
    int dist, dtype;
    double a, b;
    uint64_t lo, range;
} rcase;

static const rcase g_cases[] = {
    {DG_RAND_UNIFORM, DG_FLOAT64, 0.0, 1.0, 0, 0},
    {DG_RAND_UNIFORM, DG_FLOAT32, 0.0, 1.0, 0, 0},
    {DG_RAND_UNIFORM, DG_FLOAT64, -3.0, 7.5, 0, 0},
    {DG_RAND_NORMAL, DG_FLOAT64, 0.0, 1.0, 0, 0},
    {DG_RAND_NORMAL, DG_FLOAT32, 2.0, 0.5, 0, 0},
    {DG_RAND_INTEGERS, DG_INT64, 0, 0, (uint64_t)-5, 11},
    {DG_RAND_INTEGERS, DG_UINT64, 0, 0, 0, 0},
    {DG_RAND_INTEGERS, DG_INT64, 0, 0, 0, ((uint64_t)1 << 63) + 12345},
    {DG_RAND_INTEGERS, DG_INT32, 0, 0, (uint64_t)-100, 201},
    {DG_RAND_INTEGERS, DG_UINT32, 0, 0, 0, (uint64_t)1 << 32},
    {DG_RAND_INTEGERS, DG_UINT32, 0, 0, 0, ((uint64_t)1 << 31) + 1},
    {DG_RAND_INTEGERS, DG_INT8, 0, 0, (uint64_t)-128, 256},
    {DG_RAND_INTEGERS, DG_UINT16, 0, 0, 7, 3},
    {DG_RAND_INTEGERS, DG_BOOL, 0, 0, 0, 2},
};
#define NCASES (int)(sizeof g_cases / sizeof g_cases[0])

static dg_fill_desc case_desc(const rcase *c, int ndim, const int64_t *gshape,
                              const int64_t *origin, const int64_t *count,
                              const int64_t *gstep, char *dst)
{
    dg_fill_desc d = make_desc(c->dist, c->dtype, ndim, gshape, origin, count, gstep, dst);
    d.rnd.a = c->a;
    d.rnd.b = c->b;
    d.rnd.lo = c->lo;
    d.rnd.range = c->range;
    return d;
}

static void test_blocks_match_whole(void)
{
    const int64_t gshape[3] = {5, 7, 13}, zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    /* blocks (origin, count, gstep) of the global array */
    static const int64_t blocks[][3][3] = {
        {{0, 0, 0}, {5, 7, 13}, {1, 1, 1}},
        {{1, 2, 3}, {3, 4, 9}, {1, 1, 1}},
        {{0, 1, 1}, {3, 3, 6}, {2, 2, 2}},
        {{4, 6, 12}, {1, 1, 1}, {1, 1, 1}},
        {{0, 0, 5}, {5, 7, 3}, {1, 1, 3}},
        {{2, 0, 0}, {1, 7, 13}, {1, 1, 1}},
    };
    int c, b, nb = (int)(sizeof blocks / sizeof blocks[0]);
    for (c = 0; c < NCASES; c++) {
        const int isz = dg_dtype_size(g_cases[c].dtype);
        char *whole = (char *)malloc((size_t)(5 * 7 * 13 * isz));
        char *part = (char *)malloc((size_t)(5 * 7 * 13 * isz));
        dg_fill_desc d = case_desc(&g_cases[c], 3, gshape, zero, gshape, one, whole);
        run_fill(&d);
        checksum(whole, (size_t)(5 * 7 * 13 * isz));
        for (b = 0; b < nb; b++) {
            const int64_t(*k)[3] = blocks[b];
            int64_t i, j, l;
            d = case_desc(&g_cases[c], 3, gshape, k[0], k[1], k[2], part);
            run_fill(&d);
            for (i = 0; i < k[1][0]; i++)
                for (j = 0; j < k[1][1]; j++)
                    for (l = 0; l < k[1][2]; l++) {
                        int64_t gi = k[0][0] + i * k[2][0], gj = k[0][1] + j * k[2][1];
                        int64_t gl = k[0][2] + l * k[2][2];
                        int64_t pw = (gi * 7 + gj) * 13 + gl;
                        int64_t pp = (i * k[1][1] + j) * k[1][2] + l;
                        EXPECT(memcmp(whole + pw * isz, part + pp * isz, (size_t)isz) == 0);
                    }
        }
        /* the same array as 1-d and as 0-d element by element */
        {
            const int64_t n1 = 5 * 7 * 13;
            int64_t p;
            d = case_desc(&g_cases[c], 1, &n1, zero, &n1, one, part);
            run_fill(&d);
            EXPECT(memcmp(whole, part, (size_t)(n1 * isz)) == 0);
            for (p = 0; p < n1; p += 17) {
                d = case_desc(&g_cases[c], 1, &n1, &p, one, one, part);
                run_fill(&d);
                EXPECT(memcmp(whole + p * isz, part, (size_t)isz) == 0);
            }
        }
        free(whole);
        free(part);
    }
}

/* Reference of an integer draw: the rejection method spelled out. */
static uint64_t ref_integer(const dg_fill_random *r, int isz, uint64_t i)
{
    uint32_t attempt;
    for (attempt = 0;; attempt++) {
        if (isz <= 4) {
            uint32_t x = dg_rand_word(dg_rand_block(r, i >> 2, attempt), (unsigned)(i & 3));
            uint64_t m = (uint64_t)x * r->range;
            if (r->range == ((uint64_t)1 << 32))
                return r->lo + x;
            if ((uint32_t)m >= (uint32_t)(((uint64_t)1 << 32) % r->range))
                return r->lo + (m >> 32);
        } else {
            uint64_t x = dg_rand_word64(dg_rand_block(r, i >> 1, attempt), (unsigned)(i & 1));
            if (r->range == 0)
                return r->lo + x;
            if (x * r->range >= (0 - r->range) % r->range)
                return r->lo + dg_mulhi64(x, r->range);
        }
    }
}

static void test_integers(void)
{
    const int64_t n = 20000, zero = 0, one = 1;
    int c;
    for (c = 0; c < NCASES; c++) {
        const rcase *k = &g_cases[c];
        const int isz = dg_dtype_size(k->dtype);
        char *v;
        int64_t i;
        dg_fill_desc d;
        if (k->dist != DG_RAND_INTEGERS)
            continue;
        v = (char *)malloc((size_t)(n * isz));
        d = case_desc(k, 1, &n, &zero, &n, &one, v);
        run_fill(&d);
        for (i = 0; i < n; i++) {
            uint64_t got = 0, want = ref_integer(&d.rnd, isz, (uint64_t)i), off;
            memcpy(&got, v + i * isz, (size_t)isz); /* little-endian low bytes */
            if (isz < 8)
                want &= ((uint64_t)1 << (8 * isz)) - 1;
            EXPECT(got == want);
            off = (got - k->lo) & (isz < 8 ? ((uint64_t)1 << (8 * isz)) - 1 : ~(uint64_t)0);
            EXPECT(k->range == 0 || off < k->range);
        }
        free(v);
    }
}

/* Chi-square of small ranges: 10^6 draws in `range` bins, within 5 sigma. */
static void test_integers_uniform(void)
{
    static const uint64_t ranges[] = {2, 3, 6, 10, 255};
    const int64_t n = 1000000, zero = 0, one = 1;
    uint32_t *v = (uint32_t *)malloc((size_t)n * 4);
    size_t r;
    for (r = 0; r < sizeof ranges / sizeof ranges[0]; r++) {
        const rcase k = {DG_RAND_INTEGERS, DG_UINT32, 0, 0, 0, ranges[r]};
        dg_fill_desc d = case_desc(&k, 1, &n, &zero, &n, &one, (char *)v);
        double chi = 0, expect = (double)n / (double)ranges[r], dof = (double)ranges[r] - 1;
        int64_t cnt[256] = {0}, i;
        run_fill(&d);
        for (i = 0; i < n; i++)
            cnt[v[i]]++;
        for (i = 0; i < (int64_t)ranges[r]; i++)
            chi += (cnt[i] - expect) * (cnt[i] - expect) / expect;
        EXPECT(fabs(chi - dof) < 5 * sqrt(2 * dof));
    }
    free(v);
}

static void test_floats(void)
{
    const int64_t n = 400000, zero = 0, one = 1;
    double *v = (double *)malloc((size_t)n * 8);
    float *f = (float *)malloc((size_t)n * 4);
    double s = 0, s2 = 0, lo = 1, hi = 0;
    int64_t i;
    rcase k = {DG_RAND_UNIFORM, DG_FLOAT64, 0.0, 1.0, 0, 0};
    dg_fill_desc d = case_desc(&k, 1, &n, &zero, &n, &one, (char *)v);
    run_fill(&d);
    for (i = 0; i < n; i++) {
        s += v[i];
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    EXPECT(lo >= 0 && hi < 1 && fabs(s / n - 0.5) < 0.005);
    k.dtype = DG_FLOAT32;
    d = case_desc(&k, 1, &n, &zero, &n, &one, (char *)f);
    run_fill(&d);
    for (i = 0, s = 0; i < n; i++) {
        EXPECT(f[i] >= 0.0f && f[i] < 1.0f);
        s += f[i];
    }
    EXPECT(fabs(s / n - 0.5) < 0.005);
    k.dist = DG_RAND_NORMAL;
    k.dtype = DG_FLOAT64;
    d = case_desc(&k, 1, &n, &zero, &n, &one, (char *)v);
    run_fill(&d);
    for (i = 0, s = 0; i < n; i++) {
        s += v[i];
        s2 += v[i] * v[i];
    }
    EXPECT(fabs(s / n) < 0.01 && fabs(s2 / n - 1) < 0.02);
    /* float32 normals (their own definition): mean 0, variance 1 */
    k.dtype = DG_FLOAT32;
    k.a = 0.0;
    d = case_desc(&k, 1, &n, &zero, &n, &one, (char *)f);
    run_fill(&d);
    for (i = 0, s = 0, s2 = 0; i < n; i++) {
        s += f[i];
        s2 += (double)f[i] * f[i];
    }
    EXPECT(fabs(s / n) < 0.01 && fabs(s2 / n - 1) < 0.02);
    free(v);
    free(f);
}

/* |got - want| in ulp of float32 at want (the ulp of want's binade). */
static double ulps32(float got, double want)
{
    int e;
    if (want == 0.0)
        return got == 0.0f ? 0.0 : 1e30;
    (void)frexp(want, &e);
    return fabs((double)got - want) / ldexp(1.0, e - 24);
}

/* The float32 normals' own -2 log and sin/cos against double, within the
 * bounds dg_random.h states: -2 log over every float u of [2^29, 2^32) (u1
 * in [1/8, 1), where it is least accurate) and every 61st below; cos and
 * sin over every x = (int32)k 2^-32 of [1/8, 1/2] and every 61st below
 * (-x gives the same cos and the opposite sin, bit for bit); each standard
 * normal of a fill within 3 ulp of the double Box-Muller of its uniforms. */
static void test_float32_functions(void)
{
    const int64_t n = 100000, zero = 0, one = 1;
    const rcase kc = {DG_RAND_NORMAL, DG_FLOAT32, 0.0, 1.0, 0, 0};
    double wl = 0, ws = 0, wc = 0, wz = 0;
    float *f = (float *)malloc((size_t)n * 4);
    dg_fill_desc d = case_desc(&kc, 1, &n, &zero, &n, &one, (char *)f);
    uint32_t b;
    int64_t i;
    for (b = 0x3f800000u; b < 0x4f800000u; b += b < 0x4e000000u ? 61 : 1) {
        float u;
        memcpy(&u, &b, 4);
        wl = fmax(wl, ulps32(dg_rand_m2logf(u), -2.0 * log(ldexp((double)u, -32))));
    }
    for (b = 0x2f800000u; b <= 0x3f000000u; b += b < 0x3e000000u ? 61 : 1) {
        float x, c, sn, c2, sn2;
        memcpy(&x, &b, 4);
        /* x = (int32)k 2^-32 for x a multiple of 2^-32 (every float of
         * [2^-9, 1/2], the integers below; 1/2 from 2^31 - 1, rounded) */
        if (x < 0x1p-9f && x != floorf(ldexpf(x, 32)) * 0x1p-32f)
            continue;
        const uint32_t k = x == 0.5f ? 0x7fffffffu : (uint32_t)ldexp((double)x, 32);
        dg_rand_sincosf(k, &c, &sn);
        dg_rand_sincosf(0u - k, &c2, &sn2);
        EXPECT(c2 == c && sn2 == -sn);
        ws = fmax(ws, ulps32(sn, sin(DG_PI / 2 * (double)x)));
        wc = fmax(wc, ulps32(c, cos(DG_PI / 2 * (double)x)));
    }
    printf("float32 normals: -2 log %.3f ulp, sin %.3f ulp, cos %.3f ulp\n", wl, ws, wc);
    EXPECT(wl <= 0.87 && ws <= 0.70 && wc <= 0.91);
    run_fill(&d);
    for (i = 0; i < n; i++) {
        const dg_u32x4 w = dg_rand_block(&d.rnd, (uint64_t)i >> 2, 0);
        const unsigned p = (unsigned)(i & 2);
        const uint32_t w0 = dg_rand_word(w, p), w1 = dg_rand_word(w, p + 1);
        const double u1 = ldexp((double)dg_rand_uint_rz(w0 << 2 | 1u), -32);
        const double x = ldexp((double)(float)(int32_t)w1, -32);
        const double r = sqrt(-2.0 * log(u1));
        const double c = (w0 >> 31 ? -1 : 1) * cos(DG_PI / 2 * x), sn = sin(DG_PI / 2 * x);
        const int swap = (int)(w0 >> 30 & 1);
        const double z = r * ((i & 1) == swap ? c : sn);
        if (fabs(z) > 1e-3)
            wz = fmax(wz, ulps32(f[i], z));
    }
    printf("float32 normals: z %.3f ulp\n", wz);
    EXPECT(wz <= 3.0);
    free(f);
}

/* Different streams and keys give different values. */
static void test_streams_differ(void)
{
    const int64_t n = 64, zero = 0, one = 1;
    uint64_t a[64], b[64];
    const rcase k = {DG_RAND_INTEGERS, DG_UINT64, 0, 0, 0, 0};
    dg_fill_desc d = case_desc(&k, 1, &n, &zero, &n, &one, (char *)a);
    int i, same = 0;
    run_fill(&d);
    d.dst = (char *)b;
    d.rnd.stream++;
    run_fill(&d);
    for (i = 0; i < n; i++)
        same += a[i] == b[i];
    EXPECT(same == 0);
    d.rnd.stream--;
    d.rnd.key[1] ^= 1;
    run_fill(&d);
    for (i = 0, same = 0; i < n; i++)
        same += a[i] == b[i];
    EXPECT(same == 0);
}

/* A fill of stream S + (a << 56) draws the words of attempt a of stream S
 * (how dgarray/random.py redraws integers with array bounds). */
static void test_redraw_streams(void)
{
    const int64_t n = 40, zero = 0, one = 1;
    uint32_t v[40];
    const rcase k = {DG_RAND_INTEGERS, DG_UINT32, 0, 0, 0, (uint64_t)1 << 32};
    dg_fill_desc d = case_desc(&k, 1, &n, &zero, &n, &one, (char *)v);
    dg_fill_random base = d.rnd;
    int64_t i;
    d.rnd.stream = base.stream + ((uint64_t)3 << 56);
    run_fill(&d);
    for (i = 0; i < n; i++)
        EXPECT(v[i] == dg_rand_word(dg_rand_block(&base, (uint64_t)i >> 2, 3),
                                    (unsigned)(i & 3)));
}

static const test_case g_tests[] = {
    {"philox_kat", test_philox_kat},
    {"blocks_match_whole", test_blocks_match_whole},
    {"integers", test_integers},
    {"integers_uniform", test_integers_uniform},
    {"floats", test_floats},
    {"float32_functions", test_float32_functions},
    {"streams_differ", test_streams_differ},
    {"redraw_streams", test_redraw_streams},
};

int main(int argc, char **argv)
{
    int rc = run_tests(g_tests, sizeof g_tests / sizeof g_tests[0], argc, argv);
    printf("random checksum %016llx\n", (unsigned long long)g_sum);
    return rc;
}
