/*
** ops/indexing.c: definitions of the indexing ops (gather_nd, scatter_nd,
** tensor_scatter_nd_*, where_indices, unique, roll, ensure_shape): dtype and
** shape inference over partial shapes, and gradients built from ops.
** Attribute slots and gradient rules are documented in ltf_ops/indexing.h;
** kernels are in cpu/indexing.c.
*/
#include <stdio.h>
#include <string.h>
#include "../op.h"
#include "../shape.h"
#include "../grad.h"
#include "../cpu/cpu.h"

LTF_CPU_KERNEL(ltf_cpu_indexing_gather_nd);
LTF_CPU_KERNEL(ltf_cpu_indexing_scatter_nd);
LTF_CPU_KERNEL(ltf_cpu_indexing_tensor_scatter);
LTF_CPU_KERNEL(ltf_cpu_indexing_where);
LTF_CPU_KERNEL(ltf_cpu_indexing_unique);
LTF_CPU_KERNEL(ltf_cpu_indexing_roll);
LTF_CPU_KERNEL(ltf_cpu_indexing_sequence_mask);

#define INFER_ARGS ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin, \
                   const ltf_attrs *a, ltf_type *out, int maxout, int *nout

/* {==== Helpers */
static int is_int_index(ltf_dtype dt) {
    return dt == LTF_DTYPE_INT32 || dt == LTF_DTYPE_INT64;
}

static ltf_status index_dtype(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *t) {
    if (is_int_index(t->dtype)) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'indices' has dtype %s, expected int32 or int64", def->name,
                    ltf_dtype_name(t->dtype));
}

static ltf_status too_big(ltf_ctx *ctx, const ltf_op_def *def, int r) {
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the result would have rank %d, more than %d", def->name, r,
                    LTF_MAX_RANK);
}

/* indices.shape[:-1] .. shape[K:] into (rank, dims); -1 rank when unknown.
** 'K' is the last dim of indices (may be unknown: then the rank is too). */
static ltf_status slices_type(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *indices, int srank,
                              const int64_t *sdims, int *rank, int64_t *dims) {
    *rank = LTF_UNKNOWN_RANK;
    if (indices->rank < 0) return LTF_OK;
    if (indices->rank < 1) {
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'indices' must have rank >= 1, got a scalar", def->name);
    }
    int64_t K = indices->dims[indices->rank - 1];
    if (srank >= 0 && K > srank) {
        char si[LTF_SHAPE_BUF], ss[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: the last dimension of indices %s (%lld) is larger than the rank of the indexed shape %s",
                        def->name, ltf_shape_str(indices->rank, indices->dims, si, sizeof si), (long long)K,
                        ltf_shape_str(srank, sdims, ss, sizeof ss));
    }
    if (K < 0 || srank < 0) return LTF_OK;
    int r = indices->rank - 1 + srank - (int)K;
    if (r > LTF_MAX_RANK) return too_big(ctx, def, r);
    int n = 0;
    for (int d = 0; d < indices->rank - 1; d++) dims[n++] = indices->dims[d];
    for (int d = (int)K; d < srank; d++) dims[n++] = sdims[d];
    *rank = n;
    return LTF_OK;
}

/* 'updates' against the expected slices type (where known). */
static ltf_status check_updates(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *u, int rank,
                                const int64_t *dims) {
    if (rank < 0 || u->rank < 0) return LTF_OK;
    int bad = u->rank != rank;
    for (int d = 0; !bad && d < rank; d++) bad = dims[d] >= 0 && u->dims[d] >= 0 && dims[d] != u->dims[d];
    if (!bad) return LTF_OK;
    char su[LTF_SHAPE_BUF], sw[LTF_SHAPE_BUF];
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                    "%s: 'updates' has shape %s, expected %s (indices.shape[:-1] .. shape[K:])", def->name,
                    ltf_shape_str(u->rank, u->dims, su, sizeof su), ltf_shape_str(rank, dims, sw, sizeof sw));
}

static int numeric(ltf_dtype dt) {
    return dt == LTF_DTYPE_FLOAT32 || dt == LTF_DTYPE_FLOAT64 || dt == LTF_DTYPE_INT32 || dt == LTF_DTYPE_INT64 ||
           dt == LTF_DTYPE_UINT8;
}
/* }==== */

