/*
** test_cuda_kernels_half.cpp: float16 and bfloat16 in the CUDA kernels'
** bodies built for the host (libltf_gpu_host.a), against the CPU backend,
** which computes them on float32 copies (core/half.c): the conversions
** (common.cuh's against core/half.h's, every float16 and bfloat16 pattern
** and hand-worked values), every elementwise op, casts to and from every
** dtype, fills, reductions, softmax and the cross-entropies, matmul, the
** moves (2-byte elements), the optimizer updates, which kernels take them
** as they are (ltf_gpu_host_takes_half), and the errors.
**
** Tolerances: ops that IEEE float32 rounds correctly on both sides (+, -,
** *, /, sqrt, max, min, casts, moves) are compared exactly: both round the
** same float32 value to the half dtype. Elsewhere the float32 values may
** differ by an ulp or two (the CPU's own exp/tanh polynomials, another
** summation order), which can move the rounded result by one step of the
** half dtype: rtol 2^-10 (float16) / 2^-7 (bfloat16), plus for sums the
** float32 atol (1e-5 times the sum of the magnitudes reduced).
*/
#include "kernel_check.h"
#include "../../cuda/kernels/common.cuh"

static const ltf_dtype HALVES[] = { LTF_DTYPE_FLOAT16, LTF_DTYPE_BFLOAT16 };
static double step_of(ltf_dtype dt) { return dt == LTF_DTYPE_FLOAT16 ? 1.0 / 1024 : 1.0 / 128; }

/* {==== Conversions */
static void test_conversions() {
    /* hand-worked values (float16: 10 stored mantissa bits, bias 15) */
    CHECK(ltf_float16_from_double(1.0 / 3) == 0x3555);            /* 0.333251953125 */
    CHECK(ltf_float16_to_float(0x3555) == 0.333251953125f);
    CHECK(ltf_float16_from_double(65504) == 0x7bff);               /* the largest finite */
    CHECK(ltf_float16_from_double(65519.99) == 0x7bff);
    CHECK(ltf_float16_from_double(65520) == 0x7c00);               /* halfway to 2^16: even, infinity */
    CHECK(ltf_float16_from_double(-1e6) == 0xfc00);
    CHECK(ltf_float16_from_double(ldexp(1, -24)) == 0x0001);       /* the smallest subnormal */
    CHECK(ltf_float16_to_float(0x0001) == ldexpf(1, -24));
    CHECK(ltf_float16_from_double(ldexp(1, -25)) == 0x0000);       /* halfway to 0: even */
    CHECK(ltf_float16_from_double(ldexp(3, -26)) == 0x0001);       /* above halfway */
    CHECK(ltf_float16_from_double(ldexp(3, -25)) == 0x0002);       /* 1.5 ulp: tie to even 2 */
    CHECK(ltf_float16_from_double(-0.0) == 0x8000);
    CHECK(ltf_float16_from_double(2049) == 0x6800);                /* 2048: ties to even */
    CHECK(ltf_float16_from_double(2051) == 0x6802);                /* 2052 */
    CHECK((ltf_float16_from_double(NAN) & 0x7c00) == 0x7c00 && (ltf_float16_from_double(NAN) & 0x3ff) != 0);
    CHECK(ltf_float16_to_float(0x7e00) != ltf_float16_to_float(0x7e00));
    CHECK(ltf_bfloat16_from_double(1.0 / 3) == 0x3eab);           /* 0.333984375 */
    CHECK(ltf_bfloat16_to_float(0x3eab) == 0.333984375f);
    CHECK(ltf_bfloat16_from_double(3.4e38) == 0x7f80);            /* beyond 3.3895e38: infinity */
    CHECK(ltf_bfloat16_from_double(1e-40) != 0);                  /* bfloat16 keeps float32's subnormals */
    CHECK(ltf_bfloat16_from_double(257) == 0x4380);               /* 256: ties to even */
    /* the device text against the engine's: every pattern back and forth */
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float a = ltf_float16_to_float((uint16_t)h), b = ltf_cu::f16_float((uint16_t)h);
        float c = ltf_bfloat16_to_float((uint16_t)h), d = ltf_cu::bf16_float((uint16_t)h);
        if (memcmp(&a, &b, 4) != 0 || memcmp(&c, &d, 4) != 0) bad++;
        if (a == a && ltf_float16_from_double(a) != h) bad++;         /* exact round trip */
        if (c == c && ltf_bfloat16_from_double(c) != h) bad++;
        if (ltf_cu::half_narrow(a, 5, 10) != ltf_float16_from_double(a)) bad++;
        if (ltf_cu::half_narrow(c, 8, 7) != ltf_bfloat16_from_double(c)) bad++;
    }
    CHECK(bad == 0);
    /* random doubles, and the midpoints between neighbouring patterns */
    for (int i = 0; i < 200000; i++) {
        double x = ldexp(2 * uni() - 1, (int)(rnd() % 80) - 40);
        if (ltf_cu::half_narrow(x, 5, 10) != ltf_float16_from_double(x)) bad++;
        if (ltf_cu::half_narrow(x, 8, 7) != ltf_bfloat16_from_double(x)) bad++;
        /* nearest: no pattern is closer than the chosen one */
        uint16_t h = ltf_float16_from_double(x);
        double v = ltf_float16_to_float(h), err = fabs(v - x);
        bool up = fabs((double)ltf_float16_to_float((uint16_t)(h + 1)) - x) < err;
        bool down = (h & 0x7fff) != 0 && fabs((double)ltf_float16_to_float((uint16_t)(h - 1)) - x) < err;
        if (fabs(x) < 65504 && (up || down)) bad++;
    }
    for (uint32_t h = 0; h < 0x7bff; h++) {   /* midpoints of positive float16 neighbours: to the even one */
        double m = ((double)ltf_float16_to_float((uint16_t)h) + ltf_float16_to_float((uint16_t)(h + 1))) / 2;
        if (ltf_float16_from_double(m) != ((h & 1) ? h + 1 : h)) bad++;
        if (ltf_cu::half_narrow(m, 5, 10) != ((h & 1) ? h + 1 : h)) bad++;
    }
    CHECK(bad == 0);
}
/* }==== */

