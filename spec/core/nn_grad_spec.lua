-- Gradients of matmul and the nn ops, hand-computed or recomputed in plain
-- Lua float64 (spec/gradcheck/*_cases.lua checks them against finite
-- differences): the sparse cross-entropy gradient is softmax - one_hot,
-- batched matmul gradients sum over broadcast batch dimensions, max pooling
-- sends ties to the first maximum, average pooling divides as the forward,
-- conv2d's gradient ops (also tf.nn.conv2d_transpose and
-- tf.nn.conv2d_backprop_input/filter) agree with a naive loop and are the
-- adjoints of conv2d across im2col chunks.
local tf = require("tf")
local support = require("support")
local lcg, numel = support.lcg, support.numel

-- {==== helpers


local function random_tensor(dims, seed, dtype)
  local r, flat = lcg(seed), {}
  for i = 1, numel(dims) do flat[i] = r() end
  return tf.reshape(tf.constant(flat, dtype or tf.float64), dims), flat
end

local function flat(t) return tf.reshape(t, {-1}):totable() end

-- gradients of sum(fn() * w) (w: output_gradients, or ones) w.r.t. 'sources'
local function grads(fn, sources, w)
  local tape = tf.GradientTape()
  for _, s in ipairs(sources) do tape:watch(s) end
  local y = tape:record(fn)
  return tape:gradient(y, sources, w and {output_gradients = w} or nil)
end

-- sum(a * b) in float64 (the engine's reduction, exact enough here)
local function dot(a, b) return tf.reduce_sum(a * b):item() end

-- TensorFlow's output size and padding before along one dimension
local function window(padding, n, k, s, d)
  local eff = (k - 1) * d + 1
  if padding == "VALID" then return (n - eff + s) // s, 0 end
  local out = (n + s - 1) // s
  return out, math.max((out - 1) * s + eff - n, 0) // 2
end

-- Naive conv2d gradients: dX and dF of sum(conv2d(X, F) * DY), flat NHWC / HWIO;
-- 'padding' is a name or TensorFlow's explicit NHWC pairs.
local function ref_conv_grads(X, xd, F, fd, DY, stride, padding, dil)
  local N, H, W, C = xd[1], xd[2], xd[3], xd[4]
  local KH, KW, O = fd[1], fd[2], fd[4]
  local OH, pt, OW, pl
  if type(padding) == "table" then
    pt, pl = padding[2][1], padding[3][1]
    OH = (H + pt + padding[2][2] - (KH - 1) * dil - 1) // stride + 1
    OW = (W + pl + padding[3][2] - (KW - 1) * dil - 1) // stride + 1
  else
    OH, pt = window(padding, H, KH, stride, dil)
    OW, pl = window(padding, W, KW, stride, dil)
  end
  local dX, dF = {}, {}
  for i = 1, #X do dX[i] = 0 end
  for i = 1, #F do dF[i] = 0 end
  for n = 0, N - 1 do
    for oh = 0, OH - 1 do
      for ow = 0, OW - 1 do
        for kh = 0, KH - 1 do
          local ih = oh * stride - pt + kh * dil
          for kw = 0, KW - 1 do
            local iw = ow * stride - pl + kw * dil
            if ih >= 0 and ih < H and iw >= 0 and iw < W then
              for c = 0, C - 1 do
                local xi, fbase = ((n * H + ih) * W + iw) * C + c + 1, ((kh * KW + kw) * C + c) * O
                for o = 0, O - 1 do
                  local g = DY[((n * OH + oh) * OW + ow) * O + o + 1]
                  dX[xi] = dX[xi] + g * F[fbase + o + 1]
                  dF[fbase + o + 1] = dF[fbase + o + 1] + g * X[xi]
                end
              end
            end
          end
        end
      end
    end
  end
  return dX, dF, {N, OH, OW, O}
end
-- }====

describe("matmul gradient", function()
  it("is dc @ b^T and a^T @ dc (hand-worked)", function()
    local a = tf.constant({{1, 2, 3}, {4, 5, 6}}, tf.float64)
    local b = tf.constant({{1, 0}, {0, 1}, {1, 1}}, tf.float64)
    local g = grads(function() return tf.matmul(a, b) end, {a, b})
    assert.tensor_near({{1, 1, 2}, {1, 1, 2}}, g[1])
    assert.tensor_near({{5, 5}, {7, 7}, {9, 9}}, g[2])
  end)

  it("folds the transposes into the products", function()
    local a = tf.constant({{1, 4}, {2, 5}, {3, 6}}, tf.float64)        -- the a above, transposed
    local b = tf.constant({{1, 0, 1}, {0, 1, 1}}, tf.float64)          -- the b above, transposed
    local g = grads(function() return tf.matmul(a, b, {transpose_a = true, transpose_b = true}) end, {a, b})
    assert.tensor_near({{1, 1}, {1, 1}, {2, 2}}, g[1])
    assert.tensor_near({{5, 7, 9}, {5, 7, 9}}, g[2])
  end)

  it("sums over broadcast batch dimensions and keeps each operand's shape", function()
    local a = random_tensor({2, 1, 2, 3}, 1)
    local b = random_tensor({3, 3, 4}, 2)
    local g = grads(function() return tf.matmul(a, b) end, {a, b})
    assert.shape({2, 1, 2, 3}, g[1])
    assert.shape({3, 3, 4}, g[2])
    -- with dc = ones: da[i, 1] = ones(2, 4) @ sum_j b[j]^T; db[j] = sum_i a[i, 1]^T @ ones(2, 4)
    local B, A = b:totable(), a:totable()
    for i = 1, 2 do
      for r = 1, 2 do
        for k = 1, 3 do
          local s = 0
          for j = 1, 3 do for n = 1, 4 do s = s + B[j][k][n] end end
          assert.near(s, g[1]:totable()[i][1][r][k], 1e-12)
        end
      end
    end
    for j = 1, 3 do
      for k = 1, 3 do
        local s = 0
        for i = 1, 2 do for r = 1, 2 do s = s + A[i][1][r][k] end end
        for n = 1, 4 do assert.near(s, g[2]:totable()[j][k][n], 1e-12) end
      end
    end
  end)

  it("takes a rank-2 b against a batched a (a dense layer over a sequence)", function()
    local x = random_tensor({4, 3, 5}, 3, tf.float32)
    local w = random_tensor({5, 2}, 4, tf.float32)
    local g = grads(function() return tf.matmul(x, w) end, {x, w})
    assert.shape({4, 3, 5}, g[1])
    assert.shape({5, 2}, g[2])
    assert.equal(tf.float32, g[2].dtype)
    -- dw = sum over the batch of x_b^T @ ones
    local X, G = x:totable(), g[2]:totable()
    for k = 1, 5 do
      local s = 0
      for b = 1, 4 do for r = 1, 3 do s = s + X[b][r][k] end end
      assert.near(s, G[k][1], 1e-4)
      assert.near(s, G[k][2], 1e-4)
    end
  end)
end)

describe("softmax and log_softmax gradients", function()
  it("vanish for a uniform upstream gradient (rows of softmax sum to 1)", function()
    local x = random_tensor({3, 4}, 5)
    local g = grads(function() return tf.nn.softmax(x) end, {x})
    assert.tensor_near(tf.zeros({3, 4}, tf.float64), g[1], {atol = 1e-12})
  end)

  it("log_softmax: g - softmax * sum(g) (hand-worked)", function()
    local x = tf.constant({{0, 0}}, tf.float64)
    local w = tf.constant({{1, 3}}, tf.float64)
    local g = grads(function() return tf.nn.log_softmax(x) end, {x}, w)
    assert.tensor_near({{1 - 0.5 * 4, 3 - 0.5 * 4}}, g[1])
  end)
end)

describe("cross-entropy gradients", function()
  it("sparse: softmax(logits) - one_hot(labels), labels 1-based, scaled by the loss gradient", function()
    local rows = {{1, 2, 3}, {0.5, -1, 2}}
    local logits = tf.constant(rows, tf.float64)
    local labels = tf.constant({3, 1})
    local w = tf.constant({1, 2}, tf.float64)
    local g = grads(function()
      return tf.nn.sparse_softmax_cross_entropy_with_logits({labels = labels, logits = logits})
    end, {logits}, w)
    local expected = {}
    for i, row in ipairs(rows) do
      local sum = 0
      for _, v in ipairs(row) do sum = sum + math.exp(v) end
      expected[i] = {}
      for j, v in ipairs(row) do
        local onehot = (j == ({3, 1})[i]) and 1 or 0
        expected[i][j] = ({1, 2})[i] * (math.exp(v) / sum - onehot)
      end
    end
    assert.tensor_near(expected, g[1], {atol = 1e-12})
  end)

  it("sparse: no gradient flows to the integer labels", function()
    local logits = tf.constant({{1, 2}}, tf.float32)
    local labels = tf.constant({2})
    local tape = tf.GradientTape()
    tape:watch(logits)
    tape:watch(labels)
    local y = tape:record(function() return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits) end)
    local g = tape:gradient(y, {logits, labels})
    assert.is_nil(g[2])
    assert.tensor_near({{1 / (1 + math.exp(1)), -1 / (1 + math.exp(1))}}, g[1], {atol = 1e-6})
  end)

  it("dense: as TensorFlow, softmax - labels for logits and -log_softmax for labels", function()
    local logits = tf.constant({{0, 0}}, tf.float64)
    local labels = tf.constant({{0.5, 1.5}}, tf.float64)   -- not a distribution: TensorFlow's formula anyway
    local g = grads(function() return tf.nn.softmax_cross_entropy_with_logits(labels, logits) end, {labels, logits})
    assert.tensor_near({{math.log(2), math.log(2)}}, g[1])
    assert.tensor_near({{0.5 - 0.5, 0.5 - 1.5}}, g[2])
  end)

  it("dense: along another axis", function()
    local logits = tf.constant({{0, 1}, {0, 1}}, tf.float64)
    local labels = tf.constant({{1, 0}, {0, 1}}, tf.float64)
    local g = grads(function() return tf.nn.softmax_cross_entropy_with_logits(labels, logits, {axis = 1}) end,
      {logits})
    assert.tensor_near({{0.5 - 1, 0.5}, {0.5, 0.5 - 1}}, g[1])
  end)
end)

describe("max_pool2d and avg_pool2d gradients", function()
  it("max: ties go to the first maximum in row-major order", function()
    local x = tf.ones({1, 2, 2, 1}, tf.float64)
    local g = grads(function() return tf.nn.max_pool2d(x, 2, 2, "VALID") end, {x})
    assert.tensor_near({1, 0, 0, 0}, flat(g[1]))
    local x2 = tf.reshape(tf.constant({3, 1, 3, 3}, tf.float32), {1, 2, 2, 1})
    local g2 = grads(function() return tf.nn.max_pool2d(x2, 2, 2, "VALID") end, {x2})
    assert.tensor_near({1, 0, 0, 0}, flat(g2[1]))
  end)

  it("max: overlapping windows add up at a shared maximum; channels are independent", function()
    -- 3x3 image, 2x2 windows at stride 1: the centre (channel 1) wins all four windows
    local c1 = {1, 2, 1, 2, 9, 2, 1, 2, 1}
    local c2 = {9, 1, 1, 1, 1, 1, 1, 1, 8}
    local v = {}
    for i = 1, 9 do v[2 * i - 1], v[2 * i] = c1[i], c2[i] end
    local x = tf.reshape(tf.constant(v, tf.float64), {1, 3, 3, 2})
    local w = tf.reshape(tf.constant({1, 10, 2, 20, 3, 30, 4, 40}, tf.float64), {1, 2, 2, 2})
    local g = flat(grads(function() return tf.nn.max_pool2d(x, 2, 1, "VALID") end, {x}, w)[1])
    local ch1, ch2 = {}, {}
    for i = 1, 9 do ch1[i], ch2[i] = g[2 * i - 1], g[2 * i] end
    assert.tensor_near({0, 0, 0, 0, 10, 0, 0, 0, 0}, ch1)
    -- channel 2: window 1 -> the 9; windows 2 and 3: ties of 1 -> first position; window 4 -> the 8
    assert.tensor_near({10, 20, 0, 30, 0, 0, 0, 0, 40}, ch2)
  end)

  it("max: SAME padding never wins (all-negative input)", function()
    local x = tf.reshape(tf.constant({-4, -3, -2, -1}, tf.float64), {1, 2, 2, 1})
    local g = grads(function() return tf.nn.max_pool2d(x, 3, 1, "SAME") end, {x})
    assert.tensor_near({0, 0, 0, 4}, flat(g[1]))
  end)

  it("avg: SAME windows divide by their valid elements (hand-worked)", function()
    -- 4x4, 3x3 windows at stride 2, SAME: padding 0 before, 1 after; counts 9, 6, 6, 4
    local x = tf.zeros({1, 4, 4, 1}, tf.float64)
    local g = flat(grads(function() return tf.nn.avg_pool2d(x, 3, 2, "SAME") end, {x})[1])
    local a, b, c = 1 / 9, 1 / 6, 1 / 4
    assert.tensor_near({a, a, a + b, b,
                        a, a, a + b, b,
                        a + b, a + b, a + 2 * b + c, b + c,
                        b, b, b + c, c}, g)
  end)

  it("avg: VALID with stride larger than the window leaves gaps at zero", function()
    local x = tf.zeros({1, 5, 5, 1}, tf.float32)
    local g = flat(grads(function() return tf.nn.avg_pool2d(x, 2, 3, "VALID") end, {x})[1])
    local q = 0.25
    assert.tensor_near({q, q, 0, q, q, q, q, 0, q, q, 0, 0, 0, 0, 0, q, q, 0, q, q, q, q, 0, q, q}, g)
  end)
end)

describe("conv2d gradients", function()
  it("are window counts and window sums for a ones filter (hand-worked)", function()
    local x = tf.reshape(tf.constant({1, 2, 3, 4, 5, 6, 7, 8, 9}, tf.float64), {1, 3, 3, 1})
    local f = tf.ones({2, 2, 1, 1}, tf.float64)
    local g = grads(function() return tf.nn.conv2d(x, f, 1, "VALID") end, {x, f})
    assert.tensor_near({1, 2, 1, 2, 4, 2, 1, 2, 1}, flat(g[1]))
    assert.tensor_near({12, 16, 24, 28}, flat(g[2]))
  end)

  -- at stride 1 the input gradient is a convolution with flipped filters
  -- when the output depth is at most about twice the input depth, else (and
  -- at larger strides) a GEMM and col2im
  local configs = {
    {"VALID, stride 1", {2, 6, 5, 3}, {3, 2, 3, 4}, 1, "VALID", 1},
    {"SAME, stride 1, deep output (col2im)", {2, 5, 6, 1}, {3, 3, 1, 4}, 1, "SAME", 1},
    {"explicit padding wider than the filter", {1, 4, 5, 2}, {2, 2, 2, 2}, 1, {{0, 0}, {3, 1}, {0, 2}, {0, 0}}, 1},
    {"explicit padding, stride 2, dilation 2", {1, 7, 6, 1}, {2, 2, 1, 3}, 2, {{0, 0}, {2, 0}, {1, 3}, {0, 0}}, 2},
    {"SAME, stride 2", {2, 7, 6, 2}, {3, 3, 2, 3}, 2, "SAME", 1},
    {"SAME, even filter, stride 2", {1, 6, 6, 2}, {2, 4, 2, 2}, 2, "SAME", 1},
    {"VALID, dilation 2", {1, 8, 7, 2}, {3, 2, 2, 3}, 1, "VALID", 2},
    {"SAME, dilation 2", {2, 5, 6, 3}, {2, 3, 3, 2}, 1, "SAME", 2},
    {"VALID, stride 3 (uncovered input)", {1, 8, 8, 1}, {2, 2, 1, 2}, 3, "VALID", 1},
  }
  for _, cfg in ipairs(configs) do
    it("match a naive loop: " .. cfg[1], function()
      local xd, fd, stride, padding, dil = cfg[2], cfg[3], cfg[4], cfg[5], cfg[6]
      local x, X = random_tensor(xd, 11)
      local f, F = random_tensor(fd, 12)
      local yd = tf.nn.conv2d(x, f, stride, padding, {dilations = dil}):_dims()
      local dy, DY = random_tensor(yd, 13)
      local dX, dF = ref_conv_grads(X, xd, F, fd, DY, stride, padding, dil)
      local g = grads(function() return tf.nn.conv2d(x, f, stride, padding, {dilations = dil}) end, {x, f}, dy)
      assert.tensor_near(dX, flat(g[1]), {atol = 1e-12})
      assert.tensor_near(dF, flat(g[2]), {atol = 1e-12})
      -- the public gradient ops give the same
      assert.tensor_near(dX, flat(tf.nn.conv2d_backprop_input(xd, f, dy, stride, padding, {dilations = dil})),
        {atol = 1e-12})
      assert.tensor_near(dF, flat(tf.nn.conv2d_backprop_filter(x, fd, dy, stride, padding, {dilations = dil})),
        {atol = 1e-12})
    end)
  end

  -- float32 at stride 1 without dilation, output depth a multiple of 8: the
  -- direct kernels (no im2col), over padded copies of the input for SAME
  -- and explicit padding; the input gradient through the flipped filters
  -- (o <= 2c) or col2im (deeper outputs)
  local direct = {
    {"VALID, 1 input channel (the guide's first layer)", {3, 9, 8, 1}, {3, 3, 1, 16}, "VALID"},
    {"VALID, 16 -> 16 channels, odd widths (pixel tails)", {2, 8, 7, 16}, {3, 3, 16, 16}, "VALID"},
    {"SAME, 3 -> 8 channels (a channel tail of 3)", {2, 6, 5, 3}, {3, 3, 3, 8}, "SAME"},
    {"SAME, 8 -> 24 channels (16 + 8 output blocks)", {1, 5, 6, 8}, {2, 3, 8, 24}, "SAME"},
    {"explicit padding, 5 -> 8 channels", {1, 4, 5, 5}, {2, 2, 5, 8}, {{0, 0}, {2, 1}, {0, 3}, {0, 0}}},
  }
  for _, cfg in ipairs(direct) do
    it("match a naive float64 loop in float32: " .. cfg[1], function()
      local xd, fd, padding = cfg[2], cfg[3], cfg[4]
      local x, X = random_tensor(xd, 41, tf.float32)
      local f, F = random_tensor(fd, 42, tf.float32)
      -- the reference sees the values float32 holds
      X, F = flat(x), flat(f)
      local y = tf.nn.conv2d(x, f, 1, padding)
      local dy = random_tensor(y:_dims(), 43, tf.float32)
      local DY = flat(dy)
      local dX, dF = ref_conv_grads(X, xd, F, fd, DY, 1, padding, 1)
      local g = grads(function() return tf.nn.conv2d(x, f, 1, padding) end, {x, f}, dy)
      assert.tensor_near(dX, flat(g[1]), {atol = 1e-4, rtol = 1e-5})
      assert.tensor_near(dF, flat(g[2]), {atol = 1e-4, rtol = 1e-5})
      -- the forward value: <y, dy> = <f, df>
      local ydy = 0
      for i, v in ipairs(flat(y)) do ydy = ydy + v * DY[i] end
      local fdf = 0
      for i, v in ipairs(dF) do fdf = fdf + v * F[i] end
      assert.near(fdf, ydy, 1e-4 * math.abs(fdf) + 1e-4)
    end)
  end

  -- <conv2d(x, f), dy> = <x, backprop_input(f, dy)> = <f, backprop_filter(x, dy)>
  local function adjoint(xd, fd, stride, padding, dtype, tol)
    local x = random_tensor(xd, 31, dtype)
    local f = random_tensor(fd, 32, dtype)
    local y = tf.nn.conv2d(x, f, stride, padding)
    local dy = random_tensor(y:_dims(), 33, dtype)
    local g = grads(function() return tf.nn.conv2d(x, f, stride, padding) end, {x, f}, dy)
    local ref = dot(y, dy)
    assert.near(ref, dot(x, g[1]), tol * math.abs(ref))
    assert.near(ref, dot(f, g[2]), tol * math.abs(ref))
  end

  it("are conv2d's adjoints across im2col chunks (chunks that split an image)", function()
    -- 64 float64 channels, 3x3: 4.5 KiB per column row, a few MiB per image:
    -- several scratch chunks, ending mid-image
    adjoint({3, 50, 50, 64}, {3, 3, 64, 2}, 1, "SAME", tf.float64, 1e-10)
    adjoint({2, 61, 47, 64}, {3, 3, 64, 3}, 2, "VALID", tf.float64, 1e-10)
    adjoint({3, 80, 80, 8}, {3, 3, 8, 64}, 1, "SAME", tf.float64, 1e-10)   -- col2im at stride 1
    adjoint({2, 40, 40, 32}, {3, 3, 32, 32}, 1, "SAME", tf.float64, 1e-10)  -- flipped filters, chunked
  end)

  it("are conv2d's adjoints for 1x1 filters and filters covering the image (plain GEMM)", function()
    adjoint({2, 5, 4, 3}, {1, 1, 3, 2}, 1, "VALID", tf.float64, 1e-12)
    adjoint({3, 4, 5, 2}, {4, 5, 2, 3}, 1, "VALID", tf.float64, 1e-12)
    adjoint({2, 8, 8, 3}, {3, 3, 3, 4}, 1, "SAME", tf.float32, 1e-5)
  end)

  it("conv2d_transpose places each input pixel's filter at stride spacing (hand-worked)", function()
    local x = tf.reshape(tf.constant({1, 2, 3, 4}, tf.float32), {1, 2, 2, 1})
    local f = tf.ones({2, 2, 1, 1}, tf.float32)
    local y = tf.nn.conv2d_transpose(x, f, {1, 4, 4, 1}, 2, "VALID")
    assert.tensor_near({1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}, flat(y))
    -- padding defaults to SAME; 2 spatial sizes are enough
    assert.shape({1, 4, 4, 1}, tf.nn.conv2d_transpose(x, f, {4, 4}, 2))
  end)

  it("the gradient ops refuse inconsistent shapes", function()
    local f = tf.ones({3, 3, 2, 4})
    assert.tf_error("InvalidArgumentError",
      "conv2d_backprop_input: the gradient has shape (1, 3, 3, 4) but the forward output has shape (None, 5, 5, 4)",
      tf.nn.conv2d_backprop_input, {1, 5, 5, 2}, f, tf.ones({1, 3, 3, 4}), 1, "SAME")
    assert.tf_error("InvalidArgumentError", "conv2d_transpose: 'output_shape' asks for batch 2 and depth 2",
      tf.nn.conv2d_transpose, tf.ones({1, 3, 3, 4}), f, {2, 5, 5, 2}, 1, "VALID")
    assert.tf_error("InvalidArgumentError", "'output_shape' must have 4 (or 2 spatial) entries, got 3",
      tf.nn.conv2d_transpose, tf.ones({1, 3, 3, 4}), f, {5, 5, 2}, 1, "VALID")
    assert.tf_error("InvalidArgumentError", "conv2d_backprop_filter: 'filter_sizes' asks for input depth 3",
      tf.nn.conv2d_backprop_filter, tf.ones({1, 5, 5, 2}), {3, 3, 3, 4}, tf.ones({1, 3, 3, 4}), 1, "VALID")
    assert.tf_error("TypeError", "conv2d_backprop_filter: input and dy must have the same dtype",
      tf.nn.conv2d_backprop_filter, tf.ones({1, 5, 5, 2}), {3, 3, 2, 4}, tf.ones({1, 3, 3, 4}, tf.float64), 1,
      "VALID")
  end)
end)

describe("second-order gradients", function()
  it("through max_pool2d: the gradient's gradient selects at the same argmax", function()
    local x = tf.reshape(tf.constant({1, 5, 2, 3}, tf.float64), {1, 2, 2, 1})
    local dy = tf.constant({{{{2}}}}, tf.float64)
    local outer = tf.GradientTape()
    outer:watch(dy)
    local dx = outer:record(function()
      return grads(function() return tf.nn.max_pool2d(x, 2, 2, "VALID") end, {x}, dy)[1]
    end)
    assert.tensor_near({0, 2, 0, 0}, flat(dx))
    local w = tf.reshape(tf.constant({10, 20, 30, 40}, tf.float64), {1, 2, 2, 1})
    assert.tensor_near({20}, flat(outer:gradient(dx, dy, {output_gradients = w})))
  end)

  it("through conv2d: d/df of |d/dx sum(conv(x, f))|^2 is linear in f", function()
    -- d/dx sum(conv(x, f)) = backprop_input(f, ones); its squared norm is
    -- quadratic in f, so its gradient at 2f is twice that at f
    local x = random_tensor({1, 4, 4, 1}, 41)
    local function at(f)
      local outer = tf.GradientTape()
      outer:watch(f)
      local n = outer:record(function()
        local dx = grads(function() return tf.nn.conv2d(x, f, 1, "SAME") end, {x})[1]
        return dx * dx
      end)
      return flat(outer:gradient(n, f))
    end
    local f = random_tensor({3, 3, 1, 1}, 42)
    local g1, g2 = at(f), at(f * 2)
    for i = 1, #g1 do assert.near(2 * g1[i], g2[i], 1e-10) end
  end)
end)
