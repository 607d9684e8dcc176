/*
** cuda/kernels/philox.cuh: the counter-based generator of the device's
** random ops: Philox4x32-10 (Salmon et al., "Parallel Random Numbers: As
** Easy as 1, 2, 3", SC11; the generator of cuRAND's and TensorFlow's GPU
** kernels), and the conversions of its 32-bit words into uniform and
** normal values. A block is a pure function of (key, counter), so every
** output index computes its own values, in any order, on any device: a
** launch is deterministic.
**
** Counter layout of an op: the low 64 bits are (s << 16) | r, the stream
** s (an element, or a block of elements) and its round r (rejection loops
** draw rounds 0, 1, ...: 65536 blocks of 4 words per stream); the high 64
** bits are the op's counter (the 'counter' attribute of an op-level or
** stateless seed, 0 for the context's generator). Streams are below 2^48
** (elements of one tensor).
*/
#ifndef LTF_CU_PHILOX_CUH
#define LTF_CU_PHILOX_CUH

#include "common.cuh"

namespace ltf_cu {

/* One Philox4x32-10 block: the counter 'c' encrypted under the key (k0, k1)
** in place (ten rounds, the key bumped by the Weyl constants between them). */
LTF_HD void philox4x32_10(uint32_t c[4], uint32_t k0, uint32_t k1) {
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
        c[1] = (uint32_t)p1;
        c[3] = (uint32_t)p0;
        c[0] = n0;
        c[2] = n2;
    }
}

/* An op's generator: its key and the high half of its counter. */
struct Philox {
    uint32_t k0, k1, c2, c3;
};

LTF_HD Philox philox_make(uint64_t key, uint64_t counter) {
    Philox g = { (uint32_t)key, (uint32_t)(key >> 32), (uint32_t)counter, (uint32_t)(counter >> 32) };
    return g;
}

/* The four words of round 'r' of stream 's'. */
LTF_HD void philox_block(const Philox &g, uint64_t s, uint32_t r, uint32_t out[4]) {
    uint64_t lo = (s << 16) | (r & 0xffffu);
    out[0] = (uint32_t)lo;
    out[1] = (uint32_t)(lo >> 32);
    out[2] = g.c2;
    out[3] = g.c3;
    philox4x32_10(out, g.k0, g.k1);
}

/* The words of one stream in order, a block at a time (rejection loops). */
struct Stream {
    Philox g;
    uint64_t s;
    uint32_t round;
    int pos;
    uint32_t buf[4];
};

LTF_HD void stream_init(Stream &t, const Philox &g, uint64_t s) {
    t.g = g;
    t.s = s;
    t.round = 0;
    t.pos = 4;
}
LTF_HD uint32_t stream_next32(Stream &t) {
    if (t.pos == 4) {
        philox_block(t.g, t.s, t.round++, t.buf);
        t.pos = 0;
    }
    return t.buf[t.pos++];
}
LTF_HD uint64_t stream_next64(Stream &t) {
    uint64_t hi = stream_next32(t);
    return (hi << 32) | stream_next32(t);
}
/* Whether the stream has used up its 65536 rounds (a rejection loop stops). */
LTF_HD bool stream_spent(const Stream &t) { return t.round > 0xffffu; }

/* {==== Words to values */
/* [0, 1) from the top 24 bits of a word / the top 53 bits of two. */
LTF_HD float unit24(uint32_t w) { return (float)(w >> 8) * 5.9604644775390625e-08f; }
LTF_HD double unit53(uint64_t w) { return (double)(w >> 11) * 1.1102230246251565e-16; }
/* (0, 1]: a logarithm's argument. */
LTF_HD float unit24_open(uint32_t w) { return (float)((w >> 8) + 1) * 5.9604644775390625e-08f; }
LTF_HD double unit53_open(uint64_t w) { return (double)((w >> 11) + 1) * 1.1102230246251565e-16; }

/* Box-Muller: two standard normals from two words (float) or two 64-bit
** draws (double). */
LTF_HD void box_muller(uint32_t a, uint32_t b, float &z0, float &z1) {
    float rad = sqrtf(-2.0f * logf(unit24_open(a))), th = 6.28318530717958648f * unit24(b);
    z0 = rad * cosf(th);
    z1 = rad * sinf(th);
}
LTF_HD void box_muller(uint64_t a, uint64_t b, double &z0, double &z1) {
    double rad = sqrt(-2.0 * log(unit53_open(a))), th = 6.283185307179586 * unit53(b);
    z0 = rad * cos(th);
    z1 = rad * sin(th);
}
LTF_HD uint64_t join64(uint32_t hi, uint32_t lo) { return ((uint64_t)hi << 32) | lo; }
/* }==== */

}  // namespace ltf_cu

#endif
