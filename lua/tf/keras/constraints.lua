--- tf.keras.constraints: projections applied to a weight after each
-- optimizer update (Keras's MaxNorm, NonNeg, UnitNorm, MinMaxNorm and the
-- lowercase max_norm / non_neg / unit_norm / min_max_norm). A constraint
-- is an object called as `c(w)` returning the projected tensor; layers take
-- them as objects, by name ("non_neg") or as plain functions w -> w'.
-- Axes are 1-based as everywhere in luatf: Keras's default axis 0 (the
-- input axis of a Dense kernel) is axis 1 here; a table of axes is allowed
-- (a Conv2D kernel (h, w, in, out): axis = {1, 2, 3}).
return function(tf)
  local keras = tf.keras
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format
  local C = {}
  keras.constraints = C
  local EPSILON = 1e-7       -- Keras's backend.epsilon()

  local Con = {}
  Con.__index = Con
  Con.__name = "tf.keras.constraints.Constraint"
  function Con.get_config(self)
    local c = {}
    for _, k in ipairs(self._keys or {}) do c[k] = self[k] end
    return c
  end

  local value = tf.core.internal.keras.tensor_value

  local check_keys = tf.core.internal.keras.check_keys

  local function check_axis(cname, a)
    if a == nil then return 1 end
    local list = type(a) == "table" and a or {a}
    for _, v in ipairs(list) do
      if math.type(v) ~= "integer" or v == 0 then
        raise("ValueError", sfmt("%s: 'axis' must be a non-zero integer (1-based; -1 the last) or a table of them, " ..
          "got %s", cname, tostring(v)))
      end
    end
    if type(a) == "table" then
      local copy = {}
      for i, v in ipairs(a) do copy[i] = v end
      return copy
    end
    return a
  end

  local function number(cname, arg, v, default)
    if v == nil then return default end
    if type(v) ~= "number" or v ~= v then
      raise("ValueError", sfmt("%s: '%s' must be a number, got %s", cname, arg, tostring(v)))
    end
    return v + 0.0
  end

  local function norms(w, axis)
    return tf.sqrt(tf.reduce_sum(tf.square(w), {axis = axis, keepdims = true}))
  end
  local function cst(v, w) return tf.constant(v, w.dtype) end

  local function class(name, keys, npos, init, call)
    local cls = setmetatable({_class_name = name, _keys = keys, call = call}, {__index = Con})
    cls.__index = cls
    cls.__call = function(self, w) return self:call(value(w)) end
    cls.__name = "tf.keras.constraints." .. name
    cls.__tostring = function(self) return "<tf.keras.constraints." .. self._class_name .. ">" end
    local function new(opts)
      local self = setmetatable({}, cls)
      init(self, check_keys(name, opts, keys, npos))
      return self
    end
    cls.from_config = function(c) return new(c) end
    C[name] = setmetatable({}, {
      __index = cls,
      __call = function(_, opts) return new(opts) end,
      __tostring = function() return "<class tf.keras.constraints." .. name .. ">" end,
    })
  end

  --- MaxNorm{max_value = 2, axis = 1}: scales the slices whose L2 norm
  -- along `axis` exceeds max_value down to it.
  class("MaxNorm", {"max_value", "axis"}, 1, function(self, o)
    self.max_value = number("MaxNorm", "max_value", o[1] or o.max_value, 2.0)
    self.axis = check_axis("MaxNorm", o.axis)
  end, function(self, w)
    local n = norms(w, self.axis)
    local desired = tf.clip_by_value(n, cst(0, w), cst(self.max_value, w))
    return w * (desired / (n + EPSILON))
  end)

  --- NonNeg: negative entries become 0.
  class("NonNeg", {}, 0, function() end, function(_, w)
    return w * tf.cast(tf.greater_equal(w, cst(0, w)), w.dtype)
  end)

  --- UnitNorm{axis = 1}: each slice divided by its L2 norm along `axis`.
  class("UnitNorm", {"axis"}, 0, function(self, o)
    self.axis = check_axis("UnitNorm", o.axis)
  end, function(self, w)
    return w / (norms(w, self.axis) + EPSILON)
  end)

  --- MinMaxNorm{min_value = 0, max_value = 1, rate = 1, axis = 1}: norms
  -- moved to rate * clip(norm, min, max) + (1 - rate) * norm.
  class("MinMaxNorm", {"min_value", "max_value", "rate", "axis"}, 0, function(self, o)
    self.min_value = number("MinMaxNorm", "min_value", o.min_value, 0.0)
    self.max_value = number("MinMaxNorm", "max_value", o.max_value, 1.0)
    self.rate = number("MinMaxNorm", "rate", o.rate, 1.0)
    if self.min_value > self.max_value then
      raise("ValueError", sfmt("MinMaxNorm: 'min_value' (%g) must not exceed 'max_value' (%g)", self.min_value,
        self.max_value))
    end
    self.axis = check_axis("MinMaxNorm", o.axis)
  end, function(self, w)
    local n = norms(w, self.axis)
    local desired = tf.clip_by_value(n, cst(self.min_value, w), cst(self.max_value, w)) * self.rate
      + n * (1 - self.rate)
    return w * (desired / (n + EPSILON))
  end)

  C.Constraint = Con
  C.max_norm = C.MaxNorm
  C.non_neg = C.NonNeg
  C.unit_norm = C.UnitNorm
  C.min_max_norm = C.MinMaxNorm
  local BY_NAME = {max_norm = "MaxNorm", non_neg = "NonNeg", unit_norm = "UnitNorm", min_max_norm = "MinMaxNorm",
                   MaxNorm = "MaxNorm", NonNeg = "NonNeg", UnitNorm = "UnitNorm", MinMaxNorm = "MinMaxNorm"}

  local function is_con(x)
    local mt = getmetatable(x)
    return type(x) == "table" and mt ~= nil and x.call ~= nil and mt.__call ~= nil
  end

  function C.deserialize(c, custom_objects)
    if type(c) == "function" then return c end
    if type(c) == "string" then
      if custom_objects and custom_objects[c] then return custom_objects[c] end
      local n = BY_NAME[c]
      if n then return C[n]() end
      local known = {}
      for k in pairs(BY_NAME) do known[#known + 1] = k end
      table.sort(known)
      raise("ValueError", sfmt("Unknown constraint: '%s' (known: %s)", c, table.concat(known, ", ")))
    end
    if type(c) ~= "table" or type(c.class_name) ~= "string" then
      raise("TypeError", sfmt("constraints.deserialize: expected {class_name =, config =} or a name, got %s", type(c)))
    end
    local cls = (custom_objects and custom_objects[c.class_name]) or (BY_NAME[c.class_name] and C[BY_NAME[c.class_name]])
    if cls == nil then raise("ValueError", sfmt("Unknown constraint: '%s'", c.class_name)) end
    return cls.from_config(c.config or {})
  end

  --- C.serialize(c): {class_name =, config =}; a plain function is returned
  -- as is. C.get(id): a constraint from nil, a constraint, a function, a
  -- name or a table.
  C.serialize, C.get = tf.core.internal.keras.serialize_and_get("constraints", "constraint", is_con,
    function(id) return C.deserialize(id) end)
end
