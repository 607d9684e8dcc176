/*
** cuda/kernels/random.cuh: the random ops on the device (ltf_ops/random.h:
** random_normal, random_uniform, truncated_normal, random_gamma,
** categorical, random_shuffle; ltf_ops/nn.h: dropout_noise), over the
** counter-based Philox4x32-10 of philox.cuh instead of the CPU's
** sequential xoshiro256**: every index computes its own values, so a
** launch is deterministic and needs no state on the device.
**
** Seeds. An op-level or stateless seed (attrs i[1] = 1) is the Philox key
** i[2] and the counter's high half i[3]: the same pair gives the same values
** on every call. Without one (i[1] = 0) the host draws the key once per call
** from the context's generator (core_api->rand64: the module cannot link to
** the engine), so tf.random.set_seed(s) followed by the same ops gives the
** same values on every run. The values differ from the CPU kernels' for the
** same seed (another generator): docs/cuda.md.
**
** Streams (philox.cuh's counter layout):
**   normal, uniform floats, dropout_noise   stream j = block j of outputs:
**                                           4 float32 (2 double) values
**   uniform integers, truncated_normal,     stream k = output element k, its
**   random_gamma, categorical               rejection loop drawing rounds
**   random_shuffle                          stream j = row j: a 64-bit key
** Distributions (the CPU's methods): Box-Muller (float32 in float from 24-bit
** uniforms, float64 in double from 53-bit ones), uniform [minval, maxval)
** (a value rounding up to maxval moved one step down), unbiased integers by
** rejection (32-bit draws when the range fits), truncated_normal redrawing
** beyond 2 stddev, Marsaglia-Tsang gamma (alpha < 1 boosted by U^(1/alpha);
** in double), categorical by inverse CDF over each row's cumulative
** exp(logit - max) (one index per row sums it, in the CPU's order).
** random_shuffle sorts the rows by random 64-bit keys (ties, with
** probability about n^2 / 2^65, keep their order) with sort.cuh's merge
** passes, then gathers them.
*/
#ifndef LTF_CU_RANDOM_CUH
#define LTF_CU_RANDOM_CUH

#include "philox.cuh"
#include "sort.cuh"

