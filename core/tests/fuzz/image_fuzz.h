/*
** image_fuzz.h: the shared body of fuzz_png.c, fuzz_jpeg.c and fuzz_gif.c:
** byte 0 picks the decoder options, the rest is the file. Any bytes must
** give an image whose size matches its fields or a failure naming the
** decoder, never a crash, leak or oversized allocation. A decoded PNG is
** encoded again and must decode to the same samples. One context per
** input, so leaks show under LeakSanitizer.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ltf.h"

static void fail(const char *what) {
    fprintf(stderr, "fuzz_image: %s\n", what);
    abort();
}

static int fuzz_image(int format, const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    ltf_ctx *ctx = ltf_ctx_new();
    if (!ctx) return 0;
    uint8_t k = data[0];
    ltf_image_opts o = { .channels = k & 7, .bits16 = (k >> 3) & 1, .ratio = 1 << ((k >> 4) & 3),
                         .fancy_upscaling = (k >> 6) & 1, .try_recover_truncated = k >> 7,
                         .acceptable_fraction = (k & 1) ? 0.5 : 1.0, .dct_method = (k >> 3) % 3,
                         .all_frames = (k >> 5) & 1 };
    if (format == LTF_IMAGE_JPEG && o.channels != 1 && o.channels != 3) o.channels = 0;
    if (format == LTF_IMAGE_GIF && o.channels != 3) o.channels = 0;
    if (format == LTF_IMAGE_PNG && o.channels > 4) o.channels = 0;
    ltf_image im;
    ltf_status st = ltf_image_decode(ctx, format, data + 1, size - 1, &o, &im);
    if (st == LTF_OK) {
        if (!im.data) fail("success without pixels");
        if (im.frames < 1 || im.height < 1 || im.width < 1 || im.channels < 1 || im.channels > 4)
            fail("bad image fields");
        if ((size_t)(im.frames * im.height * im.width * im.channels) * (size_t)(im.bits / 8) != im.nbytes)
            fail("byte count differs from the fields");
        if (im.nbytes > (size_t)LTF_IMAGE_MAX_BYTES) fail("over the size limit");
        volatile uint8_t sink = ((uint8_t *)im.data)[im.nbytes - 1];
        (void)sink;
        if (format == LTF_IMAGE_PNG && im.nbytes <= (1u << 16)) {
            void *png = NULL;
            size_t n = 0;
            if (ltf_image_encode_png(ctx, im.data, im.height, im.width, (int)im.channels, im.bits, k % 10, &png, &n) !=
                LTF_OK)
                fail("encoding a decoded image failed");
            ltf_image_opts o2 = { .channels = 0, .bits16 = im.bits == 16 };
            ltf_image back;
            if (ltf_image_decode(ctx, LTF_IMAGE_PNG, png, n, &o2, &back) != LTF_OK) fail("re-decoding failed");
            if (back.nbytes != im.nbytes || memcmp(back.data, im.data, im.nbytes) != 0) fail("round trip differs");
            ltf_image_free(&back);
            free(png);
        }
        ltf_image_free(&im);
    } else {
        const char *msg = ltf_ctx_error(ctx);
        if (!msg || !msg[0]) fail("failure without a message");
        if (strncmp(msg, "decode_", 7) != 0) fail("failure not naming the decoder");
    }
    ltf_ctx_release(ctx);
    return 0;
}
