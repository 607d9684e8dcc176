/*
** crc32c.c: CRC32C (Castagnoli), the checksum of checkpoints (core/checkpoint.c)
** and TFRecord files (core/tfrecord.c): the SSE4.2 crc32 instruction when the
** CPU has it (three interleaved streams on inputs of 384 bytes and more;
** AVX-512 VPCLMULQDQ folding from 256 bytes on where the CPU has it), else
** slicing-by-8.
*/
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
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

static crc_tables soft_T;    /* slicing-by-8 tables: constants, made once per process */
static pthread_once_t soft_once = PTHREAD_ONCE_INIT;
static void soft_init(void) { crc_init(&soft_T); }

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

/* The raw CRC register after 'len' more zero bytes: the register times
** x^(8 len) modulo P, in GF(2)[x] (bit-reflected, as the register is): a
** product per set bit of len with the powers x^(2^k) mod P, tabled once per
** process (constants; zlib 1.2.12's crc32_combine does the same). */
#define CRC_POLY 0x82F63B78u
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec) {   /* a 32x32 GF(2) matrix times a vector */
    uint32_t sum = 0;
    while (vec) {
        if (vec & 1) sum ^= *mat;
        vec >>= 1;
        mat++;
    }
    return sum;
}
static uint32_t multmodp(uint32_t a, uint32_t b) {   /* a(x) b(x) mod P; x^0 is bit 31 */
    uint32_t m = 1u << 31, p = 0;
    for (;;) {
        if (a & m) {
            p ^= b;
            if ((a & (m - 1)) == 0) break;
        }
        m >>= 1;
        b = b & 1 ? (b >> 1) ^ CRC_POLY : b >> 1;
    }
    return p;
}
static uint32_t x2n[67];    /* x^(2^k) mod P, k = 0 .. 66 (len < 2^64 bytes: up to 2^66 bits) */
static pthread_once_t x2n_once = PTHREAD_ONCE_INIT;
static void x2n_init(void) {
    uint32_t p = 1u << 30;   /* x */
    x2n[0] = p;
    for (int k = 1; k < 67; k++) x2n[k] = p = multmodp(p, p);
}
uint32_t ltf_crc32c_shift(uint32_t crc, uint64_t len) {
    if (!len || !crc) return crc;
    pthread_once(&x2n_once, x2n_init);
    uint32_t op = 1u << 31;   /* 1 */
    for (int k = 3; len; len >>= 1, k++)   /* bits: 8 len = len 2^3 */
        if (len & 1) op = multmodp(x2n[k], op);
    return multmodp(op, crc);
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

#if defined(__x86_64__)
/* Inputs of 256 bytes and more on CPUs with AVX-512 VPCLMULQDQ: carry-less
** multiplication folds 64-byte blocks (four 128-bit lanes per register,
** four registers in flight) forward onto the following data, keeping the
** message's remainder mod P; the last 128 bits then go through the crc32
** instruction (the register, folded, is congruent to the message). The
** fold constants x^e mod P (bit-reflected, shifted left once as PCLMULQDQ
** needs) are computed once by fold_const; 1 KB costs about a third of the
** three-stream crc32 path's time. */
static uint64_t fold_const(unsigned e) {
    uint32_t v = 0x80000000u;   /* x^0, reflected */
    for (unsigned i = 0; i < e; i++) v = (v & 1) ? (v >> 1) ^ 0x82F63B78u : v >> 1;
    return (uint64_t)v << 1;
}
#include <immintrin.h>
static uint64_t K_fold[4][2];   /* distance 2048, 512, 256, 128 bits: {x^(d+32), x^(d-32)} */
static int fold_ok;             /* the CPU has AVX-512 VPCLMULQDQ (set once by fold_init) */
static pthread_once_t fold_once = PTHREAD_ONCE_INIT;
static void fold_init(void) {
    static const unsigned d[4] = {2048, 512, 256, 128};
    for (int i = 0; i < 4; i++) {
        K_fold[i][0] = fold_const(d[i] + 32);
        K_fold[i][1] = fold_const(d[i] - 32);
    }
    fold_ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("vpclmulqdq") &&
              __builtin_cpu_supports("pclmul") && getenv("LTF_CRC32C_NO_FOLD") == NULL;
}

__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2")))
static __m512i fold512(__m512i x, __m512i k, __m512i next) {
    return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00), _mm512_clmulepi64_epi128(x, k, 0x11),
                                     next, 0x96);
}
__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2")))
static __m128i fold128(__m128i x, __m128i k, __m128i next) {
    return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), next);
}

