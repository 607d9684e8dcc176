/*
** io.c: Lua bindings of the io family (ltf_ops/io.h) and the file-system
** primitives tf.io.gfile is built on. Raw positional functions in
** tf.core.internal; lua/tf/io.lua builds tf.io on them:
**   io_read_file(filename)                      -> string scalar
**   io_write_file(filename, contents)
**   io_decode(op, contents, channels, i1, i2, i3, f0)   op: "png" "jpeg" "gif" "image"
**   io_encode_png(image, compression)
**   io_encode_jpeg(image, quality, format, flags)
**   io_decode_raw(bytes, dtype, little_endian, fixed_length)
**   io_decode_compressed(bytes, type)
**   fs_stat(path) -> {length, mtime_nsec, is_directory, is_regular} | nil, message, kind
**   fs_listdir(path) -> {names} | nil, message, kind   (no "." or "..", sorted)
**   fs_mkdir(path), fs_remove(path), fs_rmdir(path) -> true | nil, message, kind
**   fs_rename(src, dst, overwrite) -> true | nil, message, kind
**   fs_glob(pattern) -> {paths} (sorted)
*/
#include <errno.h>
#include <dirent.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ltfL.h"

static ltf_tensor *held(lua_State *L, int idx, int like, const char *op, const char *arg) {
    ltf_tensor *t = ltfL_totensor(L, idx, like, op, arg);
    if (lua_type(L, idx) == LUA_TNUMBER) ltfL_pushtensor(L, ltf_tensor_retain(t));
    return t;
}

static int io_read_file(lua_State *L) {
    lua_settop(L, 1);
    ltf_tensor *x = held(L, 1, -1, "read_file", "filename");
    return ltfL_run1(L, LTF_OP_READ_FILE, &x, 1, NULL);
}

static int io_write_file(lua_State *L) {
    lua_settop(L, 2);
    ltf_tensor *in[2];
    in[0] = held(L, 1, -1, "write_file", "filename");
    in[1] = held(L, 2, -1, "write_file", "contents");
    ltfL_runn(L, LTF_OP_WRITE_FILE, in, 2, NULL);
    return 0;
}

static int io_decode(lua_State *L) {
    lua_settop(L, 7);
    const char *which = luaL_checkstring(L, 1);
    ltf_op_id op;
    if (strcmp(which, "png") == 0) op = LTF_OP_DECODE_PNG;
    else if (strcmp(which, "jpeg") == 0) op = LTF_OP_DECODE_JPEG;
    else if (strcmp(which, "gif") == 0) op = LTF_OP_DECODE_GIF;
    else op = LTF_OP_DECODE_IMAGE;
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = luaL_optinteger(L, 3, 0);
    a.i[1] = luaL_optinteger(L, 4, 0);
    a.i[2] = luaL_optinteger(L, 5, 0);
    a.i[3] = luaL_optinteger(L, 6, 0);
    a.f[0] = luaL_optnumber(L, 7, 1.0);
    char arg[16] = "decode_";
    strncat(arg, which, 8);
    ltf_tensor *x = held(L, 2, -1, arg, "contents");
    return ltfL_run1(L, op, &x, 1, &a);
}

static int io_encode_png(lua_State *L) {
    lua_settop(L, 2);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = luaL_optinteger(L, 2, -1);
    ltf_tensor *x = held(L, 1, -1, "encode_png", "image");
    return ltfL_run1(L, LTF_OP_ENCODE_PNG, &x, 1, &a);
}

static int io_encode_jpeg(lua_State *L) {
    lua_settop(L, 4);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = luaL_optinteger(L, 2, 95);
    a.i[1] = luaL_optinteger(L, 3, 0);
    a.i[2] = luaL_optinteger(L, 4, 4);
    ltf_tensor *x = held(L, 1, -1, "encode_jpeg", "image");
    return ltfL_run1(L, LTF_OP_ENCODE_JPEG, &x, 1, &a);
}

static int io_decode_raw(lua_State *L) {
    lua_settop(L, 4);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = ltfL_checkdtype(L, 2, "decode_raw", "out_type", -1);
    a.i[1] = lua_isnil(L, 3) ? 1 : lua_toboolean(L, 3);
    a.i[2] = luaL_optinteger(L, 4, 0);
    ltf_tensor *x = held(L, 1, -1, "decode_raw", "input_bytes");
    return ltfL_run1(L, LTF_OP_DECODE_RAW, &x, 1, &a);
}

static int io_decode_compressed(lua_State *L) {
    lua_settop(L, 2);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = luaL_optinteger(L, 2, 0);
    ltf_tensor *x = held(L, 1, -1, "decode_compressed", "bytes");
    return ltfL_run1(L, LTF_OP_DECODE_COMPRESSED, &x, 1, &a);
}

static int io_serialize_tensor(lua_State *L) {
    lua_settop(L, 1);
    ltf_tensor *x = held(L, 1, -1, "serialize_tensor", "tensor");
    return ltfL_run1(L, LTF_OP_SERIALIZE_TENSOR, &x, 1, NULL);
}

