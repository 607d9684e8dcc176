/*
** graph.c: Lua bindings of traced graphs (the tf.Graph userdata). The
** polymorphic function, trace types and signatures are Lua
** (lua/tf/fn.lua, lua/tf/trace_type.lua); this file starts and ends traces,
** makes placeholders, replays finished graphs, and lists their nodes.
*/
#include <stdio.h>
#include <string.h>
#include "ltfL.h"

#define LTFL_GRAPH "tf.Graph"

typedef struct graph_box {
    ltf_graph *g;
} graph_box;

static graph_box *checkgraph(lua_State *L, int idx) {
    graph_box *b = luaL_testudata(L, idx, LTFL_GRAPH);
    if (!b || !b->g) ltfL_argerror(L, idx, "graph", "graph", "graph");
    return b;
}

static int graph_gc(lua_State *L) {
    graph_box *b = luaL_testudata(L, 1, LTFL_GRAPH);
    if (b && b->g) {
        ltf_graph_release(b->g);   /* a graph still tracing leaves the stack of traces */
        b->g = NULL;
    }
    return 0;
}

/* core.graph_begin(name [, capture]) -> graph (tracing starts: ops add
** nodes); with 'capture', a function of a control-flow op: symbolic tensors
** of the enclosing traces become inputs (core.graph_captured) */
static int gr_begin(lua_State *L) {
    const char *name = luaL_optstring(L, 1, "graph");
    int capture = lua_toboolean(L, 2);
    graph_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->g = NULL;
    luaL_setmetatable(L, LTFL_GRAPH);
    b->g = capture ? ltf_graph_begin_function(ltfL_ctx(L), name) : ltf_graph_begin(ltfL_ctx(L), name);
    if (!b->g) return ltfL_raisectx(L, LTF_ERR_RESOURCE_EXHAUSTED);
    return 1;
}

/* core.graph_placeholder(graph, dtype, dims|nil, name) -> symbolic tensor */
static int gr_placeholder(lua_State *L) {
    graph_box *b = checkgraph(L, 1);
    int dt = ltfL_checkdtype(L, 2, "placeholder", "dtype", -1);
    int64_t dims[LTF_MAX_RANK];
    int rank = -1;
    if (!lua_isnil(L, 3)) rank = ltfL_checkintlist(L, 3, "placeholder", "shape", dims, LTF_MAX_RANK, 0);
    const char *name = luaL_optstring(L, 4, "input");
    ltfL_box *box = ltfL_newbox(L);
    ltf_tensor *t = ltf_graph_placeholder(ltfL_ctx(L), b->g, (ltf_dtype)dt, rank, dims, name);
    if (!t) return ltfL_raisectx(L, LTF_ERR_INVALID_ARGUMENT);
    box->t = t;
    return 1;
}

/* core.graph_end(graph, outputs) : outputs is an array of tensors */
static int gr_end(lua_State *L) {
    graph_box *b = checkgraph(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    int n = ltfL_checkcount(L, 2, "graph_end", "outputs");
    luaL_checkstack(L, n + 4, "graph_end");
    ltf_tensor **outs = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)(n + 1), 0);
    for (int i = 0; i < n; i++) {
        lua_geti(L, 2, i + 1);
        outs[i] = ltfL_totensor(L, lua_gettop(L), -1, "tf.fn", "output");
    }
    ltfL_state *s = ltfL_S(L);
    lua_State *saved = s->L;
    s->L = L;
    ltf_status st = ltf_graph_end(ltfL_ctx(L), b->g, outs, n);
    s->L = saved;
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

static int gr_abort(lua_State *L) {
    graph_box *b = checkgraph(L, 1);
    ltf_graph_abort(ltfL_ctx(L), b->g);
    return 0;
}

