/* Reduction kernels of the ops with op % DG_CU_RED_NPARTS == 2 (see reduce.cuh). */
#define DG_RED_PART 2
#include "reduce.cuh"
