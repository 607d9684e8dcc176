-- tf.image.transform (the image_transform op, TensorFlow's
-- ImageProjectiveTransformV3): hand-computed rotations, translations with
-- each fill mode, zoom, and a Lua recomputation of the sampling formulas.
local tf = require("tf")
local support = require("support")

local function img(rows)          -- a 2-D table -> a (1, h, w, 1) float32 image
  return tf.reshape(tf.constant(rows, tf.float32), {1, #rows, #rows[1], 1})
end
local function plain(t)           -- (1, h, w, 1) -> a 2-D table
  local d = t.shape:as_list()
  return tf.reshape(t, {d[2], d[3]}):totable()
end

local function rot(angle, h, w)   -- Keras's rotation transform (output -> input)
  local c, s = math.cos(angle), math.sin(angle)
  local xo = ((w - 1) - (c * (w - 1) - s * (h - 1))) / 2
  local yo = ((h - 1) - (s * (w - 1) + c * (h - 1))) / 2
  return {c, -s, xo, s, c, yo, 0, 0}
end

-- the kernel's formulas in Lua (float64): reflect / wrap as TensorFlow's
-- MapCoordinate, nearest rounds half away from zero
local function ref_map(c, len, mode)
  if mode == "reflect" then
    if c < 0 then
      if len <= 1 then c = 0 else
        local sz2 = 2 * len
        if c < sz2 then c = sz2 * math.floor(-c / sz2) + c end
        c = c < -len and c + sz2 or -c - 1
      end
    elseif c > len - 1 then
      if len <= 1 then c = 0 else
        local sz2 = 2 * len
        c = c - sz2 * math.floor(c / sz2)
        if c >= len then c = sz2 - c - 1 end
      end
    end
  elseif mode == "wrap" then
    if c < 0 then
      if len <= 1 then c = 0 else c = c + len * (math.floor(-c / (len - 1)) + 1) end
    elseif c > len - 1 then
      if len <= 1 then c = 0 else c = c - len * math.floor(c / (len - 1)) end
    end
  elseif mode == "constant" then
    return c
  end
  return math.max(0, math.min(len - 1, c))
end

local function reference(x, t, interp, mode, fill)   -- x: 2-D table, t: 8 numbers
  local h, w = #x, #x[1]
  local function at(r, c)
    if r < 0 or r >= h or c < 0 or c >= w then return fill end
    return x[r + 1][c + 1]
  end
  local out = {}
  for oy = 0, h - 1 do
    out[oy + 1] = {}
    for ox = 0, w - 1 do
      local k = t[7] * ox + t[8] * oy + 1
      local v = fill
      if k ~= 0 then
        local px = ref_map((t[1] * ox + t[2] * oy + t[3]) / k, w, mode)
        local py = ref_map((t[4] * ox + t[5] * oy + t[6]) / k, h, mode)
        if not (px < 0 or px > w - 1 or py < 0 or py > h - 1) then
          if interp == "nearest" then
            local function rnd(z) return z >= 0 and math.floor(z + 0.5) or -math.floor(-z + 0.5) end
            v = at(rnd(py), rnd(px))
          else
            local y0, x0 = math.floor(py), math.floor(px)
            local top = (x0 + 1 - px) * at(y0, x0) + (px - x0) * at(y0, x0 + 1)
            local bot = (x0 + 1 - px) * at(y0 + 1, x0) + (px - x0) * at(y0 + 1, x0 + 1)
            v = (y0 + 1 - py) * top + (py - y0) * bot
          end
        end
      end
      out[oy + 1][ox + 1] = v
    end
  end
  return out
end

describe("tf.image.transform", function()
  local X = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}

  it("rotates by exactly 90 degrees (counter-clockwise, as np.rot90)", function()
    local t = rot(math.pi / 2, 3, 3)
    local want = {{3, 6, 9}, {2, 5, 8}, {1, 4, 7}}
    assert.same(want, plain(tf.image.transform(img(X), t, {interpolation = "nearest"})))
    assert.tensor_near(want, plain(tf.image.transform(img(X), t)), {atol = 1e-5})
    -- 180 degrees on a 2x3 image
    local r = plain(tf.image.transform(img({{1, 2, 3}, {4, 5, 6}}), rot(math.pi, 2, 3), {interpolation = "nearest"}))
    assert.same({{6, 5, 4}, {3, 2, 1}}, r)
  end)

  it("translates by 1 pixel with each fill mode", function()
    local right = {1, 0, -1, 0, 1, 0, 0, 0}        -- output x reads input x - 1: content moves right
    local cases = {
      constant = {{0, 1, 2}, {0, 4, 5}, {0, 7, 8}},
      reflect = {{1, 1, 2}, {4, 4, 5}, {7, 7, 8}},
      wrap = {{3, 1, 2}, {6, 4, 5}, {9, 7, 8}},
      nearest = {{1, 1, 2}, {4, 4, 5}, {7, 7, 8}},
    }
    for mode, want in pairs(cases) do
      for _, interp in ipairs({"nearest", "bilinear"}) do
        assert.same(want, plain(tf.image.transform(img(X), right, {fill_mode = mode, interpolation = interp})))
      end
    end
    -- down by one, constant fill value -1
    local down = plain(tf.image.transform(img(X), {1, 0, 0, 0, 1, -1, 0, 0}, {fill_mode = "constant", fill_value = -1}))
    assert.same({{-1, -1, -1}, {1, 2, 3}, {4, 5, 6}}, down)
    -- two pixels on a row of 4 tell reflect (dcba|abcd) from nearest and wrap (abcd|abcd)
    local row = img({{1, 2, 3, 4}})
    local two = {1, 0, -2, 0, 1, 0, 0, 0}
    assert.same({{0, 0, 1, 2}}, plain(tf.image.transform(row, two, {fill_mode = "constant"})))
    assert.same({{2, 1, 1, 2}}, plain(tf.image.transform(row, two, {fill_mode = "reflect"})))
    assert.same({{3, 4, 1, 2}}, plain(tf.image.transform(row, two, {fill_mode = "wrap"})))
    assert.same({{1, 1, 1, 2}}, plain(tf.image.transform(row, two, {fill_mode = "nearest"})))
  end)

  it("zooms (Keras's zoom transform): bilinear interpolation of a linear image is exact", function()
    local rows = {}
    for r = 0, 3 do
      rows[r + 1] = {}
      for c = 0, 3 do rows[r + 1][c + 1] = c + 10 * r end
    end
    local z = 0.5                                     -- 2x zoom in: in = 0.5 out + 0.75
    local off = (3 / 2) * (1 - z)
    local out = plain(tf.image.transform(img(rows), {z, 0, off, 0, z, off, 0, 0}))
    for r = 0, 3 do
      for c = 0, 3 do assert.near((0.5 * c + 0.75) + 10 * (0.5 * r + 0.75), out[r + 1][c + 1], 1e-5) end
    end
  end)

  it("agrees with a Lua recomputation for random projective transforms, every mode and interpolation", function()
    local rng = support.lcg(7)
    local x = {}
    for r = 1, 5 do
      x[r] = {}
      for c = 1, 6 do x[r][c] = math.floor(rng() * 100) / 10 end
    end
    for trial = 1, 6 do
      local t = {}
      for i = 1, 6 do t[i] = (rng() - 0.5) * 4 end
      t[7], t[8] = (rng() - 0.5) * 0.1, trial % 2 == 0 and 0 or (rng() - 0.5) * 0.1
      for _, mode in ipairs({"reflect", "wrap", "constant", "nearest"}) do
        for _, interp in ipairs({"nearest", "bilinear"}) do
          local f32 = {}
          for i = 1, 8 do f32[i] = (string.unpack("<f", string.pack("<f", t[i]))) end
          local got = plain(tf.image.transform(img(x), f32, {fill_mode = mode, interpolation = interp,
                                                             fill_value = 2.5}))
          local want = reference(x, f32, interp, mode, 2.5)
          assert.tensor_near(want, got, {atol = 2e-3})
        end
      end
    end
  end)

  it("one transform per image, 3-D images, integer dtypes, output_shape, a zero projection", function()
    local two = tf.concat({img(X), img(X) * 10}, 1)
    local t = tf.constant({{1, 0, -1, 0, 1, 0, 0, 0}, {1, 0, 0, 0, 1, 0, 0, 0}}, tf.float32)
    local y = tf.image.transform(two, t, {fill_mode = "constant"})
    assert.same({{0, 1, 2}, {0, 4, 5}, {0, 7, 8}}, plain(y[{1, {}, {}, {}}]:reshape({1, 3, 3, 1})))
    assert.same({{10, 20, 30}, {40, 50, 60}, {70, 80, 90}}, plain(y[{2, {}, {}, {}}]:reshape({1, 3, 3, 1})))
    local three = tf.image.transform(tf.reshape(tf.constant(X, tf.uint8), {3, 3, 1}), {1, 0, -1, 0, 1, 0, 0, 0},
                                     {fill_mode = "wrap", interpolation = "nearest"})
    assert.equal(tf.uint8, three.dtype)
    assert.same({3, 3, 1}, three.shape:as_list())
    local big = tf.image.transform(img(X), {1, 0, 0, 0, 1, 0, 0, 0}, {output_shape = {2, 4}, fill_mode = "constant"})
    assert.same({{1, 2, 3, 0}, {4, 5, 6, 0}}, plain(big))
    -- k = c0 x + c1 y + 1 = 0 at x = 1: the fill value
    local z = plain(tf.image.transform(img(X), {1, 0, 0, 0, 1, 0, -1, 0}, {fill_mode = "constant", fill_value = 7,
                                                                         interpolation = "nearest"}))
    assert.equal(7, z[1][2])
    assert.equal(1, z[1][1])
  end)

  it("runs inside tf.fn", function()
    local f = tf.fn(function(x, t) return tf.image.transform(x, t, {fill_mode = "constant"}) end)
    local y = f(img(X), tf.constant({{1, 0, -1, 0, 1, 0, 0, 0}}, tf.float32))
    assert.same({{0, 1, 2}, {0, 4, 5}, {0, 7, 8}}, plain(y))
  end)

  it("rejects bad arguments; has no gradient", function()
    assert.tf_error("ValueError", "transform: 'fill_mode' must be", function()
      tf.image.transform(img(X), {1, 0, 0, 0, 1, 0, 0, 0}, {fill_mode = "mirror"})
    end)
    assert.tf_error("ValueError", "transform: 'interpolation' must be", function()
      tf.image.transform(img(X), {1, 0, 0, 0, 1, 0, 0, 0}, {interpolation = "bicubic"})
    end)
    assert.tf_error("TypeError", "transform: unknown option 'mode'", function()
      tf.image.transform(img(X), {1, 0, 0, 0, 1, 0, 0, 0}, {mode = "wrap"})
    end)
    assert.tf_error("InvalidArgumentError", "image_transform: 'transforms' must have shape (1, 8) or (batch, 8)",
      function() tf.image.transform(img(X), {1, 0, 0, 0, 1, 0}) end)
    assert.tf_error("ValueError", "transform: 'images' must have either 3 or 4 dimensions", function()
      tf.image.transform(tf.ones({3, 3}), {1, 0, 0, 0, 1, 0, 0, 0})
    end)
    assert.tf_error("TypeError", "image_transform: 'images' has dtype bool", function()
      tf.image.transform(tf.cast(img(X), tf.bool), {1, 0, 0, 0, 1, 0, 0, 0})
    end)
    local x = tf.Variable(img(X))
    local tape = tf.GradientTape()
    local y = tape:record(function() return tf.reduce_sum(tf.image.transform(x, {1, 0, -1, 0, 1, 0, 0, 0})) end)
    assert.tf_error("NotFoundError", "no gradient defined for op 'image_transform'", function()
      tape:gradient(y, {x})
    end)
  end)
end)

describe("tf.image.transform edge coordinates", function()
  it("non-finite coordinates read the fill value; huge ones stay defined", function()
    local x = tf.reshape(tf.range(1, 10, 1, tf.float32), {1, 3, 3, 1})
    for _, m in ipairs({"reflect", "wrap", "constant", "nearest"}) do
      local y = tf.image.transform(x, {1, 0, 0, 0, 1, 1 / 0, 0, 0}, {fill_mode = m, fill_value = -2})
      assert.same({-2, -2, -2, -2, -2, -2, -2, -2, -2}, tf.reshape(y, {9}):totable())
      local big = tf.reshape(tf.image.transform(x, {1, 0, -1e30, 0, 1, 0, 0, 0}, {fill_mode = m}), {9}):totable()
      for _, v in ipairs(big) do assert.is_true(v >= 0 and v <= 9) end
    end
    assert.same({0, 0, 0}, tf.reshape(tf.image.transform(x, {0 / 0, 0, 0, 0, 1, 0, 0, 0}, {fill_mode = "nearest",
      output_shape = {1, 3}}), {3}):totable())
  end)
end)
