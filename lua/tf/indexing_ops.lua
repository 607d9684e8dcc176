--- tf.indexing_ops: the indexing ops written over primitives, as
-- TensorFlow composes them: tf.where with one argument (the engine's
-- where_indices), tf.gather_nd with batch_dims, tf.boolean_mask (where +
-- gather_nd, or reshape + where + gather along a later axis), tf.repeat
-- (tile or gather), tf.meshgrid (reshape + broadcasting), tf.identity_n,
-- and tf.sequence_mask's arguments. The primitives (gather_nd, scatter_nd,
-- tensor_scatter_nd_*, unique, roll, ensure_shape, sequence_mask) are C
-- functions from bindings/indexing.c. Positions are 1-based. Full text:
-- docs/indexing.md.
return function(tf)
  local core = tf.core

  local function raise(kind, fmt, ...)
    tf.errors.raise(kind, string.format(fmt, ...), 3)
  end

  local function check_options(op, opts, accepted)
    if opts == nil then return {} end
    if type(opts) ~= "table" or tf.is_tensor(opts) then
      raise("TypeError", "%s: options must be a table, got %s", op, type(opts))
    end
    for k in pairs(opts) do
      local ok = false
      for _, a in ipairs(accepted) do if k == a then ok = true end end
      if not ok then
        raise("TypeError", "%s: unknown option '%s' (accepted: %s)", op, tostring(k), table.concat(accepted, ", "))
      end
    end
    return opts
  end

  local function as_tensor(x, op, arg, dtype)
    if tf.is_tensor(x) then return x end
    if x == nil then raise("TypeError", "%s: '%s' is required", op, arg) end
    return tf.constant(x, dtype)
  end

  -- A 1-based (or negative) axis against `rank`, as a 1-based positive one.
  local function norm_axis(op, axis, rank)
    if math.type(axis) ~= "integer" then
      raise("TypeError", "%s: 'axis' must be an integer, got %s", op, tostring(axis))
    end
    local a = axis < 0 and axis + rank + 1 or axis
    if axis == 0 or a < 1 or a > rank then
      raise("InvalidArgumentError", "%s: 'axis' %d is out of range for rank %d (expected 1..%d or -%d..-1)",
            op, axis, rank, rank, rank)
    end
    return a
  end

  -- {==== tf.gather_nd with batch_dims
  local gather_nd_c = tf.core.gather_nd   -- the engine's op (this module replaces tf.gather_nd)
  --- tf.gather_nd(params, indices [, {batch_dims = 0}]): with batch_dims b,
  -- the first b dims of indices and params are matched pairwise and each row
  -- indexes params[b1, ..., bb] (as TensorFlow): written as gather_nd over
  -- indices with the batch coordinates prepended (cumsums of ones, so any
  -- dims may be unknown), so the gradient is gather_nd's.
  function tf.gather_nd(params, indices, opts)
    local bd = type(opts) == "table" and not tf.is_tensor(opts) and opts.batch_dims or
               (math.type(opts) == "integer" and opts or nil)
    if bd == nil or bd == 0 then return gather_nd_c(params, indices, opts) end
    if type(opts) == "table" then check_options("gather_nd", opts, {"batch_dims", "name"}) end
    if math.type(bd) ~= "integer" then raise("TypeError", "gather_nd: 'batch_dims' must be an integer") end
    params = as_tensor(params, "gather_nd", "params")
    indices = as_tensor(indices, "gather_nd", "indices", tf.int32)
    local di, dp = indices:_dims(), params:_dims()
    if di == nil or dp == nil then
      raise("ValueError", "gather_nd: 'batch_dims' needs the ranks of params and indices")
    end
    if bd < 0 or bd >= #di or bd >= #dp then
      raise("InvalidArgumentError", "gather_nd: 'batch_dims' %d must be in 0..%d (less than the ranks of indices, "
            .. "%d, and params, %d)", bd, math.min(#di, #dp) - 1, #di, #dp)
    end
    for d = 1, bd do
      if di[d] >= 0 and dp[d] >= 0 and di[d] ~= dp[d] then
        raise("InvalidArgumentError", "gather_nd: the first %d (batch) dims of params %s and indices %s must match",
              bd, tostring(params.shape), tostring(indices.shape))
      end
    end
    local ones = tf.ones_like(indices[{"...", {1, 1}}])
    local parts = {}
    for d = 1, bd do parts[d] = tf.cumsum(ones, d) end
    parts[bd + 1] = indices
    return gather_nd_c(params, tf.concat(parts, -1))
  end
  -- }====

  -- {==== tf.where
  local where3 = tf.core.where   -- the engine's op (this module replaces tf.where)
  --- tf.where(condition): the 1-based coordinates of the true (nonzero)
  -- elements, int64 of shape (num_true, rank), in row-major order.
  -- tf.where(condition, x, y): elementwise choice (bindings/elementwise.c).
  function tf.where(condition, x, y, ...)
    if x == nil and y == nil then return core.where_indices(condition) end
    if x == nil or y == nil then
      raise("ValueError", "where: 'x' and 'y' must both be given or both be omitted")
    end
    return where3(condition, x, y, ...)
  end
  -- }====

  --- tf.boolean_mask(tensor, mask [, {axis = 1}]): the slices of `tensor`
  -- where `mask` (bool, of the shape of tensor's dims axis .. axis + rank(mask) - 1)
  -- is true, gathered along `axis`: shape
  -- tensor.shape[:axis-1] .. (num_true,) .. tensor.shape[axis+rank(mask):].
  function tf.boolean_mask(tensor, mask, opts)
    if type(opts) == "number" then opts = {axis = opts} end
    opts = check_options("boolean_mask", opts, {"axis", "name"})
    tensor = as_tensor(tensor, "boolean_mask", "tensor")
    mask = as_tensor(mask, "boolean_mask", "mask")
    local dm, dt = mask:_dims(), tensor:_dims()
    if dm == nil then raise("ValueError", "boolean_mask: the rank of 'mask' must be known") end
    if #dm == 0 then raise("ValueError", "boolean_mask: 'mask' cannot be a scalar") end
    if mask.dtype ~= tf.bool then
      raise("TypeError", "boolean_mask: 'mask' has dtype %s, expected bool", mask.dtype.name)
    end
    if dt == nil then raise("ValueError", "boolean_mask: the rank of 'tensor' must be known") end
    local axis = opts.axis or 1
    axis = norm_axis("boolean_mask", axis, #dt)
    if axis + #dm - 1 > #dt then
      raise("ValueError", "boolean_mask: 'mask' of shape %s does not fit 'tensor' of shape %s at axis %d",
            tostring(mask.shape), tostring(tensor.shape), axis)
    end
    for k = 1, #dm do
      local a, b = dm[k], dt[axis + k - 1]
      if a >= 0 and b >= 0 and a ~= b then
        raise("ValueError", "boolean_mask: shapes %s and %s are incompatible (mask against tensor's dims %d..%d)",
              tostring(mask.shape), tostring(tensor.shape), axis, axis + #dm - 1)
      end
    end
    if axis == 1 then
      -- the coordinates of the true elements index the leading dims directly;
      -- gather_nd's gradient needs no known shape (inside tf.fn too)
      return tf.gather_nd(tensor, core.where_indices(mask))
    end
    local shape, n = {}, 1
    for d = 1, axis - 1 do shape[#shape + 1] = dt[d] end
    for k = 1, #dm do
      local d = dt[axis + k - 1] >= 0 and dt[axis + k - 1] or dm[k]
      if d < 0 or n < 0 then n = -1 else n = n * d end
    end
    shape[#shape + 1] = n
    for d = axis + #dm, #dt do shape[#shape + 1] = dt[d] end
    local unknown = 0
    for _, d in ipairs(shape) do if d < 0 then unknown = unknown + 1 end end
    if unknown > 1 then
      raise("ValueError", "boolean_mask: 'tensor' of shape %s has too many unknown dimensions to flatten the masked "
            .. "ones", tostring(tensor.shape))
    end
    local flat = #dm == 1 and tensor or tf.reshape(tensor, shape)
    local idx = tf.reshape(core.where_indices(tf.reshape(mask, {-1})), {-1})
    return tf.gather(flat, idx, axis)
  end

  --- tf.repeat(input, repeats [, axis]): each element (or slice along
  -- `axis`, 1-based) repeated; `repeats` an integer or one count per slice.
  -- Without an axis, the flattened input is repeated.
  function tf.repeat_(input, repeats, axis)
    if type(axis) == "table" then
      local o = check_options("repeat", axis, {"axis", "name"})
      axis = o.axis
    end
    input = as_tensor(input, "repeat", "input")
    if repeats == nil then raise("TypeError", "repeat: 'repeats' is required") end
    if axis == nil then
      input = tf.reshape(input, {-1})
      axis = 1
    end
    local dims = input:_dims()
    if dims == nil then raise("ValueError", "repeat: the rank of 'input' must be known") end
    if #dims == 0 then raise("InvalidArgumentError", "repeat: 'input' must have rank >= 1 when an axis is given") end
    axis = norm_axis("repeat", axis, #dims)
    local list
    if tf.is_tensor(repeats) then
      if repeats:is_symbolic() then
        raise("UnimplementedError", "repeat: 'repeats' must be known while tracing (a Lua value or a constant)")
      end
      if repeats.dtype ~= tf.int32 and repeats.dtype ~= tf.int64 then
        raise("TypeError", "repeat: 'repeats' has dtype %s, expected int32 or int64", repeats.dtype.name)
      end
      if repeats.rank > 1 then raise("InvalidArgumentError", "repeat: 'repeats' must be a scalar or 1-D") end
      list = repeats:totable()
    elseif type(repeats) == "table" then
      list = repeats
    else
      list = repeats
    end
    if type(list) == "table" and #list == 1 then list = list[1] end
    if type(list) ~= "table" then
      local r = math.tointeger(list)
      if r == nil or r < 0 then
        raise("InvalidArgumentError", "repeat: 'repeats' must be non-negative integers, got %s", tostring(list))
      end
      -- insert an axis of r copies after `axis`, then merge the two
      local x = tf.expand_dims(input, axis + 1)
      local mult = {}
      for d = 1, #dims + 1 do mult[d] = d == axis + 1 and r or 1 end
      local t = tf.tile(x, mult)
      local shape = {}
      for d = 1, #dims do shape[d] = dims[d] end
      shape[axis] = dims[axis] >= 0 and dims[axis] * r or -1
      local unknown = 0
      for _, d in ipairs(shape) do if d < 0 then unknown = unknown + 1 end end
      if unknown > 1 then
        raise("ValueError", "repeat: 'input' of shape %s has too many unknown dimensions", tostring(input.shape))
      end
      return tf.reshape(t, shape)
    end
    local D = dims[axis]
    if D >= 0 and #list ~= D then
      raise("InvalidArgumentError", "repeat: 'repeats' has %d entries but axis %d of input has size %d",
            #list, axis, D)
    end
    local idx = {}
    for i, r in ipairs(list) do
      r = math.tointeger(r)
      if r == nil or r < 0 then
        raise("InvalidArgumentError", "repeat: 'repeats' must be non-negative integers, got %s", tostring(list[i]))
      end
      for _ = 1, r do idx[#idx + 1] = i end
    end
    local it = #idx == 0 and tf.zeros({0}, tf.int32) or tf.constant(idx, tf.int32)
    return tf.gather(input, it, axis)
  end
  tf["repeat"] = tf.repeat_

  --- tf.meshgrid(x1, x2, ... [, {indexing = "xy"}]): N-d grids from 1-D
  -- coordinates, as a list. "xy" (Cartesian, default) swaps the first two
  -- output dimensions, "ij" (matrix) keeps the argument order.
  function tf.meshgrid(...)
    local args = table.pack(...)
    local opts = {}
    if args.n > 0 and type(args[args.n]) == "table" and not tf.is_tensor(args[args.n]) and
       getmetatable(args[args.n]) == nil and #args[args.n] == 0 then
      opts = check_options("meshgrid", args[args.n], {"indexing", "name"})
      args.n = args.n - 1
    end
    local indexing = opts.indexing or "xy"
    if indexing ~= "xy" and indexing ~= "ij" then
      raise("ValueError", "meshgrid: 'indexing' must be 'xy' or 'ij', got %s", tostring(indexing))
    end
    local n = args.n
    local xs = {}
    for i = 1, n do
      xs[i] = tf.reshape(as_tensor(args[i], "meshgrid", "x" .. i), {-1})
    end
    -- output axis of argument i
    local function axis_of(i)
      if indexing == "xy" and n >= 2 and i <= 2 then return 3 - i end
      return i
    end
    local parts = {}
    for i = 1, n do
      local shape = {}
      for d = 1, n do shape[d] = 1 end
      shape[axis_of(i)] = -1
      parts[i] = tf.reshape(xs[i], shape)
    end
    local out = {}
    for i = 1, n do
      local r = parts[i]
      for j = 1, n do
        if j ~= i then
          local z = tf.zeros_like(parts[j])
          if z.dtype ~= r.dtype then z = tf.cast(z, r.dtype) end
          r = r + z
        end
      end
      out[i] = r
    end
    return out
  end

  local sequence_mask_c = core.sequence_mask
  --- tf.sequence_mask(lengths [, maxlen [, dtype = tf.bool]]): mask[..., j]
  -- is j <= lengths[...] (j = 1..maxlen), shape lengths.shape .. (maxlen,).
  -- maxlen defaults to max(lengths), known when the op runs (inside tf.fn too).
  function tf.sequence_mask(lengths, maxlen, dtype)
    if type(maxlen) == "table" and not tf.is_tensor(maxlen) then
      local o = check_options("sequence_mask", maxlen, {"maxlen", "dtype", "name"})
      maxlen, dtype = o.maxlen, o.dtype
    end
    lengths = as_tensor(lengths, "sequence_mask", "lengths")
    if tf.is_tensor(maxlen) then
      if maxlen:is_symbolic() or maxlen.rank ~= 0 then
        raise("ValueError", "sequence_mask: 'maxlen' must be an integer or a scalar constant")
      end
      maxlen = maxlen:item()
    end
    if maxlen ~= nil then
      local m = math.tointeger(maxlen)
      if m == nil or m < 0 then
        raise("InvalidArgumentError", "sequence_mask: 'maxlen' must be a non-negative integer, got %s",
              tostring(maxlen))
      end
      maxlen = m
    end
    return sequence_mask_c(lengths, maxlen, dtype)
  end

  --- tf.identity_n(input): a list of tf.identity of each tensor of the list.
  function tf.identity_n(input)
    if type(input) ~= "table" or tf.is_tensor(input) then
      raise("TypeError", "identity_n: 'input' must be a list of tensors, got %s", type(input))
    end
    local out = {}
    for i = 1, #input do out[i] = tf.identity(as_tensor(input[i], "identity_n", "input")) end
    return out
  end
end