/* {==== Elementwise */
static bool exact_unary(ltf_op_id op) {
    return op == LTF_OP_NEG || op == LTF_OP_ABS || op == LTF_OP_SIGN || op == LTF_OP_SQRT || op == LTF_OP_SQUARE ||
           op == LTF_OP_RECIPROCAL || op == LTF_OP_RELU || op == LTF_OP_FLOOR || op == LTF_OP_CEIL ||
           op == LTF_OP_ROUND || op == LTF_OP_IS_NAN || op == LTF_OP_IS_FINITE || op == LTF_OP_IS_INF;
}

static void test_unary() {
    for (ltf_op_id op = LTF_OP_NEG; op <= LTF_OP_IS_INF; op++) {
        /* the others (check_numerics) run on float32 copies: test_takes_half */
        if (!ltf_gpu_host_kernel(op) || !ltf_gpu_host_takes_half(op) || op == LTF_OP_CAST) continue;
        for (ltf_dtype dt : HALVES)
            for (int gen : { GEN_PLAIN, GEN_SPECIAL, GEN_POS }) {
                char what[96];
                snprintf(what, sizeof what, "%s %s gen %d", ltf_op_name(op), ltf_dtype_name(dt), gen);
                ltf_attrs a = attrs();
                /* logical_not, invert: refused by both (TypeError) */
                run_both(what, op, { rand_tensor(dt, { 3, 5, 7 }, gen) }, &a, exact_unary(op) ? 0 : step_of(dt), 1e-7);
            }
    }
}

