--- Pooling layers: MaxPooling2D, AveragePooling2D, GlobalAveragePooling2D,
-- GlobalMaxPooling2D (channels_last).
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local U = require("tf.keras.layers.util")(tf)

  local function pool_class(name, op)
    local P = Layer:extend(name)
    L[name] = P
    P._repr_args = {"pool_size", "strides", "padding"}
    function P.compute_output_shape(self, shape)
      local d = shape:as_list()
      return tf.TensorShape({d[1], U.window_out(d[2], self.pool_size[1], self.strides[1], 1, self.padding),
                             U.window_out(d[3], self.pool_size[2], self.strides[2], 1, self.padding), d[4]})
    end
    function P.init(self, opts)
      opts = self:_options(opts, {"pool_size", "strides", "padding", "data_format"}, 1)
      self.pool_size = U.pair(name, "pool_size", opts[1] or opts.pool_size or 2)
      self.strides = U.pair(name, "strides", opts.strides or self.pool_size)
      self.padding = U.padding(name, opts.padding)
      U.data_format(name, opts.data_format)
    end
    function P.call(self, x)
      self:_check_input(x, {ndim = 4})
      return tf.nn[op](x, self.pool_size, self.strides, self.padding:upper())
    end
    function P.get_config(self)
      local c = Layer.get_config(self)
      c.pool_size, c.strides = {table.unpack(self.pool_size)}, {table.unpack(self.strides)}
      c.padding, c.data_format = self.padding, "channels_last"
      return c
    end
    return P
  end
  --- MaxPooling2D{pool_size=2, strides=pool_size, padding="valid"}
  pool_class("MaxPooling2D", "max_pool2d")
  --- AveragePooling2D{pool_size=2, strides=pool_size, padding="valid"}
  pool_class("AveragePooling2D", "avg_pool2d")
  L.MaxPool2D, L.AvgPool2D = L.MaxPooling2D, L.AveragePooling2D

  local function global_pool(name, reduce)
    local P = Layer:extend(name)
    L[name] = P
    P._repr_args = {"keepdims"}
    function P.compute_output_shape(self, shape)
      local d = shape:as_list()
      if self.keepdims then return tf.TensorShape({d[1], 1, 1, d[4]}) end
      return tf.TensorShape({d[1], d[4]})
    end
    function P.init(self, opts)
      opts = self:_options(opts, {"keepdims", "data_format"}, 0)
      U.data_format(name, opts.data_format)
      self.keepdims = opts.keepdims and true or false
    end
    function P.call(self, x)
      self:_check_input(x, {ndim = 4})
      return tf[reduce](x, {axis = {2, 3}, keepdims = self.keepdims})
    end
    function P.get_config(self)
      local c = Layer.get_config(self)
      c.keepdims, c.data_format = self.keepdims, "channels_last"
      return c
    end
  end
  --- GlobalAveragePooling2D{keepdims=false}: the mean over height and width.
  global_pool("GlobalAveragePooling2D", "reduce_mean")
  --- GlobalMaxPooling2D{keepdims=false}: the maximum over height and width.
  global_pool("GlobalMaxPooling2D", "reduce_max")
  L.GlobalAvgPool2D, L.GlobalMaxPool2D = L.GlobalAveragePooling2D, L.GlobalMaxPooling2D
end
