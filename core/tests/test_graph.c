/*
** test_graph.c: graphs through the public C API (ltf.h): trace a small
** function with placeholders and ltf_op_run, finish it (passes and plan),
** replay it on new inputs and check the values; fused groups (a float
** chain, CharUnpack's integer ops, broadcasts and views), folding, input
** checks and errors inside a fused group.
*/
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "ltf.h"
#include "ltf_ops.h"

static ltf_ctx *ctx;

/* One-output op; NULL on failure (message in ctx). */
static ltf_tensor *op(ltf_op_id id, ltf_tensor *a, ltf_tensor *b, const ltf_attrs *attrs) {
    ltf_tensor *in[2] = { a, b }, *out = NULL;
    int n = 0;
    if (ltf_op_run(ctx, id, in, b ? 2 : 1, attrs, &out, 1, &n) != LTF_OK) return NULL;
    return out;
}

static ltf_tensor *scalar_f32(float v) { return ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 0, NULL, &v); }

static int count_groups(const ltf_graph *g, int *members) {
    int max = 0;
    *members = 0;
    for (int i = 0; i < ltf_graph_num_nodes(g); i++) {
        int q = ltf_graph_node_fused(g, i);
        if (q > max) max = q;
        if (q) (*members)++;
    }
    return max;
}

/* y = tanh(x * a + b) - x: a float chain, one fused group; replayed twice. */
static void test_float_chain(void) {
    ltf_graph *g = ltf_graph_begin(ctx, "chain");
    CHECK(g != NULL);
    int64_t dims[1] = { 5 };
    ltf_tensor *x = ltf_graph_placeholder(ctx, g, LTF_DTYPE_FLOAT32, 1, dims, "x");
    CHECK(x && ltf_tensor_is_symbolic(x));
    ltf_tensor *a = scalar_f32(2.0f), *b = scalar_f32(0.5f);
    ltf_tensor *t1 = op(LTF_OP_MUL, x, a, NULL);
    ltf_tensor *t2 = op(LTF_OP_ADD, t1, b, NULL);
    ltf_tensor *t3 = op(LTF_OP_TANH, t2, NULL, NULL);
    ltf_tensor *y = op(LTF_OP_SUB, t3, x, NULL);
    CHECK(y && ltf_tensor_is_symbolic(y));
    CHECK(ltf_graph_end(ctx, g, &y, 1) == LTF_OK);
    int members = 0;
    CHECK(count_groups(g, &members) == 1 && members == 4);
    CHECK(ltf_graph_num_inputs(g) == 1 && ltf_graph_num_outputs(g) == 1);
    for (int rep = 0; rep < 2; rep++) {
        float xs[5] = { -1.0f, 0.0f, 0.25f, 1.0f, 3.0f };
        for (int i = 0; i < 5; i++) xs[i] += (float)rep;
        ltf_tensor *xv = ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 1, dims, xs);
        ltf_tensor *out = NULL;
        int n = 0;
        CHECK(ltf_graph_run(ctx, g, &xv, 1, &out, 1, &n) == LTF_OK && n == 1);
        CHECK(ltf_tensor_dtype(out) == LTF_DTYPE_FLOAT32 && ltf_tensor_num_elements(out) == 5);
        const float *o = ltf_tensor_data(out);
        for (int i = 0; i < 5; i++) CHECK(fabs(o[i] - (tanh(xs[i] * 2.0 + 0.5) - xs[i])) < 1e-5);
        ltf_tensor_release(out);
        ltf_tensor_release(xv);
    }
    ltf_tensor *t[] = { a, b, t1, t2, t3, y, x };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) ltf_tensor_release(t[i]);
    ltf_graph_release(g);
}

