/*
** cpu/sort.c: kernels of the sort family (ltf_ops/sort.h). Values become
** unsigned keys whose integer order is the values' order (floats: sign
** flip; NaN above +inf; -0 equal to +0 where positions are returned), so
** one least-significant-digit radix sort (11-bit digits, stable) serves
** every dtype, and top_k selects on the same keys. Rows run in parallel.
*/
#include <stdlib.h>
#include <string.h>
#include "cpu.h"

/* {==== Keys */
/* Key of the float bits 'u' ('canon': -0 as +0, for positions). */
static inline uint32_t key_f32(uint32_t u, int canon) {
    if ((u & 0x7fffffffu) > 0x7f800000u) u = 0x7fc00000u;
    if (canon && u == 0x80000000u) u = 0;
    return u ^ ((uint32_t)((int32_t)u >> 31) | 0x80000000u);
}
static inline uint64_t key_f64(uint64_t u, int canon) {
    if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) u = 0x7ff8000000000000ull;
    if (canon && u == 0x8000000000000000ull) u = 0;
    return u ^ ((uint64_t)((int64_t)u >> 63) | 0x8000000000000000ull);
}

static int wide_keys(ltf_dtype dt) {
    return dt == LTF_DTYPE_FLOAT64 || dt == LTF_DTYPE_INT64;
}

/* Keys of 'n' elements of 'x' (dtype 'dt') into 'k' (uint32_t or uint64_t
** as wide_keys says); 'desc' reverses the order. Returns the key width in bits. */
static int make_keys(const void *x, ltf_dtype dt, int64_t n, void *k, int desc, int canon) {
    switch (dt) {
    case LTF_DTYPE_FLOAT32: {
        const uint32_t *u = x;
        uint32_t *o = k, f = desc ? ~0u : 0u;
        for (int64_t i = 0; i < n; i++) o[i] = key_f32(u[i], canon) ^ f;
        return 32;
    }
    case LTF_DTYPE_INT32: {
        const uint32_t *u = x;
        uint32_t *o = k, f = (desc ? ~0u : 0u) ^ 0x80000000u;
        for (int64_t i = 0; i < n; i++) o[i] = u[i] ^ f;
        return 32;
    }
    case LTF_DTYPE_FLOAT64: {
        const uint64_t *u = x;
        uint64_t *o = k, f = desc ? ~0ull : 0ull;
        for (int64_t i = 0; i < n; i++) o[i] = key_f64(u[i], canon) ^ f;
        return 64;
    }
    case LTF_DTYPE_INT64: {
        const uint64_t *u = x;
        uint64_t *o = k, f = (desc ? ~0ull : 0ull) ^ 0x8000000000000000ull;
        for (int64_t i = 0; i < n; i++) o[i] = u[i] ^ f;
        return 64;
    }
    default: {   /* uint8, bool */
        const uint8_t *u = x;
        uint32_t *o = k, f = desc ? 0xffu : 0u;
        for (int64_t i = 0; i < n; i++) o[i] = (uint32_t)u[i] ^ f;
        return 8;
    }
    }
}

/* Values back from sorted keys (inverse of make_keys without 'canon'). */
static void from_keys(const void *k, ltf_dtype dt, int64_t n, void *x, int desc) {
    switch (dt) {
    case LTF_DTYPE_FLOAT32: {
        const uint32_t *c = k;
        uint32_t *o = x, f = desc ? ~0u : 0u;
        for (int64_t i = 0; i < n; i++) {
            uint32_t v = c[i] ^ f;
            o[i] = (v >> 31) ? (v & 0x7fffffffu) : ~v;
        }
        break;
    }
    case LTF_DTYPE_INT32: {
        const uint32_t *c = k;
        uint32_t *o = x, f = (desc ? ~0u : 0u) ^ 0x80000000u;
        for (int64_t i = 0; i < n; i++) o[i] = c[i] ^ f;
        break;
    }
    case LTF_DTYPE_FLOAT64: {
        const uint64_t *c = k;
        uint64_t *o = x, f = desc ? ~0ull : 0ull;
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = c[i] ^ f;
            o[i] = (v >> 63) ? (v & 0x7fffffffffffffffull) : ~v;
        }
        break;
    }
    case LTF_DTYPE_INT64: {
        const uint64_t *c = k;
        uint64_t *o = x, f = (desc ? ~0ull : 0ull) ^ 0x8000000000000000ull;
        for (int64_t i = 0; i < n; i++) o[i] = c[i] ^ f;
        break;
    }
    default: {
        const uint32_t *c = k;
        uint8_t *o = x;
        for (int64_t i = 0; i < n; i++) o[i] = (uint8_t)((c[i] ^ (desc ? 0xffu : 0u)) & 0xffu);
        break;
    }
    }
}
/* }==== */

