/* Layouts: lists of (device, box) saying which block of an array each chunk
 * holds.  The default layout, the layout that keeps given axes whole, the
 * check every layout passes, and the layout an index map names.
 *
 * An index map is CuPy's `{device: key or [key, ...]}`
 * (cupyx.distributed.array).  Its rules are written here once, with their
 * messages; the binding only reads the user's Python objects into
 * dg_map_key entries.  Pure: no backend, no Python. */
#ifndef DG_LAYOUT_H
#define DG_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include "dg_box.h"
#include "dg_plan.h"
#include "dg_status.h"

/* One entry of an index-map key, as the user wrote it: an int (`start`,
 * negative counting from the end of its axis) or a slice whose start, stop
 * and step may each be absent (Python's None). */
typedef struct dg_map_entry {
    unsigned char is_int, has_start, has_stop, has_step;
    int64_t start, stop, step;
} dg_map_entry;

/* One key of an index map: the device it is given to, where it was written
 * (item: its place in the device's list of keys, -1 for a lone key), and its
 * entries, one per axis from the first; axes after the last entry are whole.
 * nentries may exceed DG_MAXDIM (too many indices): only the first
 * DG_MAXDIM entries are stored. */
typedef struct dg_map_key {
    int64_t device;
    int item;
    int nentries;
    dg_map_entry e[DG_MAXDIM];
} dg_map_key;

/* The default layout (DESIGN.md): the first axis split into near-equal
 * contiguous blocks, one per device; arrays smaller than min_split_bytes, 0-d
 * and empty arrays on device 0 alone.  *out is malloc'ed (caller frees). */
dg_status dg_layout_default(int ndevices, int ndim, const int64_t *shape,
                            size_t itemsize, size_t min_split_bytes,
                            dg_plan_chunk **out, int *n, dg_error *err);

/* A layout of (ndim, shape) in which every chunk holds the axes
 * want[0..nwant) whole: the longest axis of at least 2 elements not among
 * them split in near-equal blocks over the devices; fewer of the axes kept
 * whole (dropped from the end of want) while no such axis exists; one chunk
 * on device 0 if none ever does.  How scans, sorts and FFTs reach a layout
 * they can work on where the data is.  *out malloc'ed (caller frees), *n
 * entries; *nkept (if not NULL): how many of want it holds whole (>= 1). */
dg_status dg_layout_axes_whole(int ndevices, int ndim, const int64_t *shape, const int *want,
                               int nwant, dg_plan_chunk **out, int *n, int *nkept,
                               dg_error *err);

/* Checks a layout (borrowed) against a shape: at least one chunk, devices
 * that exist, boxes of the right ndim with positive steps inside the shape,
 * every element of a non-empty shape covered (dg_plan_check_cover).  Every
 * core function that makes an array of a given layout calls it. */
dg_status dg_layout_validate(int ndevices, int ndim, const int64_t *shape,
                             const dg_plan_chunk *layout, int n, dg_error *err);

/* The layout the n keys (borrowed) of an index map name over `shape`, one
 * chunk per key in order, by CuPy's rules: an int keeps its axis (i:
 * (i, i+1, 1); negative ints count from the end), a slice is what Python's
 * slice.indices gives over the axis, axes the key leaves out are whole.
 * ValueError: a step that is not positive, an empty slice, a device that
 * does not exist, no key at all, an element no key holds; IndexError: an int
 * outside its axis, more entries than axes.  *out malloc'ed (caller frees),
 * n chunks, on success only. */
dg_status dg_layout_of_index_map(int ndevices, int ndim, const int64_t *shape,
                                 const dg_map_key *keys, int n, dg_plan_chunk **out,
                                 dg_error *err);

#endif /* DG_LAYOUT_H */
