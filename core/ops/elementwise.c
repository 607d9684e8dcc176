/*
** ops/elementwise.c: definitions of the elementwise ops: which dtypes each
** accepts, dtype/shape inference (broadcasting, partial shapes) and kernels.
** Gradients are registered in 'grad' (autodiff).
*/
#include <stdio.h>
#include <string.h>
#include "../op.h"
#include "../shape.h"
#include "../cpu/cpu.h"
#include "../grad.h"

/* {==== dtype sets */
#define M(dt) (1u << (dt))
#define F_  (M(LTF_DTYPE_FLOAT32) | M(LTF_DTYPE_FLOAT64) | M(LTF_DTYPE_FLOAT16) | M(LTF_DTYPE_BFLOAT16))
#define SI_ (M(LTF_DTYPE_INT32) | M(LTF_DTYPE_INT64))
#define I_  (SI_ | M(LTF_DTYPE_UINT8))
#define N_  (F_ | I_)
#define B_  M(LTF_DTYPE_BOOL)
#define S_  M(LTF_DTYPE_STRING)
#define ALL_ (N_ | B_ | S_)

static const unsigned un_dtypes[LTF_UN_COUNT] = {   /* ORDER EWUNARY */
    F_ | SI_, N_, N_, F_, F_, F_, F_, F_, F_, N_, F_, F_, F_, N_, F_, F_, F_, F_, F_, F_,
    B_, I_, F_, F_,
    F_, F_, F_, F_, F_, F_, F_, F_, F_, F_, F_, F_, F_, F_,
};
static const unsigned bin_dtypes[LTF_BIN_COUNT] = { /* ORDER EWBINARY */
    N_ | S_, N_, N_, F_, N_, N_, N_, N_, N_, N_,
    ALL_, ALL_, N_, N_, N_, N_, B_, B_, B_, I_, I_, I_, I_, I_, F_, F_, F_,
    F_, F_, F_, F_, N_, N_, F_, F_,
};
/* }==== */

static const char *dtype_list(unsigned mask, char *buf, size_t size) {
    size_t n = 0;
    buf[0] = '\0';
    for (int d = 0; d < LTF_DTYPE_COUNT; d++)
        if (mask & M(d)) {
            int w = snprintf(buf + n, size - n, "%s%s", n ? ", " : "", ltf_dtype_name((ltf_dtype)d));
            if (w < 0 || (size_t)w >= size - n) break;
            n += (size_t)w;
        }
    return buf;
}

static ltf_status bad_dtype(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, ltf_dtype dt, unsigned mask) {
    char buf[128];
    return ltf_fail(ctx, LTF_ERR_TYPE, "%s: '%s' has dtype %s, expected one of: %s", def->name, arg,
                    ltf_dtype_name(dt), dtype_list(mask, buf, sizeof buf));
}

static void copy_type(ltf_type *t, ltf_dtype dt, int rank, const int64_t *dims) {
    t->dtype = dt;
    t->rank = rank;
    if (rank > 0) memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
}

/* {==== Inference */
static ltf_status infer_unary(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)a; (void)maxout;
    ltf_dtype dt = in[0]->dtype;
    if (!(un_dtypes[def->code] & M(dt))) return bad_dtype(ctx, def, "x", dt, un_dtypes[def->code]);
    int to_bool = def->code == LTF_UN_IS_NAN || def->code == LTF_UN_IS_FINITE || def->code == LTF_UN_IS_INF;
    copy_type(out, to_bool ? LTF_DTYPE_BOOL : dt, in[0]->rank, in[0]->dims);
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_same(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)ctx; (void)def; (void)nin; (void)a; (void)maxout;
    copy_type(out, in[0]->dtype, in[0]->rank, in[0]->dims);
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_check_numerics(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                       const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    if (!(F_ & M(in[0]->dtype))) return bad_dtype(ctx, def, "tensor", in[0]->dtype, F_);
    ltf_status st = ltf_attrs_check_str(ctx, def->name, a);   /* the message */
    if (st != LTF_OK) return st;
    return infer_same(ctx, def, in, nin, a, out, maxout, nout);
}

static ltf_status infer_cast(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    if (a->i[0] < 0 || a->i[0] >= LTF_DTYPE_COUNT)   /* checked as int64: no truncation into range */
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: invalid dtype %lld", def->name, (long long)a->i[0]);
    ltf_dtype from = in[0]->dtype, to = (ltf_dtype)a->i[0];
    if (from != to && (from == LTF_DTYPE_STRING || to == LTF_DTYPE_STRING))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: cannot cast %s to %s (use tf.strings for string conversion)",
                        def->name, ltf_dtype_name(from), ltf_dtype_name(to));
    copy_type(out, to, in[0]->rank, in[0]->dims);
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_binary(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)a; (void)maxout;
    ltf_dtype dx = in[0]->dtype, dy = in[1]->dtype;
    if (dx != dy)
        return ltf_fail(ctx, LTF_ERR_TYPE,
                        "%s: x and y must have the same dtype, got x: %s and y: %s (use tf.cast)",
                        def->name, ltf_dtype_name(dx), ltf_dtype_name(dy));
    if (!(bin_dtypes[def->code] & M(dx))) return bad_dtype(ctx, def, "x", dx, bin_dtypes[def->code]);
    int cmp = def->code >= LTF_BIN_EQUAL && def->code <= LTF_BIN_GREATER_EQUAL;
    out->dtype = cmp ? LTF_DTYPE_BOOL : dx;
    *nout = 1;
    return ltf_broadcast_shapes(ctx, def->name, in[0]->rank, in[0]->dims, in[1]->rank, in[1]->dims,
                                &out->rank, out->dims);
}

