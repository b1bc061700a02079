/* Large host blocks for the ndarrays the devices are read into, kept for
 * reuse after NumPy frees them.
 *
 * A device-to-host copy into a fresh array spends most of its time in the
 * host's first touch of each page (the kernel zeroing it): on an H200 host,
 * 1 GiB took 151 ms to touch on one thread, 20 ms on 16, against 19.4 ms for
 * the DMA itself (benchmarks/d2h_probe.cu).  A program that reads arrays of
 * one size again and again (a loop's results, a checkpoint) reads them into
 * memory that was touched before when the block of the last one comes back
 * here instead of to the kernel.  The blocks are anonymous mappings with huge
 * pages advised (as NumPy's own large allocations are), whole multiples of
 * HM_ROUND bytes; the last HM_KEEP released are kept, together at most the
 * cap (DGARRAY_HOST_CACHE_BYTES, else 1/16 of the host's memory, at most
 * HM_CAP_MAX; 0 keeps none), and a request takes a kept block of its rounded
 * size.  A block starts with a header of HM_HEAD bytes holding its mapping
 * size (NumPy's realloc does not pass the old size) and whether it is
 * page-locked; the data follows it.
 *
 * With the CUDA backend (dgpy_hostmem_set_pin), a kept block taken again is
 * page-locked (cudaHostRegister) from then on, until it is unmapped: a block
 * read into twice is likely read into again, and a read into page-locked
 * memory is one DMA at the link's speed (1 GiB from an H200 in 19.4 ms,
 * against 22-24 ms through the staging buffers into memory touched before;
 * registering 1 GiB touched before costs about 23 ms, once, and unregistering
 * it about 19 ms).  DGARRAY_HOST_PIN=0 turns this off.
 * Pure C: npy.c hands these functions to NumPy as the allocator of those
 * arrays (NEP 49). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dgpy.h"

#define HM_ROUND ((size_t)2 << 20)  /* mapping sizes are multiples of a huge page */
#define HM_KEEP 8                    /* released blocks kept, at most */
#define HM_CAP_MAX ((size_t)16 << 30)
#define HM_HEAD ((size_t)64)         /* header bytes before the data (its alignment) */
#define HM_MAGIC ((size_t)0x6467686dULL)
/* header words: the mapping size, HM_MAGIC, and 1 if page-locked (0 not
 * tried yet, 2 refused) */
#define HM_W_SIZE 0
#define HM_W_MAGIC 1
#define HM_W_PINNED 2

static pthread_mutex_t hm_mu = PTHREAD_MUTEX_INITIALIZER;
static void *hm_block[HM_KEEP];     /* kept blocks, oldest first [hm_mu] */
static size_t hm_size[HM_KEEP];     /* their mapping sizes [hm_mu] */
static int hm_n;                    /* [hm_mu] */
static size_t hm_bytes;             /* [hm_mu] */
static size_t hm_cap = (size_t)-1;  /* (size_t)-1 until read [hm_mu] */
static dgpy_pin_fn hm_pin;          /* set once, before any block is taken again */
static dg_backend_i *hm_pin_be;

void dgpy_hostmem_set_pin(dgpy_pin_fn fn, dg_backend_i *be)
{
    const char *e = getenv("DGARRAY_HOST_PIN");
    if (e != NULL && strcmp(e, "0") == 0)
        return;
    hm_pin_be = be;
    hm_pin = fn;
}

static size_t hm_round(size_t n)
{
    return n / HM_ROUND * HM_ROUND + (n % HM_ROUND ? HM_ROUND : 0);
}

/* The cap on kept bytes (read once).  [hm_mu] */
static size_t hm_cap_get(void)
{
    if (hm_cap == (size_t)-1) {
        const char *e = getenv("DGARRAY_HOST_CACHE_BYTES");
        char *end = NULL;
        if (e != NULL && *e != '\0') {
            unsigned long long v = strtoull(e, &end, 10);
            hm_cap = *end == '\0' ? (size_t)v : 0;
        } else {
            long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
            hm_cap = pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz / 16 : 0;
            if (hm_cap > HM_CAP_MAX)
                hm_cap = HM_CAP_MAX;
        }
    }
    return hm_cap;
}

