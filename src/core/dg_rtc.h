/* The run-time kernel compiler: CUDA source to a GPU's machine code through
 * NVRTC, cached in memory and on disk (dg_rtc.c).
 *
 * NVRTC is loaded with dlopen at the first compile (libnvrtc.so of the CUDA
 * toolkit, 13 then 12), so nothing here links against CUDA and the CPU
 * build can compile kernels for its tests.  The source may include
 * "dg_scalar.h" (kernels/dg_scalar.h, with the dtype and loop lists, built
 * into the extension by setup.py), compiled with -default-device,
 * --fmad=false and C++17 as the ahead-of-time kernels are.
 *
 * Cache: the key is the source, the options, the texts of those headers,
 * NVRTC's version and the driver's version (given by the caller).  In memory
 * for the life of the process; on disk under $DGARRAY_CACHE_DIR, else
 * $XDG_CACHE_HOME/dgarray, else ~/.cache/dgarray, one file per kernel named
 * by a hash of the key and holding the whole key, written to a temporary
 * file and renamed into place (processes sharing the directory never see a
 * part-written file).  A file that is unreadable, corrupt or for another key
 * is compiled afresh (and rewritten); a directory that cannot be made or
 * written only loses the disk cache: compiling never fails because of the
 * cache.  Thread-safe. */
#ifndef DG_RTC_H
#define DG_RTC_H

#include <stddef.h>
#include "dg_status.h"

/* Where a kernel came from (dg_rtc_compile's *from). */
enum { DG_RTC_COMPILED = 0, DG_RTC_MEMORY = 1, DG_RTC_DISK = 2 };

/* 1 if NVRTC could be loaded (why not, in *why, when 0: borrowed text). */
int dg_rtc_available(const char **why);

/* The machine code (CUBIN) of `src` for compute capability `arch` (90 for
 * sm_90), for a driver of version `driver` (cudaDriverGetVersion; 0 where
 * none): *code borrowed from the memory cache (valid for the life of the
 * process), *n its bytes, *from where it came from.  A compile error is
 * DG_ERR_INTERNAL with NVRTC's log; no NVRTC is DG_ERR_NOTIMPL. */
dg_status dg_rtc_compile(const char *src, int arch, int driver, const void **code, size_t *n,
                         int *from, dg_error *err);

/* Forgets the memory cache's entries (the code they hold stays valid: it is
 * kept until the process ends); for tests of the disk cache. */
void dg_rtc_forget(void);

/* The disk cache's directory now (NULL where none can be named); borrowed
 * until the next call. */
const char *dg_rtc_cache_dir(void);

#endif /* DG_RTC_H */
