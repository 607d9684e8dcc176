/*
** test_cuda_kernels_index.cpp: the device bodies of cuda/kernels/index.cuh
** (gather_nd, scatter_nd, tensor_scatter_nd_*, roll, ensure_shape,
** sequence_mask, the image resizes and their gradients, band_part, diag,
** diag_part, matrix_transpose, split_like, check_numerics), built for the
** host (libltf_gpu_host.a) and compared with the CPU kernels on the same
** inputs: every dtype each op takes, edge shapes (empty, rank 0 where
** legal, K = 0 and K = rank), duplicate scatter positions, and the CPU's
** errors (same status kind; check_numerics: the same text).
**
** Every comparison is exact (rtol 0): these ops move elements, and where
** they compute (scatter sums, bilinear weights and the gradients' sums)
** the bodies do the CPU's operations in the CPU's order.
*/
#include "kernel_check.h"

static const ltf_dtype NUMERIC[] = { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64, LTF_DTYPE_INT32, LTF_DTYPE_INT64,
                                     LTF_DTYPE_UINT8 };
static const ltf_dtype INDEX[] = { LTF_DTYPE_INT32, LTF_DTYPE_INT64 };

/* {==== Helpers */
static void set_int(ltf_tensor *t, int64_t k, int64_t v) {
    if (ltf_tensor_dtype(t) == LTF_DTYPE_INT32) ((int32_t *)ltf_tensor_data(t))[k] = (int32_t)v;
    else ((int64_t *)ltf_tensor_data(t))[k] = v;
}

/* Indices (rows..., K) with column k uniform in 1..hi[k]; 'bad' > 0: that
** many entries set out of range (0 or hi + 1) */
static ltf_tensor *indices(ltf_dtype it, std::vector<int64_t> dims, std::vector<int64_t> hi, int bad = 0) {
    ltf_tensor *t = zeros(it, dims);
    int64_t n = ltf_tensor_num_elements(t), K = dims.back();
    for (int64_t k = 0; k < n; k++) set_int(t, k, 1 + (int64_t)(rnd() % (uint64_t)hi[k % K]));
    for (int b = 0; b < bad && n > 0; b++) {
        int64_t k = (int64_t)(rnd() % (uint64_t)n);
        set_int(t, k, rnd() & 1 ? 0 : hi[k % K] + 1);
    }
    return t;
}

static ltf_tensor *ints(ltf_dtype it, std::vector<int64_t> dims, std::vector<int64_t> v) {
    ltf_tensor *t = zeros(it, dims);
    for (size_t k = 0; k < v.size(); k++) set_int(t, (int64_t)k, v[k]);
    return t;
}

static ltf_attrs shape_attrs(std::vector<int64_t> shape) {
    ltf_attrs a = attrs();
    a.nints = (int)shape.size();
    for (size_t k = 0; k < shape.size(); k++) a.ints[k] = shape[k];
    return a;
}

/* exact comparison of the device body with the CPU */
static void same(const char *what, ltf_op_id op, std::vector<ltf_tensor *> in, const ltf_attrs *a) {
    run_both(what, op, in, a, 0, 0);
}

/* Ops with several outputs (split_like): outputs allocated from inference. */
static void run_multi(const char *what, ltf_op_id op, std::vector<ltf_tensor *> in, const ltf_attrs *a) {
    ltf_tensor *want[8] = { 0 }, *got[8] = { 0 };
    ltf_type ty[8];
    int nw = 0, nt = 0, nin = (int)in.size();
    check_count++;
    if (ltf_op_run(ctx, op, in.data(), nin, a, want, 8, &nw) != LTF_OK ||
        ltf_op_infer(ctx, ltf_op_get(op), in.data(), nin, a, ty, 8, &nt) != LTF_OK || nt != nw) {
        check_failures++;
        fprintf(stderr, "%s: CPU failed: %s\n", what, ltf_ctx_error(ctx));
    } else {
        for (int k = 0; k < nt; k++) got[k] = ltf_tensor_new(ctx, ty[k].dtype, ty[k].rank, ty[k].dims);
        ltf_kernel_fn fn = (ltf_kernel_fn)ltf_gpu_host_kernel(op);
        if (!fn || fn(ctx, ltf_op_get(op), in.data(), nin, a, got, nt) != LTF_OK) {
            check_failures++;
            fprintf(stderr, "%s: device kernel failed: %s\n", what, ltf_ctx_error(ctx));
        } else {
            for (int k = 0; k < nt; k++)
                if (!compare(what, want[k], got[k], 0, 0)) check_failures++;
        }
    }
    for (int k = 0; k < 8; k++) {
        ltf_tensor_release(want[k]);
        ltf_tensor_release(got[k]);
    }
    for (ltf_tensor *t : in) ltf_tensor_release(t);
}
/* }==== */

