-- tf.keras Conv1D, Conv2D (groups), Conv3D, Conv2DTranspose, DepthwiseConv2D,
-- SeparableConv2D: outputs against float64 direct loops in plain Lua with
-- the layer's own weights, Keras's weight names and shapes, get_config
-- round trips, tf.fn, errors, and a tiny model of each that trains.
local tf = require("tf")
local S = require("support")
local L = tf.keras.layers

local function pseudo(shape, seed)
  local rnd = S.lcg(seed)
  local flat = {}
  for i = 1, S.numel(shape) do flat[i] = rnd() end
  return S.nest(flat, shape)
end

-- TensorFlow's window padding: pad before, output size
local function window(pad, n, k, s, d)
  local eff = (k - 1) * d + 1
  if pad == "same" then
    local out = (n + s - 1) // s
    return math.max((out - 1) * s + eff - n, 0) // 2, out
  end
  return 0, math.max((n - eff) // s + 1, 0)
end

-- 1-d: x[n][w][c], k[a][c/g][o]; padding "valid" | "same" | "causal"
local function ref_conv1d(x, k, b, s, pad, d, groups)
  local N, W, C = #x, #x[1], #x[1][1]
  local K, CG, O = #k, #k[1], #k[1][1]
  local p, ow
  if pad == "causal" then   -- (K - 1) * d zeros on the left, then "valid"
    p = (K - 1) * d
    ow = (W + p - ((K - 1) * d + 1)) // s + 1
  else
    p, ow = window(pad, W, K, s, d)
  end
  local OG = O // groups
  local y = {}
  for n = 1, N do
    y[n] = {}
    for i = 1, ow do
      y[n][i] = {}
      for o = 1, O do
        local g = (o - 1) // OG
        local acc = b and b[o] or 0
        for a = 1, K do
          local wi = (i - 1) * s + (a - 1) * d - p + 1
          if wi >= 1 and wi <= W then
            for c = 1, CG do acc = acc + x[n][wi][g * CG + c] * k[a][c][o] end
          end
        end
        y[n][i][o] = acc
      end
    end
  end
  return y
end

-- 3-d: x[n][d][h][w][c], k[a][b][e][c][o]
local function ref_conv3d(x, f, bias, s, pad)
  local N, D, Hh, W, C = #x, #x[1], #x[1][1], #x[1][1][1], #x[1][1][1][1]
  local KD, KH, KW, O = #f, #f[1], #f[1][1], #f[1][1][1][1]
  local p1, od = window(pad, D, KD, s[1], 1)
  local p2, oh = window(pad, Hh, KH, s[2], 1)
  local p3, ow = window(pad, W, KW, s[3], 1)
  local y = {}
  for n = 1, N do
    y[n] = {}
    for i = 1, od do
      y[n][i] = {}
      for j = 1, oh do
        y[n][i][j] = {}
        for l = 1, ow do
          y[n][i][j][l] = {}
          for o = 1, O do
            local acc = bias[o]
            for a = 1, KD do for b = 1, KH do for e = 1, KW do
              local di, hj, wl = (i - 1) * s[1] + a - p1, (j - 1) * s[2] + b - p2, (l - 1) * s[3] + e - p3
              if di >= 1 and di <= D and hj >= 1 and hj <= Hh and wl >= 1 and wl <= W then
                for c = 1, C do acc = acc + x[n][di][hj][wl][c] * f[a][b][e][c][o] end
              end
            end end end
            y[n][i][j][l][o] = acc
          end
        end
      end
    end
  end
  return y
end

-- transposed 2-d: x[n][h][w][c], k[a][b][o][c] (Keras's (kh, kw, filters, in)),
-- each input pixel scattered into an output of size (OH, OW); Keras's
-- padding: "same" crops (k - 1) // 2... as TensorFlow's conv2d gradient does
local function ref_conv2d_transpose(x, k, bias, s, OH, OW, pad)
  local N, Hh, W, C = #x, #x[1], #x[1][1], #x[1][1][1]
  local KH, KW, O = #k, #k[1], #k[1][1]
  local ph, pw = 0, 0
  if pad == "same" then
    ph = math.max((Hh - 1) * s[1] + KH - OH, 0) // 2
    pw = math.max((W - 1) * s[2] + KW - OW, 0) // 2
  end
  local y = {}
  for n = 1, N do
    y[n] = {}
    for i = 1, OH do
      y[n][i] = {}
      for j = 1, OW do
        y[n][i][j] = {}
        for o = 1, O do y[n][i][j][o] = bias[o] end
      end
    end
    for i = 1, Hh do for j = 1, W do for a = 1, KH do for b = 1, KW do
      local oi, oj = (i - 1) * s[1] + a - ph, (j - 1) * s[2] + b - pw
      if oi >= 1 and oi <= OH and oj >= 1 and oj <= OW then
        for o = 1, O do
          for c = 1, C do y[n][oi][oj][o] = y[n][oi][oj][o] + x[n][i][j][c] * k[a][b][o][c] end
        end
      end
    end end end end
  end
  return y
end

-- depthwise: x[n][h][w][c], k[a][b][c][m] -> channel (c - 1) * M + m
local function ref_depthwise(x, k, s, pad, d)
  local N, Hh, W, C = #x, #x[1], #x[1][1], #x[1][1][1]
  local KH, KW, M = #k, #k[1], #k[1][1][1]
  local p1, oh = window(pad, Hh, KH, s, d)
  local p2, ow = window(pad, W, KW, s, d)
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
            local hi, wj = (i - 1) * s + (a - 1) * d - p1 + 1, (j - 1) * s + (b - 1) * d - p2 + 1
            if hi >= 1 and hi <= Hh and wj >= 1 and wj <= W then acc = acc + x[n][hi][wj][c] * k[a][b][c][m] end
          end end
          y[n][i][j][(c - 1) * M + m] = acc
        end end
      end
    end
  end
  return y
end

-- y[...][c] + b[c], then f elementwise
local function map_last(y, fn)
  if type(y[1]) ~= "table" then
    local out = {}
    for c = 1, #y do out[c] = fn(y[c], c) end
    return out
  end
  local out = {}
  for i = 1, #y do out[i] = map_last(y[i], fn) end
  return out
end

local f64 = tf.float64
local function T(v) return tf.constant(v, f64) end

local function weights_of(layer)
  local out = {}
  for i, w in ipairs(layer.weights) do out[i] = {w.name, w.shape:as_list()} end
  return out
end

-- get_config -> from_config gives a layer with the same config
local function round_trip(layer)
  local cfg = layer:get_config()
  local again = getmetatable(layer).from_config(cfg)
  assert.same(cfg, again:get_config())
  return again
end

describe("Conv1D", function()
  local x = pseudo({2, 9, 4}, 1)
  for _, c in ipairs({
    {pad = "valid", s = 1, d = 1, g = 1}, {pad = "same", s = 2, d = 1, g = 1}, {pad = "causal", s = 1, d = 2, g = 1},
    {pad = "same", s = 1, d = 1, g = 2}, {pad = "causal", s = 2, d = 1, g = 4},
  }) do
    it(("matches a direct loop: padding %s, strides %d, dilation %d, groups %d"):format(c.pad, c.s, c.d, c.g),
        function()
      tf.keras.backend.clear_session()
      local layer = L.Conv1D{4, 3, strides = c.s, padding = c.pad, dilation_rate = c.d, groups = c.g, dtype = "float64"}
      local y = layer(T(x))
      assert.same({{"conv1d/kernel:0", {3, 4 // c.g, 4}}, {"conv1d/bias:0", {4}}}, weights_of(layer))
      local k = pseudo({3, 4 // c.g, 4}, 2)
      local b = {0.1, -0.2, 0.3, 0.5}
      layer:set_weights({T(k), T(b)})
      y = layer(T(x))
      assert.tensor_near(ref_conv1d(x, k, b, c.s, c.pad, c.d, c.g), y, {atol = 1e-12})
      assert.same(layer:compute_output_shape(tf.TensorShape({2, 9, 4})):as_list(), y:_dims())
    end)
  end
  it("applies the activation and round-trips its config", function()
    local layer = L.Conv1D{3, 2, activation = "relu", use_bias = false, dtype = "float64", name = "c1"}
    local y = layer(T(x))
    assert.equal(1, #layer.weights)
    local k = layer.weights[1]:value():totable()
    local want = map_last(ref_conv1d(x, k, nil, 1, "valid", 1, 1), function(v) return math.max(v, 0) end)
    assert.tensor_near(want, y, {atol = 1e-12})
    local cfg = layer:get_config()
    assert.same({name = "c1", trainable = true, dtype = "float64", filters = 3, kernel_size = {2}, strides = {1},
                 padding = "valid", data_format = "channels_last", dilation_rate = {1}, groups = 1,
                 activation = "relu", use_bias = false,
                 kernel_initializer = {class_name = "GlorotUniform", config = {}},
                 bias_initializer = {class_name = "Zeros", config = {}}}, cfg)
    round_trip(layer)
  end)
  it("accepts Keras's regularizer and constraint keywords and keeps them in its config", function()
    local reg = function(w) return tf.reduce_sum(w * w) end
    local layer = L.Conv1D{2, 3, kernel_regularizer = reg, bias_constraint = "non_neg"}
    assert.equal(reg, layer:get_config().kernel_regularizer)
    assert.same({class_name = "NonNeg", config = {}}, layer:get_config().bias_constraint)
  end)
  it("errors as Keras: rank, groups, causal elsewhere", function()
    assert.tf_error("ValueError", 'Input 0 of layer "conv1d_rank" is incompatible with the layer: expected ndim=3, ' ..
      "found ndim=4. Full shape received: (1, 2, 3, 4)", function()
        L.Conv1D{2, 1, name = "conv1d_rank"}(tf.zeros({1, 2, 3, 4}))
      end)
    assert.tf_error("ValueError", "Conv1D: The number of filters must be evenly divisible by the number of groups. " ..
      "Received: groups=2, filters=3", function() return L.Conv1D{3, 2, groups = 2} end)
    assert.tf_error("ValueError", 'layer "conv1d_g": The number of input channels must be evenly divisible by the ' ..
      "number of groups. Received groups=3, but the input has 4 channels (full input shape is (2, 9, 4))", function()
        L.Conv1D{3, 2, groups = 3, name = "conv1d_g"}(tf.zeros({2, 9, 4}))
      end)
    assert.tf_error("ValueError", "Conv2D: `causal` padding is only supported for `Conv1D` and `SeparableConv1D`",
      function() return L.Conv2D{2, 2, padding = "causal"} end)
    assert.tf_error("ValueError", "Conv1D: 'kernel_size' must be a positive integer or a table of 1 of them, got {3, 3}",
      function() return L.Conv1D{2, {3, 3}} end)
    assert.tf_error("TypeError", "Conv1D: 'kernel_size' is required", function() return L.Conv1D{2} end)
  end)
end)

describe("Conv2D with groups", function()
  it("is the concatenation of per-group convolutions", function()
    local layer = L.Conv2D{4, 2, groups = 2, use_bias = false, dtype = "float64"}
    local x = T(pseudo({1, 4, 4, 6}, 3))
    local y = layer(x)
    assert.same({2, 2, 3, 4}, layer.kernel.shape:as_list())
    local k = layer.kernel:value()
    local a = tf.nn.conv2d(x[{tf.all, tf.all, tf.all, {1, 3}}], k[{tf.all, tf.all, tf.all, {1, 2}}], 1, "VALID")
    local b = tf.nn.conv2d(x[{tf.all, tf.all, tf.all, {4, 6}}], k[{tf.all, tf.all, tf.all, {3, 4}}], 1, "VALID")
    assert.tensor_near(tf.concat({a, b}, 4), y, {atol = 1e-12})
    round_trip(layer)
  end)
end)

describe("Conv3D", function()
  it("matches a direct loop (valid and same, strides)", function()
    local x = pseudo({2, 4, 5, 4, 2}, 4)
    for _, c in ipairs({{pad = "valid", s = {1, 1, 1}}, {pad = "same", s = {2, 1, 2}}}) do
      tf.keras.backend.clear_session()
      local layer = L.Conv3D{3, {2, 3, 2}, strides = c.s, padding = c.pad, dtype = "float64"}
      layer(T(x))
      assert.same({{"conv3d/kernel:0", {2, 3, 2, 2, 3}}, {"conv3d/bias:0", {3}}}, weights_of(layer))
      local k, b = pseudo({2, 3, 2, 2, 3}, 5), {0.5, -0.5, 0.25}
      layer:set_weights({T(k), T(b)})
      local y = layer(T(x))
      assert.tensor_near(ref_conv3d(x, k, b, c.s, c.pad), y, {atol = 1e-12})
      assert.same(layer:compute_output_shape(tf.TensorShape({2, 4, 5, 4, 2})):as_list(), y:_dims())
      round_trip(layer)
    end
  end)
  it("errors on a rank-4 input and on groups", function()
    assert.tf_error("ValueError", 'Input 0 of layer "c3" is incompatible with the layer: expected ndim=5, found ' ..
      "ndim=4. Full shape received: (1, 2, 2, 2)", function() L.Conv3D{2, 1, name = "c3"}(tf.zeros({1, 2, 2, 2})) end)
    assert.tf_error("UnimplementedError", "Conv3D: groups > 1 is not supported", function()
      return L.Conv3D{2, 1, groups = 2}
    end)
  end)
end)

describe("Conv2DTranspose", function()
  local x = pseudo({2, 3, 4, 2}, 6)
  for _, c in ipairs({
    {pad = "valid", s = {2, 2}, op = nil, out = {7, 9}},
    {pad = "same", s = {2, 1}, op = nil, out = {6, 4}},
    {pad = "same", s = {2, 3}, op = {1, 2}, out = {6, 12}},
    {pad = "valid", s = {1, 1}, op = nil, out = {5, 6}},
  }) do
    it(("matches a direct scatter loop: padding %s, strides {%d, %d}%s"):format(c.pad, c.s[1], c.s[2],
        c.op and ", output_padding" or ""), function()
      tf.keras.backend.clear_session()
      local layer = L.Conv2DTranspose{3, 3, strides = c.s, padding = c.pad, output_padding = c.op, dtype = "float64"}
      layer(T(x))
      assert.same({{"conv2d_transpose/kernel:0", {3, 3, 3, 2}}, {"conv2d_transpose/bias:0", {3}}}, weights_of(layer))
      local k, b = pseudo({3, 3, 3, 2}, 7), {1, 2, 3}
      layer:set_weights({T(k), T(b)})
      local y = layer(T(x))
      assert.shape({2, c.out[1], c.out[2], 3}, y)
      assert.tensor_near(ref_conv2d_transpose(x, k, b, c.s, c.out[1], c.out[2], c.pad), y, {atol = 1e-12})
      assert.same({2, c.out[1], c.out[2], 3}, layer:compute_output_shape(tf.TensorShape({2, 3, 4, 2})):as_list())
      round_trip(layer)
    end)
  end
  it("errors on output_padding >= strides", function()
    assert.tf_error("ValueError", "Conv2DTranspose: Strides {2, 2} must be greater than output padding {2, 0}",
      function() return L.Conv2DTranspose{2, 3, strides = 2, output_padding = {2, 0}} end)
  end)
end)

describe("DepthwiseConv2D", function()
  local x = pseudo({2, 6, 5, 3}, 8)
  for _, c in ipairs({{pad = "valid", s = 1, d = 1, m = 1}, {pad = "same", s = 2, d = 1, m = 2},
                      {pad = "same", s = 1, d = 2, m = 3}}) do
    it(("matches a direct loop: padding %s, strides %d, dilation %d, depth_multiplier %d"):format(c.pad, c.s, c.d, c.m),
        function()
      tf.keras.backend.clear_session()
      local layer = L.DepthwiseConv2D{3, strides = c.s, padding = c.pad, dilation_rate = c.d, depth_multiplier = c.m,
                                      activation = "tanh", dtype = "float64"}
      layer(T(x))
      assert.same({{"depthwise_conv2d/depthwise_kernel:0", {3, 3, 3, c.m}}, {"depthwise_conv2d/bias:0", {3 * c.m}}},
        weights_of(layer))
      local k, b = pseudo({3, 3, 3, c.m}, 9), pseudo({3 * c.m}, 10)
      layer:set_weights({T(k), T(b)})
      local want = map_last(ref_depthwise(x, k, c.s, c.pad, c.d), function(v, i) return math.tanh(v + b[i]) end)
      assert.tensor_near(want, layer(T(x)), {atol = 1e-12})
      local cfg = round_trip(layer):get_config()
      assert.equal(c.m, cfg.depth_multiplier)
      assert.is_nil(cfg.filters)
    end)
  end
end)

describe("SeparableConv2D", function()
  it("is the depthwise loop followed by the pointwise sum, plus bias", function()
    local x = pseudo({2, 5, 5, 2}, 11)
    local layer = L.SeparableConv2D{4, 3, padding = "same", depth_multiplier = 2, dtype = "float64"}
    layer(T(x))
    assert.same({{"separable_conv2d/depthwise_kernel:0", {3, 3, 2, 2}},
                 {"separable_conv2d/pointwise_kernel:0", {1, 1, 4, 4}}, {"separable_conv2d/bias:0", {4}}},
      weights_of(layer))
    local dk, pk, b = pseudo({3, 3, 2, 2}, 12), pseudo({1, 1, 4, 4}, 13), {0.1, 0.2, 0.3, 0.4}
    layer:set_weights({T(dk), T(pk), T(b)})
    local mid = ref_depthwise(x, dk, 1, "same", 1)
    local want = map_last(mid, function() return 0 end)
    for n = 1, 2 do for i = 1, 5 do for j = 1, 5 do
      local row = {}
      for o = 1, 4 do
        local acc = b[o]
        for q = 1, 4 do acc = acc + mid[n][i][j][q] * pk[1][1][q][o] end
        row[o] = acc
      end
      want[n][i][j] = row
    end end end
    assert.tensor_near(want, layer(T(x)), {atol = 1e-12})
    round_trip(layer)
  end)
end)

describe("conv layers in tf.fn, Sequential and fit", function()
  it("give the same values inside tf.fn as eagerly", function()
    local x = tf.constant(pseudo({2, 6, 6, 2}, 14), tf.float32)
    for _, layer in ipairs({L.Conv2DTranspose{2, 3, strides = 2}, L.DepthwiseConv2D{3}, L.SeparableConv2D{2, 3}}) do
      local eager = layer(x)
      local f = tf.fn(function(v) return layer(v) end)
      assert.tensor_near(eager, f(x), {atol = 1e-6})
    end
    local x1 = tf.constant(pseudo({2, 7, 3}, 15), tf.float32)
    local c1 = L.Conv1D{2, 3, padding = "causal"}
    assert.tensor_near(c1(x1), tf.fn(function(v) return c1(v) end)(x1), {atol = 1e-6})
  end)

  -- a tiny regression model of each layer: fit lowers the loss
  local cases = {
    {"Conv1D", {8, 5, 3}, function() return {L.Conv1D{4, 3, padding = "causal", activation = "relu"},
                                               L.GlobalAveragePooling1D{}} end},
    {"Conv2DTranspose", {8, 3, 3, 2}, function() return {L.Conv2DTranspose{3, 3, strides = 2, activation = "relu"},
                                                          L.GlobalAveragePooling2D{}} end},
    {"DepthwiseConv2D", {8, 5, 5, 2}, function() return {L.DepthwiseConv2D{3, depth_multiplier = 2,
                                                          activation = "relu"}, L.Flatten{}} end},
    {"SeparableConv2D", {8, 5, 5, 2}, function() return {L.SeparableConv2D{4, 3, activation = "relu"},
                                                          L.Flatten{}} end},
    {"Conv3D", {8, 3, 4, 4, 1}, function() return {L.Conv3D{3, 2, activation = "relu"}, L.Flatten{}} end},
  }
  for _, c in ipairs(cases) do
    it(c[1] .. " trains in a Sequential model with fit", function()
      tf.keras.backend.clear_session()
      tf.random.set_seed(3)
      local layers = c[3]()
      layers[#layers + 1] = L.Dense{1}
      local m = tf.keras.Sequential(layers)
      m:compile{loss = "mse", optimizer = tf.keras.optimizers.Adam{learning_rate = 0.02}}
      local x = tf.constant(pseudo(c[2], 21), tf.float32)
      local y = tf.reduce_mean(x, {axis = {2}})
      y = tf.reshape(tf.reduce_sum(tf.reshape(y, {c[2][1], -1}), {axis = 2}), {-1, 1})
      local h = m:fit(x, y, {epochs = 30, batch_size = 8, verbose = 0})
      local loss = h.history.loss
      assert.is_true(loss[#loss] < 0.5 * loss[1], c[1] .. ": " .. loss[1] .. " -> " .. loss[#loss])
    end)
  end
end)
