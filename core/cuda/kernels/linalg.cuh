/*
** cuda/kernels/linalg.cuh: the factorizations of ltf_ops/linalg.h on the
** device (cholesky, inv, det, slogdet, solve, triangular_solve, qr, svd,
** eigh): cuSOLVER is not used (docs/cuda.md says why), so the bodies are
** written here, batched for the common case of many small matrices:
**
**   one index per matrix (triangular_solve: per matrix and right-hand
**   column), working in a scratch copy in device memory with the batch's
**   matrices interleaved (element k of matrix b at w[k * batch + b], so
**   neighbouring threads touch neighbouring words);
**   float64 arithmetic for both dtypes (float32 is read, factored in
**   double and rounded once on the way out: closer to the exact result
**   than the CPU's float32 LAPACK, within the specs' tolerances of it);
**
**   cholesky       the lower factor, row by row; a pivot <= 0 raises the
**                  CPU's error (a NaN pivot propagates, as OpenBLAS's potrf)
**   inv, det,      LU with partial pivoting (LAPACK's getf2) of a^T, as
**   slogdet, solve cpu/linalg.c factors the row-major buffer: LAPACK's
**                  pivoting rule and test for singularity (a pivot exactly 0)
**   triangular_    substitution reading one triangle; a zero on the diagonal
**   solve          gives infinities, as the CPU's trsm
**   qr             Householder (LAPACK's dlarfg/dgeqr2/dorg2r): beta =
**                  -sign(alpha) * norm, no reflection when the column below
**                  the diagonal is zero, so Q and R have LAPACK's signs
**   eigh           cyclic Jacobi on the symmetric matrix of the lower
**                  triangle; ascending eigenvalues; each eigenvector's
**                  largest component (the first of equal ones) positive
**   svd            one-sided Jacobi (Hestenes) on a, or on a^T when m < n;
**                  descending singular values; the columns of U (and with
**                  them V's) signed so that each column's largest component
**                  is positive; columns for zero singular values, and the
**                  extra ones of full_matrices, completed from the unit
**                  vectors (the one with the largest residual, in order)
**
** LAPACK does not specify eigenvector or singular vector signs, so the
** device's vectors equal the CPU's up to each column's sign. A NaN or an
** infinity in svd's or eigh's input gives NaN in every output (the CPU:
** NaN values; its vectors NaN for NaN, arbitrary for infinity); elsewhere
** NaN propagates through the arithmetic.
** The bodies compile with nvcc (device) and the host compiler; the host
** sides (LTF_CU_KERNEL) in the last section need ops.cuh's helpers, so
** ops.cuh includes this file after them.
*/
#ifndef LTF_CU_LINALG_CUH
#define LTF_CU_LINALG_CUH

#include "common.cuh"

namespace ltf_cu {

/* {==== Scratch: one matrix's words, interleaved with the batch's others */
struct LaMat {
    double *w;
    int64_t s;
    LTF_HD double &operator[](int64_t k) const { return w[k * s]; }
};
/* Matrix b's words from word 'off' of its scratch block (every matrix of
** the batch has a block of the same size; the blocks are interleaved) */
LTF_HD LaMat la_mat(double *base, int64_t off, int64_t batch, int64_t b) {
    LaMat m = { base + off * batch + b, batch };
    return m;
}

static const double LA_EPS = 2.220446049250313e-16;   /* DBL_EPSILON */
static const int LA_SWEEPS = 64;                       /* Jacobi sweeps before giving up */

/* 2-norm of 'n' words of 'x' from 'k0' step 'st', scaled (no overflow) */
LTF_HD double la_norm(const LaMat &x, int64_t k0, int64_t st, int64_t n) {
    double mx = 0;
    bool nan = false;
    for (int64_t i = 0; i < n; i++) {
        double a = fabs(x[k0 + i * st]);
        nan |= a != a;
        if (a > mx) mx = a;
    }
    if (nan) return NAN;
    if (mx == 0 || mx - mx != 0) return mx;   /* zero, or infinite */
    double s = 0;
    for (int64_t i = 0; i < n; i++) {
        double t = x[k0 + i * st] / mx;
        s += t * t;
    }
    return mx * sqrt(s);
}

/* The tangent of a Jacobi rotation annihilating the off-diagonal of
** [[a, g], [g, b]] (g != 0): t = sign(z) / (|z| + sqrt(1 + z^2)), z = (b - a) / 2g */
LTF_HD double la_jacobi_t(double a, double b, double g) {
    double z = (b - a) / (2 * g);
    if (fabs(z) > 1e150) return 0.5 / z;
    double t = 1 / (fabs(z) + sqrt(1 + z * z));
    return z < 0 ? -t : t;
}

/* Fill the missing columns (have[j] == 0) of the r x c matrix q (row-major)
** whose present columns are orthonormal, in order: each becomes the unit
** vector with the largest residual against every present column (the first
** such), orthogonalized against them twice and normalized, and is present
** from then on. Deterministic. */
LTF_HD void la_complete(const LaMat &q, int64_t r, int64_t c, const LaMat &have) {
    for (int64_t j = 0; j < c; j++) {
        if (have[j] != 0) continue;
        int64_t best = 0;
        double bres = -1;
        for (int64_t t = 0; t < r; t++) {
            double res = 1;   /* |e_t - sum <q_i, e_t> q_i|^2 = 1 - sum q_i[t]^2 */
            for (int64_t i = 0; i < c; i++)
                if (have[i] != 0) res -= q[t * c + i] * q[t * c + i];
            if (res > bres) { bres = res; best = t; }
        }
        for (int64_t k = 0; k < r; k++) q[k * c + j] = k == best ? 1 : 0;
        for (int pass = 0; pass < 2; pass++)
            for (int64_t i = 0; i < c; i++) {
                if (have[i] == 0) continue;
                double d = 0;
                for (int64_t k = 0; k < r; k++) d += q[k * c + i] * q[k * c + j];
                for (int64_t k = 0; k < r; k++) q[k * c + j] -= d * q[k * c + i];
            }
        double nrm = la_norm(q, j, c, r);
        for (int64_t k = 0; k < r; k++) q[k * c + j] /= nrm;
        have[j] = 1;
    }
}

/* Negate column j of the r x c matrix q (row-major) and, when 'o' has
** columns (oc > 0), column j of the ro x oc matrix o, when q's largest
** component of the column (the first of equal ones) is negative. */
LTF_HD void la_sign(const LaMat &q, int64_t r, int64_t c, int64_t j, const LaMat &o, int64_t ro, int64_t oc) {
    int64_t at = 0;
    double best = -1;
    for (int64_t k = 0; k < r; k++)
        if (fabs(q[k * c + j]) > best) { best = fabs(q[k * c + j]); at = k; }
    if (r == 0 || q[at * c + j] >= 0) return;
    for (int64_t k = 0; k < r; k++) q[k * c + j] = -q[k * c + j];
    for (int64_t k = 0; oc > 0 && k < ro; k++) o[k * oc + j] = -o[k * oc + j];
}
/* }==== */

/* {==== cholesky: a = L L^T from a's lower triangle */
template <class T> struct LaCholP {
    const T *x;
    T *o;
    double *w;   /* n * n words per matrix */
    int64_t batch, n;
    int *flag;
};

template <class T> struct LaCholF {
    static LTF_HD void at(int64_t b, const LaCholP<T> &p) {
        const int64_t n = p.n;
        const T *x = p.x + b * n * n;
        T *o = p.o + b * n * n;
        LaMat L = la_mat(p.w, 0, p.batch, b);
        for (int64_t j = 0; j < n; j++) {
            double d = (double)x[j * n + j];
            for (int64_t k = 0; k < j; k++) d -= L[j * n + k] * L[j * n + k];
            if (d <= 0) {   /* not positive definite (NaN goes on, as OpenBLAS's potrf) */
                raise_flag(p.flag, ERR_CHOLESKY);
                return;
            }
            double ljj = sqrt(d);
            L[j * n + j] = ljj;
            for (int64_t i = j + 1; i < n; i++) {
                double s = (double)x[i * n + j];
                for (int64_t k = 0; k < j; k++) s -= L[i * n + k] * L[j * n + k];
                L[i * n + j] = s / ljj;
            }
        }
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) o[i * n + j] = j <= i ? (T)L[i * n + j] : (T)0;
    }
};
/* }==== */

