/*
** onnx_export.c: the C half of tf.onnx.save (lua/tf/onnx/export.lua,
** docs/onnx_export.md). Two internal functions:
**
**   core.onnx_graph_read(graph) -> nodes, outputs
**     the live nodes of a traced graph in program order, each {name=, op=,
**     inputs={"n:k", ...}, outputs={{dtype=, shape=}}, attrs={ints=, ints2=,
**     i={4}, f={4}, s=} (op nodes), value=tensor (constants), fused=group,
**     functions={graph, ...} (control flow)}, and the graph's outputs
**     {"n:k", ...}. Placeholders are listed even when not live.
**     The nodes are the traced ops, never fused kernels: fusion only groups
**     them for the plan (ltf_graph_node_fused), so the export sees each op.
**
**   core.onnx_pack(model) -> bytes
**     an ONNX ModelProto (proto/onnx.proto, packed with protobuf-c) from a
**     Lua description: {ir_version=, opsets={{domain=, version=}},
**     producer_name=, producer_version=, graph={name=, nodes={{op_type=,
**     name=, domain=, inputs={..}, outputs={..}, attrs={{name=, type=
**     "int"|"float"|"string"|"ints"|"floats"|"tensor"|"graph", value=}}}},
**     initializers={{name=, value=tensor}}, inputs={{name=, elem_type=,
**     dims={n | "param", ...} | nil}}, outputs={...}}}. "graph" attributes
**     hold a graph description (If/Loop bodies).
**
** Everything packed is allocated in an arena (a userdata with __gc), so a
** Lua error half way frees it all.
*/
#include <stdlib.h>
#include <string.h>
#include "ltfL.h"
#include "onnx.pb-c.h"

#define LTFL_GRAPH "tf.Graph"
typedef struct graph_box {   /* as bindings/graph.c */
    ltf_graph *g;
} graph_box;

/* {==== reading a graph */
static void push_dims(lua_State *L, int rank, const int64_t *dims) {
    lua_createtable(L, rank, 0);
    for (int d = 0; d < rank; d++) {
        lua_pushinteger(L, dims[d]);
        lua_rawseti(L, -2, d + 1);
    }
}

static void push_ints(lua_State *L, const int64_t *v, int n) {
    lua_createtable(L, n, 0);
    for (int k = 0; k < n; k++) {
        lua_pushinteger(L, v[k]);
        lua_rawseti(L, -2, k + 1);
    }
}

static void push_attrs(lua_State *L, const ltf_attrs *a) {
    lua_createtable(L, 0, 5);
    if (a->nints >= 0) {
        push_ints(L, a->ints, a->nints > LTF_ATTR_LIST_MAX ? LTF_ATTR_LIST_MAX : a->nints);
        lua_setfield(L, -2, "ints");
    }
    if (a->nints2 >= 0) {
        push_ints(L, a->ints2, a->nints2 > LTF_ATTR_LIST_MAX ? LTF_ATTR_LIST_MAX : a->nints2);
        lua_setfield(L, -2, "ints2");
    }
    push_ints(L, a->i, 4);
    lua_setfield(L, -2, "i");
    lua_createtable(L, 4, 0);
    for (int k = 0; k < 4; k++) {
        lua_pushnumber(L, a->f[k]);
        lua_rawseti(L, -2, k + 1);
    }
    lua_setfield(L, -2, "f");
    lua_pushstring(L, a->s);
    lua_setfield(L, -2, "s");
}

