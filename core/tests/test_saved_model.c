/*
** test_saved_model.c: SavedModel directories from C with no Lua
** (core/saved_model.c): a graph traced in C with a variable and a cond is
** saved, loaded into another context, called by name (zero-copy input),
** its variable read back; errors for a missing directory, an unknown
** function, a wrong input count, and a damaged file.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "ltf.h"

static ltf_tensor *scalar_f(ltf_ctx *ctx, float v) { return ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 0, NULL, &v); }

/* y = cond(sum(x) > 0, x * w, x - w) + 1, w a variable [2] */
static ltf_graph *trace(ltf_ctx *ctx, ltf_tensor *w) {
    int64_t d2[1] = {2};
    ltf_graph *g = ltf_graph_begin(ctx, "f");
    ltf_tensor *x = ltf_graph_placeholder(ctx, g, LTF_DTYPE_FLOAT32, 1, d2, "x");
    ltf_tensor *s, *zero = scalar_f(ctx, 0.0f), *pred, *one = scalar_f(ctx, 1.0f);
    int n;
    CHECK(ltf_op_run(ctx, LTF_OP_REDUCE_SUM, &x, 1, NULL, &s, 1, &n) == LTF_OK);
    ltf_tensor *pin[2] = {s, zero};
    CHECK(ltf_op_run(ctx, LTF_OP_GREATER, pin, 2, NULL, &pred, 1, &n) == LTF_OK);
    /* branches: functions of x (captured) reading the variable */
    ltf_graph *ft = ltf_graph_begin_function(ctx, "then");
    ltf_tensor *r, *v;
    CHECK(ltf_op_run(ctx, LTF_OP_READ_VARIABLE, &w, 1, NULL, &v, 1, &n) == LTF_OK);
    ltf_tensor *m_in[2] = {x, v};
    CHECK(ltf_op_run(ctx, LTF_OP_MUL, m_in, 2, NULL, &r, 1, &n) == LTF_OK);
    CHECK(ltf_graph_end(ctx, ft, &r, 1) == LTF_OK);
    ltf_tensor_release(r);
    ltf_tensor_release(v);
    ltf_graph *fe = ltf_graph_begin_function(ctx, "else");
    CHECK(ltf_op_run(ctx, LTF_OP_READ_VARIABLE, &w, 1, NULL, &v, 1, &n) == LTF_OK);
    ltf_tensor *s_in[2] = {x, v};
    CHECK(ltf_op_run(ctx, LTF_OP_SUB, s_in, 2, NULL, &r, 1, &n) == LTF_OK);
    CHECK(ltf_graph_end(ctx, fe, &r, 1) == LTF_OK);
    ltf_tensor_release(r);
    ltf_tensor_release(v);
    ltf_tensor *tin[8], *ein[8];
    int nt = ltf_graph_num_captured(ft), ne = ltf_graph_num_captured(fe);
    /* lent, and the call consumes them: hold references across it */
    for (int k = 0; k < nt; k++) tin[k] = ltf_tensor_retain(ltf_graph_captured(ft, k));
    for (int k = 0; k < ne; k++) ein[k] = ltf_tensor_retain(ltf_graph_captured(fe, k));
    ltf_tensor *c;
    CHECK(ltf_cond(ctx, pred, ft, tin, nt, fe, ein, ne, &c, 1, &n) == LTF_OK);
    for (int k = 0; k < nt; k++) ltf_tensor_release(tin[k]);
    for (int k = 0; k < ne; k++) ltf_tensor_release(ein[k]);
    ltf_tensor *a_in[2] = {c, one}, *y;
    CHECK(ltf_op_run(ctx, LTF_OP_ADD, a_in, 2, NULL, &y, 1, &n) == LTF_OK);
    CHECK(ltf_graph_end(ctx, g, &y, 1) == LTF_OK);
    ltf_graph_release(ft);
    ltf_graph_release(fe);
    ltf_tensor *all[] = {x, s, zero, pred, one, c, y};
    for (size_t k = 0; k < sizeof all / sizeof *all; k++) ltf_tensor_release(all[k]);
    return g;
}

static int released;
static void on_release(void *data, void *ud) {
    (void)data;
    (void)ud;
    released++;
}

