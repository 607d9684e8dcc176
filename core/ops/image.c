/*
** ops/image.c: definitions of the image ops (ltf_ops/image.h): NHWC shape
** inference (unknown dims pass) and gradients: resize_bilinear's is
** resize_bilinear_grad (TensorFlow's ResizeBilinearGrad), resize_nearest's
** resize_nearest_grad; both grads are linear, so their own gradients are
** the forward resizes again.
*/
#include <string.h>
#include "../op.h"
#include "../shape.h"
#include "../grad.h"
#include "../cpu/cpu.h"

LTF_CPU_KERNEL(ltf_cpu_image_resize);        /* bilinear (code 0), nearest (code 1) */
LTF_CPU_KERNEL(ltf_cpu_image_resize_grad);   /* bilinear (code 0), nearest (code 1) */
LTF_CPU_KERNEL(ltf_cpu_image_transform);

#define INFER_ARGS                                                                                 \
    ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin, const ltf_attrs *a,       \
        ltf_type *out, int maxout, int *nout

static ltf_status check_image(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const ltf_tensor *t,
                              int floats) {
    char s[LTF_SHAPE_BUF];
    if (t->rank != LTF_UNKNOWN_RANK && t->rank != 4)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must be 4-D (batch, height, width, channels), got shape %s",
                        def->name, arg, ltf_shape_str(t->rank, t->dims, s, sizeof s));
    if (floats ? (t->dtype != LTF_DTYPE_FLOAT32 && t->dtype != LTF_DTYPE_FLOAT64 && t->dtype != LTF_DTYPE_FLOAT16 &&
                  t->dtype != LTF_DTYPE_BFLOAT16)
               : (t->dtype == LTF_DTYPE_STRING || t->dtype == LTF_DTYPE_BOOL))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: '%s' has dtype %s, expected %s", def->name, arg,
                        ltf_dtype_name(t->dtype), floats ? "a float dtype" : "a numeric dtype");
    if (t->rank == 4 && (t->dims[1] == 0 || t->dims[2] == 0))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must have a non-zero height and width, got shape %s",
                        def->name, arg, ltf_shape_str(t->rank, t->dims, s, sizeof s));
    return LTF_OK;
}

static ltf_status infer_resize(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = check_image(ctx, def, "images", in[0], def->code == 0);
    if (st != LTF_OK) return st;
    if (a->nints != 2 || a->ints[0] <= 0 || a->ints[1] <= 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'size' must be two positive integers (height, width)",
                        def->name);
    out->dtype = in[0]->dtype;
    out->rank = 4;
    out->dims[0] = in[0]->rank == 4 ? in[0]->dims[0] : LTF_UNKNOWN_DIM;
    out->dims[1] = a->ints[0];
    out->dims[2] = a->ints[1];
    out->dims[3] = in[0]->rank == 4 ? in[0]->dims[3] : LTF_UNKNOWN_DIM;
    *nout = 1;
    return LTF_OK;
}

/* grads (n, h', w', c) and the forward input (for its shape) */
static ltf_status infer_resize_grad(INFER_ARGS) {
    (void)nin; (void)a; (void)maxout;
    ltf_status st = check_image(ctx, def, "grads", in[0], def->code == 0);
    if (st == LTF_OK) st = check_image(ctx, def, "original_image", in[1], 0);
    if (st != LTF_OK) return st;
    out->dtype = in[0]->dtype;
    if (in[1]->rank == 4) {
        out->rank = 4;
        memcpy(out->dims, in[1]->dims, sizeof(int64_t) * 4);
    } else {
        out->rank = LTF_UNKNOWN_RANK;
    }
    *nout = 1;
    return LTF_OK;
}

#define GRAD_FN(name)                                                                                    \
    static ltf_status name(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,           \
                           const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout, \
                           ltf_tensor **din)

/* d resize = resize_grad(g, x) */
GRAD_FN(grad_resize) {
    (void)nin; (void)a; (void)nout;
    ltf_tensor *g = dout[0] ? ltf_tensor_retain(dout[0]) : ltf_grad_zeros_like(ctx, out[0]);
    din[0] = ltf_g_op2(ctx, def->code == 0 ? LTF_OP_RESIZE_BILINEAR_GRAD : LTF_OP_RESIZE_NEAREST_GRAD, g, in[0], NULL);
    ltf_tensor_release(g);
    return din[0] ? LTF_OK : ctx->last_status;
}

