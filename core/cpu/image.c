/*
** cpu/image.c: CPU kernels of the image resizes, TensorFlow 2's sampling
** (half_pixel_centers = true, align_corners = false):
**   bilinear: in = (out + 0.5) * scale - 0.5, lower = max(floor(in), 0),
**             upper = min(ceil(in), size - 1), weight in - floor(in);
**   nearest:  in = min(floorf((out + 0.5f) * fscale), size - 1), in float:
**             fscale = (float)in_size / (float)out_size, as TensorFlow's
**             kernel (a double here picks another pixel now and then:
**             30 -> 11 wide, output 5 reads 14 in double, 15 in float);
** scale = in_size / out_size. The gradients scatter the same weights back
** (ResizeBilinearGrad / ResizeNearestNeighborGrad). Images are NHWC.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"

typedef struct axis_w {
    int64_t lo, hi;
    double w;   /* weight of 'hi' (bilinear) */
} axis_w;

/* Sampling positions along one axis; NULL when out of memory. */
static axis_w *weights(int64_t in, int64_t out, int nearest) {
    axis_w *p = malloc(sizeof(axis_w) * (size_t)(out > 0 ? out : 1));
    if (!p) return NULL;
    double scale = (double)in / (double)out;
    float fscale = (float)in / (float)out;
    for (int64_t i = 0; i < out; i++) {
        if (nearest) {
            float at = ((float)i + 0.5f) * fscale;   /* one float rounding per step, as the CUDA kernel */
            int64_t k = (int64_t)floorf(at);
            if (k > in - 1) k = in - 1;
            if (k < 0) k = 0;
            p[i].lo = p[i].hi = k;
            p[i].w = 0;
        } else {
            double x = ((double)i + 0.5) * scale - 0.5, f = floor(x);
            int64_t lo = (int64_t)f, hi = (int64_t)ceil(x);
            p[i].lo = lo < 0 ? 0 : lo;
            p[i].hi = hi > in - 1 ? in - 1 : hi;
            p[i].w = x - f;
        }
    }
    return p;
}

typedef struct plan {
    int64_t n, ih, iw, oh, ow, c;
    axis_w *y, *x;
} plan;

/* in (n, ih, iw, c), out (n, oh, ow, c) */
static ltf_status plan_init(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *img, const ltf_tensor *res, plan *p) {
    p->n = img->dims[0];
    p->ih = img->dims[1];
    p->iw = img->dims[2];
    p->c = img->dims[3];
    p->oh = res->dims[1];
    p->ow = res->dims[2];
    p->y = weights(p->ih, p->oh, def->code == 1);
    p->x = weights(p->iw, p->ow, def->code == 1);
    if (p->y && p->x) return LTF_OK;
    free(p->y);
    free(p->x);
    return ltf_fail_oom(ctx, def->name, sizeof(axis_w) * (size_t)(p->oh + p->ow));
}

static double rd(const ltf_tensor *t, int64_t i) {
    const void *p = LTF_DATA(t);
    switch (t->dtype) {
    case LTF_DTYPE_FLOAT32: return ((const float *)p)[i];
    case LTF_DTYPE_FLOAT64: return ((const double *)p)[i];
    case LTF_DTYPE_INT32: return ((const int32_t *)p)[i];
    case LTF_DTYPE_INT64: return (double)((const int64_t *)p)[i];
    case LTF_DTYPE_UINT8: return ((const uint8_t *)p)[i];
    default: return 0;
    }
}

ltf_status ltf_cpu_image_resize(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    const ltf_tensor *img = in[0];
    ltf_tensor *o = out[0];
    if (o->numel == 0) return LTF_OK;
    plan p;
    ltf_status st = plan_init(ctx, def, img, o, &p);
    if (st != LTF_OK) return st;
    size_t es = ltf_dtype_size(img->dtype);
    const char *src = LTF_DATA(img);
    char *dst = LTF_DATA(o);
    for (int64_t b = 0; b < p.n; b++)
        for (int64_t i = 0; i < p.oh; i++)
            for (int64_t j = 0; j < p.ow; j++) {
                int64_t oo = ((b * p.oh + i) * p.ow + j) * p.c;
                const axis_w *y = &p.y[i], *x = &p.x[j];
                if (def->code == 1) {   /* nearest: copy the pixel, any dtype */
                    int64_t io = ((b * p.ih + y->lo) * p.iw + x->lo) * p.c;
                    memcpy(dst + (size_t)oo * es, src + (size_t)io * es, (size_t)p.c * es);
                    continue;
                }
                int64_t r0 = (b * p.ih + y->lo) * p.iw, r1 = (b * p.ih + y->hi) * p.iw;
                int64_t tl = (r0 + x->lo) * p.c, tr = (r0 + x->hi) * p.c, bl = (r1 + x->lo) * p.c, br = (r1 + x->hi) * p.c;
                for (int64_t k = 0; k < p.c; k++) {
                    double top = rd(img, tl + k) + (rd(img, tr + k) - rd(img, tl + k)) * x->w;
                    double bot = rd(img, bl + k) + (rd(img, br + k) - rd(img, bl + k)) * x->w;
                    double v = top + (bot - top) * y->w;
                    if (o->dtype == LTF_DTYPE_FLOAT32) ((float *)dst)[oo + k] = (float)v;
                    else ((double *)dst)[oo + k] = v;
                }
            }
    free(p.y);
    free(p.x);
    return LTF_OK;
}

