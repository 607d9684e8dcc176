/*
** ltf.h: the public C API of the luatf engine.
**
** Hosts (applications that embed Lua) and the Lua bindings use only this
** header. Every type is opaque. Ownership: results of *_new, *_copy,
** *_from_* and of ops are new references the caller owns and must release;
** getters lend; parameters are borrowed unless a comment says "takes
** ownership". Calls that can fail return 'ltf_status' (LTF_OK = 0) and leave
** the message in the context (ltf_ctx_error). Nothing here aborts, exits or
** longjmps: a host calls it from its own frames safely.
**
** Threads (docs/embedding.md): a context and everything made in it belong
** to one thread at a time. Tensors passed to ltf_tensor_share and graphs
** passed to ltf_graph_share become immutable and may then be used (read,
** retained, released, run) from any thread and any context at once.
*/
#ifndef LTF_H
#define LTF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define LTF_API __declspec(dllexport)
#else
#define LTF_API __attribute__((visibility("default")))
#endif

/* {==== Version: the library's (ltf_version) may differ from the header's */
#define LTF_VERSION_MAJOR 0
#define LTF_VERSION_MINOR 1
#define LTF_VERSION_PATCH 0
#define LTF_VERSION       "0.1.0"
/* }==== */

/* {==== Limits */
#define LTF_MAX_RANK      8    /* dimensions a tensor may have */
#define LTF_ATTR_LIST_MAX 32   /* entries in one attribute list */
#define LTF_ATTR_STR_MAX  64   /* bytes of the string attribute, NUL included */
#define LTF_UNKNOWN_DIM   (-1) /* a dimension not known until run time */
#define LTF_UNKNOWN_RANK  (-1) /* a shape whose rank is not known */
#define LTF_MAX_THREADS   64   /* threads one context may use (ltf_ctx_set_num_threads) */
/* }==== */

/* {==== Status codes: TensorFlow's error codes (the numbers of
** tensorflow/core/protobuf/error_codes.proto, so a host can pass them on as
** TF_Code / absl::StatusCode); TypeError, ValueError and RuntimeError are
** Python exceptions in TensorFlow, not status codes: they take numbers of
** their own, from 100, outside TensorFlow's range. */
typedef enum ltf_status {
    LTF_OK = 0,
    LTF_ERR_UNKNOWN = 2,              /* UnknownError (a host script failed with a plain Lua error) */
    LTF_ERR_INVALID_ARGUMENT = 3,     /* InvalidArgumentError */
    LTF_ERR_NOT_FOUND = 5,            /* NotFoundError */
    LTF_ERR_RESOURCE_EXHAUSTED = 8,   /* ResourceExhaustedError (out of memory) */
    LTF_ERR_FAILED_PRECONDITION = 9,  /* FailedPreconditionError */
    LTF_ERR_OUT_OF_RANGE = 11,        /* OutOfRangeError */
    LTF_ERR_UNIMPLEMENTED = 12,       /* UnimplementedError */
    LTF_ERR_INTERNAL = 13,            /* InternalError */
    LTF_ERR_UNAVAILABLE = 14,         /* UnavailableError (a peer of a collective is lost) */
    LTF_ERR_DATA_LOSS = 15,           /* DataLossError */
    LTF_ERR_TYPE = 100,               /* TypeError (dtype mismatch, wrong kind of value) */
    LTF_ERR_VALUE = 101,              /* ValueError */
    LTF_ERR_RUNTIME = 102             /* RuntimeError (misuse of a stateful object, as Python's) */
} ltf_status;

/* Version of the linked library, "MAJOR.MINOR.PATCH" (static string). */
LTF_API const char *ltf_version(void);
/* }==== */

/* {==== dtypes (ORDER DTYPE) */
typedef enum ltf_dtype {
    LTF_DTYPE_FLOAT32 = 0,
    LTF_DTYPE_FLOAT64,
    LTF_DTYPE_INT32,
    LTF_DTYPE_INT64,
    LTF_DTYPE_UINT8,
    LTF_DTYPE_BOOL,
    LTF_DTYPE_STRING,
    LTF_DTYPE_RESOURCE,   /* a handle to a variable (one 'ltf_variable *' per element) */
    LTF_DTYPE_FLOAT16,    /* IEEE 754 binary16 ("half"): one uint16_t bit pattern per element */
    LTF_DTYPE_BFLOAT16,   /* bfloat16: the high 16 bits of a float32, one uint16_t per element */
    LTF_DTYPE_COUNT
} ltf_dtype;
/* float16 and bfloat16 come after resource so that the numbers of the
** others (in checkpoints' metadata, in hosts) never change. Their elements
** are 16-bit patterns: build and read them with the conversions below.
** CPU kernels compute them in float32 (the inputs widened exactly, the
** floating outputs rounded back to nearest even), as TensorFlow does; ops
** that only move elements (reshape, transpose, concat, gather, ...) move
** the 2-byte patterns as they are. docs/tensors.md, "float16 and bfloat16". */

/* Name as TensorFlow writes it ("float32"); NULL for an invalid value. */
LTF_API const char *ltf_dtype_name(ltf_dtype dt);
/* Bytes per element (a string element is one pointer). */
LTF_API size_t ltf_dtype_size(ltf_dtype dt);
/* Parse a name ("float32", "int64", ...); returns 0 on success. */
LTF_API int ltf_dtype_from_name(const char *name, ltf_dtype *out);
/* Whether 'dt' is float16 or bfloat16. */
LTF_API int ltf_dtype_is_half(ltf_dtype dt);
/* The float16 / bfloat16 bit pattern nearest to 'x' (ties to even; beyond
** the largest finite value (65504 / about 3.39e38): infinity; NaN stays a
** (quiet) NaN of the same sign). A float converts exactly to double, so
** these serve float32 inputs too. */
LTF_API uint16_t ltf_float16_from_double(double x);
LTF_API uint16_t ltf_bfloat16_from_double(double x);
/* The value of a float16 / bfloat16 bit pattern (exact in float32). */
LTF_API float ltf_float16_to_float(uint16_t h);
LTF_API float ltf_bfloat16_to_float(uint16_t h);
/* }==== */

/* {==== Devices */
typedef enum ltf_device_type {
    LTF_DEVICE_CPU = 0,
    LTF_DEVICE_CUDA,
    LTF_DEVICE_TYPE_COUNT
} ltf_device_type;
/* }==== */

typedef struct ltf_ctx    ltf_ctx;
typedef struct ltf_tensor ltf_tensor;

/* {==== Context: one per lua_State; owns allocator, RNG, thread pool, error text */
/* Host memory hooks for tensor memory. 'alloc' returns 'size' bytes aligned
** to 'alignment' (a power of two, at least 64) or NULL; 'free' gets the
** size that was allocated; 'realloc' may be NULL (then alloc + copy + free:
** see ltf_allocator_realloc, which ltf_lua_newstate uses for Lua's own
** memory). The hooks must be thread-safe when shared tensors of the
** context are released on other threads. */
typedef struct ltf_allocator {
    void *(*alloc)(void *ud, size_t size, size_t alignment);
    void  (*free)(void *ud, void *ptr, size_t size);
    void *(*realloc)(void *ud, void *ptr, size_t old_size, size_t new_size, size_t alignment);
    void  *ud;
} ltf_allocator;
/* New context (reference count 1); NULL when out of memory. */
LTF_API ltf_ctx    *ltf_ctx_new(void);
/* New context whose tensor memory goes through 'a' (copied; NULL: the
** default, 64-byte aligned malloc). NULL when out of memory. */
LTF_API ltf_ctx    *ltf_ctx_new_with_allocator(const ltf_allocator *a);
/* The context's hooks (the default ones when none were given). */
LTF_API void        ltf_ctx_allocator(const ltf_ctx *ctx, ltf_allocator *out);
/* 'a''s realloc, or alloc + copy + free when it has none: NULL on failure
** ('ptr' then stays valid); new_size 0 frees and returns NULL. */
LTF_API void       *ltf_allocator_realloc(const ltf_allocator *a, void *ptr, size_t old_size, size_t new_size,
                                          size_t alignment);
