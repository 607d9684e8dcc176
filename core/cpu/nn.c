/*
** cpu/nn.c: CPU kernels of the neural-network ops. Softmax and the
** cross-entropies work line by line along the class axis, in a numerically
** stable form (the line's maximum is subtracted before exp; sums in double).
** float32 conv2d forward with output depths in multiples of 32, at any
** stride without dilation, runs conv_direct.c's packed AVX-512 kernel on
** machines that have AVX-512 (padding read as zeros in the kernel). Else
** float32 conv2d at stride 1 with output depths in multiples of 8 runs the
** direct kernels of conv_direct.c (forward, filter gradient, and the input
** gradient as a forward conv with flipped filters). Other convolutions lower
** to GEMM: im2col in L2-sized tiles of output rows, each pool thread running
** im2col then a one-thread BLAS call per tile (no scratch at all for 1x1
** stride-1 filters and for filters that cover the whole image); the filter
** gradient sums col^T @ dy per tile into per-range partials, the input
** gradient is dy @ f^T per chunk of output lines folded back
** with col2im. Pools loop over windows with channels innermost; their
** gradients are race-free: each thread owns the input lines it writes.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"
#include "vexp.h"

/* {==== Lines along an axis: line l covers x[o, :, i] with o = l / inner, i = l % inner */
typedef struct line_job {
    const void *x, *lab;       /* logits, dense labels (xent) */
    void *y;
    int64_t len, inner;
    int log;                   /* log_softmax */
} line_job;

static int64_t line_base(const line_job *j, int64_t l) {
    return (l / j->inner) * j->len * j->inner + l % j->inner;
}

static int64_t line_grain(int64_t len) {
    int64_t g = LTF_CPU_GRAIN / (len > 0 ? len : 1);
    return g > 0 ? g : 1;
}

#define SOFTMAX_LINES(NAME, T, EXP, LOG)                                       \
    static void NAME(void *arg, int64_t begin, int64_t end) {                  \
        const line_job *j = arg;                                               \
        int64_t len = j->len, st = j->inner;                                   \
        for (int64_t l = begin; l < end; l++) {                                \
            int64_t base = line_base(j, l);                                    \
            const T *x = (const T *)j->x + base;                               \
            T *y = (T *)j->y + base;                                           \
            T mx = x[0];                                                       \
            for (int64_t q = 1; q < len; q++) if (x[q * st] > mx) mx = x[q * st]; \
            double sum = 0;                                                    \
            if (j->log) {                                                      \
                for (int64_t q = 0; q < len; q++) sum += EXP(x[q * st] - mx);  \
                T lse = (T)LOG((T)sum);                                        \
                for (int64_t q = 0; q < len; q++) y[q * st] = x[q * st] - mx - lse; \
            } else {                                                           \
                for (int64_t q = 0; q < len; q++) {                            \
                    T e = EXP(x[q * st] - mx);                                 \
                    y[q * st] = e;                                             \
                    sum += e;                                                  \
                }                                                              \
                T inv = (T)(1.0 / sum);                                        \
                for (int64_t q = 0; q < len; q++) y[q * st] *= inv;            \
            }                                                                  \
        }                                                                      \
    }
SOFTMAX_LINES(softmax_strided_f32, float, expf, logf)
SOFTMAX_LINES(softmax_f64, double, exp, log)

/* float32 lines along the last axis (attention scores, logits): exp by
** ltf_cpu_vexpf and sums in 8 partial lanes, so the loops vectorize; the
** same maximum-subtracted form as SOFTMAX_LINES. */
LTF_WIDE_CLONES static void softmax_last_f32(void *arg, int64_t begin, int64_t end) {
    const line_job *j = arg;
    int64_t len = j->len;
    for (int64_t l = begin; l < end; l++) {
        const float *x = (const float *)j->x + l * len;
        float *y = (float *)j->y + l * len;
        float mx = x[0];
        int64_t q = 0;
        if (len >= 8) {                 /* 8 running maxima: a vector max */
            float m8[8];
            for (int k = 0; k < 8; k++) m8[k] = x[k];
            for (q = 8; q + 8 <= len; q += 8)
                for (int k = 0; k < 8; k++) m8[k] = x[q + k] > m8[k] ? x[q + k] : m8[k];
            for (int k = 0; k < 8; k++) mx = m8[k] > mx ? m8[k] : mx;
        }
        for (; q < len; q++) mx = x[q] > mx ? x[q] : mx;
        float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        q = 0;
        for (; q + 8 <= len; q += 8)
            for (int k = 0; k < 8; k++) {
                float e = ltf_cpu_vexpf(x[q + k] - mx);
                y[q + k] = e;               /* log_softmax: scratch, overwritten below */
                part[k] += e;
            }
        double sum = 0;
        for (; q < len; q++) {
            float e = ltf_cpu_vexpf(x[q] - mx);
            y[q] = e;
            sum += e;
        }
        for (int k = 0; k < 8; k++) sum += part[k];
        if (j->log) {
            float sub = mx + (float)log(sum);
            for (q = 0; q < len; q++) y[q] = x[q] - sub;
        } else {
            float inv = (float)(1.0 / sum);
            for (q = 0; q < len; q++) y[q] *= inv;
        }
    }
}

static void softmax_f32(void *arg, int64_t begin, int64_t end) {
    const line_job *j = arg;
    if (j->inner == 1) softmax_last_f32(arg, begin, end);
    else softmax_strided_f32(arg, begin, end);
}

/* loss = sum_q labels_q * (log(sum exp(x - max)) - (x_q - max)) */
#define XENT_LINES(NAME, T, EXP)                                               \
    static void NAME(void *arg, int64_t begin, int64_t end) {                  \
        const line_job *j = arg;                                               \
        int64_t len = j->len, st = j->inner;                                   \
        for (int64_t l = begin; l < end; l++) {                                \
            int64_t base = line_base(j, l);                                    \
            const T *x = (const T *)j->x + base, *lab = (const T *)j->lab + base; \
            T mx = x[0];                                                       \
            for (int64_t q = 1; q < len; q++) if (x[q * st] > mx) mx = x[q * st]; \
            double sum = 0, loss = 0;                                          \
            for (int64_t q = 0; q < len; q++) sum += EXP(x[q * st] - mx);      \
            double lse = log(sum);                                             \
            for (int64_t q = 0; q < len; q++)                                  \
                loss += (double)lab[q * st] * (lse - (double)(x[q * st] - mx)); \
            ((T *)j->y)[l] = (T)loss;                                          \
        }                                                                      \
    }
XENT_LINES(xent_f32, float, expf)
XENT_LINES(xent_f64, double, exp)

/* Split a tensor's shape around 'axis' (0-based or negative). Only for a
** non-empty result: 'outer' and 'inner' may overflow past a 0 dim. */
static void split_axis(const ltf_tensor *t, int64_t axis, int64_t *outer, int64_t *len, int64_t *inner) {
    int ax = (int)(axis < 0 ? axis + t->rank : axis);
    *outer = 1;
    *inner = 1;
    for (int i = 0; i < ax; i++) *outer *= t->dims[i];
    for (int i = ax + 1; i < t->rank; i++) *inner *= t->dims[i];
    *len = t->dims[ax];
}

ltf_status ltf_cpu_nn_softmax(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    if (out[0]->numel == 0) return LTF_OK;
    int64_t outer, len, inner;
    split_axis(in[0], a->i[0], &outer, &len, &inner);
    line_job j = { LTF_DATA(in[0]), NULL, LTF_DATA(out[0]), len, inner, def->code == 1 };
    ltf_pool_for(&ctx->pool, outer * inner, line_grain(len),
                 in[0]->dtype == LTF_DTYPE_FLOAT32 ? softmax_f32 : softmax_f64, &j);
    return LTF_OK;
}

ltf_status ltf_cpu_nn_softmax_xent(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                   const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)nin; (void)nout;
    if (out[0]->numel == 0) return LTF_OK;   /* and otherwise 'outer' and 'inner' (the output's) fit */
    int64_t outer, len, inner;
    split_axis(in[1], a->i[0], &outer, &len, &inner);
    if (len == 0) {   /* no classes: every loss is an empty sum */
        memset(LTF_DATA(out[0]), 0, (size_t)out[0]->numel * ltf_dtype_size(out[0]->dtype));
        return LTF_OK;
    }
    line_job j = { LTF_DATA(in[1]), LTF_DATA(in[0]), LTF_DATA(out[0]), len, inner, 0 };
    ltf_pool_for(&ctx->pool, outer * inner, line_grain(len), in[1]->dtype == LTF_DTYPE_FLOAT32 ? xent_f32 : xent_f64,
                 &j);
    return LTF_OK;
}
/* }==== */

