/*
** ops/matmul.c: definition of matmul: dtype checks, shape inference (batch
** dimensions broadcast, transposes, partial shapes), its kernel and its
** gradient (da = dc @ b^T, db = a^T @ dc, with the transposes folded into
** the products, then summed over broadcast batch dimensions).
*/
#include <stdio.h>
#include <string.h>
#include "../op.h"
#include "../shape.h"
#include "../grad.h"
#include "../cpu/cpu.h"

#define M(dt) (1u << (dt))
#define MATMUL_DTYPES (M(LTF_DTYPE_FLOAT32) | M(LTF_DTYPE_FLOAT64) | M(LTF_DTYPE_INT32) | M(LTF_DTYPE_INT64) | \
                       M(LTF_DTYPE_FLOAT16) | M(LTF_DTYPE_BFLOAT16))

/* {==== Inference */
static ltf_status check_rank(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const ltf_tensor *t) {
    if (t->rank == LTF_UNKNOWN_RANK || t->rank >= 2) return LTF_OK;
    char s[LTF_SHAPE_BUF];
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must have rank >= 2, got shape %s", def->name, arg,
                    ltf_shape_str(t->rank, t->dims, s, sizeof s));
}

/* Output (batch..., M, N): the batch dims of 'a' and 'b' broadcast; M from
** 'a', N from 'b'; the inner dims K must agree where both are known. */
static ltf_status infer_matmul(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *at, ltf_type *out, int maxout, int *nout) {
    (void)nin; (void)maxout;
    const ltf_tensor *a = in[0], *b = in[1];
    if (a->dtype != b->dtype)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: a and b must have the same dtype, got a: %s and b: %s (use tf.cast)",
                        def->name, ltf_dtype_name(a->dtype), ltf_dtype_name(b->dtype));
    if (!(MATMUL_DTYPES & M(a->dtype)))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'a' has dtype %s, expected one of: float32, float64, int32, int64",
                        def->name, ltf_dtype_name(a->dtype));
    ltf_status st = check_rank(ctx, def, "a", a);
    if (st == LTF_OK) st = check_rank(ctx, def, "b", b);
    if (st != LTF_OK) return st;
    out->dtype = a->dtype;
    *nout = 1;
    if (a->rank == LTF_UNKNOWN_RANK || b->rank == LTF_UNKNOWN_RANK) {
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    int ta = at->i[0] != 0, tb = at->i[1] != 0, ra = a->rank, rb = b->rank;
    int64_t m = a->dims[ra - 2 + ta], ka = a->dims[ra - 1 - ta];
    int64_t kb = b->dims[rb - 2 + tb], n = b->dims[rb - 1 - tb];
    char sa[LTF_SHAPE_BUF], sb[LTF_SHAPE_BUF];
    if (ka >= 0 && kb >= 0 && ka != kb)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: inner dimensions differ: a is %s, b is %s%s", def->name,
                        ltf_shape_str(ra, a->dims, sa, sizeof sa), ltf_shape_str(rb, b->dims, sb, sizeof sb),
                        ta && tb ? " (transpose_a, transpose_b)" : ta ? " (transpose_a)" : tb ? " (transpose_b)" : "");
    int r;
    if (ltf_broadcast_shapes(ctx, def->name, ra - 2, a->dims, rb - 2, b->dims, &r, out->dims) != LTF_OK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: batch dimensions do not broadcast: a is %s, b is %s",
                        def->name, ltf_shape_str(ra, a->dims, sa, sizeof sa), ltf_shape_str(rb, b->dims, sb, sizeof sb));
    out->rank = r + 2;
    out->dims[r] = m;
    out->dims[r + 1] = n;
    return LTF_OK;
}
/* }==== */

/* {==== Gradient */
/* matmul(x, y) with the given transpose flags (new reference or NULL). */
static ltf_tensor *mm(ltf_ctx *ctx, ltf_tensor *x, ltf_tensor *y, int tx, int ty) {
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = tx;
    at.i[1] = ty;
    return ltf_g_op2(ctx, LTF_OP_MATMUL, x, y, &at);
}

