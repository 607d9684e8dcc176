-- Mixed precision across the layer classes: under
-- set_global_policy("mixed_float16") each layer outputs float16 (float32
-- where Keras keeps float32), keeps its variables float32, and a small
-- functional model holding it (the layer, then a float32 Dense head) trains
-- under fit: its loss is finite and falls.
local tf = require("tf")
local L = tf.keras.layers
local mp = tf.keras.mixed_precision

local function rnd(shape, seed) return tf.random.normal(shape, 0, 1, tf.float32, seed) end
local function ids(shape) return tf.random.uniform(shape, 1, 9, tf.int32, 3) end
local function images(shape) return tf.random.uniform(shape, 0, 1, tf.float32, 4) end

-- {class name, constructor, input shape (without the batch), input maker,
--  input dtype, expected output dtype (default float16)}
local cases = {
  {"SimpleRNN", function() return L.SimpleRNN{4} end, {5, 3}},
  {"LSTM", function() return L.LSTM{4, return_sequences = true} end, {5, 3}},
  {"GRU", function() return L.GRU{4} end, {5, 3}},
  {"Bidirectional", function() return L.Bidirectional{L.LSTM{3}} end, {5, 3}},
  {"RNN", function() return L.RNN{L.StackedRNNCells{{L.SimpleRNNCell{3}, L.LSTMCell{3}, L.GRUCell{3}}}} end, {5, 3}},
  {"MultiHeadAttention", function()
    local mha = L.MultiHeadAttention{num_heads = 2, key_dim = 3}
    return mha, function(x) return mha(x, x) end
  end, {4, 6}},
  {"Attention", function() local a = L.Attention{}; return a, function(x) return a{x, x} end end, {4, 6}},
  {"AdditiveAttention", function() local a = L.AdditiveAttention{}; return a, function(x) return a{x, x} end end, {4, 6}},
  {"EinsumDense", function() return L.EinsumDense{"abc,cd->abd", output_shape = {4, 3}, bias_axes = "d"} end, {4, 6}},
  {"LayerNormalization", function() return L.LayerNormalization{} end, {4, 6}},
  {"Conv1D", function() return L.Conv1D{3, 2} end, {6, 2}},
  {"Conv2DTranspose", function() return L.Conv2DTranspose{2, 3, strides = 2} end, {4, 4, 2}},
  {"DepthwiseConv2D", function() return L.DepthwiseConv2D{3} end, {5, 5, 2}},
  {"SeparableConv2D", function() return L.SeparableConv2D{3, 3} end, {5, 5, 2}},
  {"Conv3D", function() return L.Conv3D{2, 2} end, {3, 3, 3, 1}},
  {"UpSampling1D", function() return L.UpSampling1D{2} end, {4, 2}},
  {"UpSampling2D", function() return L.UpSampling2D{2, interpolation = "bilinear"} end, {3, 3, 2}},
  {"ZeroPadding1D", function() return L.ZeroPadding1D{1} end, {4, 2}},
  {"ZeroPadding2D", function() return L.ZeroPadding2D{1} end, {3, 3, 2}},
  {"Cropping1D", function() return L.Cropping1D{1} end, {4, 2}},
  {"Cropping2D", function() return L.Cropping2D{1} end, {4, 4, 2}},
  {"MaxPooling1D", function() return L.MaxPooling1D{2} end, {4, 2}},
  {"AveragePooling1D", function() return L.AveragePooling1D{2} end, {4, 2}},
  {"GlobalAveragePooling1D", function() return L.GlobalAveragePooling1D{} end, {4, 2}},
  {"GlobalMaxPooling1D", function() return L.GlobalMaxPooling1D{} end, {4, 2}},
  {"GlobalAveragePooling2D", function() return L.GlobalAveragePooling2D{} end, {3, 3, 2}},
  {"GlobalMaxPooling2D", function() return L.GlobalMaxPooling2D{} end, {3, 3, 2}},
  {"TimeDistributed", function() return L.TimeDistributed{L.Dense{3}} end, {4, 2}},
  {"RepeatVector", function() return L.RepeatVector{3} end, {4}},
  {"Permute", function() return L.Permute{{2, 1}} end, {4, 2}},
  {"PReLU", function() return L.PReLU{} end, {4}},
  {"LeakyReLU", function() return L.LeakyReLU{} end, {4}},
  {"ELU", function() return L.ELU{} end, {4}},
  {"Softmax", function() return L.Softmax{} end, {4}},
  {"Softmax dtype float32", function() return L.Softmax{dtype = "float32"} end, {4}, nil, nil, "float32"},
  {"GaussianNoise", function() return L.GaussianNoise{0.1} end, {4}},
  {"GaussianDropout", function() return L.GaussianDropout{0.1} end, {4}},
  {"SpatialDropout1D", function() return L.SpatialDropout1D{0.2} end, {4, 2}},
  {"SpatialDropout2D", function() return L.SpatialDropout2D{0.2} end, {3, 3, 2}},
  {"ActivityRegularization", function() return L.ActivityRegularization{l2 = 0.01} end, {4}},
  {"Masking", function() return L.Masking{} end, {4, 2}},
  {"Embedding", function() return L.Embedding{10, 3} end, {4}, ids, tf.int32},
  {"Normalization", function() local n = L.Normalization{}; n:adapt(rnd({16, 4}, 5)); return n end, {4}},
  {"Rescaling", function() return L.Rescaling{1 / 255} end, {6, 6, 1}, images},
  {"CenterCrop", function() return L.CenterCrop{4, 4} end, {6, 6, 1}, images},
  {"Resizing", function() return L.Resizing{4, 4} end, {6, 6, 1}, images},
  {"RandomFlip", function() return L.RandomFlip{seed = 1} end, {6, 6, 1}, images},
  {"RandomRotation", function() return L.RandomRotation{0.1, seed = 1} end, {6, 6, 1}, images},
  {"RandomZoom", function() return L.RandomZoom{0.1, seed = 1} end, {6, 6, 1}, images},
  {"RandomTranslation", function() return L.RandomTranslation{0.1, 0.1, seed = 1} end, {6, 6, 1}, images},
  {"RandomContrast", function() return L.RandomContrast{0.2, seed = 1} end, {6, 6, 1}, images},
  {"Add", function() local a = L.Add{}; return a, function(x) return a{x, x * 2} end end, {4}},
  {"Concatenate", function() local a = L.Concatenate{}; return a, function(x) return a{x, x} end end, {4}},
  {"Dot", function() local a = L.Dot{axes = 2}; return a, function(x) return a{x, x} end end, {4}},
}
for _, m in ipairs({"Subtract", "Multiply", "Average", "Maximum", "Minimum"}) do
  cases[#cases + 1] = {m, function() local a = L[m]{}; return a, function(x) return a{x, x * 2} end end, {4}}
end
-- the lookup layers output integer ids whatever the policy
for _, c in ipairs({
  {"Hashing", function() return L.Hashing{num_bins = 4} end},
  {"StringLookup", function() return L.StringLookup{vocabulary = {"a", "b"}} end},
  {"TextVectorization", function() return L.TextVectorization{vocabulary = {"a", "b"}, output_sequence_length = 1} end},
}) do
  cases[#cases + 1] = {c[1], function()
    local layer = c[2]()
    local emb = L.Embedding{5, 2}     -- 1-based rows: ids from 0 are shifted by one
    return layer, function(x) return emb(layer(x) + 1) end
  end, {1}, function(shape) return tf.reshape(tf.constant({"a", "b", "c", "a", "b", "c", "a", "b"}), shape) end,
  tf.string}
end
cases[#cases + 1] = {"IntegerLookup", function()
  local layer, emb = L.IntegerLookup{vocabulary = {7, 8}}, L.Embedding{5, 2}
  return layer, function(x) return emb(layer(x) + 1) end
end, {1}, function(shape) return tf.reshape(tf.constant({7, 8, 9, 7, 8, 9, 7, 8}, tf.int64), shape) end, tf.int64}

-- the classes of tf.keras.layers left out above: older layers (covered by
-- spec/keras/mixed_precision_spec.lua), bases and aliases
local NOT_NEW = {Dense = true, Conv2D = true, BatchNormalization = true, Dropout = true, Flatten = true,
                 Reshape = true, Activation = true, ReLU = true, Lambda = true, MaxPooling2D = true,
                 AveragePooling2D = true, Layer = true, InputLayer = true, TFOpLambda = true,
                 SimpleRNNCell = true, LSTMCell = true, GRUCell = true, StackedRNNCells = true}

describe("mixed_float16 across the layer classes", function()
  before_each(function()
    tf.keras.backend.clear_session()
    tf.random.set_seed(23)
    mp.set_global_policy("mixed_float16")
  end)
  after_each(function() mp.set_global_policy("float32") end)

  it("covers every layer class but the older ones", function()
    local covered = {}
    for _, c in ipairs(cases) do covered[L[c[1]] or false] = true end
    local missing = {}
    for k, v in pairs(L) do
      if type(v) == "table" and type(v.extend) == "function" and not covered[v] and not NOT_NEW[v.__name or k]
        and not NOT_NEW[k] then
        missing[#missing + 1] = k
      end
    end
    table.sort(missing)
    assert.same({}, missing)
  end)

  for _, case in ipairs(cases) do
    local name, make, shape, maker, in_dtype, out_dtype = table.unpack(case, 1, 6)
    it(name .. ": float16 output, float32 variables, and a model of it trains", function()
      local layer, apply = make()
      apply = apply or function(x) return layer(x) end
      local full = {8}
      for _, d in ipairs(shape) do full[#full + 1] = d end
      local x = (maker or rnd)(full, 1)
      -- eagerly
      local y = apply(x)
      assert.equal(out_dtype or "float16", y.dtype.name)
      assert.is_true(#layer.weights == 0 or layer.compute_dtype.name == (out_dtype or "float16"))
      for _, w in ipairs(layer.weights) do   -- (Normalization's count is int64, as Keras's)
        if w.dtype.is_floating then assert.equal("float32", w.dtype.name, w.name) end
      end
      -- a model: the layer, flattened, then a float32 Dense head
      local inp = tf.keras.Input(shape, {dtype = in_dtype})
      local h = apply(inp)
      local out = L.Dense{1, dtype = "float32"}(L.Flatten{}(h))
      local model = tf.keras.Model{inputs = inp, outputs = out}
      assert.equal("float32", model(x).dtype.name)
      model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.02}, loss = "mse"}
      local target = tf.ones({8, 1}) * 2
      local hist = model:fit(x, target, {epochs = 6, verbose = 0, shuffle = false}).history.loss
      for _, v in ipairs(hist) do assert.is_true(v == v and v < math.huge, name .. " loss not finite") end
      assert.is_true(hist[#hist] < hist[1], ("%s: loss did not fall: %s"):format(name, table.concat(hist, ", ")))
    end)
  end
end)