/* {==== gather_nd */
static void test_gather_nd() {
    char what[96];
    for (ltf_dtype dt : ALL)
        for (ltf_dtype it : INDEX) {
            ltf_attrs a = attrs();
            snprintf(what, sizeof what, "gather_nd %s %s", ltf_dtype_name(dt), ltf_dtype_name(it));
            /* K = 1, 2, 3 (= rank: scalars), K = 0 (whole params per row) */
            same(what, LTF_OP_GATHER_ND, { rand_tensor(dt, { 4, 5, 3 }), indices(it, { 2, 3, 1 }, { 4 }) }, &a);
            same(what, LTF_OP_GATHER_ND, { rand_tensor(dt, { 4, 5, 3 }), indices(it, { 6, 2 }, { 4, 5 }) }, &a);
            same(what, LTF_OP_GATHER_ND, { rand_tensor(dt, { 4, 5, 3 }), indices(it, { 5, 3 }, { 4, 5, 3 }) }, &a);
            same(what, LTF_OP_GATHER_ND, { rand_tensor(dt, { 7 }), indices(it, { 3, 1 }, { 7 }) }, &a);
            same(what, LTF_OP_GATHER_ND, { rand_tensor(dt, { 2, 3 }), zeros(it, { 2, 0 }) }, &a);
            /* empty: no rows, or empty slices (an out-of-range index then reads nothing) */
            same(what, LTF_OP_GATHER_ND, { rand_tensor(dt, { 4, 5 }), zeros(it, { 0, 2 }) }, &a);
            same(what, LTF_OP_GATHER_ND, { rand_tensor(dt, { 4, 0 }), indices(it, { 3, 1 }, { 4 }, 2) }, &a);
            /* out of range (0 or past the end): InvalidArgument on both */
            snprintf(what, sizeof what, "gather_nd %s %s out of range", ltf_dtype_name(dt), ltf_dtype_name(it));
            same(what, LTF_OP_GATHER_ND, { rand_tensor(dt, { 4, 5, 3 }), indices(it, { 6, 2 }, { 4, 5 }, 1) }, &a);
            same(what, LTF_OP_GATHER_ND, { rand_tensor(dt, { 3 }), ints(it, { 1, 1 }, { -1 }) }, &a);
        }
    {   /* a float index is refused by both (TypeError) */
        ltf_attrs a = attrs();
        same("gather_nd float indices", LTF_OP_GATHER_ND,
             { rand_tensor(LTF_DTYPE_FLOAT32, { 3 }), rand_tensor(LTF_DTYPE_FLOAT32, { 2, 1 }) }, &a);
    }
}
/* }==== */

