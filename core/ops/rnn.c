/*
** ops/rnn.c: definitions of the fused recurrent ops (lstm_sequence,
** gru_sequence) and of their backpropagation-through-time ops: dtype and
** shape checks (partial shapes allowed), kernels, gradients. Layouts are
** documented in ltf_ops/rnn.h. The gradient of a sequence op is one run of
** its _grad op, which reads the workspace the forward op wrote; absent
** output gradients are zeros.
*/
#include <stdio.h>
#include <string.h>
#include "../op.h"
#include "../shape.h"
#include "../grad.h"
#include "../ctx.h"
#include "../cpu/cpu.h"

#define M(dt) (1u << (dt))
#define F_ (M(LTF_DTYPE_FLOAT32) | M(LTF_DTYPE_FLOAT64))

/* {==== Shape checks
** Every argument's dims are written in four sizes: batch B, time T, input
** features I and units U (a dim is a size times a multiple: 4U). B, T and
** I come from 'x', U from the recurrent kernel's first dim (or, unknown
** there, the first argument that tells it); then each argument must match. */
enum { S_B, S_T, S_I, S_U, S_ONE, S_NSYM };

typedef struct dimspec { int sym, mult; } dimspec;
typedef struct argspec {
    const char *name;
    int rank;
    dimspec d[3];
} argspec;

typedef struct rnn_shapes {
    int64_t v[S_NSYM];   /* -1 unknown */
} rnn_shapes;

static void learn(rnn_shapes *s, const argspec *sp, const ltf_tensor *t) {
    if (t->rank != sp->rank) return;
    for (int k = 0; k < sp->rank; k++) {
        const dimspec *d = &sp->d[k];
        if (d->sym == S_ONE || t->dims[k] < 0 || s->v[d->sym] >= 0) continue;
        if (t->dims[k] % d->mult == 0) s->v[d->sym] = t->dims[k] / d->mult;
    }
}

static ltf_status check_arg(ltf_ctx *ctx, const ltf_op_def *def, const rnn_shapes *s, const argspec *sp,
                            const ltf_tensor *t, const ltf_tensor *x) {
    char want[LTF_SHAPE_BUF], got[LTF_SHAPE_BUF], xs[LTF_SHAPE_BUF];
    int64_t w[3];
    int ok = t->rank == LTF_UNKNOWN_RANK || t->rank == sp->rank;
    for (int k = 0; k < sp->rank; k++) {
        const dimspec *d = &sp->d[k];
        w[k] = d->sym == S_ONE ? d->mult : s->v[d->sym] >= 0 ? s->v[d->sym] * d->mult : -1;
        if (ok && t->rank >= 0 && t->dims[k] >= 0 && w[k] >= 0 && t->dims[k] != w[k]) ok = 0;
    }
    if (ok) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must have shape %s, got %s (x is %s, units %lld)",
                    def->name, sp->name, ltf_shape_str(sp->rank, w, want, sizeof want),
                    ltf_shape_str(t->rank, t->dims, got, sizeof got), ltf_shape_str(x->rank, x->dims, xs, sizeof xs),
                    (long long)s->v[S_U]);
}

/* Check 'n' inputs against 'specs' (entries with a NULL name are skipped);
** 'mask_at' is the index of the optional mask (bool (B, T)), -1 none;
** 'rk_at' the recurrent kernel's. Fills 's'. */
static ltf_status check_all(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                            const argspec *specs, int mask_at, int rk_at, rnn_shapes *s) {
    const ltf_tensor *x = in[0];
    if (!(F_ & M(x->dtype)))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'x' has dtype %s, expected one of: float32, float64", def->name,
                        ltf_dtype_name(x->dtype));
    for (int k = 1; k < nin; k++) {
        if (k == mask_at) {
            if (in[k]->dtype != LTF_DTYPE_BOOL)
                return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'mask' has dtype %s, expected bool", def->name,
                                ltf_dtype_name(in[k]->dtype));
        } else if (in[k]->dtype != x->dtype) {
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: '%s' has dtype %s, expected %s (the dtype of 'x')", def->name,
                            specs[k].name, ltf_dtype_name(in[k]->dtype), ltf_dtype_name(x->dtype));
        }
    }
    for (int k = 0; k < S_NSYM; k++) s->v[k] = -1;
    learn(s, &specs[0], x);
    learn(s, &specs[rk_at], in[rk_at]);
    for (int k = 1; k < nin; k++) learn(s, &specs[k], in[k]);
    for (int k = 0; k < nin; k++) {
        ltf_status st = check_arg(ctx, def, s, &specs[k], in[k], x);
        if (st != LTF_OK) return st;
    }
    return LTF_OK;
}

