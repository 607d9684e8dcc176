/*
** ops/sort.c: definitions of the sort family (top_k, sort, argsort,
** searchsorted, bincount, segment_sum/mean/max): dtype/shape inference over
** partial shapes and gradients built from other ops (grad.h). Attribute
** slots are documented in ltf_ops/sort.h; kernels are in cpu/sort.c.
*/
#include <string.h>
#include "../op.h"
#include "../shape.h"
#include "../cpu/cpu.h"
#include "../grad.h"

LTF_CPU_KERNEL(ltf_cpu_sort_top_k);
LTF_CPU_KERNEL(ltf_cpu_sort_sort);          /* sort and argsort (def->code) */
LTF_CPU_KERNEL(ltf_cpu_sort_searchsorted);
LTF_CPU_KERNEL(ltf_cpu_sort_bincount);
LTF_CPU_KERNEL(ltf_cpu_sort_segment);       /* segment_sum/mean/max (def->code) */
LTF_CPU_KERNEL(ltf_cpu_sort_grad);

/* {==== Helpers */
#define INFER_ARGS ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin, \
                   const ltf_attrs *a, ltf_type *out, int maxout, int *nout

static int is_real(ltf_dtype dt) {
    return dt == LTF_DTYPE_FLOAT32 || dt == LTF_DTYPE_FLOAT64 || dt == LTF_DTYPE_INT32 || dt == LTF_DTYPE_INT64;
}

/* float16/bfloat16: ordered, summed and maxed through float32 copies (half.c) */
static int is_half(ltf_dtype dt) { return dt == LTF_DTYPE_FLOAT16 || dt == LTF_DTYPE_BFLOAT16; }

static int is_index(ltf_dtype dt) {
    return dt == LTF_DTYPE_INT32 || dt == LTF_DTYPE_INT64;
}

/* Sortable: numbers, uint8 and bool. */
static ltf_status need_sortable(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, ltf_dtype dt) {
    if (is_real(dt) || dt == LTF_DTYPE_UINT8 || is_half(dt)) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_TYPE,
                    "%s: '%s' has dtype %s, expected float32, float64, float16, bfloat16, int32, int64 or uint8",
                    def->name, arg, ltf_dtype_name(dt));
}

/* Index dtype from an attribute slot holding dtype + 1 (0: int32). */
static ltf_status index_dtype(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, int64_t v, ltf_dtype *dt) {
    v = v == 0 ? LTF_DTYPE_INT32 : v == INT64_MIN ? -1 : v - 1;   /* no overflow on a forged attribute */
    if (v != LTF_DTYPE_INT32 && v != LTF_DTYPE_INT64)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: '%s' must be int32 or int64, got %s", def->name, arg,
                        v >= 0 && v < LTF_DTYPE_COUNT ? ltf_dtype_name((ltf_dtype)v) : "an invalid dtype");
    *dt = (ltf_dtype)v;
    return LTF_OK;
}

static ltf_status need_rank1(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const ltf_tensor *t) {
    if (t->rank != 0) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must have rank >= 1, got a scalar", def->name, arg);
}
/* }==== */

/* {==== Inference */
static ltf_status infer_top_k(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    ltf_status st = need_sortable(ctx, def, "input", x->dtype);
    if (st != LTF_OK) return st;
    ltf_dtype it = LTF_DTYPE_INT32;
    if ((st = index_dtype(ctx, def, "index_type", a->i[1], &it)) != LTF_OK) return st;
    int64_t k = a->i[0];
    if (k < 0) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'k' is %lld, must be >= 0", def->name, (long long)k);
    if ((st = need_rank1(ctx, def, "input", x)) != LTF_OK) return st;
    *nout = 2;
    out[0].dtype = x->dtype;
    out[1].dtype = it;
    out[0].rank = out[1].rank = x->rank;
    if (x->rank < 0) return LTF_OK;
    int64_t n = x->dims[x->rank - 1];
    if (n >= 0 && k > n) {
        char s[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: input %s must have at least k = %lld columns (last axis)",
                        def->name, ltf_shape_str(x->rank, x->dims, s, sizeof s), (long long)k);
    }
    if (it == LTF_DTYPE_INT32 && n > INT32_MAX)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the last axis has length %lld, too long for int32 indices",
                        def->name, (long long)n);
    for (int d = 0; d < x->rank; d++) out[0].dims[d] = out[1].dims[d] = x->dims[d];
    out[0].dims[x->rank - 1] = out[1].dims[x->rank - 1] = k;
    return LTF_OK;
}

