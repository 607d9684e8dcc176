/*
** summary.c: TensorBoard event files for tf.summary (docs/summary.md).
**
** A writer owns one file logdir/events.out.tfevents.<10-digit seconds>.
** <host>.<pid>.<n><suffix>: TFRecord records (uint64 length, masked CRC32C
** of the length, the bytes, masked CRC32C of the bytes) each holding an Event
** protobuf (proto/event.proto, protobuf-c), the first one carrying
** file_version "brain.Event:2". Summaries are TF2's tensor summaries: the
** value is a TensorProto (numbers as tensor_content, strings as string_val,
** as TensorFlow's SummaryFileWriter::WriteTensor writes them) with plugin
** metadata naming the TensorBoard plugin that reads it.
**
** Writers live in their context's table (ctx->summaries, made at the first
** open) and are named by id, per context (an integer the summary op carries
** as an attribute, so a traced function that writes holds no pointer): two
** contexts in one process never see each other's writers. A write takes a
** reference on its writer under the table's lock, so a close on another
** thread only clears the entry: the last reference flushes, closes and
** frees the writer. Freeing the context flushes and closes every writer
** still open (an LTF_CTX_EVENT_FREE hook). Records go through core/tfrecord.c's writer (its
** framing and buffer), flushed to the file when 'max_queue' events are
** pending, when 'flush_millis' have passed since the last flush (checked at
** each write), at ltf_summary_flush and at close.
*/
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "ctx.h"
#include "tensor.h"
#include "event.pb-c.h"
#include "graph.pb-c.h"

typedef struct ltf_summary_writer {
    ltf_tfrecord_writer *f;   /* core/tfrecord.c: the record framing */
    ltf_ctx *fctx;            /* the context 'f' reports to (the opener's) */
    char   *path;
    int     max_queue;
    int64_t flush_millis;
    double  last_flush;       /* seconds */
    int     pending;          /* events written since the last flush */
    unsigned char *buf;       /* one serialized Event */
    size_t  cap;
    pthread_mutex_t mu;       /* the record stream, buffer and counters */
    int     refs;             /* the table's entry + one per write in flight (table's mu) */
} ltf_summary_writer;

/* A context's writers: ids base+1 .. n (NULL: closed). Ids are never
** reused; the array goes when every writer is closed. */
struct ltf_summary_table {
    pthread_mutex_t mu;
    ltf_summary_writer **w;
    int64_t base, n;
};

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static ltf_summary_table *get_table(ltf_ctx *ctx) {
    return __atomic_load_n(&ctx->summaries, __ATOMIC_ACQUIRE);
}

/* The writer 'id' names in ctx, with a reference the caller gives back
** (release); NULL when closed or never opened. */
static ltf_summary_writer *acquire(ltf_ctx *ctx, int64_t id) {
    ltf_summary_table *t = get_table(ctx);
    if (!t) return NULL;
    pthread_mutex_lock(&t->mu);
    ltf_summary_writer *w = id > t->base && id <= t->n ? t->w[id - t->base - 1] : NULL;
    if (w) w->refs++;
    pthread_mutex_unlock(&t->mu);
    return w;
}

static ltf_status finish(ltf_ctx *ctx, ltf_summary_writer *w);

/* Give back acquire's reference: the last one (the writer was closed
** meanwhile) flushes, closes and frees it. */
static ltf_status release(ltf_ctx *ctx, ltf_summary_writer *w, ltf_status st) {
    ltf_summary_table *t = get_table(ctx);
    pthread_mutex_lock(&t->mu);
    int last = --w->refs == 0;
    pthread_mutex_unlock(&t->mu);
    if (!last) return st;
    ltf_status fst = finish(ctx, w);
    return st == LTF_OK ? fst : st;
}

static int reserve(ltf_summary_writer *w, size_t n) {
    if (n <= w->cap) return 1;
    size_t cap = w->cap ? w->cap : 4096;
    while (cap < n) cap *= 2;
    unsigned char *b = realloc(w->buf, cap);
    if (!b) return 0;
    w->buf = b;
    w->cap = cap;
    return 1;
}

/* The writer's error, copied to the caller's context. */
static ltf_status relay(ltf_ctx *ctx, ltf_summary_writer *w, ltf_status st) {
    if (st == LTF_OK || ctx == w->fctx) return st;
    return ltf_fail(ctx, st, "summary: %s", ltf_ctx_error(w->fctx));
}

/* Push the written records to the file (caller holds w->mu). */
static ltf_status drain(ltf_ctx *ctx, ltf_summary_writer *w) {
    w->pending = 0;
    w->last_flush = now_seconds();
    return relay(ctx, w, ltf_tfrecord_writer_flush(w->f));
}

