-- tf.image.resize (TensorFlow 2's half-pixel sampling, bilinear and
-- nearest) against hand-worked cases and a plain-Lua reference, dtypes,
-- errors, tf.fn with unknown dims, and tf.image.flip_left_right.
local tf = require("tf")

-- plain-Lua bilinear resize of one channel-last image {h][w][c}
local function ref_bilinear(img, oh, ow)
  local ih, iw, c = #img, #img[1], #img[1][1]
  local function axis(i, n_in, n_out)
    local x = (i - 1 + 0.5) * n_in / n_out - 0.5
    local f = math.floor(x)
    return math.max(f, 0) + 1, math.min(math.ceil(x), n_in - 1) + 1, x - f
  end
  local out = {}
  for i = 1, oh do
    out[i] = {}
    local y0, y1, wy = axis(i, ih, oh)
    for j = 1, ow do
      out[i][j] = {}
      local x0, x1, wx = axis(j, iw, ow)
      for k = 1, c do
        local top = img[y0][x0][k] + (img[y0][x1][k] - img[y0][x0][k]) * wx
        local bot = img[y1][x0][k] + (img[y1][x1][k] - img[y1][x0][k]) * wx
        out[i][j][k] = top + (bot - top) * wy
      end
    end
  end
  return out
end

local function random_image(h, w, c, seed)
  local s, img = seed, {}
  for i = 1, h do
    img[i] = {}
    for j = 1, w do
      img[i][j] = {}
      for k = 1, c do
        s = (s * 1103515245 + 12345) % 2147483648
        img[i][j][k] = s / 2147483648
      end
    end
  end
  return img
end