static bool exact_binary(ltf_op_id op) {
    return op == LTF_OP_ADD || op == LTF_OP_SUB || op == LTF_OP_MUL || op == LTF_OP_DIV || op == LTF_OP_MAXIMUM ||
           op == LTF_OP_MINIMUM || op == LTF_OP_SQUARED_DIFFERENCE || (op >= LTF_OP_EQUAL && op <= LTF_OP_GREATER_EQUAL) ||
           op == LTF_OP_RELU_GRAD || op == LTF_OP_DIVIDE_NO_NAN || op == LTF_OP_FLOORDIV || op == LTF_OP_FLOORMOD;
}

static void test_binary() {
    std::vector<std::vector<int64_t>> shapes[] = {
        { { 4, 6 }, { 4, 6 } }, { { 4, 1, 6 }, { 5, 1 } }, { { 7 }, {} }, { {}, {} }, { { 0, 3 }, { 3 } },
    };
    for (ltf_op_id op = LTF_OP_ADD; op <= LTF_OP_ZETA; op++)
        for (ltf_dtype dt : HALVES)
            for (auto &sh : shapes)
                for (int gen : { GEN_PLAIN, GEN_SPECIAL }) {
                    int genb = gen;
                    if ((op == LTF_OP_POLYGAMMA || op == LTF_OP_ZETA) && gen == GEN_PLAIN) genb = GEN_POS;
                    char what[96];
                    snprintf(what, sizeof what, "%s %s (%zu-d, %zu-d) gen %d", ltf_op_name(op), ltf_dtype_name(dt),
                             sh[0].size(), sh[1].size(), gen);
                    ltf_attrs a = attrs();
                    /* logical and bitwise ops and shifts: refused by both (TypeError) */
                    run_both(what, op, { rand_tensor(dt, sh[0], gen), rand_tensor(dt, sh[1], genb) }, &a,
                             exact_binary(op) ? 0 : step_of(dt), 1e-7);
                }
    /* the CPU's refusal names the op and the dtypes */
    ltf_tensor *x = rand_tensor(LTF_DTYPE_FLOAT16, { 3 });
    ltf_tensor *in[2] = { x, x }, *o = NULL;
    int n = 0;
    CHECK(ltf_op_run(ctx, LTF_OP_BITWISE_AND, in, 2, NULL, &o, 1, &n) == LTF_ERR_TYPE);
    CHECK_STR(ltf_ctx_error(ctx), "bitwise_and: 'x' has dtype float16, expected one of: int32, int64, uint8");
    ltf_tensor *y = rand_tensor(LTF_DTYPE_BFLOAT16, { 3 });
    in[1] = y;
    CHECK(ltf_op_run(ctx, LTF_OP_ADD, in, 2, NULL, &o, 1, &n) == LTF_ERR_TYPE);
    CHECK(strstr(ltf_ctx_error(ctx), "x: float16 and y: bfloat16") != NULL);
    ltf_tensor_release(x);
    ltf_tensor_release(y);
}

static const ltf_dtype EVERY[] = { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64, LTF_DTYPE_INT32, LTF_DTYPE_INT64,
                                   LTF_DTYPE_UINT8, LTF_DTYPE_BOOL, LTF_DTYPE_FLOAT16, LTF_DTYPE_BFLOAT16 };

