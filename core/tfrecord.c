/*
** tfrecord.c: TFRecord files (ltf.h, docs/tfrecord.md), TensorFlow's
** record format: per record a uint64 little-endian length, the masked
** CRC32C of those 8 bytes, the data, the masked CRC32C of the data. The
** file may be one zlib or gzip stream (zlib does the compression).
**
** The reader keeps one growing buffer of the (uncompressed) stream and
** hands out records in place: a record is copied only when it straddles a
** refill. The buffer grows by doubling only while bytes keep arriving, so a
** hostile length field cannot make it allocate more than twice the bytes the
** file really holds.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <zlib.h>
#include "ltf.h"
#include "ctx.h"
#include "storage.h"

#define MASK_DELTA 0xa282ead8u
#define NAME_MAX_LEN 512

uint32_t ltf_tfrecord_masked_crc(const void *data, size_t n) {
    uint32_t c = ltf_crc32c(0, data, n);
    return ((c >> 15) | (c << 17)) + MASK_DELTA;
}

/* The masked CRC of a record's 8-byte length: one crc32 instruction where
** the CPU has SSE4.2 (the framing loop does this per record). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
__attribute__((target("sse4.2"))) static uint32_t len_crc_hw(const unsigned char *h) {
    uint64_t w;
    memcpy(&w, h, 8);
    uint32_t c = ~(uint32_t)_mm_crc32_u64(0xffffffffu, w);
    return ((c >> 15) | (c << 17)) + MASK_DELTA;
}
static uint32_t len_crc(const unsigned char *h) {
    if (__builtin_cpu_supports("sse4.2")) return len_crc_hw(h);
    return ltf_tfrecord_masked_crc(h, 8);
}
#else
static uint32_t len_crc(const unsigned char *h) { return ltf_tfrecord_masked_crc(h, 8); }
#endif

static void put_le64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static void put_le32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i)); }
static uint64_t get_le64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}
static uint32_t get_le32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

typedef enum { COMP_NONE, COMP_ZLIB, COMP_GZIP } comp_kind;

static int parse_comp(ltf_ctx *ctx, const char *c, comp_kind *out) {
    if (!c || !*c || !strcmp(c, "NONE")) *out = COMP_NONE;
    else if (!strcmp(c, "ZLIB")) *out = COMP_ZLIB;
    else if (!strcmp(c, "GZIP")) *out = COMP_GZIP;
    else {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                 "TFRecord: unknown compression_type '%.64s' (expected \"\", \"ZLIB\" or \"GZIP\")", c);
        return 0;
    }
    return 1;
}
static int window_bits(comp_kind k) { return k == COMP_GZIP ? MAX_WBITS + 16 : MAX_WBITS; }

/* {==== writer */
struct ltf_tfrecord_writer {
    ltf_ctx *ctx;
    FILE *f;
    comp_kind comp;
    z_stream z;
    int zinit;
    unsigned char *zout;
    size_t zcap;
    int failed;
    char name[NAME_MAX_LEN];
};

static ltf_status w_ioerr(ltf_tfrecord_writer *w, const char *what) {
    w->failed = 1;
    return ltf_fail(w->ctx, LTF_ERR_DATA_LOSS, "TFRecordWriter: %s: %s failed: %s", w->name, what, strerror(errno));
}

/* Feed 'n' bytes to the stream (compressed or not) with zlib flush mode 'flush'. */
static ltf_status w_put(ltf_tfrecord_writer *w, const void *p, size_t n, int flush) {
    if (w->comp == COMP_NONE) {
        if (n && fwrite(p, 1, n, w->f) != n) return w_ioerr(w, "write");
        return LTF_OK;
    }
    const unsigned char *in = p;
    /* zlib's avail_in is 32-bit: feed in slices */
    do {
        size_t slice = n > (1u << 30) ? (1u << 30) : n;
        w->z.next_in = (Bytef *)in;
        w->z.avail_in = (uInt)slice;
        in += slice;
        n -= slice;
        int mode = n ? Z_NO_FLUSH : flush;
        do {
            w->z.next_out = w->zout;
            w->z.avail_out = (uInt)w->zcap;
            int rc = deflate(&w->z, mode);
            if (rc == Z_STREAM_ERROR) {
                w->failed = 1;
                return ltf_fail(w->ctx, LTF_ERR_INTERNAL, "TFRecordWriter: %s: deflate failed", w->name);
            }
            size_t have = w->zcap - w->z.avail_out;
            if (have && fwrite(w->zout, 1, have, w->f) != have) return w_ioerr(w, "write");
        } while (w->z.avail_out == 0 || (mode == Z_FINISH && w->z.avail_in == 0 &&
                                         w->z.avail_out == 0));
    } while (n);
    return LTF_OK;
}