static int ox_graph_read(lua_State *L) {
    graph_box *b = luaL_testudata(L, 1, LTFL_GRAPH);
    if (!b || !b->g) return ltfL_argerror(L, 1, "onnx_graph_read", "graph", "graph");
    const ltf_graph *g = b->g;
    int n = ltf_graph_num_nodes(g), m = 0;
    lua_createtable(L, n, 0);
    for (int i = 0; i < n; i++) {
        /* every placeholder, live or not: they are the graph's inputs, in order */
        if (!ltf_graph_node_live(g, i) && strcmp(ltf_graph_node_op(g, i), "Placeholder") != 0) continue;
        lua_createtable(L, 0, 8);
        lua_pushstring(L, ltf_graph_node_name(g, i));
        lua_setfield(L, -2, "name");
        const char *op = ltf_graph_node_op(g, i);
        lua_pushstring(L, op);
        lua_setfield(L, -2, "op");
        if (ltf_graph_node_fused(g, i)) {
            lua_pushinteger(L, ltf_graph_node_fused(g, i));
            lua_setfield(L, -2, "fused");
        }
        if (ltf_graph_node_function(g, i, 0)) {   /* control flow: its graphs (cond: then, else; while: cond, body) */
            lua_createtable(L, 2, 0);
            for (int k = 0; k < 2 && ltf_graph_node_function(g, i, k); k++) {
                graph_box *fb = lua_newuserdatauv(L, sizeof *fb, 0);
                fb->g = ltf_graph_retain(ltf_graph_node_function(g, i, k));
                luaL_setmetatable(L, LTFL_GRAPH);
                lua_rawseti(L, -2, k + 1);
            }
            lua_setfield(L, -2, "functions");
        }
        int nin = ltf_graph_node_num_inputs(g, i);
        lua_createtable(L, nin, 0);
        for (int k = 0; k < nin; k++) {
            int out, src = ltf_graph_node_input(g, i, k, &out);
            lua_pushfstring(L, "%s:%d", ltf_graph_node_name(g, src), out);
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, -2, "inputs");
        int nout = ltf_graph_node_num_outputs(g, i);
        lua_createtable(L, nout, 0);
        for (int k = 0; k < nout; k++) {
            ltf_dtype dt;
            int64_t dims[LTF_MAX_RANK];
            int rank = ltf_graph_node_output_type(g, i, k, &dt, dims);
            lua_createtable(L, 0, 2);
            lua_pushinteger(L, dt);
            lua_setfield(L, -2, "dtype");
            if (rank >= 0) {
                push_dims(L, rank, dims);
                lua_setfield(L, -2, "shape");
            }
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, -2, "outputs");
        ltf_tensor *v = ltf_graph_node_value(g, i);
        if (v) {
            ltfL_pushtensor(L, ltf_tensor_retain(v));
            lua_setfield(L, -2, "value");
        } else if (strcmp(op, "Placeholder") != 0) {
            const ltf_attrs *a = ltf_graph_node_attrs(g, i);
            ltf_attrs none;
            if (!a) {
                ltf_attrs_init(&none);
                a = &none;
            }
            push_attrs(L, a);
            lua_setfield(L, -2, "attrs");
        }
        lua_rawseti(L, -2, ++m);
    }
    int no = ltf_graph_num_outputs(g);
    lua_createtable(L, no, 0);
    for (int k = 0; k < no; k++) {
        int out, node = ltf_graph_output(g, k, &out);
        lua_pushfstring(L, "%s:%d", ltf_graph_node_name(g, node), out);
        lua_rawseti(L, -2, k + 1);
    }
    return 2;
}
/* }==== */

/* {==== packing a ModelProto */
#define ARENA "tf.onnx_arena"
typedef struct arena {
    void **blocks;
    size_t n, cap;
} arena;

static int arena_gc(lua_State *L) {
    arena *a = luaL_checkudata(L, 1, ARENA);
    for (size_t k = 0; k < a->n; k++) free(a->blocks[k]);
    free(a->blocks);
    a->blocks = NULL;
    a->n = a->cap = 0;
    return 0;
}

/* zeroed memory owned by the arena; raises when out of memory */
static void *aalloc(lua_State *L, arena *a, size_t size) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 64;
        void **nb = realloc(a->blocks, cap * sizeof *nb);
        if (!nb) ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "onnx_pack: out of memory");
        a->blocks = nb;
        a->cap = cap;
    }
    void *p = calloc(1, size ? size : 1);
    if (!p) ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "onnx_pack: out of memory");
    a->blocks[a->n++] = p;
    return p;
}

