/*
** csv.c: Lua bindings of the file readers of tf.data's file datasets and of
** CSV (core/csv.c): tf.core.internal.
**   decode_csv(records, select_cols, delim, use_quote, na_value, defaults...)
**       -> one tensor per column (the decode_csv op, ltf_ops/csv.h)
**   csv_read(path, compression, delim, use_quote, na_value, header, select_cols, defaults...)
**       -> one vector per column (the whole file, ltf_csv_parse)
**   read_lines(path, compression) -> string vector of the file's lines (LF or
**       CRLF removed; a last line without LF counts)
**   read_fixed(path, record_bytes, header_bytes, footer_bytes, compression)
**       -> string vector of the records
**   read_bytes(path, compression) -> the (decompressed) file as a Lua string
** compression: "" (none), "GZIP" or "ZLIB" (zlib's inflate, which detects
** either header; concatenated gzip members are read in turn).
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <glob.h>
#include <pthread.h>
#include <stdint.h>
#include <zlib.h>
#include "ltfL.h"
#include "ltf_data.h"
#include "readpool.h"

#define CSV_BUFFER "tf.data.filebuffer"

typedef struct fbuf {
    unsigned char *p;
    size_t n, cap;
    size_t maplen;   /* > 0: p is the file mapped read-only (a plain regular file), not malloc'd */
} fbuf;

static void fbuf_free(fbuf *b) {
    if (b->maplen) munmap(b->p, b->maplen);
    else free(b->p);
    memset(b, 0, sizeof *b);
}

static int fbuf_gc(lua_State *L) {
    fbuf_free(lua_touserdata(L, 1));
    return 0;
}

static fbuf *new_fbuf(lua_State *L) {
    fbuf *b = lua_newuserdatauv(L, sizeof *b, 0);
    memset(b, 0, sizeof *b);
    if (luaL_newmetatable(L, CSV_BUFFER)) {
        lua_pushcfunction(L, fbuf_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    return b;
}

static int grow(fbuf *b, size_t need) {
    if (b->cap - b->n >= need) return 1;
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap - b->n < need) cap *= 2;
    unsigned char *np = realloc(b->p, cap);
    if (!np) return 0;
    b->p = np;
    b->cap = cap;
    return 1;
}

/* Read 'path' whole into 'out' (plain C: it also runs on read-ahead
** threads), inflating it for GZIP/ZLIB. 0 on success; otherwise the error
** code, with the message in 'err'. */
static ltf_status read_file_c(const char *what, const char *path, const char *comp, fbuf *out, char *err,
                              size_t errsz) {
    int z = 0;
    fbuf raw = {0};
    if (strcmp(comp, "GZIP") == 0 || strcmp(comp, "ZLIB") == 0) z = 1;
    else if (comp[0] != 0) {
        snprintf(err, errsz, "%s: compression_type must be \"\", \"GZIP\" or \"ZLIB\", got \"%s\"", what, comp);
        return LTF_ERR_INVALID_ARGUMENT;
    }
    errno = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        snprintf(err, errsz, "%s: %s: cannot open: %s", what, path, strerror(e));
        return e == ENOENT ? LTF_ERR_NOT_FOUND : LTF_ERR_INVALID_ARGUMENT;
    }
    struct stat sb;
    int regular = fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode);
    /* a plain regular file is mapped, not copied: the readers only read it
    ** (the pages come from the page cache, with no copy and no fresh memory
    ** to fault in; a file truncated while it is parsed faults, as any mapping) */
    if (!z && regular && sb.st_size > 0 && (uint64_t)sb.st_size < (uint64_t)SIZE_MAX / 2) {
        void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fileno(f), 0);
        if (m != MAP_FAILED) {
            madvise(m, (size_t)sb.st_size, MADV_SEQUENTIAL | MADV_WILLNEED);
            fclose(f);
            out->p = m;
            out->n = out->maplen = (size_t)sb.st_size;
            out->cap = 0;
            return LTF_OK;
        }
    }
    int oom = regular && !grow(&raw, (size_t)sb.st_size + 1);
    while (!oom) {
        if (raw.cap - raw.n < 4096 && !grow(&raw, 1 << 20)) { oom = 1; break; }
        size_t k = fread(raw.p + raw.n, 1, raw.cap - raw.n, f);
        raw.n += k;
        if (k == 0) break;
    }
    int rerr = ferror(f);
    fclose(f);
    if (oom) {
        free(raw.p);
        snprintf(err, errsz, "%s: %s: out of memory", what, path);
        return LTF_ERR_RESOURCE_EXHAUSTED;
    }
    if (rerr) {
        free(raw.p);
        snprintf(err, errsz, "%s: %s: read error", what, path);
        return LTF_ERR_DATA_LOSS;
    }
    if (!z) {
        *out = raw;
        return LTF_OK;
    }
    fbuf o = {0};
    size_t pos = 0;
    ltf_status st = LTF_OK;
    while (pos < raw.n && st == LTF_OK) {   /* one zlib/gzip stream per loop: gzip files may hold several members */
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        if (inflateInit2(&zs, 15 + 32) != Z_OK) {
            snprintf(err, errsz, "%s: zlib init failed", what);
            st = LTF_ERR_RESOURCE_EXHAUSTED;
            break;
        }
        zs.next_in = raw.p + pos;
        zs.avail_in = (uInt)(raw.n - pos > 0x40000000u ? 0x40000000u : raw.n - pos);
        int r;
        do {
            if (!grow(&o, 1 << 20)) { r = Z_MEM_ERROR; break; }
            zs.next_out = o.p + o.n;
            zs.avail_out = (uInt)(o.cap - o.n);
            r = inflate(&zs, Z_NO_FLUSH);
            o.n = o.cap - zs.avail_out;
            if (zs.avail_in == 0 && r == Z_BUF_ERROR) break;
        } while (r == Z_OK);
        size_t used = (size_t)(zs.next_in - (raw.p + pos));
        if (r != Z_STREAM_END) {
            snprintf(err, errsz, "%s: %s: corrupt or truncated %s data (zlib: %s)", what, path, comp,
                     r == Z_MEM_ERROR ? "out of memory" : r == Z_BUF_ERROR ? "unexpected end of data"
                                                        : (zs.msg ? zs.msg : "error"));
            st = r == Z_MEM_ERROR ? LTF_ERR_RESOURCE_EXHAUSTED : LTF_ERR_DATA_LOSS;
        }
        inflateEnd(&zs);
        pos += used;
        if (used == 0) break;
    }
    free(raw.p);
    if (st != LTF_OK) {
        free(o.p);
        return st;
    }
    *out = o;
    return LTF_OK;
}

