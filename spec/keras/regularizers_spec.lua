-- tf.keras.regularizers, layer.losses, add_loss, activity regularization and
-- the training loop's use of model.losses: values against hand-computed
-- penalties and a manual train step.
local tf = require("tf")
local R = tf.keras.regularizers
local L = tf.keras.layers

local W = {{1.0, -2.0}, {3.0, -4.0}}    -- sum|w| = 10, sum w^2 = 30

local function sum(list)
  local s = list[1]
  for i = 2, #list do s = s + list[i] end
  return s
end

local function total(list)
  local s = 0
  for _, t in ipairs(list) do s = s + t:item() end
  return s
end

describe("tf.keras.regularizers", function()
  it("computes Keras's penalties (hand-computed values)", function()
    local w = tf.constant(W)
    assert.near(1.0, R.L1{0.1}(w):item(), 1e-6)
    assert.near(3.0, R.L2{l2 = 0.1}(w):item(), 1e-6)
    assert.near(0.7, R.L1L2{l1 = 0.01, l2 = 0.02}(w):item(), 1e-6)
    -- defaults: L1 0.01, L2 0.01, L1L2 0/0, the function l1_l2 0.01/0.01
    assert.near(0.1, R.L1()(w):item(), 1e-6)
    assert.near(0.3, R.l2()(w):item(), 1e-6)
    assert.equal(0, R.L1L2()(w):item())
    assert.near(0.4, R.l1_l2()(w):item(), 1e-6)
    assert.near(0.3, R.get("l2")(w):item(), 1e-6)
    assert.near(0.1, R.get("l1")(w):item(), 1e-6)
    assert.near(0.4, R.get("l1_l2")(w):item(), 1e-6)
    -- float64 stays float64
    local p = R.L2{0.5}(tf.constant({1.5}, tf.float64))
    assert.equal(tf.float64, p.dtype)
    assert.equal(1.125, p:item())
  end)

  it("serializes and deserializes (round trip, names and tables)", function()
    local r = R.L1L2{l1 = 0.25, l2 = 0.5}
    local s = R.serialize(r)
    assert.same({class_name = "L1L2", config = {l1 = 0.25, l2 = 0.5}}, s)
    local r2 = R.deserialize(s)
    assert.same(r:get_config(), r2:get_config())
    assert.near(r(tf.constant(W)):item(), r2(tf.constant(W)):item(), 1e-6)
    assert.same({class_name = "L2", config = {l2 = 0.01}}, R.serialize(R.get("l2")))
    assert.same({class_name = "L1", config = {l1 = 0.5}}, R.serialize(R.get({class_name = "L1", config = {l1 = 0.5}})))
    local f = function(x) return tf.reduce_sum(x) end
    assert.equal(f, R.get(f))
    assert.equal(f, R.serialize(f))
    assert.is_nil(R.get(nil))
  end)

  it("rejects bad arguments with Keras's errors", function()
    assert.tf_error("ValueError", "L2: 'l2' must be a finite non-negative number, got -1", function() R.L2{-1} end)
    assert.tf_error("TypeError", "L1: unknown keyword argument 'l2' (accepted: l1)", function() R.L1{l2 = 1} end)
    assert.tf_error("ValueError", "Unknown regularizer: 'l3'", function() R.get("l3") end)
    assert.tf_error("TypeError", "Could not interpret regularizer identifier: 3", function() R.get(3) end)
    assert.tf_error("TypeError", "Dense: unknown keyword argument 'kernel_regulariser'", function()
      L.Dense{2, kernel_regulariser = "l2"}
    end)
  end)

  it("a custom Regularizer class", function()
    local Half = R.Regularizer:extend("Half", {
      init = function(self, o) self.k = o.k end,
      call = function(self, x) return tf.reduce_sum(x) * self.k end,
      get_config = function(self) return {k = self.k} end,
    })
    local h = Half{k = 0.5}
    assert.equal(-1, h(tf.constant(W)):item())
    assert.same({class_name = "Half", config = {k = 0.5}}, R.serialize(h))
    assert.equal(-1, R.deserialize(R.serialize(h), {Half = Half})(tf.constant(W)):item())
  end)
end)