static int bad(lua_State *L, const char *what) {
    return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "onnx_pack: %s", what);
}

/* a copy of the string field 'key' of the table at 'idx' (NULL when absent) */
static char *sfield(lua_State *L, arena *a, int idx, const char *key, int required) {
    lua_getfield(L, idx, key);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        if (required) ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "onnx_pack: missing string '%s'", key);
        return NULL;
    }
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (!s) ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "onnx_pack: '%s' must be a string", key);
    char *c = aalloc(L, a, len + 1);
    memcpy(c, s, len);
    lua_pop(L, 1);
    return c;
}

/* the array field 'key' of the table at 'idx' pushed (empty table when absent); returns its length */
static size_t afield(lua_State *L, int idx, const char *key) {
    lua_getfield(L, idx, key);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_newtable(L);
    }
    if (!lua_istable(L, -1)) ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "onnx_pack: '%s' must be a table", key);
    return lua_rawlen(L, -1);
}

static char **strings(lua_State *L, arena *a, int idx, const char *key, size_t *n) {
    *n = afield(L, idx, key);
    char **out = aalloc(L, a, (*n ? *n : 1) * sizeof *out);
    for (size_t k = 0; k < *n; k++) {
        lua_rawgeti(L, -1, (lua_Integer)k + 1);
        size_t len;
        const char *s = lua_tolstring(L, -1, &len);
        if (!s) ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "onnx_pack: '%s' must hold strings", key);
        out[k] = aalloc(L, a, len + 1);
        memcpy(out[k], s, len);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return out;
}

static int onnx_type_of(ltf_dtype dt) {
    switch (dt) {
    case LTF_DTYPE_FLOAT32: return ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    case LTF_DTYPE_FLOAT64: return ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
    case LTF_DTYPE_INT32: return ONNX__TENSOR_PROTO__DATA_TYPE__INT32;
    case LTF_DTYPE_INT64: return ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
    case LTF_DTYPE_UINT8: return ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
    case LTF_DTYPE_BOOL: return ONNX__TENSOR_PROTO__DATA_TYPE__BOOL;
    case LTF_DTYPE_STRING: return ONNX__TENSOR_PROTO__DATA_TYPE__STRING;
    case LTF_DTYPE_FLOAT16: return ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
    case LTF_DTYPE_BFLOAT16: return ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16;
    default: return -1;
    }
}

/* TensorProto named 'name' from the tensor at 'idx' (concrete, any device) */
static Onnx__TensorProto *tensor_proto(lua_State *L, arena *a, int idx, char *name) {
    ltf_tensor *t = ltfL_testtensor(L, idx);
    if (!t) bad(L, "a tensor value must be a tf.Tensor");
    if (ltf_tensor_is_symbolic(t)) bad(L, "a tensor value must be concrete, not symbolic");
    int ot = onnx_type_of(ltf_tensor_dtype(t));
    if (ot < 0) ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "onnx_pack: tensor '%s' has dtype %s, which ONNX has not",
                            name ? name : "", ltf_dtype_name(ltf_tensor_dtype(t)));
    Onnx__TensorProto *p = aalloc(L, a, sizeof *p);
    onnx__tensor_proto__init(p);
    p->name = name;
    p->has_data_type = 1;
    p->data_type = ot;
    int rank = ltf_tensor_rank(t);
    p->n_dims = (size_t)rank;
    p->dims = aalloc(L, a, (rank ? (size_t)rank : 1) * sizeof(int64_t));
    if (rank) memcpy(p->dims, ltf_tensor_dims(t), (size_t)rank * sizeof(int64_t));
    int64_t n = ltf_tensor_num_elements(t);
    if (ltf_tensor_dtype(t) == LTF_DTYPE_STRING) {
        ltf_tensor *h = ltfL_hostview(L, t);
        const ltf_string *const *s = ltf_tensor_data(h);
        p->n_string_data = (size_t)n;
        p->string_data = aalloc(L, a, (n ? (size_t)n : 1) * sizeof *p->string_data);
        for (int64_t k = 0; k < n; k++) {
            size_t len = s[k] ? s[k]->len : 0;
            uint8_t *c = aalloc(L, a, len);
            if (len) memcpy(c, s[k]->bytes, len);
            p->string_data[k].data = c;
            p->string_data[k].len = len;
        }
        lua_pop(L, h != t);
        return p;
    }
    size_t nbytes = (size_t)n * ltf_dtype_size(ltf_tensor_dtype(t));
    uint8_t *raw = aalloc(L, a, nbytes);
    if (nbytes) {
        ltf_status st = ltf_tensor_copy_to(ltfL_ctx(L), t, raw, nbytes);
        if (st != LTF_OK) ltfL_raisectx(L, st);
    }
    p->has_raw_data = 1;
    p->raw_data.data = raw;
    p->raw_data.len = nbytes;
    return p;
}

