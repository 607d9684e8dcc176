/*
** cuda/kernels.cu: the device kernels of libltf_cuda.so: the drivers of
** kernels/ops.cuh with an executor that launches each body as a
** grid-stride __global__ loop over every output index on the device's
** stream (asynchronously), and float matmuls through cuBLAS.
**
** One kernel is instantiated per (body, dtype); the elementwise op code is
** a kernel argument (a switch uniform across the grid), which keeps the
** module's compile time to about a minute per architecture.
*/
#include "kernels/ops.cuh"
#include "runtime.h"

namespace {

template <class F, class P> __global__ void grid_loop(int64_t n, P p) {
    int64_t step = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) F::at(i, p);
}

struct CudaExec {
    ltf_ctx *ctx;
    const char *op;
    ltf_cuda_dev *d;
    ltf_status st;

    CudaExec(ltf_ctx *c, const char *name) : ctx(c), op(name), d(ltf_cuda_dev_of(c)), st(LTF_OK) {
        if (!d) st = ltf_cu::fail(ctx, LTF_ERR_FAILED_PRECONDITION, "%s: no CUDA device is open", op);
    }
    ltf_status status() const { return st; }
    ltf_status cuda_fail(cudaError_t e) {
        ltf_cuda_dev_record(d, e, NULL);
        return st = ltf_cu::fail(ctx, e == cudaErrorMemoryAllocation ? LTF_ERR_RESOURCE_EXHAUSTED : LTF_ERR_INTERNAL,
                                 "%s: %s: %s", op, cudaGetErrorName(e), cudaGetErrorString(e));
    }
    template <class F, class P> ltf_status run(int64_t n, const P &p) {
        if (n <= 0) return LTF_OK;
        const int block = 256;
        int64_t blocks = (n + block - 1) / block, cap = (int64_t)d->sms * 16;
        if (blocks > cap) blocks = cap;
        grid_loop<F, P><<<(unsigned)blocks, block, 0, d->stream>>>(n, p);
        cudaError_t e = cudaGetLastError();
        return e == cudaSuccess ? LTF_OK : cuda_fail(e);
    }
    void *alloc(size_t bytes) {
        void *p = ltf_cuda_dev_alloc(d, bytes);
        if (!p)
            st = ltf_cu::fail(ctx, LTF_ERR_RESOURCE_EXHAUSTED, "%s: out of GPU memory allocating %zu bytes: %s", op,
                              bytes, d->err);
        return p;
    }
    void release(void *p, size_t bytes) { ltf_cuda_dev_free(d, p, bytes); }
    ltf_status copy(void *dst, const void *src, size_t n) {
        cudaError_t e = cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, d->stream);
        return e == cudaSuccess ? LTF_OK : cuda_fail(e);
    }
    ltf_status zero(void *dst, size_t n) {
        cudaError_t e = cudaMemsetAsync(dst, 0, n, d->stream);
        return e == cudaSuccess ? LTF_OK : cuda_fail(e);
    }
    /* device bytes to host memory, after everything queued before them */
    ltf_status read(void *host, const void *src, size_t n) {
        cudaError_t e = cudaMemcpyAsync(host, src, n, cudaMemcpyDeviceToHost, d->stream);
        if (e == cudaSuccess) e = cudaStreamSynchronize(d->stream);
        return e == cudaSuccess ? LTF_OK : cuda_fail(e);
    }
    int *flag() { return d->flag; }
    ltf_status check() { return LTF_OK; }   /* the flag is read at the next sync (runtime.cpp) */
    /* C = op(A) @ op(B) (+ C when 'acc') per batch, row-major, through cuBLAS's column-major
    ** GEMM on the transposed problem: C^T = op(B)^T op(A)^T. */
    /* Scratch a kernel may take at once (conv2d's im2col columns). */
    size_t scratch_budget() const { return (size_t)256 << 20; }
    ltf_status gemm(int dt, int ta, int tb, int64_t m, int64_t n, int64_t k, const void *a, int64_t sa,
                    const void *b, int64_t sb, void *c, int64_t sc, int64_t batch, int acc = 0) {
        const int64_t lim = 2147483647;
        if (m > lim || n > lim || k > lim || batch > lim)
            return st = ltf_cu::fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: a dimension exceeds cuBLAS's int", op);
        cudaDataType_t ty = dt == ltf_cu::DT_F32 ? CUDA_R_32F : CUDA_R_64F;
        cublasComputeType_t ct = dt == ltf_cu::DT_F32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F;
        float a32 = 1, b32 = acc ? 1.0f : 0.0f;
        double a64 = 1, b64 = acc ? 1.0 : 0.0;
        const void *alpha = dt == ltf_cu::DT_F32 ? (const void *)&a32 : (const void *)&a64;
        const void *beta = dt == ltf_cu::DT_F32 ? (const void *)&b32 : (const void *)&b64;
        int lda = (int)(ta ? m : k), ldb = (int)(tb ? k : n);
        cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
        cublasStatus_t s;
        if (batch == 1)
            s = cublasGemmEx(d->blas, opb, opa, (int)n, (int)m, (int)k, alpha, b, ty, ldb, a, ty, lda, beta, c, ty,
                             (int)n, ct, CUBLAS_GEMM_DEFAULT);
        else
            s = cublasGemmStridedBatchedEx(d->blas, opb, opa, (int)n, (int)m, (int)k, alpha, b, ty, ldb, sb, a, ty, lda,
                                           sa, beta, c, ty, (int)n, sc, (int)batch, ct, CUBLAS_GEMM_DEFAULT);
        if (s == CUBLAS_STATUS_SUCCESS) return LTF_OK;
        snprintf(d->err, sizeof d->err, "%s: %s", cublasGetStatusName(s), cublasGetStatusString(s));
        return st = ltf_cu::fail(ctx, s == CUBLAS_STATUS_ALLOC_FAILED ? LTF_ERR_RESOURCE_EXHAUSTED : LTF_ERR_INTERNAL,
                                 "%s: %s: %s", op, cublasGetStatusName(s), cublasGetStatusString(s));
    }
};

}  // namespace

const void *ltf_cuda_kernel(int op) { return ltf_cu::kernel_for<CudaExec>(op); }
