/*
** cpu/example.c: kernel of parse_example_feature (ltf_ops/example.h). Each
** serialized tf.train.Example is decoded by protobuf-c (code generated at
** build time from proto/example.proto and proto/feature.proto); the named
** feature's list is checked against the requested dtype and shape and
** copied out. A malformed proto, a wrong kind of list or a wrong number of
** values is InvalidArgumentError naming the feature and the record.
*/
#include <stdlib.h>
#include <string.h>
#include "cpu.h"
#include "../op.h"
#include "../tensor.h"
#include "example.pb-c.h"

typedef Tensorflow__Example Example;
typedef Tensorflow__Feature Feature;

static const char *kind_name(int k) {
    switch (k) {
    case TENSORFLOW__FEATURE__KIND_BYTES_LIST: return "bytes_list";
    case TENSORFLOW__FEATURE__KIND_FLOAT_LIST: return "float_list";
    case TENSORFLOW__FEATURE__KIND_INT64_LIST: return "int64_list";
    default: return "no list";
    }
}
static int kind_of(ltf_dtype dt) {
    return dt == LTF_DTYPE_STRING ? TENSORFLOW__FEATURE__KIND_BYTES_LIST
         : dt == LTF_DTYPE_FLOAT32 ? TENSORFLOW__FEATURE__KIND_FLOAT_LIST : TENSORFLOW__FEATURE__KIND_INT64_LIST;
}

static const Feature *find(const Example *e, const char *key, size_t klen) {
    if (!e || !e->features) return NULL;
    for (size_t i = 0; i < e->features->n_feature; i++) {
        const Tensorflow__Features__FeatureEntry *en = e->features->feature[i];
        if (en && en->key && strlen(en->key) == klen && memcmp(en->key, key, klen) == 0) return en->value;
    }
    return NULL;
}

/* Number of values of a feature's list (0 for an empty Feature or no list: TensorFlow reads those as empty). */
static size_t count_of(const Feature *f) {
    if (!f) return 0;
    switch (f->kind_case) {
    case TENSORFLOW__FEATURE__KIND_BYTES_LIST: return f->bytes_list ? f->bytes_list->n_value : 0;
    case TENSORFLOW__FEATURE__KIND_FLOAT_LIST: return f->float_list ? f->float_list->n_value : 0;
    case TENSORFLOW__FEATURE__KIND_INT64_LIST: return f->int64_list ? f->int64_list->n_value : 0;
    default: return 0;
    }
}

/* Copy values [from, from + n) of 'f' to element 'at' on of 'o'. */
static ltf_status put_values(ltf_ctx *ctx, ltf_tensor *o, int64_t at, const Feature *f, size_t from, size_t n) {
    void *D = LTF_DATA(o);
    switch (o->dtype) {
    case LTF_DTYPE_FLOAT32: memcpy((float *)D + at, f->float_list->value + from, n * sizeof(float)); break;
    case LTF_DTYPE_INT64:
        for (size_t i = 0; i < n; i++) ((int64_t *)D)[at + (int64_t)i] = f->int64_list->value[from + i];
        break;
    default:
        for (size_t i = 0; i < n; i++) {
            ProtobufCBinaryData b = f->bytes_list->value[from + i];
            ltf_string **S = D;
            if (b.len) {
                S[at + (int64_t)i] = ltf_string_new((const char *)b.data, b.len);
                if (!S[at + (int64_t)i]) return ltf_fail_oom(ctx, "parse_example", b.len);
            }
        }
    }
    return LTF_OK;
}

/* Copy 'n' default values (cycling over 'dn' of them) to element 'at' on of 'o'; zeros/empty when dn == 0. */
static void put_default(ltf_tensor *o, int64_t at, const ltf_tensor *dflt, int64_t n) {
    int64_t dn = dflt->numel;
    if (dn == 0) return;  /* the output is zero-filled */
    const void *S = LTF_DATA(dflt);
    void *D = LTF_DATA(o);
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i % dn;
        switch (o->dtype) {
        case LTF_DTYPE_FLOAT32: ((float *)D)[at + i] = ((const float *)S)[j]; break;
        case LTF_DTYPE_INT64: ((int64_t *)D)[at + i] = ((const int64_t *)S)[j]; break;
        default: {
            ltf_string *s = ((ltf_string *const *)S)[j];
            if (s) s->refs++;
            ((ltf_string **)D)[at + i] = s;
        }
        }
    }
}

