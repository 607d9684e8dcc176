/*
** cuda/kernels/ops.cuh: the host side of every device kernel: reads the op's
** tensors and attributes (as cpu/ does), plans index maps, checks dtypes
** and raises the same errors, then runs the bodies of the other headers
** through an executor 'E'. Two executors include this file:
**   kernels.cu  CudaExec: grid-stride launches on the device's stream,
**               cuBLAS for float matmuls (libltf_cuda.so);
**   host.cpp    HostExec: a plain loop over every index on host memory
**               (libltf_gpu_host.a: tests, the simulated GPU).
** sort.cuh and random.cuh hold their families' bodies and host sides
** (included below, after the helpers they use).
** An executor provides: E(ctx, name) with status(); run<F>(n, p);
** alloc/release (scratch), scratch_budget() (bytes of scratch a kernel
** may take at once), copy (within the device), zero, read (device bytes to
** the host, waiting for them), flag() (an int the bodies raise errors into)
** and check() (reports a raised flag now, or leaves it to the next sync),
** gemm (float matmuls, optionally adding into C; UNIMPLEMENTED: use the
** element-by-element body).
**
** Host C++ only (never compiled for the device). The module cannot call the
** engine's internal functions (it is loaded with dlopen beside it), so
** errors are written into the context here, as ltf_fail does.
*/
#ifndef LTF_CU_OPS_CUH
#define LTF_CU_OPS_CUH

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
extern "C" {
#include "../../op.h"
#include "../../variable.h"
}
#include "elementwise.cuh"
#include "reduce.cuh"
#include "nn.cuh"
#include "movement.cuh"
#include "matmul.cuh"
#include "optim.cuh"
#include "conv.cuh"

namespace ltf_cu {

/* {==== Helpers */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
inline ltf_status fail(ltf_ctx *ctx, ltf_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->errmsg, sizeof ctx->errmsg, fmt, ap);
    va_end(ap);
    ctx->last_status = code;
    return code;
}

/* Element bytes of a dtype a device tensor may have; 0 for string, resource */
inline size_t dsize(int dt) {
    static const size_t s[] = { 4, 8, 4, 8, 1, 1, 0, 0, 2, 2 };   /* ORDER DTYPE */
    return dt >= 0 && dt <= DT_BF16 ? s[dt] : 0;
}
inline const char *dname(int dt) {
    static const char *const n[] = { "float32", "float64", "int32", "int64", "uint8", "bool", "string", "resource",
                                     "float16", "bfloat16" };
    return dt >= 0 && dt <= DT_BF16 ? n[dt] : "?";
}
inline ltf_status bad_dtype(ltf_ctx *ctx, const ltf_op_def *def, int dt) {
    return fail(ctx, LTF_ERR_TYPE, "%s: unsupported dtype %s", def->name, dname(dt));
}
template <class T> inline T *ptr(const ltf_tensor *t) { return (T *)LTF_DATA(t); }

inline void contiguous(int rank, const int64_t *dims, int64_t *st) {
    int64_t s = 1;
    for (int k = rank - 1; k >= 0; k--) { st[k] = s; s *= dims[k] > 0 ? dims[k] : 1; }
}
inline int norm_axis(int64_t ax, int rank) { return (int)(ax < 0 ? ax + rank : ax); }
inline long long axis_user(int64_t ax) { return (long long)(ax >= 0 ? ax + 1 : ax); }

/* Index maps of 'nin' inputs broadcast to out's shape: size-1 output dims
** dropped, neighbours merged where every input is contiguous across them. */
inline void plan_bcast(Bcast &b, ltf_tensor *const *in, int nin, const ltf_tensor *out) {
    int64_t st[3][LTF_MAX_RANK];
    for (int k = 0; k < nin; k++) {
        const ltf_tensor *x = in[k];
        int64_t s = 1;
        for (int d = out->rank - 1; d >= 0; d--) {
            int xd = d - (out->rank - x->rank);
            if (xd < 0) { st[k][d] = 0; continue; }
            st[k][d] = x->dims[xd] == 1 ? 0 : s;
            s *= x->dims[xd];
        }
        b.kind[k] = x->numel == out->numel ? 0 : (x->numel == 1 ? 1 : 2);
    }
    b.rank = 0;
    for (int d = 0; d < out->rank; d++) {
        if (out->dims[d] == 1) continue;
        int r = b.rank;
        if (r > 0) {
            bool merge = true;
            for (int k = 0; k < nin; k++)
                if (b.st[k][r - 1] != st[k][d] * out->dims[d]) merge = false;
            if (merge) {
                b.dims[r - 1] *= out->dims[d];
                for (int k = 0; k < nin; k++) b.st[k][r - 1] = st[k][d];
                continue;
            }
        }
        b.dims[r] = out->dims[d];
        for (int k = 0; k < nin; k++) b.st[k][r] = st[k][d];
        b.rank++;
    }
    if (b.rank == 0) {
        b.rank = 1;
        b.dims[0] = 1;
        for (int k = 0; k < nin; k++) b.st[k][0] = 0;
    }
}

/* Report a flag raised by the bodies (executors that check at once). */
inline ltf_status flag_error(ltf_ctx *ctx, const char *op, int code) {
    switch (code) {
    case ERR_DIV_ZERO: return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: integer division by zero", op);
    case ERR_NEG_POW:
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: integers to negative integer powers are not allowed", op);
    case ERR_INDEX:
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: an index is out of range (indices are 1-based)", op);
    /* linalg.cuh: cpu/linalg.c's messages */
    case ERR_CHOLESKY:
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                    "%s: Cholesky decomposition was not successful. The input might not be valid.", op);
    case ERR_INV_SINGULAR: return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: Input is not invertible.", op);
    case ERR_SOLVE_SINGULAR: return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: Input matrix is not invertible.", op);
    case ERR_EIGH:
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                    "%s: Eigen decomposition was not successful. The input might not be valid.", op);
    case ERR_SVD:
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: SVD did not converge. The input might not be valid.", op);
    default: return LTF_OK;
    }
}
/* }==== */

#define LTF_CU_KERNEL(name) \
    template <class E> ltf_status name(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin, \
                                       const ltf_attrs *a, ltf_tensor **out, int nout)
#define LTF_CU_UNUSED (void)nin; (void)a; (void)nout; (void)in

/* Dispatch on a dtype: 'M(T)' for each numeric dtype, bool (as uint8_t)
** and float16/bfloat16 (f16_t, bf16_t: common.cuh). */
#define LTF_CU_BY_DTYPE(dt, M)                                 \
    switch (dt) {                                              \
    case DT_F32: { M(float) } break;                           \
    case DT_F64: { M(double) } break;                          \
    case DT_I32: { M(int32_t) } break;                         \
    case DT_I64: { M(int64_t) } break;                         \
    case DT_U8: case DT_BOOL: { M(uint8_t) } break;            \
    case DT_F16: { M(f16_t) } break;                           \
    case DT_BF16: { M(bf16_t) } break;                         \
    default: break;                                            \
    }
/* Dispatch on an element size (moves and selects). */
#define LTF_CU_BY_SIZE(es, M)                                  \
    switch (es) {                                              \
    case 1: { M(uint8_t) } break;                              \
    case 2: { M(uint16_t) } break;                             \
    case 4: { M(uint32_t) } break;                             \
    case 8: { M(uint64_t) } break;                             \
    default: break;                                            \
    }

