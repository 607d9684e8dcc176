/*
** nn.c: Lua bindings of matmul and the nn ops: tf.matmul (also
** tf.linalg.matmul), tf.nn.softmax / log_softmax (also tf.math.*), the two
** softmax cross-entropies, tf.nn.conv2d (and its gradients:
** tf.nn.conv2d_transpose, tf.nn.conv2d_backprop_input/filter, tf.nn.depthwise_conv2d
** and its backprop_input/filter),
** tf.nn.max_pool2d, tf.nn.avg_pool2d.
** Axes arrive 1-based and are converted here; window arguments (strides,
** ksize, dilations) accept an integer or a list of 1, 2 or 4 entries as
** TensorFlow does.
*/
#include <ctype.h>
#include <string.h>
#include "ltfL.h"

/* {==== Argument helpers */
/* Boolean option 'key' of the keyword table at 'idx' (absent: false). */
static int optbool(lua_State *L, int idx, const char *op, const char *key) {
    int t = ltfL_getkw(L, idx, key);
    int v = lua_toboolean(L, -1);
    if (t != LUA_TNIL && t != LUA_TBOOLEAN)
        ltfL_raisef(L, LTF_ERR_TYPE, "%s: option '%s' expected boolean, got %s", op, key, luaL_typename(L, -1));
    lua_pop(L, 1);
    return v;
}

/* Is the value at 'idx' a keyword table (a plain table naming 'k1' or 'k2')? */
static int iskw(lua_State *L, int idx, const char *k1, const char *k2) {
    if (!lua_istable(L, idx) || ltfL_testtensor(L, idx)) return 0;
    int found = lua_getfield(L, idx, k1) != LUA_TNIL;
    lua_pop(L, 1);
    if (!found && k2) {
        found = lua_getfield(L, idx, k2) != LUA_TNIL;
        lua_pop(L, 1);
    }
    return found;
}

/* Window argument (strides, ksize, dilations): an integer, or a list of 1,
** 2 (height, width) or 4 (NHWC, batch and depth 1) entries -> (h, w). */
static void window_arg(lua_State *L, int idx, const char *op, const char *arg, int64_t *hw) {
    int64_t v[4];
    if (lua_isnoneornil(L, idx)) ltfL_argerror(L, idx, op, arg, "integer or table of integers");
    int n = ltfL_checkintlist(L, idx, op, arg, v, 4, 1);
    if (n == 1) {
        hw[0] = hw[1] = v[0];
    } else if (n == 2) {
        hw[0] = v[0];
        hw[1] = v[1];
    } else if (n == 4) {
        if (v[0] != 1 || v[3] != 1)
            ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT,
                        "%s: '%s' must be 1 in the batch and depth dimensions, got {%lld, %lld, %lld, %lld}", op, arg,
                        (long long)v[0], (long long)v[1], (long long)v[2], (long long)v[3]);
        hw[0] = v[1];
        hw[1] = v[2];
    } else {
        ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must have 1, 2 or 4 entries, got %d", op, arg, n);
    }
}

