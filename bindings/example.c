/*
** example.c: Lua bindings of the tf.train.Example protobuf (protobuf-c code
** generated from proto/example.proto, proto/feature.proto): building the
** wire bytes from a Lua description and decoding them back into one. The
** classes (tf.train.Example, Features, Feature, BytesList, ...) are
** lua/tf/train/example.lua; parsing into tensors is the op
** parse_example_feature (core/cpu/example.c).
*/
#include <stdlib.h>
#include <string.h>
#include "ltfL.h"
#include "example.pb-c.h"

/* core.example_serialize(entries) -> bytes. entries: array of {key, kind, values}
** (kind 1 bytes_list, 2 float_list, 3 int64_list; values an array of Lua
** strings / numbers / integers), written in the given order. */
static int l_serialize(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    int n = ltfL_checkcount(L, 1, "Example", "features");
    Tensorflow__Example ex = TENSORFLOW__EXAMPLE__INIT;
    Tensorflow__Features feats = TENSORFLOW__FEATURES__INIT;
    ex.features = &feats;
    Tensorflow__Features__FeatureEntry *entries = lua_newuserdatauv(L, sizeof *entries * (size_t)(n ? n : 1), 0);
    Tensorflow__Features__FeatureEntry **eptr = lua_newuserdatauv(L, sizeof *eptr * (size_t)(n ? n : 1), 0);
    Tensorflow__Feature *fs = lua_newuserdatauv(L, sizeof *fs * (size_t)(n ? n : 1), 0);
    Tensorflow__BytesList *bl = lua_newuserdatauv(L, sizeof *bl * (size_t)(n ? n : 1), 0);
    Tensorflow__FloatList *fl = lua_newuserdatauv(L, sizeof *fl * (size_t)(n ? n : 1), 0);
    Tensorflow__Int64List *il = lua_newuserdatauv(L, sizeof *il * (size_t)(n ? n : 1), 0);
    feats.n_feature = (size_t)n;
    feats.feature = eptr;
    for (int i = 0; i < n; i++) {
        luaL_checkstack(L, 8, "Example: too many features");
        lua_rawgeti(L, 1, i + 1);
        int e = lua_gettop(L);
        if (!lua_istable(L, e)) return ltfL_raise(L, LTF_ERR_TYPE, "Example: bad feature entry");
        Tensorflow__Features__FeatureEntry ie = TENSORFLOW__FEATURES__FEATURE_ENTRY__INIT;
        entries[i] = ie;
        eptr[i] = &entries[i];
        lua_rawgeti(L, e, 1);
        entries[i].key = (char *)luaL_checkstring(L, -1);   /* kept alive by the table */
        lua_pop(L, 1);
        lua_rawgeti(L, e, 2);
        int kind = (int)lua_tointeger(L, -1);
        lua_pop(L, 1);
        lua_rawgeti(L, e, 3);
        int v = lua_gettop(L);
        int m = ltfL_checkcount(L, v, "Example", "values");
        Tensorflow__Feature f = TENSORFLOW__FEATURE__INIT;
        fs[i] = f;
        entries[i].value = &fs[i];
        if (kind == 1) {
            Tensorflow__BytesList b = TENSORFLOW__BYTES_LIST__INIT;
            bl[i] = b;
            ProtobufCBinaryData *vals = lua_newuserdatauv(L, sizeof *vals * (size_t)(m ? m : 1), 0);
            for (int j = 0; j < m; j++) {
                lua_rawgeti(L, v, j + 1);
                size_t len;
                const char *s = lua_tolstring(L, -1, &len);
                if (!s) return ltfL_raisef(L, LTF_ERR_TYPE, "Example: feature '%s': bytes_list values must be strings", entries[i].key);
                vals[j].data = (uint8_t *)s;
                vals[j].len = len;
                lua_pop(L, 1);
            }
            bl[i].n_value = (size_t)m;
            bl[i].value = vals;
            fs[i].kind_case = TENSORFLOW__FEATURE__KIND_BYTES_LIST;
            fs[i].bytes_list = &bl[i];
        } else if (kind == 2) {
            Tensorflow__FloatList b = TENSORFLOW__FLOAT_LIST__INIT;
            fl[i] = b;
            float *vals = lua_newuserdatauv(L, sizeof *vals * (size_t)(m ? m : 1), 0);
            for (int j = 0; j < m; j++) {
                lua_rawgeti(L, v, j + 1);
                int ok;
                lua_Number x = lua_tonumberx(L, -1, &ok);
                if (!ok) return ltfL_raisef(L, LTF_ERR_TYPE, "Example: feature '%s': float_list values must be numbers", entries[i].key);
                vals[j] = (float)x;
                lua_pop(L, 1);
            }
            fl[i].n_value = (size_t)m;
            fl[i].value = vals;
            fs[i].kind_case = TENSORFLOW__FEATURE__KIND_FLOAT_LIST;
            fs[i].float_list = &fl[i];
        } else if (kind == 3) {
            Tensorflow__Int64List b = TENSORFLOW__INT64_LIST__INIT;
            il[i] = b;
            int64_t *vals = lua_newuserdatauv(L, sizeof *vals * (size_t)(m ? m : 1), 0);
            for (int j = 0; j < m; j++) {
                lua_rawgeti(L, v, j + 1);
                int ok;
                lua_Integer x = lua_tointegerx(L, -1, &ok);
                if (!ok) return ltfL_raisef(L, LTF_ERR_TYPE, "Example: feature '%s': int64_list values must be integers", entries[i].key);
                vals[j] = (int64_t)x;
                lua_pop(L, 1);
            }
            il[i].n_value = (size_t)m;
            il[i].value = vals;
            fs[i].kind_case = TENSORFLOW__FEATURE__KIND_INT64_LIST;
            fs[i].int64_list = &il[i];
        } else if (kind != 0) {
            return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "Example: feature '%s': unknown list kind %d", entries[i].key, kind);
        }
        /* the values' userdata (if any) and the entry table stay on the stack until the end */
    }
    size_t sz = tensorflow__example__get_packed_size(&ex);
    uint8_t *buf = lua_newuserdatauv(L, sz ? sz : 1, 0);
    tensorflow__example__pack(&ex, buf);
    lua_pushlstring(L, (const char *)buf, sz);
    return 1;
}

