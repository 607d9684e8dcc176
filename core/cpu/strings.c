/*
** cpu/strings.c: kernels of the strings family (ltf_ops/strings.h).
** Regular expressions are PCRE2 (Debian's libpcre2-8): a well-kept engine
** with UTF-8 support and substitution built in; each kernel call compiles
** its pattern once and owns every PCRE2 object it makes (no global state).
*/
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <math.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"

/* {==== Helpers */
static const char *bytes_of(const ltf_string *s, size_t *len) {
    *len = s ? s->len : 0;
    return s ? s->bytes : "";
}

static const ltf_string *str_at(const ltf_tensor *t, int64_t i) {
    return ((ltf_string *const *)LTF_DATA(t))[i];
}

/* Store a new string (NULL for empty) into element 'i' of 'o'. */
static ltf_status put_str(ltf_ctx *ctx, ltf_tensor *o, int64_t i, const char *b, size_t n) {
    ltf_string **O = LTF_DATA(o);
    if (n == 0) return LTF_OK;
    O[i] = ltf_string_new(b, n);
    return O[i] ? LTF_OK : ltf_fail_oom(ctx, "string", n);
}

/* Element text for messages: at most 40 bytes, then "...". */
static const char *shown(const ltf_string *s, char *buf, size_t size) {
    size_t n;
    const char *b = bytes_of(s, &n);
    snprintf(buf, size, "%.*s%s", (int)(n > 40 ? 40 : n), b, n > 40 ? "..." : "");
    return buf;
}

static int64_t int_at(const ltf_tensor *t, int64_t i) {
    if (t->numel == 1) i = 0;
    return t->dtype == LTF_DTYPE_INT32 ? ((const int32_t *)LTF_DATA(t))[i] : ((const int64_t *)LTF_DATA(t))[i];
}

static int is_cont(unsigned char c) { return (c & 0xc0) == 0x80; }

/* Byte offset of character 'k' (0-based) of b[0..n), n when past the end. */
static size_t utf8_offset(const char *b, size_t n, int64_t k) {
    size_t p = 0;
    while (p < n && k > 0) {
        p++;
        while (p < n && is_cont((unsigned char)b[p])) p++;
        k--;
    }
    return p;
}

static int64_t utf8_count(const char *b, size_t n) {
    int64_t c = 0;
    for (size_t i = 0; i < n; i++) c += !is_cont((unsigned char)b[i]);
    return c;
}
/* }==== */

/* {==== string_length, substr */
ltf_status ltf_cpu_strings_length(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                  const ltf_attrs *a, ltf_tensor **out, int nout) {
    int32_t *o = LTF_DATA(out[0]);
    for (int64_t i = 0; i < in[0]->numel; i++) {
        size_t n;
        const char *b = bytes_of(str_at(in[0], i), &n);
        int64_t v = a->i[0] ? utf8_count(b, n) : (int64_t)n;
        if (v > INT32_MAX)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: a string of %lld units does not fit int32", def->name,
                            (long long)v);
        o[i] = (int32_t)v;
    }
    return LTF_OK;
}

ltf_status ltf_cpu_strings_substr(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                  const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_tensor *x = in[0];
    if (in[1]->numel != 1 && in[1]->numel != x->numel)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'pos' has %lld elements, 'input' %lld", def->name,
                        (long long)in[1]->numel, (long long)x->numel);
    if (in[2]->numel != 1 && in[2]->numel != x->numel)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'len' has %lld elements, 'input' %lld", def->name,
                        (long long)in[2]->numel, (long long)x->numel);
    int utf8 = a->i[0] == 1;
    for (int64_t i = 0; i < x->numel; i++) {
        size_t nb;
        const char *b = bytes_of(str_at(x, i), &nb);
        int64_t n = utf8 ? utf8_count(b, nb) : (int64_t)nb;
        int64_t pos = int_at(in[1], i), len = int_at(in[2], i);
        if (len < 0)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'len' is %lld at element %lld, must be >= 0", def->name,
                            (long long)len, (long long)i + 1);
        int64_t p0 = pos > 0 ? pos - 1 : n + pos;
        if (pos == 0 || p0 < 0 || p0 > n)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: 'pos' %lld is out of range for a string of length %lld at element %lld (positions "
                            "are 1-based: 1..%lld, or -%lld..-1 from the end)",
                            def->name, (long long)pos, (long long)n, (long long)i + 1, (long long)n + 1, (long long)n);
        int64_t p1 = len > n - p0 ? n : p0 + len;
        size_t b0 = utf8 ? utf8_offset(b, nb, p0) : (size_t)p0, b1 = utf8 ? utf8_offset(b, nb, p1) : (size_t)p1;
        ltf_status st = put_str(ctx, out[0], i, b + b0, b1 - b0);
        if (st != LTF_OK) return st;
    }
    return LTF_OK;
}
/* }==== */

/* {==== string_to_number */
ltf_status ltf_cpu_strings_to_number(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                     const ltf_attrs *a, ltf_tensor **out, int nout) {
    ltf_dtype dt = out[0]->dtype;
    void *o = LTF_DATA(out[0]);
    for (int64_t i = 0; i < in[0]->numel; i++) {
        const ltf_string *s = str_at(in[0], i);
        size_t n;
        const char *b = bytes_of(s, &n);
        char *end = NULL;
        errno = 0;
        double f = 0;
        long long v = 0;
        if (dt == LTF_DTYPE_FLOAT32 || dt == LTF_DTYPE_FLOAT64) f = strtod(b, &end);
        else v = strtoll(b, &end, 10);
        int bad = end == b || (dt != LTF_DTYPE_FLOAT32 && dt != LTF_DTYPE_FLOAT64 && errno == ERANGE);
        const char *h = b;   /* decimal only, as TensorFlow: strtod would also read hex ("0x1p3") */
        while (h < b + n && (*h == ' ' || (*h >= '\t' && *h <= '\r') || *h == '+' || *h == '-')) h++;
        if (h + 1 < b + n && h[0] == '0' && (h[1] == 'x' || h[1] == 'X')) bad = 1;
        while (!bad && end < b + n && (*end == ' ' || (*end >= '\t' && *end <= '\r'))) end++;
        bad = bad || end != b + n;
        if (!bad && dt == LTF_DTYPE_INT32 && (v < INT32_MIN || v > INT32_MAX)) bad = 1;
        if (bad) {
            char buf[64];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: cannot convert '%s' (element %lld) to %s", def->name,
                            shown(s, buf, sizeof buf), (long long)i + 1, ltf_dtype_name(dt));
        }
        switch (dt) {
        case LTF_DTYPE_FLOAT32: ((float *)o)[i] = (float)f; break;
        case LTF_DTYPE_FLOAT64: ((double *)o)[i] = f; break;
        case LTF_DTYPE_INT32: ((int32_t *)o)[i] = (int32_t)v; break;
        default: ((int64_t *)o)[i] = (int64_t)v; break;
        }
    }
    return LTF_OK;
}
/* }==== */

