--- Composite math ops, written over primitive ops as TensorFlow composes
-- them (so they need no gradient rule of their own):
-- tf.reduce_logsumexp (tf.math too), tf.math.reduce_variance,
-- tf.math.reduce_std, tf.math.reduce_euclidean_norm, tf.math.log_sigmoid.
-- The reductions take their arguments as tf.reduce_sum does:
-- (input_tensor [, axis] [, keepdims] [, {axis =, keepdims =, name =}]),
-- axes 1-based (negative from the end), nil reducing every axis.
return function(tf)
  local math_ns = tf.math

  local function raise(kind, fmt, ...)
    tf.errors.raise(kind, string.format(fmt, ...), 3)
  end

  -- a table without a metatable that has a string key (tf.DType is a table too)
  local function is_options(v)
    if type(v) ~= "table" or getmetatable(v) ~= nil then return false end
    for k in pairs(v) do
      if type(k) == "string" then return true end
    end
    return false
  end

  local REDUCE_KEYS = {"axis", "keepdims", "name"}
  local POSITIONAL = {"axis", "keepdims"}

  -- (x, axis, keepdims, name | options) -> x tensor, {axis =, keepdims =}
  local function reduce_args(op, x, ...)
    local args, n = {...}, select("#", ...)
    while n > 0 and args[n] == nil do n = n - 1 end
    local opts = {}
    if n >= 1 and is_options(args[n]) then
      opts = args[n]
      n = n - 1
      for k in pairs(opts) do
        local ok = false
        for _, a in ipairs(REDUCE_KEYS) do if k == a then ok = true end end
        if not ok then
          raise("TypeError", "%s: unknown option '%s' (accepted: %s)", op, tostring(k), table.concat(REDUCE_KEYS, ", "))
        end
      end
    end
    if n > 3 then raise("TypeError", "%s: expected at most 4 positional arguments, got %d", op, n + 1) end
    local r = {}
    for i, key in ipairs(POSITIONAL) do
      if i > n then args[i] = nil end
      if opts[key] ~= nil and args[i] ~= nil then
        raise("TypeError", "%s: got multiple values for argument '%s' (argument %d and option)", op, key, i + 1)
      end
      r[key] = opts[key]
      if r[key] == nil then r[key] = args[i] end
    end
    local axis = r.axis
    if axis ~= nil and not tf.is_tensor(axis) then   -- checked here so that messages name this op
      local list = type(axis) == "table" and axis or {axis}
      for _, v in ipairs(list) do
        if math.type(v) ~= "integer" then
          raise("TypeError", "%s: 'axis' expected integer or table of integers, got %s", op, type(axis))
        end
        if v == 0 then
          raise("InvalidArgumentError", "%s: 'axis' is 0, but axes are 1-based (1 is the first axis, -1 the last)", op)
        end
      end
      if type(axis) ~= "table" and type(axis) ~= "number" then
        raise("TypeError", "%s: 'axis' expected integer or table of integers, got %s", op, type(axis))
      end
    end
    if x == nil then raise("TypeError", "%s: 'input_tensor' is required", op) end
    if not tf.is_tensor(x) then x = tf.constant(x) end
    local rank = x.rank
    if rank and axis ~= nil and not tf.is_tensor(axis) then
      for _, v in ipairs(type(axis) == "table" and axis or {axis}) do
        if v > rank or v < -rank then
          raise("InvalidArgumentError", "%s: 'axis' %d is out of range for rank %d (expected 1..%d or -%d..-1)",
                op, v, rank, rank, rank)
        end
      end
    end
    if r.keepdims == nil then r.keepdims = false end   -- also keeps {axis = nil, ...} an options table
    if type(r.keepdims) ~= "boolean" then
      raise("TypeError", "%s: 'keepdims' must be a boolean, got %s", op, type(r.keepdims))
    end
    return x, r
  end

  local function need_float(op, x)
    local dt = x.dtype.name
    if not x.dtype.is_floating then
      raise("TypeError", "%s: 'input_tensor' has dtype %s, expected one of: float32, float64, float16, bfloat16", op, dt)
    end
  end

  --- log(sum(exp(x))) over `axis`, stable: the (finite) maximum is taken
  -- out before exp and added back, without a gradient of its own (as
  -- TensorFlow). An empty reduction gives -inf.
  function tf.reduce_logsumexp(input_tensor, ...)
    local x, r = reduce_args("reduce_logsumexp", input_tensor, ...)
    need_float("reduce_logsumexp", x)
    local raw = tf.reduce_max(x, {axis = r.axis, keepdims = true})
    local m = tf.stop_gradient(tf.where(tf.is_finite(raw), raw, tf.zeros_like(raw)))
    local s = tf.log(tf.reduce_sum(tf.exp(x - m), {axis = r.axis, keepdims = r.keepdims}))
    if not r.keepdims then m = tf.reduce_sum(m, {axis = r.axis, keepdims = false}) end   -- drops the kept 1s
    return s + m
  end
  math_ns.reduce_logsumexp = tf.reduce_logsumexp

  --- Variance over `axis`: mean((x - mean(x))^2) (divides by N, as
  -- TensorFlow). Float dtypes only.
  function math_ns.reduce_variance(input_tensor, ...)
    local x, r = reduce_args("reduce_variance", input_tensor, ...)
    need_float("reduce_variance", x)
    local mean = tf.reduce_mean(x, {axis = r.axis, keepdims = true})
    return tf.reduce_mean(tf.square(x - mean), {axis = r.axis, keepdims = r.keepdims})
  end

  --- Standard deviation over `axis`: sqrt(reduce_variance) (divides by N).
  function math_ns.reduce_std(input_tensor, ...)
    local x, r = reduce_args("reduce_std", input_tensor, ...)
    need_float("reduce_std", x)
    return tf.sqrt(math_ns.reduce_variance(x, {axis = r.axis, keepdims = r.keepdims}))
  end

  local INT = {int32 = true, int64 = true, uint8 = true}

  --- Euclidean norm over `axis`: sqrt(sum(x^2)). Integer inputs are
  -- computed in float64 and truncated back to their dtype (as TensorFlow's
  -- integer EuclideanNorm).
  function math_ns.reduce_euclidean_norm(input_tensor, ...)
    local x, r = reduce_args("reduce_euclidean_norm", input_tensor, ...)
    local dt = x.dtype
    if INT[dt.name] then
      local xf = tf.cast(x, tf.float64)
      return tf.cast(tf.sqrt(tf.reduce_sum(xf * xf, {axis = r.axis, keepdims = r.keepdims})), dt)
    end
    need_float("reduce_euclidean_norm", x)
    return tf.sqrt(tf.reduce_sum(tf.square(x), {axis = r.axis, keepdims = r.keepdims}))
  end

  --- log(sigmoid(x)) = -softplus(-x), stable for large |x|.
  function math_ns.log_sigmoid(x)
    if x == nil then raise("TypeError", "log_sigmoid: 'x' is required") end
    if not tf.is_tensor(x) then x = tf.constant(x) end
    return -tf.softplus(-x)
  end
end
