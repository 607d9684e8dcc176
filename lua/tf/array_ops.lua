--- tf.array_ops: tensor indexing and the movement ops as tensor methods.
--
-- `x[i]` is the i-th slice along the first axis (1-based, negative from the
-- end). `x[{...}]` slices several axes at once, one entry per axis:
--   an integer i        picks index i and drops the axis
--   {start, stop, step} a range, stop INCLUSIVE (as string.sub); any part
--                       may be nil: {2, nil} is "from 2 to the end"
--   tf.all or ":"       the whole axis
--   tf.newaxis          inserts an axis of size 1
--   tf.ellipsis or "..." as many whole axes as needed
-- Axes not mentioned are kept whole. `x[t]` with an integer tensor `t`
-- gathers along the first axis (1-based values). Full text: docs/indexing.md.
return function(tf)
  local methods = tf.Tensor[1]
  local errors = tf.errors

  local function sentinel(name)
    return setmetatable({}, {__name = name, __tostring = function() return name end})
  end

  --- Index entry: the whole axis (`x[{tf.all, 1}]`), also written ":".
  tf.all = sentinel("tf.all")
  --- Index entry: a new axis of size 1.
  tf.newaxis = sentinel("tf.newaxis")
  --- Index entry: as many whole axes as the other entries leave, also "...".
  tf.ellipsis = sentinel("tf.ellipsis")

  local INT_DTYPES = {int32 = true, int64 = true}
  local THIS_FILE = debug.getinfo(1, "S").source

  -- Raise an error object blamed on the first caller outside this file and
  -- the C metamethod (tail calls make a fixed level unreliable).
  local function fail(kind, message)
    local level = 2
    while true do
      local info = debug.getinfo(level, "S")
      if not info then level = 2 break end
      if info.source ~= THIS_FILE and info.what ~= "C" then break end
      level = level + 1
    end
    errors.raise(kind, message, level)
  end

  -- The integer a key stands for, or nil.
  local function as_integer(v)
    local mt = math.type(v)
    if mt == "integer" then return v end
    if mt == "float" then return math.tointeger(v) end
    if tf.is_tensor(v) and v.rank == 0 and INT_DTYPES[v.dtype.name] and not v:is_symbolic() then
      return v:item()
    end
    return nil
  end

  local function describe(v)
    if tf.is_tensor(v) then return ("a %s tensor of shape %s"):format(v.dtype.name, tostring(v.shape)) end
    return ("%s %s"):format(type(v), tostring(v))
  end

  -- Call tf.strided_slice, reporting its errors as the indexing's.
  local function run_slice(x, begin, stop, strides, masks)
    local ok, res = pcall(tf.strided_slice, x, begin, stop, strides, masks)
    if ok then return res end
    if errors.is_error(res) then
      local msg = res.message:gsub("^strided_slice: index ", "index: "):gsub("^strided_slice: ", "index: ")
      fail(res.kind, msg)
    end
    error(res, 0)
  end

  local function zero_index(what)
    fail("InvalidArgumentError",
      ("index: %s is 0, but indices are 1-based (1 is the first, -1 the last)"):format(what))
  end

  -- One entry of a multi-axis key into the strided_slice lists (bit = 1 << (k-1)).
  local function add_entry(spec, k, e)
    local bit = 1 << (k - 1)
    local i = as_integer(e)
    if i then
      if i == 0 then zero_index(("entry %d"):format(k)) end
      spec.b[k], spec.e[k], spec.s[k] = i, i, 1
      spec.shrink = spec.shrink | bit
      return
    end
    spec.b[k], spec.e[k], spec.s[k] = 1, 1, 1
    if e == tf.all or e == ":" then
      spec.bm, spec.em = spec.bm | bit, spec.em | bit
    elseif e == tf.newaxis then
      spec.newaxis = spec.newaxis | bit
    elseif e == tf.ellipsis or e == "..." then
      if spec.ellipsis ~= 0 then
        fail("InvalidArgumentError", "index: at most one ellipsis (tf.ellipsis or \"...\") is allowed")
      end
      spec.ellipsis = bit
    elseif type(e) == "table" and getmetatable(e) == nil then
      for key in pairs(e) do
        if key ~= 1 and key ~= 2 and key ~= 3 then
          fail("TypeError",
            ("index: entry %d: a range is {start, stop[, step]}, got a key %s"):format(k, tostring(key)))
        end
      end
      local start, stop, step = e[1], e[2], e[3]
      local si, ei, st = as_integer(start), as_integer(stop), as_integer(step)
      if (start ~= nil and not si) or (stop ~= nil and not ei) or (step ~= nil and not st) then
        fail("TypeError",
          ("index: entry %d: a range's start, stop and step must be integers or nil"):format(k))
      end
      if si == 0 then zero_index(("the start of entry %d"):format(k)) end
      if ei == 0 then zero_index(("the stop of entry %d"):format(k)) end
      if st == 0 then fail("InvalidArgumentError", ("index: entry %d has step 0"):format(k)) end
      if si then spec.b[k] = si else spec.bm = spec.bm | bit end
      if ei then spec.e[k] = ei else spec.em = spec.em | bit end
      spec.s[k] = st or 1
    else
      fail("TypeError",
        ("index: entry %d is %s; expected an integer, {start, stop[, step]}, tf.all, tf.newaxis or tf.ellipsis")
          :format(k, describe(e)))
    end
  end

  local function index_table(x, key)
    local n = #key
    for k in pairs(key) do
      if math.type(k) ~= "integer" or k < 1 or k > n then
        fail("TypeError", ("index: a multi-axis key is a list of entries, got a key %s"):format(tostring(k)))
      end
    end
    if n > 16 then fail("InvalidArgumentError", ("index: %d entries, at most 16"):format(n)) end
    local spec = {b = {}, e = {}, s = {}, bm = 0, em = 0, shrink = 0, newaxis = 0, ellipsis = 0}
    for k = 1, n do add_entry(spec, k, key[k]) end
    return run_slice(x, spec.b, spec.e, spec.s, {begin_mask = spec.bm, end_mask = spec.em,
      shrink_axis_mask = spec.shrink, new_axis_mask = spec.newaxis, ellipsis_mask = spec.ellipsis})
  end

  --- x[key]: see the file header and docs/indexing.md. Private (tf.core.internal):
  -- Tensor's __index calls it.
  function tf.core.internal.index_tensor(x, key)
    local i = as_integer(key)
    if i then
      if x.rank == 0 then
        fail("InvalidArgumentError", "index: cannot index a scalar tensor (rank 0)")
      end
      if i == 0 then
        fail("InvalidArgumentError", "index: 0 is not a valid index: indices are 1-based (1 is the first, -1 the last)")
      end
      return run_slice(x, {i}, {i}, {1}, {shrink_axis_mask = 1})
    end
    if type(key) == "number" then
      fail("TypeError", ("index: expected an integer index, got %s"):format(tostring(key)))
    end
    if tf.is_tensor(key) then
      if INT_DTYPES[key.dtype.name] then return tf.gather(x, key) end
      fail("TypeError", ("index: cannot index with %s (use an integer tensor of 1-based indices)")
        :format(describe(key)))
    end
    if type(key) == "table" then return index_table(x, key) end
    fail("TypeError", ("index: cannot index a tensor with %s"):format(describe(key)))
  end


  -- {==== Shapes given as tensors (TensorFlow's auto-packing)
  -- A shape, multiples, begin or size argument may be a Lua list, an int32/
  -- int64 tensor, or a list mixing numbers and scalar integer tensors
  -- ({tf.shape(x)[1], -1, 4}). Returns what the C op takes: the list
  -- itself when it holds only numbers, a list of numbers when every tensor
  -- in it is eager (an eager tensor is just values), else one int32/int64
  -- vector (tf.stack of the entries), whose values the op reads when it runs.
  local function shape_arg(v, op, arg)
    if type(v) ~= "table" or getmetatable(v) ~= nil then return v end
    local has_tensor, symbolic, wide = false, false, false
    for i = 1, #v do
      local e = v[i]
      if tf.is_tensor(e) then
        if not INT_DTYPES[e.dtype.name] or e.rank ~= 0 then
          fail("TypeError", ("%s: '%s' entry %d is %s; expected an integer or a scalar int32/int64 tensor")
            :format(op, arg, i, describe(e)))
        end
        has_tensor = true
        if e:is_symbolic() then symbolic = true end
        if e.dtype.name == "int64" then wide = true end
      end
    end
    if not has_tensor then return v end
    if not symbolic then
      local out = {}
      for i = 1, #v do out[i] = tf.is_tensor(v[i]) and v[i]:item() or v[i] end
      return out
    end
    local dt = wide and tf.int64 or tf.int32
    local parts = {}
    for i = 1, #v do
      local e = v[i]
      if tf.is_tensor(e) then
        parts[i] = e.dtype == dt and e or tf.cast(e, dt)
      elseif math.type(e) == "integer" or (math.type(e) == "float" and math.tointeger(e)) then
        parts[i] = tf.constant(math.tointeger(e), {dtype = dt})
      else
        fail("TypeError", ("%s: '%s' entry %d is %s; expected an integer or a scalar int32/int64 tensor")
          :format(op, arg, i, describe(e)))
      end
    end
    return tf.stack(parts)
  end
  tf.core.internal.shape_arg = shape_arg

  local function is_symbolic(t) return tf.is_tensor(t) and t:is_symbolic() end

  local core_reshape, core_broadcast_to, core_tile, core_slice = tf.reshape, tf.broadcast_to, tf.tile, tf.slice

  --- tf.reshape(tensor, shape): 'shape' a list, an int32/int64 tensor or a
  -- list mixing numbers and scalar tensors (values read when the op runs).
  function tf.reshape(x, shape, ...)
    return core_reshape(x, shape_arg(shape, "reshape", "shape"), ...)
  end

  --- tf.broadcast_to(input, shape), 'shape' as tf.reshape's.
  function tf.broadcast_to(x, shape, ...)
    return core_broadcast_to(x, shape_arg(shape, "broadcast_to", "shape"), ...)
  end

  local function int_vector(t, dt)
    return t.dtype == dt and t or tf.cast(t, dt)
  end

  --- tf.tile(input, multiples): 'multiples' may be a tensor known only when
  -- the graph runs: then x is broadcast to (m1, d1, m2, d2, ...) and reshaped.
  function tf.tile(x, multiples, ...)
    multiples = shape_arg(multiples, "tile", "multiples")
    if not is_symbolic(multiples) then
      if tf.is_tensor(multiples) and multiples.dtype.name ~= "int32" and multiples.dtype.name ~= "int64" then
        fail("TypeError", ("tile: 'multiples' must be an int32 or int64 tensor, got %s"):format(multiples.dtype.name))
      end
      return core_tile(x, multiples, ...)
    end
    x = tf.convert_to_tensor(x)
    if not INT_DTYPES[multiples.dtype.name] then
      fail("TypeError", ("tile: 'multiples' must be an int32 or int64 tensor, got %s"):format(multiples.dtype.name))
    end
    local n = x.rank
    if n == nil or n < 0 then
      fail("InvalidArgumentError", "tile: 'input' must have a known rank when 'multiples' is a tensor")
    end
    if multiples.rank ~= 1 or (multiples.shape[1] and multiples.shape[1] ~= n) then
      fail("InvalidArgumentError", ("tile: 'multiples' must be a vector of %d entries (one per dimension), got shape %s")
        :format(n, tostring(multiples.shape)))
    end
    if n == 0 then return x end
    local m = int_vector(multiples, tf.int32)
    local xs = tf.shape(x)
    local one = tf.constant(1, {dtype = tf.int32})
    local expand, target = {}, {}
    for k = 1, n do
      expand[2 * k - 1], expand[2 * k] = one, xs[k]
      target[2 * k - 1], target[2 * k] = m[k], xs[k]
    end
    local y = core_broadcast_to(core_reshape(x, tf.stack(expand)), tf.stack(target))
    return core_reshape(y, m * xs)
  end

  --- tf.slice(input, begin, size): 'begin' (1-based) and 'size' (-1: to
  -- the end) may be tensors known only when the graph runs: then one gather
  -- per axis of the positions begin .. begin + size - 1.
  function tf.slice(x, begin, size, ...)
    begin = shape_arg(begin, "slice", "begin")
    size = shape_arg(size, "slice", "size")
    if not is_symbolic(begin) and not is_symbolic(size) then
      if tf.is_tensor(begin) then begin = begin:totable() end
      if tf.is_tensor(size) then size = size:totable() end
      return core_slice(x, begin, size, ...)
    end
    x = tf.convert_to_tensor(x)
    local n = x.rank
    if n == nil or n < 0 then
      fail("InvalidArgumentError", "slice: 'input' must have a known rank when 'begin' or 'size' is a tensor")
    end
    local function vec(v, arg)
      if tf.is_tensor(v) then
        if not INT_DTYPES[v.dtype.name] then
          fail("TypeError", ("slice: '%s' must be an int32 or int64 tensor, got %s"):format(arg, v.dtype.name))
        end
        if v.rank ~= 1 or (v.shape[1] and v.shape[1] ~= n) then
          fail("InvalidArgumentError", ("slice: '%s' must be a vector of %d entries (one per dimension), got shape %s")
            :format(arg, n, tostring(v.shape)))
        end
        return int_vector(v, tf.int32)
      end
      if type(v) ~= "table" or #v ~= n then
        fail("InvalidArgumentError", ("slice: '%s' must have %d entries (one per dimension)"):format(arg, n))
      end
      return tf.constant(v, {dtype = tf.int32})
    end
    local b, s = vec(begin, "begin"), vec(size, "size")
    local xs = tf.shape(x)
    local y = x
    for k = 1, n do
      local bk, sk = b[k], s[k]
      -- size -1: to the end (dims - begin + 1 positions, begin being 1-based)
      sk = tf.where(tf.less(sk, 0), xs[k] - bk + 1, sk)
      y = tf.gather(y, tf.range(bk, bk + sk, 1), {axis = k})
    end
    return y
  end
  -- }====

  -- The movement ops as methods: x:reshape({2, 3}), x:transpose(), ...
  for _, name in ipairs({"reshape", "transpose", "expand_dims", "squeeze", "slice", "strided_slice",
                         "gather", "tile", "pad", "reverse", "broadcast_to", "split", "unstack",
                         "one_hot"}) do
    methods[name] = tf[name]
  end
end
