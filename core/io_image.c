/*
** io_image.c: image codecs over maintained libraries (libpng, libjpeg-turbo,
** giflib) and zlib/gzip inflate/deflate (ltf.h, "Image codecs"). Every
** library error is caught here: libpng and libjpeg report through
** setjmp/longjmp, which never leaves this file; each decoder returns an
** ltf_status with "decode_<format>: invalid <FORMAT> data: <reason>".
** Sizes are checked against LTF_IMAGE_MAX_BYTES / LTF_IMAGE_MAX_SIDE
** from the headers, before the pixel buffer is allocated.
*/
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>
#include <jpeglib.h>
#include <jerror.h>
#include <gif_lib.h>
#include <zlib.h>
#include "ctx.h"

static ltf_status bad(ltf_ctx *ctx, const char *op, const char *fmt, const char *why) {
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: invalid %s data: %s", op, fmt, why);
}

/* Refuse sizes before allocating: each side and the total byte count. */
static ltf_status check_size(ltf_ctx *ctx, const char *op, int64_t frames, int64_t h, int64_t w, int64_t c, int bytes) {
    if (h <= 0 || w <= 0 || frames <= 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: invalid image size %lld x %lld", op, (long long)h,
                        (long long)w);
    if (h > LTF_IMAGE_MAX_SIDE || w > LTF_IMAGE_MAX_SIDE ||
        (double)frames * (double)h * (double)w * (double)c * bytes > (double)LTF_IMAGE_MAX_BYTES)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: image of %lld frame(s) of %lld x %lld x %lld is over the limit (sides at most %d, "
                        "at most %lld bytes decoded)", op, (long long)frames, (long long)h, (long long)w,
                        (long long)c, LTF_IMAGE_MAX_SIDE, (long long)LTF_IMAGE_MAX_BYTES);
    return LTF_OK;
}

int ltf_image_format(const void *bytes, size_t n) {
    const unsigned char *b = bytes;
    if (n >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0) return LTF_IMAGE_PNG;
    if (n >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) return LTF_IMAGE_JPEG;
    if (n >= 6 && (memcmp(b, "GIF87a", 6) == 0 || memcmp(b, "GIF89a", 6) == 0)) return LTF_IMAGE_GIF;
    if (n >= 2 && b[0] == 'B' && b[1] == 'M') return LTF_IMAGE_BMP;
    return LTF_IMAGE_UNKNOWN;
}

void ltf_image_free(ltf_image *im) {
    if (!im) return;
    free(im->data);
    im->data = NULL;
    im->nbytes = 0;
}

/* {==== PNG (libpng, classic API: the transforms TensorFlow's decoder uses) */
typedef struct png_src {
    const unsigned char *p;
    size_t n, at;
    char msg[160];
    jmp_buf jb;
} png_src;

static void png_read_mem(png_structp png, png_bytep out, png_size_t len) {
    png_src *s = png_get_io_ptr(png);
    if (len > s->n - s->at) {
        snprintf(s->msg, sizeof s->msg, "truncated (needed %zu more bytes at offset %zu of %zu)", (size_t)len,
                 s->at, s->n);
        longjmp(s->jb, 1);
    }
    memcpy(out, s->p + s->at, len);
    s->at += len;
}

