/*
** test_embed.c: the host C API without Lua (core/include/ltf.h): version,
** allocator hooks, the memory budget and its emergency collection,
** wrapping host buffers (zero-copy, strides, alignment, the release
** callback), reading tensors back, sharing tensors and graphs between
** contexts.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "ltf.h"

/* {==== A counting host allocator */
typedef struct counting {
    size_t in_use;          /* bytes handed out and not yet freed */
    int64_t allocs, frees;
    int misaligned;         /* allocations asked with an alignment below 64 */
    int refuse;             /* alloc returns NULL while set */
} counting;

static void *c_alloc(void *ud, size_t size, size_t align) {
    counting *c = ud;
    if (c->refuse) return NULL;
    if (align < 64) c->misaligned++;
    void *p = NULL;
    if (posix_memalign(&p, align, size) != 0) return NULL;
    c->in_use += size;
    c->allocs++;
    return p;
}

static void c_free(void *ud, void *p, size_t size) {
    counting *c = ud;
    c->in_use -= size;
    c->frees++;
    free(p);
}
/* }==== */

static ltf_tensor *run1(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *a, ltf_tensor *b) {
    ltf_tensor *in[2] = {a, b}, *out = NULL;
    int n = 0;
    if (ltf_op_run(ctx, op, in, b ? 2 : 1, NULL, &out, 1, &n) != LTF_OK) return NULL;
    return out;
}

static void test_version(void) {
    CHECK_STR(ltf_version(), LTF_VERSION);
    char buf[32];
    snprintf(buf, sizeof buf, "%d.%d.%d", LTF_VERSION_MAJOR, LTF_VERSION_MINOR, LTF_VERSION_PATCH);
    CHECK_STR(ltf_version(), buf);
}

static void test_allocator(void) {
    counting c = {0};
    ltf_allocator a = {c_alloc, c_free, NULL, &c};
    ltf_ctx *ctx = ltf_ctx_new_with_allocator(&a);
    CHECK(ctx != NULL);
    size_t ctx_bytes = c.in_use;            /* the context itself comes from the hooks */
    CHECK(ctx_bytes > 0);
    int64_t dims[2] = {100, 100};
    ltf_tensor *t = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 2, dims);
    CHECK(t != NULL);
    CHECK(c.in_use >= ctx_bytes + 40000);   /* the tensor's bytes went through the hooks */
    CHECK(((uintptr_t)ltf_tensor_data(t) % 64) == 0);
    ltf_tensor *u = run1(ctx, LTF_OP_ADD, t, t);
    CHECK(u != NULL);
    ltf_tensor_release(t);
    ltf_tensor_release(u);
    ltf_ctx_trim(ctx);                      /* cached blocks go back to the host */
    CHECK(c.in_use == ctx_bytes);
    ltf_allocator got;
    ltf_ctx_allocator(ctx, &got);
    CHECK(got.alloc == c_alloc && got.free == c_free && got.ud == &c);
    ltf_ctx_release(ctx);
    CHECK(c.in_use == 0);
    CHECK(c.allocs == c.frees);
    CHECK(c.misaligned == 0);
    /* the realloc emulation keeps the contents */
    char *p = ltf_allocator_realloc(&a, NULL, 0, 8, 16);
    memcpy(p, "abcdefg", 8);
    p = ltf_allocator_realloc(&a, p, 8, 4096, 16);
    CHECK_STR(p, "abcdefg");
    CHECK(ltf_allocator_realloc(&a, p, 4096, 0, 16) == NULL);
    CHECK(c.in_use == 0);
    /* hooks without free are refused */
    ltf_allocator bad = {c_alloc, NULL, NULL, &c};
    CHECK(ltf_ctx_new_with_allocator(&bad) == NULL);
}

/* {==== Budget */
typedef struct garbage {
    ltf_tensor *held;       /* what the "collector" can free */
    int calls;
    counting *c;            /* cleared 'refuse' on collection when set */
} garbage;

static void collect(ltf_ctx *ctx, void *ud) {
    garbage *g = ud;
    (void)ctx;
    g->calls++;
    ltf_tensor_release(g->held);
    g->held = NULL;
    if (g->c) g->c->refuse = 0;
}

