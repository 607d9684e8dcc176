/*
** cpu/movement.c: CPU kernels for the movement ops. Nearly all of them are
** one strided copy: an n-d loop 'out[o . os] = in[i . is]' whose strides
** may be 0 (broadcast, tile), negative (reverse, strided_slice) or permuted
** (transpose). The copy engine drops size-1 dims, merges dims contiguous in
** both tensors, then moves contiguous runs with memcpy, or 32x32 tiles when
** the innermost dims are swapped (transpose), split across the context's
** threads. String elements are copied as pointers and retained once at the
** end, so a kernel that fails must do so before it copies.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"
#include "../shape.h"
#include "../storage.h"

/* {==== Strided copy engine */
#define ND_MAX (2 * LTF_MAX_RANK + 2)
#define TILE 32

typedef struct nd_copy {
    int rank;
    int64_t dims[ND_MAX];
    int64_t os[ND_MAX], is[ND_MAX];   /* strides in elements; 'is' may be 0 or negative */
} nd_copy;

/* Row-major strides; past a 0 dim (no elements) the product may not fit:
** those strides are never used, but computed without overflow. */
static void contiguous_strides(int rank, const int64_t *dims, int64_t *st) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        st[i] = s;
        if (__builtin_mul_overflow(s, dims[i], &s)) s = 0;
    }
}

/* Drop size-1 dims and merge a dim into the previous one when both tensors
** walk them as one. Returns 0 when there is nothing to copy. */
static int nd_simplify(nd_copy *c) {
    int r = 0;
    for (int i = 0; i < c->rank; i++)   /* first: past a 0 dim the products below may not fit */
        if (c->dims[i] == 0) return 0;
    for (int i = 0; i < c->rank; i++) {
        if (c->dims[i] == 1) continue;
        if (r > 0 && c->os[r - 1] == c->os[i] * c->dims[i] && c->is[r - 1] == c->is[i] * c->dims[i]) {
            c->dims[r - 1] *= c->dims[i];
            c->os[r - 1] = c->os[i];
            c->is[r - 1] = c->is[i];
            continue;
        }
        c->dims[r] = c->dims[i];
        c->os[r] = c->os[i];
        c->is[r] = c->is[i];
        r++;
    }
    if (r == 0) {   /* one element */
        c->dims[0] = 1;
        c->os[0] = c->is[0] = 1;
        r = 1;
    }
    c->rank = r;
    return 1;
}

typedef struct nd_job {
    const nd_copy *c;
    char *o;
    const char *i;
    size_t es;
    int skip1, skip2;         /* dims the outer index does not walk (-1: none) */
    int tq;                   /* tiled: the dim with input stride 1 */
} nd_job;

/* Offsets of outer index 'row' over every dim but 'last' and the skipped ones. */
static void nd_offsets(const nd_job *j, int64_t row, int last, int64_t *oo, int64_t *io) {
    const nd_copy *c = j->c;
    int64_t o = 0, i = 0;
    for (int d = last - 1; d >= 0; d--) {
        if (d == j->skip1 || d == j->skip2) continue;
        int64_t k = row % c->dims[d];
        row /= c->dims[d];
        o += k * c->os[d];
        i += k * c->is[d];
    }
    *oo = o;
    *io = i;
}

#define STRIDED_LOOP(T)                                                   \
    do {                                                                  \
        T *O = (T *)(void *)po;                                           \
        const T *I = (const T *)(const void *)pi;                         \
        for (int64_t k = 0; k < n; k++) O[k * os] = I[k * is];            \
    } while (0)

/* 'n' elements: out stride 'os', in stride 'is' (elements). */
static void strided_run(char *po, const char *pi, int64_t n, int64_t os, int64_t is, size_t es) {
    if (os == 1 && is == 1) {
        memcpy(po, pi, (size_t)n * es);
        return;
    }
    switch (es) {
    case 1: STRIDED_LOOP(uint8_t); break;
    case 2: STRIDED_LOOP(uint16_t); break;   /* float16, bfloat16 */
    case 4: STRIDED_LOOP(uint32_t); break;
    case 8: STRIDED_LOOP(uint64_t); break;
    default:
        for (int64_t k = 0; k < n; k++) memcpy(po + (size_t)(k * os) * es, pi + (ptrdiff_t)(k * is) * (ptrdiff_t)es, es);
    }
}

static void nd_rows(void *arg, int64_t b, int64_t e) {
    const nd_job *j = arg;
    const nd_copy *c = j->c;
    int last = c->rank - 1;
    for (int64_t row = b; row < e; row++) {
        int64_t oo, io;
        nd_offsets(j, row, last, &oo, &io);
        strided_run(j->o + (size_t)oo * j->es, j->i + (ptrdiff_t)io * (ptrdiff_t)j->es, c->dims[last],
                    c->os[last], c->is[last], j->es);
    }
}

