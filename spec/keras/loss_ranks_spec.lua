-- Labels of rank one less than the predictions (y [batch] against
-- predictions [batch, 1], a Dense(1) output) compare per sample, as Keras's
-- squeeze_or_expand_to_same_rank does; they used to broadcast to
-- [batch, batch] and give a silently wrong loss.
local tf = require("tf")
local L = tf.keras.losses
local M = tf.keras.metrics

describe("losses and metrics with labels of one rank less", function()
  local y = {1.0, 0.0, 1.0}
  local p = {{0.9}, {0.2}, {0.6}}
  local function per_sample_mean(f)
    local s = 0
    for i = 1, 3 do s = s + f(y[i], p[i][1]) end
    return s / 3
  end

  it("MeanSquaredError, MeanAbsoluteError and BinaryCrossentropy match the same-rank result", function()
    local mse = per_sample_mean(function(a, b) return (a - b) ^ 2 end)          -- 0.07
    local mae = per_sample_mean(function(a, b) return math.abs(a - b) end)
    local bce = per_sample_mean(function(a, b) return -(a * math.log(b) + (1 - a) * math.log(1 - b)) end)
    assert.near(mse, L.MeanSquaredError{}(tf.constant(y), tf.constant(p)):item(), 1e-6)
    assert.near(mse, L.MeanSquaredError{}(tf.constant(p), tf.constant(y)):item(), 1e-6)
    assert.near(mae, L.MeanAbsoluteError{}(tf.constant(y), tf.constant(p)):item(), 1e-6)
    assert.near(bce, L.BinaryCrossentropy{}(tf.constant(y), tf.constant(p)):item(), 1e-5)
  end)

  it("a [batch, 2] label against a [batch, 2, 1] prediction loses the trailing axis", function()
    local yt = tf.constant({{1.0, 2.0}, {3.0, 4.0}})
    local yp = tf.constant({{{1.5}, {2.0}}, {{3.0}, {5.0}}})
    -- per sample: mean((0.25, 0), (0, 1)) = 0.125, 0.5; mean 0.3125
    assert.near(0.3125, L.MeanSquaredError{}(yt, yp):item(), 1e-6)
  end)

  it("BinaryAccuracy and Accuracy count per sample", function()
    local b = M.BinaryAccuracy{}
    b(tf.constant(y), tf.constant({{0.9}, {0.2}, {0.4}}))
    assert.near(2 / 3, b:result():item(), 1e-6)
    local a = M.Accuracy{}
    a(tf.constant({1, 2, 3}), tf.constant({{1}, {2}, {4}}))
    assert.near(2 / 3, a:result():item(), 1e-6)
  end)

  it("fit of a Dense(1) model on [batch] labels reaches the least-squares fit", function()
    tf.random.set_seed(3)
    local x = tf.constant({{0.0}, {1.0}, {2.0}, {3.0}})
    local yv = tf.constant({1.0, 3.0, 5.0, 7.0})              -- y = 2x + 1, labels of rank 1
    local model = tf.keras.Sequential{tf.keras.layers.Dense{1, input_shape = {1}}}
    model:compile{optimizer = tf.keras.optimizers.SGD{learning_rate = 0.05}, loss = "mse"}
    model:fit(x, yv, {epochs = 400, batch_size = 4, verbose = 0})
    local w = model.layers[1].kernel:value():item()
    local bias = model.layers[1].bias:value():item()
    assert.near(2, w, 0.05)
    assert.near(1, bias, 0.1)
  end)
end)
