/*
** test_cuda_kernels_alloc.cpp: the device bodies of the ops that size their
** outputs from the data (core/cuda/kernels/alloc.cuh): where_indices,
** unique, unique_with_counts, bincount, segment_sum/mean/max and
** sequence_mask without 'maxlen', built for the host, against the CPU
** kernels (cpu/indexing.c, cpu/sort.c) on the same inputs, BIT FOR BIT
** (shapes, dtypes and bytes of every output; the float sums too: zero
** tolerance), except that any NaN equals any NaN.
**
** The device kernels are called as the engine calls them for these ops:
** with out[] NULL, so they allocate their outputs themselves (through
** ctx->core_api); after a failure every out[] must still be NULL (what
** they allocated released: the ASan build checks the leaks). Errors the
** CPU kernel raises when it runs must come with the same kind AND message;
** those the inference raises (dtype, attributes), with the same kind.
** Inputs: every dtype each op takes, empty and rank-0 inputs where legal,
** lengths past one scan chunk (256) and merge runs of every parity, many
** duplicates, NaN / +-0 / +-inf for unique.
*/
#include "kernel_check.h"

/* Run 'op' (nout outputs) on the CPU and through the host-built device
** kernel with out[] NULL; outputs must agree in dtype, shape and bytes;
** failures in kind (and message when 'msg'). */
static void run_alloc(const char *what, ltf_op_id op, std::vector<ltf_tensor *> in, const ltf_attrs *a, int nout,
                      bool msg = true) {
    ltf_tensor *want[3] = { NULL, NULL, NULL }, *got[3] = { NULL, NULL, NULL };
    int nw = 0;
    ltf_status s1 = ltf_op_run(ctx, op, in.data(), (int)in.size(), a, want, nout, &nw);
    char cpu_msg[1024];
    snprintf(cpu_msg, sizeof cpu_msg, "%s", s1 != LTF_OK ? ltf_ctx_error(ctx) : "");
    ltf_kernel_fn fn = (ltf_kernel_fn)ltf_gpu_host_kernel(op);
    check_count++;
    if (!fn) {
        check_failures++;
        fprintf(stderr, "%s: no device kernel\n", what);
    } else {
        ltf_status s2 = fn(ctx, ltf_op_get(op), in.data(), (int)in.size(), a, got, nout);
        if (s1 != LTF_OK) {
            if (s2 != s1) {
                check_failures++;
                fprintf(stderr, "%s: CPU failed (%d: %s) but the device kernel gave %d\n", what, (int)s1, cpu_msg,
                        (int)s2);
            } else if (msg && strcmp(cpu_msg, ltf_ctx_error(ctx)) != 0) {
                check_failures++;
                fprintf(stderr, "%s: CPU said \"%s\", the device kernel \"%s\"\n", what, cpu_msg, ltf_ctx_error(ctx));
            }
            for (int i = 0; i < nout; i++)
                if (got[i]) {
                    check_failures++;
                    fprintf(stderr, "%s: output %d left after a failure\n", what, i + 1);
                }
        } else if (s2 != LTF_OK) {
            check_failures++;
            fprintf(stderr, "%s: device kernel failed: %s\n", what, ltf_ctx_error(ctx));
        } else {
            for (int i = 0; i < nout; i++) {
                const ltf_tensor *w = want[i], *g = got[i];
                bool same = g && ltf_tensor_dtype(w) == ltf_tensor_dtype(g) && ltf_tensor_rank(w) == ltf_tensor_rank(g);
                for (int d = 0; same && d < ltf_tensor_rank(w); d++) same = ltf_tensor_dims(w)[d] == ltf_tensor_dims(g)[d];
                if (!same) {
                    check_failures++;
                    fprintf(stderr, "%s: output %d has another dtype or shape than the CPU's\n", what, i + 1);
                    break;
                }
                size_t bytes = (size_t)ltf_tensor_num_elements(w) * ltf_dtype_size(ltf_tensor_dtype(w));
                /* bytes, but any NaN equals any NaN (their sign and payload
                ** are the compiler's and the device's: a GPU makes canonical NaNs) */
                if (bytes && memcmp(ltf_tensor_data(w), ltf_tensor_data(g), bytes) != 0 && !compare(what, w, g, 0, 0)) {
                    check_failures++;
                    fprintf(stderr, "%s (%s, %s): output %d differs from the CPU's\n", what, ltf_op_name(op),
                            ltf_dtype_name(ltf_tensor_dtype(w)), i + 1);
                    break;
                }
            }
        }
    }
    for (int i = 0; i < 3; i++) {
        ltf_tensor_release(want[i]);
        ltf_tensor_release(got[i]);
    }
    for (ltf_tensor *t : in) ltf_tensor_release(t);
}

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

