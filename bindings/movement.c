/*
** movement.c: Lua bindings of the movement ops (tf.reshape, tf.transpose,
** tf.concat, tf.split, tf.gather, tf.pad, ...) and of tf.shape, tf.size,
** tf.rank. Positions the user gives (axes, perm, slice begins) are 1-based
** and converted here; sizes, shapes and multiples are counts and pass as
** they are. Index VALUES inside tensors (gather, one_hot) stay 1-based:
** the core ops read them that way.
*/
#include <string.h>
#include <strings.h>
#include "ltfL.h"

/* {==== Argument helpers */
/* A user position (1-based, or negative from the end) as 0-based. */
static int64_t to_pos(lua_State *L, int64_t v, const char *op, const char *arg, int entry) {
    if (v == 0) {
        if (entry > 0)
            ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT,
                        "%s: '%s' entry %d is 0, but positions are 1-based (1 is the first, -1 the last)", op, arg,
                        entry);
        ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT,
                    "%s: '%s' is 0, but positions are 1-based (1 is the first, -1 the last)", op, arg);
    }
    return v > 0 ? v - 1 : v;
}

/* A list of positions (a single integer when 'single') into 'a->ints'. */
static void check_positions(lua_State *L, int idx, const char *op, const char *arg, ltf_attrs *a, int single) {
    a->nints = ltfL_checkintlist(L, idx, op, arg, a->ints, LTF_ATTR_LIST_MAX, single);
    int one = single && lua_isinteger(L, idx);
    for (int k = 0; k < a->nints; k++) a->ints[k] = to_pos(L, a->ints[k], op, arg, one ? 0 : k + 1);
}

/* Is the value at 'idx' a keyword table (a table that is not a list, a
** tensor or a dtype)? */
static int is_options(lua_State *L, int idx) {
    if (!lua_istable(L, idx) || lua_rawlen(L, idx) > 0) return 0;
    if (lua_getmetatable(L, idx)) {
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

/* Push the option 'key': from the keyword table at 'opts' when there is one,
** else the positional value at 'pos' (0: none). [-0, +1, -] */
static int option(lua_State *L, int opts, int pos, const char *key) {
    if (opts) return ltfL_getkw(L, opts, key);
    if (pos) {
        lua_pushvalue(L, pos);
        return lua_type(L, -1);
    }
    lua_pushnil(L);
    return LUA_TNIL;
}

/* Axis at the top of the stack (popped); 'def' (0-based) when nil. */
static int64_t pop_axis(lua_State *L, const char *op, int64_t def) {
    int64_t axis = lua_isnil(L, -1) ? def : ltfL_checkaxis(L, lua_gettop(L), op, "axis");
    lua_pop(L, 1);
    return axis;
}

/* Tensor from the value at 'idx'; a Lua number is boxed on the stack so that
** the scalar cache cannot drop it while it is in use. [-0, +(0|1), v] */
static ltf_tensor *held_tensor(lua_State *L, int idx, int like, const char *op, const char *arg) {
    idx = lua_absindex(L, idx);
    ltf_tensor *t = ltfL_totensor(L, idx, like, op, arg);
    if (lua_type(L, idx) == LUA_TNUMBER) ltfL_pushtensor(L, ltf_tensor_retain(t));
    return t;
}

/* The tensors of the list at 'idx' (numbers adopt the first tensor's dtype),
** in a userdata array left on the stack. */
static ltf_tensor **tensor_list(lua_State *L, int idx, const char *op, const char *arg, int *n) {
    if (!lua_istable(L, idx) || ltfL_testtensor(L, idx))
        ltfL_argerror(L, idx, op, arg, "table of tensors");
    int len = ltfL_checkcount(L, idx, op, arg);
    if (len < 1) ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' is empty", op, arg);
    ltf_tensor **ts = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)len, 0);
    int like = -1;
    for (int k = 1; k <= len && like < 0; k++) {
        lua_geti(L, idx, k);
        ltf_tensor *t = ltfL_testtensor(L, -1);
        if (t) like = (int)ltf_tensor_dtype(t);
        lua_pop(L, 1);
    }
    luaL_checkstack(L, 2 * len + 4, op);
    for (int k = 0; k < len; k++) {
        lua_geti(L, idx, k + 1);
        ts[k] = held_tensor(L, -1, like, op, arg);
    }
    *n = len;
    return ts;
}

