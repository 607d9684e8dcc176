/*
** graph.c: tracing. While a graph is being built (ctx->graph), every op
** call with a symbolic input, or any op at all, goes through op.c's graph
** hook to ltf_graph_add_op: concrete inputs are captured as constants,
** inference runs on the partial types, and symbolic outputs come back.
** ltf_graph_end adds an Identity per output (as TensorFlow's FuncGraph),
** runs the passes in order, and builds the plan.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "graph.h"
#include "device.h"
#include "storage.h"
#include "functions.h"
#include "shape.h"

typedef struct name_count {
    char name[40];
    int count;
} name_count;

typedef struct name_table {
    name_count *v;
    int n, cap;
} name_table;

static void unique_name(ltf_graph *g, const char *base, char *out, size_t size) {
    name_table *t = g->name_counts;
    for (int i = 0; t && i < t->n; i++)
        if (strcmp(t->v[i].name, base) == 0) {
            snprintf(out, size, "%s_%d", base, ++t->v[i].count);
            return;
        }
    snprintf(out, size, "%s", base);
    if (!t) return;
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 16;
        name_count *v = realloc(t->v, sizeof *v * (size_t)cap);
        if (!v) return;
        t->v = v;
        t->cap = cap;
    }
    snprintf(t->v[t->n].name, sizeof t->v[t->n].name, "%s", base);
    t->v[t->n].count = 0;
    t->n++;
}

static void free_names(ltf_graph *g) {
    name_table *t = g->name_counts;
    if (t) {
        free(t->v);
        free(t);
    }
    g->name_counts = NULL;
}

ltf_graph *ltf_graph_current(const ltf_ctx *ctx) { return ctx->graph; }

/* Suspending keeps a reference, so the graph set aside cannot go while ops
** run eagerly; a trace begun and ended meanwhile nests under no graph. */
ltf_graph *ltf_graph_suspend(ltf_ctx *ctx) {
    ltf_graph *g = ctx->graph;
    if (!g) return NULL;
    ltf_graph_retain(g);
    ctx->graph = NULL;
    return g;
}

void ltf_graph_resume(ltf_ctx *ctx, ltf_graph *g) {
    if (!g) return;
    if (g->tracing && !ctx->graph) ctx->graph = g;
    ltf_graph_release(g);
}

ltf_graph *ltf_graph_begin(ltf_ctx *ctx, const char *name) {
    ltf_graph *g = calloc(1, sizeof *g);
    name_table *t = calloc(1, sizeof *t);
    if (!g || !t) {
        free(g);
        free(t);
        ltf_fail_oom(ctx, "graph", sizeof *g);
        return NULL;
    }
    g->refs = 1;
    g->ctx = ctx;
    ltf_ctx_retain(ctx);
    snprintf(g->name, sizeof g->name, "%s", name ? name : "graph");
    g->name_counts = t;
    g->outer = ltf_graph_retain(ctx->graph);
    g->tracing = 1;
    ctx->graph = g;
    ctx->graph_op = ltf_graph_add_op;
    ctx->graph_int_values = ltf_graph_int_values;
    return g;
}

ltf_graph *ltf_graph_begin_function(ltf_ctx *ctx, const char *name) {
    ltf_graph *g = ltf_graph_begin(ctx, name);
    if (g) g->capturing = 1;
    return g;
}

/* {==== The stack of traces
** ctx->graph is the innermost graph being traced; each tracing graph holds
** a reference to the one it is nested in. Ending or aborting a graph (or
** dropping its last reference) takes it off the stack, first aborting the
** traces nested inside it, so ctx->graph never points at a graph that is
** gone, and an inner trace never outlives its outer one on the stack. */
static void pop(ltf_ctx *ctx, ltf_graph *g) {
    if (!g->tracing) return;
    while (ctx->graph && ctx->graph != g) pop(ctx, ctx->graph);   /* nested traces go first */
    ltf_graph *outer = g->outer;
    ctx->graph = outer;
    g->outer = NULL;
    g->tracing = 0;
    free_names(g);
    ltf_graph_release(outer);     /* may drop an abandoned outer trace in turn */
}

void ltf_graph_abort(ltf_ctx *ctx, ltf_graph *g) {
    (void)ctx;
    if (g) pop(g->ctx, g);
}

ltf_graph *ltf_graph_retain(ltf_graph *g) {
    if (g) ltf_ref_inc(&g->refs, g->shared);
    return g;
}

