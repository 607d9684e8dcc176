/*
** tensor.c: the tf.Tensor userdata: boxes, conversion from Lua values
** (numbers adapt to the other operand's dtype; nested tables infer shape
** and dtype), metamethods, totable/item, and tf.constant.
*/
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ltfL.h"

/* Tensor bytes allocated since the last full collection that trigger the
** next one: at least GC_MIN_BYTES, or as much as was live after the last one
** (so live tensor memory at most about doubles, like Lua's own 'pause').
** A full collection, not a step: lua5.4 runs the collector in generational
** mode, where finalizable boxes survive minor collections. */
#define GC_MIN_BYTES ((size_t)24 << 20)
/* Incremental steps: every GC_STEP_BYTES of tensor memory (plus the
** engine's per-tensor overhead) is reported as Lua debt, so the collector
** keeps pace with memory it cannot see. 256 KB: about 950 small eager ops
** between steps, so the tensors that die between two collections fit the
** context's block cache (2048 blocks of 512 B, storage.c) and are recycled
** from it; at 1 MB a 2x2 add left about 3900 dead per collection once the
** Lua heap held all of tf's modules (1.3 MB), and half of every op's
** tensor went through malloc/free. */
#define GC_STEP_BYTES ((size_t)256 << 10)
#define GC_BOX_OVERHEAD 256

/* {==== Boxes */
ltfL_box *ltfL_newbox(lua_State *L) {
    ltfL_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->t = NULL;
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_setmetatable(L, -2);
    return b;
}

void ltfL_fillbox(lua_State *L, ltfL_box *b, ltf_tensor *t) {
    b->t = t;
    int64_t n = ltf_tensor_num_elements(t);
    if (n > 0 && !ltf_tensor_is_symbolic(t)) {
        ltfL_state *s = ltfL_S(L);
        size_t bytes = (size_t)n * ltf_dtype_size(ltf_tensor_dtype(t));
        s->gc_pending += bytes;
        s->gc_step += bytes + GC_BOX_OVERHEAD;
        if (s->gc_step >= GC_STEP_BYTES) {      /* pace the incremental collector */
            int kb = (int)(s->gc_step / 1024);
            s->gc_step = 0;
            lua_gc(L, LUA_GCSTEP, kb);
        }
        if (s->gc_pending >= GC_MIN_BYTES && s->gc_pending >= s->gc_base) {
            lua_gc(L, LUA_GCCOLLECT);
            ltf_memory_stats m;
            ltf_ctx_memory_stats(s->ctx, &m);
            s->gc_pending = 0;
            s->gc_base = m.live_bytes;
        }
    }
}

void ltfL_pushtensor(lua_State *L, ltf_tensor *t) {
    ltfL_box *b = lua_newuserdatauv(L, sizeof *b, 0);   /* may raise: then 't' leaks only on OOM */
    b->t = NULL;
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_setmetatable(L, -2);
    ltfL_fillbox(L, b, t);
}

/* The box at 'idx' when it is a tensor box (a full userdata whose metatable
** is upvalue 2), else NULL. Metatables compared by address: lua_topointer is
** a few instructions where lua_rawequal goes through luaV_equalobj, and this
** runs two or three times per eager op (binop's operands, __gc). */
static ltfL_box *box_with(lua_State *L, int idx, const void *mt) {
    ltfL_box *b = lua_touserdata(L, idx);
    if (!b || !lua_getmetatable(L, idx)) return NULL;
    int ok = lua_topointer(L, -1) == mt;
    lua_pop(L, 1);
    return ok ? b : NULL;
}
#define TENSOR_MT(L) lua_topointer(L, lua_upvalueindex(2))
#define box_at(L, idx) box_with(L, idx, TENSOR_MT(L))

/* ltfL_testtensor with the metatable's address given. */
static ltf_tensor *test_with(lua_State *L, int idx, const void *mt) {
    ltfL_box *b = box_with(L, idx, mt);
    if (!b) return NULL;
    if (!b->t) ltfL_raise(L, LTF_ERR_VALUE, "tensor was freed (x:free() or <close> released it)");
    return b->t;
}

ltf_tensor *ltfL_testtensor(lua_State *L, int idx) {
    ltfL_box *b = box_at(L, idx);
    if (!b) return NULL;
    if (!b->t) ltfL_raise(L, LTF_ERR_VALUE, "tensor was freed (x:free() or <close> released it)");
    return b->t;
}

ltf_tensor *ltfL_fromobject(lua_State *L, int idx) {
    if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx)) return NULL;
    if (lua_getfield(L, -1, "__tf_tensor") != LUA_TFUNCTION) {
        lua_pop(L, 2);
        return NULL;
    }
    lua_remove(L, -2);
    lua_pushvalue(L, idx < 0 ? idx - 1 : idx);
    lua_call(L, 1, 1);
    ltf_tensor *t = ltfL_testtensor(L, -1);
    if (!t) ltfL_raise(L, LTF_ERR_TYPE, "__tf_tensor did not return a tensor");
    return t;
}

ltf_tensor *ltfL_checktensor(lua_State *L, int idx, const char *op, const char *arg) {
    ltf_tensor *t = ltfL_testtensor(L, idx);
    if (!t) t = ltfL_fromobject(L, idx);
    if (!t) ltfL_argerror(L, idx, op, arg, "tensor");
    return t;
}

int ltfL_run1(lua_State *L, ltf_op_id op, ltf_tensor *const *in, int nin, const ltf_attrs *a) {
    ltfL_box *b = ltfL_newbox(L);
    ltf_tensor *out = NULL;
    int n = 0;
    ltf_status st = ltf_op_run(ltfL_ctx(L), op, in, nin, a, &out, 1, &n);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    ltfL_fillbox(L, b, out);
    return 1;
}

/* Outputs wait in a guard userdata so that an allocation error while
** boxing them releases the rest. */
typedef struct outs_guard {
    int n;
    ltf_tensor *t[1];
} outs_guard;

static int guard_gc(lua_State *L) {
    outs_guard *g = lua_touserdata(L, 1);
    for (int i = 0; i < g->n; i++) {
        ltf_tensor_release(g->t[i]);
        g->t[i] = NULL;
    }
    return 0;
}

