/*
** fuzz_ops.c: libFuzzer target over the op entry point (ltf_op_run) and
** what feeds it: tensors of every dtype made from the input bytes, variable
** handles, attributes drawn from a table of boundary values, traced graphs
** (placeholders with partial and huge dims, ltf_graph_end, ltf_graph_run on
** concrete inputs of any shape) and gradient tapes. The input is a small
** program: each command byte picks an action, the bytes after it its
** arguments; op results go into a pool that later commands take inputs
** from. One context per input, released at the end, so leaks show up under
** LeakSanitizer. Every failure must be a clean status with a message; the
** harness aborts only when the engine breaks its own contract (a status
** without a message, more outputs than room, a malformed result), the
** sanitizers do the rest.
**
** Run through scripts/fuzz-c.sh (build: -DLTF_FUZZ=ON with clang).
*/
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include "ltf.h"
#include "ltf_ops.h"
/* harness only: a CPU backend with an allocation budget (see 'budget_alloc'),
** and the context's block caches turned off (see 'no_caches') */
#include "ctx.h"
#include "storage.h"

/* {==== Input reader: past the end every read gives zero bytes */
typedef struct reader {
    const uint8_t *p;
    size_t n, i;
} reader;

static int more(const reader *r) { return r->i < r->n; }

static uint8_t u8(reader *r) { return r->i < r->n ? r->p[r->i++] : 0; }

static uint64_t u64(reader *r) {
    uint64_t v = 0;
    for (int k = 0; k < 8; k++) v |= (uint64_t)u8(r) << (8 * k);
    return v;
}

/* Boundary values for integer attributes and dims. */
static const int64_t interesting_ints[] = {
    0, 1, -1, 2, -2, 3, -3, 7, -7, 8, 9, 16, 31, 32, 33, 63, 64, 255, 256, 4096, 65536,
    INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, INT32_MAX, INT32_MIN,
    (int64_t)INT32_MAX + 1, (int64_t)INT32_MIN - 1, (int64_t)1 << 32, -((int64_t)1 << 32),
    (int64_t)1 << 31, (int64_t)1 << 40, (int64_t)1 << 62, -((int64_t)1 << 62), (int64_t)1 << 63 >> 1,
    -1000000007, 1000000007, INT64_MAX / 2, INT64_MAX / 3, 3037000500 /* sqrt(2^63) */,
};
#define NINTS ((int)(sizeof interesting_ints / sizeof interesting_ints[0]))

static int64_t fuzz_int(reader *r) {
    uint8_t m = u8(r);
    switch (m % 8) {
    case 0: case 1: case 2:
        return (int64_t)(m >> 3) - 4;                 /* -4..27: axes, counts, dtypes */
    case 3: case 4:
        return interesting_ints[u8(r) % NINTS];
    case 5:
        return (int8_t)u8(r);
    case 6:
        return (int64_t)u64(r);
    default:
        return (int64_t)(m >> 3) % 9;                 /* 0..8 */
    }
}

static double fuzz_double(reader *r) {
    static const double table[] = {
        0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -2.0, 3.5, 1e-300, 1e300, -1e300, 5e-324, 1e10, -1e10,
        9.2233720368547758e18, -9.2233720368547758e18, 4294967296.0, 2147483648.0, 1e-8,
        NAN, INFINITY, -INFINITY,
    };
    uint8_t m = u8(r);
    if (m < 200) return table[m % (sizeof table / sizeof table[0])];
    if (m < 230) return (double)(int8_t)u8(r) / 4.0;
    uint64_t bits = u64(r);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}
/* }==== */

/* {==== An allocation budget: the CPU backend of each context is replaced
** by one that refuses blocks past a per-allocation and a total limit, so
** shapes that are valid but huge (fill of (2^20, 2^20)) end as clean
** RESOURCE_EXHAUSTED errors instead of tripping libFuzzer's malloc limit.
** It can also fail the k-th allocation, to walk the out-of-memory paths. */
#define BUDGET_ONE   ((size_t)256 << 10)  /* 64Ki float32: two of the threads' grains, still fast */
#define BUDGET_TOTAL ((size_t)16 << 20)

typedef struct budget {
    size_t live;
    int64_t count, fail_at;    /* fail allocation number 'fail_at' (0: never) */
} budget;

static void *budget_alloc(void *bctx, size_t nbytes) {
    budget *b = bctx;
    b->count++;
    if (b->fail_at && b->count == b->fail_at) return NULL;
    if (nbytes > BUDGET_ONE || b->live + nbytes > BUDGET_TOTAL) return NULL;
    void *p = NULL;
    if (posix_memalign(&p, 64, nbytes ? nbytes : 1) != 0) return NULL;
    b->live += malloc_usable_size(p);
    return p;
}

static void budget_free(void *bctx, void *p, size_t nbytes) {
    budget *b = bctx;
    (void)nbytes;
    if (p) b->live -= malloc_usable_size(p);
    free(p);
}

static int budget_copy(void *bctx, void *dst, const void *src, size_t nbytes, int to_host) {
    (void)bctx;
    (void)to_host;
    memcpy(dst, src, nbytes);
    return 0;
}
/* }==== */

/* {==== Contract checks: the engine's, not the sanitizers' */
static void fuzz_fail(const char *what, const char *detail) {
    fprintf(stderr, "fuzz_ops: contract broken: %s (%s)\n", what, detail ? detail : "");
    abort();
}

static volatile uint64_t sink;