void ltf_graph_release(ltf_graph *g) {
    if (!g || ltf_ref_dec(&g->refs, g->shared) > 0) return;
    ltf_ctx *ctx = g->ctx;
    pop(ctx, g);                  /* still tracing: innermost, since nested traces hold it */
    for (int i = 0; i < g->n; i++) {
        ltf_node *nd = &g->nodes[i];
        int64_t ids[2];
        int nids = nd->kind == LTF_NODE_OP ? ltf_fn_ids(nd->op, nd->attrs, ids) : 0;
        for (int k = 0; k < nids; k++) ltf_fn_unuse(ctx, ids[k]);
        free(nd->attrs);
        free(nd->in);
        free(nd->out);
        ltf_tensor_release(nd->value);
    }
    for (int k = 0; k < g->ncaptured; k++) ltf_tensor_release(g->captured[k]);
    free(g->captured);
    free(g->capnodes);
    free(g->nodes);
    free(g->inputs);
    free(g->outputs);
    free_names(g);
    ltf_plan_free(g->plan);
    free(g);
    ltf_ctx_release(ctx);
}
/* }==== */

/* {==== Building */
static ltf_node *new_node(ltf_ctx *ctx, ltf_graph *g, int kind, int nin, int nout, int *index) {
    if (g->n == g->cap) {
        int cap = g->cap ? g->cap * 2 : 64;
        ltf_node *v = realloc(g->nodes, sizeof *v * (size_t)cap);
        if (!v) {
            ltf_fail_oom(ctx, "graph node", sizeof *v);
            return NULL;
        }
        g->nodes = v;
        g->cap = cap;
    }
    ltf_node *nd = &g->nodes[g->n];
    memset(nd, 0, sizeof *nd);
    nd->kind = kind;
    nd->op = -1;
    nd->nin = nin;
    nd->nout = nout;
    nd->alive = 1;
    nd->device = -1;
    nd->in = nin ? calloc((size_t)nin, sizeof *nd->in) : NULL;
    nd->out = nout ? calloc((size_t)nout, sizeof *nd->out) : NULL;
    if ((nin && !nd->in) || (nout && !nd->out)) {
        free(nd->in);
        free(nd->out);
        ltf_fail_oom(ctx, "graph node", 0);
        return NULL;
    }
    *index = g->n++;
    return nd;
}

static ltf_tensor *symbolic_out(ltf_ctx *ctx, ltf_graph *g, int node, int k) {
    ltf_type *ty = &g->nodes[node].out[k];
    ltf_tensor *t = ltf_tensor_symbolic(ctx, ty->dtype, ty->rank, ty->dims);
    if (!t) return NULL;
    t->graph = ltf_graph_retain(g);
    t->node = node;
    t->out_index = k;
    return t;
}

static ltf_tensor *add_placeholder(ltf_ctx *ctx, ltf_graph *g, ltf_dtype dt, int rank, const int64_t *dims,
                                   const char *name, int captured) {
    if (!g->tracing) {
        ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "placeholder: graph '%s' is not being traced (%s)", g->name,
                 g->finished ? "it is finished" : "it was aborted");
        return NULL;
    }
    if (ltf_shape_check(ctx, "placeholder", dt, rank, dims) != LTF_OK) return NULL;
    if (g->ncaptured > 0 && !captured) {
        /* captured values are the last inputs: explicit ones come first */
        ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION,
                 "placeholder: graph '%s' has captured outer values; make its placeholders first", g->name);
        return NULL;
    }
    if (g->ninputs == g->capinputs) {
        int cap = g->capinputs ? g->capinputs * 2 : 8;
        int *v = realloc(g->inputs, sizeof *v * (size_t)cap);
        if (!v) {
            ltf_fail_oom(ctx, "graph", 0);
            return NULL;
        }
        g->inputs = v;
        g->capinputs = cap;
    }
    int idx;
    ltf_node *nd = new_node(ctx, g, LTF_NODE_PLACEHOLDER, 0, 1, &idx);
    if (!nd) return NULL;
    nd->out[0].dtype = dt;
    nd->out[0].rank = rank;
    for (int i = 0; i < rank; i++) nd->out[0].dims[i] = dims[i];
    unique_name(g, name && name[0] ? name : "input", nd->name, sizeof nd->name);
    g->inputs[g->ninputs++] = idx;
    return symbolic_out(ctx, g, idx, 0);
}

ltf_tensor *ltf_graph_placeholder(ltf_ctx *ctx, ltf_graph *g, ltf_dtype dt, int rank, const int64_t *dims,
                                  const char *name) {
    return add_placeholder(ctx, g, dt, rank, dims, name, 0);
}

/* Whether symbolic 't' belongs to a trace 'g' is nested in (through
** function graphs only: a tf.fn traced inside another does not capture). */
static int outer_value(const ltf_graph *g, const ltf_tensor *t) {
    for (const ltf_graph *o = g; o->capturing && o->outer; o = o->outer)
        if (t->graph == o->outer) return 1;
    return 0;
}