/* A random tensor with about two elements in three zero. */
static ltf_tensor *sparse(ltf_dtype dt, std::vector<int64_t> dims, int gen = GEN_PLAIN) {
    ltf_tensor *t = rand_tensor(dt, dims, gen);
    size_t es = ltf_dtype_size(dt);
    char *p = (char *)ltf_tensor_data(t);
    for (int64_t i = 0; i < ltf_tensor_num_elements(t); i++)
        if (rnd() % 3 != 0) memset(p + (size_t)i * es, 0, es);
    return t;
}

/* A vector of n values from a few distinct ones (floats: NaN, +-0, +-inf among them). */
static ltf_tensor *dups(ltf_dtype dt, int64_t n, int distinct) {
    static const double fv[] = { NAN, 0.0, -0.0, 1.5, -2.0, INFINITY, -INFINITY, 3.25, 7.0, -0.5 };
    ltf_tensor *t = zeros(dt, { n });
    void *p = ltf_tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        int k = (int)(rnd() % (uint64_t)distinct);
        switch (dt) {
        case LTF_DTYPE_FLOAT32: ((float *)p)[i] = (float)fv[k % 10]; break;
        case LTF_DTYPE_FLOAT64: ((double *)p)[i] = fv[k % 10]; break;
        case LTF_DTYPE_INT32: ((int32_t *)p)[i] = k * 7 - 20; break;
        case LTF_DTYPE_INT64: ((int64_t *)p)[i] = (int64_t)k * 1000000007 - 5; break;
        case LTF_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)(k * 37); break;
        default: ((uint8_t *)p)[i] = (uint8_t)(k & 1); break;
        }
    }
    return t;
}

static void test_where() {
    ltf_attrs a = attrs();
    const std::vector<std::vector<int64_t>> shapes = { {}, { 0 }, { 1 }, { 7 }, { 3, 4 }, { 2, 3, 5 }, { 1000 },
                                                       { 2, 0, 3 }, { 3, 257 }, { 2, 1, 3, 1, 2 } };
    for (ltf_dtype dt : ALL)
        for (const auto &sh : shapes) {
            run_alloc("where_indices sparse", LTF_OP_WHERE_INDICES, { sparse(dt, sh) }, &a, 1);
            run_alloc("where_indices dense", LTF_OP_WHERE_INDICES,
                      { rand_tensor(dt, sh, is_float(dt) ? GEN_SPECIAL : GEN_NONZERO) }, &a, 1);
            run_alloc("where_indices all false", LTF_OP_WHERE_INDICES, { zeros(dt, sh) }, &a, 1);
        }
    ltf_tensor *s = ltf_tensor_new(ctx, LTF_DTYPE_STRING, 1, std::vector<int64_t>{ 2 }.data());
    run_alloc("where_indices of strings", LTF_OP_WHERE_INDICES, { s }, &a, 1, false);
}

static void test_unique() {
    for (int code = 0; code < 2; code++) {
        ltf_op_id op = code ? LTF_OP_UNIQUE_WITH_COUNTS : LTF_OP_UNIQUE;
        int nout = code ? 3 : 2;
        for (int64_t idt : { (int64_t)0, (int64_t)LTF_DTYPE_INT32, (int64_t)LTF_DTYPE_INT64 }) {
            ltf_attrs a = attrs();
            a.i[0] = idt;
            for (ltf_dtype dt : ALL)
                for (int64_t n : { 0, 1, 2, 3, 33, 64, 300, 1000 }) {
                    run_alloc("unique few values", op, { dups(dt, n, 10) }, &a, nout);
                    run_alloc("unique two values", op, { dups(dt, n, 2) }, &a, nout);
                    run_alloc("unique random", op, { rand_tensor(dt, { n }, is_float(dt) ? GEN_SPECIAL : GEN_PLAIN) },
                              &a, nout);
                }
            run_alloc("unique of a matrix", op, { rand_tensor(LTF_DTYPE_INT32, { 2, 3 }) }, &a, nout, false);
            run_alloc("unique of a scalar", op, { rand_tensor(LTF_DTYPE_FLOAT32, {}) }, &a, nout, false);
        }
        ltf_attrs b = attrs();
        b.i[0] = LTF_DTYPE_FLOAT32;
        run_alloc("unique with float indices", op, { rand_tensor(LTF_DTYPE_INT32, { 4 }) }, &b, nout, false);
    }
}

