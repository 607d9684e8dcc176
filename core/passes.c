/*
** passes.c: graph passes, run in order by ltf_graph_end (graph.c):
**   prune           keep what the outputs need, and every stateful op
**                   (an assign or print whose result nobody reads still runs)
**   fold_constants  evaluate nodes whose inputs are all constants
**   cse             merge nodes with the same op, attributes and inputs
**   fuse            group trees of elementwise ops (any dtype, casts, broadcast
**                   inputs, views as index remapping) into one block-wise loop
** Each pass only marks nodes dead, rewrites edges or sets 'fused'; node
** order (program order) never changes.
*/
#include <stdlib.h>
#include <string.h>
#include "graph.h"
#include "fused.h"
#include "functions.h"

/* a stateful op, or a control-flow op whose functions have one */
static int is_stateful(const ltf_graph *g, const ltf_node *nd) {
    return nd->kind == LTF_NODE_OP && ltf_op_node_stateful(g->ctx, nd->op, nd->attrs);
}

/* {==== prune */
ltf_status ltf_pass_prune(ltf_ctx *ctx, ltf_graph *g) {
    unsigned char *need = calloc((size_t)g->n + 1, 1);
    if (!need) return ltf_fail_oom(ctx, "graph pass", (size_t)g->n);
    for (int k = 0; k < g->noutputs; k++) need[g->outputs[k].node] = 1;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].alive && (is_stateful(g, &g->nodes[i]) || g->nodes[i].kind == LTF_NODE_PLACEHOLDER)) need[i] = 1;
    for (int i = g->n - 1; i >= 0; i--) {
        if (!need[i] || !g->nodes[i].alive) continue;
        for (int k = 0; k < g->nodes[i].nin; k++) need[g->nodes[i].in[k].node] = 1;
    }
    for (int i = 0; i < g->n; i++)
        if (!need[i]) g->nodes[i].alive = 0;
    free(need);
    return LTF_OK;
}
/* }==== */

/* {==== fold_constants */
ltf_status ltf_pass_fold_constants(ltf_ctx *ctx, ltf_graph *g) {
    for (int i = 0; i < g->n; i++) {
        ltf_node *nd = &g->nodes[i];
        if (!nd->alive || nd->kind != LTF_NODE_OP || nd->nout != 1 || is_stateful(g, nd)) continue;
        if (nd->op == LTF_OP_IDENTITY) continue;      /* outputs stay nodes */
        const ltf_op_def *def = ltf_op_get(nd->op);
        if (def->flags & LTF_OP_KERNEL_ALLOCATES) continue;
        int all_const = 1;
        for (int k = 0; k < nd->nin && all_const; k++)
            all_const = g->nodes[nd->in[k].node].kind == LTF_NODE_CONST;
        if (!all_const) continue;
        ltf_tensor *in[64];
        if (nd->nin > 64) continue;
        for (int k = 0; k < nd->nin; k++) in[k] = g->nodes[nd->in[k].node].value;
        ltf_tensor *out = NULL;
        int n = 0;
        /* evaluated eagerly: no graph is being built now */
        ltf_status st = ltf_op_run(ctx, nd->op, in, nd->nin, nd->attrs, &out, 1, &n);
        if (st != LTF_OK) return st;       /* the op would fail at every call */
        nd->kind = LTF_NODE_CONST;
        nd->value = out;
        free(nd->in);
        nd->in = NULL;
        nd->nin = 0;
        ltf_type_of(out, &nd->out[0]);
    }
    return LTF_OK;
}
/* }==== */

/* {==== cse */
static int same_node(const ltf_graph *g, const ltf_node *a, const ltf_node *b) {
    if (a->kind != b->kind) return 0;
    if (a->kind == LTF_NODE_CONST) return a->value == b->value;
    if (a->kind != LTF_NODE_OP || a->op != b->op || a->nin != b->nin || a->nout != b->nout) return 0;
    if (a->device != b->device || a->ordinal != b->ordinal) return 0;
    for (int k = 0; k < a->nin; k++)
        if (a->in[k].node != b->in[k].node || a->in[k].out != b->in[k].out) return 0;
    if ((a->attrs == NULL) != (b->attrs == NULL)) return 0;
    if (a->attrs && memcmp(a->attrs, b->attrs, sizeof *a->attrs) != 0) return 0;
    (void)g;
    return 1;
}