int ltfL_runn(lua_State *L, ltf_op_id op, ltf_tensor *const *in, int nin, const ltf_attrs *a) {
    int maxout = 4096;
    outs_guard *g = lua_newuserdatauv(L, sizeof(outs_guard) + sizeof(ltf_tensor *) * (size_t)maxout, 0);
    g->n = 0;
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, guard_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
    int n = 0;
    ltf_status st = ltf_op_run(ltfL_ctx(L), op, in, nin, a, g->t, maxout, &n);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    g->n = n;
    int gi = lua_gettop(L);
    luaL_checkstack(L, n + 2, "too many outputs");
    for (int i = 0; i < n; i++) {
        ltfL_box *b = ltfL_newbox(L);
        ltfL_fillbox(L, b, g->t[i]);
        g->t[i] = NULL;
    }
    g->n = 0;
    lua_remove(L, gi);
    return n;
}
/* }==== */

/* {==== Conversion from Lua values */
static ltf_status number_fits(lua_State *L, int idx, ltf_dtype dt, double *dv, int64_t *iv) {
    int isint = lua_isinteger(L, idx);
    lua_Integer i = isint ? lua_tointeger(L, idx) : 0;
    lua_Number d = lua_tonumber(L, idx);
    *dv = isint ? (double)i : d;
    switch (dt) {
    case LTF_DTYPE_FLOAT32:
    case LTF_DTYPE_FLOAT64:
    case LTF_DTYPE_FLOAT16:
    case LTF_DTYPE_BFLOAT16: return LTF_OK;
    case LTF_DTYPE_INT32:
    case LTF_DTYPE_INT64:
    case LTF_DTYPE_UINT8: {
        if (!isint) {
            if (d != floor(d) || !(d >= -9.2233720368547758e18 && d < 9.2233720368547758e18)) return LTF_ERR_TYPE;
            i = (lua_Integer)d;
        }
        if (dt == LTF_DTYPE_INT32 && (i < INT32_MIN || i > INT32_MAX)) return LTF_ERR_TYPE;
        if (dt == LTF_DTYPE_UINT8 && (i < 0 || i > 255)) return LTF_ERR_TYPE;
        *iv = i;
        return LTF_OK;
    }
    default: return LTF_ERR_TYPE;
    }
}

static void store_number(void *dst, ltf_dtype dt, double dv, int64_t iv) {
    switch (dt) {
    case LTF_DTYPE_FLOAT32: *(float *)dst = (float)dv; break;
    case LTF_DTYPE_FLOAT64: *(double *)dst = dv; break;
    case LTF_DTYPE_FLOAT16: *(uint16_t *)dst = ltf_float16_from_double(dv); break;   /* rounded once, to nearest even */
    case LTF_DTYPE_BFLOAT16: *(uint16_t *)dst = ltf_bfloat16_from_double(dv); break;
    case LTF_DTYPE_INT32: *(int32_t *)dst = (int32_t)iv; break;
    case LTF_DTYPE_INT64: *(int64_t *)dst = iv; break;
    case LTF_DTYPE_UINT8: *(uint8_t *)dst = (uint8_t)iv; break;
    default: break;
    }
}

static int cannot_convert(lua_State *L, int idx, ltf_dtype dt, const char *op, const char *arg) {
    lua_pushvalue(L, idx);
    const char *v = luaL_tolstring(L, -1, NULL);
    return ltfL_raisef(L, LTF_ERR_TYPE, "%s: argument '%s': cannot convert %s to a %s tensor", op, arg, v,
                       ltf_dtype_name(dt));
}

/* A scalar from the cache (or a new one put there). */
static ltf_tensor *cached_scalar(lua_State *L, int idx, ltf_dtype dt, const char *op, const char *arg) {
    double dv = 0;
    int64_t iv = 0;
    if (number_fits(L, idx, dt, &dv, &iv) != LTF_OK) {
        cannot_convert(L, idx, dt, op, arg);
        return NULL;
    }
    ltfL_state *s = ltfL_S(L);
    uint64_t bits;
    memcpy(&bits, &dv, sizeof bits);
    uint64_t h = (bits ^ (bits >> 29) ^ (uint64_t)dt * 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
    unsigned slot = (unsigned)(h >> 58) % LTFL_SCALAR_CACHE;
    ltf_tensor *t = s->scalars[slot];
    if (t && ltf_tensor_dtype(t) == dt) {
        const void *p = ltf_tensor_data(t);
        int same = 0;
        switch (dt) {
        case LTF_DTYPE_FLOAT32: same = memcmp(p, &(float){(float)dv}, 4) == 0; break;
        case LTF_DTYPE_FLOAT64: same = memcmp(p, &dv, 8) == 0; break;
        case LTF_DTYPE_FLOAT16: same = *(const uint16_t *)p == ltf_float16_from_double(dv); break;
        case LTF_DTYPE_BFLOAT16: same = *(const uint16_t *)p == ltf_bfloat16_from_double(dv); break;
        case LTF_DTYPE_INT32: same = *(const int32_t *)p == (int32_t)iv; break;
        case LTF_DTYPE_INT64: same = *(const int64_t *)p == iv; break;
        case LTF_DTYPE_UINT8: same = *(const uint8_t *)p == (uint8_t)iv; break;
        default: break;
        }
        if (same) return t;
    }
    unsigned char buf[8];
    store_number(buf, dt, dv, iv);
    if (t) {
        /* slot taken by another value: a fresh tensor owned by a box on the
        ** stack (an entry is never evicted while a caller may still use it) */
        ltfL_box *b = ltfL_newbox(L);
        ltf_tensor *n = ltf_tensor_from_data(s->ctx, dt, 0, NULL, buf);
        if (!n) {
            ltfL_raisectx(L, LTF_ERR_RESOURCE_EXHAUSTED);
            return NULL;
        }
        b->t = n;
        return n;
    }
    ltf_tensor *n = ltf_tensor_from_data(s->ctx, dt, 0, NULL, buf);
    if (!n) {
        ltfL_raisectx(L, LTF_ERR_RESOURCE_EXHAUSTED);
        return NULL;
    }
    s->scalars[slot] = n;
    return n;
}

typedef struct nest_info {
    int rank;
    int64_t dims[LTF_MAX_RANK];
    int has_float, has_int, has_bool, has_string, has_big;
} nest_info;

/* Find the shape from first elements, then check every leaf. */
static void nest_shape(lua_State *L, int idx, nest_info *ni, const char *op, const char *arg) {
    int depth = 0;
    lua_pushvalue(L, idx);
    while (lua_istable(L, -1) && !ltfL_testtensor(L, -1)) {
        if (depth >= LTF_MAX_RANK)
            ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: argument '%s' nests deeper than %d levels", op, arg,
                        LTF_MAX_RANK);
        lua_Integer n = luaL_len(L, -1);
        ni->dims[depth++] = n;
        if (n == 0) break;
        lua_geti(L, -1, 1);
        lua_remove(L, -2);
    }
    lua_pop(L, 1);
    ni->rank = depth;
}

