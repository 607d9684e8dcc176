/*
** ops/collective.c: the collective ops (ltf_ops/collective.h): dtype and
** shape inference and gradients. The kernels (cpu/collective.c) call the
** context's communicator (ltf_comm.h); without one the ops are a group of
** one. Gradients treat the loss as the sum of every rank's loss (as
** TensorFlow's collective gradients do):
**   all_reduce SUM       d x = all_reduce(SUM, g)
**   all_reduce MEAN      d x = all_reduce(MEAN, g)
**   all_reduce MAX/MIN   d x = all_reduce(SUM, g) * [x == y] / (ranks where x == y)
**   broadcast            d x = all_reduce(SUM, g) on the root, zeros elsewhere
**   all_gather           d x = reduce_scatter(SUM, g) (this rank's block)
**   reduce_scatter SUM   d x = all_gather(g); MEAN: all_gather(g) / size;
**                        MAX/MIN: all_gather(g) * [x == all_gather(y)] / ties
** Each gradient is itself collective: every rank computes it, in the same
** order (a missing upstream gradient counts as zeros, so the ranks agree).
*/
#include <stdio.h>
#include <string.h>
#include "../op.h"
#include "../grad.h"
#include "../shape.h"
#include "../cpu/cpu.h"

#define M(dt) (1u << (dt))
#define NUMERIC (M(LTF_DTYPE_FLOAT32) | M(LTF_DTYPE_FLOAT64) | M(LTF_DTYPE_FLOAT16) | M(LTF_DTYPE_BFLOAT16) | \
                 M(LTF_DTYPE_INT32) | M(LTF_DTYPE_INT64) | M(LTF_DTYPE_UINT8))

static const char *const reduce_names[LTF_REDUCE_COUNT] = { "SUM", "MEAN", "MAX", "MIN" };

LTF_INTERNAL const char *ltf_collective_reduce_name(int op) {
    return op >= 0 && op < LTF_REDUCE_COUNT ? reduce_names[op] : "?";
}

LTF_INTERNAL int ltf_collective_size(const ltf_ctx *ctx) { return ctx->comm ? ctx->comm->size : 1; }
LTF_INTERNAL int ltf_collective_rank(const ltf_ctx *ctx) { return ctx->comm ? ctx->comm->rank : 0; }

static ltf_status check_numeric(ltf_ctx *ctx, const ltf_op_def *def, int i, const ltf_tensor *x) {
    if (x->dtype < LTF_DTYPE_COUNT && (NUMERIC & M(x->dtype))) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_TYPE,
                    "%s: argument %d has dtype %s, expected a numeric dtype (float32, float64, float16, bfloat16, "
                    "int32, int64, uint8)", def->name, i + 1, ltf_dtype_name(x->dtype));
}

static ltf_status check_reduce(ltf_ctx *ctx, const ltf_op_def *def, int64_t op) {
    if (op >= 0 && op < LTF_REDUCE_COUNT) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: reduction %lld is not one of SUM, MEAN, MAX, MIN", def->name,
                    (long long)op);
}

/* The group size an op was built for: its attribute, else the context's. */
static int64_t group_size(ltf_ctx *ctx, int64_t attr) { return attr > 0 ? attr : ltf_collective_size(ctx); }

static ltf_status infer_all_reduce(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                   const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    if (check_reduce(ctx, def, a ? a->i[0] : 0) != LTF_OK) return ctx->last_status;
    if (nin > maxout) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: room for %d outputs, %d needed", def->name,
                                      maxout, nin);
    for (int i = 0; i < nin; i++) {
        if (check_numeric(ctx, def, i, in[i]) != LTF_OK) return ctx->last_status;
        if (in[i]->dtype != in[0]->dtype)
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: argument %d has dtype %s, argument 1 has %s: one call reduces one dtype",
                            def->name, i + 1, ltf_dtype_name(in[i]->dtype), ltf_dtype_name(in[0]->dtype));
        ltf_type_of(in[i], &out[i]);
    }
    *nout = nin;
    return LTF_OK;
}

