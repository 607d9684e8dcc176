/*
** storage.c: reference-counted device bytes and the CPU allocator.
** Every allocation is counted in the owning context (live, peak, count) so
** that tf.memory_stats() and the Lua collector see tensor memory.
*/
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include "storage.h"
#include "device.h"

#define ALIGN 64

/* {==== Strings */
ltf_string *ltf_string_new(const char *bytes, size_t len) {
    ltf_string *s = malloc(offsetof(ltf_string, bytes) + len + 1);
    if (!s) return NULL;
    s->len = len;
    s->refs = 1;
    if (len) memcpy(s->bytes, bytes, len);
    s->bytes[len] = '\0';
    return s;
}

/* A slab: this header, then entries [owning slab pointer][ltf_string], each
** 8-byte aligned. 'live' counts its live strings plus the builder's hold;
** atomic, as strings of one slab may end up in tensors freed on different
** threads. */
struct ltf_string_slab {
    size_t cap, used;   /* entry bytes after the header */
    int64_t live;
};
#define SLAB_ENTRY(len) ((sizeof(void *) + offsetof(ltf_string, bytes) + (len) + 1 + 7) & ~(size_t)7)

/* Freed slabs are kept for reuse (up to SLAB_KEEP of them, of the size asked
** for last): a reader's next chunk then lands in memory that is already
** mapped, instead of fresh pages the kernel must fault in and clear. */
#define SLAB_KEEP 8
static pthread_mutex_t slab_mu = PTHREAD_MUTEX_INITIALIZER;
static ltf_string_slab *slab_kept[SLAB_KEEP];
static int slab_nkept;

ltf_string_slab *ltf_string_slab_new(size_t cap) {
    ltf_string_slab *b = NULL;
    pthread_mutex_lock(&slab_mu);
    if (slab_nkept && slab_kept[slab_nkept - 1]->cap == cap) b = slab_kept[--slab_nkept];
    pthread_mutex_unlock(&slab_mu);
    if (!b) b = malloc(sizeof *b + cap);
    if (!b) return NULL;
    b->cap = cap;
    b->used = 0;
    b->live = 1;
    return b;
}

ltf_string *ltf_string_slab_add(ltf_string_slab *b, const char *bytes, size_t len) {
    if (len > b->cap || SLAB_ENTRY(len) > b->cap - b->used) return NULL;
    char *e = (char *)(b + 1) + b->used;
    b->used += SLAB_ENTRY(len);
    memcpy(e, &b, sizeof b);
    ltf_string *s = (ltf_string *)(e + sizeof(void *));
    s->len = len;
    s->refs = LTF_STRING_SLAB_BIT | 1;
    if (len) memcpy(s->bytes, bytes, len);
    s->bytes[len] = '\0';
    __atomic_add_fetch(&b->live, 1, __ATOMIC_RELAXED);
    return s;
}

static void slab_drop(ltf_string_slab *b) {
    if (__atomic_sub_fetch(&b->live, 1, __ATOMIC_ACQ_REL) != 0) return;
    ltf_string_slab *out = b;
    pthread_mutex_lock(&slab_mu);
    if (slab_nkept && slab_kept[0]->cap != b->cap) {  /* another size now: drop the old ones */
        while (slab_nkept) {
            ltf_string_slab *o = slab_kept[--slab_nkept];
            pthread_mutex_unlock(&slab_mu);
            free(o);
            pthread_mutex_lock(&slab_mu);
        }
    }
    if (slab_nkept < SLAB_KEEP) {
        slab_kept[slab_nkept++] = b;
        out = NULL;
    }
    pthread_mutex_unlock(&slab_mu);
    free(out);
}

void ltf_string_slab_done(ltf_string_slab *b) {
    if (b) slab_drop(b);
}


