/*
** test_ctx.c: the context's hooks (docs/internals.md, "Layers"). The owners
** of per-context state (storage.c's block caches, functions.c's table,
** device.c's module and devices, plan.c's graph captures) register their
** cleanup with the context when they first make that state; the context
** runs it without naming any of them. A witness hook registered first runs
** last and sees every owner's state gone; two contexts at once keep their
** own hooks and state (no global state). Under build-asan, LSan checks that
** nothing is left.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "ltf.h"
#include "ltf_ops.h"
#include "ctx.h"

/* {==== What the witness saw: it runs after every other FREE hook */
typedef struct witness {
    int runs;
    int fns, module, devices, stats, blocks, big;   /* owner state still there */
} witness;

static void witness_hook(ltf_ctx *ctx, void *data) {
    witness *w = data;
    w->runs++;
    w->fns = ctx->fns != NULL;
    w->module = ctx->device_module != NULL;
    w->devices = 0;
    for (int i = 0; i < LTF_MAX_DEVICES; i++) w->devices += ctx->devices[i] != NULL;
    w->stats = ctx->kernel_stats != NULL;
    w->blocks = 0;
    for (int c = 0; c < LTF_BLOCK_CLASSES; c++) w->blocks += ctx->block_cache[c] != NULL;
    w->big = ctx->nbig;
}
/* }==== */

/* {==== Order, deduplication, events, a full table */
static int seq[16], nseq;
static void record(ltf_ctx *ctx, void *data) {
    (void)ctx;
    seq[nseq++] = (int)(intptr_t)data;
}

static void test_hook_rules(void) {
    ltf_ctx *ctx = ltf_ctx_new();
    CHECK(ctx->nhooks == 0);   /* a bare context owns nothing above it */
    nseq = 0;
    CHECK(ltf_ctx_hook_add(ctx, LTF_CTX_EVENT_FREE, record, (void *)1) == LTF_OK);
    CHECK(ltf_ctx_hook_add(ctx, LTF_CTX_EVENT_FREE, record, (void *)2) == LTF_OK);
    CHECK(ltf_ctx_hook_add(ctx, LTF_CTX_EVENT_FREE, record, (void *)1) == LTF_OK);   /* again: nothing */
    CHECK(ltf_ctx_hook_add(ctx, LTF_CTX_EVENT_RECLAIM, record, (void *)3) == LTF_OK);
    CHECK(ltf_ctx_hook_add(ctx, LTF_CTX_EVENT_FREE, record, (void *)4) == LTF_OK);
    CHECK(ctx->nhooks == 4);
    ltf_ctx_hook_run(ctx, LTF_CTX_EVENT_RECLAIM);   /* only the RECLAIM hook */
    CHECK(nseq == 1 && seq[0] == 3);
    /* fill the table: the next registration is refused, and so is what needed it */
    for (int i = 5; ctx->nhooks < LTF_CTX_HOOKS; i++)
        CHECK(ltf_ctx_hook_add(ctx, LTF_CTX_EVENT_RECLAIM, record, (void *)(intptr_t)i) == LTF_OK);
    CHECK(ltf_ctx_hook_add(ctx, LTF_CTX_EVENT_FREE, record, (void *)99) == LTF_ERR_INTERNAL);
    CHECK_STR(ltf_ctx_error(ctx), "context: all 8 hook slots are taken");
    int64_t dims[1] = {4};
    CHECK(ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 1, dims) == NULL);   /* its first block could not be owned */
    CHECK(ltf_ctx_status(ctx) == LTF_ERR_INTERNAL);
    nseq = 0;
    ltf_ctx_release(ctx);
    /* FREE hooks, last registered first, each once */
    CHECK(nseq == 3 && seq[0] == 4 && seq[1] == 2 && seq[2] == 1);
}
/* }==== */

/* {==== Every owner's state in use */
typedef struct owned {
    ltf_ctx *ctx;
    witness w;
    ltf_graph *traced;                /* run twice on /gpu:0: a graph capture */
    ltf_tensor *on_gpu;
} owned;

static ltf_tensor *scalar(ltf_ctx *ctx, float v) { return ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 0, NULL, &v); }

static ltf_tensor *op2(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *a, ltf_tensor *b) {
    ltf_tensor *in[2] = {a, b}, *out = NULL;
    int n = 0;
    return ltf_op_run(ctx, op, in, 2, NULL, &out, 1, &n) == LTF_OK ? out : NULL;
}

/* A function graph computing op(x, x) for a float32 scalar x. */
static ltf_graph *function(ltf_ctx *ctx, const char *name, ltf_op_id op) {
    ltf_graph *f = ltf_graph_begin_function(ctx, name);
    ltf_tensor *x = ltf_graph_placeholder(ctx, f, LTF_DTYPE_FLOAT32, 0, NULL, "x");
    ltf_tensor *y = op2(ctx, op, x, x);
    CHECK(ltf_graph_end(ctx, f, &y, 1) == LTF_OK);
    ltf_tensor_release(y);
    ltf_tensor_release(x);
    return f;
}

