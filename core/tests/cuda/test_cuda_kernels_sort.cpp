/*
** test_cuda_kernels_sort.cpp: the device bodies of sort, argsort, top_k,
** searchsorted and sort_grad (core/cuda/kernels/sort.cuh), built for the
** host, against the CPU kernels (cpu/sort.c) on the same inputs, BIT FOR
** BIT: every dtype the ops take, ascending and descending, many ties
** (integers in [-20, 20], uint8 in [0, 255]) and special floats (NaN, +-inf,
** +-0: NaN sorts above +inf, -0 below +0 for sort's values and equal to it
** for the positions), rows of lengths 1, 2, 33, 64, 1000 (merge runs of
** every parity), empty tensors, k = 0, both index dtypes, duplicate
** indices in sort_grad, and the CPU's errors (same status kind).
*/
#include "kernel_check.h"

/* Run 'op' (nout outputs) on the CPU and through the host-built device
** kernel; outputs must agree byte for byte (or both must fail alike). */
static void run_exact(const char *what, ltf_op_id op, std::vector<ltf_tensor *> in, const ltf_attrs *a, int nout) {
    ltf_tensor *want[2] = { NULL, NULL }, *got[2] = { NULL, NULL };
    int nw = 0;
    ltf_status s1 = ltf_op_run(ctx, op, in.data(), (int)in.size(), a, want, nout, &nw);
    const void *k = ltf_gpu_host_kernel(op);
    ltf_kernel_fn fn = (ltf_kernel_fn)k;
    check_count++;
    if (!k) {
        check_failures++;
        fprintf(stderr, "%s: no device kernel\n", what);
    } else if (s1 != LTF_OK) {
        ltf_type ty[2];
        int nty = 0;
        if (ltf_op_infer(ctx, ltf_op_get(op), in.data(), (int)in.size(), a, ty, 2, &nty) != LTF_OK) nty = 0;
        for (int i = 0; i < nout; i++)
            got[i] = i < nty ? ltf_tensor_new(ctx, ty[i].dtype, ty[i].rank, ty[i].dims)
                             : ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 0, NULL);
        ltf_status s2 = fn(ctx, ltf_op_get(op), in.data(), (int)in.size(), a, got, nout);
        if (s2 != s1) {
            check_failures++;
            fprintf(stderr, "%s: CPU failed (%d: %s) but the device kernel gave %d\n", what, (int)s1,
                    ltf_ctx_error(ctx), (int)s2);
        }
    } else {
        for (int i = 0; i < nout; i++)
            got[i] = ltf_tensor_new(ctx, ltf_tensor_dtype(want[i]), ltf_tensor_rank(want[i]), ltf_tensor_dims(want[i]));
        ltf_status s2 = fn(ctx, ltf_op_get(op), in.data(), (int)in.size(), a, got, nout);
        if (s2 != LTF_OK) {
            check_failures++;
            fprintf(stderr, "%s: device kernel failed: %s\n", what, ltf_ctx_error(ctx));
        }
        for (int i = 0; s2 == LTF_OK && i < nout; i++) {
            size_t bytes = (size_t)ltf_tensor_num_elements(want[i]) * ltf_dtype_size(ltf_tensor_dtype(want[i]));
            if (bytes && memcmp(ltf_tensor_data(want[i]), ltf_tensor_data(got[i]), bytes) != 0) {
                check_failures++;
                fprintf(stderr, "%s: output %d differs from the CPU's\n", what, i + 1);
                compare(what, want[i], got[i], 0, 0);   /* prints the first differing element */
                break;
            }
        }
    }
    for (int i = 0; i < 2; i++) {
        ltf_tensor_release(want[i]);
        ltf_tensor_release(got[i]);
    }
    for (ltf_tensor *t : in) ltf_tensor_release(t);
}

static const ltf_dtype SORTABLE[] = { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64, LTF_DTYPE_INT32, LTF_DTYPE_INT64,
                                      LTF_DTYPE_UINT8 };
static const std::vector<std::vector<int64_t>> SHAPES = {
    { 1 }, { 2 }, { 7 }, { 3, 5 }, { 2, 3, 33 }, { 2, 64 }, { 1000 }, { 4, 0 }, { 0, 5 }, { 3, 1 },
};

static ltf_tensor *values(ltf_dtype dt, const std::vector<int64_t> &sh, int special) {
    return rand_tensor(dt, sh, is_float(dt) && special ? GEN_SPECIAL : GEN_PLAIN);
}

