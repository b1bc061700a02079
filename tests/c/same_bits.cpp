/* Checks kernels/dg_same_bits.h on the host: for every loop i that runs the
 * kernels of another loop j, loop i's scalar function (kernels/dg_scalar.h)
 * and loop j's give the same output bytes on the same input bytes: every
 * input when the inputs hold 2 bytes or fewer, else every pair of edge
 * values (0, 1, powers of two and their neighbours, the extremes, all ones)
 * and pseudo-random values.  Built and run by tests/test_same_bits.py.
 *
 *   same_bits            every pair of the header; prints "pairs N values M
 *                        mismatches K" and exits 1 on a mismatch
 *   same_bits --unlike   pairs of the same sizes that must differ, which
 *                        the check must tell apart (that it can fail):
 *                        exits 0 when each of them shows mismatches */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "dg_same_bits.h"
#include "dg_scalar.h"

/* Runs loop I on input bytes x, y (y unused by one input) into r0, r1. */
typedef void (*dg_sb_call)(const unsigned char *x, const unsigned char *y, unsigned char *r0,
                           unsigned char *r1);

template <int I> struct dg_sb_loop;

enum { dg_sb_counter_base = __COUNTER__ };
#define DG_SB_IDX (__COUNTER__ - dg_sb_counter_base - 1)

/* `run` is a template so that only the loops the check calls are compiled. */
#define DG_SBT_1(u, a, o, fn)                                                    \
    template <> struct dg_sb_loop<DG_SB_IDX> {                                   \
        template <int = 0>                                                       \
        static void run(const unsigned char *x, const unsigned char *, unsigned char *r0, \
                        unsigned char *)                                         \
        {                                                                        \
            dg_ct_##a A;                                                         \
            std::memcpy(&A, x, sizeof A);                                        \
            const dg_ct_##o R = fn(A);                                           \
            std::memcpy(r0, &R, sizeof R);                                       \
        }                                                                        \
    };
#define DG_SBT_2(u, a, b, o, fn)                                                 \
    template <> struct dg_sb_loop<DG_SB_IDX> {                                   \
        template <int = 0>                                                       \
        static void run(const unsigned char *x, const unsigned char *y, unsigned char *r0, \
                        unsigned char *)                                         \
        {                                                                        \
            dg_ct_##a A;                                                         \
            dg_ct_##b B;                                                         \
            std::memcpy(&A, x, sizeof A);                                        \
            std::memcpy(&B, y, sizeof B);                                        \
            const dg_ct_##o R = fn(A, B);                                        \
            std::memcpy(r0, &R, sizeof R);                                       \
        }                                                                        \
    };
#define DG_SBT_12(u, a, o0, o1, fn)                                              \
    template <> struct dg_sb_loop<DG_SB_IDX> {                                   \
        template <int = 0>                                                       \
        static void run(const unsigned char *x, const unsigned char *, unsigned char *r0, \
                        unsigned char *r1)                                       \
        {                                                                        \
            dg_ct_##a A;                                                         \
            dg_ct_##o0 R0;                                                       \
            dg_ct_##o1 R1;                                                       \
            std::memcpy(&A, x, sizeof A);                                        \
            fn(A, &R0, &R1);                                                     \
            std::memcpy(r0, &R0, sizeof R0);                                     \
            std::memcpy(r1, &R1, sizeof R1);                                     \
        }                                                                        \
    };
#define DG_SBT_22(u, a, b, o0, o1, fn)                                           \
    template <> struct dg_sb_loop<DG_SB_IDX> {                                   \
        template <int = 0>                                                       \
        static void run(const unsigned char *x, const unsigned char *y, unsigned char *r0, \
                        unsigned char *r1)                                       \
        {                                                                        \
            dg_ct_##a A;                                                         \
            dg_ct_##b B;                                                         \
            dg_ct_##o0 R0;                                                       \
            dg_ct_##o1 R1;                                                       \
            std::memcpy(&A, x, sizeof A);                                        \
            std::memcpy(&B, y, sizeof B);                                        \
            fn(A, B, &R0, &R1);                                                  \
            std::memcpy(r0, &R0, sizeof R0);                                     \
            std::memcpy(r1, &R1, sizeof R1);                                     \
        }                                                                        \
    };
DG_LOOP_LIST(DG_SBT_1, DG_SBT_2, DG_SBT_12, DG_SBT_22)
#undef DG_SBT_1
#undef DG_SBT_2
#undef DG_SBT_12
#undef DG_SBT_22

/* Loop I's caller where it shares kernels (either side of a pair) or may be
 * one of the --unlike pairs (integer and bool loops, maximum and fmax),
 * else none. */
template <int I> constexpr dg_sb_call dg_sb_pick()
{
    constexpr int J = dg_same_bits_loop(I);
    constexpr const dg_sb_sig &s = dg_sb_sigs[I];
    constexpr bool intlike = dg_sb_kinds[s.d[0]] == 'b' || dg_sb_kinds[s.d[0]] == 'i' ||
                             dg_sb_kinds[s.d[0]] == 'u';
    if constexpr (J != I || intlike || s.uf == DG_UF_maximum || s.uf == DG_UF_fmax)
        return &dg_sb_loop<I>::template run<>;
    else
        return nullptr;
}

