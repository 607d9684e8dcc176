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
