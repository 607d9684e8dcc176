/*
** cpu/rnn_impl.h: the fused LSTM / GRU loops of cpu/rnn.c for one element
** type, included once per type with REAL (float, double) and SFX (f32,
** f64) defined. Layouts: x (B, T, I)
** and every per-step buffer indexed [b][t] by real time; outputs (B, T, U)
** in processing order; the workspace rows as ltf_ops/rnn.h says. The
** activations are act_sigmoid_SFX / act_tanh_SFX (cpu/rnn.c).
*/
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

/* Column sums of the (rows, n) matrix 'a' with row stride 'lda' into 'out'. */
static void FN(colsum)(int64_t rows, int64_t n, const REAL *a, int64_t lda, REAL *out) {
    for (int64_t j = 0; j < n; j++) out[j] = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++) out[j] += a[r * lda + j];
}

/* dst (cols, rows) = src (rows, cols) with row stride 'ld'. */
static void FN(transpose)(int64_t rows, int64_t cols, const REAL *src, int64_t ld, REAL *dst) {
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) dst[c * rows + r] = src[r * ld + c];
}

/* The hidden state before each time step, [b][t] (B*T, U): h0 before the
** first step processed, else the state the workspace holds for the step
** processed before (hidden state at column 'hcol' of rows of width 'W'). */
static void FN(hprev)(const rnn_geom *g, const REAL *h0, const REAL *ws, int64_t W, int64_t hcol, REAL *hp) {
    int64_t B = g->B, T = g->T, U = g->U;
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < T; t++) {
            int first = g->back ? t == T - 1 : t == 0;
            const REAL *src = first ? h0 + b * U : ws + (b * T + (g->back ? t + 1 : t - 1)) * W + hcol;
            memcpy(hp + (b * T + t) * U, src, sizeof(REAL) * (size_t)U);
        }
}

/* {==== LSTM */
static ltf_status FN(lstm_fwd)(ltf_ctx *ctx, const rnn_geom *g, const REAL *x, const REAL *h0, const REAL *c0,
                               const REAL *K, const REAL *RK, const REAL *bias, const uint8_t *mask, REAL *y,
                               REAL *hT, REAL *cT, REAL *ws) {
    int64_t B = g->B, T = g->T, I = g->I, U = g->U, G = 4 * U, W = 6 * U;
    ltf_dtype dt = g->dt;
    REAL *yb = calloc((size_t)(B * U + 2 * U) + 1, sizeof(REAL));
    if (!yb) return ltf_fail_oom(ctx, "lstm_sequence scratch", sizeof(REAL) * (size_t)(B * U + 2 * U));
    REAL *cn = yb + B * U, *tc = cn + U;
    memcpy(hT, h0, sizeof(REAL) * (size_t)(B * U));
    memcpy(cT, c0, sizeof(REAL) * (size_t)(B * U));
    ltf_status st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 0, B * T, G, I, 1, x, I, K, G, 0, ws, W);
    for (int64_t s = 0; s < T && st == LTF_OK; s++) {
        int64_t t = g->back ? T - 1 - s : s;
        st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 0, B, G, U, 1, hT, U, RK, G, 1, ws + t * W, T * W);
        if (st != LTF_OK) break;
        for (int64_t b = 0; b < B; b++) {
            REAL *row = ws + (b * T + t) * W, *h = hT + b * U, *c = cT + b * U, *yp = yb + b * U;
            REAL *yo = y + (b * T + s) * U;
            int m = mask ? mask[b * T + t] != 0 : 1;
            for (int64_t j = 0; j < G; j++) row[j] += bias[j];
            FN(act_sigmoid)(row, 2 * U);            /* i, f */
            FN(act_tanh)(row + 2 * U, row + 2 * U, U);
            FN(act_sigmoid)(row + 3 * U, U);        /* o */
            if (m) {
                for (int64_t j = 0; j < U; j++) cn[j] = row[U + j] * c[j] + row[j] * row[2 * U + j];
                FN(act_tanh)(cn, tc, U);
                for (int64_t j = 0; j < U; j++) {
                    c[j] = cn[j];
                    h[j] = yp[j] = row[3 * U + j] * tc[j];
                }
            } else if (g->zero_out) {
                for (int64_t j = 0; j < U; j++) yp[j] = 0;
            }
            memcpy(row + 4 * U, c, sizeof(REAL) * (size_t)U);
            memcpy(row + 5 * U, h, sizeof(REAL) * (size_t)U);
            memcpy(yo, yp, sizeof(REAL) * (size_t)U);
        }
    }
    free(yb);
    return st;
}

