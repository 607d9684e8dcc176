/*
** tensor.c: tensor construction, views and reference counting.
** A fresh CPU tensor is one allocation: tensor header, storage header and
** data (storage.c); the block goes when the storage's last reference does.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "storage.h"
#include "device.h"
#include "graph.h"
#include "shape.h"

int64_t ltf_shape_numel(int rank, const int64_t *dims) {
    if (rank < 0) return -1;
    int64_t n = 1;
    int over = 0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) return -1;
        if (__builtin_mul_overflow(n, dims[i], &n)) over = 1;
    }
    return over ? INT64_MAX : n;   /* saturates: shapes are checked before use (ltf_shape_check) */
}

ltf_status ltf_shape_check(ltf_ctx *ctx, const char *op, ltf_dtype dt, int rank, const int64_t *dims) {
    if (rank < LTF_UNKNOWN_RANK || rank > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: rank %d is outside 0..%d", op, rank, LTF_MAX_RANK);
    size_t es = ltf_dtype_size(dt);
    if (es == 0) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: invalid dtype %d", op, (int)dt);
    int64_t n = (int64_t)es;   /* bytes, so that numel * element size fits too */
    for (int i = 0; i < rank; i++) {
        if (dims[i] < LTF_UNKNOWN_DIM)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: dimension %d is %lld, must be >= 0", op, i + 1,
                            (long long)dims[i]);
        if (dims[i] >= 0 && __builtin_mul_overflow(n, dims[i], &n)) {
            char buf[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: shape %s of %s has too many elements (more than 2^63 bytes)", op,
                            ltf_shape_str(rank, dims, buf, sizeof buf), ltf_dtype_name(dt));
        }
    }
    return LTF_OK;
}

static void set_shape(ltf_tensor *t, int rank, const int64_t *dims) {
    t->rank = rank;
    for (int i = 0; i < rank && i < LTF_MAX_RANK; i++) t->dims[i] = dims[i];
    t->numel = ltf_shape_numel(rank, dims);
}

static ltf_status check_shape(ltf_ctx *ctx, int rank, const int64_t *dims, int64_t *numel) {
    *numel = 0;
    if (rank < 0 || rank > LTF_MAX_RANK)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "tensor: rank %d is outside 0..%d", rank, LTF_MAX_RANK);
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "tensor: dimension %d is %lld, must be >= 0", i + 1, (long long)dims[i]);
        if (__builtin_mul_overflow(n, dims[i], &n))   /* no division: this runs for every tensor made */
            return ltf_fail(ctx, LTF_ERR_RESOURCE_EXHAUSTED, "tensor: too many elements");
    }
    *numel = n;
    return LTF_OK;
}

static void init_header(ltf_ctx *ctx, ltf_tensor *t, ltf_dtype dt, int rank, const int64_t *dims) {
    t->refs = 1;
    t->shared = 0;
    t->dtype = dt;
    set_shape(t, rank, dims);
    t->offset = 0;
    t->storage = NULL;
    t->ctx = ctx;
    t->graph = NULL;
    t->node = -1;
    t->out_index = 0;
    t->id = ltf_ctx_next_id(ctx);
    t->tape_entry = NULL;
}

ltf_tensor *ltf_tensor_empty(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims) {
    int64_t n;
    if (check_shape(ctx, rank, dims, &n) != LTF_OK) return NULL;
    size_t es = ltf_dtype_size(dt);
    if (es == 0) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor: invalid dtype %d", (int)dt);
        return NULL;
    }
    size_t nbytes;
    if (__builtin_mul_overflow((size_t)n, es, &nbytes)) {
        ltf_fail(ctx, LTF_ERR_RESOURCE_EXHAUSTED, "tensor: too many elements");
        return NULL;
    }
    ltf_storage *s;
    ltf_tensor *t = ltf_storage_alloc_block(ctx, sizeof(ltf_tensor), nbytes, &s);
    if (!t) return NULL;
    init_header(ctx, t, dt, rank, dims);
    s->dtype = dt;
    t->storage = s;
    /* elements that the storage releases (strings, variable references)
    ** start NULL, so a tensor released before it is filled frees nothing */
    if (dt == LTF_DTYPE_STRING || dt == LTF_DTYPE_RESOURCE) memset(s->data, 0, s->nbytes);
    return t;
}

