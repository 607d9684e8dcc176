/*
** cuda/kernels/alloc.cuh: device kernels of the ops whose output sizes
** depend on the values (LTF_OP_KERNEL_ALLOCATES): where_indices, unique,
** unique_with_counts (ltf_ops/indexing.h), bincount, segment_sum,
** segment_mean, segment_max (ltf_ops/sort.h), and sequence_mask without
** 'maxlen'. The engine calls them with out[] NULL (core/device.c); each
** does what TensorFlow's GPU kernels do:
**
**   1. computes the output sizes on the device, with the words the error
**      checks need beside them in one small scratch block;
**   2. reads that block back (the executor's read(): one synchronization),
**      raising the CPU kernel's error kind and message at once when a
**      check failed (a second read fetches the offending values);
**   3. allocates the outputs on the inputs' device through ctx->core_api
**      (the module cannot call the engine's functions) and fills them;
**      a failure after that releases them.
**
** Results are the CPU's bit for bit (cpu/indexing.c, cpu/sort.c); every
** fill is a gather or a scatter through a permutation (each destination
** written once), so nothing depends on thread order:
**   where_indices  the true elements counted per chunk of CHUNK, the
**                  counts scanned (Hillis-Steele passes), each chunk then
**                  writes its coordinates from its offset, in order;
**   unique         the values' keys (sort.cuh: -0 as +0, NaN above +inf)
**                  sorted stably with their positions (sort.cuh's merge
**                  passes); the head of each run of equal keys is its
**                  value's first occurrence (every NaN is a run of its own,
**                  as on the CPU), flagged at that position; a scan of the
**                  flags in position order numbers the values in order of
**                  first appearance; each sorted element finds its run's
**                  head by binary search;
**   bincount       keys (slice, value) sorted stably with their positions;
**                  each bin binary-searches its run and adds its weights
**                  (or ones) in position order, as the CPU does;
**   segment_*      ids are sorted: each output segment finds its rows
**                  [begin, end) by binary search and reduces them in order.
** The only atomics are the size and error words' min/max (order-free).
*/
#ifndef LTF_CU_ALLOC_CUH
#define LTF_CU_ALLOC_CUH

#include "sort.cuh"
extern "C" {
#include "../../device.h"   /* ltf_core_api */
}

