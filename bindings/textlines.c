/*
** textlines.c: TextLineDataset's streaming reader, used when buffer_size is
** given (lua/tf/data/files.lua). A job of a reader pool (bindings/readpool.c)
** reads buffer_size bytes of the file at a time (inflating GZIP/ZLIB, gzip
** members in turn), splits them into lines (LF or CRLF removed; a last line
** without LF counts) and queues them as chunks of strings, at most QDEPTH
** chunks ahead of the consumer: memory is about QDEPTH * buffer_size plus the
** longest line, not the file's size. Nothing of the lua_State is touched by
** the pool thread (strings only; tensors are made on the Lua side).
**   lines_open(path, compression, buffer_size [, pool]) -> handle (a missing
**       file fails here, in the caller)
**   lines_next(handle) -> 1-D string tensor of the next chunk's lines;
**       nothing at the end; a read error after the lines before it
**   lines_ready(handle) -> whether lines_next returns without waiting
**   lines_close(handle)
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "ltfL.h"
#include "readpool.h"

#define LTFL_TLR "tf.data.TextLineReader"
#define QDEPTH 4
#define ERRSZ 600
#define BS_MAX ((lua_Integer)16 << 20)

typedef struct lchunk {
    ltf_string **s;   /* NULL entries: empty lines */
    int64_t n;
} lchunk;

typedef struct tlr {
    ltfL_rjob job;              /* first: the pool's view */
    /* the pool thread's (one at a time) */
    FILE *f;
    int z, zinit, zend, in_eof;
    z_stream zs;
    unsigned char *in;
    size_t incap, fed;
    unsigned char *buf;         /* the unsplit tail, then new bytes */
    size_t cap, len, bs;
    int eof;
    char *path, *comp;
    lchunk sc;                  /* scratch of a step */
    ltf_status sst;
    int send;
    char serr[ERRSZ];
    /* under the pool's lock */
    lchunk q[QDEPTH];
    int qhead, qlen, done;
    ltf_status err;
    char errmsg[ERRSZ];
    /* the Lua side's */
    int finished;
} tlr;

typedef struct tlr_box { tlr *p; } tlr_box;

static void lchunk_free(lchunk *c) {
    for (int64_t i = 0; i < c->n; i++) ltf_string_release(c->s[i]);
    free(c->s);
    c->s = NULL;
    c->n = 0;
}

static ssize_t fail(tlr *r, ltf_status st, const char *why) {
    r->sst = st;
    snprintf(r->serr, ERRSZ, "TextLineDataset: %s: %s", r->path, why);
    return -1;
}

/* Up to 'room' (uncompressed) bytes at dst: the count, 0 at the end, -1 on an error. */
static ssize_t src_read(tlr *r, unsigned char *dst, size_t room) {
    if (!r->z) {
        size_t k = fread(dst, 1, room, r->f);
        if (k == 0 && ferror(r->f)) return fail(r, LTF_ERR_DATA_LOSS, "read error");
        return (ssize_t)k;
    }
    if (room > (1u << 30)) room = 1u << 30;
    r->zs.next_out = dst;
    r->zs.avail_out = (uInt)room;
    uInt start = r->zs.avail_out;
    while (r->zs.avail_out == start) {
        if (r->zs.avail_in == 0 && !r->in_eof) {
            size_t k = fread(r->in, 1, r->incap, r->f);
            if (k == 0 && ferror(r->f)) return fail(r, LTF_ERR_DATA_LOSS, "read error");
            if (k == 0) r->in_eof = 1;
            r->fed += k;
            r->zs.next_in = r->in;
            r->zs.avail_in = (uInt)k;
        }
        if (r->zs.avail_in == 0 && r->in_eof && (r->zend || r->fed == 0)) break;   /* the end (or an empty file) */
        if (r->zend) {   /* another gzip member follows */
            if (r->zs.avail_in == 0) continue;
            inflateReset(&r->zs);
            r->zend = 0;
        }
        int rc = inflate(&r->zs, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) r->zend = 1;
        else if (rc == Z_BUF_ERROR) {
            if (r->zs.avail_in == 0 && r->in_eof) {
                char why[128];
                snprintf(why, sizeof why, "corrupt or truncated %s data (zlib: unexpected end of data)", r->comp);
                return fail(r, LTF_ERR_DATA_LOSS, why);
            }
        } else if (rc != Z_OK) {
            char why[256];
            snprintf(why, sizeof why, "corrupt or truncated %s data (zlib: %s)", r->comp,
                     rc == Z_MEM_ERROR ? "out of memory" : (r->zs.msg ? r->zs.msg : "error"));
            return fail(r, rc == Z_MEM_ERROR ? LTF_ERR_RESOURCE_EXHAUSTED : LTF_ERR_DATA_LOSS, why);
        }
    }
    return (ssize_t)(start - r->zs.avail_out);
}

