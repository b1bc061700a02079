/* The table of elementwise loops: what the kernels know of each loop (operand
 * sizes, vector width) and the dispatch from a loop id to the launchers
 * compiled in kernels/ew_<k>.cu. */
#include "ew.cuh"

template <class L> constexpr dg_cu_ew_info dg_ew_info()
{
    typedef dg_ew_traits<L> T;
    return dg_cu_ew_info{L::NAME,
                         (int8_t)L::NIN,
                         (int8_t)L::NOUT,
                         (int8_t)T::vec,
                         {(int8_t)T::s0, (int8_t)T::s1, (int8_t)T::s2, (int8_t)T::s3}};
}

template <class Seq> struct dg_ew_info_table;
template <size_t... I> struct dg_ew_info_table<std::index_sequence<I...> > {
    static constexpr dg_cu_ew_info infos[] = {dg_ew_info<dg_ew_loop<(int)I> >()...,
                                              dg_cu_ew_info{NULL, 0, 0, 0, {0, 0, 0, 0}}};
};

static_assert(DG_CU_EW_NPARTS == 6, "list every part below");

extern "C" {
extern const dg_cu_ew_entry *const dg_cu_ew_part_0, *const dg_cu_ew_part_1,
    *const dg_cu_ew_part_2, *const dg_cu_ew_part_3, *const dg_cu_ew_part_4,
    *const dg_cu_ew_part_5;

const int dg_cu_ew_nloops = dg_ew_nloops;
const dg_cu_ew_info *const dg_cu_ew_infos =
    dg_ew_info_table<std::make_index_sequence<dg_ew_nloops> >::infos;

/* Loop i lives in part i % NPARTS at index i / NPARTS. */
const dg_cu_ew_entry *dg_cu_ew_entry_get(int i)
{
    static const dg_cu_ew_entry *const *const parts[DG_CU_EW_NPARTS] = {
        &dg_cu_ew_part_0, &dg_cu_ew_part_1, &dg_cu_ew_part_2,
        &dg_cu_ew_part_3, &dg_cu_ew_part_4, &dg_cu_ew_part_5};
    if (i < 0 || i >= dg_ew_nloops)
        return NULL;
    return &(*parts[i % DG_CU_EW_NPARTS])[i / DG_CU_EW_NPARTS];
}
}