/* Read every byte a result claims to have (and each string element). */
static void touch(const ltf_tensor *t) {
    int rank = ltf_tensor_rank(t);
    const int64_t *dims = ltf_tensor_dims(t);
    if (rank < -1 || rank > LTF_MAX_RANK) fuzz_fail("result rank out of range", NULL);
    if (ltf_tensor_is_symbolic(t)) {
        for (int i = 0; i < rank; i++)
            if (dims[i] < -1) fuzz_fail("symbolic result has a dim below -1", NULL);
        return;
    }
    if (rank < 0) fuzz_fail("concrete result of unknown rank", NULL);
    int64_t n = 1;
    int zero = 0;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0) fuzz_fail("concrete result has a negative dim", NULL);
        if (dims[i] == 0) zero = 1;
        else if (__builtin_mul_overflow(n, dims[i], &n)) n = -1;
    }
    if (zero) n = 0;
    if (n < 0) fuzz_fail("concrete result with more than INT64_MAX elements", NULL);
    if (n != ltf_tensor_num_elements(t)) fuzz_fail("num_elements differs from the dims' product", NULL);
    ltf_dtype dt = ltf_tensor_dtype(t);
    const uint8_t *d = ltf_tensor_data(t);
    if (n > 0 && !d) fuzz_fail("concrete result without data", NULL);
    uint64_t acc = 0;
    if (dt == LTF_DTYPE_STRING) {
        ltf_string *const *s = (ltf_string *const *)d;
        for (int64_t k = 0; k < n; k++)
            if (s[k]) {
                if (s[k]->refs < 1) fuzz_fail("string element with no reference", NULL);
                acc += s[k]->len + (uint8_t)s[k]->bytes[s[k]->len];
                if (s[k]->len) acc += (uint8_t)s[k]->bytes[0] + (uint8_t)s[k]->bytes[s[k]->len - 1];
            }
    } else if (dt == LTF_DTYPE_RESOURCE) {
        if (rank != 0) return;   /* handles of variables: only rank 0 */
    } else {
        size_t bytes = (size_t)n * ltf_dtype_size(dt);
        for (size_t k = 0; k < bytes; k += 61) acc += d[k];
        if (bytes) acc += d[bytes - 1];
    }
    sink += acc;
}

/* FUZZ_OPS_TRACE=1 in the environment: one line per call (reading a crash). */
static int tracing_on = -1;

/* "float32[2,3]" (with "sym " for a graph value) into 'buf', for traces. */
static const char *describe(const ltf_tensor *t, char *buf, size_t size) {
    if (!t) return "NULL";
    size_t n = (size_t)snprintf(buf, size, "%s%s[", ltf_tensor_is_symbolic(t) ? "sym " : "",
                                ltf_dtype_name(ltf_tensor_dtype(t)));
    for (int d = 0; d < ltf_tensor_rank(t) && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? "," : "", (long long)ltf_tensor_dims(t)[d]);
    if (n < size) snprintf(buf + n, size - n, "]@%p", (const void *)t);
    return buf;
}

static void check_failure(ltf_ctx *ctx, ltf_status st, const char *where) {
    if (tracing_on < 0) tracing_on = getenv("FUZZ_OPS_TRACE") != NULL;
    if (tracing_on) fprintf(stderr, "  %-24s %s\n", where, st == LTF_OK ? "ok" : ltf_ctx_error(ctx));
    if (st == LTF_OK) return;
    switch (st) {   /* ltf.h's codes (TensorFlow's numbers, then luatf's own from 100) */
    case LTF_ERR_UNKNOWN: case LTF_ERR_INVALID_ARGUMENT: case LTF_ERR_NOT_FOUND: case LTF_ERR_RESOURCE_EXHAUSTED:
    case LTF_ERR_FAILED_PRECONDITION: case LTF_ERR_OUT_OF_RANGE: case LTF_ERR_UNIMPLEMENTED: case LTF_ERR_INTERNAL:
    case LTF_ERR_DATA_LOSS: case LTF_ERR_TYPE: case LTF_ERR_VALUE: case LTF_ERR_RUNTIME: break;
    default: fuzz_fail("unknown status code", where);
    }
    const char *msg = ltf_ctx_error(ctx);
    if (!msg || !msg[0]) fuzz_fail("failure without a message", where);
}
/* }==== */

/* {==== State of one run */
#define POOL_MAX   24
#define MAX_GRAPHS 4
#define MAX_PH     6
#define MAX_TAPES  3
#define MAX_ELEMS  4096

typedef struct ph_type {
    ltf_dtype dt;
    int rank;
    int64_t dims[LTF_MAX_RANK + 8];
} ph_type;

typedef struct fgraph {
    ltf_graph *g;
    int tracing;                  /* 1 between begin and end/abort */
    int finished;                 /* ltf_graph_end succeeded: runnable */
    int nph;
    ph_type ph[MAX_PH];
} fgraph;

typedef struct state {
    ltf_ctx *ctx;
    reader *r;
    ltf_tensor *pool[POOL_MAX];
    int npool;
    fgraph graphs[MAX_GRAPHS];
    int ngraphs;
    ltf_tape *tapes[MAX_TAPES];
    int ntapes;
    ltf_tensor *watched[8];       /* retained: sources for gradients */
    int nwatched;
    ltf_tape *auto_tape;          /* records the whole program: gradient at the end */
} state;

/* Keep 't' (watched by a tape) as a source for later gradients. */
static void remember_watched(state *s, ltf_tensor *t) {
    if (s->nwatched == 8) {
        ltf_tensor_release(s->watched[0]);
        memmove(s->watched, s->watched + 1, sizeof s->watched[0] * 7);
        s->nwatched--;
    }
    s->watched[s->nwatched++] = ltf_tensor_retain(t);
}