void *dgpy_hostmem_take(size_t n, int zero)
{
    const size_t m = hm_round(n + HM_HEAD);
    void *p = NULL;
    int i;
    pthread_mutex_lock(&hm_mu);
    for (i = hm_n - 1; i >= 0 && p == NULL; i--) {
        if (hm_size[i] == m) {
            p = hm_block[i];
            hm_bytes -= m;
            hm_n--;
            memmove(&hm_block[i], &hm_block[i + 1], (size_t)(hm_n - i) * sizeof(void *));
            memmove(&hm_size[i], &hm_size[i + 1], (size_t)(hm_n - i) * sizeof(size_t));
        }
    }
    pthread_mutex_unlock(&hm_mu);
    if (p != NULL) {
        size_t *h = (size_t *)p;
        if (zero)
            memset((char *)p + HM_HEAD, 0, n);
        if (hm_pin != NULL && h[HM_W_PINNED] == 0) /* tried once: 2 if refused */
            h[HM_W_PINNED] = hm_pin(hm_pin_be, p, m, 1) ? 1 : 2;
    } else {
        p = mmap(NULL, m, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return NULL;
#ifdef MADV_HUGEPAGE
        (void)madvise(p, m, MADV_HUGEPAGE);
#endif
        /* fresh mappings read as zeros */
        ((size_t *)p)[HM_W_PINNED] = 0;
    }
    ((size_t *)p)[HM_W_SIZE] = m;
    ((size_t *)p)[HM_W_MAGIC] = HM_MAGIC;
    return (char *)p + HM_HEAD;
}

void *dgpy_hostmem_resize(void *q, size_t n)
{
    void *r;
    size_t old;
    if (q == NULL)
        return dgpy_hostmem_take(n, 0);
    old = ((size_t *)((char *)q - HM_HEAD))[HM_W_SIZE] - HM_HEAD;
    r = dgpy_hostmem_take(n, 0);
    if (r == NULL)
        return NULL;
    memcpy(r, q, old < n ? old : n);
    dgpy_hostmem_give(q);
    return r;
}

void dgpy_hostmem_give(void *q)
{
    void *p, *drop[HM_KEEP + 1];
    size_t m, dsz[HM_KEEP + 1];
    int nd = 0, i;
    if (q == NULL)
        return;
    p = (char *)q - HM_HEAD;
    m = ((size_t *)p)[HM_W_SIZE];
    if (((size_t *)p)[HM_W_MAGIC] != HM_MAGIC)
        return; /* not a block of ours: leaked rather than unmapped wrongly */
    pthread_mutex_lock(&hm_mu);
    if (m <= hm_cap_get() / 2) {
        while (hm_n > 0 && (hm_n == HM_KEEP || hm_bytes + m > hm_cap_get())) {
            drop[nd] = hm_block[0];
            dsz[nd++] = hm_size[0];
            hm_bytes -= hm_size[0];
            hm_n--;
            memmove(&hm_block[0], &hm_block[1], (size_t)hm_n * sizeof(void *));
            memmove(&hm_size[0], &hm_size[1], (size_t)hm_n * sizeof(size_t));
        }
        hm_block[hm_n] = p;
        hm_size[hm_n++] = m;
        hm_bytes += m;
    } else {
        drop[nd] = p;
        dsz[nd++] = m;
    }
    pthread_mutex_unlock(&hm_mu);
    for (i = 0; i < nd; i++) {
        if (((size_t *)drop[i])[HM_W_PINNED] == 1 && hm_pin != NULL)
            (void)hm_pin(hm_pin_be, drop[i], dsz[i], 0);
        (void)munmap(drop[i], dsz[i]);
    }
}
