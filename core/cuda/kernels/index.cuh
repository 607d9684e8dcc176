/*
** cuda/kernels/index.cuh: device kernels of the indexing ops (gather_nd,
** scatter_nd, tensor_scatter_nd_*, roll, ensure_shape, sequence_mask), the
** image resizes and their gradients, the matrix moves of linalg
** (band_part, diag, diag_part, matrix_transpose), split_like and
** check_numerics: their bodies, then their host sides.
**
** Included by ops.cuh after its helpers (fail, dsize, LTF_CU_KERNEL, the
** dispatch macros), before kernel_for. Every body is a gather: each output
** index computes its value in a fixed order, so no value needs atomics (only
** the flags do: the error flag, check_numerics' OR of bits; order-free).
**
** Scatters (scatter_nd, tensor_scatter_nd_*) with duplicate positions must
** apply their updates in order, as cpu/indexing.c does on one thread. They
** run in three steps: each update row's target row (over the first K
** dims; -1 and the error flag when out of range), a stable merge sort of
** (target, row) pairs (log2(N) passes; each element finds its place in the
** merged pair of runs by a binary search), then each output element finds
** its rows by binary search in the sorted targets and combines them in row
** order. Cost: O(N log^2 N) for the sort plus O(log N) per output element,
** and 32 bytes of scratch per update row.
**
** The image resizes follow cpu/image.c (half_pixel_centers, no
** align_corners): the sampling positions are recomputed per index in double
** with every product and sum rounded once (mul_rn/add_rn: no fused
** multiply-add on the device), so they are the CPU's bit for bit. The
** gradients gather: each input pixel sums, in the CPU's order (output rows,
** then columns, then the corners tl, tr, bl, br), the output-gradient
** pixels that read it; the rows and columns that read a pixel form a range
** found by binary search (the sampling positions are monotone).
*/
#ifndef LTF_CU_INDEX_CUH
#define LTF_CU_INDEX_CUH

