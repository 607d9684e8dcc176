/*
** checkpoint.c: Lua bindings of the checkpoint files (core/checkpoint.c):
** atomic writes, CRC32C, reading a mapped file and restoring variables from
** it, and the byte packing of string tensors. The object graph, the JSON
** header (lua-cjson) and the API are lua/tf/train/checkpoint.lua.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "ltfL.h"

#define LTFL_CKPT "tf.CheckpointFile"

typedef struct ckpt_box { ltf_ckpt_file *f; } ckpt_box;

static ltf_ckpt_file *checkfile(lua_State *L, int idx) {
    ckpt_box *b = luaL_checkudata(L, idx, LTFL_CKPT);
    if (!b->f) ltfL_raise(L, LTF_ERR_FAILED_PRECONDITION, "checkpoint: the file is closed");
    return b->f;
}

static uint64_t checku64(lua_State *L, int idx, const char *what) {
    int ok;
    lua_Integer v = lua_tointegerx(L, idx, &ok);
    if (!ok || v < 0) ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "checkpoint: %s must be a non-negative integer", what);
    return (uint64_t)v;
}

/* Scratch arrays owned by the collector (safe across errors). */
static void *scratch(lua_State *L, size_t n) { return lua_newuserdatauv(L, n ? n : 1, 0); }

/* tensors (array) and begins (array) at 'ti', 'bi' -> n; fills the arrays. */
static int getlayout(lua_State *L, int ti, int bi, ltf_tensor ***ts, uint64_t **bs) {
    luaL_checktype(L, ti, LUA_TTABLE);
    luaL_checktype(L, bi, LUA_TTABLE);
    int n = ltfL_checkcount(L, ti, "checkpoint", "tensors");
    if (ltfL_checkcount(L, bi, "checkpoint", "begins") != n)
        ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "checkpoint: tensors and offsets differ in length");
    *ts = scratch(L, sizeof(ltf_tensor *) * (size_t)n);
    *bs = scratch(L, sizeof(uint64_t) * (size_t)n);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, ti, i + 1);
        (*ts)[i] = ltfL_testtensor(L, -1);
        if (!(*ts)[i]) ltfL_raisef(L, LTF_ERR_TYPE, "checkpoint: entry %d is not a tensor", i + 1);
        lua_pop(L, 1);  /* still referenced by the table */
        lua_rawgeti(L, bi, i + 1);
        (*bs)[i] = checku64(L, -1, "an offset");
        lua_pop(L, 1);
    }
    return n;
}

/* core.ckpt_crc32c(tensors, begins, data_size) -> crc (integer) */
static int l_data_crc(lua_State *L) {
    ltf_tensor **ts;
    uint64_t *bs;
    int n = getlayout(L, 1, 2, &ts, &bs);
    uint64_t size = checku64(L, 3, "data_size");
    uint32_t c = 0;
    ltf_status st = ltf_ckpt_data_crc32c(ltfL_ctx(L), ts, bs, n, size, &c);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    lua_pushinteger(L, (lua_Integer)c);
    return 1;
}

/* core.ckpt_write(path, header, tensors, begins, data_size [, crc_at]): crc_at
** is the 1-based position in the header of 8 characters the data's CRC32C
** replaces (hex). */
static int l_write(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    size_t hlen;
    const char *header = luaL_checklstring(L, 2, &hlen);
    ltf_tensor **ts;
    uint64_t *bs;
    int n = getlayout(L, 3, 4, &ts, &bs);
    uint64_t size = checku64(L, 5, "data_size");
    size_t crc_at = (size_t)-1;
    if (!lua_isnoneornil(L, 6)) {
        lua_Integer at = luaL_checkinteger(L, 6);
        if (at < 1 || (uint64_t)at > hlen) return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "checkpoint: crc_at outside the header");
        crc_at = (size_t)(at - 1);
    }
    ltf_status st = ltf_ckpt_write(ltfL_ctx(L), path, header, hlen, crc_at, ts, bs, n, size);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

