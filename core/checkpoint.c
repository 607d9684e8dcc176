/*
** checkpoint.c: safetensors files for tf.train.Checkpoint (docs/checkpoints.md).
**
** A file is an 8-byte little-endian header length N, N bytes of JSON (padded
** with spaces so the data starts 8-byte aligned), then the data section: each
** tensor's raw little-endian bytes at its [begin, end) offsets, 8-byte
** aligned, zero bytes in the gaps. The JSON is written and parsed by the Lua
** side (lua-cjson); this file does what must be fast or careful: CRC32C of
** the data, atomic durable writes (temporary file in the same directory,
** fsync, rename, fsync of the directory), a read-only mapping of a file with
** its header length checked, the layout check (every span inside the data,
** of the size its dtype and shape give, none overlapping) and restore
** straight from the mapping into the variables' buffers, all or nothing.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tensor.h"
#include "variable.h"
#include "device.h"
#include "storage.h"

#include "crc32c.h"   /* CRC32C: core/crc32c.c (shared with core/tfrecord.c) */

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "checkpoint files hold little-endian data: byte swapping is not implemented"
#endif

/* {==== Writing */
static const unsigned char zeros[64];

/* The test hook: LTF_CKPT_CRASH_AT="<point>[:<substring of the path>]" makes
** the writer kill itself (SIGKILL) at 'point' (write: half-way through the
** data; fsync: before the file's fsync; rename: before the rename; dirsync:
** after the rename, before the directory's fsync). Read-only environment. */
static void crash_point(const char *point, const char *path) {
    const char *e = getenv("LTF_CKPT_CRASH_AT");
    if (!e) return;
    size_t n = strlen(point);
    if (strncmp(e, point, n) != 0 || (e[n] != '\0' && e[n] != ':')) return;
    if (e[n] == ':' && !strstr(path, e + n + 1)) return;
    raise(SIGKILL);
}

static ltf_status write_all(ltf_ctx *ctx, int fd, const void *p, size_t n, const char *path) {
    const char *b = p;
    while (n) {
        ssize_t w = write(fd, b, n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return ltf_fail(ctx, errno == ENOSPC ? LTF_ERR_RESOURCE_EXHAUSTED : LTF_ERR_INTERNAL,
                            "checkpoint: writing '%s' failed: %s", path, strerror(errno));
        }
        b += w;
        n -= (size_t)w;
    }
    return LTF_OK;
}

static ltf_status sync_dir(ltf_ctx *ctx, const char *path) {
    size_t n = strlen(path);
    char *dir = malloc(n + 2);
    if (!dir) return ltf_fail_oom(ctx, "checkpoint path", n + 2);
    memcpy(dir, path, n + 1);
    char *slash = strrchr(dir, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ltf_status st = LTF_OK;
    if (fd < 0 || fsync(fd) != 0)
        st = ltf_fail(ctx, LTF_ERR_INTERNAL, "checkpoint: syncing directory '%s' failed: %s", dir, strerror(errno));
    if (fd >= 0) close(fd);
    free(dir);
    return st;
}

/* A temporary file next to 'path', written then committed (fsync, rename, directory fsync). */
typedef struct tmpfile_ {
    int fd;
    char *tmp;
    const char *path;
} tmpfile_;

static ltf_status tmp_open(ltf_ctx *ctx, const char *path, tmpfile_ *t) {
    size_t plen = strlen(path);
    t->path = path;
    t->fd = -1;
    t->tmp = malloc(plen + 16);
    if (!t->tmp) return ltf_fail_oom(ctx, "checkpoint path", plen + 16);
    memcpy(t->tmp, path, plen);
    memcpy(t->tmp + plen, ".tmp-XXXXXX", 12);
    t->fd = mkostemp(t->tmp, O_CLOEXEC);
    if (t->fd < 0) {
        ltf_status st = ltf_fail(ctx, errno == ENOENT ? LTF_ERR_NOT_FOUND : LTF_ERR_INTERNAL,
                                 "checkpoint: cannot create a file next to '%s': %s", path, strerror(errno));
        free(t->tmp);
        t->tmp = NULL;
        return st;
    }
    (void)fchmod(t->fd, 0644);
    return LTF_OK;
}

/* Finish a temporary file: on 'st' == LTF_OK fsync, close, rename, fsync the
** directory; otherwise (or when one of those fails) remove it. */
static ltf_status tmp_commit(ltf_ctx *ctx, tmpfile_ *t, ltf_status st) {
    if (st == LTF_OK) {
        crash_point("fsync", t->path);
        if (fsync(t->fd) != 0)
            st = ltf_fail(ctx, LTF_ERR_INTERNAL, "checkpoint: fsync of '%s' failed: %s", t->tmp, strerror(errno));
    }
    if (close(t->fd) != 0 && st == LTF_OK)
        st = ltf_fail(ctx, LTF_ERR_INTERNAL, "checkpoint: closing '%s' failed: %s", t->tmp, strerror(errno));
    if (st == LTF_OK) {
        crash_point("rename", t->path);
        if (rename(t->tmp, t->path) != 0)
            st = ltf_fail(ctx, LTF_ERR_INTERNAL, "checkpoint: renaming '%s' to '%s' failed: %s", t->tmp, t->path,
                          strerror(errno));
    }
    if (st != LTF_OK) {
        unlink(t->tmp);
    } else {
        crash_point("dirsync", t->path);
        st = sync_dir(ctx, t->path);
    }
    free(t->tmp);
    t->tmp = NULL;
    return st;
}

ltf_status ltf_file_write_atomic(ltf_ctx *ctx, const char *path, const void *bytes, size_t n) {
    tmpfile_ t;
    ltf_status st = tmp_open(ctx, path, &t);
    if (st != LTF_OK) return st;
    size_t half = n / 2;
    st = write_all(ctx, t.fd, bytes, half, path);
    if (st == LTF_OK) {
        crash_point("write", path);
        st = write_all(ctx, t.fd, (const char *)bytes + half, n - half, path);
    }
    return tmp_commit(ctx, &t, st);
}

/* The bytes of tensor 'i' of a write: concrete CPU tensors of numeric or bool dtype. */
static ltf_status tensor_bytes(ltf_ctx *ctx, const ltf_tensor *t, int i, const void **p, size_t *n) {
    if (!t || !t->storage || t->numel < 0) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "checkpoint: tensor %d is not concrete", i + 1);
    if (t->dtype == LTF_DTYPE_STRING || t->dtype == LTF_DTYPE_RESOURCE)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "checkpoint: tensor %d has dtype %s (pack strings first)", i + 1,
                        ltf_dtype_name(t->dtype));
    if (t->storage->device != LTF_DEVICE_CPU)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "checkpoint: tensor %d is not on the CPU", i + 1);
    *p = LTF_DATA(t);
    *n = (size_t)t->numel * ltf_dtype_size(t->dtype);
    return LTF_OK;
}

