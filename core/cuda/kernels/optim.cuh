/*
** cuda/kernels/optim.cuh: the fused optimizer updates (ltf_ops/optim.h),
** one element per index, with cpu/optim.c's formulas in the same order and
** the same types (hyperparameters cast to T, Adam's step size computed in
** double), so the host build matches the CPU kernel. The learning rate and
** the step are read on the device from their scalar tensors (any real
** dtype), so a launch never waits for the host.
*/
#ifndef LTF_CU_OPTIM_CUH
#define LTF_CU_OPTIM_CUH

#include "elementwise.cuh"

namespace ltf_cu {

enum { OPT_SGD, OPT_MOMENTUM, OPT_ADAM, OPT_RMSPROP, OPT_ADAGRAD };

LTF_HD double load_real(const void *p, int dt) {
    switch (dt) {
    case DT_F32: return *(const float *)p;
    case DT_F64: return *(const double *)p;
    case DT_F16: return f16_float(*(const uint16_t *)p);
    case DT_BF16: return bf16_float(*(const uint16_t *)p);
    case DT_I32: return *(const int32_t *)p;
    default: return (double)*(const int64_t *)p;
    }
}

template <class T> struct OptimP {
    T *x;
    T *s[3];          /* slots in ltf_ops/optim.h's order */
    const T *g;
    const void *lr, *step;
    int lr_dt, step_dt;
    int code, nesterov, amsgrad, has_mom, centered;
    double f[4];
};

/* One element: the variable and its slots read into locals of the type T
** computes in (Acc<T>: float for float16/bfloat16, whose values are
** rounded back once, as the CPU's float32 staging does), updated with the
** CPU's formulas in its order, written back. */
template <class T> struct OptimF {
    static LTF_HD void at(int64_t i, const OptimP<T> &p) {
        typedef typename Acc<T>::t A;
        const double lrd = load_real(p.lr, p.lr_dt);
        const A lr = (A)lrd;
        A x = ldv(p.x[i]);
        const A g = ldv(p.g[i]);
        A s0 = p.s[0] ? ldv(p.s[0][i]) : (A)0, s1 = p.s[1] ? ldv(p.s[1][i]) : (A)0;
        A s2 = p.s[2] ? ldv(p.s[2][i]) : (A)0;
        switch (p.code) {
        case OPT_SGD: x -= lr * g; break;
        case OPT_MOMENTUM: {
            const A mu = (A)p.f[0];
            A &m = s0;
            m = mu * m - lr * g;
            if (p.nesterov) x += mu * m - lr * g;
            else x += m;
            break;
        }
        case OPT_ADAM: {
            const double b1 = p.f[0], b2 = p.f[1], step = load_real(p.step, p.step_dt);
            const A eps = (A)p.f[2], wd = (A)(p.f[3] * lrd);
            const A alpha = (A)(lrd * sqrt(1.0 - pow(b2, step)) / (1.0 - pow(b1, step)));
            const A c1 = (A)(1.0 - b1), c2 = (A)(1.0 - b2);
            A &m = s0, &v = s1, &vh = s2;
            if (wd != 0) x -= x * wd;
            m += (g - m) * c1;
            v += (g * g - v) * c2;
            A d = v;
            if (p.amsgrad) {
                if (vh < d) vh = d;
                d = vh;
            }
            x -= m * alpha / (m_sqrt(d) + eps);
            break;
        }
        case OPT_RMSPROP: {
            const A rho = (A)p.f[0], mu = (A)p.f[1], eps = (A)p.f[2], c = (A)(1.0 - p.f[0]);
            A &r = s0;
            A *mom = p.has_mom ? &s1 : 0, *mg = p.centered ? (p.has_mom ? &s2 : &s1) : 0;
            r = rho * r + c * g * g;
            A den = r;
            if (mg) {
                *mg = rho * *mg + c * g;
                den -= *mg * *mg;
            }
            A inc = lr * g / m_sqrt(den + eps);
            if (mom) {
                *mom = mu * *mom + inc;
                x -= *mom;
            } else {
                x -= inc;
            }
            break;
        }
        default: {
            const A eps = (A)p.f[0];
            A &acc = s0;
            acc += g * g;
            x -= lr * g / m_sqrt(acc + eps);
            break;
        }
        }
        p.x[i] = stv<T>(x);
        if (p.s[0]) p.s[0][i] = stv<T>(s0);
        if (p.s[1]) p.s[1][i] = stv<T>(s1);
        if (p.s[2]) p.s[2][i] = stv<T>(s2);
    }
};

}  // namespace ltf_cu

#endif