static void push_feature(lua_State *L, const Tensorflow__Feature *f) {
    lua_createtable(L, 0, 2);
    size_t n = 0;
    const char *kind = "none";
    if (f) switch (f->kind_case) {
    case TENSORFLOW__FEATURE__KIND_BYTES_LIST: kind = "bytes_list"; n = f->bytes_list ? f->bytes_list->n_value : 0; break;
    case TENSORFLOW__FEATURE__KIND_FLOAT_LIST: kind = "float_list"; n = f->float_list ? f->float_list->n_value : 0; break;
    case TENSORFLOW__FEATURE__KIND_INT64_LIST: kind = "int64_list"; n = f->int64_list ? f->int64_list->n_value : 0; break;
    default: break;
    }
    lua_pushstring(L, kind);
    lua_setfield(L, -2, "kind");
    lua_createtable(L, (int)(n < 1000000 ? n : 1000000), 0);
    for (size_t j = 0; j < n; j++) {
        switch (f->kind_case) {
        case TENSORFLOW__FEATURE__KIND_BYTES_LIST:
            lua_pushlstring(L, (const char *)f->bytes_list->value[j].data, f->bytes_list->value[j].len);
            break;
        case TENSORFLOW__FEATURE__KIND_FLOAT_LIST: lua_pushnumber(L, (lua_Number)f->float_list->value[j]); break;
        default: lua_pushinteger(L, (lua_Integer)f->int64_list->value[j]); break;
        }
        lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    lua_setfield(L, -2, "values");
}

/* core.example_parse(bytes) -> {key = {kind =, values =}}, or raises
** InvalidArgumentError for bytes that are not an Example. */
static int l_parse(lua_State *L) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    Tensorflow__Example *ex = tensorflow__example__unpack(NULL, n, (const uint8_t *)s);
    if (!ex) return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT,
                                "Example.FromString: could not parse a tf.train.Example (%zu bytes of malformed protobuf)", n);
    lua_newtable(L);
    if (ex->features) {
        for (size_t i = 0; i < ex->features->n_feature; i++) {
            const Tensorflow__Features__FeatureEntry *e = ex->features->feature[i];
            if (!e) continue;
            push_feature(L, e->value);
            lua_setfield(L, -2, e->key ? e->key : "");
        }
    }
    tensorflow__example__free_unpacked(ex, NULL);
    return 1;
}

/* core.parse_example_feature(serialized, key, default, kind, dtype, shape, allow_missing)
** -> the op's outputs (ltf_ops/example.h): one tensor, or indices, values, dense_shape */
static int l_parse_feature(lua_State *L) {
    lua_settop(L, 7);
    ltf_attrs a;
    ltf_attrs_init(&a);
    ltf_tensor *in[3];
    in[0] = ltfL_totensor(L, 1, -1, "parse_example", "serialized");
    in[1] = ltfL_totensor(L, 2, -1, "parse_example", "key");
    in[2] = ltfL_totensor(L, 3, -1, "parse_example", "default_value");
    a.i[0] = luaL_checkinteger(L, 4);
    a.i[1] = ltfL_checkdtype(L, 5, "parse_example", "dtype", -1);
    a.nints = ltfL_checkintlist(L, 6, "parse_example", "shape", a.ints, LTF_ATTR_LIST_MAX, 0);
    a.i[2] = lua_toboolean(L, 7);
    return ltfL_runn(L, LTF_OP_PARSE_EXAMPLE_FEATURE, in, 3, &a);
}

static const luaL_Reg example_fns[] = {
    {"parse_example_feature", l_parse_feature},
    {"example_serialize", l_serialize},
    {"example_parse", l_parse},
    {NULL, NULL}
};

void ltfL_open_example(lua_State *L) { ltfL_register(L, example_fns, LTFL_INTERNAL); }
