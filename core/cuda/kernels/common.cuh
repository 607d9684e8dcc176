/*
** cuda/kernels/common.cuh: what every kernel body needs, written once for
** three compilers: nvcc (libltf_cuda.so, __host__ __device__), NVRTC (the
** fused groups' generated kernels include this text) and a plain C++ host
** compiler (libltf_gpu_host.a and core/tests/test_cuda_kernels, which run
** the same bodies over every index on host memory).
**
** A body is a struct with 'static LTF_HD void at(int64_t i, const P &p)'
** that computes output element i from the parameters 'p' (pointers and
** index maps); the launcher (kernels.cu: a grid-stride __global__ loop,
** host.cpp: a plain loop) runs it for every i in [0, n).
*/
#ifndef LTF_CU_COMMON_CUH
#define LTF_CU_COMMON_CUH

#if defined(__CUDACC_RTC__)
/* NVRTC: no system headers; the math functions are built in */
typedef signed char        int8_t;
typedef unsigned char      uint8_t;
typedef unsigned short     uint16_t;
typedef int                int32_t;
typedef unsigned int       uint32_t;
typedef long long          int64_t;
typedef unsigned long long uint64_t;
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define UINT8_MAX 255
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fffffff)
#else
#include <stdint.h>
#include <string.h>
#include <math.h>
#endif

#if defined(__CUDACC__)
#define LTF_HD __host__ __device__ __forceinline__
#define LTF_DEV_ONLY 1
#else
#define LTF_HD inline
#endif

#ifndef LTF_MAX_RANK
#define LTF_MAX_RANK 8
#endif

namespace ltf_cu {

/* {==== Index maps: an output's linear index to an input's element offset */
/* An input of an N-d broadcast: 'strides' (elements, 0 = broadcast) over the
** collapsed output dims 'dims'. kind 0: offset = i (same shape), 1: offset
** 0 (one element), 2: the general map. */
struct Bcast {
    int rank;
    int kind[3];
    int64_t dims[LTF_MAX_RANK];
    int64_t st[3][LTF_MAX_RANK];
};

LTF_HD int64_t bcast_offset(const Bcast &b, int k, int64_t i) {
    if (b.kind[k] == 0) return i;
    if (b.kind[k] == 1) return 0;
    int64_t off = 0;
    for (int d = b.rank - 1; d >= 0; d--) {
        int64_t q = i / b.dims[d];
        off += (i - q * b.dims[d]) * b.st[k][d];
        i = q;
    }
    return off;
}

/* A row-major shape's strided view: offset of output index i when the
** output has dims 'dims' and each output dim steps 'st' input elements. */
struct Strided {
    int rank;
    int64_t base;
    int64_t dims[LTF_MAX_RANK];
    int64_t st[LTF_MAX_RANK];
};

LTF_HD int64_t strided_offset(const Strided &s, int64_t i) {
    if (s.rank == 1) return s.base + i * s.st[0];   /* the common case: no division */
    int64_t off = s.base;
    for (int d = s.rank - 1; d >= 0; d--) {
        int64_t q = i / s.dims[d];
        off += (i - q * s.dims[d]) * s.st[d];
        i = q;
    }
    return off;
}
/* }==== */

/* {==== float16 / bfloat16: storage types (a 16-bit pattern each) and
** their conversions, core/half.h's algorithm in C++ (plain bit
** manipulation: no cuda_fp16.h, so nvcc, NVRTC and a host compiler build
** the same text and round alike: to nearest even, overflow to infinity,
** NaN kept). Bodies compute them in float: Acc<T> is the type T computes
** in, ldv() widens an element to it, stv<T>() rounds a result back. */
LTF_HD uint64_t double_bits(double x) {
#if defined(__CUDA_ARCH__)
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}
LTF_HD float bits_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
#endif
}

