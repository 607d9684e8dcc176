/*
** test_summary.c: event files (core/summary.c) read back through the
** TFRecord reader and protobuf-c: the first record's file version, the
** scalar fast path's bytes equal to protobuf-c's canonical packing of the
** same Event (unpack, repack, compare), histogram buckets, graph events,
** writes to a closed writer doing nothing; writers per context (two
** contexts in one process: the same id names each one's own writer, a close
** in one leaves the other's working, freeing a context flushes and closes
** its writers) and a close while other threads write.
*/
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ltf.h"
#include "check.h"
#include "event.pb-c.h"
#include "graph.pb-c.h"

/* The records of the event file 'path': their count, and the scalar
** summaries' values in 'vals' (at most 'max'). */
static int read_events(ltf_ctx *ctx, const char *path, float *vals, int max, int *nvals) {
    ltf_tfrecord_reader *r;
    *nvals = 0;
    if (ltf_tfrecord_reader_open(ctx, path, NULL, 0, 0, &r) != LTF_OK) return -1;
    const void *data;
    size_t len;
    uint64_t off;
    int n = 0;
    while (ltf_tfrecord_reader_next(r, &data, &len, &off) == LTF_OK) {
        Tensorflow__Event *e = tensorflow__event__unpack(NULL, len, data);
        if (!e) {
            n = -1;
            break;
        }
        if (e->what_case == TENSORFLOW__EVENT__WHAT_SUMMARY && *nvals < max) {
            float f;
            memcpy(&f, e->summary->value[0]->tensor->tensor_content.data, 4);
            vals[(*nvals)++] = f;
        }
        tensorflow__event__free_unpacked(e, NULL);
        n++;
    }
    ltf_tfrecord_reader_close(r);
    return n;
}

static ltf_status write_scalar(ltf_ctx *ctx, int64_t id, float v) {
    int64_t d[1] = { 0 };
    ltf_tensor *t = ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 0, d, &v);
    ltf_status st = ltf_summary_write(ctx, id, 1, "v", t, LTF_SUMMARY_SCALAR, "", 0, 0);
    ltf_tensor_release(t);
    return st;
}

typedef struct writer_arg {
    ltf_ctx *ctx;
    int64_t id;
    ltf_tensor *t;
    int failed;
} writer_arg;

static void *write_loop(void *p) {
    writer_arg *a = p;
    for (int i = 0; i < 2000; i++)
        if (ltf_summary_write(a->ctx, a->id, i, "t", a->t, LTF_SUMMARY_SCALAR, "", 0, 0) != LTF_OK) a->failed = 1;
    return NULL;
}

