/*
** device.c: devices other than the host (docs/devices.md).
**
** Modules: a GPU backend is a shared module loaded with dlopen the first
** time a context asks about devices: libltf_gpusim.so when the environment
** has LTF_GPU_SIM=1, else the file $LTF_CUDA_MODULE names when set, else
** libltf_cuda.so. It is looked for in
** $LTF_DEVICE_MODULE_DIR, then in the directory of the object holding the
** engine (libltf.so, or tf/core.so for Lua) and its parent, then on the
** system's library path. No module, or a module that finds no device, is
** "no GPU": silently, the context runs on the CPU only. Each context loads
** its own handle (dlopen counts them) and opens its own backends, one per
** ordinal, on first use: two lua_States in one process never share device
** state. They are closed when the context goes.
**
** Placement (ltf_device_op_run), TensorFlow 2's eager rules:
**   1. variable ops run where the variable's value lives; control flow
**      (cond, while) and variable reads run on the host, which only
**      orchestrates: their inner ops are placed one by one;
**   2. ops with string or resource tensors, and print, run on the host;
**   3. else the device scope (tf.device) if one is set;
**   4. else the device of the inputs (the first input not on the host).
** Inputs elsewhere are copied to the chosen device (TensorFlow's "silent"
** device policy, its default), or refused under the "explicit" policy with
** a message naming the op and both devices. On a device whose backend has
** no kernel for the op (backend->kernel NULL), or for ops that size their
** outputs themselves (LTF_OP_KERNEL_ALLOCATES) when the backend has no
** device body for them (an emulated CPU kernel would allocate on the host),
** the op runs on the host over copies of its inputs and its outputs are
** copied back: soft placement. A device body of such an op gets its outputs
** allocated when inference knew every shape, else out[] NULL: it sizes and
** allocates them itself on the device (ctx->core_api).
*/
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "device.h"
#include "storage.h"
#include "variable.h"
#include "half.h"

#define STACK_INPUTS 8

const char *ltf_device_str(ltf_device_type type, int ordinal, char *buf) {
    snprintf(buf, LTF_DEVICE_STR, "/%s:%d", type == LTF_DEVICE_CPU ? "cpu" : "gpu", ordinal);
    return buf;
}

/* {==== Modules */
const ltf_core_api ltf_core_api_table = { ltf_op_name, ltf_op_get, ltf_ctx_rand64, ltf_half_cpu_native,
                                           ltf_shape_check, ltf_tensor_empty_on, ltf_tensor_release };

/* RTLD_NODELETE: a module stays mapped once loaded, though each context
** still counts its handle. The CUDA module's libraries (cuBLAS, NVRTC, the
** C++ runtime they bring) are not made to be unloaded mid-process: their
** exit handlers and buffers would outlive them (LeakSanitizer reports the
** C++ runtime's emergency pool of every unloaded copy). */
#define MODULE_FLAGS (RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE)

static void *open_in(const char *dir, const char *file) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path) return NULL;
    return dlopen(path, MODULE_FLAGS);
}

static void *load_module(const char *file) {
    const char *env = getenv("LTF_DEVICE_MODULE_DIR");
    void *h = env && *env ? open_in(env, file) : NULL;
    Dl_info info;
    if (!h && dladdr((void *)ltf_device_str, &info) && info.dli_fname) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", info.dli_fname);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = '\0';
            h = open_in(dir, file);                   /* next to libltf.so */
            if (!h && (slash = strrchr(dir, '/')) != NULL) {
                *slash = '\0';
                h = open_in(*dir ? dir : "/", file);  /* tf/core.so: its parent */
            }
        }
    }
    if (!h) h = dlopen(file, MODULE_FLAGS);  /* the system's library path */
    return h;
}

/* Close every device the context opened and unload the module: the hook
** find_devices registers when it loads one, run as the context is freed. */
static void close_all(ltf_ctx *ctx, void *data) {
    (void)data;
    for (int i = 0; i < LTF_MAX_DEVICES; i++) {
        ltf_backend *be = ctx->devices[i];
        if (!be) continue;
        if (be->close) be->close(be->bctx);
        free(be);
        ctx->devices[i] = NULL;
    }
    ctx->backend[LTF_DEVICE_CUDA] = NULL;
    if (ctx->device_module) dlclose(ctx->device_module);
    ctx->device_module = NULL;
    ctx->device_open = NULL;
    free(ctx->kernel_stats);
    ctx->kernel_stats = NULL;
}