namespace ltf_cu {

/* {==== Bodies */
LTF_HD float below_max(float v, float lo, float hi) { return lo < hi && v >= hi ? nextafterf(hi, lo) : v; }
LTF_HD double below_max(double v, double lo, double hi) { return lo < hi && v >= hi ? nextafter(hi, lo) : v; }

template <class T> struct RandP {
    T *o;
    int64_t n;
    T a, b;               /* minval, maxval (uniform); mean, stddev (normal) */
    Philox g;
};

/* uniform float32: index j writes elements 4j .. 4j+3 */
struct UniformF32 {
    static LTF_HD void at(int64_t j, const RandP<float> &p) {
        uint32_t w[4];
        philox_block(p.g, (uint64_t)j, 0, w);
        for (int q = 0; q < 4 && 4 * j + q < p.n; q++)
            p.o[4 * j + q] = below_max(p.a + unit24(w[q]) * (p.b - p.a), p.a, p.b);
    }
};
/* uniform float64: index j writes elements 2j, 2j+1 */
struct UniformF64 {
    static LTF_HD void at(int64_t j, const RandP<double> &p) {
        uint32_t w[4];
        philox_block(p.g, (uint64_t)j, 0, w);
        for (int q = 0; q < 2 && 2 * j + q < p.n; q++)
            p.o[2 * j + q] = below_max(p.a + unit53(join64(w[2 * q], w[2 * q + 1])) * (p.b - p.a), p.a, p.b);
    }
};
/* normal float32: index j writes elements 4j .. 4j+3 (two Box-Muller pairs) */
struct NormalF32 {
    static LTF_HD void at(int64_t j, const RandP<float> &p) {
        uint32_t w[4];
        philox_block(p.g, (uint64_t)j, 0, w);
        float z[4];
        box_muller(w[0], w[1], z[0], z[1]);
        box_muller(w[2], w[3], z[2], z[3]);
        for (int q = 0; q < 4 && 4 * j + q < p.n; q++) p.o[4 * j + q] = p.a + p.b * z[q];
    }
};
/* normal float64: index j writes elements 2j, 2j+1 (one pair) */
struct NormalF64 {
    static LTF_HD void at(int64_t j, const RandP<double> &p) {
        uint32_t w[4];
        philox_block(p.g, (uint64_t)j, 0, w);
        double z[2];
        box_muller(join64(w[0], w[1]), join64(w[2], w[3]), z[0], z[1]);
        for (int q = 0; q < 2 && 2 * j + q < p.n; q++) p.o[2 * j + q] = p.a + p.b * z[q];
    }
};

/* One standard normal of a stream within 2 (the pair's second value tried
** next); 0 if the stream ran out (65536 rounds: never in practice). */
LTF_HD float trunc_z(Stream &t, float) {
    while (!stream_spent(t)) {
        uint32_t a = stream_next32(t), b = stream_next32(t);
        float z0, z1;
        box_muller(a, b, z0, z1);
        if (fabsf(z0) <= 2.0f) return z0;
        if (fabsf(z1) <= 2.0f) return z1;
    }
    return 0.0f;
}
LTF_HD double trunc_z(Stream &t, double) {
    while (!stream_spent(t)) {
        uint64_t a = stream_next64(t), b = stream_next64(t);
        double z0, z1;
        box_muller(a, b, z0, z1);
        if (fabs(z0) <= 2.0) return z0;
        if (fabs(z1) <= 2.0) return z1;
    }
    return 0.0;
}
/* truncated_normal: element k from stream k */
template <class T> struct TruncF {
    static LTF_HD void at(int64_t k, const RandP<T> &p) {
        Stream t;
        stream_init(t, p.g, (uint64_t)k);
        p.o[k] = p.a + p.b * trunc_z(t, (T)0);
    }
};

/* uniform integers in [lo, lo + range): element k from stream k, unbiased
** (draws below 2^w mod range are rejected, w = 32 when the range fits) */
template <class I> struct UniformIntP {
    I *o;
    uint64_t lo, range;
    Philox g;
};
template <class I> struct UniformIntF {
    static LTF_HD void at(int64_t k, const UniformIntP<I> &p) {
        Stream t;
        stream_init(t, p.g, (uint64_t)k);
        uint64_t v;
        if (p.range <= 0xffffffffull) {
            uint32_t r = (uint32_t)p.range, lim = (0u - r) % r, x;
            do x = stream_next32(t); while (x < lim && !stream_spent(t));
            v = x % r;
        } else {
            uint64_t lim = (0ull - p.range) % p.range, x;
            do x = stream_next64(t); while (x < lim && !stream_spent(t));
            v = x % p.range;
        }
        p.o[k] = (I)(int64_t)(p.lo + v);
    }
};

/* One Gamma(alpha, 1) draw (cpu/random.c's gamma1 on a stream): Marsaglia
** and Tsang; alpha < 1 through Gamma(alpha + 1) * U^(1/alpha); alpha <= 0
** or NaN gives NaN (so does a spent stream). */
LTF_HD double gamma_draw(Stream &t, double alpha) {
    if (!(alpha > 0)) return NAN;
    double boost = 1;
    if (alpha < 1) {
        boost = pow(unit53_open(stream_next64(t)), 1.0 / alpha);
        alpha += 1;
    }
    double d = alpha - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d), spare = 0;
    bool have = false;
    while (!stream_spent(t)) {
        double x;
        if (have) {
            x = spare;
            have = false;
        } else {
            uint64_t a = stream_next64(t), b = stream_next64(t);
            box_muller(a, b, x, spare);
            have = true;
        }
        double v = 1.0 + c * x;
        if (v <= 0) continue;
        v = v * v * v;
        double u = unit53_open(stream_next64(t));
        if (u < 1.0 - 0.0331 * x * x * x * x || log(u) < 0.5 * x * x + d * (1.0 - v + log(v))) return boost * d * v;
    }
    return NAN;
}
template <class T> struct GammaP {
    const T *alpha;
    T *o;
    int64_t na;
    Philox g;
};
/* random_gamma: element k (alpha[k mod na]) from stream k */
template <class T> struct GammaF {
    static LTF_HD void at(int64_t k, const GammaP<T> &p) {
        Stream t;
        stream_init(t, p.g, (uint64_t)k);
        p.o[k] = (T)gamma_draw(t, (double)p.alpha[k % p.na]);
    }
};

