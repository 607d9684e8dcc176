-- tf.keras activation layers LeakyReLU, ELU, PReLU, Softmax (with masks):
-- values against plain-Lua formulas, gradients, configs, errors.
local tf = require("tf")
local L = tf.keras.layers

local XS = {-3, -1.5, -0.25, 0, 0.5, 2}

local function map(fn) local o = {}; for i, v in ipairs(XS) do o[i] = fn(v) end; return o end

describe("keras LeakyReLU", function()
  it("uses negative_slope (default 0.3; Keras 2's alpha accepted)", function()
    local x = tf.constant(XS, tf.float32)
    assert.tensor_near(map(function(v) return v < 0 and 0.3 * v or v end), L.LeakyReLU{}(x))
    assert.tensor_near(map(function(v) return v < 0 and 0.1 * v or v end), L.LeakyReLU{negative_slope = 0.1}(x))
    assert.tensor_near(map(function(v) return v < 0 and 0.2 * v or v end), L.LeakyReLU{alpha = 0.2}(x))
    local l = L.LeakyReLU{negative_slope = 0.05}
    assert.equal(0.05, l:get_config().negative_slope)
    assert.same(l:get_config(), L.LeakyReLU.from_config(l:get_config()):get_config())
    assert.tf_error("ValueError", "LeakyReLU: the value of `negative_slope` should be a non-negative number", function()
      L.LeakyReLU{negative_slope = -1}
    end)
  end)
end)

describe("keras ELU", function()
  it("is x above 0 and alpha (exp(x) - 1) below", function()
    local x = tf.constant(XS, tf.float64)
    local e = L.ELU{alpha = 0.5, dtype = "float64"}
    assert.tensor_near(map(function(v) return v > 0 and v or 0.5 * (math.exp(v) - 1) end), e(x), {atol = 1e-12})
    assert.tensor_near(map(function(v) return v > 0 and v or (math.exp(v) - 1) end), L.ELU{}(tf.constant(XS)),
      {atol = 1e-6})
    assert.equal(0.5, e:get_config().alpha)
    assert.same(e:get_config(), L.ELU.from_config(e:get_config()):get_config())
  end)
end)

describe("keras PReLU", function()
  it("learns one alpha per position, zeros at first (a ReLU)", function()
    local p = L.PReLU{}
    local x = tf.constant({{-2, 3}, {4, -5}}, tf.float32)
    assert.tensor_near({{0, 3}, {4, 0}}, p(x))
    assert.equal(1, #p.trainable_variables)
    assert.equal(p.name .. "/alpha:0", p.alpha.name)
    assert.shape({2}, p.alpha:value())
    p.alpha:assign(tf.constant({0.5, 0.25}))
    assert.tensor_near({{-1, 3}, {4, -1.25}}, p(x))
  end)

  it("shares alpha along shared_axes (1-based, after the batch)", function()
    local p = L.PReLU{shared_axes = {1, 2}, alpha_initializer = tf.keras.initializers.Constant{0.1}}
    local x = tf.random.normal({2, 3, 4, 5})
    local y = p(x)
    assert.shape({1, 1, 5}, p.alpha:value())
    local want = tf.where(tf.greater_equal(x, 0), x, x * 0.1)
    assert.tensor_near(want, y, {atol = 1e-6})
    assert.tf_error("ValueError", "shared axis 3 is out of range", function()
      L.PReLU{shared_axes = {3}}(tf.ones({2, 4, 4}))
    end)
    assert.tf_error("ValueError", "PReLU: 'shared_axes' holds 1-based axes after the batch, got 0", function()
      L.PReLU{shared_axes = {0}}
    end)
  end)

  it("has the gradient min(x, 0) for alpha and alpha / 1 for x", function()
    local p = L.PReLU{alpha_initializer = tf.keras.initializers.Constant{0.3}}
    local x = tf.Variable(tf.constant({{-2, 3, -0.5}}, tf.float32))
    local t = tf.GradientTape()
    local y = t:record(function() return tf.reduce_sum(p(x)) end)
    local g = t:gradient(y, {p.alpha, x})
    assert.tensor_near({-2, 0, -0.5}, g[1])
    assert.tensor_near({{0.3, 1, 0.3}}, g[2])
  end)

  it("get_config round-trips", function()
    local p = L.PReLU{shared_axes = {2}, alpha_initializer = "ones"}
    local c = p:get_config()
    assert.same({2}, c.shared_axes)
    local ai = c.alpha_initializer   -- a name, or Keras's {class_name =} with initializers.serialize
    assert.is_true(ai == "ones" or (type(ai) == "table" and ai.class_name == "Ones"))
    assert.same(c, L.PReLU.from_config(c):get_config())
  end)
end)

describe("keras Softmax", function()
  local function softmax(row, keep)
    local m, out, s = -math.huge, {}, 0
    for i, v in ipairs(row) do if not keep or keep[i] then m = math.max(m, v) end end
    for i, v in ipairs(row) do
      out[i] = (not keep or keep[i]) and math.exp(v - m) or 0
      s = s + out[i]
    end
    for i = 1, #out do out[i] = out[i] / s end
    return out
  end

  it("normalizes the last axis, or the axis given", function()
    local x = {{1, 2, 3}, {-1, 0, 4}}
    assert.tensor_near({softmax(x[1]), softmax(x[2])}, L.Softmax{}(tf.constant(x, tf.float32)))
    local col = L.Softmax{axis = 1}(tf.constant(x, tf.float32))
    local c1, c2, c3 = softmax({1, -1}), softmax({2, 0}), softmax({3, 4})
    assert.tensor_near({{c1[1], c2[1], c3[1]}, {c1[2], c2[2], c3[2]}}, col)
    -- several axes at once
    local all = L.Softmax{axis = {2, 3}}(tf.constant({{{1, 2}, {3, 4}}}, tf.float32))
    local s = softmax({1, 2, 3, 4})
    assert.tensor_near({{{s[1], s[2]}, {s[3], s[4]}}}, all)
  end)

  it("gives masked positions zero probability", function()
    local x = {{1, 2, 3}, {-1, 0, 4}}
    local keep = {{true, false, true}, {false, true, true}}
    local y = L.Softmax{}(tf.constant(x, tf.float32), {mask = tf.constant(keep)})
    assert.tensor_near({softmax(x[1], keep[1]), softmax(x[2], keep[2])}, y)
    assert.equal(0, y[{1, 2}]:item())
    assert.equal(0, y[{2, 1}]:item())
    local l = L.Softmax{axis = 1}
    assert.equal(1, l:get_config().axis)
    assert.same(l:get_config(), L.Softmax.from_config(l:get_config()):get_config())
  end)
end)
