/*
** cuda/kernels/sort.cuh: sort, argsort, top_k, searchsorted and sort_grad
** on the device (ltf_ops/sort.h), with the CPU's results exactly
** (cpu/sort.c): values become unsigned keys whose integer order is the
** values' order (floats: sign flip; every NaN one key above +inf; -0 equal
** to +0 where positions are returned; 'descending' complements the keys),
** and each row (the last axis) is sorted STABLY by (key, position):
**
**   1. one index per element writes its key and its position in the row;
**   2. ceil(log2(n)) merge passes (run widths 1, 2, 4, ...): each element
**      of a pair of sorted runs computes its place in the merged run as its
**      place in its own run plus the number of keys of the other run that
**      precede it (binary search: keys < it for the left run, keys <= it
**      for the right one, so equal keys keep their order), and moves there
**      (between two buffers; every destination is written once);
**   3. one index per output reads the sorted keys (sort), the positions
**      (argsort), or the first k positions of a descending sort and the
**      values there (top_k: ties give the lower position first, as
**      TensorFlow and the CPU).
**
** searchsorted is one binary search per value (the CPU's comparisons);
** sort_grad sorts each row's indices with their positions, then every
** output element sums, in position order, the gradients whose index names
** it (a gather: no atomics, the CPU's order of additions).
**
** The host sides (LTF_CU_KERNEL) use ops.cuh's helpers: this header is
** included from ops.cuh after them.
*/
#ifndef LTF_CU_SORT_CUH
#define LTF_CU_SORT_CUH

#include "common.cuh"
#include "elementwise.cuh"

