/*
** ops/nn.c: definitions of the neural-network ops (softmax, log_softmax,
** the two softmax cross-entropies, conv2d, max_pool2d, avg_pool2d, and the
** ops their gradients are made of: conv2d_backprop_input/filter,
** max_pool2d_grad(_grad), avg_pool2d_grad; depthwise_conv2d and its
** backprop_input/filter): dtype and attribute checks,
** shape inference with partial shapes, kernels, gradients. Attribute slots
** are documented in ltf_ops/nn.h. Gradients: softmax/log_softmax from their
** outputs, the cross-entropies from softmax - labels (TensorFlow's), conv2d
** and the pools through their gradient ops, each of which has a gradient
** too (they are linear in their gradient input: the adjoint of one is the
** other), so gradients of gradients work.
*/
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "../op.h"
#include "../shape.h"
#include "../grad.h"
#include "../cpu/cpu.h"

LTF_CPU_KERNEL(ltf_cpu_nn_gelu);        /* gelu (code 0) and gelu_grad (code 1) */
LTF_CPU_KERNEL(ltf_cpu_nn_dropout_noise);

/* {==== dtype sets */
#define M(dt) (1u << (dt))
#define F_  (M(LTF_DTYPE_FLOAT32) | M(LTF_DTYPE_FLOAT64) | M(LTF_DTYPE_FLOAT16) | M(LTF_DTYPE_BFLOAT16))
#define N_  (F_ | M(LTF_DTYPE_INT32) | M(LTF_DTYPE_INT64) | M(LTF_DTYPE_UINT8))

static ltf_status bad_dtype(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, ltf_dtype dt, unsigned mask) {
    char buf[128];
    size_t n = 0;
    buf[0] = '\0';
    for (int d = 0; d < LTF_DTYPE_COUNT && n < sizeof buf; d++)
        if (mask & M(d)) n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? ", " : "", ltf_dtype_name((ltf_dtype)d));
    return ltf_fail(ctx, LTF_ERR_TYPE, "%s: '%s' has dtype %s, expected one of: %s", def->name, arg,
                    ltf_dtype_name(dt), buf);
}

static ltf_status same_dtype(ltf_ctx *ctx, const ltf_op_def *def, const char *x, const ltf_tensor *tx,
                             const char *y, const ltf_tensor *ty) {
    if (tx->dtype == ty->dtype) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_TYPE, "%s: %s and %s must have the same dtype, got %s: %s and %s: %s (use tf.cast)",
                    def->name, x, y, x, ltf_dtype_name(tx->dtype), y, ltf_dtype_name(ty->dtype));
}

static ltf_status need_rank(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const ltf_tensor *t, int rank,
                            int at_least) {
    if (t->rank == LTF_UNKNOWN_RANK || t->rank == rank || (at_least && t->rank > rank)) return LTF_OK;
    char s[LTF_SHAPE_BUF];
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must have rank %s%d, got shape %s", def->name, arg,
                    at_least ? ">= " : "", rank, ltf_shape_str(t->rank, t->dims, s, sizeof s));
}

static void copy_type(ltf_type *t, ltf_dtype dt, int rank, const int64_t *dims) {
    t->dtype = dt;
    t->rank = rank;
    if (rank > 0) memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
}
/* }==== */

/* {==== Softmax family */
static ltf_status infer_softmax(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    if (!(F_ & M(x->dtype))) return bad_dtype(ctx, def, "logits", x->dtype, F_);
    ltf_status st = need_rank(ctx, def, "logits", x, 1, 1);
    if (st != LTF_OK) return st;
    if (x->rank >= 0) {
        int ax;
        st = ltf_axis_normalize(ctx, def->name, "axis", a->i[0], x->rank, &ax);
        if (st != LTF_OK) return st;
    }
    copy_type(out, x->dtype, x->rank, x->dims);
    *nout = 1;
    return LTF_OK;
}

/* labels (batch...) int, logits (batch..., C) float -> loss (batch...). */
static ltf_status infer_sparse_xent(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                    const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)a; (void)maxout;
    const ltf_tensor *labels = in[0], *logits = in[1];
    unsigned ints = M(LTF_DTYPE_INT32) | M(LTF_DTYPE_INT64);
    if (!(ints & M(labels->dtype))) return bad_dtype(ctx, def, "labels", labels->dtype, ints);
    if (!(F_ & M(logits->dtype))) return bad_dtype(ctx, def, "logits", logits->dtype, F_);
    ltf_status st = need_rank(ctx, def, "logits", logits, 1, 1);
    if (st != LTF_OK) return st;
    *nout = 1;
    out->dtype = logits->dtype;
    if (logits->rank == LTF_UNKNOWN_RANK) {
        copy_type(out, logits->dtype, labels->rank, labels->dims);
        return LTF_OK;
    }
    int r = logits->rank - 1;
    int ok = labels->rank == LTF_UNKNOWN_RANK || labels->rank == r;
    for (int i = 0; ok && labels->rank >= 0 && i < r; i++)
        if (labels->dims[i] >= 0 && logits->dims[i] >= 0 && labels->dims[i] != logits->dims[i]) ok = 0;
    if (!ok) {
        char sl[LTF_SHAPE_BUF], sg[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: labels must have the shape of logits without its last dimension: labels is %s, logits is %s",
                        def->name, ltf_shape_str(labels->rank, labels->dims, sl, sizeof sl),
                        ltf_shape_str(logits->rank, logits->dims, sg, sizeof sg));
    }
    out->rank = r;
    for (int i = 0; i < r; i++)
        out->dims[i] = logits->dims[i] >= 0 ? logits->dims[i] : (labels->rank >= 0 ? labels->dims[i] : -1);
    return LTF_OK;
}

/* labels and logits of one shape -> loss without the class axis. */
static ltf_status infer_xent(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    const ltf_tensor *labels = in[0], *logits = in[1];
    if (!(F_ & M(logits->dtype))) return bad_dtype(ctx, def, "logits", logits->dtype, F_);
    ltf_status st = same_dtype(ctx, def, "labels", labels, "logits", logits);
    if (st == LTF_OK) st = need_rank(ctx, def, "logits", logits, 1, 1);
    if (st != LTF_OK) return st;
    *nout = 1;
    const ltf_tensor *known = logits->rank >= 0 ? logits : labels;
    if (known->rank == LTF_UNKNOWN_RANK) {
        copy_type(out, logits->dtype, LTF_UNKNOWN_RANK, NULL);
        return LTF_OK;
    }
    int ok = labels->rank == LTF_UNKNOWN_RANK || logits->rank == LTF_UNKNOWN_RANK || labels->rank == logits->rank;
    for (int i = 0; ok && labels->rank >= 0 && logits->rank >= 0 && i < logits->rank; i++)
        if (labels->dims[i] >= 0 && logits->dims[i] >= 0 && labels->dims[i] != logits->dims[i]) ok = 0;
    if (!ok) {
        char sl[LTF_SHAPE_BUF], sg[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: labels and logits must have the same shape: labels is %s, logits is %s", def->name,
                        ltf_shape_str(labels->rank, labels->dims, sl, sizeof sl),
                        ltf_shape_str(logits->rank, logits->dims, sg, sizeof sg));
    }
    int ax;
    st = ltf_axis_normalize(ctx, def->name, "axis", a->i[0], known->rank, &ax);
    if (st != LTF_OK) return st;
    out->dtype = logits->dtype;
    out->rank = known->rank - 1;
    for (int i = 0, j = 0; i < known->rank; i++) {
        if (i == ax) continue;
        int64_t d = logits->rank >= 0 ? logits->dims[i] : -1;
        if (d < 0 && labels->rank >= 0) d = labels->dims[i];
        out->dims[j++] = d;
    }
    return LTF_OK;
}
/* }==== */