/* Append 'n' serialized bytes as a record, flushing when due (caller holds w->mu). */
static ltf_status append_bytes(ltf_ctx *ctx, ltf_summary_writer *w, const void *bytes, size_t n, double now) {
    ltf_status st = relay(ctx, w, ltf_tfrecord_write(w->f, bytes, n));
    if (st != LTF_OK) return st;
    w->pending++;
    if (w->pending >= w->max_queue ||
        (w->flush_millis >= 0 && (now - w->last_flush) * 1000.0 >= (double)w->flush_millis))
        return drain(ctx, w);
    return LTF_OK;
}

/* Append one Event as a record (caller holds w->mu). */
static ltf_status append_event(ltf_ctx *ctx, ltf_summary_writer *w, const Tensorflow__Event *e) {
    size_t n = tensorflow__event__get_packed_size(e);
    if (!reserve(w, n + 1)) return ltf_fail_oom(ctx, "summary event", n + 1);
    tensorflow__event__pack(e, w->buf);
    return append_bytes(ctx, w, w->buf, n, e->wall_time);
}

/* {==== the scalar fast path: the Event protobufc would pack for a scalar
** summary (same fields, field-number order, proto3 defaults omitted),
** written directly (a traced training step logs its loss at every call;
** protobuf-c's generic packer walks the descriptors twice per message). */
static size_t varint_len(uint64_t v) {
    size_t n = 1;
    while (v >= 0x80) { v >>= 7; n++; }
    return n;
}
static uint8_t *put_varint(uint8_t *p, uint64_t v) {
    while (v >= 0x80) { *p++ = (uint8_t)(v | 0x80); v >>= 7; }
    *p++ = (uint8_t)v;
    return p;
}
static uint8_t *put_bytes(uint8_t *p, int field, const void *b, size_t n) {
    *p++ = (uint8_t)(field << 3 | 2);
    p = put_varint(p, n);
    memcpy(p, b, n);
    return p + n;
}
static ltf_status write_scalar_fast(ltf_ctx *ctx, ltf_summary_writer *w, int64_t step, const char *tag,
                                    const char *desc, float value) {
    size_t tl = strlen(tag), dl = strlen(desc);
    /* SummaryMetadata{plugin_data{plugin_name "scalars"}, summary_description, data_class SCALAR} */
    size_t md = 2 + 9 + (dl ? 1 + varint_len(dl) + dl : 0) + 2;
    /* TensorProto{dtype DT_FLOAT, tensor_shape {}, tensor_content 4 bytes} */
    size_t tp = 2 + 2 + 6;
    size_t val = (tl ? 1 + varint_len(tl) + tl : 0) + 1 + varint_len(md) + md + 1 + varint_len(tp) + tp;
    size_t sum = 1 + varint_len(val) + val;
    size_t ev = 9 + (step ? 1 + varint_len((uint64_t)step) : 0) + 1 + varint_len(sum) + sum;
    uint8_t stack[512], *b = ev <= sizeof stack ? stack : malloc(ev);
    if (!b) return ltf_fail_oom(ctx, "summary event", ev);
    double now = now_seconds();
    uint8_t *p = b;
    *p++ = 1 << 3 | 1;                       /* wall_time: fixed64 */
    memcpy(p, &now, 8);                      /* little-endian host */
    p += 8;
    if (step) { *p++ = 2 << 3; p = put_varint(p, (uint64_t)step); }
    *p++ = 5 << 3 | 2; p = put_varint(p, sum);            /* summary */
    *p++ = 1 << 3 | 2; p = put_varint(p, val);            /* value */
    if (tl) p = put_bytes(p, 1, tag, tl);                 /* tag */
    *p++ = 8 << 3 | 2; p = put_varint(p, tp);             /* tensor */
    *p++ = 1 << 3; *p++ = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    *p++ = 2 << 3 | 2; *p++ = 0;                          /* tensor_shape {} */
    p = put_bytes(p, 4, &value, 4);                       /* tensor_content */
    *p++ = 9 << 3 | 2; p = put_varint(p, md);             /* metadata */
    *p++ = 1 << 3 | 2; *p++ = 9;                          /* plugin_data */
    p = put_bytes(p, 1, "scalars", 7);
    if (dl) p = put_bytes(p, 3, desc, dl);
    *p++ = 4 << 3; *p++ = TENSORFLOW__DATA_CLASS__DATA_CLASS_SCALAR;
    ltf_status st;
    if ((size_t)(p - b) != ev) st = ltf_fail(ctx, LTF_ERR_INTERNAL, "summary: scalar event size %zu != %zu", (size_t)(p - b), ev);
    else {
        pthread_mutex_lock(&w->mu);
        st = append_bytes(ctx, w, b, ev, now);
        pthread_mutex_unlock(&w->mu);
    }
    if (b != stack) free(b);
    return st;
}
/* }==== */

