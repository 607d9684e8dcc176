/*
** embed.c: the host side of the Lua bindings (core/include/ltf_lua.h):
** loading luatf with a host's context, tensors and graphs in and out of a
** lua_State, calling Lua functions and tf.fns from C.
**
** Nothing here may raise into the host: each entry point runs its work as
** a C function under lua_pcall ('protect'), and that function converts a
** Lua error into a status and text while still protected (reading an error
** object may itself run out of memory). Only non-allocating API calls
** (lua_checkstack, lua_pushcfunction of a light function, lua_pushvalue,
** lua_pushlightuserdata, lua_pcall, lua_pop) run outside.
*/
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ltfL.h"
#include "ltf_lua.h"

#define LTFL_GRAPH "tf.Graph"   /* bindings/graph.c: a box holding one ltf_graph * */
typedef struct graph_box {
    ltf_graph *g;
} graph_box;

static const char not_loaded[] = "luatf is not loaded in this lua_State (call ltf_lua_open first)";

/* One protected host call: the work function, its inputs and results. */
typedef struct host_call {
    lua_CFunction work;
    int nres;                 /* values the work leaves on the host's stack */
    ltf_status st;
    char msg[1024];
    ltf_ctx *ctx;             /* the state's context, found while protected */
    /* arguments and results of the entry points */
    ltf_ctx *open_ctx;
    ltf_tensor *tensor;
    ltf_graph *graph;
    const char *path;
    ltf_tensor *const *in;
    int nin, maxout, nout;
    ltf_tensor **out;
} host_call;

static ltfL_state *find_state(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, "tf.state");
    ltfL_state *s = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return s;
}

/* Fail from inside a work function: raised as a tf error object, so the
** protected entry reads kind and text back like any other error. */
static int fail(lua_State *L, ltf_status st, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    lua_createtable(L, 0, 3);
    lua_pushstring(L, ltfL_kind(st));
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, buf);
    lua_setfield(L, -2, "message");
    lua_pushinteger(L, st);
    lua_setfield(L, -2, "host_status");   /* this API's own check: its status as given */
    return lua_error(L);
}

/* The error value on top as status + text in 'h'. */
static void read_error(lua_State *L, host_call *h, int rc) {
    if (rc == LUA_ERRMEM || (lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "not enough memory") == 0)) {
        h->st = LTF_ERR_RESOURCE_EXHAUSTED;
        snprintf(h->msg, sizeof h->msg, "out of memory in Lua: %s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "");
        lua_pop(L, 1);
        return;
    }
    if (lua_type(L, -1) == LUA_TTABLE) {
        lua_getfield(L, -1, "kind");
        lua_getfield(L, -2, "message");
        lua_getfield(L, -3, "where");
        const char *kind = lua_tostring(L, -3), *msg = lua_tostring(L, -2), *where = lua_tostring(L, -1);
        lua_getfield(L, -4, "host_status");
        int own = lua_isinteger(L, -1);
        lua_pop(L, 1);
        if (kind && msg) {
            /* a script's TypeError or ValueError (no TensorFlow code) reaches
            ** the host as INVALID_ARGUMENT, its kind heading the text, as
            ** TensorFlow's py_func reports a Python function's; this API's
            ** own checks keep their status */
            int py = !own && (strcmp(kind, "TypeError") == 0 || strcmp(kind, "ValueError") == 0);
            h->st = strcmp(kind, "UnknownError") == 0 ? LTF_ERR_UNKNOWN
                  : py ? LTF_ERR_INVALID_ARGUMENT : ltfL_status_of_kind(kind);
            snprintf(h->msg, sizeof h->msg, "%s%s%s%s", py ? kind : "", py ? ": " : "", where ? where : "", msg);
            lua_pop(L, 3);
            return;
        }
        lua_pop(L, 3);
    }
    h->st = LTF_ERR_UNKNOWN;
    snprintf(h->msg, sizeof h->msg, "%s", luaL_tolstring(L, -1, NULL));
    lua_pop(L, 1);
}