/* The register 'c' over n >= 256 bytes at p; *used gets the bytes consumed (a multiple of 64). */
__attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.2")))
static uint32_t crc_fold(uint32_t c, const unsigned char *p, size_t n, size_t *used) {
    const unsigned char *p0 = p;
    __m512i x0 = _mm512_loadu_si512((const void *)p);
    __m512i x1 = _mm512_loadu_si512((const void *)(p + 64));
    __m512i x2 = _mm512_loadu_si512((const void *)(p + 128));
    __m512i x3 = _mm512_loadu_si512((const void *)(p + 192));
    x0 = _mm512_xor_si512(x0, _mm512_castsi128_si512(_mm_cvtsi32_si128((int)c)));
    p += 256;
    n -= 256;
    __m512i k = _mm512_broadcast_i32x4(_mm_set_epi64x((long long)K_fold[0][1], (long long)K_fold[0][0]));
    while (n >= 256) {
        x0 = fold512(x0, k, _mm512_loadu_si512((const void *)p));
        x1 = fold512(x1, k, _mm512_loadu_si512((const void *)(p + 64)));
        x2 = fold512(x2, k, _mm512_loadu_si512((const void *)(p + 128)));
        x3 = fold512(x3, k, _mm512_loadu_si512((const void *)(p + 192)));
        p += 256;
        n -= 256;
    }
    k = _mm512_broadcast_i32x4(_mm_set_epi64x((long long)K_fold[1][1], (long long)K_fold[1][0]));
    x1 = fold512(x0, k, x1);
    x2 = fold512(x1, k, x2);
    x3 = fold512(x2, k, x3);
    while (n >= 64) {
        x3 = fold512(x3, k, _mm512_loadu_si512((const void *)p));
        p += 64;
        n -= 64;
    }
    /* four lanes to one: each folded by 128 bits onto the next */
    __m128i k128 = _mm_set_epi64x((long long)K_fold[3][1], (long long)K_fold[3][0]);
    __m128i a = _mm512_extracti32x4_epi32(x3, 0);
    a = fold128(a, k128, _mm512_extracti32x4_epi32(x3, 1));
    a = fold128(a, k128, _mm512_extracti32x4_epi32(x3, 2));
    a = fold128(a, k128, _mm512_extracti32x4_epi32(x3, 3));
    uint64_t c64 = _mm_crc32_u64(0, (uint64_t)_mm_cvtsi128_si64(a));
    c64 = _mm_crc32_u64(c64, (uint64_t)_mm_extract_epi64(a, 1));
    *used = (size_t)(p - p0);
    return (uint32_t)c64;
}
#define HAVE_CRC_FOLD 1
#endif

__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const unsigned char *p, size_t n, int fold) {
    /* to 8-byte alignment: a TFRecord's data starts 4 bytes off it (one
    ** crc32 of 4 bytes, not four of 1: each costs its latency in the chain) */
    if (((uintptr_t)p & 3) == 0 && ((uintptr_t)p & 7) && n >= 4) {
        uint32_t w;
        memcpy(&w, p, 4);
        c = _mm_crc32_u32(c, w);
        p += 4;
        n -= 4;
    }
    while (n && ((uintptr_t)p & 7)) { c = _mm_crc32_u8(c, *p++); n--; }
#if defined(__x86_64__)
    if (n >= 256 && fold) {
        pthread_once(&fold_once, fold_init);
        if (fold_ok) {
            size_t used;
            c = crc_fold(c, p, n, &used);
            p += used;
            n -= used;
        }
    }
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
    if (n >= 4) {
        uint32_t w;
        memcpy(&w, p, 4);
        c = _mm_crc32_u32(c, w);
        p += 4;
        n -= 4;
    }
    while (n--) c = _mm_crc32_u8(c, *p++);
    return c;
}
#define HAVE_CRC_HW 1
#endif

uint32_t ltf_crc32c_path(int path, uint32_t crc, const void *data, size_t n) {
    uint32_t c = ~crc;
    const unsigned char *p = data;
    if (!n) return crc;
#ifdef HAVE_CRC_HW
    if (path < 2 && __builtin_cpu_supports("sse4.2")) return ~crc_hw(c, p, n, path == 0);
#endif
    pthread_once(&soft_once, soft_init);
    c = crc_soft(&soft_T, c, p, n);
    return ~c;
}

uint32_t ltf_crc32c(uint32_t crc, const void *data, size_t n) { return ltf_crc32c_path(0, crc, data, n); }
