/*
** op.h: the op registry. One definition per op: input counts, flags,
** dtype/shape inference (works on symbolic tensors with unknown dims),
** kernels per device, and the gradient slot. Op ids come from the family
** lists in ops/ (ORDER OP), so the registry is a constant table.
*/
#ifndef LTF_OP_H
#define LTF_OP_H

#include "tensor.h"
#include "ltf_ops.h"

/* A partial tensor type: what inference produces for each output. */
typedef struct ltf_type {
    ltf_dtype dtype;
    int rank;                     /* LTF_UNKNOWN_RANK allowed */
    int64_t dims[LTF_MAX_RANK];   /* LTF_UNKNOWN_DIM allowed */
} ltf_type;

typedef struct ltf_op_def ltf_op_def;

/* Check inputs/attrs and describe the outputs: writes up to 'maxout' types
** and the count into '*nout'. Must accept unknown dims and ranks. */
typedef ltf_status (*ltf_infer_fn)(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                   int nin, const ltf_attrs *a, ltf_type *out, int maxout,
                                   int *nout);
/* Compute: outputs are allocated by the dispatcher from the inferred types
** (or are views, for LTF_OP_VIEW ops, already pointing at input 1's bytes). */
typedef ltf_status (*ltf_kernel_fn)(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                    int nin, const ltf_attrs *a, ltf_tensor **out, int nout);
/* Gradient: given the forward inputs/outputs and the gradients of the
** outputs ('dout', NULL entries mean zero), write one gradient per input into
** 'din' (new references; NULL = no gradient). Built from ltf_op_run calls,
** so it works eagerly, while tracing and under an outer tape. */
typedef ltf_status (*ltf_grad_fn)(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in,
                                  int nin, const ltf_attrs *a, ltf_tensor *const *out, int nout,
                                  ltf_tensor *const *dout, ltf_tensor **din);

enum {
    LTF_OP_STATEFUL          = 1u << 0, /* has effects or randomness: never pruned/folded/merged */
    LTF_OP_ELEMENTWISE       = 1u << 1, /* output[i] depends on input[i] (after broadcasting) */
    LTF_OP_VIEW              = 1u << 2, /* output shares input 1's storage (reshape & co) */
    LTF_OP_NOT_DIFFERENTIABLE= 1u << 3, /* no gradient flows (comparisons, argmax, casts to int) */
    LTF_OP_VARIADIC_OUTPUTS  = 1u << 4, /* output count depends on attributes (split) */
    LTF_OP_KERNEL_ALLOCATES  = 1u << 5, /* the kernel sets its outputs itself (variable reads) */
    LTF_OP_READS_VARIABLE    = 1u << 6, /* input 1 is a variable handle that is read (tapes auto-watch) */
    LTF_OP_RESOURCE          = 1u << 7  /* takes or makes variable handles (dtype resource); no other op
                                        ** may: copying a handle's bytes would copy uncounted references */
};

struct ltf_op_def {
    const char *name;             /* TensorFlow-style name used in messages ("matmul") */
    int min_inputs, max_inputs;   /* max -1: variadic */
    unsigned flags;
    int code;                     /* family-specific sub-op code (shared kernels) */
    ltf_infer_fn infer;
    ltf_kernel_fn kernel[LTF_DEVICE_TYPE_COUNT];
    ltf_grad_fn grad;
};

/* The definition of 'op' (lent); NULL if out of range. */
LTF_INTERNAL const ltf_op_def *ltf_op_get(ltf_op_id op);

/* Inference as both modes run it: refuses resource inputs/outputs for ops
** without LTF_OP_RESOURCE, runs 'def->infer', and checks every output type
** with ltf_shape_check (so symbolic shapes never overflow either). */
LTF_INTERNAL ltf_status ltf_op_infer(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                     const ltf_attrs *a, ltf_type *out, int maxout, int *nout);

/* Shorthand used by gradient functions and composite ops: run a one-output
** op; NULL on failure (message in ctx). */
LTF_INTERNAL ltf_tensor *ltf_op1(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a);

/* Hook through which tracing (graph.c) takes over when an input is symbolic
** or a graph is being built; NULL until tracing is linked in. */
typedef ltf_status (*ltf_graph_op_fn)(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *const *in, int nin,
                                      const ltf_attrs *a, ltf_tensor **out, int maxout, int *nout);
/* Hook through which the tape (tape.c) records an eager op; NULL when off. */
typedef ltf_status (*ltf_tape_record_fn)(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *const *in,
                                         int nin, const ltf_attrs *a, ltf_tensor *const *out,
                                         int nout);

/* Copy the type of a tensor. */
LTF_INTERNAL void ltf_type_of(const ltf_tensor *t, ltf_type *out);

/* A shape given as the tensor input 't' (int32/int64 vector; ops/movement.c):
** when all its values are known (eagerly, constants, what tracing can tell)
** sets '*complete' and writes 'a' with ints = those values into 'b'; else
** writes the partial type (dtype 'dt', unknown dims where unknown) into
** 'out'. Fails for a bad dtype, rank or a known negative entry, naming
** 'def' and 'arg'. */
LTF_INTERNAL ltf_status ltf_shape_input_type(ltf_ctx *ctx, const ltf_op_def *def, const char *arg,
                                             const ltf_tensor *t, ltf_dtype dt, ltf_type *out, int *complete,
                                             ltf_attrs *b, const ltf_attrs *a);

#endif
