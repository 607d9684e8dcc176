/*
** cpu/blas.c: the one place that calls OpenBLAS. Wraps cblas_sgemm and
** cblas_dgemm for row-major operands (through blas_lib.h: OpenBLAS is
** loaded on the first product, not when the engine loads), handles the degenerate sizes BLAS
** rejects (a zero dimension, leading dimensions of 0) and refuses sizes that
** do not fit BLAS's 32-bit integers.
**
** Threads: OpenBLAS runs threads of its own, whose count luatf sets itself
** before each GEMM (openblas_set_num_threads, NULL in blas_lib's table with
** another CBLAS): ONE thread for small products (m n k <= 2^20), where
** waking OpenBLAS's workers costs more than it saves; above that, the
** context's pool size, but no more threads than there are cores the other
** processes leave free. With a core taken by another process, OpenBLAS's
** spinning workers (sched_yield) slow every step several times; so the free
** cores are measured, from /proc/stat's idle time plus this process's own
** CPU time, every 200 ms at most (cores_free). Until a first measurement
** (and where /proc/stat cannot be read) products up to 2^24 run on one
** thread. OpenBLAS keeps one count for the process, so it is only set when
** it differs from the current one; OPENBLAS_NUM_THREADS caps the count,
** LTF_BLAS_SMALL_MNK (read once) moves the one-thread threshold.
*/
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "cpu.h"
#include "blas_lib.h"
#include "../ctx.h"

/* Products up to 64 x 128 x 128 always run on one OpenBLAS thread; up to
** 128 x 256 x 512 too while the free cores are not known yet. */
#define LTF_BLAS_SMALL_MNK ((int64_t)1 << 20)
#define LTF_BLAS_UNSURE_MNK ((int64_t)1 << 24)
#define LOAD_SAMPLE_NS 200000000LL

/* {==== Free cores: how many cores the machine's other processes leave us.
** One estimate for the process (OpenBLAS's thread count is per process
** too); whoever finds it stale re-samples, the others read the last value. */
static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t load_next_ns;          /* when to sample again (atomic) */
static int load_free = -1;            /* free cores, -1 unknown (atomic) */
static int64_t load_wall, load_self;  /* last sample, under load_mu */
static double load_idle;
static int load_have;

static int64_t now_ns(clockid_t c) {
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0) return 0;
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Idle time of all CPUs, in seconds, from /proc/stat's "cpu" line (idle +
** iowait); -1 when it cannot be read. */
static double idle_seconds(void) {
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return -1;
    unsigned long long v[5] = {0};
    int got = fscanf(f, "cpu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4]);
    fclose(f);
    long hz = sysconf(_SC_CLK_TCK);
    if (got != 5 || hz <= 0) return -1;
    return (double)(v[3] + v[4]) / (double)hz;
}

static void load_sample(int64_t wall) {
    double idle = idle_seconds();
    int64_t self = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    if (idle < 0) return;   /* stays unknown */
    if (load_have && wall > load_wall) {
        double dt = (double)(wall - load_wall) * 1e-9;
        double avail = (idle - load_idle) / dt + (double)(self - load_self) * 1e-9 / dt;
        int free_cores = (int)(avail + 0.35);
        __atomic_store_n(&load_free, free_cores < 1 ? 1 : free_cores, __ATOMIC_RELAXED);
    }
    load_wall = wall;
    load_self = self;
    load_idle = idle;
    load_have = 1;
}

/* The free cores, -1 while unknown. */
static int cores_free(void) {
    int64_t wall = now_ns(CLOCK_MONOTONIC_COARSE);
    if (wall >= __atomic_load_n(&load_next_ns, __ATOMIC_RELAXED) && pthread_mutex_trylock(&load_mu) == 0) {
        if (wall >= load_next_ns) {
            load_sample(now_ns(CLOCK_MONOTONIC));
            __atomic_store_n(&load_next_ns, wall + LOAD_SAMPLE_NS, __ATOMIC_RELAXED);
        }
        pthread_mutex_unlock(&load_mu);
    }
    return __atomic_load_n(&load_free, __ATOMIC_RELAXED);
}
/* }==== */

/* OpenBLAS's thread count for a product of m n k on up to 'n' threads.
** The environment is read once; the race of two first calls is benign (both
** store the same values). */
static void blas_threads(const ltf_blas_lib *lib, int64_t mnk, int n) {
    static int looked, cap;
    static int64_t small;
    if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
        const char *env = getenv("OPENBLAS_NUM_THREADS");
        int c = env ? atoi(env) : 0;
        __atomic_store_n(&cap, c > 0 ? c : 0, __ATOMIC_RELAXED);
        const char *sm = getenv("LTF_BLAS_SMALL_MNK");
        __atomic_store_n(&small, sm ? (int64_t)atoll(sm) : LTF_BLAS_SMALL_MNK, __ATOMIC_RELAXED);
        __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
    }
    if (!lib->set_threads) return;
    if (mnk <= __atomic_load_n(&small, __ATOMIC_RELAXED)) {
        n = 1;
    } else if (n > 1) {
        int f = cores_free();
        if (f < 0 && mnk <= LTF_BLAS_UNSURE_MNK) n = 1;
        else if (f > 0 && n > f) n = f;
    }
    int c = __atomic_load_n(&cap, __ATOMIC_RELAXED);
    if (c > 0 && n > c) n = c;
    if (lib->get_threads() != n) lib->set_threads(n);
}

