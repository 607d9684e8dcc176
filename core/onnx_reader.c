/*
** onnx_reader.c: ONNX ModelProto / TensorProto reading with protobuf-c
** (ltf_onnx.h). The Lua side (bindings/onnx.c) turns the checked message
** into tables; lua/tf/onnx/import.lua interprets the nodes with tf ops.
*/
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ctx.h"
#include "ltf_onnx.h"
#include "onnx.pb-c.h"

/* Where initializer i's raw_data lies in the source (the file or the caller's
** bytes): the structure is unpacked without it (see strip_msg) and the bytes
** are read straight into the tensor when the initializer is taken. */
typedef struct {
    uint64_t off, len;
    int has_raw;
    ltf_tensor *t;   /* the plain tensor, once taken */
} init_rec;

struct ltf_onnx_model {
    ltf_ctx *ctx;
    Onnx__ModelProto *proto;
    ProtobufCAllocator alloc;   /* counts what protobuf-c allocates (proto_live, proto_peak) */
    size_t proto_live, proto_peak;
    size_t ninit;
    init_rec *inits;
    int fd;                     /* the file (pread), or -1: 'mem' */
    const uint8_t *mem;
    uint64_t size;
};

/* protobuf-c's allocations for the model's structure, counted (a size header
** keeps the alignment of malloc's 16 bytes) */
static void *count_alloc(void *ud, size_t n) {
    ltf_onnx_model *m = ud;
    if (n > SIZE_MAX - 16) return NULL;
    char *p = malloc(n + 16);
    if (!p) return NULL;
    memcpy(p, &n, sizeof n);
    m->proto_live += n;
    if (m->proto_live > m->proto_peak) m->proto_peak = m->proto_live;
    return p + 16;
}
static void count_free(void *ud, void *q) {
    ltf_onnx_model *m = ud;
    if (!q) return;
    char *p = (char *)q - 16;
    size_t n;
    memcpy(&n, p, sizeof n);
    m->proto_live -= n;
    free(p);
}

static const char *onnx_type_name(int t) {
    static const char *const names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32",
                                        "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64",
                                        "COMPLEX64", "COMPLEX128", "BFLOAT16"};
    return t >= 0 && t < (int)(sizeof names / sizeof *names) ? names[t] : "unknown";
}

static int onnx_dtype(int t) {
    switch (t) {
    case 1: return LTF_DTYPE_FLOAT32;
    case 2: return LTF_DTYPE_UINT8;
    case 6: return LTF_DTYPE_INT32;
    case 7: return LTF_DTYPE_INT64;
    case 8: return LTF_DTYPE_STRING;
    case 9: return LTF_DTYPE_BOOL;
    case 10: return LTF_DTYPE_FLOAT16;
    case 11: return LTF_DTYPE_FLOAT64;
    case 16: return LTF_DTYPE_BFLOAT16;
    default: return -1;
    }
}

static void free_adopted(void *data, void *ud) {
    (void)ud;
    free(data);   /* protobuf-c's default allocator is malloc */
}

