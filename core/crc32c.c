/*
** crc32c.c: CRC32C (Castagnoli), the checksum of checkpoints (core/checkpoint.c)
** and TFRecord files (core/tfrecord.c): the SSE4.2 crc32 instruction when the
** CPU has it (three interleaved streams on inputs of 384 bytes and more), else
** slicing-by-8.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ltf.h"
#include "crc32c.h"

static uint32_t crc_table(int k, int b) {
    /* T[0][b] is the byte-wise table; T[k][b] = T[k-1][b] shifted one more byte */
    uint32_t c = (uint32_t)b;
    for (int j = 0; j < 8; j++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
    for (int i = 0; i < k; i++) {
        uint32_t x = c;
        c = x >> 8;
        uint32_t t = x & 0xFF;
        for (int j = 0; j < 8; j++) t = (t >> 1) ^ (0x82F63B78u & (0u - (t & 1u)));
        c ^= t;
    }
    return c;
}

typedef struct crc_tables { uint32_t t[8][256]; } crc_tables;

static void crc_init(crc_tables *T) {
    for (int k = 0; k < 8; k++)
        for (int b = 0; b < 256; b++) T->t[k][b] = crc_table(k, b);
}

static uint32_t crc_soft(const crc_tables *T, uint32_t c, const unsigned char *p, size_t n) {
    while (n && ((uintptr_t)p & 7)) { c = T->t[0][(c ^ *p++) & 0xFF] ^ (c >> 8); n--; }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= c;
        c = T->t[7][w & 0xFF] ^ T->t[6][(w >> 8) & 0xFF] ^ T->t[5][(w >> 16) & 0xFF] ^ T->t[4][(w >> 24) & 0xFF] ^
            T->t[3][(w >> 32) & 0xFF] ^ T->t[2][(w >> 40) & 0xFF] ^ T->t[1][(w >> 48) & 0xFF] ^ T->t[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) c = T->t[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c;
}

/* The raw CRC register after 'len' more zero bytes: a linear map, applied
** by repeated squaring of its 32x32 GF(2) matrix (zlib's crc32_combine). */
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec) {
    uint32_t sum = 0;
    while (vec) {
        if (vec & 1) sum ^= *mat;
        vec >>= 1;
        mat++;
    }
    return sum;
}
static void gf2_square(uint32_t *sq, const uint32_t *mat) {
    for (int n = 0; n < 32; n++) sq[n] = gf2_times(mat, mat[n]);
}
uint32_t ltf_crc32c_shift(uint32_t crc, uint64_t len) {
    uint32_t even[32], odd[32];
    if (!len || !crc) return crc;
    odd[0] = 0x82F63B78u;    /* one zero bit */
    uint32_t row = 1;
    for (int n = 1; n < 32; n++) {
        odd[n] = row;
        row <<= 1;
    }
    gf2_square(even, odd);   /* two zero bits */
    gf2_square(odd, even);   /* four */
    for (;;) {
        gf2_square(even, odd);   /* one zero byte, then 4, 16, ... */
        if (len & 1) crc = gf2_times(even, crc);
        len >>= 1;
        if (!len) break;
        gf2_square(odd, even);
        if (len & 1) crc = gf2_times(odd, crc);
        len >>= 1;
        if (!len) break;
    }
    return crc;
}

#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <nmmintrin.h>
#if defined(__x86_64__)
/* Medium inputs (a TFRecord's 1 KB records) also run three streams, with
** stream lengths a multiple of 64 so that few shift operators are needed:
** the operator for 64*k zero bytes (as four byte tables) is built once per
** process, by the first thread that needs it (the others use one stream
** meanwhile). */
#define MID_STEP 64
#define MID_SLOTS (4096 / MID_STEP)
static uint32_t mid_op[MID_SLOTS][4][256];   /* the operator, one table per byte of the register */
static int mid_state[MID_SLOTS];   /* 0 none, 1 being built, 2 ready */

