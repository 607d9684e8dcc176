/*
** cpu/conv_direct.c: float32 conv2d at stride 1 without dilation, computed
** in place over the NHWC input (no im2col columns), for output channels in
** multiples of 8: the small convolutions of MNIST-sized models, where
** writing 9x the input as columns cost more than the GEMM that reads them.
**
** Valid windows only: nn.c hands in a zero-padded copy of the input when the
** op pads. Forward: each task takes output lines (n, oh); per block of 6
** output pixels (4 or 1 at a line's end) and 16 (or 8) output channels the
** sums stay in registers while the taps' filter rows stream from L1. Filter gradient: each task
** sums over a range of lines into its own (kh, kw, c, o) partial, the
** caller adds the partials in range order (deterministic for a given pool).
**
** The loops use GCC's vector extensions; on x86-64 they are built twice
** (AVX2 + FMA and the baseline) and the loader picks one per machine.
*/
#include <stdlib.h>
#include <string.h>
#include "cpu.h"

typedef float v8f __attribute__((vector_size(32)));

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && \
    !defined(LTF_NO_CLONES)
#define LTF_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define LTF_CLONES
#endif

/* unaligned loads and stores through memcpy (no vector crosses a call) */
#define LD8(v, p) memcpy(&(v), (p), sizeof(v8f))
#define ST8(p, v) memcpy((p), &(v), sizeof(v8f))

int ltf_cpu_conv_direct_ok(int64_t c, int64_t o) { return o > 0 && o % 8 == 0 && c > 0; }

typedef struct direct_job {
    const ltf_conv_geom *g;
    const float *x, *f, *dy;
    float *y, *part;           /* forward output; filter-gradient partials (one per range) */
    int64_t per;               /* lines per range at least (the pool's grain) */
} direct_job;

/* Forward, output pixels [ow0, ow0 + R) of line (n, oh), channels [ob, ob + 8 V). */
#define FWD_BLOCK(R, V)                                                                            \
    static inline __attribute__((always_inline)) void fwd_##R##_##V(const ltf_conv_geom *g, const float *x, const float *f, float *y,    \
                              int64_t n, int64_t oh, int64_t ow0, int64_t ob) {                  \
        v8f acc[R][V];                                                                             \
        for (int r = 0; r < R; r++)                                                                \
            for (int v = 0; v < V; v++) acc[r][v] = (v8f){0};                                      \
        for (int64_t kh = 0; kh < g->kh; kh++) {                                                   \
            const float *xrow = x + ((n * g->h + oh + kh) * g->w + ow0) * g->c;                    \
            for (int64_t kw = 0; kw < g->kw; kw++) {                                               \
                const float *xs = xrow + kw * g->c;                                                \
                const float *fr = f + (kh * g->kw + kw) * g->c * g->o + ob;                        \
                for (int64_t c = 0; c < g->c; c++, fr += g->o) {                                   \
                    v8f fv[V];                                                                     \
                    for (int v = 0; v < V; v++) LD8(fv[v], fr + 8 * v);                           \
                    for (int r = 0; r < R; r++) {                                                  \
                        float s = xs[r * g->c + c];                                                \
                        for (int v = 0; v < V; v++) acc[r][v] += s * fv[v];                        \
                    }                                                                              \
                }                                                                                  \
            }                                                                                      \
        }                                                                                          \
        float *yrow = y + ((n * g->oh + oh) * g->ow + ow0) * g->o + ob;                           \
        for (int r = 0; r < R; r++)                                                                \
            for (int v = 0; v < V; v++) ST8(yrow + r * g->o + 8 * v, acc[r][v]);                   \
    }
FWD_BLOCK(6, 2)
FWD_BLOCK(4, 2)
FWD_BLOCK(1, 2)
FWD_BLOCK(4, 1)
FWD_BLOCK(1, 1)

LTF_CLONES static void forward_lines(void *arg, int64_t b, int64_t e) {
    const direct_job *j = arg;
    const ltf_conv_geom *g = j->g;
    for (int64_t l = b; l < e; l++) {
        int64_t n = l / g->oh, oh = l % g->oh;
        int64_t ob = 0;
        for (; ob + 16 <= g->o; ob += 16) {
            int64_t ow = 0;
            for (; ow + 6 <= g->ow; ow += 6) fwd_6_2(g, j->x, j->f, j->y, n, oh, ow, ob);
            for (; ow + 4 <= g->ow; ow += 4) fwd_4_2(g, j->x, j->f, j->y, n, oh, ow, ob);
            for (; ow < g->ow; ow++) fwd_1_2(g, j->x, j->f, j->y, n, oh, ow, ob);
        }
        for (; ob < g->o; ob += 8) {
            int64_t ow = 0;
            for (; ow + 4 <= g->ow; ow += 4) fwd_4_1(g, j->x, j->f, j->y, n, oh, ow, ob);
            for (; ow < g->ow; ow++) fwd_1_1(g, j->x, j->f, j->y, n, oh, ow, ob);
        }
    }
}