static void test_sort_argsort() {
    for (ltf_dtype dt : SORTABLE)
        for (const auto &sh : SHAPES)
            for (int special = 0; special < (is_float(dt) ? 2 : 1); special++)
                for (int desc = 0; desc < 2; desc++) {
                    char what[128];
                    ltf_attrs a = attrs();
                    a.i[0] = desc;
                    snprintf(what, sizeof what, "sort %s %zu-d (last %lld) desc %d special %d", ltf_dtype_name(dt),
                             sh.size(), (long long)sh.back(), desc, special);
                    run_exact(what, LTF_OP_SORT, { values(dt, sh, special) }, &a, 1);
                    for (int it : { 0, (int)LTF_DTYPE_INT64 + 1 }) {
                        a.i[1] = it;
                        snprintf(what, sizeof what, "argsort %s %zu-d (last %lld) desc %d special %d index %d",
                                 ltf_dtype_name(dt), sh.size(), (long long)sh.back(), desc, special, it);
                        run_exact(what, LTF_OP_ARGSORT, { values(dt, sh, special) }, &a, 1);
                    }
                }
    /* every element equal, and a long row of a few distinct values (stability decides everything) */
    for (ltf_dtype dt : SORTABLE) {
        ltf_tensor *x = zeros(dt, { 3, 257 });
        ltf_attrs a = attrs();
        a.i[0] = 1;
        run_exact("argsort all equal, descending", LTF_OP_ARGSORT, { x }, &a, 1);
        ltf_tensor *y = zeros(dt, { 513 });
        for (int64_t i = 0; i < 513; i++) {
            int v = (int)(rnd() % 3);
            switch (dt) {
            case LTF_DTYPE_FLOAT32: ((float *)ltf_tensor_data(y))[i] = (float)v; break;
            case LTF_DTYPE_FLOAT64: ((double *)ltf_tensor_data(y))[i] = v; break;
            case LTF_DTYPE_INT32: ((int32_t *)ltf_tensor_data(y))[i] = v; break;
            case LTF_DTYPE_INT64: ((int64_t *)ltf_tensor_data(y))[i] = v; break;
            default: ((uint8_t *)ltf_tensor_data(y))[i] = (uint8_t)v; break;
            }
        }
        ltf_tensor_retain(y);
        run_exact("argsort three values", LTF_OP_ARGSORT, { y }, &a, 1);
        a.i[0] = 0;
        run_exact("argsort three values, ascending", LTF_OP_ARGSORT, { y }, &a, 1);
    }
    /* -0 and +0: sort keeps them apart (-0 first), argsort treats them as equal (input order) */
    {
        ltf_tensor *x = zeros(LTF_DTYPE_FLOAT32, { 6 });
        float v[6] = { 0.0f, -0.0f, 0.0f, -0.0f, NAN, -NAN };
        memcpy(ltf_tensor_data(x), v, sizeof v);
        ltf_attrs a = attrs();
        ltf_tensor_retain(x);
        run_exact("sort of signed zeros", LTF_OP_SORT, { x }, &a, 1);
        run_exact("argsort of signed zeros", LTF_OP_ARGSORT, { x }, &a, 1);
    }
    /* the CPU's errors */
    ltf_attrs a = attrs();
    run_exact("sort of bool", LTF_OP_SORT, { rand_tensor(LTF_DTYPE_BOOL, { 4 }) }, &a, 1);
    run_exact("sort of a scalar", LTF_OP_SORT, { rand_tensor(LTF_DTYPE_FLOAT32, {}) }, &a, 1);
    a.i[1] = LTF_DTYPE_FLOAT32 + 1;
    run_exact("argsort to float32", LTF_OP_ARGSORT, { rand_tensor(LTF_DTYPE_INT32, { 4 }) }, &a, 1);
}