static ltf_status infer_select(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)a; (void)maxout;
    if (in[0]->dtype != LTF_DTYPE_BOOL) return bad_dtype(ctx, def, "condition", in[0]->dtype, B_);
    if (in[1]->dtype != in[2]->dtype)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: x and y must have the same dtype, got x: %s and y: %s",
                        def->name, ltf_dtype_name(in[1]->dtype), ltf_dtype_name(in[2]->dtype));
    int r;
    int64_t d[LTF_MAX_RANK];
    ltf_status st = ltf_broadcast_shapes(ctx, def->name, in[1]->rank, in[1]->dims, in[2]->rank, in[2]->dims, &r, d);
    if (st != LTF_OK) return st;
    if (r >= 0 && in[0]->rank >= 0) {
        int r2;
        int64_t d2[LTF_MAX_RANK];
        st = ltf_broadcast_shapes(ctx, def->name, in[0]->rank, in[0]->dims, r, d, &r2, d2);
        if (st != LTF_OK) {
            char sc[LTF_SHAPE_BUF], sx[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: condition of shape %s does not broadcast with x/y of shape %s", def->name,
                            ltf_shape_str(in[0]->rank, in[0]->dims, sc, sizeof sc), ltf_shape_str(r, d, sx, sizeof sx));
        }
        copy_type(out, in[1]->dtype, r2, d2);
    } else {
        copy_type(out, in[1]->dtype, LTF_UNKNOWN_RANK, d);
    }
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_string_join(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                    const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)maxout;
    if (nin > 64) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: at most 64 inputs, got %d", def->name, nin);
    ltf_status st0 = ltf_attrs_check_str(ctx, def->name, a);   /* the separator */
    if (st0 != LTF_OK) return st0;
    int r = 0;
    int64_t d[LTF_MAX_RANK];
    for (int i = 0; i < nin; i++) {
        if (in[i]->dtype != LTF_DTYPE_STRING) {
            char arg[32];
            snprintf(arg, sizeof arg, "inputs[%d]", i + 1);
            return bad_dtype(ctx, def, arg, in[i]->dtype, S_);
        }
        ltf_status st = ltf_broadcast_shapes(ctx, def->name, r, d, in[i]->rank, in[i]->dims, &r, d);
        if (st != LTF_OK) return st;
    }
    copy_type(out, LTF_DTYPE_STRING, r, d);
    *nout = 1;
    return LTF_OK;
}
/* }==== */


/* {==== Gradients (built from ops: see grad.h) */
#define GRAD_FN(name)                                                                            \
    static ltf_status name(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,  \
                           const ltf_attrs *a, ltf_tensor *const *out, int nout,                  \
                           ltf_tensor *const *dout, ltf_tensor **din)
#define DONE(i, t) do { din[i] = (t); if (!din[i]) return ctx->last_status; } while (0)
#define X in[0]
#define Y out[0]
#define G dout[0]

GRAD_FN(grad_negative) { DONE(0, ltf_g_op1(ctx, LTF_OP_NEG, G, NULL)); return LTF_OK; }
GRAD_FN(grad_identity) { DONE(0, ltf_tensor_retain(G)); return LTF_OK; }
GRAD_FN(grad_abs) {
    ltf_tensor *s = ltf_g_op1(ctx, LTF_OP_SIGN, X, NULL);
    din[0] = ltf_g_op2(ctx, LTF_OP_MUL, G, s, NULL);
    ltf_g_free(1, s);
    return din[0] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_exp) { DONE(0, ltf_g_op2(ctx, LTF_OP_MUL, G, Y, NULL)); return LTF_OK; }
GRAD_FN(grad_log) { DONE(0, ltf_g_op2(ctx, LTF_OP_DIV, G, X, NULL)); return LTF_OK; }
GRAD_FN(grad_log1p) {
    ltf_tensor *one = ltf_g_scalar(ctx, X->dtype, 1.0);
    ltf_tensor *d = ltf_g_op2(ctx, LTF_OP_ADD, X, one, NULL);
    din[0] = ltf_g_op2(ctx, LTF_OP_DIV, G, d, NULL);
    ltf_g_free(2, one, d);
    return din[0] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_expm1) {
    ltf_tensor *e = ltf_g_op1(ctx, LTF_OP_EXP, X, NULL);
    din[0] = ltf_g_op2(ctx, LTF_OP_MUL, G, e, NULL);
    ltf_g_free(1, e);
    return din[0] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_sqrt) {   /* g * 0.5 / y */
    ltf_tensor *h = ltf_g_scale(ctx, G, 0.5);
    din[0] = ltf_g_op2(ctx, LTF_OP_DIV, h, Y, NULL);
    ltf_g_free(1, h);
    return din[0] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_rsqrt) {  /* g * -0.5 * y^3 */
    ltf_tensor *y2 = ltf_g_op2(ctx, LTF_OP_MUL, Y, Y, NULL);
    ltf_tensor *y3 = ltf_g_op2(ctx, LTF_OP_MUL, y2, Y, NULL);
    ltf_tensor *h = ltf_g_scale(ctx, G, -0.5);
    din[0] = ltf_g_op2(ctx, LTF_OP_MUL, h, y3, NULL);
    ltf_g_free(3, y2, y3, h);
    return din[0] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_square) {
    ltf_tensor *x2 = ltf_g_scale(ctx, X, 2.0);
    din[0] = ltf_g_op2(ctx, LTF_OP_MUL, G, x2, NULL);
    ltf_g_free(1, x2);
    return din[0] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_reciprocal) { /* -g * y * y */
    ltf_tensor *y2 = ltf_g_op2(ctx, LTF_OP_MUL, Y, Y, NULL);
    ltf_tensor *m = ltf_g_op2(ctx, LTF_OP_MUL, G, y2, NULL);
    din[0] = ltf_g_op1(ctx, LTF_OP_NEG, m, NULL);
    ltf_g_free(2, y2, m);
    return din[0] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_tanh) { DONE(0, ltf_g_op2(ctx, LTF_OP_TANH_GRAD, G, Y, NULL)); return LTF_OK; }