namespace ltf_cu {

/* {==== Keys (cpu/sort.c's make_keys / from_keys) */
LTF_HD uint32_t skey_f32(uint32_t u, int canon) {
    if ((u & 0x7fffffffu) > 0x7f800000u) u = 0x7fc00000u;
    if (canon && u == 0x80000000u) u = 0;
    return u ^ ((uint32_t)((int32_t)u >> 31) | 0x80000000u);
}
LTF_HD uint64_t skey_f64(uint64_t u, int canon) {
    if ((u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull) u = 0x7ff8000000000000ull;
    if (canon && u == 0x8000000000000000ull) u = 0;
    return u ^ ((uint64_t)((int64_t)u >> 63) | 0x8000000000000000ull);
}

/* What make_keys XORs into the keys of dtype 'dt' (the integers' sign flip
** and, descending, the complement). */
inline uint64_t skey_flip(int dt, int desc) {
    switch (dt) {
    case DT_F32: return desc ? 0xffffffffull : 0;
    case DT_I32: return (desc ? 0xffffffffull : 0) ^ 0x80000000ull;
    case DT_F64: return desc ? ~0ull : 0;
    case DT_I64: return (desc ? ~0ull : 0) ^ 0x8000000000000000ull;
    default: return desc ? 0xffull : 0;   /* uint8, bool */
    }
}
/* 64-bit keys for float64/int64, 32-bit for the others. */
inline bool skey_wide(int dt) { return dt == DT_F64 || dt == DT_I64; }

/* Keys of 'x' (raw bits) with each element's position in its row. */
template <class K, class P> struct SortKeyP {
    const void *x;
    K *k;
    P *pay;
    int64_t n;            /* row length */
    int dt, canon;
    K flip;
};
template <class K, class P> struct SortKeyF {
    static LTF_HD void at(int64_t i, const SortKeyP<K, P> &p) {
        K key;
        switch (p.dt) {
        case DT_F32: key = (K)skey_f32(((const uint32_t *)p.x)[i], p.canon); break;
        case DT_F64: key = (K)skey_f64(((const uint64_t *)p.x)[i], p.canon); break;
        case DT_I32: key = (K)((const uint32_t *)p.x)[i]; break;
        case DT_I64: key = (K)((const uint64_t *)p.x)[i]; break;
        default: key = (K)((const uint8_t *)p.x)[i]; break;
        }
        p.k[i] = key ^ p.flip;
        p.pay[i] = (P)(i % p.n);
    }
};

/* The values back from sorted keys (from_keys). */
template <class K> struct UnkeyP {
    const K *k;
    void *o;
    int dt;
    K flip;
};
template <class K> struct UnkeyF {
    static LTF_HD void at(int64_t i, const UnkeyP<K> &p) {
        K v = p.k[i] ^ p.flip;
        switch (p.dt) {
        case DT_F32: {
            uint32_t w = (uint32_t)v;
            ((uint32_t *)p.o)[i] = (w >> 31) ? (w & 0x7fffffffu) : ~w;
            break;
        }
        case DT_F64: {
            uint64_t w = (uint64_t)v;
            ((uint64_t *)p.o)[i] = (w >> 63) ? (w & 0x7fffffffffffffffull) : ~w;
            break;
        }
        case DT_I32: ((uint32_t *)p.o)[i] = (uint32_t)v; break;
        case DT_I64: ((uint64_t *)p.o)[i] = (uint64_t)v; break;
        default: ((uint8_t *)p.o)[i] = (uint8_t)(v & 0xffu); break;
        }
    }
};
/* }==== */

/* {==== Merge passes */
/* One pass: rows of 'n' keys 'ks' (with payloads 'ps') made of sorted runs
** of width 'w' become rows of sorted runs of width 2w in 'kd'/'pd'. */
template <class K, class P> struct SortMergeP {
    const K *ks;
    const P *ps;
    K *kd;
    P *pd;
    int64_t n, w;
};
template <class K, class P> struct SortMergeF {
    static LTF_HD void at(int64_t i, const SortMergeP<K, P> &p) {
        int64_t row = i / p.n, pos = i - row * p.n;
        const K *kr = p.ks + row * p.n;
        int64_t run = pos / p.w, s = (run - (run & 1)) * p.w;
        K key = p.ks[i];
        int64_t dest;
        if ((run & 1) == 0) {   /* left run: after the right run's keys below it */
            int64_t lo = s + p.w < p.n ? s + p.w : p.n, hi = s + 2 * p.w < p.n ? s + 2 * p.w : p.n;
            int64_t a = lo, b = hi;
            while (a < b) {
                int64_t mid = a + (b - a) / 2;
                if (kr[mid] < key) a = mid + 1;
                else b = mid;
            }
            dest = pos + (a - lo);
        } else {                /* right run: after the left run's keys up to it */
            int64_t a = s, b = s + p.w;
            while (a < b) {
                int64_t mid = a + (b - a) / 2;
                if (kr[mid] <= key) a = mid + 1;
                else b = mid;
            }
            dest = pos - p.w + (a - s);
        }
        p.kd[row * p.n + dest] = key;
        p.pd[row * p.n + dest] = p.ps[i];
    }
};
/* }==== */

/* {==== Outputs */
/* argsort: the sorted positions, 1-based. */
template <class P> struct PosOutP {
    const P *pay;
    void *o;
    int wide;             /* int64 output */
};
template <class P> struct PosOutF {
    static LTF_HD void at(int64_t i, const PosOutP<P> &p) {
        int64_t v = (int64_t)p.pay[i] + 1;
        if (p.wide) ((int64_t *)p.o)[i] = v;
        else ((int32_t *)p.o)[i] = (int32_t)v;
    }
};

/* top_k: the first k of each descending row: x's value there and the
** 1-based position. */
template <class T, class P> struct TopkOutP {
    const T *x;
    const P *pay;
    T *v;
    void *idx;
    int64_t n, k;
    int wide;
};
template <class T, class P> struct TopkOutF {
    static LTF_HD void at(int64_t i, const TopkOutP<T, P> &p) {
        int64_t row = i / p.k, q = i - row * p.k;
        int64_t pos = (int64_t)p.pay[row * p.n + q];
        p.v[i] = p.x[row * p.n + pos];
        if (p.wide) ((int64_t *)p.idx)[i] = pos + 1;
        else ((int32_t *)p.idx)[i] = (int32_t)(pos + 1);
    }
};

/* searchsorted: per value, the first position of its row (length m) whose
** element is not below it (left) or is above it (right), 1-based. */
template <class T> struct SearchP {
    const T *s, *v;
    void *o;
    int64_t m, nv;
    int right, wide;
};
template <class T> struct SearchF {
    static LTF_HD void at(int64_t i, const SearchP<T> &p) {
        const T *s = p.s + (i / p.nv) * p.m;
        T v = p.v[i];
        int64_t lo = 0, hi = p.m;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo) / 2;
            if (p.right ? !(v < s[mid]) : s[mid] < v) lo = mid + 1;
            else hi = mid;
        }
        if (p.wide) ((int64_t *)p.o)[i] = lo + 1;
        else ((int32_t *)p.o)[i] = (int32_t)(lo + 1);
    }
};

