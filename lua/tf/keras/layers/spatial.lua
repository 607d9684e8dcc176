--- Spatial reshaping layers (channels_last): UpSampling1D/2D,
-- ZeroPadding1D/2D, Cropping1D/2D.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format
  local U = require("tf.keras.layers.util")(tf)

  local function show(v)
    if type(v) ~= "table" then return tostring(v) end
    local parts = {}
    for i, x in ipairs(v) do parts[i] = show(x) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end

  local function nonneg(v) return math.type(v) == "integer" and v >= 0 end

  -- Keras's padding / cropping argument for one dim: an integer (both
  -- sides) or a pair {before, after}
  local function sides_1d(cname, arg, v)
    if nonneg(v) then return {v, v} end
    if type(v) == "table" and #v == 2 and nonneg(v[1]) and nonneg(v[2]) then return {v[1], v[2]} end
    raise("ValueError", sfmt("%s: '%s' must be a non-negative integer or a table of 2 of them, got %s", cname, arg,
      show(v)), 4)
  end
  -- for two dims: an integer, {sym_height, sym_width}, or
  -- {{top, bottom}, {left, right}}
  local function sides_2d(cname, arg, v)
    if nonneg(v) then return {{v, v}, {v, v}} end
    if type(v) == "table" and #v == 2 then
      if nonneg(v[1]) and nonneg(v[2]) then return {{v[1], v[1]}, {v[2], v[2]}} end
      local ok = true
      for i = 1, 2 do
        local p = v[i]
        if not (type(p) == "table" and #p == 2 and nonneg(p[1]) and nonneg(p[2])) then ok = false end
      end
      if ok then return {{v[1][1], v[1][2]}, {v[2][1], v[2][2]}} end
    end
    raise("ValueError", sfmt("%s: '%s' must be a non-negative integer, a table of 2 of them, or a table of 2 " ..
      "pairs {{top, bottom}, {left, right}}, got %s", cname, arg, show(v)), 4)
  end

  local function copy2(t) return {{t[1][1], t[1][2]}, {t[2][1], t[2][2]}} end

  -- {==== UpSampling1D / UpSampling2D
  local UpSampling1D = Layer:extend("UpSampling1D")
  L.UpSampling1D = UpSampling1D
  UpSampling1D._repr_args = {"size"}
  --- UpSampling1D{size=2}: (batch, steps, features) -> (batch, steps * size,
  -- features), each step repeated `size` times.
  function UpSampling1D.init(self, opts)
    opts = self:_options(opts, {"size"}, 1)
    self.size = U.positive_int("UpSampling1D", "size", opts[1] or opts.size or 2)
  end
  function UpSampling1D.compute_output_shape(self, shape)
    local d = shape:as_list()
    return tf.TensorShape({d[1], d[2] >= 0 and d[2] * self.size or -1, d[3]})
  end
  -- x (N, ..., C): each of the `axes` repeated factors[i] times (reshape,
  -- multiply by ones, reshape: its gradient sums the copies); dims not known
  -- while tracing are read from tf.shape when the graph runs
  local function repeat_axes(x, axes, factors)
    local d = x:_dims()
    local shape
    local function dim(i)
      if d[i] >= 0 then return d[i] end
      shape = shape or tf.shape(x)
      return shape[i]
    end
    local expanded, ones, out = {-1}, {1}, {-1}
    local k = 1
    for i = 2, #d do
      expanded[#expanded + 1] = dim(i)
      ones[#ones + 1] = 1
      if axes[k] == i then
        expanded[#expanded + 1] = 1
        ones[#ones + 1] = factors[k]
        out[#out + 1] = dim(i) * factors[k]
        k = k + 1
      else
        out[#out + 1] = dim(i)
      end
    end
    local y = tf.reshape(x, expanded) * tf.ones(ones, x.dtype)
    return tf.reshape(y, out)
  end
  local function known_after_batch(self, x)
    local d = x:_dims()
    for i = 2, #d do
      if d[i] < 0 then
        raise("ValueError", sfmt("layer \"%s\": the input's dimensions after the batch must be known, got %s",
          self.name, tostring(x.shape)), 4)
      end
    end
  end
  function UpSampling1D.call(self, x)
    self:_check_input(x, {ndim = 3})
    return repeat_axes(x, {2}, {self.size})
  end
  function UpSampling1D.get_config(self)
    local c = Layer.get_config(self)
    c.size = self.size
    return c
  end

  local INTERPOLATIONS = {"area", "bicubic", "bilinear", "gaussian", "lanczos3", "lanczos5", "mitchellcubic",
                          "nearest"}
  local UpSampling2D = Layer:extend("UpSampling2D")
  L.UpSampling2D = UpSampling2D
  UpSampling2D._repr_args = {"size", "interpolation"}
  --- UpSampling2D{size={2, 2}, interpolation="nearest"}: (batch, h, w, c) ->
  -- (batch, h * size[1], w * size[2], c); "nearest" repeats rows and
  -- columns, "bilinear" is tf.image.resize's (half-pixel centers).
  function UpSampling2D.init(self, opts)
    opts = self:_options(opts, {"size", "data_format", "interpolation"}, 1)
    self.size = U.pair("UpSampling2D", "size", opts[1] or opts.size or 2)
    U.data_format("UpSampling2D", opts.data_format)
    local interp = opts.interpolation or "nearest"
    local known = false
    for _, v in ipairs(INTERPOLATIONS) do if v == interp then known = true end end
    if not known then
      raise("ValueError", sfmt("UpSampling2D: `interpolation` argument should be one of: %s. Received: \"%s\".",
        table.concat(INTERPOLATIONS, ", "), tostring(interp)), 3)
    end
    if interp ~= "nearest" and interp ~= "bilinear" then
      raise("UnimplementedError", sfmt("UpSampling2D: interpolation \"%s\" is not supported (only \"nearest\" and " ..
        "\"bilinear\")", interp), 3)
    end
    self.interpolation = interp
  end
  function UpSampling2D.compute_output_shape(self, shape)
    local d = shape:as_list()
    return tf.TensorShape({d[1], d[2] >= 0 and d[2] * self.size[1] or -1, d[3] >= 0 and d[3] * self.size[2] or -1,
                           d[4]})
  end
  function UpSampling2D.call(self, x)
    self:_check_input(x, {ndim = 4})
    if self.interpolation == "nearest" then return repeat_axes(x, {2, 3}, self.size) end
    known_after_batch(self, x)   -- tf.image.resize takes a size of numbers
    local d = x:_dims()
    local y = tf.image.resize(x, {d[2] * self.size[1], d[3] * self.size[2]}, {method = "bilinear"})
    if y.dtype ~= x.dtype then y = tf.cast(y, x.dtype) end
    return y
  end
  function UpSampling2D.get_config(self)
    local c = Layer.get_config(self)
    c.size = {self.size[1], self.size[2]}
    c.data_format = "channels_last"
    c.interpolation = self.interpolation
    return c
  end
  -- }====

  -- {==== ZeroPadding1D / ZeroPadding2D
  local ZeroPadding1D = Layer:extend("ZeroPadding1D")
  L.ZeroPadding1D = ZeroPadding1D
  ZeroPadding1D._repr_args = {"padding"}
  --- ZeroPadding1D{padding=1}: zeros added at the start and end of the steps
  -- axis; padding an integer or {left, right}.
  function ZeroPadding1D.init(self, opts)
    opts = self:_options(opts, {"padding"}, 1)
    local p = opts[1]
    if p == nil then p = opts.padding end
    if p == nil then p = 1 end
    self.padding = sides_1d("ZeroPadding1D", "padding", p)
  end
  function ZeroPadding1D.compute_output_shape(self, shape)
    local d = shape:as_list()
    return tf.TensorShape({d[1], d[2] >= 0 and d[2] + self.padding[1] + self.padding[2] or -1, d[3]})
  end
  function ZeroPadding1D.call(self, x)
    self:_check_input(x, {ndim = 3})
    return tf.pad(x, {{0, 0}, {self.padding[1], self.padding[2]}, {0, 0}})
  end
  function ZeroPadding1D.get_config(self)
    local c = Layer.get_config(self)
    c.padding = {self.padding[1], self.padding[2]}
    return c
  end

  local ZeroPadding2D = Layer:extend("ZeroPadding2D")
  L.ZeroPadding2D = ZeroPadding2D
  ZeroPadding2D._repr_args = {"padding"}
  --- ZeroPadding2D{padding=1}: zero rows above and below, zero columns left
  -- and right; padding an integer, {sym_height, sym_width} or
  -- {{top, bottom}, {left, right}}.
  function ZeroPadding2D.init(self, opts)
    opts = self:_options(opts, {"padding", "data_format"}, 1)
    local p = opts[1]
    if p == nil then p = opts.padding end
    if p == nil then p = 1 end
    self.padding = sides_2d("ZeroPadding2D", "padding", p)
    U.data_format("ZeroPadding2D", opts.data_format)
  end
  function ZeroPadding2D.compute_output_shape(self, shape)
    local d = shape:as_list()
    local p = self.padding
    return tf.TensorShape({d[1], d[2] >= 0 and d[2] + p[1][1] + p[1][2] or -1,
                           d[3] >= 0 and d[3] + p[2][1] + p[2][2] or -1, d[4]})
  end
  function ZeroPadding2D.call(self, x)
    self:_check_input(x, {ndim = 4})
    local p = self.padding
    return tf.pad(x, {{0, 0}, {p[1][1], p[1][2]}, {p[2][1], p[2][2]}, {0, 0}})
  end
  function ZeroPadding2D.get_config(self)
    local c = Layer.get_config(self)
    c.padding = copy2(self.padding)
    c.data_format = "channels_last"
    return c
  end
  -- }====

  -- {==== Cropping1D / Cropping2D
  -- the slice {first, last} (1-based, inclusive; last may count from the
  -- end) that drops `before` and `after` of an axis of size n (-1: unknown)
  local function keep(self, x, axis, n, before, after)
    if n >= 0 and before + after >= n then
      raise("ValueError", sfmt("layer \"%s\": cropping {%d, %d} of axis %d removes all %d entries of an input of " ..
        "shape %s", self.name, before, after, axis, n, tostring(x.shape)), 4)
    end
    return {before + 1, -(after + 1)}
  end

  local Cropping1D = Layer:extend("Cropping1D")
  L.Cropping1D = Cropping1D
  Cropping1D._repr_args = {"cropping"}
  --- Cropping1D{cropping={1, 1}}: steps removed at the start and end;
  -- cropping an integer or {start, end}.
  function Cropping1D.init(self, opts)
    opts = self:_options(opts, {"cropping"}, 1)
    local c = opts[1]
    if c == nil then c = opts.cropping end
    if c == nil then c = {1, 1} end
    self.cropping = sides_1d("Cropping1D", "cropping", c)
  end
  function Cropping1D.compute_output_shape(self, shape)
    local d = shape:as_list()
    return tf.TensorShape({d[1], d[2] >= 0 and d[2] - self.cropping[1] - self.cropping[2] or -1, d[3]})
  end
  function Cropping1D.call(self, x)
    self:_check_input(x, {ndim = 3})
    local d = x:_dims()
    return x[{tf.all, keep(self, x, 2, d[2], self.cropping[1], self.cropping[2])}]
  end
  function Cropping1D.get_config(self)
    local c = Layer.get_config(self)
    c.cropping = {self.cropping[1], self.cropping[2]}
    return c
  end

  local Cropping2D = Layer:extend("Cropping2D")
  L.Cropping2D = Cropping2D
  Cropping2D._repr_args = {"cropping"}
  --- Cropping2D{cropping={{0, 0}, {0, 0}}}: rows removed at the top and
  -- bottom, columns at the left and right; cropping an integer,
  -- {sym_height, sym_width} or {{top, bottom}, {left, right}}.
  function Cropping2D.init(self, opts)
    opts = self:_options(opts, {"cropping", "data_format"}, 1)
    local c = opts[1]
    if c == nil then c = opts.cropping end
    if c == nil then c = 0 end
    self.cropping = sides_2d("Cropping2D", "cropping", c)
    U.data_format("Cropping2D", opts.data_format)
  end
  function Cropping2D.compute_output_shape(self, shape)
    local d = shape:as_list()
    local c = self.cropping
    return tf.TensorShape({d[1], d[2] >= 0 and d[2] - c[1][1] - c[1][2] or -1,
                           d[3] >= 0 and d[3] - c[2][1] - c[2][2] or -1, d[4]})
  end
  function Cropping2D.call(self, x)
    self:_check_input(x, {ndim = 4})
    local d, c = x:_dims(), self.cropping
    return x[{tf.all, keep(self, x, 2, d[2], c[1][1], c[1][2]), keep(self, x, 3, d[3], c[2][1], c[2][2])}]
  end
  function Cropping2D.get_config(self)
    local c = Layer.get_config(self)
    c.cropping = copy2(self.cropping)
    c.data_format = "channels_last"
    return c
  end
  -- }====
end
