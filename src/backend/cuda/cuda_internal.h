/* The CUDA backend's shared state (the .c files of src/backend/cuda only).
 *
 * One cu_be per backend; one cu_dev per GPU with its two streams, its memory
 * pool, its event pool and its table of live allocations.  Each stream keeps
 * `seq`, the number of operations enqueued on it so far (a dg_pos names one of
 * them), and the last event recorded on it with the seq it covers: a wait or
 * sync for a pos reuses that event when it covers the pos, else records a new
 * one (lazily, so that enqueueing work costs no event).
 *
 * Locking: cu_dev.mu guards the fields marked [mu].  An operation enqueues its
 * work first and then bumps seq under mu, so an event recorded after seq
 * reached s always covers operations 1..s (it may cover more: waiting longer
 * is correct).  CUDA calls that only enqueue run outside mu, except event
 * records, which run under mu to pair the record with the seq it covers. */
#ifndef DG_CUDA_INTERNAL_H
#define DG_CUDA_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "cu_kernels.h"
#include "dg_backend.h"
#include "dg_cuda.h"

/* An event of the pool of one device.  refs counts the holders: the stream
 * whose `last` it is, and each wait/sync using it at the moment. */
typedef struct cu_event {
    cudaEvent_t ev;
    uint64_t seq;           /* operations of its stream it covers [mu] */
    int refs;               /* [mu] */
    struct cu_event *next;  /* in the device's free list [mu] */
} cu_event;

typedef struct cu_stream {
    cudaStream_t s;
    uint64_t seq;    /* operations enqueued so far [mu] */
    uint64_t done;   /* operations 1..done are known complete [mu] */
    cu_event *last;  /* the newest event recorded on s, or NULL [mu] */
    /* waited[j * DG_NSTREAMS + k]: operations of GPU j's stream k that s
     * already waits for (a later wait for no more is dropped) [mu] */
    uint64_t *waited;
    /* scratch on s (cu_scratch: the reductions' partials, the tiled
     * scans' totals), kept from one call to the next: stream order keeps
     * them apart */
    void *red_part;
    size_t red_part_cap;
} cu_stream;

/* One live allocation: address and size (open addressing, key 0 = empty). */
typedef struct cu_live {
    uintptr_t ptr;
    size_t size;
} cu_live;

/* Small allocations come in power-of-two classes of 2^CU_CACHE_MIN_SHIFT to
 * 2^CU_CACHE_MAX_SHIFT bytes; CU_CACHE_KEEP released blocks of each class
 * up to 2^CU_CACHE_MANY_SHIFT bytes are kept per device, CU_CACHE_KEEP_BIG
 * of each larger class (at most about 16 MiB of those). */
#define CU_CACHE_MIN_SHIFT 8
#define CU_CACHE_MANY_SHIFT 16
#define CU_CACHE_MAX_SHIFT 21
#define CU_CACHE_NCLASS (CU_CACHE_MAX_SHIFT - CU_CACHE_MIN_SHIFT + 1)
#define CU_CACHE_KEEP 32
#define CU_CACHE_KEEP_BIG 4
/* Larger blocks: the last CU_LARGE_KEEP released, together at most
 * large_cap bytes (DGARRAY_LARGE_CACHE_BYTES, else 1/16 of the device's
 * memory) and each at most a quarter of that, are kept whole for an
 * allocation of their exact size. */
#define CU_LARGE_KEEP 8
#define CU_LARGE_SHARE 16

typedef struct cu_dev {
    int id;                      /* CUDA device ordinal (logical devices may share one) */
    int nshare;                  /* logical devices on this GPU, itself included */
    int nsm;                     /* multiprocessors */
    int started;                 /* mu initialised */
    pthread_mutex_t mu;
    cu_stream st[DG_NSTREAMS];
    cudaMemPool_t pool;          /* NULL until created */
    cu_event *ev_free;           /* [mu] */
    cu_live *live;               /* [mu] */
    size_t live_n, live_cap;     /* [mu] */
    size_t in_use;               /* bytes of live allocations [mu] */
    /* released small blocks kept for the next allocation of their class on
     * the compute stream (cuda_backend.c: cu_alloc) [mu] */
    void *cache[CU_CACHE_NCLASS][CU_CACHE_KEEP];
    int ncache[CU_CACHE_NCLASS];
    /* released large blocks, oldest first, kept the same way [mu] */
    void *large[CU_LARGE_KEEP];
    size_t large_size[CU_LARGE_KEEP];
    int nlarge;
    size_t large_bytes;
    size_t large_cap;
    size_t total_mem;
    char name[256];
} cu_dev;