/* {==== Radix sort: stable, keys with an optional uint32 payload */
#define RADIX_BITS 11
#define RADIX_BINS (1 << RADIX_BITS)
#define SMALL_SORT 48

/* Scratch for one thread: keys and payload twice, and the histograms. */
typedef struct scratch {
    void *k2;
    uint32_t *v1, *v2;
    uint32_t *hist;      /* RADIX_BINS * 6 */
    void *keys;          /* the row's keys */
} scratch;

/* RADIX(T): sorts 'n' keys 'k' (bits 'bits') with payload 'v' (NULL: none);
** the sorted run ends in 'k'/'v' (copied back when it ended in the spare). */
#define RADIX(T)                                                                                    \
static void radix_##T(T *k, uint32_t *v, int64_t n, int bits, T *k2, uint32_t *v2, uint32_t *hist) { \
    if (n <= SMALL_SORT) {                                                                          \
        for (int64_t i = 1; i < n; i++) {                                                           \
            T key = k[i];                                                                           \
            uint32_t val = v ? v[i] : 0;                                                            \
            int64_t j = i;                                                                          \
            for (; j > 0 && k[j - 1] > key; j--) {                                                  \
                k[j] = k[j - 1];                                                                    \
                if (v) v[j] = v[j - 1];                                                             \
            }                                                                                       \
            k[j] = key;                                                                             \
            if (v) v[j] = val;                                                                      \
        }                                                                                           \
        return;                                                                                     \
    }                                                                                               \
    int passes = (bits + RADIX_BITS - 1) / RADIX_BITS;                                             \
    memset(hist, 0, sizeof(uint32_t) * RADIX_BINS * (size_t)passes);                               \
    for (int64_t i = 0; i < n; i++) {                                                               \
        T key = k[i];                                                                               \
        for (int p = 0; p < passes; p++)                                                            \
            hist[p * RADIX_BINS + ((key >> (p * RADIX_BITS)) & (RADIX_BINS - 1))]++;                 \
    }                                                                                               \
    T *src = k, *dst = k2;                                                                          \
    uint32_t *vs = v, *vd = v2;                                                                     \
    for (int p = 0; p < passes; p++) {                                                              \
        uint32_t *h = hist + p * RADIX_BINS;                                                        \
        int shift = p * RADIX_BITS;                                                                 \
        if (h[(src[0] >> shift) & (RADIX_BINS - 1)] == (uint32_t)n) continue;  /* one digit: no-op */ \
        uint32_t sum = 0;                                                                           \
        for (int b = 0; b < RADIX_BINS; b++) {                                                      \
            uint32_t c = h[b];                                                                      \
            h[b] = sum;                                                                             \
            sum += c;                                                                               \
        }                                                                                           \
        if (v) {                                                                                    \
            for (int64_t i = 0; i < n; i++) {                                                       \
                uint32_t pos = h[(src[i] >> shift) & (RADIX_BINS - 1)]++;                           \
                dst[pos] = src[i];                                                                  \
                vd[pos] = vs[i];                                                                    \
            }                                                                                       \
            uint32_t *tv = vs; vs = vd; vd = tv;                                                    \
        } else {                                                                                    \
            for (int64_t i = 0; i < n; i++) dst[h[(src[i] >> shift) & (RADIX_BINS - 1)]++] = src[i]; \
        }                                                                                           \
        T *t = src; src = dst; dst = t;                                                             \
    }                                                                                               \
    if (src != k) {                                                                                 \
        memcpy(k, src, sizeof(T) * (size_t)n);                                                      \
        if (v) memcpy(v, vs, sizeof(uint32_t) * (size_t)n);                                         \
    }                                                                                               \
}
RADIX(uint32_t)
RADIX(uint64_t)

