--- LayerNormalization.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format
  local U = require("tf.keras.layers.util")(tf)

  local LN = Layer:extend("LayerNormalization")
  function LN.compute_output_shape(_, shape) return shape end
  L.LayerNormalization = LN
  LN._repr_args = {"axis", "epsilon"}

  --- LayerNormalization{axis=-1, epsilon=1e-3, center=true, scale=true,
  -- beta_initializer="zeros", gamma_initializer="ones"}: normalizes each
  -- example over `axis` (an axis or a table of axes) with its own mean and
  -- variance, then scales by gamma and shifts by beta (shaped like those axes).
  function LN.init(self, opts)
    opts = self:_options(opts, {"axis", "epsilon", "center", "scale", "beta_initializer", "gamma_initializer",
                                "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"}, 0)
    U.reg_con(self, opts, {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"})
    self.axis = opts.axis or -1
    self.epsilon = opts.epsilon or 1e-3
    self.center = opts.center ~= false
    self.scale = opts.scale ~= false
    self.beta_initializer = keras.initializers.get(opts.beta_initializer or "zeros")
    self.gamma_initializer = keras.initializers.get(opts.gamma_initializer or "ones")
  end

  function LN.build(self, input_shape)
    local n = input_shape:rank()
    if not n then raise("ValueError", sfmt("layer \"%s\": the input rank must be known", self.name), 4) end
    local axes = type(self.axis) == "table" and self.axis or {self.axis}
    local list, pshape, bs = {}, {}, {}
    for i = 1, n do bs[i] = 1 end
    for i, ax in ipairs(axes) do
      local a = U.axis_of(self, n, ax)
      list[i] = a
      local d = input_shape[a]
      if not d then
        raise("ValueError", sfmt("layer \"%s\": axis %d of the input should be defined. Full input shape " ..
          "received: %s", self.name, ax, tostring(input_shape)), 4)
      end
      bs[a] = d
    end
    table.sort(list)
    for i, a in ipairs(list) do pshape[i] = bs[a] end
    self._axes, self._rank, self._bshape, self._pshape = list, n, bs, pshape
    if self.scale then
      self.gamma = self:add_weight("gamma", pshape, {initializer = self.gamma_initializer,
        regularizer = self.gamma_regularizer, constraint = self.gamma_constraint})
    end
    if self.center then
      self.beta = self:add_weight("beta", pshape, {initializer = self.beta_initializer,
        regularizer = self.beta_regularizer, constraint = self.beta_constraint})
    end
  end

  -- mixed precision: normalized in the variable dtype (float32), cast back (Keras)
  LN._autocast_variables = false

  function LN.call(self, x)
    self:_check_input(x, {ndim = self._rank})
    local in_dtype = x.dtype
    if in_dtype ~= self.variable_dtype and in_dtype.is_floating then x = tf.cast(x, self.variable_dtype) end
    local mean = tf.reduce_mean(x, {axis = self._axes, keepdims = true})
    local var = tf.reduce_mean(tf.square(x - mean), {axis = self._axes, keepdims = true})
    local y = (x - mean) * tf.math.rsqrt(var + self.epsilon)
    if self.scale then y = y * tf.reshape(self.gamma:value(), self._bshape) end
    if self.center then y = y + tf.reshape(self.beta:value(), self._bshape) end
    if y.dtype ~= in_dtype then y = tf.cast(y, in_dtype) end
    return y
  end

  function LN.get_config(self)
    local c = Layer.get_config(self)
    c.axis = type(self.axis) == "table" and {table.unpack(self.axis)} or self.axis
    c.epsilon, c.center, c.scale = self.epsilon, self.center, self.scale
    c.beta_initializer = U.ser_initializer(self.beta_initializer)
    c.gamma_initializer = U.ser_initializer(self.gamma_initializer)
    return U.config_reg_con(self, c, {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"})
  end
end
