/* C unit tests of the semantics of a ufunc call (src/core/dg_ufunc_call.c)
 * on the CPU backend, 1 and 4 virtual devices: where results live, out= in
 * place, made REPLICA or cast into, where= (a mask, or False), inputs that
 * are views of the output, two outputs, operands and casts.  Each expected
 * value is computed on the host from the same inputs, as NumPy defines the
 * call.
 *
 * Usage: test_ufunc_call [seed]   (prints "N passed, M failed") */
#include <math.h>

#include "harness.h"
#include "core_fixture.h"
#include "dg_ufunc.h"
#include "dg_ufunc_call.h"
#include "dg_view.h"

/* The loop of ufunc uf whose operands are all float64 (nin + nout of them). */
static int f8_loop(int uf)
{
    const int dts[DG_MAXLOOPOPS] = {DG_FLOAT64, DG_FLOAT64, DG_FLOAT64, DG_FLOAT64};
    return dg_loop_find(uf, dts);
}

static void fill_random(double *x, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++)
        x[i] = (double)rnd_in(-1000, 1000) / 8.0;
}

/* a (10 x 6) laid out in uneven row blocks over the devices. */
static dg_array *uneven_10x6(const double *host, dg_plan_chunk *l, int *n)
{
    static const int64_t shape[2] = {10, 6};
    l[0] = rows_chunk(0, 2, shape, 0, 3);
    l[1] = rows_chunk(1, 2, shape, 3, 4);
    l[2] = rows_chunk(2, 2, shape, 4, 10);
    *n = 3;
    return array_from(DG_FLOAT64, 2, shape, l, 3, host);
}

/* A call of loop on shape (ndim, shape), nothing else set. */
static void call_init(dg_ufunc_call *c, int loop, int ndim, const int64_t *shape)
{
    dg_ufunc_call_init(c);
    c->be = g_be;
    c->loop = loop;
    c->ndim = ndim;
    memcpy(c->shape, shape, sizeof(int64_t) * (size_t)ndim);
}

/* in[i] of c: array a as the loop's float64 operand. */
static void set_input(dg_ufunc_call *c, int i, dg_array *a)
{
    c->arg[i] = a;
    CHECK_OK(dg_ufunc_operand(a, DG_FLOAT64, &c->in[i].arr, err));
}

/* a + b: the result laid out like the first input of the call's shape. */
static void test_result_like_input(void)
{
    static const int64_t shape[2] = {10, 6}, bshape[1] = {6};
    double x[60], y[6], got[60];
    dg_plan_chunk l[3], lb;
    dg_ufunc_call c;
    dg_array *a, *b;
    int n, i;
    fill_random(x, 60);
    fill_random(y, 6);
    a = uneven_10x6(x, l, &n);
    dg_box_full(&lb.box, 1, bshape);
    lb.device = g_be->ndevices - 1;
    b = array_from(DG_FLOAT64, 1, bshape, &lb, 1, y);
    /* b first: it has not the call's shape, so a lays the result out */
    call_init(&c, f8_loop(DG_UF_add), 2, shape);
    set_input(&c, 0, b);
    set_input(&c, 1, a);
    CHECK_OK(dg_ufunc_outputs(&c, err));
    EXPECT(c.res[0] && has_layout(c.res[0], l, n));
    CHECK_OK(dg_ufunc_run(&c, err));
    array_to(c.res[0], got);
    for (i = 0; i < 60; i++)
        EXPECT(got[i] == y[i % 6] + x[i]);
    dg_ufunc_call_clear(&c);
    dg_array_decref(a);
    dg_array_decref(b);
    expect_no_memory();
}