/* core.file_write_atomic(path, bytes) */
static int l_write_file(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    size_t n;
    const char *s = luaL_checklstring(L, 2, &n);
    ltf_status st = ltf_file_write_atomic(ltfL_ctx(L), path, s, n);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

/* core.crc32c(string [, crc]) -> integer */
static int l_crc32c(lua_State *L) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    uint32_t c = (uint32_t)luaL_optinteger(L, 2, 0);
    lua_pushinteger(L, (lua_Integer)ltf_crc32c(c, s, n));
    return 1;
}

/* core.ckpt_open(path) -> file; core.ckpt_open_string(bytes) -> file */
static int pushfile(lua_State *L, ckpt_box *b, ltf_ckpt_file *f) {
    if (!f) return ltfL_raisectx(L, ltf_ctx_status(ltfL_ctx(L)));
    b->f = f;
    return 1;
}
static ckpt_box *newfile(lua_State *L) {
    ckpt_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->f = NULL;
    luaL_setmetatable(L, LTFL_CKPT);
    return b;
}
static int l_open(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    ckpt_box *b = newfile(L);
    return pushfile(L, b, ltf_ckpt_open(ltfL_ctx(L), path));
}
static int l_open_string(lua_State *L) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    ckpt_box *b = newfile(L);
    return pushfile(L, b, ltf_ckpt_open_memory(ltfL_ctx(L), s, n));
}

static int l_close(lua_State *L) {
    ckpt_box *b = luaL_checkudata(L, 1, LTFL_CKPT);
    ltf_ckpt_close(b->f);
    b->f = NULL;
    return 0;
}

/* core.ckpt_header(file) -> json string, data size */
static int l_header(lua_State *L) {
    ltf_ckpt_file *f = checkfile(L, 1);
    size_t n;
    const char *h = ltf_ckpt_header(f, &n);
    lua_pushlstring(L, h, n);
    lua_pushinteger(L, (lua_Integer)ltf_ckpt_data_size(f));
    return 2;
}

/* core.ckpt_verify(file, crc) */
static int l_verify(lua_State *L) {
    ltf_ckpt_file *f = checkfile(L, 1);
    lua_Integer c = luaL_checkinteger(L, 2);
    ltf_status st = ltf_ckpt_verify(ltfL_ctx(L), f, (uint32_t)c);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

/* core.ckpt_magic() -> LTF_CKPT_MAGIC, the start of a luatf checkpoint's header */
static int l_magic(lua_State *L) {
    lua_pushliteral(L, LTF_CKPT_MAGIC);
    return 1;
}

/* core.ckpt_verified(file) -> true for a luatf checkpoint (checksum verified at open), false for a plain file */
static int l_verified(lua_State *L) {
    lua_pushboolean(L, ltf_ckpt_verified(checkfile(L, 1)));
    return 1;
}

/* core.ckpt_check_json(text [, what]): DataLossError on a repeated key in an object (or text that is not JSON) */
static int l_check_json(lua_State *L) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    const char *what = luaL_optstring(L, 2, "the header");
    ltf_status st = ltf_ckpt_check_json(ltfL_ctx(L), s, n, what);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

/* core.ckpt_check_layout(file, {{begin, end, bytes}, ...}) */
static int l_check_layout(lua_State *L) {
    ltf_ckpt_file *f = checkfile(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    int n = ltfL_checkcount(L, 2, "checkpoint", "spans");
    ltf_ckpt_span *sp = scratch(L, sizeof *sp * (size_t)n);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, 2, i + 1);
        luaL_checktype(L, -1, LUA_TTABLE);
        lua_rawgeti(L, -1, 1);
        sp[i].begin = checku64(L, -1, "a data offset");
        lua_rawgeti(L, -2, 2);
        sp[i].end = checku64(L, -1, "a data offset");
        lua_rawgeti(L, -3, 3);
        sp[i].bytes = checku64(L, -1, "a byte count");
        lua_pop(L, 4);
    }
    ltf_status st = ltf_ckpt_check_layout(ltfL_ctx(L), f, sp, n);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

/* core.ckpt_read(file, dtype id, dims, begin) -> tensor */
static int l_read(lua_State *L) {
    ltf_ckpt_file *f = checkfile(L, 1);
    lua_Integer dt = luaL_checkinteger(L, 2);
    int64_t dims[LTF_MAX_RANK];
    int rank = ltfL_checkintlist(L, 3, "checkpoint", "shape", dims, LTF_MAX_RANK, 0);
    uint64_t begin = checku64(L, 4, "a data offset");
    if (dt < 0 || dt >= LTF_DTYPE_COUNT) return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "checkpoint: bad dtype");
    ltfL_box *b = ltfL_newbox(L);
    ltf_tensor *t = ltf_ckpt_read(ltfL_ctx(L), f, (ltf_dtype)dt, rank, dims, begin);
    if (!t) return ltfL_raisectx(L, ltf_ctx_status(ltfL_ctx(L)));
    ltfL_fillbox(L, b, t);
    return 1;
}