/* CharUnpack: cast(reshape(bitwise_and(right_shift(expand_dims(x, -1), [7..0]), 1), [R, C*8]), float32). */
static void test_charunpack(void) {
    enum { R = 3, C = 50 };
    ltf_graph *g = ltf_graph_begin(ctx, "charunpack");
    int64_t dims[2] = { R, C }, d8 = 8;
    ltf_tensor *x = ltf_graph_placeholder(ctx, g, LTF_DTYPE_UINT8, 2, dims, "x");
    ltf_attrs ax;
    ltf_attrs_init(&ax);
    ax.i[0] = -1;   /* 0-based in core: the new last axis */
    ltf_tensor *e = op(LTF_OP_EXPAND_DIMS, x, NULL, &ax);
    uint8_t sh[8] = { 7, 6, 5, 4, 3, 2, 1, 0 }, one = 1;
    ltf_tensor *s = ltf_tensor_from_data(ctx, LTF_DTYPE_UINT8, 1, &d8, sh);
    ltf_tensor *o1 = ltf_tensor_from_data(ctx, LTF_DTYPE_UINT8, 0, NULL, &one);
    ltf_tensor *r = op(LTF_OP_RIGHT_SHIFT, e, s, NULL);
    ltf_tensor *b = op(LTF_OP_BITWISE_AND, r, o1, NULL);
    ltf_attrs ar;
    ltf_attrs_init(&ar);
    ar.nints = 2;
    ar.ints[0] = R;
    ar.ints[1] = C * 8;
    ltf_tensor *rs = op(LTF_OP_RESHAPE, b, NULL, &ar);
    ltf_attrs ac;
    ltf_attrs_init(&ac);
    ac.i[0] = LTF_DTYPE_FLOAT32;
    ltf_tensor *y = op(LTF_OP_CAST, rs, NULL, &ac);
    CHECK(y != NULL);
    CHECK(ltf_graph_end(ctx, g, &y, 1) == LTF_OK);
    int members = 0;
    CHECK(count_groups(g, &members) == 1 && members == 5);   /* views included */
    uint8_t xs[R * C];
    for (int i = 0; i < R * C; i++) xs[i] = (uint8_t)(i * 37 + 11);
    ltf_tensor *xv = ltf_tensor_from_data(ctx, LTF_DTYPE_UINT8, 2, dims, xs);
    ltf_tensor *out = NULL;
    int n = 0;
    CHECK(ltf_graph_run(ctx, g, &xv, 1, &out, 1, &n) == LTF_OK);
    CHECK(ltf_tensor_rank(out) == 2 && ltf_tensor_dims(out)[0] == R && ltf_tensor_dims(out)[1] == C * 8);
    const float *o = ltf_tensor_data(out);
    int bad = 0;
    for (int k = 0; k < R * C * 8; k++) bad += o[k] != (float)((xs[k / 8] >> (7 - k % 8)) & 1);
    CHECK(bad == 0);
    ltf_tensor_release(out);
    ltf_tensor *t[] = { xv, x, e, s, o1, r, b, rs, y };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) ltf_tensor_release(t[i]);
    ltf_graph_release(g);
}

