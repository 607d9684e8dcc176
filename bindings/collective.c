/*
** collective.c: the raw collective functions (tf.core, internal) that
** lua/tf/distribute/collective.lua builds tf.distribute.collective on:
** setting the context's communicator (handed over by tf/mpi.so as a light
** userdata pointing at its ltf_comm), and running the collective ops
** (ltf_ops/collective.h) with their attributes already checked by Lua.
*/
#include <string.h>
#include "ltfL.h"
#include "ltf_comm.h"

/* core.collective_set(comm_lightuserdata | nil): the context's communicator */
static int coll_set(lua_State *L) {
    const ltf_comm *c = NULL;
    if (!lua_isnoneornil(L, 1)) {
        if (!lua_islightuserdata(L, 1)) return ltfL_argerror(L, 1, "collective_set", "comm", "light userdata or nil");
        c = lua_touserdata(L, 1);
    }
    ltf_status st = ltf_ctx_set_comm(ltfL_ctx(L), c);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

/* core.collective_info() -> rank, size, name ("self" without a communicator) */
static int coll_info(lua_State *L) {
    const ltf_comm *c = ltf_ctx_comm(ltfL_ctx(L));
    lua_pushinteger(L, c ? c->rank : 0);
    lua_pushinteger(L, c ? c->size : 1);
    lua_pushstring(L, c && c->name ? c->name : "self");
    return 3;
}

/* core.collective_all_reduce({tensors...}, op) -> reduced tensors (one call) */
static int coll_all_reduce(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer n = (lua_Integer)lua_rawlen(L, 1);
    if (n < 1 || n > 4096) return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "all_reduce: 1 to 4096 tensors per call, got %d", (int)n);
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = luaL_checkinteger(L, 2);
    ltf_tensor **in = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)n, 0);
    luaL_checkstack(L, (int)n + 8, "all_reduce: too many tensors");
    for (lua_Integer i = 0; i < n; i++) {
        lua_rawgeti(L, 1, i + 1);
        in[i] = ltfL_totensor(L, lua_gettop(L), -1, "all_reduce", "value");   /* kept on the stack */
    }
    return ltfL_runn(L, LTF_OP_ALL_REDUCE, in, (int)n, &at);
}

/* core.collective_all_reduce_buckets(list, n, op, bucket_bytes) -> out, calls:
** entries 1..n of 'list' (nil entries skipped) packed into buckets of
** consecutive tensors of one dtype of at most bucket_bytes (a larger tensor
** alone), one all_reduce op per bucket; 'out' has the results at the same
** indices. */
static int coll_all_reduce_buckets(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_Integer n = luaL_checkinteger(L, 2);
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = luaL_checkinteger(L, 3);
    lua_Integer limit = luaL_checkinteger(L, 4);
    if (n < 0 || n > LTFL_MAX_COUNT) return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "all_reduce_buckets: bad count %d", (int)n);
    lua_settop(L, 4);
    lua_createtable(L, (int)n, 0);   /* 5: out */
    int outi = 5;
    /* the bucket: its tensors (kept alive at stack slots) and their indices */
    enum { MAXB = 4096 };
    ltf_tensor **bt = lua_newuserdatauv(L, sizeof(ltf_tensor *) * MAXB, 0);
    lua_Integer *bi = lua_newuserdatauv(L, sizeof(lua_Integer) * MAXB, 0);
    ltf_tensor **res = lua_newuserdatauv(L, sizeof(ltf_tensor *) * MAXB, 0);
    int base = lua_gettop(L);
    int nb = 0, calls = 0;
    size_t bytes = 0;
    int dtype = -1;
    ltf_ctx *ctx = ltfL_ctx(L);
    for (lua_Integer i = 1; i <= n + 1; i++) {
        ltf_tensor *t = NULL;
        size_t tb = 0;
        if (i <= n) {
            lua_rawgeti(L, 1, i);
            if (lua_isnil(L, -1)) {
                lua_pop(L, 1);
                continue;
            }
            int slot = lua_gettop(L);
            t = ltfL_totensor(L, slot, -1, "all_reduce_buckets", "tensor");
            if (lua_gettop(L) > slot) lua_replace(L, slot);   /* one slot per bucket tensor */
            int64_t ne = 1;
            for (int d = 0; d < ltf_tensor_rank(t); d++) ne *= ltf_tensor_dims(t)[d] > 0 ? ltf_tensor_dims(t)[d] : 0;
            tb = (size_t)ne * ltf_dtype_size(ltf_tensor_dtype(t));
        }
        if (nb > 0 && (!t || (int)ltf_tensor_dtype(t) != dtype || bytes + tb > (size_t)limit || nb == MAXB)) {
            int got = 0;
            ltf_status st = ltf_op_run(ctx, LTF_OP_ALL_REDUCE, bt, nb, &at, res, nb, &got);
            if (st != LTF_OK) return ltfL_raisectx(L, st);
            for (int k = 0; k < got; k++) {
                ltfL_box *b = ltfL_newbox(L);
                ltfL_fillbox(L, b, res[k]);
                lua_rawseti(L, outi, bi[k]);
            }
            calls++;
            /* the bucket's inputs leave the stack (the pending tensor, if any, stays on top) */
            if (t) {
                lua_rotate(L, base + 1, 1);   /* the new tensor to base+1 */
                lua_settop(L, base + 1);
            } else {
                lua_settop(L, base);
            }
            nb = 0;
            bytes = 0;
        }
        if (!t) break;
        luaL_checkstack(L, 4, "all_reduce_buckets");
        bt[nb] = t;
        bi[nb] = i;
        nb++;
        bytes += tb;
        dtype = ltf_tensor_dtype(t);
    }
    lua_pushvalue(L, outi);
    lua_pushinteger(L, calls);
    return 2;
}

