/*
** ops/io.c: definitions of the io family (ltf_ops/io.h): tf.io's files,
** image codecs, raw bytes and compression. CPU only (string tensors stay
** on the host), none differentiable; read_file and write_file are
** stateful (never folded or pruned). Kernels in cpu/io.c.
*/
#include <string.h>
#include "../op.h"
#include "../shape.h"
#include "../cpu/cpu.h"

LTF_CPU_KERNEL(ltf_cpu_io_read_file);
LTF_CPU_KERNEL(ltf_cpu_io_write_file);
LTF_CPU_KERNEL(ltf_cpu_io_decode_image);
LTF_CPU_KERNEL(ltf_cpu_io_encode_png);
LTF_CPU_KERNEL(ltf_cpu_io_encode_jpeg);
LTF_CPU_KERNEL(ltf_cpu_io_decode_raw);
LTF_CPU_KERNEL(ltf_cpu_io_decode_compressed);
LTF_CPU_KERNEL(ltf_cpu_io_serialize_tensor);
LTF_CPU_KERNEL(ltf_cpu_io_parse_tensor);

#define INFER_ARGS ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin, \
                   const ltf_attrs *a, ltf_type *out, int maxout, int *nout

static ltf_status need_string(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const ltf_tensor *t, int scalar) {
    if (t->dtype != LTF_DTYPE_STRING)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: '%s' has dtype %s, expected string", def->name, arg,
                        ltf_dtype_name(t->dtype));
    if (scalar && t->rank > 0) {
        char s[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must be a scalar, got shape %s", def->name, arg,
                        ltf_shape_str(t->rank, t->dims, s, sizeof s));
    }
    return LTF_OK;
}

static ltf_status infer_read_file(INFER_ARGS) {
    (void)nin; (void)a; (void)maxout;
    ltf_status st = need_string(ctx, def, "filename", in[0], 1);
    if (st != LTF_OK) return st;
    out[0].dtype = LTF_DTYPE_STRING;
    out[0].rank = 0;
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_write_file(INFER_ARGS) {
    (void)nin; (void)a; (void)maxout; (void)out;
    ltf_status st = need_string(ctx, def, "filename", in[0], 1);
    if (st == LTF_OK) st = need_string(ctx, def, "contents", in[1], 1);
    *nout = 0;
    return st;
}

static ltf_status infer_decode(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = need_string(ctx, def, "contents", in[0], 1);
    if (st != LTF_OK) return st;
    int64_t c = a->i[0];
    int code = def->code;
    if (c < 0 || c > 4 || (code == LTF_OP_DECODE_JPEG && c != 0 && c != 1 && c != 3) ||
        (code == LTF_OP_DECODE_GIF && c != 0 && c != 3))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'channels' must be %s, got %lld", def->name,
                        code == LTF_OP_DECODE_JPEG ? "0, 1 or 3" : code == LTF_OP_DECODE_GIF ? "0 or 3" : "0, 1, 2, 3 or 4",
                        (long long)c);
    if (code == LTF_OP_DECODE_JPEG && a->i[1] != 1 && a->i[1] != 2 && a->i[1] != 4 && a->i[1] != 8)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'ratio' must be 1, 2, 4 or 8, got %lld", def->name,
                        (long long)a->i[1]);
    ltf_type *o = &out[0];
    o->dtype = (code == LTF_OP_DECODE_PNG || code == LTF_OP_DECODE_IMAGE) && a->i[1] ? LTF_DTYPE_INT32
                                                                                  : LTF_DTYPE_UINT8;
    if (code == LTF_OP_DECODE_GIF) {
        o->rank = 4;
        o->dims[0] = o->dims[1] = o->dims[2] = LTF_UNKNOWN_DIM;
        o->dims[3] = 3;
    } else if (code == LTF_OP_DECODE_IMAGE && a->i[2]) {
        o->rank = LTF_UNKNOWN_RANK;
    } else {
        o->rank = 3;
        o->dims[0] = o->dims[1] = LTF_UNKNOWN_DIM;
        o->dims[2] = c ? c : LTF_UNKNOWN_DIM;
    }
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_encode(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *x = in[0];
    int jpeg = def->code == LTF_OP_ENCODE_JPEG;
    if (x->dtype != LTF_DTYPE_UINT8 && (jpeg || x->dtype != LTF_DTYPE_INT32))
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'image' has dtype %s, expected %s", def->name,
                        ltf_dtype_name(x->dtype), jpeg ? "uint8" : "uint8 or int32 (16-bit samples)");
    char s[LTF_SHAPE_BUF];
    if (x->rank >= 0 && x->rank != 3)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'image' must be 3-D [height, width, channels], got shape %s",
                        def->name, ltf_shape_str(x->rank, x->dims, s, sizeof s));
    if (x->rank == 3 && x->dims[2] >= 0 &&
        (jpeg ? x->dims[2] != 1 && x->dims[2] != 3 : x->dims[2] < 1 || x->dims[2] > 4))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'image' must have %s channels, got shape %s", def->name,
                        jpeg ? "1 or 3" : "1 to 4", ltf_shape_str(x->rank, x->dims, s, sizeof s));
    if (!jpeg && (a->i[0] < -1 || a->i[0] > 9))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'compression' must be -1..9, got %lld", def->name,
                        (long long)a->i[0]);
    if (jpeg && (a->i[0] < 0 || a->i[0] > 100))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'quality' must be 0..100, got %lld", def->name,
                        (long long)a->i[0]);
    out[0].dtype = LTF_DTYPE_STRING;
    out[0].rank = 0;
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_decode_raw(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = need_string(ctx, def, "input_bytes", in[0], 0);
    if (st != LTF_OK) return st;
    int64_t dt = a->i[0];
    if (dt < 0 || dt >= LTF_DTYPE_COUNT || dt == LTF_DTYPE_STRING || dt == LTF_DTYPE_RESOURCE)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'out_type' must be a numeric or bool dtype", def->name);
    if (a->i[2] < 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'fixed_length' must be >= 0, got %lld", def->name,
                        (long long)a->i[2]);
    if (a->i[2] > 0 && a->i[2] % (int64_t)ltf_dtype_size((ltf_dtype)dt) != 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'fixed_length' %lld is not a multiple of the size of %s (%zu)",
                        def->name, (long long)a->i[2], ltf_dtype_name((ltf_dtype)dt), ltf_dtype_size((ltf_dtype)dt));
    out[0].dtype = (ltf_dtype)dt;
    if (in[0]->rank >= LTF_MAX_RANK)   /* the result adds a dimension */
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'input_bytes' has rank %d; the result's rank would "
                        "exceed %d", def->name, in[0]->rank, LTF_MAX_RANK);
    if (in[0]->rank < 0) {
        out[0].rank = LTF_UNKNOWN_RANK;
    } else {
        out[0].rank = in[0]->rank + 1;
        for (int d = 0; d < in[0]->rank; d++) out[0].dims[d] = in[0]->dims[d];
        out[0].dims[in[0]->rank] = a->i[2] > 0 ? a->i[2] / (int64_t)ltf_dtype_size((ltf_dtype)dt) : LTF_UNKNOWN_DIM;
    }
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_decode_compressed(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = need_string(ctx, def, "bytes", in[0], 0);
    if (st != LTF_OK) return st;
    if (a->i[0] < 0 || a->i[0] > 2)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'compression_type' must be \"\", \"ZLIB\" or \"GZIP\"",
                        def->name);
    out[0].dtype = LTF_DTYPE_STRING;
    out[0].rank = in[0]->rank;
    for (int d = 0; d < in[0]->rank; d++) out[0].dims[d] = in[0]->dims[d];
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_serialize(INFER_ARGS) {
    (void)nin; (void)a; (void)maxout;
    ltf_dtype dt = in[0]->dtype;
    if (dt == LTF_DTYPE_RESOURCE)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: cannot serialize a tensor of dtype %s", def->name,
                        ltf_dtype_name(dt));
    out[0].dtype = LTF_DTYPE_STRING;
    out[0].rank = 0;
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_parse(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = need_string(ctx, def, "serialized", in[0], 1);
    if (st != LTF_OK) return st;
    int64_t dt = a->i[0];
    if (dt < 0 || dt >= LTF_DTYPE_COUNT || dt == LTF_DTYPE_RESOURCE)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'out_type' must be a dtype (not resource)", def->name);
    out[0].dtype = (ltf_dtype)dt;
    out[0].rank = LTF_UNKNOWN_RANK;
    *nout = 1;
    return LTF_OK;
}