static Onnx__ValueInfoProto **value_infos(lua_State *L, arena *a, int idx, const char *key, size_t *n) {
    *n = afield(L, idx, key);
    int list = lua_gettop(L);
    Onnx__ValueInfoProto **out = aalloc(L, a, (*n ? *n : 1) * sizeof *out);
    for (size_t k = 0; k < *n; k++) {
        lua_rawgeti(L, list, (lua_Integer)k + 1);
        int vi = lua_gettop(L);
        if (!lua_istable(L, vi)) bad(L, "a value info must be a table");
        Onnx__ValueInfoProto *v = aalloc(L, a, sizeof *v);
        onnx__value_info_proto__init(v);
        v->name = sfield(L, a, vi, "name", 1);
        Onnx__TypeProto *tp = aalloc(L, a, sizeof *tp);
        onnx__type_proto__init(tp);
        Onnx__TypeProto__Tensor *tt = aalloc(L, a, sizeof *tt);
        onnx__type_proto__tensor__init(tt);
        lua_getfield(L, vi, "elem_type");
        tt->has_elem_type = 1;
        tt->elem_type = (int32_t)luaL_checkinteger(L, -1);
        lua_pop(L, 1);
        lua_getfield(L, vi, "dims");
        if (lua_istable(L, -1)) {   /* absent: unknown rank */
            size_t nd = lua_rawlen(L, -1);
            Onnx__TensorShapeProto *sp = aalloc(L, a, sizeof *sp);
            onnx__tensor_shape_proto__init(sp);
            sp->n_dim = nd;
            sp->dim = aalloc(L, a, (nd ? nd : 1) * sizeof *sp->dim);
            for (size_t d = 0; d < nd; d++) {
                Onnx__TensorShapeProto__Dimension *dm = aalloc(L, a, sizeof *dm);
                onnx__tensor_shape_proto__dimension__init(dm);
                lua_rawgeti(L, -1, (lua_Integer)d + 1);
                if (lua_type(L, -1) == LUA_TSTRING) {
                    size_t len;
                    const char *s = lua_tolstring(L, -1, &len);
                    dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
                    dm->dim_param = aalloc(L, a, len + 1);
                    memcpy(dm->dim_param, s, len);
                } else if (lua_isinteger(L, -1)) {
                    dm->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
                    dm->dim_value = lua_tointeger(L, -1);
                }   /* else: an unnamed unknown dim */
                lua_pop(L, 1);
                sp->dim[d] = dm;
            }
            tt->shape = sp;
        }
        lua_pop(L, 1);
        tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
        tp->tensor_type = tt;
        v->type = tp;
        out[k] = v;
        lua_settop(L, list);
    }
    lua_pop(L, 1);
    return out;
}

static Onnx__GraphProto *graph_proto(lua_State *L, arena *a, int idx, int depth);

