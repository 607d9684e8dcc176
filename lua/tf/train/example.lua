--- tf.train.Example and its parts (BytesList, FloatList, Int64List, Feature,
-- Features), serialized by protobuf-c from proto/example.proto and
-- proto/feature.proto (bindings/example.c); and tf.io's parsing:
-- FixedLenFeature, VarLenFeature, FixedLenSequenceFeature,
-- parse_single_example, parse_example (the registry op
-- parse_example_feature, one per feature: works eagerly, in tf.fn and in a
-- dataset map). See docs/tfrecord.md.
--
-- Installed by lua/tf/io_tfrecord.lua: require("tf.train.example")(tf).
return function(tf)
  local internal = tf.core.internal
  local sfmt = string.format
  local function raise(kind, fmt, ...) internal.raise(kind, sfmt(fmt, ...)) end

  local train = tf.train
  local io = rawget(tf, "io")

  local function plain(t) return type(t) == "table" and getmetatable(t) == nil end

  if rawget(train, "Example") == nil then
  --- values from an array table, a single value, or a tensor (flattened)
  local function values_of(v, what)
    if v == nil then return {} end
    if tf.is_tensor(v) then
      if v.rank == 0 then return {v:item()} end
      return tf.reshape(v, {-1}):totable()
    end
    if plain(v) then
      if v.value ~= nil then return values_of(v.value, what) end
      local out = {}
      for i = 1, #v do out[i] = v[i] end
      return out
    end
    if type(v) == "table" and v.value ~= nil then return values_of(v.value, what) end
    if type(v) == "string" or type(v) == "number" then return {v} end
    raise("TypeError", "%s: expected a table of values, got %s", what, type(v))
  end

  -- {==== the lists
  local function list_class(name, check)
    local C = {__name = "tf.train." .. name}
    C.__index = C
    setmetatable(C, {__call = function(_, v)
      local vals = values_of(v, name)
      for i, x in ipairs(vals) do vals[i] = check(x, i) end
      return setmetatable({value = vals}, C)
    end})
    function C:__tostring() return sfmt("%s{value = {%s}}", name, table.concat((function()
      local s = {}
      for i, x in ipairs(self.value) do s[i] = type(x) == "string" and sfmt("%q", x) or tostring(x) end
      return s
    end)(), ", ")) end
    return C
  end
  local BytesList = list_class("BytesList", function(x, i)
    if type(x) ~= "string" then raise("TypeError", "BytesList: value %d must be a string, got %s", i, type(x)) end
    return x
  end)
  local FloatList = list_class("FloatList", function(x, i)
    if type(x) ~= "number" then raise("TypeError", "FloatList: value %d must be a number, got %s", i, type(x)) end
    return x + 0.0
  end)
  local Int64List = list_class("Int64List", function(x, i)
    local k = math.type(x) == "integer" and x or (math.type(x) == "float" and math.tointeger(x))
    if not k then raise("TypeError", "Int64List: value %d must be an integer, got %s", i, tostring(x)) end
    return k
  end)
  train.BytesList, train.FloatList, train.Int64List = BytesList, FloatList, Int64List
  local LISTS = {bytes_list = BytesList, float_list = FloatList, int64_list = Int64List}
  local KIND = {bytes_list = 1, float_list = 2, int64_list = 3}
  -- }====

  -- {==== Feature, Features
  local Feature = {__name = "tf.train.Feature"}
  Feature.__index = Feature
  setmetatable(Feature, {__call = function(_, spec)
    if getmetatable(spec) == Feature then return spec end
    if type(spec) ~= "table" then raise("TypeError", "Feature: expected {bytes_list = ...}, {float_list = ...} or {int64_list = ...}, got %s", type(spec)) end
    local f = setmetatable({}, Feature)
    local n = 0
    for k, v in pairs(spec) do
      local L = LISTS[k]
      if not L then raise("TypeError", "Feature: unexpected keyword argument '%s' (bytes_list, float_list or int64_list)", tostring(k)) end
      f[k] = getmetatable(v) == L and v or L(v)
      f.kind = k
      n = n + 1
    end
    if n > 1 then raise("ValueError", "Feature: give one of bytes_list, float_list, int64_list, not %d", n) end
    return f
  end})
  --- the list's values (a Lua array), nil for an empty Feature
  function Feature:values() return self.kind and self[self.kind].value or nil end

  local Features = {__name = "tf.train.Features"}
  Features.__index = Features
  setmetatable(Features, {__call = function(_, spec)
    if getmetatable(spec) == Features then return spec end
    if spec ~= nil and type(spec) ~= "table" then raise("TypeError", "Features: expected {feature = {name = Feature}}, got %s", type(spec)) end
    spec = spec or {}
    local src = spec.feature
    -- {feature = {name = ...}} is the map; a feature itself named "feature"
    -- ({feature = {int64_list = ...}}, or other names beside it) is the Lua form
    if src == nil or getmetatable(src) == Feature or type(src) ~= "table" or src.bytes_list ~= nil
       or src.float_list ~= nil or src.int64_list ~= nil or next(spec, next(spec)) ~= nil then
      src = spec
    end
    local fs = {}
    for k, v in pairs(src) do
      if type(k) ~= "string" then raise("TypeError", "Features: feature names must be strings, got %s", type(k)) end
      fs[k] = Feature(v)
    end
    return setmetatable({feature = fs}, Features)
  end})
  train.Feature, train.Features = Feature, Features
  -- }====

  -- {==== Example
  local Example = {__name = "tf.train.Example"}
  Example.__index = Example

  --- tf.train.Example{features = Features{...}} or the Lua form
  -- tf.train.Example{features = {age = {int64_list = {29}}, name = {bytes_list = {"ann"}}}}.
  setmetatable(Example, {__call = function(_, spec)
    if spec ~= nil and type(spec) ~= "table" then raise("TypeError", "Example: expected {features = ...}, got %s", type(spec)) end
    spec = spec or {}
    for k in pairs(spec) do
      if k ~= "features" then raise("TypeError", "Example: unexpected keyword argument '%s'", tostring(k)) end
    end
    return setmetatable({features = Features(spec.features)}, Example)
  end})

  --- ex:SerializeToString(): the wire bytes (a Lua string); features in name order.
  function Example:SerializeToString()
    local names = {}
    for k in pairs(self.features.feature) do names[#names + 1] = k end
    table.sort(names)
    local entries = {}
    for i, k in ipairs(names) do
      local f = self.features.feature[k]
      entries[i] = {k, f.kind and KIND[f.kind] or 0, f.kind and f[f.kind].value or {}}
    end
    return internal.example_serialize(entries)
  end

  --- tf.train.Example.FromString(bytes) (bytes a Lua string or a scalar string
  -- tensor): the decoded message; InvalidArgumentError for bytes that are not one.
  function Example.FromString(bytes)
    if tf.is_tensor(bytes) and bytes.dtype == tf.string and bytes.rank == 0 then bytes = bytes:item() end
    if type(bytes) ~= "string" then raise("TypeError", "Example.FromString: expected a string, got %s", type(bytes)) end
    local t = internal.example_parse(bytes)
    local fs = {}
    for k, v in pairs(t) do
      if v.kind == "none" then fs[k] = setmetatable({}, Feature)
      else fs[k] = Feature{[v.kind] = v.values} end
    end
    return setmetatable({features = setmetatable({feature = fs}, Features)}, Example)
  end
  Example.ParseFromString = Example.FromString

  --- ex:to_table(): {name = {kind = values}} (the Lua form the constructor takes)
  function Example:to_table()
    local out = {}
    for k, f in pairs(self.features.feature) do
      out[k] = f.kind and {[f.kind] = {table.unpack(f[f.kind].value)}} or {}
    end
    return out
  end
  function Example:__tostring()
    local names = {}
    for k in pairs(self.features.feature) do names[#names + 1] = k end
    table.sort(names)
    local parts = {}
    for i, k in ipairs(names) do
      local f = self.features.feature[k]
      parts[i] = sfmt("%s = %s", k, f.kind and tostring(f[f.kind]) or "{}")
    end
    return "Example{" .. table.concat(parts, ", ") .. "}"
  end
  train.Example = Example
  -- }====
  end

  if not io or rawget(io, "parse_example") ~= nil then return end

  -- {==== feature specs
  local DT = {}
  local function dtype_of(d, who)
    local dt = d
    if type(d) == "string" then dt = tf[d] end
    if dt == tf.string or dt == tf.float32 or dt == tf.int64 then return dt end
    raise("TypeError", "%s: 'dtype' must be tf.string, tf.float32 or tf.int64, got %s", who,
      type(d) == "table" and tostring(d.name or d) or tostring(d))
  end
  local function shape_of(s, who)
    if s == nil then return {} end
    if type(s) == "number" then s = {s} end
    if type(s) ~= "table" then raise("TypeError", "%s: 'shape' must be a table of integers, got %s", who, type(s)) end
    if s.as_list then s = s:as_list() end
    local out = {}
    for i, v in ipairs(s) do
      if math.type(v) ~= "integer" or v < 0 then
        raise("ValueError", "%s: 'shape' must be fully defined (integers >= 0), got %s at %d", who, tostring(v), i)
      end
      out[i] = v
    end
    return out
  end
  local Spec = {__name = "tf.io.FeatureSpec"}
  Spec.__index = Spec
  DT.Spec = Spec

  local function kwargs(args, names, who)
    if #args == 1 and plain(args[1]) and next(args[1]) ~= nil and (args[1].dtype ~= nil or args[1].shape ~= nil) then
      local t = args[1]
      for k in pairs(t) do
        local ok = false
        for _, n in ipairs(names) do if k == n then ok = true end end
        if not ok and not (math.type(k) == "integer") then raise("TypeError", "%s: unexpected keyword argument '%s'", who, tostring(k)) end
      end
      local r = {}
      for i, n in ipairs(names) do if t[n] ~= nil then r[n] = t[n] else r[n] = t[i] end end
      return r
    end
    local r = {}
    for i, n in ipairs(names) do r[n] = args[i] end
    if plain(args[#names + 1]) then for k, v in pairs(args[#names + 1]) do r[k] = v end end
    return r
  end

  --- tf.io.FixedLenFeature(shape, dtype [, default_value]) or {shape =, dtype =, default_value =}
  function io.FixedLenFeature(...)
    local a = kwargs({...}, {"shape", "dtype", "default_value"}, "FixedLenFeature")
    local who = "FixedLenFeature"
    return setmetatable({kind = 0, kind_name = who, shape = shape_of(a.shape, who), dtype = dtype_of(a.dtype, who),
                         default_value = a.default_value}, Spec)
  end
  --- tf.io.VarLenFeature(dtype): parsed to {indices =, values =, dense_shape =}
  -- (TensorFlow's SparseTensor parts; luatf has no SparseTensor type).
  function io.VarLenFeature(...)
    local a = kwargs({...}, {"dtype"}, "VarLenFeature")
    return setmetatable({kind = 1, kind_name = "VarLenFeature", shape = {}, dtype = dtype_of(a.dtype, "VarLenFeature")}, Spec)
  end
  --- tf.io.FixedLenSequenceFeature(shape, dtype [, allow_missing [, default_value]])
  function io.FixedLenSequenceFeature(...)
    local a = kwargs({...}, {"shape", "dtype", "allow_missing", "default_value"}, "FixedLenSequenceFeature")
    local who = "FixedLenSequenceFeature"
    return setmetatable({kind = 2, kind_name = who, shape = shape_of(a.shape, who), dtype = dtype_of(a.dtype, who),
                         allow_missing = a.allow_missing and true or false, default_value = a.default_value}, Spec)
  end

  local function default_tensor(spec, name)
    local dv = spec.default_value
    if dv == nil then return tf.zeros({0}, spec.dtype) end
    if spec.dtype == tf.string then
      if tf.is_tensor(dv) then return tf.reshape(dv, {-1}) end
      if type(dv) == "string" then return tf.constant({dv}) end
      return tf.reshape(tf.constant(dv), {-1})
    end
    local t = tf.is_tensor(dv) and dv or tf.constant(dv, spec.dtype)
    if t.dtype ~= spec.dtype then
      if t.dtype == tf.string then
        raise("TypeError", "parse_example: feature '%s': default_value has dtype string, the feature %s", name, spec.dtype.name)
      end
      t = tf.cast(t, spec.dtype)
    end
    return tf.reshape(t, {-1})
  end

  local function parse(serialized, features, who)
    if type(serialized) == "string" then serialized = tf.constant(serialized)
    elseif plain(serialized) then serialized = tf.constant(serialized) end
    if not tf.is_tensor(serialized) or serialized.dtype ~= tf.string then
      raise("TypeError", "%s: 'serialized' must be a string tensor, got %s", who,
        tf.is_tensor(serialized) and (serialized.dtype.name .. " tensor") or type(serialized))
    end
    if type(features) ~= "table" or getmetatable(features) ~= nil then
      raise("TypeError", "%s: 'features' must be a table {name = tf.io.FixedLenFeature(...), ...}", who)
    end
    local out = {}
    for name, spec in pairs(features) do
      if getmetatable(spec) ~= Spec then
        raise("TypeError", "%s: features['%s'] must be a FixedLenFeature, VarLenFeature or FixedLenSequenceFeature, got %s",
          who, tostring(name), type(spec))
      end
      local r = table.pack(internal.parse_example_feature(serialized, tf.constant(name), default_tensor(spec, name),
        spec.kind, spec.dtype, spec.shape, spec.allow_missing))
      if spec.kind == 1 then out[name] = {indices = r[1], values = r[2], dense_shape = r[3]}
      else out[name] = r[1] end
    end
    return out
  end

  --- tf.io.parse_single_example(serialized, features): serialized one
  -- Example (a scalar string tensor or a Lua string); a table name -> tensor
  -- (VarLenFeature -> {indices =, values =, dense_shape =}).
  function io.parse_single_example(serialized, features, example_names)
    if tf.is_tensor(serialized) and serialized.rank ~= 0 then
      raise("InvalidArgumentError", "parse_single_example: 'serialized' must be a scalar, got shape %s (use parse_example)",
        tostring(serialized.shape))
    end
    return parse(serialized, features, "parse_single_example")
  end
  --- tf.io.parse_example(serialized, features): serialized a vector of
  -- Examples; each output gains a leading batch dimension.
  function io.parse_example(serialized, features, example_names)
    if plain(serialized) then serialized = tf.constant(serialized) end
    if tf.is_tensor(serialized) and serialized.rank ~= 1 then
      raise("InvalidArgumentError", "parse_example: 'serialized' must be a vector, got shape %s (use parse_single_example)",
        tostring(serialized.shape))
    end
    return parse(serialized, features, "parse_example")
  end
  -- }====
end