/* {==== Inference */
static ltf_status infer_gather_nd(INFER_ARGS) {
    (void)nin; (void)maxout; (void)a;
    const ltf_tensor *params = in[0], *indices = in[1];
    ltf_status st = index_dtype(ctx, def, indices);
    if (st != LTF_OK) return st;
    if (params->rank == 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'params' must have rank >= 1, got a scalar", def->name);
    *nout = 1;
    out->dtype = params->dtype;
    return slices_type(ctx, def, indices, params->rank, params->dims, &out->rank, out->dims);
}

static ltf_status infer_scatter_nd(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *indices = in[0], *updates = in[1];
    ltf_status st = index_dtype(ctx, def, indices);
    if (st != LTF_OK) return st;
    if (!numeric(updates->dtype) && !ltf_dtype_is_half(updates->dtype))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'updates' has dtype %s, expected a numeric dtype", def->name,
                        ltf_dtype_name(updates->dtype));
    if (a->nints < 1 || a->nints > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' must have 1..%d entries, got %d", def->name,
                        LTF_MAX_RANK, a->nints);
    for (int d = 0; d < a->nints; d++)
        if (a->ints[d] < 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' must have sizes >= 0, got %lld at entry %d",
                            def->name, (long long)a->ints[d], d + 1);
    int r;
    int64_t dims[LTF_MAX_RANK];
    if ((st = slices_type(ctx, def, indices, a->nints, a->ints, &r, dims)) != LTF_OK) return st;
    if ((st = check_updates(ctx, def, updates, r, dims)) != LTF_OK) return st;
    *nout = 1;
    out->dtype = updates->dtype;
    out->rank = a->nints;
    memcpy(out->dims, a->ints, sizeof(int64_t) * (size_t)a->nints);
    return LTF_OK;
}

static ltf_status infer_tensor_scatter(INFER_ARGS) {
    (void)nin; (void)maxout; (void)a;
    const ltf_tensor *t = in[0], *indices = in[1], *updates = in[2];
    ltf_status st = index_dtype(ctx, def, indices);
    if (st != LTF_OK) return st;
    if (t->dtype != updates->dtype)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: tensor and updates must have the same dtype, got tensor: %s and "
                        "updates: %s (use tf.cast)", def->name, ltf_dtype_name(t->dtype),
                        ltf_dtype_name(updates->dtype));
    if (def->code != LTF_SCATTER_UPDATE && !numeric(t->dtype) && !ltf_dtype_is_half(t->dtype))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'tensor' has dtype %s, expected a numeric dtype", def->name,
                        ltf_dtype_name(t->dtype));
    if (t->rank == 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'tensor' must have rank >= 1, got a scalar", def->name);
    int r;
    int64_t dims[LTF_MAX_RANK];
    if ((st = slices_type(ctx, def, indices, t->rank, t->dims, &r, dims)) != LTF_OK) return st;
    if ((st = check_updates(ctx, def, updates, r, dims)) != LTF_OK) return st;
    *nout = 1;
    ltf_type_of(t, out);
    return LTF_OK;
}

static ltf_status infer_where(INFER_ARGS) {
    (void)nin; (void)maxout; (void)a;
    const ltf_tensor *c = in[0];
    if (c->dtype == LTF_DTYPE_STRING)
        return ltf_fail(ctx, LTF_ERR_TYPE, "where: 'condition' has dtype string, expected bool or a numeric dtype");
    (void)def;
    *nout = 1;
    out->dtype = LTF_DTYPE_INT64;
    out->rank = 2;
    out->dims[0] = LTF_UNKNOWN_DIM;
    out->dims[1] = c->rank >= 0 ? c->rank : LTF_UNKNOWN_DIM;
    return LTF_OK;
}

