/*
** random.c: Lua bindings of the constructors and random ops: tf.zeros,
** tf.ones, tf.fill, tf.zeros_like, tf.ones_like, tf.range, tf.linspace,
** tf.eye, tf.random.normal, tf.random.uniform, tf.random.set_seed.
** Shapes may be a table of integers, a TensorShape or an integer tensor;
** the default dtype is float32 everywhere, as TensorFlow's.
*/
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ltfL.h"

/* Registry key of the op-seed bookkeeping: { global = <seed or nil>,
** counters = { [op seed] = calls so far } } (tf.random.set_seed resets it). */
#define SEEDS_KEY "tf.random.seeds"
#define DEFAULT_GLOBAL_SEED 87654321

/* {==== Argument helpers */
static int is_dtype(lua_State *L, int idx) {
    if (lua_type(L, idx) == LUA_TSTRING) return 1;
    if (!lua_istable(L, idx)) return 0;
    int t = lua_getfield(L, idx, "enum");
    lua_pop(L, 1);
    return t == LUA_TNUMBER;
}

static int has_metatable(lua_State *L, int idx) {
    if (!lua_getmetatable(L, idx)) return 0;
    lua_pop(L, 1);
    return 1;
}

/* A keyword table (a plain table that is not a DType). */
static int is_kwtable(lua_State *L, int idx) {
    return lua_istable(L, idx) && !is_dtype(L, idx);
}

/* "(2, 3)"; with 'unknown' set, negative dims print as None. */
static void shape_text(int rank, const int64_t *dims, int unknown, char *buf, size_t size) {
    size_t n = 0;
    n += (size_t)snprintf(buf + n, size - n, "(");
    for (int i = 0; i < rank && n < size; i++) {
        if (unknown && dims[i] < 0) n += (size_t)snprintf(buf + n, size - n, "%sNone", i ? ", " : "");
        else n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", (long long)dims[i]);
    }
    if (n < size) snprintf(buf + n, size - n, rank == 1 ? ",)" : ")");
}

/* Push the 'as_list' method of a TensorShape-like table (a table with a
** metatable whose as_list is a function); nothing when there is none. */
static int push_as_list(lua_State *L, int idx) {
    if (!lua_istable(L, idx) || !lua_getmetatable(L, idx)) return 0;
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "as_list") == LUA_TFUNCTION) return 1;
    lua_pop(L, 1);
    return 0;
}

/* The shape at 'idx': an integer, a table of integers, a TensorShape (its
** :as_list(), which must be fully defined) or an int32/int64 tensor. */
static int check_shape(lua_State *L, int idx, const char *op, const char *arg, int64_t *dims) {
    idx = lua_absindex(L, idx);
    int rank;
    if (push_as_list(L, idx)) {
        lua_pushvalue(L, idx);
        lua_call(L, 1, 1);
        if (lua_isnil(L, -1))
            return ltfL_raisef(L, LTF_ERR_VALUE, "%s: '%s' must be fully defined, got a shape of unknown rank", op, arg);
        rank = ltfL_checkintlist(L, lua_gettop(L), op, arg, dims, LTF_MAX_RANK, 0);
        lua_pop(L, 1);
        for (int i = 0; i < rank; i++)
            if (dims[i] < 0) {
                char buf[160];
                shape_text(rank, dims, 1, buf, sizeof buf);
                return ltfL_raisef(L, LTF_ERR_VALUE, "%s: '%s' must be fully defined, got %s", op, arg, buf);
            }
        return rank;
    }
    ltf_tensor *t = ltfL_testtensor(L, idx);
    if (t && ltf_tensor_is_symbolic(t))
        return ltfL_raisef(L, LTF_ERR_VALUE, "%s: '%s' is a symbolic tensor; its values are not known while tracing",
                           op, arg);
    if (t && ltf_tensor_rank(t) > 1)
        return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must be a vector, got a tensor of rank %d", op, arg,
                           ltf_tensor_rank(t));
    rank = ltfL_checkintlist(L, idx, op, arg, dims, LTF_MAX_RANK, 1);
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0) {
            char buf[160];
            shape_text(rank, dims, 0, buf, sizeof buf);
            return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must not have negative dimensions, got %s", op,
                               arg, buf);
        }
    return rank;
}

/* The symbolic tensor at 'idx' (a shape known only when the op runs), or NULL. */
static ltf_tensor *shape_tensor(lua_State *L, int idx) {
    ltf_tensor *t = ltfL_testtensor(L, idx);
    return t && ltf_tensor_is_symbolic(t) ? t : NULL;
}

/* A scalar number: a Lua number or a one-element numeric tensor. Sets
** '*isint' when the value is an integer (a Lua integer or an integer
** tensor) and '*dt' to the dtype it would have by itself. */
typedef struct num {
    double d;
    int64_t i;
    int isint;
    int dt;
} num;

