/* Cores, the default number of virtual devices, and worker placement
 * (cpu_place.h). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_place.h"

/* The default number of virtual devices is the number of cores, up to this.
 * Measured (issue [cpu-speed], bench_cpu.py, one process per setting, 2^25
 * elements, NumPy time / dgarray time, best of 2 rounds): on a 16-core Xeon
 * (one NUMA node, idle), 16 devices beat 8 on every elementwise and
 * reduction row: a + b 11.34 against 7.67 (109 GB/s against 74), sin
 * float32 14.35 against 9.28, exp 10.08 against 6.97, the chain 14.93
 * against 7.65, a sum 10.01 against 5.34, argmax 8.52 against 5.52, the
 * Jacobi step 5.54 against 3.84
 * (benchmarks/results/2026-11-25-cpu-speed-16core-before.md); products,
 * the one row where 8 beat 16 then, now run as one BLAS call over every
 * core whatever the device count (dg_matmul.c, use_wide).  On 2 cores (a
 * shared, loaded machine), 2 devices beat 1 and 4 on a + b (1.72 against
 * 1.51 and 1.53), sin float32 (2.47 against 1.77 and 1.71) and the chain
 * (1.47 against 1.34 and 1.20): benchmarks/results/2026-11-25-cpu-speed.md.
 * So one device per core.  Beyond 16 cores nothing was measured, and each
 * device adds a task per operation to the host's work, so the default
 * stops there; DGARRAY_CPU_DEVICES sets any count. */
#define DG_CPU_MAX_DEFAULT_DEVICES 16

/* The cores of the calling thread's affinity mask, in order, into cpus
 * (room for CPU_SETSIZE); their count, 0 if the mask cannot be read. */
static int mask_cpus(int *cpus)
{
    cpu_set_t set;
    int n = 0;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            cpus[n++] = c;
    return n;
}

int dg_cpu_cores(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int dg_cpu_default_devices(void)
{
    int n = dg_cpu_cores();
    return n > DG_CPU_MAX_DEFAULT_DEVICES ? DG_CPU_MAX_DEFAULT_DEVICES : n;
}

/* 1 if workers are placed: DGARRAY_CPU_PIN=1 (or 0; unset: DG_CPU_PIN_DEFAULT).
 * Off by default: on the shared 2-core machine, 2 pinned devices lost on 3
 * of 4 rows (a + b 1.72 -> 1.50 of NumPy's speed, sin 2.47 -> 2.14, a sum
 * 0.90 -> 0.78; the chain 1.47 -> 1.27), a pinned worker being unable to
 * leave a core another process holds (results file above). */
#define DG_CPU_PIN_DEFAULT 0
static int pin_on(void)
{
    const char *e = getenv("DGARRAY_CPU_PIN");
    if (e && *e)
        return strcmp(e, "0") != 0;
    return DG_CPU_PIN_DEFAULT;
}

void dg_cpu_place_worker(pthread_t thread, int dev, int ndev)
{
    int cpus[CPU_SETSIZE];
    char name[16];
    cpu_set_t set;
    int n;
    snprintf(name, sizeof name, "dg-cpu:%d", dev);
    pthread_setname_np(thread, name); /* for top -H, gdb and the tests */
    if (!pin_on() || ndev < 1 || dev < 0 || dev >= ndev)
        return;
    n = mask_cpus(cpus);
    if (n < 1)
        return;
    CPU_ZERO(&set);
    if (ndev >= n) {
        CPU_SET(cpus[dev % n], &set);
    } else {
        const int lo = (int)((long)dev * n / ndev), hi = (int)((long)(dev + 1) * n / ndev);
        for (int c = lo; c < hi; c++)
            CPU_SET(cpus[c], &set);
    }
    pthread_setaffinity_np(thread, sizeof set, &set);
}