static ltf_status infer_unique(INFER_ARGS) {
    (void)nin;
    const ltf_tensor *x = in[0];
    if (x->dtype == LTF_DTYPE_RESOURCE)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'x' has dtype resource", def->name);
    if (x->rank >= 0 && x->rank != 1) {
        char s[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'x' must be 1-D, got shape %s", def->name,
                        ltf_shape_str(x->rank, x->dims, s, sizeof s));
    }
    ltf_dtype idt = a->i[0] == 0 ? LTF_DTYPE_INT32 : (ltf_dtype)a->i[0];
    if (!is_int_index(idt))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'out_idx' must be int32 or int64", def->name);
    int n = def->code ? 3 : 2;
    if (maxout < n) {
        *nout = n;
        return LTF_OK;   /* ltf_op_infer reports the missing room */
    }
    *nout = n;
    out[0].dtype = x->dtype;
    out[0].rank = 1;
    out[0].dims[0] = LTF_UNKNOWN_DIM;
    out[1].dtype = idt;
    out[1].rank = 1;
    out[1].dims[0] = x->rank == 1 ? x->dims[0] : LTF_UNKNOWN_DIM;
    if (n == 3) {
        out[2].dtype = idt;
        out[2].rank = 1;
        out[2].dims[0] = LTF_UNKNOWN_DIM;
    }
    return LTF_OK;
}

static ltf_status infer_roll(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    if (a->nints > LTF_ATTR_LIST_MAX || a->nints2 > LTF_ATTR_LIST_MAX)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: at most %d shifts and axes", def->name,
                        LTF_ATTR_LIST_MAX);
    if (a->nints < 0 || a->nints != a->nints2)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shift' and 'axis' must have the same length, got %d "
                        "and %d", def->name, a->nints < 0 ? 0 : a->nints, a->nints2 < 0 ? 0 : a->nints2);
    if (x->dtype == LTF_DTYPE_RESOURCE)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'input' has dtype resource", def->name);
    if (x->rank >= 0) {
        for (int k = 0; k < a->nints2; k++) {
            int ax;
            ltf_status st = ltf_axis_normalize(ctx, def->name, "axis", a->ints2[k], x->rank, &ax);
            if (st != LTF_OK) return st;
        }
    }
    *nout = 1;
    ltf_type_of(x, out);
    return LTF_OK;
}

static ltf_status infer_ensure_shape(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    *nout = 1;
    ltf_type_of(x, out);
    if (a->nints < 0) return LTF_OK;
    if (a->nints > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' has %d entries, more than %d", def->name,
                        a->nints, LTF_MAX_RANK);
    for (int d = 0; d < a->nints; d++)
        if (a->ints[d] < -1)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' entry %d is %lld (sizes are >= 0, or -1 for "
                            "any)", def->name, d + 1, (long long)a->ints[d]);
    int bad = x->rank >= 0 && x->rank != a->nints;
    for (int d = 0; !bad && x->rank >= 0 && d < x->rank; d++)
        bad = x->dims[d] >= 0 && a->ints[d] >= 0 && x->dims[d] != a->ints[d];
    if (bad) {
        char sx[LTF_SHAPE_BUF], se[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: shape of tensor %s is not compatible with expected shape %s", def->name,
                        ltf_shape_str(x->rank, x->dims, sx, sizeof sx), ltf_shape_str(a->nints, a->ints, se, sizeof se));
    }
    out->rank = a->nints;
    for (int d = 0; d < a->nints; d++) out->dims[d] = x->rank >= 0 && x->dims[d] >= 0 ? x->dims[d] : a->ints[d];
    return LTF_OK;
}

static ltf_status infer_sequence_mask(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *l = in[0];
    if (!is_int_index(l->dtype))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'lengths' has dtype %s, expected int32 or int64", def->name,
                        ltf_dtype_name(l->dtype));
    if (a->i[0] < -1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'maxlen' must be >= 0, got %lld", def->name,
                        (long long)a->i[0]);
    ltf_dtype dt = (ltf_dtype)a->i[1];
    if (a->i[1] < 0 || a->i[1] >= LTF_DTYPE_COUNT || (dt != LTF_DTYPE_BOOL && !numeric(dt)))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'dtype' must be bool or a numeric dtype", def->name);
    *nout = 1;
    out->dtype = dt;
    if (l->rank < 0) {
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    if (l->rank + 1 > LTF_MAX_RANK) return too_big(ctx, def, l->rank + 1);
    out->rank = l->rank + 1;
    if (l->rank > 0) memcpy(out->dims, l->dims, sizeof(int64_t) * (size_t)l->rank);
    out->dims[l->rank] = a->i[0] >= 0 ? a->i[0] : LTF_UNKNOWN_DIM;
    return LTF_OK;
}
/* }==== */

