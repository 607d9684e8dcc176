/*
** cpu/control.c: the print kernel. The host's hook formats (the Lua
** bindings use tf.format); without one, a plain printer writes flat values.
*/
#include <stdio.h>
#include <string.h>
#include "cpu.h"

static void plain_print(FILE *out, const ltf_tensor *t) {
    int64_t n = t->numel;
    const char *p = LTF_DATA(t);
    if (t->rank > 0) fputc('[', out);
    for (int64_t i = 0; i < n; i++) {
        if (i) fputc(' ', out);
        switch (t->dtype) {
        case LTF_DTYPE_FLOAT32: fprintf(out, "%g", ((const float *)p)[i]); break;
        case LTF_DTYPE_FLOAT64: fprintf(out, "%g", ((const double *)p)[i]); break;
        case LTF_DTYPE_INT32: fprintf(out, "%d", ((const int32_t *)p)[i]); break;
        case LTF_DTYPE_INT64: fprintf(out, "%lld", (long long)((const int64_t *)p)[i]); break;
        case LTF_DTYPE_UINT8: fprintf(out, "%u", ((const uint8_t *)p)[i]); break;
        case LTF_DTYPE_BOOL: fputs(((const uint8_t *)p)[i] ? "True" : "False", out); break;
        case LTF_DTYPE_STRING: {
            const ltf_string *s = ((ltf_string *const *)p)[i];
            if (s) fwrite(s->bytes, 1, s->len, out);
            break;
        }
        default: fputs("?", out);
        }
    }
    if (t->rank > 0) fputc(']', out);
}

ltf_status ltf_cpu_control_print(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_tensor **out, int nout) {
    (void)def; (void)out; (void)nout;
    ltf_print_options o = { " ", "\n", 3, LTF_PRINT_STDERR };
    if (a->i[2]) {     /* sep NUL end NUL (ops/control.c checked the layout) */
        o.sep = a->s;
        o.end = a->s + strlen(a->s) + 1;
        o.summarize = a->i[0];
        o.stream = a->i[1];
    }
    if (ctx->print_hook) return ctx->print_hook(ctx, ctx->print_ud, in, nin, &o);
    FILE *f = o.stream == LTF_PRINT_STDOUT ? stdout : stderr;
    for (int i = 0; i < nin; i++) {
        if (i) fputs(o.sep, f);
        plain_print(f, in[i]);
    }
    fputs(o.end, f);
    fflush(f);
    return LTF_OK;
}
