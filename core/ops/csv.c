/*
** ops/csv.c: decode_csv (ltf_ops/csv.h): inference and the CPU kernel,
** which calls the parser of core/csv.c. CPU only: a CUDA build runs it on
** the CPU like the other string ops (no CUDA kernel is registered).
*/
#include <string.h>
#include "../op.h"
#include "../shape.h"
#include "../cpu/cpu.h"
#include "../tensor.h"
#include "ltf_data.h"

#define INFER_ARGS ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin, \
                   const ltf_attrs *a, ltf_type *out, int maxout, int *nout

static ltf_status infer_decode_csv(INFER_ARGS) {
    (void)a;
    char s[LTF_SHAPE_BUF];
    if (in[0]->dtype != LTF_DTYPE_STRING)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'records' has dtype %s, expected string", def->name,
                        ltf_dtype_name(in[0]->dtype));
    if (in[1]->dtype != LTF_DTYPE_INT64 || in[1]->rank != 1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'select_cols' must be an int64 vector", def->name);
    int ncols = nin - 2;
    if (ncols > maxout) { *nout = ncols; return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: too many columns", def->name); }
    for (int c = 0; c < ncols; c++) {
        const ltf_tensor *d = in[c + 2];
        ltf_dtype dt = d->dtype;
        if (dt != LTF_DTYPE_FLOAT32 && dt != LTF_DTYPE_FLOAT64 && dt != LTF_DTYPE_INT32 && dt != LTF_DTYPE_INT64 &&
            dt != LTF_DTYPE_STRING)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: record_defaults[%d] has dtype %s: expected float32, "
                            "float64, int32, int64 or string", def->name, c + 1, ltf_dtype_name(dt));
        if (d->rank > 1 || (d->rank == 1 && d->dims[0] > 1))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: record_defaults[%d] must be a scalar, a one-element "
                            "vector or empty (required), got shape %s", def->name, c + 1,
                            ltf_shape_str(d->rank, d->dims, s, sizeof s));
        out[c].dtype = dt;
        out[c].rank = in[0]->rank;
        for (int k = 0; k < in[0]->rank; k++) out[c].dims[k] = in[0]->dims[k];
    }
    *nout = ncols;
    return LTF_OK;
}

static ltf_status kernel_decode_csv(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                    const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)nout;
    int ncols = nin - 2;
    ltf_csv_options o = {(char)a->i[0], a->i[1] != 0, a->s, strlen(a->s), 0};
    const int64_t *sel = in[1]->numel > 0 ? (const int64_t *)LTF_DATA(in[1]) : NULL;
    return ltf_csv_decode(ctx, in[0], in + 2, ncols, sel, (int)in[1]->numel, &o, out);
}

#define ND LTF_OP_NOT_DIFFERENTIABLE
LTF_INTERNAL const ltf_op_def ltf_opdef_decode_csv = {
    "decode_csv", 3, -1, ND | LTF_OP_KERNEL_ALLOCATES | LTF_OP_VARIADIC_OUTPUTS, LTF_OP_DECODE_CSV,
    infer_decode_csv, { [LTF_DEVICE_CPU] = kernel_decode_csv }, NULL };