/* {==== Windows (conv2d, pools) */
static const char *const padding_names[] = { "VALID", "SAME", "EXPLICIT" };

/* Output size along one spatial dimension, TensorFlow's arithmetic
** (GetWindowedOutputSize): -1 when 'in' is unknown. */
static ltf_status window_out(ltf_ctx *ctx, const char *op, const char *dim, int64_t in, int64_t k, int64_t stride,
                             int64_t dilation, int padding, int64_t pad_before, int64_t pad_after, int64_t *out) {
    if (in < 0 || (k < 0 && padding != LTF_PADDING_SAME)) {
        *out = LTF_UNKNOWN_DIM;
        return LTF_OK;
    }
    /* the effective window and the padded input must fit in int64 (SAME too:
    ** its padding, computed by the kernels, is at most the window) */
    int64_t eff = 1, span;
    if ((k >= 1 && (__builtin_mul_overflow(k - 1, dilation, &eff) || __builtin_add_overflow(eff, 1, &eff))) ||
        __builtin_add_overflow(in, pad_before, &span) || __builtin_add_overflow(span, pad_after, &span))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: the window does not fit in int64 along %s: input size %lld, window size %lld, dilation "
                        "%lld, padding %lld + %lld", op, dim, (long long)in, (long long)k, (long long)dilation,
                        (long long)pad_before, (long long)pad_after);
    if (padding == LTF_PADDING_SAME) {
        *out = in / stride + (in % stride != 0);   /* ceil(in / stride), without forming in + stride - 1 */
        return LTF_OK;
    }
    int64_t d = span - eff;   /* both >= 0 here (eff >= 1 for k >= 1): no overflow */
    int64_t o = d < 0 ? (d + stride) / stride : d / stride + 1;   /* (d + stride) / stride, truncated as C++ does */
    if (o < 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: computed output size would be negative along %s: %lld (input size %lld, effective "
                        "window size %lld, stride %lld, padding %s)", op, dim, (long long)o, (long long)in,
                        (long long)eff, (long long)stride, padding_names[padding]);
    *out = o;
    return LTF_OK;
}

/* Window attributes are TensorFlow int32s: bounding them keeps every
** product in the window arithmetic inside int64. */
#define WINDOW_ATTR_MAX INT32_MAX

static ltf_status check_positive(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const int64_t *v) {
    if (v[0] >= 1 && v[1] >= 1 && v[0] <= WINDOW_ATTR_MAX && v[1] <= WINDOW_ATTR_MAX) return LTF_OK;
    if (v[0] < 1 || v[1] < 1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must be positive, got (%lld, %lld)", def->name, arg,
                        (long long)v[0], (long long)v[1]);
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must be at most %d, got (%lld, %lld)", def->name, arg,
                    WINDOW_ATTR_MAX, (long long)v[0], (long long)v[1]);
}

static ltf_status check_padding(ltf_ctx *ctx, const ltf_op_def *def, const ltf_attrs *a, int explicit_ok) {
    if (a->i[0] == LTF_PADDING_VALID || a->i[0] == LTF_PADDING_SAME) return LTF_OK;
    if (a->i[0] == LTF_PADDING_EXPLICIT && explicit_ok) {
        if (a->nints < 8)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: explicit padding needs 4 values", def->name);
        for (int i = 4; i < 8; i++)
            if (a->ints[i] < 0 || a->ints[i] > WINDOW_ATTR_MAX)
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: explicit padding must be in 0..%d, got %lld",
                                def->name, WINDOW_ATTR_MAX, (long long)a->ints[i]);
        return LTF_OK;
    }
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: invalid padding code %lld", def->name, (long long)a->i[0]);
}

/* The window attributes of conv2d and its backprop ops; sets 'strides' and
** 'dil' (dilations, 1 when absent). */
static ltf_status conv_attrs(ltf_ctx *ctx, const ltf_op_def *def, const ltf_attrs *a, const int64_t **strides,
                             const int64_t **dil) {
    static const int64_t ones[2] = { 1, 1 };
    if (a->nints != 2 && a->nints != 4 && a->nints != 8)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: expected 2, 4 or 8 window attributes, got %d",
                        def->name, a->nints);
    *strides = a->ints;
    *dil = a->nints >= 4 ? a->ints + 2 : ones;
    ltf_status st = check_positive(ctx, def, "strides", *strides);
    if (st == LTF_OK) st = check_positive(ctx, def, "dilations", *dil);
    if (st == LTF_OK) st = check_padding(ctx, def, a, 1);
    return st;
}

static const char *const dim_names[2] = { "height", "width" };

/* Spatial output sizes of conv2d for input spatial sizes 'hw' and filter
** sizes 'k' (either may hold unknown -1s). */
static ltf_status conv_out_hw(ltf_ctx *ctx, const ltf_op_def *def, const ltf_attrs *a, const int64_t *strides,
                              const int64_t *dil, const int64_t *hw, const int64_t *k, int64_t *ohw) {
    int explicit_pad = a->i[0] == LTF_PADDING_EXPLICIT;
    for (int s = 0; s < 2; s++) {
        ltf_status st = window_out(ctx, def->name, dim_names[s], hw[s], k[s], strides[s], dil[s], (int)a->i[0],
                                   explicit_pad ? a->ints[4 + 2 * s] : 0, explicit_pad ? a->ints[5 + 2 * s] : 0,
                                   &ohw[s]);
        if (st != LTF_OK) return st;
    }
    return LTF_OK;
}

static ltf_status depth_mismatch(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *x, const ltf_tensor *f) {
    char sx[LTF_SHAPE_BUF], sf[LTF_SHAPE_BUF];
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                    "%s: input depth %lld does not match the filters' input depth %lld: input is %s, filters are %s",
                    def->name, (long long)x->dims[3], (long long)f->dims[2],
                    ltf_shape_str(x->rank, x->dims, sx, sizeof sx), ltf_shape_str(f->rank, f->dims, sf, sizeof sf));
}

static ltf_status infer_conv2d(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0], *f = in[1];
    if (!(F_ & M(x->dtype))) return bad_dtype(ctx, def, "input", x->dtype, F_);
    ltf_status st = same_dtype(ctx, def, "input", x, "filters", f);
    if (st == LTF_OK) st = need_rank(ctx, def, "input", x, 4, 0);
    if (st == LTF_OK) st = need_rank(ctx, def, "filters", f, 4, 0);
    if (st != LTF_OK) return st;
    const int64_t *strides, *dil;
    if ((st = conv_attrs(ctx, def, a, &strides, &dil)) != LTF_OK) return st;
    int64_t depth = x->rank == 4 ? x->dims[3] : -1, fdepth = f->rank == 4 ? f->dims[2] : -1;
    if (depth >= 0 && fdepth >= 0 && depth != fdepth) return depth_mismatch(ctx, def, x, f);
    if (f->rank == 4 && (f->dims[0] == 0 || f->dims[1] == 0)) {
        char sf[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: filters must have a positive height and width, got %s",
                        def->name, ltf_shape_str(f->rank, f->dims, sf, sizeof sf));
    }
    out->dtype = x->dtype;
    out->rank = 4;
    *nout = 1;
    int xk = x->rank == 4, fk = f->rank == 4;
    out->dims[0] = xk ? x->dims[0] : -1;
    out->dims[3] = fk ? f->dims[3] : -1;
    int64_t hw[2] = { xk ? x->dims[1] : -1, xk ? x->dims[2] : -1 };
    int64_t k[2] = { fk ? f->dims[0] : -1, fk ? f->dims[1] : -1 };
    return conv_out_hw(ctx, def, a, strides, dil, hw, k, out->dims + 1);
}