static int scratch_alloc(scratch *s, int64_t n, int wide, int payload) {
    size_t ks = wide ? 8 : 4;
    memset(s, 0, sizeof *s);
    s->keys = malloc(ks * (size_t)n + 8);
    s->k2 = malloc(ks * (size_t)n + 8);
    s->hist = n > SMALL_SORT ? malloc(sizeof(uint32_t) * RADIX_BINS * 6) : NULL;
    if (payload) {
        s->v1 = malloc(sizeof(uint32_t) * (size_t)n + 8);
        s->v2 = malloc(sizeof(uint32_t) * (size_t)n + 8);
    }
    return s->keys && s->k2 && (s->hist || n <= SMALL_SORT) && (!payload || (s->v1 && s->v2));
}

static void scratch_free(scratch *s) {
    free(s->keys);
    free(s->k2);
    free(s->hist);
    free(s->v1);
    free(s->v2);
}

/* Sort the row's keys in 's->keys' (with payload 's->v1' when 'payload'). */
static void sort_keys(scratch *s, int64_t n, int bits, int payload) {
    if (bits == 64)
        radix_uint64_t(s->keys, payload ? s->v1 : NULL, n, bits, s->k2, s->v2, s->hist);
    else
        radix_uint32_t(s->keys, payload ? s->v1 : NULL, n, bits, s->k2, s->v2, s->hist);
}

static void put_index(void *out, ltf_dtype it, int64_t j, int64_t v) {
    if (it == LTF_DTYPE_INT32) ((int32_t *)out)[j] = (int32_t)v;
    else ((int64_t *)out)[j] = v;
}
/* }==== */

/* {==== sort, argsort */
typedef struct row_job {
    const ltf_tensor *x;
    ltf_tensor *o, *o2;       /* o2: top_k's indices */
    int64_t n, k;
    int desc, argsort;
    int failed;               /* set (atomically, only ever to 1) when scratch memory ran out */
} row_job;

static void sort_rows(void *arg, int64_t b, int64_t e) {
    row_job *j = arg;
    ltf_dtype dt = j->x->dtype;
    int64_t n = j->n;
    size_t es = ltf_dtype_size(dt);
    scratch s;
    if (!scratch_alloc(&s, n, wide_keys(dt), j->argsort)) {
        scratch_free(&s);
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    ltf_dtype it = j->o->dtype;
    for (int64_t r = b; r < e; r++) {
        const char *xr = (const char *)LTF_DATA(j->x) + (size_t)(r * n) * es;
        int bits = make_keys(xr, dt, n, s.keys, j->desc, j->argsort);
        if (j->argsort) {
            for (int64_t i = 0; i < n; i++) s.v1[i] = (uint32_t)i;
            sort_keys(&s, n, bits, 1);
            char *orow = (char *)LTF_DATA(j->o) + (size_t)(r * n) * ltf_dtype_size(it);
            for (int64_t i = 0; i < n; i++) put_index(orow, it, i, (int64_t)s.v1[i] + 1);
        } else {
            sort_keys(&s, n, bits, 0);
            from_keys(s.keys, dt, n, (char *)LTF_DATA(j->o) + (size_t)(r * n) * es, j->desc);
        }
    }
    scratch_free(&s);
}

static int64_t row_grain(int64_t n) {
    int64_t g = LTF_CPU_GRAIN / (n > 0 ? n : 1);
    return g > 0 ? g : 1;
}

ltf_status ltf_cpu_sort_sort(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_tensor *x = in[0];
    int64_t n = x->dims[x->rank - 1];
    if (x->numel == 0 || n == 0) return LTF_OK;
    if (n > UINT32_MAX)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: rows of %lld elements are too long", def->name,
                        (long long)n);
    row_job j = { x, out[0], NULL, n, n, a->i[0] != 0, def->code == LTF_OP_ARGSORT, 0 };
    ltf_pool_for(&ctx->pool, x->numel / n, row_grain(n), sort_rows, &j);
    if (j.failed) return ltf_fail_oom(ctx, "sort scratch", (size_t)n * 24);
    return LTF_OK;
}
/* }==== */

