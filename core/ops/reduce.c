/*
** ops/reduce.c: definitions of the reductions (reduce_sum/mean/max/min/prod/
** all/any), argmax/argmin and cumsum: which dtypes each accepts and the
** dtype/shape inference, including unknown dims and unknown rank (tracing).
** Attribute slots are documented in ltf_ops/reduce.h; axes arrive 0-based or
** negative, and messages print them back 1-based (LTF_AXIS_USER).
** Gradients go in 'grad' (autodiff issue).
*/
#include <stdio.h>
#include <string.h>
#include "../op.h"
#include "../grad.h"
#include "../shape.h"
#include "../cpu/cpu.h"

/* {==== dtype sets */
#define M(dt) (1u << (dt))
#define F_  (M(LTF_DTYPE_FLOAT32) | M(LTF_DTYPE_FLOAT64) | M(LTF_DTYPE_FLOAT16) | M(LTF_DTYPE_BFLOAT16))
#define I_  (M(LTF_DTYPE_INT32) | M(LTF_DTYPE_INT64) | M(LTF_DTYPE_UINT8))
#define N_  (F_ | I_)
#define B_  M(LTF_DTYPE_BOOL)
/* }==== */

static ltf_status bad_dtype(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, ltf_dtype dt, unsigned mask) {
    char buf[128];
    size_t n = 0;
    buf[0] = '\0';
    for (int d = 0; d < LTF_DTYPE_COUNT; d++)
        if (mask & M(d)) {
            int w = snprintf(buf + n, sizeof buf - n, "%s%s", n ? ", " : "", ltf_dtype_name((ltf_dtype)d));
            if (w < 0 || (size_t)w >= sizeof buf - n) break;
            n += (size_t)w;
        }
    return ltf_fail(ctx, LTF_ERR_TYPE, "%s: '%s' has dtype %s, expected one of: %s", def->name, arg,
                    ltf_dtype_name(dt), buf);
}

/* {==== Inference */
/* Reductions: 'x' (any rank) and the axes in 'ints' (nints -1 = every axis,
** 0 = none). Axes are normalized against a known rank; out of range and
** duplicates are InvalidArgumentError. With an unknown rank only certain
** duplicates (the same number twice) are caught, and the result has an
** unknown rank. */
static ltf_status infer_reduce(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    ltf_dtype dt = in[0]->dtype;
    int boolean = def->code == LTF_OP_REDUCE_ALL || def->code == LTF_OP_REDUCE_ANY;
    unsigned mask = boolean ? B_ : N_;
    if (!(mask & M(dt))) return bad_dtype(ctx, def, "input_tensor", dt, mask);
    int rank = in[0]->rank, keep = a->i[0] != 0;
    if (a->nints > LTF_ATTR_LIST_MAX)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' has %d entries, at most %d allowed", def->name,
                        a->nints, LTF_ATTR_LIST_MAX);
    out->dtype = dt;
    *nout = 1;
    if (rank < 0) {
        for (int i = 0; i < a->nints; i++)
            for (int j = 0; j < i; j++)
                if (a->ints[i] == a->ints[j])
                    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' names axis %lld twice",
                                    def->name, LTF_AXIS_USER(a->ints[i]));
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    int reduced[LTF_MAX_RANK] = {0}, user[LTF_MAX_RANK];
    if (a->nints < 0) {
        for (int d = 0; d < rank; d++) reduced[d] = 1;
    }
    for (int i = 0; i < a->nints; i++) {
        int ax;
        ltf_status st = ltf_axis_normalize(ctx, def->name, "axis", a->ints[i], rank, &ax);
        if (st != LTF_OK) return st;
        if (reduced[ax])
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: 'axis' names axis %d twice (as %lld and %lld) for rank %d", def->name, ax + 1,
                            LTF_AXIS_USER((int64_t)user[ax]), LTF_AXIS_USER(a->ints[i]), rank);
        reduced[ax] = 1;
        user[ax] = (int)a->ints[i];
    }
    int r = 0;
    for (int d = 0; d < rank; d++) {
        if (!reduced[d]) out->dims[r++] = in[0]->dims[d];
        else if (keep) out->dims[r++] = 1;
    }
    out->rank = r;
    return LTF_OK;
}

