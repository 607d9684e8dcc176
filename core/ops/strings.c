/*
** ops/strings.c: definitions of the strings family (string_length, substr,
** string_to_number, regex_full_match, regex_replace, string_format,
** string_split): dtype/shape inference over partial shapes. None is
** differentiable. Attribute slots are in ltf_ops/strings.h; kernels in
** cpu/strings.c.
*/
#include <string.h>
#include "../op.h"
#include "../shape.h"
#include "../cpu/cpu.h"

LTF_CPU_KERNEL(ltf_cpu_strings_length);
LTF_CPU_KERNEL(ltf_cpu_strings_substr);
LTF_CPU_KERNEL(ltf_cpu_strings_to_number);
LTF_CPU_KERNEL(ltf_cpu_strings_regex_full_match);
LTF_CPU_KERNEL(ltf_cpu_strings_regex_replace);
LTF_CPU_KERNEL(ltf_cpu_strings_format);
LTF_CPU_KERNEL(ltf_cpu_strings_split);
LTF_CPU_KERNEL(ltf_cpu_strings_case);
LTF_CPU_KERNEL(ltf_cpu_strings_strip);
LTF_CPU_KERNEL(ltf_cpu_strings_reduce_join);
LTF_CPU_KERNEL(ltf_cpu_strings_ngrams);
LTF_CPU_KERNEL(ltf_cpu_strings_unicode_decode);
LTF_CPU_KERNEL(ltf_cpu_strings_unicode_encode);
LTF_CPU_KERNEL(ltf_cpu_strings_hash_bucket);
LTF_CPU_KERNEL(ltf_cpu_strings_hash_table_find);

#define INFER_ARGS ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin, \
                   const ltf_attrs *a, ltf_type *out, int maxout, int *nout

static ltf_status need_string(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const ltf_tensor *t) {
    if (t->dtype == LTF_DTYPE_STRING) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_TYPE, "%s: '%s' has dtype %s, expected string", def->name, arg,
                    ltf_dtype_name(t->dtype));
}

static ltf_status need_scalar_string(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const ltf_tensor *t) {
    ltf_status st = need_string(ctx, def, arg, t);
    if (st != LTF_OK || t->rank <= 0) return st;
    char s[LTF_SHAPE_BUF];
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' must be a scalar, got shape %s", def->name, arg,
                    ltf_shape_str(t->rank, t->dims, s, sizeof s));
}

static void like(ltf_type *o, ltf_dtype dt, const ltf_tensor *t) {
    o->dtype = dt;
    o->rank = t->rank;
    for (int d = 0; d < t->rank; d++) o->dims[d] = t->dims[d];
}

static ltf_status need_unit(ltf_ctx *ctx, const ltf_op_def *def, const ltf_attrs *a) {
    if (a->i[0] == 0 || a->i[0] == 1) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'unit' must be 'BYTE' or 'UTF8_CHAR'", def->name);
}

