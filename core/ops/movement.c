/*
** ops/movement.c: definitions of the movement ops (reshape, transpose,
** concat, slicing, gather, ...): dtype/shape inference over partial shapes
** and their CPU kernels. Attribute slots are documented in
** ltf_ops/movement.h. Gradients are registered in 'grad' (autodiff): each is
** built from ops (grad.h), mostly other movement ops (slice <-> pad, gather
** -> unsorted_segment_sum, strided_slice -> strided_slice_grad).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../op.h"
#include "../shape.h"
#include "../cpu/cpu.h"
#include "../grad.h"
#include "../ctx.h"
#include "../device.h"

/* Kernels of the gradient helper ops (core/cpu/movement.c). */
LTF_CPU_KERNEL(ltf_cpu_movement_unsorted_segment_sum);
LTF_CPU_KERNEL(ltf_cpu_movement_strided_slice_grad);

/* {==== Helpers */
#define INFER_ARGS ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin, \
                   const ltf_attrs *a, ltf_type *out, int maxout, int *nout

static void set_type(ltf_type *t, ltf_dtype dt, int rank, const int64_t *dims) {
    t->dtype = dt;
    t->rank = rank;
    if (rank > 0) memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
}

static int is_int_index(ltf_dtype dt) {
    return dt == LTF_DTYPE_INT32 || dt == LTF_DTYPE_INT64;
}

/* Text of an attribute list as the user wrote it ("(4, -1)"); positions
** ('axes') print 1-based. */
static const char *list_str(const int64_t *v, int n, int axes, char *buf, size_t size) {
    size_t k = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < n && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? ", " : "",
                              axes ? LTF_AXIS_USER(v[i]) : (long long)v[i]);
    if (k < size) snprintf(buf + k, size - k, n == 1 ? ",)" : ")");
    return buf;
}

static ltf_status need_rank(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, int got, int want) {
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' has %d entries, expected one per dimension (%d)",
                    def->name, arg, got, want);
}

/* Normalize the position of a new axis among 'rank' + 1 (expand_dims, stack, one_hot). */
static ltf_status new_axis(ltf_ctx *ctx, const ltf_op_def *def, int64_t axis, int rank, int *out) {
    int64_t v = axis < 0 ? axis + rank + 1 : axis;
    if (v < 0 || v > rank)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: 'axis' %lld is out of range for a new axis next to rank %d (expected 1..%d or -%d..-1)",
                        def->name, LTF_AXIS_USER(axis), rank, rank + 1, rank + 1);
    *out = (int)v;
    return LTF_OK;
}

/* Normalized axes of the list in 'a->ints' against 'rank'; duplicates fail. */
static ltf_status axes_of(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const ltf_attrs *a, int rank,
                          int *axes) {
    int seen[LTF_MAX_RANK] = {0};
    for (int k = 0; k < a->nints; k++) {
        ltf_status st = ltf_axis_normalize(ctx, def->name, arg, a->ints[k], rank, &axes[k]);
        if (st != LTF_OK) return st;
        if (seen[axes[k]]++)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' repeats axis %d", def->name, arg, axes[k] + 1);
    }
    return LTF_OK;
}
/* }==== */


/* {==== Shapes given as tensors (tf.reshape(x, shape_tensor) & co) */
#define SV_UNKNOWN INT64_MIN   /* an entry not known while tracing (as graph.c's LTF_UNKNOWN_VALUE) */

/* The values of the int32/int64 scalar or vector 't' as far as they are
** known: all of them for a tensor in host memory; for a symbolic one what
** tracing can tell (graph.c's ltf_graph_int_values). '*n' is the length
** (-1 unknown; 0 for a scalar, its value in v[0]); an unknown entry is
** SV_UNKNOWN. */
static void sv_tensor(ltf_ctx *ctx, const ltf_tensor *t, int64_t *v, int *n) {
    *n = -1;
    if (t->rank > 1 || (t->dtype != LTF_DTYPE_INT32 && t->dtype != LTF_DTYPE_INT64)) return;
    if (t->storage) {
        int64_t m = t->rank == 0 ? 1 : t->dims[0];
        if (m > LTF_MAX_RANK) return;
        if (t->storage->device != LTF_DEVICE_CPU) {   /* on a device: its few values copied to the host */
            int32_t w32[LTF_MAX_RANK + 1];
            int64_t w64[LTF_MAX_RANK + 1];
            int wide = t->dtype == LTF_DTYPE_INT64;
            if (ltf_tensor_read(ctx, t, wide ? (void *)w64 : (void *)w32, (size_t)m * (wide ? 8 : 4)) != LTF_OK) return;
            for (int64_t k = 0; k < m; k++) v[k] = wide ? w64[k] : w32[k];
            *n = t->rank == 0 ? 0 : (int)m;
            return;
        }
        for (int64_t k = 0; k < m; k++)
            v[k] = t->dtype == LTF_DTYPE_INT32 ? ((const int32_t *)LTF_DATA(t))[k] : ((const int64_t *)LTF_DATA(t))[k];
        *n = t->rank == 0 ? 0 : (int)m;   /* a scalar: length 0, its value in v[0] */
        return;
    }
    if (t->graph && ctx->graph_int_values) ctx->graph_int_values(t, v, n);
}

/* A shape-like argument given as the tensor 't' (int32/int64, rank 1):
** its length into '*n' (-1: not known while tracing) and its values into 'v'
** (SV_UNKNOWN where not known; eagerly and for constants all are known). */
static ltf_status shape_input(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const ltf_tensor *t,
                              int64_t *v, int *n) {
    char sb[LTF_SHAPE_BUF];
    if (t->dtype != LTF_DTYPE_INT32 && t->dtype != LTF_DTYPE_INT64)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: '%s' must be an int32 or int64 tensor, got %s", def->name, arg,
                        ltf_dtype_name(t->dtype));
    if (t->rank >= 0 && t->rank != 1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must be a vector (rank 1), got shape %s", def->name,
                        arg, ltf_shape_str(t->rank, t->dims, sb, sizeof sb));
    if (t->rank == 1 && t->dims[0] > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' has %lld entries, at most %d are allowed", def->name,
                        arg, (long long)t->dims[0], LTF_MAX_RANK);
    *n = -1;
    if (t->rank == 1) sv_tensor(ctx, t, v, n);
    return LTF_OK;
}

static int all_known(const int64_t *v, int n) {
    if (n < 0) return 0;
    for (int k = 0; k < n; k++)
        if (v[k] == SV_UNKNOWN) return 0;
    return 1;
}

/* Attributes with ints = the known values of a shape input */
static void attrs_with_ints(const ltf_attrs *a, const int64_t *v, int n, ltf_attrs *b) {
    if (a) *b = *a;
    else ltf_attrs_init(b);
    b->nints = n;
    if (n > 0) memcpy(b->ints, v, sizeof(int64_t) * (size_t)n);
}

/* The output type of an op whose shape is the (partly known) shape input:
** known non-negative entries kept, the rest unknown; a known negative entry
** fails ('minus_one_ok': reshape's one -1). */
static ltf_status type_from_partial(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, ltf_dtype dt,
                                    const int64_t *v, int n, int minus_one_ok, ltf_type *out) {
    out->dtype = dt;
    out->rank = n;
    int ones = 0;
    for (int k = 0; k < n; k++) {
        if (v[k] == SV_UNKNOWN || (minus_one_ok && v[k] == -1)) {
            if (v[k] == -1 && ones++)
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: only one dimension of '%s' can be -1",
                                def->name, arg);
            out->dims[k] = LTF_UNKNOWN_DIM;
        } else if (v[k] < 0) {
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' has a negative dimension %lld", def->name, arg,
                            (long long)v[k]);
        } else {
            out->dims[k] = v[k];
        }
    }
    return LTF_OK;
}

ltf_status ltf_shape_input_type(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const ltf_tensor *t,
                                ltf_dtype dt, ltf_type *out, int *complete, ltf_attrs *b, const ltf_attrs *a) {
    int64_t v[LTF_MAX_RANK + 1];
    int n;
    ltf_status st = shape_input(ctx, def, arg, t, v, &n);
    if (st != LTF_OK) return st;
    *complete = all_known(v, n);
    if (*complete) {
        attrs_with_ints(a, v, n, b);
        return LTF_OK;
    }
    if (n < 0) {
        out->dtype = dt;
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    return type_from_partial(ctx, def, arg, dt, v, n, 0, out);
}
/* }==== */

/* {==== reshape, expand_dims, squeeze (views) */
static ltf_status infer_reshape(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    int n = a->nints;
    char sx[LTF_SHAPE_BUF], ss[LTF_SHAPE_BUF];
    if (n < 0) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' is missing", def->name);
    if (n > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' has %d dimensions, at most %d are allowed",
                        def->name, n, LTF_MAX_RANK);
    int unknown_at = -1;
    int64_t known = 1;
    for (int i = 0; i < n; i++) {
        int64_t d = a->ints[i];
        if (d == -1) {
            if (unknown_at >= 0)
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: only one dimension of 'shape' can be -1, got %s",
                                def->name, list_str(a->ints, n, 0, ss, sizeof ss));
            unknown_at = i;
        } else if (d < 0) {
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' %s has a negative dimension %lld",
                            def->name, list_str(a->ints, n, 0, ss, sizeof ss), (long long)d);
        } else {
            if (d && known > INT64_MAX / d)
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' %s has too many elements", def->name,
                                list_str(a->ints, n, 0, ss, sizeof ss));
            known *= d;
        }
    }
    set_type(out, x->dtype, n, a->ints);
    *nout = 1;
    int64_t total = x->rank >= 0 ? ltf_shape_numel(x->rank, x->dims) : -1;
    if (total < 0) return LTF_OK;   /* partial input: -1 stays unknown */
    ltf_shape_str(x->rank, x->dims, sx, sizeof sx);
    list_str(a->ints, n, 0, ss, sizeof ss);
    if (unknown_at >= 0) {
        if (known == 0 || total % known != 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: cannot reshape a tensor of shape %s (%lld elements) into shape %s: %s", def->name, sx,
                            (long long)total, ss,
                            known == 0 ? "the -1 cannot be inferred next to a 0 dimension"
                                       : "the elements do not divide evenly");
        out->dims[unknown_at] = total / known;
    } else if (known != total) {
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: cannot reshape a tensor of shape %s (%lld elements) into shape %s (%lld elements)",
                        def->name, sx, (long long)total, ss, (long long)known);
    }
    return LTF_OK;
}

