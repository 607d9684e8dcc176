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

/* pad and tile: output coordinate c along dim d reads input coordinate
** u = c - before[d] mapped by mode[d]: PT_CONST (outside [0, n): the
** constant, 'cval' or zero), PT_REFLECT (-u, 2(n-1)-u), PT_SYMMETRIC
** (-u-1, 2n-1-u), PT_TILE (u mod n, before 0). */
enum { PT_CONST, PT_REFLECT, PT_SYMMETRIC, PT_TILE };
template <class E> struct PadTileP {
    const E *x;
    E *o;
    const E *cval;
    int rank;
    int mode;
    int64_t odims[LTF_MAX_RANK], before[LTF_MAX_RANK], n[LTF_MAX_RANK], st[LTF_MAX_RANK];
};
template <class E> struct PadTileF {
    static LTF_HD void at(int64_t i, const PadTileP<E> &p) {
        int64_t off = 0, r = i;
        for (int d = p.rank - 1; d >= 0; d--) {
            int64_t q = r / p.odims[d], c = r - q * p.odims[d], n = p.n[d];
            r = q;
            int64_t u = c - p.before[d];
            switch (p.mode) {
            case PT_TILE: u = c % n; break;
            case PT_REFLECT: u = u < 0 ? -u : (u >= n ? 2 * (n - 1) - u : u); break;
            case PT_SYMMETRIC: u = u < 0 ? -u - 1 : (u >= n ? 2 * n - 1 - u : u); break;
            default:
                if (u < 0 || u >= n) {
                    p.o[i] = p.cval ? *p.cval : (E)0;
                    return;
                }
            }
            off += u * p.st[d];
        }
        p.o[i] = p.x[off];
    }
};

/* one_hot(indices, on, off): output (O, depth, I) from indices (O, I),
** 1-based: position v - 1 of each line is 'on', the others 'off' */
template <class E, class I> struct OneHotP {
    const I *idx;
    const E *on, *off;
    E *o;
    int64_t depth, inner;
};
template <class E, class I> struct OneHotF {
    static LTF_HD void at(int64_t i, const OneHotP<E, I> &p) {
        int64_t c = i % p.inner, t = i / p.inner;
        int64_t k = t % p.depth, r = t / p.depth;
        int64_t v = (int64_t)p.idx[r * p.inner + c];
        p.o[i] = v - 1 == k ? *p.on : *p.off;
    }
};

/* unsorted_segment_sum: output (B*O, N, inner) from data (B*O, J, inner) and
** ids (B, J), 1-based (negative: dropped; 0 or above N raises ERR_INDEX).
** Each output element adds its ids' rows in order (cpu/movement.c's order,
** no atomics); U: the accumulator (unsigned for integers: sums wrap). */
template <class T, class U, class I> struct SegSumP {
    const T *data;
    const I *ids;
    T *o;
    int64_t O, J, N, inner;
    int *flag;
};
template <class T, class U, class I> struct SegSumF {
    static LTF_HD void at(int64_t i, const SegSumP<T, U, I> &p) {
        int64_t c = i % p.inner, u = i / p.inner;
        int64_t seg = u % p.N, t = u / p.N, bb = t / p.O;
        U acc = 0;
        for (int64_t j = 0; j < p.J; j++) {
            int64_t v = (int64_t)p.ids[bb * p.J + j];
            if (v == 0 || v > p.N) raise_flag(p.flag, ERR_INDEX);
            if (v - 1 == seg) acc = (U)(acc + (U)p.data[(t * p.J + j) * p.inner + c]);
        }
        p.o[i] = (T)acc;
    }
};

/* {==== Constructors (cpu/init_ops.c) */
/* a + b and a * b rounded once each (no fused multiply-add on the device,
** so float ranges round as on the CPU) */
LTF_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}
LTF_HD double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}
LTF_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
LTF_HD double mul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

/* range and linspace: o[k] = s + k * d (linspace: the last one 'last') */
template <class T> struct RangeP {
    T *o;
    T s, d, last;
    int64_t n;                 /* linspace: the count; range: 0 */
};
template <class T> struct RangeF {
    static LTF_HD void at(int64_t i, const RangeP<T> &p) {
        p.o[i] = p.n > 0 && i == p.n - 1 ? p.last : add_rn(p.s, mul_rn((T)i, p.d));
    }
};
/* integer ranges in unsigned arithmetic (start + k * delta fits; the
** intermediate need not) */
template <class T> struct IRangeP {
    T *o;
    uint64_t s, d;
};
template <class T> struct IRangeF {
    static LTF_HD void at(int64_t i, const IRangeP<T> &p) { p.o[i] = (T)(int64_t)(p.s + (uint64_t)i * p.d); }
};
/* eye: ones on the main diagonal of each (rows, cols) matrix */
template <class E> struct EyeP {
    E *o;
    E one;
    int64_t cols, per;
};
template <class E> struct EyeF {
    static LTF_HD void at(int64_t i, const EyeP<E> &p) {
        int64_t k = i % p.per;
        p.o[i] = k / p.cols == k % p.cols ? p.one : E();
    }
};
/* }==== */

}  // namespace ltf_cu

#endif
