/*
** ops/state.c: variable ops (read, assign, assign_add, assign_sub).
** All are stateful (never pruned, merged or folded; run in program order).
** Reads are differentiable: the gradient flows to the handle, which is what
** tapes watch for a variable.
*/
#include "../op.h"
#include "../variable.h"
#include "../cpu/cpu.h"

static ltf_status check_handle(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, ltf_variable **out) {
    if (in[0]->dtype != LTF_DTYPE_RESOURCE)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: input 1 must be a variable handle (resource), got %s", def->name,
                        ltf_dtype_name(in[0]->dtype));
    *out = ltf_variable_of(in[0]);
    if (!*out)
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "%s: the variable handle is not bound to a variable",
                        def->name);
    return LTF_OK;
}

static ltf_status infer_read(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    ltf_variable *v;
    ltf_status st = check_handle(ctx, def, in, &v);
    if (st != LTF_OK) return st;
    out->dtype = v->dtype;
    out->rank = v->rank;
    for (int i = 0; i < v->rank; i++) out->dims[i] = v->dims[i];
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_assign(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                               const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    ltf_variable *v;
    ltf_status st = check_handle(ctx, def, in, &v);
    if (st != LTF_OK) return st;
    if (def->code != 0 && v->dtype != LTF_DTYPE_FLOAT32 && v->dtype != LTF_DTYPE_FLOAT64 &&
        !ltf_dtype_is_half(v->dtype) && v->dtype != LTF_DTYPE_INT32 && v->dtype != LTF_DTYPE_INT64 && v->dtype != LTF_DTYPE_UINT8)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: variable '%s' of dtype %s cannot be added to", def->name, v->name,
                        ltf_dtype_name(v->dtype));
    *nout = 0;
    return ltf_variable_check(ctx, v, def->name, in[1]->dtype, in[1]->rank, in[1]->dims);
}

/* d(read)/d(handle) is the incoming gradient itself: the tape maps the
** handle's id to it, which is how gradients reach variables. */
static ltf_status grad_read(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                            const ltf_attrs *a, ltf_tensor *const *out, int nout, ltf_tensor *const *dout,
                            ltf_tensor **din) {
    din[0] = ltf_tensor_retain(dout[0]);
    return LTF_OK;
}

#define CPU(k) { [LTF_DEVICE_CPU] = k }
#define ST (LTF_OP_STATEFUL | LTF_OP_RESOURCE)

LTF_INTERNAL const ltf_op_def ltf_opdef_read_variable = {
    "read_variable", 1, 1, ST | LTF_OP_KERNEL_ALLOCATES | LTF_OP_READS_VARIABLE, 0, infer_read,
    CPU(ltf_cpu_state_read), grad_read };
LTF_INTERNAL const ltf_op_def ltf_opdef_assign_variable = {
    "assign_variable", 2, 2, ST | LTF_OP_NOT_DIFFERENTIABLE, 0, infer_assign, CPU(ltf_cpu_state_assign), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_assign_add_variable = {
    "assign_add_variable", 2, 2, ST | LTF_OP_NOT_DIFFERENTIABLE, LTF_OP_ADD, infer_assign,
    CPU(ltf_cpu_state_assign), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_assign_sub_variable = {
    "assign_sub_variable", 2, 2, ST | LTF_OP_NOT_DIFFERENTIABLE, LTF_OP_SUB, infer_assign,
    CPU(ltf_cpu_state_assign), NULL };
