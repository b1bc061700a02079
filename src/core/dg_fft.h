/* The backend's discrete Fourier transforms (dg_backend_i.fft): its
 * descriptor.
 *
 * Included by dg_backend.h; the core (dg_fft_run.c) fills it for each chunk,
 * the CPU backend (cpu_fft.c: NumPy's own pocketfft loops, so that results
 * are NumPy's) and the CUDA backend (cuda_fft.c: cuFFT, plans cached) run
 * it. */
#ifndef DG_FFT_H
#define DG_FFT_H

#include <stdint.h>
#include "dg_box.h"

/* The kinds of transform (dg_fft_desc.kind). */
typedef enum dg_fft_kind {
    DG_FFT_C2C, /* complex -> complex, n points each way */
    DG_FFT_R2C, /* n reals -> n / 2 + 1 complex (forward) */
    DG_FFT_C2R  /* n / 2 + 1 complex -> n reals (backward; the imaginary
                   parts of the first point, and of the last for even n,
                   are ignored, as NumPy's irfft does) */
} dg_fft_kind;

#define DG_FFT_MAXRANK 3

/* A batch of unnormalised discrete Fourier transforms over `rank` axes
 * (1 <= rank <= DG_FFT_MAXRANK), each output point multiplied by `scale`:
 * forward sums with e^(-2 pi i j k / n), backward with e^(+2 pi i j k / n).
 * `dtype` is the complex dtype (complex64 or complex128); the real side of
 * R2C and C2R is its real dtype.  Transformed axis r has length n[r] (the
 * real length; for R2C / C2R the half axis is the last one, r = rank - 1,
 * holding n / 2 + 1 complex points) and byte strides src_strides[r],
 * dst_strides[r]; the batch is every index over batch[0..nbatch) at the byte
 * strides src_bs, dst_bs.  Axes are transformed from the last to the
 * first, except that C2R does the half axis last (NumPy's orders: rfftn,
 * irfftn); results agree with that order to rounding.  src and dst are on the device; src is not
 * modified; dst may be src itself (same addresses and strides, C2C only);
 * otherwise they do not overlap.  Every n[r] >= 1 and batch extent >= 1. */
typedef struct dg_fft_desc {
    int kind;
    int dtype;
    int forward; /* C2C: 1 forward, 0 backward (R2C is forward, C2R backward) */
    double scale;
    int rank;
    int64_t n[DG_FFT_MAXRANK];
    int nbatch;
    int64_t batch[DG_MAXDIM];
    const char *src;
    int64_t src_strides[DG_FFT_MAXRANK];
    int64_t src_bs[DG_MAXDIM];
    char *dst;
    int64_t dst_strides[DG_FFT_MAXRANK];
    int64_t dst_bs[DG_MAXDIM];
} dg_fft_desc;

#endif /* DG_FFT_H */
