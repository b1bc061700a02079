/* Host waits that Ctrl-C can interrupt.
 *
 * The core's waitsets (src/core/dg_wait.c) are waited for in slices of
 * WAIT_SLICE_US without the GIL; between slices Python's signal handlers run
 * (PyErr_CheckSignals, main thread only), so a KeyboardInterrupt stops the
 * wait within a slice.  The work that was being waited for goes on; arrays
 * and devices stay usable, and a later read simply waits again. */
#include "dgpy.h"

#define WAIT_SLICE_US 50000

/* The host waits for work on the devices so far (waitsets with something
 * enqueued in them, done or not): what tests and benchmarks count. */
static long long host_waits;

long long dgpy_host_waits(void)
{
    return host_waits;
}

/* Waits for w (borrowed); 0, or -1 with an exception set. */
static int wait_set(dg_waitset *w)
{
    dg_backend_i *be = dgpy_st->be;
    dg_error err = DG_ERROR_INIT;
    dg_status st;
    int done = 0, i;
    for (i = 0; i < w->n && w->pos[i].seq == 0; i++)
        ;
    host_waits += i < w->n;
    for (;;) {
        Py_BEGIN_ALLOW_THREADS
        st = dg_waitset_wait(be, w, WAIT_SLICE_US, &done, &err);
        Py_END_ALLOW_THREADS
        if (st != DG_OK)
            return dgpy_raise_int(&err);
        if (done)
            return 0;
        if (PyErr_CheckSignals() < 0)
            return -1;
    }
}

int dgpy_wait_ready(const dg_array *a)
{
    dg_waitset w = {0, NULL};
    dg_error err = DG_ERROR_INIT;
    int r;
    if (dg_waitset_of_array(a, &w, &err) != DG_OK)
        return dgpy_raise_int(&err);
    r = wait_set(&w);
    dg_waitset_free(&w);
    return r;
}

int dgpy_wait_ready_many(dg_array *const *a, int n)
{
    dg_waitset w = {0, NULL}, o = {0, NULL};
    dg_error err = DG_ERROR_INIT;
    int i, r;
    for (i = 0; i < n; i++) {
        if (dg_waitset_of_array(a[i], i ? &o : &w, &err) != DG_OK) {
            dg_waitset_free(&w);
            return dgpy_raise_int(&err);
        }
        if (i) {
            dg_waitset_merge(&w, &o);
            dg_waitset_free(&o);
        }
    }
    r = n ? wait_set(&w) : 0;
    dg_waitset_free(&w);
    return r;
}

int dgpy_wait_all(void)
{
    dg_waitset w = {0, NULL};
    dg_error err = DG_ERROR_INIT;
    int r;
    if (dg_waitset_all(dgpy_st->be, &w, &err) != DG_OK)
        return dgpy_raise_int(&err);
    r = wait_set(&w);
    dg_waitset_free(&w);
    return r;
}