ltf_tensor *ltf_tensor_empty_on(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims, ltf_device_type type,
                                int ordinal, const char *what) {
    if (type == LTF_DEVICE_CPU) return ltf_tensor_empty(ctx, dt, rank, dims);
    int64_t n;
    if (check_shape(ctx, rank, dims, &n) != LTF_OK) return NULL;
    size_t es = ltf_dtype_size(dt);
    if (es == 0 || dt == LTF_DTYPE_STRING || dt == LTF_DTYPE_RESOURCE) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: tensors of dtype %s stay on the CPU", what,
                 ltf_dtype_name(dt) ? ltf_dtype_name(dt) : "?");
        return NULL;
    }
    if ((uint64_t)n > SIZE_MAX / es) {
        ltf_fail(ctx, LTF_ERR_RESOURCE_EXHAUSTED, "tensor: too many elements");
        return NULL;
    }
    ltf_tensor *t = malloc(sizeof *t);
    if (!t) {
        ltf_fail_oom(ctx, "tensor", sizeof *t);
        return NULL;
    }
    ltf_storage *s = ltf_storage_new_device(ctx, type, ordinal, (size_t)n * es, what);
    if (!s) {
        free(t);
        return NULL;
    }
    s->dtype = dt;
    init_header(ctx, t, dt, rank, dims);
    t->storage = s;
    return t;
}

/* Host-made tensors hold values: a resource element is a counted variable
** reference, which only ltf_variable_new makes. */
static int refuse_resource(ltf_ctx *ctx, ltf_dtype dt, const char *what) {
    if (dt != LTF_DTYPE_RESOURCE) return 0;
    ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: dtype resource cannot be made from data (variables make their handles)",
             what);
    return 1;
}

ltf_tensor *ltf_tensor_new(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims) {
    if (refuse_resource(ctx, dt, "tensor")) return NULL;
    ltf_tensor *t = ltf_tensor_empty(ctx, dt, rank, dims);
    if (t) memset(t->storage->data, 0, t->storage->nbytes);
    return t;
}

ltf_tensor *ltf_tensor_from_data(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims,
                                 const void *data) {
    if (refuse_resource(ctx, dt, "tensor")) return NULL;
    ltf_tensor *t = ltf_tensor_empty(ctx, dt, rank, dims);
    if (!t) return NULL;
    if (dt == LTF_DTYPE_STRING) {
        const char *const *src = data;
        ltf_string **dst = LTF_DATA(t);
        for (int64_t i = 0; i < t->numel; i++) {
            if (!src[i] || !src[i][0]) continue;
            dst[i] = ltf_string_new(src[i], strlen(src[i]));
            if (!dst[i]) {
                ltf_tensor_release(t);
                ltf_fail_oom(ctx, "string", strlen(src[i]));
                return NULL;
            }
        }
    } else if (t->storage->nbytes) {
        memcpy(LTF_DATA(t), data, t->storage->nbytes);
    }
    return t;
}

static const char *dtname(ltf_dtype dt) { return ltf_dtype_name(dt) ? ltf_dtype_name(dt) : "?"; }