static ltf_status infer_expand_dims(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    *nout = 1;
    if (x->rank < 0) {
        set_type(out, x->dtype, LTF_UNKNOWN_RANK, NULL);
        return LTF_OK;
    }
    if (x->rank >= LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the input already has the maximum rank %d", def->name,
                        LTF_MAX_RANK);
    int axis = 0;
    ltf_status st = new_axis(ctx, def, a->i[0], x->rank, &axis);
    if (st != LTF_OK) return st;
    out->dtype = x->dtype;
    out->rank = x->rank + 1;
    for (int i = 0, j = 0; i < out->rank; i++) out->dims[i] = i == axis ? 1 : x->dims[j++];
    return LTF_OK;
}

static ltf_status infer_squeeze(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    *nout = 1;
    out->dtype = x->dtype;
    if (x->rank < 0) {
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    int drop[LTF_MAX_RANK] = {0};
    if (a->nints >= 0) {
        int axes[LTF_ATTR_LIST_MAX];
        ltf_status st = axes_of(ctx, def, "axis", a, x->rank, axes);
        if (st != LTF_OK) return st;
        for (int k = 0; k < a->nints; k++) {
            int64_t d = x->dims[axes[k]];
            if (d >= 0 && d != 1) {
                char sx[LTF_SHAPE_BUF];
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                                "%s: cannot squeeze axis %lld of shape %s: its size is %lld, not 1", def->name,
                                LTF_AXIS_USER(a->ints[k]), ltf_shape_str(x->rank, x->dims, sx, sizeof sx),
                                (long long)d);
            }
            drop[axes[k]] = 1;
        }
    } else {
        for (int i = 0; i < x->rank; i++) {
            if (x->dims[i] < 0) {   /* might be 1: the rank is not known */
                out->rank = LTF_UNKNOWN_RANK;
                return LTF_OK;
            }
            drop[i] = x->dims[i] == 1;
        }
    }
    out->rank = 0;
    for (int i = 0; i < x->rank; i++)
        if (!drop[i]) out->dims[out->rank++] = x->dims[i];
    return LTF_OK;
}
/* }==== */

/* {==== transpose */
static ltf_status infer_transpose(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    int r = a->nints >= 0 ? a->nints : x->rank;
    *nout = 1;
    out->dtype = x->dtype;
    if (x->rank >= 0 && a->nints >= 0 && a->nints != x->rank) {
        char sp[LTF_SHAPE_BUF], sx[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'perm' %s has %d entries but x has rank %d: shape %s",
                        def->name, list_str(a->ints, a->nints, 1, sp, sizeof sp), a->nints, x->rank,
                        ltf_shape_str(x->rank, x->dims, sx, sizeof sx));
    }
    if (r > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'perm' has %d entries, at most %d", def->name, r,
                        LTF_MAX_RANK);
    out->rank = r;
    if (r < 0) return LTF_OK;
    int seen[LTF_MAX_RANK] = {0};
    for (int k = 0; k < r; k++) {
        int p = r - 1 - k;
        if (a->nints >= 0) {
            int64_t v = a->ints[k] < 0 ? a->ints[k] + r : a->ints[k];
            if (v < 0 || v >= r || seen[v]++) {
                char sp[LTF_SHAPE_BUF];
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'perm' %s is not a permutation of 1..%d",
                                def->name, list_str(a->ints, a->nints, 1, sp, sizeof sp), r);
            }
            p = (int)v;
        }
        out->dims[k] = x->rank >= 0 ? x->dims[p] : -1;
    }
    return LTF_OK;
}
/* }==== */

/* {==== concat, stack */
static ltf_status same_dtypes(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin) {
    for (int k = 1; k < nin; k++)
        if (in[k]->dtype != in[0]->dtype)
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: values[%d] has dtype %s but values[1] has dtype %s (use tf.cast)",
                            def->name, k + 1, ltf_dtype_name(in[k]->dtype), ltf_dtype_name(in[0]->dtype));
    return LTF_OK;
}

/* The first input of known rank, or -1. */
static int known_rank_input(ltf_tensor *const *in, int nin) {
    for (int k = 0; k < nin; k++)
        if (in[k]->rank >= 0) return k;
    return -1;
}

static ltf_status infer_concat(INFER_ARGS) {
    (void)maxout;
    ltf_status st = same_dtypes(ctx, def, in, nin);
    if (st != LTF_OK) return st;
    *nout = 1;
    out->dtype = in[0]->dtype;
    int f = known_rank_input(in, nin);
    if (f < 0) {
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    int r = in[f]->rank;
    if (r == 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: cannot concatenate scalars (rank 0); use tf.stack",
                        def->name);
    int axis = 0;
    st = ltf_axis_normalize(ctx, def->name, "axis", a->i[0], r, &axis);
    if (st != LTF_OK) return st;
    out->rank = r;
    memcpy(out->dims, in[f]->dims, sizeof(int64_t) * (size_t)r);
    out->dims[axis] = 0;
    for (int k = 0; k < nin; k++) {
        const ltf_tensor *t = in[k];
        char s1[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF];
        if (t->rank < 0) {
            out->dims[axis] = -1;
            continue;
        }
        if (t->rank != r)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: values must have the same rank: values[%d] is %s, values[%d] is %s", def->name, f + 1,
                            ltf_shape_str(r, in[f]->dims, s1, sizeof s1), k + 1,
                            ltf_shape_str(t->rank, t->dims, s2, sizeof s2));
        for (int d = 0; d < r; d++) {
            if (d == axis) continue;
            if (t->dims[d] >= 0 && out->dims[d] >= 0 && t->dims[d] != out->dims[d])
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                                "%s: shapes must match except along axis %d: values[%d] is %s, values[%d] is %s",
                                def->name, axis + 1, f + 1, ltf_shape_str(r, in[f]->dims, s1, sizeof s1), k + 1,
                                ltf_shape_str(r, t->dims, s2, sizeof s2));
            if (out->dims[d] < 0) out->dims[d] = t->dims[d];
        }
        if (out->dims[axis] >= 0 && t->dims[axis] < 0) out->dims[axis] = -1;
        else if (out->dims[axis] >= 0 && __builtin_add_overflow(out->dims[axis], t->dims[axis], &out->dims[axis]))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: the sizes along axis %d add up to more than %lld (values[%d] is %s)", def->name,
                            axis + 1, (long long)INT64_MAX, k + 1, ltf_shape_str(r, t->dims, s2, sizeof s2));
    }
    return LTF_OK;
}

static ltf_status infer_stack(INFER_ARGS) {
    (void)maxout;
    ltf_status st = same_dtypes(ctx, def, in, nin);
    if (st != LTF_OK) return st;
    *nout = 1;
    out->dtype = in[0]->dtype;
    int f = known_rank_input(in, nin);
    if (f < 0) {
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    int r = in[f]->rank;
    if (r >= LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the values already have the maximum rank %d", def->name,
                        LTF_MAX_RANK);
    int axis = 0;
    st = new_axis(ctx, def, a->i[0], r, &axis);
    if (st != LTF_OK) return st;
    int64_t dims[LTF_MAX_RANK];
    memcpy(dims, in[f]->dims, sizeof(int64_t) * (size_t)r);
    for (int k = 0; k < nin; k++) {
        const ltf_tensor *t = in[k];
        if (t->rank < 0) continue;
        int bad = t->rank != r;
        for (int d = 0; !bad && d < r; d++) {
            if (t->dims[d] >= 0 && dims[d] >= 0 && t->dims[d] != dims[d]) bad = 1;
            if (dims[d] < 0) dims[d] = t->dims[d];
        }
        if (bad) {
            char s1[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: values must have the same shape: values[%d] is %s, values[%d] is %s", def->name,
                            f + 1, ltf_shape_str(r, in[f]->dims, s1, sizeof s1), k + 1,
                            ltf_shape_str(t->rank, t->dims, s2, sizeof s2));
        }
    }
    out->rank = r + 1;
    for (int i = 0, j = 0; i <= r; i++) out->dims[i] = i == axis ? nin : dims[j++];
    return LTF_OK;
}
/* }==== */

/* {==== split, unstack */
static ltf_status too_many_outputs(ltf_ctx *ctx, const ltf_op_def *def, int64_t n, int maxout) {
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: %lld outputs, more than the %d allowed", def->name,
                    (long long)n, maxout);
}

