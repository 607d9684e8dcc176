--- tf.io: files (read_file, write_file, tf.io.gfile), image codecs
-- (decode_png / decode_jpeg / decode_gif / decode_image, encode_png /
-- encode_jpeg over libpng, libjpeg-turbo and giflib in core/io_image.c),
-- decode_raw and decode_compressed (zlib). The tensor functions are ops of
-- the engine's io family (core/ops/io.c): they work eagerly, inside tf.fn
-- and in tf.data map functions. Other engineers' tf.io parts live in
-- their own files, loaded at the end (tf.io_tfrecord, tf.io_csv). See
-- docs/io.md.
local op_args = require("tf.op_args")

return function(tf)
  local internal = tf.core.internal
  local io_ = tf.io or {}
  tf.io = io_

  local function raise(level, kind, fmt, ...)
    tf.errors.raise(kind, string.format(fmt, ...), level + 1)
  end

  local function args(op, names, n, ...)
    local r = op_args.parse(tf.errors.raise, op, names, n, ...)   -- not a tail call: errors count this frame
    return r
  end

  local function need_string(op, arg, v)
    if type(v) ~= "string" and not tf.is_tensor(v) then
      raise(3, "TypeError", "%s: '%s' must be a string or a string tensor, got %s", op, arg, type(v))
    end
    return v
  end

  local function dtype_name(d)
    if d == nil then return nil end
    if type(d) == "string" then return d end
    return d.name or tostring(d)
  end

  -- {==== files
  --- The bytes of a file as a scalar string tensor (TensorFlow's ReadFile).
  -- tf.io.read_file(filename [, {name =}])
  function io_.read_file(...)
    local a = args("read_file", {"filename", "name"}, 1, ...)
    return internal.io_read_file(need_string("read_file", "filename", a.filename))
  end

  --- Write `contents` (a string or scalar string tensor) to `filename`,
  -- replacing it (TensorFlow's WriteFile).
  -- tf.io.write_file(filename, contents [, {name =}])
  function io_.write_file(...)
    local a = args("write_file", {"filename", "contents", "name"}, 2, ...)
    internal.io_write_file(need_string("write_file", "filename", a.filename),
                           need_string("write_file", "contents", a.contents))
  end
  -- }====

  -- {==== image codecs
  local function channels_of(op, c)
    if c == nil then return 0 end
    if math.type(c) ~= "integer" then raise(3, "TypeError", "%s: 'channels' must be an integer, got %s", op, tostring(c)) end
    return c
  end

  -- uint8 (default) or 16-bit samples (tf.uint16 is not a luatf dtype: they come as int32), float32 scaled to [0, 1]
  local function depth_of(op, dtype, allow_float)
    local n = dtype_name(dtype)
    if n == nil or n == "uint8" then return 0, nil end
    if n == "uint16" or n == "int32" then return 1, nil end
    if allow_float and (n == "float32" or n == "float64") then return 0, n end
    raise(3, "TypeError", "%s: 'dtype' must be uint8 or uint16 (16-bit samples, as int32)%s, got %s", op,
          allow_float and ", float32" or "", tostring(n))
  end

  --- Decode a PNG: uint8 [h, w, c] (c = `channels`, or the file's with 0);
  -- `dtype = tf.uint16` (or "uint16"/tf.int32) gives the 16-bit samples as int32.
  -- tf.io.decode_png(contents [, channels] [, dtype] [, {channels =, dtype =, name =}])
  function io_.decode_png(...)
    local a = args("decode_png", {"contents", "channels", "dtype", "name"}, 1, ...)
    local bits16 = depth_of("decode_png", a.dtype)
    return internal.io_decode("png", need_string("decode_png", "contents", a.contents),
                              channels_of("decode_png", a.channels), bits16)
  end

  local DCT = {[""] = 0, INTEGER_FAST = 0, INTEGER_ACCURATE = 1, INTEGER_FLOAT = 2}

  --- Decode a JPEG: uint8 [h, w, c] (c = `channels` 1 or 3, or the file's with 0).
  -- tf.io.decode_jpeg(contents [, {channels =, ratio = 1, fancy_upscaling = true,
  --   try_recover_truncated = false, acceptable_fraction = 1, dct_method = "", name =}])
  function io_.decode_jpeg(...)
    local a = args("decode_jpeg", {"contents", "channels", "ratio", "fancy_upscaling", "try_recover_truncated",
                                   "acceptable_fraction", "dct_method", "name"}, 1, ...)
    local dct = DCT[a.dct_method or ""]
    if dct == nil then
      raise(2, "ValueError", "decode_jpeg: 'dct_method' must be \"\", \"INTEGER_FAST\", \"INTEGER_ACCURATE\" or "
            .. "\"INTEGER_FLOAT\", got %s", tostring(a.dct_method))
    end
    local flags = (a.fancy_upscaling == false and 0 or 1) | (a.try_recover_truncated and 2 or 0)
    return internal.io_decode("jpeg", need_string("decode_jpeg", "contents", a.contents),
                              channels_of("decode_jpeg", a.channels), a.ratio or 1, flags, dct,
                              a.acceptable_fraction or 1.0)
  end

  --- Decode every frame of a GIF: uint8 [frames, h, w, 3], composited as
  -- TensorFlow does (each frame drawn over the previous one; transparent
  -- pixels keep the previous frame's, the first frame's are 0).
  -- tf.io.decode_gif(contents [, {name =}])
  function io_.decode_gif(...)
    local a = args("decode_gif", {"contents", "name"}, 1, ...)
    return internal.io_decode("gif", need_string("decode_gif", "contents", a.contents), 0)
  end

  --- Decode a PNG, JPEG, GIF or BMP, told apart by their first bytes. A GIF
  -- gives [frames, h, w, 3] with expand_animations (default), else its first
  -- frame [h, w, 3]; the others [h, w, c]. dtype uint8 (default), uint16
  -- (as int32) or float32 (scaled to [0, 1] as convert_image_dtype).
  -- tf.io.decode_image(contents [, channels] [, dtype] [, {channels =, dtype =, expand_animations = true, name =}])
  function io_.decode_image(...)
    local a = args("decode_image", {"contents", "channels", "dtype", "name", "expand_animations"}, 1, ...)
    local bits16, float = depth_of("decode_image", a.dtype, true)
    local x = internal.io_decode("image", need_string("decode_image", "contents", a.contents),
                                 channels_of("decode_image", a.channels), bits16,
                                 a.expand_animations == false and 0 or 1)
    if float then x = tf.cast(x, float) / 255 end
    return x
  end

  --- PNG bytes of a uint8 [h, w, c] image (c 1..4), or an int32 image of
  -- 16-bit samples (0..65535). compression -1 (zlib's default) .. 9.
  -- tf.io.encode_png(image [, compression] [, {compression = -1, name =}])
  function io_.encode_png(...)
    local a = args("encode_png", {"image", "compression", "name"}, 1, ...)
    return internal.io_encode_png(a.image, a.compression or -1)
  end

  local FORMAT = {[""] = 0, grayscale = 1, rgb = 2}

  --- JPEG bytes of a uint8 [h, w, c] image (c 1 or 3).
  -- tf.io.encode_jpeg(image [, {format = "", quality = 95, progressive = false,
  --   optimize_size = false, chroma_downsampling = true, name =}])
  function io_.encode_jpeg(...)
    local a = args("encode_jpeg", {"image", "format", "quality", "progressive", "optimize_size",
                                   "chroma_downsampling", "density_unit", "x_density", "y_density",
                                   "xmp_metadata", "name"}, 1, ...)
    local f = FORMAT[a.format or ""]
    if f == nil then
      raise(2, "ValueError", "encode_jpeg: 'format' must be \"\", \"grayscale\" or \"rgb\", got %s", tostring(a.format))
    end
    local q = a.quality or 95
    if math.type(q) ~= "integer" then raise(2, "TypeError", "encode_jpeg: 'quality' must be an integer, got %s", tostring(q)) end
    local flags = (a.progressive and 1 or 0) | (a.optimize_size and 2 or 0) | (a.chroma_downsampling == false and 0 or 4)
    return internal.io_encode_jpeg(a.image, q, f, flags)
  end

  --- True when the bytes are a JPEG (TensorFlow's tf.io.is_jpeg), as a bool tensor.
  function io_.is_jpeg(...)
    local a = args("is_jpeg", {"contents", "name"}, 1, ...)
    local s = tf.is_tensor(a.contents) and a.contents:item() or a.contents
    return tf.constant(#s >= 3 and s:byte(1) == 0xff and s:byte(2) == 0xd8 and s:byte(3) == 0xff)
  end
  -- }====

  -- {==== raw bytes, compression
  --- Reinterpret the bytes of each string as elements of `out_type`:
  -- [..., n] for input [...]; little_endian (default true);
  -- fixed_length: each string's first bytes, zero-padded.
  -- tf.io.decode_raw(input_bytes, out_type [, {little_endian = true, fixed_length =, name =}])
  function io_.decode_raw(...)
    local a = args("decode_raw", {"input_bytes", "out_type", "little_endian", "fixed_length", "name"}, 2, ...)
    return internal.io_decode_raw(need_string("decode_raw", "input_bytes", a.input_bytes), a.out_type,
                                  a.little_endian ~= false, a.fixed_length or 0)
  end

  local COMPRESSION = {[""] = 0, ZLIB = 1, GZIP = 2}

  --- Inflate each string: compression_type "ZLIB", "GZIP" or "" (none).
  -- tf.io.decode_compressed(bytes [, compression_type] [, {compression_type = "", name =}])
  function io_.decode_compressed(...)
    local a = args("decode_compressed", {"bytes", "compression_type", "name"}, 1, ...)
    local t = COMPRESSION[a.compression_type or ""]
    if t == nil then
      raise(2, "ValueError", "decode_compressed: 'compression_type' must be \"\", \"ZLIB\" or \"GZIP\", got %s",
            tostring(a.compression_type))
    end
    return internal.io_decode_compressed(need_string("decode_compressed", "bytes", a.bytes), t)
  end
  -- }====

  require("tf.io_gfile")(tf)

  -- other engineers' parts of tf.io, each in its own file
  for _, m in ipairs{"tf.io_tfrecord", "tf.io_csv"} do
    if package.searchpath(m, package.path) then require(m)(tf) end
  end
end
