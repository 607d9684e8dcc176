-- The compile state through a .keras file for every optimizer, loss,
-- metric and learning-rate schedule luatf has: each comes back as the same
-- class with the same config, and for every optimizer training resumes
-- exactly (2 steps, save, load, 1 step == 3 steps straight: its iterations,
-- slots and other state restored).
local tf = require("tf")
local K = tf.keras
local L = K.layers
local json = require("tf.keras.saving_json")(tf)

local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)

local function classes(mod, test)
  local out = {}
  for name, cls in pairs(mod) do
    if type(cls) == "table" and test(name, cls) then out[#out + 1] = name end
  end
  table.sort(out)
  return out
end

local function model()
  K.backend.clear_session()
  tf.random.set_seed(5)
  return K.Sequential{L.Dense{4, activation = "tanh", input_shape = {3}}, L.Dense{3, activation = "softmax"}}
end

local function xy()
  tf.random.set_seed(8)
  local x = tf.random.normal({6, 3})
  local y = tf.nn.softmax(tf.random.normal({6, 3}))
  return x, y
end

-- the config as canonical text (objects inside by class and config)
local function text(c)
  return json.encode(c, {convert = function(v)
    if type(v) == "table" and v.get_config then return {class = getmetatable(v).__name, config = v:get_config()} end
    return tostring(v)
  end})
end

local function same(a, b) return tf.reduce_all(tf.equal(a, b)):item() end

local OPT_ARGS = {
  SGD = {learning_rate = 0.05, momentum = 0.8, nesterov = true, clipnorm = 1.0},
  Adam = {learning_rate = 0.01, beta_1 = 0.8, amsgrad = true},
  AdamW = {learning_rate = 0.01, weight_decay = 0.01},
  RMSprop = {learning_rate = 0.01, rho = 0.8, momentum = 0.3, centered = true},
  Adagrad = {learning_rate = 0.05, initial_accumulator_value = 0.2},
  Nadam = {learning_rate = 0.01},
  Adamax = {learning_rate = 0.01, clipvalue = 0.5},
  Adadelta = {learning_rate = 0.5, rho = 0.9},
  Ftrl = {learning_rate = 0.05, l1_regularization_strength = 0.01, l2_shrinkage_regularization_strength = 0.01},
  Lion = {learning_rate = 0.001, beta_2 = 0.95},
}

describe("compile state through a .keras file", function()
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)

  local opts = classes(K.optimizers, function(n, c) return c._name == n end)
  it("covers every optimizer class", function()
    for _, n in ipairs(opts) do assert.is_table(OPT_ARGS[n], "no case for optimizer " .. n) end
    assert.is_true(#opts >= 10)
  end)
  for _, name in ipairs(opts) do
    it(name .. ": the same config and state; training resumes exactly", function()
      local x, y = xy()
      local function compiled()
        local m = model()
        m:compile{optimizer = K.optimizers[name](OPT_ARGS[name]), loss = "categorical_crossentropy"}
        return m
      end
      local straight = compiled()
      straight:fit(x, y, {epochs = 3, batch_size = 6, shuffle = false, verbose = 0})
      local a = compiled()
      a:fit(x, y, {epochs = 2, batch_size = 6, shuffle = false, verbose = 0})
      local p = dir .. "/" .. name .. ".keras"
      a:save(p)
      local b = K.models.load_model(p)
      assert.equal(K.optimizers[name], getmetatable(b.optimizer))
      assert.equal(text(a.optimizer:get_config()), text(b.optimizer:get_config()))
      assert.equal(2, b.optimizer.iterations:value():item())
      b:fit(x, y, {epochs = 1, batch_size = 6, shuffle = false, verbose = 0})
      local w1, w2 = straight:get_weights(), b:get_weights()
      for i = 1, #w1 do assert.is_true(same(w1[i], w2[i]), name .. ": weight " .. i .. " differs") end
    end)
  end

  local SCHEDULES = {
    ExponentialDecay = {initial_learning_rate = 0.1, decay_steps = 3, decay_rate = 0.5, staircase = true},
    PiecewiseConstantDecay = {boundaries = {2, 4}, values = {0.1, 0.05, 0.01}},
    CosineDecay = {initial_learning_rate = 0.1, decay_steps = 5, alpha = 0.1},
    PolynomialDecay = {initial_learning_rate = 0.1, decay_steps = 5, end_learning_rate = 0.01, power = 2},
    InverseTimeDecay = {initial_learning_rate = 0.1, decay_steps = 2, decay_rate = 0.5},
    CosineDecayRestarts = {initial_learning_rate = 0.1, first_decay_steps = 2, t_mul = 2, m_mul = 0.5},
  }
  it("every learning-rate schedule comes back with its config and values", function()
    local names = classes(K.optimizers.schedules, function(n, c)
      return n ~= "LearningRateSchedule" and c.get_config ~= nil
    end)
    assert.same({"CosineDecay", "CosineDecayRestarts", "ExponentialDecay", "InverseTimeDecay",
                 "PiecewiseConstantDecay", "PolynomialDecay"}, names)
    for _, name in ipairs(names) do
      local m = model()
      local s = K.optimizers.schedules[name](SCHEDULES[name])
      m:compile{optimizer = K.optimizers.SGD{learning_rate = s}, loss = "mse"}
      local p = dir .. "/sched_" .. name .. ".keras"
      m:save(p)
      local b = K.models.load_model(p)
      local s2 = b.optimizer.learning_rate
      assert.equal(getmetatable(s), getmetatable(s2), name)
      assert.equal(text(s:get_config()), text(s2:get_config()), name)
      for step = 0, 7 do
        local a1, a2 = s(step), s2(step)
        assert.equal(tf.is_tensor(a1) and a1:item() or a1, tf.is_tensor(a2) and a2:item() or a2, name .. " at " .. step)
      end
    end
  end)

  it("a custom LearningRateSchedule class (made with extend) comes back by its name", function()
    local Warmup = K.optimizers.schedules.LearningRateSchedule:extend("SaveWarmup", {
      call = function(self, step) return self._config.peak * tf.minimum(1, (step + 1) / 4) end,
    })
    local m = model()
    m:compile{optimizer = K.optimizers.Adam{learning_rate = Warmup{peak = 0.01}}, loss = "mse"}
    m:save(dir .. "/warmup.keras")
    local b = K.models.load_model(dir .. "/warmup.keras")
    assert.equal(Warmup, getmetatable(b.optimizer.learning_rate))
    assert.equal(m.optimizer.learning_rate(1):item(), b.optimizer.learning_rate(1):item())
    assert.same({peak = 0.01}, b.optimizer.learning_rate:get_config())
  end)

  it("every loss class comes back with its config", function()
    local names = classes(K.losses, function(n, c) return rawget(c, "_class") == n end)
    assert.is_true(#names >= 16)
    for _, name in ipairs(names) do
      local m = model()
      local loss = K.losses[name]{}
      m:compile{optimizer = "sgd", loss = loss}
      local p = dir .. "/loss_" .. name .. ".keras"
      m:save(p)
      local b = K.models.load_model(p)
      assert.equal(getmetatable(loss), getmetatable(b.compiled_loss), name)
      assert.equal(text(loss:get_config()), text(b.compiled_loss:get_config()), name)
    end
  end)

  it("every metric class comes back with its config (and string metrics by name)", function()
    local names = classes(K.metrics, function(n, c) return rawget(c, "_class") == n end)
    assert.is_true(#names >= 20)
    local ms = {}
    for i, name in ipairs(names) do
      ms[i] = K.metrics[name](name == "MeanIoU" and {num_classes = 3} or {})
    end
    ms[#ms + 1] = "mae"
    ms[#ms + 1] = "accuracy"
    local m = model()
    m:compile{optimizer = "sgd", loss = "categorical_crossentropy", metrics = ms}
    local p = dir .. "/metrics.keras"
    m:save(p)
    local b = K.models.load_model(p)
    assert.equal(#m.compiled_metrics, #b.compiled_metrics)
    for i, mt in ipairs(m.compiled_metrics) do
      assert.equal(getmetatable(mt), getmetatable(b.compiled_metrics[i]), mt.name)
      assert.equal(text(mt:get_config()), text(b.compiled_metrics[i]:get_config()), mt.name)
    end
    -- a loaded model evaluates with its metrics as the original does
    local x, y = xy()
    local c = model()
    c:compile{optimizer = "adam", loss = "categorical_crossentropy",
              metrics = {"mae", "accuracy", K.metrics.TopKCategoricalAccuracy{k = 2}, K.metrics.AUC{}}}
    c:save(dir .. "/metrics2.keras")
    local c2 = K.models.load_model(dir .. "/metrics2.keras")
    local r1 = c:evaluate(x, y, {verbose = 0, return_dict = true})
    local r2 = c2:evaluate(x, y, {verbose = 0, return_dict = true})
    local n = 0
    for k, v in pairs(r1) do assert.equal(v, r2[k], k); n = n + 1 end
    assert.equal(5, n)
  end)
end)
