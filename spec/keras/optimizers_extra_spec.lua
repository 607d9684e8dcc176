-- Nadam, Adamax, Adadelta, Ftrl, Lion: three steps of each against Keras's
-- update formulas recomputed in plain Lua float64 arithmetic, the same
-- steps inside a tf.fn, string names, defaults, get_config, bad options.
local S = require("keras.train_support")
local tf = S.tf
local K = tf.keras.optimizers
local sqrt, abs, max = math.sqrt, math.abs, math.max

local W0 = {1.0, -2.0, 0.5}
local GRADS = {{0.5, -0.3, 0.0}, {-0.2, 0.4, 1.5}, {0.1, 0.1, -0.7}}

-- reference updaters: ref(config) -> function(w, g, t) updating w in place (t = 1, 2, 3)
local REF = {}
function REF.Nadam(o)
  local b1, b2, eps, lr = o.beta_1 or 0.9, o.beta_2 or 0.999, o.epsilon or 1e-7, o.learning_rate
  local m, v, up = {}, {}, 1
  return function(w, g, t)
    local u_t = b1 * (1 - 0.5 * 0.96 ^ t)
    local u_t1 = b1 * (1 - 0.5 * 0.96 ^ (t + 1))
    up = up * u_t
    local up1 = up * u_t1
    for i = 1, #w do
      m[i] = (m[i] or 0) + (g[i] - (m[i] or 0)) * (1 - b1)
      v[i] = (v[i] or 0) + (g[i] ^ 2 - (v[i] or 0)) * (1 - b2)
      local m_hat = u_t1 * m[i] / (1 - up1) + (1 - u_t) * g[i] / (1 - up)
      local v_hat = v[i] / (1 - b2 ^ t)
      w[i] = w[i] - lr * m_hat / (sqrt(v_hat) + eps)
    end
  end
end
function REF.Adamax(o)
  local b1, b2, eps, lr = o.beta_1 or 0.9, o.beta_2 or 0.999, o.epsilon or 1e-7, o.learning_rate
  local m, u = {}, {}
  return function(w, g, t)
    for i = 1, #w do
      m[i] = (m[i] or 0) + (g[i] - (m[i] or 0)) * (1 - b1)
      u[i] = max(b2 * (u[i] or 0), abs(g[i]))
      w[i] = w[i] - lr * m[i] / ((1 - b1 ^ t) * (u[i] + eps))
    end
  end
end
function REF.Adadelta(o)
  local rho, eps, lr = o.rho or 0.95, o.epsilon or 1e-7, o.learning_rate
  local ag, adv = {}, {}
  return function(w, g)
    for i = 1, #w do
      ag[i] = rho * (ag[i] or 0) + (1 - rho) * g[i] ^ 2
      local d = -sqrt((adv[i] or 0) + eps) * g[i] / sqrt(ag[i] + eps)
      adv[i] = rho * (adv[i] or 0) + (1 - rho) * d ^ 2
      w[i] = w[i] + lr * d
    end
  end
end
function REF.Ftrl(o)
  local lr, p = o.learning_rate, -(o.learning_rate_power or -0.5)
  local l1, l2, l2s = o.l1_regularization_strength or 0, o.l2_regularization_strength or 0,
    o.l2_shrinkage_regularization_strength or 0
  local beta = o.beta or 0
  local acc, lin = {}, {}
  return function(w, g)
    for i = 1, #w do
      local a = acc[i] or (o.initial_accumulator_value or 0.1)
      local l2r = l2 + beta / (2 * lr)
      local gu = g[i] + 2 * l2s * w[i]
      local na = a + g[i] ^ 2
      lin[i] = (lin[i] or 0) + gu - (na ^ p - a ^ p) / lr * w[i]
      local quad = na ^ p / lr + 2 * l2r
      local clipped = math.min(math.max(lin[i], -l1), l1)
      w[i] = (clipped - lin[i]) / quad
      acc[i] = na
    end
  end
