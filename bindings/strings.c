/*
** strings.c: Lua bindings of the strings family (ltf_ops/strings.h): the
** engine's raw entry points, fixed positional arguments, registered in
** tf.core.internal; lua/tf/string_ops.lua builds tf.strings.* on them.
*/
#include <string.h>
#include "ltfL.h"

/* Tensor from the value at 'idx'; a converted Lua number stays boxed on the
** stack so that the scalar cache cannot drop it. [-0, +(0|1), v] */
static ltf_tensor *held(lua_State *L, int idx, int like, const char *op, const char *arg) {
    ltf_tensor *t = ltfL_totensor(L, idx, like, op, arg);
    if (lua_type(L, idx) == LUA_TNUMBER) ltfL_pushtensor(L, ltf_tensor_retain(t));
    return t;
}

/* strings_length(input, utf8) */
static int str_length(lua_State *L) {
    lua_settop(L, 2);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = lua_toboolean(L, 2);
    ltf_tensor *x = held(L, 1, -1, "string_length", "input");
    return ltfL_run1(L, LTF_OP_STRING_LENGTH, &x, 1, &a);
}

/* strings_substr(input, pos, len, utf8) */
static int str_substr(lua_State *L) {
    lua_settop(L, 4);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = lua_toboolean(L, 4);
    ltf_tensor *in[3];
    in[0] = held(L, 1, -1, "substr", "input");
    in[1] = held(L, 2, LTF_DTYPE_INT32, "substr", "pos");
    in[2] = held(L, 3, LTF_DTYPE_INT32, "substr", "len");
    return ltfL_run1(L, LTF_OP_SUBSTR, in, 3, &a);
}

/* strings_to_number(input, out_type) */
static int str_to_number(lua_State *L) {
    lua_settop(L, 2);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = ltfL_checkdtype(L, 2, "string_to_number", "out_type", LTF_DTYPE_FLOAT32) + 1;
    ltf_tensor *x = held(L, 1, -1, "string_to_number", "string_tensor");
    return ltfL_run1(L, LTF_OP_STRING_TO_NUMBER, &x, 1, &a);
}

/* strings_regex_full_match(input, pattern) */
static int str_regex_full_match(lua_State *L) {
    lua_settop(L, 2);
    ltf_tensor *in[2];
    in[0] = held(L, 1, -1, "regex_full_match", "input");
    in[1] = held(L, 2, -1, "regex_full_match", "pattern");
    return ltfL_run1(L, LTF_OP_REGEX_FULL_MATCH, in, 2, NULL);
}

/* strings_regex_replace(input, pattern, rewrite, replace_global) */
static int str_regex_replace(lua_State *L) {
    lua_settop(L, 4);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = lua_toboolean(L, 4);
    ltf_tensor *in[3];
    in[0] = held(L, 1, -1, "regex_replace", "input");
    in[1] = held(L, 2, -1, "regex_replace", "pattern");
    in[2] = held(L, 3, -1, "regex_replace", "rewrite");
    return ltfL_run1(L, LTF_OP_REGEX_REPLACE, in, 3, &a);
}

/* strings_format(template, placeholder, summarize, inputs...) */
static int str_format(lua_State *L) {
    int n = lua_gettop(L);
    if (n < 3) return ltfL_raise(L, LTF_ERR_TYPE, "string_format: expected template, placeholder, summarize");
    ltf_attrs a;
    ltf_attrs_init(&a);
    size_t pl = 0;
    const char *ph = lua_isnil(L, 2) ? "{}" : luaL_checklstring(L, 2, &pl);
    if (lua_isnil(L, 2)) pl = 2;
    if (pl == 0 || pl >= LTF_ATTR_STR_MAX)
        return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "string_format: 'placeholder' must have 1 to %d bytes",
                           LTF_ATTR_STR_MAX - 1);
    memcpy(a.s, ph, pl);
    a.i[0] = luaL_optinteger(L, 3, 3);
    if (n - 2 > 1000) return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "string_format: too many inputs");
    ltf_tensor **in = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)(n - 2), 0);
    in[0] = held(L, 1, -1, "string_format", "template");
    for (int k = 4; k <= n; k++) in[k - 3] = held(L, k, -1, "string_format", "inputs");
    return ltfL_run1(L, LTF_OP_STRING_FORMAT, in, n - 2, &a);
}