static void png_on_error(png_structp png, png_const_charp msg) {
    png_src *s = png_get_error_ptr(png);
    if (!s->msg[0]) snprintf(s->msg, sizeof s->msg, "%s", msg);
    longjmp(s->jb, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg) {
    (void)png; (void)msg;
}

static ltf_status decode_png(ltf_ctx *ctx, const void *bytes, size_t n, const ltf_image_opts *o, ltf_image *out) {
    const char *op = "decode_png";
    if (n < 8 || png_sig_cmp((png_const_bytep)bytes, 0, 8) != 0) return bad(ctx, op, "PNG", "not a PNG signature");
    int want = o->channels;
    if (want < 0 || want > 4)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'channels' must be 0, 1, 2, 3 or 4, got %d", op, want);
    /* the declared size, from IHDR, before libpng reads further */
    const unsigned char *b = bytes;
    if (n >= 29 && memcmp(b + 12, "IHDR", 4) == 0) {
        int64_t w0 = (int64_t)b[16] << 24 | b[17] << 16 | b[18] << 8 | b[19];
        int64_t h0 = (int64_t)b[20] << 24 | b[21] << 16 | b[22] << 8 | b[23];
        static const int chans[7] = { 1, 0, 3, 3, 2, 0, 4 };
        int c0 = want ? want : b[25] <= 6 && chans[b[25]] ? chans[b[25]] : 1;
        if (w0 > 0 && h0 > 0) {
            ltf_status st0 = check_size(ctx, op, 1, h0, w0, c0, o->bits16 ? 2 : 1);
            if (st0 != LTF_OK) return st0;
        }
    }
    png_src src = { .p = bytes, .n = n };
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, png_on_error, png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        return ltf_fail_oom(ctx, op, sizeof(png_struct *));
    }
    unsigned char *volatile pix = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(src.jb)) {
        png_destroy_read_struct(&png, &info, NULL);
        free(pix);
        free(rows);
        return bad(ctx, op, "PNG", src.msg[0] ? src.msg : "decoder error");
    }
    png_set_read_fn(png, &src, png_read_mem);
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);   /* check_size decides */
    png_read_info(png, info);
    png_uint_32 w, h;
    int depth, ctype, interlace;
    png_get_IHDR(png, info, &w, &h, &depth, &ctype, &interlace, NULL, NULL);
    int has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    int color = (ctype & PNG_COLOR_MASK_COLOR) != 0;
    int alpha = (ctype & PNG_COLOR_MASK_ALPHA) != 0 || has_trns;
    int native = (color ? 3 : 1) + (alpha ? 1 : 0);
    int c = want ? want : native;
    int bits = o->bits16 ? 16 : 8;
    ltf_status st = check_size(ctx, op, 1, h, w, c, bits / 8);
    if (st != LTF_OK) {
        png_destroy_read_struct(&png, &info, NULL);
        return st;
    }
    /* to 8 or 16 bits, palette to RGB, tRNS to alpha */
    if (ctype == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (!color && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (has_trns) png_set_tRNS_to_alpha(png);
    if (depth == 16 && bits == 8) png_set_strip_16(png);
    if (depth < 16 && bits == 16) png_set_expand_16(png);
    if (bits == 16) png_set_swap(png);   /* host (little-endian) order */
    int want_color = c >= 3, want_alpha = c == 2 || c == 4;
    if (color && !want_color) png_set_rgb_to_gray_fixed(png, 1, -1, -1);
    if (!color && want_color) png_set_gray_to_rgb(png);
    if (alpha && !want_alpha) png_set_strip_alpha(png);
    if (!alpha && want_alpha) png_set_add_alpha(png, bits == 16 ? 0xffff : 0xff, PNG_FILLER_AFTER);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    size_t rowbytes = png_get_rowbytes(png, info);
    if (rowbytes != (size_t)w * (size_t)c * (size_t)(bits / 8)) {
        snprintf(src.msg, sizeof src.msg, "unexpected row size %zu", rowbytes);
        longjmp(src.jb, 1);
    }
    pix = malloc(rowbytes * h);
    rows = malloc(sizeof(png_bytep) * h);
    if (!pix || !rows) {
        free(pix);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        return ltf_fail_oom(ctx, op, rowbytes * h);
    }
    for (png_uint_32 y = 0; y < h; y++) rows[y] = pix + (size_t)y * rowbytes;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    *out = (ltf_image){ .data = pix, .nbytes = rowbytes * h, .frames = 1, .height = h, .width = w, .channels = c,
                        .bits = bits };
    return LTF_OK;
}

typedef struct png_sink {
    unsigned char *p;
    size_t n, cap;
    int oom;
    char msg[160];
    jmp_buf jb;
} png_sink;

static void png_write_mem(png_structp png, png_bytep data, png_size_t len) {
    png_sink *s = png_get_io_ptr(png);
    if (s->n + len > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4096;
        while (cap < s->n + len) cap *= 2;
        unsigned char *q = realloc(s->p, cap);
        if (!q) {
            s->oom = 1;
            snprintf(s->msg, sizeof s->msg, "out of memory");
            longjmp(s->jb, 1);
        }
        s->p = q;
        s->cap = cap;
    }
    memcpy(s->p + s->n, data, len);
    s->n += len;
}

static void png_flush_mem(png_structp png) { (void)png; }

static void png_on_write_error(png_structp png, png_const_charp msg) {
    png_sink *s = png_get_error_ptr(png);
    if (!s->msg[0]) snprintf(s->msg, sizeof s->msg, "%s", msg);
    longjmp(s->jb, 1);
}

ltf_status ltf_image_encode_png(ltf_ctx *ctx, const void *pixels, int64_t h, int64_t w, int c, int bits,
                                int compression, void **out, size_t *n) {
    const char *op = "encode_png";
    if (c < 1 || c > 4)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: images must have 1 to 4 channels, got %d", op, c);
    if (compression < -1 || compression > 9)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'compression' must be -1..9, got %d", op, compression);
    if (h <= 0 || w <= 0 || h > 0x7fffffff || w > 0x7fffffff)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: cannot encode an image of %lld x %lld", op,
                        (long long)h, (long long)w);
    png_sink sink = { 0 };
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, png_on_write_error, png_on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        return ltf_fail_oom(ctx, op, 1024);
    }
    if (setjmp(sink.jb)) {
        png_destroy_write_struct(&png, &info);
        free(sink.p);
        if (sink.oom) return ltf_fail_oom(ctx, op, sink.cap * 2);
        return ltf_fail(ctx, LTF_ERR_INTERNAL, "%s: %s", op, sink.msg);
    }
    static const int types[] = { 0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_COLOR_TYPE_RGB,
                                 PNG_COLOR_TYPE_RGB_ALPHA };
    png_set_write_fn(png, &sink, png_write_mem, png_flush_mem);
    png_set_compression_level(png, compression < 0 ? Z_DEFAULT_COMPRESSION : compression);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, bits, types[c], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    if (bits == 16) png_set_swap(png);
    size_t rowbytes = (size_t)w * (size_t)c * (size_t)(bits / 8);
    for (int64_t y = 0; y < h; y++) png_write_row(png, (png_const_bytep)pixels + (size_t)y * rowbytes);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    *out = sink.p;
    *n = sink.n;
    return LTF_OK;
}
/* }==== */