end
function REF.Lion(o)
  local b1, b2, lr = o.beta_1 or 0.9, o.beta_2 or 0.99, o.learning_rate
  local m = {}
  local function sign(x) return x > 0 and 1 or x < 0 and -1 or 0 end
  return function(w, g)
    for i = 1, #w do
      local mi = m[i] or 0
      w[i] = w[i] - lr * sign(mi * b1 + g[i] * (1 - b1))
      m[i] = mi * b2 + g[i] * (1 - b2)
    end
  end
end

local CONFIGS = {
  Nadam = {{learning_rate = 0.1}, {learning_rate = 0.05, beta_1 = 0.8, beta_2 = 0.99, epsilon = 1e-4}},
  Adamax = {{learning_rate = 0.1}, {learning_rate = 0.05, beta_1 = 0.5, beta_2 = 0.9, epsilon = 1e-3}},
  Adadelta = {{learning_rate = 1.0}, {learning_rate = 0.5, rho = 0.5, epsilon = 1e-3}},
  Ftrl = {{learning_rate = 0.1},
          {learning_rate = 0.2, learning_rate_power = -0.7, initial_accumulator_value = 0.5,
           l1_regularization_strength = 0.05, l2_regularization_strength = 0.1,
           l2_shrinkage_regularization_strength = 0.02, beta = 0.3}},
  Lion = {{learning_rate = 0.1}, {learning_rate = 0.05, beta_1 = 0.5, beta_2 = 0.9}},
}
local ORDER = {"Nadam", "Adamax", "Adadelta", "Ftrl", "Lion"}

local function reference(name, cfg)
  local w = {table.unpack(W0)}
  local up = REF[name](cfg)
  local out = {}
  for t = 1, 3 do
    up(w, GRADS[t], t)
    out[t] = {table.unpack(w)}
  end
  return out
end

local function copy(t) local r = {} for k, v in pairs(t) do r[k] = v end return r end

