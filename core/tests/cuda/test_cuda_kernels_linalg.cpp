/*
** test_cuda_kernels_linalg.cpp: the factorizations' device bodies
** (core/cuda/kernels/linalg.cuh) built for the host (libltf_gpu_host.a),
** against the CPU kernels (LAPACK through OpenBLAS) on the same inputs:
** cholesky, inv, det, slogdet, solve, triangular_solve, qr, svd, eigh, in
** float32 and float64, batches, 1x1, n = 0, empty batches, and the errors
** the CPU raises (same kind, same message). Needs no GPU.
**
** Inputs are well conditioned: SPD matrices R R^T + n I; general ones
** R + (2 sqrt(n) + 1) I with rows and columns permuted (condition below
** about 4, pivoting needed); triangular ones with diagonals of magnitude
** 2 sqrt(n) + 1 or more; R uniform in [-1, 1]. Tolerances, norm-wise over
** each output (|dev - cpu| <= tol * max |cpu| + tol * |cpu|):
**   values (factors, inverses, solutions, determinants, eigen and
**   singular values): float64 1e-10, float32 2e-4 (the CPU's float32
**   LAPACK errs by about n eps cond = 64 * 6e-8 * 4 = 1.5e-5; the device
**   computes in float64 and rounds once);
**   eigenvectors and singular vectors: compared column by column up to
**   sign (LAPACK does not fix signs) on matrices with chosen, separated
**   spectra, tol * max|value| / (smallest gap) (a vector moves by about
**   its perturbation over the gap);
**   without separated spectra (random, repeated or zero values): the
**   values, and the device's own reconstruction |A - V diag(e) V^T|,
**   |A - U S V^T| <= rtol |A| and orthonormality |V^T V - I| <= rtol,
**   rtol 1e-11 (float64) / 1e-4 (float32, outputs rounded to float).
*/
#include <algorithm>
#include <string>
#include "kernel_check.h"

typedef std::vector<double> Vec;
typedef std::vector<int64_t> Dims;

/* {==== Tensors as doubles */
static int64_t count(const Dims &d) {
    int64_t n = 1;
    for (int64_t x : d) n *= x;
    return n;
}

static Vec get(const ltf_tensor *t) {
    int64_t n = ltf_tensor_num_elements(t);
    Vec v((size_t)n);
    const void *p = ltf_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        v[(size_t)i] = ltf_tensor_dtype(t) == LTF_DTYPE_FLOAT32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
    return v;
}

static ltf_tensor *make(ltf_dtype dt, const Dims &dims, const Vec &v) {
    ltf_tensor *t = ltf_tensor_new(ctx, dt, (int)dims.size(), dims.data());
    void *p = ltf_tensor_data(t);
    for (int64_t i = 0; i < count(dims); i++) {
        if (dt == LTF_DTYPE_FLOAT32) ((float *)p)[i] = (float)v[(size_t)i];
        else ((double *)p)[i] = v[(size_t)i];
    }
    return t;
}

static double tol_of(ltf_dtype dt) { return dt == LTF_DTYPE_FLOAT32 ? 2e-4 : 1e-10; }
static double rec_tol(ltf_dtype dt) { return dt == LTF_DTYPE_FLOAT32 ? 1e-4 : 1e-11; }
static const char *dn(ltf_dtype dt) { return ltf_dtype_name(dt); }
/* }==== */

/* {==== Matrices (row-major, double) */
static Vec uniform(int64_t m, int64_t n) {
    Vec a((size_t)(m * n));
    for (double &x : a) x = 2 * uni() - 1;
    return a;
}

static Vec spd(int64_t n) {
    Vec r = uniform(n, n), a((size_t)(n * n));
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = i == j ? (double)n : 0;
            for (int64_t k = 0; k < n; k++) s += r[(size_t)(i * n + k)] * r[(size_t)(j * n + k)];
            a[(size_t)(i * n + j)] = s;
        }
    return a;
}

static std::vector<int64_t> perm(int64_t n) {
    std::vector<int64_t> p((size_t)n);
    for (int64_t i = 0; i < n; i++) p[(size_t)i] = i;
    for (int64_t i = n - 1; i > 0; i--) std::swap(p[(size_t)i], p[(size_t)(rnd() % (uint64_t)(i + 1))]);
    return p;
}

/* P1 (R + (2 sqrt(n) + 1) I) P2, times 'scale' */
static Vec general(int64_t n, double scale = 1) {
    Vec r = uniform(n, n), a((size_t)(n * n));
    double c = 2 * sqrt((double)n) + 1;
    std::vector<int64_t> p1 = perm(n), p2 = perm(n);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
            a[(size_t)(p1[(size_t)i] * n + p2[(size_t)j])] = scale * (r[(size_t)(i * n + j)] + (i == j ? c : 0));
    return a;
}

/* an n x n orthogonal matrix: Gram-Schmidt (twice) of a random one */
static Vec orth(int64_t n) {
    Vec q = uniform(n, n);
    for (int64_t j = 0; j < n; j++) {
        for (int pass = 0; pass < 2; pass++)
            for (int64_t i = 0; i < j; i++) {
                double d = 0;
                for (int64_t k = 0; k < n; k++) d += q[(size_t)(k * n + i)] * q[(size_t)(k * n + j)];
                for (int64_t k = 0; k < n; k++) q[(size_t)(k * n + j)] -= d * q[(size_t)(k * n + i)];
            }
        double s = 0;
        for (int64_t k = 0; k < n; k++) s += q[(size_t)(k * n + j)] * q[(size_t)(k * n + j)];
        for (int64_t k = 0; k < n; k++) q[(size_t)(k * n + j)] /= sqrt(s);
    }
    return q;
}