static ltf_status infer_sort(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    ltf_status st = need_sortable(ctx, def, "values", x->dtype);
    if (st != LTF_OK) return st;
    if ((st = need_rank1(ctx, def, "values", x)) != LTF_OK) return st;
    ltf_dtype dt = x->dtype;
    if (def->code == LTF_OP_ARGSORT) {
        if ((st = index_dtype(ctx, def, "index_type", a->i[1], &dt)) != LTF_OK) return st;
        if (dt == LTF_DTYPE_INT32 && x->rank > 0 && x->dims[x->rank - 1] > INT32_MAX)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the axis has length %lld, too long for int32 indices",
                            def->name, (long long)x->dims[x->rank - 1]);
    }
    *nout = 1;
    out->dtype = dt;
    out->rank = x->rank;
    for (int d = 0; d < x->rank; d++) out->dims[d] = x->dims[d];
    return LTF_OK;
}

static ltf_status infer_searchsorted(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *s = in[0], *v = in[1];
    ltf_status st = need_sortable(ctx, def, "sorted_sequence", s->dtype);
    if (st != LTF_OK) return st;
    if (v->dtype != s->dtype)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'values' has dtype %s, 'sorted_sequence' has %s", def->name,
                        ltf_dtype_name(v->dtype), ltf_dtype_name(s->dtype));
    ltf_dtype ot = LTF_DTYPE_INT32;
    if ((st = index_dtype(ctx, def, "out_type", a->i[1], &ot)) != LTF_OK) return st;
    if (a->i[0] != 0 && a->i[0] != 1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'side' must be 'left' or 'right'", def->name);
    if ((st = need_rank1(ctx, def, "sorted_sequence", s)) != LTF_OK) return st;
    if ((st = need_rank1(ctx, def, "values", v)) != LTF_OK) return st;
    *nout = 1;
    out->dtype = ot;
    out->rank = v->rank;
    for (int d = 0; d < v->rank; d++) out->dims[d] = v->dims[d];
    if (s->rank < 0 || v->rank < 0) return LTF_OK;
    char ss[LTF_SHAPE_BUF], sv[LTF_SHAPE_BUF];
    int bad = s->rank != v->rank;
    for (int d = 0; !bad && d < s->rank - 1; d++)
        bad = s->dims[d] >= 0 && v->dims[d] >= 0 && s->dims[d] != v->dims[d];
    if (bad)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: 'sorted_sequence' %s and 'values' %s must have the same rank and leading dims",
                        def->name, ltf_shape_str(s->rank, s->dims, ss, sizeof ss),
                        ltf_shape_str(v->rank, v->dims, sv, sizeof sv));
    if (ot == LTF_DTYPE_INT32 && s->dims[s->rank - 1] >= INT32_MAX)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: rows of length %lld are too long for int32 positions",
                        def->name, (long long)s->dims[s->rank - 1]);
    return LTF_OK;
}