/* {==== scatter_nd, tensor_scatter_nd_* */
static void test_scatter() {
    char what[128];
    /* (shape, indices dims, per-column maxima, updates dims): many duplicates,
    ** N not a power of two, K = 0 (every row adds to the whole tensor) */
    struct sc {
        std::vector<int64_t> shape, idx, hi, upd;
    } cases[] = {
        { { 6, 4 }, { 10, 1 }, { 6 }, { 10, 4 } },
        { { 3, 3, 2 }, { 7, 2 }, { 3, 3 }, { 7, 2 } },
        { { 3, 3, 2 }, { 2, 4, 3 }, { 3, 3, 2 }, { 2, 4 } },
        { { 2, 3 }, { 3, 0 }, {}, { 3, 2, 3 } },
        { { 17, 3 }, { 1000, 1 }, { 17 }, { 1000, 3 } },
        { { 5 }, { 1, 1 }, { 5 }, { 1 } },
        { { 4, 2 }, { 0, 1 }, { 4 }, { 0, 2 } },
        { { 4, 0 }, { 3, 1 }, { 4 }, { 3, 0 } },
    };
    for (ltf_dtype dt : ALL)
        for (ltf_dtype it : INDEX)
            for (const sc &c : cases) {
                std::vector<int64_t> hi = c.hi;
                if (hi.empty()) hi.push_back(1);
                /* integers without INT_MIN (GEN_NONZERO): the CPU's signed sums
                ** would overflow, undefined in C (UBSan stops there) */
                for (int gen : { GEN_PLAIN, GEN_SPECIAL }) {
                    if (gen == GEN_SPECIAL && !is_float(dt)) continue;
                    if (!is_float(dt) && dt != LTF_DTYPE_UINT8 && dt != LTF_DTYPE_BOOL) gen = GEN_NONZERO;
                    if (dt != LTF_DTYPE_BOOL) {
                        ltf_attrs a = shape_attrs(c.shape);
                        snprintf(what, sizeof what, "scatter_nd %s %s (%zu rows) gen %d", ltf_dtype_name(dt),
                                 ltf_dtype_name(it), (size_t)c.idx[0], gen);
                        same(what, LTF_OP_SCATTER_ND, { indices(it, c.idx, hi), rand_tensor(dt, c.upd, gen) }, &a);
                    }
                    for (ltf_op_id op = LTF_OP_TENSOR_SCATTER_UPDATE; op <= LTF_OP_TENSOR_SCATTER_MIN; op++) {
                        if (dt == LTF_DTYPE_BOOL && op != LTF_OP_TENSOR_SCATTER_UPDATE) continue;
                        ltf_attrs a = attrs();
                        snprintf(what, sizeof what, "%s %s %s (%zu rows) gen %d", ltf_op_name(op), ltf_dtype_name(dt),
                                 ltf_dtype_name(it), (size_t)c.idx[0], gen);
                        same(what, op, { rand_tensor(dt, c.shape, gen), indices(it, c.idx, hi), rand_tensor(dt, c.upd, gen) },
                             &a);
                    }
                }
            }
    /* out of range: InvalidArgument on both; bool refused by the combining
    ** scatters and scatter_nd (TypeError) */
    for (ltf_dtype it : INDEX) {
        ltf_attrs a = shape_attrs({ 6, 4 });
        snprintf(what, sizeof what, "scatter_nd %s out of range", ltf_dtype_name(it));
        same(what, LTF_OP_SCATTER_ND, { indices(it, { 10, 1 }, { 6 }, 1), rand_tensor(LTF_DTYPE_FLOAT32, { 10, 4 }) }, &a);
        for (ltf_op_id op = LTF_OP_TENSOR_SCATTER_UPDATE; op <= LTF_OP_TENSOR_SCATTER_MIN; op++) {
            ltf_attrs b = attrs();
            snprintf(what, sizeof what, "%s %s out of range", ltf_op_name(op), ltf_dtype_name(it));
            same(what, op, { rand_tensor(LTF_DTYPE_INT32, { 3, 3, 2 }), indices(it, { 7, 2 }, { 3, 3 }, 2),
                             rand_tensor(LTF_DTYPE_INT32, { 7, 2 }) }, &b);
        }
    }
    {
        ltf_attrs a = shape_attrs({ 4 });
        same("scatter_nd bool", LTF_OP_SCATTER_ND,
             { indices(LTF_DTYPE_INT32, { 2, 1 }, { 4 }), rand_tensor(LTF_DTYPE_BOOL, { 2 }) }, &a);
        ltf_attrs b = attrs();
        same("tensor_scatter_nd_add bool", LTF_OP_TENSOR_SCATTER_ADD,
             { rand_tensor(LTF_DTYPE_BOOL, { 4 }), indices(LTF_DTYPE_INT32, { 2, 1 }, { 4 }),
               rand_tensor(LTF_DTYPE_BOOL, { 2 }) }, &b);
    }
    {   /* duplicates by hand: update keeps the last, add sums in order, max with a NaN */
        ltf_attrs a = attrs();
        ltf_tensor *t = zeros(LTF_DTYPE_FLOAT32, { 3 }), *u = zeros(LTF_DTYPE_FLOAT32, { 4 });
        float *pu = (float *)ltf_tensor_data(u);
        pu[0] = 1; pu[1] = 2; pu[2] = NAN; pu[3] = 4;
        ltf_tensor *idx = ints(LTF_DTYPE_INT64, { 4, 1 }, { 2, 2, 3, 2 });
        ltf_tensor *in[3] = { t, idx, u }, *o = NULL;
        int n = 0;
        const void *k = ltf_gpu_host_kernel(LTF_OP_TENSOR_SCATTER_UPDATE);
        CHECK(k != NULL);
        int64_t d3[1] = { 3 };
        o = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 1, d3);
        CHECK(((ltf_kernel_fn)k)(ctx, ltf_op_get(LTF_OP_TENSOR_SCATTER_UPDATE), in, 3, &a, &o, 1) == LTF_OK);
        const float *po = (const float *)ltf_tensor_data(o);
        CHECK(po[0] == 0 && po[1] == 4 && isnan(po[2]));
        CHECK(((ltf_kernel_fn)ltf_gpu_host_kernel(LTF_OP_TENSOR_SCATTER_ADD))(
                  ctx, ltf_op_get(LTF_OP_TENSOR_SCATTER_ADD), in, 3, &a, &o, 1) == LTF_OK);
        CHECK(po[0] == 0 && po[1] == 7 && isnan(po[2]));
        CHECK(((ltf_kernel_fn)ltf_gpu_host_kernel(LTF_OP_TENSOR_SCATTER_MAX))(
                  ctx, ltf_op_get(LTF_OP_TENSOR_SCATTER_MAX), in, 3, &a, &o, 1) == LTF_OK);
        CHECK(po[0] == 0 && po[1] == 4 && isnan(po[2]));
        (void)n;
        ltf_tensor_release(o);
        same("tensor_scatter_nd_sub by hand", LTF_OP_TENSOR_SCATTER_SUB, { t, idx, u }, &a);
    }
}
/* }==== */

