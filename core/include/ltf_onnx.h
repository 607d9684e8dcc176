/*
** ltf_onnx.h: reading ONNX models (core/onnx_reader.c). The bytes are
** unpacked with protobuf-c (code generated from proto/onnx.proto, ONNX 1.12)
** and checked: every tensor (initializers, attribute tensors) is checked at
** read time (dtype, dims, byte or value count against the shape), so that a
** model that reads is a model whose data is whole. The main graph's
** initializers are not unpacked with the rest: protobuf-c unpacks a copy of
** the model without their raw_data, and each initializer's bytes are read
** from the source straight into its tensor when it is taken, so the weights
** are in memory once, never as both protobuf-c's buffer and a tensor (a
** file is mapped only while its structure is walked, then read with pread).
** Errors: NULL, with the message in ltf_ctx_error (InvalidArgumentError for
** malformed or inconsistent bytes, UnimplementedError for what luatf cannot
** hold: external data, int8/int16/uint16/uint32/uint64 tensors).
*/
#ifndef LTF_ONNX_H
#define LTF_ONNX_H
#include <stddef.h>
#include "ltf.h"

typedef struct ltf_onnx_model ltf_onnx_model;

/* Unpack and check a serialized ModelProto. The initializers' bytes are read
** from 'data' when they are taken: 'data' must stay valid until ltf_onnx_model_free. */
LTF_API ltf_onnx_model *ltf_onnx_model_read(ltf_ctx *ctx, const void *data, size_t size);
/* The same from a file, kept open until ltf_onnx_model_free. NotFoundError when it cannot be opened;
** DataLossError when the file shrinks before an initializer is taken. */
LTF_API ltf_onnx_model *ltf_onnx_model_read_file(ltf_ctx *ctx, const char *path);
/* The unpacked message: a 'const Onnx__ModelProto *' (<build>/proto/onnx.pb-c.h), valid until freed.
** The main graph's initializers in it have no raw_data (see ltf_onnx_model_initializer). */
LTF_API const void *ltf_onnx_model_proto(const ltf_onnx_model *m);
/* How many initializers the main graph has (graph.initializer order). */
LTF_API size_t ltf_onnx_model_ninitializers(const ltf_onnx_model *m);
/* Initializer i, read on first use, a borrowed reference (kept until freed); NULL past the end or
** on error (the message in ltf_ctx_error). */
LTF_API ltf_tensor *ltf_onnx_model_initializer(ltf_onnx_model *m, size_t i);
/* Initializer i, a 4-d (O, I, kh, kw) convolution weight, as a new (kh, kw, I, O) tensor read
** straight into that layout (16 output channels at a time, not kept by the model): a new reference,
** NULL with the error in ctx. */
LTF_API ltf_tensor *ltf_onnx_model_initializer_hwio(ltf_onnx_model *m, size_t i);
/* A 4-d (O, I, kh, kw) tensor on the host as a new (kh, kw, I, O) one (the same blocked copy). */
LTF_API ltf_tensor *ltf_onnx_hwio(ltf_ctx *ctx, const ltf_tensor *w);
/* The most bytes protobuf-c held at once for the model's structure (its weights are not among them). */
LTF_API size_t ltf_onnx_model_proto_bytes(const ltf_onnx_model *m);
/* The tensor of attribute tensor 'tp' (a 'const Onnx__TensorProto *' inside the model), a new reference. */
LTF_API ltf_tensor *ltf_onnx_tensor_from_proto(ltf_ctx *ctx, const void *tp);
/* Unpack a serialized TensorProto (the test data's *.pb files) into a new tensor. */
LTF_API ltf_tensor *ltf_onnx_tensor_read(ltf_ctx *ctx, const void *data, size_t size, char *name, size_t name_size);
LTF_API void ltf_onnx_model_free(ltf_onnx_model *m);

#endif
