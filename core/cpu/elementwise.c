/*
** cpu/elementwise.c: CPU kernels for elementwise ops. Loops are generated
** per (op, dtype) by macros; a driver handles broadcasting by collapsing the
** output shape and running the innermost dimension as one flat loop, split
** across the context's threads when large.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"
#include "vexp.h"
#include "../half.h"
#include "../shape.h"
#include "../storage.h"

/* {==== Broadcast iteration */
void ltf_cpu_bcast_plan(ltf_cpu_bcast *p, ltf_tensor *const *in, int nin, const ltf_tensor *out) {
    int64_t st[4][LTF_MAX_RANK];
    for (int k = 0; k < nin; k++) ltf_broadcast_strides(in[k]->rank, in[k]->dims, out->rank, out->dims, st[k]);
    p->nin = nin;
    p->rank = 0;
    for (int i = 0; i < out->rank; i++) {
        if (out->dims[i] == 1) continue;
        int r = p->rank;
        if (r > 0) {
            int merge = 1;
            for (int k = 0; k < nin; k++)
                if (p->strides[k][r - 1] != st[k][i] * out->dims[i]) merge = 0;
            if (merge) {
                p->dims[r - 1] *= out->dims[i];
                for (int k = 0; k < nin; k++) p->strides[k][r - 1] = st[k][i];
                continue;
            }
        }
        p->dims[r] = out->dims[i];
        for (int k = 0; k < nin; k++) p->strides[k][r] = st[k][i];
        p->rank++;
    }
    if (p->rank == 0) {
        p->rank = 1;
        p->dims[0] = 1;
        for (int k = 0; k < nin; k++) p->strides[k][0] = 0;
    }
    p->outer = 1;
    for (int i = 0; i < p->rank - 1; i++) p->outer *= p->dims[i];
}

void ltf_cpu_bcast_offsets(const ltf_cpu_bcast *p, int64_t row, int64_t *off) {
    for (int k = 0; k < p->nin; k++) off[k] = 0;
    for (int i = p->rank - 2; i >= 0; i--) {
        int64_t idx = row % p->dims[i];
        row /= p->dims[i];
        for (int k = 0; k < p->nin; k++) off[k] += idx * p->strides[k][i];
    }
}
/* }==== */

/* {==== Loop generators */
/* A binary loop: mode 0 both vectors, 1 'a' scalar, 2 'b' scalar. Returns
** nonzero when an element is invalid (integer division by zero). */
typedef int (*bin_loop)(const void *a, const void *b, void *o, int64_t n, int mode);
typedef void (*un_loop)(const void *a, void *o, int64_t n);

#define BIN_LOOP(NAME, T, TO, EXPR)                                                  \
    static int NAME(const void *pa, const void *pb, void *po, int64_t n, int mode) { \
        const T *restrict A = pa;                                                    \
        const T *restrict B = pb;                                                    \
        TO *restrict O = po;                                                         \
        if (mode == 0) {                                                             \
            for (int64_t i = 0; i < n; i++) { T x = A[i], y = B[i]; O[i] = (TO)(EXPR); } \
        } else if (mode == 1) {                                                      \
            T x = A[0];                                                              \
            for (int64_t i = 0; i < n; i++) { T y = B[i]; O[i] = (TO)(EXPR); }       \
        } else {                                                                     \
            T y = B[0];                                                              \
            for (int64_t i = 0; i < n; i++) { T x = A[i]; O[i] = (TO)(EXPR); }       \
        }                                                                            \
        return 0;                                                                    \
    }

/* Integer division family: checks for zero divisors first. */
#define BIN_LOOP_CHECKED(NAME, T, EXPR)                                              \
    static int NAME(const void *pa, const void *pb, void *po, int64_t n, int mode) { \
        const T *B = pb;                                                             \
        int64_t nb = mode == 2 ? 1 : n;                                              \
        for (int64_t i = 0; i < nb; i++) if (B[i] == 0) return 1;                    \
        const T *A = pa;                                                             \
        T *O = po;                                                                   \
        for (int64_t i = 0; i < n; i++) {                                            \
            T x = A[mode == 1 ? 0 : i], y = B[mode == 2 ? 0 : i];                    \
            O[i] = (EXPR);                                                           \
        }                                                                            \
        return 0;                                                                    \
    }

#define UN_LOOP(NAME, T, TO, EXPR)                                       \
    static inline void NAME(const void *pa, void *po, int64_t n) {       \
        const T *restrict A = pa;                                        \
        TO *restrict O = po;                                             \
        for (int64_t i = 0; i < n; i++) { T x = A[i]; O[i] = (TO)(EXPR); } \
    }
/* }==== */

/* {==== Scalar helpers (no undefined behaviour on any input) */
#define WRAP_ADD(UT, T, x, y) ((T)((UT)(x) + (UT)(y)))
#define WRAP_SUB(UT, T, x, y) ((T)((UT)(x) - (UT)(y)))
#define WRAP_MUL(UT, T, x, y) ((T)((UT)(x) * (UT)(y)))

#define INT_FLOORDIV(T, TMIN)                                              \
    static inline T floordiv_##T(T x, T y) {                              \
        if (y == -1) return x == TMIN ? TMIN : (T)-x;                     \
        T q = x / y;                                                       \
        return (q * y != x && ((x < 0) != (y < 0))) ? (T)(q - 1) : q;     \
    }                                                                      \
    static inline T floormod_##T(T x, T y) {                              \
        if (y == -1) return 0;                                             \
        T r = x % y;                                                       \
        return (r != 0 && ((r < 0) != (y < 0))) ? (T)(r + y) : r;          \
    }
INT_FLOORDIV(int32_t, INT32_MIN)
INT_FLOORDIV(int64_t, INT64_MIN)
static inline uint8_t floordiv_uint8_t(uint8_t x, uint8_t y) { return (uint8_t)(x / y); }
static inline uint8_t floormod_uint8_t(uint8_t x, uint8_t y) { return (uint8_t)(x % y); }

#define INT_POW(T, UT)                                                   \
    static inline T ipow_##T(T x, T y) {                                 \
        UT r = 1, b = (UT)x;                                             \
        while (y > 0) { if (y & 1) r *= b; b *= b; y = (T)(y >> 1); }    \
        return (T)r;                                                     \
    }
INT_POW(int32_t, uint32_t)
INT_POW(int64_t, uint64_t)
INT_POW(uint8_t, uint32_t)

/* The shift count is clamped to 0..BITS-1, as TensorFlow's kernels do (its
** docs leave other counts implementation defined): left_shift(1, 40) on
** int32 is INT32_MIN, a negative count shifts by 0. */
#define SHIFTS(T, UT, BITS)                                                        \
    static inline T shl_##T(T x, T y) {                                            \
        if (y < 0) y = 0; else if (y > BITS - 1) y = BITS - 1;                     \
        return (T)((UT)x << y);                                                    \
    }                                                                              \
    static inline T shr_##T(T x, T y) {                                            \
        if (y < 0) y = 0; else if (y > BITS - 1) y = BITS - 1;                     \
        return x < 0 ? (T)~(~(UT)x >> y) : (T)((UT)x >> y);                        \
    }
SHIFTS(int32_t, uint32_t, 32)
SHIFTS(int64_t, uint64_t, 64)
SHIFTS(uint8_t, uint8_t, 8)

static inline float floordiv_float(float x, float y) { return floorf(x / y); }
static inline double floordiv_double(double x, double y) { return floor(x / y); }
static inline float floormod_float(float x, float y) {
    float r = fmodf(x, y);
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}
static inline double floormod_double(double x, double y) {
    double r = fmod(x, y);
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}
/* NaN-propagating max/min, as TensorFlow's */
#define FMAXP(x, y) ((x) != (x) ? (x) : ((y) != (y) ? (y) : ((x) > (y) ? (x) : (y))))
#define FMINP(x, y) ((x) != (x) ? (x) : ((y) != (y) ? (y) : ((x) < (y) ? (x) : (y))))
#define MAXI(x, y) ((x) > (y) ? (x) : (y))
#define MINI(x, y) ((x) < (y) ? (x) : (y))