namespace ltf_cu {

/* {==== Bodies: indexing */
/* Rows of K 1-based indices into the first K dims ('dims'); 'rowst': the
** row stride of each of those dims (in rows of the trailing slice). */
struct NdMap {
    int K;
    int64_t dims[LTF_MAX_RANK], rowst[LTF_MAX_RANK];
};

/* The row (over the first K dims) that index row n names; -1 when outside. */
template <class I> LTF_HD int64_t nd_row(const I *idx, int64_t n, const NdMap &m) {
    int64_t t = 0;
    for (int k = 0; k < m.K; k++) {
        int64_t v = (int64_t)idx[n * m.K + k];
        if (v < 1 || v > m.dims[k]) return -1;
        t += (v - 1) * m.rowst[k];
    }
    return t;
}

/* gather_nd: output (N, S) reads row nd_row(n) of params (R, S) */
template <class E, class I> struct NdGatherP {
    const E *x;
    const I *idx;
    E *o;
    int64_t S;
    NdMap m;
    int *flag;
};
template <class E, class I> struct NdGatherF {
    static LTF_HD void at(int64_t i, const NdGatherP<E, I> &p) {
        int64_t n = i / p.S, c = i - n * p.S;
        int64_t t = nd_row(p.idx, n, p.m);
        if (t < 0) { raise_flag(p.flag, ERR_INDEX); p.o[i] = 0; return; }
        p.o[i] = p.x[t * p.S + c];
    }
};

/* scatter step 1: key[r] = target row of update row r (-1: out of range,
** flag raised), perm[r] = r */
template <class I> struct NdTargetP {
    const I *idx;
    int64_t *key, *perm;
    NdMap m;
    int *flag;
};
template <class I> struct NdTargetF {
    static LTF_HD void at(int64_t r, const NdTargetP<I> &p) {
        int64_t t = nd_row(p.idx, r, p.m);
        if (t < 0) raise_flag(p.flag, ERR_INDEX);
        p.key[r] = t;
        p.perm[r] = r;
    }
};

/* first q in [lo, hi) with k[q] >= v (lower) or k[q] > v (upper); hi if none */
LTF_HD int64_t search_keys(const int64_t *k, int64_t lo, int64_t hi, int64_t v, int upper) {
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (upper ? k[mid] <= v : k[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* scatter step 2: one pass of a stable bottom-up merge sort of (key, perm)
** with runs of 'w' sorted: element i of the left run of a pair goes after
** the right run's smaller keys, one of the right run after the left run's
** keys not greater (so equal keys keep their order). */
struct MergeP {
    const int64_t *ki, *pi;
    int64_t *ko, *po;
    int64_t n, w;
};
struct MergeF {
    static LTF_HD void at(int64_t i, const MergeP &p) {
        int64_t run = i / p.w, base = (run - (run & 1)) * p.w, k = p.ki[i], pos;
        if ((run & 1) == 0) {
            int64_t b0 = base + p.w, b1 = base + 2 * p.w < p.n ? base + 2 * p.w : p.n;
            pos = i + (b0 < p.n ? search_keys(p.ki, b0, b1, k, 0) - b0 : 0);
        } else {
            pos = base + (i - base - p.w) + (search_keys(p.ki, base, base + p.w, k, 1) - base);
        }
        p.ko[pos] = k;
        p.po[pos] = p.pi[i];
    }
};

/* One update combined into what is there, as cpu/indexing.c's COMBINE: sums
** in U (unsigned for integers: they wrap); a NaN on either side wins max
** and min. */
template <class T, class U> LTF_HD T scatter_combine(int code, T d, T s) {
    switch (code) {
    case LTF_SCATTER_ADD: return (T)(U)((U)d + (U)s);
    case LTF_SCATTER_SUB: return (T)(U)((U)d - (U)s);
    case LTF_SCATTER_MAX: return !(d >= s) && d == d ? s : d;
    default: return !(d <= s) && d == d ? s : d;
    }
}

/* scatter step 3: output (R, S); element (row t, column c) starts from the
** base (zero without one) and takes the update rows that target t, in
** row order (update: the last one) */
template <class T, class U> struct NdScatterP {
    const T *base, *u;
    T *o;
    const int64_t *key, *perm;
    int64_t N, S;
    int code;
};
template <class T, class U> struct NdScatterF {
    static LTF_HD void at(int64_t i, const NdScatterP<T, U> &p) {
        int64_t t = i / p.S, c = i - t * p.S;
        T acc = p.base ? p.base[i] : (T)0;
        int64_t q = search_keys(p.key, 0, p.N, t, 0);
        if (p.code == LTF_SCATTER_UPDATE) {
            int64_t end = search_keys(p.key, q, p.N, t, 1);
            if (end > q) acc = p.u[p.perm[end - 1] * p.S + c];
        } else {
            for (; q < p.N && p.key[q] == t; q++) acc = scatter_combine<T, U>(p.code, acc, p.u[p.perm[q] * p.S + c]);
        }
        p.o[i] = acc;
    }
};

/* roll: output coordinate c along dim d reads (c - shift[d]) mod dims[d] */
template <class E> struct RollP {
    const E *x;
    E *o;
    int rank;
    int64_t dims[LTF_MAX_RANK], shift[LTF_MAX_RANK], st[LTF_MAX_RANK];
};
template <class E> struct RollF {
    static LTF_HD void at(int64_t i, const RollP<E> &p) {
        int64_t off = 0, r = i;
        for (int d = p.rank - 1; d >= 0; d--) {
            int64_t q = r / p.dims[d], c = r - q * p.dims[d] - p.shift[d];
            r = q;
            off += (c < 0 ? c + p.dims[d] : c) * p.st[d];
        }
        p.o[i] = p.x[off];
    }
};

/* sequence_mask: output (L, maxlen), [r, j] = j < lengths[r] (j 0-based) */
template <class T, class I> struct SeqMaskP {
    const I *len;
    T *o;
    int64_t maxlen;
};
template <class T, class I> struct SeqMaskF {
    static LTF_HD void at(int64_t i, const SeqMaskP<T, I> &p) {
        int64_t r = i / p.maxlen, j = i - r * p.maxlen;
        p.o[i] = j < (int64_t)p.len[r] ? (T)1 : (T)0;
    }
};
/* }==== */

/* {==== Bodies: image resizes (cpu/image.c) */
/* n images of ih x iw x c resized to oh x ow; sy, sx = in / out sizes in
** double (bilinear), fy, fx the same in float (nearest, as TensorFlow's
** kernel computes its source index in float) */
struct ImgPlan {
    int64_t n, ih, iw, oh, ow, c;
    double sy, sx;
    float fy, fx;
};

/* The sampling of output position i along an axis of 'in' pixels:
** bilinear reads lo and hi with weight w on hi, nearest lo (= hi), at
** min(floorf((i + 0.5f) * fscale), in - 1) in float as cpu/image.c. */
LTF_HD void img_axis(int64_t i, int64_t in, double scale, float fscale, int nearest, int64_t *lo, int64_t *hi,
                     double *w) {
    if (nearest) {
        int64_t k = (int64_t)floorf(mul_rn(add_rn((float)i, 0.5f), fscale));
        if (k > in - 1) k = in - 1;
        if (k < 0) k = 0;
        *lo = *hi = k;
        *w = 0;
        return;
    }
    double x = add_rn(mul_rn(add_rn((double)i, 0.5), scale), -0.5), f = floor(x);
    int64_t l = (int64_t)f, h = (int64_t)ceil(x);
    *lo = l < 0 ? 0 : l;
    *hi = h > in - 1 ? in - 1 : h;
    *w = add_rn(x, -f);
}

/* The output positions [first, end) along an axis of 'out' that read input
** position y (lo <= y <= hi: both are monotone in the output position) */
LTF_HD void img_range(int64_t y, int64_t out, int64_t in, double scale, float fscale, int nearest, int64_t *first,
                      int64_t *end) {
    int64_t lo, hi;
    double w;
    int64_t a = 0, b = out;
    while (a < b) {   /* first position whose hi reaches y */
        int64_t mid = a + (b - a) / 2;
        img_axis(mid, in, scale, fscale, nearest, &lo, &hi, &w);
        if (hi >= y) b = mid;
        else a = mid + 1;
    }
    *first = a;
    b = out;
    while (a < b) {   /* first position whose lo passes y */
        int64_t mid = a + (b - a) / 2;
        img_axis(mid, in, scale, fscale, nearest, &lo, &hi, &w);
        if (lo > y) b = mid;
        else a = mid + 1;
    }
    *end = a;
}

/* float and integer results of a gradient's double sum: integers convert
** as x86-64's cvttsd2si does (out of range: the minimum; uint8 through
** int32), which is what the CPU's casts compile to */
LTF_HD int32_t cvt_i32(double v) { return v >= -2147483648.0 && v < 2147483648.0 ? (int32_t)v : INT32_MIN; }
LTF_HD int64_t cvt_i64(double v) {
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN;
}
template <class T> struct FromAcc { static LTF_HD T of(double v) { return (T)v; } };
template <> struct FromAcc<int32_t> { static LTF_HD int32_t of(double v) { return cvt_i32(v); } };
template <> struct FromAcc<int64_t> { static LTF_HD int64_t of(double v) { return cvt_i64(v); } };
template <> struct FromAcc<uint8_t> { static LTF_HD uint8_t of(double v) { return (uint8_t)cvt_i32(v); } };

template <class T> struct ResizeP {
    const T *x;
    T *o;
    ImgPlan p;
};
/* resize_bilinear (floats): output (n, oh, ow, c) */
template <class T> struct BilinearF {
    static LTF_HD void at(int64_t i, const ResizeP<T> &q) {
        const ImgPlan &p = q.p;
        int64_t k = i % p.c, t = i / p.c, j = t % p.ow;
        t /= p.ow;
        int64_t r = t % p.oh, b = t / p.oh, ylo, yhi, xlo, xhi;
        double yw, xw;
        img_axis(r, p.ih, p.sy, p.fy, 0, &ylo, &yhi, &yw);
        img_axis(j, p.iw, p.sx, p.fx, 0, &xlo, &xhi, &xw);
        int64_t r0 = (b * p.ih + ylo) * p.iw, r1 = (b * p.ih + yhi) * p.iw;
        double tl = (double)q.x[(r0 + xlo) * p.c + k], tr = (double)q.x[(r0 + xhi) * p.c + k];
        double bl = (double)q.x[(r1 + xlo) * p.c + k], br = (double)q.x[(r1 + xhi) * p.c + k];
        double top = add_rn(tl, mul_rn(add_rn(tr, -tl), xw));
        double bot = add_rn(bl, mul_rn(add_rn(br, -bl), xw));
        q.o[i] = (T)add_rn(top, mul_rn(add_rn(bot, -top), yw));
    }
};
/* resize_nearest (any element): output (n, oh, ow, c) */
template <class E> struct NearestF {
    static LTF_HD void at(int64_t i, const ResizeP<E> &q) {
        const ImgPlan &p = q.p;
        int64_t k = i % p.c, t = i / p.c, j = t % p.ow;
        t /= p.ow;
        int64_t r = t % p.oh, b = t / p.oh, y, x, unused;
        double w;
        img_axis(r, p.ih, p.sy, p.fy, 1, &y, &unused, &w);
        img_axis(j, p.iw, p.sx, p.fx, 1, &x, &unused, &w);
        q.o[i] = q.x[((b * p.ih + y) * p.iw + x) * p.c + k];
    }
};
/* resize_bilinear_grad / resize_nearest_grad: output (n, ih, iw, c), the
** original's shape, from grads x (n, oh, ow, c): a sum in double in the
** CPU's order, then converted */
template <class T> struct ResizeGradP {
    const T *g;
    T *o;
    ImgPlan p;
    int nearest;
};
template <class T> struct ResizeGradF {
    static LTF_HD void at(int64_t i, const ResizeGradP<T> &q) {
        const ImgPlan &p = q.p;
        int64_t k = i % p.c, t = i / p.c, xx = t % p.iw;
        t /= p.iw;
        int64_t yy = t % p.ih, b = t / p.ih, r0, r1, c0, c1;
        img_range(yy, p.oh, p.ih, p.sy, p.fy, q.nearest, &r0, &r1);
        img_range(xx, p.ow, p.iw, p.sx, p.fx, q.nearest, &c0, &c1);
        double acc = 0;
        for (int64_t r = r0; r < r1; r++) {
            int64_t ylo, yhi, xlo, xhi;
            double yw, xw;
            img_axis(r, p.ih, p.sy, p.fy, q.nearest, &ylo, &yhi, &yw);
            const T *row = q.g + (b * p.oh + r) * p.ow * p.c + k;
            for (int64_t j = c0; j < c1; j++) {
                double v = (double)row[j * p.c];
                if (q.nearest) {   /* the range holds exactly the pixels reading (yy, xx) */
                    acc = add_rn(acc, v);
                    continue;
                }
                img_axis(j, p.iw, p.sx, p.fx, 0, &xlo, &xhi, &xw);
                double uy = add_rn(1.0, -yw), ux = add_rn(1.0, -xw);
                if (ylo == yy && xlo == xx) acc = add_rn(acc, mul_rn(mul_rn(v, uy), ux));
                if (ylo == yy && xhi == xx) acc = add_rn(acc, mul_rn(mul_rn(v, uy), xw));
                if (yhi == yy && xlo == xx) acc = add_rn(acc, mul_rn(mul_rn(v, yw), ux));
                if (yhi == yy && xhi == xx) acc = add_rn(acc, mul_rn(mul_rn(v, yw), xw));
            }
        }
        q.o[i] = FromAcc<T>::of(acc);
    }
};
/* }==== */

/* {==== Bodies: matrix moves (cpu/linalg.c), check_numerics */
/* band_part: element (row r, column j) of each m x n matrix kept when
** (lo < 0 or r - j <= lo) and (up < 0 or j - r <= up), else zero */
template <class E> struct BandP {
    const E *x;
    E *o;
    int64_t m, n, lo, up;
};
template <class E> struct BandF {
    static LTF_HD void at(int64_t i, const BandP<E> &p) {
        int64_t t = i / p.n, j = i - t * p.n, r = t % p.m;
        bool keep = (p.lo < 0 || r - j <= p.lo) && (p.up < 0 || j - r <= p.up);
        p.o[i] = keep ? p.x[i] : (E)0;
    }
};
/* diag: (.., r, c) with d (.., k) on the main diagonal (k = min(r, c)) */
template <class E> struct DiagP {
    const E *d;
    E *o;
    int64_t r, c, k;
};
template <class E> struct DiagF {
    static LTF_HD void at(int64_t i, const DiagP<E> &p) {
        int64_t t = i / p.c, col = i - t * p.c, row = t % p.r, b = t / p.r;
        p.o[i] = row == col ? p.d[b * p.k + row] : (E)0;
    }
};
/* diag_part: (.., k) from the main diagonal of (.., m, n) */
template <class E> struct DiagPartP {
    const E *x;
    E *o;
    int64_t m, n, k;
};
template <class E> struct DiagPartF {
    static LTF_HD void at(int64_t i, const DiagPartP<E> &p) {
        int64_t b = i / p.k, q = i - b * p.k;
        p.o[i] = p.x[b * p.m * p.n + q * p.n + q];
    }
};

/* check_numerics: bit 1 of '*flag' when an element is NaN, bit 2 when one
** is infinite (an atomic OR on the device: the result is order-free) */
enum { NUM_NAN = 1, NUM_INF = 2 };
LTF_HD void or_flag(int *flag, int bits) {
#if defined(__CUDA_ARCH__)
    atomicOr(flag, bits);
#else
    *flag |= bits;
#endif
}
template <class T> struct NumericsP {
    const T *x;
    int *flag;
};
template <class T> struct NumericsF {
    static LTF_HD void at(int64_t i, const NumericsP<T> &p) {
        T v = p.x[i];
        if (v != v) or_flag(p.flag, NUM_NAN);
        else if (v == (T)INFINITY || v == -(T)INFINITY) or_flag(p.flag, NUM_INF);
    }
};
/* }==== */

/* {==== Host sides: indexing (cpu/indexing.c) */
inline bool index_dtype_ok(int dt) { return dt == DT_I32 || dt == DT_I64; }

/* The rows of 'indices' (.., K) into the first K dims of (rank, dims): the
** map, the row count N and the slice size S. false when 'indices' cannot
** index such a shape (inference refuses it first). */
inline bool nd_plan(NdMap &m, const ltf_tensor *indices, int rank, const int64_t *dims, int64_t *N, int64_t *S) {
    if (indices->rank < 1) return false;
    int64_t K = indices->dims[indices->rank - 1];
    if (K < 0 || K > rank) return false;
    m.K = (int)K;
    *N = 1;
    for (int d = 0; d < indices->rank - 1; d++) *N *= indices->dims[d];
    *S = 1;
    for (int d = m.K; d < rank; d++) *S *= dims[d];
    int64_t s = 1;
    for (int d = m.K - 1; d >= 0; d--) {
        m.dims[d] = dims[d];
        m.rowst[d] = s;
        s *= dims[d];
    }
    return true;
}

inline ltf_status nd_refused(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *indices, int rank) {
    return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: indices of rank %d cannot index a tensor of rank %d", def->name,
                indices->rank, rank);
}

LTF_CU_KERNEL(k_gather_nd) {
    LTF_CU_UNUSED;
    const ltf_tensor *params = in[0], *indices = in[1];
    ltf_tensor *o = out[0];
    size_t es = dsize(o->dtype);
    if (es == 0) return bad_dtype(ctx, def, o->dtype);
    if (!index_dtype_ok(indices->dtype)) return bad_dtype(ctx, def, indices->dtype);
    if (o->numel == 0) return LTF_OK;   /* reads nothing: no index is checked (as the CPU) */
    NdMap m;
    int64_t N, S;
    if (!nd_plan(m, indices, params->rank, params->dims, &N, &S)) return nd_refused(ctx, def, indices, params->rank);
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    ltf_status st = LTF_OK;
#define G(T, I) { NdGatherP<T, I> p = { ptr<T>(params), ptr<I>(indices), ptr<T>(o), S, m, e.flag() }; \
                  st = e.template run<NdGatherF<T, I> >(o->numel, p); }
#define M(T) if ((int)indices->dtype == DT_I32) G(T, int32_t) else G(T, int64_t)
    LTF_CU_BY_SIZE(es, M)
#undef M
#undef G
    return st != LTF_OK ? st : e.check();
}

template <class E, class T, class U>
ltf_status scatter_run(E &e, const ltf_tensor *base, const ltf_tensor *u, ltf_tensor *o, const int64_t *key,
                       const int64_t *perm, int64_t N, int64_t S, int code) {
    NdScatterP<T, U> p = { base ? ptr<T>(base) : (const T *)0, ptr<T>(u), ptr<T>(o), key, perm, N, S, code };
    return e.template run<NdScatterF<T, U> >(o->numel, p);
}

/* scatter_nd(indices, updates) (ND 1: zeros, updates added) and
** tensor_scatter_nd_*(tensor, indices, updates) (ND 0; def->code the
** combiner): the three steps of the header comment */
template <class E, int ND>
ltf_status k_scatter(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin, const ltf_attrs *a,
                     ltf_tensor **out, int nout) {
    LTF_CU_UNUSED;
    const ltf_tensor *base = ND ? NULL : in[0], *indices = in[ND ? 0 : 1], *updates = in[ND ? 1 : 2];
    ltf_tensor *o = out[0];
    const int code = ND ? (int)LTF_SCATTER_ADD : def->code;
    int dt = o->dtype;
    size_t es = dsize(dt);
    if (es == 0 || (code != LTF_SCATTER_UPDATE && dt == DT_BOOL) || (int)updates->dtype != dt)
        return bad_dtype(ctx, def, dsize(dt) == 0 || dt == DT_BOOL ? dt : (int)updates->dtype);
    if (!index_dtype_ok(indices->dtype)) return bad_dtype(ctx, def, indices->dtype);
    if (o->numel == 0) return LTF_OK;
    NdMap m;
    int64_t N, S;
    if (!nd_plan(m, indices, o->rank, o->dims, &N, &S)) return nd_refused(ctx, def, indices, o->rank);
    if (updates->numel != N * S)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'updates' has %lld elements, expected %lld", def->name,
                    (long long)updates->numel, (long long)(N * S));
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    size_t bytes = (size_t)o->numel * es;
    ltf_status st = base ? e.copy(LTF_DATA(o), LTF_DATA(base), bytes) : e.zero(LTF_DATA(o), bytes);
    if (st != LTF_OK || updates->numel == 0) return st;   /* nothing to place: no index is checked */
    size_t sbytes = 4 * (size_t)N * sizeof(int64_t);
    int64_t *buf = (int64_t *)e.alloc(sbytes);
    if (!buf) return e.status();
    int64_t *key = buf, *perm = buf + N, *key2 = buf + 2 * N, *perm2 = buf + 3 * N;
    if ((int)indices->dtype == DT_I32) {
        NdTargetP<int32_t> p = { ptr<int32_t>(indices), key, perm, m, e.flag() };
        st = e.template run<NdTargetF<int32_t> >(N, p);
    } else {
        NdTargetP<int64_t> p = { ptr<int64_t>(indices), key, perm, m, e.flag() };
        st = e.template run<NdTargetF<int64_t> >(N, p);
    }
    for (int64_t w = 1; w < N && st == LTF_OK; w *= 2) {
        MergeP p = { key, perm, key2, perm2, N, w };
        st = e.template run<MergeF>(N, p);
        int64_t *t = key; key = key2; key2 = t;
        t = perm; perm = perm2; perm2 = t;
    }
    if (st == LTF_OK) {
        if (code == LTF_SCATTER_UPDATE) {   /* a move: by element size */
#define M(T) st = scatter_run<E, T, T>(e, base, updates, o, key, perm, N, S, code);
            LTF_CU_BY_SIZE(es, M)
#undef M
        } else {
            switch (dt) {
            case DT_F32: st = scatter_run<E, float, float>(e, base, updates, o, key, perm, N, S, code); break;
            case DT_F64: st = scatter_run<E, double, double>(e, base, updates, o, key, perm, N, S, code); break;
            case DT_I32: st = scatter_run<E, int32_t, uint32_t>(e, base, updates, o, key, perm, N, S, code); break;
            case DT_I64: st = scatter_run<E, int64_t, uint64_t>(e, base, updates, o, key, perm, N, S, code); break;
            default: st = scatter_run<E, uint8_t, uint32_t>(e, base, updates, o, key, perm, N, S, code); break;
            }
        }
    }
    e.release(buf, sbytes);
    return st != LTF_OK ? st : e.check();
}

/* roll: the shifts of each axis added up modulo its size (as the CPU) */
LTF_CU_KERNEL(k_roll) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    size_t es = dsize(x->dtype);
    if (es == 0) return bad_dtype(ctx, def, x->dtype);
    if (o->numel == 0) return LTF_OK;
    int r = x->rank;
    int64_t shift[LTF_MAX_RANK] = {0};
    for (int k = 0; k < a->nints && k < a->nints2; k++) {
        int ax = norm_axis(a->ints2[k], r);
        if (ax < 0 || ax >= r)
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' %lld is out of range for rank %d", def->name,
                        axis_user(a->ints2[k]), r);
        int64_t D = x->dims[ax], s = a->ints[k] % D;
        shift[ax] = ((shift[ax] + s) % D + D) % D;
    }
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (r == 0) return e.copy(LTF_DATA(o), LTF_DATA(x), es);
#define M(T) {                                                                          \
        RollP<T> p;                                                                     \
        p.x = ptr<T>(x);                                                                \
        p.o = ptr<T>(o);                                                                \
        p.rank = r;                                                                     \
        contiguous(r, x->dims, p.st);                                                   \
        for (int d = 0; d < r; d++) { p.dims[d] = x->dims[d]; p.shift[d] = shift[d]; }  \
        return e.template run<RollF<T> >(o->numel, p);                                  \
    }
    LTF_CU_BY_SIZE(es, M)
