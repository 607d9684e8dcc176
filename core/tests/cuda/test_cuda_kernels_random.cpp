/*
** test_cuda_kernels_random.cpp: the device bodies of the random ops
** (core/cuda/kernels/random.cuh, philox.cuh), built for the host. Their
** values cannot equal the CPU's (the CPU draws from a sequential
** xoshiro256**, the device from a counter-based Philox4x32-10), so:
**   1. philox.cuh's block function and an independent Philox4x32-10 written
**      here both give the Random123 known answers (kat_vectors), and agree
**      on random counters and keys;
**   2. the kernels' outputs for an op-level seed equal values recomputed
**      here from the reference generator and the documented stream layout
**      (uniform floats and integers, normal, truncated_normal);
**   3. every op's distribution is right over ~1e5 samples with fixed seeds:
**      mean and variance within 5 standard errors (the variance's from the
**      sample's fourth moment), ranges (uniform in [minval, maxval),
**      integers in [minval, maxval) with chi-square tests of unbiasedness,
**      truncated_normal within 2 stddev), gamma's mean and variance for
**      alphas below and above 1, categorical frequencies against
**      softmax(logits) (chi-square), random_shuffle a permutation with each
**      position equally likely, dropout_noise uniform [0, 1);
**   4. seeds: the same (key, counter) gives the same values, another counter
**      others; the context's generator gives new values at each call and the
**      same sequence again after ltf_ctx_set_seed;
**   5. the CPU's errors, with the same status kind (run_both).
*/
#include <algorithm>
#include "kernel_check.h"
#include "../../cuda/kernels/philox.cuh"

/* {==== Reference Philox4x32-10 (round, then bump the key), and streams */
static void ref_philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4]) {
    uint32_t x0 = ctr[0], x1 = ctr[1], x2 = ctr[2], x3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        uint64_t a = (uint64_t)x0 * 0xD2511F53ull, b = (uint64_t)x2 * 0xCD9E8D57ull;
        uint32_t y0 = (uint32_t)(b >> 32) ^ x1 ^ k0, y1 = (uint32_t)b;
        uint32_t y2 = (uint32_t)(a >> 32) ^ x3 ^ k1, y3 = (uint32_t)a;
        x0 = y0; x1 = y1; x2 = y2; x3 = y3;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = x0; out[1] = x1; out[2] = x2; out[3] = x3;
}

/* Stream 's' of an op seeded with (key, counter): round r is the block of
** counter ((s << 16) | r, counter) (philox.cuh's layout). */
struct RefStream {
    uint32_t key[2];
    uint64_t hi, s;
    uint32_t r = 0, buf[4];
    int pos = 4;
    RefStream(uint64_t k, uint64_t counter, uint64_t stream) : key{ (uint32_t)k, (uint32_t)(k >> 32) }, hi(counter), s(stream) {}
    uint32_t next32() {
        if (pos == 4) {
            uint64_t lo = (s << 16) | r++;
            uint32_t c[4] = { (uint32_t)lo, (uint32_t)(lo >> 32), (uint32_t)hi, (uint32_t)(hi >> 32) };
            ref_philox(c, key, buf);
            pos = 0;
        }
        return buf[pos++];
    }
    uint64_t next64() {
        uint64_t h = next32();
        return (h << 32) | next32();
    }
};

static float ref_u24(uint32_t w) { return (float)(w >> 8) / 16777216.0f; }
static double ref_u53(uint64_t w) { return (double)(w >> 11) / 9007199254740992.0; }
static void ref_bm(uint32_t a, uint32_t b, float *z) {
    float u1 = (float)((a >> 8) + 1) / 16777216.0f, u2 = ref_u24(b);
    float rad = sqrtf(-2.0f * logf(u1)), th = 6.28318530717958648f * u2;
    z[0] = rad * cosf(th);
    z[1] = rad * sinf(th);
}
static void ref_bm(uint64_t a, uint64_t b, double *z) {
    double u1 = (double)((a >> 11) + 1) / 9007199254740992.0, u2 = ref_u53(b);
    double rad = sqrt(-2.0 * log(u1)), th = 6.283185307179586 * u2;
    z[0] = rad * cos(th);
    z[1] = rad * sin(th);
}
/* }==== */

/* {==== Helpers */
static ltf_attrs seeded(uint64_t key, uint64_t counter) {
    ltf_attrs a = attrs();
    a.i[1] = 1;
    a.i[2] = (int64_t)key;
    a.i[3] = (int64_t)counter;
    return a;
}
static void set_shape(ltf_attrs &a, std::vector<int64_t> dims) {
    a.nints = (int)dims.size();
    for (size_t i = 0; i < dims.size(); i++) a.ints[i] = dims[i];
}