/* Q diag(e) Q^T */
static Vec with_eigen(int64_t n, const Vec &e) {
    Vec q = orth(n), a((size_t)(n * n), 0.0);
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++)
            for (int64_t k = 0; k < n; k++)
                a[(size_t)(i * n + j)] += q[(size_t)(i * n + k)] * e[(size_t)k] * q[(size_t)(j * n + k)];
    return a;
}

/* U diag(s) V^T, m x n, s of min(m, n) values */
static Vec with_svals(int64_t m, int64_t n, const Vec &s) {
    Vec u = orth(m), v = orth(n), a((size_t)(m * n), 0.0);
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            for (size_t k = 0; k < s.size(); k++)
                a[(size_t)(i * n + j)] += u[(size_t)i * (size_t)m + k] * s[k] * v[(size_t)j * (size_t)n + k];
    return a;
}

/* separated values: spaced 1 apart (plus up to 0.3), shifted by 'lo' */
static Vec spaced(int64_t n, double lo) {
    Vec e((size_t)n);
    for (int64_t i = 0; i < n; i++) e[(size_t)i] = lo + (double)i + 0.3 * uni();
    return e;
}

/* 'batch' matrices from gen(), concatenated */
template <class G> static Vec batch_of(int64_t batch, G gen) {
    Vec all;
    for (int64_t b = 0; b < batch; b++) {
        Vec one = gen();
        all.insert(all.end(), one.begin(), one.end());
    }
    return all;
}
/* }==== */

/* {==== Running both */
struct Run {
    ltf_status st;
    std::vector<ltf_tensor *> out;
    std::string err;
};

static void drop(Run &r) {
    for (ltf_tensor *t : r.out) ltf_tensor_release(t);
    r.out.clear();
}

static Run on_cpu(ltf_op_id op, const std::vector<ltf_tensor *> &in, const ltf_attrs *a) {
    ltf_tensor *o[3] = { NULL, NULL, NULL };
    int n = 0;
    Run r;
    r.st = ltf_op_run(ctx, op, in.data(), (int)in.size(), a, o, 3, &n);
    if (r.st != LTF_OK) r.err = ltf_ctx_error(ctx);
    for (int k = 0; r.st == LTF_OK && k < n; k++) r.out.push_back(o[k]);
    return r;
}

/* the device body on outputs of the inferred types (a float32 scalar when
** inference refuses: the body must refuse too, before touching it) */
static Run on_dev(ltf_op_id op, const std::vector<ltf_tensor *> &in, const ltf_attrs *a) {
    ltf_type ty[3];
    int nty = 0;
    Run r;
    ltf_tensor *o[3] = { NULL, NULL, NULL };
    if (ltf_op_infer(ctx, ltf_op_get(op), in.data(), (int)in.size(), a, ty, 3, &nty) != LTF_OK) {
        nty = 1;
        o[0] = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 0, NULL);
    } else {
        for (int k = 0; k < nty; k++) o[k] = ltf_tensor_new(ctx, ty[k].dtype, ty[k].rank, ty[k].dims);
    }
    ltf_kernel_fn fn = (ltf_kernel_fn)ltf_gpu_host_kernel(op);
    r.st = fn ? fn(ctx, ltf_op_get(op), in.data(), (int)in.size(), a, o, nty) : LTF_ERR_UNIMPLEMENTED;
    if (r.st != LTF_OK) r.err = ltf_ctx_error(ctx);
    for (int k = 0; k < nty; k++) r.out.push_back(o[k]);
    return r;
}

/* Norm-wise: |g - w| <= tol * max|w| + tol * |w|; NaN where NaN, equal infinities */
static bool near(const char *what, const Vec &want, const Vec &got, double tol) {
    check_count++;
    if (want.size() != got.size()) {
        check_failures++;
        fprintf(stderr, "%s: %zu values, want %zu\n", what, got.size(), want.size());
        return false;
    }
    double mx = 0;
    for (double x : want)
        if (x - x == 0 && fabs(x) > mx) mx = fabs(x);
    for (size_t i = 0; i < want.size(); i++) {
        double w = want[i], g = got[i];
        if ((w != w && g != g) || w == g) continue;
        if (w - w == 0 && fabs(g - w) <= tol * (mx + fabs(w))) continue;
        check_failures++;
        fprintf(stderr, "%s: [%zu] want %.17g got %.17g (tol %g, max %g)\n", what, i, w, g, tol, mx);
        return false;
    }
    return true;
}

/* Columns 0..ncmp-1 of (batch, rows, cols) matrices, each up to its sign */
static bool near_cols(const char *what, const Vec &want, const Vec &got, int64_t batch, int64_t rows, int64_t cols,
                      int64_t ncmp, double tol) {
    Vec g = got;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t j = 0; j < ncmp; j++) {
            size_t o = (size_t)(b * rows * cols + j);
            double d = 0;
            for (int64_t i = 0; i < rows; i++) d += want[o + (size_t)(i * cols)] * got[o + (size_t)(i * cols)];
            if (d < 0)
                for (int64_t i = 0; i < rows; i++) g[o + (size_t)(i * cols)] = -g[o + (size_t)(i * cols)];
        }
    Vec w2, g2;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < ncmp; j++) {
                w2.push_back(want[(size_t)((b * rows + i) * cols + j)]);
                g2.push_back(g[(size_t)((b * rows + i) * cols + j)]);
            }
    return near(what, w2, g2, tol);
}

