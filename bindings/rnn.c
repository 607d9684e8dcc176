/*
** rnn.c: Lua bindings of the fused recurrent ops: tf.nn.lstm_sequence and
** tf.nn.gru_sequence (ltf_ops/rnn.h). Each returns the op's outputs but its
** workspace (which the op's gradient reads).
*/
#include "ltfL.h"

/* Boolean option 'key' of the keyword table at 'idx' ('def' when absent). */
static int optbool(lua_State *L, int idx, const char *op, const char *key, int def) {
    int t = ltfL_getkw(L, idx, key);
    int v = t == LUA_TNIL ? def : lua_toboolean(L, -1);
    if (t != LUA_TNIL && t != LUA_TBOOLEAN)
        ltfL_raisef(L, LTF_ERR_TYPE, "%s: option '%s' expected boolean, got %s", op, key, luaL_typename(L, -1));
    lua_pop(L, 1);
    return v;
}

/* The weights and states at 1..n (x first; the others converted to x's
** dtype), then the options table at n + 1: mask, go_backwards,
** zero_output_for_mask (and reset_after when 'gru'). Returns the input count. */
static int rnn_args(lua_State *L, const char *op, const char *const *names, int n, int gru, ltf_tensor **in,
                    ltf_attrs *at) {
    static const char *const lstm_keys[] = { "mask", "go_backwards", "zero_output_for_mask", "name", NULL };
    static const char *const gru_keys[] = { "mask", "go_backwards", "zero_output_for_mask", "reset_after", "name",
                                            NULL };
    lua_settop(L, n + 1);
    in[0] = ltfL_totensor(L, 1, -1, op, names[0]);
    int like = (int)ltf_tensor_dtype(in[0]);
    for (int k = 1; k < n; k++) {
        if (lua_isnil(L, k + 1)) ltfL_argerror(L, k + 1, op, names[k], "tensor");
        in[k] = ltfL_totensor(L, k + 1, like, op, names[k]);
    }
    ltf_attrs_init(at);
    int opts = n + 1, nin = n;
    if (lua_isnil(L, opts)) {
        at->i[2] = gru;
        return nin;
    }
    if (!lua_istable(L, opts) || ltfL_testtensor(L, opts)) ltfL_argerror(L, opts, op, "options", "table");
    ltfL_checkkeys(L, opts, op, gru ? gru_keys : lstm_keys);
    at->i[0] = optbool(L, opts, op, "go_backwards", 0);
    at->i[1] = optbool(L, opts, op, "zero_output_for_mask", 0);
    at->i[2] = gru ? optbool(L, opts, op, "reset_after", 1) : 0;
    if (ltfL_getkw(L, opts, "mask") != LUA_TNIL) in[nin++] = ltfL_totensor(L, lua_gettop(L), LTF_DTYPE_BOOL, op, "mask");
    else lua_pop(L, 1);
    return nin;
}

/* tf.nn.lstm_sequence(x, h0, c0, kernel, recurrent_kernel, bias [, opts]) -> outputs, h, c */
static int nn_lstm_sequence(lua_State *L) {
    static const char *const names[] = { "x", "h0", "c0", "kernel", "recurrent_kernel", "bias" };
    ltf_tensor *in[7];
    ltf_attrs at;
    int nin = rnn_args(L, "lstm_sequence", names, 6, 0, in, &at);
    int n = ltfL_runn(L, LTF_OP_LSTM_SEQUENCE, in, nin, &at);
    lua_pop(L, 1);   /* the workspace */
    return n - 1;
}

/* tf.nn.gru_sequence(x, h0, kernel, recurrent_kernel, bias [, opts]) -> outputs, h */
static int nn_gru_sequence(lua_State *L) {
    static const char *const names[] = { "x", "h0", "kernel", "recurrent_kernel", "bias" };
    ltf_tensor *in[6];
    ltf_attrs at;
    int nin = rnn_args(L, "gru_sequence", names, 5, 1, in, &at);
    int n = ltfL_runn(L, LTF_OP_GRU_SEQUENCE, in, nin, &at);
    lua_pop(L, 1);
    return n - 1;
}

static const luaL_Reg rnn_fns[] = {
    {"lstm_sequence", nn_lstm_sequence}, {"gru_sequence", nn_gru_sequence}, {NULL, NULL}
};

void ltfL_open_rnn(lua_State *L) {
    int mod = lua_gettop(L);
    ltfL_register(L, rnn_fns, "nn");
    /* not at the top level of tf.core */
    lua_pushnil(L);
    lua_setfield(L, mod, "lstm_sequence");
    lua_pushnil(L);
    lua_setfield(L, mod, "gru_sequence");
}
