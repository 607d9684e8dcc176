/*
** mapparallel.c: Dataset.map's num_parallel_calls for C-only work
** (lua/tf/data/init.lua). The map function's traced graph runs on a pool of
** threads (bindings/readpool.c), one engine context per lane, on several
** elements at once: only what the thread contract of docs/embedding.md
** allows to cross threads, a shared graph (ltf_graph_share: no variables,
** random or print nodes, no control flow, no string constants) and shared
** numeric/bool input tensors (ltf_tensor_share); outputs are shared by the
** lane that made them. Anything else is refused (map_run returns nil and a
** reason) and the map runs its elements on the Lua thread as before.
**   map_runner(n) -> handle of n lanes
**   map_run(handle, graph, {{x1, ...}, {x1, ...}, ...}) -> {{y1, ...}, ...} in
**       the elements' order (a failed element: {n = 0, err =, msg =}), or nil, reason
**   map_raise(status, message): raises that error (a failed element's turn)
*/
#include <stdlib.h>
#include <string.h>
#include "ltfL.h"
#include "readpool.h"

#define LTFL_MAPRUN "tf.data.MapRunner"
#define LTFL_GRAPH_MT "tf.Graph"   /* bindings/graph.c's box: { ltf_graph *g } */
#define MAXIO 64

typedef struct lane {
    ltfL_rjob job;       /* first: the pool's view */
    struct runner *r;
    int index;
    int todo;            /* under the pool's lock */
    ltf_ctx *ctx;
} lane;

typedef struct runner {
    ltfL_rpool *pool;
    int n;
    lane *lanes;
    /* the batch (set before the lanes are kicked, read-only for them) */
    ltf_graph *g;
    int nel, nin, maxout;
    ltf_tensor **in;     /* nel * nin */
    ltf_tensor **out;    /* nel * maxout */
    int *nout;
    ltf_status *st;
    char **msg;
    int pending;         /* lanes not done, under the pool's lock */
} runner;

typedef struct runner_box { runner *r; } runner_box;

static int lane_runnable(ltfL_rjob *j) { return ((lane *)j)->todo; }

static void lane_produce(ltfL_rjob *j) {
    lane *l = (lane *)j;
    runner *r = l->r;
    for (int e = l->index; e < r->nel; e += r->n) {
        ltf_tensor **out = r->out + (size_t)e * r->maxout;
        int n = 0;
        ltf_status st = ltf_graph_run(l->ctx, r->g, r->in + (size_t)e * r->nin, r->nin, out, r->maxout, &n);
        for (int k = 0; k < n && st == LTF_OK; k++) st = ltf_tensor_share(l->ctx, out[k]);
        r->nout[e] = n;
        r->st[e] = st;
        if (st) {
            const char *m = ltf_ctx_error(l->ctx);
            r->msg[e] = strdup(m && *m ? m : "map: the function failed on a worker thread");
        }
    }
}

static void lane_publish(ltfL_rjob *j) {
    lane *l = (lane *)j;
    l->todo = 0;
    l->r->pending--;
}

static void runner_free(runner *r) {
    if (!r) return;
    for (int i = 0; i < r->n; i++) {
        ltfL_rpool_detach(&r->lanes[i].job);
        if (r->lanes[i].ctx) ltf_ctx_release(r->lanes[i].ctx);
    }
    ltfL_rpool_release(r->pool);
    free(r->lanes);
    free(r);
}

static int runner_gc(lua_State *L) {
    runner_box *b = luaL_checkudata(L, 1, LTFL_MAPRUN);
    runner_free(b->r);
    b->r = NULL;
    return 0;
}

static int l_map_runner(lua_State *L) {
    lua_Integer n = luaL_checkinteger(L, 1);
    if (n < 1 || n > 256) return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "map: num_parallel_calls must be 1..256");
    runner_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->r = NULL;
    luaL_setmetatable(L, LTFL_MAPRUN);
    runner *r = calloc(1, sizeof *r);
    if (!r) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "map: out of memory");
    b->r = r;
    r->lanes = calloc((size_t)n, sizeof *r->lanes);
    r->pool = ltfL_rpool_new((int)n);
    if (!r->lanes || !r->pool) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "map: cannot start the worker threads");
    for (int i = 0; i < n; i++) {
        lane *l = &r->lanes[i];
        l->r = r;
        l->index = i;
        l->job.runnable = lane_runnable;
        l->job.produce = lane_produce;
        l->job.publish = lane_publish;
        l->ctx = ltf_ctx_new();
        if (!l->ctx) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "map: out of memory for a context");
        ltf_ctx_set_num_threads(l->ctx, 1);
        r->n = i + 1;
        ltfL_rpool_attach(r->pool, &l->job);
    }
    return 1;
}

/* nil, reason (the caller runs the elements itself) */
static int refuse(lua_State *L, const char *why) {
    lua_pushnil(L);
    lua_pushstring(L, why);
    return 2;
}