static ltf_status infer_length(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = need_string(ctx, def, "input", in[0]);
    if (st == LTF_OK) st = need_unit(ctx, def, a);
    if (st != LTF_OK) return st;
    like(out, LTF_DTYPE_INT32, in[0]);
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_substr(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = need_string(ctx, def, "input", in[0]);
    if (st == LTF_OK) st = need_unit(ctx, def, a);
    if (st != LTF_OK) return st;
    static const char *const names[] = { NULL, "pos", "len" };
    for (int k = 1; k <= 2; k++) {
        const ltf_tensor *p = in[k];
        if (p->dtype != LTF_DTYPE_INT32 && p->dtype != LTF_DTYPE_INT64)
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: '%s' has dtype %s, expected int32 or int64", def->name, names[k],
                            ltf_dtype_name(p->dtype));
        int ok = p->rank <= 0 || in[0]->rank < 0 || p->rank == in[0]->rank;
        for (int d = 0; ok && p->rank > 0 && in[0]->rank > 0 && d < p->rank; d++)
            ok = p->dims[d] < 0 || in[0]->dims[d] < 0 || p->dims[d] == in[0]->dims[d];
        if (!ok) {
            char s1[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: '%s' %s must be a scalar or have the shape of 'input' %s",
                            def->name, names[k], ltf_shape_str(p->rank, p->dims, s1, sizeof s1),
                            ltf_shape_str(in[0]->rank, in[0]->dims, s2, sizeof s2));
        }
    }
    like(out, LTF_DTYPE_STRING, in[0]);
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_to_number(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = need_string(ctx, def, "string_tensor", in[0]);
    if (st != LTF_OK) return st;
    int64_t v = a->i[0] == 0 ? LTF_DTYPE_FLOAT32 : a->i[0] == INT64_MIN ? -1 : a->i[0] - 1;
    if (v != LTF_DTYPE_FLOAT32 && v != LTF_DTYPE_FLOAT64 && v != LTF_DTYPE_INT32 && v != LTF_DTYPE_INT64)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: 'out_type' must be float32, float64, int32 or int64, got %s",
                        def->name, v >= 0 && v < LTF_DTYPE_COUNT ? ltf_dtype_name((ltf_dtype)v) : "an invalid dtype");
    like(out, (ltf_dtype)v, in[0]);
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_regex(INFER_ARGS) {
    (void)maxout;
    ltf_status st = need_string(ctx, def, "input", in[0]);
    if (st == LTF_OK) st = need_scalar_string(ctx, def, "pattern", in[1]);
    if (st == LTF_OK && nin > 2) st = need_scalar_string(ctx, def, "rewrite", in[2]);
    if (st != LTF_OK) return st;
    like(out, def->code == LTF_OP_REGEX_FULL_MATCH ? LTF_DTYPE_BOOL : LTF_DTYPE_STRING, in[0]);
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_format(INFER_ARGS) {
    (void)maxout;
    ltf_status st = need_scalar_string(ctx, def, "template", in[0]);
    if (st == LTF_OK) st = ltf_attrs_check_str(ctx, def->name, a);
    if (st != LTF_OK) return st;
    for (int k = 1; k < nin; k++)
        if (in[k]->dtype == LTF_DTYPE_RESOURCE)
            return ltf_fail(ctx, LTF_ERR_TYPE, "%s: input %d is a variable handle", def->name, k);
    out->dtype = LTF_DTYPE_STRING;
    out->rank = 0;
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_split(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = need_string(ctx, def, "input", in[0]);
    if (st == LTF_OK) st = need_scalar_string(ctx, def, "pad", in[1]);
    if (st == LTF_OK) st = ltf_attrs_check_str(ctx, def->name, a);
    if (st != LTF_OK) return st;
    if (in[0]->rank > 1) {
        char s[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'input' must have rank 0 or 1, got shape %s", def->name,
                        ltf_shape_str(in[0]->rank, in[0]->dims, s, sizeof s));
    }
    if (a->i[0] < -1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'maxsplit' is %lld, must be >= 0 or -1", def->name,
                        (long long)a->i[0]);
    *nout = 2;
    like(&out[1], LTF_DTYPE_INT32, in[0]);
    if (in[0]->rank < 0) {
        out[0].dtype = LTF_DTYPE_STRING;
        out[0].rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    like(&out[0], LTF_DTYPE_STRING, in[0]);
    out[0].dims[out[0].rank++] = LTF_UNKNOWN_DIM;
    return LTF_OK;
}

static ltf_status infer_elementwise_string(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = need_string(ctx, def, "input", in[0]);
    if (st != LTF_OK) return st;
    like(out, LTF_DTYPE_STRING, in[0]);
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_reduce_join(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = need_string(ctx, def, "inputs", in[0]);
    if (st == LTF_OK) st = need_scalar_string(ctx, def, "separator", in[1]);
    if (st != LTF_OK) return st;
    int64_t ax = a->i[0];
    out->dtype = LTF_DTYPE_STRING;
    if (in[0]->rank < 0) {
        out->rank = LTF_UNKNOWN_RANK;
        return *nout = 1, LTF_OK;
    }
    if (ax < -1 || ax >= (in[0]->rank > 0 ? in[0]->rank : 1)) {
        char s[LTF_SHAPE_BUF];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'axis' %lld is out of range for 'inputs' of shape %s",
                        def->name, (long long)ax + 1, ltf_shape_str(in[0]->rank, in[0]->dims, s, sizeof s));
    }
    out->rank = 0;
    for (int d = 0; d < in[0]->rank; d++) {
        int reduced = ax < 0 || d == ax;
        if (!reduced) out->dims[out->rank++] = in[0]->dims[d];
        else if (a->i[1]) out->dims[out->rank++] = 1;
    }
    *nout = 1;
    return LTF_OK;
}

static ltf_status need_int32(ltf_ctx *ctx, const ltf_op_def *def, const char *arg, const ltf_tensor *t) {
    if (t->dtype == LTF_DTYPE_INT32) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_TYPE, "%s: '%s' has dtype %s, expected int32", def->name, arg,
                    ltf_dtype_name(t->dtype));
}

/* lengths: a scalar, or the leading shape of 'data' (rank - 'drop' dims). */
static ltf_status need_lengths(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *lengths, const ltf_tensor *data) {
    ltf_status st = need_int32(ctx, def, "lengths", lengths);
    if (st != LTF_OK || lengths->rank == 0 || data->rank < 0 || lengths->rank < 0) return st;
    int ok = lengths->rank == data->rank - 1;
    for (int d = 0; ok && d < lengths->rank; d++)
        ok = lengths->dims[d] < 0 || data->dims[d] < 0 || lengths->dims[d] == data->dims[d];
    if (ok) return LTF_OK;
    char s1[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF];
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'lengths' %s must have the shape of the input without its last "
                    "dimension %s", def->name, ltf_shape_str(lengths->rank, lengths->dims, s1, sizeof s1),
                    ltf_shape_str(data->rank, data->dims, s2, sizeof s2));
}

static ltf_status infer_ngrams(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = need_string(ctx, def, "data", in[0]);
    if (st == LTF_OK && in[0]->rank == 0)
        st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'data' must have rank >= 1, got a scalar", def->name);
    if (st == LTF_OK) st = need_lengths(ctx, def, in[1], in[0]);
    if (st == LTF_OK) st = need_int32(ctx, def, "ngram_width", in[2]);
    if (st == LTF_OK) st = need_scalar_string(ctx, def, "separator", in[3]);
    if (st == LTF_OK) st = need_scalar_string(ctx, def, "pad_values", in[4]);
    if (st == LTF_OK) st = need_scalar_string(ctx, def, "pad_values", in[5]);
    if (st != LTF_OK) return st;
    *nout = 2;
    out[0].dtype = LTF_DTYPE_STRING;
    out[1].dtype = LTF_DTYPE_INT32;
    if (in[0]->rank < 0) {
        out[0].rank = out[1].rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    like(&out[0], LTF_DTYPE_STRING, in[0]);
    out[0].dims[out[0].rank - 1] = LTF_UNKNOWN_DIM;
    like(&out[1], LTF_DTYPE_INT32, in[0]);
    out[1].rank--;
    return LTF_OK;
}

static ltf_status infer_unicode_decode(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = need_string(ctx, def, "input", in[0]);
    if (st != LTF_OK) return st;
    *nout = 2;
    ltf_dtype dt = a->i[2] ? LTF_DTYPE_STRING : LTF_DTYPE_INT32;
    like(&out[1], LTF_DTYPE_INT32, in[0]);
    if (in[0]->rank < 0) {
        out[0].dtype = dt;
        out[0].rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    if (in[0]->rank >= LTF_MAX_RANK)   /* the result adds a dimension */
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'input' has rank %d; the result's rank would exceed %d",
                        def->name, in[0]->rank, LTF_MAX_RANK);
    like(&out[0], dt, in[0]);
    out[0].dims[out[0].rank++] = LTF_UNKNOWN_DIM;
    return LTF_OK;
}

static ltf_status infer_unicode_encode(INFER_ARGS) {
    (void)nin; (void)maxout;
    ltf_status st = need_int32(ctx, def, "input", in[0]);
    if (st == LTF_OK && in[0]->rank == 0)
        st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'input' must have rank >= 1, got a scalar", def->name);
    if (st == LTF_OK) st = need_lengths(ctx, def, in[1], in[0]);
    if (st != LTF_OK) return st;
    *nout = 1;
    if (in[0]->rank < 0) {
        out->dtype = LTF_DTYPE_STRING;
        out->rank = LTF_UNKNOWN_RANK;
        return LTF_OK;
    }
    like(out, LTF_DTYPE_STRING, in[0]);
    out->rank--;
    return LTF_OK;
}

static ltf_status infer_hash_bucket(INFER_ARGS) {
    (void)nin; (void)maxout;
    if (in[0]->dtype != LTF_DTYPE_INT32 && in[0]->dtype != LTF_DTYPE_INT64) {
        ltf_status st = need_string(ctx, def, "input", in[0]);
        if (st != LTF_OK) return st;
    }
    if (a->i[0] < 1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'num_buckets' is %lld, must be >= 1", def->name,
                        (long long)a->i[0]);
    like(out, LTF_DTYPE_INT64, in[0]);
    *nout = 1;
    return LTF_OK;
}

static ltf_status infer_table_find(INFER_ARGS) {
    (void)nin; (void)maxout;
    const ltf_tensor *k = in[0], *v = in[1], *x = in[2], *dflt = in[3];
    char s1[LTF_SHAPE_BUF], s2[LTF_SHAPE_BUF];
    if (k->dtype != LTF_DTYPE_STRING && k->dtype != LTF_DTYPE_INT32 && k->dtype != LTF_DTYPE_INT64)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: keys have dtype %s, expected string, int32 or int64", def->name,
                        ltf_dtype_name(k->dtype));
    if (x->dtype != k->dtype)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: the keys looked up have dtype %s, the table's keys %s", def->name,
                        ltf_dtype_name(x->dtype), ltf_dtype_name(k->dtype));
    if (k->rank != 1 || v->rank != 1 || (k->dims[0] >= 0 && v->dims[0] >= 0 && k->dims[0] != v->dims[0]))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: keys %s and values %s must be vectors of one length",
                        def->name, ltf_shape_str(k->rank, k->dims, s1, sizeof s1),
                        ltf_shape_str(v->rank, v->dims, s2, sizeof s2));
    if (dflt->dtype != v->dtype || dflt->rank != 0)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: the default value must be a scalar of the values' dtype %s, "
                        "got %s %s", def->name, ltf_dtype_name(v->dtype), ltf_dtype_name(dflt->dtype),
                        ltf_shape_str(dflt->rank, dflt->dims, s1, sizeof s1));
    if (a->i[0] < 0 || (a->i[0] > 0 && v->dtype != LTF_DTYPE_INT64))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: OOV buckets need int64 values and a count >= 0", def->name);
    if (v->dtype == LTF_DTYPE_RESOURCE)
        return ltf_fail(ctx, LTF_ERR_TYPE, "%s: values are a variable handle", def->name);
    like(out, v->dtype, x);
    *nout = 1;
    return LTF_OK;
}

