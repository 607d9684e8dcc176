/*
** kernel_check.h: what the host-build kernel tests (test_cuda_kernels*.cpp)
** share: random inputs, the comparison with tolerances, and run_both, which
** runs an op on the CPU backend and through the host-built device kernel
** (libltf_gpu_host.a) and compares. Each test file defines 'ctx' through
** KERNEL_CHECK_MAIN's context; the functions are static (one file each).
*/
#ifndef LTF_KERNEL_CHECK_H
#define LTF_KERNEL_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
extern "C" {
#include "op.h"
#include "../../cuda/host.h"
}
#include "../check.h"

static ltf_ctx *ctx;
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static inline uint64_t rnd() {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static inline double uni() { return (double)(rnd() >> 11) / 9007199254740992.0; }

/* {==== Inputs */
enum { GEN_PLAIN, GEN_POS, GEN_NONZERO, GEN_SMALL, GEN_UNIT, GEN_SPECIAL };

/* A random tensor: floats in [-3, 3] (GEN_POS: (0, 4], GEN_UNIT: [-1, 1],
** GEN_SPECIAL: some NaN/inf/0/-0), integers in [-20, 20] (GEN_NONZERO
** without 0, GEN_SMALL: shift counts in [-2, 70]), uint8 0..255, bool 0/1. */
static inline ltf_tensor *rand_tensor(ltf_dtype dt, std::vector<int64_t> dims, int gen = GEN_PLAIN) {
    ltf_tensor *t = ltf_tensor_new(ctx, dt, (int)dims.size(), dims.data());
    void *p = ltf_tensor_data(t);
    int64_t n = ltf_tensor_num_elements(t);
    for (int64_t i = 0; i < n; i++) {
        double u = uni();
        double f = gen == GEN_POS ? 4 * u + 1e-3 : gen == GEN_UNIT ? 2 * u - 1 : 6 * u - 3;
        if (gen == GEN_SPECIAL) {
            static const double sp[] = { NAN, INFINITY, -INFINITY, 0.0, -0.0, 0.5, -2.5, 1.5 };
            if (rnd() % 3 == 0) f = sp[rnd() % 8];
        }
        int64_t k = (int64_t)(rnd() % 41) - 20;
        if (gen == GEN_NONZERO && k == 0) k = 7;
        if (gen == GEN_SMALL) k = (int64_t)(rnd() % 73) - 2;
        switch (dt) {
        case LTF_DTYPE_FLOAT32: ((float *)p)[i] = (float)f; break;
        case LTF_DTYPE_FLOAT64: ((double *)p)[i] = f; break;
        case LTF_DTYPE_FLOAT16: ((uint16_t *)p)[i] = ltf_float16_from_double(f); break;
        case LTF_DTYPE_BFLOAT16: ((uint16_t *)p)[i] = ltf_bfloat16_from_double(f); break;
        case LTF_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)(gen == GEN_PLAIN && rnd() % 17 == 0 ? (int64_t)INT32_MIN + k * 0 : k); break;
        case LTF_DTYPE_INT64: ((int64_t *)p)[i] = gen == GEN_PLAIN && rnd() % 17 == 0 ? INT64_MIN : k; break;
        case LTF_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)(gen == GEN_NONZERO ? 1 + rnd() % 255 : gen == GEN_SMALL ? rnd() % 12 : rnd() % 256); break;
        default: ((uint8_t *)p)[i] = (uint8_t)(rnd() & 1); break;
        }
    }
    return t;
}
static inline ltf_tensor *zeros(ltf_dtype dt, std::vector<int64_t> dims) {
    return ltf_tensor_new(ctx, dt, (int)dims.size(), dims.data());
}
/* }==== */

/* {==== Comparison */
static inline double tol_rel(ltf_dtype dt) { return dt == LTF_DTYPE_FLOAT32 ? 4e-6 : 1e-12; }