/* Blocks: LTF_STRING_BLOCK_SIZE bytes aligned to their size, this header
** first; a block string's owner is its address rounded down to the block
** size (no pointer before it: the entry is exactly [len][refs][bytes][NUL],
** a TFRecord's [length][crc][data][crc] in place). Freed blocks are kept
** for reuse: up to BLOCK_KEEP while a reader holds the blocks
** (ltf_string_blocks_hold) and for BLOCK_IDLE_NS after the last one closed
** (the next epoch's reader reuses them), BLOCK_KEEP_IDLE otherwise, trimmed
** at the next block activity. The Lua collector frees read batches in
** bursts (about 25 MB between full collections) and a block that went back
** to the system costs 64 page faults when the next read fills it: a third
** of the CPU time of reading. Kept blocks are at most the peak of blocks
** that were live at once. */
struct ltf_string_block {
    int64_t live;
    char pad[LTF_STRING_BLOCK_HEAD - sizeof(int64_t)];
};
#define BLOCK_KEEP 256
#define BLOCK_KEEP_IDLE 8
#define BLOCK_IDLE_NS 2000000000LL   /* readers closed this long ago: trim to BLOCK_KEEP_IDLE */
static ltf_string_block *block_kept[BLOCK_KEEP];
static int block_nkept, block_holders;
static int64_t blocks_live;   /* in use: handed out by ltf_string_block_new, not yet dropped */

int64_t ltf_string_blocks_live(void) { return __atomic_load_n(&blocks_live, __ATOMIC_RELAXED); }
static int64_t block_idle_since;   /* when the last holder let go */

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Under slab_mu: how many freed blocks may be kept now. */
static int block_keep_limit(void) {
    if (block_holders > 0) return BLOCK_KEEP;
    return now_ns() - block_idle_since < BLOCK_IDLE_NS ? BLOCK_KEEP : BLOCK_KEEP_IDLE;
}

/* Under slab_mu: move the blocks kept beyond the limit to 'drop'; their count. */
static int block_trim(ltf_string_block **drop) {
    int lim = block_keep_limit(), n = 0;
    while (block_nkept > lim) drop[n++] = block_kept[--block_nkept];
    return n;
}

void ltf_string_blocks_hold(int delta) {
    ltf_string_block *drop[BLOCK_KEEP];
    pthread_mutex_lock(&slab_mu);
    block_holders += delta;
    if (block_holders <= 0) {
        block_holders = 0;
        if (delta < 0) block_idle_since = now_ns();
    }
    int ndrop = block_trim(drop);
    pthread_mutex_unlock(&slab_mu);
    for (int i = 0; i < ndrop; i++) free(drop[i]);
}

ltf_string_block *ltf_string_block_new(void) {
    ltf_string_block *b = NULL;
    pthread_mutex_lock(&slab_mu);
    if (block_nkept) b = block_kept[--block_nkept];
    pthread_mutex_unlock(&slab_mu);
    if (!b) b = aligned_alloc(LTF_STRING_BLOCK_SIZE, LTF_STRING_BLOCK_SIZE);
    if (!b) return NULL;
    b->live = 1;
    __atomic_add_fetch(&blocks_live, 1, __ATOMIC_RELAXED);
    return b;
}

unsigned char *ltf_string_block_data(ltf_string_block *b) { return (unsigned char *)b + LTF_STRING_BLOCK_HEAD; }

ltf_string *ltf_string_block_adopt(ltf_string_block *b, size_t at, size_t len) {
    if ((at & 7) || at + offsetof(ltf_string, bytes) + len + 1 > LTF_STRING_BLOCK_SIZE - LTF_STRING_BLOCK_HEAD)
        return NULL;
    ltf_string *s = (ltf_string *)(ltf_string_block_data(b) + at);
    s->len = len;
    s->refs = LTF_STRING_BLOCK_BIT | 1;
    s->bytes[len] = '\0';
    __atomic_add_fetch(&b->live, 1, __ATOMIC_RELAXED);
    return s;
}

static void block_drop(ltf_string_block *b) {
    if (__atomic_sub_fetch(&b->live, 1, __ATOMIC_ACQ_REL) != 0) return;
    __atomic_sub_fetch(&blocks_live, 1, __ATOMIC_RELAXED);
    ltf_string_block *drop[BLOCK_KEEP];
    pthread_mutex_lock(&slab_mu);
    int ndrop = block_trim(drop);
    if (block_nkept < block_keep_limit()) {
        block_kept[block_nkept++] = b;
        b = NULL;
    }
    pthread_mutex_unlock(&slab_mu);
    for (int i = 0; i < ndrop; i++) free(drop[i]);
    free(b);
}

