/*
** tfrecord.c: Lua bindings of TFRecord files (core/tfrecord.c). The writer is
** a thin box. The reader is a job of a reader pool (bindings/readpool.c: a
** pool of one thread of its own, or the pool of an interleave's
** num_parallel_calls / TFRecordDataset's num_parallel_reads), with its own
** context: a pool thread reads and frames records into chunks of strings
** (ltf_tfrecord_reader_next_strings_unchecked: about 256 KB of records
** each, at most CHUNK_RECORDS), up to QDEPTH chunks ahead; once the queue is
** full the worker waits until it is half empty, and a Lua side blocked on
** an empty queue is woken at WAKE_AT chunks (fewer wake-ups: in a VM each
** costs the waker microseconds). The Lua side checks each chunk's data CRCs
** as it takes it (verify): the read() copy keeps the pool thread the slower
** side, so the CRC work overlaps it instead of adding to it. A corrupt
** record found there stops the reader (cut_at) and its error comes after
** the records before it, as if the worker had met it. An uncompressed
** file is read straight into string blocks whose records become strings in
** place; compressed files and pipes copy records into string slabs
** (core/storage.c: no malloc per record). The Lua thread
** takes them as scalar string tensors
** (tfrecord_next) or whole 1-D string tensors (tfrecord_next_batch, what
** TFRecordDataset:batch uses). lua/tf/io_tfrecord.lua and
** lua/tf/data/tfrecord.lua build the API.
*/
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "ltfL.h"
#include "readpool.h"

#define LTFL_TFW "tf.TFRecordWriterHandle"
#define LTFL_TFR "tf.TFRecordReaderHandle"
#define QDEPTH 16
#define CHUNK_RECORDS LTF_TFRECORD_BLOCK_RECORDS   /* a block's most records (16384) */
#define NSLOT 16      /* block mode: blocks read ahead of the framing */
#define WAKE_AT 4   /* a consumer waiting on an empty queue is woken at this many chunks (fewer wake-ups) */

/* {==== writer */
typedef struct tfw_box { ltf_tfrecord_writer *w; } tfw_box;

static ltf_tfrecord_writer *checkwriter(lua_State *L, int idx) {
    tfw_box *b = luaL_checkudata(L, idx, LTFL_TFW);
    if (!b->w) ltfL_raise(L, LTF_ERR_FAILED_PRECONDITION, "TFRecordWriter: the writer is closed");
    return b->w;
}

/* core.tfrecord_writer_open(path, compression, level) -> handle */
static int l_writer_open(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    const char *comp = luaL_optstring(L, 2, "");
    int level = (int)luaL_optinteger(L, 3, -1);
    tfw_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->w = NULL;
    luaL_setmetatable(L, LTFL_TFW);
    ltf_status st = ltf_tfrecord_writer_open_level(ltfL_ctx(L), path, comp, level, &b->w);
    if (st) return ltfL_raisectx(L, st);
    return 1;
}

/* core.tfrecord_write(handle, bytes | string tensor (scalar or vector)) */
static int l_write(lua_State *L) {
    ltf_tfrecord_writer *w = checkwriter(L, 1);
    ltf_status st = LTF_OK;
    if (lua_type(L, 2) == LUA_TSTRING) {
        size_t n;
        const char *s = lua_tolstring(L, 2, &n);
        st = ltf_tfrecord_write(w, s, n);
    } else {
        ltf_tensor *t = ltfL_testtensor(L, 2);
        if (!t || ltf_tensor_dtype(t) != LTF_DTYPE_STRING || ltf_tensor_is_symbolic(t))
            return ltfL_raise(L, LTF_ERR_TYPE, "TFRecordWriter.write: 'record' must be a Lua string or a string tensor");
        const ltf_string *const *s = ltf_tensor_data(t);
        int64_t n = ltf_tensor_num_elements(t);
        for (int64_t i = 0; i < n && st == LTF_OK; i++)
            st = s[i] ? ltf_tfrecord_write(w, s[i]->bytes, s[i]->len) : ltf_tfrecord_write(w, "", 0);
    }
    if (st) return ltfL_raisectx(L, st);
    return 0;
}