/* Memory budget: live tensor bytes the context may hold (0, the default:
** no limit). An allocation past it first runs the emergency collection
** (the collect hook, then cached blocks are freed) once, then fails with
** LTF_ERR_RESOURCE_EXHAUSTED. A failing host allocator gets the same retry. */
LTF_API void        ltf_ctx_set_memory_limit(ltf_ctx *ctx, size_t bytes);
LTF_API size_t      ltf_ctx_memory_limit(const ltf_ctx *ctx);
/* The emergency collection: frees what the host can (the Lua bindings set
** one that runs a full garbage collection). Must not call back into the
** engine's allocation on 'ctx' (releasing tensors is fine). */
typedef void (*ltf_collect_hook)(ltf_ctx *ctx, void *ud);
LTF_API void        ltf_ctx_set_collect_hook(ltf_ctx *ctx, ltf_collect_hook hook, void *ud);
/* Return the context's cached free blocks to the allocator. */
LTF_API void        ltf_ctx_trim(ltf_ctx *ctx);
/* A new reference to the context (atomic: any thread). */
LTF_API void        ltf_ctx_retain(ltf_ctx *ctx);
/* Drop the caller's reference; the context is freed with its last tensor. */
LTF_API void        ltf_ctx_release(ltf_ctx *ctx);
/* Message of the last failed call (lent; valid until the next failure). */
LTF_API const char *ltf_ctx_error(const ltf_ctx *ctx);
/* Code of the last failed call (its message is ltf_ctx_error); LTF_OK before any. */
LTF_API ltf_status  ltf_ctx_status(const ltf_ctx *ctx);
/* Record a failure from host code (callbacks): returns 'code'. */
LTF_API ltf_status  ltf_ctx_set_error(ltf_ctx *ctx, ltf_status code, const char *message);
/* Threads the context uses for large kernels (>= 1). */
LTF_API ltf_status  ltf_ctx_set_num_threads(ltf_ctx *ctx, int n);
LTF_API int         ltf_ctx_num_threads(const ltf_ctx *ctx);

typedef struct ltf_memory_stats {
    size_t  live_bytes;   /* tensor bytes currently allocated */
    size_t  peak_bytes;   /* highest 'live_bytes' since the context started (or reset) */
    int64_t allocations;  /* allocations made so far */
    int64_t live_tensors; /* storages currently alive */
} ltf_memory_stats;
LTF_API void ltf_ctx_memory_stats(const ltf_ctx *ctx, ltf_memory_stats *out);
/* Set the peak to the current live bytes. */
LTF_API void ltf_ctx_reset_peak(ltf_ctx *ctx);
/* The print op's options (tf.print's keywords), decoded from its
** attributes: the string attribute holds 'sep', a NUL, 'end', a NUL;
** i[0] 'summarize', i[1] 'stream', i[2] 1 when they are given (else the
** defaults: " ", "\n", 3, LTF_PRINT_STDERR). Strings are lent. */
enum { LTF_PRINT_STDERR = 0, LTF_PRINT_STDOUT = 1 };   /* other 'stream' values: the host's own */
typedef struct ltf_print_options {
    const char *sep;       /* between values */
    const char *end;       /* after the last value */
    int64_t     summarize; /* elements shown at each end of each dimension; -1: all */
    int64_t     stream;    /* LTF_PRINT_STDERR, LTF_PRINT_STDOUT or a host stream id (>= 2) */
} ltf_print_options;
/* Who prints for the print op: 'hook' gets the op's inputs and options
** (NULL restores the built-in plain printer, which writes stdout or stderr;
** host streams go to stderr). */
typedef ltf_status (*ltf_print_hook)(ltf_ctx *ctx, void *ud, ltf_tensor *const *in, int n,
                                     const ltf_print_options *opts);
LTF_API void ltf_ctx_set_print_hook(ltf_ctx *ctx, ltf_print_hook hook, void *ud);
/* Seed the context's random generator (tf.random.set_seed). */
LTF_API void ltf_ctx_set_seed(ltf_ctx *ctx, uint64_t seed);
/* }==== */

/* {==== Tensors */
/* New zero-filled contiguous tensor on the CPU; NULL on failure (see ctx). */
LTF_API ltf_tensor *ltf_tensor_new(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims);
/* New tensor with a copy of 'data' (row-major, ltf_dtype_size * elements bytes).
** For LTF_DTYPE_STRING, 'data' is an array of NUL-terminated char pointers. */
LTF_API ltf_tensor *ltf_tensor_from_data(ltf_ctx *ctx, ltf_dtype dt, int rank,
                                         const int64_t *dims, const void *data);
/* New tensor over a host buffer, zero-copy: 'deleter(data, ud)' runs exactly
** once, when the last reference (views included) goes, on the thread that
** drops it (may be NULL when the host keeps the buffer alive). 'data' must
** be aligned to the element size (4 bytes for float32, 8 for float64 and
** int64, ...): a misaligned buffer fails with LTF_ERR_INVALID_ARGUMENT,
** naming the alignment required, as ltf_tensor_wrap_strided does
** (ltf_tensor_wrap_strided with LTF_WRAP_COPY copies such a buffer). On
** failure the deleter does not run. */
LTF_API ltf_tensor *ltf_tensor_wrap(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims,
                                    void *data, void (*deleter)(void *data, void *ud), void *ud);
/* Flags of ltf_tensor_wrap_strided */
#define LTF_WRAP_COPY 1  /* copy a layout that cannot be wrapped (the deleter then runs before return) */
/* ltf_tensor_wrap for a buffer of 'size' bytes with byte 'strides' per
** dimension (NULL: row-major). Row-major strides (any stride of a size-1
** dimension) and an aligned 'data' are wrapped without a copy; any other
** layout inside the buffer fails with LTF_ERR_INVALID_ARGUMENT, naming the
** strides expected, unless 'flags' has LTF_WRAP_COPY. Strides must be
** >= 0 and every element must lie inside 'size'. */
LTF_API ltf_tensor *ltf_tensor_wrap_strided(ltf_ctx *ctx, ltf_dtype dt, int rank, const int64_t *dims,
                                            const int64_t *strides, void *data, size_t size,
                                            void (*deleter)(void *data, void *ud), void *ud, int flags);
/* New reference to the same tensor. */
LTF_API ltf_tensor *ltf_tensor_retain(ltf_tensor *t);
/* Drop a reference; NULL is a no-op. */
LTF_API void        ltf_tensor_release(ltf_tensor *t);

LTF_API ltf_dtype      ltf_tensor_dtype(const ltf_tensor *t);
LTF_API int            ltf_tensor_rank(const ltf_tensor *t);         /* -1: unknown */
LTF_API const int64_t *ltf_tensor_dims(const ltf_tensor *t);         /* lent; -1 = unknown dim */
LTF_API int64_t        ltf_tensor_num_elements(const ltf_tensor *t); /* -1 if not known */
LTF_API int            ltf_tensor_is_symbolic(const ltf_tensor *t);  /* 1 for a graph value */
LTF_API ltf_device_type ltf_tensor_device(const ltf_tensor *t);
/* The element bytes (lent); NULL for a symbolic tensor. String elements are
** 'const ltf_string *' pointers (NULL meaning the empty string). */
LTF_API void          *ltf_tensor_data(const ltf_tensor *t);
/* The element bytes for the host to read in place (lent, row-major): fails
** with LTF_ERR_FAILED_PRECONDITION for a symbolic tensor or one on a device
** (copy it with ltf_tensor_copy_to) and LTF_ERR_INVALID_ARGUMENT for
** strings and resources. '*nbytes' (may be NULL) gets the byte count. */
LTF_API ltf_status     ltf_tensor_host_data(ltf_ctx *ctx, const ltf_tensor *t, void **data, size_t *nbytes);
/* Copy the elements (row-major) to 'dst' of exactly 'nbytes' bytes, from
** any device (a device tensor: after the work queued on it completes). */
LTF_API ltf_status     ltf_tensor_copy_to(ltf_ctx *ctx, const ltf_tensor *t, void *dst, size_t nbytes);
/* The context the tensor was made in (lent). */
LTF_API ltf_ctx       *ltf_tensor_context(const ltf_tensor *t);
/* Make 't' shareable across threads and contexts: its bytes become
** immutable (no op writes them in place), its and its storage's reference
** counts atomic, and its memory leaves 'ctx''s accounting. Concrete CPU
** tensors of numeric or bool dtype only. Idempotent. */
LTF_API ltf_status     ltf_tensor_share(ltf_ctx *ctx, ltf_tensor *t);
LTF_API int            ltf_tensor_is_shared(const ltf_tensor *t);
/* }==== */

/* {==== Devices other than the host (core/device.c, docs/devices.md)
** A GPU is a module loaded on first use (libltf_cuda.so, or the simulated
** libltf_gpusim.so when the environment has LTF_GPU_SIM=1), looked for in
** $LTF_DEVICE_MODULE_DIR, then next to the library holding the engine; a
** missing module or no device means no GPU, silently. Each context opens
** its own devices. Device memory is never read by the host directly: copy
** with ltf_tensor_to_device or ltf_tensor_copy_to. */
/* Devices of 'type' present (1 for LTF_DEVICE_CPU; 0 without a GPU). */
LTF_API int        ltf_ctx_num_devices(ltf_ctx *ctx, ltf_device_type type);
/* The ordinal N of the tensor's device (/gpu:N); 0 on the host. */
LTF_API int        ltf_tensor_device_ordinal(const ltf_tensor *t);
/* A copy of concrete 't' on device 'type':'ordinal' ('*out' a new
** reference; 't' itself, retained, when it is there already). Strings and
** resources stay on the host (LTF_ERR_INVALID_ARGUMENT); LTF_ERR_NOT_FOUND
** when the device is absent; LTF_ERR_RESOURCE_EXHAUSTED when its memory is
** full after one emergency collection. */
LTF_API ltf_status ltf_tensor_to_device(ltf_ctx *ctx, ltf_tensor *t, ltf_device_type type, int ordinal,
                                        ltf_tensor **out);