static void check_num(lua_State *L, int idx, const char *op, const char *arg, num *n) {
    if (lua_type(L, idx) == LUA_TNUMBER) {
        if (lua_isinteger(L, idx)) {
            n->i = lua_tointeger(L, idx);
            n->d = (double)n->i;
            n->isint = 1;
            n->dt = (n->i < INT32_MIN || n->i > INT32_MAX) ? LTF_DTYPE_INT64 : LTF_DTYPE_INT32;
        } else {
            n->d = lua_tonumber(L, idx);
            n->i = 0;
            n->isint = 0;
            n->dt = LTF_DTYPE_FLOAT32;
        }
        return;
    }
    ltf_tensor *t = ltfL_testtensor(L, idx);
    if (!t) {
        ltfL_argerror(L, idx, op, arg, "number or scalar tensor");
        return;
    }
    if (ltf_tensor_is_symbolic(t))
        ltfL_raisef(L, LTF_ERR_VALUE, "%s: '%s' is a symbolic tensor; its value is not known while tracing", op, arg);
    if (ltf_tensor_num_elements(t) != 1 || ltf_tensor_rank(t) != 0)
        ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must be a scalar, got a tensor of rank %d", op, arg,
                    ltf_tensor_rank(t));
    union { double d; int64_t i; } buf = { 0 };   /* the value, from any device */
    if (ltf_dtype_size(ltf_tensor_dtype(t)) <= sizeof buf && ltf_tensor_dtype(t) != LTF_DTYPE_STRING &&
        ltf_tensor_dtype(t) != LTF_DTYPE_RESOURCE)
        ltfL_readvalues(L, t, &buf, ltf_dtype_size(ltf_tensor_dtype(t)));
    const void *p = &buf;
    n->dt = ltf_tensor_dtype(t);
    n->isint = 1;
    switch (n->dt) {
    case LTF_DTYPE_FLOAT32: n->d = *(const float *)p; n->isint = 0; break;
    case LTF_DTYPE_FLOAT64: n->d = *(const double *)p; n->isint = 0; break;
    case LTF_DTYPE_FLOAT16: n->d = ltf_float16_to_float(*(const uint16_t *)p); n->isint = 0; break;
    case LTF_DTYPE_BFLOAT16: n->d = ltf_bfloat16_to_float(*(const uint16_t *)p); n->isint = 0; break;
    case LTF_DTYPE_INT32: n->i = *(const int32_t *)p; break;
    case LTF_DTYPE_INT64: n->i = *(const int64_t *)p; break;
    case LTF_DTYPE_UINT8: n->i = *(const uint8_t *)p; break;
    default:
        ltfL_raisef(L, LTF_ERR_TYPE, "%s: '%s' must be a number, got a %s tensor", op, arg,
                    ltf_dtype_name((ltf_dtype)n->dt));
    }
    if (n->isint) n->d = (double)n->i;
}

/* The number as an integer of dtype 'dt' (int32/int64). */
static int64_t num_toint(lua_State *L, const num *n, int dt, const char *op, const char *arg) {
    int64_t v = n->i;
    if (!n->isint) {
        if (n->d != floor(n->d) || !(n->d >= -9.2233720368547758e18 && n->d < 9.2233720368547758e18))
            ltfL_raisef(L, LTF_ERR_TYPE, "%s: '%s' is %.14g, not an integer, but dtype is %s", op, arg, n->d,
                        ltf_dtype_name((ltf_dtype)dt));
        v = (int64_t)n->d;
    }
    if (dt == LTF_DTYPE_INT32 && (v < INT32_MIN || v > INT32_MAX))
        ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' is %lld, which does not fit in int32", op, arg, (long long)v);
    return v;
}

/* dtype from the positional argument 'pos' or the keyword table at 'kw'. */
static int opt_dtype(lua_State *L, int pos, int kw, const char *op, int def) {
    if (pos && !lua_isnoneornil(L, pos)) return ltfL_checkdtype(L, pos, op, "dtype", def);
    if (kw) {
        ltfL_getkw(L, kw, "dtype");
        int dt = lua_isnil(L, -1) ? def : ltfL_checkdtype(L, lua_gettop(L), op, "dtype", def);
        lua_pop(L, 1);
        return dt;
    }
    return def;
}

static void set_shape(ltf_attrs *a, int rank, const int64_t *dims) {
    a->nints = rank;
    for (int i = 0; i < rank; i++) a->ints[i] = dims[i];
}
/* }==== */

/* {==== zeros, ones, fill */
static int fill_value(lua_State *L, ltf_tensor *shape, int rank, const int64_t *dims, int dt, double f, int64_t i) {
    ltf_attrs a;
    ltf_attrs_init(&a);
    set_shape(&a, shape ? 0 : rank, dims);
    a.i[0] = dt;
    a.i[1] = i;
    a.f[0] = f;
    return ltfL_run1(L, LTF_OP_FILL, shape ? &shape : NULL, shape ? 1 : 0, &a);
}

/* tf.zeros(shape [, dtype]) / tf.zeros(shape, {dtype=}) and tf.ones. */
static int zeros_or_ones(lua_State *L, const char *op, int one) {
    int64_t dims[LTF_MAX_RANK];
    ltf_tensor *shape = shape_tensor(L, 1);
    int rank = shape ? 0 : check_shape(L, 1, op, "shape", dims);
    int kw = is_kwtable(L, 2) ? 2 : 0;
    if (kw) {
        static const char *const keys[] = { "dtype", "name", NULL };
        ltfL_checkkeys(L, kw, op, keys);
    }
    int dt = opt_dtype(L, kw ? 0 : 2, kw, op, LTF_DTYPE_FLOAT32);
    if (one && dt == LTF_DTYPE_STRING)
        return ltfL_raisef(L, LTF_ERR_TYPE, "%s: a string tensor has no 'one' (use tf.fill(dims, \"1\"))", op);
    return fill_value(L, shape, rank, dims, dt, one, one);
}
static int random_zeros(lua_State *L) { return zeros_or_ones(L, "zeros", 0); }
static int random_ones(lua_State *L) { return zeros_or_ones(L, "ones", 1); }

