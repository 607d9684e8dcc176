/*
** op.c: the constant op registry and the one entry point every op goes
** through (ltf_op_run): inference, output allocation, kernel, and the hooks
** for tracing (symbolic inputs) and tapes (recording eager ops).
*/
#include <stdlib.h>
#include <string.h>
#include "op.h"
#include "storage.h"
#include "device.h"
#include "half.h"

#define LTF_OP_DECL(ID, name) LTF_INTERNAL extern const ltf_op_def ltf_opdef_##name;
LTF_OP_LIST(LTF_OP_DECL)
#undef LTF_OP_DECL

static const ltf_op_def *const registry[LTF_OP_COUNT] = {   /* ORDER OP */
#define LTF_OP_ENTRY(ID, name) [LTF_OP_##ID] = &ltf_opdef_##name,
    LTF_OP_LIST(LTF_OP_ENTRY)
#undef LTF_OP_ENTRY
};

const ltf_op_def *ltf_op_get(ltf_op_id op) {
    return (unsigned)op < LTF_OP_COUNT ? registry[op] : NULL;
}

ltf_op_id ltf_op_lookup(const char *name) {
    if (!name) return -1;
    for (int i = 0; i < LTF_OP_COUNT; i++)
        if (strcmp(registry[i]->name, name) == 0) return i;
    return -1;
}

const char *ltf_op_name(ltf_op_id op) {
    const ltf_op_def *d = ltf_op_get(op);
    return d ? d->name : NULL;
}

int ltf_op_count(void) { return LTF_OP_COUNT; }

void ltf_attrs_init(ltf_attrs *a) {
    memset(a, 0, sizeof *a);
    a->nints = -1;
    a->nints2 = -1;
}

void ltf_type_of(const ltf_tensor *t, ltf_type *out) {
    out->dtype = t->dtype;
    out->rank = t->rank;
    if (t->rank > 0) memcpy(out->dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
}

#define RESOURCE_BIT (1u << LTF_DTYPE_RESOURCE)
#define HALF_OR_RESOURCE (1u << LTF_DTYPE_FLOAT16 | 1u << LTF_DTYPE_BFLOAT16 | RESOURCE_BIT)
_Static_assert(LTF_DTYPE_COUNT <= 32, "op.c keeps sets of dtypes as bits of an unsigned");

/* The dtypes of 'in' as bits (1 << dtype). */
static unsigned dtype_bits(ltf_tensor *const *in, int nin) {
    unsigned bits = 0;
    for (int i = 0; i < nin; i++) bits |= 1u << (in[i]->dtype & 31);
    return bits;
}

/* Whether a type surely passes ltf_shape_check: known rank and dims, and
** its bytes fit in int64 even at 8 bytes per element (the widest dtype).
** Inline, no dtype lookup: every eager op checks its outputs. */
static int shape_surely_fits(const ltf_type *t) {
    if (t->rank < 0 || t->rank > LTF_MAX_RANK) return 0;
    int64_t n = 8;
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] < 0 || __builtin_mul_overflow(n, t->dims[i], &n)) return 0;
    return 1;
}

/* ltf_op_infer with the inputs' dtypes given as bits (dtype_bits). */
static ltf_status infer(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin, const ltf_attrs *a,
                        ltf_type *out, int maxout, int *nout, unsigned dtypes) {
    int resource_ok = (def->flags & LTF_OP_RESOURCE) != 0;
    for (int i = 0; i < nin && !resource_ok && (dtypes & RESOURCE_BIT); i++)
        if (in[i]->dtype == LTF_DTYPE_RESOURCE)
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: input %d is a variable handle (dtype resource); read the "
                            "variable's value first", def->name, i + 1);
    *nout = 0;
    ltf_status st = def->infer(ctx, def, in, nin, a, out, maxout, nout);
    if (st != LTF_OK) return st;
    if (*nout > maxout) {
        int n = *nout;
        *nout = 0;
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the op has %d outputs, the caller has room for %d",
                        def->name, n, maxout);
    }
    for (int k = 0; k < *nout; k++) {
        if (out[k].dtype == LTF_DTYPE_RESOURCE && !resource_ok)
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: cannot make a tensor of dtype resource (only variables "
                            "make handles)", def->name);
        if (!shape_surely_fits(&out[k]) &&
            (st = ltf_shape_check(ctx, def->name, out[k].dtype, out[k].rank, out[k].dims)) != LTF_OK)
            return st;
    }
    return LTF_OK;
}

ltf_status ltf_op_infer(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                        const ltf_attrs *a, ltf_type *out, int maxout, int *nout) {
    return infer(ctx, def, in, nin, a, out, maxout, nout, dtype_bits(in, nin));
}

static const ltf_attrs no_attrs = { .nints = -1, .nints2 = -1 };

#define STACK_TYPES 8

static int all_empty(ltf_tensor *const *out, int n) {
    for (int i = 0; i < n; i++)
        if (!out[i] || out[i]->numel != 0) return 0;
    return 1;
}

