/*
** ops/example.c: definition of parse_example_feature (ltf_ops/example.h):
** dtype/shape inference. Not differentiable; the kernel is cpu/example.c.
*/
#include "../op.h"
#include "../shape.h"
#include "../cpu/cpu.h"

LTF_CPU_KERNEL(ltf_cpu_parse_example_feature);

static ltf_status infer_parse(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)nin;
    char s[LTF_SHAPE_BUF];
    const ltf_tensor *x = in[0], *key = in[1], *dflt = in[2];
    ltf_dtype dt = (ltf_dtype)a->i[1];
    if (x->dtype != LTF_DTYPE_STRING)
        return ltf_fail(ctx, LTF_ERR_TYPE, "parse_example: 'serialized' has dtype %s, expected string",
                        ltf_dtype_name(x->dtype));
    if (x->rank > 1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "parse_example: 'serialized' must be a scalar or a vector, got shape %s",
                        ltf_shape_str(x->rank, x->dims, s, sizeof s));
    if (key->dtype != LTF_DTYPE_STRING || key->rank != 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "parse_example: the feature key must be a scalar string");
    if (dt != LTF_DTYPE_STRING && dt != LTF_DTYPE_FLOAT32 && dt != LTF_DTYPE_INT64)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "parse_example: a feature's dtype must be string, float32 or int64, got %s",
                        ltf_dtype_name(dt));
    if (dflt->dtype != dt)
        return ltf_fail(ctx, LTF_ERR_TYPE, "parse_example: the default value has dtype %s, the feature %s",
                        ltf_dtype_name(dflt->dtype), ltf_dtype_name(dt));
    if (a->i[0] < 0 || a->i[0] > 2 || a->nints < 0 || x->rank < 0 || (x->rank + a->nints + 1) > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "parse_example: bad feature kind or shape");
    for (int d = 0; d < a->nints; d++)
        if (a->ints[d] < 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "parse_example: a feature's shape must be fully defined");
    if (a->i[0] == 1) {
        if (maxout < 3) return ltf_fail(ctx, LTF_ERR_INTERNAL, "parse_example: room for 3 outputs needed, got %d", maxout);
        out[0].dtype = LTF_DTYPE_INT64; out[0].rank = 2; out[0].dims[0] = -1; out[0].dims[1] = x->rank + 1;
        out[1].dtype = dt; out[1].rank = 1; out[1].dims[0] = -1;
        out[2].dtype = LTF_DTYPE_INT64; out[2].rank = 1; out[2].dims[0] = x->rank + 1;
        *nout = 3;
        return LTF_OK;
    }
    int r = 0;
    out[0].dtype = dt;
    if (x->rank == 1) out[0].dims[r++] = x->dims[0];
    if (a->i[0] == 2) out[0].dims[r++] = -1;
    for (int d = 0; d < a->nints; d++) out[0].dims[r++] = a->ints[d];
    out[0].rank = r;
    *nout = 1;
    return LTF_OK;
}

LTF_INTERNAL const ltf_op_def ltf_opdef_parse_example_feature = {
    "parse_example_feature", 3, 3, LTF_OP_NOT_DIFFERENTIABLE | LTF_OP_KERNEL_ALLOCATES, LTF_OP_PARSE_EXAMPLE_FEATURE,
    infer_parse, { [LTF_DEVICE_CPU] = ltf_cpu_parse_example_feature }, NULL };
