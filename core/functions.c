/*
** functions.c: the context's function table (see functions.h).
*/
#include <stdlib.h>
#include <string.h>
#include "functions.h"

typedef struct fn_entry {
    ltf_graph *g;             /* NULL: free slot */
    int64_t uses;
} fn_entry;

struct ltf_fn_table {
    fn_entry *v;
    int n, cap;
};

/* The table itself, with the context (its entries are gone by then: each
** graph holds the context); registered when the table is made. */
static void table_free(ltf_ctx *ctx, void *data) {
    (void)data;
    struct ltf_fn_table *t = ctx->fns;
    if (!t) return;
    free(t->v);
    free(t);
    ctx->fns = NULL;
}

int ltf_fn_add(ltf_ctx *ctx, ltf_graph *g) {
    if (!g || !g->finished || !g->plan) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "function: the graph is not finished");
        return 0;
    }
    struct ltf_fn_table *t = ctx->fns;
    if (!t) {
        if (ltf_ctx_hook_add(ctx, LTF_CTX_EVENT_FREE, table_free, NULL) != LTF_OK) return 0;
        if (!(t = ctx->fns = calloc(1, sizeof *t))) {
            ltf_fail_oom(ctx, "function table", sizeof *t);
            return 0;
        }
    }
    int slot = -1;
    for (int i = 0; i < t->n && slot < 0; i++)
        if (!t->v[i].g) slot = i;
    if (slot < 0) {
        if (t->n == t->cap) {
            int cap = t->cap ? t->cap * 2 : 16;
            fn_entry *v = realloc(t->v, sizeof *v * (size_t)cap);
            if (!v) {
                ltf_fail_oom(ctx, "function table", sizeof *v * (size_t)cap);
                return 0;
            }
            t->v = v;
            t->cap = cap;
        }
        slot = t->n++;
    }
    t->v[slot].g = ltf_graph_retain(g);
    t->v[slot].uses = 1;
    /* the outer values it captured were read by the caller to become the
    ** op's inputs; kept, they would hold the enclosing trace's graph, which
    ** holds this function through its node: a cycle */
    for (int k = 0; k < g->ncaptured; k++) {
        ltf_tensor_release(g->captured[k]);
        g->captured[k] = NULL;
    }
    return slot + 1;
}

ltf_graph *ltf_fn_get(ltf_ctx *ctx, int64_t id, const char *op) {
    struct ltf_fn_table *t = ctx->fns;
    if (t && id >= 1 && id <= t->n && t->v[id - 1].g) return t->v[id - 1].g;
    ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: no function with id %lld in this context", op, (long long)id);
    return NULL;
}

void ltf_fn_use(ltf_ctx *ctx, int64_t id) {
    struct ltf_fn_table *t = ctx->fns;
    if (t && id >= 1 && id <= t->n && t->v[id - 1].g) t->v[id - 1].uses++;
}

void ltf_fn_unuse(ltf_ctx *ctx, int64_t id) {
    struct ltf_fn_table *t = ctx->fns;
    if (!t || id < 1 || id > t->n || !t->v[id - 1].g) return;
    fn_entry *e = &t->v[id - 1];
    if (--e->uses > 0) return;
    ltf_graph *g = e->g;
    e->g = NULL;
    ltf_graph_release(g);         /* may release other functions in turn (its nodes) */
}

int ltf_fn_ids(ltf_op_id op, const ltf_attrs *a, int64_t *ids) {
    if (a && op == LTF_OP_CUSTOM_GRADIENT) {
        ids[0] = a->i[0];
        return 1;
    }
    if (!a || (op != LTF_OP_COND && op != LTF_OP_WHILE)) return 0;
    ids[0] = a->i[0];
    ids[1] = a->i[1];
    return 2;
}

int ltf_op_node_stateful(ltf_ctx *ctx, ltf_op_id op, const ltf_attrs *a) {
    const ltf_op_def *def = ltf_op_get(op);
    if (def && (def->flags & LTF_OP_STATEFUL)) return 1;
    if (op == LTF_OP_CUSTOM_GRADIENT) return 0;   /* its function runs only for a gradient */
    int64_t ids[2];
    int n = ltf_fn_ids(op, a, ids);
    struct ltf_fn_table *t = ctx->fns;
    for (int k = 0; k < n; k++) {
        if (!t || ids[k] < 1 || ids[k] > t->n || !t->v[ids[k] - 1].g) continue;
        const ltf_graph *g = t->v[ids[k] - 1].g;
        for (int i = 0; i < g->n; i++) {
            const ltf_node *nd = &g->nodes[i];
            if (nd->alive && nd->kind == LTF_NODE_OP && ltf_op_node_stateful(ctx, nd->op, nd->attrs)) return 1;
        }
    }
    return 0;
}

/* {==== Public calls (ltf.h) */
int ltf_graph_num_captured(const ltf_graph *g) { return g->ncaptured; }
ltf_tensor *ltf_graph_captured(const ltf_graph *g, int k) {
    return k >= 0 && k < g->ncaptured ? g->captured[k] : NULL;
}

ltf_graph *ltf_graph_node_function(const ltf_graph *g, int i, int k) {
    if (i < 0 || i >= g->n || k < 0) return NULL;
    const ltf_node *nd = &g->nodes[i];
    int64_t ids[2];
    int n = nd->kind == LTF_NODE_OP ? ltf_fn_ids(nd->op, nd->attrs, ids) : 0;
    struct ltf_fn_table *t = g->ctx->fns;
    if (k >= n || !t || ids[k] < 1 || ids[k] > t->n) return NULL;
    return t->v[ids[k] - 1].g;
}