/* {==== LU: inv, det, slogdet, solve */
/* LU with partial pivoting of the n x n matrix f in place (LAPACK's getf2:
** the first largest |pivot|, rows swapped, multipliers below the diagonal,
** a zero pivot column left as it is): f = P L U, piv[j] = the row swapped
** with row j. Returns the 1-based column of the first zero pivot, 0 if none. */
LTF_HD int64_t la_lu(const LaMat &f, int32_t *piv, int64_t ps, int64_t n) {
    int64_t info = 0;
    for (int64_t j = 0; j < n; j++) {
        int64_t p = j;
        double amax = fabs(f[j * n + j]);
        for (int64_t i = j + 1; i < n; i++) {
            double v = fabs(f[i * n + j]);
            if (v > amax) { amax = v; p = i; }
        }
        piv[j * ps] = (int32_t)p;
        double pj = f[p * n + j];
        if (pj != 0) {
            if (p != j)
                for (int64_t c = 0; c < n; c++) {
                    double t = f[j * n + c];
                    f[j * n + c] = f[p * n + c];
                    f[p * n + c] = t;
                }
            for (int64_t i = j + 1; i < n; i++) f[i * n + j] /= pj;
        } else if (info == 0) {
            info = j + 1;
        }
        for (int64_t i = j + 1; i < n; i++) {
            double l = f[i * n + j];
            for (int64_t c = j + 1; c < n; c++) f[i * n + c] -= l * f[j * n + c];
        }
    }
    return info;
}

/* x := M^-1 x ('trans' 0) or M^-T x ('trans' 1), M = P L U from la_lu */
LTF_HD void la_lu_solve(const LaMat &f, const int32_t *piv, int64_t ps, int64_t n, const LaMat &x, int trans) {
    if (!trans) {
        for (int64_t j = 0; j < n; j++) {
            int64_t p = piv[j * ps];
            if (p != j) { double t = x[j]; x[j] = x[p]; x[p] = t; }
        }
        for (int64_t i = 0; i < n; i++) {
            double s = x[i];
            for (int64_t j = 0; j < i; j++) s -= f[i * n + j] * x[j];
            x[i] = s;
        }
        for (int64_t i = n - 1; i >= 0; i--) {
            double s = x[i];
            for (int64_t j = i + 1; j < n; j++) s -= f[i * n + j] * x[j];
            x[i] = s / f[i * n + i];
        }
        return;
    }
    for (int64_t i = 0; i < n; i++) {   /* U^T y = x */
        double s = x[i];
        for (int64_t j = 0; j < i; j++) s -= f[j * n + i] * x[j];
        x[i] = s / f[i * n + i];
    }
    for (int64_t i = n - 1; i >= 0; i--) {   /* L^T z = y */
        double s = x[i];
        for (int64_t j = i + 1; j < n; j++) s -= f[j * n + i] * x[j];
        x[i] = s;
    }
    for (int64_t j = n - 1; j >= 0; j--) {   /* x = P z */
        int64_t p = piv[j * ps];
        if (p != j) { double t = x[j]; x[j] = x[p]; x[p] = t; }
    }
}

