-- Training in float16 / bfloat16: casts between float dtypes carry
-- gradients (TensorFlow's _CastGrad), so a half-precision Keras model's
-- float32 loss reaches its variables; and when no gradient reaches any
-- variable, the optimizer's error names the op where it stopped.
local tf = require("tf")
local K = tf.keras

local function quietly(f)
  local w = io.write
  io.write = function() end   -- luacheck: ignore
  local ok, a = pcall(f)
  io.write = w   -- luacheck: ignore
  assert(ok, a)
  return a
end

local function line_data()
  tf.random.set_seed(11)
  local x = tf.random.normal({64, 2})
  return x, tf.matmul(x, tf.constant({{3.0}, {-2.0}})) + 1
end

describe("a float16 / bfloat16 Keras model", function()
  for _, dt in ipairs({"float16", "bfloat16"}) do
    it("fits with its loss falling (" .. dt .. " Dense layer, float32 data and loss)", function()
      tf.random.set_seed(1)
      local m = K.Sequential({K.layers.Dense{1, dtype = dt, input_shape = {2}}})
      m:compile{optimizer = K.optimizers.SGD{0.05}, loss = "mse"}
      local x, y = line_data()
      local h = quietly(function() return m:fit(x, y, {epochs = 8, batch_size = 16, verbose = 0}) end)
      local losses = h.history.loss
      assert.equal(8, #losses)
      assert.is_true(losses[8] < 0.1 * losses[1], ("loss %g -> %g"):format(losses[1], losses[8]))
      assert.equal(tf[dt], m.trainable_variables[1].dtype)
    end)
  end

  it("trains eagerly with a tape through half -> float32 casts", function()
    local w = tf.Variable(tf.constant({{0.5}, {0.5}}, tf.float16))
    local opt = K.optimizers.SGD{0.1}
    local x, y = line_data()
    local first, last
    for _ = 1, 20 do
      local tape = tf.GradientTape()
      local loss = tape:record(function()
        local pred = tf.cast(tf.matmul(tf.cast(x, tf.float16), w:value()), tf.float32)
        return tf.reduce_mean(K.losses.mean_squared_error(y, pred))
      end)
      local l = loss:numpy()
      first = first or l
      last = l
      local g = tape:gradient(loss, w)
      assert.equal(tf.float16, g.dtype)
      opt:apply_gradients({{g, w}})
    end
    assert.is_true(last < 0.6 * first, ("loss %g -> %g"):format(first, last))
  end)
end)

describe("the gradient of tf.cast", function()
  it("is the upstream gradient cast back to the input's float dtype", function()
    for _, from in ipairs({tf.float16, tf.bfloat16, tf.float32, tf.float64}) do
      for _, to in ipairs({tf.float16, tf.bfloat16, tf.float32, tf.float64}) do
        local x = tf.constant({1, 2}, from)
        local g = tf.grad(function(t) return tf.reduce_sum(tf.cast(t, to) * tf.constant({3, 0.5}, to)) end)(x)
        assert.equal(from, g.dtype)
        assert.same({3, 0.5}, g:totable())
      end
    end
  end)

  it("gives an integer input none and stops at a cast to an integer, as TensorFlow", function()
    local tape = tf.GradientTape({persistent = true})
    local x = tf.constant({1.5, 2.5}, tf.float16)
    local i = tf.constant({1, 2})
    tape:watch(x)
    tape:watch(i)
    local y = tape:record(function()
      return tf.reduce_sum(tf.cast(tf.cast(x, tf.int32), tf.float32) + tf.cast(i, tf.float32))
    end)
    local g = tape:gradient(y, {x, i})
    assert.is_nil(g[1])
    assert.is_nil(g[2])
  end)
end)

describe("No gradients provided for any variable", function()
  it("names the op where the gradient stopped (eager and inside tf.fn)", function()
    local v = tf.Variable({1.0, 2.0}, {name = "w"})
    -- a custom gradient that returns none for its input
    local blocked = tf.custom_gradient(function(t)
      return t * 2, function() return nil end
    end)
    local opt = K.optimizers.SGD{0.1}
    local function step()
      local tape = tf.GradientTape()
      local loss = tape:record(function() return tf.reduce_sum(blocked(v:value())) end)
      opt:apply_gradients(tape:gradient(loss, {v}), {v})
    end
    local msg = "No gradients provided for any variable: (w:0); no gradient defined for op 'custom_gradient' " ..
                "(input 1: float32) on the path to them"
    assert.tf_error("ValueError", msg, step)
    assert.tf_error("ValueError", msg, tf.fn(step))
    -- minimize goes through the same message
    assert.tf_error("ValueError", msg, function()
      opt:minimize(function() return tf.reduce_sum(blocked(v:value())) end, {v})
    end)
  end)

  it("keeps the plain message when nothing on the path lacks a gradient (unconnected)", function()
    local a, b = tf.Variable({1.0}, {name = "a"}), tf.Variable({1.0}, {name = "b"})
    local tape = tf.GradientTape()
    local loss = tape:record(function() return tf.reduce_sum(a:value() * 2) end)
    local g = tape:gradient(loss, {b})
    local ok, err = pcall(K.optimizers.SGD{0.1}.apply_gradients, K.optimizers.SGD{0.1}, g, {b})
    assert.is_false(ok)
    assert.equal("No gradients provided for any variable: (b:0)", err.message)
  end)

  it("remembers the stop per variable, so another tape's gradient does not mix it up", function()
    local v = tf.Variable({1.0}, {name = "v"})
    local blocked = tf.custom_gradient(function(t) return t * 2, function() return nil end end)
    local t1 = tf.GradientTape()
    local l1 = t1:record(function() return tf.reduce_sum(blocked(v:value())) end)
    local g1 = t1:gradient(l1, {v})
    local u = tf.Variable({1.0}, {name = "u"})
    local t2 = tf.GradientTape()
    local l2 = t2:record(function() return tf.reduce_sum(u:value() * 3) end)
    t2:gradient(l2, {u})   -- a second tape, another variable: v's stop stays
    assert.tf_error("ValueError", "(v:0); no gradient defined for op 'custom_gradient' (input 1: float32)",
      function() K.optimizers.SGD{0.1}:apply_gradients(g1, {v}) end)
    -- a later gradient that reaches v clears it
    local t3 = tf.GradientTape()
    local l3 = t3:record(function() return tf.reduce_sum(v:value()) end)
    t3:gradient(l3, {v})
    local ok, err = pcall(function() K.optimizers.SGD{0.1}:apply_gradients({nil}, {v}) end)
    assert.is_false(ok)
    assert.equal("No gradients provided for any variable: (v:0)", err.message)
  end)
end)
