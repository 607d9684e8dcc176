-- tf.nn.conv3d, separable_conv2d, max_pool1d / avg_pool1d, conv1d_transpose:
-- values against float64 direct loops in plain Lua, finite-difference
-- gradients (spec/gradcheck/harness.lua), and errors naming the op, the
-- argument and the shapes.
local tf = require("tf")
local H = require("gradcheck.harness")
local S = require("support")

-- deterministic values in [-1, 1] as a nested table of `shape`
local function pseudo(shape, seed)
  local rnd = S.lcg(seed)
  local flat = {}
  for i = 1, S.numel(shape) do flat[i] = rnd() end
  return S.nest(flat, shape)
end

-- TensorFlow's window padding: pad before, output size
local function window(pad, n, k, s, d)
  local eff = (k - 1) * d + 1
  if pad == "SAME" then
    local out = (n + s - 1) // s
    return math.max((out - 1) * s + eff - n, 0) // 2, out
  end
  return 0, math.max((n - eff) // s + 1, 0)
end

-- x[n][d][h][w][c], f[a][b][e][c][o]
local function ref_conv3d(x, f, s, pad, dil)
  local N, D, Hh, W, C = #x, #x[1], #x[1][1], #x[1][1][1], #x[1][1][1][1]
  local KD, KH, KW, O = #f, #f[1], #f[1][1], #f[1][1][1][1]
  local p1, od = window(pad, D, KD, s[1], dil[1])
  local p2, oh = window(pad, Hh, KH, s[2], dil[2])
  local p3, ow = window(pad, W, KW, s[3], dil[3])
  local y = {}
  for n = 1, N do
    y[n] = {}
    for i = 1, od do
      y[n][i] = {}
      for j = 1, oh do
        y[n][i][j] = {}
        for k = 1, ow do
          y[n][i][j][k] = {}
          for o = 1, O do
            local acc = 0
            for a = 1, KD do for b = 1, KH do for e = 1, KW do
              local di = (i - 1) * s[1] + (a - 1) * dil[1] - p1 + 1
              local hj = (j - 1) * s[2] + (b - 1) * dil[2] - p2 + 1
              local wk = (k - 1) * s[3] + (e - 1) * dil[3] - p3 + 1
              if di >= 1 and di <= D and hj >= 1 and hj <= Hh and wk >= 1 and wk <= W then
                for c = 1, C do acc = acc + x[n][di][hj][wk][c] * f[a][b][e][c][o] end
              end
            end end end
            y[n][i][j][k][o] = acc
          end
        end
      end
    end
  end
  return y
end

-- separable: x[n][h][w][c], dw[a][b][c][m], pw[1][1][c*M+m][o]
local function ref_separable(x, dw, pw, s, pad)
  local N, Hh, W, C = #x, #x[1], #x[1][1], #x[1][1][1]
  local KH, KW, M, O = #dw, #dw[1], #dw[1][1][1], #pw[1][1][1]
  local p1, oh = window(pad, Hh, KH, s, 1)
  local p2, ow = window(pad, W, KW, s, 1)
  local y = {}
  for n = 1, N do
    y[n] = {}
    for i = 1, oh do
      y[n][i] = {}
      for j = 1, ow do
        local mid = {}
        for c = 1, C do for m = 1, M do
          local acc = 0
          for a = 1, KH do for b = 1, KW do
            local hi, wj = (i - 1) * s + a - p1, (j - 1) * s + b - p2
            if hi >= 1 and hi <= Hh and wj >= 1 and wj <= W then acc = acc + x[n][hi][wj][c] * dw[a][b][c][m] end
          end end
          mid[(c - 1) * M + m] = acc
        end end
        y[n][i][j] = {}
        for o = 1, O do
          local acc = 0
          for q = 1, C * M do acc = acc + mid[q] * pw[1][1][q][o] end
          y[n][i][j][o] = acc
        end
      end
    end
  end
  return y
end

-- x[n][w][c]; "max" or "avg" (SAME: the average over the valid positions)
local function ref_pool1d(x, kind, k, s, pad)
  local N, W, C = #x, #x[1], #x[1][1]
  local p, ow = window(pad, W, k, s, 1)
  local y = {}
  for n = 1, N do
    y[n] = {}
    for i = 1, ow do
      y[n][i] = {}
      for c = 1, C do
        local acc, cnt = kind == "max" and -math.huge or 0, 0
        for a = 1, k do
          local wi = (i - 1) * s + a - p
          if wi >= 1 and wi <= W then
            local v = x[n][wi][c]
            if kind == "max" then acc = math.max(acc, v) else acc = acc + v end
            cnt = cnt + 1
          end
        end
        y[n][i][c] = kind == "max" and acc or acc / cnt
      end
    end
  end
  return y
end

-- transposed 1-d convolution: x[n][w][c] (the conv's output), f[k][o][c],
-- into an output of width OW (the conv's input)
local function ref_conv1d_transpose(x, f, OW, s, pad)
  local N, W, C = #x, #x[1], #x[1][1]
  local K, O = #f, #f[1]
  local p = 0
  if pad == "SAME" then p = math.max((W - 1) * s + K - OW, 0) // 2 end
  local y = {}
  for n = 1, N do
    y[n] = {}
    for j = 1, OW do
      y[n][j] = {}
      for o = 1, O do y[n][j][o] = 0 end
    end
    for i = 1, W do for k = 1, K do
      local j = (i - 1) * s + k - p
      if j >= 1 and j <= OW then
        for o = 1, O do for c = 1, C do y[n][j][o] = y[n][j][o] + x[n][i][c] * f[k][o][c] end end
      end
    end end
  end
  return y
end

local f64 = tf.float64
local function T(v) return tf.constant(v, f64) end

describe("tf.nn.conv3d", function()
  local x, f = pseudo({2, 5, 4, 6, 3}, 7), pseudo({2, 3, 2, 3, 4}, 11)
  for _, case in ipairs({
    {s = {1, 1, 1}, pad = "VALID", d = {1, 1, 1}},
    {s = {2, 1, 2}, pad = "SAME", d = {1, 1, 1}},
    {s = {1, 2, 1}, pad = "VALID", d = {1, 1, 1}},
    {s = {1, 1, 1}, pad = "SAME", d = {2, 1, 2}},
  }) do
    it(("matches a direct loop: strides {%s}, %s, dilations {%s}"):format(table.concat(case.s, ", "), case.pad,
        table.concat(case.d, ", ")), function()
      local y = tf.nn.conv3d(T(x), T(f), case.s, case.pad, {dilations = case.d})
      assert.tensor_near(ref_conv3d(x, f, case.s, case.pad, case.d), y, {atol = 1e-12})
    end)
  end
  it("takes strides as an integer or 5 entries", function()
    local y = tf.nn.conv3d(T(x), T(f), {1, 2, 2, 2, 1}, "SAME")
    assert.tensor_near(ref_conv3d(x, f, {2, 2, 2}, "SAME", {1, 1, 1}), y, {atol = 1e-12})
    assert.shape({2, 4, 2, 5, 4}, tf.nn.conv3d(T(x), T(f), 1, "VALID"))
  end)
  it("has float32 values near the float64 reference", function()
    local y = tf.nn.conv3d(tf.constant(x, tf.float32), tf.constant(f, tf.float32), 1, "SAME")
    assert.equal(tf.float32, y.dtype)
    assert.tensor_near(ref_conv3d(x, f, {1, 1, 1}, "SAME", {1, 1, 1}), y, {atol = 1e-5})
  end)
  it("has finite-difference gradients (input and filters)", function()
    assert.is_true(H.check("conv3d", {inputs = {{{1, 4, 3, 4, 2}}, {{2, 2, 3, 2, 3}}},
      fn = function(tf_, a, b) return tf_.nn.conv3d(a, b, {2, 1, 1}, "SAME") end}))
    assert.is_true(H.check("conv3d_dilated", {inputs = {{{2, 5, 3, 3, 1}}, {{2, 1, 2, 1, 2}}},
      fn = function(tf_, a, b) return tf_.nn.conv3d(a, b, 1, "VALID", {dilations = {2, 1, 1}}) end}))
  end)
  it("works inside tf.fn", function()
    local g = tf.fn(function(a, b) return tf.nn.conv3d(a, b, 1, "VALID") end)
    assert.tensor_near(ref_conv3d(x, f, {1, 1, 1}, "VALID", {1, 1, 1}), g(T(x), T(f)), {atol = 1e-12})
  end)
  it("errors name the op, the argument and the shapes", function()
    assert.tf_error("InvalidArgumentError", "conv3d: 'input' must have rank 5, got shape (2, 3, 4, 5)",
      tf.nn.conv3d, tf.zeros({2, 3, 4, 5}), tf.zeros({1, 1, 1, 5, 2}), 1, "VALID")
    assert.tf_error("InvalidArgumentError", "conv3d: input depth 3 does not match the filters' input depth 2: input "
      .. "is (1, 2, 2, 2, 3), filters is (1, 1, 1, 2, 4)",
      tf.nn.conv3d, tf.zeros({1, 2, 2, 2, 3}), tf.zeros({1, 1, 1, 2, 4}), 1, "VALID")
    assert.tf_error("InvalidArgumentError", "conv3d: 'strides' must be a positive integer or a list of 1, 3 or 5",
      tf.nn.conv3d, tf.zeros({1, 2, 2, 2, 3}), tf.zeros({1, 1, 1, 3, 4}), {1, 2}, "VALID")
    assert.tf_error("ValueError", "conv3d: 'padding' must be 'SAME' or 'VALID', got 'FULL'",
      tf.nn.conv3d, tf.zeros({1, 2, 2, 2, 3}), tf.zeros({1, 1, 1, 3, 4}), 1, "FULL")
  end)
end)

describe("tf.nn.separable_conv2d", function()
  local x, dw, pw = pseudo({2, 6, 5, 3}, 3), pseudo({3, 3, 3, 2}, 5), pseudo({1, 1, 6, 4}, 9)
  it("matches a direct loop (VALID and SAME, strides 1 and 2)", function()
    for _, pad in ipairs({"VALID", "SAME"}) do
      for _, s in ipairs({1, 2}) do
        assert.tensor_near(ref_separable(x, dw, pw, s, pad), tf.nn.separable_conv2d(T(x), T(dw), T(pw), s, pad),
                           {atol = 1e-12})
      end
    end
  end)
  it("has finite-difference gradients for all three inputs", function()
    assert.is_true(H.check("separable_conv2d", {inputs = {{{1, 4, 4, 2}}, {{2, 2, 2, 2}}, {{1, 1, 4, 3}}},
      fn = function(tf_, a, b, c) return tf_.nn.separable_conv2d(a, b, c, 1, "SAME") end}))
  end)
  it("checks the pointwise filter's shape", function()
    assert.tf_error("InvalidArgumentError", "separable_conv2d: 'pointwise_filter' must have shape (1, 1, 6, out) for a "
      .. "depthwise_filter of shape (3, 3, 3, 2), got (1, 1, 5, 4)",
      tf.nn.separable_conv2d, T(x), T(dw), tf.zeros({1, 1, 5, 4}, f64), 1, "SAME")
    assert.tf_error("InvalidArgumentError", "separable_conv2d: 'pointwise_filter' must have rank 4, got shape (6, 4)",
      tf.nn.separable_conv2d, T(x), T(dw), tf.zeros({6, 4}, f64), 1, "SAME")
  end)
end)

describe("tf.nn.max_pool1d / avg_pool1d", function()
  local x = pseudo({2, 7, 3}, 13)
  for _, kind in ipairs({"max", "avg"}) do
    local op = tf.nn[kind .. "_pool1d"]
    it(kind .. " matches a direct loop", function()
      for _, c in ipairs({{2, 2, "VALID"}, {3, 1, "SAME"}, {3, 2, "SAME"}, {2, 3, "VALID"}}) do
        assert.tensor_near(ref_pool1d(x, kind, c[1], c[2], c[3]), op(T(x), c[1], c[2], c[3]), {atol = 1e-12})
      end
      -- ksize / strides as TensorFlow's 3-entry lists
      assert.tensor_near(ref_pool1d(x, kind, 3, 2, "SAME"), op(T(x), {1, 3, 1}, {1, 2, 1}, "SAME"), {atol = 1e-12})
    end)
    it(kind .. " has finite-difference gradients", function()
      assert.is_true(H.check(kind .. "_pool1d", {inputs = {{{2, 6, 2}, function(i) return ((i * 37) % 23) / 7 end}},
        fn = function(tf_, a) return tf_.nn[kind .. "_pool1d"](a, 3, 2, "SAME") end}))
    end)
    it(kind .. " errors name the op and the shape", function()
      assert.tf_error("InvalidArgumentError", kind .. "_pool1d: 'input' must have rank 3, got shape (2, 7)",
        op, tf.zeros({2, 7}), 2, 2, "VALID")
      assert.tf_error("InvalidArgumentError", kind .. "_pool1d: 'ksize' must be a positive integer or a list of 1 or 3",
        op, T(x), 0, 2, "VALID")
    end)
  end
end)

describe("tf.nn.conv1d_transpose", function()
  local x, f = pseudo({2, 4, 3}, 17), pseudo({3, 2, 3}, 19)
  it("matches a direct scatter loop", function()
    assert.tensor_near(ref_conv1d_transpose(x, f, 8, 2, "SAME"),
      tf.nn.conv1d_transpose(T(x), T(f), {2, 8, 2}, 2, "SAME"), {atol = 1e-12})
    assert.tensor_near(ref_conv1d_transpose(x, f, 9, 2, "VALID"),
      tf.nn.conv1d_transpose(T(x), T(f), {2, 9, 2}, 2, "VALID"), {atol = 1e-12})
  end)
  it("has finite-difference gradients", function()
    assert.is_true(H.check("conv1d_transpose", {inputs = {{{1, 3, 2}}, {{3, 2, 2}}},
      fn = function(tf_, a, b) return tf_.nn.conv1d_transpose(a, b, {1, 6, 2}, 2, "SAME") end}))
  end)
end)

-- depthwise: x[n][h][w][c], f[a][b][c][m] -> channel (c - 1) * M + m
local function ref_depthwise(x, f, s, pad, d)
  local N, Hh, W, C = #x, #x[1], #x[1][1], #x[1][1][1]
  local KH, KW, M = #f, #f[1], #f[1][1][1]
  local p1, oh = window(pad, Hh, KH, s[1], d[1])
  local p2, ow = window(pad, W, KW, s[2], d[2])
  local y = {}
  for n = 1, N do
    y[n] = {}
    for i = 1, oh do
      y[n][i] = {}
      for j = 1, ow do
        y[n][i][j] = {}
        for c = 1, C do for m = 1, M do
          local acc = 0
          for a = 1, KH do for b = 1, KW do
            local hi, wj = (i - 1) * s[1] + (a - 1) * d[1] - p1 + 1, (j - 1) * s[2] + (b - 1) * d[2] - p2 + 1
            if hi >= 1 and hi <= Hh and wj >= 1 and wj <= W then acc = acc + x[n][hi][wj][c] * f[a][b][c][m] end
          end end
          y[n][i][j][(c - 1) * M + m] = acc
        end end
      end
    end
  end
  return y
end

describe("tf.nn.depthwise_conv2d (the engine's op) and its gradient ops", function()
  local x = pseudo({2, 7, 6, 3}, 23)
  for _, c in ipairs({
    {s = {1, 1}, pad = "VALID", d = {1, 1}, m = 1},
    {s = {2, 2}, pad = "SAME", d = {1, 1}, m = 2},
    {s = {2, 1}, pad = "VALID", d = {1, 1}, m = 3},
    {s = {1, 1}, pad = "SAME", d = {2, 3}, m = 2},
    {s = {3, 2}, pad = "SAME", d = {2, 1}, m = 1},
  }) do
    it(("matches a direct loop: strides {%d, %d}, %s, dilations {%d, %d}, multiplier %d"):format(c.s[1], c.s[2],
        c.pad, c.d[1], c.d[2], c.m), function()
      local f = pseudo({3, 2, 3, c.m}, 29)
      local want = ref_depthwise(x, f, c.s, c.pad, c.d)
      assert.tensor_near(want, tf.nn.depthwise_conv2d(T(x), T(f), c.s, c.pad, {dilations = c.d}), {atol = 1e-12})
      local y32 = tf.nn.depthwise_conv2d(tf.constant(x, tf.float32), tf.constant(f, tf.float32), c.s, c.pad,
                                         {dilations = c.d})
      assert.equal(tf.float32, y32.dtype)
      assert.tensor_near(want, y32, {atol = 1e-5})
    end)
  end
  it("float16 takes the composed path, near the reference", function()
    local f = pseudo({3, 3, 3, 2}, 31)
    local y = tf.nn.depthwise_conv2d(tf.constant(x, tf.float16), tf.constant(f, tf.float16), 1, "SAME")
    assert.equal(tf.float16, y.dtype)
    assert.tensor_near(ref_depthwise(x, f, {1, 1}, "SAME", {1, 1}), tf.cast(y, f64), {atol = 2e-2})
  end)
  it("has finite-difference gradients (input and filter; strided, dilated, multiplier 2)", function()
    assert.is_true(H.check("depthwise_conv2d", {inputs = {{{2, 5, 4, 2}}, {{3, 2, 2, 2}}},
      fn = function(tf_, a, b) return tf_.nn.depthwise_conv2d(a, b, {2, 1}, "SAME") end}))
    assert.is_true(H.check("depthwise_conv2d_dilated", {inputs = {{{1, 6, 6, 3}}, {{2, 2, 3, 1}}},
      fn = function(tf_, a, b) return tf_.nn.depthwise_conv2d(a, b, 1, "VALID", {dilations = {2, 3}}) end}))
  end)
  it("its gradient ops have finite-difference gradients (second order)", function()
    assert.is_true(H.check("depthwise_conv2d_backprop_input", {inputs = {{{3, 3, 2, 2}}, {{1, 3, 2, 4}}},
      fn = function(tf_, f, dy) return tf_.nn.depthwise_conv2d_backprop_input({1, 5, 4, 2}, f, dy, 2, "SAME") end}))
    assert.is_true(H.check("depthwise_conv2d_backprop_filter", {inputs = {{{1, 5, 4, 2}}, {{1, 3, 2, 4}}},
      fn = function(tf_, a, dy) return tf_.nn.depthwise_conv2d_backprop_filter(a, {3, 3, 2, 2}, dy, 2, "SAME") end}))
    -- d/dx of sum(dx_of(f, dy)^2) through the tape: gradients of gradients
    local xv, fv = T(pseudo({1, 4, 4, 2}, 37)), T(pseudo({2, 2, 2, 1}, 41))
    local outer = tf.GradientTape()
    outer:watch(fv)
    local gsum = outer:record(function()
      local inner = tf.GradientTape()
      inner:watch(xv)
      local y = inner:record(function() return tf.reduce_sum(tf.nn.depthwise_conv2d(xv, fv, 1, "SAME") ^ 2) end)
      return tf.reduce_sum(inner:gradient(y, xv))
    end)
    assert.is_not_nil(outer:gradient(gsum, fv))
  end)
  it("handles empty batches and windows that skip pixels", function()
    local f = T(pseudo({2, 2, 2, 2}, 43))
    assert.shape({0, 3, 3, 4}, tf.nn.depthwise_conv2d(tf.zeros({0, 5, 5, 2}, f64), f, 2, "SAME"))
    assert.tensor_near(tf.zeros({2, 2, 2, 2}, f64),
      tf.nn.depthwise_conv2d_backprop_filter(tf.zeros({0, 5, 5, 2}, f64), {2, 2, 2, 2}, tf.zeros({0, 3, 3, 4}, f64),
                                             2, "SAME"))
    -- strides 3 over a 2x2 window: the pixels between windows get no gradient
    local x5 = pseudo({1, 5, 5, 2}, 47)
    local tape = tf.GradientTape()
    local xv = T(x5)
    tape:watch(xv)
    local y = tape:record(function() return tf.reduce_sum(tf.nn.depthwise_conv2d(xv, f, 3, "VALID")) end)
    local g = tape:gradient(y, xv):totable()
    local ff = f:totable()
    assert.equal(0, g[1][3][1][1])
    assert.near(ff[1][1][1][1] + ff[1][1][1][2], g[1][1][1][1], 1e-12)
    assert.near(ff[2][2][2][1] + ff[2][2][2][2], g[1][5][5][2], 1e-12)
  end)
  it("errors name the op, the argument and the shapes", function()
    assert.tf_error("InvalidArgumentError", "depthwise_conv2d: input depth 3 does not match the filter's input depth 2",
      tf.nn.depthwise_conv2d, T(x), tf.zeros({3, 3, 2, 1}, f64), 1, "SAME")
    assert.tf_error("TypeError", "depthwise_conv2d: 'input' has dtype int32, expected a float dtype",
      tf.nn.depthwise_conv2d, tf.ones({1, 3, 3, 2}, tf.int32), tf.ones({1, 1, 2, 1}, tf.int32), 1, "SAME")
    assert.tf_error("InvalidArgumentError", "depthwise_conv2d_backprop_filter: the gradient's depth 3 is not a " ..
      "multiple of the input depth 2: input is (1, 5, 5, 2), dy is (1, 5, 5, 3)",
      tf.nn.depthwise_conv2d_backprop_filter, tf.ones({1, 5, 5, 2}), {3, 3, 2, 2}, tf.ones({1, 5, 5, 3}), 1, "SAME")
    assert.tf_error("InvalidArgumentError", "depthwise_conv2d_backprop_input: the gradient has shape (1, 4, 4, 4) but "
      .. "the forward output has shape (None, 5, 5, 4)", tf.nn.depthwise_conv2d_backprop_input, {1, 5, 5, 2},
      tf.ones({3, 3, 2, 2}), tf.ones({1, 4, 4, 4}), 1, "SAME")
  end)
end)
