/*
** ops/control.c: the print op (tf.print). Stateful, so a traced function
** prints at every call and pruning keeps it even though nothing reads it.
*/
#include <string.h>
#include "../op.h"
#include "../device.h"
#include "../shape.h"
#include "../cpu/cpu.h"

static ltf_status infer_print(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)in; (void)nin; (void)out; (void)maxout;
    *nout = 0;
    ltf_status st = ltf_attrs_check_str(ctx, def->name, a);   /* the separator */
    if (st != LTF_OK || !a->i[2]) return st;
    /* with options: 'sep' NUL 'end' NUL within the attribute */
    size_t n = strlen(a->s) + 1;
    if (n >= sizeof a->s || !memchr(a->s + n, '\0', sizeof a->s - n))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'sep' and 'end' are too long (at most %d bytes together)",
                        def->name, LTF_ATTR_STR_MAX - 2);
    if (a->i[0] < -1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'summarize' must be -1 (everything) or >= 0, got %lld",
                        def->name, (long long)a->i[0]);
    if (a->i[1] < 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'output_stream' id must be >= 0, got %lld", def->name,
                        (long long)a->i[1]);
    return LTF_OK;
}

LTF_INTERNAL const ltf_op_def ltf_opdef_print = {
    "print", 0, -1, LTF_OP_STATEFUL | LTF_OP_NOT_DIFFERENTIABLE, 0, infer_print,
    { [LTF_DEVICE_CPU] = ltf_cpu_control_print }, NULL };

/* {==== cond and while (control flow)
** The functions are finished graphs (core/functions.h). Kernels run them
** with ltf_graph_run: the plan executor, no Lua per branch or iteration,
** tapes paused (the op is one entry on a tape; its gradient function below
** differentiates the functions). Inside a trace the op is a node like any
** other (ltf_op_run's graph hook); plans run it through its kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../functions.h"
#include "../grad.h"
#include "../storage.h"
#include "../variable.h"

#define CF_ARGS ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin, const ltf_attrs *a

static const ltf_type *fn_in_type(const ltf_graph *g, int i) { return &g->nodes[g->inputs[i]].out[0]; }
static const ltf_type *fn_out_type(const ltf_graph *g, int k) {
    return &g->nodes[g->outputs[k].node].out[g->outputs[k].out];
}

/* Whether partial types may describe the same tensor. */
static int compatible(int ra, const int64_t *da, int rb, const int64_t *db) {
    if (ra < 0 || rb < 0) return 1;
    if (ra != rb) return 0;
    for (int d = 0; d < ra; d++)
        if (da[d] >= 0 && db[d] >= 0 && da[d] != db[d]) return 0;
    return 1;
}

/* 'x' fits placeholder type 'ty': same dtype, compatible shape. */
static ltf_status check_fits(ltf_ctx *ctx, const char *op, const char *what, int k, const ltf_type *ty,
                             const ltf_tensor *x) {
    char s1[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF];
    if (x->dtype != ty->dtype)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: %s %d has dtype %s, the function expects %s", op, what, k + 1,
                        ltf_dtype_name(x->dtype), ltf_dtype_name(ty->dtype));
    if (!compatible(x->rank, x->dims, ty->rank, ty->dims))
        return ltf_fail(ctx, LTF_ERR_VALUE, "%s: %s %d has shape %s, the function expects %s", op, what, k + 1,
                        ltf_shape_str(x->rank, x->dims, s1, sizeof s1), ltf_shape_str(ty->rank, ty->dims, s2, sizeof s2));
    return LTF_OK;
}

static void merge_type(ltf_type *t, const ltf_type *u) {
    if (t->rank < 0) return;
    if (u->rank != t->rank) {
        t->rank = LTF_UNKNOWN_RANK;
        return;
    }
    for (int d = 0; d < t->rank; d++)
        if (t->dims[d] != u->dims[d]) t->dims[d] = -1;
}

/* pred: a bool scalar (or of unknown rank while tracing), as TensorFlow */
static ltf_status check_pred(ltf_ctx *ctx, const char *op, const ltf_tensor *p) {
    char s[LTF_SHAPE_BUF];
    if (p->dtype != LTF_DTYPE_BOOL || p->rank > 0)
        return ltf_fail(ctx, p->dtype != LTF_DTYPE_BOOL ? LTF_ERR_TYPE : LTF_ERR_INVALID_ARGUMENT,
                        "%s: 'pred' must be a bool scalar, got dtype %s and shape %s", op, ltf_dtype_name(p->dtype),
                        ltf_shape_str(p->rank, p->dims, s, sizeof s));
    return LTF_OK;
}

/* The functions an op names; NULL with the error set. */
static ltf_graph *fn_of(ltf_ctx *ctx, const ltf_op_def *def, int64_t id) { return ltf_fn_get(ctx, id, def->name); }

/* {==== cond */
static ltf_status infer_cond(CF_ARGS, ltf_type *out, int maxout, int *nout) {
    *nout = 0;
    ltf_graph *gt = fn_of(ctx, def, a->i[0]), *gf = gt ? fn_of(ctx, def, a->i[1]) : NULL;
    if (!gf) return ctx->last_status;
    ltf_status st = check_pred(ctx, def->name, in[0]);
    if (st != LTF_OK) return st;
    int64_t nt = a->i[2];
    if (nt != gt->ninputs || nin - 1 - nt != gf->ninputs)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: %d inputs after 'pred' for functions of %d and %d inputs (then-inputs: %lld)", def->name,
                        nin - 1, gt->ninputs, gf->ninputs, (long long)nt);
    for (int i = 0; i < gt->ninputs; i++)
        if ((st = check_fits(ctx, def->name, "input", i, fn_in_type(gt, i), in[1 + i])) != LTF_OK) return st;
    for (int i = 0; i < gf->ninputs; i++)
        if ((st = check_fits(ctx, def->name, "input", (int)nt + i, fn_in_type(gf, i), in[1 + nt + i])) != LTF_OK)
            return st;
    if (gt->noutputs != gf->noutputs)
        return ltf_fail(ctx, LTF_ERR_VALUE, "%s: true_fn returns %d values and false_fn %d", def->name,
                        gt->noutputs, gf->noutputs);
    if (gt->noutputs > maxout)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: %d outputs, room for %d", def->name, gt->noutputs, maxout);
    for (int k = 0; k < gt->noutputs; k++) {
        const ltf_type *u = fn_out_type(gt, k), *v = fn_out_type(gf, k);
        if (u->dtype != v->dtype)
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: output %d is %s in true_fn and %s in false_fn", def->name, k + 1,
                            ltf_dtype_name(u->dtype), ltf_dtype_name(v->dtype));
        out[k] = *u;
        merge_type(&out[k], v);
    }
    *nout = gt->noutputs;
    return LTF_OK;
}

/* Run function 'g' on 'in' (types checked by the op's inference) with the
** tapes paused (the op is one tape entry): its plan, directly. */
static ltf_status run_fn(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *const *in, int nin, ltf_tensor **out, int maxout) {
    if (nin != g->ninputs || maxout < g->noutputs)
        return ltf_fail(ctx, LTF_ERR_INTERNAL, "%s: %d inputs and room for %d outputs for a function of %d and %d",
                        g->name, nin, maxout, g->ninputs, g->noutputs);
    ltf_ctx_pause_tapes(ctx, 1);
    ltf_status st = ltf_plan_run(ctx, g, in, out);
    ltf_ctx_pause_tapes(ctx, 0);
    return st;
}