/* padding: "SAME" / "VALID" (any case), or for conv2d explicit NHWC pairs
** {{0, 0}, {top, bottom}, {left, right}, {0, 0}} written to pads[0..3]. */
static int padding_arg(lua_State *L, int idx, const char *op, int explicit_ok, int64_t *pads) {
    if (lua_type(L, idx) == LUA_TSTRING) {
        const char *s = lua_tostring(L, idx);
        char up[16];
        size_t i = 0;
        for (; s[i] && i < sizeof up - 1; i++) up[i] = (char)toupper((unsigned char)s[i]);
        up[i] = '\0';
        if (!s[i] && strcmp(up, "SAME") == 0) return LTF_PADDING_SAME;
        if (!s[i] && strcmp(up, "VALID") == 0) return LTF_PADDING_VALID;
        return ltfL_raisef(L, LTF_ERR_VALUE, "%s: argument %d ('padding') must be 'SAME' or 'VALID'%s, got '%s'", op,
                           idx, explicit_ok ? " or a list of explicit paddings" : "", s);
    }
    if (explicit_ok && lua_istable(L, idx) && !ltfL_testtensor(L, idx)) {
        int64_t pair[4][2];
        if (luaL_len(L, idx) != 4)
            ltfL_raisef(L, LTF_ERR_VALUE, "%s: explicit padding must have 4 pairs (NHWC), got %d", op,
                        (int)luaL_len(L, idx));
        for (int d = 0; d < 4; d++) {
            lua_geti(L, idx, d + 1);
            int n = ltfL_checkintlist(L, lua_gettop(L), op, "padding", pair[d], 2, 0);
            lua_pop(L, 1);
            if (n != 2) ltfL_raisef(L, LTF_ERR_VALUE, "%s: explicit padding entry %d must be a pair, got %d values", op, d + 1, n);
        }
        if (pair[0][0] || pair[0][1] || pair[3][0] || pair[3][1])
            ltfL_raisef(L, LTF_ERR_VALUE, "%s: explicit padding of the batch and depth dimensions must be 0", op);
        pads[0] = pair[1][0];
        pads[1] = pair[1][1];
        pads[2] = pair[2][0];
        pads[3] = pair[2][1];
        return LTF_PADDING_EXPLICIT;
    }
    return ltfL_argerror(L, idx, op, "padding", explicit_ok ? "string or table of paddings" : "string");
}

static void check_data_format(lua_State *L, int idx, const char *op) {
    if (lua_isnoneornil(L, idx)) return;
    const char *f = lua_tostring(L, idx);
    if (!f || lua_type(L, idx) != LUA_TSTRING) ltfL_argerror(L, idx, op, "data_format", "string");
    if (strcmp(f, "NHWC") != 0)
        ltfL_raisef(L, LTF_ERR_UNIMPLEMENTED, "%s: data_format '%s' is not supported (only NHWC)", op, f);
}
/* }==== */

/* {==== matmul */
/* tf.matmul(a, b [, {transpose_a=, transpose_b=, adjoint_a=, adjoint_b=}]) */
static int nn_matmul(lua_State *L) {
    lua_settop(L, 3);   /* converted operands are pushed above the arguments */
    static const char *const keys[] = { "transpose_a", "transpose_b", "adjoint_a", "adjoint_b", "name", NULL };
    ltfL_checkkeys(L, 3, "matmul", keys);
    ltf_tensor *a = ltfL_testtensor(L, 1), *b = ltfL_testtensor(L, 2);
    int like = a ? (int)ltf_tensor_dtype(a) : (b ? (int)ltf_tensor_dtype(b) : -1);
    if (!a) a = ltfL_totensor(L, 1, like, "matmul", "a");
    if (!b) b = ltfL_totensor(L, 2, like, "matmul", "b");
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = optbool(L, 3, "matmul", "transpose_a") || optbool(L, 3, "matmul", "adjoint_a");
    at.i[1] = optbool(L, 3, "matmul", "transpose_b") || optbool(L, 3, "matmul", "adjoint_b");
    ltf_tensor *in[2] = { a, b };
    return ltfL_run1(L, LTF_OP_MATMUL, in, 2, &at);
}
/* }==== */

/* {==== softmax family */
/* tf.nn.softmax(logits [, axis | {axis=}]) and log_softmax */
static int softmax_common(lua_State *L, ltf_op_id op, const char *name) {
    lua_settop(L, 2);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, name, "logits");
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = -1;
    if (lua_istable(L, 2) && !ltfL_testtensor(L, 2)) {
        static const char *const keys[] = { "axis", "name", NULL };
        ltfL_checkkeys(L, 2, name, keys);
        if (ltfL_getkw(L, 2, "axis") != LUA_TNIL) at.i[0] = ltfL_checkaxis(L, lua_gettop(L), name, "axis");
    } else if (!lua_isnoneornil(L, 2)) {
        at.i[0] = ltfL_checkaxis(L, 2, name, "axis");
    }
    return ltfL_run1(L, op, &x, 1, &at);
}