/* Take ownership of 't' (NULL is ignored); a full pool drops an entry. */
static void pool_add(state *s, ltf_tensor *t) {
    if (!t) return;
    touch(t);
    if (s->npool == POOL_MAX) {
        int k = u8(s->r) % POOL_MAX;
        ltf_tensor_release(s->pool[k]);
        s->pool[k] = s->pool[--s->npool];
    }
    s->pool[s->npool++] = t;
}

static ltf_tensor *pool_pick(state *s) {
    return s->npool ? s->pool[u8(s->r) % s->npool] : NULL;
}

/* One of the last three results: chains of ops (and of recorded ops). */
static ltf_tensor *pool_recent(state *s) {
    if (!s->npool) return NULL;
    int k = u8(s->r) % (s->npool < 3 ? s->npool : 3);
    return s->pool[s->npool - 1 - k];
}

/* The innermost graph being traced, or NULL. */
static fgraph *tracing_graph(state *s) {
    for (int k = s->ngraphs - 1; k >= 0; k--)
        if (s->graphs[k].tracing) return &s->graphs[k];
    return NULL;
}
/* }==== */

/* {==== Tensors from the bytes */
static const ltf_dtype all_dtypes[] = {   /* every dtype a host may make from data */
    LTF_DTYPE_FLOAT32, LTF_DTYPE_FLOAT64, LTF_DTYPE_INT32, LTF_DTYPE_INT64,
    LTF_DTYPE_UINT8, LTF_DTYPE_BOOL, LTF_DTYPE_STRING,
};

static ltf_dtype fuzz_dtype(reader *r) {
    uint8_t b = u8(r);
    if (b == 255) return LTF_DTYPE_RESOURCE;   /* refused by the tensor makers: a clean error */
    return all_dtypes[b % (sizeof all_dtypes / sizeof all_dtypes[0])];
}

static const int64_t huge_dims[] = {
    (int64_t)1 << 32, (int64_t)1 << 40, (int64_t)1 << 62, INT64_MAX, INT64_MAX / 2, 3037000500, INT32_MAX,
};
#define NHUGE ((int)(sizeof huge_dims / sizeof huge_dims[0]))

/* A rank and dims: mostly 0..8 with small dims (0 included) whose product
** stays within MAX_ELEMS; sometimes rank 9+ or a negative dim (rejected). */
static int fuzz_shape(reader *r, int64_t *dims) {
    uint8_t b = u8(r);
    int rank = b % 9;
    if (b >= 250) rank = 9 + (b - 250);          /* 9..14: must be rejected */
    int64_t total = 1;
    int huge = -1;
    for (int i = 0; i < rank; i++) {
        uint8_t m = u8(r);
        int64_t d;
        if (m < 150) d = m % 4;                  /* 0..3 */
        else if (m < 220) d = 1 + m % 16;
        else if (m < 246) d = m % 67;
        else if (m < 254) d = huge_dims[u8(r) % NHUGE];   /* in an empty tensor: see below */
        else d = m == 254 ? -1 : -(int64_t)(u8(r) % 4) - 2;   /* rejected */
        if (d > MAX_ELEMS) {
            huge = i;
        } else {
            if (d > 0 && total * d > MAX_ELEMS) d = 1;
            if (d > 0) total *= d;
        }
        dims[i] = d;
    }
    if (huge >= 0) {   /* a huge dim next to a 0: valid, no elements, overflowing partial products */
        int z = 0;
        for (int i = 0; i < rank; i++)
            if (dims[i] == 0) z = 1;
        if (!z) dims[rank > 1 && huge == 0 ? 1 : 0] = 0;
    }
    return rank;
}

/* A tensor of 'dt' and the given shape filled from the bytes; NULL (with a
** clean error) when the engine refuses the shape or dtype. */
static ltf_tensor *make_tensor(state *s, ltf_dtype dt, int rank, const int64_t *dims) {
    reader *r = s->r;
    int64_t n = 1;
    int bad = rank > LTF_MAX_RANK, zero = 0;
    for (int i = 0; i < rank && !bad; i++) {
        if (dims[i] < 0) bad = 1;
        else if (dims[i] == 0) zero = 1;
        else if (__builtin_mul_overflow(n, dims[i], &n)) n = INT64_MAX;
    }
    if (zero) n = 0;
    if (!bad && n > MAX_ELEMS) return NULL;   /* valid but too big to fill (shaped like a large result) */
    if (bad || dt == LTF_DTYPE_RESOURCE) {   /* the engine must refuse it */
        ltf_tensor *t = ltf_tensor_new(s->ctx, dt, rank, dims);
        if (t) fuzz_fail("ltf_tensor_new accepted an invalid shape or dtype", ltf_dtype_name(dt));
        check_failure(s->ctx, s->ctx->last_status, "tensor_new");
        return NULL;
    }
    ltf_tensor *t = NULL;
    if (dt == LTF_DTYPE_STRING) {
        char **strs = calloc((size_t)n + 1, sizeof *strs);
        char *text = calloc((size_t)n * 17 + 1, 1);
        for (int64_t k = 0; k < n; k++) {
            char *p = text + k * 17;
            int len = u8(r) % 17;
            for (int j = 0; j < len; j++) p[j] = (char)(u8(r) | 1);   /* no NUL inside */
            p[len] = 0;
            strs[k] = p;
        }
        t = ltf_tensor_from_data(s->ctx, dt, rank, dims, strs);
        free(strs);
        free(text);
    } else {
        size_t es = ltf_dtype_size(dt), bytes = (size_t)n * es;
        uint8_t *buf = malloc(bytes ? bytes : 1);
        uint8_t mode = u8(r);
        for (size_t k = 0; k < bytes; k++) {
            if (mode % 4 == 0) buf[k] = u8(r);                          /* raw bit patterns */
            else if (mode % 4 == 1) buf[k] = (k % es == 0) ? u8(r) % 4 : 0;   /* small ints (LE) */
            else buf[k] = k % es == 0 ? (uint8_t)(mode >> 2) : 0;       /* one repeated value */
        }
        if (dt == LTF_DTYPE_BOOL)   /* a bool element is 0 or 1 (the host's contract) */
            for (size_t k = 0; k < bytes; k++) buf[k] &= 1;
        if ((dt == LTF_DTYPE_FLOAT32 || dt == LTF_DTYPE_FLOAT64) && mode % 4 != 0) {   /* numbers, not bits */
            for (int64_t k = 0; k < n; k++) {
                double v = (double)buf[(size_t)k * es];
                if (dt == LTF_DTYPE_FLOAT32) {
                    float f = (float)v;
                    memcpy(buf + k * 4, &f, 4);
                } else {
                    memcpy(buf + k * 8, &v, 8);
                }
            }
        }
        t = ltf_tensor_from_data(s->ctx, dt, rank, dims, buf);
        free(buf);
    }
    if (!t) check_failure(s->ctx, s->ctx->last_status, "tensor_from_data");
    if (t && s->auto_tape && (dt == LTF_DTYPE_FLOAT32 || dt == LTF_DTYPE_FLOAT64)) {
        ltf_status st = ltf_tape_watch(s->ctx, s->auto_tape, t);
        check_failure(s->ctx, st, "tape_watch");
        if (st == LTF_OK) remember_watched(s, t);
    }
    return t;
}

