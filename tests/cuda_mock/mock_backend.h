/* Stand-ins shared by the harnesses of tests/cuda_mock (gemm_mapping.c,
 * fft_mapping.c, dense_mapping.c): the few cudart calls and cuda_backend.c
 * functions that the file under test calls besides its library, on one
 * device, with host memory.  mock_backend.c defines them. */
#ifndef DG_MOCK_BACKEND_H
#define DG_MOCK_BACKEND_H

#include "cuda_internal.h"

/* Operations counted by cu_bump. */
extern int mock_bumps;

/* A pseudo-random number in [0, n) (xorshift: the same sequence every run). */
int64_t mock_rnd(int64_t n);

/* A backend of one device whose alloc and release are the host heap
 * (256-byte aligned, as the pools are); *b is filled, *dev its device. */
void mock_backend_init(cu_be *b, cu_dev *dev);

#endif /* DG_MOCK_BACKEND_H */
