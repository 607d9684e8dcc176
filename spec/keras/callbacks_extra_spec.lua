-- The callbacks of issue 19: History (fit returns it), ReduceLROnPlateau,
-- LearningRateScheduler, CSVLogger, TerminateOnNaN, BackupAndRestore,
-- ProgbarLogger, and the progress display of evaluate / predict.
local S = require("keras.train_support")
local tf = S.tf
local C = tf.keras.callbacks
local support = require("support")

local X = tf.constant({{1.0, 2.0}, {2.0, 1.0}, {0.0, 1.0}, {1.0, 1.0}, {-1.0, 0.5}, {0.5, -1.0}, {2.0, 2.0}, {0.0, 0.0}})
local Y = tf.constant({{1.0}, {0.0}, {1.0}, {0.5}, {0.2}, {-0.3}, {1.5}, {0.1}})

local function model_with(opt, metrics)
  local m = tf.keras.Sequential{tf.keras.layers.Dense{3, activation = "tanh", kernel_initializer = "ones"},
                                tf.keras.layers.Dense{1, kernel_initializer = "ones"}}
  m:compile{optimizer = opt or tf.keras.optimizers.SGD{learning_rate = 0.1}, loss = "mse", metrics = metrics}
  return m
end

local function f32(x) return (string.unpack("f", string.pack("f", x))) end

-- a callback that puts a chosen sequence into the epoch logs under 'key'
local function feeder(key, seq)
  return C.LambdaCallback{on_epoch_end = function(epoch, logs) logs[key] = seq[epoch] end}
end

