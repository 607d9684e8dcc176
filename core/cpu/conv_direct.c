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

/* {==== The packed forward kernel (AVX-512 machines): float32 conv2d at any
** stride without dilation, output channels in multiples of 32, over an NHWC
** input with padding before of (pt, pl) (taps outside the input read a
** zero row; blocks whose windows all lie inside take the fast kernel). The filters are first packed
** into panels of 32 output channels, (kh, kw, c, 32) each, so that a
** block's filter rows stream contiguously; per block of 12 output pixels of
** a line by one panel the 24 sums (16 floats each) stay in AVX-512
** registers. Tasks take (panel, pixel block) pairs (see pk_units). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PK_TARGET __attribute__((target("avx512f,avx512vl,avx2,fma")))
typedef float v16f __attribute__((vector_size(64)));

typedef struct pk_job {
    const ltf_conv_geom *g;
    const float *x, *fp;       /* padded input, packed filters (pixel-major: all of them) */
    const float *f;            /* the filters as given, (kk, o) */
    float *y;
    int64_t sh, sw, pt, pl;    /* strides, padding before (top, left): taps outside the input read zeros */
    const float *zero;         /* pixel-major: c zeros, the row a tap outside the input reads */
    int64_t lines, np;         /* output lines (n, oh), panels of 32 outputs */
    int pixel_major;           /* units walk the panels of one block in turn (all filters fit in L2) */
    int64_t split;             /* panel-major: claims per panel (each a range of its pixel blocks) */
    int64_t total, step, next; /* claims (pixel-major: units), units per claim, the next unclaimed one (atomic) */
    int failed;                /* a thread's panel could not be allocated (atomic) */
    int64_t nth;               /* threads claiming */
} pk_job;

/* R output pixels whose windows' top-left inputs are xb + off[r], panel
** 'fp' (K x 32), into y rows yb + yoff[r] (the output rows are consecutive
** pixels, so yoff[r] = r * o). The offsets stay in registers: the windows of
** all R pixels move together over (kh, kw, c). */
#define PK_BLOCK(R)                                                                                    \
    PK_TARGET static inline __attribute__((always_inline)) void pk_##R(const ltf_conv_geom *g, const float *xb, \
                                                                       const int64_t *off, const float *fp, float *yb) { \
        v16f a0[R], a1[R];                                                                             \
        int64_t of[R];                                                                                 \
        for (int r = 0; r < R; r++) {                                                                  \
            a0[r] = a1[r] = (v16f){0};                                                                 \
            of[r] = off[r];                                                                            \
        }                                                                                              \
        const float *f = fp;                                                                           \
        for (int64_t kh = 0; kh < g->kh; kh++)                                                         \
            for (int64_t kw = 0; kw < g->kw; kw++) {                                                   \
                const float *xs = xb + (kh * g->w + kw) * g->c;                                        \
                for (int64_t c = 0; c < g->c; c++, f += 32) {                                          \
                    v16f f0, f1;                                                                       \
                    memcpy(&f0, f, 64);                                                                \
                    memcpy(&f1, f + 16, 64);                                                           \
                    for (int r = 0; r < R; r++) {                                                      \
                        float s = xs[of[r] + c];                                                       \
                        a0[r] += s * f0;                                                               \
                        a1[r] += s * f1;                                                               \
                    }                                                                                  \
                }                                                                                      \
            }                                                                                          \
        for (int r = 0; r < R; r++) {                                                                  \
            memcpy(yb + r * g->o, &a0[r], 64);                                                         \
            memcpy(yb + r * g->o + 16, &a1[r], 64);                                                    \
        }                                                                                              \
    }
PK_BLOCK(12)
PK_BLOCK(8)
PK_BLOCK(4)
PK_BLOCK(2)
PK_BLOCK(1)

#define PK_EDGE_C 128   /* pk_edge's channel slice */