#undef M
    return LTF_OK;
}

/* ensure_shape: the inference's check again, then a device copy where the
** output is not a view of the input */
LTF_CU_KERNEL(k_ensure_shape) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    if (a->nints >= 0) {
        bool bad = x->rank != a->nints;
        for (int d = 0; !bad && d < x->rank; d++) bad = a->ints[d] >= 0 && x->dims[d] != a->ints[d];
        if (bad) {
            char sx[128], se[128];
            ltf_tensor want;
            want.rank = a->nints < LTF_MAX_RANK ? a->nints : LTF_MAX_RANK;
            for (int d = 0; d < want.rank; d++) want.dims[d] = a->ints[d];
            return fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: shape of tensor %s is not compatible with expected shape %s", def->name,
                        shape_str(x, sx, sizeof sx), shape_str(&want, se, sizeof se));
        }
    }
    return k_copy<E>(ctx, def, in, nin, a, out, nout);
}

/* sequence_mask on an allocated output (its last dim is maxlen): the body
** of alloc.cuh's k_sequence_mask_alloc, which sizes the output first when
** 'maxlen' was not given */
LTF_CU_KERNEL(k_sequence_mask) {
    LTF_CU_UNUSED;
    const ltf_tensor *l = in[0];
    ltf_tensor *o = out[0];
    int dt = o->dtype;
    if (dsize(dt) == 0) return bad_dtype(ctx, def, dt);
    if (!index_dtype_ok(l->dtype)) return bad_dtype(ctx, def, l->dtype);
    if (o->numel == 0) return LTF_OK;
    int64_t maxlen = o->dims[o->rank - 1];
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
#define G(T, I) { SeqMaskP<T, I> p = { ptr<I>(l), ptr<T>(o), maxlen }; \
                  return e.template run<SeqMaskF<T, I> >(o->numel, p); }
