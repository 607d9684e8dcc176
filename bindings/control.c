/*
** control.c: tf.print. The print op runs eagerly or as a graph node (at
** every call of a traced function); its output goes through a Lua
** formatter (core.set_print_formatter, installed by lua/tf/format.lua).
*/
#include <string.h>
#include "ltfL.h"

#define PRINT_FORMATTER "tf.print_formatter"

/* The print hook: formatter(opts, t1, ..., tn), opts = {sep=, ["end"]=,
** summarize=, stream=}, writes the values (lua/tf/format.lua). */
static ltf_status print_hook(ltf_ctx *ctx, void *ud, ltf_tensor *const *in, int n, const ltf_print_options *o) {
    ltfL_state *s = ud;
    lua_State *L = s->L;
    if (!L) return ltf_ctx_set_error(ctx, LTF_ERR_INTERNAL, "print: no Lua thread to format with");
    int top = lua_gettop(L);
    if (!lua_checkstack(L, n + 6)) return ltf_ctx_set_error(ctx, LTF_ERR_RESOURCE_EXHAUSTED, "print: stack");
    if (lua_getfield(L, LUA_REGISTRYINDEX, PRINT_FORMATTER) != LUA_TFUNCTION) {
        lua_settop(L, top);
        return ltf_ctx_set_error(ctx, LTF_ERR_INTERNAL, "print: no formatter installed");
    }
    lua_createtable(L, 0, 4);
    lua_pushstring(L, o->sep);
    lua_setfield(L, -2, "sep");
    lua_pushstring(L, o->end);
    lua_setfield(L, -2, "end");
    lua_pushinteger(L, o->summarize);
    lua_setfield(L, -2, "summarize");
    lua_pushinteger(L, o->stream);
    lua_setfield(L, -2, "stream");
    for (int i = 0; i < n; i++) {
        ltfL_box *b = lua_newuserdatauv(L, sizeof *b, 0);
        b->t = ltf_tensor_retain(in[i]);
        luaL_setmetatable(L, LTFL_TENSOR);
    }
    ltf_status st = LTF_OK;
    if (lua_pcall(L, n + 1, 0, 0) != LUA_OK) {
        const char *msg = lua_tostring(L, -1);
        st = ltf_ctx_set_error(ctx, LTF_ERR_INTERNAL, msg ? msg : "print: formatter failed");
    }
    lua_settop(L, top);
    return st;
}

static int ctl_set_print_formatter(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_pushvalue(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, PRINT_FORMATTER);
    ltfL_state *s = ltfL_S(L);
    ltf_ctx_set_print_hook(s->ctx, print_hook, s);
    return 0;
}

/* core.print(sep, end, summarize, stream, v1, ..., vn): the print op
** (tf.print, lua/tf/format.lua, checks the keywords and maps output_stream
** to a stream id). Values are tensors, variables or Lua values (strings
** print as they are). */
static int ctl_print(lua_State *L) {
    size_t lsep, lend;
    const char *sep = luaL_checklstring(L, 1, &lsep);
    const char *end = luaL_checklstring(L, 2, &lend);
    ltf_attrs a;
    ltf_attrs_init(&a);
    if (lsep + lend + 2 > sizeof a.s)
        return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "print: 'sep' and 'end' are too long (at most %d bytes together)",
                           LTF_ATTR_STR_MAX - 2);
    memcpy(a.s, sep, lsep + 1);
    memcpy(a.s + lsep + 1, end, lend + 1);
    a.i[0] = luaL_checkinteger(L, 3);
    a.i[1] = luaL_checkinteger(L, 4);
    a.i[2] = 1;
    int n = lua_gettop(L) - 4;
    luaL_checkstack(L, n + 8, "print");
    ltf_tensor *stack_in[32];
    ltf_tensor **in = n <= 32 ? stack_in : lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)n, 0);
    for (int i = 0; i < n; i++) {
        int idx = i + 5;
        if (lua_isnil(L, idx)) {
            lua_pushliteral(L, "nil");
            in[i] = ltfL_totensor(L, lua_gettop(L), LTF_DTYPE_STRING, "print", "value");
        } else if (lua_type(L, idx) == LUA_TNUMBER || lua_type(L, idx) == LUA_TBOOLEAN) {
            luaL_tolstring(L, idx, NULL);
            in[i] = ltfL_totensor(L, lua_gettop(L), LTF_DTYPE_STRING, "print", "value");
        } else {
            in[i] = ltfL_totensor(L, idx, -1, "print", "value");
        }
    }
    ltfL_state *s = ltfL_S(L);
    lua_State *saved = s->L;
    s->L = L;
    ltf_tensor *out[1];
    int nout = 0;
    ltf_status st = ltf_op_run(s->ctx, LTF_OP_PRINT, in, n, &a, out, 1, &nout);
    s->L = saved;
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

/* core.tensor_array_write(buffer, index, value, grow) -> the new buffer
** (tf.TensorArray's write; lua/tf/tensor_array.lua) */
static int ctl_ta_write(lua_State *L) {
    ltf_tensor *in[3];
    in[0] = ltfL_checktensor(L, 1, "TensorArray.write", "buffer");
    in[1] = ltfL_checktensor(L, 2, "TensorArray.write", "index");
    in[2] = ltfL_checktensor(L, 3, "TensorArray.write", "value");
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = lua_toboolean(L, 4);
    return ltfL_run1(L, LTF_OP_TENSOR_ARRAY_WRITE, in, 3, &a);
}

/* core.tensor_array_read(buffer, index) -> row 'index' (1-based) */
static int ctl_ta_read(lua_State *L) {
    ltf_tensor *in[2];
    in[0] = ltfL_checktensor(L, 1, "TensorArray.read", "buffer");
    in[1] = ltfL_checktensor(L, 2, "TensorArray.read", "index");
    return ltfL_run1(L, LTF_OP_TENSOR_ARRAY_READ, in, 2, NULL);
}

static const luaL_Reg ctl_internal[] = {
    {"print", ctl_print},
    {"set_print_formatter", ctl_set_print_formatter},
    {"tensor_array_write", ctl_ta_write},
    {"tensor_array_read", ctl_ta_read},
    {NULL, NULL}
};

void ltfL_open_control(lua_State *L) {
    ltfL_register(L, ctl_internal, LTFL_INTERNAL);
}
