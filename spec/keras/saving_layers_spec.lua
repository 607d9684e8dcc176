-- Every class of tf.keras.layers goes through a .keras file: a functional
-- model around one layer is saved and loaded; the loaded model's output is
-- bit-identical (inference) and its layer's config equals the original's.
-- A class of tf.keras.layers without a case here fails the spec, so a new
-- layer must show that it round-trips.
local tf = require("tf")
local L = tf.keras.layers

local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)

local function rnd(shape, seed)
  tf.random.set_seed(seed or 1)
  return tf.random.normal(shape)
end

-- inputs: {spec for tf.keras.Input, value}
local function mat() return {{4}, rnd({2, 4})} end
local function mat2() return {{4}, rnd({2, 4}, 2)} end
local function seq() return {{5, 3}, rnd({2, 5, 3})} end
local function seq2() return {{4, 3}, rnd({2, 4, 3}, 3)} end
local function img() return {{6, 6, 3}, rnd({2, 6, 6, 3})} end
local function vol() return {{4, 4, 4, 2}, rnd({2, 4, 4, 4, 2})} end
local function ids() return {{3}, tf.constant({{1, 2, 9}, {4, 4, 7}}), "int64"} end
local function ints() return {{3}, tf.constant({{7, 8, 3}, {8, 8, 1}}), "int64"} end
local function strs() return {{1}, tf.constant({{"a b"}, {"c a zz"}}), "string"} end
local function words() return {{2}, tf.constant({{"a", "b"}, {"zz", "a"}}), "string"} end

local double = tf.keras.saving.register_keras_serializable{package = "layers_spec", name = "double"}(
  function(x) return x * 2 end)

