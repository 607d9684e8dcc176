/*
** ops/optim.c: fused optimizer updates (ltf_ops/optim.h). Stateful, with no
** outputs and no gradient: inputs are the variable and slot handles, then the
** gradient, the learning rate and (Adam) the step. Inference checks every
** handle, that slots and gradient fit the variable, and that the learning
** rate and step are real scalars; it accepts unknown dims (tf.fn).
*/
#include "../op.h"
#include "../variable.h"
#include "../cpu/cpu.h"
#include "../shape.h"

/* Number of handle inputs (variable + slots) for 'def' with attrs 'a'. */
int ltf_optim_nhandles(const ltf_op_def *def, const ltf_attrs *a) {
    switch (def->code) {
    case 0: return 1;                                     /* sgd */
    case 1: return 2;                                     /* momentum */
    case 2: return a && a->i[0] ? 4 : 3;                  /* adam (+ vhat) */
    case 3: return 2 + (a && a->i[0] ? 1 : 0) + (a && a->i[1] ? 1 : 0); /* rmsprop */
    default: return 2;                                    /* adagrad */
    }
}

/* Number of scalar inputs after the gradient. */
static int nscalars(const ltf_op_def *def) { return def->code == 2 ? 2 : 1; }

static int real(ltf_dtype dt) {
    return dt == LTF_DTYPE_FLOAT32 || dt == LTF_DTYPE_FLOAT64 || dt == LTF_DTYPE_INT32 || dt == LTF_DTYPE_INT64;
}

static ltf_status infer_apply(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    int nh = ltf_optim_nhandles(def, a);
    int want = nh + 1 + nscalars(def);
    if (nin != want)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: expected %d inputs (%d handles, gradient, %s), got %d",
                        def->name, want, nh, def->code == 2 ? "learning rate, step" : "learning rate", nin);
    ltf_variable *var = NULL;
    for (int i = 0; i < nh; i++) {
        if (in[i]->dtype != LTF_DTYPE_RESOURCE)
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: input %d must be a variable handle (resource), got %s",
                            def->name, i + 1, ltf_dtype_name(in[i]->dtype));
        ltf_variable *v = ltf_variable_of(in[i]);
        if (!v)
            return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "%s: the handle of input %d is not bound to a variable",
                            def->name, i + 1);
        if (i == 0) {
            var = v;
            if (v->dtype != LTF_DTYPE_FLOAT32 && v->dtype != LTF_DTYPE_FLOAT64 && !ltf_dtype_is_half(v->dtype))
                return ltf_fail(ctx, LTF_ERR_TYPE, "%s: variable '%s' has dtype %s; only float32, float64, "
                                "float16 and bfloat16 variables can be optimized", def->name, v->name,
                                ltf_dtype_name(v->dtype));
        } else {
            ltf_status st = ltf_variable_check(ctx, v, def->name, var->dtype, var->rank, var->dims);
            if (st != LTF_OK) return st;
        }
    }
    ltf_tensor *g = in[nh];
    ltf_status st = ltf_variable_check(ctx, var, def->name, g->dtype, g->rank, g->dims);
    if (st != LTF_OK) return st;
    for (int i = nh + 1; i < nin; i++) {
        const char *what = i == nh + 1 ? "learning rate" : "step";
        if (!real(in[i]->dtype))
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: the %s must be a real number, got dtype %s", def->name, what,
                            ltf_dtype_name(in[i]->dtype));
        if (in[i]->rank > 0 && !(in[i]->rank == 1 && in[i]->dims[0] == 1)) {
            char b[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the %s must be a scalar, got shape %s", def->name,
                            what, ltf_shape_str(in[i]->rank, in[i]->dims, b, sizeof b));
        }
    }
    *nout = 0;
    return LTF_OK;
}

#define CPU(k) { [LTF_DEVICE_CPU] = k }
#define ST (LTF_OP_STATEFUL | LTF_OP_RESOURCE | LTF_OP_NOT_DIFFERENTIABLE)

LTF_INTERNAL const ltf_op_def ltf_opdef_apply_sgd = {
    "apply_sgd", 3, 3, ST, 0, infer_apply, CPU(ltf_cpu_optim_apply), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_apply_momentum = {
    "apply_momentum", 4, 4, ST, 1, infer_apply, CPU(ltf_cpu_optim_apply), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_apply_adam = {
    "apply_adam", 6, 7, ST, 2, infer_apply, CPU(ltf_cpu_optim_apply), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_apply_rmsprop = {
    "apply_rmsprop", 4, 6, ST, 3, infer_apply, CPU(ltf_cpu_optim_apply), NULL };
LTF_INTERNAL const ltf_op_def ltf_opdef_apply_adagrad = {
    "apply_adagrad", 4, 4, ST, 4, infer_apply, CPU(ltf_cpu_optim_apply), NULL };
