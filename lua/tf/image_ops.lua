--- tf.image: resize (TensorFlow 2's tf.image.resize: "bilinear" and
-- "nearest", half-pixel centers, antialias off) over the resize ops of the
-- image family (bindings/image.c), transform (projective transforms,
-- ImageProjectiveTransformV3), and flip_left_right / flip_up_down as
-- tf.reverse along the width / height axis. Images are NHWC, one image
-- (height, width, channels) or a batch (batch, height, width, channels).
return function(tf)
  tf.image = tf.image or {}
  local image = tf.image
  local resize_raw = tf.core.image_resize

  local function raise(kind, fmt, ...)
    tf.errors.raise(kind, string.format(fmt, ...), 3)
  end

  local function as_image(x, op)
    if not tf.is_tensor(x) then
      if type(x) == "table" and getmetatable(x) and getmetatable(x).__tf_tensor then x = x:value()
      elseif x == nil then raise("TypeError", "%s: argument 'images' expected tensor, got nil", op)
      else x = tf.constant(x) end
    end
    local r = x.rank
    if r ~= nil and r ~= 3 and r ~= 4 then
      raise("ValueError", "%s: 'images' must have either 3 or 4 dimensions, got shape %s", op, tostring(x.shape))
    end
    return x, r
  end

  image.ResizeMethod = {BILINEAR = "bilinear", NEAREST_NEIGHBOR = "nearest", BICUBIC = "bicubic",
                        AREA = "area", LANCZOS3 = "lanczos3", LANCZOS5 = "lanczos5", GAUSSIAN = "gaussian",
                        MITCHELLCUBIC = "mitchellcubic"}

  -- x rounded to float32 (TensorFlow computes the preserved aspect ratio's
  -- size in float32), and rounded half to even (tf.math.round)
  local function f32(x) return (string.unpack("<f", string.pack("<f", x))) end
  local function round_even(x)
    local r = math.floor(x + 0.5)
    if r - x == 0.5 and r % 2 ~= 0 then r = r - 1 end
    return math.tointeger(r)
  end

  --- Resize images to `size` = {height, width}.
  -- @param images (h, w, c) or (n, h, w, c)
  -- @param size {new_height, new_width}
  -- @param opts {method = "bilinear" | "nearest", antialias = false, preserve_aspect_ratio = false}
  -- @return float32 for bilinear (float64 stays float64), the input's dtype for nearest
  function image.resize(images, size, opts)
    opts = opts or {}
    for k in pairs(opts) do
      if k ~= "method" and k ~= "antialias" and k ~= "preserve_aspect_ratio" and k ~= "name" then
        raise("TypeError", "resize: unknown option '%s' (accepted: method, antialias, preserve_aspect_ratio, name)",
              tostring(k))
      end
    end
    local method = opts.method or "bilinear"
    if method ~= "bilinear" and method ~= "nearest" then
      raise("UnimplementedError", "resize: method '%s' is not supported (only 'bilinear' and 'nearest')",
            tostring(method))
    end
    if opts.antialias then raise("UnimplementedError", "resize: antialias=true is not supported") end
    local x, rank = as_image(images, "resize")
    if tf.is_tensor(size) then size = size:totable() end
    if type(size) ~= "table" or #size ~= 2 or math.type(size[1]) ~= "integer" or math.type(size[2]) ~= "integer" then
      raise("ValueError", "resize: 'size' must be two integers {new_height, new_width}")
    end
    local h, w = size[1], size[2]
    if h <= 0 or w <= 0 then
      raise("InvalidArgumentError", "resize: 'size' must be positive, got {%d, %d}", h, w)
    end
    if opts.preserve_aspect_ratio then
      local d = x.shape
      local ih, iw = d[rank - 2], d[rank - 1]
      if ih and iw then   -- TensorFlow's arithmetic: float32, rounded half to even
        local scale = math.min(f32(f32(h) / f32(ih)), f32(f32(w) / f32(iw)))
        local nh, nw = round_even(f32(scale * f32(ih))), round_even(f32(scale * f32(iw)))
        if nh <= 0 or nw <= 0 then
          raise("InvalidArgumentError", "resize: preserve_aspect_ratio scales the %dx%d image to %dx%d, which is "
                .. "empty (size {%d, %d}); output dimensions must be positive", ih, iw, nh, nw, h, w)
        end
        h, w = nh, nw
      end
    end
    if method == "bilinear" and x.dtype ~= tf.float32 and x.dtype ~= tf.float64 then x = tf.cast(x, tf.float32) end
    if rank == nil then raise("ValueError", "resize: 'images' contains no shape") end
    if rank == 3 then x = tf.expand_dims(x, 1) end
    local y = resize_raw(x, h, w, method)
    if rank == 3 then y = tf.squeeze(y, {1}) end
    return y
  end

  --- Flip an image (or a batch) horizontally: reverse the width axis.
  function image.flip_left_right(images)
    local x = as_image(images, "flip_left_right")
    return tf.reverse(x, {-2})
  end

  --- Flip an image (or a batch) vertically: reverse the height axis.
  function image.flip_up_down(images)
    local x = as_image(images, "flip_up_down")
    return tf.reverse(x, {-3})
  end

  local INTERP = {nearest = 0, bilinear = 1}
  local FILL = {reflect = 0, wrap = 1, constant = 2, nearest = 3}

  --- Apply projective transforms (TensorFlow's ImageProjectiveTransformV3,
  -- as tf.raw_ops and Keras's image transform use it).
  -- @param images (h, w, c) or (n, h, w, c); float32, float64, int32, int64 or uint8
  -- @param transforms float32 (8) or (1 | n, 8): {a0, a1, a2, b0, b1, b2, c0, c1} maps an output
  --   point (x, y) (x the column, y the row, 0-based pixel centres) to the input point
  --   ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1
  -- @param opts {interpolation = "bilinear" | "nearest", fill_mode = "reflect" | "wrap" | "constant" |
  --   "nearest", fill_value = 0, output_shape = {height, width} (the input's by default)}
  -- @return the images' dtype and rank. No gradient (a tape that needs one raises).
  function image.transform(images, transforms, opts)
    opts = opts or {}
    if type(opts) ~= "table" then raise("TypeError", "transform: 'opts' must be a table, got %s", type(opts)) end
    for k in pairs(opts) do
      if k ~= "interpolation" and k ~= "fill_mode" and k ~= "fill_value" and k ~= "output_shape" and k ~= "name" then
        raise("TypeError", "transform: unknown option '%s' (accepted: fill_mode, fill_value, interpolation, "
              .. "output_shape, name)", tostring(k))
      end
    end
    local interp = INTERP[opts.interpolation or "bilinear"]
    if interp == nil then
      raise("ValueError", "transform: 'interpolation' must be \"nearest\" or \"bilinear\", got %s",
            tostring(opts.interpolation))
    end
    local mode = FILL[opts.fill_mode or "reflect"]
    if mode == nil then
      raise("ValueError", "transform: 'fill_mode' must be \"reflect\", \"wrap\", \"constant\" or \"nearest\", got %s",
            tostring(opts.fill_mode))
    end
    local fill = opts.fill_value or 0
    if type(fill) ~= "number" then raise("TypeError", "transform: 'fill_value' must be a number, got %s", type(fill)) end
    local x, rank = as_image(images, "transform")
    if rank == nil then raise("ValueError", "transform: 'images' contains no shape") end
    local t = transforms
    if not tf.is_tensor(t) then t = tf.constant(t, tf.float32) end
    if t.dtype ~= tf.float32 then t = tf.cast(t, tf.float32) end
    if t.rank == 1 then t = tf.expand_dims(t, 1) end
    if rank == 3 then x = tf.expand_dims(x, 1) end
    local h, w
    if opts.output_shape ~= nil then
      local os_ = opts.output_shape
      if type(os_) ~= "table" or #os_ ~= 2 or math.type(os_[1]) ~= "integer" or math.type(os_[2]) ~= "integer" then
        raise("ValueError", "transform: 'output_shape' must be two integers {height, width}")
      end
      h, w = os_[1], os_[2]
    else
      local d = x.shape
      h, w = d[2], d[3]
      if h == nil or w == nil then
        raise("ValueError", "transform: the images' height and width must be known (or give output_shape), got %s",
              tostring(x.shape))
      end
    end
    local y = tf.core.image_transform(x, t, h, w, interp, mode, fill)
    if rank == 3 then y = tf.squeeze(y, {1}) end
    return y
  end
end