GRAD_FN(grad_sigmoid) { DONE(0, ltf_g_op2(ctx, LTF_OP_SIGMOID_GRAD, G, Y, NULL)); return LTF_OK; }
/* tanh_grad(g, y) = g (1 - y^2): d/dg = tanh_grad(d, y), d/dy = -2 d g y */
GRAD_FN(grad_tanh_grad) {
    if (LTF_GRAD_NEEDED(ctx, 0)) DONE(0, ltf_g_op2(ctx, LTF_OP_TANH_GRAD, G, in[1], NULL));
    if (LTF_GRAD_NEEDED(ctx, 1)) {
        ltf_tensor *gy = ltf_g_op2(ctx, LTF_OP_MUL, G, in[0], NULL);
        ltf_tensor *t = ltf_g_op2(ctx, LTF_OP_MUL, gy, in[1], NULL);
        din[1] = ltf_g_scale(ctx, t, -2.0);
        ltf_g_free(2, gy, t);
        if (!din[1]) return ctx->last_status;
    }
    return LTF_OK;
}
/* sigmoid_grad(g, y) = g y (1 - y): d/dg = sigmoid_grad(d, y), d/dy = d g (1 - 2y) */
GRAD_FN(grad_sigmoid_grad) {
    if (LTF_GRAD_NEEDED(ctx, 0)) DONE(0, ltf_g_op2(ctx, LTF_OP_SIGMOID_GRAD, G, in[1], NULL));
    if (LTF_GRAD_NEEDED(ctx, 1)) {
        ltf_tensor *one = ltf_g_scalar(ctx, in[1]->dtype, 1.0);
        ltf_tensor *y2 = ltf_g_scale(ctx, in[1], 2.0);
        ltf_tensor *d = ltf_g_op2(ctx, LTF_OP_SUB, one, y2, NULL);
        ltf_tensor *gg = ltf_g_op2(ctx, LTF_OP_MUL, G, in[0], NULL);
        din[1] = ltf_g_op2(ctx, LTF_OP_MUL, gg, d, NULL);
        ltf_g_free(4, one, y2, d, gg);
        if (!din[1]) return ctx->last_status;
    }
    return LTF_OK;
}
GRAD_FN(grad_relu) { /* g where x > 0, one fused op */
    DONE(0, ltf_g_op2(ctx, LTF_OP_RELU_GRAD, G, X, NULL));
    return LTF_OK;
}
GRAD_FN(grad_relu_grad) { /* linear in g; zero almost everywhere in x */
    DONE(0, ltf_g_op2(ctx, LTF_OP_RELU_GRAD, G, in[1], NULL));
    return LTF_OK;
}
GRAD_FN(grad_softplus) {
    ltf_tensor *s = ltf_g_op1(ctx, LTF_OP_SIGMOID, X, NULL);
    din[0] = ltf_g_op2(ctx, LTF_OP_MUL, G, s, NULL);
    ltf_g_free(1, s);
    return din[0] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_sin) {
    ltf_tensor *c = ltf_g_op1(ctx, LTF_OP_COS, X, NULL);
    din[0] = ltf_g_op2(ctx, LTF_OP_MUL, G, c, NULL);
    ltf_g_free(1, c);
    return din[0] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_cos) {
    ltf_tensor *s = ltf_g_op1(ctx, LTF_OP_SIN, X, NULL);
    ltf_tensor *m = ltf_g_op2(ctx, LTF_OP_MUL, G, s, NULL);
    din[0] = ltf_g_op1(ctx, LTF_OP_NEG, m, NULL);
    ltf_g_free(2, s, m);
    return din[0] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_zero) {   /* sign, floor, ceil, round: zero almost everywhere */
    DONE(0, ltf_g_op1(ctx, LTF_OP_ZEROS_LIKE, X, NULL));
    return LTF_OK;
}
/* Back to the input's dtype when both are floating (float16, bfloat16,
** float32, float64: TensorFlow's _CastGrad); an integer input gets none. */
GRAD_FN(grad_cast) {
    int fx = X->dtype == LTF_DTYPE_FLOAT32 || X->dtype == LTF_DTYPE_FLOAT64 || ltf_dtype_is_half(X->dtype);
    int fg = G->dtype == LTF_DTYPE_FLOAT32 || G->dtype == LTF_DTYPE_FLOAT64 || ltf_dtype_is_half(G->dtype);
    if (!fx || !fg) return LTF_OK;
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = X->dtype;
    DONE(0, ltf_g_op1(ctx, LTF_OP_CAST, G, &at));
    return LTF_OK;
}