static void nest_check(lua_State *L, int idx, nest_info *ni, int level, const char *op, const char *arg) {
    if (level == ni->rank) {
        switch (lua_type(L, idx)) {
        case LUA_TNUMBER:
            if (lua_isinteger(L, idx)) {
                lua_Integer v = lua_tointeger(L, idx);
                ni->has_int = 1;
                if (v < INT32_MIN || v > INT32_MAX) ni->has_big = 1;
            } else {
                ni->has_float = 1;
            }
            return;
        case LUA_TBOOLEAN: ni->has_bool = 1; return;
        case LUA_TSTRING: ni->has_string = 1; return;
        default:
            if (lua_istable(L, idx))
                ltfL_raisef(L, LTF_ERR_VALUE, "%s: argument '%s' is not rectangular: a table where a value was expected at depth %d",
                            op, arg, level + 1);
            ltfL_raisef(L, LTF_ERR_TYPE, "%s: argument '%s' holds a %s, expected numbers, booleans or strings", op, arg,
                        luaL_typename(L, idx));
        }
    }
    if (!lua_istable(L, idx))
        ltfL_raisef(L, LTF_ERR_VALUE, "%s: argument '%s' is not rectangular: a %s where a table of %lld was expected at depth %d",
                    op, arg, luaL_typename(L, idx), (long long)ni->dims[level], level + 1);
    lua_Integer n = luaL_len(L, idx);
    if (n != ni->dims[level])
        ltfL_raisef(L, LTF_ERR_VALUE, "%s: argument '%s' is not rectangular: lengths %lld and %lld at depth %d", op, arg,
                    (long long)ni->dims[level], (long long)n, level + 1);
    luaL_checkstack(L, 4, "nesting");
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, idx, i);
        nest_check(L, lua_gettop(L), ni, level + 1, op, arg);
        lua_pop(L, 1);
    }
}

static void nest_fill(lua_State *L, int idx, const nest_info *ni, int level, ltf_dtype dt, char **dst,
                      const char *op, const char *arg) {
    if (level == ni->rank) {
        size_t es = ltf_dtype_size(dt);
        if (dt == LTF_DTYPE_BOOL) {
            if (!lua_isboolean(L, idx)) cannot_convert(L, idx, dt, op, arg);
            **(uint8_t **)dst = (uint8_t)lua_toboolean(L, idx);
        } else if (dt == LTF_DTYPE_STRING) {
            if (lua_type(L, idx) != LUA_TSTRING) cannot_convert(L, idx, dt, op, arg);
            size_t len;
            const char *s = lua_tolstring(L, idx, &len);
            ltf_string *str = len ? ltf_string_new(s, len) : NULL;
            if (len && !str) ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "out of memory");
            *(ltf_string **)*dst = str;
        } else {
            double dv;
            int64_t iv;
            if (lua_type(L, idx) != LUA_TNUMBER || number_fits(L, idx, dt, &dv, &iv) != LTF_OK)
                cannot_convert(L, idx, dt, op, arg);
            store_number(*dst, dt, dv, iv);
        }
        *dst += es;
        return;
    }
    lua_Integer n = ni->dims[level];
    for (lua_Integer i = 1; i <= n; i++) {
        lua_geti(L, idx, i);
        nest_fill(L, lua_gettop(L), ni, level + 1, dt, dst, op, arg);
        lua_pop(L, 1);
    }
}

/* Convert the Lua value at 'idx' into a new tensor pushed on the stack.
** 'dt' < 0 infers the dtype. [-0, +1, v] */
static ltf_tensor *convert_value(lua_State *L, int idx, int dt, const char *op, const char *arg) {
    idx = lua_absindex(L, idx);
    nest_info ni;
    memset(&ni, 0, sizeof ni);
    int t = lua_type(L, idx);
    if (t == LUA_TTABLE) {
        nest_shape(L, idx, &ni, op, arg);
        nest_check(L, idx, &ni, 0, op, arg);
    } else if (t == LUA_TNUMBER || t == LUA_TBOOLEAN || t == LUA_TSTRING) {
        nest_check(L, idx, &ni, 0, op, arg);
    } else {
        ltfL_argerror(L, idx, op, arg, "tensor, number, boolean, string or table");
    }
    if (dt < 0) {
        int kinds = (ni.has_float || ni.has_int) + ni.has_bool + ni.has_string;
        if (kinds > 1)
            ltfL_raisef(L, LTF_ERR_TYPE, "%s: argument '%s' mixes %s%s%s; give one kind of value", op, arg,
                        (ni.has_float || ni.has_int) ? "numbers " : "", ni.has_bool ? "booleans " : "",
                        ni.has_string ? "strings " : "");
        dt = ni.has_string ? LTF_DTYPE_STRING : ni.has_bool ? LTF_DTYPE_BOOL
           : ni.has_float ? LTF_DTYPE_FLOAT32 : ni.has_big ? LTF_DTYPE_INT64
           : ni.has_int ? LTF_DTYPE_INT32 : LTF_DTYPE_FLOAT32;
    }
    ltfL_box *b = ltfL_newbox(L);
    ltf_tensor *out = ltf_tensor_new(ltfL_ctx(L), (ltf_dtype)dt, ni.rank, ni.dims);
    if (!out) ltfL_raisectx(L, LTF_ERR_RESOURCE_EXHAUSTED);
    b->t = out;             /* owned by the box from here: errors below free it */
    char *p = ltf_tensor_data(out);
    nest_fill(L, idx, &ni, 0, (ltf_dtype)dt, &p, op, arg);
    b->t = NULL;
    ltfL_fillbox(L, b, out);
    return out;
}

