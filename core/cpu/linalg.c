/*
** cpu/linalg.c: CPU kernels of the linear-algebra ops. Factorizations call
** LAPACK's Fortran routines that OpenBLAS exports (potrf, getrf, getri,
** getrs, geqrf, orgqr, gesdd, syevd; trsm from its CBLAS): no hand-written
** factorization. The prototypes are declared in blas_lib.h, with the
** hidden string-length arguments gfortran passes for CHARACTER arguments,
** rather than pulling in LAPACKE: one library (OpenBLAS, loaded on the
** first kernel that needs it), no extra row-major copies that LAPACKE's
** wrappers make.
**
** Row-major (ours) vs column-major (LAPACK): a row-major n x n buffer is
** the column-major transpose, so symmetric inputs go in as they are (their
** row-major lower triangle is LAPACK's upper one), inverses and
** determinants of the transpose give what we need, and the other results
** are transposed on the way out. Batches run one matrix after the other on
** the calling thread; OpenBLAS threads inside each LAPACK call (never
** nested in the context's pool).
*/
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"
#include "blas_lib.h"
#include "../shape.h"

/* {==== LAPACK (Fortran symbols of OpenBLAS, blas_lib.h's table, loaded on
** first use): each kernel loads the table into a local 'blas' first. */
#define LAPACK(f64, name) (blas->name[(f64) ? 1 : 0])
#define LOAD_BLAS(ctx, def)                                                  \
    const ltf_blas_lib *blas;                                                \
    do {                                                                     \
        ltf_status load_st_ = ltf_blas_lib_load((ctx), (def)->name, &blas);  \
        if (load_st_ != LTF_OK) return load_st_;                             \
    } while (0)
/* }==== */

/* {==== Helpers */
static double get(const void *p, int64_t i, int f64) { return f64 ? ((const double *)p)[i] : ((const float *)p)[i]; }
static void set(void *p, int64_t i, double v, int f64) {
    if (f64) ((double *)p)[i] = v;
    else ((float *)p)[i] = (float)v;
}

/* dst (cols x rows) = src (rows x cols)^T, both row-major, 'es'-byte elements */
static void transpose_copy(void *dst, const void *src, int64_t rows, int64_t cols, size_t es) {
    if (es == 8) {
        const double *s = src;
        double *d = dst;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) d[j * rows + i] = s[i * cols + j];
    } else if (es == 4) {
        const float *s = src;
        float *d = dst;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) d[j * rows + i] = s[i * cols + j];
    } else {
        const char *s = src;
        char *d = dst;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) memcpy(d + (size_t)(j * rows + i) * es, s + (size_t)(i * cols + j) * es, es);
    }
}

/* Matrices of 'x' (rank >= 2): count and the last two dims. */
static int64_t batch_of(const ltf_tensor *x, int64_t *m, int64_t *n) {
    *m = x->dims[x->rank - 2];
    *n = x->dims[x->rank - 1];
    int64_t b = 1;
    for (int i = 0; i < x->rank - 2; i++) b *= x->dims[i];
    return b;
}

static ltf_status too_large(ltf_ctx *ctx, const ltf_op_def *def, int64_t m, int64_t n) {
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: matrix of %lld x %lld is too large for LAPACK", def->name,
                    (long long)m, (long long)n);
}
/* LAPACK's int indexing: an m x n array (and its workspaces) fits in an int */
static int fits(int64_t m, int64_t n) { return m <= INT_MAX && n <= INT_MAX && m * n <= INT_MAX / 4; }

/* A workspace size LAPACK reported (as a float) with room to spare. */
static int work_size(const void *w, int f64) {
    double v = get(w, 0, f64);
    return v < 1 ? 1 : v > (double)INT_MAX / 2 ? INT_MAX / 2 : (int)v + 1;
}

