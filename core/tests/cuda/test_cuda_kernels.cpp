/*
** test_cuda_kernels.cpp: the CUDA kernels' bodies (core/cuda/kernels/, the .cuh files),
** built for the host (libltf_gpu_host.a), run over every index on host
** memory and compared with the CPU backend's kernels on the same random
** inputs: every covered op, every dtype it takes, broadcasting, reduction
** axes, and the errors the bodies raise. Needs no GPU.
**
** Tolerances: integers and bool exact; float64 rtol 1e-12; float32 rtol
** 4e-6 (the CPU's float32 exp/tanh/sigmoid are its own polynomials, about
** 1 ulp from libm's); reductions, softmax and matmul sum in another order:
** atol = 1e-5 (float32) / 1e-12 (float64) times the sum of the absolute
** values reduced into each result.
*/
#include "kernel_check.h"

static void test_unary() {
    const ltf_op_id first = LTF_OP_NEG;
    for (ltf_op_id op = first; op <= LTF_OP_IS_INF; op++) {
        const void *k = ltf_gpu_host_kernel(op);
        if (op == LTF_OP_CAST || op == LTF_OP_CHECK_NUMERICS) { CHECK(k != NULL || op == LTF_OP_CHECK_NUMERICS); continue; }
        for (ltf_dtype dt : ALL) {
            char what[96];
            for (int gen : { GEN_PLAIN, GEN_SPECIAL, GEN_POS }) {
                if (!is_float(dt) && gen != GEN_PLAIN) continue;
                snprintf(what, sizeof what, "%s %s gen %d", ltf_op_name(op), ltf_dtype_name(dt), gen);
                ltf_attrs a = attrs();
                if (op == LTF_OP_CAST) continue;
                /* special functions: same double code; elementary ones: libm vs the CPU's polynomials */
                double rtol = dt == LTF_DTYPE_FLOAT32 ? 4e-6 : 1e-12;
                if (op == LTF_OP_DIGAMMA || op == LTF_OP_LGAMMA) rtol = dt == LTF_DTYPE_FLOAT32 ? 1e-6 : 1e-10;
                run_both(what, op, { rand_tensor(dt, { 3, 5, 7 }, gen) }, &a, rtol, dt == LTF_DTYPE_FLOAT32 ? 1e-30 : 0);
            }
        }
    }
}

static void test_binary() {
    std::vector<std::vector<int64_t>> shapes[] = {
        { { 4, 6 }, { 4, 6 } }, { { 4, 1, 6 }, { 5, 1 } }, { { 1 }, { 7 } }, { { 7 }, {} }, { { 2, 3, 1, 4 }, { 3, 5, 4 } },
    };
    for (ltf_op_id op = LTF_OP_ADD; op <= LTF_OP_ZETA; op++)
        for (ltf_dtype dt : ALL)
            for (auto &sh : shapes)
                for (int gen : { GEN_PLAIN, GEN_SPECIAL }) {
                    if (!is_float(dt) && gen == GEN_SPECIAL) continue;
                    int genb = gen;
                    bool divs = op == LTF_OP_FLOORDIV || op == LTF_OP_FLOORMOD || op == LTF_OP_TRUNCATEDIV ||
                                op == LTF_OP_TRUNCATEMOD;
                    if (!is_float(dt) && divs) genb = GEN_NONZERO;
                    if (!is_float(dt) && (op == LTF_OP_LEFT_SHIFT || op == LTF_OP_RIGHT_SHIFT || op == LTF_OP_POW)) genb = GEN_SMALL;
                    if (is_float(dt) && (op == LTF_OP_POLYGAMMA || op == LTF_OP_ZETA) && gen == GEN_PLAIN) genb = GEN_POS;
                    char what[96];
                    snprintf(what, sizeof what, "%s %s (%zu-d, %zu-d) gen %d", ltf_op_name(op), ltf_dtype_name(dt),
                             sh[0].size(), sh[1].size(), gen);
                    ltf_attrs a = attrs();
                    double rtol = dt == LTF_DTYPE_FLOAT32 ? 4e-6 : 1e-12;
                    if (op == LTF_OP_POLYGAMMA || op == LTF_OP_ZETA) rtol = dt == LTF_DTYPE_FLOAT32 ? 1e-6 : 1e-10;
                    run_both(what, op, { rand_tensor(dt, sh[0], gen == GEN_SPECIAL ? gen : GEN_PLAIN), rand_tensor(dt, sh[1], genb) }, &a, rtol);
                }
    /* errors the bodies raise: the CPU's kind and message */
    for (ltf_dtype dt : { LTF_DTYPE_INT32, LTF_DTYPE_INT64, LTF_DTYPE_UINT8 }) {
        ltf_attrs a = attrs();
        run_both("floordiv by zero", LTF_OP_FLOORDIV, { rand_tensor(dt, { 5 }), zeros(dt, { 5 }) }, &a);
        ltf_tensor *x = rand_tensor(dt, { 3 }), *y = zeros(dt, { 3 });
        const void *k = ltf_gpu_host_kernel(LTF_OP_TRUNCATEMOD);
        ltf_tensor *o = zeros(dt, { 3 });
        ltf_tensor *in[2] = { x, y };
        ltf_status s = ((ltf_kernel_fn)k)(ctx, ltf_op_get(LTF_OP_TRUNCATEMOD), in, 2, &a, &o, 1);
        CHECK(s == LTF_ERR_INVALID_ARGUMENT);
        CHECK_STR(ltf_ctx_error(ctx), "truncatemod: integer division by zero");
        ltf_tensor_release(x); ltf_tensor_release(y); ltf_tensor_release(o);
    }
    {
        ltf_attrs a = attrs();
        ltf_tensor *y = zeros(LTF_DTYPE_INT32, { 4 });
        ((int32_t *)ltf_tensor_data(y))[2] = -1;
        run_both("pow negative", LTF_OP_POW, { rand_tensor(LTF_DTYPE_INT32, { 4 }), y }, &a);
    }
    /* zeta and polygamma at the poles q = 0, -1, ...: inf for an even integer x, else NaN (Eigen's rule);
    ** q far below 0: NaN at once */
    for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 }) {
        ltf_attrs a = attrs();
        const double xs[8] = { 2, 3, 4, 2.5, 5, 1, 0.5, 2 }, qs[8] = { 0, 0, -2, -1, -3, -1, 0, -3e6 - 0.5 };
        const double ns[8] = { 1, 2, 3, 4, 0, 1, 2, 3 }, ps[8] = { 0, -1, -4, 0, -2, 0.5, -0.5, 1 };
        ltf_tensor *x = zeros(dt, { 8 }), *q = zeros(dt, { 8 }), *n = zeros(dt, { 8 }), *p = zeros(dt, { 8 });
        for (int k = 0; k < 8; k++) {
            if (dt == LTF_DTYPE_FLOAT32) {
                ((float *)ltf_tensor_data(x))[k] = (float)xs[k], ((float *)ltf_tensor_data(q))[k] = (float)qs[k];
                ((float *)ltf_tensor_data(n))[k] = (float)ns[k], ((float *)ltf_tensor_data(p))[k] = (float)ps[k];
            } else {
                ((double *)ltf_tensor_data(x))[k] = xs[k], ((double *)ltf_tensor_data(q))[k] = qs[k];
                ((double *)ltf_tensor_data(n))[k] = ns[k], ((double *)ltf_tensor_data(p))[k] = ps[k];
            }
        }
        run_both("zeta at the poles", LTF_OP_ZETA, { x, q }, &a, dt == LTF_DTYPE_FLOAT32 ? 1e-6 : 1e-10);
        run_both("polygamma at the poles", LTF_OP_POLYGAMMA, { n, p }, &a, dt == LTF_DTYPE_FLOAT32 ? 1e-6 : 1e-10);
    }
}

