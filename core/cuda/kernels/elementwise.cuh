/*
** cuda/kernels/elementwise.cuh: the scalar semantics of every elementwise
** op (unary, binary, comparisons, casts, select, fill) and the per-index
** bodies that apply them over broadcast inputs. The semantics follow
** cpu/elementwise.c case by case (wrapping integer arithmetic, TensorFlow's
** floor division and shifts, NaN-propagating max/min, saturating float to
** integer casts); core/tests/test_cuda_kernels.cpp checks them against it.
** Op codes are ltf_ew_unary / ltf_ew_binary (ltf_ops/elementwise.h).
*/
#ifndef LTF_CU_ELEMENTWISE_CUH
#define LTF_CU_ELEMENTWISE_CUH

#include "common.cuh"

namespace ltf_cu {

/* ORDER EWUNARY (ltf_ops/elementwise.h) */
enum {
    UN_NEG, UN_ABS, UN_SIGN, UN_EXP, UN_LOG, UN_LOG1P, UN_EXPM1, UN_SQRT, UN_RSQRT, UN_SQUARE,
    UN_RECIPROCAL, UN_TANH, UN_SIGMOID, UN_RELU, UN_SOFTPLUS, UN_SIN, UN_COS, UN_FLOOR, UN_CEIL,
    UN_ROUND, UN_LOGICAL_NOT, UN_INVERT, UN_IS_NAN, UN_IS_FINITE, UN_ACOS, UN_ACOSH, UN_ASIN,
    UN_ASINH, UN_ATAN, UN_ATANH, UN_COSH, UN_SINH, UN_TAN, UN_ERF, UN_ERFC, UN_LGAMMA, UN_DIGAMMA,
    UN_IS_INF, UN_COUNT
};
/* ORDER EWBINARY */
enum {
    BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV, BIN_FLOORDIV, BIN_FLOORMOD, BIN_POW, BIN_MAXIMUM,
    BIN_MINIMUM, BIN_SQUARED_DIFFERENCE, BIN_EQUAL, BIN_NOT_EQUAL, BIN_LESS, BIN_LESS_EQUAL,
    BIN_GREATER, BIN_GREATER_EQUAL, BIN_LOGICAL_AND, BIN_LOGICAL_OR, BIN_LOGICAL_XOR,
    BIN_BITWISE_AND, BIN_BITWISE_OR, BIN_BITWISE_XOR, BIN_LEFT_SHIFT, BIN_RIGHT_SHIFT,
    BIN_RELU_GRAD, BIN_TANH_GRAD, BIN_SIGMOID_GRAD, BIN_ATAN2, BIN_XLOGY, BIN_XDIVY,
    BIN_DIVIDE_NO_NAN, BIN_TRUNCATEDIV, BIN_TRUNCATEMOD, BIN_POLYGAMMA, BIN_ZETA, BIN_COUNT
};
/* ORDER DTYPE (ltf.h) */
enum { DT_F32, DT_F64, DT_I32, DT_I64, DT_U8, DT_BOOL, DT_STRING, DT_RESOURCE, DT_F16, DT_BF16 };
inline bool is_half_dt(int dt) { return dt == DT_F16 || dt == DT_BF16; }

/* {==== Math overloads: one name per function for float and double */
#define LTF_CU_M1(name, ff, fd)                                  \
    LTF_HD float name(float x) { return ff(x); }                 \
    LTF_HD double name(double x) { return fd(x); }
LTF_CU_M1(m_exp, expf, exp) LTF_CU_M1(m_log, logf, log) LTF_CU_M1(m_log1p, log1pf, log1p)
LTF_CU_M1(m_expm1, expm1f, expm1) LTF_CU_M1(m_sqrt, sqrtf, sqrt) LTF_CU_M1(m_tanh, tanhf, tanh)
LTF_CU_M1(m_sin, sinf, sin) LTF_CU_M1(m_cos, cosf, cos) LTF_CU_M1(m_floor, floorf, floor)
LTF_CU_M1(m_ceil, ceilf, ceil) LTF_CU_M1(m_rint, rintf, rint) LTF_CU_M1(m_acos, acosf, acos)
LTF_CU_M1(m_acosh, acoshf, acosh) LTF_CU_M1(m_asin, asinf, asin) LTF_CU_M1(m_asinh, asinhf, asinh)
LTF_CU_M1(m_atan, atanf, atan) LTF_CU_M1(m_atanh, atanhf, atanh) LTF_CU_M1(m_cosh, coshf, cosh)
LTF_CU_M1(m_sinh, sinhf, sinh) LTF_CU_M1(m_tan, tanf, tan) LTF_CU_M1(m_erf, erff, erf)
LTF_CU_M1(m_erfc, erfcf, erfc) LTF_CU_M1(m_fabs, fabsf, fabs) LTF_CU_M1(m_trunc, truncf, trunc)
#undef LTF_CU_M1
LTF_HD float m_pow(float x, float y) { return powf(x, y); }
LTF_HD double m_pow(double x, double y) { return pow(x, y); }
LTF_HD float m_atan2(float x, float y) { return atan2f(x, y); }
LTF_HD double m_atan2(double x, double y) { return atan2(x, y); }
LTF_HD float m_fmod(float x, float y) { return fmodf(x, y); }
LTF_HD double m_fmod(double x, double y) { return fmod(x, y); }
template <class T> LTF_HD bool m_isnan(T x) { return x != x; }
/* x - x is NaN exactly for NaN and infinities (and 0 for integers) */
template <class T> LTF_HD bool m_isinf(T x) { return x == x && x - x != x - x; }
template <class T> LTF_HD bool m_isfinite(T x) { return x - x == x - x; }
/* }==== */

/* {==== Special functions in double (float32 rounds the double result) */
LTF_HD double digamma_d(double x) {
    if (x != x || x == (double)INFINITY) return x;
    if (x == -(double)INFINITY) return (double)NAN;
    double r = 0;
    if (x <= 0) {
        double q = x - rint(x);
        if (q == 0) return (double)NAN;
        r = -3.14159265358979323846 / tan(3.14159265358979323846 * q);
        x = 1 - x;
    }
    while (x < 10) { r -= 1 / x; x += 1; }
    double f = 1 / (x * x);
    double t = f * (-1.0 / 12 + f * (1.0 / 120 + f * (-1.0 / 252 + f * (1.0 / 240 + f * (-1.0 / 132 +
               f * (691.0 / 32760 + f * (-1.0 / 12)))))));
    return r + log(x) - 0.5 / x + t;
}

/* Hurwitz zeta (Cephes' zeta.c, as cpu/elementwise.c) */
LTF_HD double zeta_d(double x, double q) {
    const double A[12] = {
        12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
        -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
        1.8152105401943546773e17, -7.1661652561756670113e18 };
    const double eps = 1.11022302462515654042e-16;
    if (x != x || q != q) return (double)NAN;
    if (x == 1.0) return (double)INFINITY;
    if (x < 1.0) return (double)NAN;
    if (q <= 0.0) {
        if (q == floor(q)) return x == floor(x) && fmod(x, 2.0) == 0.0 ? (double)INFINITY : (double)NAN;
        if (x != floor(x)) return (double)NAN;
    }
    if (q > 1e8) return (1 / (x - 1) + 1 / (2 * q)) * pow(q, 1 - x);
    if (q < -1048576.0) return (double)NAN;   /* cpu/elementwise.c's ZETA_MAX_TERMS: no endless sum */
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

LTF_HD double polygamma_d(double n, double x) {
    if (n != n || x != x || n < 0 || n != floor(n)) return (double)NAN;
    if (n == 0) return digamma_d(x);
    double fact = tgamma(n + 1);
    double z = zeta_d(n + 1, x);
    return (fmod(n, 2.0) == 0 ? -fact : fact) * z;
}
/* }==== */

/* {==== Integer helpers (no undefined behaviour on any input) */
template <class T> struct utype;
template <> struct utype<int32_t> { typedef uint32_t t; };
template <> struct utype<int64_t> { typedef uint64_t t; };
template <> struct utype<uint8_t> { typedef uint32_t t; };
template <class T> struct limits;
template <> struct limits<int32_t> { enum { bits = 32 }; static LTF_HD int32_t lo() { return INT32_MIN; } };
template <> struct limits<int64_t> { enum { bits = 64 }; static LTF_HD int64_t lo() { return INT64_MIN; } };
template <> struct limits<uint8_t> { enum { bits = 8 }; static LTF_HD uint8_t lo() { return 0; } };

template <class T> LTF_HD bool is_float() { return false; }
template <> LTF_HD bool is_float<float>() { return true; }
template <> LTF_HD bool is_float<double>() { return true; }
template <class T> LTF_HD bool is_signed_int() { return false; }
template <> LTF_HD bool is_signed_int<int32_t>() { return true; }
template <> LTF_HD bool is_signed_int<int64_t>() { return true; }

/* x < 0, spelled so that no compiler warns for an unsigned T */
template <class T> LTF_HD bool lt0(T x) { return x < 0; }
template <> LTF_HD bool lt0<uint8_t>(uint8_t) { return false; }

template <class T> LTF_HD T ifloordiv(T x, T y) {
    if (!is_signed_int<T>()) return (T)(x / y);
    if (y == (T)-1) return x == limits<T>::lo() ? x : (T)(0 - (typename utype<T>::t)x);
    T q = (T)(x / y);
    return ((T)(q * y) != x && (lt0(x) != lt0(y))) ? (T)(q - 1) : q;
}
template <class T> LTF_HD T ifloormod(T x, T y) {
    if (!is_signed_int<T>()) return (T)(x % y);
    if (y == (T)-1) return 0;
    T r = (T)(x % y);
    return (r != 0 && (lt0(r) != lt0(y))) ? (T)(r + y) : r;
}
template <class T> LTF_HD T itruncdiv(T x, T y) {
    if (is_signed_int<T>() && y == (T)-1) return (T)(0 - (typename utype<T>::t)x);
    return (T)(x / y);
}
template <class T> LTF_HD T itruncmod(T x, T y) {
    if (is_signed_int<T>() && y == (T)-1) return 0;
    return (T)(x % y);
}
template <class T> LTF_HD T ipow(T x, T y) {
    typedef typename utype<T>::t UT;
    UT r = 1, b = (UT)x;
    while (y > 0) { if (y & 1) r *= b; b *= b; y = (T)(y >> 1); }
    return (T)r;
}
/* shift counts clamp to 0..BITS-1 (TensorFlow's kernels) */
template <class T> LTF_HD T ishl(T x, T y) {
    typedef typename utype<T>::t UT;
    const int bits = limits<T>::bits;
    if (lt0(y)) y = 0; else if (y > (T)(bits - 1)) y = (T)(bits - 1);
    return (T)((UT)x << y);
}
template <class T> LTF_HD T ishr(T x, T y) {
    typedef typename utype<T>::t UT;
    const int bits = limits<T>::bits;
    if (lt0(y)) y = 0; else if (y > (T)(bits - 1)) y = (T)(bits - 1);
    if (bits == 8) return (T)((uint32_t)x >> y);
    return lt0(x) ? (T)~(~(UT)x >> y) : (T)((UT)x >> y);
}
/* }==== */

/* {==== Unary */
/* Whether unary op 'code' exists for dtype 'dt' (cpu/elementwise.c's un_table). */
inline bool unary_ok(int code, int dt) {
    if (code < 0 || code >= UN_COUNT) return false;
    if (dt == DT_F32 || dt == DT_F64 || is_half_dt(dt)) return code != UN_LOGICAL_NOT && code != UN_INVERT;
    if (dt == DT_BOOL) return code == UN_LOGICAL_NOT;
    if (dt == DT_I32 || dt == DT_I64)
        return code == UN_NEG || code == UN_ABS || code == UN_SIGN || code == UN_SQUARE || code == UN_RELU ||
               code == UN_INVERT;
    if (dt == DT_U8)
        return code == UN_ABS || code == UN_SIGN || code == UN_SQUARE || code == UN_RELU || code == UN_INVERT;
    return false;
}
/* Whether the unary op's result is bool (is_nan, is_finite, is_inf). */
LTF_HD bool unary_pred(int code) { return code == UN_IS_NAN || code == UN_IS_FINITE || code == UN_IS_INF; }

template <class T> LTF_HD T sigmoid_(T x) {
    return x >= 0 ? (T)1 / ((T)1 + m_exp(-x)) : m_exp(x) / ((T)1 + m_exp(x));
}
template <class T> LTF_HD T softplus_(T x) { return x > 0 ? x + m_log1p(m_exp(-x)) : m_log1p(m_exp(x)); }

/* Float unary ops with a T result. */
template <class T> LTF_HD T unary_float(int code, T x) {
    switch (code) {
    case UN_NEG: return -x;
    case UN_ABS: return m_fabs(x);
    case UN_SIGN: return x > 0 ? (T)1 : (x < 0 ? (T)-1 : (x == 0 ? (T)0 : x));
    case UN_EXP: return m_exp(x);
    case UN_LOG: return m_log(x);
    case UN_LOG1P: return m_log1p(x);
    case UN_EXPM1: return m_expm1(x);
    case UN_SQRT: return m_sqrt(x);
    case UN_RSQRT: return (T)1 / m_sqrt(x);
    case UN_SQUARE: return x * x;
    case UN_RECIPROCAL: return (T)1 / x;
    case UN_TANH: return m_tanh(x);
    case UN_SIGMOID: return sigmoid_(x);
    case UN_RELU: return x > 0 ? x : (x != x ? x : (T)0);
    case UN_SOFTPLUS: return softplus_(x);
    case UN_SIN: return m_sin(x);
    case UN_COS: return m_cos(x);
    case UN_FLOOR: return m_floor(x);
    case UN_CEIL: return m_ceil(x);
    case UN_ROUND: return m_rint(x);
    case UN_ACOS: return m_acos(x);
    case UN_ACOSH: return m_acosh(x);
    case UN_ASIN: return m_asin(x);
    case UN_ASINH: return m_asinh(x);
    case UN_ATAN: return m_atan(x);
    case UN_ATANH: return m_atanh(x);
    case UN_COSH: return m_cosh(x);
    case UN_SINH: return m_sinh(x);
    case UN_TAN: return m_tan(x);
    case UN_ERF: return m_erf(x);
    case UN_ERFC: return m_erfc(x);
    case UN_LGAMMA: return (T)lgamma((double)x);
    case UN_DIGAMMA: return (T)digamma_d((double)x);
    default: return x;
    }
}

template <class T> LTF_HD T unary_int(int code, T x) {
    typedef typename utype<T>::t UT;
    switch (code) {
    case UN_NEG: return (T)(0 - (UT)x);
    case UN_ABS: return lt0(x) ? (T)(0 - (UT)x) : x;
    case UN_SIGN: return (T)((x > 0) - lt0(x));
    case UN_SQUARE: return (T)((UT)x * (UT)x);
    case UN_RELU: return x > 0 ? x : (T)0;
    case UN_INVERT: return (T)~x;
    default: return x;
    }
}

/* Unary op 'code' on one element: a T result, or a bool one for predicates. */
template <class T> LTF_HD T unary_val(int code, T x);
template <> LTF_HD float unary_val<float>(int code, float x) { return unary_float(code, x); }
template <> LTF_HD double unary_val<double>(int code, double x) { return unary_float(code, x); }
template <> LTF_HD int32_t unary_val<int32_t>(int code, int32_t x) { return unary_int(code, x); }
template <> LTF_HD int64_t unary_val<int64_t>(int code, int64_t x) { return unary_int(code, x); }
template <> LTF_HD uint8_t unary_val<uint8_t>(int code, uint8_t x) {
    return code == UN_LOGICAL_NOT ? (uint8_t)!x : unary_int(code, x);   /* uint8 or bool */
}
/* float16/bfloat16: the float op, rounded (the CPU's float32 staging) */
template <> LTF_HD f16_t unary_val<f16_t>(int code, f16_t x) { return stv<f16_t>(unary_float(code, ldv(x))); }
template <> LTF_HD bf16_t unary_val<bf16_t>(int code, bf16_t x) { return stv<bf16_t>(unary_float(code, ldv(x))); }
template <class T> LTF_HD uint8_t unary_pred_val(int code, T x) {
    if (code == UN_IS_NAN) return m_isnan(x);
    if (code == UN_IS_INF) return m_isinf(x);
    return m_isfinite(x);
}

template <class T> struct UnaryP {
    const T *x;
    void *o;
    int code;
};
template <class T> struct UnaryF {
    static LTF_HD void at(int64_t i, const UnaryP<T> &p) {
        if (unary_pred(p.code)) ((uint8_t *)p.o)[i] = unary_pred_val(p.code, ldv(p.x[i]));
        else ((T *)p.o)[i] = unary_val<T>(p.code, p.x[i]);
    }
};
/* }==== */

/* {==== Binary */
/* Whether binary op 'code' exists for dtype 'dt' (cpu/elementwise.c's bin_table). */
inline bool binary_ok(int code, int dt) {
    if (code < 0 || code >= BIN_COUNT) return false;
    bool logical = code == BIN_LOGICAL_AND || code == BIN_LOGICAL_OR || code == BIN_LOGICAL_XOR;
    bool bits = code == BIN_BITWISE_AND || code == BIN_BITWISE_OR || code == BIN_BITWISE_XOR ||
                code == BIN_LEFT_SHIFT || code == BIN_RIGHT_SHIFT;
    bool float_only = code == BIN_DIV || (code >= BIN_RELU_GRAD && code <= BIN_DIVIDE_NO_NAN) ||
                      code == BIN_POLYGAMMA || code == BIN_ZETA;
    if (dt == DT_BOOL) return logical || code == BIN_EQUAL || code == BIN_NOT_EQUAL;
    if (logical) return false;
    if (dt == DT_F32 || dt == DT_F64 || is_half_dt(dt)) return !bits;
    if (dt == DT_I32 || dt == DT_I64 || dt == DT_U8) return !float_only;
    return false;
}
/* Whether the binary op's result is bool (comparisons and logical ops). */
LTF_HD bool binary_pred(int code) { return code >= BIN_EQUAL && code <= BIN_LOGICAL_XOR; }

template <class T> LTF_HD T fmaxp(T x, T y) { return x != x ? x : (y != y ? y : (x > y ? x : y)); }
template <class T> LTF_HD T fminp(T x, T y) { return x != x ? x : (y != y ? y : (x < y ? x : y)); }

template <class T> LTF_HD T binary_float(int code, T x, T y) {
    switch (code) {
    case BIN_ADD: return x + y;
    case BIN_SUB: return x - y;
    case BIN_MUL: return x * y;
    case BIN_DIV: return x / y;
    case BIN_FLOORDIV: return m_floor(x / y);
    case BIN_FLOORMOD: { T r = m_fmod(x, y); return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r; }
    case BIN_POW: return m_pow(x, y);
    case BIN_MAXIMUM: return fmaxp(x, y);
    case BIN_MINIMUM: return fminp(x, y);
    case BIN_SQUARED_DIFFERENCE: return (x - y) * (x - y);
    case BIN_RELU_GRAD: return y > 0 ? x : (T)0;
    case BIN_TANH_GRAD: return x * ((T)1 - y * y);
    case BIN_SIGMOID_GRAD: return x * y * ((T)1 - y);
    case BIN_ATAN2: return m_atan2(x, y);
    case BIN_XLOGY: return x == 0 ? (T)0 : x * m_log(y);
    case BIN_XDIVY: return x == 0 ? (T)0 : x / y;
    case BIN_DIVIDE_NO_NAN: return y == 0 ? (T)0 : x / y;
    case BIN_TRUNCATEDIV: return m_trunc(x / y);
    case BIN_TRUNCATEMOD: return m_fmod(x, y);
    case BIN_POLYGAMMA: return (T)polygamma_d((double)x, (double)y);
    case BIN_ZETA: return (T)zeta_d((double)x, (double)y);
    default: return x;
    }
}

template <class T> LTF_HD T binary_int(int code, T x, T y, int *flag) {
    typedef typename utype<T>::t UT;
    switch (code) {
    case BIN_ADD: return (T)((UT)x + (UT)y);
    case BIN_SUB: return (T)((UT)x - (UT)y);
    case BIN_MUL: return (T)((UT)x * (UT)y);
    case BIN_FLOORDIV: case BIN_FLOORMOD: case BIN_TRUNCATEDIV: case BIN_TRUNCATEMOD:
        if (y == 0) { raise_flag(flag, ERR_DIV_ZERO); return 0; }
        return code == BIN_FLOORDIV ? ifloordiv(x, y) : code == BIN_FLOORMOD ? ifloormod(x, y)
             : code == BIN_TRUNCATEDIV ? itruncdiv(x, y) : itruncmod(x, y);
    case BIN_POW:
        if (lt0(y)) { raise_flag(flag, ERR_NEG_POW); return 0; }
        return ipow(x, y);
    case BIN_MAXIMUM: return x > y ? x : y;
    case BIN_MINIMUM: return x < y ? x : y;
    case BIN_SQUARED_DIFFERENCE: { T d = (T)((UT)x - (UT)y); return (T)((UT)d * (UT)d); }
    case BIN_BITWISE_AND: return (T)(x & y);
    case BIN_BITWISE_OR: return (T)(x | y);
    case BIN_BITWISE_XOR: return (T)(x ^ y);
    case BIN_LEFT_SHIFT: return ishl(x, y);
    case BIN_RIGHT_SHIFT: return ishr(x, y);
    default: return x;
    }
}

/* Binary op 'code' with a T result ('flag' gets integer errors). */
template <class T> LTF_HD T binary_val(int code, T x, T y, int *flag);
template <> LTF_HD float binary_val<float>(int code, float x, float y, int *) { return binary_float(code, x, y); }
template <> LTF_HD double binary_val<double>(int code, double x, double y, int *) { return binary_float(code, x, y); }
template <> LTF_HD int32_t binary_val<int32_t>(int code, int32_t x, int32_t y, int *f) { return binary_int(code, x, y, f); }
template <> LTF_HD int64_t binary_val<int64_t>(int code, int64_t x, int64_t y, int *f) { return binary_int(code, x, y, f); }
template <> LTF_HD uint8_t binary_val<uint8_t>(int code, uint8_t x, uint8_t y, int *f) { return binary_int(code, x, y, f); }
template <> LTF_HD f16_t binary_val<f16_t>(int code, f16_t x, f16_t y, int *) {
    return stv<f16_t>(binary_float(code, ldv(x), ldv(y)));
}
template <> LTF_HD bf16_t binary_val<bf16_t>(int code, bf16_t x, bf16_t y, int *) {
    return stv<bf16_t>(binary_float(code, ldv(x), ldv(y)));
}

/* Comparisons and logical ops: a bool result. */
template <class T> LTF_HD uint8_t binary_pred_val(int code, T x, T y) {
    switch (code) {
    case BIN_EQUAL: return x == y;
    case BIN_NOT_EQUAL: return x != y;
    case BIN_LESS: return x < y;
    case BIN_LESS_EQUAL: return x <= y;
    case BIN_GREATER: return x > y;
    case BIN_GREATER_EQUAL: return x >= y;
    case BIN_LOGICAL_AND: return x && y;
    case BIN_LOGICAL_OR: return x || y;
    default: return (x != 0) != (y != 0);   /* BIN_LOGICAL_XOR */
    }
}

template <class T> struct BinaryP {
    const T *a, *b;
    void *o;
    int code;
    int *flag;
    Bcast bc;
};
template <class T> struct BinaryF {
    static LTF_HD void at(int64_t i, const BinaryP<T> &p) {
        T x = p.a[bcast_offset(p.bc, 0, i)], y = p.b[bcast_offset(p.bc, 1, i)];
        if (binary_pred(p.code)) ((uint8_t *)p.o)[i] = binary_pred_val(p.code, ldv(x), ldv(y));
        else ((T *)p.o)[i] = binary_val<T>(p.code, x, y, p.flag);
    }
};
/* }==== */

/* {==== Cast: float to integer saturates (NaN gives 0), integer narrowing
** wraps, anything to bool is x != 0 */
template <class TO> LTF_HD TO sat_cast(double x, double lo, double hi, TO tlo, TO thi) {
    if (x != x) return 0;
    if (x <= lo) return tlo;
    if (x >= hi) return thi;
    return (TO)x;
}
template <class F, class TO> struct Conv {
    static LTF_HD TO go(F x) { return (TO)x; }
};
#define LTF_CU_SAT(F)                                                                                  \
    template <> struct Conv<F, int32_t> {                                                              \
        static LTF_HD int32_t go(F x) { return sat_cast<int32_t>(x, (double)INT32_MIN, (double)INT32_MAX, INT32_MIN, INT32_MAX); } \
    };                                                                                                 \
    template <> struct Conv<F, int64_t> {                                                              \
        static LTF_HD int64_t go(F x) { return sat_cast<int64_t>(x, (double)INT64_MIN, (double)INT64_MAX, INT64_MIN, INT64_MAX); } \
    };                                                                                                 \
    template <> struct Conv<F, uint8_t> {                                                              \
        static LTF_HD uint8_t go(F x) { return sat_cast<uint8_t>(x, 0.0, 255.0, 0, 255); }             \
    };
LTF_CU_SAT(float)
LTF_CU_SAT(double)
#undef LTF_CU_SAT
template <> struct Conv<int64_t, int32_t> { static LTF_HD int32_t go(int64_t x) { return (int32_t)(uint32_t)(uint64_t)x; } };
template <> struct Conv<int32_t, uint8_t> { static LTF_HD uint8_t go(int32_t x) { return (uint8_t)(uint32_t)x; } };
template <> struct Conv<int64_t, uint8_t> { static LTF_HD uint8_t go(int64_t x) { return (uint8_t)(uint64_t)x; } };
/* float16/bfloat16 (cpu/elementwise.c's casts): from them, widened exactly
** to float, then as float32 converts; to them, rounded once from the
** source's double value */
template <class H, class TO> struct ConvFromHalf {
    static LTF_HD TO go(H x) { return Conv<float, TO>::go(ldv(x)); }
};
template <class F, class H> struct ConvToHalf {
    static LTF_HD H go(F x) { return stv_d<H>((double)x); }
};
#define LTF_CU_HALF_CONV(H)                                                                  \
    template <class TO> struct Conv<H, TO> : ConvFromHalf<H, TO> {};                         \
    template <> struct Conv<float, H> : ConvToHalf<float, H> {};                             \
    template <> struct Conv<double, H> : ConvToHalf<double, H> {};                           \
    template <> struct Conv<int32_t, H> : ConvToHalf<int32_t, H> {};                         \
    template <> struct Conv<int64_t, H> : ConvToHalf<int64_t, H> {};                         \
    template <> struct Conv<uint8_t, H> : ConvToHalf<uint8_t, H> {};                         \
    template <> struct Conv<H, float> { static LTF_HD float go(H x) { return ldv(x); } };     \
    template <> struct Conv<H, double> { static LTF_HD double go(H x) { return ldv(x); } };
LTF_CU_HALF_CONV(f16_t)
LTF_CU_HALF_CONV(bf16_t)
#undef LTF_CU_HALF_CONV
template <> struct Conv<f16_t, f16_t> { static LTF_HD f16_t go(f16_t x) { return x; } };
template <> struct Conv<bf16_t, bf16_t> { static LTF_HD bf16_t go(bf16_t x) { return x; } };
template <> struct Conv<f16_t, bf16_t> { static LTF_HD bf16_t go(f16_t x) { return stv_d<bf16_t>(ldv(x)); } };
template <> struct Conv<bf16_t, f16_t> { static LTF_HD f16_t go(bf16_t x) { return stv_d<f16_t>(ldv(x)); } };

/* 'to_bool': the destination is bool (x != 0), else a plain conversion. */
template <class F, class TO> struct CastP {
    const F *x;
    TO *o;
    int to_bool;
};
template <class F, class TO> struct CastF {
    static LTF_HD void at(int64_t i, const CastP<F, TO> &p) {
        F x = p.x[i];
        p.o[i] = p.to_bool ? stv<TO>((typename Acc<TO>::t)(ldv(x) != 0)) : Conv<F, TO>::go(x);
    }
};
/* }==== */

/* {==== Select (where), fill, copy: by element size */
template <class E> struct SelectP {
    const uint8_t *c;
    const E *x, *y;
    E *o;
    Bcast bc;
};
template <class E> struct SelectF {
    static LTF_HD void at(int64_t i, const SelectP<E> &p) {
        p.o[i] = p.c[bcast_offset(p.bc, 0, i)] ? p.x[bcast_offset(p.bc, 1, i)] : p.y[bcast_offset(p.bc, 2, i)];
    }
};
template <class E> struct FillP {
    E *o;
    E v;
};
template <class E> struct FillF {
    static LTF_HD void at(int64_t i, const FillP<E> &p) { p.o[i] = p.v; }
};
/* }==== */

}  // namespace ltf_cu

#endif
