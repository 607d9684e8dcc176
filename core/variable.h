/*
** variable.h: the variable resource behind a handle tensor.
*/
#ifndef LTF_VARIABLE_H
#define LTF_VARIABLE_H

#include "tensor.h"

typedef struct ltf_variable {
    int32_t refs;
    ltf_ctx *ctx;
    ltf_tensor *value;            /* current value (concrete, owned) */
    ltf_dtype dtype;
    int rank;                     /* declared shape; -1 = any */
    int64_t dims[LTF_MAX_RANK];
    int trainable;
    int64_t id;
    char *name;
} ltf_variable;

/* The variable behind a resource tensor (lent), or NULL. */
LTF_INTERNAL ltf_variable *ltf_variable_of(const ltf_tensor *handle);
/* Replace the value (takes ownership of 'value'). */
LTF_INTERNAL void ltf_variable_set(ltf_variable *v, ltf_tensor *value);
/* Whether a value of 'value''s type fits the declared type; fails naming 'op'. */
LTF_INTERNAL ltf_status ltf_variable_check(ltf_ctx *ctx, const ltf_variable *v, const char *op,
                                           ltf_dtype dt, int rank, const int64_t *dims);
/* Whether the resource tensor 'x' is a trainable variable (the tape
** watches those on its own). */
LTF_INTERNAL int ltf_variable_trainable(const ltf_tensor *x);

#endif