/* Non-negative integers below 'hi'. */
static ltf_tensor *counts_arr(ltf_dtype it, const std::vector<int64_t> &sh, int64_t hi) {
    ltf_tensor *t = zeros(it, sh);
    for (int64_t i = 0; i < ltf_tensor_num_elements(t); i++) {
        int64_t v = (int64_t)(rnd() % (uint64_t)hi);
        if (it == LTF_DTYPE_INT32) ((int32_t *)ltf_tensor_data(t))[i] = (int32_t)v;
        else ((int64_t *)ltf_tensor_data(t))[i] = v;
    }
    return t;
}

static void test_bincount() {
    const std::vector<std::vector<int64_t>> shapes = { { 0 }, {}, { 1 }, { 9 }, { 4, 5 }, { 700 }, { 3, 0 }, { 2, 3, 4 } };
    const ltf_dtype wts[] = { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64, LTF_DTYPE_INT32, LTF_DTYPE_INT64 };
    for (ltf_dtype it : { LTF_DTYPE_INT32, LTF_DTYPE_INT64 })
        for (const auto &sh : shapes)
            for (int64_t minl : { 0, 5, 40 })
                for (int64_t maxl : { -1, 0, 3 })
                    for (int flags : { 0, 1, 2, 3 }) {
                        if ((flags & 2) && sh.empty()) continue;
                        ltf_attrs a = attrs();
                        a.i[0] = minl;
                        a.i[1] = maxl;
                        a.i[2] = flags;
                        for (ltf_dtype ot : wts) {   /* counts in each output dtype */
                            a.i[3] = ot + 1;
                            run_alloc("bincount counts", LTF_OP_BINCOUNT, { counts_arr(it, sh, 12) }, &a, 1);
                        }
                        a.i[3] = 0;
                        if (flags & 1) continue;
                        for (ltf_dtype wt : wts)
                            run_alloc("bincount weights", LTF_OP_BINCOUNT,
                                      { counts_arr(it, sh, 12), rand_tensor(wt, sh) }, &a, 1);
                    }
    ltf_attrs a = attrs();
    run_alloc("bincount of many equal values (float sums in order)", LTF_OP_BINCOUNT,
              { counts_arr(LTF_DTYPE_INT32, { 5000 }, 3), rand_tensor(LTF_DTYPE_FLOAT32, { 5000 }) }, &a, 1);
    run_alloc("bincount of a large value", LTF_OP_BINCOUNT, { ints(LTF_DTYPE_INT64, { 3 }, { 1, 2000, 4 }) }, &a, 1);
    for (ltf_dtype it : { LTF_DTYPE_INT32, LTF_DTYPE_INT64 }) {
        run_alloc("bincount of a negative value", LTF_OP_BINCOUNT, { ints(it, { 6 }, { 1, 2, 0, -3, 4, -1 }) }, &a,
                  1);
        run_alloc("bincount of a negative value (weights)", LTF_OP_BINCOUNT,
                  { ints(it, { 2, 2 }, { -7, 1 }), rand_tensor(LTF_DTYPE_FLOAT64, { 2, 2 }) }, &a, 1);
        run_alloc("bincount with fewer weights", LTF_OP_BINCOUNT,
                  { ints(it, { 6 }, { 1 }), rand_tensor(LTF_DTYPE_FLOAT32, { 5 }) }, &a, 1, false);
    }
    run_alloc("bincount of floats", LTF_OP_BINCOUNT, { rand_tensor(LTF_DTYPE_FLOAT32, { 3 }) }, &a, 1, false);
    ltf_attrs b = attrs();
    b.i[2] = 1;
    run_alloc("bincount binary with weights", LTF_OP_BINCOUNT,
              { ints(LTF_DTYPE_INT32, { 3 }, { 1 }), rand_tensor(LTF_DTYPE_FLOAT32, { 3 }) }, &b, 1, false);
    b = attrs();
    b.i[0] = -1;
    run_alloc("bincount minlength < 0", LTF_OP_BINCOUNT, { ints(LTF_DTYPE_INT32, { 3 }, { 1 }) }, &b, 1, false);
}

/* Sorted 1-based segment ids for n rows: runs with gaps, from 'first'. */
static ltf_tensor *seg_ids(ltf_dtype it, int64_t n, int64_t first) {
    ltf_tensor *t = zeros(it, { n });
    int64_t id = first;
    for (int64_t i = 0; i < n; i++) {
        if (i > 0 && rnd() % 3 == 0) id += (int64_t)(rnd() % 3) + 1;
        if (it == LTF_DTYPE_INT32) ((int32_t *)ltf_tensor_data(t))[i] = (int32_t)id;
        else ((int64_t *)ltf_tensor_data(t))[i] = id;
    }
    return t;
}

