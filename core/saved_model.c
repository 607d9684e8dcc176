/*
** saved_model.c: tf.saved_model's directory (docs/saved_model.md). A
** directory holds two files:
**   saved_model.ltf         the graphs: magic, version, checksum, then the
**                           variables' table, every graph (control-flow
**                           functions before the graphs that run them) and
**                           the named functions (signatures among them);
**   variables.safetensors   the variables' values, a luatf checkpoint file
**                           written by ltf_ckpt_write (atomic, checksummed).
** Graphs are written with the graph reading API (live nodes, their ops by
** name, attributes, constants' bytes) and rebuilt by replaying each node
** through ltf_op_run under ltf_graph_begin (control-flow functions under
** ltf_graph_begin_function), so a loaded graph is checked by the same shape
** and dtype inference as a traced one and needs no Lua. Every read is
** bounds-checked: a truncated, corrupted or hostile file is refused with
** LTF_ERR_DATA_LOSS (or the op's own error), never a crash.
*/
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "graph.h"
#include "functions.h"
#include "tensor.h"
#include "storage.h"

#define SM_MAGIC "LTFSAVED"
#define SM_HEAD 24              /* magic 8, version 4, crc 4, payload length 8 */
#define SM_MAX_GRAPHS 100000
#define SM_MAX_NODES 10000000
#define SM_MAX_NAME 4096
#define SM_GRAPH_FILE "saved_model.ltf"
#define SM_VARS_FILE "variables.safetensors"
/* Largest constant a loaded graph may compute from constants alone (folded at load) */
#define LTF_SAVED_MODEL_MAX_CONSTANT ((uint64_t)1 << 30)

/* {==== Writing */
typedef struct wbuf {
    unsigned char *p;
    size_t n, cap;
    int oom;
} wbuf;

static void put(wbuf *b, const void *d, size_t n) {
    if (b->oom) return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n) cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    if (n && d) memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void put_u8(wbuf *b, unsigned v) { unsigned char c = (unsigned char)v; put(b, &c, 1); }
static void put_u32(wbuf *b, uint32_t v) {
    unsigned char c[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    put(b, c, 4);
}
static void put_u64(wbuf *b, uint64_t v) {
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}
static void put_f64(wbuf *b, double d) {
    uint64_t v;
    memcpy(&v, &d, 8);
    put_u64(b, v);
}
static void put_str(wbuf *b, const char *s, size_t n) {
    put_u32(b, (uint32_t)n);
    put(b, s, n);
}
static void put_cstr(wbuf *b, const char *s) { put_str(b, s ? s : "", s ? strlen(s) : 0); }

typedef struct save_state {
    ltf_ctx *ctx;
    wbuf graphs;
    int ngraphs;
    const ltf_graph **written;   /* graph pointers already written, by index */
    int capwritten;
    ltf_tensor **vars;           /* variable handles (retained), by index */
    int nvars, capvars;
} save_state;

static int var_index(save_state *s, ltf_tensor *h) {
    int64_t id = ltf_variable_id(h);
    for (int k = 0; k < s->nvars; k++)
        if (ltf_variable_id(s->vars[k]) == id) return k;
    if (s->nvars == s->capvars) {
        int cap = s->capvars ? s->capvars * 2 : 16;
        ltf_tensor **v = realloc(s->vars, sizeof *v * (size_t)cap);
        if (!v) return -1;
        s->vars = v;
        s->capvars = cap;
    }
    s->vars[s->nvars] = ltf_tensor_retain(h);
    return s->nvars++;
}

/* Node 'i' is written when live, or a placeholder (the signature keeps every input). */
static int kept(const ltf_graph *g, int i) { return g->nodes[i].alive || g->nodes[i].kind == LTF_NODE_PLACEHOLDER; }

static ltf_status write_tensor(save_state *s, wbuf *b, ltf_tensor *t) {
    ltf_ctx *ctx = s->ctx;
    put_u8(b, (unsigned)t->dtype);
    put_u32(b, (uint32_t)t->rank);
    for (int d = 0; d < t->rank; d++) put_u64(b, (uint64_t)t->dims[d]);
    int64_t numel = ltf_shape_numel(t->rank, t->dims);
    if (t->dtype == LTF_DTYPE_STRING) {
        if (t->storage->device != LTF_DEVICE_CPU)
            return ltf_fail(ctx, LTF_ERR_INTERNAL, "saved_model.save: a string constant off the host");
        ltf_string **S = LTF_DATA(t);
        for (int64_t k = 0; k < numel; k++) {
            if (S[k]) put_str(b, S[k]->bytes, S[k]->len);
            else put_str(b, "", 0);
        }
        return LTF_OK;
    }
    size_t nbytes = (size_t)numel * ltf_dtype_size(t->dtype);
    put_u64(b, nbytes);
    if (b->oom) return ltf_fail_oom(ctx, "saved_model.save", nbytes);
    if (nbytes == 0) return LTF_OK;
    size_t at = b->n;
    put(b, NULL, nbytes);   /* room, filled below */
    if (b->oom) return ltf_fail_oom(ctx, "saved_model.save", nbytes);
    b->n = at;
    ltf_status st = ltf_tensor_copy_to(ctx, t, b->p + at, nbytes);
    b->n = at + nbytes;
    return st;
}

static ltf_status write_graph(save_state *s, const ltf_graph *g, int *index);

static ltf_status write_attrs(wbuf *b, const ltf_attrs *a) {
    put_u32(b, (uint32_t)a->nints);
    for (int k = 0; k < a->nints; k++) put_u64(b, (uint64_t)a->ints[k]);
    put_u32(b, (uint32_t)a->nints2);
    for (int k = 0; k < a->nints2; k++) put_u64(b, (uint64_t)a->ints2[k]);
    for (int k = 0; k < 4; k++) put_u64(b, (uint64_t)a->i[k]);
    for (int k = 0; k < 4; k++) put_f64(b, a->f[k]);
    put(b, a->s, LTF_ATTR_STR_MAX);
    return LTF_OK;
}

static ltf_status write_graph(save_state *s, const ltf_graph *g, int *index) {
    ltf_ctx *ctx = s->ctx;
    for (int k = 0; k < s->ngraphs; k++)
        if (s->written[k] == g) {
            *index = k;
            return LTF_OK;
        }
    if (!g->finished)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "saved_model.save: graph '%s' is not finished", g->name);
    /* the functions its control-flow nodes run, first */
    int *fidx = calloc((size_t)g->n * 2 + 1, sizeof *fidx);
    int *renum = calloc((size_t)g->n + 1, sizeof *renum);
    if (!fidx || !renum) {
        free(fidx);
        free(renum);
        return ltf_fail_oom(ctx, "saved_model.save", 0);
    }
    ltf_status st = LTF_OK;
    int nkept = 0;
    for (int i = 0; i < g->n && st == LTF_OK; i++) {
        renum[i] = -1;
        if (!kept(g, i)) continue;
        renum[i] = nkept++;
        for (int k = 0; k < 2; k++) {
            ltf_graph *f = ltf_graph_node_function(g, i, k);
            fidx[2 * i + k] = -1;
            if (f) st = write_graph(s, f, &fidx[2 * i + k]);
        }
    }
    wbuf *b = &s->graphs;
    if (st == LTF_OK) {
        put_cstr(b, g->name);
        put_u8(b, g->capturing ? 1 : 0);
        put_u32(b, (uint32_t)nkept);
    }
    for (int i = 0; i < g->n && st == LTF_OK; i++) {
        if (!kept(g, i)) continue;
        const ltf_node *nd = &g->nodes[i];
        put_u8(b, (unsigned)nd->kind);
        if (nd->kind == LTF_NODE_PLACEHOLDER) {
            put_cstr(b, nd->name);
            put_u8(b, (unsigned)nd->out[0].dtype);
            put_u32(b, (uint32_t)nd->out[0].rank);
            for (int d = 0; d < nd->out[0].rank; d++) put_u64(b, (uint64_t)nd->out[0].dims[d]);
        } else if (nd->kind == LTF_NODE_CONST) {
            if (nd->value->dtype == LTF_DTYPE_RESOURCE) {
                int v = var_index(s, nd->value);
                if (v < 0) st = ltf_fail_oom(ctx, "saved_model.save", 0);
                put_u8(b, 1);
                put_u32(b, (uint32_t)v);
            } else {
                put_u8(b, 0);
                st = write_tensor(s, b, nd->value);
            }
        } else {
            put_cstr(b, ltf_op_name(nd->op));
            put_u32(b, (uint32_t)nd->nout);
            put_u32(b, (uint32_t)nd->nin);
            for (int k = 0; k < nd->nin; k++) {
                int src = nd->in[k].node;
                if (src < 0 || src >= i || renum[src] < 0) {
                    st = ltf_fail(ctx, LTF_ERR_INTERNAL, "saved_model.save: graph '%s': node '%s' reads a pruned node",
                                  g->name, nd->name);
                    break;
                }
                put_u32(b, (uint32_t)renum[src]);
                put_u32(b, (uint32_t)nd->in[k].out);
            }
            put_u8(b, nd->attrs ? 1 : 0);
            if (nd->attrs) write_attrs(b, nd->attrs);
            int nf = fidx[2 * i] >= 0 ? (fidx[2 * i + 1] >= 0 ? 2 : 1) : 0;
            put_u8(b, (unsigned)nf);
            for (int k = 0; k < nf; k++) put_u32(b, (uint32_t)fidx[2 * i + k]);
        }
    }
    if (st == LTF_OK) {
        put_u32(b, (uint32_t)g->noutputs);
        for (int k = 0; k < g->noutputs; k++) {
            ltf_edge e = g->outputs[k];
            /* graph_end's Identity: the loader's graph_end adds its own */
            const ltf_node *nd = &g->nodes[e.node];
            if (nd->kind == LTF_NODE_OP && nd->op == LTF_OP_IDENTITY && nd->nin == 1 && nd->attrs == NULL)
                e = nd->in[0];
            put_u32(b, (uint32_t)renum[e.node]);
            put_u32(b, (uint32_t)e.out);
        }
        if (b->oom) st = ltf_fail_oom(ctx, "saved_model.save", 0);
    }
    free(fidx);
    free(renum);
    if (st != LTF_OK) return st;
    if (s->ngraphs == s->capwritten) {
        int cap = s->capwritten ? s->capwritten * 2 : 8;
        const ltf_graph **w = realloc(s->written, sizeof *w * (size_t)cap);
        if (!w) return ltf_fail_oom(ctx, "saved_model.save", 0);
        s->written = w;
        s->capwritten = cap;
    }
    s->written[s->ngraphs] = g;
    *index = s->ngraphs++;
    return LTF_OK;
}