struct cu_hc;
struct cu_fpe;
struct cu_blas;
struct cu_solver;
struct cu_fft;

struct ncclComm;

typedef struct cu_be {
    dg_backend_i iface;
    int ndev;
    cu_dev *devs;
    unsigned char *peer;         /* peer[i * ndev + j]: i can access j's memory */
    pthread_mutex_t hc_mu;       /* serialises host copies; guards hc */
    struct cu_hc *hc;            /* host copy engine, made at the first host copy */
    struct ncclComm **comms;     /* NCCL communicator, rank i on device i; NULL until needed */
    int nccl_failed;             /* its set-up failed: do not retry */
    int xfer_copies;             /* exchange by copies, not NCCL (see cuda_nccl.c) */
    int allred_nccl;             /* all-reduces by NCCL, not copies and a fold (cuda_nccl.c) */
    int shared_gpu;              /* two logical devices share a GPU (DGARRAY_CUDA_DEVICES) */
    size_t nccl_split;           /* NCCL sends of at most this many bytes (0: whole) */
    struct cu_blas *blas;        /* cuBLAS handles, made at the first product (cuda_gemm.c) */
    struct cu_solver *solver;    /* cuSOLVER handles, made at the first dense op (cuda_dense.c) */
    struct cu_fft *fft;          /* cuFFT plans, made at the first FFT (cuda_fft.c) */
    struct cu_fpe *fpe;          /* floating-point error records (cuda_fpe.c) */
    struct ncclComm **jcomms;    /* [multihost] the job's communicator, rank = job device
                                    number, one per local GPU; NULL alone (cuda_transport.c) */
    int jfirst;                  /* the job number of this process's first GPU */
    struct cu_jwatch *jwatch;    /* [multihost] the job's transfers in flight, per local GPU,
                                    and why the job's communicator was aborted
                                    (cuda_transport.c); NULL alone */
} cu_be;

static inline cu_be *cu_of(dg_backend_i *be) { return (cu_be *)be->impl; }

/* ---- errors (cuda_backend.c) ------------------------------------------- */

/* Records the failure `e` of the CUDA call doing `what` on device dev in err
 * (the first error is kept) and clears the runtime's last error.
 * cudaErrorMemoryAllocation gives DG_ERR_DEVICE_NOMEM with err->bytes =
 * `bytes`; any other error DG_ERR_DEVICE naming `what` and the CUDA message.
 * Returns the status recorded. */
dg_status cu_fail(dg_error *err, cudaError_t e, int dev, size_t bytes, const char *what);

/* 1 if e is a fault that leaves the CUDA context unusable (an illegal
 * address, a kernel's trap or assert, ...): every later CUDA call of the
 * process on that GPU fails with it.  cu_fail's message then says so. */
int cu_error_sticky(cudaError_t e);

/* The fault of the current device's context if it is lost (cu_error_sticky),
 * else cudaSuccess; never blocks.  For the failure statuses of cuSOLVER,
 * cuBLAS and cuFFT: they run their own copy of the runtime, so a kernel
 * fault inside them leaves no last error in ours, only their status. */
cudaError_t cu_sticky_error(void);

/* Evaluates a CUDA call; on failure records it (see cu_fail) in `err`, sets
 * `st` and jumps to `label`. */
#define CU_CHECK_GOTO(call, st, err, dev, what, label)                 \
    do {                                                               \
        cudaError_t cu_e_ = (call);                                    \
        if (cu_e_ != cudaSuccess) {                                    \
            (st) = cu_fail((err), cu_e_, (dev), 0, (what));            \
            goto label;                                                \
        }                                                              \
    } while (0)

/* Evaluates a CUDA call; on failure records it and returns the status. */
#define CU_CHECK(call, err, dev, what)                                 \
    do {                                                               \
        cudaError_t cu_e_ = (call);                                    \
        if (cu_e_ != cudaSuccess)                                      \
            return cu_fail((err), cu_e_, (dev), 0, (what));            \
    } while (0)

/* Makes device `dev` current for the calling thread. */
dg_status cu_set_device(cu_be *b, int dev, dg_error *err);

/* Checks that (dev, stream) names a stream of b. */
dg_status cu_check_stream(cu_be *b, int dev, int stream, const char *op, dg_error *err);

/* ---- positions (cuda_backend.c) ----------------------------------------- */

/* Counts one more operation enqueued on (dev, stream); call after enqueueing. */
void cu_bump(cu_be *b, int dev, int stream);

