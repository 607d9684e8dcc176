-- get_config / from_config for every built-in layer: from_config(get_config())
-- gives a layer whose config is equal and which, given the same weights,
-- computes the same output.
local tf = require("tf")
local L = tf.keras.layers
local R, C, I = tf.keras.regularizers, tf.keras.constraints, tf.keras.initializers

local function img() return tf.reshape(tf.range(0, 2 * 4 * 4 * 3, 1, tf.float32) / 10, {2, 4, 4, 3}) end
local function mat() return tf.constant({{0.5, -1.0, 2.0, 0.25}, {1.5, 0.0, -0.5, 3.0}}) end

local CASES = {
  {"Dense", function() return L.Dense{3, activation = "relu", use_bias = true, kernel_initializer = "he_normal",
    bias_initializer = I.Constant{0.1}, kernel_regularizer = R.L1L2{l1 = 0.01, l2 = 0.02},
    bias_regularizer = "l2", activity_regularizer = R.L1{0.5}, kernel_constraint = C.MaxNorm{2},
    bias_constraint = "non_neg"} end, mat},
  {"Dense (custom activation)", function()
    return L.Dense{2, activation = function(x) return x * 2 end} end, mat},
  {"Conv2D", function() return L.Conv2D{4, {2, 3}, strides = {1, 2}, padding = "same", activation = "tanh",
    kernel_regularizer = "l2", kernel_constraint = C.UnitNorm{axis = {1, 2, 3}}} end, img},
  {"MaxPooling2D", function() return L.MaxPooling2D{{2, 2}, strides = 1, padding = "valid"} end, img},
  {"AveragePooling2D", function() return L.AveragePooling2D{2, padding = "same"} end, img},
  {"GlobalAveragePooling2D", function() return L.GlobalAveragePooling2D{keepdims = true} end, img},
  {"GlobalMaxPooling2D", function() return L.GlobalMaxPooling2D() end, img},
  {"Flatten", function() return L.Flatten() end, img},
  {"Reshape", function() return L.Reshape{{-1, 12}} end, img},
  {"Dropout", function() return L.Dropout{0.3, seed = 5, noise_shape = {2, 1}} end, mat},
  {"BatchNormalization", function() return L.BatchNormalization{axis = -1, momentum = 0.9, epsilon = 0.01,
    center = true, scale = true, gamma_initializer = "random_normal", beta_regularizer = "l1",
    gamma_constraint = "non_neg"} end, mat},
  {"LayerNormalization", function() return L.LayerNormalization{axis = {2}, epsilon = 1e-5, center = false,
    gamma_regularizer = R.L2{0.5}} end, mat},
  {"Embedding", function() return L.Embedding{10, 3, embeddings_initializer = I.RandomUniform{minval = -1,
    maxval = 1}, embeddings_regularizer = "l2", embeddings_constraint = C.MaxNorm{1, axis = 2},
    input_length = 2} end, function() return tf.constant({{1, 2}, {10, 3}}) end},
  {"Activation", function() return L.Activation("gelu") end, mat},
  {"ReLU", function() return L.ReLU{max_value = 1.5, negative_slope = 0.1, threshold = 0.2} end, mat},
  {"LeakyReLU", function() return L.LeakyReLU{alpha = 0.2} end, mat},
  {"Softmax", function() return L.Softmax{axis = 1} end, mat},
  {"Lambda", function() return L.Lambda(function(x) return x * x end) end, mat},
  {"ActivityRegularization", function() return L.ActivityRegularization{l1 = 0.1, l2 = 0.2} end, mat},
}

local function deep_copy(t)
  if type(t) ~= "table" then return t end
  local o = {}
  for k, v in pairs(t) do o[k] = deep_copy(v) end
  return o
end

describe("layer configs", function()
  for _, case in ipairs(CASES) do
    local label, make, input = case[1], case[2], case[3]
    it(label .. ": from_config(get_config()) round-trips, with the same output", function()
      local a = make()
      local x = input()
      local ya = a(x)
      local config = a:get_config()
      -- the config is plain data (tables, strings, numbers, booleans; functions only for custom functions)
      local cls = L[a._class_name]
      assert.equal(cls, getmetatable(a))
      local b = cls.from_config(deep_copy(config))
      assert.same(config, b:get_config())
      local yb = b(x)
      b:set_weights(a:get_weights())
      yb = b(x)
      assert.tensor_near(ya, yb, {atol = 1e-6})
      assert.equal(#a.losses, #b.losses)
      for i, l in ipairs(a.losses) do assert.near(l:item(), b.losses[i]:item(), 1e-6) end
    end)
  end

  it("serializes initializers, activations and regularizers by name", function()
    local c = L.Dense{2, activation = "softmax", kernel_initializer = "glorot_normal",
                      kernel_regularizer = "l1"}:get_config()
    assert.equal("softmax", c.activation)
    assert.same({class_name = "GlorotNormal", config = {}}, c.kernel_initializer)
    assert.same({class_name = "Zeros", config = {}}, c.bias_initializer)
    assert.same({class_name = "L1", config = {l1 = 0.01}}, c.kernel_regularizer)
    assert.is_nil(c.kernel_constraint)
    assert.same({class_name = "RandomNormal", config = {mean = 1, stddev = 2}},
      I.serialize(I.RandomNormal{mean = 1, stddev = 2}))
    assert.same({class_name = "Constant", config = {value = 3}}, I.serialize(I.Constant{3}))
    assert.equal(3, I.deserialize(I.serialize(I.Constant{3}))({1}):item())
    assert.equal("HeUniform", I.deserialize("he_uniform")._class)
    assert.equal(tf.keras.activations.relu, tf.keras.activations.deserialize("relu"))
    assert.tf_error("ValueError", "Unknown initializer: 'Nope'", function()
      I.deserialize({class_name = "Nope", config = {}})
    end)
    assert.tf_error("ValueError", "Unknown activation function: 'deserialize'", function()
      tf.keras.activations.get("deserialize")
    end)
  end)

  it("Lambda's config holds the function itself (not serializable to a file)", function()
    local f = function(x) return x + 1 end
    local c = L.Lambda(f):get_config()
    assert.equal(f, c["function"])
  end)
end)
