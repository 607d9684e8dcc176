/*
** pool.h: a small thread pool for large kernels. Work is split into
** contiguous ranges; the calling thread takes a share too. Below a size
** threshold everything runs on the calling thread.
*/
#ifndef LTF_POOL_H
#define LTF_POOL_H

#include <stdint.h>
#include <pthread.h>
#include "ltf.h"

#define LTF_POOL_MAX_THREADS LTF_MAX_THREADS

typedef void (*ltf_pool_fn)(void *arg, int64_t begin, int64_t end);

typedef struct ltf_pool {
    int nthreads;                 /* total threads, caller included (>= 1) */
    int started;                  /* workers running (nthreads - 1 once started) */
    pthread_t workers[LTF_POOL_MAX_THREADS];
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    /* the job being run */
    ltf_pool_fn fn;
    void *arg;
    int64_t n, chunk;
    int64_t next;                 /* next chunk start (atomic) */
    int pending;                  /* chunks not finished (atomic) */
    uint64_t generation;          /* bumped per job (atomic) */
    uint64_t start_generation;    /* 'generation' when the workers started */
    int stop;
} ltf_pool;

void ltf_pool_init(ltf_pool *p, int nthreads);
void ltf_pool_destroy(ltf_pool *p);
int  ltf_pool_set_threads(ltf_pool *p, int nthreads);
/* ltf_pool_for's parallel case (the workers, started on first use). */
void ltf_pool_run(ltf_pool *p, int64_t n, int64_t grain, ltf_pool_fn fn, void *arg);
/* Run fn(arg, b, e) over [0, n) split into ranges of at least 'grain'.
** Inline: a small range (every eager op on a few elements) is one direct
** call, without a trip into pool.c. */
static inline void ltf_pool_for(ltf_pool *p, int64_t n, int64_t grain, ltf_pool_fn fn, void *arg) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    if (p->nthreads <= 1 || n < 2 * grain) fn(arg, 0, n);
    else ltf_pool_run(p, n, grain, fn, arg);
}

#endif