namespace ltf_cu {

/* {==== Bodies */
enum { ALLOC_CHUNK = 256 };
#define ALLOC_NONE 0xffffffffffffffffull   /* a min word nothing lowered */

LTF_HD void min_u64(uint64_t *p, uint64_t v) {
#if defined(__CUDA_ARCH__)
    atomicMin((unsigned long long *)p, (unsigned long long)v);
#else
    if (v < *p) *p = v;
#endif
}
LTF_HD void max_u64(uint64_t *p, uint64_t v) {
#if defined(__CUDA_ARCH__)
    atomicMax((unsigned long long *)p, (unsigned long long)v);
#else
    if (v > *p) *p = v;
#endif
}

/* scratch words: w[0] = ALLOC_NONE (a min), w[1] = 0 (a max) */
struct WordsP {
    uint64_t *w;
};
struct WordsInitF {
    static LTF_HD void at(int64_t, const WordsP &p) {
        p.w[0] = ALLOC_NONE;
        p.w[1] = 0;
    }
};

LTF_HD int64_t index_at(const void *p, int wide, int64_t i) {
    return wide ? ((const int64_t *)p)[i] : (int64_t)((const int32_t *)p)[i];
}

/* chunk scan, step 1: cnt[c] = flags set in chunk c */
struct ChunkCountP {
    const uint8_t *f;
    int64_t *cnt;
    int64_t n;
};
struct ChunkCountF {
    static LTF_HD void at(int64_t c, const ChunkCountP &p) {
        int64_t b = c * ALLOC_CHUNK, e = b + ALLOC_CHUNK < p.n ? b + ALLOC_CHUNK : p.n, s = 0;
        for (int64_t k = b; k < e; k++) s += p.f[k] != 0;
        p.cnt[c] = s;
    }
};
/* chunk scan, step 2: one Hillis-Steele pass (inclusive sums) */
struct ScanStepP {
    const int64_t *a;
    int64_t *o;
    int64_t s;
};
struct ScanStepF {
    static LTF_HD void at(int64_t i, const ScanStepP &p) { p.o[i] = i >= p.s ? p.a[i] + p.a[i - p.s] : p.a[i]; }
};

/* Whether 'v' is nonzero (a NaN is; -0 is not); the half types by their bits
** (the engine stages them as float32, but the dispatch instantiates them). */
template <class T> LTF_HD bool nonzero(T v) { return v != (T)0; }
LTF_HD bool nonzero(f16_t v) { return (v.bits & 0x7fffu) != 0; }
LTF_HD bool nonzero(bf16_t v) { return (v.bits & 0x7fffu) != 0; }

/* where_indices: f[i] = x[i] != 0 (a NaN is true) */
template <class T> struct NonzeroP {
    const T *x;
    uint8_t *f;
};
template <class T> struct NonzeroF {
    static LTF_HD void at(int64_t i, const NonzeroP<T> &p) { p.f[i] = nonzero(p.x[i]); }
};
/* where_indices: chunk c writes the 1-based coordinates of its true
** elements, in order, from row incl[c] - cnt[c] */
struct WhereOutP {
    const uint8_t *f;
    const int64_t *cnt, *incl;
    int64_t *o;
    int64_t n;
    int rank;
    int64_t dims[LTF_MAX_RANK];
};
struct WhereOutF {
    static LTF_HD void at(int64_t c, const WhereOutP &p) {
        int64_t b = c * ALLOC_CHUNK, e = b + ALLOC_CHUNK < p.n ? b + ALLOC_CHUNK : p.n;
        int64_t row = p.incl[c] - p.cnt[c];
        for (int64_t k = b; k < e; k++) {
            if (!p.f[k]) continue;
            int64_t r = k, *dst = p.o + row * p.rank;
            for (int d = p.rank - 1; d >= 0; d--) {
                int64_t q = r / p.dims[d];
                dst[d] = r - q * p.dims[d] + 1;
                r = q;
            }
            row++;
        }
    }
};

/* unique: whether sorted key k is a NaN's (every NaN is its own value) */
template <class K> LTF_HD bool nan_key(K k, int dt) {
    if (dt == DT_F32) return (uint64_t)k == 0xffc00000ull;
    if (dt == DT_F64) return (uint64_t)k == 0xfff8000000000000ull;
    return false;
}
/* first q in [lo, hi) with k[q] >= v (upper: > v) */
template <class K> LTF_HD int64_t lower_key(const K *k, int64_t lo, int64_t hi, K v, int upper) {
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (upper ? k[mid] <= v : k[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}
/* unique, step 1: f[pos of sorted j] = j heads its run (first occurrence) */
template <class K> struct HeadP {
    const K *k;
    const uint64_t *pos;
    uint8_t *f;
    int dt;
};
template <class K> struct HeadF {
    static LTF_HD void at(int64_t j, const HeadP<K> &p) {
        p.f[p.pos[j]] = j == 0 || p.k[j] != p.k[j - 1] || nan_key(p.k[j], p.dt);
    }
};
/* unique, step 2: chunk c numbers its first occurrences from incl[c] - cnt[c] */
struct GroupNumP {
    const uint8_t *f;
    const int64_t *cnt, *incl;
    int64_t *gid;
    int64_t n;
};
struct GroupNumF {
    static LTF_HD void at(int64_t c, const GroupNumP &p) {
        int64_t b = c * ALLOC_CHUNK, e = b + ALLOC_CHUNK < p.n ? b + ALLOC_CHUNK : p.n;
        int64_t g = p.incl[c] - p.cnt[c];
        for (int64_t k = b; k < e; k++) {
            p.gid[k] = g;
            g += p.f[k] != 0;
        }
    }
};
/* unique, step 3: sorted element j's value is group g (its run's head's):
** idx[pos] = g + 1; the head also writes y[g] (the first occurrence's
** bytes) and count[g] (the run's length) */
template <class K, class V> struct UniqueOutP {
    const K *k;
    const uint64_t *pos;
    const int64_t *gid;
    const V *x;
    V *y;
    void *idx, *cnt;
    int64_t n;
    int dt, wide;
};
template <class K, class V> struct UniqueOutF {
    static LTF_HD void at(int64_t j, const UniqueOutP<K, V> &p) {
        K key = p.k[j];
        bool nan = nan_key(key, p.dt);
        int64_t s = nan ? j : lower_key(p.k, 0, j, key, 0);
        int64_t g = p.gid[p.pos[s]];
        uint64_t at = p.pos[j];
        if (p.wide) ((int64_t *)p.idx)[at] = g + 1;
        else ((int32_t *)p.idx)[at] = (int32_t)(g + 1);
        if (s != j) return;
        p.y[g] = p.x[at];
        if (!p.cnt) return;
        int64_t c = (nan ? j + 1 : lower_key(p.k, j, p.n, key, 1)) - j;
        if (p.wide) ((int64_t *)p.cnt)[g] = c;
        else ((int32_t *)p.cnt)[g] = (int32_t)c;
    }
};

/* bincount, step 1: the first negative value's position (w[0], a min) and
** max(value) + 1 (w[1], a max) */
struct BinScanP {
    const void *arr;
    uint64_t *w;
    int wide;
};
struct BinScanF {
    static LTF_HD void at(int64_t i, const BinScanP &p) {
        int64_t v = index_at(p.arr, p.wide, i);
        if (v < 0) min_u64(&p.w[0], (uint64_t)i);
        else max_u64(&p.w[1], (uint64_t)v + 1);
    }
};
/* bincount, step 2: key (slice, value) of element i (ALLOC_NONE when the
** value is past the last bin), payload i */
struct BinKeyP {
    const void *arr;
    uint64_t *k, *pay;
    int64_t cols, size;
    int wide;
};
struct BinKeyF {
    static LTF_HD void at(int64_t i, const BinKeyP &p) {
        int64_t v = index_at(p.arr, p.wide, i);
        p.k[i] = v < p.size ? (uint64_t)((p.cols ? i / p.cols : 0) * p.size + v) : ALLOC_NONE;
        p.pay[i] = (uint64_t)i;
    }
};
/* bincount, step 3: bin j adds its run's weights (or ones) in position
** order, in U (unsigned for integers: they wrap, as the CPU's); binary:
** 1 when the run is not empty */
template <class T, class U> struct BinSumP {
    const uint64_t *k, *pay;
    const T *w;
    T *o;
    int64_t n;
    int binary;
};
template <class T, class U> struct BinSumF {
    static LTF_HD void at(int64_t j, const BinSumP<T, U> &p) {
        int64_t q = lower_key(p.k, 0, p.n, (uint64_t)j, 0);
        T acc = (T)0;
        for (; q < p.n && p.k[q] == (uint64_t)j; q++) {
            if (p.binary) { acc = (T)1; break; }
            acc = (T)(U)((U)acc + (U)(p.w ? p.w[p.pay[q]] : (T)1));
        }
        p.o[j] = acc;
    }
};

/* segment_*, step 1: the first position whose id is below its
** predecessor (or below 1 at the start) (w[0], a min), the last id (w[1]) */
struct SegCheckP {
    const void *ids;
    uint64_t *w;
    int64_t n;
    int wide;
};
struct SegCheckF {
    static LTF_HD void at(int64_t i, const SegCheckP &p) {
        int64_t id = index_at(p.ids, p.wide, i), prev = i > 0 ? index_at(p.ids, p.wide, i - 1) : 1;
        if (id < prev) min_u64(&p.w[0], (uint64_t)i);
        if (i == p.n - 1) p.w[1] = (uint64_t)id;
    }
};
/* segment_*, step 2: output (segment s, column q) reduces, in row order,
** the rows whose id is s + 1 (cpu/sort.c's SEGMENT: the first row copied,
** max keeps a NaN, sums in U, mean divides by the count: uint8 by the
** count itself, as SEGMENT's CNT_I64); none: 0 */
template <class T> struct SegCount { static LTF_HD T of(int64_t k) { return (T)k; } };
template <> struct SegCount<uint8_t> { static LTF_HD int64_t of(int64_t k) { return k; } };
template <class T, class U, class I> struct SegP {
    const T *x;
    const I *ids;
    T *o;
    int64_t n, inner;
    int op;
};
template <class T, class U, class I> struct SegF {
    static LTF_HD void at(int64_t i, const SegP<T, U, I> &p) {
        int64_t s = i / p.inner, q = i - s * p.inner, id = s + 1;
        int64_t lo = 0, hi = p.n;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if ((int64_t)p.ids[mid] < id) lo = mid + 1;
            else hi = mid;
        }
        int64_t b = lo;
        if (b >= p.n || (int64_t)p.ids[b] != id) { p.o[i] = (T)0; return; }
        T acc = p.x[b * p.inner + q];
        int64_t r = b + 1;
        for (; r < p.n && (int64_t)p.ids[r] == id; r++) {
            T v = p.x[r * p.inner + q];
            if (p.op == LTF_OP_SEGMENT_MAX) {
                if (!(v <= acc) && acc == acc) acc = v;
            } else {
                acc = (T)(U)((U)acc + (U)v);
            }
        }
        if (p.op == LTF_OP_SEGMENT_MEAN) acc = (T)(acc / SegCount<T>::of(r - b));
        p.o[i] = acc;
    }
};

/* sequence_mask without 'maxlen': max(0, max(lengths)) (w[1], a max) */
struct LenMaxP {
    const void *len;
    uint64_t *w;
    int wide;
};
struct LenMaxF {
    static LTF_HD void at(int64_t i, const LenMaxP &p) {
        int64_t v = index_at(p.len, p.wide, i);
        if (v > 0) max_u64(&p.w[1], (uint64_t)v);
    }
};
/* }==== */

/* {==== Host sides */
/* The device of an op's outputs: its first input's. */
inline void out_device(const ltf_tensor *x, ltf_device_type *type, int *ordinal) {
    *type = x->storage ? x->storage->device : LTF_DEVICE_CPU;
    *ordinal = x->storage ? x->storage->ordinal : 0;
}

/* A new output of the given shape on x's device (the engine's functions,
** through the context's table); NULL with the failure set. */
inline ltf_tensor *new_output(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *x, int dt, int rank,
                              const int64_t *dims) {
    const ltf_core_api *api = ctx->core_api;
    if (!api || !api->tensor_empty_on || !api->shape_check) {
        fail(ctx, LTF_ERR_INTERNAL, "%s: the engine gives no way to allocate outputs", def->name);
        return NULL;
    }
    if (api->shape_check(ctx, def->name, (ltf_dtype)dt, rank, dims) != LTF_OK) return NULL;
    ltf_device_type type;
    int ordinal;
    out_device(x, &type, &ordinal);
    return api->tensor_empty_on(ctx, (ltf_dtype)dt, rank, dims, type, ordinal, def->name);
}
inline void release_outputs(ltf_ctx *ctx, ltf_tensor **t, int n) {
    for (int i = 0; i < n; i++) {
        if (t[i] && ctx->core_api && ctx->core_api->tensor_release) ctx->core_api->tensor_release(t[i]);
        t[i] = NULL;
    }
}

/* Scratch words: two uint64 set to (ALLOC_NONE, 0); NULL with the status set. */
template <class E> uint64_t *words_new(E &e) {
    uint64_t *w = (uint64_t *)e.alloc(2 * sizeof(uint64_t));
    if (!w) return NULL;
    WordsP p = { w };
    if (e.template run<WordsInitF>(1, p) != LTF_OK) {
        e.release(w, 2 * sizeof(uint64_t));
        return NULL;
    }
    return w;
}

/* One integer element of 'x' (int32/int64) read back from the device. */
template <class E> ltf_status read_index(E &e, const ltf_tensor *x, int64_t i, int64_t *v) {
    if ((int)x->dtype == DT_I64) return e.read(v, ptr<int64_t>(x) + i, sizeof(int64_t));
    int32_t s = 0;
    ltf_status st = e.read(&s, ptr<int32_t>(x) + i, sizeof(int32_t));
    *v = s;
    return st;
}

/* Scratch of a chunk scan over n flags: the flags, then cnt, incl and a
** second buffer of incl (m = chunks each). */
struct ChunkScan {
    void *block;
    size_t bytes;
    uint8_t *f;
    int64_t *cnt, *incl, *tmp;
    int64_t m;
};
template <class E> bool chunk_scan_alloc(E &e, ChunkScan &s, int64_t n, size_t extra) {
    s.m = (n + ALLOC_CHUNK - 1) / ALLOC_CHUNK;
    size_t fb = ((size_t)n + 15) / 16 * 16;
    s.bytes = fb + 3 * (size_t)(s.m > 0 ? s.m : 1) * sizeof(int64_t) + extra;
    s.block = e.alloc(s.bytes);
    if (!s.block) return false;
    char *b = (char *)s.block;
    s.f = (uint8_t *)b;
    s.cnt = (int64_t *)(b + fb);
    s.incl = s.cnt + s.m;
    s.tmp = s.incl + s.m;
    return true;
}
/* The flags s.f (set) counted per chunk and the counts scanned into
** s.incl; '*total' (read back: a sync) the flags set. */
template <class E> ltf_status chunk_scan_run(E &e, ChunkScan &s, int64_t n, int64_t *total) {
    ChunkCountP cp = { s.f, s.cnt, n };
    ltf_status st = e.template run<ChunkCountF>(s.m, cp);
    if (st == LTF_OK) st = e.copy(s.incl, s.cnt, (size_t)s.m * sizeof(int64_t));
    for (int64_t w = 1; w < s.m && st == LTF_OK; w *= 2) {
        ScanStepP p = { s.incl, s.tmp, w };
        st = e.template run<ScanStepF>(s.m, p);
        int64_t *t = s.incl; s.incl = s.tmp; s.tmp = t;
    }
    if (st == LTF_OK) st = e.read(total, s.incl + s.m - 1, sizeof(int64_t));
    return st;
}

/* where_indices(condition): int64 (count, rank), 1-based coordinates of the
** nonzero elements in row-major order. */
LTF_CU_KERNEL(k_where_indices) {
    LTF_CU_UNUSED;
    const ltf_tensor *c = in[0];
    int dt = c->dtype;
    if (dsize(dt) == 0) return bad_dtype(ctx, def, dt);
    int64_t n = c->numel, count = 0;
    ltf_tensor *o = NULL;
    if (n > 0) {
        E e(ctx, def->name);
        if (e.status() != LTF_OK) return e.status();
        ChunkScan s;
        if (!chunk_scan_alloc(e, s, n, 0)) return e.status();
        ltf_status st = LTF_OK;
#define M(T) { NonzeroP<T> p = { ptr<T>(c), s.f }; st = e.template run<NonzeroF<T> >(n, p); }
        LTF_CU_BY_DTYPE(dt, M)
#undef M
        if (st == LTF_OK) st = chunk_scan_run(e, s, n, &count);
        if (st == LTF_OK) {
            int64_t dims[2] = { count, c->rank };
            o = new_output(ctx, def, c, DT_I64, 2, dims);
            if (!o) st = ctx->last_status;
        }
        if (st == LTF_OK && count > 0 && c->rank > 0) {
            WhereOutP p;
            p.f = s.f;
            p.cnt = s.cnt;
            p.incl = s.incl;
            p.o = ptr<int64_t>(o);
            p.n = n;
            p.rank = c->rank;
            for (int d = 0; d < c->rank; d++) p.dims[d] = c->dims[d];
            st = e.template run<WhereOutF>(s.m, p);
        }
        e.release(s.block, s.bytes);
        if (st != LTF_OK) {
            release_outputs(ctx, &o, 1);
            return st;
        }
    } else {
        int64_t dims[2] = { 0, c->rank };
        if (!(o = new_output(ctx, def, c, DT_I64, 2, dims))) return ctx->last_status;
    }
    out[0] = o;
    return LTF_OK;
}

/* unique over nonempty x with the sort keys K: see the header comment. */
template <class E, class K>
ltf_status unique_run(E &e, ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *x, int idt, ltf_tensor **o) {
    int64_t n = x->numel, ng = 0;
    SortBufs<K, uint64_t> b;
    if (!sort_bufs_alloc(e, b, n)) return e.status();
    ChunkScan s;
    if (!chunk_scan_alloc(e, s, n, (size_t)n * sizeof(int64_t))) {
        e.release(b.block, b.bytes);
        return e.status();
    }
    int64_t *gid = s.tmp + s.m;
    int dt = x->dtype, which = 0;
    SortKeyP<K, uint64_t> kp = { LTF_DATA(x), b.k[0], b.p[0], n, dt, 1, (K)skey_flip(dt, 0) };
    ltf_status st = e.template run<SortKeyF<K, uint64_t> >(n, kp);
    if (st == LTF_OK) st = merge_rows(e, b, 1, n, &which);
    if (st == LTF_OK) {
        HeadP<K> p = { b.k[which], b.p[which], s.f, dt };
        st = e.template run<HeadF<K> >(n, p);
    }
    if (st == LTF_OK) st = chunk_scan_run(e, s, n, &ng);
    if (st == LTF_OK) {
        GroupNumP p = { s.f, s.cnt, s.incl, gid, n };
        st = e.template run<GroupNumF>(s.m, p);
    }
    int nout = def->code ? 3 : 2;
    int64_t dy[1] = { ng }, dx[1] = { n };
    if (st == LTF_OK && !(o[0] = new_output(ctx, def, x, dt, 1, dy))) st = ctx->last_status;
    if (st == LTF_OK && !(o[1] = new_output(ctx, def, x, idt, 1, dx))) st = ctx->last_status;
    if (st == LTF_OK && nout == 3 && !(o[2] = new_output(ctx, def, x, idt, 1, dy))) st = ctx->last_status;
    if (st == LTF_OK) {
        void *cnt = nout == 3 ? LTF_DATA(o[2]) : NULL;
        int wide = idt == DT_I64;
#define M(V) { UniqueOutP<K, V> p = { b.k[which], b.p[which], gid, ptr<V>(x), ptr<V>(o[0]), LTF_DATA(o[1]), cnt, \
                                      n, dt, wide };                                                           \
               st = e.template run<UniqueOutF<K, V> >(n, p); }
        LTF_CU_BY_SIZE(dsize(dt), M)
#undef M
    }
    e.release(s.block, s.bytes);
    e.release(b.block, b.bytes);
    if (st != LTF_OK) release_outputs(ctx, o, nout);
    return st;
}

