/* The CUDA source of a fused chain (dg_fused_src.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dg_fused_src.h"
#include "dg_loops.h"
#include "dg_scalar.h"
#include "dg_ufunc.h"

/* The scalar function of every loop, in loop-id order (DG_LOOP_LIST). */
#define DG_FN1(u, a, o, fn) #fn,
#define DG_FN2(u, a, b, o, fn) #fn,
#define DG_FN12(u, a, o0, o1, fn) #fn,
#define DG_FN22(u, a, b, o0, o1, fn) #fn,
static const char *const loop_fn[] = {DG_LOOP_LIST(DG_FN1, DG_FN2, DG_FN12, DG_FN22)};
#undef DG_FN1
#undef DG_FN2
#undef DG_FN12
#undef DG_FN22

/* The C type name of each dtype (dg_ct_<sfx>). */
#define DG_X_CT(E, sfx, ct, sz, ch, nm, kd) "dg_ct_" #sfx,
static const char *const ctype[] = {DG_DTYPE_LIST(DG_X_CT)};
#undef DG_X_CT

/* Appends formatted text to the source; sets *ok 0 when it does not fit. */
typedef struct src_buf {
    char *p;
    size_t cap, len;
    int ok;
    int fpe;   /* the first of the 4 words of floating-point error noting, or -1 */
    int under; /* the checks note underflow */
} src_buf;

static void put(src_buf *b, const char *fmt, ...)
{
    va_list ap;
    int n;
    if (!b->ok)
        return;
    va_start(ap, fmt);
    n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= b->cap - b->len) {
        b->ok = 0;
        return;
    }
    b->len += (size_t)n;
}

static int in_memory(int kind)
{
    return kind == DG_FV_IN || kind == DG_FV_OUT;
}

void dg_fused_coalesce(dg_fused_desc *d)
{
    int nd = 0, a, k;
    for (a = 0; a < d->ndim; a++) {
        int merge = nd > 0;
        if (d->shape[a] == 1)
            continue;
        for (k = 0; merge && k < d->nval; k++)
            if (in_memory(d->val[k].kind))
                merge = d->val[k].strides[nd - 1] == d->val[k].strides[a] * d->shape[a];
        if (merge) {
            d->shape[nd - 1] *= d->shape[a];
            for (k = 0; k < d->nval; k++)
                d->val[k].strides[nd - 1] = d->val[k].strides[a];
        } else {
            d->shape[nd] = d->shape[a];
            for (k = 0; k < d->nval; k++)
                d->val[k].strides[nd] = d->val[k].strides[a];
            nd++;
        }
    }
    d->ndim = nd;
}



/* 1 if memory value v of d steps 0 bytes along every axis (dg_fused_kval.zero). */
static int zero_strides(const dg_fused_desc *d, int v)
{
    int a;
    if (!in_memory(d->val[v].kind))
        return 0;
    for (a = 0; a < d->ndim; a++)
        if (d->val[v].strides[a] != 0)
            return 0;
    return 1;
}

/* 1 if value v is the same for every element: a scalar, or memory every
 * axis of which has stride 0 (the exponent NumPy's power fast path takes). */
static int uniform(const dg_fused_key *d, int v)
{
    return d->val[v].kind == DG_FV_SCALAR || d->val[v].zero;
}

/* The function step s calls (power of float32/float64 with a uniform
 * exponent: NumPy's fast path, as the ahead-of-time kernels do). */
static void step_fn(const dg_fused_key *d, const dg_fused_step *s, char *out, size_t cap)
{
    const dg_loop_info *li = &dg_loops[s->loop];
    if (li->ufunc == DG_UF_power && (li->dtypes[0] == DG_FLOAT32 || li->dtypes[0] == DG_FLOAT64) &&
        uniform(d, s->op[1]))
        snprintf(out, cap, "%s_sexp", loop_fn[s->loop]);
    else
        snprintf(out, cap, "%s", loop_fn[s->loop]);
}

/* The parts of kernels/dg_scalar.h (DG_SP_* there) that the chain's loops
 * call: the dtypes of their operands, every part for a cast.  Fewer parts are
 * less for NVRTC to parse; the functions themselves are the same. */
static int scalar_parts(const dg_fused_key *d)
{
    enum { SP_INT = 1, SP_HALF = 2, SP_CPX = 4, SP_CAST = 8 };
    int parts = 0, s, k;
    for (s = 0; s < d->nstep; s++) {
        const dg_loop_info *li = &dg_loops[d->step[s].loop];
        if (li->ufunc == DG_UF_cast)
            parts |= SP_INT | SP_HALF | SP_CPX | SP_CAST;
        for (k = 0; k < li->nin + li->nout; k++) {
            char kind = dg_dtype_kind(li->dtypes[k]);
            if (kind == 'i' || kind == 'u')
                parts |= SP_INT;
            else if (li->dtypes[k] == DG_FLOAT16)
                parts |= SP_HALF;
            else if (kind == 'c')
                parts |= SP_CPX;
        }
    }
    return parts;
}

/* The most elements a thread of a contiguous kernel moves with one access
 * per operand (16 bytes: the widest load every GPU has). */
#define DG_FUSED_MAXVEC 8

/* The elements per thread and access of d's contiguous kernel, or 1 where d
 * takes the general one: one axis, every memory value dense (stride its
 * itemsize) and aligned to the access (V * itemsize bytes), or an input of
 * stride 0 (one element for all); V = 16 bytes / the largest itemsize of
 * the dense values, halved until every dense value's address is aligned. */
static int vec_width(const dg_fused_desc *d)
{
    int k, v, maxs = 0;
    if (d->ndim != 1)
        return 1;
    for (k = 0; k < d->nval; k++) {
        const dg_fused_val *x = &d->val[k];
        const int isz = dg_dtype_size(x->dtype);
        if (!in_memory(x->kind))
            continue;
        if (x->strides[0] == isz)
            maxs = isz > maxs ? isz : maxs;
        else if (!(x->kind == DG_FV_IN && x->strides[0] == 0))
            return 1;
    }
    if (maxs == 0 || maxs > 8)
        return 1;
    v = 16 / maxs > DG_FUSED_MAXVEC ? DG_FUSED_MAXVEC : 16 / maxs;
    for (; v > 1; v /= 2) {
        int ok = 1;
        for (k = 0; k < d->nval && ok; k++) {
            const dg_fused_val *x = &d->val[k];
            const int isz = dg_dtype_size(x->dtype);
            if (in_memory(x->kind) && x->strides[0] == isz)
                ok = (uintptr_t)x->data % (uintptr_t)(v * isz) == 0;
        }
        if (ok)
            break;
    }
    return v;
}