/* (4, 1) * (1, 5): no input of the call's shape, the default layout. */
static void test_result_default_layout(void)
{
    static const int64_t sa[2] = {4, 1}, sb[2] = {1, 5}, shape[2] = {4, 5};
    double x[4], y[5], got[20];
    dg_plan_chunk la, lb, *want = NULL;
    dg_ufunc_call c;
    dg_array *a, *b;
    int n = 0, i;
    fill_random(x, 4);
    fill_random(y, 5);
    dg_box_full(&la.box, 2, sa);
    la.device = 0;
    dg_box_full(&lb.box, 2, sb);
    lb.device = g_be->ndevices - 1;
    a = array_from(DG_FLOAT64, 2, sa, &la, 1, x);
    b = array_from(DG_FLOAT64, 2, sb, &lb, 1, y);
    call_init(&c, f8_loop(DG_UF_multiply), 2, shape);
    set_input(&c, 0, a);
    set_input(&c, 1, b);
    CHECK_OK(dg_ufunc_outputs(&c, err));
    CHECK_OK(dg_layout_default(g_be->ndevices, 2, shape, 8, 0, &want, &n, err));
    EXPECT(c.res[0] && has_layout(c.res[0], want, n));
    CHECK_OK(dg_ufunc_run(&c, err));
    array_to(c.res[0], got);
    for (i = 0; i < 20; i++)
        EXPECT(got[i] == x[i / 5] * y[i % 5]);
    free(want);
    dg_ufunc_call_clear(&c);
    dg_array_decref(a);
    dg_array_decref(b);
    expect_no_memory();
}

/* out= in SUM mode: replaced by its REPLICA copy, which the loop writes. */
static void test_out_made_replica(void)
{
    static const int64_t shape[2] = {10, 6};
    double x[60], y[60], got[60];
    dg_plan_chunk l[3], both[2];
    dg_ufunc_call c;
    dg_array *a, *b, *o, *osum = NULL;
    int n, i;
    fill_random(x, 60);
    fill_random(y, 60);
    a = uneven_10x6(x, l, &n);
    b = uneven_10x6(y, l, &n);
    /* out: every element held twice, as partial sums */
    both[0] = rows_chunk(0, 2, shape, 0, 10);
    both[1] = rows_chunk(1, 2, shape, 0, 10);
    o = array_from(DG_FLOAT64, 2, shape, both, 2, y);
    CHECK_OK(dg_array_change_mode(o, DG_MODE_SUM, &osum, err));
    call_init(&c, f8_loop(DG_UF_subtract), 2, shape);
    set_input(&c, 0, a);
    set_input(&c, 1, b);
    dg_array_incref(osum);
    c.out[0] = osum;
    CHECK_OK(dg_ufunc_outputs(&c, err));
    EXPECT(c.out[0] != osum && c.out[0]->mode == DG_MODE_REPLICA);
    EXPECT(c.res[0] == c.out[0]);
    CHECK_OK(dg_ufunc_run(&c, err));
    array_to(c.out[0], got);
    for (i = 0; i < 60; i++)
        EXPECT(got[i] == x[i] - y[i]);
    EXPECT(osum->mode == DG_MODE_SUM); /* the caller's array until it installs the copy */
    dg_ufunc_call_clear(&c);
    dg_array_decref(osum);
    dg_array_decref(o);
    dg_array_decref(a);
    dg_array_decref(b);
    expect_no_memory();
}

/* A float32 out= of a float64 loop with where=: the result cast into out
 * where the mask is set, out's own values elsewhere; where=False: nothing. */
static void test_out_cast_where(void)
{
    static const int64_t shape[2] = {10, 6};
    double x[60], y[60];
    float before[60], got[60];
    dg_bool mask[60];
    dg_plan_chunk l[3], lo[2];
    dg_ufunc_call c;
    dg_array *a, *b, *o, *w;
    int n, i, round;
    fill_random(x, 60);
    fill_random(y, 60);
    for (i = 0; i < 60; i++) {
        before[i] = (float)(-1 - i);
        mask[i] = (dg_bool)(rnd() % 3 == 0);
    }
    a = uneven_10x6(x, l, &n);
    b = uneven_10x6(y, l, &n);
    w = array_from(DG_BOOL, 2, shape, l, n, mask);
    lo[0] = rows_chunk(1, 2, shape, 0, 5);
    lo[1] = rows_chunk(2, 2, shape, 5, 10);
    for (round = 0; round < 2; round++) {
        o = array_from(DG_FLOAT32, 2, shape, lo, 2, before);
        call_init(&c, f8_loop(DG_UF_add), 2, shape);
        set_input(&c, 0, a);
        set_input(&c, 1, b);
        dg_array_incref(o);
        c.out[0] = o;
        c.where_false = round == 1;
        CHECK_OK(dg_ufunc_outputs(&c, err));
        EXPECT(c.res[0] != o && c.res[0]->dtype == DG_FLOAT64 && c.out[0] == o);
        dg_array_incref(w);
        c.where = w;
        CHECK_OK(dg_ufunc_run(&c, err));
        array_to(o, got);
        for (i = 0; i < 60; i++)
            EXPECT(got[i] == (mask[i] && round == 0 ? (float)(x[i] + y[i]) : before[i]));
        dg_ufunc_call_clear(&c);
        dg_array_decref(o);
    }
    dg_array_decref(w);
    dg_array_decref(a);
    dg_array_decref(b);
    expect_no_memory();
}

