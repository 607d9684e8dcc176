/*
** plan.c: the executor of finished graphs. ltf_plan_build turns the live
** nodes into steps, once: kernels and definitions resolved, one value slot
** per node output, fused groups as single steps (their program: members,
** loads with index maps, scratch buffers), and for every step the slots
** whose last reader it is (released right after: liveness). Replay walks
** the steps with no Lua and no per-op lookup.
**
** In place: an elementwise step (an op or a fused group) whose input dies
** at that step, with the output's dtype and element count, writes its
** output into that input's buffer when nothing else holds it (the tensor's
** and its storage's only reference is the slot). This saves an allocation
** per step; for tensors larger than the context's big-block cache it saves
** fresh pages from the system at every step (about 2x on 70 MB tensors).
** LTF_NO_INPLACE=1 in the environment turns it off (bench/graph.lua
** measures both).
**
** Two step lists are kept: the fused one (the fast path) and one node per
** step, used while a tape records (each op must be on the tape) or while
** another graph is being traced (the call is then inlined into it).
*/
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include "graph.h"
#include "fused.h"
#include "shape.h"
#include "functions.h"
#include "device.h"
#include "half.h"
#include "cpu/cpu.h"

typedef struct plan_step {
    int node;                 /* for an op step; -1 for a fused group */
    ltf_op_id op;
    const ltf_attrs *attrs;
    int nin, nout;
    int *in_slot, *out_slot;
    int nrelease;
    int *release;             /* slots whose last reader this step is */
    ltf_fused *fused;         /* group program, or NULL */
    int inplace;              /* input whose buffer the output may take, or -1 */
    int assumed;              /* in place with an input of partial type: its kernel runs on
                              ** shapes tracing only assumed, so the run re-checks them */
    int direct;               /* every input and output type fully known when planned: the
                              ** fast list allocates the planned outputs and calls the kernel,
                              ** with no inference (the types cannot differ at run time) */
} plan_step;

typedef struct step_list {
    plan_step *v;
    int n;
} step_list;

/* A device plan captured as a graph of its launches (ltf_backend.graph_*):
** replays copy the inputs into 'in', launch the graph and copy 'out'.
** Live captures are linked in their context's list (ctx->graphs), which
** bounds the device memory they hold (docs/cuda.md, "Graph replay"). */
typedef struct ltf_plan_graph plan_graph;
struct ltf_plan_graph {
    int state;                /* 0: not captured, 1: captured, -1: never captured (not replayable,
                              ** or larger than the context's limit) */
    int calls;                /* eligible calls while not captured: the capture is at the second */
    int drops;                /* times a capture was dropped for memory (2: not captured again) */
    int busy;                 /* being captured or replayed: never dropped then */
    size_t bytes;             /* device bytes the capture holds (its buffers' storages) */
    uint64_t last_use;        /* ctx->graph_clock at the last replay (least recently used first) */
    plan_graph *prev, *next;  /* ctx->graphs */
    ltf_ctx *ctx;             /* linked into ctx->graphs when non-NULL */
    int nconsts;
    const ltf_backend *be;
    int ordinal;
    void *graph;
    int nin, nout;
    ltf_tensor **in;          /* private device copies the captured work reads */
    ltf_tensor **out;         /* the values the captured work writes as the outputs */
    ltf_tensor **consts;      /* device copies of the constants, per p->consts */
    ltf_tensor **held;        /* every step's outputs during the capture: their memory stays the graph's */
    int nheld, capheld;
};

struct ltf_plan {
    int nslots;
    int *slot_base;           /* first slot of each node */
    step_list fast, plain;
    int *out_slot;            /* per graph output */
    unsigned char *owned;     /* slots filled by steps (released), not consts/inputs */
    int *consts, nconsts;     /* live constant nodes */
    int devices;              /* a node is placed on, or a constant lives on, a device other
                              ** than the host: runs go op by op (the plain list) unless
                              ** 'fused_placed' */
    int fused_placed;         /* the fast list has fused groups, and each group's members share
                              ** one placement: runs with devices take the fast list, other
                              ** steps op by op, each group as one step on its device */
    plan_graph graph;         /* graph replay of a device plan (docs/cuda.md) */
};

static void free_steps(step_list *l) {
    for (int i = 0; i < l->n; i++) {
        free(l->v[i].in_slot);
        free(l->v[i].release);
        if (l->v[i].fused) {
            free(l->v[i].fused->ops);
            free(l->v[i].fused);
        }
    }
    free(l->v);
}

static void release_array(ltf_tensor **t, int n) {
    for (int k = 0; t && k < n; k++) ltf_tensor_release(t[k]);
    free(t);
}

/* Drop a capture: the recording first, then the buffers it used; out of
** its context's list. */
static void graph_clear(plan_graph *pg, int nconsts) {
    if (pg->ctx) {
        ltf_ctx *ctx = pg->ctx;
        if (pg->prev) pg->prev->next = pg->next;
        else ctx->graphs = pg->next;
        if (pg->next) pg->next->prev = pg->prev;
        ctx->graph_bytes -= pg->bytes;
        pg->prev = pg->next = NULL;
        pg->ctx = NULL;
    }
    pg->bytes = 0;
    if (pg->graph) pg->be->graph_free(pg->be->bctx, pg->graph);
    pg->graph = NULL;
    release_array(pg->in, pg->nin);
    release_array(pg->out, pg->nout);
    release_array(pg->consts, nconsts);
    release_array(pg->held, pg->nheld);
    pg->in = pg->out = pg->consts = pg->held = NULL;
    pg->nheld = pg->capheld = 0;
}

void ltf_plan_free(struct ltf_plan *p) {
    if (!p) return;
    graph_clear(&p->graph, p->nconsts);
    free_steps(&p->fast);
    free_steps(&p->plain);
    free(p->slot_base);
    free(p->out_slot);
    free(p->owned);
    free(p->consts);
    free(p);
}

static int slot(const struct ltf_plan *p, ltf_edge e) { return p->slot_base[e.node] + e.out; }

/* Release lists: a slot is released after the last step that reads it,
** unless it is a graph output or not owned. */
static ltf_status add_releases(ltf_ctx *ctx, struct ltf_plan *p, const ltf_graph *g, step_list *l) {
    int *last = malloc(sizeof(int) * (size_t)(p->nslots + 1));
    if (!last) return ltf_fail_oom(ctx, "plan", 0);
    for (int s = 0; s < p->nslots; s++) last[s] = -1;
    for (int i = 0; i < l->n; i++)
        for (int k = 0; k < l->v[i].nin; k++) last[l->v[i].in_slot[k]] = i;
    for (int k = 0; k < g->noutputs; k++) last[p->out_slot[k]] = -2;   /* kept to the end */
    /* values produced but never read are released right after their step */
    for (int i = 0; i < l->n; i++)
        for (int k = 0; k < l->v[i].nout; k++)
            if (last[l->v[i].out_slot[k]] == -1) last[l->v[i].out_slot[k]] = i;
    for (int i = 0; i < l->n; i++) {
        int cnt = 0;
        for (int s = 0; s < p->nslots; s++) cnt += last[s] == i && p->owned[s];
        l->v[i].release = cnt ? malloc(sizeof(int) * (size_t)cnt) : NULL;
        if (cnt && !l->v[i].release) {
            free(last);
            return ltf_fail_oom(ctx, "plan", 0);
        }
        l->v[i].nrelease = 0;
        for (int s = 0; s < p->nslots; s++)
            if (last[s] == i && p->owned[s]) l->v[i].release[l->v[i].nrelease++] = s;
    }
    free(last);
    return LTF_OK;
}

