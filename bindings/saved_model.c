/*
** saved_model.c: Lua bindings of core/saved_model.c (tf.saved_model, lua/tf/saved_model.lua).
**   core.saved_model_save(dir, {{name=, graph=, signature=, inputs=, outputs=, meta=}, ...})
**   core.saved_model_load(dir) -> {functions = {{name=, signature=, graph=, inputs=, outputs=, meta=}, ...},
**                                  variables = {{name=, handle=}, ...}}
*/
#include <string.h>
#include "ltfL.h"

#define LTFL_GRAPH "tf.Graph"   /* bindings/graph.c: a box holding one ltf_graph * */
typedef struct graph_box {
    ltf_graph *g;
} graph_box;

static const char **names_of(lua_State *L, int t, const char *field, int n) {
    lua_getfield(L, t, field);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        return NULL;
    }
    luaL_checktype(L, -1, LUA_TTABLE);
    const char **v = lua_newuserdatauv(L, sizeof *v * ((size_t)n + 1), 0);
    lua_insert(L, -2);
    for (int i = 0; i < n; i++) {
        lua_geti(L, -1, i + 1);
        v[i] = lua_tostring(L, -1);   /* the table keeps the string */
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return v;      /* the userdata stays on the stack */
}

static int sm_save(lua_State *L) {
    const char *dir = luaL_checkstring(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    int n = (int)luaL_len(L, 2);
    luaL_checkstack(L, 3 * n + 8, "saved_model_save");
    ltf_saved_function *fns = lua_newuserdatauv(L, sizeof *fns * ((size_t)n + 1), 0);
    for (int k = 0; k < n; k++) {
        lua_geti(L, 2, k + 1);
        int t = lua_gettop(L);
        ltf_saved_function *f = &fns[k];
        memset(f, 0, sizeof *f);
        lua_getfield(L, t, "name");
        f->name = luaL_checkstring(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, t, "graph");
        graph_box *b = luaL_testudata(L, -1, LTFL_GRAPH);
        if (!b || !b->g) {
            lua_pushfstring(L, "saved_model_save: function %d has no graph", k + 1);
            return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, lua_tostring(L, -1));
        }
        f->graph = b->g;
        lua_pop(L, 1);
        lua_getfield(L, t, "signature");
        f->signature = lua_toboolean(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, t, "meta");
        size_t ml = 0;
        f->meta = lua_tolstring(L, -1, &ml);
        f->nmeta = ml;
        lua_pop(L, 1);
        f->input_names = names_of(L, t, "inputs", ltf_graph_num_inputs(f->graph));
        f->output_names = names_of(L, t, "outputs", ltf_graph_num_outputs(f->graph));
        /* the function's table (and the name arrays above it) stay on the stack */
    }
    ltfL_state *s = ltfL_S(L);
    lua_State *saved = s->L;
    s->L = L;
    ltf_status st = ltf_saved_model_save(ltfL_ctx(L), dir, fns, n);
    s->L = saved;
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

static void push_names(lua_State *L, const ltf_saved_model *m, int k, int out) {
    int n = out ? ltf_saved_model_num_outputs(m, k) : ltf_saved_model_num_inputs(m, k);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushstring(L, out ? ltf_saved_model_output_name(m, k, i) : ltf_saved_model_input_name(m, k, i));
        lua_rawseti(L, -2, i + 1);
    }
}

static int sm_load(lua_State *L) {
    const char *dir = luaL_checkstring(L, 1);
    ltfL_state *s = ltfL_S(L);
    lua_State *saved = s->L;
    s->L = L;
    ltf_saved_model *m = ltf_saved_model_load(ltfL_ctx(L), dir);
    s->L = saved;
    if (!m) return ltfL_raisectx(L, LTF_ERR_DATA_LOSS);
    lua_createtable(L, 0, 2);
    int nf = ltf_saved_model_num_functions(m);
    lua_createtable(L, nf, 0);
    for (int k = 0; k < nf; k++) {
        lua_createtable(L, 0, 6);
        lua_pushstring(L, ltf_saved_model_function_name(m, k));
        lua_setfield(L, -2, "name");
        lua_pushboolean(L, ltf_saved_model_function_is_signature(m, k));
        lua_setfield(L, -2, "signature");
        graph_box *b = lua_newuserdatauv(L, sizeof *b, 0);
        b->g = ltf_graph_retain(ltf_saved_model_function_graph(m, k));
        luaL_setmetatable(L, LTFL_GRAPH);
        lua_setfield(L, -2, "graph");
        push_names(L, m, k, 0);
        lua_setfield(L, -2, "inputs");
        push_names(L, m, k, 1);
        lua_setfield(L, -2, "outputs");
        size_t ml;
        const char *meta = ltf_saved_model_function_meta(m, k, &ml);
        lua_pushlstring(L, meta, ml);
        lua_setfield(L, -2, "meta");
        lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "functions");
    int nv = ltf_saved_model_num_variables(m);
    lua_createtable(L, nv, 0);
    for (int k = 0; k < nv; k++) {
        ltf_tensor *h = ltf_saved_model_variable(m, k);
        lua_createtable(L, 0, 2);
        lua_pushstring(L, ltf_variable_name(h));
        lua_setfield(L, -2, "name");
        ltfL_pushtensor(L, ltf_tensor_retain(h));
        lua_setfield(L, -2, "handle");
        lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "variables");
    ltf_saved_model_free(m);
    return 1;
}

static const luaL_Reg sm_fns[] = {
    {"saved_model_save", sm_save},
    {"saved_model_load", sm_load},
    {NULL, NULL}
};

void ltfL_open_saved_model(lua_State *L) { ltfL_register(L, sm_fns, LTFL_INTERNAL); }