/* Q (rows x cols per matrix): |Q^T Q - I| <= tol */
static bool orthonormal(const char *what, const Vec &q, int64_t batch, int64_t rows, int64_t cols, double tol) {
    double worst = 0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < cols; i++)
            for (int64_t j = 0; j < cols; j++) {
                double d = 0;
                for (int64_t k = 0; k < rows; k++)
                    d += q[(size_t)((b * rows + k) * cols + i)] * q[(size_t)((b * rows + k) * cols + j)];
                worst = fmax(worst, fabs(d - (i == j ? 1 : 0)));
            }
    check_count++;
    if (worst <= tol) return true;
    check_failures++;
    fprintf(stderr, "%s: |Q^T Q - I| = %g > %g\n", what, worst, tol);
    return false;
}

/* the device's sign convention: each column's largest component (the first
** of equal ones) is positive */
static bool signs_fixed(const char *what, const Vec &q, int64_t batch, int64_t rows, int64_t cols) {
    for (int64_t b = 0; b < batch; b++)
        for (int64_t j = 0; j < cols; j++) {
            double big = 0;
            for (int64_t i = 0; i < rows; i++) {
                double v = q[(size_t)((b * rows + i) * cols + j)];
                if (fabs(v) > fabs(big)) big = v;
            }
            check_count++;
            if (rows > 0 && !(big > 0)) {
                check_failures++;
                fprintf(stderr, "%s: column %lld of matrix %lld: largest component %g\n", what, (long long)j,
                        (long long)b, big);
                return false;
            }
        }
    return true;
}

/* |A - L diag(s) R^T| <= tol * max|A|: L (m x lc), R (n x rc), the first p columns */
static bool reconstructs(const char *what, const Vec &A, const Vec &L, const Vec &s, const Vec &R, int64_t batch,
                         int64_t m, int64_t n, int64_t lc, int64_t rc, int64_t p, double tol) {
    double mx = 0, worst = 0;
    for (double x : A) mx = fmax(mx, fabs(x));
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double x = 0;
                for (int64_t k = 0; k < p; k++)
                    x += L[(size_t)((b * m + i) * lc + k)] * s[(size_t)(b * p + k)] * R[(size_t)((b * n + j) * rc + k)];
                worst = fmax(worst, fabs(x - A[(size_t)((b * m + i) * n + j)]));
            }
    check_count++;
    if (worst <= tol * fmax(mx, 1e-300)) return true;
    check_failures++;
    fprintf(stderr, "%s: reconstruction off by %g (max |A| %g, tol %g)\n", what, worst, mx, tol);
    return false;
}

/* Run op on both (takes ownership of 'in': released here); false, counted
** as a failure, unless both succeed with as many outputs */
static bool both(const char *what, ltf_op_id op, std::vector<ltf_tensor *> in, const ltf_attrs *a, Run &cpu,
                 Run &dev) {
    cpu = on_cpu(op, in, a);
    dev = on_dev(op, in, a);
    for (ltf_tensor *t : in) ltf_tensor_release(t);
    check_count++;
    if (cpu.st != LTF_OK || dev.st != LTF_OK || cpu.out.size() != dev.out.size()) {
        check_failures++;
        fprintf(stderr, "%s: cpu %d (%s), device %d (%s), %zu vs %zu outputs\n", what, (int)cpu.st, cpu.err.c_str(),
                (int)dev.st, dev.err.c_str(), cpu.out.size(), dev.out.size());
        return false;
    }
    return true;
}

/* every output compared by value */
static void same(const char *what, ltf_op_id op, std::vector<ltf_tensor *> in, const ltf_attrs *a, double tol) {
    Run cpu, dev;
    if (both(what, op, in, a, cpu, dev))
        for (size_t k = 0; k < cpu.out.size(); k++) {
            char w[160];
            snprintf(w, sizeof w, "%s: output %zu", what, k + 1);
            CHECK(ltf_tensor_rank(cpu.out[k]) == ltf_tensor_rank(dev.out[k]));
            near(w, get(cpu.out[k]), get(dev.out[k]), tol);
        }
    drop(cpu);
    drop(dev);
}

/* both refuse, with the same kind and message */
static void same_error(const char *what, ltf_op_id op, std::vector<ltf_tensor *> in, const ltf_attrs *a,
                       const char *msg = NULL) {
    Run cpu = on_cpu(op, in, a), dev = on_dev(op, in, a);
    check_count++;
    if (cpu.st == LTF_OK || dev.st != cpu.st || dev.err != cpu.err) {
        check_failures++;
        fprintf(stderr, "%s: cpu %d \"%s\", device %d \"%s\"\n", what, (int)cpu.st, cpu.err.c_str(), (int)dev.st,
                dev.err.c_str());
    }
    if (msg) CHECK_STR(dev.err.c_str(), msg);
    drop(cpu);
    drop(dev);
    for (ltf_tensor *t : in) ltf_tensor_release(t);
}

static ltf_attrs flags(int64_t i0, int64_t i1 = 0) {
    ltf_attrs a = attrs();
    a.i[0] = i0;
    a.i[1] = i1;
    return a;
}

static Dims mdims(Dims batch, int64_t m, int64_t n) {
    batch.push_back(m);
    batch.push_back(n);
    return batch;
}
/* }==== */

static const ltf_dtype FLOATS[] = { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 };
/* batch dims and n of the square cases: 1x1, small, batches, one medium, n = 0, empty batch */
static const struct { Dims batch; int64_t n; } SQUARE[] = {
    { {}, 1 }, { {}, 4 }, { { 3 }, 5 }, { { 2, 2 }, 8 }, { { 2 }, 16 }, { {}, 64 }, { { 2 }, 0 }, { { 0 }, 3 },
};

