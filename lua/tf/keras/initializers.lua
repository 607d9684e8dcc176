--- tf.keras.initializers: Keras's weight initializers. Each is an object
-- called as `init(shape, dtype)` (shape a table of sizes) returning a
-- tensor; random ones draw from the seedable generator (tf.random.set_seed,
-- or their own `seed`). Layers take them as objects or by name
-- ("glorot_uniform", "zeros", "ones", "he_normal", ...).
return function(tf)
  local keras = tf.keras
  local I = {}
  keras.initializers = I
  local raise = tf.core.internal.keras.raise

  local Init = {}
  Init.__index = Init
  Init.__name = "tf.keras.initializers.Initializer"
  --- The shape an initializer is called with, as a Lua list: a list of
  -- non-negative integers, a fully known TensorShape or a 1-D integer tensor.
  local function shape_list(self, shape)
    local what = self._class .. ": 'shape'"
    if tf.is_tensor(shape) then
      if shape.rank ~= 1 or not (shape.dtype == tf.int32 or shape.dtype == tf.int64) then
        raise("TypeError", ("%s expected a list of non-negative integers, a TensorShape or a 1-D integer tensor, " ..
          "got a %s tensor of shape %s"):format(what, shape.dtype.name, tostring(shape.shape)), 3)
      end
      shape = shape:totable()
    elseif type(shape) == "table" and type(shape.as_list) == "function" then
      shape = shape:as_list()
      if shape == nil then raise("ValueError", what .. " must be fully known, got an unknown rank", 3) end
    elseif type(shape) ~= "table" then
      raise("TypeError", ("%s expected a list of non-negative integers, a TensorShape or a 1-D integer tensor, " ..
        "got %s"):format(what, type(shape)), 3)
    end
    local list = {}
    for i, d in ipairs(shape) do
      if math.type(d) ~= "integer" or d < 0 then
        raise("ValueError", ("%s must hold non-negative integers, got %s at %d"):format(what, tostring(d), i), 3)
      end
      list[i] = d
    end
    return list
  end

  function Init.__call(self, shape, dtype)
    return self:_make(shape_list(self, shape), tf.dtypes.as_dtype(dtype or tf.float32))
  end
  function Init.__tostring(self) return ("<tf.keras.initializers.%s>"):format(self._class) end

  local function check_opts(class, opts, accepted)
    if opts == nil then return {} end
    if type(opts) ~= "table" then
      raise("TypeError", ("%s: options must be a table, got %s"):format(class, type(opts)), 3)
    end
    for k in pairs(opts) do
      if type(k) ~= "number" and not accepted[k] then
        local names = {}
        for n in pairs(accepted) do names[#names + 1] = n end
        table.sort(names)
        raise("TypeError", ("%s: unknown option '%s' (accepted: %s)"):format(class, tostring(k),
          table.concat(names, ", ")), 3)
      end
    end
    return opts
  end

  -- Keras's fan computation: 1-D: (n, n); 2-D: (in, out); conv kernels
  -- (kh, kw, ..., in, out): receptive field times in / out.
  local function fans(shape)
    local n = #shape
    if n < 1 then return 1, 1 end
    if n == 1 then return shape[1], shape[1] end
    if n == 2 then return shape[1], shape[2] end
    local rf = 1
    for i = 1, n - 2 do rf = rf * shape[i] end
    return shape[n - 1] * rf, shape[n] * rf
  end

  local function uniform(shape, dtype, limit_lo, limit_hi, seed)
    return tf.random.uniform(shape, {minval = limit_lo, maxval = limit_hi, dtype = dtype, seed = seed})
  end

  -- Truncated normal (values past 2 stddev redrawn): rejected entries are
  -- redrawn 8 times (an entry survives all rounds with probability
  -- 0.0455^9, about 1e-12; it is then clipped), with no value read back, so
  -- it also works while tf.fn traces.
  local function truncated_normal(shape, dtype, mean, stddev, seed)
    local x = tf.random.normal(shape, {dtype = dtype, seed = seed})
    for _ = 1, 8 do
      local bad = tf.greater(tf.abs(x), 2)
      x = tf.where(bad, tf.random.normal(shape, {dtype = dtype}), x)
    end
    return tf.clip_by_value(x, -2, 2) * stddev + mean
  end

  local function class(name, accepted, make)
    local acc = {}
    for _, k in ipairs(accepted) do acc[k] = true end
    local C = function(opts)
      opts = check_opts(name, opts, acc)
      local self = setmetatable({_class = name}, Init)
      for k, v in pairs(opts) do self[k] = v end
      self._make = make
      return self
    end
    I[name] = C
    return C
  end

  class("Zeros", {}, function(_, shape, dtype) return tf.zeros(shape, dtype) end)
  class("Ones", {}, function(_, shape, dtype) return tf.ones(shape, dtype) end)
  class("Constant", {"value", 1}, function(self, shape, dtype)
    return tf.fill(shape, tf.constant(self.value or self[1] or 0, dtype))
  end)
  class("RandomUniform", {"minval", "maxval", "seed"}, function(self, shape, dtype)
    return uniform(shape, dtype, self.minval or -0.05, self.maxval or 0.05, self.seed)
  end)
  class("RandomNormal", {"mean", "stddev", "seed"}, function(self, shape, dtype)
    return tf.random.normal(shape, {mean = self.mean or 0, stddev = self.stddev or 0.05, dtype = dtype,
                                    seed = self.seed})
  end)
  class("TruncatedNormal", {"mean", "stddev", "seed"}, function(self, shape, dtype)
    return truncated_normal(shape, dtype, self.mean or 0, self.stddev or 0.05, self.seed)
  end)

  --- VarianceScaling{scale=1, mode="fan_in", distribution="truncated_normal", seed=}
  local function vs_make(self, shape, dtype)
    local fan_in, fan_out = fans(shape)
    local scale = self.scale or 1.0
    local mode = self.mode or "fan_in"
    if mode == "fan_in" then scale = scale / math.max(1, fan_in)
    elseif mode == "fan_out" then scale = scale / math.max(1, fan_out)
    elseif mode == "fan_avg" then scale = scale / math.max(1, (fan_in + fan_out) / 2)
    else
      raise("ValueError", ("VarianceScaling: mode must be fan_in, fan_out or fan_avg, got '%s'"):format(
        tostring(mode)), 3)
    end
    local dist = self.distribution or "truncated_normal"
    if dist == "uniform" then
      local limit = math.sqrt(3 * scale)
      return uniform(shape, dtype, -limit, limit, self.seed)
    elseif dist == "truncated_normal" then
      -- stddev of a unit normal truncated to [-2, 2]
      return truncated_normal(shape, dtype, 0, math.sqrt(scale) / 0.87962566103423978, self.seed)
    elseif dist == "untruncated_normal" or dist == "normal" then
      return tf.random.normal(shape, {stddev = math.sqrt(scale), dtype = dtype, seed = self.seed})
    end
    raise("ValueError", ("VarianceScaling: unknown distribution '%s'"):format(tostring(dist)), 3)
  end
  class("VarianceScaling", {"scale", "mode", "distribution", "seed"}, vs_make)

  local function vs_preset(name, scale, mode, dist)
    class(name, {"seed"}, function(self, shape, dtype)
      return vs_make({scale = scale, mode = mode, distribution = dist, seed = self.seed}, shape, dtype)
    end)
  end
  vs_preset("GlorotUniform", 1.0, "fan_avg", "uniform")
  vs_preset("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
  vs_preset("HeUniform", 2.0, "fan_in", "uniform")
  vs_preset("HeNormal", 2.0, "fan_in", "truncated_normal")
  vs_preset("LecunUniform", 1.0, "fan_in", "uniform")
  vs_preset("LecunNormal", 1.0, "fan_in", "truncated_normal")

  --- Orthogonal{gain = 1, seed =}: a (rows, cols) matrix (rows the product
  -- of all dims but the last) with orthonormal columns (or rows, when there
  -- are fewer rows), from the QR decomposition of a normal sample with
  -- R's diagonal made positive (Keras's), times gain.
  class("Orthogonal", {"gain", "seed"}, function(self, shape, dtype)
    if #shape < 2 then
      raise("ValueError", ("Orthogonal: the tensor to initialize must be at least two-dimensional. Received: " ..
        "shape={%s}"):format(table.concat(shape, ", ")), 3)
    end
    local rows = 1
    for i = 1, #shape - 1 do rows = rows * shape[i] end
    local cols = shape[#shape]
    local work = (dtype == tf.float64) and tf.float64 or tf.float32
    local a = tf.random.normal(rows < cols and {cols, rows} or {rows, cols}, {dtype = work, seed = self.seed})
    local q, r = tf.linalg.qr(a)
    q = q * tf.sign(tf.linalg.diag_part(r))
    if rows < cols then q = tf.transpose(q) end
    q = tf.reshape(q * (self.gain or 1.0), shape)
    if q.dtype ~= dtype then q = tf.cast(q, dtype) end
    return q
  end)

  local BY_NAME = {
    zeros = "Zeros", ones = "Ones", constant = "Constant", random_uniform = "RandomUniform",
    uniform = "RandomUniform", random_normal = "RandomNormal", normal = "RandomNormal",
    truncated_normal = "TruncatedNormal", variance_scaling = "VarianceScaling",
    glorot_uniform = "GlorotUniform", glorot_normal = "GlorotNormal", he_uniform = "HeUniform",
    he_normal = "HeNormal", lecun_uniform = "LecunUniform", lecun_normal = "LecunNormal",
    orthogonal = "Orthogonal",
  }
  for k, v in pairs(BY_NAME) do I[k] = I[v] end

  --- An initializer from a name, an initializer object or a function
  -- (shape, dtype) -> tensor.
  function I.get(identifier)
    if type(identifier) == "function" then return identifier end
    if getmetatable(identifier) == Init then return identifier end
    if type(identifier) == "string" then
      local cname = BY_NAME[identifier] or (rawget(I, identifier) and identifier)
      if cname and I[cname] then return I[cname]() end
      local known = {}
      for k in pairs(BY_NAME) do known[#known + 1] = k end
      table.sort(known)
      raise("ValueError", ("Unknown initializer: '%s' (known: %s)"):format(identifier, table.concat(known, ", ")), 2)
    end
    raise("TypeError", ("Could not interpret initializer identifier: %s"):format(tostring(identifier)), 2)
  end
end