/* One row of one step of the LSTM backward pass (an unmasked step): the
** gate pre-activation gradients into 'dz' from the gradients reaching the
** step's h (dh, plus dy and the carried output gradient dyc) and c (dc);
** dc becomes the previous step's, dh and dyc are reset (the recurrent
** product adds dh's). Separate, with restrict, so that it vectorizes. */
LTF_WIDE_CLONES static void FN(lstm_bwd_row)(int64_t U, const REAL *restrict row, const REAL *restrict cp,
                                             const REAL *restrict tc, const REAL *restrict dy, REAL *restrict dz,
                                             REAL *restrict dh, REAL *restrict dc, REAL *restrict dyc) {
    for (int64_t j = 0; j < U; j++) {
        REAL i = row[j], f = row[U + j], gg = row[2 * U + j], o = row[3 * U + j];
        REAL dhn = dh[j] + dy[j] + dyc[j];
        REAL dcn = dc[j] + dhn * o * (1 - tc[j] * tc[j]);
        dz[j] = dcn * gg * i * (1 - i);
        dz[U + j] = dcn * cp[j] * f * (1 - f);
        dz[2 * U + j] = dcn * i * (1 - gg * gg);
        dz[3 * U + j] = dhn * tc[j] * o * (1 - o);
        dc[j] = dcn * f;
        dh[j] = 0;
        dyc[j] = 0;
    }
}