/* Checks a TensorProto (raw_data: has_raw, rawlen bytes, wherever they are):
** the dtype, dims and the byte or value count against the shape. */
static int tensor_check(ltf_ctx *ctx, const Onnx__TensorProto *tp, int has_raw, uint64_t rawlen, int *dtp,
                        uint64_t *np) {
    const char *nm = tp->name ? tp->name : "";
    int dt = onnx_dtype(tp->data_type);
    if (dt < 0) {
        ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "onnx: tensor '%s': data type %s (%d) is not supported", nm,
                 onnx_type_name(tp->data_type), (int)tp->data_type);
        return 0;
    }
    if ((tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) ||
        tp->n_external_data) {
        ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "onnx: tensor '%s': external data is not supported", nm);
        return 0;
    }
    if (tp->segment) {
        ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "onnx: tensor '%s': segmented tensors are not supported", nm);
        return 0;
    }
    if (tp->n_dims > LTF_MAX_RANK) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: tensor '%s': rank %zu is over %d", nm, tp->n_dims,
                 LTF_MAX_RANK);
        return 0;
    }
    uint64_t n = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0 || (tp->dims[i] > 0 && n > (UINT64_C(1) << 40) / (uint64_t)tp->dims[i])) {
            ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: tensor '%s': bad dimension %lld", nm,
                     (long long)tp->dims[i]);
            return 0;
        }
        n *= (uint64_t)tp->dims[i];
    }
    *dtp = dt;
    *np = n;
    if (dt == LTF_DTYPE_STRING) {
        if (tp->n_string_data != n) {
            ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: tensor '%s': %zu strings for %llu elements", nm,
                     tp->n_string_data, (unsigned long long)n);
            return 0;
        }
        return 1;
    }
    size_t esz = ltf_dtype_size((ltf_dtype)dt);
    if (has_raw) {
        if (rawlen != n * esz) {
            ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: tensor '%s': raw_data has %llu bytes, %llu expected",
                     nm, (unsigned long long)rawlen, (unsigned long long)(n * esz));
            return 0;
        }
        return 1;
    }
    size_t have;
    switch (dt) {
    case LTF_DTYPE_FLOAT32: have = tp->n_float_data; break;
    case LTF_DTYPE_FLOAT64: have = tp->n_double_data; break;
    case LTF_DTYPE_INT64: have = tp->n_int64_data; break;
    default: have = tp->n_int32_data; break;
    }
    if (have != n) {   /* checked before allocating: the values bound the size */
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: tensor '%s': %zu values for %llu elements", nm, have,
                 (unsigned long long)n);
        return 0;
    }
    return 1;
}

/* TensorProto -> tensor; 'adopt' takes raw_data's buffer (then cleared in tp;
** only for a message unpacked with protobuf-c's default allocator, malloc). */
static ltf_tensor *convert(ltf_ctx *ctx, Onnx__TensorProto *tp, int adopt) {
    int dt;
    uint64_t n;
    int has_raw = tp->has_raw_data || tp->raw_data.len;
    if (!tensor_check(ctx, tp, has_raw, tp->raw_data.len, &dt, &n)) return NULL;
    int rank = (int)tp->n_dims;
    const int64_t *dims = tp->dims;
    if (dt == LTF_DTYPE_STRING) {
        ltf_tensor *t = ltf_tensor_new(ctx, LTF_DTYPE_STRING, rank, dims);
        if (!t) return NULL;
        ltf_string **s = ltf_tensor_data(t);
        for (uint64_t i = 0; i < n; i++) {
            s[i] = ltf_string_new((const char *)tp->string_data[i].data, tp->string_data[i].len);
            if (!s[i]) {
                ltf_tensor_release(t);
                ltf_fail_oom(ctx, "onnx string", tp->string_data[i].len);
                return NULL;
            }
        }
        return t;
    }
    size_t esz = ltf_dtype_size((ltf_dtype)dt);
    if (has_raw) {
        if (adopt && n > 0 && ((uintptr_t)tp->raw_data.data % esz) == 0) {
            ltf_tensor *t = ltf_tensor_wrap(ctx, (ltf_dtype)dt, rank, dims, tp->raw_data.data, free_adopted, NULL);
            if (t) {
                tp->raw_data.data = NULL;
                tp->raw_data.len = 0;
            }
            return t;
        }
        ltf_tensor *t = ltf_tensor_new(ctx, (ltf_dtype)dt, rank, dims);
        if (t && n) memcpy(ltf_tensor_data(t), tp->raw_data.data, n * esz);
        return t;
    }
    ltf_tensor *t = ltf_tensor_new(ctx, (ltf_dtype)dt, rank, dims);
    if (!t || n == 0) return t;
    void *d = ltf_tensor_data(t);
    for (uint64_t i = 0; i < n; i++) {
        switch (dt) {
        case LTF_DTYPE_FLOAT32: ((float *)d)[i] = tp->float_data[i]; break;
        case LTF_DTYPE_FLOAT64: ((double *)d)[i] = tp->double_data[i]; break;
        case LTF_DTYPE_INT64: ((int64_t *)d)[i] = tp->int64_data[i]; break;
        case LTF_DTYPE_INT32: ((int32_t *)d)[i] = tp->int32_data[i]; break;
        case LTF_DTYPE_UINT8: ((uint8_t *)d)[i] = (uint8_t)tp->int32_data[i]; break;
        case LTF_DTYPE_BOOL: ((uint8_t *)d)[i] = tp->int32_data[i] != 0; break;
        default: ((uint16_t *)d)[i] = (uint16_t)tp->int32_data[i]; break;   /* float16, bfloat16 bits */
        }
    }
    return t;
}