/* The layout of a write, checked: begins ascending, 8-aligned, inside 'data_size'. */
static ltf_status write_layout(ltf_ctx *ctx, ltf_tensor *const *ts, const uint64_t *begins, int n, uint64_t data_size,
                               const void **ptrs, size_t *sizes) {
    uint64_t at = 0;
    for (int i = 0; i < n; i++) {
        ltf_status st = tensor_bytes(ctx, ts[i], i, &ptrs[i], &sizes[i]);
        if (st != LTF_OK) return st;
        if (begins[i] < at || (begins[i] & 7) || begins[i] > data_size || sizes[i] > data_size - begins[i])
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "checkpoint: tensor %d at offset %llu (%zu bytes) does not fit the layout", i + 1,
                            (unsigned long long)begins[i], sizes[i]);
        at = begins[i] + sizes[i];
    }
    return LTF_OK;
}

/* Streams the data section: CRC32C of what is written, writeback started
** every WB bytes (so the disk works while the rest is copied), the crash
** hook half-way. 'fd' < 0: only the CRC. */
#define WB ((size_t)8 << 20)
typedef struct stream {
    ltf_ctx *ctx;
    int fd;
    const char *path;
    uint32_t crc;
    uint64_t done, half, file_at, flushed;
} stream;

static ltf_status put(stream *s, const void *p, size_t n) {
    const char *b = p;
    while (n) {
        size_t k = n < WB ? n : WB;
        if (s->half && s->done < s->half && s->done + k > s->half) k = (size_t)(s->half - s->done);
        s->crc = ltf_crc32c(s->crc, b ? (const void *)b : (const void *)zeros, k);
        if (s->fd >= 0) {
            ltf_status st = write_all(s->ctx, s->fd, b ? (const void *)b : (const void *)zeros, k, s->path);
            if (st != LTF_OK) return st;
            s->file_at += k;
#ifdef SYNC_FILE_RANGE_WRITE
            if (s->file_at - s->flushed >= WB) {
                (void)sync_file_range(s->fd, (off64_t)s->flushed, (off64_t)(s->file_at - s->flushed), SYNC_FILE_RANGE_WRITE);
                s->flushed = s->file_at;
            }
#endif
        }
        s->done += k;
        if (s->half && s->done == s->half && s->fd >= 0) crash_point("write", s->path);
        if (b) b += k;
        n -= k;
    }
    return LTF_OK;
}

static ltf_status put_zeros(stream *s, uint64_t n) {
    while (n) {
        size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
        ltf_status st = put(s, zeros, k);
        if (st != LTF_OK) return st;
        n -= k;
    }
    return LTF_OK;
}

static ltf_status put_data(stream *s, const void *const *ptrs, const size_t *sizes, const uint64_t *begins, int n,
                           uint64_t data_size) {
    uint64_t at = 0;
    for (int i = 0; i <= n; i++) {
        uint64_t b = i < n ? begins[i] : data_size;
        ltf_status st = put_zeros(s, b - at);
        if (st == LTF_OK && i < n) st = put(s, ptrs[i], sizes[i]);
        if (st != LTF_OK) return st;
        at = b + (i < n ? sizes[i] : 0);
    }
    return LTF_OK;
}

