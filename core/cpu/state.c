/*
** cpu/state.c: variable kernels. A read returns a new tensor sharing the
** value's bytes; an assign writes in place when nothing else holds those
** bytes, and otherwise gives the variable fresh storage (copy-on-write), so a
** value read earlier never changes.
*/
#include <string.h>
#include "cpu.h"
#include "../variable.h"
#include "../storage.h"
#include "../shape.h"
#include "../device.h"

ltf_status ltf_cpu_state_read(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_tensor **out, int nout) {
    ltf_variable *v = ltf_variable_of(in[0]);
    out[0] = ltf_tensor_view(ctx, v->value, v->value->rank, v->value->dims);
    return out[0] ? LTF_OK : ctx->last_status;
}

static int exclusive(const ltf_tensor *t) {
    return !t->shared && !t->storage->shared && t->refs == 1 && t->storage->refs == 1 &&
           (t->storage->inline_data || t->storage->device != LTF_DEVICE_CPU);
}

ltf_status ltf_cpu_state_assign(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                const ltf_attrs *a, ltf_tensor **out, int nout) {
    ltf_variable *v = ltf_variable_of(in[0]);
    ltf_tensor *x = in[1];
    ltf_tensor *moved = NULL;   /* a value on another device than the variable's: copied there */
    const ltf_storage *vs = v->value->storage;
    if (def->code == 0 && (x->storage->device != vs->device || x->storage->ordinal != vs->ordinal)) {
        if (ltf_tensor_to_device(ctx, x, vs->device, vs->ordinal, &moved) != LTF_OK) return ctx->last_status;
        ltf_variable_set(v, moved);
        return LTF_OK;
    }
    if (def->code == 0) {
        ltf_tensor *cur = v->value;
        int same_shape = cur->rank == x->rank && memcmp(cur->dims, x->dims, sizeof(int64_t) * (size_t)x->rank) == 0;
        if (same_shape && exclusive(cur) && x->dtype != LTF_DTYPE_STRING) {
            if (cur->storage->device != LTF_DEVICE_CPU) return ltf_tensor_copy_into(ctx, cur, x);
            memcpy(LTF_DATA(cur), LTF_DATA(x), (size_t)x->numel * ltf_dtype_size(x->dtype));
            return LTF_OK;
        }
        ltf_tensor *n = ltf_tensor_clone(ctx, x);
        if (!n) return ctx->last_status;
        ltf_variable_set(v, n);
        return LTF_OK;
    }
    /* assign_add / assign_sub: compute with the elementwise op, unrecorded */
    ltf_tensor *args[2] = { v->value, x };
    ctx->tapes_paused++;
    void *hook = (void *)ctx->tape_record;
    ctx->tape_record = NULL;
    ltf_tensor *r = ltf_op1(ctx, (ltf_op_id)def->code, args, 2, NULL);
    ctx->tapes_paused--;
    ctx->tape_record = (ltf_status(*)(ltf_ctx *, int, ltf_tensor *const *, int, const ltf_attrs *,
                                      ltf_tensor *const *, int))hook;
    if (!r) return ctx->last_status;
    if (r->rank != v->value->rank || memcmp(r->dims, v->value->dims, sizeof(int64_t) * (size_t)r->rank) != 0) {
        char sa[LTF_SHAPE_BUF], sb[LTF_SHAPE_BUF];
        ltf_tensor_release(r);
        return ltf_variable_check(ctx, v, def->name, x->dtype, x->rank, x->dims) != LTF_OK
                   ? ctx->last_status
                   : ltf_fail(ctx, LTF_ERR_VALUE, "%s: shape mismatch: variable '%s' has shape %s, the value has shape %s",
                              def->name, v->name, ltf_shape_str(v->value->rank, v->value->dims, sa, sizeof sa),
                              ltf_shape_str(x->rank, x->dims, sb, sizeof sb));
    }
    ltf_variable_set(v, r);
    return LTF_OK;
}
