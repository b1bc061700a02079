/* Loops of DG_LOOP_LIST whose kernels would compute the same bytes.
 *
 * dg_same_bits_loop(i) is a loop j with the operand sizes of loop i whose
 * scalar function (kernels/dg_scalar.h) gives, for every input, the same
 * bytes as loop i's on the same bytes read as j's dtypes; j is i where no
 * rule below applies.  The CUDA build compiles kernels for the loops j only
 * (elementwise, reductions, scans): a loop i runs loop j's kernels on its
 * own operands (same sizes, so the same addresses and vector widths).  The
 * rules, each a fact of two's complement and of NumPy's bool:
 *   - integer ufuncs blind to the sign (add, subtract, multiply, negative,
 *     positive, conjugate, square, floor, ceil, trunc, the bitwise and
 *     logical ufuncs, invert, left_shift, equal, not_equal, isfinite,
 *     isinf, isnan) of a signed type: the unsigned type of its size;
 *   - fmax and fmin of integers (there is no NaN): maximum and minimum;
 *   - a bool-only loop whose value is the or, the and, the xor or the not
 *     of its inputs' truth (add, maximum, fmax, bitwise_or; multiply,
 *     minimum, fmin, bitwise_and; bitwise_xor, not_equal; invert) or its
 *     input's truth (absolute, floor, ceil, trunc): logical_or,
 *     logical_and, logical_xor, logical_not, cast to bool;
 *   - casts between bool and integers: to an integer, the unsigned type of
 *     its size (the same low bits), from a signed integer to bool or to one
 *     no wider, the unsigned type of its size (only widening sign-extends).
 * tests/test_same_bits.py runs both scalar functions of every pair on the
 * host over edge values and every 1-byte pair and compares their bytes.
 *
 * C++17 only (constexpr: the kernels choose their instantiations with it). */
#ifndef DG_SAME_BITS_H
#define DG_SAME_BITS_H

#include "dg_dtype.h"
#include "dg_loops.h"
#include "dg_ufunc.h"

/* A loop: its ufunc, inputs, outputs and dtypes (-1 past nin + nout). */
struct dg_sb_sig {
    int uf, nin, nout;
    int d[4];
};

