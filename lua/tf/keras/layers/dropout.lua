--- Dropout.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format

  local Dropout = Layer:extend("Dropout")
  function Dropout.compute_output_shape(_, shape) return shape end
  L.Dropout = Dropout
  Dropout._repr_args = {"rate"}
  --- Dropout{rate, noise_shape=, seed=}: with {training = true}, zeroes each
  -- entry with probability `rate` and scales the others by 1 / (1 - rate);
  -- otherwise the identity.
  function Dropout.init(self, opts)
    opts = self:_options(opts, {"rate", "noise_shape", "seed"}, 1)
    local rate = opts[1] or opts.rate
    if type(rate) ~= "number" or rate < 0 or rate > 1 then
      raise("ValueError", sfmt("Dropout: 'rate' must be a number in [0, 1], got %s", tostring(rate)), 3)
    end
    self.rate, self.noise_shape, self.seed = rate, opts.noise_shape, opts.seed
  end
  --- With {training = true}: tf.nn.dropout(x, rate, {noise_shape=, seed=})
  -- (noise_shape entries -1 take x's dim), which draws its noise for the
  -- shape x has when it runs, so a batch of None inside tf.fn works.
  -- Without tf.nn.dropout (older engines) the mask comes from
  -- tf.random.uniform, which needs x's shape known.
  function Dropout.get_config(self)
    local c = Layer.get_config(self)
    c.rate, c.seed = self.rate, self.seed
    c.noise_shape = self.noise_shape and {table.unpack(self.noise_shape)} or nil
    return c
  end
  function Dropout.call(self, x, opts)
    if not (opts and opts.training) or self.rate == 0 then return tf.identity(x) end
    if self.rate == 1 then return tf.zeros_like(x) end
    if tf.nn.dropout then
      return tf.nn.dropout(x, self.rate, {noise_shape = self.noise_shape, seed = self.seed})
    end
    local dims = x:_dims()
    local shape = {}
    local ns = self.noise_shape
    for i = 1, #dims do
      local d = dims[i]
      if ns and ns[i] ~= nil and ns[i] >= 0 then d = ns[i] end
      if d < 0 then
        raise("ValueError", sfmt("layer \"%s\": Dropout needs tf.nn.dropout for inputs of unknown shape %s",
          self.name, tostring(x.shape)), 3)
      end
      shape[i] = d
    end
    local u = tf.random.uniform(shape, {dtype = x.dtype, seed = self.seed})
    local keep = tf.cast(tf.greater_equal(u, self.rate), x.dtype)
    return x * keep * (1 / (1 - self.rate))
  end
end