void ltf_string_block_done(ltf_string_block *b) {
    if (b) block_drop(b);
}

/* The library is unloaded (dlclose at lua_close, or exit): give the kept
** slabs and blocks back, so that leak checkers see none. */
__attribute__((destructor)) static void kept_free(void) {
    pthread_mutex_lock(&slab_mu);
    while (slab_nkept) free(slab_kept[--slab_nkept]);
    while (block_nkept) free(block_kept[--block_nkept]);
    pthread_mutex_unlock(&slab_mu);
}

void ltf_string_release(ltf_string *s) {
    if (!s) return;
    if (s->refs & LTF_STRING_BLOCK_BIT) {
        if ((--s->refs & ~LTF_STRING_BLOCK_BIT) == 0)
            block_drop((ltf_string_block *)((uintptr_t)s & ~(uintptr_t)(LTF_STRING_BLOCK_SIZE - 1)));
        return;
    }
    if (s->refs & LTF_STRING_SLAB_BIT) {
        if ((--s->refs & ~LTF_STRING_SLAB_BIT) == 0) {
            ltf_string_slab *b;
            memcpy(&b, (char *)s - sizeof b, sizeof b);
            slab_drop(b);
        }
        return;
    }
    if (--s->refs == 0) free(s);
}

void ltf_strings_retain(ltf_string **e, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        if (e[i]) e[i]->refs++;
}

void ltf_strings_release(ltf_string **e, int64_t n) {
    for (int64_t i = 0; i < n; i++) ltf_string_release(e[i]);
}
/* }==== */

static void count_alloc(ltf_ctx *ctx, size_t nbytes) {
    ctx->live_bytes += nbytes;
    if (ctx->live_bytes > ctx->peak_bytes) ctx->peak_bytes = ctx->live_bytes;
    ctx->allocations++;
    ctx->live_storages++;
}

/* {==== Block cache: small blocks are recycled per power-of-two class */
static int block_class(size_t total) {
    size_t size = 256;
    for (int c = 0; c < LTF_BLOCK_CLASSES; c++, size <<= 1)
        if (total <= size) return c;
    return -1;
}

static void *cache_get(ltf_ctx *ctx, int c) {
    void *b = ctx->block_cache[c];
    if (b) {
        ctx->block_cache[c] = *(void **)b;
        ctx->block_cached[c]--;
    }
    return b;
}

/* Keep as many blocks of a class as were ever out at once (at least
** LTF_BLOCK_CACHE_BYTES, at most LTF_BLOCK_CACHE_MAX_BYTES of them): the Lua
** collector frees the small tensors of an eager loop in bursts, and how
** many die between two collections grows with the Lua heap (about 2000 with
** tf's modules loaded, 7000 under busted), so a fixed cap sent the rest of
** every burst to free() and as many allocations back to malloc. What is
** kept was in use a moment before (malloc would keep most of it too).
** Shifts, not divisions: this runs for every tensor released. */
static int cache_put(ltf_ctx *ctx, int c, void *b) {
    if (c < 0) return 0;
    int cap = ctx->block_peak[c], lo = (int)((LTF_BLOCK_CACHE_BYTES >> 8) >> c),
        hi = (int)((LTF_BLOCK_CACHE_MAX_BYTES >> 8) >> c);
    if (cap < lo) cap = lo;
    if (cap > hi) cap = hi;
    if (ctx->block_cached[c] >= cap) return 0;
    *(void **)b = ctx->block_cache[c];
    ctx->block_cache[c] = b;
    ctx->block_cached[c]++;
    return 1;
}