/* {==== Gradients of the inverse trigonometric, hyperbolic and special
** functions (as TensorFlow's math_grad.py) */
/* g * t, consuming 't' */
static ltf_tensor *g_times(ltf_ctx *ctx, ltf_tensor *g, ltf_tensor *t) {
    ltf_tensor *r = ltf_g_op2(ctx, LTF_OP_MUL, g, t, NULL);
    ltf_tensor_release(t);
    return r;
}
/* g / t, consuming 't' */
static ltf_tensor *g_over(ltf_ctx *ctx, ltf_tensor *g, ltf_tensor *t) {
    ltf_tensor *r = ltf_g_op2(ctx, LTF_OP_DIV, g, t, NULL);
    ltf_tensor_release(t);
    return r;
}
/* c + s * x^2 (c, s scalars), a new reference */
static ltf_tensor *affine_sq(ltf_ctx *ctx, ltf_tensor *x, double c, double s) {
    ltf_tensor *x2 = ltf_g_op1(ctx, LTF_OP_SQUARE, x, NULL);
    ltf_tensor *sx = ltf_g_scale(ctx, x2, s);
    ltf_tensor *k = ltf_g_scalar(ctx, x->dtype, c);
    ltf_tensor *r = ltf_g_op2(ctx, LTF_OP_ADD, k, sx, NULL);
    ltf_g_free(3, x2, sx, k);
    return r;
}
GRAD_FN(grad_acos) {   /* -g / sqrt(1 - x^2) */
    ltf_tensor *d = affine_sq(ctx, X, 1.0, -1.0);
    ltf_tensor *t = g_times(ctx, G, ltf_g_op1(ctx, LTF_OP_RSQRT, d, NULL));
    din[0] = ltf_g_op1(ctx, LTF_OP_NEG, t, NULL);
    ltf_g_free(2, d, t);
    return din[0] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_asin) {   /* g / sqrt(1 - x^2) */
    ltf_tensor *d = affine_sq(ctx, X, 1.0, -1.0);
    ltf_tensor *r = ltf_g_op1(ctx, LTF_OP_RSQRT, d, NULL);
    ltf_g_free(1, d);
    DONE(0, g_times(ctx, G, r));
    return LTF_OK;
}
GRAD_FN(grad_acosh) { DONE(0, g_over(ctx, G, ltf_g_op1(ctx, LTF_OP_SINH, Y, NULL))); return LTF_OK; }
GRAD_FN(grad_asinh) { DONE(0, g_over(ctx, G, ltf_g_op1(ctx, LTF_OP_COSH, Y, NULL))); return LTF_OK; }
GRAD_FN(grad_atan) { DONE(0, g_over(ctx, G, affine_sq(ctx, X, 1.0, 1.0))); return LTF_OK; }
GRAD_FN(grad_atanh) { DONE(0, g_over(ctx, G, affine_sq(ctx, X, 1.0, -1.0))); return LTF_OK; }
GRAD_FN(grad_cosh) { DONE(0, g_times(ctx, G, ltf_g_op1(ctx, LTF_OP_SINH, X, NULL))); return LTF_OK; }
GRAD_FN(grad_sinh) { DONE(0, g_times(ctx, G, ltf_g_op1(ctx, LTF_OP_COSH, X, NULL))); return LTF_OK; }
GRAD_FN(grad_tan) {    /* g / cos(x)^2 */
    ltf_tensor *c = ltf_g_op1(ctx, LTF_OP_COS, X, NULL);
    ltf_tensor *c2 = ltf_g_op1(ctx, LTF_OP_SQUARE, c, NULL);
    ltf_g_free(1, c);
    DONE(0, g_over(ctx, G, c2));
    return LTF_OK;
}
static ltf_status grad_erf_sign(ltf_ctx *ctx, ltf_tensor *x, ltf_tensor *g, double sign, ltf_tensor **din) {
    /* sign * 2 / sqrt(pi) * exp(-x^2) * g */
    ltf_tensor *x2 = ltf_g_op1(ctx, LTF_OP_SQUARE, x, NULL);
    ltf_tensor *n = ltf_g_op1(ctx, LTF_OP_NEG, x2, NULL);
    ltf_tensor *e = ltf_g_op1(ctx, LTF_OP_EXP, n, NULL);
    ltf_tensor *k = ltf_g_scale(ctx, e, sign * 1.12837916709551257390);
    ltf_g_free(3, x2, n, e);
    din[0] = g_times(ctx, g, k);
    return din[0] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_erf) { return grad_erf_sign(ctx, X, G, 1.0, din); }
GRAD_FN(grad_erfc) { return grad_erf_sign(ctx, X, G, -1.0, din); }
GRAD_FN(grad_lgamma) { DONE(0, g_times(ctx, G, ltf_g_op1(ctx, LTF_OP_DIGAMMA, X, NULL))); return LTF_OK; }
GRAD_FN(grad_digamma) {   /* g * polygamma(1, x) */
    ltf_tensor *one = ltf_g_scalar(ctx, X->dtype, 1.0);
    ltf_tensor *p = ltf_g_op2(ctx, LTF_OP_POLYGAMMA, one, X, NULL);
    ltf_g_free(1, one);
    DONE(0, g_times(ctx, G, p));
    return LTF_OK;
}
/* }==== */