/* Runs protected: [h, args...] -> the work's 'nres' results, or as many nils. */
static int entry(lua_State *L) {
    host_call *h = lua_touserdata(L, 1);
    ltfL_state *s = find_state(L);
    h->ctx = s ? s->ctx : NULL;
    int nargs = lua_gettop(L);
    lua_pushcfunction(L, h->work);
    lua_insert(L, 1);
    int rc = lua_pcall(L, nargs, h->nres, 0);
    if (rc != LUA_OK) {
        read_error(L, h, rc);
        lua_settop(L, 0);
        for (int i = 0; i < h->nres; i++) lua_pushnil(L);
    }
    return h->nres;
}

/* Run 'h->work' protected with copies of the values at 'args' (absolute
** indices): its results stay on the stack on success only. */
static ltf_status protect(lua_State *L, host_call *h, const int *args, int nargs, int nres) {
    h->st = LTF_OK;
    h->msg[0] = '\0';
    h->nres = nres;
    if (!lua_checkstack(L, nargs + nres + 4)) {
        h->st = LTF_ERR_RESOURCE_EXHAUSTED;
        snprintf(h->msg, sizeof h->msg, "Lua stack overflow");
    } else {
        lua_pushcfunction(L, entry);
        lua_pushlightuserdata(L, h);
        for (int i = 0; i < nargs; i++) lua_pushvalue(L, args[i]);
        int rc = lua_pcall(L, 1 + nargs, nres, 0);
        if (rc != LUA_OK) {   /* reading the error failed: memory */
            lua_pop(L, 1);
            h->st = rc == LUA_ERRMEM ? LTF_ERR_RESOURCE_EXHAUSTED : LTF_ERR_INTERNAL;
            snprintf(h->msg, sizeof h->msg, "%s while handling a Lua error",
                     rc == LUA_ERRMEM ? "out of memory" : "error");
        } else if (h->st != LTF_OK) {
            lua_pop(L, nres);
        }
    }
    if (h->st != LTF_OK && h->ctx) ltf_ctx_set_error(h->ctx, h->st, h->msg);
    return h->st;
}

static int absidx(lua_State *L, int idx) {
    return (idx > 0 || idx <= LUA_REGISTRYINDEX) ? idx : lua_gettop(L) + idx + 1;
}

static ltfL_state *need_state(lua_State *L) {
    ltfL_state *s = find_state(L);
    if (!s || !s->ctx) fail(L, LTF_ERR_FAILED_PRECONDITION, "%s", not_loaded);
    return s;
}

/* Push a box with a new reference to 't' (the Tensor metatable from the registry). */
static void push_box(lua_State *L, ltfL_state *s, ltf_tensor *t) {
    ltf_ctx *owner = ltf_tensor_context(t);
    if (owner != s->ctx && !ltf_tensor_is_shared(t))
        fail(L, LTF_ERR_FAILED_PRECONDITION, "push_tensor: the tensor belongs to another context; share it first "
             "(ltf_tensor_share)");
    ltfL_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->t = NULL;
    luaL_setmetatable(L, LTFL_TENSOR);
    b->t = ltf_tensor_retain(t);
}

/* The tensor at 'idx' (box or __tf_tensor object), lent; raises a TypeError. */
static ltf_tensor *check_tensor(lua_State *L, int idx, const char *what, int k) {
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) == LUA_TTABLE && luaL_getmetafield(L, idx, "__tf_tensor") != LUA_TNIL) {
        lua_pushvalue(L, idx);
        lua_call(L, 1, 1);
        lua_replace(L, idx);
    }
    ltfL_box *b = luaL_testudata(L, idx, LTFL_TENSOR);
    if (!b) fail(L, LTF_ERR_TYPE, "%s %d is a %s, expected a tensor", what, k, luaL_typename(L, idx));
    if (!b->t) fail(L, LTF_ERR_VALUE, "%s %d: tensor was freed", what, k);
    return b->t;
}

