/*
** cpu/cpu.h: CPU kernels, one entry per op family (the registry in ops/
** points at these). Every kernel has the ltf_kernel_fn signature.
*/
#ifndef LTF_CPU_H
#define LTF_CPU_H

#include "../op.h"

#define LTF_CPU_KERNEL(name)                                                                   \
    LTF_INTERNAL ltf_status name(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,   \
                                 int nin, const ltf_attrs *a, ltf_tensor **out, int nout)

/* elementwise.c */
/* Compute-bound loops also built for AVX2+FMA, chosen at load time by an
** ifunc resolver (GCC function multiversioning). Not under ThreadSanitizer:
** resolvers run before its runtime starts and crash (scripts/tsan.sh). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define LTF_WIDE_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define LTF_WIDE_CLONES
#endif

LTF_CPU_KERNEL(ltf_cpu_elementwise_unary);
LTF_CPU_KERNEL(ltf_cpu_elementwise_binary);
LTF_CPU_KERNEL(ltf_cpu_elementwise_cast);
LTF_CPU_KERNEL(ltf_cpu_elementwise_copy);          /* identity when not a view */
LTF_CPU_KERNEL(ltf_cpu_elementwise_select);
LTF_CPU_KERNEL(ltf_cpu_elementwise_string_join);
LTF_CPU_KERNEL(ltf_cpu_elementwise_check_numerics);
LTF_CPU_KERNEL(ltf_cpu_elementwise_fill_like);      /* zeros_like (code 0), ones_like (code 1) */

/* reduce.c */
LTF_CPU_KERNEL(ltf_cpu_reduce_reduce);
LTF_CPU_KERNEL(ltf_cpu_reduce_sum_to);             /* g summed down to x's shape */             /* reduce_sum/mean/max/min/prod/all/any ('code') */
LTF_CPU_KERNEL(ltf_cpu_reduce_arg);                /* argmax/argmin */
LTF_CPU_KERNEL(ltf_cpu_reduce_cumsum);
/* end reduce.c */

/* matmul.c */
LTF_CPU_KERNEL(ltf_cpu_matmul_matmul);

/* nn.c */
LTF_CPU_KERNEL(ltf_cpu_nn_softmax);                /* softmax and log_softmax (def->code) */
LTF_CPU_KERNEL(ltf_cpu_nn_sparse_softmax_xent);
LTF_CPU_KERNEL(ltf_cpu_nn_softmax_xent);
LTF_CPU_KERNEL(ltf_cpu_nn_conv2d);
LTF_CPU_KERNEL(ltf_cpu_nn_pool2d);                 /* max and avg (def->code) */
LTF_CPU_KERNEL(ltf_cpu_nn_conv2d_backprop_input);
LTF_CPU_KERNEL(ltf_cpu_nn_conv2d_backprop_filter);
LTF_CPU_KERNEL(ltf_cpu_nn_max_pool2d_grad);         /* max_pool2d_grad (code 0) and _grad_grad (code 1) */
LTF_CPU_KERNEL(ltf_cpu_nn_avg_pool2d_grad);
LTF_CPU_KERNEL(ltf_cpu_nn_depthwise_conv2d);       /* forward (code 0), backprop_input (1), backprop_filter (2) */

/* conv_direct.c: float32 conv2d at stride 1 without dilation over valid
** windows of an NHWC input (the caller pads), for output channels in
** multiples of 8 (ltf_cpu_conv_direct_ok). oh = h - kh + 1, ow = w - kw + 1. */
typedef struct ltf_conv_geom {
    int64_t n, h, w, c;        /* input NHWC (already padded) */
    int64_t kh, kw, o;         /* filter HWIO: (kh, kw, c, o) */
    int64_t oh, ow;            /* output (n, oh, ow, o) */
} ltf_conv_geom;
LTF_INTERNAL int ltf_cpu_conv_direct_ok(int64_t c, int64_t o);
LTF_INTERNAL void ltf_cpu_conv_direct_f32(ltf_ctx *ctx, const ltf_conv_geom *g, const float *x, const float *f,
                                          float *y);