/* tf.fill(dims, value): the dtype is the value's (integer -> int32, or
** int64 when it does not fit; float -> float32; boolean; string; or the
** dtype of a scalar tensor). */
static int random_fill(lua_State *L) {
    int64_t dims[LTF_MAX_RANK];
    ltf_tensor *shape = shape_tensor(L, 1);
    int rank = shape ? 0 : check_shape(L, 1, "fill", "dims", dims);
    ltf_attrs a;
    ltf_attrs_init(&a);
    set_shape(&a, rank, dims);
    const char *s = NULL;
    size_t len = 0;
    ltf_tensor *t = ltfL_testtensor(L, 2);
    if (t && ltf_tensor_dtype(t) == LTF_DTYPE_STRING) {
        if (ltf_tensor_is_symbolic(t) || ltf_tensor_rank(t) != 0)
            return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "fill: 'value' must be a scalar");
        const ltf_string *e = *(const ltf_string *const *)ltf_tensor_data(t);
        s = e ? e->bytes : "";
        len = e ? e->len : 0;
    } else if (t && ltf_tensor_dtype(t) == LTF_DTYPE_BOOL) {
        if (ltf_tensor_is_symbolic(t) || ltf_tensor_rank(t) != 0)
            return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "fill: 'value' must be a scalar");
        a.i[0] = LTF_DTYPE_BOOL;
        uint8_t b = 0;
        ltfL_readvalues(L, t, &b, 1);
        a.i[1] = b != 0;
        return ltfL_run1(L, LTF_OP_FILL, shape ? &shape : NULL, shape ? 1 : 0, &a);
    } else if (lua_type(L, 2) == LUA_TSTRING) {
        s = lua_tolstring(L, 2, &len);
    } else if (lua_isboolean(L, 2)) {
        a.i[0] = LTF_DTYPE_BOOL;
        a.i[1] = lua_toboolean(L, 2);
        return ltfL_run1(L, LTF_OP_FILL, shape ? &shape : NULL, shape ? 1 : 0, &a);
    } else {
        if (lua_isnoneornil(L, 2)) return ltfL_argerror(L, 2, "fill", "value", "number, boolean, string or scalar tensor");
        num n;
        check_num(L, 2, "fill", "value", &n);
        a.i[0] = n.dt;
        a.i[1] = n.i;
        a.f[0] = n.d;
        return ltfL_run1(L, LTF_OP_FILL, shape ? &shape : NULL, shape ? 1 : 0, &a);
    }
    a.i[0] = LTF_DTYPE_STRING;
    if (len < sizeof a.s && memchr(s, '\0', len) == NULL) {
        memcpy(a.s, s, len);
        a.s[len] = '\0';
        return ltfL_run1(L, LTF_OP_FILL, shape ? &shape : NULL, shape ? 1 : 0, &a);
    }
    /* a long string (or one holding NUL bytes): broadcast a scalar */
    ltf_tensor *v = t ? t : ltfL_totensor(L, 2, LTF_DTYPE_STRING, "fill", "value");
    if (shape) {
        ltf_tensor *in[2] = { v, shape };
        return ltfL_run1(L, LTF_OP_BROADCAST_TO, in, 2, &a);
    }
    return ltfL_run1(L, LTF_OP_BROADCAST_TO, &v, 1, &a);
}

/* tf.zeros_like(x [, dtype]) and tf.ones_like: x's shape, x's dtype unless given. */
static int like(lua_State *L, const char *op, ltf_op_id id, int one) {
    lua_settop(L, 2);
    int kw = is_kwtable(L, 2) ? 2 : 0;
    if (kw) {
        static const char *const keys[] = { "dtype", "name", NULL };
        ltfL_checkkeys(L, kw, op, keys);
    }
    int dt = kw ? (ltfL_getkw(L, kw, "dtype"), lua_isnil(L, -1) ? -1 : ltfL_checkdtype(L, -1, op, "dtype", -1))
                : (lua_isnil(L, 2) ? -1 : ltfL_checkdtype(L, 2, op, "dtype", -1));
    lua_settop(L, 2);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, op, "input");
    if (dt < 0) dt = (int)ltf_tensor_dtype(x);
    if (dt == (int)ltf_tensor_dtype(x)) return ltfL_run1(L, id, &x, 1, NULL);
    if (one && dt == LTF_DTYPE_STRING)
        return ltfL_raisef(L, LTF_ERR_TYPE, "%s: a string tensor has no 'one' (use tf.fill(dims, \"1\"))", op);
    if (!ltf_tensor_is_symbolic(x))
        return fill_value(L, NULL, ltf_tensor_rank(x), ltf_tensor_dims(x), dt, one, one);
    /* symbolic with a new dtype: make it in x's dtype, then cast */
    ltfL_run1(L, id, &x, 1, NULL);
    ltf_tensor *y = ltfL_testtensor(L, -1);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = dt;
    return ltfL_run1(L, LTF_OP_CAST, &y, 1, &a);
}
static int random_zeros_like(lua_State *L) { return like(L, "zeros_like", LTF_OP_ZEROS_LIKE, 0); }
static int random_ones_like(lua_State *L) { return like(L, "ones_like", LTF_OP_ONES_LIKE, 1); }
/* }==== */

