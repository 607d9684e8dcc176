/*
** fuzz_tfrecord.c: libFuzzer target over the TFRecord reader (core/tfrecord.c).
** The first byte picks the compression (0 none, 1 ZLIB, 2 GZIP) and the skip
** option; the rest is the file. Every record handed out must lie inside the
** bytes read and carry a matching masked CRC; the reader must end with OK
** (end of data) or a failure with a message, never a crash, leak or an
** allocation past twice the input. For one input in 64 the records are
** re-written by the writer to a temporary file and read back (the framing
** round trip). For one uncompressed input in 16 the bytes are also written
** to a file and read by ltf_tfrecord_reader_next_strings (records made in
** place in string blocks): the same records, offsets and final status as
** the memory reader's, in lockstep; and by the block-parallel path
** (ltf_tfrecord_read_block in another order, ltf_tfrecord_reader_frame_block,
** the data CRCs checked after) the same.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ltf.h"

static void fail(const char *what) {
    fprintf(stderr, "fuzz_tfrecord: %s\n", what);
    abort();
}

/* The block-parallel path (ltf_tfrecord_read_block in any order, framed in
** order, data CRCs deferred and checked here as the binding does) against
** the memory reader: the same records, offsets and ending. The inputs are
** small, so the blocks beyond the file's end are read too (empty). */
static void blockwise(ltf_ctx *ctx, const char *path, const uint8_t *bytes, size_t n, int flags) {
    ltf_tfrecord_reader *fb = NULL, *mr = NULL;
    if (ltf_tfrecord_reader_open(ctx, path, "", 0, flags, &fb) != LTF_OK) fail("blockwise: open failed");
    if (!ltf_tfrecord_reader_blockwise(fb)) fail("blockwise: a plain file is not blockwise");
    if (ltf_tfrecord_reader_open_memory(ctx, bytes, n, "m", "", flags, &mr) != LTF_OK) fail("blockwise: open failed");
    enum { NB = 4 };
    ltf_string_block *blk[NB];
    int64_t got[NB];
    /* read the blocks backwards (another order than the framing's) */
    for (int i = NB - 1; i >= 0; i--) got[i] = ltf_tfrecord_read_block(fb, (uint64_t)i, &blk[i]);
    static ltf_string *out[LTF_TFRECORD_BLOCK_RECORDS];
    static uint64_t offs[LTF_TFRECORD_BLOCK_RECORDS];
    static uint32_t crcs[LTF_TFRECORD_BLOCK_RECORDS];
    int i = 0, ended = 0;
    ltf_status st = LTF_OK;
    for (; i < NB && !ended; i++) {
        int cnt = 0;
        st = ltf_tfrecord_reader_frame_block(fb, blk[i], got[i], out, offs, crcs, LTF_TFRECORD_BLOCK_RECORDS, &cnt,
                                             &ended);
        blk[i] = NULL;
        for (int k = 0; k < cnt; k++) {
            int ok = ltf_tfrecord_record_ok(out[k], crcs[k]);
            if (!ok && (flags & LTF_TFRECORD_SKIP_CORRUPT)) { ltf_string_release(out[k]); continue; }
            const void *d;
            size_t len;
            uint64_t off;
            ltf_status ms = ltf_tfrecord_reader_next(mr, &d, &len, &off);
            if (!ok) {   /* the memory reader stops there too */
                if (ms != LTF_ERR_DATA_LOSS) fail("blockwise: a corrupt record the memory reader takes");
                for (int m = k; m < cnt; m++) ltf_string_release(out[m]);
                goto done;
            }
            if (ms != LTF_OK) fail("blockwise: a record the memory reader lacks");
            size_t blen = out[k] ? out[k]->len : 0;
            if (blen != len || off != offs[k] || (len && memcmp(out[k]->bytes, d, len)) ||
                (out[k] && out[k]->bytes[len] != 0))
                fail("blockwise: a record differs");
            ltf_string_release(out[k]);
        }
        if (st != LTF_OK && st != LTF_ERR_OUT_OF_RANGE) break;
    }
    {
        const void *d;
        size_t len;
        uint64_t off;
        ltf_status ms = ltf_tfrecord_reader_next(mr, &d, &len, &off);
        if (ended || st != LTF_OK) {
            ltf_status want = st == LTF_ERR_OUT_OF_RANGE ? LTF_ERR_OUT_OF_RANGE : st;
            if (want == LTF_OK) want = LTF_ERR_OUT_OF_RANGE;
            if (ms != want) fail("blockwise: a different ending");
        } else if (n > (size_t)NB * LTF_TFRECORD_BLOCK_FILE_BYTES) {
            /* more blocks than read here: nothing to compare */
        } else fail("blockwise: no end after the file's bytes");
    }
done:
    for (; i < NB; i++) ltf_string_block_done(blk[i]);
    ltf_tfrecord_reader_close(fb);
    ltf_tfrecord_reader_close(mr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static const char *const comps[] = {"", "ZLIB", "GZIP"};
    const char *comp = comps[(data[0] & 3) % 3];
    int flags = (data[0] & 4) ? LTF_TFRECORD_SKIP_CORRUPT : 0;
    ltf_ctx *ctx = ltf_ctx_new();
    if (!ctx) return 0;
    ltf_tfrecord_reader *r = NULL;
    if (ltf_tfrecord_reader_open_memory(ctx, data + 1, size - 1, "fuzz.tfrecord", comp, flags, &r) != LTF_OK) {
        ltf_ctx_release(ctx);
        return 0;
    }
    /* the rewrite round trip costs file system calls: one input in 64 */
    static unsigned calls;
    char path[] = "/tmp/fuzz_tfrecord_XXXXXX";
    int fd = (calls++ % 64 == 0) ? mkstemp(path) : -1;
    ltf_tfrecord_writer *w = NULL;
    if (fd >= 0) {
        close(fd);
        if (ltf_tfrecord_writer_open(ctx, path, "", &w) != LTF_OK) w = NULL;
    }
    int n = 0;
    for (;;) {
        const void *d;
        size_t len;
        uint64_t off;
        ltf_status st = ltf_tfrecord_reader_next(r, &d, &len, &off);
        if (st == LTF_ERR_OUT_OF_RANGE) break;
        if (st != LTF_OK) {
            if (!ltf_ctx_error(ctx) || !*ltf_ctx_error(ctx)) fail("failure without a message");
            break;
        }
        if (comps[(data[0] & 3) % 3][0] == 0 && (off + 16 + len > size - 1)) fail("record past the end");
        if (len && !d) fail("record without data");
        if (w && ltf_tfrecord_write(w, d, len) != LTF_OK) fail("rewrite failed");
        n++;
    }
    ltf_tfrecord_reader_close(r);
    if (w) {
        if (ltf_tfrecord_writer_close(w) != LTF_OK) fail("close failed");
        ltf_tfrecord_reader *r2 = NULL;
        if (ltf_tfrecord_reader_open(ctx, path, "", 0, 0, &r2) != LTF_OK) fail("reopen failed");
        int m = 0;
        const void *d;
        size_t len;
        uint64_t off;
        while (ltf_tfrecord_reader_next(r2, &d, &len, &off) == LTF_OK) m++;
        if (m != n) fail("rewritten file has a different record count");
        ltf_tfrecord_reader_close(r2);
    }
    if (fd >= 0) unlink(path);
    /* string blocks over a file against the memory reader */
    static unsigned bcalls;
    char bpath[] = "/tmp/fuzz_tfrecord_b_XXXXXX";
    int bfd = (comp[0] == 0 && bcalls++ % 16 == 0) ? mkstemp(bpath) : -1;
    if (bfd >= 0) {
        if (size > 1 && write(bfd, data + 1, size - 1) != (ssize_t)(size - 1)) fail("temp write failed");
        close(bfd);
        ltf_tfrecord_reader *fb = NULL, *mr = NULL;
        if (ltf_tfrecord_reader_open(ctx, bpath, "", 0, flags, &fb) != LTF_OK) fail("open failed");
        if (ltf_tfrecord_reader_open_memory(ctx, data + 1, size - 1, "m", "", flags, &mr) != LTF_OK) fail("open failed");
        ltf_string *out[64];
        uint64_t offs[64];
        for (;;) {
            int cnt = 0;
            ltf_status st = ltf_tfrecord_reader_next_strings(fb, out, offs, 64, &cnt);
            for (int i = 0; i < cnt; i++) {
                const void *d;
                size_t len;
                uint64_t off;
                if (ltf_tfrecord_reader_next(mr, &d, &len, &off) != LTF_OK) fail("blocks: a record the memory reader lacks");
                size_t blen = out[i] ? out[i]->len : 0;
                if (blen != len || off != offs[i] || (len && memcmp(out[i]->bytes, d, len)) ||
                    (out[i] && out[i]->bytes[len] != 0))
                    fail("blocks: a record differs");
                ltf_string_release(out[i]);
            }
            if (st != LTF_OK) {
                const void *d;
                size_t len;
                uint64_t off;
                ltf_status ms = ltf_tfrecord_reader_next(mr, &d, &len, &off);
                if (ms != st) fail("blocks: a different ending");
                break;
            }
            if (cnt == 0) fail("blocks: OK without records");
        }
        if (ltf_tfrecord_reader_skipped(fb) != ltf_tfrecord_reader_skipped(mr)) fail("blocks: skipped counts differ");
        ltf_tfrecord_reader_close(fb);
        ltf_tfrecord_reader_close(mr);
        blockwise(ctx, bpath, data + 1, size - 1, flags);
        unlink(bpath);
    }
    ltf_ctx_release(ctx);
    return 0;
}