/* out (original's shape) = sum over output pixels of grads * weights */
ltf_status ltf_cpu_image_resize_grad(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                     const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    const ltf_tensor *g = in[0];
    ltf_tensor *o = out[0];
    size_t es = ltf_dtype_size(o->dtype);
    memset(LTF_DATA(o), 0, (size_t)o->numel * es);
    if (g->dims[0] != o->dims[0] || g->dims[3] != o->dims[3])
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: grads and original_image differ in batch or channels: %lld x %lld and %lld x %lld",
                        def->name, (long long)g->dims[0], (long long)g->dims[3], (long long)o->dims[0],
                        (long long)o->dims[3]);
    if (g->numel == 0 || o->numel == 0) return LTF_OK;
    plan p;
    ltf_status st = plan_init(ctx, def, o, g, &p);
    if (st != LTF_OK) return st;
    double *acc = calloc((size_t)o->numel, sizeof(double));
    if (!acc) {
        free(p.y);
        free(p.x);
        return ltf_fail_oom(ctx, def->name, sizeof(double) * (size_t)o->numel);
    }
    for (int64_t b = 0; b < p.n; b++)
        for (int64_t i = 0; i < p.oh; i++)
            for (int64_t j = 0; j < p.ow; j++) {
                int64_t go = ((b * p.oh + i) * p.ow + j) * p.c;
                const axis_w *y = &p.y[i], *x = &p.x[j];
                int64_t r0 = (b * p.ih + y->lo) * p.iw, r1 = (b * p.ih + y->hi) * p.iw;
                int64_t tl = (r0 + x->lo) * p.c, tr = (r0 + x->hi) * p.c, bl = (r1 + x->lo) * p.c, br = (r1 + x->hi) * p.c;
                for (int64_t k = 0; k < p.c; k++) {
                    double v = rd(g, go + k);
                    if (def->code == 1) {
                        acc[tl + k] += v;
                        continue;
                    }
                    acc[tl + k] += v * (1 - y->w) * (1 - x->w);
                    acc[tr + k] += v * (1 - y->w) * x->w;
                    acc[bl + k] += v * y->w * (1 - x->w);
                    acc[br + k] += v * y->w * x->w;
                }
            }
    for (int64_t k = 0; k < o->numel; k++) {
        switch (o->dtype) {
        case LTF_DTYPE_FLOAT32: ((float *)LTF_DATA(o))[k] = (float)acc[k]; break;
        case LTF_DTYPE_FLOAT64: ((double *)LTF_DATA(o))[k] = acc[k]; break;
        case LTF_DTYPE_INT32: ((int32_t *)LTF_DATA(o))[k] = (int32_t)acc[k]; break;
        case LTF_DTYPE_INT64: ((int64_t *)LTF_DATA(o))[k] = (int64_t)acc[k]; break;
        case LTF_DTYPE_UINT8: ((uint8_t *)LTF_DATA(o))[k] = (uint8_t)acc[k]; break;
        default: break;
        }
    }
    free(acc);
    free(p.y);
    free(p.x);
    return LTF_OK;
}

/* {==== image_transform: TensorFlow's ImageProjectiveTransformV3. Each
** output pixel (x = column, y = row) reads the input at
**   ((t0 x + t1 y + t2) / k, (t3 x + t4 y + t5) / k), k = t6 x + t7 y + 1
** (a zero k reads the fill value); coordinates outside the image are mapped
** by the fill mode (reflect: dcba|abcd|dcba, wrap: abcd|abcd|abcd, nearest:
** the edge pixel, constant: the fill value), then sampled by nearest
** (round half away from zero) or bilinear interpolation, in float as
** TensorFlow's kernel. */
static float map_reflect(float c, int64_t len) {
    if (c < 0) {
        if (len <= 1) c = 0;
        else {
            int64_t sz2 = 2 * len;
            if (c < (float)sz2) c = (float)(sz2 * (int64_t)(-c / (float)sz2)) + c;
            c = c < (float)-len ? c + (float)sz2 : -c - 1;
        }
    } else if (c > (float)(len - 1)) {
        if (len <= 1) c = 0;
        else {
            int64_t sz2 = 2 * len;
            c -= (float)(sz2 * (int64_t)(c / (float)sz2));
            if (c >= (float)len) c = (float)sz2 - c - 1;
        }
    }
    return c < 0 ? 0 : (c > (float)(len - 1) ? (float)(len - 1) : c);
}