static inline int compare(const char *what, const ltf_tensor *want, const ltf_tensor *got, double rtol, double atol) {
    if (ltf_tensor_dtype(want) != ltf_tensor_dtype(got) || ltf_tensor_num_elements(want) != ltf_tensor_num_elements(got)) {
        fprintf(stderr, "%s: dtype or size differs\n", what);
        return 0;
    }
    int64_t n = ltf_tensor_num_elements(want);
    ltf_dtype dt = ltf_tensor_dtype(want);
    const void *a = ltf_tensor_data(want), *b = ltf_tensor_data(got);
    for (int64_t i = 0; i < n; i++) {
        double x, y;
        switch (dt) {
        case LTF_DTYPE_FLOAT32: x = ((const float *)a)[i]; y = ((const float *)b)[i]; break;
        case LTF_DTYPE_FLOAT64: x = ((const double *)a)[i]; y = ((const double *)b)[i]; break;
        case LTF_DTYPE_FLOAT16:
            x = ltf_float16_to_float(((const uint16_t *)a)[i]);
            y = ltf_float16_to_float(((const uint16_t *)b)[i]);
            break;
        case LTF_DTYPE_BFLOAT16:
            x = ltf_bfloat16_to_float(((const uint16_t *)a)[i]);
            y = ltf_bfloat16_to_float(((const uint16_t *)b)[i]);
            break;
        case LTF_DTYPE_INT32:
            if (((const int32_t *)a)[i] == ((const int32_t *)b)[i]) continue;
            fprintf(stderr, "%s: [%lld] want %d got %d\n", what, (long long)i, ((const int32_t *)a)[i], ((const int32_t *)b)[i]);
            return 0;
        case LTF_DTYPE_INT64:
            if (((const int64_t *)a)[i] == ((const int64_t *)b)[i]) continue;
            fprintf(stderr, "%s: [%lld] want %lld got %lld\n", what, (long long)i, (long long)((const int64_t *)a)[i],
                    (long long)((const int64_t *)b)[i]);
            return 0;
        case LTF_DTYPE_BOOL:   /* any nonzero byte is true (the CPU's is_inf stores isinf()'s -1 as 255) */
            if ((((const uint8_t *)a)[i] != 0) == (((const uint8_t *)b)[i] != 0)) continue;
            fprintf(stderr, "%s: [%lld] want %d got %d\n", what, (long long)i, ((const uint8_t *)a)[i], ((const uint8_t *)b)[i]);
            return 0;
        default:
            if (((const uint8_t *)a)[i] == ((const uint8_t *)b)[i]) continue;
            fprintf(stderr, "%s: [%lld] want %d got %d\n", what, (long long)i, ((const uint8_t *)a)[i], ((const uint8_t *)b)[i]);
            return 0;
        }
        if (x != x && y != y) continue;
        if (x == y) continue;
        if (fabs(x - y) <= atol + rtol * fabs(x)) continue;
        fprintf(stderr, "%s: [%lld] want %.17g got %.17g\n", what, (long long)i, x, y);
        return 0;
    }
    return 1;
}