static ltf_status kernel_cond(CF_ARGS, ltf_tensor **out, int nout) {
    (void)nout;
    ltf_graph *gt = fn_of(ctx, def, a->i[0]), *gf = gt ? fn_of(ctx, def, a->i[1]) : NULL;
    if (!gf) return ctx->last_status;
    uint8_t take = 0;   /* a predicate on a device is copied to the host */
    if (ltf_tensor_read(ctx, in[0], &take, 1) != LTF_OK) return ctx->last_status;
    int nt = (int)a->i[2];
    return take ? run_fn(ctx, gt, in + 1, nt, out, nout) : run_fn(ctx, gf, in + 1 + nt, nin - 1 - nt, out, nout);
}
/* }==== */

/* {==== while */
typedef struct while_shape {
    ltf_graph *gc, *gb;
    int n, nc, nb;
    int64_t maxit;
    int accumulate;
} while_shape;

static ltf_status while_parts(CF_ARGS, while_shape *w) {
    if (!(w->gc = fn_of(ctx, def, a->i[0])) || !(w->gb = fn_of(ctx, def, a->i[1]))) return ctx->last_status;
    int64_t n = a->i[2], nc = a->i[3];
    if (n < 0 || nc < 0 || n + nc > nin || n != w->gb->noutputs || n + nc != w->gc->ninputs ||
        nin - nc != w->gb->ninputs || w->gc->noutputs != 1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: %d inputs (%lld loop variables, %lld cond inputs) do not match a cond function of "
                        "%d inputs and 1 output and a body function of %d inputs and %d outputs",
                        def->name, nin, (long long)n, (long long)nc, w->gc->ninputs, w->gb->ninputs, w->gb->noutputs);
    w->n = (int)n;
    w->nc = (int)nc;
    w->nb = nin - (int)n - (int)nc;
    w->maxit = a->nints >= 1 ? a->ints[0] : -1;
    w->accumulate = a->nints >= 2 && a->ints[1] != 0;
    if (w->maxit < -1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'maximum_iterations' is %lld, must be >= 0", def->name,
                        (long long)w->maxit);
    return LTF_OK;
}

static ltf_status infer_while(CF_ARGS, ltf_type *out, int maxout, int *nout) {
    *nout = 0;
    while_shape w;
    ltf_status st = while_parts(ctx, def, in, nin, a, &w);
    if (st != LTF_OK) return st;
    const ltf_type *p = fn_out_type(w.gc, 0);
    if (p->dtype != LTF_DTYPE_BOOL || p->rank > 0) {
        char s[LTF_SHAPE_BUF];
        return ltf_fail(ctx, p->dtype != LTF_DTYPE_BOOL ? LTF_ERR_TYPE : LTF_ERR_INVALID_ARGUMENT,
                        "%s: cond must return a bool scalar, got dtype %s and shape %s", def->name,
                        ltf_dtype_name(p->dtype), ltf_shape_str(p->rank, p->dims, s, sizeof s));
    }
    for (int i = 0; i < w.n + w.nc; i++)
        if ((st = check_fits(ctx, def->name, i < w.n ? "loop variable" : "input", i, fn_in_type(w.gc, i), in[i])) != LTF_OK)
            return st;
    for (int i = 0; i < w.gb->ninputs; i++) {
        int j = i < w.n ? i : i + w.nc;
        if ((st = check_fits(ctx, def->name, i < w.n ? "loop variable" : "input", j, fn_in_type(w.gb, i), in[j])) != LTF_OK)
            return st;
    }
    for (int k = 0; k < w.n; k++) {   /* the body keeps each loop variable's type */
        const ltf_type *ph = fn_in_type(w.gb, k), *r = fn_out_type(w.gb, k);
        char s1[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF];
        if (r->dtype != ph->dtype)
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: loop variable %d enters the loop as %s and the body returns %s",
                            def->name, k + 1, ltf_dtype_name(ph->dtype), ltf_dtype_name(r->dtype));
        if (!compatible(r->rank, r->dims, ph->rank, ph->dims))
            return ltf_fail(ctx, LTF_ERR_VALUE,
                            "%s: loop variable %d has shape %s before the loop and %s after one iteration "
                            "(give it a shape invariant to let it change)", def->name, k + 1,
                            ltf_shape_str(ph->rank, ph->dims, s1, sizeof s1), ltf_shape_str(r->rank, r->dims, s2, sizeof s2));
    }
    int total = w.accumulate ? 2 * w.n + 1 : w.n;
    if (total > maxout)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: %d outputs, room for %d", def->name, total, maxout);
    for (int k = 0; k < w.n; k++) out[k] = *fn_in_type(w.gb, k);
    if (w.accumulate) {
        for (int k = 0; k < w.n; k++) {
            const ltf_type *ph = fn_in_type(w.gb, k);
            ltf_type *t = &out[w.n + k];
            t->dtype = ph->dtype;
            if (ph->rank < 0 || ph->rank + 1 > LTF_MAX_RANK) {
                t->rank = LTF_UNKNOWN_RANK;
            } else {
                t->rank = ph->rank + 1;
                t->dims[0] = -1;
                for (int d = 0; d < ph->rank; d++) t->dims[d + 1] = ph->dims[d];
            }
        }
        out[2 * w.n].dtype = LTF_DTYPE_INT64;
        out[2 * w.n].rank = 0;
    }
    *nout = total;
    return LTF_OK;
}

static void release_all(ltf_tensor **v, int n) {
    for (int i = 0; i < n; i++) {
        ltf_tensor_release(v[i]);
        v[i] = NULL;
    }
}

/* The stack of loop variable k's values at the start of each of T iterations. */
static ltf_tensor *stack_history(ltf_ctx *ctx, const char *op, ltf_tensor **hist, int n, int k, int64_t T,
                                 const ltf_tensor *first) {
    if (T == 0) {
        int64_t dims[LTF_MAX_RANK];
        if (first->rank + 1 > LTF_MAX_RANK) {
            ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "%s: loop variable %d has rank %d: no room to stack it", op, k + 1,
                     first->rank);
            return NULL;
        }
        dims[0] = 0;
        for (int d = 0; d < first->rank; d++) dims[d + 1] = first->dims[d];
        return ltf_tensor_empty(ctx, first->dtype, first->rank + 1, dims);
    }
    ltf_tensor **v = malloc(sizeof *v * (size_t)T);
    if (!v) {
        ltf_fail_oom(ctx, "while", sizeof *v * (size_t)T);
        return NULL;
    }
    for (int64_t t = 0; t < T; t++) v[t] = hist[t * n + k];
    ltf_attrs at;
    ltf_attrs_init(&at);
    ltf_tensor *r = NULL;
    int got = 0;
    ltf_status st = ltf_op_run(ctx, LTF_OP_STACK, v, (int)T, &at, &r, 1, &got);
    free(v);
    if (st != LTF_OK) {
        char msg[LTF_ERRMSG_MAX];
        snprintf(msg, sizeof msg, "%s", ltf_ctx_error(ctx));
        ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED,
                 "%s: the gradient needs loop variable %d to keep one shape across iterations (%s)", op, k + 1, msg);
        return NULL;
    }
    return r;
}