static ltf_status op_step(ltf_ctx *ctx, struct ltf_plan *p, const ltf_graph *g, int i, plan_step *st) {
    const ltf_node *nd = &g->nodes[i];
    memset(st, 0, sizeof *st);
    st->inplace = -1;
    st->node = i;
    st->op = nd->op;
    st->attrs = nd->attrs;
    st->nin = nd->nin;
    st->nout = nd->nout;
    st->in_slot = malloc(sizeof(int) * (size_t)(nd->nin + nd->nout + 1));
    if (!st->in_slot) return ltf_fail_oom(ctx, "plan", 0);
    st->out_slot = st->in_slot + nd->nin;
    for (int k = 0; k < nd->nin; k++) st->in_slot[k] = slot(p, nd->in[k]);
    for (int k = 0; k < nd->nout; k++) st->out_slot[k] = p->slot_base[i] + k;
    return LTF_OK;
}

/* {==== Fused steps */
static int is_view_member(const ltf_node *nd) {
    return nd->fused && nd->kind == LTF_NODE_OP && (ltf_op_get(nd->op)->flags & LTF_OP_VIEW);
}

/* The index map of an input of shape 'in' read by a member of shape 'out'
** (broadcasting), collapsed: size-1 dims dropped, mergeable neighbours merged. */
static void make_load(ltf_fused_load *l, const ltf_type *in, const ltf_type *out, int64_t numel) {
    int64_t st[LTF_MAX_RANK], dims[LTF_MAX_RANK] = {0}, strides[LTF_MAX_RANK] = {0};
    ltf_broadcast_strides(in->rank, in->dims, out->rank, out->dims, st);
    int r = 0;
    for (int d = 0; d < out->rank; d++) {
        if (out->dims[d] == 1) continue;
        if (r > 0 && strides[r - 1] == st[d] * out->dims[d]) {
            dims[r - 1] *= out->dims[d];
            strides[r - 1] = st[d];
            continue;
        }
        dims[r] = out->dims[d];
        strides[r] = st[d];
        r++;
    }
    if (r == 0) {
        dims[0] = 1;
        r = 1;
    }
    int64_t in_numel = 1;
    for (int d = 0; d < in->rank; d++) in_numel *= in->dims[d];
    int outer = 0;   /* the outermost dim that moves through the input */
    while (outer < r && strides[outer] == 0) outer++;
    int64_t period = 1;
    for (int d = outer; d < r; d++) period *= dims[d];
    l->dtype = in->dtype;
    l->rank = r;
    memcpy(l->dims, dims, sizeof dims);
    memcpy(l->strides, strides, sizeof strides);
    l->period = 0;
    if (in_numel == numel) l->kind = LTF_LOAD_IDENTITY;
    else if (outer == r) l->kind = LTF_LOAD_SCALAR;
    else if (outer > 0) {
        l->kind = LTF_LOAD_PERIODIC;
        l->period = period;
    } else l->kind = LTF_LOAD_GENERAL;
}

static void free_fused(ltf_fused *f) {
    if (f) free(f->ops);
    free(f);
}

/* The step of fused group 'q', whose sink (last computing member) is node 'sink'. */
static ltf_status fused_step(ltf_ctx *ctx, struct ltf_plan *p, const ltf_graph *g, int q, int sink, plan_step *st) {
    int members = 0;
    for (int i = 0; i <= sink; i++) members += g->nodes[i].fused == q && !is_view_member(&g->nodes[i]);
    ltf_fused *f = calloc(1, sizeof *f);
    int *member_of = malloc(sizeof(int) * ((size_t)sink + 1));
    if (!f || !member_of || !(f->ops = calloc((size_t)members, sizeof *f->ops))) {
        free_fused(f);
        free(member_of);
        return ltf_fail_oom(ctx, "plan", 0);
    }
    const ltf_type *sink_ty = &g->nodes[sink].out[0];
    f->dtype = sink_ty->dtype;
    f->numel = 1;
    for (int d = 0; d < sink_ty->rank; d++) f->numel *= sink_ty->dims[d];
    int m = 0;
    const char *too_many = NULL;
    for (int i = 0; i <= sink && !too_many; i++) {
        member_of[i] = -1;
        const ltf_node *nd = &g->nodes[i];
        if (nd->fused != q || is_view_member(nd)) continue;
        ltf_fused_op *op = &f->ops[m];
        op->def = ltf_op_get(nd->op);
        op->node = i;
        op->nin = nd->nin;
        op->in_dtype = g->nodes[nd->in[0].node].out[nd->in[0].out].dtype;
        op->out_dtype = nd->out[0].dtype;
        for (int k = 0; k < nd->nin; k++) {
            ltf_edge e = nd->in[k];
            const ltf_type *seen = &g->nodes[e.node].out[e.out];   /* the shape this member reads */
            while (g->nodes[e.node].fused == q && is_view_member(&g->nodes[e.node])) e = g->nodes[e.node].in[0];
            if (g->nodes[e.node].fused == q && member_of[e.node] >= 0) {
                op->src[k] = member_of[e.node];
                continue;
            }
            int x = 0;
            while (x < f->next && (f->ext[x].node != e.node || f->ext[x].out != e.out)) x++;
            if (x == f->next) {
                if (f->next == LTF_FUSED_MAX_EXT) {
                    too_many = "inputs";
                    break;
                }
                const ltf_type *rt = &g->nodes[e.node].out[e.out];
                f->ext_numel[f->next] = 1;
                for (int d = 0; d < rt->rank; d++) f->ext_numel[f->next] *= rt->dims[d];
                f->ext[f->next++] = e;
            }
            ltf_fused_load l;
            memset(&l, 0, sizeof l);
            make_load(&l, seen, &nd->out[0], f->numel);
            l.ext = x;
            int li = 0;
            while (li < f->nloads && memcmp(&f->loads[li], &l, sizeof l) != 0) li++;
            if (li == f->nloads) {
                if (f->nloads == LTF_FUSED_MAX_LOADS) {
                    too_many = "loads";
                    break;
                }
                f->loads[f->nloads++] = l;
            }
            op->src[k] = -(li + 1);
        }
        member_of[i] = m++;
    }
    free(member_of);
    if (too_many) {
        free_fused(f);
        return ltf_fail(ctx, LTF_ERR_INTERNAL, "plan: a fused group has too many %s", too_many);
    }
    f->n = m;
    /* scratch buffers: linear scan over the members' last uses */
    int *lastuse = malloc(sizeof(int) * ((size_t)m + 1)), *bufs_free = malloc(sizeof(int) * ((size_t)m + 1));
    if (!lastuse || !bufs_free) {
        free(lastuse);
        free(bufs_free);
        free_fused(f);
        return ltf_fail_oom(ctx, "plan", 0);
    }
    for (int a = 0; a < m; a++) {
        lastuse[a] = a;
        for (int b = a + 1; b < m; b++)
            for (int k = 0; k < f->ops[b].nin; k++)
                if (f->ops[b].src[k] == a) lastuse[a] = b;
    }
    int nfree = 0;
    f->nbufs = 0;
    for (int a = 0; a < m; a++) {
        f->ops[a].buf = a == m - 1 ? -1 : (nfree ? bufs_free[--nfree] : f->nbufs++);
        for (int b = 0; b < a; b++)      /* buffers whose value was last read by member a */
            if (lastuse[b] == a && f->ops[b].buf >= 0) bufs_free[nfree++] = f->ops[b].buf;
    }
    free(lastuse);
    free(bufs_free);
    memset(st, 0, sizeof *st);
    st->inplace = -1;
    st->node = sink;
    st->fused = f;
    st->nin = f->next;
    st->nout = 1;
    st->in_slot = malloc(sizeof(int) * (size_t)(f->next + 2));
    if (!st->in_slot) return ltf_fail_oom(ctx, "plan", 0);   /* 'f' is freed with the step */
    st->out_slot = st->in_slot + f->next;
    for (int e = 0; e < f->next; e++) st->in_slot[e] = slot(p, f->ext[e]);
    st->out_slot[0] = p->slot_base[sink];
    st->op = g->nodes[sink].op;
    return LTF_OK;
}
/* }==== */