/* A block of nq <= PK_PIX pixels some of whose taps fall outside the input
** (padding) : per tap, each pixel's input row or the zero row. Pixel r's
** window starts at input (ih0[r], iw0[r]) of the image whose first row is
** nh[r] (n * h); the pixels past nq (up to R) read zeros and are not stored. */
#define PK_EDGE(R)                                                                                \
PK_TARGET static void pk_edge_##R(const pk_job *j, const float *zero, const int64_t *ih0,                       \
                                  const int64_t *iw0, const int64_t *nh, int64_t nq, const float *fp,         \
                                  float *yb) {                                                                \
    const ltf_conv_geom *g = j->g;                                                                              \
    v16f a0[R], a1[R];                                                                                          \
    for (int r = 0; r < R; r++) a0[r] = a1[r] = (v16f){0};                                                      \
    /* over many channels, the channels in slices of PK_EDGE_C, each slice                                      \
    ** through all the taps: 12 input rows of 512 channels (24 KiB) per tap                                     \
    ** pushed the filter rows out of L1 */                                                                      \
    int64_t cs = g->c > 2 * PK_EDGE_C ? PK_EDGE_C : g->c;                                                       \
    for (int64_t c0 = 0; c0 < g->c; c0 += cs) {                                                                 \
        int64_t c1 = c0 + cs < g->c ? c0 + cs : g->c;                                                           \
        for (int64_t kh = 0; kh < g->kh; kh++)                                                                  \
            for (int64_t kw = 0; kw < g->kw; kw++) {                                                            \
                const float *xp[R];                                                                             \
                for (int r = 0; r < R; r++) {                                                                   \
                    int64_t ih = ih0[r] + kh, iw = iw0[r] + kw;                                                 \
                    xp[r] = r < nq && ih >= 0 && ih < g->h && iw >= 0 && iw < g->w ? j->x + ((nh[r] + ih) * g->w + iw) * g->c\
                                                                                  : zero;                       \
                }                                                                                               \
                const float *f = fp + ((kh * g->kw + kw) * g->c + c0) * 32;                                     \
                for (int64_t c = c0; c < c1; c++, f += 32) {                                                    \
                    v16f f0, f1;                                                                                \
                    memcpy(&f0, f, 64);                                                                         \
                    memcpy(&f1, f + 16, 64);                                                                    \
                    for (int r = 0; r < R; r++) {                                                               \
                        float s = xp[r][c];                                                                     \
                        a0[r] += s * f0;                                                                        \
                        a1[r] += s * f1;                                                                        \
                    }                                                                                           \
                }                                                                                               \
            }                                                                                                   \
    }                                                                                                           \
    for (int64_t r = 0; r < nq; r++) {                                                                          \
        memcpy(yb + r * g->o, &a0[r], 64);                                                                      \
        memcpy(yb + r * g->o + 16, &a1[r], 64);                                                                 \
    }                                                                                                           \
}
PK_EDGE(12)
PK_EDGE(8)
PK_EDGE(4)
PK_EDGE(2)
PK_EDGE(1)

/* The smallest of the edge kernels that covers the block's nq pixels (a
** block of one pixel at the end of a 7x7 image does not cost twelve). */
PK_TARGET static void pk_edge(const pk_job *j, const float *zero, const int64_t *ih0, const int64_t *iw0,
                              const int64_t *nh, int64_t nq, const float *fp, float *yb) {
    if (nq > 8) pk_edge_12(j, zero, ih0, iw0, nh, nq, fp, yb);
    else if (nq > 4) pk_edge_8(j, zero, ih0, iw0, nh, nq, fp, yb);
    else if (nq > 2) pk_edge_4(j, zero, ih0, iw0, nh, nq, fp, yb);
    else if (nq > 1) pk_edge_2(j, zero, ih0, iw0, nh, nq, fp, yb);
    else pk_edge_1(j, zero, ih0, iw0, nh, nq, fp, yb);
}

#define PK_PIX 12   /* output pixels per block */
#define PK_L2_FILTERS ((size_t)384 << 10)   /* packed filters up to this size: pixel-major units */

/* Units [b, e): unit u is pixel block u % nblk of panel u / nblk (panel-major:
** one panel stays in L2 while the pixels pass under it) or, when all the
** filters fit in L2, panel u % np of block u / np (pixel-major: the input is
** read once, not once per panel); a block is
** PK_PIX consecutive output pixels of the flattened (n, oh, ow), across line
** and image ends (small images, stride 2: no short blocks at each line's end). */
/* Panel 'p' of the (kk, o) filters packed into 'buf' (kk, 32). */
static void pk_pack_panel(const pk_job *j, int64_t p, float *buf) {
    const ltf_conv_geom *g = j->g;
    int64_t kk = g->kh * g->kw * g->c;
    for (int64_t q = 0; q < kk; q++) memcpy(buf + q * 32, j->f + q * g->o + p * 32, 32 * sizeof(float));
}

