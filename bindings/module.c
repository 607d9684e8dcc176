/*
** module.c: the entry point luaopen_tf_core, the per-lua_State context box,
** error objects, and the argument helpers every binding file uses.
*/
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ltfL.h"

/* The kind of each status: the codes are TensorFlow's numbers (ltf.h), not
** an index, so the table pairs them. */
static const struct { ltf_status st; const char *kind; } kinds[] = {
    {LTF_OK, "OK"},
    {LTF_ERR_UNKNOWN, "UnknownError"},
    {LTF_ERR_INVALID_ARGUMENT, "InvalidArgumentError"},
    {LTF_ERR_NOT_FOUND, "NotFoundError"},
    {LTF_ERR_RESOURCE_EXHAUSTED, "ResourceExhaustedError"},
    {LTF_ERR_FAILED_PRECONDITION, "FailedPreconditionError"},
    {LTF_ERR_OUT_OF_RANGE, "OutOfRangeError"},
    {LTF_ERR_UNIMPLEMENTED, "UnimplementedError"},
    {LTF_ERR_INTERNAL, "InternalError"},
    {LTF_ERR_DATA_LOSS, "DataLossError"},
    {LTF_ERR_UNAVAILABLE, "UnavailableError"},
    {LTF_ERR_TYPE, "TypeError"},
    {LTF_ERR_VALUE, "ValueError"},
    {LTF_ERR_RUNTIME, "RuntimeError"},
};

ltf_status ltfL_status_of_kind(const char *kind) {
    for (unsigned i = 1; kind && i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].kind, kind) == 0) return kinds[i].st;
    return LTF_ERR_INTERNAL;
}

const char *ltfL_kind(ltf_status st) {
    for (unsigned i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].st == st) return kinds[i].kind;
    return "InternalError";
}

/* {==== Errors */
int ltfL_raise(lua_State *L, ltf_status st, const char *msg) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, ltfL_kind(st));
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "message");
    luaL_where(L, 1);       /* level 0 is the C function; 1 is its Lua caller */
    lua_setfield(L, -2, "where");
    luaL_setmetatable(L, LTFL_ERROR);
    return lua_error(L);
}

int ltfL_raisectx(lua_State *L, ltf_status st) {
    /* the kind recorded with the message: a caller whose call returned NULL
    ** passes only a likely one */
    ltf_status last = ltf_ctx_status(ltfL_ctx(L));
    return ltfL_raise(L, last != LTF_OK ? last : st, ltf_ctx_error(ltfL_ctx(L)));
}

int ltfL_raisef(lua_State *L, ltf_status st, const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return ltfL_raise(L, st, buf);
}

static int error_tostring(lua_State *L) {
    lua_getfield(L, 1, "kind");
    lua_getfield(L, 1, "message");
    lua_pushfstring(L, "%s: %s", luaL_optstring(L, -2, "Error"), luaL_optstring(L, -1, ""));
    return 1;
}

/* tf.errors.raise(kind, message): lets Lua modules raise the same objects. */
static int errors_raise(lua_State *L) {
    const char *kind = luaL_checkstring(L, 1);
    const char *msg = luaL_checkstring(L, 2);
    int level = (int)luaL_optinteger(L, 3, 1);
    lua_createtable(L, 0, 3);
    lua_pushstring(L, kind);
    lua_setfield(L, -2, "kind");
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "message");
    luaL_where(L, level);   /* 'level' counts from this C function's caller */
    lua_setfield(L, -2, "where");
    luaL_setmetatable(L, LTFL_ERROR);
    return lua_error(L);
}

int ltfL_argerror(lua_State *L, int idx, const char *op, const char *arg, const char *expected) {
    return ltfL_raisef(L, LTF_ERR_TYPE, "%s: argument %d ('%s') expected %s, got %s", op, idx, arg, expected,
                       luaL_typename(L, idx));
}
/* }==== */

/* {==== Argument helpers */
int ltfL_checkdtype(lua_State *L, int idx, const char *op, const char *arg, int def) {
    int t = lua_type(L, idx);
    if (t == LUA_TNONE || t == LUA_TNIL) {
        if (def >= 0) return def;
        return ltfL_argerror(L, idx, op, arg, "dtype");
    }
    if (t == LUA_TSTRING) {
        ltf_dtype dt;
        if (ltf_dtype_from_name(lua_tostring(L, idx), &dt) == 0) return (int)dt;
        return ltfL_raisef(L, LTF_ERR_TYPE, "%s: argument %d ('%s'): unknown dtype '%s'", op, idx, arg,
                           lua_tostring(L, idx));
    }
    if (t == LUA_TTABLE) {
        lua_getfield(L, idx, "enum");
        int isnum;
        lua_Integer v = lua_tointegerx(L, -1, &isnum);
        lua_pop(L, 1);
        if (isnum && v >= 0 && v < LTF_DTYPE_COUNT) return (int)v;
    }
    return ltfL_argerror(L, idx, op, arg, "dtype");
}