/* sort_grad, step 1: each index (1-based, int32/int64) as an ordered key
** with its position in its row of k; an index outside 1..n raises the flag. */
struct GradKeyP {
    const void *idx;
    uint64_t *k, *pay;
    int64_t k_len, n;
    int wide;
    int *flag;
};
struct GradKeyF {
    static LTF_HD void at(int64_t i, const GradKeyP &p) {
        int64_t v = p.wide ? ((const int64_t *)p.idx)[i] : (int64_t)((const int32_t *)p.idx)[i];
        if (v < 1 || v > p.n) raise_flag(p.flag, ERR_INDEX);
        p.k[i] = (uint64_t)v ^ 0x8000000000000000ull;
        p.pay[i] = (uint64_t)(i % p.k_len);
    }
};
/* sort_grad, step 2: output (row, j) sums g[row, q] over the q (in order)
** whose index is j + 1: a run of the row's sorted keys. */
template <class T> struct GradSumP {
    const T *g;
    const uint64_t *k, *pay;
    T *o;
    int64_t n, k_len;
};
template <class T> struct GradSumF {
    static LTF_HD void at(int64_t i, const GradSumP<T> &p) {
        int64_t row = i / p.n, j = i - row * p.n;
        const uint64_t *kr = p.k + row * p.k_len, *pr = p.pay + row * p.k_len;
        uint64_t want = (uint64_t)(j + 1) ^ 0x8000000000000000ull;
        int64_t a = 0, b = p.k_len;
        while (a < b) {
            int64_t mid = a + (b - a) / 2;
            if (kr[mid] < want) a = mid + 1;
            else b = mid;
        }
        T s = (T)0;
        for (; a < p.k_len && kr[a] == want; a++) s = s + p.g[row * p.k_len + (int64_t)pr[a]];
        p.o[i] = s;
    }
};
/* }==== */

}  // namespace ltf_cu