static void test_cast_select_fill() {
    for (ltf_dtype from : ALL)
        for (ltf_dtype to : ALL)
            for (int gen : { GEN_PLAIN, GEN_SPECIAL }) {
                if (gen == GEN_SPECIAL && !is_float(from)) continue;
                ltf_attrs a = attrs();
                a.i[0] = to;
                char what[96];
                snprintf(what, sizeof what, "cast %s -> %s gen %d", ltf_dtype_name(from), ltf_dtype_name(to), gen);
                ltf_tensor *x = rand_tensor(from, { 6, 7 }, gen);
                if (is_float(from) && gen == GEN_PLAIN) {   /* out of range for the integers: saturation */
                    double big[] = { 1e10, -1e10, 300.0, -5.0, 2147483648.0, 9.3e18 };
                    for (int i = 0; i < 6; i++) {
                        if (from == LTF_DTYPE_FLOAT32) ((float *)ltf_tensor_data(x))[i] = (float)big[i];
                        else ((double *)ltf_tensor_data(x))[i] = big[i];
                    }
                }
                run_both(what, LTF_OP_CAST, { x }, &a);
            }
    for (ltf_dtype dt : ALL) {
        ltf_attrs a = attrs();
        char what[64];
        snprintf(what, sizeof what, "where %s", ltf_dtype_name(dt));
        run_both(what, LTF_OP_SELECT, { rand_tensor(LTF_DTYPE_BOOL, { 4, 1, 6 }), rand_tensor(dt, { 5, 6 }), rand_tensor(dt, { 4, 5, 1 }) }, &a);
        run_both(what, LTF_OP_SELECT, { rand_tensor(LTF_DTYPE_BOOL, { 30 }), rand_tensor(dt, { 30 }), rand_tensor(dt, { 30 }) }, &a);
        snprintf(what, sizeof what, "zeros_like/ones_like %s", ltf_dtype_name(dt));
        run_both(what, LTF_OP_ZEROS_LIKE, { rand_tensor(dt, { 3, 4 }) }, &a);
        run_both(what, LTF_OP_ONES_LIKE, { rand_tensor(dt, { 3, 4 }) }, &a);
        snprintf(what, sizeof what, "identity %s", ltf_dtype_name(dt));
        run_both(what, LTF_OP_IDENTITY, { rand_tensor(dt, { 9 }) }, &a);
    }
}

/* sum of |x| reduced into each result, bounded by the whole tensor's */
static double abs_sum(const ltf_tensor *x) {
    double s = 0;
    int64_t n = ltf_tensor_num_elements(x);
    for (int64_t i = 0; i < n; i++)
        s += ltf_tensor_dtype(x) == LTF_DTYPE_FLOAT32 ? fabs((double)((float *)ltf_tensor_data(x))[i])
                                                      : fabs(((double *)ltf_tensor_data(x))[i]);
    return s;
}