ltf_tensor *ltf_tensor_wrap(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims,
                            void *data, void (*deleter)(void *, void *), void *ud) {
    int64_t n;
    if (check_shape(ctx, rank, dims, &n) != LTF_OK) return NULL;
    if (dt == LTF_DTYPE_STRING || dt == LTF_DTYPE_RESOURCE || ltf_dtype_size(dt) == 0) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor_wrap: dtype %s cannot wrap a host buffer", dtname(dt));
        return NULL;
    }
    /* ops read the elements through typed pointers: as ltf_tensor_wrap_strided */
    if ((uintptr_t)data % ltf_dtype_size(dt) != 0) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor_wrap: data %p is not aligned to %zu bytes (%s); "
                 "ltf_tensor_wrap_strided with LTF_WRAP_COPY copies it", data, ltf_dtype_size(dt), dtname(dt));
        return NULL;
    }
    ltf_tensor *t = malloc(sizeof *t);
    if (!t) {
        ltf_fail_oom(ctx, "tensor", sizeof *t);
        return NULL;
    }
    ltf_storage *s = ltf_storage_wrap(ctx, data, (size_t)n * ltf_dtype_size(dt), deleter, ud);
    if (!s) {
        free(t);
        return NULL;
    }
    s->dtype = dt;
    init_header(ctx, t, dt, rank, dims);
    t->storage = s;
    return t;
}

ltf_tensor *ltf_tensor_view(ltf_ctx *ctx, ltf_tensor *src, int rank, const int64_t *dims) {
    ltf_tensor *t = malloc(sizeof *t);
    if (!t) {
        ltf_fail_oom(ctx, "tensor", sizeof *t);
        return NULL;
    }
    init_header(ctx, t, src->dtype, rank, dims);
    t->storage = src->storage;
    t->offset = src->offset;
    ltf_storage_retain(t->storage);
    return t;
}

ltf_tensor *ltf_tensor_symbolic(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims) {
    if (ltf_shape_check(ctx, "tensor", dt, rank, dims) != LTF_OK) return NULL;
    ltf_tensor *t = malloc(sizeof *t);
    if (!t) {
        ltf_fail_oom(ctx, "tensor", sizeof *t);
        return NULL;
    }
    init_header(ctx, t, dt, rank, dims);
    ltf_ctx_retain(ctx);
    return t;
}

ltf_tensor *ltf_tensor_clone(ltf_ctx *ctx, const ltf_tensor *src) {
    if (src->storage->device != LTF_DEVICE_CPU) {
        ltf_tensor *d = ltf_tensor_empty_on(ctx, src->dtype, src->rank, src->dims, src->storage->device,
                                            src->storage->ordinal, "copy");
        if (d && ltf_tensor_copy_into(ctx, d, src) != LTF_OK) {
            ltf_tensor_release(d);
            return NULL;
        }
        return d;
    }
    ltf_tensor *t = ltf_tensor_empty(ctx, src->dtype, src->rank, src->dims);
    if (!t) return NULL;
    memcpy(LTF_DATA(t), LTF_DATA(src), t->storage->nbytes);
    if (t->dtype == LTF_DTYPE_STRING) ltf_strings_retain(LTF_DATA(t), t->numel);
    return t;
}

ltf_tensor *ltf_tensor_retain(ltf_tensor *t) {
    if (t) ltf_ref_inc(&t->refs, t->shared);
    return t;
}

void ltf_tensor_release(ltf_tensor *t) {
    if (!t || ltf_ref_dec(&t->refs, t->shared) > 0) return;
    ltf_storage *s = t->storage;
    if (!s) {                      /* symbolic */
        ltf_ctx *ctx = t->ctx;
        struct ltf_graph *g = t->graph;
        free(t);
        ltf_graph_release(g);
        ltf_ctx_release(ctx);
        return;
    }
    int embedded = s->inline_data && (void *)t == s->block;
    if (!embedded) free(t);
    ltf_storage_release(s);        /* frees an embedded header with the block */
}