static const char *st_dtype(ltf_dtype dt) {
    switch (dt) {
    case LTF_DTYPE_FLOAT32: return "F32";
    case LTF_DTYPE_FLOAT64: return "F64";
    case LTF_DTYPE_INT32: return "I32";
    case LTF_DTYPE_INT64: return "I64";
    case LTF_DTYPE_UINT8: return "U8";
    case LTF_DTYPE_BOOL: return "BOOL";
    case LTF_DTYPE_FLOAT16: return "F16";
    case LTF_DTYPE_BFLOAT16: return "BF16";
    default: return NULL;
    }
}

static void json_str(wbuf *b, const char *s) {
    put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            put(b, "\\", 1);
            put(b, s, 1);
        } else if (c < 0x20) {
            char e[8];
            snprintf(e, sizeof e, "\\u%04x", c);
            put(b, e, 6);
        } else {
            put(b, s, 1);
        }
    }
    put(b, "\"", 1);
}

static int path_join(char *out, size_t size, const char *dir, const char *file) {
    int n = snprintf(out, size, "%s/%s", dir, file);
    return n > 0 && (size_t)n < size;
}

/* The CRC32C a luatf checkpoint's header records (its 8 hex digits after
** LTF_CKPT_MAGIC); 0 when it has none. */
static int header_crc(const ltf_ckpt_file *f, uint32_t *crc) {
    size_t len, m = strlen(LTF_CKPT_MAGIC);
    const char *h = ltf_ckpt_header(f, &len);
    *crc = 0;
    if (!h || len < m + 8 || memcmp(h, LTF_CKPT_MAGIC, m) != 0) return 0;
    uint32_t v = 0;
    for (size_t k = 0; k < 8; k++) {
        char c = h[m + k];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0) return 0;
        v = v << 4 | (uint32_t)d;
    }
    *crc = v;
    return 1;
}

/* The variables' file and the variables' table of the graph file. */
static ltf_status write_variables(save_state *s, const char *dir, wbuf *table) {
    ltf_ctx *ctx = s->ctx;
    int n = s->nvars;
    ltf_tensor **vals = calloc((size_t)n + 1, sizeof *vals);
    uint64_t *begins = calloc((size_t)n + 1, sizeof *begins);
    char (*names)[160] = calloc((size_t)n + 1, sizeof *names);
    wbuf h = {0};
    ltf_status st = LTF_OK;
    if (!vals || !begins || !names) {
        st = ltf_fail_oom(ctx, "saved_model.save", 0);
        goto done;
    }
    uint64_t at = 0;
    put(&h, LTF_CKPT_MAGIC, strlen(LTF_CKPT_MAGIC));
    const char *meta_tail = "00000000\",\"luatf.saved_model\":\"1\"}";
    put(&h, meta_tail, strlen(meta_tail));
    put_u32(table, 0);   /* the variables file's CRC32C, below: the two files belong together */
    put_u32(table, (uint32_t)n);
    for (int k = 0; k < n; k++) {
        ltf_tensor *v = ltf_variable_peek(s->vars[k]);
        vals[k] = v;
        const char *dt = v ? st_dtype(v->dtype) : NULL;
        if (!dt) {
            st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT,
                          "saved_model.save: variable '%s' has dtype %s, which a safetensors file cannot hold",
                          ltf_variable_name(s->vars[k]), v ? ltf_dtype_name(v->dtype) : "?");
            goto done;
        }
        if (v->storage->device != LTF_DEVICE_CPU) {
            ltf_tensor *c = NULL;
            st = ltf_tensor_to_device(ctx, v, LTF_DEVICE_CPU, 0, &c);
            if (st != LTF_OK) goto done;
            ltf_tensor_release(v);
            vals[k] = v = c;
        }
        /* keys: the variables' names, made unique */
        const char *base = ltf_variable_name(s->vars[k]);
        snprintf(names[k], sizeof names[k], "%.140s", base && base[0] ? base : "Variable");
        for (int dup = 1;; dup++) {
            int clash = 0;
            for (int j = 0; j < k; j++)
                if (strcmp(names[j], names[k]) == 0) clash = 1;
            if (!clash) break;
            snprintf(names[k], sizeof names[k], "%.140s_%d", base && base[0] ? base : "Variable", dup);
        }
        uint64_t nbytes = (uint64_t)ltf_shape_numel(v->rank, v->dims) * ltf_dtype_size(v->dtype);
        begins[k] = at;
        put(&h, ",", 1);
        json_str(&h, names[k]);
        char buf[96];
        snprintf(buf, sizeof buf, ":{\"dtype\":\"%s\",\"shape\":[", dt);
        put(&h, buf, strlen(buf));
        for (int d = 0; d < v->rank; d++) {
            snprintf(buf, sizeof buf, "%s%lld", d ? "," : "", (long long)v->dims[d]);
            put(&h, buf, strlen(buf));
        }
        snprintf(buf, sizeof buf, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)at,
                 (unsigned long long)(at + nbytes));
        put(&h, buf, strlen(buf));
        at += (nbytes + 7) & ~(uint64_t)7;
        put_cstr(table, names[k]);
        put_u8(table, (unsigned)v->dtype);
        put_u8(table, ltf_variable_is_trainable(s->vars[k]) ? 1 : 0);
        put_u32(table, (uint32_t)v->rank);
        for (int d = 0; d < v->rank; d++) put_u64(table, (uint64_t)v->dims[d]);
        put_u64(table, begins[k]);
    }
    put(&h, "}", 1);
    if (h.oom || table->oom) {
        st = ltf_fail_oom(ctx, "saved_model.save", 0);
        goto done;
    }
    char path[4096];
    if (!path_join(path, sizeof path, dir, SM_VARS_FILE)) {
        st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "saved_model.save: directory name too long");
        goto done;
    }
    st = ltf_ckpt_write(ctx, path, (const char *)h.p, h.n, strlen(LTF_CKPT_MAGIC), vals, begins, n, at);
    if (st == LTF_OK) {
        ltf_ckpt_file *f = ltf_ckpt_open(ctx, path);
        uint32_t crc;
        if (!f) {
            st = ctx->last_status;
        } else {
            if (header_crc(f, &crc))
                for (int k = 0; k < 4; k++) table->p[k] = (unsigned char)(crc >> (8 * k));
            ltf_ckpt_close(f);
        }
    }