ltf_tensor *ltfL_totensor(lua_State *L, int idx, int like, const char *op, const char *arg) {
    ltf_tensor *t = ltfL_testtensor(L, idx);
    if (t) return t;
    idx = lua_absindex(L, idx);
    if ((t = ltfL_fromobject(L, idx)) != NULL) return t;
    if (lua_type(L, idx) == LUA_TNUMBER) {
        ltf_dtype dt = like >= 0 ? (ltf_dtype)like : (lua_isinteger(L, idx) ? LTF_DTYPE_INT32 : LTF_DTYPE_FLOAT32);
        if (dt == LTF_DTYPE_INT32 && like < 0) {
            lua_Integer v = lua_tointeger(L, idx);
            if (v < INT32_MIN || v > INT32_MAX) dt = LTF_DTYPE_INT64;
        }
        if (dt == LTF_DTYPE_BOOL || dt == LTF_DTYPE_STRING) {
            cannot_convert(L, idx, dt, op, arg);
            return NULL;
        }
        return cached_scalar(L, idx, dt, op, arg);
    }
    int dt = -1;
    if (like >= 0 && lua_istable(L, idx)) dt = like;
    return convert_value(L, idx, dt, op, arg);
}
/* }==== */

/* {==== Reading values back */
static void push_element(lua_State *L, ltf_dtype dt, const char *p) {
    switch (dt) {
    case LTF_DTYPE_FLOAT32: lua_pushnumber(L, *(const float *)p); break;
    case LTF_DTYPE_FLOAT64: lua_pushnumber(L, *(const double *)p); break;
    case LTF_DTYPE_FLOAT16: lua_pushnumber(L, ltf_float16_to_float(*(const uint16_t *)p)); break;
    case LTF_DTYPE_BFLOAT16: lua_pushnumber(L, ltf_bfloat16_to_float(*(const uint16_t *)p)); break;
    case LTF_DTYPE_INT32: lua_pushinteger(L, *(const int32_t *)p); break;
    case LTF_DTYPE_INT64: lua_pushinteger(L, *(const int64_t *)p); break;
    case LTF_DTYPE_UINT8: lua_pushinteger(L, *(const uint8_t *)p); break;
    case LTF_DTYPE_BOOL: lua_pushboolean(L, *(const uint8_t *)p); break;
    case LTF_DTYPE_STRING: {
        const ltf_string *s = *(const ltf_string *const *)p;
        if (s) lua_pushlstring(L, s->bytes, s->len);
        else lua_pushliteral(L, "");
        break;
    }
    default: lua_pushnil(L);
    }
}

static void push_nested(lua_State *L, const ltf_tensor *t, int level, const char **p) {
    ltf_dtype dt = ltf_tensor_dtype(t);
    if (level == ltf_tensor_rank(t)) {
        push_element(L, dt, *p);
        *p += ltf_dtype_size(dt);
        return;
    }
    int64_t n = ltf_tensor_dims(t)[level];
    luaL_checkstack(L, 3, "totable");
    lua_createtable(L, n <= INT_MAX ? (int)n : 0, 0);
    for (int64_t i = 0; i < n; i++) {
        push_nested(L, t, level + 1, p);
        lua_rawseti(L, -2, i + 1);
    }
}

ltf_tensor *ltfL_hostview(lua_State *L, ltf_tensor *t) {
    if (ltf_tensor_is_symbolic(t) || ltf_tensor_device(t) == LTF_DEVICE_CPU) return t;
    ltfL_box *b = ltfL_newbox(L);
    ltf_tensor *h = NULL;
    ltf_status st = ltf_tensor_to_device(ltfL_ctx(L), t, LTF_DEVICE_CPU, 0, &h);
    if (st != LTF_OK) ltfL_raisectx(L, st);
    b->t = h;   /* not counted as new tensor memory: it goes with the box */
    return h;
}

void ltfL_readvalues(lua_State *L, ltf_tensor *t, void *dst, size_t nbytes) {
    ltf_status st = ltf_tensor_copy_to(ltfL_ctx(L), t, dst, nbytes);
    if (st != LTF_OK) ltfL_raisectx(L, st);
}

void ltfL_readints(lua_State *L, ltf_tensor *t, int64_t *out, int64_t n) {
    size_t es = ltf_dtype_size(ltf_tensor_dtype(t));
    ltfL_readvalues(L, t, out, (size_t)n * es);
    if (es == 4)   /* int32 elements: widen in place, from the last */
        for (int64_t i = n; i-- > 0;) {
            int32_t x;
            memcpy(&x, (const char *)out + 4 * (size_t)i, sizeof x);
            out[i] = x;
        }
}

/* A host copy of 't' that the caller releases ('t' itself, retained, on the
** host); 'owned' is released when the copy fails. [-0, +0, v] */
static ltf_tensor *host_ref(lua_State *L, ltf_tensor *t, ltf_tensor *owned) {
    ltf_tensor *h = NULL;
    ltf_status st = ltf_tensor_to_device(ltfL_ctx(L), t, LTF_DEVICE_CPU, 0, &h);
    if (st != LTF_OK) {
        ltf_tensor_release(owned);
        ltfL_raisectx(L, st);
    }
    return h;
}

/* The tensor at 'idx' with a value readable on the host (a device tensor's
** copy, pushed). [-0, +(0|1), v] */
static ltf_tensor *check_concrete(lua_State *L, int idx, const char *op) {
    ltf_tensor *t = ltfL_checktensor(L, idx, op, "self");
    if (ltf_tensor_is_symbolic(t))
        ltfL_raisef(L, LTF_ERR_FAILED_PRECONDITION,
                    "%s: a symbolic tensor has no value while tracing (use tf.print to see values at run time)", op);
    return ltfL_hostview(L, t);
}