static void test_segment() {
    ltf_attrs a = attrs();
    /* uint8 as TensorFlow: sums wrap, a mean divides by the row count (3000 rows: not count mod 256) */
    const ltf_dtype dts[] = { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64, LTF_DTYPE_INT32, LTF_DTYPE_INT64,
                              LTF_DTYPE_UINT8 };
    for (ltf_op_id op : { LTF_OP_SEGMENT_SUM, LTF_OP_SEGMENT_MEAN, LTF_OP_SEGMENT_MAX })
        for (ltf_dtype dt : dts)
            for (ltf_dtype it : { LTF_DTYPE_INT32, LTF_DTYPE_INT64 }) {
                for (int64_t n : { 0, 1, 7, 600 })
                    for (int64_t first : { 1, 3 }) {
                        run_alloc("segment of a vector", op, { rand_tensor(dt, { n }), seg_ids(it, n, first) }, &a, 1);
                        run_alloc("segment of rows", op, { rand_tensor(dt, { n, 3 }), seg_ids(it, n, first) }, &a, 1);
                        run_alloc("segment of slabs", op,
                                  { rand_tensor(dt, { n, 2, 2 }, is_float(dt) ? GEN_SPECIAL : GEN_PLAIN),
                                    seg_ids(it, n, first) }, &a, 1);
                        run_alloc("segment of empty rows", op, { rand_tensor(dt, { n, 0 }), seg_ids(it, n, first) },
                                  &a, 1);
                    }
                run_alloc("segment of one long run", op, { rand_tensor(dt, { 3000 }), ints(it, { 3000 }, { 2 }) }, &a,
                          1);
                /* the CPU's errors, with their messages */
                run_alloc("segment ids unsorted", op, { rand_tensor(dt, { 5 }), ints(it, { 5 }, { 1, 2, 4, 3, 5 }) },
                          &a, 1);
                run_alloc("segment ids starting at 0", op, { rand_tensor(dt, { 3 }), ints(it, { 3 }, { 0, 1, 1 }) },
                          &a, 1);
                run_alloc("segment id 0 later", op, { rand_tensor(dt, { 4, 2 }), ints(it, { 4 }, { 1, 1, 0, 2 }) },
                          &a, 1);
                run_alloc("segment id negative", op, { rand_tensor(dt, { 3 }), ints(it, { 3 }, { -2, 1, 1 }) }, &a, 1);
                run_alloc("segment ids too short", op, { rand_tensor(dt, { 3 }), ints(it, { 2 }, { 1 }) }, &a, 1,
                          false);
            }
    run_alloc("segment of bool", LTF_OP_SEGMENT_SUM,
              { rand_tensor(LTF_DTYPE_BOOL, { 3 }), ints(LTF_DTYPE_INT32, { 3 }, { 1 }) }, &a, 1, false);
    run_alloc("segment of a scalar", LTF_OP_SEGMENT_SUM,
              { rand_tensor(LTF_DTYPE_FLOAT32, {}), ints(LTF_DTYPE_INT32, { 1 }, { 1 }) }, &a, 1, false);
    run_alloc("segment float ids", LTF_OP_SEGMENT_MAX,
              { rand_tensor(LTF_DTYPE_FLOAT32, { 3 }), rand_tensor(LTF_DTYPE_FLOAT32, { 3 }) }, &a, 1, false);
}

static void test_sequence_mask() {
    for (ltf_dtype it : { LTF_DTYPE_INT32, LTF_DTYPE_INT64 })
        for (ltf_dtype ot : { LTF_DTYPE_BOOL, LTF_DTYPE_FLOAT32, LTF_DTYPE_INT64, LTF_DTYPE_UINT8 })
            for (const auto &sh : std::vector<std::vector<int64_t>>{ {}, { 0 }, { 5 }, { 2, 3 }, { 3, 0 } }) {
                ltf_attrs a = attrs();
                a.i[0] = -1;
                a.i[1] = ot;
                run_alloc("sequence_mask without maxlen", LTF_OP_SEQUENCE_MASK, { rand_tensor(it, sh) }, &a, 1);
                run_alloc("sequence_mask of negative lengths", LTF_OP_SEQUENCE_MASK, { ints(it, sh, { -3, -1 }) }, &a,
                          1);
                a.i[0] = 4;
                run_alloc("sequence_mask with maxlen", LTF_OP_SEQUENCE_MASK, { rand_tensor(it, sh) }, &a, 1);
            }
}

int main(void) {
    ctx = ltf_ctx_new();
    test_where();
    test_unique();
    test_bincount();
    test_segment();
    test_sequence_mask();
    ltf_ctx_release(ctx);
    CHECK_DONE();
}
