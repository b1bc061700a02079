/* Elementwise kernels of the loops i with i % DG_CU_EW_NPARTS == 2 (see ew.cuh). */
#define DG_EW_PART 2
#include "ew.cuh"