/* {==== roll, ensure_shape, sequence_mask */
static void test_roll_ensure_mask() {
    char what[96];
    for (ltf_dtype dt : ALL) {
        snprintf(what, sizeof what, "roll %s", ltf_dtype_name(dt));
        /* (shifts, axes): several axes, negative, larger than the dim, an axis named twice */
        std::vector<std::vector<int64_t>> sh = { { 1 }, { -2, 7 }, { 3, -1, 12 }, { 2, 3 }, { 0 } };
        std::vector<std::vector<int64_t>> ax = { { 0 }, { 1, 2 }, { 0, 1, 2 }, { -1, 2 }, { 1 } };
        for (size_t c = 0; c < sh.size(); c++) {
            ltf_attrs a = attrs();
            a.nints = a.nints2 = (int)sh[c].size();
            for (size_t k = 0; k < sh[c].size(); k++) { a.ints[k] = sh[c][k]; a.ints2[k] = ax[c][k]; }
            same(what, LTF_OP_ROLL, { rand_tensor(dt, { 3, 4, 5 }) }, &a);
        }
        ltf_attrs a = attrs();
        a.nints = a.nints2 = 0;
        same(what, LTF_OP_ROLL, { rand_tensor(dt, {}) }, &a);        /* rank 0 */
        a.nints = a.nints2 = 1;
        a.ints[0] = 2; a.ints2[0] = 0;
        same(what, LTF_OP_ROLL, { rand_tensor(dt, { 0, 3 }) }, &a);  /* empty */
        same(what, LTF_OP_ROLL, { rand_tensor(dt, { 9 }) }, &a);

        snprintf(what, sizeof what, "ensure_shape %s", ltf_dtype_name(dt));
        ltf_attrs e = shape_attrs({ 2, -1, 4 });
        same(what, LTF_OP_ENSURE_SHAPE, { rand_tensor(dt, { 2, 3, 4 }) }, &e);
        e = shape_attrs({});
        same(what, LTF_OP_ENSURE_SHAPE, { rand_tensor(dt, {}) }, &e);
        e.nints = -1;
        same(what, LTF_OP_ENSURE_SHAPE, { rand_tensor(dt, { 5 }) }, &e);
        snprintf(what, sizeof what, "ensure_shape %s mismatch", ltf_dtype_name(dt));
        e = shape_attrs({ 2, 5, 4 });
        same(what, LTF_OP_ENSURE_SHAPE, { rand_tensor(dt, { 2, 3, 4 }) }, &e);
        e = shape_attrs({ 2, 3 });
        same(what, LTF_OP_ENSURE_SHAPE, { rand_tensor(dt, { 2, 3, 4 }) }, &e);

        for (ltf_dtype it : INDEX) {
            snprintf(what, sizeof what, "sequence_mask %s lengths %s", ltf_dtype_name(dt), ltf_dtype_name(it));
            ltf_attrs m = attrs();
            m.i[1] = dt;
            for (int64_t maxlen : { 6, 0, 1, -1 }) {
                m.i[0] = maxlen;
                same(what, LTF_OP_SEQUENCE_MASK, { ints(it, { 2, 3 }, { 0, 3, -2, 6, 9, 1 }) }, &m);
                same(what, LTF_OP_SEQUENCE_MASK, { ints(it, {}, { 4 }) }, &m);     /* rank 0 */
                same(what, LTF_OP_SEQUENCE_MASK, { zeros(it, { 0 }) }, &m);        /* empty */
            }
        }
    }
    {   /* without an output ('maxlen' not given) the device kernel sizes and allocates it
        ** (alloc.cuh; test_cuda_kernels_alloc compares it with the CPU's) */
        ltf_attrs m = attrs();
        m.i[0] = -1;
        m.i[1] = LTF_DTYPE_BOOL;
        ltf_tensor *l = ints(LTF_DTYPE_INT32, { 2 }, { 1, 2 }), *o = NULL;
        ltf_status s = ((ltf_kernel_fn)ltf_gpu_host_kernel(LTF_OP_SEQUENCE_MASK))(
            ctx, ltf_op_get(LTF_OP_SEQUENCE_MASK), &l, 1, &m, &o, 1);
        CHECK(s == LTF_OK && o && ltf_tensor_rank(o) == 2 && ltf_tensor_dims(o)[1] == 2);
        ltf_tensor_release(o);
        ltf_tensor_release(l);
    }
}
/* }==== */