ltf_status ltf_summary_writer_open(ltf_ctx *ctx, const char *logdir, const char *suffix, int max_queue,
                                   int64_t flush_millis, int64_t *id) {
    *id = 0;
    if (!logdir || !*logdir) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "create_file_writer: 'logdir' is empty");
    /* mkdir -p */
    size_t dl = strlen(logdir);
    char *dir = malloc(dl + 1);
    if (!dir) return ltf_fail_oom(ctx, "logdir", dl + 1);
    memcpy(dir, logdir, dl + 1);
    for (size_t i = 1; i <= dl; i++) {
        if (dir[i] == '/' || dir[i] == '\0') {
            char c = dir[i];
            dir[i] = '\0';
            if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
                ltf_status st = ltf_fail(ctx, LTF_ERR_NOT_FOUND, "create_file_writer: cannot create directory %s: %s",
                                         dir, strerror(errno));
                free(dir);
                return st;
            }
            dir[i] = c;
        }
    }
    free(dir);
    char host[256] = "localhost";
    if (gethostname(host, sizeof host - 1) != 0) strcpy(host, "localhost");
    host[sizeof host - 1] = '\0';
    double t = now_seconds();
    ltf_summary_table *tab = get_table(ctx);
    if (!tab) {
        /* the hook first (registering again does nothing; it handles no table) */
        ltf_status hst = ltf_ctx_hook_add(ctx, LTF_CTX_EVENT_FREE, ltf_summary_ctx_free, NULL);
        if (hst != LTF_OK) return hst;
        ltf_summary_table *nt = calloc(1, sizeof *nt);
        if (!nt) return ltf_fail_oom(ctx, "summary writer table", sizeof *nt);
        pthread_mutex_init(&nt->mu, NULL);
        ltf_summary_table *expected = NULL;
        if (__atomic_compare_exchange_n(&ctx->summaries, &expected, nt, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            tab = nt;
        } else {   /* another thread made it first */
            pthread_mutex_destroy(&nt->mu);
            free(nt);
            tab = expected;
        }
    }
    /* the file's <n>: unique in the process (contexts draw ids from blocks of
    ** one counter), so two contexts writing to one logdir in the same second
    ** never open the same file */
    pthread_mutex_lock(&tab->mu);
    long long n = (long long)ltf_ctx_next_id(ctx);
    pthread_mutex_unlock(&tab->mu);
    if (!suffix) suffix = ".v2";
    size_t plen = dl + strlen(host) + strlen(suffix) + 96;
    char *path = malloc(plen);
    if (!path) return ltf_fail_oom(ctx, "event file name", plen);
    snprintf(path, plen, "%s/events.out.tfevents.%010lld.%s.%ld.%lld%s", logdir, (long long)t, host, (long)getpid(), n,
             suffix);
    ltf_tfrecord_writer *f;
    ltf_status st = ltf_tfrecord_writer_open(ctx, path, NULL, &f);
    if (st != LTF_OK) {
        free(path);
        return st;
    }
    ltf_summary_writer *w = calloc(1, sizeof *w);
    if (!w) {
        ltf_tfrecord_writer_close(f);
        free(path);
        return ltf_fail_oom(ctx, "summary writer", sizeof *w);
    }
    w->f = f;
    w->fctx = ctx;
    w->path = path;
    w->max_queue = max_queue > 0 ? max_queue : 1;
    w->flush_millis = flush_millis;
    w->last_flush = t;
    w->refs = 1;   /* the table's entry */
    pthread_mutex_init(&w->mu, NULL);
    /* the first record: the file version (TensorBoard's "brain.Event:2") */
    Tensorflow__Event e = TENSORFLOW__EVENT__INIT;
    e.wall_time = t;
    e.what_case = TENSORFLOW__EVENT__WHAT_FILE_VERSION;
    e.file_version = "brain.Event:2";
    pthread_mutex_lock(&w->mu);
    st = append_event(ctx, w, &e);
    if (st == LTF_OK) st = drain(ctx, w);
    pthread_mutex_unlock(&w->mu);
    if (st != LTF_OK) {
        ltf_tfrecord_writer_close(f);
        free(w->buf);
        free(path);
        free(w);
        return st;
    }
    pthread_mutex_lock(&tab->mu);
    ltf_summary_writer **nt = realloc(tab->w, sizeof *tab->w * (size_t)(tab->n - tab->base + 1));
    if (!nt) {
        pthread_mutex_unlock(&tab->mu);
        ltf_tfrecord_writer_close(f);
        pthread_mutex_destroy(&w->mu);
        free(w->buf);
        free(path);
        free(w);
        return ltf_fail_oom(ctx, "summary writer table", 0);
    }
    tab->w = nt;
    tab->w[tab->n - tab->base] = w;
    tab->n++;
    *id = tab->n;
    pthread_mutex_unlock(&tab->mu);
    return LTF_OK;
}

const char *ltf_summary_writer_path(ltf_ctx *ctx, int64_t id) {
    ltf_summary_writer *w = acquire(ctx, id);
    if (!w) return NULL;
    const char *p = w->path;   /* lives until the writer is closed */
    release(ctx, w, LTF_OK);
    return p;
}

