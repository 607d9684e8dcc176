/*
** shape.c: broadcasting, axes and shape text (see shape.h).
*/
#include <stdio.h>
#include <string.h>
#include "shape.h"

const char *ltf_shape_str(int rank, const int64_t *dims, char *buf, size_t size) {
    if (rank < 0) {
        snprintf(buf, size, "<unknown>");
        return buf;
    }
    size_t n = 0;
    n += (size_t)snprintf(buf + n, size - n, "(");
    for (int i = 0; i < rank && n < size; i++) {
        if (dims[i] < 0)
            n += (size_t)snprintf(buf + n, size - n, "%sNone", i ? ", " : "");
        else
            n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? ", " : "", (long long)dims[i]);
    }
    if (n < size) snprintf(buf + n, size - n, rank == 1 ? ",)" : ")");
    return buf;
}

ltf_status ltf_broadcast_shapes(ltf_ctx *ctx, const char *op, int ra, const int64_t *da, int rb,
                                const int64_t *db, int *rout, int64_t *dout) {
    if (ra < 0 || rb < 0) {
        *rout = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    if (ra == rb && ra <= LTF_MAX_RANK) {   /* the common case, same shapes: no per-dim rules */
        int i = 0;
        while (i < ra && da[i] == db[i]) i++;
        if (i == ra) {
            if (dout != da && ra > 0) memmove(dout, da, sizeof(int64_t) * (size_t)ra);
            *rout = ra;
            return LTF_OK;
        }
    }
    int r = ra > rb ? ra : rb;
    int64_t d_out[LTF_MAX_RANK];   /* 'dout' may be 'da' or 'db' (a running broadcast): write it last */
    if (r > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: rank %d is more than %d", op, r, LTF_MAX_RANK);
    for (int i = 0; i < r; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        int64_t x = ia >= 0 ? da[ia] : 1, y = ib >= 0 ? db[ib] : 1;
        int64_t d;
        if (x == y) d = x;
        else if (x == 1) d = y;
        else if (y == 1) d = x;
        else if (x < 0) d = y;          /* unknown against known: trust the known one */
        else if (y < 0) d = x;
        else {
            char sa[LTF_SHAPE_BUF], sb[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: incompatible shapes: x is %s, y is %s", op,
                            ltf_shape_str(ra, da, sa, sizeof sa), ltf_shape_str(rb, db, sb, sizeof sb));
        }
        d_out[i] = d;
    }
    if (r > 0) memcpy(dout, d_out, sizeof(int64_t) * (size_t)r);
    *rout = r;
    return LTF_OK;
}

ltf_status ltf_attrs_check_str(ltf_ctx *ctx, const char *op, const ltf_attrs *a) {
    if (memchr(a->s, '\0', sizeof a->s)) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the string attribute is not terminated (at most %d bytes)",
                    op, LTF_ATTR_STR_MAX - 1);
}

ltf_status ltf_axis_normalize(ltf_ctx *ctx, const char *op, const char *arg, int64_t axis, int rank,
                              int *out) {
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) {
        if (rank == 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: '%s' %lld is out of range for a scalar (rank 0)", op, arg, LTF_AXIS_USER(axis));
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: '%s' %lld is out of range for rank %d (expected 1..%d or -%d..-1)", op, arg,
                        LTF_AXIS_USER(axis), rank, rank, rank);
    }
    *out = (int)a;
    return LTF_OK;
}

void ltf_broadcast_strides(int r, const int64_t *dims, int rout, const int64_t *dout, int64_t *strides) {
    int64_t s = 1;
    for (int i = rout - 1; i >= 0; i--) {
        int j = i - (rout - r);
        if (j < 0) {
            strides[i] = 0;
            continue;
        }
        strides[i] = (dims[j] == 1 && dout[i] != 1) ? 0 : s;
        if (__builtin_mul_overflow(s, dims[j], &s)) s = 0;   /* only past a 0 dim: no element is read */
    }
}