/* {==== Elementwise */
LTF_CU_KERNEL(k_unary) {
    LTF_CU_UNUSED;
    int dt = in[0]->dtype;
    if (!unary_ok(def->code, dt)) return bad_dtype(ctx, def, dt);
    int64_t n = out[0]->numel;
    if (n == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
#define M(T) { UnaryP<T> p = { ptr<T>(in[0]), LTF_DATA(out[0]), def->code }; return e.template run<UnaryF<T> >(n, p); }
    LTF_CU_BY_DTYPE(dt, M)
#undef M
    return bad_dtype(ctx, def, dt);
}

LTF_CU_KERNEL(k_binary) {
    LTF_CU_UNUSED;
    int dt = in[0]->dtype;
    if (!binary_ok(def->code, dt)) return bad_dtype(ctx, def, dt);
    int64_t n = out[0]->numel;
    if (n == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    Bcast bc;
    plan_bcast(bc, in, 2, out[0]);
    ltf_status st = LTF_OK;
#define M(T) { BinaryP<T> p = { ptr<T>(in[0]), ptr<T>(in[1]), LTF_DATA(out[0]), def->code, e.flag(), bc }; \
               st = e.template run<BinaryF<T> >(n, p); }
    LTF_CU_BY_DTYPE(dt, M)
#undef M
    return st != LTF_OK ? st : e.check();
}

LTF_CU_KERNEL(k_copy) {
    LTF_CU_UNUSED;
    if (out[0]->storage == in[0]->storage && out[0]->offset == in[0]->offset) return LTF_OK;
    size_t nbytes = (size_t)out[0]->numel * dsize(out[0]->dtype);
    if (nbytes == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return e.copy(LTF_DATA(out[0]), LTF_DATA(in[0]), nbytes);
}

template <class E, class F, class TO>
ltf_status cast_to(E &e, const ltf_tensor *x, ltf_tensor *o, int to_bool) {
    CastP<F, TO> p = { ptr<F>(x), ptr<TO>(o), to_bool };
    return e.template run<CastF<F, TO> >(o->numel, p);
}
template <class E, class F> ltf_status cast_from(E &e, const ltf_tensor *x, ltf_tensor *o, int to_bool) {
    switch (o->dtype) {
    case DT_F32: return cast_to<E, F, float>(e, x, o, to_bool);
    case DT_F64: return cast_to<E, F, double>(e, x, o, to_bool);
    case DT_I32: return cast_to<E, F, int32_t>(e, x, o, to_bool);
    case DT_I64: return cast_to<E, F, int64_t>(e, x, o, to_bool);
    case DT_F16: return cast_to<E, F, f16_t>(e, x, o, to_bool);
    case DT_BF16: return cast_to<E, F, bf16_t>(e, x, o, to_bool);
    default: return cast_to<E, F, uint8_t>(e, x, o, to_bool);
    }
}
LTF_CU_KERNEL(k_cast) {
    int from = in[0]->dtype, to = out[0]->dtype;
    if (from == to) return k_copy<E>(ctx, def, in, nin, a, out, nout);
    if (dsize(from) == 0 || dsize(to) == 0)
        return fail(ctx, LTF_ERR_TYPE, "cast: cannot cast %s to %s", dname(from), dname(to));
    if (out[0]->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    /* to bool: x != 0; bool to uint8 too (the CPU's table) */
    int to_bool = to == DT_BOOL || (from == DT_BOOL && to == DT_U8);
#define M(T) return cast_from<E, T>(e, in[0], out[0], to_bool);
    LTF_CU_BY_DTYPE(from, M)
#undef M
    return LTF_OK;
}

LTF_CU_KERNEL(k_select) {
    LTF_CU_UNUSED;
    size_t es = dsize(out[0]->dtype);
    if (es == 0) return bad_dtype(ctx, def, out[0]->dtype);
    int64_t n = out[0]->numel;
    if (n == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    Bcast bc;
    plan_bcast(bc, in, 3, out[0]);
#define M(T) { SelectP<T> p = { ptr<uint8_t>(in[0]), ptr<T>(in[1]), ptr<T>(in[2]), ptr<T>(out[0]), bc }; \
               return e.template run<SelectF<T> >(n, p); }
    LTF_CU_BY_SIZE(es, M)
#undef M
    return LTF_OK;
}

/* zeros_like (code 0), ones_like (code 1) */
LTF_CU_KERNEL(k_fill_like) {
    LTF_CU_UNUSED;
    int dt = out[0]->dtype;
    int64_t n = out[0]->numel;
    if (dsize(dt) == 0) return bad_dtype(ctx, def, dt);
    if (n == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (def->code == 0) return e.zero(LTF_DATA(out[0]), (size_t)n * dsize(dt));
#define M(T) { FillP<T> p = { ptr<T>(out[0]), stv<T>(1) }; return e.template run<FillF<T> >(n, p); }
    LTF_CU_BY_DTYPE(dt, M)
#undef M
    return LTF_OK;
}
/* }==== */

/* {==== Reductions */
template <class E, class T, int OP>
ltf_status reduce_run(E &e, const ltf_tensor *x, ltf_tensor *y, const Strided &kept, const Strided &red,
                      int part_major) {
    typedef typename Red<T, OP>::A A;
    ReduceP<T, OP> p;
    p.x = ptr<T>(x);
    p.o = ptr<T>(y);
    p.part = NULL;
    p.kept = kept;
    p.red = red;
    p.nout = y->numel;
    p.count = x->numel / y->numel;
    p.part_major = part_major;
    /* enough indices to fill a large GPU; the same partition on the host */
    const int64_t target = (int64_t)1 << 18;
    int64_t parts = 1;
    if (p.count >= 64 && p.nout < target) {
        parts = p.count / 32;
        if (parts > target / p.nout) parts = target / p.nout;
        if (parts > 1024) parts = 1024;
        if (parts < 1) parts = 1;
    }
    p.parts = parts;
    if (parts == 1) return e.template run<ReduceF<T, OP> >(p.nout, p);
    size_t bytes = (size_t)(p.nout * parts) * sizeof(A);
    p.part = (A *)e.alloc(bytes);
    if (!p.part) return e.status();
    ltf_status st = e.template run<ReduceF<T, OP> >(p.nout * parts, p);
    if (st == LTF_OK) st = e.template run<ReduceFinF<T, OP> >(p.nout, p);
    e.release(p.part, bytes);
    return st;
}

/* Reduce 'x' over the axes flagged in 'reduced' into 'y' (op: RED_*). */
template <class E>
ltf_status reduce_axes(E &e, ltf_ctx *ctx, const ltf_op_def *def, int op, const ltf_tensor *x, ltf_tensor *y,
                       const int *reduced) {
    int dt = x->dtype;
    bool ok = op >= RED_ALL ? dt == DT_BOOL : (dt != DT_BOOL && dsize(dt) != 0);
    if (!ok) return bad_dtype(ctx, def, dt);
    if (y->numel == 0) return LTF_OK;
    /* runs of reduced / kept dims (size-1 dims dropped), contiguous strides */
    int m = 0, flag[LTF_MAX_RANK];
    int64_t dim[LTF_MAX_RANK], stride[LTF_MAX_RANK];
    for (int d = 0; d < x->rank; d++) {
        if (x->dims[d] == 1) continue;
        if (m > 0 && flag[m - 1] == reduced[d]) dim[m - 1] *= x->dims[d];
        else { dim[m] = x->dims[d]; flag[m++] = reduced[d]; }
    }
    int64_t s = 1;
    for (int k = m - 1; k >= 0; k--) { stride[k] = s; s *= dim[k] > 0 ? dim[k] : 1; }
    Strided kept, red;
    kept.rank = red.rank = 0;
    kept.base = red.base = 0;
    for (int k = 0; k < m; k++) {
        Strided &t = flag[k] ? red : kept;
        t.dims[t.rank] = dim[k];
        t.st[t.rank++] = stride[k];
    }
    int part_major = m > 0 && !flag[m - 1];
#define R(T, OP) return reduce_run<E, T, OP>(e, x, y, kept, red, part_major);
#define M(T) switch (op) { case RED_SUM: R(T, RED_SUM) case RED_MEAN: R(T, RED_MEAN) \
                          case RED_MAX: R(T, RED_MAX) case RED_MIN: R(T, RED_MIN) default: R(T, RED_PROD) }
    if (op == RED_ALL) return reduce_run<E, uint8_t, RED_ALL>(e, x, y, kept, red, part_major);
    if (op == RED_ANY) return reduce_run<E, uint8_t, RED_ANY>(e, x, y, kept, red, part_major);
    switch (dt) {
    case DT_F32: M(float)
    case DT_F64: M(double)
    case DT_I32: M(int32_t)
    case DT_I64: M(int64_t)
    case DT_F16: M(f16_t)
    case DT_BF16: M(bf16_t)
    default: M(uint8_t)
    }
#undef M
#undef R
}

LTF_CU_KERNEL(k_reduce) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    int reduced[LTF_MAX_RANK] = {0};
    if (a->nints < 0)
        for (int d = 0; d < x->rank; d++) reduced[d] = 1;
    for (int i = 0; i < a->nints; i++) {
        int64_t ax = a->ints[i] < 0 ? a->ints[i] + x->rank : a->ints[i];
        if (ax < 0 || ax >= x->rank)
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' %lld is out of range for rank %d", def->name,
                        axis_user(a->ints[i]), x->rank);
        reduced[ax] = 1;
    }
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return reduce_axes(e, ctx, def, def->code - LTF_OP_REDUCE_SUM, x, out[0], reduced);
}

/* sum_to(g, x): g summed over its leading dims and where x has 1 */
LTF_CU_KERNEL(k_sum_to) {
    LTF_CU_UNUSED;
    const ltf_tensor *g = in[0];
    ltf_tensor *o = out[0];
    int reduced[LTF_MAX_RANK] = {0};
    int lead = g->rank - o->rank;
    for (int k = 0; k < g->rank; k++) reduced[k] = k < lead || (o->dims[k - lead] == 1 && g->dims[k] != 1);
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return reduce_axes(e, ctx, def, RED_SUM, g, o, reduced);
}

LTF_CU_KERNEL(k_arg) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    int dt = x->dtype;
    if (dsize(dt) == 0) return bad_dtype(ctx, def, dt);
    int ax = norm_axis(a->i[1], x->rank);
    if (ax < 0 || ax >= x->rank)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' %lld is out of range for rank %d", def->name,
                    axis_user(a->i[1]), x->rank);
    if (out[0]->numel == 0) return LTF_OK;
    if (x->dims[ax] == 0)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' %lld has length 0", def->name, axis_user(a->i[1]));
    int64_t inner = 1;
    for (int d = ax + 1; d < x->rank; d++) inner *= x->dims[d];
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
#define M(T) { ArgP<T> p = { ptr<T>(x), LTF_DATA(out[0]), x->dims[ax], inner, def->code == LTF_OP_ARGMAX, \
                             out[0]->dtype == LTF_DTYPE_INT64 }; \
               return e.template run<ArgF<T> >(out[0]->numel, p); }
    LTF_CU_BY_DTYPE(dt, M)
#undef M
    return LTF_OK;
}
/* }==== */

/* {==== Neural-network ops */
static inline void split_axis(const ltf_tensor *t, int64_t axis, int64_t *outer, int64_t *len, int64_t *inner) {
    int ax = norm_axis(axis, t->rank);
    *outer = 1;
    *inner = 1;
    for (int i = 0; i < ax; i++) *outer *= t->dims[i];
    for (int i = ax + 1; i < t->rank; i++) *inner *= t->dims[i];
    *len = t->dims[ax];
}

