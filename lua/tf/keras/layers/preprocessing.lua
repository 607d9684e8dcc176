--- Keras's numeric and image preprocessing layers: Normalization (with
-- adapt), Rescaling, CenterCrop, Resizing, and the random augmentation
-- layers RandomFlip, RandomRotation, RandomZoom, RandomTranslation,
-- RandomContrast. Images are NHWC, one image (h, w, c) or a batch.
-- The geometric random layers build TensorFlow's 8-parameter transforms and
-- run them through tf.image.transform (the image_transform op).
-- Random layers act unless called with training = false (Keras's call
-- signature has training = true: a direct call or a dataset map augments,
-- predict and evaluate do not).
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format
  local U = require("tf.keras.layers.util")(tf)

  local function cdt(self) return self.compute_dtype or self.dtype end   -- the policy's compute dtype
  local function to_float(self, x)
    local dt = cdt(self)
    if x.dtype ~= dt then x = tf.cast(x, dt) end
    return x
  end
  local function same_shape(_, shape) return shape end

  -- an image (h, w, c) becomes a batch of one; returns x, was_single
  local function batched(self, x)
    local r = x.rank
    if r == 3 then return tf.expand_dims(x, 1), true end
    if r ~= 4 then
      raise("ValueError", sfmt("layer \"%s\": expected images of rank 3 (h, w, c) or 4 (batch, h, w, c), got shape %s",
        self.name, tostring(x.shape)))
    end
    return x, false
  end
  local function unbatched(y, single) if single then return tf.squeeze(y, {1}) end return y end

  local function number(cname, arg, v)
    if type(v) ~= "number" or v ~= v then
      raise("ValueError", sfmt("%s: '%s' must be a number, got %s", cname, arg, tostring(v)))
    end
    return v
  end

  -- a factor f (-> {-f, f}) or a pair {lower, upper}
  local function factor_pair(cname, arg, f, nonneg_single)
    if type(f) == "number" then
      if nonneg_single and f < 0 then
        raise("ValueError", sfmt("%s: '%s' must be non-negative, got %s", cname, arg, tostring(f)))
      end
      return {-math.abs(f), math.abs(f)}
    end
    if type(f) ~= "table" or #f ~= 2 or type(f[1]) ~= "number" or type(f[2]) ~= "number" then
      raise("ValueError", sfmt("%s: '%s' must be a number or a pair {lower, upper}, got %s", cname, arg, tostring(f)))
    end
    if f[1] > f[2] then
      raise("ValueError", sfmt("%s: '%s' lower bound %g is greater than the upper bound %g", cname, arg, f[1], f[2]))
    end
    return {f[1], f[2]}
  end

  local FILL = {reflect = true, wrap = true, constant = true, nearest = true}
  local function fill_mode(cname, v)
    v = v or "reflect"
    if not FILL[v] then
      raise("UnimplementedError", sfmt("%s: unknown fill_mode '%s' (expected reflect, wrap, constant or nearest)",
        cname, tostring(v)))
    end
    return v
  end
  local function interpolation(cname, v)
    v = v or "bilinear"
    if v ~= "bilinear" and v ~= "nearest" then
      raise("UnimplementedError", sfmt("%s: unknown interpolation '%s' (expected bilinear or nearest)", cname,
        tostring(v)))
    end
    return v
  end

  -- {==== Normalization
  local Normalization = Layer:extend("Normalization")
  L.Normalization = Normalization
  Normalization._repr_args = {"axis"}
  Normalization.compute_output_shape = same_shape
  local EPS = 1e-7

  --- Normalization{axis = -1, mean =, variance =, invert = false}: (x - mean)
  -- / max(sqrt(variance), 1e-7) per index of the kept axis (or axes: a
  -- table; {} keeps none: one mean and variance). mean/variance given, or
  -- computed by layer:adapt(data).
  function Normalization.init(self, opts)
    opts = self:_options(opts, {"axis", "mean", "variance", "invert"}, 0)
    local axis = opts.axis
    if axis == nil then axis = -1 end
    if type(axis) ~= "table" then axis = {axis} end
    for _, a in ipairs(axis) do
      if math.type(a) ~= "integer" or a == 0 then
        raise("ValueError", sfmt("Normalization: 'axis' must be a non-zero integer (1-based; -1 the last) or a " ..
          "table of them, got %s", tostring(a)))
      end
    end
    self.axis = {table.unpack(axis)}
    if (opts.mean == nil) ~= (opts.variance == nil) then
      raise("ValueError", "Normalization: when 'mean' is set, 'variance' must be set too, and the reverse")
    end
    self.invert = opts.invert and true or false
    self.input_mean, self.input_variance = opts.mean, opts.variance
  end

  -- kept axes (1-based, sorted) for rank n
  local function kept(self, n)
    local out, seen = {}, {}
    for _, a in ipairs(self.axis) do
      local p = a < 0 and n + 1 + a or a
      if p < 1 or p > n then
        raise("ValueError", sfmt("layer \"%s\": axis %d is out of range for inputs of rank %d", self.name, a, n))
      end
      if seen[p] then raise("ValueError", sfmt("layer \"%s\": axis %d is given twice", self.name, a)) end
      seen[p] = true
      out[#out + 1] = p
    end
    table.sort(out)
    return out
  end

  function Normalization.build(self, input_shape)
    local dims = input_shape:as_list()
    if dims == nil then raise("ValueError", sfmt("layer \"%s\": the input rank must be known", self.name)) end
    local n = #dims
    local axes = kept(self, n)
    local bshape, wshape, is_kept = {}, {}, {}
    for _, a in ipairs(axes) do is_kept[a] = true end
    for i = 1, n do
      if is_kept[i] then
        if dims[i] < 0 then
          raise("ValueError", sfmt("layer \"%s\": all kept axes must have known sizes; axis %d of %s is unknown",
            self.name, i, tostring(input_shape)))
        end
        bshape[i] = dims[i]
        wshape[#wshape + 1] = dims[i]
      else
        bshape[i] = 1
      end
    end
    local reduce = {}
    for i = 1, n do if not is_kept[i] then reduce[#reduce + 1] = i end end
    rawset(self, "_rank", n)
    rawset(self, "_bshape", bshape)
    rawset(self, "_wshape", wshape)
    rawset(self, "_reduce", reduce)
    local dt = self.dtype
    local function init_of(v, default)
      if v == nil then return default end
      return function(shape, dtype)
        local t = tf.cast(tf.convert_to_tensor(v), dtype)
        return tf.reshape(tf.broadcast_to(t, shape) , shape)
      end
    end
    self.mean = self:add_weight("mean", wshape, {initializer = init_of(self.input_mean, "zeros"), trainable = false,
                                                 dtype = dt})
    self.variance = self:add_weight("variance", wshape, {initializer = init_of(self.input_variance, "ones"),
                                                         trainable = false, dtype = dt})
    self.count = self:add_weight("count", {}, {initializer = "zeros", trainable = false, dtype = tf.int64})
  end

  -- data (a tensor, a Lua array or a dataset of batches) as a list of float64 tensors
  local function adapt_batches(self, data)
    if tf.is_tensor(data) then return {data} end
    if type(data) == "table" and getmetatable(data) == tf.data.Dataset then
      local out = {}
      for x in data:iter() do
        if type(x) == "table" and not tf.is_tensor(x) then x = x[1] end
        out[#out + 1] = x
      end
      if #out == 0 then raise("ValueError", sfmt("layer \"%s\": adapt: the dataset is empty", self.name)) end
      return out
    end
    if type(data) == "table" or type(data) == "number" then return {tf.constant(data)} end
    raise("TypeError", sfmt("layer \"%s\": adapt: expected a tensor, a Lua array or a tf.data.Dataset, got %s",
      self.name, type(data)))
  end

  --- layer:adapt(data [, {batch_size =, steps =}]): computes the mean and
  -- variance of data over the axes that are not kept, merging batches in
  -- float64 (Chan et al.'s parallel update, as Keras); builds the layer.
  -- batch_size splits tensors (and a dataset's elements) into batches of
  -- that many rows; steps uses only the first `steps` batches.
  function Normalization.adapt(self, data, opts)
    if opts ~= nil and type(opts) ~= "table" then
      raise("TypeError", sfmt("layer \"%s\": adapt: options must be a table", self.name))
    end
    for k in pairs(opts or {}) do
      if k ~= "batch_size" and k ~= "steps" then
        raise("TypeError", sfmt("layer \"%s\": adapt: unknown option '%s' (accepted: batch_size, steps)", self.name,
          tostring(k)))
      end
    end
    local batches = adapt_batches(self, data)
    local bs = opts and opts.batch_size
    if bs ~= nil then
      if math.type(bs) ~= "integer" or bs < 1 then
        raise("ValueError", sfmt("layer \"%s\": adapt: 'batch_size' must be a positive integer, got %s", self.name,
          tostring(bs)))
      end
      local split = {}
      for _, b in ipairs(batches) do
        local n = b.shape[1] or 0
        for i = 1, n, bs do split[#split + 1] = b[{{i, math.min(n, i + bs - 1)}}] end
      end
      batches = split
    end
    if opts and opts.steps then
      while #batches > opts.steps do table.remove(batches) end
    end
    local first = batches[1]
    if not self.built then self:_maybe_build(first.shape) end
    local n_seen, mean, var = 0, nil, nil
    for _, b in ipairs(batches) do
      local x = tf.cast(b, tf.float64)
      if x.rank ~= self._rank then
        raise("ValueError", sfmt("layer \"%s\": adapt: expected data of rank %d, got shape %s", self.name, self._rank,
          tostring(x.shape)))
      end
      local dims = x:_dims()
      local count = 1
      for _, a in ipairs(self._reduce) do count = count * dims[a] end
      if count > 0 then
        local bm = tf.reduce_mean(x, {axis = self._reduce, keepdims = true})
        local bv = tf.reduce_mean(tf.square(x - bm), {axis = self._reduce, keepdims = true})
        if mean == nil then
          mean, var = bm, bv
        else
          local total = n_seen + count
          local wb, we = count / total, n_seen / total
          local new_mean = mean * we + bm * wb
          var = (var + tf.square(mean - new_mean)) * we + (bv + tf.square(bm - new_mean)) * wb
          mean = new_mean
        end
        n_seen = n_seen + count
      end
    end
    if mean == nil then raise("ValueError", sfmt("layer \"%s\": adapt: the data is empty", self.name)) end
    self.mean:assign(tf.cast(tf.reshape(mean, self._wshape), self.mean.dtype))
    self.variance:assign(tf.cast(tf.reshape(var, self._wshape), self.variance.dtype))
    self.count:assign(tf.constant(n_seen, tf.int64))
    rawset(self, "_adapted", {mean = mean, variance = var})
  end

  --- adapted statistics in float64 (eager tensors), or nil
  function Normalization.adapted_statistics(self) return rawget(self, "_adapted") end

  function Normalization.call(self, x)
    x = to_float(self, x)
    local dt = x.dtype
    local mean = tf.reshape(tf.cast(self.mean:value(), dt), self._bshape)
    local sd = tf.maximum(tf.sqrt(tf.reshape(tf.cast(self.variance:value(), dt), self._bshape)), tf.constant(EPS, dt))
    if self.invert then return mean + x * sd end
    return (x - mean) / sd
  end

  local function plain_copy(v)
    if tf.is_tensor(v) then return v:totable() end
    if type(v) == "table" then
      local o = {}
      for k, e in pairs(v) do o[k] = plain_copy(e) end
      return o
    end
    return v
  end

  function Normalization.get_config(self)
    local c = Layer.get_config(self)
    c.axis = #self.axis == 1 and self.axis[1] or {table.unpack(self.axis)}
    c.mean, c.variance = plain_copy(self.input_mean), plain_copy(self.input_variance)
    c.invert = self.invert
    return c
  end
  -- }====

  -- {==== Rescaling
  local Rescaling = Layer:extend("Rescaling")
  L.Rescaling = Rescaling
  Rescaling._repr_args = {"scale", "offset"}
  Rescaling.compute_output_shape = same_shape
  --- Rescaling{scale, offset = 0}: x * scale + offset (in the compute dtype).
  function Rescaling.init(self, opts)
    opts = self:_options(opts, {"scale", "offset"}, 1)
    local s = opts[1] or opts.scale
    if s == nil then raise("TypeError", "Rescaling: 'scale' is required") end
    self.scale = number("Rescaling", "scale", s)
    self.offset = number("Rescaling", "offset", opts.offset or 0.0)
  end
  function Rescaling.call(self, x)
    x = to_float(self, x)
    return x * tf.constant(self.scale, x.dtype) + tf.constant(self.offset, x.dtype)
  end
  function Rescaling.get_config(self)
    local c = Layer.get_config(self)
    c.scale, c.offset = self.scale, self.offset
    return c
  end
  -- }====

  -- {==== CenterCrop and Resizing
  -- Keras's smart_resize: the largest centred window with the target's
  -- aspect ratio, resized to {h, w}
  local function crop_box(ih, iw, h, w)
    local f32 = function(v) return (string.unpack("<f", string.pack("<f", v))) end
    local ch = math.min(ih, math.floor(f32(f32(iw * h) / w)))
    local cw = math.min(iw, math.floor(f32(f32(ih * w) / h)))
    local h0 = math.floor(f32(ih - ch) / 2)
    local w0 = math.floor(f32(iw - cw) / 2)
    return h0, w0, ch, cw
  end

  local function crop(x, h0, w0, ch, cw)
    return x[{":", {h0 + 1, h0 + ch}, {w0 + 1, w0 + cw}, ":"}]
  end

  -- a crop by a translation transform when the size is only known at run
  -- time: output (x, y) reads input (x + w0, y + h0), w0 = (iw - w) // 2
  local function dynamic_crop(x, h, w)
    local s = tf.cast(tf.shape(x), tf.float32)
    local h0 = tf.floor((s[2] - h) / 2)
    local w0 = tf.floor((s[3] - w) / 2)
    local one, zero = tf.constant(1, tf.float32), tf.constant(0, tf.float32)
    local t = tf.reshape(tf.stack({one, zero, w0, zero, one, h0, zero, zero}), {1, 8})
    return tf.image.transform(x, t, {interpolation = "nearest", fill_mode = "constant", output_shape = {h, w}})
  end

  local function size_args(cname, opts)
    local h = U.positive_int(cname, "height", opts[1] or opts.height)
    local w = U.positive_int(cname, "width", opts[2] or opts.width)
    return h, w
  end

  local CenterCrop = Layer:extend("CenterCrop")
  L.CenterCrop = CenterCrop
  CenterCrop._repr_args = {"height", "width"}
  --- CenterCrop{height, width}: the central height x width window; an
  -- image smaller than that is resized as Keras's smart_resize does.
  function CenterCrop.init(self, opts)
    opts = self:_options(opts, {"height", "width"}, 2)
    self.height, self.width = size_args("CenterCrop", opts)
  end
  function CenterCrop.compute_output_shape(self, shape)
    local d = shape:as_list()
    d[#d - 2], d[#d - 1] = self.height, self.width
    return tf.TensorShape(d)
  end
  function CenterCrop.call(self, x)
    local single
    x, single = batched(self, x)
    local d = x:_dims()
    local ih, iw = d[2], d[3]
    local y
    if ih < 0 or iw < 0 then
      y = to_float(self, dynamic_crop(x, self.height, self.width))
    elseif ih >= self.height and iw >= self.width then
      y = to_float(self, crop(x, (ih - self.height) // 2, (iw - self.width) // 2, self.height, self.width))
    else
      local h0, w0, ch, cw = crop_box(ih, iw, self.height, self.width)
      y = to_float(self, tf.image.resize(to_float(self, crop(x, h0, w0, ch, cw)), {self.height, self.width}))
    end
    return unbatched(y, single)
  end
  function CenterCrop.get_config(self)
    local c = Layer.get_config(self)
    c.height, c.width = self.height, self.width
    return c
  end

  local Resizing = Layer:extend("Resizing")
  L.Resizing = Resizing
  Resizing._repr_args = {"height", "width", "interpolation"}
  --- Resizing{height, width, interpolation = "bilinear", crop_to_aspect_ratio = false}
  function Resizing.init(self, opts)
    opts = self:_options(opts, {"height", "width", "interpolation", "crop_to_aspect_ratio"}, 2)
    self.height, self.width = size_args("Resizing", opts)
    local m = opts.interpolation or "bilinear"
    if m ~= "bilinear" and m ~= "nearest" then
      raise("UnimplementedError", sfmt("Resizing: interpolation '%s' is not supported (bilinear or nearest)",
        tostring(m)))
    end
    self.interpolation = m
    self.crop_to_aspect_ratio = opts.crop_to_aspect_ratio and true or false
  end
  Resizing.compute_output_shape = CenterCrop.compute_output_shape
  function Resizing.call(self, x)
    local single
    x, single = batched(self, x)
    if self.crop_to_aspect_ratio then
      local d = x:_dims()
      if d[2] < 0 or d[3] < 0 then
        raise("ValueError", sfmt("layer \"%s\": crop_to_aspect_ratio needs the images' height and width known, got %s",
          self.name, tostring(x.shape)))
      end
      local h0, w0, ch, cw = crop_box(d[2], d[3], self.height, self.width)
      x = crop(x, h0, w0, ch, cw)
    end
    local y = tf.image.resize(x, {self.height, self.width}, {method = self.interpolation})
    return unbatched(to_float(self, y), single)
  end
  function Resizing.get_config(self)
    local c = Layer.get_config(self)
    c.height, c.width, c.interpolation = self.height, self.width, self.interpolation
    c.crop_to_aspect_ratio = self.crop_to_aspect_ratio
    return c
  end
  -- }====

  -- {==== random layers
  -- (n, 1) float32 uniform draws in [lo, hi) for the batch of x. With a
  -- seed, eager draws are seeded (reproducible after tf.random.set_seed);
  -- inside a trace a seeded op would repeat its values at every run, so
  -- draws there come from the context generator (reproducible by
  -- tf.random.set_seed). An unknown batch size is read from tf.shape(x)
  -- when the graph runs.
  local function draw(self, x, lo, hi)
    local n = x:_dims()[1]
    local seed = not tf.core.is_tracing() and self.seed or nil
    if n < 0 then n = tf.shape(x)[1] end
    return tf.random.uniform({n, 1}, {minval = lo, maxval = hi, seed = seed, dtype = tf.float32})
  end

  local function random_init(self, opts, cname)
    self.seed = opts.seed
    if self.seed ~= nil and math.type(self.seed) ~= "integer" then
      raise("TypeError", sfmt("%s: 'seed' must be an integer, got %s", cname, tostring(self.seed)))
    end
  end
  local function augmenting(opts) return not (opts and opts.training == false) end

  local function geometric_init(self, opts, cname)
    random_init(self, opts, cname)
    self.fill_mode = fill_mode(cname, opts.fill_mode)
    self.interpolation = interpolation(cname, opts.interpolation)
    self.fill_value = number(cname, "fill_value", opts.fill_value or 0.0)
  end
  local function geometric_config(self, c)
    c.seed, c.fill_mode, c.interpolation, c.fill_value = self.seed, self.fill_mode, self.interpolation, self.fill_value
    return c
  end

  -- the images' height and width as float32 scalars (tensors if unknown)
  local function hw(x)
    local d = x:_dims()
    local h, w = d[2], d[3]
    if h < 0 or w < 0 then
      local s = tf.cast(tf.shape(x), tf.float32)
      return s[2], s[3]
    end
    return h + 0.0, w + 0.0
  end

  local function run_transform(self, x, cols)
    local t = tf.concat(cols, 2)       -- (n, 8)
    -- the transform op has no float16/bfloat16 kernel: a mixed policy's
    -- images are transformed in float32 and cast back
    local dt = cdt(self)
    local low = dt == tf.float16 or dt == tf.bfloat16
    local y = tf.image.transform(low and tf.cast(x, tf.float32) or to_float(self, x), t,
                                 {interpolation = self.interpolation, fill_mode = self.fill_mode,
                                  fill_value = self.fill_value})
    return low and tf.cast(y, dt) or y
  end

  local RandomFlip = Layer:extend("RandomFlip")
  L.RandomFlip = RandomFlip
  RandomFlip._repr_args = {"mode"}
  RandomFlip.compute_output_shape = same_shape
  local FLIP = {horizontal = true, vertical = true, horizontal_and_vertical = true}
  --- RandomFlip{mode = "horizontal_and_vertical", seed =}: each image flipped
  -- left-right (and/or up-down) with probability 1/2.
  function RandomFlip.init(self, opts)
    if type(opts) == "string" then opts = {opts} end
    opts = self:_options(opts, {"mode", "seed"}, 1)
    local m = opts[1] or opts.mode or "horizontal_and_vertical"
    if not FLIP[m] then
      raise("ValueError", sfmt("RandomFlip layer %s received an unknown mode argument %s", self.name, tostring(m)))
    end
    self.mode = m
    random_init(self, opts, "RandomFlip")
  end
  function RandomFlip.call(self, x, opts)
    x = to_float(self, x)
    if not augmenting(opts) then return tf.identity(x) end
    local single
    x, single = batched(self, x)
    local function maybe(y, axis)
      local u = draw(self, y, 0, 1)
      local flip = tf.reshape(tf.less(u, 0.5), {-1, 1, 1, 1})
      return tf.where(flip, tf.reverse(y, {axis}), y)
    end
    if self.mode ~= "vertical" then x = maybe(x, 3) end
    if self.mode ~= "horizontal" then x = maybe(x, 2) end
    return unbatched(x, single)
  end
  function RandomFlip.get_config(self)
    local c = Layer.get_config(self)
    c.mode, c.seed = self.mode, self.seed
    return c
  end

  local RandomRotation = Layer:extend("RandomRotation")
  L.RandomRotation = RandomRotation
  RandomRotation._repr_args = {"factor", "fill_mode"}
  RandomRotation.compute_output_shape = same_shape
  --- RandomRotation{factor, fill_mode = "reflect", interpolation = "bilinear",
  -- seed =, fill_value = 0}: rotation by a random fraction of 2 pi in
  -- [-factor, factor] (or [lower, upper]); counter-clockwise for positive.
  function RandomRotation.init(self, opts)
    opts = self:_options(opts, {"factor", "fill_mode", "interpolation", "seed", "fill_value"}, 1)
    local f = opts[1] or opts.factor
    if f == nil then raise("TypeError", "RandomRotation: 'factor' is required") end
    self.factor = type(f) == "table" and {f[1], f[2]} or f
    self._range = factor_pair("RandomRotation", "factor", f)
    geometric_init(self, opts, "RandomRotation")
  end
  function RandomRotation.call(self, x, opts)
    x = to_float(self, x)
    if not augmenting(opts) then return tf.identity(x) end
    local single
    x, single = batched(self, x)
    local a = draw(self, x, self._range[1] * 2 * math.pi, self._range[2] * 2 * math.pi)
    local h, w = hw(x)
    local c, s = tf.cos(a), tf.sin(a)
    local xo = ((w - 1) - (c * (w - 1) - s * (h - 1))) / 2
    local yo = ((h - 1) - (s * (w - 1) + c * (h - 1))) / 2
    local zero = tf.zeros_like(a)
    return unbatched(run_transform(self, x, {c, -s, xo, s, c, yo, zero, zero}), single)
  end
  function RandomRotation.get_config(self)
    local c = Layer.get_config(self)
    c.factor = type(self.factor) == "table" and {table.unpack(self.factor)} or self.factor
    return geometric_config(self, c)
  end

  local RandomZoom = Layer:extend("RandomZoom")
  L.RandomZoom = RandomZoom
  RandomZoom._repr_args = {"height_factor", "width_factor"}
  RandomZoom.compute_output_shape = same_shape
  --- RandomZoom{height_factor, width_factor =, fill_mode = "reflect",
  -- interpolation = "bilinear", seed =, fill_value = 0}: zoom by 1 + a
  -- random value in [-f, f] (or [lower, upper]); positive zooms out. Without
  -- width_factor both axes take the same zoom.
  function RandomZoom.init(self, opts)
    opts = self:_options(opts, {"height_factor", "width_factor", "fill_mode", "interpolation", "seed", "fill_value"}, 1)
    local hf = opts[1] or opts.height_factor
    if hf == nil then raise("TypeError", "RandomZoom: 'height_factor' is required") end
    self.height_factor = type(hf) == "table" and {hf[1], hf[2]} or hf
    self._h = factor_pair("RandomZoom", "height_factor", hf)
    if self._h[1] < -1 then
      raise("ValueError", sfmt("RandomZoom: 'height_factor' must have values between [-1, 1], got %g", self._h[1]))
    end
    local wf = opts.width_factor
    if wf ~= nil then
      self.width_factor = type(wf) == "table" and {wf[1], wf[2]} or wf
      self._w = factor_pair("RandomZoom", "width_factor", wf)
      if self._w[1] < -1 then
        raise("ValueError", sfmt("RandomZoom: 'width_factor' must have values between [-1, 1], got %g", self._w[1]))
      end
    end
    geometric_init(self, opts, "RandomZoom")
  end
  function RandomZoom.call(self, x, opts)
    x = to_float(self, x)
    if not augmenting(opts) then return tf.identity(x) end
    local single
    x, single = batched(self, x)
    local zy = draw(self, x, 1 + self._h[1], 1 + self._h[2])
    local zx = self._w and draw(self, x, 1 + self._w[1], 1 + self._w[2]) or zy
    local h, w = hw(x)
    local zero = tf.zeros_like(zy)
    return unbatched(run_transform(self, x, {zx, zero, (w - 1) / 2 * (1 - zx), zero, zy, (h - 1) / 2 * (1 - zy),
                                             zero, zero}), single)
  end
  function RandomZoom.get_config(self)
    local c = Layer.get_config(self)
    local function cp(v) return type(v) == "table" and {table.unpack(v)} or v end
    c.height_factor, c.width_factor = cp(self.height_factor), cp(self.width_factor)
    return geometric_config(self, c)
  end

  local RandomTranslation = Layer:extend("RandomTranslation")
  L.RandomTranslation = RandomTranslation
  RandomTranslation._repr_args = {"height_factor", "width_factor"}
  RandomTranslation.compute_output_shape = same_shape
  --- RandomTranslation{height_factor, width_factor, fill_mode = "reflect",
  -- interpolation = "bilinear", seed =, fill_value = 0}: a shift by a random
  -- fraction of the height / width in [-f, f] (or [lower, upper]).
  function RandomTranslation.init(self, opts)
    opts = self:_options(opts, {"height_factor", "width_factor", "fill_mode", "interpolation", "seed", "fill_value"},
      2)
    local hf, wf = opts[1] or opts.height_factor, opts[2] or opts.width_factor
    if hf == nil or wf == nil then
      raise("TypeError", "RandomTranslation: 'height_factor' and 'width_factor' are required")
    end
    self.height_factor = type(hf) == "table" and {hf[1], hf[2]} or hf
    self.width_factor = type(wf) == "table" and {wf[1], wf[2]} or wf
    self._h = factor_pair("RandomTranslation", "height_factor", hf)
    self._w = factor_pair("RandomTranslation", "width_factor", wf)
    for _, p in ipairs({{"height_factor", self._h}, {"width_factor", self._w}}) do
      if math.abs(p[2][1]) > 1 or math.abs(p[2][2]) > 1 then
        raise("ValueError", sfmt("RandomTranslation: '%s' must have values between [-1, 1], got {%g, %g}", p[1],
          p[2][1], p[2][2]))
      end
    end
    geometric_init(self, opts, "RandomTranslation")
  end
  function RandomTranslation.call(self, x, opts)
    x = to_float(self, x)
    if not augmenting(opts) then return tf.identity(x) end
    local single
    x, single = batched(self, x)
    local h, w = hw(x)
    local dy = draw(self, x, self._h[1], self._h[2]) * h
    local dx = draw(self, x, self._w[1], self._w[2]) * w
    local zero, one = tf.zeros_like(dx), tf.ones_like(dx)
    return unbatched(run_transform(self, x, {one, zero, -dx, zero, one, -dy, zero, zero}), single)
  end
  function RandomTranslation.get_config(self)
    local c = Layer.get_config(self)
    local function cp(v) return type(v) == "table" and {table.unpack(v)} or v end
    c.height_factor, c.width_factor = cp(self.height_factor), cp(self.width_factor)
    return geometric_config(self, c)
  end

  local RandomContrast = Layer:extend("RandomContrast")
  L.RandomContrast = RandomContrast
  RandomContrast._repr_args = {"factor"}
  RandomContrast.compute_output_shape = same_shape
  --- RandomContrast{factor, value_range = {0, 255}, seed =}: per image,
  -- (x - mean) * c + mean with c uniform in [1 - lower, 1 + upper] (factor
  -- f: lower = upper = f) and the mean per channel over height and width;
  -- clipped to value_range (Keras 3).
  function RandomContrast.init(self, opts)
    opts = self:_options(opts, {"factor", "value_range", "seed"}, 1)
    local vr = opts.value_range or {0, 255}
    if type(vr) ~= "table" or type(vr[1]) ~= "number" or type(vr[2]) ~= "number" or vr[1] > vr[2] then
      raise("ValueError", sfmt("RandomContrast: 'value_range' must be a pair {low, high} with low <= high, got %s",
        tostring(vr)))
    end
    self.value_range = {vr[1], vr[2]}
    local f = opts[1] or opts.factor
    if f == nil then raise("TypeError", "RandomContrast: 'factor' is required") end
    local lo, hi
    if type(f) == "number" then lo, hi = f, f
    elseif type(f) == "table" and type(f[1]) == "number" and type(f[2]) == "number" then lo, hi = f[1], f[2]
    else raise("ValueError", sfmt("RandomContrast: 'factor' must be a number or a pair, got %s", tostring(f))) end
    if lo < 0 or hi < 0 or lo > 1 then
      raise("ValueError", sfmt("RandomContrast: 'factor' cannot have negative values or a lower bound above 1, " ..
        "got %s", type(f) == "table" and sfmt("{%g, %g}", lo, hi) or tostring(f)))
    end
    self.factor = type(f) == "table" and {lo, hi} or f
    self._lo, self._hi = 1 - lo, 1 + hi
    random_init(self, opts, "RandomContrast")
  end
  function RandomContrast.call(self, x, opts)
    x = to_float(self, x)
    if not augmenting(opts) then return tf.identity(x) end
    local single
    x, single = batched(self, x)
    local c = tf.cast(tf.reshape(draw(self, x, self._lo, self._hi), {-1, 1, 1, 1}), x.dtype)
    local mean = tf.reduce_mean(x, {axis = {2, 3}, keepdims = true})
    local y = tf.clip_by_value((x - mean) * c + mean, tf.constant(self.value_range[1], x.dtype),
                               tf.constant(self.value_range[2], x.dtype))
    return unbatched(y, single)
  end
  function RandomContrast.get_config(self)
    local c = Layer.get_config(self)
    c.factor = type(self.factor) == "table" and {table.unpack(self.factor)} or self.factor
    c.seed, c.value_range = self.seed, {table.unpack(self.value_range)}
    return c
  end
  -- }====
end