/* The test that value v (of dtype dt) is odd: dg_scalar.h's dg_fpe_odd_*;
 * `under`: underflow counts for this step (its loop rounds tiny results):
 * the thresholds fpt4 / fpt8 of the smallest normals where underflow is
 * watched, else 0 (put_fpe_head). */
static void put_odd(src_buf *b, int v, int dt, int under)
{
    const char *t4 = under ? "fpt4" : "0.0f", *t8 = under ? "fpt8" : "0.0";
    switch (dt) {
    case DG_FLOAT16: put(b, "dg_fpe_odd_h(v%d, %s)", v, under ? "fpu" : "0"); break;
    case DG_FLOAT32: put(b, "dg_fpe_odd_f(v%d, %s)", v, t4); break;
    case DG_FLOAT64: put(b, "dg_fpe_odd_d(v%d, %s)", v, t8); break;
    case DG_COMPLEX64:
        put(b, "(dg_fpe_odd_f(v%d.re, %s) || dg_fpe_odd_f(v%d.im, %s))", v, t4, v, t4);
        break;
    case DG_COMPLEX128:
        put(b, "(dg_fpe_odd_d(v%d.re, %s) || dg_fpe_odd_d(v%d.im, %s))", v, t8, v, t8);
        break;
    default: put(b, "0"); break;
    }
}

/* The cheap test that step st's results are odd (worth the rule): per
 * float output (put_odd), per integer divisor, per cast input. */
static void put_odd_step(src_buf *b, const dg_fused_step *st)
{
    const dg_loop_info *li = &dg_loops[st->loop];
    const int cls = dg_loop_fpe_cls(st->loop), c = cls & 15, nop = li->nin + li->nout;
    const int under = (cls & DG_FPC_UNDER) != 0;
    int k;
    if (c == DG_FPC_INT_DIV || c == DG_FPC_INT_MOD)
        put(b, "(v%d == 0 || v%d == (%s)-1)", st->op[1], st->op[1], ctype[li->dtypes[1]]);
    else if (c == DG_FPC_INT_RECIP)
        put(b, "(v%d == 0)", st->op[0]);
    else if (c == DG_FPC_TO_INT)
        put(b, "!dg_fpe_int_ok(dg_fpe_load(%d, &v%d).re, %d)", li->dtypes[0], st->op[0],
            li->dtypes[1]);
    else
        for (k = li->nin; k < nop; k++) {
            put(b, k > li->nin ? " || " : "(");
            put_odd(b, st->op[k], li->dtypes[k], under);
            put(b, k == nop - 1 ? ")" : "");
        }
}

/* After step st, in the classifier (put_fpe_cold): where its results are
 * odd, the kinds it raised by the software rule (dg_fpe_rule_at) or'ed
 * into fk, as the ahead-of-time kernels do (kernels/dg_fpe.cuh). */
static void put_fpe_check(src_buf *b, const dg_fused_step *st)
{
    const dg_loop_info *li = &dg_loops[st->loop];
    const int cls = dg_loop_fpe_cls(st->loop), nop = li->nin + li->nout;
    int k;
    if ((cls & 15) == DG_FPC_NONE)
        return;
    put(b, "        if (");
    put_odd_step(b, st);
    put(b, ") {\n");
    for (k = 0; k < nop; k++)
        put(b, "            const %s q%d_ = v%d;\n", ctype[li->dtypes[k]], k, st->op[k]);
    put(b, "            const int dt_[4] = {");
    for (k = 0; k < 4; k++)
        put(b, "%d%s", k < nop ? li->dtypes[k] : -1, k < 3 ? ", " : "");
    put(b, "};\n            const void *const p_[4] = {");
    for (k = 0; k < 4; k++)
        put(b, "&q%d_%s", k < nop ? k : 0, k < 3 ? ", " : "");
    put(b, "};\n            fk |= dg_fpe_rule_of(%d, fpu, %d, %d, dt_, p_);\n        }\n", cls,
        li->nin, nop);
}

/* The constants of the checks: fpu, underflow is watched (b->under, set in
 * the source: a call that watches it compiles its own kernel), and the
 * thresholds fpt4 / fpt8 of put_odd. */
static void put_fpe_consts(src_buf *b)
{
    put(b, "    const int fpu = %d;\n"
           "    const float fpt4 = fpu ? 1.17549435e-38f : 0.0f;\n"
           "    const double fpt8 = fpu ? 2.2250738585072014e-308 : 0.0;\n"
           "    (void)fpu;\n    (void)fpt4;\n    (void)fpt8;\n", b->under);
}

/* Where the chain is checked (b->fpe >= 0), at a kernel's start: the action
 * word and the generation read once, the constants, and fk, the kinds the
 * thread's elements raised. */
static void put_fpe_head(src_buf *b)
{
    if (b->fpe < 0)
        return;
    put(b, "    const unsigned fpa = (unsigned)b.w[%d], fpg = (unsigned)(b.w[%d] >> 32);\n",
        b->fpe, b->fpe);
    put_fpe_consts(b);
    put(b, "    unsigned fk = 0;\n");
}

/* At a checked kernel's end: the kinds published (dg_fpe_publish_warp: one
 * publication per warp, where a thread raised any). */
static void put_fpe_tail(src_buf *b)
{
    if (b->fpe < 0)
        return;
    put(b, "    dg_fpe_publish_warp(fpa, fpg, (unsigned long long *)b.w[%d], (uint32_t *)b.w[%d], "
           "(int32_t)b.w[%d], fk);\n", b->fpe + 1, b->fpe + 2, b->fpe + 3);
}

/* 1 if step st's output is not finite wherever its operand k (float) is
 * not (an infinity or a NaN in, one out, whatever the other operand):
 * add, subtract, multiply, divide's dividend, and a few one-input loops,
 * of real floats of one dtype. */
