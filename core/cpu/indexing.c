/*
** cpu/indexing.c: CPU kernels of the indexing family (ltf_ops/indexing.h):
** gather_nd, scatter_nd, tensor_scatter_nd_*, where_indices, unique, roll.
** Index values are 1-based; every one is checked before anything is read or
** written (when there is something to read or write: an empty result or
** empty updates check nothing, as gather), and an index outside the shape
** is an InvalidArgumentError naming the op, the position in 'indices' and
** the index (as TensorFlow on the CPU). Scatters apply their updates in order on one thread, so duplicates
** add up deterministically and the last update of a position wins.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"
#include "../shape.h"
#include "../storage.h"

LTF_CPU_KERNEL(ltf_cpu_indexing_gather_nd);
LTF_CPU_KERNEL(ltf_cpu_indexing_scatter_nd);
LTF_CPU_KERNEL(ltf_cpu_indexing_tensor_scatter);
LTF_CPU_KERNEL(ltf_cpu_indexing_where);
LTF_CPU_KERNEL(ltf_cpu_indexing_unique);
LTF_CPU_KERNEL(ltf_cpu_indexing_roll);

/* {==== Positions */
static int64_t index_at(const void *idx, int idx64, int64_t k) {
    return idx64 ? ((const int64_t *)idx)[k] : ((const int32_t *)idx)[k];
}

static void retain_strings(ltf_tensor *t) {
    if (t->dtype == LTF_DTYPE_STRING) ltf_strings_retain(LTF_DATA(t), t->numel);
}

/* The rows of K indices into the first K dims of 'shape' (rank r): element
** offsets of each row's slice (of 'slice' elements), checked. */
typedef struct nd_plan {
    int64_t N, K, slice;
    int64_t stride[LTF_MAX_RANK];
} nd_plan;

static void plan_nd(nd_plan *p, const ltf_tensor *indices, int rank, const int64_t *dims) {
    p->K = indices->dims[indices->rank - 1];
    p->N = 1;
    for (int d = 0; d < indices->rank - 1; d++) p->N *= indices->dims[d];
    p->slice = 1;
    for (int d = (int)p->K; d < rank; d++) p->slice *= dims[d];
    int64_t s = p->slice;
    for (int d = (int)p->K - 1; d >= 0; d--) {
        p->stride[d] = s;
        /* past a 0 dim the product may overflow, but then no index is valid
        ** and these strides are never used: saturate */
        if (__builtin_mul_overflow(s, dims[d], &s)) s = INT64_MAX;
    }
}

/* Check every row; writes the element offset of row n to off[n]. The
** message names row n as indices[i, j] (1-based) and its values. */
static ltf_status check_rows(ltf_ctx *ctx, const char *op, const char *what, const ltf_tensor *indices,
                             const nd_plan *p, int rank, const int64_t *dims, int64_t *off) {
    const void *idx = LTF_DATA(indices);
    int idx64 = indices->dtype == LTF_DTYPE_INT64;
    for (int64_t n = 0; n < p->N; n++) {
        int64_t o = 0;
        int bad = 0;
        for (int64_t k = 0; k < p->K; k++) {
            int64_t v = index_at(idx, idx64, n * p->K + k);
            if (v < 1 || v > dims[k]) bad = 1;
            else if (!bad) o += (v - 1) * p->stride[k];   /* within the shape: fits */
        }
        if (!bad) {
            off[n] = o;
            continue;
        }
        char pos[LTF_SHAPE_BUF], vals[LTF_SHAPE_BUF], sh[LTF_SHAPE_BUF];
        size_t m = (size_t)snprintf(pos, sizeof pos, "indices");
        int64_t rem = n, at[LTF_MAX_RANK] = {0};
        for (int d = indices->rank - 2; d >= 0; d--) {
            at[d] = rem % indices->dims[d];
            rem /= indices->dims[d];
        }
        for (int d = 0; d < indices->rank - 1 && m < sizeof pos; d++)
            m += (size_t)snprintf(pos + m, sizeof pos - m, "%s%lld%s", d ? ", " : "[", (long long)at[d] + 1,
                                  d == indices->rank - 2 ? "]" : "");
        m = (size_t)snprintf(vals, sizeof vals, "[");
        for (int64_t k = 0; k < p->K && m < sizeof vals; k++)
            m += (size_t)snprintf(vals + m, sizeof vals - m, "%s%lld", k ? ", " : "",
                                  (long long)index_at(idx, idx64, n * p->K + k));
        if (m < sizeof vals) snprintf(vals + m, sizeof vals - m, "]");
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: %s = %s does not index into %s %s (indices are 1-based)", op, pos, vals, what,
                        ltf_shape_str(rank, dims, sh, sizeof sh));
    }
    return LTF_OK;
}