/* Attribute tensors are checked at read time, converted again when asked for. */
static int check_graph(ltf_ctx *ctx, Onnx__GraphProto *g, int depth);

static int check_attr(ltf_ctx *ctx, Onnx__AttributeProto *a, int depth) {
    if (a->t) {
        ltf_tensor *t = convert(ctx, a->t, 0);
        if (!t) return 0;
        ltf_tensor_release(t);
    }
    for (size_t i = 0; i < a->n_tensors; i++) {
        ltf_tensor *t = convert(ctx, a->tensors[i], 0);
        if (!t) return 0;
        ltf_tensor_release(t);
    }
    if (a->g && !check_graph(ctx, a->g, depth + 1)) return 0;
    for (size_t i = 0; i < a->n_graphs; i++)
        if (!check_graph(ctx, a->graphs[i], depth + 1)) return 0;
    return 1;
}

static int check_graph(ltf_ctx *ctx, Onnx__GraphProto *g, int depth) {
    if (depth > 16) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: subgraphs nested over 16 deep");
        return 0;
    }
    for (size_t i = 0; i < g->n_node; i++) {
        Onnx__NodeProto *nd = g->node[i];
        if (!nd->op_type || !*nd->op_type) {
            ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: node %zu has no op_type", i + 1);
            return 0;
        }
        for (size_t k = 0; k < nd->n_attribute; k++)
            if (!check_attr(ctx, nd->attribute[k], depth)) return 0;
    }
    return 1;
}

/* {==== Reading the structure without the weights. The protobuf's framing is
** walked (wire format only: tags, varints, lengths) and a copy of the model
** is made without the raw_data of the main graph's initializers
** (ModelProto.graph = 7, GraphProto.initializer = 5, TensorProto.raw_data =
** 9); protobuf-c unpacks that copy, which holds only the structure, and
** where each raw_data lies is recorded. Everything else (the framing's
** validity included) is protobuf-c's to judge: the walker refuses only
** framing protobuf-c refuses too (a truncated field, a group). */
typedef struct {
    const uint8_t *b;   /* the whole message */
    uint8_t *out;       /* NULL: only measure */
    size_t outpos;
    int record;         /* record raw_data places (the writing pass) */
    init_rec *recs;
    size_t nrec, cap;
    int ngraph;
} strip_st;

typedef struct {
    size_t start, tag_end, pay, end;
    uint64_t num;
    int wt;
} wire_field;

static int wire_varint(const uint8_t *b, size_t end, size_t *pos, uint64_t *v) {
    uint64_t r = 0;
    for (int i = 0; i < 10 && *pos < end; i++) {
        uint8_t c = b[(*pos)++];
        r |= (uint64_t)(c & 0x7f) << (7 * i);
        if (!(c & 0x80)) {
            *v = r;
            return 1;
        }
    }
    return 0;
}

static int wire_next(const uint8_t *b, size_t end, size_t pos, wire_field *f) {
    uint64_t tag, v;
    f->start = pos;
    if (!wire_varint(b, end, &pos, &tag)) return 0;
    f->num = tag >> 3;
    f->wt = (int)(tag & 7);
    f->tag_end = f->pay = pos;
    switch (f->wt) {
    case 0:
        if (!wire_varint(b, end, &pos, &v)) return 0;
        break;
    case 1:
        if (end - pos < 8) return 0;
        pos += 8;
        break;
    case 5:
        if (end - pos < 4) return 0;
        pos += 4;
        break;
    case 2:
        if (!wire_varint(b, end, &pos, &v) || v > end - pos) return 0;
        f->pay = pos;
        pos += (size_t)v;
        break;
    default: return 0;   /* groups (3, 4) and 6, 7: protobuf-c refuses them too */
    }
    f->end = pos;
    return 1;
}

static void strip_emit(strip_st *s, const uint8_t *p, size_t n) {
    if (s->out) memcpy(s->out + s->outpos, p, n);
    s->outpos += n;
}

static void strip_varint(strip_st *s, uint64_t v) {
    uint8_t t[10];
    size_t k = 0;
    do {
        t[k] = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) t[k] |= 0x80;
        k++;
    } while (v);
    strip_emit(s, t, k);
}