done:
    for (int k = 0; vals && k < n; k++) ltf_tensor_release(vals[k]);
    free(vals);
    free(begins);
    free(names);
    free(h.p);
    return st;
}

ltf_status ltf_saved_model_save(ltf_ctx *ctx, const char *dir, const ltf_saved_function *fns, int n) {
    if (!dir || !dir[0] || n < 0 || (n > 0 && !fns))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "saved_model.save: missing directory or functions");
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return ltf_fail(ctx, errno == ENOENT ? LTF_ERR_NOT_FOUND : LTF_ERR_INVALID_ARGUMENT,
                        "saved_model.save: cannot create directory '%s': %s", dir, strerror(errno));
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "saved_model.save: '%s' is not a directory", dir);
    save_state s = {0};
    s.ctx = ctx;
    wbuf entries = {0}, table = {0}, file = {0};
    int *gidx = calloc((size_t)n + 1, sizeof *gidx);
    ltf_status st = gidx ? LTF_OK : ltf_fail_oom(ctx, "saved_model.save", 0);
    for (int k = 0; k < n && st == LTF_OK; k++) {
        const ltf_saved_function *f = &fns[k];
        if (!f->name || !f->name[0] || !f->graph) {
            st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "saved_model.save: function %d has no name or graph", k + 1);
            break;
        }
        for (int j = 0; j < k; j++)
            if (strcmp(fns[j].name, f->name) == 0) {
                st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "saved_model.save: two functions are named '%s'",
                              f->name);
                break;
            }
        if (st == LTF_OK) st = write_graph(&s, f->graph, &gidx[k]);
    }
    if (st == LTF_OK) {
        put_u32(&entries, (uint32_t)n);
        for (int k = 0; k < n; k++) {
            const ltf_saved_function *f = &fns[k];
            const ltf_graph *g = f->graph;
            put_cstr(&entries, f->name);
            put_u8(&entries, f->signature ? 1 : 0);
            put_u32(&entries, (uint32_t)gidx[k]);
            put_u32(&entries, (uint32_t)g->ninputs);
            for (int i = 0; i < g->ninputs; i++)
                put_cstr(&entries, f->input_names && f->input_names[i] ? f->input_names[i]
                                                                         : g->nodes[g->inputs[i]].name);
            put_u32(&entries, (uint32_t)g->noutputs);
            for (int i = 0; i < g->noutputs; i++) {
                char def[32];
                snprintf(def, sizeof def, "output_%d", i);
                put_cstr(&entries, f->output_names && f->output_names[i] ? f->output_names[i] : def);
            }
            put_str(&entries, f->meta ? f->meta : "", f->meta ? f->nmeta : 0);
        }
        st = write_variables(&s, dir, &table);
    }
    if (st == LTF_OK) {
        put(&file, SM_MAGIC, 8);
        put_u32(&file, LTF_SAVED_MODEL_VERSION);
        put_u32(&file, 0);   /* crc, below */
        uint64_t plen = 4 + (uint64_t)table.n + 4 + s.graphs.n + entries.n;
        put_u64(&file, plen);
        put(&file, table.p, table.n);
        put_u32(&file, (uint32_t)s.ngraphs);
        put(&file, s.graphs.p, s.graphs.n);
        put(&file, entries.p, entries.n);
        put_cstr(&file, "luatf");   /* producer: the trailer */
        if (file.oom || entries.oom || s.graphs.oom) st = ltf_fail_oom(ctx, "saved_model.save", 0);
    }
    if (st == LTF_OK) {
        uint64_t plen = file.n - SM_HEAD;
        for (int k = 0; k < 8; k++) file.p[16 + k] = (unsigned char)(plen >> (8 * k));
        uint32_t crc = ltf_crc32c(0, file.p + 16, file.n - 16);
        for (int k = 0; k < 4; k++) file.p[12 + k] = (unsigned char)(crc >> (8 * k));
        char path[4096];
        if (!path_join(path, sizeof path, dir, SM_GRAPH_FILE))
            st = ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "saved_model.save: directory name too long");
        else
            st = ltf_file_write_atomic(ctx, path, file.p, file.n);
    }
    for (int k = 0; k < s.nvars; k++) ltf_tensor_release(s.vars[k]);
    free(s.vars);
    free(s.written);
    free(s.graphs.p);
    free(entries.p);
    free(table.p);
    free(file.p);
    free(gidx);
    return st;
}
/* }==== */

/* {==== Reading */
typedef struct rd {
    const unsigned char *p;
    size_t n, at;
    int bad;
} rd;