/* categorical, pass 1 (one index per row): the cumulative weights
** exp(logit - max) of row b in cum[b, :] (cpu/random.c's order; a row whose
** max is not finite weighs 0 everywhere) */
template <class T> struct CatCumP {
    const T *l;
    double *cum;
    int64_t classes;
};
template <class T> struct CatCumF {
    static LTF_HD void at(int64_t b, const CatCumP<T> &p) {
        const T *l = p.l + b * p.classes;
        double *cum = p.cum + b * p.classes, mx = -INFINITY, total = 0;
        for (int64_t c = 0; c < p.classes; c++) {
            double v = (double)l[c];
            if (v > mx) mx = v;
        }
        bool finite = mx - mx == mx - mx;
        for (int64_t c = 0; c < p.classes; c++) {
            double w = exp((double)l[c] - mx);
            if (!(w >= 0) || !finite) w = 0;
            total += w;
            cum[c] = total;
        }
    }
};
/* categorical, pass 2: sample (b, s) from stream b * num_samples + s: the
** first class whose cumulative weight exceeds U * total, 1-based; a row
** without a positive finite total gives classes + 1 */
template <class I> struct CatSampleP {
    const double *cum;
    I *o;
    int64_t classes, ns;
    Philox g;
};
template <class I> struct CatSampleF {
    static LTF_HD void at(int64_t i, const CatSampleP<I> &p) {
        const double *cum = p.cum + (i / p.ns) * p.classes;
        double total = cum[p.classes - 1];
        int64_t pick = p.classes;
        if (total > 0 && total - total == 0) {
            Stream t;
            stream_init(t, p.g, (uint64_t)i);
            double u = unit53(stream_next64(t)) * total;
            int64_t lo = 0, hi = p.classes - 1;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (cum[mid] > u) hi = mid;
                else lo = mid + 1;
            }
            pick = lo;
        }
        p.o[i] = (I)(pick + 1);
    }
};

/* random_shuffle, step 1: row j's random key (stream j) and its position */
struct ShuffleKeyP {
    uint64_t *k, *pay;
    Philox g;
};
struct ShuffleKeyF {
    static LTF_HD void at(int64_t j, const ShuffleKeyP &p) {
        uint32_t w[4];
        philox_block(p.g, (uint64_t)j, 0, w);
        p.k[j] = join64(w[0], w[1]);
        p.pay[j] = (uint64_t)j;
    }
};
/* random_shuffle, step 2: output row r is input row perm[r] */
template <class T> struct RowGatherP {
    const T *x;
    T *o;
    const uint64_t *perm;
    int64_t inner;
};
template <class T> struct RowGatherF {
    static LTF_HD void at(int64_t i, const RowGatherP<T> &p) {
        int64_t r = i / p.inner;
        p.o[i] = p.x[(int64_t)p.perm[r] * p.inner + (i - r * p.inner)];
    }
};
/* }==== */

}  // namespace ltf_cu

/* {==== Host sides (ops.cuh's helpers: included from there after them) */
extern "C" {
#include "../../device.h"
}