/* {==== image resizes */
static void test_image() {
    char what[128];
    /* (ih, iw) -> (oh, ow): up, down, mixed, identity, from and to 1x1, non-integer ratios */
    int64_t sizes[][4] = { { 3, 4, 7, 9 }, { 8, 10, 3, 4 }, { 5, 5, 2, 11 }, { 4, 6, 4, 6 },
                           { 1, 1, 5, 5 }, { 6, 7, 1, 1 }, { 7, 3, 10, 13 }, { 13, 17, 5, 6 },
                           { 1, 30, 1, 11 }, { 30, 1, 11, 1 }, { 3, 97, 2, 31 } };
    for (auto &s : sizes) {
        for (ltf_dtype dt : NUMERIC) {
            ltf_attrs a = shape_attrs({ s[2], s[3] });
            snprintf(what, sizeof what, "resize %s %lldx%lld -> %lldx%lld", ltf_dtype_name(dt), (long long)s[0],
                     (long long)s[1], (long long)s[2], (long long)s[3]);
            same(what, LTF_OP_RESIZE_NEAREST, { rand_tensor(dt, { 2, s[0], s[1], 3 }) }, &a);
            same(what, LTF_OP_RESIZE_NEAREST_GRAD, { rand_tensor(dt, { 2, s[2], s[3], 3 }),
                                                     zeros(LTF_DTYPE_FLOAT32, { 2, s[0], s[1], 3 }) }, &a);
            if (!is_float(dt)) continue;
            same(what, LTF_OP_RESIZE_BILINEAR, { rand_tensor(dt, { 2, s[0], s[1], 3 }) }, &a);
            same(what, LTF_OP_RESIZE_BILINEAR_GRAD, { rand_tensor(dt, { 2, s[2], s[3], 3 }),
                                                      zeros(LTF_DTYPE_INT32, { 2, s[0], s[1], 3 }) }, &a);
        }
    }
    /* nearest reads floorf((i + 0.5f) * (30 / 11.0f)) in float, as TensorFlow's kernel: output 5 of a
    ** 30-wide row resized to 11 reads pixel 15 ((2 * 5 + 1) * 15 / 11 = 15 exactly; 14 in double) */
    {
        ltf_attrs a = shape_attrs({ 1, 11 });
        ltf_tensor *x = zeros(LTF_DTYPE_INT32, { 1, 1, 30, 1 }), *o = zeros(LTF_DTYPE_INT32, { 1, 1, 11, 1 });
        for (int k = 0; k < 30; k++) ((int32_t *)ltf_tensor_data(x))[k] = k;
        ltf_kernel_fn k = (ltf_kernel_fn)ltf_gpu_host_kernel(LTF_OP_RESIZE_NEAREST);
        CHECK(k != NULL);
        ltf_status s = k(ctx, ltf_op_get(LTF_OP_RESIZE_NEAREST), &x, 1, &a, &o, 1);
        CHECK(s == LTF_OK);
        const int32_t want[11] = { 1, 4, 6, 9, 12, 15, 17, 20, 23, 25, 28 };
        for (int j = 0; j < 11 && s == LTF_OK; j++) CHECK(((int32_t *)ltf_tensor_data(o))[j] == want[j]);
        ltf_tensor_release(x);
        ltf_tensor_release(o);
    }
    /* uint8 gradients that wrap (many output pixels per input pixel), large int32 sums */
    {
        ltf_attrs a = attrs();
        same("resize_nearest_grad uint8 sums past 255", LTF_OP_RESIZE_NEAREST_GRAD,
             { rand_tensor(LTF_DTYPE_UINT8, { 1, 12, 12, 2 }), zeros(LTF_DTYPE_UINT8, { 1, 2, 2, 2 }) }, &a);
        ltf_tensor *g = zeros(LTF_DTYPE_INT32, { 1, 4, 4, 1 });
        for (int k = 0; k < 16; k++) ((int32_t *)ltf_tensor_data(g))[k] = INT32_MAX - k;
        same("resize_nearest_grad int32 past INT32_MAX", LTF_OP_RESIZE_NEAREST_GRAD,
             { g, zeros(LTF_DTYPE_INT32, { 1, 2, 2, 1 }) }, &a);
    }
    /* empty batch or channels; errors: batch/channels mismatch, bool images, a bilinear int image */
    {
        ltf_attrs a = shape_attrs({ 3, 2 });
        same("resize_bilinear empty batch", LTF_OP_RESIZE_BILINEAR, { rand_tensor(LTF_DTYPE_FLOAT32, { 0, 4, 4, 3 }) }, &a);
        same("resize_nearest no channels", LTF_OP_RESIZE_NEAREST, { rand_tensor(LTF_DTYPE_INT64, { 2, 4, 4, 0 }) }, &a);
        same("resize_bilinear_grad mismatch", LTF_OP_RESIZE_BILINEAR_GRAD,
             { rand_tensor(LTF_DTYPE_FLOAT64, { 2, 3, 2, 3 }), zeros(LTF_DTYPE_FLOAT64, { 1, 4, 4, 3 }) }, &a);
        same("resize_nearest_grad mismatch", LTF_OP_RESIZE_NEAREST_GRAD,
             { rand_tensor(LTF_DTYPE_INT32, { 2, 3, 2, 3 }), zeros(LTF_DTYPE_INT32, { 2, 4, 4, 1 }) }, &a);
        same("resize_nearest bool", LTF_OP_RESIZE_NEAREST, { rand_tensor(LTF_DTYPE_BOOL, { 1, 2, 2, 1 }) }, &a);
        same("resize_bilinear int32", LTF_OP_RESIZE_BILINEAR, { rand_tensor(LTF_DTYPE_INT32, { 1, 2, 2, 1 }) }, &a);
    }
}
/* }==== */