static const ltf_attrs no_attrs = { .nints = -1, .nints2 = -1 };

/* {==== In place
** An elementwise step may write its output into an input whose value dies
** at that step (this step releases it), when the two have the same dtype
** and element count: the kernels read element i before writing it. Decided
** here from the types; the run checks that nothing else holds the tensor. */
static int known_type(const ltf_type *t, int64_t *numel) {
    if (t->rank < 0 || t->dtype == LTF_DTYPE_STRING || t->dtype == LTF_DTYPE_RESOURCE) return 0;
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0) return 0;
        n *= t->dims[d];
    }
    *numel = n;
    return 1;
}

static int inplace_op(const ltf_node *nd) {
    const ltf_op_def *def = ltf_op_get(nd->op);
    ltf_kernel_fn k = def->kernel[LTF_DEVICE_CPU];
    return nd->nout == 1 && (def->flags & LTF_OP_ELEMENTWISE) &&
           !(def->flags & (LTF_OP_VIEW | LTF_OP_STATEFUL | LTF_OP_KERNEL_ALLOCATES)) &&
           (k == ltf_cpu_elementwise_unary || k == ltf_cpu_elementwise_binary);
}

static void plan_inplace(struct ltf_plan *p, const ltf_graph *g, step_list *l) {
    if (getenv("LTF_NO_INPLACE")) return;
    for (int i = 0; i < l->n; i++) {
        plan_step *s = &l->v[i];
        const ltf_node *nd = &g->nodes[s->node];
        if (!s->fused && !inplace_op(nd)) continue;
        int64_t on, in;
        const ltf_type *oty = &nd->out[0];
        if (!known_type(oty, &on) || on == 0) continue;
        for (int k = 0; k < s->nin && s->inplace < 0; k++) {
            int sl = s->in_slot[k], dies = 0;
            for (int r = 0; r < s->nrelease; r++) dies |= s->release[r] == sl;
            if (!dies || !p->owned[sl]) continue;
            const ltf_type *ity = s->fused ? &g->nodes[s->fused->ext[k].node].out[s->fused->ext[k].out]
                                           : &g->nodes[nd->in[k].node].out[nd->in[k].out];
            if (!known_type(ity, &in) || in != on || ity->dtype != oty->dtype) continue;
            int ok = 1;   /* a fused group must read it element for element */
            for (int q = 0; s->fused && q < s->fused->nloads; q++)
                if (s->fused->loads[q].ext == k && s->fused->loads[q].kind != LTF_LOAD_IDENTITY) ok = 0;
            if (ok) s->inplace = k;
        }
        /* fused groups read only inputs of known type (passes.c); an op
        ** step may have one of partial type, e.g. (None, 7) + (100, 7) */
        for (int k = 0; k < s->nin && s->inplace >= 0 && !s->fused; k++) {
            int64_t n;
            const ltf_type *ity = &g->nodes[nd->in[k].node].out[nd->in[k].out];
            if (ity->rank < 0 || !known_type(ity, &n)) s->assumed = 1;
        }
    }
}

/* Whether an in-place step's planned output type is what its inputs give
** now ('*st' set when they do not fit at all: the op's own error). */
static int assumption_holds(ltf_ctx *ctx, const plan_step *s, ltf_tensor *const *in, const ltf_type *planned,
                            ltf_status *st) {
    ltf_type ty;
    int n = 0;
    *st = ltf_op_infer(ctx, ltf_op_get(s->op), in, s->nin, s->attrs ? s->attrs : &no_attrs, &ty, 1, &n);
    return *st == LTF_OK && n == 1 && ty.dtype == planned->dtype && ty.rank == planned->rank &&
           memcmp(ty.dims, planned->dims, sizeof(int64_t) * (size_t)ty.rank) == 0;
}

/* Op steps whose types are all known when planned skip ltf_op_run's
** inference at run time: the graph's inputs were checked against their
** placeholders, so every type downstream is what tracing inferred. */
static void plan_direct(const ltf_graph *g, step_list *l) {
    for (int i = 0; i < l->n; i++) {
        plan_step *s = &l->v[i];
        if (s->fused) continue;
        const ltf_node *nd = &g->nodes[s->node];
        const ltf_op_def *def = ltf_op_get(nd->op);
        /* control flow (cond, while) allocates its outputs itself, typed as planned:
        ** the branch's or the loop variables' (checked every iteration) */
        int control = nd->op == LTF_OP_COND || nd->op == LTF_OP_WHILE;
        if (def->flags & (LTF_OP_VIEW | LTF_OP_STATEFUL | LTF_OP_READS_VARIABLE)) continue;
        if ((def->flags & (LTF_OP_KERNEL_ALLOCATES | LTF_OP_RESOURCE)) && !control) continue;
        if (!def->kernel[LTF_DEVICE_CPU]) continue;
        int ok = 1;
        int64_t n;
        for (int k = 0; k < nd->nin && ok; k++) {
            const ltf_type *t = &g->nodes[nd->in[k].node].out[nd->in[k].out];
            ok = known_type(t, &n) || (t->rank >= 0 && t->dtype == LTF_DTYPE_STRING);
            for (int d = 0; ok && d < t->rank; d++) ok = t->dims[d] >= 0;
        }
        for (int k = 0; k < nd->nout && ok; k++) ok = known_type(&nd->out[k], &n);
        s->direct = ok;
    }
}

/* The output of step 's' in the buffer of its input 'x', when nothing else holds it; else NULL. */
static ltf_tensor *take_input(ltf_ctx *ctx, ltf_tensor *x, const ltf_type *ty) {
    if (!x || x->shared || x->storage->shared || x->refs != 1 || x->storage->refs != 1 ||
        x->storage->device != LTF_DEVICE_CPU || x->tape_entry)
        return NULL;
    if (x->rank == ty->rank && memcmp(x->dims, ty->dims, sizeof(int64_t) * (size_t)ty->rank) == 0)
        return ltf_tensor_retain(x);
    return ltf_tensor_view(ctx, x, ty->rank, ty->dims);
}
/* }==== */