/* unique / unique_with_counts (code 1): i[0] the index dtype (0: int32).
** Outputs y, idx [, count]. */
LTF_CU_KERNEL(k_unique) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    int dt = x->dtype, idt = a->i[0] == 0 ? (int)DT_I32 : (int)a->i[0];
    if (dsize(dt) == 0) return bad_dtype(ctx, def, dt);
    if (idt != DT_I32 && idt != DT_I64)
        return fail(ctx, LTF_ERR_TYPE, "%s: 'out_idx' must be int32 or int64", def->name);
    if (x->rank != 1) {
        char s[128];
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'x' must be 1-D, got shape %s", def->name,
                    shape_str(x, s, sizeof s));
    }
    int64_t n = x->numel;
    if (idt == DT_I32 && n > INT32_MAX)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: %lld elements do not fit int32 indices (use out_idx = "
                    "tf.int64)", def->name, (long long)n);
    int nout_ = def->code ? 3 : 2;
    ltf_tensor *o[3] = { NULL, NULL, NULL };
    if (n == 0) {
        int64_t z[1] = { 0 };
        for (int i = 0; i < nout_; i++)
            if (!(o[i] = new_output(ctx, def, x, i == 0 ? dt : idt, 1, z))) {
                release_outputs(ctx, o, i);
                return ctx->last_status;
            }
    } else {
        E e(ctx, def->name);
        if (e.status() != LTF_OK) return e.status();
        ltf_status st = skey_wide(dt) ? unique_run<E, uint64_t>(e, ctx, def, x, idt, o)
                                      : unique_run<E, uint32_t>(e, ctx, def, x, idt, o);
        if (st != LTF_OK) return st;
    }
    for (int i = 0; i < nout_; i++) out[i] = o[i];
    return LTF_OK;
}