/* Look the devices up once per context: 'ctx->ndevices' >= 0 afterwards. */
static void find_devices(ltf_ctx *ctx) {
    if (ctx->ndevices >= 0) return;
    ctx->ndevices = 0;
    const char *sim = getenv("LTF_GPU_SIM"), *cuda = getenv("LTF_CUDA_MODULE");
    int use_sim = sim && strcmp(sim, "1") == 0;
    if (!use_sim) {
        /* no CUDA driver, no GPU: then the CUDA module (and the cuBLAS and
        ** NVRTC it links, a quarter of a gigabyte mapped) is not loaded */
        void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!drv) return;
        dlclose(drv);
    }
    void *h;
    if (use_sim) h = load_module("libltf_gpusim.so");
    else if (cuda && *cuda) h = dlopen(cuda, MODULE_FLAGS);   /* a path to libltf_cuda.so */
    else h = load_module("libltf_cuda.so");
    if (!h) return;
    void *sym = dlsym(h, LTF_DEVICE_MODULE_OPEN);
    char err[256] = "";
    int n = sym ? ((ltf_device_module_open_fn)sym)(ctx, 0, NULL, err, sizeof err) : 0;
    uint64_t *stats = n > 0 ? calloc((size_t)(LTF_OP_COUNT + LTF_KERNEL_STATS_EXTRA_ROWS) * LTF_KERNEL_RAN_COUNT, sizeof *stats) : NULL;
    if (!stats || ltf_ctx_hook_add(ctx, LTF_CTX_EVENT_FREE, close_all, NULL) != LTF_OK) {
        /* no device (or no memory for the counts: no GPU either) */
        free(stats);
        dlclose(h);
        return;
    }
    ctx->kernel_stats = stats;
    ctx->device_module = h;
    ctx->device_open = sym;
    ctx->nphysical = n < LTF_MAX_DEVICES ? n : LTF_MAX_DEVICES;
    ctx->ndevices = ctx->nphysical;
    if (ctx->nvisible >= 0) {   /* set before the devices were looked up */
        int k = 0;
        for (int i = 0; i < ctx->nvisible; i++)
            if (ctx->visible[i] < ctx->nphysical) ctx->visible[k++] = ctx->visible[i];
        ctx->nvisible = k;
        ctx->ndevices = k;
    }
}

int ltf_ctx_num_physical_devices(ltf_ctx *ctx, ltf_device_type type) {
    if (type == LTF_DEVICE_CPU) return 1;
    if (type != LTF_DEVICE_CUDA) return 0;
    find_devices(ctx);
    return ctx->nphysical;
}

ltf_status ltf_ctx_set_visible_devices(ltf_ctx *ctx, const int *ordinals, int n) {
    if (n < 0) {   /* all of them again */
        if (ctx->devices_initialized && ctx->nvisible >= 0 && ctx->nvisible != ctx->nphysical)
            return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "Visible devices cannot be modified after being initialized");
        if (ctx->devices_initialized) return LTF_OK;
        ctx->nvisible = -1;
        if (ctx->ndevices >= 0) ctx->ndevices = ctx->nphysical;
        return LTF_OK;
    }
    find_devices(ctx);
    if (n > ctx->nphysical) n = ctx->nphysical + 1;   /* then one is out of range or repeated */
    for (int i = 0; i < n; i++) {
        if (ordinals[i] < 0 || ordinals[i] >= ctx->nphysical)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "set_visible_devices: no physical GPU %d (%d present)",
                            ordinals[i], ctx->nphysical);
        for (int j = 0; j < i; j++)
            if (ordinals[j] == ordinals[i])
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "set_visible_devices: GPU %d given twice", ordinals[i]);
    }
    /* the same list again is no change (TensorFlow allows it after initialization) */
    int same = ctx->nvisible >= 0 ? ctx->nvisible == n : n == ctx->nphysical;
    for (int i = 0; same && i < n; i++) same = (ctx->nvisible >= 0 ? ctx->visible[i] : i) == ordinals[i];
    if (same) return LTF_OK;
    if (ctx->devices_initialized)
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "Visible devices cannot be modified after being initialized");
    for (int i = 0; i < n; i++) ctx->visible[i] = ordinals[i];
    ctx->nvisible = n;
    ctx->ndevices = n;
    return LTF_OK;
}

int ltf_ctx_visible_devices(ltf_ctx *ctx, int *ordinals, int max) {
    find_devices(ctx);
    int n = ctx->ndevices;
    for (int i = 0; i < n && i < max; i++) ordinals[i] = ctx->nvisible >= 0 ? ctx->visible[i] : i;
    return n;
}

int ltf_ctx_devices_initialized(const ltf_ctx *ctx) { return ctx->devices_initialized; }
void ltf_ctx_mark_devices_initialized(ltf_ctx *ctx) { ctx->devices_initialized = 1; }

void ltf_ctx_set_default_placement(ltf_ctx *ctx, int on) { ctx->default_placement = on != 0; }
int ltf_ctx_default_placement(const ltf_ctx *ctx) { return ctx->default_placement; }
void ltf_ctx_set_soft_placement(ltf_ctx *ctx, int on) { ctx->soft_placement = on != 0; }
int ltf_ctx_soft_placement(const ltf_ctx *ctx) { return ctx->soft_placement; }
void ltf_ctx_set_log_placement(ltf_ctx *ctx, int on) { ctx->log_placement = on != 0; }
int ltf_ctx_log_placement(const ltf_ctx *ctx) { return ctx->log_placement; }

