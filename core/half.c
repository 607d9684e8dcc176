/*
** half.c: float16 and bfloat16 (ltf.h, half.h). The public conversions,
** and the one place where ops run on them when a kernel does not take
** them: TensorFlow computes float16/bfloat16 on the CPU in float32, and so
** does luatf, generically, for every kernel (ltf_half_run), rather than
** with a half variant of each one.
*/
#include <stdlib.h>
#include "half.h"
#include "device.h"
#include "variable.h"
#include "cpu/cpu.h"

uint16_t ltf_float16_from_double(double x) { return ltf_half_f16(x); }
uint16_t ltf_bfloat16_from_double(double x) { return ltf_half_bf16(x); }
float ltf_float16_to_float(uint16_t h) { return ltf_half_f16_float(h); }
float ltf_bfloat16_to_float(uint16_t h) { return ltf_half_bf16_float(h); }

int ltf_half_cpu_native(ltf_op_id op) {
    switch (op) {
    /* elementwise moves and the conversion itself */
    case LTF_OP_CAST: case LTF_OP_IDENTITY: case LTF_OP_STOP_GRADIENT: case LTF_OP_SELECT:
    /* movement (every op but the segment sum, which adds) */
    case LTF_OP_RESHAPE: case LTF_OP_TRANSPOSE: case LTF_OP_EXPAND_DIMS: case LTF_OP_SQUEEZE:
    case LTF_OP_CONCAT: case LTF_OP_STACK: case LTF_OP_SPLIT: case LTF_OP_UNSTACK: case LTF_OP_SLICE:
    case LTF_OP_STRIDED_SLICE: case LTF_OP_GATHER: case LTF_OP_ONE_HOT: case LTF_OP_TILE: case LTF_OP_PAD:
    case LTF_OP_REVERSE: case LTF_OP_BROADCAST_TO: case LTF_OP_STRIDED_SLICE_GRAD: case LTF_OP_BROADCAST_LIKE:
    case LTF_OP_RESHAPE_LIKE: case LTF_OP_SPLIT_LIKE: case LTF_OP_SHAPE: case LTF_OP_SIZE:
    /* indexing that only moves elements */
    case LTF_OP_GATHER_ND: case LTF_OP_TENSOR_SCATTER_UPDATE: case LTF_OP_ROLL: case LTF_OP_ENSURE_SHAPE:
    /* variables (assign_add/sub run the add/sub op, which is staged itself),
    ** control flow (runs functions whose ops are staged one by one), tensor arrays */
    case LTF_OP_READ_VARIABLE: case LTF_OP_ASSIGN_VARIABLE: case LTF_OP_ASSIGN_ADD_VARIABLE:
    case LTF_OP_ASSIGN_SUB_VARIABLE: case LTF_OP_COND: case LTF_OP_WHILE: case LTF_OP_CUSTOM_GRADIENT:
    case LTF_OP_TENSOR_ARRAY_WRITE:
    case LTF_OP_TENSOR_ARRAY_UNWRITE: case LTF_OP_TENSOR_ARRAY_READ:
    case LTF_OP_RANDOM_SHUFFLE:
        return 1;
    default: return 0;
    }
}

/* {==== Staging through float32 */
#define STACK_N 8

/* Ops whose attribute i[0] names their output's dtype (ltf_ops/init_ops.h,
** random.h): staged, they are told float32 (the CPU kernels read the dtype
** from their output tensor, device kernels may check the attribute). */
static int dtype_attr_op(ltf_op_id op) {
    switch (op) {
    case LTF_OP_FILL: case LTF_OP_RANGE: case LTF_OP_LINSPACE: case LTF_OP_EYE: case LTF_OP_RANDOM_NORMAL:
    case LTF_OP_RANDOM_UNIFORM: case LTF_OP_TRUNCATED_NORMAL:
        return 1;
    default: return 0;
    }
}