/* The nested tables totable builds: one per index of every dimension but the
** last (an empty tensor still has its rows), plus the values. Bounded, so a
** (2^40, 0) tensor is an error, not 2^40 empty tables (fuzz findings/01). */
#define TOTABLE_MAX_ENTRIES ((int64_t)1 << 28)
static int tensor_totable(lua_State *L) {
    ltf_tensor *t = check_concrete(L, 1, "totable");
    int r = ltf_tensor_rank(t);
    const int64_t *d = ltf_tensor_dims(t);
    int64_t rows = 1, entries = ltf_tensor_num_elements(t);
    for (int k = 0; k + 1 < r && entries <= TOTABLE_MAX_ENTRIES; k++) {
        rows = d[k] == 0 ? 0 : (rows > TOTABLE_MAX_ENTRIES / d[k] ? TOTABLE_MAX_ENTRIES + 1 : rows * d[k]);
        entries += rows;
    }
    if (entries > TOTABLE_MAX_ENTRIES) {
        char s[192];
        size_t n = (size_t)snprintf(s, sizeof s, "(");
        for (int k = 0; k < r && n < sizeof s; k++)
            n += (size_t)snprintf(s + n, sizeof s - n, "%s%lld", k ? ", " : "", (long long)d[k]);
        if (n < sizeof s) snprintf(s + n, sizeof s - n, r == 1 ? ",)" : ")");
        return ltfL_raisef(L, LTF_ERR_RESOURCE_EXHAUSTED,
                           "totable: a tensor of shape %s would need more than %lld Lua values and tables", s,
                           (long long)TOTABLE_MAX_ENTRIES);
    }
    const char *p = ltf_tensor_data(t);
    push_nested(L, t, 0, &p);
    return 1;
}

static int tensor_item(lua_State *L) {
    ltf_tensor *t = check_concrete(L, 1, "item");
    if (ltf_tensor_num_elements(t) != 1)
        return ltfL_raisef(L, LTF_ERR_VALUE, "item: the tensor has %lld elements; item() needs exactly one",
                           (long long)ltf_tensor_num_elements(t));
    push_element(L, ltf_tensor_dtype(t), ltf_tensor_data(t));
    return 1;
}

