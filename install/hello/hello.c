/* hello.c: the smallest host of an installed luatf (scripts/install-check.sh
** builds it with pkg-config and with find_package(luatf CONFIG)). */
#include <stdio.h>
#include <string.h>
#include <lauxlib.h>
#include <lualib.h>
#include "ltf_lua.h"

int main(void) {
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    ltf_ctx *ctx = ltf_ctx_new();
    if (ltf_lua_open(L, ctx) != LTF_OK) {
        fprintf(stderr, "hello: %s\n", ltf_ctx_error(ctx));
        return 1;
    }
    if (luaL_dostring(L, "local tf = require('tf')\n"
                         "double = tf.fn(function(x) return x * 2 end)\n"
                         "version = tf.__version__\n"
                         /* BLAS: OpenBLAS is dlopened on first use (docs/internals.md), not linked */
                         "mm = tf.matmul(tf.ones({2, 3}), tf.fill({3, 2}, 2.0)):numpy()[2][1]") != LUA_OK) {
        fprintf(stderr, "hello: %s\n", lua_tostring(L, -1));
        return 1;
    }
    float v[2] = {1.5f, -2};
    int64_t d[1] = {2};
    ltf_tensor *x = ltf_tensor_wrap(ctx, LTF_DTYPE_FLOAT32, 1, d, v, NULL, NULL), *y = NULL;
    int n = 0;
    if (ltf_lua_call_global(L, "double", &x, 1, &y, 1, &n) != LTF_OK) {
        fprintf(stderr, "hello: %s\n", ltf_lua_error(L));
        return 1;
    }
    const float *out = ltf_tensor_data(y);
    lua_getglobal(L, "mm");
    double mm = lua_tonumber(L, -1);
    lua_getglobal(L, "version");
    int ok = out[0] == 3.0f && out[1] == -4.0f && mm == 6.0 && strcmp(lua_tostring(L, -1), ltf_version()) == 0;
    printf("hello: luatf %s (header %s): double({1.5, -2}) = {%g, %g}, a matmul gives %g: %s\n", ltf_version(),
           LTF_VERSION, out[0], out[1], mm, ok ? "ok" : "FAILED");
    ltf_tensor_release(x);
    ltf_tensor_release(y);
    lua_close(L);
    ltf_ctx_release(ctx);
    return ok ? 0 : 1;
}