int ltf_device_default_gpu(ltf_ctx *ctx) {
    if (!ctx->default_placement) return 0;
    find_devices(ctx);
    return ctx->ndevices > 0;
}

int ltf_ctx_num_devices(ltf_ctx *ctx, ltf_device_type type) {
    if (type == LTF_DEVICE_CPU) return 1;
    if (type != LTF_DEVICE_CUDA) return 0;
    find_devices(ctx);
    return ctx->ndevices;
}

const ltf_backend *ltf_device_get(ltf_ctx *ctx, ltf_device_type type, int ordinal, const char *what) {
    char name[LTF_DEVICE_STR];
    if (type == LTF_DEVICE_CPU && ordinal == 0) return ctx->backend[LTF_DEVICE_CPU];
    if (type != LTF_DEVICE_CUDA || ordinal < 0 || ordinal >= ltf_ctx_num_devices(ctx, type)) {
        ltf_fail(ctx, LTF_ERR_NOT_FOUND, "%s: no device %s (%d GPU%s present)", what,
                 type == LTF_DEVICE_CUDA ? ltf_device_str(type, ordinal, name) : "of that type",
                 ctx->ndevices > 0 ? ctx->ndevices : 0, ctx->ndevices == 1 ? "" : "s");
        return NULL;
    }
    if (ctx->devices[ordinal]) return ctx->devices[ordinal];
    ltf_backend *be = calloc(1, sizeof *be);
    if (!be) {
        ltf_fail_oom(ctx, "device", sizeof *be);
        return NULL;
    }
    char err[256] = "unknown error";
    int physical = ctx->nvisible >= 0 ? ctx->visible[ordinal] : ordinal;   /* /gpu:N is the Nth visible one */
    if (((ltf_device_module_open_fn)ctx->device_open)(ctx, physical, be, err, sizeof err) != 0) {
        free(be);
        ltf_fail(ctx, LTF_ERR_INTERNAL, "%s: cannot open %s: %s", what, ltf_device_str(type, ordinal, name), err);
        return NULL;
    }
    be->ordinal = ordinal;
    ctx->devices_initialized = 1;
    ctx->devices[ordinal] = be;
    if (ordinal == 0) ctx->backend[LTF_DEVICE_CUDA] = be;
    return be;
}

/* }==== */

/* {==== Scope, policy, memory */
ltf_status ltf_ctx_set_device(ltf_ctx *ctx, int type, int ordinal) {
    if (type < 0) {
        ctx->scope_type = -1;
        ctx->scope_ordinal = 0;
        return LTF_OK;
    }
    if (!ltf_device_get(ctx, (ltf_device_type)type, ordinal, "device")) return ctx->last_status;
    ctx->scope_type = type;
    ctx->scope_ordinal = ordinal;
    return LTF_OK;
}

void ltf_ctx_get_device(const ltf_ctx *ctx, int *type, int *ordinal) {
    *type = ctx->scope_type;
    *ordinal = ctx->scope_ordinal;
}

void ltf_ctx_set_device_policy(ltf_ctx *ctx, int explicit_policy) { ctx->device_policy_explicit = explicit_policy != 0; }
int ltf_ctx_device_policy(const ltf_ctx *ctx) { return ctx->device_policy_explicit; }

ltf_status ltf_ctx_device_memory(ltf_ctx *ctx, ltf_device_type type, int ordinal, ltf_device_memory *out) {
    memset(out, 0, sizeof *out);
    if (type == LTF_DEVICE_CPU) {
        out->in_use = ctx->live_bytes;
        out->peak = ctx->peak_bytes;
        out->reserved = ctx->live_bytes;
        return LTF_OK;
    }
    if (ordinal < 0 || ordinal >= ltf_ctx_num_devices(ctx, type))
        return ltf_device_get(ctx, type, ordinal, "get_memory_info") ? LTF_OK : ctx->last_status;
    const ltf_backend *be = ctx->devices[ordinal];
    if (!be) return LTF_OK;                 /* not opened: nothing allocated */
    out->in_use = be->bytes_in_use(be->bctx);
    out->reserved = be->bytes_reserved(be->bctx);
    out->peak = ctx->device_peak[ordinal] > out->in_use ? ctx->device_peak[ordinal] : out->in_use;
    return LTF_OK;
}

void ltf_ctx_reset_device_peak(ltf_ctx *ctx, ltf_device_type type, int ordinal) {
    if (type == LTF_DEVICE_CPU) {
        ltf_ctx_reset_peak(ctx);
        return;
    }
    if (ordinal < 0 || ordinal >= LTF_MAX_DEVICES || !ctx->devices[ordinal]) return;
    ctx->device_peak[ordinal] = ctx->devices[ordinal]->bytes_in_use(ctx->devices[ordinal]->bctx);
}