/* {==== Sparse softmax cross-entropy: labels are 1-based class indices */
typedef struct sparse_job {
    const void *x, *labels;
    void *y;
    int64_t classes;
    int labels64;
} sparse_job;

static int64_t label_at(const sparse_job *j, int64_t i) {
    return j->labels64 ? ((const int64_t *)j->labels)[i] : ((const int32_t *)j->labels)[i];
}

#define SPARSE_LINES(NAME, T, EXP)                                             \
    static void NAME(void *arg, int64_t begin, int64_t end) {                  \
        const sparse_job *j = arg;                                             \
        int64_t c = j->classes;                                                \
        for (int64_t l = begin; l < end; l++) {                                \
            const T *x = (const T *)j->x + l * c;                              \
            T mx = x[0];                                                       \
            for (int64_t q = 1; q < c; q++) if (x[q] > mx) mx = x[q];          \
            double sum = 0;                                                    \
            for (int64_t q = 0; q < c; q++) sum += EXP(x[q] - mx);             \
            ((T *)j->y)[l] = (T)(log(sum) - (double)(x[label_at(j, l) - 1] - mx)); \
        }                                                                      \
    }
SPARSE_LINES(sparse_f32, float, expf)
SPARSE_LINES(sparse_f64, double, exp)

/* The 1-based multi-index of flat position 'i' in 't', as "[2, 3]". */
static const char *index_str(const ltf_tensor *t, int64_t i, char *buf, size_t size) {
    int64_t idx[LTF_MAX_RANK];
    for (int d = t->rank - 1; d >= 0; d--) {
        idx[d] = t->dims[d] ? i % t->dims[d] : 0;
        i = t->dims[d] ? i / t->dims[d] : 0;
    }
    size_t n = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < t->rank && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? ", " : "", (long long)idx[d] + 1);
    if (n < size) snprintf(buf + n, size - n, "]");
    return buf;
}

ltf_status ltf_cpu_nn_sparse_softmax_xent(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                          const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    const ltf_tensor *labels = in[0], *logits = in[1];
    sparse_job j = { LTF_DATA(logits), LTF_DATA(labels), LTF_DATA(out[0]), logits->dims[logits->rank - 1],
                     labels->dtype == LTF_DTYPE_INT64 };
    int64_t n = labels->numel;
    for (int64_t i = 0; i < n; i++) {
        int64_t k = label_at(&j, i);
        if (k < 1 || k > j.classes) {
            char where[LTF_MAX_RANK * 24];
            if (j.classes == 0)
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                                "%s: logits have no classes (their last dimension is 0), got label %lld at labels%s",
                                def->name, (long long)k, index_str(labels, i, where, sizeof where));
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: labels are 1-based class indices, valid range 1..%lld (label k selects logits[k]), "
                            "got %lld at labels%s", def->name, (long long)j.classes, (long long)k,
                            index_str(labels, i, where, sizeof where));
        }
    }
    ltf_pool_for(&ctx->pool, n, line_grain(j.classes), logits->dtype == LTF_DTYPE_FLOAT32 ? sparse_f32 : sparse_f64,
                 &j);
    return LTF_OK;
}
/* }==== */

/* {==== Windows */
typedef struct win_plan {
    int64_t n, h, w, c;        /* input NHWC */
    int64_t kh, kw, o;         /* window (conv: filter height/width, output channels) */
    int64_t oh, ow;            /* output spatial size */
    int64_t sh, sw, dh, dw;    /* strides, dilations */
    int64_t pt, pl;            /* padding before (top, left) */
    size_t es;
} win_plan;

/* Padding before along one dim: TensorFlow's SAME puts the smaller half first. */
static int64_t pad_before(int padding, int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t expl) {
    if (padding == LTF_PADDING_EXPLICIT) return expl;
    if (padding != LTF_PADDING_SAME) return 0;
    int64_t total = (out - 1) * s + (k - 1) * d + 1 - in;
    return total > 0 ? total / 2 : 0;
}
/* }==== */

/* {==== conv2d: im2col + GEMM */
#define CONV_COL_BUDGET ((size_t)4 << 20)   /* bytes of im2col scratch at most (unless one row is larger) */

/* The window plan of conv2d(x, f) -> y from the three NHWC/HWIO shapes. */
static win_plan conv_plan(const int64_t *xd, const int64_t *fd, const int64_t *yd, const ltf_attrs *a, size_t es) {
    int padding = (int)a->i[0];
    win_plan p = { xd[0], xd[1], xd[2], xd[3], fd[0], fd[1], fd[3], yd[1], yd[2], a->ints[0], a->ints[1],
                   a->nints >= 4 ? a->ints[2] : 1, a->nints >= 4 ? a->ints[3] : 1, 0, 0, es };
    p.pt = pad_before(padding, p.h, p.oh, p.kh, p.sh, p.dh, padding == LTF_PADDING_EXPLICIT ? a->ints[4] : 0);
    p.pl = pad_before(padding, p.w, p.ow, p.kw, p.sw, p.dw, padding == LTF_PADDING_EXPLICIT ? a->ints[6] : 0);
    return p;
}

/* Is the input already the column matrix? 1x1 filters at stride 1 without
** padding, or a filter covering the whole unpadded image. */
static int conv_is_gemm(const win_plan *p) {
    int pointwise = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->pt == 0 && p->pl == 0 &&
                    p->oh == p->h && p->ow == p->w;
    int whole = p->kh == p->h && p->kw == p->w && p->oh == 1 && p->ow == 1 && p->pt == 0 && p->pl == 0 &&
                (p->dh == 1 || p->kh == 1) && (p->dw == 1 || p->kw == 1);
    return pointwise || whole;
}

/* Column-matrix rows per chunk: within the scratch budget, at least 'unit'
** (rounded down to a multiple of it), at most 'rows'. */
static int64_t conv_chunk_units(const win_plan *p, int64_t rows, int64_t unit) {
    size_t unitb = (size_t)(p->kh * p->kw * p->c) * p->es * (size_t)unit;
    int64_t chunk = unitb ? (int64_t)(CONV_COL_BUDGET / unitb) * unit : rows;
    if (chunk < unit) chunk = unit;
    if (chunk > rows) chunk = rows;
    return chunk > 0 ? chunk : 1;
}


typedef struct col_job {
    const win_plan *p;
    const char *x;
    char *col;
    int64_t row0;              /* first output row (n, oh, ow flattened) of the chunk */
} col_job;

/* Copy 'nb' bytes of whole elements: short runs (a few channels) inline,
** where a memcpy call would cost more than the copy. */
static inline void copy_run(char *dst, const char *src, size_t nb) {
    if (nb <= 256 && nb % 4 == 0) {
        uint32_t *d = (uint32_t *)(void *)dst;
        const uint32_t *s = (const uint32_t *)(const void *)src;
        for (size_t i = 0; i < nb / 4; i++) memcpy(d + i, s + i, 4);
    } else {
        memcpy(dst, src, nb);
    }
}

/* Row r of the column matrix: the receptive field of output pixel r, in
** (kh, kw, c) order to match HWIO filters; padding reads as zeros. Without
** dilation a kernel row's taps are one contiguous run of the input row. */
static void im2col_range(void *arg, int64_t begin, int64_t end) {
    const col_job *j = arg;
    const win_plan *p = j->p;
    size_t es = p->es, cb = (size_t)p->c * es;
    size_t rowb = (size_t)(p->kh * p->kw) * cb, kwb = (size_t)p->kw * cb;
    for (int64_t r = begin; r < end; r++) {
        int64_t g = j->row0 + r, n = g / (p->oh * p->ow), rem = g % (p->oh * p->ow);
        int64_t oh = rem / p->ow, ow = rem % p->ow;
        char *dst = j->col + (size_t)r * rowb;
        int64_t iw0 = ow * p->sw - p->pl;
        /* taps [lo, hi) of a kernel row read inside the image */
        int64_t lo = 0, hi = p->kw;
        if (p->dw == 1) {
            if (iw0 < 0) lo = -iw0 < p->kw ? -iw0 : p->kw;
            if (iw0 + p->kw > p->w) hi = p->w - iw0 > lo ? p->w - iw0 : lo;
        }
        for (int64_t kh = 0; kh < p->kh; kh++, dst += kwb) {
            int64_t ih = oh * p->sh - p->pt + kh * p->dh;
            if (ih < 0 || ih >= p->h) {
                memset(dst, 0, kwb);
                continue;
            }
            const char *src_row = j->x + (size_t)((n * p->h + ih) * p->w) * cb;
            if (p->dw == 1) {
                if (lo > 0) memset(dst, 0, (size_t)lo * cb);
                if (hi > lo) copy_run(dst + (size_t)lo * cb, src_row + (size_t)(iw0 + lo) * cb, (size_t)(hi - lo) * cb);
                if (hi < p->kw) memset(dst + (size_t)hi * cb, 0, (size_t)(p->kw - hi) * cb);
                continue;
            }
            char *d = dst;
            for (int64_t kw = 0; kw < p->kw; kw++, d += cb) {
                int64_t iw = iw0 + kw * p->dw;
                if (iw < 0 || iw >= p->w) memset(d, 0, cb);
                else memcpy(d, src_row + (size_t)iw * cb, cb);
            }
        }
    }
}

