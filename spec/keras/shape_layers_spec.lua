-- tf.keras UpSampling1D/2D, ZeroPadding1D/2D, Cropping1D/2D, MaxPooling1D,
-- AveragePooling1D, GlobalAveragePooling1D/2D, GlobalMaxPooling1D/2D:
-- outputs against plain-Lua references, compute_output_shape, masks,
-- get_config round trips, gradients, tf.fn, Keras's errors.
local tf = require("tf")
local S = require("support")
local L = tf.keras.layers
local K = tf.core.internal.keras

local function pseudo(shape, seed)
  local rnd = S.lcg(seed)
  local flat = {}
  for i = 1, S.numel(shape) do flat[i] = rnd() end
  return S.nest(flat, shape)
end

local f64 = tf.float64
local function T(v) return tf.constant(v, f64) end

local function round_trip(layer)
  local cfg = layer:get_config()
  local again = getmetatable(layer).from_config(cfg)
  assert.same(cfg, again:get_config())
  return again
end

-- the layer's output, its compute_output_shape, and the same inside tf.fn
local function check(layer, x, want)
  local y = layer(x)
  assert.tensor_near(want, y, {atol = 1e-12})
  assert.same(y:_dims(), layer:compute_output_shape(x.shape):as_list())
  -- a new tf.fn per layer: its retracing warnings are expected here
  local logger = tf.get_logger()
  logger:set_handler(function() end)
  local ok, err = pcall(function()
    assert.tensor_near(want, tf.fn(function(v) return layer(v) end)(x), {atol = 1e-12})
  end)
  logger:set_handler(nil)
  if not ok then error(err, 0) end
  return y
end

-- generic index maps over nested tables
local function build(shape, fn, idx)
  idx = idx or {}
  local d = #idx + 1
  local t = {}
  for i = 1, shape[d] do
    idx[d] = i
    if d == #shape then t[i] = fn(idx) else t[i] = build(shape, fn, idx) end
  end
  idx[d] = nil
  return t
end