/* {==== regex_full_match, regex_replace */
static pcre2_code *compile(ltf_ctx *ctx, const ltf_op_def *def, const ltf_tensor *pattern, ltf_status *st) {
    size_t n;
    const char *b = bytes_of(str_at(pattern, 0), &n);
    int err;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)b, n, PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &err, &off, NULL);
    if (!re) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(err, msg, sizeof msg);
        char buf[64];
        *st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: invalid pattern '%s': %s at offset %zu", def->name,
                       shown(str_at(pattern, 0), buf, sizeof buf), (const char *)msg, (size_t)off);
    }
    return re;
}

static ltf_status match_error(ltf_ctx *ctx, const ltf_op_def *def, int rc) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(rc, msg, sizeof msg);
    return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: %s", def->name, (const char *)msg);
}

ltf_status ltf_cpu_strings_regex_full_match(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                            const ltf_attrs *a, ltf_tensor **out, int nout) {
    ltf_status st = LTF_OK;
    pcre2_code *re = compile(ctx, def, in[1], &st);
    if (!re) return st;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    if (!md) {
        pcre2_code_free(re);
        return ltf_fail_oom(ctx, "regex match data", 0);
    }
    uint8_t *o = LTF_DATA(out[0]);
    for (int64_t i = 0; i < in[0]->numel && st == LTF_OK; i++) {
        size_t n;
        const char *b = bytes_of(str_at(in[0], i), &n);
        int rc = pcre2_match(re, (PCRE2_SPTR)b, n, 0, PCRE2_ANCHORED | PCRE2_ENDANCHORED, md, NULL);
        if (rc >= 0) o[i] = 1;
        else if (rc == PCRE2_ERROR_NOMATCH) o[i] = 0;
        else st = match_error(ctx, def, rc);
    }
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return st;
}

/* TensorFlow's (RE2's) rewrite "\1" / "\\" in PCRE2's form "${1}" / "\", '$' as "$$"
** (into 'r', at least 5 * n + 1 bytes); -1 for a backslash PCRE2 cannot take. */
static int64_t convert_rewrite(const char *b, size_t n, char *r) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = b[i];
        if (c == '$') {
            r[k++] = '$';
            r[k++] = '$';
        } else if (c == '\\') {
            if (i + 1 >= n) return -1;
            char d = b[++i];
            if (d >= '0' && d <= '9') {
                r[k++] = '$'; r[k++] = '{'; r[k++] = d; r[k++] = '}';
            } else if (d == '\\') {
                r[k++] = '\\';
            } else {
                return -1;
            }
        } else {
            r[k++] = c;
        }
    }
    r[k] = '\0';
    return (int64_t)k;
}

ltf_status ltf_cpu_strings_regex_replace(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                         const ltf_attrs *a, ltf_tensor **out, int nout) {
    size_t rn;
    const char *rb = bytes_of(str_at(in[2], 0), &rn);
    char *rw = malloc(5 * rn + 1);
    if (!rw) return ltf_fail_oom(ctx, "regex rewrite", 5 * rn + 1);
    int64_t rl = convert_rewrite(rb, rn, rw);
    if (rl < 0) {
        free(rw);
        char buf[64];
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                        "%s: invalid rewrite '%s': a backslash must be followed by a digit (a group) or a backslash",
                        def->name, shown(str_at(in[2], 0), buf, sizeof buf));
    }
    ltf_status st = LTF_OK;
    pcre2_code *re = compile(ctx, def, in[1], &st);
    pcre2_match_data *md = re ? pcre2_match_data_create_from_pattern(re, NULL) : NULL;
    size_t cap = 256;
    char *buf = malloc(cap);
    if (re && (!md || !buf)) st = ltf_fail_oom(ctx, "regex", cap);
    uint32_t opts = PCRE2_SUBSTITUTE_OVERFLOW_LENGTH | (a->i[0] ? PCRE2_SUBSTITUTE_GLOBAL : 0);
    for (int64_t i = 0; re && st == LTF_OK && i < in[0]->numel; i++) {
        size_t n;
        const char *b = bytes_of(str_at(in[0], i), &n);
        PCRE2_SIZE len = cap;
        int rc = pcre2_substitute(re, (PCRE2_SPTR)b, n, 0, opts, md, NULL, (PCRE2_SPTR)rw, (PCRE2_SIZE)rl,
                                  (PCRE2_UCHAR *)buf, &len);
        if (rc == PCRE2_ERROR_NOMEMORY) {   /* 'len' is now the size needed */
            char *nb = realloc(buf, len + 1);
            if (!nb) {
                st = ltf_fail_oom(ctx, "regex output", len + 1);
                break;
            }
            buf = nb;
            cap = len + 1;
            len = cap;
            rc = pcre2_substitute(re, (PCRE2_SPTR)b, n, 0, opts, md, NULL, (PCRE2_SPTR)rw, (PCRE2_SIZE)rl,
                                  (PCRE2_UCHAR *)buf, &len);
        }
        if (rc < 0) st = match_error(ctx, def, rc);
        else st = put_str(ctx, out[0], i, buf, len);
    }
    free(buf);
    free(rw);
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return st;
}
/* }==== */