static ltf_status infer_split(INFER_ARGS) {
    (void)nin;
    const ltf_tensor *x = in[0];
    int n = a->nints >= 0 ? a->nints : (int)a->i[1];
    if (a->nints < 0 && (a->i[1] <= 0 || a->i[1] > INT32_MAX))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'num_or_size_splits' is %lld, must be positive",
                        def->name, (long long)a->i[1]);
    if (a->nints == 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'num_or_size_splits' is an empty list", def->name);
    if (n > maxout) return too_many_outputs(ctx, def, n, maxout);
    if (x->rank == 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: cannot split a scalar (rank 0)", def->name);
    int axis = 0;
    if (x->rank > 0) {
        ltf_status st = ltf_axis_normalize(ctx, def->name, "axis", a->i[0], x->rank, &axis);
        if (st != LTF_OK) return st;
    }
    int64_t D = x->rank > 0 ? x->dims[axis] : -1;
    int64_t sizes[LTF_ATTR_LIST_MAX];
    if (a->nints >= 0) {
        int unknown_at = -1;
        int64_t sum = 0;
        char ss[LTF_SHAPE_BUF];
        for (int k = 0; k < n; k++) {
            sizes[k] = a->ints[k];
            if (sizes[k] == -1 && unknown_at < 0) {
                unknown_at = k;
            } else if (sizes[k] < 0) {
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                                "%s: sizes %s: each size must be >= 0, with at most one -1", def->name,
                                list_str(a->ints, n, 0, ss, sizeof ss));
            } else if (__builtin_add_overflow(sum, sizes[k], &sum)) {
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: sizes %s add up to more than %lld", def->name,
                                list_str(a->ints, n, 0, ss, sizeof ss), (long long)INT64_MAX);
            }
        }
        if (D >= 0) {
            if (unknown_at >= 0 && sum <= D) {
                sizes[unknown_at] = D - sum;
            } else if (unknown_at >= 0 || sum != D) {
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                                "%s: sizes %s add up to %lld but axis %d has size %lld", def->name,
                                list_str(a->ints, n, 0, ss, sizeof ss), (long long)sum, axis + 1, (long long)D);
            }
        }
    } else if (D >= 0 && D % n != 0) {
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: axis %d of size %lld cannot be split into %d equal parts", def->name, axis + 1,
                        (long long)D, n);
    }
    for (int k = 0; k < n; k++) {
        set_type(&out[k], x->dtype, x->rank, x->dims);
        if (x->rank > 0) out[k].dims[axis] = a->nints >= 0 ? sizes[k] : (D >= 0 ? D / n : -1);
    }
    *nout = n;
    return LTF_OK;
}

static ltf_status infer_unstack(INFER_ARGS) {
    (void)nin;
    const ltf_tensor *x = in[0];
    if (x->rank == 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: cannot unstack a scalar (rank 0)", def->name);
    if (x->rank < 0) {
        if (a->i[1] <= 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: cannot infer the number of outputs of a tensor of unknown rank; pass 'num'",
                            def->name);
        if (a->i[1] > maxout) return too_many_outputs(ctx, def, a->i[1], maxout);
        for (int k = 0; k < a->i[1]; k++) set_type(&out[k], x->dtype, LTF_UNKNOWN_RANK, NULL);
        *nout = (int)a->i[1];
        return LTF_OK;
    }
    int axis = 0;
    ltf_status st = ltf_axis_normalize(ctx, def->name, "axis", a->i[0], x->rank, &axis);
    if (st != LTF_OK) return st;
    int64_t D = x->dims[axis];
    if (D < 0 && a->i[1] <= 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: cannot infer the number of outputs: axis %d has unknown size; pass 'num'", def->name,
                        axis + 1);
    if (D >= 0 && a->i[1] > 0 && a->i[1] != D)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'num' is %lld but axis %d has size %lld", def->name,
                        (long long)a->i[1], axis + 1, (long long)D);
    int64_t n = D >= 0 ? D : a->i[1];
    if (n > maxout) return too_many_outputs(ctx, def, n, maxout);
    for (int k = 0; k < n; k++) {
        ltf_type *t = &out[k];
        t->dtype = x->dtype;
        t->rank = x->rank - 1;
        for (int i = 0, j = 0; i < x->rank; i++)
            if (i != axis) t->dims[j++] = x->dims[i];
    }
    *nout = (int)n;
    return LTF_OK;
}
/* }==== */

/* {==== slice, strided_slice */
static ltf_status infer_slice(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    *nout = 1;
    out->dtype = x->dtype;
    if (a->nints < 0 || a->nints2 < 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'begin' and 'size' are required", def->name);
    if (a->nints != a->nints2)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'begin' has %d entries but 'size' has %d", def->name,
                        a->nints, a->nints2);
    if (x->rank >= 0 && a->nints != x->rank) return need_rank(ctx, def, "begin", a->nints, x->rank);
    if (a->nints > LTF_MAX_RANK) return need_rank(ctx, def, "begin", a->nints, LTF_MAX_RANK);
    out->rank = a->nints;
    for (int k = 0; k < a->nints; k++) {
        int64_t D = x->rank >= 0 ? x->dims[k] : -1, b = a->ints[k], s = a->ints2[k];
        if (s < -1)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'size' entry %d is %lld; sizes are >= 0, or -1 for the rest",
                            def->name, k + 1, (long long)s);
        if (D < 0) {
            out->dims[k] = s;
            continue;
        }
        int64_t nb = b < 0 ? b + D : b;
        if (nb < 0 || nb > D)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: 'begin' %lld is out of range for axis %d of size %lld", def->name, LTF_AXIS_USER(b),
                            k + 1, (long long)D);
        if (s == -1) s = D - nb;
        if (s > D - nb)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: 'begin' %lld with 'size' %lld goes past the end of axis %d (size %lld)", def->name,
                            LTF_AXIS_USER(b), (long long)s, k + 1, (long long)D);
        out->dims[k] = s;
    }
    return LTF_OK;
}

static ltf_status infer_strided_slice(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    ltf_strided_plan p;
    ltf_status st = ltf_cpu_movement_strided_plan(ctx, def->name, x->rank, x->dims, a, &p);
    if (st != LTF_OK) return st;
    set_type(out, x->dtype, p.out_rank, p.out_dims);
    *nout = 1;
    return LTF_OK;
}
/* }==== */

/* {==== gather, one_hot */
static ltf_status infer_gather(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *params = in[0], *indices = in[1];
    if (!is_int_index(indices->dtype))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'indices' has dtype %s, expected int32 or int64", def->name,
                        ltf_dtype_name(indices->dtype));
    *nout = 1;
    out->dtype = params->dtype;
    if (params->rank < 0 || indices->rank < 0) {
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    if (params->rank == 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'params' must have rank >= 1, got a scalar", def->name);
    int axis = 0;
    ltf_status st = ltf_axis_normalize(ctx, def->name, "axis", a->i[0], params->rank, &axis);
    if (st != LTF_OK) return st;
    int64_t bd64 = a->i[1] < 0 ? a->i[1] + indices->rank : a->i[1];   /* in int64: no truncation */
    int bd = bd64 >= 0 && bd64 <= indices->rank ? (int)bd64 : -1;
    if (bd < 0 || bd > indices->rank || bd > axis)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: 'batch_dims' %lld must be in 0..%d (the rank of indices) and at most axis - 1 = %d",
                        def->name, (long long)a->i[1], indices->rank, axis);
    char sp[LTF_SHAPE_BUF], si[LTF_SHAPE_BUF];
    for (int d = 0; d < bd; d++)
        if (params->dims[d] >= 0 && indices->dims[d] >= 0 && params->dims[d] != indices->dims[d])
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: the first %d (batch) dims of params %s and indices %s must match", def->name, bd,
                            ltf_shape_str(params->rank, params->dims, sp, sizeof sp),
                            ltf_shape_str(indices->rank, indices->dims, si, sizeof si));
    int r = params->rank - 1 + indices->rank - bd;
    if (r > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the result would have rank %d, more than %d", def->name, r,
                        LTF_MAX_RANK);
    out->rank = 0;
    for (int d = 0; d < axis; d++) out->dims[out->rank++] = params->dims[d];
    for (int d = bd; d < indices->rank; d++) out->dims[out->rank++] = indices->dims[d];
    for (int d = axis + 1; d < params->rank; d++) out->dims[out->rank++] = params->dims[d];
    return LTF_OK;
}