/* {==== top_k */
/* TOPK(T): the 'k' largest keys of 'key[0..n)' with their positions, in
** 'bk'/'bi', largest first; an equal key never displaces an earlier one. */
#define TOPK(T)                                                                                     \
static void topk_##T(const T *key, int64_t n, int64_t k, T *bk, uint32_t *bi) {                    \
    int64_t cnt = 0, i = 0;                                                                         \
    for (; i < n && cnt < k; i++) {                                                                 \
        int64_t p = cnt++;                                                                          \
        for (; p > 0 && bk[p - 1] < key[i]; p--) { bk[p] = bk[p - 1]; bi[p] = bi[p - 1]; }          \
        bk[p] = key[i];                                                                             \
        bi[p] = (uint32_t)i;                                                                        \
    }                                                                                               \
    if (k == 0) return;                                                                             \
    T t = bk[k - 1];                                                                                \
    while (i < n) {                                                                                 \
        int64_t e = i + 64 <= n ? i + 64 : n;                                                       \
        T m = 0;                                                                                    \
        for (int64_t q = i; q < e; q++) m = key[q] > m ? key[q] : m;                                \
        if (m > t) {                                                                                \
            for (int64_t q = i; q < e; q++) {                                                       \
                if (key[q] <= t) continue;                                                          \
                int64_t p = k - 1;                                                                  \
                for (; p > 0 && bk[p - 1] < key[q]; p--) { bk[p] = bk[p - 1]; bi[p] = bi[p - 1]; } \
                bk[p] = key[q];                                                                     \
                bi[p] = (uint32_t)q;                                                                \
                t = bk[k - 1];                                                                      \
            }                                                                                       \
        }                                                                                           \
        i = e;                                                                                      \
    }                                                                                               \
}
TOPK(uint32_t)
TOPK(uint64_t)

/* float32 rows: keys made block by block in a cache-resident buffer (no
** row-sized key pass), blocks whose largest key cannot enter skipped. */
#define WIDE_CLONES LTF_WIDE_CLONES   /* cpu.h */
#define TOPK_BLOCK 64
WIDE_CLONES static uint32_t block_keys(const uint32_t *restrict u, uint32_t *restrict kb) {
    uint32_t m = 0;
    for (int q = 0; q < TOPK_BLOCK; q++) {
        uint32_t v = key_f32(u[q], 1);
        kb[q] = v;
        m = v > m ? v : m;
    }
    return m;
}

static void topk_f32(const uint32_t *u, int64_t n, int64_t k, uint32_t *bk, uint32_t *bi) {
    int64_t cnt = 0, i = 0;
    for (; i < n && cnt < k; i++) {
        uint32_t key = key_f32(u[i], 1);
        int64_t p = cnt++;
        for (; p > 0 && bk[p - 1] < key; p--) { bk[p] = bk[p - 1]; bi[p] = bi[p - 1]; }
        bk[p] = key;
        bi[p] = (uint32_t)i;
    }
    if (k == 0) return;
    uint32_t t = bk[k - 1], kb[TOPK_BLOCK];
    while (i < n) {
        int64_t len = n - i < TOPK_BLOCK ? n - i : TOPK_BLOCK;
        uint32_t m = 0;
        if (len == TOPK_BLOCK) {
            m = block_keys(u + i, kb);
        } else {
            for (int64_t q = 0; q < len; q++) {
                kb[q] = key_f32(u[i + q], 1);
                m = kb[q] > m ? kb[q] : m;
            }
        }
        if (m > t) {
            for (int64_t q = 0; q < len; q++) {
                uint32_t key = kb[q];
                if (key <= t) continue;
                int64_t p = k - 1;
                for (; p > 0 && bk[p - 1] < key; p--) { bk[p] = bk[p - 1]; bi[p] = bi[p - 1]; }
                bk[p] = key;
                bi[p] = (uint32_t)(i + q);
                t = bk[k - 1];
            }
        }
        i += len;
    }
}