static float value(ltf_ctx *ctx, const ltf_tensor *t) {
    float v = -1;
    CHECK(ltf_tensor_copy_to(ctx, t, &v, sizeof v) == LTF_OK);
    return v;
}

static void use_all(owned *o, float base) {
    ltf_ctx *ctx = o->ctx = ltf_ctx_new();
    CHECK(ltf_ctx_hook_add(ctx, LTF_CTX_EVENT_FREE, witness_hook, &o->w) == LTF_OK);   /* first: runs last */
    /* storage: small and large blocks go back to the caches */
    int64_t small[1] = {16}, large[1] = {1 << 16};
    ltf_tensor *s = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 1, small);
    ltf_tensor *l = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 1, large);
    CHECK(s && l);
    ltf_tensor_release(s);
    ltf_tensor_release(l);
    CHECK(ctx->nbig == 1);
    /* functions: cond registers its branches in the context's table */
    ltf_graph *then_fn = function(ctx, "then", LTF_OP_ADD), *else_fn = function(ctx, "else", LTF_OP_MUL);
    uint8_t yes = 1;
    ltf_tensor *pred = ltf_tensor_from_data(ctx, LTF_DTYPE_BOOL, 0, NULL, &yes), *x = scalar(ctx, base);
    ltf_tensor *out = NULL;
    int n = 0;
    CHECK(ltf_cond(ctx, pred, then_fn, &x, 1, else_fn, &x, 1, &out, 1, &n) == LTF_OK && n == 1);
    CHECK(out && value(ctx, out) == base + base);
    CHECK(ctx->fns != NULL);
    ltf_tensor_release(out);
    ltf_tensor_release(pred);
    ltf_graph_release(then_fn);
    ltf_graph_release(else_fn);
    /* device: the simulated GPU's module, /gpu:0 opened */
    CHECK(ltf_ctx_num_devices(ctx, LTF_DEVICE_CUDA) == 1);
    CHECK(ltf_tensor_to_device(ctx, x, LTF_DEVICE_CUDA, 0, &o->on_gpu) == LTF_OK);
    ltf_tensor_release(x);
    CHECK(ctx->device_module != NULL && ctx->devices[0] != NULL);
    /* plan: a traced graph run twice on /gpu:0 is captured */
    ltf_graph *g = o->traced = ltf_graph_begin(ctx, "square");
    ltf_tensor *p = ltf_graph_placeholder(ctx, g, LTF_DTYPE_FLOAT32, 0, NULL, "x");
    ltf_tensor *sq = op2(ctx, LTF_OP_MUL, p, p);
    CHECK(ltf_graph_end(ctx, g, &sq, 1) == LTF_OK);
    ltf_tensor_release(sq);
    ltf_tensor_release(p);
    for (int i = 0; i < 3; i++) {
        CHECK(ltf_graph_run(ctx, g, &o->on_gpu, 1, &out, 1, &n) == LTF_OK && n == 1);
        CHECK(out && value(ctx, out) == base * base);
        ltf_tensor_release(out);
    }
    int count = 0;
    ltf_ctx_device_graph_info(ctx, NULL, NULL, &count);
    CHECK(count == 1);
}

/* Drop what the test holds, then the context: the witness runs last. */
static void drop(owned *o) {
    ltf_graph_release(o->traced);
    ltf_tensor_release(o->on_gpu);
    ltf_ctx_release(o->ctx);
    CHECK(o->w.runs == 1);
    CHECK(o->w.fns == 0 && o->w.module == 0 && o->w.devices == 0 && o->w.stats == 0);
    CHECK(o->w.blocks == 0 && o->w.big == 0);
}

static void test_owners(void) {
    setenv("LTF_GPU_SIM", "1", 1);
    setenv("LTF_GPU_SIM_COUNT", "1", 1);
    owned a = {0}, b = {0};
    use_all(&a, 3);
    use_all(&b, 5);   /* a second context at once: its own hooks and state */
    CHECK(a.ctx->nhooks == b.ctx->nhooks && a.ctx->nhooks >= 5);   /* witness, storage, functions, device, plan */
    CHECK(a.ctx->hooks[0].data == &a.w && b.ctx->hooks[0].data == &b.w);
    /* device memory ran short: plan's hook drops the captures, of 'a' only */
    int count = -1;
    ltf_ctx_hook_run(a.ctx, LTF_CTX_EVENT_RECLAIM);
    ltf_ctx_device_graph_info(a.ctx, NULL, NULL, &count);
    CHECK(count == 0);
    ltf_ctx_device_graph_info(b.ctx, NULL, NULL, &count);
    CHECK(count == 1);
    drop(&a);
    /* 'b' still runs on its device after 'a' is gone */
    ltf_tensor *out = NULL;
    int n = 0;
    CHECK(ltf_graph_run(b.ctx, b.traced, &b.on_gpu, 1, &out, 1, &n) == LTF_OK && n == 1);
    CHECK(out && value(b.ctx, out) == 25);
    ltf_tensor_release(out);
    CHECK(b.w.runs == 0);
    drop(&b);
    unsetenv("LTF_GPU_SIM");
}
/* }==== */

int main(void) {
    test_hook_rules();
    test_owners();
    CHECK_DONE();
}