-- class name -> {make() -> layer, inputs (array of input makers; one: the layer gets one input)}
local CASES = {
  Activation = {function() return L.Activation{"gelu"} end, {mat}},
  ActivityRegularization = {function() return L.ActivityRegularization{l1 = 0.1, l2 = 0.2} end, {mat}},
  Add = {function() return L.Add{} end, {mat, mat2}},
  AdditiveAttention = {function() return L.AdditiveAttention{use_scale = true} end, {seq, seq2}},
  Attention = {function() return L.Attention{use_scale = true, score_mode = "dot"} end, {seq, seq2}},
  Average = {function() return L.Average{} end, {mat, mat2}},
  AveragePooling1D = {function() return L.AveragePooling1D{2, strides = 1, padding = "same"} end, {seq}},
  AveragePooling2D = {function() return L.AveragePooling2D{{2, 3}, padding = "same"} end, {img}},
  BatchNormalization = {function() return L.BatchNormalization{momentum = 0.9, epsilon = 0.01,
    gamma_initializer = "random_normal", moving_mean_initializer = tf.keras.initializers.Constant{0.3}} end, {mat}},
  Bidirectional = {function() return L.Bidirectional{L.LSTM{3, return_sequences = true}, merge_mode = "concat"} end,
    {seq}},
  CenterCrop = {function() return L.CenterCrop{4, 3} end, {img}},
  Concatenate = {function() return L.Concatenate{axis = -1} end, {mat, mat2}},
  Conv1D = {function() return L.Conv1D{4, 2, padding = "causal", dilation_rate = 2, activation = "relu"} end, {seq}},
  Conv2D = {function() return L.Conv2D{4, {2, 3}, strides = {1, 2}, padding = "same", kernel_regularizer = "l2"} end,
    {img}},
  Conv2DTranspose = {function() return L.Conv2DTranspose{2, 3, strides = 2, padding = "same"} end, {img}},
  Conv3D = {function() return L.Conv3D{2, {2, 2, 2}, use_bias = false} end, {vol}},
  Cropping1D = {function() return L.Cropping1D{{1, 2}} end, {seq}},
  Cropping2D = {function() return L.Cropping2D{{{1, 1}, {0, 2}}} end, {img}},
  Dense = {function() return L.Dense{3, activation = "softplus", kernel_initializer = "he_normal",
    bias_initializer = tf.keras.initializers.Constant{0.1}, kernel_constraint = tf.keras.constraints.MaxNorm{2},
    activity_regularizer = tf.keras.regularizers.L1{0.5}} end, {mat}},
  DepthwiseConv2D = {function() return L.DepthwiseConv2D{3, depth_multiplier = 2} end, {img}},
  Dot = {function() return L.Dot{axes = 2, normalize = true} end, {mat, mat2}},
  Dropout = {function() return L.Dropout{0.3, seed = 5} end, {mat}},
  ELU = {function() return L.ELU{alpha = 0.7} end, {mat}},
  EinsumDense = {function() return L.EinsumDense{"abc,cd->abd", {-1, 4}, bias_axes = "d"} end, {seq}},
  Embedding = {function() return L.Embedding{10, 3, embeddings_initializer = "random_normal"} end, {ids}},
  Flatten = {function() return L.Flatten{} end, {img}},
  GRU = {function() return L.GRU{4, return_sequences = true, reset_after = true, go_backwards = true} end, {seq}},
  GRUCell = {function() return L.RNN{L.GRUCell{3}} end, {seq}, "RNN"},
  GaussianDropout = {function() return L.GaussianDropout{0.2} end, {mat}},
  GaussianNoise = {function() return L.GaussianNoise{0.3} end, {mat}},
  GlobalAveragePooling1D = {function() return L.GlobalAveragePooling1D{} end, {seq}},
  GlobalAveragePooling2D = {function() return L.GlobalAveragePooling2D{keepdims = true} end, {img}},
  GlobalMaxPooling1D = {function() return L.GlobalMaxPooling1D{} end, {seq}},
  GlobalMaxPooling2D = {function() return L.GlobalMaxPooling2D{} end, {img}},
  Hashing = {function() return L.Hashing{5, salt = 3} end, {words}},
  IntegerLookup = {function() return L.IntegerLookup{vocabulary = {7, 8}} end, {ints}},
  LSTM = {function() return L.LSTM{4, return_state = false, unit_forget_bias = true, recurrent_activation = "sigmoid"}
    end, {seq}},
  LSTMCell = {function() return L.RNN{L.LSTMCell{3}, return_sequences = true} end, {seq}, "RNN"},
  Lambda = {function() return L.Lambda{double} end, {mat}},
  LayerNormalization = {function() return L.LayerNormalization{epsilon = 1e-5, center = false} end, {mat}},
  LeakyReLU = {function() return L.LeakyReLU{negative_slope = 0.2} end, {mat}},
  Masking = {function() return L.Masking{mask_value = 0.5} end, {seq}},
  MaxPooling1D = {function() return L.MaxPooling1D{2} end, {seq}},
  MaxPooling2D = {function() return L.MaxPooling2D{{2, 2}, strides = 1} end, {img}},
  Maximum = {function() return L.Maximum{} end, {mat, mat2}},
  Minimum = {function() return L.Minimum{} end, {mat, mat2}},
  MultiHeadAttention = {function() return L.MultiHeadAttention{num_heads = 2, key_dim = 3, value_dim = 2} end,
    {seq, seq2}},
  Multiply = {function() return L.Multiply{} end, {mat, mat2}},
  Normalization = {function()
    return L.Normalization{mean = {0.1, 0.2, 0.3, 0.4}, variance = {1, 2, 3, 4}} end, {mat}},
  PReLU = {function() return L.PReLU{alpha_initializer = tf.keras.initializers.Constant{0.2}} end, {mat}},
  Permute = {function() return L.Permute{{2, 1}} end, {seq}},
  RNN = {function() return L.RNN{L.StackedRNNCells{{L.SimpleRNNCell{3}, L.LSTMCell{2}}}} end, {seq}},
  RandomContrast = {function() return L.RandomContrast{0.2, seed = 1} end, {img}},
  RandomFlip = {function() return L.RandomFlip{"horizontal", seed = 2} end, {img}},
  RandomRotation = {function() return L.RandomRotation{0.1, seed = 1} end, {img}},
  RandomTranslation = {function() return L.RandomTranslation{0.1, 0.2, seed = 1} end, {img}},
  RandomZoom = {function() return L.RandomZoom{0.1, seed = 1} end, {img}},
  ReLU = {function() return L.ReLU{max_value = 1.5, negative_slope = 0.1, threshold = 0.2} end, {mat}},
  RepeatVector = {function() return L.RepeatVector{3} end, {mat}},
  Rescaling = {function() return L.Rescaling{1 / 255, offset = -0.5} end, {img}},
  Reshape = {function() return L.Reshape{{-1, 2}} end, {mat}},
  Resizing = {function() return L.Resizing{3, 4, interpolation = "bilinear"} end, {img}},
  SeparableConv2D = {function() return L.SeparableConv2D{4, 3, padding = "same", depth_multiplier = 2} end, {img}},
  SimpleRNN = {function() return L.SimpleRNN{3, activation = "relu", return_sequences = true} end, {seq}},
  SimpleRNNCell = {function() return L.RNN{L.SimpleRNNCell{3}} end, {seq}, "RNN"},
  Softmax = {function() return L.Softmax{axis = 1} end, {mat}},
  SpatialDropout1D = {function() return L.SpatialDropout1D{0.3} end, {seq}},
  SpatialDropout2D = {function() return L.SpatialDropout2D{0.3} end, {img}},
  StackedRNNCells = {function() return L.RNN{L.StackedRNNCells{{L.GRUCell{2}, L.SimpleRNNCell{3}}}} end, {seq},
    "RNN"},
  StringLookup = {function() return L.StringLookup{vocabulary = {"a", "b"}, output_mode = "int"} end, {words}},
  Subtract = {function() return L.Subtract{} end, {mat, mat2}},
  TextVectorization = {function()
    return L.TextVectorization{vocabulary = {"a", "b", "c"}, output_sequence_length = 4} end, {strs}},
  TimeDistributed = {function() return L.TimeDistributed{L.Dense{2}} end, {seq}},
  UpSampling1D = {function() return L.UpSampling1D{2} end, {seq}},
  UpSampling2D = {function() return L.UpSampling2D{{2, 1}, interpolation = "bilinear"} end, {img}},
  ZeroPadding1D = {function() return L.ZeroPadding1D{{1, 2}} end, {seq}},
  ZeroPadding2D = {function() return L.ZeroPadding2D{{{1, 0}, {2, 1}}} end, {img}},
}
-- covered without a case of their own: InputLayer (every model below has
-- one), TFOpLambda (the operators test below), Layer (the base class:
-- subclasses in saving_spec.lua)
local COVERED = {InputLayer = true, TFOpLambda = true, Layer = true}

