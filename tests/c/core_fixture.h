/* What the C tests of array operations share: a CPU backend of 1 or 4
 * virtual devices, arrays made from and read back into host memory, and
 * the check that a test left no device memory behind.  Included once by
 * each test program after harness.h (its definitions are static). */
#ifndef DG_TEST_CORE_FIXTURE_H
#define DG_TEST_CORE_FIXTURE_H

#include <string.h>

#include "dg_array.h"
#include "dg_backend.h"

static dg_backend_i *g_be; /* the backend of the current round */

/* A new CPU backend of ndev devices as g_be. */
static inline void fixture_open(int ndev)
{
    dg_error err = DG_ERROR_INIT;
    g_be = NULL;
    if (dg_cpu_backend_create(ndev, &g_be, &err) != DG_OK) {
        fprintf(stderr, "no CPU backend: %s\n", err.msg);
        exit(2);
    }
}

static inline void fixture_close(void)
{
    dg_be_destroy(g_be);
    g_be = NULL;
}

/* Fails the test where a call did not return DG_OK, with its message. */
#define CHECK_OK(expr)                                                     \
    do {                                                                   \
        dg_error e_ = DG_ERROR_INIT;                                       \
        dg_error *err = &e_;                                               \
        if ((expr) != DG_OK)                                               \
            failf("%s:%d: %s: %s", __FILE__, __LINE__, #expr, e_.msg);    \
    } while (0)

/* A new REPLICA array of `dtype` and shape with layout l (n chunks) holding
 * the dense C-order host values at `host`. */
static inline dg_array *array_from(int dtype, int ndim, const int64_t *shape,
                                   const dg_plan_chunk *l, int n, const void *host)
{
    dg_array *a = NULL;
    int64_t hs[DG_MAXDIM];
    dg_dense_strides(ndim, shape, dg_dtype_size(dtype), hs);
    CHECK_OK(dg_array_empty(g_be, dtype, ndim, shape, l, n, DG_MODE_REPLICA, &a, err));
    if (a)
        CHECK_OK(dg_array_scatter(a, (const char *)host, hs, err));
    return a;
}

/* The values of a (REPLICA) into the dense C-order host array `host`. */
static inline void array_to(dg_array *a, void *host)
{
    dg_box whole;
    int64_t hs[DG_MAXDIM];
    dg_box_full(&whole, a->ndim, a->shape);
    dg_dense_strides(a->ndim, a->shape, dg_dtype_size(a->dtype), hs);
    CHECK_OK(dg_array_gather(a, &whole, (char *)host, hs, err));
}

/* One chunk of layout l: `box` (rows r0..r1 of axis 0, the rest whole) on
 * device dev modulo the backend's devices. */
static inline dg_plan_chunk rows_chunk(int dev, int ndim, const int64_t *shape, int64_t r0,
                                       int64_t r1)
{
    dg_plan_chunk c;
    c.device = dev % g_be->ndevices;
    dg_box_full(&c.box, ndim, shape);
    c.box.r[0] = dg_range_make(r0, r1, 1);
    return c;
}

/* 1 if a's chunks are the layout l (n chunks), in order. */
static inline int has_layout(const dg_array *a, const dg_plan_chunk *l, int n)
{
    int i;
    if (a->nchunks != n)
        return 0;
    for (i = 0; i < n; i++)
        if (a->chunks[i].device != l[i].device || !dg_box_equal(&a->chunks[i].box, &l[i].box))
            return 0;
    return 1;
}

/* Every device's memory handed back once all work ran: what a test that
 * dropped its arrays must leave. */
static inline void expect_no_memory(void)
{
    int d;
    CHECK_OK(dg_be_sync_all(g_be, err));
    for (d = 0; d < g_be->ndevices; d++)
        if (dg_be_bytes_in_use(g_be, d) != 0)
            failf("device %d still holds %zu bytes", d, dg_be_bytes_in_use(g_be, d));
}

/* Round r of the tests: a backend of 1 device (r = 0), then of 4. */
static inline void fixture_round(int r)
{
    fixture_open(r == 0 ? 1 : 4);
}

/* Runs every test on a backend of 1 device, then of 4 (argv[1]: a seed),
 * prints one "N passed, M failed" line and returns the exit status. */
static inline int run_tests_on_devices(const test_case *tests, size_t ntests, int argc,
                                       char **argv)
{
    return run_test_rounds(tests, ntests, argc, argv, 2, fixture_round, fixture_close);
}

#endif /* DG_TEST_CORE_FIXTURE_H */