/* The spatial sizes attribute of the gradient ops (ints2 = 2 sizes). */
static ltf_status sizes_attr(ltf_ctx *ctx, const ltf_op_def *def, const char *what, const ltf_attrs *a,
                             int64_t min) {
    if (a->nints2 != 2)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: expected the %s's height and width, got %d sizes",
                        def->name, what, a->nints2);
    if (a->ints2[0] < min || a->ints2[1] < min || a->ints2[0] > WINDOW_ATTR_MAX || a->ints2[1] > WINDOW_ATTR_MAX)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the %s's height and width must be in %lld..%d, got "
                        "(%lld, %lld)", def->name, what, (long long)min, WINDOW_ATTR_MAX, (long long)a->ints2[0],
                        (long long)a->ints2[1]);
    return LTF_OK;
}

/* 'dy' against the forward output (batch, spatial ohw, depth), where known. */
static ltf_status check_dy(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *dy, int64_t batch,
                           const int64_t *ohw, int64_t depth) {
    if (dy->rank != 4) return LTF_OK;
    int64_t want[4] = { batch, ohw[0], ohw[1], depth };
    for (int i = 0; i < 4; i++)
        if (want[i] >= 0 && dy->dims[i] >= 0 && want[i] != dy->dims[i]) {
            char sd[LTF_SHAPE_BUF], sw[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: the gradient has shape %s but the forward output has shape %s", def->name,
                            ltf_shape_str(4, dy->dims, sd, sizeof sd), ltf_shape_str(4, want, sw, sizeof sw));
        }
    return LTF_OK;
}

static ltf_status infer_bpi_common(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, const ltf_attrs *a,
                                   ltf_type *out, int *nout, int depthwise);

/* conv2d_backprop_input(filters, dy) -> (N, H, W, C) */
static ltf_status infer_conv2d_bpi(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                   const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    return infer_bpi_common(ctx, def, in, a, out, nout, 0);
}

/* conv2d_backprop_input_dyn(filters, dy, input_sizes): the sizes' values
** (when known) as ints2 */
static int bpi_sizes(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *sizes, const ltf_attrs *a,
                     ltf_attrs *c, ltf_type *partial, ltf_status *st) {
    ltf_attrs b, none;
    ltf_attrs_init(&none);
    int complete = 0;
    *st = ltf_shape_input_type(ctx, def, "input_sizes", sizes, LTF_DTYPE_FLOAT32, partial, &complete, &b, &none);
    if (*st != LTF_OK) return 0;
    int n = complete ? b.nints : partial->rank;
    if (n >= 0 && n != 2 && n != 4) {
        *st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'input_sizes' must have 4 entries (N, H, W, C) or 2 (H, W), "
                       "got %d", def->name, n);
        return 0;
    }
    *c = *a;
    c->nints2 = 2;
    if (!complete) return 0;
    c->ints2[0] = b.ints[n == 4 ? 1 : 0];
    c->ints2[1] = b.ints[n == 4 ? 2 : 1];
    return 1;
}

static ltf_status infer_conv2d_bpi_dyn(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                       const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    ltf_attrs c;
    ltf_type partial;
    ltf_status st;
    ltf_attrs none;
    ltf_attrs_init(&none);
    if (!a) a = &none;
    if (bpi_sizes(ctx, def, in[2], a, &c, &partial, &st)) return infer_conv2d_bpi(ctx, def, in, 2, &c, out, maxout, nout);
    if (st != LTF_OK) return st;
    /* sizes known only at run time: the dtype and depth checks, unknown height and width */
    const ltf_tensor *f = in[0], *dy = in[1];
    if (!(F_ & M(f->dtype))) return bad_dtype(ctx, def, "filters", f->dtype, F_);
    st = same_dtype(ctx, def, "filters", f, "dy", dy);
    if (st == LTF_OK) st = need_rank(ctx, def, "filters", f, 4, 0);
    if (st == LTF_OK) st = need_rank(ctx, def, "dy", dy, 4, 0);
    if (st != LTF_OK) return st;
    int n = partial.rank;
    out->dtype = f->dtype;
    out->rank = 4;
    out->dims[0] = dy->rank == 4 ? dy->dims[0] : -1;
    out->dims[1] = n == 4 ? partial.dims[1] : n == 2 ? partial.dims[0] : -1;
    out->dims[2] = n == 4 ? partial.dims[2] : n == 2 ? partial.dims[1] : -1;
    out->dims[3] = f->rank == 4 ? f->dims[2] : -1;
    *nout = 1;
    return LTF_OK;
}

static ltf_status kernel_conv2d_bpi_dyn(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                        const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin;
    ltf_attrs c;
    ltf_type partial;
    ltf_status st;
    ltf_attrs none;
    ltf_attrs_init(&none);
    if (!a) a = &none;
    if (!bpi_sizes(ctx, def, in[2], a, &c, &partial, &st))
        return st != LTF_OK ? st : ltf_fail(ctx, LTF_ERR_INTERNAL, "%s: 'input_sizes' must be in host memory", def->name);
    return ltf_cpu_nn_conv2d_backprop_input(ctx, def, in, 2, &c, out, nout);
}

/* conv2d_backprop_filter(input, dy) -> (KH, KW, C, O) */
static ltf_status infer_conv2d_bpf(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                   const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0], *dy = in[1];
    if (!(F_ & M(x->dtype))) return bad_dtype(ctx, def, "input", x->dtype, F_);
    ltf_status st = same_dtype(ctx, def, "input", x, "dy", dy);
    if (st == LTF_OK) st = need_rank(ctx, def, "input", x, 4, 0);
    if (st == LTF_OK) st = need_rank(ctx, def, "dy", dy, 4, 0);
    if (st != LTF_OK) return st;
    const int64_t *strides, *dil;
    if ((st = conv_attrs(ctx, def, a, &strides, &dil)) != LTF_OK) return st;
    if ((st = sizes_attr(ctx, def, "filters", a, 1)) != LTF_OK) return st;
    int xk = x->rank == 4;
    int64_t hw[2] = { xk ? x->dims[1] : -1, xk ? x->dims[2] : -1 }, ohw[2];
    if ((st = conv_out_hw(ctx, def, a, strides, dil, hw, a->ints2, ohw)) != LTF_OK) return st;
    if ((st = check_dy(ctx, def, dy, xk ? x->dims[0] : -1, ohw, -1)) != LTF_OK) return st;
    out->dtype = x->dtype;
    out->rank = 4;
    out->dims[0] = a->ints2[0];
    out->dims[1] = a->ints2[1];
    out->dims[2] = xk ? x->dims[3] : -1;
    out->dims[3] = dy->rank == 4 ? dy->dims[3] : -1;
    *nout = 1;
    return LTF_OK;
}

/* {==== depthwise_conv2d and its gradient ops */
#define FW_ (M(LTF_DTYPE_FLOAT32) | M(LTF_DTYPE_FLOAT64))

/* The window attributes of the depthwise ops: as conv2d's, without
** explicit padding. */
static ltf_status dw_attrs(ltf_ctx *ctx, const ltf_op_def *def, const ltf_attrs *a, const int64_t **strides,
                           const int64_t **dil) {
    ltf_status st = conv_attrs(ctx, def, a, strides, dil);
    if (st == LTF_OK && a->i[0] == LTF_PADDING_EXPLICIT)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: explicit padding is not supported (SAME or VALID)",
                        def->name);
    return st;
}