static int need(rd *r, size_t k) {
    if (r->bad || k > r->n - r->at) {
        r->bad = 1;
        return 0;
    }
    return 1;
}
static unsigned get_u8(rd *r) { return need(r, 1) ? r->p[r->at++] : 0; }
static uint32_t get_u32(rd *r) {
    if (!need(r, 4)) return 0;
    const unsigned char *p = r->p + r->at;
    r->at += 4;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get_u64(rd *r) {
    uint64_t lo = get_u32(r);
    return lo | (uint64_t)get_u32(r) << 32;
}
static double get_f64(rd *r) {
    uint64_t v = get_u64(r);
    double d;
    memcpy(&d, &v, 8);
    return d;
}
/* A string (lent, not NUL-terminated): its length in '*len'. */
static const char *get_str(rd *r, size_t *len) {
    uint32_t n = get_u32(r);
    if (!need(r, n)) {
        *len = 0;
        return "";
    }
    const char *s = (const char *)r->p + r->at;
    r->at += n;
    *len = n;
    return s;
}
static char *dup_str(rd *r, size_t max) {
    size_t n;
    const char *s = get_str(r, &n);
    if (r->bad) return NULL;
    if (n > max || memchr(s, '\0', n)) {
        r->bad = 1;
        return NULL;
    }
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

typedef struct pnode {
    int kind;
    char name[48];
    ltf_type type;         /* placeholder */
    int var;               /* const: variable index, or -1 */
    ltf_tensor *value;     /* const tensor */
    ltf_op_id op;
    int nout;              /* op: its output count */
    int nin;
    uint32_t *in;          /* pairs */
    int has_attrs;
    ltf_attrs attrs;
    int nfn;
    int fn[2];
} pnode;

typedef struct pgraph {
    char name[64];
    int function;
    int n;
    pnode *nodes;
    int nout;
    uint32_t *outs;
} pgraph;

typedef struct sm_fn {
    char *name;
    int signature;
    int graph;
    int nin, nout;
    char **in_names, **out_names;
    char *meta;
    size_t nmeta;
    ltf_graph *g;
} sm_fn;

struct ltf_saved_model {
    ltf_ctx *ctx;
    int nvars;
    ltf_tensor **vars;     /* handles */
    char **var_names;
    int nfns;
    sm_fn *fns;
};

typedef struct load_state {
    ltf_ctx *ctx;
    const char *what;      /* the file, for messages */
    int ngraphs;
    pgraph *graphs;
    int nvars;
    ltf_tensor **vars;
} load_state;

static ltf_status corrupt(ltf_ctx *ctx, const char *what, const rd *r, const char *why) {
    return ltf_fail(ctx, LTF_ERR_DATA_LOSS, "saved_model.load: '%s' is corrupted or truncated (%s, at byte %zu)", what,
                    why, r->at + SM_HEAD);
}

static void free_pgraphs(pgraph *gs, int n) {
    for (int k = 0; gs && k < n; k++) {
        for (int i = 0; gs[k].nodes && i < gs[k].n; i++) {
            free(gs[k].nodes[i].in);
            ltf_tensor_release(gs[k].nodes[i].value);
        }
        free(gs[k].nodes);
        free(gs[k].outs);
    }
    free(gs);
}

static int read_shape(rd *r, int *rank, int64_t *dims, int allow_unknown) {
    uint32_t rk = get_u32(r);
    if (r->bad) return 0;
    if (allow_unknown && rk == (uint32_t)-1) {
        *rank = -1;
        return 1;
    }
    if (rk > LTF_MAX_RANK) return 0;
    *rank = (int)rk;
    for (uint32_t d = 0; d < rk; d++) {
        dims[d] = (int64_t)get_u64(r);
        if (dims[d] < (allow_unknown ? -1 : 0)) return 0;
    }
    return !r->bad;
}

static ltf_tensor *read_const(load_state *L, rd *r, const char **why) {
    ltf_ctx *ctx = L->ctx;
    unsigned dt = get_u8(r);
    int rank;
    int64_t dims[LTF_MAX_RANK];
    *why = "a constant's type";
    if (dt >= LTF_DTYPE_COUNT || dt == LTF_DTYPE_RESOURCE || !read_shape(r, &rank, dims, 0)) return NULL;
    /* the element count, bounded by the bytes left (each element takes >= 1 byte, a string >= 4) */
    uint64_t numel = 1;
    size_t left = r->n - r->at;
    int empty = 0;
    for (int d = 0; d < rank; d++) empty |= dims[d] == 0;
    for (int d = 0; d < rank && !empty; d++) {
        if ((uint64_t)dims[d] > (uint64_t)left + 1 || numel > ((uint64_t)left + 1) / (uint64_t)dims[d]) return NULL;
        numel *= (uint64_t)dims[d];
    }
    if (empty) numel = 0;
    *why = "a constant's data";
    if (dt == LTF_DTYPE_STRING) {
        if (numel > left / 4) return NULL;
        ltf_tensor *t = ltf_tensor_new(ctx, LTF_DTYPE_STRING, rank, dims);
        if (!t) {
            *why = NULL;
            return NULL;
        }
        ltf_string **S = LTF_DATA(t);
        for (uint64_t k = 0; k < numel; k++) {
            size_t len;
            const char *s = get_str(r, &len);
            if (r->bad) {
                ltf_tensor_release(t);
                return NULL;
            }
            if (len) {
                S[k] = ltf_string_new(s, len);
                if (!S[k]) {
                    ltf_fail_oom(ctx, "saved_model.load", len);
                    ltf_tensor_release(t);
                    *why = NULL;
                    return NULL;
                }
            }
        }
        return t;
    }
    uint64_t nbytes = get_u64(r);
    if (r->bad || numel > left || nbytes != numel * ltf_dtype_size((ltf_dtype)dt) || !need(r, nbytes)) return NULL;
    ltf_tensor *t = ltf_tensor_new(ctx, (ltf_dtype)dt, rank, dims);
    if (!t) {
        *why = NULL;
        return NULL;
    }
    if (nbytes) memcpy(LTF_DATA(t), r->p + r->at, nbytes);
    r->at += nbytes;
    if (dt == LTF_DTYPE_BOOL) {
        unsigned char *b = LTF_DATA(t);
        for (uint64_t k = 0; k < nbytes; k++) b[k] = b[k] != 0;
    }
    return t;
}

static ltf_status read_graph(load_state *L, rd *r, int gi) {
    ltf_ctx *ctx = L->ctx;
    pgraph *pg = &L->graphs[gi];
    size_t len;
    const char *name = get_str(r, &len);
    snprintf(pg->name, sizeof pg->name, "%.*s", (int)(len < 63 ? len : 63), name);
    for (char *c = pg->name; *c; c++)
        if ((unsigned char)*c < 0x20) *c = '_';
    pg->function = get_u8(r) != 0;
    uint32_t n = get_u32(r);
    if (r->bad || n > SM_MAX_NODES || n > (r->n - r->at)) return corrupt(ctx, L->what, r, "a graph's node count");
    pg->nodes = calloc((size_t)n + 1, sizeof *pg->nodes);
    if (!pg->nodes) return ltf_fail_oom(ctx, "saved_model.load", 0);
    pg->n = (int)n;
    for (uint32_t i = 0; i < n; i++) {
        pnode *nd = &pg->nodes[i];
        nd->kind = (int)get_u8(r);
        nd->var = -1;
        nd->op = -1;
        if (nd->kind == LTF_NODE_PLACEHOLDER) {
            char *s = dup_str(r, 1000);
            if (!s) return r->bad ? corrupt(ctx, L->what, r, "a placeholder's name") : ltf_fail_oom(ctx, "load", 0);
            snprintf(nd->name, sizeof nd->name, "%s", s);
            free(s);
            unsigned dt = get_u8(r);
            if (dt >= LTF_DTYPE_COUNT || !read_shape(r, &nd->type.rank, nd->type.dims, 1))
                return corrupt(ctx, L->what, r, "a placeholder's type");
            nd->type.dtype = (ltf_dtype)dt;
        } else if (nd->kind == LTF_NODE_CONST) {
            unsigned sub = get_u8(r);
            if (sub == 1) {
                uint32_t v = get_u32(r);
                if (r->bad || v >= (uint32_t)L->nvars)
                    return corrupt(ctx, L->what, r, "a variable reference");
                nd->var = (int)v;
            } else if (sub == 0) {
                const char *why;
                nd->value = read_const(L, r, &why);
                if (!nd->value) return why ? corrupt(ctx, L->what, r, why) : ctx->last_status;
            } else {
                return corrupt(ctx, L->what, r, "a constant's kind");
            }
        } else if (nd->kind == LTF_NODE_OP) {
            char *opname = dup_str(r, 200);
            if (!opname) return r->bad ? corrupt(ctx, L->what, r, "an op name") : ltf_fail_oom(ctx, "load", 0);
            nd->op = ltf_op_lookup(opname);
            if (nd->op < 0) {
                ltf_status st = ltf_fail(ctx, LTF_ERR_UNIMPLEMENTED,
                                         "saved_model.load: '%s': graph '%s' uses op '%s', which this luatf (%s) "
                                         "does not have", L->what, pg->name, opname, ltf_version());
                free(opname);
                return st;
            }
            free(opname);
            uint32_t nout = get_u32(r);
            if (r->bad || nout > 65536) return corrupt(ctx, L->what, r, "an op's output count");
            nd->nout = (int)nout;
            uint32_t nin = get_u32(r);
            if (r->bad || nin > (r->n - r->at) / 8) return corrupt(ctx, L->what, r, "an op's input count");
            nd->nin = (int)nin;
            nd->in = malloc(sizeof *nd->in * 2 * ((size_t)nin + 1));
            if (!nd->in) return ltf_fail_oom(ctx, "saved_model.load", 0);
            for (uint32_t k = 0; k < nin; k++) {
                nd->in[2 * k] = get_u32(r);
                nd->in[2 * k + 1] = get_u32(r);
                if (nd->in[2 * k] >= i) return corrupt(ctx, L->what, r, "an input that is not an earlier node");
            }
            nd->has_attrs = get_u8(r);
            if (nd->has_attrs > 1) return corrupt(ctx, L->what, r, "an op's attribute flag");
            ltf_attrs_init(&nd->attrs);
            if (nd->has_attrs) {
                ltf_attrs *a = &nd->attrs;
                a->nints = (int)get_u32(r);
                if (a->nints < -1 || a->nints > LTF_ATTR_LIST_MAX) return corrupt(ctx, L->what, r, "an attribute list");
                for (int k = 0; k < a->nints; k++) a->ints[k] = (int64_t)get_u64(r);
                a->nints2 = (int)get_u32(r);
                if (a->nints2 < -1 || a->nints2 > LTF_ATTR_LIST_MAX)
                    return corrupt(ctx, L->what, r, "an attribute list");
                for (int k = 0; k < a->nints2; k++) a->ints2[k] = (int64_t)get_u64(r);
                for (int k = 0; k < 4; k++) a->i[k] = (int64_t)get_u64(r);
                for (int k = 0; k < 4; k++) a->f[k] = get_f64(r);
                if (need(r, LTF_ATTR_STR_MAX)) {
                    memcpy(a->s, r->p + r->at, LTF_ATTR_STR_MAX);
                    r->at += LTF_ATTR_STR_MAX;
                }
                a->s[LTF_ATTR_STR_MAX - 1] = '\0';
            }
            nd->nfn = (int)get_u8(r);
            int want = nd->op == LTF_OP_COND || nd->op == LTF_OP_WHILE ? 2 : nd->op == LTF_OP_CUSTOM_GRADIENT ? 1 : 0;
            if (nd->nfn != want) return corrupt(ctx, L->what, r, "a control-flow node's functions");
            for (int k = 0; k < nd->nfn; k++) {
                uint32_t f = get_u32(r);
                if (f >= (uint32_t)gi) return corrupt(ctx, L->what, r, "a function that is not an earlier graph");
                nd->fn[k] = (int)f;
            }
            if (want && !nd->has_attrs) return corrupt(ctx, L->what, r, "a control-flow node without attributes");
        } else {
            return corrupt(ctx, L->what, r, "a node's kind");
        }
        if (r->bad) return corrupt(ctx, L->what, r, "a node");
    }
    uint32_t nout = get_u32(r);
    if (r->bad || nout > (r->n - r->at) / 8) return corrupt(ctx, L->what, r, "a graph's output count");
    pg->outs = malloc(sizeof *pg->outs * 2 * ((size_t)nout + 1));
    if (!pg->outs) return ltf_fail_oom(ctx, "saved_model.load", 0);
    pg->nout = (int)nout;
    for (uint32_t k = 0; k < nout; k++) {
        pg->outs[2 * k] = get_u32(r);
        pg->outs[2 * k + 1] = get_u32(r);
        if (pg->outs[2 * k] >= n) return corrupt(ctx, L->what, r, "a graph output");
    }
    return r->bad ? corrupt(ctx, L->what, r, "a graph") : LTF_OK;
}

/* Rebuild parsed graph 'gi' by replaying its nodes: a finished graph in '*out'. */
static ltf_status build_graph(load_state *L, int gi, int depth, ltf_graph **out) {
    ltf_ctx *ctx = L->ctx;
    const pgraph *pg = &L->graphs[gi];
    *out = NULL;
    if (depth > 64)
        return ltf_fail(ctx, LTF_ERR_DATA_LOSS, "saved_model.load: '%s': control flow nested deeper than 64", L->what);
    ltf_graph *outer = ltf_graph_suspend(ctx);   /* a function is built apart, then run by its node */
    ltf_graph *g = pg->function ? ltf_graph_begin_function(ctx, pg->name) : ltf_graph_begin(ctx, pg->name);
    ltf_tensor ***vals = calloc((size_t)pg->n + 1, sizeof *vals);
    int *nvals = calloc((size_t)pg->n + 1, sizeof *nvals);
    ltf_tensor **ins = NULL, **outs = NULL;
    ltf_status st = LTF_OK;
    if (!g || !vals || !nvals) {
        st = g ? ltf_fail_oom(ctx, "saved_model.load", 0) : ctx->last_status;
        goto done;
    }
    for (int i = 0; i < pg->n && st == LTF_OK; i++) {
        const pnode *nd = &pg->nodes[i];
        if (nd->kind == LTF_NODE_PLACEHOLDER) {
            vals[i] = calloc(1, sizeof **vals);
            if (!vals[i]) {
                st = ltf_fail_oom(ctx, "saved_model.load", 0);
                break;
            }
            vals[i][0] = ltf_graph_placeholder(ctx, g, nd->type.dtype, nd->type.rank, nd->type.dims, nd->name);
            if (!vals[i][0]) st = ctx->last_status;
            else nvals[i] = 1;
            continue;
        }
        if (nd->kind == LTF_NODE_CONST) {
            vals[i] = calloc(1, sizeof **vals);
            if (!vals[i]) {
                st = ltf_fail_oom(ctx, "saved_model.load", 0);
                break;
            }
            vals[i][0] = ltf_tensor_retain(nd->var >= 0 ? L->vars[nd->var] : nd->value);
            nvals[i] = 1;
            continue;
        }
        free(ins);
        ins = malloc(sizeof *ins * ((size_t)nd->nin + 1));
        int maxout = nd->nout;
        vals[i] = calloc((size_t)maxout + 1, sizeof **vals);
        if (!ins || !vals[i]) {
            st = ltf_fail_oom(ctx, "saved_model.load", 0);
            break;
        }
        for (int k = 0; k < nd->nin; k++) {
            uint32_t src = nd->in[2 * k], o = nd->in[2 * k + 1];
            if (o >= (uint32_t)nvals[src]) {
                st = ltf_fail(ctx, LTF_ERR_DATA_LOSS,
                              "saved_model.load: '%s': graph '%s': input %d of node %d (%s) reads output %u of a "
                              "node with %d", L->what, pg->name, k + 1, i, ltf_op_name(nd->op), o, nvals[src]);
                break;
            }
            ins[k] = vals[src][o];
        }
        if (st != LTF_OK) break;
        int nout = 0;
        if (nd->nfn > 0) {
            ltf_graph *f[2] = {NULL, NULL};
            int64_t id[2] = {0, 0};
            for (int k = 0; k < nd->nfn && st == LTF_OK; k++) {
                st = build_graph(L, nd->fn[k], depth + 1, &f[k]);
                if (st == LTF_OK) {
                    id[k] = ltf_fn_add(ctx, f[k]);
                    if (!id[k]) st = ctx->last_status;
                }
            }
            if (st == LTF_OK) {
                ltf_attrs a = nd->attrs;
                a.i[0] = id[0];
                if (nd->nfn == 2) a.i[1] = id[1];
                st = ltf_op_run(ctx, nd->op, ins, nd->nin, &a, vals[i], maxout, &nout);
            }
            for (int k = 0; k < 2; k++) {
                if (id[k]) ltf_fn_unuse(ctx, id[k]);
                ltf_graph_release(f[k]);
            }
        } else {
            st = ltf_op_run(ctx, nd->op, ins, nd->nin, nd->has_attrs ? &nd->attrs : NULL, vals[i], maxout, &nout);
        }
        nvals[i] = nout;
        if (st == LTF_OK && nd->nfn == 0) {
            /* a node of constants only is evaluated when the graph ends (constant
            ** folding): a hostile file must not make it allocate without bound */
            int all_const = 1;
            for (int k = 0; k < nd->nin; k++) all_const &= ins[k]->storage != NULL;
            for (int k = 0; all_const && k < nout && st == LTF_OK; k++) {
                const ltf_tensor *o = vals[i][k];
                int64_t numel = ltf_tensor_num_elements(o);
                size_t es = ltf_dtype_size(o->dtype) ? ltf_dtype_size(o->dtype) : 8;
                if (numel > (int64_t)(LTF_SAVED_MODEL_MAX_CONSTANT / es))
                    st = ltf_fail(ctx, LTF_ERR_RESOURCE_EXHAUSTED,
                                  "saved_model.load: '%s': graph '%s', node %d (%s) would make a constant of %lld "
                                  "elements at load (at most %llu bytes)", L->what, pg->name, i,
                                  ltf_op_name(nd->op), (long long)numel,
                                  (unsigned long long)LTF_SAVED_MODEL_MAX_CONSTANT);
            }
            if (st != LTF_OK) {
                for (int k = 0; k < nout; k++) {
                    ltf_tensor_release(vals[i][k]);
                    vals[i][k] = NULL;
                }
                nvals[i] = 0;
                break;
            }
        }
        if (st == LTF_OK && nout != nd->nout)
            st = ltf_fail(ctx, LTF_ERR_DATA_LOSS, "%s gave %d outputs, the file says %d", ltf_op_name(nd->op), nout,
                          nd->nout);
        if (st != LTF_OK) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", ltf_ctx_error(ctx));
            st = ltf_fail(ctx, st, "saved_model.load: '%s': graph '%s', node %d: %s", L->what, pg->name, i, msg);
        }
    }
    if (st == LTF_OK) {
        outs = malloc(sizeof *outs * ((size_t)pg->nout + 1));
        if (!outs) st = ltf_fail_oom(ctx, "saved_model.load", 0);
        for (int k = 0; k < pg->nout && st == LTF_OK; k++) {
            uint32_t src = pg->outs[2 * k], o = pg->outs[2 * k + 1];
            if (o >= (uint32_t)nvals[src])
                st = ltf_fail(ctx, LTF_ERR_DATA_LOSS, "saved_model.load: '%s': graph '%s': output %d is not a value",
                              L->what, pg->name, k + 1);
            else
                outs[k] = vals[src][o];
        }
    }
    if (st == LTF_OK) {
        if (pg->function && ltf_graph_num_captured(g) > 0)
            st = ltf_fail(ctx, LTF_ERR_DATA_LOSS, "saved_model.load: '%s': function '%s' reads values it was not given",
                          L->what, pg->name);
        else
            st = ltf_graph_end(ctx, g, outs, pg->nout);
    }
done:
    if (st != LTF_OK && g) {
        ltf_graph_abort(ctx, g);
        ltf_graph_release(g);
        g = NULL;
    }
    for (int i = 0; vals && i < pg->n; i++) {
        for (int k = 0; vals[i] && k < nvals[i]; k++) ltf_tensor_release(vals[i][k]);
        free(vals[i]);
    }
    free(vals);
    free(nvals);
    free(ins);
    free(outs);
    ltf_graph_resume(ctx, outer);
    *out = g;
    return st;
}

void ltf_saved_model_free(ltf_saved_model *m) {
    if (!m) return;
    for (int k = 0; k < m->nvars; k++) {
        ltf_tensor_release(m->vars[k]);
        free(m->var_names[k]);
    }
    free(m->vars);
    free(m->var_names);
    for (int k = 0; k < m->nfns; k++) {
        sm_fn *f = &m->fns[k];
        free(f->name);
        for (int i = 0; f->in_names && i < f->nin; i++) free(f->in_names[i]);
        for (int i = 0; f->out_names && i < f->nout; i++) free(f->out_names[i]);
        free(f->in_names);
        free(f->out_names);
        free(f->meta);
        ltf_graph_release(f->g);
    }
    free(m->fns);
    ltf_ctx_release(m->ctx);
    free(m);
}

static ltf_status load_vars(load_state *L, ltf_saved_model *m, rd *r, const ltf_ckpt_file *vf) {
    ltf_ctx *ctx = L->ctx;
    uint32_t want_crc = get_u32(r);
    uint32_t n = get_u32(r);
    if (r->bad || n > (r->n - r->at) / 8) return corrupt(ctx, L->what, r, "the variable count");
    uint32_t have_crc;
    if (vf && ltf_ckpt_verified(vf) && header_crc(vf, &have_crc) && have_crc != want_crc)
        return ltf_fail(ctx, LTF_ERR_DATA_LOSS,
                        "saved_model.load: '%s' and its %s come from different saves (the variables file's "
                        "checksum is %08x, the graph file expects %08x)", L->what, SM_VARS_FILE, have_crc, want_crc);
    m->vars = calloc((size_t)n + 1, sizeof *m->vars);
    m->var_names = calloc((size_t)n + 1, sizeof *m->var_names);
    ltf_ckpt_span *spans = calloc((size_t)n + 1, sizeof *spans);
    ltf_tensor **vals = calloc((size_t)n + 1, sizeof *vals);
    int *train = calloc((size_t)n + 1, sizeof *train);
    ltf_status st = LTF_OK;
    if (!m->vars || !m->var_names || !spans || !vals || !train) {
        st = ltf_fail_oom(ctx, "saved_model.load", 0);
        goto done;
    }
    for (uint32_t k = 0; k < n; k++) {
        m->var_names[k] = dup_str(r, SM_MAX_NAME);
        unsigned dt = get_u8(r);
        train[k] = get_u8(r) != 0;
        int rank;
        int64_t dims[LTF_MAX_RANK];
        if (!m->var_names[k] || dt >= LTF_DTYPE_COUNT || !st_dtype((ltf_dtype)dt) || !read_shape(r, &rank, dims, 0)) {
            st = r->bad || m->var_names[k] ? corrupt(ctx, L->what, r, "a variable's entry")
                                            : ltf_fail_oom(ctx, "saved_model.load", 0);
            goto done;
        }
        uint64_t begin = get_u64(r);
        if (r->bad) {
            st = corrupt(ctx, L->what, r, "a variable's entry");
            goto done;
        }
        if (!vf) {
            st = ltf_fail(ctx, LTF_ERR_NOT_FOUND, "saved_model.load: '%s' has %u variables but no variables file (%s)",
                          L->what, n, SM_VARS_FILE);
            goto done;
        }
        vals[k] = ltf_ckpt_read(ctx, vf, (ltf_dtype)dt, rank, dims, begin);
        if (!vals[k]) {
            char msg[400];
            snprintf(msg, sizeof msg, "%s", ltf_ctx_error(ctx));
            st = ltf_fail(ctx, LTF_ERR_DATA_LOSS, "saved_model.load: variable '%s': %s", m->var_names[k], msg);
            goto done;
        }
        spans[k].begin = begin;
        spans[k].bytes = (uint64_t)ltf_shape_numel(rank, dims) * ltf_dtype_size((ltf_dtype)dt);
        spans[k].end = begin + spans[k].bytes;
    }
    if (n > 0 && (st = ltf_ckpt_check_layout(ctx, vf, spans, (int)n)) != LTF_OK) goto done;
    for (uint32_t k = 0; k < n; k++) {
        m->vars[k] = ltf_variable_new(ctx, vals[k], m->var_names[k], train[k], -2, NULL);
        if (!m->vars[k]) {
            st = ctx->last_status;
            goto done;
        }
        m->nvars = (int)k + 1;
    }
    m->nvars = (int)n;
done:
    if (st != LTF_OK) {
        for (uint32_t k = 0; m->var_names && k < n; k++) {
            if (m->vars && m->vars[k]) ltf_tensor_release(m->vars[k]);
            free(m->var_names[k]);
        }
        free(m->vars);
        free(m->var_names);
        m->vars = NULL;
        m->var_names = NULL;
        m->nvars = 0;
    }
    for (uint32_t k = 0; vals && k < n; k++) ltf_tensor_release(vals[k]);
    free(vals);
    free(spans);
    free(train);
    return st;
}

ltf_saved_model *ltf_saved_model_load_memory(ltf_ctx *ctx, const void *bytes, size_t nbytes,
                                             const ltf_ckpt_file *variables, const char *what) {
    if (!what) what = SM_GRAPH_FILE;
    const unsigned char *p = bytes;
    if (!p || nbytes < SM_HEAD || memcmp(p, SM_MAGIC, 8) != 0) {
        ltf_fail(ctx, LTF_ERR_DATA_LOSS, "saved_model.load: '%s' is not a luatf SavedModel graph file (no '%s' marker)",
                 what, SM_MAGIC);
        return NULL;
    }
    uint32_t version = (uint32_t)p[8] | (uint32_t)p[9] << 8 | (uint32_t)p[10] << 16 | (uint32_t)p[11] << 24;
    if (version != LTF_SAVED_MODEL_VERSION) {
        ltf_fail(ctx, version > LTF_SAVED_MODEL_VERSION ? LTF_ERR_UNIMPLEMENTED : LTF_ERR_DATA_LOSS,
                 "saved_model.load: '%s' has graph format version %u; this luatf reads version %d%s", what, version,
                 LTF_SAVED_MODEL_VERSION,
                 version > LTF_SAVED_MODEL_VERSION ? " (the file was written by a newer luatf)" : "");
        return NULL;
    }
    uint32_t crc = (uint32_t)p[12] | (uint32_t)p[13] << 8 | (uint32_t)p[14] << 16 | (uint32_t)p[15] << 24;
    uint64_t plen = 0;
    for (int k = 0; k < 8; k++) plen |= (uint64_t)p[16 + k] << (8 * k);
    if (plen != nbytes - SM_HEAD) {
        ltf_fail(ctx, LTF_ERR_DATA_LOSS, "saved_model.load: '%s' is truncated or has trailing bytes (%llu bytes of "
                 "graphs expected, %zu present)", what, (unsigned long long)plen, nbytes - SM_HEAD);
        return NULL;
    }
    if (ltf_crc32c(0, p + 16, nbytes - 16) != crc) {
        ltf_fail(ctx, LTF_ERR_DATA_LOSS, "saved_model.load: '%s' is corrupted (checksum mismatch)", what);
        return NULL;
    }
    rd r = {p + SM_HEAD, nbytes - SM_HEAD, 0, 0};
    ltf_saved_model *m = calloc(1, sizeof *m);
    if (!m) {
        ltf_fail_oom(ctx, "saved_model.load", sizeof *m);
        return NULL;
    }
    m->ctx = ctx;
    ltf_ctx_retain(ctx);
    load_state L = {ctx, what, 0, NULL, 0, NULL};
    ltf_status st = load_vars(&L, m, &r, variables);
    if (st != LTF_OK) goto fail;
    L.nvars = m->nvars;
    L.vars = m->vars;
    uint32_t ng = get_u32(&r);
    if (r.bad || ng > SM_MAX_GRAPHS || ng > r.n - r.at) {
        st = corrupt(ctx, what, &r, "the graph count");
        goto fail;
    }
    L.graphs = calloc((size_t)ng + 1, sizeof *L.graphs);
    if (!L.graphs) {
        st = ltf_fail_oom(ctx, "saved_model.load", 0);
        goto fail;
    }
    L.ngraphs = (int)ng;
    for (uint32_t k = 0; k < ng; k++)
        if ((st = read_graph(&L, &r, (int)k)) != LTF_OK) goto fail;
    uint32_t nf = get_u32(&r);
    if (r.bad || nf > r.n - r.at) {
        st = corrupt(ctx, what, &r, "the function count");
        goto fail;
    }
    m->fns = calloc((size_t)nf + 1, sizeof *m->fns);
    if (!m->fns) {
        st = ltf_fail_oom(ctx, "saved_model.load", 0);
        goto fail;
    }
    m->nfns = (int)nf;
    for (uint32_t k = 0; k < nf; k++) {
        sm_fn *f = &m->fns[k];
        f->name = dup_str(&r, SM_MAX_NAME);
        f->signature = get_u8(&r) != 0;
        uint32_t gi = get_u32(&r);
        uint32_t nin = get_u32(&r);
        if (!f->name || r.bad || gi >= ng || L.graphs[gi].function || nin > r.n - r.at) {
            st = corrupt(ctx, what, &r, "a function's entry");
            goto fail;
        }
        f->graph = (int)gi;
        f->in_names = calloc((size_t)nin + 1, sizeof *f->in_names);
        if (!f->in_names) goto oom;
        f->nin = (int)nin;
        for (uint32_t i = 0; i < nin; i++)
            if (!(f->in_names[i] = dup_str(&r, SM_MAX_NAME))) goto bad_entry;
        uint32_t nout = get_u32(&r);
        if (r.bad || nout > r.n - r.at) goto bad_entry;
        f->out_names = calloc((size_t)nout + 1, sizeof *f->out_names);
        if (!f->out_names) goto oom;
        f->nout = (int)nout;
        for (uint32_t i = 0; i < nout; i++)
            if (!(f->out_names[i] = dup_str(&r, SM_MAX_NAME))) goto bad_entry;
        size_t ml;
        const char *meta = get_str(&r, &ml);
        if (r.bad) goto bad_entry;
        f->meta = malloc(ml + 1);
        if (!f->meta) goto oom;
        memcpy(f->meta, meta, ml);
        f->meta[ml] = '\0';
        f->nmeta = ml;
        for (uint32_t j = 0; j < k; j++)
            if (strcmp(m->fns[j].name, f->name) == 0) goto bad_entry;
    }
    size_t pl;
    get_str(&r, &pl);   /* producer */
    if (r.bad || r.at != r.n) {
        st = corrupt(ctx, what, &r, "the trailer");
        goto fail;
    }
    for (int k = 0; k < m->nfns; k++) {
        sm_fn *f = &m->fns[k];
        for (int j = 0; j < k && !f->g; j++)
            if (m->fns[j].graph == f->graph) f->g = ltf_graph_retain(m->fns[j].g);
        if (!f->g && (st = build_graph(&L, f->graph, 0, &f->g)) != LTF_OK) goto fail;
        if (ltf_graph_num_inputs(f->g) != f->nin || ltf_graph_num_outputs(f->g) != f->nout) {
            st = ltf_fail(ctx, LTF_ERR_DATA_LOSS, "saved_model.load: '%s': function '%s' names %d inputs and %d "
                          "outputs, its graph has %d and %d", what, f->name, f->nin, f->nout,
                          ltf_graph_num_inputs(f->g), ltf_graph_num_outputs(f->g));
            goto fail;
        }
    }
    free_pgraphs(L.graphs, L.ngraphs);
    return m;
bad_entry:
    st = corrupt(ctx, what, &r, "a function's entry");
    goto fail;
oom:
    st = ltf_fail_oom(ctx, "saved_model.load", 0);
fail:
    (void)st;
    free_pgraphs(L.graphs, L.ngraphs);
    ltf_saved_model_free(m);
    return NULL;
}

static unsigned char *read_whole(ltf_ctx *ctx, const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        ltf_fail(ctx, errno == ENOENT || errno == ENOTDIR ? LTF_ERR_NOT_FOUND : LTF_ERR_INVALID_ARGUMENT,
                 "saved_model.load: cannot open '%s': %s", path, strerror(errno));
        return NULL;
    }
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            unsigned char *b = realloc(buf, cap);
            if (!b) {
                free(buf);
                fclose(f);
                ltf_fail_oom(ctx, "saved_model.load", cap);
                return NULL;
            }
            buf = b;
        }
        size_t k = fread(buf + len, 1, cap - len, f);
        len += k;
        if (k == 0) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        ltf_fail(ctx, LTF_ERR_DATA_LOSS, "saved_model.load: cannot read '%s'", path);
        return NULL;
    }
    *n = len;
    return buf;
}

