/*
** cpu/collective.c: kernels of the collective ops (ltf_ops/collective.h).
** Each first agrees with its peers on the call (the communicator's 'check':
** op, reduction, dtype and shapes, so a mismatch is an error naming both
** sides instead of undefined behaviour inside MPI), then runs it over the
** context's communicator (ltf_comm.h). all_reduce packs its inputs into one
** fusion buffer (one call per bucket). No communicator: a group of one.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"
#include "../shape.h"
#include "../tensor.h"

#define SIG_MAX 240

static size_t nbytes(const ltf_tensor *t) { return (size_t)t->numel * ltf_dtype_size(t->dtype); }

/* Append 'x''s shape to 'sig' (truncated with "..." when full). */
static void sig_shape(char *sig, const ltf_tensor *x) {
    char sh[LTF_SHAPE_BUF];
    size_t n = strlen(sig);
    if (n + 4 >= SIG_MAX) return;
    ltf_shape_str(x->rank, x->dims, sh, sizeof sh);
    int w = snprintf(sig + n, SIG_MAX - n, " %s", sh);
    if (w < 0 || (size_t)w >= SIG_MAX - n) memcpy(sig + SIG_MAX - 5, "...", 4);
}

static ltf_status comm_fail(ltf_ctx *ctx, const ltf_op_def *def, ltf_status st, const char *err) {
    if (strncmp(err, def->name, strlen(def->name)) == 0) return ltf_fail(ctx, st, "%s", err);
    return ltf_fail(ctx, st, "%s: %s", def->name, err);
}

/* Agree on the call with every peer (nothing to do in a group of one). */
static ltf_status agree(ltf_ctx *ctx, const ltf_op_def *def, const char *sig) {
    const ltf_comm *c = ctx->comm;
    char err[LTF_ERRMSG_MAX];
    if (!c || c->size == 1) return LTF_OK;
    err[0] = '\0';
    ltf_status st = c->check(c->ud, def->name, sig, err, sizeof err);
    return st == LTF_OK ? LTF_OK : comm_fail(ctx, def, st, err);
}

/* x /= n for MEAN (integers: truncated) */
static void divide(ltf_tensor *t, int n) {
    void *p = LTF_DATA(t);
    int64_t k = t->numel;
    switch (t->dtype) {
    case LTF_DTYPE_FLOAT32: for (int64_t i = 0; i < k; i++) ((float *)p)[i] /= (float)n; break;
    case LTF_DTYPE_FLOAT64: for (int64_t i = 0; i < k; i++) ((double *)p)[i] /= (double)n; break;
    case LTF_DTYPE_INT32: for (int64_t i = 0; i < k; i++) ((int32_t *)p)[i] /= n; break;
    case LTF_DTYPE_INT64: for (int64_t i = 0; i < k; i++) ((int64_t *)p)[i] /= n; break;
    case LTF_DTYPE_UINT8: for (int64_t i = 0; i < k; i++) ((uint8_t *)p)[i] = (uint8_t)(((uint8_t *)p)[i] / n); break;
    default: break;
    }
}