static ltf_status infer_broadcast(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                  const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    int64_t root = a ? a->i[0] : 0;
    if (check_numeric(ctx, def, 0, in[0]) != LTF_OK) return ctx->last_status;
    if (root < 0 || root >= ltf_collective_size(ctx))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: root %lld is not a rank of this group of %d (0-based)",
                        def->name, (long long)root, ltf_collective_size(ctx));
    ltf_type_of(in[0], out);
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_gather_scatter(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                       const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    int scatter = def->code;
    ltf_tensor *x = in[0];
    if (check_numeric(ctx, def, 0, x) != LTF_OK) return ctx->last_status;
    if (scatter && check_reduce(ctx, def, a ? a->i[0] : 0) != LTF_OK) return ctx->last_status;
    int64_t n = group_size(ctx, a ? a->i[scatter] : 0);
    if (x->rank == LTF_UNKNOWN_RANK) {
        ltf_type_of(x, out);
        *nout = 1;
        return LTF_OK;
    }
    if (x->rank == 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: argument 1 must have rank >= 1 (%s along axis 1), got a scalar",
                        def->name, scatter ? "split" : "concatenated");
    ltf_type_of(x, out);
    int64_t d = x->dims[0];
    if (d != LTF_UNKNOWN_DIM) {
        if (scatter && d % n != 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: argument 1's first dimension (%lld) must divide evenly by the group size %lld",
                            def->name, (long long)d, (long long)n);
        if (!scatter && __builtin_mul_overflow(d, n, &out->dims[0]))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: argument 1's first dimension (%lld) times the group size %lld overflows int64",
                            def->name, (long long)d, (long long)n);
        if (scatter) out->dims[0] = d / n;
    }
    *nout = 1;
    return LTF_OK;
}

/* {==== Gradients */
#define GRAD_FN(name)                                                                                      \
    static ltf_status name(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,           \
                           const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout, \
                           ltf_tensor **din)

static int is_float(ltf_dtype dt) {
    return dt == LTF_DTYPE_FLOAT32 || dt == LTF_DTYPE_FLOAT64 || ltf_dtype_is_half(dt);
}

/* Upstream gradient 'g' of output like 'y', or zeros when absent (new reference). */
static ltf_tensor *upstream(ltf_ctx *ctx, ltf_tensor *g, ltf_tensor *y) {
    return g ? ltf_tensor_retain(g) : ltf_grad_zeros_like(ctx, y);
}

static ltf_tensor *coll1(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *x, int64_t i0, int64_t i1) {
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = i0;
    at.i[1] = i1;
    return ltf_op1(ctx, op, &x, 1, &at);
}

/* [x == y] / (number of ranks where x == y), in x's dtype: how a MAX/MIN
** gradient is shared between tied ranks (as reduce_max's gradient). */
static ltf_tensor *tie_share(ltf_ctx *ctx, ltf_tensor *x, ltf_tensor *y) {
    ltf_tensor *eq = ltf_g_op2(ctx, LTF_OP_EQUAL, x, y, NULL);
    ltf_attrs c;
    ltf_attrs_init(&c);
    c.i[0] = x->dtype;
    ltf_tensor *m = ltf_g_op1(ctx, LTF_OP_CAST, eq, &c);
    ltf_tensor *cnt = m ? coll1(ctx, LTF_OP_ALL_REDUCE, m, LTF_REDUCE_SUM, 0) : NULL;
    ltf_tensor *r = ltf_g_op2(ctx, LTF_OP_DIV, m, cnt, NULL);
    ltf_g_free(3, eq, m, cnt);
    return r;
}

GRAD_FN(grad_all_reduce) {
    int op = a ? (int)a->i[0] : 0;
    if (!is_float(in[0]->dtype)) return LTF_OK;
    /* one call for every upstream gradient (the same bucket backwards) */
    ltf_tensor *g[nin > 0 ? nin : 1], *r[nin > 0 ? nin : 1];
    int ok = 1, nr = 0;
    for (int i = 0; i < nin; i++) {
        g[i] = upstream(ctx, dout[i], out[i]);
        ok = ok && g[i];
    }
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = op == LTF_REDUCE_MEAN ? LTF_REDUCE_MEAN : LTF_REDUCE_SUM;
    ltf_status st = ok ? ltf_op_run(ctx, LTF_OP_ALL_REDUCE, g, nin, &at, r, nin, &nr) : ctx->last_status;
    for (int i = 0; i < nin; i++) ltf_tensor_release(g[i]);
    if (st != LTF_OK) return st;
    for (int i = 0; i < nin && (op == LTF_REDUCE_MAX || op == LTF_REDUCE_MIN); i++) {
        ltf_tensor *share = tie_share(ctx, in[i], out[i]);
        ltf_tensor *d = ltf_g_op2(ctx, LTF_OP_MUL, r[i], share, NULL);
        ltf_g_free(2, share, r[i]);
        r[i] = d;
        if (!d) st = ctx->last_status;
    }
    for (int i = 0; i < nin; i++) {
        if (st != LTF_OK) ltf_tensor_release(r[i]);
        else din[i] = r[i];
    }
    return st;
}

