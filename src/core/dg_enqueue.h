/* Device work and the memory it touches: the one place where the stream
 * ordering of the core is made (dg_enqueue.c).
 *
 * Every piece of device work states what it reads and writes as a list of
 * accesses, then goes through dg_enqueue (one stream) or dg_enqueue_group
 * (work spread over several streams that must not wait for one another).
 * The helper makes the waits the accesses need (a read waits for the
 * memory's last writes on other streams; a write also for its reads there),
 * runs the work, and records where the work ends as the memory's last read or
 * write.  Nothing else in the core waits for or records an access, so a
 * piece of work cannot run without its waits nor leave memory without its
 * record.
 *
 * The record (dg_mem.writes and .reads, dg_array.h) is also what makes the
 * life of memory stream-ordered: a new allocation counts as a write on its
 * device's compute stream, and memory is released on that stream after it
 * waited for every recorded access.
 *
 * All functions are called with one thread at a time per array (dg_array.h). */
#ifndef DG_ENQUEUE_H
#define DG_ENQUEUE_H

#include "dg_array.h"

/* ---- buffers and their memory -------------------------------------------------- */

/* A new buffer of nbytes on dev (ptr NULL when nbytes is 0); refcnt 1.  Its
 * allocation counts as a write on dev's compute stream. */
dg_status dg_buffer_new(dg_backend_i *be, int dev, size_t nbytes, dg_buffer **out,
                        dg_error *err);
/* A new buffer holding the same memory as b (a second identity of the same
 * values: a write through either first copies, see dg_buffer_unshare).
 * New reference in *out; b is borrowed. */
dg_status dg_buffer_share(dg_buffer *b, dg_buffer **out, dg_error *err);
/* Drops a reference; the last one drops the memory's, which is released
 * after every recorded access (see dg_mem). */
void dg_buffer_decref(dg_backend_i *be, dg_buffer *b);
/* Copy on write: if b's memory is shared with another buffer, b gets a
 * private copy of it (enqueued on the device's compute stream), so that a
 * write through b is seen by b's chunks alone.  Call before computing any
 * address in b for writing. */
dg_status dg_buffer_unshare(dg_backend_i *be, dg_buffer *b, dg_error *err);
/* Gives b new memory of the same size, its bytes outside what the caller is
 * about to write copied from the old memory by the n copies of `keep`
 * (enqueued on b's device's compute stream; their src and dst hold byte
 * offsets from the memory's start, the devices are b's).  The old memory
 * goes to a new buffer, *old (new reference), for work recorded before that
 * still reads it: the pending chain (dg_fuse.c) moves its references there.
 * Every view of b sees the new memory.  Not for a lent buffer (b->lent).
 * On failure b is unchanged and *old NULL. */
dg_status dg_buffer_renew(dg_backend_i *be, dg_buffer *b, const dg_copy_desc *keep, int n,
                          dg_buffer **old, dg_error *err);
/* The host waits for every recorded write of b. */
dg_status dg_buffer_sync(dg_backend_i *be, dg_buffer *b, dg_error *err);
/* 1 if reading m on (dev, stream) has to wait: m was last written by
 * another stream (a read of m there would begin with a wait). */
int dg_mem_read_waits(const dg_mem *m, int dev, int stream);

/* ---- accesses -------------------------------------------------------------------- */

/* How a piece of work touches memory (bits of dg_access.how). */
enum {
    DG_ACC_READ = 1u,      /* reads it */
    DG_ACC_WRITE = 2u,     /* writes it: the last write of all of it */
    DG_ACC_WRITE_PART = 4u /* writes a part that other writes not ordered before
                              it (of the same group, or before it) leave alone */
};

/* One access of a piece of work to memory.  mem NULL: none (an operand the
 * work does not have).  dev, stream: where the work that makes it runs
 * (dg_enqueue_group; dg_enqueue fills them). */
typedef struct dg_access {
    dg_mem *mem;
    unsigned how;
    int dev, stream;
} dg_access;

