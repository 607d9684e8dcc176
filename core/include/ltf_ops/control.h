/*
** ltf_ops/control.h: ops with effects outside tensors, and control flow.
**
** print: prints its inputs at every run (in a traced graph too), separated
** by attrs.s; ends with a newline. Host code can take over the formatting
** (ltf_ctx_set_print_hook).
**
** cond and while run functions: finished graphs registered in the
** context's function table (core/functions.h), named by id in i[0], i[1].
** A function's inputs are its explicit placeholders, then the outer values
** it captured; the op's inputs follow the same order.
**   cond   inputs: pred (bool scalar), then-inputs..., else-inputs...
**          i[0] then-function, i[1] else-function, i[2] number of then-inputs.
**          Outputs: the chosen function's outputs (both have the same count
**          and dtypes; shapes merge).
**   while  inputs: loop variables (i[2] of them), cond-inputs (i[3]),
**          body-inputs (the rest). i[0] cond-function (loop variables,
**          cond-inputs) -> bool scalar; i[1] body-function (loop variables,
**          body-inputs) -> new loop variables. ints[0]: maximum iterations
**          (-1 or absent: none); ints[1]: 1 to also output, per loop
**          variable, the stack of its values at the start of every
**          iteration (shape (T, ...)), then T (int64): what the gradient
**          needs. Outputs: the final loop variables (typed as the body's
**          placeholders: the shape invariants) [, stacks..., T].
**
** tensor_array_write  inputs: buffer (rows, element...), index (int32/int64
**          scalar, 1-BASED), value (element shape). i[0] = 1: the buffer may
**          grow (dynamic_size; new rows are zeros). Output: the buffer with
**          row 'index' replaced. A buffer of 0 rows and rank 1 takes the first
**          value's element shape (a TensorArray whose element shape is not
**          known yet). tf.TensorArray (lua/tf/tensor_array.lua) is built on it.
** tensor_array_read   inputs: buffer, index (1-BASED int scalar). Output:
**          row 'index'. Its gradient is a write into zeros like the buffer,
**          so it needs no known shape (the backward loop of while reads its
**          stacks with it).
** tensor_array_unwrite inputs: dy (a written buffer), buffer (the one
**          written to: its shape), index. Output: dy cut to the buffer's
**          rows with row 'index' zeroed: write's gradient for the buffer.
**
** write_summary: appends one summary to an event file (core/summary.c) at
**          every run. Inputs: step (int64 scalar), data, tag (string
**          scalar), description (string scalar)[, condition (bool scalar):
**          nothing is written when false]. i[0] writer id, i[1] kind
**          (LTF_SUMMARY_*), i[2] bucket count / max_outputs, i[3] sample
**          rate. No outputs; stateful, so traced functions keep it.
**
** custom_gradient: tf.custom_gradient while tracing. Inputs: x (i[1]: the
**          function's tensor arguments, then the handles of the variables
**          it read), y (i[2]: its results), then the values function i[0]
**          captured. Outputs: views of y. Its gradient runs function i[0]
**          on (dy..., captures...): one gradient per x whose bit is set in
**          'ints' (bit k of ints[k / 64]), none for the others.
*/
#ifndef LTF_OPS_CONTROL_H
#define LTF_OPS_CONTROL_H

#define LTF_OPS_CONTROL(X) X(PRINT, print) X(COND, cond) X(WHILE, while) \
    X(TENSOR_ARRAY_WRITE, tensor_array_write) X(TENSOR_ARRAY_UNWRITE, tensor_array_unwrite) \
    X(TENSOR_ARRAY_READ, tensor_array_read) X(WRITE_SUMMARY, write_summary) \
    X(CUSTOM_GRADIENT, custom_gradient)

#endif
