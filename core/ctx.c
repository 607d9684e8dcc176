/*
** ctx.c: context lifetime, error text, memory counters, host allocator
** hooks, the memory budget and the random generator. A context is reference
** counted (atomically: a shared storage may drop the last reference on any
** thread): every storage retains it, so a host may drop its own reference
** while tensors are still alive.
** The context is the lowest layer: the state the layers above keep per
** context (block caches, functions, devices, graph captures) is freed and
** trimmed by the hooks its owners register (ltf_ctx_hook_add), never by a
** call from here (docs/internals.md, "Layers").
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ctx.h"
#include "device.h"   /* ltf_core_api_table only: see ltf_ctx_new_with_allocator */

/* The default limit on the device memory graph captures hold (plan.c):
** $LTF_DEVICE_GRAPH_MEMORY (bytes, with an optional K, M or G suffix;
** 0 turns graph replay off), else 1 GiB; read as the context is made. */
static size_t default_graph_limit(void) {
    const char *e = getenv("LTF_DEVICE_GRAPH_MEMORY");
    if (!e || !*e) return (size_t)1 << 30;
    char *end;
    unsigned long long v = strtoull(e, &end, 10);
    if (*end == 'K' || *end == 'k') v <<= 10;
    else if (*end == 'M' || *end == 'm') v <<= 20;
    else if (*end == 'G' || *end == 'g') v <<= 30;
    return (size_t)v;
}

static int default_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("LTF_NUM_THREADS");
    if (env && atoi(env) > 0) n = atoi(env);
    if (n < 1) n = 1;
    if (n > LTF_POOL_MAX_THREADS) n = LTF_POOL_MAX_THREADS;
    return (int)n;
}

const char *ltf_version(void) { return LTF_VERSION; }

/* {==== Host allocator: the CPU backend over the context's hooks */
#define HOST_ALIGN 64

static void *host_alloc(void *bctx, size_t nbytes) {
    const ltf_allocator *a = &((ltf_ctx *)bctx)->allocator;
    return a->alloc(a->ud, nbytes ? nbytes : 1, HOST_ALIGN);
}

static void host_free(void *bctx, void *p, size_t nbytes) {
    const ltf_allocator *a = &((ltf_ctx *)bctx)->allocator;
    a->free(a->ud, p, nbytes ? nbytes : 1);
}

static int host_copy(void *bctx, void *dst, const void *src, size_t nbytes, int to_host) {
    (void)bctx;
    (void)to_host;
    memcpy(dst, src, nbytes);
    return 0;
}

static void *default_alloc(void *ud, size_t size, size_t alignment) {
    (void)ud;
    void *p = NULL;
    if (posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size ? size : 1) != 0) return NULL;
    return p;
}

static void default_free(void *ud, void *p, size_t size) {
    (void)ud;
    (void)size;
    free(p);
}

void *ltf_allocator_realloc(const ltf_allocator *a, void *ptr, size_t old_size, size_t new_size, size_t alignment) {
    ltf_allocator d = {default_alloc, default_free, NULL, NULL};
    if (!a || !a->alloc) a = &d;
    if (a->realloc) return a->realloc(a->ud, ptr, old_size, new_size, alignment);
    if (new_size == 0) {
        if (ptr) a->free(a->ud, ptr, old_size);
        return NULL;
    }
    void *p = a->alloc(a->ud, new_size, alignment);
    if (!p) return NULL;
    if (ptr) {
        memcpy(p, ptr, old_size < new_size ? old_size : new_size);
        a->free(a->ud, ptr, old_size);
    }
    return p;
}
/* }==== */

/* One process-wide counter of id blocks: the only mutable global, atomic. */
#define ID_BLOCK ((int64_t)1 << 20)
static int64_t id_blocks;