/* {==== range, linspace, eye */
/* Rank of a dtype in TensorFlow's range promotion order; -1 if none. */
static int range_rank(int dt) {
    switch (dt) {
    case LTF_DTYPE_INT32: return 0;
    case LTF_DTYPE_UINT8: return 0;
    case LTF_DTYPE_INT64: return 1;
    case LTF_DTYPE_FLOAT16: return 2;
    case LTF_DTYPE_BFLOAT16: return 3;
    case LTF_DTYPE_FLOAT32: return 4;
    case LTF_DTYPE_FLOAT64: return 5;
    default: return -1;
    }
}

/* tf.range(limit) or tf.range(start, limit [, delta] [, dtype | {dtype=}]). */
static int random_range(lua_State *L) {
    /* TensorFlow's order: int32, int64, float16, bfloat16, float32, float64 */
    static const int by_rank[6] = { LTF_DTYPE_INT32, LTF_DTYPE_INT64, LTF_DTYPE_FLOAT16, LTF_DTYPE_BFLOAT16,
                                     LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64 };
    static const char *const names[3] = { "start", "limit", "delta" };
    int top = lua_gettop(L), kw = 0, dtpos = 0;
    if (top >= 1 && is_kwtable(L, top)) kw = top--;
    else if (top >= 4 && is_dtype(L, 4)) dtpos = 4, top = 3;
    if (kw) {
        static const char *const keys[] = { "dtype", "name", NULL };
        ltfL_checkkeys(L, kw, "range", keys);
    }
    if (top > 3) return ltfL_raisef(L, LTF_ERR_TYPE, "range: expected at most 3 values, got %d", top);
    if (top == 3 && dtpos == 0 && kw) {   /* start, limit, delta as tensors (one symbolic): the Lua wrapper
                                          ** cast them to the dtype; values read when the op runs */
        ltf_tensor *ts[3];
        int sym = 0;
        for (int k = 0; k < 3; k++) {
            ts[k] = ltfL_testtensor(L, k + 1);
            sym |= ts[k] && ltf_tensor_is_symbolic(ts[k]);
        }
        if (sym && ts[0] && ts[1] && ts[2]) {
            ltf_attrs a;
            ltf_attrs_init(&a);
            ltfL_getkw(L, kw, "dtype");
            a.i[0] = lua_isnil(L, -1) ? (int)ltf_tensor_dtype(ts[0]) : ltfL_checkdtype(L, -1, "range", "dtype", -1);
            lua_pop(L, 1);
            return ltfL_run1(L, LTF_OP_RANGE_DYN, ts, 3, &a);
        }
    }
    num v[3];
    int given[3] = { 0, 0, 0 };
    for (int k = 0; k < 3 && k < top; k++)
        if (!lua_isnoneornil(L, k + 1)) {
            check_num(L, k + 1, "range", names[k], &v[k]);
            given[k] = 1;
        }
    if (!given[0]) return ltfL_argerror(L, 1, "range", "start", "number or scalar tensor");
    if (!given[1]) {   /* tf.range(limit): start 0 */
        v[1] = v[0];
        v[0] = (num){ 0, 0, 1, LTF_DTYPE_INT32 };
        given[1] = 1;
    }
    if (!given[2]) v[2] = (num){ 1, 1, 1, LTF_DTYPE_INT32 };
    int rank = 0;
    for (int k = 0; k < 3; k++) {
        int r = range_rank(v[k].dt);
        if (r < 0)
            return ltfL_raisef(L, LTF_ERR_TYPE, "range: '%s' has dtype %s, expected a number", names[k],
                               ltf_dtype_name((ltf_dtype)v[k].dt));
        if ((given[k] || k == 0) && r > rank) rank = r;
    }
    int dt = opt_dtype(L, dtpos, kw, "range", by_rank[rank]);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = dt;
    if (dt == LTF_DTYPE_INT32 || dt == LTF_DTYPE_INT64) {
        for (int k = 0; k < 3; k++) a.i[k + 1] = num_toint(L, &v[k], dt, "range", names[k]);
    } else {
        for (int k = 0; k < 3; k++) a.f[k] = v[k].d;
    }
    return ltfL_run1(L, LTF_OP_RANGE, NULL, 0, &a);
}