static ltf_status infer_one_hot(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *indices = in[0], *on = in[1], *off = in[2];
    ltf_dtype it = indices->dtype;
    if (!is_int_index(it) && it != LTF_DTYPE_UINT8)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'indices' has dtype %s, expected int32, int64 or uint8", def->name,
                        ltf_dtype_name(it));
    if (on->dtype != off->dtype)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'on_value' has dtype %s but 'off_value' has dtype %s", def->name,
                        ltf_dtype_name(on->dtype), ltf_dtype_name(off->dtype));
    if (on->rank != 0 || off->rank != 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'on_value' and 'off_value' must be scalars", def->name);
    if (a->i[0] < 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'depth' is %lld, must be >= 0", def->name,
                        (long long)a->i[0]);
    *nout = 1;
    out->dtype = on->dtype;
    if (indices->rank < 0) {
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    if (indices->rank >= LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'indices' already has the maximum rank %d", def->name,
                        LTF_MAX_RANK);
    int axis = 0;
    ltf_status st = new_axis(ctx, def, a->i[1], indices->rank, &axis);
    if (st != LTF_OK) return st;
    out->rank = indices->rank + 1;
    for (int i = 0, j = 0; i < out->rank; i++) out->dims[i] = i == axis ? a->i[0] : indices->dims[j++];
    return LTF_OK;
}
/* }==== */

/* {==== tile, pad, reverse, broadcast_to */
static ltf_status infer_tile(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    *nout = 1;
    out->dtype = x->dtype;
    if (a->nints < 0) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'multiples' is missing", def->name);
    if (x->rank >= 0 && a->nints != x->rank) return need_rank(ctx, def, "multiples", a->nints, x->rank);
    if (a->nints > LTF_MAX_RANK) return need_rank(ctx, def, "multiples", a->nints, LTF_MAX_RANK);
    out->rank = a->nints;
    for (int k = 0; k < a->nints; k++) {
        int64_t m = a->ints[k], D = x->rank >= 0 ? x->dims[k] : -1;
        if (m < 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'multiples' entry %d is %lld, must be >= 0", def->name,
                            k + 1, (long long)m);
        if (D >= 0 && m > 0 && D > INT64_MAX / m)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the result is too large", def->name);
        out->dims[k] = D < 0 ? (m == 0 ? 0 : -1) : D * m;
    }
    return LTF_OK;
}

static ltf_status infer_pad(INFER_ARGS) {
    (void)maxout;
    const ltf_tensor *x = in[0];
    static const char *const modes[] = { "CONSTANT", "REFLECT", "SYMMETRIC" };
    if (a->i[0] < LTF_PAD_CONSTANT || a->i[0] > LTF_PAD_SYMMETRIC)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: unknown mode %lld", def->name, (long long)a->i[0]);
    int mode = (int)a->i[0];
    if (nin > 1) {
        if (in[1]->dtype != x->dtype)
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'constant_values' has dtype %s but x has dtype %s", def->name,
                            ltf_dtype_name(in[1]->dtype), ltf_dtype_name(x->dtype));
        if (in[1]->rank != 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'constant_values' must be a scalar", def->name);
    }
    *nout = 1;
    out->dtype = x->dtype;
    if (a->nints < 0 || a->nints % 2)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'paddings' must be a list of {before, after} pairs",
                        def->name);
    int r = a->nints / 2;
    if (x->rank >= 0 && r != x->rank)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'paddings' has %d pairs, expected one per dimension (%d)",
                        def->name, r, x->rank);
    if (r > LTF_MAX_RANK)   /* x of unknown rank: the pairs give the result's rank */
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'paddings' has %d pairs, at most %d are allowed",
                        def->name, r, LTF_MAX_RANK);
    out->rank = r;
    for (int k = 0; k < r; k++) {
        int64_t b = a->ints[2 * k], e = a->ints[2 * k + 1], D = x->rank >= 0 ? x->dims[k] : -1;
        if (b < 0 || e < 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: paddings for axis %d are {%lld, %lld}, must be >= 0",
                            def->name, k + 1, (long long)b, (long long)e);
        int64_t lim = mode == LTF_PAD_REFLECT ? D - 1 : D;
        if (mode == LTF_PAD_REFLECT && D == 0)   /* as TensorFlow: nothing to reflect, even unpadded */
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: REFLECT mode needs every dimension to have size >= 1, but axis %d has size 0",
                            def->name, k + 1);
        if (lim < 0) lim = 0;
        if (mode != LTF_PAD_CONSTANT && D >= 0 && (b > lim || e > lim))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: %s paddings for axis %d are {%lld, %lld}, but at most %lld fit a dimension of size %lld",
                            def->name, modes[mode], k + 1, (long long)b, (long long)e, (long long)lim,
                            (long long)D);
        if (D >= 0 && (b > INT64_MAX / 4 || e > INT64_MAX / 4 || D > INT64_MAX / 4))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the result is too large", def->name);
        out->dims[k] = D < 0 ? -1 : D + b + e;
    }
    return LTF_OK;
}

static ltf_status infer_reverse(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    set_type(out, x->dtype, x->rank, x->dims);
    *nout = 1;
    if (a->nints < 0) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' is missing", def->name);
    if (x->rank < 0) return LTF_OK;
    int axes[LTF_ATTR_LIST_MAX];
    return axes_of(ctx, def, "axis", a, x->rank, axes);
}

static ltf_status infer_broadcast_to(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    char sx[LTF_SHAPE_BUF], ss[LTF_SHAPE_BUF];
    if (a->nints < 0) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' is missing", def->name);
    if (a->nints > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' has %d dimensions, at most %d", def->name,
                        a->nints, LTF_MAX_RANK);
    for (int k = 0; k < a->nints; k++)
        if (a->ints[k] < 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'shape' %s has a negative dimension", def->name,
                            list_str(a->ints, a->nints, 0, ss, sizeof ss));
    set_type(out, x->dtype, a->nints, a->ints);
    *nout = 1;
    if (x->rank < 0) return LTF_OK;
    int bad = x->rank > a->nints;
    for (int k = 0; !bad && k < x->rank; k++) {
        int64_t d = x->dims[x->rank - 1 - k], t = a->ints[a->nints - 1 - k];
        if (d >= 0 && d != 1 && d != t) bad = 1;
    }
    if (bad)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: cannot broadcast shape %s to %s", def->name,
                        ltf_shape_str(x->rank, x->dims, sx, sizeof sx), ltf_shape_str(a->nints, a->ints, ss, sizeof ss));
    return LTF_OK;
}
/* }==== */

/* {==== broadcast_like, reshape_like (gradient helpers over shapes known only at run time) */
/* 'g' broadcasts to x's shape: where both are known, no dim of g differs from x's unless it is 1 */
static ltf_status infer_broadcast_like(INFER_ARGS) {
    (void)nin; (void)maxout; (void)a;
    const ltf_tensor *g = in[0], *x = in[1];
    set_type(out, g->dtype, x->rank, x->dims);
    *nout = 1;
    if (g->rank < 0 || x->rank < 0) return LTF_OK;
    int bad = g->rank > x->rank;
    for (int k = 0; !bad && k < g->rank; k++) {
        int64_t d = g->dims[g->rank - 1 - k], t = x->dims[x->rank - 1 - k];
        if (d >= 0 && t >= 0 && d != 1 && d != t) bad = 1;
    }
    if (bad) {
        char sg[LTF_SHAPE_BUF], sx[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: cannot broadcast 'g' of shape %s to the shape of 'x' %s",
                        def->name, ltf_shape_str(g->rank, g->dims, sg, sizeof sg),
                        ltf_shape_str(x->rank, x->dims, sx, sizeof sx));
    }
    return LTF_OK;
}

/* The element count of a partial shape; -1 when a dim or the rank is unknown
** (types passed ltf_shape_check: a known count fits) */
static int64_t known_numel(int rank, const int64_t *dims) {
    if (rank < 0) return -1;
    int64_t n = 1;
    for (int k = 0; k < rank; k++) {
        if (dims[k] < 0) return -1;
        n *= dims[k];
    }
    return n;
}

/* 'g' takes x's shape; the element counts must agree where both are known */
static ltf_status infer_reshape_like(INFER_ARGS) {
    (void)nin; (void)maxout; (void)a;
    const ltf_tensor *g = in[0], *x = in[1];
    set_type(out, g->dtype, x->rank, x->dims);
    *nout = 1;
    int64_t ng = known_numel(g->rank, g->dims), nx = known_numel(x->rank, x->dims);
    if (ng >= 0 && nx >= 0 && ng != nx) {
        char sg[LTF_SHAPE_BUF], sx[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: 'g' of shape %s (%lld elements) cannot take the shape of 'x' %s (%lld elements)",
                        def->name, ltf_shape_str(g->rank, g->dims, sg, sizeof sg), (long long)ng,
                        ltf_shape_str(x->rank, x->dims, sx, sizeof sx), (long long)nx);
    }
    return LTF_OK;
}


/* reshape(x, shape) with the shape a tensor: its values when known (eagerly,
** constants), else the partial shape tracing can tell */
static ltf_status infer_reshape_any(INFER_ARGS) {
    if (nin < 2) return infer_reshape(ctx, def, in, nin, a, out, maxout, nout);
    int64_t v[LTF_MAX_RANK + 1];
    int n;
    ltf_status st = shape_input(ctx, def, "shape", in[1], v, &n);
    if (st != LTF_OK) return st;
    if (all_known(v, n)) {
        ltf_attrs b;
        attrs_with_ints(a, v, n, &b);
        return infer_reshape(ctx, def, in, 1, &b, out, maxout, nout);
    }
    *nout = 1;
    if (n < 0) {
        out->dtype = in[0]->dtype;
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    st = type_from_partial(ctx, def, "shape", in[0]->dtype, v, n, 1, out);
    if (st != LTF_OK) return st;
    /* one unknown entry and a known element count: that entry follows */
    int64_t total = known_numel(in[0]->rank, in[0]->dims), known = 1;
    int at = -1, unknown = 0;
    for (int k = 0; k < n; k++) {
        if (out->dims[k] < 0) { at = k; unknown++; }
        else known *= out->dims[k];
    }
    if (unknown == 1 && total >= 0 && known > 0 && total % known == 0) out->dims[at] = total / known;
    return LTF_OK;
}

static ltf_status infer_broadcast_to_any(INFER_ARGS) {
    if (nin < 2) return infer_broadcast_to(ctx, def, in, nin, a, out, maxout, nout);
    ltf_attrs b;
    int complete;
    ltf_status st = ltf_shape_input_type(ctx, def, "shape", in[1], in[0]->dtype, out, &complete, &b, a);
    if (st != LTF_OK) return st;
    if (complete) return infer_broadcast_to(ctx, def, in, 1, &b, out, maxout, nout);
    *nout = 1;
    if (out->rank >= 0 && in[0]->rank > out->rank) {
        char sx[LTF_SHAPE_BUF], ss[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: cannot broadcast shape %s to %s", def->name,
                        ltf_shape_str(in[0]->rank, in[0]->dims, sx, sizeof sx),
                        ltf_shape_str(out->rank, out->dims, ss, sizeof ss));
    }
    return LTF_OK;
}

/* shape / size: x's dims or element count, at run time */
static ltf_status infer_shape_of(INFER_ARGS) {
    (void)nin; (void)maxout;
    int64_t dt = a->i[0] ? a->i[0] : LTF_DTYPE_INT32;
    if (dt != LTF_DTYPE_INT32 && dt != LTF_DTYPE_INT64)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'out_type' must be int32 or int64", def->name);
    out->dtype = (ltf_dtype)dt;
    if (def->code == LTF_OP_SHAPE) {
        out->rank = 1;
        out->dims[0] = in[0]->rank;   /* -1 when the rank is not known */
    } else {
        out->rank = 0;
    }
    *nout = 1;
    return LTF_OK;
}

static ltf_status kernel_shape_of(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                  const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    int64_t v[LTF_MAX_RANK], n = def->code == LTF_OP_SHAPE ? x->rank : 1;
    if (def->code == LTF_OP_SHAPE) memcpy(v, x->dims, sizeof(int64_t) * (size_t)x->rank);
    else v[0] = x->numel;
    for (int64_t k = 0; k < n; k++) {
        if (o->dtype == LTF_DTYPE_INT32) {
            if (v[k] > INT32_MAX)
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: %lld does not fit int32 (use out_type = tf.int64)",
                                def->name, (long long)v[k]);
            ((int32_t *)LTF_DATA(o))[k] = (int32_t)v[k];
        } else {
            ((int64_t *)LTF_DATA(o))[k] = v[k];
        }
    }
    return LTF_OK;
}

