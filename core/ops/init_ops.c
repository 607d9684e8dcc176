/*
** ops/init_ops.c: definitions of the constructors (fill, range, linspace,
** eye): attribute checks and output types. They have no inputs, so op.c
** runs them on the CPU; nothing flows back through them (no gradient).
** Attribute slots are documented in ltf_ops/init_ops.h.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "../op.h"
#include "../shape.h"
#include "../cpu/cpu.h"
#include "../device.h"

static ltf_status check_dtype(ltf_ctx *ctx, const ltf_op_def *def, const ltf_attrs *a, unsigned allowed,
                              const char *expected) {
    int64_t dt = a->i[0];
    if (dt < 0 || dt >= LTF_DTYPE_COUNT)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: invalid dtype %lld", def->name, (long long)dt);
    if (!(allowed & (1u << dt)))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: dtype %s is not supported, expected one of: %s", def->name,
                        ltf_dtype_name((ltf_dtype)dt), expected);
    return LTF_OK;
}

/* Copy the shape list 'ints' into 'out', refusing negative dimensions. */
static ltf_status shape_from_ints(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const int64_t *ints,
                                  int n, ltf_type *out) {
    if (n < 0) n = 0;
    if (n > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' has %d dimensions, at most %d allowed",
                        def->name, arg, n, LTF_MAX_RANK);
    for (int i = 0; i < n; i++)
        if (ints[i] < 0) {
            char buf[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must not have negative dimensions, got %s",
                            def->name, arg, ltf_shape_str(n, ints, buf, sizeof buf));
        }
    out->rank = n;
    if (n > 0) memcpy(out->dims, ints, sizeof(int64_t) * (size_t)n);
    return LTF_OK;
}

#define M(dt) (1u << (dt))
#define FLOATS (M(LTF_DTYPE_FLOAT32) | M(LTF_DTYPE_FLOAT64) | M(LTF_DTYPE_FLOAT16) | M(LTF_DTYPE_BFLOAT16))
#define NUMBERS (FLOATS | M(LTF_DTYPE_INT32) | M(LTF_DTYPE_INT64) | M(LTF_DTYPE_UINT8))

/* {==== fill */
static ltf_status infer_fill(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)in; (void)nin; (void)maxout;
    ltf_status st = check_dtype(ctx, def, a, NUMBERS | M(LTF_DTYPE_BOOL) | M(LTF_DTYPE_STRING),
                                "float32, float64, int32, int64, uint8, bool, string, float16, bfloat16");
    if (st != LTF_OK) return st;
    if (a->i[0] == LTF_DTYPE_STRING && memchr(a->s, '\0', sizeof a->s) == NULL)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the string value is not terminated", def->name);
    out->dtype = (ltf_dtype)a->i[0];
    *nout = 1;
    return shape_from_ints(ctx, def, "dims", a->ints, a->nints, out);
}
/* }==== */

/* {==== range */
/* Element count of a range; the kernel reads it back from the output. */
static ltf_status range_size(ltf_ctx *ctx, const ltf_attrs *a, int64_t *size) {
    ltf_dtype dt = (ltf_dtype)a->i[0];
    if (dt == LTF_DTYPE_INT32 || dt == LTF_DTYPE_INT64) {
        int64_t s = a->i[1], l = a->i[2], d = a->i[3];
        if (dt == LTF_DTYPE_INT32)
            for (int k = 1; k <= 3; k++)
                if (a->i[k] < INT32_MIN || a->i[k] > INT32_MAX)
                    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "range: %s %lld does not fit in int32",
                                    k == 1 ? "start" : k == 2 ? "limit" : "delta", (long long)a->i[k]);
        if (d == 0) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "range: delta must not be 0");
        if (d > 0 && s > l)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "range: requires start <= limit when delta > 0: start %lld, limit %lld",
                            (long long)s, (long long)l);
        if (d < 0 && s < l)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "range: requires start >= limit when delta < 0: start %lld, limit %lld",
                            (long long)s, (long long)l);
        uint64_t span = d > 0 ? (uint64_t)l - (uint64_t)s : (uint64_t)s - (uint64_t)l;
        uint64_t ad = d > 0 ? (uint64_t)d : 0 - (uint64_t)d;
        uint64_t n = span / ad + (span % ad != 0);
        if (n > (uint64_t)INT64_MAX) return ltf_fail(ctx, LTF_ERR_RESOURCE_EXHAUSTED, "range: too many elements");
        *size = (int64_t)n;
        return LTF_OK;
    }
    double s = a->f[0], l = a->f[1], d = a->f[2], n;
    if (!isfinite(s) || !isfinite(l) || !isfinite(d))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "range: start, limit and delta must be finite, got %g, %g, %g",
                        s, l, d);
    if (d == 0) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "range: delta must not be 0");
    if (d > 0 && s > l)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "range: requires start <= limit when delta > 0: start %g, limit %g",
                        s, l);
    if (d < 0 && s < l)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "range: requires start >= limit when delta < 0: start %g, limit %g",
                        s, l);
    if (dt == LTF_DTYPE_FLOAT32) {   /* counted in the dtype, as TensorFlow does */
        float fs = (float)s, fl = (float)l, fd = (float)d;
        n = ceilf(fabsf((fl - fs) / fd));
    } else {
        n = ceil(fabs((l - s) / d));
    }
    if (!(n < 9.0e18)) return ltf_fail(ctx, LTF_ERR_RESOURCE_EXHAUSTED, "range: too many elements");
    *size = (int64_t)n;
    return LTF_OK;
}

