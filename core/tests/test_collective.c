/*
** test_collective.c: the collective ops' kernels over a fake communicator
** (ltf_comm.h) that plays rank 1 of 3 ranks holding the same values: the
** fusion buffer of a multi-input all_reduce, MEAN's division (integers
** truncated), gathers and scatters, the agreement check's and a lost
** peer's errors reaching the caller, ltf_ctx_set_comm's validation, and the
** group of one without a communicator. Needs no MPI.
*/
#include <string.h>
#include "check.h"
#include "../op.h"
#include "ltf_comm.h"

static int calls;

static ltf_status f_check(void *ud, const char *what, const char *sig, char *err, size_t errlen) {
    if (strstr(sig, "(7,)")) {
        snprintf(err, errlen, "%s: the ranks disagree: rank 0 has '%s', rank 2 has 'other'", what, sig);
        return LTF_ERR_INVALID_ARGUMENT;
    }
    return LTF_OK;
}
static size_t esize(ltf_dtype dt) { return dt == LTF_DTYPE_FLOAT64 || dt == LTF_DTYPE_INT64 ? 8 : dt == LTF_DTYPE_UINT8 ? 1 : 4; }
static void scale3(void *p, int64_t n, ltf_dtype dt) {
    for (int64_t i = 0; i < n; i++) {
        if (dt == LTF_DTYPE_FLOAT32) ((float *)p)[i] *= 3;
        else if (dt == LTF_DTYPE_INT32) ((int32_t *)p)[i] *= 3;
        else if (dt == LTF_DTYPE_FLOAT64) ((double *)p)[i] *= 3;
    }
}
static ltf_status f_all_reduce(void *ud, const void *send, void *recv, int64_t count, ltf_dtype dt, ltf_reduce_op op,
                               char *err, size_t errlen) {
    calls++;
    if (count == 13) {
        snprintf(err, errlen, "rank 2 (pid 99) is lost: it exited or was killed");
        return LTF_ERR_UNAVAILABLE;
    }
    if (op == LTF_REDUCE_MEAN) return LTF_ERR_INTERNAL;   /* the engine sends MEAN as SUM */
    memmove(recv, send, (size_t)count * esize(dt));
    if (op == LTF_REDUCE_SUM) scale3(recv, count, dt);
    return LTF_OK;
}
static ltf_status f_broadcast(void *ud, void *buf, int64_t count, ltf_dtype dt, int root, char *err, size_t errlen) {
    calls++;
    for (int64_t i = 0; i < count; i++) ((float *)buf)[i] = (float)(100 + root);
    return LTF_OK;
}
static ltf_status f_all_gather(void *ud, const void *send, void *recv, int64_t count, ltf_dtype dt, char *err,
                               size_t errlen) {
    calls++;
    for (int r = 0; r < 3; r++) memcpy((char *)recv + (size_t)r * (size_t)count * esize(dt), send, (size_t)count * esize(dt));
    return LTF_OK;
}
static ltf_status f_reduce_scatter(void *ud, const void *send, void *recv, int64_t count, ltf_dtype dt,
                                   ltf_reduce_op op, char *err, size_t errlen) {
    calls++;
    memcpy(recv, (const char *)send + (size_t)count * esize(dt), (size_t)count * esize(dt));   /* rank 1's block */
    if (op == LTF_REDUCE_SUM) scale3(recv, count, dt);
    return LTF_OK;
}
static ltf_status f_barrier(void *ud, char *err, size_t errlen) { return LTF_OK; }

static ltf_tensor *vec(ltf_ctx *ctx, ltf_dtype dt, int64_t n, const void *data) {
    return ltf_tensor_from_data(ctx, dt, 1, &n, data);
}