static void test_top_k() {
    for (ltf_dtype dt : SORTABLE)
        for (const auto &sh : SHAPES)
            for (int special = 0; special < (is_float(dt) ? 2 : 1); special++) {
                int64_t n = sh.back();
                for (int64_t k : { (int64_t)0, (int64_t)1, n / 2, n }) {
                    if (k > n) continue;
                    for (int it : { 0, (int)LTF_DTYPE_INT64 + 1 }) {
                        char what[128];
                        snprintf(what, sizeof what, "top_k %s %zu-d (last %lld) k %lld special %d index %d",
                                 ltf_dtype_name(dt), sh.size(), (long long)n, (long long)k, special, it);
                        ltf_attrs a = attrs();
                        a.i[0] = k;
                        a.i[1] = it;
                        run_exact(what, LTF_OP_TOP_K, { values(dt, sh, special) }, &a, 2);
                    }
                }
            }
    ltf_attrs a = attrs();
    a.i[0] = 6;
    run_exact("top_k with k above the row", LTF_OP_TOP_K, { rand_tensor(LTF_DTYPE_FLOAT32, { 2, 5 }) }, &a, 2);
    a.i[0] = -1;
    run_exact("top_k with k < 0", LTF_OP_TOP_K, { rand_tensor(LTF_DTYPE_FLOAT32, { 2, 5 }) }, &a, 2);
    a.i[0] = 1;
    run_exact("top_k of a scalar", LTF_OP_TOP_K, { rand_tensor(LTF_DTYPE_FLOAT32, {}) }, &a, 2);
    run_exact("top_k of bool", LTF_OP_TOP_K, { rand_tensor(LTF_DTYPE_BOOL, { 3 }) }, &a, 2);
    a.i[1] = LTF_DTYPE_UINT8 + 1;
    run_exact("top_k to uint8 indices", LTF_OP_TOP_K, { rand_tensor(LTF_DTYPE_FLOAT64, { 3 }) }, &a, 2);
}

/* A row-sorted tensor (CPU sort) of 'sh'. */
static ltf_tensor *sorted(ltf_dtype dt, const std::vector<int64_t> &sh, int special) {
    ltf_tensor *x = values(dt, sh, special), *s = NULL;
    int n = 0;
    ltf_attrs a = attrs();
    CHECK(ltf_op_run(ctx, LTF_OP_SORT, &x, 1, &a, &s, 1, &n) == LTF_OK);
    ltf_tensor_release(x);
    return s;
}

static void test_searchsorted() {
    const std::vector<std::vector<int64_t>> seq = { { 9 }, { 3, 17 }, { 2, 2, 64 }, { 0 }, { 2, 0 }, { 1 } };
    const std::vector<std::vector<int64_t>> val = { { 12 }, { 3, 8 }, { 2, 2, 5 }, { 4 }, { 2, 3 }, { 0 } };
    for (ltf_dtype dt : SORTABLE)
        for (size_t c = 0; c < seq.size(); c++)
            for (int special = 0; special < (is_float(dt) ? 2 : 1); special++)
                for (int side = 0; side < 2; side++)
                    for (int ot : { 0, (int)LTF_DTYPE_INT64 + 1 }) {
                        char what[128];
                        snprintf(what, sizeof what, "searchsorted %s case %zu side %d special %d out %d",
                                 ltf_dtype_name(dt), c, side, special, ot);
                        ltf_attrs a = attrs();
                        a.i[0] = side;
                        a.i[1] = ot;
                        run_exact(what, LTF_OP_SEARCHSORTED, { sorted(dt, seq[c], special), values(dt, val[c], special) },
                                  &a, 1);
                    }
    ltf_attrs a = attrs();
    run_exact("searchsorted of two dtypes", LTF_OP_SEARCHSORTED,
              { sorted(LTF_DTYPE_FLOAT32, { 4 }, 0), rand_tensor(LTF_DTYPE_FLOAT64, { 2 }) }, &a, 1);
    run_exact("searchsorted of other leading dims", LTF_OP_SEARCHSORTED,
              { sorted(LTF_DTYPE_INT32, { 2, 4 }, 0), rand_tensor(LTF_DTYPE_INT32, { 3, 2 }) }, &a, 1);
    run_exact("searchsorted of a scalar", LTF_OP_SEARCHSORTED,
              { sorted(LTF_DTYPE_INT32, { 4 }, 0), rand_tensor(LTF_DTYPE_INT32, {}) }, &a, 1);
    a.i[0] = 2;
    run_exact("searchsorted with side 2", LTF_OP_SEARCHSORTED,
              { sorted(LTF_DTYPE_INT32, { 4 }, 0), rand_tensor(LTF_DTYPE_INT32, { 2 }) }, &a, 1);
}

/* Integer tensor of 'sh' (dtype it) with values from 'v' (cycled). */
static ltf_tensor *ints(ltf_dtype it, const std::vector<int64_t> &sh, const std::vector<int64_t> &v) {
    ltf_tensor *t = zeros(it, sh);
    int64_t n = ltf_tensor_num_elements(t);
    for (int64_t i = 0; i < n; i++) {
        int64_t x = v[(size_t)i % v.size()];
        if (it == LTF_DTYPE_INT32) ((int32_t *)ltf_tensor_data(t))[i] = (int32_t)x;
        else ((int64_t *)ltf_tensor_data(t))[i] = x;
    }
    return t;
}

