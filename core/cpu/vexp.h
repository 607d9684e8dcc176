/*
** cpu/vexp.h: a vectorizable float32 exp (Cephes-style polynomial, about
** 1 ulp): no calls or branches, so loops over it vectorize, unlike libm's
** expf. Shared by the elementwise kernels (exp, tanh, sigmoid) and softmax.
*/
#ifndef LTF_CPU_VEXP_H
#define LTF_CPU_VEXP_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline float ltf_cpu_vexpf(float x) {
    /* minss/maxss forms: vectorizable. Up to the largest float whose exp
    ** rounds to a finite value (88.7228317); from 88.7228394 on, 2^128 p
    ** overflows to inf by itself. */
    float c = x < 88.72283935546875f ? x : 88.72283935546875f;
    c = c > -104.0f ? c : -104.0f;
    float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;   /* round(c / ln 2) */
    float r = c - n * 0.693359375f + n * 2.12194440e-4f;                  /* c - n ln 2, two parts */
    float p = ((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r +
                4.1665795894e-2f) * r + 1.6666665459e-1f) * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t ni = (int32_t)n, n1 = ni >> 1, n2 = ni - n1;   /* 2^n in two factors: denormal results */
    int32_t b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    float y = p * s1 * s2;
    y = x > 88.72283935546875f ? INFINITY : y;
    y = x < -103.97208f ? 0.0f : y;
    return x != x ? x : y;
}

#endif
