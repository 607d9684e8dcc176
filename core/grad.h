/*
** grad.h: small op-building helpers for gradient functions. Each returns a
** new reference or NULL on failure (message in ctx); NULL inputs propagate
** failure, so a gradient function can chain calls and check once.
** Everything goes through ltf_op_run, so gradients work eagerly, while
** tracing, and under an outer tape.
*/
#ifndef LTF_GRAD_H
#define LTF_GRAD_H

#include "op.h"
/* Ones/zeros shaped like 'x' (ops, so they work in graphs too). */
LTF_INTERNAL ltf_tensor *ltf_grad_ones_like(ltf_ctx *ctx, ltf_tensor *x);
LTF_INTERNAL ltf_tensor *ltf_grad_zeros_like(ltf_ctx *ctx, ltf_tensor *x);

LTF_INTERNAL ltf_tensor *ltf_g_op1(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *a, const ltf_attrs *at);
LTF_INTERNAL ltf_tensor *ltf_g_op2(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *a, ltf_tensor *b, const ltf_attrs *at);
/* A rank-0 tensor of 'dt' holding 'v'. */
LTF_INTERNAL ltf_tensor *ltf_g_scalar(ltf_ctx *ctx, ltf_dtype dt, double v);
/* a * (scalar v), in a's dtype */
LTF_INTERNAL ltf_tensor *ltf_g_scale(ltf_ctx *ctx, ltf_tensor *a, double v);
/* Sum 'g' down to the shape of 'like' (undoes broadcasting). When a shape
** is not fully known (tracing), the sum_to op decides the axes at run time. */
LTF_INTERNAL ltf_tensor *ltf_g_unbroadcast(ltf_ctx *ctx, ltf_tensor *g, const ltf_tensor *like);
/* reshape 'g' to 'like''s shape (reshape_like, decided at run time, when
** that shape is not fully known) */
LTF_INTERNAL ltf_tensor *ltf_g_reshape_like(ltf_ctx *ctx, ltf_tensor *g, const ltf_tensor *like);
/* Release a list of temporaries (NULLs allowed). */
LTF_INTERNAL void ltf_g_free(int n, ...);

#endif