/* The device scope: eager ops and traced nodes are placed on 'type':'ordinal'
** (type -1: no scope, ops go where their inputs are). A GPU that is absent
** is refused (LTF_ERR_NOT_FOUND): the caller falls back (tf.device does). */
LTF_API ltf_status ltf_ctx_set_device(ltf_ctx *ctx, int type, int ordinal);
LTF_API void       ltf_ctx_get_device(const ltf_ctx *ctx, int *type, int *ordinal);
/* Device policy: 0 (default) copies inputs that are on another device than
** the op's ("silent", TensorFlow 2's default), 1 refuses them ("explicit"). */
LTF_API void       ltf_ctx_set_device_policy(ltf_ctx *ctx, int explicit_policy);
LTF_API int        ltf_ctx_device_policy(const ltf_ctx *ctx);
/* TensorFlow 2's default placement: 1 runs ops with no scope and every
** input on the host on /gpu:0 when a GPU is visible and has a kernel for
** them (small int32/int64 ops stay on the host); 0 (the C default; the Lua
** bindings turn it on) leaves them on the host. */
LTF_API void       ltf_ctx_set_default_placement(ltf_ctx *ctx, int on);
LTF_API int        ltf_ctx_default_placement(const ltf_ctx *ctx);
/* Soft placement (1, the default): an op placed on a GPU by a scope that
** has no kernel there runs on the host; 0: it fails (INVALID_ARGUMENT). */
LTF_API void       ltf_ctx_set_soft_placement(ltf_ctx *ctx, int on);
LTF_API int        ltf_ctx_soft_placement(const ltf_ctx *ctx);
/* 1: every eager op prints "Executing op MatMul in device
** /job:localhost/replica:0/task:0/device:GPU:0" to stderr, as TensorFlow. */
LTF_API void       ltf_ctx_set_log_placement(ltf_ctx *ctx, int on);
LTF_API int        ltf_ctx_log_placement(const ltf_ctx *ctx);
/* GPUs the module found (before ltf_ctx_set_visible_devices hides any). */
LTF_API int        ltf_ctx_num_physical_devices(ltf_ctx *ctx, ltf_device_type type);
/* The GPUs the context uses: physical ordinals 'ordinals[0..n-1]' become
** /gpu:0../gpu:n-1 (n -1: all of them). Once a device was opened the list
** is fixed: another list fails with LTF_ERR_FAILED_PRECONDITION "Visible
** devices cannot be modified after being initialized"; an unknown or
** repeated ordinal is LTF_ERR_INVALID_ARGUMENT. */
LTF_API ltf_status ltf_ctx_set_visible_devices(ltf_ctx *ctx, const int *ordinals, int n);
/* The visible GPUs' physical ordinals into 'ordinals' (up to 'max'); returns their count. */
LTF_API int        ltf_ctx_visible_devices(ltf_ctx *ctx, int *ordinals, int max);
/* Whether a device was opened (the visible list is fixed from then on);
** mark: the Lua bindings fix it at the first tensor too, as TensorFlow's
** runtime initializes at its first op. */
LTF_API int        ltf_ctx_devices_initialized(const ltf_ctx *ctx);
LTF_API void       ltf_ctx_mark_devices_initialized(ltf_ctx *ctx);
typedef struct ltf_device_memory {
    size_t in_use;     /* bytes the device's caching allocator hands out to live tensors */
    size_t peak;       /* highest 'in_use' since the device was opened (or reset) */
    size_t reserved;   /* bytes held from the device: in use + cached blocks */
} ltf_device_memory;
/* Memory of device 'type':'ordinal' (all zero for a device not opened yet);
** LTF_ERR_NOT_FOUND when absent. */
LTF_API ltf_status ltf_ctx_device_memory(ltf_ctx *ctx, ltf_device_type type, int ordinal, ltf_device_memory *out);
LTF_API void       ltf_ctx_reset_device_peak(ltf_ctx *ctx, ltf_device_type type, int ordinal);
/* Wait for the work queued on a device; reports a failure of queued work. */
LTF_API ltf_status ltf_ctx_device_sync(ltf_ctx *ctx, ltf_device_type type, int ordinal);
/* How eager ops placed on a GPU ran, counted per op since the devices were
** found (or the last reset), over all GPUs of the context: */
enum {
    LTF_KERNEL_RAN_DEVICE,     /* the device's own kernel (CUDA; the simulated GPU's host-compiled bodies) */
    LTF_KERNEL_RAN_EMULATED,   /* the simulated GPU ran the op's CPU kernel on its stream (no device body) */
    LTF_KERNEL_RAN_HOST,       /* soft placement: the CPU kernel over copies, outputs copied back */
    LTF_KERNEL_RAN_COUNT
};
/* Rows that are not ops, for ltf_ctx_device_kernel_stats: fused elementwise
** groups of traced functions run on a GPU ('device': one launch through the
** backend's fused_run; 'host': over copies on the host), and device plans
** captured as a graph / replayed from it ('device' counts each). */
enum {
    LTF_KERNEL_STATS_FUSED_GROUP = -2,
    LTF_KERNEL_STATS_GRAPH_CAPTURE = -3,
    LTF_KERNEL_STATS_GRAPH_REPLAY = -4,
    LTF_KERNEL_STATS_EXTRA_ROWS = 3
};
/* Counts of 'op' (an op id or an LTF_KERNEL_STATS_* row) into
** out[LTF_KERNEL_RAN_COUNT] (all 0 without a GPU or for an id out of range). */
LTF_API void       ltf_ctx_device_kernel_stats(const ltf_ctx *ctx, int op, uint64_t *out);
LTF_API void       ltf_ctx_reset_device_kernel_stats(ltf_ctx *ctx);
/* Graph replay of traced functions on a GPU (docs/cuda.md, "Graph replay"):
** a plan is captured at its second call and each capture keeps its
** intermediates' device memory. 'bytes' bounds that memory over all the
** context's captures: least recently replayed captures are dropped to make
** room, a capture larger than the limit is not kept, and 0 turns capture
** off. Lowering the limit drops captures at once. The default is 1 GiB, or
** $LTF_DEVICE_GRAPH_MEMORY (bytes, optional K/M/G suffix) at ltf_ctx_new. */
LTF_API void       ltf_ctx_set_device_graph_limit(ltf_ctx *ctx, size_t bytes);
/* The limit, the device bytes the live captures hold, and their count (each
** out-parameter may be NULL). */
LTF_API void       ltf_ctx_device_graph_info(const ltf_ctx *ctx, size_t *limit, size_t *bytes, int *count);
/* }==== */

/* {==== Strings: immutable, reference-counted byte strings */
typedef struct ltf_string {
    size_t   len;
    int32_t  refs;
    char     bytes[1];   /* 'len' bytes then a NUL */
} ltf_string;
/* New string with refcount 1; NULL when out of memory. */
LTF_API ltf_string *ltf_string_new(const char *bytes, size_t len);
LTF_API void        ltf_string_release(ltf_string *s);
/* A slab: many strings built in one allocation (the TFRecord reader's
** chunks), each then released like any other string; the allocation is freed
** when the builder has called ltf_string_slab_done and the last of its
** strings is released (so one live string keeps the whole slab). A slab
** string's 'refs' carries LTF_STRING_SLAB_BIT beside its count. */
#define LTF_STRING_SLAB_BIT ((int32_t)1 << 30)
typedef struct ltf_string_slab ltf_string_slab;
/* A slab of about 'cap' bytes (headers included); NULL when out of memory. */
LTF_API ltf_string_slab *ltf_string_slab_new(size_t cap);
/* A new string (refcount 1) of 'len' bytes copied into the slab, or NULL
** when it has no room left for them. */
LTF_API ltf_string      *ltf_string_slab_add(ltf_string_slab *b, const char *bytes, size_t len);
/* The builder is done adding (frees the slab if none of its strings lives). */
LTF_API void             ltf_string_slab_done(ltf_string_slab *b);
/* A block: strings made in place from bytes the builder wrote into it (the
** TFRecord reader reads a file straight into blocks: no copy). A block is
** LTF_STRING_BLOCK_SIZE bytes aligned to that size; its data area,
** LTF_STRING_BLOCK_SIZE - LTF_STRING_BLOCK_HEAD bytes, starts at
** ltf_string_block_data. ltf_string_block_adopt(b, at, len) makes a string
** (refcount 1) of the 'len' bytes at data + at + 12: it overwrites the 12
** bytes at data + at (8-aligned) with the string's header (len, refs) and
** the byte after the string with a NUL; the string is immutable from then
** on, so the builder must not write that range again. NULL when 'at' is not
** 8-aligned or the entry does not fit. Lifetime as for slabs (ltf_string_block_done,
** then the last string frees the block, which is kept for reuse). A block
** string's 'refs' carries LTF_STRING_BLOCK_BIT. */
#define LTF_STRING_BLOCK_BIT ((int32_t)1 << 29)
#define LTF_STRING_BLOCK_SIZE ((size_t)1 << 18)
#define LTF_STRING_BLOCK_HEAD ((size_t)64)
typedef struct ltf_string_block ltf_string_block;
LTF_API ltf_string_block *ltf_string_block_new(void);
LTF_API unsigned char    *ltf_string_block_data(ltf_string_block *b);
LTF_API ltf_string       *ltf_string_block_adopt(ltf_string_block *b, size_t at, size_t len);
LTF_API void              ltf_string_block_done(ltf_string_block *b);
/* String blocks in use in this process (made, and not yet freed by their
** last string and ltf_string_block_done): readers' specs check that none
** stay behind. */
LTF_API int64_t           ltf_string_blocks_live(void);
/* }==== */