static int l_writer_flush(lua_State *L) {
    ltf_status st = ltf_tfrecord_writer_flush(checkwriter(L, 1));
    if (st) return ltfL_raisectx(L, st);
    return 0;
}

/* core.tfrecord_writer_close(handle): closing twice is a no-op */
static int l_writer_close(lua_State *L) {
    tfw_box *b = luaL_checkudata(L, 1, LTFL_TFW);
    if (!b->w) return 0;
    ltf_status st = ltf_tfrecord_writer_close(b->w);
    b->w = NULL;
    if (st) return ltfL_raisectx(L, st);
    return 0;
}

static int writer_gc(lua_State *L) {
    tfw_box *b = luaL_checkudata(L, 1, LTFL_TFW);
    if (b->w) ltf_tfrecord_writer_close(b->w);
    b->w = NULL;
    return 0;
}
/* }==== */

/* {==== reader on a pool thread */
typedef struct chunk {
    ltf_string **s;   /* NULL entries: empty records */
    uint64_t *off;
    uint32_t *crc;    /* the records' stored data CRCs */
    int n;
    int unchecked;    /* crc still to check (the Lua side does, verify) */
} chunk;
#define NSPARE 4      /* chunks' arrays kept for reuse per reader (a malloc/free per chunk faulted fresh heap pages) */

typedef struct tfr {
    ltfL_rjob job;            /* first: the pool's view */
    ltf_tfrecord_reader *r;
    ltf_ctx *wctx;
    /* under the pool's lock */
    chunk q[QDEPTH];
    int qhead, qlen;
    int done;                 /* the reader finished (records may still be queued) */
    int cut;                  /* the Lua side found a corrupt record: the worker's results are dropped */
    int filled;               /* the queue was full: the worker resumes at half (fewer wake-ups) */
    ltf_status err;           /* the reader's failure, raised after its records */
    char *errmsg;
    /* the pool thread's scratch while job.busy */
    chunk sc;
    ltf_status sst;
    int send;
    /* the Lua side's */
    chunk cur;                /* the chunk being handed out */
    int curat;
    int finished;             /* the Lua side has seen the end */
    int skip;                 /* skip_corrupt */
    uint64_t cskipped;        /* records the Lua side skipped (data CRC) */
    char *name;               /* the file, for errors */
    chunk spare[NSPARE];      /* under the lock: emptied chunks' arrays */
    int nspare;
    size_t gc_read;           /* record bytes since the reader's last full collection (gc_account) */
    size_t gc_keep;           /* the bytes to wait for (doubled while the records are kept) */
    /* block mode (a plain uncompressed file): blocks are read by the pool
    ** thread and, when it would wait, by the Lua side too, and framed by
    ** the Lua side in order; under the lock */
    int bw;
    struct {
        ltf_string_block *b;
        int64_t got;
        int state;            /* 0 free, 1 being read, 2 read */
    } slot[NSLOT];
    uint64_t take;            /* the next block to frame */
    uint64_t claim;           /* the next block to read */
    uint64_t stop_at;         /* no block from here on is read (one before it was short: the end) */
    uint64_t sidx;            /* the pool thread's block while job.busy (UINT64_MAX: none) */
    ltf_string_block *sblk;
    int64_t sgot;
} tfr;

typedef struct tfr_box { tfr *p; } tfr_box;

static void chunk_free(chunk *c, int from) {
    for (int i = from; i < c->n; i++) ltf_string_release(c->s[i]);
    free(c->s);
    free(c->off);
    free(c->crc);
    c->s = NULL;
    c->off = NULL;
    c->crc = NULL;
    c->n = 0;
}

static int bw_claimable(tfr *p) { return p->claim < p->take + NSLOT && p->claim < p->stop_at; }

static int tfr_runnable(ltfL_rjob *j) {
    tfr *p = (tfr *)j;
    if (p->done) return 0;
    if (p->bw) {   /* a full window: the pool thread resumes at half (the Lua side reads meanwhile when it would wait) */
        if (p->filled && p->claim >= p->take + NSLOT / 2) return 0;
        p->filled = 0;
        if (p->claim >= p->take + NSLOT) p->filled = 1;
        return bw_claimable(p);
    }
    if (p->filled && p->qlen > QDEPTH / 2) return 0;
    p->filled = 0;
    return p->qlen < QDEPTH;
}