describe("tf.image.resize", function()
  local x = tf.constant({{{0.0}, {1.0}}, {{2.0}, {3.0}}})

  it("upsamples bilinearly with half-pixel centers (TensorFlow 2's values)", function()
    assert.tensor_near({{{0}, {0.25}, {0.75}, {1}}, {{0.5}, {0.75}, {1.25}, {1.5}},
                        {{1.5}, {1.75}, {2.25}, {2.5}}, {{2}, {2.25}, {2.75}, {3}}},
                       tf.image.resize(x, {4, 4}), {atol = 1e-6})
  end)

  it("matches a plain-Lua reference up and down, batched, in float64", function()
    local a, b = random_image(5, 7, 3, 1), random_image(5, 7, 3, 2)
    local images = tf.constant({a, b}, tf.float64)
    for _, size in ipairs({{9, 4}, {2, 3}, {5, 7}, {1, 1}}) do
      local y = tf.image.resize(images, size)
      assert.are.equal(tf.float64, y.dtype)
      assert.tensor_near({ref_bilinear(a, size[1], size[2]), ref_bilinear(b, size[1], size[2])}, y, {atol = 1e-12})
    end
  end)

  it("picks nearest pixels and keeps the dtype", function()
    local y = tf.image.resize(tf.constant({{{0}, {1}}, {{2}, {3}}}), {3, 3}, {method = "nearest"})
    assert.are.equal(tf.int32, y.dtype)
    assert.are.same({{{0}, {1}, {1}}, {{2}, {3}, {3}}, {{2}, {3}, {3}}}, y:totable())
    local down = tf.image.resize(tf.reshape(tf.range(0, 16), {4, 4, 1}), {2, 2}, {method = "nearest"})
    assert.are.same({{{5}, {7}}, {{13}, {15}}}, down:totable())
  end)

  it("returns float32 for integer images with bilinear", function()
    local y = tf.image.resize(tf.constant({{{0}, {2}}}, tf.uint8), {1, 4})
    assert.are.equal(tf.float32, y.dtype)
    assert.tensor_near({{{0}, {0.5}, {1.5}, {2}}}, y)
  end)

  it("keeps the aspect ratio when asked", function()
    assert.shape({2, 4, 1}, tf.image.resize(tf.zeros({4, 8, 1}), {3, 4}, {preserve_aspect_ratio = true}))
  end)

  it("rounds the preserved aspect ratio's size half to even, in float32, as TensorFlow", function()
    -- 7x2 to {13, 3}: scale = min(13/7, 3/2) = 1.5; 7 * 1.5 = 10.5 -> 10 (even), 2 * 1.5 = 3
    assert.shape({10, 3, 1}, tf.image.resize(tf.zeros({7, 2, 1}), {13, 3}, {preserve_aspect_ratio = true}))
    -- 5x2 to {100, 3}: 5 * 1.5 = 7.5 -> 8 (even); 9x2 to {100, 1}: 9 * 0.5 = 4.5 -> 4
    assert.shape({8, 3, 1}, tf.image.resize(tf.zeros({5, 2, 1}), {100, 3}, {preserve_aspect_ratio = true}))
    assert.shape({4, 1, 1}, tf.image.resize(tf.zeros({9, 2, 1}), {100, 1}, {preserve_aspect_ratio = true}))
    -- float32: 3/7 (0.42857143) times 7 rounds to exactly 3 (in double it would be 3.00000003)
    assert.shape({1, 3, 3, 1}, tf.image.resize(tf.zeros({1, 7, 7, 1}), {3, 3}, {preserve_aspect_ratio = true}))
  end)

  it("refuses a preserved aspect ratio that scales a side to 0, as TensorFlow", function()
    -- 1x5 to {1, 1}: scale = 1/5; 1 * 0.2 = 0.2 rounds to 0
    assert.tf_error("InvalidArgumentError",
      "resize: preserve_aspect_ratio scales the 1x5 image to 0x1, which is empty (size {1, 1}); output dimensions "
      .. "must be positive", tf.image.resize, tf.zeros({1, 5, 1}), {1, 1}, {preserve_aspect_ratio = true})
  end)

  it("picks the nearest pixel with TensorFlow's float32 arithmetic", function()
    -- output i reads floor((i + 0.5) * 30 / 11) = floor((2i + 1) * 15 / 11): exactly 15 for i = 5, which
    -- double arithmetic computes as 14.999999999999998 (TensorFlow's kernel and PyTorch's nearest-exact: 15)
    local row = tf.reshape(tf.range(0, 30), {1, 30, 1})
    local y = tf.image.resize(row, {1, 11}, {method = "nearest"})
    assert.are.same({{{1}, {4}, {6}, {9}, {12}, {15}, {17}, {20}, {23}, {25}, {28}}}, y:totable())
    local col = tf.image.resize(tf.reshape(tf.range(0, 30), {30, 1, 1}), {11, 1}, {method = "nearest"})
    assert.are.same({1, 4, 6, 9, 12, 15, 17, 20, 23, 25, 28}, tf.reshape(col, {11}):totable())
    -- the gradient scatters back through the same pixels: pixel 15 gets output 5's gradient, 14 none
    local x = tf.cast(row, tf.float32)
    local t = tf.GradientTape()
    t:watch(x)
    local out = t:record(function() return tf.image.resize(x, {1, 11}, {method = "nearest"}) end)
    local g = tf.reshape(t:gradient(out, x), {30}):totable()
    assert.are.equal(0, g[15])
    assert.are.equal(1, g[16])
  end)

  it("raises for bad sizes, ranks, methods and antialias", function()
    assert.tf_error("InvalidArgumentError", "resize: 'size' must be positive, got {0, 2}", tf.image.resize, x, {0, 2})
    assert.tf_error("ValueError", "resize: 'images' must have either 3 or 4 dimensions, got shape (2, 2)",
      tf.image.resize, tf.zeros({2, 2}), {3, 3})
    assert.tf_error("UnimplementedError", "resize: method 'bicubic' is not supported",
      tf.image.resize, x, {3, 3}, {method = "bicubic"})
    assert.tf_error("UnimplementedError", "resize: antialias=true is not supported",
      tf.image.resize, x, {3, 3}, {antialias = true})
    assert.tf_error("InvalidArgumentError", "resize_bilinear: 'images' must have a non-zero height and width",
      tf.image.resize, tf.zeros({0, 2, 1}), {3, 3})
  end)

  it("works inside tf.fn with unknown batch and sizes, and its gradient sums to the output's", function()
    local f = tf.fn(function(im)
      local t = tf.GradientTape()
      t:watch(im)
      local y = t:record(function() return tf.image.resize(im, {6, 3}) end)
      return y, t:gradient(y, im)
    end, {input_signature = {tf.TensorSpec({-1, -1, -1, 2})}})
    local y, g = f(tf.ones({3, 4, 5, 2}))
    assert.shape({3, 6, 3, 2}, y)
    assert.shape({3, 4, 5, 2}, g)
    -- every output pixel's weights sum to 1: the gradient of sum(y) sums to #y
    assert.near(3 * 6 * 3 * 2, tf.reduce_sum(g):item(), 1e-3)
  end)
end)

describe("tf.image.flip_left_right", function()
  it("reverses the width axis of an image and of a batch", function()
    local img = tf.constant({{{1, 2}, {3, 4}, {5, 6}}})
    assert.are.same({{{5, 6}, {3, 4}, {1, 2}}}, tf.image.flip_left_right(img):totable())
    assert.are.same({{{{5, 6}, {3, 4}, {1, 2}}}}, tf.image.flip_left_right(tf.expand_dims(img, 1)):totable())
    assert.are.same({{{3, 4}}, {{1, 2}}}, tf.image.flip_up_down(tf.constant({{{1, 2}}, {{3, 4}}})):totable())
  end)
end)
