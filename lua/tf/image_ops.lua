--- tf.image: resize (TensorFlow 2's tf.image.resize: "bilinear" and
-- "nearest", half-pixel centers, antialias off) over the resize ops of the
-- image family (bindings/image.c), and flip_left_right / flip_up_down as
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
end
