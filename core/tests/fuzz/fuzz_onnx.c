/*
** fuzz_onnx.c: libFuzzer target over the ONNX reader (core/onnx_reader.c,
** protobuf-c underneath): the input is read as a ModelProto and as a
** TensorProto; each read must give a model / tensor or an error with a
** message, never a crash or leak. Seeds: small models from
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
        for (size_t i = 0; ltf_onnx_model_initializer(m, i); i++) (void)ltf_tensor_rank(ltf_onnx_model_initializer(m, i));
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