enum { LA_DET, LA_SLOGDET, LA_INV, LA_SOLVE };

template <class T> struct LaLuP {
    const T *a, *rhs;    /* rhs: solve's b (n x k) */
    T *o, *o2;           /* det, slogdet's sign, inv, solve; o2: slogdet's log|det| */
    double *w;           /* n * n + n words per matrix */
    int32_t *piv;        /* n per matrix, interleaved */
    int64_t batch, n, k;
    int mode, adjoint;
    int *flag;
};

/* Factor M = a^T (cpu/linalg.c's column-major view of the row-major a),
** then: det = prod(diag U) * (-1)^swaps, slogdet (sign, log|det|), a
** singular matrix giving 0 / (0, -inf); inv's columns solve a x = e_j
** (M^T x = e_j; adjoint: M x = e_j gives inv(a)^T); solve's columns
** likewise. A zero pivot makes inv and solve raise the CPU's error. */
template <class T> struct LaLuF {
    static LTF_HD void at(int64_t b, const LaLuP<T> &p) {
        const int64_t n = p.n;
        const T *a = p.a + b * n * n;
        LaMat f = la_mat(p.w, 0, p.batch, b), x = la_mat(p.w, n * n, p.batch, b);
        int32_t *piv = p.piv + b;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < n; j++) f[i * n + j] = (double)a[j * n + i];
        int64_t info = la_lu(f, piv, p.batch, n);
        if (p.mode == LA_DET || p.mode == LA_SLOGDET) {
            double sign = 1, logabs = 0, prod = 1;
            int swaps = 0;
            for (int64_t i = 0; i < n; i++) {
                double d = f[i * n + i];
                if (piv[i * p.batch] != i) sign = -sign, swaps++;
                if (d < 0) sign = -sign;
                logabs += log(fabs(d));
                prod *= d;
            }
            if (info > 0) sign = 0, logabs = -INFINITY, prod = 0;
            if (p.mode == LA_SLOGDET) {
                p.o[b] = (T)sign;
                p.o2[b] = (T)logabs;
            } else {
                p.o[b] = (T)((swaps & 1) ? -prod : prod);
            }
            return;
        }
        if (info > 0) {
            raise_flag(p.flag, p.mode == LA_INV ? ERR_INV_SINGULAR : ERR_SOLVE_SINGULAR);
            return;
        }
        int trans = !p.adjoint;
        int64_t cols = p.mode == LA_INV ? n : p.k;
        T *o = p.o + b * n * cols;
        const T *rhs = p.mode == LA_SOLVE ? p.rhs + b * n * cols : (const T *)0;
        for (int64_t c = 0; c < cols; c++) {
            for (int64_t i = 0; i < n; i++) x[i] = rhs ? (double)rhs[i * cols + c] : (i == c ? 1.0 : 0.0);
            la_lu_solve(f, piv, p.batch, n, x, trans);
            for (int64_t i = 0; i < n; i++) o[i * cols + c] = (T)x[i];
        }
    }
};
/* }==== */

/* {==== triangular_solve: one index per (matrix, right-hand column) */
template <class T> struct LaTriP {
    const T *a, *b;
    T *o;
    Strided ab, bb;   /* output matrix -> element offsets of a's and b's matrices (broadcast) */
    int64_t n, k;
    int lower, adjoint;
};

/* Substitution in double over a's one triangle (a^T with adjoint), each
** x[i] rounded to T as it is stored and read back: forward for lower
** without adjoint and upper with it, backward otherwise. */
template <class T> struct LaTriF {
    static LTF_HD void at(int64_t i, const LaTriP<T> &p) {
        const int64_t n = p.n, k = p.k, mi = i / k, c = i - mi * k;
        const T *A = p.a + strided_offset(p.ab, mi), *B = p.b + strided_offset(p.bb, mi);
        T *x = p.o + mi * n * k + c;
        bool fwd = (p.lower != 0) != (p.adjoint != 0);
        for (int64_t t = 0; t < n; t++) {
            int64_t r = fwd ? t : n - 1 - t;
            double s = (double)B[r * k + c];
            int64_t j0 = fwd ? 0 : r + 1, j1 = fwd ? r : n;
            for (int64_t j = j0; j < j1; j++)
                s -= (double)(p.adjoint ? A[j * n + r] : A[r * n + j]) * (double)x[j * k];
            x[r * k] = (T)(s / (double)A[r * n + r]);
        }
    }
};
/* }==== */

/* {==== qr: Householder, LAPACK's signs */
template <class T> struct LaQrP {
    const T *x;
    T *q, *r;
    double *w;   /* m * n + m * qc + k words per matrix */
    int64_t batch, m, n, k, qc;
};

