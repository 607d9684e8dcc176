-- Losses and metrics against values computed by hand (plain Lua).
local S = require("keras.train_support")
local tf = S.tf
local L = tf.keras.losses
local M = tf.keras.metrics
local log, exp = math.log, math.exp

local function near(e, t, tol) assert.near(e, tf.is_tensor(t) and t:item() or t, tol or 1e-6) end

describe("tf.keras.losses", function()
  it("MeanSquaredError / MeanAbsoluteError: mean over the last axis, then over the batch", function()
    local yt, yp = {{1.0, 2.0}, {3.0, 4.0}}, {{1.5, 2.0}, {3.0, 2.0}}
    near(((0.25 + 0) / 2 + (0 + 4) / 2) / 2, L.MeanSquaredError{}(yt, yp))
    near(((0.5 + 0) / 2 + (0 + 2) / 2) / 2, L.MeanAbsoluteError{}(yt, yp))
    near(0.125 + 2, L.MeanSquaredError{reduction = "sum"}(yt, yp))
    assert.tensor_near({0.125, 2.0}, L.MeanSquaredError{reduction = "none"}(yt, yp))
    assert.tensor_near({0.125, 2.0}, L.mean_squared_error(yt, yp))
  end)

  it("sample weights scale per-sample losses; sum_over_batch_size divides by the count", function()
    local yt, yp = {{1.0}, {2.0}}, {{2.0}, {4.0}}
    near((1 * 1 + 4 * 0.5) / 2, L.MeanSquaredError{}(yt, yp, {1.0, 0.5}))
    near((1 * 1 + 4 * 0.5) / 2, L.MeanSquaredError{}(yt, yp, {{1.0}, {0.5}}))
    near(1 * 1 + 4 * 0.5, L.MeanSquaredError{reduction = "sum"}(yt, yp, tf.constant({1.0, 0.5})))
    near(0, L.MeanSquaredError{}(yt, yp, 0))
  end)

  it("SparseCategoricalCrossentropy: 1-based labels, logits or probabilities", function()
    local logits = {{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}}
    local lse = log(exp(1) + exp(2) + exp(3))
    near(((lse - 1) + (lse - 3)) / 2, L.SparseCategoricalCrossentropy{from_logits = true}({1, 3}, logits))
    near(((lse - 1) + (lse - 3)) / 2, L.SparseCategoricalCrossentropy{from_logits = true}({{1}, {3}}, logits))
    local probs = {{0.2, 0.3, 0.5}, {0.2, 0.3, 0.5}}
    near((-log(0.2) - log(0.5)) / 2, L.SparseCategoricalCrossentropy{}({1, 3}, probs))
    near((-log(0.2) - log(0.5)) / 2, L.SparseCategoricalCrossentropy{}(tf.constant({1, 3}, tf.uint8), probs))
    near((-log(0.2) - log(0.5)) / 2, L.SparseCategoricalCrossentropy{}(tf.constant({1.0, 3.0}), probs))
  end)

  it("SparseCategoricalCrossentropy: label 0 or past the last class is an InvalidArgumentError saying so", function()
    local l = L.SparseCategoricalCrossentropy{from_logits = true}
    local logits = {{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}}
    assert.tf_error("InvalidArgumentError", "labels are 1-based class indices, valid range 1..3", function()
      l({0, 3}, logits)
    end)
    assert.tf_error("InvalidArgumentError", "got 4 at labels[2]", function() l({1, 4}, logits) end)
  end)

  it("CategoricalCrossentropy, from probabilities (renormalised) and from logits", function()
    near(-log(0.5), L.CategoricalCrossentropy{}({{0, 0, 1.0}}, {{0.2, 0.3, 0.5}}))
    near(-log(0.5), L.CategoricalCrossentropy{}({{0, 0, 1.0}}, {{0.4, 0.6, 1.0}}))
    local lse = log(exp(1) + exp(2) + exp(3))
    near(0.5 * (lse - 2) + 0.5 * (lse - 3), L.CategoricalCrossentropy{from_logits = true}({{0, 0.5, 0.5}}, {{1.0, 2.0, 3.0}}))
  end)

  it("BinaryCrossentropy, from probabilities and from logits", function()
    near((-log(0.8) - log(0.7)) / 2, L.BinaryCrossentropy{}({{1.0}, {0.0}}, {{0.8}, {0.3}}))
    local function sp(x) return log(1 + exp(x)) end
    near((sp(-2) + sp(-1)) / 2, L.BinaryCrossentropy{from_logits = true}({{1.0}, {0.0}}, {{2.0}, {-1.0}}))
  end)

  it("Huber: quadratic within delta, linear outside", function()
    near((0.125 + (0.5 + 2.0)) / 2, L.Huber{}({{0.0, 0.0}}, {{0.5, 3.0}}))
    near((0.125 + 2 * (3 - 1)) / 2, L.Huber{delta = 2.0}({{0.0, 0.0}}, {{0.5, 3.0}}))
  end)

  it("works in tf.fn with an unknown batch dimension", function()
    local l = L.SparseCategoricalCrossentropy{from_logits = true}
    local f = tf.fn(function(y, p) return l(y, p) end,
      {input_signature = {tf.TensorSpec({tf.None}, tf.int64), tf.TensorSpec({tf.None, 3}, tf.float32)}})
    local lse = log(exp(1) + exp(2) + exp(3))
    near(lse - 2, f(tf.constant({2}, tf.int64), tf.constant({{1.0, 2.0, 3.0}})))
    near(((lse - 1) + (lse - 3)) / 2, f(tf.constant({1, 3}, tf.int64), tf.constant({{1.0, 2.0, 3.0}, {1.0, 2.0, 3.0}})))
  end)

  it("get: names and objects; bad names and options are errors", function()
    assert.equal("sparse_categorical_crossentropy", L.get("sparse_categorical_crossentropy").name)
    assert.equal("mean_squared_error", L.get("mse").name)
    assert.tf_error("ValueError", "Could not interpret loss identifier: 'msq'", function() L.get("msq") end)
    assert.tf_error("ValueError", "invalid reduction 'mean'", function() L.MeanSquaredError{reduction = "mean"} end)
    assert.tf_error("TypeError", "unknown option 'from_logit'", function() L.BinaryCrossentropy{from_logit = true} end)
  end)
end)