/* The placeholder standing for outer symbolic tensor 't' in function graph
** 'g' (one per tensor); -1 on failure. */
static int capture_outer(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *t) {
    for (int k = 0; k < g->ncaptured; k++)
        if (g->captured[k]->graph == t->graph && g->captured[k]->node == t->node &&
            g->captured[k]->out_index == t->out_index)
            return g->capnodes[k];
    if (g->ncaptured == g->capcaptured) {
        int cap = g->capcaptured ? g->capcaptured * 2 : 8;
        ltf_tensor **v = realloc(g->captured, sizeof *v * (size_t)cap);
        if (v) g->captured = v;
        int *w = v ? realloc(g->capnodes, sizeof *w * (size_t)cap) : NULL;
        if (!v || !w) {
            ltf_fail_oom(ctx, "graph", 0);
            return -1;
        }
        g->capnodes = w;
        g->capcaptured = cap;
    }
    char name[48];
    snprintf(name, sizeof name, "capture_%.38s", t->graph->nodes[t->node].name);
    ltf_tensor *p = add_placeholder(ctx, g, t->dtype, t->rank, t->dims, name, 1);
    if (!p) return -1;
    int idx = p->node;
    ltf_tensor_release(p);          /* the node stays; the graph holds it */
    g->capnodes[g->ncaptured] = idx;
    g->captured[g->ncaptured++] = ltf_tensor_retain(t);
    return idx;
}

/* The constant node holding concrete tensor 't' (one per tensor). */
static int capture(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *t) {
    for (int i = g->n - 1; i >= 0; i--)
        if (g->nodes[i].kind == LTF_NODE_CONST && g->nodes[i].value->id == t->id) return i;
    int idx;
    ltf_node *nd = new_node(ctx, g, LTF_NODE_CONST, 0, 1, &idx);
    if (!nd) return -1;
    nd->value = ltf_tensor_retain(t);
    ltf_type_of(t, &nd->out[0]);
    unique_name(g, t->dtype == LTF_DTYPE_RESOURCE ? "resource" : "Const", nd->name, sizeof nd->name);
    return idx;
}

/* A variable handle (a concrete resource tensor) used in function graph 'g'
** of a control-flow op: a constant of the outermost trace, passed in as a
** captured input through each function graph between (the node standing
** for it in 'g'), so that the control-flow op takes the handle as an input
** (its gradient reaches the variable, as TensorFlow's captured resources).
** -1 on failure. */
static int capture_handle(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *t) {
    if (!g->capturing || !g->outer) return capture(ctx, g, t);
    int oi = capture_handle(ctx, g->outer, t);
    if (oi < 0) return -1;
    ltf_tensor *sym = symbolic_out(ctx, g->outer, oi, 0);
    if (!sym) return -1;
    int idx = capture_outer(ctx, g, sym);
    ltf_tensor_release(sym);
    return idx;
}

/* The node's device: the scope active while tracing, else the first device
** other than the host among its inputs (a captured tensor there, a variable
** whose value lives there, a node placed there); -1 leaves it to the inputs
** at run time (docs/devices.md). */
static void place_node(ltf_ctx *ctx, const ltf_graph *g, ltf_node *nd) {
    if (ctx->scope_type >= 0) {
        nd->device = ctx->scope_type;
        nd->ordinal = ctx->scope_ordinal;
        return;
    }
    for (int i = 0; i < nd->nin; i++) {
        const ltf_node *src = &g->nodes[nd->in[i].node];
        int dev = src->device, ord = src->ordinal;
        if (src->kind == LTF_NODE_CONST && src->value && src->value->storage) {
            dev = src->value->dtype == LTF_DTYPE_RESOURCE ? ltf_device_of_handle(src->value, &ord)
                                                          : (int)src->value->storage->device;
            if (src->value->dtype != LTF_DTYPE_RESOURCE) ord = src->value->storage->ordinal;
        }
        if (dev > LTF_DEVICE_CPU) {
            nd->device = dev;
            nd->ordinal = ord;
            return;
        }
    }
}

/* {==== What tracing knows of an int32/int64 vector's values (shapes given as tensors) */
/* The values of output 'o' of node 'i' of 'g' as far as tracing knows them
** (TensorFlow's constant_value_as_shape, for the cheap cases): constants,
** tf.shape of a partly known shape, scalars picked from those with x[i],
** stacks and concats of them. '*n' is the length (-1 unknown); an unknown
** entry is LTF_UNKNOWN_VALUE. */
static void sv_node(const ltf_graph *g, int i, int o, int depth, int64_t *v, int *n);