/* The pattern nearest to 'x' with 'ebits' exponent and 'mbits' mantissa bits. */
LTF_HD uint16_t half_narrow(double x, int ebits, int mbits) {
    uint64_t b = double_bits(x);
    uint32_t sign = (uint32_t)(b >> 63) << (ebits + mbits), expmax = (1u << ebits) - 1;
    b &= ~((uint64_t)1 << 63);
    if (b >= (uint64_t)0x7ff << 52) {
        if (b == (uint64_t)0x7ff << 52) return (uint16_t)(sign | (expmax << mbits));
        uint32_t payload = (uint32_t)(b >> (52 - mbits)) & ((1u << mbits) - 1);
        return (uint16_t)(sign | (expmax << mbits) | (1u << (mbits - 1)) | payload);
    }
    int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias;
    int e = (int)(b >> 52) - 1023;
    if (e < emin - mbits - 1) return (uint16_t)sign;
    uint64_t mant = (b & (((uint64_t)1 << 52) - 1)) | ((uint64_t)1 << 52);
    int shift = 52 - mbits + (e < emin ? emin - e : 0);
    uint64_t q = mant >> shift, rem = mant & (((uint64_t)1 << shift) - 1), half = (uint64_t)1 << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    uint64_t bits = e >= emin ? ((uint64_t)(e + bias - 1) << mbits) + q : q;
    if (bits >= (uint64_t)expmax << mbits) return (uint16_t)(sign | (expmax << mbits));
    return (uint16_t)(sign | (uint32_t)bits);
}

LTF_HD float f16_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
    if (e == 0x1f) bits = sign | 0x7f800000u | (m << 13);
    else if (e != 0) bits = sign | ((e + 112) << 23) | (m << 13);
    else if (m == 0) bits = sign;
    else {
        e = 113;
        while (!(m & 0x400u)) { m <<= 1; e--; }
        bits = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
    return bits_float(bits);
}
LTF_HD float bf16_float(uint16_t h) { return bits_float((uint32_t)h << 16); }

/* The storage types. Zero when default-built (so E() is 0 as for numbers);
** an explicit conversion from a number rounds ((T)1, (T)acc in generic
** bodies), an explicit one to float or double widens; no arithmetic or comparison of
** their own: bodies compute on ldv() values. */
struct f16_t {
    uint16_t bits;
    LTF_HD f16_t() : bits(0) {}
    LTF_HD explicit f16_t(double v) : bits(half_narrow(v, 5, 10)) {}
    LTF_HD explicit operator float() const { return f16_float(bits); }
    LTF_HD explicit operator double() const { return f16_float(bits); }
};
struct bf16_t {
    uint16_t bits;
    LTF_HD bf16_t() : bits(0) {}
    LTF_HD explicit bf16_t(double v) : bits(half_narrow(v, 8, 7)) {}
    LTF_HD explicit operator float() const { return bf16_float(bits); }
    LTF_HD explicit operator double() const { return bf16_float(bits); }
};

template <class T> struct Acc { typedef T t; };
template <> struct Acc<f16_t> { typedef float t; };
template <> struct Acc<bf16_t> { typedef float t; };
template <class T> LTF_HD T ldv(T x) { return x; }
LTF_HD float ldv(f16_t x) { return f16_float(x.bits); }
LTF_HD float ldv(bf16_t x) { return bf16_float(x.bits); }
template <class T> LTF_HD T stv(typename Acc<T>::t v) { return v; }
template <> LTF_HD f16_t stv<f16_t>(float v) { f16_t h; h.bits = half_narrow(v, 5, 10); return h; }
template <> LTF_HD bf16_t stv<bf16_t>(float v) { bf16_t h; h.bits = half_narrow(v, 8, 7); return h; }
/* From a double (float64 and integer casts), rounded once. */
template <class T> LTF_HD T stv_d(double v) { return (T)v; }
template <> LTF_HD f16_t stv_d<f16_t>(double v) { f16_t h; h.bits = half_narrow(v, 5, 10); return h; }
template <> LTF_HD bf16_t stv_d<bf16_t>(double v) { bf16_t h; h.bits = half_narrow(v, 8, 7); return h; }
/* }==== */

/* {==== Errors found inside a kernel: integer division by zero, a negative
** integer power, an index out of range. The body stores a code into
** '*flag' (any writer wins; all write the same kind for one launch); the
** launcher or the next sync reports it. */
enum { ERR_NONE = 0, ERR_DIV_ZERO = 1, ERR_NEG_POW = 2, ERR_INDEX = 3 };
/* the factorizations' (linalg.cuh), numbered apart */
enum { ERR_CHOLESKY = 40, ERR_INV_SINGULAR = 41, ERR_SOLVE_SINGULAR = 42, ERR_EIGH = 43, ERR_SVD = 44 };

LTF_HD void raise_flag(int *flag, int code) {
#if defined(__CUDA_ARCH__)
    atomicExch(flag, code);
#else
    *flag = code;
#endif
}
/* }==== */

}  // namespace ltf_cu

#endif