/* binary: each side's gradient summed back to its input's shape; a side
** whose gradient is not needed is skipped (NEED0/NEED1 guard its cost) */
#define NEED0 LTF_GRAD_NEEDED(ctx, 0)
#define NEED1 LTF_GRAD_NEEDED(ctx, 1)
static ltf_status finish2(ltf_ctx *ctx, ltf_tensor *const *in, ltf_tensor *gx, ltf_tensor *gy, ltf_tensor **din) {
    int n0 = NEED0, n1 = NEED1;
    din[0] = n0 ? ltf_g_unbroadcast(ctx, gx, in[0]) : NULL;
    din[1] = n1 ? ltf_g_unbroadcast(ctx, gy, in[1]) : NULL;
    ltf_g_free(2, gx, gy);
    if ((n0 && !din[0]) || (n1 && !din[1])) {
        ltf_g_free(2, din[0], din[1]);
        din[0] = din[1] = NULL;
        return ctx->last_status;
    }
    return LTF_OK;
}
/* a placeholder for a side that is not needed (finish2 ignores it) */
#define SKIP(ctx) ltf_tensor_retain(G)
GRAD_FN(grad_add) { return finish2(ctx, in, ltf_tensor_retain(G), ltf_tensor_retain(G), din); }
GRAD_FN(grad_sub) {
    return finish2(ctx, in, ltf_tensor_retain(G), NEED1 ? ltf_g_op1(ctx, LTF_OP_NEG, G, NULL) : SKIP(ctx), din);
}
GRAD_FN(grad_mul) {
    return finish2(ctx, in, NEED0 ? ltf_g_op2(ctx, LTF_OP_MUL, G, in[1], NULL) : SKIP(ctx),
                   NEED1 ? ltf_g_op2(ctx, LTF_OP_MUL, G, in[0], NULL) : SKIP(ctx), din);
}
GRAD_FN(grad_div) { /* g / y, -g * x / y^2 */
    ltf_tensor *gx = ltf_g_op2(ctx, LTF_OP_DIV, G, in[1], NULL);
    ltf_tensor *gy = SKIP(ctx);
    if (NEED1) {
        ltf_tensor *t = ltf_g_op2(ctx, LTF_OP_DIV, gx, in[1], NULL);
        ltf_tensor *u = ltf_g_op2(ctx, LTF_OP_MUL, t, in[0], NULL);
        ltf_tensor_release(gy);
        gy = ltf_g_op1(ctx, LTF_OP_NEG, u, NULL);
        ltf_g_free(2, t, u);
    }
    return finish2(ctx, in, gx, gy, din);
}
GRAD_FN(grad_floormod) { /* g, -g * floordiv(x, y) */
    ltf_tensor *q = ltf_g_op2(ctx, LTF_OP_FLOORDIV, in[0], in[1], NULL);
    ltf_tensor *m = ltf_g_op2(ctx, LTF_OP_MUL, G, q, NULL);
    ltf_tensor *gy = ltf_g_op1(ctx, LTF_OP_NEG, m, NULL);
    ltf_g_free(2, q, m);
    return finish2(ctx, in, ltf_tensor_retain(G), gy, din);
}
GRAD_FN(grad_pow) { /* g * y * x^(y-1), g * z * log(x) where x > 0 */
    ltf_tensor *x = in[0], *y = in[1], *z = out[0];
    ltf_tensor *one = ltf_g_scalar(ctx, x->dtype, 1.0), *zero = ltf_g_scalar(ctx, x->dtype, 0.0);
    ltf_tensor *ym1 = ltf_g_op2(ctx, LTF_OP_SUB, y, one, NULL);
    ltf_tensor *p = ltf_g_op2(ctx, LTF_OP_POW, x, ym1, NULL);
    ltf_tensor *yp = ltf_g_op2(ctx, LTF_OP_MUL, y, p, NULL);
    ltf_tensor *gx = ltf_g_op2(ctx, LTF_OP_MUL, G, yp, NULL);
    ltf_tensor *pos = ltf_g_op2(ctx, LTF_OP_GREATER, x, zero, NULL);
    ltf_tensor *ones = ltf_g_op1(ctx, LTF_OP_ONES_LIKE, x, NULL);
    ltf_tensor *a3[3] = { pos, x, ones };
    ltf_tensor *safe = pos && ones ? ltf_op1(ctx, LTF_OP_SELECT, a3, 3, NULL) : NULL;
    ltf_tensor *lg = ltf_g_op1(ctx, LTF_OP_LOG, safe, NULL);
    ltf_tensor *zl = ltf_g_op2(ctx, LTF_OP_MUL, z, lg, NULL);
    ltf_tensor *zeros = ltf_g_op1(ctx, LTF_OP_ZEROS_LIKE, zl, NULL);
    ltf_tensor *b3[3] = { pos, zl, zeros };
    ltf_tensor *zls = zl && zeros ? ltf_op1(ctx, LTF_OP_SELECT, b3, 3, NULL) : NULL;
    ltf_tensor *gy = ltf_g_op2(ctx, LTF_OP_MUL, G, zls, NULL);
    ltf_g_free(11, one, zero, ym1, p, yp, pos, ones, safe, lg, zl, zeros);
    ltf_g_free(1, zls);
    return finish2(ctx, in, gx, gy, din);
}
static ltf_status grad_select_by(ltf_ctx *ctx, ltf_tensor *const *in, ltf_tensor *g, ltf_op_id cmp, ltf_tensor **din) {
    ltf_tensor *m = ltf_g_op2(ctx, cmp, in[0], in[1], NULL);     /* where x wins */
    ltf_tensor *z = ltf_g_op1(ctx, LTF_OP_ZEROS_LIKE, g, NULL);
    ltf_tensor *a1[3] = { m, g, z }, *a2[3] = { m, z, g };
    ltf_tensor *gx = m && z ? ltf_op1(ctx, LTF_OP_SELECT, a1, 3, NULL) : NULL;
    ltf_tensor *gy = m && z ? ltf_op1(ctx, LTF_OP_SELECT, a2, 3, NULL) : NULL;
    ltf_g_free(2, m, z);
    return finish2(ctx, in, gx, gy, din);
}
GRAD_FN(grad_maximum) { return grad_select_by(ctx, in, G, LTF_OP_GREATER_EQUAL, din); }
GRAD_FN(grad_minimum) { return grad_select_by(ctx, in, G, LTF_OP_LESS_EQUAL, din); }
GRAD_FN(grad_squared_difference) { /* 2 (x - y) g, -2 (x - y) g */
    ltf_tensor *d = ltf_g_op2(ctx, LTF_OP_SUB, in[0], in[1], NULL);
    ltf_tensor *d2 = ltf_g_scale(ctx, d, 2.0);
    ltf_tensor *gx = ltf_g_op2(ctx, LTF_OP_MUL, G, d2, NULL);
    ltf_tensor *gy = ltf_g_op1(ctx, LTF_OP_NEG, gx, NULL);
    ltf_g_free(2, d, d2);
    return finish2(ctx, in, gx, gy, din);
}
GRAD_FN(grad_where) { /* no gradient for the condition */
    ltf_tensor *z = ltf_g_op1(ctx, LTF_OP_ZEROS_LIKE, G, NULL);
    ltf_tensor *a1[3] = { in[0], G, z }, *a2[3] = { in[0], z, G };
    ltf_tensor *gx = z ? ltf_op1(ctx, LTF_OP_SELECT, a1, 3, NULL) : NULL;
    ltf_tensor *gy = z ? ltf_op1(ctx, LTF_OP_SELECT, a2, 3, NULL) : NULL;
    ltf_g_free(1, z);
    din[1] = ltf_g_unbroadcast(ctx, gx, in[1]);
    din[2] = ltf_g_unbroadcast(ctx, gy, in[2]);
    ltf_g_free(2, gx, gy);
    if (!din[1] || !din[2]) {
        ltf_g_free(2, din[1], din[2]);
        din[1] = din[2] = NULL;
        return ctx->last_status;
    }
    return LTF_OK;
}
/* binary ops of the special-function family */
GRAD_FN(grad_atan2) {   /* atan2(y, x): g x / (x^2 + y^2), -g y / (x^2 + y^2) */
    ltf_tensor *y2 = ltf_g_op1(ctx, LTF_OP_SQUARE, in[0], NULL), *x2 = ltf_g_op1(ctx, LTF_OP_SQUARE, in[1], NULL);
    ltf_tensor *d = ltf_g_op2(ctx, LTF_OP_ADD, x2, y2, NULL);
    ltf_tensor *q = ltf_g_op2(ctx, LTF_OP_DIV, G, d, NULL);
    ltf_tensor *gy = ltf_g_op2(ctx, LTF_OP_MUL, q, in[1], NULL);
    ltf_tensor *t = ltf_g_op2(ctx, LTF_OP_MUL, q, in[0], NULL);
    ltf_tensor *gx = ltf_g_op1(ctx, LTF_OP_NEG, t, NULL);
    ltf_g_free(5, y2, x2, d, q, t);
    return finish2(ctx, in, gy, gx, din);
}
/* cast(x != 0) in x's dtype */
static ltf_tensor *nonzero(ltf_ctx *ctx, ltf_tensor *x) {
    ltf_tensor *z = ltf_g_scalar(ctx, x->dtype, 0.0);
    ltf_tensor *ne = ltf_g_op2(ctx, LTF_OP_NOT_EQUAL, x, z, NULL);
    ltf_attrs c;
    ltf_attrs_init(&c);
    c.i[0] = x->dtype;
    ltf_tensor *r = ltf_g_op1(ctx, LTF_OP_CAST, ne, &c);
    ltf_g_free(2, z, ne);
    return r;
}
GRAD_FN(grad_xlogy) {   /* g xlogy(x != 0, y), g xdivy(x, y) */
    ltf_tensor *nz = NEED0 ? nonzero(ctx, in[0]) : NULL;
    ltf_tensor *gx = NEED0 ? g_times(ctx, G, ltf_g_op2(ctx, LTF_OP_XLOGY, nz, in[1], NULL)) : SKIP(ctx);
    ltf_tensor *gy = NEED1 ? g_times(ctx, G, ltf_g_op2(ctx, LTF_OP_XDIVY, in[0], in[1], NULL)) : SKIP(ctx);
    ltf_g_free(1, nz);
    return finish2(ctx, in, gx, gy, din);
}
GRAD_FN(grad_xdivy) {   /* g xdivy(x != 0, y), g xdivy(-x, y^2) */
    ltf_tensor *nz = NEED0 ? nonzero(ctx, in[0]) : NULL;
    ltf_tensor *gx = NEED0 ? g_times(ctx, G, ltf_g_op2(ctx, LTF_OP_XDIVY, nz, in[1], NULL)) : SKIP(ctx);
    ltf_tensor *gy = SKIP(ctx);
    if (NEED1) {
        ltf_tensor *nx = ltf_g_op1(ctx, LTF_OP_NEG, in[0], NULL), *y2 = ltf_g_op1(ctx, LTF_OP_SQUARE, in[1], NULL);
        ltf_tensor_release(gy);
        gy = g_times(ctx, G, ltf_g_op2(ctx, LTF_OP_XDIVY, nx, y2, NULL));
        ltf_g_free(2, nx, y2);
    }
    ltf_g_free(1, nz);
    return finish2(ctx, in, gx, gy, din);
}
GRAD_FN(grad_divide_no_nan) {   /* divide_no_nan(g, y), g divide_no_nan(divide_no_nan(-x, y), y) */
    ltf_tensor *gx = NEED0 ? ltf_g_op2(ctx, LTF_OP_DIVIDE_NO_NAN, G, in[1], NULL) : SKIP(ctx);
    ltf_tensor *gy = SKIP(ctx);
    if (NEED1) {
        ltf_tensor *nx = ltf_g_op1(ctx, LTF_OP_NEG, in[0], NULL);
        ltf_tensor *q = ltf_g_op2(ctx, LTF_OP_DIVIDE_NO_NAN, nx, in[1], NULL);
        ltf_tensor_release(gy);
        gy = g_times(ctx, G, ltf_g_op2(ctx, LTF_OP_DIVIDE_NO_NAN, q, in[1], NULL));
        ltf_g_free(2, nx, q);
    }
    return finish2(ctx, in, gx, gy, din);
}
GRAD_FN(grad_truncatemod) {   /* g, -g truncatediv(x, y) */
    ltf_tensor *gy = SKIP(ctx);
    if (NEED1) {
        ltf_tensor *m = g_times(ctx, G, ltf_g_op2(ctx, LTF_OP_TRUNCATEDIV, in[0], in[1], NULL));
        ltf_tensor_release(gy);
        gy = ltf_g_op1(ctx, LTF_OP_NEG, m, NULL);
        ltf_g_free(1, m);
    }
    return finish2(ctx, in, ltf_tensor_retain(G), gy, din);
}
/* only the second input has a gradient: din[0] stays empty, as TensorFlow's None */
static ltf_status second_only(ltf_ctx *ctx, ltf_tensor *const *in, ltf_tensor *g1, ltf_tensor **din) {
    din[1] = ltf_g_unbroadcast(ctx, g1, in[1]);
    ltf_g_free(1, g1);
    return din[1] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_polygamma) {   /* d/dx polygamma(a, x) = polygamma(a + 1, x) */
    ltf_tensor *one = ltf_g_scalar(ctx, in[0]->dtype, 1.0);
    ltf_tensor *a1 = ltf_g_op2(ctx, LTF_OP_ADD, in[0], one, NULL);
    ltf_tensor *p = ltf_g_op2(ctx, LTF_OP_POLYGAMMA, a1, in[1], NULL);
    ltf_g_free(2, one, a1);
    return second_only(ctx, in, g_times(ctx, G, p), din);
}
GRAD_FN(grad_zeta) {   /* d/dq zeta(x, q) = -x zeta(x + 1, q) */
    ltf_tensor *one = ltf_g_scalar(ctx, in[0]->dtype, 1.0);
    ltf_tensor *x1 = ltf_g_op2(ctx, LTF_OP_ADD, in[0], one, NULL);
    ltf_tensor *z = ltf_g_op2(ctx, LTF_OP_ZETA, x1, in[1], NULL);
    ltf_tensor *xz = ltf_g_op2(ctx, LTF_OP_MUL, in[0], z, NULL);
    ltf_tensor *n = ltf_g_op1(ctx, LTF_OP_NEG, xz, NULL);
    ltf_g_free(4, one, x1, z, xz);
    return second_only(ctx, in, g_times(ctx, G, n), din);
}
#undef X
#undef Y
#undef G
/* }==== */

