--- tf.keras.utils: to_categorical.
return function(tf)
  tf.keras = tf.keras or {}
  tf.keras.utils = tf.keras.utils or {}
  local utils = tf.keras.utils
  if utils._train then return end
  utils._train = true
  local raise = tf.core.internal.keras and tf.core.internal.keras.raise or function(k, m) tf.errors.raise(k, m, 3) end
  local sfmt = string.format

  --- to_categorical(y, num_classes [, dtype = "float32"]) or
  -- to_categorical{y, num_classes, dtype =}: one-hot rows of 1-based class
  -- ids (label k sets column k, as SparseCategoricalCrossentropy reads
  -- label k as class k). y: a tensor or a Lua array of integers; a trailing
  -- axis of size 1 is dropped. num_classes defaults to the largest label
  -- (eagerly). A label outside 1..num_classes is an InvalidArgumentError.
  function utils.to_categorical(y, num_classes, dtype)
    if type(y) == "table" and not tf.is_tensor(y) and getmetatable(y) == nil and (y.num_classes ~= nil or
        y.dtype ~= nil) then
      y, num_classes, dtype = y[1], y.num_classes or y[2], y.dtype
    end
    if tf.is_variable(y) then y = y:value() end
    if not tf.is_tensor(y) then y = tf.constant(y, tf.int64) end
    if y.dtype == tf.float32 or y.dtype == tf.float64 then y = tf.cast(y, tf.int64) end
    local r = y.shape:rank()
    if r and r > 1 and y.shape[r] == 1 then y = tf.squeeze(y, -1) end
    local tracing = tf.core.is_tracing()
    if num_classes == nil then
      if tracing then raise("ValueError", "to_categorical: give num_classes inside a tf.fn") end
      num_classes = tf.reduce_max(y):item()
    end
    if math.type(num_classes) ~= "integer" or num_classes < 1 then
      raise("ValueError", sfmt("to_categorical: num_classes must be a positive integer, got %s", tostring(num_classes)))
    end
    dtype = dtype or tf.float32
    if type(dtype) == "string" then
      dtype = tf[dtype] or raise("TypeError", "to_categorical: unknown dtype " .. dtype)
    end
    local out = tf.one_hot(y, num_classes, {dtype = dtype})
    if not tracing then
      local flat = tf.reshape(y, {-1}):totable()
      for i, v in ipairs(flat) do
        if v < 1 or v > num_classes then
          raise("InvalidArgumentError", sfmt("to_categorical: labels are 1-based class ids in 1..%d, got %d at " ..
            "position %d (of the flattened labels)", num_classes, v, i))
        end
      end
    else
      -- in a graph: the losses' label check, tied into the result
      local checked = tf.nn.sparse_softmax_cross_entropy_with_logits(tf.cast(tf.reshape(y, {-1}), tf.int64),
        tf.zeros_like(tf.reshape(tf.cast(out, tf.float32), {-1, num_classes})))
      out = tf.where(tf.math.is_nan(tf.reduce_sum(checked)), out, out)
    end
    return out
  end
end
