/* crc32c.h: internal helpers of core/crc32c.c (ltf_crc32c itself is public, ltf.h). */
#ifndef LTF_CRC32C_H
#define LTF_CRC32C_H
#include <stdint.h>
#include "ltf.h"
#include "ctx.h"
/* The raw CRC register after 'len' more zero bytes (zlib's crc32_combine). */
LTF_INTERNAL uint32_t ltf_crc32c_shift(uint32_t crc, uint64_t len);
/* ltf_crc32c by one path, for tests: 0 the best the CPU has, 1 without the
** AVX-512 folding (SSE4.2 streams), 2 the portable slicing-by-8 (a path the
** CPU lacks falls back to the next). */
LTF_INTERNAL uint32_t ltf_crc32c_path(int path, uint32_t crc, const void *data, size_t n);
#endif
