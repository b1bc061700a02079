/* [multihost] The CPU backend's transfers between processes (cpu_transport.c). */
#ifndef CPU_TRANSPORT_H
#define CPU_TRANSPORT_H

#include "dg_backend.h"

/* Fills be's join and transport slots. */
void dg_cpu_transport_install(dg_backend_i *be);

/* Queues fn(arg) on virtual device dev's worker (after the work queued
 * there; never run on the caller's thread), as a task of the device's
 * stream: cpu_backend.c.  fn owns arg. */
dg_status dg_cpu_submit_call(dg_backend_i *be, int dev, void (*fn)(void *), void *arg,
                             dg_error *err);

#endif /* CPU_TRANSPORT_H */