static inline float sigmoidf_(float x) { return x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x)); }
static inline double sigmoid_(double x) { return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)); }
static inline float softplusf_(float x) { return x > 0 ? x + log1pf(expf(-x)) : log1pf(expf(x)); }
static inline double softplus_(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
/* round half to even, as tf.round */
static inline float roundf_(float x) { return nearbyintf(x); }
static inline double round_(double x) { return nearbyint(x); }
/* }==== */


/* {==== Special functions in double (float32 rounds the double result) */
/* lgamma without the global 'signgam' (the loops run on several threads) */
static inline double lgamma_(double x) { int sg; return lgamma_r(x, &sg); }

/* digamma: reflection for x <= 0 (NaN at the poles, as Eigen/TensorFlow),
** the recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the
** asymptotic series ln x - 1/(2x) - sum B_2k / (2k x^2k), whose first
** omitted term is below 1e-16 there. */
static double digamma_(double x) {
    if (x != x || x == INFINITY) return x;
    if (x == -INFINITY) return NAN;
    double r = 0;
    if (x <= 0) {
        double q = x - nearbyint(x);   /* exact, in [-0.5, 0.5]: cot(pi x) = cot(pi q), accurate near poles */
        if (q == 0) return NAN;
        r = -3.14159265358979323846 / tan(3.14159265358979323846 * q);   /* -pi cot(pi x) */
        x = 1 - x;
    }
    while (x < 10) { r -= 1 / x; x += 1; }
    double f = 1 / (x * x);
    double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132 +
               f * (691.0 / 32760 + f * (-1.0 / 12)))))));
    return r + log(x) - 0.5 / x + t;
}

/* Hurwitz zeta(x, q) = sum_{k >= 0} (k + q)^-x by Euler-Maclaurin summation
** (Cephes' zeta.c, as Eigen's zeta_impl): NaN for x < 1, inf for x == 1;
** at the poles q = 0, -1, -2, ... inf when x is an even integer, else NaN;
** for other q <= 0 only integer x is defined. */
/* zeta(x, q) for q < -ZETA_MAX_TERMS is NaN: its series would need more
** than that many terms (docs/math.md). */
#define ZETA_MAX_TERMS 1048576.0

static double zeta_(double x, double q) {
    static const double A[12] = {   /* (2k)! / B_2k, k = 1..12 */
        12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
        -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
        1.8152105401943546773e17, -7.1661652561756670113e18 };
    const double eps = 1.11022302462515654042e-16;
    if (x != x || q != q) return NAN;
    if (x == 1.0) return INFINITY;
    if (x < 1.0) return NAN;
    if (q <= 0.0) {
        if (q == floor(q)) return x == floor(x) && fmod(x, 2.0) == 0.0 ? INFINITY : NAN;
        if (x != floor(x)) return NAN;   /* q^-x is not real */
    }
    if (q > 1e8) return (1 / (x - 1) + 1 / (2 * q)) * pow(q, 1 - x);
    /* the sum below steps q up by 1 until it passes 9: a q far below 0
    ** would take that many terms (forever at -1e300; libFuzzer found a hang) */
    if (q < -ZETA_MAX_TERMS) return NAN;
    double s = pow(q, -x), a = q, b = 0.0;
    int i = 0;
    while (i < 9 || a <= 9.0) {
        i++;
        a += 1.0;
        b = pow(a, -x);
        s += b;
        if (fabs(b / s) < eps) return s;
    }
    double w = a, k = 0.0, t;
    s += b * w / (x - 1.0);
    s -= 0.5 * b;
    a = 1.0;
    for (i = 0; i < 12; i++) {
        a *= x + k;
        b /= w;
        t = a * b / A[i];
        s += t;
        if (fabs(t / s) < eps) break;
        k += 1.0;
        a *= x + k;
        b /= w;
        k += 1.0;
    }
    return s;
}

/* polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x); n = 0 is digamma; n must
** be a non-negative integer (else NaN). */
static double polygamma_(double n, double x) {
    if (n != n || x != x || n < 0 || n != floor(n)) return NAN;
    if (n == 0) return digamma_(x);
    double fact = tgamma(n + 1);
    double z = zeta_(n + 1, x);
    return (fmod(n, 2.0) == 0 ? -fact : fact) * z;
}
static inline float lgamma_f(float x) { return (float)lgamma_(x); }
static inline float digamma_f(float x) { return (float)digamma_(x); }
static inline float zetaf_(float x, float q) { return (float)zeta_(x, q); }
static inline float polygammaf_(float n, float x) { return (float)polygamma_(n, x); }
static inline double zeta2_(double x, double q) { return zeta_(x, q); }
static inline double polygamma2_(double n, double x) { return polygamma_(n, x); }

/* truncating division and remainder (C's / and %): zero divisors are
** caught by BIN_LOOP_CHECKED; the most negative value over -1 wraps */
#define INT_TRUNCDIV(T, UT)                                                 \
    static inline T truncdiv_##T(T x, T y) { return y == -1 ? (T)(0 - (UT)x) : (T)(x / y); } \
    static inline T truncmod_##T(T x, T y) { return y == -1 ? 0 : (T)(x % y); }
INT_TRUNCDIV(int32_t, uint32_t)
INT_TRUNCDIV(int64_t, uint64_t)
static inline uint8_t truncdiv_uint8_t(uint8_t x, uint8_t y) { return (uint8_t)(x / y); }
static inline uint8_t truncmod_uint8_t(uint8_t x, uint8_t y) { return (uint8_t)(x % y); }
/* }==== */