/* The column matrix in tiles of rows, a tile's columns small enough to stay
** in a core's L2 cache while the GEMM that reads them runs: the pool's
** threads each take a range of tiles and run im2col then a one-thread GEMM
** per tile, so the columns never go out to memory and back, and no thread
** waits between an im2col pass and a GEMM on OpenBLAS's threads. */
#define CONV_TILE_BYTES ((size_t)96 << 10)
#define CONV_TILE_MIN_ROWS 64   /* below that, repacking the filters per tile costs too much */

static int64_t conv_tile_rows(const win_plan *p, int64_t rows) {
    size_t rowb = (size_t)(p->kh * p->kw * p->c) * p->es;
    int64_t t = rowb ? (int64_t)(CONV_TILE_BYTES / rowb) : rows;
    if (t < CONV_TILE_MIN_ROWS) t = CONV_TILE_MIN_ROWS;
    if (t > rows) t = rows;
    return t > 0 ? t : 1;
}

typedef struct conv_tile_job {
    const win_plan *p;
    ltf_dtype dt;
    const char *x;             /* images the columns are read from */
    const char *f;             /* forward: filters (k, o) */
    char *y;                   /* forward: output (rows, o) */
    const char *dy;            /* filter gradient: dy (rows, o) */
    char *part;                /* filter gradient: a (k, o) partial sum per range of tiles */
    int64_t rows, tile, k;
    int64_t per;               /* filter gradient: the tiles of one range at least (the pool's grain) */
    int failed;                /* a scratch allocation failed (atomic) */
} conv_tile_job;

/* Forward tiles [b, e): y rows = columns @ f. */
static void conv_forward_tiles(void *arg, int64_t b, int64_t e) {
    conv_tile_job *j = arg;
    const win_plan *p = j->p;
    char *col = malloc((size_t)(j->tile * j->k) * p->es);
    if (!col) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (int64_t t = b; t < e; t++) {
        int64_t r0 = t * j->tile, nr = j->rows - r0 < j->tile ? j->rows - r0 : j->tile;
        col_job cj = { p, j->x, col, r0 };
        im2col_range(&cj, 0, nr);
        ltf_cpu_blas_gemm_here(j->dt, 0, 0, nr, p->o, j->k, 1.0, col, j->k, j->f, p->o, 0.0,
                               j->y + (size_t)(r0 * p->o) * p->es, p->o);
    }
    free(col);
}

/* Filter-gradient tiles [b, e): this range's partial df = sum of columns^T @ dy rows. */
static void conv_filter_tiles(void *arg, int64_t b, int64_t e) {
    conv_tile_job *j = arg;
    const win_plan *p = j->p;
    char *col = malloc((size_t)(j->tile * j->k) * p->es);
    if (!col) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    char *part = j->part + (size_t)((b / j->per) * j->k * p->o) * p->es;
    for (int64_t t = b; t < e; t++) {
        int64_t r0 = t * j->tile, nr = j->rows - r0 < j->tile ? j->rows - r0 : j->tile;
        col_job cj = { p, j->x, col, r0 };
        im2col_range(&cj, 0, nr);
        ltf_cpu_blas_gemm_here(j->dt, 1, 0, j->k, p->o, nr, 1.0, col, j->k, j->dy + (size_t)(r0 * p->o) * p->es,
                               p->o, t == b ? 0.0 : 1.0, part, p->o);
    }
    free(col);
}

/* The direct path (conv_direct.c) takes float32 at stride 1 without
** dilation and output channels in multiples of 8, for windows of at most
** CONV_DIRECT_MAX_K inputs (3x3 over 128 channels): past that (resnet18's
** 3x3 convolutions over 256 and 512 channels) its register blocking loses
** to im2col + GEMM, 4x at 512 channels, 1.3x at 256 and batch 16
** (bench/onnx.sh). */
#define CONV_DIRECT_MAX_K 1152
#define CONV_WHOLE_COL_BYTES ((size_t)16 << 20)   /* conv_forward's one-GEMM path: columns at most */
static int conv_direct(ltf_dtype dt, const win_plan *p) {
    if (p->kh * p->kw * p->c > CONV_DIRECT_MAX_K) return 0;
    if (!(dt == LTF_DTYPE_FLOAT32 && p->sh == 1 && p->sw == 1 && p->dh == 1 && p->dw == 1 &&
          ltf_cpu_conv_direct_ok(p->c, p->o) && p->oh > 0 && p->ow > 0 && p->kh > 0 && p->kw > 0))
        return 0;
    /* the padded copy at most 4x the input (large explicit pads: im2col) */
    int64_t hp = p->oh + p->kh - 1, wp = p->ow + p->kw - 1, padded;
    if (__builtin_mul_overflow(hp, wp, &padded) || __builtin_mul_overflow(padded, p->n * p->c, &padded)) return 0;
    return padded <= 4 * (p->n * p->h * p->w * p->c) + 65536;
}

/* The packed path (conv_direct.c, AVX-512 machines): float32 without
** dilation, output channels in multiples of 32, any stride; over fewer than
** 16 channels the padded copy at most 4x the input. LTF_CONV_PACKED=0 turns it off (benchmarks). */
#define CONV_PACKED_COPY_C 16   /* fewer input channels: a padded copy, not the kernel's zero rows */
static int conv_packed(ltf_dtype dt, const win_plan *p) {
    static int off_env = -1;   /* read once; the race of two first calls is benign (both store the same) */
    int off = __atomic_load_n(&off_env, __ATOMIC_RELAXED);
    if (off < 0) {
        const char *e = getenv("LTF_CONV_PACKED");
        off = e && e[0] == '0';
        __atomic_store_n(&off_env, off, __ATOMIC_RELAXED);
    }
    if (off || dt != LTF_DTYPE_FLOAT32 || p->dh != 1 || p->dw != 1 || !ltf_cpu_conv_packed_ok(p->o) || p->oh <= 0 ||
        p->ow <= 0 || p->kh <= 0 || p->kw <= 0 || p->c <= 0)
        return 0;
    if (p->c >= CONV_PACKED_COPY_C) return 1;
    int64_t hp = (p->oh - 1) * p->sh + p->kh, wp = (p->ow - 1) * p->sw + p->kw, padded;
    if (__builtin_mul_overflow(hp, wp, &padded) || __builtin_mul_overflow(padded, p->n * p->c, &padded)) return 0;
    return padded <= 4 * (p->n * p->h * p->w * p->c) + 65536;
}

/* The input as the direct and packed paths read it: 'X' itself when every
** window lies inside it, else a zero-padded copy ((oh - 1) sh + kh) x
** ((ow - 1) sw + kw) in '*pad' (freed by the caller). NULL when out of memory. */
static const float *conv_direct_input(ltf_ctx *ctx, const win_plan *p, const char *X, float **pad,
                                      ltf_conv_geom *g) {
    int64_t hp = (p->oh - 1) * p->sh + p->kh, wp = (p->ow - 1) * p->sw + p->kw;
    *pad = NULL;
    if (p->pt == 0 && p->pl == 0 && hp <= p->h && wp <= p->w) {   /* every window inside: X itself */
        *g = (ltf_conv_geom){ p->n, p->h, p->w, p->c, p->kh, p->kw, p->o, p->oh, p->ow };
        return (const float *)(const void *)X;
    }
    *g = (ltf_conv_geom){ p->n, hp, wp, p->c, p->kh, p->kw, p->o, p->oh, p->ow };
    size_t nb = sizeof(float) * (size_t)(p->n * hp * wp * p->c);
    float *b = malloc(nb ? nb : 1);
    if (!b) {
        ltf_fail_oom(ctx, "conv2d padding scratch", nb);
        return NULL;
    }
    const float *x = (const float *)(const void *)X;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t i = 0; i < hp; i++) {
            float *d = b + ((n * hp + i) * wp) * p->c;
            int64_t ih = i - p->pt;
            if (ih < 0 || ih >= p->h) {
                memset(d, 0, sizeof(float) * (size_t)(wp * p->c));
                continue;
            }
            /* columns [lo, hi) of the padded row come from the image */
            int64_t lo = p->pl < wp ? p->pl : wp, hi = p->pl + p->w < wp ? p->pl + p->w : wp;
            if (lo < 0) lo = 0;
            if (hi < lo) hi = lo;
            memset(d, 0, sizeof(float) * (size_t)(lo * p->c));
            if (hi > lo)
                memcpy(d + lo * p->c, x + ((n * p->h + ih) * p->w + (lo - p->pl)) * p->c,
                       sizeof(float) * (size_t)((hi - lo) * p->c));
            memset(d + hi * p->c, 0, sizeof(float) * (size_t)((wp - hi) * p->c));
        }
    *pad = b;
    return b;
}

