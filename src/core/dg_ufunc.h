/* Elementwise operations: the ufuncs and their typed loops, listed once.
 *
 * DG_UFUNC_LIST(X) calls X(name, nin, nout) for every elementwise NumPy ufunc
 * dgarray implements, plus `cast` (one input, one output of any two dtypes).
 * `name` is NumPy's ufunc.__name__.
 *
 * The typed loops are listed once in src/core/dg_loops.h (DG_LOOP_LIST); the
 * CPU loops (src/backend/cpu) and the CUDA kernels (kernels/) are generated
 * from that list, in the same order, so a loop id indexes all of them. */
#ifndef DG_UFUNC_H
#define DG_UFUNC_H

#include <stdint.h>
#include "dg_dtype.h"

#define DG_UFUNC_LIST(X)                                                  \
    X(cast, 1, 1)                                                         \
    X(add, 2, 1) X(subtract, 2, 1) X(multiply, 2, 1) X(divide, 2, 1)      \
    X(floor_divide, 2, 1) X(remainder, 2, 1) X(fmod, 2, 1)                \
    X(divmod, 2, 2) X(power, 2, 1) X(float_power, 2, 1)                   \
    X(negative, 1, 1) X(positive, 1, 1) X(absolute, 1, 1) X(fabs, 1, 1)   \
    X(sign, 1, 1) X(conjugate, 1, 1) X(reciprocal, 1, 1) X(square, 1, 1)  \
    X(sqrt, 1, 1) X(cbrt, 1, 1) X(heaviside, 2, 1)                        \
    X(exp, 1, 1) X(exp2, 1, 1) X(expm1, 1, 1) X(log, 1, 1) X(log2, 1, 1)  \
    X(log10, 1, 1) X(log1p, 1, 1) X(logaddexp, 2, 1) X(logaddexp2, 2, 1)  \
    X(sin, 1, 1) X(cos, 1, 1) X(tan, 1, 1) X(arcsin, 1, 1)                \
    X(arccos, 1, 1) X(arctan, 1, 1) X(arctan2, 2, 1) X(hypot, 2, 1)       \
    X(sinh, 1, 1) X(cosh, 1, 1) X(tanh, 1, 1) X(arcsinh, 1, 1)            \
    X(arccosh, 1, 1) X(arctanh, 1, 1)                                     \
    X(degrees, 1, 1) X(radians, 1, 1) X(deg2rad, 1, 1) X(rad2deg, 1, 1)   \
    X(rint, 1, 1) X(floor, 1, 1) X(ceil, 1, 1) X(trunc, 1, 1)             \
    X(isfinite, 1, 1) X(isinf, 1, 1) X(isnan, 1, 1) X(signbit, 1, 1)      \
    X(copysign, 2, 1) X(nextafter, 2, 1) X(spacing, 1, 1)                 \
    X(modf, 1, 2) X(frexp, 1, 2) X(ldexp, 2, 1)                           \
    X(greater, 2, 1) X(greater_equal, 2, 1) X(less, 2, 1)                 \
    X(less_equal, 2, 1) X(equal, 2, 1) X(not_equal, 2, 1)                 \
    X(logical_and, 2, 1) X(logical_or, 2, 1) X(logical_xor, 2, 1)         \
    X(logical_not, 1, 1)                                                  \
    X(maximum, 2, 1) X(minimum, 2, 1) X(fmax, 2, 1) X(fmin, 2, 1)         \
    X(bitwise_and, 2, 1) X(bitwise_or, 2, 1) X(bitwise_xor, 2, 1)         \
    X(invert, 1, 1) X(left_shift, 2, 1) X(right_shift, 2, 1)              \
    X(bitwise_count, 1, 1) X(gcd, 2, 1) X(lcm, 2, 1)

typedef enum dg_ufunc {
#define DG_X_UFUNC(name, nin, nout) DG_UF_##name,
    DG_UFUNC_LIST(DG_X_UFUNC)
#undef DG_X_UFUNC
    DG_NUFUNCS
} dg_ufunc;

#define DG_MAXLOOPOPS 4 /* nin + nout of any loop */

typedef struct dg_loop_info {
    int16_t ufunc;                  /* dg_ufunc */
    int8_t nin, nout;
    int8_t dtypes[DG_MAXLOOPOPS];   /* inputs then outputs; -1 past nin+nout */
} dg_loop_info;

/* Every typed loop, in DG_LOOP_LIST order (defined in dg_ufunc.c). */
extern const dg_loop_info dg_loops[];
extern const int dg_nloops;

/* NumPy's name of a ufunc id ("add"); NULL if out of range. */
const char *dg_ufunc_name(int ufunc);
/* nin / nout of a ufunc id. */
int dg_ufunc_nin(int ufunc);
int dg_ufunc_nout(int ufunc);
/* Ufunc id of NumPy's name, or -1. */
int dg_ufunc_find(const char *name);

/* The loop of `ufunc` whose nin+nout dtypes are exactly `dtypes`, or -1. */
int dg_loop_find(int ufunc, const int *dtypes);

/* The class of loop `loop` by the software rule of floating-point errors
 * (kernels/dg_scalar.h, dg_fpe_cls: DG_FPC_*). */
int dg_loop_fpe_cls(int loop);

/* The cast loop from `from` to `to` (every pair of dtypes has one). */
int dg_loop_cast(int from, int to);

#endif /* DG_UFUNC_H */