/* {==== Fused groups when devices are involved */
/* Where a placed run runs the group of step 's' (as ltf_device_op_run
** places an op: the node's device, else the scope's, else the first input's
** not on the host). */
static ltf_device_type fused_device(const ltf_ctx *ctx, const ltf_node *nd, ltf_tensor *const *in, int nin,
                                    int *ordinal) {
    *ordinal = 0;
    if (nd->device >= 0) {
        *ordinal = nd->ordinal;
        return (ltf_device_type)nd->device;
    }
    if (ctx->scope_type >= 0) {
        *ordinal = ctx->scope_ordinal;
        return (ltf_device_type)ctx->scope_type;
    }
    for (int k = 0; k < nin; k++)
        if (in[k]->storage->device != LTF_DEVICE_CPU) {
            *ordinal = in[k]->storage->ordinal;
            return in[k]->storage->device;
        }
    /* TensorFlow 2's default placement: /gpu:0 (its fused_run has every
    ** elementwise member; one it refuses runs on the host) */
    if (ltf_device_default_gpu((ltf_ctx *)ctx)) return LTF_DEVICE_CUDA;
    return LTF_DEVICE_CPU;
}

static void release_n(ltf_tensor **t, int n) {
    for (int k = 0; k < n; k++) ltf_tensor_release(t[k]);
}

/* The inputs 'in' on (type, ordinal) into 'mv' (retained when there). */
static ltf_status move_inputs(ltf_ctx *ctx, ltf_tensor *const *in, int nin, ltf_device_type type, int ordinal,
                              ltf_tensor **mv) {
    for (int k = 0; k < nin; k++) {
        ltf_status st = ltf_tensor_to_device(ctx, in[k], type, ordinal, &mv[k]);
        if (st != LTF_OK) {
            release_n(mv, k);
            return st;
        }
    }
    return LTF_OK;
}

/* Fused group step 's' in a run with devices: on a device, one call of the
** backend's fused_run (one launch; counted as the fused_group row's
** 'device'); where the device has no fused_run or refuses the group
** (UNIMPLEMENTED), on the host over copies (counted as 'host'); a group
** placed on the host runs cpu/fused.c's program over host copies. */
static ltf_status fused_placed(ltf_ctx *ctx, const ltf_graph *g, const plan_step *s, ltf_tensor *const *in,
                               ltf_tensor **out) {
    const ltf_node *nd = &g->nodes[s->node];
    const ltf_type *ty = &nd->out[0];
    const ltf_fused *f = s->fused;
    ltf_tensor *mv[LTF_FUSED_MAX_EXT];
    int ordinal;
    ltf_device_type type = fused_device(ctx, nd, in, s->nin, &ordinal);
    const ltf_backend *be = type == LTF_DEVICE_CPU ? NULL : ltf_device_get(ctx, type, ordinal, "fused group");
    if (type != LTF_DEVICE_CPU && !be) return ctx->last_status;
    ltf_status st;
    if (be && be->fused_run) {
        if ((st = move_inputs(ctx, in, s->nin, type, ordinal, mv)) != LTF_OK) return st;
        ltf_tensor *o = ltf_tensor_empty_on(ctx, ty->dtype, ty->rank, ty->dims, type, ordinal, "fused group");
        st = o ? (ltf_status)be->fused_run(be->bctx, ctx, f, mv, s->nin, o) : ctx->last_status;
        release_n(mv, s->nin);
        if (st == LTF_OK) {
            ltf_device_count(ctx, LTF_KERNEL_STATS_FUSED_GROUP, LTF_KERNEL_RAN_DEVICE);
            *out = o;
            return LTF_OK;
        }
        ltf_tensor_release(o);
        if (st != LTF_ERR_UNIMPLEMENTED) return st;
        ctx->last_status = LTF_OK;   /* refused: the host runs it */
    }
    if ((st = move_inputs(ctx, in, s->nin, LTF_DEVICE_CPU, 0, mv)) != LTF_OK) return st;
    ltf_tensor *h = ltf_tensor_empty(ctx, ty->dtype, ty->rank, ty->dims);
    st = h ? ltf_cpu_fused_run(ctx, f, mv, s->nin, h) : ctx->last_status;
    release_n(mv, s->nin);
    if (st != LTF_OK) {
        ltf_tensor_release(h);
        return st;
    }
    if (type == LTF_DEVICE_CPU) {
        *out = h;
        return LTF_OK;
    }
    ltf_device_count(ctx, LTF_KERNEL_STATS_FUSED_GROUP, LTF_KERNEL_RAN_HOST);
    st = ltf_tensor_to_device(ctx, h, type, ordinal, out);
    ltf_tensor_release(h);
    return st;
}

/* Whether every fused group's members share one placement (and there is one). */
static int groups_placed_alike(const ltf_graph *g, const step_list *fast) {
    int any = 0;
    for (int i = 0; i < fast->n; i++) {
        if (!fast->v[i].fused) continue;
        any = 1;
        const ltf_node *sink = &g->nodes[fast->v[i].node];
        for (int j = 0; j < g->n; j++) {
            const ltf_node *m = &g->nodes[j];
            if (m->alive && m->fused == sink->fused && (m->device != sink->device || m->ordinal != sink->ordinal))
                return 0;
        }
    }
    return any;
}
/* }==== */

ltf_status ltf_plan_build(ltf_ctx *ctx, ltf_graph *g) {
    struct ltf_plan *p = calloc(1, sizeof *p);
    if (!p) return ltf_fail_oom(ctx, "plan", sizeof *p);
    ltf_plan_free(g->plan);
    g->plan = p;
    p->slot_base = malloc(sizeof(int) * ((size_t)g->n + 1));
    p->out_slot = malloc(sizeof(int) * ((size_t)g->noutputs + 1));
    if (!p->slot_base || !p->out_slot) return ltf_fail_oom(ctx, "plan", 0);
    /* an Identity of an op's value (the graph outputs end in one each) is
    ** that value's slot: no step, no new tensor header per run */
    unsigned char *alias = calloc((size_t)g->n + 1, 1);
    if (!alias) return ltf_fail_oom(ctx, "plan", 0);
    for (int i = 0; i < g->n; i++) {
        const ltf_node *nd = &g->nodes[i];
        if (nd->alive && nd->kind == LTF_NODE_OP && nd->op == LTF_OP_IDENTITY && !nd->fused && nd->nin == 1) {
            const ltf_node *src = &g->nodes[nd->in[0].node];
            alias[i] = src->kind == LTF_NODE_OP && !alias[nd->in[0].node];
        }
        if (alias[i]) {
            p->slot_base[i] = p->slot_base[nd->in[0].node] + nd->in[0].out;
            continue;
        }
        p->slot_base[i] = p->nslots;
        p->nslots += nd->nout;
    }
    p->owned = calloc((size_t)p->nslots + 1, 1);
    if (!p->owned) {
        free(alias);
        return ltf_fail_oom(ctx, "plan", 0);
    }
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].kind == LTF_NODE_OP && !alias[i])
            for (int k = 0; k < g->nodes[i].nout; k++) p->owned[p->slot_base[i] + k] = 1;
    /* constants: their slots are filled at every run */
    for (int i = 0; i < g->n; i++) p->nconsts += g->nodes[i].kind == LTF_NODE_CONST && g->nodes[i].alive;
    p->consts = malloc(sizeof(int) * ((size_t)p->nconsts + 1));
    if (!p->consts) {
        free(alias);
        return ltf_fail_oom(ctx, "plan", 0);
    }
    p->nconsts = 0;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].kind == LTF_NODE_CONST && g->nodes[i].alive) p->consts[p->nconsts++] = i;
    for (int k = 0; k < g->noutputs; k++) p->out_slot[k] = slot(p, g->outputs[k]);

    int nops = 0, *lastmember = calloc((size_t)g->n + 1, sizeof(int));
    if (!lastmember) {
        free(alias);
        return ltf_fail_oom(ctx, "plan", 0);
    }
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].alive && g->nodes[i].kind == LTF_NODE_OP) nops++;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].alive && g->nodes[i].fused && !is_view_member(&g->nodes[i])) lastmember[g->nodes[i].fused] = i;
    p->plain.v = calloc((size_t)nops + 1, sizeof(plan_step));
    p->fast.v = calloc((size_t)nops + 1, sizeof(plan_step));
    if (!p->plain.v || !p->fast.v) {
        free(lastmember);
        free(alias);
        return ltf_fail_oom(ctx, "plan", 0);
    }
    ltf_status st = LTF_OK;
    for (int i = 0; i < g->n && st == LTF_OK; i++) {
        const ltf_node *nd = &g->nodes[i];
        if (!nd->alive || nd->kind != LTF_NODE_OP || alias[i]) continue;
        st = op_step(ctx, p, g, i, &p->plain.v[p->plain.n++]);
        if (st != LTF_OK) break;
        if (!nd->fused)
            st = op_step(ctx, p, g, i, &p->fast.v[p->fast.n++]);
        else if (lastmember[nd->fused] == i)   /* other members, views included, live in the group */
            st = fused_step(ctx, p, g, nd->fused, i, &p->fast.v[p->fast.n++]);
    }
    free(lastmember);
    free(alias);
    if (st != LTF_OK) return st;
    if ((st = add_releases(ctx, p, g, &p->plain)) != LTF_OK) return st;
    if ((st = add_releases(ctx, p, g, &p->fast)) != LTF_OK) return st;
    plan_inplace(p, g, &p->fast);
    plan_direct(g, &p->fast);
    for (int i = 0; i < g->n; i++) {
        int ord, dev = g->nodes[i].alive ? ltf_graph_node_device(g, i, &ord) : -1;
        if (dev > LTF_DEVICE_CPU) p->devices = 1;
    }
    p->fused_placed = groups_placed_alike(g, &p->fast);
    return LTF_OK;
}