static ltf_status FN(lstm_bwd)(ltf_ctx *ctx, const rnn_geom *g, const REAL *x, const REAL *h0, const REAL *c0,
                               const REAL *K, const REAL *RK, const REAL *ws, const REAL *dy, const REAL *dh,
                               const REAL *dc, const uint8_t *mask, REAL *dx, REAL *dh0, REAL *dc0, REAL *dK,
                               REAL *dRK, REAL *db) {
    int64_t B = g->B, T = g->T, I = g->I, U = g->U, G = 4 * U, W = 6 * U;
    ltf_dtype dt = g->dt;
    size_t nz = (size_t)(B * T * G), nh = (size_t)(B * T * U), nb = (size_t)(B * U);
    size_t nr = (size_t)(G * U), nk = (size_t)(G * I);
    size_t total = nz + nh + nb + (size_t)U + nr + nk;
    REAL *dz = malloc(sizeof(REAL) * (total + 1));
    if (!dz) return ltf_fail_oom(ctx, "lstm_sequence_grad scratch", sizeof(REAL) * total);
    REAL *hp = dz + nz, *dyc = hp + nh, *tcs = dyc + nb, *RKt = tcs + U, *Kt = RKt + nr;
    FN(transpose)(U, G, RK, G, RKt);   /* per-step products without a transposed operand */
    for (size_t k = 0; k < nb; k++) dyc[k] = 0;
    memcpy(dh0, dh, sizeof(REAL) * nb);
    memcpy(dc0, dc, sizeof(REAL) * nb);
    ltf_status st = LTF_OK;
    for (int64_t s = T - 1; s >= 0 && st == LTF_OK; s--) {
        int64_t t = g->back ? T - 1 - s : s, tp = g->back ? t + 1 : t - 1;
        for (int64_t b = 0; b < B; b++) {
            const REAL *row = ws + (b * T + t) * W, *prow = s == 0 ? NULL : ws + (b * T + tp) * W;
            const REAL *dyr = dy + (b * T + s) * U;
            REAL *dzr = dz + (b * T + t) * G, *dhr = dh0 + b * U, *dcr = dc0 + b * U, *dycr = dyc + b * U;
            if (mask && !mask[b * T + t]) {
                for (int64_t j = 0; j < G; j++) dzr[j] = 0;
                for (int64_t j = 0; j < U; j++) dycr[j] = g->zero_out ? 0 : dyr[j] + dycr[j];
                continue;
            }
            FN(act_tanh)(row + 4 * U, tcs, U);
            FN(lstm_bwd_row)(U, row, prow ? prow + 4 * U : c0 + b * U, tcs, dyr, dzr, dhr, dcr, dycr);
        }
        st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 0, B, U, G, 1, dz + t * G, T * G, RKt, U, 1, dh0, U);
    }
    int64_t skip = g->skip;
    if (st == LTF_OK) {
        if (skip & 1) {
            memset(dx, 0, sizeof(REAL) * (size_t)(B * T * I));
        } else {
            FN(transpose)(I, G, K, G, Kt);
            st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 0, B * T, I, G, 1, dz, G, Kt, I, 0, dx, I);
        }
    }
    if (st == LTF_OK && !(skip & 8)) st = ltf_cpu_blas_gemm(ctx, g->op, dt, 1, 0, I, G, B * T, 1, x, I, dz, G, 0, dK, G);
    if (st == LTF_OK && !(skip & 16)) {
        FN(hprev)(g, h0, ws, W, 5 * U, hp);
        st = ltf_cpu_blas_gemm(ctx, g->op, dt, 1, 0, U, G, B * T, 1, hp, U, dz, G, 0, dRK, G);
    }
    if (st == LTF_OK) FN(colsum)(B * T, G, dz, G, db);
    if (skip & 8) memset(dK, 0, sizeof(REAL) * nk);
    if (skip & 16) memset(dRK, 0, sizeof(REAL) * nr);
    free(dz);
    return st;
}
/* }==== */

