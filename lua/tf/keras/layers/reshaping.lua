--- Reshaping layers: Flatten, Reshape.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format

  local Flatten = Layer:extend("Flatten")
  function Flatten.compute_output_shape(_, shape)
    local d = shape:as_list()
    local n = 1
    for i = 2, #d do
      if d[i] < 0 then n = -1; break end
      n = n * d[i]
    end
    return tf.TensorShape({d[1], #d == 1 and 1 or n})
  end
  L.Flatten = Flatten
  Flatten._repr_args = {}
  --- Flatten{}: (batch, d1, d2, ...) -> (batch, d1 * d2 * ...).
  function Flatten.init(self, opts) self:_options(opts, {"data_format"}, 0) end
  function Flatten.get_config(self)
    local c = Layer.get_config(self)
    c.data_format = "channels_last"
    return c
  end
  function Flatten.call(self, x)
    self:_check_input(x, {min_ndim = 1})
    local dims = x:_dims()
    if #dims == 1 then return tf.expand_dims(x, -1) end
    local rest = 1
    for i = 2, #dims do
      if dims[i] < 0 then rest = nil; break end
      rest = rest * dims[i]
    end
    if rest then return tf.reshape(x, {-1, rest}) end
    if dims[1] >= 0 then return tf.reshape(x, {dims[1], -1}) end
    return tf.reshape(x, {tf.shape(x)[1], -1})   -- the batch read when the graph runs, as Keras
  end

  local Reshape = Layer:extend("Reshape")
  function Reshape.compute_output_shape(self, shape)
    local d = shape:as_list()
    local out, known, at = {d[1]}, 1, nil
    for i, t in ipairs(self.target_shape) do
      out[i + 1] = t
      if t == -1 then at = i + 1 else known = known * t end
    end
    if at then
      local total = 1
      for i = 2, #d do
        if d[i] < 0 then total = nil; break end
        total = total * d[i]
      end
      out[at] = total and total // known or -1
    end
    return tf.TensorShape(out)
  end
  L.Reshape = Reshape
  Reshape._repr_args = {"target_shape"}
  --- Reshape{target_shape}: (batch, ...) -> (batch, target_shape...); one
  -- entry of target_shape may be -1.
  function Reshape.init(self, opts)
    opts = self:_options(opts, {"target_shape"}, 1)
    local t = opts[1] or opts.target_shape
    if type(t) ~= "table" then
      raise("TypeError", sfmt("Reshape: 'target_shape' must be a table of integers, got %s", type(t)), 3)
    end
    local unknown = 0
    for i, d in ipairs(t) do
      if math.type(d) ~= "integer" or (d < 1 and d ~= -1) then
        raise("ValueError", sfmt("Reshape: target_shape[%d] must be a positive integer or -1, got %s", i,
          tostring(d)), 3)
      end
      if d == -1 then unknown = unknown + 1 end
    end
    if unknown > 1 then raise("ValueError", "Reshape: target_shape may have only one -1 entry", 3) end
    self.target_shape = {table.unpack(t)}
  end
  function Reshape.get_config(self)
    local c = Layer.get_config(self)
    c.target_shape = {table.unpack(self.target_shape)}
    return c
  end
  function Reshape.call(self, x)
    local dims = x:_dims()
    local t = {}
    local known, unknown_at = 1, nil
    for i, d in ipairs(self.target_shape) do
      t[i] = d
      if d == -1 then unknown_at = i else known = known * d end
    end
    local total = 1
    for i = 2, #dims do
      if dims[i] < 0 then total = nil; break end
      total = total * dims[i]
    end
    if total then
      if unknown_at then
        if total % known ~= 0 then
          raise("ValueError", sfmt("layer \"%s\": total size of new array must be unchanged, input_shape = %s, " ..
            "output_shape = (None, %s)", self.name, tostring(x.shape), table.concat(self.target_shape, ", ")), 3)
        end
        t[unknown_at] = total // known
      elseif total ~= known then
        raise("ValueError", sfmt("layer \"%s\": total size of new array must be unchanged, input_shape = %s, " ..
          "output_shape = (None, %s)", self.name, tostring(x.shape), table.concat(self.target_shape, ", ")), 3)
      end
      table.insert(t, 1, -1)
    else
      -- the batch (when unknown) read when the graph runs
      table.insert(t, 1, dims[1] >= 0 and dims[1] or tf.shape(x)[1])
    end
    return tf.reshape(x, t)
  end
end