static void test_budget(void) {
    ltf_ctx *ctx = ltf_ctx_new();
    garbage g = {0};
    ltf_ctx_set_collect_hook(ctx, collect, &g);
    ltf_ctx_set_memory_limit(ctx, 1 << 20);
    CHECK(ltf_ctx_memory_limit(ctx) == (1 << 20));
    int64_t dims[1] = {150000};             /* 600 kB of float32 */
    ltf_tensor *a = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 1, dims);
    CHECK(a != NULL && g.calls == 0);
    /* past the limit with nothing to collect: one collection, then the error */
    ltf_tensor *b = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 1, dims);
    CHECK(b == NULL);
    CHECK(g.calls == 1);
    CHECK(ltf_ctx_status(ctx) == LTF_ERR_RESOURCE_EXHAUSTED);
    CHECK(strstr(ltf_ctx_error(ctx), "memory limit of 1048576 bytes") != NULL);
    /* the collection frees what the host only held as garbage: it fits */
    g.held = a;
    b = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 1, dims);
    CHECK(b != NULL);
    CHECK(g.calls == 2 && g.held == NULL);
    /* ops fail the same way, as a status */
    ltf_tensor *c = run1(ctx, LTF_OP_ADD, b, b);
    CHECK(c == NULL && ltf_ctx_status(ctx) == LTF_ERR_RESOURCE_EXHAUSTED);
    ltf_ctx_set_memory_limit(ctx, 0);       /* no limit */
    c = run1(ctx, LTF_OP_ADD, b, b);
    CHECK(c != NULL);
    ltf_tensor_release(b);
    ltf_tensor_release(c);
    ltf_ctx_release(ctx);

    /* a host allocator that fails gets the same collection, then a retry */
    counting cnt = {0};
    ltf_allocator al = {c_alloc, c_free, NULL, &cnt};
    ctx = ltf_ctx_new_with_allocator(&al);
    garbage g2 = {0};
    g2.c = &cnt;
    ltf_ctx_set_collect_hook(ctx, collect, &g2);
    cnt.refuse = 1;
    ltf_tensor *t = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 1, dims);
    CHECK(t != NULL && g2.calls == 1);
    ltf_tensor_release(t);
    ltf_ctx_trim(ctx);
    cnt.refuse = 1;
    g2.c = NULL;                            /* this time the collection cannot help */
    t = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 1, dims);
    CHECK(t == NULL && g2.calls == 2 && ltf_ctx_status(ctx) == LTF_ERR_RESOURCE_EXHAUSTED);
    cnt.refuse = 0;
    ltf_ctx_release(ctx);
    CHECK(cnt.in_use == 0);
}
/* }==== */

/* {==== Wrapping host buffers */
typedef struct released {
    int calls;
    void *data;
} released;

static void on_release(void *data, void *ud) {
    released *r = ud;
    r->calls++;
    r->data = data;
}

/* ltf_status holds TensorFlow's codes (tensorflow/core/protobuf/error_codes.proto),
** and the Python exceptions luatf adds have numbers outside that range. */
static void test_status_codes(void) {
    CHECK(LTF_OK == 0);
    CHECK(LTF_ERR_UNKNOWN == 2);
    CHECK(LTF_ERR_INVALID_ARGUMENT == 3);
    CHECK(LTF_ERR_NOT_FOUND == 5);
    CHECK(LTF_ERR_RESOURCE_EXHAUSTED == 8);
    CHECK(LTF_ERR_FAILED_PRECONDITION == 9);
    CHECK(LTF_ERR_OUT_OF_RANGE == 11);
    CHECK(LTF_ERR_UNIMPLEMENTED == 12);
    CHECK(LTF_ERR_INTERNAL == 13);
    CHECK(LTF_ERR_DATA_LOSS == 15);
    CHECK(LTF_ERR_TYPE >= 100 && LTF_ERR_VALUE >= 100 && LTF_ERR_RUNTIME >= 100);
    CHECK(LTF_ERR_TYPE != LTF_ERR_VALUE && LTF_ERR_VALUE != LTF_ERR_RUNTIME && LTF_ERR_TYPE != LTF_ERR_RUNTIME);
    /* a call's failure is reported with its code: a bad argument is 3 */
    ltf_ctx *ctx = ltf_ctx_new();
    static float buf[2];
    int64_t bad[1] = {-2};
    CHECK(ltf_tensor_wrap(ctx, LTF_DTYPE_FLOAT32, 1, bad, buf, NULL, NULL) == NULL && (int)ltf_ctx_status(ctx) == 3);
    ltf_ctx_release(ctx);
}