ltf_status ltf_ctx_device_sync(ltf_ctx *ctx, ltf_device_type type, int ordinal) {
    if (type == LTF_DEVICE_CPU) return LTF_OK;
    const ltf_backend *be = ltf_device_get(ctx, type, ordinal, "sync");
    if (!be) return ctx->last_status;
    char name[LTF_DEVICE_STR];
    if (be->sync(be->bctx) != 0)
        return ltf_fail(ctx, LTF_ERR_INTERNAL, "sync: work queued on %s failed: %s",
                        ltf_device_str(type, ordinal, name), be->error(be->bctx));
    return LTF_OK;
}
/* The row of op id or LTF_KERNEL_STATS_* 'op'; -1 when out of range. */
static int stats_row(int op) {
    if (op >= 0 && op < LTF_OP_COUNT) return op;
    if (op <= -2 && op > -2 - LTF_KERNEL_STATS_EXTRA_ROWS) return LTF_OP_COUNT + (-op - 2);
    return -1;
}

void ltf_ctx_device_kernel_stats(const ltf_ctx *ctx, int op, uint64_t *out) {
    int row = stats_row(op);
    for (int k = 0; k < LTF_KERNEL_RAN_COUNT; k++)
        out[k] = ctx->kernel_stats && row >= 0 ? ctx->kernel_stats[row * LTF_KERNEL_RAN_COUNT + k] : 0;
}

void ltf_ctx_reset_device_kernel_stats(ltf_ctx *ctx) {
    if (ctx->kernel_stats)
        memset(ctx->kernel_stats, 0,
               (size_t)(LTF_OP_COUNT + LTF_KERNEL_STATS_EXTRA_ROWS) * LTF_KERNEL_RAN_COUNT * sizeof *ctx->kernel_stats);
}

void ltf_device_count(ltf_ctx *ctx, int op, int how) {
    int row = stats_row(op);
    if (ctx->kernel_stats && row >= 0) ctx->kernel_stats[row * LTF_KERNEL_RAN_COUNT + how]++;
}

static void count_kernel(ltf_ctx *ctx, ltf_op_id op, int how) { ltf_device_count(ctx, op, how); }
/* }==== */

/* {==== Copies */
static ltf_status copy_failed(ltf_ctx *ctx, const char *what, const ltf_backend *be, int ordinal) {
    char name[LTF_DEVICE_STR];
    return ltf_fail(ctx, LTF_ERR_INTERNAL, "%s: copy to or from %s failed: %s", what,
                    ltf_device_str(be->type, ordinal, name), be->error(be->bctx));
}

/* Bytes of 'src' into 'dst' (element counts and dtypes equal), across devices. */
static ltf_status copy_bytes(ltf_ctx *ctx, const char *what, ltf_tensor *dst, const ltf_tensor *src) {
    size_t n = (size_t)src->numel * ltf_dtype_size(src->dtype);
    if (n == 0) return LTF_OK;
    const ltf_storage *ds = dst->storage, *ss = src->storage;
    const ltf_backend *db = ltf_storage_backend(ds), *sb = ltf_storage_backend(ss);
    if (ds->device == LTF_DEVICE_CPU && ss->device == LTF_DEVICE_CPU) {
        memmove(LTF_DATA(dst), LTF_DATA(src), n);
        return LTF_OK;
    }
    if (ds->device == LTF_DEVICE_CPU)
        return sb->copy(sb->bctx, LTF_DATA(dst), LTF_DATA(src), n, 1) == 0 ? LTF_OK : copy_failed(ctx, what, sb, ss->ordinal);
    if (ss->device == LTF_DEVICE_CPU)
        return db->copy(db->bctx, LTF_DATA(dst), LTF_DATA(src), n, 0) == 0 ? LTF_OK : copy_failed(ctx, what, db, ds->ordinal);
    if (db == sb)
        return db->copy_d2d(db->bctx, LTF_DATA(dst), LTF_DATA(src), n) == 0 ? LTF_OK : copy_failed(ctx, what, db, ds->ordinal);
    void *tmp = malloc(n);                         /* between two devices: through the host */
    if (!tmp) return ltf_fail_oom(ctx, what, n);
    ltf_status st = sb->copy(sb->bctx, tmp, LTF_DATA(src), n, 1) != 0   ? copy_failed(ctx, what, sb, ss->ordinal)
                    : db->copy(db->bctx, LTF_DATA(dst), tmp, n, 0) != 0 ? copy_failed(ctx, what, db, ds->ordinal)
                                                                        : LTF_OK;
    free(tmp);
    return st;
}

ltf_status ltf_tensor_copy_into(ltf_ctx *ctx, ltf_tensor *dst, const ltf_tensor *src) {
    return copy_bytes(ctx, "copy", dst, src);
}

ltf_status ltf_tensor_read(ltf_ctx *ctx, const ltf_tensor *t, void *dst, size_t n) {
    if (t->storage->device == LTF_DEVICE_CPU) {
        memcpy(dst, LTF_DATA(t), n);
        return LTF_OK;
    }
    const ltf_backend *be = ltf_storage_backend(t->storage);
    return be->copy(be->bctx, dst, LTF_DATA(t), n, 1) == 0 ? LTF_OK : copy_failed(ctx, "read", be, t->storage->ordinal);
}