/* depthwise_conv2d(input, filter): (N, H, W, C), (KH, KW, C, M) -> (N, OH, OW, C * M) */
static ltf_status infer_dw(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                           const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0], *f = in[1];
    if (!(FW_ & M(x->dtype))) return bad_dtype(ctx, def, "input", x->dtype, FW_);
    ltf_status st = same_dtype(ctx, def, "input", x, "filter", f);
    if (st == LTF_OK) st = need_rank(ctx, def, "input", x, 4, 0);
    if (st == LTF_OK) st = need_rank(ctx, def, "filter", f, 4, 0);
    if (st != LTF_OK) return st;
    const int64_t *strides, *dil;
    if ((st = dw_attrs(ctx, def, a, &strides, &dil)) != LTF_OK) return st;
    int xk = x->rank == 4, fk = f->rank == 4;
    int64_t depth = xk ? x->dims[3] : -1, fdepth = fk ? f->dims[2] : -1;
    if (depth >= 0 && fdepth >= 0 && depth != fdepth) return depth_mismatch(ctx, def, x, f);
    if (fk && (f->dims[0] == 0 || f->dims[1] == 0)) {
        char sf[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: filter must have a positive height and width, got %s",
                        def->name, ltf_shape_str(f->rank, f->dims, sf, sizeof sf));
    }
    out->dtype = x->dtype;
    out->rank = 4;
    *nout = 1;
    out->dims[0] = xk ? x->dims[0] : -1;
    int64_t c = depth >= 0 ? depth : fdepth, m = fk ? f->dims[3] : -1;
    out->dims[3] = c >= 0 && m >= 0 ? c * m : -1;
    int64_t hw[2] = { xk ? x->dims[1] : -1, xk ? x->dims[2] : -1 };
    int64_t k[2] = { fk ? f->dims[0] : -1, fk ? f->dims[1] : -1 };
    return conv_out_hw(ctx, def, a, strides, dil, hw, k, out->dims + 1);
}

/* conv2d_backprop_input(filters, dy) and depthwise_conv2d_backprop_input(filter, dy):
** the same checks and output, but for the dtypes, the attributes' check, the
** filter argument's name and dy's depth (C * M for depthwise, OC for conv2d). */
static ltf_status infer_bpi_common(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, const ltf_attrs *a,
                                   ltf_type *out, int *nout, int depthwise) {
    const ltf_tensor *f = in[0], *dy = in[1];
    const char *fname = depthwise ? "filter" : "filters";
    unsigned ok = depthwise ? FW_ : F_;
    if (!(ok & M(f->dtype))) return bad_dtype(ctx, def, fname, f->dtype, ok);
    ltf_status st = same_dtype(ctx, def, fname, f, "dy", dy);
    if (st == LTF_OK) st = need_rank(ctx, def, fname, f, 4, 0);
    if (st == LTF_OK) st = need_rank(ctx, def, "dy", dy, 4, 0);
    if (st != LTF_OK) return st;
    const int64_t *strides, *dil;
    st = depthwise ? dw_attrs(ctx, def, a, &strides, &dil) : conv_attrs(ctx, def, a, &strides, &dil);
    if (st != LTF_OK) return st;
    if ((st = sizes_attr(ctx, def, "input", a, 0)) != LTF_OK) return st;
    int fk = f->rank == 4;
    int64_t k[2] = { fk ? f->dims[0] : -1, fk ? f->dims[1] : -1 }, ohw[2];
    if (fk && (k[0] == 0 || k[1] == 0))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: %s must have a positive height and width", def->name, fname);
    if ((st = conv_out_hw(ctx, def, a, strides, dil, a->ints2, k, ohw)) != LTF_OK) return st;
    int64_t depth = fk ? (depthwise ? f->dims[2] * f->dims[3] : f->dims[3]) : -1;
    if ((st = check_dy(ctx, def, dy, -1, ohw, depth)) != LTF_OK) return st;
    out->dtype = f->dtype;
    out->rank = 4;
    out->dims[0] = dy->rank == 4 ? dy->dims[0] : -1;
    out->dims[1] = a->ints2[0];
    out->dims[2] = a->ints2[1];
    out->dims[3] = fk ? f->dims[2] : -1;
    *nout = 1;
    return LTF_OK;
}

/* depthwise_conv2d_backprop_input(filter, dy) -> (N, H, W, C), (H, W) in ints2 */
static ltf_status infer_dw_bpi(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    return infer_bpi_common(ctx, def, in, a, out, nout, 1);
}

/* depthwise_conv2d_backprop_filter(input, dy) -> (KH, KW, C, M), (KH, KW) in
** ints2; M = dy's depth / C */
static ltf_status infer_dw_bpf(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0], *dy = in[1];
    if (!(FW_ & M(x->dtype))) return bad_dtype(ctx, def, "input", x->dtype, FW_);
    ltf_status st = same_dtype(ctx, def, "input", x, "dy", dy);
    if (st == LTF_OK) st = need_rank(ctx, def, "input", x, 4, 0);
    if (st == LTF_OK) st = need_rank(ctx, def, "dy", dy, 4, 0);
    if (st != LTF_OK) return st;
    const int64_t *strides, *dil;
    if ((st = dw_attrs(ctx, def, a, &strides, &dil)) != LTF_OK) return st;
    if ((st = sizes_attr(ctx, def, "filter", a, 1)) != LTF_OK) return st;
    int xk = x->rank == 4;
    int64_t hw[2] = { xk ? x->dims[1] : -1, xk ? x->dims[2] : -1 }, ohw[2];
    if ((st = conv_out_hw(ctx, def, a, strides, dil, hw, a->ints2, ohw)) != LTF_OK) return st;
    if ((st = check_dy(ctx, def, dy, xk ? x->dims[0] : -1, ohw, -1)) != LTF_OK) return st;
    int64_t c = xk ? x->dims[3] : -1, od = dy->rank == 4 ? dy->dims[3] : -1;
    if (c > 0 && od >= 0 && od % c != 0) {
        char sx[LTF_SHAPE_BUF], sd[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the gradient's depth %lld is not a multiple of the "
                        "input depth %lld: input is %s, dy is %s", def->name, (long long)od, (long long)c,
                        ltf_shape_str(x->rank, x->dims, sx, sizeof sx), ltf_shape_str(dy->rank, dy->dims, sd, sizeof sd));
    }
    out->dtype = x->dtype;
    out->rank = 4;
    out->dims[0] = a->ints2[0];
    out->dims[1] = a->ints2[1];
    out->dims[2] = c;
    out->dims[3] = c > 0 && od >= 0 ? od / c : -1;
    *nout = 1;
    return LTF_OK;
}
#undef FW_
/* }==== */

static ltf_status pool_attrs(ltf_ctx *ctx, const ltf_op_def *def, const ltf_attrs *a) {
    if (a->nints != 4)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: expected 4 window attributes, got %d", def->name, a->nints);
    ltf_status st = check_positive(ctx, def, "ksize", a->ints);
    if (st == LTF_OK) st = check_positive(ctx, def, "strides", a->ints + 2);
    if (st == LTF_OK) st = check_padding(ctx, def, a, 0);
    return st;
}

/* Spatial output sizes of a pool over spatial input sizes 'hw'. */
static ltf_status pool_out_hw(ltf_ctx *ctx, const ltf_op_def *def, const ltf_attrs *a, const int64_t *hw,
                              int64_t *ohw) {
    for (int s = 0; s < 2; s++) {
        ltf_status st = window_out(ctx, def->name, dim_names[s], hw[s], a->ints[s], a->ints[2 + s], 1, (int)a->i[0],
                                   0, 0, &ohw[s]);
        if (st != LTF_OK) return st;
    }
    return LTF_OK;
}

