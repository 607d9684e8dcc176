/*
** tape.c: gradient tapes. While a tape records, every eager op whose
** inputs it tracks is appended (inputs and outputs retained) and its
** floating outputs become tracked. gradient() walks the entries backwards
** calling each op's gradient function (built from ops, so outer tapes
** record the backward pass: higher-order gradients). Custom gradients
** (tf.custom_gradient) are entries with a host callback.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "grad.h"
#include "variable.h"
#include "idmap.h"
#include "op.h"
#include "shape.h"

typedef struct custom_grad {
    int32_t refs;
    ltf_custom_grad_fn fn;
    void *ud;
    void (*free_ud)(void *);
} custom_grad;

typedef struct tape_entry {
    ltf_op_id op;              /* -1 for a custom entry */
    ltf_attrs *attrs;          /* NULL: default attributes */
    int nin, nout;
    ltf_tensor **in, **out;    /* retained */
    custom_grad *custom;
} tape_entry;

struct ltf_tape {
    int32_t refs;
    ltf_ctx *ctx;
    ltf_tape *outer;           /* next tape in the context's active stack */
    int persistent, watch_accessed, recording, used, computing;
    ltf_idmap tracked;         /* ids whose gradient this tape can compute */
    tape_entry *entries;
    size_t n, cap;
    char stop[96];             /* ltf_tape_gradient_stop: the last gradient call's first dead end */
};

static int is_differentiable_dtype(ltf_dtype dt) {
    return dt == LTF_DTYPE_FLOAT32 || dt == LTF_DTYPE_FLOAT64 || dt == LTF_DTYPE_RESOURCE || ltf_dtype_is_half(dt);
}

static ltf_status record_hook(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_tensor *const *out, int nout);

static void update_hook(ltf_ctx *ctx) {
    ctx->tape_record = (ctx->tape && ctx->tapes_paused == 0) ? record_hook : NULL;
}

ltf_tape *ltf_tape_new(ltf_ctx *ctx, int persistent, int watch_accessed_variables) {
    ltf_tape *t = calloc(1, sizeof *t);
    if (!t) {
        ltf_fail_oom(ctx, "tape", sizeof *t);
        return NULL;
    }
    t->refs = 1;
    t->ctx = ctx;
    ltf_ctx_retain(ctx);
    t->persistent = persistent;
    t->watch_accessed = watch_accessed_variables;
    ltf_idmap_init(&t->tracked);
    return t;
}

static void custom_release(custom_grad *c) {
    if (c && --c->refs == 0) {
        if (c->free_ud) c->free_ud(c->ud);
        free(c);
    }
}

static void clear_entries(ltf_tape *t) {
    for (size_t i = 0; i < t->n; i++) {
        tape_entry *e = &t->entries[i];
        for (int k = 0; k < e->nin; k++) ltf_tensor_release(e->in[k]);
        for (int k = 0; k < e->nout; k++) ltf_tensor_release(e->out[k]);
        free(e->in);
        free(e->attrs);
        custom_release(e->custom);
    }
    free(t->entries);
    t->entries = NULL;
    t->n = t->cap = 0;
}

/* {==== Re-entrancy
** ltf_tape_gradient walks the tape's entries while gradient functions run,
** and custom ones call back into the host, which may reach the same tape.
** While 't->computing', calls that would free or reuse those entries
** refuse; recording skips the tape (its entries stay as they are). */
static ltf_status busy(ltf_ctx *ctx, const ltf_tape *t, const char *call) {
    if (!t->computing) return LTF_OK;
    return ltf_fail(ctx, LTF_ERR_RUNTIME,
                    "GradientTape.%s: the tape is computing a gradient (this was called from a gradient "
                    "function it is running); use another tape, or call it after gradient returns", call);
}
/* }==== */

static void reset(ltf_tape *t) {
    clear_entries(t);
    ltf_idmap_free(&t->tracked);
    t->used = 0;
}

ltf_status ltf_tape_reset(ltf_ctx *ctx, ltf_tape *t) {
    ltf_status st = busy(ctx, t, "reset");
    if (st == LTF_OK) reset(t);
    return st;
}