/* Push the outputs left by ltfL_runn ('n' on top) as one list. [-n, +1, m] */
static int pack_outputs(lua_State *L, int n) {
    lua_createtable(L, n, 0);
    lua_insert(L, -n - 1);
    for (int k = n; k >= 1; k--) lua_rawseti(L, -k - 1, k);   /* pops t_k; the list sits below t_1..t_k */
    return 1;
}
/* }==== */

/* {==== Shape ops */
/* tf.reshape(tensor, shape) */
static int mv_reshape(lua_State *L) {
    lua_settop(L, 2);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "reshape", "tensor");
    ltf_attrs a;
    ltf_attrs_init(&a);
    ltf_tensor *s = ltfL_testtensor(L, 2);
    if (s) {   /* a shape tensor: read when the op runs */
        ltf_tensor *in[2] = { x, s };
        return ltfL_run1(L, LTF_OP_RESHAPE, in, 2, &a);
    }
    a.nints = ltfL_checkintlist(L, 2, "reshape", "shape", a.ints, LTF_ATTR_LIST_MAX, 0);
    return ltfL_run1(L, LTF_OP_RESHAPE, &x, 1, &a);
}

/* tf.transpose(a [, perm]) or tf.transpose(a, {perm=}) */
static int mv_transpose(lua_State *L) {
    lua_settop(L, 2);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "transpose", "a");
    static const char *const keys[] = { "perm", "conjugate", "name", NULL };
    int opts = is_options(L, 2) ? 2 : 0;
    if (opts) ltfL_checkkeys(L, opts, "transpose", keys);
    ltf_attrs a;
    ltf_attrs_init(&a);
    option(L, opts, 2, "perm");
    if (!lua_isnil(L, -1)) check_positions(L, lua_gettop(L), "transpose", "perm", &a, 0);
    return ltfL_run1(L, LTF_OP_TRANSPOSE, &x, 1, &a);
}

/* tf.expand_dims(input, axis) */
static int mv_expand_dims(lua_State *L) {
    lua_settop(L, 2);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "expand_dims", "input");
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = ltfL_checkaxis(L, 2, "expand_dims", "axis");
    return ltfL_run1(L, LTF_OP_EXPAND_DIMS, &x, 1, &a);
}

/* tf.squeeze(input [, axis]): axis an integer or a list, or {axis=} */
static int mv_squeeze(lua_State *L) {
    lua_settop(L, 2);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "squeeze", "input");
    static const char *const keys[] = { "axis", "name", NULL };
    int opts = is_options(L, 2) ? 2 : 0;
    if (opts) ltfL_checkkeys(L, opts, "squeeze", keys);
    ltf_attrs a;
    ltf_attrs_init(&a);
    option(L, opts, 2, "axis");
    if (!lua_isnil(L, -1)) check_positions(L, lua_gettop(L), "squeeze", "axis", &a, 1);
    return ltfL_run1(L, LTF_OP_SQUEEZE, &x, 1, &a);
}
/* }==== */

/* {==== Joining and splitting */
/* tf.concat(values, axis) */
static int mv_concat(lua_State *L) {
    lua_settop(L, 2);
    int n;
    ltf_tensor **ts = tensor_list(L, 1, "concat", "values", &n);
    ltf_attrs a;
    ltf_attrs_init(&a);
    if (is_options(L, 2)) {
        static const char *const keys[] = { "axis", "name", NULL };
        ltfL_checkkeys(L, 2, "concat", keys);
        ltfL_getkw(L, 2, "axis");
        if (lua_isnil(L, -1)) return ltfL_raise(L, LTF_ERR_TYPE, "concat: 'axis' is required");
        a.i[0] = pop_axis(L, "concat", 0);
    } else {
        a.i[0] = ltfL_checkaxis(L, 2, "concat", "axis");
    }
    return ltfL_run1(L, LTF_OP_CONCAT, ts, n, &a);
}