static void test_cast_select_fill() {
    for (ltf_dtype from : EVERY)
        for (ltf_dtype to : EVERY) {
            if (!ltf_dtype_is_half(from) && !ltf_dtype_is_half(to)) continue;
            for (int gen : { GEN_PLAIN, GEN_SPECIAL }) {
                ltf_attrs a = attrs();
                a.i[0] = to;
                char what[96];
                snprintf(what, sizeof what, "cast %s -> %s gen %d", ltf_dtype_name(from), ltf_dtype_name(to), gen);
                ltf_tensor *x = rand_tensor(from, { 6, 7 }, gen);
                if (from == LTF_DTYPE_FLOAT64 || from == LTF_DTYPE_FLOAT32 || ltf_dtype_is_half(from)) {
                    /* beyond the range of the target (saturation, infinity), subnormals, ties */
                    double big[] = { 1e10, -1e10, 300.5, -5.0, 65520.0, 3e38, ldexp(1, -24), ldexp(3, -26), 2049, 1.0 / 3 };
                    for (int i = 0; i < 10; i++) {
                        void *p = ltf_tensor_data(x);
                        if (from == LTF_DTYPE_FLOAT32) ((float *)p)[i] = (float)big[i];
                        else if (from == LTF_DTYPE_FLOAT64) ((double *)p)[i] = big[i];
                        else if (from == LTF_DTYPE_FLOAT16) ((uint16_t *)p)[i] = ltf_float16_from_double(big[i]);
                        else ((uint16_t *)p)[i] = ltf_bfloat16_from_double(big[i]);
                    }
                }
                if (from == LTF_DTYPE_INT64) ((int64_t *)ltf_tensor_data(x))[0] = ((int64_t)1 << 60) + ((int64_t)1 << 52) + 1;
                run_both(what, LTF_OP_CAST, { x }, &a, 0);
            }
        }
    for (ltf_dtype dt : HALVES) {
        ltf_attrs a = attrs();
        char what[64];
        snprintf(what, sizeof what, "where %s", ltf_dtype_name(dt));
        run_both(what, LTF_OP_SELECT, { rand_tensor(LTF_DTYPE_BOOL, { 4, 1, 6 }), rand_tensor(dt, { 5, 6 }), rand_tensor(dt, { 4, 5, 1 }) }, &a, 0);
        snprintf(what, sizeof what, "zeros_like/ones_like/identity %s", ltf_dtype_name(dt));
        run_both(what, LTF_OP_ZEROS_LIKE, { rand_tensor(dt, { 3, 4 }) }, &a, 0);
        run_both(what, LTF_OP_ONES_LIKE, { rand_tensor(dt, { 3, 4 }) }, &a, 0);
        run_both(what, LTF_OP_ONES_LIKE, { rand_tensor(dt, {}) }, &a, 0);
        run_both(what, LTF_OP_IDENTITY, { rand_tensor(dt, { 9 }) }, &a, 0);
        for (double v : { 0.1, -2.5, 70000.0, 1e-8 }) {
            ltf_attrs f = attrs();
            f.i[0] = dt;
            f.nints = 2;
            f.ints[0] = 3;
            f.ints[1] = 2;
            f.f[0] = v;
            snprintf(what, sizeof what, "fill %s %g", ltf_dtype_name(dt), v);
            run_both(what, LTF_OP_FILL, {}, &f, 0);
        }
        ltf_attrs e = attrs();
        e.i[0] = dt;
        e.i[1] = 3;
        e.i[2] = 4;
        snprintf(what, sizeof what, "eye %s", ltf_dtype_name(dt));
        run_both(what, LTF_OP_EYE, {}, &e, 0);
    }
}
/* }==== */

/* {==== Reductions, nn, matmul */
static double abs_sum(const ltf_tensor *x) {
    double s = 0;
    int64_t n = ltf_tensor_num_elements(x);
    const uint16_t *p = (const uint16_t *)ltf_tensor_data(x);
    for (int64_t i = 0; i < n; i++)
        s += fabs(ltf_tensor_dtype(x) == LTF_DTYPE_FLOAT16 ? ltf_float16_to_float(p[i]) : ltf_bfloat16_to_float(p[i]));
    return s;
}