static int passes_odd(const dg_fused_step *st, int k)
{
    const dg_loop_info *li = &dg_loops[st->loop];
    const int dt = li->dtypes[0];
    int j;
    if (dt != DG_FLOAT16 && dt != DG_FLOAT32 && dt != DG_FLOAT64)
        return 0;
    for (j = 0; j < li->nin + li->nout; j++)
        if (li->dtypes[j] != dt)
            return 0;
    switch (li->ufunc) {
    case DG_UF_add:
    case DG_UF_subtract:
    case DG_UF_multiply: return 1;
    case DG_UF_divide: return k == 0;
    case DG_UF_negative:
    case DG_UF_positive:
    case DG_UF_absolute:
    case DG_UF_sqrt:
    case DG_UF_square:
    case DG_UF_sin:
    case DG_UF_cos:
    case DG_UF_tan: return 1;
    default: return 0;
    }
}

/* Which steps' cheap tests the checked kernels run (need[s]).  A step of a
 * float class raises a kind only where its output is not finite, unless
 * underflow is watched (then a tiny output too); where every step that
 * reads that output passes it on (passes_odd) to an output that is tested
 * or passed on in turn, the last test holds wherever this one would, and
 * the element is classified whole (dg_fused_fpe): this one is left out.
 * The chain of benchmarks/errstate_ab.py tests its last step only. */
static void tested_steps(const src_buf *b, const dg_fused_key *d, int *need)
{
    int covered[DG_FUSED_MAXVALS] = {0}; /* value k's non-finite results reach a test */
    int s, t, k, j;
    for (s = d->nstep - 1; s >= 0; s--) {
        const dg_fused_step *st = &d->step[s];
        const dg_loop_info *li = &dg_loops[st->loop];
        const int c = dg_loop_fpe_cls(st->loop) & 15;
        int used = 0, passed = 1;
        need[s] = c != DG_FPC_NONE;
        if (li->nout != 1)
            continue;
        /* who reads the output: each later step must pass it to a covered value */
        for (t = s + 1; t < d->nstep; t++) {
            const dg_fused_step *u = &d->step[t];
            const dg_loop_info *lu = &dg_loops[u->loop];
            for (k = 0; k < lu->nin; k++)
                if (u->op[k] == st->op[li->nin]) {
                    used = 1;
                    passed &= lu->nout == 1 && passes_odd(u, k) && covered[u->op[lu->nin]];
                }
        }
        j = st->op[li->nin];
        covered[j] = need[s] || (used && passed);
        if (need[s] && !b->under && used && passed && d->val[j].kind == DG_FV_TEMP &&
            (c == DG_FPC_FLOAT || c == DG_FPC_POLE || c == DG_FPC_POLE_A0 ||
             c == DG_FPC_POLE_B0))
            need[s] = 0;
    }
}

/* The steps of one element, values v<k> (declared by the caller); each
 * output stored as `store` says: "o" at its byte offset o<k> (the general
 * kernel), "i" at element i (the contiguous kernel's tail), "p" into its
 * pack p<k>.v[e] (the contiguous kernel's vectors), "n" nowhere (the
 * classifier, dg_fused_fpe, put_fpe_cold).  Where the chain is checked
 * (b->fpe >= 0), the kernels' steps or each one's cheap test (put_odd)
 * into fo_, and an element for which one holds is classified again, out of
 * line, from its inputs (still in registers: the outputs are stored by
 * then); the classifier's steps (store "n") classify each step's odd
 * results (put_fpe_check). */
static void put_steps(src_buf *b, const dg_fused_key *d, const int *word, char store)
{
    char fn[64];
    int need[DG_FUSED_MAXSTEPS];
    int s, k;
    if (b->fpe >= 0 && store != 'n') {
        tested_steps(b, d, need);
        put(b, "        bool fo_ = false;\n");
    }
    for (s = 0; s < d->nstep; s++) {
        const dg_fused_step *st = &d->step[s];
        const dg_loop_info *li = &dg_loops[st->loop];
        step_fn(d, st, fn, sizeof fn);
        if (li->nout == 1 && li->nin == 1)
            put(b, "        v%d = %s(v%d);\n", st->op[1], fn, st->op[0]);
        else if (li->nout == 1)
            put(b, "        v%d = %s(v%d, v%d);\n", st->op[2], fn, st->op[0], st->op[1]);
        else if (li->nin == 1)
            put(b, "        %s(v%d, &v%d, &v%d);\n", fn, st->op[0], st->op[1], st->op[2]);
        else
            put(b, "        %s(v%d, v%d, &v%d, &v%d);\n", fn, st->op[0], st->op[1], st->op[2],
                st->op[3]);
        if (b->fpe >= 0 && store == 'n') {
            put_fpe_check(b, st);
        } else if (b->fpe >= 0 && need[s]) {
            put(b, "        fo_ = fo_ | ");
            put_odd_step(b, st);
            put(b, ";\n");
        }
        for (k = li->nin; k < li->nin + li->nout; k++) {
            const int o = st->op[k];
            const dg_fused_kval *v = &d->val[o];
            if (v->kind != DG_FV_OUT || store == 'n')
                continue;
            if (store == 'p')
                put(b, "        p%d.v[e] = v%d;\n", o, o);
            else if (store == 'i')
                put(b, "        ((%s *)b.w[%d])[i] = v%d;\n", ctype[v->dtype], word[o], o);
            else
                put(b, "        *(%s *)((char *)b.w[%d] + o%d) = v%d;\n", ctype[v->dtype], word[o],
                    o, o);
        }
    }
    if (b->fpe >= 0 && store != 'n') {
        int n = 0;
        put(b, "        if (fo_)\n            fk |= dg_fused_fpe(");
        for (k = 0; k < d->nval; k++)
            if (d->val[k].kind == DG_FV_IN || d->val[k].kind == DG_FV_SCALAR)
                put(b, "%sv%d", n++ ? ", " : "", k);
        put(b, ");\n");
    }
}

/* Where the chain is checked: dg_fused_fpe, the kinds (DG_FK_*) one
 * element raised, by the software rule, from its inputs and scalars (in
 * value order).  Inline: the kernels call it only for an element whose
 * results are odd, and the compiler shares its steps with the kernel's
 * (a call would hold the kernel's live values across it: 63 registers for
 * the chain of benchmarks/errstate_ab.py where the unchecked kernel takes
 * 32, 88 for Jacobi's streaming kernel where it takes 58). */