/* One TILE x TILE block through a local buffer: input rows (contiguous
** along 'i') in, output rows (contiguous along 'jj') out, so that neither
** side walks a power-of-two stride across the cache's sets. */
#define TILE_LOOP(T)                                                            \
    do {                                                                        \
        T *O = (T *)(void *)po;                                                 \
        const T *I = (const T *)(const void *)pi;                               \
        T buf[TILE][TILE];                                                      \
        for (int64_t jb = 0; jb < nj; jb += TILE) {                             \
            int64_t je = jb + TILE < nj ? jb + TILE : nj;                       \
            for (int64_t jj = jb; jj < je; jj++) {                              \
                const T *row = I + jj * isl;                                    \
                for (int64_t i = ib; i < ie; i++) buf[jj - jb][i - ib] = row[i]; \
            }                                                                   \
            for (int64_t i = ib; i < ie; i++) {                                 \
                T *orow = O + i * osq;                                          \
                for (int64_t jj = jb; jj < je; jj++) orow[jj] = buf[jj - jb][i - ib]; \
            }                                                                   \
        }                                                                       \
    } while (0)

/* Unit = (outer index, block of TILE rows of dim 'tq'). */
static void nd_tiles(void *arg, int64_t b, int64_t e) {
    const nd_job *j = arg;
    const nd_copy *c = j->c;
    int last = c->rank - 1, q = j->tq;
    int64_t nq = c->dims[q], nj = c->dims[last], nb = (nq + TILE - 1) / TILE;
    int64_t osq = c->os[q], isl = c->is[last];
    for (int64_t u = b; u < e; u++) {
        int64_t oo, io;
        nd_offsets(j, u / nb, last, &oo, &io);
        int64_t ib = (u % nb) * TILE, ie = ib + TILE < nq ? ib + TILE : nq;
        char *po = j->o + (size_t)oo * j->es;
        const char *pi = j->i + (ptrdiff_t)io * (ptrdiff_t)j->es;
        switch (j->es) {
        case 1: TILE_LOOP(uint8_t); break;
        case 2: TILE_LOOP(uint16_t); break;
        case 4: TILE_LOOP(uint32_t); break;
        default: TILE_LOOP(uint64_t); break;
        }
    }
}

/* Copy per 'c' from 'in' to 'out' (element size 'es'); 'c' is simplified
** in place. Every element reached must lie inside both buffers. */
static void nd_run(ltf_ctx *ctx, nd_copy *c, char *out, const char *in, size_t es) {
    if (!nd_simplify(c)) return;
    int last = c->rank - 1;
    nd_job j = { c, out, in, es, -1, -1, -1 };
    int64_t total = 1;
    for (int d = 0; d < c->rank; d++) total *= c->dims[d];
    if (c->os[last] == 1 && c->is[last] > 1 && c->dims[last] >= 8 && (es == 1 || es == 2 || es == 4 || es == 8)) {
        for (int d = 0; d < last; d++)
            if (c->is[d] == 1 && c->dims[d] >= 8) j.tq = d;
    }
    if (j.tq >= 0) {
        j.skip1 = j.tq;
        int64_t units = total / c->dims[last] / c->dims[j.tq] * ((c->dims[j.tq] + TILE - 1) / TILE);
        int64_t per = TILE * c->dims[last];
        int64_t grain = LTF_CPU_GRAIN / per;
        ltf_pool_for(&ctx->pool, units, grain > 0 ? grain : 1, nd_tiles, &j);
        return;
    }
    int64_t inner = c->dims[last];
    int64_t grain = LTF_CPU_GRAIN / inner;
    ltf_pool_for(&ctx->pool, total / inner, grain > 0 ? grain : 1, nd_rows, &j);
}
/* }==== */

/* {==== Helpers */
static void retain_strings(ltf_tensor *t) {
    if (t->dtype == LTF_DTYPE_STRING) ltf_strings_retain(LTF_DATA(t), t->numel);
}

/* Normalized axis; inference already checked it. */
static int norm_axis(int64_t axis, int rank) {
    return (int)(axis < 0 ? axis + rank : axis);
}

/* Write 'n' copies of the element at 'v' (es bytes) to 'dst'. */
static void fill_elements(char *dst, const void *v, int64_t n, size_t es) {
    switch (es) {
    case 1: memset(dst, *(const uint8_t *)v, (size_t)n); return;
    case 2: {
        uint16_t x;
        memcpy(&x, v, 2);
        uint16_t *d = (uint16_t *)(void *)dst;
        for (int64_t k = 0; k < n; k++) d[k] = x;
        return;
    }
    case 4: {
        uint32_t x;
        memcpy(&x, v, 4);
        uint32_t *d = (uint32_t *)(void *)dst;
        for (int64_t k = 0; k < n; k++) d[k] = x;
        return;
    }
    case 8: {
        uint64_t x;
        memcpy(&x, v, 8);
        uint64_t *d = (uint64_t *)(void *)dst;
        for (int64_t k = 0; k < n; k++) d[k] = x;
        return;
    }
    default:
        for (int64_t k = 0; k < n; k++) memcpy(dst + (size_t)k * es, v, es);
    }
}
/* }==== */

