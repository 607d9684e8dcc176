/*
** cuda/kernels/movement.cuh: ops that move elements: a strided read
** (transpose, slice, strided_slice, reverse: each output index reads the
** input element its index map names), slabs (concat/stack: each input
** written into its slab of the output), gather with 1-based indices.
** Bodies copy elements of E bytes (E = uint8_t, uint32_t, uint64_t).
*/
#ifndef LTF_CU_MOVEMENT_CUH
#define LTF_CU_MOVEMENT_CUH

#include "common.cuh"

namespace ltf_cu {

/* out[i] = x[map(i)] */
template <class E> struct GatherNdP {
    const E *x;
    E *o;
    Strided map;
};
template <class E> struct StridedReadF {
    static LTF_HD void at(int64_t i, const GatherNdP<E> &p) { p.o[i] = p.x[strided_offset(p.map, i)]; }
};
/* out[map(i)] = x[i]: a contiguous part written into a slab of the whole */
template <class E> struct StridedWriteF {
    static LTF_HD void at(int64_t i, const GatherNdP<E> &p) { p.o[strided_offset(p.map, i)] = p.x[i]; }
};

/* gather(params, indices, axis, batch_dims): output (B, O, J, inner) reads
** params (B, O, N, inner) at index v = indices[b, j] - 1 (1-based; out of
** range raises ERR_INDEX and writes zero). */
template <class E, class I> struct GatherP {
    const E *params;
    const I *idx;
    E *o;
    int64_t O, N, J, inner;
    int *flag;
};
template <class E, class I> struct GatherF {
    static LTF_HD void at(int64_t i, const GatherP<E, I> &p) {
        int64_t u = i / p.inner, c = i - u * p.inner;
        int64_t t = u / p.J, jj = u - t * p.J;    /* t = batch * O + outer */
        int64_t bb = t / p.O;
        int64_t v = (int64_t)p.idx[bb * p.J + jj] - 1;
        if (v < 0 || v >= p.N) { raise_flag(p.flag, ERR_INDEX); p.o[i] = 0; return; }
        p.o[i] = p.params[(t * p.N + v) * p.inner + c];
    }
};

}  // namespace ltf_cu

#endif