/* dgeqr2: for column j the reflector H = I - tau v v^T (v[j] = 1) with
** beta = -sign(alpha) * |(alpha, x)| (dlarfg; tau = 0, no reflection, when
** x is zero), applied to the columns on the right; R is the upper triangle
** left. dorg2r: Q = H_0 ... H_{k-1} applied to the first qc columns of the
** identity, the last reflector first. */
template <class T> struct LaQrF {
    static LTF_HD void at(int64_t b, const LaQrP<T> &p) {
        const int64_t m = p.m, n = p.n, k = p.k, qc = p.qc;
        const T *x = p.x + b * m * n;
        LaMat A = la_mat(p.w, 0, p.batch, b), Q = la_mat(p.w, m * n, p.batch, b);
        LaMat tau = la_mat(p.w, m * n + m * qc, p.batch, b);
        for (int64_t i = 0; i < m * n; i++) A[i] = (double)x[i];
        for (int64_t j = 0; j < k; j++) {
            double alpha = A[j * n + j], xnorm = la_norm(A, (j + 1) * n + j, n, m - j - 1);
            if (xnorm == 0) {
                tau[j] = 0;
                continue;
            }
            double h = fabs(alpha) > xnorm ? fabs(alpha) * sqrt(1 + (xnorm / alpha) * (xnorm / alpha))
                                            : xnorm * sqrt(1 + (alpha / xnorm) * (alpha / xnorm));
            double beta = -copysign(h, alpha), t = (beta - alpha) / beta, d = alpha - beta;
            for (int64_t i = j + 1; i < m; i++) A[i * n + j] /= d;
            A[j * n + j] = beta;
            tau[j] = t;
            for (int64_t c = j + 1; c < n; c++) {
                double s = A[j * n + c];
                for (int64_t i = j + 1; i < m; i++) s += A[i * n + j] * A[i * n + c];
                s *= t;
                A[j * n + c] -= s;
                for (int64_t i = j + 1; i < m; i++) A[i * n + c] -= s * A[i * n + j];
            }
        }
        T *r = p.r + b * qc * n;
        for (int64_t i = 0; i < qc; i++)
            for (int64_t j = 0; j < n; j++) r[i * n + j] = i <= j ? (T)A[i * n + j] : (T)0;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < qc; j++) Q[i * qc + j] = i == j ? 1 : 0;
        for (int64_t j = k - 1; j >= 0; j--) {
            double t = tau[j];
            if (t == 0) continue;
            for (int64_t c = j; c < qc; c++) {
                double s = Q[j * qc + c];
                for (int64_t i = j + 1; i < m; i++) s += A[i * n + j] * Q[i * qc + c];
                s *= t;
                Q[j * qc + c] -= s;
                for (int64_t i = j + 1; i < m; i++) Q[i * qc + c] -= s * A[i * n + j];
            }
        }
        T *q = p.q + b * m * qc;
        for (int64_t i = 0; i < m * qc; i++) q[i] = (T)Q[i];
    }
};
/* }==== */

/* {==== eigh: cyclic Jacobi */
template <class T> struct LaEighP {
    const T *x;
    T *e, *v;
    double *w;   /* 2 * n * n + n words per matrix */
    int64_t batch, n;
    int *flag;
};

/* The symmetric matrix of x's lower triangle, scaled by its largest |entry|,
** rotated by cyclic sweeps until no off-diagonal entry exceeds eps times
** the geometric mean of its two diagonal entries (nor 1e-3 eps, the
** scaled matrix's floor); the rotations accumulate into V. */
template <class T> struct LaEighF {
    static LTF_HD void at(int64_t b, const LaEighP<T> &p) {
        const int64_t n = p.n;
        const T *x = p.x + b * n * n;
        T *e = p.e + b * n, *v = p.v + b * n * n;
        LaMat A = la_mat(p.w, 0, p.batch, b), V = la_mat(p.w, n * n, p.batch, b);
        LaMat ord = la_mat(p.w, 2 * n * n, p.batch, b);
        double amax = 0;
        bool bad = false;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j <= i; j++) {
                double a = (double)x[i * n + j];
                bad |= a != a || a - a != 0;
                if (fabs(a) > amax) amax = fabs(a);
                A[i * n + j] = A[j * n + i] = a;
            }
        if (bad) {   /* NaN or infinity: NaN everywhere, as the CPU's values */
            for (int64_t i = 0; i < n; i++) e[i] = (T)NAN;
            for (int64_t i = 0; i < n * n; i++) v[i] = (T)NAN;
            return;
        }
        double scale = amax > 0 ? amax : 1;
        for (int64_t i = 0; i < n * n; i++) {
            A[i] /= scale;
            V[i] = i / n == i % n ? 1 : 0;
        }
        bool rotated = true;
        for (int sweep = 0; sweep < LA_SWEEPS && rotated; sweep++) {
            rotated = false;
            for (int64_t pp = 0; pp < n; pp++)
                for (int64_t q = pp + 1; q < n; q++) {
                    double apq = A[pp * n + q], app = A[pp * n + pp], aqq = A[q * n + q];
                    if (fabs(apq) <= LA_EPS * sqrt(fabs(app)) * sqrt(fabs(aqq)) || fabs(apq) <= 1e-3 * LA_EPS)
                        continue;
                    rotated = true;
                    double t = la_jacobi_t(app, aqq, apq), c = 1 / sqrt(1 + t * t), s = t * c;
                    for (int64_t r = 0; r < n; r++) {
                        if (r == pp || r == q) continue;
                        double arp = A[r * n + pp], arq = A[r * n + q];
                        A[r * n + pp] = A[pp * n + r] = c * arp - s * arq;
                        A[r * n + q] = A[q * n + r] = s * arp + c * arq;
                    }
                    A[pp * n + pp] = app - t * apq;
                    A[q * n + q] = aqq + t * apq;
                    A[pp * n + q] = A[q * n + pp] = 0;
                    for (int64_t r = 0; r < n; r++) {
                        double vp = V[r * n + pp], vq = V[r * n + q];
                        V[r * n + pp] = c * vp - s * vq;
                        V[r * n + q] = s * vp + c * vq;
                    }
                }
        }
        if (rotated) {   /* not converged: fine if nearly so, else the CPU's error */
            double off = 0;
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < i; j++) off += A[i * n + j] * A[i * n + j];
            if (!(off <= 1e-20)) {
                raise_flag(p.flag, ERR_EIGH);
                return;
            }
        }
        /* ascending order (stable), then signs */
        for (int64_t i = 0; i < n; i++) ord[i] = (double)i;
        for (int64_t i = 0; i < n; i++) {
            int64_t best = i;
            for (int64_t j = i + 1; j < n; j++)
                if (A[(int64_t)ord[j] * (n + 1)] < A[(int64_t)ord[best] * (n + 1)]) best = j;
            double t = ord[best];
            for (int64_t j = best; j > i; j--) ord[j] = ord[j - 1];
            ord[i] = t;
        }
        for (int64_t j = 0; j < n; j++) {
            int64_t c = (int64_t)ord[j];
            e[j] = (T)(A[c * (n + 1)] * scale);
            int64_t at = 0;
            double best = -1;
            for (int64_t r = 0; r < n; r++)
                if (fabs(V[r * n + c]) > best) { best = fabs(V[r * n + c]); at = r; }
            double sg = V[at * n + c] < 0 ? -1 : 1;
            for (int64_t r = 0; r < n; r++) v[r * n + j] = (T)(sg * V[r * n + c]);
        }
    }
};
/* }==== */