/* {==== band_part, diag, diag_part, matrix_transpose, split_like */
static void test_matrix_moves() {
    char what[96];
    for (ltf_dtype dt : ALL) {
        snprintf(what, sizeof what, "band_part %s", ltf_dtype_name(dt));
        int64_t bands[][2] = { { -1, -1 }, { 0, 0 }, { 1, -1 }, { -1, 2 }, { 10, 0 }, { 0, 3 } };
        for (auto &b : bands) {
            ltf_attrs a = attrs();
            a.i[0] = b[0];
            a.i[1] = b[1];
            same(what, LTF_OP_MATRIX_BAND_PART, { rand_tensor(dt, { 2, 4, 5 }) }, &a);
            same(what, LTF_OP_MATRIX_BAND_PART, { rand_tensor(dt, { 6, 3 }) }, &a);
            same(what, LTF_OP_MATRIX_BAND_PART, { rand_tensor(dt, { 0, 3, 3 }) }, &a);
        }

        snprintf(what, sizeof what, "diag %s", ltf_dtype_name(dt));
        ltf_attrs a = attrs();
        same(what, LTF_OP_MATRIX_DIAG, { rand_tensor(dt, { 2, 3 }) }, &a);
        same(what, LTF_OP_MATRIX_DIAG, { rand_tensor(dt, { 4 }) }, &a);
        a.i[0] = 3; a.i[1] = 5;
        same(what, LTF_OP_MATRIX_DIAG, { rand_tensor(dt, { 2, 2, 3 }) }, &a);
        a.i[0] = 5; a.i[1] = 3;
        same(what, LTF_OP_MATRIX_DIAG, { rand_tensor(dt, { 3 }) }, &a);
        a = attrs();
        same(what, LTF_OP_MATRIX_DIAG, { rand_tensor(dt, { 2, 3 }), rand_tensor(dt, { 2, 4, 3 }) }, &a);  /* like */
        snprintf(what, sizeof what, "diag %s does not fit", ltf_dtype_name(dt));
        a.i[0] = 4; a.i[1] = 5;
        same(what, LTF_OP_MATRIX_DIAG, { rand_tensor(dt, { 2, 3 }) }, &a);

        snprintf(what, sizeof what, "diag_part %s", ltf_dtype_name(dt));
        a = attrs();
        same(what, LTF_OP_MATRIX_DIAG_PART, { rand_tensor(dt, { 2, 3, 5 }) }, &a);
        same(what, LTF_OP_MATRIX_DIAG_PART, { rand_tensor(dt, { 4, 2 }) }, &a);
        same(what, LTF_OP_MATRIX_DIAG_PART, { rand_tensor(dt, { 2, 1, 3, 3 }) }, &a);
        same(what, LTF_OP_MATRIX_DIAG_PART, { rand_tensor(dt, { 3, 0, 4 }) }, &a);

        snprintf(what, sizeof what, "matrix_transpose %s", ltf_dtype_name(dt));
        same(what, LTF_OP_MATRIX_TRANSPOSE, { rand_tensor(dt, { 2, 3, 4 }) }, &a);
        same(what, LTF_OP_MATRIX_TRANSPOSE, { rand_tensor(dt, { 5, 1 }) }, &a);
        same(what, LTF_OP_MATRIX_TRANSPOSE, { rand_tensor(dt, { 2, 1, 3, 2 }) }, &a);
        same(what, LTF_OP_MATRIX_TRANSPOSE, { rand_tensor(dt, { 2, 0, 3 }) }, &a);
        snprintf(what, sizeof what, "matrix_transpose %s rank 1", ltf_dtype_name(dt));
        same(what, LTF_OP_MATRIX_TRANSPOSE, { rand_tensor(dt, { 4 }) }, &a);

        snprintf(what, sizeof what, "split_like %s", ltf_dtype_name(dt));
        a.i[0] = 0;
        run_multi(what, LTF_OP_SPLIT_LIKE, { rand_tensor(dt, { 5, 3 }), zeros(dt, { 2, 3 }), zeros(dt, { 3, 7 }) }, &a);
        a.i[0] = 1;
        run_multi(what, LTF_OP_SPLIT_LIKE, { rand_tensor(dt, { 2, 5, 2 }), zeros(dt, { 1, 1 }), zeros(dt, { 2, 4 }),
                                             zeros(dt, { 2, 0 }) }, &a);
    }
    {   /* more parts than the CPU takes: refused by both (Unimplemented) */
        ltf_attrs a = attrs();
        std::vector<ltf_tensor *> in = { rand_tensor(LTF_DTYPE_FLOAT32, { LTF_ATTR_LIST_MAX + 1 }) };
        for (int k = 0; k <= LTF_ATTR_LIST_MAX; k++) in.push_back(zeros(LTF_DTYPE_FLOAT32, { 1 }));
        std::vector<ltf_tensor *> outs(in.size() - 1);
        ltf_type ty[LTF_ATTR_LIST_MAX + 1];
        int nt = 0;
        CHECK(ltf_op_infer(ctx, ltf_op_get(LTF_OP_SPLIT_LIKE), in.data(), (int)in.size(), &a, ty,
                           LTF_ATTR_LIST_MAX + 1, &nt) == LTF_OK);
        for (size_t k = 0; k < outs.size(); k++) outs[k] = ltf_tensor_new(ctx, ty[k].dtype, ty[k].rank, ty[k].dims);
        ltf_status s1 = ltf_op_get(LTF_OP_SPLIT_LIKE)->kernel[LTF_DEVICE_CPU](
            ctx, ltf_op_get(LTF_OP_SPLIT_LIKE), in.data(), (int)in.size(), &a, outs.data(), (int)outs.size());
        ltf_status s2 = ((ltf_kernel_fn)ltf_gpu_host_kernel(LTF_OP_SPLIT_LIKE))(
            ctx, ltf_op_get(LTF_OP_SPLIT_LIKE), in.data(), (int)in.size(), &a, outs.data(), (int)outs.size());
        CHECK(s1 == LTF_ERR_UNIMPLEMENTED && s2 == LTF_ERR_UNIMPLEMENTED);
        for (ltf_tensor *t : outs) ltf_tensor_release(t);
        for (ltf_tensor *t : in) ltf_tensor_release(t);
    }
}
/* }==== */

