/*
** half.h: float16 (IEEE 754 binary16) and bfloat16 (ltf.h): conversions
** between their 16-bit patterns and float/double, inline for kernels'
** loops, and the float32 staging that runs ops on them (half.c).
**
** The conversions are plain bit manipulation, so every compiler and the
** device bodies (core/cuda/kernels/common.cuh, the same algorithm in C++)
** round alike: to nearest, ties to even; beyond the largest finite value
** to infinity; NaN stays a quiet NaN of the same sign.
*/
#ifndef LTF_HALF_H
#define LTF_HALF_H

#include <string.h>
#include "op.h"
#include "ltf_backend.h"

static inline int ltf_half_is(ltf_dtype dt) { return dt == LTF_DTYPE_FLOAT16 || dt == LTF_DTYPE_BFLOAT16; }

/* The pattern nearest to 'x' in a format of 'ebits' exponent and 'mbits'
** stored mantissa bits (float16: 5, 10; bfloat16: 8, 7). */
static inline uint16_t ltf_half_narrow(double x, int ebits, int mbits) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    uint16_t sign = (uint16_t)((b >> 63) << (ebits + mbits));
    uint32_t expmax = (1u << ebits) - 1;
    b &= ~((uint64_t)1 << 63);
    if (b >= (uint64_t)0x7ff << 52) {                  /* infinity or NaN */
        if (b == (uint64_t)0x7ff << 52) return (uint16_t)(sign | (expmax << mbits));
        uint32_t payload = (uint32_t)(b >> (52 - mbits)) & ((1u << mbits) - 1);
        return (uint16_t)(sign | (expmax << mbits) | (1u << (mbits - 1)) | payload);
    }
    int bias = (1 << (ebits - 1)) - 1, emin = 1 - bias;
    int e = (int)(b >> 52) - 1023;
    if (e < emin - mbits - 1) return sign;            /* below half the smallest subnormal (or a double subnormal) */
    uint64_t mant = (b & (((uint64_t)1 << 52) - 1)) | ((uint64_t)1 << 52);
    int shift = 52 - mbits + (e < emin ? emin - e : 0);
    uint64_t q = mant >> shift, rem = mant & (((uint64_t)1 << shift) - 1), half = (uint64_t)1 << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    /* a normal result: the exponent field plus q (whose bit 'mbits' is the
    ** implicit one, so a carry out of the mantissa moves the exponent up);
    ** a subnormal one: q alone (rounding up to the smallest normal included) */
    uint64_t bits = e >= emin ? ((uint64_t)(e + bias - 1) << mbits) + q : q;
    if (bits >= (uint64_t)expmax << mbits) return (uint16_t)(sign | (expmax << mbits));
    return (uint16_t)(sign | bits);
}

static inline uint16_t ltf_half_f16(double x) { return ltf_half_narrow(x, 5, 10); }
static inline uint16_t ltf_half_bf16(double x) { return ltf_half_narrow(x, 8, 7); }

/* The value of a float16 pattern (exact in float). */
static inline float ltf_half_f16_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, bits;
    if (e == 0x1f) bits = sign | 0x7f800000u | (m << 13);
    else if (e != 0) bits = sign | ((e + 112) << 23) | (m << 13);
    else if (m == 0) bits = sign;
    else {                                  /* subnormal: m * 2^-24, normalized */
        e = 113;
        while (!(m & 0x400u)) {
            m <<= 1;
            e--;
        }
        bits = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* The value of a bfloat16 pattern (exact in float). */
static inline float ltf_half_bf16_float(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Runs 'kernel' (op 'op''s, of device 'type':'ordinal': the host's CPU
** kernel, or a device backend's) with outputs 'out' typed 'types'. When the
** op's tensors include float16/bfloat16 (an input, an output's inferred
** type, or the value of a variable behind an input handle) and the kernel
** does not take them (host: ltf_half_cpu_native; a device: its backend's
** 'takes_half'), it runs on float32 copies made on the same device (with
** the device's cast kernel): half inputs widened, half variable values
** swapped for float32 copies during the call, half outputs computed into
** float32 buffers, then every one of those rounded back to its half dtype
** (outputs into 'out', variables given new values). Outputs of other
** dtypes (argmax's indices, comparisons' bools) are written by the kernel
** as they are. On failure nothing changes: variables keep their values.
** Outputs passed as NULL (LTF_OP_KERNEL_ALLOCATES ops' kernels allocate
** them) are set here as the kernel set them (rounded when their type is
** half). Ops whose attribute i[0] names the output's dtype (fill, range,
** linspace, eye, the random ops) get it as float32; cast is native. */
LTF_INTERNAL ltf_status ltf_half_run(ltf_ctx *ctx, const ltf_op_def *def, ltf_op_id op, ltf_kernel_fn kernel,
                                     ltf_device_type type, int ordinal, ltf_tensor *const *in, int nin,
                                     const ltf_attrs *a, const ltf_type *types, ltf_tensor **out, int n);

/* Whether device 'be' can run its kernel of 'op' on these tensors: none is
** float16/bfloat16, or the kernel takes them, or the device converts them
** (else the op runs on the host over copies: soft placement). */
LTF_INTERNAL int ltf_half_device_can(const ltf_backend *be, ltf_op_id op, ltf_tensor *const *in, int nin,
                                     const ltf_type *types, int n);

/* Whether op 'op''s CPU kernel takes float16/bfloat16 tensors as they are
** (it moves elements by their size, or runs functions, or only reads
** shapes): no float32 staging. */
LTF_INTERNAL int ltf_half_cpu_native(ltf_op_id op);

#endif
