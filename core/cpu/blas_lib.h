/*
** cpu/blas_lib.h: OpenBLAS, loaded on first use. The engine does not link
** OpenBLAS: its load-time constructor (CPU detection, buffers, thread
** server) costs ~3 ms, paid by every `require("tf")` whether or not it ever
** multiplies a matrix. The first kernel that needs BLAS or LAPACK calls
** ltf_blas_lib_load, which fills one process-wide table of function
** pointers (docs/internals.md "OpenBLAS, loaded on first use").
*/
#ifndef LTF_CPU_BLAS_LIB_H
#define LTF_CPU_BLAS_LIB_H

#include <stddef.h>
#include <cblas.h>
#include "../ctx.h"

typedef size_t ltf_flen;   /* gfortran's hidden CHARACTER length */

/* LAPACK's Fortran routines (data pointers are float* or double*), declared
** here with the hidden string-length arguments rather than through LAPACKE
** (no extra row-major copies). [0]: s (float32), [1]: d (float64). */
#define LTF_LAPACK_PAIR(name, args) void (*name[2]) args;

typedef struct ltf_blas_lib {
    __typeof__(cblas_sgemm) *sgemm;
    __typeof__(cblas_dgemm) *dgemm;
    __typeof__(cblas_strsm) *strsm;
    __typeof__(cblas_dtrsm) *dtrsm;
    void (*set_threads)(int);   /* openblas_set_num_threads, NULL in another BLAS */
    int (*get_threads)(void);   /* openblas_get_num_threads, NULL with set_threads */
    LTF_LAPACK_PAIR(potrf, (const char *uplo, const int *n, void *a, const int *lda, int *info, ltf_flen))
    LTF_LAPACK_PAIR(getrf, (const int *m, const int *n, void *a, const int *lda, int *ipiv, int *info))
    LTF_LAPACK_PAIR(getri, (const int *n, void *a, const int *lda, const int *ipiv, void *work,
                            const int *lwork, int *info))
    LTF_LAPACK_PAIR(getrs, (const char *trans, const int *n, const int *nrhs, const void *a, const int *lda,
                            const int *ipiv, void *b, const int *ldb, int *info, ltf_flen))
    LTF_LAPACK_PAIR(geqrf, (const int *m, const int *n, void *a, const int *lda, void *tau, void *work,
                            const int *lwork, int *info))
    LTF_LAPACK_PAIR(orgqr, (const int *m, const int *n, const int *k, void *a, const int *lda,
                            const void *tau, void *work, const int *lwork, int *info))
    LTF_LAPACK_PAIR(gesdd, (const char *jobz, const int *m, const int *n, void *a, const int *lda, void *s,
                            void *u, const int *ldu, void *vt, const int *ldvt, void *work, const int *lwork,
                            int *iwork, int *info, ltf_flen))
    LTF_LAPACK_PAIR(syevd, (const char *jobz, const char *uplo, const int *n, void *a, const int *lda,
                            void *w, void *work, const int *lwork, int *iwork, const int *liwork, int *info,
                            ltf_flen, ltf_flen))
} ltf_blas_lib;
#undef LTF_LAPACK_PAIR

/* The table, loading OpenBLAS on the first call of the process: LTF_OK
** with *lib set, or LTF_ERR_FAILED_PRECONDITION naming 'op', the library
** tried and the loader's reason ("matmul: OpenBLAS could not be loaded
** (...); install libopenblas0 or set LTF_BLAS_LIBRARY"). Any thread. */
LTF_INTERNAL ltf_status ltf_blas_lib_load(ltf_ctx *ctx, const char *op, const ltf_blas_lib **lib);

/* The table after a successful ltf_blas_lib_load (asserted): for code that
** runs on the pool's threads, where no error can be reported. */
LTF_INTERNAL const ltf_blas_lib *ltf_blas_lib_loaded(void);

#endif
