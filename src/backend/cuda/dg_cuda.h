/* The CUDA backend's one entry point (src/backend/cuda).
 *
 * dgarray._cuda hands this function to the core as the PyCapsule
 * "dgarray._cuda.backend_create", so that the core never links cudart. */
#ifndef DG_CUDA_H
#define DG_CUDA_H

#include "dg_backend.h"

/* The CUDA backend over the first `ndevices` GPUs (ndevices <= 0: all of
 * them, or the logical devices DGARRAY_CUDA_DEVICES lists, e.g. "0,0,0,0"
 * for four on GPU 0): per device a compute and a transfer stream, a
 * stream-ordered memory pool, peer access between every pair that allows it.  New reference in *out
 * (release with (*out)->destroy).  No GPU or no driver: DG_ERR_DEVICE; more
 * GPUs asked than present: DG_ERR_VALUE. */
dg_status dg_cuda_backend_create(int ndevices, dg_backend_i **out, dg_error *err);

typedef dg_status (*dg_backend_create_fn)(int ndevices, dg_backend_i **out, dg_error *err);

/* Page-locks (pin 1: cudaHostRegister, portable) or unlocks (pin 0) the n
 * bytes at p, host memory the caller owns, so that host copies to and from
 * it run as one DMA (cuda_hostcopy.c); be is a CUDA backend of
 * dg_cuda_backend_create that outlives every call (a registration is made
 * in a context of its first device).  1 on success, 0 if the driver
 * refused (nothing changed, no error left pending).  Handed to the binding
 * as the PyCapsule "dgarray._cuda.host_pin" (src/py/hostmem.c). */
int dg_cuda_host_pin(dg_backend_i *be, void *p, size_t n, int pin);

typedef int (*dg_host_pin_fn)(dg_backend_i *be, void *p, size_t n, int pin);

#endif /* DG_CUDA_H */
