/* Reduction kernels of the ops with op % DG_CU_RED_NPARTS == 5 (see reduce.cuh). */
#define DG_RED_PART 5
#include "reduce.cuh"