LTF_CPU_KERNEL(ltf_cpu_parse_example_feature) {
    (void)nin; (void)nout;
    const ltf_tensor *x = in[0], *dflt = in[2];
    const ltf_string *ks = ((ltf_string *const *)LTF_DATA(in[1]))[0];
    const char *key = ks ? ks->bytes : "";
    size_t klen = ks ? ks->len : 0;
    int kind = (int)a->i[0], allow_missing = (int)a->i[2];
    ltf_dtype dt = (ltf_dtype)a->i[1];
    int64_t B = x->numel, per = 1;
    for (int d = 0; d < a->nints; d++)
        if (a->ints[d] < 0 || __builtin_mul_overflow(per, a->ints[d], &per))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "parse_example: the feature's shape is too large");
    const char *kname = kind == 0 ? "FixedLenFeature" : kind == 1 ? "VarLenFeature" : "FixedLenSequenceFeature";
    ltf_status st = LTF_OK;
    if (kind == 0 && dflt->numel != 0 && dflt->numel != 1 && dflt->numel != per)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "parse_example: feature '%.100s': the default value has %lld elements, the shape needs %lld",
                        key, (long long)dflt->numel, (long long)per);
    Example **ex = calloc((size_t)(B ? B : 1), sizeof *ex);
    size_t *counts = calloc((size_t)(B ? B : 1), sizeof *counts);
    const Feature **fs = calloc((size_t)(B ? B : 1), sizeof *fs);
    ltf_tensor *o0 = NULL, *o1 = NULL, *o2 = NULL;
    if (!ex || !counts || !fs) {
        st = ltf_fail_oom(ctx, "parse_example", (size_t)B * 24);
        goto done;
    }
    size_t maxc = 0, total = 0;
    for (int64_t i = 0; i < B; i++) {
        const ltf_string *s = ((ltf_string *const *)LTF_DATA(x))[i];
        ex[i] = tensorflow__example__unpack(NULL, s ? s->len : 0, s ? (const uint8_t *)s->bytes : (const uint8_t *)"");
        if (!ex[i]) {
            st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                          "parse_example: record %lld: could not parse a tf.train.Example (%zu bytes of malformed protobuf)",
                          (long long)(i + 1), s ? s->len : (size_t)0);
            goto done;
        }
        const Feature *f = find(ex[i], key, klen);
        fs[i] = f;
        if (f && f->kind_case != TENSORFLOW__FEATURE__KIND__NOT_SET && (int)f->kind_case != kind_of(dt)) {
            st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                          "parse_example: feature '%.100s' in record %lld: expected %s (%s), got %s", key,
                          (long long)(i + 1), kind_name(kind_of(dt)), ltf_dtype_name(dt),
                          kind_name(f->kind_case));
            goto done;
        }
        if (f && f->kind_case == TENSORFLOW__FEATURE__KIND__NOT_SET) fs[i] = f = NULL;
        size_t c = count_of(f);
        if (kind == 0) {
            if (!f && dflt->numel == 0) {
                st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                              "parse_example: feature '%.100s' (%s, %s) is required but missing in record %lld "
                              "(give a default_value)", key, kname, ltf_dtype_name(dt), (long long)(i + 1));
                goto done;
            }
            if (f && (int64_t)c != per) {
                st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                              "parse_example: feature '%.100s' in record %lld: %zu values, the shape needs %lld", key,
                              (long long)(i + 1), c, (long long)per);
                goto done;
            }
        } else if (kind == 2) {
            if (!f && !allow_missing) {
                st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                              "parse_example: feature '%.100s' (FixedLenSequenceFeature) is missing in record %lld "
                              "and allow_missing is false", key, (long long)(i + 1));
                goto done;
            }
            if (per == 0 ? c != 0 : (int64_t)c % per != 0) {
                st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                              "parse_example: feature '%.100s' in record %lld: %zu values is not a multiple of %lld "
                              "(the element shape's size)", key, (long long)(i + 1), c, (long long)per);
                goto done;
            }
        }
        counts[i] = c;
        if (c > maxc) maxc = c;
        total += c;
    }
    int64_t dims[LTF_MAX_RANK];
    int r = 0;
    if (kind == 1) {
        int64_t d0[2] = {(int64_t)total, x->rank + 1}, d1 = (int64_t)total, d2 = x->rank + 1;
        o0 = ltf_tensor_new(ctx, LTF_DTYPE_INT64, 2, d0);
        o1 = o0 ? ltf_tensor_new(ctx, dt, 1, &d1) : NULL;
        o2 = o1 ? ltf_tensor_new(ctx, LTF_DTYPE_INT64, 1, &d2) : NULL;
        if (!o2) { st = ltf_ctx_status(ctx) ? ltf_ctx_status(ctx) : LTF_ERR_RESOURCE_EXHAUSTED; goto done; }
        int64_t *I = LTF_DATA(o0), *S = LTF_DATA(o2), at = 0;
        for (int64_t i = 0; i < B && st == LTF_OK; i++) {
            for (size_t j = 0; j < counts[i]; j++) {
                if (x->rank) { I[2 * at] = i; I[2 * at + 1] = (int64_t)j; }
                else I[at] = (int64_t)j;
                at++;
            }
            if (counts[i]) st = put_values(ctx, o1, at - (int64_t)counts[i], fs[i], 0, counts[i]);
        }
        if (x->rank) { S[0] = B; S[1] = (int64_t)maxc; }
        else S[0] = (int64_t)maxc;
        goto done;
    }
    if (x->rank == 1) dims[r++] = B;
    int64_t rows = 0;
    if (kind == 2) {
        rows = per ? (int64_t)maxc / per : 0;
        dims[r++] = rows;
    }
    for (int d = 0; d < a->nints; d++) dims[r++] = a->ints[d];
    st = ltf_shape_check(ctx, "parse_example", dt, r, dims);
    if (st) goto done;
    o0 = ltf_tensor_new(ctx, dt, r, dims);
    if (!o0) { st = ltf_ctx_status(ctx) ? ltf_ctx_status(ctx) : LTF_ERR_RESOURCE_EXHAUSTED; goto done; }
    int64_t stride = kind == 2 ? rows * per : per;
    for (int64_t i = 0; i < B && st == LTF_OK; i++) {
        int64_t at = i * stride;
        if (fs[i] && counts[i]) st = put_values(ctx, o0, at, fs[i], 0, counts[i]);
        if (st == LTF_OK && (int64_t)counts[i] < stride && (kind == 2 || !fs[i]))
            put_default(o0, at + (int64_t)counts[i], dflt, stride - (int64_t)counts[i]);
    }
done:
    if (ex) for (int64_t i = 0; i < B; i++) if (ex[i]) tensorflow__example__free_unpacked(ex[i], NULL);
    free(ex);
    free(counts);
    free(fs);
    if (st != LTF_OK) {
        ltf_tensor_release(o0);
        ltf_tensor_release(o1);
        ltf_tensor_release(o2);
        return st;
    }
    out[0] = o0;
    if (kind == 1) { out[1] = o1; out[2] = o2; }
    return LTF_OK;
}