static Onnx__AttributeProto *attr_proto(lua_State *L, arena *a, int idx, int depth) {
    Onnx__AttributeProto *p = aalloc(L, a, sizeof *p);
    onnx__attribute_proto__init(p);
    p->name = sfield(L, a, idx, "name", 1);
    lua_getfield(L, idx, "type");
    const char *type = lua_tostring(L, -1);
    if (!type) bad(L, "an attribute needs a type");
    lua_getfield(L, idx, "value");
    int v = lua_gettop(L);
    p->has_type = 1;
    if (strcmp(type, "int") == 0) {
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
        p->has_i = 1;
        p->i = luaL_checkinteger(L, v);
    } else if (strcmp(type, "float") == 0) {
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
        p->has_f = 1;
        p->f = (float)luaL_checknumber(L, v);
    } else if (strcmp(type, "string") == 0) {
        size_t len;
        const char *s = luaL_checklstring(L, v, &len);
        uint8_t *c = aalloc(L, a, len);
        memcpy(c, s, len);
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
        p->has_s = 1;
        p->s.data = c;
        p->s.len = len;
    } else if (strcmp(type, "ints") == 0 || strcmp(type, "floats") == 0) {
        luaL_checktype(L, v, LUA_TTABLE);
        size_t n = lua_rawlen(L, v);
        int ints = type[0] == 'i';
        p->type = ints ? ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS : ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
        if (ints) {
            p->n_ints = n;
            p->ints = aalloc(L, a, (n ? n : 1) * sizeof *p->ints);
        } else {
            p->n_floats = n;
            p->floats = aalloc(L, a, (n ? n : 1) * sizeof *p->floats);
        }
        for (size_t k = 0; k < n; k++) {
            lua_rawgeti(L, v, (lua_Integer)k + 1);
            if (ints) p->ints[k] = luaL_checkinteger(L, -1);
            else p->floats[k] = (float)luaL_checknumber(L, -1);
            lua_pop(L, 1);
        }
    } else if (strcmp(type, "tensor") == 0) {
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
        p->t = tensor_proto(L, a, v, NULL);
    } else if (strcmp(type, "graph") == 0) {
        luaL_checktype(L, v, LUA_TTABLE);
        p->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
        p->g = graph_proto(L, a, v, depth + 1);
    } else {
        ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "onnx_pack: unknown attribute type '%s'", type);
    }
    lua_pop(L, 2);
    return p;
}

static Onnx__GraphProto *graph_proto(lua_State *L, arena *a, int idx, int depth) {
    if (depth > 32) bad(L, "graphs nested too deep");
    luaL_checkstack(L, 16, "onnx_pack");
    idx = lua_absindex(L, idx);
    Onnx__GraphProto *gp = aalloc(L, a, sizeof *gp);
    onnx__graph_proto__init(gp);
    gp->name = sfield(L, a, idx, "name", 1);
    size_t nn = afield(L, idx, "nodes");
    int list = lua_gettop(L);
    gp->n_node = nn;
    gp->node = aalloc(L, a, (nn ? nn : 1) * sizeof *gp->node);
    for (size_t k = 0; k < nn; k++) {
        lua_rawgeti(L, list, (lua_Integer)k + 1);
        int ni = lua_gettop(L);
        if (!lua_istable(L, ni)) bad(L, "a node must be a table");
        Onnx__NodeProto *np = aalloc(L, a, sizeof *np);
        onnx__node_proto__init(np);
        np->op_type = sfield(L, a, ni, "op_type", 1);
        np->name = sfield(L, a, ni, "name", 0);
        np->domain = sfield(L, a, ni, "domain", 0);
        np->input = strings(L, a, ni, "inputs", &np->n_input);
        np->output = strings(L, a, ni, "outputs", &np->n_output);
        size_t na = afield(L, ni, "attrs");
        int al = lua_gettop(L);
        np->n_attribute = na;
        np->attribute = aalloc(L, a, (na ? na : 1) * sizeof *np->attribute);
        for (size_t j = 0; j < na; j++) {
            lua_rawgeti(L, al, (lua_Integer)j + 1);
            if (!lua_istable(L, -1)) bad(L, "an attribute must be a table");
            np->attribute[j] = attr_proto(L, a, lua_gettop(L), depth);
            lua_pop(L, 1);
        }
        gp->node[k] = np;
        lua_settop(L, list);
    }
    lua_pop(L, 1);
    size_t ni = afield(L, idx, "initializers");
    int il = lua_gettop(L);
    gp->n_initializer = ni;
    gp->initializer = aalloc(L, a, (ni ? ni : 1) * sizeof *gp->initializer);
    for (size_t k = 0; k < ni; k++) {
        lua_rawgeti(L, il, (lua_Integer)k + 1);
        int e = lua_gettop(L);
        if (!lua_istable(L, e)) bad(L, "an initializer must be a table");
        char *name = sfield(L, a, e, "name", 1);
        lua_getfield(L, e, "value");
        gp->initializer[k] = tensor_proto(L, a, lua_gettop(L), name);
        lua_settop(L, il);
    }
    lua_pop(L, 1);
    gp->input = value_infos(L, a, idx, "inputs", &gp->n_input);
    gp->output = value_infos(L, a, idx, "outputs", &gp->n_output);
    return gp;
}

