/*
** cuda/kernels/nn.cuh: softmax, log_softmax and the cross-entropies, line
** by line along the class axis as cpu/nn.c (the line's maximum subtracted
** before exp, sums in double). Softmax runs in two passes: one index per
** line computes the line's maximum and sum, then one index per element
** writes it.
*/
#ifndef LTF_CU_NN_CUH
#define LTF_CU_NN_CUH

#include "elementwise.cuh"

namespace ltf_cu {

/* Line l covers x[o, :, i] with o = l / inner, i = l % inner. */
LTF_HD int64_t line_base(int64_t l, int64_t len, int64_t inner) {
    int64_t o = l / inner;
    return o * len * inner + (l - o * inner);
}

/* T: the element type; A = Acc<T>: what it computes in (float for
** float16/bfloat16, whose results are rounded once at the end) */
template <class T> struct SoftmaxP {
    typedef typename Acc<T>::t A;
    const T *x;
    T *y;
    A *mx;           /* per line: maximum */
    A *k;            /* per line: 1 / sum (softmax) or log(sum) (log_softmax) */
    int64_t len, inner;
    int log;
};
template <class T> struct SoftmaxStatsF {
    static LTF_HD void at(int64_t l, const SoftmaxP<T> &p) {
        typedef typename Acc<T>::t A;
        const T *x = p.x + line_base(l, p.len, p.inner);
        int64_t st = p.inner;
        A mx = ldv(x[0]);
        for (int64_t q = 1; q < p.len; q++) if (ldv(x[q * st]) > mx) mx = ldv(x[q * st]);
        double sum = 0;
        for (int64_t q = 0; q < p.len; q++) sum += m_exp(ldv(x[q * st]) - mx);
        p.mx[l] = mx;
        p.k[l] = p.log ? m_log((A)sum) : (A)(1.0 / sum);
    }
};
template <class T> struct SoftmaxF {
    static LTF_HD void at(int64_t i, const SoftmaxP<T> &p) {
        typedef typename Acc<T>::t A;
        int64_t inner = p.inner, o = i / (p.len * inner), c = i % inner, l = o * inner + c;
        A v = ldv(p.x[i]) - p.mx[l];
        p.y[i] = stv<T>(p.log ? v - p.k[l] : m_exp(v) * p.k[l]);
    }
};

/* sparse_softmax_cross_entropy_with_logits: rows of 'classes' logits, one
** 1-based label per row (a label outside 1..classes raises ERR_INDEX). */
template <class T, class L> struct SparseXentP {
    const T *x;
    const L *labels;
    T *y;
    int64_t classes;
    int *flag;
};
template <class T, class L> struct SparseXentF {
    static LTF_HD void at(int64_t l, const SparseXentP<T, L> &p) {
        typedef typename Acc<T>::t A;
        const T *x = p.x + l * p.classes;
        int64_t lab = (int64_t)p.labels[l];
        if (lab < 1 || lab > p.classes) { raise_flag(p.flag, ERR_INDEX); p.y[l] = stv<T>((A)NAN); return; }
        A mx = ldv(x[0]);
        for (int64_t q = 1; q < p.classes; q++) if (ldv(x[q]) > mx) mx = ldv(x[q]);
        double sum = 0;
        for (int64_t q = 0; q < p.classes; q++) sum += m_exp(ldv(x[q]) - mx);
        p.y[l] = stv<T>((A)(log(sum) - (double)(ldv(x[lab - 1]) - mx)));
    }
};

/* softmax_cross_entropy_with_logits: loss = sum_q labels_q (lse - (x_q - max)) */
template <class T> struct XentP {
    const T *x, *lab;
    T *y;
    int64_t len, inner;
};
template <class T> struct XentF {
    static LTF_HD void at(int64_t l, const XentP<T> &p) {
        typedef typename Acc<T>::t A;
        int64_t base = line_base(l, p.len, p.inner), st = p.inner;
        const T *x = p.x + base, *lab = p.lab + base;
        A mx = ldv(x[0]);
        for (int64_t q = 1; q < p.len; q++) if (ldv(x[q * st]) > mx) mx = ldv(x[q * st]);
        double sum = 0, loss = 0;
        for (int64_t q = 0; q < p.len; q++) sum += m_exp(ldv(x[q * st]) - mx);
        double lse = log(sum);
        for (int64_t q = 0; q < p.len; q++) loss += (double)ldv(lab[q * st]) * (lse - (double)(ldv(x[q * st]) - mx));
        p.y[l] = stv<T>((A)loss);
    }
};

/* gelu (grad 0) and gelu_grad (grad 1: dy * gelu'(x)), cpu/nn.c's formulas:
** float32 with float functions (tanh(u) as 1 - 2 / (exp(2u) + 1)), float64
** in double */
#define LTF_CU_GELU_C 0.79788456080286535588      /* sqrt(2 / pi) */
#define LTF_CU_GELU_K 0.044715
#define LTF_CU_INV_SQRT2 0.70710678118654752440
#define LTF_CU_INV_SQRT2PI 0.39894228040143267794
LTF_HD float gelu_tanh(float u) { return 1.0f - 2.0f / (expf(2.0f * u) + 1.0f); }
LTF_HD double gelu_tanh(double u) { return tanh(u); }
LTF_HD float gelu_erf(float u) { return erff(u); }
LTF_HD double gelu_erf(double u) { return erf(u); }
template <class T> LTF_HD T gelu_f(T x, int approx) {
    const T half = (T)0.5, one = (T)1;
    if (approx) return half * x * (one + gelu_tanh((T)LTF_CU_GELU_C * (x + (T)LTF_CU_GELU_K * x * x * x)));
    return half * x * (one + gelu_erf(x * (T)LTF_CU_INV_SQRT2));
}
template <class T> LTF_HD T gelu_df(T x, int approx) {
    const T half = (T)0.5, one = (T)1;
    if (approx) {
        T t = gelu_tanh((T)LTF_CU_GELU_C * (x + (T)LTF_CU_GELU_K * x * x * x));
        return half * (one + t) + half * x * (one - t * t) * (T)LTF_CU_GELU_C * (one + (T)3 * (T)LTF_CU_GELU_K * x * x);
    }
    return half * (one + gelu_erf(x * (T)LTF_CU_INV_SQRT2)) + x * (T)LTF_CU_INV_SQRT2PI * m_exp((T)-0.5 * x * x);
}
template <class T> struct GeluP {
    const T *x, *dy;   /* dy NULL: gelu */
    T *y;
    int approx;
};
template <class T> struct GeluF {
    static LTF_HD void at(int64_t i, const GeluP<T> &p) {
        p.y[i] = p.dy ? p.dy[i] * gelu_df(p.x[i], p.approx) : gelu_f(p.x[i], p.approx);
    }
};

}  // namespace ltf_cu

#endif