ltf_saved_model *ltf_saved_model_load(ltf_ctx *ctx, const char *dir) {
    char path[4096], vpath[4096];
    if (!dir || !path_join(path, sizeof path, dir, SM_GRAPH_FILE) || !path_join(vpath, sizeof vpath, dir, SM_VARS_FILE)) {
        ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "saved_model.load: missing or too long directory name");
        return NULL;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        ltf_fail(ctx, LTF_ERR_NOT_FOUND, "saved_model.load: SavedModel directory '%s' does not exist", dir);
        return NULL;
    }
    size_t n = 0;
    unsigned char *bytes = read_whole(ctx, path, &n);
    if (!bytes) return NULL;
    ltf_ckpt_file *vf = NULL;
    if (stat(vpath, &sb) == 0) {
        vf = ltf_ckpt_open(ctx, vpath);
        if (!vf) {
            free(bytes);
            return NULL;
        }
        if (!ltf_ckpt_verified(vf)) {
            ltf_ckpt_close(vf);
            free(bytes);
            ltf_fail(ctx, LTF_ERR_DATA_LOSS, "saved_model.load: '%s' is not a luatf checkpoint file", vpath);
            return NULL;
        }
    }
    ltf_saved_model *m = ltf_saved_model_load_memory(ctx, bytes, n, vf, path);
    ltf_ckpt_close(vf);
    free(bytes);
    return m;
}