static void test_wrap(void) {
    ltf_ctx *ctx = ltf_ctx_new();
    static float buf[6] = {1, 2, 3, 4, 5, 6};
    int64_t dims[2] = {2, 3};
    released r = {0};
    ltf_tensor *t = ltf_tensor_wrap(ctx, LTF_DTYPE_FLOAT32, 2, dims, buf, on_release, &r);
    CHECK(t != NULL && ltf_tensor_data(t) == buf);
    ltf_tensor *view = run1(ctx, LTF_OP_IDENTITY, t, NULL);   /* a view: shares the buffer */
    CHECK(view != NULL && ltf_tensor_data(view) == buf);
    ltf_tensor *sum = run1(ctx, LTF_OP_ADD, t, view);
    CHECK(sum && ((float *)ltf_tensor_data(sum))[5] == 12.0f);
    CHECK(buf[5] == 6.0f);                  /* ops never write their inputs */
    ltf_tensor_release(t);
    CHECK(r.calls == 0);                    /* the view still needs the buffer */
    ltf_tensor_release(view);
    CHECK(r.calls == 1 && r.data == buf);   /* exactly once, with the last view */
    ltf_tensor_release(sum);
    CHECK(r.calls == 1);

    /* strided: row-major strides (and NULL) wrap without a copy */
    static uint8_t img[4 * 5 * 3];
    for (int i = 0; i < 60; i++) img[i] = (uint8_t)i;
    int64_t idims[3] = {4, 5, 3}, rm[3] = {15, 3, 1};
    released r2 = {0};
    t = ltf_tensor_wrap_strided(ctx, LTF_DTYPE_UINT8, 3, idims, rm, img, sizeof img, on_release, &r2, 0);
    CHECK(t && ltf_tensor_data(t) == img);
    ltf_tensor_release(t);
    CHECK(r2.calls == 1);
    /* a column slice (every other column): not row-major */
    int64_t sdims[2] = {4, 2}, sst[2] = {5, 2};
    t = ltf_tensor_wrap_strided(ctx, LTF_DTYPE_UINT8, 2, sdims, sst, img, 20, on_release, &r2, 0);
    CHECK(t == NULL && ltf_ctx_status(ctx) == LTF_ERR_INVALID_ARGUMENT);
    CHECK_STR(ltf_ctx_error(ctx), "tensor_wrap: strides (5, 2) are not row-major for shape (4, 2) of uint8 "
                                  "(expected (2, 1)): cannot wrap without a copy; pass LTF_WRAP_COPY to copy");
    CHECK(r2.calls == 1);                   /* a failed wrap leaves the buffer to the host */
    t = ltf_tensor_wrap_strided(ctx, LTF_DTYPE_UINT8, 2, sdims, sst, img, 20, on_release, &r2, LTF_WRAP_COPY);
    CHECK(t && ltf_tensor_data(t) != img);
    CHECK(r2.calls == 2);                   /* copied: released at once */
    uint8_t *v = ltf_tensor_data(t);
    CHECK(v[0] == 0 && v[1] == 2 && v[2] == 5 && v[3] == 7 && v[7] == 17);
    ltf_tensor_release(t);
    CHECK(r2.calls == 2);
    /* every element must lie in the buffer */
    t = ltf_tensor_wrap_strided(ctx, LTF_DTYPE_UINT8, 2, sdims, sst, img, 17, NULL, NULL, LTF_WRAP_COPY);
    CHECK(t == NULL && strstr(ltf_ctx_error(ctx), "needs 18 bytes, the buffer has 17") != NULL);
    int64_t neg[2] = {5, -1};
    t = ltf_tensor_wrap_strided(ctx, LTF_DTYPE_UINT8, 2, sdims, neg, img, 60, NULL, NULL, LTF_WRAP_COPY);
    CHECK(t == NULL && strstr(ltf_ctx_error(ctx), "stride 2 is -1") != NULL);
    /* misaligned float data: refused in place, copied on request */
    static float fb[5] = {1, 2, 3, 4, 5};
    void *odd = (char *)fb + 2;
    int64_t one[1] = {2};
    released r3 = {0};
    char want_msg[160];
    snprintf(want_msg, sizeof want_msg, "tensor_wrap: data %p is not aligned to 4 bytes (float32); "
             "ltf_tensor_wrap_strided with LTF_WRAP_COPY copies it", odd);
    t = ltf_tensor_wrap(ctx, LTF_DTYPE_FLOAT32, 1, one, odd, on_release, &r3);   /* as the strided form */
    CHECK(t == NULL && ltf_ctx_status(ctx) == LTF_ERR_INVALID_ARGUMENT);
    CHECK_STR(ltf_ctx_error(ctx), want_msg);
    CHECK(r3.calls == 0);                   /* refused: the buffer stays the host's */
    static double db8[3] = {1, 2, 3};
    t = ltf_tensor_wrap(ctx, LTF_DTYPE_FLOAT64, 1, one, (char *)db8 + 4, NULL, NULL);
    CHECK(t == NULL && strstr(ltf_ctx_error(ctx), "is not aligned to 8 bytes (float64)") != NULL);
    t = ltf_tensor_wrap(ctx, LTF_DTYPE_UINT8, 1, one, odd, NULL, NULL);   /* bytes need no alignment */
    CHECK(t != NULL && ltf_tensor_data(t) == odd);
    ltf_tensor_release(t);
    t = ltf_tensor_wrap_strided(ctx, LTF_DTYPE_FLOAT32, 1, one, NULL, odd, 16, NULL, NULL, 0);
    CHECK(t == NULL && strstr(ltf_ctx_error(ctx), "is not aligned to 4 bytes (float32)") != NULL);
    t = ltf_tensor_wrap_strided(ctx, LTF_DTYPE_FLOAT32, 1, one, NULL, odd, 16, NULL, NULL, LTF_WRAP_COPY);
    CHECK(t != NULL && ((uintptr_t)ltf_tensor_data(t) % 4) == 0);
    float want[2];
    memcpy(want, odd, sizeof want);
    CHECK(memcmp(ltf_tensor_data(t), want, sizeof want) == 0);
    ltf_tensor_release(t);
    /* strings and resources have no host layout */
    t = ltf_tensor_wrap_strided(ctx, LTF_DTYPE_STRING, 1, one, NULL, fb, 16, NULL, NULL, 0);
    CHECK(t == NULL && ltf_ctx_status(ctx) == LTF_ERR_INVALID_ARGUMENT);
    ltf_ctx_release(ctx);
}
/* }==== */

