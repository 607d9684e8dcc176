/*
** fuzz_parse_tensor.c: libFuzzer target over ltf_tensor_parse (TensorProto
** bytes, core/io_tensor.c): byte 0 picks the wanted dtype (or none), the
** rest is the proto. A parsed tensor serializes and parses back to the same
** bytes of data; a failure has a message. One context per input.
** FUZZ_C_MAX_RUNS=100000 (scripts/fuzz-c.sh: CI's fixed run count is capped here)
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ltf.h"

static void fail(const char *what) {
    fprintf(stderr, "fuzz_parse_tensor: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    ltf_ctx *ctx = ltf_ctx_new();
    if (!ctx) return 0;
    int want = data[0] % (LTF_DTYPE_COUNT + 1) - 1;
    ltf_tensor *t = ltf_tensor_parse(ctx, data + 1, size - 1, want);
    if (t) {
        if (want >= 0 && ltf_tensor_dtype(t) != (ltf_dtype)want) fail("dtype differs from the one asked");
        /* a few values expanded over a large shape (up to ltf.h's 1 GiB
        ** limit) would need three copies for the round trip, past libFuzzer's
        ** 2 GiB RSS limit: those are only parsed */
        if ((uint64_t)ltf_tensor_num_elements(t) * ltf_dtype_size(ltf_tensor_dtype(t)) > ((uint64_t)64 << 20)) {
            ltf_tensor_release(t);
            ltf_ctx_release(ctx);
            return 0;
        }
        void *buf = NULL;
        size_t n = 0;
        if (ltf_tensor_serialize(ctx, t, &buf, &n) != LTF_OK) fail("serializing a parsed tensor failed");
        ltf_tensor *u = ltf_tensor_parse(ctx, buf, n, ltf_tensor_dtype(t));
        if (!u) fail("parsing a serialized tensor failed");
        int64_t m = ltf_tensor_num_elements(t);
        if (ltf_tensor_num_elements(u) != m || ltf_tensor_rank(u) != ltf_tensor_rank(t)) fail("round trip shape");
        if (ltf_tensor_dtype(t) != LTF_DTYPE_STRING &&
            memcmp(ltf_tensor_data(t), ltf_tensor_data(u), (size_t)m * ltf_dtype_size(ltf_tensor_dtype(t))) != 0)
            fail("round trip values");
        ltf_tensor_release(u);
        free(buf);
        ltf_tensor_release(t);
    } else {
        const char *msg = ltf_ctx_error(ctx);
        if (!msg || !msg[0]) fail("failure without a message");
    }
    ltf_ctx_release(ctx);
    return 0;
}