/* tf.stack(values [, axis = 1]) or tf.stack(values, {axis=}) */
static int mv_stack(lua_State *L) {
    lua_settop(L, 2);
    int n;
    ltf_tensor **ts = tensor_list(L, 1, "stack", "values", &n);
    static const char *const keys[] = { "axis", "name", NULL };
    int opts = is_options(L, 2) ? 2 : 0;
    if (opts) ltfL_checkkeys(L, opts, "stack", keys);
    ltf_attrs a;
    ltf_attrs_init(&a);
    option(L, opts, 2, "axis");
    a.i[0] = pop_axis(L, "stack", 0);
    return ltfL_run1(L, LTF_OP_STACK, ts, n, &a);
}

/* tf.split(value, num_or_size_splits [, axis = 1]) -> list of tensors.
** num_or_size_splits: an integer (equal parts) or a list of sizes (one may be -1). */
static int mv_split(lua_State *L) {
    lua_settop(L, 3);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "split", "value");
    static const char *const keys[] = { "axis", "num", "name", NULL };
    int opts = is_options(L, 3) ? 3 : 0;
    if (opts) ltfL_checkkeys(L, opts, "split", keys);
    ltf_attrs a;
    ltf_attrs_init(&a);
    if (lua_isinteger(L, 2)) {
        a.i[1] = lua_tointeger(L, 2);
        if (a.i[1] <= 0)
            return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "split: 'num_or_size_splits' is %lld, must be positive",
                               (long long)a.i[1]);
    } else {
        a.nints = ltfL_checkintlist(L, 2, "split", "num_or_size_splits", a.ints, LTF_ATTR_LIST_MAX, 0);
    }
    option(L, opts, 3, "axis");
    a.i[0] = pop_axis(L, "split", 0);
    int n = ltfL_runn(L, LTF_OP_SPLIT, &x, 1, &a);
    return pack_outputs(L, n);
}

/* tf.unstack(value [, num [, axis = 1]]) or tf.unstack(value, {num=, axis=}) -> list */
static int mv_unstack(lua_State *L) {
    lua_settop(L, 3);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "unstack", "value");
    static const char *const keys[] = { "axis", "num", "name", NULL };
    int opts = is_options(L, 2) ? 2 : 0;
    if (opts) ltfL_checkkeys(L, opts, "unstack", keys);
    ltf_attrs a;
    ltf_attrs_init(&a);
    option(L, opts, 2, "num");
    if (!lua_isnil(L, -1)) {
        int isnum;
        a.i[1] = lua_tointegerx(L, -1, &isnum);
        if (!isnum || a.i[1] < 0) return ltfL_argerror(L, opts ? opts : 2, "unstack", "num", "non-negative integer");
    }
    lua_pop(L, 1);
    option(L, opts, opts ? 0 : 3, "axis");
    a.i[0] = pop_axis(L, "unstack", 0);
    int n = ltfL_runn(L, LTF_OP_UNSTACK, &x, 1, &a);
    return pack_outputs(L, n);
}
/* }==== */

/* {==== Slicing and gathering */
/* tf.slice(input, begin, size): begin 1-based, size -1 = to the end */
static int mv_slice(lua_State *L) {
    lua_settop(L, 3);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "slice", "input");
    ltf_attrs a;
    ltf_attrs_init(&a);
    check_positions(L, 2, "slice", "begin", &a, 1);
    a.nints2 = ltfL_checkintlist(L, 3, "slice", "size", a.ints2, LTF_ATTR_LIST_MAX, 1);
    return ltfL_run1(L, LTF_OP_SLICE, &x, 1, &a);
}

static lua_Integer mask_option(lua_State *L, int opts, const char *key) {
    if (!opts) return 0;
    ltfL_getkw(L, opts, key);
    lua_Integer v = 0;
    if (!lua_isnil(L, -1)) {
        int isnum;
        v = lua_tointegerx(L, -1, &isnum);
        if (!isnum || v < 0 || v > 0xffff)
            ltfL_raisef(L, LTF_ERR_TYPE, "strided_slice: '%s' must be a bit mask (an integer in 0..65535)", key);
    }
    lua_pop(L, 1);
    return v;
}