static ltf_status kernel_while(CF_ARGS, ltf_tensor **out, int nout) {
    (void)nout;
    while_shape w;
    ltf_status st = while_parts(ctx, def, in, nin, a, &w);
    if (st != LTF_OK) return st;
    int n = w.n, width = n + (w.nc > w.nb ? w.nc : w.nb);
    ltf_tensor **vars = calloc((size_t)(2 * n + width + 1), sizeof *vars);
    if (!vars) return ltf_fail_oom(ctx, "while", 0);
    ltf_tensor **next = vars + n, **args = vars + 2 * n;
    ltf_tensor **hist = NULL;
    int64_t T = 0, cap = 0, nhist = 0;
    for (int k = 0; k < n; k++) vars[k] = ltf_tensor_retain(in[k]);
    /* values of cond and body that depend on no loop variable: computed once */
    ltf_loop_cache *cc = ltf_plan_loop_cache(ctx, w.gc, n), *cb = ltf_plan_loop_cache(ctx, w.gb, n);
    ltf_ctx_pause_tapes(ctx, 1);
    for (;;) {
        if (w.maxit >= 0 && T >= w.maxit) break;
        memcpy(args, vars, sizeof *args * (size_t)n);
        memcpy(args + n, in + n, sizeof *args * (size_t)w.nc);
        ltf_tensor *p = NULL;
        /* the plans directly: inference checked the inputs, the loop checks each iteration's values */
        if ((st = ltf_plan_run_cached(ctx, w.gc, args, &p, cc)) != LTF_OK) break;
        uint8_t go = 0;
        st = ltf_tensor_read(ctx, p, &go, 1);
        ltf_tensor_release(p);
        if (st != LTF_OK || !go) break;
        if (w.accumulate) {
            if (T == cap) {
                int64_t nc = cap ? cap * 2 : 16;
                ltf_tensor **h = realloc(hist, sizeof *h * (size_t)(nc * n + 1));
                if (!h) {
                    st = ltf_fail_oom(ctx, "while", sizeof *h * (size_t)(nc * n + 1));
                    break;
                }
                hist = h;
                cap = nc;
            }
            for (int k = 0; k < n; k++) hist[nhist++] = ltf_tensor_retain(vars[k]);
        }
        memcpy(args + n, in + n + w.nc, sizeof *args * (size_t)w.nb);
        if ((st = ltf_plan_run_cached(ctx, w.gb, args, next, cb)) != LTF_OK) break;
        for (int k = 0; k < n && st == LTF_OK; k++) {
            const ltf_type *ph = fn_in_type(w.gb, k);
            if (next[k]->dtype != ph->dtype || !compatible(next[k]->rank, next[k]->dims, ph->rank, ph->dims)) {
                char s1[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF];
                st = ltf_fail(ctx, LTF_ERR_VALUE,
                              "%s: loop variable %d is %s %s after iteration %lld; its shape invariant is %s %s "
                              "(give it a shape invariant to let it change)", def->name, k + 1,
                              ltf_dtype_name(next[k]->dtype), ltf_shape_str(next[k]->rank, next[k]->dims, s1, sizeof s1),
                              (long long)T + 1, ltf_dtype_name(ph->dtype), ltf_shape_str(ph->rank, ph->dims, s2, sizeof s2));
            }
        }
        release_all(vars, n);
        memcpy(vars, next, sizeof *vars * (size_t)n);
        memset(next, 0, sizeof *next * (size_t)n);
        T++;
        if (st != LTF_OK) break;
    }
    ltf_ctx_pause_tapes(ctx, 0);
    ltf_plan_loop_cache_free(cc);
    ltf_plan_loop_cache_free(cb);
    if (st == LTF_OK) {
        for (int k = 0; k < n; k++) {
            out[k] = vars[k];
            vars[k] = NULL;
        }
        if (w.accumulate) {
            for (int k = 0; k < n && st == LTF_OK; k++) {
                out[n + k] = stack_history(ctx, def->name, hist, n, k, T, in[k]);
                if (!out[n + k]) st = ctx->last_status;
            }
            if (st == LTF_OK) {
                out[2 * n] = ltf_tensor_from_data(ctx, LTF_DTYPE_INT64, 0, NULL, &T);
                if (!out[2 * n]) st = ctx->last_status;
            }
        }
        if (st != LTF_OK) release_all(out, w.accumulate ? 2 * n + 1 : n);
    }
    release_all(vars, n);
    for (int64_t h = 0; h < nhist; h++) ltf_tensor_release(hist[h]);
    free(hist);
    free(vars);
    return st;
}
/* }==== */

/* {==== Gradients
** Built from ops, so they work eagerly, while tracing and under an outer
** tape (higher order: the gradient is itself a cond/while with gradients).
** A function's gradient is a new function, traced here: placeholders for
** its inputs and output gradients, the function inlined under a tape of
** its own, ltf_tape_gradient, zeros where nothing flows. */

/* The tapes record while the gradient function is traced, even when the
** caller paused them: returns the depth to restore. */
static int unpause_tapes(ltf_ctx *ctx) {
    int depth = 0;
    while (ctx->tapes_paused > 0) {
        ltf_ctx_pause_tapes(ctx, 0);
        depth++;
    }
    return depth;
}
static void repause_tapes(ltf_ctx *ctx, int depth) {
    while (depth-- > 0) ltf_ctx_pause_tapes(ctx, 1);
}

static int is_float(ltf_dtype dt) { return dt == LTF_DTYPE_FLOAT32 || dt == LTF_DTYPE_FLOAT64 || ltf_dtype_is_half(dt); }

/* The type of the gradient a control-flow input 'x' gets: its own for a
** float tensor; for a resource handle of a float variable that can be
** found (a handle captured from outside the traces), the variable's value
** type: the branch or body reads the variable, and its gradient flows to the
** handle as for an eager read. 0 when none of these. */
static int grad_type_of(const ltf_tensor *x, ltf_type *t) {
    if (x->dtype != LTF_DTYPE_RESOURCE) {
        ltf_type_of(x, t);
        return is_float(x->dtype);
    }
    ltf_variable *v = x->storage ? ltf_variable_of(x) : NULL;
    if (!v || !v->value || !is_float(v->value->dtype)) return 0;
    ltf_type_of(v->value, t);
    return 1;
}

/* Zeros of type 't' (fully known) */
static ltf_tensor *zeros_of_type(ltf_ctx *ctx, const ltf_type *t) {
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = t->dtype;
    a.nints = t->rank;
    for (int k = 0; k < t->rank; k++) a.ints[k] = t->dims[k];
    return ltf_op1(ctx, LTF_OP_FILL, NULL, 0, &a);
}