/* {==== read-ahead: a file read (and inflated) on a worker thread
** file_prefetch(path, compression) starts a thread reading the file into
** plain memory (no tensors, no context: nothing of the Lua state is
** touched); the readers below accept that handle in place of a path and
** join the thread, so the next file's I/O and decompression overlap the
** consumption of the current one (lua/tf/data/files.lua). */
#define READAHEAD "tf.data.readahead"
typedef struct readahead {
    ltfL_rjob job;         /* first: the pool's view */
    int done;              /* under the pool's lock */
    char *path, *comp;
    fbuf buf;
    ltf_status st;
    char err[600];
} readahead;

static int readahead_runnable(ltfL_rjob *j) {
    readahead *r = (readahead *)j;
    return !r->done;
}
static void readahead_produce(ltfL_rjob *j) {
    readahead *r = (readahead *)j;
    r->st = read_file_c("read", r->path, r->comp, &r->buf, r->err, sizeof r->err);
}
static void readahead_publish(ltfL_rjob *j) { ((readahead *)j)->done = 1; }

/* Wait for the read (it ran, or it runs now); the job leaves its pool. */
static void readahead_join(readahead *r) {
    ltfL_rpool *p = r->job.pool;
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    while (!r->done) ltfL_rpool_wait(&r->job);
    pthread_mutex_unlock(&p->mu);
    ltfL_rpool_detach(&r->job);
}

static int readahead_gc(lua_State *L) {
    readahead *r = lua_touserdata(L, 1);
    ltfL_rpool_detach(&r->job);   /* waits for a read under way */
    fbuf_free(&r->buf);
    free(r->path);
    free(r->comp);
    memset(r, 0, sizeof *r);
    return 0;
}