/* g split along the axis as the x's are long there */
static ltf_status infer_split_like(INFER_ARGS) {
    const ltf_tensor *g = in[0];
    int n = nin - 1;
    if (n > maxout) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: %d parts, room for %d", def->name, n, maxout);
    int rank = g->rank;
    int64_t axis = a->i[0];
    if (rank >= 0 && (axis < 0 || axis >= rank))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: axis %lld is out of range for rank %d", def->name,
                        LTF_AXIS_USER(axis), rank);
    int64_t total = 0;
    int unknown = 0;
    for (int k = 0; k < n; k++) {
        const ltf_tensor *x = in[1 + k];
        int64_t d = x->rank > axis && axis >= 0 ? x->dims[axis] : -1;
        out[k].dtype = g->dtype;
        out[k].rank = rank;
        for (int j = 0; j < rank; j++) out[k].dims[j] = j == axis ? d : g->dims[j];
        if (d < 0) unknown = 1;
        else if (__builtin_add_overflow(total, d, &total))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the parts' sizes along the axis overflow int64",
                            def->name);
    }
    if (!unknown && rank >= 0 && g->dims[axis] >= 0 && total != g->dims[axis])
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: parts of %lld along the axis for a dimension of %lld",
                        def->name, (long long)total, (long long)g->dims[axis]);
    *nout = n;
    return LTF_OK;
}

static ltf_status kernel_split_like(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                    const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def;
    if (nin - 1 > LTF_ATTR_LIST_MAX)
        return ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "split_like: more than %d parts", LTF_ATTR_LIST_MAX);
    ltf_attrs sp;
    ltf_attrs_init(&sp);
    sp.i[0] = a->i[0];
    sp.nints = nin - 1;
    for (int k = 0; k < nin - 1; k++) sp.ints[k] = out[k]->dims[a->i[0]];
    return ltf_cpu_movement_split(ctx, ltf_op_get(LTF_OP_SPLIT), in, 1, &sp, out, nout);
}
/* }==== */

/* {==== unsorted_segment_sum, strided_slice_grad (gradient helpers) */
static ltf_status infer_unsorted_segment_sum(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *data = in[0], *ids = in[1];
    ltf_dtype dt = data->dtype;
    if (dt != LTF_DTYPE_FLOAT32 && dt != LTF_DTYPE_FLOAT64 && !is_int_index(dt) && !ltf_dtype_is_half(dt) &&
        dt != LTF_DTYPE_UINT8)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'data' has dtype %s, expected float32, float64, int32, int64, "
                        "uint8, float16 or bfloat16",
                        def->name, ltf_dtype_name(dt));
    if (!is_int_index(ids->dtype))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'segment_ids' has dtype %s, expected int32 or int64", def->name,
                        ltf_dtype_name(ids->dtype));
    int64_t N = a->i[0];
    if (N < 0 && nin < 3)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'num_segments' is %lld, must be >= 0", def->name,
                        (long long)N);
    if (nin > 2) {   /* num_segments: the size of the third input ('like') along the axis, when it runs */
        const ltf_tensor *like = in[2];
        N = like->rank > a->i[1] && a->i[1] >= 0 ? like->dims[a->i[1]] : -1;
        if (like->rank >= 0 && (a->i[1] < 0 || a->i[1] >= like->rank))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'like' of rank %d has no axis %lld", def->name,
                            like->rank, LTF_AXIS_USER(a->i[1]));
    }
    *nout = 1;
    out->dtype = dt;
    if (data->rank < 0 || ids->rank < 0) {
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    int R = ids->rank;
    int64_t bd = a->i[2] < 0 ? a->i[2] + R : a->i[2], axis = a->i[1];
    if (bd < 0 || bd > R || axis < bd || axis > data->rank - (R - bd))   /* no overflow for a huge axis */
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: 'batch_dims' %lld and axis %lld do not fit segment_ids of rank %d in data of rank %d",
                        def->name, (long long)a->i[2], LTF_AXIS_USER(axis), R, data->rank);
    char sd[LTF_SHAPE_BUF], si[LTF_SHAPE_BUF];
    for (int k = 0; k < R; k++) {
        int64_t d = data->dims[k < bd ? k : axis + k - bd], e = ids->dims[k];
        if (d >= 0 && e >= 0 && d != e)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: the shape of segment_ids %s does not match data %s (it must be a prefix of data's "
                            "shape)",
                            def->name, ltf_shape_str(R, ids->dims, si, sizeof si),
                            ltf_shape_str(data->rank, data->dims, sd, sizeof sd));
    }
    out->rank = data->rank - (R - (int)bd) + 1;
    if (out->rank > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the result would have rank %d, more than %d", def->name,
                        out->rank, LTF_MAX_RANK);
    int r = 0;
    for (int d = 0; d < axis; d++) out->dims[r++] = data->dims[d];
    out->dims[r++] = N;
    for (int d = (int)(axis + R - bd); d < data->rank; d++) out->dims[r++] = data->dims[d];
    return LTF_OK;
}

static ltf_status infer_strided_slice_grad(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *dy = in[0], *x = in[1];
    if (dy->dtype != x->dtype)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'dy' has dtype %s but x has dtype %s", def->name,
                        ltf_dtype_name(dy->dtype), ltf_dtype_name(x->dtype));
    ltf_strided_plan p;
    ltf_status st = ltf_cpu_movement_strided_plan(ctx, def->name, x->rank, x->dims, a, &p);
    if (st != LTF_OK) return st;
    set_type(out, x->dtype, x->rank, x->dims);
    *nout = 1;
    if (p.out_rank < 0 || dy->rank < 0) return LTF_OK;
    int bad = p.out_rank != dy->rank;
    for (int k = 0; !bad && k < dy->rank; k++)
        bad = p.out_dims[k] >= 0 && dy->dims[k] >= 0 && p.out_dims[k] != dy->dims[k];
    if (bad) {
        char sy[LTF_SHAPE_BUF], sp[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'dy' has shape %s but the slice has shape %s", def->name,
                        ltf_shape_str(dy->rank, dy->dims, sy, sizeof sy),
                        ltf_shape_str(p.out_rank, p.out_dims, sp, sizeof sp));
    }
    return LTF_OK;
}
/* }==== */

/* {==== Gradients (built from ops: see grad.h) */
#define GRAD_FN(name)                                                                                  \
    static ltf_status name(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,        \
                           const ltf_attrs *a_, ltf_tensor *const *out, int nout,                       \
                           ltf_tensor *const *dout, ltf_tensor **din)
/* The tape stores no attributes for an op run without them: read defaults. */
#define ATTRS                                     \
    ltf_attrs dflt_;                              \
    const ltf_attrs *a = a_;                      \
    if (!a) a = (ltf_attrs_init(&dflt_), &dflt_); \
    (void)a; (void)def; (void)nin; (void)out; (void)nout
#define DONE(i, t) do { din[i] = (t); if (!din[i]) return ctx->last_status; } while (0)
#define X in[0]
#define G dout[0]

/* Gradients rely on the forward shapes: fail cleanly when one is not known
** (symbolic tensors while tracing). */
static ltf_status need_shape(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *t) {
    int ok = t->rank >= 0;
    for (int k = 0; ok && k < t->rank; k++) ok = t->dims[k] >= 0;
    if (ok) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "%s: the gradient needs the input's full shape", def->name);
}

/* g[..., b:b+n, ...] along 'axis', every other dim whole */
static ltf_tensor *slice_axis(ltf_ctx *ctx, ltf_tensor *g, int axis, int64_t b, int64_t n) {
    if (!g) return NULL;
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = at.nints2 = g->rank;
    for (int k = 0; k < g->rank; k++) {
        at.ints[k] = 0;
        at.ints2[k] = -1;
    }
    at.ints[axis] = b;
    at.ints2[axis] = n;
    return ltf_op1(ctx, LTF_OP_SLICE, &g, 1, &at);
}

