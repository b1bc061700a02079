/* The dtypes dgarray supports, listed once.
 *
 * DG_DTYPE_LIST(X) calls X(ENUM, sfx, ctype, size, numpy_char, name, kind)
 * for each dtype, in NumPy's type-number order.  Loops, kernels, casts and the
 * binding's dtype mapping are all generated from this list.
 *   kind: 'b' bool, 'i' signed int, 'u' unsigned int, 'f' float, 'c' complex.
 * float16 is stored as its IEEE bit pattern (dg_half); complex values are
 * pairs (dg_c64, dg_c128) laid out as NumPy's complex types. */
#ifndef DG_DTYPE_H
#define DG_DTYPE_H

#include <stdint.h>

typedef uint8_t dg_bool;
typedef uint16_t dg_half;
typedef struct dg_c64 { float re, im; } dg_c64;
typedef struct dg_c128 { double re, im; } dg_c128;

#define DG_DTYPE_LIST(X)                                            \
    X(BOOL, b1, dg_bool, 1, '?', "bool", 'b')                       \
    X(INT8, i1, int8_t, 1, 'b', "int8", 'i')                        \
    X(UINT8, u1, uint8_t, 1, 'B', "uint8", 'u')                     \
    X(INT16, i2, int16_t, 2, 'h', "int16", 'i')                     \
    X(UINT16, u2, uint16_t, 2, 'H', "uint16", 'u')                  \
    X(INT32, i4, int32_t, 4, 'i', "int32", 'i')                     \
    X(UINT32, u4, uint32_t, 4, 'I', "uint32", 'u')                  \
    X(INT64, i8, int64_t, 8, 'q', "int64", 'i')                     \
    X(UINT64, u8, uint64_t, 8, 'Q', "uint64", 'u')                  \
    X(FLOAT16, f2, dg_half, 2, 'e', "float16", 'f')                 \
    X(FLOAT32, f4, float, 4, 'f', "float32", 'f')                   \
    X(FLOAT64, f8, double, 8, 'd', "float64", 'f')                  \
    X(COMPLEX64, c8, dg_c64, 8, 'F', "complex64", 'c')              \
    X(COMPLEX128, c16, dg_c128, 16, 'D', "complex128", 'c')

typedef enum dg_dtype {
#define DG_X_ENUM(E, sfx, ct, sz, ch, nm, kd) DG_##E,
    DG_DTYPE_LIST(DG_X_ENUM)
#undef DG_X_ENUM
    DG_NDTYPES
} dg_dtype;

/* Size in bytes of one element of `dt`; 0 for an invalid dtype. */
static inline int dg_dtype_size(int dt)
{
    switch (dt) {
#define DG_X_SIZE(E, sfx, ct, sz, ch, nm, kd) case DG_##E: return sz;
        DG_DTYPE_LIST(DG_X_SIZE)
#undef DG_X_SIZE
    default: return 0;
    }
}

/* NumPy's name of `dt` ("float32"); "?" for an invalid dtype. */
static inline const char *dg_dtype_name(int dt)
{
    switch (dt) {
#define DG_X_NAME(E, sfx, ct, sz, ch, nm, kd) case DG_##E: return nm;
        DG_DTYPE_LIST(DG_X_NAME)
#undef DG_X_NAME
    default: return "?";
    }
}

/* Kind character of `dt` ('b', 'i', 'u', 'f', 'c'); 0 if invalid. */
static inline char dg_dtype_kind(int dt)
{
    switch (dt) {
#define DG_X_KIND(E, sfx, ct, sz, ch, nm, kd) case DG_##E: return kd;
        DG_DTYPE_LIST(DG_X_KIND)
#undef DG_X_KIND
    default: return 0;
    }
}

#endif /* DG_DTYPE_H */
