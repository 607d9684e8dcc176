/*
** device.c: devices for Lua (lua/tf/device.lua builds tf.device and
** tf.config on these): how many GPUs, the device scope, copies between
** devices, memory counters and the device policy. Device names are parsed
** in Lua; here a device is a kind ("CPU" or "GPU") and an ordinal.
*/
#include <string.h>
#include "ltfL.h"

#define LTF_MAX_VISIBLE 64

/* Kind name at 'idx' ("CPU"/"GPU", any case) -> device type. [-0, +0, v] */
static ltf_device_type check_kind(lua_State *L, int idx, const char *op) {
    const char *k = luaL_checkstring(L, idx);
    if (strcmp(k, "CPU") == 0 || strcmp(k, "cpu") == 0) return LTF_DEVICE_CPU;
    if (strcmp(k, "GPU") == 0 || strcmp(k, "gpu") == 0) return LTF_DEVICE_CUDA;
    return (ltf_device_type)ltfL_raisef(L, LTF_ERR_VALUE, "%s: unknown device type '%s' (expected CPU or GPU)", op, k);
}

static int check_ordinal(lua_State *L, int idx) {
    lua_Integer n = luaL_optinteger(L, idx, 0);
    return n < 0 || n > 1000 ? -1 : (int)n;
}

/* core.num_gpus() -> the GPUs this context sees (0 without one). */
static int device_num_gpus(lua_State *L) {
    lua_pushinteger(L, ltf_ctx_num_devices(ltfL_ctx(L), LTF_DEVICE_CUDA));
    return 1;
}

/* core.built_with_cuda() -> whether this build has the CUDA module. */
static int device_built_with_cuda(lua_State *L) {
#ifdef LTF_USE_CUDA
    lua_pushboolean(L, 1);
#else
    lua_pushboolean(L, 0);
#endif
    return 1;
}

/* core.set_device(kind, ordinal) or core.set_device(nil): the device scope. */
static int device_set_device(lua_State *L) {
    ltf_ctx *ctx = ltfL_ctx(L);
    ltf_status st = lua_isnoneornil(L, 1) ? ltf_ctx_set_device(ctx, -1, 0)
                                          : ltf_ctx_set_device(ctx, (int)check_kind(L, 1, "device"), check_ordinal(L, 2));
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

/* core.get_device() -> kind, ordinal; nil when no scope is set. */
static int device_get_device(lua_State *L) {
    int type, ordinal;
    ltf_ctx_get_device(ltfL_ctx(L), &type, &ordinal);
    if (type < 0) return 0;
    lua_pushstring(L, type == LTF_DEVICE_CPU ? "CPU" : "GPU");
    lua_pushinteger(L, ordinal);
    return 2;
}

/* core.to_device(t, kind, ordinal) -> the tensor on that device. */
static int device_to_device(lua_State *L) {
    ltf_tensor *t = ltfL_checktensor(L, 1, "to_device", "x");
    ltf_device_type type = check_kind(L, 2, "to_device");
    int ordinal = check_ordinal(L, 3);
    ltfL_box *b = ltfL_newbox(L);
    ltf_tensor *o = NULL;
    ltf_status st = ltf_tensor_to_device(ltfL_ctx(L), t, type, ordinal, &o);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    if (o == t) {                       /* there already: the same tensor */
        ltf_tensor_release(o);
        lua_pushvalue(L, 1);
        return 1;
    }
    ltfL_fillbox(L, b, o);
    return 1;
}

/* core.tensor_device(t) -> kind, ordinal */
static int device_tensor_device(lua_State *L) {
    ltf_tensor *t = ltfL_checktensor(L, 1, "device", "x");
    lua_pushstring(L, ltf_tensor_device(t) == LTF_DEVICE_CPU ? "CPU" : "GPU");
    lua_pushinteger(L, ltf_tensor_device_ordinal(t));
    return 2;
}

/* core.memory_info(kind, ordinal) -> {current=, peak=, reserved=} */
static int device_memory_info(lua_State *L) {
    ltf_device_memory m;
    ltf_status st = ltf_ctx_device_memory(ltfL_ctx(L), check_kind(L, 1, "get_memory_info"), check_ordinal(L, 2), &m);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)m.in_use);
    lua_setfield(L, -2, "current");
    lua_pushinteger(L, (lua_Integer)m.peak);
    lua_setfield(L, -2, "peak");
    lua_pushinteger(L, (lua_Integer)m.reserved);
    lua_setfield(L, -2, "reserved");
    return 1;
}