/* x:_flat(first, count): 'count' values from flat position 'first' (1-based). */
static int tensor_flat(lua_State *L) {
    ltf_tensor *t = check_concrete(L, 1, "flat");
    lua_Integer first = luaL_checkinteger(L, 2), count = luaL_checkinteger(L, 3);
    int64_t n = ltf_tensor_num_elements(t);
    if (first < 1) first = 1;
    if (first > n) first = n + 1;   /* from here on first - 1 <= n: no overflow */
    if (count < 0) count = 0;
    if (count > n - (first - 1)) count = n - (first - 1);
    lua_createtable(L, count < (1 << 24) ? (int)count : 0, 0);
    size_t es = ltf_dtype_size(ltf_tensor_dtype(t));
    const char *p = (const char *)ltf_tensor_data(t) + (size_t)(first - 1) * es;
    for (lua_Integer i = 0; i < count; i++) {
        push_element(L, ltf_tensor_dtype(t), p + (size_t)i * es);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}
/* }==== */

/* {==== Fields and small methods */
/* Release the box at 1 when it is a tensor box; 0 when it is not. */
static int release_box(lua_State *L) {
    ltfL_box *b = box_at(L, 1);
    if (!b) return 0;
    ltf_tensor_release(b->t);
    b->t = NULL;
    return 1;
}

static int tensor_free(lua_State *L) {
    if (!release_box(L)) return ltfL_argerror(L, 1, "free", "self", "tensor");
    return 0;
}

/* __gc and __close never raise: the metatable may sit on something else
** (setmetatable({}, tf.Tensor)), whose finalizer must do nothing. */
static int tensor_gc(lua_State *L) {
    release_box(L);
    return 0;
}

static int tensor_dims(lua_State *L) {
    ltf_tensor *t = ltfL_checktensor(L, 1, "shape", "self");
    int r = ltf_tensor_rank(t);
    if (r < 0) {
        lua_pushnil(L);
        return 1;
    }
    lua_createtable(L, r, 0);
    for (int i = 0; i < r; i++) {
        lua_pushinteger(L, ltf_tensor_dims(t)[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int tensor_dtype_id(lua_State *L) {
    ltf_tensor *t = ltfL_checktensor(L, 1, "dtype", "self");
    lua_pushinteger(L, ltf_tensor_dtype(t));
    return 1;
}

static int tensor_rank(lua_State *L) {
    ltf_tensor *t = ltfL_checktensor(L, 1, "rank", "self");
    if (ltf_tensor_rank(t) < 0) lua_pushnil(L);
    else lua_pushinteger(L, ltf_tensor_rank(t));
    return 1;
}

static int tensor_device(lua_State *L) {
    ltf_tensor *t = ltfL_checktensor(L, 1, "device", "self");
    lua_pushfstring(L, "/job:localhost/replica:0/task:0/device:%s:%d",
                    ltf_tensor_device(t) == LTF_DEVICE_CPU ? "CPU" : "GPU", ltf_tensor_device_ordinal(t));
    return 1;
}

static int tensor_is_symbolic(lua_State *L) {
    lua_pushboolean(L, ltf_tensor_is_symbolic(ltfL_checktensor(L, 1, "is_symbolic", "self")));
    return 1;
}

static int tensor_is_tensor(lua_State *L) {
    lua_pushboolean(L, box_at(L, 1) != NULL);
    return 1;
}

static int tensor_len(lua_State *L) {
    ltf_tensor *t = ltfL_checktensor(L, 1, "len", "self");
    if (ltf_tensor_rank(t) == 0) return ltfL_raise(L, LTF_ERR_TYPE, "len: a scalar tensor has no length (#x needs rank >= 1)");
    if (ltf_tensor_rank(t) < 0 || ltf_tensor_dims(t)[0] < 0)
        return ltfL_raise(L, LTF_ERR_TYPE, "len: the first dimension is unknown while tracing (use tf.shape(x)[1])");
    lua_pushinteger(L, ltf_tensor_dims(t)[0]);
    return 1;
}

/* __index: methods table [1] of the metatable, then getters [2], then the
** integer-index hook methods._index. */
static int tensor_index(lua_State *L) {
    lua_rawgeti(L, lua_upvalueindex(2), 1);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, -2) != LUA_TNIL) return 1;
    lua_pop(L, 2);
    if (lua_type(L, 2) == LUA_TNUMBER || ltfL_testtensor(L, 2) || lua_istable(L, 2)) {
        lua_rawgeti(L, lua_upvalueindex(2), 1);
        lua_getfield(L, -1, "_index");
        lua_pushvalue(L, 1);
        lua_pushvalue(L, 2);
        lua_call(L, 2, 1);
        return 1;
    }
    lua_rawgeti(L, lua_upvalueindex(2), 2);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, -2) != LUA_TNIL) {
        lua_pushvalue(L, 1);
        lua_call(L, 1, 1);
        return 1;
    }
    return 0;
}

static int tensor_newindex(lua_State *L) {
    return ltfL_raise(L, LTF_ERR_TYPE,
                      "tensors are immutable: use a tf.Variable and assign, or build a new tensor (tf.where, tf.concat)");
}
/* }==== */

/* {==== Arithmetic metamethods */
static int binop(lua_State *L, ltf_op_id op, const char *name) {
    const void *mt = TENSOR_MT(L);
    ltf_tensor *a = test_with(L, 1, mt), *b = test_with(L, 2, mt);
    if (!a) a = ltfL_fromobject(L, 1);
    if (!b) b = ltfL_fromobject(L, 2);
    int like = a ? (int)ltf_tensor_dtype(a) : (b ? (int)ltf_tensor_dtype(b) : -1);
    if (!a) a = ltfL_totensor(L, 1, like, name, "x");
    if (!b) b = ltfL_totensor(L, 2, like, name, "y");
    ltf_tensor *in[2] = { a, b };
    return ltfL_run1(L, op, in, 2, NULL);
}

#define BINOP(fname, ID, name) static int fname(lua_State *L) { return binop(L, LTF_OP_##ID, name); }
BINOP(tensor_add, ADD, "add")
BINOP(tensor_sub, SUB, "subtract")
BINOP(tensor_mul, MUL, "multiply")
BINOP(tensor_idiv, FLOORDIV, "floordiv")
BINOP(tensor_mod, FLOORMOD, "floormod")
BINOP(tensor_pow, POW, "pow")

static int is_bool_operand(lua_State *L) {
    ltf_tensor *a = ltfL_testtensor(L, 1), *b = ltfL_testtensor(L, 2);
    return (a && ltf_tensor_dtype(a) == LTF_DTYPE_BOOL) || (b && ltf_tensor_dtype(b) == LTF_DTYPE_BOOL);
}
static int tensor_band(lua_State *L) {
    return is_bool_operand(L) ? binop(L, LTF_OP_LOGICAL_AND, "logical_and") : binop(L, LTF_OP_BITWISE_AND, "bitwise_and");
}
static int tensor_bor(lua_State *L) {
    return is_bool_operand(L) ? binop(L, LTF_OP_LOGICAL_OR, "logical_or") : binop(L, LTF_OP_BITWISE_OR, "bitwise_or");
}
static int tensor_bxor(lua_State *L) {
    return is_bool_operand(L) ? binop(L, LTF_OP_LOGICAL_XOR, "logical_xor") : binop(L, LTF_OP_BITWISE_XOR, "bitwise_xor");
}
BINOP(tensor_shl, LEFT_SHIFT, "left_shift")
BINOP(tensor_shr, RIGHT_SHIFT, "right_shift")

/* __div: true division; integer tensors divide as floating point
** (int32/int64 -> float64, uint8 -> float32), as TensorFlow's truediv. */
int ltfL_truediv(lua_State *L) {
    ltf_tensor *a = ltfL_testtensor(L, 1), *b = ltfL_testtensor(L, 2);
    if (!a) a = ltfL_fromobject(L, 1);
    if (!b) b = ltfL_fromobject(L, 2);
    int like = a ? (int)ltf_tensor_dtype(a) : (b ? (int)ltf_tensor_dtype(b) : -1);
    if (!a) a = ltfL_totensor(L, 1, like, "divide", "x");
    if (!b) b = ltfL_totensor(L, 2, like, "divide", "y");
    ltf_dtype da = ltf_tensor_dtype(a), db = ltf_tensor_dtype(b);
    if (da != db)
        return ltfL_raisef(L, LTF_ERR_TYPE, "divide: x and y must have the same dtype, got x: %s and y: %s (use tf.cast)",
                           ltf_dtype_name(da), ltf_dtype_name(db));
    if (da == LTF_DTYPE_INT32 || da == LTF_DTYPE_INT64 || da == LTF_DTYPE_UINT8) {
        ltf_attrs at;
        ltf_attrs_init(&at);
        at.i[0] = da == LTF_DTYPE_UINT8 ? LTF_DTYPE_FLOAT32 : LTF_DTYPE_FLOAT64;
        ltfL_run1(L, LTF_OP_CAST, &a, 1, &at);
        a = ltfL_testtensor(L, -1);
        ltfL_run1(L, LTF_OP_CAST, &b, 1, &at);
        b = ltfL_testtensor(L, -1);
    }
    ltf_tensor *in[2] = { a, b };
    return ltfL_run1(L, LTF_OP_DIV, in, 2, NULL);
}

static int tensor_unm(lua_State *L) {
    ltf_tensor *a = ltfL_checktensor(L, 1, "negative", "x");
    return ltfL_run1(L, LTF_OP_NEG, &a, 1, NULL);
}

static int tensor_bnot(lua_State *L) {
    ltf_tensor *a = ltfL_checktensor(L, 1, "invert", "x");
    return ltfL_run1(L, ltf_tensor_dtype(a) == LTF_DTYPE_BOOL ? LTF_OP_LOGICAL_NOT : LTF_OP_INVERT, &a, 1, NULL);
}

static int tensor_concat(lua_State *L) {
    ltf_tensor *a = ltfL_testtensor(L, 1), *b = ltfL_testtensor(L, 2);
    if (!a) a = ltfL_totensor(L, 1, LTF_DTYPE_STRING, "string add", "x");
    if (!b) b = ltfL_totensor(L, 2, LTF_DTYPE_STRING, "string add", "y");
    if (ltf_tensor_dtype(a) != LTF_DTYPE_STRING || ltf_tensor_dtype(b) != LTF_DTYPE_STRING)
        return ltfL_raisef(L, LTF_ERR_TYPE, "..: concatenation needs string tensors, got %s and %s",
                           ltf_dtype_name(ltf_tensor_dtype(a)), ltf_dtype_name(ltf_tensor_dtype(b)));
    ltf_tensor *in[2] = { a, b };
    return ltfL_run1(L, LTF_OP_ADD, in, 2, NULL);
}

/* The error for a symbolic tensor where Lua needs a boolean: Lua turns
** '==', '<' and '<=' results into booleans, which a graph value does not have. */
static int symbolic_bool(lua_State *L, const char *sym, const char *fn) {
    return ltfL_raisef(L, LTF_ERR_TYPE,
                       "%s: a symbolic tensor cannot be used as a Lua boolean while tracing; use tf.%s(x, y) for "
                       "the tensor, and tf.cond / tf.while_loop (or autograph) for control flow", sym, fn);
}

/* Runs comparison 'op' on two tensors; the boolean result tensor (a new
** reference) or a raise. Inside a trace even concrete operands give a
** graph value: that is an error, not a read of its (absent) data. */
static ltf_tensor *compare(lua_State *L, ltf_op_id op, ltf_tensor *a, ltf_tensor *b, const char *sym, const char *fn) {
    if (ltf_tensor_is_symbolic(a) || ltf_tensor_is_symbolic(b)) symbolic_bool(L, sym, fn);
    ltf_tensor *in[2] = { a, b };
    ltf_tensor *o = NULL;
    int n;
    ltf_status st = ltf_op_run(ltfL_ctx(L), op, in, 2, NULL, &o, 1, &n);
    if (st != LTF_OK) ltfL_raisectx(L, st);
    if (ltf_tensor_is_symbolic(o)) {
        ltf_tensor_release(o);
        symbolic_bool(L, sym, fn);
    }
    return o;
}

/* ==: whole-value equality of two eager tensors (same dtype, shape, values). */
static int tensor_eq(lua_State *L) {
    ltf_tensor *a = ltfL_testtensor(L, 1), *b = ltfL_testtensor(L, 2);
    if (!a || !b) {
        lua_pushboolean(L, 0);
        return 1;
    }
    if (ltf_tensor_is_symbolic(a) || ltf_tensor_is_symbolic(b)) return symbolic_bool(L, "==", "equal");
    int eq = ltf_tensor_dtype(a) == ltf_tensor_dtype(b) && ltf_tensor_rank(a) == ltf_tensor_rank(b);
    for (int i = 0; eq && i < ltf_tensor_rank(a); i++) eq = ltf_tensor_dims(a)[i] == ltf_tensor_dims(b)[i];
    if (eq && ltf_tensor_dtype(a) == LTF_DTYPE_RESOURCE) {
        eq = ltf_tensor_data(a) == ltf_tensor_data(b);   /* the same handle, not copies of its bytes */
    } else if (eq) {
        ltf_tensor *o = compare(L, LTF_OP_EQUAL, a, b, "==", "equal");
        ltf_tensor *h = host_ref(L, o, o);
        ltf_tensor_release(o);
        const uint8_t *p = ltf_tensor_data(h);
        for (int64_t i = 0; eq && i < ltf_tensor_num_elements(h); i++) eq = p[i];
        ltf_tensor_release(h);
    }
    lua_pushboolean(L, eq);
    return 1;
}

static int scalar_compare(lua_State *L, ltf_op_id op, const char *sym) {
    const char *fn = op == LTF_OP_LESS ? "less" : "less_equal";
    ltf_tensor *a = ltfL_testtensor(L, 1), *b = ltfL_testtensor(L, 2);
    if (!a && !b)   /* reachable as tf.Tensor.__lt(1, 2) */
        return ltfL_raisef(L, LTF_ERR_TYPE, "%s: expected a tensor operand, got %s and %s", sym, luaL_typename(L, 1),
                           luaL_typename(L, 2));
    int like = a ? (int)ltf_tensor_dtype(a) : (int)ltf_tensor_dtype(b);
    if (!a) a = ltfL_totensor(L, 1, like, sym, "x");
    if (!b) b = ltfL_totensor(L, 2, like, sym, "y");
    if (ltf_tensor_is_symbolic(a) || ltf_tensor_is_symbolic(b)) return symbolic_bool(L, sym, fn);
    if (ltf_tensor_num_elements(a) != 1 || ltf_tensor_num_elements(b) != 1 || ltf_tensor_rank(a) > 0 || ltf_tensor_rank(b) > 0)
        return ltfL_raisef(L, LTF_ERR_TYPE,
                           "%s: the operator compares scalar tensors only; use tf.%s(x, y) or x:%s(y) for an elementwise comparison",
                           sym, fn, op == LTF_OP_LESS ? "lt" : "le");
    ltf_tensor *o = compare(L, op, a, b, sym, fn);
    ltf_tensor *h = host_ref(L, o, o);
    ltf_tensor_release(o);
    int r = *(const uint8_t *)ltf_tensor_data(h);
    ltf_tensor_release(h);
    lua_pushboolean(L, r);
    return 1;
}
static int tensor_lt(lua_State *L) { return scalar_compare(L, LTF_OP_LESS, "<"); }
static int tensor_le(lua_State *L) { return scalar_compare(L, LTF_OP_LESS_EQUAL, "<="); }
/* }==== */

/* {==== tf.constant / tf.convert_to_tensor */
/* tf.constant(value [, dtype [, shape]]) or tf.constant(value, {dtype=, shape=}) */
static int tensor_constant(lua_State *L) {
    int dt = -1, has_shape = 0, shape_idx = 0;
    int64_t dims[LTF_MAX_RANK];
    int rank = 0;
    if (lua_istable(L, 2) && lua_getfield(L, 2, "enum") == LUA_TNIL) {
        lua_pop(L, 1);
        static const char *const keys[] = { "dtype", "shape", "name", NULL };
        ltfL_checkkeys(L, 2, "constant", keys);
        ltfL_getkw(L, 2, "dtype");
        dt = lua_isnil(L, -1) ? -1 : ltfL_checkdtype(L, lua_gettop(L), "constant", "dtype", -1);
        ltfL_getkw(L, 2, "shape");
        if (!lua_isnil(L, -1)) { has_shape = 1; shape_idx = lua_gettop(L); }
    } else {
        if (lua_istable(L, 2)) lua_pop(L, 1);
        if (!lua_isnoneornil(L, 2)) dt = ltfL_checkdtype(L, 2, "constant", "dtype", -1);
        if (!lua_isnoneornil(L, 3)) { has_shape = 1; shape_idx = 3; }
    }
    if (has_shape) rank = ltfL_checkintlist(L, shape_idx, "constant", "shape", dims, LTF_MAX_RANK, 0);
    ltf_tensor *t = ltfL_testtensor(L, 1);
    if (t) {
        if (dt >= 0 && dt != (int)ltf_tensor_dtype(t)) {
            ltf_attrs at;
            ltf_attrs_init(&at);
            at.i[0] = dt;
            ltfL_run1(L, LTF_OP_CAST, &t, 1, &at);
        } else {
            ltfL_run1(L, LTF_OP_IDENTITY, &t, 1, NULL);
        }
    } else {
        convert_value(L, 1, dt, "constant", "value");
    }
    if (!has_shape) return 1;
    ltf_tensor *v = ltfL_testtensor(L, -1);
    int64_t want = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "constant: 'shape' entry %d is %lld, must be >= 0", i + 1,
                               (long long)dims[i]);
        if (__builtin_mul_overflow(want, dims[i], &want))
            return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "constant: 'shape' has more than 2^63 elements");
    }
    if (ltf_tensor_num_elements(v) == want) {
        ltf_attrs at;
        ltf_attrs_init(&at);
        at.nints = rank;
        for (int i = 0; i < rank; i++) at.ints[i] = dims[i];
        return ltfL_run1(L, LTF_OP_RESHAPE, &v, 1, &at);
    }
    if (ltf_tensor_num_elements(v) == 1) {
        ltf_attrs at;
        ltf_attrs_init(&at);
        at.nints = rank;
        for (int i = 0; i < rank; i++) at.ints[i] = dims[i];
        return ltfL_run1(L, LTF_OP_BROADCAST_TO, &v, 1, &at);
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%lld", (long long)ltf_tensor_num_elements(v));
    return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT,
                       "constant: value has %s elements, which does not fit shape with %lld elements", buf, (long long)want);
}