/* file_prefetch(path, compression [, pool]): the read runs on the pool's threads (on a thread of its own without one) */
static int l_file_prefetch(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    size_t cl;
    const char *comp = lua_isnoneornil(L, 2) ? "" : luaL_checklstring(L, 2, &cl);
    ltfL_rpool *pool = ltfL_optpool(L, 3);
    readahead *r = lua_newuserdatauv(L, sizeof *r, 0);
    memset(r, 0, sizeof *r);
    if (luaL_newmetatable(L, READAHEAD)) {
        lua_pushcfunction(L, readahead_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    r->job.runnable = readahead_runnable;
    r->job.produce = readahead_produce;
    r->job.publish = readahead_publish;
    r->path = strdup(path);
    r->comp = strdup(comp);
    if (!r->path || !r->comp) return ltfL_raisef(L, LTF_ERR_RESOURCE_EXHAUSTED, "file_prefetch: out of memory");
    if (pool) ltfL_rpool_attach(pool, &r->job);
    else if ((pool = ltfL_rpool_new(1)) != NULL) {
        ltfL_rpool_attach(pool, &r->job);
        ltfL_rpool_release(pool);
    } else r->st = read_file_c("read", r->path, r->comp, &r->buf, r->err, sizeof r->err);   /* no thread: read here */
    return 1;
}

/* file_prefetch_close(handle): drop the read now (waits for it if under way); the handle is then empty */
static int l_file_prefetch_close(lua_State *L) {
    luaL_checkudata(L, 1, READAHEAD);
    return readahead_gc(L);
}

/* file_ready(handle) -> whether the read has ended (interleave's deterministic = false) */
static int l_file_ready(lua_State *L) {
    readahead *r = luaL_checkudata(L, 1, READAHEAD);
    ltfL_rpool *p = r->job.pool;
    int done = 1;
    if (p) {
        pthread_mutex_lock(&p->mu);
        done = r->done;
        pthread_mutex_unlock(&p->mu);
    }
    lua_pushboolean(L, done);
    return 1;
}
/* }==== */

/* The file at argument 'idx' (a path, or a file_prefetch handle, whose
** bytes are taken) read whole into a new buffer (pushed). [-0, +1, e] */
static fbuf *read_whole_at(lua_State *L, const char *what, int idx, const char *comp) {
    fbuf *b = new_fbuf(L);
    readahead *r = luaL_testudata(L, idx, READAHEAD);
    char err[600];
    ltf_status st;
    if (r) {
        readahead_join(r);
        st = r->st;
        if (st == LTF_OK) {
            *b = r->buf;
            memset(&r->buf, 0, sizeof r->buf);
        } else {
            /* the message names "read": say which reader */
            snprintf(err, sizeof err, "%s%s", what, r->err + 4);
        }
    } else {
        st = read_file_c(what, luaL_checkstring(L, idx), comp, b, err, sizeof err);
    }
    if (st != LTF_OK) ltfL_raisef(L, st, "%s", err);
    return b;
}

static fbuf *read_whole(lua_State *L, const char *what, const char *path, const char *comp) {
    fbuf *b = new_fbuf(L);
    char err[600];
    ltf_status st = read_file_c(what, path, comp, b, err, sizeof err);
    if (st != LTF_OK) ltfL_raisef(L, st, "%s", err);
    return b;
}

/* An option string from a Lua value (nil: ""). */
static const char *optstr(lua_State *L, int idx, size_t *len) {
    if (lua_isnoneornil(L, idx)) { *len = 0; return ""; }
    return luaL_checklstring(L, idx, len);
}

static ltf_csv_options options(lua_State *L, const char *what, int idelim, int iquote, int ina) {
    size_t dl, nl;
    const char *d = optstr(L, idelim, &dl);
    if (dl != 1) ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: field_delim must be one character, got \"%s\"", what, d);
    const char *na = optstr(L, ina, &nl);
    ltf_csv_options o = {d[0], lua_toboolean(L, iquote), na, nl, 0};
    if (o.use_quote && o.delim == '"')
        ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "%s: field_delim cannot be '\"' when use_quote_delim is true", what);
    return o;
}

