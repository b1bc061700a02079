/* Reduction kernels of the ops with op % DG_CU_RED_NPARTS == 3 (see reduce.cuh). */
#define DG_RED_PART 3
#include "reduce.cuh"