/* bincount's fill over nonempty arr and output o (zeroed bins where no value falls). */
template <class E, class T, class U>
ltf_status bincount_fill(E &e, const ltf_tensor *arr, const ltf_tensor *w, ltf_tensor *o, int64_t cols,
                         int64_t size, int binary) {
    int64_t n = arr->numel;
    SortBufs<uint64_t, uint64_t> b;
    if (!sort_bufs_alloc(e, b, n)) return e.status();
    BinKeyP kp = { LTF_DATA(arr), b.k[0], b.p[0], cols, size, (int)arr->dtype == DT_I64 };
    ltf_status st = e.template run<BinKeyF>(n, kp);
    int which = 0;
    if (st == LTF_OK) st = merge_rows(e, b, 1, n, &which);
    if (st == LTF_OK) {
        BinSumP<T, U> p = { b.k[which], b.p[which], w ? ptr<T>(w) : (const T *)0, ptr<T>(o), n, binary };
        st = e.template run<BinSumF<T, U> >(o->numel, p);
    }
    e.release(b.block, b.bytes);
    return st;
}

/* bincount(arr [, weights]): see ltf_ops/sort.h for the attributes. */
LTF_CU_KERNEL(k_bincount) {
    LTF_CU_UNUSED;
    const ltf_tensor *arr = in[0], *w = nin > 1 ? in[1] : NULL;
    if (!index_dtype_ok(arr->dtype))
        return fail(ctx, LTF_ERR_TYPE, "%s: 'arr' has dtype %s, expected int32 or int64", def->name,
                    dname(arr->dtype));
    int dt;
    if (w) {
        dt = w->dtype;
        if (dt != DT_F32 && dt != DT_F64 && dt != DT_I32 && dt != DT_I64)
            return fail(ctx, LTF_ERR_TYPE, "%s: 'weights' has dtype %s, expected float32, float64, int32 or int64",
                        def->name, dname(dt));
        if (w->numel != arr->numel)
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'weights' has %lld elements, 'arr' %lld", def->name,
                        (long long)w->numel, (long long)arr->numel);
    } else {
        int64_t v = a->i[3] == 0 ? (int64_t)DT_I32 : a->i[3] - 1;
        if (v != DT_F32 && v != DT_F64 && v != DT_I32 && v != DT_I64)
            return fail(ctx, LTF_ERR_TYPE, "%s: 'dtype' must be float32, float64, int32 or int64", def->name);
        dt = (int)v;
    }
    if (w && (a->i[2] & 1))
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'weights' and 'binary_output' cannot both be given",
                    def->name);
    if (a->i[0] < 0)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'minlength' is %lld, must be >= 0", def->name,
                    (long long)a->i[0]);
    if (a->i[1] < -1)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'maxlength' is %lld, must be >= 0", def->name,
                    (long long)a->i[1]);
    int64_t n = arr->numel, size = 0;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (n > 0) {
        uint64_t *wd = words_new(e), hw[2] = { ALLOC_NONE, 0 };
        if (!wd) return e.status();
        BinScanP p = { LTF_DATA(arr), wd, (int)arr->dtype == DT_I64 };
        ltf_status st = e.template run<BinScanF>(n, p);
        if (st == LTF_OK) st = e.read(hw, wd, sizeof hw);
        e.release(wd, 2 * sizeof(uint64_t));
        if (st != LTF_OK) return st;
        if (hw[0] != ALLOC_NONE) {
            int64_t v = 0;
            if ((st = read_index(e, arr, (int64_t)hw[0], &v)) != LTF_OK) return st;
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'arr' must be non-negative, got %lld at position %lld",
                        def->name, (long long)v, (long long)hw[0] + 1);
        }
        size = hw[1] > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)hw[1];
    }
    if (size < a->i[0]) size = a->i[0];
    if (a->i[1] >= 0 && size > a->i[1]) size = a->i[1];
    int64_t dims[LTF_MAX_RANK];
    int r = 0;
    int64_t cols = n;
    if (a->i[2] & 2) {
        if (arr->rank < 1)
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' -1 needs 'arr' of rank >= 1, got a scalar",
                        def->name);
        for (int d = 0; d < arr->rank - 1; d++) dims[r++] = arr->dims[d];
        cols = arr->dims[arr->rank - 1];
    }
    dims[r++] = size;
    ltf_tensor *o = new_output(ctx, def, arr, dt, r, dims);
    if (!o) return ctx->last_status;
    ltf_status st = LTF_OK;
    if (o->numel > 0 && n == 0) {
        st = e.zero(LTF_DATA(o), (size_t)o->numel * dsize(dt));
    } else if (o->numel > 0) {
        int binary = (int)(a->i[2] & 1);
        switch (dt) {
        case DT_F32: st = bincount_fill<E, float, float>(e, arr, w, o, cols, size, binary); break;
        case DT_F64: st = bincount_fill<E, double, double>(e, arr, w, o, cols, size, binary); break;
        case DT_I32: st = bincount_fill<E, int32_t, uint32_t>(e, arr, w, o, cols, size, binary); break;
        default: st = bincount_fill<E, int64_t, uint64_t>(e, arr, w, o, cols, size, binary); break;
        }
    }
    if (st != LTF_OK) {
        release_outputs(ctx, &o, 1);
        return st;
    }
    out[0] = o;
    return LTF_OK;
}