/* {==== string_format */
typedef struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_add(sbuf *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 64;
        while (c < b->n + n + 1) c *= 2;
        char *q = realloc(b->p, c);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void sb_str(sbuf *b, const char *s) { sb_add(b, s, strlen(s)); }

/* The shortest %g form of 'v' that reads back as the same value. */
static void fmt_real(char *buf, size_t size, double v, int single) {
    for (int prec = single ? 6 : 15; prec <= (single ? 9 : 17); prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (single ? (float)strtod(buf, NULL) == (float)v : strtod(buf, NULL) == v) return;
    }
}

static void fmt_elem(sbuf *b, const ltf_tensor *t, int64_t i) {
    char buf[64];
    const void *p = LTF_DATA(t);
    switch (t->dtype) {
    case LTF_DTYPE_FLOAT32: fmt_real(buf, sizeof buf, ((const float *)p)[i], 1); break;
    case LTF_DTYPE_FLOAT64: fmt_real(buf, sizeof buf, ((const double *)p)[i], 0); break;
    case LTF_DTYPE_INT32: snprintf(buf, sizeof buf, "%d", ((const int32_t *)p)[i]); break;
    case LTF_DTYPE_INT64: snprintf(buf, sizeof buf, "%lld", (long long)((const int64_t *)p)[i]); break;
    case LTF_DTYPE_UINT8: snprintf(buf, sizeof buf, "%u", ((const uint8_t *)p)[i]); break;
    case LTF_DTYPE_BOOL: snprintf(buf, sizeof buf, "%s", ((const uint8_t *)p)[i] ? "True" : "False"); break;
    case LTF_DTYPE_STRING: {
        size_t n;
        const char *s = bytes_of(str_at(t, i), &n);
        sb_add(b, "\"", 1);
        sb_add(b, s, n);
        sb_add(b, "\"", 1);
        return;
    }
    default: snprintf(buf, sizeof buf, "?"); break;
    }
    sb_str(b, buf);
}

/* Dimension 'd' of 't' from element offset 'off' (stride 'stride' per index), NumPy's layout. */
static void fmt_dim(sbuf *b, const ltf_tensor *t, int d, int64_t off, int64_t summarize) {
    if (d == t->rank) {
        fmt_elem(b, t, off);
        return;
    }
    int64_t n = t->dims[d], stride = 1;
    for (int k = d + 1; k < t->rank; k++) stride *= t->dims[k];
    sb_add(b, "[", 1);
    int elide = summarize >= 0 && summarize < n && n - summarize > summarize;   /* n > 2 * summarize */
    for (int64_t i = 0; i < n; i++) {
        if (elide && i == summarize) {
            i = n - summarize;
            if (summarize > 0) {
                for (int k = 0; k < t->rank - 1 - d; k++) sb_add(b, "\n", 1);
                if (d == t->rank - 1) sb_add(b, " ", 1);
                else for (int k = 0; k <= d; k++) sb_add(b, " ", 1);
            }
            sb_add(b, "...", 3);
            if (summarize == 0) break;
        }
        if (i > 0) {
            for (int k = 0; k < t->rank - 1 - d; k++) sb_add(b, "\n", 1);
            if (d == t->rank - 1) sb_add(b, " ", 1);
            else for (int k = 0; k <= d; k++) sb_add(b, " ", 1);
        }
        fmt_dim(b, t, d + 1, off + i * stride, summarize);
    }
    sb_add(b, "]", 1);
}

ltf_status ltf_cpu_strings_format(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                  const ltf_attrs *a, ltf_tensor **out, int nout) {
    size_t tn;
    const char *tb = bytes_of(str_at(in[0], 0), &tn);
    const char *ph = a->s[0] ? a->s : "{}";
    size_t pl = strlen(ph);
    int count = 0;
    for (size_t i = 0; i + pl <= tn;) {
        if (memcmp(tb + i, ph, pl) == 0) {
            count++;
            i += pl;
        } else {
            i++;
        }
    }
    if (count != nin - 1)
        return ltf_fail(ctx, LTF_ERR_VALUE, "%s: the template has %d placeholders ('%s') but %d inputs were given",
                        def->name, count, ph, nin - 1);
    sbuf b = { NULL, 0, 0, 0 };
    int k = 1;
    for (size_t i = 0; i < tn;) {
        if (i + pl <= tn && memcmp(tb + i, ph, pl) == 0) {
            fmt_dim(&b, in[k++], 0, 0, a->i[0]);
            i += pl;
        } else {
            sb_add(&b, tb + i, 1);
            i++;
        }
    }
    ltf_status st = b.oom ? ltf_fail_oom(ctx, "string_format", b.n) : put_str(ctx, out[0], 0, b.p, b.n);
    free(b.p);
    return st;
}
/* }==== */

/* {==== string_split */
static int is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* Parts of b[0..n): counts them, and when 'pp' is given stores their
** starts and lengths. 'sep' empty: runs of whitespace, empty parts dropped. */
static int64_t split_one(const char *b, size_t n, const char *sep, size_t sl, int64_t maxsplit, const char **pp,
                         size_t *pl) {
    int64_t c = 0;
    if (sl == 0) {
        size_t i = 0;
        while (1) {
            while (i < n && is_space(b[i])) i++;
            if (i >= n) break;
            size_t s = i;
            if (maxsplit >= 0 && c == maxsplit) {   /* the rest, trailing spaces dropped */
                size_t e = n;
                while (e > s && is_space(b[e - 1])) e--;
                if (pp) { pp[c] = b + s; pl[c] = e - s; }
                c++;
                break;
            }
            while (i < n && !is_space(b[i])) i++;
            if (pp) { pp[c] = b + s; pl[c] = i - s; }
            c++;
        }
        return c;
    }
    size_t s = 0;
    for (size_t i = 0; i + sl <= n && (maxsplit < 0 || c < maxsplit);) {
        if (memcmp(b + i, sep, sl) == 0) {
            if (pp) { pp[c] = b + s; pl[c] = i - s; }
            c++;
            i += sl;
            s = i;
        } else {
            i++;
        }
    }
    if (pp) { pp[c] = b + s; pl[c] = n - s; }
    return c + 1;
}

ltf_status ltf_cpu_strings_split(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_tensor *x = in[0];
    size_t sl = strlen(a->s);
    int64_t n = x->numel, width = 0;
    for (int64_t i = 0; i < n; i++) {
        size_t len;
        const char *b = bytes_of(str_at(x, i), &len);
        int64_t c = split_one(b, len, a->s, sl, a->i[0], NULL, NULL);
        if (c > width) width = c;
    }
    int64_t dims[2];
    int r = 0;
    if (x->rank == 1) dims[r++] = n;
    dims[r++] = width;
    ltf_status st = ltf_shape_check(ctx, def->name, LTF_DTYPE_STRING, r, dims);
    if (st != LTF_OK) return st;
    ltf_tensor *parts = ltf_tensor_empty(ctx, LTF_DTYPE_STRING, r, dims);
    ltf_tensor *counts = parts ? ltf_tensor_empty(ctx, LTF_DTYPE_INT32, x->rank, x->dims) : NULL;
    const char **pp = malloc(sizeof(char *) * (size_t)(width + 1));
    size_t *pl = malloc(sizeof(size_t) * (size_t)(width + 1));
    if (!parts || !counts || !pp || !pl) {
        st = parts && counts ? ltf_fail_oom(ctx, "string_split", (size_t)width * 16) : ctx->last_status;
        goto done;
    }
    ltf_string **P = LTF_DATA(parts);
    ltf_string *pad = ((ltf_string **)LTF_DATA(in[1]))[0];
    int32_t *C = LTF_DATA(counts);
    for (int64_t i = 0; i < n && st == LTF_OK; i++) {
        size_t len;
        const char *b = bytes_of(str_at(x, i), &len);
        int64_t c = split_one(b, len, a->s, sl, a->i[0], pp, pl);
        C[i] = (int32_t)c;
        for (int64_t q = 0; q < width && st == LTF_OK; q++) {
            if (q < c) {
                st = put_str(ctx, parts, i * width + q, pp[q], pl[q]);
            } else if (pad) {
                pad->refs++;
                P[i * width + q] = pad;
            }
        }
    }
done:
    free(pp);
    free(pl);
    if (st != LTF_OK) {
        ltf_tensor_release(parts);
        ltf_tensor_release(counts);
        return st;
    }
    out[0] = parts;
    out[1] = counts;
    return LTF_OK;
}
/* }==== */

/* {==== string_case, string_strip */
/* Simple one-to-one case mapping of the letters of Latin-1, Latin
** Extended-A, Greek and Cyrillic (what text pipelines meet most); other
** code points are left as they are. */
static uint32_t case_map(uint32_t c, int upper) {
    if (c < 0x80) {
        if (upper) return c >= 'a' && c <= 'z' ? c - 32 : c;
        return c >= 'A' && c <= 'Z' ? c + 32 : c;
    }
    if (c >= 0xc0 && c <= 0xfe && c != 0xd7 && c != 0xf7 && c != 0xdf) {
        if (upper) return c >= 0xe0 ? c - 32 : c;
        return c < 0xe0 ? c + 32 : c;
    }
    if (upper && c == 0xff) return 0x178;
    if (!upper && c == 0x178) return 0xff;
    if (c >= 0x100 && c <= 0x17f && c != 0x130 && c != 0x131 && c != 0x138 && c != 0x149 && c != 0x17f) {
        /* pairs (upper, lower): even/odd, except 0x139..0x148 and 0x179..0x17e: odd/even */
        int odd_upper = (c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17e);
        int is_upper = odd_upper ? (c & 1) : !(c & 1);
        if (upper && !is_upper) return c - 1;
        if (!upper && is_upper) return c + 1;
        return c;
    }
    if (c >= 0x391 && c <= 0x3a9 && c != 0x3a2) return upper ? c : c + 32;
    if (c >= 0x3b1 && c <= 0x3c9) return upper ? (c == 0x3c2 ? 0x3a3 : c - 32) : c;
    if (c >= 0x410 && c <= 0x42f) return upper ? c : c + 32;
    if (c >= 0x430 && c <= 0x44f) return upper ? c - 32 : c;
    if (c >= 0x400 && c <= 0x40f) return upper ? c : c + 80;
    if (c >= 0x450 && c <= 0x45f) return upper ? c - 80 : c;
    return c;
}

/* Decode one UTF-8 character at b[0..n): its length (>= 1) in *len and the
** code point, or -1 for an ill-formed sequence (*len: its maximal subpart,
** Unicode's "maximal subpart" practice: one replacement per bad sequence). */
static int32_t utf8_decode(const unsigned char *b, size_t n, size_t *len) {
    unsigned c = b[0];
    *len = 1;
    if (c < 0x80) return (int32_t)c;
    int need;
    uint32_t cp, lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) { need = 1; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) {
        need = 2; cp = c & 0x0f;
        if (c == 0xe0) lo = 0xa0;
        if (c == 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 3; cp = c & 0x07;
        if (c == 0xf0) lo = 0x90;
        if (c == 0xf4) hi = 0x8f;
    } else {
        return -1;
    }
    for (int k = 1; k <= need; k++) {
        if ((size_t)k >= n) return -1;
        unsigned d = b[k];
        if (d < lo || d > hi) return -1;
        lo = 0x80; hi = 0xbf;
        cp = (cp << 6) | (d & 0x3f);
        *len = (size_t)k + 1;
    }
    return (int32_t)cp;
}

static size_t utf8_encode(uint32_t c, char *o) {
    if (c < 0x80) { o[0] = (char)c; return 1; }
    if (c < 0x800) { o[0] = (char)(0xc0 | (c >> 6)); o[1] = (char)(0x80 | (c & 0x3f)); return 2; }
    if (c < 0x10000) {
        o[0] = (char)(0xe0 | (c >> 12)); o[1] = (char)(0x80 | ((c >> 6) & 0x3f)); o[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (c >> 18)); o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3f)); o[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

static int valid_scalar(int64_t c) { return c >= 0 && c <= 0x10ffff && !(c >= 0xd800 && c <= 0xdfff); }

ltf_status ltf_cpu_strings_case(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                const ltf_attrs *a, ltf_tensor **out, int nout) {
    int upper = a->i[0] == 1, utf8 = a->i[1] == 1;
    char *buf = NULL;
    size_t cap = 0;
    ltf_status st = LTF_OK;
    for (int64_t i = 0; i < in[0]->numel && st == LTF_OK; i++) {
        size_t n;
        const char *b = bytes_of(str_at(in[0], i), &n);
        if (n + 1 > cap) {   /* the mapped letters keep their UTF-8 length */
            char *q = realloc(buf, n + 1);
            if (!q) {
                st = ltf_fail_oom(ctx, def->name, n + 1);
                break;
            }
            buf = q;
            cap = n + 1;
        }
        size_t k = 0;
        for (size_t p = 0; p < n;) {
            size_t len = 1;
            int32_t c = utf8 ? utf8_decode((const unsigned char *)b + p, n - p, &len) : (unsigned char)b[p];
            if (c < 0 || (!utf8 && c >= 0x80)) {   /* kept as it is */
                memcpy(buf + k, b + p, len);
                k += len;
            } else {
                uint32_t m = case_map((uint32_t)c, upper);
                char tmp[4];
                size_t ml = utf8_encode(m, tmp);
                if (ml != len) { m = (uint32_t)c; ml = utf8_encode(m, tmp); }
                memcpy(buf + k, tmp, ml);
                k += ml;
            }
            p += len;
        }
        st = put_str(ctx, out[0], i, buf, k);
    }
    free(buf);
    return st;
}

ltf_status ltf_cpu_strings_strip(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                 const ltf_attrs *a, ltf_tensor **out, int nout) {
    for (int64_t i = 0; i < in[0]->numel; i++) {
        size_t n, s = 0;
        const char *b = bytes_of(str_at(in[0], i), &n);
        while (s < n && (b[s] == ' ' || (b[s] >= '\t' && b[s] <= '\r'))) s++;
        while (n > s && (b[n - 1] == ' ' || (b[n - 1] >= '\t' && b[n - 1] <= '\r'))) n--;
        ltf_status st = put_str(ctx, out[0], i, b + s, n - s);
        if (st != LTF_OK) return st;
    }
    return LTF_OK;
}
/* }==== */

/* {==== reduce_join */
ltf_status ltf_cpu_strings_reduce_join(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                       const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_tensor *x = in[0];
    size_t sepn;
    const char *sep = bytes_of(str_at(in[1], 0), &sepn);
    int64_t outer = 1, n = 1, inner = 1;
    if (a->i[0] < 0) {
        n = x->numel;
    } else {
        for (int d = 0; d < x->rank; d++) {
            if (d < a->i[0]) outer *= x->dims[d];
            else if (d == a->i[0]) n = x->dims[d];
            else inner *= x->dims[d];
        }
        if (x->rank == 0) n = 1;
    }
    sbuf b = { NULL, 0, 0, 0 };
    ltf_status st = LTF_OK;
    for (int64_t o = 0; o < outer && st == LTF_OK; o++) {
        for (int64_t q = 0; q < inner && st == LTF_OK; q++) {
            b.n = 0;
            for (int64_t k = 0; k < n; k++) {
                size_t len;
                const char *s = bytes_of(str_at(x, (o * n + k) * inner + q), &len);
                if (k > 0) sb_add(&b, sep, sepn);
                sb_add(&b, s, len);
            }
            st = b.oom ? ltf_fail_oom(ctx, def->name, b.n) : put_str(ctx, out[0], o * inner + q, b.p, b.n);
        }
    }
    free(b.p);
    return st;
}
/* }==== */

/* {==== string_ngrams */
static int64_t row_len(const ltf_tensor *lengths, int64_t r, int64_t width) {
    if (lengths->rank == 0) return width;
    int64_t l = ((const int32_t *)LTF_DATA(lengths))[r];
    return l;
}

ltf_status ltf_cpu_strings_ngrams(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                  const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_tensor *x = in[0], *L = in[1], *W = in[2];
    int64_t width = x->dims[x->rank - 1], rows = 1;
    for (int d = 0; d < x->rank - 1; d++) rows *= x->dims[d];
    const int32_t *widths = LTF_DATA(W);
    int64_t nw = W->numel;
    if (nw < 1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'ngram_width' must name at least one width", def->name);
    for (int64_t w = 0; w < nw; w++)
        if (widths[w] < 1)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'ngram_width' %d must be >= 1", def->name, widths[w]);
    if (L->rank == 0 && ((const int32_t *)LTF_DATA(L))[0] != -1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: a scalar 'lengths' must be -1", def->name);
    for (int64_t r = 0; r < rows && L->rank > 0; r++) {
        int64_t l = row_len(L, r, width);
        if (l < 0 || l > width)
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: length %lld of row %lld is outside 0..%lld", def->name,
                            (long long)l, (long long)r + 1, (long long)width);
    }
    int64_t pw_attr = a->i[0];
    int preserve = a->i[1] != 0;
    /* the number of n-grams of a row of 'l' tokens, and the pad width of width 'w' */
#define PADW(w) ((pw_attr < 0 || pw_attr > (w) - 1) ? (w) - 1 : pw_attr)
    int64_t most = 0;
    for (int64_t r = 0; r < rows; r++) {
        int64_t l = row_len(L, r, width), c = 0;
        for (int64_t w = 0; w < nw; w++) {
            int64_t k = l + 2 * PADW(widths[w]) - widths[w] + 1;
            c += k > 0 ? k : 0;
        }
        if (preserve && l > 0 && c == 0) c = 1;
        if (c > most) most = c;
    }
    int64_t dims[LTF_MAX_RANK];
    for (int d = 0; d < x->rank; d++) dims[d] = x->dims[d];
    dims[x->rank - 1] = most;
    ltf_status st = ltf_shape_check(ctx, def->name, LTF_DTYPE_STRING, x->rank, dims);
    if (st != LTF_OK) return st;
    ltf_tensor *grams = ltf_tensor_empty(ctx, LTF_DTYPE_STRING, x->rank, dims);
    ltf_tensor *counts = grams ? ltf_tensor_empty(ctx, LTF_DTYPE_INT32, x->rank - 1, x->dims) : NULL;
    if (!grams || !counts) {
        ltf_tensor_release(grams);
        return ctx->last_status;
    }
    size_t sepn, lpn, rpn;
    const char *sep = bytes_of(str_at(in[3], 0), &sepn);
    const char *lp = bytes_of(str_at(in[4], 0), &lpn);
    const char *rp = bytes_of(str_at(in[5], 0), &rpn);
    int32_t *C = LTF_DATA(counts);
    sbuf b = { NULL, 0, 0, 0 };
    for (int64_t r = 0; r < rows && st == LTF_OK; r++) {
        int64_t l = row_len(L, r, width), c = 0;
        int64_t base = r * width;
        for (int64_t w = 0; w <= nw && st == LTF_OK; w++) {
            int64_t gw, pw, k;
            if (w == nw) {   /* preserve_short_sequences: one n-gram of the whole padded row */
                if (!(preserve && l > 0 && c == 0)) break;
                pw = PADW(widths[0]);
                gw = l + 2 * pw;
                k = 1;
            } else {
                gw = widths[w];
                pw = PADW(gw);
                k = l + 2 * pw - gw + 1;
            }
            for (int64_t g = 0; g < k && st == LTF_OK; g++) {   /* tokens g-pw .. g-pw+gw-1 of the row */
                b.n = 0;
                for (int64_t t = g - pw; t < g - pw + gw; t++) {
                    if (t > g - pw) sb_add(&b, sep, sepn);
                    if (t < 0) sb_add(&b, lp, lpn);
                    else if (t >= l) sb_add(&b, rp, rpn);
                    else {
                        size_t n;
                        const char *s = bytes_of(str_at(x, base + t), &n);
                        sb_add(&b, s, n);
                    }
                }
                st = b.oom ? ltf_fail_oom(ctx, def->name, b.n) : put_str(ctx, grams, r * most + c, b.p, b.n);
                c++;
            }
        }
        C[r] = (int32_t)c;
    }
#undef PADW
    free(b.p);
    if (st != LTF_OK) {
        ltf_tensor_release(grams);
        ltf_tensor_release(counts);
        return st;
    }
    out[0] = grams;
    out[1] = counts;
    return LTF_OK;
}
/* }==== */

/* {==== unicode_decode, unicode_encode */
/* Characters of b[0..n): calls 'emit' per character (its code point, or the
** replacement, and its bytes); -1 on an ill-formed sequence under "strict". */
typedef struct decoded {
    int32_t cp;
    size_t off, len;
} decoded;

static int64_t decode_all(const char *b, size_t n, int errors, int32_t repl, decoded *o, size_t *bad_at) {
    int64_t c = 0;
    for (size_t p = 0; p < n;) {
        size_t len;
        int32_t cp = utf8_decode((const unsigned char *)b + p, n - p, &len);
        if (cp < 0) {
            if (errors == 0) {
                *bad_at = p;
                return -1;
            }
            if (errors == 2) {
                p += len;
                continue;
            }
            cp = repl;
        }
        if (o) { o[c].cp = cp; o[c].off = p; o[c].len = len; }
        c++;
        p += len;
    }
    return c;
}

ltf_status ltf_cpu_strings_unicode_decode(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                          const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_tensor *x = in[0];
    int errors = (int)a->i[0], split = a->i[2] != 0;
    int32_t repl = (int32_t)a->i[1];
    const char *name = split ? "unicode_split" : "unicode_decode";
    if (errors < 0 || errors > 2)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'errors' must be 'strict', 'replace' or 'ignore'", name);
    if (errors == 1 && !valid_scalar(repl))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'replacement_char' %d is not a Unicode scalar value", name,
                        repl);
    int64_t most = 0;
    for (int64_t i = 0; i < x->numel; i++) {
        size_t n, bad = 0;
        const char *b = bytes_of(str_at(x, i), &n);
        int64_t c = decode_all(b, n, errors, repl, NULL, &bad);
        if (c < 0) {
            char buf[64];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                            "%s: invalid UTF-8 at byte %zu of element %lld ('%s'); use errors='replace' or 'ignore'",
                            name, bad + 1, (long long)i + 1, shown(str_at(x, i), buf, sizeof buf));
        }
        if (c > most) most = c;
    }
    if (x->rank >= LTF_MAX_RANK)   /* a rank unknown when traced (inference checks known ones) */
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'input' has rank %d; the result's rank would exceed %d",
                        name, x->rank, LTF_MAX_RANK);
    int64_t dims[LTF_MAX_RANK];
    for (int d = 0; d < x->rank; d++) dims[d] = x->dims[d];
    dims[x->rank] = most;
    ltf_dtype dt = split ? LTF_DTYPE_STRING : LTF_DTYPE_INT32;
    ltf_status st = ltf_shape_check(ctx, def->name, dt, x->rank + 1, dims);
    if (st != LTF_OK) return st;
    ltf_tensor *chars = ltf_tensor_empty(ctx, dt, x->rank + 1, dims);
    ltf_tensor *counts = chars ? ltf_tensor_empty(ctx, LTF_DTYPE_INT32, x->rank, x->dims) : NULL;
    decoded *d = malloc(sizeof(decoded) * (size_t)(most + 1));
    if (!chars || !counts || !d) {
        st = chars && counts ? ltf_fail_oom(ctx, name, sizeof(decoded) * (size_t)(most + 1)) : ctx->last_status;
        goto done;
    }
    int32_t *C = LTF_DATA(counts);
    for (int64_t i = 0; i < x->numel && st == LTF_OK; i++) {
        size_t n, bad;
        const char *b = bytes_of(str_at(x, i), &n);
        int64_t c = decode_all(b, n, errors, repl, d, &bad);
        C[i] = (int32_t)c;
        for (int64_t k = 0; k < most && st == LTF_OK; k++) {
            if (split) {
                if (k < c) st = put_str(ctx, chars, i * most + k, b + d[k].off, d[k].len);
                else st = put_str(ctx, chars, i * most + k, a->s, strlen(a->s));
            } else {
                ((int32_t *)LTF_DATA(chars))[i * most + k] = k < c ? d[k].cp : (int32_t)a->i[3];
            }
        }
    }
done:
    free(d);
    if (st != LTF_OK) {
        ltf_tensor_release(chars);
        ltf_tensor_release(counts);
        return st;
    }
    out[0] = chars;
    out[1] = counts;
    return LTF_OK;
}