static int tlr_runnable(ltfL_rjob *j) {
    tlr *r = (tlr *)j;
    return !r->done && r->qlen < QDEPTH;
}

/* One step: read until at least one whole line (or the end), split what is there. */
static void tlr_produce(ltfL_rjob *j) {
    tlr *r = (tlr *)j;
    r->sst = LTF_OK;
    r->send = 0;
    memset(&r->sc, 0, sizeof r->sc);
    for (;;) {
        if (r->cap - r->len < r->bs) {
            size_t nc = r->len + r->bs;
            unsigned char *nb = realloc(r->buf, nc);
            if (!nb) { fail(r, LTF_ERR_RESOURCE_EXHAUSTED, "out of memory for the read buffer"); r->send = 1; return; }
            r->buf = nb;
            r->cap = nc;
        }
        ssize_t k = src_read(r, r->buf + r->len, r->bs);
        if (k < 0) { r->send = 1; return; }
        if (k == 0) r->eof = 1;
        r->len += (size_t)k;
        if (r->eof || memchr(r->buf + r->len - (size_t)k, '\n', (size_t)k)) break;
    }
    /* the lines: up to the last LF, and at the end the rest */
    const unsigned char *p = r->buf, *e = r->buf + r->len;
    int64_t n = 0;
    size_t bytes = 0;
    const unsigned char *q = p;
    while (q < e) {
        const unsigned char *nl = memchr(q, '\n', (size_t)(e - q));
        if (!nl && !r->eof) break;
        const unsigned char *end = nl ? nl : e;
        bytes += (size_t)(end - q);
        n++;
        q = nl ? nl + 1 : e;
    }
    size_t used = (size_t)(q - p);
    if (n > 0) {
        r->sc.s = malloc(sizeof(ltf_string *) * (size_t)n);
        ltf_string_slab *slab = ltf_string_slab_new(bytes + (size_t)n * 64 + 64);
        if (!r->sc.s || !slab) {
            free(r->sc.s);
            r->sc.s = NULL;
            ltf_string_slab_done(slab);
            fail(r, LTF_ERR_RESOURCE_EXHAUSTED, "out of memory for lines");
            r->send = 1;
            return;
        }
        q = p;
        for (int64_t i = 0; i < n; i++) {
            const unsigned char *nl = memchr(q, '\n', (size_t)(e - q));
            const unsigned char *end = nl ? nl : e;
            size_t len = (size_t)(end - q);
            if (len > 0 && q[len - 1] == '\r') len--;
            ltf_string *s = NULL;
            if (len) {
                s = ltf_string_slab_add(slab, (const char *)q, len);
                if (!s) s = ltf_string_new((const char *)q, len);
                if (!s) {
                    r->sc.n = i;
                    ltf_string_slab_done(slab);
                    fail(r, LTF_ERR_RESOURCE_EXHAUSTED, "out of memory for lines");
                    r->send = 1;
                    return;
                }
            }
            r->sc.s[i] = s;
            q = nl ? nl + 1 : e;
        }
        r->sc.n = n;
        ltf_string_slab_done(slab);
    }
    memmove(r->buf, r->buf + used, r->len - used);
    r->len -= used;
    if (r->eof) r->send = 1;
}

static void tlr_publish(ltfL_rjob *j) {
    tlr *r = (tlr *)j;
    lchunk c = r->sc;
    memset(&r->sc, 0, sizeof r->sc);
    if (j->stop) {
        lchunk_free(&c);
        return;
    }
    if (c.n) {
        r->q[(r->qhead + r->qlen) % QDEPTH] = c;
        r->qlen++;
    } else lchunk_free(&c);
    if (r->send) {
        if (r->sst) {
            r->err = r->sst;
            memcpy(r->errmsg, r->serr, ERRSZ);
        }
        r->done = 1;
    }
}

static void tlr_free(tlr *r) {
    if (!r) return;
    ltfL_rpool_detach(&r->job);
    for (int i = 0; i < r->qlen; i++) lchunk_free(&r->q[(r->qhead + i) % QDEPTH]);
    lchunk_free(&r->sc);
    if (r->f) fclose(r->f);
    if (r->zinit) inflateEnd(&r->zs);
    free(r->in);
    free(r->buf);
    free(r->path);
    free(r->comp);
    free(r);
}

static int tlr_gc(lua_State *L) {
    tlr_box *b = luaL_checkudata(L, 1, LTFL_TLR);
    tlr_free(b->p);
    b->p = NULL;
    return 0;
}

