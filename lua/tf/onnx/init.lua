--- tf.onnx: ONNX models in and out (docs/onnx.md).
--
-- tf.onnx.load(path_or_bytes[, opts]) -> a concrete function (lua/tf/onnx/import.lua)
-- tf.onnx.save(fn, path, opts)        -> writes an ONNX model (lua/tf/onnx/export.lua, docs/onnx_export.md)
return function(tf)
  local onnx = tf.onnx or {}
  tf.onnx = onnx

  --- Load an ONNX model from a file path, or from its bytes (a string that
  -- starts like a serialized ModelProto, or opts.bytes = true), and return a
  -- concrete function traced from it.
  function onnx.load(src, opts)
    return require("tf.onnx.import").load(tf, src, opts)
  end

  --- The operators the importer understands: {[op_type] = true}.
  function onnx.supported_ops()
    return require("tf.onnx.import").supported_ops()
  end

  if package.searchpath("tf.onnx.export", package.path) then
    onnx.save = require("tf.onnx.export").save
  end
end
