/*
** cuda/host.cpp: the device kernels' bodies built for the host
** (libltf_gpu_host.a): the same ops.cuh drivers as kernels.cu, with an
** executor that runs each body over every index in a plain loop on host
** memory (and float GEMMs as plain loops, where kernels.cu calls cuBLAS). Used by core/tests/test_cuda_kernels (every body checked against
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
    ltf_status read(void *host, const void *src, size_t n) { memcpy(host, src, n); return LTF_OK; }
    int *flag() { return &raised; }
    ltf_status check() {
        int r = raised;
        raised = 0;
        return ltf_cu::flag_error(ctx, op, r);
    }
    /* Scratch a kernel may take at once (conv2d's im2col columns): small,
    ** so the tests' convolutions run in several chunks. */
    size_t scratch_budget() const { return (size_t)1 << 20; }
    /* C = op(A) @ op(B) (+ C when 'acc') per batch, row-major: a plain
    ** loop, summing in the element type as cuBLAS does. */
    ltf_status gemm(int dt, int ta, int tb, int64_t m, int64_t n, int64_t k, const void *a, int64_t sa,
                    const void *b, int64_t sb, void *c, int64_t sc, int64_t batch, int acc = 0) {
        if (dt == ltf_cu::DT_F32)
            host_gemm((const float *)a, (const float *)b, (float *)c, ta, tb, m, n, k, sa, sb, sc, batch, acc);
        else
            host_gemm((const double *)a, (const double *)b, (double *)c, ta, tb, m, n, k, sa, sb, sc, batch, acc);
        return LTF_OK;
    }
    template <class T>
    static void host_gemm(const T *a, const T *b, T *c, int ta, int tb, int64_t m, int64_t n, int64_t k, int64_t sa,
                          int64_t sb, int64_t sc, int64_t batch, int acc) {
        for (int64_t bi = 0; bi < batch; bi++, a += sa, b += sb, c += sc)
            for (int64_t i = 0; i < m; i++)
                for (int64_t j = 0; j < n; j++) {
                    T s = 0;
                    for (int64_t l = 0; l < k; l++) s += (ta ? a[l * m + i] : a[i * k + l]) * (tb ? b[j * k + l] : b[l * n + j]);
                    c[i * n + j] = acc ? c[i * n + j] + s : s;
                }
    }
};

}  // namespace

extern "C" const void *ltf_gpu_host_kernel(int op) { return ltf_cu::kernel_for<HostExec>(op); }