static int64_t *offsets(ltf_ctx *ctx, int64_t n) {
    int64_t *off = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (!off) ltf_fail_oom(ctx, "indexing", sizeof(int64_t) * (size_t)n);
    return off;
}
/* }==== */

/* {==== gather_nd */
typedef struct gnd_job {
    const char *src;
    char *dst;
    const int64_t *off;
    size_t row;          /* bytes per slice */
    size_t es;
} gnd_job;

static void gnd_rows(void *arg, int64_t b, int64_t e) {
    const gnd_job *g = arg;
    for (int64_t n = b; n < e; n++)
        memcpy(g->dst + (size_t)n * g->row, g->src + (size_t)g->off[n] * g->es, g->row);
}

ltf_status ltf_cpu_indexing_gather_nd(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                      const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    const ltf_tensor *params = in[0], *indices = in[1];
    /* an empty result reads nothing: positions are checked only otherwise
    ** (as gather), and then every count below fits (the output's do) */
    if (out[0]->numel == 0) return LTF_OK;
    nd_plan p;
    plan_nd(&p, indices, params->rank, params->dims);
    int64_t *off = offsets(ctx, p.N);
    if (!off) return ctx->last_status;
    ltf_status st = check_rows(ctx, def->name, "param shape", indices, &p, params->rank, params->dims, off);
    if (st == LTF_OK) {
        size_t es = ltf_dtype_size(params->dtype);
        gnd_job g = { LTF_DATA(params), LTF_DATA(out[0]), off, (size_t)p.slice * es, es };
        int64_t grain = LTF_CPU_GRAIN / (p.slice > 0 ? p.slice : 1);
        ltf_pool_for(&ctx->pool, p.N, grain > 0 ? grain : 1, gnd_rows, &g);
        retain_strings(out[0]);
    }
    free(off);
    return st;
}
/* }==== */

/* {==== scatters */
/* 'U': the type sums run in: integers add in their unsigned twin, so
** overflow wraps (as TensorFlow's) instead of being undefined */
#define COMBINE(T, U)                                                              \
    do {                                                                           \
        T *d_ = (T *)(void *)dst;                                                  \
        const T *s_ = (const T *)(const void *)src;                                \
        switch (code) {                                                            \
        case LTF_SCATTER_ADD:                                                      \
            for (int64_t q = 0; q < n; q++) d_[q] = (T)((U)d_[q] + (U)s_[q]);      \
            break;                                                                 \
        case LTF_SCATTER_SUB:                                                      \
            for (int64_t q = 0; q < n; q++) d_[q] = (T)((U)d_[q] - (U)s_[q]);      \
            break;                                                                 \
        case LTF_SCATTER_MAX:                                                      \
            for (int64_t q = 0; q < n; q++)                                        \
                if (!(d_[q] >= s_[q]) && d_[q] == d_[q]) d_[q] = s_[q];            \
            break;                                                                 \
        default:                                                                   \
            for (int64_t q = 0; q < n; q++)                                        \
                if (!(d_[q] <= s_[q]) && d_[q] == d_[q]) d_[q] = s_[q];            \
            break;                                                                 \
        }                                                                          \
    } while (0)