static int nn_softmax(lua_State *L) { return softmax_common(L, LTF_OP_SOFTMAX, "softmax"); }
static int nn_log_softmax(lua_State *L) { return softmax_common(L, LTF_OP_LOG_SOFTMAX, "log_softmax"); }

/* Find labels and logits: keyword table {labels=, logits=, ...} at 1, or
** positional (labels, logits [, options]). Pushes both; returns the index
** of the options table (0 when none). */
static int xent_args(lua_State *L, const char *name, const char *const *keys, int *li, int *gi) {
    if (iskw(L, 1, "labels", "logits")) {
        ltfL_checkkeys(L, 1, name, keys);
        if (ltfL_getkw(L, 1, "labels") == LUA_TNIL) ltfL_raisef(L, LTF_ERR_TYPE, "%s: missing 'labels'", name);
        *li = lua_gettop(L);
        if (ltfL_getkw(L, 1, "logits") == LUA_TNIL) ltfL_raisef(L, LTF_ERR_TYPE, "%s: missing 'logits'", name);
        *gi = lua_gettop(L);
        return 1;
    }
    if (lua_isnoneornil(L, 1)) ltfL_argerror(L, 1, name, "labels", "tensor");
    if (lua_isnoneornil(L, 2)) ltfL_argerror(L, 2, name, "logits", "tensor");
    ltfL_checkkeys(L, 3, name, keys);
    *li = 1;
    *gi = 2;
    return lua_istable(L, 3) ? 3 : 0;
}

/* tf.nn.sparse_softmax_cross_entropy_with_logits{labels=, logits=}: labels
** are 1-based class indices; returns the per-example loss. */
static int nn_sparse_xent(lua_State *L) {
    static const char *name = "sparse_softmax_cross_entropy_with_logits";
    static const char *const keys[] = { "labels", "logits", "name", NULL };
    int li, gi;
    xent_args(L, name, keys, &li, &gi);
    ltf_tensor *logits = ltfL_totensor(L, gi, -1, name, "logits");
    ltf_tensor *labels = ltfL_totensor(L, li, -1, name, "labels");
    ltf_tensor *in[2] = { labels, logits };
    return ltfL_run1(L, LTF_OP_SPARSE_SOFTMAX_XENT, in, 2, NULL);
}

/* tf.nn.softmax_cross_entropy_with_logits{labels=, logits=, axis=}: dense
** labels (a distribution per example); returns the per-example loss. */
static int nn_xent(lua_State *L) {
    static const char *name = "softmax_cross_entropy_with_logits";
    static const char *const keys[] = { "labels", "logits", "axis", "name", NULL };
    int li, gi;
    int opts = xent_args(L, name, keys, &li, &gi);
    ltf_tensor *logits = ltfL_totensor(L, gi, -1, name, "logits");
    ltf_tensor *labels = ltfL_totensor(L, li, (int)ltf_tensor_dtype(logits), name, "labels");
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = -1;
    if (opts && ltfL_getkw(L, opts, "axis") != LUA_TNIL) at.i[0] = ltfL_checkaxis(L, lua_gettop(L), name, "axis");
    ltf_tensor *in[2] = { labels, logits };
    return ltfL_run1(L, LTF_OP_SOFTMAX_XENT, in, 2, &at);
}
/* }==== */