static void topk_rows(void *arg, int64_t b, int64_t e) {
    row_job *j = arg;
    ltf_dtype dt = j->x->dtype, it = j->o2->dtype;
    int64_t n = j->n, k = j->k;
    size_t es = ltf_dtype_size(dt), is = ltf_dtype_size(it);
    int full = k * 8 > n;   /* many of the row: sort it all */
    scratch s;
    if (!scratch_alloc(&s, n, wide_keys(dt), 1)) {
        scratch_free(&s);
        __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
        return;
    }
    for (int64_t r = b; r < e; r++) {
        const char *xr = (const char *)LTF_DATA(j->x) + (size_t)(r * n) * es;
        char *vo = (char *)LTF_DATA(j->o) + (size_t)(r * k) * es, *io = (char *)LTF_DATA(j->o2) + (size_t)(r * k) * is;
        if (!full && dt == LTF_DTYPE_FLOAT32) {
            topk_f32((const uint32_t *)xr, n, k, s.k2, s.v1);
        } else {
            int bits = make_keys(xr, dt, n, s.keys, full, 1);
            if (full) {   /* descending keys, stable: ties keep the lower position first */
                for (int64_t i = 0; i < n; i++) s.v1[i] = (uint32_t)i;
                sort_keys(&s, n, bits, 1);
            } else if (bits == 64) {
                topk_uint64_t(s.keys, n, k, s.k2, s.v1);
            } else {
                topk_uint32_t(s.keys, n, k, s.k2, s.v1);
            }
        }
        for (int64_t q = 0; q < k; q++) {
            uint32_t p = s.v1[q];
            memcpy(vo + (size_t)q * es, xr + (size_t)p * es, es);
            put_index(io, it, q, (int64_t)p + 1);
        }
    }
    scratch_free(&s);
}

ltf_status ltf_cpu_sort_top_k(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_tensor *x = in[0];
    int64_t n = x->dims[x->rank - 1], k = a->i[0];
    if (out[0]->numel == 0) return LTF_OK;
    if (n > UINT32_MAX)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: rows of %lld elements are too long", def->name,
                        (long long)n);
    row_job j = { x, out[0], out[1], n, k, 1, 1, 0 };
    ltf_pool_for(&ctx->pool, x->numel / n, row_grain(n), topk_rows, &j);
    if (j.failed) return ltf_fail_oom(ctx, "top_k scratch", (size_t)n * 24);
    return LTF_OK;
}
/* }==== */

/* {==== searchsorted */
#define SEARCH(T)                                                                                   \
static int64_t search_##T(const T *s, int64_t m, T v, int right) {                                  \
    int64_t lo = 0, hi = m;                                                                         \
    while (lo < hi) {                                                                               \
        int64_t mid = lo + (hi - lo) / 2;                                                           \
        if (right ? !(v < s[mid]) : s[mid] < v) lo = mid + 1;                                       \
        else hi = mid;                                                                              \
    }                                                                                               \
    return lo;                                                                                      \
}
SEARCH(float) SEARCH(double) SEARCH(int32_t) SEARCH(int64_t) SEARCH(uint8_t)

ltf_status ltf_cpu_sort_searchsorted(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                     const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_tensor *s = in[0], *v = in[1];
    int64_t m = s->dims[s->rank - 1], nv = v->dims[v->rank - 1];
    if (v->numel == 0) return LTF_OK;
    int64_t rows = v->numel / nv;
    int right = a->i[0] == 1;
    ltf_dtype it = out[0]->dtype;
    void *o = LTF_DATA(out[0]);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t q = 0; q < nv; q++) {
            int64_t at = r * nv + q, p;
            switch (s->dtype) {
            case LTF_DTYPE_FLOAT32: p = search_float((const float *)LTF_DATA(s) + r * m, m, ((const float *)LTF_DATA(v))[at], right); break;
            case LTF_DTYPE_FLOAT64: p = search_double((const double *)LTF_DATA(s) + r * m, m, ((const double *)LTF_DATA(v))[at], right); break;
            case LTF_DTYPE_INT32: p = search_int32_t((const int32_t *)LTF_DATA(s) + r * m, m, ((const int32_t *)LTF_DATA(v))[at], right); break;
            case LTF_DTYPE_INT64: p = search_int64_t((const int64_t *)LTF_DATA(s) + r * m, m, ((const int64_t *)LTF_DATA(v))[at], right); break;
            default: p = search_uint8_t((const uint8_t *)LTF_DATA(s) + r * m, m, ((const uint8_t *)LTF_DATA(v))[at], right); break;
            }
            put_index(o, it, at, p + 1);
        }
    return LTF_OK;
}
/* }==== */

/* {==== bincount */
static int64_t int_at(const ltf_tensor *t, int64_t i) {
    return t->dtype == LTF_DTYPE_INT32 ? ((const int32_t *)LTF_DATA(t))[i] : ((const int64_t *)LTF_DATA(t))[i];
}