template <class E, class T> ltf_status softmax_run(E &e, const ltf_tensor *x, ltf_tensor *y, int64_t axis, int log) {
    int64_t outer, len, inner;
    split_axis(x, axis, &outer, &len, &inner);
    int64_t lines = outer * inner;
    typedef typename Acc<T>::t A;
    size_t bytes = 2 * (size_t)lines * sizeof(A);
    A *s = (A *)e.alloc(bytes);
    if (!s) return e.status();
    SoftmaxP<T> p = { ptr<T>(x), ptr<T>(y), s, s + lines, len, inner, log };
    ltf_status st = e.template run<SoftmaxStatsF<T> >(lines, p);
    if (st == LTF_OK) st = e.template run<SoftmaxF<T> >(y->numel, p);
    e.release(s, bytes);
    return st;
}

/* softmax (code 0), log_softmax (code 1) */
LTF_CU_KERNEL(k_softmax) {
    LTF_CU_UNUSED;
    int dt = in[0]->dtype;
    if (dt != DT_F32 && dt != DT_F64 && !is_half_dt(dt)) return bad_dtype(ctx, def, dt);
    if (out[0]->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    switch (dt) {
    case DT_F32: return softmax_run<E, float>(e, in[0], out[0], a->i[0], def->code == 1);
    case DT_F16: return softmax_run<E, f16_t>(e, in[0], out[0], a->i[0], def->code == 1);
    case DT_BF16: return softmax_run<E, bf16_t>(e, in[0], out[0], a->i[0], def->code == 1);
    default: return softmax_run<E, double>(e, in[0], out[0], a->i[0], def->code == 1);
    }
}

LTF_CU_KERNEL(k_sparse_xent) {
    LTF_CU_UNUSED;
    const ltf_tensor *lab = in[0], *x = in[1];
    int dt = x->dtype;
    if (dt != DT_F32 && dt != DT_F64 && !is_half_dt(dt)) return bad_dtype(ctx, def, dt);
    if (lab->dtype != LTF_DTYPE_INT32 && lab->dtype != LTF_DTYPE_INT64) return bad_dtype(ctx, def, lab->dtype);
    int64_t lines = out[0]->numel, classes = x->dims[x->rank - 1];
    if (lines == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    ltf_status st;
#define RUN(T, L) { SparseXentP<T, L> p = { ptr<T>(x), ptr<L>(lab), ptr<T>(out[0]), classes, e.flag() }; \
                    st = e.template run<SparseXentF<T, L> >(lines, p); }
#define BY_LABEL(T) if (lab->dtype == LTF_DTYPE_INT32) RUN(T, int32_t) else RUN(T, int64_t)
    switch (dt) {
    case DT_F32: BY_LABEL(float) break;
    case DT_F16: BY_LABEL(f16_t) break;
    case DT_BF16: BY_LABEL(bf16_t) break;
    default: BY_LABEL(double) break;
    }
#undef BY_LABEL
#undef RUN
    return st != LTF_OK ? st : e.check();
}

LTF_CU_KERNEL(k_xent) {
    LTF_CU_UNUSED;
    const ltf_tensor *lab = in[0], *x = in[1];
    int dt = x->dtype;
    if (dt != DT_F32 && dt != DT_F64 && !is_half_dt(dt)) return bad_dtype(ctx, def, dt);
    if (out[0]->numel == 0) return LTF_OK;
    int64_t outer, len, inner;
    split_axis(x, a->i[0], &outer, &len, &inner);
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (len == 0) return e.zero(LTF_DATA(out[0]), (size_t)out[0]->numel * dsize(dt));
#define M(T) { XentP<T> p = { ptr<T>(x), ptr<T>(lab), ptr<T>(out[0]), len, inner }; \
               return e.template run<XentF<T> >(outer * inner, p); }
    switch (dt) {
    case DT_F32: M(float)
    case DT_F16: M(f16_t)
    case DT_BF16: M(bf16_t)
    default: M(double)
    }
#undef M
}
/* }==== */

/* {==== Matmul: cuBLAS for floats where the executor has it, else the body */
LTF_CU_KERNEL(k_matmul) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0], *y = in[1];
    ltf_tensor *o = out[0];
    int dt = o->dtype;
    if (dt != DT_F32 && dt != DT_F64 && dt != DT_I32 && dt != DT_I64 && !is_half_dt(dt)) return bad_dtype(ctx, def, dt);
    int ta = a->i[0] != 0, tb = a->i[1] != 0;
    int64_t m = x->dims[x->rank - 2 + ta], k = x->dims[x->rank - 1 - ta], n = y->dims[y->rank - 1 - tb];
    if (o->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (k == 0) return e.zero(LTF_DATA(o), (size_t)o->numel * dsize(dt));
    /* batch index maps: output batch -> matrix element offsets of a and b */
    int rb = o->rank - 2;
    MatmulP<char> dummy;
    Strided &ab = dummy.ab, &bb = dummy.bb;
    ab.rank = bb.rank = rb > 0 ? rb : 1;
    ab.base = bb.base = 0;
    ab.dims[0] = bb.dims[0] = 1;
    ab.st[0] = bb.st[0] = 0;
    int64_t sa = m * k, sb = k * n;
    for (int d = rb - 1; d >= 0; d--) {
        int xa = d - (rb - (x->rank - 2)), yb = d - (rb - (y->rank - 2));
        ab.dims[d] = bb.dims[d] = o->dims[d];
        ab.st[d] = xa >= 0 && x->dims[xa] != 1 ? sa : 0;
        bb.st[d] = yb >= 0 && y->dims[yb] != 1 ? sb : 0;
        if (xa >= 0) sa *= x->dims[xa];
        if (yb >= 0) sb *= y->dims[yb];
    }
    int64_t batch = o->numel / (m * n);
    if (dt == DT_F32 || dt == DT_F64 || is_half_dt(dt)) {
        /* one strided-batched call when each operand's batches are all or one */
        int64_t abatch = x->numel / (m * k), bbatch = y->numel / (k * n);
        if ((abatch == batch || abatch == 1) && (bbatch == batch || bbatch == 1)) {
            ltf_status st = e.gemm(dt, ta, tb, m, n, k, LTF_DATA(x), abatch == 1 ? 0 : m * k, LTF_DATA(y),
                                   bbatch == 1 ? 0 : k * n, LTF_DATA(o), m * n, batch);
            if (st != LTF_ERR_UNIMPLEMENTED) return st;
        } else {
            ltf_status st = LTF_OK;
            size_t es = dsize(dt);
            for (int64_t bi = 0; bi < batch && st == LTF_OK; bi++)
                st = e.gemm(dt, ta, tb, m, n, k, (char *)LTF_DATA(x) + (size_t)strided_offset(ab, bi) * es, 0,
                            (char *)LTF_DATA(y) + (size_t)strided_offset(bb, bi) * es, 0,
                            (char *)LTF_DATA(o) + (size_t)(bi * m * n) * es, 0, 1);
            if (st != LTF_ERR_UNIMPLEMENTED) return st;
        }
    }
#define M(T) { MatmulP<T> p = { ptr<T>(x), ptr<T>(y), ptr<T>(o), m, n, k, ta, tb, ab, bb }; \
               return e.template run<MatmulF<T> >(o->numel, p); }
    switch (dt) {
    case DT_F32: M(float)
    case DT_F64: M(double)
    case DT_I32: M(int32_t)
    case DT_F16: M(f16_t)
    case DT_BF16: M(bf16_t)
    default: M(int64_t)
    }
#undef M
}
/* }==== */

/* {==== Movement */
template <class E> ltf_status strided_read(E &e, const ltf_tensor *x, ltf_tensor *o, const Strided &map) {
#define M(T) { GatherNdP<T> p = { ptr<T>(x), ptr<T>(o), map }; return e.template run<StridedReadF<T> >(o->numel, p); }
    LTF_CU_BY_SIZE(dsize(o->dtype), M)
#undef M
    return LTF_OK;
}

LTF_CU_KERNEL(k_transpose) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    if (dsize(x->dtype) == 0) return bad_dtype(ctx, def, x->dtype);
    if (o->numel == 0) return LTF_OK;
    int r = x->rank;
    int64_t st[LTF_MAX_RANK];
    contiguous(r, x->dims, st);
    Strided map;
    map.base = 0;
    map.rank = r > 0 ? r : 1;
    map.dims[0] = 1;
    map.st[0] = 0;
    for (int k = 0; k < r; k++) {
        int p = a->nints >= 0 ? norm_axis(a->ints[k], r) : r - 1 - k;
        map.dims[k] = o->dims[k];
        map.st[k] = st[p];
    }
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return strided_read(e, x, o, map);
}

LTF_CU_KERNEL(k_slice) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    if (dsize(x->dtype) == 0) return bad_dtype(ctx, def, x->dtype);
    if (o->numel == 0) return LTF_OK;
    int64_t st[LTF_MAX_RANK];
    contiguous(x->rank, x->dims, st);
    Strided map;
    map.base = 0;
    map.rank = x->rank > 0 ? x->rank : 1;
    map.dims[0] = 1;
    map.st[0] = 0;
    for (int k = 0; k < x->rank; k++) {
        int64_t b = a->ints[k] < 0 ? a->ints[k] + x->dims[k] : a->ints[k];
        map.base += b * st[k];
        map.dims[k] = o->dims[k];
        map.st[k] = st[k];
    }
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return strided_read(e, x, o, map);
}