/* g with 'before'/'after' zeros along 'axis' */
static ltf_tensor *pad_axis(ltf_ctx *ctx, ltf_tensor *g, int axis, int64_t before, int64_t after) {
    if (!g) return NULL;
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = 2 * g->rank;
    for (int k = 0; k < at.nints; k++) at.ints[k] = 0;
    at.ints[2 * axis] = before;
    at.ints[2 * axis + 1] = after;
    at.i[0] = LTF_PAD_CONSTANT;
    return ltf_op1(ctx, LTF_OP_PAD, &g, 1, &at);
}

static ltf_tensor *reverse_axis(ltf_ctx *ctx, ltf_tensor *g, int axis) {
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = 1;
    at.ints[0] = axis;
    return ltf_g_op1(ctx, LTF_OP_REVERSE, g, &at);
}

static ltf_tensor *sum_all(ltf_ctx *ctx, ltf_tensor *g) {
    return ltf_g_op1(ctx, LTF_OP_REDUCE_SUM, g, NULL);   /* no axes: every axis */
}

static ltf_tensor *reshape_to(ltf_ctx *ctx, ltf_tensor *g, int rank, const int64_t *dims) {
    if (!g) return NULL;
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = rank;
    for (int k = 0; k < rank; k++) at.ints[k] = dims[k];
    return ltf_op1(ctx, LTF_OP_RESHAPE, &g, 1, &at);
}

/* reduce_sum of g over the 'n' axes in 'axes' (0-based), not kept */
static ltf_tensor *sum_axes(ltf_ctx *ctx, ltf_tensor *g, const int *axes, int n) {
    if (!g) return NULL;
    if (n == 0) return ltf_tensor_retain(g);
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = n;
    for (int k = 0; k < n; k++) at.ints[k] = axes[k];
    return ltf_op1(ctx, LTF_OP_REDUCE_SUM, &g, 1, &at);
}

/* Whether t's rank and dims are all known (no error). */
static int shape_known(const ltf_tensor *t) {
    if (t->rank < 0) return 0;
    for (int k = 0; k < t->rank; k++)
        if (t->dims[k] < 0) return 0;
    return 1;
}

/* G[b_k .. -(e_k + 1)] along every dim (strided_slice, inclusive ends
** counted from the end): the middle of a padded gradient, whatever its
** run-time size */
static ltf_tensor *unpad(ltf_ctx *ctx, ltf_tensor *g, int r, const int64_t *before, const int64_t *after) {
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = 2 * r;
    for (int k = 0; k < r; k++) {
        at.ints[k] = before[k];
        at.ints[r + k] = -after[k] - 1;
    }
    return ltf_g_op1(ctx, LTF_OP_STRIDED_SLICE, g, &at);
}

/* Release din[0..n-1] after a failure and report it. */
static ltf_status fail_all(ltf_ctx *ctx, ltf_tensor **din, int n) {
    for (int k = 0; k < n; k++) {
        ltf_tensor_release(din[k]);
        din[k] = NULL;
    }
    return ctx->last_status;
}

/* reshape, expand_dims, squeeze */
GRAD_FN(grad_reshape) {
    ATTRS;
    DONE(0, ltf_g_reshape_like(ctx, G, X));
    return LTF_OK;
}

GRAD_FN(grad_transpose) {   /* transpose by the inverse permutation (absent: reversal, its own inverse) */
    ATTRS;
    ltf_attrs at;
    ltf_attrs_init(&at);
    if (a->nints >= 0) {
        at.nints = a->nints;
        for (int k = 0; k < a->nints; k++) {
            int64_t p = a->ints[k] < 0 ? a->ints[k] + a->nints : a->ints[k];
            at.ints[p] = k;
        }
    }
    DONE(0, ltf_g_op1(ctx, LTF_OP_TRANSPOSE, G, &at));
    return LTF_OK;
}

GRAD_FN(grad_concat) {   /* each input's slab of the gradient */
    ATTRS;
    ltf_status st;
    int fixed = shape_known(out[0]);
    for (int k = 0; k < nin && fixed; k++) fixed = shape_known(in[k]);
    if (!fixed) {   /* a split of the gradient by the inputs' sizes along the axis (one may be unknown) */
        int rank = out[0]->rank >= 0 ? out[0]->rank : in[0]->rank;
        if (rank < 0 && a->i[0] < 0) return need_shape(ctx, def, out[0]);
        int axis = (int)(a->i[0] < 0 ? a->i[0] + rank : a->i[0]), unknown = 0;
        ltf_attrs sp;
        ltf_attrs_init(&sp);
        sp.i[0] = axis;
        sp.nints = nin;
        for (int k = 0; k < nin; k++) {
            int64_t d = in[k]->rank > axis ? in[k]->dims[axis] : -1;
            unknown += d < 0;
            sp.ints[k] = d < 0 ? -1 : d;
        }
        if (nin > LTF_ATTR_LIST_MAX)
            return ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "%s: the gradient of more than %d inputs of unknown size",
                            def->name, LTF_ATTR_LIST_MAX);
        int n = 0;
        if (unknown > 1) {   /* the sizes are the inputs' when the gradient runs */
            ltf_tensor *args[LTF_ATTR_LIST_MAX + 1];
            args[0] = G;
            for (int k = 0; k < nin; k++) args[1 + k] = in[k];
            st = ltf_op_run(ctx, LTF_OP_SPLIT_LIKE, args, nin + 1, &sp, din, nin, &n);
        } else {
            st = ltf_op_run(ctx, LTF_OP_SPLIT, &G, 1, &sp, din, nin, &n);
        }
        if (st == LTF_OK && n != nin) return fail_all(ctx, din, n);
        return st;
    }
    st = need_shape(ctx, def, out[0]);
    if (st != LTF_OK) return st;
    int axis = (int)(a->i[0] < 0 ? a->i[0] + out[0]->rank : a->i[0]);
    int64_t at = 0;
    for (int k = 0; k < nin; k++) {
        if ((st = need_shape(ctx, def, in[k])) != LTF_OK) return fail_all(ctx, din, k);
        din[k] = slice_axis(ctx, G, axis, at, in[k]->dims[axis]);
        if (!din[k]) return fail_all(ctx, din, k);
        at += in[k]->dims[axis];
    }
    return LTF_OK;
}

GRAD_FN(grad_stack) {   /* unstack the gradient along the new axis */
    ATTRS;
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = a->i[0];
    at.i[1] = nin;
    int n = 0;
    ltf_status st = ltf_op_run(ctx, LTF_OP_UNSTACK, &G, 1, &at, din, nin, &n);
    if (st != LTF_OK) return st;
    if (n != nin) {
        fail_all(ctx, din, n);
        return ltf_fail(ctx, LTF_ERR_INTERNAL, "%s: the gradient has %d parts for %d inputs", def->name, n, nin);
    }
    return LTF_OK;
}

/* split and unstack: join the output gradients (zeros where none) with 'op' */
static ltf_status join_grads(ltf_ctx *ctx, ltf_op_id op, int64_t axis, ltf_tensor *const *out, int nout,
                             ltf_tensor *const *dout, ltf_tensor **din) {
    ltf_tensor *stack_parts[16];
    ltf_tensor **parts = nout <= 16 ? stack_parts : malloc(sizeof(ltf_tensor *) * (size_t)nout);
    if (!parts) return ltf_fail_oom(ctx, "gradient", sizeof(ltf_tensor *) * (size_t)nout);
    int ok = 1;
    for (int k = 0; k < nout; k++) {
        parts[k] = dout[k] ? ltf_tensor_retain(dout[k]) : ltf_grad_zeros_like(ctx, out[k]);
        ok &= parts[k] != NULL;
    }
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = axis;
    din[0] = ok ? ltf_op1(ctx, op, parts, nout, &at) : NULL;
    for (int k = 0; k < nout; k++) ltf_tensor_release(parts[k]);
    if (parts != stack_parts) free(parts);
    return din[0] ? LTF_OK : ctx->last_status;
}

GRAD_FN(grad_split) {
    ATTRS;
    return join_grads(ctx, LTF_OP_CONCAT, a->i[0], out, nout, dout, din);
}

GRAD_FN(grad_unstack) {
    ATTRS;
    return join_grads(ctx, LTF_OP_STACK, a->i[0], out, nout, dout, din);
}

GRAD_FN(grad_slice) {   /* pad the gradient back to x's shape */
    ATTRS;
    if (!shape_known(X) || !shape_known(out[0])) {   /* the same slice as a strided one: its gradient op takes x's shape */
        if (X->rank < 0 || a->nints != X->rank) return need_shape(ctx, def, X);
        ltf_attrs at;
        ltf_attrs_init(&at);
        int r = X->rank;
        at.nints = 2 * r;
        for (int k = 0; k < r; k++) {
            int64_t b = a->ints[k], n = a->nints2 >= 0 ? a->ints2[k] : -1;
            at.ints[k] = b;
            if (n < 0) at.ints[r + k] = -1;                          /* to the end */
            else if (n == 0) {                                       /* empty: nothing flows back */
                DONE(0, ltf_grad_zeros_like(ctx, X));
                return LTF_OK;
            } else if (b < 0 && b + n - 1 >= 0) return need_shape(ctx, def, X);
            else at.ints[r + k] = b + n - 1;
        }
        ltf_tensor *args[2] = { G, X };
        DONE(0, ltf_op1(ctx, LTF_OP_STRIDED_SLICE_GRAD, args, 2, &at));
        return LTF_OK;
    }
    ltf_status st = need_shape(ctx, def, X);
    if (st != LTF_OK) return st;
    if ((st = need_shape(ctx, def, out[0])) != LTF_OK) return st;
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = 2 * X->rank;
    for (int k = 0; k < X->rank; k++) {
        int64_t D = X->dims[k], b = a->ints[k] < 0 ? a->ints[k] + D : a->ints[k];
        at.ints[2 * k] = b;
        at.ints[2 * k + 1] = D - b - out[0]->dims[k];
    }
    at.i[0] = LTF_PAD_CONSTANT;
    DONE(0, ltf_g_op1(ctx, LTF_OP_PAD, G, &at));
    return LTF_OK;
}