/* A scalar's value (LTF_UNKNOWN_VALUE when not known) */
static int64_t sv_scalar(const ltf_graph *g, ltf_edge e, int depth) {
    int64_t v[LTF_MAX_RANK + 1];
    int n;
    const ltf_type *ty = &g->nodes[e.node].out[e.out];
    if (ty->rank != 0) return LTF_UNKNOWN_VALUE;
    sv_node(g, e.node, e.out, depth + 1, v, &n);
    return n == 0 ? v[0] : LTF_UNKNOWN_VALUE;
}

static void sv_node(const ltf_graph *g, int i, int o, int depth, int64_t *v, int *n) {
    const ltf_node *nd = &g->nodes[i];
    const ltf_type *ty = &nd->out[o];
    *n = -1;
    if (depth > 8 || ty->rank > 1 || (ty->dtype != LTF_DTYPE_INT32 && ty->dtype != LTF_DTYPE_INT64)) return;
    int len = ty->rank == 0 ? 0 : (ty->dims[0] < 0 || ty->dims[0] > LTF_MAX_RANK ? -1 : (int)ty->dims[0]);
    if (len < 0) return;
    int m = len ? len : 1;
    for (int k = 0; k < m; k++) v[k] = LTF_UNKNOWN_VALUE;
    *n = len;
    if (nd->kind == LTF_NODE_CONST && nd->value) {
        const ltf_tensor *t = nd->value;
        if (!t->storage || t->storage->device != LTF_DEVICE_CPU || t->numel != m) return;
        for (int k = 0; k < m; k++)
            v[k] = t->dtype == LTF_DTYPE_INT32 ? ((const int32_t *)LTF_DATA(t))[k] : ((const int64_t *)LTF_DATA(t))[k];
        return;
    }
    if (nd->kind != LTF_NODE_OP) return;
    const ltf_attrs *a = nd->attrs;
    switch (nd->op) {
    case LTF_OP_SHAPE: {
        const ltf_type *x = &g->nodes[nd->in[0].node].out[nd->in[0].out];
        for (int k = 0; k < len && x->rank == len; k++) v[k] = x->dims[k] >= 0 ? x->dims[k] : LTF_UNKNOWN_VALUE;
        return;
    }
    case LTF_OP_STACK:
        if (len != nd->nin || (a && a->i[0] != 0)) return;
        for (int k = 0; k < len; k++) v[k] = sv_scalar(g, nd->in[k], depth);
        return;
    case LTF_OP_CONCAT: {
        if (a && a->i[0] != 0 && a->i[0] != -1) return;
        int at = 0;
        for (int k = 0; k < nd->nin; k++) {
            int64_t w[LTF_MAX_RANK + 1];
            int nw;
            sv_node(g, nd->in[k].node, nd->in[k].out, depth + 1, w, &nw);
            if (nw < 0 || at + nw > len) {   /* an unknown part: the rest stays unknown */
                for (int q = at; q < len; q++) v[q] = LTF_UNKNOWN_VALUE;
                return;
            }
            memcpy(v + at, w, sizeof(int64_t) * (size_t)nw);
            at += nw;
        }
        return;
    }
    case LTF_OP_STRIDED_SLICE: {   /* x[i] of a vector: one shrunk index */
        if (len != 0 || !a || a->nints != 2 || a->i[2] != 1 || a->i[3] != 0) return;
        int64_t w[LTF_MAX_RANK + 1];
        int nw;
        sv_node(g, nd->in[0].node, nd->in[0].out, depth + 1, w, &nw);
        int64_t k = a->ints[0] < 0 ? a->ints[0] + nw : a->ints[0];
        if (nw > 0 && k >= 0 && k < nw) v[0] = w[k];
        return;
    }
    default:
        return;
    }
}

void ltf_graph_int_values(const ltf_tensor *t, int64_t *v, int *n) {
    *n = -1;
    if (t->graph) sv_node(t->graph, t->node, t->out_index, 0, v, n);
}
/* }==== */