ltf_status ltf_tfrecord_writer_open_level(ltf_ctx *ctx, const char *path, const char *compression, int level,
                                          ltf_tfrecord_writer **out) {
    comp_kind k;
    if (!out) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "TFRecordWriter: no output given");
    *out = NULL;
    if (!path) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "TFRecordWriter: no path given");
    if (!parse_comp(ctx, compression, &k)) return ltf_ctx_status(ctx);
    if (level < -1 || level > 9)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "TFRecordWriter: compression_level must be -1..9, got %d", level);
    ltf_tfrecord_writer *w = calloc(1, sizeof *w);
    if (!w) return ltf_fail_oom(ctx, "TFRecordWriter", sizeof *w);
    w->ctx = ctx;
    w->comp = k;
    snprintf(w->name, sizeof w->name, "%s", path);
    w->f = fopen(path, "wb");
    if (!w->f) {
        int e = errno;
        free(w);
        return ltf_fail(ctx, e == ENOENT ? LTF_ERR_NOT_FOUND : LTF_ERR_FAILED_PRECONDITION,
                        "TFRecordWriter: cannot create '%.400s': %s", path, strerror(e));
    }
    setvbuf(w->f, NULL, _IOFBF, 1 << 18);
    if (k != COMP_NONE) {
        w->zcap = 1 << 18;
        w->zout = malloc(w->zcap);
        if (!w->zout || deflateInit2(&w->z, level, Z_DEFLATED, window_bits(k), 8, Z_DEFAULT_STRATEGY) != Z_OK) {
            fclose(w->f);
            free(w->zout);
            free(w);
            return ltf_fail_oom(ctx, "TFRecordWriter: zlib stream", 1 << 18);
        }
        w->zinit = 1;
    }
    *out = w;
    return LTF_OK;
}

ltf_status ltf_tfrecord_writer_open(ltf_ctx *ctx, const char *path, const char *compression, ltf_tfrecord_writer **out) {
    return ltf_tfrecord_writer_open_level(ctx, path, compression, -1, out);
}

ltf_status ltf_tfrecord_write(ltf_tfrecord_writer *w, const void *data, size_t len) {
    unsigned char head[12], foot[4];
    if (!w) return LTF_ERR_INVALID_ARGUMENT;
    if (w->failed) return ltf_fail(w->ctx, LTF_ERR_FAILED_PRECONDITION, "TFRecordWriter: %s: an earlier write failed", w->name);
    if (!data && len) return ltf_fail(w->ctx, LTF_ERR_INVALID_ARGUMENT, "TFRecordWriter: no data given");
    put_le64(head, (uint64_t)len);
    put_le32(head + 8, ltf_tfrecord_masked_crc(head, 8));
    put_le32(foot, ltf_tfrecord_masked_crc(data, len));
    ltf_status st = w_put(w, head, 12, Z_NO_FLUSH);
    if (st == LTF_OK) st = w_put(w, data, len, Z_NO_FLUSH);
    if (st == LTF_OK) st = w_put(w, foot, 4, Z_NO_FLUSH);
    return st;
}

ltf_status ltf_tfrecord_writer_flush(ltf_tfrecord_writer *w) {
    if (!w) return LTF_ERR_INVALID_ARGUMENT;
    if (w->failed) return ltf_fail(w->ctx, LTF_ERR_FAILED_PRECONDITION, "TFRecordWriter: %s: an earlier write failed", w->name);
    if (w->comp != COMP_NONE) {
        ltf_status st = w_put(w, "", 0, Z_SYNC_FLUSH);
        if (st) return st;
    }
    if (fflush(w->f) != 0) return w_ioerr(w, "flush");
    return LTF_OK;
}

ltf_status ltf_tfrecord_writer_close(ltf_tfrecord_writer *w) {
    ltf_status st = LTF_OK;
    if (!w) return LTF_OK;
    if (w->comp != COMP_NONE && !w->failed) st = w_put(w, "", 0, Z_FINISH);
    if (w->zinit) deflateEnd(&w->z);
    if (fclose(w->f) != 0 && st == LTF_OK && !w->failed) st = w_ioerr(w, "close");
    free(w->zout);
    free(w);
    return st;
}
/* }==== */

/* {==== reader */
struct ltf_tfrecord_reader {
    ltf_ctx *ctx;
    int fd;                    /* -1 for memory */
    comp_kind comp;
    int flags;
    unsigned char *buf;        /* the uncompressed stream from 'pos' on */
    size_t cap, beg, end;      /* buf[beg, end) holds unread bytes */
    uint64_t pos;              /* stream offset of buf[beg] */
    int eof;                   /* no more bytes will arrive */
    int dead;                  /* the rest of the file is skipped */
    const unsigned char *mem;  /* memory source (owned copy) */
    size_t memlen, memat;
    z_stream z;                /* decompression */
    int zinit, zdone;
    unsigned char *zin;        /* compressed input buffer */
    size_t zincap, zinlen;
    int in_eof;
    uint64_t skipped;
    int blocks;                /* an uncompressed regular file: next_strings reads into string blocks */
    char name[NAME_MAX_LEN];
};