local function same(a, b) return tf.reduce_all(tf.equal(a, b)):item() end

local function deep_equal(a, b, path)
  if type(a) ~= type(b) then return false, path .. ": " .. type(a) .. " vs " .. type(b) end
  if type(a) ~= "table" then
    if a ~= b and not (a ~= a and b ~= b) then return false, path .. ": " .. tostring(a) .. " vs " .. tostring(b) end
    if math.type(a) ~= math.type(b) then return false, path .. ": " .. math.type(a) .. " vs " .. math.type(b) end
    return true
  end
  if getmetatable(a) ~= nil or getmetatable(b) ~= nil then
    if tf.is_tensor(a) and tf.is_tensor(b) then return same(a, b), path end
    return rawequal(a, b), path .. ": different objects"
  end
  for k, v in pairs(a) do
    local ok, where = deep_equal(v, b[k], path .. "." .. tostring(k))
    if not ok then return false, where end
  end
  for k in pairs(b) do if a[k] == nil then return false, path .. "." .. tostring(k) .. " only in the loaded" end end
  return true
end

describe("every layer class through a .keras file", function()
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("has a case for each class of tf.keras.layers", function()
    local missing = {}
    for name, cls in pairs(L) do
      if type(cls) == "table" and cls._class_name == name and not CASES[name] and not COVERED[name] then
        missing[#missing + 1] = name
      end
    end
    table.sort(missing)
    assert.same({}, missing)
  end)

  local names = {}
  for name in pairs(CASES) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local make, inputs, cls_name = CASES[name][1], CASES[name][2], CASES[name][3]
    it(name .. ": the loaded model's output and the layer's config are the same", function()
      tf.keras.backend.clear_session()
      local layer = make()
      assert.equal(cls_name or name, layer._class_name)
      local kins, xs = {}, {}
      for i, mk in ipairs(inputs) do
        local d = mk()
        kins[i] = tf.keras.Input(d[1], {dtype = d[3]})
        xs[i] = d[2]
      end
      local out = layer(#kins == 1 and kins[1] or kins)
      local model = tf.keras.Model(#kins == 1 and kins[1] or kins, out)
      local x = #xs == 1 and xs[1] or xs
      -- inference (random preprocessing layers act unless training is false)
      local want = model(x, {training = false})
      local p = dir .. "/" .. name .. ".keras"
      model:save(p)
      local m2 = tf.keras.models.load_model(p)
      local got = m2(x, {training = false})
      if tf.is_tensor(want) then
        assert.is_true(same(want, got), "the outputs differ")
      else
        for k, v in pairs(want) do assert.is_true(same(v, got[k]), "output " .. tostring(k) .. " differs") end
      end
      local l2 = m2:get_layer(layer.name)
      assert.equal(getmetatable(layer), getmetatable(l2))
      local ok, where = deep_equal(layer:get_config(), l2:get_config(), "config")
      assert.is_true(ok, where)
      assert.equal(#layer.variables, #l2.variables)
    end)
  end

  it("TFOpLambda (operators on KerasTensors, slicing) round-trips by operation name", function()
    tf.keras.backend.clear_session()
    local a = tf.keras.Input({4})
    local b = tf.keras.Input({4})
    local h = L.Dense{4}(a)
    local out = -(((h + 1) * b - 2 * a) / 3) ^ 2 % 5
    out = out[{{}, {2, 3}}]
    local model = tf.keras.Model({a, b}, out)
    local x = {rnd({2, 4}), rnd({2, 4}, 5)}
    local want = model(x)
    model:save(dir .. "/ops.keras")
    local m2 = tf.keras.models.load_model(dir .. "/ops.keras")
    assert.is_true(same(want, m2(x)))
    local names2 = {}
    for _, l in ipairs(m2.layers) do names2[#names2 + 1] = l._class_name == "TFOpLambda" and l:get_config()["function"] or nil end
    assert.same({"tf.math.add", "tf.math.multiply", "tf.math.multiply", "tf.math.subtract", "tf.math.truediv",
                 "tf.math.pow", "tf.math.negative", "tf.math.floormod", "tf.__operators__.getitem"}, names2)
  end)
end)