/* The copy of 't' on the device (type, ordinal), or 't' retained when it is there. */
static ltf_tensor *to_device(ltf_ctx *ctx, ltf_tensor *t, ltf_device_type type, int ordinal, const char *what) {
    if (t->storage->device == type && t->storage->ordinal == ordinal) return ltf_tensor_retain(t);
    ltf_tensor *o = ltf_tensor_empty_on(ctx, t->dtype, t->rank, t->dims, type, ordinal, what);
    if (!o) return NULL;
    if (copy_bytes(ctx, what, o, t) != LTF_OK) {
        ltf_tensor_release(o);
        return NULL;
    }
    return o;
}

ltf_status ltf_tensor_to_device(ltf_ctx *ctx, ltf_tensor *t, ltf_device_type type, int ordinal, ltf_tensor **out) {
    *out = NULL;
    if (!t->storage)
        return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION, "to_device: a symbolic tensor has no value outside its trace");
    if ((t->dtype == LTF_DTYPE_STRING || t->dtype == LTF_DTYPE_RESOURCE) && type != LTF_DEVICE_CPU)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "to_device: tensors of dtype %s stay on the CPU",
                        ltf_dtype_name(t->dtype));
    if (!ltf_device_get(ctx, type, ordinal, "to_device")) return ctx->last_status;
    *out = to_device(ctx, t, type, ordinal, "to_device");
    return *out ? LTF_OK : ctx->last_status;
}

int ltf_tensor_device_ordinal(const ltf_tensor *t) { return t->storage ? t->storage->ordinal : 0; }

int ltf_device_of_handle(const ltf_tensor *h, int *ordinal) {
    const ltf_variable *v = ltf_variable_of(h);
    if (!v || !v->value || !v->value->storage) return -1;
    *ordinal = v->value->storage->ordinal;
    return (int)v->value->storage->device;
}
/* }==== */

/* {==== Placement */
static int all_empty(ltf_tensor *const *out, int n) {
    for (int i = 0; i < n; i++)
        if (!out[i] || out[i]->numel != 0) return 0;
    return 1;
}

/* TensorFlow's name of a luatf op for the placement log: a few by hand,
** else the words capitalized ("bias_add" -> "BiasAdd"). */
static void tf_op_name(const char *name, char *buf, size_t len) {
    static const char *const names[][2] = {
        {"add", "AddV2"}, {"matmul", "MatMul"}, {"batch_matmul", "BatchMatMulV2"}, {"conv2d", "Conv2D"},
        {"read_variable", "ReadVariableOp"}, {"assign_variable", "AssignVariableOp"},
        {"assign_add_variable", "AssignAddVariableOp"}, {"assign_sub_variable", "AssignSubVariableOp"},
        {"div", "RealDiv"}, {"while", "While"}, {"cond", "If"}, {"reduce_sum", "Sum"}, {"reduce_mean", "Mean"},
        {"reduce_max", "Max"}, {"reduce_min", "Min"}, {"reduce_prod", "Prod"}, {"argmax", "ArgMax"},
        {"argmin", "ArgMin"}, {"print", "PrintV2"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i][0]) == 0) {
            snprintf(buf, len, "%s", names[i][1]);
            return;
        }
    size_t k = 0;
    int up = 1;
    for (const char *p = name; *p && k + 1 < len; p++) {
        if (*p == '_') {
            up = 1;
            continue;
        }
        buf[k++] = up && *p >= 'a' && *p <= 'z' ? (char)(*p - 'a' + 'A') : *p;
        up = 0;
    }
    buf[k] = '\0';
}

/* tf.debugging.set_log_device_placement(True)'s line, on stderr as
** TensorFlow logs it. */
static void log_op(const ltf_op_def *def, const ltf_tensor *out, ltf_device_type type, int ordinal) {
    char name[64];
    (void)out;
    tf_op_name(def->name, name, sizeof name);
    fprintf(stderr, "Executing op %s in device /job:localhost/replica:0/task:0/device:%s:%d\n", name,
            type == LTF_DEVICE_CPU ? "CPU" : "GPU", ordinal);
    fflush(stderr);
}

static void release_all(ltf_tensor **t, int n) {
    for (int i = 0; i < n; i++) {
        ltf_tensor_release(t[i]);
        t[i] = NULL;
    }
}