GRAD_FN(grad_strided_slice) {   /* the gradient written into zeros of x's shape */
    ATTRS;
    ltf_tensor *args[2] = { G, X };
    DONE(0, ltf_op1(ctx, LTF_OP_STRIDED_SLICE_GRAD, args, 2, a));
    return LTF_OK;
}

GRAD_FN(grad_strided_slice_grad) {   /* linear in dy: slice the gradient again; x gives only a shape */
    ATTRS;
    DONE(0, ltf_g_op1(ctx, LTF_OP_STRIDED_SLICE, G, a));
    return LTF_OK;
}

GRAD_FN(grad_gather) {   /* sum the gradient's rows into the rows they were read from */
    ATTRS;
    const ltf_tensor *params = in[0], *indices = in[1];
    /* the rows gathered from: params' rank and its size along the axis */
    int pax = params->rank < 0 ? -1 : (int)(a->i[0] < 0 ? a->i[0] + params->rank : a->i[0]);
    if (pax < 0 || pax >= params->rank) return need_shape(ctx, def, params);
    if (indices->rank < 0) return need_shape(ctx, def, indices);
    if (params->dims[pax] < 0) {   /* the number of rows is params' when it runs */
        ltf_attrs at;
        ltf_attrs_init(&at);
        at.i[1] = pax;
        at.i[2] = a->i[1] < 0 ? a->i[1] + indices->rank : a->i[1];
        ltf_tensor *args[3] = { G, in[1], in[0] };
        DONE(0, ltf_op1(ctx, LTF_OP_UNSORTED_SEGMENT_SUM, args, 3, &at));
        return LTF_OK;
    }
    for (int d = 0; d < out[0]->rank; d++)
        if (out[0]->dims[d] == 0) {   /* nothing was read (and the indices were not checked) */
            DONE(0, ltf_g_op1(ctx, LTF_OP_ZEROS_LIKE, in[0], NULL));
            return LTF_OK;
        }
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[1] = a->i[0] < 0 ? a->i[0] + params->rank : a->i[0];
    at.i[0] = params->dims[at.i[1]];
    at.i[2] = a->i[1] < 0 ? a->i[1] + indices->rank : a->i[1];
    DONE(0, ltf_g_op2(ctx, LTF_OP_UNSORTED_SEGMENT_SUM, G, in[1], &at));
    return LTF_OK;
}

/* gather the gradient back; slices with a negative (dropped) id get zero */
GRAD_FN(grad_unsorted_segment_sum) {
    ATTRS;
    ltf_tensor *data = in[0], *ids = in[1];
    if (data->rank < 0 || ids->rank < 0) return need_shape(ctx, def, data->rank < 0 ? data : ids);
    int R = ids->rank;
    int64_t axis = a->i[1], bd = a->i[2] < 0 ? a->i[2] + R : a->i[2];
    ltf_tensor *zero = ltf_g_scalar(ctx, ids->dtype, 0.0), *one = ltf_g_scalar(ctx, ids->dtype, 1.0);
    ltf_tensor *safe = ltf_g_op2(ctx, LTF_OP_MAXIMUM, ids, one, NULL);
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = axis;
    at.i[1] = bd;
    ltf_tensor *g = ltf_g_op2(ctx, LTF_OP_GATHER, G, safe, &at);
    ltf_tensor *keep = ltf_g_op2(ctx, LTF_OP_GREATER, ids, zero, NULL);
    int64_t dims[LTF_MAX_RANK];   /* ids' dims where they sit in data, 1 elsewhere */
    for (int d = 0; d < data->rank; d++) dims[d] = 1;
    for (int k = 0; k < R; k++) dims[k < bd ? k : axis + k - bd] = ids->dims[k];
    ltf_tensor *m = reshape_to(ctx, keep, data->rank, dims);
    ltf_tensor *z = ltf_g_op1(ctx, LTF_OP_ZEROS_LIKE, g, NULL);
    ltf_tensor *args[3] = { m, g, z };
    din[0] = m && z ? ltf_op1(ctx, LTF_OP_SELECT, args, 3, NULL) : NULL;
    ltf_g_free(7, zero, one, safe, g, keep, m, z);
    return din[0] ? LTF_OK : ctx->last_status;
}

/* no gradient for the indices; on_value gets the sum of the gradient where
** it was placed, off_value the sum elsewhere */
GRAD_FN(grad_one_hot) {
    ATTRS;
    ltf_dtype dt = G->dtype;
    ltf_tensor *one = ltf_g_scalar(ctx, dt, 1.0), *zero = ltf_g_scalar(ctx, dt, 0.0);
    ltf_tensor *a1[3] = { in[0], one, zero }, *a2[3] = { in[0], zero, one };
    ltf_tensor *m_on = one && zero ? ltf_op1(ctx, LTF_OP_ONE_HOT, a1, 3, a) : NULL;
    ltf_tensor *m_off = one && zero ? ltf_op1(ctx, LTF_OP_ONE_HOT, a2, 3, a) : NULL;
    ltf_tensor *g_on = ltf_g_op2(ctx, LTF_OP_MUL, G, m_on, NULL);
    ltf_tensor *g_off = ltf_g_op2(ctx, LTF_OP_MUL, G, m_off, NULL);
    din[1] = sum_all(ctx, g_on);
    din[2] = sum_all(ctx, g_off);
    ltf_g_free(6, one, zero, m_on, m_off, g_on, g_off);
    if (!din[1] || !din[2]) return fail_all(ctx, din, 3);
    return LTF_OK;
}

/* Sum the 'm' copies of each dim: the gradient viewed as (m_1, d_1, m_2,
** d_2, ...) summed over the m's, with runs of kept or summed dims merged;
** past the rank limit, one dim at a time. */
GRAD_FN(grad_tile) {
    ATTRS;
    if (!shape_known(X) && X->rank >= 0 && a->nints == X->rank) {
        /* the m_k copies along each dim: split the gradient in m_k equal parts and add them */
        for (int k = 0; k < X->rank; k++)
            if (a->ints[k] == 0) {
                DONE(0, ltf_grad_zeros_like(ctx, X));
                return LTF_OK;
            }
        ltf_tensor *cur = ltf_tensor_retain(G);
        for (int k = 0; k < X->rank && cur; k++) {
            int64_t m = a->ints[k];
            if (m == 1) continue;
            if (m > 64) {
                ltf_tensor_release(cur);
                return ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED,
                                "%s: the gradient of %lld copies of a dimension of unknown size", def->name, (long long)m);
            }
            ltf_attrs sp;
            ltf_attrs_init(&sp);
            sp.i[0] = k;
            sp.i[1] = m;
            ltf_tensor *parts[64];
            int n = 0;
            ltf_status st = ltf_op_run(ctx, LTF_OP_SPLIT, &cur, 1, &sp, parts, (int)m, &n);
            ltf_tensor_release(cur);
            cur = NULL;
            if (st != LTF_OK) return st;
            ltf_tensor *sum = parts[0];
            for (int j = 1; j < n && sum; j++) {
                ltf_tensor *t = ltf_g_op2(ctx, LTF_OP_ADD, sum, parts[j], NULL);
                ltf_tensor_release(sum);
                sum = t;
            }
            for (int j = 1; j < n; j++) ltf_tensor_release(parts[j]);
            cur = sum;
        }
        DONE(0, cur);
        return LTF_OK;
    }
    ltf_status st = need_shape(ctx, def, X);
    if (st != LTF_OK) return st;
    if (X->numel == 0 || (G && G->numel == 0)) {   /* nothing to sum (and the products below might not fit) */
        DONE(0, ltf_grad_zeros_like(ctx, X));
        return LTF_OK;
    }
    int r = X->rank, n = 0, nred = 0, axes[2 * LTF_MAX_RANK];
    int64_t sizes[2 * LTF_MAX_RANK];
    int red[2 * LTF_MAX_RANK];
#define PUSH(sz, rd)                                              \
    do {                                                          \
        if (n > 0 && red[n - 1] == (rd)) {                        \
            sizes[n - 1] *= (sz);                                 \
        } else {                                                  \
            sizes[n] = (sz);                                      \
            red[n++] = (rd);                                      \
        }                                                         \
    } while (0)
    for (int k = 0; k < r; k++) {
        int64_t m = a->ints[k], d = X->dims[k];
        if (m != 1) PUSH(m, 1);
        if (m == 1 || d != 1) PUSH(d, 0);
    }