/* {==== conv2d and pools */
/* The window arguments shared by conv2d and its gradients: strides at
** 'idx', padding at idx + 1, then either an options table {dilations=,
** data_format=} or data_format, dilations positionally. Fills 'at'. */
static void conv_window_args(lua_State *L, int idx, const char *op, ltf_attrs *at) {
    static const char *const keys[] = { "dilations", "data_format", "name", NULL };
    at->nints = 8;
    window_arg(L, idx, op, "strides", at->ints);
    at->ints[2] = at->ints[3] = 1;
    at->i[0] = padding_arg(L, idx + 1, op, 1, at->ints + 4);
    int o = idx + 2;
    if (lua_istable(L, o)) {
        ltfL_checkkeys(L, o, op, keys);
        if (ltfL_getkw(L, o, "dilations") != LUA_TNIL) window_arg(L, lua_gettop(L), op, "dilations", at->ints + 2);
        ltfL_getkw(L, o, "data_format");
        check_data_format(L, lua_gettop(L), op);
    } else {
        check_data_format(L, o, op);
        if (!lua_isnoneornil(L, o + 1)) window_arg(L, o + 1, op, "dilations", at->ints + 2);
    }
}

/* tf.nn.conv2d(input, filters, strides, padding [, {dilations=, data_format=}])
** also (input, filters, strides, padding, data_format, dilations). */
static int nn_conv2d(lua_State *L) {
    lua_settop(L, 6);   /* converted operands are pushed above the arguments */
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "conv2d", "input");
    ltf_tensor *f = ltfL_totensor(L, 2, (int)ltf_tensor_dtype(x), "conv2d", "filters");
    ltf_attrs at;
    ltf_attrs_init(&at);
    conv_window_args(L, 3, "conv2d", &at);
    ltf_tensor *in[2] = { x, f };
    return ltfL_run1(L, LTF_OP_CONV2D, in, 2, &at);
}

/* A shape argument of 4 sizes (NHWC, or HWIO when 'hwio') or 2 spatial
** ones: the spatial sizes go to at->ints2; 'outer' gets the other two
** (N and C, or C and O; -1 when only 2 were given). */
static void sizes_arg(lua_State *L, int idx, const char *op, const char *arg, int hwio, ltf_attrs *at,
                      int64_t *outer) {
    int64_t v[4];
    if (lua_isnoneornil(L, idx)) ltfL_argerror(L, idx, op, arg, "table of 2 or 4 integers");
    int n = ltfL_checkintlist(L, idx, op, arg, v, 4, 0);
    if (n != 2 && n != 4)
        ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must have 4 (or 2 spatial) entries, got %d", op, arg, n);
    int s = n == 4 && !hwio ? 1 : 0;
    at->nints2 = 2;
    at->ints2[0] = v[s];
    at->ints2[1] = v[s + 1];
    outer[0] = n == 4 ? (hwio ? v[2] : v[0]) : -1;
    outer[1] = n == 4 ? v[3] : -1;
}

/* Run a conv2d gradient op; check the outer sizes the caller asked for
** (dims 0 and 3 of the result, or 2 and 3 when 'hwio'). */
static int run_conv_grad(lua_State *L, ltf_op_id op, const char *name, const char *arg, ltf_tensor *a,
                         ltf_tensor *b, const ltf_attrs *at, int hwio, const int64_t *outer) {
    ltf_tensor *in[2] = { a, b };
    ltfL_run1(L, op, in, 2, at);
    ltf_tensor *r = ltfL_testtensor(L, -1);
    if (!r || ltf_tensor_rank(r) != 4 || ltf_tensor_is_symbolic(r)) return 1;
    const int64_t *d = ltf_tensor_dims(r);
    int64_t got[2] = { d[hwio ? 2 : 0], d[3] };
    if ((outer[0] >= 0 && outer[0] != got[0]) || (outer[1] >= 0 && outer[1] != got[1]))
        ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' asks for %s %lld and %s %lld, but the operands give %lld "
                    "and %lld", name, arg, hwio ? "input depth" : "batch", (long long)outer[0],
                    hwio ? "output depth" : "depth", (long long)outer[1], (long long)got[0], (long long)got[1]);
    return 1;
}