/* Whether a graph input is on a device other than the host (a variable: its value). */
static int inputs_elsewhere(const ltf_graph *g, ltf_tensor *const *inputs) {
    for (int i = 0; i < g->ninputs; i++) {
        int ord;
        const ltf_tensor *t = inputs[i];
        if (!t->storage) continue;   /* symbolic: the run is inlined into a trace */
        if (t->storage->device != LTF_DEVICE_CPU ||
            (t->dtype == LTF_DTYPE_RESOURCE && ltf_device_of_handle(t, &ord) > LTF_DEVICE_CPU))
            return 1;
    }
    return 0;
}

static int on_cpu(ltf_tensor *const *in, int n) {
    for (int k = 0; k < n; k++)
        if (in[k]->storage->device != LTF_DEVICE_CPU) return 0;
    return 1;
}

/* {==== Loop-invariant values (hoisting)
** The plan of a while loop's function runs once per iteration. Steps that
** read only constants, captured inputs (the function's inputs after its
** 'nvary' loop variables) and other such steps, and have no effect, give
** the same values every iteration: the first run keeps them in the cache
** and later runs start from them and skip those steps. */
struct ltf_loop_cache {
    unsigned char *inv;       /* per fast step: invariant */
    ltf_tensor **vals;        /* per slot: the value kept (a reference), or NULL */
    int nslots;
    int filled;
};

ltf_loop_cache *ltf_plan_loop_cache(ltf_ctx *ctx, ltf_graph *g, int nvary) {
    struct ltf_plan *p = g->plan;
    if (!p) return NULL;
    unsigned char *slot_inv = calloc((size_t)p->nslots + 1, 1);
    unsigned char *inv = calloc((size_t)p->fast.n + 1, 1);
    if (!slot_inv || !inv) {
        free(slot_inv);
        free(inv);
        return NULL;              /* no hoisting: still correct */
    }
    for (int c = 0; c < p->nconsts; c++) slot_inv[p->slot_base[p->consts[c]]] = 1;
    for (int i = nvary; i < g->ninputs; i++) slot_inv[p->slot_base[g->inputs[i]]] = 1;
    int count = 0;
    for (int i = 0; i < p->fast.n; i++) {
        const plan_step *s = &p->fast.v[i];
        const ltf_node *nd = &g->nodes[s->node];
        int ok = !s->fused ? !(ltf_op_get(nd->op)->flags & LTF_OP_READS_VARIABLE) &&
                             !ltf_op_node_stateful(ctx, nd->op, nd->attrs)
                           : 1;
        for (int k = 0; ok && k < s->nin; k++) ok = slot_inv[s->in_slot[k]];
        if (!ok) continue;
        inv[i] = 1;
        count++;
        for (int k = 0; k < s->nout; k++) slot_inv[s->out_slot[k]] = 1;
    }
    free(slot_inv);
    ltf_loop_cache *c = count ? calloc(1, sizeof *c) : NULL;
    if (c) c->vals = calloc((size_t)p->nslots + 1, sizeof *c->vals);
    if (!c || !c->vals) {
        free(c);
        free(inv);
        return NULL;
    }
    c->inv = inv;
    c->nslots = p->nslots;
    return c;
}

void ltf_plan_loop_cache_free(ltf_loop_cache *c) {
    if (!c) return;
    for (int s = 0; s < c->nslots; s++) ltf_tensor_release(c->vals[s]);
    free(c->vals);
    free(c->inv);
    free(c);
}
/* }==== */

ltf_status ltf_plan_run(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *const *inputs, ltf_tensor **outputs) {
    return ltf_plan_run_cached(ctx, g, inputs, outputs, NULL);
}

/* Keep 't' for the capture 'pg' (its memory is the graph's until it is freed). */
static ltf_status hold(ltf_ctx *ctx, plan_graph *pg, ltf_tensor *t) {
    if (!t) return LTF_OK;
    if (pg->nheld == pg->capheld) {
        int cap = pg->capheld ? 2 * pg->capheld : 32;
        ltf_tensor **h = realloc(pg->held, sizeof *h * (size_t)cap);
        if (!h) return ltf_fail_oom(ctx, "graph capture", 0);
        pg->held = h;
        pg->capheld = cap;
    }
    pg->held[pg->nheld++] = ltf_tensor_retain(t);
    return LTF_OK;
}

/* {==== LTF_PLAN_PROFILE (a developer's switch, read once): when set, each
** step of each plan run prints one line to stderr, "plan-step <i> <op or
** fused> <output dims> <microseconds>", for bench/plan_profile.lua to sum.
** Off, a step costs one predictable branch. */
static int profile_on(void) {
    static int on = -1;   /* the race of two first calls is benign (both store the same) */
    int v = __atomic_load_n(&on, __ATOMIC_RELAXED);
    if (v < 0) {
        const char *e = getenv("LTF_PLAN_PROFILE");
        v = e && e[0] && e[0] != '0';
        __atomic_store_n(&on, v, __ATOMIC_RELAXED);
    }
    return v;
}

static double profile_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void profile_print(const plan_step *s, int i, ltf_tensor *out, double us) {
    char dims[96];
    int n = 0;
    dims[0] = 0;
    for (int d = 0; out && d < out->rank && n < (int)sizeof dims - 24; d++)
        n += snprintf(dims + n, sizeof dims - (size_t)n, "%s%lld", d ? "x" : "", (long long)out->dims[d]);
    const char *name = s->fused ? "fused" : ltf_op_get(s->op)->name;
    fprintf(stderr, "plan-step %d %s %s %.1f\n", i, name, n ? dims : "-", us);
}
/* }==== */

