/*
** device_alloc.c: the caching allocator of device memory (device_alloc.h).
** Compiled into each device module (libltf_gpusim.so, libltf_cuda.so), not
** into the engine: the engine sees only the backend's alloc/free/trim.
*/
#include <stdlib.h>
#include "device_alloc.h"

#define SMALL_MIN  ((size_t)512)
#define SMALL_MAX  ((size_t)1 << 20)
#define LARGE_STEP ((size_t)2 << 20)

void ltf_dalloc_init(ltf_dalloc *a, void *(*raw_alloc)(void *, size_t), void (*raw_free)(void *, void *, size_t),
                     void *ud) {
    a->raw_alloc = raw_alloc;
    a->raw_free = raw_free;
    a->ud = ud;
    a->cache = NULL;
    a->ncache = a->capcache = 0;
    a->in_use = a->reserved = a->peak_in_use = a->raw_allocs = 0;
}

size_t ltf_dalloc_round(size_t n) {
    if (n <= SMALL_MIN) return SMALL_MIN;
    if (n <= SMALL_MAX) {
        size_t s = SMALL_MIN;
        while (s < n) s <<= 1;
        return s;
    }
    if (n > ((size_t)-1) - LARGE_STEP) return 0;   /* no such class: the request cannot be met */
    return (n + LARGE_STEP - 1) / LARGE_STEP * LARGE_STEP;
}

void *ltf_dalloc_alloc(ltf_dalloc *a, size_t nbytes) {
    size_t size = ltf_dalloc_round(nbytes);
    if (size == 0) return NULL;
    void *p = NULL;
    for (size_t i = a->ncache; i-- > 0;) {      /* most recently freed first: warm in caches */
        if (a->cache[i].size != size) continue;
        p = a->cache[i].ptr;
        a->cache[i] = a->cache[--a->ncache];
        break;
    }
    if (!p) {
        p = a->raw_alloc(a->ud, size);
        if (!p) return NULL;
        a->raw_allocs++;
        a->reserved += size;
    }
    a->in_use += size;
    if (a->in_use > a->peak_in_use) a->peak_in_use = a->in_use;
    return p;
}

void ltf_dalloc_free(ltf_dalloc *a, void *p, size_t nbytes) {
    if (!p) return;
    size_t size = ltf_dalloc_round(nbytes);
    a->in_use -= size;
    if (a->ncache == a->capcache) {
        size_t cap = a->capcache ? a->capcache * 2 : 64;
        ltf_dalloc_block *c = realloc(a->cache, cap * sizeof *c);
        if (!c) {                       /* no room to remember it: give it back */
            a->raw_free(a->ud, p, size);
            a->reserved -= size;
            return;
        }
        a->cache = c;
        a->capcache = cap;
    }
    a->cache[a->ncache].ptr = p;
    a->cache[a->ncache].size = size;
    a->ncache++;
}

void ltf_dalloc_trim(ltf_dalloc *a) {
    for (size_t i = 0; i < a->ncache; i++) {
        a->raw_free(a->ud, a->cache[i].ptr, a->cache[i].size);
        a->reserved -= a->cache[i].size;
    }
    a->ncache = 0;
}

void ltf_dalloc_reset_peak(ltf_dalloc *a) { a->peak_in_use = a->in_use; }

void ltf_dalloc_destroy(ltf_dalloc *a) {
    ltf_dalloc_trim(a);
    free(a->cache);
    a->cache = NULL;
    a->capcache = 0;
}
