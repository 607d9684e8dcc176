--- Activation layers: Activation, ReLU, LeakyReLU, ELU, PReLU, Softmax.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local A = keras.activations
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format

  local function same(_, shape) return shape end
  local Activation = Layer:extend("Activation")
  Activation.compute_output_shape = same
  L.Activation = Activation
  Activation._repr_args = {"activation"}
  --- Activation{"relu"} (or a function): applies the activation.
  function Activation.init(self, opts)
    if type(opts) == "string" or type(opts) == "function" then opts = {opts} end
    opts = self:_options(opts, {"activation"}, 1)
    self.activation = A.get(opts[1] or opts.activation)
  end
  function Activation.call(self, x) return self.activation(x) end

  local ReLU = Layer:extend("ReLU")
  ReLU.compute_output_shape = same
  L.ReLU = ReLU
  ReLU._repr_args = {"max_value", "negative_slope", "threshold"}
  --- ReLU{max_value=, negative_slope=0, threshold=0}
  function ReLU.init(self, opts)
    opts = self:_options(opts, {"max_value", "negative_slope", "threshold"}, 0)
    self.max_value, self.negative_slope, self.threshold = opts.max_value, opts.negative_slope or 0, opts.threshold or 0
  end
  function ReLU.call(self, x)
    return A.relu(x, {alpha = self.negative_slope, max_value = self.max_value, threshold = self.threshold})
  end

  -- a config entry: through tf.keras.<kind>.serialize when there is one
  local function ser(kind, v)
    local m = keras[kind]
    if v ~= nil and m and type(m.serialize) == "function" then return m.serialize(m.get(v)) end
    return v
  end

  local LeakyReLU = Layer:extend("LeakyReLU")
  LeakyReLU.compute_output_shape = same
  LeakyReLU.supports_masking = true
  L.LeakyReLU = LeakyReLU
  LeakyReLU._repr_args = {"negative_slope"}
  --- LeakyReLU{negative_slope = 0.3}: x for x >= 0, negative_slope * x
  -- below (Keras 2's name `alpha` is accepted too; layer.alpha reads it).
  function LeakyReLU.init(self, opts)
    opts = self:_options(opts, {"alpha", "negative_slope"}, 0)
    local a = opts.negative_slope
    if a == nil then a = opts.alpha end
    if a == nil then a = 0.3 end
    if type(a) ~= "number" or a < 0 then
      raise("ValueError", sfmt("LeakyReLU: the value of `negative_slope` should be a non-negative number. " ..
        "Received: negative_slope=%s", tostring(a)))
    end
    self.negative_slope = a
    self.alpha = a
  end
  function LeakyReLU.call(self, x) return A.leaky_relu(x, {alpha = self.negative_slope}) end
  function LeakyReLU.get_config(self)
    local c = Layer.get_config(self)
    c.negative_slope = self.negative_slope
    return c
  end

  local ELU = Layer:extend("ELU")
  ELU.compute_output_shape = same
  ELU.supports_masking = true
  L.ELU = ELU
  ELU._repr_args = {"alpha"}
  --- ELU{alpha = 1}: x for x > 0, alpha * (exp(x) - 1) below.
  function ELU.init(self, opts)
    opts = self:_options(opts, {"alpha"}, 0)
    local a = opts.alpha
    if a == nil then a = 1.0 end
    if type(a) ~= "number" then
      raise("ValueError", sfmt("ELU: Alpha of an ELU layer cannot be None, expected a number. Received: %s",
        tostring(a)))
    end
    self.alpha = a
  end
  function ELU.call(self, x) return A.elu(x, {alpha = self.alpha}) end
  function ELU.get_config(self)
    local c = Layer.get_config(self)
    c.alpha = self.alpha
    return c
  end

  local PReLU = Layer:extend("PReLU")
  PReLU.compute_output_shape = same
  PReLU.supports_masking = true
  L.PReLU = PReLU
  PReLU._repr_args = {"shared_axes"}
  --- PReLU{alpha_initializer = "zeros", alpha_regularizer =, alpha_constraint =,
  -- shared_axes =}: x for x >= 0, alpha * x below, with a learned alpha per
  -- input position (batch excluded); shared_axes (1-based, batch excluded,
  -- as Keras's) share one alpha along those axes: PReLU{shared_axes = {1, 2}}
  -- on images learns one alpha per channel.
  function PReLU.init(self, opts)
    opts = self:_options(opts, {"alpha_initializer", "alpha_regularizer", "alpha_constraint", "shared_axes"}, 0)
    rawset(self, "_init_arg", opts.alpha_initializer or "zeros")
    self.alpha_initializer = keras.initializers.get(self._init_arg)
    self.alpha_regularizer = opts.alpha_regularizer
    self.alpha_constraint = opts.alpha_constraint
    local sa = opts.shared_axes
    if math.type(sa) == "integer" then sa = {sa} end
    if sa ~= nil then
      if type(sa) ~= "table" then
        raise("TypeError", sfmt("PReLU: 'shared_axes' must be an integer or a table of them, got %s", type(sa)))
      end
      for _, a in ipairs(sa) do
        if math.type(a) ~= "integer" or a < 1 then
          raise("ValueError", sfmt("PReLU: 'shared_axes' holds 1-based axes after the batch, got %s", tostring(a)))
        end
      end
      sa = {table.unpack(sa)}
    end
    self.shared_axes = sa
  end
  function PReLU.build(self, input_shape)
    local d = input_shape:as_list()
    local shape = {}
    for i = 2, #d do shape[i - 1] = d[i] end
    for _, a in ipairs(self.shared_axes or {}) do
      if a > #shape then
        raise("ValueError", sfmt("layer \"%s\": shared axis %d is out of range for an input of shape %s", self.name, a,
          tostring(input_shape)))
      end
      shape[a] = 1
    end
    for i, n in ipairs(shape) do
      if n < 0 then
        raise("ValueError", sfmt("layer \"%s\": PReLU needs axis %d known (or shared), got input shape %s",
          self.name, i, tostring(input_shape)))
      end
    end
    self.alpha = self:add_weight("alpha", shape, {initializer = self.alpha_initializer,
      regularizer = self.alpha_regularizer, constraint = self.alpha_constraint})
  end
  function PReLU.call(self, x)
    local alpha = self.alpha
    if alpha.dtype ~= x.dtype then alpha = tf.cast(alpha, x.dtype) end
    return tf.relu(x) - alpha * tf.relu(-x)
  end
  function PReLU.get_config(self)
    local c = Layer.get_config(self)
    c.alpha_initializer = ser("initializers", rawget(self, "_init_arg"))
    c.alpha_regularizer = ser("regularizers", self.alpha_regularizer)
    c.alpha_constraint = ser("constraints", self.alpha_constraint)
    c.shared_axes = self.shared_axes and {table.unpack(self.shared_axes)} or nil
    return c
  end

  local Softmax = Layer:extend("Softmax")
  Softmax.compute_output_shape = same
  Softmax.supports_masking = true
  L.Softmax = Softmax
  Softmax._repr_args = {"axis"}
  --- Softmax{axis = -1} (axis may be a table of axes). layer(x, {mask = m}):
  -- positions where the mask is false get a large negative number added
  -- before the softmax (Keras's -1e9, the dtype's lowest for float16), so
  -- their probability is zero.
  function Softmax.init(self, opts)
    opts = self:_options(opts, {"axis"}, 0)
    self.axis = opts.axis or -1
  end
  function Softmax.call(self, x, opts)
    local mask = opts and opts.mask
    if mask ~= nil then
      local big = (x.dtype == tf.float16) and -65504.0 or -1e9
      local m = tf.cast(mask, x.dtype)
      local mr, xr = #m:_dims(), #x:_dims()
      for _ = mr + 1, xr do m = tf.expand_dims(m, -1) end   -- a (batch, time) mask masks whole steps
      x = x + (1 - m) * big
    end
    if type(self.axis) == "table" then
      return tf.exp(x - tf.reduce_logsumexp(x, {axis = self.axis, keepdims = true}))
    end
    return tf.nn.softmax(x, self.axis)
  end
  function Softmax.get_config(self)
    local c = Layer.get_config(self)
    c.axis = type(self.axis) == "table" and {table.unpack(self.axis)} or self.axis
    return c
  end
end
