/*
** cuda/runtime.cpp: libltf_cuda.so's entry point and backend (ltf_backend.h):
** per device one non-default stream that every copy and kernel is queued
** on, a cuBLAS handle bound to it, and a caching allocator.
**
** Allocator: requests are rounded to a block size (powers of two from
** 512 B to 1 MiB; above, multiples of 2 MiB) and served from free lists of
** blocks of that size; a freed block goes back to its list, cudaMalloc runs
** only on a miss, 'trim' gives every cached block back (cudaFree). Reuse is
** safe without events because everything runs on the one stream: a block
** freed by the host while a queued kernel still reads it is handed to an
** op whose kernels are queued after that one.
**
** No call prints or aborts: every CUDA/cuBLAS failure becomes -1/NULL with
** its text in 'error'.
*/
#include <stdio.h>
#include <string.h>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>
#include "runtime.h"

/* {==== Caching allocator */
struct ltf_cuda_cache {
    std::vector<void *> small[LTF_CUDA_SMALL_CLASSES];           /* free blocks per class */
    std::unordered_map<size_t, std::vector<void *> > large;     /* free blocks per size */
    std::unordered_map<void *, size_t> live;                     /* handed out: block size */
};

static size_t block_size(size_t n, int *cls) {
    size_t b = 512;
    for (int c = 0; c < LTF_CUDA_SMALL_CLASSES; c++, b <<= 1)
        if (n <= b) { *cls = c; return b; }
    *cls = -1;
    const size_t g = (size_t)2 << 20;
    return (n + g - 1) / g * g;
}

static void trim(void *bctx);

void *ltf_cuda_dev_alloc(ltf_cuda_dev *d, size_t nbytes) {
    ltf_cuda_cache *c = d->cache;
    int cls;
    size_t bs = block_size(nbytes ? nbytes : 1, &cls);
    void *p = NULL;
    try {
        std::vector<void *> *list = cls >= 0 ? &c->small[cls] : NULL;
        if (!list) {
            auto it = c->large.find(bs);
            if (it != c->large.end()) list = &it->second;
        }
        if (list && !list->empty()) {
            p = list->back();
            list->pop_back();
        } else {
            cudaError_t e = cudaMalloc(&p, bs);
            if (e == cudaErrorMemoryAllocation) {   /* not sticky: give the cache back and retry */
                (void)cudaGetLastError();
                trim(d);
                e = cudaMalloc(&p, bs);
            }
            if (e != cudaSuccess) {
                (void)cudaGetLastError();
                ltf_cuda_dev_record(d, e, "cudaMalloc");
                return NULL;
            }
            d->reserved += bs;
        }
        c->live[p] = bs;
    } catch (...) {   /* host out of memory in the bookkeeping */
        snprintf(d->err, sizeof d->err, "out of host memory in the CUDA allocator");
        if (p) {
            cudaFree(p);
            d->reserved -= bs;
        }
        return NULL;
    }
    d->in_use += bs;
    return p;
}

/* A captured graph (ltf_backend.graph_*): its executable and the blocks
** freed while it was captured (kernel scratch), which its launches still use. */
struct ltf_cuda_graph {
    cudaGraphExec_t exec = NULL;
    std::vector<std::pair<void *, size_t> > held;
};

void ltf_cuda_dev_free(ltf_cuda_dev *d, void *p, size_t nbytes) {
    if (!p) return;
    if (d->capture) {   /* a captured launch may use it at every replay */
        try {
            d->capture->held.push_back(std::make_pair(p, nbytes));
            return;
        } catch (...) {
            /* no room to hold it: leak it rather than reuse it under the graph */
            return;
        }
    }
    ltf_cuda_cache *c = d->cache;
    auto it = c->live.find(p);
    if (it == c->live.end()) return;   /* not ours (or freed twice): ignore */
    size_t bs = it->second;
    c->live.erase(it);
    d->in_use -= bs;
    int cls;
    block_size(bs, &cls);
    try {
        if (cls >= 0) c->small[cls].push_back(p);
        else c->large[bs].push_back(p);
    } catch (...) {
        cudaFree(p);
        d->reserved -= bs;
    }
}

