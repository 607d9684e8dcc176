/*
** ltf_onnx.h: reading ONNX models (core/onnx_reader.c). The bytes are
** unpacked with protobuf-c (code generated from proto/onnx.proto, ONNX 1.12)
** and checked: every tensor (initializers, attribute tensors) is converted
** to an ltf_tensor at read time, so that a model that reads is a model whose
** data is whole. Initializers stored as raw_data are adopted, not copied:
** the buffer protobuf-c unpacked becomes the tensor's storage, so a loaded
** model holds one copy of its weights (the file itself is mapped, not read).
** Errors: NULL, with the message in ltf_ctx_error (InvalidArgumentError for
** malformed or inconsistent bytes, UnimplementedError for what luatf cannot
** hold: external data, int8/int16/uint16/uint32/uint64 tensors).
*/
#ifndef LTF_ONNX_H
#define LTF_ONNX_H
#include <stddef.h>
#include "ltf.h"

typedef struct ltf_onnx_model ltf_onnx_model;

/* Unpack and check a serialized ModelProto. */
LTF_API ltf_onnx_model *ltf_onnx_model_read(ltf_ctx *ctx, const void *data, size_t size);
/* The same from a file (mapped while it is unpacked). NotFoundError when it cannot be opened. */
LTF_API ltf_onnx_model *ltf_onnx_model_read_file(ltf_ctx *ctx, const char *path);
/* The unpacked message: a 'const Onnx__ModelProto *' (<build>/proto/onnx.pb-c.h), valid until freed. */
LTF_API const void *ltf_onnx_model_proto(const ltf_onnx_model *m);
/* Initializer i (graph.initializer order), a borrowed reference; NULL past the end. */
LTF_API ltf_tensor *ltf_onnx_model_initializer(const ltf_onnx_model *m, size_t i);
/* The tensor of attribute tensor 'tp' (a 'const Onnx__TensorProto *' inside the model), a new reference. */
LTF_API ltf_tensor *ltf_onnx_tensor_from_proto(ltf_ctx *ctx, const void *tp);
/* Unpack a serialized TensorProto (the test data's *.pb files) into a new tensor. */
LTF_API ltf_tensor *ltf_onnx_tensor_read(ltf_ctx *ctx, const void *data, size_t size, char *name, size_t name_size);
LTF_API void ltf_onnx_model_free(ltf_onnx_model *m);

#endif