static void put_fpe_cold(src_buf *b, const dg_fused_key *d, const int *word)
{
    int k, n = 0;
    if (b->fpe < 0)
        return;
    put(b, "DG_HD unsigned dg_fused_fpe(");
    for (k = 0; k < d->nval; k++)
        if (d->val[k].kind == DG_FV_IN || d->val[k].kind == DG_FV_SCALAR)
            put(b, "%sconst %s v%d", n++ ? ", " : "", ctype[d->val[k].dtype], k);
    put(b, ")\n{\n");
    put_fpe_consts(b);
    put(b, "    unsigned fk = 0;\n");
    for (k = 0; k < d->nval; k++)
        if (d->val[k].kind == DG_FV_TEMP || d->val[k].kind == DG_FV_OUT)
            put(b, "        %s v%d;\n", ctype[d->val[k].dtype], k);
    put_steps(b, d, word, 'n');
    put(b, "    return fk;\n}\n");
}

/* The values of one element of the contiguous kernel, v<k>: an input of
 * stride 0 its value u<k> read once, a dense input element e of its pack p<k>
 * (`load` 'p') or element i of its memory ('i'), a scalar from the argument
 * words; the others declared for the steps. */
static void put_values(src_buf *b, const dg_fused_key *d, const int *word, char load)
{
    int k;
    for (k = 0; k < d->nval; k++) {
        const dg_fused_kval *v = &d->val[k];
        const char *t = ctype[v->dtype];
        if (v->kind == DG_FV_IN && v->zero)
            put(b, "        const %s v%d = u%d;\n", t, k, k);
        else if (v->kind == DG_FV_IN && load == 'p')
            put(b, "        const %s v%d = p%d.v[e];\n", t, k, k);
        else if (v->kind == DG_FV_IN)
            put(b, "        const %s v%d = ((const %s *)b.w[%d])[i];\n", t, k, t, word[k]);
        else if (v->kind == DG_FV_SCALAR)
            put(b, "        const %s v%d = *(const %s *)&b.w[%d];\n", t, k, t, word[k]);
        else
            put(b, "        %s v%d;\n", t, k);
    }
}

/* The contiguous kernel (vec_width V > 1): a thread moves V elements of
 * each dense value with one aligned access of V * itemsize bytes (a pack:
 * the raw word and the V elements over it), computes the steps element by
 * element, and stores each output's pack whole; the n % V last elements
 * one each (a grid-stride loop too, so any launch covers them); inputs of
 * stride 0 are read once. */
static void put_contig(src_buf *b, const dg_fused_key *d, const int *word, int V)
{
    int k;
    put(b, "template <int B> struct dg_fraw;\n"
           "template <> struct dg_fraw<1> { typedef unsigned char t; };\n"
           "template <> struct dg_fraw<2> { typedef unsigned short t; };\n"
           "template <> struct dg_fraw<4> { typedef unsigned int t; };\n"
           "template <> struct dg_fraw<8> { typedef uint2 t; };\n"
           "template <> struct dg_fraw<16> { typedef uint4 t; };\n"
           "template <class T, int V> union dg_fpack { typename dg_fraw<sizeof(T) * V>::t r; "
           "T v[V]; };\n");
    if (d->blocks > 0)
        put(b, "extern \"C\" __global__ void __launch_bounds__(256, %d)\n", d->blocks);
    else
        put(b, "extern \"C\" __global__ void __launch_bounds__(256)\n");
    put(b, "dg_fused(const __grid_constant__ dg_fused_args b)\n{\n"
           "    const long long n = (long long)b.w[0], nvec = n / %d;\n"
           "    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
           "    const long long step = (long long)gridDim.x * blockDim.x;\n", V);
    put_fpe_head(b);
    for (k = 0; k < d->nval; k++) {
        const dg_fused_kval *v = &d->val[k];
        if (v->kind == DG_FV_IN && v->zero)
            put(b, "    const %s u%d = *(const %s *)b.w[%d];\n", ctype[v->dtype], k,
                ctype[v->dtype], word[k]);
    }
    put(b, "    for (long long j = first; j < nvec; j += step) {\n");
    for (k = 0; k < d->nval; k++) {
        const dg_fused_kval *v = &d->val[k];
        if (!in_memory(v->kind) || v->zero)
            continue;
        put(b, "        dg_fpack<%s, %d> p%d;\n", ctype[v->dtype], V, k);
        if (v->kind == DG_FV_IN)
            put(b, "        p%d.r = ((const typename dg_fraw<sizeof(%s) * %d>::t *)b.w[%d])[j];\n",
                k, ctype[v->dtype], V, word[k]);
    }
    put(b, "#pragma unroll\n        for (int e = 0; e < %d; e++) {\n", V);
    put_values(b, d, word, 'p');
    put_steps(b, d, word, 'p');
    put(b, "        }\n");
    for (k = 0; k < d->nval; k++) {
        const dg_fused_kval *v = &d->val[k];
        if (v->kind == DG_FV_OUT)
            put(b, "        ((typename dg_fraw<sizeof(%s) * %d>::t *)b.w[%d])[j] = p%d.r;\n",
                ctype[v->dtype], V, word[k], k);
    }
    put(b, "    }\n    for (long long i = nvec * %d + first; i < n; i += step) {\n", V);
    put_values(b, d, word, 'i');
    put_steps(b, d, word, 'i');
    put(b, "    }\n");
    put_fpe_tail(b);
    put(b, "}\n");
}

/* The shortest last axis the row kernel takes (shorter rows leave most of a
 * tile's threads idle: the general kernel serves them). */
#define DG_FUSED_ROW_MIN 256

/* DGARRAY_FUSED_ROWS="items,blocks,per_sm,rr" (a measuring aid, as
 * benchmarks/fused_rows.py uses it; unset in normal use), read once per
 * kernel source: the row kernel's elements per thread (0: row_items'
 * choice), the least resident blocks per SM its launch bounds ask of the
 * compiler (0: none), its blocks per SM in the launch (16), and the streaming
 * kernel's rows a step (1 or 2; 0: the streaming kernel off, the row kernel
 * serves its chains).  Read at each call, not once per process, so that one
 * process can compare settings. */
typedef struct rows_tuning {
    int items, blocks, per_sm, rr;
} rows_tuning;