ltf_status ltf_graph_add_op(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *const *in, int nin, const ltf_attrs *a,
                            ltf_tensor **out, int maxout, int *nout) {
    ltf_graph *g = ctx->graph;
    const ltf_op_def *def = ltf_op_get(op);
    *nout = 0;
    if (!g)
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION,
                        "%s: a symbolic tensor from a finished trace was used outside it (keep tensors "
                        "created inside a tf.fn inside it, or return them)", def->name);
    for (int i = 0; i < nin; i++)
        if (!in[i]->storage && in[i]->graph != g && !outer_value(g, in[i]))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: input %d is a symbolic tensor of another trace (graph '%s'); pass it as an "
                            "argument instead", def->name, i + 1, in[i]->graph ? in[i]->graph->name : "?");
    ltf_type stack_types[8];
    ltf_type *types = maxout <= 8 ? stack_types : malloc(sizeof(ltf_type) * (size_t)maxout);
    if (!types) return ltf_fail_oom(ctx, "graph", 0);
    int edge_stack[16];
    int *edges = edge_stack;
    int n = 0;
    ltf_status st = ltf_op_infer(ctx, def, in, nin, a, types, maxout, &n);
    if (st != LTF_OK) goto done;
    edges = nin <= 16 ? edge_stack : malloc(sizeof(int) * (size_t)nin);
    if (!edges) {
        st = ltf_fail_oom(ctx, "graph", 0);
        goto done;
    }
    for (int i = 0; i < nin; i++) {
        /* a variable handle read in a control-flow function stays a constant
        ** there (ops infer from its variable) and is also a captured input of
        ** the control-flow op, so that tapes and gradients see the op use it */
        if (in[i]->storage && in[i]->dtype == LTF_DTYPE_RESOURCE && g->capturing && g->outer &&
            capture_handle(ctx, g, in[i]) < 0) {
            st = ctx->last_status;
            goto done;
        }
        edges[i] = in[i]->storage ? capture(ctx, g, in[i])
                 : in[i]->graph != g ? capture_outer(ctx, g, in[i]) : in[i]->node;
        if (edges[i] < 0) {
            st = ctx->last_status;
            goto done;
        }
    }
    int idx;
    ltf_node *nd = new_node(ctx, g, LTF_NODE_OP, nin, n, &idx);
    if (!nd) {
        st = ctx->last_status;
        goto done;
    }
    nd->op = op;
    for (int i = 0; i < nin; i++) {
        nd->in[i].node = edges[i];
        nd->in[i].out = in[i]->storage || in[i]->graph != g ? 0 : in[i]->out_index;
    }
    place_node(ctx, g, nd);
    for (int k = 0; k < n; k++) nd->out[k] = types[k];
    if (a) {
        nd->attrs = malloc(sizeof *a);
        if (!nd->attrs) {
            st = ltf_fail_oom(ctx, "graph", 0);
            goto done;
        }
        memcpy(nd->attrs, a, sizeof *a);
        int64_t ids[2];   /* the functions a control-flow node runs live as long as it */
        int nids = ltf_fn_ids(op, a, ids);
        for (int k = 0; k < nids; k++) ltf_fn_use(ctx, ids[k]);
    }
    unique_name(g, def->name, nd->name, sizeof nd->name);
    for (int k = 0; k < n; k++) {
        out[k] = symbolic_out(ctx, g, idx, k);
        if (!out[k]) {
            for (int j = 0; j < k; j++) {
                ltf_tensor_release(out[j]);
                out[j] = NULL;
            }
            st = ctx->last_status;
            goto done;
        }
    }
    *nout = n;
done:
    if (types != stack_types) free(types);
    if (edges && edges != edge_stack) free(edges);
    return st;
}
/* }==== */