/* Run the host-built device kernel of 'op' on an output of the inferred
** type; the output, or NULL (a failed CHECK) when inference or the kernel fails. */
static ltf_tensor *dev(ltf_op_id op, std::vector<ltf_tensor *> in, const ltf_attrs *a) {
    ltf_type ty;
    int nty = 0;
    if (ltf_op_infer(ctx, ltf_op_get(op), in.data(), (int)in.size(), a, &ty, 1, &nty) != LTF_OK || nty != 1) {
        fprintf(stderr, "%s: inference failed: %s\n", ltf_op_name(op), ltf_ctx_error(ctx));
        CHECK(0);
        return NULL;
    }
    ltf_tensor *o = ltf_tensor_new(ctx, ty.dtype, ty.rank, ty.dims);
    ltf_kernel_fn fn = (ltf_kernel_fn)ltf_gpu_host_kernel(op);
    CHECK(fn != NULL);
    ltf_status st = fn ? fn(ctx, ltf_op_get(op), in.data(), (int)in.size(), a, &o, 1) : LTF_ERR_INTERNAL;
    if (st != LTF_OK) {
        fprintf(stderr, "%s: device kernel failed: %s\n", ltf_op_name(op), ltf_ctx_error(ctx));
        CHECK(0);
        ltf_tensor_release(o);
        return NULL;
    }
    return o;
}

static std::vector<double> as_doubles(const ltf_tensor *t) {
    int64_t n = ltf_tensor_num_elements(t);
    std::vector<double> v((size_t)n);
    const void *p = ltf_tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        switch (ltf_tensor_dtype(t)) {
        case LTF_DTYPE_FLOAT32: v[(size_t)i] = ((const float *)p)[i]; break;
        case LTF_DTYPE_FLOAT64: v[(size_t)i] = ((const double *)p)[i]; break;
        case LTF_DTYPE_INT32: v[(size_t)i] = ((const int32_t *)p)[i]; break;
        case LTF_DTYPE_INT64: v[(size_t)i] = (double)((const int64_t *)p)[i]; break;
        default: v[(size_t)i] = ((const uint8_t *)p)[i]; break;
        }
    }
    return v;
}

/* Sample mean and variance within 'z' standard errors of 'mean' and 'var'. */
static void check_moments(const char *what, const std::vector<double> &x, double mean, double var, double z = 5) {
    double n = (double)x.size(), m = 0, v = 0, m4 = 0;
    for (double e : x) m += e;
    m /= n;
    for (double e : x) {
        double d = e - m;
        v += d * d;
        m4 += d * d * d * d;
    }
    v /= n - 1;
    m4 /= n;
    double se_m = sqrt(var / n), se_v = sqrt(fabs(m4 - v * v) / n);
    check_count += 2;
    if (!(fabs(m - mean) <= z * se_m)) {
        check_failures++;
        fprintf(stderr, "%s: mean %.6g, expected %.6g (standard error %.3g)\n", what, m, mean, se_m);
    }
    if (!(fabs(v - var) <= z * se_v)) {
        check_failures++;
        fprintf(stderr, "%s: variance %.6g, expected %.6g (standard error %.3g)\n", what, v, var, se_v);
    }
}

/* Pearson's chi-square of 'counts' against probabilities 'p' below 'limit'. */
static void check_chi2(const char *what, const std::vector<double> &counts, const std::vector<double> &p, double limit) {
    double n = 0, chi = 0;
    for (double c : counts) n += c;
    for (size_t i = 0; i < counts.size(); i++) {
        if (p[i] == 0) {
            CHECK(counts[i] == 0);
            continue;
        }
        double e = n * p[i];
        chi += (counts[i] - e) * (counts[i] - e) / e;
    }
    check_count++;
    if (!(chi < limit)) {
        check_failures++;
        fprintf(stderr, "%s: chi-square %.3g over the limit %.3g\n", what, chi, limit);
    }
}

static bool same_bytes(const ltf_tensor *a, const ltf_tensor *b) {
    size_t n = (size_t)ltf_tensor_num_elements(a) * ltf_dtype_size(ltf_tensor_dtype(a));
    return n == (size_t)ltf_tensor_num_elements(b) * ltf_dtype_size(ltf_tensor_dtype(b)) &&
           memcmp(ltf_tensor_data(a), ltf_tensor_data(b), n) == 0;
}
/* }==== */

/* {==== The generator */
static void test_philox() {
    static const uint32_t kat[3][10] = {
        { 0, 0, 0, 0, 0, 0, 0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u },
        { 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu,
          0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu },
        { 0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u,
          0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u },
    };
    for (const auto &v : kat) {
        uint32_t c[4] = { v[0], v[1], v[2], v[3] }, r[4];
        ref_philox(c, v + 4, r);
        ltf_cu::philox4x32_10(c, v[4], v[5]);
        for (int q = 0; q < 4; q++) {
            CHECK(c[q] == v[6 + q]);
            CHECK(r[q] == v[6 + q]);
        }
    }
    int agree = 1;
    for (int t = 0; t < 1000; t++) {
        uint32_t c[4], k[2], r[4];
        for (auto &w : c) w = (uint32_t)rnd();
        for (auto &w : k) w = (uint32_t)rnd();
        ref_philox(c, k, r);
        ltf_cu::philox4x32_10(c, k[0], k[1]);
        for (int q = 0; q < 4; q++) agree &= c[q] == r[q];
    }
    CHECK(agree);
    /* the stream layout: round r of stream s is the counter ((s << 16) | r, op counter) */
    ltf_cu::Philox g = ltf_cu::philox_make(0x0123456789abcdefull, 0xfedcba9876543210ull);
    ltf_cu::Stream t;
    ltf_cu::stream_init(t, g, 77);
    RefStream rs(0x0123456789abcdefull, 0xfedcba9876543210ull, 77);
    int same = 1;
    for (int i = 0; i < 40; i++) same &= ltf_cu::stream_next32(t) == rs.next32();
    CHECK(same);
}
/* }==== */

