/* Elementwise kernels of the loops i with i % DG_CU_EW_NPARTS == 3 (see ew.cuh). */
#define DG_EW_PART 3
#include "ew.cuh"
