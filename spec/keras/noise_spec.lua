-- tf.keras noise layers: GaussianNoise, GaussianDropout, SpatialDropout1D/2D.
-- Identity outside training; in training, sample statistics against the
-- distributions' moments and the dropped channels' structure.
local tf = require("tf")
local L = tf.keras.layers

local function moments(t)
  local v = tf.reshape(t, {-1}):totable()
  local s, s2 = 0, 0
  for _, x in ipairs(v) do s = s + x; s2 = s2 + x * x end
  local m = s / #v
  return m, math.sqrt(s2 / #v - m * m)
end

describe("keras GaussianNoise", function()
  it("is the identity unless training", function()
    local x = tf.random.normal({3, 4})
    local l = L.GaussianNoise{0.5}
    assert.tensor_near(x, l(x))
    assert.tensor_near(x, l(x, {training = false}))
  end)

  it("adds N(0, stddev^2) noise in training, also for an unknown batch in tf.fn", function()
    local l = L.GaussianNoise{0.5}
    local z = tf.zeros({200, 100})
    local m, s = moments(l(z, {training = true}))
    assert.is_true(math.abs(m) < 0.02)
    assert.is_true(math.abs(s - 0.5) < 0.02)
    local f = tf.fn(function(x) return l(x, {training = true}) end,
                    {input_signature = {tf.TensorSpec({-1, 100}, tf.float32)}})
    local m2, s2 = moments(f(z))
    assert.is_true(math.abs(m2) < 0.02)
    assert.is_true(math.abs(s2 - 0.5) < 0.02)
    local y = f(tf.ones({200, 100}))
    local m3 = moments(y)
    assert.is_true(math.abs(m3 - 1) < 0.02)
  end)

  it("repeats with a seed and checks stddev; get_config round-trips", function()
    local x = tf.zeros({4, 4})
    tf.random.set_seed(3)
    local a = L.GaussianNoise{1.0, seed = 9}(x, {training = true})
    tf.random.set_seed(3)
    local b = L.GaussianNoise{1.0, seed = 9}(x, {training = true})
    assert.tensor_near(a, b, {atol = 0})
    assert.tf_error("ValueError", "GaussianNoise: 'stddev' must be a non-negative number, got -1", function()
      L.GaussianNoise{-1}
    end)
    local l = L.GaussianNoise{0.3, seed = 4}
    local c = l:get_config()
    assert.equal(0.3, c.stddev)
    assert.equal(4, c.seed)
    assert.same(c, L.GaussianNoise.from_config(c):get_config())
  end)
end)

describe("keras GaussianDropout", function()
  it("multiplies by N(1, rate / (1 - rate)) in training, identity otherwise", function()
    local l = L.GaussianDropout{0.2}
    local x = tf.fill({200, 100}, 2.0)
    assert.tensor_near(x, l(x))
    local m, s = moments(l(x, {training = true}))
    assert.is_true(math.abs(m - 2) < 0.03)
    assert.is_true(math.abs(s - 2 * math.sqrt(0.2 / 0.8)) < 0.03)
    assert.tf_error("ValueError", "GaussianDropout: 'rate' must be a number in [0, 1), got 1", function()
      L.GaussianDropout{1}
    end)
    local c = l:get_config()
    assert.equal(0.2, c.rate)
    assert.same(c, L.GaussianDropout.from_config(c):get_config())
  end)
end)

describe("keras SpatialDropout", function()
  it("1D drops whole channels, the same at every step, and scales the rest", function()
    local l = L.SpatialDropout1D{0.5}
    local x = tf.ones({50, 6, 20})
    assert.tensor_near(x, l(x))
    local y = l(x, {training = true})
    local first = y[{{}, 1}]            -- (50, 20)
    for t = 2, 6 do assert.tensor_near(first, y[{{}, t}]) end
    local v = tf.reshape(first, {-1}):totable()
    local zeros = 0
    for _, e in ipairs(v) do
      assert.is_true(e == 0 or math.abs(e - 2) < 1e-6)
      if e == 0 then zeros = zeros + 1 end
    end
    assert.is_true(math.abs(zeros / #v - 0.5) < 0.1)
    assert.tf_error("ValueError", "expected ndim=3, found ndim=2", function() l(tf.ones({2, 3}), {training = true}) end)
  end)

  it("2D drops feature maps (channels_last and channels_first)", function()
    local x = tf.ones({8, 3, 3, 16})
    local y = L.SpatialDropout2D{0.5}(x, {training = true})
    local s = tf.reduce_sum(y, {axis = {2, 3}}):totable()     -- (8, 16): 0 or 9 * 2
    for _, row in ipairs(s) do for _, e in ipairs(row) do assert.is_true(e == 0 or math.abs(e - 18) < 1e-4) end end
    local cf = L.SpatialDropout2D{0.5, data_format = "channels_first"}
    local y2 = cf(tf.ones({8, 16, 3, 3}), {training = true})
    local s2 = tf.reduce_sum(y2, {axis = {3, 4}}):totable()
    for _, row in ipairs(s2) do for _, e in ipairs(row) do assert.is_true(e == 0 or math.abs(e - 18) < 1e-4) end end
    local c = cf:get_config()
    assert.equal("channels_first", c.data_format)
    assert.equal(0.5, c.rate)
    assert.same(c, L.SpatialDropout2D.from_config(c):get_config())
    assert.tf_error("ValueError", "SpatialDropout2D: 'data_format' must be", function()
      L.SpatialDropout2D{0.5, data_format = "nchw"}
    end)
    assert.tf_error("ValueError", "SpatialDropout1D: 'rate' must be a number in [0, 1], got 2", function()
      L.SpatialDropout1D{2}
    end)
  end)
end)
