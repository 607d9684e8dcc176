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

  -- The movement ops as methods: x:reshape({2, 3}), x:transpose(), ...
  for _, name in ipairs({"reshape", "transpose", "expand_dims", "squeeze", "slice", "strided_slice",
                         "gather", "tile", "pad", "reverse", "broadcast_to", "split", "unstack",
                         "one_hot"}) do
    methods[name] = tf[name]
  end
end
