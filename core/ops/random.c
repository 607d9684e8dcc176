/*
** ops/random.c: definitions of the random ops (random_normal,
** random_uniform, truncated_normal, random_gamma, categorical,
** random_shuffle): attribute checks and output types. They are stateful
** (never folded or merged while tracing) and have no inputs, so op.c runs
** them on the CPU. Attribute slots are documented in ltf_ops/random.h.
*/
#include <string.h>
#include "../op.h"
#include "../shape.h"
#include "../cpu/cpu.h"

#define M(dt) (1u << (dt))

static ltf_status infer_random(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)in; (void)nin; (void)maxout;
    int uniform = def->code == 1;
    unsigned allowed = M(LTF_DTYPE_FLOAT32) | M(LTF_DTYPE_FLOAT64) | M(LTF_DTYPE_FLOAT16) | M(LTF_DTYPE_BFLOAT16);
    if (uniform) allowed |= M(LTF_DTYPE_INT32) | M(LTF_DTYPE_INT64);
    int64_t dt = a->i[0];
    if (dt < 0 || dt >= LTF_DTYPE_COUNT)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: invalid dtype %lld", def->name, (long long)dt);
    if (!(allowed & M(dt)))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: dtype %s is not supported, expected one of: %s", def->name,
                        ltf_dtype_name((ltf_dtype)dt),
                        uniform ? "float32, float64, int32, int64, float16, bfloat16" : "float32, float64, float16, bfloat16");
    if (uniform && (dt == LTF_DTYPE_INT32 || dt == LTF_DTYPE_INT64)) {
        if (a->nints2 != 2)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: an integer dtype needs minval and maxval", def->name);
        int64_t lo = a->ints2[0], hi = a->ints2[1];
        if (dt == LTF_DTYPE_INT32 && (lo < INT32_MIN || lo > INT32_MAX || hi < INT32_MIN || hi > INT32_MAX))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: minval %lld and maxval %lld must fit in int32",
                            def->name, (long long)lo, (long long)hi);
        if (lo >= hi)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: requires minval < maxval, got minval %lld and maxval %lld",
                            def->name, (long long)lo, (long long)hi);
    }
    int n = a->nints < 0 ? 0 : a->nints;
    if (n > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' has %d dimensions, at most %d allowed", def->name,
                        n, LTF_MAX_RANK);
    for (int i = 0; i < n; i++)
        if (a->ints[i] < 0) {
            char buf[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' must not have negative dimensions, got %s",
                            def->name, ltf_shape_str(n, a->ints, buf, sizeof buf));
        }
    out->dtype = (ltf_dtype)dt;
    out->rank = n;
    if (n > 0) memcpy(out->dims, a->ints, sizeof(int64_t) * (size_t)n);
    *nout = 1;
    return LTF_OK;
}

/* random_gamma: alpha's dtype (float), shape ints ++ alpha.shape */
static ltf_status infer_gamma(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    const ltf_tensor *al = in[0];
    if (al->dtype != LTF_DTYPE_FLOAT32 && al->dtype != LTF_DTYPE_FLOAT64)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'alpha' has dtype %s, expected float32 or float64", def->name,
                        ltf_dtype_name(al->dtype));
    int n = a->nints < 0 ? 0 : a->nints;
    for (int i = 0; i < n; i++)
        if (a->ints[i] < 0) {
            char buf[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' must not have negative dimensions, got %s",
                            def->name, ltf_shape_str(n, a->ints, buf, sizeof buf));
        }
    out->dtype = al->dtype;
    *nout = 1;
    if (al->rank == LTF_UNKNOWN_RANK) {
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    if (n + al->rank > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' and 'alpha' have %d dimensions together, at most %d allowed",
                        def->name, n + al->rank, LTF_MAX_RANK);
    memcpy(out->dims, a->ints, sizeof(int64_t) * (size_t)n);
    memcpy(out->dims + n, al->dims, sizeof(int64_t) * (size_t)al->rank);
    out->rank = n + al->rank;
    return LTF_OK;
}

