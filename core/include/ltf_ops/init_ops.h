/*
** ltf_ops/init_ops.h: tensors made from attributes only (constructors; no
** inputs, so they run on the CPU). Attribute slots:
**   fill      ints = shape; i[0] = dtype; the value: f[0] for float dtypes,
**             i[1] for integer dtypes and bool (0/1), s for string (at most
**             LTF_ATTR_STR_MAX - 1 bytes; "" gives empty strings).
**   range     i[0] = dtype (float32, float64, int32, int64); integer dtypes
**             take start, limit, delta from i[1..3], float dtypes from
**             f[0..2]. Values are start + k * delta for k = 0, 1, ... while
**             short of 'limit' (TensorFlow's tf.range; nothing is shifted).
**   range_dyn (start, limit, delta): range with the three as scalar tensors
**             of dtype i[0], read when the op runs (CPU only).
**   linspace  i[0] = dtype (float32, float64); i[1] = num (>= 0);
**             f[0..1] = start, stop (both included when num >= 2).
**   eye       i[0] = dtype (numeric or bool); i[1] = rows; i[2] = columns;
**             ints = batch shape (nints -1 or 0: none).
*/
#ifndef LTF_OPS_INIT_H
#define LTF_OPS_INIT_H

#define LTF_OPS_INIT(X) X(FILL, fill) X(RANGE, range) X(LINSPACE, linspace) X(EYE, eye) X(RANGE_DYN, range_dyn)

#endif