/* {==== svd: one-sided Jacobi */
template <class T> struct LaSvdP {
    const T *x;
    T *s, *u, *v;
    double *w;   /* words per matrix: la_svd_words */
    int64_t batch, m, n;
    int full, uv;
    int *flag;
};

/* scratch words per matrix: G (r x c), the column norms, their order, and
** with vectors the flags of the left factor's columns, the left (r x lc)
** and right (c x c) factors; r = max(m, n), c = min(m, n) */
inline int64_t la_svd_words(int64_t m, int64_t n, int full, int uv) {
    int64_t r = m > n ? m : n, c = m < n ? m : n, lc = full ? r : c;
    return r * c + 2 * c + (uv ? lc + r * lc + c * c : 0);
}

/* G = a (a^T when m < n: r x c, r >= c) scaled by its largest |entry|;
** pairs of columns rotated (the right factor W accumulating the rotations)
** until every pair is orthogonal to r * eps relative to their norms; the
** singular values are the column norms, the left vectors the normalized
** columns. a = left S W^T, so U, V are (left, W) or, for a^T, (W, left). */
template <class T> struct LaSvdF {
    static LTF_HD void at(int64_t b, const LaSvdP<T> &p) {
        const int64_t m = p.m, n = p.n, tr = m < n, r = tr ? n : m, c = tr ? m : n, lc = p.full ? r : c;
        const int uv = p.uv;
        const T *x = p.x + b * m * n;
        T *so = p.s + b * c;
        int64_t off = 0;
        LaMat G = la_mat(p.w, off, p.batch, b), sv = la_mat(p.w, off += r * c, p.batch, b);
        LaMat ord = la_mat(p.w, off += c, p.batch, b), have = la_mat(p.w, off += c, p.batch, b);
        LaMat L = la_mat(p.w, off += lc, p.batch, b), W = la_mat(p.w, off += r * lc, p.batch, b);
        int64_t uc = p.full ? m : c, vc = p.full ? n : c;
        T *uo = uv ? p.u + b * m * uc : (T *)0, *vo = uv ? p.v + b * n * vc : (T *)0;
        double amax = 0;
        bool bad = false;
        for (int64_t i = 0; i < r; i++)
            for (int64_t j = 0; j < c; j++) {
                double a = (double)(tr ? x[j * n + i] : x[i * n + j]);
                bad |= a != a || a - a != 0;
                if (fabs(a) > amax) amax = fabs(a);
                G[i * c + j] = a;
            }
        if (bad) {   /* NaN or infinity: NaN everywhere, as the CPU's values */
            for (int64_t j = 0; j < c; j++) so[j] = (T)NAN;
            for (int64_t i = 0; uv && i < m * uc; i++) uo[i] = (T)NAN;
            for (int64_t i = 0; uv && i < n * vc; i++) vo[i] = (T)NAN;
            return;
        }
        double scale = amax > 0 ? amax : 1, tol = LA_EPS * (double)(r > 1 ? r : 1);
        for (int64_t i = 0; i < r * c; i++) G[i] /= scale;
        for (int64_t i = 0; uv && i < c * c; i++) W[i] = i / c == i % c ? 1 : 0;
        bool rotated = true;
        for (int sweep = 0; sweep < LA_SWEEPS && rotated; sweep++) {
            rotated = false;
            for (int64_t pp = 0; pp < c; pp++)
                for (int64_t q = pp + 1; q < c; q++) {
                    double al = 0, be = 0, ga = 0;
                    for (int64_t i = 0; i < r; i++) {
                        double gp = G[i * c + pp], gq = G[i * c + q];
                        al += gp * gp;
                        be += gq * gq;
                        ga += gp * gq;
                    }
                    /* a column below 1e-140 (of the largest entry) counts as zero */
                    if (al < 1e-280 || be < 1e-280 || fabs(ga) <= tol * sqrt(al) * sqrt(be)) continue;
                    rotated = true;
                    double t = la_jacobi_t(al, be, ga), cs = 1 / sqrt(1 + t * t), sn = t * cs;
                    for (int64_t i = 0; i < r; i++) {
                        double gp = G[i * c + pp], gq = G[i * c + q];
                        G[i * c + pp] = cs * gp - sn * gq;
                        G[i * c + q] = sn * gp + cs * gq;
                    }
                    for (int64_t i = 0; uv && i < c; i++) {
                        double wp = W[i * c + pp], wq = W[i * c + q];
                        W[i * c + pp] = cs * wp - sn * wq;
                        W[i * c + q] = sn * wp + cs * wq;
                    }
                }
        }
        if (rotated) {   /* a finite matrix that did not converge: the CPU's error */
            raise_flag(p.flag, ERR_SVD);
            return;
        }
        /* singular values: descending, ties in column order */
        for (int64_t j = 0; j < c; j++) {
            sv[j] = la_norm(G, j, c, r);
            ord[j] = (double)j;
        }
        for (int64_t i = 0; i < c; i++) {
            int64_t best = i;
            for (int64_t j = i + 1; j < c; j++)
                if (sv[(int64_t)ord[j]] > sv[(int64_t)ord[best]]) best = j;
            double t = ord[best];
            for (int64_t j = best; j > i; j--) ord[j] = ord[j - 1];
            ord[i] = t;
        }
        for (int64_t j = 0; j < c; j++) so[j] = (T)(sv[(int64_t)ord[j]] * scale);
        if (!uv) return;
        /* left vectors in order; zero columns and full's extra ones completed */
        for (int64_t j = 0; j < lc; j++) {
            int64_t col = j < c ? (int64_t)ord[j] : 0;
            double s = j < c ? sv[col] : 0;
            have[j] = s > 1e-140 ? 1 : 0;
            for (int64_t i = 0; i < r; i++) L[i * lc + j] = have[j] != 0 ? G[i * c + col] / s : 0;
        }
        la_complete(L, r, lc, have);
        /* the right factor's columns in the same order, into G (free now) */
        for (int64_t i = 0; i < c; i++)
            for (int64_t j = 0; j < c; j++) G[i * c + j] = W[i * c + (int64_t)ord[j]];
        /* signs from U's columns: the left factor's, or the right's for a^T */
        LaMat none = { (double *)0, 0 };
        for (int64_t j = 0; j < lc; j++) {
            if (j >= c) la_sign(L, r, lc, j, none, 0, 0);
            else if (!tr) la_sign(L, r, lc, j, G, c, c);
            else la_sign(G, c, c, j, L, r, lc);
        }
        /* u: m x uc, v: n x vc; (left, right), or (right, left) for a^T */
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < uc; j++) uo[i * uc + j] = (T)(tr ? G[i * c + j] : L[i * lc + j]);
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < vc; j++) vo[i * vc + j] = (T)(tr ? L[i * lc + j] : G[i * c + j]);
    }
};
/* }==== */

