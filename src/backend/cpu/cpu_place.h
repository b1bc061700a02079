/* Where the CPU backend's virtual devices run: the cores they may use, how
 * many devices the machine is worth, and the placement of their workers. */
#ifndef DG_CPU_PLACE_H
#define DG_CPU_PLACE_H

#include <pthread.h>

/* The number of cores this process may run on (its affinity mask, taken
 * when called; at least 1). */
int dg_cpu_cores(void);

/* The number of virtual devices the CPU backend starts with when
 * DGARRAY_CPU_DEVICES is not set: one per core of the affinity mask, at most
 * DG_CPU_MAX_DEFAULT_DEVICES (the measurements behind it are in
 * cpu_place.c). */
int dg_cpu_default_devices(void);

/* Places the worker thread of virtual device `dev` (of ndev) on its share of
 * the cores of the calling thread's affinity mask (the backend's creator):
 * device i on the i-th of ndev equal slabs of those cores, or on core
 * i mod cores when there are more devices than cores.  Only when placement
 * is on (DGARRAY_CPU_PIN, see cpu_place.c); never outside the mask.  Failure
 * leaves the thread where it was (placement is a hint).  Names the thread
 * "dg-cpu:<dev>" in any case. */
void dg_cpu_place_worker(pthread_t thread, int dev, int ndev);

#endif /* DG_CPU_PLACE_H */