int main(void) {
    ltf_ctx *ctx = ltf_ctx_new();
    ltf_comm comm = { LTF_COMM_ABI, 1, 3, NULL, "fake", f_check, f_all_reduce, f_broadcast, f_all_gather,
                      f_reduce_scatter, f_barrier };
    ltf_attrs at;
    ltf_tensor *out[4] = {0};
    int nout = 0;

    /* no communicator: a group of one */
    ltf_tensor *a = vec(ctx, LTF_DTYPE_FLOAT32, 3, (float[]){1, 2, 3});
    ltf_attrs_init(&at);
    CHECK(ltf_op_run(ctx, LTF_OP_ALL_REDUCE, &a, 1, &at, out, 1, &nout) == LTF_OK && nout == 1);
    CHECK(((float *)ltf_tensor_data(out[0]))[2] == 3);
    ltf_tensor_release(out[0]);
    at.i[0] = 1;   /* root 1 of a group of one */
    CHECK(ltf_op_run(ctx, LTF_OP_BROADCAST, &a, 1, &at, out, 1, &nout) == LTF_ERR_INVALID_ARGUMENT);
    CHECK_STR(ltf_ctx_error(ctx), "broadcast: root 1 is not a rank of this group of 1 (0-based)");

    /* set_comm checks the table */
    ltf_comm bad = comm;
    bad.abi = 99;
    CHECK(ltf_ctx_set_comm(ctx, &bad) == LTF_ERR_INVALID_ARGUMENT);
    bad = comm;
    bad.rank = 3;
    CHECK(ltf_ctx_set_comm(ctx, &bad) == LTF_ERR_INVALID_ARGUMENT);
    CHECK(ltf_ctx_set_comm(ctx, &comm) == LTF_OK && ltf_ctx_comm(ctx) == &comm);

    /* two inputs: one call over the fusion buffer */
    ltf_tensor *b = vec(ctx, LTF_DTYPE_FLOAT32, 2, (float[]){10, 20});
    ltf_tensor *ab[2] = { a, b };
    ltf_attrs_init(&at);
    calls = 0;
    CHECK(ltf_op_run(ctx, LTF_OP_ALL_REDUCE, ab, 2, &at, out, 2, &nout) == LTF_OK && nout == 2 && calls == 1);
    CHECK(((float *)ltf_tensor_data(out[0]))[0] == 3 && ((float *)ltf_tensor_data(out[0]))[2] == 9);
    CHECK(((float *)ltf_tensor_data(out[1]))[1] == 60);
    ltf_tensor_release(out[0]);
    ltf_tensor_release(out[1]);

    /* MEAN: sum / 3; an integer mean truncates */
    ltf_tensor *ia = vec(ctx, LTF_DTYPE_INT32, 2, (int32_t[]){5, -5});
    at.i[0] = LTF_REDUCE_MEAN;
    CHECK(ltf_op_run(ctx, LTF_OP_ALL_REDUCE, &ia, 1, &at, out, 1, &nout) == LTF_OK);
    CHECK(((int32_t *)ltf_tensor_data(out[0]))[0] == 5 && ((int32_t *)ltf_tensor_data(out[0]))[1] == -5);
    ltf_tensor_release(out[0]);
    CHECK(ltf_op_run(ctx, LTF_OP_ALL_REDUCE, &a, 1, &at, out, 1, &nout) == LTF_OK);
    CHECK(((float *)ltf_tensor_data(out[0]))[1] == 2);
    ltf_tensor_release(out[0]);

    /* mixed dtypes in one call are refused */
    ltf_tensor *mix[2] = { a, ia };
    ltf_attrs_init(&at);
    CHECK(ltf_op_run(ctx, LTF_OP_ALL_REDUCE, mix, 2, &at, out, 2, &nout) == LTF_ERR_TYPE);

    /* broadcast, all_gather, reduce_scatter */
    at.i[0] = 2;
    CHECK(ltf_op_run(ctx, LTF_OP_BROADCAST, &a, 1, &at, out, 1, &nout) == LTF_OK);
    CHECK(((float *)ltf_tensor_data(out[0]))[0] == 102);
    ltf_tensor_release(out[0]);
    ltf_attrs_init(&at);
    CHECK(ltf_op_run(ctx, LTF_OP_ALL_GATHER, &b, 1, &at, out, 1, &nout) == LTF_OK);
    CHECK(ltf_tensor_rank(out[0]) == 1 && ltf_tensor_dims(out[0])[0] == 6);
    CHECK(((float *)ltf_tensor_data(out[0]))[5] == 20);
    ltf_tensor_release(out[0]);
    ltf_tensor *six = vec(ctx, LTF_DTYPE_FLOAT32, 6, (float[]){1, 2, 3, 4, 5, 6});
    CHECK(ltf_op_run(ctx, LTF_OP_REDUCE_SCATTER, &six, 1, &at, out, 1, &nout) == LTF_OK);
    CHECK(ltf_tensor_dims(out[0])[0] == 2 && ((float *)ltf_tensor_data(out[0]))[0] == 9);
    ltf_tensor_release(out[0]);
    CHECK(ltf_op_run(ctx, LTF_OP_REDUCE_SCATTER, &b, 1, &at, out, 1, &nout) == LTF_ERR_INVALID_ARGUMENT);
    CHECK_STR(ltf_ctx_error(ctx), "reduce_scatter: argument 1's first dimension (2) must divide evenly by the group size 3");
    at.i[0] = 2;   /* built for a group of 2 */
    CHECK(ltf_op_run(ctx, LTF_OP_ALL_GATHER, &b, 1, &at, out, 1, &nout) == LTF_ERR_FAILED_PRECONDITION);
    CHECK_STR(ltf_ctx_error(ctx), "all_gather: built for a group of 2, the communicator has 3 ranks");

    /* the communicator's errors reach the caller with their kind */
    ltf_tensor *seven = vec(ctx, LTF_DTYPE_FLOAT32, 7, (float[]){0, 0, 0, 0, 0, 0, 0});
    ltf_attrs_init(&at);
    CHECK(ltf_op_run(ctx, LTF_OP_ALL_REDUCE, &seven, 1, &at, out, 1, &nout) == LTF_ERR_INVALID_ARGUMENT && nout == 0);
    CHECK_STR(ltf_ctx_error(ctx), "all_reduce: the ranks disagree: rank 0 has 'SUM float32, 1 tensor of 7 elements: (7,)', rank 2 has 'other'");
    float z13[13] = {0};
    ltf_tensor *t13 = vec(ctx, LTF_DTYPE_FLOAT32, 13, z13);
    CHECK(ltf_op_run(ctx, LTF_OP_ALL_REDUCE, &t13, 1, &at, out, 1, &nout) == LTF_ERR_UNAVAILABLE);
    CHECK_STR(ltf_ctx_error(ctx), "all_reduce: rank 2 (pid 99) is lost: it exited or was killed");

    CHECK(ltf_ctx_set_comm(ctx, NULL) == LTF_OK && ltf_ctx_comm(ctx) == NULL);
    ltf_tensor *all[] = { a, b, ia, six, seven, t13 };
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++) ltf_tensor_release(all[i]);
    ltf_ctx_release(ctx);
    CHECK_DONE();
}