static void test_reduce() {
    struct Ax { std::vector<int64_t> dims; std::vector<int64_t> axes; bool all; };
    const Ax cases[] = {
        { { 4, 5, 6 }, { 1 }, false }, { { 4, 5, 6 }, { 0, 2 }, false }, { { 4, 5, 6 }, {}, true },
        { { 3000 }, { 0 }, false }, { { 64, 300 }, { 1 }, false }, { { 0, 4 }, { 0 }, false }, { {}, {}, true },
    };
    for (ltf_dtype dt : HALVES)
        for (const Ax &c : cases)
            for (ltf_op_id op : { LTF_OP_REDUCE_SUM, LTF_OP_REDUCE_MEAN, LTF_OP_REDUCE_MAX, LTF_OP_REDUCE_MIN,
                                  LTF_OP_REDUCE_PROD }) {
                ltf_attrs a = attrs();
                if (!c.all) {
                    a.nints = (int)c.axes.size();
                    for (size_t k = 0; k < c.axes.size(); k++) a.ints[k] = c.axes[k];
                }
                char what[96];
                snprintf(what, sizeof what, "%s %s rank %zu", ltf_op_name(op), ltf_dtype_name(dt), c.dims.size());
                ltf_tensor *x = rand_tensor(dt, c.dims, op == LTF_OP_REDUCE_PROD ? GEN_UNIT : GEN_PLAIN);
                run_both(what, op, { x }, &a, step_of(dt), 1e-5 * abs_sum(x));
            }
    for (ltf_dtype dt : HALVES)
        for (ltf_op_id op : { LTF_OP_ARGMAX, LTF_OP_ARGMIN }) {
            ltf_attrs a = attrs();
            a.i[1] = 1;
            a.i[2] = LTF_DTYPE_INT32;
            char what[96];
            snprintf(what, sizeof what, "%s %s", ltf_op_name(op), ltf_dtype_name(dt));
            run_both(what, op, { rand_tensor(dt, { 4, 9, 3 }, GEN_SPECIAL) }, &a);
            ltf_tensor *x = rand_tensor(dt, { 6, 50 });   /* ties: the first wins on both */
            run_both(what, op, { x }, &a);
        }
    for (ltf_dtype dt : HALVES) {
        ltf_attrs a = attrs();
        ltf_tensor *g = rand_tensor(dt, { 4, 5, 6 });
        run_both("sum_to", LTF_OP_SUM_TO, { g, rand_tensor(dt, { 5, 1 }) }, &a, step_of(dt), 1e-5 * abs_sum(g));
    }
}

static void test_nn() {
    for (ltf_dtype dt : HALVES) {
        for (ltf_op_id op : { LTF_OP_SOFTMAX, LTF_OP_LOG_SOFTMAX })
            for (int64_t axis : { -1, 0 }) {
                ltf_attrs a = attrs();
                a.i[0] = axis;
                char what[96];
                snprintf(what, sizeof what, "%s %s axis %lld", ltf_op_name(op), ltf_dtype_name(dt), (long long)axis);
                run_both(what, op, { rand_tensor(dt, { 5, 7 }) }, &a, step_of(dt), 1e-4);
            }
        ltf_attrs a = attrs();
        ltf_tensor *lab = zeros(LTF_DTYPE_INT32, { 6 });
        for (int i = 0; i < 6; i++) ((int32_t *)ltf_tensor_data(lab))[i] = 1 + (int32_t)(rnd() % 5);
        run_both("sparse xent", LTF_OP_SPARSE_SOFTMAX_XENT, { lab, rand_tensor(dt, { 6, 5 }) }, &a, step_of(dt), 1e-3);
        ltf_tensor *bad = zeros(LTF_DTYPE_INT64, { 2 });
        ((int64_t *)ltf_tensor_data(bad))[0] = 1;
        ((int64_t *)ltf_tensor_data(bad))[1] = 6;   /* out of 1..5: the CPU's error */
        run_both("sparse xent label out of range", LTF_OP_SPARSE_SOFTMAX_XENT, { bad, rand_tensor(dt, { 2, 5 }) }, &a);
        a.i[0] = -1;
        run_both("xent", LTF_OP_SOFTMAX_XENT, { rand_tensor(dt, { 4, 6 }, GEN_POS), rand_tensor(dt, { 4, 6 }) }, &a,
                 step_of(dt), 1e-2);
    }
}

