-- PolynomialDecay, InverseTimeDecay, CosineDecayRestarts and the
-- LearningRateSchedule base against Keras's formulas in plain Lua; numbers
-- and tensors (the optimizer's float32 step), in a tf.fn, get_config /
-- from_config / serialize / deserialize, bad arguments.
local S = require("keras.train_support")
local tf = S.tf
local SC = tf.keras.optimizers.schedules
local cos, pi, floor, log, ceil = math.cos, math.pi, math.floor, math.log, math.ceil

local function ref_poly(lr, ds, e, p, cycle, step)
  if cycle then
    ds = ds * (step == 0 and 1 or ceil(step / ds))
  else
    step = math.min(step, ds)
  end
  return (lr - e) * (1 - step / ds) ^ p + e
end
local function ref_inv(lr, ds, r, stair, step)
  local p = step / ds
  if stair then p = floor(p) end
  return lr / (1 + r * p)
end
-- SGDR written independently: walk the periods
local function ref_restarts(lr, first, t_mul, m_mul, alpha, step)
  local start, len, peak = 0, first, 1
  while step >= start + len do
    start = start + len
    len = len * t_mul
    peak = peak * m_mul
  end
  local f = (step - start) / len
  local c = 0.5 * peak * (1 + cos(pi * f))
  return lr * ((1 - alpha) * c + alpha)
end

local function both(s, step, want, tol)
  assert.near(want, s(step), tol or 1e-12)
  assert.near(want, s(tf.constant(step, tf.float32)):item(), 1e-6)
end

describe("tf.keras.optimizers.schedules (issue 19)", function()
  it("PolynomialDecay, with and without cycle, power 1 and 2", function()
    for _, cyc in ipairs({false, true}) do
      for _, p in ipairs({1.0, 2.0}) do
        local s = SC.PolynomialDecay{0.1, 10, end_learning_rate = 0.01, power = p, cycle = cyc}
        for _, step in ipairs({0, 1, 5, 10, 11, 25}) do both(s, step, ref_poly(0.1, 10, 0.01, p, cyc, step)) end
      end
    end
    -- defaults: end 1e-4, power 1
    both(SC.PolynomialDecay{1.0, 4}, 2, (1.0 - 1e-4) * 0.5 + 1e-4)
  end)

  it("InverseTimeDecay, smooth and staircase", function()
    for _, st in ipairs({false, true}) do
      local s = SC.InverseTimeDecay{0.5, 4, 0.5, staircase = st}
      for _, step in ipairs({0, 1, 3, 4, 7, 9}) do both(s, step, ref_inv(0.5, 4, 0.5, st, step)) end
    end
  end)

  it("CosineDecayRestarts: periods t_mul longer, peaks m_mul lower, alpha floor", function()
    for _, c in ipairs({{2.0, 1.0, 0.0}, {1.0, 0.5, 0.1}, {3.0, 0.8, 0.0}}) do
      local s = SC.CosineDecayRestarts{1.0, 10, t_mul = c[1], m_mul = c[2], alpha = c[3]}
      for _, step in ipairs({0, 3, 9, 10, 15, 29, 30, 31, 69, 75}) do
        both(s, step, ref_restarts(1.0, 10, c[1], c[2], c[3], step), 1e-9)
      end
    end
  end)

  it("drive an optimizer's learning rate inside a tf.fn step by step", function()
    local s = SC.CosineDecayRestarts{0.1, 2}
    local v = tf.Variable(tf.constant(0.0))
    local opt = tf.keras.optimizers.SGD{learning_rate = s}
    local f = tf.fn(function() opt:apply_gradients({tf.constant(1.0)}, {v}) end)
    local want = 0
    for step = 0, 4 do
      f()
      want = want - ref_restarts(0.1, 2, 2, 1, 0, step)
      assert.near(want, v:value():item(), 1e-6)
    end
  end)

  it("get_config round-trips; serialize / deserialize", function()
    local s = SC.PolynomialDecay{0.1, 10, end_learning_rate = 0.01, power = 2, cycle = true}
    local c = s:get_config()
    assert.same({initial_learning_rate = 0.1, decay_steps = 10, end_learning_rate = 0.01, power = 2, cycle = true}, c)
    assert.same(c, SC.PolynomialDecay:from_config(c):get_config())
    local d = SC.serialize(SC.CosineDecayRestarts{1.0, 5})
    assert.same({class_name = "CosineDecayRestarts", config = {initial_learning_rate = 1.0, first_decay_steps = 5,
      t_mul = 2.0, m_mul = 1.0, alpha = 0.0}}, d)
    assert.near(ref_restarts(1.0, 5, 2, 1, 0, 7), SC.deserialize(d)(7), 1e-12)
    assert.same({initial_learning_rate = 0.5, decay_steps = 4, decay_rate = 0.5, staircase = false},
      SC.InverseTimeDecay{0.5, 4, 0.5}:get_config())
    assert.same({initial_learning_rate = 0.5, decay_steps = 4, decay_rate = 0.5, staircase = false},
      SC.ExponentialDecay{0.5, 4, 0.5}:get_config())
  end)

  it("LearningRateSchedule:extend makes user schedules: call(self, step) with a float32 step", function()
    local Warmup = SC.LearningRateSchedule:extend("Warmup", {
      init = function(self, o) self.peak, self.steps = o.peak, o.steps end,
      call = function(self, step) return self.peak * tf.minimum(1, (step + 1) / self.steps) end,
    })
    local w = Warmup{peak = 0.5, steps = 4}
    assert.near(0.25, w(1):item(), 1e-7)
    assert.near(0.5, w(tf.constant(10, tf.int64)):item(), 1e-7)
    assert.same({peak = 0.5, steps = 4}, w:get_config())
    local d = SC.serialize(w)
    assert.equal("Warmup", d.class_name)
    assert.near(0.375, SC.deserialize(d)(2):item(), 1e-7)
    assert.near(0.375, Warmup:from_config(w:get_config())(2):item(), 1e-7)
    -- as an optimizer's learning rate, eagerly and in a tf.fn
    local v = tf.Variable(tf.constant(0.0))
    local opt = tf.keras.optimizers.SGD{learning_rate = w}
    opt:apply_gradients({tf.constant(1.0)}, {v})
    local f = tf.fn(function() opt:apply_gradients({tf.constant(1.0)}, {v}) end)
    f()
    f()
    assert.near(-(0.125 + 0.25 + 0.375), v:value():item(), 1e-6)
    -- a subclass of a subclass
    local Twice = Warmup:extend("Twice", {call = function(self, step) return 2 * Warmup.call(self, step) end})
    assert.near(0.5, Twice{peak = 0.5, steps = 4}(1):item(), 1e-7)
  end)

  it("bad arguments are errors naming the schedule", function()
    assert.tf_error("ValueError", "PolynomialDecay: 'decay_steps' must be positive",
      function() SC.PolynomialDecay{0.1, 0} end)
    assert.tf_error("ValueError", "InverseTimeDecay: 'decay_rate' must be a number, got nil",
      function() SC.InverseTimeDecay{0.1, 10} end)
    assert.tf_error("ValueError", "CosineDecayRestarts: 'first_decay_steps' must be positive",
      function() SC.CosineDecayRestarts{0.1, -1} end)
    assert.tf_error("TypeError", "CosineDecayRestarts: unknown option 'decay_steps'",
      function() SC.CosineDecayRestarts{0.1, 5, decay_steps = 3} end)
    local Bare = SC.LearningRateSchedule:extend("Bare")
    assert.tf_error("UnimplementedError", "Bare: a LearningRateSchedule must define call(self, step)",
      function() Bare{}(1) end)
    assert.tf_error("ValueError", "deserialize: unknown schedule class 'Nope'",
      function() SC.deserialize({class_name = "Nope"}) end)
  end)
end)
