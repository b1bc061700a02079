/* The CUDA source of a fused chain (dg_fused_src.c): what a run-time
 * compiler (NVRTC, dg_rtc.h) turns into one kernel.
 *
 * The kernel is `dg_fused`, one thread per element in a grid-stride loop
 * (where the space is one axis over which every memory value is dense and
 * aligned, `vec` elements per thread, moved by one 16-byte access per
 * value);
 * it includes kernels/dg_scalar.h (the same scalar functions as every ahead-
 * of-time kernel and CPU loop, named by DG_LOOP_LIST) and takes one argument,
 * a block of 64-bit words (dg_fused_args) whose layout the source fixes:
 * word 0 the element count, then the space's extents, then per memory value
 * its address and its byte strides, then per scalar value two words of its
 * bytes.  The source is a function of the piece's key (dg_fused_key below:
 * the chain's loops, value kinds, dtypes and number of axes, the check, and
 * which kernel the piece's memory and extents call for), never of
 * addresses, extents or scalar values, so one compiled kernel serves every
 * chunk and every call of the same chain (tests/test_fused_key.py). */
#ifndef DG_FUSED_SRC_H
#define DG_FUSED_SRC_H

#include <stddef.h>
#include <stdint.h>
#include "dg_backend.h"

#define DG_FUSED_MAXWORDS 512 /* 4 KiB: the kernel parameter size every GPU takes */

typedef struct dg_fused_args {
    int nwords;
    int vec; /* elements a thread moves per access (1: the general kernel) */
    /* the row kernel (items > 0): tiles of items x blockDim.x elements of one
     * row (the last axis, cols long) per block, blocks (cols tiles, rows) */
    int items;
    int per_sm; /* the row kernel's blocks per SM in its launch */
    int64_t rows, cols;
    /* the streaming kernel (band > 0): threads walk down bands of `band`
     * rows, blocks (column tiles of items x blockDim.x, bands) */
    int band;
    /* the first of the 4 words of floating-point error noting, or -1: the
     * caller fills w[fpe_word..+3] with dg_cu_fpe's actions | gen << 32,
     * gate, record and where (src/backend/cuda/cu_kernels.h) */
    int fpe_word;
    uint64_t w[DG_FUSED_MAXWORDS];
} dg_fused_args;

/* The kernels (dg_fused_key.kernel). */
enum {
    DG_FUSED_GENERAL = 0, /* one thread per element, any space */
    DG_FUSED_CONTIG = 1,  /* one axis, dense and aligned memory: vec elements per access */
    DG_FUSED_ROWS = 2,    /* a long last axis: tiles of a row per block */
    DG_FUSED_STREAM = 3   /* 2 axes, inputs a few rows apart: bands of rows per thread */
};

/* A value as its piece's source sees it: kind and dtype; zero: memory of
 * stride 0 on every axis (read once: NumPy's power fast path, the contiguous
 * kernel's broadcast input); the streaming kernel's families
 * (stream_families in dg_fused_src.c): fam the anchor of the value's family
 * or -1, off its rows from the anchor, lo and hi (the anchor's) the
 * family's rows from it (all within +-4). */
typedef struct dg_fused_kval {
    int8_t kind, dtype, zero, fam, off, lo, hi, pad;
} dg_fused_kval;

/* Everything the source of a piece's kernel depends on (dg_fused_key_of):
 * the steps, the values' kinds and dtypes, the number of axes, the check,
 * and what the piece's strides, extents and addresses decide of the kernel
 * (which kernel, its elements per access or per thread, the tuning read
 * from DGARRAY_FUSED_ROWS, the families) -- never the addresses, extents,
 * strides or scalars themselves, which are argument words
 * (dg_fused_args_of).  Pieces of equal keys (memcmp: dg_fused_key_of
 * zeroes the unused bytes) have the same source byte for byte, so one
 * compiled kernel serves them all (cuda_fused.c's memo). */
typedef struct dg_fused_key {
    int ndim, nval, nstep, check;
    int kernel;        /* DG_FUSED_GENERAL .. DG_FUSED_STREAM */
    int vec;           /* CONTIG's elements per access, else 1 */
    int items, blocks; /* ROWS / STREAM: elements per thread; ROWS: launch bounds' blocks */
    int per_sm, rr;    /* ROWS: blocks per SM in the launch; STREAM: rows a step */
    dg_fused_kval val[DG_FUSED_MAXVALS];
    dg_fused_step step[DG_FUSED_MAXSTEPS];
} dg_fused_key;

/* *key of d (coalesced) checked as check_fpe says (dg_fused_cuda_source's).
 * Returns DG_OK, or DG_ERR_NOTIMPL where d needs more than
 * DG_FUSED_MAXWORDS argument words. */
dg_status dg_fused_key_of(const dg_fused_desc *d, int check_fpe, dg_fused_key *key,
                          dg_error *err);

/* *args of d, whose key is *key (dg_fused_key_of of d): the argument words
 * (addresses, extents, strides, scalars; the 4 words of error noting left
 * 0) and the launch's shape.  Cheap: what a launch of a known kernel costs
 * on the host. */
void dg_fused_args_of(const dg_fused_desc *d, const dg_fused_key *key, dg_fused_args *args);

/* Writes into buf (cap bytes, NUL-terminated) the source of the kernel of
 * key: a function of *key alone.  Returns DG_OK, or DG_ERR_NOTIMPL where it
 * is longer than cap. */
dg_status dg_fused_key_source(const dg_fused_key *key, char *buf, size_t cap, dg_error *err);

/* A hash of *key (FNV-1a's steps over its bytes, 8 at a time). */
uint64_t dg_fused_key_hash(const dg_fused_key *key);

/* Writes into buf (cap bytes, NUL-terminated) the source of the kernel of d,
 * whose space is taken as it is (coalesce it first), and fills *args with
 * d's addresses, extents and scalars.  check_fpe: 0 where the chain's
 * action word is 0 (dg_fpe.h): the source checks nothing; 1 where it is
 * not: each step's results are checked by the software rule of
 * kernels/dg_scalar.h (a second kernel of the chain); 2 where it watches
 * underflow too (a third: the test for tiny results costs a compare per
 * step where the others cost one in all).  Returns DG_OK, or DG_ERR_NOTIMPL where d does not fit a
 * kernel (more words than DG_FUSED_MAXWORDS, a source longer than cap).
 * The three above in turn. */
dg_status dg_fused_cuda_source(const dg_fused_desc *d, char *buf, size_t cap, int check_fpe,
                               dg_fused_args *args, dg_error *err);

#endif /* DG_FUSED_SRC_H */
