/*
** test_device.c: devices through the public C API on the simulated GPU
** (libltf_gpusim.so, found next to this executable): copies both ways,
** placement of an op, two contexts with independent devices (memory,
** scopes), device memory given back with the context, a missing module
** meaning no GPU, and that the host cannot read device bytes in place
** (the sim's arena is PROT_NONE: a child process that tries faults).
*/
#include <signal.h>
#include <string.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "ltf.h"

static ltf_tensor *vec(ltf_ctx *ctx, const float *v, int64_t n) {
    return ltf_tensor_from_data(ctx, LTF_DTYPE_FLOAT32, 1, &n, v);
}

int main(void) {
    /* without the module: no GPU, silently */
    setenv("LTF_DEVICE_MODULE_DIR", "/nonexistent", 1);
    unsetenv("LTF_GPU_SIM");
    setenv("LTF_DEVICE_GRAPH_MEMORY", "3M", 1);   /* the graph-capture limit, read by ltf_ctx_new */
    ltf_ctx *none = ltf_ctx_new();
    unsetenv("LTF_DEVICE_GRAPH_MEMORY");
    {
        size_t limit = 0, bytes = 1;
        int count = -1;
        ltf_ctx_device_graph_info(none, &limit, &bytes, &count);
        CHECK(limit == 3u << 20 && bytes == 0 && count == 0);
        ltf_ctx_set_device_graph_limit(none, 0);
        ltf_ctx_device_graph_info(none, &limit, NULL, NULL);
        CHECK(limit == 0);
        ltf_ctx *dflt = ltf_ctx_new();
        ltf_ctx_device_graph_info(dflt, &limit, NULL, NULL);
        CHECK(limit == (size_t)1 << 30);
        ltf_ctx_release(dflt);
    }
    CHECK(ltf_ctx_num_devices(none, LTF_DEVICE_CPU) == 1);
    /* libltf_cuda.so may exist on a CUDA machine: only its absence is checked */
    if (ltf_ctx_num_devices(none, LTF_DEVICE_CUDA) == 0) {
        CHECK(ltf_ctx_set_device(none, LTF_DEVICE_CUDA, 0) == LTF_ERR_NOT_FOUND);
        CHECK_STR(ltf_ctx_error(none), "device: no device /gpu:0 (0 GPUs present)");
    }
    ltf_ctx_release(none);

    unsetenv("LTF_DEVICE_MODULE_DIR");
    setenv("LTF_GPU_SIM", "1", 1);
    setenv("LTF_GPU_SIM_COUNT", "2", 1);
    setenv("LTF_GPU_SIM_MEMORY", "16M", 1);
    ltf_ctx *a = ltf_ctx_new(), *b = ltf_ctx_new();
    CHECK(ltf_ctx_num_devices(a, LTF_DEVICE_CUDA) == 2);
    CHECK(ltf_ctx_num_devices(b, LTF_DEVICE_CUDA) == 2);

    /* copies both ways */
    const float v[4] = {1, 2, 3, 4};
    ltf_tensor *x = vec(a, v, 4), *g = NULL, *back = NULL;
    CHECK(ltf_tensor_to_device(a, x, LTF_DEVICE_CUDA, 0, &g) == LTF_OK);
    CHECK(ltf_tensor_device(g) == LTF_DEVICE_CUDA && ltf_tensor_device_ordinal(g) == 0);
    void *p = NULL;
    CHECK(ltf_tensor_host_data(a, g, &p, NULL) == LTF_ERR_FAILED_PRECONDITION);
    float out[4] = {0};
    CHECK(ltf_tensor_copy_to(a, g, out, sizeof out) == LTF_OK);
    CHECK(out[0] == 1 && out[3] == 4);

    /* an op on the device: add(g, x) runs on /gpu:0, copying the host input */
    ltf_tensor *in[2] = {g, x}, *sum = NULL;
    int n = 0;
    CHECK(ltf_op_run(a, LTF_OP_ADD, in, 2, NULL, &sum, 1, &n) == LTF_OK && n == 1);
    CHECK(ltf_tensor_device(sum) == LTF_DEVICE_CUDA);
    CHECK(ltf_tensor_to_device(a, sum, LTF_DEVICE_CPU, 0, &back) == LTF_OK);
    CHECK(((float *)ltf_tensor_data(back))[2] == 6);
    ltf_tensor_release(back);

    /* the second GPU: copies between devices go through the host */
    ltf_tensor *g1 = NULL;
    CHECK(ltf_tensor_to_device(a, sum, LTF_DEVICE_CUDA, 1, &g1) == LTF_OK);
    CHECK(ltf_tensor_device_ordinal(g1) == 1);
    CHECK(ltf_tensor_copy_to(a, g1, out, sizeof out) == LTF_OK && out[1] == 4);

    /* the explicit policy refuses what the silent one copies */
    ltf_ctx_set_device_policy(a, 1);
    ltf_tensor *mix[2] = {g1, g}, *bad = NULL;
    CHECK(ltf_op_run(a, LTF_OP_ADD, mix, 2, NULL, &bad, 1, &n) == LTF_ERR_INVALID_ARGUMENT && n == 0);
    CHECK_STR(ltf_ctx_error(a), "add: inputs are on different devices: input 1 on /gpu:1, input 2 on /gpu:0");
    ltf_ctx_set_device_policy(a, 0);

    /* two contexts: separate devices, memory and scopes */
    ltf_device_memory ma, mb;
    CHECK(ltf_ctx_device_memory(a, LTF_DEVICE_CUDA, 0, &ma) == LTF_OK && ma.in_use > 0);
    CHECK(ltf_ctx_device_memory(b, LTF_DEVICE_CUDA, 0, &mb) == LTF_OK && mb.in_use == 0);
    CHECK(ltf_ctx_set_device(a, LTF_DEVICE_CUDA, 0) == LTF_OK);
    int type, ordinal;
    ltf_ctx_get_device(b, &type, &ordinal);
    CHECK(type == -1);
    ltf_tensor *y = vec(b, v, 4), *yy = NULL, *in_b[2] = {y, y};
    CHECK(ltf_op_run(b, LTF_OP_MUL, in_b, 2, NULL, &yy, 1, &n) == LTF_OK);
    CHECK(ltf_tensor_device(yy) == LTF_DEVICE_CPU && ((float *)ltf_tensor_data(yy))[3] == 16);
    ltf_tensor *zeros = NULL;   /* in a's scope an op with no inputs runs on /gpu:0 */
    ltf_attrs at;
    ltf_attrs_init(&at);
    at.nints = 1;
    at.ints[0] = 3;
    at.i[0] = LTF_DTYPE_FLOAT32;
    CHECK(ltf_op_run(a, LTF_OP_FILL, NULL, 0, &at, &zeros, 1, &n) == LTF_OK);
    CHECK(zeros && ltf_tensor_device(zeros) == LTF_DEVICE_CUDA);
    ltf_tensor_release(zeros);
    CHECK(ltf_ctx_set_device(a, -1, 0) == LTF_OK);

    /* out of memory on a 16 MiB device: RESOURCE_EXHAUSTED with the backend's text */
    ltf_tensor *big = NULL;
    int64_t dims[1] = {8 << 20};   /* 32 MiB of float32 */
    ltf_tensor *host_big = ltf_tensor_new(a, LTF_DTYPE_FLOAT32, 1, dims);
    CHECK(ltf_tensor_to_device(a, host_big, LTF_DEVICE_CUDA, 0, &big) == LTF_ERR_RESOURCE_EXHAUSTED);
    CHECK(strstr(ltf_ctx_error(a), "to_device: out of memory on /gpu:0 allocating a tensor of 33554432 bytes: gpusim:") != NULL);
    ltf_tensor_release(host_big);

    /* a host read of device bytes faults */
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(2);   /* ASan's report of the fault is expected */
        volatile float f = *(volatile float *)ltf_tensor_data(g);
        (void)f;
        _exit(0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));   /* SIGSEGV (or ASan's report of it) */

    ltf_tensor_release(yy);
    ltf_tensor_release(y);
    ltf_tensor_release(g1);
    ltf_tensor_release(sum);
    ltf_tensor_release(g);
    ltf_tensor_release(x);
    CHECK(ltf_ctx_device_memory(a, LTF_DEVICE_CUDA, 0, &ma) == LTF_OK && ma.in_use == 0 && ma.reserved > 0);
    ltf_ctx_release(a);   /* closes its devices */
    ltf_ctx_release(b);

    /* TensorFlow 2's default placement (off in a C context until set), the
    ** visible devices (fixed once a device is open), small int ops pinned
    ** to the host, soft placement off refusing a scope's op without a kernel */
    setenv("LTF_GPU_SIM_NO_KERNEL", "cumsum", 1);
    ltf_ctx *c = ltf_ctx_new();
    CHECK(ltf_ctx_default_placement(c) == 0 && ltf_ctx_soft_placement(c) == 1 && ltf_ctx_log_placement(c) == 0);
    CHECK(ltf_ctx_num_physical_devices(c, LTF_DEVICE_CUDA) == 2);
    int vis[2] = {1, 1}, got[4];
    CHECK(ltf_ctx_set_visible_devices(c, vis, 2) == LTF_ERR_INVALID_ARGUMENT);   /* repeated */
    vis[0] = 2;
    CHECK(ltf_ctx_set_visible_devices(c, vis, 1) == LTF_ERR_INVALID_ARGUMENT);   /* no physical GPU 2 */
    vis[0] = 1;
    CHECK(ltf_ctx_set_visible_devices(c, vis, 1) == LTF_OK);
    CHECK(ltf_ctx_num_devices(c, LTF_DEVICE_CUDA) == 1 && ltf_ctx_num_physical_devices(c, LTF_DEVICE_CUDA) == 2);
    CHECK(ltf_ctx_visible_devices(c, got, 4) == 1 && got[0] == 1);
    CHECK(!ltf_ctx_devices_initialized(c));
    const float cv[4] = {1, 2, 3, 4};
    ltf_tensor *h = vec(c, cv, 4), *hin[2] = {h, h}, *r = NULL;
    CHECK(ltf_op_run(c, LTF_OP_ADD, hin, 2, NULL, &r, 1, &n) == LTF_OK && ltf_tensor_device(r) == LTF_DEVICE_CPU);
    ltf_tensor_release(r);
    ltf_ctx_set_default_placement(c, 1);
    CHECK(ltf_op_run(c, LTF_OP_ADD, hin, 2, NULL, &r, 1, &n) == LTF_OK && ltf_tensor_device(r) == LTF_DEVICE_CUDA &&
          ltf_tensor_device_ordinal(r) == 0);   /* /gpu:0: physical GPU 1 */
    CHECK(ltf_ctx_devices_initialized(c));
    CHECK(ltf_ctx_set_visible_devices(c, NULL, -1) == LTF_ERR_FAILED_PRECONDITION);
    CHECK(strstr(ltf_ctx_error(c), "Visible devices cannot be modified after being initialized") != NULL);
    CHECK(ltf_ctx_set_visible_devices(c, vis, 1) == LTF_OK);   /* the same list: no change */
    ltf_tensor_release(r);
    int64_t three = 3;
    const int32_t iv[3] = {1, 2, 3};
    ltf_tensor *hi = ltf_tensor_from_data(c, LTF_DTYPE_INT32, 1, &three, iv), *iin[2] = {hi, hi};
    CHECK(ltf_op_run(c, LTF_OP_ADD, iin, 2, NULL, &r, 1, &n) == LTF_OK && ltf_tensor_device(r) == LTF_DEVICE_CPU);
    ltf_tensor_release(r);
    CHECK(ltf_op_run(c, LTF_OP_CUMSUM, &h, 1, NULL, &r, 1, &n) == LTF_OK && ltf_tensor_device(r) == LTF_DEVICE_CPU);
    ltf_tensor_release(r);   /* no kernel on the GPU: the CPU, the result left there */
    ltf_ctx_set_soft_placement(c, 0);
    CHECK(ltf_ctx_set_device(c, LTF_DEVICE_CUDA, 0) == LTF_OK);
    CHECK(ltf_op_run(c, LTF_OP_CUMSUM, &h, 1, NULL, &r, 1, &n) == LTF_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ltf_ctx_error(c), "cumsum: Could not satisfy explicit device specification '/device:GPU:0'") != NULL);
    ltf_ctx_set_soft_placement(c, 1);
    CHECK(ltf_op_run(c, LTF_OP_CUMSUM, &h, 1, NULL, &r, 1, &n) == LTF_OK && ltf_tensor_device(r) == LTF_DEVICE_CUDA);
    ltf_tensor_release(r);
    ltf_tensor_release(hi);
    ltf_tensor_release(h);
    ltf_ctx_release(c);
    unsetenv("LTF_GPU_SIM_NO_KERNEL");
    CHECK_DONE();
}
