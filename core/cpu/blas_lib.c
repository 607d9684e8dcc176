/*
** cpu/blas_lib.c: finds OpenBLAS's functions on first use (blas_lib.h).
**
** Where from, in order:
**   1. the process itself (dlsym(RTLD_DEFAULT)): a host that linked
**      OpenBLAS, or linked it statically with its symbols exported, keeps
**      its own copy; used when every required symbol is there;
**   2. $LTF_BLAS_LIBRARY when set (a file name or path given to dlopen;
**      nothing else is tried, so a wrong value is reported as such);
**   3. LTF_BLAS_SONAME, the SONAME of the OpenBLAS CMake found at configure
**      time (libopenblas.so.0), then LTF_BLAS_PATH, that library's real path.
** dlopen uses RTLD_NOW | RTLD_LOCAL: nothing of OpenBLAS enters the global
** namespace, and a missing symbol shows up here, not at the first call.
**
** Two lua_States / contexts: the table is process-wide but written exactly
** once, under pthread_once, and never changed afterwards (the library is
** never closed); every context only reads it. It is no per-state mutable
** state: like the code of a linked library, it is the same for every
** context. A failed load is remembered too (the same error every time: the
** process's libraries do not change under it).
*/
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blas_lib.h"

#ifndef LTF_BLAS_SONAME
#define LTF_BLAS_SONAME "libopenblas.so.0"
#endif

static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static ltf_blas_lib blas_fns;        /* written once under blas_once */
static int blas_ok;                  /* idem: 1 when blas_fns is complete */
static char blas_err[512];           /* idem: why not, when blas_ok is 0 */

typedef void (*any_fn)(void);

/* The required symbols, in blas_fns's order, and where each one goes. */
#define REQ(field, sym) { sym, offsetof(ltf_blas_lib, field) }
#define REQ2(field, s) REQ(field[0], "s" s "_"), REQ(field[1], "d" s "_")
static const struct { const char *sym; size_t off; } REQUIRED[] = {
    REQ(sgemm, "cblas_sgemm"), REQ(dgemm, "cblas_dgemm"), REQ(strsm, "cblas_strsm"), REQ(dtrsm, "cblas_dtrsm"),
    REQ2(potrf, "potrf"), REQ2(getrf, "getrf"), REQ2(getri, "getri"), REQ2(getrs, "getrs"),
    REQ2(geqrf, "geqrf"), REQ2(orgqr, "orgqr"), REQ2(gesdd, "gesdd"), REQ2(syevd, "syevd"),
};
#undef REQ2
#undef REQ

static any_fn sym_of(void *handle, const char *name) {
    return (any_fn)(uintptr_t)dlsym(handle, name);
}

/* Fill 't' from 'handle'; NULL on success, else the first missing symbol. */
static const char *resolve(void *handle, ltf_blas_lib *t) {
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < sizeof REQUIRED / sizeof REQUIRED[0]; i++) {
        any_fn f = sym_of(handle, REQUIRED[i].sym);
        if (!f) return REQUIRED[i].sym;
        memcpy((char *)t + REQUIRED[i].off, &f, sizeof f);
    }
    /* optional: OpenBLAS's thread count (blas.c sets it per product) */
    void (*set)(int) = (void (*)(int))(uintptr_t)dlsym(handle, "openblas_set_num_threads");
    int (*get)(void) = (int (*)(void))(uintptr_t)dlsym(handle, "openblas_get_num_threads");
    if (set && get) {
        t->set_threads = set;
        t->get_threads = get;
    }
    return NULL;
}

static void load_once(void) {
    ltf_blas_lib t;
    if (!resolve(RTLD_DEFAULT, &t)) {   /* already in the process */
        blas_fns = t;
        blas_ok = 1;
        return;
    }
    const char *env = getenv("LTF_BLAS_LIBRARY");
    const char *names[2] = { LTF_BLAS_SONAME, NULL };
#ifdef LTF_BLAS_PATH
    names[1] = LTF_BLAS_PATH;
#endif
    if (env && *env) {
        names[0] = env;
        names[1] = NULL;
    }
    char first[400] = "";
    for (int i = 0; i < 2 && names[i]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        const char *missing = NULL;
        if (h && !(missing = resolve(h, &t))) {
            blas_fns = t;
            blas_ok = 1;
            return;
        }
        if (i == 0) {   /* the reason reported: the first name's */
            if (h) snprintf(first, sizeof first, "%s: no symbol %s", names[i], missing);
            else {
                const char *e = dlerror();
                snprintf(first, sizeof first, "%s", e ? e : names[i]);
            }
        }
        if (h) dlclose(h);
    }
    snprintf(blas_err, sizeof blas_err, "%s", first);
}

ltf_status ltf_blas_lib_load(ltf_ctx *ctx, const char *op, const ltf_blas_lib **lib) {
    pthread_once(&blas_once, load_once);
    if (blas_ok) {
        *lib = &blas_fns;
        return LTF_OK;
    }
    *lib = NULL;
    return ltf_fail(ctx, LTF_ERR_FAILED_PRECONDITION,
                    "%s: OpenBLAS could not be loaded (%s); install libopenblas0 or set LTF_BLAS_LIBRARY", op,
                    blas_err);
}

const ltf_blas_lib *ltf_blas_lib_loaded(void) {
    pthread_once(&blas_once, load_once);
    LTF_ASSERT(blas_ok);
    return &blas_fns;
}
