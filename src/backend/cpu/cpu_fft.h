/* The CPU backend's FFTs (the fft slot's work): NumPy's own pocketfft
 * loops, handed over by the binding. */
#ifndef DG_CPU_FFT_H
#define DG_CPU_FFT_H

#include "../../core/dg_backend.h"

/* NumPy's gufunc loops of numpy.fft._pocketfft_umath, in this order. */
typedef enum dg_cpu_fft_loop {
    DG_NPFFT_FFT,       /* fft:  (n),() -> (m), complex forward */
    DG_NPFFT_IFFT,      /* ifft: (m),() -> (n), complex backward */
    DG_NPFFT_RFFT_EVEN, /* rfft_n_even: (n),() -> (m), m = npts / 2 + 1, npts even */
    DG_NPFFT_RFFT_ODD,  /* rfft_n_odd: the same for odd npts */
    DG_NPFFT_IRFFT,     /* irfft: (m),() -> (n), n real points */
    DG_NPFFT_NLOOPS
} dg_cpu_fft_loop;

/* A generalised ufunc inner loop as NumPy calls it: args (input, factor,
 * output), dims (outer count, input core length, output core length),
 * steps (outer byte steps of the three, then the input's and output's core
 * byte steps), and the loop's data pointer. */
typedef void (*dg_npy_gufunc_loop)(char **args, const int64_t *dims, const int64_t *steps,
                                   void *data);

/* The loops and their data: [loop][p], p = 0 for float32 / complex64,
 * 1 for float64 / complex128. */
typedef struct dg_cpu_fft_loops {
    dg_npy_gufunc_loop fn[DG_NPFFT_NLOOPS][2];
    void *data[DG_NPFFT_NLOOPS][2];
} dg_cpu_fft_loops;

/* Makes the fft slot use these loops (copied; NULL: none, and the slot
 * raises DG_ERR_NOTIMPL).  Process-wide: call before any FFT is queued
 * (the binding does at import). */
void dg_cpu_fft_set_loops(const dg_cpu_fft_loops *loops);

/* 1 if loops were handed over. */
int dg_cpu_fft_available(void);

/* Bytes of host workspace the transform d needs (C2R over several axes:
 * its complex intermediate; a pass along a strided axis: two blocks of its
 * tiles, at most 4 MiB each), 0 for none. */
size_t dg_cpu_fft_work_bytes(const dg_fft_desc *d);

/* Runs `d` (dg_fft_desc in dg_fft.h) synchronously on the calling thread,
 * `work` holding dg_cpu_fft_work_bytes(d) bytes.  `d` is borrowed. */
void dg_cpu_fft_run(const dg_fft_desc *d, void *work);

#endif /* DG_CPU_FFT_H */
