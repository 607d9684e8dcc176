/*
** fuzz_csv.c: libFuzzer target over the CSV parser (core/csv.c). The first
** 4 bytes choose the options and columns: byte 0 the delimiter (one of
** , ; | TAB " and the byte itself when >= 0x80), bit flags of byte 1
** (use_quote, header, select_cols, na_value "NA"), byte 2 the column count
** (1..8), byte 3 two bits per column for the dtype (float32, float64,
** int32/int64, string) and required columns; the rest is the CSV text.
** ltf_csv_parse runs on the whole text, ltf_csv_decode on its lines as
** records. Either gives columns of one length and the asked dtypes, or a
** failure with a message; never a crash, a leak or a read past the input.
*/
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ltf.h"
#include "ltf_data.h"

static void fail(const char *what) {
    fprintf(stderr, "fuzz_csv: %s\n", what);
    abort();
}

static const ltf_dtype DTS[4] = {LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64, LTF_DTYPE_INT32, LTF_DTYPE_STRING};

static void check(ltf_ctx *ctx, ltf_status st, ltf_tensor **out, int ncols, const ltf_dtype *dts, int64_t n) {
    if (st == LTF_OK) {
        for (int c = 0; c < ncols; c++) {
            if (!out[c]) fail("success without a column");
            if (ltf_tensor_dtype(out[c]) != dts[c]) fail("a column of the wrong dtype");
            if (n >= 0 && ltf_tensor_num_elements(out[c]) != n) fail("columns of different lengths");
            if (dts[c] == LTF_DTYPE_STRING) {   /* touch every string */
                ltf_string *const *S = ltf_tensor_data(out[c]);
                volatile size_t sink = 0;
                for (int64_t i = 0; i < ltf_tensor_num_elements(out[c]); i++)
                    if (S[i]) sink += (size_t)S[i]->bytes[S[i]->len];
                (void)sink;
            }
            ltf_tensor_release(out[c]);
        }
    } else {
        const char *msg = ltf_ctx_error(ctx);
        if (!msg || !msg[0]) fail("failure without a message");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 4) return 0;
    ltf_ctx *ctx = ltf_ctx_new();
    if (!ctx) return 0;
    static const char delims[] = {',', ';', '|', '\t', '"'};
    char delim = data[0] < 0x80 ? delims[data[0] % 5] : (char)data[0];
    ltf_csv_options o = {delim, data[1] & 1, (data[1] & 8) ? "NA" : NULL, (data[1] & 8) ? 2u : 0u, (data[1] >> 1) & 1};
    int ncols = 1 + data[2] % 8;
    ltf_dtype dts[8];
    ltf_tensor *dfl[8], *out[8];
    int64_t sel[8];
    for (int c = 0; c < ncols; c++) {
        int code = (data[3] >> (2 * (c % 4))) & 3;
        dts[c] = DTS[code];
        int required = ((data[2] >> 3) >> (c % 5)) & 1;
        int64_t zero = 0;
        dfl[c] = required ? ltf_tensor_new(ctx, dts[c], 1, &zero) : ltf_tensor_new(ctx, dts[c], 0, NULL);
        if (!dfl[c]) fail("cannot make a default");
        sel[c] = 2 * c + (data[1] >> 4 & 1);
    }
    const int64_t *sp = (data[1] & 4) ? sel : NULL;
    const char *text = (const char *)data + 4;
    size_t n = size - 4;

    int64_t nrec = -1;
    ltf_status st = ltf_csv_parse(ctx, text, n, &o, dfl, ncols, sp, ncols, "fuzz.csv", out, &nrec);
    check(ctx, st, out, ncols, dts, st == LTF_OK ? nrec : -1);

    /* decode_csv over the lines (NUL-terminated copies) */
    size_t nl = 1;
    for (size_t i = 0; i < n; i++) nl += text[i] == '\n';
    char *copy = malloc(n + 1);
    const char **recs = malloc(sizeof(char *) * nl);
    if (copy && recs) {
        memcpy(copy, text, n);
        copy[n] = 0;
        size_t k = 0;
        recs[k++] = copy;
        for (size_t i = 0; i < n; i++)
            if (copy[i] == '\n') { copy[i] = 0; recs[k++] = copy + i + 1; }
        int64_t dims[1] = {(int64_t)k};
        ltf_tensor *r = ltf_tensor_from_data(ctx, LTF_DTYPE_STRING, 1, dims, recs);
        if (r) {
            st = ltf_csv_decode(ctx, r, dfl, ncols, sp, ncols, &o, out);
            check(ctx, st, out, ncols, dts, (int64_t)k);
            ltf_tensor_release(r);
        }
    }
    free(copy);
    free(recs);
    for (int c = 0; c < ncols; c++) ltf_tensor_release(dfl[c]);
    ltf_ctx_release(ctx);
    return 0;
}
