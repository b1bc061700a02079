/* Elementwise kernels of the loops i with i % DG_CU_EW_NPARTS == 0 (see ew.cuh). */
#define DG_EW_PART 0
#include "ew.cuh"
