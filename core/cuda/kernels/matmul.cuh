/*
** cuda/kernels/matmul.cuh: a matrix product element by element, for what
** cuBLAS does not cover (integer dtypes, wrapping as cpu/matmul.c) and for
** the host build of the kernels (libltf_gpu_host.a). Float matmuls on the
** GPU go to cuBLAS (kernels.cu). Batch dims broadcast through 'ab'/'bb'
** (matrix offsets per output batch).
*/
#ifndef LTF_CU_MATMUL_CUH
#define LTF_CU_MATMUL_CUH

#include "elementwise.cuh"

namespace ltf_cu {

template <class T> struct MatmulP {
    const T *a, *b;
    T *c;
    int64_t m, n, k;
    int ta, tb;
    Strided ab, bb;    /* output batch index -> element offset of its a / b matrix */
};
template <class T> struct AccOf { typedef T t; };
template <> struct AccOf<int32_t> { typedef uint32_t t; };
template <> struct AccOf<int64_t> { typedef uint64_t t; };
template <> struct AccOf<f16_t> { typedef float t; };    /* float16/bfloat16: float sums, rounded once */
template <> struct AccOf<bf16_t> { typedef float t; };

template <class T> struct MatmulF {
    static LTF_HD void at(int64_t e, const MatmulP<T> &p) {
        typedef typename AccOf<T>::t A;
        int64_t mn = p.m * p.n, bi = e / mn, r = e - bi * mn, i = r / p.n, j = r - i * p.n;
        const T *a = p.a + strided_offset(p.ab, bi), *b = p.b + strided_offset(p.bb, bi);
        A acc = 0;
        for (int64_t q = 0; q < p.k; q++) {
            T x = p.ta ? a[q * p.m + i] : a[i * p.k + q];
            T y = p.tb ? b[j * p.k + q] : b[q * p.n + j];
            acc += (A)ldv(x) * (A)ldv(y);
        }
        p.c[e] = stv<T>((typename Acc<T>::t)acc);
    }
};

}  // namespace ltf_cu

#endif
