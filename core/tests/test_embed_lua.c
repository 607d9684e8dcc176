/*
** test_embed_lua.c: a host that embeds Lua (core/include/ltf_lua.h): its
** own allocator for Lua and tensors, luatf loaded with the host's context,
** a host buffer handed to Lua without a copy, Lua functions, tf.fns and
** concrete functions called from C, graphs run from C and pushed back into
** Lua, and every failure as a status with text (never a longjmp).
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "check.h"
#include "ltf_lua.h"

typedef struct counting {
    size_t in_use;
    int refuse;
} counting;

static void *c_alloc(void *ud, size_t size, size_t align) {
    counting *c = ud;
    if (c->refuse) return NULL;
    void *p = NULL;
    if (posix_memalign(&p, align, size) != 0) return NULL;
    c->in_use += size;
    return p;
}

static void c_free(void *ud, void *p, size_t size) {
    ((counting *)ud)->in_use -= size;
    free(p);
}

static int run(lua_State *L, const char *code) {
    if (luaL_dostring(L, code) != LUA_OK) {
        fprintf(stderr, "lua: %s\n", luaL_tolstring(L, -1, NULL));
        lua_pop(L, 1);
        lua_pop(L, 1);
        return 0;
    }
    return 1;
}

static const char script[] =
    "tf = require('tf')\n"
    "function brighten(img) return tf.cast(img, tf.float32) / 255 end\n"
    "function same(x) return x end\n"
    "function two(x) return x + 1, x * 2 end\n"
    "function boom() error('boom') end\n"
    "function not_a_tensor() return 42 end\n"
    "model = {}\n"
    "model.affine = tf.fn(function(x, w) return tf.matmul(x, w) + 1 end)\n"
    "model.cf = model.affine:get_concrete_function(tf.TensorSpec({tf.None, 3}, tf.float32),\n"
    "                                              tf.TensorSpec({3, 2}, tf.float32))\n"
    "number = 3\n"
    "handle_var = tf.Variable(tf.ones({2}))\n"
    "function with_handle() return model.affine(handle_var.handle, handle_var) end\n"
    "function bad_value() tf.errors.raise('ValueError', 'bad value') end\n";

static void test_host(void) {
    counting c = {0};
    ltf_allocator a = {c_alloc, c_free, NULL, &c};
    lua_State *L = lua_newstate(ltf_lua_alloc, &a);
    CHECK(L != NULL);
    luaL_openlibs(L);
    CHECK(ltf_lua_context(L) == NULL);
    CHECK(strstr(ltf_lua_error(L), "not loaded") != NULL);
    ltf_tensor *none = NULL;
    CHECK(ltf_lua_push_tensor(L, none) == LTF_ERR_FAILED_PRECONDITION);
    ltf_ctx *ctx = ltf_ctx_new_with_allocator(&a);
    CHECK(ltf_lua_open(L, ctx) == LTF_OK);
    CHECK(ltf_lua_context(L) == ctx);
    CHECK(ltf_lua_open(L, ctx) == LTF_OK);               /* again with the same context: fine */
    ltf_ctx *other = ltf_ctx_new();
    CHECK(ltf_lua_open(L, other) == LTF_ERR_FAILED_PRECONDITION);
    CHECK(strstr(ltf_ctx_error(other), "already loaded") != NULL);
    CHECK(run(L, script));
    int top = lua_gettop(L);

    /* a host buffer goes in without a copy and comes back the same bytes */
    static uint8_t img[2 * 3 * 3];
    for (int i = 0; i < 18; i++) img[i] = (uint8_t)(i * 10);
    int64_t dims[3] = {2, 3, 3};
    ltf_tensor *t = ltf_tensor_wrap(ctx, LTF_DTYPE_UINT8, 3, dims, img, NULL, NULL);
    ltf_tensor *out[4] = {0};
    int n = -1;
    CHECK(ltf_lua_call_global(L, "same", &t, 1, out, 4, &n) == LTF_OK && n == 1);
    CHECK(ltf_tensor_data(out[0]) == img);
    ltf_tensor_release(out[0]);
    CHECK(ltf_lua_call_global(L, "brighten", &t, 1, out, 4, &n) == LTF_OK && n == 1);
    float *f = NULL;
    CHECK(ltf_tensor_host_data(ctx, out[0], (void **)&f, NULL) == LTF_OK);
    CHECK(ltf_tensor_dtype(out[0]) == LTF_DTYPE_FLOAT32 && f[17] == 170.0f / 255.0f);
    ltf_tensor_release(out[0]);
    CHECK(ltf_lua_push_tensor(L, t) == LTF_OK);
    lua_setglobal(L, "frame");
    CHECK(run(L, "assert(frame.shape[3] == 3 and frame.dtype == tf.uint8)"));
    lua_getglobal(L, "frame");
    ltf_tensor *back = NULL;
    CHECK(ltf_lua_to_tensor(L, -1, &back) == LTF_OK && back == t);
    lua_pop(L, 1);
    ltf_tensor_release(back);
    CHECK(ltf_lua_call_global(L, "two", &t, 1, out, 4, &n) == LTF_OK && n == 2);
    CHECK(((uint8_t *)ltf_tensor_data(out[1]))[1] == 20);
    ltf_tensor_release(out[0]);
    ltf_tensor_release(out[1]);
    CHECK(ltf_lua_call_global(L, "two", &t, 1, out, 1, &n) == LTF_ERR_INVALID_ARGUMENT && n == 0);
    CHECK(strstr(ltf_lua_error(L), "returned 2 values, room for 1") != NULL);

    /* a tf.fn (polymorphic), its concrete function, and its graph from C */
    float xv[6] = {1, 2, 3, 4, 5, 6}, wv[6] = {1, 0, 0, 1, 1, 1};
    int64_t xd[2] = {2, 3}, wd[2] = {3, 2};
    ltf_tensor *in[2] = {ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 2, xd, xv),
                         ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 2, wd, wv)};
    const float want[4] = {1 + 3 + 1, 2 + 3 + 1, 4 + 6 + 1, 5 + 6 + 1};
    CHECK(ltf_lua_call_global(L, "model.affine", in, 2, out, 4, &n) == LTF_OK && n == 1);
    CHECK(memcmp(ltf_tensor_data(out[0]), want, sizeof want) == 0);
    ltf_tensor_release(out[0]);
    CHECK(ltf_lua_call_global(L, "model.cf", in, 2, out, 4, &n) == LTF_OK && n == 1);
    CHECK(memcmp(ltf_tensor_data(out[0]), want, sizeof want) == 0);
    ltf_tensor_release(out[0]);
    CHECK(ltf_lua_get_function(L, "model.cf") == LTF_OK);
    ltf_graph *g = NULL;
    CHECK(ltf_lua_to_graph(L, -1, &g) == LTF_OK && g != NULL);
    lua_pop(L, 1);
    CHECK(ltf_graph_run(ctx, g, in, 2, out, 4, &n) == LTF_OK && n == 1);
    CHECK(memcmp(ltf_tensor_data(out[0]), want, sizeof want) == 0);
    ltf_tensor_release(out[0]);
    /* the graph back into Lua as a function; tapes see through it */
    CHECK(ltf_lua_push_graph(L, g) == LTF_OK);
    lua_setglobal(L, "affine_graph");
    CHECK(run(L, "local x = tf.constant({{1.0, 2.0, 3.0}})\n"
                 "local w = tf.ones({3, 2})\n"
                 "local tape = tf.GradientTape()\n"
                 "tape:watch(w)\n"
                 "local y, s = tape:record(function() local y = affine_graph(x, w); return y, tf.reduce_sum(y) end)\n"
                 "assert(y:numpy()[1][1] == 7)\n"
                 "local dw = tape:gradient(s, w)\n"
                 "assert(dw:numpy()[3][2] == 3, tostring(dw))\n"));
    ltf_graph_release(g);

    /* failures: status and text, the stack left as it was */
    CHECK(ltf_lua_call_global(L, "model.affine", (ltf_tensor *[]){in[1], in[1]}, 2, out, 4, &n) ==
          LTF_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ltf_lua_error(L), "matmul: inner dimensions") != NULL);
    CHECK(ltf_ctx_status(ctx) == LTF_ERR_INVALID_ARGUMENT);
    CHECK(ltf_lua_call_global(L, "boom", NULL, 0, out, 4, &n) == LTF_ERR_UNKNOWN);
    CHECK(strstr(ltf_lua_error(L), "boom") != NULL);
    /* a script's TypeError / ValueError: INVALID_ARGUMENT, the kind heading the text */
    CHECK(ltf_lua_call_global(L, "with_handle", NULL, 0, out, 4, &n) == LTF_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ltf_lua_error(L), "TypeError: ") == ltf_lua_error(L));
    CHECK(strstr(ltf_lua_error(L), "argument 'x' is a variable handle (dtype resource)") != NULL);
    CHECK(ltf_lua_call_global(L, "bad_value", NULL, 0, out, 4, &n) == LTF_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ltf_lua_error(L), "ValueError: ") == ltf_lua_error(L));
    CHECK(ltf_lua_call_global(L, "missing.fn", NULL, 0, out, 4, &n) == LTF_ERR_NOT_FOUND);
    CHECK_STR(ltf_lua_error(L), "'missing.fn' is not defined");
    CHECK(ltf_lua_call_global(L, "number", NULL, 0, out, 4, &n) == LTF_ERR_TYPE);
    CHECK_STR(ltf_lua_error(L), "'number' is a number, not a function");
    CHECK(ltf_lua_call_global(L, "not_a_tensor", NULL, 0, out, 4, &n) == LTF_ERR_TYPE);
    CHECK_STR(ltf_lua_error(L), "result 1 is a number, expected a tensor");
    lua_pushinteger(L, 5);
    CHECK(ltf_lua_to_tensor(L, -1, &back) == LTF_ERR_TYPE && back == NULL);
    CHECK(ltf_lua_to_graph(L, -1, &g) == LTF_ERR_TYPE && g == NULL);
    lua_pop(L, 1);
    /* a tensor of another context enters only when shared */
    float one = 1;
    ltf_tensor *foreign = ltf_tensor_from_data(other, LTF_DTYPE_FLOAT32, 0, NULL, &one);
    CHECK(ltf_lua_push_tensor(L, foreign) == LTF_ERR_FAILED_PRECONDITION);
    CHECK(ltf_tensor_share(other, foreign) == LTF_OK);
    CHECK(ltf_lua_push_tensor(L, foreign) == LTF_OK);
    lua_pop(L, 1);
    ltf_tensor_release(foreign);
    /* Lua out of memory: a status, not an abort */
    c.refuse = 1;
    CHECK(ltf_lua_call_global(L, "two", &t, 1, out, 4, &n) == LTF_ERR_RESOURCE_EXHAUSTED);
    c.refuse = 0;
    CHECK(lua_gettop(L) == top);
    CHECK(ltf_lua_call_global(L, "two", &t, 1, out, 4, &n) == LTF_OK && n == 2);   /* and it recovers */
    ltf_tensor_release(out[0]);
    ltf_tensor_release(out[1]);

    ltf_tensor_release(in[0]);
    ltf_tensor_release(in[1]);
    ltf_tensor_release(t);
    lua_close(L);
    ltf_ctx_release(ctx);
    ltf_ctx_release(other);
    CHECK(c.in_use == 0);                                /* Lua's and the tensors' memory all went back */
}

int main(void) {
    test_host();
    CHECK_DONE();
}
