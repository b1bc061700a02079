/* [multihost] The job's host communication (dg_comm.h) over the MPI library
 * that mpi4py loaded in this process.
 *
 * dgarray is built without MPI's headers: the few functions it calls are
 * looked up by name in that library (dlsym), and the handles it passes
 * (communicators, MPI_BYTE) are the ones mpi4py gives Python
 * (MPI._handleof).  Open MPI's handles are pointers and MPICH's are ints;
 * both travel here as intptr_t, which the C calling convention of the
 * machines dgarray runs on (x86-64, aarch64) passes in the register where
 * the library reads either.  Requests are stored in an intptr_t (room for
 * both), statuses in a buffer larger than either's MPI_Status. */
#include "dgpy.h" /* Python.h first: it sets the feature macros */

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dgpy_mpi.h"

typedef int (*mpi_start_fn)(void *buf, int count, intptr_t type, int peer, int tag,
                            intptr_t comm, intptr_t *req);
typedef int (*mpi_test_fn)(intptr_t *req, int *flag, void *status);
typedef int (*mpi_req_fn)(intptr_t *req);
typedef int (*mpi_ibcast_fn)(void *buf, int count, intptr_t type, int root, intptr_t comm,
                             intptr_t *req);
typedef int (*mpi_iallgatherv_fn)(const void *send, int count, intptr_t stype, void *recv,
                                  const int *counts, const int *displs, intptr_t rtype,
                                  intptr_t comm, intptr_t *req);

typedef struct mpi_comm {
    dg_comm_i iface;
    void *lib;
    intptr_t xfer, coll, byte; /* the two communicators, MPI_BYTE */
    mpi_start_fn isend, irecv;
    mpi_test_fn test;
    mpi_req_fn cancel, req_free;
    mpi_ibcast_fn ibcast;
    mpi_iallgatherv_fn iallgatherv;
    long long nbcast, nexchange; /* collectives made (calling thread only) */
    pthread_mutex_t mu;
    int failed;    /* [mu] */
    char why[256]; /* [mu] */
} mpi_comm;

/* A message of more than MPI's int count goes as pieces of 1 GiB. */
#define MPI_PIECE ((size_t)1 << 30)

struct dg_comm_req {
    int n;
    intptr_t r[];
};

static mpi_comm *impl(dg_comm_i *c) { return (mpi_comm *)c->impl; }

static dg_status mpi_fail(dg_comm_i *c, const char *why, dg_error *err)
{
    mpi_comm *m = impl(c);
    char msg[256];
    pthread_mutex_lock(&m->mu);
    if (!m->failed) {
        m->failed = 1;
        snprintf(m->why, sizeof m->why, "%s", why);
    }
    snprintf(msg, sizeof msg, "%s", m->why);
    pthread_mutex_unlock(&m->mu);
    return dg_error_set(err, DG_ERR_DEVICE, -1, "the job of %d processes failed: %s", c->size,
                        msg);
}

static dg_status mpi_check(dg_comm_i *c, dg_error *err)
{
    mpi_comm *m = impl(c);
    int failed;
    pthread_mutex_lock(&m->mu);
    failed = m->failed;
    pthread_mutex_unlock(&m->mu);
    return failed ? mpi_fail(c, "", err) : DG_OK;
}

/* An MPI call's error code as the job's failure. */
static dg_status mpi_err(dg_comm_i *c, const char *call, int code, dg_error *err)
{
    char msg[128];
    snprintf(msg, sizeof msg, "%s returned MPI error %d", call, code);
    return mpi_fail(c, msg, err);
}

static dg_status mpi_start(dg_comm_i *c, int send, void *buf, size_t n, int peer, int tag,
                           dg_comm_req **out, dg_error *err)
{
    mpi_comm *m = impl(c);
    const int np = n ? (int)((n + MPI_PIECE - 1) / MPI_PIECE) : 1;
    dg_comm_req *q = (dg_comm_req *)calloc(1, sizeof(*q) + (size_t)np * sizeof(intptr_t));
    int i;
    if (!q)
        return mpi_fail(c, "out of host memory", err);
    for (i = 0; i < np; i++) {
        const size_t off = (size_t)i * MPI_PIECE;
        const int cnt = (int)(n - off < MPI_PIECE ? n - off : MPI_PIECE);
        const int rc = (send ? m->isend : m->irecv)((char *)buf + off, cnt, m->byte, peer, tag,
                                                    m->xfer, &q->r[i]);
        if (rc != 0) {
            q->n = i;
            c->drop(c, q);
            return mpi_err(c, send ? "MPI_Isend" : "MPI_Irecv", rc, err);
        }
    }
    q->n = np;
    *out = q;
    return DG_OK;
}

static dg_status mpi_test(dg_comm_i *c, dg_comm_req *q, int *done, dg_error *err)
{
    mpi_comm *m = impl(c);
    char status[256];
    int i;
    *done = 0;
    for (i = 0; i < q->n; i++) {
        int flag = 0, rc;
        if (!q->r[i])
            continue;
        rc = m->test(&q->r[i], &flag, status);
        if (rc != 0)
            return mpi_err(c, "MPI_Test", rc, err);
        if (!flag)
            return DG_OK;
        q->r[i] = 0;
    }
    *done = 1;
    free(q);
    return DG_OK;
}

static void mpi_drop(dg_comm_i *c, dg_comm_req *q)
{
    mpi_comm *m = impl(c);
    int i;
    for (i = 0; i < q->n; i++)
        if (q->r[i]) {
            m->cancel(&q->r[i]);
            m->req_free(&q->r[i]);
        }
    free(q);
}