static void test_reduce() {
    struct { std::vector<int64_t> dims; std::vector<int64_t> axes; } cases[] = {
        { { 4, 5, 6 }, {} }, { { 4, 5, 6 }, { 0 } }, { { 4, 5, 6 }, { 1 } }, { { 4, 5, 6 }, { 2 } },
        { { 4, 5, 6 }, { 0, 2 } }, { { 4, 5, 6 }, { -1, -2 } }, { { 3, 5000 }, { 1 } }, { { 5000, 3 }, { 0 } },
        { { 70000 }, { 0 } }, { { 2, 1, 300, 7 }, { 0, 2 } }, { { 3, 0, 4 }, { 1 } }, { { 6, 1 }, { 1 } },
    };
    for (ltf_op_id op = LTF_OP_REDUCE_SUM; op <= LTF_OP_REDUCE_ANY; op++)
        for (ltf_dtype dt : ALL)
            for (auto &c : cases)
                for (int keep = 0; keep < 2; keep++) {
                    bool boolop = op == LTF_OP_REDUCE_ALL || op == LTF_OP_REDUCE_ANY;
                    if (boolop != (dt == LTF_DTYPE_BOOL)) continue;
                    ltf_attrs a = attrs();
                    a.nints = c.axes.empty() ? -1 : (int)c.axes.size();
                    for (size_t i = 0; i < c.axes.size(); i++) a.ints[i] = c.axes[i];
                    a.i[0] = keep;
                    char what[128];
                    snprintf(what, sizeof what, "%s %s dims %zu axes %zu (first %lld) keepdims %d", ltf_op_name(op),
                             ltf_dtype_name(dt), c.dims.size(), c.axes.size(),
                             (long long)(c.axes.empty() ? 99 : c.axes[0]), keep);
                    int gen = op == LTF_OP_REDUCE_PROD ? GEN_UNIT : GEN_PLAIN;
                    ltf_tensor *x = rand_tensor(dt, c.dims, gen);
                    if (op == LTF_OP_REDUCE_MAX && is_float(dt) && ltf_tensor_num_elements(x) > 10)
                        ((dt == LTF_DTYPE_FLOAT32) ? (void)(((float *)ltf_tensor_data(x))[7] = NAN)
                                                   : (void)(((double *)ltf_tensor_data(x))[7] = NAN));
                    double atol = is_float(dt) ? (dt == LTF_DTYPE_FLOAT32 ? 1e-5 : 1e-12) * abs_sum(x) : 0;
                    run_both(what, op, { x }, &a, tol_rel(dt), atol);
                }
    {   /* an axis out of range */
        ltf_attrs a = attrs();
        a.nints = 1;
        a.ints[0] = 3;
        run_both("reduce_sum bad axis", LTF_OP_REDUCE_SUM, { rand_tensor(LTF_DTYPE_FLOAT32, { 2, 3 }) }, &a);
    }
    for (ltf_dtype dt : ALL) {   /* sum_to: g down to x's shape */
        if (dt == LTF_DTYPE_BOOL) continue;
        ltf_attrs a = attrs();
        char what[64];
        snprintf(what, sizeof what, "sum_to %s", ltf_dtype_name(dt));
        ltf_tensor *g = rand_tensor(dt, { 3, 4, 5 });
        double atol = is_float(dt) ? 1e-5 * abs_sum(g) : 0;
        run_both(what, LTF_OP_SUM_TO, { g, rand_tensor(dt, { 4, 1 }) }, &a, tol_rel(dt), atol);
    }
    for (ltf_op_id op : { LTF_OP_ARGMAX, LTF_OP_ARGMIN })
        for (ltf_dtype dt : ALL)
            for (int axis : { 0, 1, -1 })
                for (ltf_dtype odt : { LTF_DTYPE_INT32, LTF_DTYPE_INT64 }) {
                    ltf_attrs a = attrs();
                    a.i[1] = axis;
                    a.i[2] = odt;
                    char what[96];
                    snprintf(what, sizeof what, "%s %s axis %d", ltf_op_name(op), ltf_dtype_name(dt), axis);
                    run_both(what, op, { rand_tensor(dt, { 6, 9, 4 }, is_float(dt) ? GEN_SPECIAL : GEN_PLAIN) }, &a);
                }
}

static void test_nn() {
    for (ltf_op_id op : { LTF_OP_SOFTMAX, LTF_OP_LOG_SOFTMAX })
        for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 })
            for (int axis : { -1, 0, 1 }) {
                ltf_attrs a = attrs();
                a.i[0] = axis;
                char what[64];
                snprintf(what, sizeof what, "%s %s axis %d", ltf_op_name(op), ltf_dtype_name(dt), axis);
                run_both(what, op, { rand_tensor(dt, { 5, 11, 3 }) }, &a, dt == LTF_DTYPE_FLOAT32 ? 1e-5 : 1e-12, 1e-6);
            }
    for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 })
        for (ltf_dtype lt : { LTF_DTYPE_INT32, LTF_DTYPE_INT64 }) {
            ltf_attrs a = attrs();
            ltf_tensor *lab = zeros(lt, { 8 });
            for (int i = 0; i < 8; i++) {
                if (lt == LTF_DTYPE_INT32) ((int32_t *)ltf_tensor_data(lab))[i] = 1 + (int32_t)(rnd() % 10);
                else ((int64_t *)ltf_tensor_data(lab))[i] = 1 + (int64_t)(rnd() % 10);
            }
            run_both("sparse xent", LTF_OP_SPARSE_SOFTMAX_XENT, { lab, rand_tensor(dt, { 8, 10 }) }, &a,
                     dt == LTF_DTYPE_FLOAT32 ? 1e-5 : 1e-12, 1e-6);
            run_both("softmax xent", LTF_OP_SOFTMAX_XENT, { rand_tensor(dt, { 8, 10 }, GEN_POS), rand_tensor(dt, { 8, 10 }) },
                     &a, dt == LTF_DTYPE_FLOAT32 ? 1e-5 : 1e-12, 1e-5);
        }
    {   /* a label out of range: an error on both */
        ltf_attrs a = attrs();
        ltf_tensor *lab = zeros(LTF_DTYPE_INT32, { 2 });
        ((int32_t *)ltf_tensor_data(lab))[0] = 1;   /* the other is 0 */
        run_both("sparse xent label 0", LTF_OP_SPARSE_SOFTMAX_XENT, { lab, rand_tensor(LTF_DTYPE_FLOAT32, { 2, 3 }) }, &a);
    }
}

static void test_matmul() {
    struct { std::vector<int64_t> a, b; int ta, tb; } cases[] = {
        { { 5, 7 }, { 7, 3 }, 0, 0 }, { { 7, 5 }, { 7, 3 }, 1, 0 }, { { 5, 7 }, { 3, 7 }, 0, 1 },
        { { 7, 5 }, { 3, 7 }, 1, 1 }, { { 4, 5, 7 }, { 7, 3 }, 0, 0 }, { { 2, 1, 5, 7 }, { 3, 7, 2 }, 0, 0 },
        { { 3, 5, 7 }, { 3, 7, 2 }, 0, 0 }, { { 5, 0 }, { 0, 3 }, 0, 0 },
    };
    for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64, LTF_DTYPE_INT32, LTF_DTYPE_INT64 })
        for (auto &c : cases) {
            ltf_attrs a = attrs();
            a.i[0] = c.ta;
            a.i[1] = c.tb;
            char what[64];
            snprintf(what, sizeof what, "matmul %s %zu-d x %zu-d ta %d tb %d", ltf_dtype_name(dt), c.a.size(), c.b.size(), c.ta, c.tb);
            run_both(what, LTF_OP_MATMUL, { rand_tensor(dt, c.a), rand_tensor(dt, c.b) }, &a, tol_rel(dt),
                     dt == LTF_DTYPE_FLOAT32 ? 1e-4 : 1e-12);
        }
}