#define M(T) if ((int)l->dtype == DT_I32) G(T, int32_t) else G(T, int64_t)
    LTF_CU_BY_DTYPE(dt, M)
#undef M
#undef G
    return bad_dtype(ctx, def, dt);
}
/* }==== */

/* {==== Host sides: image resizes (cpu/image.c) */
/* images (n, ih, iw, c) resized to (n, oh, ow, c) */
inline ImgPlan img_plan(const ltf_tensor *img, const ltf_tensor *res) {
    ImgPlan p;
    p.n = img->dims[0];
    p.ih = img->dims[1];
    p.iw = img->dims[2];
    p.c = img->dims[3];
    p.oh = res->dims[1];
    p.ow = res->dims[2];
    p.sy = (double)p.ih / (double)p.oh;
    p.sx = (double)p.iw / (double)p.ow;
    p.fy = (float)p.ih / (float)p.oh;
    p.fx = (float)p.iw / (float)p.ow;
    return p;
}

inline ltf_status img_rank(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *x, const ltf_tensor *y) {
    if (x->rank == 4 && y->rank == 4) return LTF_OK;
    return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: expected 4-D (batch, height, width, channels) images, got ranks "
                "%d and %d", def->name, x->rank, y->rank);
}

/* resize_bilinear (code 0: floats), resize_nearest (code 1: any but bool) */
LTF_CU_KERNEL(k_resize) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    int dt = x->dtype, nearest = def->code == 1;
    if (nearest ? dsize(dt) == 0 || dt == DT_BOOL : dt != DT_F32 && dt != DT_F64) return bad_dtype(ctx, def, dt);
    ltf_status st = img_rank(ctx, def, x, o);
    if (st != LTF_OK || o->numel == 0) return st;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    ImgPlan p = img_plan(x, o);
    if (nearest) {
#define M(T) { ResizeP<T> q = { ptr<T>(x), ptr<T>(o), p }; return e.template run<NearestF<T> >(o->numel, q); }
        LTF_CU_BY_SIZE(dsize(dt), M)
#undef M
        return LTF_OK;
    }
    if (dt == DT_F32) {
        ResizeP<float> q = { ptr<float>(x), ptr<float>(o), p };
        return e.template run<BilinearF<float> >(o->numel, q);
    }
    ResizeP<double> q = { ptr<double>(x), ptr<double>(o), p };
    return e.template run<BilinearF<double> >(o->numel, q);
}