/* {==== Loading */
static int w_open(lua_State *L) {
    host_call *h = lua_touserdata(L, 1);
    ltfL_state *s = find_state(L);
    if (s && s->ctx && s->ctx != h->open_ctx)
        fail(L, LTF_ERR_FAILED_PRECONDITION, "ltf_lua_open: luatf is already loaded in this lua_State with another context");
    lua_pushlightuserdata(L, h->open_ctx);
    lua_setfield(L, LUA_REGISTRYINDEX, LTFL_HOST_CTX);
    luaL_requiref(L, "tf.core", luaopen_tf_core, 0);
    lua_pushnil(L);
    lua_setfield(L, LUA_REGISTRYINDEX, LTFL_HOST_CTX);
#ifdef LTF_INSTALL_LUADIR
    /* after the host's own path: the Lua files next to this shared library
    ** (an installed tree, wherever it was moved), then where they were
    ** configured to be installed */
    char dir[4096] = "";
#ifdef LTF_LIB_TO_LUADIR
    Dl_info info;
    if (LTF_LIB_TO_LUADIR[0] && dladdr((void *)ltf_lua_open, &info) && info.dli_fname) {
        const char *slash = strrchr(info.dli_fname, '/');
        if (slash) snprintf(dir, sizeof dir, "%.*s/%s", (int)(slash - info.dli_fname), info.dli_fname, LTF_LIB_TO_LUADIR);
    }
#endif
    lua_getglobal(L, "package");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "path");
        lua_pushfstring(L, "%s;%s/?.lua;%s/?/init.lua;" LTF_INSTALL_LUADIR "/?.lua;" LTF_INSTALL_LUADIR "/?/init.lua",
                        lua_isstring(L, -1) ? lua_tostring(L, -1) : "", dir, dir);
        lua_setfield(L, -3, "path");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
#endif
    lua_getglobal(L, "require");
    lua_pushliteral(L, "tf");
    lua_call(L, 1, 0);
    return 0;
}

ltf_status ltf_lua_open(lua_State *L, ltf_ctx *ctx) {
    if (!ctx) return LTF_ERR_INVALID_ARGUMENT;
    host_call h = {0};
    h.work = w_open;
    h.open_ctx = ctx;
    ltf_status st = protect(L, &h, NULL, 0, 0);
    if (st != LTF_OK) ltf_ctx_set_error(ctx, st, h.msg);
    return st;
}

static int w_context(lua_State *L) {
    host_call *h = lua_touserdata(L, 1);
    (void)h;
    return 0;
}

ltf_ctx *ltf_lua_context(lua_State *L) {
    host_call h = {0};
    h.work = w_context;
    protect(L, &h, NULL, 0, 0);
    return h.ctx;
}

const char *ltf_lua_error(lua_State *L) {
    ltf_ctx *ctx = ltf_lua_context(L);
    return ctx ? ltf_ctx_error(ctx) : not_loaded;
}
/* }==== */

/* {==== Tensors */
static int w_push_tensor(lua_State *L) {
    host_call *h = lua_touserdata(L, 1);
    ltfL_state *s = need_state(L);
    if (!h->tensor) fail(L, LTF_ERR_INVALID_ARGUMENT, "push_tensor: tensor is NULL");
    push_box(L, s, h->tensor);
    return 1;
}

ltf_status ltf_lua_push_tensor(lua_State *L, ltf_tensor *t) {
    host_call h = {0};
    h.work = w_push_tensor;
    h.tensor = t;
    return protect(L, &h, NULL, 0, 1);
}

static int w_to_tensor(lua_State *L) {
    host_call *h = lua_touserdata(L, 1);
    need_state(L);
    ltf_tensor *t = check_tensor(L, 2, "value", 1);
    h->tensor = ltf_tensor_retain(t);   /* nothing raises after this */
    return 0;
}

