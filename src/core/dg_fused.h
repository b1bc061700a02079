/* The backend's fused elementwise work (dg_backend_i.fused): its descriptor.
 *
 * Included by dg_backend.h.  The core (dg_fuse.c) records a chain of
 * elementwise loops over the same iteration space of one device and hands
 * it over as one descriptor: a list of values (memory read, memory written,
 * scalars, or values that live only while the work runs) and a list of steps,
 * each one loop of DG_LOOP_LIST over some of those values.  The backend runs
 * the steps in order for every element; since an element's steps touch only
 * that element of each value (the core checked that every memory a step
 * writes is read and written by the chain through that same view alone),
 * the backend may cut the space in tiles and run every step over one tile
 * before the next (the CPU backend, cpu_fused.c), or run all the steps of
 * one element in one thread (a generated kernel). */
#ifndef DG_FUSED_H
#define DG_FUSED_H

#include <stdint.h>
#include "dg_box.h"

#define DG_FUSED_MAXSTEPS 32 /* loops of one fused piece of work */
#define DG_FUSED_MAXVALS 64  /* values of one fused piece of work */

/* What a value is (dg_fused_val.kind). */
typedef enum dg_fused_kind {
    DG_FV_IN,     /* read from memory (data, strides) */
    DG_FV_SCALAR, /* the same for every element (scalar, in dtype) */
    DG_FV_TEMP,   /* computed by a step, never stored: lives while the work runs */
    DG_FV_OUT     /* computed by a step and stored to memory (data, strides) */
} dg_fused_kind;

typedef struct dg_fused_val {
    int kind;  /* dg_fused_kind */
    int dtype; /* dg_dtype */
    char *data;
    int64_t strides[DG_MAXDIM]; /* bytes per step of each axis of the space */
    unsigned char scalar[16];
} dg_fused_val;

/* One loop: operands op[0 .. nin + nout) index the values, inputs first; each
 * has the loop's dtype (dg_loops[loop].dtypes).  An OUT or TEMP value is
 * written by exactly one step, before any step reads it. */
typedef struct dg_fused_step {
    int loop;
    int16_t op[4];
} dg_fused_step;

typedef struct dg_fused_desc {
    int ndim;
    int64_t shape[DG_MAXDIM];
    /* elements of all the pieces of the chain this one belongs to (0:
     * unknown): a piece that is small only because the chain was cut where
     * its operands come from several devices (a halo row) may run as the
     * large ones do (cuda_fused.c) */
    int64_t chain_elems;
    int nval;
    dg_fused_val val[DG_FUSED_MAXVALS];
    int nstep;
    dg_fused_step step[DG_FUSED_MAXSTEPS];
} dg_fused_desc;

/* For backends: d's space with its length-1 axes dropped and each axis
 * merged into the next inner one where every memory value steps over the
 * inner axis exactly once per outer step (d->ndim may become 0: one
 * element).  d is modified in place (dg_fused_src.c). */
void dg_fused_coalesce(dg_fused_desc *d);

#endif /* DG_FUSED_H */
