--- tf.keras.callbacks: Callback (the base: override any of on_train_begin,
-- on_train_end, on_epoch_begin, on_epoch_end, on_train_batch_begin,
-- on_train_batch_end, on_test_begin, on_test_end), LambdaCallback,
-- EarlyStopping, ModelCheckpoint (with tf.train.Checkpoint), History,
-- ReduceLROnPlateau, LearningRateScheduler, TerminateOnNaN, CSVLogger,
-- BackupAndRestore, ProgbarLogger. fit also takes a plain Lua function as a callback:
-- it is called as on_epoch_end(epoch, logs). Epochs and batches are 1-based;
-- `logs` is a table of Lua numbers ({loss = 0.31, accuracy = 0.9, val_loss = ...}).
-- A callback stops training by setting `self.model.stop_training = true`
-- (or calling `self:stop_training()`).
return function(tf)
  tf.keras = tf.keras or {}
  if tf.keras.callbacks and tf.keras.callbacks._train then return end
  local raise = tf.errors.raise
  local sfmt = string.format

  local callbacks = tf.keras.callbacks or {}
  tf.keras.callbacks = callbacks
  callbacks._train = true

  local HOOKS = {"on_train_begin", "on_train_end", "on_epoch_begin", "on_epoch_end", "on_train_batch_begin",
                 "on_train_batch_end", "on_test_begin", "on_test_end", "on_predict_begin", "on_predict_end"}

  local Callback = {}
  Callback.__index = Callback
  Callback.__name = "tf.keras.callbacks.Callback"
  callbacks.Callback = Callback
  for _, h in ipairs(HOOKS) do Callback[h] = function() end end
  function Callback:set_model(model) self.model = model end
  function Callback:set_params(params) self.params = params end
  function Callback:stop_training() rawset(self.model, "stop_training", true) end

  --- Callback:extend("Name" [, methods]): a subclass; instances by calling it.
  function Callback.extend(parent, name, methods)
    local cls = setmetatable(methods or {}, {__index = parent, __call = function(c, ...)
      local o = setmetatable({}, c)
      if o.init then o:init(...) end
      return o
    end})
    cls.__index = cls
    cls.__name = "tf.keras.callbacks." .. tostring(name)
    cls.extend = Callback.extend
    return cls
  end
  setmetatable(Callback, {__call = function(c) return setmetatable({}, c) end})

  --- LambdaCallback{on_epoch_end = function(epoch, logs) ... end, ...}:
  -- the given functions as hooks (called without self).
  local LambdaCallback = Callback:extend("LambdaCallback")
  callbacks.LambdaCallback = LambdaCallback
  function LambdaCallback:init(fns)
    fns = fns or {}
    local known = {}
    for _, h in ipairs(HOOKS) do known[h] = true end
    known.on_batch_begin, known.on_batch_end = true, true
    for k, f in pairs(fns) do
      if not known[k] then raise("TypeError", sfmt("LambdaCallback: unknown hook '%s'", tostring(k)), 3) end
      if type(f) ~= "function" then raise("TypeError", sfmt("LambdaCallback: '%s' must be a function", k), 3) end
      local name = k == "on_batch_begin" and "on_train_batch_begin" or k == "on_batch_end" and "on_train_batch_end" or k
      self[name] = function(_, ...) return f(...) end
    end
  end

  --- History: records the logs of every epoch; fit returns it
  -- (`h.history.loss[epoch]`, `h.epoch`, `h.params`).
  local History = Callback:extend("History")
  callbacks.History = History
  function History:on_train_begin()
    self.epoch = self.epoch or {}
    self.history = self.history or {}
  end
  function History:on_epoch_end(epoch, logs)
    self.epoch[#self.epoch + 1] = epoch
    for k, v in pairs(logs or {}) do
      local h = self.history[k]
      if not h then
        h = {}
        self.history[k] = h
      end
      h[#h + 1] = v
    end
  end

  --- EarlyStopping{monitor="val_loss", min_delta=0, patience=0, verbose=0,
  -- mode="auto", baseline=nil, restore_best_weights=false, start_from_epoch=0}
  local EarlyStopping = Callback:extend("EarlyStopping")
  callbacks.EarlyStopping = EarlyStopping
  local ES_KEYS = {monitor = true, min_delta = true, patience = true, verbose = true, mode = true, baseline = true,
                   restore_best_weights = true, start_from_epoch = true}
  function EarlyStopping:init(o)
    o = o or {}
    for k in pairs(o) do
      if not ES_KEYS[k] then raise("TypeError", sfmt("EarlyStopping: unknown option '%s'", tostring(k)), 3) end
    end
    self.monitor = o.monitor or "val_loss"
    self.min_delta = math.abs(o.min_delta or 0)
    self.patience = o.patience or 0
    self.verbose = o.verbose or 0
    self.baseline = o.baseline
    self.restore_best_weights = o.restore_best_weights or false
    self.start_from_epoch = o.start_from_epoch or 0
    local mode = o.mode or "auto"
    if mode ~= "auto" and mode ~= "min" and mode ~= "max" then
      raise("ValueError", sfmt("EarlyStopping: mode must be 'auto', 'min' or 'max', got '%s'", tostring(mode)), 3)
    end
    if mode == "auto" then
      local m = self.monitor
      mode = (m:find("acc") or m:find("auc") or m:find("precision") or m:find("recall")) and "max" or "min"
    end
    self.mode = mode
  end
  function EarlyStopping:_better(a, b)
    if self.mode == "min" then return a < b - self.min_delta end
    return a > b + self.min_delta
  end
  function EarlyStopping:on_train_begin()
    self.wait = 0
    self.stopped_epoch = 0
    self.best = self.mode == "min" and math.huge or -math.huge
    self.best_weights = nil
    self.best_epoch = 0
  end
  function EarlyStopping:on_epoch_end(epoch, logs)
    local current = logs and logs[self.monitor]
    if current == nil then
      io.stderr:write(sfmt("EarlyStopping: metric '%s' is not available (available: %s); skipping\n", self.monitor,
        (function() local t = {} for k in pairs(logs or {}) do t[#t + 1] = k end table.sort(t) return table.concat(t, ", ") end)()))
      return
    end
    if epoch <= self.start_from_epoch then return end
    if self.restore_best_weights and self.best_weights == nil then self:_save() end
    self.wait = self.wait + 1
    if self:_better(current, self.best) then
      self.best = current
      self.best_epoch = epoch
      if self.restore_best_weights then self:_save() end
      if self.baseline == nil or self:_better(current, self.baseline) then self.wait = 0 end
      return
    end
    if self.wait >= self.patience and epoch > 1 then
      self.stopped_epoch = epoch
      rawset(self.model, "stop_training", true)
      if self.restore_best_weights and self.best_weights then
        if self.verbose > 0 then print(sfmt("Restoring model weights from the end of the best epoch: %d.", self.best_epoch)) end
        local vars = self.model.variables or {}
        for i, v in ipairs(vars) do if self.best_weights[i] then v:assign(self.best_weights[i]) end end
      end
    end
  end
  function EarlyStopping:on_train_end()
    if self.stopped_epoch > 0 and self.verbose > 0 then
      print(sfmt("Epoch %d: early stopping", self.stopped_epoch))
    end
  end
  --- ModelCheckpoint{filepath, monitor = "val_loss", save_best_only = false,
  -- mode = "auto", save_weights_only = true, verbose = 0}: writes the model
  -- (and its optimizer) with tf.train.Checkpoint at the end of each epoch, or
  -- only when `monitor` improved. `filepath` may hold "{epoch}" and
  -- "{<log name>}" fields with an optional format: "ckpt/w-{epoch:02d}-{val_loss:.2f}".
  local ModelCheckpoint = Callback:extend("ModelCheckpoint")
  callbacks.ModelCheckpoint = ModelCheckpoint
  local MC_KEYS = {filepath = true, monitor = true, save_best_only = true, mode = true, save_weights_only = true,
                   verbose = true, save_freq = true, initial_value_threshold = true}
  function ModelCheckpoint:init(o)
    if type(o) == "string" then o = {filepath = o} end
    o = o or {}
    for k, v in pairs(o) do
      if k == 1 then o.filepath = v elseif not MC_KEYS[k] then
        raise("TypeError", sfmt("ModelCheckpoint: unknown option '%s'", tostring(k)), 3)
      end
    end
    if type(o.filepath) ~= "string" then raise("ValueError", "ModelCheckpoint: 'filepath' must be a string", 3) end
    if o.save_freq ~= nil and o.save_freq ~= "epoch" then
      raise("ValueError", "ModelCheckpoint: only save_freq = \"epoch\" is supported", 3)
    end
    self.filepath = o.filepath
    self.monitor = o.monitor or "val_loss"
    self.save_best_only = o.save_best_only or false
    self.verbose = o.verbose or 0
    local mode = o.mode or "auto"
    if mode == "auto" then
      local m = self.monitor
      mode = (m:find("acc") or m:find("auc") or m:find("precision") or m:find("recall")) and "max" or "min"
    end
    self.mode = mode
    self.best = o.initial_value_threshold or (mode == "min" and math.huge or -math.huge)
  end
  function ModelCheckpoint:_path(epoch, logs)
    return (self.filepath:gsub("{([%w_]+):?([^}]*)}", function(name, fmt)
      local v = name == "epoch" and epoch or (logs or {})[name]
      if v == nil then return nil end
      if fmt == "" then return tostring(v) end
      return sfmt("%" .. fmt, v)
    end))
  end
  function ModelCheckpoint:on_epoch_end(epoch, logs)
    if not (tf.train and tf.train.Checkpoint) then
      raise("FailedPreconditionError", "ModelCheckpoint: tf.train.Checkpoint is not in this build", 2)
    end
    if self.save_best_only then
      local current = logs and logs[self.monitor]
      if current == nil then
        io.stderr:write(sfmt("ModelCheckpoint: metric '%s' is not available; not saving\n", self.monitor))
        return
      end
      local better = self.mode == "min" and current < self.best or self.mode == "max" and current > self.best
      if not better then
        if self.verbose > 0 then
          print(sfmt("Epoch %d: %s did not improve from %.5f", epoch, self.monitor, self.best))
        end
        return
      end
      if self.verbose > 0 then
        print(sfmt("Epoch %d: %s improved from %.5f to %.5f, saving model", epoch, self.monitor, self.best, current))
      end
      self.best = current
    end
    local path = self:_path(epoch, logs)
    local parts = {model = self.model}
    if self.model.optimizer then parts.optimizer = self.model.optimizer end
    tf.train.Checkpoint(parts):write(path)
    self.last_path = path
    if self.verbose > 0 and not self.save_best_only then print(sfmt("Epoch %d: saving model to %s", epoch, path)) end
  end

  function EarlyStopping:_save()
    local w = {}
    for i, v in ipairs(self.model.variables or {}) do w[i] = v:value() end   -- reads are snapshots
    self.best_weights = w
  end

  -- {==== the callbacks of issue 19

  local function check_opts(cname, o, keys)
    for k in pairs(o) do
      if not keys[k] then
        local names = {}
        for n in pairs(keys) do if type(n) == "string" then names[#names + 1] = n end end
        table.sort(names)
        raise("TypeError", sfmt("%s: unknown option '%s' (accepted: %s)", cname, tostring(k),
          table.concat(names, ", ")), 4)
      end
    end
  end

  --- The optimizer's learning rate as a Lua number; making it settable: a
  -- number becomes a float32 tf.Variable (a step traced before is dropped,
  -- so the next trace reads the variable).
  local function optimizer_of(cb, cname)
    local opt = cb.model and cb.model.optimizer
    if not opt then raise("ValueError", sfmt("%s: the model has no optimizer (compile it first)", cname), 4) end
    return opt
  end
  local function settable_lr(cb, cname)
    local opt = optimizer_of(cb, cname)
    local lr = rawget(opt, "learning_rate")
    if tf.is_variable(lr) then return lr end
    if type(lr) == "number" or tf.is_tensor(lr) then
      local v = tf.Variable(tf.cast(tf.is_tensor(lr) and lr or tf.constant(lr, tf.float32), tf.float32),
        {name = "learning_rate", trainable = false})
      opt.learning_rate = v
      local st = rawget(cb.model, "_compile_state")
      if st then st.train_fn = nil end   -- retrace: the old step holds the number as a constant
      return v
    end
    raise("TypeError", sfmt("%s: the optimizer's learning rate is a schedule (a function of the step), so it " ..
      "cannot be set; give the optimizer a number", cname), 4)
  end
  local function get_lr(cb, cname) return settable_lr(cb, cname):value():item() end
  local function set_lr(cb, cname, v) settable_lr(cb, cname):assign(tf.constant(v, tf.float32)) end

  --- ReduceLROnPlateau{monitor="val_loss", factor=0.1, patience=10, verbose=0,
  -- mode="auto", min_delta=1e-4, cooldown=0, min_lr=0}: multiplies the
  -- learning rate by factor when `monitor` has not improved for `patience`
  -- epochs, then waits `cooldown` epochs; never below min_lr. Adds
  -- `learning_rate` to the epoch logs.
  local ReduceLROnPlateau = Callback:extend("ReduceLROnPlateau")
  callbacks.ReduceLROnPlateau = ReduceLROnPlateau
  local RLR_KEYS = {monitor = true, factor = true, patience = true, verbose = true, mode = true, min_delta = true,
                    cooldown = true, min_lr = true}
  function ReduceLROnPlateau:init(o)
    o = o or {}
    check_opts("ReduceLROnPlateau", o, RLR_KEYS)
    self.monitor = o.monitor or "val_loss"
    self.factor = o.factor or 0.1
    if type(self.factor) ~= "number" or self.factor >= 1 then
      raise("ValueError", sfmt("ReduceLROnPlateau: does not support a factor >= 1.0, got factor=%s",
        tostring(self.factor)), 3)
    end
    self.patience = o.patience or 10
    self.verbose = o.verbose or 0
    self.min_delta = o.min_delta or 1e-4
    self.cooldown = o.cooldown or 0
    self.min_lr = o.min_lr or 0
    local mode = o.mode or "auto"
    if mode ~= "auto" and mode ~= "min" and mode ~= "max" then
      raise("ValueError", sfmt("ReduceLROnPlateau: mode must be 'auto', 'min' or 'max', got '%s'", tostring(mode)), 3)
    end
    self.mode = mode
    self:_reset()
  end
  function ReduceLROnPlateau:_reset()
    local minimize = self.mode == "min" or (self.mode == "auto" and not self.monitor:find("acc", 1, true))
    self._minimize = minimize
    self.best = minimize and math.huge or -math.huge
    self.cooldown_counter = 0
    self.wait = 0
  end
  function ReduceLROnPlateau:_improved(a, b)
    if self._minimize then return a < b - self.min_delta end
    return a > b + self.min_delta
  end
  function ReduceLROnPlateau:on_train_begin()
    self:_reset()
    settable_lr(self, "ReduceLROnPlateau")
  end
  function ReduceLROnPlateau:on_epoch_end(epoch, logs)
    logs = logs or {}
    logs.learning_rate = get_lr(self, "ReduceLROnPlateau")
    local current = logs[self.monitor]
    if current == nil then
      io.stderr:write(sfmt("ReduceLROnPlateau: metric '%s' is not available; skipping\n", self.monitor))
      return
    end
    if self.cooldown_counter > 0 then
      self.cooldown_counter = self.cooldown_counter - 1
      self.wait = 0
    end
    if self:_improved(current, self.best) then
      self.best = current
      self.wait = 0
    elseif self.cooldown_counter <= 0 then
      self.wait = self.wait + 1
      if self.wait >= self.patience then
        local old = logs.learning_rate
        -- compared in float32, as Keras compares with np.float32(min_lr)
        if old > string.unpack("f", string.pack("f", self.min_lr)) then
          local new = math.max(old * self.factor, self.min_lr)
          set_lr(self, "ReduceLROnPlateau", new)
          if self.verbose > 0 then
            print(sfmt("Epoch %d: ReduceLROnPlateau reducing learning rate to %g.", epoch, new))
          end
          self.cooldown_counter = self.cooldown
          self.wait = 0
        end
      end
    end
  end

  --- LearningRateScheduler(schedule [, verbose]) or
  -- LearningRateScheduler{schedule, verbose = 0}: at the start of each epoch
  -- sets the learning rate to schedule(epoch, lr) (epoch 1-based, as every
  -- luatf callback's; lr the current rate, a Lua number; the result must be
  -- a number). Adds `learning_rate` to the epoch logs.
  local LearningRateScheduler = Callback:extend("LearningRateScheduler")
  callbacks.LearningRateScheduler = LearningRateScheduler
  function LearningRateScheduler:init(schedule, verbose)
    if type(schedule) == "table" and getmetatable(schedule) == nil then
      check_opts("LearningRateScheduler", schedule, {[1] = true, schedule = true, verbose = true})
      schedule, verbose = schedule[1] or schedule.schedule, schedule.verbose
    end
    if type(schedule) ~= "function" and not (type(schedule) == "table" and getmetatable(schedule) and
        getmetatable(schedule).__call) then
      raise("TypeError", sfmt("LearningRateScheduler: 'schedule' must be a function(epoch, lr), got %s",
        type(schedule)), 3)
    end
    self.schedule = schedule
    self.verbose = verbose or 0
  end
  function LearningRateScheduler:on_train_begin() settable_lr(self, "LearningRateScheduler") end
  function LearningRateScheduler:on_epoch_begin(epoch)
    local lr = get_lr(self, "LearningRateScheduler")
    local new = self.schedule(epoch, lr)
    if tf.is_tensor(new) and new.shape:rank() == 0 then new = new:item() end
    if type(new) ~= "number" then
      raise("ValueError", sfmt("LearningRateScheduler: the output of the schedule function should be a number, " ..
        "got %s", tostring(new)), 2)
    end
    set_lr(self, "LearningRateScheduler", new)
    if self.verbose > 0 then
      print(sfmt("Epoch %d: LearningRateScheduler setting learning rate to %g.", epoch, new))
    end
  end
  function LearningRateScheduler:on_epoch_end(_, logs)
    if logs then logs.learning_rate = get_lr(self, "LearningRateScheduler") end
  end

  --- TerminateOnNaN(): stops training when a batch's loss is NaN or infinite.
  local TerminateOnNaN = Callback:extend("TerminateOnNaN")
  callbacks.TerminateOnNaN = TerminateOnNaN
  function TerminateOnNaN:on_train_batch_end(batch, logs)
    local loss = logs and logs.loss
    if type(loss) == "number" and (loss ~= loss or loss == math.huge or loss == -math.huge) then
      print(sfmt("Batch %d: Invalid loss, terminating training", batch))
      self.terminated_at = batch
      rawset(self.model, "stop_training", true)
    end
  end

  --- CSVLogger(filename [, separator = "," [, append = false]]) or
  -- CSVLogger{filename, separator =, append =}: one line per epoch,
  -- "epoch" (1-based) then the logs in sorted key order, after a header
  -- line (not written when appending to a file that has content). Numbers
  -- are written in their shortest round-tripping form.
  local CSVLogger = Callback:extend("CSVLogger")
  callbacks.CSVLogger = CSVLogger
  function CSVLogger:init(filename, separator, append)
    if type(filename) == "table" then
      check_opts("CSVLogger", filename, {[1] = true, filename = true, separator = true, append = true})
      filename, separator, append = filename[1] or filename.filename, filename.separator, filename.append
    end
    if type(filename) ~= "string" then raise("TypeError", "CSVLogger: 'filename' must be a string", 3) end
    self.filename, self.sep, self.append = filename, separator or ",", append or false
  end
  local function number_text(v)
    if type(v) == "table" then
      local e = {}
      for i, x in ipairs(v) do e[i] = number_text(x) end
      return '"[' .. table.concat(e, ", ") .. ']"'
    end
    if type(v) ~= "number" then return tostring(v) end
    if v ~= v then return "nan" end
    if v == math.huge then return "inf" elseif v == -math.huge then return "-inf" end
    if math.type(v) == "integer" then return tostring(v) end
    local s
    for p = 1, 17 do
      s = sfmt("%." .. p .. "g", v)
      if tonumber(s) == v then break end
    end
    if not s:find("[%.eEn]") then s = s .. ".0" end
    return s
  end
  function CSVLogger:on_train_begin()
    local header = true
    if self.append then
      local f = io.open(self.filename, "r")
      if f then
        header = (f:read("l") or "") == ""
        f:close()
      end
    end
    local f, err = io.open(self.filename, self.append and "a" or "w")
    if not f then raise("NotFoundError", sfmt("CSVLogger: cannot open '%s': %s", self.filename, tostring(err)), 2) end
    self.file, self.keys, self._header = f, nil, header
  end
  function CSVLogger:on_epoch_end(epoch, logs)
    logs = logs or {}
    if not self.keys then
      local keys = {}
      for k in pairs(logs) do keys[#keys + 1] = k end
      table.sort(keys)
      self.keys = keys
      if self._header then
        self.file:write("epoch", self.sep, table.concat(keys, self.sep), "\n")
      end
    end
    local row = {tostring(epoch)}
    for _, k in ipairs(self.keys) do row[#row + 1] = logs[k] == nil and "NA" or number_text(logs[k]) end
    self.file:write(table.concat(row, self.sep), "\n")
    self.file:flush()
  end
  function CSVLogger:on_train_end()
    if self.file then self.file:close() end
    self.file = nil
  end

  --- BackupAndRestore{backup_dir, delete_checkpoint = true} (or
  -- BackupAndRestore(backup_dir)): at the end of every epoch writes the
  -- model, its optimizer (slots included) and the epoch number to
  -- backup_dir with tf.train.CheckpointManager (one checkpoint kept). A fit
  -- that starts with a backup there restores it and goes on from the epoch
  -- after the saved one; a fit that ends normally deletes the backup (unless
  -- delete_checkpoint = false). An interrupted run (an error, a kill) resumes
  -- where it stopped; with shuffle = false it is the uninterrupted run.
  local BackupAndRestore = Callback:extend("BackupAndRestore")
  callbacks.BackupAndRestore = BackupAndRestore
  function BackupAndRestore:init(o)
    if type(o) == "string" then o = {backup_dir = o} end
    o = o or {}
    check_opts("BackupAndRestore", o, {[1] = true, backup_dir = true, delete_checkpoint = true, save_freq = true})
    local dir = o[1] or o.backup_dir
    if type(dir) ~= "string" or dir == "" then
      raise("ValueError", "BackupAndRestore: 'backup_dir' must be a non-empty string", 3)
    end
    if o.save_freq ~= nil and o.save_freq ~= "epoch" then
      raise("ValueError", "BackupAndRestore: only save_freq = \"epoch\" is supported", 3)
    end
    self.backup_dir = dir
    self.delete_checkpoint = o.delete_checkpoint ~= false
  end
  function BackupAndRestore:_manager()
    if not (tf.train and tf.train.Checkpoint) then
      raise("FailedPreconditionError", "BackupAndRestore: tf.train.Checkpoint is not in this build", 3)
    end
    if not self._epoch then
      self._epoch = tf.Variable(tf.constant(0, tf.int64), {name = "epoch", trainable = false})
    end
    local parts = {model = self.model, epoch = self._epoch}
    if self.model.optimizer then parts.optimizer = self.model.optimizer end
    self._ckpt = tf.train.Checkpoint(parts)
    self._mgr = tf.train.CheckpointManager(self._ckpt, self.backup_dir, {max_to_keep = 1})
    return self._mgr
  end
  function BackupAndRestore:on_train_begin()
    local mgr = self:_manager()
    self.restored_epoch = nil
    local latest = mgr.latest_checkpoint
    if latest then
      self._ckpt:restore(latest)
      local e = self._epoch:value():item()
      self.restored_epoch = e
      rawset(self.model, "_resume_epoch", e)
    end
  end
  function BackupAndRestore:on_epoch_end(epoch)
    self._epoch:assign(tf.constant(epoch, tf.int64))
    self._mgr:save()
  end
  function BackupAndRestore:on_train_end()
    if self.delete_checkpoint then
      os.execute("rm -rf '" .. self.backup_dir:gsub("'", "'\\''") .. "'")
    end
  end

  --- ProgbarLogger{count_mode = "steps"}: the progress display of fit as a
  -- callback (fit draws its own at verbose 1 and 2; this draws the same
  -- bar for a fit run with verbose = 0, e.g. one whose output is captured).
  -- evaluate and predict show the bar themselves (verbose = "auto": a bar on
  -- a terminal, one line per pass otherwise).
  local ProgbarLogger = Callback:extend("ProgbarLogger")
  callbacks.ProgbarLogger = ProgbarLogger
  function ProgbarLogger:init(o)
    o = o or {}
    check_opts("ProgbarLogger", o, {count_mode = true, stateful_metrics = true, verbose = true})
    if o.count_mode ~= nil and o.count_mode ~= "steps" then
      raise("ValueError", "ProgbarLogger: only count_mode = \"steps\" is supported", 3)
    end
    self.verbose = o.verbose or 1
  end
  function ProgbarLogger:on_epoch_begin(epoch)
    local T = tf.keras.training
    local p = self.params or {}
    if self.verbose == 1 then io.write(sfmt("Epoch %d/%d\n", epoch, p.epochs or 1)) end
    self._bar = T._progress(self.verbose, p.steps, T._metric_names(self.model))
    self._step = 0
  end
  function ProgbarLogger:on_train_batch_end(batch, logs)
    self._step = batch
    if self._bar then self._bar.step(batch, function() return logs end) end
  end
  function ProgbarLogger:on_epoch_end(_, logs)
    if self._bar then self._bar.done(self._step, logs) end
    self._bar = nil
  end
  -- }====
end