/* The gradient function of 'f': a finished graph taking m values typed
** 'types' (f's inputs are types[off .. off + nf)) and k output gradients
** typed 'dtypes', returning the gradient of each of the m values (zeros
** for those f does not take, and where nothing flows). NULL on failure. */
static ltf_graph *grad_function(ltf_ctx *ctx, const char *name, ltf_graph *f, int m, const ltf_type *types,
                                int off, int nf, int k, const ltf_type *dtypes, ltf_tensor *const *handles) {
    ltf_graph *G = ltf_graph_begin(ctx, name);
    if (!G) return NULL;
    ltf_tensor **v = calloc((size_t)(2 * m + 3 * k + 1), sizeof *v);
    ltf_tensor **xs = v, **dys = v + m, **ys = v + m + k, **grads = v + m + 2 * k;
    ltf_tensor **targets = v + 2 * m + 2 * k;   /* k: the float outputs and their gradients (borrowed) */
    ltf_tensor *stack_og[16], **ogs = k <= 16 ? stack_og : malloc(sizeof *ogs * (size_t)(k + 1));
    ltf_tape *tape = NULL;
    ltf_status st = (v && ogs) ? LTF_OK : ltf_fail_oom(ctx, "gradient function", 0);
    int paused = unpause_tapes(ctx);
    for (int i = 0; i < m && st == LTF_OK; i++)
        if (!(xs[i] = ltf_graph_placeholder(ctx, G, types[i].dtype, types[i].rank, types[i].dims, "x")))
            st = ctx->last_status;
    for (int j = 0; j < k && st == LTF_OK; j++)
        if (!(dys[j] = ltf_graph_placeholder(ctx, G, dtypes[j].dtype, dtypes[j].rank, dtypes[j].dims, "dy")))
            st = ctx->last_status;
    if (st == LTF_OK && !(tape = ltf_tape_new(ctx, 0, 0))) st = ctx->last_status;
    /* the sources: f's inputs; for a variable's handle, the handle itself:
    ** f reads it through its own constant of the same handle */
    ltf_tensor *stack_src[16], **src = m <= 16 ? stack_src : malloc(sizeof *src * (size_t)(m + 1));
    if (!src && st == LTF_OK) st = ltf_fail_oom(ctx, "gradient function", 0);
    for (int i = 0; i < m && src; i++) {
        ltf_type gt;
        src[i] = xs[i];
        if (xs[i] && xs[i]->dtype == LTF_DTYPE_RESOURCE && handles && handles[i]->storage && grad_type_of(handles[i], &gt))
            src[i] = handles[i];
    }
    if (st == LTF_OK && (st = ltf_tape_push(ctx, tape)) == LTF_OK) {
        for (int i = off; i < off + nf && st == LTF_OK; i++) st = ltf_tape_watch(ctx, tape, src[i]);
        int got = 0;
        if (st == LTF_OK) st = ltf_graph_run(ctx, f, xs + off, nf, ys, k, &got);
        ltf_tape_pop(ctx, tape);
    }
    int nt = 0;
    for (int j = 0; j < k && st == LTF_OK; j++)
        if (is_float(ys[j]->dtype)) {
            targets[nt] = ys[j];
            ogs[nt++] = dys[j];
        }
    if (st == LTF_OK && nt > 0)
        st = ltf_tape_gradient(ctx, tape, targets, nt, ogs, src + off, nf, LTF_TAPE_UNCONNECTED_ZERO, grads + off);
    for (int i = 0; i < m && st == LTF_OK; i++) {
        ltf_type gt;
        if (xs[i]->dtype == LTF_DTYPE_RESOURCE && handles && grad_type_of(handles[i], &gt)) {
            if (!grads[i] && !(grads[i] = zeros_of_type(ctx, &gt))) st = ctx->last_status;
        } else if (xs[i]->dtype == LTF_DTYPE_RESOURCE && grads[i]) {   /* a variable not found: no gradient */
            ltf_tensor_release(grads[i]);
            grads[i] = NULL;
        }
        if (st == LTF_OK && !grads[i] && !(grads[i] = ltf_grad_zeros_like(ctx, xs[i]))) st = ctx->last_status;
    }
    repause_tapes(ctx, paused);
    if (st == LTF_OK) st = ltf_graph_end(ctx, G, grads, m);
    else ltf_graph_abort(ctx, G);
    if (v) release_all(v, 2 * m + 2 * k);
    if (ogs != stack_og) free(ogs);
    if (src != stack_src) free(src);
    free(v);
    ltf_tape_release(tape);
    if (st != LTF_OK) {
        ltf_graph_release(G);
        return NULL;
    }
    return G;
}

/* A gradient input: the output gradient, or zeros like the output. */
static ltf_tensor *grad_or_zeros(ltf_ctx *ctx, ltf_tensor *d, ltf_tensor *o) {
    return d ? ltf_tensor_retain(d) : ltf_grad_zeros_like(ctx, o);
}

static ltf_status grad_cond(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                            const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout,
                            ltf_tensor **din) {
    ltf_graph *gt = fn_of(ctx, def, a->i[0]), *gf = gt ? fn_of(ctx, def, a->i[1]) : NULL;
    if (!gf) return ctx->last_status;
    int m = nin - 1, nt = (int)a->i[2], width = m + nout;
    ltf_type *types = malloc(sizeof *types * (size_t)(width + 1));
    ltf_tensor **args = calloc((size_t)(1 + 2 * width), sizeof *args);
    ltf_tensor **res = calloc((size_t)m + 1, sizeof *res);
    if (!types || !args || !res) {
        free(types);
        free(args);
        free(res);
        return ltf_fail_oom(ctx, "cond gradient", 0);
    }
    ltf_status st = LTF_OK;
    for (int i = 0; i < m; i++) ltf_type_of(in[1 + i], &types[i]);
    args[0] = ltf_tensor_retain(in[0]);
    for (int i = 0; i < m; i++) args[1 + i] = ltf_tensor_retain(in[1 + i]);
    for (int j = 0; j < nout && st == LTF_OK; j++) {
        if (!(args[1 + m + j] = grad_or_zeros(ctx, dout[j], out[j]))) st = ctx->last_status;
        else ltf_type_of(out[j], &types[m + j]);
    }
    for (int i = 0; i < width && st == LTF_OK; i++) args[1 + width + i] = ltf_tensor_retain(args[1 + i]);
    ltf_graph *Gt = NULL, *Gf = NULL;
    int idt = 0, idf = 0;
    if (st == LTF_OK) Gt = grad_function(ctx, "cond_true_grad", gt, m, types, 0, nt, nout, types + m, in + 1);
    if (Gt) Gf = grad_function(ctx, "cond_false_grad", gf, m, types, nt, m - nt, nout, types + m, in + 1);
    if (!Gt || !Gf) st = ctx->last_status;
    if (st == LTF_OK && (!(idt = ltf_fn_add(ctx, Gt)) || !(idf = ltf_fn_add(ctx, Gf)))) st = ctx->last_status;
    if (st == LTF_OK) {
        ltf_attrs at;
        ltf_attrs_init(&at);
        at.i[0] = idt;
        at.i[1] = idf;
        at.i[2] = width;
        int got = 0;
        st = ltf_op_run(ctx, LTF_OP_COND, args, 1 + 2 * width, &at, res, m, &got);
    }
    ltf_fn_unuse(ctx, idt);   /* a node keeps its own use; an eager run is done with them */
    ltf_fn_unuse(ctx, idf);
    ltf_graph_release(Gt);
    ltf_graph_release(Gf);
    if (st == LTF_OK)
        for (int i = 0; i < m; i++) {
            ltf_type gt;
            if (grad_type_of(in[1 + i], &gt)) din[1 + i] = res[i];
            else ltf_tensor_release(res[i]);
        }
    release_all(args, 1 + 2 * width);
    free(args);
    free(res);
    free(types);
    return st;
}

/* The backward loop's functions, traced here. Loop variables: t (int64,
** counting down from T), dv (n), dc (nb); body inputs after them: the
** stacks (n) and the body's inputs (nb). */
static ltf_graph *backward_cond(ltf_ctx *ctx, int n, int nb, const ltf_type *types) {
    ltf_graph *G = ltf_graph_begin(ctx, "while_grad_cond");
    if (!G) return NULL;
    int m = 1 + n + nb;
    ltf_tensor **ph = calloc((size_t)m + 1, sizeof *ph);
    ltf_tensor *zero = NULL, *r = NULL;
    ltf_status st = ph ? LTF_OK : ltf_fail_oom(ctx, "while gradient", 0);
    for (int i = 0; i < m && st == LTF_OK; i++)
        if (!(ph[i] = ltf_graph_placeholder(ctx, G, types[i].dtype, types[i].rank, types[i].dims, "v")))
            st = ctx->last_status;
    int64_t z = 0;
    if (st == LTF_OK && !(zero = ltf_tensor_from_data(ctx, LTF_DTYPE_INT64, 0, NULL, &z))) st = ctx->last_status;
    if (st == LTF_OK) {
        ltf_tensor *two[2] = { ph[0], zero };
        if (!(r = ltf_op1(ctx, LTF_OP_GREATER, two, 2, NULL))) st = ctx->last_status;
    }
    if (st == LTF_OK) st = ltf_graph_end(ctx, G, &r, 1);
    else ltf_graph_abort(ctx, G);
    ltf_tensor_release(r);
    ltf_tensor_release(zero);
    if (ph) release_all(ph, m);
    free(ph);
    if (st != LTF_OK) {
        ltf_graph_release(G);
        return NULL;
    }
    return G;
}