template <class E, class T, class U>
ltf_status segment_fill(E &e, const ltf_tensor *data, const ltf_tensor *ids, ltf_tensor *o, int64_t inner, int op) {
    int64_t n = data->dims[0];
    if ((int)ids->dtype == DT_I64) {
        SegP<T, U, int64_t> p = { ptr<T>(data), ptr<int64_t>(ids), ptr<T>(o), n, inner, op };
        return e.template run<SegF<T, U, int64_t> >(o->numel, p);
    }
    SegP<T, U, int32_t> p = { ptr<T>(data), ptr<int32_t>(ids), ptr<T>(o), n, inner, op };
    return e.template run<SegF<T, U, int32_t> >(o->numel, p);
}

/* segment_sum / segment_mean / segment_max (def->code) of (data, segment_ids). */
LTF_CU_KERNEL(k_segment) {
    LTF_CU_UNUSED;
    const ltf_tensor *data = in[0], *ids = in[1];
    int dt = data->dtype;
    if (dt != DT_F32 && dt != DT_F64 && dt != DT_I32 && dt != DT_I64 && dt != DT_U8)
        return fail(ctx, LTF_ERR_TYPE, "%s: 'data' has dtype %s, expected float32, float64, int32, int64 or uint8",
                    def->name, dname(dt));
    if (!index_dtype_ok(ids->dtype))
        return fail(ctx, LTF_ERR_TYPE, "%s: 'segment_ids' has dtype %s, expected int32 or int64", def->name,
                    dname(ids->dtype));
    ltf_status st = need_rank1(ctx, def, "data", data);
    if (st != LTF_OK) return st;
    if (ids->rank != 1 || ids->dims[0] != data->dims[0]) {
        char s1[128], s2[128];
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                    "%s: 'segment_ids' %s must be a vector as long as the first dim of 'data' %s", def->name,
                    shape_str(ids, s1, sizeof s1), shape_str(data, s2, sizeof s2));
    }
    int64_t n = data->dims[0], last = 0;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (n > 0) {
        uint64_t *wd = words_new(e), hw[2] = { ALLOC_NONE, 0 };
        if (!wd) return e.status();
        SegCheckP p = { LTF_DATA(ids), wd, n, (int)ids->dtype == DT_I64 };
        st = e.template run<SegCheckF>(n, p);
        if (st == LTF_OK) st = e.read(hw, wd, sizeof hw);
        e.release(wd, 2 * sizeof(uint64_t));
        if (st != LTF_OK) return st;
        if (hw[0] != ALLOC_NONE) {   /* the CPU's first failure, with its values */
            int64_t at = (int64_t)hw[0], id = 0, prev = 1;
            if ((st = read_index(e, ids, at, &id)) != LTF_OK) return st;
            if (at > 0 && (st = read_index(e, ids, at - 1, &prev)) != LTF_OK) return st;
            if (id < 1)
                return fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: segment id %lld at position %lld is out of range: ids are 1-based", def->name,
                            (long long)id, (long long)at + 1);
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: 'segment_ids' must be sorted: %lld at position %lld follows %lld", def->name,
                        (long long)id, (long long)at + 1, (long long)prev);
        }
        last = (int64_t)hw[1];
    }
    int64_t dims[LTF_MAX_RANK], inner = 1;
    for (int d = 0; d < data->rank; d++) dims[d] = data->dims[d];
    for (int d = 1; d < data->rank; d++) inner *= data->dims[d];
    dims[0] = last;
    ltf_tensor *o = new_output(ctx, def, data, dt, data->rank, dims);
    if (!o) return ctx->last_status;
    if (o->numel > 0) {
        int op = def->code;
        switch (dt) {
        case DT_F32: st = segment_fill<E, float, float>(e, data, ids, o, inner, op); break;
        case DT_F64: st = segment_fill<E, double, double>(e, data, ids, o, inner, op); break;
        case DT_I32: st = segment_fill<E, int32_t, uint64_t>(e, data, ids, o, inner, op); break;
        case DT_U8: st = segment_fill<E, uint8_t, uint64_t>(e, data, ids, o, inner, op); break;
        default: st = segment_fill<E, int64_t, uint64_t>(e, data, ids, o, inner, op); break;
        }
    }
    if (st != LTF_OK) {
        release_outputs(ctx, &o, 1);
        return st;
    }
    out[0] = o;
    return LTF_OK;
}