static void test_matmul() {
    struct Mm { std::vector<int64_t> a, b; int ta, tb; };
    const Mm cases[] = {
        { { 3, 4 }, { 4, 5 }, 0, 0 }, { { 4, 3 }, { 4, 5 }, 1, 0 }, { { 3, 4 }, { 5, 4 }, 0, 1 },
        { { 2, 3, 4 }, { 4, 6 }, 0, 0 }, { { 2, 1, 3, 40 }, { 3, 40, 2 }, 0, 0 }, { { 3, 0 }, { 0, 2 }, 0, 0 },
    };
    for (ltf_dtype dt : HALVES)
        for (const Mm &c : cases) {
            ltf_attrs a = attrs();
            a.i[0] = c.ta;
            a.i[1] = c.tb;
            char what[96];
            snprintf(what, sizeof what, "matmul %s %zu-d", ltf_dtype_name(dt), c.a.size());
            /* |x| <= 3: each sum is at most k * 9 in magnitude */
            int64_t k = c.ta ? c.a[c.a.size() - 2] : c.a.back();
            run_both(what, LTF_OP_MATMUL, { rand_tensor(dt, c.a), rand_tensor(dt, c.b) }, &a, step_of(dt),
                     1e-5 * 9 * (double)k);
        }
}
/* }==== */

/* {==== Moves: 2-byte elements, exact */
static void test_movement() {
    for (ltf_dtype dt : HALVES) {
        char what[96];
        /* 'what' names the op and the dtype */
#define W(op) (snprintf(what, sizeof what, "%s %s", ltf_op_name(op), ltf_dtype_name(dt)), what)
        ltf_attrs a = attrs();
        a.nints = 3;
        a.ints[0] = 2; a.ints[1] = 0; a.ints[2] = 1;
        run_both(W(LTF_OP_TRANSPOSE), LTF_OP_TRANSPOSE, { rand_tensor(dt, { 3, 40, 50 }) }, &a, 0);
        a = attrs();
        a.nints = 2;
        a.ints[0] = 1; a.ints[1] = 2;
        a.nints2 = 2;
        a.ints2[0] = 2; a.ints2[1] = -1;
        run_both(W(LTF_OP_SLICE), LTF_OP_SLICE, { rand_tensor(dt, { 4, 5 }) }, &a, 0);
        a = attrs();
        a.i[0] = 1;
        run_both(W(LTF_OP_CONCAT), LTF_OP_CONCAT, { rand_tensor(dt, { 2, 3 }), rand_tensor(dt, { 2, 4 }) }, &a, 0);
        run_both(W(LTF_OP_STACK), LTF_OP_STACK, { rand_tensor(dt, { 2, 3 }), rand_tensor(dt, { 2, 3 }) }, &a, 0);
        ltf_tensor *idx = zeros(LTF_DTYPE_INT64, { 4 });
        for (int i = 0; i < 4; i++) ((int64_t *)ltf_tensor_data(idx))[i] = 1 + (int64_t)(rnd() % 5);
        a = attrs();
        a.i[0] = 1;
        run_both(W(LTF_OP_GATHER), LTF_OP_GATHER, { rand_tensor(dt, { 3, 5 }), idx }, &a, 0);
        a = attrs();
        a.nints = 1;
        a.ints[0] = 0;
        run_both(W(LTF_OP_REVERSE), LTF_OP_REVERSE, { rand_tensor(dt, { 7, 3 }) }, &a, 0);
        a = attrs();
        a.nints = 3;
        a.ints[0] = 2; a.ints[1] = 4; a.ints[2] = 3;
        run_both(W(LTF_OP_BROADCAST_TO), LTF_OP_BROADCAST_TO, { rand_tensor(dt, { 4, 1 }) }, &a, 0);
        a = attrs();
        a.nints = 2;
        a.ints[0] = 3; a.ints[1] = 2;
        run_both(W(LTF_OP_TILE), LTF_OP_TILE, { rand_tensor(dt, { 2, 3 }) }, &a, 0);
        a = attrs();
        a.nints = 4;
        a.ints[0] = 1; a.ints[1] = 2; a.ints[2] = 0; a.ints[3] = 3;
        run_both(W(LTF_OP_PAD), LTF_OP_PAD, { rand_tensor(dt, { 2, 3 }) }, &a, 0);
        run_both(W(LTF_OP_PAD), LTF_OP_PAD, { rand_tensor(dt, { 2, 3 }), rand_tensor(dt, {}) }, &a, 0);
        a.i[0] = LTF_PAD_REFLECT;
        run_both(W(LTF_OP_PAD), LTF_OP_PAD, { rand_tensor(dt, { 4, 5 }) }, &a, 0);
        ltf_tensor *oh = zeros(LTF_DTYPE_INT32, { 5 });
        for (int i = 0; i < 5; i++) ((int32_t *)ltf_tensor_data(oh))[i] = (int32_t)(rnd() % 5);
        a = attrs();
        a.i[0] = 4;
        a.i[1] = -1;
        run_both(W(LTF_OP_ONE_HOT), LTF_OP_ONE_HOT, { oh, rand_tensor(dt, {}), rand_tensor(dt, {}) }, &a, 0);
        a = attrs();
        a.nints = 2;
        a.ints[0] = 0; a.ints[1] = 5;
        a.nints2 = 1;
        a.ints2[0] = 2;
        run_both(W(LTF_OP_STRIDED_SLICE), LTF_OP_STRIDED_SLICE, { rand_tensor(dt, { 7 }) }, &a, 0);
        run_both(W(LTF_OP_STRIDED_SLICE_GRAD), LTF_OP_STRIDED_SLICE_GRAD, { rand_tensor(dt, { 3 }), rand_tensor(dt, { 7 }) }, &a, 0);
        a = attrs();
        a.nints = 2;
        a.ints[0] = 3; a.ints[1] = 0;
        run_both(W(LTF_OP_RESHAPE), LTF_OP_RESHAPE, { rand_tensor(dt, { 0, 3 }) }, &a, 0);
        a.ints[0] = 2; a.ints[1] = 3;
        run_both(W(LTF_OP_RESHAPE), LTF_OP_RESHAPE, { rand_tensor(dt, { 3, 2 }) }, &a, 0);
#undef W
    }
}
/* }==== */