/* resize_bilinear_grad (code 0: floats), resize_nearest_grad (code 1:
** numeric) (grads, original) -> original's shape */
LTF_CU_KERNEL(k_resize_grad) {
    LTF_CU_UNUSED;
    const ltf_tensor *g = in[0];
    ltf_tensor *o = out[0];
    int dt = o->dtype, nearest = def->code == 1;
    if (nearest ? dsize(dt) == 0 || dt == DT_BOOL : dt != DT_F32 && dt != DT_F64) return bad_dtype(ctx, def, dt);
    ltf_status st = img_rank(ctx, def, g, o);
    if (st != LTF_OK) return st;
    if (g->dims[0] != o->dims[0] || g->dims[3] != o->dims[3])
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                    "%s: grads and original_image differ in batch or channels: %lld x %lld and %lld x %lld", def->name,
                    (long long)g->dims[0], (long long)g->dims[3], (long long)o->dims[0], (long long)o->dims[3]);
    if (o->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    if (g->numel == 0) return e.zero(LTF_DATA(o), (size_t)o->numel * dsize(dt));
    ImgPlan p = img_plan(o, g);
#define M(T) { ResizeGradP<T> q = { ptr<T>(g), ptr<T>(o), p, nearest }; \
               return e.template run<ResizeGradF<T> >(o->numel, q); }
    LTF_CU_BY_DTYPE(dt, M)
