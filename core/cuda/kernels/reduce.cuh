/*
** cuda/kernels/reduce.cuh: reductions (sum, mean, max, min, prod, all, any)
** over any set of axes, argmax/argmin along one axis. Semantics follow
** cpu/reduce.c: float32 accumulates in float32, float64 in float64,
** integer sums and products in 64 bits wrapping to the dtype, integer means
** truncate; max/min propagate NaN; empty reductions give the identity.
**
** A reduction runs in one or two passes over per-index bodies. Pass 1 has
** 'parts' indices per output: part c of output o combines the elements
** c, c + parts, c + 2 parts, ... of o's reduced set (so neighbouring
** indices read neighbouring elements when the reduced run is innermost,
** and neighbouring outputs do when the kept run is). With parts == 1 it
** writes the results; otherwise pass 2 combines the parts of each output.
** The partition depends only on the shape: results are reproducible.
*/
#ifndef LTF_CU_REDUCE_CUH
#define LTF_CU_REDUCE_CUH

#include "common.cuh"

namespace ltf_cu {

/* ORDER OP within the reduce family (reduce_sum .. reduce_any) */
enum { RED_SUM, RED_MEAN, RED_MAX, RED_MIN, RED_PROD, RED_ALL, RED_ANY };

/* The accumulator of reduction OP over elements of type T. */
template <class T, int OP> struct Red;

#define LTF_CU_RED_FLOAT(T)                                                                        \
    template <> struct Red<T, RED_SUM> {                                                           \
        typedef T A;                                                                               \
        static LTF_HD A init() { return 0; }                                                       \
        static LTF_HD A step(A u, T v) { return u + v; }                                           \
        static LTF_HD A comb(A u, A v) { return u + v; }                                           \
        static LTF_HD T fin(A u, int64_t) { return u; }                                            \
    };                                                                                             \
    template <> struct Red<T, RED_MEAN> : Red<T, RED_SUM> {                                        \
        static LTF_HD T fin(T u, int64_t n) { return n > 0 ? u / (T)n : (T)NAN; }                 \
    };                                                                                             \
    template <> struct Red<T, RED_PROD> {                                                          \
        typedef T A;                                                                               \
        static LTF_HD A init() { return 1; }                                                       \
        static LTF_HD A step(A u, T v) { return u * v; }                                           \
        static LTF_HD A comb(A u, A v) { return u * v; }                                           \
        static LTF_HD T fin(A u, int64_t) { return u; }                                            \
    };                                                                                             \
    template <> struct Red<T, RED_MAX> {                                                           \
        typedef T A;                                                                               \
        static LTF_HD A init() { return -(T)INFINITY; }                                            \
        static LTF_HD A step(A u, T v) { return ((v > u) | (v != v)) ? v : u; }                    \
        static LTF_HD A comb(A u, A v) { return step(u, v); }                                      \
        static LTF_HD T fin(A u, int64_t) { return u; }                                            \
    };                                                                                             \
    template <> struct Red<T, RED_MIN> {                                                           \
        typedef T A;                                                                               \
        static LTF_HD A init() { return (T)INFINITY; }                                             \
        static LTF_HD A step(A u, T v) { return ((v < u) | (v != v)) ? v : u; }                    \
        static LTF_HD A comb(A u, A v) { return step(u, v); }                                      \
        static LTF_HD T fin(A u, int64_t) { return u; }                                            \
    };
LTF_CU_RED_FLOAT(float)
LTF_CU_RED_FLOAT(double)
#undef LTF_CU_RED_FLOAT

#define LTF_CU_RED_INT(T, TMIN, TMAX)                                                              \
    template <> struct Red<T, RED_SUM> {                                                           \
        typedef uint64_t A;                                                                        \
        static LTF_HD A init() { return 0; }                                                       \
        static LTF_HD A step(A u, T v) { return u + (A)(int64_t)v; }                               \
        static LTF_HD A comb(A u, A v) { return u + v; }                                           \
        static LTF_HD T fin(A u, int64_t) { return (T)u; }                                         \
    };                                                                                             \
    template <> struct Red<T, RED_MEAN> : Red<T, RED_SUM> {                                        \
        static LTF_HD T fin(uint64_t u, int64_t n) { return n > 0 ? (T)((int64_t)u / n) : (T)0; }  \
    };                                                                                             \
    template <> struct Red<T, RED_PROD> {                                                          \
        typedef uint64_t A;                                                                        \
        static LTF_HD A init() { return 1; }                                                       \
        static LTF_HD A step(A u, T v) { return u * (A)(int64_t)v; }                               \
        static LTF_HD A comb(A u, A v) { return u * v; }                                           \
        static LTF_HD T fin(A u, int64_t) { return (T)u; }                                         \
    };                                                                                             \
    template <> struct Red<T, RED_MAX> {                                                           \
        typedef T A;                                                                               \
        static LTF_HD A init() { return TMIN; }                                                    \
        static LTF_HD A step(A u, T v) { return v > u ? v : u; }                                   \
        static LTF_HD A comb(A u, A v) { return step(u, v); }                                      \
        static LTF_HD T fin(A u, int64_t) { return u; }                                            \
    };                                                                                             \
    template <> struct Red<T, RED_MIN> {                                                           \
        typedef T A;                                                                               \
        static LTF_HD A init() { return TMAX; }                                                    \
        static LTF_HD A step(A u, T v) { return v < u ? v : u; }                                   \
        static LTF_HD A comb(A u, A v) { return step(u, v); }                                      \
        static LTF_HD T fin(A u, int64_t) { return u; }                                            \
    };
LTF_CU_RED_INT(int32_t, INT32_MIN, INT32_MAX)
LTF_CU_RED_INT(int64_t, INT64_MIN, INT64_MAX)
LTF_CU_RED_INT(uint8_t, 0, UINT8_MAX)
#undef LTF_CU_RED_INT

/* float16/bfloat16: accumulate in float (as the CPU, which reduces float32
** copies), rounded once at the end */
template <class H, int OP> struct RedHalf {
    typedef Red<float, OP> R;
    typedef typename R::A A;
    static LTF_HD A init() { return R::init(); }
    static LTF_HD A step(A u, H v) { return R::step(u, ldv(v)); }
    static LTF_HD A comb(A u, A v) { return R::comb(u, v); }
    static LTF_HD H fin(A u, int64_t n) { return stv<H>(R::fin(u, n)); }
};
template <int OP> struct Red<f16_t, OP> : RedHalf<f16_t, OP> {};
template <int OP> struct Red<bf16_t, OP> : RedHalf<bf16_t, OP> {};

/* bool: any nonzero byte is true (all/any only) */
template <> struct Red<uint8_t, RED_ALL> {
    typedef uint8_t A;
    static LTF_HD A init() { return 1; }
    static LTF_HD A step(A u, uint8_t v) { return (uint8_t)(u & (v != 0)); }
    static LTF_HD A comb(A u, A v) { return (uint8_t)(u & v); }
    static LTF_HD uint8_t fin(A u, int64_t) { return u; }
};
template <> struct Red<uint8_t, RED_ANY> {
    typedef uint8_t A;
    static LTF_HD A init() { return 0; }
    static LTF_HD A step(A u, uint8_t v) { return (uint8_t)(u | (v != 0)); }
    static LTF_HD A comb(A u, A v) { return (uint8_t)(u | v); }
    static LTF_HD uint8_t fin(A u, int64_t) { return u; }
};

/* 'kept' maps an output index to its first input element, 'red' an index
** of the reduced set to its offset from there; 'count' elements per output. */
template <class T, int OP> struct ReduceP {
    const T *x;
    T *o;                                  /* final results (parts == 1) */
    typename Red<T, OP>::A *part;          /* nout * parts partials (parts > 1) */
    Strided kept, red;
    int64_t nout, count, parts;
    int part_major;                        /* index = c * nout + o, else o * parts + c */
};

template <class T, int OP> struct ReduceF {
    static LTF_HD void at(int64_t i, const ReduceP<T, OP> &p) {
        typedef Red<T, OP> R;
        int64_t o, c;
        if (p.part_major) { c = i / p.nout; o = i - c * p.nout; }
        else { o = i / p.parts; c = i - o * p.parts; }
        const T *x = p.x + strided_offset(p.kept, o);
        typename R::A acc = R::init();
        for (int64_t k = c; k < p.count; k += p.parts) acc = R::step(acc, x[strided_offset(p.red, k)]);
        if (p.parts == 1) p.o[o] = R::fin(acc, p.count);
        else p.part[o * p.parts + c] = acc;
    }
};

/* Pass 2: output o combines its parts in order. */
template <class T, int OP> struct ReduceFinF {
    static LTF_HD void at(int64_t o, const ReduceP<T, OP> &p) {
        typedef Red<T, OP> R;
        typename R::A acc = p.part[o * p.parts];
        for (int64_t c = 1; c < p.parts; c++) acc = R::comb(acc, p.part[o * p.parts + c]);
        p.o[o] = R::fin(acc, p.count);
    }
};

/* {==== argmax / argmin: the first extreme along the axis; a NaN is beyond
** every number (the first NaN wins). Positions are 1-based. */
template <class T> struct ArgP {
    const T *x;
    void *o;
    int64_t n, inner;
    int is_max, o64;
};
template <class T> struct ArgF {
    static LTF_HD void at(int64_t j, const ArgP<T> &p) {
        int64_t ob = j / p.inner, c = j - ob * p.inner;
        const T *x = p.x + ob * p.n * p.inner + c;
        typename Acc<T>::t best = ldv(x[0]);
        int64_t bi = 0;
        for (int64_t k = 1; k < p.n; k++) {
            typename Acc<T>::t v = ldv(x[k * p.inner]);
            bool better = p.is_max ? ((v > best) | ((v != v) & (best == best)))
                                   : ((v < best) | ((v != v) & (best == best)));
            if (better) { best = v; bi = k; }
        }
        if (p.o64) ((int64_t *)p.o)[j] = bi + 1;
        else ((int32_t *)p.o)[j] = (int32_t)(bi + 1);
    }
};
/* }==== */

/* cumsum / cumprod: one index per line (outer x inner), walking the axis
** in order (from the end when 'rev'); exclusive writes the running value
** before adding. U: the type the CPU computes in (unsigned for integers:
** they wrap). */
template <class T> struct ScanP {
    const T *x;
    T *o;
    int64_t n, inner;
    int excl, rev, prod;
};
template <class T, class U> struct ScanF {
    static LTF_HD void at(int64_t i, const ScanP<T> &p) {
        int64_t b = i / p.inner, c = i - b * p.inner;
        int64_t st = p.rev ? -p.inner : p.inner;
        const T *x = p.x + b * p.n * p.inner + c + (p.rev ? (p.n - 1) * p.inner : 0);
        T *o = p.o + b * p.n * p.inner + c + (p.rev ? (p.n - 1) * p.inner : 0);
        T acc = (T)(p.prod ? 1 : 0);
        for (int64_t k = 0; k < p.n; k++) {
            T v = x[k * st];
            if (p.excl) o[k * st] = acc;
            acc = p.prod ? (T)((U)acc * (U)v) : (T)((U)acc + (U)v);
            if (!p.excl) o[k * st] = acc;
        }
    }
};

}  // namespace ltf_cu

#endif