/* decode_csv(records, select_cols, delim, use_quote, na_value, defaults...) */
static int csv_decode(lua_State *L) {
    int top = lua_gettop(L);
    if (top < 6) return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "decode_csv: record_defaults must not be empty");
    ltf_csv_options o = options(L, "decode_csv", 3, 4, 5);
    if (o.na_len >= LTF_ATTR_STR_MAX || strlen(o.na_value) != o.na_len)
        return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "decode_csv: na_value must have at most %d bytes and no NUL",
                           LTF_ATTR_STR_MAX - 1);
    ltf_attrs a;
    ltf_attrs_init(&a);
    a.i[0] = (unsigned char)o.delim;
    a.i[1] = o.use_quote;
    memcpy(a.s, o.na_value, o.na_len);
    int n = top - 3;
    ltf_tensor **in = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)n, 0);
    in[0] = ltfL_checktensor(L, 1, "decode_csv", "records");
    in[1] = ltfL_checktensor(L, 2, "decode_csv", "select_cols");
    for (int c = 6; c <= top; c++) in[c - 4] = ltfL_checktensor(L, c, "decode_csv", "record_defaults");
    return ltfL_runn(L, LTF_OP_DECODE_CSV, in, n, &a);
}

/* csv_read(path, compression, delim, use_quote, na_value, header, select_cols, defaults...) */
static int csv_read(lua_State *L) {
    int top = lua_gettop(L);
    const char *path = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : NULL;
    size_t cl;
    const char *comp = optstr(L, 2, &cl);
    ltf_csv_options o = options(L, "CsvDataset", 3, 4, 5);
    o.header = lua_toboolean(L, 6);
    ltf_tensor *sel = ltfL_checktensor(L, 7, "CsvDataset", "select_cols");
    int ncols = top - 7;
    if (ncols < 1) return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "CsvDataset: record_defaults must not be empty");
    ltf_tensor **dfl = lua_newuserdatauv(L, sizeof(ltf_tensor *) * (size_t)ncols * 2, 0);
    ltf_tensor **out = dfl + ncols;
    for (int c = 0; c < ncols; c++) dfl[c] = ltfL_checktensor(L, 8 + c, "CsvDataset", "record_defaults");
    int64_t nsel = ltf_tensor_num_elements(sel);
    const int64_t *sp = nsel > 0 ? ltf_tensor_data(sel) : NULL;
    fbuf *b = read_whole_at(L, "CsvDataset", 1, comp);
    if (!path) path = ((readahead *)lua_touserdata(L, 1))->path;
    int64_t nrec = 0;
    ltf_status st = ltf_csv_parse(ltfL_ctx(L), (const char *)b->p, b->n, &o, dfl, ncols, sp, (int)nsel, path, out,
                                  &nrec);
    if (st != LTF_OK) return ltfL_raisectx(L, st);
    luaL_checkstack(L, ncols + 4, "CsvDataset: too many columns");
    for (int c = 0; c < ncols; c++) ltfL_pushtensor(L, out[c]);
    return ncols;
}

static ltf_tensor *string_vector(lua_State *L, int64_t n) {
    ltf_tensor *t = ltf_tensor_new(ltfL_ctx(L), LTF_DTYPE_STRING, 1, &n);
    if (!t) ltfL_raisectx(L, LTF_ERR_RESOURCE_EXHAUSTED);
    ltfL_pushtensor(L, t);   /* owned by Lua from here: an error below frees it */
    return t;
}

static void set_str(lua_State *L, ltf_tensor *t, int64_t i, const unsigned char *p, size_t n) {
    if (n == 0) return;
    ltf_string *s = ltf_string_new((const char *)p, n);
    if (!s) ltfL_raisef(L, LTF_ERR_RESOURCE_EXHAUSTED, "out of memory");
    ((ltf_string **)ltf_tensor_data(t))[i] = s;
}

/* read_lines(path, compression) */
static int read_lines(lua_State *L) {
    size_t cl;
    fbuf *b = read_whole_at(L, "TextLineDataset", 1, optstr(L, 2, &cl));
    const unsigned char *p = b->p, *e = b->p + b->n;
    int64_t n = 0;
    for (const unsigned char *q = p; q < e;) {
        const unsigned char *nl = memchr(q, '\n', (size_t)(e - q));
        n++;
        q = nl ? nl + 1 : e;
    }
    ltf_tensor *t = string_vector(L, n);
    int64_t i = 0;
    for (const unsigned char *q = p; q < e; i++) {
        const unsigned char *nl = memchr(q, '\n', (size_t)(e - q));
        const unsigned char *end = nl ? nl : e;
        size_t len = (size_t)(end - q);
        if (len > 0 && q[len - 1] == '\r') len--;
        set_str(L, t, i, q, len);
        q = nl ? nl + 1 : e;
    }
    return 1;
}