/* {==== Op attributes: a plain value (copied, compared bytewise) */
typedef struct ltf_attrs {
    int64_t ints[LTF_ATTR_LIST_MAX];  /* first list: axes, shape, perm, begin, ... */
    int     nints;                    /* entries in 'ints'; -1 = not given */
    int     nints2;                   /* entries in 'ints2'; -1 = not given */
    int64_t ints2[LTF_ATTR_LIST_MAX]; /* second list: sizes, strides, dilations */
    int64_t i[4];                     /* scalar integer attributes */
    double  f[4];                     /* scalar float attributes */
    char    s[LTF_ATTR_STR_MAX];      /* string attribute (separator, message) */
} ltf_attrs;

/* Empty attributes: no lists, zero scalars. */
LTF_API void ltf_attrs_init(ltf_attrs *a);
/* }==== */

/* {==== Ops */
typedef int ltf_op_id;
/* The op named 'name' ("add", "matmul"); -1 when there is none. */
LTF_API ltf_op_id   ltf_op_lookup(const char *name);
LTF_API const char *ltf_op_name(ltf_op_id op);
LTF_API int         ltf_op_count(void);

/* Run op 'op' on 'inputs' (borrowed). On success '*nout' outputs are stored
** in 'outputs' (new references, owned by the caller); 'maxout' is the room
** there. 'attrs' may be NULL. When an input is symbolic the op adds a graph
** node instead and the outputs are symbolic. On failure '*nout' is 0 and
** nothing is left in 'outputs' for the caller to release. */
LTF_API ltf_status ltf_op_run(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *const *inputs, int nin,
                              const ltf_attrs *attrs, ltf_tensor **outputs, int maxout, int *nout);
/* }==== */

/* {==== Variables: resources that ops read and assign (see ltf_ops/state.h) */
/* New variable holding a copy of 'init'; returns its handle, a rank-0
** tensor of dtype resource. 'rank'/'dims' give the declared shape, which
** may be partial (LTF_UNKNOWN_DIM, or rank LTF_UNKNOWN_RANK for any shape);
** pass rank -2 to take init's shape. 'name' is copied (NULL: "Variable"). */
LTF_API ltf_tensor *ltf_variable_new(ltf_ctx *ctx, ltf_tensor *init, const char *name, int trainable,
                                     int rank, const int64_t *dims);
LTF_API const char *ltf_variable_name(const ltf_tensor *handle);     /* lent */
LTF_API int         ltf_variable_is_trainable(const ltf_tensor *handle);
LTF_API int64_t     ltf_variable_id(const ltf_tensor *handle);        /* unique per context */
LTF_API ltf_dtype   ltf_variable_dtype(const ltf_tensor *handle);
/* Declared shape: returns the rank (-1 unknown) and fills up to LTF_MAX_RANK dims. */
LTF_API int         ltf_variable_shape(const ltf_tensor *handle, int64_t *dims);
/* The current value, not recorded by tapes (new reference). */
LTF_API ltf_tensor *ltf_variable_peek(const ltf_tensor *handle);
/* }==== */

/* {==== Graphs: tracing, optimization and replay (tf.fn); see core/graph.c */
typedef struct ltf_graph ltf_graph;
/* Start tracing: until ltf_graph_end/abort, ops add nodes to the returned
** graph instead of running (graphs nest: the innermost one records). */
LTF_API ltf_graph  *ltf_graph_begin(ltf_ctx *ctx, const char *name);
/* A graph input of a partial type (rank -1: unknown; dims -1: unknown). */
LTF_API ltf_tensor *ltf_graph_placeholder(ltf_ctx *ctx, ltf_graph *g, ltf_dtype dt, int rank,
                                          const int64_t *dims, const char *name);
/* Stop tracing with these outputs (symbolic tensors of 'g', or concrete
** ones, which become constants); runs the passes and builds the plan. */
LTF_API ltf_status  ltf_graph_end(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *const *outputs, int noutputs);
/* Stop tracing after a failure (the graph cannot be run); 'ctx' may be NULL. */
LTF_API void        ltf_graph_abort(ltf_ctx *ctx, ltf_graph *g);
/* Run a finished graph on concrete inputs (one per placeholder, checked
** against their types); outputs are new references. */
LTF_API ltf_status  ltf_graph_run(ltf_ctx *ctx, ltf_graph *g, ltf_tensor *const *inputs, int ninputs,
                                  ltf_tensor **outputs, int maxout, int *noutputs);
LTF_API ltf_graph  *ltf_graph_retain(ltf_graph *g);
LTF_API void        ltf_graph_release(ltf_graph *g);
/* Make a finished graph shareable: any thread may then run it with its own
** context at the same time (ltf_graph_run only reads a shared graph), and
** retain/release it. Its constants are shared (ltf_tensor_share). Refused
** (LTF_ERR_FAILED_PRECONDITION) for a graph with stateful nodes (variables,
** random, print): their state would be shared. Idempotent. */
LTF_API ltf_status  ltf_graph_share(ltf_ctx *ctx, ltf_graph *g);
LTF_API int         ltf_graph_is_shared(const ltf_graph *g);
LTF_API ltf_ctx    *ltf_graph_context(const ltf_graph *g);   /* the context that traced it (lent) */
/* For a symbolic tensor: its graph (lent) and producing node; -1 otherwise. */
LTF_API int         ltf_tensor_node(const ltf_tensor *t, ltf_graph **g, int *out_index);
/* The graph ops are being added to now, or NULL when eager. */
LTF_API ltf_graph  *ltf_graph_current(const ltf_ctx *ctx);
/* Set the traces in progress aside (TensorFlow's init_scope): until
** ltf_graph_resume, ops run eagerly even inside a trace. Returns the
** innermost graph being traced as a new reference (NULL when none), which
** the caller must give to ltf_graph_resume. */
LTF_API ltf_graph  *ltf_graph_suspend(ltf_ctx *ctx);
/* End ltf_graph_suspend: 'g' (its result; takes ownership) is traced again
** when it still is. NULL is a no-op. */
LTF_API void        ltf_graph_resume(ltf_ctx *ctx, ltf_graph *g);
/* Reading a graph (listing, drawing): nodes are numbered 0..n-1 in program
** order; 'live' nodes are those the plan runs. Strings are lent. */
LTF_API int         ltf_graph_num_nodes(const ltf_graph *g);
LTF_API const char *ltf_graph_node_name(const ltf_graph *g, int i);
LTF_API const char *ltf_graph_node_op(const ltf_graph *g, int i);   /* "Placeholder", "Const" or an op name */
LTF_API int         ltf_graph_node_live(const ltf_graph *g, int i);
/* Device node 'i' runs on (an ltf_device_type, its ordinal in '*ordinal'; a
** constant: where its value is); -1 when it runs where its inputs are. */
LTF_API int         ltf_graph_node_device(const ltf_graph *g, int i, int *ordinal);
/* Fused group of node 'i' (1, 2, ...: nodes run as one loop), 0 when not fused. */
LTF_API int         ltf_graph_node_fused(const ltf_graph *g, int i);
LTF_API int         ltf_graph_node_num_inputs(const ltf_graph *g, int i);
/* Producer of input 'k' of node 'i' (its output index in '*out'). */
LTF_API int         ltf_graph_node_input(const ltf_graph *g, int i, int k, int *out);
LTF_API int         ltf_graph_node_num_outputs(const ltf_graph *g, int i);
/* Type of output 'k' of node 'i': returns the rank (-1 unknown), fills dims. */
LTF_API int         ltf_graph_node_output_type(const ltf_graph *g, int i, int k, ltf_dtype *dt, int64_t *dims);
LTF_API int         ltf_graph_num_inputs(const ltf_graph *g);
LTF_API int         ltf_graph_num_outputs(const ltf_graph *g);
/* Node producing graph output 'k' (its output index in '*out'). */
LTF_API int         ltf_graph_output(const ltf_graph *g, int k, int *out);
/* 1 when node 'i' is a stateful op (assign, read, print, random). */
LTF_API int         ltf_graph_node_is_stateful(const ltf_graph *g, int i);
/* A constant node's value (captured tensor or variable handle), lent; NULL otherwise. */
LTF_API ltf_tensor *ltf_graph_node_value(const ltf_graph *g, int i);
/* Attributes of op node 'i' (lent; NULL for placeholders, constants and
** ops given no attributes: then every field has its default, ltf_attrs_init). */
LTF_API const ltf_attrs *ltf_graph_node_attrs(const ltf_graph *g, int i);
/* How ltf_graph_run runs a graph now: its plan, or op by op because a tape
** records (each op must be on the tape) or a graph is being traced (inlined). */
enum { LTF_GRAPH_RUN_PLAN = 0, LTF_GRAPH_RUN_TAPE = 1, LTF_GRAPH_RUN_TRACE = 2 };
LTF_API int         ltf_graph_run_mode(const ltf_ctx *ctx);
/* The value of symbolic 't' of the graph being traced, computed now from
** the nodes it depends on (no placeholder among them), each on the device
** it was traced for (its tf.device scope): what tf.Variable does with an
** initial value made inside a trace. '*out' is a new reference. */
LTF_API ltf_status  ltf_graph_lift(ltf_ctx *ctx, ltf_tensor *t, ltf_tensor **out);
/* }==== */

