/*
** shape.h: shape arithmetic shared by ops: broadcasting (with unknown
** dims), axis normalization, and shape text for messages.
*/
#ifndef LTF_SHAPE_H
#define LTF_SHAPE_H

#include "ctx.h"

/* Text of a shape as TensorFlow prints it: "(2, 3)", "(4,)", "()",
** "(None, 3)", "<unknown>". Returns 'buf'. */
LTF_INTERNAL const char *ltf_shape_str(int rank, const int64_t *dims, char *buf, size_t size);
#define LTF_SHAPE_BUF 128

/* NumPy broadcasting of two partial shapes into 'out' (rank, dims).
** Unknown dims broadcast against 1 and against each other. On mismatch the
** message is "<op>: incompatible shapes: x is (...), y is (...)". 'dout'
** may be the same array as 'da' or 'db'. */
LTF_INTERNAL ltf_status ltf_broadcast_shapes(ltf_ctx *ctx, const char *op,
                                             int ra, const int64_t *da,
                                             int rb, const int64_t *db,
                                             int *rout, int64_t *dout);

/* Normalize an axis (0-based, or negative from the end) against 'rank'.
** Messages quote the user's 1-based form. */
LTF_INTERNAL ltf_status ltf_axis_normalize(ltf_ctx *ctx, const char *op, const char *arg,
                                           int64_t axis, int rank, int *out);
/* The user's spelling of a 0-based/negative axis (1-based or negative);
** INT64_MAX, which no 1-based axis maps to, prints as itself. */
#define LTF_AXIS_USER(ax) ((long long)((ax) >= 0 && (ax) < INT64_MAX ? (ax) + 1 : (ax)))

/* Strides (in elements) of 'dims' placed right-aligned in an 'rout'-rank
** broadcast of shape 'dout': 0 where the input is broadcast. A shape with a
** 0 dim may have dims whose product overflows: strides are then
** meaningless (there is no element) but computed without overflow. */
LTF_INTERNAL void ltf_broadcast_strides(int r, const int64_t *dims, int rout, const int64_t *dout,
                                        int64_t *strides);

/* Whether the string attribute 'a->s' ends with a NUL within its
** LTF_ATTR_STR_MAX bytes (hosts fill it; kernels read it as a C string).
** Fails as "<op>: the string attribute is not terminated ..." */
LTF_INTERNAL ltf_status ltf_attrs_check_str(ltf_ctx *ctx, const char *op, const ltf_attrs *a);

#endif
