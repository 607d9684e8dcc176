/*
** cpu/rnn_impl.h: the fused LSTM / GRU loops of cpu/rnn.c for one element
** type, included once per type with REAL (float, double), SFX (f32, f64),
** EXP and TANH (the type's libm functions) defined. Layouts: x (B, T, I)
** and every per-step buffer indexed [b][t] by real time; outputs (B, T, U)
** in processing order; the workspace rows as ltf_ops/rnn.h says.
*/
#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

static inline REAL FN(sigm)(REAL v) { return (REAL)1 / ((REAL)1 + EXP(-v)); }

/* Column sums of the (rows, n) matrix 'a' with row stride 'lda' into 'out'. */
static void FN(colsum)(int64_t rows, int64_t n, const REAL *a, int64_t lda, REAL *out) {
    for (int64_t j = 0; j < n; j++) out[j] = 0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++) out[j] += a[r * lda + j];
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
    REAL *yb = calloc((size_t)(B * U) + 1, sizeof(REAL));
    if (!yb) return ltf_fail_oom(ctx, "lstm_sequence scratch", sizeof(REAL) * (size_t)(B * U));
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
            for (int64_t j = 0; j < U; j++) {
                REAL i = FN(sigm)(row[j] + bias[j]);
                REAL f = FN(sigm)(row[U + j] + bias[U + j]);
                REAL gg = TANH(row[2 * U + j] + bias[2 * U + j]);
                REAL o = FN(sigm)(row[3 * U + j] + bias[3 * U + j]);
                row[j] = i;
                row[U + j] = f;
                row[2 * U + j] = gg;
                row[3 * U + j] = o;
                if (m) {
                    REAL cn = f * c[j] + i * gg;
                    REAL hn = o * TANH(cn);
                    c[j] = cn;
                    h[j] = hn;
                    yp[j] = hn;
                } else if (g->zero_out) {
                    yp[j] = 0;
                }
                row[4 * U + j] = c[j];
                row[5 * U + j] = h[j];
                yo[j] = yp[j];
            }
        }
    }
    free(yb);
    return st;
}

