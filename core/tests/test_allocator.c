/*
** test_allocator.c: storage accounting (live, peak, count), views sharing
** storage, wrapped host buffers and their deleters, context lifetime, the
** small-block cache after a burst of releases.
*/
#include <stdlib.h>
#include "check.h"
#include "../tensor.h"

static int deleted = 0;
static void deleter(void *data, void *ud) {
    (void)ud;
    free(data);
    deleted++;
}

/* a host allocator that counts its calls */
static int host_allocs = 0;
static void *counting_alloc(void *ud, size_t size, size_t alignment) {
    (void)ud;
    void *p = NULL;
    host_allocs++;
    return posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *) : alignment, size) == 0 ? p : NULL;
}
static void counting_free(void *ud, void *p, size_t size) {
    (void)ud;
    (void)size;
    free(p);
}

/* Make n 2x2 float32 tensors (one 512-byte block each), release them all
** at once as the Lua collector does, make n again: how many of the second
** n went to the host allocator (the rest came from the block cache). */
static int allocs_after_burst(ltf_ctx *ctx, int n) {
    ltf_tensor **t = malloc(sizeof *t * (size_t)n);
    for (int round = 0; round < 2; round++) {
        if (round == 1) host_allocs = 0;
        for (int i = 0; i < n; i++) t[i] = ltf_tensor_empty(ctx, LTF_DTYPE_FLOAT32, 2, (int64_t[]){2, 2});
        for (int i = 0; i < n; i++) ltf_tensor_release(t[i]);
    }
    free(t);
    return host_allocs;
}

int main(void) {
    /* the small-block cache keeps as many blocks as were out at once: a
    ** burst of 7000 (an eager loop's dead tensors under busted's Lua heap)
    ** is all recycled; it used to keep 2048 (1 MB) and send 4952 back to
    ** malloc. At most 8 MB of a class (16384 blocks of 512 B) is kept. */
    {
        ltf_allocator counting = {counting_alloc, counting_free, NULL, NULL};
        ltf_ctx *c = ltf_ctx_new_with_allocator(&counting);
        CHECK(allocs_after_burst(c, 100) == 0);
        CHECK(allocs_after_burst(c, 7000) == 0);
        CHECK(allocs_after_burst(c, 20000) == 20000 - 16384);
        ltf_ctx_release(c);
    }

    ltf_ctx *ctx = ltf_ctx_new();
    ltf_memory_stats m;

    ltf_tensor *a = ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 2, (int64_t[]){100, 10});
    CHECK(a != NULL);
    ltf_ctx_memory_stats(ctx, &m);
    CHECK(m.live_bytes == 4000 && m.allocations == 1 && m.live_tensors == 1);
    float *p = ltf_tensor_data(a);
    CHECK(((uintptr_t)p % 64) == 0);          /* 64-byte aligned data */
    CHECK(p[0] == 0.0f && p[999] == 0.0f);    /* _new zero-fills */

    /* a view shares the storage: no new bytes; the storage outlives 'a' */
    ltf_tensor *v = ltf_tensor_view(ctx, a, 1, (int64_t[]){1000});
    ltf_ctx_memory_stats(ctx, &m);
    CHECK(m.live_bytes == 4000 && m.live_tensors == 1);
    CHECK(ltf_tensor_data(v) == (void *)p);
    ltf_tensor_release(a);
    ltf_ctx_memory_stats(ctx, &m);
    CHECK(m.live_bytes == 4000);
    ltf_tensor_release(v);
    ltf_ctx_memory_stats(ctx, &m);
    CHECK(m.live_bytes == 0 && m.peak_bytes == 4000 && m.live_tensors == 0);

    /* peak reset */
    ltf_ctx_reset_peak(ctx);
    ltf_ctx_memory_stats(ctx, &m);
    CHECK(m.peak_bytes == 0);

    /* wrapped host buffer: zero-copy, deleter runs with the last reference */
    float *host = malloc(sizeof(float) * 4);
    host[2] = 7.0f;
    ltf_tensor *w = ltf_tensor_wrap(ctx, LTF_DTYPE_FLOAT32, 1, (int64_t[]){4}, host, deleter, NULL);
    CHECK(w != NULL && ltf_tensor_data(w) == host);
    ltf_tensor_retain(w);
    ltf_tensor_release(w);
    CHECK(deleted == 0);
    ltf_tensor_release(w);
    CHECK(deleted == 1);

    /* bad shapes are errors, not crashes */
    CHECK(ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 1, (int64_t[]){-2}) == NULL);
    CHECK_STR(ltf_ctx_error(ctx), "tensor: dimension 1 is -2, must be >= 0");
    CHECK(ltf_tensor_new(ctx, LTF_DTYPE_FLOAT32, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}) == NULL);

    /* strings: elements are reference counted and released with the storage */
    const char *words[] = {"hello", "", "world"};
    ltf_tensor *s = ltf_tensor_from_data(ctx, LTF_DTYPE_STRING, 1, (int64_t[]){3}, words);
    ltf_string **e = ltf_tensor_data(s);
    CHECK(e[0] && e[0]->len == 5 && e[1] == NULL && strcmp(e[2]->bytes, "world") == 0);
    ltf_tensor_release(s);

    /* the context survives its owner's release while a tensor lives */
    ltf_tensor *keep = ltf_tensor_new(ctx, LTF_DTYPE_INT32, 0, NULL);
    ltf_ctx_release(ctx);
    CHECK(ltf_tensor_dtype(keep) == LTF_DTYPE_INT32);
    ltf_tensor_release(keep);   /* frees the context too (ASan/valgrind check this) */
    CHECK_DONE();
}