/* {==== Values against the reference */
static void test_values() {
    const uint64_t K = 0x5eed5eed12345678ull, C = 3;
    const int64_t n = 1001;   /* not a multiple of 4: the last block is partial */
    {   /* uniform float32 in [-2, 5) */
        ltf_attrs a = seeded(K, C);
        set_shape(a, { n });
        a.i[0] = LTF_DTYPE_FLOAT32;
        a.f[0] = -2;
        a.f[1] = 5;
        ltf_tensor *o = dev(LTF_OP_RANDOM_UNIFORM, {}, &a);
        int ok = o != NULL;
        for (int64_t k = 0; ok && k < n; k++) {
            RefStream s(K, C, (uint64_t)(k / 4));
            uint32_t w = 0;
            for (int q = 0; q <= k % 4; q++) w = s.next32();
            float v = -2.0f + ref_u24(w) * 7.0f;
            if (v >= 5.0f) v = nextafterf(5.0f, -2.0f);
            ok = ((float *)ltf_tensor_data(o))[k] == v;
            if (!ok) fprintf(stderr, "uniform float32 [%lld]: %.9g, reference %.9g\n", (long long)k, ((float *)ltf_tensor_data(o))[k], v);
        }
        CHECK(ok);
        ltf_tensor_release(o);
    }
    {   /* uniform float64 in [0, 1) */
        ltf_attrs a = seeded(K, C);
        set_shape(a, { n });
        a.i[0] = LTF_DTYPE_FLOAT64;
        a.f[1] = 1;
        ltf_tensor *o = dev(LTF_OP_RANDOM_UNIFORM, {}, &a);
        int ok = o != NULL;
        for (int64_t k = 0; ok && k < n; k++) {
            RefStream s(K, C, (uint64_t)(k / 2));
            uint64_t w = s.next64();
            if (k % 2) w = s.next64();
            ok = ((double *)ltf_tensor_data(o))[k] == ref_u53(w);
        }
        CHECK(ok);
        ltf_tensor_release(o);
    }
    {   /* normal float32 (mean 1, stddev 3) and float64 (mean 0, stddev 1) */
        ltf_attrs a = seeded(K, C);
        set_shape(a, { n });
        a.i[0] = LTF_DTYPE_FLOAT32;
        a.f[0] = 1;
        a.f[1] = 3;
        ltf_tensor *o = dev(LTF_OP_RANDOM_NORMAL, {}, &a), *want = zeros(LTF_DTYPE_FLOAT32, { n });
        for (int64_t j = 0; j * 4 < n; j++) {
            RefStream s(K, C, (uint64_t)j);
            uint32_t w[4] = { s.next32(), s.next32(), s.next32(), s.next32() };
            float z[4];
            ref_bm(w[0], w[1], z);
            ref_bm(w[2], w[3], z + 2);
            for (int q = 0; q < 4 && 4 * j + q < n; q++) ((float *)ltf_tensor_data(want))[4 * j + q] = 1.0f + 3.0f * z[q];
        }
        CHECK(o && compare("normal float32 vs reference", want, o, 1e-6, 1e-6));
        ltf_tensor_release(o);
        ltf_tensor_release(want);
        a.i[0] = LTF_DTYPE_FLOAT64;
        a.f[0] = 0;
        a.f[1] = 1;
        o = dev(LTF_OP_RANDOM_NORMAL, {}, &a);
        want = zeros(LTF_DTYPE_FLOAT64, { n });
        for (int64_t j = 0; j * 2 < n; j++) {
            RefStream s(K, C, (uint64_t)j);
            uint64_t w0 = s.next64(), w1 = s.next64();
            double z[2];
            ref_bm(w0, w1, z);
            for (int q = 0; q < 2 && 2 * j + q < n; q++) ((double *)ltf_tensor_data(want))[2 * j + q] = z[q];
        }
        CHECK(o && compare("normal float64 vs reference", want, o, 1e-14, 1e-15));
        ltf_tensor_release(o);
        ltf_tensor_release(want);
    }
    {   /* truncated_normal float32: each element's stream, pairs until one is within 2 */
        ltf_attrs a = seeded(K, C);
        set_shape(a, { n });
        a.i[0] = LTF_DTYPE_FLOAT32;
        a.f[1] = 1;
        ltf_tensor *o = dev(LTF_OP_TRUNCATED_NORMAL, {}, &a), *want = zeros(LTF_DTYPE_FLOAT32, { n });
        for (int64_t k = 0; k < n; k++) {
            RefStream s(K, C, (uint64_t)k);
            float z[2], v;
            for (;;) {
                uint32_t w0 = s.next32(), w1 = s.next32();
                ref_bm(w0, w1, z);
                if (fabsf(z[0]) <= 2) { v = z[0]; break; }
                if (fabsf(z[1]) <= 2) { v = z[1]; break; }
            }
            ((float *)ltf_tensor_data(want))[k] = v;
        }
        CHECK(o && compare("truncated_normal float32 vs reference", want, o, 1e-6, 1e-6));
        ltf_tensor_release(o);
        ltf_tensor_release(want);
    }
    /* integers: each element's stream, rejection below 2^w mod range */
    struct { ltf_dtype dt; int64_t lo, hi; } cases[] = {
        { LTF_DTYPE_INT32, -3, 4 }, { LTF_DTYPE_INT32, INT32_MIN, INT32_MAX }, { LTF_DTYPE_INT64, -5, 1000000007 },
        { LTF_DTYPE_INT64, 0, 3 * (INT64_C(1) << 32) + 5 }, { LTF_DTYPE_INT64, INT64_MIN, INT64_MAX },
    };
    for (const auto &c : cases) {
        ltf_attrs a = seeded(K, C);
        set_shape(a, { n });
        a.i[0] = c.dt;
        a.nints2 = 2;
        a.ints2[0] = c.lo;
        a.ints2[1] = c.hi;
        ltf_tensor *o = dev(LTF_OP_RANDOM_UNIFORM, {}, &a);
        int ok = o != NULL;
        uint64_t range = (uint64_t)c.hi - (uint64_t)c.lo;
        for (int64_t k = 0; ok && k < n; k++) {
            RefStream s(K, C, (uint64_t)k);
            uint64_t v;
            if (range <= 0xffffffffull) {
                uint32_t r = (uint32_t)range, lim = (uint32_t)(0x100000000ull % r), x;
                do x = s.next32(); while (x < lim);
                v = x % r;
            } else {
                uint64_t lim = (0 - range) % range, x;
                do x = s.next64(); while (x < lim);
                v = x % range;
            }
            int64_t want = (int64_t)((uint64_t)c.lo + v);
            int64_t got = c.dt == LTF_DTYPE_INT32 ? ((int32_t *)ltf_tensor_data(o))[k] : ((int64_t *)ltf_tensor_data(o))[k];
            ok = got == want;
            if (!ok) fprintf(stderr, "uniform %s [%lld, %lld) [%lld]: %lld, reference %lld\n", ltf_dtype_name(c.dt),
                             (long long)c.lo, (long long)c.hi, (long long)k, (long long)got, (long long)want);
        }
        CHECK(ok);
        ltf_tensor_release(o);
    }
}
/* }==== */