static ltf_status infer_range(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)in; (void)nin; (void)maxout;
    ltf_status st = check_dtype(ctx, def, a, FLOATS | M(LTF_DTYPE_INT32) | M(LTF_DTYPE_INT64),
                                "float32, float64, int32, int64, float16, bfloat16");
    if (st != LTF_OK) return st;
    int64_t n = 0;
    st = range_size(ctx, a, &n);
    if (st != LTF_OK) return st;
    out->dtype = (ltf_dtype)a->i[0];
    out->rank = 1;
    out->dims[0] = n;
    *nout = 1;
    return LTF_OK;
}
/* }==== */

/* {==== fill and range with tensor inputs (shapes known only at run time) */
static ltf_status infer_fill_any(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    if (nin < 1) return infer_fill(ctx, def, in, nin, a, out, maxout, nout);
    ltf_attrs c = *a, b;
    c.nints = 0;
    ltf_status st = infer_fill(ctx, def, NULL, 0, &c, out, maxout, nout);   /* dtype checks */
    if (st != LTF_OK) return st;
    int complete;
    st = ltf_shape_input_type(ctx, def, "dims", in[0], (ltf_dtype)a->i[0], out, &complete, &b, a);
    if (st != LTF_OK) return st;
    *nout = 1;
    if (complete) return infer_fill(ctx, def, NULL, 0, &b, out, maxout, nout);
    return LTF_OK;
}

/* The scalar value of 'in[k]' as range's attributes keep it; 0 when not known */
static int range_value(ltf_ctx *ctx, const ltf_tensor *t, int direct, int64_t *iv, double *fv) {
    if (!t->storage || t->numel != 1) return 0;
    double host[1];   /* a device tensor: its value copied to the host */
    const void *p = LTF_DATA(t);
    if (!direct && t->storage->device != LTF_DEVICE_CPU) {
        if (ltf_tensor_read(ctx, t, host, (size_t)ltf_dtype_size(t->dtype)) != LTF_OK) return 0;
        p = host;
    }
    double d;
    switch (t->dtype) {
    case LTF_DTYPE_INT32: d = ((const int32_t *)p)[0]; *iv = ((const int32_t *)p)[0]; break;
    case LTF_DTYPE_INT64: d = (double)((const int64_t *)p)[0]; *iv = ((const int64_t *)p)[0]; break;
    case LTF_DTYPE_FLOAT32: d = ((const float *)p)[0]; *iv = 0; break;
    case LTF_DTYPE_FLOAT64: d = ((const double *)p)[0]; *iv = 0; break;   /* a float range uses fv only */
    default: return 0;
    }
    *fv = d;
    return 1;
}

/* range(start, limit, delta) with tensor inputs: their values into the
** attributes when known ('direct': a kernel, whose inputs it can read where
** they are) */
static int range_attrs(ltf_ctx *ctx, ltf_tensor *const *in, const ltf_attrs *a, ltf_attrs *b, int direct) {
    *b = *a;
    int isint = a->i[0] == LTF_DTYPE_INT32 || a->i[0] == LTF_DTYPE_INT64;
    for (int k = 0; k < 3; k++) {
        int64_t iv;
        double fv;
        if (!range_value(ctx, in[k], direct, &iv, &fv)) return 0;
        if (isint) b->i[k + 1] = iv;
        else b->f[k] = fv;
    }
    return 1;
}