/* Two contexts in one process, each with its own writers. */
static void two_contexts(const char *dir) {
    ltf_ctx *a = ltf_ctx_new(), *b = ltf_ctx_new();
    int64_t ia = 0, ib = 0, ib2 = 0;
    CHECK(ltf_summary_writer_open(a, dir, ".a", 100, -1, &ia) == LTF_OK);
    CHECK(ltf_summary_writer_open(b, dir, ".b", 100, -1, &ib) == LTF_OK);
    CHECK(ia == 1 && ib == 1);   /* ids per context */
    char *pa = strdup(ltf_summary_writer_path(a, ia)), *pb = strdup(ltf_summary_writer_path(b, ib));
    CHECK(strcmp(pa, pb) != 0 && strstr(pa, ".a") && strstr(pb, ".b"));
    CHECK(write_scalar(a, 1, 1.0f) == LTF_OK);
    CHECK(write_scalar(b, 1, 2.0f) == LTF_OK);
    CHECK(ltf_summary_close(a, 1) == LTF_OK);
    /* a's 1 is closed, b's 1 still works */
    CHECK(ltf_summary_writer_path(a, 1) == NULL);
    CHECK(ltf_summary_writer_path(b, 1) != NULL && strcmp(ltf_summary_writer_path(b, 1), pb) == 0);
    CHECK(write_scalar(a, 1, 9.0f) == LTF_OK);   /* no-op */
    CHECK(write_scalar(b, 1, 3.0f) == LTF_OK);
    CHECK(ltf_summary_writer_open(b, dir, ".b2", 100, -1, &ib2) == LTF_OK);
    CHECK(ib2 == 2);
    CHECK(ltf_summary_writer_path(a, 2) == NULL);   /* b's 2 is not a's */
    char *pb2 = strdup(ltf_summary_writer_path(b, ib2));
    CHECK(write_scalar(b, ib2, 4.0f) == LTF_OK);
    CHECK(write_scalar(a, ib2, 8.0f) == LTF_OK);   /* a has no 2: no-op, not b's */
    float v[8];
    int nv;
    CHECK(read_events(a, pa, v, 8, &nv) == 2 && nv == 1 && v[0] == 1.0f);
    /* b's writers hold their events (max_queue 100, never flushed): only the
    ** file version reached the files */
    CHECK(read_events(a, pb, v, 8, &nv) == 1 && nv == 0);
    CHECK(read_events(a, pb2, v, 8, &nv) == 1 && nv == 0);
    ltf_ctx_release(b);   /* flushes and closes both */
    CHECK(read_events(a, pb, v, 8, &nv) == 3 && nv == 2 && v[0] == 2.0f && v[1] == 3.0f);
    CHECK(read_events(a, pb2, v, 8, &nv) == 2 && nv == 1 && v[0] == 4.0f);

    /* a close while two threads write through the same id: no use after
    ** free, every record whole, writes after the close do nothing */
    float one = 0.5f;
    int64_t d[1] = { 0 };
    ltf_tensor *t = ltf_tensor_from_data(a, LTF_DTYPE_FLOAT32, 0, d, &one);
    int64_t ic = 0;
    for (int round = 0; round < 6; round++) {   /* the race is timing-dependent: several tries */
        CHECK(ltf_summary_writer_open(a, dir, ".c", 7, -1, &ic) == LTF_OK);
        char *pc = strdup(ltf_summary_writer_path(a, ic));
        writer_arg wa[2] = { { a, ic, t, 0 }, { a, ic, t, 0 } };
        pthread_t th[2];
        for (int i = 0; i < 2; i++) CHECK(pthread_create(&th[i], NULL, write_loop, &wa[i]) == 0);
        usleep(50 + 100 * round);
        CHECK(ltf_summary_close(a, ic) == LTF_OK);
        for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
        CHECK(!wa[0].failed && !wa[1].failed);
        CHECK(ltf_summary_writer_path(a, ic) == NULL);
        int n = read_events(a, pc, v, 0, &nv);
        CHECK(n >= 1 && n <= 4001);
        unlink(pc);
        free(pc);
    }
    ltf_tensor_release(t);

    /* freeing a with nothing open, and with a writer open (closed by the free) */
    int64_t id4 = 0;
    CHECK(ltf_summary_writer_open(a, dir, ".d", 100, -1, &id4) == LTF_OK);
    CHECK(id4 == 8);
    char *pd = strdup(ltf_summary_writer_path(a, id4));
    CHECK(write_scalar(a, id4, 5.0f) == LTF_OK);
    ltf_ctx *r = ltf_ctx_new();
    ltf_ctx_release(a);
    CHECK(read_events(r, pd, v, 8, &nv) == 2 && nv == 1 && v[0] == 5.0f);
    ltf_ctx_release(r);
    unlink(pa);
    unlink(pb);
    unlink(pb2);
    unlink(pd);
    free(pa);
    free(pb);
    free(pb2);
    free(pd);
}

int main(void) {
    ltf_ctx *ctx = ltf_ctx_new();
    char dir[] = "/tmp/ltf_summary_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    int64_t id = 0;
    CHECK(ltf_summary_writer_open(ctx, dir, ".t", 100, -1, &id) == LTF_OK);
    CHECK(id > 0);
    const char *path = ltf_summary_writer_path(ctx, id);
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
    CHECK(ltf_summary_writer_path(ctx, id) == NULL);

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
    two_contexts(dir);
    rmdir(dir);
    free(saved);
    ltf_ctx_release(ctx);
    CHECK_DONE();
}