/* The stream's scratch (cu_stream.red_part), at least nbytes, from the
 * device's pool on the stream, made or grown here; *part NULL if the pool has
 * no room.  Valid for work enqueued on that stream until the next call for
 * it (cuda_reduce.c). */
dg_status cu_scratch(cu_be *b, int dev, int stream, size_t nbytes, void **part,
                     dg_error *err);

/* Gives back the streams' scratch of every stream of d (teardown). */
void cu_reduce_scratch_free(cu_dev *d);

/* The backend's wait: (dev, stream) waits for p. */
dg_status cu_wait(dg_backend_i *be, int dev, int stream, dg_pos p, dg_error *err);
/* Records an event at p now, so that waits for p take in nothing after it
 * (dg_backend_i.mark). */
dg_status cu_mark(dg_backend_i *be, dg_pos p, dg_error *err);
dg_pos cu_pos(dg_backend_i *be, int dev, int stream);

/* ---- launch geometry ------------------------------------------------------ */

/* Blocks of DG_CU_THREADS threads for `work` items, at most `cap` (>= 1). */
static inline unsigned cu_blocks(int64_t work, int64_t cap)
{
    int64_t nb = (work + DG_CU_THREADS - 1) / DG_CU_THREADS;
    if (nb > cap)
        nb = cap;
    if (nb < 1)
        nb = 1;
    return (unsigned)nb;
}

/* ---- dims ------------------------------------------------------------------ */

/* Coalesces an N-d iteration space over `nop` operands in place: drops axes
 * of length 1 and merges neighbouring axes that every operand walks as one
 * (stride[a] == stride[a+1] * shape[a+1]).  strides[k] holds operand k's byte
 * strides.  Returns the new ndim (>= 1: a 0-d or all-ones space becomes
 * shape [1] with strides 0).  No axis may have length 0. */
int cu_coalesce(int ndim, int64_t *shape, int nop, int64_t (*strides)[DG_MAXDIM]);

/* ---- entry points in other files ----------------------------------------- */

dg_status cu_copy(dg_backend_i *be, int dev, int stream, const dg_copy_desc *d,
                  dg_error *err);                                   /* cuda_copy.c */
/* A fused chain as one kernel compiled at run time, else step by step
 * (cuda_fused.c). */
dg_status cu_fused(dg_backend_i *be, int dev, int stream, const dg_fused_desc *d,
                   dg_error *err);
dg_status cu_elementwise(dg_backend_i *be, int dev, int stream, const dg_ew_desc *d,
                         dg_error *err);                            /* cuda_ew.c */
dg_status cu_reduce(dg_backend_i *be, int dev, int stream, const dg_reduce_desc *d,
                    dg_error *err);                                 /* cuda_reduce.c */
dg_status cu_reduce_parts(dg_backend_i *be, int dev, const dg_reduce_desc *d, int64_t *rows,
                          dg_error *err);                           /* cuda_reduce.c */
dg_status cu_scan(dg_backend_i *be, int dev, int stream, const dg_scan_desc *d,
                  dg_error *err);                                   /* cuda_scan.c */
dg_status cu_fill(dg_backend_i *be, int dev, int stream, const dg_fill_desc *d,
                  dg_error *err);                                   /* cuda_fill.c */
/* The index slots (cuda_index.c). */
dg_status cu_select(dg_backend_i *be, int dev, int stream, const dg_select_desc *d,
                    dg_error *err);
dg_status cu_rows(dg_backend_i *be, int dev, int stream, const dg_rows_desc *d, dg_error *err);
dg_status cu_route(dg_backend_i *be, int dev, int stream, const dg_route_desc *d,
                   dg_error *err);
dg_status cu_sort(dg_backend_i *be, int dev, int stream, const dg_sort_desc *d, dg_error *err);
/* cuda_surface.c */
dg_status cu_search(dg_backend_i *be, int dev, int stream, const dg_search_desc *d,
                    dg_error *err);
dg_status cu_count(dg_backend_i *be, int dev, int stream, const dg_count_desc *d, dg_error *err);
/* A copy with one side in host memory, on (dev, stream), dev being the
 * device side (cuda_hostcopy.c).  shape and strides are coalesced; st[0] are
 * the source strides, st[1] the destination's.  h2d: src is host memory, else
 * dst is.  Returns when the host memory is no longer needed: after the data
 * was packed into pinned staging (h2d), or after it arrived (d2h). */