static ltf_status infer_range_any(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                  const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    if (nin < 3) return infer_range(ctx, def, in, nin, a, out, maxout, nout);
    static const char *const names[3] = { "start", "limit", "delta" };
    for (int k = 0; k < 3; k++) {
        if (in[k]->rank > 0 || in[k]->dtype != (ltf_dtype)a->i[0]) {
            char buf[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must be a scalar of dtype %s, got a %s tensor of shape %s",
                            def->name, names[k], ltf_dtype_name((ltf_dtype)a->i[0]), ltf_dtype_name(in[k]->dtype),
                            ltf_shape_str(in[k]->rank, in[k]->dims, buf, sizeof buf));
        }
    }
    ltf_attrs b;
    if (range_attrs(ctx, in, a, &b, 0)) return infer_range(ctx, def, NULL, 0, &b, out, maxout, nout);
    ltf_status st = check_dtype(ctx, def, a, FLOATS | M(LTF_DTYPE_INT32) | M(LTF_DTYPE_INT64),
                                "float32, float64, int32, int64, float16, bfloat16");
    if (st != LTF_OK) return st;
    out->dtype = (ltf_dtype)a->i[0];
    out->rank = 1;
    out->dims[0] = LTF_UNKNOWN_DIM;
    *nout = 1;
    return LTF_OK;
}

static ltf_status kernel_range_any(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                   const ltf_attrs *a, ltf_tensor **out, int nout) {
    ltf_attrs b;
    if (nin < 3) return ltf_cpu_init_ops_range(ctx, def, in, nin, a, out, nout);
    if (!range_attrs(ctx, in, a, &b, 1))
        return ltf_fail(ctx, LTF_ERR_INTERNAL, "%s: start, limit and delta must be in host memory", def->name);
    return ltf_cpu_init_ops_range(ctx, def, NULL, 0, &b, out, nout);
}
/* }==== */

/* {==== linspace */
static ltf_status infer_linspace(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)in; (void)nin; (void)maxout;
    ltf_status st = check_dtype(ctx, def, a, FLOATS, "float32, float64, float16, bfloat16");
    if (st != LTF_OK) return st;
    if (a->i[1] < 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: num must be >= 0, got %lld", def->name,
                        (long long)a->i[1]);
    out->dtype = (ltf_dtype)a->i[0];
    out->rank = 1;
    out->dims[0] = a->i[1];
    *nout = 1;
    return LTF_OK;
}
/* }==== */

/* {==== eye */
static ltf_status infer_eye(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                            const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)in; (void)nin; (void)maxout;
    ltf_status st = check_dtype(ctx, def, a, NUMBERS | M(LTF_DTYPE_BOOL),
                                "float32, float64, int32, int64, uint8, bool, float16, bfloat16");
    if (st != LTF_OK) return st;
    if (a->i[1] < 0 || a->i[2] < 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: num_rows and num_columns must be >= 0, got %lld and %lld",
                        def->name, (long long)a->i[1], (long long)a->i[2]);
    int nb = a->nints < 0 ? 0 : a->nints;
    if (nb > LTF_MAX_RANK - 2)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'batch_shape' has %d dimensions, at most %d allowed",
                        def->name, nb, LTF_MAX_RANK - 2);
    st = shape_from_ints(ctx, def, "batch_shape", a->ints, nb, out);
    if (st != LTF_OK) return st;
    out->dtype = (ltf_dtype)a->i[0];
    out->rank = nb + 2;
    out->dims[nb] = a->i[1];
    out->dims[nb + 1] = a->i[2];
    *nout = 1;
    return LTF_OK;
}
/* }==== */

/* {==== Definitions */
#define CPU(k) { [LTF_DEVICE_CPU] = k }
#define ND LTF_OP_NOT_DIFFERENTIABLE

LTF_INTERNAL const ltf_op_def ltf_opdef_fill = {
    "fill", 0, 1, ND, 0, infer_fill_any, CPU(ltf_cpu_init_ops_fill), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_range = {
    "range", 0, 0, ND, 0, infer_range, CPU(ltf_cpu_init_ops_range), NULL };
/* range with start, limit and delta as scalar tensors read when it runs
** (tf.range of a bound known only then); CPU only: a device's range kernel
** reads the attributes */
LTF_INTERNAL const ltf_op_def ltf_opdef_range_dyn = {
    "range_dyn", 3, 3, ND, 0, infer_range_any, CPU(kernel_range_any), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_linspace = {
    "linspace", 0, 0, ND, 0, infer_linspace, CPU(ltf_cpu_init_ops_linspace), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_eye = {
    "eye", 0, 0, ND, 0, infer_eye, CPU(ltf_cpu_init_ops_eye), NULL };
/* }==== */
