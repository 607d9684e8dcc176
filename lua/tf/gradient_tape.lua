--- Automatic differentiation: tf.GradientTape, tf.custom_gradient,
-- tf.grad / tf.value_and_grad (JAX/TF.js-style helpers). The engine's C tape
-- records ops; gradient functions live beside each op in core.
return function(tf)
  local core = tf.core
  local raise = tf.errors.raise
  local Variable = tf.Variable.mt

  -- {==== Structures: nested tables of tensors/variables <-> flat lists
  local sorted_keys = require("tf.util").sorted_keys

  local function flatten(x, out)
    if tf.is_tensor(x) or getmetatable(x) == Variable then
      out[#out + 1] = x
    elseif type(x) == "table" then
      for _, k in ipairs(sorted_keys(x)) do flatten(x[k], out) end
    elseif x ~= nil then
      raise("TypeError", "GradientTape: expected a tensor, a variable or a table of them, got " .. type(x), 4)
    end
    return out
  end

  local function unflatten(x, flat, pos)
    if tf.is_tensor(x) or getmetatable(x) == Variable then
      pos[1] = pos[1] + 1
      return flat[pos[1]]
    end
    local out = {}
    for _, k in ipairs(sorted_keys(x)) do out[k] = unflatten(x[k], flat, pos) end
    return out
  end

  local function handle_of(x)
    if getmetatable(x) == Variable then return x._handle end
    return x
  end

  -- sources -> flat list and the handles the engine differentiates against
  local function source_list(sources)
    local flat, handles = flatten(sources, {}), {}
    for i, s in ipairs(flat) do handles[i] = handle_of(s) end
    return flat, handles
  end

  -- results (one per flat source) in the structure of 'sources'
  local function restructure(sources, res)
    if tf.is_tensor(sources) or getmetatable(sources) == Variable then return res[1] end
    return unflatten(sources, res, {0})
  end
  -- }====

  local GradientTape = {}
  GradientTape.__index = GradientTape
  GradientTape.__name = "tf.GradientTape"

  local TAPE_OPTIONS = {persistent = true, watch_accessed_variables = true}

  -- Argument checks shared by the API below: TypeErrors blamed on the caller.
  local function check_opts(opts, what)
    if opts ~= nil and type(opts) ~= "table" then
      raise("TypeError", ("%s: options must be a table, got %s"):format(what, type(opts)), 3)
    end
    return opts or {}
  end
  local function check_fn(fn, what, arg)
    if type(fn) ~= "function" and not (getmetatable(fn) or {}).__call then
      raise("TypeError", ("%s: '%s' must be a function, got %s"):format(what, arg, type(fn)), 3)
    end
  end
  local function check_target(x, what, arg)
    if tf.is_variable(x) then return x:value() end
    if not tf.is_tensor(x) then
      raise("TypeError", ("%s: '%s' must be a tensor or variable, got %s"):format(what, arg, type(x)), 3)
    end
    return x
  end

  --- tf.GradientTape({persistent=false, watch_accessed_variables=true})
  function tf.GradientTape(opts)
    opts = check_opts(opts, "GradientTape")
    for k in pairs(opts) do
      if not TAPE_OPTIONS[k] then
        raise("TypeError", ("GradientTape: unknown option '%s' (accepted: persistent, watch_accessed_variables)"):format(tostring(k)), 2)
      end
    end
    local watch = opts.watch_accessed_variables
    if watch == nil then watch = true end
    return setmetatable({_tape = core.tape_new(opts.persistent or false, watch),
                         persistent = opts.persistent or false}, GradientTape)
  end

  function GradientTape.__tostring(t)
    return ("<tf.GradientTape persistent=%s recording=%s>"):format(tostring(t.persistent),
      tostring(core.tape_recording(t._tape)))
  end

  local Recording = {__name = "tf.GradientTape.recording"}
  Recording.__index = Recording
  Recording.__close = function(r) if core.tape_recording(r.tape._tape) then core.tape_pop(r.tape._tape) end end

  --- Start recording; returns a to-be-closed value:
  -- `do local _ <close> = tape:start() ... end`
  function GradientTape:start()
    core.tape_push(self._tape)
    return setmetatable({tape = self}, Recording)
  end
  GradientTape.__enter = GradientTape.start

  --- Stop recording (the tape keeps what it recorded).
  function GradientTape:stop()
    core.tape_pop(self._tape)
  end

  --- Run fn(...) while recording; returns what fn returns.
  function GradientTape:record(fn, ...)
    check_fn(fn, "GradientTape.record", "fn")
    core.tape_push(self._tape)
    local res = table.pack(pcall(fn, ...))
    core.tape_pop(self._tape)
    if not res[1] then error(res[2], 0) end
    return table.unpack(res, 2, res.n)
  end

  --- Watch a tensor, a variable, or a (nested) table of them.
  function GradientTape:watch(x)
    for _, t in ipairs(flatten(x, {})) do core.tape_watch(self._tape, handle_of(t)) end
  end

  local Paused = {__name = "tf.GradientTape.stop_recording"}
  Paused.__close = function() core.pause_tapes(false) end

  --- Pause recording on every tape: `do local _ <close> = tape:stop_recording() ... end`
  -- or tape:stop_recording(function() ... end).
  function GradientTape:stop_recording(fn)
    if fn ~= nil then check_fn(fn, "GradientTape.stop_recording", "fn") end
    core.pause_tapes(true)
    if fn == nil then return setmetatable({}, Paused) end
    local res = table.pack(pcall(fn))
    core.pause_tapes(false)
    if not res[1] then error(res[2], 0) end
    return table.unpack(res, 2, res.n)
  end

  --- Forget everything recorded and watched.
  function GradientTape:reset()
    core.tape_reset(self._tape)
  end

  -- source (variable or tensor) -> the op where its last gradient() found
  -- no gradient (ltf_tape_gradient_stop), for the "No gradients provided"
  -- error of optimizers: kept per source, so several tapes cannot mix them
  -- up, and weakly, so it keeps nothing alive.
  local stops = setmetatable({}, {__mode = "k"})
  function core.internal.gradient_stop(source) return stops[source] end

  local GRAD_OPTIONS = {output_gradients = true, unconnected_gradients = true}
  local JACOBIAN_OPTIONS = {unconnected_gradients = true, experimental_use_pfor = true, parallel_iterations = true}

  local function parse_grad_opts(opts, what, accepted)
    if opts ~= nil and type(opts) ~= "table" then
      raise("TypeError", ("%s: options must be a table, got %s"):format(what, type(opts)), 3)
    end
    opts = opts or {}
    accepted = accepted or GRAD_OPTIONS
    for k in pairs(opts) do
      if not accepted[k] then
        local names = {}
        for n in pairs(accepted) do names[#names + 1] = n end
        table.sort(names)
        raise("TypeError", ("%s: unknown option '%s' (accepted: %s)"):format(what, tostring(k), table.concat(names, ", ")), 3)
      end
    end
    local pf = opts.experimental_use_pfor
    if pf ~= nil and type(pf) ~= "boolean" then
      raise("TypeError", ("%s: experimental_use_pfor must be a boolean, got %s"):format(what, type(pf)), 3)
    end
    local uc = opts.unconnected_gradients or "none"
    if uc ~= "none" and uc ~= "zero" then
      raise("ValueError", ("%s: unconnected_gradients must be \"none\" or \"zero\", got %q"):format(what, tostring(uc)), 3)
    end
    return opts, uc == "zero" and 1 or 0
  end

  --- d(target)/d(sources). A non-scalar target is summed (as TensorFlow).
  -- `sources` may be a tensor, a variable or a nested table; the result has
  -- the same structure. Options: output_gradients (same structure as
  -- target), unconnected_gradients = "none" (nil) | "zero".
  function GradientTape:gradient(target, sources, opts)
    if target == nil then raise("ValueError", "GradientTape.gradient: target is nil", 2) end
    if sources == nil then raise("ValueError", "GradientTape.gradient: sources is nil", 2) end
    local flags
    opts, flags = parse_grad_opts(opts, "GradientTape.gradient")
    local targets = flatten(target, {})
    for i, t in ipairs(targets) do targets[i] = handle_of(t) == t and t or t:value() end
    local flat, handles = source_list(sources)
    local ograds = opts.output_gradients and flatten(opts.output_gradients, {}) or nil
    local res, stop = core.tape_gradient(self._tape, targets, handles, ograds, flags)
    for i, s in ipairs(flat) do stops[s] = res[i] == nil and stop or nil end
    return restructure(sources, res)
  end

  -- A Jacobian is computed row by row: one gradient pass over the whole
  -- target per target element (per inner element for batch_jacobian), so
  -- its cost grows as rows x target elements. TensorFlow's default
  -- (experimental_use_pfor = true) vectorizes the rows and holds that many
  -- output-gradient elements at once; past PFOR_LIMIT of them luatf refuses,
  -- as TensorFlow runs out of memory there, and experimental_use_pfor =
  -- false computes it anyway (TensorFlow's while_loop form: slow, bounded
  -- memory).
  local PFOR_LIMIT = 1 << 26
  local function check_rows(what, opts, rows, total, dtype)
    if opts.experimental_use_pfor == false or rows * total <= PFOR_LIMIT then return end
    local bytes = rows * total * (dtype.size or 4)
    raise("ResourceExhaustedError", ("%s: %d rows of output gradients over a target of %d elements (%.1f GiB "
      .. "vectorized, %d gradient passes row by row): pass {experimental_use_pfor = false} to compute it row by row")
      :format(what, rows, total, bytes / (1 << 30), rows), 3)
  end

  --- Jacobian of `target` with respect to `sources`: shape target.shape ..
  -- source.shape per source (nil when unconnected, unless "zero").
  function GradientTape:jacobian(target, sources, opts)
    local flags
    opts, flags = parse_grad_opts(opts, "GradientTape.jacobian", JACOBIAN_OPTIONS)
    target = check_target(target, "GradientTape.jacobian", "target")
    if sources == nil then raise("ValueError", "GradientTape.jacobian: sources is nil", 2) end
    local flat, handles = source_list(sources)
    local tdims = target:_dims()
    local n = 1
    for _, d in ipairs(tdims) do n = n * d end
    if n == 0 then   -- an empty target: an empty Jacobian of shape target.shape .. source.shape
      core.tape_mark_used(self._tape)
      local out = {}
      for j, s in ipairs(flat) do
        local dims = {}
        for _, d in ipairs(tdims) do dims[#dims + 1] = d end
        for _, d in ipairs(handle_of(s) == s and s:_dims() or s.shape:as_list()) do dims[#dims + 1] = d end
        out[j] = tf.zeros(dims, s.dtype)
      end
      return restructure(sources, out)
    end
    check_rows("GradientTape.jacobian", opts, n, n, target.dtype)
    local rows = {}
    for j = 1, #flat do rows[j] = {} end
    for i = 1, n do
      local og = tf.reshape(tf.one_hot(tf.constant({i}), n, {dtype = target.dtype}), tdims)
      local res = core.tape_gradient(self._tape, {target}, handles, {og}, flags | 2)
      for j = 1, #flat do rows[j][i] = res[j] or false end
    end
    core.tape_mark_used(self._tape)
    local out = {}
    for j, s in ipairs(flat) do
      local sd = handle_of(s) == s and s:_dims() or s.shape:as_list()
      if rows[j][1] == false then
        out[j] = nil
      else
        local dims = {}
        for _, d in ipairs(tdims) do dims[#dims + 1] = d end
        for _, d in ipairs(sd) do dims[#dims + 1] = d end
        out[j] = tf.reshape(tf.stack(rows[j], 1), dims)
      end
    end
    return restructure(sources, out)
  end

  --- Jacobian of each example: target [b, ...] and source [b, ...] give
  -- [b, target dims..., source dims...] (examples are independent).
  function GradientTape:batch_jacobian(target, source, opts)
    local flags
    opts, flags = parse_grad_opts(opts, "GradientTape.batch_jacobian", JACOBIAN_OPTIONS)
    target = check_target(target, "GradientTape.batch_jacobian", "target")
    source = check_target(source, "GradientTape.batch_jacobian", "source")
    local tdims, sdims = target:_dims(), source:_dims()
    if #tdims < 1 or #sdims < 1 or tdims[1] ~= sdims[1] then
      raise("ValueError", ("batch_jacobian: target %s and source %s must share the first (batch) dimension"):format(
        tostring(target.shape), tostring(source.shape)), 2)
    end
    local b, inner = tdims[1], 1
    for i = 2, #tdims do inner = inner * tdims[i] end
    local dims = {b}
    for i = 2, #tdims do dims[#dims + 1] = tdims[i] end
    for i = 2, #sdims do dims[#dims + 1] = sdims[i] end
    if b * inner == 0 then   -- an empty target: an empty result
      core.tape_mark_used(self._tape)
      return tf.zeros(dims, source.dtype)
    end
    check_rows("GradientTape.batch_jacobian", opts, inner, b * inner, target.dtype)
    local cols = {}
    for j = 1, inner do
      local og = tf.reshape(tf.tile(tf.reshape(tf.one_hot(tf.constant({j}), inner, {dtype = target.dtype}), {1, inner}), {b, 1}), tdims)
      local res = core.tape_gradient(self._tape, {target}, {handle_of(source)}, {og}, flags | 2)
      if not res[1] then
        core.tape_mark_used(self._tape)
        return nil
      end
      cols[j] = tf.reshape(res[1], {b, -1})
    end
    core.tape_mark_used(self._tape)
    return tf.reshape(tf.stack(cols, 2), dims)
  end

  -- {==== tf.custom_gradient
  local read_logs = tf.Variable.read_logs

  -- The gradients grad_fn gives for output gradients 'dys' (packed, no
  -- nils): one per entry of 'inputs' (the tensor arguments, then the
  -- handles of the variables read), nil where it gives none.
  local function call_grad(grad_fn, dys, inputs, ninputs, vars)
    local grads = {}
    if #vars > 0 then
      dys[dys.n + 1] = {variables = vars}
      local gin, gvars = grad_fn(table.unpack(dys, 1, dys.n + 1))
      if tf.is_tensor(gin) then gin = {gin} end
      for i = 1, ninputs do grads[i] = gin and gin[i] end
      for i = 1, #vars do grads[ninputs + i] = gvars and gvars[i] end
    else
      local g = table.pack(grad_fn(table.unpack(dys, 1, dys.n)))
      if g.n == 1 and type(g[1]) == "table" and not tf.is_tensor(g[1]) then g = g[1] end
      for i = 1, ninputs do grads[i] = g[i] end
    end
    for i = 1, #inputs do   -- nil is "no gradient"; anything else must be a tensor
      local gi = grads[i]
      if gi ~= nil and not tf.is_tensor(gi) then
        if type(gi) ~= "number" then
          raise("TypeError", ("custom_gradient: the gradient function returned a %s for input %d; expected a "
            .. "tensor or nil"):format(type(gi), i))
        end
        grads[i] = tf.constant(gi, i > ninputs and vars[i - ninputs].dtype or inputs[i].dtype)
      end
    end
    return grads
  end

  -- While a tf.fn traces: grad_fn is traced now into a function graph (its
  -- placeholders the output gradients; symbolic tensors of the trace it
  -- uses are captured) and one custom_gradient node carries it, so the
  -- graph's gradient (a tape around the call, or a SavedModel loaded
  -- later) uses it with no Lua closure. Returns the node's outputs.
  local function traced_custom(grad_fn, inputs, ninputs, vars, outputs)
    local G = core.graph_begin("custom_gradient", true)
    local ok, res = pcall(function()
      local dys = {n = #outputs}
      for i, o in ipairs(outputs) do dys[i] = core.graph_placeholder(G, o.dtype, o:_dims(), "dy") end
      local grads = call_grad(grad_fn, dys, inputs, ninputs, vars)
      local outs, has = {}, {}
      for i = 1, #inputs do
        has[i] = grads[i] ~= nil
        if has[i] then outs[#outs + 1] = grads[i] end
      end
      return {outs = outs, has = has}
    end)
    local err = not ok and res
    if ok then
      local ended, e = pcall(core.graph_end, G, res.outs)
      if not ended then err = e end
    end
    if err then
      core.graph_abort(G)
      error(err, 0)
    end
    return table.pack(core.internal.custom_gradient(G, inputs, res.has, outputs, core.graph_captured(G)))
  end

  --- tf.custom_gradient(f): f(...) returns y and grad_fn. grad_fn(dy...)
  -- returns the input gradients (one value per tensor argument, or a table);
  -- when f read variables, grad_fn(dy..., {variables = vars}) returns
  -- (input gradients, table of variable gradients), as TensorFlow's.
  -- Eagerly the tapes keep grad_fn; inside tf.fn it is traced into the graph.
  function tf.custom_gradient(f)
    check_fn(f, "custom_gradient", "f")
    return function(...)
      local args = table.pack(...)
      local log = {}
      read_logs[#read_logs + 1] = log
      core.pause_tapes(true)
      local res = table.pack(pcall(f, ...))
      core.pause_tapes(false)
      table.remove(read_logs)
      if not res[1] then error(res[2], 0) end
      local y, grad_fn = res[2], res[3]
      if type(grad_fn) ~= "function" then
        raise("TypeError", "custom_gradient: f must return (y, grad_fn)", 2)
      end
      local inputs = {}
      for i = 1, args.n do
        local a = args[i]
        if tf.is_tensor(a) then inputs[#inputs + 1] = a
        elseif getmetatable(a) == Variable then inputs[#inputs + 1] = a:value() end
      end
      local ninputs = #inputs
      local vars = {}
      for v in pairs(log) do vars[#vars + 1] = v end
      table.sort(vars, function(a, b) return select(5, core.variable_info(a._handle)) < select(5, core.variable_info(b._handle)) end)
      for _, v in ipairs(vars) do inputs[#inputs + 1] = v._handle end
      local outputs = tf.is_tensor(y) and {y} or y
      local traced = false
      for _, o in ipairs(outputs) do
        if tf.is_tensor(o) and o:is_symbolic() then traced = true end
      end
      if traced then
        local outs = traced_custom(grad_fn, inputs, ninputs, vars, outputs)
        if tf.is_tensor(y) then return outs[1] end
        return {table.unpack(outs, 1, outs.n)}
      end
      core.record_custom(inputs, outputs, function(...)
        local dys = table.pack(...)
        for i = 1, dys.n do
          if dys[i] == nil then dys[i] = tf.zeros_like(outputs[i]) end
        end
        return call_grad(grad_fn, dys, inputs, ninputs, vars)
      end)
      return y
    end
  end
  -- }====

  -- {==== tf.grad / tf.value_and_grad
  local function to_float_tensor(x)
    if tf.is_tensor(x) or getmetatable(x) == Variable then return x end
    return tf.constant(x, tf.float32)
  end

  --- tf.value_and_grad(f, {argnums=1}) returns a function computing
  -- f(...) and its gradient with respect to argument `argnums` (an index, or
  -- a table of indices: then a table of gradients).
  function tf.value_and_grad(f, opts)
    check_fn(f, "value_and_grad", "f")
    opts = check_opts(opts, "value_and_grad")
    local argnums = opts.argnums or 1
    return function(...)
      local args = table.pack(...)
      local idx = type(argnums) == "table" and argnums or {argnums}
      for _, i in ipairs(idx) do args[i] = to_float_tensor(args[i]) end
      local tape = tf.GradientTape()
      for _, i in ipairs(idx) do tape:watch(args[i]) end
      local value = tape:record(f, table.unpack(args, 1, args.n))
      local sources = {}
      for k, i in ipairs(idx) do sources[k] = args[i] end
      local grads = tape:gradient(value, sources, {unconnected_gradients = "zero"})
      if type(argnums) == "table" then return value, grads end
      return value, grads[1]
    end
  end

  --- tf.grad(f, {argnums=1}): like value_and_grad, returning only the gradient.
  function tf.grad(f, opts)
    local vg = tf.value_and_grad(f, opts)
    return function(...)
      local _, g = vg(...)
      return g
    end
  end
  -- }====
end