/* tf.linspace(start, stop, num [, {dtype=}]): float32 unless a float64
** tensor is given (or dtype says otherwise). */
static int random_linspace(lua_State *L) {
    num s, e, n;
    check_num(L, 1, "linspace", "start", &s);
    check_num(L, 2, "linspace", "stop", &e);
    check_num(L, 3, "linspace", "num", &n);
    int kw = is_kwtable(L, 4) ? 4 : 0;
    if (kw) {
        static const char *const keys[] = { "dtype", "name", NULL };
        ltfL_checkkeys(L, kw, "linspace", keys);
    }
    int def = (s.dt == LTF_DTYPE_FLOAT64 || e.dt == LTF_DTYPE_FLOAT64) ? LTF_DTYPE_FLOAT64 : LTF_DTYPE_FLOAT32;
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = opt_dtype(L, kw ? 0 : 4, kw, "linspace", def);
    a.i[1] = num_toint(L, &n, LTF_DTYPE_INT64, "linspace", "num");
    a.f[0] = s.d;
    a.f[1] = e.d;
    return ltfL_run1(L, LTF_OP_LINSPACE, NULL, 0, &a);
}

/* tf.eye(num_rows [, num_columns] [, {batch_shape=, dtype=}]) or
** tf.eye(num_rows, num_columns, batch_shape, dtype) as TensorFlow's. */
static int random_eye(lua_State *L) {
    num r, c;
    check_num(L, 1, "eye", "num_rows", &r);
    int kw = 0, bpos = 0, dtpos = 0;
    if (is_kwtable(L, 2)) kw = 2;
    else if (is_kwtable(L, 3) && !has_metatable(L, 3) && luaL_len(L, 3) == 0) kw = 3;   /* not a batch shape */
    else {
        if (!lua_isnoneornil(L, 3)) bpos = 3;
        if (!lua_isnoneornil(L, 4)) dtpos = 4;
    }
    if (kw) {
        static const char *const keys[] = { "batch_shape", "dtype", "name", NULL };
        ltfL_checkkeys(L, kw, "eye", keys);
    }
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[1] = num_toint(L, &r, LTF_DTYPE_INT64, "eye", "num_rows");
    a.i[2] = a.i[1];
    if (kw != 2 && !lua_isnoneornil(L, 2)) {
        check_num(L, 2, "eye", "num_columns", &c);
        a.i[2] = num_toint(L, &c, LTF_DTYPE_INT64, "eye", "num_columns");
    }
    int64_t dims[LTF_MAX_RANK];
    int nb = 0;
    if (kw) {
        if (ltfL_getkw(L, kw, "batch_shape") != LUA_TNIL) nb = check_shape(L, -1, "eye", "batch_shape", dims);
        lua_pop(L, 1);
    } else if (bpos) {
        nb = check_shape(L, bpos, "eye", "batch_shape", dims);
    }
    if (nb > LTF_MAX_RANK - 2)
        return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "eye: 'batch_shape' has %d dimensions, at most %d allowed", nb,
                           LTF_MAX_RANK - 2);
    set_shape(&a, nb, dims);
    a.i[0] = opt_dtype(L, dtpos, kw, "eye", LTF_DTYPE_FLOAT32);
    return ltfL_run1(L, LTF_OP_EYE, NULL, 0, &a);
}
/* }==== */

/* {==== tf.random */
/* Seed attributes: none (the context's generator) or, with an op-level
** seed, the stream of (global seed, op seed) and how many times that pair
** has drawn since the last tf.random.set_seed. */
static void seed_attrs(lua_State *L, int seed_idx, const char *op, ltf_attrs *a) {
    if (!seed_idx || lua_isnoneornil(L, seed_idx)) return;
    int isint;
    lua_Integer seed = lua_tointegerx(L, seed_idx, &isint);
    if (!isint) ltfL_raisef(L, LTF_ERR_TYPE, "%s: 'seed' expected integer, got %s", op, luaL_typename(L, seed_idx));
    lua_getfield(L, LUA_REGISTRYINDEX, SEEDS_KEY);
    int st = lua_gettop(L);
    lua_getfield(L, st, "global");
    lua_Integer global = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : DEFAULT_GLOBAL_SEED;
    lua_getfield(L, st, "counters");
    lua_rawgeti(L, -1, seed);
    lua_Integer count = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : 0;
    lua_pop(L, 1);
    lua_pushinteger(L, count + 1);
    lua_rawseti(L, -2, seed);
    lua_settop(L, st - 1);
    uint64_t key = (uint64_t)global * 0x9E3779B97F4A7C15ull;
    key ^= (key >> 32) ^ ((uint64_t)seed * 0xC2B2AE3D27D4EB4Full);
    a->i[1] = 1;
    a->i[2] = (int64_t)key;
    a->i[3] = count;
}

/* Keyword or positional arguments 2.. of normal/uniform: (a, b, dtype, seed). */
typedef struct rand_args {
    int a, b, dtype, seed;   /* stack indices; 0 = absent */
} rand_args;

static void rand_args_get(lua_State *L, const char *op, const char *na, const char *nb, rand_args *r) {
    memset(r, 0, sizeof *r);
    if (is_kwtable(L, 2)) {
        const char *const keys[] = { na, nb, "dtype", "seed", "name", NULL };
        ltfL_checkkeys(L, 2, op, keys);
        lua_settop(L, 2);
        int *slots[4] = { &r->a, &r->b, &r->dtype, &r->seed };
        const char *names[4] = { na, nb, "dtype", "seed" };
        for (int k = 0; k < 4; k++) {
            if (ltfL_getkw(L, 2, names[k]) == LUA_TNIL) lua_pop(L, 1);
            else *slots[k] = lua_gettop(L);
        }
        return;
    }
    lua_settop(L, 5);
    for (int k = 2; k <= 5; k++) {
        int *slot = k == 2 ? &r->a : k == 3 ? &r->b : k == 4 ? &r->dtype : &r->seed;
        if (!lua_isnil(L, k)) *slot = k;
    }
}