/* core.graph_run(graph, x1, ..., xn) -> outputs as multiple values */
static int run_graph(lua_State *L, int paused) {
    graph_box *b = checkgraph(L, 1);
    int nin = lua_gettop(L) - 1;
    ltf_tensor *in_stack[16];
    ltf_tensor **in = in_stack;
    if (nin > 16) in = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)nin, 0);
    for (int i = 0; i < nin; i++) in[i] = ltfL_checktensor(L, i + 2, "graph_run", "input");
    int nout_max = ltf_graph_num_outputs(b->g);
    ltf_tensor *out_stack[16];
    ltf_tensor **out = out_stack;
    if (nout_max > 16) out = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)nout_max, 0);
    luaL_checkstack(L, nout_max + 4, "graph_run");
    ltfL_state *s = ltfL_S(L);
    lua_State *saved = s->L;
    s->L = L;
    int n = 0;
    if (paused) ltf_ctx_pause_tapes(ltfL_ctx(L), 1);
    ltf_status st = ltf_graph_run(ltfL_ctx(L), b->g, in, nin, out, nout_max, &n);
    if (paused) ltf_ctx_pause_tapes(ltfL_ctx(L), 0);
    s->L = saved;
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    for (int i = 0; i < n; i++) ltfL_pushtensor(L, out[i]);
    return n;
}

static int gr_run(lua_State *L) { return run_graph(L, 0); }

static int gr_is_tracing(lua_State *L) {
    lua_pushboolean(L, ltf_graph_current(ltfL_ctx(L)) != NULL);
    return 1;
}

static void push_type(lua_State *L, const ltf_graph *g, int i, int k) {
    ltf_dtype dt;
    int64_t dims[LTF_MAX_RANK];
    int rank = ltf_graph_node_output_type(g, i, k, &dt, dims);
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, dt);
    lua_setfield(L, -2, "dtype");
    if (rank >= 0) {
        lua_createtable(L, rank, 0);
        for (int d = 0; d < rank; d++) {
            lua_pushinteger(L, dims[d]);
            lua_rawseti(L, -2, d + 1);
        }
        lua_setfield(L, -2, "shape");
    }
}

/* core.graph_nodes(graph, all) -> array of {name=, op=, inputs={"n:0", ...}, outputs={types}, live=,
** stateful=} (live nodes unless 'all') */
static int gr_nodes(lua_State *L) {
    graph_box *b = checkgraph(L, 1);
    int all = lua_toboolean(L, 2);
    const ltf_graph *g = b->g;
    lua_newtable(L);
    int n = 0;
    for (int i = 0; i < ltf_graph_num_nodes(g); i++) {
        if (!all && !ltf_graph_node_live(g, i)) continue;
        lua_createtable(L, 0, 4);
        lua_pushstring(L, ltf_graph_node_name(g, i));
        lua_setfield(L, -2, "name");
        lua_pushstring(L, ltf_graph_node_op(g, i));
        lua_setfield(L, -2, "op");
        lua_pushboolean(L, ltf_graph_node_live(g, i));
        lua_setfield(L, -2, "live");
        if (ltf_graph_node_fused(g, i)) {   /* fused group id: members run as one loop */
            lua_pushinteger(L, ltf_graph_node_fused(g, i));
            lua_setfield(L, -2, "fused");
        }
        int ordinal, dev = ltf_graph_node_device(g, i, &ordinal);
        if (dev >= 0) {   /* placed: TensorFlow's full device name */
            lua_pushfstring(L, "/job:localhost/replica:0/task:0/device:%s:%d", dev == LTF_DEVICE_CPU ? "CPU" : "GPU",
                            ordinal);
            lua_setfield(L, -2, "device");
        }
        lua_pushboolean(L, ltf_graph_node_is_stateful(g, i));
        lua_setfield(L, -2, "stateful");
        if (ltf_graph_node_function(g, i, 0)) {   /* control flow: the graphs it runs */
            lua_createtable(L, 2, 0);
            for (int k = 0; k < 2; k++) {
                ltf_graph *f = ltf_graph_node_function(g, i, k);
                if (!f) break;
                graph_box *fb = lua_newuserdatauv(L, sizeof *fb, 0);
                fb->g = ltf_graph_retain(f);
                luaL_setmetatable(L, LTFL_GRAPH);
                lua_rawseti(L, -2, k + 1);
            }
            lua_setfield(L, -2, "functions");
        }
        int nin = ltf_graph_node_num_inputs(g, i);
        lua_createtable(L, nin, 0);
        for (int k = 0; k < nin; k++) {
            int out;
            int src = ltf_graph_node_input(g, i, k, &out);
            lua_pushfstring(L, "%s:%d", ltf_graph_node_name(g, src), out);
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, -2, "inputs");
        int nout = ltf_graph_node_num_outputs(g, i);
        lua_createtable(L, nout, 0);
        for (int k = 0; k < nout; k++) {
            push_type(L, g, i, k);
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, -2, "outputs");
        lua_rawseti(L, -2, ++n);
    }
    return 1;
}