static ltf_status infer_bincount(INFER_ARGS) {
    (void)maxout;
    const ltf_tensor *arr = in[0];
    if (!is_index(arr->dtype))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'arr' has dtype %s, expected int32 or int64", def->name,
                        ltf_dtype_name(arr->dtype));
    ltf_dtype dt;
    if (nin > 1) {
        const ltf_tensor *w = in[1];
        if (!is_real(w->dtype))
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'weights' has dtype %s, expected float32, float64, int32 or int64",
                            def->name, ltf_dtype_name(w->dtype));
        if (a->i[2] & 1)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'weights' and 'binary_output' cannot both be given",
                            def->name);
        int same = arr->rank < 0 || w->rank < 0 || arr->rank == w->rank;
        for (int d = 0; same && arr->rank > 0 && w->rank == arr->rank && d < arr->rank; d++)
            same = arr->dims[d] < 0 || w->dims[d] < 0 || arr->dims[d] == w->dims[d];
        if (!same) {
            char s1[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'weights' %s must have the shape of 'arr' %s",
                            def->name, ltf_shape_str(w->rank, w->dims, s1, sizeof s1),
                            ltf_shape_str(arr->rank, arr->dims, s2, sizeof s2));
        }
        dt = w->dtype;
    } else {
        int64_t v = a->i[3] == 0 ? LTF_DTYPE_INT32 : a->i[3] == INT64_MIN ? -1 : a->i[3] - 1;
        if (v < 0 || v >= LTF_DTYPE_COUNT || !is_real((ltf_dtype)v))
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'dtype' must be float32, float64, int32 or int64", def->name);
        dt = (ltf_dtype)v;
    }
    if (a->i[0] < 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'minlength' is %lld, must be >= 0", def->name,
                        (long long)a->i[0]);
    if (a->i[1] < -1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'maxlength' is %lld, must be >= 0", def->name,
                        (long long)a->i[1]);
    *nout = 1;
    out->dtype = dt;
    out->rank = 0;
    if (a->i[2] & 2) {   /* per last-axis slice: arr's leading dims, then the bins */
        if (arr->rank == 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' -1 needs 'arr' of rank >= 1, got a scalar",
                            def->name);
        if (arr->rank < 0) {
            out->rank = LTF_UNKNOWN_RANK;
            return LTF_OK;
        }
        for (int d = 0; d < arr->rank - 1; d++) out->dims[out->rank++] = arr->dims[d];
    }
    out->dims[out->rank++] = a->i[1] >= 0 && a->i[1] <= a->i[0] ? a->i[1] : LTF_UNKNOWN_DIM;
    return LTF_OK;
}

static ltf_status infer_segment(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *data = in[0], *ids = in[1];
    if (!is_real(data->dtype) && !is_half(data->dtype) && data->dtype != LTF_DTYPE_UINT8)
        return ltf_fail(ctx, LTF_ERR_TYPE,
                        "%s: 'data' has dtype %s, expected float32, float64, float16, bfloat16, int32, int64 "
                        "or uint8",
                        def->name, ltf_dtype_name(data->dtype));
    if (!is_index(ids->dtype))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'segment_ids' has dtype %s, expected int32 or int64", def->name,
                        ltf_dtype_name(ids->dtype));
    ltf_status st = need_rank1(ctx, def, "data", data);
    if (st != LTF_OK) return st;
    char s1[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF];
    if (ids->rank >= 0 && (ids->rank != 1 || (data->rank > 0 && ids->dims[0] >= 0 && data->dims[0] >= 0 &&
                                              ids->dims[0] != data->dims[0])))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: 'segment_ids' %s must be a vector as long as the first dim of 'data' %s", def->name,
                        ltf_shape_str(ids->rank, ids->dims, s1, sizeof s1),
                        ltf_shape_str(data->rank, data->dims, s2, sizeof s2));
    *nout = 1;
    out->dtype = data->dtype;
    out->rank = data->rank;
    for (int d = 0; d < data->rank; d++) out->dims[d] = data->dims[d];
    if (data->rank > 0) out->dims[0] = LTF_UNKNOWN_DIM;
    return LTF_OK;
}
static ltf_status infer_sort_grad(INFER_ARGS) {
    (void)nin; (void)maxout; (void)a;
    const ltf_tensor *g = in[0], *idx = in[1], *x = in[2];
    if (g->dtype != LTF_DTYPE_FLOAT32 && g->dtype != LTF_DTYPE_FLOAT64 && !is_half(g->dtype))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'g' has dtype %s, expected a float dtype", def->name,
                        ltf_dtype_name(g->dtype));
    if (!is_index(idx->dtype))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'indices' has dtype %s, expected int32 or int64", def->name,
                        ltf_dtype_name(idx->dtype));
    char s1[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF], s3[LTF_SHAPE_BUF];
    int bad = g->rank >= 0 && idx->rank >= 0 && g->rank != idx->rank;
    for (int d = 0; !bad && g->rank > 0 && idx->rank == g->rank && d < g->rank; d++)
        bad = g->dims[d] >= 0 && idx->dims[d] >= 0 && g->dims[d] != idx->dims[d];
    if (!bad && x->rank >= 0 && g->rank >= 0)
        bad = x->rank != g->rank || x->rank == 0;
    for (int d = 0; !bad && x->rank > 0 && g->rank == x->rank && d < x->rank - 1; d++)
        bad = x->dims[d] >= 0 && g->dims[d] >= 0 && x->dims[d] != g->dims[d];
    if (bad)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: 'g' %s and 'indices' %s must have one shape, and x %s the same leading dims",
                        def->name, ltf_shape_str(g->rank, g->dims, s1, sizeof s1),
                        ltf_shape_str(idx->rank, idx->dims, s2, sizeof s2),
                        ltf_shape_str(x->rank, x->dims, s3, sizeof s3));
    *nout = 1;
    out->dtype = g->dtype;
    out->rank = x->rank;
    for (int d = 0; d < x->rank; d++) out->dims[d] = x->dims[d];
    return LTF_OK;
}
/* }==== */