/* tf.random.normal(shape, {mean=0, stddev=1, dtype=float32, seed=}) or
** tf.random.normal(shape, mean, stddev, dtype, seed). */
static int random_normal(lua_State *L) {
    int64_t dims[LTF_MAX_RANK];
    ltf_tensor *shape = shape_tensor(L, 1);
    int rank = shape ? 0 : check_shape(L, 1, "normal", "shape", dims);
    rand_args r;
    rand_args_get(L, "normal", "mean", "stddev", &r);
    ltf_attrs a;
    ltf_attrs_init(&a);
    set_shape(&a, rank, dims);
    a.i[0] = r.dtype ? ltfL_checkdtype(L, r.dtype, "normal", "dtype", -1) : LTF_DTYPE_FLOAT32;
    num n;
    a.f[0] = 0;
    a.f[1] = 1;
    if (r.a) { check_num(L, r.a, "normal", "mean", &n); a.f[0] = n.d; }
    if (r.b) { check_num(L, r.b, "normal", "stddev", &n); a.f[1] = n.d; }
    seed_attrs(L, r.seed, "normal", &a);
    return ltfL_run1(L, LTF_OP_RANDOM_NORMAL, shape ? &shape : NULL, shape ? 1 : 0, &a);
}

/* tf.random.uniform(shape, {minval=0, maxval=1, dtype=float32, seed=});
** integer dtypes need maxval, as TensorFlow's. */
static int random_uniform(lua_State *L) {
    int64_t dims[LTF_MAX_RANK];
    ltf_tensor *shape = shape_tensor(L, 1);
    int rank = shape ? 0 : check_shape(L, 1, "uniform", "shape", dims);
    rand_args r;
    rand_args_get(L, "uniform", "minval", "maxval", &r);
    ltf_attrs a;
    ltf_attrs_init(&a);
    set_shape(&a, rank, dims);
    int dt = r.dtype ? ltfL_checkdtype(L, r.dtype, "uniform", "dtype", -1) : LTF_DTYPE_FLOAT32;
    a.i[0] = dt;
    num lo = { 0, 0, 1, LTF_DTYPE_INT32 }, hi = { 1, 1, 1, LTF_DTYPE_INT32 };
    if (r.a) check_num(L, r.a, "uniform", "minval", &lo);
    if (r.b) check_num(L, r.b, "uniform", "maxval", &hi);
    if (dt == LTF_DTYPE_INT32 || dt == LTF_DTYPE_INT64) {
        if (!r.b)
            return ltfL_raisef(L, LTF_ERR_VALUE, "uniform: maxval must be given for an integer dtype (%s)",
                               ltf_dtype_name((ltf_dtype)dt));
        a.nints2 = 2;
        a.ints2[0] = num_toint(L, &lo, dt, "uniform", "minval");
        a.ints2[1] = num_toint(L, &hi, dt, "uniform", "maxval");
    } else {
        a.f[0] = lo.d;
        a.f[1] = hi.d;
    }
    seed_attrs(L, r.seed, "uniform", &a);
    return ltfL_run1(L, LTF_OP_RANDOM_UNIFORM, shape ? &shape : NULL, shape ? 1 : 0, &a);
}

/* tf.random.truncated_normal(shape, {mean=0, stddev=1, dtype=float32, seed=})
** or (shape, mean, stddev, dtype, seed): values beyond two standard
** deviations from the mean are redrawn. */
static int random_truncated_normal(lua_State *L) {
    int64_t dims[LTF_MAX_RANK];
    ltf_tensor *shape = shape_tensor(L, 1);
    int rank = shape ? 0 : check_shape(L, 1, "truncated_normal", "shape", dims);
    rand_args r;
    rand_args_get(L, "truncated_normal", "mean", "stddev", &r);
    ltf_attrs a;
    ltf_attrs_init(&a);
    set_shape(&a, rank, dims);
    a.i[0] = r.dtype ? ltfL_checkdtype(L, r.dtype, "truncated_normal", "dtype", -1) : LTF_DTYPE_FLOAT32;
    num n;
    a.f[0] = 0;
    a.f[1] = 1;
    if (r.a) { check_num(L, r.a, "truncated_normal", "mean", &n); a.f[0] = n.d; }
    if (r.b) { check_num(L, r.b, "truncated_normal", "stddev", &n); a.f[1] = n.d; }
    seed_attrs(L, r.seed, "truncated_normal", &a);
    return ltfL_run1(L, LTF_OP_TRUNCATED_NORMAL, shape ? &shape : NULL, shape ? 1 : 0, &a);
}

