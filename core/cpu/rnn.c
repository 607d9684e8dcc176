/*
** cpu/rnn.c: CPU kernels of the fused recurrent ops (ltf_ops/rnn.h):
** lstm_sequence, gru_sequence and their backpropagation through time. The
** input projections of all time steps are one GEMM; each step is then one
** recurrent GEMM (two for GRU without reset_after) and one pass of fused
** gate arithmetic. The backward pass runs the steps in reverse with one
** recurrent GEMM each, then the weight gradients as three GEMMs over all
** steps. float32 and float64 (rnn_impl.h, once per type).
*/
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"

typedef struct rnn_geom {
    const char *op;
    ltf_dtype dt;
    int64_t B, T, I, U;
    int back, zero_out, reset_after;
} rnn_geom;

#define REAL float
#define SFX f32
#define EXP expf
#define TANH tanhf
#include "rnn_impl.h"
#undef REAL
#undef SFX
#undef EXP
#undef TANH

#define REAL double
#define SFX f64
#define EXP exp
#define TANH tanh
#include "rnn_impl.h"
#undef REAL
#undef SFX
#undef EXP
#undef TANH

static rnn_geom geom(const ltf_op_def *def, const ltf_tensor *x, int64_t U, const ltf_attrs *a) {
    rnn_geom g = { def->name, x->dtype, x->dims[0], x->dims[1], x->dims[2], U, a->i[0] != 0, a->i[1] != 0,
                   a->i[2] != 0 };
    return g;
}

#define D(t) LTF_DATA(t)
#define MASK(k) (nin > (k) ? (const uint8_t *)D(in[k]) : NULL)

ltf_status ltf_cpu_rnn_lstm(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                            const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nout;
    rnn_geom g = geom(def, in[0], in[4]->dims[0], a);
    if (g.dt == LTF_DTYPE_FLOAT32)
        return lstm_fwd_f32(ctx, &g, D(in[0]), D(in[1]), D(in[2]), D(in[3]), D(in[4]), D(in[5]), MASK(6),
                            D(out[0]), D(out[1]), D(out[2]), D(out[3]));
    return lstm_fwd_f64(ctx, &g, D(in[0]), D(in[1]), D(in[2]), D(in[3]), D(in[4]), D(in[5]), MASK(6), D(out[0]),
                        D(out[1]), D(out[2]), D(out[3]));
}

ltf_status ltf_cpu_rnn_lstm_grad(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nout;
    rnn_geom g = geom(def, in[0], in[4]->dims[0], a);
    if (g.dt == LTF_DTYPE_FLOAT32)
        return lstm_bwd_f32(ctx, &g, D(in[0]), D(in[1]), D(in[2]), D(in[3]), D(in[4]), D(in[6]), D(in[7]),
                            D(in[8]), D(in[9]), MASK(10), D(out[0]), D(out[1]), D(out[2]), D(out[3]), D(out[4]),
                            D(out[5]));
    return lstm_bwd_f64(ctx, &g, D(in[0]), D(in[1]), D(in[2]), D(in[3]), D(in[4]), D(in[6]), D(in[7]), D(in[8]),
                        D(in[9]), MASK(10), D(out[0]), D(out[1]), D(out[2]), D(out[3]), D(out[4]), D(out[5]));
}

ltf_status ltf_cpu_rnn_gru(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                           const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nout;
    rnn_geom g = geom(def, in[0], in[3]->dims[0], a);
    if (g.dt == LTF_DTYPE_FLOAT32)
        return gru_fwd_f32(ctx, &g, D(in[0]), D(in[1]), D(in[2]), D(in[3]), D(in[4]), MASK(5), D(out[0]),
                           D(out[1]), D(out[2]));
    return gru_fwd_f64(ctx, &g, D(in[0]), D(in[1]), D(in[2]), D(in[3]), D(in[4]), MASK(5), D(out[0]), D(out[1]),
                       D(out[2]));
}

ltf_status ltf_cpu_rnn_gru_grad(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nout;
    rnn_geom g = geom(def, in[0], in[3]->dims[0], a);
    if (g.dt == LTF_DTYPE_FLOAT32)
        return gru_bwd_f32(ctx, &g, D(in[0]), D(in[1]), D(in[2]), D(in[3]), D(in[5]), D(in[6]), D(in[7]), MASK(8),
                           D(out[0]), D(out[1]), D(out[2]), D(out[3]), D(out[4]));
    return gru_bwd_f64(ctx, &g, D(in[0]), D(in[1]), D(in[2]), D(in[3]), D(in[5]), D(in[6]), D(in[7]), MASK(8),
                       D(out[0]), D(out[1]), D(out[2]), D(out[3]), D(out[4]));
}