static ltf_status lapack_error(ltf_ctx *ctx, const ltf_op_def *def, const char *routine, int info) {
    return ltf_fail(ctx, LTF_ERR_INTERNAL, "%s: LAPACK %s rejected argument %d", def->name, routine, -info);
}

/* One allocation for a kernel's scratch buffers; NULL sets the error. */
static void *scratch(ltf_ctx *ctx, const ltf_op_def *def, size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) ltf_fail_oom(ctx, def->name, bytes);
    return p;
}
/* }==== */

/* {==== cholesky, inv, det/slogdet */
ltf_status ltf_cpu_linalg_cholesky(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                   const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    int64_t m, n, batch = batch_of(in[0], &m, &n);
    if (!fits(n, n)) return too_large(ctx, def, n, n);
    LOAD_BLAS(ctx, def);
    int f64 = in[0]->dtype == LTF_DTYPE_FLOAT64, N = (int)n, info = 0;
    size_t es = ltf_dtype_size(in[0]->dtype), mat = (size_t)(n * n);
    const char *x = LTF_DATA(in[0]);
    char *o = LTF_DATA(out[0]);
    if (n == 0) return LTF_OK;
    memcpy(o, x, mat * es * (size_t)batch);
    for (int64_t b = 0; b < batch; b++) {
        char *p = o + b * mat * es;
        LAPACK(f64, potrf)("U", &N, p, &N, &info, 1);
        if (info > 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: Cholesky decomposition was not successful. The input might not be valid.", def->name);
        if (info < 0) return lapack_error(ctx, def, "potrf", info);
        for (int64_t i = 0; i < n; i++) memset(p + (size_t)(i * n + i + 1) * es, 0, (size_t)(n - i - 1) * es);
    }
    return LTF_OK;
}

ltf_status ltf_cpu_linalg_inv(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    int64_t m, n, batch = batch_of(in[0], &m, &n);
    if (!fits(n, n)) return too_large(ctx, def, n, n);
    LOAD_BLAS(ctx, def);
    int f64 = in[0]->dtype == LTF_DTYPE_FLOAT64, N = (int)n, info = 0, lwork = -1;
    size_t es = ltf_dtype_size(in[0]->dtype), mat = (size_t)(n * n);
    char *o = LTF_DATA(out[0]);
    if (n == 0) return LTF_OK;
    double q[2];
    int *ipiv = scratch(ctx, def, sizeof(int) * (size_t)n);
    if (!ipiv) return ctx->last_status;
    LAPACK(f64, getri)(&N, o, &N, ipiv, q, &lwork, &info);
    lwork = work_size(q, f64);
    void *work = scratch(ctx, def, (size_t)lwork * es);
    ltf_status st = work ? LTF_OK : ctx->last_status;
    if (st == LTF_OK) memcpy(o, LTF_DATA(in[0]), mat * es * (size_t)batch);
    /* a row-major buffer is the transpose: getrf/getri of a^T give inv(a)^T
    ** in column-major, which reads as inv(a) in row-major */
    for (int64_t b = 0; st == LTF_OK && b < batch; b++) {
        char *p = o + b * mat * es;
        LAPACK(f64, getrf)(&N, &N, p, &N, ipiv, &info);
        if (info > 0) {
            st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: Input is not invertible.", def->name);
            break;
        }
        if (info == 0) LAPACK(f64, getri)(&N, p, &N, ipiv, work, &lwork, &info);
        if (info != 0) {
            st = lapack_error(ctx, def, "getrf/getri", info);
            break;
        }
        if (a->i[0])   /* adjoint: inv(a)^T */
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = i + 1; j < n; j++) {
                    double t = get(p, i * n + j, f64);
                    set(p, i * n + j, get(p, j * n + i, f64), f64);
                    set(p, j * n + i, t, f64);
                }
    }
    free(work);
    free(ipiv);
    return st;
}