/* {==== Host sides: ops.cuh includes this file after its helpers (fail,
** shape_str, ptr, LTF_CU_KERNEL); the attributes and early returns are
** cpu/linalg.c's */
#ifdef LTF_CU_KERNEL
/* Matrices of x (rank >= 2): their count and the last two dims. */
inline int64_t la_batch(const ltf_tensor *x, int64_t *m, int64_t *n) {
    *m = x->dims[x->rank - 2];
    *n = x->dims[x->rank - 1];
    int64_t b = 1;
    for (int i = 0; i < x->rank - 2; i++) b *= x->dims[i];
    return b;
}

/* cpu/linalg.c's limits (LAPACK's int indexing) and message, so that both
** devices refuse the same matrices */
inline bool la_fits(int64_t m, int64_t n) { return m <= INT32_MAX && n <= INT32_MAX && m * n <= INT32_MAX / 4; }
inline ltf_status la_too_large(ltf_ctx *ctx, const ltf_op_def *def, int64_t m, int64_t n) {
    return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: matrix of %lld x %lld is too large for LAPACK", def->name,
                (long long)m, (long long)n);
}
inline bool la_float(int dt) { return dt == DT_F32 || dt == DT_F64; }
/* every output empty: the engine runs no kernel then (op.c, device.c), so
** neither does a direct call, whatever the sizes (before la_fits) */
inline bool la_empty(ltf_tensor *const *out, int nout) {
    for (int k = 0; k < nout; k++)
        if (out[k]->numel > 0) return false;
    return true;
}

/* ops/linalg.c's checks, in its order, kinds and messages: the engine
** infers before it runs a kernel, but a direct call (the tests' run_both)
** must refuse what the CPU's inference refuses before reading anything */
inline ltf_status la_check(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const ltf_tensor *t, bool square) {
    char s[160];
    if (!la_float(t->dtype))
        return fail(ctx, LTF_ERR_TYPE, "%s: '%s' has dtype %s, expected float32 or float64", def->name, arg,
                    dname(t->dtype));
    if (t->rank < 2)
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must have rank >= 2, got shape %s", def->name, arg,
                    shape_str(t, s, sizeof s));
    if (square && t->dims[t->rank - 2] != t->dims[t->rank - 1])
        return fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must be a square matrix (or a batch of them), got shape %s",
                    def->name, arg, shape_str(t, s, sizeof s));
    return LTF_OK;
}

/* solve's and triangular_solve's operands: a (.., n, n), b (.., n, k) of
** one dtype; the same batch dims, or broadcastable ones ('bcast') */
inline ltf_status la_check_solve(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *A, const ltf_tensor *B,
                                 bool bcast) {
    ltf_status st = la_check(ctx, def, "matrix", A, true);
    if (st == LTF_OK) st = la_check(ctx, def, "rhs", B, false);
    if (st != LTF_OK) return st;
    if (A->dtype != B->dtype)
        return fail(ctx, LTF_ERR_TYPE, "%s: 'matrix' and 'rhs' must have the same dtype, got %s and %s", def->name,
                    dname(A->dtype), dname(B->dtype));
    bool bad = A->dims[A->rank - 1] != B->dims[B->rank - 2];
    if (bcast) {
        for (int i = 1; !bad && i <= A->rank - 2 && i <= B->rank - 2; i++) {
            int64_t x = A->dims[A->rank - 2 - i], y = B->dims[B->rank - 2 - i];
            bad = x != y && x != 1 && y != 1;
        }
    } else {
        bad = bad || A->rank != B->rank;
        for (int i = 0; !bad && i < A->rank - 2; i++) bad = A->dims[i] != B->dims[i];
    }
    if (!bad) return LTF_OK;
    char sa[160], sb[160];
    return fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                bcast ? "%s: 'matrix' (.., n, n) and 'rhs' (.., n, k) must have broadcastable batch dimensions "
                        "and the same n, got %s and %s"
                      : "%s: 'matrix' (.., n, n) and 'rhs' (.., n, k) must have the same batch dimensions and n, "
                        "got %s and %s",
                def->name, shape_str(A, sa, sizeof sa), shape_str(B, sb, sizeof sb));
}