/* Run the steps. 'pg': a capture in progress (constants from its device
** copies, every step's outputs held). */
static ltf_status plan_exec(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *const *inputs, ltf_tensor **outputs,
                            ltf_loop_cache *cache, plan_graph *pg) {
    const int prof = profile_on();
    struct ltf_plan *p = g->plan;
    ltf_tensor *stack_slots[128];
    ltf_tensor **slots = p->nslots <= 128 ? stack_slots : calloc((size_t)p->nslots, sizeof *slots);
    if (!slots) return ltf_fail_oom(ctx, "graph run", 0);
    memset(slots, 0, sizeof *slots * (size_t)p->nslots);
    for (int i = 0; i < g->ninputs; i++) slots[p->slot_base[g->inputs[i]]] = inputs[i];
    for (int c = 0; c < p->nconsts; c++)
        slots[p->slot_base[p->consts[c]]] = pg ? pg->consts[c] : g->nodes[p->consts[c]].value;
    /* while a tape records or another graph is traced, every op must go
    ** through ltf_op_run one by one; so must a graph with nodes or values
    ** on a device (each node runs on its device, else where its inputs are:
    ** docs/devices.md) */
    int placed = ctx->ndevices > 0 && (p->devices || ctx->scope_type > 0 || inputs_elsewhere(g, inputs) ||
                                       ctx->default_placement || ctx->log_placement);
    /* with devices, a plan with fused groups (each on one device) keeps
    ** them: the other steps still go op by op through ltf_op_run */
    int fast_placed = placed && p->fused_placed && !ctx->device_policy_explicit;
    const step_list *l = (ctx->tape_record || ctx->graph || (placed && !fast_placed)) ? &p->plain : &p->fast;
    if (l != &p->fast || placed || (cache && cache->nslots != p->nslots)) cache = NULL;
    int reuse = cache && cache->filled;
    for (int s = 0; reuse && s < p->nslots; s++)
        if (cache->vals[s]) slots[s] = ltf_tensor_retain(cache->vals[s]);
    ltf_status st = LTF_OK;
    ltf_tensor *in_stack[16];
    for (int i = 0; i < l->n && st == LTF_OK; i++) {
        const plan_step *s = &l->v[i];
        if (reuse && cache->inv[i]) {   /* hoisted: its values are in the slots already */
            for (int r = 0; r < s->nrelease; r++) {
                ltf_tensor_release(slots[s->release[r]]);
                slots[s->release[r]] = NULL;
            }
            continue;
        }
        double t0 = prof ? profile_now() : 0;
        ltf_tensor **in = s->nin <= 16 ? in_stack : malloc(sizeof(ltf_tensor *) * (size_t)s->nin);
        if (!in) {
            st = ltf_fail_oom(ctx, "graph run", 0);
            break;
        }
        for (int k = 0; k < s->nin; k++) in[k] = slots[s->in_slot[k]];
        ltf_tensor *o = NULL;
        if (s->inplace >= 0 && !placed &&
            (!s->assumed || assumption_holds(ctx, s, in, &g->nodes[s->node].out[0], &st)))
            o = take_input(ctx, in[s->inplace], &g->nodes[s->node].out[0]);
        if (st != LTF_OK) {
            if (in != in_stack) free(in);
            break;
        }
        if (s->fused && placed) {
            if ((st = fused_placed(ctx, g, s, in, &o)) == LTF_OK) slots[s->out_slot[0]] = o;
        } else if (s->fused) {
            const ltf_type *ty = &g->nodes[s->node].out[0];
            if (!o) o = ltf_tensor_empty(ctx, ty->dtype, ty->rank, ty->dims);
            if (!o) st = ctx->last_status;
            else if ((st = ltf_cpu_fused_run(ctx, s->fused, in, s->nin, o)) != LTF_OK) ltf_tensor_release(o);
            else slots[s->out_slot[0]] = o;
        } else if (o) {   /* in place: the kernel itself, types as planned */
            const ltf_op_def *def = ltf_op_get(s->op);
            st = ltf_half_run(ctx, def, s->op, def->kernel[LTF_DEVICE_CPU], LTF_DEVICE_CPU, 0, in, s->nin,
                              s->attrs ? s->attrs : &no_attrs, g->nodes[s->node].out, &o, 1);
            if (st != LTF_OK) ltf_tensor_release(o);
            else slots[s->out_slot[0]] = o;
        } else if (s->direct && !placed && s->nout <= 16 && on_cpu(in, s->nin)) {   /* types as planned */
            const ltf_op_def *def = ltf_op_get(s->op);
            const ltf_node *nd = &g->nodes[s->node];
            ltf_tensor *outs[16];
            int made = 0;
            if (def->flags & LTF_OP_KERNEL_ALLOCATES) {
                for (; made < s->nout; made++) outs[made] = NULL;
            } else {
                for (; made < s->nout; made++) {
                    const ltf_type *ty = &nd->out[made];
                    if (!(outs[made] = ltf_tensor_empty(ctx, ty->dtype, ty->rank, ty->dims))) break;
                }
            }
            int empty = !(def->flags & LTF_OP_KERNEL_ALLOCATES) && s->nout > 0;   /* as ltf_op_run: nothing to do */
            for (int k = 0; empty && k < made; k++) empty = outs[k]->numel == 0;
            st = made < s->nout ? ctx->last_status
                 : empty        ? LTF_OK
                                : ltf_half_run(ctx, def, s->op, def->kernel[LTF_DEVICE_CPU], LTF_DEVICE_CPU, 0, in,
                                               s->nin, s->attrs ? s->attrs : &no_attrs, nd->out, outs, s->nout);
            for (int k = 0; k < made; k++) {
                if (st == LTF_OK) slots[s->out_slot[k]] = outs[k];
                else ltf_tensor_release(outs[k]);
            }
        } else {
            ltf_tensor *outs[16];
            ltf_tensor **o = s->nout <= 16 ? outs : malloc(sizeof(ltf_tensor *) * (size_t)s->nout);
            int n = 0;
            const ltf_node *nd = &g->nodes[s->node];
            int scope = ctx->scope_type, scope_ordinal = ctx->scope_ordinal;
            if (placed && nd->device >= 0) {
                ctx->scope_type = nd->device;
                ctx->scope_ordinal = nd->ordinal;
            }
            if (!o) st = ltf_fail_oom(ctx, "graph run", 0);
            else st = ltf_op_run(ctx, s->op, in, s->nin, s->attrs, o, s->nout, &n);
            ctx->scope_type = scope;
            ctx->scope_ordinal = scope_ordinal;
            for (int k = 0; k < n; k++) slots[s->out_slot[k]] = o[k];
            if (o && o != outs) free(o);
        }
        if (in != in_stack) free(in);
        if (prof && st == LTF_OK) profile_print(s, i, s->nout > 0 ? slots[s->out_slot[0]] : NULL, profile_now() - t0);
        for (int k = 0; pg && st == LTF_OK && k < s->nout; k++) st = hold(ctx, pg, slots[s->out_slot[k]]);
        if (cache && !reuse && cache->inv[i] && st == LTF_OK)
            for (int k = 0; k < s->nout; k++) cache->vals[s->out_slot[k]] = ltf_tensor_retain(slots[s->out_slot[k]]);
        for (int r = 0; r < s->nrelease; r++) {
            ltf_tensor_release(slots[s->release[r]]);
            slots[s->release[r]] = NULL;
        }
    }
    if (cache && !reuse && st == LTF_OK) cache->filled = 1;
    if (st == LTF_OK)
        for (int k = 0; k < g->noutputs; k++) outputs[k] = ltf_tensor_retain(slots[p->out_slot[k]]);
    /* release what is still owned (outputs and, after a failure, the rest) */
    for (int s = 0; s < p->nslots; s++)
        if (p->owned[s]) ltf_tensor_release(slots[s]);
    if (slots != stack_slots) free(slots);
    return st;
}