/* det (code 0) and slogdet (code 1) from an LU factorization: a singular
** matrix gives 0 (sign 0, log|det| -inf), as TensorFlow's. */
ltf_status ltf_cpu_linalg_det(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    int64_t m, n, batch = batch_of(in[0], &m, &n);
    if (!fits(n, n)) return too_large(ctx, def, n, n);
    LOAD_BLAS(ctx, def);
    int f64 = in[0]->dtype == LTF_DTYPE_FLOAT64, N = (int)n, info = 0, slog = def->code == 1;
    size_t es = ltf_dtype_size(in[0]->dtype), mat = (size_t)(n * n);
    char *lu = scratch(ctx, def, mat * es + sizeof(int) * (size_t)n);
    if (!lu) return ctx->last_status;
    int *ipiv = (int *)(lu + mat * es);
    const char *x = LTF_DATA(in[0]);
    ltf_status st = LTF_OK;
    for (int64_t b = 0; b < batch; b++) {
        double sign = 1, logabs = 0, prod = 1;
        if (n > 0) {
            memcpy(lu, x + b * mat * es, mat * es);
            LAPACK(f64, getrf)(&N, &N, lu, &N, ipiv, &info);
            if (info < 0) {
                st = lapack_error(ctx, def, "getrf", info);
                break;
            }
            for (int64_t i = 0; i < n; i++) {
                double d = get(lu, i * n + i, f64);
                if (ipiv[i] != i + 1) sign = -sign;
                if (d < 0) sign = -sign;
                logabs += log(fabs(d));
                prod *= d;
            }
            if (info > 0) sign = 0, logabs = -INFINITY, prod = 0;
        }
        if (slog) {
            set(LTF_DATA(out[0]), b, sign, f64);
            set(LTF_DATA(out[1]), b, logabs, f64);
        } else {
            int swaps = 0;
            for (int64_t i = 0; n > 0 && i < n; i++) swaps += ipiv[i] != i + 1;
            set(LTF_DATA(out[0]), b, (swaps & 1) ? -prod : prod, f64);
        }
    }
    free(lu);
    return st;
}
/* }==== */

/* {==== solve, triangular_solve */
ltf_status ltf_cpu_linalg_solve(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    int64_t m, n, k, batch = batch_of(in[0], &m, &n);
    batch_of(in[1], &m, &k);
    if (!fits(n, n) || !fits(n, k)) return too_large(ctx, def, n, k);
    LOAD_BLAS(ctx, def);
    int f64 = in[0]->dtype == LTF_DTYPE_FLOAT64, N = (int)n, K = (int)k, info = 0;
    size_t es = ltf_dtype_size(in[0]->dtype), mat = (size_t)(n * n), rhs = (size_t)(n * k);
    if (n == 0 || k == 0) return LTF_OK;
    char *lu = scratch(ctx, def, (mat + rhs) * es + sizeof(int) * (size_t)n);
    if (!lu) return ctx->last_status;
    char *bt = lu + mat * es;
    int *ipiv = (int *)(bt + rhs * es);
    const char *A = LTF_DATA(in[0]), *B = LTF_DATA(in[1]);
    char *o = LTF_DATA(out[0]);
    ltf_status st = LTF_OK;
    for (int64_t b = 0; b < batch; b++) {
        /* lu holds a^T (column-major view): solve a x = b is trans 'T' */
        memcpy(lu, A + b * mat * es, mat * es);
        transpose_copy(bt, B + b * rhs * es, n, k, es);
        LAPACK(f64, getrf)(&N, &N, lu, &N, ipiv, &info);
        if (info > 0) {
            st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: Input matrix is not invertible.", def->name);
            break;
        }
        if (info == 0) LAPACK(f64, getrs)(a->i[0] ? "N" : "T", &N, &K, lu, &N, ipiv, bt, &N, &info, 1);
        if (info != 0) {
            st = lapack_error(ctx, def, "getrf/getrs", info);
            break;
        }
        transpose_copy(o + b * rhs * es, bt, k, n, es);
    }
    free(lu);
    return st;
}

