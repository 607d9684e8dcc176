/*
** test_checkpoint.c: the checkpoint files' C API (core/checkpoint.c) as a
** host uses it: write two tensors with a header whose CRC32C place the
** writer fills, reopen, check the header bytes and layout, verify, read,
** restore into variables; then the refusals (truncated, huge header
** length, every flipped bit, a damaged marker, bad spans, a missing file, a
** directory) and repeated JSON keys.
*/
#include <stdlib.h>
#include <unistd.h>
#include "check.h"
#include "ltf.h"

/* CRC32C bit by bit: the reference for every path of ltf_crc32c */
static uint32_t crc_bits(uint32_t crc, const unsigned char *p, size_t n) {
    uint32_t c = ~crc;
    while (n--) {
        c ^= *p++;
        for (int j = 0; j < 8; j++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return ~c;
}

static void spit(const char *path, const unsigned char *b, size_t n) {
    FILE *f = fopen(path, "wb");
    fwrite(b, 1, n, f);
    fclose(f);
}

int main(void) {
    ltf_ctx *ctx = ltf_ctx_new();
    char dir[] = "/tmp/ltf-test-ckpt-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256], bad[256];
    snprintf(path, sizeof path, "%s/c", dir);
    snprintf(bad, sizeof bad, "%s/bad", dir);

    /* CRC32C check value */
    CHECK(ltf_crc32c(0, "123456789", 9) == 0xE3069283u);
    /* every length to 1100 (the 256-byte folding path's edges: 256, 320, 511,
    ** 512, ...) and some long ones, at every alignment, from nonzero starts */
    {
        size_t cap = 70000;
        unsigned char *buf = malloc(cap);
        CHECK(buf != NULL);
        uint32_t x = 12345;
        for (size_t i = 0; i < cap; i++) { x = x * 1103515245u + 12345u; buf[i] = (unsigned char)(x >> 16); }
        int bad = 0;
        for (size_t n = 0; n <= 1100; n++) {
            size_t off = n % 64;
            uint32_t init = (uint32_t)(n * 2654435761u);
            if (ltf_crc32c(init, buf + off, n) != crc_bits(init, buf + off, n)) bad++;
        }
        static const size_t longs[] = {4095, 4096, 12288, 12289, 65536, 69000};
        for (size_t i = 0; i < sizeof longs / sizeof longs[0]; i++)
            if (ltf_crc32c(7, buf + i, longs[i]) != crc_bits(7, buf + i, longs[i])) bad++;
        CHECK(bad == 0);
        free(buf);
    }

    float a[3] = { 1.5f, -2.0f, 3.25f };
    int64_t b[2] = { -7, 1LL << 40 };
    int64_t da[1] = { 3 }, db[1] = { 2 };
    ltf_tensor *ta = ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 1, da, a);
    ltf_tensor *tb = ltf_tensor_from_data(ctx, LTF_DTYPE_INT64, 1, db, b);
    ltf_tensor *ts[2] = { ta, tb };
    uint64_t begins[2] = { 0, 16 };   /* a: 12 bytes, 4 of padding, b: 16 bytes */
    /* the eight digits after the marker are where ltf_ckpt_write puts the CRC */
    const char *hdr = LTF_CKPT_MAGIC "XXXXXXXX\"},"
                      "\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]},"
                      "\"b\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[16,32]}}";
    size_t hlen = strlen(hdr);
    size_t crc_at = strlen(LTF_CKPT_MAGIC);
    CHECK(ltf_ckpt_write(ctx, path, hdr, hlen, crc_at, ts, begins, 2, 32) == LTF_OK);
    uint32_t crc = 0;
    CHECK(ltf_ckpt_data_crc32c(ctx, ts, begins, 2, 32, &crc) == LTF_OK);
    /* misuse of the layout is refused */
    uint64_t overlapping[2] = { 0, 8 };
    CHECK(ltf_ckpt_write(ctx, path, hdr, hlen, crc_at, ts, overlapping, 2, 32) == LTF_ERR_INVALID_ARGUMENT);
    CHECK(ltf_ckpt_write(ctx, path, hdr, hlen, hlen - 4, ts, begins, 2, 32) == LTF_ERR_INVALID_ARGUMENT);

    ltf_ckpt_file *f = ltf_ckpt_open(ctx, path);
    CHECK(f != NULL);
    if (f) {
        size_t n;
        const char *h = ltf_ckpt_header(f, &n);
        CHECK(n % 8 == 0 && n >= hlen);
        CHECK(ltf_ckpt_data_size(f) == 32);
        /* the checksum: every byte of the file but its own 8 digits */
        CHECK(ltf_ckpt_verified(f) == 1);
        unsigned char whole[512];
        FILE *wf = fopen(path, "rb");
        size_t wn = fread(whole, 1, sizeof whole, wf);
        fclose(wf);
        uint32_t fc = ltf_crc32c(ltf_crc32c(0, whole, 8 + crc_at), whole + 8 + crc_at + 8, wn - 8 - crc_at - 8);
        char want[9];
        snprintf(want, sizeof want, "%08x", (unsigned)fc);
        CHECK(memcmp(h + crc_at, want, 8) == 0);
        CHECK(memcmp(h, hdr, crc_at) == 0);
        CHECK(ltf_ckpt_verify(ctx, f, crc) == LTF_OK);   /* the data's own CRC (the old format's) */
        CHECK(ltf_ckpt_verify(ctx, f, crc ^ 1) == LTF_ERR_DATA_LOSS);
        ltf_ckpt_span good[2] = { { 0, 12, 12 }, { 16, 32, 16 } };
        CHECK(ltf_ckpt_check_layout(ctx, f, good, 2) == LTF_OK);
        ltf_ckpt_span overlap[2] = { { 0, 16, 16 }, { 8, 24, 16 } };
        CHECK(ltf_ckpt_check_layout(ctx, f, overlap, 2) == LTF_ERR_DATA_LOSS);
        ltf_ckpt_span outside[1] = { { 24, 40, 16 } };
        CHECK(ltf_ckpt_check_layout(ctx, f, outside, 1) == LTF_ERR_DATA_LOSS);
        ltf_ckpt_span wrong[1] = { { 0, 8, 12 } };
        CHECK(ltf_ckpt_check_layout(ctx, f, wrong, 1) == LTF_ERR_DATA_LOSS);

        ltf_tensor *rb = ltf_ckpt_read(ctx, f, LTF_DTYPE_INT64, 1, db, 16);
        CHECK(rb && memcmp(ltf_tensor_data(rb), b, sizeof b) == 0);
        ltf_tensor_release(rb);
        CHECK(ltf_ckpt_read(ctx, f, LTF_DTYPE_INT64, 1, db, 24) == NULL);
        CHECK(ltf_ctx_status(ctx) == LTF_ERR_DATA_LOSS);

        /* restore into variables, in place */
        int64_t zda[1] = { 3 }, zdb[1] = { 2 };
        ltf_tensor *za = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 1, zda);
        ltf_tensor *zb = ltf_tensor_new(ctx, LTF_DTYPE_INT64, 1, zdb);
        ltf_tensor *va = ltf_variable_new(ctx, za, "a", 1, -2, NULL);
        ltf_tensor *vb = ltf_variable_new(ctx, zb, "b", 1, -2, NULL);
        ltf_tensor_release(za);
        ltf_tensor_release(zb);
        ltf_tensor *vs[2] = { va, vb };
        CHECK(ltf_ckpt_restore(ctx, f, vs, begins, 2) == LTF_OK);
        ltf_tensor *pa = ltf_variable_peek(va), *pb = ltf_variable_peek(vb);
        CHECK(memcmp(ltf_tensor_data(pa), a, sizeof a) == 0);
        CHECK(memcmp(ltf_tensor_data(pb), b, sizeof b) == 0);
        /* all or nothing: the second target lies outside, the first keeps its value */
        uint64_t far[2] = { 0, 24 };   /* vb from offset 0 would change it */
        ltf_tensor *vs2[2] = { vb, va };
        CHECK(ltf_ckpt_restore(ctx, f, vs2, far, 2) == LTF_ERR_DATA_LOSS);
        ltf_tensor *pb2 = ltf_variable_peek(vb);
        CHECK(memcmp(ltf_tensor_data(pb2), b, sizeof b) == 0);
        ltf_tensor_release(pa);
        ltf_tensor_release(pb);
        ltf_tensor_release(pb2);
        ltf_tensor_release(va);
        ltf_tensor_release(vb);
        ltf_ckpt_close(f);
    }

    /* refusals */
    FILE *in = fopen(path, "rb");
    unsigned char buf[512];
    size_t n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    spit(bad, buf, 5);
    CHECK(ltf_ckpt_open(ctx, bad) == NULL && ltf_ctx_status(ctx) == LTF_ERR_DATA_LOSS);
    spit(bad, buf, 20);
    CHECK(ltf_ckpt_open(ctx, bad) == NULL && ltf_ctx_status(ctx) == LTF_ERR_DATA_LOSS);
    unsigned char huge[16] = { 0, 0, 0, 0, 0, 0, 0, 0x40, '{', '}' };
    CHECK(ltf_ckpt_open_memory(ctx, huge, sizeof huge) == NULL && ltf_ctx_status(ctx) == LTF_ERR_DATA_LOSS);
    CHECK(strstr(ltf_ctx_error(ctx), "over the limit") != NULL);
    /* every single-bit flip of the file is refused at open */
    int refused = 0;
    for (size_t i = 0; i < n; i++) {
        for (int bit = 0; bit < 8; bit++) {
            buf[i] ^= (unsigned char)(1u << bit);
            f = ltf_ckpt_open_memory(ctx, buf, n);
            if (!f && ltf_ctx_status(ctx) == LTF_ERR_DATA_LOSS) refused++;
            ltf_ckpt_close(f);
            buf[i] ^= (unsigned char)(1u << bit);
        }
    }
    CHECK(refused == (int)(8 * n));
    buf[n - 3] ^= 0x20;   /* a data byte */
    spit(bad, buf, n);
    CHECK(ltf_ckpt_open(ctx, bad) == NULL && ltf_ctx_status(ctx) == LTF_ERR_DATA_LOSS);
    CHECK(strstr(ltf_ctx_error(ctx), "checksum mismatch") != NULL);
    buf[n - 3] ^= 0x20;
    buf[8 + 20] ^= 0x01;  /* the marker */
    CHECK(ltf_ckpt_open_memory(ctx, buf, n) == NULL && ltf_ctx_status(ctx) == LTF_ERR_DATA_LOSS);
    CHECK(strstr(ltf_ctx_error(ctx), "1 bits away from luatf's format marker") != NULL);
    buf[8 + 20] ^= 0x01;
    /* a plain safetensors file is not checked */
    static const char plain[] = "\x0a\0\0\0\0\0\0\0{\"a\":\"b\"}  ";
    f = ltf_ckpt_open_memory(ctx, plain, sizeof plain - 1);
    CHECK(f != NULL && ltf_ckpt_verified(f) == 0);
    ltf_ckpt_close(f);

    /* repeated JSON keys */
    static const char *const dup[] = { "{\"a\":1,\"a\":2}", "{\"a\":1,\"\\u0061\":2}", "{\"x\":[{\"k\":1,\"k\":1}]}",
                                       "{\"\\ud83d\\ude00\":1,\"\xf0\x9f\x98\x80\":2}" };
    for (size_t i = 0; i < sizeof dup / sizeof *dup; i++) {
        CHECK(ltf_ckpt_check_json(ctx, dup[i], strlen(dup[i]), "the header") == LTF_ERR_DATA_LOSS);
        CHECK(strstr(ltf_ctx_error(ctx), "the header repeats the key") != NULL);
    }
    static const char *const fine[] = { "{}", "{\"a\":1,\"b\":{\"a\":2},\"c\":[1,\"a\",{\"a\":null}]}", "[]",
                                        "{\"a\\u0000x\":1,\"a\\u0000y\":2}", " {\"a\" : true } " };
    for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) CHECK(ltf_ckpt_check_json(ctx, fine[i], strlen(fine[i]), NULL) == LTF_OK);
    static const char *const broken[] = { "", "{", "{\"a\"}", "{\"a\":1,}", "{\"a\":1} x", "\"\\q\"", "[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]" };
    for (size_t i = 0; i < sizeof broken / sizeof *broken; i++)
        CHECK(ltf_ckpt_check_json(ctx, broken[i], strlen(broken[i]), NULL) == LTF_ERR_DATA_LOSS);
    snprintf(bad, sizeof bad, "%s/absent", dir);
    CHECK(ltf_ckpt_open(ctx, bad) == NULL && ltf_ctx_status(ctx) == LTF_ERR_NOT_FOUND);
    CHECK(ltf_ckpt_open(ctx, dir) == NULL && ltf_ctx_status(ctx) == LTF_ERR_NOT_FOUND);

    /* atomic small files */
    snprintf(bad, sizeof bad, "%s/state", dir);
    CHECK(ltf_file_write_atomic(ctx, bad, "hello", 5) == LTF_OK);
    CHECK(ltf_file_write_atomic(ctx, bad, "bye", 3) == LTF_OK);
    in = fopen(bad, "rb");
    n = fread(buf, 1, sizeof buf, in);
    fclose(in);
    CHECK(n == 3 && memcmp(buf, "bye", 3) == 0);
    snprintf(bad, sizeof bad, "%s/no/such/dir/file", dir);
    CHECK(ltf_file_write_atomic(ctx, bad, "x", 1) == LTF_ERR_NOT_FOUND);

    ltf_tensor_release(ta);
    ltf_tensor_release(tb);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    ltf_ctx_release(ctx);
    CHECK_DONE();
}