static void set_type(ltf_type *t, ltf_dtype dt, int rank, int64_t d0, int64_t d1, int64_t d2) {
    t->dtype = dt;
    t->rank = rank;
    t->dims[0] = d0;
    t->dims[1] = d1;
    t->dims[2] = d2;
}

static int64_t mul(int64_t v, int m) { return v < 0 ? -1 : v * m; }

#define A3(n, a, b, c) { n, 3, { a, b, c } }
#define A2(n, a, b) { n, 2, { a, b, { S_ONE, 1 } } }
#define A1(n, a) { n, 1, { a, { S_ONE, 1 }, { S_ONE, 1 } } }
#define B1 { S_B, 1 }
#define T1 { S_T, 1 }
#define I1 { S_I, 1 }
#define U(k) { S_U, k }

static const argspec lstm_specs[11] = {
    A3("x", B1, T1, I1), A2("h0", B1, U(1)), A2("c0", B1, U(1)), A2("kernel", I1, U(4)),
    A2("recurrent_kernel", U(1), U(4)), A1("bias", U(4)), A2("mask", B1, T1), { NULL, 0, { { 0, 0 } } },
};
static const argspec lstm_grad_specs[11] = {
    A3("x", B1, T1, I1), A2("h0", B1, U(1)), A2("c0", B1, U(1)), A2("kernel", I1, U(4)),
    A2("recurrent_kernel", U(1), U(4)), A1("bias", U(4)), A3("workspace", B1, T1, U(6)),
    A3("doutputs", B1, T1, U(1)), A2("dh", B1, U(1)), A2("dc", B1, U(1)), A2("mask", B1, T1),
};

static argspec gru_bias_spec(int reset_after) {
    argspec b = A1("bias", U(3));
    if (reset_after) {
        argspec b2 = { "bias", 2, { { S_ONE, 2 }, U(3), { S_ONE, 1 } } };
        b = b2;
    }
    return b;
}

static ltf_status infer_lstm(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)a; (void)maxout;
    rnn_shapes s;
    ltf_status st = check_all(ctx, def, in, nin, lstm_specs, 6, 4, &s);
    if (st != LTF_OK) return st;
    ltf_dtype dt = in[0]->dtype;
    int64_t B = s.v[S_B], T = s.v[S_T], U = s.v[S_U];
    set_type(&out[0], dt, 3, B, T, U);
    set_type(&out[1], dt, 2, B, U, 0);
    set_type(&out[2], dt, 2, B, U, 0);
    set_type(&out[3], dt, 3, B, T, mul(U, 6));
    *nout = 4;
    return LTF_OK;
}

static ltf_status infer_lstm_grad(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                  const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)a; (void)maxout;
    rnn_shapes s;
    ltf_status st = check_all(ctx, def, in, nin, lstm_grad_specs, 10, 4, &s);
    if (st != LTF_OK) return st;
    for (int k = 0; k < 6; k++) ltf_type_of(in[k], &out[k]);
    *nout = 6;
    return LTF_OK;
}

static ltf_status infer_gru(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                            const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)maxout;
    argspec specs[6] = {
        A3("x", B1, T1, I1), A2("h0", B1, U(1)), A2("kernel", I1, U(3)), A2("recurrent_kernel", U(1), U(3)),
        gru_bias_spec(a->i[2] != 0), A2("mask", B1, T1),
    };
    rnn_shapes s;
    ltf_status st = check_all(ctx, def, in, nin, specs, 5, 3, &s);
    if (st != LTF_OK) return st;
    ltf_dtype dt = in[0]->dtype;
    int64_t B = s.v[S_B], T = s.v[S_T], U = s.v[S_U];
    set_type(&out[0], dt, 3, B, T, U);
    set_type(&out[1], dt, 2, B, U, 0);
    set_type(&out[2], dt, 3, B, T, mul(U, 5));
    *nout = 3;
    return LTF_OK;
}

static ltf_status infer_gru_grad(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    (void)maxout;
    argspec specs[9] = {
        A3("x", B1, T1, I1), A2("h0", B1, U(1)), A2("kernel", I1, U(3)), A2("recurrent_kernel", U(1), U(3)),
        gru_bias_spec(a->i[2] != 0), A3("workspace", B1, T1, U(5)), A3("doutputs", B1, T1, U(1)),
        A2("dh", B1, U(1)), A2("mask", B1, T1),
    };
    rnn_shapes s;
    ltf_status st = check_all(ctx, def, in, nin, specs, 8, 3, &s);
    if (st != LTF_OK) return st;
    for (int k = 0; k < 5; k++) ltf_type_of(in[k], &out[k]);
    *nout = 5;
    return LTF_OK;
}
/* }==== */

