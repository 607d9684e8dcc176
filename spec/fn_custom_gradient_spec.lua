-- tf.custom_gradient inside tf.fn (docs/autodiff.md "Custom gradients"):
-- the gradient function is traced into the graph as one custom_gradient
-- node, so a tape around the call, a tape inside the function, gradients of
-- gradients and a SavedModel loaded later all use it. Expected values are
-- worked out by hand from each gradient function.
require("helper")
local tf = require("tf")
local support = require("support")

-- TensorFlow's own example: log(1 + e^x) has gradient e^x / (1 + e^x),
-- which is inf / inf = nan at x = 100 when differentiated op by op.
local log1pexp = tf.custom_gradient(function(x)
  local e = tf.exp(x)
  return tf.math.log(1 + e), function(dy) return dy * (1 - 1 / (1 + e)) end
end)

local function grad_of(f, x)
  local tape = tf.GradientTape()
  tape:watch(x)
  local y = tape:record(function() return f(x) end)
  return tape:gradient(y, x), y
end

describe("tf.custom_gradient in tf.fn", function()
  it("a tape around the call uses the gradient function (the stable log1pexp at 100 is 1, not nan)", function()
    local naive = tf.fn(function(x) return tf.math.log(1 + tf.exp(x)) end)
    local stable = tf.fn(function(x) return log1pexp(x) end)
    local x = tf.constant(100.0)
    assert.is_true(grad_of(naive, x):item() ~= grad_of(naive, x):item())   -- nan
    assert.equal(1.0, grad_of(stable, x):item())
    -- at 0: 1/2, the analytic value; a vector
    assert.tensor_near({0.5, 1 / (1 + math.exp(-2))}, grad_of(stable, tf.constant({0.0, 2.0})), {atol = 1e-6})
  end)

  it("a gradient unlike the forward ops' is the one taken, outside and inside the function", function()
    local f = tf.custom_gradient(function(x) return tf.square(x), function(dy) return dy * 100 end end)
    local g = tf.fn(function(x) return f(x) * 2 end)
    assert.equal(200.0, grad_of(g, tf.constant(3.0)):item())
    local inner = tf.fn(function(x)
      local tape = tf.GradientTape()
      tape:watch(x)
      local y = tape:record(function() return f(x) * 2 end)
      return tape:gradient(y, x)
    end)
    assert.equal(200.0, inner(tf.constant(3.0)):item())
    local nodes = {}
    for _, n in ipairs(g:get_concrete_function(tf.constant(3.0)).graph:nodes()) do nodes[n.op] = true end
    assert.is_true(nodes.custom_gradient)
  end)

  it("several outputs, a nil gradient, and the variables the function read", function()
    local v = tf.Variable(2.0)
    local f = tf.custom_gradient(function(x, n)
      return {x * v * n, x + n}, function(dy1, dy2, opts)
        assert.equal(1, #opts.variables)
        return {dy1 * 10 + dy2, nil}, {dy1 * 1000}
      end
    end)
    local g = tf.fn(function(x, n) local r = f(x, n); return r[1] + 3 * r[2] end)
    local x, n = tf.constant(3.0), tf.constant(1.0)
    local tape = tf.GradientTape({persistent = true})
    tape:watch({x, n})
    local y = tape:record(function() return g(x, n) end)
    assert.equal(6 + 3 * 4, y:item())
    assert.equal(10 + 3, tape:gradient(y, x):item())   -- dy1 = 1, dy2 = 3
    assert.is_nil(tape:gradient(y, n))                 -- the gradient function gave none
    assert.equal(1000.0, tape:gradient(y, v):item())
  end)

  it("gradients of gradients differentiate the traced gradient function", function()
    local cube = tf.custom_gradient(function(x) return x * x * x, function(dy) return dy * 3 * x * x end end)
    local h = tf.fn(function(x) return cube(x) end)
    local x = tf.constant(3.0)
    local outer = tf.GradientTape()
    outer:watch(x)
    local d1 = outer:record(function()
      local t = tf.GradientTape()
      t:watch(x)
      local z = t:record(function() return h(x) end)
      return t:gradient(z, x)
    end)
    assert.equal(27.0, d1:item())
    assert.equal(18.0, outer:gradient(d1, x):item())   -- d(3x^2)/dx = 6x
  end)

  it("a function with effects (replayed op by op on the tape) uses it too", function()
    local calls = tf.Variable(0)
    local f = tf.custom_gradient(function(x) return tf.identity(x), function(dy) return dy * -1 end end)
    local g = tf.fn(function(x)
      calls:assign_add(1)
      return f(x) * 5
    end)
    assert.equal(-5.0, grad_of(g, tf.constant(2.0)):item())
    assert.equal(1, calls:numpy())
  end)

  it("a training step in tf.fn clips the gradient as the function says", function()
    local clip = tf.custom_gradient(function(x)
      return tf.identity(x), function(dy) return tf.clip_by_value(dy, -0.5, 0.5) end
    end)
    local w = tf.Variable(tf.constant({1.0, -2.0}))
    local opt = tf.keras.optimizers.SGD({learning_rate = 0.1})
    local step = tf.fn(function(x)
      local tape = tf.GradientTape()
      local loss = tape:record(function() return tf.reduce_sum(clip(w * x) * 4) end)
      opt:apply_gradients({{tape:gradient(loss, w), w}})
      return loss
    end)
    step(tf.constant({1.0, 1.0}))
    -- d loss / d (w x) = 4, clipped to 0.5, times x = 1: w - 0.1 * 0.5
    assert.tensor_near({0.95, -2.05}, w:value(), {atol = 1e-6})
  end)

  it("errors: a gradient of the wrong dtype, and a failing gradient function when traced", function()
    local bad = tf.custom_gradient(function(x) return x * 2, function(dy) return tf.cast(dy, tf.float64) end end)
    assert.tf_error("TypeError", "custom_gradient: the gradient for argument 1 is float64, the argument is float32",
      tf.fn(function(x) return bad(x) end), tf.constant(1.0))
    local broken = tf.custom_gradient(function(x) return x * 2, function(dy) error("no gradient here") end end)
    local ok, err = pcall(tf.fn(function(x) return broken(x) end), tf.constant(1.0))
    assert.is_false(ok)
    assert.matches("no gradient here", tostring(err), 1, true)
    -- eagerly the gradient function runs only when a gradient is taken
    assert.equal(2.0, broken(tf.constant(1.0)):item())
  end)
end)

describe("tf.custom_gradient in a SavedModel", function()
  local dir
  before_each(function() dir = support.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. support.shell_quote(dir)) end)

  it("a loaded function's gradient is the saved gradient function, and fine-tuning uses it", function()
    local clip = tf.custom_gradient(function(x)
      return tf.identity(x), function(dy) return tf.clip_by_value(dy, -0.5, 0.5) end
    end)
    local m = {w = tf.Variable(tf.constant({1.0, -2.0, 3.0}))}
    m.f = tf.fn(function(x) return tf.reduce_sum(clip(x * m.w) * 4) end,
      {input_signature = {tf.TensorSpec({3}, tf.float32)}})
    tf.saved_model.save(m, dir)
    local l = tf.saved_model.load(dir)
    local x = tf.constant({1.0, 2.0, -1.0})
    local tape = tf.GradientTape()
    local y = tape:record(function() return l.f(x) end)
    assert.equal(4 * (1 - 4 - 3), y:item())
    -- dy = 4 clipped to 0.5, times x
    assert.tensor_near({0.5, 1.0, -0.5}, tape:gradient(y, l.variables[1]), {atol = 1e-6})
    -- and log1pexp's stable gradient survives too
    local s = {f = tf.fn(function(x) return log1pexp(x) end, {input_signature = {tf.TensorSpec({}, tf.float32)}})}
    local dir2 = dir .. "/second"
    tf.saved_model.save(s, dir2)
    local l2 = tf.saved_model.load(dir2)
    assert.equal(1.0, grad_of(function(v) return l2.f(v) end, tf.constant(100.0)):item())
  end)
end)
