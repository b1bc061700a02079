/* Order keys of a block of elements and tests of their prefixes, for the CPU
 * backend's radix count (cpu_surface.c) and keyed selection (cpu_index.c).
 *
 * Both loops go a block of at most DG_CPU_KEYS elements at a time: the
 * block's keys (kernels/dg_order.h) into a buffer, then each key's test and
 * bin with no branch on the data, then the work of the keys that pass
 * (a block of which none passes is not read again).  Keys of at most 32
 * bits are kept and tested in 32-bit arithmetic (dg_order_narrow), which
 * gcc vectorises; the functions here are compiled for AVX2 beside the
 * baseline on x86-64 and the copy is chosen when the library loads.
 *
 * Why: the one-loop versions had a branch per element (gcc made the float32
 * key's two cases and the prefix tests branches, the common case out of
 * line), and their speed followed their code's placement: a median of 2^16
 * float32 on 2 devices went from 371-377 to 403-417 us between two builds
 * whose loops had the same source (the select 13.4% -> 18.9% of the time),
 * and in a C harness the select of 2^15 float32 took 1.10 or 1.64 ns an
 * element, the count 1.37 to 1.66, by where the linker put them.  Blocked
 * (and with setup.py's CPU_LOOP_FLAGS), the select takes 0.45 ns with SSE2
 * and 0.26 with AVX2 where few are kept (a median's), 0.77 and 0.58 where
 * 2% to 13% are, the count 1.26 and 0.78, at every placement tried.  Every
 * buffer is the caller's; nothing here fails. */
#ifndef DG_CPU_KEYS_H
#define DG_CPU_KEYS_H

#include <stdint.h>

#include "dg_order.h"

/* Elements a block. */
#define DG_CPU_KEYS 256

/* A radix count's digit and prefixes in 32-bit arithmetic (keys of at most
 * 32 bits, at most 2^31 bins): a key passing t1 goes to bin
 * ((k >> sh) & mk), one passing t2 (and not t1; use2 0: none) to half +
 * that. */
typedef struct dg_cpu_radix32 {
    uint32_t sh, mk, half, use2;
    dg_order_test t1, t2;
} dg_cpu_radix32;

/* The same in 64 bits: a key whose prefix (k >> ps) is p1 (or any key with
 * all) to bin ((k >> sh) & mk), one whose prefix is p2 (use2) to half +
 * that. */
typedef struct dg_cpu_radix64 {
    int sh, ps, all, use2;
    uint64_t mk, half, p1, p2;
} dg_cpu_radix64;

/* The keys of m <= DG_CPU_KEYS elements of `dtype` at s, ss bytes apart:
 * into k32 where the dtype's keys are at most 32 bits wide and wide is 0
 * (returns 32), else into k64 (returns 64); 0 for a dtype without keys. */
int dg_cpu_keys(int dtype, const char *s, int64_t m, int64_t ss, int wide, uint32_t *k32,
                uint64_t *k64);

/* in[i]: whether key i of m has its prefix (k >> ps) - lo <= span (32-bit
 * keys: a dg_order_test's); returns how many do. */
uint32_t dg_cpu_keys_test32(const uint32_t *k, int64_t m, int ps, uint32_t lo, uint32_t span,
                            uint8_t *in);
uint32_t dg_cpu_keys_test64(const uint64_t *k, int64_t m, int ps, uint64_t lo, uint64_t span,
                            uint8_t *in);

/* bin[i] and in[i]: the bin of key i of m and whether it is counted (r);
 * returns how many are. */
uint32_t dg_cpu_keys_bins32(const uint32_t *k, int64_t m, const dg_cpu_radix32 *r,
                            uint32_t *bin, uint8_t *in);
uint32_t dg_cpu_keys_bins64(const uint64_t *k, int64_t m, const dg_cpu_radix64 *r,
                            uint64_t *bin, uint8_t *in);

#endif /* DG_CPU_KEYS_H */