/* y = conv(x, f) under plan 'p'. */
static ltf_status conv_forward(ltf_ctx *ctx, const char *op, ltf_dtype dt, const win_plan *p, const char *X,
                               const char *F, char *Y) {
    int64_t rows = p->n * p->oh * p->ow, k = p->kh * p->kw * p->c;
    if (k == 0) {   /* no input channels: every sum is empty (and the window may be huge) */
        memset(Y, 0, (size_t)(rows * p->o) * p->es);
        return LTF_OK;
    }
    if (conv_is_gemm(p)) return ltf_cpu_blas_gemm(ctx, op, dt, 0, 0, rows, p->o, k, 1.0, X, k, F, p->o, 0.0, Y, p->o);
    if (!ltf_cpu_blas_fits(rows, p->o, k))   /* let the GEMM's own check word the error */
        return ltf_cpu_blas_gemm(ctx, op, dt, 0, 0, rows, p->o, k, 1.0, X, k, F, p->o, 0.0, Y, p->o);
    if (conv_packed(dt, p)) {
        /* padding read as a zero row in the kernel; over a few channels
        ** (resnet's stem) a padded copy costs less than the kernel's edge blocks */
        float *pad = NULL;
        ltf_conv_geom g = { p->n, p->h, p->w, p->c, p->kh, p->kw, p->o, p->oh, p->ow };
        const float *x = (const float *)(const void *)X;
        int64_t pt = p->pt, pl = p->pl;
        if (p->c < CONV_PACKED_COPY_C) {
            x = conv_direct_input(ctx, p, X, &pad, &g);
            if (!x) return ctx->last_status;
            pt = pl = 0;
        }
        ltf_status st = ltf_cpu_conv_packed_f32(ctx, &g, p->sh, p->sw, pt, pl, x, (const float *)(const void *)F,
                                                (float *)(void *)Y);
        free(pad);
        return st;
    }
    if (conv_direct(dt, p)) {
        float *pad;
        ltf_conv_geom g;
        const float *x = conv_direct_input(ctx, p, X, &pad, &g);
        if (!x) return ctx->last_status;
        ltf_cpu_conv_direct_f32(ctx, &g, x, (const float *)(const void *)F, (float *)(void *)Y);
        free(pad);
        return LTF_OK;
    }
    int64_t tile = conv_tile_rows(p, rows), ntiles = (rows + tile - 1) / tile;
    size_t colb = (size_t)(rows * k) * p->es;
    if (ntiles < ctx->pool.nthreads && colb <= CONV_WHOLE_COL_BYTES) {
        /* fewer tiles than threads (a batch of one at 7x7): the whole column
        ** matrix, then one GEMM on BLAS's threads */
        char *col = malloc(colb ? colb : 1);
        if (!col) return ltf_fail_oom(ctx, "conv2d scratch", colb);
        col_job cj = { p, X, col, 0 };
        im2col_range(&cj, 0, rows);
        ltf_status st = ltf_cpu_blas_gemm(ctx, op, dt, 0, 0, rows, p->o, k, 1.0, col, k, F, p->o, 0.0, Y, p->o);
        free(col);
        return st;
    }
    conv_tile_job j = { p, dt, X, F, Y, NULL, NULL, rows, tile, k, 1, 0 };
    ltf_status st = ltf_cpu_blas_serial(ctx, op);
    if (st != LTF_OK) return st;
    ltf_pool_for(&ctx->pool, ntiles, 1, conv_forward_tiles, &j);
    if (j.failed) return ltf_fail_oom(ctx, "conv2d scratch", (size_t)(tile * k) * p->es);
    return LTF_OK;
}

ltf_status ltf_cpu_nn_conv2d(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *x = in[0], *f = in[1];
    ltf_tensor *y = out[0];
    if (y->numel == 0) return LTF_OK;
    win_plan p = conv_plan(x->dims, f->dims, y->dims, a, ltf_dtype_size(x->dtype));
    return conv_forward(ctx, def->name, x->dtype, &p, LTF_DATA(x), LTF_DATA(f), LTF_DATA(y));
}
/* {==== conv2d gradients */
/* conv2d_backprop_filter: df (K, O) = sum over chunks of col^T @ dy. */
ltf_status ltf_cpu_nn_conv2d_backprop_filter(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                             const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *x = in[0], *dy = in[1];
    ltf_tensor *df = out[0];
    win_plan p = conv_plan(x->dims, df->dims, dy->dims, a, ltf_dtype_size(x->dtype));
    int64_t rows = p.n * p.oh * p.ow, k = p.kh * p.kw * p.c;
    if (df->numel == 0) return LTF_OK;
    const char *X = LTF_DATA(x), *DY = LTF_DATA(dy);
    char *DF = LTF_DATA(df);
    if (rows == 0 || conv_is_gemm(&p))   /* rows == 0: gemm zeroes df */
        return ltf_cpu_blas_gemm(ctx, def->name, x->dtype, 1, 0, k, p.o, rows, 1.0, X, k, DY, p.o, 0.0, DF, p.o);
    if (!ltf_cpu_blas_fits(rows, p.o, k))
        return ltf_cpu_blas_gemm(ctx, def->name, x->dtype, 1, 0, k, p.o, rows, 1.0, X, k, DY, p.o, 0.0, DF, p.o);
    if (conv_direct(x->dtype, &p)) {
        float *pad;
        ltf_conv_geom g;
        const float *xp = conv_direct_input(ctx, &p, X, &pad, &g);
        if (!xp) return ctx->last_status;
        ltf_status st = ltf_cpu_conv_direct_filter_f32(ctx, &g, xp, (const float *)(const void *)DY,
                                                       (float *)(void *)DF);
        free(pad);
        return st;
    }
    int64_t tile = conv_tile_rows(&p, rows), ntiles = (rows + tile - 1) / tile;
    int nth = ctx->pool.nthreads > 0 ? ctx->pool.nthreads : 1;
    int64_t per = (ntiles + nth - 1) / nth, nparts = (ntiles + per - 1) / per;
    size_t partb = (size_t)(k * p.o) * p.es;
    ltf_status st = ltf_cpu_blas_serial(ctx, def->name);
    if (st != LTF_OK) return st;
    char *part = nparts > 1 ? calloc((size_t)nparts, partb) : DF;
    if (!part) return ltf_fail_oom(ctx, "conv2d_backprop_filter scratch", (size_t)nparts * partb);
    conv_tile_job j = { &p, x->dtype, X, NULL, NULL, DY, part, rows, tile, k, per, 0 };
    ltf_pool_for(&ctx->pool, ntiles, per, conv_filter_tiles, &j);
    if (!j.failed && nparts > 1) {   /* df = the sum of the ranges' partial sums, in range order */
        int64_t m = k * p.o;
        if (x->dtype == LTF_DTYPE_FLOAT32) {
            float *d = (float *)DF;
            const float *s0 = (const float *)part;
            for (int64_t i = 0; i < m; i++) d[i] = s0[i];
            for (int64_t q = 1; q < nparts; q++) {
                const float *sq = s0 + q * m;
                for (int64_t i = 0; i < m; i++) d[i] += sq[i];
            }
        } else {
            double *d = (double *)DF;
            const double *s0 = (const double *)part;
            for (int64_t i = 0; i < m; i++) d[i] = s0[i];
            for (int64_t q = 1; q < nparts; q++) {
                const double *sq = s0 + q * m;
                for (int64_t i = 0; i < m; i++) d[i] += sq[i];
            }
        }
    }
    if (part != DF) free(part);
    if (j.failed) return ltf_fail_oom(ctx, "conv2d_backprop_filter scratch", (size_t)(tile * k) * p.es);
    return LTF_OK;
}

/* col2im for the output lines [l0, l1) (line = (n, oh), ow columns each):
** input line (n, ih) gathers, from every kernel row kh whose output row oh
** lies in the chunk, the columns (ow, kw) that read it. One thread per input
** line: no races. */
typedef struct col2im_job {
    const win_plan *p;
    const char *col;           /* (l1 - l0) * ow rows of k */
    char *dx;
    int64_t l0, l1, n0;        /* chunk lines; first image of the chunk */
} col2im_job;

