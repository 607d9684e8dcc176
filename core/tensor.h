/*
** tensor.h: storages (reference-counted bytes on a device) and tensors
** (dtype + shape + a storage reference, or a graph value when symbolic).
** Tensors are always contiguous and row-major; views (reshape, squeeze,
** expand_dims, identity) share their input's storage.
*/
#ifndef LTF_TENSOR_H
#define LTF_TENSOR_H

#include "ctx.h"

typedef struct ltf_storage {
    int32_t refs;             /* atomic when 'shared' */
    ltf_device_type device;
    int ordinal;              /* N of /gpu:N (0 on the host) */
    ltf_dtype dtype;          /* element type (string storages release elements) */
    int shared;               /* ltf_storage_share: immutable, any thread may release it */
    size_t nbytes;
    void *data;
    ltf_ctx *ctx;             /* retained: counters live there */
    void (*deleter)(void *data, void *ud);  /* wrapped host buffer, else NULL */
    void *ud;
    int inline_data;          /* data sits in the same block as this header */
    void *block;              /* what free() gets when the last reference goes */
    int block_class;          /* size class of a recyclable block, -1 if none */
    size_t block_size;        /* bytes of 'block' (large blocks are recycled too) */
} ltf_storage;

struct ltf_graph;             /* graph.h */

struct ltf_tensor {
    int32_t refs;             /* atomic when 'shared' */
    ltf_dtype dtype;
    int rank;                 /* LTF_UNKNOWN_RANK for a symbolic value of unknown rank */
    int shared;               /* ltf_tensor_share: immutable, any thread may retain/release it */
    int64_t dims[LTF_MAX_RANK];
    int64_t numel;            /* -1 when a dim is unknown */
    size_t offset;            /* bytes into the storage */
    ltf_storage *storage;     /* NULL when symbolic */
    ltf_ctx *ctx;
    struct ltf_graph *graph;  /* graph being traced that produces it (retained) when symbolic */
    int node;                 /* index of the producing node in 'graph' */
    int out_index;            /* which output of that node */
    int64_t id;               /* unique per context: tapes key on it */
    void *tape_entry;         /* tape.c: gradient bookkeeping, NULL when none */
};

/* Element count of a known shape; -1 when a dim is unknown; INT64_MAX when
** the product overflows (a shape that passed ltf_shape_check never does). */
LTF_INTERNAL int64_t ltf_shape_numel(int rank, const int64_t *dims);
/* Whether a partial shape is one a tensor of dtype 'dt' may have: rank in
** -1..LTF_MAX_RANK, dims >= -1, and its known dims' product times the
** element size fits in int64 (so every later numel and byte count does).
** Fails as "<op>: ..." (INVALID_ARGUMENT). */
LTF_INTERNAL ltf_status ltf_shape_check(ltf_ctx *ctx, const char *op, ltf_dtype dt, int rank, const int64_t *dims);
/* New tensor with fresh storage, contents uninitialized (strings: empty). */
LTF_INTERNAL ltf_tensor *ltf_tensor_empty(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims);
/* The same on device 'type':'ordinal' ('what' names the op in an
** out-of-memory message). */
LTF_INTERNAL ltf_tensor *ltf_tensor_empty_on(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims,
                                             ltf_device_type type, int ordinal, const char *what);
/* New tensor sharing 't''s storage with another shape of the same element count. */
LTF_INTERNAL ltf_tensor *ltf_tensor_view(ltf_ctx *ctx, ltf_tensor *t, int rank, const int64_t *dims);
/* New symbolic tensor (no storage) of the given partial type. */
LTF_INTERNAL ltf_tensor *ltf_tensor_symbolic(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims);
/* Deep copy into fresh storage. */
LTF_INTERNAL ltf_tensor *ltf_tensor_clone(ltf_ctx *ctx, const ltf_tensor *t);

#define LTF_DATA(t) ((void *)((char *)(t)->storage->data + (t)->offset))

#endif