static void trim(void *bctx) {
    ltf_cuda_dev *d = (ltf_cuda_dev *)bctx;
    ltf_cuda_cache *c = d->cache;
    for (int k = 0; k < LTF_CUDA_SMALL_CLASSES; k++) {
        for (void *p : c->small[k]) {
            cudaFree(p);
            d->reserved -= (size_t)512 << k;
        }
        c->small[k].clear();
    }
    for (auto &kv : c->large) {
        for (void *p : kv.second) {
            cudaFree(p);
            d->reserved -= kv.first;
        }
    }
    c->large.clear();
}
/* }==== */

/* {==== Errors */
int ltf_cuda_dev_record(ltf_cuda_dev *d, cudaError_t e, const char *what) {
    if (what)
        snprintf(d->err, sizeof d->err, "%s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
    else
        snprintf(d->err, sizeof d->err, "%s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
    return -1;
}

/* A kernel's deferred error (ltf_cu::ERR_*), read at a sync. */
static int flag_failure(ltf_cuda_dev *d) {
    int f = *d->flag_host;
    if (!f) return 0;
    *d->flag_host = 0;
    cudaMemsetAsync(d->flag, 0, sizeof(int), d->stream);
    static const char *const what[] = { "", "integer division by zero", "integers to negative integer powers are not allowed",
                                        "an index is out of range (indices are 1-based)" };
    /* the factorizations' (ltf_cu::ERR_CHOLESKY..): the CPU kernel's message */
    static const char *const la[] = {
        "cholesky: Cholesky decomposition was not successful. The input might not be valid.",
        "inv: Input is not invertible.", "solve: Input matrix is not invertible.",
        "eigh: Eigen decomposition was not successful. The input might not be valid.",
        "svd: SVD did not converge. The input might not be valid." };
    if (f >= 40 && f < 45)
        snprintf(d->err, sizeof d->err, "a GPU kernel failed: %s (reported at the next synchronization)", la[f - 40]);
    else
        snprintf(d->err, sizeof d->err, "a GPU kernel found %s (reported at the next synchronization)",
                 f > 0 && f < 4 ? what[f] : "an invalid argument");
    return -1;
}
/* }==== */

/* {==== Backend functions */
static void *be_alloc(void *bctx, size_t nbytes) { return ltf_cuda_dev_alloc((ltf_cuda_dev *)bctx, nbytes); }
static void be_free(void *bctx, void *p, size_t nbytes) { ltf_cuda_dev_free((ltf_cuda_dev *)bctx, p, nbytes); }

/* Wait for the stream, then report a kernel's flag. */
static int be_sync(void *bctx) {
    ltf_cuda_dev *d = (ltf_cuda_dev *)bctx;
    cudaError_t e = cudaMemcpyAsync(d->flag_host, d->flag, sizeof(int), cudaMemcpyDeviceToHost, d->stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(d->stream);
    if (e != cudaSuccess) return ltf_cuda_dev_record(d, e, NULL);
    return flag_failure(d);
}

static int be_copy(void *bctx, void *dst, const void *src, size_t nbytes, int to_host) {
    ltf_cuda_dev *d = (ltf_cuda_dev *)bctx;
    if (nbytes == 0) return 0;
    cudaError_t e = cudaMemcpyAsync(dst, src, nbytes, to_host ? cudaMemcpyDeviceToHost : cudaMemcpyHostToDevice,
                                    d->stream);
    if (e != cudaSuccess) return ltf_cuda_dev_record(d, e, NULL);
    /* to the host the bytes must be there on return. From the host the
    ** engine's (pageable) buffer may be reused at once: CUDA stages a
    ** pageable source before cudaMemcpyAsync returns. */
    return to_host ? be_sync(bctx) : 0;
}

static int be_copy_d2d(void *bctx, void *dst, const void *src, size_t nbytes) {
    ltf_cuda_dev *d = (ltf_cuda_dev *)bctx;
    if (nbytes == 0) return 0;
    cudaError_t e = cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, d->stream);
    return e == cudaSuccess ? 0 : ltf_cuda_dev_record(d, e, NULL);
}

static int be_zero(void *bctx, void *dst, size_t nbytes) {
    ltf_cuda_dev *d = (ltf_cuda_dev *)bctx;
    if (nbytes == 0) return 0;
    cudaError_t e = cudaMemsetAsync(dst, 0, nbytes, d->stream);
    return e == cudaSuccess ? 0 : ltf_cuda_dev_record(d, e, NULL);
}

static void *be_kernel(void *bctx, int op) {
    (void)bctx;
    return (void *)ltf_cuda_kernel(op);
}
/* {==== Graphs: stream capture (relaxed mode: the caching allocator may
** cudaMalloc meanwhile), instantiated once, launched on the stream */
static void release_held(ltf_cuda_dev *d, ltf_cuda_graph *g) {
    for (auto &b : g->held) ltf_cuda_dev_free(d, b.first, b.second);
    g->held.clear();
}

static int be_graph_begin(void *bctx) {
    ltf_cuda_dev *d = (ltf_cuda_dev *)bctx;
    if (d->capture) return -1;
    d->capture = new (std::nothrow) ltf_cuda_graph();
    if (!d->capture) {
        snprintf(d->err, sizeof d->err, "out of host memory starting a graph capture");
        return -1;
    }
    cudaError_t e = cudaStreamBeginCapture(d->stream, cudaStreamCaptureModeRelaxed);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        delete d->capture;
        d->capture = NULL;
        return ltf_cuda_dev_record(d, e, "cudaStreamBeginCapture");
    }
    return 0;
}

static void *be_graph_end(void *bctx) {
    ltf_cuda_dev *d = (ltf_cuda_dev *)bctx;
    ltf_cuda_graph *g = d->capture;
    if (!g) return NULL;
    cudaGraph_t graph = NULL;
    cudaError_t e = cudaStreamEndCapture(d->stream, &graph);
    d->capture = NULL;
    if (e == cudaSuccess && graph) {
        e = cudaGraphInstantiate(&g->exec, graph, 0);
        cudaGraphDestroy(graph);
        if (e == cudaSuccess) return g;
    }
    (void)cudaGetLastError();
    ltf_cuda_dev_record(d, e == cudaSuccess ? cudaErrorStreamCaptureInvalidated : e, "graph capture");
    release_held(d, g);
    delete g;
    return NULL;
}

static int be_graph_launch(void *bctx, void *graph) {
    ltf_cuda_dev *d = (ltf_cuda_dev *)bctx;
    cudaError_t e = cudaGraphLaunch(((ltf_cuda_graph *)graph)->exec, d->stream);
    return e == cudaSuccess ? 0 : ltf_cuda_dev_record(d, e, "cudaGraphLaunch");
}

static void be_graph_free(void *bctx, void *graph) {
    ltf_cuda_dev *d = (ltf_cuda_dev *)bctx;
    ltf_cuda_graph *g = (ltf_cuda_graph *)graph;
    if (!g) return;
    if (g->exec) cudaGraphExecDestroy(g->exec);
    release_held(d, g);   /* queued launches finish first: the blocks go back to the cache, reused in stream order */
    delete g;
}
/* }==== */

static int be_fused_run(void *bctx, ltf_ctx *ctx, const struct ltf_fused *f, ltf_tensor *const *ext, int next,
                        ltf_tensor *out) {
    return ltf_cuda_fused_run_on((ltf_cuda_dev *)bctx, ctx, f, ext, next, out);
}
static const char *be_error(void *bctx) { return ((ltf_cuda_dev *)bctx)->err; }
static size_t be_in_use(void *bctx) { return ((ltf_cuda_dev *)bctx)->in_use; }
static size_t be_reserved(void *bctx) { return ((ltf_cuda_dev *)bctx)->reserved; }

/* The devices this module opened (the fallback of ltf_cuda_dev_of). */
static ltf_cuda_dev *last_opened;

static void be_close(void *bctx) {
    ltf_cuda_dev *d = (ltf_cuda_dev *)bctx;
    if (!d) return;
    cudaSetDevice(d->ordinal);
    if (d->stream) cudaStreamSynchronize(d->stream);
    ltf_cuda_fusion_close(d);
    if (d->cache) {
        trim(d);
        for (auto &kv : d->cache->live) cudaFree(kv.first);
        delete d->cache;
    }
    if (d->blas) cublasDestroy(d->blas);
    if (d->flag) cudaFree(d->flag);
    if (d->flag_host) cudaFreeHost(d->flag_host);
    if (d->stream) cudaStreamDestroy(d->stream);
    (void)cudaGetLastError();
    if (last_opened == d) last_opened = NULL;
    d->magic = 0;
    delete d;
}
/* }==== */

ltf_cuda_dev *ltf_cuda_dev_of(ltf_ctx *ctx) {
    const ltf_backend *b = ctx ? ctx->backend[LTF_DEVICE_CUDA] : NULL;
    if (b && b->bctx && ((ltf_cuda_dev *)b->bctx)->magic == LTF_CUDA_MAGIC) return (ltf_cuda_dev *)b->bctx;
    return last_opened;
}

static int open_fail(ltf_cuda_dev *d, char *err, size_t errlen, const char *what, cudaError_t e) {
    if (err && errlen) snprintf(err, errlen, "%s: %s: %s", what, cudaGetErrorName(e), cudaGetErrorString(e));
    (void)cudaGetLastError();
    be_close(d);
    return -1;
}

/* The module's entry point (ltf_backend.h). With 'out' NULL: the number of
** devices, 0 when there is no driver or no GPU (nothing printed). */
extern "C" __attribute__((visibility("default"))) int ltf_device_module_open(ltf_ctx *ctx, int ordinal,
                                                                              ltf_backend *out, char *err,
                                                                              size_t errlen) {
    (void)ctx;
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {   /* cudaErrorNoDevice, cudaErrorInsufficientDriver, ... */
        (void)cudaGetLastError();
        count = 0;
    }
    if (!out) return count;
    if (ordinal < 0 || ordinal >= count) {
        if (err && errlen) {
            if (e != cudaSuccess)
                snprintf(err, errlen, "no CUDA device: %s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
            else
                snprintf(err, errlen, "no CUDA device %d (%d present)", ordinal, count);
        }
        return -1;
    }
    ltf_cuda_dev *d = new (std::nothrow) ltf_cuda_dev();
    if (!d) {
        if (err && errlen) snprintf(err, errlen, "out of host memory opening CUDA device %d", ordinal);
        return -1;
    }
    d->ordinal = ordinal;
    d->cache = new (std::nothrow) ltf_cuda_cache();
    if (!d->cache) {
        be_close(d);
        if (err && errlen) snprintf(err, errlen, "out of host memory opening CUDA device %d", ordinal);
        return -1;
    }
    if ((e = cudaSetDevice(ordinal)) != cudaSuccess) return open_fail(d, err, errlen, "cudaSetDevice", e);
    cudaDeviceProp prop;
    if ((e = cudaGetDeviceProperties(&prop, ordinal)) != cudaSuccess)
        return open_fail(d, err, errlen, "cudaGetDeviceProperties", e);
    d->sms = prop.multiProcessorCount;
    d->cc = prop.major * 10 + prop.minor;
    if ((e = cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking)) != cudaSuccess)
        return open_fail(d, err, errlen, "cudaStreamCreate", e);
    if ((e = cudaMalloc((void **)&d->flag, sizeof(int))) != cudaSuccess) return open_fail(d, err, errlen, "cudaMalloc", e);
    if ((e = cudaMallocHost((void **)&d->flag_host, sizeof(int))) != cudaSuccess)
        return open_fail(d, err, errlen, "cudaMallocHost", e);
    *d->flag_host = 0;
    if ((e = cudaMemsetAsync(d->flag, 0, sizeof(int), d->stream)) != cudaSuccess)
        return open_fail(d, err, errlen, "cudaMemsetAsync", e);
    cublasStatus_t bs = cublasCreate(&d->blas);
    if (bs == CUBLAS_STATUS_SUCCESS) bs = cublasSetStream(d->blas, d->stream);
    if (bs != CUBLAS_STATUS_SUCCESS) {
        if (err && errlen) snprintf(err, errlen, "cublasCreate: %s: %s", cublasGetStatusName(bs), cublasGetStatusString(bs));
        be_close(d);
        return -1;
    }
    d->magic = LTF_CUDA_MAGIC;
    snprintf(d->err, sizeof d->err, "no error");
    last_opened = d;
    memset(out, 0, sizeof *out);
    out->name = "cuda";
    out->type = LTF_DEVICE_CUDA;
    out->alloc = be_alloc;
    out->free = be_free;
    out->copy = be_copy;
    out->bctx = d;
    out->ordinal = ordinal;
    out->copy_d2d = be_copy_d2d;
    out->zero = be_zero;
    out->sync = be_sync;
    out->kernel = be_kernel;
    out->error = be_error;
    out->bytes_in_use = be_in_use;
    out->bytes_reserved = be_reserved;
    out->trim = trim;
    out->close = be_close;
    out->fused_run = be_fused_run;
    out->graph_begin = be_graph_begin;
    out->graph_end = be_graph_end;
    out->graph_launch = be_graph_launch;
    out->graph_free = be_graph_free;
    return 0;
}