ltf_status ltf_ckpt_data_crc32c(ltf_ctx *ctx, ltf_tensor *const *tensors, const uint64_t *begins, int n,
                                uint64_t data_size, uint32_t *out) {
    if (n < 0) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "checkpoint: negative tensor count");
    const void **ptrs = malloc(sizeof(void *) * (size_t)(n + 1));
    size_t *sizes = malloc(sizeof(size_t) * (size_t)(n + 1));
    ltf_status st = (!ptrs || !sizes) ? ltf_fail_oom(ctx, "checkpoint layout", 0)
                                      : write_layout(ctx, tensors, begins, n, data_size, ptrs, sizes);
    if (st == LTF_OK) {
        stream s = { ctx, -1, "", 0, 0, 0, 0, 0 };
        st = put_data(&s, ptrs, sizes, begins, n, data_size);
        *out = s.crc;
    }
    free(ptrs);
    free(sizes);
    return st;
}

ltf_status ltf_ckpt_write(ltf_ctx *ctx, const char *path, const char *header, size_t hlen, size_t crc_at,
                          ltf_tensor *const *tensors, const uint64_t *begins, int n, uint64_t data_size) {
    if (n < 0) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "checkpoint: negative tensor count");
    if (crc_at != (size_t)-1 && (crc_at > hlen || hlen - crc_at < 8))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "checkpoint: the checksum's place lies outside the header");
    size_t pad = (8 - (hlen & 7)) & 7;
    const void **ptrs = malloc(sizeof(void *) * (size_t)(n + 1));
    size_t *sizes = malloc(sizeof(size_t) * (size_t)(n + 1));
    unsigned char *head = malloc(8 + hlen + pad);
    ltf_status st = (!ptrs || !sizes || !head) ? ltf_fail_oom(ctx, "checkpoint header", 8 + hlen + pad)
                                              : write_layout(ctx, tensors, begins, n, data_size, ptrs, sizes);
    tmpfile_ t = { -1, NULL, path };
    if (st == LTF_OK) st = tmp_open(ctx, path, &t);
    if (st != LTF_OK) {
        free(ptrs);
        free(sizes);
        free(head);
        return st;
    }
    /* the data first (after the header's room), its CRC32C as it goes; then the header */
    uint64_t len = (uint64_t)hlen + pad;
    if (lseek(t.fd, (off_t)(8 + len), SEEK_SET) < 0)
        st = ltf_fail(ctx, LTF_ERR_INTERNAL, "checkpoint: seeking in '%s' failed: %s", t.tmp, strerror(errno));
    stream s = { ctx, t.fd, path, 0, 0, data_size / 2 + 1, 8 + len, 0 };
    if (st == LTF_OK) st = put_data(&s, ptrs, sizes, begins, n, data_size);
    if (st == LTF_OK) {
        for (int i = 0; i < 8; i++) head[i] = (unsigned char)(len >> (8 * i));
        memcpy(head + 8, header, hlen);
        memset(head + 8 + hlen, ' ', pad);
        if (crc_at != (size_t)-1) {
            /* every byte but the 8 digits, in file order: the length and
            ** header around the digits, then the data (its CRC, streamed
            ** above, joined on by shifting the header's over data_size zeros) */
            static const char hex[] = "0123456789abcdef";
            uint32_t c = ltf_crc32c(0, head, 8 + crc_at);
            c = ltf_crc32c(c, head + 8 + crc_at + 8, (size_t)len - crc_at - 8);
            c = ltf_crc32c_shift(c, data_size) ^ s.crc;
            for (int i = 0; i < 8; i++) head[8 + crc_at + (size_t)i] = (unsigned char)hex[(c >> (28 - 4 * i)) & 15];
        }
        size_t at = 0, total = 8 + (size_t)len;
        while (at < total && st == LTF_OK) {
            ssize_t w = pwrite(t.fd, head + at, total - at, (off_t)at);
            if (w < 0 && errno == EINTR) continue;
            if (w < 0) st = ltf_fail(ctx, LTF_ERR_INTERNAL, "checkpoint: writing '%s' failed: %s", path, strerror(errno));
            else at += (size_t)w;
        }
    }
    st = tmp_commit(ctx, &t, st);
    free(ptrs);
    free(sizes);
    free(head);
    return st;
}
/* }==== */

/* {==== Reading */
struct ltf_ckpt_file {
    unsigned char *map;      /* the whole file */
    size_t size;
    int mapped;              /* 1: munmap, 0: free */
    int verified;            /* 1: a luatf checkpoint whose checksum matched */
    uint64_t header_len;
    const unsigned char *data;
    uint64_t data_size;
};