namespace ltf_cu {

/* The op's generator: its seed attributes, or a key drawn now from the
** context's generator (once per call). */
inline ltf_status philox_of(ltf_ctx *ctx, const ltf_op_def *def, const ltf_attrs *a, Philox &g) {
    if (a->i[1]) {
        g = philox_make((uint64_t)a->i[2], (uint64_t)a->i[3]);
        return LTF_OK;
    }
    const ltf_core_api *api = ctx->core_api;
    if (!api || !api->rand64)
        return fail(ctx, LTF_ERR_INTERNAL, "%s: the engine gave the device module no random generator", def->name);
    g = philox_make(api->rand64(ctx), 0);
    return LTF_OK;
}

inline const char *dims_str(int rank, const int64_t *dims, char *buf, size_t size) {
    size_t n = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < rank && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", (long long)dims[i]);
    if (n < size) snprintf(buf + n, size - n, "%s)", rank == 1 ? "," : "");
    return buf;
}

/* The 'shape' attribute's checks (ops/random.c). */
inline ltf_status check_shape_attr(ltf_ctx *ctx, const ltf_op_def *def, const ltf_attrs *a) {
    int n = a->nints < 0 ? 0 : a->nints;
    if (n > LTF_MAX_RANK)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' has %d dimensions, at most %d allowed", def->name, n,
                    LTF_MAX_RANK);
    for (int i = 0; i < n; i++)
        if (a->ints[i] < 0) {
            char buf[160];
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' must not have negative dimensions, got %s",
                        def->name, dims_str(n, a->ints, buf, sizeof buf));
        }
    return LTF_OK;
}

/* ops/random.c's infer_random checks ('uniform': integer dtypes allowed). */
inline ltf_status check_random_attrs(ltf_ctx *ctx, const ltf_op_def *def, const ltf_attrs *a, int uniform) {
    int64_t dt = a->i[0];
    if (dt < 0 || dt >= LTF_DTYPE_COUNT)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: invalid dtype %lld", def->name, (long long)dt);
    bool is_int = dt == DT_I32 || dt == DT_I64;
    if (!(dt == DT_F32 || dt == DT_F64 || (uniform && is_int)))
        return fail(ctx, LTF_ERR_TYPE, "%s: dtype %s is not supported, expected one of: %s", def->name, dname((int)dt),
                    uniform ? "float32, float64, int32, int64" : "float32, float64");
    if (uniform && is_int) {
        if (a->nints2 != 2)
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: an integer dtype needs minval and maxval", def->name);
        int64_t lo = a->ints2[0], hi = a->ints2[1];
        if (dt == DT_I32 && (lo < INT32_MIN || lo > INT32_MAX || hi < INT32_MIN || hi > INT32_MAX))
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: minval %lld and maxval %lld must fit in int32", def->name,
                        (long long)lo, (long long)hi);
        if (lo >= hi)
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: requires minval < maxval, got minval %lld and maxval %lld",
                        def->name, (long long)lo, (long long)hi);
    }
    return check_shape_attr(ctx, def, a);
}

/* Uniform [lo, hi) floats over 'o' (random_uniform, dropout_noise). */
template <class E> ltf_status uniform_floats(E &e, ltf_tensor *o, double lo, double hi, const Philox &g) {
    int64_t n = o->numel;
    if ((int)o->dtype == DT_F32) {
        RandP<float> p = { ptr<float>(o), n, (float)lo, (float)hi, g };
        return e.template run<UniformF32>((n + 3) / 4, p);
    }
    RandP<double> p = { ptr<double>(o), n, lo, hi, g };
    return e.template run<UniformF64>((n + 1) / 2, p);
}