static ltf_graph *backward_body(ltf_ctx *ctx, ltf_graph *BG, int n, int nb, const ltf_type *types, int with_ds) {
    ltf_graph *G = ltf_graph_begin(ctx, "while_grad_body");
    if (!G) return NULL;
    int m = 1 + n + nb + n + nb + (with_ds ? n : 0);   /* t, dv, dc, stacks, body inputs [, stack gradients] */
    int nr = n + nb;                           /* BG's outputs: dx (n), db (nb) */
    ltf_tensor **v = calloc((size_t)(m + 3 * nr + 2 + (n + nb + n) + 1), sizeof *v);
    ltf_tensor **ph = v, **outs = v + m, **r = v + m + nr + 1, **bargs = v + m + 2 * nr + 2;
    ltf_tensor *one = NULL;
    ltf_status st = v ? LTF_OK : ltf_fail_oom(ctx, "while gradient", 0);
    for (int i = 0; i < m && st == LTF_OK; i++)
        if (!(ph[i] = ltf_graph_placeholder(ctx, G, types[i].dtype, types[i].rank, types[i].dims, "v")))
            st = ctx->last_status;
    ltf_tensor *t = st == LTF_OK ? ph[0] : NULL, **dv = ph + 1, **dc = ph + 1 + n, **S = ph + 1 + n + nb,
               **B = ph + 1 + 2 * n + nb;
    /* BG's arguments: x_t (the stacks' rows t), the body inputs, dv */
    for (int k = 0; k < n && st == LTF_OK; k++) {
        ltf_tensor *two[2] = { S[k], t };
        if (!(bargs[k] = ltf_op1(ctx, LTF_OP_TENSOR_ARRAY_READ, two, 2, NULL))) st = ctx->last_status;
    }
    for (int j = 0; j < nb && st == LTF_OK; j++) bargs[n + j] = ltf_tensor_retain(B[j]);
    for (int k = 0; k < n && st == LTF_OK; k++) bargs[n + nb + k] = ltf_tensor_retain(dv[k]);
    int got = 0;
    if (st == LTF_OK) st = ltf_graph_run(ctx, BG, bargs, n + nb + n, r, nr, &got);
    int64_t o = 1;
    if (st == LTF_OK && !(one = ltf_tensor_from_data(ctx, LTF_DTYPE_INT64, 0, NULL, &o))) st = ctx->last_status;
    if (st == LTF_OK) {
        ltf_tensor *two[2] = { t, one };
        if (!(outs[0] = ltf_op1(ctx, LTF_OP_SUB, two, 2, NULL))) st = ctx->last_status;
    }
    for (int k = 0; k < n && st == LTF_OK; k++) {
        if (!with_ds) {
            outs[1 + k] = ltf_tensor_retain(r[k]);
            continue;
        }
        /* the stacked value x_t had a gradient of its own: row t of the stack's */
        ltf_tensor *two[2] = { ph[1 + 2 * n + 2 * nb + k], t };
        ltf_tensor *row = ltf_op1(ctx, LTF_OP_TENSOR_ARRAY_READ, two, 2, NULL);
        ltf_tensor *sum[2] = { r[k], row };
        outs[1 + k] = row ? ltf_op1(ctx, LTF_OP_ADD, sum, 2, NULL) : NULL;
        ltf_tensor_release(row);
        if (!outs[1 + k]) st = ctx->last_status;
    }
    for (int j = 0; j < nb && st == LTF_OK; j++) {
        ltf_tensor *two[2] = { dc[j], r[n + j] };
        if (!(outs[1 + n + j] = ltf_op1(ctx, LTF_OP_ADD, two, 2, NULL))) st = ctx->last_status;
    }
    if (st == LTF_OK) st = ltf_graph_end(ctx, G, outs, 1 + n + nb);
    else ltf_graph_abort(ctx, G);
    ltf_tensor_release(one);
    if (v) release_all(v, m + 3 * nr + 2 + (n + nb + n));
    free(v);
    if (st != LTF_OK) {
        ltf_graph_release(G);
        return NULL;
    }
    return G;
}

static ltf_status grad_while(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout,
                             ltf_tensor **din) {
    while_shape w;
    ltf_status st = while_parts(ctx, def, in, nin, a, &w);
    if (st != LTF_OK) return st;
    int n = w.n, nb = w.nb, with_ds = 0;
    for (int k = n; k < 2 * n && k < nout; k++) with_ds |= dout[k] != NULL;
    /* 1. the loop again, keeping each iteration's loop variables */
    ltf_attrs fa = *a;
    int64_t maxit = w.maxit;
    fa.nints = 2;
    fa.ints[0] = maxit;
    fa.ints[1] = 1;
    int m = 1 + n + nb + n + nb + (with_ds ? n : 0);
    ltf_tensor **v = calloc((size_t)(2 * n + 1 + m + (1 + n + nb) + 1), sizeof *v);
    ltf_type *types = malloc(sizeof *types * (size_t)(m + n + nb + 1));
    if (!v || !types) {
        free(v);
        free(types);
        return ltf_fail_oom(ctx, "while gradient", 0);
    }
    ltf_tensor **fwd = v, **args = v + 2 * n + 1, **res = args + m;
    int got = 0;
    ltf_graph *BG = NULL, *C2 = NULL, *B2 = NULL;
    int idc = 0, idb = 0;
    st = ltf_op_run(ctx, LTF_OP_WHILE, in, nin, &fa, fwd, 2 * n + 1, &got);
    /* 2. the body's gradient function: (x, body inputs, dy) -> (dx, d body inputs) */
    if (st == LTF_OK) {
        ltf_type *bt = types + m;   /* scratch: the body's inputs, then its outputs' types */
        for (int i = 0; i < n + nb; i++) bt[i] = *fn_in_type(w.gb, i);
        ltf_type *dyt = malloc(sizeof *dyt * (size_t)(n + 1));
        if (!dyt) st = ltf_fail_oom(ctx, "while gradient", 0);
        for (int k = 0; k < n && dyt; k++) dyt[k] = *fn_in_type(w.gb, k);
        ltf_tensor **hs = malloc(sizeof *hs * (size_t)(n + nb + 1));
        if (!hs) st = ltf_fail_oom(ctx, "while gradient", 0);
        for (int i = 0; i < n && hs; i++) hs[i] = in[i];
        for (int j = 0; j < nb && hs; j++) hs[n + j] = in[n + w.nc + j];
        if (dyt && hs && !(BG = grad_function(ctx, "while_body_grad", w.gb, n + nb, bt, 0, n + nb, n, dyt, hs)))
            st = ctx->last_status;
        free(hs);
        free(dyt);
    }
    /* 3. the backward loop */
    if (st == LTF_OK) {
        types[0].dtype = LTF_DTYPE_INT64;
        types[0].rank = 0;
        for (int k = 0; k < n; k++) types[1 + k] = *fn_in_type(w.gb, k);
        for (int j = 0; j < nb; j++) {   /* a variable's handle: its gradient has the value's type */
            types[1 + n + j] = *fn_in_type(w.gb, n + j);
            ltf_type gt;
            if (types[1 + n + j].dtype == LTF_DTYPE_RESOURCE && grad_type_of(in[n + w.nc + j], &gt))
                types[1 + n + j] = gt;
        }
        for (int k = 0; k < n; k++) ltf_type_of(fwd[n + k], &types[1 + n + nb + k]);
        for (int j = 0; j < nb; j++) types[1 + 2 * n + nb + j] = *fn_in_type(w.gb, n + j);
        for (int k = 0; k < n && with_ds; k++) ltf_type_of(fwd[n + k], &types[1 + 2 * n + 2 * nb + k]);
        if (!(C2 = backward_cond(ctx, n, nb, types)) || !(B2 = backward_body(ctx, BG, n, nb, types, with_ds)))
            st = ctx->last_status;
    }
    if (st == LTF_OK && (!(idc = ltf_fn_add(ctx, C2)) || !(idb = ltf_fn_add(ctx, B2)))) st = ctx->last_status;
    if (st == LTF_OK) {
        args[0] = ltf_tensor_retain(fwd[2 * n]);
        for (int k = 0; k < n && st == LTF_OK; k++)
            if (!(args[1 + k] = grad_or_zeros(ctx, dout[k], out[k]))) st = ctx->last_status;
        for (int j = 0; j < nb && st == LTF_OK; j++) {
            ltf_type gt;
            args[1 + n + j] = in[n + w.nc + j]->dtype == LTF_DTYPE_RESOURCE && grad_type_of(in[n + w.nc + j], &gt)
                                  ? zeros_of_type(ctx, &gt)
                                  : ltf_grad_zeros_like(ctx, in[n + w.nc + j]);
            if (!args[1 + n + j]) st = ctx->last_status;
        }
        for (int k = 0; k < n && st == LTF_OK; k++) args[1 + n + nb + k] = ltf_tensor_retain(fwd[n + k]);
        for (int j = 0; j < nb && st == LTF_OK; j++) args[1 + 2 * n + nb + j] = ltf_tensor_retain(in[n + w.nc + j]);
        for (int k = 0; k < n && with_ds && st == LTF_OK; k++)
            if (!(args[1 + 2 * n + 2 * nb + k] = grad_or_zeros(ctx, dout[n + k], fwd[n + k]))) st = ctx->last_status;
    }
    if (st == LTF_OK) {
        ltf_attrs at;
        ltf_attrs_init(&at);
        at.i[0] = idc;
        at.i[1] = idb;
        at.i[2] = 1 + n + nb;
        at.i[3] = 0;
        st = ltf_op_run(ctx, LTF_OP_WHILE, args, m, &at, res, 1 + n + nb, &got);
    }
    if (st == LTF_OK) {
        for (int k = 0; k < n; k++)
            if (is_float(in[k]->dtype)) {
                din[k] = res[1 + k];
                res[1 + k] = NULL;
            }
        for (int j = 0; j < nb; j++) {
            ltf_type gt;
            if (grad_type_of(in[n + w.nc + j], &gt)) {
                din[n + w.nc + j] = res[1 + n + j];
                res[1 + n + j] = NULL;
            }
        }
    }
    ltf_fn_unuse(ctx, idc);
    ltf_fn_unuse(ctx, idb);
    ltf_graph_release(BG);
    ltf_graph_release(C2);
    ltf_graph_release(B2);
    release_all(v, 2 * n + 1 + m + (1 + n + nb));
    free(v);
    free(types);
    return st;
}
/* }==== */