/* core.ckpt_restore(file, handles, begins) */
static int l_restore(lua_State *L) {
    ltf_ckpt_file *f = checkfile(L, 1);
    ltf_tensor **ts;
    uint64_t *bs;
    int n = getlayout(L, 2, 3, &ts, &bs);
    ltf_status st = ltf_ckpt_restore(ltfL_ctx(L), f, ts, bs, n);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 0;
}

/* core.ckpt_pack_strings(t) -> uint8 tensor: n little-endian u64 lengths, then the bytes */
static int l_pack_strings(lua_State *L) {
    ltf_tensor *t = ltfL_checktensor(L, 1, "checkpoint", "tensor");
    if (ltf_tensor_dtype(t) != LTF_DTYPE_STRING || ltf_tensor_is_symbolic(t))
        return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "checkpoint: pack_strings needs a concrete string tensor");
    int64_t n = ltf_tensor_num_elements(t);
    const ltf_string *const *s = ltf_tensor_data(t);
    uint64_t total = 8 * (uint64_t)n;
    for (int64_t i = 0; i < n; i++) total += s[i] ? s[i]->len : 0;
    int64_t dims[1] = { (int64_t)total };
    ltfL_box *b = ltfL_newbox(L);
    ltf_tensor *out = ltf_tensor_new(ltfL_ctx(L), LTF_DTYPE_UINT8, 1, dims);
    if (!out) return ltfL_raisectx(L, ltf_ctx_status(ltfL_ctx(L)));
    ltfL_fillbox(L, b, out);
    unsigned char *p = ltf_tensor_data(out), *q = p + 8 * (size_t)n;
    for (int64_t i = 0; i < n; i++) {
        uint64_t len = s[i] ? s[i]->len : 0;
        for (int k = 0; k < 8; k++) p[8 * i + k] = (unsigned char)(len >> (8 * k));
        if (len) memcpy(q, s[i]->bytes, (size_t)len);
        q += len;
    }
    return 1;
}

/* core.ckpt_unpack_strings(u8 tensor, dims) -> string tensor (DataLossError when the bytes disagree) */
static int l_unpack_strings(lua_State *L) {
    ltf_tensor *t = ltfL_checktensor(L, 1, "checkpoint", "tensor");
    int64_t dims[LTF_MAX_RANK];
    int rank = ltfL_checkintlist(L, 2, "checkpoint", "shape", dims, LTF_MAX_RANK, 0);
    if (ltf_tensor_dtype(t) != LTF_DTYPE_UINT8 || ltf_tensor_rank(t) != 1)
        return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "checkpoint: unpack_strings needs a uint8 vector");
    const unsigned char *p = ltf_tensor_data(t);
    uint64_t size = (uint64_t)ltf_tensor_num_elements(t);
    uint64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0 || (dims[i] && n > size / (uint64_t)dims[i]))
            return ltfL_raise(L, LTF_ERR_DATA_LOSS, "checkpoint: a string tensor's shape does not fit its bytes");
        n *= (uint64_t)dims[i];
    }
    if (n > size / 8) return ltfL_raise(L, LTF_ERR_DATA_LOSS, "checkpoint: a string tensor's lengths are truncated");
    uint64_t at = 8 * n;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len = 0;
        for (int k = 0; k < 8; k++) len |= (uint64_t)p[8 * i + k] << (8 * k);
        if (len > size - at) return ltfL_raise(L, LTF_ERR_DATA_LOSS, "checkpoint: a string's length runs past its bytes");
        at += len;
    }
    if (at != size) return ltfL_raise(L, LTF_ERR_DATA_LOSS, "checkpoint: a string tensor has trailing bytes");
    ltfL_box *b = ltfL_newbox(L);
    ltf_tensor *out = ltf_tensor_new(ltfL_ctx(L), LTF_DTYPE_STRING, rank, dims);
    if (!out) return ltfL_raisectx(L, ltf_ctx_status(ltfL_ctx(L)));
    ltfL_fillbox(L, b, out);
    ltf_string **dst = ltf_tensor_data(out);
    at = 8 * n;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t len = 0;
        for (int k = 0; k < 8; k++) len |= (uint64_t)p[8 * i + k] << (8 * k);
        if (len) {
            dst[i] = ltf_string_new((const char *)p + at, (size_t)len);
            if (!dst[i]) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "checkpoint: out of memory for a string");
        }
        at += len;
    }
    return 1;
}