/* {==== Gradients */
#define GRAD_FN(name)                                                                                  \
    static ltf_status name(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,        \
                           const ltf_attrs *a_, ltf_tensor *const *out, int nout,                       \
                           ltf_tensor *const *dout, ltf_tensor **din)
#define ATTRS                                     \
    ltf_attrs dflt_;                              \
    const ltf_attrs *a = a_;                      \
    if (!a) a = (ltf_attrs_init(&dflt_), &dflt_); \
    (void)a; (void)def; (void)nin; (void)out; (void)nout

/* 'g' ([..., k]) added into zeros of x's shape at the 1-based positions
** 'idx' of the last axis: the gradient of top_k and sort. */
static ltf_tensor *scatter_last(ltf_ctx *ctx, ltf_tensor *g, ltf_tensor *idx, ltf_tensor *x) {
    if (!g || !idx) return NULL;
    ltf_tensor *args[3] = { g, idx, x };
    return ltf_op1(ctx, LTF_OP_SORT_GRAD, args, 3, NULL);
}

GRAD_FN(grad_top_k) {   /* the values' gradient goes back where they were taken from */
    ATTRS;
    if (!dout[0]) return LTF_OK;
    din[0] = scatter_last(ctx, dout[0], out[1], in[0]);
    return din[0] ? LTF_OK : ctx->last_status;
}

GRAD_FN(grad_sort) {   /* the positions that sorted x, recomputed, scatter the gradient back */
    ATTRS;
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = a->i[0];
    at.i[1] = LTF_DTYPE_INT64 + 1;
    ltf_tensor *idx = ltf_g_op1(ctx, LTF_OP_ARGSORT, in[0], &at);
    din[0] = scatter_last(ctx, dout[0], idx, in[0]);
    ltf_tensor_release(idx);
    return din[0] ? LTF_OK : ctx->last_status;
}

/* 'g' ([S]) gathered by 'ids' ([n]) and shaped [n, 1, ..., 1] to broadcast over rows of 'data' */
static ltf_tensor *per_row(ltf_ctx *ctx, ltf_tensor *g, ltf_tensor *ids, const ltf_tensor *data) {
    ltf_attrs at;
    ltf_attrs_init(&at);
    ltf_tensor *r = ltf_g_op2(ctx, LTF_OP_GATHER, g, ids, &at);
    if (!r || data->rank <= 1) return r;
    at.nints = data->rank;
    at.ints[0] = -1;
    for (int d = 1; d < data->rank; d++) at.ints[d] = 1;
    ltf_tensor *v = ltf_g_op1(ctx, LTF_OP_RESHAPE, r, &at);
    ltf_tensor_release(r);
    return v;
}

static ltf_tensor *cast_to(ltf_ctx *ctx, ltf_tensor *x, ltf_dtype dt) {
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = dt;
    return ltf_g_op1(ctx, LTF_OP_CAST, x, &at);
}