static int coll_run1(lua_State *L, ltf_op_id op, const char *name, int64_t i0, int64_t i1) {
    ltf_tensor *x = ltfL_totensor(L, 1, -1, name, "value");
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = i0;
    at.i[1] = i1;
    return ltfL_run1(L, op, &x, 1, &at);
}

/* core.collective_broadcast(t, root) */
static int coll_broadcast(lua_State *L) {
    return coll_run1(L, LTF_OP_BROADCAST, "broadcast", luaL_checkinteger(L, 2), 0);
}
/* core.collective_all_gather(t) */
static int coll_all_gather(lua_State *L) {
    const ltf_comm *c = ltf_ctx_comm(ltfL_ctx(L));
    return coll_run1(L, LTF_OP_ALL_GATHER, "all_gather", c ? c->size : 1, 0);
}
/* core.collective_reduce_scatter(t, op) */
static int coll_reduce_scatter(lua_State *L) {
    const ltf_comm *c = ltf_ctx_comm(ltfL_ctx(L));
    return coll_run1(L, LTF_OP_REDUCE_SCATTER, "reduce_scatter", luaL_checkinteger(L, 2), c ? c->size : 1);
}

/* core.collective_check(what, text): the communicator's agreement check */
static int coll_check(lua_State *L) {
    const char *what = luaL_checkstring(L, 1);
    const char *text = luaL_checkstring(L, 2);
    const ltf_comm *c = ltf_ctx_comm(ltfL_ctx(L));
    if (!c || c->size == 1) return 0;
    char err[1024];
    err[0] = '\0';
    ltf_status st = c->check(c->ud, what, text, err, sizeof err);
    if (st != LTF_OK) return ltfL_raise(L, st, err);
    return 0;
}

/* core.collective_barrier() */
static int coll_barrier(lua_State *L) {
    const ltf_comm *c = ltf_ctx_comm(ltfL_ctx(L));
    if (!c || c->size == 1) return 0;
    char err[1024];
    err[0] = '\0';
    ltf_status st = c->barrier(c->ud, err, sizeof err);
    if (st != LTF_OK) return ltfL_raise(L, st, err);
    return 0;
}

static const luaL_Reg coll_fns[] = {
    {"collective_set", coll_set},
    {"collective_info", coll_info},
    {"collective_all_reduce", coll_all_reduce},
    {"collective_broadcast", coll_broadcast},
    {"collective_all_gather", coll_all_gather},
    {"collective_reduce_scatter", coll_reduce_scatter},
    {"collective_all_reduce_buckets", coll_all_reduce_buckets},
    {"collective_check", coll_check},
    {"collective_barrier", coll_barrier},
    {NULL, NULL}
};

void ltfL_open_collective(lua_State *L) { ltfL_register(L, coll_fns, LTFL_INTERNAL); }
