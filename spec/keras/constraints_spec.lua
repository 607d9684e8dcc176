-- tf.keras.constraints: projections against hand-computed values, applied
-- by the optimizer after each update (eager, in tf.fn, in fit).
local tf = require("tf")
local C = tf.keras.constraints
local L = tf.keras.layers

local EPS = 1e-7

describe("tf.keras.constraints", function()
  it("MaxNorm scales the slices along axis (1-based: Keras's axis 0 is 1) whose norm exceeds max_value", function()
    local w = tf.constant({{3.0, 0.0}, {4.0, 0.5}})    -- column norms 5 and 0.5; row norms 3 and 4.03...
    local s = 2 / (5 + EPS)
    assert.tensor_near({{3 * s, 0}, {4 * s, 0.5 * 0.5 / (0.5 + EPS)}}, C.MaxNorm{2}(w))
    local r2 = math.sqrt(16.25)
    assert.tensor_near({{3, 0}, {4 * 3.5 / (r2 + EPS), 0.5 * 3.5 / (r2 + EPS)}},
      C.MaxNorm{max_value = 3.5, axis = 2}(w), {atol = 1e-6})
    -- default max_value 2, axis 1; a table of axes is one norm over them
    assert.same({max_value = 2.0, axis = 1}, C.MaxNorm():get_config())
    local all = C.MaxNorm{max_value = 1, axis = {1, 2}}(w)
    local n = math.sqrt(9 + 16 + 0.25)
    assert.tensor_near({{3 / (n + EPS), 0}, {4 / (n + EPS), 0.5 / (n + EPS)}}, all)
  end)

  it("NonNeg, UnitNorm, MinMaxNorm", function()
    assert.same({0, 2, 0}, C.NonNeg()(tf.constant({-1.0, 2.0, 0.0})):totable())
    assert.tensor_near({{0.6}, {0.8}}, C.UnitNorm()(tf.constant({{3.0}, {4.0}})))
    assert.tensor_near({{0.6, 0.8}}, C.UnitNorm{axis = -1}(tf.constant({{3.0, 4.0}})))
    -- norms 5 and 0.5; min 1, max 2, rate 0.5: desired 0.5*2 + 0.5*5 = 3.5 and 0.5*1 + 0.5*0.5 = 0.75
    local w = tf.constant({{3.0, 0.0}, {4.0, 0.5}})
    local m = C.MinMaxNorm{min_value = 1, max_value = 2, rate = 0.5}(w)
    assert.tensor_near({{3 * 3.5 / 5, 0}, {4 * 3.5 / 5, 0.5 * 0.75 / 0.5}}, m, {atol = 1e-5})
    -- float64 in, float64 out
    assert.equal(tf.float64, C.UnitNorm()(tf.constant({1.0, 2.0}, tf.float64)).dtype)
  end)

  it("get / serialize / deserialize round trip", function()
    for _, c in ipairs({C.MaxNorm{3, axis = 2}, C.NonNeg(), C.UnitNorm{axis = {1, 2}},
                        C.MinMaxNorm{min_value = 0.5, max_value = 4, rate = 0.25}}) do
      local s = C.serialize(c)
      assert.equal(c._class_name, s.class_name)
      local c2 = C.deserialize(s)
      assert.same(c:get_config(), c2:get_config())
      local w = tf.constant({{3.0, -1.0}, {4.0, 0.5}})
      assert.tensor_near(c(w), c2(w))
    end
    assert.same({class_name = "NonNeg", config = {}}, C.serialize(C.get("non_neg")))
    assert.same({class_name = "MaxNorm", config = {max_value = 2.0, axis = 1}}, C.serialize(C.get("max_norm")))
    assert.equal("UnitNorm", C.get("unit_norm")._class_name)
    assert.equal("MinMaxNorm", C.get("MinMaxNorm")._class_name)
    local f = function(w) return w end
    assert.equal(f, C.get(f))
  end)

  it("rejects bad arguments", function()
    assert.tf_error("ValueError", "Unknown constraint: 'max'", function() C.get("max") end)
    assert.tf_error("ValueError", "MaxNorm: 'axis' must be a non-zero integer", function() C.MaxNorm{axis = 0} end)
    assert.tf_error("TypeError", "UnitNorm: unknown keyword argument 'max_value' (accepted: axis)", function()
      C.UnitNorm{max_value = 1}
    end)
    assert.tf_error("ValueError", "MinMaxNorm: 'min_value' (3) must not exceed 'max_value' (1)", function()
      C.MinMaxNorm{min_value = 3}
    end)
    assert.tf_error("TypeError", "Could not interpret constraint identifier", function() C.get(true) end)
  end)
end)