/* {==== Control flow (tf.cond, tf.while_loop); see core/ops/control.c
** A function is a graph traced with ltf_graph_begin_function: symbolic
** tensors of the enclosing traces that it uses become extra inputs
** ("captured"), after its own placeholders. The calls below register the
** finished functions with the context and run the cond/while op: eagerly
** (the plan of the chosen branch, or of cond and body per iteration, with
** no host code in between) or, while tracing, as one node. Outputs are new
** references. */
LTF_API ltf_graph  *ltf_graph_begin_function(ltf_ctx *ctx, const char *name);
LTF_API int         ltf_graph_num_captured(const ltf_graph *g);
/* Captured outer tensor 'k' (lent); NULL once the function was passed to
** ltf_cond/ltf_while (the call consumes them: read them before). */
LTF_API ltf_tensor *ltf_graph_captured(const ltf_graph *g, int k);
/* Function 'k' of node 'i' (cond: 0 then, 1 else; while: 0 cond, 1 body),
** lent; NULL when the node runs no function. */
LTF_API ltf_graph  *ltf_graph_node_function(const ltf_graph *g, int i, int k);
/* tf.custom_gradient while tracing: outputs out[0..ny) are y, and their
** gradient is grad_fn's. grad_fn's placeholders are one dy per y (typed as
** y), then its captures ('captured', from ltf_graph_captured); it returns
** one gradient for each x[k] with has_grad[k] != 0, in order (x: the
** function's tensor arguments and the handles of variables it read, at
** most 2048). The node and its function are kept in graphs and SavedModels;
** eagerly, out are views of y. */
LTF_API ltf_status  ltf_custom_gradient(ltf_ctx *ctx, ltf_graph *grad_fn, ltf_tensor *const *x, int nx,
                                        const int *has_grad, ltf_tensor *const *y, int ny,
                                        ltf_tensor *const *captured, int ncaptured, ltf_tensor **out);
/* 'then_in'/'else_in': each function's inputs (placeholders, then captures). */
LTF_API ltf_status  ltf_cond(ltf_ctx *ctx, ltf_tensor *pred, ltf_graph *then_fn, ltf_tensor *const *then_in,
                             int nthen, ltf_graph *else_fn, ltf_tensor *const *else_in, int nelse,
                             ltf_tensor **out, int maxout, int *nout);
/* 'vars': the n loop variables; cond_fn takes (vars, cond_in), body_fn
** (vars, body_in) and returns n new values. maximum_iterations < 0: none. */
LTF_API ltf_status  ltf_while(ltf_ctx *ctx, ltf_graph *cond_fn, ltf_graph *body_fn, ltf_tensor *const *vars,
                              int n, ltf_tensor *const *cond_in, int ncond, ltf_tensor *const *body_in, int nbody,
                              int64_t maximum_iterations, ltf_tensor **out, int maxout, int *nout);
/* }==== */

/* {==== Gradient tapes (autodiff): see core/tape.c */
typedef struct ltf_tape ltf_tape;
/* New tape, not yet recording (reference count 1). */
LTF_API ltf_tape  *ltf_tape_new(ltf_ctx *ctx, int persistent, int watch_accessed_variables);
LTF_API void       ltf_tape_release(ltf_tape *tape);
/* Start recording: the tape becomes the innermost active one. */
LTF_API ltf_status ltf_tape_push(ltf_ctx *ctx, ltf_tape *tape);
/* Stop recording (the tape may be anywhere in the active stack). */
LTF_API void       ltf_tape_pop(ltf_ctx *ctx, ltf_tape *tape);
LTF_API int        ltf_tape_is_recording(const ltf_tape *tape);
/* Watch a tensor (floating dtypes and resources only; others are ignored). */
LTF_API ltf_status ltf_tape_watch(ltf_ctx *ctx, ltf_tape *tape, ltf_tensor *t);
LTF_API int        ltf_tape_is_watched(const ltf_tape *tape, const ltf_tensor *t);
/* Whether a recording tape of the context can compute t's gradient (watched, or made by an op it recorded). */
LTF_API int        ltf_tapes_track(const ltf_ctx *ctx, const ltf_tensor *t);
/* Drop everything recorded and watched. Fails (LTF_ERR_RUNTIME) while the
** tape computes a gradient: from one of its gradient functions it would
** free the entries being walked. */
LTF_API ltf_status ltf_tape_reset(ltf_ctx *ctx, ltf_tape *tape);
/* Pause (pause != 0) or resume every tape of the context (stop_recording). */
LTF_API void       ltf_ctx_pause_tapes(ltf_ctx *ctx, int pause);
/* Flags of ltf_tape_gradient */
#define LTF_TAPE_UNCONNECTED_ZERO 1  /* zeros instead of NULL for unconnected sources */
#define LTF_TAPE_KEEP             2  /* do not count this call (jacobian loops) */
/* d(sum of targets)/d(sources). 'output_gradients' may be NULL or hold NULL
** entries (ones). Writes one new reference per source into 'result' (NULL
** when unconnected, unless LTF_TAPE_UNCONNECTED_ZERO). A non-persistent
** tape answers once (then drops what it recorded). Output gradients must
** have their target's dtype and shape. Not re-entrant: a gradient function
** that asks the tape computing it for a gradient gets LTF_ERR_RUNTIME. */
LTF_API ltf_status ltf_tape_gradient(ltf_ctx *ctx, ltf_tape *tape, ltf_tensor *const *targets, int ntargets,
                                     ltf_tensor *const *output_gradients, ltf_tensor *const *sources,
                                     int nsources, int flags, ltf_tensor **result);
/* Mark a non-persistent tape as used (after a jacobian built from KEEP
** calls); LTF_ERR_RUNTIME while it computes a gradient. */
LTF_API ltf_status ltf_tape_mark_used(ltf_ctx *ctx, ltf_tape *tape);
/* Why the tape's last ltf_tape_gradient call may have left sources without
** a gradient: the first recorded op met walking back from the targets whose
** gradient function gave none for an input that depends on a source, as
** "op 'cast' (input 1: float16)"; "" when every such op gave one. Lent,
** valid until the tape's next gradient call or release. */
LTF_API const char *ltf_tape_gradient_stop(const ltf_tape *tape);
/* A gradient function supplied by the host (tf.custom_gradient): given the
** output gradients (NULL = zero) write input gradients (new references or NULL). */
typedef ltf_status (*ltf_custom_grad_fn)(ltf_ctx *ctx, void *ud, ltf_tensor *const *dout, int nout,
                                         ltf_tensor **din, int nin);
/* Record outputs computed from inputs by host code, with a host gradient,
** on every active tape that watches one of the inputs. 'free_ud' runs when
** the last tape entry goes. */
LTF_API ltf_status ltf_tape_record_custom(ltf_ctx *ctx, ltf_tensor *const *in, int nin,
                                          ltf_tensor *const *out, int nout, ltf_custom_grad_fn fn,
                                          void *ud, void (*free_ud)(void *ud));
/* }==== */