/* strings_split(input, sep|nil, maxsplit, pad) -> parts (padded), counts */
static int str_split(lua_State *L) {
    lua_settop(L, 4);
    ltf_attrs a;
    ltf_attrs_init(&a);
    size_t sl = 0;
    const char *sep = lua_isnil(L, 2) ? "" : luaL_checklstring(L, 2, &sl);
    if (sl >= LTF_ATTR_STR_MAX || strlen(sep) != sl)
        return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT,
                           "string_split: 'sep' must have at most %d bytes and no NUL byte", LTF_ATTR_STR_MAX - 1);
    memcpy(a.s, sep, sl);
    a.i[0] = luaL_optinteger(L, 3, -1);
    ltf_tensor *in[2];
    in[0] = held(L, 1, -1, "string_split", "input");
    in[1] = held(L, 4, -1, "string_split", "pad");
    return ltfL_runn(L, LTF_OP_STRING_SPLIT, in, 2, &a);
}

/* strings_case(input, upper, utf8) */
static int str_case(lua_State *L) {
    lua_settop(L, 3);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = lua_toboolean(L, 2);
    a.i[1] = lua_toboolean(L, 3);
    ltf_tensor *x = held(L, 1, -1, a.i[0] ? "upper" : "lower", "input");
    return ltfL_run1(L, LTF_OP_STRING_CASE, &x, 1, &a);
}

/* strings_strip(input) */
static int str_strip(lua_State *L) {
    lua_settop(L, 1);
    ltf_tensor *x = held(L, 1, -1, "strip", "input");
    return ltfL_run1(L, LTF_OP_STRING_STRIP, &x, 1, NULL);
}

/* strings_reduce_join(input, axis (0-based, -1: all), keepdims, separator) */
static int str_reduce_join(lua_State *L) {
    lua_settop(L, 4);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = luaL_checkinteger(L, 2);
    a.i[1] = lua_toboolean(L, 3);
    ltf_tensor *in[2];
    in[0] = held(L, 1, -1, "reduce_join", "inputs");
    in[1] = held(L, 4, -1, "reduce_join", "separator");
    return ltfL_run1(L, LTF_OP_REDUCE_JOIN, in, 2, &a);
}

/* strings_ngrams(data, lengths|nil, widths, separator, left_pad, right_pad, pad_width, preserve) -> grams, counts */
static int str_ngrams(lua_State *L) {
    lua_settop(L, 8);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = luaL_checkinteger(L, 7);
    a.i[1] = lua_toboolean(L, 8);
    if (lua_isnil(L, 2)) {
        lua_pushinteger(L, -1);
        lua_replace(L, 2);
    }
    ltf_tensor *in[6];
    in[0] = held(L, 1, -1, "ngrams", "data");
    in[1] = held(L, 2, LTF_DTYPE_INT32, "ngrams", "lengths");
    in[2] = held(L, 3, LTF_DTYPE_INT32, "ngrams", "ngram_width");
    in[3] = held(L, 4, -1, "ngrams", "separator");
    in[4] = held(L, 5, -1, "ngrams", "pad_values");
    in[5] = held(L, 6, -1, "ngrams", "pad_values");
    return ltfL_runn(L, LTF_OP_STRING_NGRAMS, in, 6, &a);
}

