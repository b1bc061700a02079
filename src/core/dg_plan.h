/* The planner: which copies build a set of destination boxes from a layout.
 *
 * A pure function over layouts, tested apart from execution (tests/c and
 * tests/test_planner.py through dgarray._core._plan).  Everything that moves
 * data between chunks uses it: reshard, operands of different layouts,
 * gathering to the host.
 *
 * For each destination (device d, box D) the plan holds copies (source chunk
 * s, global box B) such that the boxes B for that destination are disjoint,
 * their union is D, and each B lies inside source chunk s.  Sources on the
 * destination's own device are used first, so nothing crosses devices that is
 * already in place; other sources are then taken in an order that spreads the
 * load over the source devices. */
#ifndef DG_PLAN_H
#define DG_PLAN_H

#include <stdint.h>
#include "dg_box.h"
#include "dg_status.h"

/* A layout as the planner sees it: where each chunk is and what it holds. */
typedef struct dg_plan_chunk {
    int device; /* DG_HOST (-1) allowed for a host destination */
    dg_box box;
} dg_plan_chunk;

typedef struct dg_plan_copy {
    int src;     /* index into the source chunks */
    int dst;     /* index into the destination chunks */
    dg_box box;  /* global indices copied; inside both chunks' boxes */
} dg_plan_copy;

typedef struct dg_plan {
    int ncopies;
    int cap;
    dg_plan_copy *copies; /* owned; free with dg_plan_free */
} dg_plan;

/* Plans copies from `src` (nsrc chunks) into each of `dst` (ndst chunks).
 * Fails with DG_ERR_VALUE if some destination index is held by no source
 * chunk (the message names the first such index).  On success *plan owns its
 * copies (release with dg_plan_free); on failure it holds none. */
dg_status dg_plan_build(const dg_plan_chunk *src, int nsrc,
                        const dg_plan_chunk *dst, int ndst,
                        dg_plan *plan, dg_error *err);

/* Flags of dg_plan_build_ex. */
enum { DG_PLAN_REUSE_DST = 1u };

/* dg_plan_build with flags.  DG_PLAN_REUSE_DST: a destination may also be
 * filled from the destinations before it on its own device (after that
 * device's sources, before any other device's): such a copy names source
 * index nsrc + t for destination t, and is to run once t is filled.  No
 * element then reaches one device twice. */
dg_status dg_plan_build_ex(const dg_plan_chunk *src, int nsrc,
                           const dg_plan_chunk *dst, int ndst, unsigned flags,
                           dg_plan *plan, dg_error *err);

void dg_plan_free(dg_plan *plan);

/* Checks that the chunks cover every index of the box `whole`; if not, fails
 * with DG_ERR_VALUE naming the first uncovered index. */
dg_status dg_plan_check_cover(const dg_plan_chunk *chunks, int n,
                              const dg_box *whole, dg_error *err);

#endif /* DG_PLAN_H */