/* One chunk of records (on a pool thread, without the lock): a string block
** of the file read in place, or a slab of copies (core/tfrecord.c). */
static void tfr_produce(ltfL_rjob *j) {
    tfr *p = (tfr *)j;
    if (p->bw) {   /* read the next unclaimed block */
        uint64_t idx = UINT64_MAX;
        pthread_mutex_lock(&p->job.pool->mu);
        if (!p->done && bw_claimable(p)) {
            idx = p->claim++;
            p->slot[idx % NSLOT].state = 1;
        }
        pthread_mutex_unlock(&p->job.pool->mu);
        p->sidx = idx;
        p->sblk = NULL;
        if (idx != UINT64_MAX) p->sgot = ltf_tfrecord_read_block(p->r, idx, &p->sblk);
        return;
    }
    chunk c = {0};
    pthread_mutex_lock(&p->job.pool->mu);
    if (p->nspare) c = p->spare[--p->nspare];
    pthread_mutex_unlock(&p->job.pool->mu);
    if (!c.s) {
        c.s = malloc(sizeof(ltf_string *) * CHUNK_RECORDS);
        c.off = malloc(sizeof(uint64_t) * CHUNK_RECORDS);
        c.crc = malloc(sizeof(uint32_t) * CHUNK_RECORDS);
    }
    if (!c.s || !c.off || !c.crc) {
        chunk_free(&c, 0);
        p->sst = LTF_ERR_RESOURCE_EXHAUSTED;
        p->send = 1;
        return;
    }
    /* the data CRCs are checked by the Lua side as it takes the chunk: this
    ** thread, the slower side, only reads and frames */
    ltf_status st = ltf_tfrecord_reader_next_strings_unchecked(p->r, c.s, c.off, c.crc, CHUNK_RECORDS, &c.n);
    c.unchecked = 1;
    int end = st != LTF_OK;
    if (st == LTF_ERR_OUT_OF_RANGE) st = LTF_OK;
    p->sc = c;
    p->sst = st;
    p->send = end;
}

/* Under the lock: queue the chunk, note the end and the error. */
/* Under the lock: block 'idx' was read (got bytes, or -errno). */
static void bw_filled(tfr *p, uint64_t idx, ltf_string_block *b, int64_t got) {
    if (p->done) {   /* the Lua side ended: nobody frames it */
        ltf_string_block_done(b);
        p->slot[idx % NSLOT].state = 0;
        return;
    }
    p->slot[idx % NSLOT].b = b;
    p->slot[idx % NSLOT].got = got;
    p->slot[idx % NSLOT].state = 2;
    if (got < (int64_t)LTF_TFRECORD_BLOCK_FILE_BYTES && idx + 1 < p->stop_at) p->stop_at = idx + 1;
}

static void tfr_publish(ltfL_rjob *j) {
    tfr *p = (tfr *)j;
    if (p->bw) {
        if (p->sidx == UINT64_MAX) return;
        if (j->stop) ltf_string_block_done(p->sblk);
        else bw_filled(p, p->sidx, p->sblk, p->sgot);
        /* a Lua side blocked on another block sleeps on */
        j->quiet = j->waiting && p->sidx != p->take;
        p->sblk = NULL;
        p->sidx = UINT64_MAX;
        return;
    }
    chunk c = p->sc;
    memset(&p->sc, 0, sizeof p->sc);
    if (j->stop || p->cut) {
        chunk_free(&c, 0);
        return;
    }
    if (c.n) {
        p->q[(p->qhead + p->qlen) % QDEPTH] = c;
        p->qlen++;
        if (p->qlen == QDEPTH) p->filled = 1;
    } else chunk_free(&c, 0);
    if (p->send) {
        if (p->sst) {
            p->err = p->sst;
            const char *m = p->sst == LTF_ERR_RESOURCE_EXHAUSTED && ltf_ctx_status(p->wctx) == LTF_OK
                                ? "TFRecordDataset: out of memory for a record" : ltf_ctx_error(p->wctx);
            p->errmsg = strdup(m ? m : "TFRecordDataset: read failed");
        }
        p->done = 1;
    }
    /* a consumer blocked on this reader sleeps until a few chunks are there */
    j->quiet = j->waiting && !p->done && p->qlen < WAKE_AT;
}