/* {==== Gradients: one run of the _grad op */
#define GRAD_FN(name)                                                                                      \
    static ltf_status name(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,           \
                           const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout, \
                           ltf_tensor **din)

/* The gradients of the forward's 'ngo' real outputs (zeros where absent)
** into g[0..ngo-1] (new references); fails with both released. */
static ltf_status out_grads(ltf_ctx *ctx, ltf_tensor *const *out, ltf_tensor *const *dout, int ngo, ltf_tensor **g) {
    ltf_status st = LTF_OK;
    for (int k = 0; k < ngo; k++) {
        if (dout[k]) {
            ltf_tensor_retain(dout[k]);
            g[k] = dout[k];
        } else {
            g[k] = ltf_grad_zeros_like(ctx, out[k]);
            if (!g[k]) st = ctx->last_status;
        }
    }
    if (st != LTF_OK)
        for (int k = 0; k < ngo; k++) {
            ltf_tensor_release(g[k]);
            g[k] = NULL;
        }
    return st;
}

/* Forward inputs 0..nw-1, the workspace out[ngo], output gradients, then
** the mask (when the forward had one) -> the _grad op's 'ngrad' outputs. */
static ltf_status run_grad(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *const *in, int nin, int nw, const ltf_attrs *a,
                           ltf_tensor *const *out, ltf_tensor *const *dout, int ngo, ltf_tensor **din) {
    ltf_tensor *g[3] = { NULL, NULL, NULL };
    ltf_status st = out_grads(ctx, out, dout, ngo, g);
    if (st != LTF_OK) return st;
    ltf_tensor *args[12];
    int n = 0;
    for (int k = 0; k < nw; k++) args[n++] = in[k];
    args[n++] = out[ngo];
    for (int k = 0; k < ngo; k++) args[n++] = g[k];
    if (nin > nw) args[n++] = in[nw];
    /* the gradients nobody asked for are skipped (i[3], a bit per input) */
    ltf_attrs at = *a;
    at.i[3] = 0;
    for (int k = 0; k < nw; k++)
        if (!LTF_GRAD_NEEDED(ctx, k)) at.i[3] |= (int64_t)1 << k;
    ltf_tensor *res[6] = { NULL };
    int nres = 0;
    st = ltf_op_run(ctx, op, args, n, &at, res, nw, &nres);
    for (int k = 0; k < ngo; k++) ltf_tensor_release(g[k]);
    if (st != LTF_OK) return st;
    for (int k = 0; k < nw; k++) {
        if ((at.i[3] >> k) & 1) {
            ltf_tensor_release(res[k]);
            res[k] = NULL;
        }
        din[k] = res[k];
    }
    return LTF_OK;
}

GRAD_FN(grad_lstm) {
    (void)def; (void)nout;
    return run_grad(ctx, LTF_OP_LSTM_SEQUENCE_GRAD, in, nin, 6, a, out, dout, 3, din);
}

GRAD_FN(grad_gru) {
    (void)def; (void)nout;
    return run_grad(ctx, LTF_OP_GRU_SEQUENCE_GRAD, in, nin, 5, a, out, dout, 2, din);
}
/* }==== */

/* {==== Definitions */
#define CPU(k) { [LTF_DEVICE_CPU] = k }

LTF_INTERNAL const ltf_op_def ltf_opdef_lstm_sequence = {
    "lstm_sequence", 6, 7, 0, 0, infer_lstm, CPU(ltf_cpu_rnn_lstm), grad_lstm };
LTF_INTERNAL const ltf_op_def ltf_opdef_lstm_sequence_grad = {
    "lstm_sequence_grad", 10, 11, 0, 0, infer_lstm_grad, CPU(ltf_cpu_rnn_lstm_grad), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_gru_sequence = {
    "gru_sequence", 5, 6, 0, 0, infer_gru, CPU(ltf_cpu_rnn_gru), grad_gru };
LTF_INTERNAL const ltf_op_def ltf_opdef_gru_sequence_grad = {
    "gru_sequence_grad", 8, 9, 0, 0, infer_gru_grad, CPU(ltf_cpu_rnn_gru_grad), NULL };
/* }==== */