/* sequence_mask: k_sequence_mask on an output of the engine's, or, without
** one ('maxlen' not given), on one of max(0, max(lengths)) columns. */
LTF_CU_KERNEL(k_sequence_mask_alloc) {
    if (out[0]) return k_sequence_mask<E>(ctx, def, in, nin, a, out, nout);
    const ltf_tensor *l = in[0];
    int dt = (int)a->i[1];
    if (dsize(dt) == 0) return bad_dtype(ctx, def, dt);
    if (!index_dtype_ok(l->dtype)) return bad_dtype(ctx, def, l->dtype);
    int64_t maxlen = a->i[0];
    if (maxlen < 0) {
        maxlen = 0;
        if (l->numel > 0) {
            E e(ctx, def->name);
            if (e.status() != LTF_OK) return e.status();
            uint64_t *wd = words_new(e), hw[2] = { ALLOC_NONE, 0 };
            if (!wd) return e.status();
            LenMaxP p = { LTF_DATA(l), wd, (int)l->dtype == DT_I64 };
            ltf_status st = e.template run<LenMaxF>(l->numel, p);
            if (st == LTF_OK) st = e.read(hw, wd, sizeof hw);
            e.release(wd, 2 * sizeof(uint64_t));
            if (st != LTF_OK) return st;
            maxlen = (int64_t)hw[1];
        }
    }
    if (l->rank >= LTF_MAX_RANK) return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'lengths' has too many dims", def->name);
    int64_t dims[LTF_MAX_RANK];
    for (int d = 0; d < l->rank; d++) dims[d] = l->dims[d];
    dims[l->rank] = maxlen;
    ltf_tensor *o = new_output(ctx, def, l, dt, l->rank + 1, dims);
    if (!o) return ctx->last_status;
    ltf_status st = k_sequence_mask<E>(ctx, def, in, nin, a, &o, 1);
    if (st != LTF_OK) {
        release_outputs(ctx, &o, 1);
        return st;
    }
    out[0] = o;
    return LTF_OK;
}

/* The kernels of this header for executor E (kernel_for asks here first);
** NULL for other ops. */
template <class E> const void *alloc_kernel_for(int op) {
    switch (op) {
    case LTF_OP_WHERE_INDICES: return (const void *)&k_where_indices<E>;
    case LTF_OP_UNIQUE: case LTF_OP_UNIQUE_WITH_COUNTS: return (const void *)&k_unique<E>;
    case LTF_OP_BINCOUNT: return (const void *)&k_bincount<E>;
    case LTF_OP_SEGMENT_SUM: case LTF_OP_SEGMENT_MEAN: case LTF_OP_SEGMENT_MAX: return (const void *)&k_segment<E>;
    case LTF_OP_SEQUENCE_MASK: return (const void *)&k_sequence_mask_alloc<E>;
    default: return NULL;
    }
}
/* }==== */

}  // namespace ltf_cu

#endif
