/* Error records of the dgarray core (see dg_status.h).
 *
 * The first error wins: cleanup paths call functions that may fail again, and
 * the record must still name the cause, not its echo. */
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