/* Combine 'n' elements of 'src' into 'dst' (code is not UPDATE). A NaN,
** on either side, wins max and min. */
static void combine(ltf_dtype dt, int code, char *dst, const char *src, int64_t n) {
    switch (dt) {
    case LTF_DTYPE_FLOAT32: COMBINE(float, float); break;
    case LTF_DTYPE_FLOAT64: COMBINE(double, double); break;
    case LTF_DTYPE_INT32: COMBINE(int32_t, uint32_t); break;
    case LTF_DTYPE_INT64: COMBINE(int64_t, uint64_t); break;
    default: COMBINE(uint8_t, uint8_t); break;
    }
}

/* Apply the 'N' update slices to 'o' (already holding the base values). */
static void scatter_into(ltf_tensor *o, const ltf_tensor *updates, const nd_plan *p, const int64_t *off, int code) {
    size_t es = ltf_dtype_size(o->dtype);
    char *dst = LTF_DATA(o);
    const char *src = LTF_DATA(updates);
    if (p->slice == 0) return;
    for (int64_t r = 0; r < p->N; r++) {
        char *d = dst + (size_t)off[r] * es;
        const char *s = src + (size_t)(r * p->slice) * es;
        if (code != LTF_SCATTER_UPDATE) {
            combine(o->dtype, code, d, s, p->slice);
        } else if (o->dtype == LTF_DTYPE_STRING) {
            ltf_strings_release((ltf_string **)(void *)d, p->slice);
            memcpy(d, s, (size_t)p->slice * es);
            ltf_strings_retain((ltf_string **)(void *)d, p->slice);
        } else {
            memcpy(d, s, (size_t)p->slice * es);
        }
    }
}

ltf_status ltf_cpu_indexing_scatter_nd(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                       const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    const ltf_tensor *indices = in[0], *updates = in[1];
    ltf_tensor *o = out[0];
    if (o->numel > 0) memset(LTF_DATA(o), 0, (size_t)o->numel * ltf_dtype_size(o->dtype));
    if (updates->numel == 0) return LTF_OK;   /* nothing to place (and every count below fits) */
    nd_plan p;
    plan_nd(&p, indices, o->rank, o->dims);
    int64_t *off = offsets(ctx, p.N);
    if (!off) return ctx->last_status;
    ltf_status st = check_rows(ctx, def->name, "shape", indices, &p, o->rank, o->dims, off);
    if (st == LTF_OK) scatter_into(o, updates, &p, off, LTF_SCATTER_ADD);
    free(off);
    return st;
}

ltf_status ltf_cpu_indexing_tensor_scatter(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                           const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    const ltf_tensor *t = in[0], *indices = in[1], *updates = in[2];
    ltf_tensor *o = out[0];
    if (o->numel > 0) memcpy(LTF_DATA(o), LTF_DATA(t), (size_t)o->numel * ltf_dtype_size(o->dtype));
    retain_strings(o);
    if (updates->numel == 0) return LTF_OK;   /* nothing to place (and every count below fits) */
    nd_plan p;
    plan_nd(&p, indices, t->rank, t->dims);
    int64_t *off = offsets(ctx, p.N);
    if (!off) return ctx->last_status;
    ltf_status st = check_rows(ctx, def->name, "tensor shape", indices, &p, t->rank, t->dims, off);
    if (st == LTF_OK) scatter_into(o, updates, &p, off, def->code);
    free(off);
    return st;
}
/* }==== */

/* {==== where_indices */
static int nonzero(const char *p, ltf_dtype dt) {
    switch (dt) {
    case LTF_DTYPE_FLOAT32: return *(const float *)(const void *)p != 0.0f;   /* NaN counts as true */
    case LTF_DTYPE_FLOAT64: return *(const double *)(const void *)p != 0.0;
    case LTF_DTYPE_INT32: return *(const int32_t *)(const void *)p != 0;
    case LTF_DTYPE_INT64: return *(const int64_t *)(const void *)p != 0;
    default: return *(const uint8_t *)p != 0;
    }
}