/* core.ckpt_var_info(handle) -> dtype id, dims of the current value (no
** tensor is made: a view would keep the value from being restored in place) */
static int l_var_info(lua_State *L) {
    ltf_tensor *h = ltfL_checktensor(L, 1, "checkpoint", "handle");
    if (ltf_tensor_dtype(h) != LTF_DTYPE_RESOURCE) return ltfL_argerror(L, 1, "checkpoint", "handle", "variable handle");
    ltf_tensor *v = ltf_variable_peek(h);
    if (!v) return ltfL_raisectx(L, ltf_ctx_status(ltfL_ctx(L)));
    int rank = ltf_tensor_rank(v);
    const int64_t *dims = ltf_tensor_dims(v);
    lua_pushinteger(L, (lua_Integer)ltf_tensor_dtype(v));
    lua_createtable(L, rank > 0 ? rank : 0, 0);
    for (int i = 0; i < rank; i++) {
        lua_pushinteger(L, (lua_Integer)dims[i]);
        lua_rawseti(L, -2, i + 1);
    }
    ltf_tensor_release(v);
    return 2;
}

/* core.mkdir_p(path): create a directory and its parents (as mkdir -p) */
static int l_mkdir_p(lua_State *L) {
    size_t n;
    const char *path = luaL_checklstring(L, 1, &n);
    char *p = lua_newuserdatauv(L, n + 1, 0);
    memcpy(p, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0') continue;
        char c = p[i];
        p[i] = '\0';
        if (mkdir(p, 0777) != 0 && errno != EEXIST) {
            int e = errno;
            p[i] = c;
            return ltfL_raisef(L, e == EACCES || e == EROFS ? LTF_ERR_FAILED_PRECONDITION : LTF_ERR_NOT_FOUND,
                               "checkpoint: cannot create directory '%s': %s", path, strerror(e));
        }
        p[i] = c;
    }
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return ltfL_raisef(L, LTF_ERR_FAILED_PRECONDITION, "checkpoint: '%s' is not a directory", path);
    return 0;
}

static const luaL_Reg ckpt_fns[] = {
    {"mkdir_p", l_mkdir_p},
    {"ckpt_var_info", l_var_info},
    {"ckpt_crc32c", l_data_crc},
    {"ckpt_write", l_write},
    {"file_write_atomic", l_write_file},
    {"crc32c", l_crc32c},
    {"ckpt_open", l_open},
    {"ckpt_open_string", l_open_string},
    {"ckpt_close", l_close},
    {"ckpt_header", l_header},
    {"ckpt_verify", l_verify},
    {"ckpt_verified", l_verified},
    {"ckpt_magic", l_magic},
    {"ckpt_check_json", l_check_json},
    {"ckpt_check_layout", l_check_layout},
    {"ckpt_read", l_read},
    {"ckpt_restore", l_restore},
    {"ckpt_pack_strings", l_pack_strings},
    {"ckpt_unpack_strings", l_unpack_strings},
    {NULL, NULL}
};

static int file_gc(lua_State *L) {
    ckpt_box *b = luaL_checkudata(L, 1, LTFL_CKPT);
    ltf_ckpt_close(b->f);
    b->f = NULL;
    return 0;
}

void ltfL_open_checkpoint(lua_State *L) {
    luaL_newmetatable(L, LTFL_CKPT);
    lua_pushcfunction(L, file_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    ltfL_register(L, ckpt_fns, LTFL_INTERNAL);
}