describe("tf.keras.metrics", function()
  it("Mean: the guide's example (0, 5 -> 2.5; then 8, 9 -> 5.5), reset_state", function()
    local m = M.Mean("loss")
    assert.equal("loss", m.name)
    m(0)
    m(5)
    near(2.5, m:result())
    near(5.5, m({8, 9}))
    m:reset_state()
    near(0, m:result())
    m:update_state({1, 2, 3}, {1, 0, 0})
    near(1, m:result())
  end)

  it("Sum", function()
    local s = M.Sum{}
    s({1, 2})
    near(3 + 2, s({1, 2}, {1, 0.5}))
  end)

  it("Accuracy, SparseCategoricalAccuracy (1-based labels), CategoricalAccuracy, BinaryAccuracy", function()
    near(2 / 3, M.Accuracy{}({1, 2, 3}, {1, 2, 4}))
    local p = {{0.9, 0.1, 0}, {0.9, 0.1, 0}, {0, 0, 1}}
    near(2 / 3, M.SparseCategoricalAccuracy{}({1, 2, 3}, p))
    near(2 / 3, M.SparseCategoricalAccuracy{}({{1}, {2}, {3}}, p))
    near(2 / 3, M.SparseCategoricalAccuracy{}(tf.constant({1, 2, 3}, tf.uint8), p))
    near(0.5, M.CategoricalAccuracy{}({{1, 0}, {0, 1}}, {{0.9, 0.1}, {0.9, 0.1}}))
    near(0.5, M.BinaryAccuracy{}({{1}, {0}}, {{0.7}, {0.6}}))
  end)

  it("Precision and Recall at threshold 0.5", function()
    -- predicted positive: 1, 2, 4; actual positive: 1, 3, 4 -> tp 2, fp 1, fn 1
    near(2 / 3, M.Precision{}({1, 0, 1, 1}, {0.9, 0.8, 0.2, 0.7}))
    near(2 / 3, M.Recall{}({1, 0, 1, 1}, {0.9, 0.8, 0.2, 0.7}))
    near(0, M.Precision{}({1}, {0.1}))
  end)

  it("update inside tf.fn accumulates into the same state", function()
    local m = M.Mean{}
    local f = tf.fn(function(x) m:update_state(x) end)
    f(tf.constant({2.0, 4.0}))
    f(tf.constant({6.0, 8.0}))
    near(5, m:result())
    local acc = M.SparseCategoricalAccuracy{}
    local g = tf.fn(function(y, p) acc:update_state(y, p) end, {reduce_retracing = true})
    g(tf.constant({1, 2}, tf.int64), tf.constant({{1.0, 0.0}, {1.0, 0.0}}))
    g(tf.constant({1, 2, 2}, tf.int64), tf.constant({{1.0, 0.0}, {0.0, 1.0}, {0.0, 1.0}}))
    near(4 / 5, acc:result())
  end)

  it("get: names; unknown names are a ValueError", function()
    assert.equal("Accuracy", M.get("accuracy")._class)
    assert.tf_error("ValueError", "Could not interpret metric identifier: 'acuracy'", function() M.get("acuracy") end)
  end)
end)