/* A new input: a random tensor, or one shaped or typed like 'like'. */
static ltf_tensor *new_input(state *s, const ltf_tensor *like) {
    int64_t dims[LTF_MAX_RANK + 8];
    uint8_t how = u8(s->r);
    ltf_dtype dt = fuzz_dtype(s->r);
    int rank;
    if (like && !ltf_tensor_is_symbolic(like) && how % 4 != 0 && ltf_tensor_dtype(like) == LTF_DTYPE_RESOURCE) {
        /* a value for the variable: its dtype and declared shape, unknown dims small */
        int64_t vd[LTF_MAX_RANK];
        int vr = ltf_variable_shape(like, vd);
        if (ltf_variable_dtype(like) < LTF_DTYPE_RESOURCE) dt = ltf_variable_dtype(like);
        if (vr < 0 || vr > LTF_MAX_RANK) {
            rank = fuzz_shape(s->r, dims);
        } else {
            rank = vr;
            for (int i = 0; i < rank; i++) dims[i] = vd[i] >= 0 ? vd[i] : u8(s->r) % 4;
        }
    } else if (like && !ltf_tensor_is_symbolic(like) && how % 4 != 0 && ltf_tensor_rank(like) >= 0) {
        rank = ltf_tensor_rank(like);
        memcpy(dims, ltf_tensor_dims(like), sizeof(int64_t) * (size_t)rank);
        if (how % 4 == 2 && ltf_tensor_dtype(like) != LTF_DTYPE_RESOURCE) dt = ltf_tensor_dtype(like);
        if (how % 4 == 3) rank = 0;   /* a scalar of like's dtype */
        if (how % 4 == 3 && ltf_tensor_dtype(like) != LTF_DTYPE_RESOURCE) dt = ltf_tensor_dtype(like);
    } else {
        rank = fuzz_shape(s->r, dims);
    }
    return make_tensor(s, dt, rank, dims);
}
/* }==== */

/* {==== Attributes */
/* Plausible attributes for an op whose first input has rank 'rank' (-1:
** none or unknown): lists of one entry per dim (or two, or the window
** ops' 2, 4, 8), small entries, small scalars. Most ops refuse random
** attributes early; these reach their kernels (conv2d, pools, slice). */
static void plausible_attrs(reader *r, ltf_attrs *a, int rank) {
    static const int lens[] = { -1, 0, 1, 2, 4, 8 };
    uint8_t m = u8(r);
    int base = rank >= 0 ? rank : 2;
    a->nints = m & 1 ? (m & 2 ? 2 * base : base) : lens[(m >> 2) % 6];
    a->nints2 = m & 32 ? base : lens[(m >> 5) % 6];
    for (int k = 0; k < a->nints; k++) a->ints[k] = (int64_t)(u8(r) % 5) - 1;   /* -1..3 */
    for (int k = 0; k < a->nints2; k++) a->ints2[k] = (int64_t)(u8(r) % 5) - 1;
    for (int k = 0; k < 4; k++) a->i[k] = (int64_t)(u8(r) % 5) - 1;
    a->f[0] = 0.0;
    a->f[1] = 1.0;
}

static void fuzz_attrs(reader *r, ltf_attrs *a, const ltf_tensor *first) {
    ltf_attrs_init(a);
    uint8_t m = u8(r);
    if (m >= 0xE0) {
        plausible_attrs(r, a, first ? ltf_tensor_rank(first) : -1);
        return;
    }
    if (m & 1) a->nints = (int)(u8(r) % 34) - 1;      /* -1..32 */
    if (m & 2) a->nints2 = (int)(u8(r) % 34) - 1;
    for (int k = 0; k < a->nints; k++) a->ints[k] = fuzz_int(r);
    for (int k = 0; k < a->nints2; k++) a->ints2[k] = fuzz_int(r);
    if (m & 4)
        for (int k = 0; k < 4; k++) a->i[k] = fuzz_int(r);
    if (m & 8)
        for (int k = 0; k < 4; k++) a->f[k] = fuzz_double(r);
    if (m & 16) {
        int len = u8(r) % (LTF_ATTR_STR_MAX + 1);
        for (int k = 0; k < len && k < LTF_ATTR_STR_MAX; k++) a->s[k] = (char)u8(r);   /* NUL bytes end it */
        if (len < LTF_ATTR_STR_MAX) a->s[len] = 0;   /* len 64: maybe no NUL at all, which must be refused */
    }
}
/* }==== */