/* {==== JPEG (libjpeg-turbo) */
typedef struct jpeg_err {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
    char msg[JMSG_LENGTH_MAX];
    int truncated;              /* libjpeg's source ran out (it inserted a fake EOI) */
} jpeg_err;

static void jpeg_on_error(j_common_ptr cinfo) {
    jpeg_err *e = (jpeg_err *)cinfo->err;
    if (!e->msg[0]) (*cinfo->err->format_message)(cinfo, e->msg);
    longjmp(e->jb, 1);
}

static void jpeg_on_message(j_common_ptr cinfo, int level) {
    jpeg_err *e = (jpeg_err *)cinfo->err;
    if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) e->truncated = 1;
}

static ltf_status decode_jpeg(ltf_ctx *ctx, const void *bytes, size_t n, const ltf_image_opts *o, ltf_image *out) {
    const char *op = "decode_jpeg";
    int want = o->channels, ratio = o->ratio ? o->ratio : 1;
    if (want != 0 && want != 1 && want != 3)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'channels' must be 0, 1 or 3, got %d", op, want);
    if (ratio != 1 && ratio != 2 && ratio != 4 && ratio != 8)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'ratio' must be 1, 2, 4 or 8, got %d", op, ratio);
    if (n < 3 || ltf_image_format(bytes, n) != LTF_IMAGE_JPEG) return bad(ctx, op, "JPEG", "not a JPEG signature");
    struct jpeg_decompress_struct cinfo;
    jpeg_err err;
    memset(&err, 0, sizeof err);
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = jpeg_on_error;
    err.pub.emit_message = jpeg_on_message;
    unsigned char *volatile pix = NULL;
    volatile int64_t done_rows = 0, H = 0, W = 0, C = 0;
    if (setjmp(err.jb)) {
        jpeg_destroy_decompress(&cinfo);
        if (pix && o->try_recover_truncated && H > 0 && (double)done_rows >= o->acceptable_fraction * (double)H) {
            memset(pix + (size_t)done_rows * (size_t)(W * C), 0, (size_t)((H - done_rows) * W * C));
            *out = (ltf_image){ .data = pix, .nbytes = (size_t)(H * W * C), .frames = 1, .height = H, .width = W,
                                .channels = C, .bits = 8 };
            return LTF_OK;
        }
        free(pix);
        return bad(ctx, op, "JPEG", err.msg[0] ? err.msg : "decoder error");
    }
    jpeg_create_decompress(&cinfo);
    jpeg_mem_src(&cinfo, (const unsigned char *)bytes, (unsigned long)n);
    jpeg_read_header(&cinfo, TRUE);
    int comps = cinfo.num_components;
    if (comps != 1 && comps != 3) {
        snprintf(err.msg, sizeof err.msg, "%d color components are not supported (1 or 3)", comps);
        longjmp(err.jb, 1);
    }
    int c = want ? want : comps;
    cinfo.out_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
    cinfo.scale_num = 1;
    cinfo.scale_denom = (unsigned)ratio;
    cinfo.do_fancy_upsampling = o->fancy_upscaling ? TRUE : FALSE;
    cinfo.dct_method = o->dct_method == 1 ? JDCT_ISLOW : o->dct_method == 2 ? JDCT_FLOAT : JDCT_IFAST;
    jpeg_calc_output_dimensions(&cinfo);
    ltf_status st = check_size(ctx, op, 1, cinfo.output_height, cinfo.output_width, c, 1);
    if (st != LTF_OK) {
        jpeg_destroy_decompress(&cinfo);
        return st;
    }
    jpeg_start_decompress(&cinfo);
    H = cinfo.output_height;
    W = cinfo.output_width;
    C = cinfo.output_components;
    size_t rowbytes = (size_t)(W * C);
    pix = malloc(rowbytes * (size_t)H);
    if (!pix) {
        jpeg_destroy_decompress(&cinfo);
        return ltf_fail_oom(ctx, op, rowbytes * (size_t)H);
    }
    while (cinfo.output_scanline < cinfo.output_height) {
        JSAMPROW row = pix + (size_t)cinfo.output_scanline * rowbytes;
        if (err.truncated && !o->try_recover_truncated) break;
        jpeg_read_scanlines(&cinfo, &row, 1);
        if (!err.truncated) done_rows = cinfo.output_scanline;
    }
    if (err.truncated) {
        snprintf(err.msg, sizeof err.msg, "premature end of data (truncated file)");
        longjmp(err.jb, 1);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    if (err.truncated) {
        snprintf(err.msg, sizeof err.msg, "premature end of data (truncated file)");
        longjmp(err.jb, 1);
    }
    *out = (ltf_image){ .data = pix, .nbytes = rowbytes * (size_t)H, .frames = 1, .height = H, .width = W,
                        .channels = C, .bits = 8 };
    return LTF_OK;
}

ltf_status ltf_image_encode_jpeg(ltf_ctx *ctx, const uint8_t *pixels, int64_t h, int64_t w, int c,
                                 const ltf_jpeg_encode_opts *o, void **out, size_t *n) {
    const char *op = "encode_jpeg";
    if (c != 1 && c != 3)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: images must have 1 or 3 channels, got %d", op, c);
    if (o->grayscale == 1 && c != 1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: format 'grayscale' needs 1 channel, got %d", op, c);
    if (o->grayscale == 0 && c != 3)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: format 'rgb' needs 3 channels, got %d", op, c);
    if (o->quality < 0 || o->quality > 100)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'quality' must be 0..100, got %d", op, o->quality);
    if (h <= 0 || w <= 0 || h > 65500 || w > 65500)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: cannot encode an image of %lld x %lld (JPEG sides are "
                        "1..65500)", op, (long long)h, (long long)w);
    struct jpeg_compress_struct cinfo;
    jpeg_err err;
    memset(&err, 0, sizeof err);
    cinfo.err = jpeg_std_error(&err.pub);
    err.pub.error_exit = jpeg_on_error;
    unsigned char *volatile buf = NULL;
    unsigned long len = 0;
    if (setjmp(err.jb)) {
        jpeg_destroy_compress(&cinfo);
        free(buf);
        return ltf_fail(ctx, LTF_ERR_INTERNAL, "%s: %s", op, err.msg);
    }
    jpeg_create_compress(&cinfo);
    unsigned char *b = NULL;
    jpeg_mem_dest(&cinfo, &b, &len);
    cinfo.image_width = (JDIMENSION)w;
    cinfo.image_height = (JDIMENSION)h;
    cinfo.input_components = c;
    cinfo.in_color_space = c == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cinfo);
    jpeg_set_quality(&cinfo, o->quality, TRUE);
    if (o->progressive) jpeg_simple_progression(&cinfo);
    if (o->optimize_size) cinfo.optimize_coding = TRUE;
    if (c == 3 && !o->chroma_downsampling) {
        for (int i = 0; i < cinfo.num_components; i++) {
            cinfo.comp_info[i].h_samp_factor = 1;
            cinfo.comp_info[i].v_samp_factor = 1;
        }
    }
    jpeg_start_compress(&cinfo, TRUE);
    size_t rowbytes = (size_t)w * (size_t)c;
    while (cinfo.next_scanline < cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)cinfo.next_scanline * rowbytes);
        jpeg_write_scanlines(&cinfo, &row, 1);
    }
    jpeg_finish_compress(&cinfo);
    buf = b;
    jpeg_destroy_compress(&cinfo);
    /* jpeg_mem_dest's buffer is malloc'ed by libjpeg: hand it over as is */
    *out = buf;
    *n = len;
    return LTF_OK;
}
/* }==== */