/* Raw (compressed) bytes from the source into dst: count, 0 at its end, -1 on error. */
static ssize_t raw_read(ltf_tfrecord_reader *r, unsigned char *dst, size_t n) {
    if (r->fd < 0) {
        size_t k = r->memlen - r->memat;
        if (k > n) k = n;
        memcpy(dst, r->mem + r->memat, k);
        r->memat += k;
        return (ssize_t)k;
    }
    for (;;) {
        ssize_t k = read(r->fd, dst, n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            ltf_fail(r->ctx, LTF_ERR_DATA_LOSS, "TFRecordDataset: %s: read failed: %s", r->name, strerror(errno));
        }
        return k;
    }
}

/* Append up to 'room' uncompressed bytes at 'dst': count, 0 at the end, -1 on error. */
static ssize_t stream_read(ltf_tfrecord_reader *r, unsigned char *dst, size_t room) {
    if (r->comp == COMP_NONE) return raw_read(r, dst, room);
    if (r->zdone && r->zinlen == 0 && r->in_eof) return 0;
    r->z.next_out = dst;
    r->z.avail_out = (uInt)(room > (1u << 30) ? (1u << 30) : room);
    uInt start = r->z.avail_out;
    while (r->z.avail_out == start) {
        if (r->z.avail_in == 0 && !r->in_eof) {
            ssize_t k = raw_read(r, r->zin, r->zincap);
            if (k < 0) return -1;
            if (k == 0) r->in_eof = 1;
            r->z.next_in = r->zin;
            r->z.avail_in = (uInt)k;
        }
        if (r->zdone) {  /* a finished member: another one follows (concatenated gzip), or the end */
            if (r->z.avail_in == 0 && r->in_eof) return 0;
            if (r->z.avail_in == 0) continue;
            inflateReset(&r->z);
            r->zdone = 0;
        }
        int rc = inflate(&r->z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END) r->zdone = 1;
        else if (rc == Z_BUF_ERROR) {
            if (r->z.avail_in == 0 && r->in_eof) break;  /* the stream stops short */
        } else if (rc != Z_OK) {
            ltf_fail(r->ctx, LTF_ERR_DATA_LOSS, "TFRecordDataset: %s: corrupt %s stream near uncompressed offset %llu: %s",
                     r->name, r->comp == COMP_GZIP ? "GZIP" : "ZLIB",
                     (unsigned long long)(r->pos + (r->end - r->beg)), r->z.msg ? r->z.msg : "inflate failed");
            return -1;
        }
        if (r->zdone && r->z.avail_in == 0 && r->in_eof) break;
    }
    r->zinlen = r->z.avail_in;
    return (ssize_t)(start - r->z.avail_out);
}

/* Make at least 'need' bytes available at buf+beg (fewer only at the end):
** the count available, or -1 on a read error. */
static ssize_t ensure(ltf_tfrecord_reader *r, uint64_t need) {
    while ((uint64_t)(r->end - r->beg) < need && !r->eof) {
        if (r->fd < 0 && r->comp == COMP_NONE) {  /* memory: the buffer is all */
            r->eof = 1;
            break;
        }
        if (r->beg > 0) {  /* slide the unread bytes to the front */
            memmove(r->buf, r->buf + r->beg, r->end - r->beg);
            r->end -= r->beg;
            r->beg = 0;
        }
        if (r->end == r->cap) {  /* full: double (only while bytes keep coming) */
            size_t nc = r->cap * 2;
            if (nc < r->cap) return ltf_fail_oom(r->ctx, "TFRecordDataset: record buffer", (size_t)-1), -1;
            unsigned char *nb = realloc(r->buf, nc);
            if (!nb) return ltf_fail_oom(r->ctx, "TFRecordDataset: record buffer", nc), -1;
            r->buf = nb;
            r->cap = nc;
        }
        ssize_t k = stream_read(r, r->buf + r->end, r->cap - r->end);
        if (k < 0) return -1;
        if (k == 0) r->eof = 1;
        r->end += (size_t)k;
    }
    return (ssize_t)(r->end - r->beg);
}