static int io_parse_tensor(lua_State *L) {
    lua_settop(L, 2);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = ltfL_checkdtype(L, 2, "parse_tensor", "out_type", -1);
    ltf_tensor *x = held(L, 1, -1, "parse_tensor", "serialized");
    return ltfL_run1(L, LTF_OP_PARSE_TENSOR, &x, 1, &a);
}

/* {==== file-system primitives */
static int fs_fail(lua_State *L, const char *path, int err) {
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", path, strerror(err));
    lua_pushstring(L, err == ENOENT || err == ENOTDIR ? "NotFoundError"
                      : err == EEXIST ? "AlreadyExistsError"
                      : err == EACCES || err == EPERM || err == ENOTEMPTY || err == EISDIR ? "FailedPreconditionError"
                      : "InvalidArgumentError");
    return 3;
}

static int fs_stat(lua_State *L) {
    const char *p = luaL_checkstring(L, 1);
    struct stat sb;
    if (stat(p, &sb) != 0) return fs_fail(L, p, errno);
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, (lua_Integer)sb.st_size);
    lua_setfield(L, -2, "length");
    lua_pushinteger(L, (lua_Integer)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec);
    lua_setfield(L, -2, "mtime_nsec");
    lua_pushboolean(L, S_ISDIR(sb.st_mode));
    lua_setfield(L, -2, "is_directory");
    lua_pushboolean(L, S_ISREG(sb.st_mode));
    lua_setfield(L, -2, "is_regular");
    return 1;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int fs_listdir(lua_State *L) {
    const char *p = luaL_checkstring(L, 1);
    DIR *d = opendir(p);
    if (!d) return fs_fail(L, p, errno);
    size_t n = 0, cap = 16;
    char **names = malloc(cap * sizeof *names);
    struct dirent *e;
    while (names && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
        if (n == cap) {
            char **q = realloc(names, (cap *= 2) * sizeof *names);
            if (!q) break;
            names = q;
        }
        names[n] = strdup(e->d_name);
        if (!names[n]) break;
        n++;
    }
    closedir(d);
    if (!names) return luaL_error(L, "listdir: out of memory");
    qsort(names, n, sizeof *names, cmp_str);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushstring(L, names[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
        free(names[i]);
    }
    free(names);
    return 1;
}

static int fs_mkdir(lua_State *L) {
    const char *p = luaL_checkstring(L, 1);
    if (mkdir(p, 0777) != 0) return fs_fail(L, p, errno);
    lua_pushboolean(L, 1);
    return 1;
}

static int fs_remove(lua_State *L) {
    const char *p = luaL_checkstring(L, 1);
    if (unlink(p) != 0) return fs_fail(L, p, errno);
    lua_pushboolean(L, 1);
    return 1;
}

static int fs_rmdir(lua_State *L) {
    const char *p = luaL_checkstring(L, 1);
    if (rmdir(p) != 0) return fs_fail(L, p, errno);
    lua_pushboolean(L, 1);
    return 1;
}

static int fs_rename(lua_State *L) {
    const char *s = luaL_checkstring(L, 1), *d = luaL_checkstring(L, 2);
    int overwrite = lua_toboolean(L, 3);
    struct stat sb;
    if (stat(s, &sb) != 0) return fs_fail(L, s, errno);
    if (!overwrite && stat(d, &sb) == 0) return fs_fail(L, d, EEXIST);
    if (rename(s, d) != 0) return fs_fail(L, errno == ENOENT ? d : s, errno);
    lua_pushboolean(L, 1);
    return 1;
}

static int fs_glob(lua_State *L) {
    const char *p = luaL_checkstring(L, 1);
    glob_t g;
    int rc = glob(p, 0, NULL, &g);
    lua_newtable(L);
    if (rc == 0)
        for (size_t i = 0; i < g.gl_pathc; i++) {
            lua_pushstring(L, g.gl_pathv[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
    if (rc == 0 || rc == GLOB_NOMATCH) globfree(&g);
    return 1;
}
/* }==== */

static const luaL_Reg internal_fns[] = {
    {"io_read_file", io_read_file}, {"io_write_file", io_write_file}, {"io_decode", io_decode},
    {"io_encode_png", io_encode_png}, {"io_encode_jpeg", io_encode_jpeg}, {"io_decode_raw", io_decode_raw},
    {"io_decode_compressed", io_decode_compressed}, {"io_serialize_tensor", io_serialize_tensor},
    {"io_parse_tensor", io_parse_tensor},
    {"fs_stat", fs_stat}, {"fs_listdir", fs_listdir}, {"fs_mkdir", fs_mkdir}, {"fs_remove", fs_remove},
    {"fs_rmdir", fs_rmdir}, {"fs_rename", fs_rename}, {"fs_glob", fs_glob},
    {NULL, NULL} };

void ltfL_open_io(lua_State *L) {
    ltfL_register(L, internal_fns, LTFL_INTERNAL);
}