static rows_tuning rows_tuning_read(void)
{
    rows_tuning t = {0, 0, 16, 2};
    const char *e = getenv("DGARRAY_FUSED_ROWS");
    int v[4] = {0, 0, 16, 2};
    if (e != NULL)
        (void)sscanf(e, "%d,%d,%d,%d", &v[0], &v[1], &v[2], &v[3]);
    t.items = v[0] > 0 && v[0] <= 16 ? v[0] : 0;
    t.blocks = v[1] > 0 && v[1] <= 8 ? v[1] : 0;
    t.per_sm = v[2] > 0 ? v[2] : 16;
    t.rr = v[3] < 0 ? 0 : v[3] > 2 ? 2 : v[3];
    return t;
}

/* DGARRAY_FUSED_CONTIG="blocks" (a measuring aid, unset in normal use): the
 * least resident blocks per SM the contiguous kernel's launch bounds ask of
 * the compiler (1 to 8; 0 or unset: none, the compiler's own register
 * count).  Read at each call, as DGARRAY_FUSED_ROWS. */
static int contig_blocks_read(void)
{
    const char *e = getenv("DGARRAY_FUSED_CONTIG");
    int v = 0;
    if (e != NULL)
        (void)sscanf(e, "%d", &v);
    return v > 0 && v <= 8 ? v : 0;
}

/* Elements per thread of a tile of the row kernel: 32 bytes of the widest
 * input (4 to 8 elements), so that each SM keeps enough loads in flight to
 * cover the memory's latency (4 float32 each, 2048 threads: 32 KiB, about
 * what an H200's SM needs at full bandwidth while loads are in flight only
 * part of the time). */
static int row_items(const dg_fused_desc *d, const rows_tuning *t)
{
    int k, maxs = 1, items;
    if (t->items > 0)
        return t->items;
    for (k = 0; k < d->nval; k++)
        if (d->val[k].kind == DG_FV_IN && dg_dtype_size(d->val[k].dtype) > maxs)
            maxs = dg_dtype_size(d->val[k].dtype);
    items = 32 / maxs;
    return items < 4 ? 4 : items > 8 ? 8 : items;
}

/* The row kernel, for a space whose last axis is long (nd >= 1) and whose
 * memory is not dense and aligned (Jacobi's shifted slices, a transposed or
 * strided view): each block takes tiles of I x blockDim.x neighbouring
 * elements of rows blockIdx.y, blockIdx.y + gridDim.y, ...; a row's offsets
 * come from its leading coordinates once per row (divisions only past two
 * axes), an element's from its column alone.  Each thread loads the inputs
 * of its I elements (row_items) before it computes and stores any, so that several
 * loads are in flight (a fused chain's output is never another element of an
 * input: dg_fuse.c keeps overlapping views apart). */
static void put_rows(src_buf *b, const dg_fused_key *d, const int *word, int I, int blocks)
{
    const int nd = d->ndim;
    int k, a;
    if (blocks > 0)
        put(b, "extern \"C\" __global__ void __launch_bounds__(256, %d)\n", blocks);
    else
        put(b, "extern \"C\" __global__ void __launch_bounds__(256)\n");
    put(b, "dg_fused(const __grid_constant__ dg_fused_args b)\n{\n"
           "    const long long cols = (long long)b.w[%d];\n"
           "    const long long rows = (long long)b.w[0] / cols;\n"
           "    const long long cs = (long long)blockIdx.x * %d * blockDim.x + threadIdx.x;\n",
        nd, I);
    put_fpe_head(b);
    put(b, "    for (long long row = blockIdx.y; row < rows; row += gridDim.y) {\n");
    /* the row's leading coordinates */
    if (nd > 1) {
        put(b, "        long long r = row;\n");
        for (a = nd - 2; a > 0; a--)
            put(b, "        const long long c%d = r %% (long long)b.w[%d];\n"
                   "        r /= (long long)b.w[%d];\n", a, 1 + a, 1 + a);
        put(b, "        const long long c0 = r;\n");
    }
    for (k = 0; k < d->nval; k++) {
        if (word[k] < 0 || !in_memory(d->val[k].kind))
            continue;
        put(b, "        const long long r%d = 0", k);
        for (a = 0; a < nd - 1; a++)
            put(b, " + c%d * (long long)b.w[%d]", a, word[k] + 1 + a);
        put(b, ";\n        const long long l%d = (long long)b.w[%d];\n", k, word[k] + nd);
    }
    /* the inputs of the thread's elements, loaded first */
    put(b, "        bool on[%d];\n", I);
    for (k = 0; k < d->nval; k++)
        if (d->val[k].kind == DG_FV_IN)
            put(b, "        %s x%d[%d];\n", ctype[d->val[k].dtype], k, I);
    put(b, "#pragma unroll\n        for (int j = 0; j < %d; j++) {\n"
           "            const long long c = cs + (long long)j * blockDim.x;\n"
           "            on[j] = c < cols;\n"
           "            if (on[j]) {\n", I);
    for (k = 0; k < d->nval; k++)
        if (d->val[k].kind == DG_FV_IN)
            put(b, "                x%d[j] = *(const %s *)((const char *)b.w[%d] + r%d + c * l%d);\n",
                k, ctype[d->val[k].dtype], word[k], k, k);
    put(b, "            }\n        }\n"
           "#pragma unroll\n        for (int j = 0; j < %d; j++) {\n"
           "            const long long c = cs + (long long)j * blockDim.x;\n"
           "            if (!on[j])\n                continue;\n", I);
    for (k = 0; k < d->nval; k++) {
        const dg_fused_kval *v = &d->val[k];
        const char *t = ctype[v->dtype];
        if (v->kind == DG_FV_IN)
            put(b, "        const %s v%d = x%d[j];\n", t, k, k);
        else if (v->kind == DG_FV_SCALAR)
            put(b, "        const %s v%d = *(const %s *)&b.w[%d];\n", t, k, t, word[k]);
        else if (v->kind == DG_FV_OUT)
            put(b, "        const long long o%d = r%d + c * l%d;\n        %s v%d;\n", k, k, k,
                t, k);
        else
            put(b, "        %s v%d;\n", t, k);
    }
    put_steps(b, d, word, 'o');
    put(b, "        }\n    }\n");
    put_fpe_tail(b);
    put(b, "}\n");
}

/* The streaming kernel's band (rows a thread walks down), its elements per
 * thread, and the most rows apart the members of one family may be. */
#define DG_FUSED_BAND 32
#define DG_FUSED_STREAM_ITEMS 4
#define DG_FUSED_SPAN 4