describe("tf.keras.optimizers (issue 19)", function()
  for _, name in ipairs(ORDER) do
    for ci, cfg in ipairs(CONFIGS[name]) do
      it(name .. ": three steps equal Keras's formulas in float64 (config " .. ci .. "), eagerly and in a tf.fn",
        function()
        local want = reference(name, cfg)
        for _, traced in ipairs({false, true}) do
          local v = tf.Variable(tf.constant(W0, tf.float32))
          local opt = K[name](copy(cfg))
          local step = function(g) opt:apply_gradients({g}, {v}) end
          if traced then step = tf.fn(step) end
          for t = 1, 3 do
            step(tf.constant(GRADS[t], tf.float32))
            assert.tensor_near(want[t], v:value(), {atol = 2e-6, rtol = 2e-5})
          end
          assert.equal(3, opt.iterations:value():item())
        end
      end)
    end
  end

  it("float64 variables follow the float64 reference closely", function()
    for _, name in ipairs(ORDER) do
      local cfg = CONFIGS[name][2]
      local want = reference(name, cfg)
      local v = tf.Variable(tf.constant(W0, tf.float64))
      local opt = K[name](copy(cfg))
      for t = 1, 3 do opt:apply_gradients({tf.constant(GRADS[t], tf.float64)}, {v}) end
      assert.tensor_near(want[3], v:value(), {atol = 1e-7, rtol = 1e-7})
    end
  end)

  it("defaults are Keras's", function()
    local d = {
      Nadam = {learning_rate = 0.001, beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-7},
      Adamax = {learning_rate = 0.001, beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-7},
      Adadelta = {learning_rate = 0.001, rho = 0.95, epsilon = 1e-7},
      Ftrl = {learning_rate = 0.001, learning_rate_power = -0.5, initial_accumulator_value = 0.1,
              l1_regularization_strength = 0, l2_regularization_strength = 0,
              l2_shrinkage_regularization_strength = 0, beta = 0},
      Lion = {learning_rate = 0.001, beta_1 = 0.9, beta_2 = 0.99},
    }
    for name, want in pairs(d) do
      local c = K[name]{}:get_config()
      c.name = nil
      assert.same(want, c, name)
    end
  end)

  it("slots are variables with Keras's names, and Nadam keeps u_product", function()
    local v = tf.Variable(tf.constant({1.0, 2.0}), {name = "w"})
    local want = {Nadam = {"m", "v"}, Adamax = {"m", "u"}, Adadelta = {"accumulated_grad", "accumulated_delta_var"},
                  Ftrl = {"accumulator", "linear"}, Lion = {"momentum"}}
    for name, slots in pairs(want) do
      local opt = K[name]{}
      assert.same(slots, opt:slot_names())
      opt:apply_gradients({tf.constant({0.1, 0.2})}, {v})
      for _, s in ipairs(slots) do assert.is_true(tf.is_variable(opt:get_slot(v, s)), name .. "/" .. s) end
    end
    assert.tensor_near({0.1, 0.1}, K.Ftrl{}:_slot(v, "accumulator", 0.1):value())
    local n = K.Nadam{}
    n:apply_gradients({tf.constant({0.1, 0.2})}, {v})
    n:apply_gradients({tf.constant({0.1, 0.2})}, {v})
    local u1, u2 = 0.9 * (1 - 0.5 * 0.96), 0.9 * (1 - 0.5 * 0.96 ^ 2)
    assert.near(u1 * u2, n.u_product:value():item(), 1e-15)
  end)

  it("string names, get_config / from_config (a schedule as the learning rate too)", function()
    for _, n in ipairs({"nadam", "adamax", "adadelta", "ftrl", "lion"}) do
      assert.equal(K[({nadam = "Nadam", adamax = "Adamax", adadelta = "Adadelta", ftrl = "Ftrl",
        lion = "Lion"})[n]], getmetatable(K.get(n)))
    end
    local o = K.Lion{learning_rate = 0.01, beta_1 = 0.8, name = "lion1"}
    local c = o:get_config()
    assert.same({name = "lion1", learning_rate = 0.01, beta_1 = 0.8, beta_2 = 0.99}, c)
    assert.same(c, K.Lion:from_config(c):get_config())
    local sch = tf.keras.optimizers.schedules.InverseTimeDecay{0.1, 10, 0.5}
    local a = K.Nadam{learning_rate = sch}
    c = a:get_config()
    assert.equal("InverseTimeDecay", c.learning_rate.class_name)
    local b = K.Nadam:from_config(c)
    assert.near(sch(7), b.learning_rate(7), 1e-12)
  end)

  it("train a model in fit by name (the loss falls)", function()
    local x = tf.constant({{1.0, 2.0}, {2.0, 1.0}, {0.0, 1.0}, {1.0, 1.0}})
    local y = tf.constant({{1.0}, {0.0}, {1.0}, {0.5}})
    for _, n in ipairs({"nadam", "adamax", "adadelta", "ftrl", "lion"}) do
      local m = tf.keras.Sequential{tf.keras.layers.Dense{1, kernel_initializer = "ones"}}
      m:compile{optimizer = n, loss = "mse"}
      m.optimizer.learning_rate = n == "adadelta" and 1.0 or 0.05
      local h = m:fit(x, y, {epochs = 5, batch_size = 2, verbose = 0, shuffle = false})
      assert.equal(5, #h.history.loss)
      assert.is_true(h.history.loss[5] < h.history.loss[1], n)
      assert.equal(10, m.optimizer.iterations:value():item())
    end
  end)

  it("bad options are errors naming the optimizer and the option", function()
    assert.tf_error("TypeError", "Nadam: unknown option 'rho'", function() K.Nadam{rho = 0.9} end)
    assert.tf_error("ValueError", "Lion: 'beta_1' must be in (0, 1]", function() K.Lion{beta_1 = 0} end)
    assert.tf_error("ValueError", "Ftrl: 'learning_rate_power' must be <= 0, got 0.5",
      function() K.Ftrl{learning_rate_power = 0.5} end)
    assert.tf_error("ValueError", "Ftrl: 'l1_regularization_strength' must be >= 0, got -1",
      function() K.Ftrl{l1_regularization_strength = -1} end)
    assert.tf_error("ValueError", "Ftrl: 'initial_accumulator_value' must be >= 0, got -0.1",
      function() K.Ftrl{initial_accumulator_value = -0.1} end)
    assert.tf_error("ValueError", "Could not interpret optimizer identifier: 'nadamx' (known: adadelta, adagrad, " ..
      "adam, adamax, adamw, ftrl, lion, nadam, rmsprop, sgd)", function() K.get("nadamx") end)
  end)
end)