/* {==== Host sides (ops.cuh's helpers: included from there after them) */
namespace ltf_cu {

/* Scratch of a row sort: keys and payloads twice. */
template <class K, class P> struct SortBufs {
    K *k[2];
    P *p[2];
    void *block;
    size_t bytes;
};

/* One scratch block for 'count' keys and payloads, twice; false (the
** executor's status set) when the device is out of memory. */
template <class E, class K, class P> bool sort_bufs_alloc(E &e, SortBufs<K, P> &b, int64_t count) {
    size_t c = (size_t)(count > 0 ? count : 1);
    b.bytes = 2 * c * sizeof(K) + 2 * c * sizeof(P) + 16;
    b.block = e.alloc(b.bytes);
    if (!b.block) return false;
    char *base = (char *)b.block;
    b.p[0] = (P *)base;                       /* payloads first: 8-byte aligned for any K */
    b.p[1] = (P *)(base + c * sizeof(P));
    b.k[0] = (K *)(base + 2 * c * sizeof(P));
    b.k[1] = (K *)(base + 2 * c * sizeof(P) + c * sizeof(K));
    return true;
}

/* Merge passes over 'rows' rows of 'n' (keys and payloads in buffer 0);
** the sorted rows end in buffer '*which'. */
template <class E, class K, class P>
ltf_status merge_rows(E &e, SortBufs<K, P> &b, int64_t rows, int64_t n, int *which) {
    int cur = 0;
    for (int64_t w = 1; w < n; w *= 2) {
        SortMergeP<K, P> m = { b.k[cur], b.p[cur], b.k[1 - cur], b.p[1 - cur], n, w };
        ltf_status st = e.template run<SortMergeF<K, P> >(rows * n, m);
        if (st != LTF_OK) return st;
        cur = 1 - cur;
    }
    *which = cur;
    return LTF_OK;
}

inline bool sortable(int dt) { return dt == DT_F32 || dt == DT_F64 || dt == DT_I32 || dt == DT_I64 || dt == DT_U8; }

inline ltf_status need_sortable(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, int dt) {
    if (sortable(dt)) return LTF_OK;
    return fail(ctx, LTF_ERR_TYPE, "%s: '%s' has dtype %s, expected float32, float64, int32, int64 or uint8",
                def->name, arg, dname(dt));
}
/* ops/sort.c's index_dtype: a slot holding dtype + 1 (0: int32). */
inline ltf_status index_dtype(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, int64_t v, int *dt) {
    v = v == 0 ? (int64_t)DT_I32 : v == INT64_MIN ? -1 : v - 1;
    if (v != DT_I32 && v != DT_I64)
        return fail(ctx, LTF_ERR_TYPE, "%s: '%s' must be int32 or int64, got %s", def->name, arg,
                    v >= 0 && v < 8 ? dname((int)v) : "an invalid dtype");
    *dt = (int)v;
    return LTF_OK;
}
inline ltf_status need_rank1(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const ltf_tensor *t) {
    if (t->rank != 0) return LTF_OK;
    return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must have rank >= 1, got a scalar", def->name, arg);
}

/* Keys of 'x' sorted along its last axis (rows of n): 'desc', 'canon' as
** cpu/sort.c. On success the caller owns 'b' (release b.block). */
template <class E, class K>
ltf_status sort_keys_rows(E &e, const ltf_tensor *x, int64_t n, int desc, int canon, SortBufs<K, uint32_t> &b,
                          int *which) {
    int64_t count = x->numel, rows = count / n;
    if (!sort_bufs_alloc(e, b, count)) return e.status();
    SortKeyP<K, uint32_t> kp = { LTF_DATA(x), b.k[0], b.p[0], n, (int)x->dtype, canon, (K)skey_flip(x->dtype, desc) };
    ltf_status st = e.template run<SortKeyF<K, uint32_t> >(count, kp);
    if (st == LTF_OK) st = merge_rows(e, b, rows, n, which);
    if (st != LTF_OK) e.release(b.block, b.bytes);
    return st;
}

/* sort's values or argsort's 1-based positions of 'x' (rows of n) into 'o'. */
template <class E, class K>
ltf_status sort_run(E &e, const ltf_op_def *def, const ltf_tensor *x, ltf_tensor *o, int64_t n, int desc) {
    SortBufs<K, uint32_t> b;
    int which = 0, arg = def->code == LTF_OP_ARGSORT;
    ltf_status st = sort_keys_rows<E, K>(e, x, n, desc, arg, b, &which);
    if (st != LTF_OK) return st;
    if (arg) {
        PosOutP<uint32_t> p = { b.p[which], LTF_DATA(o), (int)o->dtype == DT_I64 };
        st = e.template run<PosOutF<uint32_t> >(o->numel, p);
    } else {
        UnkeyP<K> p = { b.k[which], LTF_DATA(o), (int)x->dtype, (K)skey_flip(x->dtype, desc) };
        st = e.template run<UnkeyF<K> >(o->numel, p);
    }
    e.release(b.block, b.bytes);
    return st;
}

/* sort (code LTF_OP_SORT) and argsort: i[0] descending; argsort's i[1]
** the index dtype + 1. */
LTF_CU_KERNEL(k_sort) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_status st = need_sortable(ctx, def, "values", x->dtype);
    if (st != LTF_OK || (st = need_rank1(ctx, def, "values", x)) != LTF_OK) return st;
    int it = DT_I32;
    if (def->code == LTF_OP_ARGSORT && (st = index_dtype(ctx, def, "index_type", a->i[1], &it)) != LTF_OK)
        return st;
    int64_t n = x->dims[x->rank - 1];
    if (x->numel == 0 || n == 0) return LTF_OK;
    if (n > (int64_t)UINT32_MAX)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: rows of %lld elements are too long", def->name, (long long)n);
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    int desc = a->i[0] != 0;
    return skey_wide(x->dtype) ? sort_run<E, uint64_t>(e, def, x, out[0], n, desc)
                               : sort_run<E, uint32_t>(e, def, x, out[0], n, desc);
}