/* {==== View ops: reshape, expand_dims, squeeze */
ltf_status ltf_cpu_movement_view(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)ctx; (void)def; (void)nin; (void)a; (void)nout;
    if (out[0]->storage == in[0]->storage && out[0]->offset == in[0]->offset) return LTF_OK;
    size_t nbytes = (size_t)out[0]->numel * ltf_dtype_size(out[0]->dtype);
    if (nbytes) memcpy(LTF_DATA(out[0]), LTF_DATA(in[0]), nbytes);
    retain_strings(out[0]);
    return LTF_OK;
}
/* }==== */

/* {==== transpose */
ltf_status ltf_cpu_movement_transpose(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                      const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)nin; (void)nout;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    if (o->numel == 0) return LTF_OK;   /* and otherwise every stride below fits */
    int r = x->rank;
    int64_t st[LTF_MAX_RANK];
    contiguous_strides(r, x->dims, st);
    nd_copy c = { .rank = r };
    contiguous_strides(r, o->dims, c.os);
    for (int k = 0; k < r; k++) {
        int p = a->nints >= 0 ? norm_axis(a->ints[k], r) : r - 1 - k;
        c.dims[k] = o->dims[k];
        c.is[k] = st[p];
    }
    nd_run(ctx, &c, LTF_DATA(o), LTF_DATA(x), ltf_dtype_size(x->dtype));
    retain_strings(o);
    return LTF_OK;
}
/* }==== */

/* {==== concat, stack, split, unstack: slabs along one axis */
/* Copy 'part' (shape 'dims', contiguous) into or out of the slab of 'whole'
** that starts at 'at' along 'axis'; 'whole' has shape 'wdims' (same rank). */
static void slab_copy(ltf_ctx *ctx, int rank, const int64_t *dims, const int64_t *wdims, int axis,
                      int64_t at, char *whole, char *part, size_t es, int into_whole) {
    nd_copy c = { .rank = rank };
    int64_t ws[LTF_MAX_RANK], ps[LTF_MAX_RANK];
    contiguous_strides(rank, wdims, ws);
    contiguous_strides(rank, dims, ps);
    memcpy(c.dims, dims, sizeof(int64_t) * (size_t)rank);
    char *w = whole + (size_t)(at * ws[axis]) * es;
    if (into_whole) {
        memcpy(c.os, ws, sizeof ws);
        memcpy(c.is, ps, sizeof ps);
        nd_run(ctx, &c, w, part, es);
    } else {
        memcpy(c.os, ps, sizeof ps);
        memcpy(c.is, ws, sizeof ws);
        nd_run(ctx, &c, part, w, es);
    }
}

ltf_status ltf_cpu_movement_concat(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                   const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nout;
    ltf_tensor *o = out[0];
    int stack = def->code == LTF_OP_STACK;
    int axis = norm_axis(a->i[0], o->rank);
    size_t es = ltf_dtype_size(o->dtype);
    int64_t at = 0;
    for (int k = 0; k < nin; k++) {
        int64_t dims[LTF_MAX_RANK];
        memcpy(dims, o->dims, sizeof(int64_t) * (size_t)o->rank);
        dims[axis] = stack ? 1 : in[k]->dims[axis];
        if (in[k]->numel > 0)
            slab_copy(ctx, o->rank, dims, o->dims, axis, at, LTF_DATA(o), LTF_DATA(in[k]), es, 1);
        at += dims[axis];
    }
    retain_strings(o);
    return LTF_OK;
}

ltf_status ltf_cpu_movement_split(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                  const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin;
    const ltf_tensor *x = in[0];
    int axis = norm_axis(a->i[0], x->rank);
    int unstack = def->code == LTF_OP_UNSTACK;
    size_t es = ltf_dtype_size(x->dtype);
    int64_t at = 0;
    for (int k = 0; k < nout; k++) {
        int64_t dims[LTF_MAX_RANK];
        memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
        dims[axis] = unstack ? 1 : out[k]->dims[axis];
        if (out[k]->numel > 0)
            slab_copy(ctx, x->rank, dims, x->dims, axis, at, LTF_DATA(x), LTF_DATA(out[k]), es, 0);
        at += dims[axis];
        retain_strings(out[k]);
    }
    return LTF_OK;
}
/* }==== */