/* {==== check_numerics: a copy, or the CPU's error text */
static void numerics_case(const char *what, ltf_tensor *x, const char *msg) {
    ltf_attrs a = attrs();
    snprintf(a.s, sizeof a.s, "%s", msg);
    ltf_tensor *want = NULL;
    int nout = 0;
    ltf_status s1 = ltf_op_run(ctx, LTF_OP_CHECK_NUMERICS, &x, 1, &a, &want, 1, &nout);
    char cpu_msg[512];
    snprintf(cpu_msg, sizeof cpu_msg, "%s", ltf_ctx_error(ctx));
    ltf_tensor *got = ltf_tensor_new(ctx, ltf_tensor_dtype(x), ltf_tensor_rank(x), ltf_tensor_dims(x));
    const void *k = ltf_gpu_host_kernel(LTF_OP_CHECK_NUMERICS);
    CHECK(k != NULL);
    ltf_status s2 = k ? ((ltf_kernel_fn)k)(ctx, ltf_op_get(LTF_OP_CHECK_NUMERICS), &x, 1, &a, &got, 1) : LTF_OK;
    check_count++;
    if (s1 != s2) {
        check_failures++;
        fprintf(stderr, "%s: CPU %d, device %d\n", what, (int)s1, (int)s2);
    } else if (s1 != LTF_OK) {
        if (strcmp(cpu_msg, ltf_ctx_error(ctx)) != 0 || !strstr(cpu_msg, msg)) {
            check_failures++;
            fprintf(stderr, "%s: CPU \"%s\", device \"%s\"\n", what, cpu_msg, ltf_ctx_error(ctx));
        }
    } else if (!compare(what, want, got, 0, 0)) {
        check_failures++;
    }
    ltf_tensor_release(want);
    ltf_tensor_release(got);
    ltf_tensor_release(x);
}