static void add_at(ltf_tensor *o, int64_t p, const ltf_tensor *w, int64_t i, int binary) {
    void *d = LTF_DATA(o);
    switch (o->dtype) {
    case LTF_DTYPE_FLOAT32: ((float *)d)[p] = binary ? 1.0f : ((float *)d)[p] + (w ? ((const float *)LTF_DATA(w))[i] : 1.0f); break;
    case LTF_DTYPE_FLOAT64: ((double *)d)[p] = binary ? 1.0 : ((double *)d)[p] + (w ? ((const double *)LTF_DATA(w))[i] : 1.0); break;
    case LTF_DTYPE_INT32: ((int32_t *)d)[p] = binary ? 1 : (int32_t)((uint32_t)((int32_t *)d)[p] + (uint32_t)(w ? ((const int32_t *)LTF_DATA(w))[i] : 1)); break;
    default: ((int64_t *)d)[p] = binary ? 1 : (int64_t)((uint64_t)((int64_t *)d)[p] + (uint64_t)(w ? ((const int64_t *)LTF_DATA(w))[i] : 1)); break;
    }
}

ltf_status ltf_cpu_sort_bincount(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_tensor *arr = in[0], *w = nin > 1 ? in[1] : NULL;
    if (w && w->numel != arr->numel) {
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'weights' has %lld elements, 'arr' %lld", def->name,
                        (long long)w->numel, (long long)arr->numel);
    }
    int64_t mx = -1;
    for (int64_t i = 0; i < arr->numel; i++) {
        int64_t v = int_at(arr, i);
        if (v < 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'arr' must be non-negative, got %lld at position %lld",
                            def->name, (long long)v, (long long)i + 1);
        if (v > mx) mx = v;
    }
    int64_t size = mx < INT64_MAX ? mx + 1 : INT64_MAX;   /* too large either way: refused below */
    if (size < a->i[0]) size = a->i[0];
    if (a->i[1] >= 0 && size > a->i[1]) size = a->i[1];
    ltf_dtype dt = w ? w->dtype : (a->i[3] == 0 ? LTF_DTYPE_INT32 : (ltf_dtype)(a->i[3] - 1));
    int64_t dims[LTF_MAX_RANK];   /* per last-axis slice (i[2] & 2): arr's leading dims, then the bins */
    int r = 0;
    int64_t cols = arr->numel;
    if (a->i[2] & 2) {
        for (int d = 0; d < arr->rank - 1; d++) dims[r++] = arr->dims[d];
        cols = arr->dims[arr->rank - 1];
    }
    dims[r++] = size;
    ltf_status st = ltf_shape_check(ctx, def->name, dt, r, dims);
    if (st != LTF_OK) return st;
    ltf_tensor *o = ltf_tensor_empty(ctx, dt, r, dims);
    if (!o) return ctx->last_status;
    memset(LTF_DATA(o), 0, (size_t)o->numel * ltf_dtype_size(dt));
    for (int64_t i = 0; i < arr->numel; i++) {
        int64_t v = int_at(arr, i);
        if (v < size) add_at(o, (cols ? i / cols : 0) * size + v, w, i, (int)(a->i[2] & 1));
    }
    out[0] = o;
    return LTF_OK;
}
/* }==== */

/* {==== segment_sum, segment_mean, segment_max */
/* SEGMENT(T, ADD, CNT): rows of a segment reduced in order (the first copied);
** segments no row names stay 0. Integer sums wrap (ADD); a mean divides
** by the row count (integers truncate; uint8 by the count itself, not the
** count modulo 256 that would divide by zero at 256 rows). */
#define SEGMENT(T, ADD, CNT)                                                                        \
static void segment_##T(const T *x, const ltf_tensor *ids, int64_t n, int64_t inner, int64_t S, T *o,  \
                        int op) {                                                                   \
    memset(o, 0, sizeof(T) * (size_t)(S * inner));                                                  \
    int64_t i = 0;                                                                                  \
    while (i < n) {                                                                                 \
        int64_t id = int_at(ids, i), e = i + 1;                                                     \
        while (e < n && int_at(ids, e) == id) e++;                                                  \
        T *row = o + (id - 1) * inner;                                                              \
        memcpy(row, x + i * inner, sizeof(T) * (size_t)inner);                                      \
        for (int64_t r = i + 1; r < e; r++) {                                                       \
            const T *xr = x + r * inner;                                                            \
            if (op == LTF_OP_SEGMENT_MAX) {   /* NaN wins and stays */                             \
                for (int64_t q = 0; q < inner; q++)                                                 \
                    if (!(xr[q] <= row[q]) && row[q] == row[q]) row[q] = xr[q];                     \
            } else {                                                                                \
                for (int64_t q = 0; q < inner; q++) row[q] = ADD(T, row[q], xr[q]);                  \
            }                                                                                       \
        }                                                                                           \
        if (op == LTF_OP_SEGMENT_MEAN)                                                              \
            for (int64_t q = 0; q < inner; q++) row[q] = (T)(row[q] / CNT(T, e - i));               \
        i = e;                                                                                      \
    }                                                                                               \
}
#define FADD(T, x, y) ((x) + (y))
#define IADD(T, x, y) ((T)((uint64_t)(x) + (uint64_t)(y)))
#define CNT_T(T, k) ((T)(k))
#define CNT_I64(T, k) ((int64_t)(k))
SEGMENT(float, FADD, CNT_T)
SEGMENT(double, FADD, CNT_T)
SEGMENT(int32_t, IADD, CNT_T)
SEGMENT(int64_t, IADD, CNT_T)
SEGMENT(uint8_t, IADD, CNT_I64)

