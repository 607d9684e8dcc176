--- Convolution layers (channels_last): Conv1D, Conv2D, Conv3D,
-- Conv2DTranspose, DepthwiseConv2D, SeparableConv2D. One base class holds
-- what Keras's Conv base holds (window arguments, activation, bias,
-- initializers, regularizers, constraints, get_config); each class names
-- its weights and shapes as Keras does (docs/keras_conv.md).
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format
  local A = keras.activations
  local U = require("tf.keras.layers.util")(tf)

  -- an integer or a table of n positive integers (Keras's normalize_tuple);
  -- errors blamed on the user's constructor call
  local function tuple(cname, arg, v, n, allow_zero, level)
    local lo = allow_zero and 0 or 1
    if math.type(v) == "integer" then
      local t = {}
      for i = 1, n do t[i] = v end
      v = t
    end
    local ok = type(v) == "table" and #v == n
    if ok then
      for i = 1, n do if math.type(v[i]) ~= "integer" or v[i] < lo then ok = false end end
    end
    if not ok then
      raise("ValueError", sfmt("%s: '%s' must be a%s integer or a table of %d of them, got %s", cname, arg,
        allow_zero and " non-negative" or " positive", n,
        type(v) == "table" and ("{" .. table.concat(v, ", ") .. "}") or tostring(v)), level or 5)
    end
    return {table.unpack(v, 1, n)}
  end

  local function any_above_one(t)
    for _, v in ipairs(t) do if v > 1 then return true end end
    return false
  end

  -- the input cast to the layer's compute dtype (mixed precision) or, before
  -- that exists, to the kernel's; a weight cast to the input's dtype
  local function input_dtype(self, x, kernel)
    local cdt = self.compute_dtype
    if cdt == nil then cdt = kernel.dtype end
    if type(cdt) == "string" then cdt = tf.dtypes.as_dtype(cdt) end
    if x.dtype ~= cdt then x = tf.cast(x, cdt) end
    return x
  end
  local function like(w, x)
    if w.dtype ~= x.dtype then return tf.cast(w, x.dtype) end
    return w
  end

  -- {==== the base
  local Conv = Layer:extend("Conv")
  Conv._repr_args = {"filters", "kernel_size", "strides", "padding", "dilation_rate", "activation", "use_bias"}
  Conv._rank = 2
  Conv._has_filters = true

  local COMMON_KEYS = {"kernel_size", "strides", "padding", "data_format", "dilation_rate", "activation", "use_bias",
                       "bias_initializer", "bias_regularizer", "activity_regularizer", "bias_constraint"}

  -- the common Keras Conv arguments; `extra` are the class's own keywords
  function Conv._init_conv(self, opts, extra, npos)
    local name = self._class_name
    local accepted = {}
    for _, k in ipairs(COMMON_KEYS) do accepted[#accepted + 1] = k end
    for _, k in ipairs(extra) do accepted[#accepted + 1] = k end
    opts = self:_options(opts, accepted, npos)
    local n = self._rank
    local p = 1
    if self._has_filters then
      self.filters = opts[1] or opts.filters
      if math.type(self.filters) ~= "integer" or self.filters < 1 then
        raise("ValueError", sfmt("%s: 'filters' must be a positive integer, got %s", name, tostring(self.filters)), 4)
      end
      p = 2
    end
    local ks = opts[p] or opts.kernel_size
    if ks == nil then raise("TypeError", sfmt("%s: 'kernel_size' is required", name), 4) end
    self.kernel_size = tuple(name, "kernel_size", ks, n)
    self.strides = tuple(name, "strides", opts.strides or 1, n)
    self.dilation_rate = tuple(name, "dilation_rate", opts.dilation_rate or 1, n)
    if any_above_one(self.strides) and any_above_one(self.dilation_rate) then
      raise("ValueError", sfmt("%s: strides > 1 not supported in conjunction with dilation_rate > 1", name), 4)
    end
    local pad = type(opts.padding) == "string" and opts.padding:lower()
    if pad == "causal" then
      if name ~= "Conv1D" then
        raise("ValueError", sfmt("%s: `causal` padding is only supported for `Conv1D` and `SeparableConv1D`", name), 4)
      end
      self.padding = "causal"
    else
      self.padding = U.padding(name, opts.padding)
    end
    U.data_format(name, opts.data_format)
    self.activation = A.get(opts.activation)
    self.use_bias = opts.use_bias ~= false
    self.bias_initializer = keras.initializers.get(opts.bias_initializer or "zeros")
    -- the user's identifiers, for get_config
    rawset(self, "_config", {bias_initializer = opts.bias_initializer or "zeros",
                             bias_regularizer = opts.bias_regularizer, bias_constraint = opts.bias_constraint,
                             activity_regularizer = opts.activity_regularizer})
    rawset(self, "_bias_reg", opts.bias_regularizer)
    rawset(self, "_bias_con", opts.bias_constraint)
    self.activity_regularizer = opts.activity_regularizer
    return opts
  end

  -- the input's channel count, after Keras's InputSpec checks
  function Conv._channels(self, input_shape)
    local n = input_shape:rank()
    local want = self._rank + 2
    if n and n ~= want then
      raise("ValueError", sfmt("Input 0 of layer \"%s\" is incompatible with the layer: expected ndim=%d, " ..
        "found ndim=%d. Full shape received: %s", self.name, want, n, tostring(input_shape)), 5)
    end
    local c = n and input_shape[-1]
    if not c then
      raise("ValueError", sfmt("layer \"%s\": the channel dimension of the inputs should be defined. Found None. " ..
        "Full input shape received: %s", self.name, tostring(input_shape)), 5)
    end
    return c
  end

  function Conv._add_bias(self, n)
    if self.use_bias then
      self.bias = self:add_weight("bias", {n}, {initializer = self.bias_initializer, regularizer = self._bias_reg,
                                                constraint = self._bias_con})
    end
  end

  -- bias, activation, activity regularization
  function Conv._finish(self, y)
    if self.use_bias then y = y + like(self.bias, y) end
    y = self.activation(y)
    if self.activity_regularizer ~= nil and self._activity_regularize then self:_activity_regularize(y) end
    return y
  end

  function Conv.compute_output_shape(self, shape)
    local d = shape:as_list()
    local out = {d[1]}
    local pad = self.padding == "causal" and "same" or self.padding
    for i = 1, self._rank do
      out[i + 1] = U.window_out(d[i + 1], self.kernel_size[i], self.strides[i], self.dilation_rate[i], pad)
    end
    out[self._rank + 2] = self:_out_channels(d[#d])
    return tf.TensorShape(out)
  end
  function Conv._out_channels(self) return self.filters end

  function Conv.get_config(self)
    local c = Layer.get_config(self)
    if self._has_filters then c.filters = self.filters end
    c.kernel_size = {table.unpack(self.kernel_size)}
    c.strides = {table.unpack(self.strides)}
    c.padding = self.padding
    c.data_format = "channels_last"
    c.dilation_rate = {table.unpack(self.dilation_rate)}
    c.activation = A.serialize(self.activation) or self.activation
    c.use_bias = self.use_bias
    -- initializers, regularizers and constraints by name ({class_name =, config =})
    for k, v in pairs(self._config) do
      if v ~= nil then
        local kind = k:match("_(%a+)$")
        local m = kind and keras[kind .. "s"]
        if m and type(m.serialize) == "function" and type(m.get) == "function" then v = m.serialize(m.get(v)) end
      end
      c[k] = v
    end
    return c
  end
  -- }====

  -- {==== Conv1D, Conv2D, Conv3D
  local function plain_conv(name, rank)
    local C = Conv:extend(name)
    L[name] = C
    C._rank = rank
    --- {filters, kernel_size, strides=1, padding="valid", dilation_rate=1,
    -- groups=1, activation=, use_bias=true, kernel_initializer="glorot_uniform",
    -- bias_initializer="zeros", kernel_regularizer=, bias_regularizer=,
    -- activity_regularizer=, kernel_constraint=, bias_constraint=}
    function C.init(self, opts)
      opts = self:_init_conv(opts, {"filters", "groups", "kernel_initializer", "kernel_regularizer",
                                    "kernel_constraint"}, 2)
      local g = opts.groups or 1
      if math.type(g) ~= "integer" or g < 1 then
        raise("ValueError", sfmt("%s: 'groups' must be a positive integer, got %s", name, tostring(g)), 3)
      end
      if self.filters % g ~= 0 then
        raise("ValueError", sfmt("%s: The number of filters must be evenly divisible by the number of groups. " ..
          "Received: groups=%d, filters=%d", name, g, self.filters), 3)
      end
      if g > 1 and rank == 3 then
        raise("UnimplementedError", sfmt("%s: groups > 1 is not supported (only Conv1D and Conv2D)", name), 3)
      end
      self.groups = g
      self.kernel_initializer = keras.initializers.get(opts.kernel_initializer or "glorot_uniform")
      self._config.kernel_initializer = opts.kernel_initializer or "glorot_uniform"
      self._config.kernel_regularizer = opts.kernel_regularizer
      self._config.kernel_constraint = opts.kernel_constraint
    end
    function C.build(self, input_shape)
      local c = self:_channels(input_shape)
      if c % self.groups ~= 0 then
        raise("ValueError", sfmt("layer \"%s\": The number of input channels must be evenly divisible by the number " ..
          "of groups. Received groups=%d, but the input has %d channels (full input shape is %s)", self.name,
          self.groups, c, tostring(input_shape)), 4)
      end
      local shape = {table.unpack(self.kernel_size)}
      shape[rank + 1], shape[rank + 2] = c // self.groups, self.filters
      self.kernel = self:add_weight("kernel", shape, {initializer = self.kernel_initializer,
        regularizer = self._config.kernel_regularizer, constraint = self._config.kernel_constraint})
      self:_add_bias(self.filters)
    end
    function C.call(self, x)
      x = input_dtype(self, x, self.kernel)
      local cin = self.kernel.shape[rank + 1] * self.groups
      self:_check_input(x, {ndim = rank + 2, axes = {[-1] = cin}})
      local k = like(self.kernel, x)
      local pad = self.padding:upper()
      local y
      if rank == 1 then
        if pad == "CAUSAL" then
          x = tf.pad(x, {{0, 0}, {(self.kernel_size[1] - 1) * self.dilation_rate[1], 0}, {0, 0}})
          pad = "VALID"
        end
        y = tf.nn.conv1d(x, k, self.strides[1], pad, {dilations = self.dilation_rate[1]})
      elseif rank == 2 then
        y = tf.nn.conv2d(x, k, self.strides, pad, {dilations = self.dilation_rate})
      else
        y = tf.nn.conv3d(x, k, self.strides, pad, {dilations = self.dilation_rate})
      end
      return self:_finish(y)
    end
    function C.get_config(self)
      local c = Conv.get_config(self)
      c.groups = self.groups
      return c
    end
    return C
  end
  plain_conv("Conv1D", 1)
  plain_conv("Conv2D", 2)
  plain_conv("Conv3D", 3)
  L.Convolution1D, L.Convolution2D, L.Convolution3D = L.Conv1D, L.Conv2D, L.Conv3D
  -- }====

  -- {==== Conv2DTranspose
  local Conv2DTranspose = Conv:extend("Conv2DTranspose")
  L.Conv2DTranspose = Conv2DTranspose
  L.Convolution2DTranspose = Conv2DTranspose

  --- Conv2DTranspose{filters, kernel_size, strides=1, padding="valid",
  -- output_padding=nil, dilation_rate=1, activation=, use_bias=true,
  -- kernel_initializer=, bias_initializer=, *_regularizer=, *_constraint=};
  -- kernel (kh, kw, filters, in).
  function Conv2DTranspose.init(self, opts)
    opts = self:_init_conv(opts, {"filters", "output_padding", "kernel_initializer", "kernel_regularizer",
                                  "kernel_constraint"}, 2)
    if opts.output_padding ~= nil then
      local op = tuple("Conv2DTranspose", "output_padding", opts.output_padding, 2, true, 4)
      for i = 1, 2 do
        if op[i] >= self.strides[i] then
          raise("ValueError", sfmt("Conv2DTranspose: Strides {%d, %d} must be greater than output padding {%d, %d}. " ..
            "Received strides={%d, %d}, output_padding={%d, %d}", self.strides[1], self.strides[2], op[1], op[2],
            self.strides[1], self.strides[2], op[1], op[2]), 3)
        end
      end
      self.output_padding = op
    end
    self.kernel_initializer = keras.initializers.get(opts.kernel_initializer or "glorot_uniform")
    self._config.kernel_initializer = opts.kernel_initializer or "glorot_uniform"
    self._config.kernel_regularizer = opts.kernel_regularizer
    self._config.kernel_constraint = opts.kernel_constraint
  end

  -- Keras's deconv_output_length
  local function deconv_len(n, k, padding, output_padding, stride, dilation)
    if n < 0 then return -1 end
    k = k + (k - 1) * (dilation - 1)
    if output_padding == nil then
      if padding == "valid" then return n * stride + math.max(k - stride, 0) end
      return n * stride
    end
    local pad = padding == "same" and k // 2 or 0
    return (n - 1) * stride + k - 2 * pad + output_padding
  end

  function Conv2DTranspose.compute_output_shape(self, shape)
    local d = shape:as_list()
    local op = self.output_padding or {}
    return tf.TensorShape({d[1], deconv_len(d[2], self.kernel_size[1], self.padding, op[1], self.strides[1],
                                            self.dilation_rate[1]),
                           deconv_len(d[3], self.kernel_size[2], self.padding, op[2], self.strides[2],
                                      self.dilation_rate[2]), self.filters})
  end

  function Conv2DTranspose.build(self, input_shape)
    local c = self:_channels(input_shape)
    self.kernel = self:add_weight("kernel", {self.kernel_size[1], self.kernel_size[2], self.filters, c},
      {initializer = self.kernel_initializer, regularizer = self._config.kernel_regularizer,
       constraint = self._config.kernel_constraint})
    self:_add_bias(self.filters)
  end

  function Conv2DTranspose.call(self, x)
    x = input_dtype(self, x, self.kernel)
    self:_check_input(x, {ndim = 4, axes = {[-1] = self.kernel.shape[4]}})
    local d = x:_dims()
    local out = self:compute_output_shape(x.shape):as_list()
    out[1] = d[1] >= 0 and d[1] or -1
    if d[2] < 0 or d[3] < 0 then
      -- height or width known only when the graph runs: Keras's
      -- deconv_output_length over tf.shape(x), the output shape a tensor
      local xs = tf.shape(x)
      local op = self.output_padding or {}
      out[1] = xs[1]
      for s = 1, 2 do
        if d[s + 1] < 0 then
          local n, k, st = xs[s + 1], self.kernel_size[s], self.strides[s]
          k = k + (k - 1) * (self.dilation_rate[s] - 1)
          if op[s] == nil then
            out[s + 1] = self.padding == "valid" and n * st + math.max(k - st, 0) or n * st
          else
            local pad = self.padding == "same" and k // 2 or 0
            out[s + 1] = (n - 1) * st + k - 2 * pad + op[s]
          end
        end
      end
      out = tf.core.internal.shape_arg(out, "Conv2DTranspose", "output_shape")
    end
    local y = tf.nn.conv2d_transpose(x, like(self.kernel, x), out, self.strides, self.padding:upper(),
                                     {dilations = self.dilation_rate})
    return self:_finish(y)
  end

  function Conv2DTranspose.get_config(self)
    local c = Conv.get_config(self)
    c.output_padding = self.output_padding and {table.unpack(self.output_padding)} or nil
    return c
  end
  -- }====

  -- {==== DepthwiseConv2D, SeparableConv2D
  local DepthwiseConv2D = Conv:extend("DepthwiseConv2D")
  L.DepthwiseConv2D = DepthwiseConv2D
  DepthwiseConv2D._has_filters = false
  DepthwiseConv2D._repr_args = {"kernel_size", "strides", "padding", "depth_multiplier", "dilation_rate",
                                "activation", "use_bias"}

  local function depth_multiplier(cname, v)
    v = v or 1
    if math.type(v) ~= "integer" or v < 1 then
      raise("ValueError", sfmt("%s: 'depth_multiplier' must be a positive integer, got %s", cname, tostring(v)), 4)
    end
    return v
  end

  --- DepthwiseConv2D{kernel_size, strides=1, padding="valid", depth_multiplier=1,
  -- dilation_rate=1, activation=, use_bias=true, depthwise_initializer="glorot_uniform",
  -- bias_initializer="zeros", depthwise_regularizer=, bias_regularizer=,
  -- activity_regularizer=, depthwise_constraint=, bias_constraint=};
  -- depthwise_kernel (kh, kw, in, depth_multiplier), bias (in * depth_multiplier).
  function DepthwiseConv2D.init(self, opts)
    opts = self:_init_conv(opts, {"depth_multiplier", "depthwise_initializer", "depthwise_regularizer",
                                  "depthwise_constraint"}, 1)
    self.depth_multiplier = depth_multiplier("DepthwiseConv2D", opts.depth_multiplier)
    self.depthwise_initializer = keras.initializers.get(opts.depthwise_initializer or "glorot_uniform")
    self._config.depthwise_initializer = opts.depthwise_initializer or "glorot_uniform"
    self._config.depthwise_regularizer = opts.depthwise_regularizer
    self._config.depthwise_constraint = opts.depthwise_constraint
  end
  function DepthwiseConv2D._out_channels(self, c) return c >= 0 and c * self.depth_multiplier or -1 end
  function DepthwiseConv2D.build(self, input_shape)
    local c = self:_channels(input_shape)
    self.depthwise_kernel = self:add_weight("depthwise_kernel",
      {self.kernel_size[1], self.kernel_size[2], c, self.depth_multiplier},
      {initializer = self.depthwise_initializer, regularizer = self._config.depthwise_regularizer,
       constraint = self._config.depthwise_constraint})
    self:_add_bias(c * self.depth_multiplier)
  end
  function DepthwiseConv2D.call(self, x)
    x = input_dtype(self, x, self.depthwise_kernel)
    self:_check_input(x, {ndim = 4, axes = {[-1] = self.depthwise_kernel.shape[3]}})
    local y = tf.nn.depthwise_conv2d(x, like(self.depthwise_kernel, x), self.strides, self.padding:upper(),
                                     {dilations = self.dilation_rate})
    return self:_finish(y)
  end
  function DepthwiseConv2D.get_config(self)
    local c = Conv.get_config(self)
    c.depth_multiplier = self.depth_multiplier
    return c
  end

  local SeparableConv2D = Conv:extend("SeparableConv2D")
  L.SeparableConv2D = SeparableConv2D
  L.SeparableConvolution2D = SeparableConv2D
  SeparableConv2D._repr_args = {"filters", "kernel_size", "strides", "padding", "depth_multiplier", "dilation_rate",
                                "activation", "use_bias"}

  --- SeparableConv2D{filters, kernel_size, strides=1, padding="valid",
  -- depth_multiplier=1, dilation_rate=1, activation=, use_bias=true,
  -- depthwise_initializer=, pointwise_initializer=, bias_initializer=,
  -- depthwise/pointwise/bias/activity_regularizer=, depthwise/pointwise/bias_constraint=};
  -- depthwise_kernel (kh, kw, in, mult), pointwise_kernel (1, 1, in * mult, filters), bias (filters).
  function SeparableConv2D.init(self, opts)
    opts = self:_init_conv(opts, {"filters", "depth_multiplier", "depthwise_initializer", "pointwise_initializer",
                                  "depthwise_regularizer", "pointwise_regularizer", "depthwise_constraint",
                                  "pointwise_constraint"}, 2)
    self.depth_multiplier = depth_multiplier("SeparableConv2D", opts.depth_multiplier)
    self.depthwise_initializer = keras.initializers.get(opts.depthwise_initializer or "glorot_uniform")
    self.pointwise_initializer = keras.initializers.get(opts.pointwise_initializer or "glorot_uniform")
    local c = self._config
    c.depthwise_initializer = opts.depthwise_initializer or "glorot_uniform"
    c.pointwise_initializer = opts.pointwise_initializer or "glorot_uniform"
    c.depthwise_regularizer, c.pointwise_regularizer = opts.depthwise_regularizer, opts.pointwise_regularizer
    c.depthwise_constraint, c.pointwise_constraint = opts.depthwise_constraint, opts.pointwise_constraint
  end
  function SeparableConv2D.build(self, input_shape)
    local c = self:_channels(input_shape)
    local cfg = self._config
    self.depthwise_kernel = self:add_weight("depthwise_kernel",
      {self.kernel_size[1], self.kernel_size[2], c, self.depth_multiplier},
      {initializer = self.depthwise_initializer, regularizer = cfg.depthwise_regularizer,
       constraint = cfg.depthwise_constraint})
    self.pointwise_kernel = self:add_weight("pointwise_kernel", {1, 1, c * self.depth_multiplier, self.filters},
      {initializer = self.pointwise_initializer, regularizer = cfg.pointwise_regularizer,
       constraint = cfg.pointwise_constraint})
    self:_add_bias(self.filters)
  end
  function SeparableConv2D.call(self, x)
    x = input_dtype(self, x, self.depthwise_kernel)
    self:_check_input(x, {ndim = 4, axes = {[-1] = self.depthwise_kernel.shape[3]}})
    local y = tf.nn.separable_conv2d(x, like(self.depthwise_kernel, x), like(self.pointwise_kernel, x), self.strides,
                                     self.padding:upper(), {dilations = self.dilation_rate})
    return self:_finish(y)
  end
  function SeparableConv2D.get_config(self)
    local c = Conv.get_config(self)
    c.depth_multiplier = self.depth_multiplier
    return c
  end
  -- }====
end
