/*
** cuda/kernels/half.cuh: which device kernels take float16/bfloat16 as
** they are (takes_half<E>, ltf_backend.takes_half). The storage types,
** conversions and Acc/ldv/stv live in common.cuh; the kernels themselves
** dispatch the half types through LTF_CU_BY_DTYPE (ops.cuh) and compute in
** float. kernels.cu and host.cpp include this header (it includes ops.cuh).
*/
#ifndef LTF_CU_HALF_CUH
#define LTF_CU_HALF_CUH

#include "ops.cuh"

namespace ltf_cu {

/* Whether kernel_for<E>(op) takes float16/bfloat16 tensors as they are:
** the elementwise ops, casts and fills, reductions, softmax and the
** cross-entropies, matmul, the moves and the optimizer updates. The others
** (scans, conv2d and the pools, gelu, segment sums, range/linspace) run on
** float32 copies the engine makes with this module's cast kernel
** (ltf_backend.takes_half, core/half.c). */
template <class E> int takes_half(int op) {
    const void *k = kernel_for<E>(op);
    const void *const native[] = {
        (const void *)&k_unary<E>, (const void *)&k_binary<E>, (const void *)&k_copy<E>,
        (const void *)&k_fill_like<E>, (const void *)&k_cast<E>, (const void *)&k_select<E>,
        (const void *)&k_reduce<E>, (const void *)&k_sum_to<E>, (const void *)&k_arg<E>,
        (const void *)&k_softmax<E>, (const void *)&k_sparse_xent<E>, (const void *)&k_xent<E>,
        (const void *)&k_matmul<E>, (const void *)&k_transpose<E>, (const void *)&k_slice<E>,
        (const void *)&k_concat<E>, (const void *)&k_gather<E>, (const void *)&k_reverse<E>,
        (const void *)&k_fill<E>, (const void *)&k_broadcast_to<E>, (const void *)&k_split<E>,
        (const void *)&k_pad_tile<E>, (const void *)&k_one_hot<E>, (const void *)&k_optim<E>,
        (const void *)&k_strided_slice<E>, (const void *)&k_strided_slice_grad<E>, (const void *)&k_eye<E>,
    };
    if (!k) return 0;
    for (const void *n : native)
        if (k == n) return 1;
    return 0;
}

}  // namespace ltf_cu

#endif