/* 'src' converted into 'dst' (same shape, same device) by the device's
** cast kernel: float16/bfloat16 <-> float32 either way. */
static ltf_status convert(ltf_ctx *ctx, ltf_kernel_fn cast, ltf_tensor *src, ltf_tensor *dst) {
    if (dst->numel == 0) return LTF_OK;
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.i[0] = dst->dtype;
    return cast(ctx, ltf_op_get(LTF_OP_CAST), &src, 1, &at, &dst, 1);
}

/* A new tensor of dtype 'dt' with t's shape on t's device, holding t's values converted. */
static ltf_tensor *converted(ltf_ctx *ctx, ltf_kernel_fn cast, ltf_tensor *t, ltf_dtype dt, const char *what) {
    ltf_tensor *c = ltf_tensor_empty_on(ctx, dt, t->rank, t->dims, t->storage->device, t->storage->ordinal, what);
    if (c && convert(ctx, cast, t, c) != LTF_OK) {
        ltf_tensor_release(c);
        return NULL;
    }
    return c;
}

static ltf_variable *half_variable(const ltf_tensor *t) {
    ltf_variable *v = t->dtype == LTF_DTYPE_RESOURCE ? ltf_variable_of(t) : NULL;
    return v && v->value && v->value->storage && ltf_half_is(v->value->dtype) ? v : NULL;
}

static int involves_half(ltf_tensor *const *in, int nin, const ltf_type *types, int n) {
    for (int i = 0; i < nin; i++)
        if (ltf_half_is(in[i]->dtype) || half_variable(in[i])) return 1;
    for (int k = 0; k < n; k++)
        if (ltf_half_is(types[k].dtype)) return 1;
    return 0;
}

int ltf_half_device_can(const ltf_backend *be, ltf_op_id op, ltf_tensor *const *in, int nin, const ltf_type *types,
                        int n) {
    if (!involves_half(in, nin, types, n)) return 1;
    if (!be->takes_half) return 0;
    if (be->takes_half(be->bctx, op)) return 1;
    return be->takes_half(be->bctx, LTF_OP_CAST) && be->kernel && be->kernel(be->bctx, LTF_OP_CAST);
}