describe("UpSampling1D / UpSampling2D", function()
  it("UpSampling1D repeats each step size times", function()
    local x = pseudo({2, 3, 2}, 1)
    local layer = L.UpSampling1D{3}
    check(layer, T(x), build({2, 9, 2}, function(i) return x[i[1]][(i[2] - 1) // 3 + 1][i[3]] end))
    assert.same({name = layer.name, trainable = true, dtype = "float32", size = 3}, layer:get_config())
    round_trip(layer)
  end)
  it("UpSampling2D nearest repeats rows and columns", function()
    local x = pseudo({2, 2, 3, 2}, 2)
    local layer = L.UpSampling2D{size = {2, 3}}
    check(layer, T(x), build({2, 4, 9, 2}, function(i)
      return x[i[1]][(i[2] - 1) // 2 + 1][(i[3] - 1) // 3 + 1][i[4]]
    end))
    round_trip(layer)
  end)
  it("UpSampling2D bilinear matches the half-pixel bilinear formula", function()
    local x = pseudo({1, 3, 2, 1}, 3)
    local layer = L.UpSampling2D{2, interpolation = "bilinear"}
    local function sample(row, v, n)   -- v: 0-based source coordinate, clamped as TensorFlow
      v = math.max(v, 0)
      local lo = math.floor(v)
      local hi = math.min(lo + 1, n - 1)
      lo = math.min(lo, n - 1)
      local t = v - math.floor(v)
      return row(lo + 1) * (1 - t) + row(hi + 1) * t
    end
    local want = build({1, 6, 4, 1}, function(i)
      local sy, sx = (i[2] - 0.5) / 2 - 0.5, (i[3] - 0.5) / 2 - 0.5
      return sample(function(r) return sample(function(c) return x[1][r][c][1] end, sx, 2) end, sy, 3)
    end)
    check(layer, T(x), want)
    assert.equal("bilinear", round_trip(layer):get_config().interpolation)
  end)
  it("have the sum of the copies as gradient", function()
    local x = T(pseudo({1, 2, 2, 1}, 4))
    local tape = tf.GradientTape()
    tape:watch(x)
    local y = tape:record(function() return tf.reduce_sum(L.UpSampling2D{{2, 3}}(x)) end)
    assert.tensor_near({{{{6}, {6}}, {{6}, {6}}}}, tape:gradient(y, x))
  end)
  it("errors as Keras", function()
    assert.tf_error("ValueError", 'Input 0 of layer "up" is incompatible with the layer: expected ndim=4, found ' ..
      "ndim=3. Full shape received: (1, 2, 3)", function() L.UpSampling2D{name = "up"}(tf.zeros({1, 2, 3})) end)
    assert.tf_error("ValueError", "UpSampling2D: `interpolation` argument should be one of: area, bicubic, " ..
      'bilinear, gaussian, lanczos3, lanczos5, mitchellcubic, nearest. Received: "cubic".',
      function() return L.UpSampling2D{interpolation = "cubic"} end)
    assert.tf_error("UnimplementedError", 'UpSampling2D: interpolation "bicubic" is not supported',
      function() return L.UpSampling2D{interpolation = "bicubic"} end)
    assert.tf_error("ValueError", "UpSampling1D: 'size' must be a positive integer, got 0",
      function() return L.UpSampling1D{0} end)
  end)
end)

describe("ZeroPadding1D / ZeroPadding2D", function()
  it("ZeroPadding1D adds zero steps before and after", function()
    local x = pseudo({2, 3, 2}, 5)
    for _, c in ipairs({{2, {2, 2}}, {{1, 3}, {1, 3}}}) do
      local layer = L.ZeroPadding1D{c[1]}
      local a, b = c[2][1], c[2][2]
      check(layer, T(x), build({2, 3 + a + b, 2}, function(i)
        local s = i[2] - a
        return (s >= 1 and s <= 3) and x[i[1]][s][i[3]] or 0
      end))
      assert.same(c[2], round_trip(layer):get_config().padding)
    end
    assert.same({1, 1}, L.ZeroPadding1D{}.padding)
  end)
  it("ZeroPadding2D takes an integer, symmetric pairs or {{top, bottom}, {left, right}}", function()
    local x = pseudo({1, 2, 3, 2}, 6)
    for _, c in ipairs({{1, {{1, 1}, {1, 1}}}, {{2, 1}, {{2, 2}, {1, 1}}}, {{{0, 1}, {2, 0}}, {{0, 1}, {2, 0}}}}) do
      local layer = L.ZeroPadding2D{padding = c[1]}
      local p = c[2]
      check(layer, T(x), build({1, 2 + p[1][1] + p[1][2], 3 + p[2][1] + p[2][2], 2}, function(i)
        local r, q = i[2] - p[1][1], i[3] - p[2][1]
        return (r >= 1 and r <= 2 and q >= 1 and q <= 3) and x[1][r][q][i[4]] or 0
      end))
      assert.same(p, round_trip(layer):get_config().padding)
    end
  end)
  it("errors name the layer and the argument", function()
    assert.tf_error("ValueError", "ZeroPadding2D: 'padding' must be a non-negative integer, a table of 2 of them, " ..
      "or a table of 2 pairs {{top, bottom}, {left, right}}, got {1, 2, 3}",
      function() return L.ZeroPadding2D{{1, 2, 3}} end)
    assert.tf_error("ValueError", "ZeroPadding1D: 'padding' must be a non-negative integer or a table of 2 of them, " ..
      "got -1", function() return L.ZeroPadding1D{-1} end)
  end)
end)

describe("Cropping1D / Cropping2D", function()
  it("Cropping1D drops steps at the start and end", function()
    local x = pseudo({2, 6, 2}, 7)
    local layer = L.Cropping1D{{1, 2}}
    check(layer, T(x), build({2, 3, 2}, function(i) return x[i[1]][i[2] + 1][i[3]] end))
    assert.same({1, 1}, L.Cropping1D{}.cropping)
    round_trip(layer)
  end)
  it("Cropping2D drops rows and columns", function()
    local x = pseudo({1, 5, 6, 2}, 8)
    local layer = L.Cropping2D{{{1, 2}, {0, 3}}}
    check(layer, T(x), build({1, 2, 3, 2}, function(i) return x[1][i[2] + 1][i[3]][i[4]] end))
    assert.same({{1, 2}, {0, 3}}, round_trip(layer):get_config().cropping)
    local sym = L.Cropping2D{{1, 2}}
    check(sym, T(x), build({1, 3, 2, 2}, function(i) return x[1][i[2] + 1][i[3] + 2][i[4]] end))
  end)
  it("works with an unknown length inside tf.fn", function()
    local layer = L.Cropping1D{{2, 1}}
    local f = tf.fn(function(v) return layer(v) end, {input_signature = {tf.TensorSpec({tf.None, tf.None, 2}, f64)}})
    local x = pseudo({1, 5, 2}, 9)
    assert.tensor_near(build({1, 2, 2}, function(i) return x[1][i[2] + 2][i[3]] end), f(T(x)), {atol = 1e-12})
  end)
  it("errors when the cropping removes everything", function()
    assert.tf_error("ValueError", 'layer "crop": cropping {2, 2} of axis 2 removes all 4 entries of an input of ' ..
      "shape (1, 4, 2)", function() L.Cropping1D{2, name = "crop"}(tf.zeros({1, 4, 2})) end)
  end)
end)

describe("MaxPooling1D / AveragePooling1D", function()
  local x = pseudo({2, 7, 3}, 10)
  local function ref(kind, k, s, pad)
    local W = 7
    local ow, p = (W - k) // s + 1, 0
    if pad == "same" then
      ow = (W + s - 1) // s
      p = math.max((ow - 1) * s + k - W, 0) // 2
    end
    return build({2, ow, 3}, function(i)
      local acc, n = kind == "max" and -math.huge or 0, 0
      for a = 1, k do
        local w = (i[2] - 1) * s + a - p
        if w >= 1 and w <= W then
          local v = x[i[1]][w][i[3]]
          if kind == "max" then acc = math.max(acc, v) else acc = acc + v end
          n = n + 1
        end
      end
      return kind == "max" and acc or acc / n
    end)
  end
  it("match direct loops (defaults: pool 2, strides = pool, valid)", function()
    check(L.MaxPooling1D{}, T(x), ref("max", 2, 2, "valid"))
    check(L.AveragePooling1D{}, T(x), ref("avg", 2, 2, "valid"))
    check(L.MaxPooling1D{3, strides = 2, padding = "same"}, T(x), ref("max", 3, 2, "same"))
    check(L.AveragePooling1D{pool_size = 3, strides = 1, padding = "same"}, T(x), ref("avg", 3, 1, "same"))
    local layer = L.MaxPool1D{3, strides = 2}
    assert.same({name = layer.name, trainable = true, dtype = "float32", pool_size = {3}, strides = {2},
                 padding = "valid", data_format = "channels_last"}, layer:get_config())
    round_trip(layer)
  end)
  it("errors as Keras", function()
    assert.tf_error("ValueError", 'Input 0 of layer "mp" is incompatible with the layer: expected ndim=3, found ' ..
      "ndim=4. Full shape received: (1, 2, 2, 1)", function() L.MaxPooling1D{name = "mp"}(tf.zeros({1, 2, 2, 1})) end)
    assert.tf_error("ValueError", "AveragePooling1D: 'pool_size' must be a positive integer, got 0",
      function() return L.AveragePooling1D{0} end)
  end)
end)

describe("global pooling", function()
  local x = pseudo({2, 4, 3}, 11)
  local function over_steps(fn)
    return build({2, 3}, function(i)
      local vals = {}
      for t = 1, 4 do vals[t] = x[i[1]][t][i[2]] end
      return fn(vals)
    end)
  end
  local function mean(v) local s = 0 for _, a in ipairs(v) do s = s + a end return s / #v end
  local function max(v) return math.max(table.unpack(v)) end
  it("GlobalAveragePooling1D / GlobalMaxPooling1D reduce the steps (keepdims too)", function()
    check(L.GlobalAveragePooling1D{}, T(x), over_steps(mean))
    check(L.GlobalMaxPooling1D{}, T(x), over_steps(max))
    local keep = L.GlobalMaxPooling1D{keepdims = true}
    local rows = over_steps(max)
    local y = check(keep, T(x), {{rows[1]}, {rows[2]}})
    assert.shape({2, 1, 3}, y)
    assert.is_true(round_trip(keep):get_config().keepdims)
  end)
  it("GlobalAveragePooling1D with a mask averages the unmasked steps only, and drops the mask", function()
    local mask = tf.constant({{true, true, false, false}, {true, false, true, true}})
    local layer = L.GlobalAveragePooling1D{}
    local y = layer(T(x), {mask = mask})
    local keepers = {{1, 2}, {1, 3, 4}}
    local want = build({2, 3}, function(i)
      local s = 0
      for _, t in ipairs(keepers[i[1]]) do s = s + x[i[1]][t][i[2]] end
      return s / #keepers[i[1]]
    end)
    assert.tensor_near(want, y, {atol = 1e-12})
    assert.is_nil(K.get_mask(y))
    -- the mask travelling with the tensor (Embedding mask_zero / Masking)
    local xm = K.set_mask(T(x), mask)
    assert.tensor_near(want, layer(xm), {atol = 1e-12})
    -- GlobalMaxPooling1D takes no mask (Keras 3's ignores it; the base drops it)
    assert.tensor_near(over_steps(max), L.GlobalMaxPooling1D{}(xm), {atol = 1e-12})
  end)
  it("GlobalAveragePooling2D / GlobalMaxPooling2D have keepdims and get_config", function()
    local x2 = pseudo({2, 2, 3, 2}, 12)
    local function over_hw(fn, keep)
      return build(keep and {2, 1, 1, 2} or {2, 2}, function(i)
        local vals = {}
        for h = 1, 2 do for w = 1, 3 do vals[#vals + 1] = x2[i[1]][h][w][i[keep and 4 or 2]] end end
        return fn(vals)
      end)
    end
    check(L.GlobalAveragePooling2D{}, T(x2), over_hw(mean))
    check(L.GlobalMaxPooling2D{}, T(x2), over_hw(max))
    local a = L.GlobalAveragePooling2D{keepdims = true}
    check(a, T(x2), over_hw(mean, true))
    local m = L.GlobalMaxPooling2D{keepdims = true}
    check(m, T(x2), over_hw(max, true))
    assert.same({name = a.name, trainable = true, dtype = "float32", keepdims = true, data_format = "channels_last"},
      a:get_config())
    round_trip(a)
    round_trip(m)
  end)
  it("error on the wrong rank as Keras", function()
    assert.tf_error("ValueError", 'Input 0 of layer "gap" is incompatible with the layer: expected ndim=3, found ' ..
      "ndim=2. Full shape received: (2, 3)", function() L.GlobalAveragePooling1D{name = "gap"}(tf.zeros({2, 3})) end)
  end)
end)

describe("shape layers in a trained model", function()
  it("ZeroPadding2D, UpSampling2D, Cropping2D, pools and Conv layers train under fit", function()
    tf.keras.backend.clear_session()
    tf.random.set_seed(5)
    local m = tf.keras.Sequential{
      L.ZeroPadding2D{1}, L.Conv2D{3, 3, activation = "relu"}, L.UpSampling2D{2}, L.Cropping2D{1},
      L.GlobalMaxPooling2D{}, L.Dense{1},
    }
    m:compile{loss = "mse", optimizer = tf.keras.optimizers.Adam{learning_rate = 0.02}}
    local x = tf.constant(pseudo({8, 4, 4, 2}, 13), tf.float32)
    local y = tf.reshape(tf.reduce_mean(x, {axis = {2, 3, 4}}), {-1, 1})
    local h = m:fit(x, y, {epochs = 30, batch_size = 8, verbose = 0})
    local loss = h.history.loss
    assert.is_true(loss[#loss] < 0.5 * loss[1], loss[1] .. " -> " .. loss[#loss])
    local m1 = tf.keras.Sequential{L.ZeroPadding1D{1}, L.MaxPooling1D{2}, L.UpSampling1D{2}, L.Cropping1D{1},
                                   L.AveragePooling1D{2}, L.GlobalAveragePooling1D{}, L.Dense{1}}
    m1:compile{loss = "mse", optimizer = tf.keras.optimizers.Adam{learning_rate = 0.05}}
    local x1 = tf.constant(pseudo({8, 6, 2}, 14), tf.float32)
    local h1 = m1:fit(x1, tf.reshape(tf.reduce_sum(x1, {axis = {2, 3}}), {-1, 1}), {epochs = 30, verbose = 0})
    assert.is_true(h1.history.loss[30] < 0.5 * h1.history.loss[1])
  end)
end)