#define CPU(k) { [LTF_DEVICE_CPU] = k }
#define ND LTF_OP_NOT_DIFFERENTIABLE
#define KA LTF_OP_KERNEL_ALLOCATES
#define DEF(name, ID, nmin, nmax, flags, infer, kernel)                                          \
    LTF_INTERNAL const ltf_op_def ltf_opdef_##name = { #name, nmin, nmax, ND | (flags), LTF_OP_##ID, infer, \
                                                       CPU(kernel), NULL };

DEF(read_file, READ_FILE, 1, 1, LTF_OP_STATEFUL, infer_read_file, ltf_cpu_io_read_file)
DEF(write_file, WRITE_FILE, 2, 2, LTF_OP_STATEFUL, infer_write_file, ltf_cpu_io_write_file)
DEF(decode_png, DECODE_PNG, 1, 1, KA, infer_decode, ltf_cpu_io_decode_image)
DEF(decode_jpeg, DECODE_JPEG, 1, 1, KA, infer_decode, ltf_cpu_io_decode_image)
DEF(decode_gif, DECODE_GIF, 1, 1, KA, infer_decode, ltf_cpu_io_decode_image)
DEF(decode_image, DECODE_IMAGE, 1, 1, KA, infer_decode, ltf_cpu_io_decode_image)
DEF(encode_png, ENCODE_PNG, 1, 1, 0, infer_encode, ltf_cpu_io_encode_png)
DEF(encode_jpeg, ENCODE_JPEG, 1, 1, 0, infer_encode, ltf_cpu_io_encode_jpeg)
DEF(decode_raw, DECODE_RAW, 1, 1, KA, infer_decode_raw, ltf_cpu_io_decode_raw)
DEF(decode_compressed, DECODE_COMPRESSED, 1, 1, 0, infer_decode_compressed, ltf_cpu_io_decode_compressed)
DEF(serialize_tensor, SERIALIZE_TENSOR, 1, 1, 0, infer_serialize, ltf_cpu_io_serialize_tensor)
DEF(parse_tensor, PARSE_TENSOR, 1, 1, KA, infer_parse, ltf_cpu_io_parse_tensor)
