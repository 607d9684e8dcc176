/*
** device_alloc.h: the caching allocator of device memory, shared by the
** device modules (gpusim/, cuda/): what a CUDA-style caching allocator
** needs, written once over two raw calls (cudaMalloc/cudaFree, or the sim's
** arena). Freed blocks go back to a cache keyed by their rounded size and
** are handed out again without a raw call; 'trim' gives the cache back.
**
** Sizes are rounded to size classes: powers of two from 512 B up to 1 MiB,
** then multiples of 2 MiB. A block is reused only for a request of the same
** class (no splitting), so 'free' finds the block's class from the size it
** is given (the engine passes the size it asked for) and no per-pointer
** table is needed. The block list and counters are host memory: the
** allocator never touches device bytes.
**
** Not thread-safe: one allocator per backend, used by one context's thread
** (device storages cannot be shared across threads, ltf_tensor_share).
** The file is self-contained (C11, no engine headers) so that an nvcc-built
** module can compile it as is.
*/
#ifndef LTF_DEVICE_ALLOC_H
#define LTF_DEVICE_ALLOC_H

#include <stddef.h>

typedef struct ltf_dalloc_block {
    void *ptr;
    size_t size;              /* rounded size (the block's class) */
} ltf_dalloc_block;

typedef struct ltf_dalloc {
    /* the raw device calls: NULL / nonzero on failure */
    void *(*raw_alloc)(void *ud, size_t nbytes);
    void  (*raw_free)(void *ud, void *p, size_t nbytes);
    void *ud;
    ltf_dalloc_block *cache;  /* free blocks, most recently freed last */
    size_t ncache, capcache;
    size_t in_use;            /* rounded bytes of live blocks */
    size_t reserved;          /* rounded bytes held from the device: live + cached */
    size_t peak_in_use;       /* highest 'in_use' since init or ltf_dalloc_reset_peak */
    size_t raw_allocs;        /* raw calls made (a cached reuse makes none) */
} ltf_dalloc;

/* Start an empty allocator over the raw calls. */
void   ltf_dalloc_init(ltf_dalloc *a, void *(*raw_alloc)(void *, size_t), void (*raw_free)(void *, void *, size_t),
                       void *ud);
/* The class of a request of 'nbytes' (0 counts as 1). */
size_t ltf_dalloc_round(size_t nbytes);
/* A block of at least 'nbytes': a cached one of the same class, else a raw
** allocation; NULL when the raw call fails (the cache is left as is: the
** caller collects, trims and retries). */
void  *ltf_dalloc_alloc(ltf_dalloc *a, size_t nbytes);
/* Return block 'p' of a request of 'nbytes' to the cache (the cache list
** grows; when that fails the block goes back to the device instead). */
void   ltf_dalloc_free(ltf_dalloc *a, void *p, size_t nbytes);
/* Give every cached block back to the device. */
void   ltf_dalloc_trim(ltf_dalloc *a);
void   ltf_dalloc_reset_peak(ltf_dalloc *a);
/* Trim and free the block list ('in_use' should be 0 by then). */
void   ltf_dalloc_destroy(ltf_dalloc *a);

#endif