#define COL2IM(NAME, T)                                                        \
    static void NAME(void *arg, int64_t begin, int64_t end) {                  \
        const col2im_job *j = arg;                                             \
        const win_plan *p = j->p;                                              \
        int64_t c = p->c, k = p->kh * p->kw * c;                               \
        for (int64_t r = begin; r < end; r++) {                                \
            int64_t n = j->n0 + r / p->h, ih = r % p->h;                       \
            T *dx = (T *)j->dx + (n * p->h + ih) * p->w * c;                   \
            for (int64_t kh = 0; kh < p->kh; kh++) {                           \
                int64_t t = ih + p->pt - kh * p->dh;                           \
                if (t < 0 || t % p->sh) continue;                              \
                int64_t oh = t / p->sh, line = n * p->oh + oh;                 \
                if (oh >= p->oh || line < j->l0 || line >= j->l1) continue;    \
                const T *crow = (const T *)j->col + (line - j->l0) * p->ow * k + kh * p->kw * c; \
                for (int64_t ow = 0; ow < p->ow; ow++) {                       \
                    const T *src = crow + ow * k;                              \
                    int64_t iw = ow * p->sw - p->pl;                           \
                    for (int64_t kw = 0; kw < p->kw; kw++, iw += p->dw) {      \
                        if (iw < 0 || iw >= p->w) continue;                    \
                        T *d = dx + iw * c;                                    \
                        const T *s = src + kw * c;                             \
                        for (int64_t q = 0; q < c; q++) d[q] += s[q];          \
                    }                                                          \
                }                                                              \
            }                                                                  \
        }                                                                      \
    }
COL2IM(col2im_f32, float)
COL2IM(col2im_f64, double)

/* At stride 1 the input gradient is itself a convolution: of dy, padded
** (k - 1) * d - pad before, with the filters flipped in space and their
** depths swapped (f'[kh, kw, o, c] = f[KH-1-kh, KW-1-kw, c, o]). That is a
** forward conv2d (im2col + GEMM, no scatter); it moves O / C times the
** data of col2im's path, so it is taken when O is at most about C. */
static ltf_status conv_transposed(ltf_ctx *ctx, const char *op, ltf_dtype dt, const win_plan *p, const char *F,
                                  const char *DY, char *DX) {
    int64_t kk = p->kh * p->kw;
    size_t es = p->es;
    char *ff = malloc((size_t)(kk * p->c * p->o) * es);
    if (!ff) return ltf_fail_oom(ctx, "conv2d_backprop_input scratch", (size_t)(kk * p->c * p->o) * es);
    for (int64_t s = 0; s < kk; s++) {
        const char *src = F + (size_t)((kk - 1 - s) * p->c * p->o) * es;   /* (c, o) block of the flipped tap */
        char *dst = ff + (size_t)(s * p->o * p->c) * es;                    /* (o, c) block */
        for (int64_t c = 0; c < p->c; c++)
            for (int64_t o = 0; o < p->o; o++)
                memcpy(dst + (size_t)(o * p->c + c) * es, src + (size_t)(c * p->o + o) * es, es);
    }
    win_plan q = { p->n, p->oh, p->ow, p->o, p->kh, p->kw, p->c, p->h, p->w, 1, 1, p->dh, p->dw,
                   (p->kh - 1) * p->dh - p->pt, (p->kw - 1) * p->dw - p->pl, es };
    ltf_status st = conv_forward(ctx, op, dt, &q, DY, ff, DX);
    free(ff);
    return st;
}

/* conv2d_backprop_input: per chunk of output lines, dcol = dy @ f^T, then
** col2im into dx (zeroed first: input pixels no window reads stay 0). */
ltf_status ltf_cpu_nn_conv2d_backprop_input(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                            const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *f = in[0], *dy = in[1];
    ltf_tensor *dx = out[0];
    win_plan p = conv_plan(dx->dims, f->dims, dy->dims, a, ltf_dtype_size(dx->dtype));
    int64_t rows = p.n * p.oh * p.ow, k = p.kh * p.kw * p.c;
    if (dx->numel == 0) return LTF_OK;
    const char *F = LTF_DATA(f), *DY = LTF_DATA(dy);
    char *DX = LTF_DATA(dx);
    if (conv_is_gemm(&p))
        return ltf_cpu_blas_gemm(ctx, def->name, dx->dtype, 0, 1, rows, k, p.o, 1.0, DY, p.o, F, p.o, 0.0, DX, k);
    if (p.sh == 1 && p.sw == 1 && p.o <= 2 * p.c && rows > 0)
        return conv_transposed(ctx, def->name, dx->dtype, &p, F, DY, DX);
    memset(DX, 0, (size_t)dx->numel * p.es);
    if (rows == 0) return LTF_OK;
    int64_t lines = p.n * p.oh;
    int64_t chunk = conv_chunk_units(&p, rows, p.ow) / p.ow;   /* lines per chunk */
    char *col = malloc((size_t)(chunk * p.ow) * (size_t)k * p.es);
    if (!col) return ltf_fail_oom(ctx, "conv2d_backprop_input scratch", (size_t)(chunk * p.ow) * (size_t)k * p.es);
    ltf_status st = LTF_OK;
    int64_t work = p.w * p.kh * p.kw * p.c, grain = LTF_CPU_GRAIN / (work > 0 ? work : 1);
    for (int64_t l0 = 0; l0 < lines && st == LTF_OK; l0 += chunk) {
        int64_t l1 = lines - l0 < chunk ? lines : l0 + chunk;
        st = ltf_cpu_blas_gemm(ctx, def->name, dx->dtype, 0, 1, (l1 - l0) * p.ow, k, p.o, 1.0,
                               DY + (size_t)(l0 * p.ow * p.o) * p.es, p.o, F, p.o, 0.0, col, k);
        if (st != LTF_OK) break;
        int64_t n0 = l0 / p.oh, n1 = (l1 - 1) / p.oh + 1;
        col2im_job j = { &p, col, DX, l0, l1, n0 };
        ltf_pool_for(&ctx->pool, (n1 - n0) * p.h, grain > 0 ? grain : 1,
                     dx->dtype == LTF_DTYPE_FLOAT32 ? col2im_f32 : col2im_f64, &j);
    }
    free(col);
    return st;
}
/* }==== */

/* {==== Pools: one output row (n, oh) per unit of work, channels innermost */
typedef struct pool_job {
    const win_plan *p;
    const void *x;
    void *y;
} pool_job;

/* Visit the valid window of output pixel (n, oh, ow): rows [h0, h1), cols [w0, w1). */
#define WINDOW(p, oh, ow, h0, h1, w0, w1)                                      \
    int64_t h0 = (oh) * (p)->sh - (p)->pt, w0 = (ow) * (p)->sw - (p)->pl;     \
    int64_t h1 = h0 + (p)->kh, w1 = w0 + (p)->kw;                              \
    if (h0 < 0) h0 = 0;                                                        \
    if (w0 < 0) w0 = 0;                                                        \
    if (h1 > (p)->h) h1 = (p)->h;                                              \
    if (w1 > (p)->w) w1 = (p)->w;

#define FMAXP(acc, v) ((v) > (acc) || (v) != (v) ? (v) : (acc))   /* NaN propagates */
#define IMAX(acc, v) ((v) > (acc) ? (v) : (acc))

#define MAX_POOL(NAME, T, MAXF)                                                \
    static void NAME(void *arg, int64_t begin, int64_t end) {                  \
        const pool_job *j = arg;                                               \
        const win_plan *p = j->p;                                              \
        int64_t c = p->c;                                                      \
        for (int64_t r = begin; r < end; r++) {                                \
            int64_t n = r / p->oh, oh = r % p->oh;                             \
            for (int64_t ow = 0; ow < p->ow; ow++) {                           \
                T *y = (T *)j->y + ((r * p->ow) + ow) * c;                     \
                WINDOW(p, oh, ow, h0, h1, w0, w1)                              \
                int first = 1;                                                 \
                for (int64_t ih = h0; ih < h1; ih++)                           \
                    for (int64_t iw = w0; iw < w1; iw++) {                     \
                        const T *x = (const T *)j->x + ((n * p->h + ih) * p->w + iw) * c; \
                        if (first) memcpy(y, x, sizeof(T) * (size_t)c);        \
                        else for (int64_t q = 0; q < c; q++) y[q] = MAXF(y[q], x[q]); \
                        first = 0;                                             \
                    }                                                          \
                if (first) memset(y, 0, sizeof(T) * (size_t)c);                \
            }                                                                  \
        }                                                                      \
    }
MAX_POOL(max_f32, float, FMAXP)
MAX_POOL(max_f64, double, FMAXP)
MAX_POOL(max_i32, int32_t, IMAX)
MAX_POOL(max_i64, int64_t, IMAX)
MAX_POOL(max_u8, uint8_t, IMAX)