describe("SparseCategoricalAccuracy's labels", function()
  local probs = tf.constant({{0.9, 0.1}, {0.2, 0.8}, {0.6, 0.4}}, tf.float32)
  local MSG = "sparse_softmax_cross_entropy_with_logits: labels are 1-based class indices, valid range 1..2 " ..
    "(label k selects logits[k]), got 0 at labels[1]"

  it("raise the loss's own error for a 0-based label, eagerly", function()
    local loss = L.SparseCategoricalCrossentropy{}
    assert.tf_error("InvalidArgumentError", MSG, function() loss(tf.constant({0, 1, 0}), probs) end)
    local m = M.SparseCategoricalAccuracy{}
    assert.tf_error("InvalidArgumentError", MSG, function() m(tf.constant({0, 1, 0}), probs) end)
    assert.tf_error("InvalidArgumentError", "valid range 1..2 (label k selects logits[k]), got 3 at labels[2]",
      function() m(tf.constant({1, 3, 1}), probs) end)
    assert.equal(0, m.count:value():item())   -- nothing was counted
  end)

  it("count 1-based labels as before (argmax match)", function()
    local m = M.SparseCategoricalAccuracy{}
    near(2 / 3, m(tf.constant({1, 2, 2}), probs))
    near(3 / 5, m(tf.constant({{2}, {2}}), tf.constant({{0.1, 0.9}, {0.7, 0.3}})))
  end)

  it("raise in a traced update and in fit", function()
    local m = M.SparseCategoricalAccuracy{}
    local f = tf.fn(function(y, p) m:update_state(y, p) return m:result() end)
    near(1, f(tf.constant({1, 2, 1}), probs))
    assert.tf_error("InvalidArgumentError", MSG, f, tf.constant({0, 2, 1}), probs)
    local model = tf.keras.Sequential{tf.keras.layers.Dense{2}}
    model:compile{optimizer = "sgd", loss = tf.keras.losses.MeanSquaredError{}, metrics = {"sparse_categorical_accuracy"}}
    assert.tf_error("InvalidArgumentError", "labels are 1-based class indices, valid range 1..2", function()
      model:fit(tf.constant({{1, 2}, {3, 4}}, tf.float32), tf.constant({{0}, {1}}, tf.float32), {epochs = 1, verbose = 0})
    end)
  end)
end)
