/*
** onnx.c: Lua side of the ONNX reader (core/onnx_reader.c, ltf_onnx.h).
** core.internal.onnx_read(src, is_bytes) -> model table:
**   {ir_version=, producer_name=, producer_version=, opsets = {[domain] = version},
**    graph = G}
**   G = {name=, inputs = {V...}, outputs = {V...}, initializers = {{name, tensor}...},
**        nodes = {{op_type=, domain=, name=, inputs = {...}, outputs = {...},
**                  attrs = {[name] = {type = "INT"|"FLOAT"|..., value = ...}}}...}}
**   V = {name=, elem_type = ONNX type number (0 unknown), shape = {d...} (a
**        number, or the dim_param string, or false when unnamed) or nil (unknown rank)}
** core.internal.onnx_read_tensor(bytes) -> tensor, name (a serialized TensorProto).
** The main graph's initializers are {name, i} (i: the index to take it by),
** a subgraph's {name, tensor}. The model table has three more fields:
**   initializer(i [, "hwio"]) -> tensor: initializer i read from the source
**     on first use (kept by the reader); "hwio": a (O, I, kh, kw) conv weight
**     read straight into a new (kh, kw, I, O) tensor (not kept), nil for a
**     tensor that is not 4-d or holds strings;
**   close(): the reader is freed (the file closed); later takes are errors;
**   proto_bytes: the most bytes protobuf-c held for the structure.
** So the weights are in memory once: in their tensors, as each is taken.
*/
#include <string.h>
#include "ltfL.h"
#include "ltf_onnx.h"
#include "onnx.pb-c.h"

static void push_graph(lua_State *L, const Onnx__GraphProto *g, const ltf_onnx_model *m);

static void set_str(lua_State *L, const char *k, const char *v) {
    lua_pushstring(L, v ? v : "");
    lua_setfield(L, -2, k);
}

static void push_strings(lua_State *L, char **s, size_t n) {
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushstring(L, s[i] ? s[i] : "");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

static void push_tensor_proto(lua_State *L, const Onnx__TensorProto *tp) {
    ltf_tensor *t = ltf_onnx_tensor_from_proto(ltfL_ctx(L), tp);
    if (!t) ltfL_raisectx(L, LTF_ERR_INVALID_ARGUMENT);
    ltfL_pushtensor(L, t);
}

static void push_value_info(lua_State *L, const Onnx__ValueInfoProto *v) {
    lua_createtable(L, 0, 3);
    set_str(L, "name", v->name);
    int et = 0;
    const Onnx__TensorShapeProto *shape = NULL;
    if (v->type && v->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && v->type->tensor_type) {
        et = v->type->tensor_type->elem_type;
        shape = v->type->tensor_type->shape;
    } else if (v->type && v->type->value_case != ONNX__TYPE_PROTO__VALUE__NOT_SET) {
        et = -1;   /* a sequence, map, optional or sparse tensor */
    }
    lua_pushinteger(L, et);
    lua_setfield(L, -2, "elem_type");
    if (shape) {
        lua_createtable(L, (int)shape->n_dim, 0);
        for (size_t i = 0; i < shape->n_dim; i++) {
            const Onnx__TensorShapeProto__Dimension *d = shape->dim[i];
            if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
                lua_pushinteger(L, d->dim_value);
            else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param)
                lua_pushstring(L, d->dim_param);
            else
                lua_pushboolean(L, 0);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, "shape");
    }
}

static const char *attr_type_name(int t) {
    switch (t) {
    case 1: return "FLOAT";
    case 2: return "INT";
    case 3: return "STRING";
    case 4: return "TENSOR";
    case 5: return "GRAPH";
    case 6: return "FLOATS";
    case 7: return "INTS";
    case 8: return "STRINGS";
    case 9: return "TENSORS";
    case 10: return "GRAPHS";
    case 11: return "SPARSE_TENSOR";
    case 12: return "SPARSE_TENSORS";
    case 13: return "TYPE_PROTO";
    case 14: return "TYPE_PROTOS";
    default: return "UNDEFINED";
    }
}