/* {==== Gradients (built from ops: see grad.h) */
#define GRAD_FN(name)                                                                                  \
    static ltf_status name(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,        \
                           const ltf_attrs *a_, ltf_tensor *const *out, int nout,                       \
                           ltf_tensor *const *dout, ltf_tensor **din)
#define ATTRS                                     \
    ltf_attrs dflt_;                              \
    const ltf_attrs *a = a_;                      \
    if (!a) a = (ltf_attrs_init(&dflt_), &dflt_); \
    (void)a; (void)def; (void)nin; (void)out; (void)nout
#define DONE(i, t) do { din[i] = (t); if (!din[i]) return ctx->last_status; } while (0)
#define G dout[0]

static ltf_tensor *op3(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *x, ltf_tensor *y, ltf_tensor *z) {
    if (!x || !y || !z) return NULL;
    ltf_tensor *args[3] = { x, y, z };
    return ltf_op1(ctx, op, args, 3, NULL);
}

static ltf_tensor *cast_to(ltf_ctx *ctx, ltf_tensor *x, ltf_dtype dt) {
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = dt;
    return ltf_g_op1(ctx, LTF_OP_CAST, x, &at);
}

/* gather_nd(params, indices): the gradient added into zeros of params */
GRAD_FN(grad_gather_nd) {
    ATTRS;
    ltf_tensor *z = ltf_g_op1(ctx, LTF_OP_ZEROS_LIKE, in[0], NULL);
    din[0] = op3(ctx, LTF_OP_TENSOR_SCATTER_ADD, z, in[1], G);
    ltf_tensor_release(z);
    return din[0] ? LTF_OK : ctx->last_status;
}

/* scatter_nd(indices, updates): the updates read the gradient back */
GRAD_FN(grad_scatter_nd) {
    ATTRS;
    DONE(1, ltf_g_op2(ctx, LTF_OP_GATHER_ND, G, in[0], NULL));
    return LTF_OK;
}

GRAD_FN(grad_tensor_scatter) {
    ATTRS;
    ltf_tensor *t = in[0], *indices = in[1], *u = in[2];
    ltf_tensor *dt = NULL, *du = NULL;
    switch (def->code) {
    case LTF_SCATTER_UPDATE: {   /* overwritten positions get nothing */
        ltf_tensor *zu = ltf_g_op1(ctx, LTF_OP_ZEROS_LIKE, u, NULL);
        dt = op3(ctx, LTF_OP_TENSOR_SCATTER_UPDATE, G, indices, zu);
        du = ltf_g_op2(ctx, LTF_OP_GATHER_ND, G, indices, NULL);
        ltf_tensor_release(zu);
        break;
    }
    case LTF_SCATTER_ADD:
        dt = ltf_tensor_retain(G);
        du = ltf_g_op2(ctx, LTF_OP_GATHER_ND, G, indices, NULL);
        break;
    case LTF_SCATTER_SUB: {
        dt = ltf_tensor_retain(G);
        ltf_tensor *g = ltf_g_op2(ctx, LTF_OP_GATHER_ND, G, indices, NULL);
        du = ltf_g_op1(ctx, LTF_OP_NEG, g, NULL);
        ltf_tensor_release(g);
        break;
    }
    default: {   /* max/min: split among the elements equal to the result (TensorFlow's) */
        ltf_tensor *y = out[0];
        ltf_tensor *xeq = ltf_g_op2(ctx, LTF_OP_EQUAL, t, y, NULL);
        ltf_tensor *xind = cast_to(ctx, xeq, G->dtype);
        ltf_tensor *yout = ltf_g_op2(ctx, LTF_OP_GATHER_ND, y, indices, NULL);
        ltf_tensor *yeq = ltf_g_op2(ctx, LTF_OP_EQUAL, u, yout, NULL);
        ltf_tensor *yind = cast_to(ctx, yeq, G->dtype);
        ltf_tensor *z = ltf_g_op1(ctx, LTF_OP_ZEROS_LIKE, xind, NULL);
        ltf_tensor *ys = op3(ctx, LTF_OP_TENSOR_SCATTER_ADD, z, indices, yind);
        ltf_tensor *ind = ltf_g_op2(ctx, LTF_OP_ADD, xind, ys, NULL);
        ltf_tensor *gx = ltf_g_op2(ctx, LTF_OP_MUL, G, xind, NULL);
        dt = ltf_g_op2(ctx, LTF_OP_DIV, gx, ind, NULL);
        ltf_tensor *gi = ltf_g_op2(ctx, LTF_OP_DIV, G, ind, NULL);
        ltf_tensor *gg = ltf_g_op2(ctx, LTF_OP_GATHER_ND, gi, indices, NULL);
        du = ltf_g_op2(ctx, LTF_OP_MUL, gg, yind, NULL);
        ltf_g_free(10, xeq, xind, yout, yeq, yind, z, ys, ind, gx, gi);
        ltf_tensor_release(gg);
        break;
    }
    }
    if (!dt || !du) {
        ltf_g_free(2, dt, du);
        return ctx->last_status;
    }
    din[0] = dt;
    din[2] = du;
    return LTF_OK;
}