/* {==== Commands */
#define MAXOUT 64

/* Run one op on inputs from the pool or new ones; results join the pool. */
static void cmd_op(state *s) {
    reader *r = s->r;
    uint8_t ob = u8(r);
    ltf_op_id op = (ltf_op_id)(((unsigned)ob | (unsigned)u8(r) << 8) % (unsigned)ltf_op_count());
    /* read_file / write_file take arbitrary bytes as a path: they would touch
    ** the file system (the image decoders have their own targets) */
    if (op == LTF_OP_READ_FILE || op == LTF_OP_WRITE_FILE) return;
    int nin = u8(r) % 7;
    ltf_tensor *in[8] = {0}, *made[8] = {0};
    for (int k = 0; k < nin; k++) {
        uint8_t src = u8(r);
        if (src < 110 && s->npool) {
            in[k] = pool_pick(s);
        } else if (src < 150 && s->npool) {
            in[k] = pool_recent(s);
        } else if (src == 255) {
            in[k] = NULL;                        /* a missing input: a clean error */
        } else {
            made[k] = new_input(s, k > 0 ? in[k - 1] : (s->npool ? pool_pick(s) : NULL));
            in[k] = made[k];
            if (!in[k] && src < 250) {           /* refused: fall back to a scalar */
                made[k] = make_tensor(s, LTF_DTYPE_FLOAT32, 0, NULL);
                in[k] = made[k];
            }
        }
    }
    ltf_attrs at;
    fuzz_attrs(r, &at, in[0]);
    uint8_t mo = u8(r);
    int maxout = mo < 200 ? 8 : mo < 230 ? mo % 3 : MAXOUT - (mo % 24);
    ltf_tensor *out[MAXOUT];
    for (int k = 0; k < MAXOUT; k++) out[k] = (ltf_tensor *)(uintptr_t)0x1;   /* poison: must be overwritten */
    int nout = -7;
    if (tracing_on > 0) {
        char buf[160];
        fprintf(stderr, "%s(", ltf_op_name(op));
        for (int k = 0; k < nin; k++) fprintf(stderr, "%s%s", k ? ", " : "", describe(in[k], buf, sizeof buf));
        fprintf(stderr, ") nints %d nints2 %d i %lld %lld %lld %lld maxout %d\n", at.nints, at.nints2,
                (long long)at.i[0], (long long)at.i[1], (long long)at.i[2], (long long)at.i[3], maxout);
    }
    ltf_status st = ltf_op_run(s->ctx, op, in, nin, (mo & 1) && mo >= 230 ? NULL : &at, out, maxout, &nout);
    check_failure(s->ctx, st, ltf_op_name(op));
    if (st == LTF_OK) {
        if (nout < 0 || nout > maxout) fuzz_fail("nout outside 0..maxout", ltf_op_name(op));
        for (int k = 0; k < nout; k++) {
            if (!out[k] || out[k] == (ltf_tensor *)(uintptr_t)0x1) fuzz_fail("missing output", ltf_op_name(op));
            pool_add(s, out[k]);
        }
    } else {
        if (nout != 0) fuzz_fail("failed op reports outputs", ltf_op_name(op));
    }
    for (int k = 0; k < nin; k++) pool_add(s, made[k]);
}

/* A variable handle (rank -2: init's shape; -1: any; else a partial shape). */
static void cmd_variable(state *s) {
    reader *r = s->r;
    ltf_tensor *init = u8(r) < 128 ? pool_pick(s) : NULL, *made = NULL;
    if (!init) init = made = new_input(s, NULL);
    if (!init) return;
    int64_t dims[LTF_MAX_RANK + 8];
    uint8_t m = u8(r);
    int rank = -2;
    if (m % 4 == 1) rank = -1;
    if (m % 4 == 2 && ltf_tensor_rank(init) >= 0) {
        rank = ltf_tensor_rank(init);
        memcpy(dims, ltf_tensor_dims(init), sizeof(int64_t) * (size_t)rank);
        for (int i = 0; i < rank; i++)
            if (u8(r) & 1) dims[i] = -1;
    }
    if (m % 4 == 3) rank = fuzz_shape(r, dims);
    ltf_tensor *h = ltf_variable_new(s->ctx, init, (m & 16) ? "v" : NULL, m & 32, rank, dims);
    check_failure(s->ctx, h ? LTF_OK : s->ctx->last_status, "variable_new");
    if (h) {
        int64_t vd[LTF_MAX_RANK];
        int vr = ltf_variable_shape(h, vd);
        if (vr < -1 || vr > LTF_MAX_RANK) fuzz_fail("variable rank out of range", NULL);
        ltf_tensor *v = ltf_variable_peek(h);
        if (v) touch(v);
        ltf_tensor_release(v);
    }
    pool_add(s, h);
    pool_add(s, made);
}

static void cmd_graph_begin(state *s) {
    if (s->ngraphs == MAX_GRAPHS) return;
    ltf_graph *g = ltf_graph_begin(s->ctx, (u8(s->r) & 1) ? "f" : NULL);
    if (!g) {
        check_failure(s->ctx, s->ctx->last_status, "graph_begin");
        return;
    }
    fgraph *f = &s->graphs[s->ngraphs++];
    memset(f, 0, sizeof *f);
    f->g = g;
    f->tracing = 1;
}

