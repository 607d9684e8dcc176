/*
** gpusim/gpusim.c: libltf_gpusim.so, a simulated GPU. The ltf_backend
** contract (ltf_backend.h) over host memory that behaves like a separate
** device, so that the specs exercise placement, copies, the caching
** allocator and stream ordering without a GPU (LTF_GPU_SIM=1; docs/devices.md).
**
** Device memory: each device is its own mmap'd arena, kept PROT_NONE except
** while the sim itself copies or runs a kernel, so an engine that reads
** device bytes on the host faults in the specs instead of passing silently.
** (LTF_GPU_SIM_PROTECT=0 leaves the arena readable, to debug.) The arena is
** carved by a first-fit list of free extents (the "cudaMalloc"), under the
** caching allocator every device module shares (device_alloc.c).
**
** Stream: copies from the host, copies within the device, fills and
** kernels are queued and run in order at a sync, at a copy to the host,
** when the queue is long (QUEUE_MAX) or before an op that must run at once
** (stateful ops and ops on variables: they read state at run time). What
** queued work touches stays valid: a copy from the host copies its source
** at enqueue time (as cudaMemcpyAsync from pageable memory stages it); a
** kernel keeps copies of its tensors' headers (shape, dtype, storage), and
** their bytes stay valid by stream order (a block freed while work on it is
** queued goes back to the cache, and whatever reuses it is queued after).
** A queued kernel that fails makes the error sticky, as CUDA's are: the
** next sync, copy to the host or kernel reports it.
**
** Kernels: for every op, a wrapper that runs, on the stream with the arena
** open, the op's device kernel compiled for the host when the module is
** built with them (LTF_GPUSIM_HOST_KERNELS: libltf_gpu_host.a linked in,
** core/cuda/host.h: the __host__ __device__ bodies libltf_cuda.so runs on
** a GPU, with the same attribute handling and errors), else the op's CPU
** kernel (def->kernel[LTF_DEVICE_CPU]); the backend's kernel_kind tells the
** engine which (LTF_KERNEL_DEVICE / LTF_KERNEL_EMULATED) for its counts.
** LTF_GPU_SIM_NO_KERNEL=op,op,... leaves ops without a kernel (soft
** placement in the specs); LTF_GPU_SIM_HOST_KERNELS=0 runs the CPU kernels
** even where a device body exists (to compare).
**
** Environment: LTF_GPU_SIM_COUNT devices (default 1), LTF_GPU_SIM_MEMORY
** bytes each (default 256 MiB; a suffix K, M or G is accepted).
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "../ctx.h"
#include "../device.h"
#include "../device_alloc.h"
#include "../fused.h"

#define QUEUE_MAX 64
#define ARENA_ALIGN 256
#define DEFAULT_MEMORY ((size_t)256 << 20)

#ifdef LTF_GPUSIM_HOST_KERNELS
#include "../cuda/host.h"
#endif

enum { Q_COPY, Q_ZERO, Q_KERNEL, Q_FUSED };

typedef struct sim_task {
    int kind;
    void *dst;
    const void *src;          /* Q_COPY: device bytes, or the staging copy of host bytes */
    size_t n;
    void *staging;            /* freed after the copy */
    /* Q_KERNEL */
    const ltf_op_def *def;
    ltf_kernel_fn fn;
    ltf_attrs attrs;
    int nin, nout;
    ltf_tensor **ptrs;        /* nin + nout headers, then their storages, in one block */
    ltf_fused *fused;         /* Q_FUSED: a copy of the group's program (ops after it, one block) */
} sim_task;

typedef struct extent {
    size_t off, len;
} extent;

typedef struct sim_dev {
    ltf_ctx *ctx;
    int ordinal;
    char *base;
    size_t size, used;
    extent *free_ext;         /* sorted by offset, coalesced */
    size_t nfree, capfree;
    ltf_dalloc alloc;
    int protect, open_depth, draining;
    sim_task *q;
    int nq, capq;
    char err[LTF_ERRMSG_MAX];
    ltf_status sticky;        /* a queued kernel's failure, reported once */
    char sticky_msg[LTF_ERRMSG_MAX];
    unsigned char *no_kernel; /* per op id */
    /* the device bodies by op definition: sorted by 'def' (a kernel gets
    ** its def, not its op id), for a binary search; NULL 'fn': none */
    struct body { const ltf_op_def *def; ltf_kernel_fn fn; int op; } *bodies;
    int nbodies;
    /* graph capture (graph_begin .. graph_end): queued tasks are recorded
    ** into 'cap' instead of the queue; 'cap_bad' when something needed the host */
    int capturing, cap_bad;
    sim_task *cap;
    int ncap, capcap;
} sim_dev;