#undef M
    return LTF_OK;
}
/* }==== */

/* {==== Host sides: matrix moves (cpu/linalg.c), split_like, check_numerics */
inline ltf_status matrix_rank(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *x) {
    if (x->rank >= 2) return LTF_OK;
    return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: expected a tensor of rank >= 2, got rank %d", def->name, x->rank);
}

LTF_CU_KERNEL(k_band_part) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    size_t es = dsize(x->dtype);
    if (es == 0) return bad_dtype(ctx, def, x->dtype);
    ltf_status st = matrix_rank(ctx, def, x);
    if (st != LTF_OK || o->numel == 0) return st;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
#define M(T) { BandP<T> p = { ptr<T>(x), ptr<T>(o), x->dims[x->rank - 2], x->dims[x->rank - 1], a->i[0], a->i[1] }; \
               return e.template run<BandF<T> >(o->numel, p); }
    LTF_CU_BY_SIZE(es, M)
#undef M
    return LTF_OK;
}

/* diag(d [, like]): the output's last two dims are the matrix */
LTF_CU_KERNEL(k_diag) {
    LTF_CU_UNUSED;
    const ltf_tensor *d = in[0];
    ltf_tensor *o = out[0];
    size_t es = dsize(d->dtype);
    if (es == 0) return bad_dtype(ctx, def, d->dtype);
    if (d->rank < 1 || o->rank < 2)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: expected a diagonal of rank >= 1, got rank %d", def->name,
                    d->rank);
    int64_t r = o->dims[o->rank - 2], c = o->dims[o->rank - 1], k = d->dims[d->rank - 1];
    if (k != (r < c ? r : c))
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: a diagonal of %lld entries does not fit a %lld x %lld matrix",
                    def->name, (long long)k, (long long)r, (long long)c);
    if (o->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
#define M(T) { DiagP<T> p = { ptr<T>(d), ptr<T>(o), r, c, k }; return e.template run<DiagF<T> >(o->numel, p); }
    LTF_CU_BY_SIZE(es, M)
#undef M
    return LTF_OK;
}