/* BLAS trsm on the row-major operands (reads one triangle; a zero on the
** diagonal gives infinities, as TensorFlow's). */
ltf_status ltf_cpu_linalg_triangular_solve(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                           const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *A = in[0], *B = in[1];
    ltf_tensor *o = out[0];
    int64_t m, n, k, batch = batch_of(o, &n, &k);
    batch_of(A, &m, &n);
    if (!fits(n, n) || !fits(n, k)) return too_large(ctx, def, n, k);
    LOAD_BLAS(ctx, def);
    int f64 = A->dtype == LTF_DTYPE_FLOAT64, rb = o->rank - 2;
    size_t es = ltf_dtype_size(A->dtype), mat = (size_t)(n * n), rhs = (size_t)(n * k);
    if (o->numel == 0) return LTF_OK;
    /* batch dims broadcast: strides in matrices (0 = broadcast) */
    int64_t sa[LTF_MAX_RANK], sb[LTF_MAX_RANK];
    ltf_broadcast_strides(A->rank - 2, A->dims, rb, o->dims, sa);
    ltf_broadcast_strides(B->rank - 2, B->dims, rb, o->dims, sb);
    const char *pa = LTF_DATA(A), *pb = LTF_DATA(B);
    char *po = LTF_DATA(o);
    enum CBLAS_UPLO up = a->i[0] ? CblasLower : CblasUpper;
    enum CBLAS_TRANSPOSE tr = a->i[1] ? CblasTrans : CblasNoTrans;
    for (int64_t b = 0; b < batch; b++) {
        int64_t oa = 0, ob = 0, rest = b;
        for (int d = rb - 1; d >= 0; d--) {
            int64_t idx = rest % o->dims[d];
            rest /= o->dims[d];
            oa += idx * sa[d];
            ob += idx * sb[d];
        }
        char *x = po + (size_t)b * rhs * es;
        memcpy(x, pb + (size_t)ob * rhs * es, rhs * es);
        if (n == 0) continue;
        if (f64)
            blas->dtrsm(CblasRowMajor, CblasLeft, up, tr, CblasNonUnit, (int)n, (int)k, 1.0,
                        (const double *)(pa + (size_t)oa * mat * es), (int)n, (double *)x, (int)k);
        else
            blas->strsm(CblasRowMajor, CblasLeft, up, tr, CblasNonUnit, (int)n, (int)k, 1.0f,
                        (const float *)(pa + (size_t)oa * mat * es), (int)n, (float *)x, (int)k);
    }
    return LTF_OK;
}
/* }==== */

/* {==== qr, svd, eigh */
/* out (rows x cols, row-major) = identity */
static void eye(void *o, int64_t rows, int64_t cols, int f64, size_t es) {
    memset(o, 0, (size_t)(rows * cols) * es);
    for (int64_t i = 0; i < rows && i < cols; i++) set(o, i * cols + i, 1, f64);
}

