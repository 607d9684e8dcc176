-- tf.keras.layers.TimeDistributed: a layer applied at every timestep.
local tf = require("tf")
local L = tf.keras.layers
local K = tf.core.internal.keras

local function const(v) return function(_, dtype) return tf.constant(v, dtype) end end

describe("keras TimeDistributed", function()
  it("applies the inner layer to each timestep with one set of weights", function()
    local d = L.Dense{2, kernel_initializer = const({{1, 2}, {3, 4}, {5, 6}}), bias_initializer = const({1, -1})}
    local td = L.TimeDistributed{d}
    local x = tf.constant({{{1, 0, 0}, {0, 1, 0}}, {{0, 0, 1}, {1, 1, 1}}}, tf.float32)
    local y = td(x)
    assert.tensor_near({{{2, 1}, {4, 3}}, {{6, 5}, {10, 11}}}, y)
    assert.equal(2, #td.trainable_variables)
    assert.equal(td.name .. "/" .. d.name .. "/kernel:0", td.trainable_variables[1].name)
    assert.shape({4, 7, 2}, td(tf.ones({4, 7, 3})))
  end)

  it("works on rank-4 inputs (a Conv-free Flatten per step)", function()
    local td = L.TimeDistributed{L.Flatten{}}
    local y = td(tf.reshape(tf.range(0, 24, 1, tf.float32), {2, 3, 2, 2}))
    assert.shape({2, 3, 4}, y)
    assert.tensor_near({20, 21, 22, 23}, y[{2, 3}])
  end)

  it("passes the timestep mask through", function()
    local x = tf.ones({2, 3, 4})
    local m = tf.constant({{true, false, true}, {true, true, false}})
    K.set_mask(x, m)
    local y = L.TimeDistributed{L.Dense{2}}(x)
    assert.tensor_near(m, K.get_mask(y))
  end)

  it("follows a SimpleRNN with return_sequences in a model, also with an unknown batch in tf.fn", function()
    local model = tf.keras.Sequential{L.SimpleRNN{3, return_sequences = true, input_shape = {5, 2}},
                                      L.TimeDistributed{L.Dense{1}}}
    local x = tf.random.normal({4, 5, 2})
    local y = model(x)
    assert.shape({4, 5, 1}, y)
    local f = tf.fn(function(v) return model(v) end, {input_signature = {tf.TensorSpec({-1, 5, 2}, tf.float32)}})
    assert.tensor_near(y, f(x), {atol = 1e-6})
  end)

  it("checks its input and round-trips its config", function()
    local td = L.TimeDistributed{L.Dense{2}}
    assert.tf_error("ValueError", "should be passed an `input_shape` with at least 3 dimensions", function()
      td(tf.ones({2, 3}))
    end)
    assert.tf_error("ValueError", "with a `tf.keras.layers.Layer` instance", function() L.TimeDistributed{3} end)
    local t2 = L.TimeDistributed{L.RepeatVector{4}}
    local c = t2:get_config()
    assert.equal("RepeatVector", c.layer.class_name)
    assert.equal(4, c.layer.config.n)
    local m = L.TimeDistributed.from_config(c)
    assert.equal("RepeatVector", m.layer._class_name)
    assert.shape({1, 2, 4, 3}, m(tf.ones({1, 2, 3})))
    assert.same(c, m:get_config())
  end)
end)
