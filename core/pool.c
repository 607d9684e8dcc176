/*
** pool.c: the context's thread pool (see pool.h). Workers start lazily on
** the first large job. Chunks are claimed under the pool's mutex (a chunk is
** at least LTF_CPU_GRAIN elements, so the lock costs nothing measurable), and
** the caller waits only for chunks that were claimed to finish: a worker
** that is slow to wake never delays a job, and a late one finds nothing left.
** Workers spin briefly after a job (large kernels tend to come in runs) and
** then sleep on a condition variable.
*/
#include "pool.h"

#include <stdlib.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define cpu_relax() _mm_pause()
#else
#define cpu_relax() ((void)0)
#endif

#define SPIN_ROUNDS 4000   /* about 10-30 us of pause instructions */

/* Claim the next chunk of job 'gen' under the lock; 0 when none is left. */
static int claim(ltf_pool *p, uint64_t gen, int64_t *b, int64_t *e, ltf_pool_fn *fn, void **arg) {
    int ok = 0;
    pthread_mutex_lock(&p->mu);
    if (p->generation == gen && p->next < p->n) {
        *b = p->next;
        *e = p->next + p->chunk < p->n ? p->next + p->chunk : p->n;
        p->next = *e;
        *fn = p->fn;
        *arg = p->arg;
        p->pending++;                 /* claimed, not finished */
        ok = 1;
    }
    pthread_mutex_unlock(&p->mu);
    return ok;
}

static void finish(ltf_pool *p) {
    pthread_mutex_lock(&p->mu);
    if (--p->pending == 0 && p->next >= p->n) pthread_cond_broadcast(&p->done);
    pthread_mutex_unlock(&p->mu);
}

static void run_job(ltf_pool *p, uint64_t gen) {
    int64_t b, e;
    ltf_pool_fn fn;
    void *arg;
    while (claim(p, gen, &b, &e, &fn, &arg)) {
        fn(arg, b, e);
        finish(p);
    }
}

static void *worker_main(void *arg) {
    ltf_pool *p = arg;
    uint64_t seen = p->start_generation;
    for (;;) {
        uint64_t gen;
        int spins = 0;
        while ((gen = __atomic_load_n(&p->generation, __ATOMIC_ACQUIRE)) == seen &&
               !__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE) && spins < SPIN_ROUNDS) {
            cpu_relax();
            spins++;
        }
        if (gen == seen) {
            pthread_mutex_lock(&p->mu);
            while (p->generation == seen && !p->stop) pthread_cond_wait(&p->wake, &p->mu);
            gen = p->generation;
            int stop = p->stop;
            pthread_mutex_unlock(&p->mu);
            if (stop) return NULL;
        }
        if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) return NULL;
        seen = gen;
        run_job(p, gen);
    }
}

void ltf_pool_init(ltf_pool *p, int nthreads) {
    p->nthreads = nthreads < 1 ? 1 : (nthreads > LTF_POOL_MAX_THREADS ? LTF_POOL_MAX_THREADS : nthreads);
    p->started = 0;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    p->fn = NULL;
    p->arg = NULL;
    p->n = p->chunk = p->next = 0;
    p->pending = 0;
    p->generation = 0;
    p->start_generation = 0;
    p->stop = 0;
}

static void stop_workers(ltf_pool *p) {
    if (!p->started) return;
    pthread_mutex_lock(&p->mu);
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++) pthread_join(p->workers[i], NULL);
    p->started = 0;
    p->stop = 0;
}

void ltf_pool_destroy(ltf_pool *p) {
    stop_workers(p);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
}

int ltf_pool_set_threads(ltf_pool *p, int nthreads) {
    if (nthreads < 1 || nthreads > LTF_POOL_MAX_THREADS) return -1;
    stop_workers(p);
    p->nthreads = nthreads;
    return 0;
}

static int start_workers(ltf_pool *p) {
    p->start_generation = p->generation;
    while (p->started < p->nthreads - 1) {
        if (pthread_create(&p->workers[p->started], NULL, worker_main, p) != 0) break;
        p->started++;
    }
    return p->started;
}

void ltf_pool_run(ltf_pool *p, int64_t n, int64_t grain, ltf_pool_fn fn, void *arg) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    if (p->nthreads <= 1 || n < 2 * grain || (!p->started && start_workers(p) == 0)) {
        fn(arg, 0, n);
        return;
    }
    int parts = p->started + 1;
    int64_t chunk = (n + parts - 1) / parts;
    if (chunk < grain) chunk = grain;
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->n = n;
    p->chunk = chunk;
    p->next = 0;
    p->pending = 0;
    uint64_t gen = p->generation + 1;
    __atomic_store_n(&p->generation, gen, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    run_job(p, gen);
    /* every chunk is claimed now; wait for the claimed ones to finish */
    pthread_mutex_lock(&p->mu);
    while (p->pending > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