/* argmax/argmin: 'input' of rank >= 1, i[1] the axis, i[2] the output dtype
** (int32 or int64; 0 stands for the default int64). The axis must not have
** length 0. */
static ltf_status infer_arg(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                            const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    ltf_dtype dt = in[0]->dtype;
    if (!((N_ | B_) & M(dt))) return bad_dtype(ctx, def, "input", dt, N_ | B_);
    int64_t ot64 = a->i[2] == 0 ? LTF_DTYPE_INT64 : a->i[2];   /* compared as int64: no truncation */
    if (ot64 != LTF_DTYPE_INT32 && ot64 != LTF_DTYPE_INT64)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'output_type' must be int32 or int64, got %s", def->name,
                        ot64 >= 0 && ot64 < LTF_DTYPE_COUNT ? ltf_dtype_name((ltf_dtype)ot64) : "an invalid dtype");
    ltf_dtype ot = (ltf_dtype)ot64;
    out->dtype = ot;
    *nout = 1;
    int rank = in[0]->rank;
    if (rank < 0) {
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    int ax;
    ltf_status st = ltf_axis_normalize(ctx, def->name, "axis", a->i[1], rank, &ax);
    if (st != LTF_OK) return st;
    if (in[0]->dims[ax] == 0) {
        char s[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' %lld has length 0 in shape %s", def->name,
                        LTF_AXIS_USER(a->i[1]), ltf_shape_str(rank, in[0]->dims, s, sizeof s));
    }
    if (ot == LTF_DTYPE_INT32 && in[0]->dims[ax] > INT32_MAX)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' %lld has length %lld, too long for int32 positions",
                        def->name, LTF_AXIS_USER(a->i[1]), (long long)in[0]->dims[ax]);
    int r = 0;
    for (int d = 0; d < rank; d++)
        if (d != ax) out->dims[r++] = in[0]->dims[d];
    out->rank = r;
    return LTF_OK;
}

/* cumsum, cumprod: numeric 'x' of rank >= 1, i[1] the axis; same type out. */
static ltf_status infer_cumsum(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    ltf_dtype dt = in[0]->dtype;
    if (!(N_ & M(dt))) return bad_dtype(ctx, def, "x", dt, N_);
    int rank = in[0]->rank;
    if (rank >= 0) {
        int ax;
        ltf_status st = ltf_axis_normalize(ctx, def->name, "axis", a->i[1], rank, &ax);
        if (st != LTF_OK) return st;
    }
    out->dtype = dt;
    out->rank = rank;
    if (rank > 0) memcpy(out->dims, in[0]->dims, sizeof(int64_t) * (size_t)rank);
    *nout = 1;
    return LTF_OK;
}
/* }==== */


/* sum_to: numeric 'g' and 'x' whose shape broadcasts to g's; out: g's dtype, x's shape */
static ltf_status infer_sum_to(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)a; (void)maxout;
    const ltf_tensor *g = in[0], *x = in[1];
    if (!(N_ & M(g->dtype))) return bad_dtype(ctx, def, "g", g->dtype, N_);
    out->dtype = g->dtype;
    out->rank = x->rank;
    if (x->rank > 0) memcpy(out->dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
    *nout = 1;
    if (g->rank < 0 || x->rank < 0) return LTF_OK;
    int bad = x->rank > g->rank;
    for (int k = 0; !bad && k < x->rank; k++) {
        int64_t d = x->dims[x->rank - 1 - k], t = g->dims[g->rank - 1 - k];
        if (d >= 0 && t >= 0 && d != 1 && d != t) bad = 1;
    }
    if (bad) {
        char sg[LTF_SHAPE_BUF], sx[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: the shape of 'x' %s does not broadcast to the shape of 'g' %s", def->name,
                        ltf_shape_str(x->rank, x->dims, sx, sizeof sx), ltf_shape_str(g->rank, g->dims, sg, sizeof sg));
    }
    return LTF_OK;
}
/* }==== */


/* {==== Gradients (built from ops; see grad.h) */
/* Whether x's rank and every dim are known (eager tensors; traces of fixed shapes). */
static int fully_known(const ltf_tensor *x) {
    if (x->rank < 0) return 0;
    for (int i = 0; i < x->rank; i++)
        if (x->dims[i] < 0) return 0;
    return 1;
}

