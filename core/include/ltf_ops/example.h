/*
** ltf_ops/example.h: tf.train.Example parsing (ORDER OP within the family).
** Not differentiable; CPU only (string inputs stay on the host).
**
**   op                     inputs                     attributes / outputs
**   parse_example_feature  serialized, key, default   serialized: string, rank 0 (one Example) or 1
**                                                     (a batch); key: scalar string (the feature name);
**                                                     default: of the output dtype, 0 elements (none),
**                                                     1 (broadcast) or prod(shape) elements.
**                                                     i[0]: kind 0 FixedLen, 1 VarLen, 2 FixedLenSequence;
**                                                     i[1]: dtype (LTF_DTYPE_STRING, _FLOAT32 or _INT64);
**                                                     i[2]: allow_missing (FixedLenSequence);
**                                                     ints: the feature's shape (nints >= 0).
**                                                     FixedLen: [batch..., shape...]. FixedLenSequence:
**                                                     [batch..., rows, shape...] padded with the default
**                                                     (or zeros) to the longest. VarLen: indices int64
**                                                     [N, rank+1], values [N], dense_shape int64 [rank+1].
**                                                     Malformed protos and mismatches: InvalidArgumentError.
*/
#ifndef LTF_OPS_EXAMPLE_H
#define LTF_OPS_EXAMPLE_H

#define LTF_OPS_EXAMPLE(X) X(PARSE_EXAMPLE_FEATURE, parse_example_feature)

#endif