/* top_k: the first k of each stable descending row of 'x': values into 'v',
** 1-based positions into 'idx' (x's bytes copied, so NaN payloads and -0 stay). */
template <class E, class K>
ltf_status topk_run(E &e, const ltf_tensor *x, ltf_tensor *v, ltf_tensor *idx, int64_t n, int64_t k) {
    SortBufs<K, uint32_t> b;
    int which = 0;
    ltf_status st = sort_keys_rows<E, K>(e, x, n, 1, 1, b, &which);   /* descending, -0 == +0 */
    if (st != LTF_OK) return st;
    int wide = (int)idx->dtype == DT_I64;
    switch (dsize(x->dtype)) {
#define M(T) { TopkOutP<T, uint32_t> p = { ptr<T>(x), b.p[which], ptr<T>(v), LTF_DATA(idx), n, k, wide }; \
               st = e.template run<TopkOutF<T, uint32_t> >(v->numel, p); }
    case 1: M(uint8_t) break;
    case 4: M(uint32_t) break;
    default: M(uint64_t) break;
#undef M
    }
    e.release(b.block, b.bytes);
    return st;
}

/* top_k: i[0] k, i[1] the index dtype + 1. Outputs values, indices. */
LTF_CU_KERNEL(k_top_k) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_status st = need_sortable(ctx, def, "input", x->dtype);
    if (st != LTF_OK) return st;
    int it = DT_I32;
    if ((st = index_dtype(ctx, def, "index_type", a->i[1], &it)) != LTF_OK) return st;
    int64_t k = a->i[0];
    if (k < 0) return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'k' is %lld, must be >= 0", def->name, (long long)k);
    if ((st = need_rank1(ctx, def, "input", x)) != LTF_OK) return st;
    int64_t n = x->dims[x->rank - 1];
    if (k > n) {
        char s[128];
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: input %s must have at least k = %lld columns (last axis)",
                    def->name, shape_str(x, s, sizeof s), (long long)k);
    }
    if (nout < 2 || out[0]->numel == 0) return LTF_OK;
    if (n > (int64_t)UINT32_MAX)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: rows of %lld elements are too long", def->name, (long long)n);
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return skey_wide(x->dtype) ? topk_run<E, uint64_t>(e, x, out[0], out[1], n, k)
                               : topk_run<E, uint32_t>(e, x, out[0], out[1], n, k);
}

/* searchsorted(sorted_sequence, values): i[0] side (0 left, 1 right), i[1]
** the output dtype + 1. */
LTF_CU_KERNEL(k_searchsorted) {
    LTF_CU_UNUSED;
    const ltf_tensor *s = in[0], *v = in[1];
    ltf_status st = need_sortable(ctx, def, "sorted_sequence", s->dtype);
    if (st != LTF_OK) return st;
    if (v->dtype != s->dtype)
        return fail(ctx, LTF_ERR_TYPE, "%s: 'values' has dtype %s, 'sorted_sequence' has %s", def->name,
                    dname(v->dtype), dname(s->dtype));
    int ot = DT_I32;
    if ((st = index_dtype(ctx, def, "out_type", a->i[1], &ot)) != LTF_OK) return st;
    if (a->i[0] != 0 && a->i[0] != 1)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'side' must be 'left' or 'right'", def->name);
    if ((st = need_rank1(ctx, def, "sorted_sequence", s)) != LTF_OK) return st;
    if ((st = need_rank1(ctx, def, "values", v)) != LTF_OK) return st;
    bool bad = s->rank != v->rank;
    for (int d = 0; !bad && d < s->rank - 1; d++) bad = s->dims[d] != v->dims[d];
    if (bad) {
        char ss[128], sv[128];
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                    "%s: 'sorted_sequence' %s and 'values' %s must have the same rank and leading dims", def->name,
                    shape_str(s, ss, sizeof ss), shape_str(v, sv, sizeof sv));
    }
    int64_t m = s->dims[s->rank - 1], nv = v->dims[v->rank - 1];
    if (ot == DT_I32 && m >= INT32_MAX)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: rows of length %lld are too long for int32 positions",
                    def->name, (long long)m);
    if (v->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    int right = a->i[0] == 1, wide = ot == DT_I64;
    switch (s->dtype) {
#define M(T) { SearchP<T> p = { ptr<T>(s), ptr<T>(v), LTF_DATA(out[0]), m, nv, right, wide }; \
               return e.template run<SearchF<T> >(v->numel, p); }
    case DT_F32: M(float)
    case DT_F64: M(double)
    case DT_I32: M(int32_t)
    case DT_I64: M(int64_t)
    default: M(uint8_t)
#undef M
    }
}