static ltf_status reader_new(ltf_ctx *ctx, const char *name, const char *compression, size_t buffer_size, int flags,
                             ltf_tfrecord_reader **out) {
    comp_kind k;
    if (!parse_comp(ctx, compression, &k)) return ltf_ctx_status(ctx);
    ltf_tfrecord_reader *r = calloc(1, sizeof *r);
    if (!r) return ltf_fail_oom(ctx, "TFRecordDataset", sizeof *r);
    r->ctx = ctx;
    r->fd = -1;
    r->comp = k;
    r->flags = flags;
    snprintf(r->name, sizeof r->name, "%s", name ? name : "<memory>");
    r->cap = buffer_size ? buffer_size : (1u << 18);
    if (r->cap < 64) r->cap = 64;
    r->buf = malloc(r->cap);
    if (!r->buf) {
        free(r);
        return ltf_fail_oom(ctx, "TFRecordDataset: read buffer", buffer_size);
    }
    if (k != COMP_NONE) {
        r->zincap = r->cap;
        r->zin = malloc(r->zincap);
        if (!r->zin || inflateInit2(&r->z, window_bits(k)) != Z_OK) {
            size_t cap = r->cap;
            free(r->zin);
            free(r->buf);
            free(r);
            return ltf_fail_oom(ctx, "TFRecordDataset: zlib stream", cap);
        }
        r->zinit = 1;
    }
    *out = r;
    return LTF_OK;
}

ltf_status ltf_tfrecord_reader_open(ltf_ctx *ctx, const char *path, const char *compression, size_t buffer_size,
                                    int flags, ltf_tfrecord_reader **out) {
    if (!out) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "TFRecordDataset: no output given");
    *out = NULL;
    if (!path) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "TFRecordDataset: no path given");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        return ltf_fail(ctx, e == ENOENT ? LTF_ERR_NOT_FOUND : LTF_ERR_FAILED_PRECONDITION,
                        "TFRecordDataset: cannot open '%.400s': %s", path, strerror(e));
    }
#ifdef POSIX_FADV_SEQUENTIAL
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    ltf_status st = reader_new(ctx, path, compression, buffer_size, flags, out);
    if (st) {
        close(fd);
        return st;
    }
    (*out)->fd = fd;
    /* A plain uncompressed regular file is read by next_strings straight
    ** into string blocks (records become strings in place). It used to be
    ** mapped: the page faults and unmapping cost more than read()'s copy,
    ** and a file truncated under the mapping faulted (SIGBUS). */
    struct stat sb;
    ltf_tfrecord_reader *r = *out;
    if (r->comp == COMP_NONE && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        r->blocks = 1;
        ltf_string_blocks_hold(1);
    }
    return LTF_OK;
}

ltf_status ltf_tfrecord_reader_open_memory(ltf_ctx *ctx, const void *bytes, size_t n, const char *name,
                                           const char *compression, int flags, ltf_tfrecord_reader **out) {
    if (!out) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "TFRecordDataset: no output given");
    *out = NULL;
    if (!bytes && n) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "TFRecordDataset: no bytes given");
    ltf_status st = reader_new(ctx, name, compression, 0, flags, out);
    if (st) return st;
    ltf_tfrecord_reader *r = *out;
    if (r->comp == COMP_NONE) {  /* the buffer is the copy */
        unsigned char *b = realloc(r->buf, n ? n : 1);
        if (!b) {
            ltf_tfrecord_reader_close(r);
            *out = NULL;
            return ltf_fail_oom(ctx, "TFRecordDataset: memory copy", n);
        }
        if (n) memcpy(b, bytes, n);
        r->buf = b;
        r->cap = r->end = n;
    } else {
        unsigned char *m = malloc(n ? n : 1);
        if (!m) {
            ltf_tfrecord_reader_close(r);
            *out = NULL;
            return ltf_fail_oom(ctx, "TFRecordDataset: memory copy", n);
        }
        if (n) memcpy(m, bytes, n);
        r->mem = m;
        r->memlen = n;
    }
    return LTF_OK;
}