/* out = a[1:] and the input a[:-1], views of one array: the input is read
 * from a copy (NumPy: as if every element were read before any written). */
static void test_input_overlaps_output(void)
{
    static const int64_t shape[1] = {40}, sub[1] = {39};
    double x[40], got[40];
    dg_plan_chunk l[3];
    dg_key kin, kout;
    dg_ufunc_call c;
    dg_array *a, *vin = NULL, *vout = NULL;
    const double one = 1.0;
    int i;
    fill_random(x, 40);
    l[0] = rows_chunk(0, 1, shape, 0, 13);
    l[1] = rows_chunk(1, 1, shape, 13, 14);
    l[2] = rows_chunk(3, 1, shape, 14, 40);
    a = array_from(DG_FLOAT64, 1, shape, l, 3, x);
    memset(&kin, 0, sizeof kin);
    kin.n = 1;
    kin.e[0].kind = DG_KEY_SLICE;
    kin.e[0].start = 0;
    kin.e[0].step = 1;
    kin.e[0].len = 39;
    kout = kin;
    kout.e[0].start = 1;
    CHECK_OK(dg_array_view(a, &kin, &vin, err));
    CHECK_OK(dg_array_view(a, &kout, &vout, err));
    EXPECT(vin && vout && dg_array_overlaps(vin, vout));
    call_init(&c, f8_loop(DG_UF_add), 1, sub);
    set_input(&c, 0, vin);
    memcpy(c.in[1].scalar, &one, sizeof one);
    dg_array_incref(vout);
    c.out[0] = vout;
    CHECK_OK(dg_ufunc_outputs(&c, err));
    EXPECT(c.res[0] == vout);
    CHECK_OK(dg_ufunc_run(&c, err));
    EXPECT(c.in[0].arr != vin); /* read from a copy */
    array_to(a, got);
    EXPECT(got[0] == x[0]);
    for (i = 1; i < 40; i++)
        EXPECT(got[i] == x[i - 1] + 1.0);
    dg_ufunc_call_clear(&c);
    dg_array_decref(vin);
    dg_array_decref(vout);
    dg_array_decref(a);
    expect_no_memory();
}

/* divmod into two out=: the second written in place where it is laid out
 * like the first result, else the result cast into it. */
static void test_two_outputs(void)
{
    static const int64_t shape[2] = {10, 6};
    double x[60], y[60], q[60], r[60], zero[60];
    dg_plan_chunk l[3], other[1];
    dg_ufunc_call c;
    dg_array *a, *b, *o0, *o1;
    int n, i, round;
    fill_random(x, 60);
    for (i = 0; i < 60; i++) {
        y[i] = (double)rnd_in(1, 9) * (rnd() % 2 ? 1 : -1);
        zero[i] = 0;
    }
    a = uneven_10x6(x, l, &n);
    b = uneven_10x6(y, l, &n);
    other[0] = rows_chunk(2, 2, shape, 0, 10);
    for (round = 0; round < 2; round++) {
        o0 = array_from(DG_FLOAT64, 2, shape, l, n, zero);
        o1 = round == 0 ? array_from(DG_FLOAT64, 2, shape, l, n, zero)
                        : array_from(DG_FLOAT64, 2, shape, other, 1, zero);
        call_init(&c, f8_loop(DG_UF_divmod), 2, shape);
        set_input(&c, 0, a);
        set_input(&c, 1, b);
        dg_array_incref(o0);
        dg_array_incref(o1);
        c.out[0] = o0;
        c.out[1] = o1;
        CHECK_OK(dg_ufunc_outputs(&c, err));
        EXPECT(c.res[0] == o0);
        EXPECT((c.res[1] == o1) == (round == 0));
        CHECK_OK(dg_ufunc_run(&c, err));
        array_to(o0, q);
        array_to(o1, r);
        for (i = 0; i < 60; i++) {
            EXPECT(q[i] == floor(x[i] / y[i]));
            EXPECT(fabs(r[i] - (x[i] - q[i] * y[i])) <= 1e-12 * fabs(x[i]));
        }
        dg_ufunc_call_clear(&c);
        dg_array_decref(o0);
        dg_array_decref(o1);
    }
    dg_array_decref(a);
    dg_array_decref(b);
    expect_no_memory();
}