/* {==== Arena */
static void arena_open(sim_dev *d) {
    if (d->open_depth++ == 0 && d->protect) mprotect(d->base, d->size, PROT_READ | PROT_WRITE);
}

static void arena_close(sim_dev *d) {
    if (--d->open_depth == 0 && d->protect) mprotect(d->base, d->size, PROT_NONE);
}

static int ext_insert(sim_dev *d, size_t at, extent e) {
    if (d->nfree == d->capfree) {
        size_t cap = d->capfree ? d->capfree * 2 : 64;
        extent *x = realloc(d->free_ext, cap * sizeof *x);
        if (!x) return -1;
        d->free_ext = x;
        d->capfree = cap;
    }
    memmove(d->free_ext + at + 1, d->free_ext + at, (d->nfree - at) * sizeof *d->free_ext);
    d->free_ext[at] = e;
    d->nfree++;
    return 0;
}

static void *raw_alloc(void *ud, size_t n) {
    sim_dev *d = ud;
    n = (n + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    for (size_t i = 0; i < d->nfree; i++) {
        extent *e = &d->free_ext[i];
        if (e->len < n) continue;
        void *p = d->base + e->off;
        e->off += n;
        e->len -= n;
        if (e->len == 0) {
            memmove(e, e + 1, (d->nfree - i - 1) * sizeof *e);
            d->nfree--;
        }
        d->used += n;
        return p;
    }
    return NULL;
}

static void raw_free(void *ud, void *p, size_t n) {
    sim_dev *d = ud;
    n = (n + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    size_t off = (size_t)((char *)p - d->base), i = 0;
    while (i < d->nfree && d->free_ext[i].off < off) i++;
    d->used -= n;
    int prev = i > 0 && d->free_ext[i - 1].off + d->free_ext[i - 1].len == off;
    int next = i < d->nfree && off + n == d->free_ext[i].off;
    if (prev && next) {
        d->free_ext[i - 1].len += n + d->free_ext[i].len;
        memmove(d->free_ext + i, d->free_ext + i + 1, (d->nfree - i - 1) * sizeof *d->free_ext);
        d->nfree--;
    } else if (prev) {
        d->free_ext[i - 1].len += n;
    } else if (next) {
        d->free_ext[i].off = off;
        d->free_ext[i].len += n;
    } else if (ext_insert(d, i, (extent){off, n}) != 0) {
        d->used += n;   /* no room to record it: the range stays lost (host out of memory) */
    }
}
/* }==== */

/* {==== Stream */
static void set_sticky(sim_dev *d, ltf_status st, const char *what, const char *msg) {
    if (d->sticky != LTF_OK) return;
    d->sticky = st;
    snprintf(d->sticky_msg, sizeof d->sticky_msg, "gpusim: a queued %s failed: %.900s", what, msg);
}

static ltf_status fused_exec(sim_dev *d, const ltf_fused *f, ltf_tensor *const *ext, ltf_tensor *out);
static void task_free(sim_task *t);

static void run_task(sim_dev *d, sim_task *t) {
    switch (t->kind) {
    case Q_COPY: memmove(t->dst, t->src, t->n); break;
    case Q_ZERO: memset(t->dst, 0, t->n); break;
    case Q_KERNEL: {
        ltf_ctx *ctx = d->ctx;
        ltf_status saved = ctx->last_status;
        char msg[LTF_ERRMSG_MAX];
        memcpy(msg, ctx->errmsg, sizeof msg);
        ltf_status st = t->fn(ctx, t->def, t->ptrs, t->nin, &t->attrs, t->ptrs + t->nin, t->nout);
        if (st != LTF_OK) set_sticky(d, st, "kernel", ctx->errmsg);
        ctx->last_status = saved;         /* the failure belongs to a later call */
        memcpy(ctx->errmsg, msg, sizeof msg);
        break;
    }
    case Q_FUSED: {
        ltf_ctx *ctx = d->ctx;
        ltf_status saved = ctx->last_status;
        char msg[LTF_ERRMSG_MAX];
        memcpy(msg, ctx->errmsg, sizeof msg);
        ltf_status st = fused_exec(d, t->fused, t->ptrs, t->ptrs[t->nin]);
        if (st != LTF_OK) set_sticky(d, st, "fused group", ctx->errmsg);
        ctx->last_status = saved;
        memcpy(ctx->errmsg, msg, sizeof msg);
        break;
    }
    }
    free(t->staging);
    free(t->ptrs);
    free(t->fused);
}

/* Run everything queued, in order, with the arena open. */
static void drain(sim_dev *d) {
    if (d->nq == 0 || d->draining) return;
    d->draining = 1;
    arena_open(d);
    for (int i = 0; i < d->nq; i++) run_task(d, &d->q[i]);   /* a kernel may queue more: run those too */
    d->nq = 0;
    arena_close(d);
    d->draining = 0;
}

/* Queue 't', or run it now when the queue cannot grow or is being drained. */
static void enqueue(sim_dev *d, const sim_task *t) {
    if (d->capturing) {
        if (d->ncap == d->capcap) {
            int cap = d->capcap ? d->capcap * 2 : QUEUE_MAX;
            sim_task *q = realloc(d->cap, (size_t)cap * sizeof *q);
            if (!q) {                        /* cannot record it: the capture fails, the work is dropped */
                sim_task drop = *t;
                free(drop.staging);
                free(drop.ptrs);
                free(drop.fused);
                d->cap_bad = 1;
                return;
            }
            d->cap = q;
            d->capcap = cap;
        }
        d->cap[d->ncap++] = *t;
        return;
    }
    if (d->draining) {
        sim_task now = *t;
        arena_open(d);
        run_task(d, &now);
        arena_close(d);
        return;
    }
    if (d->nq == d->capq) {
        int cap = d->capq ? d->capq * 2 : QUEUE_MAX;
        sim_task *q = realloc(d->q, (size_t)cap * sizeof *q);
        if (!q) {
            drain(d);
            sim_task now = *t;
            arena_open(d);
            run_task(d, &now);
            arena_close(d);
            return;
        }
        d->q = q;
        d->capq = cap;
    }
    d->q[d->nq++] = *t;
    if (d->nq >= QUEUE_MAX) drain(d);
}

/* The failure queued work left, reported once; 0 when none. */
static int take_sticky(sim_dev *d) {
    if (d->sticky == LTF_OK) return 0;
    memcpy(d->err, d->sticky_msg, sizeof d->err);
    d->sticky = LTF_OK;
    return -1;
}
/* }==== */

/* {==== Backend functions */
static void *sim_alloc(void *bctx, size_t nbytes) {
    sim_dev *d = bctx;
    void *p = ltf_dalloc_alloc(&d->alloc, nbytes);
    if (!p)
        snprintf(d->err, sizeof d->err,
                 "gpusim: out of memory: %zu bytes requested, %zu of %zu bytes of the device in use "
                 "(LTF_GPU_SIM_MEMORY)", nbytes, d->used, d->size);
    return p;
}

static void sim_free(void *bctx, void *p, size_t nbytes) { ltf_dalloc_free(&((sim_dev *)bctx)->alloc, p, nbytes); }

static int sim_copy(void *bctx, void *dst, const void *src, size_t nbytes, int to_host) {
    sim_dev *d = bctx;
    if (d->capturing) d->cap_bad = 1;        /* a graph cannot hold the host's side (CUDA: pageable memory) */
    if (to_host) {
        drain(d);
        arena_open(d);
        memcpy(dst, src, nbytes);
        arena_close(d);
        return take_sticky(d);
    }
    sim_task t = { .kind = Q_COPY, .dst = dst, .n = nbytes };
    t.staging = malloc(nbytes ? nbytes : 1);
    if (!t.staging) {                   /* no staging room: copy synchronously */
        drain(d);
        arena_open(d);
        memcpy(dst, src, nbytes);
        arena_close(d);
        return 0;
    }
    memcpy(t.staging, src, nbytes);
    t.src = t.staging;
    enqueue(d, &t);
    return 0;
}

static int sim_copy_d2d(void *bctx, void *dst, const void *src, size_t nbytes) {
    sim_task t = { .kind = Q_COPY, .dst = dst, .src = src, .n = nbytes };
    enqueue(bctx, &t);
    return 0;
}

static int sim_zero(void *bctx, void *dst, size_t nbytes) {
    sim_task t = { .kind = Q_ZERO, .dst = dst, .n = nbytes };
    enqueue(bctx, &t);
    return 0;
}

static int sim_sync(void *bctx) {
    if (((sim_dev *)bctx)->capturing) ((sim_dev *)bctx)->cap_bad = 1;
    drain(bctx);
    return take_sticky(bctx);
}

static const char *sim_error(void *bctx) { return ((sim_dev *)bctx)->err; }
static size_t sim_in_use(void *bctx) { return ((sim_dev *)bctx)->alloc.in_use; }
static size_t sim_reserved(void *bctx) { return ((sim_dev *)bctx)->alloc.reserved; }
static void sim_trim(void *bctx) { ltf_dalloc_trim(&((sim_dev *)bctx)->alloc); }

static void sim_close(void *bctx) {
    sim_dev *d = bctx;
    drain(d);
    ltf_dalloc_destroy(&d->alloc);
    munmap(d->base, d->size);
    free(d->free_ext);
    free(d->q);
    for (int i = 0; i < d->ncap; i++) task_free(&d->cap[i]);
    free(d->cap);
    free(d->no_kernel);
    free(d->bodies);
    free(d);
}

/* The device a kernel call is for: its first tensor there. */
static sim_dev *dev_of(ltf_ctx *ctx, ltf_tensor *const *in, int nin, ltf_tensor **out, int nout) {
    for (int i = 0; i < nout; i++)
        if (out[i] && out[i]->storage && out[i]->storage->device == LTF_DEVICE_CUDA)
            return ctx->devices[out[i]->storage->ordinal]->bctx;
    for (int i = 0; i < nin; i++)
        if (in[i]->storage && in[i]->storage->device == LTF_DEVICE_CUDA)
            return ctx->devices[in[i]->storage->ordinal]->bctx;
    return ctx->devices[0]->bctx;
}

static const struct body *body_of(const sim_dev *d, const ltf_op_def *def) {
    int lo = 0, hi = d->nbodies - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const struct body *b = &d->bodies[mid];
        if (b->def == def) return b;
        if ((uintptr_t)b->def < (uintptr_t)def) lo = mid + 1;
        else hi = mid - 1;
    }
    return NULL;
}

/* The one kernel of every op: the device body compiled for the host, or the CPU kernel, on the stream. */
static ltf_status sim_kernel(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_tensor **out, int nout) {
    sim_dev *d = dev_of(ctx, in, nin, out, nout);
    if (d->sticky != LTF_OK) {               /* an earlier queued kernel failed */
        ltf_status st = d->sticky;
        d->sticky = LTF_OK;
        memcpy(ctx->errmsg, d->sticky_msg, sizeof ctx->errmsg);
        ctx->last_status = st;
        return st;
    }
    const struct body *b = body_of(d, def);
    ltf_kernel_fn fn = b && b->fn ? b->fn : def->kernel[LTF_DEVICE_CPU];
    /* stateful ops, and a body that allocates its outputs (out[] NULL: it
    ** reads sizes back from the device, a sync), run now */
    if ((def->flags & (LTF_OP_STATEFUL | LTF_OP_RESOURCE)) || d->draining || (nout > 0 && !out[0])) {
        if (d->capturing) d->cap_bad = 1;    /* runs now: not part of a replay */
        drain(d);                            /* reads state now: run in order, now */
        int was = d->draining;
        d->draining = 1;                     /* and what it queues itself runs at once, in order */
        arena_open(d);
        ltf_status st = fn(ctx, def, in, nin, a, out, nout);
        arena_close(d);
        d->draining = was;
        return st;
    }
    int n = nin + nout;
    size_t bytes = (size_t)n * (sizeof(ltf_tensor *) + sizeof(ltf_tensor) + sizeof(ltf_storage));
    sim_task t = { .kind = Q_KERNEL, .def = def, .fn = fn, .attrs = *a, .nin = nin, .nout = nout };
    t.ptrs = malloc(bytes ? bytes : 1);
    if (!t.ptrs) {
        snprintf(ctx->errmsg, sizeof ctx->errmsg, "%s: out of memory queueing the kernel", def->name);
        return ctx->last_status = LTF_ERR_RESOURCE_EXHAUSTED;
    }
    ltf_tensor *hdr = (ltf_tensor *)(t.ptrs + n);
    ltf_storage *st = (ltf_storage *)(hdr + n);
    for (int i = 0; i < n; i++) {
        const ltf_tensor *src = i < nin ? in[i] : out[i - nin];
        hdr[i] = *src;
        if (src->storage) {
            st[i] = *src->storage;
            hdr[i].storage = &st[i];
        }
        t.ptrs[i] = &hdr[i];
    }
    enqueue(d, &t);
    return LTF_OK;
}

static void *sim_kernel_of(void *bctx, int op) {
    sim_dev *d = bctx;
    if (op < 0 || op >= LTF_OP_COUNT || d->no_kernel[op]) return NULL;
    return (void *)sim_kernel;
}

static int sim_kernel_kind(void *bctx, int op) {
    sim_dev *d = bctx;
    const ltf_core_api *api = d->ctx->core_api;
    const ltf_op_def *def = api && api->op_def ? api->op_def(op) : NULL;
    const struct body *b = def ? body_of(d, def) : NULL;
    return b && b->fn ? LTF_KERNEL_DEVICE : LTF_KERNEL_EMULATED;
}

/* float16/bfloat16 as they are: a device body that takes them, or an
** emulated op whose CPU kernel does (others run on float32 copies). */
static int sim_takes_half(void *bctx, int op) {
    sim_dev *d = bctx;
    const ltf_core_api *api = d->ctx->core_api;
    const ltf_op_def *def = api && api->op_def ? api->op_def(op) : NULL;
    const struct body *b = def ? body_of(d, def) : NULL;
#ifdef LTF_GPUSIM_HOST_KERNELS
    if (b && b->fn) return ltf_gpu_host_takes_half(op);
#else
    (void)b;
#endif
    return api && api->half_native ? api->half_native(op) : 0;
}

static int body_cmp(const void *x, const void *y) {
    uintptr_t a = (uintptr_t)((const struct body *)x)->def, b = (uintptr_t)((const struct body *)y)->def;
    return a < b ? -1 : a > b;
}

/* The table of device bodies (none without LTF_GPUSIM_HOST_KERNELS). 0 ok. */
static int load_bodies(sim_dev *d, const ltf_core_api *api) {
#ifdef LTF_GPUSIM_HOST_KERNELS
    const char *use = getenv("LTF_GPU_SIM_HOST_KERNELS");
    if (!api || !api->op_def || (use && strcmp(use, "0") == 0)) return 0;
    d->bodies = calloc(LTF_OP_COUNT, sizeof *d->bodies);
    if (!d->bodies) return -1;
    for (int op = 0; op < LTF_OP_COUNT; op++) {
        const ltf_op_def *def = api->op_def(op);
        if (!def) continue;
        d->bodies[d->nbodies++] = (struct body){ def, (ltf_kernel_fn)ltf_gpu_host_kernel(op), op };
    }
    qsort(d->bodies, (size_t)d->nbodies, sizeof *d->bodies, body_cmp);
#else
    (void)d;
    (void)api;
#endif
    return 0;
}
/* }==== */

/* {==== Fused groups (the backend's fused_run): the group's program run on
** the stream, block by block, each member by its device body (the host
** build of the CUDA kernels) over flat blocks: loads gathered into blocks
** by their index maps, members writing blocks, the last one the output. */
#define FUSED_BLOCK 1024

static size_t es_of(ltf_dtype dt) {
    static const size_t s[] = { 4, 8, 4, 8, 1, 1, 8, 8, 2, 2 };   /* ORDER DTYPE */
    return (unsigned)dt < sizeof s / sizeof s[0] ? s[dt] : 8;
}

/* Element offset of linear index i of the group in a load's input. */
static int64_t load_offset(const ltf_fused_load *l, int64_t i) {
    switch (l->kind) {
    case LTF_LOAD_IDENTITY: return i;
    case LTF_LOAD_SCALAR: return 0;
    case LTF_LOAD_PERIODIC: {
        int64_t off = 0, r = i % l->period;
        for (int d = l->rank - 1; d >= 0; d--) {
            off += (r % l->dims[d]) * l->strides[d];
            r /= l->dims[d];
        }
        return off;
    }
    default: {
        int64_t off = 0, r = i;
        for (int d = l->rank - 1; d >= 0; d--) {
            off += (r % l->dims[d]) * l->strides[d];
            r /= l->dims[d];
        }
        return off;
    }
    }
}

/* A one-dimensional tensor of 'n' elements at 'data' (host memory of the
** arena or of the scratch), for a device body. */
static ltf_tensor *flat(ltf_tensor *t, ltf_storage *s, ltf_ctx *ctx, ltf_dtype dt, void *data, int64_t n) {
    memset(t, 0, sizeof *t);
    memset(s, 0, sizeof *s);
    s->refs = 1;
    s->device = LTF_DEVICE_CPU;
    s->dtype = dt;
    s->nbytes = (size_t)n * es_of(dt);
    s->data = data;
    s->ctx = ctx;
    t->refs = 1;
    t->dtype = dt;
    t->rank = 1;
    t->dims[0] = n;
    t->numel = n;
    t->storage = s;
    t->ctx = ctx;
    return t;
}

static ltf_status fused_exec(sim_dev *d, const ltf_fused *f, ltf_tensor *const *ext, ltf_tensor *out) {
    ltf_ctx *ctx = d->ctx;
    int nb = f->nloads + f->n;
    char *scratch = malloc((size_t)nb * FUSED_BLOCK * 8);
    if (!scratch) {
        snprintf(ctx->errmsg, sizeof ctx->errmsg, "fused group: out of host memory");
        return ctx->last_status = LTF_ERR_RESOURCE_EXHAUSTED;
    }
    ltf_attrs none;
    memset(&none, 0, sizeof none);
    none.nints = none.nints2 = -1;
    size_t oes = es_of(f->dtype);
    ltf_status st = LTF_OK;
    for (int64_t b0 = 0; b0 < f->numel && st == LTF_OK; b0 += FUSED_BLOCK) {
        int64_t n = f->numel - b0 < FUSED_BLOCK ? f->numel - b0 : FUSED_BLOCK;
        for (int l = 0; l < f->nloads; l++) {
            const ltf_fused_load *ld = &f->loads[l];
            size_t es = es_of(ld->dtype);
            const char *src = LTF_DATA(ext[ld->ext]);
            char *dst = scratch + (size_t)l * FUSED_BLOCK * 8;
            for (int64_t k = 0; k < n; k++) memcpy(dst + (size_t)k * es, src + (size_t)load_offset(ld, b0 + k) * es, es);
        }
        for (int m = 0; m < f->n && st == LTF_OK; m++) {
            const ltf_fused_op *op = &f->ops[m];
            ltf_tensor ti[2], to, *pin[2], *pout = &to;
            ltf_storage si[2], so;
            for (int k = 0; k < op->nin; k++) {
                int x = op->src[k];
                void *data = x >= 0 ? scratch + (size_t)(f->nloads + x) * FUSED_BLOCK * 8
                                    : scratch + (size_t)(-x - 1) * FUSED_BLOCK * 8;
                pin[k] = flat(&ti[k], &si[k], ctx, x >= 0 ? f->ops[x].out_dtype : f->loads[-x - 1].dtype, data, n);
            }
            void *odata = m < f->n - 1 ? scratch + (size_t)(f->nloads + m) * FUSED_BLOCK * 8
                                       : (char *)LTF_DATA(out) + (size_t)b0 * oes;
            flat(&to, &so, ctx, op->out_dtype, odata, n);
            const struct body *b = body_of(d, op->def);
            st = b->fn(ctx, op->def, pin, op->nin, &none, &pout, 1);
        }
    }
    free(scratch);
    return st;
}

/* Queue group 'f' on the stream; UNIMPLEMENTED (nothing queued) when a
** member has no device body. */
static int sim_fused_run(void *bctx, ltf_ctx *ctx, const ltf_fused *f, ltf_tensor *const *ext, int next,
                         ltf_tensor *out) {
    sim_dev *d = bctx;
    if (d->sticky != LTF_OK) {
        ltf_status st = d->sticky;
        d->sticky = LTF_OK;
        memcpy(ctx->errmsg, d->sticky_msg, sizeof ctx->errmsg);
        return ctx->last_status = st;
    }
    for (int m = 0; m < f->n; m++) {
        const struct body *b = body_of(d, f->ops[m].def);
        if (!b || !b->fn) {
            snprintf(ctx->errmsg, sizeof ctx->errmsg, "fused group: %s has no device body", f->ops[m].def->name);
            return ctx->last_status = LTF_ERR_UNIMPLEMENTED;
        }
    }
    if (f->numel == 0) return LTF_OK;
    int n = next + 1;
    sim_task t = { .kind = Q_FUSED, .nin = next, .nout = 1 };
    size_t bytes = (size_t)n * (sizeof(ltf_tensor *) + sizeof(ltf_tensor) + sizeof(ltf_storage));
    t.ptrs = malloc(bytes);
    t.fused = malloc(sizeof *f + (size_t)f->n * sizeof *f->ops);
    if (!t.ptrs || !t.fused) {
        free(t.ptrs);
        free(t.fused);
        snprintf(ctx->errmsg, sizeof ctx->errmsg, "fused group: out of memory queueing it");
        return ctx->last_status = LTF_ERR_RESOURCE_EXHAUSTED;
    }
    *t.fused = *f;
    t.fused->ops = (ltf_fused_op *)(t.fused + 1);
    memcpy(t.fused->ops, f->ops, (size_t)f->n * sizeof *f->ops);
    ltf_tensor *hdr = (ltf_tensor *)(t.ptrs + n);
    ltf_storage *st = (ltf_storage *)(hdr + n);
    for (int i = 0; i < n; i++) {
        const ltf_tensor *src = i < next ? ext[i] : out;
        hdr[i] = *src;
        st[i] = *src->storage;
        hdr[i].storage = &st[i];
        t.ptrs[i] = &hdr[i];
    }
    enqueue(d, &t);
    return LTF_OK;
}
/* }==== */

/* {==== Graphs: the recorded tasks, each queued again (a deep copy) at every launch */
typedef struct sim_graph {
    sim_task *t;
    int n;
} sim_graph;

static void task_free(sim_task *t) {
    free(t->staging);
    free(t->ptrs);
    free(t->fused);
}

/* A copy of recorded task 'a' that the queue may run and free. 0 ok. */
static int task_clone(const sim_task *a, sim_task *b) {
    *b = *a;
    b->staging = NULL;
    b->ptrs = NULL;
    b->fused = NULL;
    if (a->staging) {
        if (!(b->staging = malloc(a->n ? a->n : 1))) return -1;
        memcpy(b->staging, a->staging, a->n);
        b->src = b->staging;
    }
    if (a->ptrs) {
        int n = a->nin + a->nout;
        size_t bytes = (size_t)n * (sizeof(ltf_tensor *) + sizeof(ltf_tensor) + sizeof(ltf_storage));
        if (!(b->ptrs = malloc(bytes ? bytes : 1))) goto fail;
        memcpy(b->ptrs, a->ptrs, bytes);
        ltf_tensor *hdr = (ltf_tensor *)(b->ptrs + n);
        ltf_storage *st = (ltf_storage *)(hdr + n);
        const ltf_tensor *ahdr = (const ltf_tensor *)(a->ptrs + n);
        const ltf_storage *ast = (const ltf_storage *)(ahdr + n);
        for (int i = 0; i < n; i++) {
            b->ptrs[i] = &hdr[i];
            if (ahdr[i].storage == &ast[i]) hdr[i].storage = &st[i];
        }
    }
    if (a->fused) {
        size_t bytes = sizeof *a->fused + (size_t)a->fused->n * sizeof *a->fused->ops;
        if (!(b->fused = malloc(bytes))) goto fail;
        memcpy(b->fused, a->fused, bytes);
        b->fused->ops = (ltf_fused_op *)(b->fused + 1);
    }
    return 0;
fail:
    task_free(b);
    return -1;
}

static int sim_graph_begin(void *bctx) {
    sim_dev *d = bctx;
    if (d->capturing) return -1;
    d->capturing = 1;
    d->cap_bad = 0;
    d->ncap = 0;
    return 0;
}

static void *sim_graph_end(void *bctx) {
    sim_dev *d = bctx;
    d->capturing = 0;
    sim_graph *g = d->cap_bad ? NULL : malloc(sizeof *g);
    if (!g) {
        for (int i = 0; i < d->ncap; i++) task_free(&d->cap[i]);
        free(d->cap);
        d->cap = NULL;
        d->ncap = d->capcap = 0;
        snprintf(d->err, sizeof d->err, "gpusim: the capture needed the host (a copy to or from it, or a sync)");
        return NULL;
    }
    g->t = d->cap;              /* the recording moves into the graph */
    g->n = d->ncap;
    d->cap = NULL;
    d->ncap = d->capcap = 0;
    return g;
}

static int sim_graph_launch(void *bctx, void *graph) {
    sim_dev *d = bctx;
    const sim_graph *g = graph;
    if (d->capturing) return -1;
    for (int i = 0; i < g->n; i++) {
        sim_task t;
        if (task_clone(&g->t[i], &t) != 0) {
            snprintf(d->err, sizeof d->err, "gpusim: out of host memory launching a graph");
            return -1;
        }
        enqueue(d, &t);
    }
    return 0;
}

static void sim_graph_free(void *bctx, void *graph) {
    (void)bctx;
    sim_graph *g = graph;
    if (!g) return;
    for (int i = 0; i < g->n; i++) task_free(&g->t[i]);
    free(g->t);
    free(g);
}
/* }==== */

/* {==== Entry point */
static size_t env_size(const char *name, size_t def) {
    const char *v = getenv(name);
    if (!v || !*v) return def;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v) return def;
    switch (*end) {
    case 'k': case 'K': n <<= 10; break;
    case 'm': case 'M': n <<= 20; break;
    case 'g': case 'G': n <<= 30; break;
    default: break;
    }
    return (size_t)n;
}