/* Outputs on (type, ordinal) from the inferred types, then the kernel
** (through float32 copies where it does not take float16/bfloat16);
** 'prealloc' 0: the kernel allocates them itself (LTF_OP_KERNEL_ALLOCATES). */
static ltf_status run_kernel(ltf_ctx *ctx, const ltf_op_def *def, ltf_op_id op, ltf_kernel_fn kernel, ltf_tensor *const *in,
                             int nin, const ltf_attrs *a, const ltf_type *types, int n, ltf_tensor **out,
                             ltf_device_type type, int ordinal, int prealloc) {
    for (int i = 0; i < n; i++) out[i] = NULL;
    if (prealloc)
        for (int i = 0; i < n; i++) {
            const ltf_type *ty = &types[i];
            out[i] = (def->flags & LTF_OP_VIEW) && nin > 0 && in[0]->dtype == ty->dtype
                         ? ltf_tensor_view(ctx, in[0], ty->rank, ty->dims)
                         : ltf_tensor_empty_on(ctx, ty->dtype, ty->rank, ty->dims, type, ordinal, def->name);
            if (!out[i]) {
                release_all(out, i);
                return ctx->last_status;
            }
        }
    if (n > 0 && prealloc && !(def->flags & (LTF_OP_STATEFUL | LTF_OP_VIEW)) && all_empty(out, n)) return LTF_OK;
    ltf_status st = ltf_half_run(ctx, def, op, kernel, type, ordinal, in, nin, a, types, out, n);
    if (st != LTF_OK) release_all(out, n);
    return st;
}

/* Whether inference knew every dimension of every output. */
static int all_known(const ltf_type *types, int n) {
    for (int i = 0; i < n; i++) {
        if (types[i].rank < 0) return 0;
        for (int d = 0; d < types[i].rank; d++)
            if (types[i].dims[d] < 0) return 0;
    }
    return 1;
}

static int host_only(const ltf_op_def *def, ltf_op_id op, ltf_tensor *const *in, int nin, const ltf_type *types,
                     int n) {
    if (op == LTF_OP_PRINT) return 1;
    /* collectives call MPI on the host thread, in program order (ltf_ops/collective.h) */
    if (op == LTF_OP_ALL_REDUCE || op == LTF_OP_BROADCAST || op == LTF_OP_ALL_GATHER || op == LTF_OP_REDUCE_SCATTER) return 1;
    for (int i = 0; i < nin; i++)
        if (in[i]->dtype == LTF_DTYPE_STRING || in[i]->dtype == LTF_DTYPE_RESOURCE) return 1;
    for (int i = 0; i < n; i++)
        if (types[i].dtype == LTF_DTYPE_STRING || types[i].dtype == LTF_DTYPE_RESOURCE) return 1;
    return 0;
}

static int exclusive(const ltf_tensor *t) {
    return !t->shared && !t->storage->shared && t->refs == 1 && t->storage->refs == 1;
}

/* Optimizer steps (ops taking variable handles, placed on the first one's
** device): every handle's value moved to (type, ordinal) when it is
** elsewhere (slots live beside their variable, as TensorFlow colocates
** them) and, for a device kernel ('cow'), made writable in place: a value
** something else still holds (a read) is copied first, as the CPU kernels
** do themselves. */
static ltf_status prepare_variables(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                    ltf_device_type type, int ordinal, int cow) {
    for (int i = 0; i < nin; i++) {
        ltf_variable *v = in[i]->dtype == LTF_DTYPE_RESOURCE ? ltf_variable_of(in[i]) : NULL;
        if (!v || !v->value || !v->value->storage) continue;
        const ltf_storage *s = v->value->storage;
        ltf_tensor *n = NULL;
        if (s->device != type || s->ordinal != ordinal) n = to_device(ctx, v->value, type, ordinal, def->name);
        else if (cow && type != LTF_DEVICE_CPU && !exclusive(v->value)) n = ltf_tensor_clone(ctx, v->value);
        else continue;
        if (!n) return ctx->last_status;
        ltf_variable_set(v, n);
    }
    return LTF_OK;
}

/* TensorFlow pins small integer ops to the host (eager placement_utils:
** MaybePinSmallOpsToCpu): every input int32/int64 of at most 64 elements
** (inputs are on the host when this is asked); random ops are not. */
static int pinned_to_host(const ltf_op_def *def, ltf_tensor *const *in, int nin, const ltf_type *types, int n) {
    if (def->flags & LTF_OP_STATEFUL) return 0;
    if (nin == 0) {
        /* luatf's ops that take their scalars as attributes (range, fill,
        ** zeros of an int dtype): TensorFlow's take them as small int
        ** inputs and are pinned; so are they when every output is a small
        ** int32/int64 tensor */
        if (n == 0) return 0;
        for (int i = 0; i < n; i++) {
            if ((types[i].dtype != LTF_DTYPE_INT32 && types[i].dtype != LTF_DTYPE_INT64) || types[i].rank < 0) return 0;
            int64_t k = 1;
            for (int d = 0; d < types[i].rank; d++) k = types[i].dims[d] < 0 ? 65 : k * types[i].dims[d];
            if (k > 64) return 0;
        }
        return 1;
    }
    for (int i = 0; i < nin; i++)
        if ((in[i]->dtype != LTF_DTYPE_INT32 && in[i]->dtype != LTF_DTYPE_INT64) || in[i]->numel > 64) return 0;
    return 1;
}