ltf_status ltf_summary_flush(ltf_ctx *ctx, int64_t id) {
    ltf_summary_writer *w = acquire(ctx, id);
    if (!w) return LTF_OK;
    pthread_mutex_lock(&w->mu);
    ltf_status st = drain(ctx, w);
    pthread_mutex_unlock(&w->mu);
    return release(ctx, w, st);
}

/* Flush, close the file and free a writer no one holds any more. */
static ltf_status finish(ltf_ctx *ctx, ltf_summary_writer *w) {
    pthread_mutex_lock(&w->mu);
    ltf_status st = drain(ctx, w);
    pthread_mutex_unlock(&w->mu);
    ltf_status cst = relay(ctx, w, ltf_tfrecord_writer_close(w->f));
    if (st == LTF_OK) st = cst;
    pthread_mutex_destroy(&w->mu);
    free(w->buf);
    free(w->path);
    free(w);
    return st;
}

ltf_status ltf_summary_close(ltf_ctx *ctx, int64_t id) {
    ltf_summary_table *t = get_table(ctx);
    if (!t) return LTF_OK;
    pthread_mutex_lock(&t->mu);
    ltf_summary_writer *w = id > t->base && id <= t->n ? t->w[id - t->base - 1] : NULL;
    if (w) {   /* the entry's reference passes to this call until its release below */
        t->w[id - t->base - 1] = NULL;
        int64_t open = 0;
        for (int64_t i = 0; i < t->n - t->base; i++) open += t->w[i] != NULL;
        if (!open) {   /* nothing left: free the array */
            free(t->w);
            t->w = NULL;
            t->base = t->n;
        }
    }
    pthread_mutex_unlock(&t->mu);
    if (!w) return LTF_OK;
    /* flush what is there now; the last reference (this one, or a write on
    ** another thread still holding the writer) flushes again, closes and frees */
    pthread_mutex_lock(&w->mu);
    ltf_status st = drain(ctx, w);
    pthread_mutex_unlock(&w->mu);
    return release(ctx, w, st);
}

/* The context is going (LTF_CTX_EVENT_FREE): flush, close and free every
** writer still open, then the table. No write can be in flight: the
** context's last reference is gone. */
void ltf_summary_ctx_free(ltf_ctx *ctx, void *data) {
    (void)data;
    ltf_summary_table *t = get_table(ctx);
    if (!t) return;
    for (int64_t i = 0; i < t->n - t->base; i++)
        if (t->w[i]) finish(ctx, t->w[i]);
    free(t->w);
    pthread_mutex_destroy(&t->mu);
    free(t);
    ctx->summaries = NULL;
}

/* {==== values */
static int tf_dtype(ltf_dtype dt) {
    switch (dt) {
    case LTF_DTYPE_FLOAT32: return TENSORFLOW__DATA_TYPE__DT_FLOAT;
    case LTF_DTYPE_FLOAT64: return TENSORFLOW__DATA_TYPE__DT_DOUBLE;
    case LTF_DTYPE_INT32: return TENSORFLOW__DATA_TYPE__DT_INT32;
    case LTF_DTYPE_INT64: return TENSORFLOW__DATA_TYPE__DT_INT64;
    case LTF_DTYPE_UINT8: return TENSORFLOW__DATA_TYPE__DT_UINT8;
    case LTF_DTYPE_BOOL: return TENSORFLOW__DATA_TYPE__DT_BOOL;
    case LTF_DTYPE_STRING: return TENSORFLOW__DATA_TYPE__DT_STRING;
    case LTF_DTYPE_FLOAT16: return TENSORFLOW__DATA_TYPE__DT_HALF;
    case LTF_DTYPE_BFLOAT16: return TENSORFLOW__DATA_TYPE__DT_BFLOAT16;
    default: return TENSORFLOW__DATA_TYPE__DT_INVALID;
    }
}

/* One value to write: a TensorProto over caller-owned buffers. */
typedef struct value_buf {
    Tensorflow__TensorProto tp;
    Tensorflow__TensorShapeProto shape;
    Tensorflow__TensorShapeProto__Dim dims[8];
    Tensorflow__TensorShapeProto__Dim *dimp[8];
} value_buf;

static void value_init(value_buf *v, int dtype, int rank, const int64_t *dims) {
    tensorflow__tensor_proto__init(&v->tp);
    tensorflow__tensor_shape_proto__init(&v->shape);
    for (int d = 0; d < rank; d++) {
        tensorflow__tensor_shape_proto__dim__init(&v->dims[d]);
        v->dims[d].size = dims[d];
        v->dimp[d] = &v->dims[d];
    }
    v->shape.n_dim = (size_t)rank;
    v->shape.dim = v->dimp;
    v->tp.dtype = dtype;
    v->tp.tensor_shape = &v->shape;
}

