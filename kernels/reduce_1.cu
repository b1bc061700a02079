/* Reduction kernels of the ops with op % DG_CU_RED_NPARTS == 1 (see reduce.cuh). */
#define DG_RED_PART 1
#include "reduce.cuh"