static void test_cholesky() {
    ltf_attrs a = attrs();
    char w[128];
    for (ltf_dtype dt : FLOATS)
        for (auto &c : SQUARE) {
            int64_t n = c.n, nb = count(c.batch);
            snprintf(w, sizeof w, "cholesky %s batch %lld n %lld", dn(dt), (long long)nb, (long long)n);
            same(w, LTF_OP_CHOLESKY, { make(dt, mdims(c.batch, n, n), batch_of(nb, [&] { return spd(n); })) }, &a,
                 tol_of(dt));
            /* the upper triangle is not read */
            Vec x = batch_of(nb, [&] {
                Vec s = spd(n);
                for (int64_t i = 0; i < n; i++)
                    for (int64_t j = i + 1; j < n; j++) s[(size_t)(i * n + j)] = 1e3 * (uni() - 0.5);
                return s;
            });
            snprintf(w, sizeof w, "cholesky %s batch %lld n %lld, junk above", dn(dt), (long long)nb, (long long)n);
            same(w, LTF_OP_CHOLESKY, { make(dt, mdims(c.batch, n, n), x) }, &a, tol_of(dt));
        }
    for (ltf_dtype dt : FLOATS) {
        /* not positive definite: the second of three */
        Vec x = spd(4), y = spd(4), z = spd(4);
        y[5] = -1;
        x.insert(x.end(), y.begin(), y.end());
        x.insert(x.end(), z.begin(), z.end());
        same_error("cholesky not positive definite", LTF_OP_CHOLESKY, { make(dt, { 3, 4, 4 }, x) }, &a,
                   "cholesky: Cholesky decomposition was not successful. The input might not be valid.");
        same_error("cholesky zero matrix", LTF_OP_CHOLESKY, { make(dt, { 2, 2 }, { 0, 0, 0, 0 }) }, &a);
        /* NaN goes on, as OpenBLAS's potrf */
        same("cholesky NaN", LTF_OP_CHOLESKY, { make(dt, { 2, 2, 2 }, { 4, 0, NAN, 5, 4, 0, 2, NAN }) }, &a, tol_of(dt));
    }
    same_error("cholesky int32", LTF_OP_CHOLESKY, { rand_tensor(LTF_DTYPE_INT32, { 2, 2 }) }, &a,
               "cholesky: 'input' has dtype int32, expected float32 or float64");
    same_error("cholesky non-square", LTF_OP_CHOLESKY, { rand_tensor(LTF_DTYPE_FLOAT64, { 2, 3, 4 }) }, &a,
               "cholesky: 'input' must be a square matrix (or a batch of them), got shape (2, 3, 4)");
    same_error("cholesky rank 1", LTF_OP_CHOLESKY, { rand_tensor(LTF_DTYPE_FLOAT32, { 4 }) }, &a,
               "cholesky: 'input' must have rank >= 2, got shape (4,)");
    /* past LAPACK's int but empty: no kernel runs (both succeed) */
    same("cholesky empty, too large", LTF_OP_CHOLESKY, { zeros(LTF_DTYPE_FLOAT32, { 0, 50000, 50000 }) }, &a, 0);
}

