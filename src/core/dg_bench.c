/* Timing of the backend's own transfers, beside which the benchmarks set
 * dgarray's moves (dg_bench_exchange). */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dg_array.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

dg_status dg_bench_exchange(dg_backend_i *be, const int *pairs, int npairs, size_t nbytes,
                            int iters, double *best, dg_error *err)
{
    void **src = (void **)calloc((size_t)(npairs ? npairs : 1), sizeof(void *));
    void **dst = (void **)calloc((size_t)(npairs ? npairs : 1), sizeof(void *));
    dg_xfer *x = (dg_xfer *)calloc((size_t)(npairs ? npairs : 1), sizeof(dg_xfer));
    dg_status st = DG_OK;
    int i, it;

    *best = 0;
    if (!src || !dst || !x) {
        st = dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        goto done;
    }
    /* the backend's own group: no copies in its place */
    DG_CHECK_GOTO(dg_be_need(be, DG_SLOT_EXCHANGE, err), st, done);
    for (i = 0; i < npairs && st == DG_OK; i++) {
        x[i].src_dev = pairs[2 * i];
        x[i].dst_dev = pairs[2 * i + 1];
        x[i].nbytes = nbytes;
        if (x[i].src_dev < 0 || x[i].src_dev >= be->ndevices || x[i].dst_dev < 0 ||
            x[i].dst_dev >= be->ndevices || x[i].src_dev == x[i].dst_dev) {
            st = dg_error_set(err, DG_ERR_VALUE, -1, "no transfer from device %d to device %d",
                              x[i].src_dev, x[i].dst_dev);
            break;
        }
        st = dg_be_alloc(be, x[i].src_dev, nbytes, &src[i], err);
        if (st == DG_OK)
            st = dg_be_alloc(be, x[i].dst_dev, nbytes, &dst[i], err);
        x[i].src = src[i];
        x[i].dst = dst[i];
    }
    /* the allocations are ordered on the compute streams */
    if (st == DG_OK)
        st = dg_be_sync_all(be, err);
    for (it = -1; it < iters && st == DG_OK; it++) { /* one warm-up round */
        double t0 = now_s(), t;
        st = dg_be_exchange(be, x, npairs, err);
        if (st == DG_OK)
            st = dg_be_sync_all(be, err);
        t = now_s() - t0;
        if (it >= 0 && (*best == 0 || t < *best))
            *best = t;
    }
done:
    if (st != DG_OK) {
        dg_error e2 = DG_ERROR_INIT;
        dg_be_sync_all(be, &e2);
    }
    for (i = 0; i < npairs; i++) {
        if (src && src[i])
            dg_be_release(be, x[i].src_dev, src[i]);
        if (dst && dst[i])
            dg_be_release(be, x[i].dst_dev, dst[i]);
    }
    free(src);
    free(dst);
    free(x);
    return st;
}