/* tf.strided_slice(input, begin, end [, strides] [, {begin_mask=, end_mask=,
** ellipsis_mask=, new_axis_mask=, shrink_axis_mask=}]): begin and end are
** 1-based and 'end' is INCLUSIVE (x[b..e] as string.sub); bit k-1 of a
** mask is entry k. */
static int mv_strided_slice(lua_State *L) {
    lua_settop(L, 5);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "strided_slice", "input_");
    int opts = is_options(L, 4) ? 4 : (is_options(L, 5) ? 5 : 0);
    static const char *const keys[] = { "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                        "shrink_axis_mask", "name", NULL };
    if (opts) ltfL_checkkeys(L, opts, "strided_slice", keys);
    uint64_t bm = (uint64_t)mask_option(L, opts, "begin_mask"), em = (uint64_t)mask_option(L, opts, "end_mask");
    uint64_t elm = (uint64_t)mask_option(L, opts, "ellipsis_mask");
    uint64_t nm = (uint64_t)mask_option(L, opts, "new_axis_mask");
    uint64_t sm = (uint64_t)mask_option(L, opts, "shrink_axis_mask");
    int64_t b[LTF_ATTR_LIST_MAX], e[LTF_ATTR_LIST_MAX];
    int nb = ltfL_checkintlist(L, 2, "strided_slice", "begin", b, LTF_ATTR_LIST_MAX / 2, 0);
    int ne = ltfL_checkintlist(L, 3, "strided_slice", "end", e, LTF_ATTR_LIST_MAX / 2, 0);
    if (nb != ne)
        return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "strided_slice: 'begin' has %d entries but 'end' has %d",
                           nb, ne);
    ltf_attrs a;
    ltf_attrs_init(&a);
    if (opts != 4 && !lua_isnoneornil(L, 4)) {
        a.nints2 = ltfL_checkintlist(L, 4, "strided_slice", "strides", a.ints2, LTF_ATTR_LIST_MAX, 0);
        if (a.nints2 != nb)
            return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT,
                               "strided_slice: 'strides' has %d entries but 'begin' has %d", a.nints2, nb);
    }
    for (int k = 0; k < nb; k++) {
        int ignored = ((elm | nm) >> k) & 1u;
        int shrink = (sm >> k) & 1u;
        a.ints[k] = ignored || (((bm >> k) & 1u) && !shrink) ? 0 : to_pos(L, b[k], "strided_slice", "begin", k + 1);
        a.ints[nb + k] = ignored || shrink || ((em >> k) & 1u) ? 0 : to_pos(L, e[k], "strided_slice", "end", k + 1);
    }
    a.nints = 2 * nb;
    a.i[0] = (int64_t)bm;
    a.i[1] = (int64_t)em;
    a.i[2] = (int64_t)sm;
    a.i[3] = (int64_t)(nm | (elm << 32));
    return ltfL_run1(L, LTF_OP_STRIDED_SLICE, &x, 1, &a);
}

/* tf.gather(params, indices [, axis = 1]) or tf.gather(params, indices,
** {axis=, batch_dims=}): indices are 1-based; without an axis, the axis is
** the first after the batch dims (TensorFlow's axis = batch_dims). */
static int mv_gather(lua_State *L) {
    lua_settop(L, 4);
    ltf_tensor *params = ltfL_totensor(L, 1, -1, "gather", "params");
    ltf_tensor *indices = held_tensor(L, 2, LTF_DTYPE_INT32, "gather", "indices");
    static const char *const keys[] = { "axis", "batch_dims", "name", NULL };
    int opts = is_options(L, 3) ? 3 : 0;
    if (opts) ltfL_checkkeys(L, opts, "gather", keys);
    ltf_attrs a;
    ltf_attrs_init(&a);
    option(L, opts, 3, "axis");
    int no_axis = lua_isnil(L, -1);
    a.i[0] = pop_axis(L, "gather", 0);
    option(L, opts, opts ? 0 : 4, "batch_dims");
    if (!lua_isnil(L, -1)) {
        int isnum;
        a.i[1] = lua_tointegerx(L, -1, &isnum);
        if (!isnum) return ltfL_raise(L, LTF_ERR_TYPE, "gather: 'batch_dims' must be an integer");
    }
    lua_pop(L, 1);
    if (no_axis) {   /* TensorFlow: axis defaults to batch_dims (the first non-batch axis) */
        int ri = ltf_tensor_rank(indices);
        a.i[0] = a.i[1] < 0 && ri >= 0 ? a.i[1] + ri : a.i[1];
    }
    ltf_tensor *in[2] = { params, indices };
    return ltfL_run1(L, LTF_OP_GATHER, in, 2, &a);
}