static void test_lu() {
    char w[128];
    for (ltf_dtype dt : FLOATS)
        for (auto &c : SQUARE) {
            int64_t n = c.n, nb = count(c.batch);
            double scale = 1 / (2 * sqrt((double)(n > 0 ? n : 1)) + 1);   /* determinants of moderate size */
            Vec x = batch_of(nb, [&] { return general(n, scale); });
            for (int adj = 0; adj < 2; adj++) {
                ltf_attrs a = flags(adj);
                snprintf(w, sizeof w, "inv %s batch %lld n %lld adjoint %d", dn(dt), (long long)nb, (long long)n, adj);
                same(w, LTF_OP_MATRIX_INVERSE, { make(dt, mdims(c.batch, n, n), x) }, &a, tol_of(dt));
                for (int64_t k : { 1, 3, 0 }) {
                    snprintf(w, sizeof w, "solve %s batch %lld n %lld k %lld adjoint %d", dn(dt), (long long)nb,
                             (long long)n, (long long)k, adj);
                    same(w, LTF_OP_MATRIX_SOLVE,
                         { make(dt, mdims(c.batch, n, n), x), make(dt, mdims(c.batch, n, k), uniform(nb * n, k)) }, &a,
                         tol_of(dt));
                }
            }
            ltf_attrs a = attrs();
            snprintf(w, sizeof w, "det %s batch %lld n %lld", dn(dt), (long long)nb, (long long)n);
            same(w, LTF_OP_MATRIX_DETERMINANT, { make(dt, mdims(c.batch, n, n), x) }, &a, tol_of(dt));
            snprintf(w, sizeof w, "slogdet %s batch %lld n %lld", dn(dt), (long long)nb, (long long)n);
            same(w, LTF_OP_LOG_MATRIX_DETERMINANT, { make(dt, mdims(c.batch, n, n), x) }, &a, tol_of(dt));
        }
    for (ltf_dtype dt : FLOATS) {
        ltf_attrs a = attrs();
        /* hand-worked: det [[0, 2], [3, 4]] = -6 (a pivot swap), [[-2]] = -2; singular ones give 0 / (0, -inf) */
        Vec x = { 0, 2, 3, 4, 1, 2, 2, 4, 1, 0, 5, 0, 3, 3, 3, 3 };
        ltf_tensor *t = make(dt, { 4, 2, 2 }, x);
        Run cpu, dev;
        if (both("det hand-worked", LTF_OP_MATRIX_DETERMINANT, { ltf_tensor_retain(t) }, &a, cpu, dev)) {
            near("det hand-worked", { -6, 0, 0, 0 }, get(dev.out[0]), 1e-15);
            near("det hand-worked vs cpu", get(cpu.out[0]), get(dev.out[0]), tol_of(dt));
        }
        drop(cpu);
        drop(dev);
        if (both("slogdet hand-worked", LTF_OP_LOG_MATRIX_DETERMINANT, { t }, &a, cpu, dev)) {
            near("slogdet sign", { -1, 0, 0, 0 }, get(dev.out[0]), 0);
            near("slogdet log|det|", { log(6.0), -INFINITY, -INFINITY, -INFINITY }, get(dev.out[1]), 1e-7);
            near("slogdet vs cpu", get(cpu.out[1]), get(dev.out[1]), tol_of(dt));
        }
        drop(cpu);
        drop(dev);
        same("det 1x1 negative", LTF_OP_MATRIX_DETERMINANT, { make(dt, { 1, 1 }, { -2 }) }, &a, 0);
        same("slogdet 1x1 negative", LTF_OP_LOG_MATRIX_DETERMINANT, { make(dt, { 1, 1 }, { -2 }) }, &a, tol_of(dt));
        /* singular: a zero pivot in the second matrix of the batch, in any
        ** precision (two equal columns: rows of the a^T that LU factors,
        ** eliminated with a multiplier of exactly 1); the third has a zero column */
        Vec s = general(3), y = general(3), z = general(3);
        for (int i = 0; i < 3; i++) y[(size_t)(3 * i + 2)] = y[(size_t)(3 * i)];
        for (int i = 0; i < 3; i++) z[(size_t)(3 * i + 1)] = 0;
        s.insert(s.end(), y.begin(), y.end());
        s.insert(s.end(), z.begin(), z.end());
        same_error("inv singular", LTF_OP_MATRIX_INVERSE, { make(dt, { 3, 3, 3 }, s) }, &a,
                   "inv: Input is not invertible.");
        for (int adj = 0; adj < 2; adj++) {
            ltf_attrs sa = flags(adj);
            same_error("solve singular", LTF_OP_MATRIX_SOLVE,
                       { make(dt, { 3, 3, 3 }, s), make(dt, { 3, 3, 2 }, uniform(9, 2)) }, &sa,
                       "solve: Input matrix is not invertible.");
        }
        same("det singular", LTF_OP_MATRIX_DETERMINANT, { make(dt, { 3, 3, 3 }, s) }, &a, tol_of(dt));
        same("slogdet singular", LTF_OP_LOG_MATRIX_DETERMINANT, { make(dt, { 3, 3, 3 }, s) }, &a, tol_of(dt));
    }
    ltf_attrs a = attrs();
    same_error("inv non-square", LTF_OP_MATRIX_INVERSE, { rand_tensor(LTF_DTYPE_FLOAT64, { 3, 2 }) }, &a,
               "inv: 'input' must be a square matrix (or a batch of them), got shape (3, 2)");
    same_error("det int64", LTF_OP_MATRIX_DETERMINANT, { rand_tensor(LTF_DTYPE_INT64, { 2, 2 }) }, &a,
               "det: 'input' has dtype int64, expected float32 or float64");
    same_error("slogdet non-square", LTF_OP_LOG_MATRIX_DETERMINANT, { rand_tensor(LTF_DTYPE_FLOAT32, { 1, 2 }) }, &a);
    same_error("solve batch mismatch", LTF_OP_MATRIX_SOLVE,
               { rand_tensor(LTF_DTYPE_FLOAT64, { 2, 3, 3 }), rand_tensor(LTF_DTYPE_FLOAT64, { 3, 3, 1 }) }, &a,
               "solve: 'matrix' (.., n, n) and 'rhs' (.., n, k) must have the same batch dimensions and n, got "
               "(2, 3, 3) and (3, 3, 1)");
    same_error("solve n mismatch", LTF_OP_MATRIX_SOLVE,
               { rand_tensor(LTF_DTYPE_FLOAT64, { 3, 3 }), rand_tensor(LTF_DTYPE_FLOAT64, { 4, 1 }) }, &a);
    same_error("solve dtypes", LTF_OP_MATRIX_SOLVE,
               { rand_tensor(LTF_DTYPE_FLOAT64, { 3, 3 }), rand_tensor(LTF_DTYPE_FLOAT32, { 3, 1 }) }, &a,
               "solve: 'matrix' and 'rhs' must have the same dtype, got float64 and float32");
    same_error("solve rhs rank", LTF_OP_MATRIX_SOLVE,
               { rand_tensor(LTF_DTYPE_FLOAT64, { 3, 3 }), rand_tensor(LTF_DTYPE_FLOAT64, { 3 }) }, &a);
}

/* a triangular matrix (the other triangle 1e30: it must not be read) */
static Vec triangular(int64_t n, int lower) {
    Vec t = uniform(n, n);
    double c = 2 * sqrt((double)n) + 1;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
            double &x = t[(size_t)(i * n + j)];
            if (i == j) x = (rnd() & 1 ? 1 : -1) * (c + uni());
            else if ((j > i) == (lower != 0)) x = 1e30;
        }
    return t;
}