/* tf.convert_to_tensor(value [, dtype]): tensors pass through unchanged. */
static int tensor_convert(lua_State *L) {
    ltf_tensor *t = ltfL_testtensor(L, 1);
    int dt = lua_isnoneornil(L, 2) ? -1 : ltfL_checkdtype(L, 2, "convert_to_tensor", "dtype", -1);
    if (t) {
        if (dt >= 0 && dt != (int)ltf_tensor_dtype(t))
            return ltfL_raisef(L, LTF_ERR_VALUE, "convert_to_tensor: requested dtype %s for a %s tensor (use tf.cast)",
                               ltf_dtype_name((ltf_dtype)dt), ltf_dtype_name(ltf_tensor_dtype(t)));
        lua_settop(L, 1);
        return 1;
    }
    lua_settop(L, 2);
    return tensor_constant(L);
}
/* }==== */

static const luaL_Reg tensor_meta[] = {
    {"__index", tensor_index},
    {"__newindex", tensor_newindex},
    {"__gc", tensor_gc},
    {"__close", tensor_gc},
    {"__len", tensor_len},
    {"__add", tensor_add},
    {"__sub", tensor_sub},
    {"__mul", tensor_mul},
    {"__div", ltfL_truediv},
    {"__idiv", tensor_idiv},
    {"__mod", tensor_mod},
    {"__pow", tensor_pow},
    {"__unm", tensor_unm},
    {"__band", tensor_band},
    {"__bor", tensor_bor},
    {"__bxor", tensor_bxor},
    {"__shl", tensor_shl},
    {"__shr", tensor_shr},
    {"__bnot", tensor_bnot},
    {"__concat", tensor_concat},
    {"__eq", tensor_eq},
    {"__lt", tensor_lt},
    {"__le", tensor_le},
    {NULL, NULL}
};