ltf_status ltf_pass_cse(ltf_ctx *ctx, ltf_graph *g) {
    int *repl = malloc(sizeof(int) * (size_t)(g->n + 1));
    if (!repl) return ltf_fail_oom(ctx, "graph pass", (size_t)g->n);
    for (int i = 0; i < g->n; i++) repl[i] = i;
    for (int i = 0; i < g->n; i++) {
        ltf_node *nd = &g->nodes[i];
        if (!nd->alive) continue;
        for (int k = 0; k < nd->nin; k++) nd->in[k].node = repl[nd->in[k].node];
        if (nd->kind != LTF_NODE_OP || is_stateful(g, nd) || nd->op == LTF_OP_IDENTITY) continue;
        for (int j = 0; j < i; j++) {
            if (!g->nodes[j].alive || repl[j] != j) continue;
            if (same_node(g, &g->nodes[j], nd)) {
                repl[i] = j;
                nd->alive = 0;
                break;
            }
        }
    }
    for (int k = 0; k < g->noutputs; k++) g->outputs[k].node = repl[g->outputs[k].node];
    free(repl);
    return LTF_OK;
}
/* }==== */

/* {==== fuse: groups of elementwise ops over one index space
** A group is an in-tree of elementwise ops (unary, binary, cast; any dtype
** the loops take) whose outputs all have the same element count: the
** group's index space. Its inputs from outside may be broadcast against
** the member that reads them (a [8] vector against [R,C,8]), and views
** (reshape, expand_dims, squeeze) on the way between members, or between an
** outside value and the member reading it, join the group as pure index
** remapping. A member other than the group's last (its sink) is read only
** by members of its group, so its value never leaves the fused loop. */
static int known_numel(const ltf_type *t, int64_t *n) {
    if (t->rank < 0) return 0;
    int64_t c = 1;
    for (int d = 0; d < t->rank; d++) {
        if (t->dims[d] < 0) return 0;
        c *= t->dims[d];
    }
    *n = c;
    return 1;
}

static const ltf_type *edge_type(const ltf_graph *g, ltf_edge e) { return &g->nodes[e.node].out[e.out]; }

/* A view that fusion turns into index remapping (the Identity ops at the
** outputs stay nodes). */
static int is_view(const ltf_node *nd) {
    return nd->alive && nd->kind == LTF_NODE_OP && nd->nin == 1 && nd->nout == 1 && nd->op != LTF_OP_IDENTITY &&
           (ltf_op_get(nd->op)->flags & LTF_OP_VIEW) && !(ltf_op_get(nd->op)->flags & LTF_OP_STATEFUL);
}

/* 'in' (known shape) broadcasts to 'out' (right-aligned, dims equal or 1). */
static int broadcasts_to(const ltf_type *in, const ltf_type *out) {
    if (in->rank < 0 || out->rank < 0 || in->rank > out->rank) return 0;
    for (int d = 0; d < in->rank; d++) {
        int64_t a = in->dims[d], b = out->dims[d + out->rank - in->rank];
        if (a < 0 || (a != b && a != 1)) return 0;
    }
    return 1;
}

/* Whether node 'nd' can be a computing member; its element count in '*numel'. */
static int fusable_op(const ltf_graph *g, const ltf_node *nd, int64_t *numel) {
    if (!nd->alive || nd->kind != LTF_NODE_OP || nd->nout != 1 || nd->nin < 1 || nd->nin > 2 || is_stateful(g, nd))
        return 0;
    const ltf_type *out = &nd->out[0];
    if (!known_numel(out, numel) || *numel == 0) return 0;
    ltf_dtype in_dt = edge_type(g, nd->in[0])->dtype;
    for (int k = 0; k < nd->nin; k++) {
        const ltf_type *t = edge_type(g, nd->in[k]);
        if (t->dtype != in_dt || !broadcasts_to(t, out)) return 0;
    }
    return ltf_cpu_elementwise_fusable(ltf_op_get(nd->op), in_dt, out->dtype);
}

