/*
** autodiff.c: Lua bindings of gradient tapes (tf.Tape userdata) and of
** custom gradients. The Lua class tf.GradientTape (lua/tf/gradient_tape.lua)
** builds the TensorFlow API on these.
*/
#include <stdio.h>
#include <stdlib.h>
#include "ltfL.h"

#define LTFL_TAPE "tf.Tape"

typedef struct tape_box {
    ltf_tape *tape;
} tape_box;

static ltf_tape *checktape(lua_State *L, int idx) {
    tape_box *b = luaL_testudata(L, idx, LTFL_TAPE);
    if (!b) ltfL_argerror(L, idx, "GradientTape", "tape", "tape");
    if (!b->tape) ltfL_raise(L, LTF_ERR_VALUE, "GradientTape: the tape was released");
    return b->tape;
}

/* Drop registry refs that finalizers queued (see custom_free). */
static void drain_refs(lua_State *L) {
    ltfL_state *s = ltfL_S(L);
    for (int i = 0; i < s->ndead; i++) luaL_unref(L, LUA_REGISTRYINDEX, s->dead_refs[i]);
    s->ndead = 0;
}

static int tape_gc(lua_State *L) {
    tape_box *b = luaL_testudata(L, 1, LTFL_TAPE);
    if (b && b->tape) {
        ltf_tape_release(b->tape);
        b->tape = NULL;
    }
    return 0;
}

/* core.tape_new(persistent, watch_accessed_variables) */
static int ad_tape_new(lua_State *L) {
    int persistent = lua_toboolean(L, 1);
    int watch = lua_isnoneornil(L, 2) ? 1 : lua_toboolean(L, 2);
    tape_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->tape = NULL;
    luaL_setmetatable(L, LTFL_TAPE);
    b->tape = ltf_tape_new(ltfL_ctx(L), persistent, watch);
    if (!b->tape) return ltfL_raisectx(L, LTF_ERR_RESOURCE_EXHAUSTED);
    return 1;
}

static int ad_tape_push(lua_State *L) {
    ltf_status st = ltf_tape_push(ltfL_ctx(L), checktape(L, 1));
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

static int ad_tape_pop(lua_State *L) {
    ltf_tape_pop(ltfL_ctx(L), checktape(L, 1));
    return 0;
}

static int ad_tape_recording(lua_State *L) {
    lua_pushboolean(L, ltf_tape_is_recording(checktape(L, 1)));
    return 1;
}

static int ad_tape_watch(lua_State *L) {
    ltf_tape *t = checktape(L, 1);
    ltf_tensor *x = ltfL_checktensor(L, 2, "watch", "tensor");
    ltf_status st = ltf_tape_watch(ltfL_ctx(L), t, x);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

static int ad_tape_is_watched(lua_State *L) {
    ltf_tape *t = checktape(L, 1);
    lua_pushboolean(L, ltf_tape_is_watched(t, ltfL_checktensor(L, 2, "watch", "tensor")));
    return 1;
}

/* core.tapes_track(t): a recording tape can compute t's gradient */
static int ad_tapes_track(lua_State *L) {
    lua_pushboolean(L, ltf_tapes_track(ltfL_ctx(L), ltfL_checktensor(L, 1, "tapes_track", "tensor")));
    return 1;
}

static int ad_tape_reset(lua_State *L) {
    ltf_status st = ltf_tape_reset(ltfL_ctx(L), checktape(L, 1));
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

static int ad_tape_mark_used(lua_State *L) {
    ltf_status st = ltf_tape_mark_used(ltfL_ctx(L), checktape(L, 1));
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

static int ad_pause(lua_State *L) {
    ltf_ctx_pause_tapes(ltfL_ctx(L), lua_toboolean(L, 1));
    return 0;
}

/* core.tape_gradient(tape, targets, sources, output_gradients|nil, flags) -> array (nil holes),
** and the first op that gave no gradient on a path from a source (ltf_tape_gradient_stop) or nil */
static int ad_tape_gradient(lua_State *L) {
    ltf_tape *t = checktape(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    int nt = ltfL_checkcount(L, 2, "gradient", "targets"), ns = ltfL_checkcount(L, 3, "gradient", "sources");
    int flags = (int)luaL_optinteger(L, 5, 0);
    luaL_checkstack(L, 2 * nt + ns + 8, "gradient");
    ltf_tensor **targets = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)(nt + 1), 0);
    ltf_tensor **ograds = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)(nt + 1), 0);
    ltf_tensor **sources = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)(ns + 1), 0);
    ltf_tensor **result = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)(ns + 1), 0);
    for (int i = 0; i < nt; i++) {
        lua_geti(L, 2, i + 1);
        targets[i] = ltfL_checktensor(L, lua_gettop(L), "gradient", "target");
        ograds[i] = NULL;
        if (lua_istable(L, 4)) {
            lua_geti(L, 4, i + 1);
            if (!lua_isnil(L, -1)) ograds[i] = ltfL_totensor(L, lua_gettop(L), (int)ltf_tensor_dtype(targets[i]), "gradient", "output_gradients");
        }
    }
    for (int i = 0; i < ns; i++) {
        lua_geti(L, 3, i + 1);
        sources[i] = ltfL_checktensor(L, lua_gettop(L), "gradient", "source");
    }
    ltfL_state *s = ltfL_S(L);
    lua_State *saved = s->L;
    s->L = L;
    ltf_status st = ltf_tape_gradient(ltfL_ctx(L), t, targets, nt, ograds, sources, ns, flags, result);
    s->L = saved;
    drain_refs(L);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    lua_createtable(L, ns, 1);
    int res = lua_gettop(L);
    for (int i = 0; i < ns; i++) {       /* box them all before anything can raise */
        if (!result[i]) continue;
        ltfL_box *b = ltfL_newbox(L);
        b->t = result[i];
        result[i] = NULL;
        lua_rawseti(L, res, i + 1);
    }
    lua_pushinteger(L, ns);
    lua_setfield(L, res, "n");
    const char *stop = ltf_tape_gradient_stop(t);
    if (*stop) lua_pushstring(L, stop); else lua_pushnil(L);
    return 2;
}

