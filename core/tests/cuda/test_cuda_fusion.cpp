/*
** test_cuda_fusion.cpp: NVRTC compiles the kernels generated for fused
** elementwise groups (cuda/fusion.cpp), without a GPU (PTX for
** compute_90): a 100-op chain, relu(x * w + b) with a periodic and a
** broadcast load, a softmax-like exp(x - max) / sum, dtype changes (casts,
** comparisons, logical ops), and per dtype one group holding every unary
** and binary op the device has. Checks the source and that it compiles.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
extern "C" {
#include "op.h"
#include "fused.h"
}
#include "../../cuda/fusion.h"
#include "../../cuda/kernels/elementwise.cuh"
#include "../check.h"

/* A group under construction. */
struct Group {
    ltf_fused f;
    std::vector<ltf_fused_op> ops;
    Group(ltf_dtype dt, int64_t numel) {
        memset(&f, 0, sizeof f);
        f.dtype = dt;
        f.numel = numel;
    }
    /* a load of external input 'ext' (added when new); returns its operand */
    int load(int kind, ltf_dtype dt, int64_t period = 0, std::vector<int64_t> dims = {}, std::vector<int64_t> st = {}) {
        ltf_fused_load *l = &f.loads[f.nloads];
        memset(l, 0, sizeof *l);
        l->ext = f.next++;
        l->kind = kind;
        l->dtype = dt;
        l->period = period;
        l->rank = (int)dims.size();
        for (size_t d = 0; d < dims.size(); d++) { l->dims[d] = dims[d]; l->strides[d] = st[d]; }
        return -(f.nloads++) - 1;
    }
    int op(ltf_op_id id, ltf_dtype in, ltf_dtype out, int a, int b = 0) {
        ltf_fused_op o;
        memset(&o, 0, sizeof o);
        o.def = ltf_op_get(id);
        o.nin = o.def->min_inputs;
        o.src[0] = a;
        o.src[1] = b;
        o.in_dtype = in;
        o.out_dtype = out;
        ops.push_back(o);
        return (int)ops.size() - 1;
    }
    const ltf_fused *done() {
        f.ops = ops.data();
        f.n = (int)ops.size();
        f.dtype = ops.back().out_dtype;
        return &f;
    }
};

static void compiles(const char *what, const ltf_fused *f, const char *must_contain = NULL) {
    char why[256] = "";
    char *src = ltf_cuda_fused_source(f, why, sizeof why);
    check_count++;
    if (!src) {
        check_failures++;
        fprintf(stderr, "%s: no source: %s\n", what, why);
        return;
    }
    if (must_contain) CHECK(strstr(src, must_contain) != NULL);
    static char log[1 << 16];
    char *image = NULL;
    size_t size = 0;
    int rc = ltf_cuda_fused_compile(src, "compute_90", &image, &size, log, sizeof log);
    check_count++;
    if (rc != 0) {
        check_failures++;
        fprintf(stderr, "%s: NVRTC failed:\n%s\n--- source ---\n%s\n", what, log, src);
    } else {
        CHECK(size > 0 && image && strstr(image, ".entry ltf_fused") != NULL);
    }
    free(image);
    free(src);
}