/* random_normal (code 0) and truncated_normal (code 2): f[0] mean, f[1] stddev */
LTF_CU_KERNEL(k_random_normal) {
    LTF_CU_UNUSED;
    ltf_status st = check_random_attrs(ctx, def, a, 0);
    if (st != LTF_OK) return st;
    ltf_tensor *o = out[0];
    int64_t n = o->numel;
    if (n == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    Philox g = philox_make(0, 0);
    if ((st = philox_of(ctx, def, a, g)) != LTF_OK) return st;
    int trunc = def->code == 2;
    if ((int)o->dtype == DT_F32) {
        RandP<float> p = { ptr<float>(o), n, (float)a->f[0], (float)a->f[1], g };
        return trunc ? e.template run<TruncF<float> >(n, p) : e.template run<NormalF32>((n + 3) / 4, p);
    }
    RandP<double> p = { ptr<double>(o), n, a->f[0], a->f[1], g };
    return trunc ? e.template run<TruncF<double> >(n, p) : e.template run<NormalF64>((n + 1) / 2, p);
}

/* random_uniform: floats in [f[0], f[1]), integers in [ints2[0], ints2[1]) */
LTF_CU_KERNEL(k_random_uniform) {
    LTF_CU_UNUSED;
    ltf_status st = check_random_attrs(ctx, def, a, 1);
    if (st != LTF_OK) return st;
    ltf_tensor *o = out[0];
    if (o->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    Philox g = philox_make(0, 0);
    if ((st = philox_of(ctx, def, a, g)) != LTF_OK) return st;
    if ((int)o->dtype == DT_F32 || (int)o->dtype == DT_F64) return uniform_floats(e, o, a->f[0], a->f[1], g);
    uint64_t lo = (uint64_t)a->ints2[0], range = (uint64_t)a->ints2[1] - lo;
    if ((int)o->dtype == DT_I32) {
        UniformIntP<int32_t> p = { ptr<int32_t>(o), lo, range, g };
        return e.template run<UniformIntF<int32_t> >(o->numel, p);
    }
    UniformIntP<int64_t> p = { ptr<int64_t>(o), lo, range, g };
    return e.template run<UniformIntF<int64_t> >(o->numel, p);
}

/* dropout_noise(x): uniform [0, 1) of x's shape and dtype (seeds as above) */
LTF_CU_KERNEL(k_dropout_noise) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    if ((int)x->dtype != DT_F32 && (int)x->dtype != DT_F64)
        return fail(ctx, LTF_ERR_TYPE, "%s: 'x' has dtype %s, expected one of: float32, float64", def->name,
                    dname(x->dtype));
    ltf_tensor *o = out[0];
    if (o->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    Philox g = philox_make(0, 0);
    ltf_status st = philox_of(ctx, def, a, g);
    return st != LTF_OK ? st : uniform_floats(e, o, 0.0, 1.0, g);
}

/* random_gamma(alpha): shape ints ++ alpha.shape, element k a Gamma(alpha[k mod na]) draw */
LTF_CU_KERNEL(k_random_gamma) {
    LTF_CU_UNUSED;
    const ltf_tensor *al = in[0];
    if ((int)al->dtype != DT_F32 && (int)al->dtype != DT_F64)
        return fail(ctx, LTF_ERR_TYPE, "%s: 'alpha' has dtype %s, expected float32 or float64", def->name,
                    dname(al->dtype));
    ltf_status st = check_shape_attr(ctx, def, a);
    if (st != LTF_OK) return st;
    int n = a->nints < 0 ? 0 : a->nints;
    if (n + al->rank > LTF_MAX_RANK)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                    "%s: 'shape' and 'alpha' have %d dimensions together, at most %d allowed", def->name,
                    n + al->rank, LTF_MAX_RANK);
    ltf_tensor *o = out[0];
    if (o->numel == 0 || al->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    Philox g = philox_make(0, 0);
    if ((st = philox_of(ctx, def, a, g)) != LTF_OK) return st;
    if ((int)al->dtype == DT_F32) {
        GammaP<float> p = { ptr<float>(al), ptr<float>(o), al->numel, g };
        return e.template run<GammaF<float> >(o->numel, p);
    }
    GammaP<double> p = { ptr<double>(al), ptr<double>(o), al->numel, g };
    return e.template run<GammaF<double> >(o->numel, p);
}

/* categorical's two passes over scratch holding each row's cumulative weights. */
template <class E, class T, class I>
ltf_status categorical_run(E &e, const ltf_tensor *l, ltf_tensor *o, const Philox &g) {
    int64_t batch = l->dims[0], classes = l->dims[1], ns = o->dims[1];
    size_t bytes = sizeof(double) * (size_t)(batch * classes);
    double *cum = (double *)e.alloc(bytes);
    if (!cum) return e.status();
    CatCumP<T> c = { ptr<T>(l), cum, classes };
    ltf_status st = e.template run<CatCumF<T> >(batch, c);
    if (st == LTF_OK) {
        CatSampleP<I> s = { cum, ptr<I>(o), classes, ns, g };
        st = e.template run<CatSampleF<I> >(batch * ns, s);
    }
    e.release(cum, bytes);
    return st;
}

/* categorical(logits (batch, classes)): (batch, ints[0]) 1-based classes of dtype i[0] */
LTF_CU_KERNEL(k_categorical) {
    LTF_CU_UNUSED;
    const ltf_tensor *l = in[0];
    char buf[160];
    if ((int)l->dtype != DT_F32 && (int)l->dtype != DT_F64)
        return fail(ctx, LTF_ERR_TYPE, "%s: 'logits' has dtype %s, expected float32 or float64", def->name,
                    dname(l->dtype));
    if (l->rank != 2)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'logits' must be 2-D (batch_size, num_classes), got shape %s",
                    def->name, shape_str(l, buf, sizeof buf));
    if (a->i[0] != DT_I32 && a->i[0] != DT_I64)
        return fail(ctx, LTF_ERR_TYPE, "%s: 'dtype' must be int32 or int64", def->name);
    if (a->nints != 1 || a->ints[0] < 0)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'num_samples' must be a non-negative integer", def->name);
    if (l->dims[1] == 0 && l->dims[0] != 0 && a->ints[0] > 0)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'logits' has no classes (shape %s)", def->name,
                    shape_str(l, buf, sizeof buf));
    ltf_tensor *o = out[0];
    if (o->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    Philox g = philox_make(0, 0);
    ltf_status st = philox_of(ctx, def, a, g);
    if (st != LTF_OK) return st;
    bool i64 = (int)o->dtype == DT_I64;
    if ((int)l->dtype == DT_F32) return i64 ? categorical_run<E, float, int64_t>(e, l, o, g) : categorical_run<E, float, int32_t>(e, l, o, g);
    return i64 ? categorical_run<E, double, int64_t>(e, l, o, g) : categorical_run<E, double, int32_t>(e, l, o, g);
}

/* random_shuffle(value): the rows (first dimension) in a random order */
LTF_CU_KERNEL(k_random_shuffle) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    size_t es = dsize(x->dtype);
    if (es == 0) return bad_dtype(ctx, def, x->dtype);
    if (x->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (x->rank < 1 || x->dims[0] <= 1) return e.copy(LTF_DATA(o), LTF_DATA(x), (size_t)x->numel * es);
    Philox g = philox_make(0, 0);
    ltf_status st = philox_of(ctx, def, a, g);
    if (st != LTF_OK) return st;
    int64_t n = x->dims[0], inner = x->numel / n;
    SortBufs<uint64_t, uint64_t> b;
    if (!sort_bufs_alloc(e, b, n)) return e.status();
    ShuffleKeyP kp = { b.k[0], b.p[0], g };
    st = e.template run<ShuffleKeyF>(n, kp);
    int which = 0;
    if (st == LTF_OK) st = merge_rows(e, b, 1, n, &which);
    if (st == LTF_OK) {
#define M(T) { RowGatherP<T> p = { ptr<T>(x), ptr<T>(o), b.p[which], inner }; \
               st = e.template run<RowGatherF<T> >(x->numel, p); }
        LTF_CU_BY_SIZE(es, M)
#undef M
    }
    e.release(b.block, b.bytes);
    return st;
}

}  // namespace ltf_cu
/* }==== */

#endif