ltf_status ltf_cpu_sort_segment(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_tensor *data = in[0], *ids = in[1];
    int64_t n = data->dims[0], prev = 1;
    for (int64_t i = 0; i < n; i++) {
        int64_t id = int_at(ids, i);
        if (id < prev) {
            if (id < 1)
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                                "%s: segment id %lld at position %lld is out of range: ids are 1-based", def->name,
                                (long long)id, (long long)i + 1);
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: 'segment_ids' must be sorted: %lld at position %lld follows %lld", def->name,
                            (long long)id, (long long)i + 1, (long long)prev);
        }
        prev = id;
    }
    int64_t dims[LTF_MAX_RANK];
    memcpy(dims, data->dims, sizeof(int64_t) * (size_t)data->rank);
    dims[0] = n > 0 ? prev : 0;
    ltf_status st = ltf_shape_check(ctx, def->name, data->dtype, data->rank, dims);
    if (st != LTF_OK) return st;
    ltf_tensor *o = ltf_tensor_empty(ctx, data->dtype, data->rank, dims);
    if (!o) return ctx->last_status;
    int64_t inner = 1;
    for (int d = 1; d < data->rank; d++) inner *= data->dims[d];
    int op = def->code;
    switch (data->dtype) {
    case LTF_DTYPE_FLOAT32: segment_float(LTF_DATA(data), ids, n, inner, dims[0], LTF_DATA(o), op); break;
    case LTF_DTYPE_FLOAT64: segment_double(LTF_DATA(data), ids, n, inner, dims[0], LTF_DATA(o), op); break;
    case LTF_DTYPE_INT32: segment_int32_t(LTF_DATA(data), ids, n, inner, dims[0], LTF_DATA(o), op); break;
    case LTF_DTYPE_UINT8: segment_uint8_t(LTF_DATA(data), ids, n, inner, dims[0], LTF_DATA(o), op); break;
    default: segment_int64_t(LTF_DATA(data), ids, n, inner, dims[0], LTF_DATA(o), op); break;
    }
    out[0] = o;
    return LTF_OK;
}
/* }==== */

/* {==== sort_grad */
ltf_status ltf_cpu_sort_grad(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_tensor *g = in[0], *idx = in[1];
    ltf_tensor *o = out[0];
    memset(LTF_DATA(o), 0, (size_t)o->numel * ltf_dtype_size(o->dtype));
    if (g->numel == 0 || o->numel == 0) return LTF_OK;
    int64_t k = g->dims[g->rank - 1], n = o->dims[o->rank - 1], rows = g->numel / k;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t q = 0; q < k; q++) {
            int64_t p = int_at(idx, r * k + q);
            if (p < 1 || p > n)
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: index %lld is out of range 1..%lld", def->name,
                                (long long)p, (long long)n);
            if (o->dtype == LTF_DTYPE_FLOAT32)
                ((float *)LTF_DATA(o))[r * n + p - 1] += ((const float *)LTF_DATA(g))[r * k + q];
            else
                ((double *)LTF_DATA(o))[r * n + p - 1] += ((const double *)LTF_DATA(g))[r * k + q];
        }
    return LTF_OK;
}
/* }==== */
