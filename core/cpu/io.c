/*
** cpu/io.c: kernels of the io family (ltf_ops/io.h) over the codecs of
** core/io_image.c and plain stdio for files.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"
#include "../op.h"
#include "../shape.h"
#include "../tensor.h"

static const char *bytes_of(const ltf_tensor *t, int64_t i, size_t *len) {
    const ltf_string *s = ((ltf_string *const *)LTF_DATA(t))[i];
    *len = s ? s->len : 0;
    return s ? s->bytes : "";
}

/* Element 'i' of string tensor 'o' takes 'n' bytes at 'b' (copied). */
static ltf_status put(ltf_ctx *ctx, ltf_tensor *o, int64_t i, const void *b, size_t n, const char *op) {
    ltf_string **O = LTF_DATA(o);
    if (n == 0) return LTF_OK;
    O[i] = ltf_string_new(b, n);
    return O[i] ? LTF_OK : ltf_fail_oom(ctx, op, n);
}

static ltf_status io_error(ltf_ctx *ctx, const char *op, const char *path, int err) {
    return ltf_fail(ctx, err == ENOENT || err == ENOTDIR ? LTF_ERR_NOT_FOUND : err == EACCES ? LTF_ERR_FAILED_PRECONDITION
                    : LTF_ERR_INVALID_ARGUMENT, "%s: %s: %s", op, path, strerror(err));
}

ltf_status ltf_cpu_io_read_file(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    size_t pl;
    const char *path = bytes_of(in[0], 0, &pl);
    FILE *f = fopen(path, "rb");
    if (!f) return io_error(ctx, def->name, path, errno);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    ltf_status st = buf ? LTF_OK : ltf_fail_oom(ctx, def->name, cap);
    while (st == LTF_OK) {
        if (n == cap) {
            char *q = realloc(buf, cap * 2);
            if (!q) {
                st = ltf_fail_oom(ctx, def->name, cap * 2);
                break;
            }
            buf = q;
            cap *= 2;
        }
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (k == 0) {
            if (ferror(f)) st = io_error(ctx, def->name, path, errno ? errno : EIO);
            break;
        }
    }
    fclose(f);
    if (st == LTF_OK) st = put(ctx, out[0], 0, buf, n, def->name);
    free(buf);
    return st;
}

ltf_status ltf_cpu_io_write_file(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)out; (void)nout;
    size_t pl, n;
    const char *path = bytes_of(in[0], 0, &pl);
    const char *b = bytes_of(in[1], 0, &n);
    FILE *f = fopen(path, "wb");
    if (!f) return io_error(ctx, def->name, path, errno);
    size_t k = fwrite(b, 1, n, f);
    int e = errno;
    if (fclose(f) != 0 || k != n) return io_error(ctx, def->name, path, e ? e : EIO);
    return LTF_OK;
}