/* The buckets of TensorBoard's histogram summary (plugins/histogram/
** summary_v2.py, _buckets): 'k' equal-width buckets from min to max, the
** last edge exactly max, values at max in the last bucket; all values equal:
** every bucket [v, v], the count in the last; no values: zeros. out: k x 3
** (left, right, count). */
static void histogram_buckets(const double *x, int64_t n, int64_t k, double *out) {
    memset(out, 0, sizeof(double) * (size_t)(k * 3));
    if (n == 0 || k <= 0) return;
    double lo = x[0], hi = x[0];
    for (int64_t i = 1; i < n; i++) {
        if (x[i] < lo) lo = x[i];
        if (x[i] > hi) hi = x[i];
    }
    double range = hi - lo;
    if (range == 0) {
        for (int64_t b = 0; b < k; b++) {
            out[b * 3] = lo;
            out[b * 3 + 1] = lo;
        }
        out[(k - 1) * 3 + 2] = (double)n;
        return;
    }
    double width = range / (double)k;
    for (int64_t i = 0; i < n; i++) {
        double q = floor((x[i] - lo) / width);
        /* NaN and infinities give NaN here: counted in the first bucket, never an out-of-range index */
        int64_t b = q >= (double)(k - 1) ? k - 1 : q >= 0 ? (int64_t)q : 0;
        out[b * 3 + 2] += 1;
    }
    /* tf.linspace(min, max, k + 1) with the last edge replaced by max */
    double delta = range / (double)k;
    for (int64_t b = 0; b < k; b++) {
        out[b * 3] = lo + (double)b * delta;
        out[b * 3 + 1] = b + 1 == k ? hi : lo + (double)(b + 1) * delta;
    }
}

/* A 16-bit PCM WAV file of 't' frames of 'c' channels (float in [-1, 1],
** TensorFlow's encode_wav: round(x * 32768) clamped to int16). */
static unsigned char *encode_wav(const float *x, int64_t t, int64_t c, int64_t rate, size_t *n) {
    size_t data = (size_t)(t * c) * 2;
    *n = 44 + data;
    unsigned char *p = malloc(*n);
    if (!p) return NULL;
#define LE32(o, v) do { uint32_t v_ = (uint32_t)(v); for (int i_ = 0; i_ < 4; i_++) p[(o) + i_] = (unsigned char)(v_ >> (8 * i_)); } while (0)
#define LE16(o, v) do { uint32_t v_ = (uint32_t)(v); p[(o)] = (unsigned char)v_; p[(o) + 1] = (unsigned char)(v_ >> 8); } while (0)
    memcpy(p, "RIFF", 4);
    LE32(4, 36 + data);
    memcpy(p + 8, "WAVEfmt ", 8);
    LE32(16, 16);
    LE16(20, 1);
    LE16(22, c);
    LE32(24, rate);
    LE32(28, rate * c * 2);
    LE16(32, c * 2);
    LE16(34, 16);
    memcpy(p + 36, "data", 4);
    LE32(40, data);
    for (int64_t i = 0; i < t * c; i++) {
        float s = roundf(x[i] * 32768.0f);
        if (s > 32767.0f) s = 32767.0f;
        if (s < -32768.0f) s = -32768.0f;
        LE16(44 + 2 * (size_t)i, (uint16_t)(int16_t)s);
    }
#undef LE32
#undef LE16
    return p;
}

static ltf_status write_value(ltf_ctx *ctx, ltf_summary_writer *w, int64_t step, const char *tag, const char *plugin,
                              const uint8_t *content, size_t ncontent, int data_class, const char *description,
                              Tensorflow__TensorProto *tp) {
    Tensorflow__SummaryMetadata__PluginData pd = TENSORFLOW__SUMMARY_METADATA__PLUGIN_DATA__INIT;
    pd.plugin_name = (char *)plugin;
    pd.content.data = (uint8_t *)content;
    pd.content.len = ncontent;
    Tensorflow__SummaryMetadata md = TENSORFLOW__SUMMARY_METADATA__INIT;
    md.plugin_data = &pd;
    md.summary_description = (char *)(description ? description : "");
    md.data_class = data_class;
    Tensorflow__Summary__Value v = TENSORFLOW__SUMMARY__VALUE__INIT;
    v.tag = (char *)tag;
    v.metadata = &md;
    v.value_case = TENSORFLOW__SUMMARY__VALUE__VALUE_TENSOR;
    v.tensor = tp;
    Tensorflow__Summary__Value *vp = &v;
    Tensorflow__Summary s = TENSORFLOW__SUMMARY__INIT;
    s.n_value = 1;
    s.value = &vp;
    Tensorflow__Event e = TENSORFLOW__EVENT__INIT;
    e.wall_time = now_seconds();
    e.step = step;
    e.what_case = TENSORFLOW__EVENT__WHAT_SUMMARY;
    e.summary = &s;
    pthread_mutex_lock(&w->mu);
    ltf_status st = append_event(ctx, w, &e);
    pthread_mutex_unlock(&w->mu);
    return st;
}