/* {==== Distributions */
static const int64_t N = 100000;

static void test_distributions() {
    char what[128];
    for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 }) {
        ltf_attrs a = seeded(11, 0);
        set_shape(a, { N });
        a.i[0] = dt;
        a.f[0] = 2;
        a.f[1] = 5;
        ltf_tensor *o = dev(LTF_OP_RANDOM_UNIFORM, {}, &a);
        std::vector<double> x = o ? as_doubles(o) : std::vector<double>{ 0 };
        snprintf(what, sizeof what, "uniform %s [2, 5)", ltf_dtype_name(dt));
        check_moments(what, x, 3.5, 9.0 / 12);
        CHECK(*std::min_element(x.begin(), x.end()) >= 2 && *std::max_element(x.begin(), x.end()) < 5);
        ltf_tensor_release(o);
        /* a degenerate interval: always minval */
        a.f[1] = 2;
        o = dev(LTF_OP_RANDOM_UNIFORM, {}, &a);
        x = o ? as_doubles(o) : std::vector<double>{ 0 };
        CHECK(*std::min_element(x.begin(), x.end()) == 2 && *std::max_element(x.begin(), x.end()) == 2);
        ltf_tensor_release(o);

        a.f[0] = -1;
        a.f[1] = 2;
        o = dev(LTF_OP_RANDOM_NORMAL, {}, &a);
        x = o ? as_doubles(o) : std::vector<double>{ 0 };
        snprintf(what, sizeof what, "normal %s (-1, 2)", ltf_dtype_name(dt));
        check_moments(what, x, -1, 4);
        ltf_tensor_release(o);

        o = dev(LTF_OP_TRUNCATED_NORMAL, {}, &a);
        x = o ? as_doubles(o) : std::vector<double>{ 0 };
        snprintf(what, sizeof what, "truncated_normal %s (-1, 2)", ltf_dtype_name(dt));
        check_moments(what, x, -1, 4 * 0.77374130);   /* Var of N(0, 1) given |z| <= 2 */
        CHECK(*std::min_element(x.begin(), x.end()) >= -5 && *std::max_element(x.begin(), x.end()) <= 3);
        ltf_tensor_release(o);

        /* dropout_noise: uniform [0, 1) of x's shape and dtype */
        ltf_attrs d = seeded(12, 0);
        ltf_tensor *like = zeros(dt, { N / 4, 4 });
        o = dev(LTF_OP_DROPOUT_NOISE, { like }, &d);
        x = o ? as_doubles(o) : std::vector<double>{ 0 };
        snprintf(what, sizeof what, "dropout_noise %s", ltf_dtype_name(dt));
        check_moments(what, x, 0.5, 1.0 / 12);
        CHECK(o && ltf_tensor_dtype(o) == dt && ltf_tensor_rank(o) == 2);
        CHECK(*std::min_element(x.begin(), x.end()) >= 0 && *std::max_element(x.begin(), x.end()) < 1);
        ltf_tensor_release(o);
        ltf_tensor_release(like);

        /* gamma: mean and variance alpha (alpha < 1 through the boost) */
        for (double alpha : { 0.3, 1.0, 2.5, 10.0 }) {
            ltf_attrs g = seeded(13, (uint64_t)(alpha * 10));
            set_shape(g, { N });
            ltf_tensor *al = zeros(dt, {});
            if (dt == LTF_DTYPE_FLOAT32) *(float *)ltf_tensor_data(al) = (float)alpha;
            else *(double *)ltf_tensor_data(al) = alpha;
            o = dev(LTF_OP_RANDOM_GAMMA, { al }, &g);
            x = o ? as_doubles(o) : std::vector<double>{ 0 };
            snprintf(what, sizeof what, "gamma %s alpha %g", ltf_dtype_name(dt), alpha);
            check_moments(what, x, alpha, alpha);
            CHECK(*std::min_element(x.begin(), x.end()) >= 0);
            ltf_tensor_release(o);
            ltf_tensor_release(al);
        }
        /* gamma over a vector of alphas (element k takes alpha[k mod 3]); alpha <= 0 gives NaN */
        {
            ltf_attrs g = seeded(14, 0);
            set_shape(g, { N / 4 });
            ltf_tensor *al = zeros(dt, { 4 });
            double av[4] = { 0.5, 4, -1, 0 };
            for (int i = 0; i < 4; i++) {
                if (dt == LTF_DTYPE_FLOAT32) ((float *)ltf_tensor_data(al))[i] = (float)av[i];
                else ((double *)ltf_tensor_data(al))[i] = av[i];
            }
            o = dev(LTF_OP_RANDOM_GAMMA, { al }, &g);
            CHECK(o && ltf_tensor_num_elements(o) == N && ltf_tensor_rank(o) == 2);
            x = o ? as_doubles(o) : std::vector<double>(4, 0.0);
            std::vector<double> c0, c1;
            int nans = 1;
            for (size_t k = 0; k < x.size(); k++) {
                if (k % 4 == 0) c0.push_back(x[k]);
                if (k % 4 == 1) c1.push_back(x[k]);
                if (k % 4 >= 2) nans &= x[k] != x[k];
            }
            check_moments("gamma alpha 0.5 (column 1 of 4)", c0, 0.5, 0.5);
            check_moments("gamma alpha 4 (column 2 of 4)", c1, 4, 4);
            CHECK(nans);
            ltf_tensor_release(o);
            ltf_tensor_release(al);
        }
    }
    /* integers: in range and unbiased */
    for (ltf_dtype dt : { LTF_DTYPE_INT32, LTF_DTYPE_INT64 }) {
        ltf_attrs a = seeded(21, 0);
        set_shape(a, { N });
        a.i[0] = dt;
        a.nints2 = 2;
        a.ints2[0] = -3;
        a.ints2[1] = 4;
        ltf_tensor *o = dev(LTF_OP_RANDOM_UNIFORM, {}, &a);
        std::vector<double> x = o ? as_doubles(o) : std::vector<double>{ 0 }, counts(7, 0.0);
        int in_range = 1;
        for (double v : x) {
            in_range &= v >= -3 && v < 4;
            if (v >= -3 && v < 4) counts[(size_t)(v + 3)]++;
        }
        CHECK(in_range);
        snprintf(what, sizeof what, "uniform %s [-3, 4) frequencies", ltf_dtype_name(dt));
        check_chi2(what, counts, std::vector<double>(7, 1.0 / 7), 31.0);   /* 6 dof: p ~ 2e-5 */
        ltf_tensor_release(o);
    }
    {   /* a range above 2^32 (64-bit draws) that is not a power of two */
        ltf_attrs a = seeded(22, 0);
        set_shape(a, { N });
        a.i[0] = LTF_DTYPE_INT64;
        a.nints2 = 2;
        a.ints2[0] = 0;
        a.ints2[1] = 3 * (INT64_C(1) << 40) + 12345;
        ltf_tensor *o = dev(LTF_OP_RANDOM_UNIFORM, {}, &a);
        std::vector<double> x = o ? as_doubles(o) : std::vector<double>{ 0 }, thirds(3, 0.0);
        double r = (double)a.ints2[1];
        int in_range = 1;
        for (size_t k = 0; o && k < x.size(); k++) {
            int64_t v = ((int64_t *)ltf_tensor_data(o))[k];
            in_range &= v >= 0 && v < a.ints2[1];
            thirds[(size_t)std::min(2.0, floor(3 * (double)v / r))]++;
        }
        CHECK(in_range);
        check_chi2("uniform int64 [0, 3 * 2^40 + 12345) by thirds", thirds, { 1.0 / 3, 1.0 / 3, 1.0 / 3 }, 25.0);
        ltf_tensor_release(o);
    }
}

