/* Matrix products of distributed arrays: contractions and their planner.
 *
 * Every product NumPy offers (matmul with its broadcasting, dot, inner,
 * outer, tensordot, vdot) is one contraction: an iteration space of output
 * axes and contracted axes, each axis of either operand following one of
 * them.  dg_array_contract computes it where the data lives; the planner
 * (dg_mm_plan_build, a pure function over layouts, tested apart from
 * execution through dgarray._core._matmul_plan) decides which device
 * computes which block and where the result's chunks live.  dg_matmul.c
 * describes the plan. */
#ifndef DG_MATMUL_H
#define DG_MATMUL_H

#include <stddef.h>
#include <stdint.h>
#include "dg_array.h"

/* out[o] = sum over the contracted index q of a[.] * b[.], where axis j of a
 * takes iteration index amap[j] (0..ndim-1: an output axis; ndim + q:
 * contracted axis q), and likewise b.  An operand axis of extent 1 following
 * an output axis of another extent is broadcast.  Every contracted axis is
 * followed by one axis of a and one of b of its extent; every output axis of
 * extent other than 1 by an axis of a or b of its extent. */
typedef struct dg_contract_call {
    int ndim;
    int64_t shape[DG_MAXDIM];
    int nk;
    int64_t kshape[DG_MAXDIM];
    int amap[DG_MAXDIM];
    int bmap[DG_MAXDIM];
    int allow_tf32;          /* float32 products may use TF32 tensor cores */
    size_t min_split_bytes;  /* for the layouts the core picks (dg_layout_default) */
} dg_contract_call;

/* What the planner assumes of the machine when it compares plans: one
 * device's product rate, one link's bandwidth, the fixed cost of a transfer
 * or of an extra partial result, and the work below which an output is not
 * split further among idle devices. */
typedef struct dg_mm_cost {
    double flop_rate;       /* flop/s */
    double link_bw;         /* bytes/s */
    double latency;         /* s */
    double min_split_flops; /* flop */
} dg_mm_cost;

/* GPU-like figures (50 TFLOP/s, 200 GB/s, 10 us, 1 GFLOP). */
extern const dg_mm_cost dg_mm_cost_default;

/* One product of a plan: the block `box` of the iteration space (output
 * axes, then contracted axes) computed on `device` into output chunk
 * `chunk`, overwriting it (`first`) or adding to it.  a_local / b_local: the
 * operand's block lies in one chunk on that device (else it is fetched). */
typedef struct dg_mm_task {
    int device;
    int chunk;
    int first;
    int a_local, b_local;
    dg_box box;
} dg_mm_task;

typedef struct dg_mm_plan {
    int mode;              /* DG_MODE_REPLICA, or DG_MODE_SUM when chunks overlap */
    int nchunks;
    dg_plan_chunk *chunks; /* the result's layout (owned) */
    int ntasks;
    dg_mm_task *tasks;     /* in execution order (owned); a chunk with none is 0 */
    int fallback;          /* 1: the layouts could not be tiled; output-stationary plan */
} dg_mm_plan;

/* Plans the contraction c of an operand with layout (al, na) and shape
 * a_shape (c's amap gives its ndim, a_ndim) by one with layout (bl, nb),
 * on `ndevices` devices, elements of `itemsize` bytes.  On success *plan owns
 * its arrays (dg_mm_plan_free); on failure it holds none. */
dg_status dg_mm_plan_build(const dg_contract_call *c, int ndevices, int itemsize,
                           const dg_plan_chunk *al, int na, int a_ndim, const int64_t *a_shape,
                           const dg_plan_chunk *bl, int nb, int b_ndim, const int64_t *b_shape,
                           const dg_mm_cost *cost, dg_mm_plan *plan, dg_error *err);

void dg_mm_plan_free(dg_mm_plan *plan);

/* Checks c against operands of these shapes (DG_ERR_VALUE naming the
 * first inconsistency). */
dg_status dg_contract_check(const dg_contract_call *c, int a_ndim, const int64_t *a_shape,
                            int b_ndim, const int64_t *b_shape, dg_error *err);

/* The contraction c of a and b (REPLICA, same dtype): a new array in that
 * dtype with the plan's layout, in SUM mode when partial results overlap.
 * Borrowed a and b; new reference in *out. */
dg_status dg_array_contract(dg_array *a, dg_array *b, const dg_contract_call *c,
                            dg_array **out, dg_error *err);

#endif /* DG_MATMUL_H */
