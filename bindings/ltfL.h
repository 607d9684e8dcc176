/*
** ltfL.h: helpers shared by the binding files (the only C that includes
** lua.h). Every Lua C function of the module has two upvalues: 1 the state
** box (ltfL_state: the context and the collector account) and 2 the Tensor
** metatable. Stack effects are noted as in the Lua manual: [-o, +p, x].
*/
#ifndef LTFL_H
#define LTFL_H

#include <lua.h>
#include <lauxlib.h>
#include "ltf.h"

#define LTFL_TENSOR "tf.Tensor"
#define LTFL_ERROR  "tf.Error"

#define LTFL_SCALAR_CACHE 64

typedef struct ltfL_state {
    ltf_ctx *ctx;
    lua_State *L;                           /* the thread inside the current engine call (callbacks) */
    int *dead_refs;                         /* registry refs to drop at the next chance */
    int ndead, capdead;
    size_t gc_pending;                      /* tensor bytes allocated since the last full collection */
    size_t gc_base;                         /* live tensor bytes after that collection */
    size_t gc_step;                         /* bytes not yet reported as a collector step */
    ltf_tensor *scalars[LTFL_SCALAR_CACHE]; /* small cache of scalar tensors from Lua numbers */
    lua_State *main;                        /* the main thread (emergency collections) */
} ltfL_state;

/* Registry key of the context a host hands luaopen_tf_core (ltf_lua_open). */
#define LTFL_HOST_CTX "ltf.host_ctx"

typedef struct ltfL_box {
    ltf_tensor *t;                          /* NULL once freed */
} ltfL_box;

#define ltfL_S(L)   ((ltfL_state *)lua_touserdata(L, lua_upvalueindex(1)))
#define ltfL_ctx(L) (ltfL_S(L)->ctx)

/* Raise an error object {kind=, message=} for 'st' with 'msg'. [-0, +0, v] */
int ltfL_raise(lua_State *L, ltf_status st, const char *msg);
/* Raise the context's last error. [-0, +0, v] */
int ltfL_raisectx(lua_State *L, ltf_status st);
/* Raise with a formatted message. [-0, +0, v] */
int ltfL_raisef(lua_State *L, ltf_status st, const char *fmt, ...);
/* Name of an error kind for a status ("InvalidArgumentError"), and back. */
const char *ltfL_kind(ltf_status st);
ltf_status ltfL_status_of_kind(const char *kind);

/* If the value at 'idx' is an object whose metatable has '__tf_tensor'
** (tf.Variable, ...), push its tensor and return it; else NULL. [-0, +(0|1), e] */
ltf_tensor *ltfL_fromobject(lua_State *L, int idx);
/* The tensor at 'idx' or NULL when it is not a tensor userdata. [-0, +0, -] */
ltf_tensor *ltfL_testtensor(lua_State *L, int idx);
/* The tensor at 'idx'; raises naming 'op' and 'arg' otherwise. [-0, +0, v] */
ltf_tensor *ltfL_checktensor(lua_State *L, int idx, const char *op, const char *arg);
/* The tensor at 'idx', converting a Lua number/boolean/string/nested table;
** numbers take 'like' as dtype when it is >= 0. A converted value is
** pushed (so the collector owns it) or taken from the scalar cache.
** [-0, +(0|1), v] */
ltf_tensor *ltfL_totensor(lua_State *L, int idx, int like, const char *op, const char *arg);
/* 't' with a value the host can read: itself, or (a tensor on a device) a
** host copy pushed in a box. [-0, +(0|1), v] */
ltf_tensor *ltfL_hostview(lua_State *L, ltf_tensor *t);
/* Copy the elements of concrete 't' (any device) to 'dst' of exactly
** 'nbytes' bytes: small values the bindings read (axes, sizes). [-0, +0, v] */
void ltfL_readvalues(lua_State *L, ltf_tensor *t, void *dst, size_t nbytes);
/* The 'n' elements of int32 or int64 tensor 't' (any device) as int64. [-0, +0, v] */
void ltfL_readints(lua_State *L, ltf_tensor *t, int64_t *out, int64_t n);
/* Push an empty tensor box with the Tensor metatable. [-0, +1, m] */
ltfL_box *ltfL_newbox(lua_State *L);
/* Fill a box with a tensor (takes ownership) and account its bytes. */
void ltfL_fillbox(lua_State *L, ltfL_box *b, ltf_tensor *t);
/* Push a new tensor (takes ownership). [-0, +1, m] */
void ltfL_pushtensor(lua_State *L, ltf_tensor *t);
/* Run a one-output op and push its result. [-0, +1, v] */
int ltfL_run1(lua_State *L, ltf_op_id op, ltf_tensor *const *in, int nin, const ltf_attrs *a);
/* Run an op and push every output; returns the count. [-0, +n, v] */
int ltfL_runn(lua_State *L, ltf_op_id op, ltf_tensor *const *in, int nin, const ltf_attrs *a);