/* best fit among the large blocks: big enough, at most twice the need */
static void *big_get(ltf_ctx *ctx, size_t total, size_t *size) {
    int best = -1;
    for (int i = 0; i < ctx->nbig; i++)
        if (ctx->big_sizes[i] >= total && ctx->big_sizes[i] / 2 <= total &&
            (best < 0 || ctx->big_sizes[i] < ctx->big_sizes[best]))
            best = i;
    if (best < 0) return NULL;
    void *b = ctx->big_blocks[best];
    *size = ctx->big_sizes[best];
    ctx->big_bytes -= *size;
    ctx->nbig--;
    ctx->big_blocks[best] = ctx->big_blocks[ctx->nbig];
    ctx->big_sizes[best] = ctx->big_sizes[ctx->nbig];
    return b;
}

/* The large-block cache holds up to LTF_BIG_CACHE_BYTES, or twice the
** largest block seen when that is more: a loop over tensors of a few
** hundred MB then reuses its memory instead of faulting in fresh pages on
** every op, and what is held stays within twice the working set. */
static int big_put(ltf_ctx *ctx, void *b, size_t size) {
    if (size > ctx->big_largest) ctx->big_largest = size;
    size_t cap = ctx->big_largest * 2 > LTF_BIG_CACHE_BYTES ? ctx->big_largest * 2 : LTF_BIG_CACHE_BYTES;
    if (size > cap) return 0;
    while (ctx->nbig > 0 && (ctx->nbig == LTF_BIG_BLOCKS || ctx->big_bytes + size > cap)) {
        ctx->nbig--;                          /* drop the oldest-placed entry */
        ctx->big_bytes -= ctx->big_sizes[0];
        ctx->backend[LTF_DEVICE_CPU]->free(ctx->backend[LTF_DEVICE_CPU]->bctx, ctx->big_blocks[0], ctx->big_sizes[0]);
        ctx->big_blocks[0] = ctx->big_blocks[ctx->nbig];
        ctx->big_sizes[0] = ctx->big_sizes[ctx->nbig];
    }
    ctx->big_blocks[ctx->nbig] = b;
    ctx->big_sizes[ctx->nbig] = size;
    ctx->nbig++;
    ctx->big_bytes += size;
    return 1;
}

void ltf_storage_cache_clear(ltf_ctx *ctx) {
    const ltf_backend *be = ctx->backend[LTF_DEVICE_CPU];
    for (int c = 0; c < LTF_BLOCK_CLASSES; c++) {
        void *b;
        while ((b = cache_get(ctx, c)) != NULL) be->free(be->bctx, b, (size_t)256 << c);
    }
    for (int i = 0; i < ctx->nbig; i++) be->free(be->bctx, ctx->big_blocks[i], ctx->big_sizes[i]);
    ctx->nbig = 0;
    ctx->big_bytes = 0;
}

static void cache_free_hook(ltf_ctx *ctx, void *data) {
    (void)data;
    ltf_storage_cache_clear(ctx);
}

void ltf_ctx_trim(ltf_ctx *ctx) { ltf_storage_cache_clear(ctx); }
/* }==== */

/* The emergency collection: the host's collect hook (the Lua bindings run a
** full GC: dead tensors give their blocks back), then the block caches are
** returned; 0 when there was nothing to run (an allocation the hook made). */
static int collect(ltf_ctx *ctx) {
    if (ctx->collecting) return 0;
    ctx->collecting = 1;
    if (ctx->collect) ctx->collect(ctx, ctx->collect_ud);
    ltf_storage_cache_clear(ctx);
    ctx->collecting = 0;
    return 1;
}

/* The memory budget (ltf_ctx_set_memory_limit): 'nbytes' more live bytes
** fit, after one emergency collection if needed. */
static int within_budget(ltf_ctx *ctx, size_t nbytes) {
    size_t lim = ctx->memory_limit;
    if (!lim || (nbytes <= lim && ctx->live_bytes <= lim - nbytes)) return 1;
    collect(ctx);
    return nbytes <= lim && ctx->live_bytes <= lim - nbytes;
}

