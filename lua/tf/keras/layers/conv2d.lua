--- Conv2D (channels_last, NHWC).
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format
  local A = keras.activations
  local U = require("tf.keras.layers.util")(tf)

  local Conv2D = Layer:extend("Conv2D")
  L.Conv2D = Conv2D
  L.Convolution2D = Conv2D
  Conv2D._repr_args = {"filters", "kernel_size", "strides", "padding", "dilation_rate", "activation", "use_bias"}

  function Conv2D.compute_output_shape(self, shape)
    local d = shape:as_list()
    local out = {d[1]}
    for i = 1, 2 do
      out[i + 1] = U.window_out(d[i + 1], self.kernel_size[i], self.strides[i], self.dilation_rate[i], self.padding)
    end
    out[4] = self.filters
    return tf.TensorShape(out)
  end

  --- Conv2D{filters, kernel_size, strides=1, padding="valid", dilation_rate=1,
  -- activation=, use_bias=true, kernel_initializer="glorot_uniform",
  -- bias_initializer="zeros"}; kernel (kh, kw, in, filters).
  function Conv2D.init(self, opts)
    opts = self:_options(opts, {"filters", "kernel_size", "strides", "padding", "dilation_rate", "activation",
                                "use_bias", "kernel_initializer", "bias_initializer", "data_format"}, 2)
    local f = opts[1] or opts.filters
    if math.type(f) ~= "integer" or f < 1 then
      raise("ValueError", sfmt("Conv2D: 'filters' must be a positive integer, got %s", tostring(f)), 3)
    end
    self.filters = f
    local ks = opts[2] or opts.kernel_size
    if ks == nil then raise("TypeError", "Conv2D: 'kernel_size' is required", 3) end
    self.kernel_size = U.pair("Conv2D", "kernel_size", ks)
    self.strides = U.pair("Conv2D", "strides", opts.strides or 1)
    self.dilation_rate = U.pair("Conv2D", "dilation_rate", opts.dilation_rate or 1)
    if (self.strides[1] > 1 or self.strides[2] > 1) and (self.dilation_rate[1] > 1 or self.dilation_rate[2] > 1) then
      raise("ValueError", "Conv2D: strides > 1 not supported in conjunction with dilation_rate > 1", 3)
    end
    self.padding = U.padding("Conv2D", opts.padding)
    U.data_format("Conv2D", opts.data_format)
    self.activation = A.get(opts.activation)
    self.use_bias = opts.use_bias ~= false
    self.kernel_initializer = keras.initializers.get(opts.kernel_initializer or "glorot_uniform")
    self.bias_initializer = keras.initializers.get(opts.bias_initializer or "zeros")
  end

  function Conv2D.build(self, input_shape)
    local n = input_shape:rank()
    if n and n ~= 4 then
      raise("ValueError", sfmt("Input 0 of layer \"%s\" is incompatible with the layer: expected ndim=4, " ..
        "found ndim=%d. Full shape received: %s", self.name, n, tostring(input_shape)), 4)
    end
    local c = n and input_shape[4]
    if not c then
      raise("ValueError", sfmt("layer \"%s\": the channel dimension of the inputs should be defined. Found None. " ..
        "Full input shape received: %s", self.name, tostring(input_shape)), 4)
    end
    self.kernel = self:add_weight("kernel", {self.kernel_size[1], self.kernel_size[2], c, self.filters},
                                  {initializer = self.kernel_initializer})
    if self.use_bias then
      self.bias = self:add_weight("bias", {self.filters}, {initializer = self.bias_initializer})
    end
  end

  function Conv2D.call(self, x)
    if x.dtype ~= self.compute_dtype then x = tf.cast(x, self.compute_dtype) end
    self:_check_input(x, {ndim = 4, axes = {[-1] = self.kernel.shape[3]}})
    local y = tf.nn.conv2d(x, self.kernel, self.strides, self.padding:upper(), {dilations = self.dilation_rate})
    if self.use_bias then y = y + self.bias end
    return self.activation(y)
  end
end
