/*
** fuzz_checkpoint.c: libFuzzer target over the checkpoint file loader
** (core/checkpoint.c): ltf_ckpt_open_memory on arbitrary bytes (header
** length checks), then with a layout the input describes: ltf_ckpt_check_layout,
** ltf_ckpt_verify, ltf_ckpt_read and ltf_ckpt_restore into variables at any
** offsets; ltf_crc32c must agree with itself split at any point. A file
** that opens as a luatf checkpoint (ltf_ckpt_verified) must stop opening
** when any one bit of it is flipped; ltf_ckpt_check_json runs over the
** header and over the whole input (repeated keys, any bytes). The JSON
** header is parsed by lua-cjson on the Lua side (docs/checkpoints.md), so
** what is fuzzed here is every number a header could carry.
**
** Input: byte 0 = number of spans k (mod 9); then k spans of 3 little-endian
** u64 (begin, end, bytes) and k reads of (dtype byte, rank byte, 4 dims of
** u16, u64 begin); the rest is the file.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ltf.h"

static uint64_t rd64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void fail(const char *what) {
    fprintf(stderr, "fuzz_checkpoint: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    int k = data[0] % 9;
    size_t need = 1 + (size_t)k * (24 + 2 + 8 + 8);
    if (size < need) return 0;
    ltf_ckpt_span spans[8];
    struct { int dt, rank; int64_t dims[4]; uint64_t begin; } reads[8];
    const uint8_t *p = data + 1;
    for (int i = 0; i < k; i++) {
        spans[i].begin = rd64(p);
        spans[i].end = rd64(p + 8);
        spans[i].bytes = rd64(p + 16);
        p += 24;
    }
    for (int i = 0; i < k; i++) {
        reads[i].dt = p[0] % (LTF_DTYPE_COUNT + 1);
        reads[i].rank = p[1] % 6;
        for (int d = 0; d < 4; d++) reads[i].dims[d] = (int64_t)(p[2 + 2 * d] | (p[3 + 2 * d] << 8)) % 300;
        reads[i].begin = rd64(p + 10);
        p += 18;
    }
    const uint8_t *file = p;
    size_t fsize = size - (size_t)(p - data);

    /* crc32c: one pass equals two passes split anywhere */
    size_t cut = k ? (size_t)(spans[0].begin % (fsize + 1)) : fsize / 2;
    if (ltf_crc32c(0, file, fsize) != ltf_crc32c(ltf_crc32c(0, file, cut), file + cut, fsize - cut))
        fail("crc32c differs when split");

    ltf_ctx *ctx = ltf_ctx_new();
    if (!ctx) return 0;
    if (ltf_ckpt_check_json(ctx, (const char *)file, fsize, NULL) != LTF_OK && ltf_ctx_status(ctx) != LTF_ERR_DATA_LOSS)
        fail("check_json failed with another kind than DATA_LOSS");
    ltf_ckpt_file *f = ltf_ckpt_open_memory(ctx, file, fsize);
    if (!f) {
        if (ltf_ctx_status(ctx) == LTF_OK || !ltf_ctx_error(ctx)[0]) fail("open failed without a message");
        ltf_ctx_release(ctx);
        return 0;
    }
    size_t hlen;
    const char *h = ltf_ckpt_header(f, &hlen);
    uint64_t dsize = ltf_ckpt_data_size(f);
    if (8 + hlen + dsize != fsize || hlen > LTF_CKPT_MAX_HEADER || (const uint8_t *)h == NULL) fail("bad header bounds");
    (void)ltf_ckpt_check_json(ctx, h, hlen, "the header");
    if (ltf_ckpt_verified(f)) {
        /* every byte is covered: one flipped bit (chosen by the input) must be refused */
        uint8_t *copy = malloc(fsize);
        if (copy) {
            memcpy(copy, file, fsize);
            size_t bit = (size_t)(k ? spans[0].end : cut) % (8 * fsize);
            copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
            ltf_ckpt_file *g = ltf_ckpt_open_memory(ctx, copy, fsize);
            if (g || ltf_ctx_status(ctx) != LTF_ERR_DATA_LOSS) fail("a verified file with a flipped bit opened");
            ltf_ckpt_close(g);
            free(copy);
        }
    }
    if (ltf_ckpt_check_layout(ctx, f, spans, k) == LTF_OK) {
        for (int i = 0; i < k; i++)
            if (spans[i].end > dsize || spans[i].end - spans[i].begin != spans[i].bytes) fail("layout accepted a bad span");
    }
    (void)ltf_ckpt_verify(ctx, f, size >= 8 ? (uint32_t)rd64(data + size - 8) : 0u);
    /* reads and restores at the described offsets */
    ltf_tensor *vars[8];
    uint64_t begins[8];
    int nv = 0;
    for (int i = 0; i < k; i++) {
        ltf_tensor *t = ltf_ckpt_read(ctx, f, (ltf_dtype)reads[i].dt, reads[i].rank, reads[i].dims, reads[i].begin);
        if (!t) continue;
        ltf_tensor *v = ltf_variable_new(ctx, t, "v", 1, -2, NULL);
        ltf_tensor_release(t);
        if (v) {
            vars[nv] = v;
            begins[nv] = spans[i].begin;
            nv++;
        }
    }
    (void)ltf_ckpt_restore(ctx, f, vars, begins, nv);
    for (int i = 0; i < nv; i++) ltf_tensor_release(vars[i]);
    ltf_ckpt_close(f);
    ltf_ctx_release(ctx);
    return 0;
}