static void test_triangular_solve() {
    char w[160];
    struct { Dims a, b; } shapes[] = {
        { { 1, 1 }, { 1, 1 } },       { { 4, 4 }, { 4, 3 } },          { { 2, 1, 5, 5 }, { 3, 5, 2 } },
        { { 6, 6 }, { 2, 3, 6, 1 } }, { { 3, 16, 16 }, { 3, 16, 4 } }, { { 64, 64 }, { 64, 2 } },
        { { 4, 4 }, { 4, 0 } },       { { 2, 0, 0 }, { 2, 0, 3 } },    { { 0, 3, 3 }, { 3, 2 } },
    };
    for (ltf_dtype dt : FLOATS)
        for (auto &s : shapes)
            for (int lower = 0; lower < 2; lower++)
                for (int adj = 0; adj < 2; adj++) {
                    int64_t n = s.a.back(), na = count(s.a) / (n > 0 ? n * n : 1);
                    if (n == 0) na = count(Dims(s.a.begin(), s.a.end() - 2));
                    ltf_attrs a = flags(lower, adj);
                    snprintf(w, sizeof w, "triangular_solve %s a %zu-d n %lld b %zu-d lower %d adjoint %d", dn(dt),
                             s.a.size(), (long long)n, s.b.size(), lower, adj);
                    same(w, LTF_OP_MATRIX_TRIANGULAR_SOLVE,
                         { make(dt, s.a, batch_of(na, [&] { return triangular(n, lower); })),
                           make(dt, s.b, uniform(count(s.b), 1)) },
                         &a, tol_of(dt));
                }
    for (ltf_dtype dt : FLOATS) {
        /* a zero on the diagonal: infinities (and NaN), as the CPU's trsm */
        ltf_attrs a = flags(1, 0);
        same("triangular_solve zero diagonal", LTF_OP_MATRIX_TRIANGULAR_SOLVE,
             { make(dt, { 2, 2 }, { 0, 0, 1, 1 }), make(dt, { 2, 2 }, { 1, 0, 1, 1 }) }, &a, tol_of(dt));
    }
    ltf_attrs a = flags(1, 0);
    same_error("triangular_solve n mismatch", LTF_OP_MATRIX_TRIANGULAR_SOLVE,
               { rand_tensor(LTF_DTYPE_FLOAT64, { 3, 3 }), rand_tensor(LTF_DTYPE_FLOAT64, { 4, 1 }) }, &a,
               "triangular_solve: 'matrix' (.., n, n) and 'rhs' (.., n, k) must have broadcastable batch dimensions "
               "and the same n, got (3, 3) and (4, 1)");
    same_error("triangular_solve batch", LTF_OP_MATRIX_TRIANGULAR_SOLVE,
               { rand_tensor(LTF_DTYPE_FLOAT64, { 2, 3, 3 }), rand_tensor(LTF_DTYPE_FLOAT64, { 3, 3, 1 }) }, &a);
    same_error("triangular_solve non-square", LTF_OP_MATRIX_TRIANGULAR_SOLVE,
               { rand_tensor(LTF_DTYPE_FLOAT32, { 3, 2 }), rand_tensor(LTF_DTYPE_FLOAT32, { 3, 1 }) }, &a);
    same_error("triangular_solve int32", LTF_OP_MATRIX_TRIANGULAR_SOLVE,
               { rand_tensor(LTF_DTYPE_INT32, { 3, 3 }), rand_tensor(LTF_DTYPE_INT32, { 3, 1 }) }, &a);
}