/* Mark the ops named in LTF_GPU_SIM_NO_KERNEL ("op,op,..."). */
static void parse_no_kernel(sim_dev *d, const ltf_core_api *api) {
    const char *v = getenv("LTF_GPU_SIM_NO_KERNEL");
    if (!v || !api) return;
    for (int op = 0; op < LTF_OP_COUNT; op++) {
        const char *name = api->op_name(op);
        size_t len = name ? strlen(name) : 0;
        for (const char *p = v; name && *p;) {
            const char *e = strchr(p, ',');
            size_t n = e ? (size_t)(e - p) : strlen(p);
            if (n == len && memcmp(p, name, n) == 0) d->no_kernel[op] = 1;
            p += n + (e != NULL);
        }
    }
}

/* The devices CUDA_VISIBLE_DEVICES leaves of 'count', as the CUDA driver
** reads it: indices separated by commas, up to the first that is not one
** of the devices (out of range, repeated, negative, not a number); unset:
** all of them; empty: none. */
static size_t cuda_visible(size_t count) {
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    if (!v) return count;
    size_t n = 0;
    unsigned seen = 0;
    while (*v) {
        char *end;
        long i = strtol(v, &end, 10);
        if (end == v || i < 0 || (size_t)i >= count || (seen >> i) & 1u) break;
        seen |= 1u << i;
        n++;
        v = end;
        while (*v == ' ') v++;
        if (*v != ',') break;
        v++;
    }
    return n;
}