typedef uint32_t mid_table[4][256];
static const mid_table *mid_operator(size_t l) {
    size_t k = l / MID_STEP;
    if (k >= MID_SLOTS) return NULL;
    int st = __atomic_load_n(&mid_state[k], __ATOMIC_ACQUIRE);
    if (st == 2) return &mid_op[k];
    if (st != 0) return NULL;
    int zero = 0;
    if (!__atomic_compare_exchange_n(&mid_state[k], &zero, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return NULL;
    uint32_t col[32];
    for (int i = 0; i < 32; i++) col[i] = ltf_crc32c_shift((uint32_t)1 << i, l);
    for (int b = 0; b < 4; b++)
        for (uint32_t v = 0; v < 256; v++) mid_op[k][b][v] = gf2_times(col, v << (8 * b));
    __atomic_store_n(&mid_state[k], 2, __ATOMIC_RELEASE);
    return &mid_op[k];
}
static inline uint32_t mid_apply(const mid_table *t, uint32_t c) {
    return (*t)[0][c & 0xFF] ^ (*t)[1][(c >> 8) & 0xFF] ^ (*t)[2][(c >> 16) & 0xFF] ^ (*t)[3][c >> 24];
}
#endif
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const unsigned char *p, size_t n) {
    while (n && ((uintptr_t)p & 7)) { c = _mm_crc32_u8(c, *p++); n--; }
#if defined(__x86_64__)
    /* three independent streams hide the instruction's latency (3 cycles,
    ** one per cycle issued); their registers are combined with crc_shift */
    if (n >= 3 * 4096) {
        size_t l = (n / 3) & ~(size_t)7;
        const unsigned char *p1 = p + l, *p2 = p + 2 * l;
        uint64_t c0 = c, c1 = 0, c2 = 0;
        for (size_t i = 0; i < l; i += 8) {
            uint64_t w0, w1, w2;
            memcpy(&w0, p + i, 8); memcpy(&w1, p1 + i, 8); memcpy(&w2, p2 + i, 8);
            c0 = _mm_crc32_u64(c0, w0);
            c1 = _mm_crc32_u64(c1, w1);
            c2 = _mm_crc32_u64(c2, w2);
        }
        c = ltf_crc32c_shift(ltf_crc32c_shift((uint32_t)c0, l) ^ (uint32_t)c1, l) ^ (uint32_t)c2;
        p += 3 * l;
        n -= 3 * l;
    } else if (n >= 3 * MID_STEP * 2) {
        size_t l = (n / 3) & ~(size_t)(MID_STEP - 1);
        const mid_table *op = mid_operator(l);
        if (op) {
            const unsigned char *p1 = p + l, *p2 = p + 2 * l;
            uint64_t c0 = c, c1 = 0, c2 = 0;
            for (size_t i = 0; i < l; i += 8) {
                uint64_t w0, w1, w2;
                memcpy(&w0, p + i, 8); memcpy(&w1, p1 + i, 8); memcpy(&w2, p2 + i, 8);
                c0 = _mm_crc32_u64(c0, w0);
                c1 = _mm_crc32_u64(c1, w1);
                c2 = _mm_crc32_u64(c2, w2);
            }
            c = mid_apply(op, mid_apply(op, (uint32_t)c0) ^ (uint32_t)c1) ^ (uint32_t)c2;
            p += 3 * l;
            n -= 3 * l;
        }
    }
    uint64_t c64 = c;
    while (n >= 32) {
        uint64_t w0, w1, w2, w3;
        memcpy(&w0, p, 8); memcpy(&w1, p + 8, 8); memcpy(&w2, p + 16, 8); memcpy(&w3, p + 24, 8);
        c64 = _mm_crc32_u64(c64, w0);
        c64 = _mm_crc32_u64(c64, w1);
        c64 = _mm_crc32_u64(c64, w2);
        c64 = _mm_crc32_u64(c64, w3);
        p += 32;
        n -= 32;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c64 = _mm_crc32_u64(c64, w);
        p += 8;
        n -= 8;
    }
    c = (uint32_t)c64;
#endif
    while (n--) c = _mm_crc32_u8(c, *p++);
    return c;
}
#define HAVE_CRC_HW 1
#endif

uint32_t ltf_crc32c(uint32_t crc, const void *data, size_t n) {
    uint32_t c = ~crc;
    const unsigned char *p = data;
    if (!n) return crc;
#ifdef HAVE_CRC_HW
    if (__builtin_cpu_supports("sse4.2")) return ~crc_hw(c, p, n);
#endif
    crc_tables *T = n >= 4096 ? malloc(sizeof *T) : NULL;
    if (!T) {  /* short input (or no memory for the tables): bit by bit */
        while (n--) {
            c ^= *p++;
            for (int j = 0; j < 8; j++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
        }
        return ~c;
    }
    crc_init(T);
    c = crc_soft(T, c, p, n);
    free(T);
    return ~c;
}