static void tfr_free(tfr *p) {
    if (!p) return;
    ltfL_rpool_detach(&p->job);
    for (int i = 0; i < p->qlen; i++) chunk_free(&p->q[(p->qhead + i) % QDEPTH], 0);
    chunk_free(&p->cur, p->curat);
    chunk_free(&p->sc, 0);
    for (int i = 0; i < p->nspare; i++) chunk_free(&p->spare[i], 0);
    for (int i = 0; i < NSLOT; i++)
        if (p->slot[i].state == 2) ltf_string_block_done(p->slot[i].b);
    ltf_tfrecord_reader_close(p->r);
    if (p->wctx) ltf_ctx_release(p->wctx);
    free(p->errmsg);
    free(p->name);
    free(p);
}

static tfr *checkreader(lua_State *L, int idx) {
    tfr_box *b = luaL_checkudata(L, idx, LTFL_TFR);
    if (!b->p) ltfL_raise(L, LTF_ERR_FAILED_PRECONDITION, "TFRecordDataset: the reader is closed");
    return b->p;
}

/* core.tfrecord_reader_open(path, compression, buffer_size, skip_corrupt [, pool]) -> handle: the
** file is opened here (a missing file fails in the caller), read on the pool's threads (a pool of
** one thread of its own without one) */
static int l_reader_open(lua_State *L) {
    const char *path = luaL_checkstring(L, 1);
    const char *comp = luaL_optstring(L, 2, "");
    lua_Integer bs = luaL_optinteger(L, 3, 0);
    int skip = lua_toboolean(L, 4);
    ltfL_rpool *pool = ltfL_optpool(L, 5);
    if (bs < 0) return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "TFRecordDataset: buffer_size must be >= 0");
    tfr_box *b = lua_newuserdatauv(L, sizeof *b, 0);
    b->p = NULL;
    luaL_setmetatable(L, LTFL_TFR);
    tfr *p = calloc(1, sizeof *p);
    if (!p) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "TFRecordDataset: out of memory");
    p->job.runnable = tfr_runnable;
    p->job.produce = tfr_produce;
    p->job.publish = tfr_publish;
    b->p = p;
    p->skip = skip;
    p->name = strdup(path);
    if (!p->name) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "TFRecordDataset: out of memory");
    p->wctx = ltf_ctx_new();
    if (!p->wctx) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "TFRecordDataset: out of memory for a context");
    ltf_status st = ltf_tfrecord_reader_open(p->wctx, path, comp, (size_t)bs, skip ? LTF_TFRECORD_SKIP_CORRUPT : 0, &p->r);
    if (st) return ltfL_raise(L, st, ltf_ctx_error(p->wctx));
    p->bw = ltf_tfrecord_reader_blockwise(p->r);
    p->stop_at = UINT64_MAX;
    p->sidx = UINT64_MAX;
    if (pool) ltfL_rpool_attach(pool, &p->job);
    else {
        ltfL_rpool *own = ltfL_rpool_new(1);
        if (!own) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "TFRecordDataset: cannot start the reader thread");
        ltfL_rpool_attach(own, &p->job);
        ltfL_rpool_release(own);   /* the reader holds it */
    }
    return 1;
}

