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

#endif /* DG_CUDA_H */