ltf_status ltf_cpu_linalg_qr(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    int64_t m, n, batch = batch_of(in[0], &m, &n);
    if (!fits(m, n) || (a->i[0] && !fits(m, m))) return too_large(ctx, def, m, n);
    LOAD_BLAS(ctx, def);
    int f64 = in[0]->dtype == LTF_DTYPE_FLOAT64, info = 0;
    int64_t k = m < n ? m : n, qc = a->i[0] ? m : k, cols = n > qc ? n : qc;
    size_t es = ltf_dtype_size(in[0]->dtype), mat = (size_t)(m * n);
    size_t qsz = (size_t)(m * qc), rsz = (size_t)(qc * n);
    char *Q = LTF_DATA(out[0]), *R = LTF_DATA(out[1]);
    const char *x = LTF_DATA(in[0]);
    if (k == 0) {   /* nothing to factor: q is the identity (or empty), r zeros */
        for (int64_t b = 0; b < batch; b++) eye(Q + b * qsz * es, m, qc, f64, es);
        memset(R, 0, rsz * es * (size_t)batch);
        return LTF_OK;
    }
    int Mi = (int)m, Ni = (int)n, Ki = (int)k, QC = (int)qc, lwork = -1, l2 = -1;
    double q1[2], q2[2];
    char *buf = scratch(ctx, def, (size_t)(m * cols + k) * es);
    if (!buf) return ctx->last_status;
    char *tau = buf + (size_t)(m * cols) * es;
    LAPACK(f64, geqrf)(&Mi, &Ni, buf, &Mi, tau, q1, &lwork, &info);
    LAPACK(f64, orgqr)(&Mi, &QC, &Ki, buf, &Mi, tau, q2, &l2, &info);
    lwork = work_size(q1, f64);
    if (work_size(q2, f64) > lwork) lwork = work_size(q2, f64);
    void *work = scratch(ctx, def, (size_t)lwork * es);
    ltf_status st = work ? LTF_OK : ctx->last_status;
    for (int64_t b = 0; st == LTF_OK && b < batch; b++) {
        transpose_copy(buf, x + b * mat * es, m, n, es);   /* column-major a, lda = m */
        LAPACK(f64, geqrf)(&Mi, &Ni, buf, &Mi, tau, work, &lwork, &info);
        if (info != 0) {
            st = lapack_error(ctx, def, "geqrf", info);
            break;
        }
        char *r = R + b * rsz * es;
        for (int64_t i = 0; i < qc; i++)
            for (int64_t j = 0; j < n; j++) set(r, i * n + j, i <= j ? get(buf, j * m + i, f64) : 0, f64);
        LAPACK(f64, orgqr)(&Mi, &QC, &Ki, buf, &Mi, tau, work, &lwork, &info);
        if (info != 0) {
            st = lapack_error(ctx, def, "orgqr", info);
            break;
        }
        transpose_copy(Q + b * qsz * es, buf, qc, m, es);
    }
    free(work);
    free(buf);
    return st;
}