static void test_categorical() {
    /* rows: plain logits, one class at -inf and one NaN (never drawn), all -inf (classes + 1) */
    const double L[3][5] = { { 1, 2, 0.5, -1, 3 }, { 0, -INFINITY, 1, NAN, 0.25 },
                             { -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY } };
    for (ltf_dtype dt : { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 })
        for (ltf_dtype it : { LTF_DTYPE_INT32, LTF_DTYPE_INT64 }) {
            ltf_tensor *l = zeros(dt, { 3, 5 });
            for (int b = 0; b < 3; b++)
                for (int c = 0; c < 5; c++) {
                    if (dt == LTF_DTYPE_FLOAT32) ((float *)ltf_tensor_data(l))[b * 5 + c] = (float)L[b][c];
                    else ((double *)ltf_tensor_data(l))[b * 5 + c] = L[b][c];
                }
            ltf_attrs a = seeded(31, 0);
            a.i[0] = it;
            set_shape(a, { N / 2 });
            ltf_tensor *o = dev(LTF_OP_CATEGORICAL, { l }, &a);
            std::vector<double> x = o ? as_doubles(o) : std::vector<double>((size_t)(3 * N / 2), 0.0);
            CHECK(o && ltf_tensor_dtype(o) == it);
            for (int b = 0; b < 2; b++) {
                std::vector<double> counts(6, 0.0), p(6, 0.0);
                double mx = -INFINITY, s = 0;
                for (int c = 0; c < 5; c++)
                    if (L[b][c] > mx) mx = L[b][c];
                for (int c = 0; c < 5; c++) s += L[b][c] == L[b][c] ? exp(L[b][c] - mx) : 0;
                for (int c = 0; c < 5; c++) p[(size_t)c] = L[b][c] == L[b][c] ? exp(L[b][c] - mx) / s : 0;
                for (int64_t k = 0; k < N / 2; k++) {
                    double v = x[(size_t)(b * (N / 2) + k)];
                    if (v >= 1 && v <= 6) counts[(size_t)v - 1]++;
                }
                char what[96];
                snprintf(what, sizeof what, "categorical %s -> %s row %d", ltf_dtype_name(dt), ltf_dtype_name(it), b + 1);
                check_chi2(what, counts, p, 25.0);   /* at most 4 dof: p ~ 5e-5 */
            }
            int past = 1;
            for (int64_t k = 0; k < N / 2; k++) past &= x[(size_t)(2 * (N / 2) + k)] == 6;
            CHECK(past);
            ltf_tensor_release(o);
            ltf_tensor_release(l);
        }
}

