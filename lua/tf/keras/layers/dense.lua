--- Dense: activation(x . kernel + bias) on the last axis.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format
  local A = keras.activations
  local U = require("tf.keras.layers.util")(tf)

  local Dense = Layer:extend("Dense")
  L.Dense = Dense
  Dense._repr_args = {"units", "activation", "use_bias"}

  local REG = {"kernel_regularizer", "bias_regularizer", "kernel_constraint", "bias_constraint"}

  --- Dense{units, activation=, use_bias=true, kernel_initializer="glorot_uniform",
  -- bias_initializer="zeros", kernel_regularizer=, bias_regularizer=,
  -- activity_regularizer=, kernel_constraint=, bias_constraint=}:
  -- activation(x . kernel + bias) on the last axis.
  function Dense.init(self, opts)
    opts = self:_options(opts, {"units", "activation", "use_bias", "kernel_initializer", "bias_initializer",
                                table.unpack(REG)}, 1)
    U.reg_con(self, opts, REG)
    self.units = U.positive_int("Dense", "units", opts[1] or opts.units)
    self.activation = A.get(opts.activation)
    self.use_bias = opts.use_bias ~= false
    self.kernel_initializer = keras.initializers.get(opts.kernel_initializer or "glorot_uniform")
    self.bias_initializer = keras.initializers.get(opts.bias_initializer or "zeros")
  end

  function Dense.build(self, input_shape)
    local n = input_shape:rank()
    if n and n < 2 then
      raise("ValueError", sfmt("Input 0 of layer \"%s\" is incompatible with the layer: expected min_ndim=2, " ..
        "found ndim=%d. Full shape received: %s", self.name, n, tostring(input_shape)), 4)
    end
    local last = n and input_shape[-1]
    if not last then
      raise("ValueError", sfmt("layer \"%s\": the last dimension of the inputs to a Dense layer should be " ..
        "defined. Found None. Full input shape received: %s", self.name, tostring(input_shape)), 4)
    end
    self.kernel = self:add_weight("kernel", {last, self.units}, {initializer = self.kernel_initializer,
      regularizer = self.kernel_regularizer, constraint = self.kernel_constraint})
    if self.use_bias then
      self.bias = self:add_weight("bias", {self.units}, {initializer = self.bias_initializer,
        regularizer = self.bias_regularizer, constraint = self.bias_constraint})
    end
  end

  function Dense.compute_output_shape(self, shape)
    local d = shape:as_list()
    d[#d] = self.units
    return tf.TensorShape(d)
  end

  function Dense.call(self, x)
    if x.dtype ~= self.compute_dtype then x = tf.cast(x, self.compute_dtype) end
    local in_dim = self.kernel.shape[1]
    self:_check_input(x, {min_ndim = 2, axes = {[-1] = in_dim}})
    local dims = x:_dims()
    local y
    if #dims == 2 then
      y = tf.matmul(x, self.kernel)
    else
      -- (..., in) -> (-1, in) . kernel -> (..., units)
      local outer, unknown = {}, 0
      for i = 1, #dims - 1 do
        outer[i] = dims[i]
        if dims[i] < 0 then unknown = unknown + 1 end
      end
      if unknown > 1 then
        raise("ValueError", sfmt("layer \"%s\": inputs of rank > 2 may have one unknown dimension, got %s",
          self.name, tostring(x.shape)), 3)
      end
      outer[#outer + 1] = self.units
      y = tf.reshape(tf.matmul(tf.reshape(x, {-1, in_dim}), self.kernel), outer)
    end
    if self.use_bias then y = y + self.bias end
    return self:_activity_regularize(self.activation(y))
  end

  function Dense.get_config(self)
    local c = Layer.get_config(self)
    c.units, c.use_bias = self.units, self.use_bias
    c.activation = U.ser_activation(self.activation)
    c.kernel_initializer = U.ser_initializer(self.kernel_initializer)
    c.bias_initializer = U.ser_initializer(self.bias_initializer)
    return U.config_reg_con(self, c, REG)
  end
end
