/*
** data.c: file readers for tf.data and tf.keras.datasets. read_idx(path)
** reads an IDX file, gzip-compressed or not (zlib's gzread passes plain
** files through unchanged), and parses it with ltf_idx_read (core/data.c).
** zlib (Debian's zlib1g) decompresses: a well-kept library rather than an
** inflate of our own.
*/
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "ltfL.h"
#include "ltf_data.h"

#define DATA_BUFFER "tf.data.buffer"

/* A growable byte buffer owned by a userdata, so a Lua error frees it. */
typedef struct data_buffer {
    unsigned char *p;
    size_t n, cap;
    gzFile f;
} data_buffer;

static int buffer_gc(lua_State *L) {
    data_buffer *b = lua_touserdata(L, 1);
    if (b->f) gzclose(b->f);
    b->f = NULL;
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    return 0;
}

/* core.internal.read_idx(path) -> tensor. [-0, +1, v] */
static int data_read_idx(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    data_buffer *b = lua_newuserdatauv(L, sizeof *b, 0);
    memset(b, 0, sizeof *b);
    if (luaL_newmetatable(L, DATA_BUFFER)) {
        lua_pushcfunction(L, buffer_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    errno = 0;
    b->f = gzopen(path, "rb");
    if (!b->f) {
        int e = errno;
        return ltfL_raisef(L, e == ENOENT ? LTF_ERR_NOT_FOUND : LTF_ERR_INVALID_ARGUMENT, "idx: %s: cannot open: %s",
                           path, e ? strerror(e) : "out of memory");
    }
    for (;;) {
        if (b->cap - b->n < 65536) {
            size_t cap = b->cap ? b->cap * 2 : 1 << 20;
            unsigned char *np = realloc(b->p, cap);
            if (!np) return ltfL_raisef(L, LTF_ERR_RESOURCE_EXHAUSTED, "idx: %s: out of memory reading the file", path);
            b->p = np;
            b->cap = cap;
        }
        size_t want = b->cap - b->n;
        if (want > (1u << 30)) want = 1u << 30;
        int got = gzread(b->f, b->p + b->n, (unsigned)want);
        if (got < 0) {
            int zerr;
            const char *msg = gzerror(b->f, &zerr);
            return ltfL_raisef(L, LTF_ERR_DATA_LOSS, "idx: %s: cannot read: %s", path,
                               zerr == Z_ERRNO ? strerror(errno) : (msg ? msg : "corrupt data"));
        }
        if (got == 0) break;
        b->n += (size_t)got;
    }
    {
        int zerr = Z_OK;
        const char *msg = gzerror(b->f, &zerr);
        if (zerr != Z_OK && zerr != Z_STREAM_END)
            return ltfL_raisef(L, LTF_ERR_DATA_LOSS, "idx: %s: cannot read: %s (a truncated or corrupt gzip file?)",
                               path, msg ? msg : "corrupt data");
    }
    gzclose(b->f);
    b->f = NULL;
    ltf_ctx *ctx = ltfL_ctx(L);
    ltf_tensor *t = NULL;
    ltf_status st = ltf_idx_read(ctx, b->p, b->n, path, &t);
    free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    ltfL_pushtensor(L, t);
    return 1;
}

/* {==== prefetch: a worker thread building batches of rows (core/data.c) */
#define DATA_PREFETCH "tf.data.Prefetcher"

typedef struct prefetch_box {
    ltf_prefetch *p;
    int nsrc;
} prefetch_box;

static int prefetch_gc(lua_State *L) {
    prefetch_box *b = lua_touserdata(L, 1);
    ltf_prefetch_free(b->p);
    b->p = NULL;
    return 0;
}

/* core.internal.prefetch_start(sources, rows, batch, drop_remainder, depth):
** 'sources' an array of tensors, 'rows' an array of 1-based row indices. */
static int data_prefetch_start(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_Integer batch = luaL_checkinteger(L, 3);
    int drop = lua_toboolean(L, 4);
    lua_Integer depth = luaL_checkinteger(L, 5);
    int nsrc = ltfL_checkcount(L, 1, "prefetch", "sources");
    lua_Integer nrows = (lua_Integer)lua_rawlen(L, 2);
    if (nsrc < 1 || nsrc > 4096) return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "prefetch: 1 to 4096 sources");
    /* scratch owned by userdata: sources and rows */
    ltf_tensor **src = lua_newuserdatauv(L, (size_t)nsrc * sizeof *src, 0);
    int64_t *rows = lua_newuserdatauv(L, (size_t)(nrows > 0 ? nrows : 1) * sizeof *rows, 0);
    for (int i = 0; i < nsrc; i++) {
        lua_rawgeti(L, 1, i + 1);
        src[i] = ltfL_checktensor(L, -1, "prefetch", "sources");
        lua_pop(L, 1);   /* the table keeps it alive */
    }
    for (lua_Integer i = 0; i < nrows; i++) {
        lua_rawgeti(L, 2, i + 1);
        int ok = 0;
        lua_Integer r = lua_tointegerx(L, -1, &ok);
        lua_pop(L, 1);
        if (!ok) return ltfL_raisef(L, LTF_ERR_TYPE, "prefetch: rows[%lld] is not an integer", (long long)i + 1);
        rows[i] = (int64_t)r - 1;
    }
    prefetch_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->p = NULL;
    b->nsrc = nsrc;
    if (luaL_newmetatable(L, DATA_PREFETCH)) {
        lua_pushcfunction(L, prefetch_gc);
        lua_setfield(L, -2, "__gc");
        lua_pushcfunction(L, prefetch_gc);
        lua_setfield(L, -2, "__close");
    }
    lua_setmetatable(L, -2);
    ltf_ctx *ctx = ltfL_ctx(L);
    ltf_status st = ltf_prefetch_new(ctx, src, nsrc, rows, (int64_t)nrows, (int64_t)batch, drop, (int)depth, &b->p);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    return 1;
}

/* core.internal.prefetch_next(p) -> the next batch's tensors, or nothing. */
static int data_prefetch_next(lua_State *L) {
    prefetch_box *b = luaL_testudata(L, 1, DATA_PREFETCH);
    if (!b) return ltfL_argerror(L, 1, "prefetch_next", "prefetcher", "tf.data.Prefetcher");
    if (!b->p) return 0;
    if (!lua_checkstack(L, b->nsrc + 4)) return ltfL_raisef(L, LTF_ERR_RESOURCE_EXHAUSTED, "prefetch: stack");
    ltf_tensor *out[64];
    ltf_tensor **o = out;
    if (b->nsrc > 64) {
        o = lua_newuserdatauv(L, (size_t)b->nsrc * sizeof *o, 0);
    }
    int done = 0;
    ltf_status st = ltf_prefetch_next(b->p, o, &done);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    if (done) {
        ltf_prefetch_free(b->p);   /* the worker has ended: free it now */
        b->p = NULL;
        return 0;
    }
    /* as ltfL_pushtensor documents: only an out-of-memory while boxing could leak the remaining ones */
    for (int i = 0; i < b->nsrc; i++) ltfL_pushtensor(L, o[i]);
    return b->nsrc;
}
/* }==== */

static const luaL_Reg data_internal[] = {
    {"read_idx", data_read_idx},
    {"prefetch_start", data_prefetch_start},
    {"prefetch_next", data_prefetch_next},
    {NULL, NULL}
};

void ltfL_open_csv(lua_State *L);   /* bindings/csv.c: CSV and file-dataset readers */
void ltfL_open_data(lua_State *L) {
    ltfL_register(L, data_internal, LTFL_INTERNAL);
    ltfL_open_csv(L);
}