/* {==== slice, strided_slice, reverse, broadcast_to, tile */
/* Copy 'x' into the contiguous 'o' reading dims 'dims' from element
** 'offset' with input strides 'is'. */
static void strided_read(ltf_ctx *ctx, const ltf_tensor *x, ltf_tensor *o, int rank, const int64_t *dims,
                         const int64_t *is, int64_t offset) {
    if (o->numel == 0) return;
    nd_copy c = { .rank = rank };
    memcpy(c.dims, dims, sizeof(int64_t) * (size_t)rank);
    memcpy(c.is, is, sizeof(int64_t) * (size_t)rank);
    contiguous_strides(rank, dims, c.os);
    size_t es = ltf_dtype_size(x->dtype);
    nd_run(ctx, &c, LTF_DATA(o), (const char *)LTF_DATA(x) + (size_t)offset * es, es);
    retain_strings(o);
}

ltf_status ltf_cpu_movement_slice(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                  const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)nin; (void)nout;
    const ltf_tensor *x = in[0];
    if (out[0]->numel == 0) return LTF_OK;   /* and otherwise x is not empty: its strides fit */
    int64_t st[LTF_MAX_RANK], offset = 0;
    contiguous_strides(x->rank, x->dims, st);
    for (int k = 0; k < x->rank; k++) {
        int64_t b = a->ints[k] < 0 ? a->ints[k] + x->dims[k] : a->ints[k];
        if (out[0]->dims[k] > 0) offset += b * st[k];
    }
    strided_read(ctx, x, out[0], x->rank, out[0]->dims, st, offset);
    return LTF_OK;
}

ltf_status ltf_cpu_movement_strided_slice(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                          int nin, const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *x = in[0];
    ltf_strided_plan p;
    ltf_status s = ltf_cpu_movement_strided_plan(ctx, def->name, x->rank, x->dims, a, &p);
    if (s != LTF_OK) return s;
    if (out[0]->numel == 0) return LTF_OK;   /* and otherwise x is not empty: starts and steps fit */
    int64_t st[LTF_MAX_RANK], is[LTF_MAX_RANK], offset = 0;
    contiguous_strides(x->rank, x->dims, st);
    for (int k = 0; k < x->rank; k++) {
        offset += p.start[k] * st[k];
        is[k] = p.step[k] * st[k];
    }
    strided_read(ctx, x, out[0], x->rank, p.count, is, offset);
    return LTF_OK;
}

ltf_status ltf_cpu_movement_reverse(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                    const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)nin; (void)nout;
    const ltf_tensor *x = in[0];
    if (x->numel == 0) return LTF_OK;
    int64_t st[LTF_MAX_RANK], offset = 0;
    contiguous_strides(x->rank, x->dims, st);
    for (int k = 0; k < a->nints; k++) {
        int d = norm_axis(a->ints[k], x->rank);
        if (x->dims[d] > 0) offset += (x->dims[d] - 1) * st[d];
        st[d] = -st[d];
    }
    strided_read(ctx, x, out[0], x->rank, x->dims, st, offset);
    return LTF_OK;
}

ltf_status ltf_cpu_movement_broadcast_to(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                         int nin, const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)nin; (void)a; (void)nout;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    int64_t is[LTF_MAX_RANK];
    ltf_broadcast_strides(x->rank, x->dims, o->rank, o->dims, is);
    strided_read(ctx, x, o, o->rank, o->dims, is, 0);
    return LTF_OK;
}

/* Output dim k of size m_k * d_k is walked as (m_k, d_k): the repeat has
** input stride 0 and output stride d_k * os_k. */
ltf_status ltf_cpu_movement_tile(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)nin; (void)nout;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    if (o->numel == 0) return LTF_OK;
    int r = x->rank;
    int64_t is[LTF_MAX_RANK], os[LTF_MAX_RANK];
    contiguous_strides(r, x->dims, is);
    contiguous_strides(r, o->dims, os);
    nd_copy c = { .rank = 2 * r };
    for (int k = 0; k < r; k++) {
        c.dims[2 * k] = a->ints[k];
        c.is[2 * k] = 0;
        c.os[2 * k] = x->dims[k] * os[k];
        c.dims[2 * k + 1] = x->dims[k];
        c.is[2 * k + 1] = is[k];
        c.os[2 * k + 1] = os[k];
    }
    size_t es = ltf_dtype_size(x->dtype);
    nd_run(ctx, &c, LTF_DATA(o), LTF_DATA(x), es);
    retain_strings(o);
    return LTF_OK;
}
/* }==== */

/* {==== strided_slice plan */
static int bit(uint64_t mask, int k) { return k < 64 && ((mask >> k) & 1u); }