void ltf_tape_pop(ltf_ctx *ctx, ltf_tape *t) {
    for (ltf_tape **p = &ctx->tape; *p; p = &(*p)->outer)
        if (*p == t) {
            *p = t->outer;
            t->outer = NULL;
            t->recording = 0;
            break;
        }
    update_hook(ctx);
}

void ltf_tape_release(ltf_tape *t) {
    if (!t || --t->refs > 0) return;
    ltf_ctx *ctx = t->ctx;
    if (t->recording) ltf_tape_pop(ctx, t);
    reset(t);
    free(t);
    ltf_ctx_release(ctx);
}

ltf_status ltf_tape_push(ltf_ctx *ctx, ltf_tape *t) {
    if (t->recording)
        return ltf_fail(ctx, LTF_ERR_VALUE, "GradientTape: this tape is already recording");
    t->outer = ctx->tape;
    ctx->tape = t;
    t->recording = 1;
    update_hook(ctx);
    return LTF_OK;
}

int ltf_tape_is_recording(const ltf_tape *t) { return t->recording; }

void ltf_ctx_pause_tapes(ltf_ctx *ctx, int pause) {
    ctx->tapes_paused += pause ? 1 : -1;
    if (ctx->tapes_paused < 0) ctx->tapes_paused = 0;
    update_hook(ctx);
}

static int tracked(const ltf_tape *t, int64_t id) {
    int found;
    ltf_idmap_get(&t->tracked, id, &found);
    return found;
}

ltf_status ltf_tape_watch(ltf_ctx *ctx, ltf_tape *t, ltf_tensor *x) {
    if (!is_differentiable_dtype(x->dtype)) return LTF_OK;   /* TF ignores (with a warning) */
    if (ltf_idmap_put(&t->tracked, x->id, x) != 0) return ltf_fail_oom(ctx, "tape", 0);
    return LTF_OK;
}

int ltf_tape_is_watched(const ltf_tape *t, const ltf_tensor *x) { return tracked(t, x->id); }

int ltf_tapes_track(const ltf_ctx *ctx, const ltf_tensor *x) {
    for (const ltf_tape *t = ctx->tape; t; t = t->outer)
        if (t->recording && tracked(t, x->id)) return 1;
    return 0;
}

ltf_status ltf_tape_mark_used(ltf_ctx *ctx, ltf_tape *t) {
    ltf_status st = busy(ctx, t, "gradient");
    if (st != LTF_OK) return st;
    t->used = 1;
    if (!t->persistent) clear_entries(t);
    return LTF_OK;
}

/* {==== Recording */
static ltf_status push_entry(ltf_ctx *ctx, ltf_tape *t, ltf_op_id op, const ltf_attrs *a, ltf_tensor *const *in,
                             int nin, ltf_tensor *const *out, int nout, custom_grad *custom) {
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        tape_entry *e = realloc(t->entries, cap * sizeof *e);
        if (!e) return ltf_fail_oom(ctx, "tape", cap * sizeof *e);
        t->entries = e;
        t->cap = cap;
    }
    tape_entry *e = &t->entries[t->n];
    e->op = op;
    e->nin = nin;
    e->nout = nout;
    e->attrs = NULL;
    e->custom = custom;
    e->in = malloc(sizeof(ltf_tensor *) * (size_t)(nin + nout + 1));
    if (!e->in) return ltf_fail_oom(ctx, "tape", 0);
    e->out = e->in + nin;
    if (a) {
        e->attrs = malloc(sizeof *a);
        if (!e->attrs) {
            free(e->in);
            return ltf_fail_oom(ctx, "tape", sizeof *a);
        }
        memcpy(e->attrs, a, sizeof *a);
    }
    for (int k = 0; k < nin; k++) e->in[k] = ltf_tensor_retain(in[k]);
    for (int k = 0; k < nout; k++) {
        e->out[k] = ltf_tensor_retain(out[k]);
        if (is_differentiable_dtype(out[k]->dtype) && ltf_idmap_put(&t->tracked, out[k]->id, out[k]) != 0)
            return ltf_fail_oom(ctx, "tape", 0);
    }
    if (custom) custom->refs++;
    t->n++;
    return LTF_OK;
}

