/* [multihost] The CPU backend's transfers between processes: MPI messages
 * (through the job's dg_comm_i) run by the workers of the devices.
 *
 * A group's transfers of one local device are one task on that device's
 * worker: it starts every message of the group (sends and receives) and
 * then waits for all of them, so that two processes exchanging in both
 * directions never wait for each other's second message (blocking sends in
 * turn could).  Every process queues its side of the same groups in the same
 * order, and a group's task waits only for that group's messages, so the
 * earliest unfinished group can always finish: no cycle.  Messages of one
 * pair of devices keep their order (MPI's non-overtaking rule; a pair's
 * sends come from one worker, its receives from one other). */
#include <stdlib.h>

#include "cpu_transport.h"

/* One process runs one job: the communicator given at join (borrowed). */
static dg_comm_i *job_comm;

typedef struct xfer_task {
    int n;
    dg_pxfer x[];
} xfer_task;

/* The tag of a device pair's messages (MPI matches by process and tag):
 * unique among pairs for jobs of up to 128 devices. */
static int pair_tag(const dg_pxfer *x)
{
    return ((x->src_gdev & 127) << 7) | (x->dst_gdev & 127);
}

static void xfer_run(void *arg)
{
    xfer_task *t = (xfer_task *)arg;
    dg_comm_req **req = (dg_comm_req **)calloc((size_t)t->n, sizeof(*req));
    dg_error err = DG_ERROR_INIT;
    dg_status st = req ? DG_OK : job_comm->fail(job_comm, "out of host memory in a transfer", &err);
    int i;
    for (i = 0; i < t->n && st == DG_OK; i++)
        st = job_comm->start(job_comm, t->x[i].send, t->x[i].ptr, t->x[i].nbytes, t->x[i].peer,
                             pair_tag(&t->x[i]), &req[i], &err);
    if (st != DG_OK) {
        /* the job is failed (start says why); give up what was started */
        for (i = 0; req && i < t->n; i++)
            if (req[i])
                job_comm->drop(job_comm, req[i]);
    } else {
        size_t nbytes = 0;
        for (i = 0; i < t->n; i++)
            nbytes += t->x[i].nbytes;
        dg_comm_wait_all(job_comm, req, t->n, nbytes, "a transfer between processes", &err);
    }
    free(req);
    free(t);
}

static dg_status cpu_join(dg_backend_i *be, dg_comm_i *comm, int first_gdev, int ngdev,
                          dg_error *err)
{
    (void)be;
    (void)ngdev;
    (void)first_gdev;
    if (job_comm && job_comm != comm)
        return dg_error_set(err, DG_ERR_VALUE, -1, "this process already joined a job");
    job_comm = comm;
    return DG_OK;
}

/* One task per local device named in x[], in the order the devices first
 * appear; each holds that device's transfers in x[]'s order. */
static dg_status cpu_transport(dg_backend_i *be, const dg_pxfer *x, int n, dg_error *err)
{
    int i, j;
    char *seen;
    if (!job_comm)
        return dg_error_set(err, DG_ERR_INTERNAL, -1, "a transfer between processes before join");
    DG_CHECK(job_comm->check(job_comm, err));
    seen = (char *)calloc((size_t)n, 1);
    if (!seen)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
    for (i = 0; i < n; i++) {
        xfer_task *t;
        int k = 0;
        dg_status st;
        if (seen[i])
            continue;
        for (j = i; j < n; j++)
            k += x[j].dev == x[i].dev;
        t = (xfer_task *)malloc(sizeof(*t) + (size_t)k * sizeof(dg_pxfer));
        if (!t) {
            free(seen);
            return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory");
        }
        t->n = 0;
        for (j = i; j < n; j++)
            if (x[j].dev == x[i].dev) {
                t->x[t->n++] = x[j];
                seen[j] = 1;
            }
        st = dg_cpu_submit_call(be, x[i].dev, xfer_run, t, err);
        if (st != DG_OK) {
            free(t);
            free(seen);
            return st;
        }
    }
    free(seen);
    return DG_OK;
}

void dg_cpu_transport_install(dg_backend_i *be)
{
    be->join = cpu_join;
    be->transport = cpu_transport;
}