/* level 0: ModelProto, 1: its GraphProto, 2: an initializer (TensorProto) */
static int strip_msg(strip_st *s, int level, size_t a, size_t e, init_rec *rec) {
    size_t pos = a;
    while (pos < e) {
        wire_field f;
        if (!wire_next(s->b, e, pos, &f)) return 0;
        pos = f.end;
        int child = f.wt == 2 && ((level == 0 && f.num == 7) || (level == 1 && f.num == 5));
        if (level == 2 && f.wt == 2 && f.num == 9) {   /* raw_data: left out, its place kept (the last one counts) */
            rec->has_raw = 1;
            rec->off = f.pay;
            rec->len = f.end - f.pay;
            continue;
        }
        if (!child) {
            strip_emit(s, s->b + f.start, f.end - f.start);
            continue;
        }
        if (level == 0 && s->record && ++s->ngraph > 1) return -1;
        /* the child's length once stripped: a measuring pass */
        strip_st m = *s;
        m.out = NULL;
        m.outpos = 0;
        m.record = 0;
        init_rec scratch;
        if (strip_msg(&m, level + 1, f.pay, f.end, &scratch) != 1) return 0;
        strip_emit(s, s->b + f.start, f.tag_end - f.start);
        strip_varint(s, m.outpos);
        init_rec *r = &scratch;
        if (level == 1 && s->record) {
            if (s->nrec == s->cap) {
                size_t cap = s->cap ? 2 * s->cap : 64;
                init_rec *nr = realloc(s->recs, cap * sizeof *nr);
                if (!nr) return -2;
                s->recs = nr;
                s->cap = cap;
            }
            r = &s->recs[s->nrec++];
        }
        memset(r, 0, sizeof *r);
        int rc = strip_msg(s, level + 1, f.pay, f.end, r);
        if (rc != 1) return rc;
    }
    return 1;
}

/* m->proto from the stripped copy of [b, b + size); the raw_data places in m->inits */
static int model_unpack(ltf_onnx_model *m, const uint8_t *b, size_t size) {
    ltf_ctx *ctx = m->ctx;
    strip_st s = {.b = b};
    init_rec scratch;
    int rc = strip_msg(&s, 0, 0, size, &scratch);   /* measure */
    uint8_t *out = NULL;
    if (rc == 1) {
        out = malloc(s.outpos ? s.outpos : 1);
        if (!out) {
            ltf_fail_oom(ctx, "onnx model", s.outpos);
            return 0;
        }
        s.out = out;
        s.outpos = 0;
        s.record = 1;
        rc = strip_msg(&s, 0, 0, size, &scratch);
    }
    if (rc != 1) {
        free(out);
        free(s.recs);
        if (rc == -2) ltf_fail_oom(ctx, "onnx initializers", s.cap * sizeof *s.recs);
        else if (rc == -1)
            ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: not a valid ONNX model (more than one graph)");
        else ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: not a valid ONNX model (the protobuf does not parse)");
        return 0;
    }
    m->alloc.alloc = count_alloc;
    m->alloc.free = count_free;
    m->alloc.allocator_data = m;
    m->inits = s.recs;
    m->ninit = s.nrec;
    m->proto = onnx__model_proto__unpack(&m->alloc, s.outpos, out);
    free(out);
    if (!m->proto) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: not a valid ONNX model (the protobuf does not parse)");
        return 0;
    }
    if (!m->proto->graph) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: the model has no graph");
        return 0;
    }
    Onnx__GraphProto *g = m->proto->graph;
    if (g->n_initializer != m->ninit) {   /* the walk and protobuf-c disagree: not a model */
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: not a valid ONNX model (the protobuf does not parse)");
        return 0;
    }
    /* every initializer checked now (its bytes are read when it is taken) */
    for (size_t i = 0; i < m->ninit; i++) {
        int dt;
        uint64_t n;
        if (!tensor_check(ctx, g->initializer[i], m->inits[i].has_raw, m->inits[i].len, &dt, &n)) return 0;
    }
    return check_graph(ctx, g, 0);
}

static ltf_onnx_model *model_new(ltf_ctx *ctx) {
    ltf_onnx_model *m = calloc(1, sizeof *m);
    if (!m) {
        ltf_fail_oom(ctx, "onnx model", sizeof *m);
        return NULL;
    }
    m->ctx = ctx;
    m->fd = -1;
    return m;
}