#define AVG_POOL(NAME, T)                                                      \
    static void NAME(void *arg, int64_t begin, int64_t end) {                  \
        const pool_job *j = arg;                                               \
        const win_plan *p = j->p;                                              \
        int64_t c = p->c;                                                      \
        for (int64_t r = begin; r < end; r++) {                                \
            int64_t n = r / p->oh, oh = r % p->oh;                             \
            for (int64_t ow = 0; ow < p->ow; ow++) {                           \
                T *y = (T *)j->y + ((r * p->ow) + ow) * c;                     \
                WINDOW(p, oh, ow, h0, h1, w0, w1)                              \
                memset(y, 0, sizeof(T) * (size_t)c);                           \
                for (int64_t ih = h0; ih < h1; ih++)                           \
                    for (int64_t iw = w0; iw < w1; iw++) {                     \
                        const T *x = (const T *)j->x + ((n * p->h + ih) * p->w + iw) * c; \
                        for (int64_t q = 0; q < c; q++) y[q] += x[q];          \
                    }                                                          \
                int64_t count = (h1 > h0 ? h1 - h0 : 0) * (w1 > w0 ? w1 - w0 : 0); \
                if (count > 0) {                                               \
                    T inv = (T)1 / (T)count;                                   \
                    for (int64_t q = 0; q < c; q++) y[q] *= inv;               \
                }                                                              \
            }                                                                  \
        }                                                                      \
    }
AVG_POOL(avg_f32, float)
AVG_POOL(avg_f64, double)

ltf_status ltf_cpu_nn_pool2d(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *x = in[0];
    ltf_tensor *y = out[0];
    if (y->numel == 0) return LTF_OK;
    int padding = (int)a->i[0];
    win_plan p = { x->dims[0], x->dims[1], x->dims[2], x->dims[3], a->ints[0], a->ints[1], x->dims[3],
                   y->dims[1], y->dims[2], a->ints[2], a->ints[3], 1, 1, 0, 0, ltf_dtype_size(x->dtype) };
    p.pt = pad_before(padding, p.h, p.oh, p.kh, p.sh, 1, 0);
    p.pl = pad_before(padding, p.w, p.ow, p.kw, p.sw, 1, 0);
    ltf_pool_fn fn = NULL;
    if (def->code == 0) {
        switch (x->dtype) {
        case LTF_DTYPE_FLOAT32: fn = max_f32; break;
        case LTF_DTYPE_FLOAT64: fn = max_f64; break;
        case LTF_DTYPE_INT32: fn = max_i32; break;
        case LTF_DTYPE_INT64: fn = max_i64; break;
        case LTF_DTYPE_UINT8: fn = max_u8; break;
        default: break;
        }
    } else {
        fn = x->dtype == LTF_DTYPE_FLOAT32 ? avg_f32 : x->dtype == LTF_DTYPE_FLOAT64 ? avg_f64 : NULL;
    }
    if (!fn)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: unsupported dtype %s", def->name, ltf_dtype_name(x->dtype));
    pool_job j = { &p, LTF_DATA(x), LTF_DATA(y) };
    /* a window larger than the input (SAME) only visits the input */
    int64_t kh = p.kh < p.h ? p.kh : p.h, kw = p.kw < p.w ? p.kw : p.w;
    int64_t work = p.ow * kh * kw * p.c, grain = LTF_CPU_GRAIN / (work > 0 ? work : 1);
    ltf_pool_for(&ctx->pool, p.n * p.oh, grain > 0 ? grain : 1, fn, &j);
    return LTF_OK;
}
/* }==== */

/* {==== Pool gradients */
/* Argmax over the valid window of (n, oh, ow) for channels [q0, q0 + nc):
** the first maximum in row-major order (ties: the first, as TensorFlow), or
** the first NaN; 'arg' gets the flat pixel index (-1: empty window). */
#define ARGMAX_WINDOW(T)                                                       \
    static void argmax_window_##T(const win_plan *p, const T *x, int64_t n, int64_t oh, int64_t ow, int64_t q0, \
                                  int64_t nc, T *best, int64_t *arg) {         \
        int64_t c = p->c;                                                      \
        WINDOW(p, oh, ow, h0, h1, w0, w1)                                      \
        for (int64_t q = 0; q < nc; q++) arg[q] = -1;                          \
        for (int64_t ih = h0; ih < h1; ih++)                                   \
            for (int64_t iw = w0; iw < w1; iw++) {                             \
                int64_t pix = (n * p->h + ih) * p->w + iw;                     \
                const T *xv = x + pix * c + q0;                                \
                for (int64_t q = 0; q < nc; q++)                               \
                    if (arg[q] < 0 || xv[q] > best[q] || (xv[q] != xv[q] && best[q] == best[q])) { \
                        best[q] = xv[q];                                       \
                        arg[q] = pix;                                          \
                    }                                                          \
            }                                                                  \
    }
ARGMAX_WINDOW(float)
ARGMAX_WINDOW(double)

typedef struct maxgrad_job {
    const win_plan *p;
    const void *x, *g;
    void *out;
    int64_t lines_per_unit;    /* output lines (n, oh) per unit of work */
    int gather;                /* max_pool2d_grad_grad */
} maxgrad_job;

#define MAXGRAD_BLOCK 64       /* channels per argmax pass (stack scratch) */

/* grad: dx[arg] += dy (scatter; a unit owns every window touching its input
** lines: one output line when windows do not overlap, else a whole image).
** grad_grad: out = g[arg] (gather, one output pixel each). */
#define MAX_GRAD(NAME, T)                                                      \
    static void NAME(void *arg, int64_t begin, int64_t end) {                  \
        const maxgrad_job *j = arg;                                            \
        const win_plan *p = j->p;                                              \
        int64_t c = p->c;                                                      \
        T best[MAXGRAD_BLOCK];                                                 \
        int64_t am[MAXGRAD_BLOCK];                                             \
        const T *x = j->x, *g = j->g;                                          \
        T *o = j->out;                                                         \
        for (int64_t line = begin * j->lines_per_unit; line < end * j->lines_per_unit; line++) { \
            int64_t n = line / p->oh, oh = line % p->oh;                       \
            for (int64_t ow = 0; ow < p->ow; ow++) {                           \
                int64_t y = (line * p->ow + ow) * c;                           \
                for (int64_t q0 = 0; q0 < c; q0 += MAXGRAD_BLOCK) {            \
                    int64_t nc = c - q0 < MAXGRAD_BLOCK ? c - q0 : MAXGRAD_BLOCK; \
                    argmax_window_##T(p, x, n, oh, ow, q0, nc, best, am);      \
                    if (j->gather)                                             \
                        for (int64_t q = 0; q < nc; q++)                       \
                            o[y + q0 + q] = am[q] >= 0 ? g[am[q] * c + q0 + q] : 0; \
                    else                                                       \
                        for (int64_t q = 0; q < nc; q++)                       \
                            if (am[q] >= 0) o[am[q] * c + q0 + q] += g[y + q0 + q]; \
                }                                                              \
            }                                                                  \
        }                                                                      \
    }
MAX_GRAD(maxgrad_f32, float)
MAX_GRAD(maxgrad_f64, double)

static win_plan pool_plan(const int64_t *xd, const int64_t *yd, const ltf_attrs *a, size_t es) {
    int padding = (int)a->i[0];
    win_plan p = { xd[0], xd[1], xd[2], xd[3], a->ints[0], a->ints[1], xd[3], yd[1], yd[2], a->ints[2], a->ints[3],
                   1, 1, 0, 0, es };
    p.pt = pad_before(padding, p.h, p.oh, p.kh, p.sh, 1, 0);
    p.pl = pad_before(padding, p.w, p.ow, p.kw, p.sw, 1, 0);
    return p;
}

ltf_status ltf_cpu_nn_max_pool2d_grad(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                      const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *x = in[0], *g = in[1];
    ltf_tensor *o = out[0];
    int gather = def->code == 1;
    const ltf_tensor *y = gather ? o : g;   /* the pool's shape */
    win_plan p = pool_plan(x->dims, y->dims, a, ltf_dtype_size(x->dtype));
    if (!gather) memset(LTF_DATA(o), 0, (size_t)o->numel * p.es);
    if (y->numel == 0) return LTF_OK;
    int overlap = !gather && (p.kh > p.sh || p.kw > p.sw);
    maxgrad_job j = { &p, LTF_DATA(x), LTF_DATA(g), LTF_DATA(o), overlap ? p.oh : 1, gather };
    int64_t kh = p.kh < p.h ? p.kh : p.h, kw = p.kw < p.w ? p.kw : p.w;
    int64_t work = p.ow * kh * kw * p.c * j.lines_per_unit, grain = LTF_CPU_GRAIN / (work > 0 ? work : 1);
    ltf_pool_for(&ctx->pool, p.n * p.oh / j.lines_per_unit, grain > 0 ? grain : 1,
                 x->dtype == LTF_DTYPE_FLOAT32 ? maxgrad_f32 : maxgrad_f64, &j);
    return LTF_OK;
}