/* normal/uniform with the shape as a tensor input */
static ltf_status infer_random_any(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                   const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    if (nin < 1) return infer_random(ctx, def, in, nin, a, out, maxout, nout);
    ltf_attrs b;
    int complete;
    ltf_type dummy;
    ltf_attrs none;
    ltf_attrs_init(&none);
    if (!a) a = &none;
    /* dtype and bounds checks first (no shape) */
    ltf_attrs c = *a;
    c.nints = 0;
    ltf_status st = infer_random(ctx, def, NULL, 0, &c, &dummy, 1, nout);
    if (st != LTF_OK) return st;
    st = ltf_shape_input_type(ctx, def, "shape", in[0], (ltf_dtype)a->i[0], out, &complete, &b, a);
    if (st != LTF_OK) return st;
    *nout = 1;
    if (complete) return infer_random(ctx, def, NULL, 0, &b, out, maxout, nout);
    return LTF_OK;
}

/* categorical: logits (batch, classes) -> (batch, num_samples) of i[0] */
static ltf_status infer_categorical(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                    const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    const ltf_tensor *l = in[0];
    char buf[LTF_SHAPE_BUF];
    if (l->dtype != LTF_DTYPE_FLOAT32 && l->dtype != LTF_DTYPE_FLOAT64)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'logits' has dtype %s, expected float32 or float64", def->name,
                        ltf_dtype_name(l->dtype));
    if (l->rank != LTF_UNKNOWN_RANK && l->rank != 2)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'logits' must be 2-D (batch_size, num_classes), got shape %s",
                        def->name, ltf_shape_str(l->rank, l->dims, buf, sizeof buf));
    if (a->i[0] != LTF_DTYPE_INT32 && a->i[0] != LTF_DTYPE_INT64)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'dtype' must be int32 or int64", def->name);
    if (a->nints != 1 || a->ints[0] < 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'num_samples' must be a non-negative integer", def->name);
    if (l->rank == 2 && l->dims[1] == 0 && l->dims[0] != 0 && a->ints[0] > 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'logits' has no classes (shape %s)", def->name,
                        ltf_shape_str(l->rank, l->dims, buf, sizeof buf));
    out->dtype = (ltf_dtype)a->i[0];
    out->rank = 2;
    out->dims[0] = l->rank == 2 ? l->dims[0] : LTF_UNKNOWN_DIM;
    out->dims[1] = a->ints[0];
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_shuffle(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)ctx; (void)def; (void)nin; (void)a; (void)maxout;
    ltf_type_of(in[0], out);
    *nout = 1;
    return LTF_OK;
}

#define CPU(k) { [LTF_DEVICE_CPU] = k }
#define RANDOM (LTF_OP_STATEFUL | LTF_OP_NOT_DIFFERENTIABLE)

LTF_INTERNAL const ltf_op_def ltf_opdef_random_normal = {
    "random_normal", 0, 1, RANDOM, 0, infer_random_any, CPU(ltf_cpu_random_normal), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_random_uniform = {
    "random_uniform", 0, 1, RANDOM, 1, infer_random_any, CPU(ltf_cpu_random_uniform), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_truncated_normal = {
    "truncated_normal", 0, 1, RANDOM, 2, infer_random_any, CPU(ltf_cpu_random_normal), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_random_gamma = {
    "random_gamma", 1, 1, RANDOM, 0, infer_gamma, CPU(ltf_cpu_random_gamma), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_categorical = {
    "categorical", 1, 1, RANDOM, 0, infer_categorical, CPU(ltf_cpu_random_categorical), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_random_shuffle = {
    "random_shuffle", 1, 1, RANDOM, 0, infer_shuffle, CPU(ltf_cpu_random_shuffle), NULL };