/* The packed forward kernel (AVX-512 machines; conv_direct.c): any stride
** (sh, sw) without dilation, output channels in multiples of 32
** (ltf_cpu_conv_packed_ok), padding (pt, pl) before: g's h and w are the
** input's, taps outside it read zeros. */
LTF_INTERNAL int ltf_cpu_conv_packed_ok(int64_t o);
LTF_INTERNAL ltf_status ltf_cpu_conv_packed_f32(ltf_ctx *ctx, const ltf_conv_geom *g, int64_t sh, int64_t sw,
                                                int64_t pt, int64_t pl, const float *x, const float *f, float *y);
/* df (kh, kw, c, o) = the filter gradient for output gradient dy. */
LTF_INTERNAL ltf_status ltf_cpu_conv_direct_filter_f32(ltf_ctx *ctx, const ltf_conv_geom *g, const float *x,
                                                       const float *dy, float *df);

/* rnn.c: the fused recurrent ops (ltf_ops/rnn.h) */
LTF_CPU_KERNEL(ltf_cpu_rnn_lstm);
LTF_CPU_KERNEL(ltf_cpu_rnn_lstm_grad);
LTF_CPU_KERNEL(ltf_cpu_rnn_gru);
LTF_CPU_KERNEL(ltf_cpu_rnn_gru_grad);

/* blas.c */
/* C = alpha * op(A) @ op(B) + beta * C, row-major, for float32 (cblas_sgemm)
** or float64 (cblas_dgemm); 'ta'/'tb' nonzero transpose. Buffers are lent.
** Fails (INVALID_ARGUMENT naming 'op') when a size exceeds BLAS's int. */
LTF_INTERNAL ltf_status ltf_cpu_blas_gemm(ltf_ctx *ctx, const char *op, ltf_dtype dt, int ta, int tb,
                                          int64_t m, int64_t n, int64_t k, double alpha,
                                          const void *a, int64_t lda, const void *b, int64_t ldb,
                                          double beta, void *c, int64_t ldc);
/* For kernels that run several GEMMs at once on the pool's threads: load
** OpenBLAS (blas_lib.h; FAILED_PRECONDITION naming 'op' when it cannot be)
** and make it run each GEMM on its calling thread (call before the parallel
** loop),
** check the sizes once (ltf_cpu_blas_fits: every dimension and leading
** dimension fits BLAS's int), then call ltf_cpu_blas_gemm_here from any
** thread: the same product as ltf_cpu_blas_gemm, which cannot fail (after
** a successful ltf_cpu_blas_serial) and leaves OpenBLAS's thread count alone. */
LTF_INTERNAL ltf_status ltf_cpu_blas_serial(ltf_ctx *ctx, const char *op);
LTF_INTERNAL int ltf_cpu_blas_fits(int64_t m, int64_t n, int64_t k);
LTF_INTERNAL void ltf_cpu_blas_gemm_here(ltf_dtype dt, int ta, int tb, int64_t m, int64_t n, int64_t k,
                                         double alpha, const void *a, int64_t lda, const void *b, int64_t ldb,
                                         double beta, void *c, int64_t ldc);

/* {==== movement.c */
LTF_CPU_KERNEL(ltf_cpu_movement_view);            /* reshape, expand_dims, squeeze (copies if not a view) */
LTF_CPU_KERNEL(ltf_cpu_movement_transpose);
LTF_CPU_KERNEL(ltf_cpu_movement_concat);          /* concat and stack */
LTF_CPU_KERNEL(ltf_cpu_movement_split);           /* split and unstack */
LTF_CPU_KERNEL(ltf_cpu_movement_slice);
LTF_CPU_KERNEL(ltf_cpu_movement_strided_slice);
LTF_CPU_KERNEL(ltf_cpu_movement_gather);
LTF_CPU_KERNEL(ltf_cpu_movement_one_hot);
LTF_CPU_KERNEL(ltf_cpu_movement_tile);
LTF_CPU_KERNEL(ltf_cpu_movement_pad);
LTF_CPU_KERNEL(ltf_cpu_movement_reverse);
LTF_CPU_KERNEL(ltf_cpu_movement_broadcast_to);

