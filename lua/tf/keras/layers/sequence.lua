--- Sequence helpers: Masking, RepeatVector, Permute.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format

  -- {==== Masking
  local Masking = Layer:extend("Masking")
  L.Masking = Masking
  Masking._repr_args = {"mask_value"}
  Masking.supports_masking = true
  --- Masking{mask_value = 0.0}: marks the timesteps whose features all
  -- equal mask_value as masked (the mask is any(x ~= mask_value) over the
  -- last axis) and zeroes them in the output, as Keras.
  function Masking.init(self, opts)
    opts = self:_options(opts, {"mask_value"}, 1)
    local v = opts[1]
    if v == nil then v = opts.mask_value end
    if v == nil then v = 0.0 end
    if type(v) ~= "number" then
      raise("TypeError", sfmt("Masking: 'mask_value' must be a number, got %s", type(v)))
    end
    self.mask_value = v
  end
  local function keep(self, x) return tf.reduce_any(tf.not_equal(x, tf.cast(self.mask_value, x.dtype)), {axis = -1}) end
  function Masking.compute_mask(self, inputs, _) return keep(self, inputs) end
  function Masking.call(self, x)
    local k = tf.expand_dims(keep(self, x), -1)
    return x * tf.cast(k, x.dtype)
  end
  function Masking.compute_output_shape(_, shape) return shape end
  function Masking.get_config(self)
    local c = Layer.get_config(self)
    c.mask_value = self.mask_value
    return c
  end
  -- }====

  -- {==== RepeatVector
  local RepeatVector = Layer:extend("RepeatVector")
  L.RepeatVector = RepeatVector
  RepeatVector._repr_args = {"n"}
  --- RepeatVector{n}: (batch, features) -> (batch, n, features).
  function RepeatVector.init(self, opts)
    opts = self:_options(opts, {"n"}, 1)
    local n = opts[1] or opts.n
    if math.type(n) ~= "integer" or n < 1 then
      raise("TypeError", sfmt("RepeatVector: expected `n` to be a positive integer. Received: n=%s", tostring(n)))
    end
    self.n = n
  end
  function RepeatVector.call(self, x)
    self:_check_input(x, {ndim = 2})
    return tf.tile(tf.expand_dims(x, 2), {1, self.n, 1})
  end
  function RepeatVector.compute_output_shape(self, shape)
    local d = shape:as_list()
    return tf.TensorShape({d[1], self.n, d[2]})
  end
  function RepeatVector.get_config(self)
    local c = Layer.get_config(self)
    c.n = self.n
    return c
  end
  -- }====

  -- {==== Permute
  local Permute = Layer:extend("Permute")
  L.Permute = Permute
  Permute._repr_args = {"dims"}
  Permute.supports_masking = false
  --- Permute{dims}: permutes the non-batch axes; dims are 1-based and
  -- leave out the batch axis (Keras's are too): Permute{{2, 1}} swaps the
  -- two axes after the batch.
  function Permute.init(self, opts)
    opts = self:_options(opts, {"dims"}, 1)
    local dims = opts[1] or opts.dims
    local ok = type(dims) == "table" and #dims > 0
    local seen = {}
    if ok then
      for _, d in ipairs(dims) do
        if math.type(d) ~= "integer" or d < 1 or d > #dims or seen[d] then ok = false; break end
        seen[d] = true
      end
    end
    if not ok then
      local txt = type(dims) == "table" and ("{" .. table.concat(dims, ", ") .. "}") or tostring(dims)
      raise("ValueError", sfmt("Permute: invalid permutation argument `dims` for Permute Layer. The set of indices " ..
        "in `dims` must be consecutive and start from 1. Received dims=%s", txt))
    end
    self.dims = {table.unpack(dims)}
  end
  function Permute.call(self, x)
    self:_check_input(x, {ndim = #self.dims + 1})
    local perm = {1}
    for i, d in ipairs(self.dims) do perm[i + 1] = d + 1 end
    return tf.transpose(x, perm)
  end
  function Permute.compute_output_shape(self, shape)
    local d = shape:as_list()
    local out = {d[1]}
    for i, p in ipairs(self.dims) do out[i + 1] = d[p + 1] end
    return tf.TensorShape(out)
  end
  function Permute.get_config(self)
    local c = Layer.get_config(self)
    c.dims = {table.unpack(self.dims)}
    return c
  end
  -- }====
end