static void test_movement() {
    for (ltf_dtype dt : ALL) {
        char what[64];
        snprintf(what, sizeof what, "movement %s", ltf_dtype_name(dt));
        ltf_attrs a = attrs();
        run_both(what, LTF_OP_TRANSPOSE, { rand_tensor(dt, { 3, 4, 5 }) }, &a);   /* reversed axes */
        a.nints = 3;
        a.ints[0] = 1; a.ints[1] = 2; a.ints[2] = 0;
        run_both(what, LTF_OP_TRANSPOSE, { rand_tensor(dt, { 3, 4, 5 }) }, &a);
        a = attrs();
        a.nints = 3; a.ints[0] = 1; a.ints[1] = -3; a.ints[2] = 0;
        a.nints2 = 3; a.ints2[0] = 2; a.ints2[1] = -1; a.ints2[2] = 5;
        run_both(what, LTF_OP_SLICE, { rand_tensor(dt, { 3, 4, 5 }) }, &a);
        for (int axis : { 0, 1, -1 }) {
            a = attrs();
            a.i[0] = axis;
            std::vector<int64_t> d1 = { 2, 3, 4 }, d2 = { 2, 3, 4 };
            int ax = axis < 0 ? 2 : axis;
            d2[ax] = 5;
            run_both(what, LTF_OP_CONCAT, { rand_tensor(dt, d1), rand_tensor(dt, d2), rand_tensor(dt, d1) }, &a);
            run_both(what, LTF_OP_STACK, { rand_tensor(dt, d1), rand_tensor(dt, d1) }, &a);
        }
        for (ltf_dtype it : { LTF_DTYPE_INT32, LTF_DTYPE_INT64 })
            for (int axis : { 0, 1 })
                for (int bd : { 0, 1 }) {
                    if (bd > axis) continue;
                    a = attrs();
                    a.i[0] = axis;
                    a.i[1] = bd;
                    ltf_tensor *idx = zeros(it, { 3, 4 });
                    for (int i = 0; i < 12; i++) {
                        int64_t v = 1 + (int64_t)(rnd() % 3);
                        if (it == LTF_DTYPE_INT32) ((int32_t *)ltf_tensor_data(idx))[i] = (int32_t)v;
                        else ((int64_t *)ltf_tensor_data(idx))[i] = v;
                    }
                    run_both(what, LTF_OP_GATHER, { rand_tensor(dt, { 3, 3, 2 }), idx }, &a);
                }
    }
    {   /* gather out of range: an error on both */
        ltf_attrs a = attrs();
        ltf_tensor *idx = zeros(LTF_DTYPE_INT32, { 2 });
        ((int32_t *)ltf_tensor_data(idx))[0] = 4;
        run_both("gather 0", LTF_OP_GATHER, { rand_tensor(LTF_DTYPE_FLOAT32, { 3, 2 }), idx }, &a);
    }
}

/* Ops with several outputs (split, unstack): outputs allocated from inference. */
static void run_multi(const char *what, ltf_op_id op, ltf_tensor *x, const ltf_attrs *a) {
    ltf_tensor *want[8] = { 0 }, *got[8] = { 0 };
    ltf_type ty[8];
    int nw = 0, nt = 0;
    check_count++;
    if (ltf_op_run(ctx, op, &x, 1, a, want, 8, &nw) != LTF_OK ||
        ltf_op_infer(ctx, ltf_op_get(op), &x, 1, a, ty, 8, &nt) != LTF_OK || nt != nw) {
        check_failures++;
        fprintf(stderr, "%s: CPU failed: %s\n", what, ltf_ctx_error(ctx));
    } else {
        for (int k = 0; k < nt; k++) got[k] = ltf_tensor_new(ctx, ty[k].dtype, ty[k].rank, ty[k].dims);
        ltf_kernel_fn fn = (ltf_kernel_fn)ltf_gpu_host_kernel(op);
        if (!fn || fn(ctx, ltf_op_get(op), &x, 1, a, got, nt) != LTF_OK) {
            check_failures++;
            fprintf(stderr, "%s: device kernel failed\n", what);
        } else {
            for (int k = 0; k < nt; k++)
                if (!compare(what, want[k], got[k], 0, 0)) check_failures++;
        }
    }
    for (int k = 0; k < 8; k++) {
        ltf_tensor_release(want[k]);
        ltf_tensor_release(got[k]);
    }
    ltf_tensor_release(x);
}

static ltf_tensor *scalar_of(ltf_dtype dt, double v) {
    ltf_tensor *t = ltf_tensor_new(ctx, dt, 0, NULL);
    void *p = ltf_tensor_data(t);
    switch (dt) {
    case LTF_DTYPE_FLOAT32: *(float *)p = (float)v; break;
    case LTF_DTYPE_FLOAT64: *(double *)p = v; break;
    case LTF_DTYPE_INT32: *(int32_t *)p = (int32_t)v; break;
    case LTF_DTYPE_INT64: *(int64_t *)p = (int64_t)v; break;
    default: *(uint8_t *)p = (uint8_t)v; break;
    }
    return t;
}

