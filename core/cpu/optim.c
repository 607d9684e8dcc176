/*
** cpu/optim.c: the fused optimizer updates (ltf_ops/optim.h), one pass over
** the variable and its slots with Keras's formulas. Values are updated in
** place when nothing else holds their bytes, else copied first (a value
** read earlier never changes), as the assign kernels do.
*/
#include <math.h>
#include <string.h>
#include "cpu.h"
#include "../variable.h"
#include "../storage.h"
#include "../shape.h"

static int exclusive(const ltf_tensor *t) {
    return !t->shared && !t->storage->shared && t->refs == 1 && t->storage->refs == 1 &&
           (t->storage->inline_data || t->storage->device != LTF_DEVICE_CPU);
}

/* The variable's value, made safe to write in place. */
static ltf_tensor *writable(ltf_ctx *ctx, ltf_variable *v) {
    if (exclusive(v->value)) return v->value;
    ltf_tensor *n = ltf_tensor_clone(ctx, v->value);
    if (!n) return NULL;
    ltf_variable_set(v, n);
    return n;
}

static double scalar(const ltf_tensor *t) {
    const void *p = LTF_DATA(t);
    switch (t->dtype) {
    case LTF_DTYPE_FLOAT32: return *(const float *)p;
    case LTF_DTYPE_FLOAT64: return *(const double *)p;
    case LTF_DTYPE_INT32: return *(const int32_t *)p;
    default: return (double)*(const int64_t *)p;
    }
}

static int same_dims(const ltf_tensor *a, const ltf_tensor *b) {
    return a->rank == b->rank && memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank) == 0;
}

typedef struct {
    int code, nesterov, amsgrad, has_mom, centered;
    double lr, step, f[4];
} params;

/* One update for element type T (float or double); slots s[0..2]. */
#define UPDATE(T, SQRT)                                                                                     \
    static void update_##T(const params *p, int64_t n, T *x, T *const *s, const T *g) {                   \
        const T lr = (T)p->lr;                                                                             \
        switch (p->code) {                                                                                 \
        case 0:                                                                                            \
            for (int64_t i = 0; i < n; i++) x[i] -= lr * g[i];                                             \
            break;                                                                                         \
        case 1: {                                                                                          \
            const T mu = (T)p->f[0];                                                                       \
            T *m = s[0];                                                                                   \
            if (p->nesterov)                                                                               \
                for (int64_t i = 0; i < n; i++) {                                                          \
                    m[i] = mu * m[i] - lr * g[i];                                                          \
                    x[i] += mu * m[i] - lr * g[i];                                                         \
                }                                                                                          \
            else                                                                                           \
                for (int64_t i = 0; i < n; i++) {                                                          \
                    m[i] = mu * m[i] - lr * g[i];                                                          \
                    x[i] += m[i];                                                                          \
                }                                                                                          \
            break;                                                                                         \
        }                                                                                                  \
        case 2: {                                                                                          \
            const double b1 = p->f[0], b2 = p->f[1];                                                       \
            const T eps = (T)p->f[2], wd = (T)(p->f[3] * p->lr);                                           \
            const T alpha = (T)(p->lr * sqrt(1.0 - pow(b2, p->step)) / (1.0 - pow(b1, p->step)));          \
            const T c1 = (T)(1.0 - b1), c2 = (T)(1.0 - b2);                                                \
            T *m = s[0], *v = s[1], *vh = s[2];                                                            \
            for (int64_t i = 0; i < n; i++) {                                                              \
                if (wd != 0) x[i] -= x[i] * wd;                                                            \
                m[i] += (g[i] - m[i]) * c1;                                                                \
                v[i] += (g[i] * g[i] - v[i]) * c2;                                                         \
                T d = v[i];                                                                                \
                if (p->amsgrad) {                                                                          \
                    if (vh[i] < d) vh[i] = d;                                                              \
                    d = vh[i];                                                                             \
                }                                                                                          \
                x[i] -= m[i] * alpha / (SQRT(d) + eps);                                                    \
            }                                                                                              \
            break;                                                                                         \
        }                                                                                                  \
        case 3: {                                                                                          \
            const T rho = (T)p->f[0], mu = (T)p->f[1], eps = (T)p->f[2], c = (T)(1.0 - p->f[0]);          \
            T *r = s[0], *mom = p->has_mom ? s[1] : NULL, *mg = p->centered ? s[p->has_mom ? 2 : 1] : NULL; \
            for (int64_t i = 0; i < n; i++) {                                                              \
                r[i] = rho * r[i] + c * g[i] * g[i];                                                       \
                T den = r[i];                                                                              \
                if (mg) {                                                                                  \
                    mg[i] = rho * mg[i] + c * g[i];                                                        \
                    den -= mg[i] * mg[i];                                                                  \
                }                                                                                          \
                T inc = lr * g[i] / SQRT(den + eps);                                                       \
                if (mom) {                                                                                 \
                    mom[i] = mu * mom[i] + inc;                                                            \
                    x[i] -= mom[i];                                                                        \
                } else {                                                                                   \
                    x[i] -= inc;                                                                           \
                }                                                                                          \
            }                                                                                              \
            break;                                                                                         \
        }                                                                                                  \
        default: {                                                                                         \
            const T eps = (T)p->f[0];                                                                      \
            T *acc = s[0];                                                                                 \
            for (int64_t i = 0; i < n; i++) {                                                              \
                acc[i] += g[i] * g[i];                                                                     \
                x[i] -= lr * g[i] / SQRT(acc[i] + eps);                                                    \
            }                                                                                              \
            break;                                                                                         \
        }                                                                                                  \
        }                                                                                                  \
    }