LTF_API int ltf_device_module_open(ltf_ctx *ctx, int ordinal, ltf_backend *out, char *err, size_t errlen) {
    size_t count = env_size("LTF_GPU_SIM_COUNT", 1);
    if (count > LTF_MAX_DEVICES) count = LTF_MAX_DEVICES;
    count = cuda_visible(count);
    if (!out) return (int)count;
    if (ordinal < 0 || (size_t)ordinal >= count) {
        snprintf(err, errlen, "gpusim: no device %d (LTF_GPU_SIM_COUNT=%zu)", ordinal, count);
        return -1;
    }
    size_t size = env_size("LTF_GPU_SIM_MEMORY", DEFAULT_MEMORY);
    size = (size + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
    if (size == 0) size = ARENA_ALIGN;
    sim_dev *d = calloc(1, sizeof *d);
    unsigned char *nk = calloc(LTF_OP_COUNT, 1);
    void *base = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (!d || !nk || base == MAP_FAILED) {
        snprintf(err, errlen, "gpusim: cannot map %zu bytes of device memory", size);
        free(d);
        free(nk);
        if (base != MAP_FAILED) munmap(base, size);
        return -1;
    }
    d->ctx = ctx;
    d->ordinal = ordinal;
    d->base = base;
    d->size = size;
    d->no_kernel = nk;
    const char *prot = getenv("LTF_GPU_SIM_PROTECT");
    d->protect = !(prot && strcmp(prot, "0") == 0);
    if (!d->protect) mprotect(base, size, PROT_READ | PROT_WRITE);
    if (ext_insert(d, 0, (extent){0, size}) != 0) {
        snprintf(err, errlen, "gpusim: out of host memory");
        munmap(base, size);
        free(nk);
        free(d);
        return -1;
    }
    if (load_bodies(d, ctx->core_api) != 0) {
        snprintf(err, errlen, "gpusim: out of host memory");
        munmap(base, size);
        free(d->free_ext);
        free(nk);
        free(d);
        return -1;
    }
    ltf_dalloc_init(&d->alloc, raw_alloc, raw_free, d);
    parse_no_kernel(d, ctx->core_api);
    snprintf(d->err, sizeof d->err, "no error");
    *out = (ltf_backend){
        .name = "gpusim", .type = LTF_DEVICE_CUDA, .alloc = sim_alloc, .free = sim_free, .copy = sim_copy,
        .bctx = d, .ordinal = ordinal, .copy_d2d = sim_copy_d2d, .zero = sim_zero, .sync = sim_sync,
        .kernel = sim_kernel_of, .error = sim_error, .bytes_in_use = sim_in_use, .bytes_reserved = sim_reserved,
        .trim = sim_trim, .close = sim_close, .kernel_kind = sim_kernel_kind, .fused_run = sim_fused_run,
        .graph_begin = sim_graph_begin, .graph_end = sim_graph_end, .graph_launch = sim_graph_launch,
        .graph_free = sim_graph_free, .takes_half = sim_takes_half,
    };
    return 0;
}
/* }==== */