static int device_reset_memory_stats(lua_State *L) {
    ltf_ctx_reset_device_peak(ltfL_ctx(L), check_kind(L, 1, "reset_memory_stats"), check_ordinal(L, 2));
    return 0;
}

/* core.device_sync(kind, ordinal): wait for queued work; raises its failure. */
static int device_sync(lua_State *L) {
    ltf_status st = ltf_ctx_device_sync(ltfL_ctx(L), check_kind(L, 1, "sync"), check_ordinal(L, 2));
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

/* core.set_device_policy(explicit), core.device_policy() -> explicit */
static int device_set_device_policy(lua_State *L) {
    ltf_ctx_set_device_policy(ltfL_ctx(L), lua_toboolean(L, 1));
    return 0;
}

static int device_device_policy(lua_State *L) {
    lua_pushboolean(L, ltf_ctx_device_policy(ltfL_ctx(L)));
    return 1;
}

/* core.device_kernel_stats() -> {op = {device=, emulated=, host=}} for the
** ops that ran on a GPU since the last reset, and the rows fused_group,
** graph_capture and graph_replay (docs/cuda.md). */
static int device_kernel_stats(lua_State *L) {
    ltf_ctx *ctx = ltfL_ctx(L);
    static const char *const names[LTF_KERNEL_RAN_COUNT] = { "device", "emulated", "host" };
    lua_newtable(L);
    for (int op = 0; op < LTF_OP_COUNT; op++) {
        uint64_t c[LTF_KERNEL_RAN_COUNT];
        ltf_ctx_device_kernel_stats(ctx, op, c);
        if (c[0] == 0 && c[1] == 0 && c[2] == 0) continue;
        lua_createtable(L, 0, LTF_KERNEL_RAN_COUNT);
        for (int k = 0; k < LTF_KERNEL_RAN_COUNT; k++) {
            lua_pushinteger(L, (lua_Integer)c[k]);
            lua_setfield(L, -2, names[k]);
        }
        lua_setfield(L, -2, ltf_op_name(op));
    }
    /* rows that are not ops (ltf.h: LTF_KERNEL_STATS_*) */
    static const struct { int row; const char *name; } extra[] = {
        { LTF_KERNEL_STATS_FUSED_GROUP, "fused_group" },
        { LTF_KERNEL_STATS_GRAPH_CAPTURE, "graph_capture" },
        { LTF_KERNEL_STATS_GRAPH_REPLAY, "graph_replay" },
    };
    for (size_t e = 0; e < sizeof extra / sizeof extra[0]; e++) {
        uint64_t c[LTF_KERNEL_RAN_COUNT];
        ltf_ctx_device_kernel_stats(ctx, extra[e].row, c);
        if (c[0] == 0 && c[1] == 0 && c[2] == 0) continue;
        lua_createtable(L, 0, LTF_KERNEL_RAN_COUNT);
        for (int k = 0; k < LTF_KERNEL_RAN_COUNT; k++) {
            lua_pushinteger(L, (lua_Integer)c[k]);
            lua_setfield(L, -2, names[k]);
        }
        lua_setfield(L, -2, extra[e].name);
    }
    return 1;
}

static int device_reset_kernel_stats(lua_State *L) {
    ltf_ctx_reset_device_kernel_stats(ltfL_ctx(L));
    return 0;
}

/* core.set_device_graph_limit(bytes); core.device_graph_info() -> {limit=,
** bytes=, count=} (graph replay of device plans, docs/cuda.md). */
static int device_set_graph_limit(lua_State *L) {
    lua_Integer n = luaL_checkinteger(L, 1);
    luaL_argcheck(L, n >= 0, 1, "a byte count >= 0 expected");
    ltf_ctx_set_device_graph_limit(ltfL_ctx(L), (size_t)n);
    return 0;
}

static int device_graph_info(lua_State *L) {
    size_t limit, bytes;
    int count;
    ltf_ctx_device_graph_info(ltfL_ctx(L), &limit, &bytes, &count);
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)limit);
    lua_setfield(L, -2, "limit");
    lua_pushinteger(L, (lua_Integer)bytes);
    lua_setfield(L, -2, "bytes");
    lua_pushinteger(L, count);
    lua_setfield(L, -2, "count");
    return 1;
}