static void test_qr() {
    char w[160];
    struct { Dims batch; int64_t m, n; } shapes[] = {
        { {}, 1, 1 }, { {}, 5, 3 }, { {}, 3, 5 }, { {}, 4, 4 }, { { 2, 3 }, 6, 4 }, { { 2 }, 4, 6 },
        { {}, 40, 24 }, { {}, 24, 40 }, { {}, 0, 3 }, { {}, 3, 0 }, { { 0 }, 3, 2 }, { { 2 }, 0, 0 },
    };
    for (ltf_dtype dt : FLOATS)
        for (auto &s : shapes)
            for (int full = 0; full < 2; full++) {
                ltf_attrs a = flags(full);
                int64_t nb = count(s.batch);
                snprintf(w, sizeof w, "qr %s batch %lld %lld x %lld full %d", dn(dt), (long long)nb, (long long)s.m,
                         (long long)s.n, full);
                /* Q and R directly: the device keeps LAPACK's signs */
                same(w, LTF_OP_QR, { make(dt, mdims(s.batch, s.m, s.n), uniform(nb * s.m, s.n)) }, &a, tol_of(dt));
            }
    for (ltf_dtype dt : FLOATS)
        for (int full = 0; full < 2; full++) {
            /* already upper triangular, diagonal of both signs: no reflection, Q = I and R = a (tau = 0) */
            ltf_attrs a = flags(full);
            Vec x = { -2, 1, 3, 0, 0, 5, -1, 0, 0, 0, -4, 2 };
            Run cpu, dev;
            ltf_tensor *t = make(dt, { 3, 4 }, x);
            if (both("qr triangular", LTF_OP_QR, { t }, &a, cpu, dev)) {
                near("qr triangular q", { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, get(dev.out[0]), 0);
                near("qr triangular r", x, get(dev.out[1]), 0);
                near("qr triangular q vs cpu", get(cpu.out[0]), get(dev.out[0]), 0);
            }
            drop(cpu);
            drop(dev);
            /* a zero column */
            same("qr zero column", LTF_OP_QR, { make(dt, { 3, 3 }, { 1, 0, 2, 3, 0, 1, -1, 0, 4 }) }, &a, tol_of(dt));
        }
    ltf_attrs a = attrs();
    same_error("qr int32", LTF_OP_QR, { rand_tensor(LTF_DTYPE_INT32, { 3, 3 }) }, &a,
               "qr: 'input' has dtype int32, expected float32 or float64");
    same_error("qr rank 1", LTF_OP_QR, { rand_tensor(LTF_DTYPE_FLOAT64, { 3 }) }, &a);
}

static void test_eigh() {
    char w[160];
    ltf_attrs a = attrs();
    for (ltf_dtype dt : FLOATS)
        for (auto &c : SQUARE) {
            int64_t n = c.n, nb = count(c.batch);
            /* separated eigenvalues: vectors compared up to sign; the upper triangle is junk */
            Vec x = batch_of(nb, [&] {
                Vec s = with_eigen(n, spaced(n, -(double)n / 2));
                for (int64_t i = 0; i < n; i++)
                    for (int64_t j = i + 1; j < n; j++) s[(size_t)(i * n + j)] = 7 * uni();
                return s;
            });
            snprintf(w, sizeof w, "eigh %s batch %lld n %lld", dn(dt), (long long)nb, (long long)n);
            Run cpu, dev;
            if (both(w, LTF_OP_SELF_ADJOINT_EIG, { make(dt, mdims(c.batch, n, n), x) }, &a, cpu, dev)) {
                Vec e = get(cpu.out[0]);
                double emax = 1, gap = 1;
                for (int64_t b = 0; b < nb; b++)
                    for (int64_t i = 0; i < n; i++) {
                        emax = fmax(emax, fabs(e[(size_t)(b * n + i)]));
                        if (i > 0) gap = fmin(gap, e[(size_t)(b * n + i)] - e[(size_t)(b * n + i - 1)]);
                    }
                near(w, e, get(dev.out[0]), tol_of(dt));
                near_cols(w, get(cpu.out[1]), get(dev.out[1]), nb, n, n, n, tol_of(dt) * emax / gap);
                /* the device's own: ascending, orthonormal, signs as documented */
                Vec ed = get(dev.out[0]), vd = get(dev.out[1]);
                orthonormal(w, vd, nb, n, n, rec_tol(dt));
                for (int64_t b = 0; b < nb; b++)
                    for (int64_t j = 1; j < n; j++) CHECK(ed[(size_t)(b * n + j)] >= ed[(size_t)(b * n + j - 1)]);
                signs_fixed(w, vd, nb, n, n);
            }
            drop(cpu);
            drop(dev);
        }
    for (ltf_dtype dt : FLOATS) {
        /* random symmetric, and repeated eigenvalues: values, and the device's reconstruction */
        for (int rep = 0; rep < 2; rep++) {
            const int64_t n = 6, nb = 3;
            Vec x = batch_of(nb, [&] {
                if (rep) return with_eigen(n, { -1, 2, 2, 2, 5, 5 });
                Vec s = uniform(n, n);
                for (int64_t i = 0; i < n; i++)
                    for (int64_t j = 0; j < i; j++) s[(size_t)(j * n + i)] = s[(size_t)(i * n + j)];
                return s;
            });
            snprintf(w, sizeof w, "eigh %s %s", dn(dt), rep ? "repeated" : "random");
            Run cpu, dev;
            if (both(w, LTF_OP_SELF_ADJOINT_EIG, { make(dt, { nb, n, n }, x) }, &a, cpu, dev)) {
                near(w, get(cpu.out[0]), get(dev.out[0]), tol_of(dt));
                Vec v = get(dev.out[1]);
                orthonormal(w, v, nb, n, n, rec_tol(dt));
                reconstructs(w, x, v, get(dev.out[0]), v, nb, n, n, n, n, n, rec_tol(dt) * 10);
            }
            drop(cpu);
            drop(dev);
        }
        /* NaN in the lower triangle: NaN everywhere (the CPU's too); in the upper one: not read */
        same("eigh NaN", LTF_OP_SELF_ADJOINT_EIG, { make(dt, { 2, 2 }, { 1, 0, NAN, 1 }) }, &a, 0);
        same("eigh NaN above", LTF_OP_SELF_ADJOINT_EIG, { make(dt, { 2, 2 }, { 2, NAN, 0, 1 }) }, &a, tol_of(dt));
        same("eigh 1x1", LTF_OP_SELF_ADJOINT_EIG, { make(dt, { 3, 1, 1 }, { -3, 0, 4 }) }, &a, 0);
    }
    same_error("eigh non-square", LTF_OP_SELF_ADJOINT_EIG, { rand_tensor(LTF_DTYPE_FLOAT64, { 2, 3 }) }, &a,
               "eigh: 'tensor' must be a square matrix (or a batch of them), got shape (2, 3)");
    same_error("eigh uint8", LTF_OP_SELF_ADJOINT_EIG, { rand_tensor(LTF_DTYPE_UINT8, { 2, 2 }) }, &a);
}

static void test_svd() {
    char w[192];
    struct { Dims batch; int64_t m, n; } shapes[] = {
        { {}, 1, 1 }, { {}, 4, 4 }, { {}, 6, 3 }, { {}, 3, 6 }, { { 2 }, 5, 4 }, { { 2 }, 4, 5 },
        { {}, 40, 24 }, { {}, 24, 40 }, { {}, 1, 5 }, { { 0 }, 3, 2 },
    };
    for (ltf_dtype dt : FLOATS)
        for (auto &s : shapes)
            for (int full = 0; full < 2; full++)
                for (int uv = 0; uv < 2; uv++) {
                    ltf_attrs a = flags(full, uv);
                    int64_t m = s.m, n = s.n, p = m < n ? m : n, nb = count(s.batch);
                    int64_t uc = full ? m : p, vc = full ? n : p;
                    Vec x = batch_of(nb, [&] {
                        Vec sv = spaced(p, 0.5);
                        return with_svals(m, n, Vec(sv.rbegin(), sv.rend()));
                    });
                    snprintf(w, sizeof w, "svd %s batch %lld %lld x %lld full %d uv %d", dn(dt), (long long)nb,
                             (long long)m, (long long)n, full, uv);
                    Run cpu, dev;
                    if (!both(w, LTF_OP_SVD, { make(dt, mdims(s.batch, m, n), x) }, &a, cpu, dev)) {
                        drop(cpu);
                        drop(dev);
                        continue;
                    }
                    Vec sc = get(cpu.out[0]), sd = get(dev.out[0]);
                    near(w, sc, sd, tol_of(dt));
                    if (uv) {
                        double smax = 1, gap = 1;
                        for (int64_t b = 0; b < nb; b++)
                            for (int64_t i = 0; i < p; i++) {
                                smax = fmax(smax, sc[(size_t)(b * p + i)]);
                                if (i > 0) gap = fmin(gap, sc[(size_t)(b * p + i - 1)] - sc[(size_t)(b * p + i)]);
                            }
                        gap = fmin(gap, sc.empty() ? 1 : sc.back());   /* vectors also move with the smallest value */
                        Vec ud = get(dev.out[1]), vd = get(dev.out[2]);
                        near_cols(w, get(cpu.out[1]), ud, nb, m, uc, p, tol_of(dt) * smax / gap);
                        near_cols(w, get(cpu.out[2]), vd, nb, n, vc, p, tol_of(dt) * smax / gap);
                        signs_fixed(w, ud, nb, m, uc);
                        orthonormal(w, ud, nb, m, uc, rec_tol(dt));
                        orthonormal(w, vd, nb, n, vc, rec_tol(dt));
                        reconstructs(w, x, ud, sd, vd, nb, m, n, uc, vc, p, rec_tol(dt) * 10);
                    }
                    drop(cpu);
                    drop(dev);
                }
    for (ltf_dtype dt : FLOATS)
        for (int full = 0; full < 2; full++) {
            ltf_attrs a = flags(full, 1);
            /* rank-deficient: random, rank 1, zero, zero rows: values, and the device's
            ** completed bases (orthonormal) and reconstruction */
            struct { int64_t m, n; int kind; } cases[] = { { 5, 4, 0 }, { 4, 6, 0 }, { 5, 4, 1 }, { 3, 3, 2 }, { 4, 6, 3 } };
            for (auto &c : cases) {
                int64_t m = c.m, n = c.n, p = m < n ? m : n, uc = full ? m : p, vc = full ? n : p;
                Vec x = uniform(m, n);
                if (c.kind == 1) {
                    Vec u = uniform(m, 1), v = uniform(n, 1);
                    for (int64_t i = 0; i < m; i++)
                        for (int64_t j = 0; j < n; j++) x[(size_t)(i * n + j)] = u[(size_t)i] * v[(size_t)j];
                }
                if (c.kind == 2) x.assign(x.size(), 0.0);
                if (c.kind == 3)
                    for (int64_t j = 0; j < n; j++) x[(size_t)(1 * n + j)] = x[(size_t)(3 * n + j)] = 0;
                snprintf(w, sizeof w, "svd %s %lld x %lld kind %d full %d", dn(dt), (long long)m, (long long)n, c.kind,
                         full);
                Run cpu, dev;
                if (both(w, LTF_OP_SVD, { make(dt, { m, n }, x) }, &a, cpu, dev)) {
                    near(w, get(cpu.out[0]), get(dev.out[0]), tol_of(dt));
                    Vec ud = get(dev.out[1]), vd = get(dev.out[2]);
                    orthonormal(w, ud, 1, m, uc, rec_tol(dt));
                    orthonormal(w, vd, 1, n, vc, rec_tol(dt));
                    reconstructs(w, x, ud, get(dev.out[0]), vd, 1, m, n, uc, vc, p, rec_tol(dt) * 10);
                }
                drop(cpu);
                drop(dev);
            }
            /* min(m, n) = 0: identities; NaN: NaN everywhere */
            same("svd 0 x 3", LTF_OP_SVD, { zeros(dt, { 0, 3 }) }, &a, 0);
            same("svd 3 x 0", LTF_OP_SVD, { zeros(dt, { 2, 3, 0 }) }, &a, 0);
            same("svd NaN", LTF_OP_SVD, { make(dt, { 2, 3 }, { 1, 2, NAN, 4, 5, 6 }) }, &a, 0);
            ltf_attrs s_only = flags(full, 0);
            same("svd NaN, values only", LTF_OP_SVD, { make(dt, { 2, 2 }, { 1, 2, 3, NAN }) }, &s_only, 0);
        }
    ltf_attrs a = flags(0, 1);
    same_error("svd int32", LTF_OP_SVD, { rand_tensor(LTF_DTYPE_INT32, { 3, 3 }) }, &a,
               "svd: 'tensor' has dtype int32, expected float32 or float64");
    same_error("svd rank 1", LTF_OP_SVD, { rand_tensor(LTF_DTYPE_FLOAT32, { 3 }) }, &a);
}

int main(void) {
    ctx = ltf_ctx_new();
    for (ltf_op_id op : { LTF_OP_CHOLESKY, LTF_OP_MATRIX_INVERSE, LTF_OP_MATRIX_DETERMINANT, LTF_OP_LOG_MATRIX_DETERMINANT,
                          LTF_OP_MATRIX_SOLVE, LTF_OP_MATRIX_TRIANGULAR_SOLVE, LTF_OP_QR, LTF_OP_SVD,
                          LTF_OP_SELF_ADJOINT_EIG })
        CHECK(ltf_gpu_host_kernel(op) != NULL);
    test_cholesky();
    test_lu();
    test_triangular_solve();
    test_qr();
    test_eigh();
    test_svd();
    ltf_ctx_release(ctx);
    CHECK_DONE();
}