/* concat and stack: each input written into its slab of the output */
LTF_CU_KERNEL(k_concat) {
    LTF_CU_UNUSED;
    ltf_tensor *o = out[0];
    size_t es = dsize(o->dtype);
    if (es == 0) return bad_dtype(ctx, def, o->dtype);
    if (o->numel == 0) return LTF_OK;
    int stack = def->code == LTF_OP_STACK;
    int axis = norm_axis(a->i[0], o->rank);
    int64_t ws[LTF_MAX_RANK];
    contiguous(o->rank, o->dims, ws);
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    int64_t at = 0;
    for (int k = 0; k < nin; k++) {
        Strided map;
        map.rank = o->rank;
        map.base = at * ws[axis];
        for (int d = 0; d < o->rank; d++) { map.dims[d] = o->dims[d]; map.st[d] = ws[d]; }
        map.dims[axis] = stack ? 1 : in[k]->dims[axis];
        at += map.dims[axis];
        if (in[k]->numel == 0) continue;
        ltf_status st = LTF_OK;
#define M(T) { GatherNdP<T> p = { ptr<T>(in[k]), ptr<T>(o), map }; st = e.template run<StridedWriteF<T> >(in[k]->numel, p); }
        LTF_CU_BY_SIZE(es, M)
#undef M
        if (st != LTF_OK) return st;
    }
    return LTF_OK;
}

LTF_CU_KERNEL(k_gather) {
    LTF_CU_UNUSED;
    const ltf_tensor *params = in[0], *indices = in[1];
    ltf_tensor *o = out[0];
    size_t es = dsize(o->dtype);
    if (es == 0) return bad_dtype(ctx, def, o->dtype);
    if (indices->dtype != LTF_DTYPE_INT32 && indices->dtype != LTF_DTYPE_INT64)
        return bad_dtype(ctx, def, indices->dtype);
    if (o->numel == 0) return LTF_OK;
    int axis = norm_axis(a->i[0], params->rank);
    int bd = (int)(a->i[1] < 0 ? a->i[1] + indices->rank : a->i[1]);
    int64_t O = 1, inner = 1, J = 1, N = params->dims[axis];
    for (int d = bd; d < axis; d++) O *= params->dims[d];
    for (int d = axis + 1; d < params->rank; d++) inner *= params->dims[d];
    for (int d = bd; d < indices->rank; d++) J *= indices->dims[d];
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    ltf_status st = LTF_OK;
#define G(T, I) { GatherP<T, I> p = { ptr<T>(params), ptr<I>(indices), ptr<T>(o), O, N, J, inner, e.flag() }; \
                  st = e.template run<GatherF<T, I> >(o->numel, p); }
#define M(T) if (indices->dtype == LTF_DTYPE_INT32) G(T, int32_t) else G(T, int64_t)
    LTF_CU_BY_SIZE(es, M)
#undef M
#undef G
    return st != LTF_OK ? st : e.check();
}
/* }==== */

/* reverse: negative strides from the far end */
LTF_CU_KERNEL(k_reverse) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    if (dsize(x->dtype) == 0) return bad_dtype(ctx, def, x->dtype);
    if (o->numel == 0) return LTF_OK;
    Strided map;
    map.base = 0;
    map.rank = x->rank > 0 ? x->rank : 1;
    map.dims[0] = 1;
    map.st[0] = 0;
    contiguous(x->rank, x->dims, map.st);
    for (int k = 0; k < x->rank; k++) map.dims[k] = x->dims[k];
    for (int k = 0; k < a->nints; k++) {
        int d = norm_axis(a->ints[k], x->rank);
        if (d < 0 || d >= x->rank)
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' %lld is out of range for rank %d", def->name,
                        axis_user(a->ints[k]), x->rank);
        if (map.st[d] > 0) {   /* an axis named twice reverses once, as the CPU's */
            map.base += (x->dims[d] - 1) * map.st[d];
            map.st[d] = -map.st[d];
        }
    }
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return strided_read(e, x, o, map);
}

/* broadcast_to (and broadcast_like): stride 0 along broadcast dims */
LTF_CU_KERNEL(k_broadcast_to) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    if (dsize(x->dtype) == 0) return bad_dtype(ctx, def, x->dtype);
    if (o->numel == 0) return LTF_OK;
    int64_t xs[LTF_MAX_RANK];
    contiguous(x->rank, x->dims, xs);
    Strided map;
    map.base = 0;
    map.rank = o->rank > 0 ? o->rank : 1;
    map.dims[0] = 1;
    map.st[0] = 0;
    for (int d = 0; d < o->rank; d++) {
        int xd = d - (o->rank - x->rank);
        map.dims[d] = o->dims[d];
        map.st[d] = xd < 0 || x->dims[xd] == 1 ? 0 : xs[xd];
    }
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return strided_read(e, x, o, map);
}

/* split and unstack: each output a slab of x along the axis */
LTF_CU_KERNEL(k_split) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    if (dsize(x->dtype) == 0) return bad_dtype(ctx, def, x->dtype);
    int axis = norm_axis(a->i[0], x->rank);
    int unstack = def->code == LTF_OP_UNSTACK;
    int64_t xs[LTF_MAX_RANK];
    contiguous(x->rank, x->dims, xs);
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    int64_t at = 0;
    for (int k = 0; k < nout; k++) {
        int64_t len = unstack ? 1 : out[k]->dims[axis];
        if (out[k]->numel > 0) {
            Strided map;
            map.rank = x->rank;
            map.base = at * xs[axis];
            for (int d = 0; d < x->rank; d++) { map.dims[d] = x->dims[d]; map.st[d] = xs[d]; }
            map.dims[axis] = len;
            ltf_status st = strided_read(e, x, out[k], map);
            if (st != LTF_OK) return st;
        }
        at += len;
    }
    return LTF_OK;
}

template <class E, class T>
ltf_status pad_tile_run(E &e, const ltf_tensor *x, ltf_tensor *o, const void *cval, int mode, const int64_t *before) {
    PadTileP<T> p;
    p.x = ptr<T>(x);
    p.o = ptr<T>(o);
    p.cval = (const T *)cval;
    p.mode = mode;
    p.rank = o->rank;
    contiguous(x->rank, x->dims, p.st);
    for (int d = 0; d < o->rank; d++) {
        p.odims[d] = o->dims[d];
        p.before[d] = before ? before[d] : 0;
        p.n[d] = x->dims[d];
    }
    return e.template run<PadTileF<T> >(o->numel, p);
}

/* pad (constant, reflect, symmetric) and tile */
LTF_CU_KERNEL(k_pad_tile) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    size_t es = dsize(x->dtype);
    if (es == 0) return bad_dtype(ctx, def, x->dtype);
    if (o->numel == 0) return LTF_OK;
    int tile = def->code == LTF_OP_TILE;
    int64_t before[LTF_MAX_RANK];
    int mode = PT_TILE;
    if (!tile) {
        for (int d = 0; d < x->rank; d++) before[d] = a->ints[2 * d];
        mode = a->i[0] == LTF_PAD_REFLECT ? PT_REFLECT : a->i[0] == LTF_PAD_SYMMETRIC ? PT_SYMMETRIC : PT_CONST;
        if (mode == PT_CONST && x->numel == 0) mode = PT_CONST;
    }
    const void *cval = !tile && nin > 1 ? LTF_DATA(in[1]) : NULL;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (x->numel == 0 && mode != PT_CONST) return LTF_OK;
#define M(T) return pad_tile_run<E, T>(e, x, o, cval, mode, tile ? NULL : before);
    LTF_CU_BY_SIZE(es, M)
#undef M
    return LTF_OK;
}

LTF_CU_KERNEL(k_one_hot) {
    LTF_CU_UNUSED;
    const ltf_tensor *idx = in[0];
    ltf_tensor *o = out[0];
    size_t es = dsize(o->dtype);
    if (es == 0) return bad_dtype(ctx, def, o->dtype);
    int it = idx->dtype;
    if (it != DT_I32 && it != DT_I64 && it != DT_U8) return bad_dtype(ctx, def, it);
    if (o->numel == 0) return LTF_OK;
    int axis = norm_axis(a->i[1], idx->rank + 1);
    int64_t inner = 1;
    for (int d = axis; d < idx->rank; d++) inner *= idx->dims[d];
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
#define G(T, I) { OneHotP<T, I> p = { ptr<I>(idx), ptr<T>(in[1]), ptr<T>(in[2]), ptr<T>(o), a->i[0], inner }; \
                  return e.template run<OneHotF<T, I> >(o->numel, p); }
#define M(T) if (it == DT_I32) G(T, int32_t) else if (it == DT_I64) G(T, int64_t) else G(T, uint8_t)
    LTF_CU_BY_SIZE(es, M)
#undef M
#undef G
    return LTF_OK;
}