/* Trailing arguments after 'first' fixed ones: positional, or one keyword
** table whose keys are 'keys' (in positional order, then "name"). Each
** found value's stack index goes to 'slots' (0 = absent). */
static void tail_args(lua_State *L, int first, const char *op, const char *const *keys, int *slots) {
    int nk = 0;
    while (keys[nk]) nk++;
    for (int k = 0; k < nk; k++) slots[k] = 0;
    if (is_kwtable(L, first) && !has_metatable(L, first)) {
        const char *all[8];
        int n = 0;
        for (int k = 0; k < nk && n < 6; k++) all[n++] = keys[k];
        all[n++] = "name";
        all[n] = NULL;
        ltfL_checkkeys(L, first, op, all);
        lua_settop(L, first);
        for (int k = 0; k < nk; k++) {
            if (ltfL_getkw(L, first, keys[k]) == LUA_TNIL) lua_pop(L, 1);
            else slots[k] = lua_gettop(L);
        }
        return;
    }
    lua_settop(L, first + nk - 1);
    for (int k = 0; k < nk; k++)
        if (!lua_isnil(L, first + k)) slots[k] = first + k;
}

/* tf.random.gamma(shape, alpha [, {beta=, dtype=float32, seed=}]): samples of
** shape 'shape' ++ alpha.shape from Gamma(alpha, beta) (beta a rate: the
** draws are divided by it). */
static int random_gamma(lua_State *L) {
    static const char *const keys[] = { "beta", "dtype", "seed", NULL };
    int64_t dims[LTF_MAX_RANK];
    int rank = check_shape(L, 1, "gamma", "shape", dims);
    if (lua_isnoneornil(L, 2)) return ltfL_argerror(L, 2, "gamma", "alpha", "number or tensor");
    int sl[3];
    tail_args(L, 3, "gamma", keys, sl);
    int dt = sl[1] ? ltfL_checkdtype(L, sl[1], "gamma", "dtype", -1) : LTF_DTYPE_FLOAT32;
    if (dt != LTF_DTYPE_FLOAT32 && dt != LTF_DTYPE_FLOAT64)
        return ltfL_raisef(L, LTF_ERR_TYPE, "gamma: dtype %s is not supported, expected one of: float32, float64",
                           ltf_dtype_name((ltf_dtype)dt));
    ltf_tensor *alpha = ltfL_totensor(L, 2, dt, "gamma", "alpha");
    if (ltf_tensor_dtype(alpha) != (ltf_dtype)dt)
        return ltfL_raisef(L, LTF_ERR_TYPE, "gamma: 'alpha' has dtype %s but dtype is %s",
                           ltf_dtype_name(ltf_tensor_dtype(alpha)), ltf_dtype_name((ltf_dtype)dt));
    ltf_attrs a;
    ltf_attrs_init(&a);
    set_shape(&a, rank, dims);
    a.i[0] = dt;
    seed_attrs(L, sl[2], "gamma", &a);
    ltfL_run1(L, LTF_OP_RANDOM_GAMMA, &alpha, 1, &a);
    if (!sl[0]) return 1;
    ltf_tensor *in[2] = { ltfL_testtensor(L, -1), ltfL_totensor(L, sl[0], dt, "gamma", "beta") };
    return ltfL_run1(L, LTF_OP_DIV, in, 2, NULL);
}

/* tf.random.categorical(logits, num_samples [, {dtype=int64, seed=}]):
** (batch, num_samples) class indices, 1-based. */
static int random_categorical(lua_State *L) {
    static const char *const keys[] = { "dtype", "seed", NULL };
    int sl[2];
    int isint;
    lua_Integer ns = lua_tointegerx(L, 2, &isint);
    if (!isint) return ltfL_argerror(L, 2, "categorical", "num_samples", "integer");
    tail_args(L, 3, "categorical", keys, sl);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = sl[0] ? ltfL_checkdtype(L, sl[0], "categorical", "dtype", -1) : LTF_DTYPE_INT64;
    a.nints = 1;
    a.ints[0] = ns;
    seed_attrs(L, sl[1], "categorical", &a);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "categorical", "logits");
    return ltfL_run1(L, LTF_OP_CATEGORICAL, &x, 1, &a);
}

/* tf.random.shuffle(value [, {seed=}]): rows permuted along the first dimension. */
static int random_shuffle(lua_State *L) {
    static const char *const keys[] = { "seed", NULL };
    int sl[1];
    tail_args(L, 2, "shuffle", keys, sl);
    ltf_attrs a;
    ltf_attrs_init(&a);
    seed_attrs(L, sl[0], "shuffle", &a);
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "shuffle", "value");
    return ltfL_run1(L, LTF_OP_RANDOM_SHUFFLE, &x, 1, &a);
}

/* The seed pair of a stateless op: a table of two integers or an integer
** tensor of shape (2,); it fixes the stream (same pair, same values). */
static void stateless_seed(lua_State *L, int idx, const char *op, ltf_attrs *a) {
    int64_t s[LTF_MAX_RANK];
    if (lua_isnoneornil(L, idx)) ltfL_argerror(L, idx, op, "seed", "table of two integers");
    ltf_tensor *t = ltfL_testtensor(L, idx);
    if (t && ltf_tensor_is_symbolic(t))
        ltfL_raisef(L, LTF_ERR_VALUE, "%s: 'seed' is a symbolic tensor; its values are not known while tracing", op);
    int n = ltfL_checkintlist(L, idx, op, "seed", s, LTF_MAX_RANK, 0);
    if (n != 2) ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: 'seed' must have shape (2,), got %d values", op, n);
    uint64_t z = ((uint64_t)s[0] ^ 0x5851F42D4C957F2Dull) + 0x9E3779B97F4A7C15ull;   /* splitmix64 */
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    a->i[1] = 1;
    a->i[2] = (int64_t)(z ^ (z >> 31));
    a->i[3] = s[1];
}

