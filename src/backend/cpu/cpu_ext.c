/* The table of inner loops handed to the CPU backend (cpu_ext.h), and the
 * calls through them: masked runs and the reduce form. */
#include <string.h>

#include "cpu_ext.h"
#include "../../core/dg_dtype.h"
#include "../../core/dg_loops.h"
#include "../../core/dg_ufunc.h"

static dg_cpu_ext ext_loops[DG_NLOOPS];
static dg_cpu_ext_argfn ext_args[DG_NDTYPES][2];

int dg_cpu_ext_set_loop(int loop, dg_cpu_ext_loop fn, void *data, const void *identity)
{
    dg_cpu_ext *x;
    if (loop < 0 || loop >= DG_NLOOPS)
        return -1;
    x = &ext_loops[loop];
    memset(x, 0, sizeof *x);
    if (!fn)
        return 0;
    x->fn = fn;
    x->data = data;
    if (identity) {
        const int osz = dg_dtype_size(dg_loops[loop].dtypes[dg_loops[loop].nin]);
        memcpy(x->identity, identity, (size_t)osz);
        x->has_identity = 1;
    }
    return 0;
}

int dg_cpu_ext_set_arg(int dtype, int is_min, dg_cpu_ext_argfn fn)
{
    if (dtype < 0 || dtype >= DG_NDTYPES)
        return -1;
    ext_args[dtype][is_min != 0] = fn;
    return 0;
}

int dg_cpu_ext_count(void)
{
    int n = 0;
    for (int i = 0; i < DG_NLOOPS; i++)
        n += ext_loops[i].fn != NULL;
    return n;
}

const dg_cpu_ext *dg_cpu_ext_of(int loop)
{
    if (loop < 0 || loop >= DG_NLOOPS || !ext_loops[loop].fn)
        return NULL;
    return &ext_loops[loop];
}

dg_cpu_ext_argfn dg_cpu_ext_arg_of(int dtype, int is_min)
{
    if (dtype < 0 || dtype >= DG_NDTYPES)
        return NULL;
    return ext_args[dtype][is_min != 0];
}

/* One call of x over n elements from p[k] + off * s[k]. */
static void ext_call(const dg_cpu_ext *x, int nop, char *const *p, const intptr_t *st,
                     int64_t off, int64_t n)
{
    char *args[DG_MAXLOOPOPS];
    const intptr_t dims[1] = {(intptr_t)n};
    for (int k = 0; k < nop; k++)
        args[k] = p[k] + off * (int64_t)st[k];
    x->fn(args, dims, st, x->data);
}

void dg_cpu_ext_run(const dg_cpu_ext *x, int nop, char *const *p, const int64_t *s, int64_t n,
                    const char *w, int64_t ws)
{
    intptr_t st[DG_MAXLOOPOPS];
    for (int k = 0; k < nop; k++)
        st[k] = (intptr_t)s[k];
    if (w == NULL) {
        ext_call(x, nop, p, st, 0, n);
        return;
    }
    for (int64_t i = 0; i < n;) {
        int64_t j = i;
        while (j < n && w[j * ws])
            j++;
        if (j > i)
            ext_call(x, nop, p, st, i, j - i);
        while (j < n && !w[j * ws])
            j++;
        i = j;
    }
}

void dg_cpu_ext_fold(const dg_cpu_ext *x, char *acc, const char *src, int64_t s, int64_t n,
                     const char *w, int64_t ws)
{
    char *const p[3] = {acc, (char *)src, acc};
    const int64_t st[3] = {0, s, 0};
    if (n > 0)
        dg_cpu_ext_run(x, 3, p, st, n, w, ws);
}
