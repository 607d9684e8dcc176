/*
** test_summary.c: event files (core/summary.c) read back through the
** TFRecord reader and protobuf-c: the first record's file version, the
** scalar fast path's bytes equal to protobuf-c's canonical packing of the
** same Event (unpack, repack, compare), histogram buckets, graph events,
** writes to a closed writer doing nothing.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ltf.h"
#include "check.h"
#include "event.pb-c.h"
#include "graph.pb-c.h"

int main(void) {
    ltf_ctx *ctx = ltf_ctx_new();
    char dir[] = "/tmp/ltf_summary_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    int64_t id = 0;
    CHECK(ltf_summary_writer_open(ctx, dir, ".t", 100, -1, &id) == LTF_OK);
    CHECK(id > 0);
    const char *path = ltf_summary_writer_path(id);
    CHECK(path && strstr(path, "/events.out.tfevents.") && strcmp(path + strlen(path) - 2, ".t") == 0);
    char *saved = strdup(path);

    float one = 0.75f;
    int64_t sdims[1] = { 0 };
    ltf_tensor *s = ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 0, sdims, &one);
    CHECK(ltf_summary_write(ctx, id, 5, "loss", s, LTF_SUMMARY_SCALAR, "", 0, 0) == LTF_OK);
    CHECK(ltf_summary_write(ctx, id, -2, "loss/with desc", s, LTF_SUMMARY_SCALAR, "described", 0, 0) == LTF_OK);
    double xs[5] = { 1, 2, 2, 3, 10 };
    int64_t hd[1] = { 5 };
    ltf_tensor *h = ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT64, 1, hd, xs);
    CHECK(ltf_summary_write(ctx, id, 6, "h", h, LTF_SUMMARY_HISTOGRAM, "", 4, 0) == LTF_OK);
    const char *ins[1] = { "x" };
    int64_t dims[2] = { 2, -1 };
    ltf_summary_node nodes[2] = { { "x", "Placeholder", NULL, 0, LTF_DTYPE_FLOAT32, 2, dims },
                                  { "y", "tanh", ins, 1, LTF_DTYPE_FLOAT32, -1, NULL } };
    void *g;
    size_t glen;
    CHECK(ltf_summary_graph_def(ctx, 2, nodes, &g, &glen) == LTF_OK);
    CHECK(ltf_summary_write_graph(ctx, id, 0, g, glen) == LTF_OK);
    free(g);
    CHECK(ltf_summary_close(ctx, id) == LTF_OK);
    /* closed: writes are no-ops */
    CHECK(ltf_summary_write(ctx, id, 7, "late", s, LTF_SUMMARY_SCALAR, "", 0, 0) == LTF_OK);
    CHECK(ltf_summary_writer_path(id) == NULL);

    ltf_tfrecord_reader *r;
    CHECK(ltf_tfrecord_reader_open(ctx, saved, NULL, 0, 0, &r) == LTF_OK);
    const void *data;
    size_t len;
    uint64_t off;
    int n = 0;
    while (ltf_tfrecord_reader_next(r, &data, &len, &off) == LTF_OK) {
        Tensorflow__Event *e = tensorflow__event__unpack(NULL, len, data);
        CHECK(e != NULL);
        if (!e) break;
        /* every record is protobuf-c's canonical encoding of its Event */
        size_t m = tensorflow__event__get_packed_size(e);
        uint8_t *re = malloc(m);
        tensorflow__event__pack(e, re);
        CHECK(m == len && memcmp(re, data, len) == 0);
        free(re);
        if (n == 0) {
            CHECK(e->what_case == TENSORFLOW__EVENT__WHAT_FILE_VERSION);
            CHECK_STR(e->file_version, "brain.Event:2");
        } else if (n == 1 || n == 2) {
            CHECK(e->what_case == TENSORFLOW__EVENT__WHAT_SUMMARY);
            Tensorflow__Summary__Value *v = e->summary->value[0];
            CHECK(e->step == (n == 1 ? 5 : -2));
            CHECK_STR(v->tag, n == 1 ? "loss" : "loss/with desc");
            CHECK_STR(v->metadata->plugin_data->plugin_name, "scalars");
            CHECK_STR(v->metadata->summary_description, n == 1 ? "" : "described");
            CHECK(v->tensor->dtype == TENSORFLOW__DATA_TYPE__DT_FLOAT && v->tensor->tensor_content.len == 4);
            float f;
            memcpy(&f, v->tensor->tensor_content.data, 4);
            CHECK(f == 0.75f);
        } else if (n == 3) {
            Tensorflow__TensorProto *t = e->summary->value[0]->tensor;
            CHECK(t->dtype == TENSORFLOW__DATA_TYPE__DT_DOUBLE && t->tensor_content.len == 12 * 8);
            double b[12];
            memcpy(b, t->tensor_content.data, sizeof b);
            /* width 9/4: [1, 3.25) 4 values, [3.25, 5.5) 0, [5.5, 7.75) 0, [7.75, 10] 1 */
            double want[12] = { 1, 3.25, 4, 3.25, 5.5, 0, 5.5, 7.75, 0, 7.75, 10, 1 };
            for (int i = 0; i < 12; i++) CHECK(b[i] == want[i]);
        } else if (n == 4) {
            CHECK(e->what_case == TENSORFLOW__EVENT__WHAT_GRAPH_DEF);
            Tensorflow__GraphDef *gd = tensorflow__graph_def__unpack(NULL, e->graph_def.len, e->graph_def.data);
            CHECK(gd && gd->n_node == 2);
            if (gd && gd->n_node == 2) {
                CHECK_STR(gd->node[1]->op, "tanh");
                CHECK(gd->node[1]->n_input == 1);
                CHECK_STR(gd->node[1]->input[0], "x");
                CHECK(gd->node[0]->n_attr == 2);
            }
            tensorflow__graph_def__free_unpacked(gd, NULL);
        }
        tensorflow__event__free_unpacked(e, NULL);
        n++;
    }
    CHECK(n == 5);
    ltf_tfrecord_reader_close(r);
    ltf_tensor_release(s);
    ltf_tensor_release(h);
    unlink(saved);
    rmdir(dir);
    free(saved);
    ltf_ctx_release(ctx);
    CHECK_DONE();
}
