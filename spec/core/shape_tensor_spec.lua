-- Shapes known only at run time (docs/tensors.md "Shapes as tensors"):
-- tf.reshape, tf.broadcast_to, tf.zeros/ones/fill, tf.random.uniform/normal,
-- tf.tile, tf.slice and tf.range take int32/int64 tensors (and Lua lists
-- mixing numbers and scalar tensors) inside tf.fn, read when the graph runs.
require("helper")
local tf = require("tf")

local SIG = {input_signature = {tf.TensorSpec({-1, 4}, tf.float32)}}
local x24 = tf.reshape(tf.range(8.0), {2, 4})

describe("shape tensors", function()
  it("reshape with {tf.shape(x)[1], -1, 2} inside tf.fn: static shape and run-time values", function()
    local seen
    local f = tf.fn(function(x)
      local y = tf.reshape(x, {tf.shape(x)[1], 2, 2})
      seen = y.shape:as_list()
      return tf.reshape(x, {tf.shape(x)[1], -1, 2})
    end, SIG)
    local y = f(x24)
    assert.same({-1, 2, 2}, seen)   -- the constant entries stay known
    assert.same({2, 2, 2}, y.shape:as_list())
    assert.tensor_near({{{0, 1}, {2, 3}}, {{4, 5}, {6, 7}}}, y)
    local z = f(tf.reshape(tf.range(12.0), {3, 4}))
    assert.same({3, 2, 2}, z.shape:as_list())
  end)

  it("reshape with a shape tensor: the static shape from tf.shape of known dims", function()
    local seen
    local f = tf.fn(function(x)
      local y = tf.reshape(x, tf.stack({tf.shape(x)[2], tf.shape(x)[1]}))
      seen = y.shape:as_list()
      return y
    end, SIG)
    assert.same({4, 2}, f(x24).shape:as_list())
    assert.same({4, -1}, seen)
  end)

  it("reshape eagerly with a tensor shape is the same as with a list", function()
    assert.tensor_near({{0, 1}, {2, 3}, {4, 5}, {6, 7}}, tf.reshape(x24, tf.constant({4, 2})))
    assert.tensor_near({{0, 1, 2, 3, 4, 5, 6, 7}}, tf.reshape(x24, {tf.constant(1), -1}))
    assert.tensor_near({{0, 1}, {2, 3}, {4, 5}, {6, 7}}, tf.reshape(x24, tf.constant({4, 2}, {dtype = tf.int64})))
  end)

  it("reshape errors name the op, the argument and both shapes", function()
    assert.tf_error("InvalidArgumentError", "reshape: only one dimension of 'shape' can be -1",
      tf.reshape, x24, tf.constant({-1, -1}))
    assert.tf_error("InvalidArgumentError", "negative dimension -3", tf.reshape, x24, tf.constant({-3, 2}))
    assert.tf_error("TypeError", "reshape: 'shape' must be an int32 or int64 tensor, got float32",
      tf.reshape, x24, tf.constant({4.0, 2.0}))
    -- element count mismatch found only when the graph runs
    local f = tf.fn(function(x) return tf.reshape(x, {tf.shape(x)[1], 3}) end, SIG)
    assert.tf_error("InvalidArgumentError",
      "reshape: cannot reshape a tensor of shape (2, 4) (8 elements) into shape (2, 3) (6 elements)", f, x24)
    local g = tf.fn(function(x) return tf.reshape(x, {tf.shape(x)[1], -1, 3}) end, SIG)
    assert.tf_error("InvalidArgumentError", "the elements do not divide evenly", g, x24)
    assert.tf_error("TypeError", "reshape: 'shape' entry 1 is a float32 tensor",
      tf.reshape, x24, {tf.constant(1.0), -1})
  end)

  it("reshape's gradient reshapes back to the input's run-time shape", function()
    local f = tf.fn(function(x)
      local y = tf.reshape(x, {-1, tf.shape(x)[1]})
      return tf.reduce_sum(y * y)
    end, SIG)
    local x = tf.Variable(x24)
    local tape = tf.GradientTape()
    local y = tape:record(function() return f(x:value()) end)
    local g = tape:gradient(y, x)
    assert.tensor_near({{0, 2, 4, 6}, {8, 10, 12, 14}}, g)
  end)

  it("zeros, ones, fill and broadcast_to take tf.shape(x) inside tf.fn", function()
    local shapes = {}
    local f = tf.fn(function(x)
      local s = tf.shape(x)
      local z, o = tf.zeros(s), tf.ones({s[1], 3})
      local v = tf.fill({s[1], 2}, 7.0)
      local b = tf.broadcast_to(tf.constant({1.0, 2.0}), tf.stack({s[1], tf.constant(2)}))
      shapes = {z.shape:as_list(), o.shape:as_list(), v.shape:as_list(), b.shape:as_list()}
      return z, o, v, b
    end, SIG)
    local z, o, v, b = f(tf.ones({3, 4}))
    assert.same({{-1, 4}, {-1, 3}, {-1, 2}, {-1, 2}}, shapes)
    assert.tensor_near({{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}, z)
    assert.tensor_near({{1, 1, 1}, {1, 1, 1}, {1, 1, 1}}, o)
    assert.tensor_near({{7, 7}, {7, 7}, {7, 7}}, v)
    assert.tensor_near({{1, 2}, {1, 2}, {1, 2}}, b)
    assert.tensor_near({{0, 0}}, tf.zeros(tf.constant({1, 2})))
  end)

  it("broadcast_to with a shape tensor: gradient sums over the broadcast axis", function()
    local f = tf.fn(function(x, n)
      return tf.reduce_sum(tf.broadcast_to(x, tf.stack({n, tf.constant(2)})) * tf.constant({1.0, 10.0}))
    end)
    local x = tf.Variable({1.0, 2.0})
    local tape = tf.GradientTape()
    local y = tape:record(function() return f(x:value(), tf.constant(3)) end)
    assert.near(3 * (1 + 20), y:item(), 1e-5)
    assert.tensor_near({3, 30}, tape:gradient(y, x))
  end)

  it("random.uniform/normal take a shape tensor; bad shapes fail when the graph runs", function()
    local seen
    local f = tf.fn(function(x)
      local u = tf.random.uniform(tf.shape(x), {minval = 2, maxval = 3})
      local n = tf.random.normal({tf.shape(x)[1], 5})
      seen = {u.shape:as_list(), n.shape:as_list()}
      return u, n
    end, SIG)
    local u, n = f(tf.ones({3, 4}))
    assert.same({{-1, 4}, {-1, 5}}, seen)
    assert.same({3, 4}, u.shape:as_list())
    assert.same({3, 5}, n.shape:as_list())
    for _, v in ipairs(tf.reshape(u, {-1}):totable()) do assert.is_true(v >= 2 and v < 3) end
    local g = tf.fn(function(n) return tf.random.uniform(tf.stack({n, tf.constant(2)})) end)
    assert.tf_error("InvalidArgumentError", "random_uniform: 'shape' must not have negative dimensions",
      g, tf.constant(-2))
  end)

  it("tile and slice with tensor multiples, begin and size", function()
    local f = tf.fn(function(x)
      local s = tf.shape(x)
      return tf.tile(x, tf.stack({s[1], tf.constant(1)})),
             tf.slice(x, tf.constant({1, 2}), tf.stack({s[1], tf.constant(-1)}))
    end, SIG)
    local t, sl = f(x24)
    assert.tensor_near({{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 2, 3}, {4, 5, 6, 7}}, t)
    assert.tensor_near({{1, 2, 3}, {5, 6, 7}}, sl)
    -- gradient of tile: each element counted once per copy
    local g = tf.fn(function(x, m) return tf.reduce_sum(tf.tile(x, tf.stack({m, tf.constant(1)}))) end)
    local v = tf.Variable(x24)
    local tape = tf.GradientTape()
    local y = tape:record(function() return g(v:value(), tf.constant(3)) end)
    assert.near(3 * 28, y:item(), 1e-4)
    assert.tensor_near({{3, 3, 3, 3}, {3, 3, 3, 3}}, tape:gradient(y, v))
    assert.tensor_near({{0, 1}, {4, 5}}, tf.tile(tf.constant({{0.0, 1.0}, {4.0, 5.0}}), tf.constant({1, 1})))
  end)

  it("range with a limit known only at run time", function()
    local seen
    local f = tf.fn(function(x)
      local r = tf.range(tf.shape(x)[1])
      local q = tf.range(1, tf.shape(x)[2], 2)
      local h = tf.range(0.5, tf.cast(tf.shape(x)[1], tf.float32))
      seen = {r.shape:as_list(), r.dtype.name, h.dtype.name}
      return r, q, h
    end, SIG)
    local r, q, h = f(tf.ones({3, 4}))
    assert.same({{-1}, "int32", "float32"}, seen)
    assert.same({0, 1, 2}, r:totable())
    assert.same({1, 3}, q:totable())
    assert.tensor_near({0.5, 1.5, 2.5}, h)
    local g = tf.fn(function(d) return tf.range(0, 4, d) end)
    assert.tf_error("InvalidArgumentError", "range: delta must not be 0", g, tf.constant(0))
  end)
end)