/* gesdd on the column-major copy of a: a = U S VT; u (m x uc) is U
** transposed on the way out, v (n x vc) is VT's buffer as it is. */
ltf_status ltf_cpu_linalg_svd(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    int64_t m, n, batch = batch_of(in[0], &m, &n);
    if (!fits(m, n) || (a->i[0] && (!fits(m, m) || !fits(n, n)))) return too_large(ctx, def, m, n);
    LOAD_BLAS(ctx, def);
    int f64 = in[0]->dtype == LTF_DTYPE_FLOAT64, full = a->i[0] != 0, uv = a->i[1] != 0, info = 0;
    int64_t p = m < n ? m : n, uc = full ? m : p, vc = full ? n : p;
    size_t es = ltf_dtype_size(in[0]->dtype), mat = (size_t)(m * n);
    const char *x = LTF_DATA(in[0]);
    char *S = LTF_DATA(out[0]), *Uo = uv ? LTF_DATA(out[1]) : NULL, *Vo = uv ? LTF_DATA(out[2]) : NULL;
    if (p == 0) {
        for (int64_t b = 0; uv && b < batch; b++) {
            eye(Uo + (size_t)(b * m * uc) * es, m, uc, f64, es);
            eye(Vo + (size_t)(b * n * vc) * es, n, vc, f64, es);
        }
        return LTF_OK;
    }
    int Mi = (int)m, Ni = (int)n, ldu = uv ? (int)m : 1, ldvt = uv ? (int)vc : 1, lwork = -1;
    const char *jobz = !uv ? "N" : full ? "A" : "S";
    size_t usz = uv ? (size_t)(m * uc) : 1, vsz = uv ? (size_t)(vc * n) : 1;
    char *buf = scratch(ctx, def, (mat + usz + vsz) * es + sizeof(int) * (size_t)(8 * p));
    if (!buf) return ctx->last_status;
    char *U = buf + mat * es, *VT = U + usz * es;
    int *iwork = (int *)(VT + vsz * es);
    double q[2];
    LAPACK(f64, gesdd)(jobz, &Mi, &Ni, buf, &Mi, S, U, &ldu, VT, &ldvt, q, &lwork, iwork, &info, 1);
    lwork = work_size(q, f64);
    void *work = scratch(ctx, def, (size_t)lwork * es);
    ltf_status st = work ? LTF_OK : ctx->last_status;
    for (int64_t b = 0; st == LTF_OK && b < batch; b++) {
        transpose_copy(buf, x + b * mat * es, m, n, es);
        /* a NaN or an infinity in the input: NaN results, as TensorFlow's,
        ** without calling gesdd (which prints a complaint about a NaN on
        ** stderr, and never returns on some infinities: libFuzzer found it) */
        info = 0;
        for (size_t i = 0; i < mat && !info; i++) info = isfinite(get(buf, (int64_t)i, f64)) ? 0 : -4;
        if (!info)
            LAPACK(f64, gesdd)(jobz, &Mi, &Ni, buf, &Mi, S + (size_t)(b * p) * es, U, &ldu, VT, &ldvt, work, &lwork,
                               iwork, &info, 1);
        if (info > 0) {
            st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: SVD did not converge. The input might not be valid.",
                          def->name);
            break;
        }
        if (info == -4) {   /* not finite: NaN results */
            for (int64_t i = 0; i < p; i++) set(S, b * p + i, NAN, f64);
            for (int64_t i = 0; uv && i < m * uc; i++) set(Uo, b * m * uc + i, NAN, f64);
            for (int64_t i = 0; uv && i < n * vc; i++) set(Vo, b * n * vc + i, NAN, f64);
            continue;
        }
        if (info < 0) {
            st = lapack_error(ctx, def, "gesdd", info);
            break;
        }
        if (uv) {
            transpose_copy(Uo + (size_t)(b * m * uc) * es, U, uc, m, es);
            memcpy(Vo + (size_t)(b * n * vc) * es, VT, vsz * es);
        }
    }
    free(work);
    free(buf);
    return st;
}

ltf_status ltf_cpu_linalg_eigh(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    int64_t m, n, batch = batch_of(in[0], &m, &n);
    if (!fits(n, n)) return too_large(ctx, def, n, n);
    LOAD_BLAS(ctx, def);
    if (n == 0) return LTF_OK;
    int f64 = in[0]->dtype == LTF_DTYPE_FLOAT64, N = (int)n, info = 0, lwork = -1, liwork = -1, iq = 0;
    size_t es = ltf_dtype_size(in[0]->dtype), mat = (size_t)(n * n);
    double q[2];
    char *buf = scratch(ctx, def, mat * es);
    if (!buf) return ctx->last_status;
    LAPACK(f64, syevd)("V", "U", &N, buf, &N, LTF_DATA(out[0]), q, &lwork, &iq, &liwork, &info, 1, 1);
    lwork = work_size(q, f64);
    liwork = iq < 1 ? 1 : iq;
    char *work = scratch(ctx, def, (size_t)lwork * es + sizeof(int) * (size_t)liwork);
    ltf_status st = work ? LTF_OK : ctx->last_status;
    const char *x = LTF_DATA(in[0]);
    char *E = LTF_DATA(out[0]), *V = LTF_DATA(out[1]);
    for (int64_t b = 0; st == LTF_OK && b < batch; b++) {
        memcpy(buf, x + b * mat * es, mat * es);   /* row-major lower = column-major upper */
        int has_nan = 0;   /* syevd does not check: NaN or infinity in, NaN out (as svd) */
        for (int64_t i = 0; i < n && !has_nan; i++)
            for (int64_t j = 0; j <= i; j++) has_nan |= !isfinite(get(buf, i * n + j, f64));
        if (has_nan) {
            for (int64_t i = 0; i < n; i++) set(E, b * n + i, NAN, f64);
            for (int64_t i = 0; i < n * n; i++) set(V, b * n * n + i, NAN, f64);
            continue;
        }
        LAPACK(f64, syevd)("V", "U", &N, buf, &N, E + (size_t)(b * n) * es, work, &lwork,
                           (int *)(work + (size_t)lwork * es), &liwork, &info, 1, 1);
        if (info > 0) {
            st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                          "%s: Eigen decomposition was not successful. The input might not be valid.", def->name);
            break;
        }
        if (info < 0) {
            st = lapack_error(ctx, def, "syevd", info);
            break;
        }
        transpose_copy(V + b * mat * es, buf, n, n, es);   /* eigenvector j: column j */
    }
    free(work);
    free(buf);
    return st;
}
/* }==== */