describe("constraints in training", function()
  local x = tf.constant({{1.0, 2.0, -1.0}, {0.5, -2.0, 3.0}, {2.0, 1.0, 1.0}, {-1.0, 0.0, 2.0}})
  local y = tf.constant({{5.0, -3.0}, {-2.0, 4.0}, {6.0, 1.0}, {0.0, -5.0}})

  local function col_norms(v)
    local t = v:value():totable()
    local out = {}
    for j = 1, #t[1] do
      local s = 0
      for i = 1, #t do s = s + t[i][j] ^ 2 end
      out[j] = math.sqrt(s)
    end
    return out
  end

  it("the optimizer projects a variable after each update (var.constraint), eagerly and in tf.fn", function()
    local d = L.Dense{2, kernel_constraint = C.MaxNorm{0.5}, bias_constraint = "non_neg"}
    d(x)
    assert.equal("MaxNorm", d.kernel.constraint._class_name)
    local opt = tf.keras.optimizers.SGD{learning_rate = 0.5}
    local function step()
      local tape = tf.GradientTape()
      local loss = tape:record(function() return tf.reduce_mean(tf.square(d(x) - y)) end)
      local vars = {d.kernel, d.bias}
      opt:apply_gradients(tape:gradient(loss, vars), vars)
    end
    local traced = tf.fn(step)
    for i = 1, 6 do
      if i % 2 == 0 then traced() else step() end
      for _, n in ipairs(col_norms(d.kernel)) do assert.is_true(n <= 0.5 + 1e-5, "norm " .. n) end
      for _, b in ipairs(d.bias:value():totable()) do assert.is_true(b >= 0) end
    end
    -- without the constraint the same steps leave the ball (the test can fail)
    local free = L.Dense{2}
    free(x)
    free.kernel:assign(d.kernel:value())
    local tape = tf.GradientTape()
    local loss = tape:record(function() return tf.reduce_mean(tf.square(free(x) - y)) end)
    tf.keras.optimizers.SGD{learning_rate = 0.5}:apply_gradients(tape:gradient(loss, {free.kernel}), {free.kernel})
    local biggest = math.max(table.unpack(col_norms(free.kernel)))
    assert.is_true(biggest > 0.6)
  end)

  it("fit keeps the constraint after every batch", function()
    local d = L.Dense{2, kernel_constraint = C.UnitNorm(), use_bias = false}
    local m = tf.keras.Sequential{d}
    m:compile{optimizer = tf.keras.optimizers.SGD{learning_rate = 0.3}, loss = "mse"}
    local seen = 0
    local cb = tf.keras.callbacks.LambdaCallback{on_train_batch_end = function()
      seen = seen + 1
      for _, n in ipairs(col_norms(d.kernel)) do assert.near(1, n, 1e-5) end
    end}
    m:fit(x, y, {epochs = 2, batch_size = 2, verbose = 0, callbacks = {cb}, shuffle = false})
    assert.equal(4, seen)
  end)

  it("layers take the constraints and list them in get_config", function()
    local e = L.Embedding{5, 3, embeddings_constraint = "non_neg", embeddings_regularizer = "l2"}
    e(tf.constant({1, 2}))
    assert.equal("NonNeg", e.embeddings.constraint._class_name)
    local c = e:get_config()
    assert.same({class_name = "NonNeg", config = {}}, c.embeddings_constraint)
    assert.same({class_name = "L2", config = {l2 = 0.01}}, c.embeddings_regularizer)
    local bn = L.BatchNormalization{gamma_constraint = C.MaxNorm{1, axis = 1}, beta_regularizer = "l1"}
    bn(tf.ones({2, 3}))
    assert.equal("MaxNorm", bn.gamma.constraint._class_name)
    assert.equal(1, #bn.losses)
    local ln = L.LayerNormalization{gamma_regularizer = "l2", beta_constraint = "non_neg"}
    ln(tf.ones({2, 3}))
    assert.near(0.03, ln.losses[1]:item(), 1e-6)
    assert.equal("NonNeg", ln.beta.constraint._class_name)
    local cv = L.Conv2D{2, 3, kernel_regularizer = "l2", kernel_constraint = "max_norm", bias_regularizer = "l1"}
    cv(tf.ones({1, 4, 4, 1}))
    assert.equal(2, #cv.losses)
    assert.equal("MaxNorm", cv.kernel.constraint._class_name)
  end)
end)