ltf_onnx_model *ltf_onnx_model_read(ltf_ctx *ctx, const void *data, size_t size) {
    ltf_onnx_model *m = model_new(ctx);
    if (!m) return NULL;
    m->mem = data;
    m->size = size;
    if (!model_unpack(m, size ? data : (const void *)"", size)) {
        ltf_onnx_model_free(m);
        return NULL;
    }
    return m;
}

ltf_onnx_model *ltf_onnx_model_read_file(ltf_ctx *ctx, const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        ltf_fail(ctx, LTF_ERR_NOT_FOUND, "onnx: %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: %s: not a regular file", path);
        return NULL;
    }
    ltf_onnx_model *m = model_new(ctx);
    if (!m) {
        close(fd);
        return NULL;
    }
    m->fd = fd;
    m->size = (uint64_t)st.st_size;
    size_t size = (size_t)st.st_size;
    /* mapped only for the walk and the structure: the pages touched are the
    ** framing's, and the mapping goes before any weight is read */
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    if (size && map == MAP_FAILED) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: %s: cannot map: %s", path, strerror(errno));
        ltf_onnx_model_free(m);
        return NULL;
    }
    int ok = model_unpack(m, size ? map : (const void *)"", size);
    if (size) munmap(map, size);
    if (!ok) {
        ltf_onnx_model_free(m);
        return NULL;
    }
    return m;
}

/* n bytes at 'off' of the source into dst */
static int source_read(ltf_onnx_model *m, void *dst, uint64_t off, size_t n) {
    if (m->fd < 0) {
        memcpy(dst, m->mem + off, n);
        return 1;
    }
    char *d = dst;
    while (n) {
        ssize_t k = pread(m->fd, d, n, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            ltf_fail(m->ctx, LTF_ERR_DATA_LOSS, "onnx: the file %s while its weights were read",
                     k < 0 ? strerror(errno) : "became shorter");
            return 0;
        }
        d += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 1;
}

const void *ltf_onnx_model_proto(const ltf_onnx_model *m) { return m->proto; }

size_t ltf_onnx_model_ninitializers(const ltf_onnx_model *m) { return m->ninit; }

size_t ltf_onnx_model_proto_bytes(const ltf_onnx_model *m) { return m->proto_peak; }

ltf_tensor *ltf_onnx_model_initializer(ltf_onnx_model *m, size_t i) {
    if (i >= m->ninit) return NULL;
    init_rec *r = &m->inits[i];
    if (r->t) return r->t;
    Onnx__TensorProto *tp = m->proto->graph->initializer[i];
    if (!r->has_raw || onnx_dtype(tp->data_type) == LTF_DTYPE_STRING) {
        r->t = convert(m->ctx, tp, 0);
        return r->t;
    }
    ltf_tensor *t = ltf_tensor_new(m->ctx, (ltf_dtype)onnx_dtype(tp->data_type), (int)tp->n_dims, tp->dims);
    if (!t) return NULL;
    if (r->len && !source_read(m, ltf_tensor_data(t), r->off, (size_t)r->len)) {
        ltf_tensor_release(t);
        return NULL;
    }
    r->t = t;
    return t;
}

/* dst (kh, kw, I, O) from the rows [o0, o1) of src (O, I, K = kh*kw) */
static void hwio_block(char *dst, const char *src, int64_t o0, int64_t o1, int64_t I, int64_t K, int64_t O,
                       size_t es) {
    for (int64_t i = 0; i < I; i++)
        for (int64_t k = 0; k < K; k++) {
            char *dp = dst + (size_t)((k * I + i) * O) * es;
            const char *sp = src + (size_t)(i * K + k) * es;
            if (es == 4) {
                for (int64_t o = o0; o < o1; o++) memcpy(dp + (size_t)o * 4, sp + (size_t)((o - o0) * I * K) * 4, 4);
            } else {
                for (int64_t o = o0; o < o1; o++)
                    memcpy(dp + (size_t)o * es, sp + (size_t)((o - o0) * I * K) * es, es);
            }
        }
}

ltf_tensor *ltf_onnx_hwio(ltf_ctx *ctx, const ltf_tensor *w) {
    const int64_t *d = ltf_tensor_dims(w);
    if (ltf_tensor_rank(w) != 4 || ltf_tensor_dtype(w) == LTF_DTYPE_STRING) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx_hwio: a 4-d numeric tensor expected");
        return NULL;
    }
    int64_t O = d[0], I = d[1], K = d[2] * d[3];
    int64_t nd[4] = {d[2], d[3], I, O};
    size_t es = ltf_dtype_size(ltf_tensor_dtype(w));
    const char *src = ltf_tensor_data((ltf_tensor *)w);
    if (!src && O * I * K > 0) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx_hwio: the weight is not on the host");
        return NULL;
    }
    ltf_tensor *t = ltf_tensor_new(ctx, ltf_tensor_dtype(w), 4, nd);
    if (!t) return NULL;
    char *dst = ltf_tensor_data(t);
    for (int64_t o0 = 0; o0 < O; o0 += 16) {
        int64_t o1 = o0 + 16 < O ? o0 + 16 : O;
        hwio_block(dst, src + (size_t)(o0 * I * K) * es, o0, o1, I, K, O, es);
    }
    return t;
}