/* {==== tensor_array_write, tensor_array_unwrite */
static int is_index(ltf_dtype dt) { return dt == LTF_DTYPE_INT32 || dt == LTF_DTYPE_INT64; }

static int64_t index_value(const ltf_tensor *t) {
    return t->dtype == LTF_DTYPE_INT32 ? *(const int32_t *)LTF_DATA(t) : *(const int64_t *)LTF_DATA(t);
}

/* A buffer of 0 rows and rank 1 whose element shape is not set yet, for 'value'. */
static int unset_buffer(const ltf_tensor *buf, const ltf_tensor *value) {
    return buf->rank == 1 && buf->dims[0] == 0 && value->rank != 0;
}

static ltf_status infer_ta_write(CF_ARGS, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    const ltf_tensor *buf = in[0], *idx = in[1], *v = in[2];
    char s1[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF];
    if (!is_index(idx->dtype) || idx->rank > 0)
        return ltf_fail(ctx, LTF_ERR_TYPE, "TensorArray.write: 'index' must be an int32 or int64 scalar, got %s %s",
                        ltf_dtype_name(idx->dtype), ltf_shape_str(idx->rank, idx->dims, s1, sizeof s1));
    if (v->dtype != buf->dtype)
        return ltf_fail(ctx, LTF_ERR_TYPE, "TensorArray.write: 'value' has dtype %s, the TensorArray holds %s",
                        ltf_dtype_name(v->dtype), ltf_dtype_name(buf->dtype));
    if (buf->rank == 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the buffer must have rank >= 1", def->name);
    out->dtype = buf->dtype;
    *nout = 1;
    if (buf->rank < 0 || v->rank < 0 || (buf->rank == 1 && buf->dims[0] <= 0 && v->rank != 0)) {
        /* the element shape is settled by the first write when the op runs */
        out->rank = LTF_UNKNOWN_RANK;
        if (v->rank >= 0 && buf->rank >= 0 && v->rank + 1 <= LTF_MAX_RANK && !(buf->rank == 1 && buf->dims[0] < 0)) {
            out->rank = v->rank + 1;
            out->dims[0] = -1;
            for (int d = 0; d < v->rank; d++) out->dims[d + 1] = v->dims[d];
        }
        return LTF_OK;
    }
    if (!compatible(buf->rank - 1, buf->dims + 1, v->rank, v->dims))
        return ltf_fail(ctx, LTF_ERR_VALUE,
                        "TensorArray.write: 'value' has shape %s, the TensorArray's elements are %s",
                        ltf_shape_str(v->rank, v->dims, s1, sizeof s1),
                        ltf_shape_str(buf->rank - 1, buf->dims + 1, s2, sizeof s2));
    out->rank = buf->rank;
    memcpy(out->dims, buf->dims, sizeof(int64_t) * (size_t)buf->rank);
    if (a->i[0]) out->dims[0] = -1;          /* it may grow */
    for (int d = 1; d < buf->rank; d++)
        if (out->dims[d] < 0) out->dims[d] = v->dims[d - 1];
    return LTF_OK;
}

static ltf_status kernel_ta_write(CF_ARGS, ltf_tensor **out, int nout) {
    (void)nin; (void)nout; (void)def;
    const ltf_tensor *buf = in[0], *v = in[2];
    int64_t i = index_value(in[1]);
    int unset = unset_buffer(buf, v);
    int64_t rows = buf->dims[0];
    if (i < 1 || (i > rows && !a->i[0]))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "TensorArray.write: index %lld is out of range for a TensorArray of size %lld "
                        "(indices are 1-based; dynamic_size = true lets it grow)", (long long)i, (long long)rows);
    int64_t dims[LTF_MAX_RANK];
    int rank = unset ? v->rank + 1 : buf->rank;
    if (rank > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "TensorArray.write: elements of rank %d are too large", v->rank);
    dims[0] = i > rows ? i : rows;
    for (int d = 1; d < rank; d++) dims[d] = unset ? v->dims[d - 1] : buf->dims[d];
    if (!unset) {   /* a value of another shape than the elements' */
        int same = v->rank == rank - 1;
        for (int d = 1; same && d < rank; d++) same = v->dims[d - 1] == dims[d];
        if (!same) {
            char s1[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_VALUE, "TensorArray.write: 'value' has shape %s, the TensorArray's elements are %s",
                            ltf_shape_str(v->rank, v->dims, s1, sizeof s1), ltf_shape_str(rank - 1, dims + 1, s2, sizeof s2));
        }
    }
    if (ltf_shape_check(ctx, "TensorArray.write", buf->dtype, rank, dims) != LTF_OK) return ctx->last_status;
    ltf_tensor *o = ltf_tensor_empty(ctx, buf->dtype, rank, dims);
    if (!o) return ctx->last_status;
    size_t es = ltf_dtype_size(buf->dtype), row = (size_t)v->numel * es;
    unsigned char *dst = LTF_DATA(o);
    size_t have = unset ? 0 : (size_t)buf->numel * es;
    if (have) memcpy(dst, LTF_DATA(buf), have);
    if ((size_t)o->numel * es > have) memset(dst + have, 0, (size_t)o->numel * es - have);
    if (buf->dtype == LTF_DTYPE_STRING) {   /* the copied rows hold string references */
        ltf_strings_retain(LTF_DATA(o), buf->numel - (unset ? buf->numel : 0));
        ltf_strings_release((ltf_string **)(dst + (size_t)(i - 1) * row), v->numel);
        ltf_strings_retain(LTF_DATA(v), v->numel);
    }
    if (row) memcpy(dst + (size_t)(i - 1) * row, LTF_DATA(v), row);
    out[0] = o;
    return LTF_OK;
}

