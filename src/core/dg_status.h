/* Status codes and error records of the dgarray core.
 *
 * Every fallible core or backend function returns a dg_status and, on failure,
 * fills the dg_error the caller passed.  Nothing in library code aborts: the
 * binding layer (src/py/errors.c) turns a dg_error into a Python exception.
 * The first error is kept: dg_error_set does nothing if the record already
 * holds one, so cleanup paths may call failing functions without losing the
 * cause. */
#ifndef DG_STATUS_H
#define DG_STATUS_H

#include <stddef.h>
#include <stdint.h>

typedef enum dg_status {
    DG_OK = 0,
    DG_ERR_VALUE,         /* ValueError */
    DG_ERR_TYPE,          /* TypeError */
    DG_ERR_INDEX,         /* IndexError */
    DG_ERR_NOMEM,         /* host MemoryError */
    DG_ERR_DEVICE_NOMEM,  /* dgarray.OutOfDeviceMemoryError: device, bytes */
    DG_ERR_DEVICE,        /* dgarray.DeviceError: a CUDA/cuBLAS/NCCL failure */
    DG_ERR_NOTIMPL,       /* NotImplementedError */
    DG_ERR_OVERFLOW,      /* OverflowError */
    DG_ERR_INTERRUPTED,   /* KeyboardInterrupt reached a wait */
    DG_ERR_INTERNAL       /* a broken invariant: RuntimeError */
} dg_status;

typedef struct dg_error {
    dg_status code;
    int device;          /* device concerned, -1 if none */
    long backend_code;   /* cudaError_t / ncclResult_t / errno, 0 if none */
    size_t bytes;        /* bytes asked, for DG_ERR_DEVICE_NOMEM */
    char msg[512];
} dg_error;

#define DG_ERROR_INIT {DG_OK, -1, 0, 0, {0}}

/* Records an error unless `err` already holds one; returns `code` so that a
 * caller can write `return dg_error_set(err, DG_ERR_VALUE, -1, "...")`.
 * `err` may be NULL (the error is then dropped). */
dg_status dg_error_set(dg_error *err, dg_status code, int device,
                       const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Clears `err` back to DG_OK. */
void dg_error_clear(dg_error *err);

/* Makes room for `want` elements of `size` bytes in the growable array
 * *items of capacity *cap (both borrowed; the contents are kept), doubling
 * from `first`.  DG_ERR_NOMEM (nothing changed) if that fails. */
dg_status dg_grow(void **items, int *cap, int want, size_t size, int first, dg_error *err);

/* Evaluate a dg_status expression; on failure jump to `label`, keeping the
 * status in `st` (which must be a dg_status variable in scope). */
#define DG_CHECK_GOTO(expr, st, label)        \
    do {                                      \
        (st) = (expr);                        \
        if ((st) != DG_OK) goto label;        \
    } while (0)

#define DG_CHECK(expr)                        \
    do {                                      \
        dg_status dg_check_st_ = (expr);      \
        if (dg_check_st_ != DG_OK) return dg_check_st_; \
    } while (0)

#endif /* DG_STATUS_H */
