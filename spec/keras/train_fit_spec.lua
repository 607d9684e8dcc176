-- compile / fit / evaluate / predict and callbacks, on a Dense-like model
-- double (spec/keras/train_support.lua) and, when tf.keras.layers exists, a
-- Sequential model.
local S = require("keras.train_support")
local tf = S.tf
local T = tf.keras.training

local function line_data(n, seed)
  tf.random.set_seed(seed or 3)
  local x = tf.random.normal({n, 2})
  local y = tf.matmul(x, tf.constant({{3.0}, {-2.0}})) + 1
  return x, y
end

--- A two-class problem: class 2 when x1 + x2 > 0 (1-based labels).
local function blobs(n, seed)
  tf.random.set_seed(seed or 5)
  local x = tf.random.normal({n, 2})
  local s = x:numpy()
  local y = {}
  for i = 1, n do y[i] = (s[i][1] + s[i][2] > 0) and 2 or 1 end
  return x, tf.constant(y, tf.int64)
end

local function quietly(f)
  local w = io.write
  local out = {}
  io.write = function(...) for _, s in ipairs({...}) do out[#out + 1] = tostring(s) end end   -- luacheck: ignore
  local ok, a, b = pcall(f)
  io.write = w   -- luacheck: ignore
  assert(ok, a)
  return a, table.concat(out), b
end

describe("compile/fit/evaluate/predict on a model-like object", function()
  it("fits y = 3 x1 - 2 x2 + 1 with SGD; history per epoch; last partial batch", function()
    local m = S.tiny(1)
    T.compile(m, {optimizer = tf.keras.optimizers.SGD{0.1}, loss = "mse"})
    local x, y = line_data(103)
    local h, out = quietly(function() return T.fit(m, x, y, {epochs = 6, batch_size = 16, verbose = 2}) end)
    assert.equal(6, #h.history.loss)
    assert.same({1, 2, 3, 4, 5, 6}, h.epoch)
    assert.is_true(h.history.loss[6] < 0.01)
    assert.is_true(h.history.loss[6] < h.history.loss[1])
    assert.tensor_near({{3.0}, {-2.0}}, m.kernel:numpy(), {atol = 0.1})
    assert.near(1.0, m.bias:numpy()[1], 0.1)
    assert.equal(6 * 7, m.optimizer.iterations:numpy())   -- 7 batches per epoch (6 of 16, one of 7)
    assert.truthy(out:find("Epoch 6/6 %- 7 steps"))
    assert.truthy(out:find("loss: "))
    assert.equal(h, m.history)
  end)

  it("traces the train step at most twice (full batch, then a None batch dimension)", function()
    local m = S.tiny(1)
    T.compile(m, {optimizer = "sgd", loss = "mse"})
    local x, y = line_data(50)
    quietly(function() return T.fit(m, x, y, {epochs = 3, batch_size = 16, verbose = 0}) end)
    local fn = rawget(m, "_compile_state").train_fn
    assert.is_true(#fn:concrete_functions() <= 2)
  end)

  it("loss history is the batch-size-weighted mean of the batch losses", function()
    local m = S.tiny(1)
    T.compile(m, {optimizer = tf.keras.optimizers.SGD{0.0}, loss = "mse"})   -- lr 0: weights stay
    local x, y = line_data(10)
    local h = T.fit(m, x, y, {epochs = 1, batch_size = 4, shuffle = false, verbose = 0})
    local full = tf.keras.losses.MeanSquaredError{}(y, m(x)):item()
    assert.near(full, h.history.loss[1], 1e-5)
    assert.near(full, (T.evaluate(m, x, y, {batch_size = 3})), 1e-5)
  end)

  it("metrics by name, validation_data and validation_split, evaluate and predict", function()
    local m = S.tiny(2)
    T.compile(m, {optimizer = "adam", loss = tf.keras.losses.SparseCategoricalCrossentropy{from_logits = true},
                  metrics = {"accuracy"}})
    local x, y = blobs(400)
    local xv, yv = blobs(100, 9)
    local h = T.fit(m, x, y, {epochs = 15, batch_size = 32, validation_data = {xv, yv}, verbose = 0})
    assert.equal(15, #h.history.val_loss)
    assert.equal(15, #h.history.val_accuracy)
    assert.is_true(h.history.accuracy[15] > 0.9)
    assert.is_true(h.history.val_accuracy[15] > 0.9)
    local loss, acc = T.evaluate(m, xv, yv)
    assert.near(h.history.val_loss[15], loss, 1e-5)
    assert.near(h.history.val_accuracy[15], acc, 1e-6)
    local d = T.evaluate(m, xv, yv, {return_dict = true})
    assert.near(acc, d.accuracy, 1e-6)
    local p = T.predict(m, xv, {batch_size = 32})
    assert.shape({100, 2}, p)
    assert.tensor_near(m(xv), p, {atol = 1e-5})
    local m2 = S.tiny(2)
    T.compile(m2, {optimizer = "adam", loss = "sparse_categorical_crossentropy", metrics = "accuracy"})
    local h2 = T.fit(m2, x, y, {epochs = 2, validation_split = 0.25, verbose = 0})
    assert.equal(2, #h2.history.val_accuracy)
    assert.equal(2 * 10, m2.optimizer.iterations:numpy())   -- 300 training samples, batch 32
  end)

  it("fits a dataset-like object yielding (x, y) batches", function()
    local x, y = line_data(64)
    local ds = {}
    function ds:cardinality() return 4 end
    function ds:iter()
      local i = 0
      return function()
        if i >= 4 then return nil end
        i = i + 1
        return x[{{(i - 1) * 16 + 1, i * 16}}], y[{{(i - 1) * 16 + 1, i * 16}}]
      end
    end
    local m = S.tiny(1)
    T.compile(m, {optimizer = tf.keras.optimizers.SGD{0.1}, loss = "mse"})
    local h = T.fit(m, ds, {epochs = 8, verbose = 0})
    assert.equal(8, #h.history.loss)
    assert.is_true(h.history.loss[8] < 0.05)
    assert.equal(32, m.optimizer.iterations:numpy())
    assert.shape({64, 1}, T.predict(m, ds))
  end)

  it("callbacks: a Lua function, LambdaCallback, EarlyStopping (restore_best_weights)", function()
    local m = S.tiny(1)
    T.compile(m, {optimizer = tf.keras.optimizers.SGD{0.1}, loss = "mse"})
    local x, y = line_data(64)
    local seen, begins = {}, 0
    local h = T.fit(m, x, y, {epochs = 3, verbose = 0, callbacks = {
      function(epoch, logs) seen[#seen + 1] = {epoch, logs.loss} end,
      tf.keras.callbacks.LambdaCallback{on_epoch_begin = function() begins = begins + 1 end},
    }})
    assert.equal(3, #seen)
    assert.equal(3, begins)
    assert.equal(h.history.loss[2], seen[2][2])
    -- EarlyStopping on a diverging run: lr so large the loss grows every epoch
    local m2 = S.tiny(1)
    T.compile(m2, {optimizer = tf.keras.optimizers.SGD{3.0}, loss = "mse"})
    local es = tf.keras.callbacks.EarlyStopping{monitor = "loss", patience = 1, restore_best_weights = true}
    local h2 = T.fit(m2, x, y, {epochs = 20, verbose = 0, callbacks = {es}})
    assert.is_true(#h2.history.loss < 20)
    assert.equal(#h2.history.loss, es.stopped_epoch)
    -- a callback can stop training
    local m3 = S.tiny(1)
    T.compile(m3, {optimizer = "sgd", loss = "mse"})
    local stopper = tf.keras.callbacks.Callback:extend("Stopper", {
      on_epoch_end = function(self, epoch) if epoch == 2 then self.model.stop_training = true end end})
    local h3 = T.fit(m3, x, y, {epochs = 10, verbose = 0, callbacks = {stopper()}})
    assert.equal(2, #h3.history.loss)
  end)

  it("ModelCheckpoint writes through tf.train.Checkpoint: every epoch, or the best only", function()
    tf.train = tf.train or {}
    local saved = tf.train.Checkpoint
    local writes = {}
    tf.train.Checkpoint = function(parts)   -- a double recording what would be written
      return {write = function(_, path) writes[#writes + 1] = {path, parts} end}
    end
    local ok, err = pcall(function()
      local m = S.tiny(1)
      T.compile(m, {optimizer = tf.keras.optimizers.SGD{0.1}, loss = "mse"})
      local x, y = line_data(64)
      local mc = tf.keras.callbacks.ModelCheckpoint{"/tmp/w-{epoch:02d}-{loss:.2f}"}
      T.fit(m, x, y, {epochs = 2, verbose = 0, callbacks = {mc}})
      assert.equal(2, #writes)
      assert.truthy(writes[1][1]:match("^/tmp/w%-01%-%d+%.%d%d$"), writes[1][1])
      assert.truthy(writes[2][1]:match("^/tmp/w%-02%-"), writes[2][1])
      assert.equal(m, writes[1][2].model)
      assert.equal(m.optimizer, writes[1][2].optimizer)
      writes = {}
      -- best only: a diverging run improves on epoch 1 only
      local m2 = S.tiny(1)
      T.compile(m2, {optimizer = tf.keras.optimizers.SGD{3.0}, loss = "mse"})
      T.fit(m2, x, y, {epochs = 4, verbose = 0, callbacks = {
        tf.keras.callbacks.ModelCheckpoint{filepath = "/tmp/best", monitor = "loss", save_best_only = true}}})
      assert.equal(1, #writes)
    end)
    tf.train.Checkpoint = saved
    assert(ok, err)
    assert.tf_error("TypeError", "ModelCheckpoint: unknown option 'path'", function()
      tf.keras.callbacks.ModelCheckpoint{path = "x"}
    end)
  end)

  it("prints a Keras-style progress bar with verbose = 1", function()
    local m = S.tiny(1)
    T.compile(m, {optimizer = "sgd", loss = "mse", metrics = {"mae"}})
    local x, y = line_data(64)
    local _, out = quietly(function() return T.fit(m, x, y, {epochs = 2, batch_size = 16, verbose = 1}) end)
    assert.truthy(out:find("Epoch 1/2\n", 1, true))
    assert.truthy(out:find("4/4 [==============================] - ", 1, true))
    assert.truthy(out:find("/step %- loss: %d+%.%d+ %- mae: %d"))
  end)

  it("errors: not compiled, unknown options, mismatched data", function()
    local m = S.tiny(1)
    assert.tf_error("RuntimeError", "You must compile your model before training", function()
      T.fit(m, {{1.0}}, {{1.0}})
    end)
    assert.tf_error("TypeError", "compile: unknown option 'optimiser'", function() T.compile(m, {optimiser = "sgd", loss = "mse"}) end)
    assert.tf_error("ValueError", "compile: 'loss' must be given", function() T.compile(m, {optimizer = "sgd"}) end)
    T.compile(m, {optimizer = "sgd", loss = "mse"})
    assert.tf_error("TypeError", "fit: unknown option 'epoch'", function() T.fit(m, {{1.0}}, {{1.0}}, {epoch = 1}) end)
    assert.tf_error("ValueError", "x has 2 samples, y has 3 samples", function()
      T.fit(m, {{1.0}, {2.0}}, {{1.0}, {2.0}, {3.0}}, {verbose = 0})
    end)
  end)
end)

describe("training methods on tf.keras.Model", function()
  local has_layers = tf.keras.layers ~= nil and tf.keras.Sequential ~= nil
  local test = has_layers and it or pending
  test("Sequential compile/fit/evaluate/predict", function()
    local model = tf.keras.Sequential{tf.keras.layers.Dense{8, activation = "relu"}, tf.keras.layers.Dense{2}}
    model:compile{optimizer = tf.keras.optimizers.Adam{0.02},
                  loss = tf.keras.losses.SparseCategoricalCrossentropy{from_logits = true},
                  metrics = {"accuracy"}}
    local x, y = blobs(300)
    local h = model:fit(x, y, {epochs = 20, batch_size = 32, verbose = 0})
    assert.is_true(h.history.accuracy[20] > 0.9)
    local _, acc = model:evaluate(x, y)
    assert.is_true(acc > 0.9)
    assert.shape({300, 2}, model:predict(x))
  end)
end)

describe("evaluate and predict show progress as Keras", function()
  local function model_and_data()
    local x, y = blobs(40, 9)
    local model = tf.keras.Sequential{tf.keras.layers.Dense{2}}
    model:compile{optimizer = "sgd", loss = tf.keras.losses.SparseCategoricalCrossentropy{from_logits = true},
                  metrics = {"accuracy"}}
    return model, x, y
  end

  it("verbose = 1: a bar redrawn in place, then the final state with time per step and the metrics", function()
    local model, x, y = model_and_data()
    local loss, out = quietly(function() return model:evaluate(x, y, {batch_size = 10, verbose = 1}) end)
    local final = out:match("\r(4/4 %[=+%] %- %d+s %d+[mu]?s/step %- loss: [%d.]+ %- accuracy: [%d.]+)\n$")
    assert.truthy(final, out)
    assert.matches(string.format("loss: %.4f", loss), final, 1, true)
    assert.truthy(out:find("\r1/4 [=======>", 1, true) or out:find("\r4/4 [", 1, true), out)
    local p, pout = quietly(function() return model:predict(x, {batch_size = 10, verbose = 1}) end)
    assert.shape({40, 2}, p)
    assert.matches("\r4/4 %[=+%] %- %d+s %d+[mu]?s/step\n$", pout)
  end)

  it("verbose = 2: one line; verbose = 0: nothing", function()
    local model, x, y = model_and_data()
    local _, out = quietly(function() return model:evaluate(x, y, {batch_size = 10, verbose = 2}) end)
    assert.matches("^4/4 %- %d+s %d+[mu]?s/step %- loss: [%d.]+ %- accuracy: [%d.]+\n$", out)
    local _, pout = quietly(function() return model:predict(tf.data.Dataset.from_tensor_slices(x):batch(16),
      {verbose = 2}) end)
    assert.matches("^3/3 %- %d+s %d+[mu]?s/step\n$", pout)
    local _, none = quietly(function() return model:evaluate(x, y, {verbose = 0}) end)
    local _, none2 = quietly(function() return model:predict(x, {verbose = 0}) end)
    assert.equal("", none .. none2)
  end)

  it("verbose = \"auto\" (the default) writes one line when stdout is not a terminal", function()
    local script = [[
      local tf = require("tf")
      local m = tf.keras.Sequential{tf.keras.layers.Dense{1}}
      m:compile{optimizer = "sgd", loss = "mse"}
      m:evaluate(tf.ones({8, 2}), tf.ones({8, 1}), {batch_size = 4})
      m:predict(tf.ones({8, 2}), {batch_size = 4})
    ]]
    local q = require("support").shell_quote
    local p = io.popen(string.format("LUA_PATH_5_4=%s LUA_CPATH_5_4=%s lua5.4 -e %s 2>&1 | cat", q(package.path),
      q(package.cpath), q(script)))
    local out = p:read("a")
    p:close()
    assert.matches("^2/2 %- %d+s %d+[mu]?s/step %- loss: [%d.]+\n2/2 %- %d+s %d+[mu]?s/step\n$", out)
  end)

  it("refuses an unknown verbosity or option", function()
    local model, x, y = model_and_data()
    assert.tf_error("ValueError", "evaluate: 'verbose' must be \"auto\", 0, 1 or 2, got 3",
      function() model:evaluate(x, y, {verbose = 3}) end)
    assert.tf_error("TypeError", "predict: unknown option 'epochs' (accepted: batch_size, steps, verbose)",
      function() model:predict(x, {epochs = 2}) end)
  end)
end)