typedef struct fuse_state {
    ltf_graph *g;
    int *uses;                /* edges reading each node (outputs count through their Identity) */
    int64_t *gnumel;          /* per group: its index space's element count */
    int *parent;              /* per group: the group it was merged into (union-find) */
    int ngroups, capgroups;
} fuse_state;

static int find_group(fuse_state *fs, int q) {
    while (q && fs->parent[q] != q) q = fs->parent[q] = fs->parent[fs->parent[q]];
    return q;
}

/* Follow input 'k' of node 'i' back through views read only on this path:
** the views are written to 'views' (count in '*nv'), the value they remap
** is returned. 'private' says whether that value is read only by node i. */
static int trace_input(const fuse_state *fs, int i, int k, int *views, int *nv, int *private) {
    const ltf_graph *g = fs->g;
    const ltf_node *nd = &g->nodes[i];
    int src = nd->in[k].node, edges = 0;
    for (int j = 0; j < nd->nin; j++) edges += nd->in[j].node == src;
    *nv = 0;
    int own = fs->uses[src] == edges;   /* every read of 'src' is by node i */
    int64_t n;
    int64_t m;
    while (own && is_view(&g->nodes[src]) && known_numel(&g->nodes[src].out[0], &n) &&
           known_numel(edge_type(g, g->nodes[src].in[0]), &m) && m == n && *nv < LTF_MAX_RANK * 4) {
        views[(*nv)++] = src;
        src = g->nodes[src].in[0].node;
        own = fs->uses[src] == 1;
    }
    *private = own;
    return src;
}