/* reverse, broadcast_to, tile, pad (three modes), split, unstack, one_hot */
static void test_movement2() {
    for (ltf_dtype dt : ALL) {
        char what[64];
        snprintf(what, sizeof what, "movement2 %s", ltf_dtype_name(dt));
        ltf_attrs a = attrs();
        a.nints = 2; a.ints[0] = 0; a.ints[1] = -1;
        run_both(what, LTF_OP_REVERSE, { rand_tensor(dt, { 3, 4, 5 }) }, &a);
        a = attrs();
        a.nints = 3; a.ints[0] = 2; a.ints[1] = 3; a.ints[2] = 4;
        run_both(what, LTF_OP_BROADCAST_TO, { rand_tensor(dt, { 3, 1 }) }, &a);
        a = attrs();
        a.nints = 3; a.ints[0] = 2; a.ints[1] = 1; a.ints[2] = 3;
        run_both(what, LTF_OP_TILE, { rand_tensor(dt, { 2, 3, 2 }) }, &a);
        a.ints[1] = 0;
        run_both(what, LTF_OP_TILE, { rand_tensor(dt, { 2, 3, 2 }) }, &a);
        for (int mode : { LTF_PAD_CONSTANT, LTF_PAD_REFLECT, LTF_PAD_SYMMETRIC }) {
            a = attrs();
            a.nints = 4; a.ints[0] = 1; a.ints[1] = 2; a.ints[2] = 3; a.ints[3] = 0;
            a.i[0] = mode;
            run_both(what, LTF_OP_PAD, { rand_tensor(dt, { 3, 4 }) }, &a);
            if (mode == LTF_PAD_CONSTANT)
                run_both(what, LTF_OP_PAD, { rand_tensor(dt, { 3, 4 }), scalar_of(dt, 1) }, &a);
        }
        for (int axis : { 0, 1, -1 }) {
            a = attrs();
            a.i[0] = axis;
            a.i[1] = 2;
            run_multi(what, LTF_OP_SPLIT, rand_tensor(dt, { 4, 2, 6 }), &a);
            a.nints = 3; a.ints[0] = 1; a.ints[1] = 0; a.ints[2] = -1;
            run_multi(what, LTF_OP_SPLIT, rand_tensor(dt, { 4, 2, 6 }), &a);
            a = attrs();
            a.i[0] = axis;
            run_multi(what, LTF_OP_UNSTACK, rand_tensor(dt, { 3, 2, 4 }), &a);
        }
        a = attrs();   /* fill */
        a.nints = 2; a.ints[0] = 3; a.ints[1] = 5;
        a.i[0] = dt; a.i[1] = 300; a.f[0] = -2.5;
        run_both(what, LTF_OP_FILL, {}, &a);
        if (dt != LTF_DTYPE_BOOL)   /* cumsum, cumprod: every axis, exclusive, reverse */
            for (ltf_op_id op : { LTF_OP_CUMSUM, LTF_OP_CUMPROD })
                for (int axis : { 0, 1, -1 })
                    for (int ex = 0; ex < 2; ex++)
                        for (int rev = 0; rev < 2; rev++) {
                            a = attrs();
                            a.i[1] = axis; a.i[2] = ex; a.i[3] = rev;
                            run_both(what, op, { rand_tensor(dt, { 3, 4, 5 }, op == LTF_OP_CUMPROD ? GEN_UNIT : GEN_PLAIN) },
                                     &a, -1, dt == LTF_DTYPE_FLOAT32 ? 1e-5 : 1e-12);
                        }
        for (ltf_dtype it : { LTF_DTYPE_INT32, LTF_DTYPE_INT64, LTF_DTYPE_UINT8 })
            for (int axis : { 0, -1, 1 }) {
                a = attrs();
                a.i[0] = 4;
                a.i[1] = axis;
                ltf_tensor *idx = zeros(it, { 3, 2 });
                for (int i = 0; i < 6; i++) {
                    int64_t v = (int64_t)(rnd() % 6);   /* 0 and 5: all off */
                    if (it == LTF_DTYPE_INT32) ((int32_t *)ltf_tensor_data(idx))[i] = (int32_t)v;
                    else if (it == LTF_DTYPE_INT64) ((int64_t *)ltf_tensor_data(idx))[i] = v;
                    else ((uint8_t *)ltf_tensor_data(idx))[i] = (uint8_t)v;
                }
                run_both(what, LTF_OP_ONE_HOT, { idx, scalar_of(dt, 1), scalar_of(dt, 0) }, &a);
            }
    }
}

/* {==== Optimizer updates: the same variables and slots updated by the CPU
** kernel (through ltf_op_run) and by the device kernel; values compared
** after each of three steps */
static ltf_tensor *new_var(ltf_tensor *init) {
    ltf_tensor *h = ltf_variable_new(ctx, init, "v", 1, -2, NULL);
    ltf_tensor_release(init);
    return h;
}