/* Run control-flow op 'op' on 'in' with functions f0, f1 registered for the call. */
static ltf_status run_with(ltf_ctx *ctx, ltf_op_id op, ltf_graph *f0, ltf_graph *f1, ltf_tensor *const *in, int nin,
                          ltf_attrs *a, ltf_tensor **out, int maxout, int *nout) {
    *nout = 0;
    int id0 = ltf_fn_add(ctx, f0), id1 = id0 ? ltf_fn_add(ctx, f1) : 0;
    ltf_status st = ctx->last_status;
    if (id1) {
        a->i[0] = id0;
        a->i[1] = id1;
        st = ltf_op_run(ctx, op, in, nin, a, out, maxout, nout);
    }
    ltf_fn_unuse(ctx, id0);      /* a graph node keeps its own use */
    ltf_fn_unuse(ctx, id1);
    return st;
}

ltf_status ltf_cond(ltf_ctx *ctx, ltf_tensor *pred, ltf_graph *then_fn, ltf_tensor *const *then_in, int nthen,
                    ltf_graph *else_fn, ltf_tensor *const *else_in, int nelse, ltf_tensor **out, int maxout,
                    int *nout) {
    *nout = 0;
    if (!pred || !then_fn || !else_fn || nthen < 0 || nelse < 0 || nthen > INT32_MAX - nelse - 1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "cond: missing or invalid arguments");
    ltf_tensor **in = malloc(sizeof *in * ((size_t)nthen + (size_t)nelse + 1));
    if (!in) return ltf_fail_oom(ctx, "cond", 0);
    in[0] = pred;
    if (nthen) memcpy(in + 1, then_in, sizeof *in * (size_t)nthen);
    if (nelse) memcpy(in + 1 + nthen, else_in, sizeof *in * (size_t)nelse);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[2] = nthen;
    ltf_status st = run_with(ctx, LTF_OP_COND, then_fn, else_fn, in, 1 + nthen + nelse, &a, out, maxout, nout);
    free(in);
    return st;
}

ltf_status ltf_while(ltf_ctx *ctx, ltf_graph *cond_fn, ltf_graph *body_fn, ltf_tensor *const *vars, int n,
                     ltf_tensor *const *cond_in, int ncond, ltf_tensor *const *body_in, int nbody,
                     int64_t maximum_iterations, ltf_tensor **out, int maxout, int *nout) {
    *nout = 0;
    if (!cond_fn || !body_fn || n < 0 || ncond < 0 || nbody < 0 || n > INT32_MAX / 4 || ncond > INT32_MAX / 4 ||
        nbody > INT32_MAX / 4)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "while: missing or invalid arguments");
    size_t total = (size_t)n + (size_t)ncond + (size_t)nbody;
    ltf_tensor **in = malloc(sizeof *in * (total + 1));
    if (!in) return ltf_fail_oom(ctx, "while", 0);
    if (n) memcpy(in, vars, sizeof *in * (size_t)n);
    if (ncond) memcpy(in + n, cond_in, sizeof *in * (size_t)ncond);
    if (nbody) memcpy(in + n + ncond, body_in, sizeof *in * (size_t)nbody);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[2] = n;
    a.i[3] = ncond;
    a.nints = 1;
    a.ints[0] = maximum_iterations < 0 ? -1 : maximum_iterations;
    ltf_status st = run_with(ctx, LTF_OP_WHILE, cond_fn, body_fn, in, (int)total, &a, out, maxout, nout);
    free(in);
    return st;
}
ltf_status ltf_custom_gradient(ltf_ctx *ctx, ltf_graph *grad_fn, ltf_tensor *const *x, int nx, const int *has_grad,
                               ltf_tensor *const *y, int ny, ltf_tensor *const *captured, int ncaptured,
                               ltf_tensor **out) {
    if (!grad_fn || nx < 0 || ny < 0 || ncaptured < 0 || (nx && (!x || !has_grad)) || (ny && (!y || !out)) ||
        (ncaptured && !captured))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "custom_gradient: missing or invalid arguments");
    if (nx > LTF_ATTR_LIST_MAX * 64)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "custom_gradient: %d arguments (tensors and variables read), "
                        "at most %d", nx, LTF_ATTR_LIST_MAX * 64);
    if (ny > INT32_MAX / 4 || ncaptured > INT32_MAX / 4)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "custom_gradient: too many values");
    size_t total = (size_t)nx + (size_t)ny + (size_t)ncaptured;
    ltf_tensor **in = malloc(sizeof *in * (total + 1));
    if (!in) return ltf_fail_oom(ctx, "custom_gradient", 0);
    if (nx) memcpy(in, x, sizeof *in * (size_t)nx);
    if (ny) memcpy(in + nx, y, sizeof *in * (size_t)ny);
    if (ncaptured) memcpy(in + nx + ny, captured, sizeof *in * (size_t)ncaptured);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[1] = nx;
    a.i[2] = ny;
    a.nints = (nx + 63) / 64;
    for (int k = 0; k < a.nints; k++) a.ints[k] = 0;
    for (int k = 0; k < nx; k++)
        if (has_grad[k]) a.ints[k / 64] = (int64_t)((uint64_t)a.ints[k / 64] | (1ull << (k % 64)));
    int id = ltf_fn_add(ctx, grad_fn), n = 0;
    ltf_status st = ctx->last_status;
    if (id) {
        a.i[0] = id;
        st = ltf_op_run(ctx, LTF_OP_CUSTOM_GRADIENT, in, (int)total, &a, out, ny, &n);
    }
    ltf_fn_unuse(ctx, id);    /* a graph node keeps its own use */
    free(in);
    return st;
}
/* }==== */