ltf_status ltf_cpu_indexing_where(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                  const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)nin; (void)a; (void)nout;
    const ltf_tensor *c = in[0];
    size_t es = ltf_dtype_size(c->dtype);
    const char *src = LTF_DATA(c);
    int64_t count = 0;
    for (int64_t k = 0; k < c->numel; k++) count += nonzero(src + (size_t)k * es, c->dtype);
    int64_t dims[2] = { count, c->rank };
    ltf_tensor *o = ltf_tensor_empty(ctx, LTF_DTYPE_INT64, 2, dims);
    if (!o) return ctx->last_status;
    int64_t *dst = LTF_DATA(o), at[LTF_MAX_RANK] = {0};
    for (int64_t k = 0; k < c->numel; k++) {
        if (nonzero(src + (size_t)k * es, c->dtype)) {
            for (int d = 0; d < c->rank; d++) *dst++ = at[d] + 1;
        }
        for (int d = c->rank - 1; d >= 0; d--) {   /* advance the row-major position */
            if (++at[d] < c->dims[d]) break;
            at[d] = 0;
        }
    }
    out[0] = o;
    return LTF_OK;
}
/* }==== */

/* {==== unique
** One pass in order over x with an open-addressing hash table of the
** values seen so far: a value not in the table is new, and gets the next
** position in y (so y is in order of first appearance without sorting).
** Floats compare with ==: -0.0 hashes as 0.0, and a NaN is never in the
** table (every NaN is its own value, as TensorFlow). */
static uint64_t mix64(uint64_t z) {   /* splitmix64's finalizer */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Hash of element k (and whether it can equal anything: not NaN). */
static uint64_t hash_at(const ltf_tensor *x, int64_t k, int *comparable) {
    const char *b = LTF_DATA(x);
    *comparable = 1;
    uint64_t bits = 0;
    switch (x->dtype) {
    case LTF_DTYPE_FLOAT32:
    case LTF_DTYPE_FLOAT64: {
        double d = x->dtype == LTF_DTYPE_FLOAT32 ? (double)((const float *)(const void *)b)[k]
                                                 : ((const double *)(const void *)b)[k];
        if (d != d) {
            *comparable = 0;
            return 0;
        }
        if (d == 0) d = 0.0;   /* -0.0 == 0.0 */
        memcpy(&bits, &d, sizeof bits);
        break;
    }
    case LTF_DTYPE_INT32: bits = (uint64_t)(int64_t)((const int32_t *)(const void *)b)[k]; break;
    case LTF_DTYPE_INT64: bits = (uint64_t)((const int64_t *)(const void *)b)[k]; break;
    case LTF_DTYPE_STRING: {
        const ltf_string *str = ((ltf_string *const *)(const void *)b)[k];
        bits = 0xCBF29CE484222325ull;   /* FNV-1a */
        for (size_t q = 0; str && q < str->len; q++) bits = (bits ^ (unsigned char)str->bytes[q]) * 0x100000001B3ull;
        break;
    }
    default: bits = ((const uint8_t *)b)[k]; break;
    }
    return mix64(bits);
}

/* Whether elements i and j of x hold equal values (both comparable). */
static int same_value(const ltf_tensor *x, int64_t i, int64_t j) {
    const char *b = LTF_DATA(x);
    switch (x->dtype) {
    case LTF_DTYPE_FLOAT32: return ((const float *)(const void *)b)[i] == ((const float *)(const void *)b)[j];
    case LTF_DTYPE_FLOAT64: return ((const double *)(const void *)b)[i] == ((const double *)(const void *)b)[j];
    case LTF_DTYPE_INT32: return ((const int32_t *)(const void *)b)[i] == ((const int32_t *)(const void *)b)[j];
    case LTF_DTYPE_INT64: return ((const int64_t *)(const void *)b)[i] == ((const int64_t *)(const void *)b)[j];
    case LTF_DTYPE_STRING: {
        const ltf_string *u = ((ltf_string *const *)(const void *)b)[i], *v = ((ltf_string *const *)(const void *)b)[j];
        size_t lu = u ? u->len : 0, lv = v ? v->len : 0;
        return lu == lv && (lu == 0 || memcmp(u->bytes, v->bytes, lu) == 0);
    }
    default: return ((const uint8_t *)b)[i] == ((const uint8_t *)b)[j];
    }
}

static void put_index(ltf_tensor *t, int64_t k, int64_t v) {
    if (t->dtype == LTF_DTYPE_INT64) ((int64_t *)LTF_DATA(t))[k] = v;
    else ((int32_t *)LTF_DATA(t))[k] = (int32_t)v;
}

ltf_status ltf_cpu_indexing_unique(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                   const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *x = in[0];
    int64_t n = x->numel;
    ltf_dtype idt = a->i[0] == 0 ? LTF_DTYPE_INT32 : (ltf_dtype)a->i[0];
    if (idt == LTF_DTYPE_INT32 && n > INT32_MAX)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: %lld elements do not fit int32 indices (use out_idx = "
                        "tf.int64)", def->name, (long long)n);
    uint64_t cap = 16;
    while (cap < 2 * (uint64_t)n) cap *= 2;
    size_t m = sizeof(int64_t) * (size_t)(n > 0 ? n : 1);
    int64_t *table = malloc(sizeof(int64_t) * cap);   /* group ids, -1 empty */
    int64_t *grp = malloc(m), *first = malloc(m);
    ltf_tensor *y = NULL, *idx = NULL, *cnt = NULL;
    ltf_status st = LTF_OK;
    if (!table || !grp || !first) {
        st = ltf_fail_oom(ctx, def->name, sizeof(int64_t) * cap + 2 * m);
        goto done;
    }
    memset(table, 0xFF, sizeof(int64_t) * cap);
    int64_t ng = 0;
    for (int64_t k = 0; k < n; k++) {
        int comparable;
        uint64_t h = hash_at(x, k, &comparable) & (cap - 1);
        int64_t g = -1;
        if (comparable) {
            for (; table[h] >= 0; h = (h + 1) & (cap - 1))
                if (same_value(x, first[table[h]], k)) {
                    g = table[h];
                    break;
                }
        }
        if (g < 0) {   /* new value (a NaN always is) */
            g = ng++;
            first[g] = k;
            if (comparable) table[h] = g;
        }
        grp[k] = g;
    }
    int64_t dy[1] = { ng }, dx[1] = { n };
    y = ltf_tensor_empty(ctx, x->dtype, 1, dy);
    idx = y ? ltf_tensor_empty(ctx, idt, 1, dx) : NULL;
    cnt = idx && def->code ? ltf_tensor_empty(ctx, idt, 1, dy) : NULL;
    if (!y || !idx || (def->code && !cnt)) {
        st = ctx->last_status;
        goto done;
    }
    size_t es = ltf_dtype_size(x->dtype);
    for (int64_t g = 0; g < ng; g++)
        memcpy((char *)LTF_DATA(y) + (size_t)g * es, (const char *)LTF_DATA(x) + (size_t)first[g] * es, es);
    retain_strings(y);
    if (cnt)
        for (int64_t g = 0; g < ng; g++) put_index(cnt, g, 0);
    for (int64_t k = 0; k < n; k++) {
        int64_t u = grp[k];
        put_index(idx, k, u + 1);
        if (cnt) {
            if (idt == LTF_DTYPE_INT64) ((int64_t *)LTF_DATA(cnt))[u]++;
            else ((int32_t *)LTF_DATA(cnt))[u]++;
        }
    }
    out[0] = y;
    out[1] = idx;
    if (def->code) out[2] = cnt;
    y = idx = cnt = NULL;
done:
    ltf_tensor_release(y);
    ltf_tensor_release(idx);
    ltf_tensor_release(cnt);
    free(table);
    free(grp);
    free(first);
    return st;
}
/* }==== */

/* {==== roll */
ltf_status ltf_cpu_indexing_roll(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)ctx; (void)def; (void)nin; (void)nout;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    size_t es = ltf_dtype_size(x->dtype);
    if (o->numel == 0) return LTF_OK;
    int r = x->rank;
    if (r == 0) {
        memcpy(LTF_DATA(o), LTF_DATA(x), es);
        retain_strings(o);
        return LTF_OK;
    }
    int64_t shift[LTF_MAX_RANK] = {0}, stride[LTF_MAX_RANK] = {0};
    for (int k = 0; k < a->nints; k++) {
        int ax = (int)(a->ints2[k] < 0 ? a->ints2[k] + r : a->ints2[k]);
        int64_t D = x->dims[ax];
        int64_t s = a->ints[k] % D;   /* D >= 1: the tensor is not empty */
        shift[ax] = ((shift[ax] + s) % D + D) % D;
    }
    int64_t st = 1;
    for (int d = r - 1; d >= 0; d--) {
        stride[d] = st;
        st *= x->dims[d];
    }
    int64_t L = x->dims[r - 1], s = shift[r - 1], rows = o->numel / L;
    const char *src = LTF_DATA(x);
    char *dst = LTF_DATA(o);
    int64_t at[LTF_MAX_RANK] = {0};
    for (int64_t row = 0; row < rows; row++) {
        int64_t base = 0;   /* source row: each output position minus the shift */
        for (int d = 0; d < r - 1; d++) {
            int64_t v = at[d] - shift[d];
            if (v < 0) v += x->dims[d];
            base += v * stride[d];
        }
        char *drow = dst + (size_t)(row * L) * es;
        const char *srow = src + (size_t)base * es;
        memcpy(drow + (size_t)s * es, srow, (size_t)(L - s) * es);
        if (s) memcpy(drow, srow + (size_t)(L - s) * es, (size_t)s * es);
        for (int d = r - 2; d >= 0; d--) {
            if (++at[d] < x->dims[d]) break;
            at[d] = 0;
        }
    }
    retain_strings(o);
    return LTF_OK;
}
/* }==== */

