/*
** fuzz_gif.c: libFuzzer target over the GIF decoder (core/io_image.c); the
** body is image_fuzz.h (byte 0: options, the rest: the file).
** FUZZ_C_MAX_RUNS=30000 (scripts/fuzz-c.sh: CI's fixed run count is capped here)
*/
#include "image_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fuzz_image(LTF_IMAGE_GIF, data, size); }