static int l_map_run(lua_State *L) {
    runner_box *rb = luaL_checkudata(L, 1, LTFL_MAPRUN);
    runner *r = rb->r;
    if (!r) return ltfL_raise(L, LTF_ERR_FAILED_PRECONDITION, "map: the runner is closed");
    struct { ltf_graph *g; } *gb = luaL_testudata(L, 2, LTFL_GRAPH_MT);
    if (!gb || !gb->g) return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "map_run: expected a graph");
    luaL_checktype(L, 3, LUA_TTABLE);
    ltf_ctx *ctx = ltfL_ctx(L);
    int nel = (int)luaL_len(L, 3);
    if (nel < 1) {
        lua_newtable(L);
        return 1;
    }
    if (ltf_graph_share(ctx, gb->g) != LTF_OK) return refuse(L, ltf_ctx_error(ctx));
    int maxout = ltf_graph_num_outputs(gb->g);
    lua_geti(L, 3, 1);
    int nin = (int)luaL_len(L, -1);
    lua_pop(L, 1);
    if (nin > MAXIO || maxout > MAXIO) return refuse(L, "too many inputs or outputs");
    /* the batch's arrays live in one userdata (collected with it) */
    size_t nin_all = (size_t)nel * (size_t)(nin ? nin : 1), nout_all = (size_t)nel * (size_t)(maxout ? maxout : 1);
    size_t bytes = sizeof(ltf_tensor *) * (nin_all + nout_all) + (sizeof(int) + sizeof(ltf_status) + sizeof(char *)) * (size_t)nel;
    unsigned char *mem = lua_newuserdatauv(L, bytes, 0);
    memset(mem, 0, bytes);
    int memidx = lua_gettop(L);
    ltf_tensor **in = (ltf_tensor **)mem, **out = in + nin_all;
    int *nout = (int *)(out + nout_all);
    ltf_status *st = (ltf_status *)(nout + nel);
    char **msg = (char **)(st + nel);
    for (int e = 0; e < nel; e++) {
        lua_geti(L, 3, e + 1);
        if (lua_type(L, -1) != LUA_TTABLE || (int)luaL_len(L, -1) != nin) return refuse(L, "elements of different arity");
        for (int k = 0; k < nin; k++) {
            lua_geti(L, -1, k + 1);
            ltf_tensor *t = ltfL_testtensor(L, -1);
            lua_pop(L, 1);
            if (!t || ltf_tensor_is_symbolic(t) || ltf_tensor_dtype(t) == LTF_DTYPE_STRING ||
                ltf_tensor_device(t) != LTF_DEVICE_CPU)
                return refuse(L, "an input is not a concrete numeric CPU tensor");
            in[(size_t)e * nin + k] = t;   /* lent: the table keeps it alive */
        }
        lua_pop(L, 1);
    }
    for (size_t i = 0; i < (size_t)nel * nin; i++)
        if (ltf_tensor_share(ctx, in[i]) != LTF_OK) return refuse(L, ltf_ctx_error(ctx));
    /* hand the batch to the lanes and wait for all of them */
    ltfL_rpool *p = r->pool;
    pthread_mutex_lock(&p->mu);
    r->g = gb->g;
    r->nel = nel;
    r->nin = nin;
    r->maxout = maxout;
    r->in = in;
    r->out = out;
    r->nout = nout;
    r->st = st;
    r->msg = msg;
    r->pending = 0;
    for (int i = 0; i < r->n && i < nel; i++) {
        r->lanes[i].todo = 1;
        r->pending++;
    }
    ltfL_rpool_kick(p);
    while (r->pending > 0) ltfL_rpool_wait(&r->lanes[0].job);
    r->in = r->out = NULL;
    pthread_mutex_unlock(&p->mu);
    /* results in order; a failed element is {n = 0, err = status, msg = message}, raised by the
    ** caller (map_raise) when its turn comes, after the elements before it */
    lua_createtable(L, nel, 0);
    for (int e = 0; e < nel; e++) {
        if (st[e]) {
            for (int k = 0; k < nout[e]; k++) ltf_tensor_release(out[(size_t)e * maxout + k]);
            lua_createtable(L, 0, 3);
            lua_pushinteger(L, 0);
            lua_setfield(L, -2, "n");
            lua_pushinteger(L, st[e]);
            lua_setfield(L, -2, "err");
            lua_pushstring(L, msg[e] ? msg[e] : "map: failed on a worker thread");
            lua_setfield(L, -2, "msg");
            free(msg[e]);
            lua_rawseti(L, -2, e + 1);
            continue;
        }
        lua_createtable(L, nout[e], 1);
        for (int k = 0; k < nout[e]; k++) {
            ltfL_pushtensor(L, out[(size_t)e * maxout + k]);   /* takes the reference */
            out[(size_t)e * maxout + k] = NULL;
            lua_rawseti(L, -2, k + 1);
        }
        lua_pushinteger(L, nout[e]);
        lua_setfield(L, -2, "n");
        lua_rawseti(L, -2, e + 1);
    }
    (void)memidx;
    return 1;
}

/* map_raise(status, message): raise a worker's error in the caller, with its kind */
static int l_map_raise(lua_State *L) {
    lua_Integer st = luaL_checkinteger(L, 1);
    const char *m = luaL_checkstring(L, 2);
    return ltfL_raise(L, st > 0 ? (ltf_status)st : LTF_ERR_INTERNAL, m);
}

static const luaL_Reg fns[] = {
    {"map_raise", l_map_raise},
    {"map_runner", l_map_runner},
    {"map_run", l_map_run},
    {NULL, NULL}
};

void ltfL_open_mapparallel(lua_State *L) {
    luaL_newmetatable(L, LTFL_MAPRUN);
    lua_pushcfunction(L, runner_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    ltfL_register(L, fns, LTFL_INTERNAL);
}