/* Is 'f' a luatf checkpoint? The marker is compared with the bytes at file
** offset 8, whatever the header length says (a flipped length bit does not
** hide it; bytes past the end count as 8 differing bits each): equal, the
** file's checksum must match; within LTF_CKPT_MAGIC_NEAR bits, it is a
** luatf file whose marker was damaged (one flipped bit cannot make it
** "plain"); otherwise it is a plain safetensors file, read unchecked. */
static ltf_status classify(ltf_ctx *ctx, ltf_ckpt_file *f, const char *what) {
    static const char magic[] = LTF_CKPT_MAGIC;
    const size_t m = sizeof magic - 1;
    unsigned bits = 0;
    for (size_t i = 0; i < m; i++)
        bits += 8 + i < f->size ? (unsigned)__builtin_popcount((unsigned)(f->map[8 + i] ^ (unsigned char)magic[i])) : 8u;
    if (bits != 0) {
        if (bits <= LTF_CKPT_MAGIC_NEAR)
            return ltf_fail(ctx, LTF_ERR_DATA_LOSS,
                            "checkpoint: '%s' is corrupted: its first header bytes are %u bits away from luatf's format "
                            "marker (a plain safetensors file is far from it)", what, bits);
        return LTF_OK;   /* plain */
    }
    if (f->header_len < m + 9)
        return ltf_fail(ctx, LTF_ERR_DATA_LOSS,
                        "checkpoint: '%s' is corrupted: its header length %llu is shorter than luatf's format marker",
                        what, (unsigned long long)f->header_len);
    const unsigned char *d = f->map + 8 + m;
    uint32_t want = 0;
    for (int i = 0; i < 8; i++) {
        int x = d[i] >= '0' && d[i] <= '9' ? d[i] - '0' : d[i] >= 'a' && d[i] <= 'f' ? d[i] - 'a' + 10 : -1;
        if (x < 0)
            return ltf_fail(ctx, LTF_ERR_DATA_LOSS, "checkpoint: '%s' is corrupted: its checksum is not 8 lowercase hex digits",
                            what);
        want = (want << 4) | (uint32_t)x;
    }
    if (d[8] != '"')
        return ltf_fail(ctx, LTF_ERR_DATA_LOSS, "checkpoint: '%s' is corrupted: its checksum is not 8 lowercase hex digits",
                        what);
    uint32_t c = ltf_crc32c(0, f->map, 8 + m);
    c = ltf_crc32c(c, d + 8, f->size - (8 + m + 8));
    if (c != want)
        return ltf_fail(ctx, LTF_ERR_DATA_LOSS,
                        "checkpoint: '%s' is corrupted: checksum mismatch: the file's CRC32C is %08x, its header says %08x",
                        what, (unsigned)c, (unsigned)want);
    f->verified = 1;
    return LTF_OK;
}

static ltf_ckpt_file *finish_open(ltf_ctx *ctx, ltf_ckpt_file *f, const char *what) {
    if (f->size < 8) {
        ltf_fail(ctx, LTF_ERR_DATA_LOSS, "checkpoint: '%s' is truncated: %zu bytes, fewer than the 8 of the header length",
                 what, f->size);
        ltf_ckpt_close(f);
        return NULL;
    }
    uint64_t h = 0;
    for (int i = 0; i < 8; i++) h |= (uint64_t)f->map[i] << (8 * i);
    if (h > LTF_CKPT_MAX_HEADER) {
        ltf_fail(ctx, LTF_ERR_DATA_LOSS, "checkpoint: '%s' has a header length of %llu bytes, over the limit of %u",
                 what, (unsigned long long)h, (unsigned)LTF_CKPT_MAX_HEADER);
        ltf_ckpt_close(f);
        return NULL;
    }
    if (h > f->size - 8) {
        ltf_fail(ctx, LTF_ERR_DATA_LOSS, "checkpoint: '%s' is truncated: header length %llu but only %zu bytes follow",
                 what, (unsigned long long)h, f->size - 8);
        ltf_ckpt_close(f);
        return NULL;
    }
    f->header_len = h;
    f->data = f->map + 8 + h;
    f->data_size = f->size - 8 - h;
    if (classify(ctx, f, what) != LTF_OK) {
        ltf_ckpt_close(f);
        return NULL;
    }
    return f;
}