/* avg_pool2d_grad: input line (n, ih) gathers dy / count from the output
** rows whose windows cover it (count: the window's valid elements, as the
** forward divides). */
typedef struct avggrad_job {
    const win_plan *p;
    const void *dy;
    void *dx;
} avggrad_job;

#define AVG_GRAD(NAME, T)                                                      \
    static void NAME(void *arg, int64_t begin, int64_t end) {                  \
        const avggrad_job *j = arg;                                            \
        const win_plan *p = j->p;                                              \
        int64_t c = p->c;                                                      \
        for (int64_t r = begin; r < end; r++) {                                \
            int64_t n = r / p->h, ih = r % p->h;                               \
            T *dx = (T *)j->dx + r * p->w * c;                                 \
            memset(dx, 0, sizeof(T) * (size_t)(p->w * c));                     \
            int64_t lo = ih + p->pt - p->kh + 1, hi = (ih + p->pt) / p->sh;    \
            lo = lo <= 0 ? 0 : (lo + p->sh - 1) / p->sh;                       \
            if (hi >= p->oh) hi = p->oh - 1;                                   \
            for (int64_t oh = lo; oh <= hi; oh++)                              \
                for (int64_t ow = 0; ow < p->ow; ow++) {                       \
                    WINDOW(p, oh, ow, h0, h1, w0, w1)                          \
                    int64_t count = (h1 - h0) * (w1 - w0);                     \
                    if (count <= 0) continue;                                  \
                    T inv = (T)1 / (T)count;                                   \
                    const T *g = (const T *)j->dy + ((n * p->oh + oh) * p->ow + ow) * c; \
                    for (int64_t iw = w0; iw < w1; iw++) {                     \
                        T *d = dx + iw * c;                                    \
                        for (int64_t q = 0; q < c; q++) d[q] += g[q] * inv;    \
                    }                                                          \
                }                                                              \
        }                                                                      \
    }
AVG_GRAD(avggrad_f32, float)
AVG_GRAD(avggrad_f64, double)

ltf_status ltf_cpu_nn_avg_pool2d_grad(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                      const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)nin; (void)nout;
    const ltf_tensor *dy = in[0];
    ltf_tensor *dx = out[0];
    win_plan p = pool_plan(dx->dims, dy->dims, a, ltf_dtype_size(dx->dtype));
    if (dx->numel == 0) return LTF_OK;
    if (dy->numel == 0) {
        memset(LTF_DATA(dx), 0, (size_t)dx->numel * p.es);
        return LTF_OK;
    }
    avggrad_job j = { &p, LTF_DATA(dy), LTF_DATA(dx) };
    int64_t kh = p.kh < p.h ? p.kh : p.h, kw = p.kw < p.w ? p.kw : p.w;
    int64_t per_h = (kh + p.sh - 1) / p.sh;
    int64_t work = p.ow * per_h * kw * p.c, grain = LTF_CPU_GRAIN / (work > 0 ? work : 1);
    ltf_pool_for(&ctx->pool, p.n * p.h, grain > 0 ? grain : 1,
                 dx->dtype == LTF_DTYPE_FLOAT32 ? avggrad_f32 : avggrad_f64, &j);
    return LTF_OK;
}
/* }==== */

/* {==== gelu, gelu_grad (def->code 1): elementwise, in the input's precision */
LTF_CPU_KERNEL(ltf_cpu_nn_gelu);

#define GELU_C 0.79788456080286535588      /* sqrt(2 / pi) */
#define GELU_K 0.044715
#define INV_SQRT2 0.70710678118654752440
#define INV_SQRT2PI 0.39894228040143267794

static double gelu_f(double x, int approx) {
    if (approx) return 0.5 * x * (1.0 + tanh(GELU_C * (x + GELU_K * x * x * x)));
    return 0.5 * x * (1.0 + erf(x * INV_SQRT2));
}

static double gelu_df(double x, int approx) {
    if (approx) {
        double t = tanh(GELU_C * (x + GELU_K * x * x * x));
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * GELU_C * (1.0 + 3.0 * GELU_K * x * x);
    }
    return 0.5 * (1.0 + erf(x * INV_SQRT2)) + x * INV_SQRT2PI * exp(-0.5 * x * x);
}

typedef struct gelu_job {
    const void *x, *dy;
    void *y;
    int f32, approx;
} gelu_job;

/* float32: libm's float functions (erff, expf: within a few ulp); tanh(u)
** as 1 - 2 / (exp(2u) + 1), which saturates to +-1 (an absolute error of
** about 1e-7 near 0, where gelu multiplies it by x / 2) */
static float tanh_f32(float u) { return 1.0f - 2.0f / (expf(2.0f * u) + 1.0f); }

static float gelu_f32(float x, int approx) {
    if (approx) return 0.5f * x * (1.0f + tanh_f32((float)GELU_C * (x + (float)GELU_K * x * x * x)));
    return 0.5f * x * (1.0f + erff(x * (float)INV_SQRT2));
}

static float gelu_df32(float x, int approx) {
    if (approx) {
        float t = tanh_f32((float)GELU_C * (x + (float)GELU_K * x * x * x));
        return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * (float)GELU_C * (1.0f + 3.0f * (float)GELU_K * x * x);
    }
    return 0.5f * (1.0f + erff(x * (float)INV_SQRT2)) + x * (float)INV_SQRT2PI * expf(-0.5f * x * x);
}

static void gelu_range(void *arg, int64_t b, int64_t e) {
    const gelu_job *j = arg;
    if (j->f32) {
        const float *x = j->x, *dy = j->dy;
        float *y = j->y;
        if (dy)
            for (int64_t i = b; i < e; i++) y[i] = dy[i] * gelu_df32(x[i], j->approx);
        else
            for (int64_t i = b; i < e; i++) y[i] = gelu_f32(x[i], j->approx);
        return;
    }
    for (int64_t i = b; i < e; i++) {
        double x = j->f32 ? ((const float *)j->x)[i] : ((const double *)j->x)[i];
        double r = j->dy ? (j->f32 ? ((const float *)j->dy)[i] : ((const double *)j->dy)[i]) * gelu_df(x, j->approx)
                         : gelu_f(x, j->approx);
        if (j->f32) ((float *)j->y)[i] = (float)r;
        else ((double *)j->y)[i] = r;
    }
}

ltf_status ltf_cpu_nn_gelu(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                           const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nout;
    if (out[0]->numel == 0) return LTF_OK;
    const ltf_tensor *x = in[nin - 1];
    gelu_job j = { LTF_DATA(x), def->code ? LTF_DATA(in[0]) : NULL, LTF_DATA(out[0]),
                   x->dtype == LTF_DTYPE_FLOAT32, a->i[0] != 0 };
    ltf_pool_for(&ctx->pool, out[0]->numel, LTF_CPU_GRAIN / 8, gelu_range, &j);
    return LTF_OK;
}
/* }==== */

/* {==== dropout_noise: random_uniform's kernel over [0, 1), x's shape */
LTF_CPU_KERNEL(ltf_cpu_nn_dropout_noise);

ltf_status ltf_cpu_nn_dropout_noise(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                    const ltf_attrs *a, ltf_tensor **out, int nout) {
    ltf_attrs at = *a;
    at.f[0] = 0.0;
    at.f[1] = 1.0;
    return ltf_cpu_random_uniform(ctx, def, in, nin, &at, out, nout);
}
/* }==== */

/* {==== depthwise_conv2d (code 0), its input gradient (1), its filter
** gradient (2): direct loops, channels (and the multiplier) innermost. The
** forward and the input gradient run over lines of their outputs (each
** thread writes only its own lines: the input gradient gathers from the
** output pixels whose windows cover a pixel); the filter gradient over
** (tap, block of channels) units, each owning its slice of the filter. */
typedef struct dw_plan {
    int64_t n, h, w, c, m;     /* input NHWC, depth multiplier */
    int64_t kh, kw, oh, ow;    /* filter window, output spatial size */
    int64_t sh, sw, dh, dw;    /* strides, dilations */
    int64_t pt, pl;            /* padding before */
} dw_plan;

typedef struct dw_job {
    const dw_plan *p;
    const void *a, *b;         /* forward: x, f; input gradient: f, dy; filter gradient: x, dy */
    void *out;
} dw_job;