LTF_CU_KERNEL(k_diag_part) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    size_t es = dsize(x->dtype);
    if (es == 0) return bad_dtype(ctx, def, x->dtype);
    ltf_status st = matrix_rank(ctx, def, x);
    if (st != LTF_OK || o->numel == 0) return st;
    int64_t m = x->dims[x->rank - 2], n = x->dims[x->rank - 1];
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
#define M(T) { DiagPartP<T> p = { ptr<T>(x), ptr<T>(o), m, n, m < n ? m : n }; \
               return e.template run<DiagPartF<T> >(o->numel, p); }
    LTF_CU_BY_SIZE(es, M)
#undef M
    return LTF_OK;
}

/* matrix_transpose: (b, m, n) -> (b, n, m) as a strided read */
LTF_CU_KERNEL(k_matrix_transpose) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    ltf_tensor *o = out[0];
    if (dsize(x->dtype) == 0) return bad_dtype(ctx, def, x->dtype);
    ltf_status st = matrix_rank(ctx, def, x);
    if (st != LTF_OK || o->numel == 0) return st;
    int64_t m = x->dims[x->rank - 2], n = x->dims[x->rank - 1];
    Strided map;
    map.rank = 3;
    map.base = 0;
    map.dims[0] = o->numel / (m * n);
    map.dims[1] = n;
    map.dims[2] = m;
    map.st[0] = m * n;
    map.st[1] = 1;
    map.st[2] = n;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return strided_read(e, x, o, map);
}