/* {==== Checkpoint files: safetensors containers (core/checkpoint.c, docs/checkpoints.md)
** Layout: 8-byte little-endian header length N, N bytes of JSON (the
** caller's, padded with spaces to a multiple of 8), then the data section:
** raw little-endian tensor bytes at 8-aligned offsets, zero bytes between.
** The JSON itself is the caller's business (the Lua side uses lua-cjson). */
/* Largest header length a reader accepts (a larger one is LTF_ERR_DATA_LOSS). */
#define LTF_CKPT_MAX_HEADER (100u << 20)
/* CRC32C (Castagnoli) of 'n' bytes continuing 'crc' (0 to start); SSE4.2 when present. */
LTF_API uint32_t   ltf_crc32c(uint32_t crc, const void *data, size_t n);
/* Write 'bytes' to 'path' atomically and durably: a temporary file in the
** same directory, fsync, rename over 'path', fsync of the directory. A
** crash at any point leaves either the old file or the new one. */
LTF_API ltf_status ltf_file_write_atomic(ltf_ctx *ctx, const char *path, const void *bytes, size_t n);
/* Write a checkpoint file atomically (as ltf_file_write_atomic): header
** 'header' ('hlen' bytes of JSON), then tensor i's bytes at data offset
** begins[i] (ascending, multiples of 8, non-overlapping), the data section
** being 'data_size' bytes. Tensors: concrete CPU tensors, numeric or bool.
** The CRC32C of every byte of the file but those 8, in file order (length,
** header, padding, data), replaces the 8 bytes at header[crc_at] as
** lowercase hex (crc_at = (size_t)-1: none); a luatf checkpoint's header
** starts with LTF_CKPT_MAGIC and crc_at = strlen(LTF_CKPT_MAGIC). Writeback
** starts every 8 MB so the disk works while the rest is copied. */
LTF_API ltf_status ltf_ckpt_write(ltf_ctx *ctx, const char *path, const char *header, size_t hlen, size_t crc_at,
                                  ltf_tensor *const *tensors, const uint64_t *begins, int n, uint64_t data_size);
/* The CRC32C of the data section ltf_ckpt_write would write (gaps included). */
LTF_API ltf_status ltf_ckpt_data_crc32c(ltf_ctx *ctx, ltf_tensor *const *tensors, const uint64_t *begins, int n,
                                        uint64_t data_size, uint32_t *out);
/* luatf's format marker: the header of a luatf checkpoint starts with these
** bytes, then 8 lowercase hex digits (the file's CRC32C, as ltf_ckpt_write
** fills them), then '"'. The marker sits at a fixed place (file offset 8),
** so no header length or key order can move it. */
#define LTF_CKPT_MAGIC "{\"__metadata__\":{\"luatf.format\":\"luatf-checkpoint-2\",\"luatf.crc32c\":\""
/* A file whose first bytes lie within this many bits of the marker but
** differ from it is a corrupted luatf file, not a plain safetensors file. */
#define LTF_CKPT_MAGIC_NEAR 64
/* A checkpoint file opened for reading (mapped read-only). */
typedef struct ltf_ckpt_file ltf_ckpt_file;
/* Open 'path': LTF_ERR_NOT_FOUND when missing; LTF_ERR_DATA_LOSS when
** shorter than 8 bytes, or the header length is over LTF_CKPT_MAX_HEADER
** or past the end of the file. A file that starts with LTF_CKPT_MAGIC is a
** luatf checkpoint: its checksum (every byte but its own 8 digits) is
** verified here, LTF_ERR_DATA_LOSS when it differs or its digits are not 8
** lowercase hex digits; a file whose marker bytes are within
** LTF_CKPT_MAGIC_NEAR bits of the marker but not equal is LTF_ERR_DATA_LOSS
** too. Any other file is a plain safetensors file, not checked (see
** ltf_ckpt_verified). NULL on failure (see ctx). */
LTF_API ltf_ckpt_file *ltf_ckpt_open(ltf_ctx *ctx, const char *path);
/* The same over a copy of 'n' bytes in memory. */
LTF_API ltf_ckpt_file *ltf_ckpt_open_memory(ltf_ctx *ctx, const void *bytes, size_t n);
LTF_API void           ltf_ckpt_close(ltf_ckpt_file *f);
/* The JSON header (lent, not NUL-terminated) and the data section's size. */
LTF_API const char    *ltf_ckpt_header(const ltf_ckpt_file *f, size_t *len);
LTF_API uint64_t       ltf_ckpt_data_size(const ltf_ckpt_file *f);
/* 1 when the file is a luatf checkpoint (its checksum was verified by the open), 0 for a plain safetensors file. */
LTF_API int            ltf_ckpt_verified(const ltf_ckpt_file *f);
/* LTF_ERR_DATA_LOSS unless the data section's CRC32C is 'crc' (files of luatf-checkpoint-1, whose checksum covered only the data). */
LTF_API ltf_status     ltf_ckpt_verify(ltf_ctx *ctx, const ltf_ckpt_file *f, uint32_t crc);
/* LTF_ERR_DATA_LOSS when 'n' bytes of JSON repeat a key in one object (after
** decoding escapes: "a" and "\u0061" are the same key), nest deeper than 16,
** or are not JSON; 'what' names the text in the message. (lua-cjson, like
** most parsers, keeps the last of repeated keys silently.) */
LTF_API ltf_status     ltf_ckpt_check_json(ltf_ctx *ctx, const char *json, size_t n, const char *what);
/* One entry of a header: data_offsets [begin, end) and the bytes its dtype and shape need. */
typedef struct ltf_ckpt_span { uint64_t begin, end, bytes; } ltf_ckpt_span;
/* LTF_ERR_DATA_LOSS unless every span lies inside the data, is exactly
** 'bytes' long, and no two overlap. */
LTF_API ltf_status     ltf_ckpt_check_layout(ltf_ctx *ctx, const ltf_ckpt_file *f, const ltf_ckpt_span *spans, int n);
/* A new tensor with the bytes at data offset 'begin' (numeric or bool dtype). */
LTF_API ltf_tensor    *ltf_ckpt_read(ltf_ctx *ctx, const ltf_ckpt_file *f, ltf_dtype dt, int rank, const int64_t *dims,
                                     uint64_t begin);
/* Restore variables (resource handles) from data offsets 'begins', each
** taking as many bytes as its current value has (the caller has matched
** dtypes and shapes): copied straight from the mapping into the variable's
** buffer (fresh storage when its value is shared with a live read). All or
** nothing: every check and allocation happens before any variable changes. */
LTF_API ltf_status     ltf_ckpt_restore(ltf_ctx *ctx, const ltf_ckpt_file *f, ltf_tensor *const *handles,
                                        const uint64_t *begins, int n);
/* }==== */

/* {==== TensorBoard event files (core/summary.c, docs/summary.md)
** A writer appends Event protobufs (TFRecord framing) to
** logdir/events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix> (suffix NULL:
** ".v2"); the first record holds file_version "brain.Event:2". Writers
** belong to the context that opened them and are named by id (>= 1) in that
** context's table: the same id in another context names that context's own
** writer (or none). Writes, flushes and closes to a closed id do nothing. A
** close while a write on another thread uses the writer only clears the id:
** that write finishes, then the writer is flushed, closed and freed.
** Freeing the context flushes and closes every writer it still has open. Events go through core/tfrecord.c's writer, flushed when 'max_queue' are
** pending, when 'flush_millis' (< 0: never) have passed since the last
** flush, at ltf_summary_flush and at ltf_summary_close. */
enum {
    LTF_SUMMARY_SCALAR = 0,   /* numeric scalar -> float32 tensor, plugin "scalars" */
    LTF_SUMMARY_HISTOGRAM,    /* numbers -> [count, 3] float64 buckets (TensorBoard's layout), "histograms" */
    LTF_SUMMARY_IMAGE,        /* string tensor [width, height, png...], "images" */
    LTF_SUMMARY_TEXT,         /* string tensor, "text" */
    LTF_SUMMARY_AUDIO         /* float [k, t, c] in [-1, 1] -> [min(k, count), 2] WAV files and labels, "audio" */
};
LTF_API ltf_status  ltf_summary_writer_open(ltf_ctx *ctx, const char *logdir, const char *suffix, int max_queue,
                                            int64_t flush_millis, int64_t *id);
/* The writer's file (valid until the writer is closed); NULL when closed. */
LTF_API const char *ltf_summary_writer_path(ltf_ctx *ctx, int64_t id);
/* One summary value at 'step': 'count' is the bucket count (histogram) or
** max_outputs (audio); 'sample_rate' is for audio. */
LTF_API ltf_status  ltf_summary_write(ltf_ctx *ctx, int64_t id, int64_t step, const char *tag, const ltf_tensor *t,
                                      int kind, const char *description, int64_t count, int64_t sample_rate);
/* An Event carrying a serialized GraphDef (TensorBoard's graph tab). */
LTF_API ltf_status  ltf_summary_write_graph(ltf_ctx *ctx, int64_t id, int64_t step, const void *graph_def, size_t n);
typedef struct ltf_summary_node {
    const char *name, *op;
    const char *const *inputs;
    int ninputs;
    int dtype;                /* ltf_dtype of output 1, -1: none */
    int rank;                 /* of output 1; -1: unknown, < -1: none */
    const int64_t *dims;      /* -1: unknown */
} ltf_summary_node;
/* Serialize a GraphDef of 'n' nodes into '*out' (malloc'd, the caller frees). */
LTF_API ltf_status  ltf_summary_graph_def(ltf_ctx *ctx, int n, const ltf_summary_node *nodes, void **out, size_t *len);
LTF_API ltf_status  ltf_summary_flush(ltf_ctx *ctx, int64_t id);
LTF_API ltf_status  ltf_summary_close(ltf_ctx *ctx, int64_t id);
/* }==== */