/* {==== GIF (giflib), frames composited as TensorFlow's decoder does:
** each frame starts as a copy of the previous one (the first as zeros),
** then its rectangle is drawn from its (or the global) color map, pixels
** of the frame's transparent index keeping what was there. */
typedef struct gif_src {
    const unsigned char *p;
    size_t n, at;
} gif_src;

static int gif_read_mem(GifFileType *gif, GifByteType *buf, int len) {
    gif_src *s = gif->UserData;
    size_t k = len < 0 ? 0 : (size_t)len;
    if (k > s->n - s->at) k = s->n - s->at;
    memcpy(buf, s->p + s->at, k);
    s->at += k;
    return (int)k;
}

static ltf_status decode_gif(ltf_ctx *ctx, const void *bytes, size_t n, const ltf_image_opts *o, ltf_image *out) {
    const char *op = "decode_gif";
    if (o->channels != 0 && o->channels != 3)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'channels' must be 0 or 3 for a GIF, got %d", op,
                        o->channels);
    if (ltf_image_format(bytes, n) != LTF_IMAGE_GIF) return bad(ctx, op, "GIF", "not a GIF signature");
    gif_src src = { .p = bytes, .n = n };
    int gerr = 0;
    GifFileType *gif = DGifOpen(&src, gif_read_mem, &gerr);
    if (!gif) return bad(ctx, op, "GIF", GifErrorString(gerr) ? GifErrorString(gerr) : "cannot open");
    int64_t W = gif->SWidth, H = gif->SHeight;
    /* a first look at the screen size before DGifSlurp allocates frames */
    ltf_status st = check_size(ctx, op, 1, H, W, 3, 1);
    if (st != LTF_OK) {
        DGifCloseFile(gif, &gerr);
        return st;
    }
    if (DGifSlurp(gif) != GIF_OK) {
        const char *why = GifErrorString(gif->Error);
        char msg[160];
        snprintf(msg, sizeof msg, "%s", why ? why : "cannot read");
        DGifCloseFile(gif, &gerr);
        return bad(ctx, op, "GIF", msg);
    }
    int64_t frames = gif->ImageCount;
    if (frames <= 0) {
        DGifCloseFile(gif, &gerr);
        return bad(ctx, op, "GIF", "no image in the file");
    }
    if (!o->all_frames) frames = 1;
    st = check_size(ctx, op, frames, H, W, 3, 1);
    if (st != LTF_OK) {
        DGifCloseFile(gif, &gerr);
        return st;
    }
    size_t fbytes = (size_t)(H * W * 3);
    unsigned char *pix = calloc((size_t)frames, fbytes);
    if (!pix) {
        DGifCloseFile(gif, &gerr);
        return ltf_fail_oom(ctx, op, fbytes * (size_t)frames);
    }
    char msg[160] = "";
    for (int64_t k = 0; k < frames && !msg[0]; k++) {
        unsigned char *dst = pix + (size_t)k * fbytes;
        SavedImage *im = &gif->SavedImages[k];
        GifImageDesc *d = &im->ImageDesc;
        GraphicsControlBlock gcb;
        gcb.TransparentColor = NO_TRANSPARENT_COLOR;
        if (DGifSavedExtensionToGCB(gif, (int)k, &gcb) != GIF_OK) gcb.TransparentColor = NO_TRANSPARENT_COLOR;
        if (k > 0) memcpy(dst, dst - fbytes, fbytes);
        int64_t x0 = d->Left, y0 = d->Top, x1 = (int64_t)d->Left + d->Width, y1 = (int64_t)d->Top + d->Height;
        if (x0 < 0) x0 = 0;
        if (y0 < 0) y0 = 0;
        if (x1 > W) x1 = W;
        if (y1 > H) y1 = H;
        ColorMapObject *cm = d->ColorMap ? d->ColorMap : gif->SColorMap;
        if (!cm) {
            snprintf(msg, sizeof msg, "frame %lld has no color map", (long long)k + 1);
            break;
        }
        if (!im->RasterBits) {
            snprintf(msg, sizeof msg, "frame %lld has no pixels", (long long)k + 1);
            break;
        }
        for (int64_t y = y0; y < y1 && !msg[0]; y++) {
            unsigned char *p = dst + (size_t)(y * W * 3);
            for (int64_t x = x0; x < x1; x++) {
                int idx = im->RasterBits[(y - d->Top) * d->Width + (x - d->Left)];
                if (idx == gcb.TransparentColor) continue;
                if (idx >= cm->ColorCount) {
                    snprintf(msg, sizeof msg, "frame %lld: color index %d outside the color map of %d colors",
                             (long long)k + 1, idx, cm->ColorCount);
                    break;
                }
                p[x * 3 + 0] = cm->Colors[idx].Red;
                p[x * 3 + 1] = cm->Colors[idx].Green;
                p[x * 3 + 2] = cm->Colors[idx].Blue;
            }
        }
    }
    DGifCloseFile(gif, &gerr);
    if (msg[0]) {
        free(pix);
        return bad(ctx, op, "GIF", msg);
    }
    *out = (ltf_image){ .data = pix, .nbytes = fbytes * (size_t)frames, .frames = frames, .height = H, .width = W,
                        .channels = 3, .bits = 8 };
    return LTF_OK;
}
/* }==== */

