-- tf.onnx.save of Keras layers beyond Dense and Conv2D (each model's
-- traced ops go through the export table): Embedding, LayerNormalization,
-- MultiHeadAttention in a functional model, Conv1D and global pooling,
-- UpSampling2D, LeakyReLU/elu/selu/swish, SeparableConv2D with padding and
-- cropping. ONNX Runtime must give what luatf gives, at a new batch size.
local tf = require("tf")
local X = require("onnx.export_support")
local L = tf.keras.layers

local CASES = {
  {"Embedding, GlobalAveragePooling1D", function()
    return tf.keras.Sequential{L.Embedding{50, 8}, L.GlobalAveragePooling1D{}, L.Dense{2}}
  end, {tf.None, 7}, function() return tf.random.uniform({3, 7}, {maxval = 50, dtype = tf.int32}) + 1 end, tf.int32},
  {"LayerNormalization", function()
    return tf.keras.Sequential{L.LayerNormalization{}, L.Dense{3}}
  end, {tf.None, 6}},
  {"MultiHeadAttention (functional)", function()
    local inp = tf.keras.Input{shape = {5, 8}}
    local y = L.MultiHeadAttention{num_heads = 2, key_dim = 4}(inp, inp)
    return tf.keras.Model{inputs = inp, outputs = y}
  end, {tf.None, 5, 8}},
  {"Conv1D, GlobalMaxPooling1D", function()
    return tf.keras.Sequential{L.Conv1D{4, 3}, L.GlobalMaxPooling1D{}}
  end, {tf.None, 9, 3}},
  {"UpSampling2D", function()
    return tf.keras.Sequential{L.UpSampling2D{size = {2, 2}}, L.Conv2D{2, {3, 3}}}
  end, {tf.None, 4, 4, 3}},
  {"LeakyReLU, elu, selu, swish", function()
    return tf.keras.Sequential{L.Dense{4}, L.LeakyReLU{}, L.Dense{4, activation = "elu"},
      L.Dense{3, activation = "selu"}, L.Dense{3, activation = "swish"}}
  end, {tf.None, 5}},
  {"SeparableConv2D, ZeroPadding2D, Cropping2D", function()
    return tf.keras.Sequential{L.SeparableConv2D{4, {3, 3}}, L.ZeroPadding2D{1}, L.Cropping2D{1}}
  end, {tf.None, 6, 6, 2}},
}

describe("tf.onnx.save: Keras layers", function()
  teardown(function() X.cleanup() end)
  local skip = X.missing()
  for k, c in ipairs(CASES) do
    it(c[1], function()
      if skip then return pending(skip) end
      tf.random.set_seed(100 + k)
      local model = c[2]()
      local path = X.tmpfile("keras.onnx")
      tf.onnx.save(model, path, {input_signature = {tf.TensorSpec(c[3], c[5] or tf.float32)}})
      local ok, msg = X.check(path)
      assert.is_truthy(ok, msg)
      local shape = {3}
      for d = 2, #c[3] do shape[d] = c[3][d] end
      local x = c[4] and c[4]() or tf.random.normal(shape)
      X.assert_close(model(x), X.ort(path, {inputs = x}).output_1, 1e-4, 1e-5)
    end)
  end
end)