/* Ibcast, then the bounded wait of dg_comm_wait_all; pieces of 1 GiB. */
static dg_status mpi_bcast(dg_comm_i *c, void *buf, size_t n, int root, dg_error *err)
{
    mpi_comm *m = impl(c);
    size_t off;
    DG_CHECK(mpi_check(c, err));
    m->nbcast++;
    for (off = 0; off < n; off += MPI_PIECE) {
        const int cnt = (int)(n - off < MPI_PIECE ? n - off : MPI_PIECE);
        dg_comm_req *q = (dg_comm_req *)calloc(1, sizeof(*q) + sizeof(intptr_t));
        int rc;
        if (!q)
            return mpi_fail(c, "out of host memory", err);
        q->n = 1;
        rc = m->ibcast((char *)buf + off, cnt, m->byte, root, m->coll, &q->r[0]);
        if (rc != 0) {
            free(q);
            return mpi_err(c, "MPI_Ibcast", rc, err);
        }
        DG_CHECK(dg_comm_wait_all(c, &q, 1, (size_t)cnt, "a read of another process's device",
                                  err));
    }
    return DG_OK;
}

/* Iallgatherv of bytes, then the bounded wait; where a count or offset
 * exceeds MPI's int, one broadcast from each process instead. */
static dg_status mpi_allgatherv(dg_comm_i *c, const void *send, size_t n, void *recv,
                                const size_t *counts, const size_t *displs, dg_error *err)
{
    mpi_comm *m = impl(c);
    int *ic = (int *)malloc(2 * (size_t)c->size * sizeof(int)), p, rc, big = 0;
    size_t total = 0;
    dg_comm_req *q;
    DG_CHECK(mpi_check(c, err));
    m->nexchange++;
    if (!ic)
        return mpi_fail(c, "out of host memory", err);
    for (p = 0; p < c->size; p++) {
        big |= counts[p] > (size_t)0x7fffffff || displs[p] > (size_t)0x7fffffff;
        ic[p] = (int)counts[p];
        ic[c->size + p] = (int)displs[p];
        total += counts[p];
    }
    if (big) {
        dg_status st = DG_OK;
        free(ic);
        if (n)
            memmove((char *)recv + displs[c->rank], send, n);
        for (p = 0; p < c->size && st == DG_OK; p++)
            st = mpi_bcast(c, (char *)recv + displs[p], counts[p], p, err);
        return st;
    }
    q = (dg_comm_req *)calloc(1, sizeof(*q) + sizeof(intptr_t));
    if (!q) {
        free(ic);
        return mpi_fail(c, "out of host memory", err);
    }
    q->n = 1;
    rc = m->iallgatherv(send, (int)n, m->byte, recv, ic, ic + c->size, m->byte, m->coll,
                        &q->r[0]);
    if (rc != 0) {
        free(q);
        free(ic);
        return mpi_err(c, "MPI_Iallgatherv", rc, err);
    }
    {
        const dg_status st = dg_comm_wait_all(c, &q, 1, total,
                                              "an exchange of every process's values", err);
        free(ic);
        return st;
    }
}

void dgpy_mpi_counts(dg_comm_i *c, long long *bcasts, long long *exchanges)
{
    *bcasts = impl(c)->nbcast;
    *exchanges = impl(c)->nexchange;
}

dg_comm_i *dgpy_mpi_comm_new(const char *lib_path, intptr_t xfer, intptr_t coll, intptr_t byte,
                             int rank, int size, double timeout_s, char *why, size_t cap)
{
    mpi_comm *m;
    void *lib = dlopen(lib_path, RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
        snprintf(why, cap, "could not open the MPI library %s: %s", lib_path, dlerror());
        return NULL;
    }
    m = (mpi_comm *)calloc(1, sizeof(*m));
    if (!m) {
        snprintf(why, cap, "out of host memory");
        dlclose(lib);
        return NULL;
    }
    m->lib = lib;
    *(void **)&m->isend = dlsym(lib, "MPI_Isend");
    *(void **)&m->irecv = dlsym(lib, "MPI_Irecv");
    *(void **)&m->test = dlsym(lib, "MPI_Test");
    *(void **)&m->cancel = dlsym(lib, "MPI_Cancel");
    *(void **)&m->req_free = dlsym(lib, "MPI_Request_free");
    *(void **)&m->ibcast = dlsym(lib, "MPI_Ibcast");
    *(void **)&m->iallgatherv = dlsym(lib, "MPI_Iallgatherv");
    if (!m->isend || !m->irecv || !m->test || !m->cancel || !m->req_free || !m->ibcast ||
        !m->iallgatherv) {
        snprintf(why, cap, "%s lacks MPI-3's non-blocking functions", lib_path);
        dlclose(lib);
        free(m);
        return NULL;
    }
    m->xfer = xfer;
    m->coll = coll;
    m->byte = byte;
    pthread_mutex_init(&m->mu, NULL);
    m->iface.rank = rank;
    m->iface.size = size;
    m->iface.timeout_s = timeout_s;
    m->iface.impl = m;
    m->iface.start = mpi_start;
    m->iface.test = mpi_test;
    m->iface.drop = mpi_drop;
    m->iface.bcast = mpi_bcast;
    m->iface.allgatherv = mpi_allgatherv;
    m->iface.fail = mpi_fail;
    m->iface.check = mpi_check;
    return &m->iface;
}