static ltf_status grad_ta_write(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout,
                                ltf_tensor **din) {
    (void)def; (void)nin; (void)a; (void)out; (void)nout;
    ltf_tensor *three[3] = { dout[0], in[0], in[1] };
    din[0] = ltf_op1(ctx, LTF_OP_TENSOR_ARRAY_UNWRITE, three, 3, NULL);
    if (!din[0]) return ctx->last_status;
    ltf_tensor *two[2] = { dout[0], in[1] };
    din[2] = ltf_op1(ctx, LTF_OP_TENSOR_ARRAY_READ, two, 2, NULL);
    if (!din[2]) {
        ltf_tensor_release(din[0]);
        din[0] = NULL;
        return ctx->last_status;
    }
    return LTF_OK;
}

static ltf_status infer_ta_unwrite(CF_ARGS, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout; (void)a;
    const ltf_tensor *dy = in[0], *buf = in[1], *idx = in[2];
    if (!is_index(idx->dtype) || idx->rank > 0 || dy->dtype != buf->dtype)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: expects dy and buffer of one dtype and an integer scalar index",
                        def->name);
    ltf_type_of(buf, out);
    *nout = 1;
    return LTF_OK;
}

static ltf_status kernel_ta_unwrite(CF_ARGS, ltf_tensor **out, int nout) {
    (void)nin; (void)nout; (void)a;
    const ltf_tensor *dy = in[0], *buf = in[1];
    int64_t i = index_value(in[2]);
    ltf_tensor *o = ltf_tensor_empty(ctx, buf->dtype, buf->rank, buf->dims);
    if (!o) return ctx->last_status;
    size_t es = ltf_dtype_size(buf->dtype), n = (size_t)buf->numel * es;
    int ok = dy->rank == buf->rank && dy->dims[0] >= buf->dims[0] && buf->dtype != LTF_DTYPE_STRING;
    for (int d = 1; ok && d < buf->rank; d++) ok = dy->dims[d] == buf->dims[d];
    if (!ok) {   /* the buffer had no element shape yet: nothing flows into it */
        memset(LTF_DATA(o), 0, n);
        out[0] = o;
        if (buf->numel != 0)
            return ltf_fail(ctx, LTF_ERR_INTERNAL, "%s: the gradient's shape does not match the buffer", def->name);
        return LTF_OK;
    }
    if (n) memcpy(LTF_DATA(o), LTF_DATA(dy), n);
    if (buf->dims[0] > 0 && i >= 1 && i <= buf->dims[0]) {
        size_t row = n / (size_t)buf->dims[0];
        memset((unsigned char *)LTF_DATA(o) + (size_t)(i - 1) * row, 0, row);
    }
    out[0] = o;
    return LTF_OK;
}

static ltf_status infer_ta_read(CF_ARGS, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout; (void)a;
    const ltf_tensor *buf = in[0], *idx = in[1];
    char s1[LTF_SHAPE_BUF];
    if (!is_index(idx->dtype) || idx->rank > 0)
        return ltf_fail(ctx, LTF_ERR_TYPE, "TensorArray.read: 'index' must be an int32 or int64 scalar, got %s %s",
                        ltf_dtype_name(idx->dtype), ltf_shape_str(idx->rank, idx->dims, s1, sizeof s1));
    if (buf->rank == 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the buffer must have rank >= 1", def->name);
    out->dtype = buf->dtype;
    out->rank = buf->rank < 0 ? LTF_UNKNOWN_RANK : buf->rank - 1;
    for (int d = 1; d < buf->rank; d++) out->dims[d - 1] = buf->dims[d];
    *nout = 1;
    return LTF_OK;
}

static ltf_status kernel_ta_read(CF_ARGS, ltf_tensor **out, int nout) {
    (void)nin; (void)nout; (void)a; (void)def;
    const ltf_tensor *buf = in[0];
    int64_t i = index_value(in[1]);
    if (i < 1 || i > buf->dims[0])
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "TensorArray.read: index %lld is out of range for a TensorArray of size %lld (indices are 1-based)",
                        (long long)i, (long long)buf->dims[0]);
    ltf_tensor *o = ltf_tensor_empty(ctx, buf->dtype, buf->rank - 1, buf->dims + 1);
    if (!o) return ctx->last_status;
    size_t row = (size_t)o->numel * ltf_dtype_size(buf->dtype);
    if (row) memcpy(LTF_DATA(o), (const unsigned char *)LTF_DATA(buf) + (size_t)(i - 1) * row, row);
    if (buf->dtype == LTF_DTYPE_STRING) ltf_strings_retain(LTF_DATA(o), o->numel);
    out[0] = o;
    return LTF_OK;
}

/* read's gradient: dy written into zeros like the buffer (no shape needed) */
static ltf_status grad_ta_read(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout,
                               ltf_tensor **din) {
    (void)def; (void)nin; (void)a; (void)out; (void)nout;
    ltf_tensor *z = ltf_grad_zeros_like(ctx, in[0]);
    if (!z) return ctx->last_status;
    ltf_tensor *three[3] = { z, in[1], dout[0] };
    ltf_attrs at;
    ltf_attrs_init(&at);
    din[0] = ltf_op1(ctx, LTF_OP_TENSOR_ARRAY_WRITE, three, 3, &at);
    ltf_tensor_release(z);
    return din[0] ? LTF_OK : ctx->last_status;
}

LTF_INTERNAL const ltf_op_def ltf_opdef_tensor_array_read = {
    "tensor_array_read", 2, 2, LTF_OP_KERNEL_ALLOCATES, 0, infer_ta_read,
    { [LTF_DEVICE_CPU] = kernel_ta_read }, grad_ta_read };

LTF_INTERNAL const ltf_op_def ltf_opdef_tensor_array_write = {
    "tensor_array_write", 3, 3, LTF_OP_KERNEL_ALLOCATES, 0, infer_ta_write,
    { [LTF_DEVICE_CPU] = kernel_ta_write }, grad_ta_write };
LTF_INTERNAL const ltf_op_def ltf_opdef_tensor_array_unwrite = {
    "tensor_array_unwrite", 3, 3, LTF_OP_KERNEL_ALLOCATES | LTF_OP_NOT_DIFFERENTIABLE, 0, infer_ta_unwrite,
    { [LTF_DEVICE_CPU] = kernel_ta_unwrite }, NULL };
/* }==== */

#define CF_FLAGS (LTF_OP_KERNEL_ALLOCATES | LTF_OP_RESOURCE | LTF_OP_VARIADIC_OUTPUTS)
LTF_INTERNAL const ltf_op_def ltf_opdef_cond = {
    "cond", 1, -1, CF_FLAGS, 0, infer_cond, { [LTF_DEVICE_CPU] = kernel_cond }, grad_cond };
LTF_INTERNAL const ltf_op_def ltf_opdef_while = {
    "while", 0, -1, CF_FLAGS, 0, infer_while, { [LTF_DEVICE_CPU] = kernel_while }, grad_while };
/* }==== */