/* The families of a 2-d space's inputs: inputs of one dtype and strides
 * whose addresses differ by whole rows (Jacobi's north, centre and south
 * slices of one grid), so that member k at row r is its family's anchor (its
 * first input) at row r + off[k], off[k] within [lo, hi] of the anchor, hi -
 * lo <= DG_FUSED_SPAN.  fam[k]: the anchor of k's family where the family has
 * two members or more, else -1.  Returns the number of such families. */
static int stream_families(const dg_fused_desc *d, int *fam, int64_t *off, int64_t *lo,
                           int64_t *hi)
{
    int n[DG_FUSED_MAXVALS], k, j, nf = 0;
    for (k = 0; k < d->nval; k++) {
        const dg_fused_val *v = &d->val[k];
        const int64_t s0 = v->strides[0];
        fam[k] = -1;
        off[k] = lo[k] = hi[k] = 0;
        n[k] = 0;
        if (v->kind != DG_FV_IN || s0 == 0)
            continue;
        for (j = 0; j < k; j++) {
            const dg_fused_val *a = &d->val[j];
            const int64_t diff = (int64_t)((intptr_t)v->data - (intptr_t)a->data);
            int64_t q;
            if (fam[j] != j || a->dtype != v->dtype || a->strides[0] != s0 ||
                a->strides[1] != v->strides[1] || diff % s0 != 0)
                continue;
            q = diff / s0;
            if ((q > hi[j] ? q : hi[j]) - (q < lo[j] ? q : lo[j]) > DG_FUSED_SPAN)
                continue;
            fam[k] = j;
            off[k] = q;
            lo[j] = q < lo[j] ? q : lo[j];
            hi[j] = q > hi[j] ? q : hi[j];
            n[j]++;
            break;
        }
        if (j == k) {
            fam[k] = k;
            n[k] = 1;
        }
    }
    for (k = 0; k < d->nval; k++) {
        if (fam[k] >= 0 && n[fam[k]] < 2)
            fam[k] = -1;
        nf += fam[k] == k;
    }
    return nf;
}

/* The streaming kernel, for a 2-d space whose inputs hold families (rows
 * of one memory a few rows apart: Jacobi's step): each thread takes
 * DG_FUSED_STREAM_ITEMS columns a block apart and walks down a band of
 * DG_FUSED_BAND rows, RR rows a step, keeping each family's rows r + lo ..
 * r + RR - 1 + hi in registers, so that each row of a family is read once
 * per band (instead of once per member: the row kernel reads Jacobi's grid
 * three times, through L2); bands a grid stride apart.  The other inputs
 * are read at each row, as the row kernel reads them.  A step loads every
 * input of its RR rows before it computes and stores any (RR = 2: twice the
 * loads in flight of a thread, which waits for each step's loads). */
static void put_stream(src_buf *b, const dg_fused_key *d, const int *word)
{
    const int I = DG_FUSED_STREAM_ITEMS, RR = d->rr;
    int fam[DG_FUSED_MAXVALS], off[DG_FUSED_MAXVALS], lo[DG_FUSED_MAXVALS], hi[DG_FUSED_MAXVALS];
    int k, i, rr;
    for (k = 0; k < d->nval; k++) {
        fam[k] = d->val[k].fam;
        off[k] = d->val[k].off;
        lo[k] = d->val[k].lo;
        hi[k] = d->val[k].hi;
    }
    put(b, "extern \"C\" __global__ void __launch_bounds__(256)\n"
           "dg_fused(const __grid_constant__ dg_fused_args b)\n{\n"
           "    const long long rows = (long long)b.w[1], cols = (long long)b.w[2];\n"
           "    const long long cs = (long long)blockIdx.x * %d * blockDim.x + threadIdx.x;\n"
           "    long long c[%d];\n    bool on[%d];\n"
           "#pragma unroll\n    for (int j = 0; j < %d; j++) {\n"
           "        c[j] = cs + (long long)j * blockDim.x;\n        on[j] = c[j] < cols;\n    }\n",
        I, I, I, I);
    put_fpe_head(b);
    /* each family's window: f<anchor>_<row - r - lo>[column], RR - 1 + hi - lo rows */
    for (k = 0; k < d->nval; k++)
        if (fam[k] == k)
            for (i = 0; i < RR + (hi[k] - lo[k]); i++)
                put(b, "    %s f%d_%d[%d];\n", ctype[d->val[k].dtype], k, i, I);
    for (k = 0; k < d->nval; k++)
        if (d->val[k].kind == DG_FV_IN && fam[k] < 0)
            for (rr = 0; rr < RR; rr++)
                put(b, "    %s x%d_%d[%d];\n", ctype[d->val[k].dtype], k, rr, I);
    put(b, "    for (long long rb = (long long)blockIdx.y * %d; rb < rows;\n"
           "         rb += (long long)gridDim.y * %d) {\n"
           "        const long long re = rb + %d < rows ? rb + %d : rows;\n",
        DG_FUSED_BAND, DG_FUSED_BAND, DG_FUSED_BAND, DG_FUSED_BAND);
    /* the window's first rows, rb + lo .. rb + hi - 1 */
    put(b, "#pragma unroll\n        for (int j = 0; j < %d; j++) {\n"
           "            if (!on[j])\n                continue;\n", I);
    for (k = 0; k < d->nval; k++)
        if (fam[k] == k)
            for (i = 0; i < (hi[k] - lo[k]); i++)
                put(b, "            f%d_%d[j] = *(const %s *)((const char *)b.w[%d] + (rb + %lld) * "
                       "(long long)b.w[%d] + c[j] * (long long)b.w[%d]);\n",
                    k, i, ctype[d->val[k].dtype], word[k], (long long)lo[k] + i, word[k] + 1,
                    word[k] + 2);
    put(b, "        }\n        for (long long r = rb; r < re; r += %d) {\n"
           "#pragma unroll\n            for (int j = 0; j < %d; j++) {\n"
           "                if (!on[j])\n                    continue;\n", RR, I);
    /* the rows that enter the windows, and the other inputs, of the step's rows */
    for (rr = 0; rr < RR; rr++) {
        if (rr > 0)
            put(b, "                if (r + %d < re) {\n", rr);
        for (k = 0; k < d->nval; k++) {
            const dg_fused_kval *v = &d->val[k];
            if (fam[k] == k)
                put(b, "                f%d_%d[j] = *(const %s *)((const char *)b.w[%d] + (r + %lld) "
                       "* (long long)b.w[%d] + c[j] * (long long)b.w[%d]);\n",
                    k, (hi[k] - lo[k]) + rr, ctype[v->dtype], word[k],
                    (long long)hi[k] + rr, word[k] + 1, word[k] + 2);
            else if (v->kind == DG_FV_IN && fam[k] < 0)
                put(b, "                x%d_%d[j] = *(const %s *)((const char *)b.w[%d] + (r + %d) * "
                       "(long long)b.w[%d] + c[j] * (long long)b.w[%d]);\n",
                    k, rr, ctype[v->dtype], word[k], rr, word[k] + 1, word[k] + 2);
        }
        if (rr > 0)
            put(b, "                }\n");
    }
    put(b, "            }\n");
    for (rr = 0; rr < RR; rr++) {
        put(b, "#pragma unroll\n            for (int j = 0; j < %d; j++) {\n"
               "                if (!on[j]%s)\n                    continue;\n"
               "        const long long r_ = r + %d;\n",
            I, rr > 0 ? (rr == 1 ? " || r + 1 >= re" : " || r + 2 >= re") : "", rr);
        for (k = 0; k < d->nval; k++) {
            const dg_fused_kval *v = &d->val[k];
            const char *t = ctype[v->dtype];
            if (v->kind == DG_FV_IN && fam[k] >= 0)
                put(b, "        const %s v%d = f%d_%d[j];\n", t, k, fam[k],
                    off[k] - lo[fam[k]] + rr);
            else if (v->kind == DG_FV_IN)
                put(b, "        const %s v%d = x%d_%d[j];\n", t, k, k, rr);
            else if (v->kind == DG_FV_SCALAR)
                put(b, "        const %s v%d = *(const %s *)&b.w[%d];\n", t, k, t, word[k]);
            else if (v->kind == DG_FV_OUT)
                put(b, "        const long long o%d = r_ * (long long)b.w[%d] + c[j] * "
                       "(long long)b.w[%d];\n        %s v%d;\n", k, word[k] + 1, word[k] + 2, t, k);
            else
                put(b, "        %s v%d;\n", t, k);
        }
        put_steps(b, d, word, 'o');
        put(b, "            }\n");
    }
    /* the windows move down RR rows */
    put(b, "#pragma unroll\n            for (int j = 0; j < %d; j++) {\n", I);
    for (k = 0; k < d->nval; k++)
        if (fam[k] == k)
            for (i = 0; i < (hi[k] - lo[k]); i++)
                put(b, "                f%d_%d[j] = f%d_%d[j];\n", k, i, k, i + RR);
    put(b, "            }\n        }\n    }\n");
    put_fpe_tail(b);
    put(b, "}\n");
}

