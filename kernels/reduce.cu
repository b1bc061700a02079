/* The dispatch of the reduction kernels: from (kind, loop, dtype) to the op
 * number and the part (kernels/reduce_<k>.cu) that compiled its kernels
 * (see reduce.cuh). */
#include "reduce.cuh"

static_assert(DG_CU_RED_NPARTS == 6, "list every part below");
/* The op loop i reduces with: that of the loop whose kernels it runs
 * (dg_same_bits_loop) where it folds, else its own (which has no kernels:
 * the GPU does not reduce with it). */
constexpr int dg_red_op_of(int i)
{
    return dg_ew_foldable(i) ? dg_same_bits_loop(i) : i;
}

constexpr bool dg_red_ops_fold()
{
    for (int i = 0; i < dg_ew_nloops; i++)
        if (!dg_ew_foldable(dg_red_op_of(i)) && dg_ew_foldable(i))
            return false;
    return true;
}
static_assert(dg_red_ops_fold(), "a foldable loop runs the kernels of one that does not fold");

/* dg_red_ops::of[loop]: dg_red_op_of, for the dispatch at run time. */
template <class Seq> struct dg_red_op_table;
template <size_t... I> struct dg_red_op_table<std::index_sequence<I...> > {
    static constexpr int of[] = {dg_red_op_of((int)I)...};
};
typedef dg_red_op_table<std::make_index_sequence<dg_ew_nloops> > dg_red_ops;

extern "C" {
extern const dg_red_entry *const dg_cu_red_part_0, *const dg_cu_red_part_1,
    *const dg_cu_red_part_2, *const dg_cu_red_part_3, *const dg_cu_red_part_4,
    *const dg_cu_red_part_5;
}

/* The kernels of (kind, loop, dtype), or NULL where there are none. */
static const dg_red_entry *dg_red_find(int kind, int loop, int dtype)
{
    static const dg_red_entry *const *const parts[DG_CU_RED_NPARTS] = {
        &dg_cu_red_part_0, &dg_cu_red_part_1, &dg_cu_red_part_2,
        &dg_cu_red_part_3, &dg_cu_red_part_4, &dg_cu_red_part_5};
    int op;
    if (kind == DG_RED_LOOP) {
        if (loop < 0 || loop >= dg_ew_nloops)
            return NULL;
        op = dg_red_ops::of[loop];
    } else if (kind == DG_RED_ARGMAX || kind == DG_RED_ARGMIN) {
        if (dtype < 0 || dtype >= DG_NDTYPES)
            return NULL;
        op = dg_ew_nloops + (kind == DG_RED_ARGMIN ? DG_NDTYPES : 0) + dtype;
    } else {
        return NULL;
    }
    const dg_red_entry *e = &(*parts[op % DG_CU_RED_NPARTS])[op / DG_CU_RED_NPARTS];
    /* op != e->op: a part compiled from another list (a stale build) */
    return e->op == op && e->k[DG_RED_K_FINAL] != NULL ? e : NULL;
}

/* The kernel of pass `which`, variant vec, or NULL; its op and slot in
 * *op, *slot. */
static const void *dg_red_kernel_of(int kind, int loop, int dtype, int which, int vec, int *op,
                                    int *slot)
{
    const dg_red_entry *e = dg_red_find(kind, loop, dtype);
    int k;
    if (e == NULL || (vec != 1 && vec != e->vec))
        return NULL;
    switch (which) {
    case DG_CU_RED_INNER: k = vec > 1 ? DG_RED_K_INNERV : DG_RED_K_INNER1; break;
    case DG_CU_RED_OUTER: k = vec > 1 ? DG_RED_K_OUTERV : DG_RED_K_OUTER1; break;
    case DG_CU_RED_FINAL: k = DG_RED_K_FINAL; break;
    default: return NULL;
    }
    *op = e->op;
    *slot = k;
    return (const void *)e->k[k];
}

/* Blocks per multiprocessor of each kernel, once asked (0: not yet).  The
 * answer depends on the kernel's resources and the architecture only, the
 * same for every GPU of a build's target; a race writes the same value. */
static int dg_red_occ[dg_red_nops][DG_RED_NK];

extern "C" {
int dg_cu_red_vec(int kind, int loop, int dtype)
{
    const dg_red_entry *e = dg_red_find(kind, loop, dtype);
    return e == NULL ? 0 : e->vec;
}

cudaError_t dg_cu_red_launch(int kind, int loop, int dtype, int which, int vec,
                             const dg_cu_red *a, unsigned gx, unsigned gy, cudaStream_t s)
{
    int op, slot;
    const void *k = dg_red_kernel_of(kind, loop, dtype, which, vec, &op, &slot);
    void *args[] = {(void *)a};
    if (k == NULL)
        return cudaErrorInvalidValue;
    return cudaLaunchKernel(k, dim3(gx, gy), dim3(DG_CU_THREADS), args, 0, s);
}

cudaError_t dg_cu_red_occupancy(int kind, int loop, int dtype, int which, int vec,
                                int *blocks_per_sm)
{
    int op, slot;
    const void *k = dg_red_kernel_of(kind, loop, dtype, which, vec, &op, &slot);
    cudaError_t ce;
    if (k == NULL)
        return cudaErrorInvalidValue;
    if (dg_red_occ[op][slot] > 0) {
        *blocks_per_sm = dg_red_occ[op][slot];
        return cudaSuccess;
    }
    ce = cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, k, DG_CU_THREADS, 0);
    if (ce == cudaSuccess && *blocks_per_sm > 0)
        dg_red_occ[op][slot] = *blocks_per_sm;
    return ce;
}
}