/* The next record; with 'crc' its data's stored masked CRC goes there,
** unchecked (ltf_tfrecord_record_ok checks it later, on another thread). */
static ltf_status reader_next(ltf_tfrecord_reader *r, const void **data, size_t *len, uint64_t *offset,
                              uint32_t *crc) {
    for (;;) {
        if (r->dead) return LTF_ERR_OUT_OF_RANGE;
        uint64_t at = r->pos;
        ssize_t k = ensure(r, 12);
        if (k < 0) return ltf_ctx_status(r->ctx);
        if (k == 0) return LTF_ERR_OUT_OF_RANGE;
        if (k < 12) {
            if (r->flags & LTF_TFRECORD_SKIP_CORRUPT) { r->dead = 1; r->skipped++; continue; }
            return ltf_fail(r->ctx, LTF_ERR_DATA_LOSS, "TFRecordDataset: %s: truncated record at %llu", r->name,
                            (unsigned long long)at);
        }
        const unsigned char *h = r->buf + r->beg;
        uint64_t n = get_le64(h);
        if (len_crc(h) != get_le32(h + 8)) {
            if (r->flags & LTF_TFRECORD_SKIP_CORRUPT) { r->dead = 1; r->skipped++; continue; }
            return ltf_fail(r->ctx, LTF_ERR_DATA_LOSS,
                            "TFRecordDataset: %s: corrupted record at %llu (the length's checksum does not match)",
                            r->name, (unsigned long long)at);
        }
        if (n > ((uint64_t)1 << 62)) k = ensure(r, (uint64_t)1 << 62);  /* cannot be there: reads to the end */
        else k = ensure(r, 16 + n);
        if (k < 0) return ltf_ctx_status(r->ctx);
        if ((uint64_t)k < 16 + n || n > ((uint64_t)1 << 62)) {
            if (r->flags & LTF_TFRECORD_SKIP_CORRUPT) { r->dead = 1; r->skipped++; continue; }
            return ltf_fail(r->ctx, LTF_ERR_DATA_LOSS, "TFRecordDataset: %s: truncated record at %llu", r->name,
                            (unsigned long long)at);
        }
        h = r->buf + r->beg;
        r->beg += 16 + (size_t)n;
        r->pos += 16 + n;
        if (crc) *crc = get_le32(h + 12 + n);
        else if (ltf_tfrecord_masked_crc(h + 12, (size_t)n) != get_le32(h + 12 + n)) {
            if (r->flags & LTF_TFRECORD_SKIP_CORRUPT) { r->skipped++; continue; }
            return ltf_fail(r->ctx, LTF_ERR_DATA_LOSS,
                            "TFRecordDataset: %s: corrupted record at %llu (the data's checksum does not match)",
                            r->name, (unsigned long long)at);
        }
        *data = h + 12;
        *len = (size_t)n;
        if (offset) *offset = at;
        return LTF_OK;
    }
}

ltf_status ltf_tfrecord_reader_next(ltf_tfrecord_reader *r, const void **data, size_t *len, uint64_t *offset) {
    if (!r || !data || !len) return LTF_ERR_INVALID_ARGUMENT;
    return reader_next(r, data, len, offset, NULL);
}

int ltf_tfrecord_record_ok(const ltf_string *s, uint32_t crc) {
    return ltf_tfrecord_masked_crc(s ? s->bytes : "", s ? s->len : 0) == crc;
}

_Static_assert(offsetof(ltf_string, bytes) == 12, "a TFRecord header is a string header's size");

/* next_strings over ltf_tfrecord_reader_next, copying into a slab (about
** 128 KB of records, a bigger record as a string of its own). */
static ltf_status next_strings_copy(ltf_tfrecord_reader *r, ltf_string **out, uint64_t *offs, uint32_t *crcs,
                                    int max, int *count) {
    ltf_string_slab *slab = ltf_string_slab_new((1u << 17) + (1u << 16));
    if (!slab) return ltf_fail_oom(r->ctx, "TFRecordDataset: records", (1u << 17) + (1u << 16));
    ltf_status st = LTF_OK;
    int n = 0, full = 0;
    while (n < max && !full) {
        const void *d;
        size_t len;
        uint64_t off;
        st = reader_next(r, &d, &len, &off, crcs ? &crcs[n] : NULL);
        if (st) break;
        ltf_string *s = NULL;
        if (len) {
            s = ltf_string_slab_add(slab, d, len);
            if (!s) {  /* the slab is full (or the record bigger than it): a string of its own */
                full = 1;
                s = ltf_string_new(d, len);
                if (!s) { st = ltf_fail_oom(r->ctx, "TFRecordDataset: a record", len); break; }
            }
        }
        out[n] = s;
        if (offs) offs[n] = off;
        n++;
    }
    ltf_string_slab_done(slab);
    *count = n;
    if (st == LTF_ERR_OUT_OF_RANGE && n) st = LTF_OK;
    return st;
}