static ltf_status to_doubles(ltf_ctx *ctx, const ltf_tensor *t, double **out, int64_t *n) {
    *n = ltf_tensor_num_elements(t);
    size_t es = ltf_dtype_size(t->dtype);
    switch (t->dtype) {
    case LTF_DTYPE_FLOAT32: case LTF_DTYPE_FLOAT64: case LTF_DTYPE_INT32: case LTF_DTYPE_INT64:
    case LTF_DTYPE_UINT8: case LTF_DTYPE_BOOL: break;
    default: return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "summary: data must be numeric, got %s",
                             ltf_dtype_name(t->dtype));
    }
    size_t cnt = (size_t)(*n > 0 ? *n : 1);
    *out = malloc(sizeof(double) * cnt);
    void *raw = malloc(es * cnt);
    if (!*out || !raw) {
        free(*out);
        free(raw);
        return ltf_fail_oom(ctx, "summary values", cnt * 8);
    }
    ltf_status st = *n ? ltf_tensor_copy_to(ctx, t, raw, es * (size_t)*n) : LTF_OK;
    for (int64_t i = 0; st == LTF_OK && i < *n; i++) {
        double v;
        switch (t->dtype) {
        case LTF_DTYPE_FLOAT32: v = ((const float *)raw)[i]; break;
        case LTF_DTYPE_FLOAT64: v = ((const double *)raw)[i]; break;
        case LTF_DTYPE_INT32: v = ((const int32_t *)raw)[i]; break;
        case LTF_DTYPE_INT64: v = (double)((const int64_t *)raw)[i]; break;
        case LTF_DTYPE_UINT8: v = ((const uint8_t *)raw)[i]; break;
        default: v = ((const uint8_t *)raw)[i] ? 1 : 0; break;
        }
        (*out)[i] = v;
    }
    free(raw);
    if (st != LTF_OK) free(*out);
    return st;
}

static ltf_status write_with(ltf_ctx *ctx, ltf_summary_writer *w, int64_t step, const char *tag, const ltf_tensor *t,
                             int kind, const char *description, int64_t count, int64_t sample_rate);

ltf_status ltf_summary_write(ltf_ctx *ctx, int64_t id, int64_t step, const char *tag, const ltf_tensor *t, int kind,
                             const char *description, int64_t count, int64_t sample_rate) {
    ltf_summary_writer *w = acquire(ctx, id);
    if (!w) return LTF_OK;   /* closed: nothing is written (TensorFlow: a no-op) */
    return release(ctx, w, write_with(ctx, w, step, tag, t, kind, description, count, sample_rate));
}