static ltf_status infer_pool(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    unsigned mask = def->code == 0 ? N_ : F_;
    if (!(mask & M(x->dtype))) return bad_dtype(ctx, def, "input", x->dtype, mask);
    ltf_status st = need_rank(ctx, def, "input", x, 4, 0);
    if (st == LTF_OK) st = pool_attrs(ctx, def, a);
    if (st != LTF_OK) return st;
    int xk = x->rank == 4;
    out->dtype = x->dtype;
    out->rank = 4;
    *nout = 1;
    out->dims[0] = xk ? x->dims[0] : -1;
    out->dims[3] = xk ? x->dims[3] : -1;
    int64_t hw[2] = { xk ? x->dims[1] : -1, xk ? x->dims[2] : -1 };
    return pool_out_hw(ctx, def, a, hw, out->dims + 1);
}

/* max_pool2d_grad(input, dy) -> input's shape (code 0);
** max_pool2d_grad_grad(input, g) -> the pool's shape (code 1). */
static ltf_status infer_max_pool_grad(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                      const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0], *g = in[1];
    const char *gname = def->code == 0 ? "dy" : "g";
    if (!(F_ & M(x->dtype))) return bad_dtype(ctx, def, "input", x->dtype, F_);
    ltf_status st = same_dtype(ctx, def, "input", x, gname, g);
    if (st == LTF_OK) st = need_rank(ctx, def, "input", x, 4, 0);
    if (st == LTF_OK) st = need_rank(ctx, def, gname, g, 4, 0);
    if (st == LTF_OK) st = pool_attrs(ctx, def, a);
    if (st != LTF_OK) return st;
    int xk = x->rank == 4;
    int64_t hw[2] = { xk ? x->dims[1] : -1, xk ? x->dims[2] : -1 }, ohw[2];
    if ((st = pool_out_hw(ctx, def, a, hw, ohw)) != LTF_OK) return st;
    int64_t batch = xk ? x->dims[0] : -1, depth = xk ? x->dims[3] : -1;
    *nout = 1;
    out->dtype = x->dtype;
    out->rank = 4;
    if (def->code == 0) {
        if ((st = check_dy(ctx, def, g, batch, ohw, depth)) != LTF_OK) return st;
        for (int i = 0; i < 4; i++)   /* input's shape; without it, dy gives the batch and the depth */
            out->dims[i] = xk ? x->dims[i] : (g->rank == 4 && (i == 0 || i == 3) ? g->dims[i] : -1);
        return LTF_OK;
    }
    if (xk && g->rank == 4)
        for (int i = 0; i < 4; i++)
            if (x->dims[i] >= 0 && g->dims[i] >= 0 && x->dims[i] != g->dims[i]) {
                char sx[LTF_SHAPE_BUF], sg[LTF_SHAPE_BUF];
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: g must have the shape of input: input is %s, g "
                                "is %s", def->name, ltf_shape_str(4, x->dims, sx, sizeof sx),
                                ltf_shape_str(4, g->dims, sg, sizeof sg));
            }
    out->dims[0] = batch;
    out->dims[1] = ohw[0];
    out->dims[2] = ohw[1];
    out->dims[3] = depth;
    return LTF_OK;
}

/* avg_pool2d_grad(dy) -> (N, H, W, C) */
static ltf_status infer_avg_pool_grad(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                      const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    const ltf_tensor *dy = in[0];
    if (!(F_ & M(dy->dtype))) return bad_dtype(ctx, def, "dy", dy->dtype, F_);
    ltf_status st = need_rank(ctx, def, "dy", dy, 4, 0);
    if (st == LTF_OK) st = pool_attrs(ctx, def, a);
    if (st == LTF_OK) st = sizes_attr(ctx, def, "input", a, 0);
    if (st != LTF_OK) return st;
    int64_t ohw[2];
    if ((st = pool_out_hw(ctx, def, a, a->ints2, ohw)) != LTF_OK) return st;
    if ((st = check_dy(ctx, def, dy, -1, ohw, -1)) != LTF_OK) return st;
    int dk = dy->rank == 4;
    out->dtype = dy->dtype;
    out->rank = 4;
    out->dims[0] = dk ? dy->dims[0] : -1;
    out->dims[1] = a->ints2[0];
    out->dims[2] = a->ints2[1];
    out->dims[3] = dk ? dy->dims[3] : -1;
    *nout = 1;
    return LTF_OK;
}
/* }==== */

/* {==== gelu */
static ltf_status infer_gelu(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)maxout;
    const ltf_tensor *x = in[nin - 1];
    if (!(F_ & M(x->dtype))) return bad_dtype(ctx, def, "features", x->dtype, F_);
    if (a->i[0] != 0 && a->i[0] != 1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'approximate' must be 0 or 1, got %lld", def->name,
                        (long long)a->i[0]);
    copy_type(out, x->dtype, x->rank, x->dims);
    *nout = 1;
    if (nin == 1) return LTF_OK;
    const ltf_tensor *dy = in[0];
    ltf_status st = same_dtype(ctx, def, "dy", dy, "features", x);
    if (st != LTF_OK) return st;
    if (dy->rank < 0) return LTF_OK;
    int bad = x->rank >= 0 && x->rank != dy->rank;
    for (int i = 0; !bad && x->rank >= 0 && i < x->rank; i++)
        bad = x->dims[i] >= 0 && dy->dims[i] >= 0 && x->dims[i] != dy->dims[i];
    if (bad) {
        char sd[LTF_SHAPE_BUF], sx[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: dy and features must have the same shape: dy is %s, "
                        "features is %s", def->name, ltf_shape_str(dy->rank, dy->dims, sd, sizeof sd),
                        ltf_shape_str(x->rank, x->dims, sx, sizeof sx));
    }
    copy_type(out, x->dtype, dy->rank, dy->dims);
    for (int i = 0; x->rank >= 0 && i < x->rank; i++)
        if (out->dims[i] < 0) out->dims[i] = x->dims[i];
    return LTF_OK;
}

static ltf_status infer_dropout_noise(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                      const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)a; (void)maxout;
    const ltf_tensor *x = in[0];
    if (!(F_ & M(x->dtype))) return bad_dtype(ctx, def, "x", x->dtype, F_);
    copy_type(out, x->dtype, x->rank, x->dims);
    *nout = 1;
    return LTF_OK;
}
/* }==== */

/* {==== Gradients */
#define GRAD_FN(name)                                                                                      \
    static ltf_status name(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,           \
                           const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout, \
                           ltf_tensor **din)
#define G (dout[0])
#define UNUSED_GRAD_ARGS (void)def; (void)nin; (void)out; (void)nout; (void)a

/* The attributes the forward ran with ('a' NULL: the defaults). */
static ltf_attrs attrs_of(const ltf_attrs *a) {
    ltf_attrs at;
    if (a) at = *a;
    else ltf_attrs_init(&at);
    return at;
}

/* Store the gradient 'g' (new reference, NULL on failure) of input 'k'. */
static ltf_status set_din(ltf_ctx *ctx, ltf_tensor **din, int k, ltf_tensor *g) {
    din[k] = g;
    return g ? LTF_OK : ctx->last_status;
}

/* Store two gradients; on a failure releases both. */
static ltf_status set_din2(ltf_ctx *ctx, ltf_tensor **din, ltf_tensor *g0, ltf_tensor *g1) {
    if (!g0 || !g1) {
        ltf_g_free(2, g0, g1);
        return ctx->last_status;
    }
    din[0] = g0;
    din[1] = g1;
    return LTF_OK;
}

/* sum(x, axis) keeping the axis */
static ltf_tensor *sum_keep(ltf_ctx *ctx, ltf_tensor *x, int64_t axis) {
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = 1;
    at.ints[0] = axis;
    at.i[0] = 1;
    return ltf_g_op1(ctx, LTF_OP_REDUCE_SUM, x, &at);
}

static ltf_tensor *softmax_along(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *x, int64_t axis) {
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = axis;
    return ltf_g_op1(ctx, op, x, &at);
}

