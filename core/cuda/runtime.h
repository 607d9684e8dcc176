/*
** cuda/runtime.h: one CUDA device as libltf_cuda.so drives it (shared by
** runtime.cpp, kernels.cu and fusion.cpp; C++ only): its stream, cuBLAS
** handle, caching allocator, the flag kernels raise errors into, and the
** text of the last failure.
*/
#ifndef LTF_CUDA_RUNTIME_H
#define LTF_CUDA_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime.h>
#include <cublas_v2.h>
extern "C" {
#include "../ctx.h"
}

#define LTF_CUDA_MAGIC 0x6c746663u   /* "ltfc": a bctx of this module */
#define LTF_CUDA_SMALL_CLASSES 12     /* 512 B .. 1 MiB, powers of two */

struct ltf_cuda_cache;                 /* runtime.cpp */

typedef struct ltf_cuda_dev {
    uint32_t magic;
    int ordinal;
    int sms;                           /* multiprocessors: grid sizes */
    int cc;                            /* compute capability, 10 * major + minor */
    cudaStream_t stream;
    cublasHandle_t blas;
    int *flag;                         /* device int the kernels raise ltf_cu::ERR_* into */
    int *flag_host;                    /* pinned: read at each sync */
    struct ltf_cuda_cache *cache;
    size_t in_use, reserved;           /* bytes handed out; held in all (in use + cached) */
    struct ltf_cuda_fusion *fusion;    /* compiled fused groups (fusion.cpp) */
    struct ltf_cuda_graph *capture;    /* the graph being captured (graph_begin..graph_end): blocks
                                       ** freed meanwhile are held until the graph is freed */
    char err[512];                     /* last failure: "cudaErrorX: text" */
} ltf_cuda_dev;

/* The device a kernel runs on: the bctx of ctx->backend[LTF_DEVICE_CUDA]
** when it is one of this module's, else the device this module opened
** last; NULL when there is none. */
ltf_cuda_dev *ltf_cuda_dev_of(ltf_ctx *ctx);
/* Device memory through the caching allocator; NULL when out of memory
** (after giving the cache back and retrying once). */
void *ltf_cuda_dev_alloc(ltf_cuda_dev *d, size_t nbytes);
void ltf_cuda_dev_free(ltf_cuda_dev *d, void *p, size_t nbytes);
/* Record a failed CUDA call as "<cudaErrorName>: <text>" (what: context,
** may be NULL) in d->err; returns -1. */
int ltf_cuda_dev_record(ltf_cuda_dev *d, cudaError_t e, const char *what);

/* kernels.cu: the device kernel of op 'op' (ltf_kernel_fn), or NULL. */
const void *ltf_cuda_kernel(int op);
/* Whether that kernel takes float16/bfloat16 as they are (ltf_backend.takes_half). */
int ltf_cuda_takes_half(int op);
/* fusion.cpp: run fused group 'f' on device 'd' (ltf_cuda_fused_run for a
** given device: the backend's fused_run entry). */
int ltf_cuda_fused_run_on(ltf_cuda_dev *d, ltf_ctx *ctx, const struct ltf_fused *f, struct ltf_tensor *const *ext,
                          int next, struct ltf_tensor *out);
/* fusion.cpp: release the compiled groups of a device. */
void ltf_cuda_fusion_close(ltf_cuda_dev *d);

#endif