ltf_tensor *ltf_onnx_model_initializer_hwio(ltf_onnx_model *m, size_t i) {
    ltf_ctx *ctx = m->ctx;
    if (i >= m->ninit) {
        ltf_fail(ctx, LTF_ERR_OUT_OF_RANGE, "onnx: initializer %zu of %zu", i + 1, m->ninit);
        return NULL;
    }
    init_rec *r = &m->inits[i];
    Onnx__TensorProto *tp = m->proto->graph->initializer[i];
    int dt = onnx_dtype(tp->data_type);
    if (r->t || !r->has_raw || dt == LTF_DTYPE_STRING || tp->n_dims != 4) {   /* from the plain tensor */
        ltf_tensor *w = ltf_onnx_model_initializer(m, i);
        return w ? ltf_onnx_hwio(ctx, w) : NULL;
    }
    /* straight from the source in blocks of 16 output channels: no copy of the ONNX layout */
    const int64_t *d = tp->dims;
    int64_t O = d[0], I = d[1], K = d[2] * d[3];
    int64_t nd[4] = {d[2], d[3], I, O};
    size_t es = ltf_dtype_size((ltf_dtype)dt);
    ltf_tensor *t = ltf_tensor_new(ctx, (ltf_dtype)dt, 4, nd);
    if (!t || O * I * K == 0) return t;
    size_t row = (size_t)(I * K) * es, rows = O < 16 ? (size_t)O : 16;
    char *buf = malloc(rows * row);
    if (!buf) {
        ltf_tensor_release(t);
        ltf_fail_oom(ctx, "onnx conv weight", rows * row);
        return NULL;
    }
    char *dst = ltf_tensor_data(t);
    for (int64_t o0 = 0; o0 < O; o0 += 16) {
        int64_t o1 = o0 + 16 < O ? o0 + 16 : O;
        if (!source_read(m, buf, r->off + (uint64_t)o0 * row, (size_t)(o1 - o0) * row)) {
            free(buf);
            ltf_tensor_release(t);
            return NULL;
        }
        hwio_block(dst, buf, o0, o1, I, K, O, es);
    }
    free(buf);
    return t;
}

ltf_tensor *ltf_onnx_tensor_from_proto(ltf_ctx *ctx, const void *tp) {
    return convert(ctx, (Onnx__TensorProto *)tp, 0);
}

ltf_tensor *ltf_onnx_tensor_read(ltf_ctx *ctx, const void *data, size_t size, char *name, size_t name_size) {
    Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, data);
    if (!tp) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: not a valid TensorProto (the protobuf does not parse)");
        return NULL;
    }
    if (name && name_size) {
        name[0] = 0;
        if (tp->name) {
            strncpy(name, tp->name, name_size - 1);
            name[name_size - 1] = 0;
        }
    }
    ltf_tensor *t = convert(ctx, tp, 1);
    onnx__tensor_proto__free_unpacked(tp, NULL);
    return t;
}

void ltf_onnx_model_free(ltf_onnx_model *m) {
    if (!m) return;
    for (size_t i = 0; i < m->ninit; i++) ltf_tensor_release(m->inits[i].t);
    free(m->inits);
    if (m->proto) onnx__model_proto__free_unpacked(m->proto, &m->alloc);
    if (m->fd >= 0) close(m->fd);
    free(m);
}
