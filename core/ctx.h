/*
** ctx.h: the engine context (one per lua_State): allocator counters, random
** generator, thread pool, error text, and the hooks the tape and the graph
** builder use. No engine state lives outside a context.
*/
#ifndef LTF_CTX_H
#define LTF_CTX_H

#include <stdarg.h>
#include "ltf.h"
#include "pool.h"
#include "ltf_backend.h"
#include "ltf_comm.h"

#if defined(__GNUC__)
#define LTF_INTERNAL __attribute__((visibility("hidden")))
#else
#define LTF_INTERNAL
#endif

#ifdef LTF_DEBUG_ASSERT
#include <assert.h>
#define LTF_ASSERT(c) assert(c)
#else
#define LTF_ASSERT(c) ((void)0)
#endif

#define LTF_ERRMSG_MAX 1024
#define LTF_BLOCK_CLASSES 6       /* 256 B .. 8 KiB */
#define LTF_BLOCK_CACHE_BYTES (1u << 20)  /* bytes of blocks kept per class, at least */
#define LTF_BLOCK_CACHE_MAX_BYTES (8u << 20)  /* at most: as many as were out at once (storage.c) */
#define LTF_BIG_BLOCKS 8                   /* large blocks kept for reuse */
#define LTF_BIG_CACHE_BYTES ((size_t)64 << 20)  /* kept at least; more for larger tensors */

#define LTF_MAX_DEVICES 8         /* device ordinals per type a context may open (/gpu:0../gpu:7) */
#define LTF_CTX_HOOKS 8           /* hooks a context holds (ltf_ctx_hook_add): one per owner and event */

/* Events the owners of per-context state hook into (ltf_ctx_hook_add):
** the context is freed (the last reference went), or device memory ran
** short (give back device memory kept for reuse, then the device's cache
** is trimmed and the allocation retried). */
typedef enum ltf_ctx_event {
    LTF_CTX_EVENT_FREE = 0,
    LTF_CTX_EVENT_RECLAIM,
    LTF_CTX_EVENT_COUNT
} ltf_ctx_event;
typedef void (*ltf_ctx_hook_fn)(ltf_ctx *ctx, void *data);

struct ltf_tape;    /* tape.c: gradient recording (autodiff) */
struct ltf_core_api;  /* device.h: engine calls for the in-tree device modules */
struct ltf_graph;   /* graph.c: the graph being traced */
typedef struct ltf_summary_table ltf_summary_table;   /* summary.c: the event-file writers */

struct ltf_ctx {
    int32_t refs;                 /* owner's reference + one per live storage; atomic
                                  ** (a shared storage may drop it on any thread) */
    ltf_status last_status;
    char errmsg[LTF_ERRMSG_MAX];
    /* the print op's output (ltf_ctx_set_print_hook) */
    ltf_print_hook print_hook;
    void *print_ud;
    /* memory per device: the backend that allocates it (NULL: absent);
    ** backend[LTF_DEVICE_CUDA] is /gpu:0 once opened (device.c) */
    const ltf_backend *backend[LTF_DEVICE_TYPE_COUNT];
    /* devices other than the host (device.c): the module (dlopen handle)
    ** and its entry point, the device count (-1: not looked up yet), the
    ** backends opened so far (one per ordinal, on first use) and their
    ** memory peaks; the device scope ops are placed in (-1: none) and the
    ** device policy (1: explicit, refuse inputs on other devices) */
    void *device_module;
    void *device_open;
    int ndevices;
    ltf_backend *devices[LTF_MAX_DEVICES];
    size_t device_peak[LTF_MAX_DEVICES];
    const struct ltf_core_api *core_api;
    /* how GPU ops ran: LTF_OP_COUNT x LTF_KERNEL_RAN_COUNT counts, allocated
    ** when a device is found (ltf_ctx_device_kernel_stats) */
    uint64_t *kernel_stats;
    int scope_type, scope_ordinal;
    int device_policy_explicit;
    /* TensorFlow 2's default placement (docs/devices.md): 1 puts ops with
    ** no scope and no input on a device on /gpu:0 when one is visible (the
    ** Lua bindings turn it on; 0, the C default, leaves them with their
    ** inputs); soft placement (1: an explicit GPU placement without a
    ** kernel runs on the host; 0: refused); log each op's device to stderr;
    ** the visible GPUs (physical ordinals, nvisible -1: all) and whether a
    ** device was opened (then the visible list is fixed) */
    int default_placement, soft_placement, log_placement;
    int nphysical, nvisible, visible[LTF_MAX_DEVICES];
    int devices_initialized;
    /* graph replay of device plans (plan.c): the live captures, the device
    ** bytes they hold, the limit on those bytes (ltf_ctx_set_device_graph_limit;
    ** 0: no captures) and the clock of their last use (LRU eviction) */
    struct ltf_plan_graph *graphs;
    size_t graph_bytes, graph_limit;
    uint64_t graph_clock;
    /* memory accounting */
    size_t live_bytes, peak_bytes;
    int64_t allocations, live_storages;
    int64_t next_tensor_id;       /* ids for tapes and graphs (ltf_ctx_next_id) */
    int64_t id_limit;             /* end of the block of ids this context holds */
    /* host memory hooks (ltf_ctx_new_with_allocator) and the CPU backend
    ** that routes through them; 'allocator.alloc' NULL: the plain backend */
    ltf_allocator allocator;
    ltf_backend host_backend;
    /* memory budget (0: none) and the emergency collection run before an
    ** allocation past it fails (the Lua bindings run a full GC) */
    size_t memory_limit;
    ltf_collect_hook collect;
    void *collect_ud;
    int collecting;
    /* recycled small tensor blocks, one free list per power-of-two size
    ** class (storage.c): small eager ops skip malloc */
    void *block_cache[LTF_BLOCK_CLASSES];
    int block_cached[LTF_BLOCK_CLASSES];
    int block_out[LTF_BLOCK_CLASSES];    /* blocks of the class held by storages now */
    int block_peak[LTF_BLOCK_CLASSES];   /* the most held at once */
    /* a few recycled large blocks (best fit), so eager loops over big
    ** tensors do not map and zero fresh pages on every op */
    void *big_blocks[LTF_BIG_BLOCKS];
    size_t big_sizes[LTF_BIG_BLOCKS];
    int nbig;
    size_t big_bytes;
    size_t big_largest;           /* largest block offered to the cache so far */
    /* random generator (xoshiro256**) */
    uint64_t rng[4];
    /* threads for large kernels */
    ltf_pool pool;
    /* autodiff: innermost active tape (NULL when none records) and the
    ** hook op.c calls after each eager op while a tape records */
    struct ltf_tape *tape;
    int tapes_paused;             /* stop_recording nesting depth */
    uint64_t grad_needed;         /* while a gradient function runs: bit i set when input i's
                                  ** gradient is wanted (LTF_GRAD_NEEDED); all ones otherwise */
    ltf_status (*tape_record)(ltf_ctx *, int, ltf_tensor *const *, int, const ltf_attrs *,
                              ltf_tensor *const *, int);
    /* tracing: the graph ops add nodes to (NULL when eager), and the hook
    ** op.c hands symbolic calls to */
    struct ltf_graph *graph;
    ltf_status (*graph_op)(ltf_ctx *, int, ltf_tensor *const *, int, const ltf_attrs *,
                           ltf_tensor **, int, int *);
    /* tracing: what the graph knows of a symbolic int32/int64 vector's values
    ** (ltf_graph_int_values: shapes given as tensors, ops/movement.c); an
    ** unknown entry is INT64_MIN */
    void (*graph_int_values)(const ltf_tensor *, int64_t *, int *);
    /* control flow: the finished graphs cond/while nodes run (functions.c) */
    struct ltf_fn_table *fns;
    /* tf.summary's event-file writers, by id (summary.c; NULL until the
    ** first open; set atomically) */
    ltf_summary_table *summaries;
    /* what the owners of per-context state (storage.c's block caches,
    ** functions.c's table, device.c's modules, plan.c's graph captures) run
    ** at an event, in registration order (FREE: in reverse), so this layer
    ** calls none of them by name (ltf_ctx_hook_add) */
    struct { ltf_ctx_hook_fn fn; void *data; int event; } hooks[LTF_CTX_HOOKS];
    int nhooks;
    /* the communicator collective ops run over (ltf_comm.h; NULL: a group of one) */
    const ltf_comm *comm;
};