/* x with a new axis of size 1 at 'axis' (an axis of the result) */
static ltf_tensor *expand_at(ltf_ctx *ctx, ltf_tensor *x, int64_t axis) {
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = axis;
    return ltf_g_op1(ctx, LTF_OP_EXPAND_DIMS, x, &at);
}

GRAD_FN(grad_softmax) {   /* (g - sum(g * y)) * y */
    UNUSED_GRAD_ARGS;
    ltf_attrs at = attrs_of(a);
    ltf_tensor *y = out[0];
    ltf_tensor *gy = ltf_g_op2(ctx, LTF_OP_MUL, G, y, NULL);
    ltf_tensor *s = sum_keep(ctx, gy, at.i[0]);
    ltf_tensor *d = ltf_g_op2(ctx, LTF_OP_SUB, G, s, NULL);
    ltf_tensor *dx = ltf_g_op2(ctx, LTF_OP_MUL, d, y, NULL);
    ltf_g_free(3, gy, s, d);
    return set_din(ctx, din, 0, dx);
}

GRAD_FN(grad_log_softmax) {   /* g - exp(y) * sum(g) */
    UNUSED_GRAD_ARGS;
    ltf_attrs at = attrs_of(a);
    ltf_tensor *p = ltf_g_op1(ctx, LTF_OP_EXP, out[0], NULL);
    ltf_tensor *s = sum_keep(ctx, G, at.i[0]);
    ltf_tensor *ps = ltf_g_op2(ctx, LTF_OP_MUL, p, s, NULL);
    ltf_tensor *dx = ltf_g_op2(ctx, LTF_OP_SUB, G, ps, NULL);
    ltf_g_free(3, p, s, ps);
    return set_din(ctx, din, 0, dx);
}

/* d/dlogits = g[..., None] * (softmax(logits) - one_hot(labels)); labels
** are 1-based, as one_hot's indices. No gradient for the labels. */
GRAD_FN(grad_sparse_xent) {
    UNUSED_GRAD_ARGS;
    ltf_tensor *labels = in[0], *logits = in[1];
    if (logits->rank < 1 || logits->dims[logits->rank - 1] < 0)
        return ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "%s: gradient: the number of classes must be known", def->name);
    ltf_tensor *sm = softmax_along(ctx, LTF_OP_SOFTMAX, logits, -1);
    ltf_tensor *on = ltf_g_scalar(ctx, logits->dtype, 1.0), *off = ltf_g_scalar(ctx, logits->dtype, 0.0);
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = logits->dims[logits->rank - 1];
    at.i[1] = -1;
    ltf_tensor *oh_in[3] = { labels, on, off };
    ltf_tensor *oh = on && off ? ltf_op1(ctx, LTF_OP_ONE_HOT, oh_in, 3, &at) : NULL;
    ltf_tensor *d = ltf_g_op2(ctx, LTF_OP_SUB, sm, oh, NULL);
    ltf_tensor *ge = expand_at(ctx, G, -1);
    ltf_tensor *dl = ltf_g_op2(ctx, LTF_OP_MUL, ge, d, NULL);
    ltf_g_free(6, sm, on, off, oh, d, ge);
    return set_din(ctx, din, 1, dl);
}

/* As TensorFlow: d/dlogits = g * (softmax(logits) - labels), d/dlabels =
** -g * log_softmax(logits), 'g' expanded along the class axis. */
GRAD_FN(grad_xent) {
    UNUSED_GRAD_ARGS;
    ltf_attrs at = attrs_of(a);
    ltf_tensor *labels = in[0], *logits = in[1];
    int64_t axis = at.i[0];
    ltf_tensor *ge = expand_at(ctx, G, axis);
    ltf_tensor *sm = softmax_along(ctx, LTF_OP_SOFTMAX, logits, axis);
    ltf_tensor *d = ltf_g_op2(ctx, LTF_OP_SUB, sm, labels, NULL);
    ltf_tensor *dlogits = ltf_g_op2(ctx, LTF_OP_MUL, ge, d, NULL);
    ltf_tensor *lsm = softmax_along(ctx, LTF_OP_LOG_SOFTMAX, logits, axis);
    ltf_tensor *gl = ltf_g_op2(ctx, LTF_OP_MUL, ge, lsm, NULL);
    ltf_tensor *dlabels = ltf_g_op1(ctx, LTF_OP_NEG, gl, NULL);
    ltf_g_free(5, ge, sm, d, lsm, gl);
    return set_din2(ctx, din, dlabels, dlogits);
}

/* The conv2d attributes 'a' with the spatial sizes (h, w) in ints2. */
static ltf_attrs with_sizes(const ltf_attrs *a, int64_t h, int64_t w) {
    ltf_attrs at = attrs_of(a);
    at.nints2 = 2;
    at.ints2[0] = h;
    at.ints2[1] = w;
    return at;
}

static ltf_attrs without_sizes(const ltf_attrs *a) {
    ltf_attrs at = attrs_of(a);
    at.nints2 = -1;
    at.ints2[0] = at.ints2[1] = 0;
    return at;
}

static ltf_status need_4d(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *t) {
    if (t->rank == 4 && t->dims[1] >= 0 && t->dims[2] >= 0) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "%s: gradient: the spatial sizes must be known", def->name);
}

/* The gradients of a backprop-input op dx = bpi(f, dy), for conv2d and
** depthwise_conv2d alike: bpi is bilinear and the adjoint of fwd(., f), so
** d/df = bpf(g, dy) and d/ddy = fwd(g, f). */
static ltf_status grad_bpi_common(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, const ltf_attrs *a,
                                  ltf_tensor *g, ltf_tensor **din, ltf_op_id bpf, ltf_op_id fwd) {
    ltf_tensor *f = in[0], *dy = in[1];
    ltf_status st = need_4d(ctx, def, f);
    if (st != LTF_OK) return st;
    ltf_attrs af = with_sizes(a, f->dims[0], f->dims[1]), ac = without_sizes(a);
    return set_din2(ctx, din, ltf_g_op2(ctx, bpf, g, dy, &af), ltf_g_op2(ctx, fwd, g, f, &ac));
}

/* The same for a backprop-filter op df = bpf(x, dy): d/dx = bpi(g, dy),
** d/ddy = fwd(x, g). */
static ltf_status grad_bpf_common(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, const ltf_attrs *a,
                                  ltf_tensor *g, ltf_tensor **din, ltf_op_id bpi, ltf_op_id fwd) {
    ltf_tensor *x = in[0], *dy = in[1];
    ltf_status st = need_4d(ctx, def, x);
    if (st != LTF_OK) return st;
    ltf_attrs ai = with_sizes(a, x->dims[1], x->dims[2]), ac = without_sizes(a);
    return set_din2(ctx, din, ltf_g_op2(ctx, bpi, g, dy, &ai), ltf_g_op2(ctx, fwd, x, g, &ac));
}