/* Units [b, e) (see below). Panel-major with 'buf' (kk x 32 floats, then c
** zeros): the filters are packed here, a panel at a time into 'buf' (whose
** panel is '*have'), so that they are read once from memory and the packed
** panel stays in this core's L2; pixel-major: the panels packed up front
** ('j->fp'). Panel 'next' (>= 0), the one this thread will likely pack
** next, is prefetched meanwhile: reading a large layer's filters from memory
** (9.4 MB at 512 channels) then overlaps the arithmetic instead of
** stalling each panel's packing. */
PK_TARGET static void pk_units(const pk_job *j, int64_t b, int64_t e, float *buf, int64_t *have, int64_t next) {
    const ltf_conv_geom *g = j->g;
    int64_t kk = g->kh * g->kw * g->c, pix = g->n * g->oh * g->ow, nblk = (pix + PK_PIX - 1) / PK_PIX;
    for (int64_t u = b; u < e; u++) {
        if (next >= 0) {   /* this block's share of the rows of panel 'next', asked for while it computes */
            const float *src = j->f + next * 32;
            for (int64_t q = (u - b) * kk / (e - b), q1 = (u - b + 1) * kk / (e - b); q < q1; q++) {
                __builtin_prefetch(src + q * g->o, 0, 1);
                __builtin_prefetch(src + q * g->o + 16, 0, 1);
            }
        }
        int64_t p = j->pixel_major ? u % j->np : u / nblk, q0 = (j->pixel_major ? u / j->np : u % nblk) * PK_PIX, nq = pix - q0 < PK_PIX ? pix - q0 : PK_PIX;
        int64_t off[PK_PIX], ih0[PK_PIX], iw0[PK_PIX], nh[PK_PIX];
        int inside = 1;
        for (int64_t r = 0; r < nq; r++) {
            int64_t q = q0 + r, n = q / (g->oh * g->ow), rem = q % (g->oh * g->ow);
            int64_t oh = rem / g->ow, ow = rem % g->ow;
            ih0[r] = oh * j->sh - j->pt;
            iw0[r] = ow * j->sw - j->pl;
            nh[r] = n * g->h;
            inside &= ih0[r] >= 0 && ih0[r] + g->kh <= g->h && iw0[r] >= 0 && iw0[r] + g->kw <= g->w;
            off[r] = ((nh[r] + ih0[r]) * g->w + iw0[r]) * g->c;
        }
        const float *fp = j->fp + p * kk * 32, *zero = buf ? buf + kk * 32 : j->zero;
        if (buf) {
            if (*have != p) pk_pack_panel(j, p, buf);
            *have = p;
            fp = buf;
        }
        float *yb = j->y + q0 * g->o + p * 32;
        if (!inside) {
            pk_edge(j, zero, ih0, iw0, nh, nq, fp, yb);
            continue;
        }
        int64_t r = 0;
        if (nq == PK_PIX) {
            pk_12(g, j->x, off, fp, yb);
            continue;
        }
        if (nq - r >= 8) { pk_8(g, j->x, off + r, fp, yb + r * g->o); r += 8; }
        if (nq - r >= 4) { pk_4(g, j->x, off + r, fp, yb + r * g->o); r += 4; }
        if (nq - r >= 2) { pk_2(g, j->x, off + r, fp, yb + r * g->o); r += 2; }
        if (nq - r >= 1) pk_1(g, j->x, off + r, fp, yb + r * g->o);
    }
}

/* The pool's ranges are threads, not units: each thread claims runs of
** units from a shared counter until none is left, so a thread that
** starts late (its core taken by another process) takes less, and no thread
** waits for a half of the work that a late one holds. Pixel-major, a claim
** is 'step' units; panel-major, a claim is one of 'split' ranges of a
** panel's pixel blocks, and the thread packs that panel into a buffer of
** its own (malloc's per-thread arenas keep it between calls: no fresh pages
** each time). Every unit writes its own outputs: the results do not depend
** on who ran what. */
static float *pk_panel_new(const ltf_conv_geom *g) {
    int64_t kk = g->kh * g->kw * g->c;
    float *buf = malloc(sizeof(float) * (size_t)(kk * 32 + g->c));
    if (buf) memset(buf + kk * 32, 0, sizeof(float) * (size_t)g->c);
    return buf;
}