/* Which axes of 'x' (rank known) the reduction 'a' reduces. */
static ltf_status reduced_axes(ltf_ctx *ctx, const ltf_tensor *x, const ltf_attrs *a, int *reduced) {
    for (int i = 0; i < LTF_MAX_RANK; i++) reduced[i] = a->nints < 0 && i < x->rank;
    for (int k = 0; k < a->nints; k++) {
        int ax;
        ltf_status st = ltf_axis_normalize(ctx, "reduce gradient", "axis", a->ints[k], x->rank, &ax);
        if (st != LTF_OK) return st;
        reduced[ax] = 1;
    }
    return LTF_OK;
}

/* 'g' (shaped like the reduction's output) with the reduced dims kept as 1:
** a reshape when x's shape is known, else expand_dims at each reduced axis
** (unknown dims), or 'g' itself when it is a scalar from reducing every axis
** (unknown rank: broadcasting a scalar needs no rank). */
static ltf_tensor *keep_dims(ltf_ctx *ctx, ltf_tensor *g, const ltf_tensor *x, const ltf_attrs *a) {
    if (!g) return NULL;
    if (a->i[0] || a->nints == 0) return ltf_tensor_retain(g);   /* keepdims, or nothing reduced */
    if (x->rank < 0) {
        if (a->nints < 0) return ltf_tensor_retain(g);
        ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED,
                 "reduce gradient: the rank of the input must be known when 'axis' is given (got shape <unknown>)");
        return NULL;
    }
    int reduced[LTF_MAX_RANK];
    if (reduced_axes(ctx, x, a, reduced) != LTF_OK) return NULL;
    ltf_attrs at;
    ltf_attrs_init(&at);
    if (fully_known(x)) {
        at.nints = x->rank;
        for (int i = 0; i < x->rank; i++) at.ints[i] = reduced[i] ? 1 : x->dims[i];
        return ltf_g_op1(ctx, LTF_OP_RESHAPE, g, &at);
    }
    ltf_tensor *k = ltf_tensor_retain(g);
    for (int i = 0; i < x->rank && k; i++) {
        if (!reduced[i]) continue;
        at.i[0] = i;
        ltf_tensor *e = ltf_g_op1(ctx, LTF_OP_EXPAND_DIMS, k, &at);
        ltf_tensor_release(k);
        k = e;
    }
    return k;
}

/* 't' broadcast to x's shape: a broadcast_to of the known shape, else one
** decided when the op runs (broadcast_like). */
static ltf_tensor *to_x(ltf_ctx *ctx, ltf_tensor *t, const ltf_tensor *x) {
    if (!t) return NULL;
    if (!fully_known(x)) return ltf_g_op2(ctx, LTF_OP_BROADCAST_LIKE, t, (ltf_tensor *)x, NULL);
    ltf_attrs to;
    ltf_attrs_init(&to);
    to.nints = x->rank;
    for (int i = 0; i < x->rank; i++) to.ints[i] = x->dims[i];
    return ltf_g_op1(ctx, LTF_OP_BROADCAST_TO, t, &to);
}

/* 'g' (the reduction's output gradient) broadcast back to x's shape. */
static ltf_tensor *spread(ltf_ctx *ctx, ltf_tensor *g, const ltf_tensor *x, const ltf_attrs *a) {
    ltf_tensor *k = keep_dims(ctx, g, x, a);
    ltf_tensor *r = to_x(ctx, k, x);
    ltf_tensor_release(k);
    return r;
}

/* How many elements of x each output element of a mean gathers: a scalar
** when x's shape is known, else reduce_sum(ones_like(x)) with the forward's
** attributes (the output's shape, counted when the op runs). */
static ltf_tensor *mean_count(ltf_ctx *ctx, const ltf_tensor *x, const ltf_attrs *a) {
    if (!fully_known(x)) {
        ltf_tensor *ones = ltf_g_op1(ctx, LTF_OP_ONES_LIKE, (ltf_tensor *)x, NULL);
        ltf_tensor *n = ltf_g_op1(ctx, LTF_OP_REDUCE_SUM, ones, a);
        ltf_tensor_release(ones);
        return n;
    }
    int reduced[LTF_MAX_RANK];
    if (reduced_axes(ctx, x, a, reduced) != LTF_OK) return NULL;
    int64_t count = 1;
    for (int i = 0; i < x->rank; i++)   /* saturates: only an empty x overflows, and its gradient is empty */
        if (reduced[i] && __builtin_mul_overflow(count, x->dims[i], &count)) count = INT64_MAX;
    return ltf_g_scalar(ctx, x->dtype, (double)count);
}