static ltf_status FN(lstm_bwd)(ltf_ctx *ctx, const rnn_geom *g, const REAL *x, const REAL *h0, const REAL *c0,
                               const REAL *K, const REAL *RK, const REAL *ws, const REAL *dy, const REAL *dh,
                               const REAL *dc, const uint8_t *mask, REAL *dx, REAL *dh0, REAL *dc0, REAL *dK,
                               REAL *dRK, REAL *db) {
    int64_t B = g->B, T = g->T, I = g->I, U = g->U, G = 4 * U, W = 6 * U;
    ltf_dtype dt = g->dt;
    size_t nz = (size_t)(B * T * G), nh = (size_t)(B * T * U), nb = (size_t)(B * U);
    REAL *dz = malloc(sizeof(REAL) * (nz + nh + nb + 1));
    if (!dz) return ltf_fail_oom(ctx, "lstm_sequence_grad scratch", sizeof(REAL) * (nz + nh + nb));
    REAL *hp = dz + nz, *dyc = hp + nh;
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
            int m = mask ? mask[b * T + t] != 0 : 1;
            for (int64_t j = 0; j < U; j++) {
                REAL dY = dyr[j] + dycr[j];
                if (!m) {
                    dzr[j] = dzr[U + j] = dzr[2 * U + j] = dzr[3 * U + j] = 0;
                    dycr[j] = g->zero_out ? 0 : dY;
                    continue;
                }
                REAL i = row[j], f = row[U + j], gg = row[2 * U + j], o = row[3 * U + j];
                REAL cn = row[4 * U + j], cp = prow ? prow[4 * U + j] : c0[b * U + j];
                REAL tc = TANH(cn), dhn = dhr[j] + dY;
                REAL dcn = dcr[j] + dhn * o * (1 - tc * tc);
                dzr[j] = dcn * gg * i * (1 - i);
                dzr[U + j] = dcn * cp * f * (1 - f);
                dzr[2 * U + j] = dcn * i * (1 - gg * gg);
                dzr[3 * U + j] = dhn * tc * o * (1 - o);
                dcr[j] = dcn * f;
                dhr[j] = 0;
                dycr[j] = 0;
            }
        }
        st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 1, B, U, G, 1, dz + t * G, T * G, RK, G, 1, dh0, U);
    }
    if (st == LTF_OK) {
        FN(hprev)(g, h0, ws, W, 5 * U, hp);
        st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 1, B * T, I, G, 1, dz, G, K, G, 0, dx, I);
    }
    if (st == LTF_OK) st = ltf_cpu_blas_gemm(ctx, g->op, dt, 1, 0, I, G, B * T, 1, x, I, dz, G, 0, dK, G);
    if (st == LTF_OK) st = ltf_cpu_blas_gemm(ctx, g->op, dt, 1, 0, U, G, B * T, 1, hp, U, dz, G, 0, dRK, G);
    if (st == LTF_OK) FN(colsum)(B * T, G, dz, G, db);
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
        if (!ra) {
            for (int64_t b = 0; b < B; b++) {
                REAL *row = ws + (b * T + t) * W, *rc = rec + b * G, *h = hT + b * U;
                for (int64_t j = 0; j < U; j++) {
                    row[j] = FN(sigm)(row[j] + bi[j] + rc[j]);
                    row[U + j] = FN(sigm)(row[U + j] + bi[U + j] + rc[U + j]);
                    row[3 * U + j] = rh[b * U + j] = row[U + j] * h[j];
                }
            }
            st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 0, B, U, U, 1, rh, U, RK + 2 * U, G, 0, rec + 2 * U, G);
            if (st != LTF_OK) break;
        }
        for (int64_t b = 0; b < B; b++) {
            REAL *row = ws + (b * T + t) * W, *rc = rec + b * G, *h = hT + b * U, *yp = yb + b * U;
            REAL *yo = y + (b * T + s) * U;
            int m = mask ? mask[b * T + t] != 0 : 1;
            for (int64_t j = 0; j < U; j++) {
                REAL z, hh;
                if (ra) {
                    z = FN(sigm)(row[j] + bi[j] + rc[j] + br[j]);
                    REAL r = FN(sigm)(row[U + j] + bi[U + j] + rc[U + j] + br[U + j]);
                    REAL rech = rc[2 * U + j] + br[2 * U + j];
                    hh = TANH(row[2 * U + j] + bi[2 * U + j] + r * rech);
                    row[j] = z;
                    row[U + j] = r;
                    row[3 * U + j] = rech;
                } else {
                    z = row[j];
                    hh = TANH(row[2 * U + j] + bi[2 * U + j] + rc[2 * U + j]);
                }
                row[2 * U + j] = hh;
                if (m) {
                    h[j] = z * h[j] + (1 - z) * hh;
                    yp[j] = h[j];
                } else if (g->zero_out) {
                    yp[j] = 0;
                }
                row[4 * U + j] = h[j];
                yo[j] = yp[j];
            }
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
    REAL *dA = malloc(sizeof(REAL) * (2 * nz + nh + 3 * nb + 1));
    if (!dA) return ltf_fail_oom(ctx, "gru_sequence_grad scratch", sizeof(REAL) * (2 * nz + nh + 3 * nb));
    REAL *dR = dA + nz, *hp = dR + nz, *dyc = hp + nh, *dhw = dyc + nb, *drh = dhw + nb;
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
            st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 1, B, U, G, 1, dR + t * G, T * G, RK, G, 1, dh0, U);
            continue;
        }
        st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 1, B, U, U, 1, dA + t * G + 2 * U, T * G, RK + 2 * U, G, 0, drh,
                               U);
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
        st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 1, B, U, 2 * U, 1, dA + t * G, T * G, RK, G, 1, dh0, U);
    }
    if (st == LTF_OK) st = ltf_cpu_blas_gemm(ctx, g->op, dt, 0, 1, B * T, I, G, 1, dA, G, K, G, 0, dx, I);
    if (st == LTF_OK) st = ltf_cpu_blas_gemm(ctx, g->op, dt, 1, 0, I, G, B * T, 1, x, I, dA, G, 0, dK, G);
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