static ltf_status next_strings(ltf_tfrecord_reader *r, ltf_string **out, uint64_t *offs, uint32_t *crcs, int max,
                               int *count) {
    const size_t cap = LTF_STRING_BLOCK_SIZE - LTF_STRING_BLOCK_HEAD;
    if (count) *count = 0;
    if (!r || !out || !count || max < 1) return LTF_ERR_INVALID_ARGUMENT;
    if (!r->blocks) return next_strings_copy(r, out, offs, crcs, max, count);
    if (r->dead) return LTF_ERR_OUT_OF_RANGE;
    size_t pend = r->end - r->beg;
    /* a big record (or many bytes the copying path buffered): copy them */
    if (pend > cap / 2 || (pend >= 8 && get_le64(r->buf + r->beg) > cap / 2))
        return next_strings_copy(r, out, offs, crcs, max, count);
    ltf_string_block *blk = ltf_string_block_new();
    if (!blk) return ltf_fail_oom(r->ctx, "TFRecordDataset: string block", LTF_STRING_BLOCK_SIZE);
    unsigned char *d = ltf_string_block_data(blk);
    if (pend) memcpy(d, r->buf + r->beg, pend);
    r->beg = r->end = 0;
    size_t have = pend;
    while (have < cap && !r->eof) {
        ssize_t k = read(r->fd, d + have, cap - have);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            r->dead = 1;
            ltf_string_block_done(blk);
            return ltf_fail(r->ctx, LTF_ERR_DATA_LOSS, "TFRecordDataset: %s: read failed: %s", r->name, strerror(errno));
        }
        if (k == 0) r->eof = 1;
        have += (size_t)k;
    }
    ltf_status st = LTF_OK;
    int n = 0;
    size_t p = 0;
    while (n < max && p < have) {
        uint64_t at = r->pos;
        size_t left = have - p;
        const unsigned char *h = d + p;
        if (left < 12) {
            if (!r->eof) break;
            goto truncated;
        }
        uint64_t len = get_le64(h);
        if (len_crc(h) != get_le32(h + 8)) {
            if (r->flags & LTF_TFRECORD_SKIP_CORRUPT) { r->dead = 1; r->skipped++; break; }
            st = ltf_fail(r->ctx, LTF_ERR_DATA_LOSS,
                          "TFRecordDataset: %s: corrupted record at %llu (the length's checksum does not match)",
                          r->name, (unsigned long long)at);
            r->dead = 1;
            break;
        }
        if (left < 16 || len > left - 16) {
            if (!r->eof) break;
            goto truncated;
        }
        if (crcs) crcs[n] = get_le32(h + 12 + len);   /* before the string's NUL covers its first byte */
        else if (ltf_tfrecord_masked_crc(h + 12, (size_t)len) != get_le32(h + 12 + len)) {
            if (r->flags & LTF_TFRECORD_SKIP_CORRUPT) {
                r->skipped++;
                p += 16 + (size_t)len;
                r->pos += 16 + len;
                continue;
            }
            st = ltf_fail(r->ctx, LTF_ERR_DATA_LOSS,
                          "TFRecordDataset: %s: corrupted record at %llu (the data's checksum does not match)",
                          r->name, (unsigned long long)at);
            r->dead = 1;
            break;
        }
        ltf_string *s = NULL;
        if (len) {
            if ((p & 7) == 0) s = ltf_string_block_adopt(blk, p, (size_t)len);  /* in place */
            if (!s) s = ltf_string_new((const char *)h + 12, (size_t)len);
            if (!s) {
                st = ltf_fail_oom(r->ctx, "TFRecordDataset: a record", (size_t)len);
                r->dead = 1;
                break;
            }
        }
        out[n] = s;
        if (offs) offs[n] = at;
        n++;
        p += 16 + (size_t)len;
        r->pos += 16 + len;
        continue;
    truncated:
        r->dead = 1;
        if (r->flags & LTF_TFRECORD_SKIP_CORRUPT) { r->skipped++; break; }
        st = ltf_fail(r->ctx, LTF_ERR_DATA_LOSS, "TFRecordDataset: %s: truncated record at %llu", r->name,
                      (unsigned long long)at);
        break;
    }
    if (!r->dead && p < have) {  /* an unfinished record: keep its bytes for the next call */
        size_t carry = have - p;
        if (r->cap < carry) {
            unsigned char *nb = realloc(r->buf, carry);
            if (!nb) {
                r->dead = 1;
                if (st == LTF_OK) st = ltf_fail_oom(r->ctx, "TFRecordDataset: record buffer", carry);
                carry = 0;
            } else {
                r->buf = nb;
                r->cap = carry;
            }
        }
        if (carry) memcpy(r->buf, d + p, carry);
        r->beg = 0;
        r->end = carry;
    }
    ltf_string_block_done(blk);
    *count = n;
    if (st) return st;
    if (n == 0) {
        if (r->dead || (r->eof && r->end == r->beg)) return LTF_ERR_OUT_OF_RANGE;
        return next_strings(r, out, offs, crcs, max, count);  /* a record bigger than a block */
    }
    return LTF_OK;
}

ltf_status ltf_tfrecord_reader_next_strings(ltf_tfrecord_reader *r, ltf_string **out, uint64_t *offs, int max,
                                            int *count) {
    return next_strings(r, out, offs, NULL, max, count);
}

