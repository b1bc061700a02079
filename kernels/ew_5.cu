/* Elementwise kernels of the loops i with i % DG_CU_EW_NPARTS == 5 (see ew.cuh). */
#define DG_EW_PART 5
#include "ew.cuh"
