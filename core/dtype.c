/*
** dtype.c: names and sizes of element types.
*/
#include <string.h>
#include "ltf.h"

static const char *const dtype_names[LTF_DTYPE_COUNT] = { /* ORDER DTYPE */
    "float32", "float64", "int32", "int64", "uint8", "bool", "string", "resource", "float16", "bfloat16"
};

static const size_t dtype_sizes[LTF_DTYPE_COUNT] = {      /* ORDER DTYPE */
    4, 8, 4, 8, 1, 1, sizeof(void *), sizeof(void *), 2, 2
};

const char *ltf_dtype_name(ltf_dtype dt) {
    return (unsigned)dt < LTF_DTYPE_COUNT ? dtype_names[dt] : NULL;
}

size_t ltf_dtype_size(ltf_dtype dt) {
    return (unsigned)dt < LTF_DTYPE_COUNT ? dtype_sizes[dt] : 0;
}

int ltf_dtype_is_half(ltf_dtype dt) { return dt == LTF_DTYPE_FLOAT16 || dt == LTF_DTYPE_BFLOAT16; }

int ltf_dtype_from_name(const char *name, ltf_dtype *out) {
    if (!name || !out) return -1;
    for (int i = 0; i < LTF_DTYPE_COUNT; i++)
        if (strcmp(name, dtype_names[i]) == 0) {
            *out = (ltf_dtype)i;
            return 0;
        }
    return -1;
}
