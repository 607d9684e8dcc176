--- BatchNormalization.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format
  local U = require("tf.keras.layers.util")(tf)

  local BN = Layer:extend("BatchNormalization")
  function BN.compute_output_shape(_, shape) return shape end
  L.BatchNormalization = BN
  BN._repr_args = {"axis", "momentum", "epsilon"}

  --- BatchNormalization{axis=-1, momentum=0.99, epsilon=1e-3, center=true,
  -- scale=true, beta_initializer="zeros", gamma_initializer="ones",
  -- moving_mean_initializer="zeros", moving_variance_initializer="ones"}.
  -- With {training = true}: normalizes with the batch's mean and (biased)
  -- variance over every axis but `axis`, and moves the moving statistics:
  -- moving = moving * momentum + batch * (1 - momentum). Otherwise (and when
  -- the layer is not trainable) it normalizes with the moving statistics.
  -- gamma and beta are trainable; moving_mean and moving_variance are not.
  function BN.init(self, opts)
    opts = self:_options(opts, {"axis", "momentum", "epsilon", "center", "scale", "beta_initializer",
                                "gamma_initializer", "moving_mean_initializer", "moving_variance_initializer",
                                "beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"}, 0)
    U.reg_con(self, opts, {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"})
    self.axis = opts.axis or -1
    self.momentum = opts.momentum or 0.99
    self.epsilon = opts.epsilon or 1e-3
    self.center = opts.center ~= false
    self.scale = opts.scale ~= false
    local get = keras.initializers.get
    self.beta_initializer = get(opts.beta_initializer or "zeros")
    self.gamma_initializer = get(opts.gamma_initializer or "ones")
    self.moving_mean_initializer = get(opts.moving_mean_initializer or "zeros")
    self.moving_variance_initializer = get(opts.moving_variance_initializer or "ones")
  end

  function BN.build(self, input_shape)
    local n = input_shape:rank()
    if not n then raise("ValueError", sfmt("layer \"%s\": the input rank must be known", self.name), 4) end
    local a = U.axis_of(self, n, self.axis)
    local c = input_shape[a]
    if not c then
      raise("ValueError", sfmt("layer \"%s\": axis %d of the input should be defined. Found None. Full input " ..
        "shape received: %s", self.name, self.axis, tostring(input_shape)), 4)
    end
    self._axis, self._rank, self._size = a, n, c
    if self.scale then
      self.gamma = self:add_weight("gamma", {c}, {initializer = self.gamma_initializer,
        regularizer = self.gamma_regularizer, constraint = self.gamma_constraint})
    end
    if self.center then
      self.beta = self:add_weight("beta", {c}, {initializer = self.beta_initializer,
        regularizer = self.beta_regularizer, constraint = self.beta_constraint})
    end
    self.moving_mean = self:add_weight("moving_mean", {c},
                                       {initializer = self.moving_mean_initializer, trainable = false})
    self.moving_variance = self:add_weight("moving_variance", {c},
                                           {initializer = self.moving_variance_initializer, trainable = false})
  end

  -- reshape a (C,) vector to broadcast along `axis` of a rank-n input
  local function bshape(self, v)
    if self._axis == self._rank then return v end
    local s = {}
    for i = 1, self._rank do s[i] = 1 end
    s[self._axis] = self._size
    return tf.reshape(v, s)
  end

  -- mixed precision: statistics and variables stay in the variable dtype
  -- (float32); a float16 input is normalized in float32, cast back (Keras)
  BN._autocast_variables = false

  function BN.call(self, x, opts)
    self:_check_input(x, {ndim = self._rank, axes = {[self._axis] = self._size}})
    local in_dtype = x.dtype
    if in_dtype ~= self.variable_dtype and in_dtype.is_floating then x = tf.cast(x, self.variable_dtype) end
    local training = opts and opts.training and self.trainable
    local mean, var
    if training then
      local axes = {}
      for i = 1, self._rank do if i ~= self._axis then axes[#axes + 1] = i end end
      mean = tf.reduce_mean(x, {axis = axes, keepdims = true})
      var = tf.reduce_mean(tf.square(x - tf.stop_gradient(mean)), {axis = axes, keepdims = true})
      local m = 1 - self.momentum
      local flat_mean = tf.reshape(mean, {self._size})
      local flat_var = tf.reshape(var, {self._size})
      self.moving_mean:assign_sub((self.moving_mean - tf.stop_gradient(flat_mean)) * m)
      self.moving_variance:assign_sub((self.moving_variance - tf.stop_gradient(flat_var)) * m)
    else
      mean = bshape(self, self.moving_mean:value())
      var = bshape(self, self.moving_variance:value())
    end
    local inv = tf.math.rsqrt(var + self.epsilon)
    if self.scale then inv = inv * bshape(self, self.gamma:value()) end
    local y = (x - mean) * inv
    if self.center then y = y + bshape(self, self.beta:value()) end
    if y.dtype ~= in_dtype then y = tf.cast(y, in_dtype) end
    return y
  end

  function BN.get_config(self)
    local c = Layer.get_config(self)
    c.axis = type(self.axis) == "table" and {table.unpack(self.axis)} or self.axis
    c.momentum, c.epsilon, c.center, c.scale = self.momentum, self.epsilon, self.center, self.scale
    for _, k in ipairs({"beta_initializer", "gamma_initializer", "moving_mean_initializer",
                        "moving_variance_initializer"}) do
      c[k] = U.ser_initializer(self[k])
    end
    return U.config_reg_con(self, c, {"beta_regularizer", "gamma_regularizer", "beta_constraint", "gamma_constraint"})
  end
end