int ltf_saved_model_num_functions(const ltf_saved_model *m) { return m ? m->nfns : 0; }
static const sm_fn *fn_at(const ltf_saved_model *m, int k) { return m && k >= 0 && k < m->nfns ? &m->fns[k] : NULL; }
const char *ltf_saved_model_function_name(const ltf_saved_model *m, int k) {
    const sm_fn *f = fn_at(m, k);
    return f ? f->name : NULL;
}
int ltf_saved_model_function_is_signature(const ltf_saved_model *m, int k) {
    const sm_fn *f = fn_at(m, k);
    return f ? f->signature : 0;
}
ltf_graph *ltf_saved_model_function_graph(const ltf_saved_model *m, int k) {
    const sm_fn *f = fn_at(m, k);
    return f ? f->g : NULL;
}
int ltf_saved_model_find(const ltf_saved_model *m, const char *name) {
    for (int k = 0; m && name && k < m->nfns; k++)
        if (strcmp(m->fns[k].name, name) == 0) return k;
    return -1;
}
int ltf_saved_model_num_inputs(const ltf_saved_model *m, int k) {
    const sm_fn *f = fn_at(m, k);
    return f ? f->nin : 0;
}
int ltf_saved_model_num_outputs(const ltf_saved_model *m, int k) {
    const sm_fn *f = fn_at(m, k);
    return f ? f->nout : 0;
}
const char *ltf_saved_model_input_name(const ltf_saved_model *m, int k, int i) {
    const sm_fn *f = fn_at(m, k);
    return f && i >= 0 && i < f->nin ? f->in_names[i] : NULL;
}
const char *ltf_saved_model_output_name(const ltf_saved_model *m, int k, int i) {
    const sm_fn *f = fn_at(m, k);
    return f && i >= 0 && i < f->nout ? f->out_names[i] : NULL;
}
const char *ltf_saved_model_function_meta(const ltf_saved_model *m, int k, size_t *len) {
    const sm_fn *f = fn_at(m, k);
    if (len) *len = f ? f->nmeta : 0;
    return f ? f->meta : NULL;
}
int ltf_saved_model_num_variables(const ltf_saved_model *m) { return m ? m->nvars : 0; }
ltf_tensor *ltf_saved_model_variable(const ltf_saved_model *m, int k) {
    return m && k >= 0 && k < m->nvars ? m->vars[k] : NULL;
}