static ltf_status write_with(ltf_ctx *ctx, ltf_summary_writer *w, int64_t step, const char *tag, const ltf_tensor *t,
                             int kind, const char *description, int64_t count, int64_t sample_rate) {
    value_buf vb;
    ltf_status st = LTF_OK;
    switch (kind) {
    case LTF_SUMMARY_SCALAR: {
        if (ltf_tensor_device(t) == LTF_DEVICE_CPU && ltf_tensor_num_elements(t) == 1 && !ltf_tensor_is_symbolic(t)) {
            const void *d = ltf_tensor_data(t);
            float f;
            switch (t->dtype) {
            case LTF_DTYPE_FLOAT32: f = *(const float *)d; break;
            case LTF_DTYPE_FLOAT64: f = (float)*(const double *)d; break;
            case LTF_DTYPE_INT32: f = (float)*(const int32_t *)d; break;
            case LTF_DTYPE_INT64: f = (float)*(const int64_t *)d; break;
            case LTF_DTYPE_UINT8: f = *(const uint8_t *)d; break;
            case LTF_DTYPE_BOOL: f = *(const uint8_t *)d ? 1.0f : 0.0f; break;
            default: goto slow;
            }
            return write_scalar_fast(ctx, w, step, tag, description ? description : "", f);
        }
    slow:;
        double *x;
        int64_t n;
        if ((st = to_doubles(ctx, t, &x, &n)) != LTF_OK) return st;
        if (n != 1) {
            free(x);
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "scalar: '%s': data must be a scalar, got %lld values", tag,
                            (long long)n);
        }
        float f = (float)x[0];
        free(x);
        value_init(&vb, TENSORFLOW__DATA_TYPE__DT_FLOAT, 0, NULL);
        vb.tp.tensor_content.data = (uint8_t *)&f;
        vb.tp.tensor_content.len = 4;
        return write_value(ctx, w, step, tag, "scalars", NULL, 0, TENSORFLOW__DATA_CLASS__DATA_CLASS_SCALAR,
                           description, &vb.tp);
    }
    case LTF_SUMMARY_HISTOGRAM: {
        double *x;
        int64_t n;
        if ((st = to_doubles(ctx, t, &x, &n)) != LTF_OK) return st;
        int64_t k = count < 0 ? 0 : count;
        double *b = malloc(sizeof(double) * (size_t)(k * 3 + 1));
        if (!b) {
            free(x);
            return ltf_fail_oom(ctx, "histogram", (size_t)k * 24);
        }
        histogram_buckets(x, n, k, b);
        free(x);
        int64_t dims[2] = { k, 3 };
        value_init(&vb, TENSORFLOW__DATA_TYPE__DT_DOUBLE, 2, dims);
        vb.tp.tensor_content.data = (uint8_t *)b;
        vb.tp.tensor_content.len = sizeof(double) * (size_t)(k * 3);
        st = write_value(ctx, w, step, tag, "histograms", NULL, 0, TENSORFLOW__DATA_CLASS__DATA_CLASS_TENSOR,
                         description, &vb.tp);
        free(b);
        return st;
    }
    case LTF_SUMMARY_IMAGE:
    case LTF_SUMMARY_TEXT: {
        if (t->dtype != LTF_DTYPE_STRING)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s': data must be strings, got %s",
                            kind == LTF_SUMMARY_IMAGE ? "image" : "text", tag, ltf_dtype_name(t->dtype));
        if (t->rank > 8)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s': rank %d > 8",
                            kind == LTF_SUMMARY_IMAGE ? "image" : "text", tag, t->rank);
        int64_t n = ltf_tensor_num_elements(t);
        const ltf_string *const *s = ltf_tensor_data(t);
        ProtobufCBinaryData *sv = malloc(sizeof *sv * (size_t)(n > 0 ? n : 1));
        if (!sv) return ltf_fail_oom(ctx, "strings", (size_t)n * sizeof *sv);
        for (int64_t i = 0; i < n; i++) {
            sv[i].data = s[i] ? (uint8_t *)s[i]->bytes : (uint8_t *)"";
            sv[i].len = s[i] ? s[i]->len : 0;
        }
        value_init(&vb, TENSORFLOW__DATA_TYPE__DT_STRING, t->rank, t->dims);
        vb.tp.n_string_val = (size_t)n;
        vb.tp.string_val = sv;
        if (kind == LTF_SUMMARY_IMAGE)
            st = write_value(ctx, w, step, tag, "images", NULL, 0, TENSORFLOW__DATA_CLASS__DATA_CLASS_BLOB_SEQUENCE,
                             description, &vb.tp);
        else
            st = write_value(ctx, w, step, tag, "text", NULL, 0, TENSORFLOW__DATA_CLASS__DATA_CLASS_TENSOR, description,
                             &vb.tp);
        free(sv);
        return st;
    }
    case LTF_SUMMARY_AUDIO: {
        if (t->rank != 3)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "audio: '%s': data must be [k, t, c], got rank %d", tag,
                            t->rank);
        double *x;
        int64_t n;
        if ((st = to_doubles(ctx, t, &x, &n)) != LTF_OK) return st;
        int64_t k = t->dims[0] < count ? t->dims[0] : count, frames = t->dims[1], ch = t->dims[2];
        if (k < 0) k = 0;
        float *f = malloc(sizeof(float) * (size_t)(frames * ch + 1));
        ProtobufCBinaryData *sv = calloc((size_t)(2 * k + 1), sizeof *sv);
        if (!f || !sv) {
            free(x);
            free(f);
            free(sv);
            return ltf_fail_oom(ctx, "audio", (size_t)(frames * ch) * 4);
        }
        for (int64_t j = 0; j < k && st == LTF_OK; j++) {
            for (int64_t i = 0; i < frames * ch; i++) f[i] = (float)x[j * frames * ch + i];
            size_t len;
            sv[2 * j].data = encode_wav(f, frames, ch, sample_rate, &len);
            sv[2 * j].len = len;
            sv[2 * j + 1].data = (uint8_t *)"";
            if (!sv[2 * j].data) st = ltf_fail_oom(ctx, "wav", len);
        }
        free(x);
        free(f);
        if (st == LTF_OK) {
            int64_t dims[2] = { k, 2 };
            value_init(&vb, TENSORFLOW__DATA_TYPE__DT_STRING, 2, dims);
            vb.tp.n_string_val = (size_t)(2 * k);
            vb.tp.string_val = sv;
            static const uint8_t wav_content[] = { 0x10, 0x0b };   /* AudioPluginData{encoding: WAV (11)} */
            st = write_value(ctx, w, step, tag, "audio", wav_content, sizeof wav_content,
                             TENSORFLOW__DATA_CLASS__DATA_CLASS_BLOB_SEQUENCE, description, &vb.tp);
        }
        for (int64_t j = 0; j < k; j++) free(sv[2 * j].data);
        free(sv);
        return st;
    }
    default: return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "summary: unknown kind %d", kind);
    }
}