ltf_status ltf_op_run(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *const *in, int nin,
                      const ltf_attrs *a, ltf_tensor **out, int maxout, int *nout) {
    const ltf_op_def *def = ltf_op_get(op);
    *nout = 0;
    if (!def) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "op: unknown op id %d", op);
    if (nin < def->min_inputs || (def->max_inputs >= 0 && nin > def->max_inputs))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: expected %d%s inputs, got %d", def->name,
                        def->min_inputs, def->max_inputs == def->min_inputs ? "" : " or more", nin);
    const ltf_attrs *given = a;     /* NULL when the caller gave none: tapes store nothing */
    if (!a) a = &no_attrs;
    int symbolic = ctx->graph != NULL;
    /* one pass over the inputs: symbolic ones, any not in host memory, their dtypes */
    int elsewhere = ctx->scope_type > 0 || ((def->flags & LTF_OP_RESOURCE) && ctx->ndevices > 0) ||
                    ctx->log_placement || (ctx->default_placement && ltf_device_default_gpu(ctx));
    unsigned dtypes = 0;
    for (int i = 0; i < nin; i++) {
        if (!in[i]) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: input %d is missing", def->name, i + 1);
        if (!in[i]->storage) symbolic = 1;
        else elsewhere |= in[i]->storage->device != LTF_DEVICE_CPU;
        dtypes |= 1u << (in[i]->dtype & 31);
    }
    if (symbolic) {
        if (!ctx->graph_op)
            return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION,
                            "%s: a symbolic tensor can only be used while tracing", def->name);
        ltf_status gst = ctx->graph_op(ctx, op, in, nin, a, out, maxout, nout);
        /* a tape inside a traced function records symbolic ops too: its
        ** gradient is then computed in the graph */
        if (gst == LTF_OK && ctx->tape_record) {
            gst = ctx->tape_record(ctx, op, in, nin, given, out, *nout);
            if (gst != LTF_OK) {
                for (int i = 0; i < *nout; i++) {
                    ltf_tensor_release(out[i]);
                    out[i] = NULL;
                }
                *nout = 0;
            }
        }
        return gst;
    }

    /* output types: on the stack; ops with many outputs (split) get a heap
    ** array sized to the caller's room only when the stack one is too small */
    ltf_type stack_types[STACK_TYPES];
    ltf_type *types = stack_types;
    int n = 0;
    ltf_status st = infer(ctx, def, in, nin, a, types, maxout < STACK_TYPES ? maxout : STACK_TYPES, &n, dtypes);
    if (st != LTF_OK && maxout > STACK_TYPES && (def->flags & LTF_OP_VARIADIC_OUTPUTS)) {
        types = malloc(sizeof(ltf_type) * (size_t)maxout);
        if (!types) return ltf_fail_oom(ctx, "op outputs", sizeof(ltf_type) * (size_t)maxout);
        st = infer(ctx, def, in, nin, a, types, maxout, &n, dtypes);
    }
    if (st != LTF_OK) goto done;
    /* the host's fast path: every input in host memory, no device scope;
    ** anything else is placed by device.c (a variable op only once a
    ** device was found: its variable may live there) */
    if (elsewhere) {
        st = ltf_device_op_run(ctx, def, op, in, nin, a, given, types, n, out);
        if (st == LTF_OK) *nout = n;
        goto done;
    }
    ltf_kernel_fn kernel = def->kernel[LTF_DEVICE_CPU];
    if (!kernel) {
        st = ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "%s: no kernel for device /cpu:0", def->name);
        goto done;
    }
    for (int i = 0; i < n && (def->flags & LTF_OP_KERNEL_ALLOCATES); i++) out[i] = NULL;
    for (int i = 0; i < n && !(def->flags & LTF_OP_KERNEL_ALLOCATES); i++) {
        ltf_type *ty = &types[i];
        out[i] = (def->flags & LTF_OP_VIEW) && in[0]->dtype == ty->dtype
                     ? ltf_tensor_view(ctx, in[0], ty->rank, ty->dims)
                     : ltf_tensor_empty(ctx, ty->dtype, ty->rank, ty->dims);
        if (!out[i]) {
            for (int j = 0; j < i; j++) {
                ltf_tensor_release(out[j]);
                out[j] = NULL;
            }
            st = ctx->last_status;
            goto done;
        }
    }
    /* every output empty: nothing to compute (and no loop over huge leading
    ** dims of an empty tensor: fuzzing found hangs there) */
    if (n > 0 && !(def->flags & (LTF_OP_KERNEL_ALLOCATES | LTF_OP_STATEFUL | LTF_OP_VIEW)) && all_empty(out, n))
        st = LTF_OK;
    else {
        for (int i = 0; i < n; i++) dtypes |= 1u << (types[i].dtype & 31);
        /* half types (in or out) convert through float32; a resource input
        ** may be a float16 variable (ltf_half_run looks) */
        st = dtypes & HALF_OR_RESOURCE ? ltf_half_run(ctx, def, op, kernel, LTF_DEVICE_CPU, 0, in, nin, a, types, out, n)
                                       : kernel(ctx, def, in, nin, a, out, n);
    }
    if (st == LTF_OK && ctx->tape_record) st = ctx->tape_record(ctx, op, in, nin, given, out, n);
    if (st != LTF_OK) {   /* no outputs on failure: none left behind for the caller to release */
        for (int i = 0; i < n; i++) {
            ltf_tensor_release(out[i]);
            out[i] = NULL;
        }
        goto done;
    }
    *nout = n;
done:
    if (types != stack_types) free(types);
    return st;
}

ltf_tensor *ltf_op1(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *const *in, int nin, const ltf_attrs *a) {
    ltf_tensor *out = NULL;
    int n = 0;
    if (ltf_op_run(ctx, op, in, nin, a, &out, 1, &n) != LTF_OK) return NULL;
    return out;
}