GRAD_FN(grad_segment) {
    ATTRS;
    ltf_tensor *data = in[0], *ids = in[1], *g = dout[0];
    if (data->rank < 0)
        return ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "%s: the gradient needs the rank of 'data'", def->name);
    ltf_attrs at;
    ltf_attrs_init(&at);
    if (def->code == LTF_OP_SEGMENT_SUM) {
        din[0] = ltf_g_op2(ctx, LTF_OP_GATHER, g, ids, &at);
    } else if (def->code == LTF_OP_SEGMENT_MEAN) {   /* each row gets its segment's gradient / count */
        ltf_tensor *one = ltf_g_op1(ctx, LTF_OP_ONES_LIKE, ids, NULL);
        ltf_tensor *onef = cast_to(ctx, one, data->dtype);
        ltf_tensor *cnt = ltf_g_op2(ctx, LTF_OP_SEGMENT_SUM, onef, ids, NULL);
        ltf_tensor *c = per_row(ctx, cnt, ids, data);
        ltf_tensor *gg = ltf_g_op2(ctx, LTF_OP_GATHER, g, ids, &at);
        din[0] = ltf_g_op2(ctx, LTF_OP_DIV, gg, c, NULL);
        ltf_g_free(5, one, onef, cnt, c, gg);
    } else {   /* max: shared equally by the rows that reach the maximum */
        ltf_tensor *yg = ltf_g_op2(ctx, LTF_OP_GATHER, out[0], ids, &at);
        ltf_tensor *eq = ltf_g_op2(ctx, LTF_OP_EQUAL, data, yg, NULL);
        ltf_tensor *m = cast_to(ctx, eq, data->dtype);
        ltf_tensor *cnt = ltf_g_op2(ctx, LTF_OP_SEGMENT_SUM, m, ids, NULL);
        ltf_tensor *q = ltf_g_op2(ctx, LTF_OP_DIV, g, cnt, NULL);
        ltf_tensor *qg = ltf_g_op2(ctx, LTF_OP_GATHER, q, ids, &at);
        din[0] = ltf_g_op2(ctx, LTF_OP_MUL, m, qg, NULL);
        ltf_g_free(6, yg, eq, m, cnt, q, qg);
    }
    return din[0] ? LTF_OK : ctx->last_status;
}
GRAD_FN(grad_sort_grad) {   /* linear in g: gather the gradient back along the last axis */
    ATTRS;
    ltf_tensor *idx = in[1];
    if (idx->rank < 0)
        return ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "%s: the gradient needs the rank of 'indices'", def->name);
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = idx->rank - 1;
    at.i[1] = idx->rank - 1;
    din[0] = ltf_g_op2(ctx, LTF_OP_GATHER, dout[0], idx, &at);
    return din[0] ? LTF_OK : ctx->last_status;
}
/* }==== */

/* {==== Definitions */
#define CPU(k) { [LTF_DEVICE_CPU] = k }
#define ND LTF_OP_NOT_DIFFERENTIABLE
#define KA LTF_OP_KERNEL_ALLOCATES
#define DEF(name, ID, nmin, nmax, flags, infer, kernel, grad)                                    \
    LTF_INTERNAL const ltf_op_def ltf_opdef_##name = { #name, nmin, nmax, flags, LTF_OP_##ID, infer, \
                                                       CPU(kernel), grad };

DEF(top_k, TOP_K, 1, 1, 0, infer_top_k, ltf_cpu_sort_top_k, grad_top_k)
DEF(sort, SORT, 1, 1, 0, infer_sort, ltf_cpu_sort_sort, grad_sort)
DEF(argsort, ARGSORT, 1, 1, ND, infer_sort, ltf_cpu_sort_sort, NULL)
DEF(searchsorted, SEARCHSORTED, 2, 2, ND, infer_searchsorted, ltf_cpu_sort_searchsorted, NULL)
DEF(bincount, BINCOUNT, 1, 2, ND | KA, infer_bincount, ltf_cpu_sort_bincount, NULL)
DEF(segment_sum, SEGMENT_SUM, 2, 2, KA, infer_segment, ltf_cpu_sort_segment, grad_segment)
DEF(segment_mean, SEGMENT_MEAN, 2, 2, KA, infer_segment, ltf_cpu_sort_segment, grad_segment)
DEF(segment_max, SEGMENT_MAX, 2, 2, KA, infer_segment, ltf_cpu_sort_segment, grad_segment)
DEF(sort_grad, SORT_GRAD, 3, 3, 0, infer_sort_grad, ltf_cpu_sort_grad, grad_sort_grad)
/* }==== */