ltf_status ltf_cpu_io_decode_image(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                   const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    size_t n;
    const char *b = bytes_of(in[0], 0, &n);
    ltf_image_opts o = { .channels = (int)a->i[0] };
    int format = LTF_IMAGE_UNKNOWN, expand = 1;
    switch (def->code) {
    case LTF_OP_DECODE_PNG: format = LTF_IMAGE_PNG; o.bits16 = a->i[1] != 0; break;
    case LTF_OP_DECODE_JPEG:
        format = LTF_IMAGE_JPEG;
        o.ratio = (int)a->i[1];
        o.fancy_upscaling = (a->i[2] & 1) != 0;
        o.try_recover_truncated = (a->i[2] & 2) != 0;
        o.dct_method = (int)a->i[3];
        o.acceptable_fraction = a->f[0];
        break;
    case LTF_OP_DECODE_GIF: format = LTF_IMAGE_GIF; o.all_frames = 1; break;
    default:
        o.bits16 = a->i[1] != 0;
        expand = a->i[2] != 0;
        o.all_frames = expand;
        o.ratio = 1;
        o.fancy_upscaling = 1;
        o.acceptable_fraction = 1;
        break;
    }
    if (def->code == LTF_OP_DECODE_IMAGE) {
        format = ltf_image_format(b, n);
        if (format == LTF_IMAGE_GIF && o.channels != 0 && o.channels != 3)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "decode_image: a GIF has 3 channels, 'channels' is %d",
                            o.channels);
        if (format == LTF_IMAGE_JPEG && (o.channels == 2 || o.channels == 4))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "decode_image: a JPEG gives 1 or 3 channels, 'channels' is %d",
                            o.channels);
        if (format == LTF_IMAGE_UNKNOWN)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "decode_image: unknown image format: the contents are not PNG, JPEG, GIF or BMP data");
    }
    ltf_image im;
    ltf_status st = ltf_image_decode(ctx, format, b, n, &o, &im);
    if (st != LTF_OK) return st;
    int64_t dims[4];
    int r = 0;
    int gif4 = def->code == LTF_OP_DECODE_GIF || (format == LTF_IMAGE_GIF && expand);
    if (gif4) dims[r++] = im.frames;
    dims[r++] = im.height;
    dims[r++] = im.width;
    dims[r++] = im.channels;
    /* 16-bit samples asked (as int32): PNGs come 16-bit from libpng, the
    ** other formats' 8-bit samples are scaled by 257 (0..255 -> 0..65535) */
    int wide = o.bits16;
    ltf_tensor *t = ltf_tensor_empty(ctx, wide ? LTF_DTYPE_INT32 : LTF_DTYPE_UINT8, r, dims);
    if (!t) {
        ltf_image_free(&im);
        return ctx->last_status;
    }
    if (wide && im.bits == 16) {
        const uint16_t *s = im.data;
        int32_t *d = LTF_DATA(t);
        for (size_t i = 0; i < im.nbytes / 2; i++) d[i] = s[i];
    } else if (wide) {
        const uint8_t *s = im.data;
        int32_t *d = LTF_DATA(t);
        for (size_t i = 0; i < im.nbytes; i++) d[i] = s[i] * 257;
    } else {
        memcpy(LTF_DATA(t), im.data, im.nbytes);
    }
    ltf_image_free(&im);
    out[0] = t;
    return LTF_OK;
}

ltf_status ltf_cpu_io_encode_png(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *x = in[0];
    int64_t h = x->dims[0], w = x->dims[1], c = x->dims[2];
    const void *px = LTF_DATA(x);
    uint16_t *wide = NULL;
    int bits = 8;
    if (x->dtype == LTF_DTYPE_INT32) {
        bits = 16;
        wide = malloc(sizeof(uint16_t) * (size_t)(x->numel ? x->numel : 1));
        if (!wide) return ltf_fail_oom(ctx, def->name, sizeof(uint16_t) * (size_t)x->numel);
        const int32_t *s = px;
        for (int64_t i = 0; i < x->numel; i++) {
            if (s[i] < 0 || s[i] > 65535) {
                free(wide);
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: int32 samples are 16-bit and must be 0..65535, "
                                "got %d", def->name, (int)s[i]);
            }
            wide[i] = (uint16_t)s[i];
        }
        px = wide;
    }
    void *buf = NULL;
    size_t n = 0;
    ltf_status st = ltf_image_encode_png(ctx, px, h, w, (int)c, bits, (int)a->i[0], &buf, &n);
    free(wide);
    if (st == LTF_OK) st = put(ctx, out[0], 0, buf, n, def->name);
    free(buf);
    return st;
}

ltf_status ltf_cpu_io_encode_jpeg(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                  const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *x = in[0];
    ltf_jpeg_encode_opts o = { .quality = (int)a->i[0], .grayscale = a->i[1] == 0 ? -1 : a->i[1] == 1 ? 1 : 0,
                               .progressive = (a->i[2] & 1) != 0, .optimize_size = (a->i[2] & 2) != 0,
                               .chroma_downsampling = (a->i[2] & 4) != 0 };
    void *buf = NULL;
    size_t n = 0;
    ltf_status st = ltf_image_encode_jpeg(ctx, LTF_DATA(x), x->dims[0], x->dims[1], (int)x->dims[2], &o, &buf, &n);
    if (st == LTF_OK) st = put(ctx, out[0], 0, buf, n, def->name);
    free(buf);
    return st;
}