int main(void) {
    char dir[] = "/tmp/ltf-test-saved-model-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char model[256];
    snprintf(model, sizeof model, "%s/m", dir);
    {
        ltf_ctx *ctx = ltf_ctx_new();
        float wv[2] = {2.0f, -3.0f};
        int64_t d2[1] = {2};
        ltf_tensor *init = ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 1, d2, wv);
        ltf_tensor *w = ltf_variable_new(ctx, init, "dense/kernel", 1, -2, NULL);
        ltf_graph *g = trace(ctx, w);
        const char *in_names[] = {"features"};
        const char *out_names[] = {"y"};
        ltf_saved_function fns[2] = {
            {"serving_default", g, 1, in_names, out_names, "{}", 2},
            {"f", g, 0, NULL, NULL, NULL, 0},
        };
        CHECK(ltf_saved_model_save(ctx, model, fns, 2) == LTF_OK);
        fns[1].name = "serving_default";
        CHECK(ltf_saved_model_save(ctx, model, fns, 2) == LTF_ERR_INVALID_ARGUMENT);   /* two of one name */
        ltf_graph_release(g);
        ltf_tensor_release(w);
        ltf_tensor_release(init);
        ltf_ctx_release(ctx);
    }
    {
        ltf_ctx *ctx = ltf_ctx_new();   /* another context: nothing of the first */
        ltf_saved_model *m = ltf_saved_model_load(ctx, model);
        CHECK(m != NULL);
        if (!m) {
            fprintf(stderr, "%s\n", ltf_ctx_error(ctx));
            CHECK_DONE();
        }
        CHECK(ltf_saved_model_num_functions(m) == 2);
        int k = ltf_saved_model_find(m, "serving_default");
        CHECK(k == 0 && ltf_saved_model_function_is_signature(m, k));
        CHECK_STR(ltf_saved_model_input_name(m, k, 0), "features");
        CHECK_STR(ltf_saved_model_output_name(m, k, 0), "y");
        CHECK_STR(ltf_saved_model_input_name(m, 1, 0), "x");
        CHECK_STR(ltf_saved_model_output_name(m, 1, 0), "output_0");
        size_t ml;
        CHECK_STR(ltf_saved_model_function_meta(m, k, &ml), "{}");
        CHECK(ltf_saved_model_num_variables(m) == 1);
        ltf_tensor *h = ltf_saved_model_variable(m, 0);
        CHECK_STR(ltf_variable_name(h), "dense/kernel");
        ltf_tensor *wv = ltf_variable_peek(h);
        CHECK(((float *)ltf_tensor_data(wv))[0] == 2.0f && ((float *)ltf_tensor_data(wv))[1] == -3.0f);
        ltf_tensor_release(wv);
        /* zero-copy input: a host buffer */
        float *buf = aligned_alloc(64, 64);
        buf[0] = 1.0f;
        buf[1] = 4.0f;
        int64_t d2[1] = {2};
        ltf_tensor *x = ltf_tensor_wrap(ctx, LTF_DTYPE_FLOAT32, 1, d2, buf, on_release, NULL);
        ltf_tensor *y[2];
        int n = 0;
        CHECK(ltf_saved_model_call(ctx, m, NULL, &x, 1, y, 2, &n) == LTF_OK && n == 1);
        float *yv = n == 1 ? ltf_tensor_data(y[0]) : NULL;
        CHECK(yv && yv[0] == 3.0f && yv[1] == -11.0f);   /* sum 5 > 0: x * w + 1 */
        if (n == 1) ltf_tensor_release(y[0]);
        buf[0] = -9.0f;   /* the engine reads the host's buffer in place */
        CHECK(ltf_saved_model_call(ctx, m, "f", &x, 1, y, 2, &n) == LTF_OK && n == 1);
        yv = n == 1 ? ltf_tensor_data(y[0]) : NULL;
        CHECK(yv && yv[0] == -10.0f && yv[1] == 8.0f);   /* sum -5: x - w + 1 */
        if (n == 1) ltf_tensor_release(y[0]);
        /* errors */
        CHECK(ltf_saved_model_call(ctx, m, "nope", &x, 1, y, 2, &n) == LTF_ERR_NOT_FOUND);
        CHECK(strstr(ltf_ctx_error(ctx), "no function named 'nope' (the model has 'serving_default', 'f')") != NULL);
        CHECK(ltf_saved_model_call(ctx, m, "f", &x, 0, y, 2, &n) == LTF_ERR_INVALID_ARGUMENT);
        ltf_tensor_release(x);
        ltf_saved_model_free(m);
        CHECK(released == 1);
        free(buf);
        CHECK(ltf_saved_model_load(ctx, "/nonexistent/dir") == NULL && ltf_ctx_status(ctx) == LTF_ERR_NOT_FOUND);
        /* a damaged graph file */
        char path[300];
        snprintf(path, sizeof path, "%s/saved_model.ltf", model);
        FILE *f = fopen(path, "r+b");
        CHECK(f != NULL);
        if (f) {
            fseek(f, 40, SEEK_SET);
            int c = fgetc(f);
            fseek(f, 40, SEEK_SET);
            fputc(c ^ 0x10, f);
            fclose(f);
        }
        CHECK(ltf_saved_model_load(ctx, model) == NULL && ltf_ctx_status(ctx) == LTF_ERR_DATA_LOSS);
        CHECK(strstr(ltf_ctx_error(ctx), "checksum mismatch") != NULL);
        ltf_ctx_release(ctx);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
    CHECK_DONE();
}
