/*
** grad.c: helpers that build gradient expressions from ops (see grad.h).
*/
#include <stdarg.h>
#include <string.h>
#include "grad.h"

ltf_tensor *ltf_grad_ones_like(ltf_ctx *ctx, ltf_tensor *x) {
    return ltf_op1(ctx, LTF_OP_ONES_LIKE, &x, 1, NULL);
}

ltf_tensor *ltf_grad_zeros_like(ltf_ctx *ctx, ltf_tensor *x) {
    return ltf_op1(ctx, LTF_OP_ZEROS_LIKE, &x, 1, NULL);
}

ltf_tensor *ltf_g_op1(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *a, const ltf_attrs *at) {
    if (!a) return NULL;
    return ltf_op1(ctx, op, &a, 1, at);
}

ltf_tensor *ltf_g_op2(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *a, ltf_tensor *b, const ltf_attrs *at) {
    if (!a || !b) return NULL;
    ltf_tensor *in[2] = { a, b };
    return ltf_op1(ctx, op, in, 2, at);
}

ltf_tensor *ltf_g_scalar(ltf_ctx *ctx, ltf_dtype dt, double v) {
    unsigned char buf[8];
    switch (dt) {
    case LTF_DTYPE_FLOAT32: *(float *)buf = (float)v; break;
    case LTF_DTYPE_FLOAT64: *(double *)buf = v; break;
    case LTF_DTYPE_FLOAT16: *(uint16_t *)(void *)buf = ltf_float16_from_double(v); break;
    case LTF_DTYPE_BFLOAT16: *(uint16_t *)(void *)buf = ltf_bfloat16_from_double(v); break;
    case LTF_DTYPE_INT32: *(int32_t *)buf = (int32_t)v; break;
    case LTF_DTYPE_INT64: *(int64_t *)buf = (int64_t)v; break;
    default: *(uint8_t *)buf = (uint8_t)v; break;
    }
    return ltf_tensor_from_data(ctx, dt, 0, NULL, buf);
}

ltf_tensor *ltf_g_scale(ltf_ctx *ctx, ltf_tensor *a, double v) {
    if (!a) return NULL;
    ltf_tensor *s = ltf_g_scalar(ctx, a->dtype, v);
    ltf_tensor *r = ltf_g_op2(ctx, LTF_OP_MUL, a, s, NULL);
    ltf_tensor_release(s);
    return r;
}

/* Whether every dim of 't' is known (then shapes are decided while tracing). */
static int fully_known(const ltf_tensor *t) {
    if (t->rank < 0) return 0;
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] < 0) return 0;
    return 1;
}

ltf_tensor *ltf_g_reshape_like(ltf_ctx *ctx, ltf_tensor *g, const ltf_tensor *like) {
    if (!g) return NULL;
    if (!fully_known(like)) return ltf_g_op2(ctx, LTF_OP_RESHAPE_LIKE, g, (ltf_tensor *)like, NULL);
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = like->rank;
    for (int i = 0; i < like->rank; i++) at.ints[i] = like->dims[i];
    return ltf_op1(ctx, LTF_OP_RESHAPE, &g, 1, &at);
}

ltf_tensor *ltf_g_unbroadcast(ltf_ctx *ctx, ltf_tensor *g, const ltf_tensor *like) {
    if (!g) return NULL;
    int same = g->rank == like->rank;
    for (int i = 0; same && i < g->rank; i++) same = g->dims[i] == like->dims[i];
    if (same && fully_known(g)) return ltf_tensor_retain(g);
    /* a dim or rank known only at run time: the axes to sum are decided then */
    if (!fully_known(g) || !fully_known(like)) return ltf_g_op2(ctx, LTF_OP_SUM_TO, g, (ltf_tensor *)like, NULL);
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = 0;
    int lead = g->rank - like->rank;
    for (int i = 0; i < g->rank; i++) {
        int j = i - lead;
        if (j < 0 || (like->dims[j] == 1 && g->dims[i] != 1)) at.ints[at.nints++] = i;
    }
    ltf_tensor *s = at.nints ? ltf_op1(ctx, LTF_OP_REDUCE_SUM, &g, 1, &at) : ltf_tensor_retain(g);
    ltf_tensor *r = ltf_g_reshape_like(ctx, s, like);
    ltf_tensor_release(s);
    return r;
}

void ltf_g_free(int n, ...) {
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) ltf_tensor_release(va_arg(ap, ltf_tensor *));
    va_end(ap);
}
