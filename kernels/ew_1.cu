/* Elementwise kernels of the loops i with i % DG_CU_EW_NPARTS == 1 (see ew.cuh). */
#define DG_EW_PART 1
#include "ew.cuh"