/* The collector learns of the records' bytes (a string tensor's own size is
** its pointers), and the reader asks for a full collection every
** GC_READ_MIN bytes of records: Lua 5.4's generational collector frees
** boxes with finalizers only in full collections, which tensor memory paces
** at 24 MB (bindings/tensor.c), and a batch's string blocks go back to the
** reader only when its box is freed. Blocks reused a few MB later are still
** in the caches, where the reader's read() writes into them (fewer cache
** misses in its copy, the slower side of the pipeline). The pace adapts:
** it waits for 8 times the Lua heap's bytes when that is more (a full
** collection walks the heap: a program with a big heap keeps the tensors'
** own pace), and a program that keeps the records (a collection frees less
** than half of the bytes read since the last one) doubles the wait, up to
** the tensors' own pace. (The collection's time is no measure of the walk:
** most of it is freeing the dead batches, due anyway.) */
#define GC_READ_MIN ((size_t)4 << 20)
#define GC_READ_MAX ((size_t)24 << 20)
static void gc_account(lua_State *L, tfr *p, ltf_string *const *s, size_t n) {
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += s[i] ? s[i]->len : 0;
    ltfL_state *st = ltfL_S(L);
    st->gc_pending += bytes;
    st->gc_step += bytes;
    p->gc_read += bytes;
    if (p->gc_keep == 0) p->gc_keep = GC_READ_MIN;
    if (p->gc_read < p->gc_keep || st->gc_pending < st->gc_base) return;
    if (p->gc_read < (size_t)lua_gc(L, LUA_GCCOUNT) * 1024 * 8) return;
    int64_t before = ltf_string_blocks_live();
    size_t read = p->gc_read;
    lua_gc(L, LUA_GCCOLLECT);
    ltf_memory_stats m;
    ltf_ctx_memory_stats(st->ctx, &m);
    st->gc_pending = 0;
    st->gc_base = m.live_bytes;
    p->gc_read = 0;
    int64_t freed = before - ltf_string_blocks_live();
    if (freed < 0 || (size_t)freed * LTF_STRING_BLOCK_SIZE * 2 < read) {
        p->gc_keep *= 2;
        if (p->gc_keep > GC_READ_MAX) p->gc_keep = GC_READ_MAX;
    } else p->gc_keep = GC_READ_MIN;
}

/* The reader stops at a corrupt record the Lua side found: the queued
** chunks go, the worker's later results are dropped, and the error is
** raised after the records before it (it comes before any the worker met). */
static void cut_at(tfr *p, uint64_t at) {
    char msg[700];
    snprintf(msg, sizeof msg, "TFRecordDataset: %.512s: corrupted record at %llu (the data's checksum does not match)",
             p->name, (unsigned long long)at);
    char *m = strdup(msg);
    chunk drop[QDEPTH];
    pthread_mutex_lock(&p->job.pool->mu);
    int nd = p->qlen;
    for (int i = 0; i < nd; i++) drop[i] = p->q[(p->qhead + i) % QDEPTH];
    p->qlen = 0;
    p->cut = 1;
    p->done = 1;
    free(p->errmsg);
    p->errmsg = m;
    p->err = LTF_ERR_DATA_LOSS;
    pthread_mutex_unlock(&p->job.pool->mu);
    for (int i = 0; i < nd; i++) chunk_free(&drop[i], 0);
}

/* Check the data CRCs of the chunk just taken (p->cur): a corrupt record
** is dropped under skip_corrupt, else the chunk ends before it (cut_at). */
static void verify(tfr *p) {
    chunk *c = &p->cur;
    if (!c->unchecked) return;
    int w = 0;
    for (int i = 0; i < c->n; i++) {
        if (ltf_tfrecord_record_ok(c->s[i], c->crc[i])) {
            c->s[w] = c->s[i];
            c->off[w++] = c->off[i];
        } else if (p->skip) {
            ltf_string_release(c->s[i]);
            p->cskipped++;
        } else {
            uint64_t at = c->off[i];
            for (int k = i; k < c->n; k++) ltf_string_release(c->s[k]);
            c->n = w;
            cut_at(p, at);
            break;
        }
    }
    c->n = w;
    c->unchecked = 0;
}