ltf_status ltf_tfrecord_reader_next_strings_unchecked(ltf_tfrecord_reader *r, ltf_string **out, uint64_t *offs,
                                                      uint32_t *crcs, int max, int *count) {
    if (count) *count = 0;
    if (!crcs) return LTF_ERR_INVALID_ARGUMENT;
    return next_strings(r, out, offs, crcs, max, count);
}

/* {===== block-parallel reading (ltf.h: ltf_tfrecord_read_block) */
#define GAP LTF_TFRECORD_BLOCK_GAP
#define FILE_BYTES LTF_TFRECORD_BLOCK_FILE_BYTES
_Static_assert(FILE_BYTES % 8 == 0 && GAP % 8 == 0 && GAP >= 16, "block layout keeps 8-aligned records in place");

int ltf_tfrecord_reader_blockwise(const ltf_tfrecord_reader *r) { return r && r->blocks; }

int64_t ltf_tfrecord_read_block(const ltf_tfrecord_reader *r, uint64_t index, ltf_string_block **out) {
    *out = NULL;
    if (!r || !r->blocks) return -EINVAL;
    if (index > ((uint64_t)1 << 62) / FILE_BYTES) return 0;
    ltf_string_block *b = ltf_string_block_new();
    if (!b) return -ENOMEM;
    unsigned char *d = ltf_string_block_data(b) + GAP;
    off_t at = (off_t)(index * FILE_BYTES);
    size_t have = 0;
    while (have < FILE_BYTES) {
        ssize_t k = pread(r->fd, d + have, FILE_BYTES - have, at + (off_t)have);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            int e = errno;
            ltf_string_block_done(b);
            return -(e ? e : EIO);
        }
        if (k == 0) break;
        have += (size_t)k;
    }
    *out = b;
    return (ssize_t)have;
}

/* Append n bytes to the carry (r->buf[beg, end)), growing it by doubling:
** only bytes that arrived are kept, so a hostile length costs at most twice
** the file. */
static int carry_append(ltf_tfrecord_reader *r, const unsigned char *src, size_t n) {
    if (r->beg) {
        memmove(r->buf, r->buf + r->beg, r->end - r->beg);
        r->end -= r->beg;
        r->beg = 0;
    }
    if (r->cap - r->end < n) {
        size_t nc = r->cap ? r->cap : 64;
        while (nc - r->end < n) {
            if (nc > SIZE_MAX / 2) return 0;
            nc *= 2;
        }
        unsigned char *nb = realloc(r->buf, nc);
        if (!nb) return 0;
        r->buf = nb;
        r->cap = nc;
    }
    memcpy(r->buf + r->end, src, n);
    r->end += n;
    return 1;
}