/* A placeholder of a partial type in the innermost trace. */
static void cmd_placeholder(state *s) {
    reader *r = s->r;
    fgraph *f = tracing_graph(s);
    if (!f || f->nph == MAX_PH) return;
    ph_type ty;
    memset(&ty, 0, sizeof ty);
    ty.dt = fuzz_dtype(r);
    uint8_t m = u8(r);
    if (m % 5 == 0) ty.rank = -1;
    else ty.rank = fuzz_shape(r, ty.dims);
    for (int i = 0; i < ty.rank; i++) {
        uint8_t d = u8(r);
        if (d < 60) ty.dims[i] = -1;
        else if (d < 70) ty.dims[i] = huge_dims[d % NHUGE];
    }
    ltf_tensor *t = ltf_graph_placeholder(s->ctx, f->g, ty.dt, ty.rank, ty.dims, (m & 8) ? "x" : NULL);
    if (!t) {
        check_failure(s->ctx, s->ctx->last_status, "placeholder");
        return;
    }
    f->ph[f->nph++] = ty;
    pool_add(s, t);
}

/* A concrete input for placeholder type 'ty': a match (unknown dims made
** small) or anything. */
static ltf_tensor *graph_input(state *s, const ph_type *ty) {
    uint8_t m = u8(s->r);
    if (m < 40 || ty->rank > LTF_MAX_RANK || ty->dt == LTF_DTYPE_RESOURCE) {
        if (m < 10 && s->npool) return ltf_tensor_retain(pool_pick(s));
        return new_input(s, NULL);
    }
    int rank = ty->rank;
    int64_t dims[LTF_MAX_RANK + 8];
    if (rank < 0) rank = fuzz_shape(s->r, dims);
    else {
        int64_t total = 1;
        for (int i = 0; i < rank; i++) {
            int64_t d = ty->dims[i];
            if (d < 0 || d > 64) d = u8(s->r) % 4;
            if (d > 0 && total * d > MAX_ELEMS) d = 1;   /* a mismatch, for huge declared dims */
            if (d > 0) total *= d;
            dims[i] = d;
        }
    }
    return make_tensor(s, ty->dt, rank, dims);
}

static void run_graph(state *s, fgraph *f) {
    reader *r = s->r;
    int n = f->nph;
    uint8_t m = u8(r);
    if (m >= 240) n = (n + 1 + m % 3) % (MAX_PH + 1);   /* the wrong count */
    ltf_tensor *in[MAX_PH + 1] = {0};
    int ok = 1;
    for (int k = 0; k < n; k++) {
        in[k] = k < f->nph ? graph_input(s, &f->ph[k]) : new_input(s, NULL);
        ok &= in[k] != NULL;
    }
    if (ok) {
        ltf_tensor *out[MAXOUT];
        int nout = -7, maxout = (m & 3) == 3 ? 1 : MAXOUT;
        ltf_status st = ltf_graph_run(s->ctx, f->g, in, n, out, maxout, &nout);
        check_failure(s->ctx, st, "graph_run");
        if (st == LTF_OK) {
            if (nout < 0 || nout > maxout) fuzz_fail("graph_run: nout outside 0..maxout", NULL);
            for (int k = 0; k < nout; k++) {
                if (!out[k]) fuzz_fail("graph_run: missing output", NULL);
                if (ltf_tensor_is_symbolic(out[k]) && !tracing_graph(s))
                    fuzz_fail("graph_run: symbolic output outside a trace", NULL);
                pool_add(s, out[k]);
            }
        }
    }
    for (int k = 0; k < n; k++) ltf_tensor_release(in[k]);
}

/* End the innermost trace with outputs from the pool, then run it. */
static void cmd_graph_end(state *s) {
    reader *r = s->r;
    fgraph *f = tracing_graph(s);
    if (!f) return;
    int n = u8(r) % 5;
    ltf_tensor *outs[5];
    for (int k = 0; k < n; k++) outs[k] = pool_pick(s);
    if (n > 0 && !outs[0]) n = 0;
    for (int k = 1; k < n; k++)
        if (!outs[k]) outs[k] = outs[0];
    ltf_status st = ltf_graph_end(s->ctx, f->g, outs, n);
    f->tracing = 0;
    check_failure(s->ctx, st, "graph_end");
    if (st != LTF_OK) {
        ltf_graph_abort(s->ctx, f->g);
        return;
    }
    if (ltf_graph_num_outputs(f->g) != n) fuzz_fail("graph_end: output count", NULL);
    for (int i = 0; i < ltf_graph_num_nodes(f->g); i++) {   /* the reading API over every node */
        int64_t dims[LTF_MAX_RANK];
        ltf_dtype dt;
        const char *name = ltf_graph_node_name(f->g, i), *opn = ltf_graph_node_op(f->g, i);
        if (!name || !opn) fuzz_fail("graph node without a name", NULL);
        for (int k = 0; k < ltf_graph_node_num_outputs(f->g, i); k++) {
            int rk = ltf_graph_node_output_type(f->g, i, k, &dt, dims);
            if (rk < -1 || rk > LTF_MAX_RANK) fuzz_fail("graph node rank out of range", opn);
        }
        for (int k = 0; k < ltf_graph_node_num_inputs(f->g, i); k++) {
            int o = 0, src = ltf_graph_node_input(f->g, i, k, &o);
            if (src < 0 || src >= ltf_graph_num_nodes(f->g)) fuzz_fail("graph edge out of range", opn);
        }
    }
    f->finished = 1;
    int runs = 1 + u8(r) % 3;
    for (int k = 0; k < runs; k++) run_graph(s, f);
}

static void cmd_graph_abort(state *s) {
    fgraph *f = tracing_graph(s);
    if (!f) return;
    ltf_graph_abort(s->ctx, f->g);
    f->tracing = 0;
    for (int k = 0; k < s->ngraphs; k++)   /* nested traces went with it */
        if (&s->graphs[k] > f) s->graphs[k].tracing = 0;
}

