/*
** cuda/host.cpp: the device kernels' bodies built for the host
** (libltf_gpu_host.a): the same ops.cuh drivers as kernels.cu, with an
** executor that runs each body over every index in a plain loop on host
** memory. Used by core/tests/test_cuda_kernels (every body checked against
** the CPU backend without a GPU) and linked into the simulated GPU module,
** which runs them on its stream (LTF_GPUSIM_HOST_KERNELS, docs/cuda.md).
*/
#include <stdlib.h>
#include "kernels/ops.cuh"
#include "host.h"

namespace {

struct HostExec {
    ltf_ctx *ctx;
    const char *op;
    int raised;
    ltf_status st;

    HostExec(ltf_ctx *c, const char *name) : ctx(c), op(name), raised(0), st(LTF_OK) {}
    ltf_status status() const { return st; }
    template <class F, class P> ltf_status run(int64_t n, const P &p) {
        for (int64_t i = 0; i < n; i++) F::at(i, p);
        return LTF_OK;
    }
    void *alloc(size_t bytes) {
        void *p = malloc(bytes ? bytes : 1);
        if (!p) st = ltf_cu::fail(ctx, LTF_ERR_RESOURCE_EXHAUSTED, "%s: out of memory allocating %zu bytes", op, bytes);
        return p;
    }
    void release(void *p, size_t) { free(p); }
    ltf_status copy(void *dst, const void *src, size_t n) { memmove(dst, src, n); return LTF_OK; }
    ltf_status zero(void *dst, size_t n) { memset(dst, 0, n); return LTF_OK; }
    int *flag() { return &raised; }
    ltf_status check() {
        int r = raised;
        raised = 0;
        return ltf_cu::flag_error(ctx, op, r);
    }
    ltf_status gemm(int, int, int, int64_t, int64_t, int64_t, const void *, int64_t, const void *, int64_t,
                    void *, int64_t, int64_t) {
        return LTF_ERR_UNIMPLEMENTED;   /* the element-by-element body */
    }
};

}  // namespace

extern "C" const void *ltf_gpu_host_kernel(int op) { return ltf_cu::kernel_for<HostExec>(op); }
extern "C" int ltf_gpu_host_takes_half(int op) { return ltf_cu::takes_half<HostExec>(op); }