int64_t ltfL_checkaxis(lua_State *L, int idx, const char *op, const char *arg) {
    int isnum;
    lua_Integer v = lua_tointegerx(L, idx, &isnum);
    if (!isnum) {
        ltf_tensor *t = ltfL_testtensor(L, idx);
        if (t && ltf_tensor_is_symbolic(t))
            ltfL_raisef(L, LTF_ERR_VALUE, "%s: '%s' is a symbolic tensor; its value is not known while tracing "
                        "(axes must be Lua integers or concrete tensors)", op, arg);
        if (t && ltf_tensor_rank(t) == 0 &&
            (ltf_tensor_dtype(t) == LTF_DTYPE_INT32 || ltf_tensor_dtype(t) == LTF_DTYPE_INT64)) {
            int64_t x = 0;
            ltfL_readints(L, t, &x, 1);
            v = x;
        } else {
            ltfL_argerror(L, idx, op, arg, "integer axis");
        }
    }
    if (v == 0)
        ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT,
                    "%s: '%s' is 0, but axes are 1-based (1 is the first axis, -1 the last)", op, arg);
    return v > 0 ? v - 1 : v;
}

int ltfL_checkcount(lua_State *L, int idx, const char *op, const char *arg) {
    if (!lua_istable(L, idx)) return ltfL_argerror(L, idx, op, arg, "table");
    size_t n = lua_rawlen(L, idx);
    if (n > LTFL_MAX_COUNT)
        return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' has %zu entries, at most %d allowed", op, arg, n,
                           LTFL_MAX_COUNT);
    return (int)n;
}

int ltfL_checkintlist(lua_State *L, int idx, const char *op, const char *arg, int64_t *out, int max, int single) {
    if (single && lua_isinteger(L, idx)) {
        out[0] = lua_tointeger(L, idx);
        return 1;
    }
    ltf_tensor *t = ltfL_testtensor(L, idx);
    if (t && ltf_tensor_rank(t) <= 1 && !ltf_tensor_is_symbolic(t) &&
        (ltf_tensor_dtype(t) == LTF_DTYPE_INT32 || ltf_tensor_dtype(t) == LTF_DTYPE_INT64)) {
        int64_t n = ltf_tensor_num_elements(t);
        if (n > max) ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' has %lld entries, at most %d allowed", op,
                                 arg, (long long)n, max);
        ltfL_readints(L, t, out, n);
        return (int)n;
    }
    if (!lua_istable(L, idx)) return ltfL_argerror(L, idx, op, arg, single ? "integer or table of integers" : "table of integers");
    int n = ltfL_checkcount(L, idx, op, arg);
    if (n > max) ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' has %d entries, at most %d allowed", op, arg, n, max);
    for (int i = 0; i < n; i++) {
        lua_geti(L, idx, i + 1);
        int isnum;
        lua_Integer v = lua_tointegerx(L, -1, &isnum);
        if (!isnum) {
            ltf_tensor *e = ltfL_testtensor(L, -1);
            if (e && ltf_tensor_rank(e) == 0 && ltf_tensor_dtype(e) == LTF_DTYPE_INT32 && !ltf_tensor_is_symbolic(e)) {
                int32_t x = 0;
                ltfL_readvalues(L, e, &x, sizeof x);
                v = x;
            } else if (e && ltf_tensor_rank(e) == 0 && ltf_tensor_dtype(e) == LTF_DTYPE_INT64 && !ltf_tensor_is_symbolic(e)) {
                int64_t x = 0;
                ltfL_readvalues(L, e, &x, sizeof x);
                v = x;
            } else {
                ltfL_raisef(L, LTF_ERR_TYPE, "%s: argument %d ('%s') expected table of integers, element %d is %s",
                            op, idx, arg, i + 1, luaL_typename(L, -1));
            }
        }
        out[i] = v;
        lua_pop(L, 1);
    }
    return n;
}

void ltfL_checkkeys(lua_State *L, int idx, const char *op, const char *const *keys) {
    if (idx == 0 || lua_isnoneornil(L, idx)) return;
    if (!lua_istable(L, idx)) {
        ltfL_argerror(L, idx, op, "options", "table of options");
        return;
    }
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        int ok = 0;
        if (lua_type(L, -2) == LUA_TSTRING) {
            const char *k = lua_tostring(L, -2);
            for (int i = 0; keys[i]; i++)
                if (strcmp(k, keys[i]) == 0) ok = 1;
        }
        if (!ok) {
            char accepted[256] = "";
            size_t n = 0;
            for (int i = 0; keys[i] && n < sizeof accepted; i++)
                n += (size_t)snprintf(accepted + n, sizeof accepted - n, "%s%s", i ? ", " : "", keys[i]);
            lua_pushvalue(L, -2);
            const char *k = luaL_tolstring(L, -1, NULL);
            ltfL_raisef(L, LTF_ERR_TYPE, "%s: unknown option '%s' (accepted: %s)", op, k, accepted);
        }
        lua_pop(L, 1);
    }
}