/* tf.nn.conv2d_transpose(input, filters, output_shape, strides [, padding = "SAME"
** [, {dilations=, data_format=}]]): the gradient of conv2d with respect to its
** input; filters are (KH, KW, output depth, input depth). */
static int nn_conv2d_transpose(lua_State *L) {
    static const char *name = "conv2d_transpose";
    lua_settop(L, 7);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, name, "input");
    ltf_tensor *f = ltfL_totensor(L, 2, (int)ltf_tensor_dtype(x), name, "filters");
    ltf_attrs at;
    ltf_attrs_init(&at);
    int64_t outer[2];
    ltf_tensor *shape = ltfL_testtensor(L, 3);
    if (shape && ltf_tensor_is_symbolic(shape)) {   /* known when the graph runs: (N, H, W, C) */
        if (lua_isnil(L, 5)) {
            lua_pushliteral(L, "SAME");
            lua_replace(L, 5);
        }
        conv_window_args(L, 4, name, &at);
        ltf_tensor *in[3] = { f, x, shape };
        return ltfL_run1(L, LTF_OP_CONV2D_BACKPROP_INPUT_DYN, in, 3, &at);
    }
    sizes_arg(L, 3, name, "output_shape", 0, &at, outer);
    if (lua_isnil(L, 5)) {
        lua_pushliteral(L, "SAME");
        lua_replace(L, 5);
    }
    conv_window_args(L, 4, name, &at);
    return run_conv_grad(L, LTF_OP_CONV2D_BACKPROP_INPUT, name, "output_shape", f, x, &at, 0, outer);
}

/* The backprop-input bindings of conv2d and depthwise_conv2d:
** (input_sizes, filter, out_backprop, strides, padding [, ...]); fname the
** filter argument's name in errors. */
static int conv_bpi_common(lua_State *L, ltf_op_id op, const char *name, const char *fname) {
    lua_settop(L, 7);
    ltf_attrs at;
    ltf_attrs_init(&at);
    int64_t outer[2];
    sizes_arg(L, 1, name, "input_sizes", 0, &at, outer);
    ltf_tensor *f = ltfL_totensor(L, 2, -1, name, fname);
    ltf_tensor *dy = ltfL_totensor(L, 3, (int)ltf_tensor_dtype(f), name, "out_backprop");
    conv_window_args(L, 4, name, &at);
    return run_conv_grad(L, op, name, "input_sizes", f, dy, &at, 0, outer);
}

/* The backprop-filter bindings of both: (input, filter_sizes, out_backprop, strides, padding [, ...]). */
static int conv_bpf_common(lua_State *L, ltf_op_id op, const char *name) {
    lua_settop(L, 7);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, name, "input");
    ltf_attrs at;
    ltf_attrs_init(&at);
    int64_t outer[2];
    sizes_arg(L, 2, name, "filter_sizes", 1, &at, outer);
    ltf_tensor *dy = ltfL_totensor(L, 3, (int)ltf_tensor_dtype(x), name, "out_backprop");
    conv_window_args(L, 4, name, &at);
    return run_conv_grad(L, op, name, "filter_sizes", x, dy, &at, 1, outer);
}

/* tf.nn.conv2d_backprop_input(input_sizes, filters, out_backprop, strides, padding [, ...]) */
static int nn_conv2d_backprop_input(lua_State *L) {
    return conv_bpi_common(L, LTF_OP_CONV2D_BACKPROP_INPUT, "conv2d_backprop_input", "filters");
}

/* tf.nn.conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding [, ...]) */
static int nn_conv2d_backprop_filter(lua_State *L) {
    return conv_bpf_common(L, LTF_OP_CONV2D_BACKPROP_FILTER, "conv2d_backprop_filter");
}

