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

/* dg_ew_same::of[i]: the loop whose kernels loop i runs (dg_same_bits_loop),
 * for the dispatch at run time. */
template <class Seq> struct dg_ew_same_table;
template <size_t... I> struct dg_ew_same_table<std::index_sequence<I...> > {
    static constexpr int of[] = {dg_same_bits_loop((int)I)...};
};
typedef dg_ew_same_table<std::make_index_sequence<dg_ew_nloops> > dg_ew_same;

static_assert(DG_CU_EW_NPARTS == 6, "list every part below");
static_assert(dg_same_bits_valid(), "a loop would run kernels of another shape");

extern "C" {
extern const dg_cu_ew_entry *const dg_cu_ew_part_0, *const dg_cu_ew_part_1,
    *const dg_cu_ew_part_2, *const dg_cu_ew_part_3, *const dg_cu_ew_part_4,
    *const dg_cu_ew_part_5;

const int dg_cu_ew_nloops = dg_ew_nloops;
const dg_cu_ew_info *const dg_cu_ew_infos =
    dg_ew_info_table<std::make_index_sequence<dg_ew_nloops> >::infos;

int dg_cu_ew_kernels_of(int i)
{
    return i < 0 || i >= dg_ew_nloops ? -1 : dg_ew_same::of[i];
}

/* The kernels of loop i are those of loop j = dg_cu_ew_kernels_of(i), which
 * lives in part j % NPARTS at index j / NPARTS. */
const dg_cu_ew_entry *dg_cu_ew_entry_get(int i)
{
    static const dg_cu_ew_entry *const *const parts[DG_CU_EW_NPARTS] = {
        &dg_cu_ew_part_0, &dg_cu_ew_part_1, &dg_cu_ew_part_2,
        &dg_cu_ew_part_3, &dg_cu_ew_part_4, &dg_cu_ew_part_5};
    const int j = dg_cu_ew_kernels_of(i);
    if (j < 0)
        return NULL;
    return &(*parts[j % DG_CU_EW_NPARTS])[j / DG_CU_EW_NPARTS];
}
}
