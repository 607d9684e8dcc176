/*
** test_cuda_module.c: libltf_cuda.so through its entry point, as the engine
** loads it (dlopen + dlsym of ltf_device_module_open). Without a GPU (CI):
** the device count is 0, nothing is printed, and opening device 0 fails
** with a message. With one (scripts/gpu-check.sh): the backend's memory,
** copies and a few kernels (broadcast add, reduce_sum, matmul through
** cuBLAS, softmax) against the CPU's results.
*/
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "op.h"
#include "../check.h"

static ltf_backend be;

/* A device copy of CPU tensor 't' (storage and tensor headers are the
** test's own: kernels read only dtype, shape, storage->data and offset). */
typedef struct dev_tensor { ltf_storage s; ltf_tensor t; } dev_tensor;
static dev_tensor *to_device(ltf_ctx *ctx, const ltf_tensor *t, int copy) {
    dev_tensor *d = calloc(1, sizeof *d);
    size_t nbytes = (size_t)t->numel * ltf_dtype_size(t->dtype);
    d->t = *t;
    d->t.storage = &d->s;
    d->t.offset = 0;
    d->s.nbytes = nbytes;
    d->s.device = LTF_DEVICE_CUDA;
    d->s.data = be.alloc(be.bctx, nbytes);
    d->s.ctx = ctx;
    if (copy && nbytes) CHECK(be.copy(be.bctx, d->s.data, LTF_DATA(t), nbytes, 0) == 0);
    return d;
}

static double max_diff(ltf_ctx *ctx, const ltf_tensor *want, dev_tensor *got) {
    size_t nbytes = got->s.nbytes;
    ltf_tensor *h = ltf_tensor_new(ctx, want->dtype, want->rank, want->dims);
    CHECK(be.copy(be.bctx, LTF_DATA(h), got->s.data, nbytes, 1) == 0);
    double m = 0;
    for (int64_t i = 0; i < want->numel; i++) {
        double a = want->dtype == LTF_DTYPE_FLOAT32 ? ((float *)LTF_DATA(want))[i] : ((double *)LTF_DATA(want))[i];
        double b = want->dtype == LTF_DTYPE_FLOAT32 ? ((float *)LTF_DATA(h))[i] : ((double *)LTF_DATA(h))[i];
        if (fabs(a - b) > m) m = fabs(a - b);
    }
    ltf_tensor_release(h);
    return m;
}

static ltf_tensor *rnd(ltf_ctx *ctx, int rank, const int64_t *dims) {
    ltf_tensor *t = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, rank, dims);
    float *p = LTF_DATA(t);
    for (int64_t i = 0; i < t->numel; i++) p[i] = (float)((i * 7919 % 1000) / 500.0 - 1.0);
    return t;
}

/* Run 'op' on the CPU and on the GPU; the largest difference. */
static double both(ltf_ctx *ctx, ltf_op_id op, ltf_tensor **in, int nin, const ltf_attrs *a) {
    ltf_tensor *want = NULL;
    int nout = 0;
    CHECK(ltf_op_run(ctx, op, in, nin, a, &want, 1, &nout) == LTF_OK);
    dev_tensor *din[4], *dout = to_device(ctx, want, 0);
    ltf_tensor *tin[4], *tout = &dout->t;
    for (int k = 0; k < nin; k++) { din[k] = to_device(ctx, in[k], 1); tin[k] = &din[k]->t; }
    ltf_kernel_fn fn = (ltf_kernel_fn)be.kernel(be.bctx, op);
    CHECK(fn != NULL);
    double d = 1e30;
    if (fn && fn(ctx, ltf_op_get(op), tin, nin, a, &tout, 1) == LTF_OK && be.sync(be.bctx) == 0)
        d = max_diff(ctx, want, dout);
    else
        fprintf(stderr, "%s: %s / %s\n", ltf_op_name(op), ltf_ctx_error(ctx), be.error(be.bctx));
    for (int k = 0; k < nin; k++) { be.free(be.bctx, din[k]->s.data, din[k]->s.nbytes); free(din[k]); }
    be.free(be.bctx, dout->s.data, dout->s.nbytes);
    free(dout);
    ltf_tensor_release(want);
    return d;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: test_cuda_module path/to/libltf_cuda.so\n"); return 2; }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);   /* as core/device.c */
    if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 1; }
    ltf_device_module_open_fn open = (ltf_device_module_open_fn)dlsym(h, LTF_DEVICE_MODULE_OPEN);
    CHECK(open != NULL);
    CHECK(dlsym(h, "ltf_cuda_fused_run") != NULL);
    CHECK(dlsym(h, "ltf_cuda_kernel") == NULL);   /* only the entry points are exported */
    if (!open) CHECK_DONE();
    ltf_ctx *ctx = ltf_ctx_new();
    int n = open(ctx, 0, NULL, NULL, 0);
    CHECK(n >= 0);
    printf("CUDA devices: %d\n", n);
    char err[256] = "";
    if (n == 0) {
        CHECK(open(ctx, 0, &be, err, sizeof err) == -1);
        CHECK(strstr(err, "no CUDA device") != NULL);
        printf("no GPU: %s\n", err);
    } else {
        CHECK(open(ctx, 0, &be, err, sizeof err) == 0);
        CHECK(strcmp(be.name, "cuda") == 0 && be.type == LTF_DEVICE_CUDA);
        ctx->backend[LTF_DEVICE_CUDA] = &be;
        /* allocator: a freed block is reused, trim gives the cache back */
        void *p = be.alloc(be.bctx, 1000);
        CHECK(p != NULL && be.bytes_in_use(be.bctx) >= 1000);
        be.free(be.bctx, p, 1000);
        CHECK(be.bytes_in_use(be.bctx) == 0 && be.bytes_reserved(be.bctx) >= 1000);
        void *q = be.alloc(be.bctx, 900);
        CHECK(q == p);
        be.free(be.bctx, q, 900);
        be.trim(be.bctx);
        CHECK(be.bytes_reserved(be.bctx) == 0);
        ltf_attrs a;
        ltf_attrs_init(&a);
        ltf_tensor *in[2];
        in[0] = rnd(ctx, 2, (int64_t[]){ 300, 200 });
        in[1] = rnd(ctx, 1, (int64_t[]){ 200 });
        CHECK(both(ctx, LTF_OP_ADD, in, 2, &a) < 1e-6);
        ltf_tensor_release(in[1]);
        CHECK(both(ctx, LTF_OP_REDUCE_SUM, in, 1, &a) < 1e-2);
        CHECK(both(ctx, LTF_OP_SOFTMAX, in, 1, &a) < 1e-6);
        in[1] = rnd(ctx, 2, (int64_t[]){ 200, 50 });
        CHECK(both(ctx, LTF_OP_MATMUL, in, 2, &a) < 1e-3);
        ltf_tensor_release(in[0]);
        ltf_tensor_release(in[1]);
        ctx->backend[LTF_DEVICE_CUDA] = NULL;
        be.close(be.bctx);
    }
    ltf_ctx_release(ctx);
    dlclose(h);
    CHECK_DONE();
}