int ltfL_getkw(lua_State *L, int idx, const char *key) {
    if (idx == 0 || !lua_istable(L, idx)) {
        lua_pushnil(L);
        return LUA_TNIL;
    }
    return lua_getfield(L, idx, key);
}

void ltfL_register(lua_State *L, const luaL_Reg *fns, const char *ns) {
    int mod = lua_gettop(L);
    if (ns) {
        if (lua_getfield(L, mod, ns) != LUA_TTABLE) {
            lua_pop(L, 1);
            lua_newtable(L);
            lua_pushvalue(L, -1);
            lua_setfield(L, mod, ns);
        }
    }
    for (; fns->name; fns++) {
        lua_getfield(L, LUA_REGISTRYINDEX, "tf.state");
        luaL_getmetatable(L, LTFL_TENSOR);
        lua_pushcclosure(L, fns->func, 2);
        if (ns) {
            lua_pushvalue(L, -1);
            lua_setfield(L, mod + 1, fns->name);
        }
        lua_setfield(L, mod, fns->name);
    }
    lua_settop(L, mod);
}
/* }==== */

/* {==== Context functions */
static int state_gc(lua_State *L) {
    ltfL_state *s = lua_touserdata(L, 1);
    if (s->ctx) ltf_ctx_set_collect_hook(s->ctx, NULL, NULL);   /* a host's context may outlive the state */
    for (int i = 0; i < LTFL_SCALAR_CACHE; i++) {
        ltf_tensor_release(s->scalars[i]);
        s->scalars[i] = NULL;
    }
    free(s->dead_refs);
    s->dead_refs = NULL;
    if (s->ctx) ltf_ctx_release(s->ctx);
    s->ctx = NULL;
    return 0;
}

static int core_memory_stats(lua_State *L) {
    ltf_memory_stats m;
    ltf_ctx_memory_stats(ltfL_ctx(L), &m);
    lua_createtable(L, 0, 4);
    lua_pushinteger(L, (lua_Integer)m.live_bytes);
    lua_setfield(L, -2, "live_bytes");
    lua_pushinteger(L, (lua_Integer)m.peak_bytes);
    lua_setfield(L, -2, "peak_bytes");
    lua_pushinteger(L, (lua_Integer)m.allocations);
    lua_setfield(L, -2, "allocations");
    lua_pushinteger(L, (lua_Integer)m.live_tensors);
    lua_setfield(L, -2, "live_tensors");
    return 1;
}

static int core_reset_peak(lua_State *L) {
    ltf_ctx_reset_peak(ltfL_ctx(L));
    return 0;
}

static int core_set_seed(lua_State *L) {
    lua_Integer s = luaL_checkinteger(L, 1);
    ltf_ctx_set_seed(ltfL_ctx(L), (uint64_t)s);
    return 0;
}

static int core_set_num_threads(lua_State *L) {
    lua_Integer n = luaL_checkinteger(L, 1);
    if (n < 1 || n > LTF_MAX_THREADS)   /* checked before narrowing to int: 2^32 + 1 is not 1 */
        return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "set_num_threads: %lld is outside 1..%d", (long long)n,
                           LTF_MAX_THREADS);
    ltf_status st = ltf_ctx_set_num_threads(ltfL_ctx(L), (int)n);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

static int core_num_threads(lua_State *L) {
    lua_pushinteger(L, ltf_ctx_num_threads(ltfL_ctx(L)));
    return 1;
}

/* tf.timestamp(): wall-clock seconds since the Unix epoch (CLOCK_REALTIME), a
** float64 scalar tensor, as TensorFlow's */
static int core_timestamp(lua_State *L) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double s = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    ltf_tensor *t = ltf_tensor_from_data(ltfL_ctx(L), LTF_DTYPE_FLOAT64, 0, NULL, &s);
    if (!t) return ltfL_raisectx(L, LTF_ERR_RESOURCE_EXHAUSTED);
    ltfL_pushtensor(L, t);
    return 1;
}

/* core.monotonic(): monotonic seconds (sub-microsecond), a Lua number: what
** the benchmarks and fit's progress bar time with */
static int core_monotonic(lua_State *L) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
    return 1;
}