ltf_status ltf_cpu_movement_strided_plan(ltf_ctx *ctx, const char *op, int rank, const int64_t *dims,
                                         const ltf_attrs *a, ltf_strided_plan *p) {
    if (a->nints < 0 || a->nints % 2)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'begin' and 'end' must have the same length", op);
    int n = a->nints / 2;
    if (a->nints2 >= 0 && a->nints2 != n)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'strides' has %d entries but 'begin' has %d", op,
                        a->nints2, n);
    uint64_t bm = (uint64_t)a->i[0], em = (uint64_t)a->i[1], sm = (uint64_t)a->i[2];
    uint64_t nm = (uint64_t)a->i[3] & 0xffffffffu, elm = (uint64_t)a->i[3] >> 32;
    int consumed = 0, ellipses = 0;
    for (int k = 0; k < n; k++) {
        int64_t s = a->nints2 >= 0 ? a->ints2[k] : 1;
        if (bit(elm, k)) {
            ellipses++;
            continue;
        }
        if (bit(nm, k)) continue;
        consumed++;
        if (!bit(sm, k) && (s == 0 || s == INT64_MIN))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'strides' entry %d is %lld, must be nonzero", op,
                            k + 1, (long long)s);
    }
    if (ellipses > 1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: at most one ellipsis is allowed, got %d", op, ellipses);
    if (rank < 0) {
        p->out_rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    if (consumed > rank)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: too many indices: %d for a tensor of rank %d", op,
                        consumed, rank);
    int d = 0, r = 0;
    for (int k = 0; k <= n; k++) {
        if (k == n || bit(elm, k)) {   /* the ellipsis, or the implicit one at the end */
            int full = k == n ? rank - d : rank - consumed;
            for (int f = 0; f < full; f++, d++) {
                if (r >= LTF_MAX_RANK) goto too_big;
                p->start[d] = 0;
                p->step[d] = 1;
                p->count[d] = dims[d];
                p->out_dims[r++] = dims[d];
            }
            continue;
        }
        if (bit(nm, k)) {
            if (r >= LTF_MAX_RANK) goto too_big;
            p->out_dims[r++] = 1;
            continue;
        }
        int64_t D = dims[d], b = a->ints[k], e = a->ints[n + k];
        int64_t s = a->nints2 >= 0 ? a->ints2[k] : 1;
        if (bit(sm, k)) {
            int64_t idx = b < 0 && D >= 0 ? b + D : b;
            if (D >= 0 && (idx < 0 || idx >= D)) {
                if (D == 0)
                    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                                    "%s: index %lld is out of range for axis %d of size 0", op, LTF_AXIS_USER(b),
                                    d + 1);
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                                "%s: index %lld is out of range for axis %d of size %lld (expected 1..%lld or -%lld..-1)",
                                op, LTF_AXIS_USER(b), d + 1, (long long)D, (long long)D, (long long)D);
            }
            p->start[d] = idx;
            p->step[d] = 1;
            p->count[d] = 1;
            d++;
            continue;
        }
        if (r >= LTF_MAX_RANK) goto too_big;
        if (D < 0) {
            p->start[d] = 0;
            p->step[d] = s;
            p->count[d] = -1;
            p->out_dims[r++] = -1;
            d++;
            continue;
        }
        int64_t count;
        if (s > 0) {
            b = bit(bm, k) ? 0 : (b < 0 ? b + D : b);
            e = bit(em, k) ? D - 1 : (e < 0 ? e + D : e);
            if (b < 0) b = 0;
            if (e > D - 1) e = D - 1;
            count = b < D && e >= b ? (e - b) / s + 1 : 0;
        } else {
            b = bit(bm, k) ? D - 1 : (b < 0 ? b + D : b);
            e = bit(em, k) ? 0 : (e < 0 ? e + D : e);
            if (b > D - 1) b = D - 1;
            if (e < 0) e = 0;
            count = b >= 0 && b >= e ? (b - e) / -s + 1 : 0;
        }
        p->start[d] = count > 0 ? b : 0;
        p->step[d] = count > 1 ? s : 1;
        p->count[d] = count;
        p->out_dims[r++] = count;
        d++;
    }
    p->out_rank = r;
    return LTF_OK;
too_big:
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the result would have more than %d dimensions", op,
                    LTF_MAX_RANK);
}
/* }==== */

/* {==== gather */
typedef struct gather_job {
    const char *params;
    char *out;
    const void *idx;
    int idx64;
    int64_t O, N, J, inner;   /* per batch: outer rows, axis size, indices, inner elements */
    size_t es;
} gather_job;

static int64_t index_at(const void *idx, int idx64, int64_t k) {
    return idx64 ? ((const int64_t *)idx)[k] : ((const int32_t *)idx)[k];
}

/* "name[i, j]": the 1-based position of flat element 'k' of 'indices'. */
static const char *index_pos(const ltf_tensor *indices, const char *name, int64_t k, char *pos, size_t size) {
    size_t n = (size_t)snprintf(pos, size, "%s", name);
    int64_t rem = k, at[LTF_MAX_RANK] = {0};
    for (int d = indices->rank - 1; d >= 0; d--) {
        at[d] = rem % indices->dims[d];
        rem /= indices->dims[d];
    }
    for (int d = 0; d < indices->rank && n < size; d++)
        n += (size_t)snprintf(pos + n, size - n, "%s%lld%s", d ? ", " : "[", (long long)at[d] + 1,
                              d == indices->rank - 1 ? "]" : "");
    return pos;
}

