/* Reduction kernels of the ops with op % DG_CU_RED_NPARTS == 4 (see reduce.cuh). */
#define DG_RED_PART 4
#include "reduce.cuh"
