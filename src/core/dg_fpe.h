/* Floating-point errors of device work, reported as numpy.errstate says
 * ([surface] item 3).
 *
 * NumPy clears the floating-point status before a ufunc's loops and reads it
 * after: divide by zero, overflow, underflow and invalid then warn, raise,
 * call, print or log, or stay silent, by the errstate of the call.  Device
 * work runs later and elsewhere (a worker thread, a fused chain run at a host
 * read), so the errstate travels with the work: the binding sets the
 * calling thread's *action word* (what each kind does, from errstate) for
 * the work a call enqueues; a backend that can see the status (the CPU
 * backend: fetestexcept on the thread that ran the task) notes each kind
 * raised whose action is not `ignore`, with that action, in one process-wide
 * word; a backend whose devices keep no status (CUDA) classifies results in
 * its kernels by the software rule of kernels/dg_scalar.h (dg_fpe_rule) and
 * is a source of noted words (dg_fpe_add_source, read by dg_fpe_take); the
 * binding takes the word after the call (waiting for the call's work when
 * anything is watched) and reports, as NumPy does, once per call.
 *
 * Action word: 4 bits per kind at DG_FPE_SHIFT(kind), the DG_FPE_IGNORE..
 * DG_FPE_LOG code.  Noted word: bit kind * 8 + action for each kind raised.
 *
 * Thread safety: the action word is per thread; the noted word is atomic. */
#ifndef DG_FPE_H
#define DG_FPE_H

#include <stdint.h>

/* NumPy's kinds, in the order it reports them (and its flag bits 1 << kind). */
enum { DG_FPE_DIVIDE = 0, DG_FPE_OVER = 1, DG_FPE_UNDER = 2, DG_FPE_INVALID = 3, DG_FPE_NKINDS = 4 };
/* NumPy's modes (numpy.seterr), in its order. */
enum { DG_FPE_IGNORE = 0, DG_FPE_WARN, DG_FPE_RAISE, DG_FPE_CALL, DG_FPE_PRINT, DG_FPE_LOG };

#define DG_FPE_SHIFT(kind) ((kind) * 4)
/* A bit of the action word above the kinds' codes: the work is the combine
 * of a reduction's partials left in an op mode (dg_reshard.c's to_replica),
 * named "reduce" in NumPy's message whatever its loop (the CPU backend's
 * tasks, the CUDA backend's launches).  Only ever or'ed into a non-zero
 * word; every test of the word reads the kinds' codes alone. */
#define DG_FPE_AS_REDUCE 0x80000000u

/* The calling thread's action word (0: nothing watched, the work pays nothing). */
uint32_t dg_fpe_actions(void);
/* Sets it; returns the one it replaces, for the caller to restore. */
uint32_t dg_fpe_set_actions(uint32_t actions);

/* 1 where `actions` asks more than a warning of some kind (raise, call,
 * print, log): such a call's errors must surface at the call itself, so its
 * work is not deferred into a fused chain (dg_fuse_record) and is waited for. */
int dg_fpe_strict(uint32_t actions);

/* Notes the kinds raised (bit 1 << kind each) by work run under `actions`:
 * those whose action is not ignore.  `where` (a static string: the ufunc's
 * name, "reduce", "accumulate") names the work in NumPy's message; the first
 * noted since the last take is kept.  Any thread. */
void dg_fpe_note(uint32_t actions, unsigned kinds, const char *where);

/* 1 where the CPU backend notes by the software rule of the GPU kernels
 * (kernels/dg_scalar.h, dg_fpe_rule) instead of the floating-point status:
 * DGARRAY_FPE=soft, or dg_fpe_set_soft, so that CI checks the GPU's rule
 * against NumPy.  Any thread. */
int dg_fpe_soft(void);
/* Sets it (0 or 1); returns the one it replaces. */
int dg_fpe_set_soft(int on);

/* A source of noted words other than dg_fpe_note: a GPU backend's, read
 * where dg_fpe_take reads (fold: or's into *noted what the devices noted
 * since the last call, and sets *where to the name of the work where it
 * is known).  At most DG_FPE_NSOURCES at once; ctx borrowed until removed.
 * 0, or -1 when there is no room. */
#define DG_FPE_NSOURCES 4
typedef void (*dg_fpe_source_fn)(void *ctx, uint32_t *noted, const char **where);
int dg_fpe_add_source(dg_fpe_source_fn fold, void *ctx);
void dg_fpe_remove_source(dg_fpe_source_fn fold, void *ctx);

/* The noted word, emptied (0: nothing to report), and *where the name of the
 * work that raised first (NULL with 0). */
uint32_t dg_fpe_take(const char **where);

#endif