/* {==== Graph replay of device plans */
/* The device a plan may be captured on: every input on one GPU (none a
** resource or string), the backend with graph entries, no tape or trace,
** and every step one the device runs on its own stream: a fused group, or
** an op with a device kernel (not emulated) that is not stateful, on
** variables, host-orchestrated or sized from the data, nor run on float32
** copies of float16/bfloat16; constants only of numeric dtypes. NULL when
** not. */
static const ltf_backend *graph_device(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *const *inputs, int *ordinal) {
    struct ltf_plan *p = g->plan;
    const char *off = getenv("LTF_NO_DEVICE_GRAPHS");
    if ((off && strcmp(off, "1") == 0) || ctx->tape_record || ctx->graph || ctx->device_policy_explicit ||
        ctx->ndevices <= 0 || g->ninputs <= 0)
        return NULL;
    int ord = -1;
    for (int i = 0; i < g->ninputs; i++) {
        const ltf_tensor *t = inputs[i];
        if (!t->storage || t->storage->device != LTF_DEVICE_CUDA || t->dtype == LTF_DTYPE_RESOURCE ||
            t->dtype == LTF_DTYPE_STRING || (ord >= 0 && t->storage->ordinal != ord))
            return NULL;
        ord = t->storage->ordinal;
    }
    if (ctx->scope_type >= 0 && (ctx->scope_type != LTF_DEVICE_CUDA || ctx->scope_ordinal != ord)) return NULL;
    const ltf_backend *be = ctx->devices[ord];
    if (!be || !be->graph_begin || !be->graph_end || !be->graph_launch || !be->graph_free) return NULL;
    for (int c = 0; c < p->nconsts; c++) {
        const ltf_tensor *v = g->nodes[p->consts[c]].value;
        if (!v || !v->storage || v->dtype == LTF_DTYPE_RESOURCE || v->dtype == LTF_DTYPE_STRING ||
            (v->storage->device != LTF_DEVICE_CPU && (v->storage->device != LTF_DEVICE_CUDA || v->storage->ordinal != ord)))
            return NULL;
    }
    const step_list *l = p->fused_placed ? &p->fast : &p->plain;
    for (int i = 0; i < l->n; i++) {
        const plan_step *s = &l->v[i];
        const ltf_node *nd = &g->nodes[s->node];
        if (nd->device >= 0 && (nd->device != LTF_DEVICE_CUDA || nd->ordinal != ord)) return NULL;
        if (s->fused) {
            if (!be->fused_run) return NULL;
            continue;
        }
        const ltf_op_def *def = ltf_op_get(s->op);
        if ((def->flags & (LTF_OP_STATEFUL | LTF_OP_RESOURCE | LTF_OP_KERNEL_ALLOCATES | LTF_OP_READS_VARIABLE)) ||
            s->op == LTF_OP_COND || s->op == LTF_OP_WHILE || s->op == LTF_OP_PRINT || !be->kernel ||
            !be->kernel(be->bctx, s->op) ||
            (be->kernel_kind && be->kernel_kind(be->bctx, s->op) == LTF_KERNEL_EMULATED))
            return NULL;
        for (int k = 0; k < nd->nout; k++)
            if (nd->out[k].dtype == LTF_DTYPE_STRING || nd->out[k].dtype == LTF_DTYPE_RESOURCE) return NULL;
        /* a kernel run on float32 copies of float16/bfloat16 (half.c): its
        ** temporaries go back to the cache after the step, so a replay
        ** would write into memory that is no longer the graph's */
        if (!be->takes_half || !be->takes_half(be->bctx, s->op)) {
            for (int k = 0; k < nd->nout; k++)
                if (ltf_half_is(nd->out[k].dtype)) return NULL;
            for (int k = 0; k < nd->nin; k++)
                if (ltf_half_is(g->nodes[nd->in[k].node].out[nd->in[k].out].dtype)) return NULL;
        }
    }
    *ordinal = ord;
    return be;
}

/* Fresh device copies of the captured outputs (later replays overwrite those). */
static ltf_status graph_outputs(ltf_ctx *ctx, const plan_graph *pg, ltf_tensor **outputs) {
    for (int k = 0; k < pg->nout; k++) {
        const ltf_tensor *o = pg->out[k];
        outputs[k] = ltf_tensor_empty_on(ctx, o->dtype, o->rank, o->dims, LTF_DEVICE_CUDA, pg->ordinal, "graph replay");
        ltf_status st = outputs[k] ? ltf_tensor_copy_into(ctx, outputs[k], o) : ctx->last_status;
        if (st != LTF_OK) {
            release_n(outputs, outputs[k] ? k + 1 : k);
            return st;
        }
    }
    return LTF_OK;
}

/* Device bytes a capture holds: the storages of its input copies, outputs,
** constants and every step's outputs (a storage shared by two of them,
** e.g. a view, is counted once per holder: an upper bound). */
static size_t graph_held_bytes(const plan_graph *pg) {
    size_t n = 0;
    ltf_tensor **lists[] = { pg->in, pg->out, pg->consts, pg->held };
    int counts[] = { pg->nin, pg->nout, pg->nconsts, pg->nheld };
    for (int l = 0; l < 4; l++)
        for (int k = 0; lists[l] && k < counts[l]; k++) {
            const ltf_tensor *t = lists[l][k];
            if (t && t->storage && t->storage->device != LTF_DEVICE_CPU) n += t->storage->nbytes;
        }
    return n;
}

/* Drop capture 'pg' to give its memory back; it may be captured again after
** two more calls, unless it was dropped twice already (then it would keep
** evicting and re-capturing: it runs step by step from then on). */
static void graph_drop(plan_graph *pg) {
    graph_clear(pg, pg->nconsts);
    pg->calls = 0;
    pg->state = ++pg->drops >= 2 ? -1 : 0;
}

/* Drop least recently replayed captures (not 'keep', not busy) until
** 'need' more bytes fit under 'limit'. 1 when they fit. */
static int graph_make_room(ltf_ctx *ctx, size_t need, size_t limit, const plan_graph *keep) {
    while (ctx->graph_bytes + need > limit) {
        plan_graph *lru = NULL;
        for (plan_graph *q = ctx->graphs; q; q = q->next)
            if (q != keep && !q->busy && (!lru || q->last_use < lru->last_use)) lru = q;
        if (!lru) return 0;
        graph_drop(lru);
    }
    return 1;
}

/* Drop captures, least recently replayed first and never one being
** captured or replayed, until they hold at most 'bytes'. */
static void graphs_trim(ltf_ctx *ctx, size_t bytes) { graph_make_room(ctx, 0, bytes, NULL); }

/* LTF_CTX_EVENT_RECLAIM (device memory ran short): drop every capture; the
** hook the first capture registers. */
static void graphs_reclaim(ltf_ctx *ctx, void *data) {
    (void)data;
    graphs_trim(ctx, 0);
}