/* tf.math.unsorted_segment_sum(data, segment_ids, num_segments): segment
** ids are 1-based (1..num_segments); a negative id drops its slice. */
static int mv_unsorted_segment_sum(lua_State *L) {
    lua_settop(L, 3);
    ltf_tensor *data = ltfL_totensor(L, 1, -1, "unsorted_segment_sum", "data");
    ltf_tensor *ids = held_tensor(L, 2, LTF_DTYPE_INT32, "unsorted_segment_sum", "segment_ids");
    ltf_attrs a;
    ltf_attrs_init(&a);
    ltf_tensor *nt = ltfL_testtensor(L, 3);
    if (nt) {
        ltf_dtype dt = ltf_tensor_dtype(nt);
        if (ltf_tensor_is_symbolic(nt) || ltf_tensor_rank(nt) != 0 || (dt != LTF_DTYPE_INT32 && dt != LTF_DTYPE_INT64))
            return ltfL_argerror(L, 3, "unsorted_segment_sum", "num_segments", "integer or scalar integer tensor");
        ltfL_readints(L, nt, &a.i[0], 1);
    } else {
        int isnum;
        a.i[0] = lua_tointegerx(L, 3, &isnum);
        if (!isnum) return ltfL_argerror(L, 3, "unsorted_segment_sum", "num_segments", "integer");
    }
    ltf_tensor *in[2] = { data, ids };
    return ltfL_run1(L, LTF_OP_UNSORTED_SEGMENT_SUM, in, 2, &a);
}

/* A scalar on/off value of dtype 'dt' from the top of the stack (popped
** unless it becomes the held tensor); 'def' when nil. */
static ltf_tensor *one_hot_value(lua_State *L, int dt, int def, const char *arg) {
    int top = lua_gettop(L);
    if (lua_isnil(L, top)) {
        lua_pop(L, 1);
        if (dt == LTF_DTYPE_STRING)
            ltfL_raisef(L, LTF_ERR_TYPE, "one_hot: '%s' is required for dtype string", arg);
        if (dt == LTF_DTYPE_BOOL) lua_pushboolean(L, def);
        else lua_pushinteger(L, def);
        top = lua_gettop(L);
    }
    ltf_tensor *t = held_tensor(L, top, dt == LTF_DTYPE_BOOL || dt == LTF_DTYPE_STRING ? -1 : dt, "one_hot", arg);
    if ((int)ltf_tensor_dtype(t) != dt)
        ltfL_raisef(L, LTF_ERR_TYPE, "one_hot: '%s' has dtype %s but the result's dtype is %s", arg,
                    ltf_dtype_name(ltf_tensor_dtype(t)), ltf_dtype_name((ltf_dtype)dt));
    return t;
}

/* The dtype a Lua value or tensor would become (-1 for nil). */
static int value_dtype(lua_State *L, int idx) {
    ltf_tensor *t = ltfL_testtensor(L, idx);
    if (t) return (int)ltf_tensor_dtype(t);
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER: return lua_isinteger(L, idx) ? LTF_DTYPE_INT32 : LTF_DTYPE_FLOAT32;
    case LUA_TBOOLEAN: return LTF_DTYPE_BOOL;
    case LUA_TSTRING: return LTF_DTYPE_STRING;
    default: return -1;
    }
}