ltf_status ltf_cpu_collective_all_reduce(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                         const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_comm *c = ctx->comm;
    int op = a ? (int)a->i[0] : 0;
    char sig[SIG_MAX];
    int64_t total = 0;
    for (int i = 0; i < nin; i++) total += in[i]->numel;
    snprintf(sig, sizeof sig, "%s %s, %d tensor%s of %lld elements:", ltf_collective_reduce_name(op),
             ltf_dtype_name(in[0]->dtype), nin, nin == 1 ? "" : "s", (long long)total);
    for (int i = 0; i < nin; i++) sig_shape(sig, in[i]);
    if (agree(ctx, def, sig) != LTF_OK) return ctx->last_status;
    if (!c || c->size == 1) {
        for (int i = 0; i < nin; i++) memmove(LTF_DATA(out[i]), LTF_DATA(in[i]), nbytes(in[i]));   /* may be in place */
        return LTF_OK;
    }
    char err[LTF_ERRMSG_MAX];
    err[0] = '\0';
    ltf_reduce_op rop = op == LTF_REDUCE_MEAN ? LTF_REDUCE_SUM : (ltf_reduce_op)op;
    ltf_status st;
    if (nin == 1) {
        st = c->all_reduce(c->ud, LTF_DATA(in[0]), LTF_DATA(out[0]), total, in[0]->dtype, rop, err, sizeof err);
    } else {
        /* the fusion buffer: every input packed, reduced in place, unpacked;
        ** a tensor, so the context's block cache recycles it between steps
        ** (no fresh pages per call) */
        ltf_tensor *fb = ltf_tensor_empty(ctx, in[0]->dtype, 1, &total);
        if (!fb) return ctx->last_status;
        char *buf = LTF_DATA(fb);
        size_t off = 0;
        for (int i = 0; i < nin; i++) {
            memcpy(buf + off, LTF_DATA(in[i]), nbytes(in[i]));
            off += nbytes(in[i]);
        }
        st = c->all_reduce(c->ud, buf, buf, total, in[0]->dtype, rop, err, sizeof err);
        off = 0;
        for (int i = 0; i < nin && st == LTF_OK; i++) {
            memcpy(LTF_DATA(out[i]), buf + off, nbytes(in[i]));
            off += nbytes(in[i]);
        }
        ltf_tensor_release(fb);
    }
    if (st != LTF_OK) return comm_fail(ctx, def, st, err);
    if (op == LTF_REDUCE_MEAN)
        for (int i = 0; i < nin; i++) divide(out[i], c->size);
    return LTF_OK;
}

ltf_status ltf_cpu_collective_broadcast(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                        const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_comm *c = ctx->comm;
    int root = a ? (int)a->i[0] : 0;
    char sig[SIG_MAX];
    snprintf(sig, sizeof sig, "root %d, %s", root, ltf_dtype_name(in[0]->dtype));
    sig_shape(sig, in[0]);
    if (agree(ctx, def, sig) != LTF_OK) return ctx->last_status;
    memmove(LTF_DATA(out[0]), LTF_DATA(in[0]), nbytes(in[0]));
    if (!c || c->size == 1) return LTF_OK;
    char err[LTF_ERRMSG_MAX];
    err[0] = '\0';
    ltf_status st = c->broadcast(c->ud, LTF_DATA(out[0]), in[0]->numel, in[0]->dtype, root, err, sizeof err);
    return st == LTF_OK ? LTF_OK : comm_fail(ctx, def, st, err);
}

ltf_status ltf_cpu_collective_gather_scatter(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                             const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_comm *c = ctx->comm;
    int scatter = def->code;
    int op = scatter && a ? (int)a->i[0] : 0;
    int64_t n = a ? a->i[scatter] : 0;
    int size = ltf_collective_size(ctx);
    if (n > 0 && n != size)
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "%s: built for a group of %lld, the communicator has %d ranks",
                        def->name, (long long)n, size);
    char sig[SIG_MAX];
    if (scatter) snprintf(sig, sizeof sig, "%s %s", ltf_collective_reduce_name(op), ltf_dtype_name(in[0]->dtype));
    else snprintf(sig, sizeof sig, "%s", ltf_dtype_name(in[0]->dtype));
    sig_shape(sig, in[0]);
    if (agree(ctx, def, sig) != LTF_OK) return ctx->last_status;
    if (!c || c->size == 1) {
        memmove(LTF_DATA(out[0]), LTF_DATA(in[0]), nbytes(in[0]));
        return LTF_OK;
    }
    char err[LTF_ERRMSG_MAX];
    err[0] = '\0';
    ltf_status st;
    if (scatter) {
        ltf_reduce_op rop = op == LTF_REDUCE_MEAN ? LTF_REDUCE_SUM : (ltf_reduce_op)op;
        st = c->reduce_scatter(c->ud, LTF_DATA(in[0]), LTF_DATA(out[0]), out[0]->numel, in[0]->dtype, rop, err,
                               sizeof err);
        if (st == LTF_OK && op == LTF_REDUCE_MEAN) divide(out[0], c->size);
    } else {
        st = c->all_gather(c->ud, LTF_DATA(in[0]), LTF_DATA(out[0]), in[0]->numel, in[0]->dtype, err, sizeof err);
    }
    return st == LTF_OK ? LTF_OK : comm_fail(ctx, def, st, err);
}