static void push_attr(lua_State *L, const Onnx__AttributeProto *a) {
    lua_createtable(L, 0, 2);
    int t = a->has_type ? (int)a->type : 0;
    if (a->ref_attr_name && *a->ref_attr_name) {
        lua_pushstring(L, "REF");
        lua_setfield(L, -2, "type");
        return;
    }
    lua_pushstring(L, attr_type_name(t));
    lua_setfield(L, -2, "type");
    switch (t) {
    case 1: lua_pushnumber(L, a->f); break;
    case 2: lua_pushinteger(L, a->i); break;
    case 3: lua_pushlstring(L, (const char *)a->s.data, a->s.len); break;
    case 4:
        if (!a->t) return;
        push_tensor_proto(L, a->t);
        break;
    case 5:
        if (!a->g) return;
        push_graph(L, a->g, NULL);
        break;
    case 6:
        lua_createtable(L, (int)a->n_floats, 0);
        for (size_t i = 0; i < a->n_floats; i++) {
            lua_pushnumber(L, a->floats[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    case 7:
        lua_createtable(L, (int)a->n_ints, 0);
        for (size_t i = 0; i < a->n_ints; i++) {
            lua_pushinteger(L, a->ints[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    case 8:
        lua_createtable(L, (int)a->n_strings, 0);
        for (size_t i = 0; i < a->n_strings; i++) {
            lua_pushlstring(L, (const char *)a->strings[i].data, a->strings[i].len);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    case 9:
        lua_createtable(L, (int)a->n_tensors, 0);
        for (size_t i = 0; i < a->n_tensors; i++) {
            push_tensor_proto(L, a->tensors[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    case 10:
        lua_createtable(L, (int)a->n_graphs, 0);
        for (size_t i = 0; i < a->n_graphs; i++) {
            push_graph(L, a->graphs[i], NULL);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    default: return;   /* sparse tensors, type protos: the importer refuses them by type */
    }
    lua_setfield(L, -2, "value");
}

static void push_graph(lua_State *L, const Onnx__GraphProto *g, const ltf_onnx_model *m) {
    luaL_checkstack(L, 12, "onnx: graph nested too deep");
    lua_createtable(L, 0, 6);
    set_str(L, "name", g->name);
    lua_createtable(L, (int)g->n_input, 0);
    for (size_t i = 0; i < g->n_input; i++) {
        push_value_info(L, g->input[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "inputs");
    lua_createtable(L, (int)g->n_output, 0);
    for (size_t i = 0; i < g->n_output; i++) {
        push_value_info(L, g->output[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "outputs");
    lua_createtable(L, (int)g->n_initializer, 0);
    for (size_t i = 0; i < g->n_initializer; i++) {
        lua_createtable(L, 2, 0);
        lua_pushstring(L, g->initializer[i]->name ? g->initializer[i]->name : "");
        lua_rawseti(L, -2, 1);
        if (m) {
            lua_pushinteger(L, (lua_Integer)i + 1);
        } else {
            push_tensor_proto(L, g->initializer[i]);
        }
        lua_rawseti(L, -2, 2);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "initializers");
    lua_pushboolean(L, g->n_sparse_initializer > 0);
    lua_setfield(L, -2, "sparse_initializers");
    lua_createtable(L, (int)g->n_node, 0);
    for (size_t i = 0; i < g->n_node; i++) {
        const Onnx__NodeProto *nd = g->node[i];
        lua_createtable(L, 0, 6);
        set_str(L, "op_type", nd->op_type);
        set_str(L, "domain", nd->domain);
        set_str(L, "name", nd->name);
        push_strings(L, nd->input, nd->n_input);
        lua_setfield(L, -2, "inputs");
        push_strings(L, nd->output, nd->n_output);
        lua_setfield(L, -2, "outputs");
        lua_createtable(L, 0, (int)nd->n_attribute);
        for (size_t k = 0; k < nd->n_attribute; k++) {
            push_attr(L, nd->attribute[k]);
            lua_setfield(L, -2, nd->attribute[k]->name ? nd->attribute[k]->name : "");
        }
        lua_setfield(L, -2, "attrs");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "nodes");
}

typedef struct {
    ltf_onnx_model *m;
} model_box;

static int box_gc(lua_State *L) {
    model_box *b = lua_touserdata(L, 1);
    ltf_onnx_model_free(b->m);
    b->m = NULL;
    return 0;
}

static model_box *live_box(lua_State *L) {
    model_box *b = lua_touserdata(L, lua_upvalueindex(3));
    if (!b->m) ltfL_raise(L, LTF_ERR_FAILED_PRECONDITION, "onnx: the model's reader is closed");
    return b;
}

static int l_model_initializer(lua_State *L) {
    model_box *b = live_box(L);
    lua_Integer i = luaL_checkinteger(L, 1);
    const char *layout = luaL_optstring(L, 2, "");
    size_t n = ltf_onnx_model_ninitializers(b->m);
    if (i < 1 || (lua_Unsigned)i > n) return ltfL_raise(L, LTF_ERR_OUT_OF_RANGE, "onnx: no such initializer");
    if (strcmp(layout, "hwio") == 0) {
        const Onnx__ModelProto *p = ltf_onnx_model_proto(b->m);
        const Onnx__TensorProto *tp = p->graph->initializer[i - 1];
        /* nil: not a 2-d conv weight */
        if (tp->n_dims != 4 || tp->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__STRING) return 0;
        ltf_tensor *t = ltf_onnx_model_initializer_hwio(b->m, (size_t)i - 1);
        if (!t) return ltfL_raisectx(L, LTF_ERR_INVALID_ARGUMENT);
        ltfL_pushtensor(L, t);
        return 1;
    }
    if (*layout) return luaL_argerror(L, 2, "\"hwio\" or nothing expected");
    ltf_tensor *t = ltf_onnx_model_initializer(b->m, (size_t)i - 1);
    if (!t) return ltfL_raisectx(L, LTF_ERR_INVALID_ARGUMENT);
    ltfL_pushtensor(L, ltf_tensor_retain(t));
    return 1;
}

static int l_model_close(lua_State *L) {
    model_box *b = lua_touserdata(L, lua_upvalueindex(3));
    ltf_onnx_model_free(b->m);
    b->m = NULL;
    return 0;
}

static int l_read(lua_State *L) {
    size_t len;
    const char *src = luaL_checklstring(L, 1, &len);
    int is_bytes = lua_toboolean(L, 2);
    /* the model lives in a box (freed by close() or the collector); the
    ** box keeps the bytes, which the initializers are read from */
    model_box *b = lua_newuserdatauv(L, sizeof *b, 1);
    b->m = NULL;
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, box_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    if (is_bytes) {
        lua_pushvalue(L, 1);
        lua_setiuservalue(L, -2, 1);
    }
    int box = lua_gettop(L);
    b->m = is_bytes ? ltf_onnx_model_read(ltfL_ctx(L), src, len) : ltf_onnx_model_read_file(ltfL_ctx(L), src);
    if (!b->m) return ltfL_raisectx(L, LTF_ERR_INVALID_ARGUMENT);
    const Onnx__ModelProto *p = ltf_onnx_model_proto(b->m);
    lua_createtable(L, 0, 9);
    lua_pushinteger(L, p->ir_version);
    lua_setfield(L, -2, "ir_version");
    set_str(L, "producer_name", p->producer_name);
    set_str(L, "producer_version", p->producer_version);
    lua_createtable(L, 0, (int)p->n_opset_import);
    for (size_t i = 0; i < p->n_opset_import; i++) {
        lua_pushinteger(L, p->opset_import[i]->version);
        lua_setfield(L, -2, p->opset_import[i]->domain ? p->opset_import[i]->domain : "");
    }
    lua_setfield(L, -2, "opsets");
    lua_pushinteger(L, (lua_Integer)p->n_functions);
    lua_setfield(L, -2, "nfunctions");
    push_graph(L, p->graph, b->m);
    lua_setfield(L, -2, "graph");
    lua_pushinteger(L, (lua_Integer)ltf_onnx_model_proto_bytes(b->m));
    lua_setfield(L, -2, "proto_bytes");
    /* closures with the bindings' upvalues (the state, the tensor metatable) and the box */
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushvalue(L, box);
    lua_pushcclosure(L, l_model_initializer, 3);
    lua_setfield(L, -2, "initializer");
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushvalue(L, box);
    lua_pushcclosure(L, l_model_close, 3);
    lua_setfield(L, -2, "close");
    return 1;
}

static int l_read_tensor(lua_State *L) {
    size_t len;
    const char *src = luaL_checklstring(L, 1, &len);
    char name[256];
    ltf_tensor *t = ltf_onnx_tensor_read(ltfL_ctx(L), src, len, name, sizeof name);
    if (!t) return ltfL_raisectx(L, LTF_ERR_INVALID_ARGUMENT);
    ltfL_pushtensor(L, t);
    lua_pushstring(L, name);
    return 2;
}

/* core.internal.onnx_hwio(w) -> ONNX conv weights (O, I, kh, kw) as luatf's
** (kh, kw, I, O), a new contiguous tensor: dst[k][i][o] = src[o][i][k] in
** blocks of 16 output channels (tf.transpose's generic loop is several
** times slower on this permutation, and resnet18 has 45 MB of them).
** A depthwise weight (C*M, 1, kh, kw) comes out (kh, kw, 1, C*M), which
** reshapes to (kh, kw, C, M). */
static int l_hwio(lua_State *L) {
    ltf_tensor *w = ltfL_checktensor(L, 1, "onnx_hwio", "w");
    if (ltf_tensor_rank(w) != 4 || ltf_tensor_is_symbolic(w))
        return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "onnx_hwio: a concrete 4-d tensor expected");
    ltf_tensor *t = ltf_onnx_hwio(ltfL_ctx(L), w);
    if (!t) return ltfL_raisectx(L, LTF_ERR_INVALID_ARGUMENT);
    ltfL_pushtensor(L, t);
    return 1;
}

static const luaL_Reg onnx_fns[] = {
    {"onnx_hwio", l_hwio},
    {"onnx_read", l_read},
    {"onnx_read_tensor", l_read_tensor},
    {NULL, NULL},
};

void ltfL_open_onnx(lua_State *L) {
    ltfL_register(L, onnx_fns, LTFL_INTERNAL);
}
