/*
** ltf_ops/collective.h: collective ops over the context's communicator
** (ltf_comm.h; docs/distribute_collectives.md). All are stateful (never
** pruned, folded, merged or reordered: every rank must issue the same
** collectives in the same order) and run on the host. Without a
** communicator they act as a group of one (the identity). Numeric dtypes
** only (float32/64, float16, bfloat16, int32, int64, uint8).
**
**   op              inputs        attributes / outputs
**   all_reduce      x1..xn        i[0]: ltf_reduce_op (SUM, MEAN, MAX, MIN). One output per input,
**                                 its shape: the reduction over ranks. The inputs (one dtype) are
**                                 packed into one fusion buffer and reduced in one call (buckets).
**   broadcast       x             i[0]: root rank (0-based). x of rank 'root' on every rank.
**   all_gather      x (rank>=1)   i[0]: group size (0: the context's). Every rank's x concatenated
**                                 along axis 1, rank order.
**   reduce_scatter  x (rank>=1)   i[0]: ltf_reduce_op; i[1]: group size (0: the context's). x's
**                                 first dim must divide by the size; rank r gets block r of the
**                                 reduction over ranks.
*/
#ifndef LTF_OPS_COLLECTIVE_H
#define LTF_OPS_COLLECTIVE_H

#define LTF_OPS_COLLECTIVE(X)                                                     \
    X(ALL_REDUCE, all_reduce) X(BROADCAST, broadcast) X(ALL_GATHER, all_gather) \
    X(REDUCE_SCATTER, reduce_scatter)

#endif
