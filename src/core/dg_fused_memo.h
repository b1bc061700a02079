/* What a fused kernel's key (dg_fused_key, dg_fused_src.h) has already
 * cost: a memo from (key, slot) to a pointer, for the CUDA backend's
 * launches (cuda_fused.c: the slot a compute capability, the pointer the
 * kernel loaded for it, which runs on every GPU of that capability), so
 * that a repeat of a chain, or its piece on another GPU, skips the source,
 * the run-time compiler's key and the loading and computes only its
 * argument words (dg_fused_memo.c).
 *
 * Entries live for the life of the process (as the kernels they name).
 * Thread-safe. */
#ifndef DG_FUSED_MEMO_H
#define DG_FUSED_MEMO_H

#include <stdint.h>
#include "dg_fused_src.h"

#define DG_FUSED_MEMO_SLOTS 64 /* slots 0 .. 63; others are never memoized */

/* The pointer put for (key, slot), or NULL; hash is dg_fused_key_hash(key). */
void *dg_fused_memo_find(const dg_fused_key *key, uint64_t hash, int slot);

/* Remembers value (borrowed: the caller keeps it alive) for (key, slot).  Out of host
 * memory or a slot out of range it remembers nothing: the next find misses
 * and the caller takes the long way again. */
void dg_fused_memo_put(const dg_fused_key *key, uint64_t hash, int slot, void *value);

#endif /* DG_FUSED_MEMO_H */