/* core.graph_signature(graph) -> inputs {types}, outputs {types} */
static int gr_signature(lua_State *L) {
    graph_box *b = checkgraph(L, 1);
    const ltf_graph *g = b->g;
    lua_newtable(L);
    int ni = 0;
    for (int i = 0; i < ltf_graph_num_nodes(g); i++)
        if (strcmp(ltf_graph_node_op(g, i), "Placeholder") == 0) {
            push_type(L, g, i, 0);
            lua_pushstring(L, ltf_graph_node_name(g, i));
            lua_setfield(L, -2, "name");
            lua_rawseti(L, -2, ++ni);
        }
    lua_newtable(L);
    for (int k = 0; k < ltf_graph_num_outputs(g); k++) {
        int out;
        int node = ltf_graph_output(g, k, &out);
        push_type(L, g, node, out);
        lua_rawseti(L, -2, k + 1);
    }
    return 2;
}

/* core.symbolic_name(t) -> "add:0" for a symbolic tensor, nil otherwise */
static int gr_symbolic_name(lua_State *L) {
    ltf_tensor *t = ltfL_checktensor(L, 1, "name", "self");
    ltf_graph *g;
    int out;
    int node = ltf_tensor_node(t, &g, &out);
    if (node < 0) lua_pushnil(L);
    else lua_pushfstring(L, "%s:%d", ltf_graph_node_name(g, node), out);
    return 1;
}

/* core.graph_run_paused(graph, x1, ..., xn): graph_run with every tape
** paused, so that the plan runs even while a tape records (tf.fn then
** records one custom-gradient entry for the whole call). */
static int gr_run_paused(lua_State *L) { return run_graph(L, 1); }

