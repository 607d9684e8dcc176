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

  -- tf.distribute's hooks (lua/tf/distribute/init.lua), once it is loaded
  local function dist_hooks() return core.internal.distribute_fit end
  -- the strategy in scope, when tf.distribute is loaded (nil: the default)
  local function dist_now()
    local d = dist_hooks()
    return d and d.current()
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
    st.metrics = {}
    if not T._multi_output(model, opts) then
      st.loss = keras.losses.get(opts.loss)
      local ms = opts.metrics or {}
      if type(ms) == "string" or (type(ms) == "table" and ms.update_state) then ms = {ms} end
      for i, m in ipairs(ms) do st.metrics[i] = resolve_metric(m, st.loss) end
    end
    st.loss_tracker = keras.metrics.Mean{name = "loss"}
    T._compile_outputs(model, st, opts)
    st.run_eagerly = opts.run_eagerly or false
    st.strategy = dist_now()   -- fit trains under the strategy compile ran in (as Keras)
    rawset(model, "_compile_state", st)
    rawset(model, "_compile_args", opts)      -- for model:save (lua/tf/keras/saving.lua: compile_config)
    rawset(model, "optimizer", st.optimizer)
    rawset(model, "compiled_loss", st.loss)
    rawset(model, "compiled_metrics", st.metrics)
    rawset(model, "stop_training", false)
    return model
  end
  -- }====

  -- {==== several outputs (functional models): per-output losses, loss
  -- weights and metrics, logged as Keras does ("loss", "<output>_loss",
  -- "<output>_<metric>")
  local function is_plain(v) return type(v) == "table" and getmetatable(v) == nil end
  local function is_loss_struct(v) return is_plain(v) and next(v) ~= nil end

  --- True when the model has several outputs or compile was given losses
  -- per output (an array or dict of them).
  function T._multi_output(model, opts)
    local names = rawget(model, "output_names")
    return (names ~= nil and #names > 1) or is_loss_struct(opts.loss) and names ~= nil
  end

  -- The entry of a per-output option (array by output index, dict by
  -- output name); a single value applies to every output.
  local function per_output(v, i, name)
    if not is_plain(v) then return v end
    if #v > 0 then return v[i] end
    return v[name]
  end

  function T._compile_outputs(model, st, opts)
    if not T._multi_output(model, opts) then return end
    local names = rawget(model, "output_names")
    local keys = rawget(model, "_output_keys")
    local dict_out = keys ~= nil and #keys > 0 and #rawget(model, "_output_structure") == 0
    if is_plain(opts.loss) then
      local known = {}
      for _, n in ipairs(names) do known[n] = true end
      for k in pairs(opts.loss) do
        if math.type(k) ~= "integer" and not known[k] then
          local ns = {}
          for i, n in ipairs(names) do ns[i] = "\"" .. n .. "\"" end
          raise("ValueError", sfmt("compile: unknown entry \"%s\" in 'loss': the model's outputs are [%s]",
            tostring(k), table.concat(ns, ", ")), 4)
        end
      end
      if #opts.loss > 0 and #opts.loss ~= #names then
        raise("ValueError", sfmt("compile: 'loss' has %d entries but the model has %d outputs", #opts.loss, #names), 4)
      end
    end
    local outs = {}
    local multi = #names > 1
    for i, name in ipairs(names) do
      local o = {name = name, index = i, key = dict_out and keys[i] or i}
      local l = per_output(opts.loss, i, name)
      if l ~= nil then o.loss = keras.losses.get(l) end
      local w = per_output(opts.loss_weights, i, name)
      o.weight = w or 1
      o.tracker = keras.metrics.Mean{name = name .. "_loss"}
      o.metrics = {}
      -- metrics: a flat array (each on every output), an array of arrays
      -- (per output) or a dict by output name
      local ms = opts.metrics
      if is_plain(ms) and #ms > 0 and is_plain(ms[1]) then ms = ms[i]
      elseif is_plain(ms) and #ms == 0 then ms = ms[name] end
      if ms ~= nil then
        if type(ms) == "string" or (type(ms) == "table" and ms.update_state) then ms = {ms} end
        for _, m in ipairs(ms) do
          local mo = resolve_metric(m, o.loss)
          o.metrics[#o.metrics + 1] = mo
          st.metrics[#st.metrics + 1] = mo
          st.metric_names = st.metric_names or {}
          st.metric_names[mo] = multi and (name .. "_" .. mo.name) or mo.name
        end
      end
      outs[i] = o
    end
    st.outputs = outs
    st.loss = function() error("internal: loss of a multi-output model") end
  end

  -- y for output o: an array by index, a dict by output name (or key), or
  -- the one tensor of a one-output model.
  local function y_of(st, y, o, what)
    if not is_plain(y) then
      if #st.outputs == 1 then return y end
      raise("ValueError", sfmt("%s: the model has %d outputs; give y as an array or a dict keyed by output name",
        what, #st.outputs), 5)
    end
    local v = y[o.name]
    if v == nil then v = y[o.key] end
    if v == nil and #y > 0 then v = y[o.index] end
    return v
  end
  local function pred_of(pred, o)
    if not is_plain(pred) then return pred end
    return pred[o.key]
  end

  --- The total loss (weighted sum over outputs with a loss) and each
  -- output's loss (by output index).
  local function compute_loss(st, y, pred)
    if not st.outputs then return st.loss(y, pred), nil end
    local total, parts = nil, {}
    for _, o in ipairs(st.outputs) do
      if o.loss then
        local yt = y_of(st, y, o, "fit")
        if yt == nil then
          local ks = {}
          for k in pairs(y) do ks[#ks + 1] = "\"" .. tostring(k) .. "\"" end
          table.sort(ks)
          raise("ValueError", sfmt("fit: no target for output \"%s\" in y (keys [%s])", o.name,
            table.concat(ks, ", ")), 5)
        end
        local l = o.loss(yt, pred_of(pred, o))
        parts[o.index] = l
        local wl = o.weight == 1 and l or l * o.weight
        total = total and total + wl or wl
      end
    end
    return total, parts
  end

  local function update_metrics(st, y, pred, parts, bs)
    if not st.outputs then
      for _, m in ipairs(st.metrics) do m:update_state(y, pred) end
      return
    end
    for _, o in ipairs(st.outputs) do
      if parts[o.index] and #st.outputs > 1 then o.tracker:update_state(parts[o.index], bs) end
      if #o.metrics > 0 then
        local yt, pt = y_of(st, y, o, "fit"), pred_of(pred, o)
        for _, m in ipairs(o.metrics) do m:update_state(yt, pt) end
      end
    end
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
        local rt = tf.random.uniform({n}, 0, 1, tf.float64)
        local s = dist_now()
        if s then rt = dist_hooks().same(s, rt) end   -- every worker shuffles alike
        local r = rt:numpy()
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

  -- Several inputs or targets: a dict, or an array of tensors.
  local function is_struct(v)
    if not is_plain(v) then return false end
    for k, e in pairs(v) do
      if type(k) ~= "number" then return true end
      return tf.is_tensor(e) or tf.is_variable(e) or (is_plain(e) and is_struct(e))
    end
    return false
  end
  local function smap(v, fn)
    if is_plain(v) then
      local out = {}
      for k, e in pairs(v) do out[k] = smap(e, fn) end
      return out
    end
    return fn(v)
  end
  local function first_leaf(v)
    if not is_plain(v) then return v end
    if v[1] ~= nil then return first_leaf(v[1]) end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    for k, e in pairs(v) do if tostring(k) == keys[1] then return first_leaf(e) end end
  end
  T._is_struct, T._smap, T._first_leaf = is_struct, smap, first_leaf

  --- tensor_source for dicts / arrays of tensors (several inputs or outputs).
  local function struct_source(x, y, batch_size, shuffle)
    x = smap(x, as_tensor)
    if y ~= nil then y = smap(y, as_tensor) end
    local n = first_leaf(x).shape[1]
    local function check(v, what)
      smap(v, function(t)
        if t.shape[1] ~= n then
          raise("ValueError", sfmt("Data cardinality is ambiguous: x has %d samples, %s has an array of %s samples",
            n, what, tostring(t.shape[1])), 6)
        end
      end)
    end
    check(x, "x")
    if y ~= nil then check(y, "y") end
    local src = {steps = batch_count(n, batch_size), n = n}
    function src.iter(_, do_shuffle)
      local xs, ys = x, y
      if do_shuffle and shuffle ~= false then
        local perm = tf.random.shuffle(tf.range(1, n + 1))
        local s = dist_now()
        if s then perm = dist_hooks().same(s, perm) end
        xs = smap(x, function(t) return tf.gather(t, perm) end)
        if y ~= nil then ys = smap(y, function(t) return tf.gather(t, perm) end) end
      end
      local i = 0
      return function()
        if i >= n then return nil end
        local a, b = i + 1, math.min(i + batch_size, n)
        i = b
        local function cut(t) return t[{{a, b}}] end
        if ys == nil then return smap(xs, cut) end
        return smap(xs, cut), smap(ys, cut)
      end
    end
    return src
  end

  -- {==== batches on the device (TensorFlow 2's default placement, docs/devices.md)
  -- a to-be-closed /cpu:0 scope when the default placement would put work on a GPU
  local function host_scope()
    local hs = core.internal.host_scope
    return hs and hs() or nil
  end

  --- The batches of iterator 'it' made on the host (tf.data and Keras
  -- slicing run on the CPU, as in TensorFlow) and copied to /gpu:0 one batch
  -- ahead (prefetched: the next batch's copy is queued before the step on
  -- this one runs) when the default placement puts ops on a GPU; 'it'
  -- itself otherwise. make() returns 'it' (called on the host).
  local function device_batches(make)
    local probe = host_scope()
    if probe == nil then return make() end
    getmetatable(probe).__close(probe)
    local it
    do
      local _ <close> = host_scope()
      it = make()
    end
    local to_device = core.internal.to_default_device
    local function fetch()
      local r
      do
        local _ <close> = host_scope()
        r = table.pack(it())
      end
      if r[1] == nil then return nil end
      for i = 1, r.n do r[i] = to_device(r[i]) end
      return r
    end
    local ahead = fetch()
    return function()
      local cur = ahead
      if cur == nil then return nil end
      ahead = fetch()
      return table.unpack(cur, 1, cur.n)
    end
  end
  T._device_batches = device_batches
  -- }====

  local make_source_on_host
  --- make_source(fname, x, y, batch_size, shuffle) -> a source whose
  -- iter(...) gives device_batches: made on the host, copied to /gpu:0 one
  -- ahead under the default placement (its own iterator otherwise)
  local function make_source(fname, x, y, batch_size, shuffle)
    local src = make_source_on_host(fname, x, y, batch_size, shuffle)
    local iter = src.iter
    src.iter = function(self, ...)
      local args = table.pack(...)
      return device_batches(function() return iter(self, table.unpack(args, 1, args.n)) end)
    end
    return src
  end

  function make_source_on_host(fname, x, y, batch_size, shuffle)
    local hs <close> = host_scope()   -- host arrays stay on the host (batches are copied)
    if hs then   -- arrays on the GPU are copied to the host once, not at each batch
      local function host(v)
        if tf.is_tensor(v) and not v:is_symbolic() then return v:cpu() end
        if is_plain(v) then return smap(v, host) end
        return v
      end
      if not is_dataset(x) then x, y = host(x), host(y) end
    end
    if is_dataset(x) then
      if y ~= nil then raise("ValueError", sfmt("%s: `y` must not be given when x is a dataset", fname), 3) end
      return dataset_source(x)
    end
    if x == nil then raise("ValueError", sfmt("%s: no data given", fname), 3) end
    if is_struct(x) or is_struct(y) then return struct_source(x, y, batch_size, shuffle) end
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
    s = math.floor(s + 0.5)   -- whole seconds (%d refuses 61.5 // 60 % 60 with a fraction)
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
      local v = logs[k]
      if type(v) == "table" then
        local e = {}
        for i, x in ipairs(v) do e[i] = sfmt("%.4f", x) end
        parts[#parts + 1] = sfmt(" - %s: [%s]", k, table.concat(e, ", "))
      elseif v ~= nil then
        parts[#parts + 1] = sfmt(" - %s: %.4f", k, v)
      end
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

  local function mname(st, m) return st.metric_names and st.metric_names[m] or m.name end
  -- the per-output loss trackers (several outputs only)
  local function out_trackers(st)
    local out = {}
    if st.outputs and #st.outputs > 1 then
      for _, o in ipairs(st.outputs) do if o.loss then out[#out + 1] = o.tracker end end
    end
    return out
  end

  local function metric_names(st)
    local names = {"loss"}
    for _, t in ipairs(out_trackers(st)) do names[#names + 1] = t.name end
    for _, m in ipairs(st.metrics) do names[#names + 1] = mname(st, m) end
    return names
  end

  local function read_logs(st, prefix)
    local logs = {}
    prefix = prefix or ""
    logs[prefix .. "loss"] = st.loss_tracker:result():item()
    for _, t in ipairs(out_trackers(st)) do logs[prefix .. t.name] = t:result():item() end
    for _, m in ipairs(st.metrics) do
      local r = m:result()   -- a vector result (F1Score without average, Precision at several thresholds): a table
      logs[prefix .. mname(st, m)] = r.shape:rank() == 0 and r:item() or r:totable()
    end
    return logs
  end

  local function reset_metrics(st)
    st.loss_tracker:reset_state()
    for _, t in ipairs(out_trackers(st)) do t:reset_state() end
    for _, m in ipairs(st.metrics) do m:reset_state() end
  end

  -- The batch size as a float32 scalar tensor (an argument of the traced
  -- steps, so a partial batch needs no run-time shape), cached per size.
  local size_cache = setmetatable({}, {__mode = "v"})
  local function batch_size_of(x)
    x = first_leaf(x)
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
    -- rscale (distributed fit, a worker's share of the global batch not
    -- exactly 1/N of it): the loss differentiated is scaled by
    -- N * local rows / global rows, so the mean of the workers' gradients is
    -- the gradient of the global batch's mean loss
    local function step(x, y, bs, rscale)
      local tape = tf.GradientTape()
      local pred, parts, scaled, gl
      local opt = st.optimizer
      local loss = tape:record(function()
        pred = model(x, {training = true})
        local l
        l, parts = compute_loss(st, y, pred)
        local extra = model.losses
        if type(extra) == "table" then
          for _, e in ipairs(extra) do l = l + (e.dtype == l.dtype and e or tf.cast(e, l.dtype)) end
        end
        -- a LossScaleOptimizer differentiates the scaled loss
        if opt.get_scaled_loss then scaled = opt:get_scaled_loss(l) end
        if rscale then gl = (scaled or l) * tf.cast(rscale, l.dtype) end
        return l
      end)
      local vars = model.trainable_variables
      local grads = tape:gradient(gl or scaled or loss, vars)
      if scaled then grads = opt:get_unscaled_gradients(grads) end
      st.optimizer:apply_gradients(grads, vars)
      st.loss_tracker:update_state(loss, bs)
      update_metrics(st, y, pred, parts, bs)
      return loss
    end
    st.train_fn = wrap(st, step, "train_step")
    return st.train_fn
  end

  local function test_function(model, st)
    if st.test_fn then return st.test_fn end
    st.test_fn = wrap(st, function(x, y, bs)
      local pred = model(x, {training = false})
      local loss, parts = compute_loss(st, y, pred)
      local extra = model.losses
      if type(extra) == "table" then
        for _, e in ipairs(extra) do loss = loss + (e.dtype == loss.dtype and e or tf.cast(e, loss.dtype)) end
      end
      st.loss_tracker:update_state(loss, bs)
      update_metrics(st, y, pred, parts, bs)
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
  -- Under a multi-worker strategy ('strategy'), each worker evaluates its
  -- part of every batch (none: it skips the batch) and the metrics' states
  -- are then summed over the workers.
  local function run_test(model, st, src, each, strategy)
    reset_metrics(st)
    local fn = test_function(model, st)
    local step = 0
    local split = strategy ~= nil and strategy.num_replicas_in_sync > 1
    local dist = split and dist_hooks()
    for x, y in src:iter(false) do
      if split then
        local _, k = dist.share(dist.rows(x) or 0, strategy.cluster_resolver.task_id, strategy.num_replicas_in_sync)
        x, y = dist.split(strategy, x), dist.split(strategy, y)
        if k > 0 then fn(x, y, batch_size_of(x)) end
      else
        fn(x, y, batch_size_of(x))
      end
      step = step + 1
      if each and each(step) then break end
    end
    if split then
      local ms = {st.loss_tracker}
      for _, t in ipairs(out_trackers(st)) do ms[#ms + 1] = t end
      for _, m in ipairs(st.metrics) do ms[#ms + 1] = m end
      dist.sync_metrics(strategy, ms)
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
    -- under a multi-worker strategy: its scope for the whole fit (variables
    -- built lazily are mirrored), each global batch split over the workers,
    -- progress shown by the chief only
    local strategy = st.strategy or dist_now()
    local dist = strategy and dist_hooks()
    local _scope <close> = strategy and strategy:scope() or nil
    local split = strategy ~= nil and strategy.num_replicas_in_sync > 1
    if split and strategy.cluster_resolver.task_id ~= 0 then verbose = 0 end

    local val_src
    if opts.validation_split and opts.validation_split > 0 then
      if is_dataset(x) then
        raise("ValueError", "fit: validation_split is only supported for tensor inputs, not a dataset", 2)
      end
      if opts.validation_split >= 1 then raise("ValueError", "fit: validation_split must be in [0, 1)", 2) end
      local _ <close> = host_scope()
      local xt, yt = smap(x, as_tensor), smap(y, as_tensor)
      local n = first_leaf(xt).shape[1]
      local split = math.floor(n * (1 - opts.validation_split))
      if split < 1 or split >= n then
        raise("ValueError", sfmt("fit: validation_split %g leaves no samples on one side of %d", opts.validation_split, n), 2)
      end
      local function head(t) return t[{{1, split}}] end
      local function tail(t) return t[{{split + 1, n}}] end
      x, y = smap(xt, head), smap(yt, head)
      val_src = make_source("fit", smap(xt, tail), smap(yt, tail), opts.validation_batch_size or batch_size, false)
    end
    if opts.validation_data ~= nil then
      local vd = opts.validation_data
      if is_dataset(vd) then
        val_src = dataset_source(vd)
      elseif type(vd) == "table" and not tf.is_tensor(vd) then
        val_src = make_source("fit", vd[1], vd[2], opts.validation_batch_size or batch_size, false)
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
    rawset(model, "stop_training", false)
    cb("on_train_begin", {})
    -- after on_train_begin: a callback may have made the learning rate a
    -- variable (dropping the step traced before) or restored a backup
    local train = train_function(model, st)
    local first = (opts.initial_epoch or 0) + 1
    local resumed = rawget(model, "_resume_epoch")   -- BackupAndRestore: the last epoch completed
    if resumed then
      first = resumed + 1
      rawset(model, "_resume_epoch", nil)
    end
    -- batch logs are read when a callback looks at them (one read of the metrics, not one per batch)
    local function batch_logs()
      return setmetatable({}, {__index = function(t, k)
        if rawget(t, "loss") == nil then for kk, v in pairs(read_logs(st)) do rawset(t, kk, v) end end
        return rawget(t, k)
      end})
    end
    for epoch = first, epochs do
      reset_metrics(st)
      cb("on_epoch_begin", epoch, {})
      if verbose == 1 then io.write(sfmt("Epoch %d/%d\n", epoch, epochs)) end
      local t0 = now()
      local shown = progress(verbose, steps, names)
      local function logs_now() return read_logs(st) end
      local step = 0
      for xb, yb in src:iter(opts.shuffle ~= false) do
        local rscale
        if split then
          local size, n = strategy.num_replicas_in_sync, dist.rows(xb)
          if n and n < size then goto next_batch end   -- fewer rows than workers: skipped by all
          local _, k = dist.share(n, strategy.cluster_resolver.task_id, size)
          if k * size ~= n then rscale = tf.constant(k * size / n, tf.float32) end
          xb, yb = dist.split(strategy, xb), dist.split(strategy, yb)
        end
        step = step + 1
        cb("on_train_batch_begin", step, {})
        train(xb, yb, batch_size_of(xb), rscale)
        cb("on_train_batch_end", step, batch_logs())
        shown.step(step, logs_now)
        if rawget(model, "stop_training") then break end
        if opts.steps_per_epoch and step >= opts.steps_per_epoch then break end
        ::next_batch::
      end
      local elapsed = now() - t0
      if step == 0 then raise("ValueError", "fit: the training data produced no batches", 2) end
      src.steps = src.steps or step
      steps = steps or step
      if split then   -- the epoch's metrics over every worker's batches
        local ms = {st.loss_tracker}
        for _, t in ipairs(out_trackers(st)) do ms[#ms + 1] = t end
        for _, m in ipairs(st.metrics) do ms[#ms + 1] = m end
        dist.sync_metrics(strategy, ms)
      end
      local logs = read_logs(st)
      if val_src then
        run_test(model, st, val_src, nil, split and strategy or nil)
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
    -- under a multi-worker strategy: each batch split over the workers, the
    -- chief's progress only (as fit)
    local strategy = st.strategy or dist_now()
    if strategy and strategy.num_replicas_in_sync == 1 then strategy = nil end
    local _scope <close> = strategy and strategy:scope() or nil
    if strategy and strategy.cluster_resolver.task_id ~= 0 then verbose = 0 end
    local src = make_source("evaluate", x, y, opts.batch_size or 32, false)
    local names = metric_names(st)
    local steps = opts.steps or src.steps
    local bar_ = progress(verbose, steps, names)
    local n = run_test(model, st, src, function(step)
      bar_.step(step, function() return read_logs(st) end)
      if opts.steps and step >= opts.steps then return true end
    end, strategy)
    local logs = read_logs(st)
    bar_.done(n, logs)
    if opts.return_dict then return logs end
    local r = {}
    for i, k in ipairs(names) do r[i] = logs[k] end
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
      it = device_batches(function() return x:iter() end)
      local c = x:cardinality()
      steps = c >= 0 and c or nil
    else
      local src = make_source("predict", x, nil, opts.batch_size or 32, false)
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
    if is_plain(outs[1]) then                -- several outputs: each concatenated
      local out = {}
      for k in pairs(outs[1]) do
        local parts = {}
        for i, o in ipairs(outs) do parts[i] = o[k] end
        out[k] = tf.concat(parts, 1)
      end
      return out
    end
    return tf.concat(outs, 1)
  end

  -- for tf.keras.callbacks.ProgbarLogger
  T._progress, T._verbosity = progress, function(v) return verbosity(v, "ProgbarLogger") end
  function T._metric_names(model)
    local st = rawget(model, "_compile_state")
    return st and metric_names(st) or {"loss"}
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