ltf_dtype ltf_tensor_dtype(const ltf_tensor *t) { return t->dtype; }
int ltf_tensor_rank(const ltf_tensor *t) { return t->rank; }
const int64_t *ltf_tensor_dims(const ltf_tensor *t) { return t->dims; }
int64_t ltf_tensor_num_elements(const ltf_tensor *t) { return t->numel; }
int ltf_tensor_is_symbolic(const ltf_tensor *t) { return t->storage == NULL; }
ltf_device_type ltf_tensor_device(const ltf_tensor *t) {
    return t->storage ? t->storage->device : LTF_DEVICE_CPU;
}
void *ltf_tensor_data(const ltf_tensor *t) { return t->storage ? LTF_DATA(t) : NULL; }

/* {==== Host access: wrapping layouts, reading back, sharing */

static void ints_str(int n, const int64_t *v, char *buf, size_t cap) {
    size_t k = (size_t)snprintf(buf, cap, "(");
    for (int i = 0; i < n && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "", (long long)v[i]);
    if (k < cap) snprintf(buf + k, cap - k, n == 1 ? ",)" : ")");
}

/* copy the strided elements at 'src' into row-major 'dst' */
static void gather_strided(char *dst, const char *src, int rank, const int64_t *dims, const int64_t *strides,
                           size_t es, int64_t numel) {
    int64_t idx[LTF_MAX_RANK] = {0};
    for (int64_t k = 0; k < numel; k++) {
        int64_t off = 0;
        for (int d = 0; d < rank; d++) off += idx[d] * strides[d];
        memcpy(dst + (size_t)k * es, src + off, es);
        for (int d = rank - 1; d >= 0; d--) {
            if (++idx[d] < dims[d]) break;
            idx[d] = 0;
        }
    }
}

ltf_tensor *ltf_tensor_wrap_strided(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims,
                                    const int64_t *strides, void *data, size_t size,
                                    void (*deleter)(void *, void *), void *ud, int flags) {
    int64_t n;
    if (check_shape(ctx, rank, dims, &n) != LTF_OK) return NULL;
    if (dt == LTF_DTYPE_STRING || dt == LTF_DTYPE_RESOURCE || ltf_dtype_size(dt) == 0) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor_wrap: dtype %s cannot wrap a host buffer", dtname(dt));
        return NULL;
    }
    size_t es = ltf_dtype_size(dt);
    int64_t rm[LTF_MAX_RANK];        /* the row-major strides */
    int64_t st[LTF_MAX_RANK];
    int64_t acc = (int64_t)es;
    for (int d = rank - 1; d >= 0; d--) {
        rm[d] = acc;
        acc = dims[d] ? acc * dims[d] : acc;
    }
    int contiguous = 1;
    uint64_t extent = 0;             /* one past the last byte an element touches */
    for (int d = 0; d < rank; d++) {
        st[d] = strides ? strides[d] : rm[d];
        if (st[d] < 0) {
            ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor_wrap: stride %d is %lld, must be >= 0", d + 1,
                     (long long)st[d]);
            return NULL;
        }
        if (dims[d] > 1 && st[d] != rm[d]) contiguous = 0;
        if (dims[d] > 0) {
            uint64_t span;
            if (__builtin_mul_overflow((uint64_t)(dims[d] - 1), (uint64_t)st[d], &span) ||
                __builtin_add_overflow(extent, span, &extent))
                extent = UINT64_MAX;
        }
    }
    if (n > 0 && (extent == UINT64_MAX || extent + es > size)) {
        char sh[LTF_SHAPE_BUF];
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor_wrap: shape %s of %s with these strides needs %llu bytes, the "
                 "buffer has %zu", ltf_shape_str(rank, dims, sh, sizeof sh), dtname(dt),
                 extent == UINT64_MAX ? (unsigned long long)UINT64_MAX : (unsigned long long)(extent + es), size);
        return NULL;
    }
    if (n > 0 && !data) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor_wrap: data is NULL");
        return NULL;
    }
    int aligned = ((uintptr_t)data % es) == 0;
    if (contiguous && aligned) return ltf_tensor_wrap(ctx, dt, rank, dims, data, deleter, ud);
    if (!(flags & LTF_WRAP_COPY)) {
        if (!aligned) {
            ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor_wrap: data %p is not aligned to %zu bytes (%s); pass "
                     "LTF_WRAP_COPY to copy", data, es, dtname(dt));
        } else {
            char got[160], want[160], sh[LTF_SHAPE_BUF];
            ints_str(rank, st, got, sizeof got);
            ints_str(rank, rm, want, sizeof want);
            ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor_wrap: strides %s are not row-major for shape %s of %s "
                     "(expected %s): cannot wrap without a copy; pass LTF_WRAP_COPY to copy", got,
                     ltf_shape_str(rank, dims, sh, sizeof sh), dtname(dt), want);
        }
        return NULL;
    }
    ltf_tensor *t = ltf_tensor_empty(ctx, dt, rank, dims);
    if (!t) return NULL;
    gather_strided(LTF_DATA(t), data, rank, dims, st, es, n);
    if (deleter) deleter(data, ud);
    return t;
}