/* decimal text of a non-negative 'v' at 'out' (no terminator); returns its length */
static size_t put_int(char *out, int64_t v) {
    char tmp[24];
    size_t n = 0;
    uint64_t u = (uint64_t)v;
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    for (size_t i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

static void append(char *buf, size_t *len, size_t cap, const char *s, size_t n) {
    if (*len + n < cap) memcpy(buf + *len, s, n);
    *len += n;
}

/* core.trace_key(...) -> key|nil, mode, has_objects. The memo key of a
** call whose arguments are tensors, numbers, booleans, nil, short strings,
** variables or objects (identity), built in one pass; nil when some
** argument needs lua/tf/trace_type.lua (plain tables, __tf_tracing_type
** objects, symbolic tensors, long strings). 'mode' is how graph_run would run
** now: 0 plan, 1 a tape records, 2 a graph is being traced. 'has_objects':
** the key holds object addresses, valid only while those objects live. */
static int gr_trace_key(lua_State *L) {
    int n = lua_gettop(L);
    lua_Integer mode = ltf_graph_run_mode(ltfL_ctx(L));
    char buf[256];
    size_t len = 0;
    char tmp[48];
    int ptr = 0;
    for (int i = 1; i <= n && len < sizeof buf; i++) {
        switch (lua_type(L, i)) {
        case LUA_TUSERDATA: {
            ltf_tensor *t = ltfL_testtensor(L, i);
            if (!t) {
                int k = snprintf(tmp, sizeof tmp, "P%p", lua_topointer(L, i));
                append(buf, &len, sizeof buf, tmp, (size_t)k);
                ptr = 1;
                break;
            }
            if (ltf_tensor_is_symbolic(t)) goto nokey;
            int rank = ltf_tensor_rank(t);
            const int64_t *dims = ltf_tensor_dims(t);
            /* 'T', dtype, dims: no snprintf on this path (it is most of a cached call) */
            if (len + 3 + (size_t)rank * 21 >= sizeof buf) goto nokey;
            buf[len++] = 'T';
            buf[len++] = (char)('0' + (int)ltf_tensor_dtype(t));
            buf[len++] = '(';
            for (int d = 0; d < rank; d++) {
                if (d) buf[len++] = ',';
                len += put_int(buf + len, dims[d]);
            }
            buf[len++] = ')';
            break;
        }
        case LUA_TNUMBER: {
            int k;
            if (lua_isinteger(L, i)) {
                k = snprintf(tmp, sizeof tmp, "i%lld", (long long)lua_tointeger(L, i));
            } else {
                lua_Number x = lua_tonumber(L, i);
                k = x != x ? snprintf(tmp, sizeof tmp, "fnan") : snprintf(tmp, sizeof tmp, "f%.17g", (double)x);
            }
            append(buf, &len, sizeof buf, tmp, (size_t)k);
            break;
        }
        case LUA_TBOOLEAN:
            append(buf, &len, sizeof buf, lua_toboolean(L, i) ? "b1" : "b0", 2);
            break;
        case LUA_TNIL:
            append(buf, &len, sizeof buf, "n", 1);
            break;
        case LUA_TSTRING: {
            size_t sl;
            const char *str = lua_tolstring(L, i, &sl);
            if (sl > 64) goto nokey;
            int k = snprintf(tmp, sizeof tmp, "s%d:", (int)sl);
            append(buf, &len, sizeof buf, tmp, (size_t)k);
            append(buf, &len, sizeof buf, str, sl);
            break;
        }
        case LUA_TTABLE: {
            /* a plain table is typed by its contents (Lua does that); an
            ** object by __tf_tracing_type (Lua too); a tf.Variable by its
            ** id; any other object by identity (the caller checks that the
            ** object recorded for the key is still alive) */
            if (!lua_getmetatable(L, i)) goto nokey;
            int custom = lua_getfield(L, -1, "__tf_tracing_type") != LUA_TNIL;
            lua_pop(L, 2);
            if (custom) goto nokey;
            lua_pushliteral(L, "_handle");
            lua_rawget(L, i);
            ltf_tensor *h = ltfL_testtensor(L, -1);
            lua_pop(L, 1);
            int k = h && ltf_tensor_dtype(h) == LTF_DTYPE_RESOURCE
                        ? snprintf(tmp, sizeof tmp, "V%lld", (long long)ltf_variable_id(h))
                        : snprintf(tmp, sizeof tmp, "P%p", lua_topointer(L, i));
            if (tmp[0] == 'P') ptr = 1;
            append(buf, &len, sizeof buf, tmp, (size_t)k);
            break;
        }
        case LUA_TFUNCTION:
        case LUA_TTHREAD:
        case LUA_TLIGHTUSERDATA: {
            int k = snprintf(tmp, sizeof tmp, "P%p", lua_topointer(L, i));
            append(buf, &len, sizeof buf, tmp, (size_t)k);
            ptr = 1;
            break;
        }
        default:
            goto nokey;
        }
        if (len < sizeof buf) buf[len++] = ';';
    }
    if (len >= sizeof buf) goto nokey;
    lua_pushlstring(L, buf, len);
    lua_pushinteger(L, mode);
    lua_pushboolean(L, ptr);
    return 3;
nokey:
    lua_pushnil(L);
    lua_pushinteger(L, mode);
    return 2;
}

/* core.graph_captures(graph) -> array of the variable handles the live
** nodes use (captured by reference: read and written at each call) */
static int gr_captures(lua_State *L) {
    graph_box *b = checkgraph(L, 1);
    const ltf_graph *g = b->g;
    lua_newtable(L);
    int n = 0;
    for (int i = 0; i < ltf_graph_num_nodes(g); i++) {
        ltf_tensor *v = ltf_graph_node_value(g, i);
        if (!v || !ltf_graph_node_live(g, i) || ltf_tensor_dtype(v) != LTF_DTYPE_RESOURCE) continue;
        ltfL_pushtensor(L, ltf_tensor_retain(v));
        lua_rawseti(L, -2, ++n);
    }
    return 1;
}

/* core.graph_consts(graph) -> array of the float tensors the graph captured
** as constants (eager tensors it reads: they may be a tape's sources) */
static int gr_consts(lua_State *L) {
    graph_box *b = checkgraph(L, 1);
    const ltf_graph *g = b->g;
    lua_newtable(L);
    int n = 0;
    for (int i = 0; i < ltf_graph_num_nodes(g); i++) {
        ltf_tensor *v = ltf_graph_node_value(g, i);
        if (!v || !ltf_graph_node_live(g, i)) continue;
        ltf_dtype dt = ltf_tensor_dtype(v);
        if (dt != LTF_DTYPE_FLOAT32 && dt != LTF_DTYPE_FLOAT64 && dt != LTF_DTYPE_FLOAT16 && dt != LTF_DTYPE_BFLOAT16)
            continue;
        ltfL_pushtensor(L, ltf_tensor_retain(v));
        lua_rawseti(L, -2, ++n);
    }
    return 1;
}

/* core.graph_captured(graph) -> array of the outer symbolic tensors a
** function graph captured, in the order of its extra inputs */
static int gr_captured(lua_State *L) {
    graph_box *b = checkgraph(L, 1);
    int n = ltf_graph_num_captured(b->g);
    lua_createtable(L, n, 0);
    for (int k = 0; k < n; k++) {
        ltf_tensor *t = ltf_graph_captured(b->g, k);
        if (!t) return ltfL_raise(L, LTF_ERR_FAILED_PRECONDITION, "graph_captured: a control-flow op took them already");
        ltfL_pushtensor(L, ltf_tensor_retain(t));
        lua_rawseti(L, -2, k + 1);
    }
    return 1;
}

/* Tensors of array 'idx' into 'out' from position 'at'; returns the count. */
static int tensor_list(lua_State *L, int idx, const char *op, const char *arg, ltf_tensor **out, int at, int room) {
    luaL_checktype(L, idx, LUA_TTABLE);
    int n = ltfL_checkcount(L, idx, op, arg);
    if (n > room - at) return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: too many %s", op, arg);
    for (int i = 0; i < n; i++) {
        lua_geti(L, idx, i + 1);
        out[at + i] = ltfL_totensor(L, lua_gettop(L), -1, op, arg);
    }
    return n;
}

/* Push the n outputs of a control-flow call (taking them over). */
static int push_outs(lua_State *L, ltf_tensor **outs, int n) {
    luaL_checkstack(L, n + 2, "too many outputs");
    for (int i = 0; i < n; i++) {
        ltfL_box *bx = ltfL_newbox(L);
        ltfL_fillbox(L, bx, outs[i]);
        outs[i] = NULL;
    }
    return n;
}

#define CF_MAX 4096
/* core.cond(pred, then_graph, else_graph, then_inputs, else_inputs) -> outputs... */
static int gr_cond(lua_State *L) {
    ltf_tensor *pred = ltfL_totensor(L, 1, LTF_DTYPE_BOOL, "cond", "pred");
    graph_box *gt = checkgraph(L, 2), *gf = checkgraph(L, 3);
    luaL_checkstack(L, 2 * CF_MAX + 8, "cond");
    ltf_tensor **in = lua_newuserdatauv(L, sizeof(ltf_tensor *) * 2 * CF_MAX, 0);
    int nt = tensor_list(L, 4, "cond", "inputs", in, 0, CF_MAX);
    int nf = tensor_list(L, 5, "cond", "inputs", in, nt, 2 * CF_MAX);
    ltf_tensor **outs = lua_newuserdatauv(L, sizeof(ltf_tensor *) * CF_MAX, 0);
    ltfL_state *s = ltfL_S(L);
    lua_State *saved = s->L;
    s->L = L;
    int n = 0;
    ltf_status st = ltf_cond(s->ctx, pred, gt->g, in, nt, gf->g, in + nt, nf, outs, CF_MAX, &n);
    s->L = saved;
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return push_outs(L, outs, n);
}

/* core.while_loop(cond_graph, body_graph, vars, cond_inputs, body_inputs, maximum_iterations) -> outputs... */
static int gr_while(lua_State *L) {
    graph_box *gc = checkgraph(L, 1), *gb = checkgraph(L, 2);
    lua_Integer maxit = luaL_optinteger(L, 6, -1);
    luaL_checkstack(L, 3 * CF_MAX + 8, "while_loop");
    ltf_tensor **in = lua_newuserdatauv(L, sizeof(ltf_tensor *) * 3 * CF_MAX, 0);
    int n = tensor_list(L, 3, "while_loop", "loop_vars", in, 0, CF_MAX);
    int nc = tensor_list(L, 4, "while_loop", "inputs", in, n, 2 * CF_MAX);
    int nb = tensor_list(L, 5, "while_loop", "inputs", in, n + nc, 3 * CF_MAX);
    ltf_tensor **outs = lua_newuserdatauv(L, sizeof(ltf_tensor *) * CF_MAX, 0);
    ltfL_state *s = ltfL_S(L);
    lua_State *saved = s->L;
    s->L = L;
    int got = 0;
    ltf_status st = ltf_while(s->ctx, gc->g, gb->g, in, n, in + n, nc, in + n + nc, nb, (int64_t)maxit, outs, CF_MAX, &got);
    s->L = saved;
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return push_outs(L, outs, got);
}

/* core.custom_gradient(grad_graph, xs, has_grad, ys, captured) -> outputs...
** (tf.custom_gradient while tracing: the gradient function traced into
** grad_graph; has_grad[k]: whether it returns a gradient for xs[k]) */
static int gr_custom_gradient(lua_State *L) {
    graph_box *g = checkgraph(L, 1);
    luaL_checkstack(L, CF_MAX + 8, "custom_gradient");
    ltf_tensor **in = lua_newuserdatauv(L, sizeof(ltf_tensor *) * 3 * CF_MAX, 0);
    int nx = tensor_list(L, 2, "custom_gradient", "inputs", in, 0, CF_MAX);
    luaL_checktype(L, 3, LUA_TTABLE);
    int *has = lua_newuserdatauv(L, sizeof(int) * (size_t)(nx + 1), 0);
    for (int k = 0; k < nx; k++) {
        lua_geti(L, 3, k + 1);
        has[k] = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    int ny = tensor_list(L, 4, "custom_gradient", "outputs", in, nx, 2 * CF_MAX);
    int nc = tensor_list(L, 5, "custom_gradient", "captures", in, nx + ny, 3 * CF_MAX);
    ltf_tensor **outs = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)(ny + 1), 0);
    ltfL_state *s = ltfL_S(L);
    lua_State *saved = s->L;
    s->L = L;
    ltf_status st = ltf_custom_gradient(s->ctx, g->g, in, nx, has, in + nx, ny, in + nx + ny, nc, outs);
    s->L = saved;
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return push_outs(L, outs, ny);
}

/* core.graph_lift(t) -> the concrete value of symbolic 't', computed now
** (tf.Variable initial values made inside a trace) */
static int gr_lift(lua_State *L) {
    ltf_tensor *t = ltfL_checktensor(L, 1, "lift", "value");
    ltfL_box *box = ltfL_newbox(L);
    ltfL_state *s = ltfL_S(L);
    lua_State *saved = s->L;
    s->L = L;
    ltf_tensor *v = NULL;
    ltf_status st = ltf_graph_lift(ltfL_ctx(L), t, &v);
    s->L = saved;
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    ltfL_fillbox(L, box, v);
    return 1;
}

/* {==== init_scope: ops run eagerly (and no tape records) while a trace is
** in progress, as TensorFlow's tf.init_scope; what restores and lazily
** created variables need (their values must not become graph nodes) */

/* core.init_scope(f, ...) -> f(...)'s results, run with the traces set
** aside and the tapes paused; both come back however f ends */
static int gr_init_scope(lua_State *L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    ltf_ctx *ctx = ltfL_ctx(L);
    ltf_graph *g = ltf_graph_suspend(ctx);
    ltf_ctx_pause_tapes(ctx, 1);
    int st = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    ltf_ctx_pause_tapes(ctx, 0);
    ltf_graph_resume(ctx, g);
    if (st != LUA_OK) return lua_error(L);
    return lua_gettop(L);
}

#define LTFL_INIT_SCOPE "tf.init_scope"

typedef struct scope_box {
    ltf_graph *g;     /* the trace set aside (a reference), or NULL */
    int active;       /* entered and not yet exited */
} scope_box;

/* a token never exited (no <close>): its reference goes, the scope stays */
static int scope_gc(lua_State *L) {
    scope_box *b = luaL_testudata(L, 1, LTFL_INIT_SCOPE);
    if (b && b->g) {
        ltf_graph_release(b->g);
        b->g = NULL;
    }
    return 0;
}

/* core.init_scope_enter() -> token: the <close> form's start */
static int gr_init_scope_enter(lua_State *L) {
    scope_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->g = NULL;
    b->active = 0;
    luaL_setmetatable(L, LTFL_INIT_SCOPE);
    ltf_ctx *ctx = ltfL_ctx(L);
    b->g = ltf_graph_suspend(ctx);
    ltf_ctx_pause_tapes(ctx, 1);
    b->active = 1;
    return 1;
}

/* core.init_scope_exit(token): ends the scope core.init_scope_enter began;
** a second call does nothing */
static int gr_init_scope_exit(lua_State *L) {
    scope_box *b = luaL_testudata(L, 1, LTFL_INIT_SCOPE);
    if (!b) return ltfL_argerror(L, 1, "init_scope", "token", "init_scope token");
    if (b->active) {
        ltf_ctx *ctx = ltfL_ctx(L);
        b->active = 0;
        ltf_ctx_pause_tapes(ctx, 0);
        ltf_graph *g = b->g;
        b->g = NULL;
        ltf_graph_resume(ctx, g);
    }
    return 0;
}
/* }==== */

/* core.same_data(a, b) -> true when tensors 'a' and 'b' share their memory
** (a variable's value is still the one read earlier) */
static int gr_same_data(lua_State *L) {
    ltf_tensor *a = ltfL_checktensor(L, 1, "same_data", "a");
    ltf_tensor *b = ltfL_checktensor(L, 2, "same_data", "b");
    lua_pushboolean(L, ltf_tensor_data(a) == ltf_tensor_data(b));
    return 1;
}

static const luaL_Reg graph_fns[] = {
    {"graph_begin", gr_begin},
    {"graph_placeholder", gr_placeholder},
    {"graph_end", gr_end},
    {"graph_abort", gr_abort},
    {"graph_run", gr_run},
    {"graph_nodes", gr_nodes},
    {"graph_signature", gr_signature},
    {"is_tracing", gr_is_tracing},
    {"symbolic_name", gr_symbolic_name},
    {"graph_run_paused", gr_run_paused},
    {"trace_key", gr_trace_key},
    {"graph_captures", gr_captures},
    {"graph_captured", gr_captured},
    {"graph_consts", gr_consts},
    {"cond", gr_cond},
    {"custom_gradient", gr_custom_gradient},
    {"while_loop", gr_while},
    {"graph_lift", gr_lift},
    {"same_data", gr_same_data},
    {"init_scope", gr_init_scope},
    {"init_scope_enter", gr_init_scope_enter},
    {"init_scope_exit", gr_init_scope_exit},
    {NULL, NULL}
};

void ltfL_open_graph(lua_State *L) {
    luaL_newmetatable(L, LTFL_GRAPH);
    lua_pushcfunction(L, graph_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, LTFL_INIT_SCOPE);
    lua_pushcfunction(L, scope_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    ltfL_register(L, graph_fns, LTFL_INTERNAL);
}
