/* Waiting for a group of messages between processes, bounded (dg_comm.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>

#include "dg_comm.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Polls (MPI progresses inside its test calls), sleeping from 1 us up to
 * 200 us between rounds without progress, so that a transfer waiting for a
 * slow peer does not take a core from the work beside it. */
dg_status dg_comm_wait_all(dg_comm_i *c, dg_comm_req **req, int n, const char *what,
                           dg_error *err)
{
    double last = now_s();
    long nap_ns = 1000;
    int left = 0, i;
    for (i = 0; i < n; i++)
        left += req[i] != NULL;
    while (left > 0) {
        int moved = 0;
        dg_status st = c->check(c, err);
        for (i = 0; i < n && st == DG_OK; i++) {
            int done = 0;
            if (!req[i])
                continue;
            st = c->test(c, req[i], &done, err);
            if (st == DG_OK && done) {
                req[i] = NULL;
                left--;
                moved = 1;
            }
        }
        if (st == DG_OK && !moved && now_s() - last > c->timeout_s) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "%s waited %.0f s for another process of the job (it died or "
                     "stopped: DGARRAY_DISTRIBUTED_TIMEOUT sets the limit)", what, c->timeout_s);
            st = c->fail(c, msg, err);
        }
        if (st != DG_OK) {
            for (i = 0; i < n; i++)
                if (req[i]) {
                    c->drop(c, req[i]);
                    req[i] = NULL;
                }
            return st;
        }
        if (moved) {
            last = now_s();
            nap_ns = 1000;
        } else {
            struct timespec ts = {0, nap_ns};
            nanosleep(&ts, NULL);
            if (nap_ns < 200000)
                nap_ns *= 2;
        }
    }
    return DG_OK;
}