/* {==== BMP: uncompressed 24- and 32-bit bottom-up or top-down (BI_RGB) */
static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static ltf_status decode_bmp(ltf_ctx *ctx, const void *bytes, size_t n, const ltf_image_opts *o, ltf_image *out) {
    const char *op = "decode_bmp";
    const unsigned char *b = bytes;
    if (n < 54 || b[0] != 'B' || b[1] != 'M') return bad(ctx, op, "BMP", "too short or not a BMP signature");
    uint32_t off = le32(b + 10), hsize = le32(b + 14);
    int32_t w = (int32_t)le32(b + 18), h = (int32_t)le32(b + 22);
    int bpp = b[28] | b[29] << 8;
    uint32_t comp = le32(b + 30);
    if (hsize < 40) return bad(ctx, op, "BMP", "unsupported header");
    if (comp != 0 || (bpp != 24 && bpp != 32))
        return bad(ctx, op, "BMP", "only uncompressed 24- and 32-bit BMP files are supported");
    int topdown = h < 0;
    int64_t H = topdown ? -(int64_t)h : h, W = w;
    int src_c = bpp / 8, c = o->channels ? o->channels : 3;
    if (c != 1 && c != 3 && c != 4)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'channels' must be 0, 1, 3 or 4, got %d", op, c);
    ltf_status st = check_size(ctx, op, 1, H, W, c, 1);
    if (st != LTF_OK) return st;
    size_t stride = ((size_t)W * (size_t)src_c + 3) & ~(size_t)3;
    if (off > n || stride * (size_t)H > n - off) return bad(ctx, op, "BMP", "truncated pixel data");
    unsigned char *pix = malloc((size_t)(H * W * c));
    if (!pix) return ltf_fail_oom(ctx, op, (size_t)(H * W * c));
    for (int64_t y = 0; y < H; y++) {
        const unsigned char *row = b + off + stride * (size_t)(topdown ? y : H - 1 - y);
        unsigned char *d = pix + (size_t)(y * W * c);
        for (int64_t x = 0; x < W; x++) {
            const unsigned char *s = row + x * src_c;
            if (c == 1) {
                d[x] = (unsigned char)((s[2] * 299 + s[1] * 587 + s[0] * 114 + 500) / 1000);
            } else {
                d[x * c + 0] = s[2];
                d[x * c + 1] = s[1];
                d[x * c + 2] = s[0];
                if (c == 4) d[x * c + 3] = src_c == 4 ? s[3] : 255;
            }
        }
    }
    *out = (ltf_image){ .data = pix, .nbytes = (size_t)(H * W * c), .frames = 1, .height = H, .width = W,
                        .channels = c, .bits = 8 };
    return LTF_OK;
}
/* }==== */