#define CPU(k) { [LTF_DEVICE_CPU] = k }
#define ND LTF_OP_NOT_DIFFERENTIABLE
#define DEF(name, ID, nmin, nmax, flags, infer, kernel)                                          \
    LTF_INTERNAL const ltf_op_def ltf_opdef_##name = { #name, nmin, nmax, ND | (flags), LTF_OP_##ID, infer, \
                                                       CPU(kernel), NULL };

DEF(string_length, STRING_LENGTH, 1, 1, 0, infer_length, ltf_cpu_strings_length)
DEF(substr, SUBSTR, 3, 3, 0, infer_substr, ltf_cpu_strings_substr)
DEF(string_to_number, STRING_TO_NUMBER, 1, 1, 0, infer_to_number, ltf_cpu_strings_to_number)
DEF(regex_full_match, REGEX_FULL_MATCH, 2, 2, 0, infer_regex, ltf_cpu_strings_regex_full_match)
DEF(regex_replace, REGEX_REPLACE, 3, 3, 0, infer_regex, ltf_cpu_strings_regex_replace)
DEF(string_format, STRING_FORMAT, 1, -1, 0, infer_format, ltf_cpu_strings_format)
DEF(string_split, STRING_SPLIT, 2, 2, LTF_OP_KERNEL_ALLOCATES, infer_split, ltf_cpu_strings_split)
DEF(string_case, STRING_CASE, 1, 1, 0, infer_elementwise_string, ltf_cpu_strings_case)
DEF(string_strip, STRING_STRIP, 1, 1, 0, infer_elementwise_string, ltf_cpu_strings_strip)
DEF(reduce_join, REDUCE_JOIN, 2, 2, 0, infer_reduce_join, ltf_cpu_strings_reduce_join)
DEF(string_ngrams, STRING_NGRAMS, 6, 6, LTF_OP_KERNEL_ALLOCATES, infer_ngrams, ltf_cpu_strings_ngrams)
DEF(unicode_decode, UNICODE_DECODE, 1, 1, LTF_OP_KERNEL_ALLOCATES, infer_unicode_decode, ltf_cpu_strings_unicode_decode)
DEF(unicode_encode, UNICODE_ENCODE, 2, 2, 0, infer_unicode_encode, ltf_cpu_strings_unicode_encode)
DEF(string_hash_bucket, STRING_HASH_BUCKET, 1, 1, 0, infer_hash_bucket, ltf_cpu_strings_hash_bucket)
DEF(hash_table_find, HASH_TABLE_FIND, 4, 4, 0, infer_table_find, ltf_cpu_strings_hash_table_find)