/* {==== band_part, diag, diag_part, matrix_transpose (any dtype but string) */
ltf_status ltf_cpu_linalg_band_part(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                    const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)ctx; (void)def; (void)nin; (void)nout;
    int64_t m, n, batch = batch_of(in[0], &m, &n), lo = a->i[0], up = a->i[1];
    size_t es = ltf_dtype_size(in[0]->dtype);
    const char *x = LTF_DATA(in[0]);
    char *o = LTF_DATA(out[0]);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < m; i++) {
            size_t row = (size_t)((b * m + i) * n) * es;
            for (int64_t j = 0; j < n; j++) {
                int keep = (lo < 0 || i - j <= lo) && (up < 0 || j - i <= up);
                if (keep) memcpy(o + row + (size_t)j * es, x + row + (size_t)j * es, es);
                else memset(o + row + (size_t)j * es, 0, es);
            }
        }
    return LTF_OK;
}

ltf_status ltf_cpu_linalg_diag(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)nin; (void)a; (void)nout;
    const ltf_tensor *d = in[0], *o = out[0];
    int64_t r = o->dims[o->rank - 2], c = o->dims[o->rank - 1], k = d->dims[d->rank - 1];
    if (k != (r < c ? r : c))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: a diagonal of %lld entries does not fit a %lld x %lld matrix", def->name, (long long)k,
                        (long long)r, (long long)c);
    size_t es = ltf_dtype_size(d->dtype);
    int64_t batch = k > 0 ? d->numel / k : 0;
    const char *x = LTF_DATA(d);
    char *p = LTF_DATA(o);
    memset(p, 0, (size_t)o->numel * es);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < k; i++) memcpy(p + (size_t)(b * r * c + i * c + i) * es, x + (size_t)(b * k + i) * es, es);
    return LTF_OK;
}

ltf_status ltf_cpu_linalg_diag_part(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                    const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)ctx; (void)def; (void)nin; (void)a; (void)nout;
    int64_t m, n, batch = batch_of(in[0], &m, &n), k = m < n ? m : n;
    size_t es = ltf_dtype_size(in[0]->dtype);
    const char *x = LTF_DATA(in[0]);
    char *o = LTF_DATA(out[0]);
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < k; i++) memcpy(o + (size_t)(b * k + i) * es, x + (size_t)(b * m * n + i * n + i) * es, es);
    return LTF_OK;
}

ltf_status ltf_cpu_linalg_transpose(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                    const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)ctx; (void)def; (void)nin; (void)a; (void)nout;
    int64_t m, n, batch = batch_of(in[0], &m, &n);
    size_t es = ltf_dtype_size(in[0]->dtype), mat = (size_t)(m * n) * es;
    const char *x = LTF_DATA(in[0]);
    char *o = LTF_DATA(out[0]);
    for (int64_t b = 0; b < batch; b++) transpose_copy(o + b * mat, x + b * mat, m, n, es);
    return LTF_OK;
}
/* }==== */