/* Units are (batch, outer, index) triples in output order, each a run of
** 'inner' elements; counters advance without divisions after the first. */
static void gather_rows(void *arg, int64_t b, int64_t e) {
    const gather_job *g = arg;
    size_t es = g->es, row = (size_t)g->inner * es;
    int64_t jj = b % g->J, t = b / g->J;          /* t = batch * O + outer */
    int64_t o = t % g->O, bb = t / g->O;
    for (int64_t u = b; u < e; u++) {
        int64_t v = index_at(g->idx, g->idx64, bb * g->J + jj) - 1;
        const char *src = g->params + (size_t)(t * g->N + v) * row;
        char *dst = g->out + (size_t)u * row;
        if (g->inner == 1) {
            switch (es) {
            case 1: *(uint8_t *)dst = *(const uint8_t *)src; break;
            case 2: *(uint16_t *)(void *)dst = *(const uint16_t *)(const void *)src; break;
            case 4: *(uint32_t *)(void *)dst = *(const uint32_t *)(const void *)src; break;
            case 8: *(uint64_t *)(void *)dst = *(const uint64_t *)(const void *)src; break;
            default: memcpy(dst, src, es);
            }
        } else {
            memcpy(dst, src, row);
        }
        if (++jj == g->J) {
            jj = 0;
            t++;
            if (++o == g->O) {
                o = 0;
                bb++;
            }
        }
    }
}

ltf_status ltf_cpu_movement_gather(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                   const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *params = in[0], *indices = in[1];
    ltf_tensor *o = out[0];
    int axis = norm_axis(a->i[0], params->rank);
    int bd = (int)(a->i[1] < 0 ? a->i[1] + indices->rank : a->i[1]);
    int64_t B = 1, O = 1, inner = 1, J = 1, N = params->dims[axis];
    int idx64 = indices->dtype == LTF_DTYPE_INT64;
    const void *idx = LTF_DATA(indices);
    if (o->numel == 0) return LTF_OK;   /* as TensorFlow: indices are checked only when something is read */
    for (int64_t k = 0; k < indices->numel; k++) {
        int64_t v = index_at(idx, idx64, k);
        if (v >= 1 && v <= N) continue;
        char pos[LTF_SHAPE_BUF];
        index_pos(indices, "indices", k, pos, sizeof pos);
        if (N == 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: %s = %lld is out of range: axis %d of params has size 0", def->name,
                            pos, (long long)v, axis + 1);
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: %s = %lld is out of range: indices are 1-based, expected 1..%lld (axis %d of params)",
                        def->name, pos, (long long)v, (long long)N, axis + 1);
    }
    /* each product is one of the output's (B, O, J, inner): it fits, the output not being empty */
    for (int d = 0; d < bd; d++) B *= params->dims[d];
    for (int d = bd; d < axis; d++) O *= params->dims[d];
    for (int d = axis + 1; d < params->rank; d++) inner *= params->dims[d];
    for (int d = bd; d < indices->rank; d++) J *= indices->dims[d];
    gather_job g = { LTF_DATA(params), LTF_DATA(o), idx, idx64, O, N, J, inner, ltf_dtype_size(o->dtype) };
    int64_t grain = LTF_CPU_GRAIN / (inner > 0 ? inner : 1);
    ltf_pool_for(&ctx->pool, B * O * J, grain > 0 ? grain : 1, gather_rows, &g);
    retain_strings(o);
    return LTF_OK;
}
/* }==== */

/* {==== unsorted_segment_sum (gather's transpose) */
typedef struct segsum_job {
    const char *data;
    char *out;
    const void *ids;
    int ids64;
    ltf_dtype dt;
    int64_t O, J, N, inner;    /* per batch: outer rows, ids, segments, inner elements */
    int64_t csize, chunks;     /* inner elements per unit, units per outer row */
} segsum_job;

#define SEGSUM_ADD(T)                                              \
    do {                                                           \
        T *d_ = (T *)(void *)dst;                                  \
        const T *s_ = (const T *)(const void *)src;                \
        for (int64_t q = 0; q < n; q++) d_[q] += s_[q];            \
    } while (0)

