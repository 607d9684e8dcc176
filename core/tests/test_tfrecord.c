/*
** test_tfrecord.c: the TFRecord C API (core/tfrecord.c) as a host uses it:
** the framing bytes against TensorFlow's published check values, writes and
** reads back for each compression (a record longer than the read buffer),
** offsets, corrupted and truncated records (with and without the skip
** flag), readers over memory, bad arguments, and string slabs.
*/
#include <stdlib.h>
#include <unistd.h>
#include "check.h"
#include "ltf.h"

static size_t slurp(const char *path, unsigned char *b, size_t cap) {
    FILE *f = fopen(path, "rb");
    size_t n = fread(b, 1, cap, f);
    fclose(f);
    return n;
}

int main(void) {
    ltf_ctx *ctx = ltf_ctx_new();
    char dir[] = "/tmp/ltf-test-tfrecord-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/r", dir);

    /* masked CRC32C: mask(crc32c("")) = mask(0) = 0xa282ead8; of 8 zero bytes (an empty record's length) */
    CHECK(ltf_tfrecord_masked_crc("", 0) == 0xa282ead8u);
    {
        uint32_t c = ltf_crc32c(0, "\0\0\0\0\0\0\0\0", 8);
        CHECK(ltf_tfrecord_masked_crc("\0\0\0\0\0\0\0\0", 8) == (((c >> 15) | (c << 17)) + 0xa282ead8u));
    }

    static const char *const comps[] = {"", "ZLIB", "GZIP"};
    size_t big = 700000;
    char *bigrec = malloc(big);
    for (size_t i = 0; i < big; i++) bigrec[i] = (char)(i * 7);
    for (int c = 0; c < 3; c++) {
        ltf_tfrecord_writer *w = NULL;
        CHECK(ltf_tfrecord_writer_open(ctx, path, comps[c], &w) == LTF_OK);
        CHECK(ltf_tfrecord_write(w, "abc", 3) == LTF_OK);
        CHECK(ltf_tfrecord_write(w, "", 0) == LTF_OK);
        CHECK(ltf_tfrecord_writer_flush(w) == LTF_OK);
        CHECK(ltf_tfrecord_write(w, bigrec, big) == LTF_OK);
        CHECK(ltf_tfrecord_writer_close(w) == LTF_OK);
        ltf_tfrecord_reader *r = NULL;
        CHECK(ltf_tfrecord_reader_open(ctx, path, comps[c], 4096, 0, &r) == LTF_OK);
        const void *d;
        size_t len;
        uint64_t off;
        CHECK(ltf_tfrecord_reader_next(r, &d, &len, &off) == LTF_OK && len == 3 && !memcmp(d, "abc", 3) && off == 0);
        CHECK(ltf_tfrecord_reader_next(r, &d, &len, &off) == LTF_OK && len == 0 && off == 19);
        CHECK(ltf_tfrecord_reader_next(r, &d, &len, &off) == LTF_OK && len == big && !memcmp(d, bigrec, big) && off == 35);
        CHECK(ltf_tfrecord_reader_next(r, &d, &len, &off) == LTF_ERR_OUT_OF_RANGE);
        ltf_tfrecord_reader_close(r);
    }

    /* the exact bytes of a plain file: 8-byte length, masked CRCs */
    ltf_tfrecord_writer *w = NULL;
    CHECK(ltf_tfrecord_writer_open(ctx, path, NULL, &w) == LTF_OK);
    CHECK(ltf_tfrecord_write(w, "hello", 5) == LTF_OK);
    CHECK(ltf_tfrecord_write(w, "world!", 6) == LTF_OK);
    CHECK(ltf_tfrecord_writer_close(w) == LTF_OK);
    unsigned char file[64];
    size_t n = slurp(path, file, sizeof file);
    CHECK(n == 21 + 22);
    CHECK(file[0] == 5 && file[1] == 0 && file[7] == 0 && !memcmp(file + 12, "hello", 5));
    uint32_t m = ltf_tfrecord_masked_crc(file, 8);
    CHECK(file[8] == (m & 0xFF) && file[11] == (m >> 24));

    /* corruption over memory: a data bit, a length bit, truncation; with and without skipping */
    const void *d;
    size_t len;
    uint64_t off;
    ltf_tfrecord_reader *r = NULL;
    unsigned char bad[64];
    memcpy(bad, file, n);
    bad[12 + 1] ^= 4;
    CHECK(ltf_tfrecord_reader_open_memory(ctx, bad, n, "bad.tfrecord", "", 0, &r) == LTF_OK);
    CHECK(ltf_tfrecord_reader_next(r, &d, &len, &off) == LTF_ERR_DATA_LOSS);
    CHECK(strstr(ltf_ctx_error(ctx), "bad.tfrecord: corrupted record at 0") != NULL);
    ltf_tfrecord_reader_close(r);
    CHECK(ltf_tfrecord_reader_open_memory(ctx, bad, n, "bad.tfrecord", "", LTF_TFRECORD_SKIP_CORRUPT, &r) == LTF_OK);
    CHECK(ltf_tfrecord_reader_next(r, &d, &len, &off) == LTF_OK && len == 6 && off == 21);
    CHECK(ltf_tfrecord_reader_next(r, &d, &len, &off) == LTF_ERR_OUT_OF_RANGE);
    CHECK(ltf_tfrecord_reader_skipped(r) == 1);
    ltf_tfrecord_reader_close(r);
    memcpy(bad, file, n);
    bad[21 + 3] ^= 1;   /* the second record's length */
    CHECK(ltf_tfrecord_reader_open_memory(ctx, bad, n, "bad.tfrecord", "", 0, &r) == LTF_OK);
    CHECK(ltf_tfrecord_reader_next(r, &d, &len, &off) == LTF_OK);
    CHECK(ltf_tfrecord_reader_next(r, &d, &len, &off) == LTF_ERR_DATA_LOSS);
    CHECK(strstr(ltf_ctx_error(ctx), "corrupted record at 21") != NULL);
    ltf_tfrecord_reader_close(r);
    for (size_t cut = 22; cut < n; cut++) {
        CHECK(ltf_tfrecord_reader_open_memory(ctx, file, cut, "t", "", 0, &r) == LTF_OK);
        CHECK(ltf_tfrecord_reader_next(r, &d, &len, &off) == LTF_OK);
        CHECK(ltf_tfrecord_reader_next(r, &d, &len, &off) == LTF_ERR_DATA_LOSS);
        CHECK(strstr(ltf_ctx_error(ctx), "t: truncated record at 21") != NULL);
        ltf_tfrecord_reader_close(r);
    }
    /* a huge length with a valid CRC: truncated, no huge allocation */
    unsigned char huge[16] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f};
    m = ltf_tfrecord_masked_crc(huge, 8);
    for (int i = 0; i < 4; i++) huge[8 + i] = (unsigned char)(m >> (8 * i));
    CHECK(ltf_tfrecord_reader_open_memory(ctx, huge, 16, "h", "", 0, &r) == LTF_OK);
    CHECK(ltf_tfrecord_reader_next(r, &d, &len, &off) == LTF_ERR_DATA_LOSS);
    ltf_tfrecord_reader_close(r);

    /* bad arguments */
    CHECK(ltf_tfrecord_writer_open(ctx, path, "LZ4", &w) == LTF_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ltf_ctx_error(ctx), "unknown compression_type 'LZ4'") != NULL);
    CHECK(ltf_tfrecord_writer_open_level(ctx, path, "GZIP", 11, &w) == LTF_ERR_INVALID_ARGUMENT);
    CHECK(ltf_tfrecord_reader_open(ctx, "/nonexistent/x.tfrecord", "", 0, 0, &r) == LTF_ERR_NOT_FOUND);
    CHECK(ltf_tfrecord_writer_open(ctx, "/nonexistent/dir/x", "", &w) == LTF_ERR_NOT_FOUND);

    /* string slabs (the reader's chunks): strings in one allocation, released
    ** in any order, retained past the others; ASan sees a use after free or
    ** a leak if the slab is freed too early or never */
    {
        ltf_string_slab *b = ltf_string_slab_new(80);   /* room for three entries of 24 bytes */
        CHECK(b != NULL);
        ltf_string *s1 = ltf_string_slab_add(b, "abc", 3);
        ltf_string *s2 = ltf_string_slab_add(b, "", 0);
        CHECK(s1 && s2 && s1->len == 3 && !strcmp(s1->bytes, "abc") && s2->len == 0 && s2->bytes[0] == 0);
        CHECK((s1->refs & ~LTF_STRING_SLAB_BIT) == 1 && (s1->refs & LTF_STRING_SLAB_BIT));
        CHECK(ltf_string_slab_add(b, bigrec, 64) == NULL);   /* no room: NULL, the slab untouched */
        ltf_string *s3 = ltf_string_slab_add(b, "xy", 2);
        CHECK(s3 != NULL && !strcmp(s3->bytes, "xy") && s3->bytes != s1->bytes);
        ltf_string_slab_done(b);
        s1->refs++;                      /* a second tensor holds s1 */
        ltf_string_release(s2);
        ltf_string_release(s1);
        ltf_string_release(s3);
        CHECK(!strcmp(s1->bytes, "abc"));  /* still alive */
        ltf_string_release(s1);          /* the last: frees the slab */
        b = ltf_string_slab_new(16);
        ltf_string_slab_done(b);         /* nothing added: freed at once */
    }

    /* string blocks: a record's framing turned into a string in place (the
    ** 12-byte header becomes len + refs, the footer's first byte the NUL),
    ** misaligned places refused, the block alive until its last string */
    {
        ltf_string_block *b = ltf_string_block_new();
        CHECK(b != NULL);
        unsigned char *d = ltf_string_block_data(b);
        CHECK(((uintptr_t)d & 7) == 0);
        memcpy(d + 12, "hello", 5);
        memcpy(d + 17, "CRCx", 4);
        memcpy(d + 24 + 12, "w", 1);
        ltf_string *s1 = ltf_string_block_adopt(b, 0, 5);
        ltf_string *s2 = ltf_string_block_adopt(b, 24, 1);
        CHECK(s1 && (unsigned char *)s1 == d && s1->len == 5 && !strcmp(s1->bytes, "hello"));
        CHECK(s2 && s2->len == 1 && !strcmp(s2->bytes, "w"));
        CHECK((s1->refs & ~LTF_STRING_BLOCK_BIT) == 1 && (s1->refs & LTF_STRING_BLOCK_BIT));
        CHECK(ltf_string_block_adopt(b, 4, 1) == NULL);   /* not 8-aligned */
        CHECK(ltf_string_block_adopt(b, LTF_STRING_BLOCK_SIZE - LTF_STRING_BLOCK_HEAD - 8, 1) == NULL);   /* no room */
        ltf_string_block_done(b);
        s1->refs++;
        ltf_string_release(s1);
        ltf_string_release(s2);
        CHECK(!strcmp(s1->bytes, "hello"));   /* still alive */
        ltf_string_release(s1);               /* the last: the block is kept for reuse or freed */
        b = ltf_string_block_new();
        ltf_string_block_done(b);             /* nothing adopted */
    }

    free(bigrec);
    unlink(path);
    rmdir(dir);
    ltf_ctx_release(ctx);
    CHECK_DONE();
}