/* dg_ufunc_operand: an array as it is when it is a REPLICA of the dtype;
 * else REPLICA and cast; dg_array_cast to its own dtype: a copy. */
static void test_operands_and_casts(void)
{
    static const int64_t shape[2] = {10, 6};
    int32_t part[60], back[60];
    double x[60], got[60];
    dg_plan_chunk l[3], both[2];
    dg_array *a, *same = NULL, *p, *psum = NULL, *pf = NULL, *cp = NULL;
    int n, i;
    for (i = 0; i < 60; i++)
        part[i] = (int32_t)rnd_in(-50000, 50000);
    fill_random(x, 60);
    a = uneven_10x6(x, l, &n);
    CHECK_OK(dg_ufunc_operand(a, DG_FLOAT64, &same, err));
    EXPECT(same == a);
    /* an int32 array held in SUM mode: rows 0..6 in two chunks, one of
     * them holding the values and the other zeros */
    both[0] = rows_chunk(0, 2, shape, 0, 10);
    both[1] = rows_chunk(3, 2, shape, 0, 6);
    p = array_from(DG_INT32, 2, shape, both, 2, part);
    CHECK_OK(dg_array_change_mode(p, DG_MODE_SUM, &psum, err));
    CHECK_OK(dg_ufunc_operand(psum, DG_FLOAT64, &pf, err));
    EXPECT(pf && pf->mode == DG_MODE_REPLICA && pf->dtype == DG_FLOAT64);
    if (pf) {
        array_to(pf, got);
        for (i = 0; i < 60; i++)
            EXPECT(got[i] == (double)part[i]);
    }
    /* a copy: the same values, and a write into it leaves p as it was
     * (it may share p's memory until then: copy on write) */
    CHECK_OK(dg_array_cast(p, DG_INT32, &cp, err));
    EXPECT(cp && cp != p);
    if (cp) {
        dg_fill_desc f;
        array_to(cp, back);
        EXPECT(memcmp(back, part, sizeof back) == 0);
        memset(&f, 0, sizeof f);
        f.kind = DG_FILL_CONST;
        CHECK_OK(dg_array_fill(cp, &f, NULL, err));
        array_to(p, back);
        EXPECT(memcmp(back, part, sizeof back) == 0);
        array_to(cp, back);
        for (i = 0; i < 60; i++)
            EXPECT(back[i] == 0);
    }
    dg_array_decref(cp);
    dg_array_decref(pf);
    dg_array_decref(psum);
    dg_array_decref(p);
    dg_array_decref(same);
    dg_array_decref(a);
    expect_no_memory();
}

static const test_case g_tests[] = {
    {"result_like_input", test_result_like_input},
    {"result_default_layout", test_result_default_layout},
    {"out_made_replica", test_out_made_replica},
    {"out_cast_where", test_out_cast_where},
    {"input_overlaps_output", test_input_overlaps_output},
    {"two_outputs", test_two_outputs},
    {"operands_and_casts", test_operands_and_casts},
};

int main(int argc, char **argv)
{
    return run_tests_on_devices(g_tests, sizeof g_tests / sizeof g_tests[0], argc, argv);
}