/* {==== GRU: workspace rows z, r, hh, (reset_after) r's recurrent input
** rech or (else) r * h_prev, h */
static ltf_status FN(gru_fwd)(ltf_ctx *ctx, const rnn_geom *g, const REAL *x, const REAL *h0, const REAL *K,
                              const REAL *RK, const REAL *bias, const uint8_t *mask, REAL *y, REAL *hT, REAL *ws) {
    int64_t B = g->B, T = g->T, I = g->I, U = g->U, G = 3 * U, W = 5 * U;
    ltf_dtype dt = g->dt;
    int ra = g->reset_after;
    const REAL *bi = bias, *br = ra ? bias + G : NULL;
    size_t nb = (size_t)(B * U);
    REAL *yb = calloc(nb + (size_t)(B * G) + nb + 1, sizeof(REAL));
    if (!yb) return ltf_fail_oom(ctx, "gru_sequence scratch", sizeof(REAL) * (2 * nb + (size_t)(B * G)));
    REAL *rec = yb + nb, *rh = rec + B * G;
    memcpy(hT, h0, sizeof(REAL) * nb);
    ltf_status st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 0, B * T, G, I, 1, x, I, K, G, 0, ws, W);
    for (int64_t s = 0; s < T && st == LTF_OK; s++) {
        int64_t t = g->back ? T - 1 - s : s;
        st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 0, B, ra ? G : 2 * U, U, 1, hT, U, RK, G, 0, rec, G);
        if (st != LTF_OK) break;
        for (int64_t b = 0; b < B; b++) {   /* z, r (and r * h_prev without reset_after) */
            REAL *row = ws + (b * T + t) * W, *rc = rec + b * G, *h = hT + b * U;
            for (int64_t j = 0; j < 2 * U; j++) row[j] += bi[j] + rc[j] + (ra ? br[j] : 0);
            FN(act_sigmoid)(row, 2 * U);
            if (!ra)
                for (int64_t j = 0; j < U; j++) row[3 * U + j] = rh[b * U + j] = row[U + j] * h[j];
        }
        if (!ra) {
            st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 0, B, U, U, 1, rh, U, RK + 2 * U, G, 0, rec + 2 * U, G);
            if (st != LTF_OK) break;
        }
        for (int64_t b = 0; b < B; b++) {
            REAL *row = ws + (b * T + t) * W, *rc = rec + b * G, *h = hT + b * U, *yp = yb + b * U;
            REAL *yo = y + (b * T + s) * U, *hh = row + 2 * U;
            int m = mask ? mask[b * T + t] != 0 : 1;
            if (ra) {
                for (int64_t j = 0; j < U; j++) {
                    REAL rech = rc[2 * U + j] + br[2 * U + j];
                    row[3 * U + j] = rech;
                    hh[j] += bi[2 * U + j] + row[U + j] * rech;
                }
            } else {
                for (int64_t j = 0; j < U; j++) hh[j] += bi[2 * U + j] + rc[2 * U + j];
            }
            FN(act_tanh)(hh, hh, U);
            if (m) {
                for (int64_t j = 0; j < U; j++) h[j] = yp[j] = row[j] * h[j] + (1 - row[j]) * hh[j];
            } else if (g->zero_out) {
                for (int64_t j = 0; j < U; j++) yp[j] = 0;
            }
            memcpy(row + 4 * U, h, sizeof(REAL) * (size_t)U);
            memcpy(yo, yp, sizeof(REAL) * (size_t)U);
        }
    }
    free(yb);
    return st;
}