static void test_shuffle() {
    /* rows of each element size, with several elements per row */
    struct { ltf_dtype dt; std::vector<int64_t> sh; } cases[] = {
        { LTF_DTYPE_INT64, { 100, 3 } }, { LTF_DTYPE_FLOAT32, { 64 } }, { LTF_DTYPE_UINT8, { 50, 2, 2 } },
        { LTF_DTYPE_BOOL, { 2, 5 } }, { LTF_DTYPE_FLOAT64, { 1000 } },
    };
    for (const auto &c : cases) {
        ltf_tensor *x = zeros(c.dt, c.sh);
        int64_t rows = c.sh[0], inner = ltf_tensor_num_elements(x) / rows;
        for (int64_t i = 0; i < rows * inner; i++) {
            int64_t v = (i / inner) * 7 + i % inner;   /* row r holds 7r, 7r + 1, ... */
            switch (c.dt) {
            case LTF_DTYPE_INT64: ((int64_t *)ltf_tensor_data(x))[i] = v; break;
            case LTF_DTYPE_FLOAT32: ((float *)ltf_tensor_data(x))[i] = (float)v; break;
            case LTF_DTYPE_FLOAT64: ((double *)ltf_tensor_data(x))[i] = (double)v; break;
            case LTF_DTYPE_UINT8: ((uint8_t *)ltf_tensor_data(x))[i] = (uint8_t)(i / inner); break;
            default: ((uint8_t *)ltf_tensor_data(x))[i] = (uint8_t)(i / inner == 0); break;
            }
        }
        ltf_attrs a = seeded(41, 0);
        ltf_tensor *o = dev(LTF_OP_RANDOM_SHUFFLE, { x }, &a), *o2 = dev(LTF_OP_RANDOM_SHUFFLE, { x }, &a);
        CHECK(o && o2 && same_bytes(o, o2));   /* same seed, same permutation */
        std::vector<double> xv = as_doubles(x), ov = o ? as_doubles(o) : xv;
        /* each output row is one input row, whole, and every input row appears once */
        std::vector<int> seen((size_t)rows, 0);
        int whole = 1, moved = 0;
        for (int64_t r = 0; r < rows; r++) {
            double first = ov[(size_t)(r * inner)];
            int64_t src = -1;
            for (int64_t s = 0; s < rows && src < 0; s++)
                if (xv[(size_t)(s * inner)] == first && !seen[(size_t)s]) src = s;
            if (src < 0) { whole = 0; break; }
            seen[(size_t)src] = 1;
            moved |= src != r;
            for (int64_t q = 0; q < inner; q++) whole &= ov[(size_t)(r * inner + q)] == xv[(size_t)(src * inner + q)];
        }
        CHECK(whole);
        if (rows > 20) CHECK(moved);   /* the identity has probability 1 / rows! */
        ltf_tensor_release(o);
        ltf_tensor_release(o2);
        ltf_tensor_release(x);
    }
    /* each position equally likely: where row 1 of 5 lands over 5000 counters */
    {
        ltf_tensor *x = zeros(LTF_DTYPE_INT32, { 5 });
        for (int i = 0; i < 5; i++) ((int32_t *)ltf_tensor_data(x))[i] = i;
        std::vector<double> where(5, 0.0), last(5, 0.0);
        for (int t = 0; t < 5000; t++) {
            ltf_attrs a = seeded(42, (uint64_t)t);
            ltf_tensor *o = dev(LTF_OP_RANDOM_SHUFFLE, { x }, &a);
            for (int i = 0; o && i < 5; i++) {
                if (((int32_t *)ltf_tensor_data(o))[i] == 0) where[(size_t)i]++;
                if (((int32_t *)ltf_tensor_data(o))[i] == 4) last[(size_t)i]++;
            }
            ltf_tensor_release(o);
        }
        check_chi2("shuffle: where row 1 of 5 lands", where, std::vector<double>(5, 0.2), 23.0);   /* 4 dof: p ~ 1e-4 */
        check_chi2("shuffle: where row 5 of 5 lands", last, std::vector<double>(5, 0.2), 23.0);
        ltf_tensor_release(x);
    }
    /* nothing to permute: a scalar, one row, no elements */
    for (std::vector<int64_t> sh : { std::vector<int64_t>{}, std::vector<int64_t>{ 1, 4 }, std::vector<int64_t>{ 0, 3 } }) {
        ltf_tensor *x = rand_tensor(LTF_DTYPE_FLOAT32, sh);
        ltf_attrs a = attrs();
        ltf_tensor *o = dev(LTF_OP_RANDOM_SHUFFLE, { x }, &a);
        CHECK(o && same_bytes(x, o));
        ltf_tensor_release(o);
        ltf_tensor_release(x);
    }
}
/* }==== */

