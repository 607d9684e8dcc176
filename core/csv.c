/*
** csv.c: the CSV parser behind tf.io.decode_csv, CsvDataset and
** make_csv_dataset (docs/data.md "CSV"). RFC 4180: fields separated by a
** one-byte delimiter; with quotes on, a field starting with '"' runs to the
** next lone '"' (a doubled "" is one quote; delimiters, CR and LF inside are
** data); records end at LF or CRLF (file mode) or are given one per string
** (decode_csv). Numbers are converted without a copy: a fast exact path for
** up to 15 significant digits and a power of ten up to 22 (Clinger), strtod
** /strtof otherwise. Every error is an InvalidArgumentError naming the record
** (and file). Nothing here touches the file system.
*/
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ltf_data.h"
#include "ctx.h"
#include "tensor.h"

/* One field: its bytes in the record, and whether it was quoted (a quoted
** field with doubled quotes needs unescaping). */
typedef struct field {
    const char *p;
    size_t n;
    int quoted, escaped;
} field;

typedef struct fields {
    field *f;
    int n, cap;
} fields;

static int push_field(fields *fs, const char *p, size_t n, int quoted, int escaped) {
    if (fs->n == fs->cap) {
        int cap = fs->cap ? fs->cap * 2 : 16;
        field *nf = realloc(fs->f, sizeof(field) * (size_t)cap);
        if (!nf) return 0;
        fs->f = nf;
        fs->cap = cap;
    }
    fs->f[fs->n++] = (field){p, n, quoted, escaped};
    return 1;
}

static const char *where(const char *name, char *buf, size_t sz) {
    if (name && *name) snprintf(buf, sz, "%s: ", name);
    else buf[0] = 0;
    return buf;
}

/* Split one record starting at 'p' into 'fs'. In file mode ('lines') an
** unquoted LF ends the record (a CR before it is dropped) and '*next' is
** set past it; otherwise the record is all of [p, end). */
/* The bytes that end an unquoted field: the delimiter, LF in file mode, '"' with quotes on. */
static void stop_table(unsigned char stop[256], const ltf_csv_options *o, int lines) {
    memset(stop, 0, 256);
    stop[(unsigned char)o->delim] = 1;
    if (lines) stop['\n'] = 1;
    if (o->use_quote) stop['"'] = 1;
}

static ltf_status split_record(ltf_ctx *ctx, const char *p, const char *end, const ltf_csv_options *o, int lines,
                               const unsigned char *stop, fields *fs, const char **next, int64_t rec,
                               const char *name) {
    char w[300];
    char d = o->delim;
    fs->n = 0;
    for (;;) {
        if (o->use_quote && p < end && *p == '"') {
            const char *s = ++p;
            int esc = 0;
            for (;;) {
                const char *q = memchr(p, '"', (size_t)(end - p));
                if (!q)
                    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%sQuoted field has to end with quote followed by "
                                    "delim or end in record %lld", where(name, w, sizeof w), (long long)rec);
                if (q + 1 < end && q[1] == '"') {   /* "" is one quote */
                    esc = 1;
                    p = q + 2;
                    continue;
                }
                p = q + 1;
                if (!push_field(fs, s, (size_t)(q - s), 1, esc)) return ltf_fail_oom(ctx, "csv", 0);
                break;
            }
            if (p == end) { *next = end; return LTF_OK; }
            if (*p == d) { p++; continue; }
            if (lines && (*p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n'))) {
                *next = p + (*p == '\r' ? 2 : 1);
                return LTF_OK;
            }
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%sQuote inside a string has to be escaped by another quote "
                            "in record %lld", where(name, w, sizeof w), (long long)rec);
        }
        const char *s = p;
        if (!lines && !o->use_quote) {
            const char *q = memchr(p, d, (size_t)(end - p));
            p = q ? q : end;
        } else {
            while (p < end && !stop[(unsigned char)*p]) p++;
            if (p < end && *p == '"' && o->use_quote && d != '"')
                return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%sUnquoted fields cannot have quotes inside in "
                                "record %lld", where(name, w, sizeof w), (long long)rec);
        }
        size_t n = (size_t)(p - s);
        int eol = lines && p < end && *p == '\n';
        if ((eol || (lines && p == end)) && n > 0 && s[n - 1] == '\r') n--;
        if (!push_field(fs, s, n, 0, 0)) return ltf_fail_oom(ctx, "csv", 0);
        if (p < end && *p == d) { p++; continue; }
        *next = p < end ? p + 1 : end;
        return LTF_OK;
    }
}