/* {==== Definitions */
#define CPU(k) { [LTF_DEVICE_CPU] = k }
#define EW LTF_OP_ELEMENTWISE
#define ND LTF_OP_NOT_DIFFERENTIABLE

#define UNARY(name, code, flags, grad) \
    LTF_INTERNAL const ltf_op_def ltf_opdef_##name = { #name, 1, 1, EW | (flags), code, infer_unary, CPU(ltf_cpu_elementwise_unary), grad };
#define BINARY(name, code, flags, grad) \
    LTF_INTERNAL const ltf_op_def ltf_opdef_##name = { #name, 2, 2, EW | (flags), code, infer_binary, CPU(ltf_cpu_elementwise_binary), grad };

UNARY(negative, LTF_UN_NEG, 0, grad_negative)
UNARY(abs, LTF_UN_ABS, 0, grad_abs)
UNARY(sign, LTF_UN_SIGN, 0, grad_zero)
UNARY(exp, LTF_UN_EXP, 0, grad_exp)
UNARY(log, LTF_UN_LOG, 0, grad_log)
UNARY(log1p, LTF_UN_LOG1P, 0, grad_log1p)
UNARY(expm1, LTF_UN_EXPM1, 0, grad_expm1)
UNARY(sqrt, LTF_UN_SQRT, 0, grad_sqrt)
UNARY(rsqrt, LTF_UN_RSQRT, 0, grad_rsqrt)
UNARY(square, LTF_UN_SQUARE, 0, grad_square)
UNARY(reciprocal, LTF_UN_RECIPROCAL, 0, grad_reciprocal)
UNARY(tanh, LTF_UN_TANH, 0, grad_tanh)
UNARY(sigmoid, LTF_UN_SIGMOID, 0, grad_sigmoid)
UNARY(relu, LTF_UN_RELU, 0, grad_relu)
UNARY(softplus, LTF_UN_SOFTPLUS, 0, grad_softplus)
UNARY(sin, LTF_UN_SIN, 0, grad_sin)
UNARY(cos, LTF_UN_COS, 0, grad_cos)
UNARY(floor, LTF_UN_FLOOR, 0, grad_zero)
UNARY(ceil, LTF_UN_CEIL, 0, grad_zero)
UNARY(round, LTF_UN_ROUND, 0, grad_zero)
UNARY(logical_not, LTF_UN_LOGICAL_NOT, ND, NULL)
UNARY(invert, LTF_UN_INVERT, ND, NULL)
UNARY(is_nan, LTF_UN_IS_NAN, ND, NULL)
UNARY(is_finite, LTF_UN_IS_FINITE, ND, NULL)
UNARY(acos, LTF_UN_ACOS, 0, grad_acos)
UNARY(acosh, LTF_UN_ACOSH, 0, grad_acosh)
UNARY(asin, LTF_UN_ASIN, 0, grad_asin)
UNARY(asinh, LTF_UN_ASINH, 0, grad_asinh)
UNARY(atan, LTF_UN_ATAN, 0, grad_atan)
UNARY(atanh, LTF_UN_ATANH, 0, grad_atanh)
UNARY(cosh, LTF_UN_COSH, 0, grad_cosh)
UNARY(sinh, LTF_UN_SINH, 0, grad_sinh)
UNARY(tan, LTF_UN_TAN, 0, grad_tan)
UNARY(erf, LTF_UN_ERF, 0, grad_erf)
UNARY(erfc, LTF_UN_ERFC, 0, grad_erfc)
UNARY(lgamma, LTF_UN_LGAMMA, 0, grad_lgamma)
UNARY(digamma, LTF_UN_DIGAMMA, 0, grad_digamma)
UNARY(is_inf, LTF_UN_IS_INF, ND, NULL)