static void test_sort_grad() {
    for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 })
        for (ltf_dtype it : { LTF_DTYPE_INT32, LTF_DTYPE_INT64 }) {
            /* the gradient of top_k: positions from the CPU's top_k */
            for (int64_t k : { 0, 1, 3, 9 }) {
                ltf_tensor *x = rand_tensor(dt, { 4, 9 }), *o[2] = { NULL, NULL };
                ltf_attrs a = attrs();
                a.i[0] = k;
                a.i[1] = it == LTF_DTYPE_INT64 ? LTF_DTYPE_INT64 + 1 : 0;
                int n = 0;
                CHECK(ltf_op_run(ctx, LTF_OP_TOP_K, &x, 1, &a, o, 2, &n) == LTF_OK);
                ltf_tensor_release(o[0]);
                char what[96];
                snprintf(what, sizeof what, "sort_grad %s %s of top_k k %lld", ltf_dtype_name(dt), ltf_dtype_name(it),
                         (long long)k);
                ltf_attrs b = attrs();
                run_exact(what, LTF_OP_SORT_GRAD, { rand_tensor(dt, { 4, k }), o[1], x }, &b, 1);
            }
            /* duplicates: summed in position order (the CPU's order of additions) */
            ltf_attrs b = attrs();
            run_exact("sort_grad with duplicates", LTF_OP_SORT_GRAD,
                      { rand_tensor(dt, { 2, 7 }), ints(it, { 2, 7 }, { 3, 1, 3, 3, 5, 1, 2, 2, 2, 4, 1, 2 }),
                        zeros(dt, { 2, 5 }) }, &b, 1);
            run_exact("sort_grad of a long row", LTF_OP_SORT_GRAD,
                      { rand_tensor(dt, { 300 }), ints(it, { 300 }, { 7, 250, 1, 7, 99, 300, 7 }), zeros(dt, { 300 }) },
                      &b, 1);
            run_exact("sort_grad 3-d", LTF_OP_SORT_GRAD,
                      { rand_tensor(dt, { 2, 3, 4 }), ints(it, { 2, 3, 4 }, { 2, 1, 2, 5, 3 }), zeros(dt, { 2, 3, 6 }) },
                      &b, 1);
            run_exact("sort_grad into an empty row", LTF_OP_SORT_GRAD,
                      { rand_tensor(dt, { 0, 3 }), ints(it, { 0, 3 }, { 1 }), zeros(dt, { 0, 4 }) }, &b, 1);
            /* the CPU's error: an index out of range (kind; the host build reports it at once) */
            run_exact("sort_grad index 0", LTF_OP_SORT_GRAD,
                      { rand_tensor(dt, { 2, 2 }), ints(it, { 2, 2 }, { 1, 0 }), zeros(dt, { 2, 3 }) }, &b, 1);
            run_exact("sort_grad index past the row", LTF_OP_SORT_GRAD,
                      { rand_tensor(dt, { 2, 2 }), ints(it, { 2, 2 }, { 1, 4 }), zeros(dt, { 2, 3 }) }, &b, 1);
        }
    ltf_attrs b = attrs();
    run_exact("sort_grad of int32 g", LTF_OP_SORT_GRAD,
              { rand_tensor(LTF_DTYPE_INT32, { 2 }), ints(LTF_DTYPE_INT32, { 2 }, { 1 }), zeros(LTF_DTYPE_INT32, { 3 }) },
              &b, 1);
    run_exact("sort_grad of float indices", LTF_OP_SORT_GRAD,
              { rand_tensor(LTF_DTYPE_FLOAT32, { 2 }), rand_tensor(LTF_DTYPE_FLOAT32, { 2 }),
                zeros(LTF_DTYPE_FLOAT32, { 3 }) }, &b, 1);
    run_exact("sort_grad of other shapes", LTF_OP_SORT_GRAD,
              { rand_tensor(LTF_DTYPE_FLOAT32, { 2, 2 }), ints(LTF_DTYPE_INT32, { 2, 3 }, { 1 }),
                zeros(LTF_DTYPE_FLOAT32, { 2, 3 }) }, &b, 1);
}

int main(void) {
    ctx = ltf_ctx_new();
    test_sort_argsort();
    test_top_k();
    test_searchsorted();
    test_sort_grad();
    ltf_ctx_release(ctx);
    CHECK_DONE();
}
