/*
** cuda/kernels/conv.cuh: conv2d, its two gradients and the pools (NHWC
** inputs, HWIO filters). Small convolutions run one output element per
** index, a direct loop over the element's window (one launch); larger ones
** build im2col columns and run GEMMs (cuBLAS on the device), below. No
** cuDNN: docs/cuda.md says why. The window arithmetic is
** cpu/nn.c's (TensorFlow's): input row of output row oh and filter row kh is
** oh * sh - pt + kh * dh; SAME puts the smaller half of the padding first.
**
** Gradients are written as gathers, so no index needs atomics and sums run
** in a fixed order: conv2d_backprop_input sums, for each input element, the
** (output pixel, filter tap) pairs that read it; conv2d_backprop_filter
** sums, for each filter element, over every output pixel; max_pool2d_grad
** first writes each window's argmax (pass 1), then each input element sums
** dy over the windows whose argmax it is, in cpu/nn.c's order (windows by
** row, then column), so the host build matches the CPU exactly.
*/
#ifndef LTF_CU_CONV_CUH
#define LTF_CU_CONV_CUH

#include "common.cuh"

namespace ltf_cu {

/* A window plan: cpu/nn.c's win_plan without the element size. */
struct Win {
    int64_t n, h, w, c;        /* input NHWC */
    int64_t kh, kw, o;         /* window (conv: filter height/width, output channels) */
    int64_t oh, ow;            /* output spatial size */
    int64_t sh, sw, dh, dw;    /* strides, dilations */
    int64_t pt, pl;            /* padding before (top, left) */
};

/* {==== conv2d */
template <class T> struct ConvP {
    const T *x, *f, *dy;       /* forward: x, f; bpi: f, dy; bpf: x, dy */
    T *o;
    Win p;
};

/* y[n, oy, ox, oc] = sum over (kh, kw, c) of x[n, iy, ix, c] * f[kh, kw, c, oc] */
template <class T> struct ConvF {
    static LTF_HD void at(int64_t i, const ConvP<T> &q) {
        const Win &p = q.p;
        int64_t oc = i % p.o, r = i / p.o;
        int64_t ox = r % p.ow;
        r /= p.ow;
        int64_t oy = r % p.oh, n = r / p.oh;
        T acc = 0;
        for (int64_t kh = 0; kh < p.kh; kh++) {
            int64_t iy = oy * p.sh - p.pt + kh * p.dh;
            if (iy < 0 || iy >= p.h) continue;
            for (int64_t kw = 0; kw < p.kw; kw++) {
                int64_t ix = ox * p.sw - p.pl + kw * p.dw;
                if (ix < 0 || ix >= p.w) continue;
                const T *xr = q.x + ((n * p.h + iy) * p.w + ix) * p.c;
                const T *fr = q.f + (kh * p.kw + kw) * p.c * p.o + oc;
                for (int64_t c = 0; c < p.c; c++) acc += xr[c] * fr[c * p.o];
            }
        }
        q.o[i] = acc;
    }
};

/* Calls f(oy, ox, kh, kw) for each (output pixel, filter tap) pair that
** reads input pixel (iy, ix), taps in row-major order: the order both
** input-gradient gathers (ConvBackInputF, Col2imF) sum in. */
template <class F> LTF_HD void for_each_reader(const Win &p, int64_t iy, int64_t ix, F &f) {
    for (int64_t kh = 0; kh < p.kh; kh++) {
        int64_t ty = iy + p.pt - kh * p.dh;
        if (ty < 0 || ty % p.sh != 0) continue;
        int64_t oy = ty / p.sh;
        if (oy >= p.oh) continue;
        for (int64_t kw = 0; kw < p.kw; kw++) {
            int64_t tx = ix + p.pl - kw * p.dw;
            if (tx < 0 || tx % p.sw != 0) continue;
            int64_t ox = tx / p.sw;
            if (ox >= p.ow) continue;
            f(oy, ox, kh, kw);
        }
    }
}

/* dx[n, iy, ix, c] = sum over taps (kh, kw) and output channels oc of
** dy[n, oy, ox, oc] * f[kh, kw, c, oc], for the output pixels (oy, ox) whose
** tap (kh, kw) reads (iy, ix) */
template <class T> struct ConvBackInputF {
    static LTF_HD void at(int64_t i, const ConvP<T> &q) {
        const Win &p = q.p;
        int64_t c = i % p.c, r = i / p.c;
        int64_t ix = r % p.w;
        r /= p.w;
        int64_t iy = r % p.h, n = r / p.h;
        T acc = 0;
        auto add = [&](int64_t oy, int64_t ox, int64_t kh, int64_t kw) {
            const T *g = q.dy + ((n * p.oh + oy) * p.ow + ox) * p.o;
            const T *fr = q.f + ((kh * p.kw + kw) * p.c + c) * p.o;
            for (int64_t oc = 0; oc < p.o; oc++) acc += g[oc] * fr[oc];
        };
        for_each_reader(p, iy, ix, add);
        q.o[i] = acc;
    }
};

/* df[kh, kw, c, oc] = sum over (n, oy, ox) of x[n, iy, ix, c] * dy[n, oy, ox, oc] */
template <class T> struct ConvBackFilterF {
    static LTF_HD void at(int64_t i, const ConvP<T> &q) {
        const Win &p = q.p;
        int64_t oc = i % p.o, r = i / p.o;
        int64_t c = r % p.c;
        r /= p.c;
        int64_t kw = r % p.kw, kh = r / p.kw;
        T acc = 0;
        for (int64_t n = 0; n < p.n; n++)
            for (int64_t oy = 0; oy < p.oh; oy++) {
                int64_t iy = oy * p.sh - p.pt + kh * p.dh;
                if (iy < 0 || iy >= p.h) continue;
                for (int64_t ox = 0; ox < p.ow; ox++) {
                    int64_t ix = ox * p.sw - p.pl + kw * p.dw;
                    if (ix < 0 || ix >= p.w) continue;
                    acc += q.x[((n * p.h + iy) * p.w + ix) * p.c + c] * q.dy[((n * p.oh + oy) * p.ow + ox) * p.o + oc];
                }
            }
        q.o[i] = acc;
    }
};
/* }==== */

/* {==== conv2d as GEMMs over im2col columns (conv_gemm in ops.cuh): the
** columns of images [n0, n0 + nb) are a (nb * oh * ow) x (kh * kw * c)
** matrix, row (n, oy, ox), column (kh, kw, c) (the HWIO filter's row order),
** so conv2d is cols @ f, the filter gradient cols^T @ dy and the input
** gradient col2im(dy @ f^T). */
template <class T> struct ColsP {
    const T *x;                /* the input, NHWC (im2col) */
    const T *dcols;            /* the columns' gradient (col2im) */
    T *o;                      /* the columns (im2col) or dx of image n0 on (col2im) */
    Win p;
    int64_t n0;                /* first image of the chunk (im2col) */
};

/* cols[r, k]: the input element tap k of output pixel r reads; 0 in the padding */
template <class T> struct Im2colF {
    static LTF_HD void at(int64_t i, const ColsP<T> &q) {
        const Win &p = q.p;
        int64_t kk = p.kh * p.kw * p.c;
        int64_t k = i % kk, r = i / kk;
        int64_t c = k % p.c, t = k / p.c;
        int64_t kw = t % p.kw, kh = t / p.kw;
        int64_t ox = r % p.ow;
        r /= p.ow;
        int64_t oy = r % p.oh, n = q.n0 + r / p.oh;
        int64_t iy = oy * p.sh - p.pt + kh * p.dh, ix = ox * p.sw - p.pl + kw * p.dw;
        q.o[i] = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w ? q.x[((n * p.h + iy) * p.w + ix) * p.c + c] : T(0);
    }
};

/* dx[n, iy, ix, c] (n within the chunk) = sum over the taps (kh, kw) whose
** output pixel (oy, ox) reads it of dcols[(n, oy, ox), (kh, kw, c)]: a
** gather in ConvBackInputF's order, no atomics */
template <class T> struct Col2imF {
    static LTF_HD void at(int64_t i, const ColsP<T> &q) {
        const Win &p = q.p;
        int64_t kk = p.kh * p.kw * p.c;
        int64_t c = i % p.c, r = i / p.c;
        int64_t ix = r % p.w;
        r /= p.w;
        int64_t iy = r % p.h, n = r / p.h;
        T acc = 0;
        auto add = [&](int64_t oy, int64_t ox, int64_t kh, int64_t kw) {
            acc += q.dcols[((n * p.oh + oy) * p.ow + ox) * kk + (kh * p.kw + kw) * p.c + c];
        };
        for_each_reader(p, iy, ix, add);
        q.o[i] = acc;
    }
};
/* }==== */

/* {==== Pools: the valid window of output pixel (oy, ox) is rows [h0, h1),
** columns [w0, w1) */
struct Window {
    int64_t h0, h1, w0, w1;
    LTF_HD Window(const Win &p, int64_t oy, int64_t ox) {
        h0 = oy * p.sh - p.pt;
        w0 = ox * p.sw - p.pl;
        h1 = h0 + p.kh;
        w1 = w0 + p.kw;
        if (h0 < 0) h0 = 0;
        if (w0 < 0) w0 = 0;
        if (h1 > p.h) h1 = p.h;
        if (w1 > p.w) w1 = p.w;
    }
};

/* Output rows (or columns) whose windows cover input row 'ih': [lo, hi]. */
LTF_HD void covering(int64_t ih, int64_t pad, int64_t k, int64_t s, int64_t nout, int64_t *lo, int64_t *hi) {
    int64_t l = ih + pad - k + 1, h = (ih + pad) / s;
    *lo = l <= 0 ? 0 : (l + s - 1) / s;
    *hi = h >= nout ? nout - 1 : h;
}

template <class T> struct PoolP {
    const T *x, *g;
    T *o;
    int64_t *arg;              /* max_pool2d_grad: each window's argmax (pixel index, -1: empty) */
    Win p;
};

/* The first maximum of the window in row-major order, or its first NaN
** (cpu/nn.c's argmax_window); -1 for an empty window. */
template <class T> LTF_HD int64_t window_argmax(const Win &p, const T *x, int64_t n, int64_t oy, int64_t ox, int64_t c) {
    Window w(p, oy, ox);
    int64_t arg = -1;
    T best = 0;
    for (int64_t ih = w.h0; ih < w.h1; ih++)
        for (int64_t iw = w.w0; iw < w.w1; iw++) {
            int64_t pix = (n * p.h + ih) * p.w + iw;
            T v = x[pix * p.c + c];
            if (arg < 0 || v > best || (v != v && best == best)) {
                best = v;
                arg = pix;
            }
        }
    return arg;
}

/* max_pool2d: the window's maximum, NaN propagating; 0 for an empty window */
template <class T> struct MaxPoolF {
    static LTF_HD void at(int64_t i, const PoolP<T> &q) {
        const Win &p = q.p;
        int64_t c = i % p.c, r = i / p.c;
        int64_t ox = r % p.ow;
        r /= p.ow;
        int64_t oy = r % p.oh, n = r / p.oh;
        Window w(p, oy, ox);
        T acc = 0;
        bool first = true;
        for (int64_t ih = w.h0; ih < w.h1; ih++)
            for (int64_t iw = w.w0; iw < w.w1; iw++) {
                T v = q.x[((n * p.h + ih) * p.w + iw) * p.c + c];
                if (first || v > acc || v != v) acc = v;
                first = false;
            }
        q.o[i] = acc;
    }
};

/* avg_pool2d: the sum over the valid window times 1 / its size */
template <class T> struct AvgPoolF {
    static LTF_HD void at(int64_t i, const PoolP<T> &q) {
        const Win &p = q.p;
        int64_t c = i % p.c, r = i / p.c;
        int64_t ox = r % p.ow;
        r /= p.ow;
        int64_t oy = r % p.oh, n = r / p.oh;
        Window w(p, oy, ox);
        T acc = 0;
        for (int64_t ih = w.h0; ih < w.h1; ih++)
            for (int64_t iw = w.w0; iw < w.w1; iw++) acc += q.x[((n * p.h + ih) * p.w + iw) * p.c + c];
        int64_t count = (w.h1 > w.h0 ? w.h1 - w.h0 : 0) * (w.w1 > w.w0 ? w.w1 - w.w0 : 0);
        if (count > 0) acc *= (T)1 / (T)count;
        q.o[i] = acc;
    }
};

/* max_pool2d_grad pass 1: arg[n, oy, ox, c] = the window's argmax */
template <class T> struct MaxArgF {
    static LTF_HD void at(int64_t i, const PoolP<T> &q) {
        const Win &p = q.p;
        int64_t c = i % p.c, r = i / p.c;
        int64_t ox = r % p.ow;
        r /= p.ow;
        int64_t oy = r % p.oh, n = r / p.oh;
        q.arg[i] = window_argmax(p, q.x, n, oy, ox, c);
    }
};

/* max_pool2d_grad pass 2: dx[n, ih, iw, c] = sum of dy over the windows
** whose argmax is this pixel */
template <class T> struct MaxGradF {
    static LTF_HD void at(int64_t i, const PoolP<T> &q) {
        const Win &p = q.p;
        int64_t c = i % p.c, pix = i / p.c;
        int64_t iw = pix % p.w, r = pix / p.w;
        int64_t ih = r % p.h, n = r / p.h;
        int64_t ylo, yhi, xlo, xhi;
        covering(ih, p.pt, p.kh, p.sh, p.oh, &ylo, &yhi);
        covering(iw, p.pl, p.kw, p.sw, p.ow, &xlo, &xhi);
        T acc = 0;
        for (int64_t oy = ylo; oy <= yhi; oy++)
            for (int64_t ox = xlo; ox <= xhi; ox++) {
                int64_t k = ((n * p.oh + oy) * p.ow + ox) * p.c + c;
                if (q.arg[k] == pix) acc += q.g[k];
            }
        q.o[i] = acc;
    }
};

/* max_pool2d_grad_grad: out[n, oy, ox, c] = g at the window's argmax */
template <class T> struct MaxGradGradF {
    static LTF_HD void at(int64_t i, const PoolP<T> &q) {
        const Win &p = q.p;
        int64_t c = i % p.c, r = i / p.c;
        int64_t ox = r % p.ow;
        r /= p.ow;
        int64_t oy = r % p.oh, n = r / p.oh;
        int64_t a = window_argmax(p, q.x, n, oy, ox, c);
        q.o[i] = a >= 0 ? q.g[a * p.c + c] : (T)0;
    }
};

/* avg_pool2d_grad: dx[n, ih, iw, c] = sum of dy / count over the windows
** covering the pixel */
template <class T> struct AvgGradF {
    static LTF_HD void at(int64_t i, const PoolP<T> &q) {
        const Win &p = q.p;
        int64_t c = i % p.c, pix = i / p.c;
        int64_t iw = pix % p.w, r = pix / p.w;
        int64_t ih = r % p.h, n = r / p.h;
        int64_t ylo, yhi, xlo, xhi;
        covering(ih, p.pt, p.kh, p.sh, p.oh, &ylo, &yhi);
        covering(iw, p.pl, p.kw, p.sw, p.ow, &xlo, &xhi);
        T acc = 0;
        for (int64_t oy = ylo; oy <= yhi; oy++)
            for (int64_t ox = xlo; ox <= xhi; ox++) {
                Window w(p, oy, ox);
                int64_t count = (w.h1 - w.h0) * (w.w1 - w.w0);
                if (count <= 0) continue;
                T inv = (T)1 / (T)count;
                acc += q.g[((n * p.oh + oy) * p.ow + ox) * p.c + c] * inv;
            }
        q.o[i] = acc;
    }
};
/* }==== */

}  // namespace ltf_cu

#endif