UPDATE(float, sqrtf)
UPDATE(double, sqrt)

ltf_status ltf_cpu_optim_apply(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_tensor **out, int nout) {
    int nh = ltf_optim_nhandles(def, a);
    ltf_variable *var = ltf_variable_of(in[0]);
    const ltf_tensor *g = in[nh];
    if (!same_dims(var->value, g) || g->dtype != var->value->dtype) {
        char sa[LTF_SHAPE_BUF], sb[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: variable '%s' has shape %s, the gradient has shape %s",
                        def->name, var->name, ltf_shape_str(var->value->rank, var->value->dims, sa, sizeof sa),
                        ltf_shape_str(g->rank, g->dims, sb, sizeof sb));
    }
    for (int i = 1; i < nh; i++) {
        ltf_variable *sv = ltf_variable_of(in[i]);
        if (!same_dims(var->value, sv->value) || sv->value->dtype != var->value->dtype) {
            char sa[LTF_SHAPE_BUF], sb[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: slot '%s' has shape %s, variable '%s' has shape %s",
                            def->name, sv->name, ltf_shape_str(sv->value->rank, sv->value->dims, sa, sizeof sa),
                            var->name, ltf_shape_str(var->value->rank, var->value->dims, sb, sizeof sb));
        }
        for (int j = 0; j < i; j++)
            if (ltf_variable_of(in[j]) == sv)
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: inputs %d and %d are the same variable '%s'",
                                def->name, j + 1, i + 1, sv->name);
    }
    params p = { def->code, 0, 0, 0, 0, scalar(in[nh + 1]), 1, { 0, 0, 0, 0 } };
    if (a) {
        for (int i = 0; i < 4; i++) p.f[i] = a->f[i];
        p.nesterov = p.amsgrad = p.has_mom = (int)a->i[0];
        p.centered = (int)a->i[1];
    }
    if (def->code == 2) p.step = scalar(in[nh + 2]);
    void *s[3] = { NULL, NULL, NULL };
    for (int i = 1; i < nh; i++) {
        ltf_tensor *t = writable(ctx, ltf_variable_of(in[i]));
        if (!t) return ctx->last_status;
        s[i - 1] = LTF_DATA(t);
    }
    ltf_tensor *x = writable(ctx, var);
    if (!x) return ctx->last_status;
    if (x->dtype == LTF_DTYPE_FLOAT32)
        update_float(&p, x->numel, LTF_DATA(x), (float *const *)s, LTF_DATA(g));
    else
        update_double(&p, x->numel, LTF_DATA(x), (double *const *)s, LTF_DATA(g));
    return LTF_OK;
}