/* tf.one_hot(indices, depth [, on_value, off_value, axis, dtype]) or
** tf.one_hot(indices, depth, {on_value=, off_value=, axis=, dtype=}):
** index k (1-based) sets position k; dtype defaults to on_value's, else float32. */
static int mv_one_hot(lua_State *L) {
    lua_settop(L, 6);
    ltf_tensor *indices = held_tensor(L, 1, LTF_DTYPE_INT32, "one_hot", "indices");
    int isnum;
    lua_Integer depth = lua_tointegerx(L, 2, &isnum);
    if (!isnum) return ltfL_argerror(L, 2, "one_hot", "depth", "integer");
    static const char *const keys[] = { "on_value", "off_value", "axis", "dtype", "name", NULL };
    int opts = is_options(L, 3) ? 3 : 0;
    if (opts) ltfL_checkkeys(L, opts, "one_hot", keys);
    option(L, opts, opts ? 0 : 3, "on_value");
    int on_idx = lua_gettop(L);
    option(L, opts, opts ? 0 : 4, "off_value");
    int off_idx = lua_gettop(L);
    option(L, opts, opts ? 0 : 6, "dtype");
    int dt = lua_isnil(L, -1) ? -1 : ltfL_checkdtype(L, lua_gettop(L), "one_hot", "dtype", -1);
    lua_pop(L, 1);
    if (dt < 0) dt = value_dtype(L, on_idx);
    if (dt < 0) dt = value_dtype(L, off_idx);
    if (dt < 0) dt = LTF_DTYPE_FLOAT32;
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = depth;
    option(L, opts, opts ? 0 : 5, "axis");
    a.i[1] = pop_axis(L, "one_hot", -1);
    lua_pushvalue(L, on_idx);
    ltf_tensor *on = one_hot_value(L, dt, 1, "on_value");
    lua_pushvalue(L, off_idx);
    ltf_tensor *off = one_hot_value(L, dt, 0, "off_value");
    ltf_tensor *in[3] = { indices, on, off };
    return ltfL_run1(L, LTF_OP_ONE_HOT, in, 3, &a);
}
/* }==== */

/* {==== tile, pad, reverse, broadcast_to */
/* tf.tile(input, multiples) */
static int mv_tile(lua_State *L) {
    lua_settop(L, 2);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "tile", "input");
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.nints = ltfL_checkintlist(L, 2, "tile", "multiples", a.ints, LTF_ATTR_LIST_MAX, 0);
    return ltfL_run1(L, LTF_OP_TILE, &x, 1, &a);
}

/* Paddings {{before, after}, ...} or an integer tensor of shape (rank, 2). */
static void check_paddings(lua_State *L, int idx, ltf_attrs *a) {
    ltf_tensor *t = ltfL_testtensor(L, idx);
    if (t) {
        ltf_dtype dt = ltf_tensor_dtype(t);
        int r = ltf_tensor_rank(t);
        if (ltf_tensor_is_symbolic(t) || (dt != LTF_DTYPE_INT32 && dt != LTF_DTYPE_INT64) || r != 2 ||
            ltf_tensor_dims(t)[1] != 2 || ltf_tensor_dims(t)[0] > LTF_MAX_RANK)
            ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT,
                       "pad: 'paddings' must be {{before, after}, ...} or an integer tensor of shape (rank, 2)");
        int64_t n = ltf_tensor_num_elements(t);
        ltfL_readints(L, t, a->ints, n);   /* n <= 2 * LTF_MAX_RANK */
        a->nints = (int)n;
        return;
    }
    if (!lua_istable(L, idx)) ltfL_argerror(L, idx, "pad", "paddings", "table of {before, after} pairs");
    int n = ltfL_checkcount(L, idx, "pad", "paddings");
    if (n > LTF_MAX_RANK)
        ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "pad: 'paddings' has %d pairs, at most %d", n, LTF_MAX_RANK);
    for (int k = 0; k < n; k++) {
        lua_geti(L, idx, k + 1);
        int64_t pair[2];
        if (!lua_istable(L, -1) || ltfL_checkintlist(L, lua_gettop(L), "pad", "paddings", pair, 2, 0) != 2)
            ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "pad: 'paddings' entry %d must be a pair {before, after}", k + 1);
        a->ints[2 * k] = pair[0];
        a->ints[2 * k + 1] = pair[1];
        lua_pop(L, 1);
    }
    a->nints = 2 * n;
}

