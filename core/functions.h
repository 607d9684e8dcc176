/*
** functions.h: the context's table of functions, the finished graphs that
** control-flow ops (cond, while) run. An op names its sub-graphs by id in
** its attributes (attributes are plain values, copied and compared
** bytewise), and the ids resolve here, so a forged or stale id is an
** InvalidArgumentError, never a dangling pointer. Each entry counts its
** uses: the host handle that registered it (tf.cond's Lua code) and every
** graph node naming it; the graph is released with the last use.
*/
#ifndef LTF_FUNCTIONS_H
#define LTF_FUNCTIONS_H

#include "ctx.h"
#include "graph.h"

/* Register finished graph 'g' (retained): its id (> 0) with one use, or 0
** on failure (message in ctx). */
LTF_INTERNAL int ltf_fn_add(ltf_ctx *ctx, ltf_graph *g);
/* The graph of function 'id' (lent), or NULL with an InvalidArgumentError
** naming 'op' when there is none. */
LTF_INTERNAL ltf_graph *ltf_fn_get(ltf_ctx *ctx, int64_t id, const char *op);
LTF_INTERNAL void ltf_fn_use(ltf_ctx *ctx, int64_t id);
LTF_INTERNAL void ltf_fn_unuse(ltf_ctx *ctx, int64_t id);

/* The function ids an op's attributes name (control-flow ops, custom_gradient): up to 2. */
LTF_INTERNAL int ltf_fn_ids(ltf_op_id op, const ltf_attrs *a, int64_t *ids);
/* Whether a node of 'op' with attributes 'a' has effects: a stateful op,
** or a control-flow op one of whose functions has a live stateful node. */
LTF_INTERNAL int ltf_op_node_stateful(ltf_ctx *ctx, ltf_op_id op, const ltf_attrs *a);

#endif