ltf_status ltf_cpu_strings_unicode_encode(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                          const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_tensor *x = in[0], *L = in[1];
    int errors = (int)a->i[0];
    int32_t repl = (int32_t)a->i[1];
    if (errors < 0 || errors > 2)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'errors' must be 'strict', 'replace' or 'ignore'",
                        def->name);
    if (errors == 1 && !valid_scalar(repl))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: 'replacement_char' %d is not a Unicode scalar value",
                        def->name, repl);
    int64_t width = x->dims[x->rank - 1], rows = 1;
    for (int d = 0; d < x->rank - 1; d++) rows *= x->dims[d];
    if (L->rank == 0 && ((const int32_t *)LTF_DATA(L))[0] != -1)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: a scalar 'lengths' must be -1", def->name);
    const int32_t *X = LTF_DATA(x);
    sbuf b = { NULL, 0, 0, 0 };
    ltf_status st = LTF_OK;
    for (int64_t r = 0; r < rows && st == LTF_OK; r++) {
        int64_t l = row_len(L, r, width);
        if (l < 0 || l > width) {
            st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: length %lld of row %lld is outside 0..%lld", def->name,
                          (long long)l, (long long)r + 1, (long long)width);
            break;
        }
        b.n = 0;
        for (int64_t k = 0; k < l; k++) {
            int32_t c = X[r * width + k];
            if (!valid_scalar(c)) {
                if (errors == 0) {
                    st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: code point %d (row %lld, position %lld) is not "
                                  "a Unicode scalar value; use errors='replace' or 'ignore'", def->name, c,
                                  (long long)r + 1, (long long)k + 1);
                    break;
                }
                if (errors == 2) continue;
                c = repl;
            }
            char tmp[4];
            sb_add(&b, tmp, utf8_encode((uint32_t)c, tmp));
        }
        if (st == LTF_OK) st = b.oom ? ltf_fail_oom(ctx, def->name, b.n) : put_str(ctx, out[0], r, b.p, b.n);
    }
    free(b.p);
    return st;
}
/* }==== */

