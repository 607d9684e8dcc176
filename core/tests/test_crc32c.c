/*
** test_crc32c.c: CRC32C (core/crc32c.c) on every path this CPU has (the
** AVX-512 folding, the SSE4.2 streams with their shift operators, the
** portable tables) against a bit-at-a-time reference, over lengths that
** reach each path's branches; the zero-byte shift against feeding zeros.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "crc32c.h"

static int failures;
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); failures++; } } while (0)

static uint32_t ref_raw(uint32_t c, const unsigned char *p, size_t n) {   /* the raw register */
    while (n--) {
        c ^= *p++;
        for (int j = 0; j < 8; j++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    }
    return c;
}
static uint32_t ref(uint32_t crc, const unsigned char *p, size_t n) { return n ? ~ref_raw(~crc, p, n) : crc; }

int main(void) {
    /* the check value of the catalogue (CRC-32C of "123456789") */
    for (int path = 0; path < 3; path++) CHECK(ltf_crc32c_path(path, 0, "123456789", 9) == 0xE3069283u);
    size_t cap = 40000;
    unsigned char *buf = malloc(cap + 8);
    uint32_t s = 12345;
    for (size_t i = 0; i < cap + 8; i++) {
        s = s * 1103515245u + 12345u;
        buf[i] = (unsigned char)(s >> 16);
    }
    static const size_t lens[] = {0, 1, 7, 8, 31, 255, 256, 383, 384, 1000, 1024, 1037, 4095, 4096, 8191,
                                  12287, 12288, 12300, 20000, 39999, 40000};
    for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
        for (int off = 0; off < 3; off++) {   /* unaligned starts too */
            size_t n = lens[i];
            uint32_t want = ref(0x1234u, buf + off, n);
            for (int path = 0; path < 3; path++) {
                uint32_t got = ltf_crc32c_path(path, 0x1234u, buf + off, n);
                if (got != want) fprintf(stderr, "path %d, %zu bytes at +%d: %08x, want %08x\n", path, n, off, got, want);
                CHECK(got == want);
            }
        }
    /* a CRC continued over two calls equals one call over both */
    CHECK(ltf_crc32c(ltf_crc32c(0, buf, 5000), buf + 5000, 15000) == ltf_crc32c(0, buf, 20000));
    /* shift: the register after n zero bytes */
    static const unsigned char zeros[5000];
    static const uint64_t shifts[] = {1, 2, 3, 8, 64, 1000, 4096, 4999};
    for (size_t i = 0; i < sizeof shifts / sizeof *shifts; i++)
        for (uint32_t c = 1; c; c = c * 7 + 0x9E3779B9u > c ? c * 7 + 0x9E3779B9u : 0) {
            CHECK(ltf_crc32c_shift(c, shifts[i]) == ref_raw(c, zeros, (size_t)shifts[i]));
            if (c > 0x10000000u) break;
        }
    /* long shifts compose: 2^40 bytes = twice 2^39; 3 * 2^20 = three times 2^20; 2^63 + 2^62 */
    uint32_t a = 0xDEADBEEFu, b = a;
    for (int k = 0; k < 3; k++) b = ltf_crc32c_shift(b, (uint64_t)1 << 20);
    CHECK(ltf_crc32c_shift(a, (uint64_t)3 << 20) == b);
    CHECK(ltf_crc32c_shift(a, (uint64_t)1 << 40) == ltf_crc32c_shift(ltf_crc32c_shift(a, (uint64_t)1 << 39), (uint64_t)1 << 39));
    CHECK(ltf_crc32c_shift(a, (uint64_t)3 << 62) ==
          ltf_crc32c_shift(ltf_crc32c_shift(a, (uint64_t)1 << 63), (uint64_t)1 << 62));
    CHECK(ltf_crc32c_shift(0, 12345) == 0);
    CHECK(ltf_crc32c_shift(a, 0) == a);
    free(buf);
    if (failures) fprintf(stderr, "test_crc32c: %d failures\n", failures);
    else printf("test_crc32c: ok\n");
    return failures != 0;
}