/* Units are (batch * outer row, chunk of the inner elements): each owns its
** part of the output and adds the ids in order, so sums are deterministic. */
static void segsum_rows(void *arg, int64_t b, int64_t e) {
    const segsum_job *g = arg;
    size_t es = ltf_dtype_size(g->dt);
    for (int64_t u = b; u < e; u++) {
        int64_t t = u / g->chunks, c0 = (u % g->chunks) * g->csize;
        int64_t n = g->inner - c0 < g->csize ? g->inner - c0 : g->csize;
        int64_t bb = t / g->O;
        for (int64_t j = 0; j < g->J; j++) {
            int64_t v = index_at(g->ids, g->ids64, bb * g->J + j);
            if (v < 1) continue;   /* negative: dropped */
            const char *src = g->data + (size_t)((t * g->J + j) * g->inner + c0) * es;
            char *dst = g->out + (size_t)((t * g->N + v - 1) * g->inner + c0) * es;
            switch (g->dt) {
            case LTF_DTYPE_FLOAT32: SEGSUM_ADD(float); break;
            case LTF_DTYPE_FLOAT64: SEGSUM_ADD(double); break;
            case LTF_DTYPE_INT32: SEGSUM_ADD(int32_t); break;
            case LTF_DTYPE_UINT8: SEGSUM_ADD(uint8_t); break;   /* wraps modulo 256, as TensorFlow's */
            default: SEGSUM_ADD(int64_t); break;
            }
        }
    }
}

ltf_status ltf_cpu_movement_unsorted_segment_sum(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                                 int nin, const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nout;
    const ltf_tensor *data = in[0], *ids = in[1];
    ltf_tensor *o = out[0];
    int bd = (int)(a->i[2] < 0 ? a->i[2] + ids->rank : a->i[2]), axis = (int)a->i[1];
    int64_t N = nin > 2 ? o->dims[axis] : a->i[0];   /* with a third input, its size along the axis */
    int idx64 = ids->dtype == LTF_DTYPE_INT64;
    const void *idx = LTF_DATA(ids);
    for (int64_t k = 0; k < ids->numel; k++) {
        int64_t v = index_at(idx, idx64, k);
        if (v < 0 || (v >= 1 && v <= N)) continue;
        char pos[LTF_SHAPE_BUF];
        index_pos(ids, "segment_ids", k, pos, sizeof pos);
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: %s = %lld is out of range: ids are 1-based, expected 1..%lld (num_segments; a "
                        "negative id drops its slice)",
                        def->name, pos, (long long)v, (long long)N);
    }
    size_t es = ltf_dtype_size(o->dtype);
    if (o->numel == 0) return LTF_OK;
    memset(LTF_DATA(o), 0, (size_t)o->numel * es);
    if (data->numel == 0) return LTF_OK;
    /* products of data's dims (ids' are among them): they fit, data not being empty */
    int64_t B = 1, O = 1, J = 1, inner = 1;
    for (int d = 0; d < bd; d++) B *= data->dims[d];
    for (int d = bd; d < axis; d++) O *= data->dims[d];
    for (int d = bd; d < ids->rank; d++) J *= ids->dims[d];
    for (int d = axis + ids->rank - bd; d < data->rank; d++) inner *= data->dims[d];
    int64_t csize = inner;
    if (B * O < 64 && inner > 8192) csize = 4096;
    segsum_job g = { LTF_DATA(data), LTF_DATA(o), idx, idx64, o->dtype, O, J, N, inner, csize,
                     (inner + csize - 1) / csize };
    int64_t per = J * csize, grain = per > 0 ? LTF_CPU_GRAIN / per : LTF_CPU_GRAIN;
    ltf_pool_for(&ctx->pool, B * O * g.chunks, grain > 0 ? grain : 1, segsum_rows, &g);
    return LTF_OK;
}
/* }==== */

/* {==== strided_slice_grad */
/* dy (shaped as the plan's per-dim counts) written into zeros of x's shape;
** a negative step walks dy backwards so that the output side stays forward. */
ltf_status ltf_cpu_movement_strided_slice_grad(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                               int nin, const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *dy = in[0];
    ltf_tensor *o = out[0];
    ltf_strided_plan p;
    ltf_status s = ltf_cpu_movement_strided_plan(ctx, def->name, o->rank, o->dims, a, &p);
    if (s != LTF_OK) return s;
    size_t es = ltf_dtype_size(o->dtype);
    if (o->numel == 0) return LTF_OK;
    memset(LTF_DATA(o), 0, (size_t)o->numel * es);
    if (dy->numel == 0) return LTF_OK;
    int64_t st[LTF_MAX_RANK], ds[LTF_MAX_RANK], offset = 0, ioff = 0;
    contiguous_strides(o->rank, o->dims, st);
    contiguous_strides(o->rank, p.count, ds);
    nd_copy c = { .rank = o->rank };
    for (int k = 0; k < o->rank; k++) {
        c.dims[k] = p.count[k];
        if (p.step[k] > 0) {
            offset += p.start[k] * st[k];
            c.os[k] = p.step[k] * st[k];
            c.is[k] = ds[k];
        } else {
            offset += (p.start[k] + (p.count[k] - 1) * p.step[k]) * st[k];
            c.os[k] = -p.step[k] * st[k];
            c.is[k] = -ds[k];
            ioff += (p.count[k] - 1) * ds[k];
        }
    }
    nd_run(ctx, &c, (char *)LTF_DATA(o) + (size_t)offset * es, (const char *)LTF_DATA(dy) + (size_t)ioff * es, es);
    retain_strings(o);
    return LTF_OK;
}
/* }==== */