/* tf.pad(tensor, paddings [, mode [, constant_values]]) or
** tf.pad(tensor, paddings, {mode=, constant_values=}); mode "CONSTANT"
** (default), "REFLECT" or "SYMMETRIC", any case. */
static int mv_pad(lua_State *L) {
    lua_settop(L, 4);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "pad", "tensor");
    static const char *const keys[] = { "mode", "constant_values", "name", NULL };
    int opts = is_options(L, 3) ? 3 : 0;
    if (opts) ltfL_checkkeys(L, opts, "pad", keys);
    ltf_attrs a;
    ltf_attrs_init(&a);
    check_paddings(L, 2, &a);
    option(L, opts, 3, "mode");
    if (!lua_isnil(L, -1)) {
        const char *m = lua_tostring(L, -1);
        if (!m || lua_type(L, -1) != LUA_TSTRING) return ltfL_argerror(L, 3, "pad", "mode", "string");
        if (strcasecmp(m, "constant") == 0) a.i[0] = LTF_PAD_CONSTANT;
        else if (strcasecmp(m, "reflect") == 0) a.i[0] = LTF_PAD_REFLECT;
        else if (strcasecmp(m, "symmetric") == 0) a.i[0] = LTF_PAD_SYMMETRIC;
        else
            return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT,
                               "pad: unknown mode '%s' (expected CONSTANT, REFLECT or SYMMETRIC)", m);
    }
    lua_pop(L, 1);
    ltf_tensor *in[2] = { x, NULL };
    option(L, opts, opts ? 0 : 4, "constant_values");
    if (!lua_isnil(L, -1)) in[1] = held_tensor(L, lua_gettop(L), (int)ltf_tensor_dtype(x), "pad", "constant_values");
    return ltfL_run1(L, LTF_OP_PAD, in, in[1] ? 2 : 1, &a);
}

/* tf.reverse(tensor, axis): axis an integer or a list */
static int mv_reverse(lua_State *L) {
    lua_settop(L, 2);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "reverse", "tensor");
    ltf_attrs a;
    ltf_attrs_init(&a);
    check_positions(L, 2, "reverse", "axis", &a, 1);
    return ltfL_run1(L, LTF_OP_REVERSE, &x, 1, &a);
}

/* tf.broadcast_to(input, shape) */
static int mv_broadcast_to(lua_State *L) {
    lua_settop(L, 2);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "broadcast_to", "input");
    ltf_attrs a;
    ltf_attrs_init(&a);
    ltf_tensor *s = ltfL_testtensor(L, 2);
    if (s) {   /* a shape tensor: read when the op runs */
        ltf_tensor *in[2] = { x, s };
        return ltfL_run1(L, LTF_OP_BROADCAST_TO, in, 2, &a);
    }
    a.nints = ltfL_checkintlist(L, 2, "broadcast_to", "shape", a.ints, LTF_ATTR_LIST_MAX, 0);
    return ltfL_run1(L, LTF_OP_BROADCAST_TO, &x, 1, &a);
}
/* }==== */

/* {==== tf.shape, tf.size, tf.rank (eager values) */
static int out_type(lua_State *L, int idx, const char *op) {
    static const char *const keys[] = { "out_type", "name", NULL };
    int dt;
    if (is_options(L, idx)) {
        ltfL_checkkeys(L, idx, op, keys);
        ltfL_getkw(L, idx, "out_type");
        dt = ltfL_checkdtype(L, lua_gettop(L), op, "out_type", LTF_DTYPE_INT32);
        lua_pop(L, 1);
    } else {
        dt = ltfL_checkdtype(L, idx, op, "out_type", LTF_DTYPE_INT32);
    }
    if (dt != LTF_DTYPE_INT32 && dt != LTF_DTYPE_INT64)
        ltfL_raisef(L, LTF_ERR_TYPE, "%s: 'out_type' must be int32 or int64, got %s", op, ltf_dtype_name((ltf_dtype)dt));
    return dt;
}