static void test_read_back(void) {
    ltf_ctx *ctx = ltf_ctx_new();
    int64_t dims[1] = {3};
    double d[3] = {1.5, -2, 4};
    ltf_tensor *t = ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT64, 1, dims, d);
    CHECK(ltf_tensor_data(t) != (void *)d);  /* from_data copies */
    void *p = NULL;
    size_t nb = 0;
    CHECK(ltf_tensor_host_data(ctx, t, &p, &nb) == LTF_OK && p == ltf_tensor_data(t) && nb == 24);
    double out[3] = {0};
    CHECK(ltf_tensor_copy_to(ctx, t, out, sizeof out) == LTF_OK && memcmp(out, d, sizeof d) == 0);
    CHECK(ltf_tensor_copy_to(ctx, t, out, 16) == LTF_ERR_INVALID_ARGUMENT);
    CHECK_STR(ltf_ctx_error(ctx), "tensor_copy_to: the tensor has 24 bytes, the buffer 16");
    CHECK(ltf_tensor_context(t) == ctx);
    ltf_tensor_release(t);
    /* a symbolic tensor has no bytes: a status, not a crash */
    ltf_graph *g = ltf_graph_begin(ctx, "g");
    ltf_tensor *x = ltf_graph_placeholder(ctx, g, LTF_DTYPE_FLOAT32, 1, dims, "x");
    CHECK(ltf_tensor_host_data(ctx, x, &p, NULL) == LTF_ERR_FAILED_PRECONDITION && p == NULL);
    CHECK(ltf_tensor_copy_to(ctx, x, out, 12) == LTF_ERR_FAILED_PRECONDITION);
    CHECK(ltf_tensor_share(ctx, x) == LTF_ERR_INVALID_ARGUMENT);
    ltf_tensor_release(x);
    ltf_graph_abort(ctx, g);
    ltf_graph_release(g);
    ltf_ctx_release(ctx);
}