template <size_t... I>
static std::vector<dg_sb_call> dg_sb_calls(std::index_sequence<I...>)
{
    return {dg_sb_pick<(int)I>()...};
}

/* Edge values of n bytes, then pseudo-random ones. */
static std::vector<uint64_t> dg_sb_values(int n, uint64_t &seed)
{
    const uint64_t mask = n == 8 ? ~(uint64_t)0 : (((uint64_t)1 << (8 * n)) - 1);
    std::vector<uint64_t> v;
    for (int b = 0; b < 8 * n; b++) {
        const uint64_t p = (uint64_t)1 << b;
        v.push_back(p & mask);
        v.push_back((p - 1) & mask);
        v.push_back((p + 1) & mask);
        v.push_back((0 - p) & mask); /* -p */
        v.push_back((0 - p - 1) & mask);
    }
    v.push_back(0);
    v.push_back(mask);
    for (int k = 0; k < 64; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        v.push_back((seed >> 11) & mask);
    }
    return v;
}

/* Compares loops i and j over inputs; returns the mismatches (the first few
 * printed), counting the values tried in *tried. */
static long dg_sb_compare(const std::vector<dg_sb_call> &calls, int i, int j, long *tried)
{
    const dg_sb_sig &s = dg_sb_sigs[i];
    const int n0 = dg_sb_sizes[s.d[0]], n1 = s.nin > 1 ? dg_sb_sizes[s.d[1]] : 0;
    const int o0 = dg_sb_sizes[s.d[s.nin]], o1 = s.nout > 1 ? dg_sb_sizes[s.d[s.nin + 1]] : 0;
    uint64_t seed = 12345;
    std::vector<uint64_t> xs, ys;
    long bad = 0;
    if (n0 + n1 <= 2) {
        for (uint64_t x = 0; x < ((uint64_t)1 << (8 * n0)); x++)
            xs.push_back(x);
        for (uint64_t y = 0; y < ((uint64_t)1 << (8 * n1)); y++)
            ys.push_back(y);
    } else {
        xs = dg_sb_values(n0, seed);
        ys = n1 ? dg_sb_values(n1, seed) : std::vector<uint64_t>{0};
    }
    for (uint64_t x : xs)
        for (uint64_t y : ys) {
            unsigned char a[2][16] = {{0}}, b[2][16] = {{0}};
            calls[i]((const unsigned char *)&x, (const unsigned char *)&y, a[0], a[1]);
            calls[j]((const unsigned char *)&x, (const unsigned char *)&y, b[0], b[1]);
            ++*tried;
            if (std::memcmp(a[0], b[0], o0) != 0 || std::memcmp(a[1], b[1], o1) != 0) {
                if (bad++ < 3)
                    std::printf("loop %d and loop %d differ at inputs %#llx, %#llx\n", i, j,
                                (unsigned long long)x, (unsigned long long)y);
            }
        }
    return bad;
}

int main(int argc, char **argv)
{
    const std::vector<dg_sb_call> calls =
        dg_sb_calls(std::make_index_sequence<(size_t)dg_sb_nloops>());
    long pairs = 0, tried = 0, bad = 0;
    if (argc == 2 && std::strcmp(argv[1], "--unlike") == 0) {
        /* sign-sensitive ops, a widening cast, NaN-aware fmax */
        const int B = -1, i1 = DG_INT8, u1 = DG_UINT8, i4 = DG_INT32, u4 = DG_UINT32;
        const int unlike[][2][5] = {
            {{DG_UF_right_shift, i4, i4, i4, B}, {DG_UF_right_shift, u4, u4, u4, B}},
            {{DG_UF_maximum, i1, i1, i1, B}, {DG_UF_maximum, u1, u1, u1, B}},
            {{DG_UF_cast, i1, i4, B, B}, {DG_UF_cast, u1, u4, B, B}},
            {{DG_UF_floor_divide, i1, i1, i1, B}, {DG_UF_floor_divide, u1, u1, u1, B}},
            {{DG_UF_fmax, DG_FLOAT32, DG_FLOAT32, DG_FLOAT32, B},
             {DG_UF_maximum, DG_FLOAT32, DG_FLOAT32, DG_FLOAT32, B}}};
        for (const auto &p : unlike) {
            const int da[4] = {p[0][1], p[0][2], p[0][3], p[0][4]};
            const int db[4] = {p[1][1], p[1][2], p[1][3], p[1][4]};
            const int nin = p[0][0] == DG_UF_cast ? 1 : 2;
            const int i = dg_sb_find(p[0][0], nin, da), j = dg_sb_find(p[1][0], nin, db);
            long t = 0;
            if (i < 0 || j < 0 || !calls[i] || !calls[j] || dg_sb_compare(calls, i, j, &t) == 0) {
                std::printf("loops %d and %d: no mismatch found\n", i, j);
                return 1;
            }
            pairs++;
        }
        std::printf("unlike pairs %ld told apart\n", pairs);
        return 0;
        } else {
        for (int i = 0; i < dg_sb_nloops; i++) {
            const int j = dg_same_bits_loop(i);
            if (j == i)
                continue;
            pairs++;
            bad += dg_sb_compare(calls, i, j, &tried);
        }
    }
    std::printf("pairs %ld values %ld mismatches %ld\n", pairs, tried, bad);
    return bad ? 1 : 0;
}