static void cmd_graph_rerun(state *s) {
    if (!s->ngraphs) return;
    fgraph *f = &s->graphs[u8(s->r) % s->ngraphs];
    if (f->finished) run_graph(s, f);
}

static void cmd_tape_push(state *s) {
    reader *r = s->r;
    if (s->ntapes == MAX_TAPES) return;
    uint8_t m = u8(r);
    ltf_tape *t = ltf_tape_new(s->ctx, m & 1, (m >> 1) & 1);
    if (!t) {
        check_failure(s->ctx, s->ctx->last_status, "tape_new");
        return;
    }
    ltf_status st = ltf_tape_push(s->ctx, t);
    if (st != LTF_OK) {
        check_failure(s->ctx, st, "tape_push");
        ltf_tape_release(t);
        return;
    }
    s->tapes[s->ntapes++] = t;
    int nw = u8(r) % 4;
    for (int k = 0; k < nw && s->npool; k++) {
        ltf_tensor *w = (u8(r) & 1) ? pool_recent(s) : pool_pick(s);
        st = ltf_tape_watch(s->ctx, t, w);
        if (tracing_on > 0) {
            char buf[160];
            fprintf(stderr, "watch %s\n", describe(w, buf, sizeof buf));
        }
        check_failure(s->ctx, st, "tape_watch");
        if (st == LTF_OK) remember_watched(s, w);
    }
}

/* Gradient of pool tensors with respect to pool tensors on the innermost tape. */
static void cmd_tape_gradient(state *s) {
    reader *r = s->r;
    if (!s->ntapes || !s->npool) return;
    ltf_tape *t = s->tapes[s->ntapes - 1];
    uint8_t m = u8(r);
    if (m & 1) ltf_tape_pop(s->ctx, t);          /* usually asked after recording */
    int nt = 1 + u8(r) % 3, ns = 1 + u8(r) % 3;
    ltf_tensor *targets[3], *sources[3], *og[3] = {0}, *result[3] = {0};
    /* retained: making the output gradients below may push them out of the pool */
    for (int k = 0; k < nt; k++) targets[k] = ltf_tensor_retain((u8(r) & 3) ? pool_recent(s) : pool_pick(s));
    for (int k = 0; k < ns; k++) {
        uint8_t b = u8(r);
        sources[k] = ltf_tensor_retain((b & 3) && s->nwatched ? s->watched[(b >> 2) % s->nwatched] : pool_pick(s));
    }
    int with_og = (m & 2) != 0;
    for (int k = 0; k < nt && with_og; k++) og[k] = u8(r) < 200 ? new_input(s, targets[k]) : NULL;
    if (tracing_on > 0) {
        char buf[160];
        fprintf(stderr, "gradient of");
        for (int k = 0; k < nt; k++) fprintf(stderr, " %s", describe(targets[k], buf, sizeof buf));
        fprintf(stderr, " by");
        for (int k = 0; k < ns; k++) fprintf(stderr, " %s", describe(sources[k], buf, sizeof buf));
        fprintf(stderr, "\n");
    }
    ltf_status st = ltf_tape_gradient(s->ctx, t, targets, nt, with_og ? og : NULL, sources, ns,
                                      (m >> 2) & 3, result);
    check_failure(s->ctx, st, "tape_gradient");
    if (st == LTF_OK)
        for (int k = 0; k < ns; k++) pool_add(s, result[k]);
    for (int k = 0; k < nt; k++) ltf_tensor_release(og[k]);
    for (int k = 0; k < nt; k++) ltf_tensor_release(targets[k]);
    for (int k = 0; k < ns; k++) ltf_tensor_release(sources[k]);
    if (m & 1) {   /* popped: drop it */
        ltf_tape_release(t);
        s->ntapes--;
    }
}

static void cmd_tape_pop(state *s) {
    if (!s->ntapes) return;
    ltf_tape *t = s->tapes[--s->ntapes];
    ltf_tape_pop(s->ctx, t);
    ltf_tape_release(t);
}

static void cmd_drop(state *s) {
    if (!s->npool) return;
    int k = u8(s->r) % s->npool;
    ltf_tensor_release(s->pool[k]);
    s->pool[k] = s->pool[--s->npool];
}
/* }==== */

/* The value of a pool tensor computed now, inside a trace (ltf_graph_lift). */
static void cmd_lift(state *s) {
    ltf_tensor *t = pool_pick(s), *v = NULL;
    if (!t) return;
    ltf_status st = ltf_graph_lift(s->ctx, t, &v);
    check_failure(s->ctx, st, "graph_lift");
    if (st == LTF_OK) {
        if (!v || ltf_tensor_is_symbolic(v)) fuzz_fail("graph_lift: no concrete value", NULL);
        pool_add(s, v);
    } else if (v) {
        fuzz_fail("graph_lift: a value with a failure", NULL);
    }
}

/* Threads for large kernels: -1..4 (0 and -1 must be refused). */
static void cmd_threads(state *s) {
    int n = (int)(u8(s->r) % 6) - 1;
    ltf_status st = ltf_ctx_set_num_threads(s->ctx, n);
    check_failure(s->ctx, st, "set_num_threads");
    if ((st == LTF_OK) != (n >= 1)) fuzz_fail("set_num_threads: wrong answer", NULL);
}

static void free_buffer(void *data, void *ud) {
    (void)ud;
    free(data);
}