/* {==== Optimizer updates on float16/bfloat16 variables: the CPU computes
** on float32 copies of the variable and its slots and rounds them back;
** the device body in float per element: the same values */
static ltf_tensor *new_var(ltf_tensor *init) {
    ltf_tensor *h = ltf_variable_new(ctx, init, "v", 1, -2, NULL);
    ltf_tensor_release(init);
    return h;
}

static void test_optim() {
    struct Case { ltf_op_id op; int nslots; int i0, i1; double f[4]; const char *name; };
    const Case cases[] = {
        { LTF_OP_APPLY_SGD, 0, 0, 0, { 0, 0, 0, 0 }, "sgd" },
        { LTF_OP_APPLY_MOMENTUM, 1, 1, 0, { 0.5, 0, 0, 0 }, "nesterov" },
        { LTF_OP_APPLY_ADAM, 3, 1, 0, { 0.9, 0.999, 1e-7, 0.01 }, "adamw amsgrad" },
        { LTF_OP_APPLY_RMSPROP, 3, 1, 1, { 0.9, 0.5, 1e-7, 0 }, "rmsprop centered momentum" },
        { LTF_OP_APPLY_ADAGRAD, 1, 0, 0, { 1e-7, 0, 0, 0 }, "adagrad" },
    };
    for (const Case &c : cases)
        for (ltf_dtype dt : HALVES) {
            char what[96];
            snprintf(what, sizeof what, "%s %s", c.name, ltf_dtype_name(dt));
            std::vector<ltf_tensor *> hc, hd;
            for (int k = 0; k <= c.nslots; k++) {
                ltf_tensor *init = rand_tensor(dt, { 5, 7 }, k == 0 ? GEN_PLAIN : GEN_POS);
                hc.push_back(new_var(ltf_tensor_clone(ctx, init)));
                hd.push_back(new_var(init));
            }
            ltf_attrs a = attrs();
            a.i[0] = c.i0;
            a.i[1] = c.i1;
            for (int k = 0; k < 4; k++) a.f[k] = c.f[k];
            const void *k = ltf_gpu_host_kernel(c.op);
            for (int step = 1; step <= 3; step++) {
                CHECK(optim_step_both(what, c.op, k, &a, hc, hd, rand_tensor(dt, { 5, 7 }), step));
                for (size_t v = 0; v < hc.size(); v++) {
                    ltf_tensor *want = ltf_variable_peek(hc[v]), *got = ltf_variable_peek(hd[v]);
                    CHECK(ltf_tensor_dtype(want) == dt);   /* the CPU's variables are rounded back */
                    check_count++;
                    if (!compare(what, want, got, 0, 0)) check_failures++;
                    ltf_tensor_release(want);
                    ltf_tensor_release(got);
                }
            }
            for (ltf_tensor *h : hc) ltf_tensor_release(h);
            for (ltf_tensor *h : hd) ltf_tensor_release(h);
        }
}
/* }==== */