/* fill: the value from the attributes, cast as the CPU's (bool: != 0) */
LTF_CU_KERNEL(k_fill) {
    LTF_CU_UNUSED;
    ltf_tensor *o = out[0];
    int dt = o->dtype;
    if (dsize(dt) == 0) return bad_dtype(ctx, def, dt);
    if (o->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
#define F(T, V) { FillP<T> p = { ptr<T>(o), (T)(V) }; return e.template run<FillF<T> >(o->numel, p); }
    switch (dt) {
    case DT_F32: F(float, a->f[0])
    case DT_F64: F(double, a->f[0])
    case DT_I32: F(int32_t, a->i[1])
    case DT_I64: F(int64_t, a->i[1])
    case DT_U8: F(uint8_t, (uint8_t)a->i[1])
    case DT_F16: F(f16_t, stv<f16_t>((float)a->f[0]))   /* as the CPU: the float32 value, rounded */
    case DT_BF16: F(bf16_t, stv<bf16_t>((float)a->f[0]))
    default: F(uint8_t, a->i[1] != 0)
    }
#undef F
}

LTF_CU_KERNEL(k_scan) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    int dt = x->dtype;
    if (dt == DT_BOOL || dsize(dt) == 0 || is_half_dt(dt)) return bad_dtype(ctx, def, dt);   /* half: staged */
    int ax = norm_axis(a->i[1], x->rank);
    if (ax < 0 || ax >= (x->rank > 0 ? x->rank : 1))
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' %lld is out of range for rank %d", def->name,
                    axis_user(a->i[1]), x->rank);
    if (x->numel == 0) return LTF_OK;
    int64_t outer = 1, inner = 1, n = x->rank > 0 ? x->dims[ax] : 1;
    for (int d = 0; d < ax; d++) outer *= x->dims[d];
    for (int d = ax + 1; d < x->rank; d++) inner *= x->dims[d];
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    int prod = def->code == LTF_OP_CUMPROD;
#define S(T, U) { ScanP<T> p = { ptr<T>(x), ptr<T>(out[0]), n, inner, a->i[2] != 0, a->i[3] != 0, prod }; \
                  return e.template run<ScanF<T, U> >(outer * inner, p); }
    switch (dt) {
    case DT_F32: S(float, float)
    case DT_F64: S(double, double)
    case DT_I32: S(int32_t, uint32_t)
    case DT_I64: S(int64_t, uint64_t)
    default: S(uint8_t, uint32_t)
    }
#undef S
}

/* {==== Windows: conv2d, its gradients, the pools (cpu/nn.c's plans) */
/* Padding before along one dim: TensorFlow's SAME puts the smaller half first. */
inline int64_t pad_before(int padding, int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t expl) {
    if (padding == LTF_PADDING_EXPLICIT) return expl;
    if (padding != LTF_PADDING_SAME) return 0;
    int64_t total = (out - 1) * s + (k - 1) * d + 1 - in;
    return total > 0 ? total / 2 : 0;
}
/* conv2d(x, f) -> y from the three NHWC/HWIO shapes */
inline Win conv_plan(const int64_t *xd, const int64_t *fd, const int64_t *yd, const ltf_attrs *a) {
    int padding = (int)a->i[0];
    Win p = { xd[0], xd[1], xd[2], xd[3], fd[0], fd[1], fd[3], yd[1], yd[2], a->ints[0], a->ints[1],
              a->nints >= 4 ? a->ints[2] : 1, a->nints >= 4 ? a->ints[3] : 1, 0, 0 };
    p.pt = pad_before(padding, p.h, p.oh, p.kh, p.sh, p.dh, padding == LTF_PADDING_EXPLICIT ? a->ints[4] : 0);
    p.pl = pad_before(padding, p.w, p.ow, p.kw, p.sw, p.dw, padding == LTF_PADDING_EXPLICIT ? a->ints[6] : 0);
    return p;
}
/* a pool over x (NHWC) -> y */
inline Win pool_plan(const int64_t *xd, const int64_t *yd, const ltf_attrs *a) {
    int padding = (int)a->i[0];
    Win p = { xd[0], xd[1], xd[2], xd[3], a->ints[0], a->ints[1], xd[3], yd[1], yd[2], a->ints[2], a->ints[3],
              1, 1, 0, 0 };
    p.pt = pad_before(padding, p.h, p.oh, p.kh, p.sh, 1, 0);
    p.pl = pad_before(padding, p.w, p.ow, p.kw, p.sw, 1, 0);
    return p;
}

/* Below this many multiply-adds a convolution runs its direct body (one
** launch); above, im2col columns and the executor's GEMM (cuBLAS). */
static const int64_t CONV_DIRECT_MACS = (int64_t)1 << 20;

/* conv2d (OP 0), its input (1) or filter (2) gradient as GEMMs over im2col
** columns, whole images per chunk so the columns fit the executor's scratch
** budget: y = cols @ f; df = sum over chunks of cols^T @ dy (accumulated);
** dx = col2im(dy @ f^T), a gather. LTF_ERR_UNIMPLEMENTED, with nothing
** written to the output, when the executor has no GEMM. */
template <class E, class T>
ltf_status conv_gemm(E &e, int op, int dt, const T *x, const T *f, const T *dy, T *o, const Win &p) {
    int64_t kk = p.kh * p.kw * p.c, rows1 = p.oh * p.ow;   /* rows per image */
    int64_t per_image = rows1 * kk * (int64_t)sizeof(T);
    int64_t nb = per_image > 0 ? (int64_t)e.scratch_budget() / per_image : p.n;
    if (nb < 1) nb = 1;
    if (nb > p.n) nb = p.n;
    size_t bytes = (size_t)(nb * rows1 * kk) * sizeof(T);
    T *cols = (T *)e.alloc(bytes);
    if (!cols) return e.status();
    ltf_status st = LTF_OK;
    for (int64_t n0 = 0; n0 < p.n && st == LTF_OK; n0 += nb) {
        int64_t b = p.n - n0 < nb ? p.n - n0 : nb, rows = b * rows1;
        ColsP<T> q = { x, cols, cols, p, n0 };
        if (op != 1) st = e.template run<Im2colF<T> >(rows * kk, q);
        if (st != LTF_OK) break;
        if (op == 0)
            st = e.gemm(dt, 0, 0, rows, p.o, kk, cols, 0, f, 0, o + n0 * rows1 * p.o, 0, 1);
        else if (op == 2)
            st = e.gemm(dt, 1, 0, kk, p.o, rows, cols, 0, dy + n0 * rows1 * p.o, 0, o, 0, 1, n0 > 0);
        else {
            st = e.gemm(dt, 0, 1, rows, kk, p.o, dy + n0 * rows1 * p.o, 0, f, 0, cols, 0, 1);
            if (st == LTF_OK) {
                q.o = o + n0 * p.h * p.w * p.c;
                st = e.template run<Col2imF<T> >(b * p.h * p.w * p.c, q);
            }
        }
    }
    e.release(cols, bytes);
    return st;
}

/* OP 0: conv2d(x, f), 1: conv2d_backprop_input(f, dy), 2: conv2d_backprop_filter(x, dy)
** (the three share def->code 0) */
template <class E, int OP>
ltf_status k_conv(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin, const ltf_attrs *a,
                  ltf_tensor **out, int nout) {
    LTF_CU_UNUSED;
    ltf_tensor *o = out[0];
    int dt = o->dtype;
    if (dt != DT_F32 && dt != DT_F64) return bad_dtype(ctx, def, dt);
    if (in[0]->rank != 4 || in[1]->rank != 4 || o->rank != 4)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: expected rank-4 operands, got ranks %d and %d", def->name,
                    in[0]->rank, in[1]->rank);
    if (o->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    const int op = OP;
    Win p = op == 0 ? conv_plan(in[0]->dims, in[1]->dims, o->dims, a)
          : op == 1 ? conv_plan(o->dims, in[0]->dims, in[1]->dims, a)
                    : conv_plan(in[0]->dims, o->dims, in[1]->dims, a);
#define M(T) {                                                                                     \
        ConvP<T> q;                                                                                \
        q.x = op == 1 ? NULL : ptr<T>(in[0]);                                                      \
        q.f = op == 0 ? ptr<T>(in[1]) : op == 1 ? ptr<T>(in[0]) : NULL;                            \
        q.dy = op == 0 ? NULL : ptr<T>(in[1]);                                                     \
        q.o = ptr<T>(o);                                                                           \
        q.p = p;                                                                                   \
        if (p.n * p.oh * p.ow * p.o * p.kh * p.kw * p.c >= CONV_DIRECT_MACS) {                     \
            ltf_status st = conv_gemm<E, T>(e, op, dt, q.x, q.f, q.dy, q.o, p);                    \
            if (st != LTF_ERR_UNIMPLEMENTED) return st;                                            \
        }                                                                                          \
        if (op == 0) return e.template run<ConvF<T> >(o->numel, q);                                \
        if (op == 1) return e.template run<ConvBackInputF<T> >(o->numel, q);                       \
        return e.template run<ConvBackFilterF<T> >(o->numel, q);                                   \
    }
    if (dt == DT_F32) M(float)
    M(double)
#undef M
}