/* {==== Seeds */
static void test_seeds() {
    ltf_attrs a = seeded(7, 1);
    set_shape(a, { 64 });
    a.i[0] = LTF_DTYPE_FLOAT32;
    a.f[1] = 1;
    ltf_tensor *x1 = dev(LTF_OP_RANDOM_NORMAL, {}, &a), *x2 = dev(LTF_OP_RANDOM_NORMAL, {}, &a);
    CHECK(x1 && x2 && same_bytes(x1, x2));   /* same (key, counter): same values */
    a.i[3] = 2;
    ltf_tensor *x3 = dev(LTF_OP_RANDOM_NORMAL, {}, &a);
    CHECK(x3 && !same_bytes(x1, x3));        /* the next counter: other values */
    ltf_tensor_release(x1);
    ltf_tensor_release(x2);
    ltf_tensor_release(x3);
    /* the context's generator: new values each call, the same sequence after set_seed */
    for (ltf_op_id op : { LTF_OP_RANDOM_UNIFORM, LTF_OP_RANDOM_NORMAL, LTF_OP_TRUNCATED_NORMAL }) {
        ltf_attrs g = attrs();
        set_shape(g, { 3, 7 });
        g.i[0] = LTF_DTYPE_FLOAT64;
        g.f[1] = 1;
        ltf_ctx_set_seed(ctx, 99);
        ltf_tensor *a1 = dev(op, {}, &g), *a2 = dev(op, {}, &g);
        ltf_ctx_set_seed(ctx, 99);
        ltf_tensor *b1 = dev(op, {}, &g), *b2 = dev(op, {}, &g);
        CHECK(a1 && a2 && !same_bytes(a1, a2));
        CHECK(b1 && b2 && same_bytes(a1, b1) && same_bytes(a2, b2));
        ltf_tensor_release(a1);
        ltf_tensor_release(a2);
        ltf_tensor_release(b1);
        ltf_tensor_release(b2);
    }
    /* and for the ops with inputs */
    ltf_tensor *al = rand_tensor(LTF_DTYPE_FLOAT32, { 6 }, GEN_POS), *lg = rand_tensor(LTF_DTYPE_FLOAT64, { 2, 4 });
    ltf_tensor *rows = rand_tensor(LTF_DTYPE_INT32, { 30 });
    ltf_attrs g = attrs(), c = attrs();
    set_shape(g, { 5 });
    c.i[0] = LTF_DTYPE_INT64;
    set_shape(c, { 40 });
    struct { ltf_op_id op; ltf_tensor *in; const ltf_attrs *a; } ops[] = {
        { LTF_OP_RANDOM_GAMMA, al, &g }, { LTF_OP_CATEGORICAL, lg, &c }, { LTF_OP_RANDOM_SHUFFLE, rows, &g },
        { LTF_OP_DROPOUT_NOISE, lg, &g },
    };
    for (const auto &o : ops) {
        ltf_ctx_set_seed(ctx, 5);
        ltf_tensor *a1 = dev(o.op, { o.in }, o.a), *a2 = dev(o.op, { o.in }, o.a);
        ltf_ctx_set_seed(ctx, 5);
        ltf_tensor *b1 = dev(o.op, { o.in }, o.a);
        CHECK(a1 && a2 && b1 && !same_bytes(a1, a2) && same_bytes(a1, b1));
        ltf_tensor_release(a1);
        ltf_tensor_release(a2);
        ltf_tensor_release(b1);
    }
    ltf_tensor_release(al);
    ltf_tensor_release(lg);
    ltf_tensor_release(rows);
}
/* }==== */