/* sort_grad over nonempty 'g': each row's indices sorted with their
** positions, then every output element sums its run of gradients. */
template <class E, class T>
ltf_status sort_grad_run(E &e, const ltf_tensor *g, const ltf_tensor *idx, ltf_tensor *o) {
    int64_t k = g->dims[g->rank - 1], n = o->dims[o->rank - 1], rows = g->numel / k;
    SortBufs<uint64_t, uint64_t> b;
    if (!sort_bufs_alloc(e, b, g->numel)) return e.status();
    GradKeyP kp = { LTF_DATA(idx), b.k[0], b.p[0], k, n, (int)idx->dtype == DT_I64, e.flag() };
    ltf_status st = e.template run<GradKeyF>(g->numel, kp);
    if (st == LTF_OK) st = e.check();   /* an index out of range: the host build reports it now */
    int which = 0;
    if (st == LTF_OK) st = merge_rows(e, b, rows, k, &which);
    if (st == LTF_OK) {
        GradSumP<T> p = { ptr<T>(g), b.k[which], b.p[which], ptr<T>(o), n, k };
        st = e.template run<GradSumF<T> >(o->numel, p);
    }
    e.release(b.block, b.bytes);
    return st;
}

/* sort_grad(g, indices, x): zeros of x's shape plus g at the 1-based
** last-axis positions 'indices' (duplicates summed in position order). */
LTF_CU_KERNEL(k_sort_grad) {
    LTF_CU_UNUSED;
    const ltf_tensor *g = in[0], *idx = in[1], *x = in[2];
    ltf_tensor *o = out[0];
    if ((int)g->dtype != DT_F32 && (int)g->dtype != DT_F64)
        return fail(ctx, LTF_ERR_TYPE, "%s: 'g' has dtype %s, expected float32 or float64", def->name, dname(g->dtype));
    if ((int)idx->dtype != DT_I32 && (int)idx->dtype != DT_I64)
        return fail(ctx, LTF_ERR_TYPE, "%s: 'indices' has dtype %s, expected int32 or int64", def->name,
                    dname(idx->dtype));
    bool bad = !same_dims(g, idx) || x->rank != g->rank || x->rank == 0;
    for (int d = 0; !bad && d < x->rank - 1; d++) bad = x->dims[d] != g->dims[d];
    if (bad) {
        char s1[128], s2[128], s3[128];
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                    "%s: 'g' %s and 'indices' %s must have one shape, and x %s the same leading dims", def->name,
                    shape_str(g, s1, sizeof s1), shape_str(idx, s2, sizeof s2), shape_str(x, s3, sizeof s3));
    }
    if (o->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (g->numel == 0) return e.zero(LTF_DATA(o), (size_t)o->numel * dsize(o->dtype));
    return (int)g->dtype == DT_F32 ? sort_grad_run<E, float>(e, g, idx, o) : sort_grad_run<E, double>(e, g, idx, o);
}

}  // namespace ltf_cu
/* }==== */

#endif