ltf_ckpt_file *ltf_ckpt_open(ltf_ctx *ctx, const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        ltf_fail(ctx, errno == ENOENT || errno == ENOTDIR ? LTF_ERR_NOT_FOUND : LTF_ERR_INVALID_ARGUMENT,
                 "checkpoint: cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    struct stat sb;
    if (fstat(fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        ltf_fail(ctx, LTF_ERR_NOT_FOUND,
                 "checkpoint: '%s' is a directory, not a checkpoint file (tf.train.latest_checkpoint finds the newest one in it)",
                 path);
        close(fd);
        return NULL;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "checkpoint: '%s' is not a regular file", path);
        close(fd);
        return NULL;
    }
    ltf_ckpt_file *f = calloc(1, sizeof *f);
    if (!f) {
        close(fd);
        ltf_fail_oom(ctx, "checkpoint file", sizeof *f);
        return NULL;
    }
    f->size = (size_t)sb.st_size;
    if (f->size > 0) {
        void *m = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
        if (m == MAP_FAILED) {
            ltf_fail(ctx, LTF_ERR_INTERNAL, "checkpoint: cannot map '%s': %s", path, strerror(errno));
            close(fd);
            free(f);
            return NULL;
        }
        (void)madvise(m, f->size, MADV_SEQUENTIAL);
        f->map = m;
        f->mapped = 1;
    }
    close(fd);
    return finish_open(ctx, f, path);
}

ltf_ckpt_file *ltf_ckpt_open_memory(ltf_ctx *ctx, const void *bytes, size_t n) {
    ltf_ckpt_file *f = calloc(1, sizeof *f);
    unsigned char *m = malloc(n ? n : 1);
    if (!f || !m) {
        free(f);
        free(m);
        ltf_fail_oom(ctx, "checkpoint file", n);
        return NULL;
    }
    if (n) memcpy(m, bytes, n);
    f->map = m;
    f->size = n;
    return finish_open(ctx, f, "(memory)");
}

void ltf_ckpt_close(ltf_ckpt_file *f) {
    if (!f) return;
    if (f->mapped) munmap(f->map, f->size);
    else free(f->map);
    free(f);
}

const char *ltf_ckpt_header(const ltf_ckpt_file *f, size_t *len) {
    if (len) *len = (size_t)f->header_len;
    return (const char *)f->map + 8;
}

uint64_t ltf_ckpt_data_size(const ltf_ckpt_file *f) { return f->data_size; }

int ltf_ckpt_verified(const ltf_ckpt_file *f) { return f->verified; }

ltf_status ltf_ckpt_verify(ltf_ctx *ctx, const ltf_ckpt_file *f, uint32_t crc) {
    uint32_t c = ltf_crc32c(0, f->data, (size_t)f->data_size);
    if (c != crc)
        return ltf_fail(ctx, LTF_ERR_DATA_LOSS,
                        "checkpoint: checksum mismatch: the data's CRC32C is %08x, the header says %08x (the file is corrupted)",
                        (unsigned)c, (unsigned)crc);
    return LTF_OK;
}

/* Bytes of 'numel' elements of 'dt'; 0 with *ok = 0 on overflow. */
static uint64_t span_bytes(ltf_dtype dt, int rank, const int64_t *dims, int *ok) {
    uint64_t n = ltf_dtype_size(dt);
    *ok = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) { *ok = 0; return 0; }
        if (dims[i] && n > UINT64_MAX / (uint64_t)dims[i]) { *ok = 0; return 0; }
        n *= (uint64_t)dims[i];
    }
    return n;
}

static int cmp_span(const void *a, const void *b) {
    const ltf_ckpt_span *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end < y->end ? -1 : x->end > y->end);
}

ltf_status ltf_ckpt_check_layout(ltf_ctx *ctx, const ltf_ckpt_file *f, const ltf_ckpt_span *spans, int n) {
    if (n < 0) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "checkpoint: negative entry count");
    for (int i = 0; i < n; i++) {
        const ltf_ckpt_span *s = &spans[i];
        if (s->begin > s->end || s->end > f->data_size)
            return ltf_fail(ctx, LTF_ERR_DATA_LOSS,
                            "checkpoint: entry %d's data_offsets [%llu, %llu] lie outside the %llu bytes of data", i + 1,
                            (unsigned long long)s->begin, (unsigned long long)s->end, (unsigned long long)f->data_size);
        if (s->end - s->begin != s->bytes)
            return ltf_fail(ctx, LTF_ERR_DATA_LOSS,
                            "checkpoint: entry %d's data_offsets [%llu, %llu] span %llu bytes but its dtype and shape need %llu",
                            i + 1, (unsigned long long)s->begin, (unsigned long long)s->end,
                            (unsigned long long)(s->end - s->begin), (unsigned long long)s->bytes);
    }
    if (n < 2) return LTF_OK;
    ltf_ckpt_span *sorted = malloc(sizeof *sorted * (size_t)n);
    if (!sorted) return ltf_fail_oom(ctx, "checkpoint layout", sizeof *sorted * (size_t)n);
    memcpy(sorted, spans, sizeof *sorted * (size_t)n);
    qsort(sorted, (size_t)n, sizeof *sorted, cmp_span);
    ltf_status st = LTF_OK;
    for (int i = 1; i < n; i++) {
        if (sorted[i].begin < sorted[i - 1].end) {
            st = ltf_fail(ctx, LTF_ERR_DATA_LOSS, "checkpoint: data_offsets overlap: [%llu, %llu] and [%llu, %llu]",
                          (unsigned long long)sorted[i - 1].begin, (unsigned long long)sorted[i - 1].end,
                          (unsigned long long)sorted[i].begin, (unsigned long long)sorted[i].end);
            break;
        }
    }
    free(sorted);
    return st;
}

