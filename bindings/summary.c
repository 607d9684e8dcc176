/*
** summary.c: tf.summary's engine functions (lua/tf/summary.lua): event-file
** writers by id, the write_summary op (eager or traced) and graph events.
*/
#include <stdlib.h>
#include <string.h>
#include "ltfL.h"

/* core.summary_open(logdir, suffix|nil, max_queue, flush_millis) -> id, path */
static int sm_open(lua_State *L) {
    const char *logdir = luaL_checkstring(L, 1);
    const char *suffix = luaL_optstring(L, 2, NULL);
    int max_queue = (int)luaL_checkinteger(L, 3);
    lua_Integer flush = luaL_checkinteger(L, 4);
    int64_t id;
    ltfL_state *s = ltfL_S(L);
    ltf_status st = ltf_summary_writer_open(s->ctx, logdir, suffix, max_queue, flush, &id);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    lua_pushinteger(L, id);
    lua_pushstring(L, ltf_summary_writer_path(s->ctx, id));
    return 2;
}

/* core.summary_write(id, step, data, tag, description, kind, count, rate[, condition]):
** the write_summary op (a node when an input is symbolic or a graph is being built) */
static int sm_write(lua_State *L) {
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = luaL_checkinteger(L, 1);
    a.i[1] = luaL_checkinteger(L, 6);
    a.i[2] = luaL_checkinteger(L, 7);
    a.i[3] = luaL_checkinteger(L, 8);
    ltf_tensor *in[5];
    in[0] = ltfL_totensor(L, 2, LTF_DTYPE_INT64, "write_summary", "step");
    in[1] = ltfL_totensor(L, 3, -1, "write_summary", "data");
    in[2] = ltfL_totensor(L, 4, LTF_DTYPE_STRING, "write_summary", "tag");
    in[3] = ltfL_totensor(L, 5, LTF_DTYPE_STRING, "write_summary", "description");
    int n = 4;
    if (!lua_isnoneornil(L, 9)) in[n++] = ltfL_totensor(L, 9, LTF_DTYPE_BOOL, "write_summary", "condition");
    ltfL_state *s = ltfL_S(L);
    ltf_tensor *out[1];
    int nout = 0;
    ltf_status st = ltf_op_run(s->ctx, LTF_OP_WRITE_SUMMARY, in, n, &a, out, 1, &nout);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

static int sm_flush(lua_State *L) {
    ltfL_state *s = ltfL_S(L);
    ltf_status st = ltf_summary_flush(s->ctx, luaL_checkinteger(L, 1));
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

static int sm_close(lua_State *L) {
    ltfL_state *s = ltfL_S(L);
    ltf_status st = ltf_summary_close(s->ctx, luaL_checkinteger(L, 1));
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

/* core.summary_graph(id, step, nodes): nodes = { {name=, op=, inputs={...},
** dtype=<ltf_dtype>|nil, shape={...}|nil (dims, -1 unknown)}, ... } */
static int sm_graph(lua_State *L) {
    int64_t id = luaL_checkinteger(L, 1);
    int64_t step = luaL_checkinteger(L, 2);
    luaL_checktype(L, 3, LUA_TTABLE);
    int n = (int)luaL_len(L, 3);
    ltf_summary_node *nodes = lua_newuserdatauv(L, sizeof *nodes * (size_t)(n + 1), 0);
    int keep = lua_gettop(L);
    /* per node: inputs array and dims array in userdata kept on the stack */
    for (int i = 0; i < n; i++) {
        luaL_checkstack(L, 8, "summary_graph");
        lua_geti(L, 3, i + 1);
        int t = lua_gettop(L);
        ltf_summary_node *nd = &nodes[i];
        lua_getfield(L, t, "name");
        nd->name = luaL_checkstring(L, -1);
        lua_getfield(L, t, "op");
        nd->op = luaL_checkstring(L, -1);
        lua_getfield(L, t, "inputs");
        int ni = lua_istable(L, -1) ? (int)luaL_len(L, -1) : 0;
        const char **ins = lua_newuserdatauv(L, sizeof *ins * (size_t)(ni + 1), 0);
        for (int k = 0; k < ni; k++) {
            lua_geti(L, -2, k + 1);
            ins[k] = luaL_checkstring(L, -1);
            lua_rotate(L, t, 1);   /* keep the string below the node's values */
            t++;
        }
        nd->inputs = ins;
        nd->ninputs = ni;
        lua_getfield(L, t, "dtype");
        nd->dtype = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : -1;
        lua_pop(L, 1);
        lua_getfield(L, t, "shape");
        if (lua_istable(L, -1)) {
            int r = (int)luaL_len(L, -1);
            int64_t *d = lua_newuserdatauv(L, sizeof *d * (size_t)(r + 1), 0);
            for (int k = 0; k < r; k++) {
                lua_geti(L, -2, k + 1);
                d[k] = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : -1;
                lua_pop(L, 1);
            }
            nd->rank = r;
            nd->dims = d;
        } else {
            nd->rank = lua_isboolean(L, -1) ? -1 : -2;   /* shape = false: unknown rank */
            nd->dims = NULL;
        }
        /* the node's table, its strings and arrays stay referenced: move them all under 'keep' */
        (void)keep;
    }
    ltfL_state *s = ltfL_S(L);
    void *bytes;
    size_t len;
    ltf_status st = ltf_summary_graph_def(s->ctx, n, nodes, &bytes, &len);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    if (id > 0) st = ltf_summary_write_graph(s->ctx, id, step, bytes, len);
    lua_pushlstring(L, bytes, len);
    free(bytes);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 1;
}

static const luaL_Reg sm_internal[] = {
    {"summary_open", sm_open},
    {"summary_write", sm_write},
    {"summary_flush", sm_flush},
    {"summary_close", sm_close},
    {"summary_graph", sm_graph},
    {NULL, NULL}
};

void ltfL_open_summary(lua_State *L) {
    ltfL_register(L, sm_internal, LTFL_INTERNAL);
}
