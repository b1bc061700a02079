/* Discrete Fourier transforms of distributed arrays (dg_fft_run.c): the
 * backend's fft slot where the transformed axes are whole in every chunk, a
 * reshard by the planner (slab decomposition) where they are not. */
#ifndef DG_FFT_RUN_H
#define DG_FFT_RUN_H

#include "dg_array.h"

/* One transform over `rank` distinct axes of the input, listed in NumPy's
 * order (numpy.fft.fftn's and rfftn's axes: the last listed is transformed
 * first; irfftn's: in the order listed; for R2C and C2R the last listed is
 * the half axis), with lengths n[r] (real lengths for the half axis), every
 * output point multiplied by `scale`. */
typedef struct dg_fft_call {
    int kind;    /* dg_fft_kind */
    int forward; /* C2C */
    double scale;
    int rank;
    int axes[DG_FFT_MAXRANK];
    int64_t n[DG_FFT_MAXRANK];
} dg_fft_call;

/* The transform c of a (REPLICA; complex64 / complex128, or float32 /
 * float64 for R2C), whose transformed axes have exactly the lengths the
 * transform reads (n[r]; n / 2 + 1 for the half axis of C2R: the caller
 * pads or slices first).  Axes whole in every chunk are transformed where
 * they are, as one batch per chunk; the others after a reshard to a layout
 * holding them whole (the longest axis not transformed, or else one
 * transformed already, split over the devices), so the result's layout is
 * that of the last step: not necessarily a's.  *out is new (complex, or the
 * real dtype for C2R). */
dg_status dg_array_fft(dg_array *a, const dg_fft_call *c, dg_array **out, dg_error *err);

#endif /* DG_FFT_RUN_H */