static tlr *checktlr(lua_State *L, int idx) {
    tlr_box *b = luaL_checkudata(L, idx, LTFL_TLR);
    if (!b->p) ltfL_raise(L, LTF_ERR_FAILED_PRECONDITION, "TextLineDataset: the reader is closed");
    return b->p;
}

static int l_lines_open(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    const char *comp = luaL_optstring(L, 2, "");
    lua_Integer bs = luaL_checkinteger(L, 3);
    ltfL_rpool *pool = ltfL_optpool(L, 4);
    int z = 0;
    if (!strcmp(comp, "GZIP") || !strcmp(comp, "ZLIB")) z = 1;
    else if (comp[0])
        return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT,
                           "TextLineDataset: compression_type must be \"\", \"GZIP\" or \"ZLIB\", got \"%s\"", comp);
    if (bs < 1) return ltfL_raisef(L, LTF_ERR_INVALID_ARGUMENT, "TextLineDataset: 'buffer_size' must be positive, got %lld",
                                   (long long)bs);
    tlr_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->p = NULL;
    luaL_setmetatable(L, LTFL_TLR);
    tlr *r = calloc(1, sizeof *r);
    if (!r) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "TextLineDataset: out of memory");
    b->p = r;
    r->job.runnable = tlr_runnable;
    r->job.produce = tlr_produce;
    r->job.publish = tlr_publish;
    r->bs = bs > BS_MAX ? BS_MAX : (size_t)bs;   /* a huge buffer_size reads 16 MB at a time */
    r->z = z;
    r->path = strdup(path);
    r->comp = strdup(comp);
    if (!r->path || !r->comp) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "TextLineDataset: out of memory");
    errno = 0;
    r->f = fopen(path, "rb");
    if (!r->f) {
        int e = errno;
        return ltfL_raisef(L, e == ENOENT ? LTF_ERR_NOT_FOUND : LTF_ERR_INVALID_ARGUMENT,
                           "TextLineDataset: %s: cannot open: %s", path, strerror(e));
    }
    if (z) {
        r->incap = r->bs < (1u << 16) ? (1u << 16) : r->bs;
        r->in = malloc(r->incap);
        if (!r->in || inflateInit2(&r->zs, 15 + 32) != Z_OK)
            return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "TextLineDataset: out of memory for zlib");
        r->zinit = 1;
    }
    if (pool) ltfL_rpool_attach(pool, &r->job);
    else {
        ltfL_rpool *own = ltfL_rpool_new(1);
        if (!own) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "TextLineDataset: cannot start the reader thread");
        ltfL_rpool_attach(own, &r->job);
        ltfL_rpool_release(own);
    }
    return 1;
}

static int l_lines_next(lua_State *L) {
    tlr *r = checktlr(L, 1);
    if (r->finished) return 0;
    ltfL_rpool *pool = r->job.pool;
    pthread_mutex_lock(&pool->mu);
    while (r->qlen == 0 && !r->done) ltfL_rpool_wait(&r->job);
    if (r->qlen) {
        lchunk c = r->q[r->qhead];
        r->qhead = (r->qhead + 1) % QDEPTH;
        r->qlen--;
        ltfL_rpool_kick(pool);
        pthread_mutex_unlock(&pool->mu);
        int64_t n = c.n;
        ltfL_box *b = ltfL_newbox(L);
        ltf_tensor *t = ltf_tensor_new(ltfL_ctx(L), LTF_DTYPE_STRING, 1, &n);
        if (!t) {
            lchunk_free(&c);
            return ltfL_raisectx(L, LTF_ERR_RESOURCE_EXHAUSTED);
        }
        memcpy(ltf_tensor_data(t), c.s, sizeof(ltf_string *) * (size_t)n);
        free(c.s);
        ltfL_fillbox(L, b, t);
        return 1;
    }
    ltf_status err = r->err;
    pthread_mutex_unlock(&pool->mu);
    r->finished = 1;
    if (err) return ltfL_raise(L, err, r->errmsg);
    return 0;
}

static int l_lines_ready(lua_State *L) {
    tlr *r = checktlr(L, 1);
    int ready = r->finished;
    if (!ready) {
        pthread_mutex_lock(&r->job.pool->mu);
        ready = r->qlen > 0 || r->done;
        pthread_mutex_unlock(&r->job.pool->mu);
    }
    lua_pushboolean(L, ready);
    return 1;
}

static const luaL_Reg fns[] = {
    {"lines_open", l_lines_open},
    {"lines_next", l_lines_next},
    {"lines_ready", l_lines_ready},
    {"lines_close", tlr_gc},
    {NULL, NULL}
};

void ltfL_open_textlines(lua_State *L) {
    luaL_newmetatable(L, LTFL_TLR);
    lua_pushcfunction(L, tlr_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    ltfL_register(L, fns, LTFL_INTERNAL);
}