/* An access of buffer b (NULL: none) by the work's own stream. */
static inline dg_access dg_acc(dg_buffer *b, unsigned how)
{
    dg_access a;
    a.mem = b ? b->mem : NULL;
    a.how = how;
    a.dev = a.stream = -1;
    return a;
}
static inline dg_access dg_read(dg_buffer *b) { return dg_acc(b, DG_ACC_READ); }
static inline dg_access dg_write(dg_buffer *b) { return dg_acc(b, DG_ACC_WRITE); }
static inline dg_access dg_write_part(dg_buffer *b) { return dg_acc(b, DG_ACC_WRITE_PART); }
/* An access of buffer b by work on (dev, stream), for dg_enqueue_group. */
static inline dg_access dg_acc_on(dg_buffer *b, unsigned how, int dev, int stream)
{
    dg_access a = dg_acc(b, how);
    a.dev = dev;
    a.stream = stream;
    return a;
}

/* ---- work ------------------------------------------------------------------------- */

/* Enqueues a piece of work on (dev, stream) through the backend's wrappers
 * (dg_backend.h); ctx is the work's own. */
typedef dg_status (*dg_work_fn)(dg_backend_i *be, int dev, int stream, void *ctx,
                                dg_error *err);
typedef struct dg_work {
    dg_work_fn run;
    void *ctx;
} dg_work;

/* One backend slot as the work (the descriptor borrowed until dg_enqueue
 * returns). */
dg_work dg_work_copy(const dg_copy_desc *d);
dg_work dg_work_elementwise(const dg_ew_desc *d);
dg_work dg_work_fill(const dg_fill_desc *d);
dg_work dg_work_reduce(const dg_reduce_desc *d);
dg_work dg_work_scan(const dg_scan_desc *d);
dg_work dg_work_gemm(const dg_gemm_desc *d);
dg_work dg_work_select(const dg_select_desc *d);
dg_work dg_work_rows(const dg_rows_desc *d);
dg_work dg_work_route(const dg_route_desc *d);
dg_work dg_work_sort(const dg_sort_desc *d);
dg_work dg_work_dense(const dg_dense_desc *d);
dg_work dg_work_fft(const dg_fft_desc *d);
dg_work dg_work_fused(const dg_fused_desc *d);
dg_work dg_work_search(const dg_search_desc *d);
dg_work dg_work_count(const dg_count_desc *d);

/* Enqueues work w on (dev, stream) with its n accesses acc (borrowed): the
 * waits each access needs, the work, then the records of the accesses at the
 * position after the work (the reads, then the writes).  A wait
 * that fails leaves the work unrun and nothing recorded.  Work that fails
 * may have enqueued part of itself: its accesses are then recorded as reads
 * and part writes, which delay later work on the memory but forget nothing. */
dg_status dg_enqueue(dg_backend_i *be, int dev, int stream, const dg_access *acc, int n,
                     dg_work w, dg_error *err);

/* Enqueues the work of a group (several streams, several devices). */
typedef dg_status (*dg_group_fn)(dg_backend_i *be, void *ctx, dg_error *err);

/* A group: work on several streams whose accesses do not wait for one
 * another (part writes of one stack from several devices; copies into the
 * disjoint parts of a move's destinations).  Every wait of the n accesses
 * acc (each on its own dev and stream) is enqueued first, then fn enqueues
 * all the work (through the backend's wrappers), then each access is
 * recorded at the position of its stream taken after fn.  A memory fully
 * written (DG_ACC_WRITE) is named once in a group.  Failures as dg_enqueue:
 * a wait that fails runs nothing and records nothing; after fn fails, every
 * access is recorded as a read or a part write, so that no memory is
 * released before the work fn already enqueued on it. */
dg_status dg_enqueue_group(dg_backend_i *be, const dg_access *acc, int n, dg_group_fn fn,
                           void *ctx, dg_error *err);

#endif /* DG_ENQUEUE_H */
