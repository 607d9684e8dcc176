/*
** fuzz_saved_model.c: libFuzzer target over the SavedModel graph reader
** (core/saved_model.c): ltf_saved_model_load_memory on arbitrary bytes,
** with the header's magic, version, length and checksum fixed up first so
** that mutations reach the parser and the graph rebuild (op replay, control
** flow functions, constants, variables) instead of stopping at the checksum
** (the spec spec/saved_model/format_spec.lua covers those checks). The
** variables file is a plain safetensors file of 256 KiB of zeros in memory. A
** model that loads has each function run on zero inputs of its
** placeholders' types when they are fully known and small. The context's
** memory limit keeps hostile shapes to ResourceExhaustedError.
** FUZZ_C_MAX_RUNS=10000
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ltf.h"

static ltf_ckpt_file *zeros_file(ltf_ctx *ctx) {
    static unsigned char bytes[16 + (1 << 18)];
    memset(bytes, 0, sizeof bytes);
    bytes[0] = 8;                      /* header length 8: "{}" and spaces */
    memcpy(bytes + 8, "{}      ", 8);
    return ltf_ckpt_open_memory(ctx, bytes, sizeof bytes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 24 || size > (1u << 20)) return 0;
    unsigned char *b = malloc(size);
    if (!b) return 0;
    memcpy(b, data, size);
    memcpy(b, "LTFSAVED", 8);
    b[8] = LTF_SAVED_MODEL_VERSION;
    b[9] = b[10] = b[11] = 0;
    uint64_t plen = size - 24;
    for (int k = 0; k < 8; k++) b[16 + k] = (unsigned char)(plen >> (8 * k));
    uint32_t crc = ltf_crc32c(0, b + 16, size - 16);
    for (int k = 0; k < 4; k++) b[12 + k] = (unsigned char)(crc >> (8 * k));
    ltf_ctx *ctx = ltf_ctx_new();
    ltf_ctx_set_memory_limit(ctx, 64u << 20);
    ltf_ckpt_file *vf = zeros_file(ctx);
    ltf_saved_model *m = ltf_saved_model_load_memory(ctx, b, size, vf, "fuzz");
    if (m) {
        for (int k = 0; k < ltf_saved_model_num_functions(m); k++) {
            ltf_graph *g = ltf_saved_model_function_graph(m, k);
            int n = ltf_saved_model_num_inputs(m, k), made = 0;
            ltf_tensor *in[8] = {0};
            if (n > 8) continue;
            for (int i = 0, seen = 0; i < ltf_graph_num_nodes(g) && seen < n; i++) {
                if (strcmp(ltf_graph_node_op(g, i), "Placeholder") != 0) continue;
                seen++;
                ltf_dtype dt;
                int64_t dims[8];
                int rank = ltf_graph_node_output_type(g, i, 0, &dt, dims);
                int64_t numel = 1;
                int ok = rank >= 0 && dt != LTF_DTYPE_RESOURCE;
                for (int d = 0; ok && d < rank; d++) {
                    if (dims[d] < 0 || dims[d] > 64) ok = 0;
                    else numel *= dims[d];
                }
                if (!ok || numel > 4096) break;
                if (!(in[made] = ltf_tensor_new(ctx, dt, rank, dims))) break;
                made++;
            }
            if (made == n) {
                ltf_tensor *out[64];
                int nout = 0;
                if (ltf_saved_model_num_outputs(m, k) <= 64 &&
                    ltf_saved_model_call(ctx, m, ltf_saved_model_function_name(m, k), in, n, out, 64, &nout) == LTF_OK)
                    for (int j = 0; j < nout; j++) ltf_tensor_release(out[j]);
            }
            for (int i = 0; i < made; i++) ltf_tensor_release(in[i]);
        }
        ltf_saved_model_free(m);
    }
    ltf_ckpt_close(vf);
    ltf_ctx_release(ctx);
    free(b);
    return 0;
}