/* {==== numbers */
static const double pow10tab[23] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                                    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Exact double for simple decimals ([+-]digits[.digits][e[+-]digits]) of at
** most 15 significant digits and a decimal exponent within 22; 0 when the
** text is not of that form (the caller uses strtod). */
static int fast_double(const char *p, size_t n, double *out) {
    const char *e = p + n;
    int neg = 0;
    if (p < e && (*p == '-' || *p == '+')) { neg = *p == '-'; p++; }
    uint64_t m = 0;
    int digits = 0, any = 0, scale = 0;
    while (p < e && *p >= '0' && *p <= '9') {
        if (m || *p != '0') digits++;
        m = m * 10 + (uint64_t)(*p - '0');
        any = 1;
        p++;
        if (digits > 15) return 0;
    }
    if (p < e && *p == '.') {
        p++;
        while (p < e && *p >= '0' && *p <= '9') {
            if (m || *p != '0') digits++;
            m = m * 10 + (uint64_t)(*p - '0');
            scale--;
            any = 1;
            p++;
            if (digits > 15) return 0;
        }
    }
    if (!any) return 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0, ex = 0, ed = 0;
        if (p < e && (*p == '-' || *p == '+')) { eneg = *p == '-'; p++; }
        while (p < e && *p >= '0' && *p <= '9') {
            if (ex < 10000) ex = ex * 10 + (*p - '0');
            p++;
            ed = 1;
        }
        if (!ed) return 0;
        scale += eneg ? -ex : ex;
    }
    if (p != e) return 0;
    double v = (double)m;
    if (scale < -22 || scale > 22) return 0;
    v = scale < 0 ? v / pow10tab[-scale] : v * pow10tab[scale];
    *out = neg ? -v : v;
    return 1;
}

/* Copy a field into 'buf' (NUL-terminated) for strtod & co; 0 if too long. */
static int cstr(const char *p, size_t n, char *buf, size_t sz) {
    if (n >= sz) return 0;
    memcpy(buf, p, n);
    buf[n] = 0;
    return 1;
}

static int parse_double(const char *p, size_t n, double *out) {
    if (fast_double(p, n, out)) return 1;
    char b[512];
    if (n == 0 || !cstr(p, n, b, sizeof b)) return 0;
    char *endp;
    errno = 0;
    double v = strtod(b, &endp);
    if (endp != b + n || (errno == ERANGE && fabs(v) > 1)) return 0;
    *out = v;
    return 1;
}

static int parse_float(const char *p, size_t n, float *out) {
    double d;
    if (fast_double(p, n, &d)) {
        /* rounding the (correctly rounded) double to float is wrong only when
        ** d is exactly halfway between two floats: the 29 bits below a
        ** normal float's mantissa are then 1 followed by zeros */
        double a = fabs(d);
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        if (a == 0 || (a >= 1.1754943508222875e-38 && a <= 3.4028234663852886e38 &&
                       (bits & ((1ull << 29) - 1)) != (1ull << 28))) {
            *out = (float)d;
            return 1;
        }
    }
    char b[512];
    if (n == 0 || !cstr(p, n, b, sizeof b)) return 0;
    char *endp;
    errno = 0;
    float v = strtof(b, &endp);
    if (endp != b + n || (errno == ERANGE && fabsf(v) > 1)) return 0;
    *out = v;
    return 1;
}