void ltf_ctx_set_device_graph_limit(ltf_ctx *ctx, size_t bytes) {
    ctx->graph_limit = bytes;
    graphs_trim(ctx, bytes);
}

void ltf_ctx_device_graph_info(const ltf_ctx *ctx, size_t *limit, size_t *bytes, int *count) {
    if (limit) *limit = ctx->graph_limit;
    if (bytes) *bytes = ctx->graph_bytes;
    if (count) {
        int n = 0;
        for (const plan_graph *q = ctx->graphs; q; q = q->next) n++;
        *count = n;
    }
}

/* Record the plan's launches on its device and run them once (the
** outputs); LTF_ERR_UNIMPLEMENTED (state -1) when the device refused the
** capture, or when what it holds exceeds the context's limit even after
** dropping every other capture: the caller then runs the plan as usual
** (a refused capture ran nothing; one over the limit ran, and is dropped
** after its outputs are copied). */
static ltf_status graph_capture(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *const *inputs, ltf_tensor **outputs,
                                const ltf_backend *be, int ordinal) {
    struct ltf_plan *p = g->plan;
    plan_graph *pg = &p->graph;
    pg->state = -1;
    pg->be = be;
    pg->ordinal = ordinal;
    pg->nin = g->ninputs;
    pg->nout = g->noutputs;
    pg->nconsts = p->nconsts;
    pg->in = calloc((size_t)pg->nin + 1, sizeof *pg->in);
    pg->out = calloc((size_t)pg->nout + 1, sizeof *pg->out);
    pg->consts = calloc((size_t)p->nconsts + 1, sizeof *pg->consts);
    ltf_status st = pg->in && pg->out && pg->consts ? LTF_OK : ltf_fail_oom(ctx, "graph capture", 0);
    /* before the capture: the constants on the device, private copies of the inputs */
    for (int c = 0; c < p->nconsts && st == LTF_OK; c++)
        st = ltf_tensor_to_device(ctx, g->nodes[p->consts[c]].value, LTF_DEVICE_CUDA, ordinal, &pg->consts[c]);
    for (int i = 0; i < pg->nin && st == LTF_OK; i++) {
        const ltf_tensor *x = inputs[i];
        pg->in[i] = ltf_tensor_empty_on(ctx, x->dtype, x->rank, x->dims, LTF_DEVICE_CUDA, ordinal, "graph capture");
        st = pg->in[i] ? ltf_tensor_copy_into(ctx, pg->in[i], x) : ctx->last_status;
    }
    if (st != LTF_OK) {
        graph_clear(pg, p->nconsts);
        return st;
    }
    if (be->graph_begin(be->bctx) != 0) {
        graph_clear(pg, p->nconsts);
        return LTF_ERR_UNIMPLEMENTED;
    }
    pg->busy = 1;
    st = plan_exec(ctx, g, pg->in, pg->out, NULL, pg);
    pg->graph = be->graph_end(be->bctx);
    pg->busy = 0;
    if (st != LTF_OK || !pg->graph) {   /* the recorded work never ran: run the plan as usual */
        graph_clear(pg, p->nconsts);
        ctx->last_status = LTF_OK;
        return LTF_ERR_UNIMPLEMENTED;
    }
    if (be->graph_launch(be->bctx, pg->graph) != 0) {
        char name[LTF_DEVICE_STR];
        st = ltf_fail(ctx, LTF_ERR_INTERNAL, "graph replay: launch on %s failed: %s",
                      ltf_device_str(LTF_DEVICE_CUDA, ordinal, name), be->error(be->bctx));
        graph_clear(pg, p->nconsts);
        return st;
    }
    ltf_device_count(ctx, LTF_KERNEL_STATS_GRAPH_CAPTURE, LTF_KERNEL_RAN_DEVICE);
    pg->busy = 1;
    st = graph_outputs(ctx, pg, outputs);
    pg->busy = 0;
    size_t bytes = graph_held_bytes(pg);
    size_t limit = ctx->graph_limit;
    if (st != LTF_OK || bytes > limit || !graph_make_room(ctx, bytes, limit, pg) ||
        ltf_ctx_hook_add(ctx, LTF_CTX_EVENT_RECLAIM, graphs_reclaim, NULL) != LTF_OK) {
        /* too large to keep (or no hook slot left to drop it when device
        ** memory runs short): it ran once */
        graph_clear(pg, p->nconsts);
        return st;
    }
    pg->state = 1;
    pg->bytes = bytes;
    pg->last_use = ++ctx->graph_clock;
    pg->ctx = ctx;
    pg->prev = NULL;
    pg->next = ctx->graphs;
    if (ctx->graphs) ctx->graphs->prev = pg;
    ctx->graphs = pg;
    ctx->graph_bytes += bytes;
    return LTF_OK;
}

/* Whether 'inputs' are where and what the capture's were. */
static int graph_matches(const plan_graph *pg, ltf_tensor *const *inputs) {
    for (int i = 0; i < pg->nin; i++) {
        const ltf_tensor *x = inputs[i], *c = pg->in[i];
        if (!x->storage || x->storage->device != LTF_DEVICE_CUDA || x->storage->ordinal != pg->ordinal ||
            x->dtype != c->dtype || x->rank != c->rank || memcmp(x->dims, c->dims, sizeof(int64_t) * (size_t)x->rank))
            return 0;
    }
    return 1;
}

static ltf_status graph_replay(ltf_ctx *ctx, plan_graph *pg, ltf_tensor *const *inputs, ltf_tensor **outputs) {
    pg->busy = 1;
    pg->last_use = ++ctx->graph_clock;
    ltf_status st = LTF_OK;
    for (int i = 0; i < pg->nin && st == LTF_OK; i++) st = ltf_tensor_copy_into(ctx, pg->in[i], inputs[i]);
    if (st == LTF_OK && pg->be->graph_launch(pg->be->bctx, pg->graph) != 0) {
        char name[LTF_DEVICE_STR];
        st = ltf_fail(ctx, LTF_ERR_INTERNAL, "graph replay: launch on %s failed: %s",
                      ltf_device_str(LTF_DEVICE_CUDA, pg->ordinal, name), pg->be->error(pg->be->bctx));
    }
    if (st == LTF_OK) {
        ltf_device_count(ctx, LTF_KERNEL_STATS_GRAPH_REPLAY, LTF_KERNEL_RAN_DEVICE);
        st = graph_outputs(ctx, pg, outputs);
    }
    pg->busy = 0;
    return st;
}

/* A plan whose inputs are on one GPU runs step by step at its first call
** (which also compiles its fused groups), is captured at its second and
** replayed from then on for inputs of the captured shapes. */
ltf_status ltf_plan_run_cached(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *const *inputs, ltf_tensor **outputs,
                               ltf_loop_cache *cache) {
    plan_graph *pg = &g->plan->graph;
    int ordinal;
    if (pg->state >= 0 && ctx->graph_limit > 0) {
        const ltf_backend *be = graph_device(ctx, g, inputs, &ordinal);
        if (be && pg->state == 1 && be == pg->be && graph_matches(pg, inputs)) return graph_replay(ctx, pg, inputs, outputs);
        if (be && pg->state == 0 && ++pg->calls >= 2) {
            ltf_status st = graph_capture(ctx, g, inputs, outputs, be, ordinal);
            if (st != LTF_ERR_UNIMPLEMENTED) return st;
        }
    }
    return plan_exec(ctx, g, inputs, outputs, cache, NULL);
}
/* }==== */