ltf_status ltf_tensor_host_data(ltf_ctx *ctx, const ltf_tensor *t, void **data, size_t *nbytes) {
    *data = NULL;
    if (!t->storage)
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "tensor_data: a symbolic tensor has no value outside its trace");
    if (t->dtype == LTF_DTYPE_STRING || t->dtype == LTF_DTYPE_RESOURCE)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor_data: dtype %s has no host bytes to read in place",
                        dtname(t->dtype));
    if (t->storage->device != LTF_DEVICE_CPU)
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "tensor_data: the tensor is not in host memory; copy it "
                        "out with ltf_tensor_copy_to");
    *data = LTF_DATA(t);
    if (nbytes) *nbytes = (size_t)t->numel * ltf_dtype_size(t->dtype);
    return LTF_OK;
}

ltf_status ltf_tensor_copy_to(ltf_ctx *ctx, const ltf_tensor *t, void *dst, size_t nbytes) {
    if (!t->storage)
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "tensor_copy_to: a symbolic tensor has no value outside its trace");
    if (t->dtype == LTF_DTYPE_STRING || t->dtype == LTF_DTYPE_RESOURCE)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor_copy_to: dtype %s cannot be copied as bytes",
                        dtname(t->dtype));
    size_t need = (size_t)t->numel * ltf_dtype_size(t->dtype);
    if (nbytes != need)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor_copy_to: the tensor has %zu bytes, the buffer %zu", need,
                        nbytes);
    if (!need) return LTF_OK;
    const ltf_backend *be = ltf_storage_backend(t->storage);
    if (be->copy(be->bctx, dst, LTF_DATA(t), need, 1) != 0) {
        char name[LTF_DEVICE_STR];
        return ltf_fail(ctx, LTF_ERR_INTERNAL, "tensor_copy_to: the copy from %s failed: %s",
                        ltf_device_str(t->storage->device, t->storage->ordinal, name), be->error(be->bctx));
    }
    return LTF_OK;
}

ltf_ctx *ltf_tensor_context(const ltf_tensor *t) { return t->ctx; }
int ltf_tensor_is_shared(const ltf_tensor *t) { return t->shared; }

ltf_status ltf_tensor_share(ltf_ctx *ctx, ltf_tensor *t) {
    if (t->shared) return LTF_OK;
    if (!t->storage)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor_share: a symbolic tensor cannot be shared");
    if (t->dtype == LTF_DTYPE_STRING || t->dtype == LTF_DTYPE_RESOURCE)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "tensor_share: dtype %s cannot be shared (its elements are "
                        "reference-counted per context)", dtname(t->dtype));
    if (t->storage->device != LTF_DEVICE_CPU)
        return ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "tensor_share: only host tensors can be shared");
    ltf_storage_share(t->storage);
    t->shared = 1;
    return LTF_OK;
}
/* }==== */