/* read_fixed(path, record_bytes, header_bytes, footer_bytes, compression) */
static int read_fixed(lua_State *L) {
    const char *path = lua_type(L, 1) == LUA_TSTRING ? lua_tostring(L, 1) : NULL;
    lua_Integer rb = luaL_checkinteger(L, 2), hb = luaL_optinteger(L, 3, 0), fb = luaL_optinteger(L, 4, 0);
    size_t cl;
    if (rb < 1 || hb < 0 || fb < 0)
        return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "FixedLengthRecordDataset: record_bytes must be > 0 and "
                           "header_bytes/footer_bytes >= 0, got %lld, %lld, %lld", (long long)rb, (long long)hb,
                           (long long)fb);
    fbuf *b = read_whole_at(L, "FixedLengthRecordDataset", 1, optstr(L, 5, &cl));
    if (!path) path = ((readahead *)lua_touserdata(L, 1))->path;
    if ((lua_Integer)b->n < hb + fb || ((lua_Integer)b->n - hb - fb) % rb != 0)
        return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "FixedLengthRecordDataset: excluding the header (%lld bytes) "
                           "and footer (%lld bytes), input file \"%s\" has body length %lld, which is not an exact "
                           "multiple of the record length (%lld bytes)", (long long)hb, (long long)fb, path,
                           (long long)b->n - hb - fb, (long long)rb);
    int64_t n = ((int64_t)b->n - hb - fb) / rb;
    ltf_tensor *t = string_vector(L, n);
    for (int64_t i = 0; i < n; i++) set_str(L, t, i, b->p + hb + i * rb, (size_t)rb);
    return 1;
}

/* read_bytes(path, compression) */
static int read_bytes(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    size_t cl;
    fbuf *b = read_whole(L, "read", path, optstr(L, 2, &cl));
    lua_pushlstring(L, (const char *)b->p, b->n);
    return 1;
}