static void pk_claim(void *arg, int64_t b, int64_t e) {
    pk_job *j = arg;
    const ltf_conv_geom *g = j->g;
    int64_t nblk = (g->n * g->oh * g->ow + PK_PIX - 1) / PK_PIX;
    (void)b;
    (void)e;
    float *buf = NULL;
    if (!j->pixel_major && !(buf = pk_panel_new(g))) {
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    int64_t have = -1;
    for (;;) {
        int64_t u = __atomic_fetch_add(&j->next, j->step, __ATOMIC_RELAXED);
        if (u >= j->total) break;
        if (j->pixel_major) {
            pk_units(j, u, j->total - u < j->step ? j->total : u + j->step, NULL, NULL, -1);
        } else {   /* claim u: range u % split of panel u / split */
            int64_t p = u / j->split, r = u % j->split;
            int64_t b0 = r * nblk / j->split, b1 = (r + 1) * nblk / j->split;
            /* the claim after the others' next ones is likely this thread's next */
            int64_t pn = (u + j->nth) / j->split;
            pk_units(j, p * nblk + b0, p * nblk + b1, buf, &have, pn != p && pn < j->np ? pn : -1);
        }
    }
    free(buf);
}

static int pk_cpu(void) {
    static int have = -1;
    int h = __atomic_load_n(&have, __ATOMIC_RELAXED);
    if (h < 0) {
        __builtin_cpu_init();
        h = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && getenv("LTF_NO_AVX512") == NULL;
        __atomic_store_n(&have, h, __ATOMIC_RELAXED);
    }
    return h;
}

int ltf_cpu_conv_packed_ok(int64_t o) { return o > 0 && o % 32 == 0 && pk_cpu(); }

ltf_status ltf_cpu_conv_packed_f32(ltf_ctx *ctx, const ltf_conv_geom *g, int64_t sh, int64_t sw, int64_t pt,
                                   int64_t pl, const float *x, const float *f, float *y) {
    int64_t kk = g->kh * g->kw * g->c, np = g->o / 32;
    int64_t nblk = (g->n * g->oh * g->ow + PK_PIX - 1) / PK_PIX;
    int64_t work = PK_PIX * 32 * kk, grain = LTF_CPU_GRAIN / (work > 0 ? work : 1);
    int nth = ctx->pool.nthreads > 1 ? ctx->pool.nthreads : 1;
    if (grain < 1) grain = 1;
    int serial = nth == 1 || nblk * np < 2 * grain;
    int pixel_major = sizeof(float) * (size_t)(kk * g->o) <= PK_L2_FILTERS;
    float *fp = NULL;   /* pixel-major: all the filters packed, then the zero row */
    size_t nb = sizeof(float) * (size_t)(kk * g->o + g->c);
    if (pixel_major || serial) {
        fp = pixel_major ? malloc(nb) : pk_panel_new(g);
        if (!fp) return ltf_fail_oom(ctx, "conv2d filter scratch", nb);
    }
    if (pixel_major) {
        memset(fp + kk * g->o, 0, sizeof(float) * (size_t)g->c);
        for (int64_t q = 0; q < kk; q++)   /* f (kk, o) -> fp (np, kk, 32) */
            for (int64_t p = 0; p < np; p++) memcpy(fp + (p * kk + q) * 32, f + q * g->o + p * 32, 32 * sizeof(float));
    }
    pk_job j = { g, x, fp, f, y, sh, sw, pt, pl, pixel_major ? fp + kk * g->o : NULL, g->n * g->oh, np, pixel_major,
                 1, 0, 0, 0, 0, 0 };
    if (pixel_major) {
        j.total = nblk * np;
        j.step = j.total / (16 * nth) > grain ? j.total / (16 * nth) : grain;   /* ~16 claims a thread */
    } else {   /* ~8 claims a thread, a range of at least 'grain' blocks each */
        int64_t split = (8 * nth + np - 1) / np, most = nblk / grain;
        if (split > most) split = most;
        j.split = split < 1 ? 1 : split;
        j.total = np * j.split;
        j.step = 1;
    }
    j.nth = nth;
    if (serial) {
        int64_t have = -1;
        for (int64_t p = 0; p < (pixel_major ? 1 : np); p++)   /* panel-major: a panel at a time, the next prefetched */
            pk_units(&j, pixel_major ? 0 : p * nblk, pixel_major ? nblk * np : (p + 1) * nblk, pixel_major ? NULL : fp,
                     &have, !pixel_major && p + 1 < np ? p + 1 : -1);
    } else {
        ltf_pool_for(&ctx->pool, nth, 1, pk_claim, &j);
    }
    free(fp);
    if (j.failed) return ltf_fail_oom(ctx, "conv2d filter scratch", sizeof(float) * (size_t)(kk * 32 + g->c));
    return LTF_OK;
}
#else
int ltf_cpu_conv_packed_ok(int64_t o) { (void)o; return 0; }
ltf_status ltf_cpu_conv_packed_f32(ltf_ctx *ctx, const ltf_conv_geom *g, int64_t sh, int64_t sw, int64_t pt,
                                   int64_t pl, const float *x, const float *f, float *y) {
    (void)g; (void)sh; (void)sw; (void)pt; (void)pl; (void)x; (void)f; (void)y;
    return ltf_fail(ctx, LTF_ERR_INTERNAL, "conv2d: the packed kernel is not built here");
}
#endif
/* }==== */