/* split_like(g, x_1..x_n): split's slabs, sized by the outputs (the CPU's
** limit on the number of parts kept, so both refuse the same calls) */
LTF_CU_KERNEL(k_split_like) {
    if (nin - 1 > LTF_ATTR_LIST_MAX)
        return fail(ctx, LTF_ERR_UNIMPLEMENTED, "split_like: more than %d parts", LTF_ATTR_LIST_MAX);
    if (in[0]->rank < 1 || a->i[0] < 0 || a->i[0] >= in[0]->rank)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: axis %lld is out of range for rank %d", def->name,
                    axis_user(a->i[0]), in[0]->rank);
    return k_split<E>(ctx, def, in, 1, a, out, nout);
}

/* check_numerics(x): every element checked on the device (the flag read
** back: a sync), the CPU's error text, else a copy */
LTF_CU_KERNEL(k_check_numerics) {
    LTF_CU_UNUSED;
    const ltf_tensor *x = in[0];
    int dt = x->dtype;
    if (dt != DT_F32 && dt != DT_F64) return bad_dtype(ctx, def, dt);
    if (x->numel == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    int *flag = (int *)e.alloc(sizeof(int));
    if (!flag) return e.status();
    int bits = 0;
    ltf_status st = e.zero(flag, sizeof(int));
    if (st == LTF_OK && dt == DT_F32) {
        NumericsP<float> p = { ptr<float>(x), flag };
        st = e.template run<NumericsF<float> >(x->numel, p);
    } else if (st == LTF_OK) {
        NumericsP<double> p = { ptr<double>(x), flag };
        st = e.template run<NumericsF<double> >(x->numel, p);
    }
    if (st == LTF_OK) st = e.read(&bits, flag, sizeof(int));
    e.release(flag, sizeof(int));
    if (st != LTF_OK) return st;
    if (bits)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "check_numerics: %s : Tensor had %s values", a->s,
                    bits == (NUM_NAN | NUM_INF) ? "Inf and NaN" : bits == NUM_NAN ? "NaN" : "Inf");
    return k_copy<E>(ctx, def, in, nin, a, out, nout);
}
/* }==== */

/* The kernels of this header for executor E (kernel_for asks here first);
** NULL for other ops. */
template <class E> const void *index_kernel_for(int op) {
    switch (op) {
    case LTF_OP_GATHER_ND: return (const void *)&k_gather_nd<E>;
    case LTF_OP_SCATTER_ND: return (const void *)&k_scatter<E, 1>;
    case LTF_OP_TENSOR_SCATTER_UPDATE: case LTF_OP_TENSOR_SCATTER_ADD: case LTF_OP_TENSOR_SCATTER_SUB:
    case LTF_OP_TENSOR_SCATTER_MAX: case LTF_OP_TENSOR_SCATTER_MIN:
        return (const void *)&k_scatter<E, 0>;
    case LTF_OP_ROLL: return (const void *)&k_roll<E>;
    case LTF_OP_ENSURE_SHAPE: return (const void *)&k_ensure_shape<E>;
    case LTF_OP_RESIZE_BILINEAR: case LTF_OP_RESIZE_NEAREST: return (const void *)&k_resize<E>;
    case LTF_OP_RESIZE_BILINEAR_GRAD: case LTF_OP_RESIZE_NEAREST_GRAD: return (const void *)&k_resize_grad<E>;
    case LTF_OP_MATRIX_BAND_PART: return (const void *)&k_band_part<E>;
    case LTF_OP_MATRIX_DIAG: return (const void *)&k_diag<E>;
    case LTF_OP_MATRIX_DIAG_PART: return (const void *)&k_diag_part<E>;
    case LTF_OP_MATRIX_TRANSPOSE: return (const void *)&k_matrix_transpose<E>;
    case LTF_OP_SPLIT_LIKE: return (const void *)&k_split_like<E>;
    case LTF_OP_CHECK_NUMERICS: return (const void *)&k_check_numerics<E>;
    default: return NULL;
    }
}

}  // namespace ltf_cu

#endif