static float map_wrap(float c, int64_t len) {
    if (c < 0) {
        if (len <= 1) c = 0;
        else {
            int64_t sz = len - 1;
            c += (float)(len * ((int64_t)(-c / (float)sz) + 1));
        }
    } else if (c > (float)(len - 1)) {
        if (len <= 1) c = 0;
        else {
            int64_t sz = len - 1;
            c -= (float)(len * (int64_t)(c / (float)sz));
        }
    }
    return c < 0 ? 0 : (c > (float)(len - 1) ? (float)(len - 1) : c);
}

static float map_coord(float c, int64_t len, int64_t mode) {
    /* non-finite stays out of range (the fill value); a huge coordinate is
    ** first brought within a period (the float to integer casts below
    ** would overflow) */
    if (!isfinite(c)) return -1;
    if ((mode == 0 || mode == 1) && fabsf(c) > 1e9f && len > 1) {
        double p = mode == 0 ? 2.0 * (double)len : (double)(len - 1);
        c = (float)fmod((double)c, p);
    }
    switch (mode) {
    case 0: return map_reflect(c, len);
    case 1: return map_wrap(c, len);
    case 3: return c < 0 ? 0 : (c > (float)(len - 1) ? (float)(len - 1) : c);
    default: return c;
    }
}

typedef struct xform_img {
    const ltf_tensor *t;
    int64_t h, w, c;
    double fill;
} xform_img;

/* the pixel (b, y, x, k), or the fill value outside the image */
static double px(const xform_img *im, int64_t b, int64_t y, int64_t x, int64_t k) {
    if (y < 0 || y >= im->h || x < 0 || x >= im->w) return im->fill;
    return rd(im->t, ((b * im->h + y) * im->w + x) * im->c + k);
}

static void wr(ltf_tensor *o, int64_t i, double v) {
    void *p = LTF_DATA(o);
    switch (o->dtype) {
    case LTF_DTYPE_FLOAT32: ((float *)p)[i] = (float)v; break;
    case LTF_DTYPE_FLOAT64: ((double *)p)[i] = v; break;
    case LTF_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case LTF_DTYPE_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
    case LTF_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    default: break;
    }
}

ltf_status ltf_cpu_image_transform(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                   const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *img = in[0], *tr = in[1];
    ltf_tensor *o = out[0];
    if (tr->dims[0] != 1 && tr->dims[0] != img->dims[0])
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'transforms' has %lld rows for %lld images (expected 1 or "
                        "the batch size)", def->name, (long long)tr->dims[0], (long long)img->dims[0]);
    if (o->numel == 0) return LTF_OK;
    if (img->dims[1] == 0 || img->dims[2] == 0) {
        for (int64_t i = 0; i < o->numel; i++) wr(o, i, a->f[0]);
        return LTF_OK;
    }
    xform_img im = { img, img->dims[1], img->dims[2], img->dims[3], a->f[0] };
    const int64_t oh = o->dims[1], ow = o->dims[2], n = o->dims[0], nc = o->dims[3];
    const int bilinear = a->i[0] == 1;
    const int64_t mode = a->i[1];
    const float *T = LTF_DATA(tr);
    for (int64_t b = 0; b < n; b++) {
        const float *t = tr->dims[0] == 1 ? T : T + 8 * b;
        for (int64_t oy = 0; oy < oh; oy++)
            for (int64_t ox = 0; ox < ow; ox++) {
                int64_t base = ((b * oh + oy) * ow + ox) * nc;
                float k = t[6] * (float)ox + t[7] * (float)oy + 1.f;
                float x = 0, y = 0;
                int fill = k == 0;
                if (!fill) {
                    float ix = (t[0] * (float)ox + t[1] * (float)oy + t[2]) / k;
                    float iy = (t[3] * (float)ox + t[4] * (float)oy + t[5]) / k;
                    x = map_coord(ix, im.w, mode);
                    y = map_coord(iy, im.h, mode);
                    fill = x < 0 || x > (float)(im.w - 1) || y < 0 || y > (float)(im.h - 1) || x != x || y != y;
                }
                for (int64_t c = 0; c < nc; c++) {
                    double v;
                    if (fill) {
                        v = im.fill;
                    } else if (!bilinear) {
                        v = px(&im, b, (int64_t)roundf(y), (int64_t)roundf(x), c);
                    } else {
                        float y0 = floorf(y), x0 = floorf(x), y1 = y0 + 1, x1 = x0 + 1;
                        float top = (x1 - x) * (float)px(&im, b, (int64_t)y0, (int64_t)x0, c) +
                                    (x - x0) * (float)px(&im, b, (int64_t)y0, (int64_t)x1, c);
                        float bot = (x1 - x) * (float)px(&im, b, (int64_t)y1, (int64_t)x0, c) +
                                    (x - x0) * (float)px(&im, b, (int64_t)y1, (int64_t)x1, c);
                        v = (y1 - y) * top + (y - y0) * bot;
                    }
                    wr(o, base + c, v);
                }
            }
    }
    return LTF_OK;
}
/* }==== */
