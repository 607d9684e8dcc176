--- tf.Variable: a mutable tensor held by the engine as a resource (a handle
-- that ops read and assign). It takes part in arithmetic and in any op as if
-- it were a tensor (reads go through the read_variable op, so tapes see them),
-- and its memory goes with the last reference.
return function(tf)
  local core = tf.core
  local raise = tf.errors.raise
  local by_enum = tf.core.internal.dtype_by_enum

  local Variable = {}
  local methods = {}
  Variable.__name = "tf.Variable"

  -- Hooks other modules use: tf.fn forbids creating variables on later traces,
  -- tf.custom_gradient logs the variables a function reads.
  local creation_hooks, read_logs = {}, {}

  -- Mixed precision (Keras's AutoCastVariable): variables registered in
  -- autocast.vars read as autocast.dtype while it is set (the Keras layer
  -- base sets it to the layer's compute dtype during the layer's call).
  local autocast = {dtype = nil, vars = setmetatable({}, {__mode = "k"}), count = 0}

  local function read(v)
    for i = 1, #read_logs do read_logs[i][v] = true end
    local t = core.variable_read(v._handle)
    local dt = autocast.dtype
    if dt ~= nil and autocast.vars[v] and t.dtype ~= dt then t = tf.cast(t, dt) end
    return t
  end
  Variable.__tf_tensor = read

  local OPTIONS = {name = true, trainable = true, dtype = true, shape = true}

  --- tf.Variable(initial_value, {name=, trainable=true, dtype=, shape=})
  -- `initial_value` may be a tensor, a Lua value, or a function returning one.
  -- `shape` may be partial (tf.None entries) or tf.TensorShape(nil) (any shape).
  local function new(init, opts)
    opts = opts or {}
    for k in pairs(opts) do
      if not OPTIONS[k] then
        raise("TypeError", ("Variable: unknown option '%s' (accepted: dtype, name, shape, trainable)"):format(tostring(k)), 2)
      end
    end
    for _, hook in ipairs(creation_hooks) do hook(opts.name) end
    if init == nil then raise("ValueError", "Variable: initial_value must be given", 2) end
    if type(init) == "function" then init = init() end
    if getmetatable(init) == Variable then init = read(init) end
    if opts.dtype then
      local dt = tf.dtypes.as_dtype(opts.dtype)
      if tf.is_tensor(init) then
        if init.dtype ~= dt then init = tf.cast(init, dt) end
      else
        init = tf.constant(init, dt)
      end
    elseif not tf.is_tensor(init) then
      init = tf.constant(init)
    end
    local shape = opts.shape
    if shape ~= nil then
      if getmetatable(shape) == tf.TensorShape.mt then shape = shape:as_list() or false end
    end
    local name = opts.name or "Variable"
    local trainable = opts.trainable
    if trainable == nil then trainable = true end
    -- a variable made in a GPU scope lives there (its value, every assign)
    local handle = core.variable_new(core.internal.place(init), name, trainable, shape)
    return setmetatable({_handle = handle, _name = name, trainable = trainable}, Variable)
  end

  function Variable.__index(v, k)
    local m = methods[k]
    if m then return m end
    if k == "dtype" then
      local _, _, id = core.variable_info(v._handle)
      return by_enum[id]
    elseif k == "shape" then
      return core.variable_peek(v._handle).shape
    elseif k == "name" then
      return v._name .. ":0"
    elseif k == "handle" then
      return v._handle
    elseif k == "device" then   -- where the value lives (TensorFlow's full device name)
      return core.variable_peek(v._handle).device
    elseif type(k) == "number" then
      return read(v)[k]
    end
    return nil
  end

  function Variable.__newindex(v, k, _)
    raise("TypeError", ("Variable: cannot set field '%s'; use v:assign(value)"):format(tostring(k)), 2)
  end

  --- The current value (recorded by tapes: gradients flow to the variable).
  function methods.value(v) return read(v) end
  methods.read_value = methods.value

  --- v:assign(x) / assign_add / assign_sub: checked shape and dtype; return v.
  function methods.assign(v, x)
    if getmetatable(x) == Variable then x = read(x) end
    core.variable_assign(v._handle, x)
    return v
  end
  function methods.assign_add(v, x)
    if getmetatable(x) == Variable then x = read(x) end
    core.variable_assign_add(v._handle, x)
    return v
  end
  function methods.assign_sub(v, x)
    if getmetatable(x) == Variable then x = read(x) end
    core.variable_assign_sub(v._handle, x)
    return v
  end

  function methods.numpy(v) return core.variable_peek(v._handle):numpy() end
  methods.totable = methods.numpy
  function methods.item(v) return core.variable_peek(v._handle):item() end
  function methods.get_shape(v) return v.shape end

  function Variable.__tostring(v)
    local value = core.variable_peek(v._handle)
    local body = tf.format.array(value)
    return ("<tf.Variable '%s' shape=%s dtype=%s, numpy=%s>"):format(v.name, tostring(value.shape),
      value.dtype.name, body)
  end

  local function val(x)
    if getmetatable(x) == Variable then return read(x) end
    return x
  end
  Variable.__add = function(a, b) return val(a) + val(b) end
  Variable.__sub = function(a, b) return val(a) - val(b) end
  Variable.__mul = function(a, b) return val(a) * val(b) end
  Variable.__div = function(a, b) return val(a) / val(b) end
  Variable.__idiv = function(a, b) return val(a) // val(b) end
  Variable.__mod = function(a, b) return val(a) % val(b) end
  Variable.__pow = function(a, b) return val(a) ^ val(b) end
  Variable.__unm = function(a) return -read(a) end
  Variable.__band = function(a, b) return val(a) & val(b) end
  Variable.__bor = function(a, b) return val(a) | val(b) end
  Variable.__bxor = function(a, b) return val(a) ~ val(b) end
  Variable.__bnot = function(a) return ~read(a) end
  Variable.__shl = function(a, b) return val(a) << val(b) end
  Variable.__shr = function(a, b) return val(a) >> val(b) end
  Variable.__len = function(a) return #read(a) end
  Variable.__eq = function(a, b) return val(a) == val(b) end
  Variable.__lt = function(a, b) return val(a) < val(b) end
  Variable.__le = function(a, b) return val(a) <= val(b) end
  Variable.__concat = function(a, b) return val(a) .. val(b) end

  tf.Variable = setmetatable({mt = Variable, methods = methods,
                              creation_hooks = creation_hooks, read_logs = read_logs, autocast = autocast},
                             {__call = function(_, init, opts) return new(init, opts) end})

  --- True for a tf.Variable.
  function tf.is_variable(x) return getmetatable(x) == Variable end
end