/* Block mode: frame the next block into p->cur (the Lua side). 1: records
** there; 0: none from this block (go on); -1: the end or an error (p->done,
** p->err). The Lua side reads the block due next itself when the pool
** thread is not on it (parked at a full window, or busy with the pool's
** other files), and waits while it is. (Reading a later block meanwhile
** made the Lua side, whose framing, CRC checks and collections cost about
** as much as the reading here, the slower side.) */
static int bw_next(tfr *p) {
    ltfL_rpool *pool = p->job.pool;
    if (!p->cur.s) {
        p->cur.s = malloc(sizeof(ltf_string *) * CHUNK_RECORDS);
        p->cur.off = malloc(sizeof(uint64_t) * CHUNK_RECORDS);
        p->cur.crc = malloc(sizeof(uint32_t) * CHUNK_RECORDS);
        if (!p->cur.s || !p->cur.off || !p->cur.crc) {
            chunk_free(&p->cur, 0);
            pthread_mutex_lock(&pool->mu);
            if (!p->done) {
                p->done = 1;
                p->err = LTF_ERR_RESOURCE_EXHAUSTED;
                free(p->errmsg);
                p->errmsg = strdup("TFRecordDataset: out of memory for a record");
            }
            pthread_mutex_unlock(&pool->mu);
            return -1;
        }
    }
    pthread_mutex_lock(&pool->mu);
    for (;;) {
        if (p->done) {
            pthread_mutex_unlock(&pool->mu);
            return -1;
        }
        if (p->slot[p->take % NSLOT].state == 2) break;
        if (bw_claimable(p) && p->claim == p->take) {   /* the due block, when the pool thread is not on it */
            uint64_t idx = p->claim++;
            p->slot[idx % NSLOT].state = 1;
            pthread_mutex_unlock(&pool->mu);
            ltf_string_block *b = NULL;
            int64_t got = ltf_tfrecord_read_block(p->r, idx, &b);
            pthread_mutex_lock(&pool->mu);
            bw_filled(p, idx, b, got);
            continue;
        }
        if (p->take >= p->stop_at) {   /* cannot happen: the short block before ended the framing */
            p->done = 1;
            continue;
        }
        ltfL_rpool_wait(&p->job);
    }
    int i = (int)(p->take % NSLOT);
    ltf_string_block *b = p->slot[i].b;
    int64_t got = p->slot[i].got;
    p->slot[i].b = NULL;
    p->slot[i].state = 0;
    p->take++;
    if (tfr_runnable(&p->job)) ltfL_rpool_kick(pool);
    pthread_mutex_unlock(&pool->mu);
    int n = 0, ended = 0;
    ltf_status st = ltf_tfrecord_reader_frame_block(p->r, b, got, p->cur.s, p->cur.off, p->cur.crc, CHUNK_RECORDS,
                                                    &n, &ended);
    p->cur.n = n;
    p->cur.unchecked = 1;
    p->curat = 0;
    if (ended || (st != LTF_OK && st != LTF_ERR_OUT_OF_RANGE)) {
        pthread_mutex_lock(&pool->mu);
        if (!p->done) {
            p->done = 1;
            if (st != LTF_OK && st != LTF_ERR_OUT_OF_RANGE) {
                p->err = st;
                const char *m = ltf_ctx_error(p->wctx);
                free(p->errmsg);
                p->errmsg = strdup(m && *m ? m : "TFRecordDataset: read failed");
            }
        }
        pthread_mutex_unlock(&pool->mu);
    }
    verify(p);   /* a corrupt record before a framing error comes first */
    return p->cur.n ? 1 : ended ? -1 : 0;
}

/* Make p->cur hold unread records: 1, or 0 at the end. At the end the
** worker's error is raised when 'may_raise', else kept for the next call
** (l_next_batch holding records). */
static int refill(lua_State *L, tfr *p, int may_raise) {
    if (p->curat < p->cur.n) return 1;
    if (p->finished) return 0;
    for (;;) {
        for (int i = p->curat; i < p->cur.n; i++) ltf_string_release(p->cur.s[i]);
        p->cur.n = p->curat = 0;
        ltfL_rpool *pool = p->job.pool;
        pthread_mutex_lock(&pool->mu);
        if (p->bw) {   /* keep the arrays: the next block's records go there */
            pthread_mutex_unlock(&pool->mu);
            int r = bw_next(p);
            if (r > 0) return 1;
            if (r == 0) continue;
            pthread_mutex_lock(&pool->mu);
        } else {
            if (p->cur.s && p->nspare < NSPARE) p->spare[p->nspare++] = p->cur;
            else chunk_free(&p->cur, 0);
            memset(&p->cur, 0, sizeof p->cur);
        }
        while (p->qlen == 0 && !p->done) ltfL_rpool_wait(&p->job);
        if (p->qlen) {
            p->cur = p->q[p->qhead];
            p->qhead = (p->qhead + 1) % QDEPTH;
            p->qlen--;
            if (tfr_runnable(&p->job)) ltfL_rpool_kick(pool);
            pthread_mutex_unlock(&pool->mu);
            verify(p);
            if (p->cur.n) return 1;
            continue;   /* every record of the chunk went: the next one */
        }
        ltf_status err = p->err;
        pthread_mutex_unlock(&pool->mu);
        if (err && !may_raise) return 0;
        p->finished = 1;
        if (err) {
            lua_pushstring(L, p->errmsg ? p->errmsg : "TFRecordDataset: read failed");
            return ltfL_raise(L, err, lua_tostring(L, -1));
        }
        return 0;
    }
}