/* glob(pattern) -> sorted array of the matching paths (GLOB_NOCHECK off: no match is an empty array) */
static int l_glob(lua_State *L) {
    const char *pat = luaL_checkstring(L, 1);
    glob_t g;
    memset(&g, 0, sizeof g);
    int r = glob(pat, 0, NULL, &g);
    lua_createtable(L, r == 0 ? (int)g.gl_pathc : 0, 0);
    if (r == 0)
        for (size_t i = 0; i < g.gl_pathc; i++) {
            lua_pushstring(L, g.gl_pathv[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
    globfree(&g);
    if (r != 0 && r != GLOB_NOMATCH) return ltfL_raisef(L, LTF_ERR_INTERNAL, "glob: %s: read error", pat);
    return 1;
}

/* tensor_bytes(t) -> the elements as bytes: row-major host bytes, or for
** strings a little-endian uint32 length then the bytes, per element */
static int l_tensor_bytes(lua_State *L) {
    ltf_tensor *t = ltfL_checktensor(L, 1, "tensor_bytes", "tensor");
    if (ltf_tensor_dtype(t) != LTF_DTYPE_STRING) {
        void *d;
        size_t nb;
        ltf_status st = ltf_tensor_host_data(ltfL_ctx(L), t, &d, &nb);
        if (st != LTF_OK) return ltfL_raisectx(L, st);
        lua_pushlstring(L, d, nb);
        return 1;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    int64_t n = ltf_tensor_num_elements(t);
    ltf_string *const *S = ltf_tensor_data(t);
    for (int64_t i = 0; i < n; i++) {
        size_t len = S[i] ? S[i]->len : 0;
        unsigned char h[4] = {(unsigned char)len, (unsigned char)(len >> 8), (unsigned char)(len >> 16),
                              (unsigned char)(len >> 24)};
        luaL_addlstring(&b, (const char *)h, 4);
        if (len) luaL_addlstring(&b, S[i]->bytes, len);
    }
    luaL_pushresult(&b);
    return 1;
}

/* tensor_from_bytes(s, dtype, dims) -> tensor; the inverse of tensor_bytes
** (a size mismatch is a DataLossError) */
static int l_tensor_from_bytes(lua_State *L) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    ltf_dtype dt = (ltf_dtype)ltfL_checkdtype(L, 2, "tensor_from_bytes", "dtype", -1);
    luaL_checktype(L, 3, LUA_TTABLE);
    int rank = (int)lua_rawlen(L, 3);
    int64_t dims[LTF_MAX_RANK];
    if (rank > LTF_MAX_RANK) return ltfL_raisef(L, LTF_ERR_DATA_LOSS, "tensor_from_bytes: rank %d", rank);
    int64_t numel = 1;
    for (int k = 0; k < rank; k++) {
        lua_rawgeti(L, 3, k + 1);
        dims[k] = (int64_t)lua_tointeger(L, -1);
        lua_pop(L, 1);
        if (dims[k] < 0 || (dims[k] > 0 && numel > INT64_MAX / 16 / dims[k]))
            return ltfL_raisef(L, LTF_ERR_DATA_LOSS, "tensor_from_bytes: bad dimension");
        numel *= dims[k];
    }
    if (dt != LTF_DTYPE_STRING) {
        size_t es = ltf_dtype_size(dt);
        if (es == 0 || (uint64_t)numel * es != n)
            return ltfL_raisef(L, LTF_ERR_DATA_LOSS, "tensor_from_bytes: %zu bytes for %lld elements of %s", n,
                               (long long)numel, ltf_dtype_name(dt));
    } else if ((uint64_t)numel * 4 > n) {
        return ltfL_raisef(L, LTF_ERR_DATA_LOSS, "tensor_from_bytes: %zu bytes for %lld strings", n, (long long)numel);
    }
    ltf_tensor *t = ltf_tensor_new(ltfL_ctx(L), dt, rank, dims);
    if (!t) return ltfL_raisectx(L, LTF_ERR_RESOURCE_EXHAUSTED);
    ltfL_pushtensor(L, t);
    if (dt != LTF_DTYPE_STRING) {
        if (n) memcpy(ltf_tensor_data(t), s, n);
        return 1;
    }
    size_t pos = 0;
    ltf_string **S = ltf_tensor_data(t);
    for (int64_t i = 0; i < numel; i++) {
        if (n - pos < 4) return ltfL_raisef(L, LTF_ERR_DATA_LOSS, "tensor_from_bytes: truncated strings");
        const unsigned char *h = (const unsigned char *)s + pos;
        size_t len = (size_t)h[0] | (size_t)h[1] << 8 | (size_t)h[2] << 16 | (size_t)h[3] << 24;
        pos += 4;
        if (len > n - pos) return ltfL_raisef(L, LTF_ERR_DATA_LOSS, "tensor_from_bytes: truncated strings");
        if (len) {
            S[i] = ltf_string_new(s + pos, len);
            if (!S[i]) return ltfL_raisef(L, LTF_ERR_RESOURCE_EXHAUSTED, "out of memory");
        }
        pos += len;
    }
    if (pos != n) return ltfL_raisef(L, LTF_ERR_DATA_LOSS, "tensor_from_bytes: %zu bytes left over", n - pos);
    return 1;
}

/* cpu_count() -> online processors (interleave's AUTOTUNE cycle length, as TensorFlow) */
static int l_cpu_count(lua_State *L) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    lua_pushinteger(L, n > 0 ? n : 1);
    return 1;
}

static const luaL_Reg csv_internal[] = {
    {"cpu_count", l_cpu_count},
    {"file_prefetch", l_file_prefetch},
    {"file_ready", l_file_ready},
    {"file_prefetch_close", l_file_prefetch_close},
    {"glob", l_glob},
    {"tensor_bytes", l_tensor_bytes},
    {"tensor_from_bytes", l_tensor_from_bytes},
    {"decode_csv", csv_decode},
    {"csv_read", csv_read},
    {"read_lines", read_lines},
    {"read_fixed", read_fixed},
    {"read_bytes", read_bytes},
    {NULL, NULL}
};

void ltfL_open_csv(lua_State *L);
void ltfL_open_csv(lua_State *L) {
    ltfL_register(L, csv_internal, LTFL_INTERNAL);
}