ltf_status ltf_half_run(ltf_ctx *ctx, const ltf_op_def *def, ltf_op_id op, ltf_kernel_fn kernel,
                        ltf_device_type type, int ordinal, ltf_tensor *const *in, int nin, const ltf_attrs *a,
                        const ltf_type *types, ltf_tensor **out, int n) {
    if (!involves_half(in, nin, types, n) || (def->flags & LTF_OP_VIEW)) return kernel(ctx, def, in, nin, a, out, n);
    ltf_kernel_fn cast;
    if (type == LTF_DEVICE_CPU) {
        if (ltf_half_cpu_native(op)) return kernel(ctx, def, in, nin, a, out, n);
        cast = ltf_cpu_elementwise_cast;
    } else {
        const ltf_backend *be = ctx->devices[ordinal];
        if (be->takes_half && be->takes_half(be->bctx, op)) return kernel(ctx, def, in, nin, a, out, n);
        cast = be->kernel && be->takes_half && be->takes_half(be->bctx, LTF_OP_CAST)
                   ? (ltf_kernel_fn)be->kernel(be->bctx, LTF_OP_CAST) : NULL;
        if (!cast) {
            char name[LTF_DEVICE_STR];
            return ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "%s: %s cannot convert float16/bfloat16 to float32",
                            def->name, ltf_device_str(type, ordinal, name));
        }
    }
    ltf_attrs f32_attrs;
    if (a && dtype_attr_op(op) && ltf_half_is((ltf_dtype)a->i[0])) {
        f32_attrs = *a;
        f32_attrs.i[0] = LTF_DTYPE_FLOAT32;
        a = &f32_attrs;
    }
    int alloc = n > 0 && !out[0];   /* the kernel allocates its outputs (LTF_OP_KERNEL_ALLOCATES, not given them) */
    ltf_tensor *stack_in[STACK_N], *stack_out[STACK_N], *stack_old[STACK_N];
    ltf_tensor **sin = nin <= STACK_N ? stack_in : calloc((size_t)nin, sizeof *sin);
    ltf_tensor **old = nin <= STACK_N ? stack_old : calloc((size_t)nin, sizeof *old);   /* swapped variables' values */
    ltf_tensor **sout = n <= STACK_N ? stack_out : calloc((size_t)(n ? n : 1), sizeof *sout);
    ltf_status st = LTF_OK;
    int ni = 0, no = 0;
    if (!sin || !old || !sout) {
        st = ltf_fail_oom(ctx, def->name, 0);
        goto done;
    }
    for (; ni < nin && st == LTF_OK; ni++) {
        ltf_tensor *t = in[ni];
        ltf_variable *v = half_variable(t);
        old[ni] = NULL;
        if (v) {   /* the variable computes on a float32 copy of its value during the call */
            ltf_tensor *c = converted(ctx, cast, v->value, LTF_DTYPE_FLOAT32, def->name);
            if (!c) st = ctx->last_status;
            else {
                old[ni] = ltf_tensor_retain(v->value);
                ltf_variable_set(v, c);
            }
        }
        sin[ni] = ltf_half_is(t->dtype) ? converted(ctx, cast, t, LTF_DTYPE_FLOAT32, def->name) : ltf_tensor_retain(t);
        if (!sin[ni]) st = ctx->last_status;
    }
    for (; no < n && st == LTF_OK; no++) {
        const ltf_type *ty = &types[no];
        if (alloc) sout[no] = NULL;
        else if (!ltf_half_is(ty->dtype)) sout[no] = ltf_tensor_retain(out[no]);
        else if (!(sout[no] = ltf_tensor_empty_on(ctx, LTF_DTYPE_FLOAT32, ty->rank, ty->dims, type, ordinal, def->name)))
            st = ctx->last_status;
    }
    if (st == LTF_OK) st = kernel(ctx, def, sin, nin, a, sout, n);
    for (int k = 0; k < n && st == LTF_OK; k++) {   /* outputs rounded back */
        if (!ltf_half_is(types[k].dtype) || !sout[k] || ltf_half_is(sout[k]->dtype)) continue;
        if (alloc) {
            ltf_tensor *h = converted(ctx, cast, sout[k], types[k].dtype, def->name);
            if (!h) st = ctx->last_status;
            else {
                ltf_tensor_release(sout[k]);
                sout[k] = h;
            }
        } else {
            st = convert(ctx, cast, sout[k], out[k]);
        }
    }
    /* variables' values rounded back: all made first, then all set */
    for (int i = 0; i < ni && st == LTF_OK; i++) {
        ltf_tensor_release(sin[i]);
        sin[i] = NULL;
        if (old[i] && !(sin[i] = converted(ctx, cast, ltf_variable_of(in[i])->value, old[i]->dtype, def->name)))
            st = ctx->last_status;
    }
    for (int i = 0; i < ni && st == LTF_OK; i++)
        if (old[i]) {
            ltf_variable_set(ltf_variable_of(in[i]), sin[i]);
            sin[i] = NULL;
            ltf_tensor_release(old[i]);
            old[i] = NULL;
        }
    if (alloc && st == LTF_OK)
        for (int k = 0; k < n; k++) {
            out[k] = sout[k];
            sout[k] = NULL;
        }
done:
    for (int i = 0; i < ni; i++) {
        if (old[i]) {   /* failed: the variable gets the value it had */
            ltf_variable_set(ltf_variable_of(in[i]), old[i]);
            old[i] = NULL;
        }
        ltf_tensor_release(sin[i]);
    }
    for (int k = 0; k < no; k++) ltf_tensor_release(sout[k]);
    if (sin && sin != stack_in) free(sin);
    if (old && old != stack_old) free(old);
    if (sout && sout != stack_out) free(sout);
    return st;
}
/* }==== */