/* {==== The CPU's errors (the same status kind; run_both compares) */
static void test_errors() {
    ltf_attrs a = attrs();
    set_shape(a, { 3 });
    a.i[0] = LTF_DTYPE_INT32;
    run_both("normal of int32", LTF_OP_RANDOM_NORMAL, {}, &a);
    run_both("truncated_normal of int32", LTF_OP_TRUNCATED_NORMAL, {}, &a);
    run_both("uniform int32 without a range", LTF_OP_RANDOM_UNIFORM, {}, &a);
    a.nints2 = 2;
    a.ints2[0] = 5;
    a.ints2[1] = 5;
    run_both("uniform int32 with minval = maxval", LTF_OP_RANDOM_UNIFORM, {}, &a);
    a.ints2[0] = 0;
    a.ints2[1] = INT64_C(1) << 33;
    run_both("uniform int32 past int32", LTF_OP_RANDOM_UNIFORM, {}, &a);
    a.i[0] = LTF_DTYPE_UINT8;
    run_both("uniform of uint8", LTF_OP_RANDOM_UNIFORM, {}, &a);
    a.i[0] = 99;
    run_both("uniform of an invalid dtype", LTF_OP_RANDOM_UNIFORM, {}, &a);
    a.i[0] = LTF_DTYPE_FLOAT32;
    a.ints[0] = -2;
    run_both("normal of a negative shape", LTF_OP_RANDOM_NORMAL, {}, &a);
    ltf_attrs g = attrs();
    run_both("gamma of int32 alpha", LTF_OP_RANDOM_GAMMA, { rand_tensor(LTF_DTYPE_INT32, { 2 }) }, &g);
    set_shape(g, { -1 });
    run_both("gamma of a negative shape", LTF_OP_RANDOM_GAMMA, { rand_tensor(LTF_DTYPE_FLOAT32, { 2 }) }, &g);
    ltf_attrs c = attrs();
    c.i[0] = LTF_DTYPE_INT64;
    set_shape(c, { 4 });
    run_both("categorical of 1-d logits", LTF_OP_CATEGORICAL, { rand_tensor(LTF_DTYPE_FLOAT32, { 4 }) }, &c);
    run_both("categorical of int32 logits", LTF_OP_CATEGORICAL, { rand_tensor(LTF_DTYPE_INT32, { 2, 4 }) }, &c);
    run_both("categorical without classes", LTF_OP_CATEGORICAL, { rand_tensor(LTF_DTYPE_FLOAT32, { 2, 0 }) }, &c);
    c.i[0] = LTF_DTYPE_FLOAT32;
    run_both("categorical to float32", LTF_OP_CATEGORICAL, { rand_tensor(LTF_DTYPE_FLOAT32, { 2, 3 }) }, &c);
    c.i[0] = LTF_DTYPE_INT32;
    set_shape(c, { -3 });
    run_both("categorical of -3 samples", LTF_OP_CATEGORICAL, { rand_tensor(LTF_DTYPE_FLOAT32, { 2, 3 }) }, &c);
    ltf_attrs d = attrs();
    run_both("dropout_noise of int32", LTF_OP_DROPOUT_NOISE, { rand_tensor(LTF_DTYPE_INT32, { 3 }) }, &d);
    /* empty outputs: nothing drawn, nothing written, no failure */
    ltf_attrs e = attrs();
    set_shape(e, { 0, 4 });
    e.i[0] = LTF_DTYPE_FLOAT32;
    ltf_tensor *o = dev(LTF_OP_RANDOM_NORMAL, {}, &e);
    CHECK(o && ltf_tensor_num_elements(o) == 0);
    ltf_tensor_release(o);
    ltf_attrs ce = attrs();
    ce.i[0] = LTF_DTYPE_INT32;
    set_shape(ce, { 0 });
    ltf_tensor *l = rand_tensor(LTF_DTYPE_FLOAT32, { 2, 0 });
    o = dev(LTF_OP_CATEGORICAL, { l }, &ce);
    CHECK(o && ltf_tensor_num_elements(o) == 0);
    ltf_tensor_release(o);
    ltf_tensor_release(l);
}
/* }==== */

int main(void) {
    ctx = ltf_ctx_new();
    test_philox();
    test_values();
    test_distributions();
    test_categorical();
    test_shuffle();
    test_seeds();
    test_errors();
    /* every random op has a device kernel */
    for (ltf_op_id op : { LTF_OP_RANDOM_NORMAL, LTF_OP_RANDOM_UNIFORM, LTF_OP_TRUNCATED_NORMAL, LTF_OP_RANDOM_GAMMA,
                          LTF_OP_CATEGORICAL, LTF_OP_RANDOM_SHUFFLE, LTF_OP_DROPOUT_NOISE })
        CHECK(ltf_gpu_host_kernel(op) != NULL);
    ltf_ctx_release(ctx);
    CHECK_DONE();
}
