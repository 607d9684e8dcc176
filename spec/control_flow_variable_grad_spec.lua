-- Variables read inside tf.while_loop bodies and tf.cond branches in a
-- graph (tf.fn) get their gradients, as in TensorFlow and as eagerly
-- (docs/control_flow.md "Gradients"): the handle is a captured input of
-- the control-flow op and the body's read passes the gradient to it.
require("helper")
local tf = require("tf")

describe("variables read in control flow inside tf.fn", function()
  it("the issue's loop: a * v three times from 1 gives 3 v^2 = 12 for v = 2, as eagerly", function()
    local v = tf.Variable(2.0)
    local loop = function(x, n)
      return tf.while_loop(function(i, a) return tf.less(i, n) end,
        function(i, a) return i + 1, a * v end, {tf.constant(0), x})[2]
    end
    local f = tf.fn(loop)
    local tape = tf.GradientTape()
    local y = tape:record(function() return f(tf.constant(1.0), tf.constant(3)) end)
    assert.equal(8.0, y:item())
    assert.equal(12.0, tape:gradient(y, v):item())
    local te = tf.GradientTape()
    local ye = te:record(function() return loop(tf.constant(1.0), tf.constant(3)) end)
    assert.equal(12.0, te:gradient(ye, v):item())
  end)

  it("two variables in one body, vector-valued, against the hand derivative", function()
    local v, w = tf.Variable({1.0, 2.0}), tf.Variable(3.0)
    local f = tf.fn(function(x, n)
      return tf.reduce_sum(tf.while_loop(function(i, a) return tf.less(i, n) end,
        function(i, a) return i + 1, a * v + w end, {tf.constant(0), x})[2])
    end)
    local tape = tf.GradientTape({persistent = true})
    local x = tf.constant({1.0, 1.0})
    local z = tape:record(function() return f(x, tf.constant(2)) end)
    -- a = x v^2 + w v + w: dz/dv = 2 x v + w, dz/dw = sum(v + 1)
    assert.equal(20.0, z:item())
    assert.tensor_near({5, 7}, tape:gradient(z, v))
    assert.equal(5.0, tape:gradient(z, w):item())
    -- a finite difference on w
    local h = 1e-2
    w:assign(3.0 + h)
    local up = f(x, tf.constant(2)):item()
    w:assign(3.0 - h)
    local down = f(x, tf.constant(2)):item()
    assert.near(5.0, (up - down) / (2 * h), 1e-2)
  end)

  it("a tf.cond branch reading a variable", function()
    local v = tf.Variable(2.0)
    local f = tf.fn(function(x)
      return tf.cond(tf.greater(x, 0), function() return x * v * v end, function() return x end)
    end)
    local tape = tf.GradientTape()
    local y = tape:record(function() return f(tf.constant(1.5)) end)
    assert.equal(6.0, y:item())
    assert.equal(6.0, tape:gradient(y, v):item())   -- 2 x v
    local t2 = tf.GradientTape()
    local y2 = t2:record(function() return f(tf.constant(-1.0)) end)
    local g2 = t2:gradient(y2, v)
    assert.is_true(g2 == nil or g2:item() == 0)
  end)
end)