/* Push an int32/int64 tensor of 'n' values: a vector, or a scalar when 'scalar'. */
static int push_ints(lua_State *L, int dt, int n, const int64_t *v, int scalar) {
    ltfL_box *b = ltfL_newbox(L);
    int32_t v32[LTF_MAX_RANK];
    for (int k = 0; k < n; k++) v32[k] = (int32_t)v[k];
    int64_t dims[1] = { n };
    ltf_tensor *t = ltf_tensor_from_data(ltfL_ctx(L), (ltf_dtype)dt, scalar ? 0 : 1, dims,
                                         dt == LTF_DTYPE_INT32 ? (const void *)v32 : (const void *)v);
    if (!t) return ltfL_raisectx(L, LTF_ERR_RESOURCE_EXHAUSTED);
    ltfL_fillbox(L, b, t);
    return 1;
}

/* The input; NULL after pushing the shape/size op's result when the shape
** is known only when the graph runs (a symbolic tensor of partial shape). */
static ltf_tensor *known_shape(lua_State *L, const char *op, ltf_op_id id, int dt) {
    ltf_tensor *x = ltfL_totensor(L, 1, -1, op, "input");
    int r = ltf_tensor_rank(x);
    int known = r >= 0;
    for (int k = 0; known && k < r; k++) known = ltf_tensor_dims(x)[k] >= 0;
    if (!known) {
        ltf_attrs a;
        ltf_attrs_init(&a);
        a.i[0] = dt;
        ltfL_run1(L, id, &x, 1, &a);
        return NULL;
    }
    return x;
}

/* tf.shape(input [, out_type]): the dims as a 1-D int32 (or int64) tensor */
static int mv_shape(lua_State *L) {
    lua_settop(L, 2);
    int dt = out_type(L, 2, "shape");
    ltf_tensor *x = known_shape(L, "shape", LTF_OP_SHAPE, dt);
    if (!x) return 1;
    return push_ints(L, dt, ltf_tensor_rank(x), ltf_tensor_dims(x), 0);
}

/* tf.size(input [, out_type]): the element count as a scalar */
static int mv_size(lua_State *L) {
    lua_settop(L, 2);
    int dt = out_type(L, 2, "size");
    ltf_tensor *x = known_shape(L, "size", LTF_OP_SIZE, dt);
    if (!x) return 1;
    int64_t n = ltf_tensor_num_elements(x);
    if (dt == LTF_DTYPE_INT32 && n > INT32_MAX)
        return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "size: %lld elements do not fit int32 (use out_type = tf.int64)",
                           (long long)n);
    return push_ints(L, dt, 1, &n, 1);
}

/* tf.rank(input): the rank as an int32 scalar */
static int mv_rank(lua_State *L) {
    lua_settop(L, 1);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "rank", "input");
    int64_t r = ltf_tensor_rank(x);
    if (r < 0)
        return ltfL_raise(L, LTF_ERR_UNIMPLEMENTED, "rank: the rank of this symbolic tensor is not known while tracing");
    return push_ints(L, LTF_DTYPE_INT32, 1, &r, 1);
}
/* }==== */

#define E(name) {#name, mv_##name}
static const luaL_Reg top_fns[] = {
    E(reshape), E(transpose), E(expand_dims), E(squeeze), E(concat), E(stack), E(split), E(unstack),
    E(slice), E(strided_slice), E(gather), E(one_hot), E(tile), E(pad), E(reverse), E(broadcast_to),
    E(shape), E(size), E(rank),
    {NULL, NULL}
};
static const luaL_Reg math_fns[] = { E(unsorted_segment_sum), {NULL, NULL} };

void ltfL_open_movement(lua_State *L) {
    ltfL_register(L, top_fns, NULL);
    ltfL_register(L, math_fns, "math");
}