ltf_status ltf_tfrecord_reader_frame_block(ltf_tfrecord_reader *r, ltf_string_block *blk, int64_t got,
                                           ltf_string **out, uint64_t *offs, uint32_t *crcs, int max, int *count,
                                           int *ended) {
    if (count) *count = 0;
    if (ended) *ended = 0;
    if (!r || !r->blocks || !out || !offs || !count || !ended || max < LTF_TFRECORD_BLOCK_RECORDS) {
        ltf_string_block_done(blk);
        return LTF_ERR_INVALID_ARGUMENT;
    }
    if (r->dead || r->eof) {
        ltf_string_block_done(blk);
        *ended = 1;
        return LTF_ERR_OUT_OF_RANGE;
    }
    if (got < 0 || !blk) {
        ltf_string_block_done(blk);
        r->dead = 1;
        *ended = 1;
        if (got == -ENOMEM || !blk) return ltf_fail_oom(r->ctx, "TFRecordDataset: string block", LTF_STRING_BLOCK_SIZE);
        return ltf_fail(r->ctx, LTF_ERR_DATA_LOSS, "TFRecordDataset: %s: read failed: %s", r->name, strerror((int)-got));
    }
    int last = (size_t)got < FILE_BYTES;
    unsigned char *d = ltf_string_block_data(blk);
    size_t have = GAP + (size_t)got, p;
    size_t carry = r->end - r->beg;
    ltf_status st = LTF_OK;
    int n = 0;
    if (carry > GAP) {
        /* a record bigger than the gap: its bytes gather in the carry (its
        ** length's CRC was checked when its header first came) */
        uint64_t len = get_le64(r->buf + r->beg);
        uint64_t need = 16 + len - carry;
        size_t take = need < (uint64_t)got ? (size_t)need : (size_t)got;
        if (!carry_append(r, d + GAP, take)) {
            ltf_string_block_done(blk);
            r->dead = 1;
            *ended = 1;
            return ltf_fail_oom(r->ctx, "TFRecordDataset: record buffer", r->end - r->beg + take);
        }
        p = GAP + take;
        if (take == need) {
            const unsigned char *h = r->buf + r->beg;
            uint32_t want = get_le32(h + 12 + len);
            if (!crcs && ltf_tfrecord_masked_crc(h + 12, (size_t)len) != want) {
                if (r->flags & LTF_TFRECORD_SKIP_CORRUPT) r->skipped++;
                else {
                    r->dead = 1;
                    st = ltf_fail(r->ctx, LTF_ERR_DATA_LOSS,
                                  "TFRecordDataset: %s: corrupted record at %llu (the data's checksum does not match)",
                                  r->name, (unsigned long long)r->pos);
                }
            } else {
                ltf_string *sr = ltf_string_new((const char *)h + 12, (size_t)len);
                if (!sr) {
                    r->dead = 1;
                    st = ltf_fail_oom(r->ctx, "TFRecordDataset: a record", (size_t)len);
                } else {
                    out[0] = sr;
                    offs[0] = r->pos;
                    if (crcs) crcs[0] = want;
                    n = 1;
                }
            }
            r->pos += 16 + len;
            r->beg = r->end = 0;
        }
    } else {
        /* the carried head of a record goes into the gap, before the bytes that follow it */
        if (carry) memcpy(d + GAP - carry, r->buf + r->beg, carry);
        r->beg = r->end = 0;
        p = GAP - carry;
    }
    while (st == LTF_OK && !r->dead && p < have && n < max) {
        uint64_t at = r->pos;
        size_t left = have - p;
        const unsigned char *h = d + p;
        if (left < 12) break;
        uint64_t len = get_le64(h);
        if (len_crc(h) != get_le32(h + 8)) {
            r->dead = 1;
            if (r->flags & LTF_TFRECORD_SKIP_CORRUPT) { r->skipped++; break; }
            st = ltf_fail(r->ctx, LTF_ERR_DATA_LOSS,
                          "TFRecordDataset: %s: corrupted record at %llu (the length's checksum does not match)",
                          r->name, (unsigned long long)at);
            break;
        }
        if (left < 16 || len > left - 16) break;   /* it goes on in the next block */
        uint32_t want = get_le32(h + 12 + len);
        if (!crcs && ltf_tfrecord_masked_crc(h + 12, (size_t)len) != want) {
            if (r->flags & LTF_TFRECORD_SKIP_CORRUPT) {
                r->skipped++;
                p += 16 + (size_t)len;
                r->pos += 16 + len;
                continue;
            }
            r->dead = 1;
            st = ltf_fail(r->ctx, LTF_ERR_DATA_LOSS,
                          "TFRecordDataset: %s: corrupted record at %llu (the data's checksum does not match)",
                          r->name, (unsigned long long)at);
            break;
        }
        ltf_string *sr = NULL;
        if (len) {
            if ((p & 7) == 0) sr = ltf_string_block_adopt(blk, p, (size_t)len);  /* in place */
            if (!sr) sr = ltf_string_new((const char *)h + 12, (size_t)len);
            if (!sr) {
                r->dead = 1;
                st = ltf_fail_oom(r->ctx, "TFRecordDataset: a record", (size_t)len);
                break;
            }
        }
        out[n] = sr;
        offs[n] = at;
        if (crcs) crcs[n] = want;
        n++;
        p += 16 + (size_t)len;
        r->pos += 16 + len;
    }
    if (st == LTF_OK && !r->dead && p < have && !carry_append(r, d + p, have - p)) {
        r->dead = 1;
        st = ltf_fail_oom(r->ctx, "TFRecordDataset: record buffer", have - p);
    }
    ltf_string_block_done(blk);
    if (st == LTF_OK && !r->dead && last) {
        r->eof = 1;
        if (r->end > r->beg) {   /* the file ends inside a record */
            r->dead = 1;
            if (r->flags & LTF_TFRECORD_SKIP_CORRUPT) r->skipped++;
            else
                st = ltf_fail(r->ctx, LTF_ERR_DATA_LOSS, "TFRecordDataset: %s: truncated record at %llu", r->name,
                              (unsigned long long)r->pos);
        }
    }
    *count = n;
    if (r->dead || r->eof) *ended = 1;
    return st;
}
/* }===== */

uint64_t ltf_tfrecord_reader_skipped(const ltf_tfrecord_reader *r) { return r ? r->skipped : 0; }

void ltf_tfrecord_reader_close(ltf_tfrecord_reader *r) {
    if (!r) return;
    if (r->blocks) ltf_string_blocks_hold(-1);
    if (r->fd >= 0) close(r->fd);
    if (r->zinit) inflateEnd(&r->z);
    free(r->zin);
    free((void *)r->mem);
    free(r->buf);
    free(r);
}
/* }==== */