ltf_status ltf_graph_end(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *const *outs, int nouts) {
    ltf_status st = LTF_OK;
    if (!g->tracing)
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "graph_end: graph '%s' is not being traced (%s)", g->name,
                        g->finished ? "it is finished" : "it was aborted");
    if (!ctx->graph)   /* set aside by ltf_graph_suspend (an init scope not closed) */
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION,
                        "graph_end: graph '%s' is set aside by an init_scope that was not closed", g->name);
    if (ctx->graph != g)
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION,
                        "graph_end: graph '%s' is not the innermost trace ('%s' is being traced inside it)", g->name,
                        ctx->graph->name);
    for (int k = 0; k < nouts || nouts < 0; k++)
        if (nouts < 0 || !outs[k]) {
            pop(ctx, g);
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "graph_end: output %d is missing", nouts < 0 ? nouts : k + 1);
        }
    g->outputs = nouts ? calloc((size_t)nouts, sizeof *g->outputs) : NULL;
    if (nouts && !g->outputs) {
        pop(ctx, g);
        return ltf_fail_oom(ctx, "graph", 0);
    }
    for (int k = 0; k < nouts; k++) {
        ltf_tensor *t = outs[k];
        if (!t->storage && t->graph != g && !outer_value(g, t)) {
            pop(ctx, g);
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "tf.fn: output %d is a symbolic tensor of another trace", k + 1);
        }
        int outer = !t->storage && t->graph != g;
        int src = t->storage ? capture(ctx, g, t) : outer ? capture_outer(ctx, g, t) : t->node;
        if (src < 0) {
            pop(ctx, g);
            return ctx->last_status;
        }
        /* an Identity per output, as TensorFlow's function graphs */
        int idx;
        ltf_node *nd = new_node(ctx, g, LTF_NODE_OP, 1, 1, &idx);
        if (!nd) {
            pop(ctx, g);
            return ctx->last_status;
        }
        nd->op = LTF_OP_IDENTITY;
        nd->in[0].node = src;
        nd->in[0].out = t->storage || outer ? 0 : t->out_index;
        nd->out[0] = g->nodes[src].out[nd->in[0].out];
        unique_name(g, "Identity", nd->name, sizeof nd->name);
        g->outputs[k].node = idx;
        g->outputs[k].out = 0;
    }
    g->noutputs = nouts;
    pop(ctx, g);
    g->finished = 1;
    /* the passes run ops (constant folding) that must execute now, not add
    ** nodes to an outer graph still being traced: suspend it meanwhile */
    ltf_graph *outer = ctx->graph;
    ctx->graph = NULL;
    /* the passes, in order (each a unit of passes.c) */
    if ((st = ltf_pass_prune(ctx, g)) != LTF_OK) goto done;
    if ((st = ltf_pass_fold_constants(ctx, g)) != LTF_OK) goto done;
    if ((st = ltf_pass_cse(ctx, g)) != LTF_OK) goto done;
    if ((st = ltf_pass_prune(ctx, g)) != LTF_OK) goto done;
    if ((st = ltf_pass_fuse_elementwise(ctx, g)) != LTF_OK) goto done;
    st = ltf_plan_build(ctx, g);
done:
    ctx->graph = outer;
    return st;
}

int ltf_graph_run_mode(const ltf_ctx *ctx) {
    if (ctx->graph) return LTF_GRAPH_RUN_TRACE;
    if (ctx->tape_record) return LTF_GRAPH_RUN_TAPE;
    return LTF_GRAPH_RUN_PLAN;
}

/* {==== Lifting (tf.Variable initial values computed inside a trace)
** The value of symbolic 't' is computed now from the nodes it depends on,
** which must not include a placeholder. The graph keeps its nodes, except
** that stateful nodes which read no variable (random ops) become constants
** holding the value computed here: an initializer's random draw is not
** repeated at every call, and stays equal to the variable's initial value. */
ltf_status ltf_graph_lift(ltf_ctx *ctx, ltf_tensor *t, ltf_tensor **out) {
    *out = NULL;
    if (t->storage) {
        *out = ltf_tensor_retain(t);
        return LTF_OK;
    }
    ltf_graph *g = t->graph;
    if (!g || !g->tracing) {
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "lift: the tensor belongs to a finished trace");
    }
    int last = t->node;
    unsigned char *need = calloc((size_t)last + 1, 2);
    ltf_tensor ***vals = calloc((size_t)last + 1, sizeof *vals);
    ltf_status st = LTF_OK;
    if (!need || !vals) {
        free(need);
        free(vals);
        return ltf_fail_oom(ctx, "lift", 0);
    }
    unsigned char *dyn = need + last + 1;     /* reads a variable, itself or upstream */
    need[last] = 1;
    for (int i = last; i >= 0; i--) {
        if (!need[i]) continue;
        const ltf_node *nd = &g->nodes[i];
        if (nd->kind == LTF_NODE_PLACEHOLDER) {
            st = ltf_fail(ctx, LTF_ERR_VALUE,
                     "lift: the value depends on '%s', an input of the traced function '%s'; compute it from "
                     "values outside the function", nd->name, g->name);
            goto done;
        }
        for (int k = 0; k < nd->nin; k++) need[nd->in[k].node] = 1;
    }
    ltf_graph *saved = ctx->graph;
    ctx->graph = NULL;
    ltf_ctx_pause_tapes(ctx, 1);
    for (int i = 0; i <= last && st == LTF_OK; i++) {
        if (!need[i]) continue;
        ltf_node *nd = &g->nodes[i];
        vals[i] = calloc((size_t)nd->nout + 1, sizeof(ltf_tensor *));
        if (!vals[i]) {
            st = ltf_fail_oom(ctx, "lift", 0);
            break;
        }
        if (nd->kind == LTF_NODE_CONST) {
            vals[i][0] = ltf_tensor_retain(nd->value);
            continue;
        }
        ltf_tensor *in_stack[16];
        ltf_tensor **in = nd->nin <= 16 ? in_stack : malloc(sizeof(ltf_tensor *) * (size_t)nd->nin);
        if (!in) {
            st = ltf_fail_oom(ctx, "lift", 0);
            break;
        }
        dyn[i] = (ltf_op_get(nd->op)->flags & LTF_OP_READS_VARIABLE) != 0;
        for (int k = 0; k < nd->nin; k++) {
            in[k] = vals[nd->in[k].node][nd->in[k].out];
            dyn[i] |= dyn[nd->in[k].node];
        }
        int n = 0;
        int scope = ctx->scope_type, scope_ordinal = ctx->scope_ordinal;
        if (nd->device >= 0) {   /* where it was traced, as plan.c runs placed nodes */
            ctx->scope_type = nd->device;
            ctx->scope_ordinal = nd->ordinal;
        }
        st = ltf_op_run(ctx, nd->op, in, nd->nin, nd->attrs, vals[i], nd->nout, &n);
        ctx->scope_type = scope;
        ctx->scope_ordinal = scope_ordinal;
        if (in != in_stack) free(in);
    }
    ltf_ctx_pause_tapes(ctx, 0);
    ctx->graph = saved;
    if (st != LTF_OK) goto done;
    *out = ltf_tensor_retain(vals[last][t->out_index]);
    for (int i = 0; i <= last; i++) {
        ltf_node *nd = &g->nodes[i];
        if (!need[i] || nd->kind != LTF_NODE_OP || nd->nout != 1 || dyn[i] ||
            !ltf_op_node_stateful(ctx, nd->op, nd->attrs))
            continue;
        nd->kind = LTF_NODE_CONST;
        nd->value = vals[i][0];
        vals[i][0] = NULL;
        free(nd->in);
        nd->in = NULL;
        nd->nin = 0;
    }
