/*
** device.h: devices other than the host. Modules loaded on demand (one
** backend per context and ordinal), tensors on a device, copies, and the
** placement of eager ops (docs/devices.md).
*/
#ifndef LTF_DEVICE_H
#define LTF_DEVICE_H

#include "op.h"
#include "storage.h"

/* Engine calls an in-tree device module may make: the module is loaded
** with dlopen beside an engine that may itself sit in a module loaded
** RTLD_LOCAL (tf/core.so), so it cannot link to the engine's symbols. */
typedef struct ltf_core_api {
    const char *(*op_name)(ltf_op_id op);
    const ltf_op_def *(*op_def)(ltf_op_id op);   /* NULL out of range */
    uint64_t (*rand64)(ltf_ctx *ctx);            /* next 64 bits of the context's generator */
    int (*half_native)(ltf_op_id op);            /* ltf_half_cpu_native (half.h) */
    /* Kernels that size their outputs themselves (LTF_OP_KERNEL_ALLOCATES)
    ** make them with these: ltf_shape_check, ltf_tensor_empty_on (a tensor
    ** on 'type':'ordinal'; NULL with the context's failure set) and
    ** ltf_tensor_release (what they made, on a later failure). */
    ltf_status (*shape_check)(ltf_ctx *ctx, const char *op, ltf_dtype dt, int rank, const int64_t *dims);
    ltf_tensor *(*tensor_empty_on)(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims, ltf_device_type type,
                                   int ordinal, const char *what);
    void (*tensor_release)(ltf_tensor *t);
} ltf_core_api;
/* The table every context points at ('ctx->core_api', set by ltf_ctx_new). */
LTF_INTERNAL extern const ltf_core_api ltf_core_api_table;

/* "/gpu:0" style name of a device into 'buf' (returned). */
#define LTF_DEVICE_STR 24
LTF_INTERNAL const char *ltf_device_str(ltf_device_type type, int ordinal, char *buf);
/* The backend of device 'type':'ordinal', opened on first use; NULL with a
** NOT_FOUND failure naming 'what' when absent. */
LTF_INTERNAL const ltf_backend *ltf_device_get(ltf_ctx *ctx, ltf_device_type type, int ordinal, const char *what);

/* Copy 'n' bytes from the start of 't''s elements into host memory 'dst'
** (a device tensor: after its queued work). For predicates and sizes that
** host code must read. */
LTF_INTERNAL ltf_status ltf_tensor_read(ltf_ctx *ctx, const ltf_tensor *t, void *dst, size_t n);
/* Overwrite 'dst''s elements with 'src''s (same dtype and element count,
** same device or not). */
LTF_INTERNAL ltf_status ltf_tensor_copy_into(ltf_ctx *ctx, ltf_tensor *dst, const ltf_tensor *src);

/* ltf_op_run past inference when a device other than the host is involved
** (an input on it, or a device scope): placement, copies, the device's
** kernel or soft placement, and the tape. 'types'/'n': the inferred outputs. */
/* Whether ops with no scope and every input on the host go to /gpu:0
** (default placement on and a GPU visible). */
LTF_INTERNAL int ltf_device_default_gpu(ltf_ctx *ctx);
LTF_INTERNAL ltf_status ltf_device_op_run(ltf_ctx *ctx, const ltf_op_def *def, ltf_op_id op, ltf_tensor *const *in,
                                          int nin, const ltf_attrs *a, const ltf_attrs *given, const ltf_type *types,
                                          int n, ltf_tensor **out);
/* Count one run of op id or LTF_KERNEL_STATS_* row 'op' as 'how'
** (LTF_KERNEL_RAN_*) in the context's device kernel statistics. */
LTF_INTERNAL void ltf_device_count(ltf_ctx *ctx, int op, int how);
/* The device a variable's value lives on, for a resource handle; -1 otherwise. */
LTF_INTERNAL int ltf_device_of_handle(const ltf_tensor *h, int *ordinal);

#endif
