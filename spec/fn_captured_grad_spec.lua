-- Gradients across a tf.fn call for what the function captured
-- (docs/fn.md "Gradients"): an eager tensor read by the function gets its
-- gradient on a tape that watches it, as in TensorFlow; tf.executing_eagerly
-- is false while tracing.
require("helper")
local tf = require("tf")

describe("tf.fn captures", function()
  it("an eager tensor captured by a tf.fn gets its gradient (x * k -> x)", function()
    local k = tf.constant(2.0)
    local f = tf.fn(function(x) return x * k end)
    local x = tf.constant(3.0)
    local tape = tf.GradientTape()
    local y = tape:record(function() tape:watch(k); return f(x) end)
    assert.equal(6.0, y:item())
    assert.equal(3.0, tape:gradient(y, k):item())
    -- unwatched: no gradient, and the input's still flows
    local t2 = tf.GradientTape()
    local y2 = t2:record(function() t2:watch(x); return f(x) end)
    assert.equal(2.0, t2:gradient(y2, x):item())
  end)

  it("both the watched input and the captured tensor, with a vector capture", function()
    local w = tf.constant({1.0, 2.0, 3.0})
    local f = tf.fn(function(x) return tf.reduce_sum(x * w * w) end)
    local x = tf.constant({4.0, 5.0, 6.0})
    local tape = tf.GradientTape({persistent = true})
    local y = tape:record(function() tape:watch({x, w}); return f(x) end)
    assert.tensor_near({1, 4, 9}, tape:gradient(y, x))
    assert.tensor_near({8, 20, 36}, tape:gradient(y, w))   -- 2 x w
  end)

  it("tf.executing_eagerly: true eagerly, false while tracing, true in init_scope", function()
    assert.is_true(tf.executing_eagerly())
    local inside, scoped
    local f = tf.fn(function(x)
      inside = tf.executing_eagerly()
      tf.init_scope(function() scoped = tf.executing_eagerly() end)
      return x
    end)
    f(tf.constant(1.0))
    assert.is_false(inside)
    assert.is_true(scoped)
    assert.is_true(tf.executing_eagerly())
  end)
end)

describe("tf.core.internal.set_fn_call_hook", function()
  it("takes a function or nil; anything else is a TypeError, not a failure of the next tf.fn call", function()
    local tf = require("tf")
    assert.has_error(function() tf.core.internal.set_fn_call_hook(tf.constant(1)) end)
    local ok, err = pcall(tf.core.internal.set_fn_call_hook, tf.constant(1))
    assert.is_false(ok)
    assert.equal("TypeError", err.kind)
    assert.equal("set_fn_call_hook: expected a function or nil, got a tf.Tensor", err.message)
    local f = tf.fn(function(x) return x + 1 end)
    assert.equal(3, f(tf.constant(2)):item())   -- the rejected hook was not installed
    local seen = 0
    tf.core.internal.set_fn_call_hook(function() seen = seen + 1 end)
    f(tf.constant(2))
    tf.core.internal.set_fn_call_hook(nil)
    f(tf.constant(2))
    assert.equal(1, seen)
  end)
end)
