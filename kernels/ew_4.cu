/* Elementwise kernels of the loops i with i % DG_CU_EW_NPARTS == 4 (see ew.cuh). */
#define DG_EW_PART 4
#include "ew.cuh"
