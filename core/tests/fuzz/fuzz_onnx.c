/*
** fuzz_onnx.c: libFuzzer target over the ONNX reader (core/onnx_reader.c,
** protobuf-c underneath): the input is read as a ModelProto and as a
** TensorProto; each read must give a model / tensor or an error with a
** message, never a crash or leak, and so must taking each initializer of a
** model that reads (plain, and in HWIO straight from the bytes). Seeds: small models from
** libonnx-testdata and a TensorProto (core/tests/fuzz/corpus/fuzz_onnx/).
** FUZZ_C_MAX_RUNS=20000
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "ltf.h"
#include "ltf_onnx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ltf_ctx *ctx = ltf_ctx_new();
    if (!ctx) return 0;
    ltf_onnx_model *m = ltf_onnx_model_read(ctx, data, size);
    if (m) {
        /* every initializer taken, in HWIO (straight from the bytes) and plain */
        for (size_t i = 0; i < ltf_onnx_model_ninitializers(m); i++) {
            ltf_tensor *h = ltf_onnx_model_initializer_hwio(m, i);
            if (h) ltf_tensor_release(h);
            else if (!ltf_ctx_error(ctx)[0]) {
                fprintf(stderr, "fuzz_onnx: hwio refused without a message\n");
                abort();
            }
            ltf_tensor *t = ltf_onnx_model_initializer(m, i);
            if (t) (void)ltf_tensor_rank(t);
            else if (!ltf_ctx_error(ctx)[0]) {
                fprintf(stderr, "fuzz_onnx: initializer refused without a message\n");
                abort();
            }
        }
        ltf_onnx_model_free(m);
    } else if (!ltf_ctx_error(ctx)[0]) {
        fprintf(stderr, "fuzz_onnx: model refused without a message\n");
        abort();
    }
    char name[64];
    ltf_tensor *t = ltf_onnx_tensor_read(ctx, data, size, name, sizeof name);
    if (t) ltf_tensor_release(t);
    else if (!ltf_ctx_error(ctx)[0]) {
        fprintf(stderr, "fuzz_onnx: tensor refused without a message\n");
        abort();
    }
    ltf_ctx_release(ctx);
    return 0;
}