ltf_tensor *ltf_ckpt_read(ltf_ctx *ctx, const ltf_ckpt_file *f, ltf_dtype dt, int rank, const int64_t *dims,
                          uint64_t begin) {
    if ((unsigned)dt >= LTF_DTYPE_COUNT || dt == LTF_DTYPE_STRING || dt == LTF_DTYPE_RESOURCE || rank < 0 ||
        rank > LTF_MAX_RANK) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "checkpoint: cannot read a tensor of that dtype or rank");
        return NULL;
    }
    int ok;
    uint64_t n = span_bytes(dt, rank, dims, &ok);
    if (!ok || begin > f->data_size || n > f->data_size - begin) {
        ltf_fail(ctx, LTF_ERR_DATA_LOSS, "checkpoint: a tensor of %llu bytes at offset %llu lies outside the %llu bytes of data",
                 (unsigned long long)n, (unsigned long long)begin, (unsigned long long)f->data_size);
        return NULL;
    }
    if (ltf_shape_check(ctx, "checkpoint", dt, rank, dims) != LTF_OK) return NULL;
    ltf_tensor *t = ltf_tensor_empty(ctx, dt, rank, dims);
    if (!t) return NULL;
    if (n) memcpy(LTF_DATA(t), f->data + begin, (size_t)n);
    if (dt == LTF_DTYPE_BOOL) {  /* a foreign file may hold any byte: keep bools 0/1 */
        unsigned char *b = LTF_DATA(t);
        for (uint64_t i = 0; i < n; i++) b[i] = b[i] != 0;
    }
    return t;
}

static int exclusive(const ltf_tensor *t) {
    return !t->shared && !t->storage->shared && t->refs == 1 && t->storage->refs == 1 &&
           t->storage->device == LTF_DEVICE_CPU;
}

ltf_status ltf_ckpt_restore(ltf_ctx *ctx, const ltf_ckpt_file *f, ltf_tensor *const *handles, const uint64_t *begins,
                            int n) {
    if (n < 0) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "checkpoint: negative variable count");
    /* fresh[i]: new storage for variable i; stage[i]: its bytes on the host
    ** first, when the variable lives on a device (docs/devices.md) */
    ltf_tensor **fresh = calloc(2 * (size_t)n + 1, sizeof *fresh);
    if (!fresh) return ltf_fail_oom(ctx, "checkpoint restore", sizeof *fresh * (2 * (size_t)n + 1));
    ltf_tensor **stage = fresh + n;
    ltf_status st = LTF_OK;
    /* 1: check everything and allocate what cannot be written in place; nothing changes yet */
    for (int i = 0; i < n && st == LTF_OK; i++) {
        ltf_variable *v = ltf_variable_of(handles[i]);
        if (!v) { st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "checkpoint: restore target %d is not a variable", i + 1); break; }
        ltf_tensor *cur = v->value;
        if (cur->dtype == LTF_DTYPE_STRING || cur->dtype == LTF_DTYPE_RESOURCE || !cur->storage || cur->numel < 0) {
            st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "checkpoint: variable '%s' of dtype %s cannot be restored in place",
                          v->name, ltf_dtype_name(cur->dtype));
            break;
        }
        uint64_t bytes = (uint64_t)cur->numel * ltf_dtype_size(cur->dtype);
        if (begins[i] > f->data_size || bytes > f->data_size - begins[i]) {
            st = ltf_fail(ctx, LTF_ERR_DATA_LOSS, "checkpoint: variable '%s' (%llu bytes at offset %llu) lies outside the data",
                          v->name, (unsigned long long)bytes, (unsigned long long)begins[i]);
            break;
        }
        for (int j = 0; j < i; j++)
            if (ltf_variable_of(handles[j]) == v) {
                st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "checkpoint: variable '%s' is restored twice", v->name);
                break;
            }
        if (st == LTF_OK && cur->storage->device != LTF_DEVICE_CPU) {
            fresh[i] = ltf_tensor_empty_on(ctx, cur->dtype, cur->rank, cur->dims, cur->storage->device,
                                           cur->storage->ordinal, "checkpoint restore");
            stage[i] = fresh[i] ? ltf_tensor_empty(ctx, cur->dtype, cur->rank, cur->dims) : NULL;
            if (!stage[i]) st = ctx->last_status;
        } else if (st == LTF_OK && !exclusive(cur)) {
            fresh[i] = ltf_tensor_empty(ctx, cur->dtype, cur->rank, cur->dims);
            if (!fresh[i]) st = ctx->last_status;
        }
    }
    if (st != LTF_OK) {
        for (int i = 0; i < 2 * n; i++) ltf_tensor_release(fresh[i]);
        free(fresh);
        return st;
    }
    /* 2: copy from the mapping straight into the buffers (no failure past this point) */
    for (int i = 0; i < n; i++) {
        ltf_variable *v = ltf_variable_of(handles[i]);
        ltf_tensor *dst = stage[i] ? stage[i] : fresh[i] ? fresh[i] : v->value;
        size_t bytes = (size_t)dst->numel * ltf_dtype_size(dst->dtype);
        if (bytes) memcpy(LTF_DATA(dst), f->data + begins[i], bytes);
        if (dst->dtype == LTF_DTYPE_BOOL) {
            unsigned char *b = LTF_DATA(dst);
            for (size_t k = 0; k < bytes; k++) b[k] = b[k] != 0;
        }
        /* a copy to a device is queued on its stream: it fails only when
        ** the host cannot stage it, and then runs at once (gpusim), so
        ** its status is not checked here */
        if (stage[i]) (void)ltf_tensor_copy_into(ctx, fresh[i], stage[i]);
        ltf_tensor_release(stage[i]);
        if (fresh[i]) ltf_variable_set(v, fresh[i]);
    }
    free(fresh);
    return LTF_OK;
}
/* }==== */