/* {==== custom_gradient: tf.custom_gradient inside a trace
** Inputs: x (i[1] of them: the function's tensor arguments and the handles
** of the variables it read), y (one per output: what the function
** computed), then the gradient function's captured values. Outputs: y
** again, as views (new tensors: a tape maps each output's gradient to the
** output, not to the y the forward ops made, so no gradient flows through
** those ops). i[0] names the gradient function: placeholders dy (one per
** output, typed as y), then its captures; it returns one gradient per x
** whose bit is set in 'ints' (bit k of ints[k / 64]; the others get none,
** a gradient function's nil). Kept in graphs and SavedModels like cond's
** functions, so the gradient needs no host code. */
static int cg_has(const ltf_attrs *a, int64_t k) {
    return k / 64 < a->nints && ((uint64_t)a->ints[k / 64] >> (k % 64)) & 1u;
}

static ltf_status cg_parts(CF_ARGS, int nout, ltf_graph **g, int *nx, int *nc, int *ng) {
    if (!(*g = fn_of(ctx, def, a->i[0]))) return ctx->last_status;
    int64_t x = a->i[1];
    if (x < 0 || x > nin || a->nints < 0 || x > (int64_t)a->nints * 64 || (x + 63) / 64 < a->nints)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: %lld arguments for %d inputs and a mask of %d words",
                        def->name, (long long)x, nin, a->nints);
    *nx = (int)x;
    *nc = nin - *nx - nout;
    if (*nc < 0 || (*g)->ninputs != nout + *nc)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: %d inputs for %d arguments and %d outputs; the gradient "
                        "function takes %d values (output gradients, then captures)", def->name, nin, *nx, nout,
                        (*g)->ninputs);
    *ng = 0;
    for (int k = 0; k < *nx; k++) *ng += cg_has(a, k);
    if ((*g)->noutputs != *ng)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the gradient function returns %d values for %d arguments "
                        "with a gradient", def->name, (*g)->noutputs, *ng);
    return LTF_OK;
}

static ltf_status infer_custom_gradient(CF_ARGS, ltf_type *out, int maxout, int *nout) {
    *nout = 0;
    if (a->i[2] < 0 || a->i[2] > nin || a->i[2] > maxout)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: %lld outputs for %d inputs", def->name,
                        (long long)a->i[2], nin);
    int ny = (int)a->i[2], nx, nc, ng;
    ltf_graph *g;
    ltf_status st = cg_parts(ctx, def, in, nin, a, ny, &g, &nx, &nc, &ng);
    if (st != LTF_OK) return st;
    for (int j = 0; j < ny; j++) {
        if (in[nx + j]->dtype == LTF_DTYPE_RESOURCE)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: output %d is a variable handle", def->name, j + 1);
        if ((st = check_fits(ctx, def->name, "output gradient", j, fn_in_type(g, j), in[nx + j])) != LTF_OK) return st;
        ltf_type_of(in[nx + j], &out[j]);
    }
    for (int c = 0; c < nc; c++)
        if ((st = check_fits(ctx, def->name, "capture", c, fn_in_type(g, ny + c), in[nx + ny + c])) != LTF_OK)
            return st;
    for (int k = 0, o = 0; k < nx; k++) {
        if (!cg_has(a, k)) continue;
        ltf_type want;
        if (!grad_type_of(in[k], &want)) {
            if (in[k]->dtype == LTF_DTYPE_RESOURCE) { o++; continue; }   /* a handle inside a trace: checked when read */
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: argument %d is %s, which takes no gradient", def->name, k + 1,
                            ltf_dtype_name(in[k]->dtype));
        }
        const ltf_type *got = fn_out_type(g, o++);
        if (got->dtype != want.dtype)
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: the gradient for argument %d is %s, the argument is %s", def->name,
                            k + 1, ltf_dtype_name(got->dtype), ltf_dtype_name(want.dtype));
    }
    *nout = ny;
    return LTF_OK;
}

static ltf_status kernel_custom_gradient(CF_ARGS, ltf_tensor **out, int nout) {
    (void)def; (void)nin;
    int nx = (int)a->i[1];
    for (int j = 0; j < nout; j++) {
        ltf_tensor *y = in[nx + j];
        if (!(out[j] = ltf_tensor_view(ctx, y, y->rank, y->dims))) {
            release_all(out, j);
            return ctx->last_status;
        }
    }
    return LTF_OK;
}

static ltf_status grad_custom_gradient(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                       const ltf_attrs *a, ltf_tensor *const *out, int nout,
                                       ltf_tensor *const *dout, ltf_tensor **din) {
    int nx, nc, ng;
    ltf_graph *g;
    ltf_status st = cg_parts(ctx, def, in, nin, a, nout, &g, &nx, &nc, &ng);
    if (st != LTF_OK) return st;
    ltf_tensor **args = calloc((size_t)(nout + nc + ng) + 1, sizeof *args), **res = args + nout + nc;
    if (!args) return ltf_fail_oom(ctx, "custom_gradient", 0);
    for (int j = 0; j < nout && st == LTF_OK; j++)
        if (!(args[j] = grad_or_zeros(ctx, dout[j], out[j]))) st = ctx->last_status;
    for (int c = 0; c < nc && st == LTF_OK; c++) args[nout + c] = ltf_tensor_retain(in[nx + nout + c]);
    int got = 0;
    /* inlined into a trace in progress; op by op on recording tapes
    ** (gradients of gradients); else its plan */
    if (st == LTF_OK) st = ltf_graph_run(ctx, g, args, nout + nc, res, ng, &got);
    for (int k = 0, o = 0; k < nx && st == LTF_OK; k++)
        if (cg_has(a, k)) {
            din[k] = res[o];
            res[o++] = NULL;
        }
    release_all(args, nout + nc + ng);
    free(args);
    return st;
}

LTF_INTERNAL const ltf_op_def ltf_opdef_custom_gradient = {
    "custom_gradient", 0, -1, CF_FLAGS, 0, infer_custom_gradient, { [LTF_DEVICE_CPU] = kernel_custom_gradient },
    grad_custom_gradient };
/* }==== */

/* {==== write_summary (tf.summary; core/summary.c writes the event) */
static ltf_status infer_write_summary(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                      const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)out; (void)maxout;
    *nout = 0;
    if (in[0]->dtype != LTF_DTYPE_INT64 || in[0]->rank != 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'step' must be an int64 scalar, got %s of rank %d",
                        def->name, ltf_dtype_name(in[0]->dtype), in[0]->rank);
    for (int i = 2; i < 4; i++)
        if (in[i]->dtype != LTF_DTYPE_STRING || in[i]->rank != 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must be a string scalar", def->name,
                            i == 2 ? "tag" : "description");
    if (nin == 5 && (in[4]->dtype != LTF_DTYPE_BOOL || in[4]->rank != 0))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'condition' must be a bool scalar", def->name);
    if (a->i[1] < LTF_SUMMARY_SCALAR || a->i[1] > LTF_SUMMARY_AUDIO)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: unknown kind %lld", def->name, (long long)a->i[1]);
    return LTF_OK;
}

static ltf_status cpu_write_summary(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                    const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)out; (void)nout;
    if (nin == 5 && !*(const uint8_t *)ltf_tensor_data(in[4])) return LTF_OK;
    const ltf_string *tag = *(const ltf_string *const *)ltf_tensor_data(in[2]);
    const ltf_string *desc = *(const ltf_string *const *)ltf_tensor_data(in[3]);
    int64_t step = *(const int64_t *)ltf_tensor_data(in[0]);
    return ltf_summary_write(ctx, a->i[0], step, tag ? tag->bytes : "", in[1], (int)a->i[1], desc ? desc->bytes : "",
                             a->i[2], a->i[3]);
}

LTF_INTERNAL const ltf_op_def ltf_opdef_write_summary = {
    "write_summary", 4, 5, LTF_OP_STATEFUL | LTF_OP_NOT_DIFFERENTIABLE, 0, infer_write_summary,
    { [LTF_DEVICE_CPU] = cpu_write_summary }, NULL };
/* }==== */