#undef PUSH
    if (n <= LTF_MAX_RANK) {
        for (int k = 0; k < n; k++)
            if (red[k]) axes[nred++] = k;
        ltf_tensor *v = reshape_to(ctx, G, n, sizes);
        ltf_tensor *s = sum_axes(ctx, v, axes, nred);
        din[0] = ltf_g_reshape_like(ctx, s, X);
        ltf_g_free(2, v, s);
        return din[0] ? LTF_OK : ctx->last_status;
    }
    /* one dim at a time: (before, m_k, d_k * after) summed over m_k */
    ltf_tensor *cur = ltf_tensor_retain(G);
    int64_t before = 1;
    for (int k = 0; k < r && cur; k++) {
        int64_t m = a->ints[k], d = X->dims[k], after = 1;
        for (int j = k + 1; j < r; j++) after *= X->dims[j] * a->ints[j];
        if (m != 1) {
            int64_t dims3[3] = { before, m, d * after };
            int one_axis[1] = { 1 };
            ltf_tensor *v = reshape_to(ctx, cur, 3, dims3);
            ltf_tensor *s = sum_axes(ctx, v, one_axis, 1);
            ltf_g_free(2, cur, v);
            cur = s;
        }
        before *= d;
    }
    din[0] = ltf_g_reshape_like(ctx, cur, X);
    ltf_g_free(1, cur);
    return din[0] ? LTF_OK : ctx->last_status;
}

/* CONSTANT: the interior of the gradient; constant_values gets the sum over
** the padding. REFLECT/SYMMETRIC: per padded dim, the interior plus each
** border reversed and added onto the elements it mirrors. */
GRAD_FN(grad_pad) {
    ATTRS;
    int r = X->rank;
    ltf_status st = a->i[0] == LTF_PAD_CONSTANT && r >= 0 ? LTF_OK : need_shape(ctx, def, X);
    if (st != LTF_OK) return st;
    if (a->i[0] == LTF_PAD_CONSTANT) {
        if (!shape_known(X)) {
            int64_t before[LTF_MAX_RANK], after[LTF_MAX_RANK];
            for (int k = 0; k < r; k++) {
                before[k] = a->ints[2 * k];
                after[k] = a->ints[2 * k + 1];
            }
            DONE(0, unpad(ctx, G, r, before, after));
        } else {
            ltf_attrs at;
            ltf_attrs_init(&at);
            at.nints = at.nints2 = r;
            for (int k = 0; k < r; k++) {
                at.ints[k] = a->ints[2 * k];
                at.ints2[k] = X->dims[k];
            }
            DONE(0, ltf_g_op1(ctx, LTF_OP_SLICE, G, &at));
        }
        if (nin > 1) {   /* sum(G * mask), mask = 1 on the padding */
            ltf_tensor *zx = ltf_g_op1(ctx, LTF_OP_ZEROS_LIKE, X, NULL);
            ltf_tensor *one = ltf_g_scalar(ctx, X->dtype, 1.0);
            ltf_tensor *mask = ltf_g_op2(ctx, LTF_OP_PAD, zx, one, a);
            ltf_tensor *gm = ltf_g_op2(ctx, LTF_OP_MUL, G, mask, NULL);
            din[1] = sum_all(ctx, gm);
            ltf_g_free(4, zx, one, mask, gm);
            if (!din[1]) return fail_all(ctx, din, 2);
        }
        return LTF_OK;
    }
    int64_t sym = a->i[0] == LTF_PAD_SYMMETRIC;
    ltf_tensor *cur = ltf_tensor_retain(G);
    for (int k = 0; k < r && cur; k++) {
        int64_t b = a->ints[2 * k], e = a->ints[2 * k + 1], D = X->dims[k];
        if (b == 0 && e == 0) continue;
        ltf_tensor *sum = slice_axis(ctx, cur, k, b, D);
        if (b > 0) {   /* padded b - j + 1 .. mirrors x element j - sym (0-based j = 1..b) */
            ltf_tensor *lo = slice_axis(ctx, cur, k, 0, b);
            ltf_tensor *rv = reverse_axis(ctx, lo, k);
            ltf_tensor *pd = pad_axis(ctx, rv, k, 1 - sym, D - b - (1 - sym));
            ltf_tensor *s2 = ltf_g_op2(ctx, LTF_OP_ADD, sum, pd, NULL);
            ltf_g_free(4, lo, rv, pd, sum);
            sum = s2;
        }
        if (e > 0) {   /* padded after j = 1..e mirrors x element D - 1 - j + sym */
            ltf_tensor *hi = slice_axis(ctx, cur, k, b + D, e);
            ltf_tensor *rv = reverse_axis(ctx, hi, k);
            ltf_tensor *pd = pad_axis(ctx, rv, k, D - 1 - e + sym, 1 - sym);
            ltf_tensor *s2 = ltf_g_op2(ctx, LTF_OP_ADD, sum, pd, NULL);
            ltf_g_free(4, hi, rv, pd, sum);
            sum = s2;
        }
        ltf_g_free(1, cur);
        cur = sum;
    }
    din[0] = cur;
    return cur ? LTF_OK : ctx->last_status;
}

GRAD_FN(grad_reverse) {
    ATTRS;
    DONE(0, ltf_g_op1(ctx, LTF_OP_REVERSE, G, a));
    return LTF_OK;
}

GRAD_FN(grad_broadcast_to) {
    ATTRS;
    DONE(0, ltf_g_unbroadcast(ctx, G, X));
    return LTF_OK;
}

/* broadcast_like <-> sum_to; 'x' (the shape) gets no gradient */
GRAD_FN(grad_broadcast_like) {
    ATTRS;
    DONE(0, ltf_g_unbroadcast(ctx, G, X));
    return LTF_OK;
}

GRAD_FN(grad_split_like) {   /* the parts' gradients joined again; the x's (shapes) get none */
    ATTRS;
    (void)nin;
    return join_grads(ctx, LTF_OP_CONCAT, a->i[0], out, nout, dout, din);
}

GRAD_FN(grad_reshape_like) {
    ATTRS;
    DONE(0, ltf_g_reshape_like(ctx, G, X));
    return LTF_OK;
}
#undef X
#undef G
/* }==== */

/* {==== Definitions */
#define CPU(k) { [LTF_DEVICE_CPU] = k }
#define VIEW LTF_OP_VIEW
#define VAROUT LTF_OP_VARIADIC_OUTPUTS
#define DEF(name, ID, nmin, nmax, flags, infer, kernel, grad)                                    \
    LTF_INTERNAL const ltf_op_def ltf_opdef_##name = { #name, nmin, nmax, flags, LTF_OP_##ID, infer, \
                                                       CPU(kernel), grad };

/* 'code' is the op's own id: kernels shared by two ops (concat/stack, split/unstack) test it */
DEF(reshape, RESHAPE, 1, 2, VIEW, infer_reshape_any, ltf_cpu_movement_view, grad_reshape)
DEF(transpose, TRANSPOSE, 1, 1, 0, infer_transpose, ltf_cpu_movement_transpose, grad_transpose)
DEF(expand_dims, EXPAND_DIMS, 1, 1, VIEW, infer_expand_dims, ltf_cpu_movement_view, grad_reshape)
DEF(squeeze, SQUEEZE, 1, 1, VIEW, infer_squeeze, ltf_cpu_movement_view, grad_reshape)
DEF(concat, CONCAT, 1, -1, 0, infer_concat, ltf_cpu_movement_concat, grad_concat)
DEF(stack, STACK, 1, -1, 0, infer_stack, ltf_cpu_movement_concat, grad_stack)
DEF(split, SPLIT, 1, 1, VAROUT, infer_split, ltf_cpu_movement_split, grad_split)
DEF(unstack, UNSTACK, 1, 1, VAROUT, infer_unstack, ltf_cpu_movement_split, grad_unstack)
DEF(slice, SLICE, 1, 1, 0, infer_slice, ltf_cpu_movement_slice, grad_slice)
DEF(strided_slice, STRIDED_SLICE, 1, 1, 0, infer_strided_slice, ltf_cpu_movement_strided_slice, grad_strided_slice)
DEF(gather, GATHER, 2, 2, 0, infer_gather, ltf_cpu_movement_gather, grad_gather)
DEF(one_hot, ONE_HOT, 3, 3, 0, infer_one_hot, ltf_cpu_movement_one_hot, grad_one_hot)
DEF(tile, TILE, 1, 1, 0, infer_tile, ltf_cpu_movement_tile, grad_tile)
DEF(pad, PAD, 1, 2, 0, infer_pad, ltf_cpu_movement_pad, grad_pad)
DEF(reverse, REVERSE, 1, 1, 0, infer_reverse, ltf_cpu_movement_reverse, grad_reverse)
DEF(broadcast_to, BROADCAST_TO, 1, 2, 0, infer_broadcast_to_any, ltf_cpu_movement_broadcast_to, grad_broadcast_to)
DEF(unsorted_segment_sum, UNSORTED_SEGMENT_SUM, 2, 3, 0, infer_unsorted_segment_sum,
    ltf_cpu_movement_unsorted_segment_sum, grad_unsorted_segment_sum)
DEF(strided_slice_grad, STRIDED_SLICE_GRAD, 2, 2, 0, infer_strided_slice_grad, ltf_cpu_movement_strided_slice_grad,
    grad_strided_slice_grad)
DEF(broadcast_like, BROADCAST_LIKE, 2, 2, 0, infer_broadcast_like, ltf_cpu_movement_broadcast_to, grad_broadcast_like)
DEF(reshape_like, RESHAPE_LIKE, 2, 2, VIEW, infer_reshape_like, ltf_cpu_movement_view, grad_reshape_like)
DEF(split_like, SPLIT_LIKE, 2, -1, VAROUT, infer_split_like, kernel_split_like, grad_split_like)
DEF(shape, SHAPE, 1, 1, LTF_OP_NOT_DIFFERENTIABLE, infer_shape_of, kernel_shape_of, NULL)
DEF(size, SIZE, 1, 1, LTF_OP_NOT_DIFFERENTIABLE, infer_shape_of, kernel_shape_of, NULL)
/* }==== */
