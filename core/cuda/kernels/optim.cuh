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

template <class T> struct OptimF {
    static LTF_HD void at(int64_t i, const OptimP<T> &p) {
        const double lrd = load_real(p.lr, p.lr_dt);
        const T lr = (T)lrd;
        T *x = p.x;
        const T *g = p.g;
        switch (p.code) {
        case OPT_SGD: x[i] -= lr * g[i]; break;
        case OPT_MOMENTUM: {
            const T mu = (T)p.f[0];
            T *m = p.s[0];
            m[i] = mu * m[i] - lr * g[i];
            if (p.nesterov) x[i] += mu * m[i] - lr * g[i];
            else x[i] += m[i];
            break;
        }
        case OPT_ADAM: {
            const double b1 = p.f[0], b2 = p.f[1], step = load_real(p.step, p.step_dt);
            const T eps = (T)p.f[2], wd = (T)(p.f[3] * lrd);
            const T alpha = (T)(lrd * sqrt(1.0 - pow(b2, step)) / (1.0 - pow(b1, step)));
            const T c1 = (T)(1.0 - b1), c2 = (T)(1.0 - b2);
            T *m = p.s[0], *v = p.s[1], *vh = p.s[2];
            if (wd != 0) x[i] -= x[i] * wd;
            m[i] += (g[i] - m[i]) * c1;
            v[i] += (g[i] * g[i] - v[i]) * c2;
            T d = v[i];
            if (p.amsgrad) {
                if (vh[i] < d) vh[i] = d;
                d = vh[i];
            }
            x[i] -= m[i] * alpha / (m_sqrt(d) + eps);
            break;
        }
        case OPT_RMSPROP: {
            const T rho = (T)p.f[0], mu = (T)p.f[1], eps = (T)p.f[2], c = (T)(1.0 - p.f[0]);
            T *r = p.s[0], *mom = p.has_mom ? p.s[1] : 0, *mg = p.centered ? p.s[p.has_mom ? 2 : 1] : 0;
            r[i] = rho * r[i] + c * g[i] * g[i];
            T den = r[i];
            if (mg) {
                mg[i] = rho * mg[i] + c * g[i];
                den -= mg[i] * mg[i];
            }
            T inc = lr * g[i] / m_sqrt(den + eps);
            if (mom) {
                mom[i] = mu * mom[i] + inc;
                x[i] -= mom[i];
            } else {
                x[i] -= inc;
            }
            break;
        }
        default: {
            const T eps = (T)p.f[0];
            T *acc = p.s[0];
            acc[i] += g[i] * g[i];
            x[i] -= lr * g[i] / m_sqrt(acc[i] + eps);
            break;
        }
        }
    }
};

}  // namespace ltf_cu

#endif
