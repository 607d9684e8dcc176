/*
** readpool.h: the reader pool of tf.data's file datasets (bindings/readpool.c).
** A pool is a fixed set of pthreads (interleave's num_parallel_calls,
** TFRecordDataset's num_parallel_reads; one for a reader on its own) that
** advance the jobs attached to it: file readers that read, check and decode
** records ahead of the Lua thread into bounded buffers. Nothing of a
** lua_State is touched by a pool thread. Jobs are served in the order they
** were attached (the order an interleave will consume them), a job the
** consumer is blocked on first. Everything of a job that both sides touch
** is guarded by the pool's mutex.
*/
#ifndef LTFL_READPOOL_H
#define LTFL_READPOOL_H
#include <pthread.h>
#include "ltfL.h"

typedef struct ltfL_rpool ltfL_rpool;
typedef struct ltfL_rjob ltfL_rjob;

struct ltfL_rjob {
    /* under the pool lock: whether a step can run now (buffer not full, not at the end) */
    int (*runnable)(ltfL_rjob *j);
    /* without the lock, on a pool thread: one step (results in the job's own scratch fields) */
    void (*produce)(ltfL_rjob *j);
    /* under the lock: publish the step's results (or drop them when j->stop) */
    void (*publish)(ltfL_rjob *j);
    ltfL_rpool *pool;
    ltfL_rjob *next, *prev;
    int busy;      /* a pool thread runs its step */
    int waiting;   /* the consumer is blocked on it */
    int stop;      /* detached or being detached */
    int quiet;     /* set by publish: no consumer needs waking for this step */
};

struct ltfL_rpool {
    pthread_mutex_t mu;
    pthread_cond_t work;    /* pool threads wait for a runnable job */
    pthread_cond_t ready;   /* consumers wait for results (and detach for a step to end) */
    int nthreads, nstarted, quit, refs;
    int idle;               /* threads waiting on 'work' (signalled only then) */
    int ready_waiters;      /* waits on 'ready' under way (signalled only then) */
    pthread_t *th;
    ltfL_rjob *head, *tail;
};

/* A pool of n >= 1 threads, one reference held by the caller; NULL without memory or threads. */
ltfL_rpool *ltfL_rpool_new(int n);
void ltfL_rpool_release(ltfL_rpool *p);   /* the last reference joins the threads */
/* Attach a job (retains the pool) and let the threads know. */
void ltfL_rpool_attach(ltfL_rpool *p, ltfL_rjob *j);
/* Stop a job: waits for a running step to end, unlinks it, releases the pool. */
void ltfL_rpool_detach(ltfL_rjob *j);
/* Under the lock: block the consumer until 'j' publishes something (or another job: callers loop). */
void ltfL_rpool_wait(ltfL_rjob *j);
/* Under the lock: a job became runnable (the consumer took from its buffer). */
void ltfL_rpool_kick(ltfL_rpool *p);
/* Live pool threads of this process (specs: none left after an iterator is collected). */
int ltfL_rpool_live_threads(void);

/* The pool of the read_pool handle at stack index idx; NULL for nil or none. */
ltfL_rpool *ltfL_optpool(lua_State *L, int idx);
void ltfL_open_readpool(lua_State *L);
void ltfL_open_textlines(lua_State *L);   /* bindings/textlines.c, opened by ltfL_open_readpool */
void ltfL_open_mapparallel(lua_State *L); /* bindings/mapparallel.c, likewise */
#endif