/* {==== Custom gradients */
typedef struct custom_ud {
    ltfL_state *S;
    int ref;                  /* registry ref of the Lua gradient function */
} custom_ud;

static void custom_free(void *p) {
    custom_ud *u = p;
    ltfL_state *s = u->S;
    if (s->ndead == s->capdead) {
        int cap = s->capdead ? s->capdead * 2 : 16;
        int *n = realloc(s->dead_refs, sizeof(int) * (size_t)cap);
        if (n) {
            s->dead_refs = n;
            s->capdead = cap;
        }
    }
    if (s->ndead < s->capdead) s->dead_refs[s->ndead++] = u->ref;
    free(u);
}

/* Calls the Lua gradient function with the output gradients (nil for
** zero) and takes one gradient per input from its results. */
static ltf_status custom_call(ltf_ctx *ctx, void *p, ltf_tensor *const *dout, int nout, ltf_tensor **din, int nin) {
    custom_ud *u = p;
    lua_State *L = u->S->L;
    if (!L) return LTF_ERR_INTERNAL;
    int top = lua_gettop(L);
    if (!lua_checkstack(L, nout + nin + 4)) return LTF_ERR_RESOURCE_EXHAUSTED;
    lua_rawgeti(L, LUA_REGISTRYINDEX, u->ref);
    for (int i = 0; i < nout; i++) {
        if (dout[i]) {
            ltfL_box *b = lua_newuserdatauv(L, sizeof *b, 0);
            b->t = ltf_tensor_retain(dout[i]);
            luaL_setmetatable(L, LTFL_TENSOR);
        } else {
            lua_pushnil(L);
        }
    }
    if (lua_pcall(L, nout, 1, 0) != LUA_OK) {
        /* keep the kind of an error object raised by the gradient function */
        const char *msg;
        ltf_status kind = LTF_ERR_INTERNAL;
        if (lua_istable(L, -1)) {
            lua_getfield(L, -1, "kind");
            kind = ltfL_status_of_kind(lua_tostring(L, -1));
            lua_getfield(L, -2, "message");
            msg = lua_tostring(L, -1);
        } else {
            msg = lua_tostring(L, -1);
        }
        char buf[900];
        snprintf(buf, sizeof buf, "%s", msg ? msg : "error in a custom gradient function");
        lua_settop(L, top);
        return ltf_ctx_set_error(ctx, kind, buf);
    }
    /* one result: a table of input gradients (Lua side normalizes) */
    int res = lua_gettop(L);
    for (int i = 0; i < nin; i++) {
        lua_geti(L, res, i + 1);
        ltfL_box *b = lua_touserdata(L, -1);
        int ok = b && lua_getmetatable(L, -1);
        if (ok) {
            luaL_getmetatable(L, LTFL_TENSOR);
            ok = lua_rawequal(L, -1, -2) && b->t;
            lua_pop(L, 2);
        }
        din[i] = ok ? ltf_tensor_retain(b->t) : NULL;
        lua_pop(L, 1);
    }
    lua_settop(L, top);
    return LTF_OK;
}

/* core.record_custom(inputs, outputs, grad_fn): grad_fn(dy1, ..., dyn) returns
** an array with one gradient (or nil) per input. */
static int ad_record_custom(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TFUNCTION);
    drain_refs(L);
    int nin = ltfL_checkcount(L, 1, "custom_gradient", "inputs");
    int nout = ltfL_checkcount(L, 2, "custom_gradient", "outputs");
    luaL_checkstack(L, nin + nout + 8, "custom_gradient");
    ltf_tensor **in = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)(nin + nout + 1), 0);
    ltf_tensor **out = in + nin;
    for (int i = 0; i < nin; i++) {
        lua_geti(L, 1, i + 1);
        in[i] = ltfL_checktensor(L, lua_gettop(L), "custom_gradient", "input");
    }
    for (int i = 0; i < nout; i++) {
        lua_geti(L, 2, i + 1);
        out[i] = ltfL_checktensor(L, lua_gettop(L), "custom_gradient", "output");
    }
    custom_ud *u = malloc(sizeof *u);
    if (!u) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "custom_gradient: out of memory");
    u->S = ltfL_S(L);
    lua_pushvalue(L, 3);
    u->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    ltf_status st = ltf_tape_record_custom(ltfL_ctx(L), in, nin, out, nout, custom_call, u, custom_free);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}
/* }==== */

static const luaL_Reg ad_fns[] = {
    {"tape_new", ad_tape_new},
    {"tape_push", ad_tape_push},
    {"tape_pop", ad_tape_pop},
    {"tape_recording", ad_tape_recording},
    {"tape_watch", ad_tape_watch},
    {"tape_is_watched", ad_tape_is_watched},
    {"tapes_track", ad_tapes_track},
    {"tape_reset", ad_tape_reset},
    {"tape_mark_used", ad_tape_mark_used},
    {"tape_gradient", ad_tape_gradient},
    {"pause_tapes", ad_pause},
    {"record_custom", ad_record_custom},
    {NULL, NULL}
};

void ltfL_open_autodiff(lua_State *L) {
    luaL_newmetatable(L, LTFL_TAPE);
    lua_pushcfunction(L, tape_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    ltfL_register(L, ad_fns, LTFL_INTERNAL);
}
