/*
** fuzz_example.c: libFuzzer target over the tf.train.Example parser (the op
** parse_example_feature, core/cpu/example.c, protobuf-c underneath). The
** input is one serialized Example; it is parsed for two feature names as
** each kind (FixedLen, VarLen, FixedLenSequence), the dtype chosen by the
** input's size: every call must
** give tensors of the promised shape or InvalidArgumentError with a message,
** never a crash or leak.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ltf.h"

static void fail(const char *what) {
    fprintf(stderr, "fuzz_example: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ltf_ctx *ctx = ltf_ctx_new();
    if (!ctx) return 0;
    char *buf = malloc(size + 1);
    if (!buf) { ltf_ctx_release(ctx); return 0; }
    memcpy(buf, data, size);
    buf[size] = 0;
    /* a string tensor holds NUL-terminated copies: build it from the bytes directly */
    ltf_tensor *x = ltf_tensor_new(ctx, LTF_DTYPE_STRING, 0, NULL);
    if (x && size) ((ltf_string **)ltf_tensor_data(x))[0] = ltf_string_new(buf, size);
    static const char *const keys[] = {"a", "feature"};
    static const ltf_dtype dts[] = {LTF_DTYPE_INT64, LTF_DTYPE_FLOAT32, LTF_DTYPE_STRING};
    ltf_op_id op = ltf_op_lookup("parse_example_feature");
    if (op < 0) fail("no parse_example_feature op");
    for (int k = 0; x && k < 2; k++) {
        const char *kp = keys[k];
        ltf_tensor *key = ltf_tensor_from_data(ctx, LTF_DTYPE_STRING, 0, NULL, &kp);
        for (int di = (int)(size % 3), dn = 0; key && dn < 1; dn++) {   /* one dtype per input, by its size */
            int64_t zero = 0;
            ltf_tensor *dflt = ltf_tensor_new(ctx, dts[di], 1, &zero);
            for (int kind = 0; dflt && kind < 3; kind++) {
                ltf_attrs a;
                ltf_attrs_init(&a);
                a.i[0] = kind;
                a.i[1] = dts[di];
                a.i[2] = 1;
                a.nints = kind == 1 ? 0 : 1;
                a.ints[0] = 2;
                ltf_tensor *in[3] = {x, key, dflt}, *out[3] = {0};
                int nout = 0;
                ltf_status st = ltf_op_run(ctx, op, in, 3, &a, out, 3, &nout);
                if (st == LTF_OK) {
                    if (nout != (kind == 1 ? 3 : 1)) fail("wrong output count");
                    if (kind == 0 && (ltf_tensor_rank(out[0]) != 1 || ltf_tensor_dims(out[0])[0] != 2))
                        fail("FixedLen output shape");
                    if (kind == 1 && ltf_tensor_dims(out[0])[0] != ltf_tensor_dims(out[1])[0])
                        fail("VarLen indices and values differ in length");
                } else {
                    if (st != LTF_ERR_INVALID_ARGUMENT) fail("a failure other than InvalidArgumentError");
                    if (!ltf_ctx_error(ctx) || !*ltf_ctx_error(ctx)) fail("failure without a message");
                }
                for (int i = 0; i < nout; i++) ltf_tensor_release(out[i]);
            }
            ltf_tensor_release(dflt);
        }
        ltf_tensor_release(key);
    }
    ltf_tensor_release(x);
    free(buf);
    ltf_ctx_release(ctx);
    return 0;
}