done:
    for (int i = 0; i <= last; i++) {
        if (!vals[i]) continue;
        for (int k = 0; k < g->nodes[i].nout; k++) ltf_tensor_release(vals[i][k]);
        free(vals[i]);
    }
    free(vals);
    free(need);
    return st;
}
/* }==== */

ltf_status ltf_graph_run(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *const *inputs, int ninputs, ltf_tensor **outputs,
                         int maxout, int *noutputs) {
    *noutputs = 0;
    if (!g->finished || !g->plan)
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "%s: the graph is not finished", g->name);
    if (ninputs != g->ninputs)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: expected %d inputs, got %d", g->name, g->ninputs, ninputs);
    if (maxout < g->noutputs)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: room for %d outputs, the graph has %d", g->name, maxout,
                        g->noutputs);
    for (int i = 0; i < ninputs; i++) {
        const ltf_type *ty = &g->nodes[g->inputs[i]].out[0];
        const ltf_tensor *x = inputs[i];
        const char *name = g->nodes[g->inputs[i]].name;
        /* while another graph is traced the call is inlined into it, and its
        ** inputs may be symbolic (partial types: unknowns are compatible) */
        if (!x || !(x->storage || ctx->graph))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: input %d ('%s') is %s", g->name, i + 1, name,
                            x ? "a symbolic tensor of another graph" : "NULL");
        if (x->dtype != ty->dtype)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: input %d ('%s') was expected to be a %s tensor but is "
                            "a %s tensor", g->name, i + 1, name, ltf_dtype_name(ty->dtype), ltf_dtype_name(x->dtype));
        int ok = ty->rank < 0 || x->rank < 0 || ty->rank == x->rank;
        for (int d = 0; ok && ty->rank >= 0 && x->rank >= 0 && d < ty->rank; d++)
            ok = ty->dims[d] < 0 || x->dims[d] < 0 || ty->dims[d] == x->dims[d];
        if (!ok) {
            char want[LTF_SHAPE_BUF], got[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: input %d ('%s') was expected to have shape %s but has "
                            "shape %s", g->name, i + 1, name, ltf_shape_str(ty->rank, ty->dims, want, sizeof want),
                            ltf_shape_str(x->rank, x->dims, got, sizeof got));
        }
    }
    ltf_status st = ltf_plan_run(ctx, g, inputs, outputs);
    if (st == LTF_OK) *noutputs = g->noutputs;
    return st;
}