/* {==== JSON keys: a header (or a JSON string in its metadata) must not
** repeat a key in one object. lua-cjson, like most parsers, keeps the last
** of repeated keys, so a one-bit change that turns one key into another
** would silently replace a value. Keys are compared after decoding their
** escapes ("a" and "\u0061" are one key). The syntax is checked only as far
** as the scan needs (lua-cjson checks the rest). */
typedef struct jkey { size_t off, len; const char *p; } jkey;   /* p: set once the buffer stops moving */
typedef struct jobj {   /* the decoded keys of one object */
    char *buf;
    size_t blen, bcap;
    jkey *keys;
    size_t nk, kcap;
} jobj;
typedef struct jscan {
    ltf_ctx *ctx;
    const unsigned char *p, *start, *end;
    const char *what;
} jscan;

static ltf_status jfail(jscan *s, const char *why) {
    return ltf_fail(s->ctx, LTF_ERR_DATA_LOSS, "checkpoint: %s is not valid JSON: %s at byte %zu", s->what, why,
                    (size_t)(s->p - s->start) + 1);
}

static void jskip(jscan *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')) s->p++;
}

static int jput(jobj *o, const void *b, size_t n) {
    if (!o) return 1;
    if (o->blen + n > o->bcap) {
        size_t cap = o->bcap ? o->bcap : 64;
        while (cap < o->blen + n) cap *= 2;
        char *nb = realloc(o->buf, cap);
        if (!nb) return 0;
        o->buf = nb;
        o->bcap = cap;
    }
    memcpy(o->buf + o->blen, b, n);
    o->blen += n;
    return 1;
}

static int jhex4(const unsigned char *p, unsigned *out) {
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int c = p[i], x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
        if (x < 0) return 0;
        v = v * 16 + (unsigned)x;
    }
    *out = v;
    return 1;
}

/* A string at s->p ('"'); its decoded bytes are appended to 'o' when not NULL. */
static ltf_status jstring(jscan *s, jobj *o) {
    s->p++;
    for (;;) {
        if (s->p >= s->end) return jfail(s, "an unterminated string");
        unsigned c = *s->p;
        if (c == '"') { s->p++; return LTF_OK; }
        if (c < 0x20) return jfail(s, "a control character in a string");
        if (c != '\\') {
            if (!jput(o, s->p, 1)) return ltf_fail_oom(s->ctx, "checkpoint JSON keys", 0);
            s->p++;
            continue;
        }
        if (s->end - s->p < 2) return jfail(s, "an unterminated string");
        unsigned char e = s->p[1], b[4];
        size_t n = 1;
        s->p += 2;
        switch (e) {
        case '"': case '\\': case '/': b[0] = e; break;
        case 'b': b[0] = '\b'; break;
        case 'f': b[0] = '\f'; break;
        case 'n': b[0] = '\n'; break;
        case 'r': b[0] = '\r'; break;
        case 't': b[0] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (s->end - s->p < 4 || !jhex4(s->p, &cp)) return jfail(s, "a bad \\u escape");
            s->p += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && s->end - s->p >= 6 && s->p[0] == '\\' && s->p[1] == 'u' &&
                jhex4(s->p + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                s->p += 6;
            }
            if (cp < 0x80) { b[0] = (unsigned char)cp; }
            else if (cp < 0x800) { b[0] = (unsigned char)(0xC0 | (cp >> 6)); b[1] = (unsigned char)(0x80 | (cp & 63)); n = 2; }
            else if (cp < 0x10000) {
                b[0] = (unsigned char)(0xE0 | (cp >> 12)); b[1] = (unsigned char)(0x80 | ((cp >> 6) & 63));
                b[2] = (unsigned char)(0x80 | (cp & 63)); n = 3;
            } else {
                b[0] = (unsigned char)(0xF0 | (cp >> 18)); b[1] = (unsigned char)(0x80 | ((cp >> 12) & 63));
                b[2] = (unsigned char)(0x80 | ((cp >> 6) & 63)); b[3] = (unsigned char)(0x80 | (cp & 63)); n = 4;
            }
            break;
        }
        default: return jfail(s, "a bad escape");
        }
        if (!jput(o, b, n)) return ltf_fail_oom(s->ctx, "checkpoint JSON keys", 0);
    }
}

