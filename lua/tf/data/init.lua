--- tf.data: input pipelines (tf.data.Dataset). See docs/data.md.
--
-- A dataset is a chain of stages (Lua tables sharing the Dataset
-- metatable, 'kind' naming the stage). Per kind, tables of functions give
--   iters[kind](d)  -> next(): an element or nil (eager iteration),
--   card[kind](d)   -> its cardinality (a Lua integer, INFINITE or UNKNOWN),
--   rows[kind](d)   -> next(): a row index of the source tensors, or nil
--                      (only "row pipelines": from_tensor_slices followed by
--                      shuffle, take, skip, repeat), so that batch takes a
--                      whole batch from the source tensors in one slice or
--                      gather per component instead of stacking slices, and
--                      prefetch can copy the rows on a worker thread,
--   graphs[kind](d) -> random access by a (symbolic) position, to iterate
--                      inside tf.fn as a graph loop (lua/tf/data/graph.lua).
-- An element is a packed tuple {n = k, v1, ..., vk}; each component is a
-- tensor or a nested table of tensors. `for x, y in ds:iter()` unpacks it.
return function(tf)
  local core = tf.core
  local internal = core.internal
  local is_tensor = tf.is_tensor
  local pack, unpack = table.pack, table.unpack
  local sfmt = string.format

  local function raise(kind, fmt, ...) internal.raise(kind, sfmt(fmt, ...)) end

  local data = tf.data or {}
  tf.data = data
  data.INFINITE_CARDINALITY = -1
  data.UNKNOWN_CARDINALITY = -2
  data.AUTOTUNE = -1
  data.experimental = data.experimental or {}
  data.experimental.AUTOTUNE = -1
  local INF, UNK = -1, -2

  local Dataset = {}
  Dataset.__index = Dataset
  Dataset.__name = "tf.data.Dataset"
  data.Dataset = Dataset

  local function is_dataset(x) return getmetatable(x) == Dataset end

  local function check_self(d, what)
    if getmetatable(d) ~= Dataset then
      local mt = getmetatable(d)
      internal.raise("TypeError", string.format("%s: expected a tf.data.Dataset as the receiver (call ds:%s(...)), " ..
        "got %s", what, what, tostring(type(mt) == "table" and rawget(mt, "__name") or type(d))))
    end
  end

  local function new(kind, fields)
    fields.kind = kind
    return setmetatable(fields, Dataset)
  end

  local function tracing() return core.is_tracing() end
  -- shared with files.lua/tfrecord.lua: taken once, with this module (a
  -- require at iteration time could find another copy of the table)
  local readio = require("tf.data.readio")

  -- {==== structures: tensors or nested tables of tensors
  local function is_plain_table(t) return type(t) == "table" and getmetatable(t) == nil end

  --- true when 't' is a nested table of Lua numbers/booleans/strings only
  -- (a tensor literal, as TensorFlow converts a Python list), not a structure.
  local function is_literal(t)
    if type(t) ~= "table" or getmetatable(t) ~= nil then
      local ty = type(t)
      return ty == "number" or ty == "boolean" or ty == "string"
    end
    local n = 0
    for k, v in pairs(t) do
      if math.type(k) ~= "integer" then return false end
      if not is_literal(v) then return false end
      n = n + 1
    end
    return n == #t
  end

  --- Convert the leaves of a structure to tensors (literals become tensors).
  -- Datasets hold their tensors on the host, as TensorFlow's run on the
  -- CPU: a tensor on a GPU is copied once here (not at each element).
  local function on_host(t)
    if t.cpu and not t:is_symbolic() then return t:cpu() end
    return t
  end
  local function to_struct(x, what)
    local hs = tf.core.internal.host_scope   -- literals made on the host (docs/devices.md)
    local _ <close> = hs and hs(true) or nil
    if is_tensor(x) then return on_host(x) end
    if tf.is_variable and tf.is_variable(x) then return on_host(tf.convert_to_tensor(x)) end
    local ty = type(x)
    if ty == "number" or ty == "boolean" or ty == "string" then return tf.constant(x) end
    if is_plain_table(x) then
      if next(x) ~= nil and is_literal(x) then return tf.constant(x) end
      local r = {}
      for k, v in pairs(x) do r[k] = to_struct(v, what) end
      return r
    end
    raise("TypeError", "%s: expected a tensor or a (nested) table of tensors, got %s", what,
      tostring(getmetatable(x) and getmetatable(x).__name or ty))
  end

  local function sorted_keys(t)
    local ks = {}
    for k in pairs(t) do ks[#ks + 1] = k end
    table.sort(ks, function(a, b)
      local ta, tb = type(a), type(b)
      if ta ~= tb then return ta < tb end
      return a < b
    end)
    return ks
  end

  --- The tensors of a structure in a fixed order, and a function that
  -- rebuilds the structure from such a list.
  local function flatten(s)
    local flat = {}
    local function walk(x)
      if is_tensor(x) or not is_plain_table(x) then
        flat[#flat + 1] = x
        return function(f, pos) return f[pos], pos + 1 end
      end
      local ks = sorted_keys(x)
      local subs = {}
      for i, k in ipairs(ks) do subs[i] = walk(x[k]) end
      return function(f, pos)
        local r = {}
        for i, k in ipairs(ks) do r[k], pos = subs[i](f, pos) end
        return r, pos
      end
    end
    local build = walk(s)
    return flat, function(f) return (build(f, 1)) end
  end

  --- Apply f(list of tensors, path) to corresponding leaves of several
  -- structures of the same form; 'what' names the caller in errors.
  local function zip_struct(f, xs, what, path)
    local x1 = xs[1]
    if is_tensor(x1) or not is_plain_table(x1) then
      for j = 2, #xs do
        if is_plain_table(xs[j]) and not is_tensor(xs[j]) then
          raise("ValueError", "%s: elements have different structures at %s", what, path)
        end
      end
      return f(xs, path)
    end
    local r = {}
    for _, k in ipairs(sorted_keys(x1)) do
      local col = {}
      for j = 1, #xs do
        local v = xs[j]
        if not is_plain_table(v) or v[k] == nil then
          raise("ValueError", "%s: elements have different structures at %s", what, path .. "." .. tostring(k))
        end
        col[j] = v[k]
      end
      r[k] = zip_struct(f, col, what, path .. "." .. tostring(k))
    end
    return r
  end

  --- flatten for a packed element {n =, c1, ..., cn}: its rebuild gives a
  -- packed element again.
  local function flatten_elem(e)
    local k = e.n
    local flat, rebuild = flatten({unpack(e, 1, k)})
    return flat, function(f)
      local r = rebuild(f)
      r.n = k
      return r
    end
  end

  local function map_leaves(f, s)
    if is_tensor(s) or not is_plain_table(s) then return f(s) end
    local r = {}
    for k, v in pairs(s) do r[k] = map_leaves(f, v) end
    return r
  end

  local function shape_str(t) return tostring(t.shape) end

  -- }====

  -- {==== argument helpers
  local function check_int(v, what, arg, allow_neg)
    if is_tensor(v) and not v:is_symbolic() and v.rank == 0 then v = v:item() end
    if math.type(v) ~= "integer" then
      if math.type(v) == "float" and math.tointeger(v) then return math.tointeger(v) end
      raise("TypeError", "%s: '%s' must be an integer, got %s", what, arg,
        is_tensor(v) and ("a " .. v.dtype.name .. " tensor") or type(v))
    end
    if not allow_neg and v < 0 then raise("InvalidArgumentError", "%s: '%s' must be >= 0, got %d", what, arg, v) end
    return v
  end

  local function kw(opts, what, allowed)
    if opts == nil then return {} end
    if type(opts) ~= "table" or getmetatable(opts) ~= nil then
      raise("TypeError", "%s: expected a keyword table as the last argument, got %s", what, type(opts))
    end
    for k in pairs(opts) do
      if not allowed[k] then raise("TypeError", "%s: unexpected keyword argument '%s'", what, tostring(k)) end
    end
    return opts
  end

  local function check_ds(d, what, arg)
    if not is_dataset(d) then
      raise("TypeError", "%s: '%s' must be a tf.data.Dataset, got %s", what, arg,
        tostring(getmetatable(d) and getmetatable(d).__name or type(d)))
    end
    return d
  end

  local function card_add(n, k) if n < 0 then return n end return n + k end
  -- }====

  -- {==== graph errors
  local function no_graph(what, why)
    raise("UnimplementedError", "%s inside tf.fn: %s", what, why)
  end
  -- }====

  -- {==== sources
  --- Dataset.from_tensor_slices(x): the slices of x along its first
  -- dimension; x a tensor, a Lua literal, or a (nested) table of tensors
  -- (an array table gives tuple elements: `for x, y in ds:iter()`).
  function Dataset.from_tensor_slices(x)
    local what = "from_tensor_slices"
    if x == nil then raise("TypeError", "%s: 'tensors' is required", what) end
    local s = to_struct(x, what)
    -- an array table of components is a tuple; a dict table one component
    local comps
    if is_plain_table(s) and #s > 0 then
      local n = 0
      for _ in pairs(s) do n = n + 1 end
      if n == #s then comps = s end
    end
    local flat, rebuild = flatten_elem(comps and {n = #comps, unpack(comps)} or {n = 1, s})
    if #flat == 0 then raise("ValueError", "%s: no tensors given", what) end
    local n
    for i, t in ipairs(flat) do
      if t.rank == 0 then
        raise("InvalidArgumentError", "%s: component %d is a scalar: slicing needs rank >= 1", what, i)
      end
      local d = t.shape[1]
      if n == nil then n = d
      elseif d ~= nil and n ~= nil and d ~= n then
        raise("InvalidArgumentError", "%s: components have different first dimensions: %s and %s", what,
          shape_str(flat[1]), shape_str(t))
      end
    end
    return new("TensorSlices", {_flat = flat, _rebuild = rebuild, _n = n})
  end


  --- Rows a .. a + k - 1 of the source tensors (tf.slice: one C call per
  -- component; begin/size tables cached per component).
  local function slice_rows(src, a, k)
    local flat = src._flat
    local sb = src._slice_args
    if not sb then
      sb = {}
      for i, t in ipairs(flat) do
        local b, z = {0}, {0}
        for r = 2, t.rank do b[r] = 1; z[r] = -1 end
        sb[i] = {b, z}
      end
      src._slice_args = sb
    end
    local out = {}
    for i, t in ipairs(flat) do
      local b, z = sb[i][1], sb[i][2]
      b[1], z[1] = a, k
      out[i] = tf.slice(t, b, z)
    end
    return src._rebuild(out)
  end

  --- Rows of the source tensors at 'idx' (an array of 1-based integers, or
  -- an integer tensor): a batched element.
  local function gather_rows(src, idx)
    local flat = src._flat
    local out = {}
    if type(idx) == "table" then
      local k = #idx
      local contiguous = true
      for j = 2, k do if idx[j] ~= idx[1] + j - 1 then contiguous = false; break end end
      if contiguous and k > 0 then
        return slice_rows(src, idx[1], k)
      else
        local it = tf.constant(idx, tf.int32)
        for i, t in ipairs(flat) do out[i] = tf.gather(t, it) end
      end
    else
      for i, t in ipairs(flat) do out[i] = tf.gather(t, idx) end
    end
    return src._rebuild(out)
  end

  local function row_elem(src, i)
    local flat = src._flat
    local out = {}
    for j, t in ipairs(flat) do out[j] = tf.gather(t, i) end
    return src._rebuild(out)
  end

  --- Dataset.from_tensors(x): one element, x itself.
  function Dataset.from_tensors(x)
    local what = "from_tensors"
    if x == nil then raise("TypeError", "%s: 'tensors' is required", what) end
    local s = to_struct(x, what)
    local e
    if is_plain_table(s) and #s > 0 then
      local n = 0
      for _ in pairs(s) do n = n + 1 end
      if n == #s then e = {n = #s, unpack(s)} end
    end
    e = e or {n = 1, s}
    return new("Tensors", {_elem = e})
  end

  --- Dataset.range(stop) / (start, stop [, step]) [, {dtype=}]: int64
  -- scalars with tf.range's values (range(3) is 0, 1, 2).
  function Dataset.range(...)
    local args = pack(...)
    local opts = {}
    if args.n > 0 and is_plain_table(args[args.n]) then
      opts = kw(args[args.n], "range", {dtype = true})
      args.n = args.n - 1
    end
    local start, stop, step
    if args.n == 1 then start, stop, step = 0, args[1], 1
    elseif args.n == 2 then start, stop, step = args[1], args[2], 1
    elseif args.n == 3 then start, stop, step = args[1], args[2], args[3]
    else raise("TypeError", "range: expected 1 to 3 integer arguments, got %d", args.n) end
    start = check_int(start, "range", "start", true)
    stop = check_int(stop, "range", "stop", true)
    step = check_int(step, "range", "step", true)
    if step == 0 then raise("InvalidArgumentError", "range: 'step' must not be 0") end
    local n
    if step > 0 then n = math.max(0, (stop - start + step - 1) // step)
    else n = math.max(0, (start - stop - step - 1) // (-step)) end
    return new("Range", {_start = start, _step = step, _count = n, _dtype = opts.dtype or tf.int64})
  end

  --- Dataset.from_generator(gen [, {output_signature=}]): gen() returns a
  -- Lua iterator function; each call gives one element's values (nil ends).
  function Dataset.from_generator(gen, opts)
    local what = "from_generator"
    if type(gen) ~= "function" and not (getmetatable(gen) and getmetatable(gen).__call) then
      raise("TypeError", "%s: 'generator' must be a function returning an iterator, got %s", what, type(gen))
    end
    if type(opts) == "table" and (opts.kind == "TensorSpec" or (type(opts[1]) == "table" and opts[1].kind == "TensorSpec")) then
      opts = {output_signature = opts}
    end
    opts = kw(opts, what, {output_signature = true, output_types = true, output_shapes = true, args = true})
    local sig = opts.output_signature
    if sig ~= nil and sig.kind == "TensorSpec" then sig = {sig} end
    if sig == nil and opts.output_types ~= nil then
      local ty = opts.output_types
      if not is_plain_table(ty) then ty = {ty} end
      sig = {}
      for i, d in ipairs(ty) do sig[i] = {dtype = d} end
    end
    return new("Generator", {_gen = gen, _sig = sig, _args = opts.args})
  end

  --- Dataset.zip(a, b, ...) or Dataset.zip({a, b, ...}): tuples of the
  -- datasets' elements (an element that is itself a tuple of several values
  -- becomes an array table).
  function Dataset.zip(...)
    local args = pack(...)
    local list = args
    if args.n == 1 and is_plain_table(args[1]) then list = args[1]; list.n = #list end
    if (list.n or #list) == 0 then raise("ValueError", "zip: at least one dataset is required") end
    local ds = {}
    for i = 1, list.n or #list do ds[i] = check_ds(list[i], "zip", "datasets[" .. i .. "]") end
    return new("Zip", {_inputs = ds})
  end
  -- }====

  -- {==== transformations
  local function unary(kind, input, fields)
    fields._input = input
    return new(kind, fields)
  end

  --- ds:shuffle(buffer_size [, seed [, reshuffle_each_iteration]]) or
  -- ds:shuffle(buffer_size, {seed=, reshuffle_each_iteration=true}).
  function Dataset:shuffle(buffer_size, seed, reshuffle)
    check_self(self, "shuffle")
    local what = "shuffle"
    if is_plain_table(seed) then
      local o = kw(seed, what, {seed = true, reshuffle_each_iteration = true})
      seed, reshuffle = o.seed, o.reshuffle_each_iteration
    end
    buffer_size = check_int(buffer_size, what, "buffer_size", true)
    if buffer_size == -1 then buffer_size = math.maxinteger end
    if buffer_size < 1 then
      raise("InvalidArgumentError", "shuffle: 'buffer_size' must be positive (or -1 for the whole dataset), got %d",
        buffer_size)
    end
    if seed ~= nil then seed = check_int(seed, what, "seed", true) end
    if reshuffle == nil then reshuffle = true end
    local s = seed or math.random(0, math.maxinteger)
    return unary("Shuffle", self, {_buffer = buffer_size, _seed = s, _reshuffle = reshuffle and true or false,
                                   _epoch = 0})
  end

  --- ds:batch(batch_size [, drop_remainder]) or ds:batch(n, {drop_remainder=}).
  function Dataset:batch(batch_size, drop_remainder)
    check_self(self, "batch")
    if is_plain_table(drop_remainder) then
      local o = kw(drop_remainder, "batch", {drop_remainder = true, num_parallel_calls = true,
                                             deterministic = true})
      drop_remainder = o.drop_remainder
    end
    batch_size = check_int(batch_size, "batch", "batch_size", true)
    if batch_size < 1 then raise("InvalidArgumentError", "batch: 'batch_size' must be positive, got %d", batch_size) end
    return unary("Batch", self, {_size = batch_size, _drop = drop_remainder and true or false})
  end

  --- ds:padded_batch(batch_size [, padded_shapes [, padding_values [, drop_remainder]]])
  -- or ds:padded_batch(n, {padded_shapes=, padding_values=, drop_remainder=}).
  function Dataset:padded_batch(batch_size, padded_shapes, padding_values, drop_remainder)
    check_self(self, "padded_batch")
    local what = "padded_batch"
    if padded_shapes ~= nil and padding_values == nil and drop_remainder == nil and is_plain_table(padded_shapes)
       and (padded_shapes.padded_shapes ~= nil or padded_shapes.padding_values ~= nil
            or padded_shapes.drop_remainder ~= nil) then
      local o = kw(padded_shapes, what, {padded_shapes = true, padding_values = true, drop_remainder = true})
      padded_shapes, padding_values, drop_remainder = o.padded_shapes, o.padding_values, o.drop_remainder
    end
    batch_size = check_int(batch_size, what, "batch_size", true)
    if batch_size < 1 then
      raise("InvalidArgumentError", "padded_batch: 'batch_size' must be positive, got %d", batch_size)
    end
    return unary("PaddedBatch", self, {_size = batch_size, _shapes = padded_shapes, _values = padding_values,
                                       _drop = drop_remainder and true or false})
  end

  function Dataset:unbatch()
    check_self(self, "unbatch")
    return unary("Unbatch", self, {})
  end

  function Dataset:take(count)
    check_self(self, "take")
    count = check_int(count, "take", "count", true)
    if count < -1 then raise("InvalidArgumentError", "take: 'count' must be >= -1, got %d", count) end
    return unary("Take", self, {_count = count})
  end

  function Dataset:skip(count)
    check_self(self, "skip")
    count = check_int(count, "skip", "count", true)
    if count < -1 then raise("InvalidArgumentError", "skip: 'count' must be >= -1, got %d", count) end
    return unary("Skip", self, {_count = count})
  end

  --- ds:repeat_([count]) (also ds["repeat"]): count nil or -1 repeats forever.
  function Dataset:repeat_(count)
    check_self(self, "repeat")
    if count == nil then count = -1 end
    count = check_int(count, "repeat", "count", true)
    if count < -1 then raise("InvalidArgumentError", "repeat: 'count' must be >= -1, got %d", count) end
    return unary("Repeat", self, {_count = count})
  end
  Dataset["repeat"] = Dataset.repeat_

  local function check_fn(f, what)
    if type(f) ~= "function" and not (getmetatable(f) and getmetatable(f).__call) then
      raise("TypeError", "%s: expected a function, got %s", what, type(f))
    end
  end

  --- ds:map(fn [, opts]): fn receives an element's values and returns the
  -- new element's values; it is wrapped in one tf.fn (traced once per
  -- element signature, then replayed as a graph).
  function Dataset:map(fn, opts)
    check_self(self, "map")
    check_fn(fn, "map")
    opts = kw(opts, "map", {num_parallel_calls = true, deterministic = true, name = true})
    local own = not (tf.is_fn and tf.is_fn(fn))
    local g = own and tf.fn(fn, {name = "dataset_map"}) or fn
    local par
    if opts.num_parallel_calls ~= nil then
      par = check_int(opts.num_parallel_calls, "map", "num_parallel_calls", true)
      if par < -1 or par == 0 then
        raise("InvalidArgumentError", "map: 'num_parallel_calls' must be positive or AUTOTUNE, got %d", par)
      end
      if par == -1 then par = tf.core.internal.cpu_count() end
    end
    -- the graph is run on worker threads only when the map traced it itself
    -- (a tf.fn of the caller's might later need its graph for gradients)
    return unary("Map", self, {_fn = g, _par = own and par or nil})
  end

  --- ds:filter(predicate): keeps the elements for which predicate(values)
  -- is true (a Lua boolean or a bool scalar tensor); traced as a tf.fn.
  function Dataset:filter(pred)
    check_self(self, "filter")
    check_fn(pred, "filter")
    local g = tf.is_fn and tf.is_fn(pred) and pred or tf.fn(pred, {name = "dataset_filter"})
    return unary("Filter", self, {_fn = g})
  end

  --- ds:prefetch(buffer_size): a buffering stage (see docs/data.md: it reads
  -- up to buffer_size elements ahead on the calling thread).
  function Dataset:prefetch(buffer_size)
    check_self(self, "prefetch")
    if buffer_size == nil then buffer_size = -1 end
    buffer_size = check_int(buffer_size, "prefetch", "buffer_size", true)
    if buffer_size < -1 then
      raise("InvalidArgumentError", "prefetch: 'buffer_size' must be >= -1 (AUTOTUNE), got %d", buffer_size)
    end
    if buffer_size == -1 then buffer_size = 2 end
    if buffer_size == 0 then buffer_size = 1 end
    return unary("Prefetch", self, {_size = buffer_size})
  end

  --- tf.data.experimental.prefetch_to_device(device [, buffer_size]): for
  -- ds:apply(): the elements copied to 'device' ("/gpu:0"), buffer_size
  -- (default 1) elements ahead of the one handed out, as TensorFlow's. The
  -- pipeline before it runs on the host; a GPU that is absent: the elements
  -- stay there (soft placement). Must be the last transformation.
  function data.experimental.prefetch_to_device(device, buffer_size)
    if type(device) ~= "string" then
      raise("TypeError", "prefetch_to_device: expected a device name string, got %s", type(device))
    end
    local lower = device:lower()
    local kind, index = lower:match("device:(%a+):(%d+)$")
    if not kind then kind, index = lower:match("^/?(%a+):(%d+)$") end
    if kind ~= "cpu" and kind ~= "gpu" then
      raise("ValueError", "prefetch_to_device: cannot parse device name %q", device)
    end
    index = tonumber(index)
    if buffer_size == nil then buffer_size = 1 end
    buffer_size = check_int(buffer_size, "prefetch_to_device", "buffer_size", true)
    if buffer_size < 1 then
      raise("InvalidArgumentError", "prefetch_to_device: 'buffer_size' must be >= 1, got %d", buffer_size)
    end
    return function(ds)
      check_self(ds, "prefetch_to_device")
      local k, i = kind:upper(), index
      if k == "GPU" and i >= (tf.core.num_gpus and tf.core.num_gpus() or 0) then k, i = "CPU", 0 end
      return unary("PrefetchToDevice", ds, {_size = buffer_size, _kind = k, _index = i})
    end
  end

  --- ds:cache([filename]): the first complete iteration is kept in memory
  -- and replayed afterwards.
  function Dataset:cache(filename)
    check_self(self, "cache")
    if filename ~= nil and filename ~= "" then
      raise("UnimplementedError", "cache: caching to a file (%q) is not supported; call cache() for memory", filename)
    end
    return unary("Cache", self, {_store = nil})
  end

  --- ds:enumerate([start]): (index, values...) with an int64 index from
  -- 'start' (default 1: positions are 1-based in luatf).
  function Dataset:enumerate(start)
    check_self(self, "enumerate")
    if start == nil then start = 1 end
    start = check_int(start, "enumerate", "start", true)
    return unary("Enumerate", self, {_start = start})
  end

  function Dataset:concatenate(other)
    check_self(self, "concatenate")
    check_ds(other, "concatenate", "dataset")
    return new("Concatenate", {_inputs = {self, other}})
  end
  -- }====

  -- {==== cardinality
  local card = {}
  card.TensorSlices = function(d)
    if d._n == nil then return UNK end
    return d._n
  end
  card.Tensors = function() return 1 end
  card.Range = function(d) return d._count end
  card.Generator = function() return UNK end
  card.Zip = function(d)
    local m
    local any_unknown = false
    for _, x in ipairs(d._inputs) do
      local c = x:cardinality()
      if c == UNK then any_unknown = true
      elseif c ~= INF then m = m and math.min(m, c) or c end
    end
    if m and (not any_unknown) then return m end
    if any_unknown then return UNK end
    return INF
  end
  card.Shuffle = function(d) return d._input:cardinality() end
  card.Batch = function(d)
    local c = d._input:cardinality()
    if c < 0 then return c end
    if d._drop then return c // d._size end
    return (c + d._size - 1) // d._size
  end
  card.PaddedBatch = card.Batch
  card.Unbatch = function(d)
    local c = d._input:cardinality()
    if c == INF then return INF end
    if c == 0 then return 0 end
    return UNK
  end
  card.Take = function(d)
    local c = d._input:cardinality()
    if d._count == -1 then return c end
    if c == INF then return d._count end
    if c == UNK then return d._count == 0 and 0 or UNK end
    return math.min(c, d._count)
  end
  card.Skip = function(d)
    local c = d._input:cardinality()
    if c < 0 then return c end
    if d._count == -1 then return 0 end
    return math.max(0, c - d._count)
  end
  card.Repeat = function(d)
    local c = d._input:cardinality()
    if c == 0 or d._count == 0 then return 0 end
    if d._count == -1 then return (c == UNK) and UNK or INF end
    if c < 0 then return c end
    return c * d._count
  end
  card.Map = function(d) return d._input:cardinality() end
  card.Filter = function(d)
    local c = d._input:cardinality()
    if c == INF then return INF end
    return UNK
  end
  card.Prefetch = card.Map
  card.PrefetchToDevice = card.Map
  card.Cache = card.Map
  card.Enumerate = card.Map
  card.Concatenate = function(d)
    local a, b = d._inputs[1]:cardinality(), d._inputs[2]:cardinality()
    if a == INF or b == INF then return INF end
    if a == UNK or b == UNK then return UNK end
    return a + b
  end

  --- ds:cardinality(): the number of elements as a Lua integer, or
  -- tf.data.INFINITE_CARDINALITY (-1) / tf.data.UNKNOWN_CARDINALITY (-2).
  function Dataset:cardinality()
    check_self(self, "cardinality")
    return card[self.kind](self)
  end
  -- }====

  -- {==== row pipelines (batching by gather from the source tensors)
  local rows = {}
  rows.TensorSlices = function(d)
    local n = d._n
    local i = 0
    return function()
      i = i + 1
      if i > n then return nil end
      return i
    end, d
  end
  local function rows_of_input(d)
    local f = rows[d._input.kind]
    if not f then return nil end
    return f(d._input)
  end

  -- PRNG for shuffles: splitmix64 mixes the seeds, xorshift64* draws.
  local function mix64(z)
    z = z + 0x9E3779B97F4A7C15
    z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
    z = (z ~ (z >> 27)) * 0x94D049BB133111EB
    return z ~ (z >> 31)
  end
  -- xorshift64* for the draws (cheap in Lua: a few integer ops per draw)
  local function rng(seed)
    local x = mix64(seed)
    if x == 0 then x = 0x2545F4914F6CDD1D end
    return function(k)   -- uniform integer in 1..k (bias below 2^-40 for k < 2^23)
      x = x ~ (x >> 12)
      x = x ~ (x << 25)
      x = x ~ (x >> 27)
      return (((x * 0x2545F4914F6CDD1D) >> 1) % k) + 1
    end
  end

  --- The buffer shuffle of TensorFlow: fill a buffer of 'size' items, then
  -- repeatedly emit a uniformly chosen buffered item and put the next input
  -- item in its place; once the input ends, drain the buffer at random.
  local function shuffle_stream(nxt, size, rand)
    local buf, nb = {}, 0
    local done = false
    local function fill()
      while not done and nb < size do
        local x = nxt()
        if x == nil then done = true else nb = nb + 1; buf[nb] = x end
      end
    end
    return function()
      fill()
      if nb == 0 then return nil end
      local j = rand(nb)
      local x = buf[j]
      buf[j] = buf[nb]
      buf[nb] = nil
      nb = nb - 1
      return x
    end
  end

  local function epoch_seed(d)
    local e = d._epoch
    d._epoch = e + 1
    if d._reshuffle then return mix64(d._seed ~ mix64(e + 1)) end
    return mix64(d._seed)
  end

  --- shuffle_stream over the rows 1..n, as one array (the same order for
  -- the same draws: the next input row takes the emitted one's place).
  local function shuffle_perm(n, size, rand)
    local perm, buf, nb, nextin = {}, {}, 0, 1
    while nextin <= n and nb < size do nb = nb + 1; buf[nb] = nextin; nextin = nextin + 1 end
    local p = 0
    while nb > 0 do
      local j = rand(nb)
      p = p + 1
      perm[p] = buf[j]
      buf[j] = buf[nb]
      buf[nb] = nil
      nb = nb - 1
      if nextin <= n then nb = nb + 1; buf[nb] = nextin; nextin = nextin + 1 end
    end
    return perm
  end

  rows.Shuffle = function(d)
    local input = d._input
    if input.kind == "TensorSlices" and input._n ~= nil then
      -- the whole epoch's order at once; the array also lets batch take
      -- its rows with table.move
      local perm = shuffle_perm(input._n, d._buffer, rng(epoch_seed(d)))
      local i = 0
      return function()
        i = i + 1
        return perm[i]
      end, input, perm
    end
    local nxt, src = rows_of_input(d)
    if not nxt then return nil end
    return shuffle_stream(nxt, d._buffer, rng(epoch_seed(d))), src
  end
  rows.Take = function(d)
    local nxt, src = rows_of_input(d)
    if not nxt then return nil end
    local k, left = d._count, d._count
    return function()
      if k ~= -1 then
        if left <= 0 then return nil end
        left = left - 1
      end
      return nxt()
    end, src
  end
  rows.Skip = function(d)
    local nxt, src = rows_of_input(d)
    if not nxt then return nil end
    local skipped = false
    return function()
      if not skipped then
        skipped = true
        local k = d._count
        while k ~= 0 do
          if nxt() == nil then return nil end
          k = k - 1
        end
      end
      return nxt()
    end, src
  end
  rows.Repeat = function(d)
    local f = rows[d._input.kind]
    if not f then return nil end
    local nxt, src = f(d._input)
    if not nxt then return nil end
    local count, reps, got = d._count, 0, false
    if count == 0 then return function() return nil end, src end
    return function()
      while true do
        local i = nxt()
        if i ~= nil then got = true; return i end
        reps = reps + 1
        if (count ~= -1 and reps >= count) or not got then return nil end
        got = false
        nxt = f(d._input)
      end
    end, src
  end
  -- a row pipeline whose rows come from a source that knows its size
  local function row_stream(d)
    local probe = d
    while probe.kind ~= "TensorSlices" do
      if not rows[probe.kind] then return nil end
      probe = probe._input
    end
    if probe._n == nil then return nil end
    return rows[d.kind](d)
  end
  -- }====

  -- {==== eager iteration
  local iters = {}
  local function iter_of(d) return iters[d.kind](d) end
  -- batch_fast[kind](d, n, drop): a batch iterator of source kinds that cut
  -- batches themselves (file sources, lua/tf/data/files.lua), or nil
  local batch_fast = {}

  iters.TensorSlices = function(d)
    local nxt = rows.TensorSlices(d)
    return function()
      local i = nxt()
      if i == nil then return nil end
      return row_elem(d, i)
    end
  end
  iters.Tensors = function(d)
    local done = false
    return function()
      if done then return nil end
      done = true
      return d._elem
    end
  end
  iters.Range = function(d)
    local k = 0
    return function()
      if k >= d._count then return nil end
      local v = d._start + k * d._step
      k = k + 1
      return {n = 1, tf.constant(v, d._dtype)}
    end
  end
  local function check_against_spec(v, spec, i)
    if spec == nil then return to_struct(v, "from_generator") end
    local dt = spec.dtype
    local t = v
    if not is_tensor(t) then
      local ok, r = pcall(tf.constant, v, dt)
      if not ok then
        raise("TypeError", "from_generator: element component %d (%s) does not match output_signature dtype %s",
          i, tostring(v), dt and dt.name or "?")
      end
      t = r
    elseif dt and t.dtype ~= dt then
      raise("TypeError", "from_generator: element component %d has dtype %s, output_signature says %s", i,
        t.dtype.name, dt.name)
    end
    local shp = spec.shape
    if shp ~= nil and type(shp.as_list) == "function" then
      local dims = shp:as_list()
      if dims ~= nil then
        local ok = #shp == t.rank
        if ok then
          for k = 1, #shp do
            local dk = dims[k]
            if dk ~= nil and dk ~= -1 and dk ~= t.shape[k] then ok = false end
          end
        end
        if not ok then
          raise("InvalidArgumentError", "from_generator: element component %d has shape %s, output_signature says %s",
            i, shape_str(t), tostring(shp))
        end
      end
    end
    return t
  end
  iters.Generator = function(d)
    if tracing() then
      no_graph("from_generator", "a Lua generator cannot run in a graph: iterate the dataset outside tf.fn, or " ..
        "build the dataset from tensors (from_tensor_slices)")
    end
    local it = d._args and d._gen(unpack(d._args)) or d._gen()
    if type(it) ~= "function" and not (getmetatable(it) and getmetatable(it).__call) then
      raise("TypeError", "from_generator: the generator must return an iterator function, got %s", type(it))
    end
    local sig = d._sig
    -- the end is final: a finished generator is never called again (an
    -- io.lines iterator raises there); the next epoch calls the factory
    local done = false
    return function()
      if done then return nil end
      local r = pack(it())
      if r[1] == nil then
        done = true
        return nil
      end
      local e = {n = r.n}
      if sig and #sig ~= r.n then
        raise("InvalidArgumentError", "from_generator: the generator gave %d values, output_signature has %d",
          r.n, #sig)
      end
      for i = 1, r.n do e[i] = check_against_spec(r[i], sig and sig[i], i) end
      return e
    end
  end
  iters.Zip = function(d)
    local its = {}
    for i, x in ipairs(d._inputs) do its[i] = iter_of(x) end
    return function()
      local e = {n = #its}
      for i, it in ipairs(its) do
        local x = it()
        if x == nil then return nil end
        e[i] = x.n == 1 and x[1] or {unpack(x, 1, x.n)}
      end
      return e
    end
  end
  iters.Shuffle = function(d)
    local nxt, src = row_stream(d)
    if nxt then
      return function()
        local i = nxt()
        if i == nil then return nil end
        return row_elem(src, i)
      end
    end
    return shuffle_stream(iter_of(d._input), d._buffer, rng(epoch_seed(d)))
  end

  local function stack_elems(es, what)
    local e1 = es[1]
    local out = {n = e1.n}
    for c = 1, e1.n do
      local col = {}
      for j, e in ipairs(es) do col[j] = e[c] end
      out[c] = zip_struct(function(ts, path)
        local ok, r = pcall(tf.stack, ts)
        if ok then return r end
        local t1 = ts[1]
        for j = 2, #ts do
          local t = ts[j]
          if t.dtype ~= t1.dtype then
            raise("InvalidArgumentError", "%s: component %s of elements 1 and %d have different dtypes: %s and %s",
              what, path, j, t1.dtype.name, t.dtype.name)
          end
          local same = t.rank == t1.rank
          if same then for k = 1, t.rank do if t.shape[k] ~= t1.shape[k] then same = false end end end
          if not same then
            raise("InvalidArgumentError", "%s: component %s of elements 1 and %d have different shapes: %s and %s " ..
              "(use padded_batch, or map a reshape/resize before batching)", what, path, j, shape_str(t1),
              shape_str(t))
          end
        end
        error(r, 0)
      end, col, what, "[" .. c .. "]")
    end
    return out
  end

  iters.Batch = function(d)
    local B, drop = d._size, d._drop
    local src = d._input
    local fast = batch_fast[src.kind] and batch_fast[src.kind](src, B, drop)
    if fast then return fast end
    if src.kind == "TensorSlices" and src._n ~= nil then
      -- in order: one slice per component and batch
      local n, a = src._n, 1
      return function()
        if a > n then return nil end
        local k = math.min(B, n - a + 1)
        if drop and k < B then return nil end
        local e = slice_rows(src, a, k)
        a = a + k
        return e
      end
    end
    local nxt, src, arr = row_stream(d._input)
    if arr then
      local pos, n = 1, #arr
      return function()
        if pos > n then return nil end
        local k = math.min(B, n - pos + 1)
        if drop and k < B then return nil end
        local idx = table.move(arr, pos, pos + k - 1, 1, {})
        pos = pos + k
        return gather_rows(src, idx)
      end
    end
    if nxt then
      return function()
        local idx = {}
        for j = 1, B do
          local i = nxt()
          if i == nil then break end
          idx[j] = i
        end
        if #idx == 0 or (drop and #idx < B) then return nil end
        return gather_rows(src, idx)
      end
    end
    local it = iter_of(d._input)
    return function()
      local es = {}
      for j = 1, B do
        local e = it()
        if e == nil then break end
        es[j] = e
      end
      if #es == 0 or (drop and #es < B) then return nil end
      return stack_elems(es, "batch")
    end
  end

  local function to_dims(s)
    if s == nil then return nil end
    if type(s) == "table" and type(s.as_list) == "function" then return s:as_list() end
    if is_tensor(s) then s = s:totable() end
    if type(s) ~= "table" then
      raise("TypeError", "padded_batch: 'padded_shapes' entries must be shapes (tables of integers), got %s", type(s))
    end
    for k = 1, #s do
      if math.type(s[k]) ~= "integer" then
        raise("TypeError", "padded_batch: 'padded_shapes' entries must be shapes (tables of integers)")
      end
    end
    return s
  end

  iters.PaddedBatch = function(d)
    local B, drop = d._size, d._drop
    local it = iter_of(d._input)
    local what = "padded_batch"
    return function()
      local es = {}
      for j = 1, B do
        local e = it()
        if e == nil then break end
        es[j] = e
      end
      if #es == 0 or (drop and #es < B) then return nil end
      local e1 = es[1]
      local out = {n = e1.n}
      local shapes_by_comp = d._shapes
      local values_by_comp = d._values
      if e1.n == 1 then shapes_by_comp = {shapes_by_comp}; values_by_comp = {values_by_comp} end
      for c = 1, e1.n do
        local col = {}
        for j, e in ipairs(es) do col[j] = e[c] end
        local cshapes = shapes_by_comp and shapes_by_comp[c]
        local cvalues = values_by_comp and values_by_comp[c]
        out[c] = zip_struct(function(ts, path)
          local t1 = ts[1]
          local rank = t1.rank
          local want = {}
          for k = 1, rank do want[k] = 0 end
          for j, t in ipairs(ts) do
            if t.rank ~= rank then
              raise("InvalidArgumentError", "%s: component %s of elements 1 and %d have different ranks: %s and %s",
                what, path, j, shape_str(t1), shape_str(t))
            end
            if t.dtype ~= t1.dtype then
              raise("InvalidArgumentError", "%s: component %s of elements 1 and %d have different dtypes: %s and %s",
                what, path, j, t1.dtype.name, t.dtype.name)
            end
            for k = 1, rank do want[k] = math.max(want[k], t.shape[k]) end
          end
          local ps = cshapes
          if is_plain_table(ps) and not is_literal(ps) and type(ps.as_list) ~= "function" then ps = nil end
          ps = to_dims(ps)
          if ps ~= nil then
            if #ps ~= rank then
              raise("InvalidArgumentError", "%s: padded_shapes for component %s has %d dimensions, the elements " ..
                "have rank %d", what, path, #ps, rank)
            end
            for k = 1, rank do
              local pk = ps[k]
              if pk ~= nil and pk ~= -1 then
                if pk < want[k] then
                  raise("InvalidArgumentError", "%s: component %s: an element of shape %s does not fit " ..
                    "padded_shapes %s (dimension %d is larger than %d)", what, path,
                    shape_str(ts[1]), tostring(tf.TensorShape(ps)), k, pk)
                end
                want[k] = pk
              end
            end
          end
          local pv = cvalues
          if is_tensor(pv) then pv = pv:item() end
          local padded = {}
          for j, t in ipairs(ts) do
            local need = false
            local pads = {}
            for k = 1, rank do
              local extra = want[k] - t.shape[k]
              pads[k] = {0, extra}
              if extra > 0 then need = true end
            end
            if need then
              if pv ~= nil then t = tf.pad(t, pads, {constant_values = pv}) else t = tf.pad(t, pads) end
            end
            padded[j] = t
          end
          return tf.stack(padded)
        end, col, what, "[" .. c .. "]")
      end
      return out
    end
  end

  iters.Unbatch = function(d)
    local it = iter_of(d._input)
    local cur, k, n
    return function()
      while true do
        if cur and k < n then
          k = k + 1
          local e = {n = cur.n}
          for c = 1, cur.n do e[c] = map_leaves(function(t) return tf.gather(t, k) end, cur[c]) end
          return e
        end
        cur = it()
        if cur == nil then return nil end
        local flat = flatten_elem(cur)
        n = nil
        for _, t in ipairs(flat) do
          if t.rank == 0 then raise("InvalidArgumentError", "unbatch: an element has a scalar component") end
          if n == nil then n = t.shape[1]
          elseif t.shape[1] ~= n then
            raise("InvalidArgumentError", "unbatch: components have different first dimensions: %d and %d", n,
              t.shape[1])
          end
        end
        k = 0
      end
    end
  end
  iters.Take = function(d)
    local nxt, src = row_stream(d)
    if nxt then
      return function()
        local i = nxt()
        if i == nil then return nil end
        return row_elem(src, i)
      end
    end
    local it = iter_of(d._input)
    local left = d._count
    return function()
      if left == 0 then return nil end
      if left > 0 then left = left - 1 end
      local e = it()
      if left == 0 then readio.close(it) end   -- file readers below stop now (their threads end)
      return e
    end
  end
  iters.Skip = function(d)
    local nxt, src = row_stream(d)
    if nxt then
      return function()
        local i = nxt()
        if i == nil then return nil end
        return row_elem(src, i)
      end
    end
    local it = iter_of(d._input)
    local skipped = false
    return function()
      if not skipped then
        skipped = true
        local k = d._count
        while k ~= 0 do
          if it() == nil then return nil end
          k = k - 1
        end
      end
      return it()
    end
  end
  iters.Repeat = function(d)
    local nxt, src = row_stream(d)
    if nxt then
      return function()
        local i = nxt()
        if i == nil then return nil end
        return row_elem(src, i)
      end
    end
    local count, reps = d._count, 0
    if count == 0 then return function() return nil end end
    local it = iter_of(d._input)
    local got_any = false
    return function()
      while true do
        local e = it()
        if e ~= nil then got_any = true; return e end
        reps = reps + 1
        if (count ~= -1 and reps >= count) or not got_any then return nil end
        got_any = false
        it = iter_of(d._input)
      end
    end
  end
  --- map with num_parallel_calls = P > 1: up to 2P input elements are
  -- taken at a time; those that call the map's traced graph directly
  -- (the signature of the first, no tape) run on P worker threads at once
  -- (bindings/mapparallel.c: a stateless graph on numeric tensors, as the
  -- thread contract allows); anything else, or a refused graph, runs here.
  -- Results keep the input order.
  local function parallel_map(d, it)
    local g, P = d._fn, d._par
    local internal = tf.core.internal
    local runner, refused = nil, false
    local out, oi = {}, 0
    local function one(e)
      local r = pack(g(unpack(e, 1, e.n)))
      if r.n == 0 or r[1] == nil then raise("ValueError", "map: the function returned no value (nil)") end
      return r
    end
    local function give(k)
      local r = out[k]
      out[k] = false
      if r.err then
        out, oi = {}, 0   -- the rest of this batch is dropped with the error
        if r.lua_err ~= nil then error(r.lua_err, 0) end
        internal.map_raise(r.err, r.msg)
      end
      return r
    end
    return function()
      if oi < #out then
        oi = oi + 1
        return give(oi)
      end
      out, oi = {}, 0
      local ins = {}
      for k = 1, 2 * P do
        local e = it()
        if e == nil then break end
        ins[k] = e
      end
      if #ins == 0 then return nil end
      -- the first element runs here (tracing the graph when it is new)
      out[1] = one(ins[1])
      local cf = g._last_cf
      local batch, where = {}, {}
      if not refused and cf and cf._G then
        for k = 2, #ins do
          local e = ins[k]
          local key, mode = tf.core.trace_key(unpack(e, 1, e.n))
          local entry = key and mode == 0 and g._fast and g._fast[key]
          if entry and entry.cf == cf and entry.all and not entry.objs then
            local args = {}
            for j = 1, e.n do args[j] = e[j] end
            batch[#batch + 1] = args
            where[#where + 1] = k
          end
        end
      end
      if #batch > 0 then
        runner = runner or internal.map_runner(P)
        local res, why = internal.map_run(runner, cf._G, batch)
        if res == nil then
          refused = true
          d._refused = why   -- kept for docs/specs: why the map ran on the Lua thread
        else
          for b, k in ipairs(where) do
            local y = res[b]
            if y.err then out[k] = y   -- raised at its turn
            else
              local r = pack(cf:_outputs(unpack(y, 1, y.n)))
              if r.n == 0 or r[1] == nil then raise("ValueError", "map: the function returned no value (nil)") end
              out[k] = r
            end
          end
        end
      end
      -- the others here, in order, stopping at a failure (raised at its turn)
      for k = 2, #ins do
        if not out[k] then
          local ok, r = pcall(one, ins[k])
          if not ok then
            for q = k + 1, #ins do out[q] = nil end
            out[k] = {n = 0, err = true, lua_err = r}
            break
          end
          out[k] = r
        elseif out[k].err then
          for q = k + 1, #ins do out[q] = nil end
          break
        end
      end
      oi = 1
      return give(1)
    end
  end

  iters.Map = function(d)
    local it = iter_of(d._input)
    local g = d._fn
    if d._par and d._par > 1 and not tracing() then
      local m = parallel_map(d, it)
      if readio.closer[it] then readio.closer[m] = function() readio.close(it) end end
      return m
    end
    local m = function()
      local e = it()
      if e == nil then return nil end
      local r = pack(g(unpack(e, 1, e.n)))
      if r.n == 0 or r[1] == nil then raise("ValueError", "map: the function returned no value (nil)") end
      return r
    end
    readio.ready[m] = readio.ready[it]   -- ready when its input is (interleave, deterministic = false)
    if readio.closer[it] then readio.closer[m] = function() readio.close(it) end end
    return m
  end
  iters.Filter = function(d)
    local it = iter_of(d._input)
    local g = d._fn
    return function()
      while true do
        local e = it()
        if e == nil then return nil end
        local keep = g(unpack(e, 1, e.n))
        if is_tensor(keep) then
          if keep.dtype ~= tf.bool or keep.rank ~= 0 then
            raise("InvalidArgumentError", "filter: the predicate must return a bool scalar, got %s %s",
              keep.dtype.name, shape_str(keep))
          end
          keep = keep:item()
        elseif type(keep) ~= "boolean" then
          raise("TypeError", "filter: the predicate must return a boolean or a bool scalar tensor, got %s", type(keep))
        end
        if keep then return e end
      end
    end
  end
  --- Prefetch of batches of a finite row pipeline: the epoch's rows are
  -- listed here, and a worker thread (core/data.c, ltf_prefetch) copies
  -- each batch's rows out of the source tensors, up to buffer_size batches
  -- ahead of the consumer. nil when the pipeline does not qualify.
  local function threaded_prefetch(d)
    local b = d._input
    if b.kind ~= "Batch" or tracing() then return nil end
    local c = b._input:cardinality()
    if c < 0 then return nil end
    local nxt, src, arr = row_stream(b._input)
    if not nxt then return nil end
    for _, t in ipairs(src._flat) do
      if t.dtype == tf.string or t:is_symbolic() then return nil end
    end
    local rows = arr
    if not rows then
      rows = {}
      local n = 0
      while true do
        local i = nxt()
        if i == nil then break end
        n = n + 1
        rows[n] = i
      end
    end
    local ok, p = pcall(internal.prefetch_start, src._flat, rows, b._size, b._drop, d._size)
    if not ok then return nil end
    local pnext, rebuild = internal.prefetch_next, src._rebuild
    return function()
      local r = pack(pnext(p))
      if r.n == 0 then return nil end
      return rebuild(r)
    end
  end

  --- A pipeline the worker cannot run (repeat_, map, generators, ...) is
  -- produced on the Lua thread, where reading ahead overlaps with nothing:
  -- each element is handed out as soon as it is made, as TensorFlow hands
  -- out the first element at once (reading buffer_size elements first cost
  -- O(buffer_size) before the first, and never ended on an infinite input).
  iters.Prefetch = function(d)
    local threaded = threaded_prefetch(d)
    if threaded then return threaded end
    return iter_of(d._input)
  end
  -- prefetch_to_device: the input's elements (made on the host) copied to
  -- the device, up to _size elements ahead of the one handed out (each copy
  -- queued on the device's stream as it is made)
  iters.PrefetchToDevice = function(d)
    local it = iter_of(d._input)
    local kind, index = d._kind, d._index
    local function move(v)
      if is_tensor(v) then
        if v.dtype == tf.string or v.dtype == tf.resource or v:is_symbolic() then return v end
        return tf.core.to_device(v, kind, index)
      end
      if is_plain_table(v) then
        local out = {}
        for k, e in pairs(v) do out[k] = move(e) end
        return out
      end
      return v
    end
    local queue, head, tail, done = {}, 1, 0, false
    local function fill()
      while not done and tail - head + 1 < d._size do
        local e = it()
        if e == nil then
          done = true
        else
          local m = {n = e.n}
          for i = 1, e.n do m[i] = move(e[i]) end
          tail = tail + 1
          queue[tail] = m
        end
      end
    end
    return function()
      fill()
      local e = queue[head]
      if e == nil then return nil end
      queue[head] = nil
      head = head + 1
      fill()   -- the next elements' copies are queued before this one is used
      return e
    end
  end
  iters.Cache = function(d)
    if d._store then
      local store, i = d._store, 0
      return function()
        i = i + 1
        return store[i]
      end
    end
    local it = iter_of(d._input)
    local buf = {}
    return function()
      local e = it()
      if e == nil then
        if buf then d._store = buf end
        buf = nil
        return nil
      end
      if buf then buf[#buf + 1] = e end
      return e
    end
  end
  iters.Enumerate = function(d)
    local it = iter_of(d._input)
    local k = d._start - 1
    return function()
      local e = it()
      if e == nil then return nil end
      k = k + 1
      local r = {n = e.n + 1, tf.constant(k, tf.int64)}
      for c = 1, e.n do r[c + 1] = e[c] end
      return r
    end
  end
  iters.Concatenate = function(d)
    local it = iter_of(d._inputs[1])
    local second = false
    return function()
      local e = it()
      if e == nil and not second then
        second = true
        it = iter_of(d._inputs[2])
        e = it()
      end
      return e
    end
  end
  -- }====

  -- {==== graph access (iteration inside tf.fn): lua/tf/data/graph.lua
  local graph = require("tf.data.graph")(tf, {
    Dataset = Dataset, raise = raise, check_self = check_self, check_fn = check_fn, tracing = tracing,
    iter_of = iter_of, gather_rows = gather_rows, flatten_elem = flatten_elem, to_struct = to_struct,
    no_graph = no_graph, INF = INF,
  })
  local tf_for = graph.tf_for
  -- }====

  -- {==== iterators
  local Iterator = {__name = "tf.data.Iterator"}
  Iterator.__index = Iterator

  --- it(): the next element's values, nil at the end (a Lua iterator).
  function Iterator.__call(it)
    if getmetatable(it) ~= Iterator then raise("TypeError", "iterator: expected a tf.data.Iterator") end
    -- tf.data runs on the host, as TensorFlow runs it on the CPU (with a GPU
    -- visible: in a /cpu:0 scope, a GPU scope around it too; docs/devices.md)
    local hs = tf.core.internal.host_scope
    local _ <close> = hs and hs(true) or nil
    local nxt = it._next
    if nxt == nil then
      nxt = iter_of(it._ds)
      it._next = nxt
    end
    local e = nxt()
    if e == nil then return nil end
    return unpack(e, 1, e.n)
  end
  function Iterator.__tf_for(it, loop)
    if getmetatable(it) ~= Iterator then raise("TypeError", "__tf_for: expected a tf.data.Iterator") end
    return tf_for(it._ds, loop)
  end
  --- it:get_next(): as it(), but an OutOfRangeError at the end.
  function Iterator:get_next()
    local r = pack(self())
    if r[1] == nil then raise("OutOfRangeError", "get_next: end of sequence") end
    return unpack(r, 1, r.n)
  end

  --- ds:iter(): an iterator (starts reading on its first call):
  -- `for x, y in ds:iter() do ... end`.
  function Dataset:iter()
    check_self(self, "iter")
    return setmetatable({_ds = self}, Iterator)
  end
  Dataset.__iter = Dataset.iter

  --- ds:as_list(): every element, each a packed table {n =, values...}
  -- collected as tables of values ({x, y} for tuples, x for one value).
  function Dataset:as_list()
    check_self(self, "as_list")
    if self:cardinality() == INF then
      raise("InvalidArgumentError", "as_list: the dataset is infinite (repeat_() without a count?): take(n) first")
    end
    local out = {}
    local it = iter_of(self)
    while true do
      local e = it()
      if e == nil then break end
      out[#out + 1] = e.n == 1 and e[1] or {unpack(e, 1, e.n)}
    end
    return out
  end

  function Dataset:__tostring()
    check_self(self, "tostring")
    return sfmt("<%s %s, cardinality %d>", "tf.data.Dataset", self.kind, self:cardinality())
  end

  function Dataset:__len()
    check_self(self, "len")
    local c = self:cardinality()
    if c < 0 then
      raise("TypeError", "the length of a dataset is %s: use ds:cardinality()", c == INF and "infinite" or "unknown")
    end
    return c
  end
  -- }====


  -- {==== file datasets in their own modules (lua/tf/data/tfrecord.lua)
  local shared = {Dataset = Dataset, new = new, raise = raise, kw = kw, check_int = check_int, iters = iters,
                  card = card, graphs = graph.graphs, iter_of = iter_of, UNK = UNK, INF = INF, tracing = tracing}
  require("tf.data.tfrecord")(tf, shared)
  -- }====

  -- file datasets, CSV, interleave, window, save/load, ...: lua/tf/data/files.lua
  require("tf.data.files")(tf, {
    Dataset = Dataset, new = new, iters = iters, card = card, iter_of = iter_of, raise = raise, kw = kw,
    check_int = check_int, check_self = check_self, check_fn = check_fn, check_ds = check_ds,
    batch_fast = batch_fast, is_plain_table = is_plain_table, flatten_elem = flatten_elem, tracing = tracing,
    no_graph = no_graph, INF = INF, UNK = UNK,
  })

  -- tf.keras.datasets (mnist.load_data, lua/tf/keras/datasets.lua) is
  -- installed with tf.keras: loading tf.data does not load Keras.
  return data
end