void *ltf_storage_alloc_block(ltf_ctx *ctx, size_t header, size_t nbytes, ltf_storage **out) {
    size_t hdr = (header + sizeof(ltf_storage) + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    void *block = NULL;
    if (!within_budget(ctx, nbytes)) {
        ltf_fail(ctx, LTF_ERR_RESOURCE_EXHAUSTED,
                 "out of memory: a tensor of %zu bytes would exceed the context's memory limit of %zu bytes "
                 "(%zu bytes live after a collection)", nbytes, ctx->memory_limit, ctx->live_bytes);
        return NULL;
    }
    size_t total = hdr + (nbytes ? nbytes : 1);
    int cls = total < hdr ? -1 : block_class(total);
    if (cls >= 0) {
        block = cache_get(ctx, cls);
        total = (size_t)256 << cls;
    } else if (total >= hdr) {
        size_t size;
        block = big_get(ctx, total, &size);
        if (block) total = size;
    }
    const ltf_backend *be = ctx->backend[LTF_DEVICE_CPU];
    if (!block && total >= hdr) {
        if ((block = be->alloc(be->bctx, total)) == NULL && collect(ctx))
            block = be->alloc(be->bctx, total);   /* once more after the emergency collection */
        if (!block) {
            ltf_fail_oom(ctx, "tensor", nbytes);
            return NULL;
        }
        /* a fresh block may end in the caches: they are freed with the context */
        if (ltf_ctx_hook_add(ctx, LTF_CTX_EVENT_FREE, cache_free_hook, NULL) != LTF_OK) {
            be->free(be->bctx, block, total);
            return NULL;
        }
    }
    if (!block) {
        ltf_fail_oom(ctx, "tensor", nbytes);
        return NULL;
    }
    ltf_storage *s = (ltf_storage *)((char *)block + header);
    s->refs = 1;
    s->shared = 0;
    s->device = LTF_DEVICE_CPU;
    s->ordinal = 0;
    s->dtype = LTF_DTYPE_UINT8;
    s->nbytes = nbytes;
    s->data = (char *)block + hdr;
    s->ctx = ctx;
    s->deleter = NULL;
    s->ud = NULL;
    s->inline_data = 1;
    s->block = block;
    s->block_class = cls;
    s->block_size = total;
    if (cls >= 0 && ++ctx->block_out[cls] > ctx->block_peak[cls]) ctx->block_peak[cls] = ctx->block_out[cls];
    ltf_ctx_retain(ctx);
    count_alloc(ctx, nbytes);
    *out = s;
    return block;
}

ltf_storage *ltf_storage_wrap(ltf_ctx *ctx, void *data, size_t nbytes,
                              void (*deleter)(void *, void *), void *ud) {
    ltf_storage *s = malloc(sizeof *s);
    if (!s) {
        ltf_fail_oom(ctx, "storage", sizeof *s);
        return NULL;
    }
    s->refs = 1;
    s->shared = 0;
    s->device = LTF_DEVICE_CPU;
    s->ordinal = 0;
    s->dtype = LTF_DTYPE_UINT8;
    s->nbytes = nbytes;
    s->data = data;
    s->ctx = ctx;
    s->deleter = deleter;
    s->ud = ud;
    s->inline_data = 0;
    s->block = s;
    s->block_class = -1;
    s->block_size = 0;
    ltf_ctx_retain(ctx);
    ctx->live_storages++;
    ctx->allocations++;
    return s;
}

/* {==== Device storages: a host header, the bytes from the device's backend
** (its caching allocator; never the host block cache). A failed allocation
** runs the emergency collection once (the Lua collector: dead tensors give
** their blocks back), trims the device's cache and retries. */
ltf_storage *ltf_storage_new_device(ltf_ctx *ctx, ltf_device_type type, int ordinal, size_t nbytes, const char *what) {
    const ltf_backend *be = ltf_device_get(ctx, type, ordinal, what);
    if (!be) return NULL;
    ltf_storage *s = malloc(sizeof *s);
    if (!s) {
        ltf_fail_oom(ctx, what, sizeof *s);
        return NULL;
    }
    void *p = be->alloc(be->bctx, nbytes);
    if (!p && collect(ctx)) {
        ltf_ctx_hook_run(ctx, LTF_CTX_EVENT_RECLAIM);   /* graph captures hold device memory too (plan.c) */
        be->trim(be->bctx);
        p = be->alloc(be->bctx, nbytes);
    }
    if (!p) {
        char name[LTF_DEVICE_STR];
        free(s);
        ltf_fail(ctx, LTF_ERR_RESOURCE_EXHAUSTED, "%s: out of memory on %s allocating a tensor of %zu bytes: %s",
                 what, ltf_device_str(type, ordinal, name), nbytes, be->error(be->bctx));
        return NULL;
    }
    size_t used = be->bytes_in_use(be->bctx);
    if (used > ctx->device_peak[ordinal]) ctx->device_peak[ordinal] = used;
    s->refs = 1;
    s->shared = 0;
    s->device = type;
    s->ordinal = ordinal;
    s->dtype = LTF_DTYPE_UINT8;
    s->nbytes = nbytes;
    s->data = p;
    s->ctx = ctx;
    s->deleter = NULL;
    s->ud = NULL;
    s->inline_data = 0;
    s->block = s;
    s->block_class = -1;
    s->block_size = 0;
    ltf_ctx_retain(ctx);
    ctx->live_storages++;
    ctx->allocations++;
    return s;
}

static void release_device(ltf_storage *s) {
    ltf_ctx *ctx = s->ctx;
    const ltf_backend *be = ctx->devices[s->ordinal];
    be->free(be->bctx, s->data, s->nbytes);
    ctx->live_storages--;
    free(s);
    ltf_ctx_release(ctx);
}
/* }==== */

void ltf_storage_share(ltf_storage *s) {
    if (s->shared) return;
    ltf_ctx *ctx = s->ctx;
    if (s->inline_data) {
        ctx->live_bytes -= s->nbytes;
        if (s->block_class >= 0) ctx->block_out[s->block_class]--;   /* it goes back to the backend, not the cache */
    }
    ctx->live_storages--;
    s->shared = 1;
}

/* A shared storage may go on any thread, while its context is in use on
** another: it touches no counter or cache of the context, only the backend
** (thread-safe) and the context's atomic reference count. */
static void release_shared(ltf_storage *s) {
    ltf_ctx *ctx = s->ctx;
    if (s->inline_data) {
        ctx->backend[LTF_DEVICE_CPU]->free(ctx->backend[LTF_DEVICE_CPU]->bctx, s->block, s->block_size);
    } else {
        if (s->deleter) s->deleter(s->data, s->ud);
        free(s->block);
    }
    ltf_ctx_release(ctx);
}

void ltf_storage_retain(ltf_storage *s) { ltf_ref_inc(&s->refs, s->shared); }

void ltf_storage_release(ltf_storage *s) {
    if (!s || ltf_ref_dec(&s->refs, s->shared) > 0) return;
    if (s->shared) {
        release_shared(s);
        return;
    }
    if (s->device != LTF_DEVICE_CPU) {
        release_device(s);
        return;
    }
    ltf_ctx *ctx = s->ctx;
    if (s->dtype == LTF_DTYPE_STRING && s->data)
        ltf_strings_release((ltf_string **)s->data, (int64_t)(s->nbytes / sizeof(void *)));
    if (s->dtype == LTF_DTYPE_RESOURCE && s->data)
        ltf_variables_release((struct ltf_variable **)s->data, (int64_t)(s->nbytes / sizeof(void *)));
    if (s->inline_data) {
        ctx->live_bytes -= s->nbytes;
    } else if (s->deleter) {
        s->deleter(s->data, s->ud);
    }
    ctx->live_storages--;
    if (s->inline_data) {
        if (s->block_class >= 0) ctx->block_out[s->block_class]--;
        if (!cache_put(ctx, s->block_class, s->block) && !(s->block_class < 0 && big_put(ctx, s->block, s->block_size)))
            ctx->backend[LTF_DEVICE_CPU]->free(ctx->backend[LTF_DEVICE_CPU]->bctx, s->block, s->block_size);
    } else {
        free(s->block);   /* the header of a wrapped host buffer */
    }
    ltf_ctx_release(ctx);
}