/* {==== string_hash_bucket, hash_table_find
** Fingerprint64 is FarmHash's farmhashna::Hash64 (what TensorFlow's
** tensorflow::Fingerprint64 and to_hash_bucket_fast use), written here from
** the published algorithm; little-endian loads. The strong hash is
** SipHash-2-4 keyed by two 64-bit words (to_hash_bucket_strong). */
static const uint64_t K0 = 0xc3a5c85c97cb3127ULL, K1 = 0xb492b66fbe98f273ULL, K2 = 0x9ae16a3b2f90404fULL;

static uint64_t fetch64(const unsigned char *p) {
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--) v = (v << 8) | p[k];
    return v;
}

static uint32_t fetch32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rot64(uint64_t v, int s) { return s == 0 ? v : (v >> s) | (v << (64 - s)); }
static uint64_t shift_mix(uint64_t v) { return v ^ (v >> 47); }

static uint64_t hash16(uint64_t u, uint64_t v, uint64_t mul) {
    uint64_t a = (u ^ v) * mul;
    a ^= a >> 47;
    uint64_t b = (v ^ a) * mul;
    b ^= b >> 47;
    return b * mul;
}

static uint64_t hash_0_16(const unsigned char *s, size_t len) {
    if (len >= 8) {
        uint64_t mul = K2 + len * 2, a = fetch64(s) + K2, b = fetch64(s + len - 8);
        uint64_t c = rot64(b, 37) * mul + a, d = (rot64(a, 25) + b) * mul;
        return hash16(c, d, mul);
    }
    if (len >= 4) {
        uint64_t mul = K2 + len * 2, a = fetch32(s);
        return hash16(len + (a << 3), fetch32(s + len - 4), mul);
    }
    if (len > 0) {
        uint32_t y = (uint32_t)s[0] + ((uint32_t)s[len >> 1] << 8), z = (uint32_t)len + ((uint32_t)s[len - 1] << 2);
        return shift_mix(y * K2 ^ z * K0) * K2;
    }
    return K2;
}