/* {==== sequence_mask */
LTF_CPU_KERNEL(ltf_cpu_indexing_sequence_mask);

ltf_status ltf_cpu_indexing_sequence_mask(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                          const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *l = in[0];
    const void *lv = LTF_DATA(l);
    int l64 = l->dtype == LTF_DTYPE_INT64;
    int64_t maxlen = a->i[0];
    if (maxlen < 0) {
        maxlen = 0;
        for (int64_t k = 0; k < l->numel; k++) {
            int64_t v = index_at(lv, l64, k);
            if (v > maxlen) maxlen = v;
        }
    }
    ltf_dtype dt = (ltf_dtype)a->i[1];
    int64_t dims[LTF_MAX_RANK];
    if (l->rank > 0) memcpy(dims, l->dims, sizeof(int64_t) * (size_t)l->rank);
    dims[l->rank] = maxlen;
    ltf_status st = ltf_shape_check(ctx, def->name, dt, l->rank + 1, dims);
    if (st != LTF_OK) return st;
    ltf_tensor *o = ltf_tensor_empty(ctx, dt, l->rank + 1, dims);
    if (!o) return ctx->last_status;
    char *dst = LTF_DATA(o);
    size_t es = ltf_dtype_size(dt);
    for (int64_t k = 0; k < l->numel; k++) {
        int64_t v = index_at(lv, l64, k);
        for (int64_t j = 0; j < maxlen; j++) {
            int on = j < v;
            char *e = dst + (size_t)(k * maxlen + j) * es;
            switch (dt) {
            case LTF_DTYPE_FLOAT32: *(float *)(void *)e = (float)on; break;
            case LTF_DTYPE_FLOAT64: *(double *)(void *)e = on; break;
            case LTF_DTYPE_INT32: *(int32_t *)(void *)e = on; break;
            case LTF_DTYPE_INT64: *(int64_t *)(void *)e = on; break;
            default: *(uint8_t *)e = (uint8_t)on; break;
            }
        }
    }
    out[0] = o;
    return LTF_OK;
}
/* }==== */