/* Whether the gradient function being run must produce input 'i''s gradient. */
#define LTF_GRAD_NEEDED(ctx, i) ((i) >= 64 || (((ctx)->grad_needed >> (i)) & 1u))

/* Record a failure: formats the message into ctx and returns 'code'. */
LTF_INTERNAL ltf_status ltf_fail(ltf_ctx *ctx, ltf_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Out-of-memory failure naming what was being allocated. */
LTF_INTERNAL ltf_status ltf_fail_oom(ltf_ctx *ctx, const char *what, size_t bytes);

/* Next 64 random bits from the context's generator. */
LTF_INTERNAL uint64_t ltf_ctx_rand64(ltf_ctx *ctx);
/* xoshiro256**: next 64 bits of the stream 's', and seeding through splitmix64
** (the context's generator and op-level seeded streams share these). */
LTF_INTERNAL uint64_t ltf_rng_next(uint64_t s[4]);
LTF_INTERNAL uint64_t ltf_rng_splitmix(uint64_t *x);

/* A tensor/variable id unique in the process: contexts take blocks of
** 2^20 ids from one atomic counter, so tensors shared between contexts
** never collide in a tape's or graph's id maps. */
LTF_INTERNAL int64_t ltf_ctx_next_id(ltf_ctx *ctx);
/* {==== Hooks: how the layers above the context free and trim their
** per-context state. An owner registers when it first creates that state
** (the first host block, the function table, the device module, the first
** graph capture); registering the same 'fn' and 'data' for an event again
** does nothing, so an owner need not remember it did. Fails (INTERNAL)
** only when the LTF_CTX_HOOKS slots are taken: a programming error.
** LTF_CTX_EVENT_FREE hooks run in reverse registration order when the
** last reference goes (after the thread pool stopped), each once. */
LTF_INTERNAL ltf_status ltf_ctx_hook_add(ltf_ctx *ctx, ltf_ctx_event event, ltf_ctx_hook_fn fn, void *data);
/* Run the hooks of 'event' (LTF_CTX_EVENT_RECLAIM: in registration order). */
LTF_INTERNAL void ltf_ctx_hook_run(ltf_ctx *ctx, ltf_ctx_event event);
/* }==== */

/* summary.c's LTF_CTX_EVENT_FREE hook: flush and close the context's writers. */
LTF_INTERNAL void ltf_summary_ctx_free(ltf_ctx *ctx, void *data);

/* {==== Reference counts: plain on objects one thread uses, atomic on
** shared ones (ltf_tensor_share, ltf_graph_share) and on contexts */
static inline void ltf_ref_inc(int32_t *r, int shared) {
    if (shared) __atomic_add_fetch(r, 1, __ATOMIC_RELAXED);
    else (*r)++;
}
/* Returns the count left. */
static inline int32_t ltf_ref_dec(int32_t *r, int shared) {
    if (shared) return __atomic_sub_fetch(r, 1, __ATOMIC_ACQ_REL);
    return --*r;
}
/* }==== */

#endif