/* y = x * a + b, traced in 'ctx' with captured constants */
static ltf_graph *trace_affine(ltf_ctx *ctx, float av, float bv) {
    int64_t dims[1] = {3};
    ltf_graph *g = ltf_graph_begin(ctx, "affine");
    ltf_tensor *x = ltf_graph_placeholder(ctx, g, LTF_DTYPE_FLOAT32, 1, dims, "x");
    ltf_tensor *a = ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 0, NULL, &av);
    ltf_tensor *b = ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 0, NULL, &bv);
    ltf_tensor *m = run1(ctx, LTF_OP_MUL, x, a);
    ltf_tensor *y = run1(ctx, LTF_OP_ADD, m, b);
    CHECK(ltf_graph_end(ctx, g, &y, 1) == LTF_OK);
    ltf_tensor_release(x);
    ltf_tensor_release(a);
    ltf_tensor_release(b);
    ltf_tensor_release(m);
    ltf_tensor_release(y);
    return g;
}

static void test_share(void) {
    ltf_ctx *owner = ltf_ctx_new(), *other = ltf_ctx_new();
    int64_t dims[1] = {3};
    float xv[3] = {1, 2, 3};
    ltf_tensor *x = ltf_tensor_from_data(owner, LTF_DTYPE_FLOAT32, 1, dims, xv);
    ltf_memory_stats m0, m1;
    ltf_ctx_memory_stats(owner, &m0);
    CHECK(!ltf_tensor_is_shared(x));
    CHECK(ltf_tensor_share(owner, x) == LTF_OK && ltf_tensor_is_shared(x));
    CHECK(ltf_tensor_share(owner, x) == LTF_OK);   /* idempotent */
    ltf_ctx_memory_stats(owner, &m1);
    CHECK(m1.live_bytes == m0.live_bytes - 12);     /* left the owner's accounting */
    ltf_graph *g = trace_affine(owner, 2, 1);
    CHECK(!ltf_graph_is_shared(g) && ltf_graph_context(g) == owner);
    CHECK(ltf_graph_share(owner, g) == LTF_OK && ltf_graph_is_shared(g));
    /* another context runs the shared graph on the shared tensor */
    ltf_tensor *y = NULL;
    int n = 0;
    CHECK(ltf_graph_run(other, g, &x, 1, &y, 1, &n) == LTF_OK && n == 1);
    CHECK(ltf_tensor_context(y) == other);
    float *yv = ltf_tensor_data(y);
    CHECK(yv[0] == 3 && yv[1] == 5 && yv[2] == 7);
    /* the owner may go first: shared objects keep what they need */
    ltf_graph_release(g);
    ltf_ctx_release(owner);
    ltf_tensor *z = run1(other, LTF_OP_ADD, x, y);
    CHECK(z && ((float *)ltf_tensor_data(z))[2] == 10);
    ltf_tensor_release(x);
    ltf_tensor_release(y);
    ltf_tensor_release(z);

    /* stateful graphs and string tensors are not shareable */
    ltf_graph *r = ltf_graph_begin(other, "rand");
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = 1;
    at.ints[0] = 2;
    at.i[0] = LTF_DTYPE_FLOAT32;
    at.f[1] = 1;
    ltf_tensor *ro = NULL;
    CHECK(ltf_op_run(other, LTF_OP_RANDOM_NORMAL, NULL, 0, &at, &ro, 1, &n) == LTF_OK);
    CHECK(ltf_graph_end(other, r, &ro, 1) == LTF_OK);
    CHECK(ltf_graph_share(other, r) == LTF_ERR_FAILED_PRECONDITION);
    CHECK(strstr(ltf_ctx_error(other), "stateful node") != NULL);
    ltf_tensor_release(ro);
    ltf_graph_release(r);
    const char *strs[1] = {"a"};
    int64_t one[1] = {1};
    ltf_tensor *s = ltf_tensor_from_data(other, LTF_DTYPE_STRING, 1, one, strs);
    CHECK(ltf_tensor_share(other, s) == LTF_ERR_INVALID_ARGUMENT);
    ltf_tensor_release(s);
    ltf_ctx_release(other);
}

int main(void) {
    test_version();
    test_status_codes();
    test_allocator();
    test_budget();
    test_wrap();
    test_read_back();
    test_share();
    CHECK_DONE();
}