static ltf_status record_hook(ltf_ctx *ctx, ltf_op_id op, ltf_tensor *const *in, int nin,
                              const ltf_attrs *a, ltf_tensor *const *out, int nout) {
    const ltf_op_def *def = ltf_op_get(op);
    if (def->flags & LTF_OP_NOT_DIFFERENTIABLE) return LTF_OK;
    for (ltf_tape *t = ctx->tape; t; t = t->outer) {
        if (t->computing) continue;
        if (def->flags & LTF_OP_READS_VARIABLE && t->watch_accessed && nin > 0 && ltf_variable_trainable(in[0]))
            if (ltf_tape_watch(ctx, t, in[0]) != LTF_OK) return ctx->last_status;
        int hit = 0;
        for (int k = 0; k < nin && !hit; k++) hit = tracked(t, in[k]->id);
        if (!hit) continue;
        ltf_status st = push_entry(ctx, t, op, a, in, nin, out, nout, NULL);
        if (st != LTF_OK) return st;
    }
    return LTF_OK;
}

ltf_status ltf_tape_record_custom(ltf_ctx *ctx, ltf_tensor *const *in, int nin, ltf_tensor *const *out, int nout,
                                  ltf_custom_grad_fn fn, void *ud, void (*free_ud)(void *)) {
    custom_grad *c = malloc(sizeof *c);
    if (!c) {
        if (free_ud) free_ud(ud);
        return ltf_fail_oom(ctx, "custom gradient", sizeof *c);
    }
    c->refs = 1;
    c->fn = fn;
    c->ud = ud;
    c->free_ud = free_ud;
    ltf_status st = LTF_OK;
    if (ctx->tapes_paused == 0) {
        for (ltf_tape *t = ctx->tape; t && st == LTF_OK; t = t->outer) {
            if (t->computing) continue;
            int hit = 0;
            for (int k = 0; k < nin && !hit; k++) hit = tracked(t, in[k]->id);
            if (hit) st = push_entry(ctx, t, -1, NULL, in, nin, out, nout, c);
        }
    }
    custom_release(c);
    return st;
}
/* }==== */

/* {==== Gradient */
static const ltf_attrs default_attrs = { .nints = -1, .nints2 = -1 };  /* what ops saw for NULL */

static ltf_status accumulate(ltf_ctx *ctx, ltf_idmap *grads, int64_t id, ltf_tensor *g) {
    int found;
    ltf_tensor *old = ltf_idmap_get(grads, id, &found);
    if (old) {
        ltf_tensor *in[2] = { old, g };
        ltf_tensor *sum = ltf_op1(ctx, LTF_OP_ADD, in, 2, NULL);
        ltf_tensor_release(g);
        if (!sum) return ctx->last_status;
        ltf_tensor_release(old);
        g = sum;
    }
    if (ltf_idmap_put(grads, id, g) != 0) {
        ltf_tensor_release(g);
        return ltf_fail_oom(ctx, "gradients", 0);
    }
    return LTF_OK;
}

static void release_all(ltf_idmap *m) {
    for (size_t i = 0; i < m->cap; i++)
        if (m->keys[i]) ltf_tensor_release(m->vals[i]);
    ltf_idmap_free(m);
}

/* Notes the first op (walking back) whose gradient function gave no
** gradient for an input that depends on a source and could carry one:
** what a "no gradients" error should name. */
static void note_stop(ltf_tape *t, const tape_entry *e, const ltf_idmap *reach, ltf_tensor *const *din) {
    if (t->stop[0]) return;
    for (int k = 0; k < e->nin; k++) {
        if (din[k] || !is_differentiable_dtype(e->in[k]->dtype) || !ltf_idmap_get(reach, e->in[k]->id, NULL))
            continue;
        snprintf(t->stop, sizeof t->stop, "op '%s' (input %d: %s)", e->custom ? "custom_gradient" :
                 ltf_op_get(e->op)->name, k + 1, ltf_dtype_name(e->in[k]->dtype));
        return;
    }
}

const char *ltf_tape_gradient_stop(const ltf_tape *t) { return t->stop; }