static ltf_status grad_reduce(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout,
                              ltf_tensor **din) {
    ltf_tensor *x = in[0], *g = dout[0];
    ltf_tensor *gx = NULL;
    switch (def->code) {
    case LTF_OP_REDUCE_SUM:
        gx = spread(ctx, g, x, a);
        break;
    case LTF_OP_REDUCE_MEAN: {   /* an empty reduction (count 0) has an empty gradient */
        ltf_tensor *n = mean_count(ctx, x, a);
        ltf_tensor *q = ltf_g_op2(ctx, LTF_OP_DIV, g, n, NULL);
        gx = spread(ctx, q, x, a);
        ltf_g_free(2, n, q);
        break;
    }
    case LTF_OP_REDUCE_MAX:
    case LTF_OP_REDUCE_MIN: {
        /* equal shares among the positions that hold the extreme, as TF */
        ltf_tensor *y = spread(ctx, out[0], x, a);
        ltf_tensor *hit = ltf_g_op2(ctx, LTF_OP_EQUAL, x, y, NULL);
        ltf_attrs c;
        ltf_attrs_init(&c);
        c.i[0] = x->dtype;
        ltf_tensor *ind = ltf_g_op1(ctx, LTF_OP_CAST, hit, &c);
        ltf_attrs r = *a;
        r.i[0] = 1;
        ltf_tensor *n = ltf_g_op1(ctx, LTF_OP_REDUCE_SUM, ind, &r);
        ltf_tensor *gk = keep_dims(ctx, g, x, a);
        ltf_tensor *share = ltf_g_op2(ctx, LTF_OP_DIV, gk, n, NULL);
        gx = ltf_g_op2(ctx, LTF_OP_MUL, ind, share, NULL);
        ltf_g_free(6, y, hit, ind, n, gk, share);
        break;
    }
    case LTF_OP_REDUCE_PROD: {
        /* d/dx_i = product of the others: y / x_i without zeros; with one
        ** zero only that position gets the product of the rest; with more,
        ** nothing does */
        ltf_tensor *zero = ltf_g_scalar(ctx, x->dtype, 0.0), *one = ltf_g_scalar(ctx, x->dtype, 1.0);
        ltf_tensor *isz = ltf_g_op2(ctx, LTF_OP_EQUAL, x, zero, NULL);
        ltf_tensor *ones = ltf_g_op1(ctx, LTF_OP_ONES_LIKE, x, NULL);
        ltf_tensor *a3[3] = { isz, ones, x };
        ltf_tensor *nz = isz && ones ? ltf_op1(ctx, LTF_OP_SELECT, a3, 3, NULL) : NULL;   /* zeros -> 1 */
        ltf_attrs r = *a;
        r.i[0] = 1;
        ltf_tensor *pnz = ltf_g_op1(ctx, LTF_OP_REDUCE_PROD, nz, &r);                       /* product of non-zeros */
        ltf_attrs c;
        ltf_attrs_init(&c);
        c.i[0] = x->dtype;
        ltf_tensor *zf = ltf_g_op1(ctx, LTF_OP_CAST, isz, &c);
        ltf_tensor *nzeros = ltf_g_op1(ctx, LTF_OP_REDUCE_SUM, zf, &r);                     /* zeros per group */
        ltf_tensor *none = ltf_g_op2(ctx, LTF_OP_EQUAL, nzeros, zero, NULL);
        ltf_tensor *onez = ltf_g_op2(ctx, LTF_OP_EQUAL, nzeros, one, NULL);
        ltf_tensor *q = ltf_g_op2(ctx, LTF_OP_DIV, pnz, nz, NULL);                          /* others, no zero */
        ltf_tensor *zq = ltf_g_op1(ctx, LTF_OP_ZEROS_LIKE, q, NULL);
        ltf_tensor *b3[3] = { none, q, zq };
        ltf_tensor *p0 = q && zq && none ? ltf_op1(ctx, LTF_OP_SELECT, b3, 3, NULL) : NULL;
        ltf_tensor *onezb = NULL, *iszand = NULL, *p1 = NULL, *pnzb = NULL;
        if (p0) {
            onezb = to_x(ctx, onez, x);
            pnzb = to_x(ctx, pnz, x);
            iszand = ltf_g_op2(ctx, LTF_OP_LOGICAL_AND, isz, onezb, NULL);
            ltf_tensor *c3[3] = { iszand, pnzb, p0 };
            p1 = iszand && pnzb ? ltf_op1(ctx, LTF_OP_SELECT, c3, 3, NULL) : NULL;
        }
        ltf_tensor *gs = spread(ctx, g, x, a);
        gx = ltf_g_op2(ctx, LTF_OP_MUL, gs, p1, NULL);
        ltf_g_free(11, zero, one, isz, ones, nz, pnz, zf, nzeros, none, onez, q);
        ltf_g_free(7, zq, p0, onezb, iszand, p1, pnzb, gs);
        break;
    }
    default:
        return LTF_OK;
    }
    if (!gx) return ctx->last_status;
    din[0] = gx;
    return LTF_OK;
}