local function capture(fn)
  local out = {}
  local w, p = io.write, _G.print
  io.write = function(...) for _, s in ipairs({...}) do out[#out + 1] = tostring(s) end end
  _G.print = function(...)
    local t = {}
    for i = 1, select("#", ...) do t[i] = tostring((select(i, ...))) end
    out[#out + 1] = table.concat(t, "\t") .. "\n"
  end
  local ok, err = pcall(fn)
  io.write, _G.print = w, p
  if not ok then error(err, 0) end
  return table.concat(out)
end

describe("tf.keras.callbacks (issue 19)", function()
  it("History: fit returns it, with every epoch's logs", function()
    local m = model_with(nil, {"mae"})
    local h = m:fit(X, Y, {epochs = 3, batch_size = 4, verbose = 0, shuffle = false})
    assert.equal(getmetatable(h), C.History)
    assert.same({1, 2, 3}, h.epoch)
    assert.equal(3, #h.history.loss)
    assert.equal(3, #h.history.mae)
    assert.equal(3, h.params.epochs)
    assert.equal(2, h.params.steps)
    assert.is_true(h.history.loss[3] < h.history.loss[1])
    assert.equal(h, m.history)
    -- the last epoch's loss is the mean over its batches (evaluate before the last step differs; the value is a number)
    assert.equal("number", type(h.history.loss[1]))
  end)

  describe("ReduceLROnPlateau", function()
    it("cuts the rate by factor after patience epochs without improvement, then cools down, down to min_lr", function()
      local m = model_with()
      local seq = {5, 4, 4, 4, 4, 4, 4, 4}
      local r = C.ReduceLROnPlateau{monitor = "fake", factor = 0.5, patience = 2, cooldown = 1, min_lr = 0.02}
      local h = m:fit(X, Y, {epochs = 8, batch_size = 8, verbose = 0, callbacks = {feeder("fake", seq), r}})
      -- worked by hand: e4 wait 2 -> 0.05 (cooldown 1); e5 cooldown ends, wait 1; e6 -> 0.025; e8 -> max(0.0125, 0.02)
      assert.same({f32(0.1), f32(0.1), f32(0.1), f32(0.1), f32(0.05), f32(0.05), f32(0.025), f32(0.025)},
        h.history.learning_rate)
      assert.equal(f32(0.02), m.optimizer:get_learning_rate())
    end)

    it("mode max (auto for an 'acc' metric) and min_delta", function()
      local m = model_with()
      local seq = {0.5, 0.6, 0.6001, 0.6002, 0.9}
      local r = C.ReduceLROnPlateau{monitor = "val_acc", factor = 0.1, patience = 2, min_delta = 0.01}
      local h = m:fit(X, Y, {epochs = 5, batch_size = 8, verbose = 0, callbacks = {feeder("val_acc", seq), r}})
      -- e3, e4 improve by less than min_delta: wait 2 at e4 -> 0.01
      assert.same({f32(0.1), f32(0.1), f32(0.1), f32(0.1), f32(0.01)}, h.history.learning_rate)
    end)

    it("bad options", function()
      assert.tf_error("ValueError", "ReduceLROnPlateau: does not support a factor >= 1.0, got factor=1",
        function() C.ReduceLROnPlateau{factor = 1} end)
      assert.tf_error("TypeError", "ReduceLROnPlateau: unknown option 'patiense'",
        function() C.ReduceLROnPlateau{patiense = 1} end)
      assert.tf_error("ValueError", "ReduceLROnPlateau: mode must be 'auto', 'min' or 'max', got 'up'",
        function() C.ReduceLROnPlateau{mode = "up"} end)
    end)
  end)

  describe("LearningRateScheduler", function()
    it("sets schedule(epoch, lr) at each epoch's start (1-based epochs); the traced step reads it", function()
      local m = model_with()
      local seen = {}
      local s = C.LearningRateScheduler(function(epoch, lr)
        seen[#seen + 1] = {epoch, lr}
        return epoch == 1 and lr or lr * 0.5
      end)
      local h = m:fit(X, Y, {epochs = 3, batch_size = 8, verbose = 0, callbacks = {s}})
      assert.same({{1, f32(0.1)}, {2, f32(0.1)}, {3, f32(0.05)}}, seen)
      assert.same({f32(0.1), f32(0.05), f32(0.025)}, h.history.learning_rate)
      -- a rate of 0 from epoch 2: the weights stop moving (a step traced with the number would go on)
      local m2 = model_with()
      m2:fit(X, Y, {epochs = 1, batch_size = 4, verbose = 0})   -- traced with the number first
      local before
      local stop = C.LearningRateScheduler{function(epoch, lr) return epoch == 1 and lr or 0.0 end}
      local snap = C.LambdaCallback{on_epoch_end = function(epoch)
        if epoch == 1 then before = m2.trainable_variables[1]:value():totable() end
      end}
      m2:fit(X, Y, {epochs = 3, batch_size = 4, verbose = 0, callbacks = {stop, snap}})
      assert.same(before, m2.trainable_variables[1]:value():totable())
      assert.equal(0, m2.optimizer:get_learning_rate())
    end)

    it("errors: a non-number from the schedule, a schedule-driven optimizer, a non-function", function()
      local m = model_with()
      assert.tf_error("ValueError", "LearningRateScheduler: the output of the schedule function should be a number, got nil",
        function() m:fit(X, Y, {epochs = 1, verbose = 0, callbacks = {C.LearningRateScheduler(function() end)}}) end)
      local m2 = model_with(tf.keras.optimizers.SGD{learning_rate = tf.keras.optimizers.schedules.ExponentialDecay{
        0.1, 10, 0.9}})
      assert.tf_error("TypeError", "LearningRateScheduler: the optimizer's learning rate is a schedule",
        function() m2:fit(X, Y, {epochs = 1, verbose = 0, callbacks = {C.LearningRateScheduler(function(_, lr)
          return lr end)}}) end)
      assert.tf_error("TypeError", "LearningRateScheduler: 'schedule' must be a function(epoch, lr), got number",
        function() C.LearningRateScheduler(3) end)
    end)
  end)

  describe("CSVLogger", function()
    it("writes a header and one row per epoch, values round-tripping; append; separator", function()
      local dir = support.tmpdir()
      local path = dir .. "/log.csv"
      local m = model_with(nil, {"mae"})
      local h = m:fit(X, Y, {epochs = 2, batch_size = 4, verbose = 0, shuffle = false, callbacks = {C.CSVLogger(path)}})
      local lines = {}
      for l in support.slurp(path):gmatch("[^\n]+") do lines[#lines + 1] = l end
      assert.equal(3, #lines)
      assert.equal("epoch,loss,mae", lines[1])
      for e = 1, 2 do
        local f = {}
        for v in lines[e + 1]:gmatch("[^,]+") do f[#f + 1] = v end
        assert.equal(tostring(e), f[1])
        assert.equal(h.history.loss[e], tonumber(f[2]))
        assert.equal(h.history.mae[e], tonumber(f[3]))
      end
      -- append: no second header
      m:fit(X, Y, {epochs = 1, verbose = 0, callbacks = {C.CSVLogger{path, append = true}}})
      local n = 0
      for _ in support.slurp(path):gmatch("[^\n]+") do n = n + 1 end
      assert.equal(4, n)
      -- a new file with another separator
      local p2 = dir .. "/semi.csv"
      m:fit(X, Y, {epochs = 1, verbose = 0, callbacks = {C.CSVLogger(p2, ";", true)}})
      assert.truthy(support.slurp(p2):match("^epoch;loss;mae\n1;[%d%.e%-]+;[%d%.e%-]+\n$"))
      os.execute("rm -rf " .. support.shell_quote(dir))
      assert.tf_error("TypeError", "CSVLogger: 'filename' must be a string", function() C.CSVLogger(3) end)
    end)
  end)

  it("TerminateOnNaN stops at the batch whose loss is NaN", function()
    local m = model_with()
    local y = tf.constant({{1.0}, {0.0}, {0 / 0}, {0.5}, {0.2}, {-0.3}, {1.5}, {0.1}})
    local t = C.TerminateOnNaN()
    local out = capture(function()
      m:fit(X, y, {epochs = 3, batch_size = 2, verbose = 0, shuffle = false, callbacks = {t}})
    end)
    assert.equal(2, t.terminated_at)
    assert.equal(2, m.optimizer.iterations:value():item())
    assert.equal("Batch 2: Invalid loss, terminating training\n", out)
    -- without it, all 12 steps run
    local m2 = model_with()
    m2:fit(X, y, {epochs = 3, batch_size = 2, verbose = 0, shuffle = false})
    assert.equal(12, m2.optimizer.iterations:value():item())
  end)

  describe("BackupAndRestore", function()
    local function run(dir, opt, crash_at, model)
      local m = model or model_with(opt())
      local cbs = {C.BackupAndRestore(dir)}
      if crash_at then
        cbs[2] = C.LambdaCallback{on_train_batch_end = function(batch)
          -- the epoch is counted by the epochs begun
          if batch == 2 and crash_at.epoch == crash_at.now then error("crash") end
        end, on_epoch_begin = function(epoch) crash_at.now = epoch end}
      end
      local ok, err = pcall(m.fit, m, X, Y, {epochs = 4, batch_size = 2, verbose = 0, shuffle = false, callbacks = cbs})
      return m, ok, err
    end
    local function values(m)
      local r = {}
      for _, v in ipairs(m.variables) do
        for _, e in ipairs(tf.reshape(v:value(), {-1}):totable()) do r[#r + 1] = string.format("%a", e) end
      end
      return r
    end
    for name, opt in pairs({
      adam = function() return tf.keras.optimizers.Adam{learning_rate = 0.05} end,
      nadam = function() return tf.keras.optimizers.Nadam{learning_rate = 0.05} end,
      sgd_momentum = function() return tf.keras.optimizers.SGD{learning_rate = 0.05, momentum = 0.9} end,
    }) do
      it("an interrupted fit resumed by a fresh model equals the uninterrupted run bit for bit (" .. name .. ")",
        function()
        local dir = support.tmpdir()
        local full = run(dir .. "/a", opt)
        local _, ok, err = run(dir .. "/b", opt, {epoch = 3})
        assert.is_false(ok)
        assert.truthy(tostring(err):find("crash", 1, true))
        assert.truthy(tf.train.latest_checkpoint(dir .. "/b"))   -- the backup of epoch 2 is there
        local epochs = {}
        local m = model_with(opt())
        local spy = C.LambdaCallback{on_epoch_begin = function(e) epochs[#epochs + 1] = e end}
        local b = C.BackupAndRestore(dir .. "/b")
        local h = m:fit(X, Y, {epochs = 4, batch_size = 2, verbose = 0, shuffle = false, callbacks = {b, spy}})
        assert.equal(2, b.restored_epoch)
        assert.same({3, 4}, epochs)
        assert.same({3, 4}, h.epoch)
        assert.same(values(full), values(m))
        assert.equal(full.optimizer.iterations:value():item(), m.optimizer.iterations:value():item())
        -- a completed fit deletes the backup
        assert.is_nil(io.open(dir .. "/b/checkpoint", "r"))
        os.execute("rm -rf " .. support.shell_quote(dir))
      end)
    end

    it("the same model object resumes too, and delete_checkpoint = false keeps the backup", function()
      local dir = support.tmpdir()
      local opt = function() return tf.keras.optimizers.Adam{learning_rate = 0.05} end
      local full = run(dir .. "/a", opt)
      local m, ok = run(dir .. "/b", opt, {epoch = 4})
      assert.is_false(ok)
      local h = m:fit(X, Y, {epochs = 4, batch_size = 2, verbose = 0, shuffle = false,
        callbacks = {C.BackupAndRestore{dir .. "/b", delete_checkpoint = false}}})
      assert.same({4}, h.epoch)
      assert.same(values(full), values(m))
      assert.truthy(tf.train.latest_checkpoint(dir .. "/b"))
      os.execute("rm -rf " .. support.shell_quote(dir))
      assert.tf_error("ValueError", "BackupAndRestore: 'backup_dir' must be a non-empty string",
        function() C.BackupAndRestore{} end)
      assert.tf_error("ValueError", "BackupAndRestore: only save_freq = \"epoch\" is supported",
        function() C.BackupAndRestore{"d", save_freq = 10} end)
    end)
  end)

  describe("progress display", function()
    it("evaluate and predict: a bar at verbose 1, one line at 2, nothing at 0", function()
      local m = model_with()
      local out = capture(function() m:evaluate(X, Y, {batch_size = 4, verbose = 1}) end)
      assert.truthy(out:find("\r2/2 [==============================]", 1, true), out)
      assert.truthy(out:find(" - loss: ", 1, true))
      out = capture(function() m:evaluate(X, Y, {batch_size = 4, verbose = 2}) end)
      assert.truthy(out:match("^2/2 %- %d+[mu]?s %d+[mu]?s/step %- loss: [%d%.]+\n$"), out)
      out = capture(function() m:predict(X, {batch_size = 4, verbose = 1}) end)
      assert.truthy(out:find("\r2/2 [==============================]", 1, true), out)
      assert.equal("", capture(function() m:predict(X, {verbose = 0}) end))
    end)

    it("verbose = \"auto\" draws the bar on a terminal and one line otherwise", function()
      local code = [[local tf = require("tf")
        local m = tf.keras.Sequential{tf.keras.layers.Dense{1}}
        m:compile{optimizer = "sgd", loss = "mse"}
        local x = tf.ones({8, 2})
        m:evaluate(x, tf.ones({8, 1}), {batch_size = 4})
        m:predict(x, {batch_size = 4})]]
      local dir = support.tmpdir()
      support.spit(dir .. "/child.lua", code)
      local env = string.format("LUA_PATH_5_4=%s LUA_CPATH_5_4=%s", support.shell_quote(package.path),
        support.shell_quote(package.cpath))
      local p = io.popen(string.format("%s script -qec %s /dev/null 2>&1", env,
        support.shell_quote("lua5.4 " .. dir .. "/child.lua")))
      local tty = p:read("a")
      p:close()
      p = io.popen(string.format("%s lua5.4 %s/child.lua 2>&1", env, dir))
      local pipe = p:read("a")
      p:close()
      os.execute("rm -rf " .. support.shell_quote(dir))
      local _, bars = tty:gsub("%[==============================%]", "")
      assert.is_true(bars >= 2, tty)
      assert.falsy(pipe:find("[", 1, true), pipe)
      local _, lines = pipe:gsub("2/2 %- ", "")
      assert.equal(2, lines, pipe)
    end)

    it("ProgbarLogger draws fit's bar from callback hooks (fit at verbose 0)", function()
      local m = model_with()
      local out = capture(function()
        m:fit(X, Y, {epochs = 2, batch_size = 4, verbose = 0, callbacks = {C.ProgbarLogger()}})
      end)
      assert.truthy(out:find("Epoch 1/2\n", 1, true), out)
      assert.truthy(out:find("Epoch 2/2\n", 1, true), out)
      local _, n = out:gsub("\r2/2 %[==============================%] %- %d+m?s %d+[mu]?s/step %- loss: ", "")
      assert.equal(2, n, out)
      assert.equal("", capture(function() m:fit(X, Y, {epochs = 1, verbose = 0}) end))
      assert.tf_error("ValueError", "ProgbarLogger: only count_mode = \"steps\" is supported",
        function() C.ProgbarLogger{count_mode = "samples"} end)
    end)
  end)
end)