ltf_status ltf_tape_gradient(ltf_ctx *ctx, ltf_tape *t, ltf_tensor *const *targets, int ntargets,
                             ltf_tensor *const *ograds, ltf_tensor *const *sources, int nsources, int flags,
                             ltf_tensor **result) {
    for (int i = 0; i < nsources; i++) result[i] = NULL;
    ltf_status st = busy(ctx, t, "gradient");
    if (st != LTF_OK) return st;
    if (t->used && !t->persistent)
        return ltf_fail(ctx, LTF_ERR_RUNTIME,
                        "GradientTape.gradient: a non-persistent GradientTape can only be used to compute one set "
                        "of gradients (or jacobians); create it with tf.GradientTape({persistent = true}) to call "
                        "gradient more than once");
    for (int i = 0; i < ntargets && ograds; i++) {
        const ltf_tensor *x = targets[i], *g = ograds[i];
        if (!g) continue;
        if (g->dtype != x->dtype)
            return ltf_fail(ctx, LTF_ERR_TYPE, "GradientTape.gradient: output_gradients[%d] has dtype %s, its "
                            "target has dtype %s", i + 1, ltf_dtype_name(g->dtype), ltf_dtype_name(x->dtype));
        int ok = g->rank < 0 || x->rank < 0 || g->rank == x->rank;
        for (int d = 0; ok && g->rank > 0 && d < g->rank; d++)
            ok = g->dims[d] < 0 || x->dims[d] < 0 || g->dims[d] == x->dims[d];
        if (!ok) {
            char a[LTF_SHAPE_BUF], b[LTF_SHAPE_BUF];
            return ltf_fail(ctx, LTF_ERR_INVALID_ARGUMENT, "GradientTape.gradient: output_gradients[%d] has shape "
                            "%s, its target has shape %s", i + 1, ltf_shape_str(g->rank, g->dims, a, sizeof a),
                            ltf_shape_str(x->rank, x->dims, b, sizeof b));
        }
    }
    ltf_idmap grads, reach, wanted;
    ltf_idmap_init(&grads);
    ltf_idmap_init(&reach);
    ltf_idmap_init(&wanted);
    unsigned char *relevant = NULL;
    t->stop[0] = '\0';
    t->computing = 1;
    t->refs++;                 /* a host callback may drop the caller's reference */

    /* entries on a path from a source */
    for (int i = 0; i < nsources; i++)
        if (ltf_idmap_put(&reach, sources[i]->id, sources[i]) || ltf_idmap_put(&wanted, sources[i]->id, sources[i])) {
            st = ltf_fail_oom(ctx, "gradients", 0);
            goto done;
        }
    relevant = calloc(t->n + 1, 1);
    if (!relevant) {
        st = ltf_fail_oom(ctx, "gradients", t->n);
        goto done;
    }
    for (size_t i = 0; i < t->n; i++) {
        tape_entry *e = &t->entries[i];
        int hit = 0;
        for (int k = 0; k < e->nin && !hit; k++) hit = ltf_idmap_get(&reach, e->in[k]->id, NULL) != NULL;
        if (!hit) continue;
        relevant[i] = 1;
        for (int k = 0; k < e->nout; k++)
            if (ltf_idmap_put(&reach, e->out[k]->id, e->out[k])) {
                st = ltf_fail_oom(ctx, "gradients", 0);
                goto done;
            }
    }

    /* seed the targets */
    for (int i = 0; i < ntargets; i++) {
        ltf_tensor *x = targets[i];
        if (!is_differentiable_dtype(x->dtype) || !ltf_idmap_get(&reach, x->id, NULL)) continue;
        ltf_tensor *g = ograds && ograds[i] ? ltf_tensor_retain(ograds[i]) : ltf_grad_ones_like(ctx, x);
        if (!g) {
            st = ctx->last_status;
            goto done;
        }
        if ((st = accumulate(ctx, &grads, x->id, g)) != LTF_OK) goto done;
    }

    /* walk backwards */
    for (size_t i = t->n; i-- > 0;) {
        if (!relevant[i]) continue;
        tape_entry *e = &t->entries[i];
        ltf_tensor *dout_stack[8], *din_stack[8];
        ltf_tensor **dout = e->nout <= 8 ? dout_stack : malloc(sizeof(ltf_tensor *) * (size_t)e->nout);
        ltf_tensor **din = e->nin <= 8 ? din_stack : malloc(sizeof(ltf_tensor *) * (size_t)e->nin);
        if (!dout || !din) {
            if (dout != dout_stack) free(dout);
            if (din != din_stack) free(din);
            st = ltf_fail_oom(ctx, "gradients", 0);
            goto done;
        }
        int any = 0;
        for (int k = 0; k < e->nout; k++) {
            dout[k] = ltf_idmap_get(&grads, e->out[k]->id, NULL);
            any |= dout[k] != NULL;
        }
        for (int k = 0; k < e->nin; k++) din[k] = NULL;
        uint64_t needed = 0;
        for (int k = 0; k < e->nin; k++)
            if (k >= 64 || ltf_idmap_get(&reach, e->in[k]->id, NULL)) needed |= k < 64 ? (uint64_t)1 << k : 0;
        uint64_t saved_needed = ctx->grad_needed;
        ctx->grad_needed = needed;
        if (any) {
            if (e->custom) {
                st = e->custom->fn(ctx, e->custom->ud, dout, e->nout, din, e->nin);
            } else {
                const ltf_op_def *def = ltf_op_get(e->op);
                if (!def->grad)
                    st = ltf_fail(ctx, LTF_ERR_NOT_FOUND, "gradient: no gradient defined for op '%s'", def->name);
                else
                    st = def->grad(ctx, def, e->in, e->nin, e->attrs ? e->attrs : &default_attrs, e->out,
                                   e->nout, dout, din);
            }
            if (st == LTF_OK) note_stop(t, e, &reach, din);
            for (int k = 0; k < e->nin && st == LTF_OK; k++) {
                if (!din[k]) continue;
                ltf_tensor *g = din[k];
                din[k] = NULL;
                if (!ltf_idmap_get(&reach, e->in[k]->id, NULL)) {
                    ltf_tensor_release(g);
                    continue;
                }
                st = accumulate(ctx, &grads, e->in[k]->id, g);
            }
            for (int k = 0; k < e->nin; k++) ltf_tensor_release(din[k]);
            /* The outputs' gradients are used up: every op reading them
            ** came later on the tape and has run. Free them now (unless a
            ** source asks for them) so that the next gradient ops reuse
            ** their blocks, still in cache, instead of growing the heap. */
            for (int k = 0; k < e->nout; k++) {
                int keep = !dout[k] || ltf_idmap_get(&wanted, e->out[k]->id, NULL) != NULL;
                for (int j = 0; j < e->nin && !keep; j++) keep = e->in[j]->id == e->out[k]->id;
                if (keep) continue;
                ltf_tensor *g = ltf_idmap_get(&grads, e->out[k]->id, NULL);
                if (g && ltf_idmap_put(&grads, e->out[k]->id, NULL) == 0) ltf_tensor_release(g);
            }
        }
        ctx->grad_needed = saved_needed;
        if (dout != dout_stack) free(dout);
        if (din != din_stack) free(din);
        if (st != LTF_OK) goto done;
    }

    for (int i = 0; i < nsources; i++) {
        ltf_tensor *g = ltf_idmap_get(&grads, sources[i]->id, NULL);
        if (g) {
            result[i] = ltf_tensor_retain(g);
        } else if ((flags & LTF_TAPE_UNCONNECTED_ZERO) && sources[i]->dtype != LTF_DTYPE_RESOURCE) {
            result[i] = ltf_grad_zeros_like(ctx, sources[i]);
            if (!result[i]) {
                st = ctx->last_status;
                goto done;
            }
        }
    }
done:
    if (st != LTF_OK)
        for (int i = 0; i < nsources; i++) {
            ltf_tensor_release(result[i]);
            result[i] = NULL;
        }
    free(relevant);
    release_all(&grads);
    ltf_idmap_free(&reach);
    ltf_idmap_free(&wanted);
    t->computing = 0;
    if (!(flags & LTF_TAPE_KEEP)) {
        t->used = 1;
        if (!t->persistent) clear_entries(t);
    }
    ltf_tape_release(t);
    return st;
}
/* }==== */