static int ox_pack(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    arena *a = lua_newuserdatauv(L, sizeof *a, 0);
    memset(a, 0, sizeof *a);
    luaL_setmetatable(L, ARENA);
    Onnx__ModelProto *m = aalloc(L, a, sizeof *m);
    onnx__model_proto__init(m);
    lua_getfield(L, 1, "ir_version");
    m->has_ir_version = 1;
    m->ir_version = luaL_optinteger(L, -1, 8);
    lua_pop(L, 1);
    m->producer_name = sfield(L, a, 1, "producer_name", 0);
    m->producer_version = sfield(L, a, 1, "producer_version", 0);
    m->doc_string = sfield(L, a, 1, "doc_string", 0);
    size_t no = afield(L, 1, "opsets");
    if (no == 0) bad(L, "at least one opset is needed");
    m->n_opset_import = no;
    m->opset_import = aalloc(L, a, no * sizeof *m->opset_import);
    for (size_t k = 0; k < no; k++) {
        lua_rawgeti(L, -1, (lua_Integer)k + 1);
        if (!lua_istable(L, -1)) bad(L, "an opset must be a table");
        Onnx__OperatorSetIdProto *o = aalloc(L, a, sizeof *o);
        onnx__operator_set_id_proto__init(o);
        o->domain = sfield(L, a, lua_gettop(L), "domain", 0);
        if (!o->domain) o->domain = "";
        lua_getfield(L, -1, "version");
        o->has_version = 1;
        o->version = luaL_checkinteger(L, -1);
        lua_pop(L, 2);
        m->opset_import[k] = o;
    }
    lua_pop(L, 1);
    lua_getfield(L, 1, "graph");
    if (!lua_istable(L, -1)) bad(L, "'graph' must be a table");
    m->graph = graph_proto(L, a, lua_gettop(L), 0);
    lua_pop(L, 1);
    size_t len = onnx__model_proto__get_packed_size(m);
    uint8_t *buf = aalloc(L, a, len);
    onnx__model_proto__pack(m, buf);
    lua_pushlstring(L, (const char *)buf, len);
    lua_pushcfunction(L, arena_gc);
    lua_pushvalue(L, 2);
    lua_call(L, 1, 0);   /* free now rather than at the next collection */
    return 1;
}
/* }==== */

static const luaL_Reg onnx_export_fns[] = {
    {"onnx_graph_read", ox_graph_read},
    {"onnx_pack", ox_pack},
    {NULL, NULL}
};

void ltfL_open_onnx_export(lua_State *L) {
    luaL_newmetatable(L, ARENA);
    lua_pushcfunction(L, arena_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    ltfL_register(L, onnx_export_fns, LTFL_INTERNAL);
}