void ltf_cpu_conv_direct_f32(ltf_ctx *ctx, const ltf_conv_geom *g, const float *x, const float *f, float *y) {
    direct_job j = { g, x, f, NULL, y, NULL, 1 };
    int64_t lines = g->n * g->oh, work = g->ow * g->o * g->kh * g->kw * g->c;
    int64_t grain = LTF_CPU_GRAIN / (work > 0 ? work : 1);
    ltf_pool_for(&ctx->pool, lines, grain > 0 ? grain : 1, forward_lines, &j);
}

/* Filter gradient of one line (n, oh) and tap (kh, kw), channels
** [c0, c0 + CB) by outputs [ob, ob + 8 V): CB x V sums in registers over the
** line's pixels (8 of them keep both FMA pipes busy despite their latency),
** then added to the partial. */
#define FILT_BLOCK(CB, V)                                                                           \
    static inline __attribute__((always_inline)) void filt_##CB##_##V(                             \
        const ltf_conv_geom *g, const float *xl, const float *dyl, float *dft, int64_t c0,           \
        int64_t ob) {                                                                                \
        v8f acc[CB][V];                                                                              \
        for (int q = 0; q < CB; q++)                                                                 \
            for (int v = 0; v < V; v++) acc[q][v] = (v8f){0};                                        \
        const float *xp = xl + c0, *dp = dyl + ob;                                                   \
        for (int64_t ow = 0; ow < g->ow; ow++, xp += g->c, dp += g->o) {                            \
            v8f d[V];                                                                                \
            for (int v = 0; v < V; v++) LD8(d[v], dp + 8 * v);                                       \
            for (int q = 0; q < CB; q++) {                                                           \
                float s = xp[q];                                                                     \
                for (int v = 0; v < V; v++) acc[q][v] += s * d[v];                                   \
            }                                                                                        \
        }                                                                                            \
        for (int q = 0; q < CB; q++)                                                                 \
            for (int v = 0; v < V; v++) {                                                           \
                float *t = dft + (c0 + q) * g->o + ob + 8 * v;                                       \
                v8f cur;                                                                             \
                LD8(cur, t);                                                                         \
                cur += acc[q][v];                                                                    \
                ST8(t, cur);                                                                         \
            }                                                                                        \
    }
FILT_BLOCK(4, 2)
FILT_BLOCK(4, 1)
FILT_BLOCK(1, 2)
FILT_BLOCK(1, 1)

/* Filter gradient over lines [b, e) into this range's partial:
** df[kh, kw, c, o] += x[n, oh + kh, ow + kw, c] * dy[n, oh, ow, o]. */
LTF_CLONES static void filter_lines(void *arg, int64_t b, int64_t e) {
    const direct_job *j = arg;
    const ltf_conv_geom *g = j->g;
    float *df = j->part + (b / j->per) * g->kh * g->kw * g->c * g->o;
    for (int64_t l = b; l < e; l++) {
        int64_t n = l / g->oh, oh = l % g->oh;
        const float *dyl = j->dy + (n * g->oh + oh) * g->ow * g->o;
        for (int64_t kh = 0; kh < g->kh; kh++)
            for (int64_t kw = 0; kw < g->kw; kw++) {
                const float *xl = j->x + ((n * g->h + oh + kh) * g->w + kw) * g->c;
                float *dft = df + (kh * g->kw + kw) * g->c * g->o;
                int64_t c0 = 0;
                for (; c0 + 4 <= g->c; c0 += 4) {
                    int64_t ob = 0;
                    for (; ob + 16 <= g->o; ob += 16) filt_4_2(g, xl, dyl, dft, c0, ob);
                    for (; ob < g->o; ob += 8) filt_4_1(g, xl, dyl, dft, c0, ob);
                }
                for (; c0 < g->c; c0++) {
                    int64_t ob = 0;
                    for (; ob + 16 <= g->o; ob += 16) filt_1_2(g, xl, dyl, dft, c0, ob);
                    for (; ob < g->o; ob += 8) filt_1_1(g, xl, dyl, dft, c0, ob);
                }
            }
    }
}

ltf_status ltf_cpu_conv_direct_filter_f32(ltf_ctx *ctx, const ltf_conv_geom *g, const float *x, const float *dy,
                                          float *df) {
    int64_t lines = g->n * g->oh, m = g->kh * g->kw * g->c * g->o;
    int nth = ctx->pool.nthreads > 0 ? ctx->pool.nthreads : 1;
    int64_t work = g->ow * m, grain = LTF_CPU_GRAIN / (work > 0 ? work : 1);
    int64_t per = (lines + nth - 1) / nth;
    if (per < grain) per = grain;
    if (per < 1) per = 1;
    int64_t nparts = (lines + per - 1) / per;
    float *part = nparts > 1 ? calloc((size_t)nparts, sizeof(float) * (size_t)m) : df;
    if (!part) return ltf_fail_oom(ctx, "conv2d_backprop_filter scratch", (size_t)nparts * sizeof(float) * (size_t)m);
    if (part == df) memset(df, 0, sizeof(float) * (size_t)m);
    direct_job j = { g, x, NULL, dy, NULL, part, per };
    ltf_pool_for(&ctx->pool, lines, per, filter_lines, &j);
    if (part != df) {
        memcpy(df, part, sizeof(float) * (size_t)m);
        for (int64_t q = 1; q < nparts; q++)
            for (int64_t i = 0; i < m; i++) df[i] += part[q * m + i];
        free(part);
    }
    return LTF_OK;
}