static uint64_t hash_17_32(const unsigned char *s, size_t len) {
    uint64_t mul = K2 + len * 2, a = fetch64(s) * K1, b = fetch64(s + 8);
    uint64_t c = fetch64(s + len - 8) * mul, d = fetch64(s + len - 16) * K2;
    return hash16(rot64(a + b, 43) + rot64(c, 30) + d, a + rot64(b + K2, 18) + c, mul);
}

static uint64_t hash_33_64(const unsigned char *s, size_t len) {
    uint64_t mul = K2 + len * 2, a = fetch64(s) * K2, b = fetch64(s + 8);
    uint64_t c = fetch64(s + len - 8) * mul, d = fetch64(s + len - 16) * K2;
    uint64_t y = rot64(a + b, 43) + rot64(c, 30) + d, z = hash16(y, a + rot64(b + K2, 18) + c, mul);
    uint64_t e = fetch64(s + 16) * mul, f = fetch64(s + 24);
    uint64_t g = (y + fetch64(s + len - 32)) * mul, h = (z + fetch64(s + len - 24)) * mul;
    return hash16(rot64(e + f, 43) + rot64(g, 30) + h, e + rot64(f + a, 18) + g, mul);
}

static void weak32(const unsigned char *s, uint64_t a, uint64_t b, uint64_t *r0, uint64_t *r1) {
    uint64_t w = fetch64(s), x = fetch64(s + 8), y = fetch64(s + 16), z = fetch64(s + 24);
    a += w;
    b = rot64(b + a + z, 21);
    uint64_t c = a;
    a += x;
    a += y;
    b += rot64(a, 44);
    *r0 = a + z;
    *r1 = b + c;
}