/* max_pool2d (code 0: numeric), avg_pool2d (code 1: floats) */
LTF_CU_KERNEL(k_pool) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    int dt = x->dtype, avg = def->code == 1;   /* avg_pool2d */
    if (dsize(dt) == 0 || dt == DT_BOOL || is_half_dt(dt) || (avg && dt != DT_F32 && dt != DT_F64))
        return bad_dtype(ctx, def, dt);   /* float16/bfloat16: staged through float32 (takes_half) */
    if (o->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    Win p = pool_plan(x->dims, o->dims, a);
#define M(T) {                                                                                     \
        PoolP<T> q = { ptr<T>(x), NULL, ptr<T>(o), NULL, p };                                      \
        if (!avg) return e.template run<MaxPoolF<T> >(o->numel, q);                                \
        if (dt == DT_F32) { PoolP<float> r = { ptr<float>(x), NULL, ptr<float>(o), NULL, p };      \
                            return e.template run<AvgPoolF<float> >(o->numel, r); }                \
        PoolP<double> r = { ptr<double>(x), NULL, ptr<double>(o), NULL, p };                       \
        return e.template run<AvgPoolF<double> >(o->numel, r);                                     \
    }
    switch (dt) {
    case DT_F32: M(float)
    case DT_F64: M(double)
    case DT_I32: M(int32_t)
    case DT_I64: M(int64_t)
    default: M(uint8_t)
    }
#undef M
}

template <class E, class T>
ltf_status max_pool_grad_run(E &e, const ltf_tensor *x, const ltf_tensor *g, ltf_tensor *o, int gather,
                             const ltf_attrs *a) {
    const ltf_tensor *y = gather ? o : g;   /* the pool's shape */
    Win p = pool_plan(x->dims, y->dims, a);
    PoolP<T> q = { ptr<T>(x), ptr<T>(g), ptr<T>(o), NULL, p };
    if (gather) return e.template run<MaxGradGradF<T> >(o->numel, q);
    if (y->numel == 0) return e.zero(LTF_DATA(o), (size_t)o->numel * sizeof(T));
    size_t bytes = (size_t)y->numel * sizeof(int64_t);
    q.arg = (int64_t *)e.alloc(bytes);
    if (!q.arg) return e.status();
    ltf_status st = e.template run<MaxArgF<T> >(y->numel, q);
    if (st == LTF_OK) st = e.template run<MaxGradF<T> >(o->numel, q);
    e.release(q.arg, bytes);
    return st;
}

/* max_pool2d_grad(x, dy) (code 0), max_pool2d_grad_grad(x, g) (code 1) */
LTF_CU_KERNEL(k_max_pool_grad) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0], *g = in[1];
    ltf_tensor *o = out[0];
    int dt = x->dtype;
    if (dt != DT_F32 && dt != DT_F64) return bad_dtype(ctx, def, dt);
    if (o->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    int gather = def->code == 1;   /* max_pool2d_grad_grad */
    return dt == DT_F32 ? max_pool_grad_run<E, float>(e, x, g, o, gather, a)
                        : max_pool_grad_run<E, double>(e, x, g, o, gather, a);
}

/* avg_pool2d_grad(dy) -> (N, H, W, C) */
LTF_CU_KERNEL(k_avg_pool_grad) {
    LTF_CU_UNUSED;
    const ltf_tensor *dy = in[0];
    ltf_tensor *o = out[0];
    int dt = o->dtype;
    if (dt != DT_F32 && dt != DT_F64) return bad_dtype(ctx, def, dt);
    if (o->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (dy->numel == 0) return e.zero(LTF_DATA(o), (size_t)o->numel * dsize(dt));
    Win p = pool_plan(o->dims, dy->dims, a);
    if (dt == DT_F32) {
        PoolP<float> q = { NULL, ptr<float>(dy), ptr<float>(o), NULL, p };
        return e.template run<AvgGradF<float> >(o->numel, q);
    }
    PoolP<double> q = { NULL, ptr<double>(dy), ptr<double>(o), NULL, p };
    return e.template run<AvgGradF<double> >(o->numel, q);
}

/* gelu(x) (code 0), gelu_grad(dy, x) (code 1) */
LTF_CU_KERNEL(k_gelu) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[nin - 1];
    int dt = x->dtype;
    if (dt != DT_F32 && dt != DT_F64) return bad_dtype(ctx, def, dt);
    if (out[0]->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    int grad = def->code == 1, approx = a->i[0] != 0;
    if (dt == DT_F32) {
        GeluP<float> p = { ptr<float>(x), grad ? ptr<float>(in[0]) : NULL, ptr<float>(out[0]), approx };
        return e.template run<GeluF<float> >(out[0]->numel, p);
    }
    GeluP<double> p = { ptr<double>(x), grad ? ptr<double>(in[0]) : NULL, ptr<double>(out[0]), approx };
    return e.template run<GeluF<double> >(out[0]->numel, p);
}
/* }==== */

/* {==== strided_slice (cpu/movement.c's plan, for known shapes) */
struct StridedPlan {
    int64_t start[LTF_MAX_RANK], step[LTF_MAX_RANK], count[LTF_MAX_RANK];
};
inline int mask_bit(uint64_t mask, int k) { return k < 64 && ((mask >> k) & 1u); }
inline long long axis_user1(int64_t ax) { return (long long)(ax >= 0 && ax < INT64_MAX ? ax + 1 : ax); }

/* What strided_slice selects of a tensor of shape (rank, dims), as
** ltf_cpu_movement_strided_plan resolves it (the engine's inference has
** already refused what it refuses: the errors here are the same) */
inline ltf_status strided_plan(ltf_ctx *ctx, const char *op, int rank, const int64_t *dims, const ltf_attrs *a,
                               StridedPlan *p) {
    if (a->nints < 0 || a->nints % 2)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'begin' and 'end' must have the same length", op);
    int n = a->nints / 2;
    if (a->nints2 >= 0 && a->nints2 != n)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'strides' has %d entries but 'begin' has %d", op, a->nints2, n);
    uint64_t bm = (uint64_t)a->i[0], em = (uint64_t)a->i[1], sm = (uint64_t)a->i[2];
    uint64_t nm = (uint64_t)a->i[3] & 0xffffffffu, elm = (uint64_t)a->i[3] >> 32;
    int consumed = 0;
    for (int k = 0; k < n; k++)
        if (!mask_bit(elm, k) && !mask_bit(nm, k)) consumed++;
    if (consumed > rank)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: too many indices: %d for a tensor of rank %d", op, consumed,
                    rank);
    int d = 0;
    for (int k = 0; k <= n; k++) {
        if (k == n || mask_bit(elm, k)) {   /* the ellipsis, or the implicit one at the end */
            int full = k == n ? rank - d : rank - consumed;
            for (int f = 0; f < full && d < LTF_MAX_RANK; f++, d++) {
                p->start[d] = 0;
                p->step[d] = 1;
                p->count[d] = dims[d];
            }
            continue;
        }
        if (mask_bit(nm, k)) continue;
        int64_t D = dims[d], b = a->ints[k], e = a->ints[n + k];
        int64_t s = a->nints2 >= 0 ? a->ints2[k] : 1;
        if (mask_bit(sm, k)) {
            int64_t idx = b < 0 ? b + D : b;
            if (idx < 0 || idx >= D)
                return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: index %lld is out of range for axis %d of size %lld",
                            op, axis_user1(b), d + 1, (long long)D);
            p->start[d] = idx;
            p->step[d] = 1;
            p->count[d] = 1;
            d++;
            continue;
        }
        if (s == 0 || s == INT64_MIN)
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'strides' entry %d is %lld, must be nonzero", op, k + 1,
                        (long long)s);
        int64_t count;
        if (s > 0) {
            b = mask_bit(bm, k) ? 0 : (b < 0 ? b + D : b);
            e = mask_bit(em, k) ? D - 1 : (e < 0 ? e + D : e);
            if (b < 0) b = 0;
            if (e > D - 1) e = D - 1;
            count = b < D && e >= b ? (e - b) / s + 1 : 0;
        } else {
            b = mask_bit(bm, k) ? D - 1 : (b < 0 ? b + D : b);
            e = mask_bit(em, k) ? 0 : (e < 0 ? e + D : e);
            if (b > D - 1) b = D - 1;
            if (e < 0) e = 0;
            count = b >= 0 && b >= e ? (b - e) / -s + 1 : 0;
        }
        p->start[d] = count > 0 ? b : 0;
        p->step[d] = count > 1 ? s : 1;
        p->count[d] = count;
        d++;
    }
    return LTF_OK;
}

/* The strided map of a plan over a tensor of shape (rank, dims): output
** index i (row-major over the counts) -> element offset */
inline Strided plan_map(const StridedPlan &p, int rank, const int64_t *dims) {
    int64_t st[LTF_MAX_RANK];
    contiguous(rank, dims, st);
    Strided m;
    m.base = 0;
    m.rank = rank > 0 ? rank : 1;
    m.dims[0] = 1;
    m.st[0] = 0;
    for (int k = 0; k < rank; k++) {
        m.base += p.start[k] * st[k];
        m.dims[k] = p.count[k];
        m.st[k] = p.step[k] * st[k];
    }
    return m;
}

/* strided_slice(x) */
LTF_CU_KERNEL(k_strided_slice) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    if (dsize(x->dtype) == 0) return bad_dtype(ctx, def, x->dtype);
    StridedPlan p;
    ltf_status st = strided_plan(ctx, def->name, x->rank, x->dims, a, &p);
    if (st != LTF_OK || o->numel == 0) return st;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return strided_read(e, x, o, plan_map(p, x->rank, x->dims));
}