ltf_status ltf_cpu_io_decode_raw(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *x = in[0];
    ltf_dtype dt = (ltf_dtype)a->i[0];
    size_t es = ltf_dtype_size(dt);
    int64_t fixed = a->i[2], width = -1;
    for (int64_t i = 0; i < x->numel; i++) {
        size_t n;
        bytes_of(x, i, &n);
        int64_t w;
        if (fixed > 0) {
            w = fixed / (int64_t)es;
        } else {
            if (n % es != 0)
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: input of %zu bytes is not a multiple of the size "
                                "of %s (%zu)", def->name, n, ltf_dtype_name(dt), es);
            w = (int64_t)(n / es);
        }
        if (width >= 0 && w != width)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: all inputs must have the same length: element %lld "
                            "has %zu bytes, element 1 %lld", def->name, (long long)i + 1, n, (long long)(width * (int64_t)es));
        width = w;
    }
    if (width < 0) width = fixed > 0 ? fixed / (int64_t)es : 0;
    if (x->rank >= LTF_MAX_RANK)   /* a rank unknown when traced (inference checks known ones) */
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'input_bytes' has rank %d; the result's rank would "
                        "exceed %d", def->name, x->rank, LTF_MAX_RANK);
    int64_t dims[LTF_MAX_RANK];
    for (int d = 0; d < x->rank; d++) dims[d] = x->dims[d];
    dims[x->rank] = width;
    ltf_status st = ltf_shape_check(ctx, def->name, dt, x->rank + 1, dims);
    if (st != LTF_OK) return st;
    ltf_tensor *t = ltf_tensor_empty(ctx, dt, x->rank + 1, dims);
    if (!t) return ctx->last_status;
    unsigned char *d = LTF_DATA(t);
    int swap = (a->i[1] != 0) != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
    size_t row = (size_t)width * es;
    for (int64_t i = 0; i < x->numel; i++) {
        size_t n;
        const char *b = bytes_of(x, i, &n);
        unsigned char *o = d + (size_t)i * row;
        size_t k = n < row ? n : row;
        memcpy(o, b, k);
        memset(o + k, 0, row - k);   /* fixed_length past the end: zeros, as TensorFlow */
        if (swap && es > 1)
            for (size_t e = 0; e < row; e += es)
                for (size_t j = 0; j < es / 2; j++) {
                    unsigned char tmp = o[e + j];
                    o[e + j] = o[e + es - 1 - j];
                    o[e + es - 1 - j] = tmp;
                }
    }
    out[0] = t;
    return LTF_OK;
}

ltf_status ltf_cpu_io_decode_compressed(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                        const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)nout;
    const ltf_tensor *x = in[0];
    ltf_status st = LTF_OK;
    for (int64_t i = 0; i < x->numel && st == LTF_OK; i++) {
        size_t n, m = 0;
        const char *b = bytes_of(x, i, &n);
        void *buf = NULL;
        st = ltf_decompress(ctx, (int)a->i[0], b, n, &buf, &m);
        if (st == LTF_OK) st = put(ctx, out[0], i, buf, m, def->name);
        free(buf);
    }
    return st;
}

ltf_status ltf_cpu_io_serialize_tensor(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                       const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)nin; (void)a; (void)nout;
    void *buf = NULL;
    size_t n = 0;
    ltf_status st = ltf_tensor_serialize(ctx, in[0], &buf, &n);
    if (st == LTF_OK) st = put(ctx, out[0], 0, buf, n, def->name);
    free(buf);
    return st;
}

ltf_status ltf_cpu_io_parse_tensor(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                   const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)nin; (void)nout;
    size_t n;
    const char *b = bytes_of(in[0], 0, &n);
    ltf_tensor *t = ltf_tensor_parse(ctx, b, n, (int)a->i[0]);
    if (!t) return ctx->last_status;
    out[0] = t;
    return LTF_OK;
}