ltf_status ltf_lua_to_tensor(lua_State *L, int idx, ltf_tensor **out) {
    *out = NULL;
    host_call h = {0};
    h.work = w_to_tensor;
    int a = absidx(L, idx);
    ltf_status st = protect(L, &h, &a, 1, 0);
    if (st == LTF_OK) *out = h.tensor;
    return st;
}
/* }==== */

/* {==== Calling */
static int w_get_function(lua_State *L) {
    host_call *h = lua_touserdata(L, 1);
    const char *p = h->path;
    lua_pushglobaltable(L);
    while (1) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (!lua_istable(L, -1) && !(lua_getmetatable(L, -1) && (lua_pop(L, 1), 1)))
            fail(L, LTF_ERR_NOT_FOUND, "'%s': '%.*s' is looked up in a %s", h->path, (int)n, p, luaL_typename(L, -1));
        lua_pushlstring(L, p, n);
        lua_gettable(L, -2);
        lua_remove(L, -2);
        if (lua_isnil(L, -1)) fail(L, LTF_ERR_NOT_FOUND, "'%s' is not defined", h->path);
        if (!dot) break;
        p = dot + 1;
    }
    int callable = lua_isfunction(L, -1);
    if (!callable && luaL_getmetafield(L, -1, "__call") != LUA_TNIL) {
        callable = 1;
        lua_pop(L, 1);
    }
    if (!callable) fail(L, LTF_ERR_TYPE, "'%s' is a %s, not a function", h->path, luaL_typename(L, -1));
    return 1;
}

ltf_status ltf_lua_get_function(lua_State *L, const char *path) {
    host_call h = {0};
    h.work = w_get_function;
    h.path = path ? path : "";
    return protect(L, &h, NULL, 0, 1);
}

/* [h, f] -> calls f(tensors...), checks and retains its results */
static int w_call(lua_State *L) {
    host_call *h = lua_touserdata(L, 1);
    ltfL_state *s = need_state(L);
    if (h->nin < 0 || h->maxout < 0) fail(L, LTF_ERR_INVALID_ARGUMENT, "call: negative count");
    luaL_checkstack(L, h->nin + 4, "too many inputs");
    int base = lua_gettop(L);   /* f */
    lua_pushvalue(L, 2);
    for (int i = 0; i < h->nin; i++) {
        if (!h->in[i]) fail(L, LTF_ERR_INVALID_ARGUMENT, "call: input %d is NULL", i + 1);
        push_box(L, s, h->in[i]);
    }
    lua_State *saved = s->L;
    s->L = L;
    int rc = lua_pcall(L, h->nin, LUA_MULTRET, 0);
    s->L = saved;
    if (rc != LUA_OK) return lua_error(L);
    int n = lua_gettop(L) - base;
    if (n > h->maxout) fail(L, LTF_ERR_INVALID_ARGUMENT, "call: the function returned %d values, room for %d", n, h->maxout);
    for (int i = 0; i < n; i++) check_tensor(L, base + 1 + i, "result", i + 1);
    for (int i = 0; i < n; i++) h->out[i] = ltf_tensor_retain(((ltfL_box *)lua_touserdata(L, base + 1 + i))->t);
    h->nout = n;
    return 0;
}

ltf_status ltf_lua_call(lua_State *L, int fidx, ltf_tensor *const *in, int nin, ltf_tensor **out, int maxout,
                        int *nout) {
    *nout = 0;
    host_call h = {0};
    h.work = w_call;
    h.in = in;
    h.nin = nin;
    h.out = out;
    h.maxout = maxout;
    int a = absidx(L, fidx);
    ltf_status st = protect(L, &h, &a, 1, 0);
    if (st == LTF_OK) *nout = h.nout;
    return st;
}