static int cmp_jkey(const void *a, const void *b) {
    const jkey *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->p, y->p, n) : 0;
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static ltf_status jvalue(jscan *s, int depth);

static ltf_status jobject(jscan *s, int depth) {
    jobj o = { NULL, 0, 0, NULL, 0, 0 };
    ltf_status st = LTF_OK;
    s->p++;
    jskip(s);
    if (s->p < s->end && *s->p == '}') { s->p++; return LTF_OK; }
    for (;;) {
        jskip(s);
        if (s->p >= s->end || *s->p != '"') { st = jfail(s, "an object key that is not a string"); break; }
        if (o.nk == o.kcap) {
            size_t cap = o.kcap ? 2 * o.kcap : 16;
            jkey *nk = realloc(o.keys, cap * sizeof *nk);
            if (!nk) { st = ltf_fail_oom(s->ctx, "checkpoint JSON keys", cap * sizeof *nk); break; }
            o.keys = nk;
            o.kcap = cap;
        }
        size_t at = o.blen;
        if ((st = jstring(s, &o)) != LTF_OK) break;
        o.keys[o.nk].off = at;
        o.keys[o.nk].len = o.blen - at;
        o.keys[o.nk].p = NULL;
        o.nk++;
        jskip(s);
        if (s->p >= s->end || *s->p != ':') { st = jfail(s, "a missing ':'"); break; }
        s->p++;
        if ((st = jvalue(s, depth + 1)) != LTF_OK) break;
        jskip(s);
        if (s->p < s->end && *s->p == ',') { s->p++; continue; }
        if (s->p < s->end && *s->p == '}') { s->p++; break; }
        st = jfail(s, "a missing ',' or '}'");
        break;
    }
    if (st == LTF_OK && o.nk > 1) {
        for (size_t i = 0; i < o.nk; i++) o.keys[i].p = o.buf + o.keys[i].off;
        qsort(o.keys, o.nk, sizeof *o.keys, cmp_jkey);
        for (size_t i = 1; i < o.nk && st == LTF_OK; i++) {
            if (cmp_jkey(&o.keys[i - 1], &o.keys[i]) != 0) continue;
            char shown[121];
            size_t n = o.keys[i].len < 120 ? o.keys[i].len : 120;
            const unsigned char *k = (const unsigned char *)o.keys[i].p;
            for (size_t j = 0; j < n; j++) shown[j] = k[j] < 0x20 || k[j] == 0x7f ? '?' : (char)k[j];
            shown[n] = '\0';
            st = ltf_fail(s->ctx, LTF_ERR_DATA_LOSS, "checkpoint: %s repeats the key '%s%s' (the file is corrupted)",
                          s->what, shown, o.keys[i].len > 120 ? "..." : "");
        }
    }
    free(o.buf);
    free(o.keys);
    return st;
}

static ltf_status jvalue(jscan *s, int depth) {
    if (depth > 16) return jfail(s, "nesting deeper than 16");
    jskip(s);
    if (s->p >= s->end) return jfail(s, "a missing value");
    unsigned c = *s->p;
    if (c == '{') return jobject(s, depth);
    if (c == '"') return jstring(s, NULL);
    if (c == '[') {
        s->p++;
        jskip(s);
        if (s->p < s->end && *s->p == ']') { s->p++; return LTF_OK; }
        for (;;) {
            ltf_status st = jvalue(s, depth + 1);
            if (st != LTF_OK) return st;
            jskip(s);
            if (s->p < s->end && *s->p == ',') { s->p++; continue; }
            if (s->p < s->end && *s->p == ']') { s->p++; return LTF_OK; }
            return jfail(s, "a missing ',' or ']'");
        }
    }
    /* a number or a literal: its characters (lua-cjson checks its form) */
    const unsigned char *b = s->p;
    while (s->p < s->end && ((*s->p >= '0' && *s->p <= '9') || (*s->p >= 'a' && *s->p <= 'z') ||
                             (*s->p >= 'A' && *s->p <= 'Z') || *s->p == '-' || *s->p == '+' || *s->p == '.'))
        s->p++;
    return s->p == b ? jfail(s, "an unexpected character") : LTF_OK;
}

ltf_status ltf_ckpt_check_json(ltf_ctx *ctx, const char *json, size_t n, const char *what) {
    jscan s = { ctx, (const unsigned char *)json, (const unsigned char *)json, (const unsigned char *)json + n,
                what ? what : "the header" };
    ltf_status st = jvalue(&s, 1);
    if (st != LTF_OK) return st;
    jskip(&s);
    return s.p == s.end ? LTF_OK : jfail(&s, "trailing characters");
}
/* }==== */
