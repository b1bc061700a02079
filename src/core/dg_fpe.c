/* Floating-point errors of device work (dg_fpe.h). */
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dg_fpe.h"

static _Thread_local uint32_t t_actions;
static atomic_uint_fast32_t g_noted;
static _Atomic(const char *) g_where;
static atomic_int g_soft = -1; /* -1: DGARRAY_FPE not read yet */

/* Sources (dg_fpe_add_source): added and removed when a backend starts and
 * ends, read at each take (the binding's calls, which those never overlap);
 * a slot's fn is set last and cleared first. */
static struct {
    _Atomic(dg_fpe_source_fn) fn;
    void *_Atomic ctx;
} g_src[DG_FPE_NSOURCES];

int dg_fpe_soft(void)
{
    int s = atomic_load_explicit(&g_soft, memory_order_relaxed);
    if (s < 0) {
        const char *e = getenv("DGARRAY_FPE");
        s = e != NULL && strcmp(e, "soft") == 0;
        atomic_store(&g_soft, s);
    }
    return s;
}

int dg_fpe_set_soft(int on)
{
    const int old = dg_fpe_soft();
    atomic_store(&g_soft, on != 0);
    return old;
}

int dg_fpe_add_source(dg_fpe_source_fn fold, void *ctx)
{
    int i;
    for (i = 0; i < DG_FPE_NSOURCES; i++)
        if (atomic_load(&g_src[i].fn) == NULL) {
            atomic_store(&g_src[i].ctx, ctx);
            atomic_store(&g_src[i].fn, fold);
            return 0;
        }
    return -1;
}

void dg_fpe_remove_source(dg_fpe_source_fn fold, void *ctx)
{
    int i;
    for (i = 0; i < DG_FPE_NSOURCES; i++)
        if (atomic_load(&g_src[i].fn) == fold && atomic_load(&g_src[i].ctx) == ctx) {
            atomic_store(&g_src[i].fn, NULL);
            atomic_store(&g_src[i].ctx, NULL);
        }
}

uint32_t dg_fpe_actions(void)
{
    return t_actions;
}

uint32_t dg_fpe_set_actions(uint32_t actions)
{
    const uint32_t old = t_actions;
    t_actions = actions;
    return old;
}

int dg_fpe_strict(uint32_t actions)
{
    int k;
    for (k = 0; k < DG_FPE_NKINDS; k++)
        if (((actions >> DG_FPE_SHIFT(k)) & 0xFu) > DG_FPE_WARN)
            return 1;
    return 0;
}

void dg_fpe_note(uint32_t actions, unsigned kinds, const char *where)
{
    uint32_t bits = 0;
    int k;
    for (k = 0; k < DG_FPE_NKINDS; k++) {
        const uint32_t act = (actions >> DG_FPE_SHIFT(k)) & 0xFu;
        if ((kinds & (1u << k)) && act != DG_FPE_IGNORE)
            bits |= 1u << (k * 8 + (int)act);
    }
    if (bits) {
        const char *none = NULL;
        atomic_compare_exchange_strong(&g_where, &none, where);
        atomic_fetch_or_explicit(&g_noted, bits, memory_order_acq_rel);
    }
}

uint32_t dg_fpe_take(const char **where)
{
    uint32_t w, dev = 0;
    const char *dwhere = NULL;
    int i;
    *where = NULL;
    for (i = 0; i < DG_FPE_NSOURCES; i++) {
        const dg_fpe_source_fn fn = atomic_load(&g_src[i].fn);
        if (fn)
            fn(atomic_load(&g_src[i].ctx), &dev, &dwhere);
    }
    if (!dev && !atomic_load_explicit(&g_noted, memory_order_acquire))
        return 0;
    w = (uint32_t)atomic_exchange_explicit(&g_noted, 0, memory_order_acq_rel) | dev;
    *where = atomic_exchange(&g_where, (const char *)NULL);
    if (!*where)
        *where = dwhere;
    if (!*where)
        *where = "a device loop";
    return w;
}