/* {==== TFRecord files (core/tfrecord.c, docs/tfrecord.md)
** A file is a sequence of records, each: uint64 length (little-endian), the
** masked CRC32C of those 8 bytes (uint32 LE), 'length' bytes of data, the
** masked CRC32C of the data (uint32 LE); mask(c) = ((c >> 15) | (c << 17)) +
** 0xa282ead8 (TensorFlow's format). The whole file may be compressed:
** compression "" (or NULL, "NONE"), "ZLIB" (zlib stream) or "GZIP" (gzip
** stream), through zlib. Writers and readers are used by one thread at a
** time; their errors go to the context they were opened with. */
typedef struct ltf_tfrecord_writer ltf_tfrecord_writer;
typedef struct ltf_tfrecord_reader ltf_tfrecord_reader;
/* Masked CRC32C of 'n' bytes, as stored in a record. */
LTF_API uint32_t   ltf_tfrecord_masked_crc(const void *data, size_t n);
/* Create (truncate) 'path' for writing: LTF_ERR_NOT_FOUND / an errno
** message when it cannot be created, LTF_ERR_INVALID_ARGUMENT for an unknown
** compression. Level -1 is zlib's default (6); 0..9 otherwise. */
LTF_API ltf_status ltf_tfrecord_writer_open(ltf_ctx *ctx, const char *path, const char *compression,
                                            ltf_tfrecord_writer **out);
LTF_API ltf_status ltf_tfrecord_writer_open_level(ltf_ctx *ctx, const char *path, const char *compression,
                                                  int level, ltf_tfrecord_writer **out);
/* Append one record of 'len' bytes. */
LTF_API ltf_status ltf_tfrecord_write(ltf_tfrecord_writer *w, const void *data, size_t len);
/* Push everything written so far to the file (a compressed stream is sync-flushed). */
LTF_API ltf_status ltf_tfrecord_writer_flush(ltf_tfrecord_writer *w);
/* Finish the stream, close the file and free 'w' (NULL is a no-op); the
** status of the final writes. */
LTF_API ltf_status ltf_tfrecord_writer_close(ltf_tfrecord_writer *w);

/* Reader flags */
#define LTF_TFRECORD_SKIP_CORRUPT 1   /* skip records whose CRC fails (see ltf_tfrecord_reader_skipped) */
/* Open 'path' for reading; 'buffer_size' bytes of read buffer (0: 256 KiB).
** LTF_ERR_NOT_FOUND when missing. Files are read() (an uncompressed regular
** file by ltf_tfrecord_reader_next_strings straight into string blocks, or
** pread() by ltf_tfrecord_read_block below). */
LTF_API ltf_status ltf_tfrecord_reader_open(ltf_ctx *ctx, const char *path, const char *compression,
                                            size_t buffer_size, int flags, ltf_tfrecord_reader **out);
/* The same over a copy of 'n' bytes in memory ('name' names it in errors). */
LTF_API ltf_status ltf_tfrecord_reader_open_memory(ltf_ctx *ctx, const void *bytes, size_t n, const char *name,
                                                   const char *compression, int flags, ltf_tfrecord_reader **out);
/* The next record: '*data' (lent until the next call or close), '*len' and
** '*offset' (its byte offset in the uncompressed stream). LTF_ERR_OUT_OF_RANGE
** at the end (a clean end between records). LTF_ERR_DATA_LOSS "<file>:
** corrupted record at <offset>" (a length or data CRC mismatch) and
** "<file>: truncated record at <offset>" (the stream ends inside a record),
** as TensorFlow; a corrupt compressed stream is LTF_ERR_DATA_LOSS too. With
** LTF_TFRECORD_SKIP_CORRUPT a record whose data CRC fails is skipped; a
** length whose CRC fails cannot be trusted, so the rest of the file is
** skipped (TensorFlow's skip does the same: it cannot resynchronize). */
LTF_API ltf_status ltf_tfrecord_reader_next(ltf_tfrecord_reader *r, const void **data, size_t *len,
                                            uint64_t *offset);
/* Up to 'max' next records as strings (refcount 1 each, owned by the caller;
** NULL for an empty record) in out[0..*count), their offsets in offs (may
** be NULL). About LTF_STRING_BLOCK_SIZE bytes of records per call: an
** uncompressed regular file is read straight into a string block and its
** records become strings in place (no copy; records whose place is not
** 8-aligned and records bigger than a block are copied); other sources copy
** into a string slab. Errors as ltf_tfrecord_reader_next: on an error the
** *count records before it are still valid (the caller owns them);
** LTF_ERR_OUT_OF_RANGE with *count == 0 at the end. */
LTF_API ltf_status ltf_tfrecord_reader_next_strings(ltf_tfrecord_reader *r, ltf_string **out, uint64_t *offs,
                                                    int max, int *count);
/* The same without checking the records' data CRCs: crcs[i] gets record
** i's stored masked CRC, which ltf_tfrecord_record_ok checks later (so that
** a reader thread only reads and frames, and the consumer checks what it
** takes). The length CRCs are checked here; data CRC failures are neither
** reported nor counted as skipped (the caller does both). */
LTF_API ltf_status ltf_tfrecord_reader_next_strings_unchecked(ltf_tfrecord_reader *r, ltf_string **out,
                                                              uint64_t *offs, uint32_t *crcs, int max, int *count);
/* Whether record 's' (NULL: empty) matches its stored masked CRC 'crc'. */
LTF_API int        ltf_tfrecord_record_ok(const ltf_string *s, uint32_t crc);
/* Block-parallel reading of a plain uncompressed file (the reader opened
** by ltf_tfrecord_reader_open on a regular file: ltf_tfrecord_reader_blockwise).
** Block i holds the file's bytes [i * F, (i + 1) * F), F =
** LTF_TFRECORD_BLOCK_FILE_BYTES, at ltf_string_block_data + LTF_TFRECORD_BLOCK_GAP;
** ltf_tfrecord_read_block reads one (pread: any thread, any order, several
** at once) and returns its byte count (F but at the file's end; a negative
** errno on failure; '*out' the block, owned by the caller).
** ltf_tfrecord_reader_frame_block frames blocks 0, 1, 2, ... in order on one
** thread (taking each block; 'got' is read_block's return): up to
** LTF_TFRECORD_BLOCK_RECORDS records per block as strings in place (a
** record's head carried from the block before goes into the gap before
** the data, so records up to the gap's size stay in place across blocks;
** bigger ones are copied), with offsets, and their stored data CRCs in
** 'crcs' unchecked (NULL: checked here). '*ended' once the file's end or
** an error is reached (a block shorter than F is the last: blocks after it
** are not looked at). Errors and skip_corrupt as next_strings; the records
** before an error are valid. */
#define LTF_TFRECORD_BLOCK_GAP ((size_t)16384)
#define LTF_TFRECORD_BLOCK_FILE_BYTES (LTF_STRING_BLOCK_SIZE - LTF_STRING_BLOCK_HEAD - LTF_TFRECORD_BLOCK_GAP)
#define LTF_TFRECORD_BLOCK_RECORDS ((int)(LTF_STRING_BLOCK_SIZE / 16))
LTF_API int        ltf_tfrecord_reader_blockwise(const ltf_tfrecord_reader *r);
LTF_API int64_t    ltf_tfrecord_read_block(const ltf_tfrecord_reader *r, uint64_t index, ltf_string_block **out);
LTF_API ltf_status ltf_tfrecord_reader_frame_block(ltf_tfrecord_reader *r, ltf_string_block *blk, int64_t got,
                                                   ltf_string **out, uint64_t *offs, uint32_t *crcs, int max,
                                                   int *count, int *ended);
/* Records skipped so far under LTF_TFRECORD_SKIP_CORRUPT. */
LTF_API uint64_t   ltf_tfrecord_reader_skipped(const ltf_tfrecord_reader *r);
/* Close and free (NULL is a no-op). */
LTF_API void       ltf_tfrecord_reader_close(ltf_tfrecord_reader *r);
/* }==== */

