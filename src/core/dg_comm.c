/* Waiting for a group of messages between processes, bounded (dg_comm.h). */
#define _POSIX_C_SOURCE 200809L
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "dg_comm.h"

/* A wait polls without pausing for DG_COMM_SPIN_S, plus the time its bytes
 * take at DG_COMM_SPIN_RATE, after the last request that completed; past
 * that it pauses between polls, from DG_COMM_NAP_MIN_NS up to
 * DG_COMM_NAP_MAX_NS. */
#define DG_COMM_SPIN_S 0.02
#define DG_COMM_SPIN_RATE 0.25e9 /* bytes per second */
#define DG_COMM_NAP_MIN_NS 20000L
#define DG_COMM_NAP_MAX_NS 1000000L

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Polls the requests until all are done.  MPI moves a message on only
 * inside its calls (Open MPI's shared-memory and TCP transports send a large
 * message as fragments, each one waiting for the next test on both sides,
 * and a collective's rounds likewise), so a pause between tests slows the
 * message itself: a host read of 1 GiB polled with naps of up to 200 us ran
 * at 0.2 GB/s where MPI's own blocking calls, which poll without pause, run
 * at several GB/s.  So the wait polls without pausing, giving the core to
 * any other thread that wants it (sched_yield: where cores are shared, the
 * process it waits for may need this one) for as long as its bytes should
 * take at a slow rate plus DG_COMM_SPIN_S; only a wait longer than that (a
 * peer that is late, busy or dead) pauses between polls, up to 1 ms, so
 * that it does not take a core from the work beside it for long.  The
 * bound (timeout_s without progress) is checked at every poll. */
dg_status dg_comm_wait_all(dg_comm_i *c, dg_comm_req **req, int n, size_t nbytes,
                           const char *what, dg_error *err)
{
    const double spin_s = DG_COMM_SPIN_S + (double)nbytes / DG_COMM_SPIN_RATE;
    double last = now_s();
    long nap_ns = DG_COMM_NAP_MIN_NS;
    int left = 0, i;
    for (i = 0; i < n; i++)
        left += req[i] != NULL;
    while (left > 0) {
        int moved = 0;
        double t;
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
        t = now_s();
        if (st == DG_OK && !moved && t - last > c->timeout_s) {
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
            last = t;
            nap_ns = DG_COMM_NAP_MIN_NS;
        } else if (left > 0 && t - last < spin_s) {
            sched_yield();
        } else if (left > 0) {
            struct timespec ts = {0, nap_ns};
            nanosleep(&ts, NULL);
            if (nap_ns < DG_COMM_NAP_MAX_NS)
                nap_ns = nap_ns * 2 < DG_COMM_NAP_MAX_NS ? nap_ns * 2 : DG_COMM_NAP_MAX_NS;
        }
    }
    return DG_OK;
}