/* strings_unicode_decode(input, errors (0..2), replacement, split, pad (a code point, or a string when split))
** -> chars, counts */
static int str_unicode_decode(lua_State *L) {
    lua_settop(L, 5);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = luaL_checkinteger(L, 2);
    a.i[1] = luaL_checkinteger(L, 3);
    a.i[2] = lua_toboolean(L, 4);
    if (a.i[2] && lua_type(L, 5) == LUA_TSTRING) {   /* split: the pad string */
        size_t pl;
        const char *p = lua_tolstring(L, 5, &pl);
        if (pl >= LTF_ATTR_STR_MAX || strlen(p) != pl)
            return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT,
                               "unicode_split: 'pad' must have at most %d bytes and no NUL byte", LTF_ATTR_STR_MAX - 1);
        memcpy(a.s, p, pl);
    } else {
        a.i[3] = luaL_optinteger(L, 5, 0);
    }
    ltf_tensor *x = held(L, 1, -1, a.i[2] ? "unicode_split" : "unicode_decode", "input");
    return ltfL_runn(L, LTF_OP_UNICODE_DECODE, &x, 1, &a);
}

/* strings_unicode_encode(code_points, lengths|nil, errors, replacement) */
static int str_unicode_encode(lua_State *L) {
    lua_settop(L, 4);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = luaL_checkinteger(L, 3);
    a.i[1] = luaL_checkinteger(L, 4);
    if (lua_isnil(L, 2)) {
        lua_pushinteger(L, -1);
        lua_replace(L, 2);
    }
    ltf_tensor *in[2];
    in[0] = held(L, 1, LTF_DTYPE_INT32, "unicode_encode", "input");
    in[1] = held(L, 2, LTF_DTYPE_INT32, "unicode_encode", "lengths");
    return ltfL_run1(L, LTF_OP_UNICODE_ENCODE, in, 2, &a);
}

/* strings_hash_bucket(input, num_buckets, strong, key0, key1) */
static int str_hash_bucket(lua_State *L) {
    lua_settop(L, 5);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = luaL_checkinteger(L, 2);
    a.i[1] = lua_toboolean(L, 3);
    a.i[2] = luaL_optinteger(L, 4, 0);
    a.i[3] = luaL_optinteger(L, 5, 0);
    ltf_tensor *x = held(L, 1, -1, a.i[1] ? "to_hash_bucket_strong" : "to_hash_bucket_fast", "input");
    return ltfL_run1(L, LTF_OP_STRING_HASH_BUCKET, &x, 1, &a);
}

/* lookup_find(keys, values, input, default, num_oov_buckets) */
static int lookup_find(lua_State *L) {
    lua_settop(L, 5);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = luaL_optinteger(L, 5, 0);
    ltf_tensor *in[4];
    in[0] = held(L, 1, -1, "lookup", "keys");
    in[1] = held(L, 2, -1, "lookup", "values");
    in[2] = held(L, 3, (int)ltf_tensor_dtype(in[0]), "lookup", "keys");
    in[3] = held(L, 4, (int)ltf_tensor_dtype(in[1]), "lookup", "default_value");
    return ltfL_run1(L, LTF_OP_HASH_TABLE_FIND, in, 4, &a);
}

static const luaL_Reg strings_internal[] = {
    {"strings_case", str_case},
    {"strings_strip", str_strip},
    {"strings_reduce_join", str_reduce_join},
    {"strings_ngrams", str_ngrams},
    {"strings_unicode_decode", str_unicode_decode},
    {"strings_unicode_encode", str_unicode_encode},
    {"strings_hash_bucket", str_hash_bucket},
    {"lookup_find", lookup_find},
    {"strings_length", str_length},
    {"strings_substr", str_substr},
    {"strings_to_number", str_to_number},
    {"strings_regex_full_match", str_regex_full_match},
    {"strings_regex_replace", str_regex_replace},
    {"strings_format", str_format},
    {"strings_split", str_split},
    {NULL, NULL}
};

void ltfL_open_strings(lua_State *L) {
    ltfL_register(L, strings_internal, LTFL_INTERNAL);
}
