/*
** io_tensor.c: tf.io.serialize_tensor / parse_tensor: TensorFlow's
** TensorProto wire format (proto/tensor.proto, tensor_shape.proto,
** types.proto, compiled by protoc-c) so that TensorFlow reads what luatf
** writes and the other way round. Numeric and bool tensors are written as
** tensor_content (little-endian row-major bytes), as TensorFlow's
** SerializeTensor does; strings as string_val. A parsed proto may carry
** either form; typed *_val lists shorter than the element count repeat
** their last value (TensorFlow's Tensor::FromProto).
*/
#include <stdlib.h>
#include <string.h>
#include "tensor.pb-c.h"
#include "ctx.h"
#include "tensor.h"
#include "shape.h"

static int to_tf(ltf_dtype dt) {
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
    default: return -1;
    }
}

static int from_tf(int t) {
    if (t <= 0) return -1;   /* DT_INVALID, or a negative enum value (to_tf's "none" must not match) */
    for (int d = 0; d < LTF_DTYPE_COUNT; d++)
        if (to_tf((ltf_dtype)d) == t) return d;
    return -1;
}

ltf_status ltf_tensor_serialize(ltf_ctx *ctx, const ltf_tensor *t, void **out, size_t *n) {
    const char *op = "serialize_tensor";
    int tt = to_tf(t->dtype);
    if (tt < 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: cannot serialize a tensor of dtype %s", op,
                        ltf_dtype_name(t->dtype));
    Tensorflow__TensorProto p = TENSORFLOW__TENSOR_PROTO__INIT;
    Tensorflow__TensorShapeProto shape = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    Tensorflow__TensorShapeProto__Dim dims[LTF_MAX_RANK], *dp[LTF_MAX_RANK];
    for (int d = 0; d < t->rank; d++) {
        tensorflow__tensor_shape_proto__dim__init(&dims[d]);
        dims[d].size = t->dims[d];
        dp[d] = &dims[d];
    }
    shape.n_dim = (size_t)t->rank;
    shape.dim = t->rank ? dp : NULL;
    p.dtype = (Tensorflow__DataType)tt;
    p.tensor_shape = &shape;
    ProtobufCBinaryData *sv = NULL;
    if (t->dtype == LTF_DTYPE_STRING) {
        sv = malloc(sizeof *sv * (size_t)(t->numel ? t->numel : 1));
        if (!sv) return ltf_fail_oom(ctx, op, sizeof *sv * (size_t)t->numel);
        ltf_string *const *S = LTF_DATA(t);
        for (int64_t i = 0; i < t->numel; i++) {
            sv[i].len = S[i] ? S[i]->len : 0;
            sv[i].data = S[i] ? (uint8_t *)S[i]->bytes : NULL;
        }
        p.n_string_val = (size_t)t->numel;
        p.string_val = sv;
    } else {
        p.tensor_content.len = (size_t)t->numel * ltf_dtype_size(t->dtype);
        p.tensor_content.data = LTF_DATA(t);
    }
    size_t len = tensorflow__tensor_proto__get_packed_size(&p);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
        free(sv);
        return ltf_fail_oom(ctx, op, len);
    }
    tensorflow__tensor_proto__pack(&p, buf);
    free(sv);
    *out = buf;
    *n = len;
    return LTF_OK;
}

