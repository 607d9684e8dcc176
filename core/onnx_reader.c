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

struct ltf_onnx_model {
    ltf_ctx *ctx;
    Onnx__ModelProto *proto;
    size_t ninit;
    ltf_tensor **inits;
};

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

/* TensorProto -> tensor; 'adopt' takes raw_data's buffer (then cleared in tp). */
static ltf_tensor *convert(ltf_ctx *ctx, Onnx__TensorProto *tp, int adopt) {
    const char *nm = tp->name ? tp->name : "";
    int dt = onnx_dtype(tp->data_type);
    if (dt < 0) {
        ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "onnx: tensor '%s': data type %s (%d) is not supported", nm,
                 onnx_type_name(tp->data_type), (int)tp->data_type);
        return NULL;
    }
    if ((tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) ||
        tp->n_external_data) {
        ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "onnx: tensor '%s': external data is not supported", nm);
        return NULL;
    }
    if (tp->segment) {
        ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "onnx: tensor '%s': segmented tensors are not supported", nm);
        return NULL;
    }
    if (tp->n_dims > LTF_MAX_RANK) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: tensor '%s': rank %zu is over %d", nm, tp->n_dims,
                 LTF_MAX_RANK);
        return NULL;
    }
    uint64_t n = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        if (tp->dims[i] < 0 || (tp->dims[i] > 0 && n > (UINT64_C(1) << 40) / (uint64_t)tp->dims[i])) {
            ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: tensor '%s': bad dimension %lld", nm,
                     (long long)tp->dims[i]);
            return NULL;
        }
        n *= (uint64_t)tp->dims[i];
    }
    int rank = (int)tp->n_dims;
    const int64_t *dims = tp->dims;
    size_t esz = dt == LTF_DTYPE_STRING ? 0 : ltf_dtype_size((ltf_dtype)dt);
    if (dt == LTF_DTYPE_STRING) {
        if (tp->n_string_data != n) {
            ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: tensor '%s': %zu strings for %llu elements", nm,
                     tp->n_string_data, (unsigned long long)n);
            return NULL;
        }
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
    if (tp->has_raw_data || tp->raw_data.len) {
        if (tp->raw_data.len != n * esz) {
            ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: tensor '%s': raw_data has %zu bytes, %llu expected",
                     nm, tp->raw_data.len, (unsigned long long)(n * esz));
            return NULL;
        }
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
        return NULL;
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

ltf_onnx_model *ltf_onnx_model_read(ltf_ctx *ctx, const void *data, size_t size) {
    Onnx__ModelProto *p = onnx__model_proto__unpack(NULL, size, data);
    if (!p) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: not a valid ONNX model (the protobuf does not parse)");
        return NULL;
    }
    if (!p->graph) {
        onnx__model_proto__free_unpacked(p, NULL);
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: the model has no graph");
        return NULL;
    }
    ltf_onnx_model *m = calloc(1, sizeof *m);
    if (!m) {
        onnx__model_proto__free_unpacked(p, NULL);
        ltf_fail_oom(ctx, "onnx model", sizeof *m);
        return NULL;
    }
    m->ctx = ctx;
    m->proto = p;
    Onnx__GraphProto *g = p->graph;
    if (g->n_initializer) {
        m->inits = calloc(g->n_initializer, sizeof *m->inits);
        if (!m->inits) {
            ltf_fail_oom(ctx, "onnx initializers", g->n_initializer * sizeof *m->inits);
            ltf_onnx_model_free(m);
            return NULL;
        }
    }
    for (size_t i = 0; i < g->n_initializer; i++) {
        m->inits[i] = convert(ctx, g->initializer[i], 1);
        if (!m->inits[i]) {
            ltf_onnx_model_free(m);
            return NULL;
        }
        m->ninit = i + 1;
    }
    if (!check_graph(ctx, g, 0)) {
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
    size_t size = (size_t)st.st_size;
    void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0) : NULL;
    close(fd);
    if (size && map == MAP_FAILED) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "onnx: %s: cannot map: %s", path, strerror(errno));
        return NULL;
    }
    ltf_onnx_model *m = ltf_onnx_model_read(ctx, size ? map : "", size);
    if (size) munmap(map, size);
    return m;
}

const void *ltf_onnx_model_proto(const ltf_onnx_model *m) { return m->proto; }

ltf_tensor *ltf_onnx_model_initializer(const ltf_onnx_model *m, size_t i) {
    return i < m->ninit ? m->inits[i] : NULL;
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
    for (size_t i = 0; i < m->ninit; i++) ltf_tensor_release(m->inits[i]);
    free(m->inits);
    if (m->proto) onnx__model_proto__free_unpacked(m->proto, NULL);
    free(m);
}
