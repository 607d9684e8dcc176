/*
** ltf_backend.h: what a device backend provides to the core: memory, copies
** and (devices other than the host) kernels, a stream and errors.
**
** The CPU backend lives in cpu/ and registers its kernels in each op's
** definition (op.h: def->kernel[LTF_DEVICE_CPU]). Other devices are
** separate shared modules, loaded on demand (device.c) so a CPU-only user
** never needs their libraries at run time:
**   libltf_cuda.so    core/cuda/ built with nvcc (LTF_CUDA=ON)
**   libltf_gpusim.so  the same backend interface over host memory that
**                     behaves like a separate device (explicit copies only,
**                     deferred completion); used by the specs in CI when
**                     LTF_GPU_SIM=1, so placement, copies, allocator and
**                     stream bookkeeping are tested without a GPU.
** A module exports one function, LTF_DEVICE_MODULE_OPEN (below).
**
** Device kernels have the CPU kernels' signature (ltf_kernel_fn, op.h);
** their tensors' LTF_DATA are device pointers, which the host must never
** dereference. They launch asynchronously on the backend's stream; the core
** calls 'sync' only where the host reads a value (copy to host does it).
*/
#ifndef LTF_BACKEND_H
#define LTF_BACKEND_H

#include "ltf.h"

struct ltf_fused;                     /* fused.h */

typedef struct ltf_backend {
    const char *name;                 /* "cpu", "cuda", "gpusim" */
    ltf_device_type type;
    /* Allocate 'nbytes' device bytes; NULL when out of memory (the core
    ** then runs one emergency collection through its hooks and retries
    ** before failing with RESOURCE_EXHAUSTED). */
    void *(*alloc)(void *bctx, size_t nbytes);
    void  (*free)(void *bctx, void *p, size_t nbytes);
    /* Copy between this device and the host ('to_host' chooses the way):
    ** 'dst' is host memory when to_host, else 'src' is. Ordered on the
    ** stream; a copy to the host returns once the bytes are there. 0 ok. */
    int   (*copy)(void *bctx, void *dst, const void *src, size_t nbytes, int to_host);
    void *bctx;

    /* {==== Devices other than the host (NULL / 0 in the CPU backend) */
    int   ordinal;                    /* N of "/gpu:N" */
    /* Copy within the device, ordered on the stream. 0 ok. */
    int   (*copy_d2d)(void *bctx, void *dst, const void *src, size_t nbytes);
    /* Fill 'nbytes' at 'dst' with zero bytes, on the stream. 0 ok. */
    int   (*zero)(void *bctx, void *dst, size_t nbytes);
    /* Wait until everything queued on the stream has completed. 0 ok. */
    int   (*sync)(void *bctx);
    /* This device's kernel for op 'op' (an ltf_op_id), as an ltf_kernel_fn
    ** cast to void *; NULL when the device has none (the core then runs
    ** the CPU kernel over copies: soft placement, docs/devices.md). */
    void *(*kernel)(void *bctx, int op);
    /* Text of the last failure ("cudaErrorMemoryAllocation: out of memory"),
    ** for the error object the core raises; never NULL. */
    const char *(*error)(void *bctx);
    /* Bytes handed out to live tensors, and bytes held by the caching
    ** allocator in all (reported to Lua's collector). */
    size_t (*bytes_in_use)(void *bctx);
    size_t (*bytes_reserved)(void *bctx);
    /* Give cached blocks back to the device (after an emergency collection). */
    void  (*trim)(void *bctx);
    /* Release everything; the backend is not used afterwards. */
    void  (*close)(void *bctx);
    /* What 'kernel' returns for 'op': LTF_KERNEL_DEVICE (a device kernel) or
    ** LTF_KERNEL_EMULATED (the simulated GPU running the op's CPU kernel on
    ** its stream, for ops without a device body); NULL: every kernel is a
    ** device kernel. Only for the counts of ltf_ctx_device_kernel_stats. */
    int   (*kernel_kind)(void *bctx, int op);
    /* }==== */

    /* {==== Optional entries, added after the first version of this struct
    ** (a module that predates them leaves them NULL) */
    /* Run fused elementwise group 'f' (fused.h: a plan's straight-line
    ** program of unary/binary/cast members over loads) on this device, as
    ** cpu/fused.c's ltf_cpu_fused_run does on the host: 'ext' (the group's
    ** external inputs, shapes as planned) and 'out' (f->numel elements of
    ** f->dtype, possibly one of the inputs) are on this device. Queued on the
    ** stream like a kernel. Returns LTF_OK; LTF_ERR_UNIMPLEMENTED, with
    ** nothing queued, when the device cannot run this group (a member
    ** without a device form: the plan executor then runs it on the host over
    ** copies); another status with the message in ctx on failure. NULL: the
    ** executor runs every group on the host over copies. Used by plan.c
    ** (docs/devices.md, "Traced functions on a device"). */
    int   (*fused_run)(void *bctx, ltf_ctx *ctx, const struct ltf_fused *f, ltf_tensor *const *ext, int next,
                       ltf_tensor *out);
    /* Graphs of queued work (CUDA graphs), used by plan.c to replay a device
    ** plan's launches with one call (docs/cuda.md, "Graph replay"). Between
    ** graph_begin and graph_end the work queued on the stream (kernels,
    ** fused groups, copies and fills within the device) is recorded, not
    ** run; graph_end returns the recording, or NULL when it cannot be
    ** replayed (something during the capture needed the host: a copy to or
    ** from it, a sync; a CUDA capture error) and the recorded work is then
    ** dropped. graph_launch queues one run of the recorded work on the
    ** stream (the first run too); it reads and writes the very buffers the
    ** capture used, which the caller keeps allocated until graph_free.
    ** 0 ok; graph_free releases a recording. All four or none. */
    int   (*graph_begin)(void *bctx);
    void *(*graph_end)(void *bctx);
    int   (*graph_launch)(void *bctx, void *graph);
    void  (*graph_free)(void *bctx, void *graph);
    /* Whether kernel(op) takes float16/bfloat16 tensors (and variables
    ** holding them) as they are. NULL, or 0 for an op: the core runs that
    ** kernel on float32 copies made on the device with kernel(LTF_OP_CAST),
    ** which must then take them (half.h, ltf_half_run). */
    int   (*takes_half)(void *bctx, int op);
    /* }==== */
} ltf_backend;

enum { LTF_KERNEL_DEVICE = 0, LTF_KERNEL_EMULATED = 1 };

/* The CPU backend (cpu/backend.c); contexts start with it. */
extern const ltf_backend ltf_cpu_backend;

/* A device module's entry point, looked up with dlsym by device.c:
**   int ltf_device_module_open(ltf_ctx *ctx, int ordinal, ltf_backend *out,
**                              char *err, size_t errlen);
** Fills '*out' for device 'ordinal' and returns 0; returns -1 with a message
** in 'err' when it cannot (no such device, driver missing). A call with
** 'out' NULL returns the number of devices present (0 with no GPU). */
#define LTF_DEVICE_MODULE_OPEN "ltf_device_module_open"
typedef int (*ltf_device_module_open_fn)(ltf_ctx *ctx, int ordinal, ltf_backend *out, char *err,
                                         size_t errlen);

#endif