/* Whether /gpu:0 has a kernel it would run for the op (as the device path
** of ltf_device_op_run decides); opens the device. */
static int device_can_run(ltf_ctx *ctx, ltf_op_id op, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                          const ltf_type *types, int n) {
    const ltf_backend *be = ltf_device_get(ctx, LTF_DEVICE_CUDA, 0, def->name);
    if (!be) return 0;   /* cannot open it: the host runs the op */
    ltf_kernel_fn k = be->kernel ? (ltf_kernel_fn)be->kernel(be->bctx, op) : NULL;
    if (!k || !ltf_half_device_can(be, op, in, nin, types, n)) return 0;
    if (def->flags & LTF_OP_KERNEL_ALLOCATES)
        return !be->kernel_kind || be->kernel_kind(be->bctx, op) == LTF_KERNEL_DEVICE;
    return 1;
}

/* The explicit policy's refusal: inputs on two devices, or all on one that is not the op's. */
static ltf_status refuse(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin, ltf_device_type type,
                         int ordinal) {
    char a[LTF_DEVICE_STR], b[LTF_DEVICE_STR];
    int first = -1;
    for (int i = 0; i < nin; i++) {
        if (in[i]->dtype == LTF_DTYPE_RESOURCE) continue;
        const ltf_storage *s = in[i]->storage;
        if (first < 0) {
            first = i;
            continue;
        }
        const ltf_storage *f = in[first]->storage;
        if (s->device != f->device || s->ordinal != f->ordinal)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: inputs are on different devices: input %d on %s, input %d on %s", def->name,
                            first + 1, ltf_device_str(f->device, f->ordinal, a), i + 1,
                            ltf_device_str(s->device, s->ordinal, b));
    }
    const ltf_storage *f = in[first]->storage;
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                    "%s: input %d is on %s, the op runs on %s (device policy 'explicit' copies nothing)", def->name,
                    first + 1, ltf_device_str(f->device, f->ordinal, a), ltf_device_str(type, ordinal, b));
}