/* {==== Binary loops per dtype */
#define FLOAT_BINARIES(T, S, POWF, FLOORD, FLOORM, F, ZETA, POLYGAMMA)              \
    BIN_LOOP(add_##S, T, T, x + y)                                                   \
    BIN_LOOP(sub_##S, T, T, x - y)                                                   \
    BIN_LOOP(mul_##S, T, T, x * y)                                                   \
    BIN_LOOP(div_##S, T, T, x / y)                                                   \
    BIN_LOOP(floordiv_##S, T, T, FLOORD(x, y))                                       \
    BIN_LOOP(floormod_##S, T, T, FLOORM(x, y))                                       \
    BIN_LOOP(pow_##S, T, T, POWF(x, y))                                              \
    BIN_LOOP(max_##S, T, T, FMAXP(x, y))                                             \
    BIN_LOOP(min_##S, T, T, FMINP(x, y))                                             \
    BIN_LOOP(sqdiff_##S, T, T, (x - y) * (x - y))                                    \
    BIN_LOOP(eq_##S, T, uint8_t, x == y)                                             \
    BIN_LOOP(ne_##S, T, uint8_t, x != y)                                             \
    BIN_LOOP(lt_##S, T, uint8_t, x < y)                                              \
    BIN_LOOP(le_##S, T, uint8_t, x <= y)                                             \
    BIN_LOOP(gt_##S, T, uint8_t, x > y)                                              \
    BIN_LOOP(ge_##S, T, uint8_t, x >= y)                                             \
    BIN_LOOP(relugrad_##S, T, T, y > 0 ? x : 0)                                      \
    BIN_LOOP(tanhgrad_##S, T, T, x * (1 - y * y))                                    \
    BIN_LOOP(sigmoidgrad_##S, T, T, x * y * (1 - y))                                \
    BIN_LOOP(atan2_##S, T, T, F(atan2)(x, y))                                        \
    BIN_LOOP(xlogy_##S, T, T, x == 0 ? 0 : x * F(log)(y))                            \
    BIN_LOOP(xdivy_##S, T, T, x == 0 ? 0 : x / y)                                    \
    BIN_LOOP(divnonan_##S, T, T, y == 0 ? 0 : x / y)                                 \
    BIN_LOOP(truncdiv_##S, T, T, F(trunc)(x / y))                                    \
    BIN_LOOP(truncmod_##S, T, T, F(fmod)(x, y))                                      \
    BIN_LOOP(polygamma_##S, T, T, POLYGAMMA(x, y))                                   \
    BIN_LOOP(zeta_##S, T, T, ZETA(x, y))
#define FN_F32(g) g##f
#define FN_F64(g) g
FLOAT_BINARIES(float, f32, powf, floordiv_float, floormod_float, FN_F32, zetaf_, polygammaf_)
FLOAT_BINARIES(double, f64, pow, floordiv_double, floormod_double, FN_F64, zeta2_, polygamma2_)

#define INT_BINARIES(T, UT, S)                                                       \
    BIN_LOOP(add_##S, T, T, WRAP_ADD(UT, T, x, y))                                   \
    BIN_LOOP(sub_##S, T, T, WRAP_SUB(UT, T, x, y))                                   \
    BIN_LOOP(mul_##S, T, T, WRAP_MUL(UT, T, x, y))                                   \
    BIN_LOOP_CHECKED(floordiv_##S, T, floordiv_##T(x, y))                            \
    BIN_LOOP_CHECKED(floormod_##S, T, floormod_##T(x, y))                            \
    BIN_LOOP_CHECKED(truncdiv_##S, T, truncdiv_##T(x, y))                            \
    BIN_LOOP_CHECKED(truncmod_##S, T, truncmod_##T(x, y))                            \
    BIN_LOOP(max_##S, T, T, MAXI(x, y))                                              \
    BIN_LOOP(min_##S, T, T, MINI(x, y))                                              \
    BIN_LOOP(sqdiff_##S, T, T, WRAP_MUL(UT, T, WRAP_SUB(UT, T, x, y), WRAP_SUB(UT, T, x, y))) \
    BIN_LOOP(eq_##S, T, uint8_t, x == y)                                             \
    BIN_LOOP(ne_##S, T, uint8_t, x != y)                                             \
    BIN_LOOP(lt_##S, T, uint8_t, x < y)                                              \
    BIN_LOOP(le_##S, T, uint8_t, x <= y)                                             \
    BIN_LOOP(gt_##S, T, uint8_t, x > y)                                              \
    BIN_LOOP(ge_##S, T, uint8_t, x >= y)                                             \
    BIN_LOOP(band_##S, T, T, x & y)                                                  \
    BIN_LOOP(bor_##S, T, T, x | y)                                                   \
    BIN_LOOP(bxor_##S, T, T, x ^ y)                                                  \
    BIN_LOOP(shl_##S, T, T, shl_##T(x, y))                                           \
    BIN_LOOP(shr_##S, T, T, shr_##T(x, y))
INT_BINARIES(int32_t, uint32_t, i32)
INT_BINARIES(int64_t, uint64_t, i64)
INT_BINARIES(uint8_t, uint32_t, u8)

/* integer pow: negative exponents are an error, as in TensorFlow */
#define INT_POW_LOOP(S, T)                                                           \
    static int pow_##S(const void *pa, const void *pb, void *po, int64_t n, int mode) { \
        const T *A = pa, *B = pb;                                                    \
        T *O = po;                                                                   \
        for (int64_t i = 0; i < n; i++) {                                            \
            T x = A[mode == 1 ? 0 : i], y = B[mode == 2 ? 0 : i];                    \
            if (y < 0) return 2;                                                     \
            O[i] = ipow_##T(x, y);                                                   \
        }                                                                            \
        return 0;                                                                    \
    }
INT_POW_LOOP(i32, int32_t)
INT_POW_LOOP(i64, int64_t)
INT_POW_LOOP(u8, uint8_t)

BIN_LOOP(eq_b, uint8_t, uint8_t, x == y)
BIN_LOOP(ne_b, uint8_t, uint8_t, x != y)
BIN_LOOP(land_b, uint8_t, uint8_t, x && y)
BIN_LOOP(lor_b, uint8_t, uint8_t, x || y)
BIN_LOOP(lxor_b, uint8_t, uint8_t, (x != 0) != (y != 0))

#define NUMERIC_ROW(op) { op##_f32, op##_f64, op##_i32, op##_i64, op##_u8, NULL, NULL }
#define FLOAT_ROW(op)   { op##_f32, op##_f64, NULL, NULL, NULL, NULL, NULL }
#define INT_ROW(op)     { NULL, NULL, op##_i32, op##_i64, op##_u8, NULL, NULL }

static const bin_loop bin_table[LTF_BIN_COUNT][LTF_DTYPE_COUNT] = {  /* ORDER EWBINARY, DTYPE */
    NUMERIC_ROW(add), NUMERIC_ROW(sub), NUMERIC_ROW(mul), FLOAT_ROW(div),
    NUMERIC_ROW(floordiv), NUMERIC_ROW(floormod), NUMERIC_ROW(pow),
    NUMERIC_ROW(max), NUMERIC_ROW(min), NUMERIC_ROW(sqdiff),
    { eq_f32, eq_f64, eq_i32, eq_i64, eq_u8, eq_b, NULL },
    { ne_f32, ne_f64, ne_i32, ne_i64, ne_u8, ne_b, NULL },
    NUMERIC_ROW(lt), NUMERIC_ROW(le), NUMERIC_ROW(gt), NUMERIC_ROW(ge),
    { NULL, NULL, NULL, NULL, NULL, land_b, NULL },
    { NULL, NULL, NULL, NULL, NULL, lor_b, NULL },
    { NULL, NULL, NULL, NULL, NULL, lxor_b, NULL },
    INT_ROW(band), INT_ROW(bor), INT_ROW(bxor), INT_ROW(shl), INT_ROW(shr),
    FLOAT_ROW(relugrad), FLOAT_ROW(tanhgrad), FLOAT_ROW(sigmoidgrad),
    FLOAT_ROW(atan2), FLOAT_ROW(xlogy), FLOAT_ROW(xdivy), FLOAT_ROW(divnonan),
    NUMERIC_ROW(truncdiv), NUMERIC_ROW(truncmod), FLOAT_ROW(polygamma), FLOAT_ROW(zeta),
};
/* }==== */


/* {==== Vectorizable float32 tanh/sigmoid over ltf_cpu_vexpf (vexp.h;
** Cephes-style polynomials, about 1 ulp): no calls or branches in the loop
** body, so the compiler vectorizes them, unlike libm's tanhf. */
static inline float vtanhf(float x) {
    float ax = fabsf(x);
    /* the clamp keeps NaN (the comparison is false), so NaN flows through exp */
    float e = ltf_cpu_vexpf(2.0f * (ax > 20.0f ? 20.0f : ax));
    float big = 1.0f - 2.0f / (e + 1.0f);
    float z = x * x;
    /* x (1 + z p(z)), not x + x z p(z): -0.0 stays -0.0 (same accuracy) */
    float small = (((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z +
                     1.33314422036e-1f) * z - 3.33332819422e-1f) * z + 1.0f) * x;
    float r = x < 0 ? -big : big;
    return ax < 0.625f ? small : r;
}

static inline float vsigmoidf(float x) {
    float e = ltf_cpu_vexpf(-fabsf(x));             /* in (0, 1]: no overflow */
    float pos = 1.0f / (1.0f + e);
    float r = x >= 0 ? pos : e * pos;
    return x != x ? x : r;
}
/* }==== */

/* {==== Unary loops per dtype */
#define FLOAT_UNARIES(T, S, F, SIGMOID, SOFTPLUS, ROUND)                 \
    UN_LOOP(neg_##S, T, T, -x)                                           \
    UN_LOOP(abs_##S, T, T, F(fabs)(x))                                   \
    UN_LOOP(sign_##S, T, T, x > 0 ? 1 : (x < 0 ? -1 : (x == 0 ? 0 : x))) \
    UN_LOOP(exp_##S, T, T, F(exp)(x))                                    \
    UN_LOOP(log_##S, T, T, F(log)(x))                                    \
    UN_LOOP(log1p_##S, T, T, F(log1p)(x))                                \
    UN_LOOP(expm1_##S, T, T, F(expm1)(x))                                \
    UN_LOOP(sqrt_##S, T, T, F(sqrt)(x))                                  \
    UN_LOOP(rsqrt_##S, T, T, 1 / F(sqrt)(x))                             \
    UN_LOOP(square_##S, T, T, x * x)                                     \
    UN_LOOP(recip_##S, T, T, 1 / x)                                      \
    UN_LOOP(tanh_##S, T, T, F(tanh)(x))                                  \
    UN_LOOP(sigmoid_##S, T, T, SIGMOID(x))                               \
    UN_LOOP(relu_##S, T, T, x > 0 ? x : (x != x ? x : 0))                \
    UN_LOOP(softplus_##S, T, T, SOFTPLUS(x))                             \
    UN_LOOP(sin_##S, T, T, F(sin)(x))                                    \
    UN_LOOP(cos_##S, T, T, F(cos)(x))                                    \
    UN_LOOP(floor_##S, T, T, F(floor)(x))                                \
    UN_LOOP(ceil_##S, T, T, F(ceil)(x))                                  \
    UN_LOOP(round_##S, T, T, ROUND(x))                                   \
    UN_LOOP(isnan_##S, T, uint8_t, x != x)                               \
    UN_LOOP(isfinite_##S, T, uint8_t, F(isfinite_)(x))                   \
    UN_LOOP(acos_##S, T, T, F(acos)(x))                                  \
    UN_LOOP(acosh_##S, T, T, F(acosh)(x))                                \
    UN_LOOP(asin_##S, T, T, F(asin)(x))                                  \
    UN_LOOP(asinh_##S, T, T, F(asinh)(x))                                \
    UN_LOOP(atan_##S, T, T, F(atan)(x))                                  \
    UN_LOOP(atanh_##S, T, T, F(atanh)(x))                                \
    UN_LOOP(cosh_##S, T, T, F(cosh)(x))                                  \
    UN_LOOP(sinh_##S, T, T, F(sinh)(x))                                  \
    UN_LOOP(tan_##S, T, T, F(tan)(x))                                    \
    UN_LOOP(erf_##S, T, T, F(erf)(x))                                    \
    UN_LOOP(erfc_##S, T, T, F(erfc)(x))                                  \
    UN_LOOP(lgamma_##S, T, T, F(lgamma_)(x))                             \
    UN_LOOP(digamma_##S, T, T, F(digamma_)(x))                           \
    UN_LOOP(isinf_##S, T, uint8_t, F(isinf_)(x))
static inline int isinf_f(float x) { return isinf(x) != 0; }   /* glibc: -1 for -inf */
static inline int isinf_(double x) { return isinf(x) != 0; }
static inline int isfinite_f(float x) { return isfinite(x); }
static inline int isfinite_(double x) { return isfinite(x); }
FLOAT_UNARIES(float, f32, FN_F32, sigmoidf_, softplusf_, roundf_)
/* compute-bound loops: also built for AVX2+FMA, chosen at load time */
#define WIDE_CLONES LTF_WIDE_CLONES   /* cpu.h */
#define UN_LOOP_WIDE(NAME, EXPR)                                          \
    WIDE_CLONES static void NAME(const void *pa, void *po, int64_t n) {  \
        const float *restrict A = pa;                                     \
        float *restrict O = po;                                           \
        for (int64_t i = 0; i < n; i++) { float x = A[i]; O[i] = (EXPR); } \
    }
UN_LOOP_WIDE(vexp_f32, ltf_cpu_vexpf(x))
UN_LOOP_WIDE(vtanh_f32, vtanhf(x))
UN_LOOP_WIDE(vsigmoid_f32, vsigmoidf(x))
FLOAT_UNARIES(double, f64, FN_F64, sigmoid_, softplus_, round_)

#define INT_UNARIES(T, UT, S)                                            \
    UN_LOOP(neg_##S, T, T, (T)(0 - (UT)x))                               \
    UN_LOOP(abs_##S, T, T, x < 0 ? (T)(0 - (UT)x) : x)                   \
    UN_LOOP(sign_##S, T, T, (x > 0) - (x < 0))                           \
    UN_LOOP(square_##S, T, T, WRAP_MUL(UT, T, x, x))                     \
    UN_LOOP(relu_##S, T, T, x > 0 ? x : 0)                               \
    UN_LOOP(invert_##S, T, T, ~x)
INT_UNARIES(int32_t, uint32_t, i32)
INT_UNARIES(int64_t, uint64_t, i64)
UN_LOOP(square_u8, uint8_t, uint8_t, (uint8_t)(x * x))
UN_LOOP(relu_u8, uint8_t, uint8_t, x)
UN_LOOP(invert_u8, uint8_t, uint8_t, (uint8_t)~x)
UN_LOOP(sign_u8, uint8_t, uint8_t, x > 0)
UN_LOOP(abs_u8, uint8_t, uint8_t, x)
UN_LOOP(lnot_b, uint8_t, uint8_t, !x)

#define FUN_ROW(op) { op##_f32, op##_f64, NULL, NULL, NULL, NULL, NULL }
#define SIGNED_ROW(op) { op##_f32, op##_f64, op##_i32, op##_i64, NULL, NULL, NULL }
#define ALLNUM_ROW(op) { op##_f32, op##_f64, op##_i32, op##_i64, op##_u8, NULL, NULL }

static const un_loop un_table[LTF_UN_COUNT][LTF_DTYPE_COUNT] = {  /* ORDER EWUNARY, DTYPE */
    SIGNED_ROW(neg), ALLNUM_ROW(abs), ALLNUM_ROW(sign), { vexp_f32, exp_f64 }, FUN_ROW(log),
    FUN_ROW(log1p), FUN_ROW(expm1), FUN_ROW(sqrt), FUN_ROW(rsqrt), ALLNUM_ROW(square),
    FUN_ROW(recip), { vtanh_f32, tanh_f64 }, { vsigmoid_f32, sigmoid_f64 }, ALLNUM_ROW(relu), FUN_ROW(softplus),
    FUN_ROW(sin), FUN_ROW(cos), FUN_ROW(floor), FUN_ROW(ceil), FUN_ROW(round),
    { NULL, NULL, NULL, NULL, NULL, lnot_b, NULL },
    { NULL, NULL, invert_i32, invert_i64, invert_u8, NULL, NULL },
    FUN_ROW(isnan), FUN_ROW(isfinite),
    FUN_ROW(acos), FUN_ROW(acosh), FUN_ROW(asin), FUN_ROW(asinh), FUN_ROW(atan), FUN_ROW(atanh),
    FUN_ROW(cosh), FUN_ROW(sinh), FUN_ROW(tan), FUN_ROW(erf), FUN_ROW(erfc), FUN_ROW(lgamma),
    FUN_ROW(digamma), FUN_ROW(isinf),
};
/* }==== */

/* {==== Unary driver */
typedef struct un_job {
    un_loop fn;
    const char *a;
    char *o;
    size_t sa, so;
} un_job;

static void un_range(void *arg, int64_t b, int64_t e) {
    un_job *j = arg;
    j->fn(j->a + (size_t)b * j->sa, j->o + (size_t)b * j->so, e - b);
}

ltf_status ltf_cpu_elementwise_unary(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                     int nin, const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    un_loop fn = un_table[def->code][in[0]->dtype];
    if (!fn)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: unsupported dtype %s", def->name, ltf_dtype_name(in[0]->dtype));
    un_job j = { fn, LTF_DATA(in[0]), LTF_DATA(out[0]), ltf_dtype_size(in[0]->dtype),
                 ltf_dtype_size(out[0]->dtype) };
    ltf_pool_for(&ctx->pool, out[0]->numel, LTF_CPU_GRAIN, un_range, &j);
    return LTF_OK;
}
/* }==== */

/* {==== Binary driver */
typedef struct bin_job {
    bin_loop fn;
    const char *a, *b;
    char *o;
    size_t sa, so;            /* element sizes of inputs and output */
    int mode;                 /* flat case */
    const ltf_cpu_bcast *plan;
    int failed;
} bin_job;

static void bin_flat_range(void *arg, int64_t b, int64_t e) {
    bin_job *j = arg;
    const char *pa = j->mode == 1 ? j->a : j->a + (size_t)b * j->sa;
    const char *pb = j->mode == 2 ? j->b : j->b + (size_t)b * j->sa;
    int r = j->fn(pa, pb, j->o + (size_t)b * j->so, e - b, j->mode);
    if (r) j->failed = r;
}

static void bin_rows_range(void *arg, int64_t b, int64_t e) {
    bin_job *j = arg;
    const ltf_cpu_bcast *p = j->plan;
    int last = p->rank - 1;
    int64_t inner = p->dims[last];
    int64_t sa = p->strides[0][last], sb = p->strides[1][last];
    int mode = sa == 0 ? 1 : (sb == 0 ? 2 : 0);
    int64_t off[4];
    for (int64_t row = b; row < e; row++) {
        ltf_cpu_bcast_offsets(p, row, off);
        int r;
        if (sa == 0 && sb == 0) {   /* cannot happen after planning; kept for safety */
            r = 0;
            for (int64_t i = 0; i < inner; i++)
                r |= j->fn(j->a + (size_t)off[0] * j->sa, j->b + (size_t)off[1] * j->sa,
                           j->o + (size_t)(row * inner + i) * j->so, 1, 0);
        } else {
            r = j->fn(j->a + (size_t)off[0] * j->sa, j->b + (size_t)off[1] * j->sa,
                      j->o + (size_t)(row * inner) * j->so, inner, mode);
        }
        if (r) j->failed = r;
    }
}

static ltf_status string_binary(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, ltf_tensor *out) {
    if (out->numel == 0) return LTF_OK;
    ltf_cpu_bcast p;
    ltf_cpu_bcast_plan(&p, in, 2, out);
    ltf_string **A = LTF_DATA(in[0]), **B = LTF_DATA(in[1]), **S = LTF_DATA(out);
    uint8_t *O = LTF_DATA(out);
    int last = p.rank - 1;
    int64_t inner = p.dims[last], off[4];
    for (int64_t row = 0; row < p.outer; row++) {
        ltf_cpu_bcast_offsets(&p, row, off);
        for (int64_t i = 0; i < inner; i++) {
            const ltf_string *x = A[off[0] + i * p.strides[0][last]];
            const ltf_string *y = B[off[1] + i * p.strides[1][last]];
            size_t lx = x ? x->len : 0, ly = y ? y->len : 0;
            int64_t k = row * inner + i;
            if (def->code == LTF_BIN_ADD) {
                if (lx + ly == 0) continue;
                ltf_string *s = malloc(offsetof(ltf_string, bytes) + lx + ly + 1);
                if (!s) return ltf_fail_oom(ctx, "string", lx + ly);
                s->len = lx + ly;
                s->refs = 1;
                if (lx) memcpy(s->bytes, x->bytes, lx);
                if (ly) memcpy(s->bytes + lx, y->bytes, ly);
                s->bytes[lx + ly] = '\0';
                S[k] = s;
            } else {
                int eq = lx == ly && (lx == 0 || memcmp(x->bytes, y->bytes, lx) == 0);
                O[k] = (uint8_t)(def->code == LTF_BIN_EQUAL ? eq : !eq);
            }
        }
    }
    return LTF_OK;
}

ltf_status ltf_cpu_elementwise_binary(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                      int nin, const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    ltf_dtype dt = in[0]->dtype;
    if (dt == LTF_DTYPE_STRING) return string_binary(ctx, def, in, out[0]);
    bin_loop fn = bin_table[def->code][dt];
    if (!fn)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: unsupported dtype %s", def->name, ltf_dtype_name(dt));
    ltf_tensor *o = out[0];
    bin_job j = { fn, LTF_DATA(in[0]), LTF_DATA(in[1]), LTF_DATA(o), ltf_dtype_size(dt),
                  ltf_dtype_size(o->dtype), 0, NULL, 0 };
    int64_t n = o->numel, na = in[0]->numel, nb = in[1]->numel;
    if (n == 0) return LTF_OK;
    if (na == n && nb == n) {
        j.mode = 0;
        ltf_pool_for(&ctx->pool, n, LTF_CPU_GRAIN, bin_flat_range, &j);
    } else if (na == 1 && nb == n) {
        j.mode = 1;
        ltf_pool_for(&ctx->pool, n, LTF_CPU_GRAIN, bin_flat_range, &j);
    } else if (nb == 1 && na == n) {
        j.mode = 2;
        ltf_pool_for(&ctx->pool, n, LTF_CPU_GRAIN, bin_flat_range, &j);
    } else {
        ltf_cpu_bcast plan;
        ltf_cpu_bcast_plan(&plan, in, 2, o);
        j.plan = &plan;
        int64_t inner = plan.dims[plan.rank - 1];
        int64_t grain = LTF_CPU_GRAIN / (inner > 0 ? inner : 1);
        ltf_pool_for(&ctx->pool, plan.outer, grain > 0 ? grain : 1, bin_rows_range, &j);
    }
    if (j.failed == 1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: integer division by zero", def->name);
    if (j.failed == 2)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: integers to negative integer powers are not allowed", def->name);
    return LTF_OK;
}
/* }==== */

/* {==== Cast */
#define CAST_FROM_FLOAT(T, TMIN, TMAX)                                  \
    static inline T sat_##T(double x) {                                 \
        if (x != x) return 0;                                           \
        if (x <= (double)TMIN) return TMIN;                             \
        if (x >= (double)TMAX) return TMAX;                             \
        return (T)x;                                                    \
    }
CAST_FROM_FLOAT(int32_t, INT32_MIN, INT32_MAX)
CAST_FROM_FLOAT(int64_t, INT64_MIN, INT64_MAX)
CAST_FROM_FLOAT(uint8_t, 0, 255)

#define CAST_LOOPS(S, T)                                               \
    UN_LOOP(cast_##S##_f32, T, float, x)                               \
    UN_LOOP(cast_##S##_f64, T, double, x)                              \
    UN_LOOP(cast_##S##_b, T, uint8_t, x != 0)
CAST_LOOPS(f32, float)
CAST_LOOPS(f64, double)
CAST_LOOPS(i32, int32_t)
CAST_LOOPS(i64, int64_t)
CAST_LOOPS(u8, uint8_t)
UN_LOOP(cast_f32_i32, float, int32_t, sat_int32_t(x))
UN_LOOP(cast_f32_i64, float, int64_t, sat_int64_t(x))
UN_LOOP(cast_f32_u8, float, uint8_t, sat_uint8_t(x))
UN_LOOP(cast_f64_i32, double, int32_t, sat_int32_t(x))
UN_LOOP(cast_f64_i64, double, int64_t, sat_int64_t(x))
UN_LOOP(cast_f64_u8, double, uint8_t, sat_uint8_t(x))
/* integer narrowing wraps, as TensorFlow's static_cast */
UN_LOOP(cast_i32_i64, int32_t, int64_t, x)
UN_LOOP(cast_i32_u8, int32_t, uint8_t, (uint8_t)(uint32_t)x)
UN_LOOP(cast_i64_i32, int64_t, int32_t, (int32_t)(uint32_t)(uint64_t)x)
UN_LOOP(cast_i64_u8, int64_t, uint8_t, (uint8_t)(uint64_t)x)
UN_LOOP(cast_u8_i32, uint8_t, int32_t, x)
UN_LOOP(cast_u8_i64, uint8_t, int64_t, x)

/* float16 / bfloat16 (half.h): widened exactly to float, then as float32
** converts (saturating to integers); anything else narrows once from its
** double value, rounding to nearest even (int64 beyond 2^53 rounds to
** double first) */
#define CAST_FROM_HALF(S, TOF)                                          \
    UN_LOOP(cast_##S##_f32, uint16_t, float, TOF(x))                   \
    UN_LOOP(cast_##S##_f64, uint16_t, double, TOF(x))                  \
    UN_LOOP(cast_##S##_i32, uint16_t, int32_t, sat_int32_t(TOF(x)))    \
    UN_LOOP(cast_##S##_i64, uint16_t, int64_t, sat_int64_t(TOF(x)))    \
    UN_LOOP(cast_##S##_u8, uint16_t, uint8_t, sat_uint8_t(TOF(x)))     \
    UN_LOOP(cast_##S##_b, uint16_t, uint8_t, TOF(x) != 0)
CAST_FROM_HALF(h, ltf_half_f16_float)
CAST_FROM_HALF(bh, ltf_half_bf16_float)
#define CAST_TO_HALF(S, T)                                              \
    UN_LOOP(cast_##S##_h, T, uint16_t, ltf_half_f16((double)x))        \
    UN_LOOP(cast_##S##_bh, T, uint16_t, ltf_half_bf16((double)x))
CAST_TO_HALF(f32, float)
CAST_TO_HALF(f64, double)
CAST_TO_HALF(i32, int32_t)
CAST_TO_HALF(i64, int64_t)
CAST_TO_HALF(u8, uint8_t)
UN_LOOP(cast_h_bh, uint16_t, uint16_t, ltf_half_bf16(ltf_half_f16_float(x)))
UN_LOOP(cast_bh_h, uint16_t, uint16_t, ltf_half_f16(ltf_half_bf16_float(x)))

static const un_loop cast_table[LTF_DTYPE_COUNT][LTF_DTYPE_COUNT] = {  /* [from][to], ORDER DTYPE */
    { NULL, cast_f32_f64, cast_f32_i32, cast_f32_i64, cast_f32_u8, cast_f32_b, NULL, NULL, cast_f32_h, cast_f32_bh },
    { cast_f64_f32, NULL, cast_f64_i32, cast_f64_i64, cast_f64_u8, cast_f64_b, NULL, NULL, cast_f64_h, cast_f64_bh },
    { cast_i32_f32, cast_i32_f64, NULL, cast_i32_i64, cast_i32_u8, cast_i32_b, NULL, NULL, cast_i32_h, cast_i32_bh },
    { cast_i64_f32, cast_i64_f64, cast_i64_i32, NULL, cast_i64_u8, cast_i64_b, NULL, NULL, cast_i64_h, cast_i64_bh },
    { cast_u8_f32, cast_u8_f64, cast_u8_i32, cast_u8_i64, NULL, cast_u8_b, NULL, NULL, cast_u8_h, cast_u8_bh },
    { cast_u8_f32, cast_u8_f64, cast_u8_i32, cast_u8_i64, cast_u8_b, NULL, NULL, NULL, cast_u8_h, cast_u8_bh },
    { NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL },
    { NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL },
    { cast_h_f32, cast_h_f64, cast_h_i32, cast_h_i64, cast_h_u8, cast_h_b, NULL, NULL, NULL, cast_h_bh },
    { cast_bh_f32, cast_bh_f64, cast_bh_i32, cast_bh_i64, cast_bh_u8, cast_bh_b, NULL, NULL, cast_bh_h, NULL },
};

ltf_status ltf_cpu_elementwise_cast(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                    int nin, const ltf_attrs *a, ltf_tensor **out, int nout) {
    ltf_dtype from = in[0]->dtype, to = out[0]->dtype;
    if (from == to) return ltf_cpu_elementwise_copy(ctx, def, in, nin, a, out, nout);
    un_loop fn = cast_table[from][to];
    if (!fn)
        return ltf_fail(ctx, LTF_ERR_TYPE, "cast: cannot cast %s to %s", ltf_dtype_name(from), ltf_dtype_name(to));
    un_job j = { fn, LTF_DATA(in[0]), LTF_DATA(out[0]), ltf_dtype_size(from), ltf_dtype_size(to) };
    ltf_pool_for(&ctx->pool, out[0]->numel, LTF_CPU_GRAIN, un_range, &j);
    return LTF_OK;
}
/* }==== */

ltf_status ltf_cpu_elementwise_copy(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                    int nin, const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)ctx; (void)def; (void)nin; (void)a; (void)nout;
    if (out[0]->storage == in[0]->storage && out[0]->offset == in[0]->offset) return LTF_OK;
    size_t nbytes = (size_t)out[0]->numel * ltf_dtype_size(out[0]->dtype);
    if (nbytes) memcpy(LTF_DATA(out[0]), LTF_DATA(in[0]), nbytes);
    if (out[0]->dtype == LTF_DTYPE_STRING) ltf_strings_retain(LTF_DATA(out[0]), out[0]->numel);
    return LTF_OK;
}

/* {==== Select (tf.where with three arguments) */
ltf_status ltf_cpu_elementwise_select(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                      int nin, const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)ctx; (void)def; (void)nin; (void)a; (void)nout;
    if (out[0]->numel == 0) return LTF_OK;
    ltf_cpu_bcast p;
    ltf_cpu_bcast_plan(&p, in, 3, out[0]);
    size_t es = ltf_dtype_size(out[0]->dtype);
    const uint8_t *C = LTF_DATA(in[0]);
    const char *X = LTF_DATA(in[1]), *Y = LTF_DATA(in[2]);
    char *O = LTF_DATA(out[0]);
    int last = p.rank - 1;
    int64_t inner = p.dims[last], off[4];
    int64_t sc = p.strides[0][last], sx = p.strides[1][last], sy = p.strides[2][last];
    for (int64_t row = 0; row < p.outer; row++) {
        ltf_cpu_bcast_offsets(&p, row, off);
        for (int64_t i = 0; i < inner; i++) {
            const char *src = C[off[0] + i * sc] ? X + (size_t)(off[1] + i * sx) * es
                                                 : Y + (size_t)(off[2] + i * sy) * es;
            memcpy(O + (size_t)(row * inner + i) * es, src, es);
        }
    }
    if (out[0]->dtype == LTF_DTYPE_STRING) ltf_strings_retain(LTF_DATA(out[0]), out[0]->numel);
    return LTF_OK;
}
/* }==== */

/* {==== String join (tf.strings.join): elementwise over broadcast inputs */
ltf_status ltf_cpu_elementwise_string_join(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                           int nin, const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)nout;
    ltf_tensor *o = out[0];
    ltf_string **O = LTF_DATA(o);
    size_t lsep = strlen(a->s);
    int64_t idx[LTF_MAX_RANK] = {0};
    for (int64_t k = 0; k < o->numel; k++) {
        const ltf_string *parts[64];
        size_t total = 0;
        for (int t = 0; t < nin; t++) {
            const ltf_tensor *x = in[t];
            int64_t off = 0, stride = 1;
            for (int d = x->rank - 1; d >= 0; d--) {
                int od = d + (o->rank - x->rank);
                off += (x->dims[d] == 1 ? 0 : idx[od]) * stride;
                stride *= x->dims[d];
            }
            parts[t] = ((ltf_string **)LTF_DATA(x))[off];
            total += parts[t] ? parts[t]->len : 0;
        }
        total += lsep * (size_t)(nin - 1);
        if (total) {
            ltf_string *s = malloc(offsetof(ltf_string, bytes) + total + 1);
            if (!s) return ltf_fail_oom(ctx, "string", total);
            s->len = total;
            s->refs = 1;
            size_t pos = 0;
            for (int t = 0; t < nin; t++) {
                if (t && lsep) { memcpy(s->bytes + pos, a->s, lsep); pos += lsep; }
                if (parts[t] && parts[t]->len) { memcpy(s->bytes + pos, parts[t]->bytes, parts[t]->len); pos += parts[t]->len; }
            }
            s->bytes[total] = '\0';
            O[k] = s;
        }
        for (int d = o->rank - 1; d >= 0; d--) {
            if (++idx[d] < o->dims[d]) break;
            idx[d] = 0;
        }
    }
    return LTF_OK;
}
/* }==== */

/* {==== check_numerics */
ltf_status ltf_cpu_elementwise_check_numerics(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                              int nin, const ltf_attrs *a, ltf_tensor **out, int nout) {
    int nan = 0, inf = 0;
    int64_t n = in[0]->numel;
    if (in[0]->dtype == LTF_DTYPE_FLOAT32) {
        const float *x = LTF_DATA(in[0]);
        for (int64_t i = 0; i < n; i++) { nan |= isnan(x[i]); inf |= isinf(x[i]); }
    } else {
        const double *x = LTF_DATA(in[0]);
        for (int64_t i = 0; i < n; i++) { nan |= isnan(x[i]); inf |= isinf(x[i]); }
    }
    if (nan || inf)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "check_numerics: %s : Tensor had %s values", a->s,
                        nan && inf ? "Inf and NaN" : (nan ? "NaN" : "Inf"));
    return ltf_cpu_elementwise_copy(ctx, def, in, nin, a, out, nout);
}
/* }==== */

/* {==== zeros_like / ones_like */
ltf_status ltf_cpu_elementwise_fill_like(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                         int nin, const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)ctx; (void)in; (void)nin; (void)a; (void)nout;
    ltf_tensor *o = out[0];
    int64_t n = o->numel;
    void *p = LTF_DATA(o);
    int one = def->code == 1;
    switch (o->dtype) {
    case LTF_DTYPE_FLOAT32: for (int64_t i = 0; i < n; i++) ((float *)p)[i] = (float)one; break;
    case LTF_DTYPE_FLOAT64: for (int64_t i = 0; i < n; i++) ((double *)p)[i] = one; break;
    case LTF_DTYPE_INT32: for (int64_t i = 0; i < n; i++) ((int32_t *)p)[i] = one; break;
    case LTF_DTYPE_INT64: for (int64_t i = 0; i < n; i++) ((int64_t *)p)[i] = one; break;
    case LTF_DTYPE_UINT8:
    case LTF_DTYPE_BOOL: memset(p, one, (size_t)n); break;
    default: memset(p, 0, (size_t)n * ltf_dtype_size(o->dtype)); break;
    }
    return LTF_OK;
}
/* }==== */

/* {==== Blocks for fused groups (fused.h) */
/* Variable shifts: SSE2 has no per-lane shift counts, so the baseline loops
** are scalar; AVX2 has them (vpsllvd/vpsrlvd), so these are also built for
** x86-64-v3 and chosen at load time. Same expressions as the eager loops. */
#define BIN_LOOP_WIDE(NAME, T, EXPR)                                                  \
    WIDE_CLONES static int NAME(const void *pa, const void *pb, void *po, int64_t n, int mode) { \
        const T *restrict A = pa;                                                    \
        const T *restrict B = pb;                                                    \
        T *restrict O = po;                                                          \
        if (mode == 0) {                                                             \
            for (int64_t i = 0; i < n; i++) { T x = A[i], y = B[i]; O[i] = (EXPR); } \
        } else if (mode == 1) {                                                      \
            T x = A[0];                                                              \
            for (int64_t i = 0; i < n; i++) { T y = B[i]; O[i] = (EXPR); }           \
        } else {                                                                     \
            T y = B[0];                                                              \
            for (int64_t i = 0; i < n; i++) { T x = A[i]; O[i] = (EXPR); }           \
        }                                                                            \
        return 0;                                                                    \
    }
/* uint8 shifts in 32-bit lanes, the count clamped to 0..7 as shl/shr_uint8_t
** (written so that the vectorizer widens them) */
#define U8_SHIFT_LOOP(NAME, OP)                                                      \
    WIDE_CLONES static int NAME(const void *pa, const void *pb, void *po, int64_t n, int mode) { \
        const uint8_t *restrict A = pa;                                              \
        const uint8_t *restrict B = pb;                                              \
        uint8_t *restrict O = po;                                                    \
        if (mode == 0) {                                                             \
            for (int64_t i = 0; i < n; i++) {                                        \
                uint32_t y = B[i];                                                   \
                y = y > 7 ? 7 : y;                                                   \
                O[i] = (uint8_t)(A[i] OP y);                                         \
            }                                                                        \
        } else if (mode == 1) {                                                      \
            uint32_t x = A[0];                                                       \
            for (int64_t i = 0; i < n; i++) {                                        \
                uint32_t y = B[i];                                                   \
                y = y > 7 ? 7 : y;                                                   \
                O[i] = (uint8_t)(x OP y);                                            \
            }                                                                        \
        } else {                                                                     \
            uint32_t y = B[0] > 7 ? 7 : B[0];                                        \
            for (int64_t i = 0; i < n; i++) O[i] = (uint8_t)(A[i] OP y);             \
        }                                                                            \
        return 0;                                                                    \
    }
U8_SHIFT_LOOP(wshl_u8, <<)
U8_SHIFT_LOOP(wshr_u8, >>)

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* uint8 shifts by per-element counts on AVX2, 32 bytes at a time: the
** count (clamped to 7) is applied as conditional shifts by 4, 2 and 1
** (16-bit shifts masked to bytes, selected by each count bit moved to the
** byte's top bit). mode 1: 'a' is one element (as the loops above). */
#define U8_SHIFT_AVX2(NAME, SHIFT16, M4, M2, M1, SCALAR_LOOP)                                     \
    __attribute__((target("avx2"))) static int NAME(const void *pa, const void *pb, void *po, int64_t n, int mode) { \
        if (mode == 2) return SCALAR_LOOP(pa, pb, po, n, mode);                                    \
        const uint8_t *A = pa, *B = pb;                                                            \
        uint8_t *O = po;                                                                           \
        const __m256i seven = _mm256_set1_epi8(7), m4 = _mm256_set1_epi8((char)(M4)),              \
                      m2 = _mm256_set1_epi8((char)(M2)), m1 = _mm256_set1_epi8((char)(M1));        \
        __m256i xa = _mm256_set1_epi8((char)A[0]);                                                 \
        int64_t i = 0;                                                                             \
        for (; i + 32 <= n; i += 32) {                                                             \
            __m256i x = mode ? xa : _mm256_loadu_si256((const __m256i *)(A + i));                   \
            __m256i y = _mm256_min_epu8(_mm256_loadu_si256((const __m256i *)(B + i)), seven);       \
            x = _mm256_blendv_epi8(x, _mm256_and_si256(SHIFT16(x, 4), m4), _mm256_slli_epi16(y, 5)); \
            x = _mm256_blendv_epi8(x, _mm256_and_si256(SHIFT16(x, 2), m2), _mm256_slli_epi16(y, 6)); \
            x = _mm256_blendv_epi8(x, _mm256_and_si256(SHIFT16(x, 1), m1), _mm256_slli_epi16(y, 7)); \
            _mm256_storeu_si256((__m256i *)(O + i), x);                                            \
        }                                                                                          \
        if (i < n) SCALAR_LOOP(mode ? pa : A + i, B + i, O + i, n - i, mode);                      \
        return 0;                                                                                  \
    }
U8_SHIFT_AVX2(shr_u8_avx2, _mm256_srli_epi16, 0x0F, 0x3F, 0x7F, wshr_u8)
U8_SHIFT_AVX2(shl_u8_avx2, _mm256_slli_epi16, 0xF0, 0xFC, 0xFE, wshl_u8)
#undef U8_SHIFT_AVX2
#define U8_SHR (__builtin_cpu_supports("avx2") ? shr_u8_avx2 : wshr_u8)
#define U8_SHL (__builtin_cpu_supports("avx2") ? shl_u8_avx2 : wshl_u8)
#else
#define U8_SHR wshr_u8
#define U8_SHL wshl_u8
#endif
/* uint8 bitwise ops: 32 bytes per AVX2 instruction instead of 16 */
BIN_LOOP_WIDE(wband_u8, uint8_t, x & y)
BIN_LOOP_WIDE(wbor_u8, uint8_t, x | y)
BIN_LOOP_WIDE(wbxor_u8, uint8_t, x ^ y)
BIN_LOOP_WIDE(wshl_i32, int32_t, shl_int32_t(x, y))
BIN_LOOP_WIDE(wshr_i32, int32_t, shr_int32_t(x, y))
BIN_LOOP_WIDE(wshl_i64, int64_t, shl_int64_t(x, y))
BIN_LOOP_WIDE(wshr_i64, int64_t, shr_int64_t(x, y))

/* Casts, widened for AVX2 (vpmovzx/vcvtdq2ps and kin): the same conversions as CAST_LOOPS and below */
#define CAST_WIDE(NAME, T, TO, EXPR)                                       \
    WIDE_CLONES static void NAME(const void *pa, void *po, int64_t n) {   \
        const T *restrict A = pa;                                          \
        TO *restrict O = po;                                               \
        for (int64_t i = 0; i < n; i++) { T x = A[i]; O[i] = (TO)(EXPR); } \
    }
CAST_WIDE(wcast_u8_f32, uint8_t, float, x)
CAST_WIDE(wcast_u8_f64, uint8_t, double, x)
CAST_WIDE(wcast_u8_i32, uint8_t, int32_t, x)
CAST_WIDE(wcast_i32_f32, int32_t, float, x)
CAST_WIDE(wcast_i32_f64, int32_t, double, x)
CAST_WIDE(wcast_f32_f64, float, double, x)
CAST_WIDE(wcast_f64_f32, double, float, x)
CAST_WIDE(wcast_b_f32, uint8_t, float, x)

static un_loop fused_cast_loop(ltf_dtype in, ltf_dtype out) {
    switch (in * LTF_DTYPE_COUNT + out) {
#define C(a, b) ((int)LTF_DTYPE_##a * LTF_DTYPE_COUNT + (int)LTF_DTYPE_##b)
    case C(UINT8, FLOAT32): return wcast_u8_f32;
    case C(UINT8, FLOAT64): return wcast_u8_f64;
    case C(UINT8, INT32): return wcast_u8_i32;
    case C(INT32, FLOAT32): return wcast_i32_f32;
    case C(INT32, FLOAT64): return wcast_i32_f64;
    case C(FLOAT32, FLOAT64): return wcast_f32_f64;
    case C(FLOAT64, FLOAT32): return wcast_f64_f32;
    case C(BOOL, FLOAT32): return wcast_b_f32;
#undef C
    default: return cast_table[in][out];
    }
}

static bin_loop fused_bin_loop(int code, ltf_dtype dt) {
    if (dt == LTF_DTYPE_UINT8) {
        if (code == LTF_BIN_BITWISE_AND) return wband_u8;
        if (code == LTF_BIN_BITWISE_OR) return wbor_u8;
        if (code == LTF_BIN_BITWISE_XOR) return wbxor_u8;
    }
    if (code == LTF_BIN_LEFT_SHIFT || code == LTF_BIN_RIGHT_SHIFT) {
        int l = code == LTF_BIN_LEFT_SHIFT;
        switch (dt) {
        case LTF_DTYPE_UINT8: return l ? U8_SHL : U8_SHR;
        case LTF_DTYPE_INT32: return l ? wshl_i32 : wshr_i32;
        case LTF_DTYPE_INT64: return l ? wshl_i64 : wshr_i64;
        default: break;
        }
    }
    return bin_table[code][dt];
}

static int real_dtype(ltf_dtype dt) { return (unsigned)dt < LTF_DTYPE_STRING; }

int ltf_cpu_elementwise_fusable(const ltf_op_def *def, ltf_dtype in, ltf_dtype out) {
    if (!real_dtype(in) || !real_dtype(out)) return 0;
    ltf_kernel_fn k = def->kernel[LTF_DEVICE_CPU];
    if (k == ltf_cpu_elementwise_unary) return un_table[def->code][in] != NULL;
    if (k == ltf_cpu_elementwise_binary) return bin_table[def->code][in] != NULL;
    if (k == ltf_cpu_elementwise_cast) return in == out || cast_table[in][out] != NULL;
    return 0;
}

static void fill_elems(char *dst, const char *one, size_t es, int64_t n) {
    switch (es) {
    case 1: memset(dst, one[0], (size_t)n); return;
    case 4: { uint32_t v; memcpy(&v, one, 4); for (int64_t i = 0; i < n; i++) memcpy(dst + 4 * i, &v, 4); return; }
    case 8: { uint64_t v; memcpy(&v, one, 8); for (int64_t i = 0; i < n; i++) memcpy(dst + 8 * i, &v, 8); return; }
    default: for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * es, one, es); return;
    }
}

int ltf_cpu_elementwise_block(const ltf_op_def *def, ltf_dtype in, ltf_dtype out, const void *const *src,
                              const int *scalar, int nin, void *dst, int64_t n) {
    ltf_kernel_fn k = def->kernel[LTF_DEVICE_CPU];
    if (nin == 1) {
        un_loop fn;
        if (k == ltf_cpu_elementwise_cast) {
            if (in == out) {
                if (scalar[0]) fill_elems(dst, src[0], ltf_dtype_size(out), n);
                else if (dst != src[0]) memmove(dst, src[0], (size_t)n * ltf_dtype_size(out));
                return 0;
            }
            fn = fused_cast_loop(in, out);
        } else {
            fn = un_table[def->code][in];
        }
        if (scalar[0]) {   /* a one-element input: compute once, then fill */
            char one[8];
            fn(src[0], one, 1);
            fill_elems(dst, one, ltf_dtype_size(out), n);
            return 0;
        }
        fn(src[0], dst, n);
        return 0;
    }
    int mode = scalar[0] ? 1 : (scalar[1] ? 2 : 0);
    if (scalar[0] && scalar[1]) {   /* both one element (a group of one-element values) */
        char one[8];
        int r = fused_bin_loop(def->code, in)(src[0], src[1], one, 1, 0);
        if (r == 0) fill_elems(dst, one, ltf_dtype_size(out), n);
        return r;
    }
    return fused_bin_loop(def->code, in)(src[0], src[1], dst, n, mode);
}

#if defined(__SSE2__)
#include <emmintrin.h>
void ltf_cpu_stream_copy(void *dst, const void *src, size_t n) {
    char *d = dst;
    const char *s = src;
    size_t head = (16 - ((uintptr_t)d & 15)) & 15;
    if (head > n) head = n;
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(s + i)), b = _mm_loadu_si128((const __m128i *)(s + i + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32)), e = _mm_loadu_si128((const __m128i *)(s + i + 48));
        _mm_stream_si128((__m128i *)(d + i), a);
        _mm_stream_si128((__m128i *)(d + i + 16), b);
        _mm_stream_si128((__m128i *)(d + i + 32), c);
        _mm_stream_si128((__m128i *)(d + i + 48), e);
    }
    for (; i + 16 <= n; i += 16) _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
    memcpy(d + i, s + i, n - i);
    _mm_sfence();
}
#else
void ltf_cpu_stream_copy(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }
#endif
/* }==== */