/* core.tfrecord_next(handle) -> scalar string tensor, offset; nothing at the end */
static int l_next(lua_State *L) {
    tfr *p = checkreader(L, 1);
    if (!refill(L, p, 1)) return 0;
    ltfL_box *b = ltfL_newbox(L);
    ltf_tensor *t = ltf_tensor_new(ltfL_ctx(L), LTF_DTYPE_STRING, 0, NULL);
    if (!t) return ltfL_raisectx(L, LTF_ERR_RESOURCE_EXHAUSTED);
    ((ltf_string **)ltf_tensor_data(t))[0] = p->cur.s[p->curat];
    lua_pushinteger(L, (lua_Integer)p->cur.off[p->curat]);
    gc_account(L, p, &p->cur.s[p->curat], 1);
    p->cur.s[p->curat++] = NULL;
    ltfL_fillbox(L, b, t);
    return 2;
}

/* core.tfrecord_next_many(handle, n) -> a table of up to n scalar string tensors (the records of
** the current chunk: one call per chunk rather than per record); nothing at the end */
static int l_next_many(lua_State *L) {
    tfr *p = checkreader(L, 1);
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 1) return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "TFRecordDataset: count must be >= 1");
    if (!refill(L, p, 1)) return 0;
    lua_Integer k = p->cur.n - p->curat;
    if (k > n) k = n;
    lua_createtable(L, (int)k, 0);
    ltf_ctx *ctx = ltfL_ctx(L);
    for (lua_Integer i = 1; i <= k; i++) {
        ltfL_box *b = ltfL_newbox(L);
        ltf_tensor *t = ltf_tensor_new(ctx, LTF_DTYPE_STRING, 0, NULL);
        if (!t) return ltfL_raisectx(L, LTF_ERR_RESOURCE_EXHAUSTED);
        ((ltf_string **)ltf_tensor_data(t))[0] = p->cur.s[p->curat];
        gc_account(L, p, &p->cur.s[p->curat], 1);
        p->cur.s[p->curat++] = NULL;
        ltfL_fillbox(L, b, t);
        lua_rawseti(L, -2, i);
    }
    return 1;
}

/* core.tfrecord_next_batch(handle, n) -> 1-D string tensor of up to n records; nothing at the end */
static int l_next_batch(lua_State *L) {
    tfr *p = checkreader(L, 1);
    lua_Integer n = luaL_checkinteger(L, 2);
    if (n < 1) return ltfL_raise(L, LTF_ERR_INVALID_ARGUMENT, "TFRecordDataset: batch size must be >= 1");
    if (!refill(L, p, 1)) return 0;
    size_t cap = (size_t)(n < 4096 ? n : 4096), k = 0;
    /* collect the records' strings (ownership moves to the tensor) */
    ltf_string **acc = malloc(sizeof(ltf_string *) * cap);
    if (!acc) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "TFRecordDataset: out of memory");
    int more = 1;
    while ((lua_Integer)k < n && more) {
        while (p->curat < p->cur.n && (lua_Integer)k < n) {
            if (k == cap) {
                ltf_string **na = realloc(acc, sizeof(ltf_string *) * cap * 2);
                if (!na) {
                    for (size_t i = 0; i < k; i++) ltf_string_release(acc[i]);
                    free(acc);
                    return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "TFRecordDataset: out of memory");
                }
                acc = na;
                cap *= 2;
            }
            acc[k++] = p->cur.s[p->curat];
            p->cur.s[p->curat++] = NULL;
        }
        if ((lua_Integer)k < n) {
            /* an error after some records hands these out and raises on the
            ** next call: refill raises only with k == 0 (acc freed first) */
            if (k == 0) {
                free(acc);
                acc = NULL;
            }
            more = refill(L, p, k == 0);
            if (!more) break;
            if (!acc) {
                acc = malloc(sizeof(ltf_string *) * cap);
                if (!acc) return ltfL_raise(L, LTF_ERR_RESOURCE_EXHAUSTED, "TFRecordDataset: out of memory");
            }
        }
    }
    int64_t dim = (int64_t)k;
    ltfL_box *b = ltfL_newbox(L);
    ltf_tensor *t = ltf_tensor_new(ltfL_ctx(L), LTF_DTYPE_STRING, 1, &dim);
    if (!t) {
        for (size_t i = 0; i < k; i++) ltf_string_release(acc[i]);
        free(acc);
        return ltfL_raisectx(L, LTF_ERR_RESOURCE_EXHAUSTED);
    }
    if (k) memcpy(ltf_tensor_data(t), acc, sizeof(ltf_string *) * k);
    gc_account(L, p, acc, k);
    free(acc);
    ltfL_fillbox(L, b, t);
    return 1;
}