/* The first argument word of each value of key (-1: none, a temporary) into
 * word; returns the words of the extents and values (the 4 words of error
 * noting come after them). */
static int key_words(const dg_fused_key *key, int *word)
{
    int nw = 1 + key->ndim, k;
    for (k = 0; k < key->nval; k++) {
        word[k] = -1;
        if (in_memory(key->val[k].kind)) {
            word[k] = nw;
            nw += 1 + key->ndim;
        } else if (key->val[k].kind == DG_FV_SCALAR) {
            word[k] = nw;
            nw += 2;
        }
    }
    return nw;
}

dg_status dg_fused_key_of(const dg_fused_desc *d, int check_fpe, dg_fused_key *key,
                          dg_error *err)
{
    int word[DG_FUSED_MAXVALS];
    const int nd = d->ndim;
    int k, nw;
    rows_tuning tune;

    memset(key, 0, sizeof(*key));
    key->ndim = nd;
    key->nval = d->nval;
    key->nstep = d->nstep;
    key->check = check_fpe;
    for (k = 0; k < d->nval; k++) {
        key->val[k].kind = (int8_t)d->val[k].kind;
        key->val[k].dtype = (int8_t)d->val[k].dtype;
        key->val[k].zero = (int8_t)zero_strides(d, k);
        key->val[k].fam = -1;
    }
    for (k = 0; k < d->nstep; k++) {
        key->step[k].loop = d->step[k].loop;
        memcpy(key->step[k].op, d->step[k].op, sizeof key->step[k].op);
    }
    nw = key_words(key, word) + (check_fpe ? 4 : 0);
    if (nw > DG_FUSED_MAXWORDS)
        return dg_error_set(err, DG_ERR_NOTIMPL, -1, "a fused chain with too many operands for "
                            "one kernel");
    key->vec = vec_width(d);
    key->per_sm = 16;
    if (key->vec > 1) {
        key->kernel = DG_FUSED_CONTIG;
        key->blocks = contig_blocks_read();
        return DG_OK;
    }
    tune = rows_tuning_read();
    if (nd == 2 && d->shape[1] >= DG_FUSED_ROW_MIN && d->shape[1] < ((int64_t)1 << 40) &&
        d->shape[0] >= 2 * DG_FUSED_SPAN && tune.rr > 0) {
        int fam[DG_FUSED_MAXVALS];
        int64_t off[DG_FUSED_MAXVALS], lo[DG_FUSED_MAXVALS], hi[DG_FUSED_MAXVALS];
        if (stream_families(d, fam, off, lo, hi) > 0) {
            key->kernel = DG_FUSED_STREAM;
            key->items = DG_FUSED_STREAM_ITEMS;
            key->rr = tune.rr;
            for (k = 0; k < d->nval; k++) { /* within +-DG_FUSED_SPAN */
                key->val[k].fam = (int8_t)fam[k];
                key->val[k].off = (int8_t)off[k];
                key->val[k].lo = (int8_t)lo[k];
                key->val[k].hi = (int8_t)hi[k];
            }
            return DG_OK;
        }
    }
    if (nd >= 1 && d->shape[nd - 1] >= DG_FUSED_ROW_MIN && d->shape[nd - 1] < ((int64_t)1 << 40)) {
        key->kernel = DG_FUSED_ROWS;
        key->items = row_items(d, &tune);
        key->blocks = tune.blocks;
        key->per_sm = tune.per_sm;
    }
    return DG_OK;
}