ltf_status ltf_graph_share(ltf_ctx *ctx, ltf_graph *g) {
    if (g->shared) return LTF_OK;
    if (!g->finished || !g->plan)
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "graph_share: graph '%s' is not finished", g->name);
    for (int i = 0; i < g->n; i++) {
        const ltf_node *nd = &g->nodes[i];
        if (nd->kind == LTF_NODE_CONST ? nd->value->dtype == LTF_DTYPE_RESOURCE
                                       : nd->alive && ltf_graph_node_is_stateful(g, i))
            return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "graph_share: graph '%s' has stateful node '%s' (%s): "
                            "its state cannot be shared between threads", g->name, nd->name, ltf_graph_node_op(g, i));
        int64_t ids[2];   /* its functions are named in the owner context's table */
        if (nd->kind == LTF_NODE_OP && nd->alive && ltf_fn_ids(nd->op, nd->attrs, ids) > 0)
            return ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "graph_share: graph '%s' has control-flow node '%s' (%s), "
                            "whose functions belong to one context", g->name, nd->name, ltf_graph_node_op(g, i));
    }
    /* constants are checked first, then shared: a refusal leaves nothing half done */
    for (int i = 0; i < g->n; i++) {
        const ltf_node *nd = &g->nodes[i];
        if (nd->kind == LTF_NODE_CONST && nd->value->dtype == LTF_DTYPE_STRING)
            return ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "graph_share: graph '%s' captures string constant '%s', "
                            "which cannot be shared", g->name, nd->name);
    }
    for (int i = 0; i < g->n; i++) {
        ltf_node *nd = &g->nodes[i];
        if (nd->kind != LTF_NODE_CONST) continue;
        ltf_status st = ltf_tensor_share(ctx, nd->value);
        if (st != LTF_OK) return st;
    }
    g->shared = 1;
    return LTF_OK;
}

int ltf_graph_is_shared(const ltf_graph *g) { return g->shared; }
ltf_ctx *ltf_graph_context(const ltf_graph *g) { return g->ctx; }

/* {==== Reading */
int ltf_tensor_node(const ltf_tensor *t, ltf_graph **g, int *out_index) {
    if (t->storage || !t->graph) return -1;
    *g = t->graph;
    *out_index = t->out_index;
    return t->node;
}

int ltf_graph_num_nodes(const ltf_graph *g) { return g->n; }
const char *ltf_graph_node_name(const ltf_graph *g, int i) { return g->nodes[i].name; }
const char *ltf_graph_node_op(const ltf_graph *g, int i) {
    const ltf_node *nd = &g->nodes[i];
    if (nd->kind == LTF_NODE_PLACEHOLDER) return "Placeholder";
    if (nd->kind == LTF_NODE_CONST) return "Const";
    return ltf_op_name(nd->op);
}
int ltf_graph_node_live(const ltf_graph *g, int i) { return g->nodes[i].alive; }
int ltf_graph_node_is_stateful(const ltf_graph *g, int i) {
    const ltf_node *nd = &g->nodes[i];
    return nd->kind == LTF_NODE_OP && ltf_op_node_stateful(g->ctx, nd->op, nd->attrs);
}
ltf_tensor *ltf_graph_node_value(const ltf_graph *g, int i) {
    return g->nodes[i].kind == LTF_NODE_CONST ? g->nodes[i].value : NULL;
}
const ltf_attrs *ltf_graph_node_attrs(const ltf_graph *g, int i) {
    return g->nodes[i].kind == LTF_NODE_OP ? g->nodes[i].attrs : NULL;
}
int ltf_graph_node_num_inputs(const ltf_graph *g, int i) { return g->nodes[i].nin; }
int ltf_graph_node_input(const ltf_graph *g, int i, int k, int *out) {
    *out = g->nodes[i].in[k].out;
    return g->nodes[i].in[k].node;
}
int ltf_graph_node_num_outputs(const ltf_graph *g, int i) { return g->nodes[i].nout; }
int ltf_graph_node_output_type(const ltf_graph *g, int i, int k, ltf_dtype *dt, int64_t *dims) {
    const ltf_type *ty = &g->nodes[i].out[k];
    *dt = ty->dtype;
    for (int d = 0; d < ty->rank; d++) dims[d] = ty->dims[d];
    return ty->rank;
}
int ltf_graph_num_inputs(const ltf_graph *g) { return g->ninputs; }
int ltf_graph_num_outputs(const ltf_graph *g) { return g->noutputs; }
int ltf_graph_output(const ltf_graph *g, int k, int *out) {
    *out = g->outputs[k].out;
    return g->outputs[k].node;
}
/* }==== */

int ltf_graph_node_device(const ltf_graph *g, int i, int *ordinal) {
    *ordinal = 0;
    if (i < 0 || i >= g->n) return -1;
    const ltf_node *nd = &g->nodes[i];
    if (nd->kind == LTF_NODE_CONST && nd->value && nd->value->storage && nd->value->dtype != LTF_DTYPE_RESOURCE) {
        *ordinal = nd->value->storage->ordinal;
        return (int)nd->value->storage->device;
    }
    *ordinal = nd->ordinal;
    return nd->device;
}