static const luaL_Reg tensor_methods[] = {
    {"free", tensor_free},
    {"totable", tensor_totable},
    {"numpy", tensor_totable},
    {"item", tensor_item},
    {"_flat", tensor_flat},
    {"_dims", tensor_dims},
    {"_dtype_id", tensor_dtype_id},
    {"is_symbolic", tensor_is_symbolic},
    {NULL, NULL}
};

static const luaL_Reg tensor_getters[] = {
    {"rank", tensor_rank},
    {"ndim", tensor_rank},
    {"device", tensor_device},
    {NULL, NULL}
};

static const luaL_Reg tensor_fns[] = {
    {"constant", tensor_constant},
    {"convert_to_tensor", tensor_convert},
    {"is_tensor", tensor_is_tensor},
    {NULL, NULL}
};

void ltfL_open_tensor(lua_State *L) {
    int mod = lua_gettop(L);
    luaL_getmetatable(L, LTFL_TENSOR);
    int mt = lua_gettop(L);
    lua_newtable(L);                    /* [1] methods */
    lua_newtable(L);                    /* [2] getters */
    /* functions of the three tables get the shared upvalues */
    lua_getfield(L, LUA_REGISTRYINDEX, "tf.state");
    lua_pushvalue(L, mt);
    luaL_setfuncs(L, tensor_getters, 2);
    lua_rawseti(L, mt, 2);
    lua_getfield(L, LUA_REGISTRYINDEX, "tf.state");
    lua_pushvalue(L, mt);
    luaL_setfuncs(L, tensor_methods, 2);
    lua_rawseti(L, mt, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, "tf.state");
    lua_pushvalue(L, mt);
    luaL_setfuncs(L, tensor_meta, 2);
    lua_pushliteral(L, LTFL_TENSOR);
    lua_setfield(L, mt, "__name");
    lua_pushvalue(L, mt);
    lua_setfield(L, mod, "Tensor");
    lua_settop(L, mod);
    ltfL_register(L, tensor_fns, NULL);
}
