-- The io family (core/ops/io.c): files, image codecs, raw bytes,
-- compression, serialized tensors. None is differentiable.
return {
  cases = {},
  nondifferentiable = {"read_file", "write_file", "decode_png", "decode_jpeg", "decode_gif", "decode_image",
                       "encode_png", "encode_jpeg", "decode_raw", "decode_compressed", "serialize_tensor",
                       "parse_tensor"},
}