ltf_status ltf_lua_call_global(lua_State *L, const char *path, ltf_tensor *const *in, int nin, ltf_tensor **out,
                               int maxout, int *nout) {
    *nout = 0;
    ltf_status st = ltf_lua_get_function(L, path);
    if (st != LTF_OK) return st;
    st = ltf_lua_call(L, -1, in, nin, out, maxout, nout);
    lua_pop(L, 1);
    return st;
}
/* }==== */

/* {==== Graphs */
static int w_to_graph(lua_State *L) {
    host_call *h = lua_touserdata(L, 1);
    need_state(L);
    if (lua_type(L, 2) == LUA_TTABLE) {   /* a ConcreteFunction holds its graph in _G */
        lua_getfield(L, 2, "_G");
        lua_replace(L, 2);
    }
    graph_box *b = luaL_testudata(L, 2, LTFL_GRAPH);
    if (!b || !b->g)
        fail(L, LTF_ERR_TYPE, "to_graph: expected a concrete function (f:get_concrete_function(...)) or a graph, got %s",
             luaL_typename(L, 2));
    h->graph = ltf_graph_retain(b->g);
    return 0;
}

ltf_status ltf_lua_to_graph(lua_State *L, int idx, ltf_graph **out) {
    *out = NULL;
    host_call h = {0};
    h.work = w_to_graph;
    int a = absidx(L, idx);
    ltf_status st = protect(L, &h, &a, 1, 0);
    if (st == LTF_OK) *out = h.graph;
    return st;
}

/* The function ltf_lua_push_graph makes; upvalues: state, Tensor metatable, graph box. */
static int graph_call(lua_State *L) {
    graph_box *gb = lua_touserdata(L, lua_upvalueindex(3));
    ltf_graph *g = gb->g;
    int nin = lua_gettop(L);
    ltf_tensor *in_stack[16], *out_stack[16];
    ltf_tensor **in = nin <= 16 ? in_stack : lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)nin, 0);
    for (int i = 0; i < nin; i++) in[i] = ltfL_checktensor(L, i + 1, "graph", "input");
    int nmax = ltf_graph_num_outputs(g);
    ltf_tensor **out = nmax <= 16 ? out_stack : lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)nmax, 0);
    luaL_checkstack(L, nmax + 4, "graph outputs");
    ltfL_state *s = ltfL_S(L);
    lua_State *saved = s->L;
    s->L = L;
    int n = 0;
    ltf_status st = ltf_graph_run(s->ctx, g, in, nin, out, nmax, &n);
    s->L = saved;
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    for (int i = 0; i < n; i++) ltfL_pushtensor(L, out[i]);
    return n;
}

static int w_push_graph(lua_State *L) {
    host_call *h = lua_touserdata(L, 1);
    ltfL_state *s = need_state(L);
    if (!h->graph) fail(L, LTF_ERR_INVALID_ARGUMENT, "push_graph: graph is NULL");
    if (ltf_graph_context(h->graph) != s->ctx && !ltf_graph_is_shared(h->graph))
        fail(L, LTF_ERR_FAILED_PRECONDITION, "push_graph: the graph belongs to another context; share it first "
             "(ltf_graph_share)");
    lua_getfield(L, LUA_REGISTRYINDEX, "tf.state");
    luaL_getmetatable(L, LTFL_TENSOR);
    graph_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->g = NULL;
    luaL_setmetatable(L, LTFL_GRAPH);
    b->g = ltf_graph_retain(h->graph);
    lua_pushcclosure(L, graph_call, 3);
    return 1;
}

ltf_status ltf_lua_push_graph(lua_State *L, ltf_graph *g) {
    host_call h = {0};
    h.work = w_push_graph;
    h.graph = g;
    return protect(L, &h, NULL, 0, 1);
}
/* }==== */

void *ltf_lua_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    const ltf_allocator *a = ud;
    if (!ptr) osize = 0;   /* Lua passes a type tag then */
    if (nsize == 0) {
        if (ptr) a->free(a->ud, ptr, osize);
        return NULL;
    }
    return ltf_allocator_realloc(a, ptr, osize, nsize, 16);
}