#define FILL(field, CT)                                                                      \
    do {                                                                                     \
        CT *o = LTF_DATA(t);                                                                 \
        for (int64_t i = 0; i < numel; i++)                                                  \
            o[i] = (CT)p->field[(size_t)i < p->n_##field ? (size_t)i : p->n_##field - 1];   \
        nvals = p->n_##field;                                                                \
    } while (0)

ltf_tensor *ltf_tensor_parse(ltf_ctx *ctx, const void *bytes, size_t n, int want) {
    const char *op = "parse_tensor";
    Tensorflow__TensorProto *p = tensorflow__tensor_proto__unpack(NULL, n, bytes);
    if (!p) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: could not parse the bytes as a TensorProto", op);
        return NULL;
    }
    ltf_tensor *t = NULL;
    int dt = from_tf(p->dtype);
    int64_t dims[LTF_MAX_RANK];
    int rank = p->tensor_shape ? (int)p->tensor_shape->n_dim : 0;
    if (dt < 0) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: TensorProto dtype %d is not supported", op, (int)p->dtype);
        goto done;
    }
    if (want >= 0 && want != dt) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: type mismatch between the parsed tensor (%s) and out_type (%s)",
                 op, ltf_dtype_name((ltf_dtype)dt), ltf_dtype_name((ltf_dtype)want));
        goto done;
    }
    if ((p->tensor_shape && p->tensor_shape->unknown_rank) || rank > LTF_MAX_RANK) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the TensorProto's shape has %s", op,
                 rank > LTF_MAX_RANK ? "too many dimensions" : "an unknown rank");
        goto done;
    }
    for (int d = 0; d < rank; d++) {
        dims[d] = p->tensor_shape->dim[d]->size;
        if (dims[d] < 0) {
            ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the TensorProto's shape has a negative dimension %lld", op,
                     (long long)dims[d]);
            goto done;
        }
    }
    if (ltf_shape_check(ctx, op, (ltf_dtype)dt, rank, dims) != LTF_OK) goto done;
    int64_t numel = ltf_shape_numel(rank, dims);
    size_t es = ltf_dtype_size((ltf_dtype)dt);
    if (dt != LTF_DTYPE_STRING && p->tensor_content.len > 0) {
        if (p->tensor_content.len != (size_t)numel * es) {
            ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: tensor_content has %zu bytes, the shape needs %lld", op,
                     p->tensor_content.len, (long long)((size_t)numel * es));
            goto done;
        }
        t = ltf_tensor_empty(ctx, (ltf_dtype)dt, rank, dims);
        if (t) memcpy(LTF_DATA(t), p->tensor_content.data, p->tensor_content.len);
        goto done;
    }
    /* typed value lists: bounded by the element count before allocating */
    size_t counts[] = { p->n_float_val, p->n_double_val, p->n_int_val, p->n_int64_val, p->n_bool_val,
                        p->n_string_val, p->n_half_val };
    size_t most = 0;
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
        if (counts[k] > most) most = counts[k];
    if ((int64_t)most > numel) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the TensorProto has %zu values for %lld elements", op, most,
                 (long long)numel);
        goto done;
    }
    /* a few values repeated over a huge shape (the last value fills the
    ** rest, as TensorFlow) would let a small input allocate without bound:
    ** 256 MiB (a fuzzer's 2 GiB RSS limit was passed at 1 GiB under ASan) */
    if (numel > 0 && (uint64_t)numel > ((uint64_t)256 << 20) / (es ? es : 1)) {
        ltf_fail(ctx, LTF_ERR_RESOURCE_EXHAUSTED, "%s: the TensorProto's shape needs %lld elements of %zu bytes, "
                 "over the %lld-byte limit for tensors expanded from value lists", op, (long long)numel, es,
                 (long long)((int64_t)256 << 20));
        goto done;
    }
    t = ltf_tensor_empty(ctx, (ltf_dtype)dt, rank, dims);
    if (!t) goto done;
    size_t nvals = 0;
    if (numel > 0) {
        switch (dt) {
        case LTF_DTYPE_FLOAT32: if (p->n_float_val) FILL(float_val, float); break;
        case LTF_DTYPE_FLOAT64: if (p->n_double_val) FILL(double_val, double); break;
        case LTF_DTYPE_INT32: if (p->n_int_val) FILL(int_val, int32_t); break;
        case LTF_DTYPE_UINT8: if (p->n_int_val) FILL(int_val, uint8_t); break;
        case LTF_DTYPE_INT64: if (p->n_int64_val) FILL(int64_val, int64_t); break;
        case LTF_DTYPE_BOOL: if (p->n_bool_val) FILL(bool_val, uint8_t); break;
        case LTF_DTYPE_FLOAT16:
        case LTF_DTYPE_BFLOAT16: if (p->n_half_val) FILL(half_val, uint16_t); break;
        case LTF_DTYPE_STRING: {
            if (p->n_string_val == 0) break;   /* no values: empty strings */
            ltf_string **S = LTF_DATA(t);
            for (int64_t i = 0; i < numel; i++) {
                ProtobufCBinaryData *v = &p->string_val[(size_t)i < p->n_string_val ? (size_t)i : p->n_string_val - 1];
                if (v->len == 0) continue;
                S[i] = ltf_string_new((const char *)v->data, v->len);
                if (!S[i]) {
                    ltf_fail_oom(ctx, op, v->len);
                    ltf_tensor_release(t);
                    t = NULL;
                    goto done;
                }
            }
            nvals = p->n_string_val;
            break;
        }
        default: break;
        }
        if (nvals == 0) memset(LTF_DATA(t), 0, (size_t)numel * es);   /* no values: zeros, as TensorFlow */
    }
done:
    tensorflow__tensor_proto__free_unpacked(p, NULL);
    return t;
}