ltf_status ltf_saved_model_call(ltf_ctx *ctx, const ltf_saved_model *m, const char *name, ltf_tensor *const *inputs,
                                int ninputs, ltf_tensor **outputs, int maxout, int *noutputs) {
    if (noutputs) *noutputs = 0;
    if (!m) return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "saved_model_call: no model");
    int k = ltf_saved_model_find(m, name ? name : "serving_default");
    if (k < 0) {
        char names[512];
        size_t at = 0;
        names[0] = '\0';
        for (int j = 0; j < m->nfns && at < sizeof names - 1; j++) {
            int w = snprintf(names + at, sizeof names - at, "%s'%s'", j ? ", " : "", m->fns[j].name);
            if (w < 0) break;
            at += (size_t)w;
        }
        return ltf_fail(ctx, LTF_ERR_NOT_FOUND, "saved_model_call: no function named '%s' (the model has %s)",
                        name ? name : "serving_default", m->nfns ? names : "none");
    }
    if (ninputs != m->fns[k].nin)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "saved_model_call: '%s' takes %d inputs, got %d",
                        m->fns[k].name, m->fns[k].nin, ninputs);
    if (maxout < m->fns[k].nout)
        return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "saved_model_call: '%s' has %d outputs, room for %d",
                        m->fns[k].name, m->fns[k].nout, maxout);
    int n = 0;
    ltf_status st = ltf_graph_run(ctx, m->fns[k].g, inputs, ninputs, outputs, maxout, &n);
    if (noutputs) *noutputs = n;
    return st;
}
/* }==== */