static int l_skipped(lua_State *L) {
    tfr *p = checkreader(L, 1);
    pthread_mutex_lock(&p->job.pool->mu);
    int done = p->done;
    pthread_mutex_unlock(&p->job.pool->mu);
    lua_pushinteger(L, done ? (lua_Integer)(ltf_tfrecord_reader_skipped(p->r) + p->cskipped) : 0);
    return 1;
}

/* core.tfrecord_ready(handle) -> whether the next call returns without waiting (a record, the end or
** the error is there): interleave's deterministic = false takes from a ready reader first */
static int l_ready(lua_State *L) {
    tfr *p = checkreader(L, 1);
    int r = p->curat < p->cur.n || p->finished;
    if (!r) {
        pthread_mutex_lock(&p->job.pool->mu);
        r = p->qlen > 0 || p->done || (p->bw && p->slot[p->take % NSLOT].state == 2);
        pthread_mutex_unlock(&p->job.pool->mu);
    }
    lua_pushboolean(L, r);
    return 1;
}

static int l_reader_close(lua_State *L) {
    tfr_box *b = luaL_checkudata(L, 1, LTFL_TFR);
    tfr_free(b->p);
    b->p = NULL;
    return 0;
}

/* core.tfrecord_masked_crc(bytes) -> integer */
/* core.string_blocks_live() -> string blocks in use in the process (specs) */
static int l_blocks_live(lua_State *L) {
    lua_pushinteger(L, (lua_Integer)ltf_string_blocks_live());
    return 1;
}

static int l_masked_crc(lua_State *L) {
    size_t n;
    const char *s = luaL_checklstring(L, 1, &n);
    lua_pushinteger(L, (lua_Integer)ltf_tfrecord_masked_crc(s, n));
    return 1;
}
/* }==== */

static const luaL_Reg tfrecord_fns[] = {
    {"tfrecord_writer_open", l_writer_open},
    {"tfrecord_write", l_write},
    {"tfrecord_writer_flush", l_writer_flush},
    {"tfrecord_writer_close", l_writer_close},
    {"tfrecord_reader_open", l_reader_open},
    {"tfrecord_next", l_next},
    {"tfrecord_next_batch", l_next_batch},
    {"tfrecord_next_many", l_next_many},
    {"tfrecord_skipped", l_skipped},
    {"tfrecord_reader_close", l_reader_close},
    {"tfrecord_ready", l_ready},
    {"tfrecord_masked_crc", l_masked_crc},
    {"string_blocks_live", l_blocks_live},
    {NULL, NULL}
};

void ltfL_open_tfrecord(lua_State *L) {
    luaL_newmetatable(L, LTFL_TFW);
    lua_pushcfunction(L, writer_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, LTFL_TFR);
    lua_pushcfunction(L, l_reader_close);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    ltfL_register(L, tfrecord_fns, LTFL_INTERNAL);
    ltfL_open_readpool(L);
}