/* {==== Argument helpers (1-based axes converted here and only here) */
/* dtype from a tf.DType object or its name; 'def' when absent and def >= 0. */
int ltfL_checkdtype(lua_State *L, int idx, const char *op, const char *arg, int def);
/* Axis as the user wrote it (1-based, or negative) -> 0-based or negative. */
int64_t ltfL_checkaxis(lua_State *L, int idx, const char *op, const char *arg);
/* List of integers (or a single integer when 'single' is set); returns count. */
/* Length of the array table at 'idx' (raw: no __len), at most LTFL_MAX_COUNT
** entries; raises naming 'op' and 'arg' otherwise. [-0, +0, v] */
#define LTFL_MAX_COUNT 1000000
int ltfL_checkcount(lua_State *L, int idx, const char *op, const char *arg);
int ltfL_checkintlist(lua_State *L, int idx, const char *op, const char *arg, int64_t *out, int max, int single);
/* Keyword table at 'idx' (absent/nil allowed): raise if a key is not in 'keys'. */
void ltfL_checkkeys(lua_State *L, int idx, const char *op, const char *const *keys);
/* Push field 'key' of the keyword table at 'idx' (nil when no table). [-0, +1, -] */
int ltfL_getkw(lua_State *L, int idx, const char *key);
/* Raise a TypeError for a wrong argument, Lua's wording. [-0, +0, v] */
int ltfL_argerror(lua_State *L, int idx, const char *op, const char *arg, const char *expected);
/* Register functions into the module table on top; 'ns' names a sub-table
** ("math", "nn", ...) that also gets them, NULL for none. Each function
** gets the two shared upvalues. [-0, +0, m]
** LTFL_INTERNAL ("internal") lists the engine's raw functions that the Lua
** modules build the API on (traces, tapes, variable resources): they stay
** in tf.core, and lua/tf/init.lua keeps them out of the public 'tf'. */
#define LTFL_INTERNAL "internal"
void ltfL_register(lua_State *L, const luaL_Reg *fns, const char *ns);
/* }==== */

/* Family openers (one per bindings/ file) */
void ltfL_open_tensor(lua_State *L);
void ltfL_open_elementwise(lua_State *L);
void ltfL_open_reduce(lua_State *L);
void ltfL_open_movement(lua_State *L);
void ltfL_open_nn(lua_State *L);
void ltfL_open_random(lua_State *L);
void ltfL_open_autodiff(lua_State *L);
void ltfL_open_variable(lua_State *L);
void ltfL_open_graph(lua_State *L);
void ltfL_open_control(lua_State *L);
void ltfL_open_summary(lua_State *L);
void ltfL_open_linalg(lua_State *L);
void ltfL_open_image(lua_State *L);
void ltfL_open_indexing(lua_State *L);
void ltfL_open_sort(lua_State *L);
void ltfL_open_strings(lua_State *L);
void ltfL_open_data(lua_State *L);
void ltfL_open_checkpoint(lua_State *L);
void ltfL_open_optim(lua_State *L);
void ltfL_open_device(lua_State *L);
void ltfL_open_rnn(lua_State *L);
void ltfL_open_tfrecord(lua_State *L);
void ltfL_open_example(lua_State *L);
void ltfL_open_io(lua_State *L);
void ltfL_open_zip(lua_State *L);     /* zip.c: CRC-32 for the .keras container */
void ltfL_open_collective(lua_State *L);
void ltfL_open_saved_model(lua_State *L);
void ltfL_open_onnx_export(lua_State *L);
void ltfL_open_onnx(lua_State *L);

#endif