/* {==== one_hot */
ltf_status ltf_cpu_movement_one_hot(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                    const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)ctx; (void)def; (void)nin; (void)nout;
    const ltf_tensor *indices = in[0];
    ltf_tensor *o = out[0];
    if (o->numel == 0) return LTF_OK;   /* and otherwise the products of indices' dims fit */
    int axis = norm_axis(a->i[1], indices->rank + 1);
    int64_t depth = a->i[0], O = 1, I = 1;
    for (int d = 0; d < axis; d++) O *= indices->dims[d];
    for (int d = axis; d < indices->rank; d++) I *= indices->dims[d];
    size_t es = ltf_dtype_size(o->dtype);
    char *dst = LTF_DATA(o);
    const void *on = LTF_DATA(in[1]);
    fill_elements(dst, LTF_DATA(in[2]), o->numel, es);
    const void *idx = LTF_DATA(indices);
    for (int64_t r = 0; r < O; r++)
        for (int64_t i = 0; i < I; i++) {
            int64_t k = r * I + i, v;
            switch (indices->dtype) {
            case LTF_DTYPE_INT64: v = ((const int64_t *)idx)[k]; break;
            case LTF_DTYPE_UINT8: v = ((const uint8_t *)idx)[k]; break;
            default: v = ((const int32_t *)idx)[k]; break;
            }
            if (v >= 1 && v <= depth) memcpy(dst + (size_t)((r * depth + v - 1) * I + i) * es, on, es);
        }
    retain_strings(o);
    return LTF_OK;
}
/* }==== */

/* {==== pad */
/* Copy the slab at index 'src' along dim 'k' onto index 'dst' (within 'o'):
** dims before k span the whole output, dims after k the interior only. */
static void pad_mirror(ltf_ctx *ctx, ltf_tensor *o, const ltf_tensor *x, const int64_t *before, int k,
                       int64_t dst, int64_t src, size_t es) {
    int r = o->rank;
    int64_t os[LTF_MAX_RANK], base = 0;
    contiguous_strides(r, o->dims, os);
    nd_copy c = { .rank = r };
    for (int d = 0; d < r; d++) {
        c.dims[d] = d < k ? o->dims[d] : (d == k ? 1 : x->dims[d]);
        c.os[d] = c.is[d] = os[d];
        if (d > k) base += before[d] * os[d];
    }
    char *p = LTF_DATA(o);
    nd_run(ctx, &c, p + (size_t)(base + dst * os[k]) * es, p + (size_t)(base + src * os[k]) * es, es);
}

ltf_status ltf_cpu_movement_pad(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)nout;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    if (o->numel == 0) return LTF_OK;
    int r = x->rank;
    size_t es = ltf_dtype_size(x->dtype);
    int64_t before[LTF_MAX_RANK], after[LTF_MAX_RANK], os[LTF_MAX_RANK], base = 0;
    for (int d = 0; d < r; d++) {
        before[d] = a->ints[2 * d];
        after[d] = a->ints[2 * d + 1];
    }
    contiguous_strides(r, o->dims, os);
    int mode = (int)a->i[0];
    if (mode == LTF_PAD_CONSTANT && o->numel != x->numel) {
        uint64_t zero = 0;
        fill_elements(LTF_DATA(o), nin > 1 ? LTF_DATA(in[1]) : (const void *)&zero, o->numel, es);
    }
    if (x->numel > 0) {
        nd_copy c = { .rank = r };
        contiguous_strides(r, x->dims, c.is);
        for (int d = 0; d < r; d++) {
            c.dims[d] = x->dims[d];
            c.os[d] = os[d];
            base += before[d] * os[d];
        }
        nd_run(ctx, &c, (char *)LTF_DATA(o) + (size_t)base * es, LTF_DATA(x), es);
    }
    if (mode != LTF_PAD_CONSTANT) {
        int64_t sym = mode == LTF_PAD_SYMMETRIC;
        for (int k = 0; k < r; k++) {
            int64_t lo = before[k], hi = before[k] + x->dims[k] - 1;
            for (int64_t j = 1; j <= before[k]; j++) pad_mirror(ctx, o, x, before, k, lo - j, lo + j - sym, es);
            for (int64_t j = 1; j <= after[k]; j++) pad_mirror(ctx, o, x, before, k, hi + j, hi - j + sym, es);
        }
    }
    retain_strings(o);
    return LTF_OK;
}
/* }==== */