static void test_optim() {
    struct Case { ltf_op_id op; int nslots; int i0, i1; double f[4]; const char *name; };
    const Case cases[] = {
        { LTF_OP_APPLY_SGD, 0, 0, 0, { 0, 0, 0, 0 }, "sgd" },
        { LTF_OP_APPLY_MOMENTUM, 1, 0, 0, { 0.9, 0, 0, 0 }, "momentum" },
        { LTF_OP_APPLY_MOMENTUM, 1, 1, 0, { 0.5, 0, 0, 0 }, "nesterov" },
        { LTF_OP_APPLY_ADAM, 2, 0, 0, { 0.9, 0.999, 1e-7, 0 }, "adam" },
        { LTF_OP_APPLY_ADAM, 3, 1, 0, { 0.9, 0.999, 1e-7, 0.01 }, "adamw amsgrad" },
        { LTF_OP_APPLY_RMSPROP, 1, 0, 0, { 0.9, 0, 1e-7, 0 }, "rmsprop" },
        { LTF_OP_APPLY_RMSPROP, 3, 1, 1, { 0.9, 0.5, 1e-7, 0 }, "rmsprop centered momentum" },
        { LTF_OP_APPLY_ADAGRAD, 1, 0, 0, { 1e-7, 0, 0, 0 }, "adagrad" },
    };
    for (const Case &c : cases)
        for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 }) {
            char what[96];
            snprintf(what, sizeof what, "%s %s", c.name, ltf_dtype_name(dt));
            ltf_tensor *x0 = rand_tensor(dt, { 5, 7 });
            std::vector<ltf_tensor *> hc, hd;   /* variable then slots: CPU, device */
            for (int k = 0; k <= c.nslots; k++) {
                ltf_tensor *init = k == 0 ? ltf_tensor_retain(x0) : rand_tensor(dt, { 5, 7 }, GEN_POS);
                hc.push_back(new_var(ltf_tensor_clone(ctx, init)));
                hd.push_back(new_var(init));
            }
            ltf_tensor_release(x0);
            ltf_attrs a = attrs();
            a.i[0] = c.i0;
            a.i[1] = c.i1;
            for (int k = 0; k < 4; k++) a.f[k] = c.f[k];
            const void *k = ltf_gpu_host_kernel(c.op);
            check_count++;
            if (!k) {
                check_failures++;
                fprintf(stderr, "%s: no device kernel\n", what);
                continue;
            }
            for (int step = 1; step <= 3; step++) {
                check_count++;
                if (!optim_step_both(what, c.op, k, &a, hc, hd, rand_tensor(dt, { 5, 7 }), step)) check_failures++;
                for (size_t v = 0; v < hc.size(); v++) {
                    ltf_tensor *want = ltf_variable_peek(hc[v]), *got = ltf_variable_peek(hd[v]);
                    check_count++;
                    if (!compare(what, want, got, tol_rel(dt), dt == LTF_DTYPE_FLOAT32 ? 1e-6 : 1e-14)) check_failures++;
                    ltf_tensor_release(want);
                    ltf_tensor_release(got);
                }
            }
            {   /* a gradient of another shape: refused, naming both shapes */
                ltf_tensor *g = rand_tensor(dt, { 7, 5 });
                ltf_tensor *lr = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT64, 0, NULL);
                *(double *)ltf_tensor_data(lr) = 0.1;
                std::vector<ltf_tensor *> id(hd);
                id.push_back(g);
                id.push_back(lr);
                if (c.op == LTF_OP_APPLY_ADAM) id.push_back(lr);
                ltf_status s2 = ((ltf_kernel_fn)k)(ctx, ltf_op_get(c.op), id.data(), (int)id.size(), &a, NULL, 0);
                CHECK(s2 == LTF_ERR_INVALID_ARGUMENT && strstr(ltf_ctx_error(ctx), "(5, 7)") &&
                      strstr(ltf_ctx_error(ctx), "(7, 5)"));
                ltf_tensor_release(g);
                ltf_tensor_release(lr);
            }
            for (ltf_tensor *h : hc) ltf_tensor_release(h);
            for (ltf_tensor *h : hd) ltf_tensor_release(h);
        }
}
/* }==== */

/* {==== Windows: conv2d and its gradients, the pools; strided_slice,
** unsorted_segment_sum, range/linspace/eye, gelu */
/* The shape conv2d / a pool gives for 'x' under 'a' (the engine's inference). */
static std::vector<int64_t> infer_shape(ltf_op_id op, std::vector<ltf_tensor *> in, const ltf_attrs *a) {
    ltf_type ty;
    int nty = 0;
    std::vector<int64_t> d;
    if (ltf_op_infer(ctx, ltf_op_get(op), in.data(), (int)in.size(), a, &ty, 1, &nty) == LTF_OK && nty == 1)
        d.assign(ty.dims, ty.dims + ty.rank);
    else
        fprintf(stderr, "%s: inference failed: %s\n", ltf_op_name(op), ltf_ctx_error(ctx));
    return d;
}

/* floats with ties: values from a few levels (max pool argmax picks the first) */
static ltf_tensor *tied_tensor(ltf_dtype dt, std::vector<int64_t> dims) {
    ltf_tensor *t = rand_tensor(dt, dims);
    int64_t n = ltf_tensor_num_elements(t);
    for (int64_t i = 0; i < n; i++) {
        double v = (double)(rnd() % 4);
        if (dt == LTF_DTYPE_FLOAT32) ((float *)ltf_tensor_data(t))[i] = (float)v;
        else ((double *)ltf_tensor_data(t))[i] = v;
    }
    return t;
}

