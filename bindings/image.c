/*
** image.c: Lua binding of the image resize ops, as one raw function that
** lua/tf/image_ops.lua builds tf.image.resize on:
**   tf.core.image_resize(images4d, height, width, method) with method
**   "bilinear" or "nearest" (NHWC images; the Lua side handles 3-D images,
**   dtypes and the option table).
*/
#include <string.h>
#include "ltfL.h"

static int image_resize(lua_State *L) {
    int isint_h, isint_w;
    lua_Integer h = lua_tointegerx(L, 2, &isint_h), w = lua_tointegerx(L, 3, &isint_w);
    if (!isint_h) return ltfL_argerror(L, 2, "resize", "size[1]", "integer");
    if (!isint_w) return ltfL_argerror(L, 3, "resize", "size[2]", "integer");
    const char *method = luaL_optstring(L, 4, "bilinear");
    ltf_op_id op;
    if (strcmp(method, "bilinear") == 0) op = LTF_OP_RESIZE_BILINEAR;
    else if (strcmp(method, "nearest") == 0) op = LTF_OP_RESIZE_NEAREST;
    else return ltfL_raisef(L, LTF_ERR_VALUE, "resize: unknown method '%s'", method);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.nints = 2;
    a.ints[0] = h;
    a.ints[1] = w;
    ltf_tensor *x = ltfL_totensor(L, 1, -1, "resize", "images");
    return ltfL_run1(L, op, &x, 1, &a);
}

/* tf.core.image_transform(images4d, transforms (float32 (n|1, 8)), height,
** width, interpolation (0 nearest, 1 bilinear), fill_mode (0 reflect,
** 1 wrap, 2 constant, 3 nearest), fill_value) */
static int image_transform(lua_State *L) {
    int ok[5];
    lua_Integer h = lua_tointegerx(L, 3, &ok[0]), w = lua_tointegerx(L, 4, &ok[1]);
    lua_Integer interp = lua_tointegerx(L, 5, &ok[2]), mode = lua_tointegerx(L, 6, &ok[3]);
    lua_Number fill = lua_tonumberx(L, 7, &ok[4]);
    if (!ok[0]) return ltfL_argerror(L, 3, "transform", "output_shape[1]", "integer");
    if (!ok[1]) return ltfL_argerror(L, 4, "transform", "output_shape[2]", "integer");
    if (!ok[2]) return ltfL_argerror(L, 5, "transform", "interpolation", "integer");
    if (!ok[3]) return ltfL_argerror(L, 6, "transform", "fill_mode", "integer");
    if (!ok[4]) return ltfL_argerror(L, 7, "transform", "fill_value", "number");
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.nints = 2;
    a.ints[0] = h;
    a.ints[1] = w;
    a.i[0] = interp;
    a.i[1] = mode;
    a.f[0] = fill;
    ltf_tensor *in[2];
    in[0] = ltfL_totensor(L, 1, -1, "transform", "images");
    in[1] = ltfL_totensor(L, 2, -1, "transform", "transforms");
    return ltfL_run1(L, LTF_OP_IMAGE_TRANSFORM, in, 2, &a);
}

static const luaL_Reg internal_fns[] = { {"image_resize", image_resize}, {"image_transform", image_transform},
                                         {NULL, NULL} };

void ltfL_open_image(lua_State *L) {
    ltfL_register(L, internal_fns, LTFL_INTERNAL);
}