dg_status cu_hc_copy(cu_be *b, int dev, int stream, int ndim, const int64_t *shape,
                     int64_t (*st)[DG_MAXDIM], int isz, const char *src, char *dst, int h2d,
                     dg_error *err);
/* Enqueues on s (a stream of the current device `dev`) the strided copy
 * kernel for the elements [base, base + count) of the C-order walk over
 * shape (st as above); either pointer may be a peer's (cuda_copy.c). */
dg_status cu_copy_kernel(cu_be *b, int dev, cudaStream_t s, int ndim, const int64_t *shape,
                         int64_t (*st)[DG_MAXDIM], int isz, const char *src, char *dst,
                         int64_t base, int64_t count, dg_error *err);
/* The row copy kernel for the whole of such a space where it applies (the
 * innermost axis dense on both sides, rows of 4-byte multiples at 4-byte
 * addresses): 1 and *ce the launch's result if it was launched, else 0. */
int cu_copy_rows(cu_be *b, int dev, cudaStream_t s, int ndim, const int64_t *shape,
                 int64_t (*st)[DG_MAXDIM], int isz, const char *src, char *dst,
                 cudaError_t *ce);
dg_status cu_gemm(dg_backend_i *be, int dev, int stream, const dg_gemm_desc *d,
                  dg_error *err);                                   /* cuda_gemm.c */
/* Destroys the cuBLAS handles and workspaces; b->blas NULL afterwards.
 * Called by destroy after every device was synchronised. */
void cu_gemm_destroy(cu_be *b);                                     /* cuda_gemm.c */
/* The dense and fft slots (cuda_dense.c: cuSOLVER, cuBLAS's trsm; cuda_fft.c:
 * cuFFT), and their teardown (handles, plans; b->solver / b->fft NULL
 * afterwards), called by destroy after every device was synchronised. */
dg_status cu_dense(dg_backend_i *be, int dev, int stream, const dg_dense_desc *d, dg_error *err);
dg_status cu_fft(dg_backend_i *be, int dev, int stream, const dg_fft_desc *d, dg_error *err);
void cu_dense_destroy(cu_be *b);
void cu_fft_destroy(cu_be *b);
/* Frees the host copy engine (threads, pinned buffers, events); b->hc NULL
 * afterwards.  Called by destroy after every device was synchronised. */
void cu_hc_destroy(cu_be *b);                                       /* cuda_hostcopy.c */

/* ---- floating-point errors (cuda_fpe.c) --------------------------------- */
/* Makes the records and gates of every device and sets the fpe_fold slot;
 * cu_fpe_destroy frees them (either may see a half-made one). */
dg_status cu_fpe_setup(cu_be *b, dg_error *err);
void cu_fpe_destroy(cu_be *b);
/* The dg_cu_fpe of a launch on dev now: zero where the calling thread's
 * action word is 0; `where` its loop id (or DG_CU_FPE_REDUCE). */
dg_cu_fpe cu_fpe_args(cu_be *b, int dev, int32_t where);

/* The exchange slot done by peer copies (cudaMemcpyPeerAsync on the
 * destination's transfer stream, ordered after the source's transfer stream
 * and before its later work): what exchange does when NCCL must not run
 * (cuda_copy.c). */
dg_status cu_exchange_copies(cu_be *b, const dg_xfer *x, int n, dg_error *err);

/* The exchange, allreduce and can_access slots (cuda_nccl.c). */
dg_status cu_exchange(dg_backend_i *be, const dg_xfer *x, int n, dg_error *err);
dg_status cu_allreduce(dg_backend_i *be, int stream, const dg_allreduce_desc *d,
                       dg_error *err);
int cu_can_access(dg_backend_i *be, int dev, int other);
/* Chooses the transport of exchanges (DGARRAY_TRANSFER, CUDA_LAUNCH_BLOCKING). */
dg_status cu_transfer_setup(cu_be *b, dg_error *err);
/* Tears the NCCL communicator down (if made); called by destroy after every
 * device was synchronised. */
void cu_nccl_destroy(cu_be *b);
/* [multihost] The join and transport slots, and the job communicator's
 * abort at destroy (cuda_transport.c). */
dg_status cu_join(dg_backend_i *be, dg_comm_i *comm, int first_gdev, int ngdev, dg_error *err);
dg_status cu_transport(dg_backend_i *be, const dg_pxfer *x, int n, dg_error *err);
void cu_job_destroy(cu_be *b);
dg_status cu_job_watch(dg_backend_i *be, double timeout_s, dg_error *err);

#endif /* DG_CUDA_INTERNAL_H */