LTF_INTERNAL const ltf_op_def ltf_opdef_identity = {
    "identity", 1, 1, EW | LTF_OP_VIEW, 0, infer_same, CPU(ltf_cpu_elementwise_copy), grad_identity };
LTF_INTERNAL const ltf_op_def ltf_opdef_stop_gradient = {
    "stop_gradient", 1, 1, EW | LTF_OP_VIEW | ND, 0, infer_same, CPU(ltf_cpu_elementwise_copy), NULL };
static ltf_status infer_fill_like(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                  const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    ltf_dtype dt = in[0]->dtype;
    if (dt == LTF_DTYPE_RESOURCE || (def->code == 1 && dt == LTF_DTYPE_STRING))
        return bad_dtype(ctx, def, "x", dt, N_ | B_ | (def->code == 1 ? 0 : S_));
    return infer_same(ctx, def, in, nin, a, out, maxout, nout);
}
LTF_INTERNAL const ltf_op_def ltf_opdef_zeros_like = {
    "zeros_like", 1, 1, EW | ND, 0, infer_fill_like, CPU(ltf_cpu_elementwise_fill_like), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_ones_like = {
    "ones_like", 1, 1, EW | ND, 1, infer_fill_like, CPU(ltf_cpu_elementwise_fill_like), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_cast = {
    "cast", 1, 1, EW, 0, infer_cast, CPU(ltf_cpu_elementwise_cast), grad_cast };
LTF_INTERNAL const ltf_op_def ltf_opdef_check_numerics = {
    "check_numerics", 1, 1, EW | LTF_OP_STATEFUL, 0, infer_check_numerics,
    CPU(ltf_cpu_elementwise_check_numerics), grad_identity };

BINARY(add, LTF_BIN_ADD, 0, grad_add)
BINARY(subtract, LTF_BIN_SUB, 0, grad_sub)
BINARY(multiply, LTF_BIN_MUL, 0, grad_mul)
BINARY(divide, LTF_BIN_DIV, 0, grad_div)
BINARY(floordiv, LTF_BIN_FLOORDIV, ND, NULL)
BINARY(floormod, LTF_BIN_FLOORMOD, 0, grad_floormod)
BINARY(pow, LTF_BIN_POW, 0, grad_pow)
BINARY(maximum, LTF_BIN_MAXIMUM, 0, grad_maximum)
BINARY(minimum, LTF_BIN_MINIMUM, 0, grad_minimum)
BINARY(squared_difference, LTF_BIN_SQUARED_DIFFERENCE, 0, grad_squared_difference)
BINARY(equal, LTF_BIN_EQUAL, ND, NULL)
BINARY(not_equal, LTF_BIN_NOT_EQUAL, ND, NULL)
BINARY(less, LTF_BIN_LESS, ND, NULL)
BINARY(less_equal, LTF_BIN_LESS_EQUAL, ND, NULL)
BINARY(greater, LTF_BIN_GREATER, ND, NULL)
BINARY(greater_equal, LTF_BIN_GREATER_EQUAL, ND, NULL)
BINARY(logical_and, LTF_BIN_LOGICAL_AND, ND, NULL)
BINARY(logical_or, LTF_BIN_LOGICAL_OR, ND, NULL)
BINARY(logical_xor, LTF_BIN_LOGICAL_XOR, ND, NULL)
BINARY(bitwise_and, LTF_BIN_BITWISE_AND, ND, NULL)
BINARY(bitwise_or, LTF_BIN_BITWISE_OR, ND, NULL)
BINARY(bitwise_xor, LTF_BIN_BITWISE_XOR, ND, NULL)
BINARY(left_shift, LTF_BIN_LEFT_SHIFT, ND, NULL)
BINARY(right_shift, LTF_BIN_RIGHT_SHIFT, ND, NULL)
BINARY(relu_grad, LTF_BIN_RELU_GRAD, 0, grad_relu_grad)
BINARY(tanh_grad, LTF_BIN_TANH_GRAD, 0, grad_tanh_grad)
BINARY(sigmoid_grad, LTF_BIN_SIGMOID_GRAD, 0, grad_sigmoid_grad)
BINARY(atan2, LTF_BIN_ATAN2, 0, grad_atan2)
BINARY(xlogy, LTF_BIN_XLOGY, 0, grad_xlogy)
BINARY(xdivy, LTF_BIN_XDIVY, 0, grad_xdivy)
BINARY(divide_no_nan, LTF_BIN_DIVIDE_NO_NAN, 0, grad_divide_no_nan)
BINARY(truncatediv, LTF_BIN_TRUNCATEDIV, ND, NULL)
BINARY(truncatemod, LTF_BIN_TRUNCATEMOD, 0, grad_truncatemod)
BINARY(polygamma, LTF_BIN_POLYGAMMA, 0, grad_polygamma)
BINARY(zeta, LTF_BIN_ZETA, 0, grad_zeta)

LTF_INTERNAL const ltf_op_def ltf_opdef_where = {
    "where", 3, 3, EW, 0, infer_select, CPU(ltf_cpu_elementwise_select), grad_where };
LTF_INTERNAL const ltf_op_def ltf_opdef_string_join = {
    "string_join", 1, -1, EW | ND, 0, infer_string_join, CPU(ltf_cpu_elementwise_string_join), NULL };
/* }==== */
