--- tf.TensorArray: a list of tensors of one dtype and element shape that
-- graph control flow can carry (a loop variable of tf.while_loop, an output
-- of tf.cond). Indices are 1-based. As in TensorFlow 2, methods return the
-- updated array: `ta = ta:write(i, v)`.
--
-- The elements live in one buffer tensor of shape (rows, element...):
-- write is the registry op tensor_array_write (row i replaced; with
-- dynamic_size the buffer grows, new rows are zeros), read and gather are
-- gather, stack is the buffer. So a TensorArray works eagerly, inside
-- tf.fn, and under a tape (write's gradient is tensor_array_unwrite for the
-- buffer and a gather for the value). Reading a row never written gives
-- zeros (TensorFlow raises). When the element shape is not known (no
-- element_shape, nothing written yet) the buffer is empty of shape (0,)
-- until the first write sets it.
return function(tf)
  local core = tf.core
  local internal = core.internal
  local is_tensor = tf.is_tensor

  local function raise(kind, fmt, ...) internal.raise(kind, fmt:format(...)) end

  local TA = {}
  TA.__index = TA
  TA.__name = "tf.TensorArray"

  local function index_tensor(i, what)
    if math.type(i) == "integer" then return tf.constant(i, tf.int64) end
    if is_tensor(i) and (i.dtype == tf.int32 or i.dtype == tf.int64) then return i end
    raise("TypeError", "TensorArray.%s: 'index' must be an integer or an int32/int64 scalar tensor, got %s", what,
          is_tensor(i) and i.dtype.name or type(i))
  end

  local function new(proto, buf)
    return setmetatable({dtype = proto.dtype, dynamic_size = proto.dynamic_size,
                         clear_after_read = proto.clear_after_read, element_shape = proto.element_shape,
                         _buf = buf}, TA)
  end

  --- tf.TensorArray{dtype=, size=0, dynamic_size=false, element_shape=,
  -- clear_after_read=true} (dtype may also be the first positional entry)
  local function construct(opts)
    if type(opts) ~= "table" then raise("TypeError", "TensorArray: expects a table of options") end
    local dtype = opts.dtype or opts[1]
    if type(dtype) == "string" then dtype = tf.as_dtype(dtype) end
    if dtype == nil or type(dtype) ~= "table" or not dtype.name then
      raise("TypeError", "TensorArray: 'dtype' is required (a tf.DType)")
    end
    local size = opts.size or opts[2] or 0
    if is_tensor(size) and not size:is_symbolic() then size = size:item() end
    local dynamic = opts.dynamic_size and true or false
    if is_tensor(size) then
      -- a size known only when the graph runs: the buffer grows as written
      dynamic = true
      size = 0
    end
    if math.type(size) ~= "integer" or size < 0 then
      raise("InvalidArgumentError", "TensorArray: 'size' must be an integer >= 0, got %s", tostring(size))
    end
    local es = opts.element_shape
    if es ~= nil and getmetatable(es) == tf.TensorShape.mt then es = es._known and es._dims or nil end
    local buf
    local known = es ~= nil
    if known then for _, d in ipairs(es) do if d == nil or d < 0 then known = false end end end
    if known then
      local dims = {size}
      for i, d in ipairs(es) do dims[i + 1] = d end
      buf = tf.zeros(dims, dtype)
    else
      buf = tf.zeros({0}, dtype)
      if size > 0 and not dynamic then
        -- written rows settle the element shape; the array may not pass `size`
        buf = tf.zeros({0}, dtype)
      end
    end
    local ta = setmetatable({dtype = dtype, dynamic_size = dynamic, clear_after_read = opts.clear_after_read ~= false,
                             element_shape = es, _buf = buf, _size = size}, TA)
    return ta
  end

  tf.TensorArray = setmetatable(TA, {__call = function(_, opts) return construct(opts) end})
  TA.mt = TA

  function TA._buffer(ta) return ta._buf end
  function TA._with_buffer(ta, buf)
    local t = new(ta, buf)
    t._size = ta._size
    return t
  end
  -- the loop invariant of the buffer's shape: rows may change when it grows
  function TA._invariant(ta, dims)
    if #dims == 1 and dims[1] == 0 and ta.element_shape == nil then return nil end   -- element shape unset
    local d = {table.unpack(dims)}
    if ta.dynamic_size then d[1] = -1 end
    return d
  end

  local function grow_flag(ta)
    -- a fixed size whose buffer waits for its element shape may still grow to 'size'
    if ta.dynamic_size then return true end
    local dims = ta._buf:_dims()
    return dims ~= nil and #dims == 1 and dims[1] == 0 and (ta._size or 0) > 0
  end

  --- ta:write(index, value) -> the array with element `index` set
  function TA.write(ta, index, value)
    local i = index_tensor(index, "write")
    if math.type(index) == "integer" and not ta.dynamic_size and ta._size and index > ta._size then
      raise("InvalidArgumentError", "TensorArray.write: index %d is out of range for a TensorArray of size %d "
            .. "(indices are 1-based; dynamic_size = true lets it grow)", index, ta._size)
    end
    if not is_tensor(value) then value = tf.constant(value, ta.dtype) end
    if value.dtype ~= ta.dtype then
      raise("TypeError", "TensorArray.write: 'value' has dtype %s, the TensorArray holds %s", value.dtype.name,
            ta.dtype.name)
    end
    local bd, vd = ta._buf:_dims(), value:_dims()
    if bd and #bd == 1 and bd[1] == 0 and (ta._size or 0) > 0 and vd then
      -- the first write settles the element shape of a fixed-size array
      -- (its buffer is empty, traced or not: a loop body's buffer whose
      -- element shape is unset has no known shape, so never comes here)
      local dims, known = {ta._size}, true
      for k, d in ipairs(vd) do
        dims[k + 1] = d
        if d < 0 then known = false end
      end
      if known then
        ta = ta:_with_buffer(tf.zeros(dims, ta.dtype))
      else   -- dims known only when the graph runs
        local shape = tf.concat({tf.constant({ta._size}, tf.int32), tf.shape(value)}, 1)
        ta = ta:_with_buffer(tf.zeros(shape, ta.dtype))
      end
    end
    local buf = internal.tensor_array_write(ta._buf, i, value, grow_flag(ta))
    local t = new(ta, buf)
    t._size = ta._size
    return t
  end

  --- ta:read(index) -> element `index`
  function TA.read(ta, index)
    return internal.tensor_array_read(ta._buf, index_tensor(index, "read"))
  end

  --- ta:stack() -> a tensor of the elements stacked on a new first dimension
  function TA.stack(ta) return ta._buf end

  --- ta:gather(indices) -> the elements at `indices` (1-based), stacked
  function TA.gather(ta, indices)
    if type(indices) == "table" and not is_tensor(indices) then indices = tf.constant(indices, tf.int64) end
    return tf.gather(ta._buf, indices)
  end

  --- ta:unstack(value) -> an array of value's rows
  function TA.unstack(ta, value)
    if not is_tensor(value) then value = tf.constant(value, ta.dtype) end
    if value.dtype ~= ta.dtype then
      raise("TypeError", "TensorArray.unstack: 'value' has dtype %s, the TensorArray holds %s", value.dtype.name,
            ta.dtype.name)
    end
    local t = new(ta, value)
    local dims = value:_dims()
    t._size = dims and dims[1] and dims[1] >= 0 and dims[1] or ta._size
    return t
  end

  --- ta:scatter(indices, value) -> the array with element indices[j] set to value[j]
  function TA.scatter(ta, indices, value)
    if type(indices) == "table" and not is_tensor(indices) then indices = tf.constant(indices, tf.int64) end
    if not is_tensor(value) then value = tf.constant(value, ta.dtype) end
    local n = indices:_dims() and indices:_dims()[1]
    if n == nil or n < 0 then
      raise("UnimplementedError", "TensorArray.scatter: the number of indices must be known while tracing")
    end
    local t = ta
    for j = 1, n do t = t:write(tf.gather(indices, tf.constant(j, tf.int64)), tf.gather(value, tf.constant(j, tf.int64))) end
    return t
  end

  --- ta:concat() -> the elements concatenated along their first dimension
  function TA.concat(ta)
    local dims = ta._buf:_dims()
    if dims == nil or #dims < 2 then
      raise("InvalidArgumentError", "TensorArray.concat: elements must have rank >= 1")
    end
    local shape = {-1}
    for d = 3, #dims do
      if dims[d] < 0 then raise("UnimplementedError", "TensorArray.concat: element dims after the first must be known") end
      shape[#shape + 1] = dims[d]
    end
    return tf.reshape(ta._buf, shape)
  end

  --- ta:size() -> the number of elements (an int32 scalar tensor)
  function TA.size(ta)
    local dims = ta._buf:_dims()
    if dims and dims[1] and dims[1] >= 0 and not ta._buf:is_symbolic() then
      local n = dims[1]
      if #dims == 1 and n == 0 then n = ta._size or 0 end
      return tf.constant(n, tf.int32)
    end
    return tf.cast(tf.shape(ta._buf)[1], tf.int32)
  end

  function TA.close(ta) return ta end

  function TA.__tostring(ta)
    return ("<tf.TensorArray dtype=%s buffer=%s>"):format(ta.dtype.name, tostring(ta._buf.shape))
  end
end