/* strided_slice_grad(dy, x): dy written into zeros of x's shape */
LTF_CU_KERNEL(k_strided_slice_grad) {
    LTF_CU_UNUSED;
    const ltf_tensor *dy = in[0];
    ltf_tensor *o = out[0];
    size_t es = dsize(o->dtype);
    if (es == 0) return bad_dtype(ctx, def, o->dtype);
    StridedPlan p;
    ltf_status st = strided_plan(ctx, def->name, o->rank, o->dims, a, &p);
    if (st != LTF_OK || o->numel == 0) return st;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if ((st = e.zero(LTF_DATA(o), (size_t)o->numel * es)) != LTF_OK || dy->numel == 0) return st;
    Strided m = plan_map(p, o->rank, o->dims);
#define M(T) { GatherNdP<T> q = { ptr<T>(dy), ptr<T>(o), m }; return e.template run<StridedWriteF<T> >(dy->numel, q); }
    LTF_CU_BY_SIZE(es, M)
#undef M
    return LTF_OK;
}
/* }==== */

/* {==== unsorted_segment_sum(data, ids[, like]) */
LTF_CU_KERNEL(k_segment_sum) {
    LTF_CU_UNUSED;
    const ltf_tensor *data = in[0], *ids = in[1];
    ltf_tensor *o = out[0];
    int dt = o->dtype;
    if (dt != DT_F32 && dt != DT_F64 && dt != DT_I32 && dt != DT_I64 && dt != DT_U8) return bad_dtype(ctx, def, dt);
    int it = ids->dtype;
    if (it != DT_I32 && it != DT_I64) return bad_dtype(ctx, def, it);
    if (o->numel == 0) return LTF_OK;
    int bd = (int)(a->i[2] < 0 ? a->i[2] + ids->rank : a->i[2]), axis = (int)a->i[1];
    int64_t N = nin > 2 ? o->dims[axis] : a->i[0];
    int64_t O = 1, J = 1, inner = 1;
    for (int d = bd; d < axis; d++) O *= data->dims[d];
    for (int d = bd; d < ids->rank; d++) J *= ids->dims[d];
    for (int d = axis + ids->rank - bd; d < data->rank; d++) inner *= data->dims[d];
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (data->numel == 0) return e.zero(LTF_DATA(o), (size_t)o->numel * dsize(dt));
    ltf_status st = LTF_OK;
#define G(T, U, I) { SegSumP<T, U, I> p = { ptr<T>(data), ptr<I>(ids), ptr<T>(o), O, J, N, inner, e.flag() }; \
                     st = e.template run<SegSumF<T, U, I> >(o->numel, p); }
#define M(T, U) if (it == DT_I32) G(T, U, int32_t) else G(T, U, int64_t)
    switch (dt) {
    case DT_F32: M(float, float) break;
    case DT_F64: M(double, double) break;
    case DT_I32: M(int32_t, uint32_t) break;
    case DT_U8: M(uint8_t, uint32_t) break;
    default: M(int64_t, uint64_t) break;
    }
#undef M
#undef G
    return st != LTF_OK ? st : e.check();
}
/* }==== */