LTF_INTERNAL uint64_t ltf_fingerprint64(const char *bytes, size_t len);
uint64_t ltf_fingerprint64(const char *bytes, size_t len) {
    const unsigned char *s = (const unsigned char *)bytes;
    if (len <= 16) return hash_0_16(s, len);
    if (len <= 32) return hash_17_32(s, len);
    if (len <= 64) return hash_33_64(s, len);
    const uint64_t seed = 81;
    uint64_t x = seed, y = seed * K1 + 113, z = shift_mix(y * K2 + 113) * K2;
    uint64_t v0 = 0, v1 = 0, w0 = 0, w1 = 0, t;
    x = x * K2 + fetch64(s);
    const unsigned char *end = s + ((len - 1) / 64) * 64, *last64 = end + ((len - 1) & 63) - 63;
    do {
        x = rot64(x + y + v0 + fetch64(s + 8), 37) * K1;
        y = rot64(y + v1 + fetch64(s + 48), 42) * K1;
        x ^= w1;
        y += v0 + fetch64(s + 40);
        z = rot64(z + w0, 33) * K1;
        weak32(s, v1 * K1, x + w0, &v0, &v1);
        weak32(s + 32, z + w1, y + fetch64(s + 16), &w0, &w1);
        t = z; z = x; x = t;
        s += 64;
    } while (s != end);
    uint64_t mul = K1 + ((z & 0xff) << 1);
    s = last64;
    w0 += ((len - 1) & 63);
    v0 += w0;
    w0 += v0;
    x = rot64(x + y + v0 + fetch64(s + 8), 37) * mul;
    y = rot64(y + v1 + fetch64(s + 48), 42) * mul;
    x ^= w1 * 9;
    y += v0 * 9 + fetch64(s + 40);
    z = rot64(z + w0, 33) * mul;
    weak32(s, v1 * mul, x + w0, &v0, &v1);
    weak32(s + 32, z + w1, y + fetch64(s + 16), &w0, &w1);
    t = z; z = x; x = t;
    return hash16(hash16(v0, w0, mul) + shift_mix(y) * K0 + z, hash16(v1, w1, mul) + x, mul);
}

#define SIPROUND                                                              \
    do {                                                                      \
        v0 += v1; v1 = rot64(v1, 51); v1 ^= v0; v0 = rot64(v0, 32);           \
        v2 += v3; v3 = rot64(v3, 48); v3 ^= v2;                               \
        v0 += v3; v3 = rot64(v3, 43); v3 ^= v0;                               \
        v2 += v1; v1 = rot64(v1, 47); v1 ^= v2; v2 = rot64(v2, 32);           \
    } while (0)