int main(void) {
    const ltf_dtype F = LTF_DTYPE_FLOAT32;
    {   /* a 100-op elementwise chain over one input and a scalar */
        Group g(F, 1 << 20);
        int x = g.load(LTF_LOAD_IDENTITY, F), c = g.load(LTF_LOAD_SCALAR, F);
        const ltf_op_id cycle[] = { LTF_OP_ADD, LTF_OP_MUL, LTF_OP_TANH, LTF_OP_SUB, LTF_OP_RELU,
                                    LTF_OP_MAXIMUM, LTF_OP_SIGMOID, LTF_OP_DIV, LTF_OP_EXP, LTF_OP_SQUARE };
        int v = x;
        for (int k = 0; k < 100; k++) {
            ltf_op_id id = cycle[k % 10];
            v = ltf_op_get(id)->min_inputs == 2 ? g.op(id, F, F, v, c) : g.op(id, F, F, v);
        }
        compiles("100-op chain", g.done(), "v99");
    }
    {   /* relu(x * w + b): w broadcast over rows (general), b over columns (periodic) */
        Group g(F, 64 * 128);
        int x = g.load(LTF_LOAD_IDENTITY, F);
        int w = g.load(LTF_LOAD_GENERAL, F, 0, { 64, 128 }, { 1, 0 });
        int b = g.load(LTF_LOAD_PERIODIC, F, 128);
        int m = g.op(LTF_OP_MUL, F, F, x, w);
        int s = g.op(LTF_OP_ADD, F, F, m, b);
        g.op(LTF_OP_RELU, F, F, s);
        compiles("relu(x*w+b)", g.done(), "% 128LL");
    }
    {   /* softmax-like: exp(x - max) / sum with per-row (64, 1) statistics */
        Group g(LTF_DTYPE_FLOAT64, 64 * 10);
        int x = g.load(LTF_LOAD_IDENTITY, LTF_DTYPE_FLOAT64);
        int mx = g.load(LTF_LOAD_GENERAL, LTF_DTYPE_FLOAT64, 0, { 64, 10 }, { 1, 0 });
        int sm = g.load(LTF_LOAD_GENERAL, LTF_DTYPE_FLOAT64, 0, { 64, 10 }, { 1, 0 });
        int d = g.op(LTF_OP_SUB, LTF_DTYPE_FLOAT64, LTF_DTYPE_FLOAT64, x, mx);
        int e = g.op(LTF_OP_EXP, LTF_DTYPE_FLOAT64, LTF_DTYPE_FLOAT64, d);
        g.op(LTF_OP_DIV, LTF_DTYPE_FLOAT64, LTF_DTYPE_FLOAT64, e, sm);
        compiles("softmax-like", g.done());
    }
    {   /* dtype changes: int32 -> float32, a comparison, logical ops, bool -> float32 */
        Group g(F, 1000);
        int i = g.load(LTF_LOAD_IDENTITY, LTF_DTYPE_INT32), y = g.load(LTF_LOAD_IDENTITY, F);
        int xf = g.op(LTF_OP_CAST, LTF_DTYPE_INT32, F, i);
        int gt = g.op(LTF_OP_GREATER, F, LTF_DTYPE_BOOL, xf, y);
        int nt = g.op(LTF_OP_LOGICAL_NOT, LTF_DTYPE_BOOL, LTF_DTYPE_BOOL, gt);
        int an = g.op(LTF_OP_LOGICAL_XOR, LTF_DTYPE_BOOL, LTF_DTYPE_BOOL, nt, gt);
        int bf = g.op(LTF_OP_CAST, LTF_DTYPE_BOOL, F, an);
        int nan = g.op(LTF_OP_IS_NAN, F, LTF_DTYPE_BOOL, bf);
        int i64 = g.op(LTF_OP_CAST, LTF_DTYPE_BOOL, LTF_DTYPE_INT64, nan);
        int sh = g.op(LTF_OP_LEFT_SHIFT, LTF_DTYPE_INT64, LTF_DTYPE_INT64, i64, i64);
        g.op(LTF_OP_CAST, LTF_DTYPE_INT64, LTF_DTYPE_UINT8, sh);
        compiles("casts and comparisons", g.done(), "Conv<");
    }
    /* per dtype, every unary and binary op the device has for it */
    const ltf_dtype dts[] = { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64, LTF_DTYPE_INT32, LTF_DTYPE_INT64,
                              LTF_DTYPE_UINT8, LTF_DTYPE_BOOL };
    for (ltf_dtype dt : dts) {
        Group g(dt, 4096);
        int a = g.load(LTF_LOAD_IDENTITY, dt), b = g.load(LTF_LOAD_GENERAL, dt, 0, { 64, 64 }, { 0, 1 });
        int n = 0;
        for (ltf_op_id id = 0; id < LTF_OP_COUNT; id++) {
            const ltf_op_def *def = ltf_op_get(id);
            if (!(def->flags & LTF_OP_ELEMENTWISE) || !ltf_cpu_elementwise_fusable(def, dt, dt)) continue;
            bool bin = def->min_inputs == 2;
            bool pred = bin ? ltf_cu::binary_pred(def->code) : (def->code == ltf_cu::UN_IS_NAN || def->code == ltf_cu::UN_IS_INF ||
                                                                def->code == ltf_cu::UN_IS_FINITE);
            if (strcmp(def->name, "cast") == 0) continue;
            g.op(id, dt, pred ? LTF_DTYPE_BOOL : dt, a, bin ? b : 0);
            n++;
        }
        for (ltf_dtype to : dts)
            if (to != dt) { g.op(LTF_OP_CAST, dt, to, a); n++; }
        g.op(LTF_OP_CAST, dt, dt, a);
        char what[64];
        snprintf(what, sizeof what, "every op on %s (%d members)", ltf_dtype_name(dt), n);
        printf("%s\n", what);
        CHECK(n >= 6);
        compiles(what, g.done());
    }
    {   /* a member without a device form is refused with a reason */
        Group g(LTF_DTYPE_STRING, 4);
        int a = g.load(LTF_LOAD_IDENTITY, LTF_DTYPE_STRING);
        g.op(LTF_OP_ADD, LTF_DTYPE_STRING, LTF_DTYPE_STRING, a, a);
        char why[256] = "";
        char *src = ltf_cuda_fused_source(g.done(), why, sizeof why);
        CHECK(src == NULL && why[0] != '\0');
        free(src);
    }
    for (ltf_dtype dt : { LTF_DTYPE_FLOAT16, LTF_DTYPE_BFLOAT16 }) {   /* left unfused (docs/cuda.md) */
        Group g(LTF_DTYPE_FLOAT32, 4);
        int a = g.load(LTF_LOAD_IDENTITY, dt);
        int b = g.op(LTF_OP_ADD, dt, dt, a, a);
        g.op(LTF_OP_CAST, dt, LTF_DTYPE_FLOAT32, b);
        char why[256] = "";
        char *src = ltf_cuda_fused_source(g.done(), why, sizeof why);
        CHECK(src == NULL && strstr(why, "dtype") != NULL);
        free(src);
    }
    CHECK_DONE();
}
