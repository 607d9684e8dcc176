/*
** cpu/backend.c: the CPU backend's memory functions (ltf_backend.h):
** 64-byte aligned host memory. Kernels are registered per op (op.h).
*/
#include <stdlib.h>
#include <string.h>
#include "../ltf_backend.h"

static void *cpu_alloc(void *bctx, size_t nbytes) {
    (void)bctx;
    void *p = NULL;
    if (posix_memalign(&p, 64, nbytes ? nbytes : 1) != 0) return NULL;
    return p;
}

static void cpu_free(void *bctx, void *p, size_t nbytes) {
    (void)bctx;
    (void)nbytes;
    free(p);
}

static int cpu_copy(void *bctx, void *dst, const void *src, size_t nbytes, int to_host) {
    (void)bctx;
    (void)to_host;
    memcpy(dst, src, nbytes);
    return 0;
}

const ltf_backend ltf_cpu_backend = { .name = "cpu", .type = LTF_DEVICE_CPU, .alloc = cpu_alloc, .free = cpu_free, .copy = cpu_copy };
