/* Order keys of a block and their tests (see cpu_keys.h). */
#include <stdint.h>
#include <string.h>

#include "cpu_keys.h"

/* A function compiled twice, for x86-64's AVX2 and for the baseline the
 * library is built for (SSE2), the copy chosen once where the library loads
 * (gcc's target_clones: an ifunc resolved by the CPU's features); elsewhere
 * one copy. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__ELF__)
#define DG_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define DG_CPU_CLONES
#endif

/* The keys of a block of dtype sfx t, C type ct (dg_cpu_keys); a dense row
 * apart, so that its loop is vectorised. */
#define DG_CPU_KEYS_OF(E, t, ct)                                                 \
    DG_CPU_CLONES static int keys_##t(const char *s, int64_t m, int64_t ss, int wide, \
                                      uint32_t *k32, uint64_t *k64)              \
    {                                                                            \
        int64_t i;                                                               \
        if (sizeof(ct) <= 4 && !wide) {                                          \
            if (ss == (int64_t)sizeof(ct)) {                                     \
                for (i = 0; i < m; i++) {                                        \
                    ct v;                                                        \
                    memcpy(&v, s + i * (int64_t)sizeof v, sizeof v);             \
                    k32[i] = (uint32_t)dg_order_key_##t(v);                      \
                }                                                                \
            } else {                                                             \
                for (i = 0; i < m; i++) {                                        \
                    ct v;                                                        \
                    memcpy(&v, s + i * ss, sizeof v);                            \
                    k32[i] = (uint32_t)dg_order_key_##t(v);                      \
                }                                                                \
            }                                                                    \
            return 32;                                                           \
        }                                                                        \
        for (i = 0; i < m; i++) {                                                \
            ct v;                                                                \
            memcpy(&v, s + i * ss, sizeof v);                                    \
            k64[i] = dg_order_key_##t(v);                                        \
        }                                                                        \
        return 64;                                                               \
    }
DG_ORDER_KEYED(DG_CPU_KEYS_OF)
#undef DG_CPU_KEYS_OF

int dg_cpu_keys(int dtype, const char *s, int64_t m, int64_t ss, int wide, uint32_t *k32,
                uint64_t *k64)
{
    switch (dtype) {
#define DG_CPU_KEYS_CASE(E, t, ct)                                               \
    case DG_##E:                                                                 \
        return keys_##t(s, m, ss, wide, k32, k64);
        DG_ORDER_KEYED(DG_CPU_KEYS_CASE)
#undef DG_CPU_KEYS_CASE
    default:
        return 0;
    }
}

#define DG_CPU_KEYS_TEST(w)                                                      \
    DG_CPU_CLONES uint32_t dg_cpu_keys_test##w(const uint##w##_t *k, int64_t m, int ps,   \
                                               uint##w##_t lo, uint##w##_t span, uint8_t *in) \
    {                                                                            \
        uint32_t hits = 0;                                                       \
        int64_t i;                                                               \
        for (i = 0; i < m; i++) {                                                \
            const uint32_t a = ((k[i] >> ps) - lo) <= span;                      \
            in[i] = (uint8_t)a;                                                  \
            hits += a;                                                           \
        }                                                                        \
        return hits;                                                             \
    }
DG_CPU_KEYS_TEST(32)
DG_CPU_KEYS_TEST(64)
#undef DG_CPU_KEYS_TEST

DG_CPU_CLONES uint32_t dg_cpu_keys_bins32(const uint32_t *k, int64_t m, const dg_cpu_radix32 *r,
                                          uint32_t *bin, uint8_t *in)
{
    const uint32_t sh = r->sh, mk = r->mk, half = r->half, use2 = r->use2;
    const int ps1 = r->t1.ps, ps2 = r->t2.ps;
    const uint32_t lo1 = r->t1.lo, sp1 = r->t1.span, lo2 = r->t2.lo, sp2 = r->t2.span;
    uint32_t hits = 0;
    int64_t i;
    for (i = 0; i < m; i++) {
        const uint32_t a = ((k[i] >> ps1) - lo1) <= sp1;
        const uint32_t c = (((k[i] >> ps2) - lo2) <= sp2) & use2 & ~a;
        bin[i] = ((k[i] >> sh) & mk) + (half & (0u - c));
        in[i] = (uint8_t)(a | c);
        hits += a | c;
    }
    return hits;
}

DG_CPU_CLONES uint32_t dg_cpu_keys_bins64(const uint64_t *k, int64_t m, const dg_cpu_radix64 *r,
                                          uint64_t *bin, uint8_t *in)
{
    const int sh = r->sh, ps = r->ps;
    const uint64_t mk = r->mk, half = r->half, p1 = r->p1, p2 = r->p2;
    const uint32_t all = r->all != 0, use2 = r->use2 != 0;
    uint32_t hits = 0;
    int64_t i;
    for (i = 0; i < m; i++) {
        const uint32_t a = all | ((k[i] >> ps) == p1);
        const uint32_t c = ((k[i] >> ps) == p2) & use2 & ~a;
        bin[i] = ((k[i] >> sh) & mk) + (half & ((uint64_t)0 - c));
        in[i] = (uint8_t)(a | c);
        hits += a | c;
    }
    return hits;
}
