--- Keras's training loop as functions over any model-like object (callable
-- as `model(x, {training = bool})`, with `trainable_variables` and
-- `variables`): tf.keras.training.compile / fit / evaluate / predict, also
-- installed as methods of tf.keras.Model when that class exists (now, or
-- when it is assigned later). fit's train step is one tf.fn (forward, tape,
-- update, metric updates) with reduce_retracing, so a last partial batch
-- traces once more at most (with a None batch dimension) and is then reused.
return function(tf)
  tf.keras = tf.keras or {}
  if tf.keras.training and tf.keras.training._train then return end
  -- a sibling module installs itself (a test double may return a table instead)
  local function load(name)
    local m = require(name)
    if type(m) == "function" then m(tf) end
  end
  load("tf.keras.optimizers")
  load("tf.keras.losses")
  load("tf.keras.metrics")
  load("tf.keras.callbacks")

  local core = tf.core
  local raise = tf.errors.raise
  local sfmt = string.format
  local keras = tf.keras
  local now = core.monotonic

  local T = {_train = true}
  keras.training = T

  local function is_dataset(x)
    return type(x) == "table" and type(x.iter) == "function" and type(x.cardinality) == "function"
  end

  local function as_tensor(x)
    if tf.is_variable(x) then return x:value() end
    if tf.is_tensor(x) then return x end
    return tf.constant(x)
  end

  local function state_of(model, fname)
    local st = rawget(model, "_compile_state")
    if not st then
      raise("RuntimeError", sfmt("You must compile your model before %s. Call `model:compile{optimizer=, loss=}`.",
        fname), 3)
    end
    return st
  end

  -- {==== compile
  local COMPILE_KEYS = {optimizer = true, loss = true, metrics = true, run_eagerly = true, jit_compile = true,
                        steps_per_execution = true, loss_weights = true, weighted_metrics = true}

  --- The metric object for an identifier, choosing the accuracy that fits the loss.
  local function resolve_metric(m, loss)
    if type(m) == "string" and (m == "accuracy" or m == "acc") then
      local lname = type(loss) == "table" and loss.name or ""
      local cls
      if lname == "sparse_categorical_crossentropy" then
        cls = keras.metrics.SparseCategoricalAccuracy
      elseif lname == "categorical_crossentropy" then
        cls = keras.metrics.CategoricalAccuracy
      elseif lname == "binary_crossentropy" then
        cls = keras.metrics.BinaryAccuracy
      else
        cls = keras.metrics.Accuracy
      end
      return cls{name = m}
    end
    return keras.metrics.get(m)
  end

  --- model:compile{optimizer="rmsprop", loss=, metrics={...}, run_eagerly=false}
  function T.compile(model, opts)
    opts = opts or {}
    if type(opts) ~= "table" then raise("TypeError", "compile: expected a keyword table", 2) end
    for k in pairs(opts) do
      if not COMPILE_KEYS[k] then
        raise("TypeError", sfmt("compile: unknown option '%s' (accepted: loss, metrics, optimizer, run_eagerly)",
          tostring(k)), 2)
      end
    end
    if opts.loss == nil then raise("ValueError", "compile: 'loss' must be given", 2) end
    local st = {}
    st.optimizer = keras.optimizers.get(opts.optimizer or "rmsprop")
    -- a mixed_float16 model trains with loss scaling (Keras wraps the optimizer)
    if keras.mixed_precision then st.optimizer = keras.mixed_precision._maybe_wrap(model, st.optimizer) end
    st.loss = keras.losses.get(opts.loss)
    st.metrics = {}
    local ms = opts.metrics or {}
    if type(ms) == "string" or (type(ms) == "table" and ms.update_state) then ms = {ms} end
    for i, m in ipairs(ms) do st.metrics[i] = resolve_metric(m, st.loss) end
    st.loss_tracker = keras.metrics.Mean{name = "loss"}
    st.run_eagerly = opts.run_eagerly or false
    rawset(model, "_compile_state", st)
    rawset(model, "optimizer", st.optimizer)
    rawset(model, "compiled_loss", st.loss)
    rawset(model, "compiled_metrics", st.metrics)
    rawset(model, "stop_training", false)
    return model
  end
  -- }====

  -- {==== data
  local function batch_count(n, b) return (n + b - 1) // b end

  --- A source of batches: {steps = n|nil, iter = function(epoch, shuffle) -> iterator of (x, y)}.
  local function tensor_source(x, y, batch_size, shuffle)
    local n = x.shape[1]
    if not n then raise("ValueError", "fit: x must have a known first (batch) dimension", 4) end
    if y ~= nil and y.shape[1] ~= n then
      raise("ValueError", sfmt("Data cardinality is ambiguous: x has %d samples, y has %s samples", n,
        tostring(y.shape[1])), 4)
    end
    local src = {steps = batch_count(n, batch_size), n = n}
    function src.iter(_, do_shuffle)
      local xs, ys = x, y
      if do_shuffle and shuffle ~= false then
        -- Fisher-Yates from the seedable RNG (tf.random.set_seed)
        local r = tf.random.uniform({n}, 0, 1, tf.float64):numpy()
        local p = {}
        for i = 1, n do p[i] = i end
        for i = n, 2, -1 do
          local j = math.floor(r[i] * i) + 1
          if j > i then j = i end
          p[i], p[j] = p[j], p[i]
        end
        local perm = tf.constant(p, tf.int64)
        xs = tf.gather(x, perm)
        if y ~= nil then ys = tf.gather(y, perm) end
      end
      -- batches by tf.slice (one C call each; begin/size tables reused)
      local xr, yr = #xs:_dims(), ys and #ys:_dims()
      local xb, xsz, yb, ysz = {}, {}, {}, {}
      for d = 1, xr do xb[d], xsz[d] = 1, -1 end
      for d = 1, yr or 0 do yb[d], ysz[d] = 1, -1 end
      local i = 0
      return function()
        if i >= n then return nil end
        local a, b = i + 1, math.min(i + batch_size, n)
        i = b
        if a == 1 and b == n then return xs, ys end
        xb[1], xsz[1] = a, b - a + 1
        if not ys then return tf.slice(xs, xb, xsz) end
        yb[1], ysz[1] = a, b - a + 1
        return tf.slice(xs, xb, xsz), tf.slice(ys, yb, ysz)
      end
    end
    return src
  end

  local function dataset_source(ds)
    local card = ds:cardinality()
    local src = {steps = card >= 0 and card or nil}
    if card == -1 then
      raise("ValueError", "fit: the dataset is infinite; give steps_per_epoch", 4)
    end
    function src.iter() return ds:iter() end
    return src
  end

  local function make_source(fname, x, y, batch_size, shuffle)
    if is_dataset(x) then
      if y ~= nil then raise("ValueError", sfmt("%s: `y` must not be given when x is a dataset", fname), 3) end
      return dataset_source(x)
    end
    if x == nil then raise("ValueError", sfmt("%s: no data given", fname), 3) end
    return tensor_source(as_tensor(x), y ~= nil and as_tensor(y) or nil, batch_size, shuffle)
  end
  -- }====

  -- {==== progress display
  local tty_cache
  local function is_tty()
    if tty_cache == nil then
      local ok = os.execute("[ -t 1 ]")
      tty_cache = ok == true or ok == 0
    end
    return tty_cache
  end

  local function fmt_time(s)
    if s >= 3600 then return sfmt("%d:%02d:%02d", s // 3600, (s % 3600) // 60, s % 60) end
    if s >= 60 then return sfmt("%d:%02d", s // 60, s % 60) end
    return sfmt("%ds", math.floor(s + 0.5))
  end

  local function fmt_step(sec)
    if sec >= 1 then return sfmt("%.0fs/step", sec) end
    if sec >= 1e-3 then return sfmt("%.0fms/step", sec * 1e3) end
    return sfmt("%.0fus/step", sec * 1e6)
  end

  local function fmt_logs(names, logs)
    local parts = {}
    for _, k in ipairs(names) do
      if logs[k] ~= nil then parts[#parts + 1] = sfmt(" - %s: %.4f", k, logs[k]) end
    end
    return table.concat(parts)
  end

  local function bar(step, total, width)
    width = width or 30
    if not total then return sfmt("%7d/Unknown", step) end
    local w = #tostring(total)
    local done = math.floor(width * step / total)
    local s = string.rep("=", done)
    if step < total then s = (done > 0 and s:sub(1, -2) or "") .. ">" .. (done > 0 and "" or "") end
    s = s .. string.rep(".", width - #s)
    return sfmt("%" .. w .. "d/%d [%s]", step, total, s)
  end

  --- Keras's verbosity: "auto" (nil) is 1 on a terminal, else 2; booleans as 1/0.
  local function verbosity(v, what)
    if v == nil or v == "auto" then return is_tty() and 1 or 2 end
    if v == true then return 1 elseif v == false then return 0 end
    if v ~= 0 and v ~= 1 and v ~= 2 then
      raise("ValueError", sfmt("%s: 'verbose' must be \"auto\", 0, 1 or 2, got %s", what, tostring(v)), 4)
    end
    return v
  end

  --- The progress display of one pass over 'steps' batches (nil: not known
  -- yet): at verbosity 1 a bar redrawn at most every 0.1 s, then its final
  -- state with the time per step; at 2 only that final line, without the bar;
  -- at 0 nothing. 'logs()' gives the values to show (read only when drawn).
  local function progress(verbose, steps, names)
    local p = {t0 = now(), last = 0}
    function p.step(step, logs)
      if verbose ~= 1 then return end
      local t = now()
      if t - p.last > 0.1 or step == steps then
        p.last = t
        local eta = steps and (t - p.t0) / step * (steps - step) or 0
        io.write("\r", bar(step, steps), steps and step < steps and " - ETA: " .. fmt_time(eta) or "",
          logs and fmt_logs(names, logs()) or "", "   ")
        io.flush()
      end
    end
    function p.done(step, logs)
      if verbose == 0 then return end
      local elapsed = now() - p.t0
      local head = verbose == 1 and "\r" .. bar(step, step) or sfmt("%d/%d", step, step)
      io.write(head, " - ", fmt_time(elapsed), " ", fmt_step(elapsed / math.max(step, 1)),
        logs and fmt_logs(names, logs) or "", "\n")
      io.flush()
    end
    return p
  end
  -- }====

  local function metric_names(st)
    local names = {"loss"}
    for _, m in ipairs(st.metrics) do names[#names + 1] = m.name end
    return names
  end

  local function read_logs(st, prefix)
    local logs = {}
    prefix = prefix or ""
    logs[prefix .. "loss"] = st.loss_tracker:result():item()
    for _, m in ipairs(st.metrics) do logs[prefix .. m.name] = m:result():item() end
    return logs
  end

  local function reset_metrics(st)
    st.loss_tracker:reset_state()
    for _, m in ipairs(st.metrics) do m:reset_state() end
  end

  -- The batch size as a float32 scalar tensor (an argument of the traced
  -- steps, so a partial batch needs no run-time shape), cached per size.
  local size_cache = setmetatable({}, {__mode = "v"})
  local function batch_size_of(x)
    local n = x:_dims()[1] or 0
    local t = size_cache[n]
    if not t then
      t = tf.constant(n, tf.float32)
      size_cache[n] = t
    end
    return t
  end

  local function wrap(st, f, name)
    if st.run_eagerly then return f end
    return tf.fn(f, {reduce_retracing = true, name = name})
  end

  local function train_function(model, st)
    if st.train_fn then return st.train_fn end
    local function step(x, y, bs)
      local tape = tf.GradientTape()
      local pred, scaled
      local opt = st.optimizer
      local loss = tape:record(function()
        pred = model(x, {training = true})
        local l = st.loss(y, pred)
        local extra = model.losses
        if type(extra) == "table" then for _, e in ipairs(extra) do l = l + e end end
        -- a LossScaleOptimizer differentiates the scaled loss
        if opt.get_scaled_loss then scaled = opt:get_scaled_loss(l) end
        return l
      end)
      local vars = model.trainable_variables
      local grads = tape:gradient(scaled or loss, vars)
      if scaled then grads = opt:get_unscaled_gradients(grads) end
      st.optimizer:apply_gradients(grads, vars)
      st.loss_tracker:update_state(loss, bs)
      for _, m in ipairs(st.metrics) do m:update_state(y, pred) end
      return loss
    end
    st.train_fn = wrap(st, step, "train_step")
    return st.train_fn
  end

  local function test_function(model, st)
    if st.test_fn then return st.test_fn end
    st.test_fn = wrap(st, function(x, y, bs)
      local pred = model(x, {training = false})
      local loss = st.loss(y, pred)
      st.loss_tracker:update_state(loss, bs)
      for _, m in ipairs(st.metrics) do m:update_state(y, pred) end
      return loss
    end, "test_step")
    return st.test_fn
  end

  local function predict_function(model, st)
    st = st or rawget(model, "_predict_state")
    if not st then
      st = {}
      rawset(model, "_predict_state", st)
    end
    if st.predict_fn then return st.predict_fn end
    st.predict_fn = wrap(st, function(x) return model(x, {training = false}) end, "predict_step")
    return st.predict_fn
  end

  local function callback_list(cbs, model, params, history)
    local list = {}
    for _, c in ipairs(cbs or {}) do
      if type(c) == "function" then
        local f = c
        c = keras.callbacks.LambdaCallback{on_epoch_end = f}
      elseif type(c) ~= "table" then
        raise("TypeError", sfmt("fit: a callback must be a Callback object or a function, got %s", type(c)), 3)
      end
      list[#list + 1] = c
    end
    list[#list + 1] = history
    for _, c in ipairs(list) do
      if c.set_model then c:set_model(model) else c.model = model end
      if c.set_params then c:set_params(params) else c.params = params end
    end
    return function(hook, ...)
      for _, c in ipairs(list) do
        local f = c[hook]
        if f then f(c, ...) end
      end
    end
  end

  --- Run 'fn' over 'src' once (evaluation); returns nothing (state in metrics).
  local function run_test(model, st, src, each)
    reset_metrics(st)
    local fn = test_function(model, st)
    local step = 0
    for x, y in src:iter(false) do
      fn(x, y, batch_size_of(x))
      step = step + 1
      if each and each(step) then break end
    end
    return step
  end

  local EVALUATE_KEYS = {batch_size = true, verbose = true, return_dict = true, steps = true}
  local PREDICT_KEYS = {batch_size = true, verbose = true, steps = true}
  local function check_keys(what, opts, keys)
    for k in pairs(opts) do
      if not keys[k] then
        local names = {}
        for n in pairs(keys) do names[#names + 1] = n end
        table.sort(names)
        raise("TypeError", sfmt("%s: unknown option '%s' (accepted: %s)", what, tostring(k),
          table.concat(names, ", ")), 3)
      end
    end
  end

  local FIT_KEYS = {epochs = true, batch_size = true, validation_data = true, validation_split = true,
                    shuffle = true, callbacks = true, verbose = true, initial_epoch = true,
                    steps_per_epoch = true, validation_batch_size = true}

  --- model:fit(x, y, {epochs=1, batch_size=32, validation_data=, validation_split=0,
  -- shuffle=true, callbacks=, verbose="auto", initial_epoch=0}) or model:fit(ds, {...}).
  -- Returns a History ({history = {loss = {...}, ...}, epoch = {...}}).
  function T.fit(model, x, y, opts)
    local st = state_of(model, "training")
    if is_dataset(x) and (type(y) == "table" and not tf.is_tensor(y) and getmetatable(y) == nil) and opts == nil then
      opts, y = y, nil
    end
    opts = opts or {}
    check_keys("fit", opts, FIT_KEYS)
    local epochs = opts.epochs or 1
    local batch_size = opts.batch_size or 32
    local verbose = verbosity(opts.verbose, "fit")

    local val_src
    if opts.validation_split and opts.validation_split > 0 then
      if is_dataset(x) then
        raise("ValueError", "fit: validation_split is only supported for tensor inputs, not a dataset", 2)
      end
      if opts.validation_split >= 1 then raise("ValueError", "fit: validation_split must be in [0, 1)", 2) end
      local xt, yt = as_tensor(x), as_tensor(y)
      local n = xt.shape[1]
      local split = math.floor(n * (1 - opts.validation_split))
      if split < 1 or split >= n then
        raise("ValueError", sfmt("fit: validation_split %g leaves no samples on one side of %d", opts.validation_split, n), 2)
      end
      x, y = xt[{{1, split}}], yt[{{1, split}}]
      val_src = tensor_source(xt[{{split + 1, n}}], yt[{{split + 1, n}}], opts.validation_batch_size or batch_size, false)
    end
    if opts.validation_data ~= nil then
      local vd = opts.validation_data
      if is_dataset(vd) then
        val_src = dataset_source(vd)
      elseif type(vd) == "table" and not tf.is_tensor(vd) then
        val_src = tensor_source(as_tensor(vd[1]), as_tensor(vd[2]), opts.validation_batch_size or batch_size, false)
      else
        raise("TypeError", "fit: validation_data must be {x_val, y_val} or a dataset", 2)
      end
    end

    local src = make_source("fit", x, y, batch_size, opts.shuffle)
    local steps = opts.steps_per_epoch or src.steps
    local history = keras.callbacks.History()
    local params = {epochs = epochs, steps = steps, verbose = verbose}
    local cb = callback_list(opts.callbacks, model, params, history)
    local names = metric_names(st)
    local train = train_function(model, st)
    rawset(model, "stop_training", false)
    cb("on_train_begin", {})
    for epoch = (opts.initial_epoch or 0) + 1, epochs do
      reset_metrics(st)
      cb("on_epoch_begin", epoch, {})
      if verbose == 1 then io.write(sfmt("Epoch %d/%d\n", epoch, epochs)) end
      local t0 = now()
      local shown = progress(verbose, steps, names)
      local function logs_now() return read_logs(st) end
      local step = 0
      for xb, yb in src:iter(opts.shuffle ~= false) do
        step = step + 1
        cb("on_train_batch_begin", step, {})
        train(xb, yb, batch_size_of(xb))
        cb("on_train_batch_end", step, {})
        shown.step(step, logs_now)
        if rawget(model, "stop_training") then break end
        if opts.steps_per_epoch and step >= opts.steps_per_epoch then break end
      end
      local elapsed = now() - t0
      if step == 0 then raise("ValueError", "fit: the training data produced no batches", 2) end
      src.steps = src.steps or step
      steps = steps or step
      local logs = read_logs(st)
      if val_src then
        run_test(model, st, val_src)
        for k, v in pairs(read_logs(st, "val_")) do logs[k] = v end
      end
      if verbose == 1 then
        local vnames = {}
        for _, k in ipairs(names) do vnames[#vnames + 1] = k end
        if val_src then for _, k in ipairs(names) do vnames[#vnames + 1] = "val_" .. k end end
        io.write("\r", bar(step, steps), " - ", fmt_time(elapsed), " ", fmt_step(elapsed / step),
          fmt_logs(vnames, logs), "\n")
        io.flush()
      elseif verbose == 2 then
        local vnames = {}
        for _, k in ipairs(names) do vnames[#vnames + 1] = k end
        if val_src then for _, k in ipairs(names) do vnames[#vnames + 1] = "val_" .. k end end
        io.write(sfmt("Epoch %d/%d - %d steps - %s %s%s\n", epoch, epochs, step, fmt_time(elapsed),
          fmt_step(elapsed / step), fmt_logs(vnames, logs)))
        io.flush()
      end
      cb("on_epoch_end", epoch, logs)
      if rawget(model, "stop_training") then break end
    end
    cb("on_train_end", {})
    rawset(model, "history", history)
    return history
  end

  --- model:evaluate(x, y, {batch_size=32, verbose="auto", return_dict=false, steps=}) or
  -- model:evaluate(ds, {...}): the loss then each metric's value (Lua
  -- numbers), or a table {loss=, <metric>=} with return_dict. verbose as
  -- Keras: 1 a progress bar, 2 one line, 0 silent; "auto" 1 on a terminal, else 2.
  function T.evaluate(model, x, y, opts)
    local st = state_of(model, "evaluating")
    if is_dataset(x) and type(y) == "table" and not tf.is_tensor(y) and getmetatable(y) == nil and opts == nil then
      opts, y = y, nil
    end
    opts = opts or {}
    check_keys("evaluate", opts, EVALUATE_KEYS)
    local verbose = verbosity(opts.verbose, "evaluate")
    local src = make_source("evaluate", x, y, opts.batch_size or 32, false)
    local names = metric_names(st)
    local steps = opts.steps or src.steps
    local bar_ = progress(verbose, steps, names)
    local n = run_test(model, st, src, function(step)
      bar_.step(step, function() return read_logs(st) end)
      if opts.steps and step >= opts.steps then return true end
    end)
    local logs = read_logs(st)
    bar_.done(n, logs)
    if opts.return_dict then return logs end
    local r = {logs.loss}
    for _, m in ipairs(st.metrics) do r[#r + 1] = logs[m.name] end
    return table.unpack(r)
  end

  --- model:predict(x, {batch_size=32, verbose="auto", steps=}) or
  -- model:predict(ds, {...}): the outputs of every batch concatenated (one
  -- tensor). verbose as in evaluate.
  function T.predict(model, x, opts)
    opts = opts or {}
    check_keys("predict", opts, PREDICT_KEYS)
    local verbose = verbosity(opts.verbose, "predict")
    local st = rawget(model, "_compile_state")
    local fn = predict_function(model, st)
    local outs = {}
    local it, steps
    if is_dataset(x) then
      it = x:iter()
      local c = x:cardinality()
      steps = c >= 0 and c or nil
    else
      local src = tensor_source(as_tensor(x), nil, opts.batch_size or 32, false)
      it, steps = src:iter(false), src.steps
    end
    if opts.steps then steps = math.min(steps or opts.steps, opts.steps) end
    local bar_ = progress(verbose, steps)
    for xb in it do
      outs[#outs + 1] = fn(xb)
      bar_.step(#outs)
      if opts.steps and #outs >= opts.steps then break end
    end
    if #outs == 0 then raise("ValueError", "predict: the input produced no batches", 2) end
    bar_.done(#outs)
    if #outs == 1 then return outs[1] end
    return tf.concat(outs, 1)
  end

  --- Install compile/fit/evaluate/predict on a model class.
  function T.install(Model)
    Model.compile = T.compile
    Model.fit = T.fit
    Model.evaluate = T.evaluate
    Model.predict = T.predict
  end

  if keras.Model then
    T.install(keras.Model)
  else
    -- install when tf.keras.Model is assigned later (whatever loads first)
    local mt = getmetatable(keras)
    if mt == nil then
      setmetatable(keras, {__newindex = function(t, k, v)
        rawset(t, k, v)
        if k == "Model" and type(v) == "table" then T.install(v) end
      end})
    end
  end
end
