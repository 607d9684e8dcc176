-- tf.nn: softmax, log_softmax, the softmax cross-entropies (sparse labels
-- are 1-based), conv2d (VALID/SAME/explicit padding, strides, dilations),
-- max_pool2d and avg_pool2d, and the Lua composites (clip_by_value,
-- clip_by_norm, l2_loss, bias_add, norm). Expected values are hand-worked
-- or recomputed in plain Lua float64 (naive conv and pool below).
local tf = require("tf")
local support = require("support")
local lcg, numel, nest, flatten = support.lcg, support.numel, support.nest, support.flatten

-- {==== helpers


local function random_flat(dims, seed, scale)
  local r, out = lcg(seed), {}
  for i = 1, numel(dims) do out[i] = r() * (scale or 1) end
  return out
end



local function tensor(flat, dims, dtype) return tf.constant(nest(flat, dims), dtype or tf.float64) end

-- TensorFlow's window arithmetic, written from its documentation:
-- VALID: out = ceil((in - (k - 1) * d) / s); SAME: out = ceil(in / s) and
-- the padding total max((out - 1) * s + (k - 1) * d + 1 - in, 0), the
-- smaller half first.
local function window(padding, n, k, s, d)
  local eff = (k - 1) * d + 1
  if padding == "VALID" then return (n - eff + s) // s, 0 end
  local out = (n + s - 1) // s
  local total = math.max((out - 1) * s + eff - n, 0)
  return out, total // 2
end

-- Naive NHWC x HWIO convolution; pads = {top, bottom, left, right} or a padding name.
local function ref_conv2d(X, xd, F, fd, strides, padding, dil)
  local N, H, W, C = xd[1], xd[2], xd[3], xd[4]
  local KH, KW, O = fd[1], fd[2], fd[4]
  local sh, sw = strides[1], strides[2]
  local dh, dw = dil and dil[1] or 1, dil and dil[2] or 1
  local OH, OW, pt, pl
  if type(padding) == "table" then
    pt, pl = padding[1], padding[3]
    OH = (H + padding[1] + padding[2] - (KH - 1) * dh - 1) // sh + 1
    OW = (W + padding[3] + padding[4] - (KW - 1) * dw - 1) // sw + 1
  else
    OH, pt = window(padding, H, KH, sh, dh)
    OW, pl = window(padding, W, KW, sw, dw)
  end
  local out = {}
  for n = 0, N - 1 do
    for oh = 0, OH - 1 do
      for ow = 0, OW - 1 do
        for o = 0, O - 1 do
          local s = 0
          for kh = 0, KH - 1 do
            local ih = oh * sh - pt + kh * dh
            if ih >= 0 and ih < H then
              for kw = 0, KW - 1 do
                local iw = ow * sw - pl + kw * dw
                if iw >= 0 and iw < W then
                  for c = 0, C - 1 do
                    s = s + X[((n * H + ih) * W + iw) * C + c + 1] * F[((kh * KW + kw) * C + c) * O + o + 1]
                  end
                end
              end
            end
          end
          out[#out + 1] = s
        end
      end
    end
  end
  return out, {N, OH, OW, O}
end

-- Naive pooling; padded positions never count.
local function ref_pool(kind, X, xd, ksize, strides, padding)
  local N, H, W, C = xd[1], xd[2], xd[3], xd[4]
  local OH, pt = window(padding, H, ksize[1], strides[1], 1)
  local OW, pl = window(padding, W, ksize[2], strides[2], 1)
  local out = {}
  for n = 0, N - 1 do
    for oh = 0, OH - 1 do
      for ow = 0, OW - 1 do
        for c = 0, C - 1 do
          local acc, count = kind == "max" and -math.huge or 0, 0
          for kh = 0, ksize[1] - 1 do
            for kw = 0, ksize[2] - 1 do
              local ih, iw = oh * strides[1] - pt + kh, ow * strides[2] - pl + kw
              if ih >= 0 and ih < H and iw >= 0 and iw < W then
                local v = X[((n * H + ih) * W + iw) * C + c + 1]
                if kind == "max" then acc = math.max(acc, v) else acc = acc + v end
                count = count + 1
              end
            end
          end
          out[#out + 1] = kind == "max" and acc or acc / count
        end
      end
    end
  end
  return out, {N, OH, OW, C}
end

local function ref_softmax_rows(rows)
  local out = {}
  for i, row in ipairs(rows) do
    local sum = 0
    for _, v in ipairs(row) do sum = sum + math.exp(v) end
    out[i] = {}
    for j, v in ipairs(row) do out[i][j] = math.exp(v) / sum end
  end
  return out
end
-- }====

describe("tf.nn.softmax", function()
  it("matches exp(x) / sum(exp(x)) along the last axis", function()
    local rows = {{1.0, 2.0, 3.0}, {-1.0, 0.0, 0.5}}
    local y = tf.nn.softmax(tf.constant(rows, tf.float64))
    assert.tensor_near(ref_softmax_rows(rows), y, {atol = 1e-15, rtol = 1e-14})
  end)
  it("gives rows that sum to 1", function()
    local rows = nest(random_flat({5, 7}, 3, 10), {5, 7})
    local y = tf.nn.softmax(tf.constant(rows)):totable()
    for _, row in ipairs(y) do
      local s = 0
      for _, v in ipairs(row) do s = s + v end
      assert.near(1.0, s, 1e-6)
    end
  end)
  it("is stable for large logits", function()
    local y = tf.nn.softmax(tf.constant({1000.0, 1001.0, 1002.0}))
    assert.tensor_near(ref_softmax_rows({{0.0, 1.0, 2.0}})[1], y, {atol = 1e-7})
  end)
  it("float32 lines along the last axis (the vectorized path) match float64, every length, with tails", function()
    for _, len in ipairs({1, 2, 7, 8, 9, 15, 16, 17, 64, 100}) do
      local rows = nest(random_flat({3, len}, 40 + len, 20), {3, len})
      rows[2][len] = rows[2][len] + 500           -- the maximum last: past the 8-lane blocks
      rows[3][1] = -math.huge                     -- no weight
      local want = tf.nn.softmax(tf.constant(rows, tf.float64))
      assert.tensor_near(want, tf.nn.softmax(tf.constant(rows, tf.float32)), {atol = 1e-7, rtol = 2e-6})
      local lwant = tf.nn.log_softmax(tf.constant(rows, tf.float64))
      local lgot = tf.nn.log_softmax(tf.constant(rows, tf.float32))
      assert.tensor_near(lwant, lgot, {atol = 2e-5, rtol = 2e-6})
      if len > 1 then assert.equal(0, tf.nn.softmax(tf.constant(rows, tf.float32))[3][1]:item()) end
    end
    -- NaN flows through
    local y = tf.nn.softmax(tf.constant({{0 / 0, 1, 2, 3, 4, 5, 6, 7, 8}})):totable()[1]
    for _, v in ipairs(y) do assert.is_true(v ~= v) end
  end)
  it("works along the first axis with axis = 1 (1-based)", function()
    local y = tf.nn.softmax(tf.constant({{1.0, 5.0}, {3.0, 5.0}}, tf.float64), {axis = 1})
    local col = ref_softmax_rows({{1.0, 3.0}})[1]
    assert.tensor_near({{col[1], 0.5}, {col[2], 0.5}}, y, {atol = 1e-15})
  end)
  it("accepts the axis positionally and as a negative number", function()
    local x = tf.constant(nest(random_flat({2, 3, 4}, 9), {2, 3, 4}), tf.float64)
    local a, b = tf.nn.softmax(x, 2), tf.nn.softmax(x, {axis = -2})
    assert.tensor_near(a, b, {atol = 0, rtol = 0})
    -- middle axis: each (i, :, k) column sums to 1
    local t = a:totable()
    for i = 1, 2 do
      for k = 1, 4 do
        local s = 0
        for j = 1, 3 do s = s + t[i][j][k] end
        assert.near(1.0, s, 1e-12)
      end
    end
    local flat, xs = flatten(t), x:totable()
    local sum = 0
    for j = 1, 3 do sum = sum + math.exp(xs[2][j][3]) end
    assert.near(math.exp(xs[2][1][3]) / sum, t[2][1][3], 1e-15)
    assert.equal(24, #flat)
  end)
  it("is also tf.math.softmax", function()
    assert.tensor_near({0.5, 0.5}, tf.math.softmax(tf.constant({2.0, 2.0})))
  end)
  it("refuses integer logits", function()
    assert.tf_error("TypeError", "softmax: 'logits' has dtype int32, expected one of: float32, float64",
      tf.nn.softmax, tf.constant({1, 2}))
  end)
  it("refuses an axis out of range and axis 0", function()
    assert.tf_error("InvalidArgumentError", "softmax: 'axis' 3 is out of range for rank 2",
      tf.nn.softmax, tf.constant({{1.0}}), {axis = 3})
    assert.tf_error("InvalidArgumentError", "axes are 1-based", tf.nn.softmax, tf.constant({{1.0}}), 0)
  end)
  it("refuses a scalar", function()
    assert.tf_error("InvalidArgumentError", "softmax: 'logits' must have rank >= 1, got shape ()",
      tf.nn.softmax, tf.constant(1.0))
  end)
end)

describe("tf.nn.log_softmax", function()
  it("matches log(softmax(x))", function()
    local rows = {{1.0, 2.0, 3.0}, {0.5, -2.0, 4.0}}
    local sm = ref_softmax_rows(rows)
    for _, r in ipairs(sm) do for j = 1, #r do r[j] = math.log(r[j]) end end
    assert.tensor_near(sm, tf.nn.log_softmax(tf.constant(rows, tf.float64)), {atol = 1e-14})
  end)
  it("is stable where softmax underflows", function()
    local y = tf.nn.log_softmax(tf.constant({0.0, -1000.0}))
    assert.tensor_near({0.0, -1000.0}, y, {atol = 1e-4})
  end)
  it("takes an axis", function()
    local y = tf.nn.log_softmax(tf.constant({{1.0, 5.0}, {1.0, 5.0}}, tf.float64), {axis = 1})
    assert.tensor_near({{math.log(0.5), math.log(0.5)}, {math.log(0.5), math.log(0.5)}}, y, {atol = 1e-15})
  end)
end)

describe("tf.nn.sparse_softmax_cross_entropy_with_logits", function()
  local logits = {{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}, {0.0, 0.0, 0.0}}
  local lse = math.log(math.exp(1) + math.exp(2) + math.exp(3))
  it("selects logits[k] for label k (1-based)", function()
    local loss = tf.nn.sparse_softmax_cross_entropy_with_logits{labels = {1, 3, 2}, logits = tf.constant(logits)}
    assert.equal(tf.float32, loss.dtype)
    assert.tensor_near({lse - 1, lse - 3, math.log(3)}, loss, {atol = 1e-6})
  end)
  it("accepts positional (labels, logits), int64 labels and float64 logits", function()
    local loss = tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant({3, 1, 2}, tf.int64),
                                                               tf.constant(logits, tf.float64))
    assert.equal(tf.float64, loss.dtype)
    assert.tensor_near({lse - 3, lse - 1, math.log(3)}, loss, {atol = 1e-14})
  end)
  it("keeps extra batch dimensions", function()
    local x = nest(random_flat({2, 2, 4}, 5, 3), {2, 2, 4})
    local labels = {{4, 1}, {2, 3}}
    local loss = tf.nn.sparse_softmax_cross_entropy_with_logits{labels = labels, logits = tf.constant(x, tf.float64)}
    assert.shape({2, 2}, loss)
    local t = loss:totable()
    for i = 1, 2 do
      for j = 1, 2 do
        local s = 0
        for k = 1, 4 do s = s + math.exp(x[i][j][k]) end
        assert.near(math.log(s) - x[i][j][labels[i][j]], t[i][j], 1e-12)
      end
    end
  end)
  it("is stable for large logits", function()
    local loss = tf.nn.sparse_softmax_cross_entropy_with_logits{labels = {1}, logits = tf.constant({{1000.0, 0.0}})}
    assert.tensor_near({math.log(1 + math.exp(-1000))}, loss)
    loss = tf.nn.sparse_softmax_cross_entropy_with_logits{labels = {2}, logits = tf.constant({{1000.0, 0.0}})}
    assert.tensor_near({1000.0}, loss)
  end)
  it("refuses label 0 saying labels are 1-based and giving the range", function()
    local ok, err = pcall(tf.nn.sparse_softmax_cross_entropy_with_logits,
                          {labels = {1, 0, 2}, logits = tf.constant(logits)})
    assert.is_false(ok)
    assert.equal("InvalidArgumentError", err.kind)
    assert.truthy(err.message:find("1-based", 1, true))
    assert.truthy(err.message:find("1..3", 1, true))
    assert.truthy(err.message:find("got 0 at labels[2]", 1, true))
  end)
  it("refuses a label above the number of classes", function()
    assert.tf_error("InvalidArgumentError", "valid range 1..3 (label k selects logits[k]), got 4 at labels[3]",
      tf.nn.sparse_softmax_cross_entropy_with_logits, {labels = {1, 2, 4}, logits = tf.constant(logits)})
  end)
  it("refuses labels whose shape does not match the logits", function()
    assert.tf_error("InvalidArgumentError",
      "labels must have the shape of logits without its last dimension: labels is (2,), logits is (3, 3)",
      tf.nn.sparse_softmax_cross_entropy_with_logits, {labels = {1, 2}, logits = tf.constant(logits)})
  end)
  it("refuses float labels", function()
    assert.tf_error("TypeError", "'labels' has dtype float32, expected one of: int32, int64",
      tf.nn.sparse_softmax_cross_entropy_with_logits, {labels = {1.0}, logits = tf.constant({{1.0}})})
  end)
  it("refuses unknown keywords", function()
    assert.tf_error("TypeError", "unknown option 'label'",
      tf.nn.sparse_softmax_cross_entropy_with_logits, {label = {1}, logits = tf.constant({{1.0}})})
  end)
end)

describe("tf.nn.softmax_cross_entropy_with_logits", function()
  it("equals the sparse loss for one-hot labels", function()
    local logits = tf.constant({{1.0, 2.0, 3.0}, {0.5, 0.25, -1.0}})
    local dense = tf.nn.softmax_cross_entropy_with_logits{labels = {{0, 0, 1}, {1, 0, 0}}, logits = logits}
    local sparse = tf.nn.sparse_softmax_cross_entropy_with_logits{labels = {3, 1}, logits = logits}
    assert.tensor_near(sparse, dense, {atol = 1e-6})
  end)
  it("computes -sum(labels * log_softmax(logits)) for soft labels (hand-worked)", function()
    local loss = tf.nn.softmax_cross_entropy_with_logits{labels = {{0.25, 0.25, 0.5}},
                                                          logits = tf.constant({{0.0, 0.0, math.log(2)}}, tf.float64)}
    -- softmax = (1/4, 1/4, 1/2): loss = -(0.25 log 0.25 * 2 + 0.5 log 0.5)
    assert.tensor_near({-(0.5 * math.log(0.25) + 0.5 * math.log(0.5))}, loss, {atol = 1e-15})
  end)
  it("takes positional arguments and an axis", function()
    local labels = tf.constant({{0.0, 1.0}, {1.0, 0.0}})
    local logits = tf.constant({{2.0, 2.0}, {0.0, 4.0}})
    local loss = tf.nn.softmax_cross_entropy_with_logits(labels, logits, {axis = 1})
    -- columns: (2, 0) with labels (0, 1) and (2, 4) with labels (1, 0)
    local c1 = math.log(math.exp(2) + 1) - 0
    local c2 = math.log(math.exp(2) + math.exp(4)) - 2
    assert.tensor_near({c1, c2}, loss, {atol = 1e-6})
  end)
  it("refuses shapes that differ", function()
    assert.tf_error("InvalidArgumentError",
      "labels and logits must have the same shape: labels is (1, 2), logits is (1, 3)",
      tf.nn.softmax_cross_entropy_with_logits, {labels = {{0.5, 0.5}}, logits = tf.constant({{1.0, 2.0, 3.0}})})
  end)
end)

describe("tf.nn.conv2d", function()
  local function check(xd, fd, strides, padding, dil, dtype)
    local X, F = random_flat(xd, 11), random_flat(fd, 23)
    local expected, ed = ref_conv2d(X, xd, F, fd, {strides, strides}, padding, dil and {dil, dil})
    local tfpad = padding
    if type(padding) == "table" then tfpad = {{0, 0}, {padding[1], padding[2]}, {padding[3], padding[4]}, {0, 0}} end
    local y = tf.nn.conv2d(tensor(X, xd, dtype), tensor(F, fd, dtype), strides, tfpad, dil and {dilations = dil})
    assert.shape(ed, y)
    local tol = dtype == tf.float32 and 1e-5 or 1e-12
    assert.tensor_near(nest(expected, ed), y, {atol = tol, rtol = tol})
  end

  it("applies a 2x2 filter with SAME padding, the smaller half of the padding first (hand-worked)", function()
    local x = tf.constant({{{{1.0}, {2.0}, {3.0}}, {{4.0}, {5.0}, {6.0}}, {{7.0}, {8.0}, {9.0}}}})
    local ones = tf.constant({{{{1.0}}, {{1.0}}}, {{{1.0}}, {{1.0}}}})
    -- padding total 1 per spatial dim: none before, one after
    assert.tensor_near({{{{12.0}, {16.0}, {9.0}}, {{24.0}, {28.0}, {15.0}}, {{15.0}, {17.0}, {9.0}}}},
                       tf.nn.conv2d(x, ones, 1, "SAME"))
    assert.tensor_near({{{{12.0}, {16.0}}, {{24.0}, {28.0}}}}, tf.nn.conv2d(x, ones, 1, "VALID"))
  end)
  it("pads a 1x4 SAME window one before and two after (hand-worked)", function()
    local x = tf.constant({{{{1.0}, {2.0}, {3.0}, {4.0}, {5.0}}}})
    local f = tf.constant({{{{1.0}}, {{1.0}}, {{1.0}}, {{1.0}}}})
    assert.tensor_near({{{{6.0}, {10.0}, {14.0}, {12.0}, {9.0}}}}, tf.nn.conv2d(x, f, 1, "SAME"))
  end)
  it("matches the reference with VALID padding", function()
    check({2, 6, 5, 3}, {3, 2, 3, 4}, 1, "VALID")
  end)
  it("matches the reference with SAME padding (odd and even filters)", function()
    check({2, 6, 5, 3}, {3, 3, 3, 4}, 1, "SAME")
    check({1, 6, 7, 2}, {2, 4, 2, 3}, 1, "SAME")
  end)
  it("matches the reference with strides", function()
    check({2, 7, 8, 3}, {3, 3, 3, 2}, 2, "SAME")
    check({2, 7, 8, 3}, {3, 3, 3, 2}, 2, "VALID")
    check({1, 9, 9, 2}, {2, 2, 2, 2}, 3, "SAME")
  end)
  it("matches the reference with dilations", function()
    check({1, 9, 8, 2}, {3, 2, 2, 3}, 1, "SAME", 2)
    check({1, 9, 8, 2}, {3, 2, 2, 3}, 1, "VALID", 2)
    check({2, 11, 10, 2}, {2, 3, 2, 2}, 2, "SAME", 3)
  end)
  it("matches the reference with explicit padding", function()
    check({1, 5, 6, 2}, {3, 3, 2, 2}, 1, {1, 2, 0, 3})
    check({1, 5, 6, 2}, {3, 3, 2, 2}, 2, {2, 0, 1, 1})
  end)
  it("matches the reference for 1x1 filters and for filters covering the image", function()
    check({2, 4, 5, 6}, {1, 1, 6, 3}, 1, "VALID")
    check({2, 4, 5, 6}, {1, 1, 6, 3}, 1, "SAME")
    check({3, 4, 5, 2}, {4, 5, 2, 3}, 1, "VALID")
    check({2, 4, 5, 3}, {1, 1, 3, 2}, 2, "VALID")
  end)
  it("works in float32", function()
    check({2, 8, 8, 3}, {3, 3, 3, 5}, 1, "SAME", nil, tf.float32)
  end)
  it("works in float32 for output depths in multiples of 8 (the direct kernels)", function()
    check({2, 8, 7, 1}, {3, 3, 1, 16}, 1, "VALID", nil, tf.float32)
    check({2, 8, 9, 16}, {3, 3, 16, 16}, 1, "VALID", nil, tf.float32)
    check({1, 6, 5, 3}, {3, 3, 3, 8}, 1, "SAME", nil, tf.float32)
    check({1, 5, 6, 8}, {2, 3, 8, 24}, 1, "SAME", nil, tf.float32)
    check({1, 5, 6, 5}, {3, 3, 5, 8}, 1, {1, 2, 0, 3}, nil, tf.float32)
    check({1, 3, 3, 2}, {3, 3, 2, 8}, 1, {2, 2, 2, 2}, nil, tf.float32)
  end)
  it("works in float32 for output depths in multiples of 32 (the packed kernel on AVX-512 machines)", function()
    local function check32(xd, fd, strides, padding, tol)
      local X, F = random_flat(xd, 5), random_flat(fd, 7)
      local st = type(strides) == "table" and strides or {strides, strides}
      local expected, ed = ref_conv2d(X, xd, F, fd, st, padding)
      local tfpad = padding
      if type(padding) == "table" then tfpad = {{0, 0}, {padding[1], padding[2]}, {padding[3], padding[4]}, {0, 0}} end
      local y = tf.nn.conv2d(tensor(X, xd, tf.float32), tensor(F, fd, tf.float32), strides, tfpad)
      assert.shape(ed, y)
      assert.tensor_near(nest(expected, ed), y, {atol = tol or 1e-5, rtol = tol or 1e-5})
    end
    -- 12-pixel blocks across line and image ends, tails of 8, 4, 2, 1 pixels
    check32({2, 5, 3, 3}, {3, 3, 3, 32}, 1, "SAME")              -- 30 pixels: 12 + 12 + 4 + 2
    check32({3, 3, 5, 2}, {2, 2, 2, 64}, 1, "VALID")             -- 24 pixels, 2 panels
    check32({1, 5, 3, 1}, {1, 1, 1, 32}, 2, "VALID")             -- 1x1 stride 2 (windows skip the last row)
    check32({1, 9, 9, 5}, {3, 3, 5, 32}, 1, "VALID")             -- 49 pixels: 4 blocks + 1
    check32({2, 7, 8, 3}, {3, 3, 3, 64}, 2, "SAME")              -- stride 2, SAME (pad after only)
    check32({1, 11, 10, 3}, {7, 7, 3, 32}, 2, {3, 3, 3, 3})      -- resnet's stem in small: 7x7/2, explicit pads
    check32({1, 9, 9, 2}, {2, 2, 2, 32}, 3, "SAME")              -- stride 3
    check32({1, 7, 9, 4}, {3, 2, 4, 32}, {2, 1}, "VALID")        -- unequal strides, a 3x2 window
    check32({1, 5, 6, 5}, {3, 3, 5, 32}, 1, {1, 2, 0, 3})        -- unequal explicit pads
    check32({1, 6, 5, 3}, {4, 4, 3, 32}, 1, "SAME")              -- even window, SAME
    -- 16 channels and more: padding read as zeros inside the kernel (edge blocks), no padded copy
    check32({2, 5, 7, 16}, {3, 3, 16, 32}, 1, "SAME")
    check32({1, 9, 8, 20}, {3, 3, 20, 64}, 2, {1, 2, 0, 1})
    check32({1, 4, 4, 32}, {5, 5, 32, 32}, 1, {2, 2, 2, 2})
    check32({1, 3, 3, 16}, {3, 3, 16, 32}, 1, {3, 3, 3, 3})     -- outputs whose windows are all padding
    check32({2, 14, 14, 16}, {3, 3, 16, 32}, 2, "SAME")         -- interior and edge blocks mixed
    -- filters over 384 KiB packed (panel-major units): 3x3x96 -> 384
    check32({2, 4, 5, 96}, {3, 3, 96, 384}, 1, "SAME", 1e-4)
    -- panel-major with each thread packing its panels: a few panels, their
    -- pixel blocks split in ranges across threads (and on one thread)
    local threads = tf.core.num_threads()
    for _, t in ipairs({2, 1}) do
      tf.core.set_num_threads(t)
      check32({1, 10, 10, 96}, {3, 3, 96, 128}, 1, "SAME", 1e-4)   -- 4 panels of 9 blocks
      check32({2, 5, 5, 64}, {3, 3, 64, 256}, 2, {1, 1, 1, 1}, 1e-4)   -- stride 2, edges, 8 panels
      check32({1, 3, 3, 272}, {3, 3, 272, 32}, 1, "SAME", 1e-4)   -- edge blocks over > 256 channels: slices 128 + 128 + 16
    end
    tf.core.set_num_threads(threads)
  end)
  it("matches the reference across im2col chunks", function()
    -- 90x90x64 input, 3x3 filters: more rows than one 16 MiB scratch chunk holds
    local xd, fd = {1, 90, 90, 64}, {3, 3, 64, 2}
    local X, F = random_flat(xd, 3), random_flat(fd, 4)
    local y = tf.nn.conv2d(tensor(X, xd, tf.float32), tensor(F, fd, tf.float32), 1, "SAME"):totable()
    for _, pos in ipairs({{1, 1, 1}, {45, 45, 2}, {80, 90, 1}, {81, 1, 2}, {90, 90, 2}}) do
      local oh, ow, o = pos[1] - 1, pos[2] - 1, pos[3] - 1
      local s = 0
      for kh = 0, 2 do
        for kw = 0, 2 do
          local ih, iw = oh - 1 + kh, ow - 1 + kw
          if ih >= 0 and ih < 90 and iw >= 0 and iw < 90 then
            for c = 0, 63 do
              s = s + X[(ih * 90 + iw) * 64 + c + 1] * F[((kh * 3 + kw) * 64 + c) * 2 + o + 1]
            end
          end
        end
      end
      assert.near(s, y[1][pos[1]][pos[2]][pos[3]], 1e-4)
    end
  end)
  it("accepts strides as lists of 2 or 4 and options positionally", function()
    local xd, fd = {1, 7, 7, 2}, {3, 3, 2, 2}
    local X, F = random_flat(xd, 1), random_flat(fd, 2)
    local x, f = tensor(X, xd), tensor(F, fd)
    local expected, ed = ref_conv2d(X, xd, F, fd, {2, 1}, "SAME")
    assert.tensor_near(nest(expected, ed), tf.nn.conv2d(x, f, {2, 1}, "SAME"), {atol = 1e-12})
    assert.tensor_near(nest(expected, ed), tf.nn.conv2d(x, f, {1, 2, 1, 1}, "SAME", "NHWC"), {atol = 1e-12})
    local e2, ed2 = ref_conv2d(X, xd, F, fd, {1, 1}, "VALID", {2, 1})
    assert.tensor_near(nest(e2, ed2), tf.nn.conv2d(x, f, 1, "VALID", "NHWC", {2, 1}), {atol = 1e-12})
  end)
  it("refuses a depth mismatch", function()
    local x, f = tensor(random_flat({1, 3, 3, 2}, 1), {1, 3, 3, 2}), tensor(random_flat({2, 2, 3, 1}, 1), {2, 2, 3, 1})
    assert.tf_error("InvalidArgumentError",
      "conv2d: input depth 2 does not match the filters' input depth 3: "
        .. "input is (1, 3, 3, 2), filters are (2, 2, 3, 1)",
      tf.nn.conv2d, x, f, 1, "VALID")
  end)
  it("refuses a VALID window larger than the input", function()
    local x, f = tensor(random_flat({1, 2, 2, 1}, 1), {1, 2, 2, 1}), tensor(random_flat({4, 1, 1, 1}, 1), {4, 1, 1, 1})
    assert.tf_error("InvalidArgumentError", "conv2d: computed output size would be negative along height: -1",
      tf.nn.conv2d, x, f, 1, "VALID")
  end)
  it("refuses wrong ranks, dtypes and arguments", function()
    local x, f = tensor(random_flat({1, 3, 3, 1}, 1), {1, 3, 3, 1}), tensor(random_flat({2, 2, 1, 1}, 1), {2, 2, 1, 1})
    assert.tf_error("InvalidArgumentError", "conv2d: 'input' must have rank 4, got shape (3, 3)",
      tf.nn.conv2d, tf.constant({{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}}, tf.float64), f, 1, "VALID")
    assert.tf_error("TypeError", "conv2d: 'input' has dtype int32",
      tf.nn.conv2d, tf.constant({{{{1}}}}), tf.constant({{{{1}}}}), 1, "VALID")
    assert.tf_error("TypeError", "conv2d: input and filters must have the same dtype",
      tf.nn.conv2d, x, tf.cast(f, tf.float32), 1, "VALID")
    assert.tf_error("ValueError", "conv2d: argument 4 ('padding') must be 'SAME' or 'VALID'",
      tf.nn.conv2d, x, f, 1, "FULL")
    assert.tf_error("InvalidArgumentError", "conv2d: 'strides' must be 1 in the batch and depth dimensions",
      tf.nn.conv2d, x, f, {2, 1, 1, 1}, "VALID")
    assert.tf_error("InvalidArgumentError", "conv2d: 'strides' must have 1, 2 or 4 entries, got 3",
      tf.nn.conv2d, x, f, {1, 1, 1}, "VALID")
    assert.tf_error("InvalidArgumentError", "conv2d: 'strides' must be positive, got (0, 0)",
      tf.nn.conv2d, x, f, 0, "VALID")
    assert.tf_error("InvalidArgumentError", "conv2d: 'dilations' must be positive",
      tf.nn.conv2d, x, f, 1, "VALID", {dilations = {1, 0}})
    assert.tf_error("UnimplementedError", "conv2d: data_format 'NCHW' is not supported",
      tf.nn.conv2d, x, f, 1, "VALID", {data_format = "NCHW"})
    assert.tf_error("TypeError", "conv2d: unknown option 'dilation'",
      tf.nn.conv2d, x, f, 1, "VALID", {dilation = 2})
  end)
end)

describe("tf.nn.max_pool2d and tf.nn.avg_pool2d", function()
  local function check(kind, xd, ksize, strides, padding, dtype)
    local X = random_flat(xd, 31, 4)
    if dtype == tf.int32 then for i = 1, #X do X[i] = math.floor(X[i]) end end
    local expected, ed = ref_pool(kind, X, xd, ksize, strides, padding)
    local fn = kind == "max" and tf.nn.max_pool2d or tf.nn.avg_pool2d
    local y = fn(tensor(X, xd, dtype), ksize, strides, padding)
    assert.shape(ed, y)
    assert.tensor_near(nest(expected, ed), y, {atol = 1e-12, rtol = 1e-12})
  end
  local x3 = tf.constant({{{{1.0}, {2.0}, {3.0}}, {{4.0}, {5.0}, {6.0}}, {{7.0}, {8.0}, {9.0}}}})

  it("takes window maxima, ignoring SAME padding (hand-worked)", function()
    assert.tensor_near({{{{5.0}, {6.0}}, {{8.0}, {9.0}}}}, tf.nn.max_pool2d(x3, 2, 2, "SAME"))
    assert.tensor_near({{{{5.0}}}}, tf.nn.max_pool2d(x3, 2, 2, "VALID"))
  end)
  it("averages over valid elements only with SAME padding (hand-worked)", function()
    assert.tensor_near({{{{3.0}, {4.5}}, {{7.5}, {9.0}}}}, tf.nn.avg_pool2d(x3, 2, 2, "SAME"))
    assert.tensor_near({{{{3.0}, {4.0}}, {{6.0}, {7.0}}}}, tf.nn.avg_pool2d(x3, 2, 1, "VALID"))
  end)
  for _, kind in ipairs({"max", "avg"}) do
    it("matches the reference for " .. kind .. " pooling", function()
      check(kind, {2, 7, 6, 3}, {2, 2}, {2, 2}, "VALID")
      check(kind, {2, 7, 6, 3}, {2, 2}, {2, 2}, "SAME")
      check(kind, {1, 9, 8, 2}, {3, 2}, {2, 3}, "SAME")
      check(kind, {1, 9, 8, 2}, {3, 3}, {1, 1}, "SAME")
      check(kind, {1, 5, 5, 4}, {4, 4}, {3, 3}, "SAME")
      check(kind, {1, 5, 5, 1}, {2, 3}, {1, 2}, "VALID")
    end)
  end
  it("max-pools integers", function()
    check("max", {2, 6, 6, 2}, {3, 3}, {2, 2}, "SAME", tf.int32)
    local y = tf.nn.max_pool2d(tf.constant({{{{-5}, {-7}}, {{-9}, {-6}}}}), 2, 2, "VALID")
    assert.equal(tf.int32, y.dtype)
    assert.same({{{{-5}}}}, y:totable())
  end)
  it("accepts ksize and strides as lists of 4 and is also tf.nn.max_pool", function()
    assert.tensor_near({{{{5.0}, {6.0}}, {{8.0}, {9.0}}}}, tf.nn.max_pool(x3, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME"))
    assert.tensor_near({{{{3.0}, {4.5}}, {{7.5}, {9.0}}}}, tf.nn.avg_pool(x3, {2, 2}, {2, 2}, "SAME", "NHWC"))
  end)
  it("refuses integer average pooling, bad windows and ranks", function()
    assert.tf_error("TypeError", "avg_pool2d: 'input' has dtype int32, expected one of: float32, float64",
      tf.nn.avg_pool2d, tf.constant({{{{1}}}}), 1, 1, "VALID")
    assert.tf_error("InvalidArgumentError", "max_pool2d: 'ksize' must be positive, got (0, 0)",
      tf.nn.max_pool2d, x3, 0, 1, "VALID")
    assert.tf_error("InvalidArgumentError", "max_pool2d: 'ksize' must be 1 in the batch and depth dimensions",
      tf.nn.max_pool2d, x3, {2, 2, 2, 1}, 1, "VALID")
    assert.tf_error("InvalidArgumentError", "max_pool2d: 'input' must have rank 4, got shape (2,)",
      tf.nn.max_pool2d, tf.constant({1.0, 2.0}), 1, 1, "VALID")
    assert.tf_error("InvalidArgumentError", "avg_pool2d: computed output size would be negative along width",
      tf.nn.avg_pool2d, x3, {1, 5}, 1, "VALID")
    assert.tf_error("TypeError", "avg_pool2d: argument 4 ('padding') expected string",
      tf.nn.avg_pool2d, x3, 1, 1, {{0, 0}, {1, 1}, {1, 1}, {0, 0}})
  end)
end)

describe("tf.nn activation aliases", function()
  it("are the top-level activations", function()
    assert.equal(tf.relu, tf.nn.relu)
    assert.equal(tf.sigmoid, tf.nn.sigmoid)
    assert.equal(tf.tanh, tf.nn.tanh)
    assert.equal(tf.softplus, tf.nn.softplus)
    assert.tensor_near({0.0, 2.0}, tf.nn.relu(tf.constant({-1.0, 2.0})))
  end)
end)

describe("tf.clip_by_value", function()
  it("clips to [min, max] with Lua numbers adapting to the dtype", function()
    local y = tf.clip_by_value(tf.constant({-3, 0, 4, 9}), -1, 5)
    assert.equal(tf.int32, y.dtype)
    assert.same({-1, 0, 4, 5}, y:totable())
    assert.tensor_near({0.5, 1.5, 2.0}, tf.clip_by_value(tf.constant({0.0, 1.5, 7.0}), 0.5, 2))
  end)
  it("takes tensor bounds that broadcast against t", function()
    local y = tf.clip_by_value(tf.constant({{1.0, 5.0}, {-4.0, 0.0}}), tf.constant({0.0, 2.0}), 3.0)
    assert.tensor_near({{1.0, 3.0}, {0.0, 2.0}}, y)
  end)
  it("refuses bounds that would enlarge t", function()
    assert.tf_error("InvalidArgumentError", "clip_by_value: clip values broadcast t of shape (2,) to shape (2, 2)",
      tf.clip_by_value, tf.constant({1.0, 2.0}), tf.constant({{0.0}, {1.0}}), 3.0)
  end)
end)

describe("tf.clip_by_norm", function()
  it("rescales when the norm exceeds clip_norm (hand-worked)", function()
    -- norm of (3, 4) is 5
    assert.tensor_near({1.5, 2.0}, tf.clip_by_norm(tf.constant({3.0, 4.0}), 2.5))
  end)
  it("leaves t alone when its norm is within clip_norm", function()
    assert.tensor_near({3.0, 4.0}, tf.clip_by_norm(tf.constant({3.0, 4.0}), 6.0))
  end)
  it("keeps zeros as zeros", function()
    assert.tensor_near({0.0, 0.0}, tf.clip_by_norm(tf.constant({0.0, 0.0}), 1.0))
  end)
  it("clips along axes (1-based)", function()
    local x = tf.constant({{3.0, 4.0}, {0.6, 0.8}})
    assert.tensor_near({{0.6, 0.8}, {0.6, 0.8}}, tf.clip_by_norm(x, 1.0, {axes = 2}))
    local n1, n2 = math.sqrt(9 + 0.36), math.sqrt(16 + 0.64)
    assert.tensor_near({{3 / n1, 4 / n2}, {0.6 / n1, 0.8 / n2}}, tf.clip_by_norm(x, 1.0, {axes = {1}}))
  end)
  it("refuses unknown options", function()
    assert.tf_error("TypeError", "clip_by_norm: unknown option 'axis' (accepted: axes, name)",
      tf.clip_by_norm, tf.constant({1.0}), 1.0, {axis = 1})
  end)
end)

describe("tf.nn.l2_loss, tf.nn.bias_add and tf.norm", function()
  it("computes sum(t^2) / 2", function()
    assert.tensor_near(12.5, tf.nn.l2_loss(tf.constant({{3.0, 4.0}, {0.0, 0.0}})))
  end)
  it("adds a bias along the last dimension", function()
    assert.tensor_near({{11.0, 22.0}, {13.0, 24.0}},
      tf.nn.bias_add(tf.constant({{1.0, 2.0}, {3.0, 4.0}}), tf.constant({10.0, 20.0})))
    assert.tf_error("InvalidArgumentError", "bias_add: 'bias' has 3 entries but the last dimension of 'value' is 2",
      tf.nn.bias_add, tf.constant({{1.0, 2.0}}), {1.0, 2.0, 3.0})
  end)
  it("computes vector norms", function()
    local x = tf.constant({{3.0, -4.0}, {0.0, 1.0}})
    assert.tensor_near(math.sqrt(26), tf.norm(x))
    assert.tensor_near({5.0, 1.0}, tf.linalg.norm(x, {axis = 2}))
    assert.tensor_near({7.0, 1.0}, tf.norm(x, {axis = -1, ord = 1}))
    assert.tensor_near({{4.0}, {1.0}}, tf.norm(x, {axis = 2, ord = math.huge, keepdims = true}))
    assert.tensor_near({3.0, 65 ^ (1 / 3)}, tf.norm(x, {axis = 1, ord = 3}), {atol = 1e-5})
  end)
end)
