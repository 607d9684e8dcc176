--- tf.keras.regularizers: weight and activity penalties (Keras's L1, L2,
-- L1L2 and the lowercase l1 / l2 / l1_l2). A regularizer is an object
-- called as `reg(x)` returning a scalar tensor of x's dtype; layers take
-- them as objects, by name ("l2") or as plain functions x -> scalar.
-- serialize / deserialize / get as Keras: {class_name =, config =}.
return function(tf)
  local keras = tf.keras
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format
  local R = {}
  keras.regularizers = R

  local Reg = {}
  Reg.__index = Reg
  Reg.__name = "tf.keras.regularizers.Regularizer"
  function Reg.__call(self, x) return self:call(x) end
  function Reg.__tostring(self)
    local c = self:get_config()
    local keys = {}
    for k in pairs(c) do keys[#keys + 1] = k end
    table.sort(keys)
    local parts = {}
    for i, k in ipairs(keys) do parts[i] = k .. "=" .. tostring(c[k]) end
    return sfmt("%s(%s)", self._class_name, table.concat(parts, ", "))
  end
  --- The default config: the class's fields named in _keys.
  function Reg.get_config(self)
    local c = {}
    for _, k in ipairs(self._keys or {}) do c[k] = self[k] end
    return c
  end

  local value = tf.core.internal.keras.tensor_value

  local function coef(cname, arg, v, default)
    if v == nil then return default end
    if type(v) ~= "number" or v ~= v or v < 0 or v == math.huge then
      raise("ValueError", sfmt("%s: '%s' must be a finite non-negative number, got %s", cname, arg, tostring(v)))
    end
    return v + 0.0
  end

  local check_keys = tf.core.internal.keras.check_keys

  --- A regularizer class: `Class{...}` makes one; `Class.from_config(c)`.
  local CLASSES = {}
  local function class(name, keys, init, call)
    local cls = setmetatable({_class_name = name, _keys = keys, call = call}, {__index = Reg})
    cls.__index = cls
    cls.__call = Reg.__call
    cls.__tostring = Reg.__tostring
    cls.__name = "tf.keras.regularizers." .. name
    local function new(opts)
      local self = setmetatable({}, cls)
      init(self, opts)
      return self
    end
    cls.new = new
    cls.from_config = function(c) return new(c) end
    R[name] = setmetatable({}, {
      __index = cls,
      __call = function(_, opts) return new(opts) end,
      __tostring = function() return "<class tf.keras.regularizers." .. name .. ">" end,
    })
    CLASSES[name] = cls
    return cls
  end

  local function l1_sum(x) return tf.reduce_sum(tf.abs(x)) end
  local function l2_sum(x) return tf.reduce_sum(tf.square(x)) end
  local function scaled(c, s) return s * tf.cast(c, s.dtype) end

  --- L1{l1 = 0.01}: l1 * sum(|x|).
  class("L1", {"l1"}, function(self, opts)
    opts = check_keys("L1", opts, {"l1"}, 1)
    self.l1 = coef("L1", "l1", opts[1] or opts.l1, 0.01)
  end, function(self, x) return scaled(self.l1, l1_sum(value(x))) end)

  --- L2{l2 = 0.01}: l2 * sum(x^2).
  class("L2", {"l2"}, function(self, opts)
    opts = check_keys("L2", opts, {"l2"}, 1)
    self.l2 = coef("L2", "l2", opts[1] or opts.l2, 0.01)
  end, function(self, x) return scaled(self.l2, l2_sum(value(x))) end)

  --- L1L2{l1 = 0, l2 = 0}: l1 * sum(|x|) + l2 * sum(x^2).
  class("L1L2", {"l1", "l2"}, function(self, opts)
    opts = check_keys("L1L2", opts, {"l1", "l2"}, 0)
    self.l1 = coef("L1L2", "l1", opts.l1, 0.0)
    self.l2 = coef("L1L2", "l2", opts.l2, 0.0)
  end, function(self, x)
    x = value(x)
    local r = tf.zeros({}, x.dtype)
    if self.l1 ~= 0 then r = r + scaled(self.l1, l1_sum(x)) end
    if self.l2 ~= 0 then r = r + scaled(self.l2, l2_sum(x)) end
    return r
  end)

  --- OrthogonalRegularizer is not provided; a custom regularizer is any
  -- function x -> scalar, or a class made with `Regularizer:extend`.
  R.Regularizer = Reg
  --- Regularizer:extend("Name", {call = function(self, x) ... end, get_config = ...}):
  -- a custom regularizer class (instances made by `Name(opts)`).
  function Reg.extend(_, name, methods)
    local cls = setmetatable({}, {__index = Reg})
    for k, v in pairs(methods or {}) do cls[k] = v end
    cls._class_name = name
    cls.__index = cls
    cls.__call = Reg.__call
    cls.__tostring = Reg.__tostring
    cls.from_config = function(c)
      local self = setmetatable({}, cls)
      for k, v in pairs(c or {}) do self[k] = v end
      return self
    end
    return setmetatable(cls, {__index = Reg, __call = function(_, opts)
      local self = setmetatable({}, cls)
      if cls.init then cls.init(self, opts) else for k, v in pairs(opts or {}) do self[k] = v end end
      return self
    end})
  end

  R.l1 = R.L1
  R.l2 = R.L2
  --- l1_l2{l1 = 0.01, l2 = 0.01}: L1L2 with Keras's function defaults.
  function R.l1_l2(opts)
    opts = check_keys("l1_l2", opts, {"l1", "l2"}, 0)
    return R.L1L2{l1 = opts.l1 or 0.01, l2 = opts.l2 or 0.01}
  end

  local BY_NAME = {l1 = "L1", l2 = "L2", l1_l2 = "l1_l2", L1 = "L1", L2 = "L2", L1L2 = "L1L2"}

  local function is_reg(x)
    local mt = getmetatable(x)
    return type(x) == "table" and mt ~= nil and type(mt.__index) == "table" and x.call ~= nil and mt.__call ~= nil
  end

  --- A regularizer from serialize's table, or a name ("l2", "L1L2").
  function R.deserialize(c, custom_objects)
    if type(c) == "string" then
      local n = BY_NAME[c]
      if n == "l1_l2" then return R.l1_l2() end
      if n then return R[n]() end
      if custom_objects and custom_objects[c] then return custom_objects[c] end
      local known = {}
      for k in pairs(BY_NAME) do known[#known + 1] = k end
      table.sort(known)
      raise("ValueError", sfmt("Unknown regularizer: '%s' (known: %s)", c, table.concat(known, ", ")))
    end
    if type(c) == "function" then return c end
    if type(c) ~= "table" or type(c.class_name) ~= "string" then
      raise("TypeError", sfmt("regularizers.deserialize: expected {class_name =, config =} or a name, got %s", type(c)))
    end
    local cls = custom_objects and custom_objects[c.class_name]
    if cls == nil then
      local n = BY_NAME[c.class_name]
      cls = n and (n == "l1_l2" and {from_config = function(cfg) return R.L1L2(cfg) end} or R[n])
    end
    if cls == nil then raise("ValueError", sfmt("Unknown regularizer: '%s'", c.class_name)) end
    return cls.from_config(c.config or {})
  end

  --- R.serialize(r): {class_name =, config =} for a Keras regularizer; a
  -- plain function is returned as is (it cannot be named; it round-trips
  -- within the process). R.get(id): a regularizer from an identifier: nil,
  -- a regularizer, a function, a name or a serialized table.
  R.serialize, R.get = tf.core.internal.keras.serialize_and_get("regularizers", "regularizer", is_reg,
    function(id) return R.deserialize(id) end)
end
