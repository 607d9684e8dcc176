/*
** readpool.c: the reader pool of tf.data's file datasets (readpool.h) and
** its Lua handle: tf.core.internal.read_pool(n) -> pool, read_pool_threads()
** -> live pool threads in the process. lua/tf/data/files.lua makes one per
** interleave iterator (num_parallel_calls threads) and hands it to the
** readers its function's datasets open (bindings/tfrecord.c, bindings/csv.c).
*/
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ltfL.h"
#include "readpool.h"

#define LTFL_RPOOL "tf.data.ReadPool"

static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static int live_threads;

int ltfL_rpool_live_threads(void) {
    pthread_mutex_lock(&live_mu);
    int n = live_threads;
    pthread_mutex_unlock(&live_mu);
    return n;
}

static void live_add(int d) {
    pthread_mutex_lock(&live_mu);
    live_threads += d;
    pthread_mutex_unlock(&live_mu);
}

/* Under the lock: the job to advance next, or NULL. */
static ltfL_rjob *pick(ltfL_rpool *p) {
    for (ltfL_rjob *j = p->head; j; j = j->next)
        if (j->waiting && !j->busy && !j->stop && j->runnable(j)) return j;
    for (ltfL_rjob *j = p->head; j; j = j->next)
        if (!j->busy && !j->stop && j->runnable(j)) return j;
    return NULL;
}

static void *pool_main(void *arg) {
    ltfL_rpool *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->quit) {
        ltfL_rjob *j = pick(p);
        if (!j) {
            p->idle++;
            pthread_cond_wait(&p->work, &p->mu);
            p->idle--;
            continue;
        }
        j->busy = 1;
        pthread_mutex_unlock(&p->mu);
        j->produce(j);
        pthread_mutex_lock(&p->mu);
        j->quiet = 0;
        j->publish(j);
        j->busy = 0;
        if (p->ready_waiters && (!j->quiet || j->stop)) pthread_cond_broadcast(&p->ready);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

ltfL_rpool *ltfL_rpool_new(int n) {
    if (n < 1) n = 1;
    ltfL_rpool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->th = calloc((size_t)n, sizeof *p->th);
    if (!p->th) {
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->ready, NULL);
    p->nthreads = n;
    p->refs = 1;
    for (int i = 0; i < n; i++) {
        if (pthread_create(&p->th[i], NULL, pool_main, p) != 0) break;
        p->nstarted++;
    }
    if (p->nstarted == 0) {
        p->refs = 0;
        ltfL_rpool_release(p);
        return NULL;
    }
    live_add(p->nstarted);
    return p;
}

void ltfL_rpool_release(ltfL_rpool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    int last = --p->refs <= 0;
    if (last) {
        p->quit = 1;
        pthread_cond_broadcast(&p->work);
    }
    pthread_mutex_unlock(&p->mu);
    if (!last) return;
    for (int i = 0; i < p->nstarted; i++) pthread_join(p->th[i], NULL);
    live_add(-p->nstarted);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->work);
    pthread_cond_destroy(&p->ready);
    free(p->th);
    free(p);
}

void ltfL_rpool_attach(ltfL_rpool *p, ltfL_rjob *j) {
    pthread_mutex_lock(&p->mu);
    p->refs++;
    j->pool = p;
    j->next = NULL;
    j->prev = p->tail;
    if (p->tail) p->tail->next = j;
    else p->head = j;
    p->tail = j;
    if (p->idle) pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->mu);
}

void ltfL_rpool_detach(ltfL_rjob *j) {
    ltfL_rpool *p = j->pool;
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    j->stop = 1;
    while (j->busy) {
        p->ready_waiters++;
        pthread_cond_wait(&p->ready, &p->mu);
        p->ready_waiters--;
    }
    if (j->prev) j->prev->next = j->next;
    else p->head = j->next;
    if (j->next) j->next->prev = j->prev;
    else p->tail = j->prev;
    j->next = j->prev = NULL;
    j->pool = NULL;
    pthread_mutex_unlock(&p->mu);
    ltfL_rpool_release(p);
}

void ltfL_rpool_wait(ltfL_rjob *j) {
    ltfL_rpool *p = j->pool;
    j->waiting = 1;
    if (p->idle) pthread_cond_broadcast(&p->work);   /* the threads serve a waited-on job first */
    p->ready_waiters++;
    pthread_cond_wait(&p->ready, &p->mu);
    p->ready_waiters--;
    j->waiting = 0;
}

void ltfL_rpool_kick(ltfL_rpool *p) {
    if (p->idle) pthread_cond_broadcast(&p->work);
}

/* {==== Lua handle */
typedef struct rpool_box { ltfL_rpool *p; } rpool_box;

static int pool_gc(lua_State *L) {
    rpool_box *b = luaL_checkudata(L, 1, LTFL_RPOOL);
    ltfL_rpool_release(b->p);
    b->p = NULL;
    return 0;
}

/* read_pool(n) -> a pool of n threads */
static int l_read_pool(lua_State *L) {
    lua_Integer n = luaL_checkinteger(L, 1);
    if (n < 1 || n > 1024) return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "read_pool: thread count must be 1..1024");
    rpool_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->p = NULL;
    luaL_setmetatable(L, LTFL_RPOOL);
    b->p = ltfL_rpool_new((int)n);
    if (!b->p) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "tf.data: cannot start the reader threads");
    return 1;
}

/* read_pool_wait(pool, ms): block until a job of the pool publishes something, at most ms milliseconds
** (interleave's deterministic = false when no input is ready; the caller checks again) */
static int l_read_pool_wait(lua_State *L) {
    rpool_box *b = luaL_checkudata(L, 1, LTFL_RPOOL);
    lua_Integer ms = luaL_checkinteger(L, 2);
    if (!b->p || ms <= 0) return 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)(ms / 1000);
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
    pthread_mutex_lock(&b->p->mu);
    b->p->ready_waiters++;
    pthread_cond_timedwait(&b->p->ready, &b->p->mu, &ts);
    b->p->ready_waiters--;
    pthread_mutex_unlock(&b->p->mu);
    return 0;
}

static int l_read_pool_threads(lua_State *L) {
    lua_pushinteger(L, ltfL_rpool_live_threads());
    return 1;
}

static const luaL_Reg fns[] = {
    {"read_pool", l_read_pool},
    {"read_pool_threads", l_read_pool_threads},
    {"read_pool_wait", l_read_pool_wait},
    {"read_pool_close", pool_gc},
    {NULL, NULL}
};

/* The pool of the handle at 'idx', NULL for nil/none. */
ltfL_rpool *ltfL_optpool(lua_State *L, int idx) {
    if (lua_isnoneornil(L, idx)) return NULL;
    rpool_box *b = luaL_checkudata(L, idx, LTFL_RPOOL);
    return b->p;
}

void ltfL_open_readpool(lua_State *L) {
    luaL_newmetatable(L, LTFL_RPOOL);
    lua_pushcfunction(L, pool_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    ltfL_register(L, fns, LTFL_INTERNAL);
    ltfL_open_textlines(L);
    ltfL_open_mapparallel(L);
}
/* }==== */
