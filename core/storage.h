/*
** storage.h: allocation of tensor bytes (see tensor.h for the struct).
*/
#ifndef LTF_STORAGE_H
#define LTF_STORAGE_H

#include "tensor.h"

/* Allocate one block: 'header' bytes for the caller, then a storage header,
** then 'nbytes' of 64-byte aligned data. '*out' is the storage (refs 1);
** returns the block (freed with the storage), NULL on failure (ctx error). */
/* A reader that makes string blocks opens (+1) or closes (-1): freed blocks
** are kept for reuse in larger numbers while one is open (core/storage.c). */
LTF_INTERNAL void ltf_string_blocks_hold(int delta);
LTF_INTERNAL void *ltf_storage_alloc_block(ltf_ctx *ctx, size_t header, size_t nbytes, ltf_storage **out);
/* Storage over a host buffer; 'deleter' runs when the last reference goes. */
LTF_INTERNAL ltf_storage *ltf_storage_wrap(ltf_ctx *ctx, void *data, size_t nbytes,
                                           void (*deleter)(void *, void *), void *ud);
/* Storage of 'nbytes' on device 'type':'ordinal' (not the host): RESOURCE_EXHAUSTED
** naming 'what' after one emergency collection and a trim of the device's cache. */
LTF_INTERNAL ltf_storage *ltf_storage_new_device(ltf_ctx *ctx, ltf_device_type type, int ordinal, size_t nbytes,
                                                 const char *what);
LTF_INTERNAL void ltf_storage_retain(ltf_storage *s);
LTF_INTERNAL void ltf_storage_release(ltf_storage *s);
/* Make 's' shareable (see ltf_tensor_share): atomic counts, out of its
** context's accounting and caches. On the owner's thread, before sharing. */
LTF_INTERNAL void ltf_storage_share(ltf_storage *s);
/* The backend a storage's bytes belong to (opened already: it allocated them). */
static inline const ltf_backend *ltf_storage_backend(const ltf_storage *s) {
    return s->device == LTF_DEVICE_CPU ? s->ctx->backend[LTF_DEVICE_CPU] : s->ctx->devices[s->ordinal];
}
/* Free the recycled blocks (ltf_ctx_trim, the emergency collection, and
** the context's FREE hook). */
LTF_INTERNAL void ltf_storage_cache_clear(ltf_ctx *ctx);

/* Reference counts of string elements (NULL entries are empty strings). */
LTF_INTERNAL void ltf_strings_retain(ltf_string **e, int64_t n);
LTF_INTERNAL void ltf_strings_release(ltf_string **e, int64_t n);

/* Release the variables a resource storage refers to (variable.c). */
struct ltf_variable;
LTF_INTERNAL void ltf_variables_release(struct ltf_variable **v, int64_t n);

#endif