/* d resize_grad (linear in grads) = resize of the incoming gradient to the
** grads' size; the shape input gets none */
GRAD_FN(grad_resize_grad) {
    (void)nin; (void)a; (void)nout;
    din[1] = NULL;
    const ltf_tensor *g = in[0];
    if (g->rank != 4 || g->dims[1] < 0 || g->dims[2] < 0)
        return ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "%s: the gradient needs the grads' height and width known",
                        def->name);
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = 2;
    at.ints[0] = g->dims[1];
    at.ints[1] = g->dims[2];
    ltf_tensor *d = dout[0] ? ltf_tensor_retain(dout[0]) : ltf_grad_zeros_like(ctx, out[0]);
    din[0] = ltf_g_op1(ctx, def->code == 0 ? LTF_OP_RESIZE_BILINEAR : LTF_OP_RESIZE_NEAREST, d, &at);
    ltf_tensor_release(d);
    return din[0] ? LTF_OK : ctx->last_status;
}

/* image_transform: images (n, h, w, c) of a numeric dtype, transforms
** float32 (n or 1, 8); output (n, ints[0], ints[1], c) */
static ltf_status infer_transform(INFER_ARGS) {
    (void)nin; (void)maxout;
    char s[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF];
    const ltf_tensor *x = in[0], *t = in[1];
    if (x->rank != LTF_UNKNOWN_RANK && x->rank != 4)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'images' must be 4-D (batch, height, width, channels), got "
                        "shape %s", def->name, ltf_shape_str(x->rank, x->dims, s, sizeof s));
    if (x->dtype != LTF_DTYPE_FLOAT32 && x->dtype != LTF_DTYPE_FLOAT64 && x->dtype != LTF_DTYPE_INT32 &&
        x->dtype != LTF_DTYPE_INT64 && x->dtype != LTF_DTYPE_UINT8)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'images' has dtype %s, expected float32, float64, int32, int64 or uint8",
                        def->name, ltf_dtype_name(x->dtype));
    if (t->dtype != LTF_DTYPE_FLOAT32)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'transforms' has dtype %s, expected float32", def->name,
                        ltf_dtype_name(t->dtype));
    if (t->rank != LTF_UNKNOWN_RANK &&
        (t->rank != 2 || (t->dims[1] >= 0 && t->dims[1] != 8) ||
         (x->rank == 4 && t->dims[0] >= 0 && x->dims[0] >= 0 && t->dims[0] != 1 && t->dims[0] != x->dims[0])))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'transforms' must have shape (1, 8) or (batch, 8) for "
                        "images of shape %s, got %s", def->name, ltf_shape_str(x->rank, x->dims, s, sizeof s),
                        ltf_shape_str(t->rank, t->dims, s2, sizeof s2));
    if (a->nints != 2 || a->ints[0] <= 0 || a->ints[1] <= 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'output_shape' must be two positive integers (height, "
                        "width)", def->name);
    if (a->i[0] < 0 || a->i[0] > 1 || a->i[1] < 0 || a->i[1] > 3)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: unknown interpolation %lld or fill mode %lld", def->name,
                        (long long)a->i[0], (long long)a->i[1]);
    out->dtype = x->dtype;
    out->rank = 4;
    out->dims[0] = x->rank == 4 ? x->dims[0] : LTF_UNKNOWN_DIM;
    out->dims[1] = a->ints[0];
    out->dims[2] = a->ints[1];
    out->dims[3] = x->rank == 4 ? x->dims[3] : LTF_UNKNOWN_DIM;
    *nout = 1;
    return LTF_OK;
}

#define CPU(k) { [LTF_DEVICE_CPU] = k }
/* no gradient (TensorFlow's has one for the images; Keras's random
** augmentation layers do not need it): a tape that needs one raises */
LTF_INTERNAL const ltf_op_def ltf_opdef_image_transform = {
    "image_transform", 2, 2, 0, 0, infer_transform, CPU(ltf_cpu_image_transform), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_resize_bilinear = {
    "resize_bilinear", 1, 1, 0, 0, infer_resize, CPU(ltf_cpu_image_resize), grad_resize };
LTF_INTERNAL const ltf_op_def ltf_opdef_resize_bilinear_grad = {
    "resize_bilinear_grad", 2, 2, 0, 0, infer_resize_grad, CPU(ltf_cpu_image_resize_grad), grad_resize_grad };
LTF_INTERNAL const ltf_op_def ltf_opdef_resize_nearest = {
    "resize_nearest", 1, 1, 0, 1, infer_resize, CPU(ltf_cpu_image_resize), grad_resize };
LTF_INTERNAL const ltf_op_def ltf_opdef_resize_nearest_grad = {
    "resize_nearest_grad", 2, 2, 0, 1, infer_resize_grad, CPU(ltf_cpu_image_resize_grad), grad_resize_grad };