static void scale_c(ltf_dtype dt, int64_t m, int64_t n, double beta, void *c, int64_t ldc);

static int fits(int64_t v) { return v >= 0 && v <= INT_MAX; }

ltf_status ltf_cpu_blas_serial(ltf_ctx *ctx, const char *op) {
    const ltf_blas_lib *lib;
    ltf_status st = ltf_blas_lib_load(ctx, op, &lib);
    if (st == LTF_OK) blas_threads(lib, 0, 1);
    return st;
}

int ltf_cpu_blas_fits(int64_t m, int64_t n, int64_t k) { return fits(m) && fits(n) && fits(k); }

void ltf_cpu_blas_gemm_here(ltf_dtype dt, int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                            const void *a, int64_t lda, const void *b, int64_t ldb, double beta, void *c,
                            int64_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
        scale_c(dt, m, n, beta, c, ldc);
        return;
    }
    const ltf_blas_lib *lib = ltf_blas_lib_loaded();
    enum CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
    if (dt == LTF_DTYPE_FLOAT32)
        lib->sgemm(CblasRowMajor, TA, TB, (int)m, (int)n, (int)k, (float)alpha, a, (int)lda, b, (int)ldb,
                    (float)beta, c, (int)ldc);
    else
        lib->dgemm(CblasRowMajor, TA, TB, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb,
                    beta, c, (int)ldc);
}

/* C = beta * C for an m x n block with leading dimension 'ldc' (k == 0). */
static void scale_c(ltf_dtype dt, int64_t m, int64_t n, double beta, void *c, int64_t ldc) {
    for (int64_t i = 0; i < m; i++) {
        if (dt == LTF_DTYPE_FLOAT32) {
            float *row = (float *)c + i * ldc;
            if (beta == 0) memset(row, 0, sizeof(float) * (size_t)n);
            else for (int64_t j = 0; j < n; j++) row[j] *= (float)beta;
        } else {
            double *row = (double *)c + i * ldc;
            if (beta == 0) memset(row, 0, sizeof(double) * (size_t)n);
            else for (int64_t j = 0; j < n; j++) row[j] *= beta;
        }
    }
}

ltf_status ltf_cpu_blas_gemm(ltf_ctx *ctx, const char *op, ltf_dtype dt, int ta, int tb,
                             int64_t m, int64_t n, int64_t k, double alpha,
                             const void *a, int64_t lda, const void *b, int64_t ldb,
                             double beta, void *c, int64_t ldc) {
    LTF_ASSERT(dt == LTF_DTYPE_FLOAT32 || dt == LTF_DTYPE_FLOAT64);
    if (m == 0 || n == 0) return LTF_OK;
    if (k == 0) {
        scale_c(dt, m, n, beta, c, ldc);
        return LTF_OK;
    }
    if (!fits(m) || !fits(n) || !fits(k) || !fits(lda) || !fits(ldb) || !fits(ldc))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: matrix of %lld x %lld x %lld is too large for BLAS (at most %d per dimension)",
                        op, (long long)m, (long long)k, (long long)n, INT_MAX);
    /* BLAS rejects lda < columns of the stored matrix (>= 1 here) */
    LTF_ASSERT(lda >= (ta ? m : k) && ldb >= (tb ? k : n) && ldc >= n);
    const ltf_blas_lib *lib;
    ltf_status st = ltf_blas_lib_load(ctx, op, &lib);
    if (st != LTF_OK) return st;
    blas_threads(lib, m * n * k, ctx->pool.nthreads);
    ltf_cpu_blas_gemm_here(dt, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return LTF_OK;
}