/* Broadcasting inside a group: [4, 1] (int32) against [1, 3], then ops on the result. */
static void test_broadcast_int(void) {
    ltf_graph *g = ltf_graph_begin(ctx, "bcast");
    int64_t da[2] = { 4, 1 }, db[2] = { 1, 3 };
    ltf_tensor *a = ltf_graph_placeholder(ctx, g, LTF_DTYPE_INT32, 2, da, "a");
    ltf_tensor *b = ltf_graph_placeholder(ctx, g, LTF_DTYPE_INT32, 2, db, "b");
    ltf_tensor *m = op(LTF_OP_MUL, a, b, NULL);
    ltf_tensor *f = op(LTF_OP_FLOORDIV, m, b, NULL);
    ltf_tensor *y = op(LTF_OP_SUB, f, a, NULL);   /* a*b // b - a == 0 */
    ltf_tensor *z = op(LTF_OP_ADD, m, y, NULL);
    CHECK(ltf_graph_end(ctx, g, &z, 1) == LTF_OK);
    int members = 0;   /* m is read twice, so it stays a step of its own; f, y, z are one group */
    CHECK(count_groups(g, &members) == 1 && members == 3);
    int32_t av[4] = { -3, 0, 7, 100 }, bv[3] = { 1, -2, 5 };
    ltf_tensor *in[2] = { ltf_tensor_from_data(ctx, LTF_DTYPE_INT32, 2, da, av),
                          ltf_tensor_from_data(ctx, LTF_DTYPE_INT32, 2, db, bv) };
    ltf_tensor *out = NULL;
    int n = 0;
    CHECK(ltf_graph_run(ctx, g, in, 2, &out, 1, &n) == LTF_OK);
    const int32_t *o = ltf_tensor_data(out);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) CHECK(o[i * 3 + j] == av[i] * bv[j]);
    ltf_tensor_release(out);
    /* a zero divisor inside the group: the op's own message */
    int32_t bz[3] = { 1, 0, 5 };
    ltf_tensor_release(in[1]);
    in[1] = ltf_tensor_from_data(ctx, LTF_DTYPE_INT32, 2, db, bz);
    CHECK(ltf_graph_run(ctx, g, in, 2, &out, 1, &n) == LTF_ERR_INVALID_ARGUMENT);
    CHECK_STR(ltf_ctx_error(ctx), "floordiv: integer division by zero");
    /* an input that does not fit its placeholder */
    ltf_tensor *wrong = ltf_tensor_from_data(ctx, LTF_DTYPE_INT32, 2, db, bv);
    ltf_tensor *in2[2] = { wrong, in[1] };
    CHECK(ltf_graph_run(ctx, g, in2, 2, &out, 1, &n) == LTF_ERR_INVALID_ARGUMENT);
    CHECK_STR(ltf_ctx_error(ctx), "bcast: input 1 ('a') was expected to have shape (4, 1) but has shape (1, 3)");
    /* a wrong dtype: both dtypes named (TensorFlow's "expected to be a ... tensor but is a ... tensor") */
    float fv[4] = { 1, 2, 3, 4 };
    ltf_tensor *wrong_dt = ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 2, da, fv);
    ltf_tensor *in3[2] = { wrong_dt, in[1] };
    CHECK(ltf_graph_run(ctx, g, in3, 2, &out, 1, &n) == LTF_ERR_INVALID_ARGUMENT && n == 0);
    CHECK_STR(ltf_ctx_error(ctx), "bcast: input 1 ('a') was expected to be a int32 tensor but is a float32 tensor");
    ltf_tensor_release(wrong_dt);
    ltf_tensor *t[] = { in[0], in[1], wrong, a, b, m, f, y, z };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) ltf_tensor_release(t[i]);
    ltf_graph_release(g);
}

/* Constant folding: an op on constants becomes a Const node. */
static void test_fold(void) {
    ltf_graph *g = ltf_graph_begin(ctx, "fold");
    int64_t dims[1] = { 2 };
    ltf_tensor *x = ltf_graph_placeholder(ctx, g, LTF_DTYPE_FLOAT32, 1, dims, "x");
    float cv[2] = { 1.0f, 2.0f };
    ltf_tensor *c = ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 1, dims, cv);
    ltf_tensor *c2 = op(LTF_OP_EXP, c, NULL, NULL);   /* folded */
    ltf_tensor *y = op(LTF_OP_ADD, x, c2, NULL);
    CHECK(ltf_graph_end(ctx, g, &y, 1) == LTF_OK);
    int exp_live = 0, consts = 0;
    for (int i = 0; i < ltf_graph_num_nodes(g); i++) {
        if (!ltf_graph_node_live(g, i)) continue;
        if (strcmp(ltf_graph_node_name(g, i), "exp") == 0) CHECK_STR(ltf_graph_node_op(g, i), "Const");
        exp_live += strcmp(ltf_graph_node_op(g, i), "exp") == 0;
        consts += strcmp(ltf_graph_node_op(g, i), "Const") == 0;
    }
    CHECK(exp_live == 0 && consts == 1);
    float xv[2] = { 0.5f, -1.0f };
    ltf_tensor *xt = ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 1, dims, xv), *out = NULL;
    int n = 0;
    CHECK(ltf_graph_run(ctx, g, &xt, 1, &out, 1, &n) == LTF_OK);
    const float *o = ltf_tensor_data(out);
    CHECK(fabs(o[0] - (0.5 + exp(1.0))) < 1e-5 && fabs(o[1] - (-1.0 + exp(2.0))) < 1e-5);
    ltf_tensor *t[] = { out, xt, x, c, c2, y };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) ltf_tensor_release(t[i]);
    ltf_graph_release(g);
}

int main(void) {
    ctx = ltf_ctx_new();
    test_float_chain();
    test_charunpack();
    test_broadcast_int();
    test_fold();
    ltf_ctx_release(ctx);
    CHECK_DONE();
}
