/* Error records of the dgarray core (see dg_status.h).
 *
 * The first error wins: cleanup paths call functions that may fail again, and
 * the record must still name the cause, not its echo. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include "dg_status.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Records `code`, `device` and the formatted message in *err unless it
 * already holds an error.  `err` is borrowed and may be NULL; `fmt` is
 * borrowed.  backend_code and bytes are left as they are (DG_ERROR_INIT and
 * dg_error_clear zero them), so a caller may fill them before or after this
 * call.  Returns `code`, so that failures read as one statement. */
dg_status dg_error_set(dg_error *err, dg_status code, int device,
                       const char *fmt, ...)
{
    va_list ap;
    int len;

    assert(code != DG_OK);
    assert(fmt != NULL);
    if (err == NULL || err->code != DG_OK || code == DG_OK)
        return code;
    err->code = code;
    err->device = device;
    if (fmt == NULL) {
        err->msg[0] = '\0';
        return code;
    }
    va_start(ap, fmt);
    len = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (len < 0)
        err->msg[0] = '\0'; /* an encoding error: keep the code, lose the text */
    return code;
}

/* Resets *err (borrowed, may be NULL) to the state of DG_ERROR_INIT, so that
 * the next dg_error_set records again. */
void dg_error_clear(dg_error *err)
{
    if (err == NULL)
        return;
    err->code = DG_OK;
    err->device = -1;
    err->backend_code = 0;
    err->bytes = 0;
    memset(err->msg, 0, sizeof err->msg);
}

dg_status dg_grow(void **items, int *cap, int want, size_t size, int first, dg_error *err)
{
    int nc = *cap > 0 ? *cap : first;
    void *p;
    if (want <= *cap)
        return DG_OK;
    while (nc < want) {
        if (nc > INT_MAX / 2)
            return dg_error_set(err, DG_ERR_NOMEM, -1, "a list of more than %d entries", nc);
        nc *= 2;
    }
    if ((size_t)nc > SIZE_MAX / size)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "a list of %d entries of %zu bytes", nc,
                            size);
    p = realloc(*items, (size_t)nc * size);
    if (!p)
        return dg_error_set(err, DG_ERR_NOMEM, -1, "out of host memory for a list of %d "
                            "entries", nc);
    *items = p;
    *cap = nc;
    return DG_OK;
}