ltf_status ltf_device_op_run(ltf_ctx *ctx, const ltf_op_def *def, ltf_op_id op, ltf_tensor *const *in, int nin,
                             const ltf_attrs *a, const ltf_attrs *given, const ltf_type *types, int n,
                             ltf_tensor **out) {
    ltf_status st;
    int host_alloc = !(def->flags & LTF_OP_KERNEL_ALLOCATES);   /* outputs allocated before the kernel */
    ltf_device_type ran_type = LTF_DEVICE_CPU;   /* where its kernel ran (log_placement) */
    int ran_ordinal = 0;
    /* the host orchestrates: reads give views of the value where it is,
    ** assigns copy into the variable's device, cond/while run functions
    ** whose ops are placed one by one */
    if (op == LTF_OP_READ_VARIABLE || op == LTF_OP_ASSIGN_VARIABLE || op == LTF_OP_ASSIGN_ADD_VARIABLE ||
        op == LTF_OP_ASSIGN_SUB_VARIABLE || op == LTF_OP_COND || op == LTF_OP_WHILE || op == LTF_OP_CUSTOM_GRADIENT) {
        st = run_kernel(ctx, def, op, def->kernel[LTF_DEVICE_CPU], in, nin, a, types, n, out, LTF_DEVICE_CPU, 0,
                        host_alloc);
        goto record;
    }
    ltf_device_type type = LTF_DEVICE_CPU;
    int ordinal = 0, var_op = 0;
    for (int i = 0; i < nin && (def->flags & LTF_OP_RESOURCE); i++) {   /* optimizer steps: the variables' device */
        int o, d = in[i]->dtype == LTF_DTYPE_RESOURCE ? ltf_device_of_handle(in[i], &o) : -1;
        if (d >= 0) {
            type = (ltf_device_type)d;
            ordinal = o;
            var_op = 1;
            break;
        }
    }
    int from_scope = 0;
    if (var_op || host_only(def, op, in, nin, types, n)) {
        /* placed already */
    } else if (ctx->scope_type >= 0) {
        type = (ltf_device_type)ctx->scope_type;
        ordinal = ctx->scope_ordinal;
        from_scope = type != LTF_DEVICE_CPU;
    } else {
        for (int i = 0; i < nin; i++)
            if (in[i]->storage->device != LTF_DEVICE_CPU) {
                type = in[i]->storage->device;
                ordinal = in[i]->storage->ordinal;
                break;
            }
        /* TensorFlow 2's default: every input on the host, /gpu:0 where it
        ** has a kernel, unless the op is a small integer one (shape
        ** arithmetic stays on the host, as TensorFlow pins it) */
        if (type == LTF_DEVICE_CPU && ltf_device_default_gpu(ctx) && !pinned_to_host(def, in, nin, types, n) &&
            device_can_run(ctx, op, def, in, nin, types, n)) {
            type = LTF_DEVICE_CUDA;
        }
    }
    ltf_tensor *stack_tmp[STACK_INPUTS], *stack_host[STACK_INPUTS];
    ltf_tensor **tmp = stack_tmp, **host = NULL;
    if (nin > STACK_INPUTS && !(tmp = calloc((size_t)nin, sizeof *tmp))) return ltf_fail_oom(ctx, def->name, 0);
    int ncopied = 0;
    st = LTF_OK;
    for (int i = 0; i < nin; i++) {
        const ltf_storage *s = in[i]->storage;
        if (in[i]->dtype == LTF_DTYPE_RESOURCE || (s->device == type && s->ordinal == ordinal)) {
            tmp[ncopied++] = ltf_tensor_retain(in[i]);
            continue;
        }
        if (ctx->device_policy_explicit) {
            st = refuse(ctx, def, in, nin, type, ordinal);
            break;
        }
        if (!(tmp[ncopied] = to_device(ctx, in[i], type, ordinal, def->name))) {
            st = ctx->last_status;
            break;
        }
        ncopied++;
    }
    if (st != LTF_OK) goto done;
    const ltf_backend *be = type == LTF_DEVICE_CPU ? NULL : ctx->devices[ordinal];
    ltf_kernel_fn k = be && be->kernel ? (ltf_kernel_fn)be->kernel(be->bctx, op) : NULL;
    if (k && !ltf_half_device_can(be, op, tmp, nin, types, n)) k = NULL;   /* float16 it cannot convert */
    if (var_op && (st = prepare_variables(ctx, def, tmp, nin, type, ordinal, k != NULL)) != LTF_OK) goto done;
    if (type == LTF_DEVICE_CPU) {
        st = run_kernel(ctx, def, op, def->kernel[LTF_DEVICE_CPU], tmp, nin, a, types, n, out, LTF_DEVICE_CPU, 0,
                        host_alloc);
        goto done;
    }
    /* an op that sizes its outputs itself runs a device body too (never an
    ** emulated CPU kernel, which would allocate them on the host): with its
    ** outputs allocated here when inference knew every shape (sequence_mask
    ** with 'maxlen' given), else with out[] NULL: the body computes the
    ** sizes on the device, reads them back and allocates the outputs on the
    ** device through ctx->core_api (where_indices, unique, bincount,
    ** segment_*) */
    if (k && (host_alloc || !be->kernel_kind || be->kernel_kind(be->bctx, op) == LTF_KERNEL_DEVICE)) {
        st = run_kernel(ctx, def, op, k, tmp, nin, a, types, n, out, type, ordinal, host_alloc || all_known(types, n));
        ran_type = type;
        ran_ordinal = ordinal;
        if (st == LTF_OK)
            count_kernel(ctx, op, be->kernel_kind && be->kernel_kind(be->bctx, op) == LTF_KERNEL_EMULATED
                                      ? LTF_KERNEL_RAN_EMULATED : LTF_KERNEL_RAN_DEVICE);
        goto done;
    }
    if (from_scope && !ctx->soft_placement) {   /* TensorFlow's message with soft placement off */
        st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                      "%s: Could not satisfy explicit device specification '/device:GPU:%d' because no supported "
                      "kernel for GPU devices is available", def->name, ordinal);
        goto done;
    }
    if (var_op) {   /* the variables' bytes are on the device: no host kernel can update them */
        char name[LTF_DEVICE_STR];
        st = ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED, "%s: no kernel on %s for variables placed there", def->name,
                      ltf_device_str(type, ordinal, name));
        goto done;
    }
    /* soft placement: the host's kernel over copies, outputs copied back */
    host = nin > STACK_INPUTS ? calloc((size_t)nin, sizeof *host) : stack_host;
    if (!host) {
        st = ltf_fail_oom(ctx, def->name, 0);
        goto done;
    }
    int nhost = 0;
    for (; nhost < nin; nhost++)
        if (!(host[nhost] = to_device(ctx, tmp[nhost], LTF_DEVICE_CPU, 0, def->name))) break;
    st = nhost < nin ? ctx->last_status
                     : run_kernel(ctx, def, op, def->kernel[LTF_DEVICE_CPU], host, nin, a, types, n, out, LTF_DEVICE_CPU, 0,
                                  host_alloc);
    if (st == LTF_OK) count_kernel(ctx, op, LTF_KERNEL_RAN_HOST);
    release_all(host, nhost);
    if (host != stack_host) free(host);
    for (int i = 0; i < n && st == LTF_OK; i++) {
        if (out[i]->dtype == LTF_DTYPE_STRING || out[i]->dtype == LTF_DTYPE_RESOURCE) continue;
        ltf_tensor *d = to_device(ctx, out[i], type, ordinal, def->name);
        if (!d) st = ctx->last_status;
        else {
            ltf_tensor_release(out[i]);
            out[i] = d;
        }
    }
    if (st != LTF_OK) release_all(out, n);
done:
    release_all(tmp, ncopied);
    if (tmp != stack_tmp) free(tmp);
record:
    if (st == LTF_OK && ctx->log_placement) log_op(def, n > 0 ? out[0] : NULL, ran_type, ran_ordinal);
    if (st == LTF_OK && ctx->tape_record) {
        st = ctx->tape_record(ctx, op, in, nin, given, out, n);
        if (st != LTF_OK) release_all(out, n);
    }
    return st;
}
/* }==== */
