/* Inner loops handed to the CPU backend from outside: NumPy's own.
 *
 * The binding (src/py/npy.c) finds, at import, NumPy's inner loop for each
 * loop of DG_LOOP_LIST (the ufunc's legacy loop of the same dtypes, the SIMD
 * variant NumPy dispatched for this CPU) and NumPy's argmax / argmin
 * functions, and hands them here as plain function pointers; the backend
 * then runs the innermost axis of elementwise work, reductions and arg
 * reductions through them, so that results are NumPy's bit for bit and as
 * fast as NumPy per core.  Loops without one keep the backend's own
 * (cpu_loops.c).  Nothing here knows Python: a handed loop must not need the
 * GIL (the binding hands none that does) and may set floating-point flags of
 * the thread it runs on, as NumPy's loops do.
 *
 * Handing over is process-wide and happens before any work is queued (the
 * binding does it while the module loads); the tables are read without a
 * lock afterwards. */
#ifndef DG_CPU_EXT_H
#define DG_CPU_EXT_H

#include <stdint.h>

/* NumPy's inner-loop signature (PyUFuncGenericFunction, npy_intp being
 * intptr_t): n = dims[0] elements, operand k at args[k] with byte step
 * steps[k]; called in "reduce form" (args[0] == args[2], steps 0) a binary
 * loop folds args[1]'s elements into *args[0] (NumPy's pairwise summation
 * for float add). */
typedef void (*dg_cpu_ext_loop)(char **args, const intptr_t *dims, const intptr_t *steps,
                                void *data);

/* NumPy's argmax / argmin signature (PyArray_ArgFunc): the position of the
 * first largest / smallest of the n contiguous elements at data (NaN first)
 * to *ind; `arr` is unused for numeric dtypes and passed as NULL. */
typedef int (*dg_cpu_ext_argfn)(void *data, intptr_t n, intptr_t *ind, void *arr);

/* Runs loop `loop` (an index of dg_loops) with `fn` and its `data`
 * (borrowed; must live as long as the process).  identity (may be NULL):
 * the ufunc's identity in the loop's output dtype (bytes copied), from
 * which NumPy starts a reduction that has no initial.  fn NULL: the
 * backend's own loop again.  Returns 0, or -1 for a loop id out of range. */
int dg_cpu_ext_set_loop(int loop, dg_cpu_ext_loop fn, void *data, const void *identity);

/* Runs argmax (is_min 0) or argmin (1) of dtype `dtype` on contiguous runs
 * with `fn` (NULL: the backend's own comparison).  Returns 0, or -1 for a
 * dtype out of range. */
int dg_cpu_ext_set_arg(int dtype, int is_min, dg_cpu_ext_argfn fn);

/* How many loops of DG_LOOP_LIST run through a handed loop. */
int dg_cpu_ext_count(void);

/* ---- for the backend's loops (cpu_loops.c) ---- */

/* The handed loop of `loop` (NULL: none) and its data. */
typedef struct dg_cpu_ext {
    dg_cpu_ext_loop fn;
    void *data;
    int has_identity;
    unsigned char identity[16];
} dg_cpu_ext;

/* The handed loop of loop id `loop`, or NULL.  Borrowed. */
const dg_cpu_ext *dg_cpu_ext_of(int loop);

/* Runs x over n elements of the innermost axis, operands at p[k] with byte
 * strides s[k] (nop of them); where w is not NULL, only on the elements
 * whose mask byte (stride ws) is non-zero, as NumPy's masked loops do: the
 * loop called once per run of such elements. */
void dg_cpu_ext_run(const dg_cpu_ext *x, int nop, char *const *p, const int64_t *s, int64_t n,
                    const char *w, int64_t ws);

/* Folds the n elements at src (byte stride s; mask w, stride ws, may be
 * NULL) into the value at acc with x called in reduce form. */
void dg_cpu_ext_fold(const dg_cpu_ext *x, char *acc, const char *src, int64_t s, int64_t n,
                     const char *w, int64_t ws);

/* The handed argmax (is_min 0) / argmin function of dtype, or NULL. */
dg_cpu_ext_argfn dg_cpu_ext_arg_of(int dtype, int is_min);

#endif /* DG_CPU_EXT_H */