/* cumsum's gradient is the cumulative sum the other way round */
static ltf_status grad_cumsum(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout,
                              ltf_tensor **din) {
    ltf_attrs r = *a;
    r.i[3] = !a->i[3];
    din[0] = ltf_g_op1(ctx, LTF_OP_CUMSUM, dout[0], &r);
    return din[0] ? LTF_OK : ctx->last_status;
}
/* cumprod's gradient, as TensorFlow's: cumsum(y * g) the other way round,
** divided by x (0 where x is 0: the gradient at zeros is not exact) */
static ltf_status grad_cumprod(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout,
                               ltf_tensor **din) {
    ltf_attrs r = *a;
    r.i[3] = !a->i[3];
    ltf_tensor *yg = ltf_g_op2(ctx, LTF_OP_MUL, out[0], dout[0], NULL);
    ltf_tensor *s = ltf_g_op1(ctx, LTF_OP_CUMSUM, yg, &r);
    din[0] = ltf_g_op2(ctx, LTF_OP_DIVIDE_NO_NAN, s, in[0], NULL);
    ltf_g_free(2, yg, s);
    return din[0] ? LTF_OK : ctx->last_status;
}
/* }==== */

/* {==== Definitions */
#define CPU(k) { [LTF_DEVICE_CPU] = k }
#define ND LTF_OP_NOT_DIFFERENTIABLE

#define REDUCE(name, ID, flags) \
    LTF_INTERNAL const ltf_op_def ltf_opdef_##name = { #name, 1, 1, (flags), LTF_OP_##ID, infer_reduce, \
                                                       CPU(ltf_cpu_reduce_reduce), grad_reduce };

REDUCE(reduce_sum, REDUCE_SUM, 0)
REDUCE(reduce_mean, REDUCE_MEAN, 0)
REDUCE(reduce_max, REDUCE_MAX, 0)
REDUCE(reduce_min, REDUCE_MIN, 0)
REDUCE(reduce_prod, REDUCE_PROD, 0)
REDUCE(reduce_all, REDUCE_ALL, ND)
REDUCE(reduce_any, REDUCE_ANY, ND)

/* sum_to <-> broadcast_like; 'x' (the shape) gets no gradient */
static ltf_status grad_sum_to(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout,
                              ltf_tensor **din) {
    (void)def; (void)nin; (void)a; (void)out; (void)nout;
    din[0] = ltf_g_op2(ctx, LTF_OP_BROADCAST_LIKE, dout[0], in[0], NULL);
    return din[0] ? LTF_OK : ctx->last_status;
}
LTF_INTERNAL const ltf_op_def ltf_opdef_sum_to = { "sum_to", 2, 2, 0, LTF_OP_SUM_TO, infer_sum_to,
                                                   CPU(ltf_cpu_reduce_sum_to), grad_sum_to };

LTF_INTERNAL const ltf_op_def ltf_opdef_argmax = {
    "argmax", 1, 1, ND, LTF_OP_ARGMAX, infer_arg, CPU(ltf_cpu_reduce_arg), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_argmin = {
    "argmin", 1, 1, ND, LTF_OP_ARGMIN, infer_arg, CPU(ltf_cpu_reduce_arg), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_cumsum = {
    "cumsum", 1, 1, 0, LTF_OP_CUMSUM, infer_cumsum, CPU(ltf_cpu_reduce_cumsum), grad_cumsum };
LTF_INTERNAL const ltf_op_def ltf_opdef_cumprod = {
    "cumprod", 1, 1, 0, LTF_OP_CUMPROD, infer_cumsum, CPU(ltf_cpu_reduce_cumsum), grad_cumprod };
/* }==== */