/* core.half_round(v, bfloat16): the Lua number 'v' rounded to float16 (or
** bfloat16 when the second argument is true), as a Lua number: what the
** tensor formatter compares shortest digits against */
static int core_half_round(lua_State *L) {
    double v = luaL_checknumber(L, 1);
    lua_pushnumber(L, lua_toboolean(L, 2) ? ltf_bfloat16_to_float(ltf_bfloat16_from_double(v))
                                          : ltf_float16_to_float(ltf_float16_from_double(v)));
    return 1;
}

static int core_op_names(lua_State *L) {
    int n = ltf_op_count();
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushstring(L, ltf_op_name(i));
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int core_set_memory_limit(lua_State *L);
static int core_memory_limit(lua_State *L);

static const luaL_Reg core_fns[] = {
    {"memory_stats", core_memory_stats},
    {"reset_peak_memory", core_reset_peak},
    {"set_seed", core_set_seed},
    {"set_num_threads", core_set_num_threads},
    {"num_threads", core_num_threads},
    {"op_names", core_op_names},
    {"timestamp", core_timestamp},
    {"set_memory_limit", core_set_memory_limit},
    {"memory_limit", core_memory_limit},
    {NULL, NULL}
};

static const luaL_Reg core_internal[] = {
    {"raise", errors_raise},   /* tf.errors.raise is the public form */
    {"monotonic", core_monotonic},
    {"half_round", core_half_round},
    {NULL, NULL}
};
/* }==== */

/* The emergency collection of the memory budget (ltf_ctx_set_memory_limit):
** a full collection frees the tensors only unreachable boxes hold. Lua does
** not re-enter its collector (a finalizer's allocation gets nothing). */
static void state_collect(ltf_ctx *ctx, void *ud) {
    ltfL_state *s = ud;
    (void)ctx;
    lua_gc(s->L ? s->L : s->main, LUA_GCCOLLECT);
}

static int core_set_memory_limit(lua_State *L) {
    lua_Integer n = luaL_checkinteger(L, 1);
    if (n < 0) return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "set_memory_limit: %lld bytes is negative", (long long)n);
    ltf_ctx_set_memory_limit(ltfL_ctx(L), (size_t)n);
    return 0;
}

static int core_memory_limit(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)ltf_ctx_memory_limit(ltfL_ctx(L)));
    return 1;
}

LTF_API int luaopen_tf_core(lua_State *L) {
    ltfL_state *s = lua_newuserdatauv(L, sizeof *s, 0);
    memset(s, 0, sizeof *s);
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, state_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    /* a host's context (ltf_lua_open) or a new one */
    if (lua_getfield(L, LUA_REGISTRYINDEX, LTFL_HOST_CTX) == LUA_TLIGHTUSERDATA) {
        s->ctx = lua_touserdata(L, -1);
        ltf_ctx_retain(s->ctx);
    } else {
        s->ctx = ltf_ctx_new();
    }
    lua_pop(L, 1);
    if (!s->ctx) return luaL_error(L, "tf: cannot create the engine context (out of memory)");
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    s->main = lua_tothread(L, -1);
    lua_pop(L, 1);
    ltf_ctx_set_collect_hook(s->ctx, state_collect, s);
    lua_setfield(L, LUA_REGISTRYINDEX, "tf.state");

    luaL_newmetatable(L, LTFL_ERROR);
    lua_pushcfunction(L, error_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);

    luaL_newmetatable(L, LTFL_TENSOR);
    lua_pop(L, 1);

    lua_newtable(L);                       /* the module */
    ltfL_register(L, core_fns, NULL);
    ltfL_register(L, core_internal, LTFL_INTERNAL);
    luaL_getmetatable(L, LTFL_ERROR);
    lua_setfield(L, -2, "Error");
    lua_pushstring(L, ltf_version());
    lua_setfield(L, -2, "version");
    ltfL_open_tensor(L);
    ltfL_open_elementwise(L);
    ltfL_open_reduce(L);
    ltfL_open_movement(L);
    ltfL_open_nn(L);
    ltfL_open_random(L);
    ltfL_open_autodiff(L);
    ltfL_open_variable(L);
    ltfL_open_graph(L);
    ltfL_open_control(L);
    ltfL_open_linalg(L);
    ltfL_open_image(L);
    ltfL_open_indexing(L);
    ltfL_open_sort(L);
    ltfL_open_strings(L);
    ltfL_open_data(L);
    ltfL_open_checkpoint(L);
    ltfL_open_optim(L);
    ltfL_open_device(L);
    ltfL_open_rnn(L);
    ltfL_open_tfrecord(L);
    ltfL_open_example(L);
    ltfL_open_summary(L);
    ltfL_open_io(L);
    ltfL_open_zip(L);
    ltfL_open_collective(L);
    ltfL_open_saved_model(L);
    ltfL_open_onnx_export(L);
    ltfL_open_onnx(L);
    return 1;
}