static void test_check_numerics() {
    char what[96];
    for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 }) {
        const double specials[][2] = { { 1.5, -2 }, { NAN, 0 }, { INFINITY, 1 }, { -INFINITY, NAN } };
        for (auto &sp : specials) {
            ltf_tensor *x = rand_tensor(dt, { 3, 50 });
            /* the special values at two places far apart */
            for (int j = 0; j < 2; j++) {
                int64_t at = j ? 149 : 17;
                if (dt == LTF_DTYPE_FLOAT32) ((float *)ltf_tensor_data(x))[at] = (float)sp[j];
                else ((double *)ltf_tensor_data(x))[at] = sp[j];
            }
            snprintf(what, sizeof what, "check_numerics %s %g %g", ltf_dtype_name(dt), sp[0], sp[1]);
            numerics_case(what, x, "layer 3 output");
        }
        numerics_case("check_numerics rank 0", rand_tensor(dt, {}), "scalar");
        numerics_case("check_numerics empty", rand_tensor(dt, { 0, 4 }), "empty");
    }
    ltf_attrs a = attrs();
    same("check_numerics int32", LTF_OP_CHECK_NUMERICS, { rand_tensor(LTF_DTYPE_INT32, { 4 }) }, &a);
}
/* }==== */

int main(void) {
    ctx = ltf_ctx_new();
    test_gather_nd();
    test_scatter();
    test_roll_ensure_mask();
    test_image();
    test_matrix_moves();
    test_check_numerics();
    /* ops sizing their outputs from the data have device kernels (alloc.cuh) */
    CHECK(ltf_gpu_host_kernel(LTF_OP_WHERE_INDICES) != NULL);
    CHECK(ltf_gpu_host_kernel(LTF_OP_UNIQUE) != NULL);
    ltf_ctx_release(ctx);
    CHECK_DONE();
}