int64_t ltf_ctx_next_id(ltf_ctx *ctx) {
    if (ctx->next_tensor_id >= ctx->id_limit) {
        int64_t b = __atomic_fetch_add(&id_blocks, 1, __ATOMIC_RELAXED);
        ctx->next_tensor_id = b * ID_BLOCK;
        ctx->id_limit = (b + 1) * ID_BLOCK;
    }
    return ++ctx->next_tensor_id;
}

ltf_ctx *ltf_ctx_new_with_allocator(const ltf_allocator *a) {
    if (a && (!a->alloc || !a->free)) return NULL;
    ltf_ctx *ctx = a ? a->alloc(a->ud, sizeof *ctx, HOST_ALIGN) : calloc(1, sizeof *ctx);
    if (!ctx) return NULL;
    memset(ctx, 0, sizeof *ctx);
    ctx->refs = 1;
    ctx->backend[LTF_DEVICE_CPU] = &ltf_cpu_backend;
    if (a) {
        ctx->allocator = *a;
        ctx->host_backend = (ltf_backend){.name = "cpu", .type = LTF_DEVICE_CPU, .alloc = host_alloc,
                                          .free = host_free, .copy = host_copy, .bctx = ctx};
        ctx->backend[LTF_DEVICE_CPU] = &ctx->host_backend;
    }
    ctx->grad_needed = ~(uint64_t)0;
    ctx->ndevices = -1;             /* looked up on first use (device.c) */
    ctx->scope_type = -1;
    ctx->soft_placement = 1;
    ctx->nvisible = -1;
    ctx->graph_limit = default_graph_limit();
    /* device modules, and their kernels built for the host (libltf_gpu_host.a,
    ** whose tests run on a plain context), call the engine through it */
    ctx->core_api = &ltf_core_api_table;
    ltf_pool_init(&ctx->pool, default_threads());
    ltf_ctx_set_seed(ctx, 0x9E3779B97F4A7C15ull);
    return ctx;
}

ltf_ctx *ltf_ctx_new(void) { return ltf_ctx_new_with_allocator(NULL); }

void ltf_ctx_allocator(const ltf_ctx *ctx, ltf_allocator *out) {
    if (ctx->allocator.alloc) *out = ctx->allocator;
    else *out = (ltf_allocator){default_alloc, default_free, NULL, NULL};
}

void ltf_ctx_set_memory_limit(ltf_ctx *ctx, size_t bytes) { ctx->memory_limit = bytes; }
size_t ltf_ctx_memory_limit(const ltf_ctx *ctx) { return ctx->memory_limit; }

void ltf_ctx_set_collect_hook(ltf_ctx *ctx, ltf_collect_hook hook, void *ud) {
    ctx->collect = hook;
    ctx->collect_ud = ud;
}

/* {==== Hooks */
ltf_status ltf_ctx_hook_add(ltf_ctx *ctx, ltf_ctx_event event, ltf_ctx_hook_fn fn, void *data) {
    for (int i = 0; i < ctx->nhooks; i++)
        if (ctx->hooks[i].fn == fn && ctx->hooks[i].data == data && ctx->hooks[i].event == (int)event) return LTF_OK;
    if (ctx->nhooks == LTF_CTX_HOOKS)
        return ltf_fail(ctx, LTF_ERR_INTERNAL, "context: all %d hook slots are taken", LTF_CTX_HOOKS);
    ctx->hooks[ctx->nhooks].fn = fn;
    ctx->hooks[ctx->nhooks].data = data;
    ctx->hooks[ctx->nhooks].event = (int)event;
    ctx->nhooks++;
    return LTF_OK;
}

void ltf_ctx_hook_run(ltf_ctx *ctx, ltf_ctx_event event) {
    for (int i = 0; i < ctx->nhooks; i++)
        if (ctx->hooks[i].event == (int)event) ctx->hooks[i].fn(ctx, ctx->hooks[i].data);
}
/* }==== */

void ltf_ctx_retain(ltf_ctx *ctx) { __atomic_add_fetch(&ctx->refs, 1, __ATOMIC_RELAXED); }

