/* glibc's malloc kept from unmapping the tables of layouts of many chunks.
 *
 * A layout of 10^5 chunks makes tables of 80-200 MB on every call (a box
 * holds DG_MAXDIM ranges, 776 bytes; a chunk 1 KiB, a loop's descriptor
 * 2 KiB, each per chunk), and glibc serves every block above its mmap
 * threshold (at most 32 MiB) from a fresh mapping that it unmaps at free.
 * The kernel then zeroes and faults in every page again on the next call:
 * half the CPU time of a create, add, reshard or sum of 10^5 chunks
 * (benchmarks/many_chunks.py, perf).  With the threshold raised to
 * MP_MMAP_MIN and the heap trimmed only above twice that, those blocks come
 * from the heap and are reused from one call to the next.  Blocks above the
 * threshold are mapped as before.  The cost: up to 2 * MP_MMAP_MIN of freed
 * heap stays in the process for its next allocations instead of going back
 * to the kernel.
 *
 * DGARRAY_MALLOC_MMAP_BYTES sets the threshold (0: glibc's own policy is
 * left alone); a threshold the user set for glibc (MALLOC_MMAP_THRESHOLD_,
 * MALLOC_TRIM_THRESHOLD_ or GLIBC_TUNABLES) is kept.  Other C libraries:
 * nothing is done. */
#include "dgpy.h" /* Python.h first: it sets the feature macros */

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#define MP_MMAP_MIN ((size_t)256 << 20)

void dgpy_malloc_policy(void)
{
#if defined(__GLIBC__)
    const char *e = getenv("DGARRAY_MALLOC_MMAP_BYTES"), *t = getenv("GLIBC_TUNABLES");
    size_t bytes = MP_MMAP_MIN;
    if (getenv("MALLOC_MMAP_THRESHOLD_") || getenv("MALLOC_TRIM_THRESHOLD_") ||
        (t && (strstr(t, "mmap_threshold") || strstr(t, "trim_threshold"))))
        return;
    if (e && *e) {
        char *end = NULL;
        unsigned long long v = strtoull(e, &end, 10);
        if (*end != '\0' || v == 0 || v > (unsigned long long)(INT_MAX / 2))
            return;
        bytes = (size_t)v;
    }
    (void)mallopt(M_MMAP_THRESHOLD, (int)bytes);
    (void)mallopt(M_TRIM_THRESHOLD, (int)(2 * bytes));
#endif
}