/* Run 'op' on the CPU and through the host-built device kernel; compare. */
static inline void run_both(const char *what, ltf_op_id op, std::vector<ltf_tensor *> in, const ltf_attrs *a,
                     double rtol = -1, double atol = 0) {
    ltf_tensor *want = NULL;
    int nout = 0;
    ltf_status s1 = ltf_op_run(ctx, op, in.data(), (int)in.size(), a, &want, 1, &nout);
    const void *k = ltf_gpu_host_kernel(op);
    check_count++;
    if (!k) {
        check_failures++;
        fprintf(stderr, "%s: no device kernel\n", what);
    } else if (s1 != LTF_OK) {
        /* the CPU refused: the device kernel must refuse with the same kind
        ** (on an output of the inferred type when there is one) */
        ltf_type ty;
        int nty = 0;
        ltf_tensor *o;
        if (ltf_op_infer(ctx, ltf_op_get(op), in.data(), (int)in.size(), a, &ty, 1, &nty) == LTF_OK && nty == 1)
            o = ltf_tensor_new(ctx, ty.dtype, ty.rank, ty.dims);
        else
            o = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 0, NULL);
        ltf_kernel_fn fn = (ltf_kernel_fn)k;
        ltf_status s2 = fn(ctx, ltf_op_get(op), in.data(), (int)in.size(), a, &o, 1);
        if (s2 != s1) {
            check_failures++;
            fprintf(stderr, "%s: CPU failed (%d) but the device kernel gave %d\n", what, (int)s1, (int)s2);
        }
        ltf_tensor_release(o);
    } else {
        ltf_tensor *got = ltf_tensor_new(ctx, ltf_tensor_dtype(want), ltf_tensor_rank(want), ltf_tensor_dims(want));
        ltf_kernel_fn fn = (ltf_kernel_fn)k;
        ltf_status s2 = fn(ctx, ltf_op_get(op), in.data(), (int)in.size(), a, &got, 1);
        if (s2 != LTF_OK) {
            check_failures++;
            fprintf(stderr, "%s: device kernel failed: %s\n", what, ltf_ctx_error(ctx));
        } else if (!compare(what, want, got, rtol >= 0 ? rtol : tol_rel(ltf_tensor_dtype(want)), atol)) {
            check_failures++;
        }
        ltf_tensor_release(got);
    }
    ltf_tensor_release(want);
    for (ltf_tensor *t : in) ltf_tensor_release(t);
}

/* Optimizer step 'step' of 'op' (attributes 'a', gradient 'g', learning
** rate 0.05) on the CPU's variables behind handles 'hc' and through the
** device kernel 'k' on the variables behind 'hd'; 1 when both ran, else the
** statuses are printed under 'what'. Releases 'g'. */
static inline int optim_step_both(const char *what, ltf_op_id op, const void *k, const ltf_attrs *a,
                                  const std::vector<ltf_tensor *> &hc, const std::vector<ltf_tensor *> &hd,
                                  ltf_tensor *g, int64_t step) {
    ltf_tensor *lr = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 0, NULL);
    *(float *)ltf_tensor_data(lr) = 0.05f;
    ltf_tensor *st = ltf_tensor_new(ctx, LTF_DTYPE_INT64, 0, NULL);
    *(int64_t *)ltf_tensor_data(st) = step;
    std::vector<ltf_tensor *> ic(hc), id(hd);
    for (ltf_tensor *t : { g, lr }) { ic.push_back(t); id.push_back(t); }
    if (op == LTF_OP_APPLY_ADAM) { ic.push_back(st); id.push_back(st); }
    int nout = 0;
    ltf_status s1 = ltf_op_run(ctx, op, ic.data(), (int)ic.size(), a, NULL, 0, &nout);
    ltf_status s2 = ((ltf_kernel_fn)k)(ctx, ltf_op_get(op), id.data(), (int)id.size(), a, NULL, 0);
    if (s1 != LTF_OK || s2 != LTF_OK)
        fprintf(stderr, "%s: step %lld failed: %d %d %s\n", what, (long long)step, (int)s1, (int)s2, ltf_ctx_error(ctx));
    ltf_tensor_release(g);
    ltf_tensor_release(lr);
    ltf_tensor_release(st);
    return s1 == LTF_OK && s2 == LTF_OK;
}

static inline ltf_attrs attrs() {
    ltf_attrs a;
    ltf_attrs_init(&a);
    return a;
}
static const ltf_dtype ALL[] = { LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64, LTF_DTYPE_INT32, LTF_DTYPE_INT64,
                                 LTF_DTYPE_UINT8, LTF_DTYPE_BOOL };
static inline bool is_float(ltf_dtype dt) { return dt == LTF_DTYPE_FLOAT32 || dt == LTF_DTYPE_FLOAT64; }
/* }==== */

#endif