static void test_conv_pool() {
    struct Case { int pad; int64_t sh, sw, dh, dw; };
    const Case cases[] = { { LTF_PADDING_VALID, 1, 1, 1, 1 }, { LTF_PADDING_SAME, 1, 1, 1, 1 },
                           { LTF_PADDING_SAME, 2, 2, 1, 1 }, { LTF_PADDING_VALID, 2, 1, 1, 2 },
                           { LTF_PADDING_SAME, 1, 2, 2, 1 }, { LTF_PADDING_EXPLICIT, 2, 1, 1, 1 },
                           { LTF_PADDING_EXPLICIT, 1, 1, 2, 2 } };
    /* small: the direct bodies; large: above CONV_DIRECT_MACS, im2col + GEMM
    ** in chunks of 2 images (the host executor's 1 MiB scratch) */
    for (int large = 0; large < 2; large++)
    for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 })
        for (const Case &c : cases) {
            if (large && &c != &cases[0] && &c != &cases[2] && &c != &cases[6]) continue;
            ltf_attrs a = attrs();
            a.i[0] = c.pad;
            a.nints = c.pad == LTF_PADDING_EXPLICIT ? 8 : 4;
            a.ints[0] = c.sh; a.ints[1] = c.sw; a.ints[2] = c.dh; a.ints[3] = c.dw;
            a.ints[4] = 1; a.ints[5] = 2; a.ints[6] = 0; a.ints[7] = 1;
            std::vector<int64_t> xd = { 2, 7, 6, 3 }, fd = { 3, 2, 3, 4 };
            if (large) {
                xd = { 5, 40, 36, 8 };
                fd = { 3, 3, 8, 32 };
            }
            ltf_tensor *x = rand_tensor(dt, xd), *f = rand_tensor(dt, fd);
            std::vector<int64_t> yd = infer_shape(LTF_OP_CONV2D, { x, f }, &a);
            char what[96];
            snprintf(what, sizeof what, "conv2d%s %s pad %d strides %lld,%lld dil %lld,%lld", large ? " (gemm)" : "",
                     ltf_dtype_name(dt), c.pad,
                     (long long)c.sh, (long long)c.sw, (long long)c.dh, (long long)c.dw);
            double rt = dt == LTF_DTYPE_FLOAT32 ? 1e-5 : 1e-12, at = dt == LTF_DTYPE_FLOAT32 ? 2e-4 : 1e-11;
            ltf_tensor_retain(x);
            ltf_tensor_retain(f);
            run_both(what, LTF_OP_CONV2D, { x, f }, &a, rt, at);
            if (yd.size() != 4) continue;
            ltf_attrs ai = a;
            ai.nints2 = 2; ai.ints2[0] = xd[1]; ai.ints2[1] = xd[2];
            run_both(what, LTF_OP_CONV2D_BACKPROP_INPUT, { f, rand_tensor(dt, yd) }, &ai, rt, at);
            ltf_attrs af = a;
            af.nints2 = 2; af.ints2[0] = fd[0]; af.ints2[1] = fd[1];
            run_both(what, LTF_OP_CONV2D_BACKPROP_FILTER, { x, rand_tensor(dt, yd) }, &af, rt, 1e3 * at);
        }
    {   /* 1x1 filters (the CPU's GEMM path) and 2 dilations only */
        ltf_attrs a = attrs();
        a.nints = 2; a.ints[0] = 1; a.ints[1] = 1;
        run_both("conv2d 1x1", LTF_OP_CONV2D, { rand_tensor(LTF_DTYPE_FLOAT32, { 3, 4, 5, 6 }),
                                                rand_tensor(LTF_DTYPE_FLOAT32, { 1, 1, 6, 2 }) }, &a, 1e-5, 1e-4);
    }
    struct PCase { int pad; int64_t kh, kw, sh, sw; };
    const PCase pcases[] = { { LTF_PADDING_VALID, 2, 2, 2, 2 }, { LTF_PADDING_SAME, 3, 3, 2, 2 },
                             { LTF_PADDING_VALID, 3, 2, 1, 1 }, { LTF_PADDING_SAME, 2, 3, 1, 2 },
                             { LTF_PADDING_SAME, 9, 9, 1, 1 } };
    for (const PCase &c : pcases) {
        ltf_attrs a = attrs();
        a.i[0] = c.pad;
        a.nints = 4;
        a.ints[0] = c.kh; a.ints[1] = c.kw; a.ints[2] = c.sh; a.ints[3] = c.sw;
        std::vector<int64_t> xd = { 2, 7, 6, 3 };
        char what[96];
        for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64, LTF_DTYPE_INT32, LTF_DTYPE_INT64, LTF_DTYPE_UINT8 }) {
            snprintf(what, sizeof what, "max_pool2d %s pad %d k %lld,%lld s %lld,%lld", ltf_dtype_name(dt), c.pad,
                     (long long)c.kh, (long long)c.kw, (long long)c.sh, (long long)c.sw);
            run_both(what, LTF_OP_MAX_POOL2D, { rand_tensor(dt, xd, is_float(dt) ? GEN_SPECIAL : GEN_PLAIN) }, &a);
        }
        for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 }) {
            snprintf(what, sizeof what, "pools %s pad %d k %lld,%lld s %lld,%lld", ltf_dtype_name(dt), c.pad,
                     (long long)c.kh, (long long)c.kw, (long long)c.sh, (long long)c.sw);
            double rt = dt == LTF_DTYPE_FLOAT32 ? 1e-5 : 1e-12;
            run_both(what, LTF_OP_AVG_POOL2D, { rand_tensor(dt, xd) }, &a, rt, 1e-6);
            for (int tied = 0; tied < 2; tied++) {
                ltf_tensor *x = tied ? tied_tensor(dt, xd) : rand_tensor(dt, xd);
                std::vector<int64_t> yd = infer_shape(LTF_OP_MAX_POOL2D, { x }, &a);
                ltf_tensor_retain(x);
                ltf_tensor_retain(x);
                run_both(what, LTF_OP_MAX_POOL2D_GRAD, { x, rand_tensor(dt, yd) }, &a, rt, 1e-6);
                run_both(what, LTF_OP_MAX_POOL2D_GRAD_GRAD, { x, rand_tensor(dt, xd) }, &a);
                ltf_attrs ag = a;
                ag.nints2 = 2; ag.ints2[0] = xd[1]; ag.ints2[1] = xd[2];
                run_both(what, LTF_OP_AVG_POOL2D_GRAD, { rand_tensor(dt, yd) }, &ag, rt, 1e-6);
                ltf_tensor_release(x);
            }
        }
    }
    for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 })
        for (int approx = 0; approx < 2; approx++) {
            ltf_attrs a = attrs();
            a.i[0] = approx;
            char what[64];
            snprintf(what, sizeof what, "gelu %s approx %d", ltf_dtype_name(dt), approx);
            run_both(what, LTF_OP_GELU, { rand_tensor(dt, { 7, 9 }, GEN_SPECIAL) }, &a, dt == LTF_DTYPE_FLOAT32 ? 1e-5 : 1e-12,
                     1e-6);
            run_both(what, LTF_OP_GELU_GRAD, { rand_tensor(dt, { 7, 9 }), rand_tensor(dt, { 7, 9 }) }, &a,
                     dt == LTF_DTYPE_FLOAT32 ? 1e-5 : 1e-12, 1e-6);
        }
}

