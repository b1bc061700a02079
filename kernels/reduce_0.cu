/* Reduction kernels of the ops with op % DG_CU_RED_NPARTS == 0 (see reduce.cuh). */
#define DG_RED_PART 0
#include "reduce.cuh"
