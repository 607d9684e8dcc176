--- Pooling layers (channels_last): MaxPooling1D/2D, AveragePooling1D/2D,
-- GlobalAveragePooling1D/2D, GlobalMaxPooling1D/2D.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local U = require("tf.keras.layers.util")(tf)

  -- a positive integer or a table of one (the 1-d pools' arguments)
  local function single(name, arg, v)
    if type(v) == "table" and #v == 1 then v = v[1] end
    return U.positive_int(name, arg, v)
  end

  local function pool_class(name, op, rank)
    local P = Layer:extend(name)
    L[name] = P
    P._repr_args = {"pool_size", "strides", "padding"}
    function P.compute_output_shape(self, shape)
      local d = shape:as_list()
      local out = {d[1]}
      for i = 1, rank do
        out[i + 1] = U.window_out(d[i + 1], self.pool_size[i], self.strides[i], 1, self.padding)
      end
      out[rank + 2] = d[rank + 2]
      return tf.TensorShape(out)
    end
    function P.init(self, opts)
      opts = self:_options(opts, {"pool_size", "strides", "padding", "data_format"}, 1)
      if rank == 1 then
        self.pool_size = {single(name, "pool_size", opts[1] or opts.pool_size or 2)}
        self.strides = opts.strides and {single(name, "strides", opts.strides)} or self.pool_size
      else
        self.pool_size = U.pair(name, "pool_size", opts[1] or opts.pool_size or 2)
        self.strides = U.pair(name, "strides", opts.strides or self.pool_size)
      end
      self.padding = U.padding(name, opts.padding)
      U.data_format(name, opts.data_format)
    end
    function P.call(self, x)
      self:_check_input(x, {ndim = rank + 2})
      if rank == 1 then return tf.nn[op](x, self.pool_size[1], self.strides[1], self.padding:upper()) end
      return tf.nn[op](x, self.pool_size, self.strides, self.padding:upper())
    end
    function P.get_config(self)
      local c = Layer.get_config(self)
      c.pool_size = {table.unpack(self.pool_size)}
      c.strides = {table.unpack(self.strides)}
      c.padding = self.padding
      c.data_format = "channels_last"
      return c
    end
    return P
  end
  --- MaxPooling1D{pool_size=2, strides=pool_size, padding="valid"}: (batch, steps, features)
  pool_class("MaxPooling1D", "max_pool1d", 1)
  --- AveragePooling1D{pool_size=2, strides=pool_size, padding="valid"}
  pool_class("AveragePooling1D", "avg_pool1d", 1)
  --- MaxPooling2D{pool_size=2, strides=pool_size, padding="valid"}
  pool_class("MaxPooling2D", "max_pool2d", 2)
  --- AveragePooling2D{pool_size=2, strides=pool_size, padding="valid"}
  pool_class("AveragePooling2D", "avg_pool2d", 2)
  L.MaxPool1D, L.AvgPool1D = L.MaxPooling1D, L.AveragePooling1D
  L.MaxPool2D, L.AvgPool2D = L.MaxPooling2D, L.AveragePooling2D

  local function global_pool(name, reduce, rank)
    local P = Layer:extend(name)
    L[name] = P
    P._repr_args = {"keepdims"}
    function P.compute_output_shape(self, shape)
      local d = shape:as_list()
      if self.keepdims then
        local out = {d[1]}
        for i = 1, rank do out[i + 1] = 1 end
        out[rank + 2] = d[rank + 2]
        return tf.TensorShape(out)
      end
      return tf.TensorShape({d[1], d[rank + 2]})
    end
    function P.init(self, opts)
      opts = self:_options(opts, {"keepdims", "data_format"}, 0)
      U.data_format(name, opts.data_format)
      self.keepdims = opts.keepdims and true or false
    end
    local axes = rank == 1 and {2} or {2, 3}
    function P.call(self, x, opts)
      self:_check_input(x, {ndim = rank + 2})
      local mask = opts and opts.mask
      if mask ~= nil and self.supports_masking then
        -- Keras: the mean over the unmasked steps only
        local m = tf.expand_dims(tf.cast(mask, x.dtype), 3)
        return tf.reduce_sum(x * m, {axis = axes, keepdims = self.keepdims}) /
               tf.reduce_sum(m, {axis = axes, keepdims = self.keepdims})
      end
      return tf[reduce](x, {axis = axes, keepdims = self.keepdims})
    end
    -- the output has no steps left to mask
    function P.compute_mask() return nil end
    function P.get_config(self)
      local c = Layer.get_config(self)
      c.keepdims = self.keepdims
      c.data_format = "channels_last"
      return c
    end
    return P
  end
  --- GlobalAveragePooling1D{keepdims=false}: the mean over the steps; with a
  -- mask (batch, steps), the mean over the unmasked steps.
  global_pool("GlobalAveragePooling1D", "reduce_mean", 1).supports_masking = true
  --- GlobalMaxPooling1D{keepdims=false}: the maximum over the steps.
  global_pool("GlobalMaxPooling1D", "reduce_max", 1)
  --- GlobalAveragePooling2D{keepdims=false}: the mean over height and width.
  global_pool("GlobalAveragePooling2D", "reduce_mean", 2)
  --- GlobalMaxPooling2D{keepdims=false}: the maximum over height and width.
  global_pool("GlobalMaxPooling2D", "reduce_max", 2)
  L.GlobalAvgPool1D, L.GlobalMaxPool1D = L.GlobalAveragePooling1D, L.GlobalMaxPooling1D
  L.GlobalAvgPool2D, L.GlobalMaxPool2D = L.GlobalAveragePooling2D, L.GlobalMaxPooling2D
end
