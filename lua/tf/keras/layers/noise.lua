--- Noise and spatial dropout layers: GaussianNoise, GaussianDropout,
-- SpatialDropout1D, SpatialDropout2D. Each acts only with {training = true}
-- and is the identity otherwise.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format

  local function same(_, shape) return shape end

  -- Standard normal noise of x's shape. With x's shape known: tf.random.normal;
  -- otherwise (a graph with unknown dims) Box-Muller over two uniform draws
  -- made for the shape x has when the function runs.
  local function normal_like(x, seed)
    local dims = x:_dims()
    local known = dims ~= nil
    if known then for _, d in ipairs(dims) do if d < 0 then known = false end end end
    if known then return tf.random.normal(dims, {dtype = x.dtype, seed = seed}) end
    local u1 = tf.core.dropout_noise(x, seed)
    local u2 = tf.core.dropout_noise(x, seed and seed + 1 or nil)
    return tf.sqrt(tf.math.log(1 - u1) * -2) * tf.cos(u2 * (2 * math.pi))
  end

  local function check_rate(cname, v, upper_open)
    if type(v) ~= "number" or v < 0 or v > 1 or (upper_open and v == 1) then
      raise("ValueError", sfmt("%s: 'rate' must be a number in [0, %s, got %s", cname, upper_open and "1)" or "1]",
        tostring(v)))
    end
    return v
  end

  -- {==== GaussianNoise
  local GaussianNoise = Layer:extend("GaussianNoise")
  L.GaussianNoise = GaussianNoise
  GaussianNoise.compute_output_shape = same
  GaussianNoise.supports_masking = true
  GaussianNoise._repr_args = {"stddev"}
  --- GaussianNoise{stddev, seed =}: adds N(0, stddev^2) noise in training.
  function GaussianNoise.init(self, opts)
    opts = self:_options(opts, {"stddev", "seed"}, 1)
    local s = opts[1] or opts.stddev
    if type(s) ~= "number" or s < 0 then
      raise("ValueError", sfmt("GaussianNoise: 'stddev' must be a non-negative number, got %s", tostring(s)))
    end
    self.stddev, self.seed = s, opts.seed
  end
  function GaussianNoise.call(self, x, opts)
    if not (opts and opts.training) or self.stddev == 0 then return tf.identity(x) end
    return x + normal_like(x, self.seed) * self.stddev
  end
  function GaussianNoise.get_config(self)
    local c = Layer.get_config(self)
    c.stddev, c.seed = self.stddev, self.seed
    return c
  end
  -- }====

  -- {==== GaussianDropout
  local GaussianDropout = Layer:extend("GaussianDropout")
  L.GaussianDropout = GaussianDropout
  GaussianDropout.compute_output_shape = same
  GaussianDropout.supports_masking = true
  GaussianDropout._repr_args = {"rate"}
  --- GaussianDropout{rate, seed =}: multiplies by 1-centred noise
  -- N(1, rate / (1 - rate)) in training.
  function GaussianDropout.init(self, opts)
    opts = self:_options(opts, {"rate", "seed"}, 1)
    self.rate = check_rate("GaussianDropout", opts[1] or opts.rate, true)
    self.seed = opts.seed
  end
  function GaussianDropout.call(self, x, opts)
    if not (opts and opts.training) or self.rate == 0 then return tf.identity(x) end
    local stddev = math.sqrt(self.rate / (1 - self.rate))
    return x * (normal_like(x, self.seed) * stddev + 1)
  end
  function GaussianDropout.get_config(self)
    local c = Layer.get_config(self)
    c.rate, c.seed = self.rate, self.seed
    return c
  end
  -- }====

  -- {==== SpatialDropout1D / 2D
  local function spatial(name, ndim, noise_shape)
    local C = L.Dropout:extend(name)
    L[name] = C
    C.compute_output_shape = same
    C._repr_args = {"rate"}
    C.init = function(self, opts)
      local keys = {"rate", "seed"}
      if ndim == 4 then keys[#keys + 1] = "data_format" end
      opts = self:_options(opts, keys, 1)
      self.rate = check_rate(name, opts[1] or opts.rate, false)
      self.seed = opts.seed
      local df = opts.data_format or "channels_last"
      if df ~= "channels_last" and df ~= "channels_first" then
        raise("ValueError", sfmt("%s: 'data_format' must be \"channels_last\" or \"channels_first\", got %s", name,
          tostring(df)))
      end
      self.data_format = df
      self.noise_shape = noise_shape(df)
    end
    C.call = function(self, x, opts)
      self:_check_input(x, {ndim = ndim})
      return L.Dropout.call(self, x, opts)
    end
    C.get_config = function(self)
      local c = Layer.get_config(self)
      c.rate, c.seed = self.rate, self.seed
      if ndim == 4 then c.data_format = self.data_format end
      return c
    end
    return C
  end
  --- SpatialDropout1D{rate, seed =}: on (batch, time, channels), drops whole
  -- channels (the same ones at every step) in training; kept ones scaled by
  -- 1 / (1 - rate).
  spatial("SpatialDropout1D", 3, function() return {-1, 1, -1} end)
  --- SpatialDropout2D{rate, data_format = "channels_last", seed =}: on
  -- images, drops whole feature maps in training.
  spatial("SpatialDropout2D", 4, function(df)
    if df == "channels_first" then return {-1, -1, 1, 1} end
    return {-1, 1, 1, -1}
  end)
  -- }====
end