/* x viewed as a matrix (rows, last dim) (new reference or NULL); 'rows' is
** given, not -1, which cannot be inferred next to a 0 dimension. */
static ltf_tensor *flat2(ltf_ctx *ctx, ltf_tensor *x, int64_t rows) {
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = 2;
    at.ints[0] = rows;
    at.ints[1] = x->dims[x->rank - 1];
    return ltf_g_op1(ctx, LTF_OP_RESHAPE, x, &at);
}

/* Does 't' carry every batch dimension of the output (no broadcasting), all
** of its dimensions known? */
static int full_batch(const ltf_tensor *t, const ltf_tensor *out) {
    if (t->rank < 0 || t->rank != out->rank) return 0;
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] < 0 || (i < t->rank - 2 && t->dims[i] != out->dims[i])) return 0;
    return 1;
}

/* The four transpose cases (as TensorFlow's MatMul/BatchMatMulV2 gradients):
**   c = a b      da = g b^T      db = a^T g
**   c = a b^T    da = g b        db = g^T a
**   c = a^T b    da = b g^T      db = a g
**   c = a^T b^T  da = b^T g^T    db = g^T a^T
** The products carry the output's batch dimensions; ltf_g_unbroadcast sums
** them down to the operand's shape. A rank-2 'b' against a fully batched
** 'a' (a dense layer over a sequence) takes db as one flat GEMM instead of a
** batched product and a sum. */
static ltf_status grad_matmul(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout,
                              ltf_tensor **din) {
    (void)def; (void)nin; (void)nout;
    ltf_tensor *x = in[0], *y = in[1], *g = dout[0];
    int ta = a && a->i[0], tb = a && a->i[1];
    ltf_tensor *gx = NULL, *gy = NULL;
    /* an operand no source depends on (the data fed to a first layer) gets
    ** no gradient: its product is skipped, as a traced graph prunes it */
    int need_x = LTF_GRAD_NEEDED(ctx, 0), need_y = LTF_GRAD_NEEDED(ctx, 1);
    if (need_x && !ta) gx = tb ? mm(ctx, g, y, 0, 0) : mm(ctx, g, y, 0, 1);
    else if (need_x) gx = tb ? mm(ctx, y, g, 1, 1) : mm(ctx, y, g, 0, 1);
    if (!need_y) {
        /* none */
    } else if (!ta && y->rank == 2 && x->rank > 2 && full_batch(x, out[0]) && g->rank > 0 && g->dims[g->rank - 1] >= 0) {
        int64_t rows = 1;   /* x's dims are known (full_batch); g shares its leading ones */
        for (int i = 0; i < x->rank - 1 && rows >= 0; i++)
            if (__builtin_mul_overflow(rows, x->dims[i], &rows)) rows = -1;   /* reshape reports it */
        ltf_tensor *x2 = flat2(ctx, x, rows), *g2 = flat2(ctx, g, rows);
        gy = tb ? mm(ctx, g2, x2, 1, 0) : mm(ctx, x2, g2, 1, 0);
        ltf_g_free(2, x2, g2);
    } else if (!ta) {
        gy = tb ? mm(ctx, g, x, 1, 0) : mm(ctx, x, g, 1, 0);
    } else {
        gy = tb ? mm(ctx, g, x, 1, 1) : mm(ctx, x, g, 0, 0);
    }
    din[0] = need_x ? ltf_g_unbroadcast(ctx, gx, x) : NULL;
    din[1] = need_y ? ltf_g_unbroadcast(ctx, gy, y) : NULL;
    ltf_g_free(2, gx, gy);
    if ((need_x && !din[0]) || (need_y && !din[1])) {
        ltf_g_free(2, din[0], din[1]);
        din[0] = din[1] = NULL;
        return ctx->last_status;
    }
    return LTF_OK;
}
/* }==== */

LTF_INTERNAL const ltf_op_def ltf_opdef_matmul = {
    "matmul", 2, 2, 0, 0, infer_matmul, { [LTF_DEVICE_CPU] = ltf_cpu_matmul_matmul }, grad_matmul };