/* tf.random.stateless_uniform(shape, seed [, {minval=0, maxval=1, dtype=float32}])
** and stateless_normal(shape, seed [, {mean=0, stddev=1, dtype=float32}]). */
static int stateless(lua_State *L, const char *op, int normal) {
    static const char *const ukeys[] = { "minval", "maxval", "dtype", NULL };
    static const char *const nkeys[] = { "mean", "stddev", "dtype", NULL };
    int64_t dims[LTF_MAX_RANK];
    int rank = check_shape(L, 1, op, "shape", dims);
    lua_settop(L, lua_gettop(L) < 2 ? 2 : lua_gettop(L));
    int sl[3];
    tail_args(L, 3, op, normal ? nkeys : ukeys, sl);
    ltf_attrs a;
    ltf_attrs_init(&a);
    set_shape(&a, rank, dims);
    int dt = sl[2] ? ltfL_checkdtype(L, sl[2], op, "dtype", -1) : LTF_DTYPE_FLOAT32;
    a.i[0] = dt;
    num lo = { 0, 0, 1, LTF_DTYPE_INT32 }, hi = { 1, 1, 1, LTF_DTYPE_INT32 };
    if (sl[0]) check_num(L, sl[0], op, normal ? "mean" : "minval", &lo);
    if (sl[1]) check_num(L, sl[1], op, normal ? "stddev" : "maxval", &hi);
    if (!normal && (dt == LTF_DTYPE_INT32 || dt == LTF_DTYPE_INT64)) {
        if (!sl[0] || !sl[1])
            return ltfL_raisef(L, LTF_ERR_VALUE, "%s: minval and maxval must both be given for an integer dtype (%s)",
                               op, ltf_dtype_name((ltf_dtype)dt));
        a.nints2 = 2;
        a.ints2[0] = num_toint(L, &lo, dt, op, "minval");
        a.ints2[1] = num_toint(L, &hi, dt, op, "maxval");
    } else {
        a.f[0] = lo.d;
        a.f[1] = hi.d;
    }
    stateless_seed(L, 2, op, &a);
    return ltfL_run1(L, normal ? LTF_OP_RANDOM_NORMAL : LTF_OP_RANDOM_UNIFORM, NULL, 0, &a);
}
static int random_stateless_uniform(lua_State *L) { return stateless(L, "stateless_uniform", 0); }
static int random_stateless_normal(lua_State *L) { return stateless(L, "stateless_normal", 1); }

/* tf.random.set_seed(seed): reseeds the context's generator and restarts
** every op-level seed's stream; nil goes back to the default seed. */
static int random_set_seed(lua_State *L) {
    lua_newtable(L);
    if (lua_isnoneornil(L, 1)) {
        ltf_ctx_set_seed(ltfL_ctx(L), 0x9E3779B97F4A7C15ull);
    } else {
        int isint;
        lua_Integer s = lua_tointegerx(L, 1, &isint);
        if (!isint) return ltfL_argerror(L, 1, "set_seed", "seed", "integer");
        ltf_ctx_set_seed(ltfL_ctx(L), (uint64_t)s);
        lua_pushinteger(L, s);
        lua_setfield(L, -2, "global");
    }
    lua_newtable(L);
    lua_setfield(L, -2, "counters");
    lua_setfield(L, LUA_REGISTRYINDEX, SEEDS_KEY);
    return 0;
}
/* }==== */

#define R(name) {#name, random_##name}
static const luaL_Reg top_fns[] = {
    R(zeros), R(ones), R(fill), R(zeros_like), R(ones_like), R(range), R(linspace), R(eye),
    {NULL, NULL}
};
static const luaL_Reg random_fns[] = {
    R(normal), R(uniform), R(set_seed), R(truncated_normal), R(gamma), R(categorical), R(shuffle),
    R(stateless_uniform), R(stateless_normal),
    {NULL, NULL}
};

void ltfL_open_random(lua_State *L) {
    int mod = lua_gettop(L);
    ltfL_register(L, top_fns, NULL);
    /* tf.random.* only (not at the top level, where TensorFlow has none of them) */
    if (lua_getfield(L, mod, "random") != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_pushvalue(L, -1);
        lua_setfield(L, mod, "random");
    }
    for (const luaL_Reg *f = random_fns; f->name; f++) {
        lua_getfield(L, LUA_REGISTRYINDEX, "tf.state");
        luaL_getmetatable(L, LTFL_TENSOR);
        lua_pushcclosure(L, f->func, 2);
        lua_setfield(L, -2, f->name);
    }
    lua_settop(L, mod);
    lua_newtable(L);
    lua_newtable(L);
    lua_setfield(L, -2, "counters");
    lua_setfield(L, LUA_REGISTRYINDEX, SEEDS_KEY);
}