/* Device scratch of 'words' doubles per matrix, released at scope end
** (after the launch: the stream orders its reuse). 'w' NULL: the executor's
** status says why. */
template <class E> struct LaScratch {
    E &e;
    size_t bytes;
    double *w;
    LaScratch(E &ex, int64_t batch, int64_t words)
        : e(ex), bytes((size_t)(batch * (words > 0 ? words : 1)) * sizeof(double)), w((double *)ex.alloc(bytes)) {}
    ~LaScratch() {
        if (w) e.release(w, bytes);
    }
};

template <class E, class F, class P> ltf_status la_launch(E &e, int64_t count, const P &p) {
    ltf_status st = e.template run<F>(count, p);
    return st != LTF_OK ? st : e.check();
}

template <class E, class T> ltf_status la_cholesky(E &e, ltf_tensor *const *in, ltf_tensor **out, int64_t batch,
                                                   int64_t n) {
    LaScratch<E> s(e, batch, n * n);
    if (!s.w) return e.status();
    LaCholP<T> p = { ptr<T>(in[0]), ptr<T>(out[0]), s.w, batch, n, e.flag() };
    return la_launch<E, LaCholF<T> >(e, batch, p);
}

LTF_CU_KERNEL(k_cholesky) {
    LTF_CU_UNUSED;
    int dt = in[0]->dtype;
    ltf_status st = la_check(ctx, def, "input", in[0], true);
    if (st != LTF_OK || la_empty(out, nout)) return st;
    int64_t m, n, batch = la_batch(in[0], &m, &n);
    if (!la_fits(n, n)) return la_too_large(ctx, def, n, n);
    if (n == 0 || batch == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return dt == DT_F32 ? la_cholesky<E, float>(e, in, out, batch, n) : la_cholesky<E, double>(e, in, out, batch, n);
}

/* inv, det, slogdet, solve: one LU per matrix; k = solve's right-hand columns */
template <class E, class T> ltf_status la_lu_run(E &e, ltf_tensor *const *in, ltf_tensor **out, int mode,
                                                 int adjoint, int64_t batch, int64_t n, int64_t k) {
    LaScratch<E> s(e, batch, n * n + n);
    if (!s.w) return e.status();
    size_t pbytes = (size_t)(batch * (n > 0 ? n : 1)) * sizeof(int32_t);
    int32_t *piv = (int32_t *)e.alloc(pbytes);
    if (!piv) return e.status();
    LaLuP<T> p = { ptr<T>(in[0]), mode == LA_SOLVE ? ptr<T>(in[1]) : (const T *)0, ptr<T>(out[0]),
                   mode == LA_SLOGDET ? ptr<T>(out[1]) : (T *)0, s.w, piv, batch, n, k, mode, adjoint, e.flag() };
    ltf_status st = la_launch<E, LaLuF<T> >(e, batch, p);
    e.release(piv, pbytes);
    return st;
}

template <class E> ltf_status la_lu_op(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                       ltf_tensor **out, int nout, int mode, int adjoint) {
    int dt = in[0]->dtype;
    ltf_status st = mode == LA_SOLVE ? la_check_solve(ctx, def, in[0], in[1], false)
                                     : la_check(ctx, def, "input", in[0], true);
    if (st != LTF_OK || la_empty(out, nout)) return st;
    int64_t m, n, k = 0, batch = la_batch(in[0], &m, &n);
    if (mode == LA_SOLVE) {
        la_batch(in[1], &m, &k);
        if (!la_fits(n, n) || !la_fits(n, k)) return la_too_large(ctx, def, n, k);
        if (n == 0 || k == 0) return LTF_OK;
    } else {
        if (!la_fits(n, n)) return la_too_large(ctx, def, n, n);
        if (mode == LA_INV && n == 0) return LTF_OK;
    }
    if (batch == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return dt == DT_F32 ? la_lu_run<E, float>(e, in, out, mode, adjoint, batch, n, k)
                        : la_lu_run<E, double>(e, in, out, mode, adjoint, batch, n, k);
}

/* inv(a [, adjoint]): "Input is not invertible." for a zero pivot */
LTF_CU_KERNEL(k_inv) {
    LTF_CU_UNUSED;
    return la_lu_op<E>(ctx, def, in, out, nout, LA_INV, (int)a->i[0]);
}
/* det (code 0), slogdet (code 1): a singular matrix gives 0 / (0, -inf) */
LTF_CU_KERNEL(k_det) {
    LTF_CU_UNUSED;
    return la_lu_op<E>(ctx, def, in, out, nout, def->code == 1 ? LA_SLOGDET : LA_DET, 0);
}
/* solve(a, b [, adjoint]): "Input matrix is not invertible." for a zero pivot */
LTF_CU_KERNEL(k_solve) {
    LTF_CU_UNUSED;
    return la_lu_op<E>(ctx, def, in, out, nout, LA_SOLVE, (int)a->i[0]);
}

/* triangular_solve(a, b; lower, adjoint): the batch dims broadcast (as
** k_matmul plans them); no scratch */
LTF_CU_KERNEL(k_triangular_solve) {
    LTF_CU_UNUSED;
    const ltf_tensor *A = in[0], *B = in[1];
    ltf_tensor *o = out[0];
    int dt = A->dtype;
    ltf_status st = la_check_solve(ctx, def, A, B, true);
    if (st != LTF_OK || la_empty(out, nout)) return st;
    int64_t m, n, k, batch = la_batch(o, &n, &k);
    la_batch(A, &m, &n);
    if (!la_fits(n, n) || !la_fits(n, k)) return la_too_large(ctx, def, n, k);
    if (o->numel == 0) return LTF_OK;
    int rb = o->rank - 2;
    Strided ab, bb;
    ab.rank = bb.rank = rb > 0 ? rb : 1;
    ab.base = bb.base = 0;
    ab.dims[0] = bb.dims[0] = 1;
    ab.st[0] = bb.st[0] = 0;
    int64_t sa = n * n, sb = n * k;
    for (int d = rb - 1; d >= 0; d--) {
        int xa = d - (rb - (A->rank - 2)), xb = d - (rb - (B->rank - 2));
        ab.dims[d] = bb.dims[d] = o->dims[d];
        ab.st[d] = xa >= 0 && A->dims[xa] != 1 ? sa : 0;
        bb.st[d] = xb >= 0 && B->dims[xb] != 1 ? sb : 0;
        if (xa >= 0) sa *= A->dims[xa];
        if (xb >= 0) sb *= B->dims[xb];
    }
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    int lower = a->i[0] != 0, adjoint = a->i[1] != 0;
    if (dt == DT_F32) {
        LaTriP<float> p = { ptr<float>(A), ptr<float>(B), ptr<float>(o), ab, bb, n, k, lower, adjoint };
        return e.template run<LaTriF<float> >(batch * k, p);
    }
    LaTriP<double> p = { ptr<double>(A), ptr<double>(B), ptr<double>(o), ab, bb, n, k, lower, adjoint };
    return e.template run<LaTriF<double> >(batch * k, p);
}

template <class E, class T> ltf_status la_qr(E &e, ltf_tensor *const *in, ltf_tensor **out, int64_t batch,
                                             int64_t m, int64_t n, int64_t k, int64_t qc) {
    LaScratch<E> s(e, batch, m * n + m * qc + k);
    if (!s.w) return e.status();
    LaQrP<T> p = { ptr<T>(in[0]), ptr<T>(out[0]), ptr<T>(out[1]), s.w, batch, m, n, k, qc };
    return la_launch<E, LaQrF<T> >(e, batch, p);
}

/* qr(a; full_matrices): q (m x qc), r (qc x n); k = 0 gives the identity
** and zeros, as the CPU's */
LTF_CU_KERNEL(k_qr) {
    LTF_CU_UNUSED;
    int dt = in[0]->dtype;
    ltf_status st = la_check(ctx, def, "input", in[0], false);
    if (st != LTF_OK || la_empty(out, nout)) return st;
    int64_t m, n, batch = la_batch(in[0], &m, &n);
    if (!la_fits(m, n) || (a->i[0] && !la_fits(m, m))) return la_too_large(ctx, def, m, n);
    int64_t k = m < n ? m : n, qc = a->i[0] ? m : k;
    if (batch == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return dt == DT_F32 ? la_qr<E, float>(e, in, out, batch, m, n, k, qc)
                        : la_qr<E, double>(e, in, out, batch, m, n, k, qc);
}

template <class E, class T> ltf_status la_eigh(E &e, ltf_tensor *const *in, ltf_tensor **out, int64_t batch,
                                               int64_t n) {
    LaScratch<E> s(e, batch, 2 * n * n + n);
    if (!s.w) return e.status();
    LaEighP<T> p = { ptr<T>(in[0]), ptr<T>(out[0]), ptr<T>(out[1]), s.w, batch, n, e.flag() };
    return la_launch<E, LaEighF<T> >(e, batch, p);
}

/* eigh(a): e ascending, v's columns (each one's largest component positive) */
LTF_CU_KERNEL(k_eigh) {
    LTF_CU_UNUSED;
    int dt = in[0]->dtype;
    ltf_status st = la_check(ctx, def, "tensor", in[0], true);
    if (st != LTF_OK || la_empty(out, nout)) return st;
    int64_t m, n, batch = la_batch(in[0], &m, &n);
    if (!la_fits(n, n)) return la_too_large(ctx, def, n, n);
    if (n == 0 || batch == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return dt == DT_F32 ? la_eigh<E, float>(e, in, out, batch, n) : la_eigh<E, double>(e, in, out, batch, n);
}

template <class E, class T> ltf_status la_svd(E &e, ltf_tensor *const *in, ltf_tensor **out, int64_t batch,
                                              int64_t m, int64_t n, int full, int uv) {
    LaScratch<E> s(e, batch, la_svd_words(m, n, full, uv));
    if (!s.w) return e.status();
    LaSvdP<T> p = { ptr<T>(in[0]), ptr<T>(out[0]), uv ? ptr<T>(out[1]) : (T *)0, uv ? ptr<T>(out[2]) : (T *)0,
                    s.w, batch, m, n, full, uv, e.flag() };
    return la_launch<E, LaSvdF<T> >(e, batch, p);
}

/* svd(a; full_matrices, compute_uv): s descending, then u, v; min(m, n) = 0
** gives identities, as the CPU's */
LTF_CU_KERNEL(k_svd) {
    LTF_CU_UNUSED;
    int dt = in[0]->dtype;
    ltf_status st = la_check(ctx, def, "tensor", in[0], false);
    if (st != LTF_OK || la_empty(out, nout)) return st;
    int64_t m, n, batch = la_batch(in[0], &m, &n);
    int full = a->i[0] != 0, uv = a->i[1] != 0;
    if (!la_fits(m, n) || (full && (!la_fits(m, m) || !la_fits(n, n)))) return la_too_large(ctx, def, m, n);
    if (batch == 0) return LTF_OK;
    E e(ctx, def->name);
    if (e.status() != LTF_OK) return e.status();
    return dt == DT_F32 ? la_svd<E, float>(e, in, out, batch, m, n, full, uv)
                        : la_svd<E, double>(e, in, out, batch, m, n, full, uv);
}
#endif
/* }==== */

}  // namespace ltf_cu

#endif