/* tf.nn.depthwise_conv2d(input, filter, strides, padding [, {dilations=, data_format=}]):
** the engine's op (float32/float64; lua/tf/nn_ops.lua routes other dtypes
** to a composition). */
static int nn_depthwise_conv2d(lua_State *L) {
    static const char *name = "depthwise_conv2d";
    lua_settop(L, 6);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, name, "input");
    ltf_tensor *f = ltfL_totensor(L, 2, (int)ltf_tensor_dtype(x), name, "filter");
    ltf_attrs at;
    ltf_attrs_init(&at);
    conv_window_args(L, 3, name, &at);
    ltf_tensor *in[2] = { x, f };
    return ltfL_run1(L, LTF_OP_DEPTHWISE_CONV2D, in, 2, &at);
}

/* tf.nn.depthwise_conv2d_backprop_input(input_sizes, filter, out_backprop, strides, padding [, ...]) */
static int nn_depthwise_conv2d_backprop_input(lua_State *L) {
    return conv_bpi_common(L, LTF_OP_DEPTHWISE_CONV2D_BACKPROP_INPUT, "depthwise_conv2d_backprop_input", "filter");
}

/* tf.nn.depthwise_conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding [, ...]) */
static int nn_depthwise_conv2d_backprop_filter(lua_State *L) {
    return conv_bpf_common(L, LTF_OP_DEPTHWISE_CONV2D_BACKPROP_FILTER, "depthwise_conv2d_backprop_filter");
}

/* tf.nn.max_pool2d / avg_pool2d(input, ksize, strides, padding [, data_format | {data_format=}]) */
static int pool_common(lua_State *L, ltf_op_id op, const char *name) {
    static const char *const keys[] = { "data_format", "name", NULL };
    lua_settop(L, 5);   /* a converted input is pushed above the arguments */
    ltf_tensor *x = ltfL_totensor(L, 1, -1, name, "input");
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = 4;
    window_arg(L, 2, name, "ksize", at.ints);
    window_arg(L, 3, name, "strides", at.ints + 2);
    at.i[0] = padding_arg(L, 4, name, 0, NULL);
    if (lua_istable(L, 5)) {
        ltfL_checkkeys(L, 5, name, keys);
        ltfL_getkw(L, 5, "data_format");
        check_data_format(L, lua_gettop(L), name);
    } else {
        check_data_format(L, 5, name);
    }
    return ltfL_run1(L, op, &x, 1, &at);
}

static int nn_max_pool2d(lua_State *L) { return pool_common(L, LTF_OP_MAX_POOL2D, "max_pool2d"); }
static int nn_avg_pool2d(lua_State *L) { return pool_common(L, LTF_OP_AVG_POOL2D, "avg_pool2d"); }
/* }==== */

/* {==== gelu */
/* tf.nn.gelu(features [, approximate = false | {approximate=}]) */
static int nn_gelu(lua_State *L) {
    static const char *const keys[] = { "approximate", "name", NULL };
    lua_settop(L, 2);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "gelu", "features");
    ltf_attrs at;
    ltf_attrs_init(&at);
    if (lua_istable(L, 2) && !ltfL_testtensor(L, 2)) {
        ltfL_checkkeys(L, 2, "gelu", keys);
        at.i[0] = optbool(L, 2, "gelu", "approximate");
    } else if (!lua_isnil(L, 2)) {
        if (!lua_isboolean(L, 2)) ltfL_argerror(L, 2, "gelu", "approximate", "boolean");
        at.i[0] = lua_toboolean(L, 2);
    }
    return ltfL_run1(L, LTF_OP_GELU, &x, 1, &at);
}
/* }==== */

/* {==== dropout_noise */
/* Op seeds as tf.random's (bindings/random.c, which owns the bookkeeping in
** the registry: { global = <seed or nil>, counters = { [op seed] = calls } }):
** the same key and counter sequence, so that seeded dropout repeats after
** tf.random.set_seed. */
#define SEEDS_KEY "tf.random.seeds"
#define DEFAULT_GLOBAL_SEED 87654321

