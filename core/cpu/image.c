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