/* {==== range, linspace, eye (cpu/init_ops.c) */
LTF_CU_KERNEL(k_range) {
    LTF_CU_UNUSED;
    ltf_tensor *o = out[0];
    int dt = o->dtype;
    if (dt != DT_F32 && dt != DT_F64 && dt != DT_I32 && dt != DT_I64) return bad_dtype(ctx, def, dt);
    int64_t n = o->numel;
    if (n == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (dt == DT_I32 || dt == DT_I64) {
        if (dt == DT_I32) {
            IRangeP<int32_t> p = { ptr<int32_t>(o), (uint64_t)a->i[1], (uint64_t)a->i[3] };
            return e.template run<IRangeF<int32_t> >(n, p);
        }
        IRangeP<int64_t> p = { ptr<int64_t>(o), (uint64_t)a->i[1], (uint64_t)a->i[3] };
        return e.template run<IRangeF<int64_t> >(n, p);
    }
    if (dt == DT_F32) {
        RangeP<float> p = { ptr<float>(o), (float)a->f[0], (float)a->f[2], 0, 0 };
        return e.template run<RangeF<float> >(n, p);
    }
    RangeP<double> p = { ptr<double>(o), a->f[0], a->f[2], 0, 0 };
    return e.template run<RangeF<double> >(n, p);
}

LTF_CU_KERNEL(k_linspace) {
    LTF_CU_UNUSED;
    ltf_tensor *o = out[0];
    int dt = o->dtype;
    if (dt != DT_F32 && dt != DT_F64) return bad_dtype(ctx, def, dt);
    int64_t n = o->numel;
    if (n == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (dt == DT_F32) {
        float s = (float)a->f[0], en = (float)a->f[1];
        float d = n > 1 ? (en - s) / (float)(n - 1) : 0;
        RangeP<float> p = { ptr<float>(o), s, d, n > 1 ? en : s, n };
        return e.template run<RangeF<float> >(n, p);
    }
    double s = a->f[0], en = a->f[1];
    double d = n > 1 ? (en - s) / (double)(n - 1) : 0;
    RangeP<double> p = { ptr<double>(o), s, d, n > 1 ? en : s, n };
    return e.template run<RangeF<double> >(n, p);
}

LTF_CU_KERNEL(k_eye) {
    LTF_CU_UNUSED;
    ltf_tensor *o = out[0];
    int dt = o->dtype;
    if (dsize(dt) == 0) return bad_dtype(ctx, def, dt);
    if (o->numel == 0) return LTF_OK;
    int64_t cols = o->dims[o->rank - 1], per = o->dims[o->rank - 2] * cols;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
#define M(T) { EyeP<T> p = { ptr<T>(o), stv<T>(1), cols, per }; return e.template run<EyeF<T> >(o->numel, p); }
    LTF_CU_BY_DTYPE(dt, M)
#undef M
    return LTF_OK;
}
/* }==== */

/* {==== Optimizer updates: the engine has made every value writable in
** place on this device (copy-on-write, slots moved beside their variable)
** before it calls the kernel (core/device.c) */
inline ltf_variable *variable_of(const ltf_tensor *h) {
    if (!h || h->dtype != LTF_DTYPE_RESOURCE || !h->storage || h->numel != 1) return NULL;
    return *(ltf_variable **)LTF_DATA(h);
}

/* cpu/'s "(2, 3)" */
inline const char *shape_str(const ltf_tensor *t, char *buf, size_t size) {
    size_t n = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < t->rank && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", (long long)t->dims[i]);
    if (n < size) snprintf(buf + n, size - n, "%s)", t->rank == 1 ? "," : "");
    return buf;
}

inline bool same_dims(const ltf_tensor *a, const ltf_tensor *b) {
    if (a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

/* handles (variable + slots) of an update: ltf_optim_nhandles */
inline int optim_nhandles(int code, const ltf_attrs *a) {
    switch (code) {
    case OPT_SGD: return 1;
    case OPT_MOMENTUM: return 2;
    case OPT_ADAM: return a && a->i[0] ? 4 : 3;
    case OPT_RMSPROP: return 2 + (a && a->i[0] ? 1 : 0) + (a && a->i[1] ? 1 : 0);
    default: return 2;
    }
}

template <class E, class T> ltf_status optim_run(E &e, const ltf_op_def *def, ltf_tensor *const *in, int nh,
                                                const ltf_attrs *a) {
    OptimP<T> p;
    p.x = ptr<T>(variable_of(in[0])->value);
    for (int k = 0; k < 3; k++) p.s[k] = k + 1 < nh ? ptr<T>(variable_of(in[k + 1])->value) : (T *)0;
    p.g = ptr<T>(in[nh]);
    p.lr = LTF_DATA(in[nh + 1]);
    p.lr_dt = in[nh + 1]->dtype;
    p.step = def->code == OPT_ADAM ? LTF_DATA(in[nh + 2]) : p.lr;
    p.step_dt = def->code == OPT_ADAM ? in[nh + 2]->dtype : p.lr_dt;
    p.code = def->code;
    p.nesterov = p.amsgrad = p.has_mom = a ? (int)a->i[0] : 0;
    p.centered = a ? (int)a->i[1] : 0;
    for (int k = 0; k < 4; k++) p.f[k] = a ? a->f[k] : 0;
    return e.template run<OptimF<T> >(p.x ? variable_of(in[0])->value->numel : 0, p);
}

LTF_CU_KERNEL(k_optim) {
    LTF_CU_UNUSED;
    (void)out;
    int nh = optim_nhandles(def->code, a), want = nh + (def->code == OPT_ADAM ? 3 : 2);
    if (nin != want)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: expected %d inputs, got %d", def->name, want, nin);
    ltf_variable *var = variable_of(in[0]);
    if (!var || !var->value)
        return fail(ctx, LTF_ERR_FAILED_PRECONDITION, "%s: the handle of input 1 is not bound to a variable", def->name);
    const ltf_tensor *x = var->value, *g = in[nh];
    int dt = x->dtype;
    if (dt != DT_F32 && dt != DT_F64 && !is_half_dt(dt)) return bad_dtype(ctx, def, dt);
    char sa[128], sb[128];
    if (!same_dims(x, g) || (int)g->dtype != dt)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: variable '%s' has shape %s, the gradient has shape %s",
                    def->name, var->name, shape_str(x, sa, sizeof sa), shape_str(g, sb, sizeof sb));
    for (int i = 1; i < nh; i++) {
        ltf_variable *sv = variable_of(in[i]);
        if (!sv || !sv->value)
            return fail(ctx, LTF_ERR_FAILED_PRECONDITION, "%s: the handle of input %d is not bound to a variable",
                        def->name, i + 1);
        if (!same_dims(x, sv->value) || (int)sv->value->dtype != dt)
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: slot '%s' has shape %s, variable '%s' has shape %s",
                        def->name, sv->name, shape_str(sv->value, sa, sizeof sa), var->name,
                        shape_str(x, sb, sizeof sb));
        for (int j = 0; j < i; j++)
            if (variable_of(in[j]) == sv)
                return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: inputs %d and %d are the same variable '%s'",
                            def->name, j + 1, i + 1, sv->name);
    }
    for (int i = nh + 1; i < nin; i++) {
        int sd = in[i]->dtype;
        if (sd != DT_F32 && sd != DT_F64 && sd != DT_I32 && sd != DT_I64) return bad_dtype(ctx, def, sd);
    }
    if (x->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    switch (dt) {
    case DT_F32: return optim_run<E, float>(e, def, in, nh, a);
    case DT_F16: return optim_run<E, f16_t>(e, def, in, nh, a);
    case DT_BF16: return optim_run<E, bf16_t>(e, def, in, nh, a);
    default: return optim_run<E, double>(e, def, in, nh, a);
    }
}
/* }==== */

}  // namespace ltf_cu

#include "index.cuh"
#include "linalg.cuh"   /* bodies and host sides: the latter use the helpers above */
#include "sort.cuh"     /* bodies and host sides, as linalg.cuh */
#include "random.cuh"
#include "alloc.cuh"    /* ops sizing their outputs: bodies and host sides */

namespace ltf_cu {

/* The kernel of op 'op' for executor E, as an ltf_kernel_fn; NULL when
** the device has none (the engine runs the CPU's over copies). */
template <class E> const void *kernel_for(int op) {
    if (const void *k = alloc_kernel_for<E>(op)) return k;
    if (const void *k = index_kernel_for<E>(op)) return k;
    if (op >= LTF_OP_ADD && op <= LTF_OP_ZETA) return (const void *)&k_binary<E>;
    switch (op) {
    case LTF_OP_NEG: case LTF_OP_ABS: case LTF_OP_SIGN: case LTF_OP_EXP: case LTF_OP_LOG: case LTF_OP_LOG1P:
    case LTF_OP_EXPM1: case LTF_OP_SQRT: case LTF_OP_RSQRT: case LTF_OP_SQUARE: case LTF_OP_RECIPROCAL:
    case LTF_OP_TANH: case LTF_OP_SIGMOID: case LTF_OP_RELU: case LTF_OP_SOFTPLUS: case LTF_OP_SIN:
    case LTF_OP_COS: case LTF_OP_FLOOR: case LTF_OP_CEIL: case LTF_OP_ROUND: case LTF_OP_LOGICAL_NOT:
    case LTF_OP_INVERT: case LTF_OP_IS_NAN: case LTF_OP_IS_FINITE: case LTF_OP_ACOS: case LTF_OP_ACOSH:
    case LTF_OP_ASIN: case LTF_OP_ASINH: case LTF_OP_ATAN: case LTF_OP_ATANH: case LTF_OP_COSH:
    case LTF_OP_SINH: case LTF_OP_TAN: case LTF_OP_ERF: case LTF_OP_ERFC: case LTF_OP_LGAMMA:
    case LTF_OP_DIGAMMA: case LTF_OP_IS_INF:
        return (const void *)&k_unary<E>;
    case LTF_OP_IDENTITY: case LTF_OP_STOP_GRADIENT:
    case LTF_OP_RESHAPE: case LTF_OP_EXPAND_DIMS: case LTF_OP_SQUEEZE: case LTF_OP_RESHAPE_LIKE:
        return (const void *)&k_copy<E>;
    case LTF_OP_ZEROS_LIKE: case LTF_OP_ONES_LIKE: return (const void *)&k_fill_like<E>;
    case LTF_OP_CAST: return (const void *)&k_cast<E>;
    case LTF_OP_SELECT: return (const void *)&k_select<E>;
    case LTF_OP_REDUCE_SUM: case LTF_OP_REDUCE_MEAN: case LTF_OP_REDUCE_MAX: case LTF_OP_REDUCE_MIN:
    case LTF_OP_REDUCE_PROD: case LTF_OP_REDUCE_ALL: case LTF_OP_REDUCE_ANY:
        return (const void *)&k_reduce<E>;
    case LTF_OP_SUM_TO: return (const void *)&k_sum_to<E>;
    case LTF_OP_ARGMAX: case LTF_OP_ARGMIN: return (const void *)&k_arg<E>;
    case LTF_OP_SOFTMAX: case LTF_OP_LOG_SOFTMAX: return (const void *)&k_softmax<E>;
    case LTF_OP_SPARSE_SOFTMAX_XENT: return (const void *)&k_sparse_xent<E>;
    case LTF_OP_SOFTMAX_XENT: return (const void *)&k_xent<E>;
    case LTF_OP_MATMUL: return (const void *)&k_matmul<E>;
    case LTF_OP_TRANSPOSE: return (const void *)&k_transpose<E>;
    case LTF_OP_SLICE: return (const void *)&k_slice<E>;
    case LTF_OP_CONCAT: case LTF_OP_STACK: return (const void *)&k_concat<E>;
    case LTF_OP_GATHER: return (const void *)&k_gather<E>;
    case LTF_OP_REVERSE: return (const void *)&k_reverse<E>;
    case LTF_OP_FILL: return (const void *)&k_fill<E>;
    case LTF_OP_CUMSUM: case LTF_OP_CUMPROD: return (const void *)&k_scan<E>;
    case LTF_OP_BROADCAST_TO: case LTF_OP_BROADCAST_LIKE: return (const void *)&k_broadcast_to<E>;
    case LTF_OP_SPLIT: case LTF_OP_UNSTACK: return (const void *)&k_split<E>;
    case LTF_OP_PAD: case LTF_OP_TILE: return (const void *)&k_pad_tile<E>;
    case LTF_OP_ONE_HOT: return (const void *)&k_one_hot<E>;
    case LTF_OP_APPLY_SGD: case LTF_OP_APPLY_MOMENTUM: case LTF_OP_APPLY_ADAM: case LTF_OP_APPLY_RMSPROP:
    case LTF_OP_APPLY_ADAGRAD:
        return (const void *)&k_optim<E>;
    case LTF_OP_CONV2D: return (const void *)&k_conv<E, 0>;
    case LTF_OP_CONV2D_BACKPROP_INPUT: return (const void *)&k_conv<E, 1>;
    case LTF_OP_CONV2D_BACKPROP_FILTER: return (const void *)&k_conv<E, 2>;
    case LTF_OP_MAX_POOL2D: case LTF_OP_AVG_POOL2D: return (const void *)&k_pool<E>;
    case LTF_OP_MAX_POOL2D_GRAD: case LTF_OP_MAX_POOL2D_GRAD_GRAD: return (const void *)&k_max_pool_grad<E>;
    case LTF_OP_AVG_POOL2D_GRAD: return (const void *)&k_avg_pool_grad<E>;
    case LTF_OP_GELU: case LTF_OP_GELU_GRAD: return (const void *)&k_gelu<E>;
    case LTF_OP_STRIDED_SLICE: return (const void *)&k_strided_slice<E>;
    case LTF_OP_STRIDED_SLICE_GRAD: return (const void *)&k_strided_slice_grad<E>;
    case LTF_OP_UNSORTED_SEGMENT_SUM: return (const void *)&k_segment_sum<E>;
    case LTF_OP_RANGE: return (const void *)&k_range<E>;
    case LTF_OP_LINSPACE: return (const void *)&k_linspace<E>;
    case LTF_OP_EYE: return (const void *)&k_eye<E>;
    case LTF_OP_RANDOM_NORMAL: case LTF_OP_TRUNCATED_NORMAL: return (const void *)&k_random_normal<E>;
    case LTF_OP_RANDOM_UNIFORM: return (const void *)&k_random_uniform<E>;
    case LTF_OP_RANDOM_GAMMA: return (const void *)&k_random_gamma<E>;
    case LTF_OP_CATEGORICAL: return (const void *)&k_categorical<E>;
    case LTF_OP_RANDOM_SHUFFLE: return (const void *)&k_random_shuffle<E>;
    case LTF_OP_DROPOUT_NOISE: return (const void *)&k_dropout_noise<E>;
    case LTF_OP_SORT: case LTF_OP_ARGSORT: return (const void *)&k_sort<E>;
    case LTF_OP_TOP_K: return (const void *)&k_top_k<E>;
    case LTF_OP_SEARCHSORTED: return (const void *)&k_searchsorted<E>;
    case LTF_OP_SORT_GRAD: return (const void *)&k_sort_grad<E>;
    case LTF_OP_CHOLESKY: return (const void *)&k_cholesky<E>;
    case LTF_OP_MATRIX_INVERSE: return (const void *)&k_inv<E>;
    case LTF_OP_MATRIX_DETERMINANT: case LTF_OP_LOG_MATRIX_DETERMINANT: return (const void *)&k_det<E>;
    case LTF_OP_MATRIX_SOLVE: return (const void *)&k_solve<E>;
    case LTF_OP_MATRIX_TRIANGULAR_SOLVE: return (const void *)&k_triangular_solve<E>;
    case LTF_OP_QR: return (const void *)&k_qr<E>;
    case LTF_OP_SVD: return (const void *)&k_svd<E>;
    case LTF_OP_SELF_ADJOINT_EIG: return (const void *)&k_eigh<E>;
    default: return NULL;
    }
}

}  // namespace ltf_cu

#endif