GRAD_FN(grad_roll) {   /* roll back by the same shifts */
    ATTRS;
    ltf_attrs at = *a;
    for (int k = 0; k < at.nints; k++) at.ints[k] = -at.ints[k];
    DONE(0, ltf_g_op1(ctx, LTF_OP_ROLL, G, &at));
    return LTF_OK;
}

GRAD_FN(grad_ensure_shape) {
    ATTRS;
    DONE(0, ltf_tensor_retain(G));
    return LTF_OK;
}
#undef G
/* }==== */

/* {==== Definitions */
#define CPU(k) { [LTF_DEVICE_CPU] = k }
#define ND LTF_OP_NOT_DIFFERENTIABLE
#define ALLOC LTF_OP_KERNEL_ALLOCATES
#define DEF(name, nmin, nmax, flags, code, infer, kernel, grad) \
    LTF_INTERNAL const ltf_op_def ltf_opdef_##name = { #name, nmin, nmax, flags, code, infer, CPU(kernel), grad };

DEF(gather_nd, 2, 2, 0, 0, infer_gather_nd, ltf_cpu_indexing_gather_nd, grad_gather_nd)
DEF(scatter_nd, 2, 2, 0, 0, infer_scatter_nd, ltf_cpu_indexing_scatter_nd, grad_scatter_nd)
DEF(tensor_scatter_nd_update, 3, 3, 0, LTF_SCATTER_UPDATE, infer_tensor_scatter, ltf_cpu_indexing_tensor_scatter,
    grad_tensor_scatter)
DEF(tensor_scatter_nd_add, 3, 3, 0, LTF_SCATTER_ADD, infer_tensor_scatter, ltf_cpu_indexing_tensor_scatter,
    grad_tensor_scatter)
DEF(tensor_scatter_nd_sub, 3, 3, 0, LTF_SCATTER_SUB, infer_tensor_scatter, ltf_cpu_indexing_tensor_scatter,
    grad_tensor_scatter)
DEF(tensor_scatter_nd_max, 3, 3, 0, LTF_SCATTER_MAX, infer_tensor_scatter, ltf_cpu_indexing_tensor_scatter,
    grad_tensor_scatter)
DEF(tensor_scatter_nd_min, 3, 3, 0, LTF_SCATTER_MIN, infer_tensor_scatter, ltf_cpu_indexing_tensor_scatter,
    grad_tensor_scatter)
DEF(where_indices, 1, 1, ND | ALLOC, 0, infer_where, ltf_cpu_indexing_where, NULL)
DEF(unique, 1, 1, ND | ALLOC, 0, infer_unique, ltf_cpu_indexing_unique, NULL)
DEF(unique_with_counts, 1, 1, ND | ALLOC, 1, infer_unique, ltf_cpu_indexing_unique, NULL)
DEF(roll, 1, 1, 0, 0, infer_roll, ltf_cpu_indexing_roll, grad_roll)
DEF(sequence_mask, 1, 1, ND | ALLOC, 0, infer_sequence_mask, ltf_cpu_indexing_sequence_mask, NULL)
DEF(ensure_shape, 1, 1, LTF_OP_VIEW, 0, infer_ensure_shape, ltf_cpu_movement_view, grad_ensure_shape)
/* }==== */
