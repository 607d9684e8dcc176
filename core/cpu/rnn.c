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
    int64_t skip;   /* gradients not wanted, a bit per input */
} rnn_geom;

/* {==== Activations over arrays, in place. float32: exp from a degree-6
** polynomial on [-ln2/2, ln2/2] times 2^n built in the exponent bits
** (about 2 ulp, saturating outside [-87.3, 88.3]), sigmoid = 1 / (1 + e^-x)
** and tanh = 2 sigmoid(2x) - 1 (absolute error about 1e-7 near 0): loops
** the compiler vectorizes, where libm's tanhf / expf are calls per element
** (they took half of an LSTM step). float64: libm. */
static inline float fast_expf(float x) {
    x = x < -87.3f ? -87.3f : x > 88.3f ? 88.3f : x;
    float t = x * 1.44269504088896341f + 12582912.0f;   /* round to nearest via 1.5 * 2^23 */
    float n = t - 12582912.0f;
    float r = x - n * 0.693145751953125f - n * 1.428606765330187045e-06f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.6666667e-1f + r * (4.1666668e-2f + r * (8.3333338e-3f +
              r * 1.3888889e-3f)))));
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

LTF_WIDE_CLONES static void act_sigmoid_f32(float *p, int64_t n) {
    for (int64_t j = 0; j < n; j++) p[j] = 1.0f / (1.0f + fast_expf(-p[j]));
}

LTF_WIDE_CLONES static void act_tanh_f32(const float *src, float *dst, int64_t n) {
    for (int64_t j = 0; j < n; j++) dst[j] = 2.0f / (1.0f + fast_expf(-2.0f * src[j])) - 1.0f;
}

static void act_sigmoid_f64(double *p, int64_t n) {
    for (int64_t j = 0; j < n; j++) p[j] = 1.0 / (1.0 + exp(-p[j]));
}

static void act_tanh_f64(const double *src, double *dst, int64_t n) {
    for (int64_t j = 0; j < n; j++) dst[j] = tanh(src[j]);
}
/* }==== */

#define REAL float
#define SFX f32
#include "rnn_impl.h"
#undef REAL
#undef SFX

#define REAL double
#define SFX f64
#include "rnn_impl.h"
#undef REAL
#undef SFX

static rnn_geom geom(const ltf_op_def *def, const ltf_tensor *x, int64_t U, const ltf_attrs *a) {
    rnn_geom g = { def->name, x->dtype, x->dims[0], x->dims[1], x->dims[2], U, a->i[0] != 0, a->i[1] != 0,
                   a->i[2] != 0, a->i[3] };
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