ltf_status ltf_summary_write_graph(ltf_ctx *ctx, int64_t id, int64_t step, const void *graph_def, size_t n) {
    ltf_summary_writer *w = acquire(ctx, id);
    if (!w) return LTF_OK;
    Tensorflow__Event e = TENSORFLOW__EVENT__INIT;
    e.wall_time = now_seconds();
    e.step = step;
    e.what_case = TENSORFLOW__EVENT__WHAT_GRAPH_DEF;
    e.graph_def.data = (uint8_t *)graph_def;
    e.graph_def.len = n;
    pthread_mutex_lock(&w->mu);
    ltf_status st = append_event(ctx, w, &e);
    pthread_mutex_unlock(&w->mu);
    return release(ctx, w, st);
}

/* A GraphDef of 'n' nodes: name, op, inputs ("node" or "node:k"), and a
** "_output_shapes" list attribute and a "dtype" type attribute per node. */
ltf_status ltf_summary_graph_def(ltf_ctx *ctx, int n, const ltf_summary_node *nodes, void **out, size_t *len) {
    *out = NULL;
    *len = 0;
    Tensorflow__NodeDef *nd = calloc((size_t)(n > 0 ? n : 1), sizeof *nd);
    Tensorflow__NodeDef **ndp = calloc((size_t)(n > 0 ? n : 1), sizeof *ndp);
    /* per node: 2 attr entries, 2 values, a list, its shapes */
    Tensorflow__NodeDef__AttrEntry *ae = calloc((size_t)(2 * n + 1), sizeof *ae);
    Tensorflow__NodeDef__AttrEntry **aep = calloc((size_t)(2 * n + 1), sizeof *aep);
    Tensorflow__AttrValue *av = calloc((size_t)(2 * n + 1), sizeof *av);
    Tensorflow__AttrValue__ListValue *lv = calloc((size_t)(n + 1), sizeof *lv);
    value_buf *sh = calloc((size_t)(n + 1), sizeof *sh);
    Tensorflow__TensorShapeProto **shp = calloc((size_t)(n + 1), sizeof *shp);
    ltf_status st = LTF_OK;
    if (!nd || !ndp || !ae || !aep || !av || !lv || !sh || !shp) {
        st = ltf_fail_oom(ctx, "graph def", (size_t)n * sizeof *nd);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const ltf_summary_node *s = &nodes[i];
        tensorflow__node_def__init(&nd[i]);
        nd[i].name = (char *)s->name;
        nd[i].op = (char *)s->op;
        nd[i].n_input = (size_t)s->ninputs;
        nd[i].input = (char **)s->inputs;
        nd[i].device = (char *)"";
        int na = 0;
        if (s->rank >= -1 && s->rank <= 8) {
            int r = s->rank < 0 ? 0 : s->rank;
            value_init(&sh[i], 0, r, s->dims);
            sh[i].shape.unknown_rank = s->rank < 0;
            shp[i] = &sh[i].shape;
            tensorflow__attr_value__list_value__init(&lv[i]);
            lv[i].n_shape = 1;
            lv[i].shape = &shp[i];
            Tensorflow__AttrValue *a = &av[2 * i];
            tensorflow__attr_value__init(a);
            a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_LIST;
            a->list = &lv[i];
            Tensorflow__NodeDef__AttrEntry *en = &ae[2 * i];
            tensorflow__node_def__attr_entry__init(en);
            en->key = (char *)"_output_shapes";
            en->value = a;
            aep[2 * i + na++] = en;
        }
        if (s->dtype >= 0 && s->dtype < LTF_DTYPE_COUNT && tf_dtype((ltf_dtype)s->dtype)) {
            Tensorflow__AttrValue *a = &av[2 * i + 1];
            tensorflow__attr_value__init(a);
            a->value_case = TENSORFLOW__ATTR_VALUE__VALUE_TYPE;
            a->type = tf_dtype((ltf_dtype)s->dtype);
            Tensorflow__NodeDef__AttrEntry *en = &ae[2 * i + 1];
            tensorflow__node_def__attr_entry__init(en);
            en->key = (char *)"T";
            en->value = a;
            aep[2 * i + na++] = en;
        }
        nd[i].n_attr = (size_t)na;
        nd[i].attr = &aep[2 * i];
        ndp[i] = &nd[i];
    }
    Tensorflow__VersionDef ver = TENSORFLOW__VERSION_DEF__INIT;
    ver.producer = 22;
    Tensorflow__GraphDef g = TENSORFLOW__GRAPH_DEF__INIT;
    g.n_node = (size_t)n;
    g.node = ndp;
    g.versions = &ver;
    *len = tensorflow__graph_def__get_packed_size(&g);
    *out = malloc(*len + 1);
    if (!*out) {
        st = ltf_fail_oom(ctx, "graph def", *len);
        goto done;
    }
    tensorflow__graph_def__pack(&g, *out);
done:
    free(nd);
    free(ndp);
    free(ae);
    free(aep);
    free(av);
    free(lv);
    free(sh);
    free(shp);
    return st;
}
/* }==== */