void ltf_ctx_release(ltf_ctx *ctx) {
    if (!ctx || __atomic_sub_fetch(&ctx->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
    ltf_pool_destroy(&ctx->pool);
    /* the owners' state, last registered first: each hook runs once (a hook
    ** that registers another while running is not run) */
    for (int i = ctx->nhooks - 1; i >= 0; i--)
        if (ctx->hooks[i].event == LTF_CTX_EVENT_FREE) ctx->hooks[i].fn(ctx, ctx->hooks[i].data);
    ctx->nhooks = 0;
    if (ctx->allocator.alloc) {
        ltf_allocator a = ctx->allocator;
        a.free(a.ud, ctx, sizeof *ctx);
    } else {
        free(ctx);
    }
}

const char *ltf_ctx_error(const ltf_ctx *ctx) { return ctx->errmsg; }
ltf_status ltf_ctx_status(const ltf_ctx *ctx) { return ctx->last_status; }

ltf_status ltf_fail(ltf_ctx *ctx, ltf_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
    va_end(ap);
    ctx->last_status = code;
    return code;
}

ltf_status ltf_ctx_set_error(ltf_ctx *ctx, ltf_status code, const char *message) {
    return ltf_fail(ctx, code, "%s", message);
}

ltf_status ltf_fail_oom(ltf_ctx *ctx, const char *what, size_t bytes) {
    return ltf_fail(ctx, LTF_ERR_RESOURCE_EXHAUSTED,
                    "out of memory allocating %s of %zu bytes", what, bytes);
}

ltf_status ltf_ctx_set_num_threads(ltf_ctx *ctx, int n) {
    if (ltf_pool_set_threads(&ctx->pool, n) != 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "set_num_threads: %d is outside 1..%d", n, LTF_POOL_MAX_THREADS);
    return LTF_OK;
}

int ltf_ctx_num_threads(const ltf_ctx *ctx) { return ctx->pool.nthreads; }

void ltf_ctx_memory_stats(const ltf_ctx *ctx, ltf_memory_stats *out) {
    out->live_bytes = ctx->live_bytes;
    out->peak_bytes = ctx->peak_bytes;
    out->allocations = ctx->allocations;
    out->live_tensors = ctx->live_storages;
}

void ltf_ctx_set_print_hook(ltf_ctx *ctx, ltf_print_hook hook, void *ud) {
    ctx->print_hook = hook;
    ctx->print_ud = ud;
}

void ltf_ctx_reset_peak(ltf_ctx *ctx) { ctx->peak_bytes = ctx->live_bytes; }

ltf_status ltf_ctx_set_comm(ltf_ctx *ctx, const ltf_comm *comm) {
    if (comm && comm->abi != LTF_COMM_ABI)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "set_comm: the communicator has ABI %d, the engine expects %d",
                        comm->abi, LTF_COMM_ABI);
    if (comm && (comm->size < 1 || comm->rank < 0 || comm->rank >= comm->size || !comm->check || !comm->all_reduce ||
                 !comm->broadcast || !comm->all_gather || !comm->reduce_scatter || !comm->barrier))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "set_comm: bad communicator (rank %d of %d, or a missing entry)",
                        comm->rank, comm->size);
    ctx->comm = comm;
    return LTF_OK;
}

const ltf_comm *ltf_ctx_comm(const ltf_ctx *ctx) { return ctx->comm; }

/* {==== Random generator: xoshiro256**, seeded through splitmix64 */
uint64_t ltf_rng_splitmix(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t ltf_rng_next(uint64_t s[4]) {
    uint64_t r = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

void ltf_ctx_set_seed(ltf_ctx *ctx, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) ctx->rng[i] = ltf_rng_splitmix(&x);
}

uint64_t ltf_ctx_rand64(ltf_ctx *ctx) { return ltf_rng_next(ctx->rng); }
/* }==== */
