/*
** graph.h: the graph IR built by tracing. Nodes are stored in creation
** order, which is program order: every node's inputs come before it, and
** stateful ops (assign, print, random) keep the order the program gave them
** (automatic control dependencies). Passes mark nodes dead or rewrite
** edges; the plan (plan.c) replays the live nodes.
*/
#ifndef LTF_GRAPH_H
#define LTF_GRAPH_H

#include "op.h"

enum { LTF_NODE_OP = 0, LTF_NODE_PLACEHOLDER, LTF_NODE_CONST };

typedef struct ltf_edge {
    int node;                 /* producer's index */
    int out;                  /* its output index */
} ltf_edge;

typedef struct ltf_node {
    int kind;                 /* LTF_NODE_* */
    ltf_op_id op;             /* for LTF_NODE_OP */
    ltf_attrs *attrs;         /* NULL: defaults */
    int nin, nout;
    ltf_edge *in;
    ltf_type *out;            /* inferred (partial) output types */
    ltf_tensor *value;        /* LTF_NODE_CONST: the captured tensor (retained) */
    char name[48];
    int alive;                /* cleared by pruning and merging */
    int fused;                /* fusion: group id + 1, 0 when not fused */
    int device, ordinal;      /* where the node runs (docs/devices.md): the device scope
                              ** while tracing, else its inputs'; -1: where its inputs are */
} ltf_node;

struct ltf_plan;

struct ltf_graph {
    int32_t refs;             /* atomic when 'shared' */
    int shared;               /* ltf_graph_share: read-only, any thread may run/retain/release it */
    ltf_ctx *ctx;
    char name[64];
    ltf_node *nodes;
    int n, cap;
    int *inputs;              /* placeholder node indices, in order */
    int ninputs, capinputs;
    ltf_edge *outputs;
    int noutputs;
    struct ltf_graph *outer;  /* while tracing: the graph traced before this one (retained,
                              ** so an outer graph outlives every trace nested in it) */
    int tracing;              /* on the context's stack of traces (begun, not ended/aborted) */
    int finished;             /* ended: passes ran, the plan is built */
    struct ltf_plan *plan;
    void *name_counts;        /* tracing: op name -> count, for unique node names */
    /* a function of a control-flow op (ltf_graph_begin_function): symbolic
    ** tensors of the traces it is nested in become extra placeholders (after
    ** the ones made explicitly), and 'captured' holds those outer tensors,
    ** in order, for the op to pass in */
    int capturing;
    struct ltf_tensor **captured;
    int *capnodes;            /* the placeholder node of each captured tensor */
    int ncaptured, capcaptured;
};


/* Add an op node for 'op' on 'in' (symbolic tensors of the current graph,
** or concrete tensors, which are captured). The graph hook of op.c. */
LTF_INTERNAL ltf_status ltf_graph_add_op(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *const *in, int nin,
                                         const ltf_attrs *a, ltf_tensor **out, int maxout, int *nout);

/* {==== Passes (passes.c): each is a named, separately tested unit */
LTF_INTERNAL ltf_status ltf_pass_prune(ltf_ctx *ctx, ltf_graph *g);
LTF_INTERNAL ltf_status ltf_pass_fold_constants(ltf_ctx *ctx, ltf_graph *g);
LTF_INTERNAL ltf_status ltf_pass_cse(ltf_ctx *ctx, ltf_graph *g);
LTF_INTERNAL ltf_status ltf_pass_fuse_elementwise(ltf_ctx *ctx, ltf_graph *g);
/* }==== */

/* What tracing knows of the values of the symbolic int32/int64 scalar or
** vector 't' (TensorFlow's constant_value_as_shape, for the cheap cases:
** constants, tf.shape of a partly known shape, x[i] of those, stacks and
** concats): '*n' the length (-1 unknown; 0 for a scalar, its value in v[0]),
** LTF_UNKNOWN_VALUE where an entry is not known. ctx->graph_int_values. */
#define LTF_UNKNOWN_VALUE INT64_MIN
LTF_INTERNAL void ltf_graph_int_values(const ltf_tensor *t, int64_t *v, int *n);

/* {==== Plan (plan.c) */
LTF_INTERNAL ltf_status ltf_plan_build(ltf_ctx *ctx, ltf_graph *g);
LTF_INTERNAL void ltf_plan_free(struct ltf_plan *p);
LTF_INTERNAL ltf_status ltf_plan_run(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *const *inputs, ltf_tensor **outputs);
/* Loop-invariant values of a function run once per iteration (plan.c):
** NULL when none of its steps is invariant (or on failure: no hoisting). */
typedef struct ltf_loop_cache ltf_loop_cache;
LTF_INTERNAL ltf_loop_cache *ltf_plan_loop_cache(ltf_ctx *ctx, ltf_graph *g, int nvary);
LTF_INTERNAL void ltf_plan_loop_cache_free(ltf_loop_cache *c);
LTF_INTERNAL ltf_status ltf_plan_run_cached(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *const *inputs,
                                            ltf_tensor **outputs, ltf_loop_cache *cache);
/* }==== */

#endif