describe("layer.losses", function()
  local function dense(opts)
    opts.kernel_initializer = opts.kernel_initializer or tf.keras.initializers.Constant{0.5}
    local d = L.Dense(opts)
    d(tf.zeros({1, 2}))
    return d
  end

  it("holds each weight's penalty of its current value", function()
    local d = dense{2, kernel_regularizer = R.L2{0.1}, bias_regularizer = R.L1{1.0},
                    bias_initializer = tf.keras.initializers.Constant{-1}}
    local ls = d.losses
    assert.equal(2, #ls)
    assert.near(0.1 * 4 * 0.25, ls[1]:item(), 1e-6)   -- 4 entries of 0.5
    assert.near(2.0, ls[2]:item(), 1e-6)              -- |-1| * 2
    d.kernel:assign(tf.constant(W))
    assert.near(3.0, d.losses[1]:item(), 1e-6)        -- read at access, not at creation
  end)

  it("takes regularizers by name and plain functions", function()
    local d = dense{2, kernel_regularizer = "l1", bias_regularizer = function(b) return tf.reduce_sum(b) + 7 end}
    assert.near(0.01 * 2, d.losses[1]:item(), 1e-6)
    assert.near(7, d.losses[2]:item(), 1e-6)
  end)

  it("activity regularization: penalty of the output divided by the batch size; the last call's only", function()
    local d = L.Dense{2, use_bias = false, kernel_initializer = "ones", activity_regularizer = R.L1{0.5}}
    d(tf.constant({{1, 2}, {3, 4}}))          -- out {{3,3},{7,7}}: 0.5 * 20 / 2
    assert.equal(1, #d.losses)
    assert.near(5, d.losses[1]:item(), 1e-6)
    d(tf.constant({{1, 0}}))                  -- out {{1,1}}: 0.5 * 2 / 1, replaces
    assert.equal(1, #d.losses)
    assert.near(1, d.losses[1]:item(), 1e-6)
    assert.same({class_name = "L1", config = {l1 = 0.5}}, d:get_config().activity_regularizer)
  end)

  it("ActivityRegularization layer", function()
    local a = L.ActivityRegularization{l1 = 0.1, l2 = 0.01}
    local x = tf.constant(W)
    local y = a(x)
    assert.same(W, y:totable())
    assert.near((0.1 * 10 + 0.01 * 30) / 2, total(a.losses), 1e-6)
    local b = L.ActivityRegularization.from_config(a:get_config())
    assert.same(a:get_config(), b:get_config())
    b(x)
    assert.near(0.65, total(b.losses), 1e-6)
  end)

  it("add_loss in call; sublayers' losses are the model's; a shared layer counts each call", function()
    local Custom = L.Layer:extend("Custom", {
      call = function(self, x)
        self:add_loss(tf.reduce_sum(tf.cast(x, tf.float32)))
        return x
      end,
    })
    local c = Custom()
    local m = tf.keras.Sequential{c, L.Dense{1, kernel_initializer = "ones", kernel_regularizer = R.L2{1}}}
    m(tf.constant({{1, 2}}))
    assert.equal(2, #m.losses)
    assert.near(3 + 2, total(m.losses), 1e-6)
    m(tf.constant({{5, 5}}))
    assert.near(10 + 2, total(m.losses), 1e-6)
    -- a layer called twice in one outer call keeps both calls' losses
    local Twice = L.Layer:extend("Twice", {
      init = function(self) L.Layer.init(self); self.inner = Custom() end,
      call = function(self, x) return self.inner(self.inner(x)) end,
    })
    local t = Twice()
    t(tf.constant({1, 2}))
    assert.near(6, total(t.losses), 1e-6)
    t(tf.constant({1, 1}))
    assert.near(4, total(t.losses), 1e-6)
    assert.tf_error("TypeError", "add_loss: layer \"custom", function() c:add_loss("x") end)
  end)

  it("works inside tf.fn (losses traced with the call)", function()
    local d = L.Dense{2, kernel_initializer = "ones", use_bias = false, kernel_regularizer = R.L2{0.5},
                      activity_regularizer = R.L2{0.25}}
    local f = tf.fn(function(x)
      local y = d(x)
      return sum(d.losses), y
    end)
    local s = f(tf.constant({{1, 1}}))        -- kernel: 0.5 * 4; activity: 0.25 * (4 + 4) / 1
    assert.near(2 + 2, s:item(), 1e-6)
    s = f(tf.constant({{1, 0}, {0, 0}}))      -- activity: 0.25 * (1 + 1) / 2
    assert.near(2 + 0.25, s:item(), 1e-6)
  end)
end)

describe("training with regularization", function()
  local function model(seed_w)
    local m = tf.keras.Sequential{
      L.Dense{3, activation = "tanh", kernel_initializer = tf.keras.initializers.Constant{seed_w},
              kernel_regularizer = R.L2{0.5}, bias_regularizer = R.L1{0.1}, activity_regularizer = R.L1{0.01}},
      L.Dense{1, kernel_initializer = tf.keras.initializers.Constant{-0.3}, kernel_regularizer = R.l1_l2()},
    }
    return m
  end
  local x = tf.constant({{0.5, -1.0}, {1.5, 0.25}, {-0.5, 2.0}, {1.0, 1.0}})
  local y = tf.constant({{1.0}, {0.0}, {-1.0}, {0.5}})

  it("fit's loss is the compiled loss plus sum(model.losses), and its step matches a manual one", function()
    local m1, m2 = model(0.2), model(0.2)
    m1:compile{optimizer = tf.keras.optimizers.SGD{learning_rate = 0.1}, loss = "mse"}
    local h = m1:fit(x, y, {epochs = 1, batch_size = 4, verbose = 0, shuffle = false})
    -- manual: the same loss with a tape
    local opt = tf.keras.optimizers.SGD{learning_rate = 0.1}
    local tape = tf.GradientTape()
    local loss, plain
    loss = tape:record(function()
      local p = m2(x, {training = true})
      plain = tf.keras.losses.MeanSquaredError()(y, p)
      return plain + sum(m2.losses)
    end)
    assert.equal(4, #m2.losses)             -- 3 weights with regularizers + 1 activity
    assert.is_true(loss:item() > plain:item() + 0.1)
    local vars = m2.trainable_variables
    opt:apply_gradients(tape:gradient(loss, vars), vars)
    assert.near(loss:item(), h.history.loss[1], 1e-5)
    for i, v in ipairs(m1.trainable_variables) do
      assert.tensor_near(vars[i]:value(), v:value(), {atol = 1e-6})
    end
    -- evaluate adds them too
    m1:compile{optimizer = "sgd", loss = "mse"}
    local ev = m1:evaluate(x, y, {verbose = 0})
    local p = m1(x)
    local want = tf.keras.losses.MeanSquaredError()(y, p):item() + total(m1.losses)
    assert.near(want, ev, 1e-5)
  end)
end)

describe("losses after a trace", function()
  it("read eagerly, activity losses of a finished tf.fn trace are left out; weight penalties stay", function()
    local d = L.Dense{1, kernel_initializer = "ones", kernel_regularizer = R.L1{1}, activity_regularizer = R.L1{1}}
    local f = tf.fn(function(x) return d(x) end)
    f(tf.ones({1, 2}))
    local ls = d.losses
    assert.equal(1, #ls)
    assert.near(2, ls[1]:item(), 1e-6)
    d(tf.ones({1, 2}))
    assert.equal(2, #d.losses)
  end)

  it("an error inside a traced layer call leaves later calls clearing their losses", function()
    local Bad = L.Layer:extend("Bad", {call = function() error("boom") end})
    local d = L.Dense{1, kernel_initializer = "ones", activity_regularizer = R.L1{1}}
    local m = tf.keras.Sequential{d, Bad()}
    local f = tf.fn(function(x) return m(x) end)
    assert.has_error(function() f(tf.ones({1, 2})) end)
    d(tf.ones({1, 2}))
    d(tf.ones({1, 2}))
    assert.equal(1, #d.losses)
  end)
end)

describe("losses of sublayers not called in the last call", function()
  it("a branch skipped in the last outer call contributes no activity loss", function()
    local a = L.ActivityRegularization{l1 = 1}
    local b = L.ActivityRegularization{l1 = 10}
    local Branch = L.Layer:extend("Branch", {
      init = function(self) L.Layer.init(self); self.a = a; self.b = b end,
      call = function(self, x, opts) if opts.use_b then return self.b(x) end return self.a(x) end,
    })
    local m = Branch()
    local x = tf.constant({{1.0, -1.0}})
    m(x, {use_b = true})
    assert.near(20, total(m.losses), 1e-6)
    m(x, {use_b = false})
    assert.near(2, total(m.losses), 1e-6)
    assert.near(20, total(b.losses), 1e-6)     -- b alone still shows its own last call
  end)
end)

describe("regularization in a float64 model with a float32 activity loss", function()
  it("fit casts the penalties to the loss dtype", function()
    local m = tf.keras.Sequential{
      L.Dense{2, dtype = "float64", kernel_regularizer = "l2"},
      L.ActivityRegularization{l1 = 0.1, dtype = "float32"},
    }
    m:compile{optimizer = "sgd", loss = "mse"}
    local x, y = tf.ones({4, 3}, tf.float64), tf.zeros({4, 2}, tf.float32)
    local h = m:fit(x, y, {epochs = 1, verbose = 0})
    assert.is_true(h.history.loss[1] > 0)
  end)
end)