ltf_status ltf_pass_fuse_elementwise(ltf_ctx *ctx, ltf_graph *g) {
    fuse_state fs = { g, calloc((size_t)g->n + 1, sizeof(int)), NULL, NULL, 0, 0 };
    if (!fs.uses) return ltf_fail_oom(ctx, "graph pass", (size_t)g->n);
    for (int i = 0; i < g->n; i++) {
        g->nodes[i].fused = 0;
        if (!g->nodes[i].alive) continue;
        for (int k = 0; k < g->nodes[i].nin; k++) fs.uses[g->nodes[i].in[k].node]++;
    }
    for (int k = 0; k < g->noutputs; k++) fs.uses[g->outputs[k].node]++;
    ltf_status st = LTF_OK;
    for (int i = 0; i < g->n; i++) {
        ltf_node *nd = &g->nodes[i];
        int64_t numel;
        if (!fusable_op(g, nd, &numel)) continue;
        int views[2][LTF_MAX_RANK * 4], nv[2], root[2], priv[2];
        for (int k = 0; k < nd->nin; k++) root[k] = trace_input(&fs, i, k, views[k], &nv[k], &priv[k]);
        /* join the groups of inputs that only this node reads (merging
        ** them), except a group some input of which others read too */
        int group = 0;
        for (int k = nd->nin - 1; k >= 0; k--) {
            int q = find_group(&fs, g->nodes[root[k]].fused);
            if (!q || !priv[k] || fs.gnumel[q] != numel || is_view(&g->nodes[root[k]])) continue;
            int ok = 1;
            for (int j = 0; j < nd->nin; j++)
                if (find_group(&fs, g->nodes[root[j]].fused) == q && !priv[j]) ok = 0;
            if (!ok) continue;
            if (!group) group = q;
            else if (q != group) fs.parent[q] = group;
        }
        if (!group) {
            if (fs.ngroups + 1 >= fs.capgroups) {
                int cap = fs.capgroups ? fs.capgroups * 2 : 16;
                int64_t *v = realloc(fs.gnumel, sizeof *v * (size_t)cap);
                int *pa = v ? realloc(fs.parent, sizeof *pa * (size_t)cap) : NULL;
                if (v) fs.gnumel = v;
                if (!pa) {
                    st = ltf_fail_oom(ctx, "graph pass", 0);
                    break;
                }
                fs.parent = pa;
                fs.capgroups = cap;
            }
            group = ++fs.ngroups;
            fs.gnumel[group] = numel;
            fs.parent[group] = group;
        }
        nd->fused = group;
        /* views only this node reads become index remapping in the group */
        for (int k = 0; k < nd->nin; k++)
            for (int v = 0; v < nv[k]; v++) g->nodes[views[k][v]].fused = group;
    }
    if (st != LTF_OK) {
        for (int i = 0; i < g->n; i++) g->nodes[i].fused = 0;
        free(fs.uses);
        free(fs.gnumel);
        free(fs.parent);
        return st;
    }
    for (int i = 0; i < g->n; i++) g->nodes[i].fused = find_group(&fs, g->nodes[i].fused);
    int ng = fs.ngroups;
    int *sink = malloc(sizeof(int) * ((size_t)ng + 1));
    int *size = malloc(sizeof(int) * ((size_t)ng + 1));
    unsigned char *escapes = malloc((size_t)g->n + 1);
    if (!sink || !size || !escapes) {
        for (int i = 0; i < g->n; i++) g->nodes[i].fused = 0;
        free(sink);
        free(size);
        free(escapes);
        free(fs.uses);
        free(fs.gnumel);
        free(fs.parent);
        return ltf_fail_oom(ctx, "graph pass", 0);
    }
    /* a member other than its group's sink (last computing member) must be
    ** read only by members of its group; expel the others, repeatedly,
    ** since expelling one can expose another */
    for (int changed = 1; changed;) {
        changed = 0;
        for (int q = 0; q <= ng; q++) sink[q] = -1;
        for (int i = 0; i < g->n; i++)
            if (g->nodes[i].fused && !is_view(&g->nodes[i])) sink[g->nodes[i].fused] = i;
        memset(escapes, 0, (size_t)g->n + 1);
        for (int i = 0; i < g->n; i++) {
            const ltf_node *c = &g->nodes[i];
            if (!c->alive) continue;
            for (int k = 0; k < c->nin; k++) {
                const ltf_node *p = &g->nodes[c->in[k].node];
                if (p->fused && p->fused != c->fused) escapes[c->in[k].node] = 1;
            }
        }
        for (int k = 0; k < g->noutputs; k++) escapes[g->outputs[k].node] = 1;
        for (int i = 0; i < g->n; i++) {
            int q = g->nodes[i].fused;
            if (q && (sink[q] < i || (sink[q] != i && escapes[i]))) {
                g->nodes[i].fused = 0;
                changed = 1;
            }
        }
    }
    /* a group of one computing member is not worth it */
    memset(size, 0, sizeof(int) * ((size_t)ng + 1));
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].fused && !is_view(&g->nodes[i])) size[g->nodes[i].fused]++;
    for (int i = 0; i < g->n; i++)
        if (g->nodes[i].fused && size[g->nodes[i].fused] < 2) g->nodes[i].fused = 0;
    /* number the groups 1, 2, ... in program order of their first member */
    memset(sink, 0, sizeof(int) * ((size_t)ng + 1));
    int next_id = 0;
    for (int i = 0; i < g->n; i++) {
        int q = g->nodes[i].fused;
        if (!q) continue;
        if (!sink[q]) sink[q] = ++next_id;
        g->nodes[i].fused = sink[q];
    }
    free(sink);
    free(size);
    free(escapes);
    free(fs.uses);
    free(fs.gnumel);
    free(fs.parent);
    return LTF_OK;
}
/* }==== */

int ltf_graph_node_fused(const ltf_graph *g, int i) { return g->nodes[i].alive ? g->nodes[i].fused : 0; }