ltf_status ltf_image_decode(ltf_ctx *ctx, int format, const void *bytes, size_t n, const ltf_image_opts *o,
                            ltf_image *out) {
    memset(out, 0, sizeof *out);
    if (format == LTF_IMAGE_UNKNOWN) format = ltf_image_format(bytes, n);
    switch (format) {
    case LTF_IMAGE_PNG: return decode_png(ctx, bytes, n, o, out);
    case LTF_IMAGE_JPEG: return decode_jpeg(ctx, bytes, n, o, out);
    case LTF_IMAGE_GIF: return decode_gif(ctx, bytes, n, o, out);
    case LTF_IMAGE_BMP: return decode_bmp(ctx, bytes, n, o, out);
    default:
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "decode_image: unknown image format: the contents are not PNG, JPEG, GIF or BMP data");
    }
}

/* {==== zlib / gzip */
ltf_status ltf_decompress(ltf_ctx *ctx, int type, const void *bytes, size_t n, void **out, size_t *outn) {
    const char *op = "decode_compressed";
    if (type == 0) {
        void *p = malloc(n ? n : 1);
        if (!p) return ltf_fail_oom(ctx, op, n);
        if (n) memcpy(p, bytes, n);
        *out = p;
        *outn = n;
        return LTF_OK;
    }
    if (type != 1 && type != 2)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: compression type %d is not ZLIB (1) or GZIP (2)", op, type);
    const char *name = type == 1 ? "ZLIB" : "GZIP";
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, type == 1 ? 15 : 16 + 15) != Z_OK) return ltf_fail_oom(ctx, op, sizeof z);
    size_t cap = n * 4 + 64, len = 0;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        inflateEnd(&z);
        return ltf_fail_oom(ctx, op, cap);
    }
    z.next_in = (Bytef *)bytes;
    size_t left = n;
    int rc = Z_OK;
    for (;;) {
        if (len == cap) {
            if (cap >= (size_t)LTF_IMAGE_MAX_BYTES) {
                free(buf);
                inflateEnd(&z);
                return ltf_fail(ctx, LTF_ERR_RESOURCE_EXHAUSTED, "%s: decompressed data over %lld bytes", op,
                                (long long)LTF_IMAGE_MAX_BYTES);
            }
            size_t nc = cap * 2 > (size_t)LTF_IMAGE_MAX_BYTES ? (size_t)LTF_IMAGE_MAX_BYTES : cap * 2;
            unsigned char *q = realloc(buf, nc);
            if (!q) {
                free(buf);
                inflateEnd(&z);
                return ltf_fail_oom(ctx, op, nc);
            }
            buf = q;
            cap = nc;
        }
        uInt in_chunk = left > 1u << 30 ? 1u << 30 : (uInt)left;
        size_t room = cap - len;
        uInt out_chunk = room > 1u << 30 ? 1u << 30 : (uInt)room;
        z.avail_in = in_chunk;
        z.next_out = buf + len;
        z.avail_out = out_chunk;
        rc = inflate(&z, Z_NO_FLUSH);
        left -= in_chunk - z.avail_in;
        len += out_chunk - z.avail_out;
        if (rc == Z_STREAM_END) {
            /* gzip: another member may follow */
            if (type == 2 && left > 0) {
                inflateReset(&z);
                continue;
            }
            break;
        }
        if (rc == Z_BUF_ERROR && left == 0 && z.avail_out > 0) {
            rc = Z_DATA_ERROR;
            z.msg = (char *)"truncated stream";
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) break;
    }
    if (rc != Z_STREAM_END) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s", z.msg ? z.msg : "corrupt stream");
        free(buf);
        inflateEnd(&z);
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: invalid %s data: %s", op, name, msg);
    }
    inflateEnd(&z);
    *out = buf;
    *outn = len;
    return LTF_OK;
}

ltf_status ltf_compress(ltf_ctx *ctx, int type, const void *bytes, size_t n, void **out, size_t *outn) {
    if (type == 0) return ltf_decompress(ctx, 0, bytes, n, out, outn);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, type == 1 ? 15 : 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return ltf_fail_oom(ctx, "compress", sizeof z);
    size_t cap = deflateBound(&z, (uLong)n) + 32;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        deflateEnd(&z);
        return ltf_fail_oom(ctx, "compress", cap);
    }
    z.next_in = (Bytef *)bytes;
    z.avail_in = (uInt)n;
    z.next_out = buf;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    size_t len = cap - z.avail_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(buf);
        return ltf_fail(ctx, LTF_ERR_INTERNAL, "compress: deflate failed (%d)", rc);
    }
    *out = buf;
    *outn = len;
    return LTF_OK;
}
/* }==== */