/* What a strided_slice selects: per input dim a start, step and count
** (-1 when the dim is unknown), and the output shape (new axes added,
** shrunk axes removed). Shared by inference and the kernel. */
typedef struct ltf_strided_plan {
    int64_t start[LTF_MAX_RANK], step[LTF_MAX_RANK], count[LTF_MAX_RANK];
    int out_rank;                         /* LTF_UNKNOWN_RANK when the input's is unknown */
    int64_t out_dims[LTF_MAX_RANK];
} ltf_strided_plan;
/* Resolve strided_slice attributes against a (partial) input shape. */
LTF_INTERNAL ltf_status ltf_cpu_movement_strided_plan(ltf_ctx *ctx, const char *op, int rank,
                                                      const int64_t *dims, const ltf_attrs *a,
                                                      ltf_strided_plan *p);
/* }==== */

/* control.c */
LTF_CPU_KERNEL(ltf_cpu_control_print);

/* optim.c (ops/optim.c: ltf_optim_nhandles, the handle inputs of an update) */
LTF_CPU_KERNEL(ltf_cpu_optim_apply);
LTF_INTERNAL int ltf_optim_nhandles(const ltf_op_def *def, const ltf_attrs *a);

/* state.c */
LTF_CPU_KERNEL(ltf_cpu_state_read);
LTF_CPU_KERNEL(ltf_cpu_state_assign);   /* code 0: assign; else the elementwise op to apply */

/* init_ops.c */
LTF_CPU_KERNEL(ltf_cpu_init_ops_fill);
LTF_CPU_KERNEL(ltf_cpu_init_ops_range);
LTF_CPU_KERNEL(ltf_cpu_init_ops_linspace);
LTF_CPU_KERNEL(ltf_cpu_init_ops_eye);
/* end init_ops.c */

/* random.c */
LTF_CPU_KERNEL(ltf_cpu_random_normal);
LTF_CPU_KERNEL(ltf_cpu_random_uniform);
LTF_CPU_KERNEL(ltf_cpu_random_gamma);
LTF_CPU_KERNEL(ltf_cpu_random_categorical);
LTF_CPU_KERNEL(ltf_cpu_random_shuffle);
/* end random.c */

/* Elements per thread below which a kernel stays on the calling thread. */
#define LTF_CPU_GRAIN 32768

/* {==== N-d iteration over broadcast inputs (shared by families) */
typedef struct ltf_cpu_bcast {
    int rank;                            /* after collapsing; >= 1 */
    int64_t dims[LTF_MAX_RANK];
    int64_t strides[4][LTF_MAX_RANK];    /* per input, in elements; 0 = broadcast */
    int nin;
    int64_t outer;                       /* product of all dims but the last */
} ltf_cpu_bcast;

/* Plan iteration of 'nin' (<= 4) inputs broadcast to out's shape: drops
** size-1 dims and merges dims that are contiguous for every input. */
LTF_INTERNAL void ltf_cpu_bcast_plan(ltf_cpu_bcast *p, ltf_tensor *const *in, int nin,
                                     const ltf_tensor *out);
/* Element offsets of each input at the start of outer row 'row'. */
LTF_INTERNAL void ltf_cpu_bcast_offsets(const ltf_cpu_bcast *p, int64_t row, int64_t *off);
/* }==== */

/* collective.c (ops/collective.c: names and the group the context is in) */
LTF_CPU_KERNEL(ltf_cpu_collective_all_reduce);
LTF_CPU_KERNEL(ltf_cpu_collective_broadcast);
LTF_CPU_KERNEL(ltf_cpu_collective_gather_scatter);   /* code 0: all_gather, 1: reduce_scatter */
LTF_INTERNAL const char *ltf_collective_reduce_name(int op);
LTF_INTERNAL int ltf_collective_size(const ltf_ctx *ctx);   /* 1 without a communicator */
LTF_INTERNAL int ltf_collective_rank(const ltf_ctx *ctx);

#endif