/* A tensor over a host buffer (ltf_tensor_wrap): numbers only. */
static void cmd_wrap(state *s) {
    reader *r = s->r;
    ltf_dtype dt = fuzz_dtype(r);
    int64_t dims[LTF_MAX_RANK + 8];
    int rank = fuzz_shape(r, dims);
    int64_t n = 1;
    for (int i = 0; i < rank && i < LTF_MAX_RANK; i++) n = dims[i] < 0 || dims[i] > MAX_ELEMS ? 0 : n * dims[i];
    if (n > MAX_ELEMS) n = 0;
    size_t bytes = (size_t)n * (ltf_dtype_size(dt) ? ltf_dtype_size(dt) : 1);
    uint8_t *buf = calloc(bytes ? bytes : 1, 1);
    if (!buf) return;
    for (size_t k = 0; k < bytes; k++) buf[k] = dt == LTF_DTYPE_BOOL ? u8(r) & 1 : u8(r);
    ltf_tensor *t = ltf_tensor_wrap(s->ctx, dt, rank, dims, buf, free_buffer, NULL);
    check_failure(s->ctx, t ? LTF_OK : s->ctx->last_status, "tensor_wrap");
    if (!t) free(buf);   /* refused: the buffer stays the caller's */
    pool_add(s, t);
}

static ltf_status quiet_print(ltf_ctx *ctx, void *ud, ltf_tensor *const *in, int n, const ltf_print_options *o) {
    (void)ctx;
    (void)ud;
    for (int k = 0; k < n; k++) touch(in[k]);
    sink += strlen(o->sep) + strlen(o->end);
    return LTF_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = { data, size, 0 };
    if (tracing_on < 0) tracing_on = getenv("FUZZ_OPS_TRACE") != NULL;
    state s;
    memset(&s, 0, sizeof s);
    s.r = &r;
    s.ctx = ltf_ctx_new();
    if (!s.ctx) return 0;
    budget b = { 0, 0, 0 };
    ltf_backend backend = ltf_cpu_backend;
    backend.alloc = budget_alloc;
    backend.free = budget_free;
    backend.copy = budget_copy;
    backend.bctx = &b;
    s.ctx->backend[LTF_DEVICE_CPU] = &backend;
    /* no_caches: a released block goes back to the allocator at once, so
    ** that ASan sees a use after release or a double release (a recycled
    ** block hides both). Small blocks: each class counts as full; large
    ** ones: the cache is emptied after every command. */
    for (int c = 0; c < LTF_BLOCK_CLASSES; c++) s.ctx->block_cached[c] = INT32_MAX / 2;
    ltf_ctx_set_print_hook(s.ctx, quiet_print, NULL);
    uint8_t head = u8(&r);
    if (head >= 224) b.fail_at = 1 + u8(&r) % 64;   /* fault injection: one allocation fails */
    ltf_ctx_set_seed(s.ctx, head);
    if (head & 0x10) {   /* one tape records everything: every program is also a gradient */
        s.auto_tape = ltf_tape_new(s.ctx, 1, 1);
        if (s.auto_tape && ltf_tape_push(s.ctx, s.auto_tape) != LTF_OK) {
            ltf_tape_release(s.auto_tape);
            s.auto_tape = NULL;
        }
    }

    for (int steps = 0; steps < 64 && more(&r); steps++) {
        uint8_t c = u8(&r);
        switch (c % 20) {
        case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 19:
            cmd_op(&s);
            break;
        case 7: cmd_variable(&s); break;
        case 8: cmd_graph_begin(&s); break;
        case 9: case 10: cmd_placeholder(&s); break;
        case 11: cmd_graph_end(&s); break;
        case 12: cmd_graph_abort(&s); cmd_graph_rerun(&s); break;
        case 13: cmd_tape_push(&s); break;
        case 14: cmd_tape_gradient(&s); break;
        case 15: cmd_drop(&s); if (c & 32) cmd_tape_pop(&s); break;
        case 16: cmd_lift(&s); break;
        case 17: cmd_threads(&s); break;
        default: cmd_wrap(&s); break;
        }
        ltf_storage_cache_clear(s.ctx);   /* no_caches */
    }

    if (s.auto_tape) {   /* d(latest float result)/d(every watched input) */
        ltf_tape_pop(s.ctx, s.auto_tape);
        ltf_tensor *target = NULL;
        for (int k = s.npool - 1; k >= 0 && !target; k--) {
            ltf_dtype dt = ltf_tensor_dtype(s.pool[k]);
            if (dt == LTF_DTYPE_FLOAT32 || dt == LTF_DTYPE_FLOAT64) target = s.pool[k];
        }
        if (target && s.nwatched) {
            ltf_tensor *result[8] = {0};
            ltf_status st = ltf_tape_gradient(s.ctx, s.auto_tape, &target, 1, NULL, s.watched, s.nwatched, 0, result);
            check_failure(s.ctx, st, "tape_gradient (whole program)");
            for (int k = 0; k < s.nwatched && st == LTF_OK; k++) {
                if (result[k]) touch(result[k]);
                ltf_tensor_release(result[k]);
            }
        }
        ltf_tape_release(s.auto_tape);
    }
    /* teardown: tapes, open traces (innermost first), tensors, graphs, context */
    while (s.ntapes) cmd_tape_pop(&s);
    for (int k = 0; k < s.nwatched; k++) ltf_tensor_release(s.watched[k]);
    for (int k = s.ngraphs - 1; k >= 0; k--)
        if (s.graphs[k].tracing) ltf_graph_abort(s.ctx, s.graphs[k].g);
    for (int k = 0; k < s.npool; k++) ltf_tensor_release(s.pool[k]);
    for (int k = 0; k < s.ngraphs; k++) ltf_graph_release(s.graphs[k].g);
    ltf_ctx_release(s.ctx);   /* a leak keeps it alive: LeakSanitizer reports it */
    return 0;
}
