--- tf.summary: TensorBoard event files (docs/summary.md).
--
-- `local w = tf.summary.create_file_writer(logdir, {max_queue = 10,
-- flush_millis = 120000, filename_suffix = ".v2"})` opens
-- logdir/events.out.tfevents.<seconds>.<host>.<pid>.<n><suffix> (core/summary.c:
-- TFRecord records of Event protobufs, the first holding file_version
-- "brain.Event:2"). Summaries go to the default writer:
--
--     do local _ <close> = w:as_default() ... end      -- or w:as_default(function() ... end)
--     tf.summary.scalar("loss", 0.5, {step = 1})
--
-- scalar, histogram, image, text and audio write TF2's tensor summaries
-- (the value a TensorProto, plugin metadata for TensorBoard's scalars,
-- histograms, images, text and audio plugins). Each call is one
-- write_summary op: eagerly it writes at once; inside tf.fn it becomes a
-- node of the traced graph that writes at every call (the writer is named
-- by id, the step is a tensor: a tf.Variable given to set_step is read at
-- every call). With no default writer, or while record_if's condition is
-- false, nothing is written and the functions return false. A step comes
-- from the `step` keyword or tf.summary.experimental.set_step; neither is
-- a ValueError, as in TensorFlow.
return function(tf)
  local core = tf.core
  local internal = core.internal
  local raise = tf.errors.raise
  local sfmt = string.format

  local summary = tf.summary or {}
  tf.summary = summary
  local experimental = summary.experimental or {}
  summary.experimental = experimental

  local KIND = {scalar = 0, histogram = 1, image = 2, text = 3, audio = 4}   -- LTF_SUMMARY_*

  -- the default writer, step and recording condition (TensorFlow keeps
  -- them per thread; luatf runs one Lua thread per state)
  local state = {writer = nil, step = nil, cond = true}

  local function check_opts(fname, opts, known)
    if opts == nil then return {} end
    if type(opts) ~= "table" then raise("TypeError", sfmt("%s: options must be a table, got %s", fname, type(opts)), 3) end
    for k in pairs(opts) do
      if not known[k] then raise("TypeError", sfmt("%s: unknown option '%s'", fname, tostring(k)), 3) end
    end
    return opts
  end

  local function is_tensorlike(x)
    return tf.is_tensor(x) or (tf.is_variable and tf.is_variable(x))
  end

  -- {==== writers
  local Writer = {}
  Writer.__index = Writer
  Writer.__name = "tf.summary.SummaryWriter"
  summary.SummaryWriter = Writer
  function Writer.__tostring(w) return sfmt("<tf.summary.SummaryWriter '%s'>", w.logdir) end

  --- create_file_writer(logdir, {max_queue = 10, flush_millis = 120000,
  -- filename_suffix = ".v2", name =}): a writer with its event file created.
  function summary.create_file_writer(logdir, opts)
    if type(logdir) ~= "string" then
      raise("TypeError", sfmt("create_file_writer: 'logdir' must be a string, got %s", type(logdir)), 2)
    end
    opts = check_opts("create_file_writer", opts,
      {max_queue = true, flush_millis = true, filename_suffix = true, name = true, experimental_trackable = true})
    local max_queue = opts.max_queue or 10
    local flush_millis = opts.flush_millis or 120000
    if math.type(max_queue) ~= "integer" or max_queue < 0 then
      raise("ValueError", sfmt("create_file_writer: 'max_queue' must be an integer >= 0, got %s", tostring(max_queue)), 2)
    end
    if type(flush_millis) ~= "number" then
      raise("TypeError", sfmt("create_file_writer: 'flush_millis' must be a number, got %s", type(flush_millis)), 2)
    end
    local suffix = opts.filename_suffix
    if suffix ~= nil and type(suffix) ~= "string" then
      raise("TypeError", "create_file_writer: 'filename_suffix' must be a string", 2)
    end
    local id, path = internal.summary_open(logdir, suffix, max_queue, math.floor(flush_millis))
    return setmetatable({_id = id, logdir = logdir, path = path, closed = false}, Writer)
  end

  --- A writer that writes nothing (tf.summary.create_noop_writer).
  function summary.create_noop_writer()
    return setmetatable({_id = 0, logdir = "", path = nil, closed = false, noop = true}, Writer)
  end

  local Scope = {}
  Scope.__index = Scope
  Scope.__name = "tf.summary.scope"
  function Scope.__close(s) s:exit() end
  function Scope.exit(s)
    if s.done then return end
    s.done = true
    s.restore()
  end

  local function scoped(change, restore, fn)
    change()
    local scope = setmetatable({restore = restore}, Scope)
    if fn == nil then return scope end
    local res = table.pack(pcall(fn))
    scope:exit()
    if not res[1] then error(res[2], 0) end
    return table.unpack(res, 2, res.n)
  end

  --- w:as_default([{step =} | step] [, fn]): makes `w` the default writer
  -- (and `step` the default step) until the returned scope closes (`local _
  -- <close> = w:as_default()`), or while `fn` runs (its results returned).
  -- Leaving the scope flushes the writer, as TensorFlow does.
  function Writer.as_default(w, a, b)
    local step, fn
    if type(a) == "function" then fn = a
    else
      if type(a) == "table" and not is_tensorlike(a) then
        check_opts("as_default", a, {step = true})
        step = a.step
      else
        step = a
      end
      fn = b
    end
    local prev_writer, prev_step = state.writer, state.step
    return scoped(function()
      state.writer = w
      if step ~= nil then state.step = step end
    end, function()
      state.writer = prev_writer
      if step ~= nil then state.step = prev_step end
      if not w.closed and not w.noop then internal.summary_flush(w._id) end
    end, fn)
  end

  --- w:set_as_default([step]): the default writer from now on.
  function Writer.set_as_default(w, step)
    if type(step) == "table" and not is_tensorlike(step) then step = step.step end
    state.writer = w
    if step ~= nil then state.step = step end
  end

  function Writer.flush(w)
    if not w.closed and not w.noop then internal.summary_flush(w._id) end
  end

  function Writer.close(w)
    if not w.closed and not w.noop then internal.summary_close(w._id) end
    w.closed = true
    if state.writer == w then state.writer = nil end
  end
  Writer.__close = Writer.close
  -- a writer nothing refers to any more is closed (its events flushed), as
  -- TensorFlow deletes the resource; a tf.fn that wrote to it then writes nothing
  Writer.__gc = function(w) if not w.closed then pcall(Writer.close, w) end end
  function Writer.init(_) end

  --- tf.summary.flush([writer]): flushes `writer` or the default writer.
  function summary.flush(writer)
    writer = writer or state.writer
    if writer then writer:flush() end
  end
  -- }====

  -- {==== step and condition
  --- Sets the default step: a number, an int64 tensor, or a tf.Variable (read
  -- at each write, also inside tf.fn). nil clears it.
  function experimental.set_step(step) state.step = step end
  function experimental.get_step() return state.step end

  --- record_if(condition [, fn]): summaries are written only while
  -- `condition` holds: a boolean, a function returning one (called at each
  -- write, or at trace time inside tf.fn) or a bool tensor (checked when the
  -- op runs). Returns a scope to close, or runs `fn`.
  function summary.record_if(condition, fn)
    local t = type(condition)
    if not (t == "boolean" or t == "function" or tf.is_tensor(condition)) then
      raise("TypeError", sfmt("record_if: 'condition' must be a boolean, a function or a bool tensor, got %s", t), 2)
    end
    local prev = state.cond
    return scoped(function() state.cond = condition end, function() state.cond = prev end, fn)
  end

  local function condition()
    local c = state.cond
    if type(c) == "function" then c = c() end
    return c
  end

  --- True when a summary written now would be recorded: a default writer
  -- and a recording condition that holds (a tensor condition: the tensor).
  function summary.should_record_summaries()
    if not state.writer or state.writer.noop then return false end
    local c = condition()
    if tf.is_tensor(c) then return c end
    return c and true or false
  end
  -- }====

  -- {==== writes
  local function step_value(fname, step)
    if step == nil then step = state.step end
    if step == nil then
      raise("ValueError", "No step set. Please specify one either through the `step` argument or through "
        .. "tf.summary.experimental.set_step()", 3)
    end
    if type(step) == "number" then
      if math.type(step) ~= "integer" then
        if step ~= math.floor(step) then raise("ValueError", sfmt("%s: 'step' must be an integer, got %s", fname, step), 3) end
        step = math.tointeger(step)
      end
      return step
    end
    if tf.is_variable and tf.is_variable(step) then step = step:value() end
    if not tf.is_tensor(step) then raise("TypeError", sfmt("%s: 'step' must be an integer or a tensor", fname), 3) end
    if step.dtype ~= tf.int64 then step = tf.cast(step, tf.int64) end
    return step
  end

  -- the writer and condition for a write; nil when nothing is to be written
  local function target()
    local w = state.writer
    if not w or w.closed or w.noop then return nil end
    local c = condition()
    if c == false or c == nil then return nil end
    if tf.is_tensor(c) then
      if c.dtype ~= tf.bool then c = tf.cast(c, tf.bool) end
      return w, c
    end
    return w, nil
  end

  local function write(kind, tag, data, opts, fname, count, rate)
    if type(tag) ~= "string" then raise("TypeError", sfmt("%s: 'name' must be a string, got %s", fname, type(tag)), 3) end
    local w, cond = target()
    if not w then return false end
    local step = step_value(fname, opts.step)
    local desc = opts.description or ""
    if type(desc) ~= "string" then raise("TypeError", sfmt("%s: 'description' must be a string", fname), 3) end
    internal.summary_write(w._id, step, data, tag, desc, kind, count or 0, rate or 0, cond)
    return true
  end

  local function numeric(fname, data)
    if tf.is_variable and tf.is_variable(data) then data = data:value() end
    if not tf.is_tensor(data) then data = tf.constant(data) end
    local dt = data.dtype
    if dt == tf.string then raise("TypeError", sfmt("%s: 'data' must be numeric, got string", fname), 3) end
    if dt == tf.float16 or dt == tf.bfloat16 then data = tf.cast(data, tf.float32) end
    return data
  end

  --- scalar(name, data, {step =, description =}): a number (written as
  -- float32, TensorBoard's scalars plugin). Returns true when written.
  function summary.scalar(name, data, opts)
    opts = check_opts("scalar", opts, {step = true, description = true})
    if type(data) ~= "number" then
      data = numeric("scalar", data)
      if data.shape:rank() ~= nil and data.shape:rank() ~= 0 then
        raise("ValueError", sfmt("scalar: 'data' must be a scalar, got shape %s", tostring(data.shape)), 2)
      end
    end
    return write(KIND.scalar, name, data, opts, "scalar")
  end

  --- histogram(name, data, {step =, buckets = 30, description =}): the
  -- values' histogram as TensorBoard's histogram summary lays it out
  -- ([buckets, 3] float64: left edge, right edge, count).
  function summary.histogram(name, data, opts)
    opts = check_opts("histogram", opts, {step = true, buckets = true, description = true})
    local buckets = opts.buckets or 30
    if math.type(buckets) ~= "integer" then
      raise("TypeError", sfmt("histogram: 'buckets' must be an integer, got %s", tostring(buckets)), 2)
    end
    if buckets < 0 then buckets = 0 end
    data = numeric("histogram", data)
    return write(KIND.histogram, name, data, opts, "histogram", buckets)
  end

  --- text(name, data, {step =, description =}): a string or string tensor
  -- (TensorBoard's text plugin renders it as Markdown).
  function summary.text(name, data, opts)
    opts = check_opts("text", opts, {step = true, description = true})
    if type(data) == "string" then data = tf.constant(data) end
    if not tf.is_tensor(data) or data.dtype ~= tf.string then
      raise("TypeError", "text: 'data' must be a string or a string tensor", 2)
    end
    return write(KIND.text, name, data, opts, "text")
  end

  --- image(name, data, {step =, max_outputs = 3, description =}): images
  -- [k, h, w, c] (c = 1, 2, 3 or 4; uint8, or floats in [0, 1] converted
  -- as tf.image.convert_image_dtype does), the first max_outputs PNG-encoded
  -- (tf.io.encode_png): the tensor [width, height, png...].
  function summary.image(name, data, opts)
    opts = check_opts("image", opts, {step = true, max_outputs = true, description = true})
    local max_outputs = opts.max_outputs or 3
    if math.type(max_outputs) ~= "integer" or max_outputs < 0 then
      raise("ValueError", sfmt("image: 'max_outputs' must be an integer >= 0, got %s", tostring(max_outputs)), 2)
    end
    if not target() then return false end
    data = numeric("image", data)
    local shape = data.shape
    if shape:rank() ~= 4 then
      raise("ValueError", sfmt("image: 'data' must be [k, h, w, c], got shape %s", tostring(shape)), 2)
    end
    local c = shape[4]
    if c ~= nil and (c < 1 or c > 4) then
      raise("ValueError", sfmt("image: 'data' must have 1, 2, 3 or 4 channels, got %d", c), 2)
    end
    if not (tf.io and tf.io.encode_png) then
      raise("UnimplementedError", "image: needs tf.io.encode_png (PNG encoding)", 2)
    end
    if data.dtype ~= tf.uint8 then
      if data.dtype == tf.float32 or data.dtype == tf.float64 then
        -- convert_image_dtype(saturate=true): x * 255.5, clamped, truncated
        data = tf.cast(tf.clip_by_value(data * 255.5, 0, 255), tf.uint8)
      else
        data = tf.cast(tf.clip_by_value(data, 0, 255), tf.uint8)
      end
    end
    local dims = tf.shape(data)
    local k = shape[1]
    local parts = {tf.strings.as_string and tf.strings.as_string(dims[3]) or tostring(shape[3]),
                   tf.strings.as_string and tf.strings.as_string(dims[2]) or tostring(shape[2])}
    local n = math.min(k or max_outputs, max_outputs)
    for i = 1, n do parts[#parts + 1] = tf.io.encode_png(data[i]) end
    local t = tf.stack(parts)
    return write(KIND.image, name, t, opts, "image")
  end

  --- audio(name, data, sample_rate, {step =, max_outputs = 3, encoding =
  -- "wav", description =}): clips [k, t, c] of floats in [-1, 1], the first
  -- max_outputs written as 16-bit PCM WAV files ([n, 2]: file, label "").
  function summary.audio(name, data, sample_rate, opts)
    opts = check_opts("audio", opts, {step = true, max_outputs = true, encoding = true, description = true})
    local max_outputs = opts.max_outputs or 3
    if math.type(max_outputs) ~= "integer" or max_outputs < 0 then
      raise("ValueError", sfmt("audio: 'max_outputs' must be an integer >= 0, got %s", tostring(max_outputs)), 2)
    end
    if opts.encoding ~= nil and opts.encoding ~= "wav" then
      raise("ValueError", sfmt("audio: unknown encoding '%s' (only \"wav\")", tostring(opts.encoding)), 2)
    end
    if type(sample_rate) ~= "number" or sample_rate <= 0 or sample_rate ~= math.floor(sample_rate) then
      raise("ValueError", sfmt("audio: 'sample_rate' must be a positive integer, got %s", tostring(sample_rate)), 2)
    end
    data = numeric("audio", data)
    if data.shape:rank() ~= 3 then
      raise("ValueError", sfmt("audio: 'data' must be [k, t, c], got shape %s", tostring(data.shape)), 2)
    end
    if data.dtype ~= tf.float32 then data = tf.cast(data, tf.float32) end
    return write(KIND.audio, name, data, opts, "audio", max_outputs, math.tointeger(sample_rate))
  end

  --- write(tag, tensor, {step =, metadata =}): a generic tensor summary is
  -- not supported yet (the plugins' own functions above cover TensorBoard).
  -- }====

  -- {==== graphs
  -- GraphDef nodes of a traced graph (tf.Graph of a concrete function):
  -- names, ops, inputs ("node" / "node:k"), the first output's dtype and
  -- shape ("_output_shapes", "T")
  local function graph_nodes(g, prefix)
    local out = {}
    prefix = prefix or ""
    for _, n in ipairs(core.graph_nodes(g._G or g)) do
      local inputs = {}
      for j, s in ipairs(n.inputs) do inputs[j] = prefix .. s:gsub(":0$", "") end
      local node = {name = prefix .. n.name, op = n.op, inputs = inputs}
      local o = n.outputs[1]
      if o then
        node.dtype = o.dtype
        if o.shape == nil then node.shape = false
        else
          local sh = {}
          for d = 1, #o.shape do sh[d] = math.tointeger(o.shape[d]) or -1 end
          node.shape = sh
        end
      end
      out[#out + 1] = node
    end
    return out
  end

  --- graph(graph_or_fn, {step = 0}): writes a traced graph (a tf.Graph, a
  -- concrete function, or a tf.fn that has been called) as a GraphDef event
  -- for TensorBoard's graph tab. Returns the serialized GraphDef.
  function summary.graph(g, opts)
    opts = check_opts("graph", opts, {step = true})
    local w = state.writer
    local nodes
    if type(g) == "table" and g._last_cf then g = g._last_cf end
    if type(g) == "table" and g.graph then g = g.graph end
    if type(g) ~= "table" or not g._G then raise("TypeError", "graph: expects a tf.Graph, a concrete function or a called tf.fn", 2) end
    nodes = graph_nodes(g)
    local id = (w and not w.closed and not w.noop) and w._id or 0
    local step = opts.step or 0
    if type(step) ~= "number" then step = math.tointeger(step:numpy()) end
    return internal.summary_graph(id, step, nodes)
  end

  -- trace_on / trace_export: the tf.fn functions called in between
  local tracing = nil
  function summary.trace_on(opts)
    opts = check_opts("trace_on", opts, {graph = true, profiler = true, profiler_outdir = true})
    if opts.profiler then raise("UnimplementedError", "trace_on: the profiler is not supported (graph only)", 2) end
    tracing = {graph = opts.graph ~= false, fns = {}, seen = {}}
    internal.set_fn_call_hook(function(pf)
      if tracing and not tracing.seen[pf] then
        tracing.seen[pf] = true
        tracing.fns[#tracing.fns + 1] = pf
      end
    end)
  end

  function summary.trace_off()
    tracing = nil
    internal.set_fn_call_hook(nil)
  end

  --- trace_export(name, {step =}): writes the graphs of the tf.fn functions
  -- called since trace_on (one GraphDef; several functions are prefixed
  -- with their names) and stops tracing. Nothing without a default writer.
  function summary.trace_export(name, opts)
    opts = check_opts("trace_export", opts, {step = true, profiler_outdir = true})
    if type(name) ~= "string" then raise("TypeError", "trace_export: 'name' must be a string", 2) end
    local t = tracing
    summary.trace_off()
    if not t then return false end
    local w = state.writer
    if not w or w.closed or w.noop then return false end
    local step = step_value("trace_export", opts.step)
    if type(step) ~= "number" then step = math.tointeger(step:numpy()) end
    local nodes = {}
    local many = #t.fns > 1
    for _, pf in ipairs(t.fns) do
      local cf = pf._last_cf
      if cf then
        for _, n in ipairs(graph_nodes(cf.graph, many and (cf.graph.name .. "/") or "")) do nodes[#nodes + 1] = n end
      end
    end
    if t.graph then internal.summary_graph(w._id, step, nodes) end
    return true
  end
  -- }====
end