/* {==== Image codecs and compression (core/io_image.c, docs/io.md)
** PNG through libpng, JPEG through libjpeg-turbo, GIF through giflib, and
** zlib/gzip through zlib. Decoders never crash on bad data: they fail with
** LTF_ERR_INVALID_ARGUMENT "decode_<format>: invalid <FORMAT> data: <reason>"
** (libpng's and libjpeg's setjmp/longjmp stay inside core/io_image.c). An
** image whose decoded size would pass LTF_IMAGE_MAX_BYTES, or a side over
** LTF_IMAGE_MAX_SIDE, is refused before anything is allocated. */
#define LTF_IMAGE_MAX_BYTES ((int64_t)1 << 30)
#define LTF_IMAGE_MAX_SIDE  (1 << 16)
enum { LTF_IMAGE_UNKNOWN = 0, LTF_IMAGE_PNG, LTF_IMAGE_JPEG, LTF_IMAGE_GIF, LTF_IMAGE_BMP };
typedef struct ltf_image_opts {
    int    channels;             /* 0: the file's; PNG 1..4, JPEG 1 or 3, GIF 3 */
    int    bits16;               /* PNG: 16-bit samples (host-endian uint16); 8-bit files are scaled by 257 */
    int    ratio;                /* JPEG: downscale 1, 2, 4 or 8 (0 = 1) */
    int    fancy_upscaling;      /* JPEG: libjpeg's do_fancy_upsampling */
    int    try_recover_truncated;/* JPEG: a truncated file gives the rows decoded, the rest zero */
    double acceptable_fraction;  /* JPEG: least fraction of rows a recovered image needs */
    int    dct_method;           /* JPEG: 0 JDCT_IFAST (TensorFlow's default), 1 JDCT_ISLOW, 2 JDCT_FLOAT */
    int    all_frames;           /* GIF: every frame (else the first) */
} ltf_image_opts;
/* A decoded image: malloc'ed row-major samples [frames][height][width][channels]
** of 'bits' (8 or 16) bits each; release with ltf_image_free. */
typedef struct ltf_image {
    void   *data;
    size_t  nbytes;
    int64_t frames, height, width, channels;
    int     bits;
} ltf_image;
/* The format of the bytes (magic numbers), LTF_IMAGE_UNKNOWN when none. */
LTF_API int        ltf_image_format(const void *bytes, size_t n);
/* Decode 'n' bytes of 'format' (LTF_IMAGE_UNKNOWN: sniffed). */
LTF_API ltf_status ltf_image_decode(ltf_ctx *ctx, int format, const void *bytes, size_t n, const ltf_image_opts *o,
                                    ltf_image *out);
LTF_API void       ltf_image_free(ltf_image *im);
/* PNG of 'h' x 'w' pixels of 'c' (1..4) samples of 'bits' (8, or 16 host-endian);
** 'compression' -1 (zlib's default) .. 9. '*out' is malloc'ed ('*n' bytes). */
LTF_API ltf_status ltf_image_encode_png(ltf_ctx *ctx, const void *pixels, int64_t h, int64_t w, int c, int bits,
                                        int compression, void **out, size_t *n);
typedef struct ltf_jpeg_encode_opts {
    int quality;                 /* 0..100 */
    int grayscale;               /* -1: by channels; 1: write one channel (c must be 1); 0: RGB (c must be 3) */
    int progressive, optimize_size, chroma_downsampling;
} ltf_jpeg_encode_opts;
/* JPEG of 'h' x 'w' uint8 pixels of 'c' (1 or 3) samples. */
LTF_API ltf_status ltf_image_encode_jpeg(ltf_ctx *ctx, const uint8_t *pixels, int64_t h, int64_t w, int c,
                                         const ltf_jpeg_encode_opts *o, void **out, size_t *n);
/* Inflate 'n' bytes: type 1 ZLIB, 2 GZIP (several members), 0 a copy. Output
** over LTF_IMAGE_MAX_BYTES is refused (LTF_ERR_RESOURCE_EXHAUSTED). */
LTF_API ltf_status ltf_decompress(ltf_ctx *ctx, int type, const void *bytes, size_t n, void **out, size_t *outn);
/* Deflate (zlib's default level) as 'type' 1 ZLIB or 2 GZIP; 0 a copy. */
LTF_API ltf_status ltf_compress(ltf_ctx *ctx, int type, const void *bytes, size_t n, void **out, size_t *outn);
/* }==== */

/* {==== TensorProto (core/io_tensor.c): TensorFlow's serialized tensors
** (tf.io.serialize_tensor / parse_tensor). Numeric and bool tensors
** (concrete, on the host) are written as tensor_content, strings as
** string_val. */
/* The TensorProto bytes of 't' ('*out' malloc'ed, '*n' bytes). */
LTF_API ltf_status  ltf_tensor_serialize(ltf_ctx *ctx, const ltf_tensor *t, void **out, size_t *n);
/* A new tensor from TensorProto bytes; 'want' >= 0 must be its dtype.
** Bad bytes, a dtype other than 'want', a shape or value count that does
** not fit: NULL with LTF_ERR_INVALID_ARGUMENT (see ctx). */
LTF_API ltf_tensor *ltf_tensor_parse(ltf_ctx *ctx, const void *bytes, size_t n, int want);
/* }==== */
/* {==== SavedModel directories (core/saved_model.c, docs/saved_model.md)
** A directory holds saved_model.ltf (graphs, format version
** LTF_SAVED_MODEL_VERSION, checksummed) and variables.safetensors (the
** variables the graphs capture: a luatf checkpoint file). Saving needs no
** Lua; neither does loading and calling: a C host serves a model saved by a
** Lua training script with ltf_saved_model_load and ltf_saved_model_call. */
#define LTF_SAVED_MODEL_VERSION 1
typedef struct ltf_saved_function {
    const char *name;                 /* unique: "serving_default", "f", ... */
    ltf_graph *graph;                 /* a finished graph (a concrete function's) */
    int signature;                    /* 1: a signature (named inputs -> named outputs) */
    const char *const *input_names;   /* one per graph input; NULL: the placeholders' names */
    const char *const *output_names;  /* one per graph output; NULL: output_0, output_1, ... */
    const char *meta;                 /* opaque bytes kept with it (Lua: the call structure); may be NULL */
    size_t nmeta;
} ltf_saved_function;
/* Write 'n' functions, every graph they run (control-flow functions
** included) and every variable they capture to directory 'dir' (created
** when missing; both files replaced atomically). Variables are keyed by
** their names (made unique with _1, _2, ...). */
LTF_API ltf_status ltf_saved_model_save(ltf_ctx *ctx, const char *dir, const ltf_saved_function *fns, int n);
typedef struct ltf_saved_model ltf_saved_model;
/* Load directory 'dir': variables are created in 'ctx' and the graphs
** rebuilt there (finished, planned). NULL on failure: LTF_ERR_NOT_FOUND for
** a missing directory or file, LTF_ERR_DATA_LOSS for a truncated, corrupted
** or hostile file, LTF_ERR_UNIMPLEMENTED for a newer format version or an op
** this build lacks (see ltf_ctx_error). */
LTF_API ltf_saved_model *ltf_saved_model_load(ltf_ctx *ctx, const char *dir);
/* The same from the graph file's bytes and an opened variables file (NULL:
** none); 'what' names the file in messages. (The fuzz target's entry.) */
LTF_API ltf_saved_model *ltf_saved_model_load_memory(ltf_ctx *ctx, const void *bytes, size_t n,
                                                     const ltf_ckpt_file *variables, const char *what);
/* Run function 'name' (NULL: "serving_default") on 'ninputs' tensors, one
** per input in the order ltf_saved_model_input_name gives (host tensors:
** ltf_tensor_wrap buffers are read in place); '*noutputs' outputs (new
** references) in output-name order. 'ctx' must be the loading context. */
LTF_API ltf_status ltf_saved_model_call(ltf_ctx *ctx, const ltf_saved_model *m, const char *name,
                                        ltf_tensor *const *inputs, int ninputs, ltf_tensor **outputs, int maxout,
                                        int *noutputs);
/* Free the model: its graphs and variable handles (tensors they returned stay valid). */
LTF_API void        ltf_saved_model_free(ltf_saved_model *m);
/* Functions, by index 0..n-1 (names and strings lent, valid until free). */
LTF_API int         ltf_saved_model_num_functions(const ltf_saved_model *m);
LTF_API int         ltf_saved_model_find(const ltf_saved_model *m, const char *name);   /* -1: none */
LTF_API const char *ltf_saved_model_function_name(const ltf_saved_model *m, int k);
LTF_API int         ltf_saved_model_function_is_signature(const ltf_saved_model *m, int k);
LTF_API ltf_graph  *ltf_saved_model_function_graph(const ltf_saved_model *m, int k);   /* lent */
LTF_API int         ltf_saved_model_num_inputs(const ltf_saved_model *m, int k);
LTF_API const char *ltf_saved_model_input_name(const ltf_saved_model *m, int k, int i);
LTF_API int         ltf_saved_model_num_outputs(const ltf_saved_model *m, int k);
LTF_API const char *ltf_saved_model_output_name(const ltf_saved_model *m, int k, int i);
LTF_API const char *ltf_saved_model_function_meta(const ltf_saved_model *m, int k, size_t *len);
/* The variables (handles, lent: ltf_variable_name, ltf_variable_peek). */
LTF_API int         ltf_saved_model_num_variables(const ltf_saved_model *m);
LTF_API ltf_tensor *ltf_saved_model_variable(const ltf_saved_model *m, int k);
/* }==== */
#ifdef __cplusplus
}
#endif

#include "ltf_ops.h"   /* op ids: LTF_OP_ADD, LTF_OP_MATMUL, ... */
#endif
