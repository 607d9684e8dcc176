/*
** ltf_ops/rnn.h: the fused recurrent ops (ORDER OP within the family): a
** whole LSTM or GRU layer over a sequence in one op, Keras's weight layouts
** and gate orders, tanh and sigmoid activations.
**
** lstm_sequence(x, h0, c0, kernel, recurrent_kernel, bias [, mask]):
**   x (B, T, I), h0 and c0 (B, U), kernel (I, 4U), recurrent_kernel (U, 4U),
**   bias (4U), gates in Keras's order i, f, c, o; float32 or float64, one
**   dtype; mask bool (B, T) (false: the step keeps the states, and the
**   output as Keras: the previous step's output, zeros before the first).
**   Outputs: outputs (B, T, U) in processing order, h (B, U), c (B, U) and
**   a workspace (B, T, 6U) that the gradient reads (per time step the four
**   activated gates, the cell and hidden states after the step).
**   i[0]  go_backwards (time processed from the last step to the first)
**   i[1]  zero_output_for_mask (masked steps output zeros)
** lstm_sequence_grad(x, h0, c0, kernel, recurrent_kernel, bias, workspace,
**   doutputs, dh, dc [, mask]) -> dx, dh0, dc0, dkernel, drecurrent_kernel,
**   dbias: backpropagation through time; attributes as lstm_sequence, and
**   i[3]  bits of the gradients not wanted (bit k: output k+1 is left as
**         zeros, its products skipped; the gradient function sets those
**         its caller does not need, e.g. dx for a constant input)
**
** gru_sequence(x, h0, kernel, recurrent_kernel, bias [, mask]):
**   kernel (I, 3U), recurrent_kernel (U, 3U), gates z, r, h; bias (2, 3U)
**   (input row, recurrent row) with reset_after, else (3U).
**   Outputs: outputs (B, T, U), h (B, U), workspace (B, T, 5U).
**   i[0], i[1] as lstm_sequence; i[2] reset_after (1: Keras's default, the
**   reset gate applied after the recurrent product).
** gru_sequence_grad(x, h0, kernel, recurrent_kernel, bias, workspace,
**   doutputs, dh [, mask]) -> dx, dh0, dkernel, drecurrent_kernel, dbias;
**   i[3] as lstm_sequence_grad's.
**
** The gradient ops have no gradient of their own (no second order).
*/
#ifndef LTF_OPS_RNN_H
#define LTF_OPS_RNN_H

#define LTF_OPS_RNN(X)                                                 \
    X(LSTM_SEQUENCE, lstm_sequence)                                    \
    X(LSTM_SEQUENCE_GRAD, lstm_sequence_grad)                          \
    X(GRU_SEQUENCE, gru_sequence)                                      \
    X(GRU_SEQUENCE_GRAD, gru_sequence_grad)

#endif
