/*
** ltf_comm.h: the communicator a context's collective ops run over
** (ops in ltf_ops/collective.h; docs/distribute_collectives.md).
**
** The engine holds no transport: a module (tf/mpi.so, built when CMake
** finds MPI) fills an ltf_comm and hands it to a context with
** ltf_ctx_set_comm. The communicator is per context (two lua_States can hold
** different ones, or none); the MPI library under tf/mpi.so is per process.
** Without a communicator the collective ops act as a group of one: the
** identity (as TensorFlow's default strategy), rank 0 of size 1.
**
** Every entry returns LTF_OK, or a status with a message written into
** 'err' (at most 'errlen' bytes, NUL-terminated): LTF_ERR_UNAVAILABLE when a
** peer is lost (the message names its rank), LTF_ERR_INVALID_ARGUMENT when
** the ranks disagree on a call (the message names both sides). Buffers are
** host memory of 'count' elements of 'dtype' (float32, float64, int32,
** int64 or uint8: the engine stages float16/bfloat16 through float32).
*/
#ifndef LTF_COMM_H
#define LTF_COMM_H

#include <stddef.h>
#include <stdint.h>
#include "ltf.h"

#define LTF_COMM_ABI 1    /* ltf_comm.abi: the layout below */

/* Reductions (attribute i[0] of all_reduce and reduce_scatter). */
typedef enum ltf_reduce_op {
    LTF_REDUCE_SUM = 0,
    LTF_REDUCE_MEAN,      /* the sum divided by the group size (integers: truncated) */
    LTF_REDUCE_MAX,
    LTF_REDUCE_MIN,
    LTF_REDUCE_COUNT
} ltf_reduce_op;

typedef struct ltf_comm {
    int abi;              /* LTF_COMM_ABI */
    int rank, size;       /* 0-based rank in a group of 'size' */
    void *ud;
    const char *name;     /* "mpi" */
    /* Agree on a call before it is made: 'sig' (a short text: op, dtype,
    ** shape) must be the same on every rank; else fails naming the first rank
    ** whose text differs from rank 0's and both texts ('what' starts the
    ** message). check_same (tf.distribute.collective) is this call. */
    ltf_status (*check)(void *ud, const char *what, const char *sig, char *err, size_t errlen);
    /* recv[i] = op over ranks of send[i], i < count ('send' may equal
    ** 'recv'); MEAN arrives here as SUM (the engine divides). */
    ltf_status (*all_reduce)(void *ud, const void *send, void *recv, int64_t count, ltf_dtype dt,
                             ltf_reduce_op op, char *err, size_t errlen);
    /* 'buf' (count elements) from rank 'root' to every rank. */
    ltf_status (*broadcast)(void *ud, void *buf, int64_t count, ltf_dtype dt, int root, char *err,
                            size_t errlen);
    /* recv = send of rank 0, then rank 1, ... ('count' elements each). */
    ltf_status (*all_gather)(void *ud, const void *send, void *recv, int64_t count, ltf_dtype dt,
                             char *err, size_t errlen);
    /* recv (count elements) = op over ranks of this rank's block of 'send'
    ** (size * count elements, block r for rank r); MEAN arrives as SUM. */
    ltf_status (*reduce_scatter)(void *ud, const void *send, void *recv, int64_t count, ltf_dtype dt,
                                 ltf_reduce_op op, char *err, size_t errlen);
    ltf_status (*barrier)(void *ud, char *err, size_t errlen);
} ltf_comm;

/* Set (NULL: remove) the communicator of 'ctx' (lent: it must outlive its
** use). Fails (LTF_ERR_INVALID_ARGUMENT) for another ABI or a bad rank/size. */
LTF_API ltf_status ltf_ctx_set_comm(ltf_ctx *ctx, const ltf_comm *comm);
/* The communicator of 'ctx'; NULL when none (a group of one). */
LTF_API const ltf_comm *ltf_ctx_comm(const ltf_ctx *ctx);

#endif