static int parse_int(const char *p, size_t n, int64_t lo, int64_t hi, int64_t *out) {
    const char *e = p + n;
    int neg = 0;
    if (p < e && (*p == '-' || *p == '+')) { neg = *p == '-'; p++; }
    if (p == e) return 0;
    uint64_t lim = neg ? (uint64_t)(-(lo + 1)) + 1 : (uint64_t)hi, v = 0;
    for (; p < e; p++) {
        if (*p < '0' || *p > '9') return 0;
        unsigned dg = (unsigned)(*p - '0');
        if (v > (lim - dg) / 10) return 0;
        v = v * 10 + dg;
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 1;
}
/* }==== */

static int is_na(const field *f, const ltf_csv_options *o) {
    if (f->n == 0) return 1;   /* an empty field, quoted or not, is missing (TensorFlow) */
    return o->na_len > 0 && f->n == o->na_len && memcmp(f->p, o->na_value, o->na_len) == 0;
}

/* Store field 'f' (column 'c', default 'dflt' or NULL) into element 'i' of 'out'. */
static ltf_status put(ltf_ctx *ctx, ltf_tensor *out, int64_t i, const field *f, const ltf_tensor *dflt, int c,
                      int64_t rec, const ltf_csv_options *o, const char *name) {
    char w[300];
    ltf_dtype dt = out->dtype;
    void *D = LTF_DATA(out);
    if (is_na(f, o)) {
        if (!dflt || dflt->numel == 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%sField %d is required but missing in record %lld!",
                            where(name, w, sizeof w), c, (long long)rec);
        const void *S = LTF_DATA(dflt);
        switch (dt) {
        case LTF_DTYPE_FLOAT32: ((float *)D)[i] = *(const float *)S; break;
        case LTF_DTYPE_FLOAT64: ((double *)D)[i] = *(const double *)S; break;
        case LTF_DTYPE_INT32: ((int32_t *)D)[i] = *(const int32_t *)S; break;
        case LTF_DTYPE_INT64: ((int64_t *)D)[i] = *(const int64_t *)S; break;
        case LTF_DTYPE_STRING: {
            ltf_string *s = *(ltf_string *const *)S;
            if (s) s->refs++;
            ((ltf_string **)D)[i] = s;
            break;
        }
        default: break;
        }
        return LTF_OK;
    }
    const char *p = f->p;
    size_t n = f->n;
    char *tmp = NULL;
    if (f->escaped) {   /* "" -> " */
        tmp = malloc(n + 1);
        if (!tmp) return ltf_fail_oom(ctx, "csv", n);
        size_t k = 0;
        for (size_t j = 0; j < n; j++) {
            tmp[k++] = p[j];
            if (p[j] == '"' && j + 1 < n && p[j + 1] == '"') j++;
        }
        p = tmp;
        n = k;
    }
    ltf_status st = LTF_OK;
    int ok = 1;
    const char *tn = "";
    switch (dt) {
    case LTF_DTYPE_FLOAT32: ok = parse_float(p, n, &((float *)D)[i]); tn = "float"; break;
    case LTF_DTYPE_FLOAT64: ok = parse_double(p, n, &((double *)D)[i]); tn = "double"; break;
    case LTF_DTYPE_INT32: {
        int64_t v = 0;
        ok = parse_int(p, n, INT32_MIN, INT32_MAX, &v);
        ((int32_t *)D)[i] = (int32_t)v;
        tn = "int32";
        break;
    }
    case LTF_DTYPE_INT64: ok = parse_int(p, n, INT64_MIN, INT64_MAX, &((int64_t *)D)[i]); tn = "int64"; break;
    case LTF_DTYPE_STRING:
        if (n > 0) {
            ltf_string *s = ltf_string_new(p, n);
            if (!s) st = ltf_fail_oom(ctx, "csv", n);
            ((ltf_string **)D)[i] = s;
        }
        break;
    default: break;
    }
    if (!ok) {
        int shown = n > 64 ? 64 : (int)n;
        st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%sField %d in record %lld is not a valid %s: %.*s%s",
                      where(name, w, sizeof w), c, (long long)rec, tn, shown, p, n > 64 ? "..." : "");
    }
    free(tmp);
    return st;
}

