/* Floating-point errors of device work (dg_fpe.h). */
#include <stdatomic.h>
#include <stddef.h>

#include "dg_fpe.h"

static _Thread_local uint32_t t_actions;
static atomic_uint_fast32_t g_noted;
static _Atomic(const char *) g_where;

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
    uint32_t w;
    *where = NULL;
    if (!atomic_load_explicit(&g_noted, memory_order_acquire))
        return 0;
    w = (uint32_t)atomic_exchange_explicit(&g_noted, 0, memory_order_acq_rel);
    *where = atomic_exchange(&g_where, (const char *)NULL);
    if (!*where)
        *where = "a device loop";
    return w;
}
