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
 * bytes.  The source depends on the chain's loops, value kinds, dtypes and
 * number of axes, and on whether the memory is dense and aligned (two
 * kernels at most), never on addresses, extents or scalar values, so one
 * compiled kernel serves every chunk and every call of the same chain. */
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

/* Writes into buf (cap bytes, NUL-terminated) the source of the kernel of d,
 * whose space is taken as it is (coalesce it first), and fills *args with
 * d's addresses, extents and scalars.  check_fpe: 0 where the chain's
 * action word is 0 (dg_fpe.h): the source checks nothing; 1 where it is
 * not: each step's results are checked by the software rule of
 * kernels/dg_scalar.h (a second kernel of the chain); 2 where it watches
 * underflow too (a third: the test for tiny results costs a compare per
 * step where the others cost one in all).  Returns DG_OK, or DG_ERR_NOTIMPL where d does not fit a
 * kernel (more words than DG_FUSED_MAXWORDS, a source longer than cap). */
dg_status dg_fused_cuda_source(const dg_fused_desc *d, char *buf, size_t cap, int check_fpe,
                               dg_fused_args *args, dg_error *err);

#endif /* DG_FUSED_SRC_H */