/* {==== Which kernels take them as they are (the others run on float32 copies) */
static void test_takes_half() {
    for (ltf_op_id op : { LTF_OP_ADD, LTF_OP_EXP, LTF_OP_CAST, LTF_OP_SELECT, LTF_OP_FILL, LTF_OP_REDUCE_SUM,
                          LTF_OP_ARGMAX, LTF_OP_SOFTMAX, LTF_OP_SPARSE_SOFTMAX_XENT, LTF_OP_MATMUL, LTF_OP_TRANSPOSE,
                          LTF_OP_GATHER, LTF_OP_CONCAT, LTF_OP_PAD, LTF_OP_APPLY_ADAM, LTF_OP_RESHAPE })
        CHECK(ltf_gpu_host_takes_half(op) == 1);
    for (ltf_op_id op : { LTF_OP_CUMSUM, LTF_OP_CONV2D, LTF_OP_MAX_POOL2D, LTF_OP_AVG_POOL2D_GRAD, LTF_OP_GELU,
                          LTF_OP_UNSORTED_SEGMENT_SUM, LTF_OP_RANGE, LTF_OP_RANDOM_UNIFORM })
        CHECK(ltf_gpu_host_takes_half(op) == 0);
    CHECK(ltf_gpu_host_takes_half(-1) == 0);
    /* given half tensors anyway, those kernels refuse them (TypeError), never misread the bytes */
    for (ltf_op_id op : { LTF_OP_CUMSUM, LTF_OP_MAX_POOL2D }) {
        ltf_tensor *x = rand_tensor(LTF_DTYPE_FLOAT16, { 1, 4, 4, 1 }), *o = zeros(LTF_DTYPE_FLOAT16, { 1, 2, 2, 1 });
        ltf_attrs a = attrs();
        a.i[1] = 1;
        a.nints = 4;
        for (int d = 0; d < 4; d++) a.ints[d] = d == 1 || d == 2 ? 2 : 1;
        ltf_status s = ((ltf_kernel_fn)ltf_gpu_host_kernel(op))(ctx, ltf_op_get(op), &x, 1, &a, &o, 1);
        CHECK(s == LTF_ERR_TYPE && strstr(ltf_ctx_error(ctx), "float16") != NULL);
        ltf_tensor_release(x);
        ltf_tensor_release(o);
    }
}
/* }==== */

int main(void) {
    ctx = ltf_ctx_new();
    test_conversions();
    test_unary();
    test_binary();
    test_cast_select_fill();
    test_reduce();
    test_nn();
    test_matmul();
    test_movement();
    test_optim();
    test_takes_half();
    ltf_ctx_release(ctx);
    CHECK_DONE();
}
