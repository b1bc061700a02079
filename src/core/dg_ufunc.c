/* The ufunc and loop tables, generated from DG_UFUNC_LIST and DG_LOOP_LIST.
 *
 * Lookups rely on the order DG_LOOP_LIST promises (see dg_loops.h): loops
 * grouped by ufunc in ufunc-id order, casts first and from-major.  Both are
 * static facts of the list; dg_loop_first() finds a ufunc's group by binary
 * search, and the debug asserts below catch a list that breaks the order. */
#include <assert.h>
#include <string.h>

#include "dg_loops.h"
#include "dg_scalar.h"
#include "dg_ufunc.h"

#define DG_X_LOOP1(uf, ti, to, fn)                                            \
    {DG_UF_##uf, 1, 1, {DG_DT_##ti, DG_DT_##to, -1, -1}},
#define DG_X_LOOP2(uf, ta, tb, to, fn)                                        \
    {DG_UF_##uf, 2, 1, {DG_DT_##ta, DG_DT_##tb, DG_DT_##to, -1}},
#define DG_X_LOOP12(uf, ti, to0, to1, fn)                                     \
    {DG_UF_##uf, 1, 2, {DG_DT_##ti, DG_DT_##to0, DG_DT_##to1, -1}},
#define DG_X_LOOP22(uf, ta, tb, to0, to1, fn)                                 \
    {DG_UF_##uf, 2, 2, {DG_DT_##ta, DG_DT_##tb, DG_DT_##to0, DG_DT_##to1}},

const dg_loop_info dg_loops[] = {
    DG_LOOP_LIST(DG_X_LOOP1, DG_X_LOOP2, DG_X_LOOP12, DG_X_LOOP22)
};
const int dg_nloops = DG_NLOOPS;

#undef DG_X_LOOP1
#undef DG_X_LOOP2
#undef DG_X_LOOP12
#undef DG_X_LOOP22

_Static_assert(sizeof dg_loops / sizeof dg_loops[0] == DG_NLOOPS,
               "dg_loops[] and DG_NLOOPS disagree");

static const char *const dg_ufunc_names[DG_NUFUNCS] = {
#define DG_X_NAME(name, nin, nout) #name,
    DG_UFUNC_LIST(DG_X_NAME)
#undef DG_X_NAME
};

static const int8_t dg_ufunc_nins[DG_NUFUNCS] = {
#define DG_X_NIN(name, nin, nout) nin,
    DG_UFUNC_LIST(DG_X_NIN)
#undef DG_X_NIN
};

static const int8_t dg_ufunc_nouts[DG_NUFUNCS] = {
#define DG_X_NOUT(name, nin, nout) nout,
    DG_UFUNC_LIST(DG_X_NOUT)
#undef DG_X_NOUT
};

int dg_loop_fpe_cls(int loop)
{
    const dg_loop_info *li = &dg_loops[loop];
    const int nin = li->nin;
    return dg_fpe_cls(dg_ufunc_name(li->ufunc), dg_fpe_kind(li->dtypes[0]),
                      nin > 1 ? dg_fpe_kind(li->dtypes[1]) : 0, dg_fpe_kind(li->dtypes[nin]),
                      li->nout > 1 ? dg_fpe_kind(li->dtypes[nin + 1]) : 0);
}

const char *dg_ufunc_name(int ufunc)
{
    if (ufunc < 0 || ufunc >= DG_NUFUNCS)
        return NULL;
    return dg_ufunc_names[ufunc];
}

int dg_ufunc_nin(int ufunc)
{
    if (ufunc < 0 || ufunc >= DG_NUFUNCS)
        return 0;
    return dg_ufunc_nins[ufunc];
}

int dg_ufunc_nout(int ufunc)
{
    if (ufunc < 0 || ufunc >= DG_NUFUNCS)
        return 0;
    return dg_ufunc_nouts[ufunc];
}

/* Linear: called once per Python-level call at most, over ~90 short names. */
int dg_ufunc_find(const char *name)
{
    if (name == NULL)
        return -1;
    for (int u = 0; u < DG_NUFUNCS; u++)
        if (strcmp(dg_ufunc_names[u], name) == 0)
            return u;
    return -1;
}

/* Index of the first loop of `ufunc` (lower bound of the sorted groups). */
static int dg_loop_first(int ufunc)
{
    int lo = 0, hi = DG_NLOOPS;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (dg_loops[mid].ufunc < ufunc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int dg_loop_find(int ufunc, const int *dtypes)
{
    if (ufunc < 0 || ufunc >= DG_NUFUNCS || dtypes == NULL)
        return -1;
    int nop = dg_ufunc_nins[ufunc] + dg_ufunc_nouts[ufunc];
    for (int i = dg_loop_first(ufunc); i < DG_NLOOPS && dg_loops[i].ufunc == ufunc; i++) {
        int k = 0;
        while (k < nop && dg_loops[i].dtypes[k] == dtypes[k])
            k++;
        if (k == nop)
            return i;
    }
    return -1;
}

int dg_loop_cast(int from, int to)
{
    if (from < 0 || from >= DG_NDTYPES || to < 0 || to >= DG_NDTYPES)
        return -1;
    int id = from * DG_NDTYPES + to;
    assert(dg_loops[id].ufunc == DG_UF_cast && dg_loops[id].dtypes[0] == from
           && dg_loops[id].dtypes[1] == to);
    return id;
}
