/*
** ltf_ops.h: every op id (public: hosts call ltf_op_run with them), gathered from the family lists (ORDER OP).
** Each list lives in ltf_ops/<family>.h; ops/<family>.c defines 'ltf_opdef_<name>' for each entry of
** its list; op.c builds the constant registry from the same lists.
*/
#ifndef LTF_OPS_H
#define LTF_OPS_H

#include "ltf_ops/elementwise.h"
#include "ltf_ops/reduce.h"
#include "ltf_ops/movement.h"
#include "ltf_ops/matmul.h"
#include "ltf_ops/nn.h"
#include "ltf_ops/random.h"
#include "ltf_ops/init_ops.h"
#include "ltf_ops/state.h"
#include "ltf_ops/control.h"
#include "ltf_ops/linalg.h"
#include "ltf_ops/image.h"
#include "ltf_ops/indexing.h"
#include "ltf_ops/sort.h"
#include "ltf_ops/strings.h"
#include "ltf_ops/optim.h"
#include "ltf_ops/rnn.h"
#include "ltf_ops/example.h"
#include "ltf_ops/io.h"
#include "ltf_ops/csv.h"
#include "ltf_ops/collective.h"

#define LTF_OP_LIST(X)       \
    LTF_OPS_ELEMENTWISE(X)   \
    LTF_OPS_REDUCE(X)        \
    LTF_OPS_MOVEMENT(X)      \
    LTF_OPS_MATMUL(X)        \
    LTF_OPS_NN(X)            \
    LTF_OPS_RANDOM(X)        \
    LTF_OPS_INIT(X)          \
    LTF_OPS_STATE(X)         \
    LTF_OPS_CONTROL(X)       \
    LTF_OPS_LINALG(X)        \
    LTF_OPS_IMAGE(X)         \
    LTF_OPS_INDEXING(X)      \
    LTF_OPS_SORT(X)          \
    LTF_OPS_STRINGS(X)       \
    LTF_OPS_OPTIM(X)         \
    LTF_OPS_RNN(X)           \
    LTF_OPS_EXAMPLE(X)            \
    LTF_OPS_IO(X)            \
    LTF_OPS_CSV(X)           \
    LTF_OPS_COLLECTIVE(X)

#define LTF_OP_ENUM(ID, name) LTF_OP_##ID,
enum { LTF_OP_LIST(LTF_OP_ENUM) LTF_OP_COUNT };
#undef LTF_OP_ENUM

#endif