#define DG_SB_1(u, a, o, fn) {DG_UF_##u, 1, 1, {DG_DT_##a, DG_DT_##o, -1, -1}},
#define DG_SB_2(u, a, b, o, fn) {DG_UF_##u, 2, 1, {DG_DT_##a, DG_DT_##b, DG_DT_##o, -1}},
#define DG_SB_12(u, a, o0, o1, fn) {DG_UF_##u, 1, 2, {DG_DT_##a, DG_DT_##o0, DG_DT_##o1, -1}},
#define DG_SB_22(u, a, b, o0, o1, fn)                                          \
    {DG_UF_##u, 2, 2, {DG_DT_##a, DG_DT_##b, DG_DT_##o0, DG_DT_##o1}},
inline constexpr dg_sb_sig dg_sb_sigs[] = {DG_LOOP_LIST(DG_SB_1, DG_SB_2, DG_SB_12, DG_SB_22)};
#undef DG_SB_1
#undef DG_SB_2
#undef DG_SB_12
#undef DG_SB_22
inline constexpr int dg_sb_nloops = (int)(sizeof dg_sb_sigs / sizeof dg_sb_sigs[0]);

#define DG_SB_KIND(E, t, ct, sz, ch, nm, kd) kd,
inline constexpr char dg_sb_kinds[] = {DG_DTYPE_LIST(DG_SB_KIND)};
#undef DG_SB_KIND
#define DG_SB_SIZE(E, t, ct, sz, ch, nm, kd) sz,
inline constexpr int dg_sb_sizes[] = {DG_DTYPE_LIST(DG_SB_SIZE)};
#undef DG_SB_SIZE

/* The unsigned integer dtype of dtype d's size. */
constexpr int dg_sb_unsigned(int d)
{
    for (int u = 0; u < DG_NDTYPES; u++)
        if (dg_sb_kinds[u] == 'u' && dg_sb_sizes[u] == dg_sb_sizes[d])
            return u;
    return -1;
}

/* dg_sb_first.at[uf]: the first loop of ufunc uf (the list groups the loops
 * by ufunc), so that a search looks at one ufunc's loops only. */
struct dg_sb_firsts {
    int at[DG_NUFUNCS];
};
constexpr dg_sb_firsts dg_sb_first_loops()
{
    dg_sb_firsts f{};
    for (int u = 0; u < DG_NUFUNCS; u++)
        f.at[u] = dg_sb_nloops;
    for (int j = dg_sb_nloops - 1; j >= 0; j--)
        f.at[dg_sb_sigs[j].uf] = j;
    return f;
}
inline constexpr dg_sb_firsts dg_sb_first = dg_sb_first_loops();

/* The loop of ufunc uf with nin inputs and dtypes d, or -1. */
constexpr int dg_sb_find(int uf, int nin, const int (&d)[4])
{
    for (int j = dg_sb_first.at[uf]; j < dg_sb_nloops && dg_sb_sigs[j].uf == uf; j++) {
        const dg_sb_sig &s = dg_sb_sigs[j];
        if (s.nin == nin && s.d[0] == d[0] && s.d[1] == d[1] && s.d[2] == d[2] && s.d[3] == d[3])
            return j;
    }
    return -1;
}

/* Ufuncs whose integer loops compute the same bits for a signed type as for
 * the unsigned one of its size. */
constexpr bool dg_sb_sign_blind(int uf)
{
    switch (uf) {
    case DG_UF_add: case DG_UF_subtract: case DG_UF_multiply: case DG_UF_negative:
    case DG_UF_positive: case DG_UF_conjugate: case DG_UF_square: case DG_UF_floor:
    case DG_UF_ceil: case DG_UF_trunc: case DG_UF_bitwise_and: case DG_UF_bitwise_or:
    case DG_UF_bitwise_xor: case DG_UF_invert: case DG_UF_left_shift: case DG_UF_equal:
    case DG_UF_not_equal: case DG_UF_logical_and: case DG_UF_logical_or:
    case DG_UF_logical_xor: case DG_UF_logical_not: case DG_UF_isfinite: case DG_UF_isinf:
    case DG_UF_isnan:
        return true;
    default:
        return false;
    }
}

/* The ufunc computing what uf computes on bools (uf itself if none listed). */
constexpr int dg_sb_bool_uf(int uf)
{
    switch (uf) {
    case DG_UF_add: case DG_UF_maximum: case DG_UF_fmax: case DG_UF_bitwise_or:
        return DG_UF_logical_or;
    case DG_UF_multiply: case DG_UF_minimum: case DG_UF_fmin: case DG_UF_bitwise_and:
        return DG_UF_logical_and;
    case DG_UF_bitwise_xor: case DG_UF_not_equal:
        return DG_UF_logical_xor;
    case DG_UF_invert:
        return DG_UF_logical_not;
    case DG_UF_absolute: case DG_UF_floor: case DG_UF_ceil: case DG_UF_trunc:
        return DG_UF_cast;
    default:
        return uf;
    }
}

/* See the file comment; -1 where a rule names a loop the list lacks. */
constexpr int dg_same_bits_loop(int i)
{
    const dg_sb_sig &s = dg_sb_sigs[i];
    const int n = s.nin + s.nout, t = s.d[0];
    int d[4] = {s.d[0], s.d[1], s.d[2], s.d[3]};
    bool all_bool = true;
    for (int k = 0; k < n; k++)
        all_bool = all_bool && d[k] == DG_BOOL;
    if (s.uf == DG_UF_cast) {
        const char kf = dg_sb_kinds[d[0]], kt = dg_sb_kinds[d[1]];
        if ((kf != 'b' && kf != 'i' && kf != 'u') || (kt != 'b' && kt != 'i' && kt != 'u'))
            return i;
        if (kf == 'i' && (kt == 'b' || dg_sb_sizes[d[0]] >= dg_sb_sizes[d[1]]))
            d[0] = dg_sb_unsigned(d[0]);
        if (kt == 'i')
            d[1] = dg_sb_unsigned(d[1]);
        return dg_sb_find(s.uf, s.nin, d);
    }
    if (all_bool)
        return dg_sb_bool_uf(s.uf) == s.uf ? i : dg_sb_find(dg_sb_bool_uf(s.uf), s.nin, d);
    if (dg_sb_kinds[t] != 'i' && dg_sb_kinds[t] != 'u')
        return i;
    /* one integer dtype for every operand, bool outputs allowed */
    for (int k = 0; k < n; k++)
        if (d[k] != t && !(k >= s.nin && d[k] == DG_BOOL))
            return i;
    if (s.uf == DG_UF_fmax || s.uf == DG_UF_fmin)
        return dg_sb_find(s.uf == DG_UF_fmax ? DG_UF_maximum : DG_UF_minimum, s.nin, d);
    if (dg_sb_kinds[t] != 'i' || !dg_sb_sign_blind(s.uf))
        return i;
    for (int k = 0; k < n; k++)
        if (d[k] == t)
            d[k] = dg_sb_unsigned(t);
    return dg_sb_find(s.uf, s.nin, d);
}

/* Every loop's choice exists, is its own choice, and has the loop's shape and
 * operand sizes (checked once, by kernels/ew_table.cu). */
constexpr bool dg_same_bits_valid()
{
    for (int i = 0; i < dg_sb_nloops; i++) {
        const int j = dg_same_bits_loop(i);
        if (j < 0 || dg_same_bits_loop(j) != j)
            return false;
        const dg_sb_sig &a = dg_sb_sigs[i], &b = dg_sb_sigs[j];
        if (a.nin != b.nin || a.nout != b.nout)
            return false;
        for (int k = 0; k < a.nin + a.nout; k++)
            if (dg_sb_sizes[a.d[k]] != dg_sb_sizes[b.d[k]])
                return false;
    }
    return true;
}

#endif /* DG_SAME_BITS_H */