/* y = conv2d(x, f): dx = conv2d_backprop_input(f, g), df = conv2d_backprop_filter(x, g) */
GRAD_FN(grad_conv2d) {
    UNUSED_GRAD_ARGS;
    ltf_tensor *x = in[0], *f = in[1];
    ltf_status st = need_4d(ctx, def, f);
    if (st != LTF_OK) return st;
    if (x->rank == 4 && (x->dims[1] < 0 || x->dims[2] < 0)) {
        /* height or width known only at run time: the input's sizes as a tensor */
        ltf_attrs as, af = with_sizes(a, f->dims[0], f->dims[1]), ac = without_sizes(a);
        ltf_attrs_init(&as);
        as.i[0] = LTF_DTYPE_INT64;
        ltf_tensor *sizes = ltf_op1(ctx, LTF_OP_SHAPE, &x, 1, &as);
        if (!sizes) return ctx->last_status;
        ltf_tensor *bin[3] = { f, G, sizes };
        ltf_tensor *dx = ltf_op1(ctx, LTF_OP_CONV2D_BACKPROP_INPUT_DYN, bin, 3, &ac);
        ltf_tensor_release(sizes);
        return set_din2(ctx, din, dx, dx ? ltf_g_op2(ctx, LTF_OP_CONV2D_BACKPROP_FILTER, x, G, &af) : NULL);
    }
    st = need_4d(ctx, def, x);
    if (st != LTF_OK) return st;
    ltf_attrs ai = with_sizes(a, x->dims[1], x->dims[2]), af = with_sizes(a, f->dims[0], f->dims[1]);
    return set_din2(ctx, din, ltf_g_op2(ctx, LTF_OP_CONV2D_BACKPROP_INPUT, f, G, &ai),
                    ltf_g_op2(ctx, LTF_OP_CONV2D_BACKPROP_FILTER, x, G, &af));
}

/* dx = bpi(f, dy) is the adjoint of conv2d(., f) and bilinear:
** d/df = conv2d_backprop_filter(g, dy), d/ddy = conv2d(g, f). */
GRAD_FN(grad_conv2d_bpi) {
    UNUSED_GRAD_ARGS;
    return grad_bpi_common(ctx, def, in, a, G, din, LTF_OP_CONV2D_BACKPROP_FILTER, LTF_OP_CONV2D);
}

/* df = bpf(x, dy): d/dx = conv2d_backprop_input(g, dy), d/ddy = conv2d(x, g). */
GRAD_FN(grad_conv2d_bpf) {
    UNUSED_GRAD_ARGS;
    return grad_bpf_common(ctx, def, in, a, G, din, LTF_OP_CONV2D_BACKPROP_INPUT, LTF_OP_CONV2D);
}

/* y = depthwise_conv2d(x, f): dx = dw_bpi(f, g), df = dw_bpf(x, g); each
** gradient op is bilinear, so its own gradient is made of the other two,
** as conv2d's. */
GRAD_FN(grad_dw) {
    UNUSED_GRAD_ARGS;
    ltf_tensor *x = in[0], *f = in[1];
    ltf_status st = need_4d(ctx, def, x);
    if (st == LTF_OK) st = need_4d(ctx, def, f);
    if (st != LTF_OK) return st;
    ltf_attrs ai = with_sizes(a, x->dims[1], x->dims[2]), af = with_sizes(a, f->dims[0], f->dims[1]);
    return set_din2(ctx, din, ltf_g_op2(ctx, LTF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT, f, G, &ai),
                    ltf_g_op2(ctx, LTF_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER, x, G, &af));
}

/* dx = dw_bpi(f, dy): d/df = dw_bpf(g, dy), d/ddy = depthwise_conv2d(g, f) */
GRAD_FN(grad_dw_bpi) {
    UNUSED_GRAD_ARGS;
    return grad_bpi_common(ctx, def, in, a, G, din, LTF_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER, LTF_OP_DEPTHWISE_CONV2D);
}

/* df = dw_bpf(x, dy): d/dx = dw_bpi(g, dy), d/ddy = depthwise_conv2d(x, g) */
GRAD_FN(grad_dw_bpf) {
    UNUSED_GRAD_ARGS;
    return grad_bpf_common(ctx, def, in, a, G, din, LTF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT, LTF_OP_DEPTHWISE_CONV2D);
}

GRAD_FN(grad_max_pool) {
    UNUSED_GRAD_ARGS;
    return set_din(ctx, din, 0, ltf_g_op2(ctx, LTF_OP_MAX_POOL2D_GRAD, in[0], G, a));
}

/* Both gradient ops select by the input's argmax (piecewise constant in the
** input: no gradient for it) and are each other's adjoint in the second. */
GRAD_FN(grad_max_pool_grad) {
    UNUSED_GRAD_ARGS;
    return set_din(ctx, din, 1, ltf_g_op2(ctx, LTF_OP_MAX_POOL2D_GRAD_GRAD, in[0], G, a));
}

GRAD_FN(grad_max_pool_grad_grad) {
    UNUSED_GRAD_ARGS;
    return set_din(ctx, din, 1, ltf_g_op2(ctx, LTF_OP_MAX_POOL2D_GRAD, in[0], G, a));
}

GRAD_FN(grad_avg_pool) {
    UNUSED_GRAD_ARGS;
    ltf_tensor *x = in[0];
    ltf_status st = need_4d(ctx, def, x);
    if (st != LTF_OK) return st;
    ltf_attrs at = with_sizes(a, x->dims[1], x->dims[2]);
    return set_din(ctx, din, 0, ltf_g_op1(ctx, LTF_OP_AVG_POOL2D_GRAD, G, &at));
}

/* avg_pool2d_grad is the adjoint of avg_pool2d: its gradient is the pool. */
GRAD_FN(grad_avg_pool_grad) {
    UNUSED_GRAD_ARGS;
    ltf_attrs at = without_sizes(a);
    return set_din(ctx, din, 0, ltf_g_op1(ctx, LTF_OP_AVG_POOL2D, G, &at));
}

/* gelu: dx = gelu_grad(g, x) */
GRAD_FN(grad_gelu) {
    UNUSED_GRAD_ARGS;
    ltf_attrs at = attrs_of(a);
    return set_din(ctx, din, 0, ltf_g_op2(ctx, LTF_OP_GELU_GRAD, G, in[0], &at));
}

/* a * (scalar v) + b (b may be NULL: a * v) */
static ltf_tensor *axpb(ltf_ctx *ctx, ltf_tensor *x, double v, ltf_tensor *b) {
    ltf_tensor *s = ltf_g_scale(ctx, x, v);
    if (!b || !s) return s;
    ltf_tensor *r = ltf_g_op2(ctx, LTF_OP_ADD, s, b, NULL);
    ltf_tensor_release(s);
    return r;
}

/* gelu''(x), from elementwise ops (so that it has gradients too):
** exact: phi(x) (2 - x^2); tanh form, with u = c (x + k x^3), t = tanh(u):
** (1 - t^2) (u' + x (u'' / 2 - t u'^2)), u' = c (1 + 3 k x^2), u'' = 6 c k x. */
static ltf_tensor *gelu_second(ltf_ctx *ctx, ltf_tensor *x, int approximate) {
    ltf_dtype dt = x->dtype;
    ltf_tensor *x2 = ltf_g_op2(ctx, LTF_OP_MUL, x, x, NULL);
    if (!approximate) {
        ltf_tensor *h = ltf_g_scale(ctx, x2, -0.5);
        ltf_tensor *e = ltf_g_op1(ctx, LTF_OP_EXP, h, NULL);
        ltf_tensor *two = ltf_g_scalar(ctx, dt, 2.0);
        ltf_tensor *q = ltf_g_op2(ctx, LTF_OP_SUB, two, x2, NULL);
        ltf_tensor *pq = ltf_g_op2(ctx, LTF_OP_MUL, e, q, NULL);
        ltf_tensor *r = ltf_g_scale(ctx, pq, 0.39894228040143267794);   /* 1 / sqrt(2 pi) */
        ltf_g_free(6, x2, h, e, two, q, pq);
        return r;
    }
    const double c = 0.79788456080286535588, k = 0.044715;
    ltf_tensor *one = ltf_g_scalar(ctx, dt, 1.0);
    ltf_tensor *x3 = ltf_g_op2(ctx, LTF_OP_MUL, x2, x, NULL);
    ltf_tensor *in_ = axpb(ctx, x3, k, x);                 /* x + k x^3 */
    ltf_tensor *u = ltf_g_scale(ctx, in_, c);
    ltf_tensor *t = ltf_g_op1(ctx, LTF_OP_TANH, u, NULL);
    ltf_tensor *t2 = ltf_g_op2(ctx, LTF_OP_MUL, t, t, NULL);
    ltf_tensor *omt = ltf_g_op2(ctx, LTF_OP_SUB, one, t2, NULL);   /* 1 - t^2 */
    ltf_tensor *cst = ltf_g_scalar(ctx, dt, c);
    ltf_tensor *du = axpb(ctx, x2, 3 * c * k, cst);        /* u' */
    ltf_tensor *du2 = ltf_g_op2(ctx, LTF_OP_MUL, du, du, NULL);
    ltf_tensor *tdu2 = ltf_g_op2(ctx, LTF_OP_MUL, t, du2, NULL);
    ltf_tensor *half_ddu = ltf_g_scale(ctx, x, 3 * c * k); /* u'' / 2 */
    ltf_tensor *d = ltf_g_op2(ctx, LTF_OP_SUB, half_ddu, tdu2, NULL);
    ltf_tensor *xd = ltf_g_op2(ctx, LTF_OP_MUL, x, d, NULL);
    ltf_tensor *sum = ltf_g_op2(ctx, LTF_OP_ADD, du, xd, NULL);
    ltf_tensor *r = ltf_g_op2(ctx, LTF_OP_MUL, omt, sum, NULL);
    ltf_g_free(10, x2, one, x3, in_, u, t, t2, omt, cst, du);
    ltf_g_free(6, du2, tdu2, half_ddu, d, xd, sum);
    return r;
}