static void op_seed(lua_State *L, int idx, ltf_attrs *a) {
    if (lua_isnoneornil(L, idx)) return;
    int isint;
    lua_Integer seed = lua_tointegerx(L, idx, &isint);
    if (!isint) ltfL_raisef(L, LTF_ERR_TYPE, "dropout: 'seed' expected integer, got %s", luaL_typename(L, idx));
    int top = lua_gettop(L);
    if (lua_getfield(L, LUA_REGISTRYINDEX, SEEDS_KEY) != LUA_TTABLE) {   /* tf.random not used yet */
        lua_pop(L, 1);
        lua_newtable(L);
        lua_newtable(L);
        lua_setfield(L, -2, "counters");
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, SEEDS_KEY);
    }
    int st = lua_gettop(L);
    lua_getfield(L, st, "global");
    lua_Integer global = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : DEFAULT_GLOBAL_SEED;
    if (lua_getfield(L, st, "counters") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, st, "counters");
    }
    lua_rawgeti(L, -1, seed);
    lua_Integer count = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    lua_pushinteger(L, count + 1);
    lua_rawseti(L, -2, seed);
    lua_settop(L, top);
    uint64_t key = (uint64_t)global * 0x9E3779B97F4A7C15ull;
    key ^= (key >> 32) ^ ((uint64_t)seed * 0xC2B2AE3D27D4EB4Full);
    a->i[1] = 1;
    a->i[2] = (int64_t)key;
    a->i[3] = count;
}

/* dropout_noise(x [, seed]): uniform [0, 1) of x's shape, drawn when it runs */
static int nn_dropout_noise(lua_State *L) {
    lua_settop(L, 2);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "dropout", "x");
    ltf_attrs at;
    ltf_attrs_init(&at);
    op_seed(L, 2, &at);
    return ltfL_run1(L, LTF_OP_DROPOUT_NOISE, &x, 1, &at);
}
/* }==== */

/* Register 'fns' into the sub-table 'ns' of the module on top (created when
** missing) and not at the top level. [-0, +0, m] */
static void register_only(lua_State *L, const luaL_Reg *fns, const char *ns) {
    int mod = lua_gettop(L);
    if (lua_getfield(L, mod, ns) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, mod, ns);
    }
    ltfL_register(L, fns, NULL);
    lua_settop(L, mod);
}

static const luaL_Reg matmul_fns[] = { {"matmul", nn_matmul}, {NULL, NULL} };
static const luaL_Reg softmax_fns[] = { {"softmax", nn_softmax}, {"log_softmax", nn_log_softmax}, {NULL, NULL} };
static const luaL_Reg nn_fns[] = {
    {"softmax", nn_softmax}, {"log_softmax", nn_log_softmax},
    {"sparse_softmax_cross_entropy_with_logits", nn_sparse_xent},
    {"softmax_cross_entropy_with_logits", nn_xent},
    {"conv2d", nn_conv2d}, {"conv2d_transpose", nn_conv2d_transpose},
    {"conv2d_backprop_input", nn_conv2d_backprop_input}, {"conv2d_backprop_filter", nn_conv2d_backprop_filter},
    {"max_pool2d", nn_max_pool2d}, {"avg_pool2d", nn_avg_pool2d},
    {"max_pool", nn_max_pool2d}, {"avg_pool", nn_avg_pool2d},
    {"gelu", nn_gelu},
    {"depthwise_conv2d", nn_depthwise_conv2d},
    {"depthwise_conv2d_backprop_input", nn_depthwise_conv2d_backprop_input},
    {"depthwise_conv2d_backprop_filter", nn_depthwise_conv2d_backprop_filter},
    {NULL, NULL}
};

static const luaL_Reg internal_fns[] = { {"dropout_noise", nn_dropout_noise}, {NULL, NULL} };

void ltfL_open_nn(lua_State *L) {
    ltfL_register(L, internal_fns, LTFL_INTERNAL);
    ltfL_register(L, matmul_fns, "linalg");
    register_only(L, softmax_fns, "math");
    register_only(L, nn_fns, "nn");
}