#define DW_BLOCK 16            /* channels per filter-gradient unit */

#define DW_KERNELS(SUF, T)                                                     \
    static void dw_fwd_##SUF(void *arg, int64_t begin, int64_t end) {          \
        const dw_job *j = arg;                                                 \
        const dw_plan *p = j->p;                                               \
        const T *x = j->a, *f = j->b;                                          \
        T *y = j->out;                                                         \
        int64_t c = p->c, mm = p->m, cm = c * mm;                              \
        for (int64_t line = begin; line < end; line++) {                       \
            int64_t n = line / p->oh, oh = line % p->oh;                       \
            for (int64_t ow = 0; ow < p->ow; ow++) {                           \
                T *restrict yv = y + (line * p->ow + ow) * cm;                          \
                for (int64_t q = 0; q < cm; q++) yv[q] = 0;                    \
                for (int64_t a = 0; a < p->kh; a++) {                          \
                    int64_t ih = oh * p->sh + a * p->dh - p->pt;               \
                    if (ih < 0 || ih >= p->h) continue;                        \
                    for (int64_t b = 0; b < p->kw; b++) {                      \
                        int64_t iw = ow * p->sw + b * p->dw - p->pl;           \
                        if (iw < 0 || iw >= p->w) continue;                    \
                        const T *restrict xv = x + ((n * p->h + ih) * p->w + iw) * c; \
                        const T *restrict fv = f + (a * p->kw + b) * cm;                \
                        if (mm == 1) {                                         \
                            for (int64_t q = 0; q < c; q++) yv[q] += xv[q] * fv[q]; \
                        } else {                                               \
                            for (int64_t q = 0; q < c; q++) {                  \
                                T xq = xv[q];                                  \
                                for (int64_t r = 0; r < mm; r++) yv[q * mm + r] += xq * fv[q * mm + r]; \
                            }                                                  \
                        }                                                      \
                    }                                                          \
                }                                                              \
            }                                                                  \
        }                                                                      \
    }                                                                          \
    static void dw_bpi_##SUF(void *arg, int64_t begin, int64_t end) {          \
        const dw_job *j = arg;                                                 \
        const dw_plan *p = j->p;                                               \
        const T *f = j->a, *dy = j->b;                                         \
        T *dx = j->out;                                                        \
        int64_t c = p->c, mm = p->m, cm = c * mm;                              \
        for (int64_t line = begin; line < end; line++) {                       \
            int64_t n = line / p->h, ih = line % p->h;                         \
            T *dl = dx + line * p->w * c;                                      \
            for (int64_t q = 0; q < p->w * c; q++) dl[q] = 0;                  \
            for (int64_t a = 0; a < p->kh; a++) {                              \
                int64_t t = ih + p->pt - a * p->dh;                            \
                if (t < 0 || t % p->sh != 0 || t / p->sh >= p->oh) continue;   \
                int64_t oh = t / p->sh;                                        \
                for (int64_t iw = 0; iw < p->w; iw++) {                        \
                    T *restrict dv = dl + iw * c;                                       \
                    for (int64_t b = 0; b < p->kw; b++) {                      \
                        int64_t u = iw + p->pl - b * p->dw;                    \
                        if (u < 0 || u % p->sw != 0 || u / p->sw >= p->ow) continue; \
                        const T *restrict gv = dy + ((n * p->oh + oh) * p->ow + u / p->sw) * cm; \
                        const T *restrict fv = f + (a * p->kw + b) * cm;                \
                        if (mm == 1) {                                         \
                            for (int64_t q = 0; q < c; q++) dv[q] += gv[q] * fv[q]; \
                        } else {                                               \
                            for (int64_t q = 0; q < c; q++) {                  \
                                T s = 0;                                       \
                                for (int64_t r = 0; r < mm; r++) s += gv[q * mm + r] * fv[q * mm + r]; \
                                dv[q] += s;                                    \
                            }                                                  \
                        }                                                      \
                    }                                                          \
                }                                                              \
            }                                                                  \
        }                                                                      \
    }                                                                          \
    static void dw_bpf_##SUF(void *arg, int64_t begin, int64_t end) {          \
        const dw_job *j = arg;                                                 \
        const dw_plan *p = j->p;                                               \
        const T *x = j->a, *dy = j->b;                                         \
        T *df = j->out;                                                        \
        int64_t c = p->c, mm = p->m, cm = c * mm;                              \
        int64_t nb = (c + DW_BLOCK - 1) / DW_BLOCK;                            \
        for (int64_t unit = begin; unit < end; unit++) {                       \
            int64_t tap = unit / nb, q0 = unit % nb * DW_BLOCK;                \
            int64_t q1 = q0 + DW_BLOCK < c ? q0 + DW_BLOCK : c;                \
            int64_t a = tap / p->kw, b = tap % p->kw;                          \
            T *restrict dv = df + tap * cm;                                             \
            for (int64_t q = q0 * mm; q < q1 * mm; q++) dv[q] = 0;             \
            for (int64_t n = 0; n < p->n; n++)                                 \
                for (int64_t oh = 0; oh < p->oh; oh++) {                       \
                    int64_t ih = oh * p->sh + a * p->dh - p->pt;               \
                    if (ih < 0 || ih >= p->h) continue;                        \
                    for (int64_t ow = 0; ow < p->ow; ow++) {                   \
                        int64_t iw = ow * p->sw + b * p->dw - p->pl;           \
                        if (iw < 0 || iw >= p->w) continue;                    \
                        const T *restrict xv = x + ((n * p->h + ih) * p->w + iw) * c; \
                        const T *restrict gv = dy + ((n * p->oh + oh) * p->ow + ow) * cm; \
                        for (int64_t q = q0; q < q1; q++) {                    \
                            T xq = xv[q];                                      \
                            for (int64_t r = 0; r < mm; r++) dv[q * mm + r] += xq * gv[q * mm + r]; \
                        }                                                      \
                    }                                                          \
                }                                                              \
        }                                                                      \
    }
DW_KERNELS(f32, float)
DW_KERNELS(f64, double)

ltf_status ltf_cpu_nn_depthwise_conv2d(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                       const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    int code = def->code;
    ltf_tensor *o = out[0];
    /* the forward's three shapes, whichever of them is this op's output */
    const ltf_tensor *x = code == 1 ? o : in[0];
    const ltf_tensor *f = code == 0 ? in[1] : code == 1 ? in[0] : o;
    const ltf_tensor *y = code == 0 ? o : in[1];
    if (o->dtype != LTF_DTYPE_FLOAT32 && o->dtype != LTF_DTYPE_FLOAT64)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: unsupported dtype %s", def->name, ltf_dtype_name(o->dtype));
    if (o->numel == 0) return LTF_OK;
    size_t es = ltf_dtype_size(o->dtype);
    if (in[0]->numel == 0 || in[1]->numel == 0) {   /* nothing reaches the output */
        memset(LTF_DATA(o), 0, (size_t)o->numel * es);
        return LTF_OK;
    }
    int padding = (int)a->i[0];
    dw_plan p = { x->dims[0], x->dims[1], x->dims[2], x->dims[3], f->dims[3], f->dims[0], f->dims[1],
                  y->dims[1], y->dims[2], a->ints[0], a->ints[1], a->nints >= 4 ? a->ints[2] : 1,
                  a->nints >= 4 ? a->ints[3] : 1, 0, 0 };
    p.pt = pad_before(padding, p.h, p.oh, p.kh, p.sh, p.dh, 0);
    p.pl = pad_before(padding, p.w, p.ow, p.kw, p.sw, p.dw, 0);
    dw_job j = { &p, LTF_DATA(in[0]), LTF_DATA(in[1]), LTF_DATA(o) };
    int f64 = o->dtype == LTF_DTYPE_FLOAT64;
    int64_t taps = p.kh * p.kw, cm = p.c * p.m, units, work;
    ltf_pool_fn fn;
    if (code == 0) {
        units = p.n * p.oh;
        work = p.ow * taps * cm;
        fn = f64 ? dw_fwd_f64 : dw_fwd_f32;
    } else if (code == 1) {
        units = p.n * p.h;
        work = p.w * taps * cm / (p.sh * p.sw) + p.w;
        fn = f64 ? dw_bpi_f64 : dw_bpi_f32;
    } else {
        units = taps * ((p.c + DW_BLOCK - 1) / DW_BLOCK);
        work = p.n * p.oh * p.ow * DW_BLOCK * p.m;
        fn = f64 ? dw_bpf_f64 : dw_bpf_f32;
    }
    int64_t grain = LTF_CPU_GRAIN / (work > 0 ? work : 1);
    ltf_pool_for(&ctx->pool, units, grain > 0 ? grain : 1, fn, &j);
    return LTF_OK;
}
/* }==== */
