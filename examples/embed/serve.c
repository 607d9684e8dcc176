/*
** serve.c: a C host with no Lua at all. It loads a SavedModel directory
** written by a Lua training script (examples/embed/train_and_save.lua) and
** serves its "serving_default" signature: each line of the input (a file,
** or stdin with "-") holds one example, whitespace-separated numbers in the
** row-major order of the signature's input (float32, batch dimension first);
** all lines go through the model as one batch, wrapped without a copy
** (ltf_tensor_wrap), and each output prints one line per example:
** "<output name> v1 v2 ...".
**   embed_serve DIR [INPUT|-]
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ltf.h"

static int releases;
static void release_buffer(void *data, void *ud) {
    (void)ud;
    free(data);
    releases++;
}

static int fail(ltf_ctx *ctx, const char *what) {
    fprintf(stderr, "embed_serve: %s: %s\n", what, ltf_ctx_error(ctx));
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [INPUT|-]\n", argv[0]);
        return 2;
    }
    FILE *in = argc < 3 || strcmp(argv[2], "-") == 0 ? stdin : fopen(argv[2], "r");
    if (!in) {
        perror(argv[2]);
        return 2;
    }
    ltf_ctx *ctx = ltf_ctx_new();
    ltf_saved_model *m = ltf_saved_model_load(ctx, argv[1]);
    if (!m) return fail(ctx, "load");
    int k = ltf_saved_model_find(m, "serving_default");
    if (k < 0 || ltf_saved_model_num_inputs(m, k) != 1) {
        fprintf(stderr, "embed_serve: the model has no serving_default signature with one input\n");
        return 1;
    }
    /* the input's type: its placeholder in the signature's graph */
    ltf_graph *g = ltf_saved_model_function_graph(m, k);
    int64_t dims[8];
    ltf_dtype dt = LTF_DTYPE_FLOAT32;
    int rank = -1;
    for (int i = 0; i < ltf_graph_num_nodes(g); i++)
        if (strcmp(ltf_graph_node_op(g, i), "Placeholder") == 0) {
            rank = ltf_graph_node_output_type(g, i, 0, &dt, dims);
            break;
        }
    if (dt != LTF_DTYPE_FLOAT32 || rank < 1) {
        fprintf(stderr, "embed_serve: this host serves a float32 input with a batch dimension\n");
        return 1;
    }
    int64_t per = 1;
    for (int d = 1; d < rank; d++) per *= dims[d] < 0 ? 1 : dims[d];
    /* read the examples */
    size_t cap = 1024, n = 0;
    float *buf = malloc(cap * sizeof *buf);
    char line[1 << 16];
    int64_t batch = 0;
    while (buf && fgets(line, sizeof line, in)) {
        size_t before = n;
        for (char *p = line, *end;; p = end) {
            float v = strtof(p, &end);
            if (end == p) break;
            if (n == cap) {
                float *b = realloc(buf, (cap *= 2) * sizeof *buf);
                if (!b) break;
                buf = b;
            }
            buf[n++] = v;
        }
        if (n == before) continue;   /* a blank line */
        if ((int64_t)(n - before) != per) {
            fprintf(stderr, "embed_serve: line %lld has %zu numbers, the input takes %lld per example\n",
                    (long long)batch + 1, n - before, (long long)per);
            return 1;
        }
        batch++;
    }
    if (in != stdin) fclose(in);
    dims[0] = batch;
    /* wrapped, not copied: the engine reads the host's buffer in place */
    ltf_tensor *x = ltf_tensor_wrap(ctx, LTF_DTYPE_FLOAT32, rank, dims, buf, release_buffer, NULL);
    if (!x) return fail(ctx, "wrap");
    if (ltf_tensor_data(x) != buf) {
        fprintf(stderr, "embed_serve: the input was copied\n");
        return 1;
    }
    ltf_tensor *outs[16];
    int nout = 0;
    if (ltf_saved_model_call(ctx, m, "serving_default", &x, 1, outs, 16, &nout) != LTF_OK) return fail(ctx, "call");
    ltf_tensor_release(x);
    for (int o = 0; o < nout; o++) {
        float *y;
        size_t nbytes;
        if (ltf_tensor_dtype(outs[o]) != LTF_DTYPE_FLOAT32 ||
            ltf_tensor_host_data(ctx, outs[o], (void **)&y, &nbytes) != LTF_OK)
            return fail(ctx, "read output");
        int64_t rows = ltf_tensor_rank(outs[o]) > 0 ? ltf_tensor_dims(outs[o])[0] : 1;
        int64_t cols = rows ? (int64_t)(nbytes / sizeof(float)) / rows : 0;
        for (int64_t r = 0; r < rows; r++) {
            printf("%s", ltf_saved_model_output_name(m, k, o));
            for (int64_t c = 0; c < cols; c++) printf(" %.9g", y[r * cols + c]);
            printf("\n");
        }
        ltf_tensor_release(outs[o]);
    }
    ltf_saved_model_free(m);
    ltf_ctx_release(ctx);
    if (releases != 1) {
        fprintf(stderr, "embed_serve: the input buffer was released %d times\n", releases);
        return 1;
    }
    return 0;
}