GRAD_FN(grad_broadcast) {
    if (!is_float(in[0]->dtype)) return LTF_OK;
    ltf_tensor *g = upstream(ctx, dout[0], out[0]);
    ltf_tensor *s = g ? coll1(ctx, LTF_OP_ALL_REDUCE, g, LTF_REDUCE_SUM, 0) : NULL;
    ltf_tensor_release(g);
    if (!s) return ctx->last_status;
    if (ltf_collective_rank(ctx) != (a ? a->i[0] : 0)) {
        ltf_tensor_release(s);
        s = ltf_grad_zeros_like(ctx, in[0]);
        if (!s) return ctx->last_status;
    }
    din[0] = s;
    return LTF_OK;
}

GRAD_FN(grad_all_gather) {
    if (!is_float(in[0]->dtype)) return LTF_OK;
    ltf_tensor *g = upstream(ctx, dout[0], out[0]);
    ltf_tensor *d = g ? coll1(ctx, LTF_OP_REDUCE_SCATTER, g, LTF_REDUCE_SUM, a ? a->i[0] : 0) : NULL;
    ltf_tensor_release(g);
    din[0] = d;
    return d ? LTF_OK : ctx->last_status;
}

GRAD_FN(grad_reduce_scatter) {
    int op = a ? (int)a->i[0] : 0;
    int64_t n = a ? a->i[1] : 0;
    if (!is_float(in[0]->dtype)) return LTF_OK;
    ltf_tensor *g = upstream(ctx, dout[0], out[0]);
    ltf_tensor *d = g ? coll1(ctx, LTF_OP_ALL_GATHER, g, n, 0) : NULL;
    ltf_tensor_release(g);
    if (d && op == LTF_REDUCE_MEAN) {
        ltf_tensor *s = ltf_g_scale(ctx, d, 1.0 / (double)group_size(ctx, n));
        ltf_tensor_release(d);
        d = s;
    } else if (d && (op == LTF_REDUCE_MAX || op == LTF_REDUCE_MIN)) {
        ltf_tensor *yall = coll1(ctx, LTF_OP_ALL_GATHER, out[0], n, 0);
        ltf_tensor *share = yall ? tie_share(ctx, in[0], yall) : NULL;
        ltf_tensor *s = ltf_g_op2(ctx, LTF_OP_MUL, d, share, NULL);
        ltf_g_free(3, yall, share, d);
        d = s;
    }
    din[0] = d;
    return d ? LTF_OK : ctx->last_status;
}
/* }==== */

#define CPU(k) { [LTF_DEVICE_CPU] = k }

LTF_INTERNAL const ltf_op_def ltf_opdef_all_reduce = {
    "all_reduce", 1, -1, LTF_OP_STATEFUL | LTF_OP_VARIADIC_OUTPUTS, 0, infer_all_reduce,
    CPU(ltf_cpu_collective_all_reduce), grad_all_reduce };
LTF_INTERNAL const ltf_op_def ltf_opdef_broadcast = {
    "broadcast", 1, 1, LTF_OP_STATEFUL, 0, infer_broadcast, CPU(ltf_cpu_collective_broadcast), grad_broadcast };
LTF_INTERNAL const ltf_op_def ltf_opdef_all_gather = {
    "all_gather", 1, 1, LTF_OP_STATEFUL, 0, infer_gather_scatter, CPU(ltf_cpu_collective_gather_scatter),
    grad_all_gather };
LTF_INTERNAL const ltf_op_def ltf_opdef_reduce_scatter = {
    "reduce_scatter", 1, 1, LTF_OP_STATEFUL, 1, infer_gather_scatter, CPU(ltf_cpu_collective_gather_scatter),
    grad_reduce_scatter };