static ltf_status check_columns(ltf_ctx *ctx, const ltf_dtype *dtypes, int ncols, const int64_t *sel, int nsel) {
    for (int c = 0; c < ncols; c++) {
        ltf_dtype d = dtypes[c];
        if (d != LTF_DTYPE_FLOAT32 && d != LTF_DTYPE_FLOAT64 && d != LTF_DTYPE_INT32 && d != LTF_DTYPE_INT64 &&
            d != LTF_DTYPE_STRING)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "decode_csv: record_defaults[%d] has dtype %s: expected "
                            "float32, float64, int32, int64 or string", c + 1, ltf_dtype_name(d));
    }
    if (sel && nsel != ncols)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "decode_csv: %d select_cols but %d record_defaults: they "
                        "must have the same length", nsel, ncols);
    for (int k = 0; sel && k < nsel; k++) {
        if (sel[k] < 0 || (k > 0 && sel[k] <= sel[k - 1]))
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "decode_csv: select_cols must be increasing column "
                            "indices >= 0 (0-based, as TensorFlow), got %lld after %lld", (long long)sel[k],
                            (long long)(k > 0 ? sel[k - 1] : -1));
    }
    return LTF_OK;
}

/* Store the fields of one record: all of them (their count must be
** 'ncols') or the selected columns. */
static ltf_status store_record(ltf_ctx *ctx, const fields *fs, ltf_tensor **out, ltf_tensor *const *defaults,
                               int ncols, const int64_t *sel, int nsel, int64_t i, int64_t rec,
                               const ltf_csv_options *o, const char *name) {
    char w[300];
    if (!sel) {
        if (fs->n != ncols)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%sExpect %d fields but have %d in record %lld",
                            where(name, w, sizeof w), ncols, fs->n, (long long)rec);
        for (int c = 0; c < ncols; c++) {
            ltf_status st = put(ctx, out[c], i, &fs->f[c], defaults ? defaults[c] : NULL, c, rec, o, name);
            if (st != LTF_OK) return st;
        }
        return LTF_OK;
    }
    if (fs->n <= sel[nsel - 1])
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%sExpect at least %lld fields (select_cols) but have %d in "
                        "record %lld", where(name, w, sizeof w), (long long)sel[nsel - 1] + 1, fs->n, (long long)rec);
    for (int c = 0; c < nsel; c++) {
        ltf_status st = put(ctx, out[c], i, &fs->f[sel[c]], defaults ? defaults[c] : NULL, (int)sel[c], rec, o, name);
        if (st != LTF_OK) return st;
    }
    return LTF_OK;
}

static void release_all(ltf_tensor **out, int n) {
    for (int c = 0; c < n; c++) {
        if (out[c]) ltf_tensor_release(out[c]);
        out[c] = NULL;
    }
}

ltf_status ltf_csv_decode(ltf_ctx *ctx, const ltf_tensor *records, ltf_tensor *const *defaults, int ncols,
                          const int64_t *select_cols, int nsel, const ltf_csv_options *o, ltf_tensor **out) {
    ltf_dtype dts[LTF_CSV_MAX_COLUMNS];
    if (ncols < 1 || ncols > LTF_CSV_MAX_COLUMNS)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "decode_csv: %d record_defaults: expected 1 to %d", ncols,
                        LTF_CSV_MAX_COLUMNS);
    if (records->dtype != LTF_DTYPE_STRING)
        return ltf_fail(ctx, LTF_ERR_TYPE, "decode_csv: 'records' has dtype %s, expected string",
                        ltf_dtype_name(records->dtype));
    for (int c = 0; c < ncols; c++) dts[c] = defaults[c]->dtype;
    ltf_status st = check_columns(ctx, dts, ncols, select_cols, nsel);
    if (st != LTF_OK) return st;
    for (int c = 0; c < ncols; c++) out[c] = NULL;
    for (int c = 0; c < ncols; c++) {
        out[c] = ltf_tensor_empty(ctx, dts[c], records->rank, records->dims);
        if (!out[c]) { release_all(out, c); return ctx->last_status; }
    }
    fields fs = {0};
    unsigned char stop[256];
    stop_table(stop, o, 0);
    ltf_string *const *R = LTF_DATA(records);
    for (int64_t r = 0; r < records->numel && st == LTF_OK; r++) {
        const char *p = R[r] ? R[r]->bytes : "";
        size_t n = R[r] ? R[r]->len : 0;
        const char *next;
        st = split_record(ctx, p, p + n, o, 0, stop, &fs, &next, r, NULL);
        if (st == LTF_OK) st = store_record(ctx, &fs, out, defaults, ncols, select_cols, nsel, r, r, o, NULL);
    }
    free(fs.f);
    if (st != LTF_OK) release_all(out, ncols);
    return st;
}