static void test_strided_segment_init() {
    /* strided_slice: begin, end, strides, masks (begin, end, shrink, new axis | ellipsis << 32) */
    struct SCase { int n; int64_t b[3], e[3], s[3]; int64_t bm, em, sm, nm; };
    const SCase sc[] = {
        { 3, { 1, 0, 1 }, { 4, 6, 3 }, { 1, 2, 1 }, 0, 0, 0, 0 },
        { 3, { -1, 5, 0 }, { 0, 0, 4 }, { -1, -2, 3 }, 0, 0, 0, 0 },
        { 2, { 2, 1, 0 }, { 3, 5, 0 }, { 1, 1, 1 }, 0, 0, 1, 0 },
        { 3, { 0, 1, 0 }, { 0, 4, 0 }, { 1, 1, 1 }, 5, 5, 0, 2 },
        { 2, { 0, 1, 0 }, { 0, 3, 0 }, { 1, 1, 1 }, 0, 0, 0, (int64_t)1 << 32 },
        { 3, { 4, -2, 3 }, { -6, -7, -5 }, { -1, -1, -2 }, 1, 0, 0, 0 },
        { 1, { 7, 0, 0 }, { 9, 0, 0 }, { 1, 1, 1 }, 0, 0, 0, 0 },
    };
    for (ltf_dtype dt : ALL)
        for (const SCase &c : sc) {
            ltf_attrs a = attrs();
            a.nints = 2 * c.n;
            a.nints2 = c.n;
            for (int k = 0; k < c.n; k++) { a.ints[k] = c.b[k]; a.ints[c.n + k] = c.e[k]; a.ints2[k] = c.s[k]; }
            a.i[0] = c.bm; a.i[1] = c.em; a.i[2] = c.sm; a.i[3] = c.nm;
            char what[64];
            snprintf(what, sizeof what, "strided_slice %s", ltf_dtype_name(dt));
            ltf_tensor *x = rand_tensor(dt, { 5, 6, 4 });
            std::vector<int64_t> yd = infer_shape(LTF_OP_STRIDED_SLICE, { x }, &a);
            ltf_tensor_retain(x);
            run_both(what, LTF_OP_STRIDED_SLICE, { x }, &a);
            if (dt != LTF_DTYPE_BOOL) {
                ltf_tensor_retain(x);
                run_both(what, LTF_OP_STRIDED_SLICE_GRAD, { rand_tensor(dt, yd), x }, &a);
            }
            ltf_tensor_release(x);
        }
    /* unsorted_segment_sum: ids in -1..5 (negative dropped), batch_dims, an id out of range */
    for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64, LTF_DTYPE_INT32, LTF_DTYPE_INT64, LTF_DTYPE_UINT8 })
        for (ltf_dtype it : { LTF_DTYPE_INT32, LTF_DTYPE_INT64 })
            for (int batch = 0; batch < 3; batch++) {
                std::vector<int64_t> dd = batch ? std::vector<int64_t>{ 2, 5, 3 } : std::vector<int64_t>{ 6, 4 };
                std::vector<int64_t> id = batch ? std::vector<int64_t>{ 2, 5 } : std::vector<int64_t>{ 6 };
                ltf_tensor *ids = zeros(it, id);
                int64_t nid = ltf_tensor_num_elements(ids);
                for (int64_t k = 0; k < nid; k++) {
                    int64_t v = (int64_t)(rnd() % 6);
                    if (v == 0) v = -1;
                    if (batch == 2 && k == 3) v = 0;   /* out of range */
                    if (it == LTF_DTYPE_INT32) ((int32_t *)ltf_tensor_data(ids))[k] = (int32_t)v;
                    else ((int64_t *)ltf_tensor_data(ids))[k] = v;
                }
                ltf_attrs a = attrs();
                a.i[0] = 5;
                a.i[1] = batch ? 1 : 0;
                a.i[2] = batch ? 1 : 0;
                char what[64];
                snprintf(what, sizeof what, "unsorted_segment_sum %s %s %d", ltf_dtype_name(dt), ltf_dtype_name(it), batch);
                /* GEN_NONZERO: no INT32_MIN/INT64_MIN, whose sums overflow (undefined in the CPU's C) */
                run_both(what, LTF_OP_UNSORTED_SEGMENT_SUM, { rand_tensor(dt, dd, GEN_NONZERO), ids }, &a,
                         dt == LTF_DTYPE_FLOAT32 ? 1e-6 : 1e-12, 1e-6);
            }
    /* range, linspace, eye */
    for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64, LTF_DTYPE_INT32, LTF_DTYPE_INT64 })
        for (int down = 0; down < 2; down++) {
            ltf_attrs a = attrs();
            a.i[0] = dt;
            a.i[1] = down ? 40 : 3; a.i[2] = down ? 3 : 40; a.i[3] = down ? -3 : 3;
            a.f[0] = down ? 7.3 : 0.1; a.f[1] = down ? 0.1 : 7.3; a.f[2] = down ? -0.7 : 0.7;
            char what[64];
            snprintf(what, sizeof what, "range %s %d", ltf_dtype_name(dt), down);
            run_both(what, LTF_OP_RANGE, {}, &a, 0, 0);
        }
    for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 })
        for (int64_t num : { 1, 2, 50 }) {
            ltf_attrs a = attrs();
            a.i[0] = dt; a.i[1] = num; a.f[0] = -1.3; a.f[1] = 2.9;
            run_both("linspace", LTF_OP_LINSPACE, {}, &a, 0, 0);
        }
    for (ltf_dtype dt : ALL) {
        ltf_attrs a = attrs();
        a.i[0] = dt; a.i[1] = 3; a.i[2] = 4;
        a.nints = 1; a.ints[0] = 2;
        run_both("eye", LTF_OP_EYE, {}, &a);
        a.i[1] = 5; a.i[2] = 2; a.nints = -1;
        run_both("eye", LTF_OP_EYE, {}, &a);
    }
}
/* }==== */

int main(void) {
    ctx = ltf_ctx_new();
    test_unary();
    test_binary();
    test_cast_select_fill();
    test_reduce();
    test_nn();
    test_matmul();
    test_movement();
    test_movement2();
    test_optim();
    test_conv_pool();
    test_strided_segment_init();
    /* coverage: ops without a device kernel answer NULL */
    CHECK(ltf_gpu_host_kernel(LTF_OP_STRING_LENGTH) == NULL);
    CHECK(ltf_gpu_host_kernel(-1) == NULL);
    ltf_ctx_release(ctx);
    CHECK_DONE();
}
