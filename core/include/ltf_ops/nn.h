/*
** ltf_ops/nn.h: neural-network ops (ORDER OP within the family).
**
** Attribute slots (axes 0-based or negative, as everywhere in core):
**
** softmax(logits), log_softmax(logits): float32/float64, rank >= 1.
**   i[0]  axis (-1 = last)
**
** sparse_softmax_cross_entropy_with_logits(labels, logits): labels int32 or
** int64 of shape (batch...), logits float of shape (batch..., C). Labels are
** 1-based class indices: label k selects logits[..., k]; a label outside
** 1..C is an InvalidArgumentError. Output: per-example loss (batch...).
**   no attributes
**
** softmax_cross_entropy_with_logits(labels, logits): both float, same dtype
** and shape; the class axis is dropped from the output (per-example loss).
**   i[0]  axis (-1 = last)
**
** conv2d(input, filters): input NHWC (N, H, W, C), filters HWIO
** (KH, KW, C, O), float32/float64; output (N, OH, OW, O).
**   ints[0..1]  strides (h, w), >= 1            nints = 2 .. 8
**   ints[2..3]  dilations (h, w), >= 1 (absent when nints < 4: 1, 1)
**   ints[4..7]  explicit padding (top, bottom, left, right), used when i[0] = 2
**   i[0]        padding: 0 VALID, 1 SAME (TensorFlow's rule: total
**               max((out - 1) * stride + (k - 1) * dilation + 1 - in, 0),
**               the smaller half before), 2 EXPLICIT
**
** conv2d_backprop_input_dyn(filters, dy, input_sizes): conv2d_backprop_input
** with the input's sizes an int32/int64 tensor (N, H, W, C) or (H, W) read
** when the op runs (conv2d's gradient and conv2d_transpose when the height
** and width are known only then). Attributes as conv2d. CPU only.
**
** max_pool2d(input), avg_pool2d(input): input NHWC; max_pool2d takes any
** numeric dtype, avg_pool2d float32/float64.
**   ints[0..1]  ksize (h, w), >= 1              nints = 4
**   ints[2..3]  strides (h, w), >= 1
**   i[0]        padding: 0 VALID, 1 SAME (padding never counts: max ignores
**               it, avg divides by the number of valid elements)
**
** Gradient ops (what the gradients of conv2d and the pools are made of; each
** is linear in its gradient input, and has its own gradient, so second-order
** gradients work):
**
** conv2d_backprop_input(filters, dy): the gradient of conv2d with respect to
** its input: dy (N, OH, OW, O) through filters (KH, KW, C, O) -> (N, H, W, C).
** Attributes as conv2d, plus
**   ints2[0..1] (H, W), the input's height and width     nints2 = 2
** (also tf.nn.conv2d_transpose).
**
** conv2d_backprop_filter(input, dy): the gradient of conv2d with respect to
** its filters: input (N, H, W, C) and dy (N, OH, OW, O) -> (KH, KW, C, O).
** Attributes as conv2d, plus
**   ints2[0..1] (KH, KW), the filters' height and width  nints2 = 2
**
** max_pool2d_grad(input, dy): dy (the shape of max_pool2d(input)) sent to
** the position of each window's maximum (the first one on ties, as
** TensorFlow; the first NaN when there is one) -> the shape of input.
** max_pool2d_grad_grad(input, g): g (the shape of input) read at those same
** positions -> the shape of max_pool2d(input). Both: float32/float64,
** attributes as max_pool2d.
**
** avg_pool2d_grad(dy): dy (N, OH, OW, C) spread evenly over each window's
** valid elements (divided by the count avg_pool2d divides by) -> (N, H, W, C).
** Attributes as avg_pool2d, plus
**   ints2[0..1] (H, W), the input's height and width     nints2 = 2
**
** gelu(features): float32/float64, elementwise: x * Phi(x) (Phi the
** standard normal CDF, through C's erf), or with i[0] = 1 (approximate)
** 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
**   i[0]  approximate (0 or 1)
** gelu_grad(dy, features): dy * gelu'(features), same shapes and dtypes;
** attributes as gelu. Its own gradient: gelu_grad(g, x) for dy, and
** g * dy * gelu''(x) (built from elementwise ops) for x.
**
** dropout_noise(x): uniform values in [0, 1) of x's shape and dtype
** (float32/float64), drawn when the op runs (stateful), so that
** tf.nn.dropout works over shapes known only then. Seeds as random_uniform
** (ltf_ops/random.h): i[1] = 0 the context's generator, i[1] = 1 the stream
** of key i[2] and counter i[3]. No gradient.
**
** depthwise_conv2d(input, filter): input NHWC (N, H, W, C), filter
** (KH, KW, C, M), float32/float64; output (N, OH, OW, C * M), channel
** c * M + m the convolution of input channel c with filter[:, :, c, m].
** Attributes as conv2d (padding VALID or SAME only).
** depthwise_conv2d_backprop_input(filter, dy) -> (N, H, W, C), with
**   ints2[0..1] (H, W)                                    nints2 = 2
** depthwise_conv2d_backprop_filter(input, dy) -> (KH, KW, C, M), with
**   ints2[0..1] (KH, KW)                                  nints2 = 2
** Each is linear in dy and bilinear overall; their gradients are made of
** the three ops, as conv2d's.
**
** Gradients of the cross-entropies are TensorFlow's: d/dlogits = dloss *
** (softmax(logits) - labels) (exact when each row of labels sums to 1, which
** TensorFlow assumes too); d/dlabels = -dloss * log_softmax(logits) for the
** dense one, none for the sparse one's integer labels.
*/
#ifndef LTF_OPS_NN_H
#define LTF_OPS_NN_H

#define LTF_OPS_NN(X)                                                  \
    X(SOFTMAX, softmax) X(LOG_SOFTMAX, log_softmax)                    \
    X(SPARSE_SOFTMAX_XENT, sparse_softmax_cross_entropy_with_logits)   \
    X(SOFTMAX_XENT, softmax_cross_entropy_with_logits)                 \
    X(CONV2D, conv2d) X(MAX_POOL2D, max_pool2d) X(AVG_POOL2D, avg_pool2d) \
    X(CONV2D_BACKPROP_INPUT, conv2d_backprop_input)                    \
    X(CONV2D_BACKPROP_FILTER, conv2d_backprop_filter)                  \
    X(MAX_POOL2D_GRAD, max_pool2d_grad)                                \
    X(MAX_POOL2D_GRAD_GRAD, max_pool2d_grad_grad)                      \
    X(AVG_POOL2D_GRAD, avg_pool2d_grad)                                \
    X(GELU, gelu) X(GELU_GRAD, gelu_grad)                              \
    X(DROPOUT_NOISE, dropout_noise)                                    \
    X(DEPTHWISE_CONV2D, depthwise_conv2d)                              \
    X(DEPTHWISE_CONV2D_BACKPROP_INPUT, depthwise_conv2d_backprop_input) \
    X(DEPTHWISE_CONV2D_BACKPROP_FILTER, depthwise_conv2d_backprop_filter) \
    X(CONV2D_BACKPROP_INPUT_DYN, conv2d_backprop_input_dyn)

/* Padding codes of conv2d and the pools (i[0]). */
enum { LTF_PADDING_VALID = 0, LTF_PADDING_SAME = 1, LTF_PADDING_EXPLICIT = 2 };

#endif