ltf_status ltf_csv_parse(ltf_ctx *ctx, const char *buf, size_t size, const ltf_csv_options *o,
                         ltf_tensor *const *defaults, int ncols, const int64_t *select_cols, int nsel,
                         const char *name, ltf_tensor **out, int64_t *nrecords) {
    ltf_dtype dts[LTF_CSV_MAX_COLUMNS];
    *nrecords = 0;
    if (ncols < 1 || ncols > LTF_CSV_MAX_COLUMNS)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "CsvDataset: %d record_defaults: expected 1 to %d", ncols,
                        LTF_CSV_MAX_COLUMNS);
    for (int c = 0; c < ncols; c++) dts[c] = defaults[c]->dtype;
    ltf_status st = check_columns(ctx, dts, ncols, select_cols, nsel);
    if (st != LTF_OK) return st;
    /* count the records (an upper bound: LF bytes + 1) to size the columns */
    int64_t cap = 1;
    for (const char *p = buf, *e = buf + size; (p = memchr(p, '\n', (size_t)(e - p))) != NULL; p++) cap++;
    for (int c = 0; c < ncols; c++) out[c] = NULL;
    for (int c = 0; c < ncols; c++) {
        out[c] = ltf_tensor_empty(ctx, dts[c], 1, &cap);
        if (!out[c]) { release_all(out, c); return ctx->last_status; }
        if (dts[c] == LTF_DTYPE_STRING) memset(LTF_DATA(out[c]), 0, sizeof(void *) * (size_t)cap);
    }
    fields fs = {0};
    unsigned char stop[256];
    stop_table(stop, o, 1);
    const char *p = buf, *e = buf + size;
    int64_t rec = 0, n = 0;
    if (o->header) {   /* skip the header record (quotes honoured) */
        while (p < e && st == LTF_OK && rec == 0) {
            const char *next;
            st = split_record(ctx, p, e, o, 1, stop, &fs, &next, 0, name);
            p = next;
            rec = 1;
        }
    }
    while (p < e && st == LTF_OK) {
        if (*p == '\n' || (*p == '\r' && p + 1 < e && p[1] == '\n')) {   /* blank lines are skipped */
            p += *p == '\n' ? 1 : 2;
            rec++;
            continue;
        }
        const char *next;
        st = split_record(ctx, p, e, o, 1, stop, &fs, &next, rec, name);
        if (st == LTF_OK) st = store_record(ctx, &fs, out, defaults, ncols, select_cols, nsel, n, rec, o, name);
        if (st == LTF_OK && n + 1 > cap) st = ltf_fail(ctx, LTF_ERR_INTERNAL, "csv: record count overflow");
        n++;
        rec++;
        p = next;
    }
    free(fs.f);
    if (st != LTF_OK) {
        release_all(out, ncols);
        return st;
    }
    for (int c = 0; c < ncols; c++) {   /* shrink the first dimension to the records read (a view) */
        out[c]->dims[0] = n;
        out[c]->numel = n;
        if (dts[c] == LTF_DTYPE_STRING) {
            ltf_string **S = LTF_DATA(out[c]);
            for (int64_t i = n; i < cap; i++) if (S[i]) ltf_string_release(S[i]);
        }
    }
    *nrecords = n;
    return LTF_OK;
}