/* SipHash-2-4 (rot64 rotates right: a left rotation by r is rot64(v, 64 - r)). */
static uint64_t siphash24(uint64_t k0, uint64_t k1, const unsigned char *s, size_t len) {
    uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
    size_t full = len & ~(size_t)7;
    for (size_t i = 0; i < full; i += 8) {
        uint64_t m = fetch64(s + i);
        v3 ^= m;
        SIPROUND; SIPROUND;
        v0 ^= m;
    }
    uint64_t last = (uint64_t)(len & 0xff) << 56;
    for (size_t i = 0; i < (len & 7); i++) last |= (uint64_t)s[full + i] << (8 * i);
    v3 ^= last;
    SIPROUND; SIPROUND;
    v0 ^= last;
    v2 ^= 0xff;
    SIPROUND; SIPROUND; SIPROUND; SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}
#undef SIPROUND

/* The key at 'i' as bytes (integers: decimal text, into 'buf'). */
static const char *key_bytes(const ltf_tensor *t, int64_t i, char *buf, size_t *n) {
    if (t->dtype == LTF_DTYPE_STRING) return bytes_of(str_at(t, i), n);
    long long v = t->dtype == LTF_DTYPE_INT32 ? ((const int32_t *)LTF_DATA(t))[i] : ((const int64_t *)LTF_DATA(t))[i];
    *n = (size_t)snprintf(buf, 32, "%lld", v);
    return buf;
}

ltf_status ltf_cpu_strings_hash_bucket(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                       const ltf_attrs *a, ltf_tensor **out, int nout) {
    int64_t *o = LTF_DATA(out[0]);
    uint64_t nb = (uint64_t)a->i[0];
    for (int64_t i = 0; i < in[0]->numel; i++) {
        size_t n;
        char buf[32];
        const char *b = key_bytes(in[0], i, buf, &n);
        uint64_t h = a->i[1] ? siphash24((uint64_t)a->i[2], (uint64_t)a->i[3], (const unsigned char *)b, n)
                             : ltf_fingerprint64(b, n);
        o[i] = (int64_t)(h % nb);
    }
    return LTF_OK;
}

static int keys_equal(const ltf_tensor *t, int64_t i, const ltf_tensor *u, int64_t j) {
    if (t->dtype == LTF_DTYPE_STRING) {
        size_t n, m;
        const char *a = bytes_of(str_at(t, i), &n), *b = bytes_of(str_at(u, j), &m);
        return n == m && memcmp(a, b, n) == 0;
    }
    if (t->dtype == LTF_DTYPE_INT32) return ((const int32_t *)LTF_DATA(t))[i] == ((const int32_t *)LTF_DATA(u))[j];
    return ((const int64_t *)LTF_DATA(t))[i] == ((const int64_t *)LTF_DATA(u))[j];
}

static uint64_t key_hash(const ltf_tensor *t, int64_t i) {
    char buf[32];
    size_t n;
    if (t->dtype != LTF_DTYPE_STRING) {
        uint64_t v = t->dtype == LTF_DTYPE_INT32 ? (uint64_t)(int64_t)((const int32_t *)LTF_DATA(t))[i]
                                                  : (uint64_t)((const int64_t *)LTF_DATA(t))[i];
        return shift_mix(v * K1) * K2;
    }
    const char *b = key_bytes(t, i, buf, &n);
    return ltf_fingerprint64(b, n);
}

ltf_status ltf_cpu_strings_hash_table_find(ltf_ctx *ctx, const ltf_op_def *def, ltf_tensor *const *in, int nin,
                                           const ltf_attrs *a, ltf_tensor **out, int nout) {
    const ltf_tensor *K = in[0], *V = in[1], *X = in[2], *D = in[3];
    int64_t nk = K->numel;
    size_t cap = 16;
    while (cap < (size_t)nk * 2) cap *= 2;
    int64_t *slot = malloc(sizeof(int64_t) * cap);
    if (!slot) return ltf_fail_oom(ctx, def->name, sizeof(int64_t) * cap);
    for (size_t s = 0; s < cap; s++) slot[s] = -1;
    size_t es = ltf_dtype_size(V->dtype);
    int str = V->dtype == LTF_DTYPE_STRING;
    ltf_status st = LTF_OK;
    for (int64_t k = 0; k < nk && st == LTF_OK; k++) {
        size_t s = (size_t)key_hash(K, k) & (cap - 1);
        while (slot[s] >= 0 && !keys_equal(K, slot[s], K, k)) s = (s + 1) & (cap - 1);
        if (slot[s] < 0) {
            slot[s] = k;
            continue;
        }
        int same = str ? keys_equal(V, slot[s], V, k)
                       : memcmp((const char *)LTF_DATA(V) + es * (size_t)slot[s], (const char *)LTF_DATA(V) + es * (size_t)k,
                                es) == 0;
        if (!same) {
            char buf[32], sb[64];
            size_t n;
            const char *b = key_bytes(K, k, buf, &n);
            snprintf(sb, sizeof sb, "%.*s%s", (int)(n > 40 ? 40 : n), b, n > 40 ? "..." : "");
            st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "%s: key '%s' appears twice with different values (keys %lld "
                          "and %lld)", def->name, sb, (long long)slot[s] + 1, (long long)k + 1);
        }
    }
    uint64_t oov = (uint64_t)a->i[0];
    for (int64_t i = 0; i < X->numel && st == LTF_OK; i++) {
        size_t s = (size_t)key_hash(X, i) & (cap - 1);
        while (slot[s] >= 0 && !keys_equal(K, slot[s], X, i)) s = (s + 1) & (cap - 1);
        int64_t k = slot[s];
        if (k < 0 && oov > 0) {
            char buf[32];
            size_t n;
            const char *b = key_bytes(X, i, buf, &n);
            ((int64_t *)LTF_DATA(out[0]))[i] = nk + (int64_t)(ltf_fingerprint64(b, n) % oov);
        } else if (str) {
            ltf_string *v = k >= 0 ? ((ltf_string **)LTF_DATA(V))[k] : ((ltf_string **)LTF_DATA(D))[0];
            if (v) v->refs++;
            ((ltf_string **)LTF_DATA(out[0]))[i] = v;
        } else {
            memcpy((char *)LTF_DATA(out[0]) + es * (size_t)i,
                   k >= 0 ? (const char *)LTF_DATA(V) + es * (size_t)k : (const char *)LTF_DATA(D), es);
        }
    }
    free(slot);
    return st;
}
/* }==== */