static ltf_status FN(gru_bwd)(ltf_ctx *ctx, const rnn_geom *g, const REAL *x, const REAL *h0, const REAL *K,
                              const REAL *RK, const REAL *ws, const REAL *dy, const REAL *dh, const uint8_t *mask,
                              REAL *dx, REAL *dh0, REAL *dK, REAL *dRK, REAL *db) {
    int64_t B = g->B, T = g->T, I = g->I, U = g->U, G = 3 * U, W = 5 * U;
    ltf_dtype dt = g->dt;
    int ra = g->reset_after;
    size_t nz = (size_t)(B * T * G), nh = (size_t)(B * T * U), nb = (size_t)(B * U);
    size_t nr = (size_t)(G * U), nk = (size_t)(G * I);
    size_t total = 2 * nz + nh + 3 * nb + nr + nk;
    REAL *dA = malloc(sizeof(REAL) * (total + 1));
    if (!dA) return ltf_fail_oom(ctx, "gru_sequence_grad scratch", sizeof(REAL) * total);
    REAL *dR = dA + nz, *hp = dR + nz, *dyc = hp + nh, *dhw = dyc + nb, *drh = dhw + nb, *RKt = drh + nb;
    REAL *Kt = RKt + nr;
    FN(transpose)(U, G, RK, G, RKt);   /* RKt (3U, U): rows of z, r, h */
    for (size_t k = 0; k < nb; k++) dyc[k] = 0;
    memcpy(dh0, dh, sizeof(REAL) * nb);
    FN(hprev)(g, h0, ws, W, 4 * U, hp);
    ltf_status st = LTF_OK;
    for (int64_t s = T - 1; s >= 0 && st == LTF_OK; s--) {
        int64_t t = g->back ? T - 1 - s : s;
        for (int64_t b = 0; b < B; b++) {
            const REAL *row = ws + (b * T + t) * W, *hpr = hp + (b * T + t) * U;
            const REAL *dyr = dy + (b * T + s) * U;
            REAL *da = dA + (b * T + t) * G, *dr = dR + (b * T + t) * G;
            REAL *dhr = dh0 + b * U, *dycr = dyc + b * U, *dw = dhw + b * U;
            int m = mask ? mask[b * T + t] != 0 : 1;
            for (int64_t j = 0; j < U; j++) {
                REAL dY = dyr[j] + dycr[j];
                if (!m) {
                    da[j] = da[U + j] = da[2 * U + j] = 0;
                    dr[j] = dr[U + j] = dr[2 * U + j] = 0;
                    dw[j] = 0;
                    dycr[j] = g->zero_out ? 0 : dY;
                    continue;
                }
                REAL z = row[j], r = row[U + j], hh = row[2 * U + j];
                REAL dhn = dhr[j] + dY;
                REAL dah = dhn * (1 - z) * (1 - hh * hh);
                da[j] = dhn * (hpr[j] - hh) * z * (1 - z);
                da[2 * U + j] = dah;
                dw[j] = dhn;
                dycr[j] = 0;
                if (ra) {
                    REAL dar = dah * row[3 * U + j] * r * (1 - r);
                    da[U + j] = dar;
                    dr[j] = da[j];
                    dr[U + j] = dar;
                    dr[2 * U + j] = dah * r;
                    dhr[j] = dhn * z;
                }
            }
        }
        if (ra) {
            st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 0, B, U, G, 1, dR + t * G, T * G, RKt, U, 1, dh0, U);
            continue;
        }
        st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 0, B, U, U, 1, dA + t * G + 2 * U, T * G, RKt + 2 * U * U, U, 0,
                               drh, U);
        if (st != LTF_OK) break;
        for (int64_t b = 0; b < B; b++) {
            const REAL *row = ws + (b * T + t) * W, *hpr = hp + (b * T + t) * U;
            REAL *da = dA + (b * T + t) * G, *dhr = dh0 + b * U, *dw = dhw + b * U, *d = drh + b * U;
            if (mask && !mask[b * T + t]) continue;
            for (int64_t j = 0; j < U; j++) {
                REAL z = row[j], r = row[U + j];
                da[U + j] = d[j] * hpr[j] * r * (1 - r);
                dhr[j] = dw[j] * z + d[j] * r;
            }
        }
        st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 0, B, U, 2 * U, 1, dA + t * G, T * G, RKt, U, 1, dh0, U);
    }
    int64_t skip = g->skip;
    if (st == LTF_OK) {
        if (skip & 1) {
            memset(dx, 0, sizeof(REAL) * (size_t)(B * T * I));
        } else {
            FN(transpose)(I, G, K, G, Kt);
            st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 0, B * T, I, G, 1, dA, G, Kt, I, 0, dx, I);
        }
    }
    if (st == LTF_OK && !(skip & 4)) st = ltf_cpu_blas_gemm(ctx, g->op, dt, 1, 0, I, G, B * T, 1, x, I, dA, G, 0, dK, G);
    if (skip & 4) memset(dK, 0, sizeof(REAL) * nk);
    if (st == LTF_OK && ra) {
        st = ltf_cpu_blas_gemm(ctx, g->op, dt, 1, 0, U, G, B * T, 1, hp, U, dR, G, 0, dRK, G);
        FN(colsum)(B * T, G, dA, G, db);
        FN(colsum)(B * T, G, dR, G, db + G);
    } else if (st == LTF_OK) {
        st = ltf_cpu_blas_gemm(ctx, g->op, dt, 1, 0, U, 2 * U, B * T, 1, hp, U, dA, G, 0, dRK, G);
        if (st == LTF_OK)
            st = ltf_cpu_blas_gemm(ctx, g->op, dt, 1, 0, U, U, B * T, 1, ws + 3 * U, W, dA + 2 * U, G, 0,
                                   dRK + 2 * U, G);
        FN(colsum)(B * T, G, dA, G, db);
    }
    free(dA);
    return st;
}
/* }==== */

#undef FN
#undef CAT
#undef CAT_
