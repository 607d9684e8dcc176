--- tf.random_ops: the constructors (tf.zeros, tf.ones, tf.fill,
-- tf.zeros_like, tf.ones_like, tf.range, tf.linspace, tf.eye) and
-- tf.random.normal / uniform / set_seed are C functions (bindings/random.c)
-- that tf.core registers. This module lets their shapes (and tf.range's
-- start, limit and delta) be tensors known only when a graph runs, as in
-- TensorFlow: `tf.zeros(tf.shape(x))`, `tf.zeros({tf.shape(x)[1], 4})`,
-- `tf.random.uniform(tf.shape(x))`, `tf.range(tf.shape(x)[1])`.
return function(tf)
  local shape_arg = tf.core.internal.shape_arg

  local function wrap_shape(tbl, name, op)
    local core = tbl[name]
    tbl[name] = function(shape, ...)
      return core(shape_arg(shape, op, "shape"), ...)
    end
  end
  wrap_shape(tf, "zeros", "zeros")
  wrap_shape(tf, "ones", "ones")
  wrap_shape(tf, "fill", "fill")
  wrap_shape(tf.random, "normal", "normal")
  wrap_shape(tf.random, "uniform", "uniform")
  if tf.random.truncated_normal then wrap_shape(tf.random, "truncated_normal", "truncated_normal") end

  -- tf.range's dtype when one of its values is a symbolic tensor:
  -- TensorFlow's order int32 < int64 < float16 < bfloat16 < float32 < float64
  local ORDER = {int32 = 1, int64 = 2, float16 = 3, bfloat16 = 4, float32 = 5, float64 = 6}
  local BY_RANK = {"int32", "int64", "float16", "bfloat16", "float32", "float64"}
  local core_range = tf.range
  local function is_sym(v) return tf.is_tensor(v) and v:is_symbolic() end

  --- tf.range(limit) / tf.range(start, limit [, delta] [, dtype | {dtype=}]);
  -- any of the values may be a scalar tensor known only when the graph runs.
  function tf.range(...)
    local args, n = {...}, select("#", ...)
    local sym = false
    for i = 1, math.min(n, 3) do if is_sym(args[i]) then sym = true end end
    if not sym then return core_range(...) end
    local opts = {}
    local last = args[n]
    if n >= 2 and type(last) == "table" and not tf.is_tensor(last) and getmetatable(last) == nil then
      opts, n = last, n - 1
    elseif n == 4 then
      opts, n = {dtype = last}, 3
    end
    local start, limit, delta
    if n == 1 or (n >= 2 and args[2] == nil) then
      start, limit, delta = 0, args[1], n >= 3 and args[3] or 1
    else
      start, limit, delta = args[1], args[2], args[3] or 1
    end
    local dt = opts.dtype
    if dt == nil then
      local rank = 1
      for _, v in ipairs({start, limit, delta}) do
        local r
        if tf.is_tensor(v) then r = ORDER[v.dtype.name]
        elseif math.type(v) == "float" then r = ORDER.float32
        else r = ORDER.int32 end
        if not r then
          tf.errors.raise("TypeError", ("range: a value has dtype %s, expected a number"):format(v.dtype.name), 2)
        end
        if r > rank then rank = r end
      end
      dt = tf[BY_RANK[rank]]
    elseif type(dt) == "string" then
      dt = tf[dt]
    end
    local function as(v)
      if tf.is_tensor(v) then
        if v.rank ~= 0 then
          tf.errors.raise("InvalidArgumentError",
            ("range: start, limit and delta must be scalars, got shape %s"):format(tostring(v.shape)), 3)
        end
        return v.dtype == dt and v or tf.cast(v, dt)
      end
      return tf.constant(v, {dtype = dt})
    end
    return core_range(as(start), as(limit), as(delta), {dtype = dt})
  end
end