/* gelu_grad(dy, x) = dy * gelu'(x): d/ddy = gelu_grad(g, x), d/dx = g * dy * gelu''(x) */
GRAD_FN(grad_gelu_grad) {
    UNUSED_GRAD_ARGS;
    ltf_attrs at = attrs_of(a);
    ltf_tensor *dy = in[0], *x = in[1];
    ltf_tensor *gdy = ltf_g_op2(ctx, LTF_OP_GELU_GRAD, G, x, &at);
    ltf_tensor *f2 = gelu_second(ctx, x, (int)at.i[0]);
    ltf_tensor *gd = ltf_g_op2(ctx, LTF_OP_MUL, G, dy, NULL);
    ltf_tensor *gx = ltf_g_op2(ctx, LTF_OP_MUL, gd, f2, NULL);
    ltf_g_free(2, f2, gd);
    return set_din2(ctx, din, gdy, gx);
}
#undef G
/* }==== */

/* {==== Definitions */
#define CPU(k) { [LTF_DEVICE_CPU] = k }

LTF_INTERNAL const ltf_op_def ltf_opdef_softmax = {
    "softmax", 1, 1, 0, 0, infer_softmax, CPU(ltf_cpu_nn_softmax), grad_softmax };
LTF_INTERNAL const ltf_op_def ltf_opdef_log_softmax = {
    "log_softmax", 1, 1, 0, 1, infer_softmax, CPU(ltf_cpu_nn_softmax), grad_log_softmax };
LTF_INTERNAL const ltf_op_def ltf_opdef_sparse_softmax_cross_entropy_with_logits = {
    "sparse_softmax_cross_entropy_with_logits", 2, 2, 0, 0, infer_sparse_xent, CPU(ltf_cpu_nn_sparse_softmax_xent),
    grad_sparse_xent };
LTF_INTERNAL const ltf_op_def ltf_opdef_softmax_cross_entropy_with_logits = {
    "softmax_cross_entropy_with_logits", 2, 2, 0, 0, infer_xent, CPU(ltf_cpu_nn_softmax_xent), grad_xent };
LTF_INTERNAL const ltf_op_def ltf_opdef_conv2d = {
    "conv2d", 2, 2, 0, 0, infer_conv2d, CPU(ltf_cpu_nn_conv2d), grad_conv2d };
LTF_INTERNAL const ltf_op_def ltf_opdef_max_pool2d = {
    "max_pool2d", 1, 1, 0, 0, infer_pool, CPU(ltf_cpu_nn_pool2d), grad_max_pool };
LTF_INTERNAL const ltf_op_def ltf_opdef_avg_pool2d = {
    "avg_pool2d", 1, 1, 0, 1, infer_pool, CPU(ltf_cpu_nn_pool2d), grad_avg_pool };
LTF_INTERNAL const ltf_op_def ltf_opdef_conv2d_backprop_input = {
    "conv2d_backprop_input", 2, 2, 0, 0, infer_conv2d_bpi, CPU(ltf_cpu_nn_conv2d_backprop_input), grad_conv2d_bpi };
LTF_INTERNAL const ltf_op_def ltf_opdef_conv2d_backprop_input_dyn = {
    "conv2d_backprop_input_dyn", 3, 3, 0, 0, infer_conv2d_bpi_dyn, CPU(kernel_conv2d_bpi_dyn), grad_conv2d_bpi };
LTF_INTERNAL const ltf_op_def ltf_opdef_conv2d_backprop_filter = {
    "conv2d_backprop_filter", 2, 2, 0, 0, infer_conv2d_bpf, CPU(ltf_cpu_nn_conv2d_backprop_filter), grad_conv2d_bpf };
LTF_INTERNAL const ltf_op_def ltf_opdef_max_pool2d_grad = {
    "max_pool2d_grad", 2, 2, 0, 0, infer_max_pool_grad, CPU(ltf_cpu_nn_max_pool2d_grad), grad_max_pool_grad };
LTF_INTERNAL const ltf_op_def ltf_opdef_max_pool2d_grad_grad = {
    "max_pool2d_grad_grad", 2, 2, 0, 1, infer_max_pool_grad, CPU(ltf_cpu_nn_max_pool2d_grad),
    grad_max_pool_grad_grad };
LTF_INTERNAL const ltf_op_def ltf_opdef_avg_pool2d_grad = {
    "avg_pool2d_grad", 1, 1, 0, 0, infer_avg_pool_grad, CPU(ltf_cpu_nn_avg_pool2d_grad), grad_avg_pool_grad };
LTF_INTERNAL const ltf_op_def ltf_opdef_gelu = {
    "gelu", 1, 1, 0, 0, infer_gelu, CPU(ltf_cpu_nn_gelu), grad_gelu };
LTF_INTERNAL const ltf_op_def ltf_opdef_dropout_noise = {
    "dropout_noise", 1, 1, LTF_OP_STATEFUL | LTF_OP_NOT_DIFFERENTIABLE, 0, infer_dropout_noise,
    CPU(ltf_cpu_nn_dropout_noise), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_gelu_grad = {
    "gelu_grad", 2, 2, 0, 1, infer_gelu, CPU(ltf_cpu_nn_gelu), grad_gelu_grad };
LTF_INTERNAL const ltf_op_def ltf_opdef_depthwise_conv2d = {
    "depthwise_conv2d", 2, 2, 0, 0, infer_dw, CPU(ltf_cpu_nn_depthwise_conv2d), grad_dw };
LTF_INTERNAL const ltf_op_def ltf_opdef_depthwise_conv2d_backprop_input = {
    "depthwise_conv2d_backprop_input", 2, 2, 0, 1, infer_dw_bpi, CPU(ltf_cpu_nn_depthwise_conv2d), grad_dw_bpi };
LTF_INTERNAL const ltf_op_def ltf_opdef_depthwise_conv2d_backprop_filter = {
    "depthwise_conv2d_backprop_filter", 2, 2, 0, 2, infer_dw_bpf, CPU(ltf_cpu_nn_depthwise_conv2d), grad_dw_bpf };
/* }==== */