void dg_fused_args_of(const dg_fused_desc *d, const dg_fused_key *key, dg_fused_args *args)
{
    const int nd = d->ndim;
    int word[DG_FUSED_MAXVALS];
    int nw = key_words(key, word), k, a;

    args->w[0] = (uint64_t)dg_shape_size(nd, d->shape);
    for (a = 0; a < nd; a++)
        args->w[1 + a] = (uint64_t)d->shape[a];
    for (k = 0; k < d->nval; k++) {
        const dg_fused_val *v = &d->val[k];
        if (in_memory(v->kind)) {
            args->w[word[k]] = (uint64_t)(uintptr_t)v->data;
            for (a = 0; a < nd; a++)
                args->w[word[k] + 1 + a] = (uint64_t)v->strides[a];
        } else if (v->kind == DG_FV_SCALAR) {
            memcpy(&args->w[word[k]], v->scalar, 16);
        }
    }
    args->fpe_word = -1;
    if (key->check) {
        args->fpe_word = nw;
        memset(&args->w[nw], 0, 4 * sizeof args->w[0]);
        nw += 4;
    }
    args->nwords = nw;
    args->vec = key->vec;
    args->items = key->items;
    args->band = key->kernel == DG_FUSED_STREAM ? DG_FUSED_BAND : 0;
    args->per_sm = key->per_sm;
    args->cols = nd > 0 ? d->shape[nd - 1] : 1;
    args->rows = args->cols > 0 ? (int64_t)args->w[0] / args->cols : 0;
}

uint64_t dg_fused_key_hash(const dg_fused_key *key)
{
    /* FNV-1a's steps over 8 bytes at a time (a launch hashes its key: about
     * 120 multiplies instead of 940), the high half folded into the low */
    const unsigned char *p = (const unsigned char *)key;
    uint64_t h = 14695981039346656037ULL, w;
    size_t i;
    for (i = 0; i + 8 <= sizeof(*key); i += 8) {
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 1099511628211ULL;
    }
    for (; i < sizeof(*key); i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h ^ (h >> 32);
}

/* The general kernel (DG_FUSED_GENERAL): one thread per element of any space.
 * Each thread's coordinates c<a> of element i, and s<a> of the grid's
 * stride, found by division once; each step of the loop adds the stride's
 * coordinates with carries (one pass: s<a> < extent<a>), instead of
 * dividing i by every extent for every element. */
static void put_general(src_buf *b, const dg_fused_key *d, const int *word)
{
    const int nd = d->ndim;
    int k, a;
    put(b, "extern \"C\" __global__ void __launch_bounds__(256)\n"
           "dg_fused(const __grid_constant__ dg_fused_args b)\n{\n"
           "    const long long n = (long long)b.w[0];\n"
           "    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
           "    const long long step = (long long)gridDim.x * blockDim.x;\n");
    put_fpe_head(b);
    for (a = 0; a < nd; a++)
        put(b, "    long long c%d, s%d;\n", a, a);
    put(b, "    {\n        long long r = i, t = step;\n");
    for (a = nd - 1; a > 0; a--)
        put(b, "        c%d = r %% (long long)b.w[%d]; r /= (long long)b.w[%d];\n"
               "        s%d = t %% (long long)b.w[%d]; t /= (long long)b.w[%d];\n",
            a, 1 + a, 1 + a, a, 1 + a, 1 + a);
    if (nd > 0)
        put(b, "        c0 = r;\n        s0 = t;\n");
    put(b, "        (void)r;\n        (void)t;\n    }\n"
           "    for (; i < n; i += step) {\n");
    /* byte offsets of the memory values */
    for (k = 0; k < d->nval; k++) {
        if (word[k] < 0 || !in_memory(d->val[k].kind))
            continue;
        put(b, "        const long long o%d = 0", k);
        for (a = 0; a < nd; a++)
            put(b, " + c%d * (long long)b.w[%d]", a, word[k] + 1 + a);
        put(b, ";\n");
    }
    /* the next element's coordinates */
    if (nd > 0) {
        put(b, "        {\n            long long carry = 0;\n");
        for (a = nd - 1; a > 0; a--)
            put(b, "            c%d += s%d + carry;\n"
                   "            carry = c%d >= (long long)b.w[%d];\n"
                   "            if (carry)\n                c%d -= (long long)b.w[%d];\n",
                a, a, a, 1 + a, a, 1 + a);
        put(b, "            c0 += s0 + carry;\n        }\n");
    }
    /* inputs and scalars, read before any step stores */
    for (k = 0; k < d->nval; k++) {
        const dg_fused_kval *v = &d->val[k];
        const char *t = ctype[v->dtype];
        if (v->kind == DG_FV_IN)
            put(b, "        const %s v%d = *(const %s *)((const char *)b.w[%d] + o%d);\n", t, k,
                t, word[k], k);
        else if (v->kind == DG_FV_SCALAR)
            put(b, "        const %s v%d = *(const %s *)&b.w[%d];\n", t, k, t, word[k]);
        else
            put(b, "        %s v%d;\n", t, k);
    }
    put_steps(b, d, word, 'o');
    put(b, "    }\n");
    put_fpe_tail(b);
    put(b, "}\n");
}

dg_status dg_fused_key_source(const dg_fused_key *key, char *buf, size_t cap, dg_error *err)
{
    src_buf b = {buf, cap, 0, 1, -1, key->check == 2};
    int word[DG_FUSED_MAXVALS];
    const int nw = key_words(key, word);

    if (key->check)
        b.fpe = nw;
    put(&b, "#define DG_SCALAR_PARTS %d\n"
            "#include \"dg_scalar.h\"\n"
            "struct dg_fused_args { unsigned long long w[%d]; };\n",
        scalar_parts(key), nw + (key->check ? 4 : 0));
    put_fpe_cold(&b, key, word);
    switch (key->kernel) {
    case DG_FUSED_CONTIG: put_contig(&b, key, word, key->vec); break;
    case DG_FUSED_STREAM: put_stream(&b, key, word); break;
    case DG_FUSED_ROWS: put_rows(&b, key, word, key->items, key->blocks); break;
    default: put_general(&b, key, word); break;
    }
    if (!b.ok)
        return dg_error_set(err, DG_ERR_NOTIMPL, -1, "a fused chain too long for one kernel");
    return DG_OK;
}

dg_status dg_fused_cuda_source(const dg_fused_desc *d, char *buf, size_t cap, int check_fpe,
                               dg_fused_args *args, dg_error *err)
{
    dg_fused_key key;
    DG_CHECK(dg_fused_key_of(d, check_fpe, &key, err));
    dg_fused_args_of(d, &key, args);
    return dg_fused_key_source(&key, buf, cap, err);
}