/* core.set_placement(what, on) / core.placement(what) -> boolean, what:
** "default", "soft", "log" (tf.config / tf.debugging). */
static int device_set_placement(lua_State *L) {
    ltf_ctx *ctx = ltfL_ctx(L);
    const char *w = luaL_checkstring(L, 1);
    int on = lua_toboolean(L, 2);
    if (strcmp(w, "default") == 0) ltf_ctx_set_default_placement(ctx, on);
    else if (strcmp(w, "soft") == 0) ltf_ctx_set_soft_placement(ctx, on);
    else if (strcmp(w, "log") == 0) ltf_ctx_set_log_placement(ctx, on);
    else return luaL_argerror(L, 1, "\"default\", \"soft\" or \"log\" expected");
    return 0;
}

static int device_placement(lua_State *L) {
    ltf_ctx *ctx = ltfL_ctx(L);
    const char *w = luaL_checkstring(L, 1);
    if (strcmp(w, "default") == 0) lua_pushboolean(L, ltf_ctx_default_placement(ctx));
    else if (strcmp(w, "soft") == 0) lua_pushboolean(L, ltf_ctx_soft_placement(ctx));
    else if (strcmp(w, "log") == 0) lua_pushboolean(L, ltf_ctx_log_placement(ctx));
    else return luaL_argerror(L, 1, "\"default\", \"soft\" or \"log\" expected");
    return 1;
}

/* core.num_physical_gpus() -> the GPUs the module found */
static int device_num_physical_gpus(lua_State *L) {
    lua_pushinteger(L, ltf_ctx_num_physical_devices(ltfL_ctx(L), LTF_DEVICE_CUDA));
    return 1;
}

/* core.set_visible_gpus({physical ordinals}) or core.set_visible_gpus(nil): all */
static int device_set_visible_gpus(lua_State *L) {
    ltf_ctx *ctx = ltfL_ctx(L);
    int ord[LTF_MAX_VISIBLE], n = -1;
    if (!lua_isnoneornil(L, 1)) {
        luaL_checktype(L, 1, LUA_TTABLE);
        lua_Integer len = luaL_len(L, 1);
        if (len > LTF_MAX_VISIBLE) return ltfL_raisef(L, LTF_ERR_VALUE, "set_visible_devices: too many devices");
        n = (int)len;
        for (int i = 0; i < n; i++) {
            lua_geti(L, 1, i + 1);
            ord[i] = (int)luaL_checkinteger(L, -1);
            lua_pop(L, 1);
        }
    }
    ltf_status st = ltf_ctx_set_visible_devices(ctx, ord, n);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

/* core.visible_gpus() -> {physical ordinals} */
static int device_visible_gpus(lua_State *L) {
    int ord[LTF_MAX_VISIBLE];
    int n = ltf_ctx_visible_devices(ltfL_ctx(L), ord, LTF_MAX_VISIBLE);
    lua_createtable(L, n, 0);
    for (int i = 0; i < n && i < LTF_MAX_VISIBLE; i++) {
        lua_pushinteger(L, ord[i]);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* core.devices_initialized(mark) -> boolean (mark true: fix them now) */
static int device_devices_initialized(lua_State *L) {
    ltf_ctx *ctx = ltfL_ctx(L);
    if (lua_toboolean(L, 1)) ltf_ctx_mark_devices_initialized(ctx);
    lua_pushboolean(L, ltf_ctx_devices_initialized(ctx));
    return 1;
}

static const luaL_Reg device_fns[] = {
    {"set_placement", device_set_placement},
    {"placement", device_placement},
    {"num_physical_gpus", device_num_physical_gpus},
    {"set_visible_gpus", device_set_visible_gpus},
    {"visible_gpus", device_visible_gpus},
    {"devices_initialized", device_devices_initialized},
    {"set_device_graph_limit", device_set_graph_limit},
    {"device_graph_info", device_graph_info},
    {"device_kernel_stats", device_kernel_stats},
    {"reset_device_kernel_stats", device_reset_kernel_stats},
    {"num_gpus", device_num_gpus},
    {"built_with_cuda", device_built_with_cuda},
    {"set_device", device_set_device},
    {"get_device", device_get_device},
    {"to_device", device_to_device},
    {"tensor_device", device_tensor_device},
    {"memory_info", device_memory_info},
    {"reset_memory_stats", device_reset_memory_stats},
    {"device_sync", device_sync},
    {"set_device_policy", device_set_device_policy},
    {"device_policy", device_device_policy},
    {NULL, NULL}
};

void ltfL_open_device(lua_State *L) { ltfL_register(L, device_fns, LTFL_INTERNAL); }
