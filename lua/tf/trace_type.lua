--- Trace types: what tf.fn keys its cache of concrete functions on
-- (DESIGN section 5, TensorFlow's tf.types.experimental.TraceType).
--
--   tensor                -> TensorSpec(shape, dtype)
--   tf.Variable           -> VariableSpec: identity (variable id), shape, dtype,
--                            trainable, alias_id (position among the call's
--                            distinct variables)
--   number/string/boolean/nil -> Literal(value) (1 and 1.0 differ: Lua makes
--                            int32 and float32 tensors of them)
--   array table           -> List[...] (ordered)
--   other plain table     -> Dict[...] (key order irrelevant, same key sets)
--   object whose metatable has __tf_tracing_type -> what that returns
--   any other object      -> Weakref: identity, weak (a collected object never
--                            matches again)
--
-- Every type answers: key() (exact identity as a string), is_subtype_of,
-- most_specific_common_supertype, tostring (TensorFlow's repr),
-- placeholder(value, ctx) (the value the traced closure sees), flatten(value,
-- out) (the tensors fed at a call, in placeholder order), cast(value) (a
-- call's value checked against the type), describe() (short text for retrace
-- reasons) and diff(other, path, out).
return function(tf)
  local core = tf.core
  local raise = tf.errors.raise
  local by_enum = tf.core.internal.dtype_by_enum
  local DType = tf.DType
  local TensorShape = tf.TensorShape
  local Variable = tf.Variable.mt
  local is_tensor = tf.is_tensor
  local mtype = math.type
  local sfmt = string.format
  local concat = table.concat

  local M = {}

  -- {==== helpers
  local sorted_keys = require("tf.util").sorted_keys
  M.sorted_keys = sorted_keys

  local function is_array(t)
    local n = #t
    local count = 0
    for k in pairs(t) do
      if mtype(k) ~= "integer" or k < 1 or k > n then return false end
      count = count + 1
    end
    return count == n
  end

  --- Python-style repr of a Lua value (how TensorFlow prints literals).
  local function py_repr(v)
    local tv = type(v)
    if v == nil then return "None" end
    if tv == "boolean" then return v and "True" or "False" end
    if tv == "string" then return "'" .. v:gsub("\\", "\\\\"):gsub("'", "\\'") .. "'" end
    if tv == "number" then
      if v ~= v then return "nan" end
      if v == math.huge then return "inf" end
      if v == -math.huge then return "-inf" end
      if mtype(v) == "float" then
        local s = sfmt("%.17g", v)
        -- shortest text that reads back the same (as Python's repr)
        for p = 1, 17 do
          local c = sfmt("%." .. p .. "g", v)
          if tonumber(c) == v then s = c break end
        end
        if not s:find("[%.eninf]") then s = s .. ".0" end
        return s
      end
      return tostring(v)
    end
    return tostring(v)
  end
  M.py_repr = py_repr

  --- Lua-style text of a value, for retrace reasons (nil, true, 0.01, "relu").
  local function lua_repr(v)
    if type(v) == "string" then return sfmt("%q", v) end
    if type(v) == "number" then
      if mtype(v) == "float" then
        local r = py_repr(v)
        return r
      end
      return tostring(v)
    end
    return tostring(v)
  end
  M.lua_repr = lua_repr

  local function shape_text(shape)
    if shape == nil then return "<unknown>" end
    local parts = {}
    for i, d in ipairs(shape) do parts[i] = d < 0 and "None" or tostring(d) end
    if #parts == 1 then return "(" .. parts[1] .. ",)" end
    return "(" .. concat(parts, ", ") .. ")"
  end
  M.shape_text = shape_text

  local function shape_key(shape)
    if shape == nil then return "?" end
    return "(" .. concat(shape, ",") .. ")"
  end

  local function shape_subtype(a, b)
    if b == nil then return true end
    if a == nil or #a ~= #b then return false end
    for i = 1, #b do
      local d = b[i]
      if d >= 0 and a[i] ~= d then return false end
    end
    return true
  end

  local function shape_super(a, b)
    if a == nil or b == nil or #a ~= #b then return nil end
    local s = {}
    for i = 1, #a do s[i] = a[i] == b[i] and a[i] or -1 end
    return s
  end

  --- A shape argument as a plain list (-1 for unknown dims) or nil (unknown rank).
  local function as_dims(shape, what)
    if shape == nil then return nil end
    if getmetatable(shape) == TensorShape.mt then return shape:as_list() end
    if mtype(shape) == "integer" then shape = {shape} end
    if type(shape) ~= "table" then
      raise("TypeError", sfmt("%s: shape must be a table of integers, a TensorShape or nil, got %s", what,
        type(shape)), 3)
    end
    local dims = {}
    for i = 1, #shape do
      local d = shape[i]
      if d == nil or d == false then
        d = -1
      elseif mtype(d) ~= "integer" then
        raise("TypeError", sfmt("%s: shape entry %d must be an integer (-1 or tf.None for unknown), got %s", what, i,
          tostring(d)), 3)
      end
      dims[i] = d < 0 and -1 or d
    end
    return dims
  end
  M.as_dims = as_dims

  local function dtype_of(x)
    if getmetatable(x) == DType then return x end
    if type(x) == "string" then return tf.dtypes.as_dtype(x) end
    if mtype(x) == "integer" then return by_enum[x] end
    return nil
  end

  --- Text of a value in error messages (`<tf.Tensor: shape=(2,), dtype=int32>`).
  local function value_text(v)
    if is_tensor(v) then
      if v:is_symbolic() then return tostring(v) end
      return sfmt("<tf.Tensor: shape=%s, dtype=%s>", tostring(v.shape), v.dtype.name)
    end
    if getmetatable(v) == Variable then
      return sfmt("<tf.Variable '%s' shape=%s dtype=%s>", v.name, tostring(v.shape), v.dtype.name)
    end
    if type(v) == "table" and getmetatable(v) == nil then
      local parts = {}
      if is_array(v) then
        for i = 1, #v do parts[i] = value_text(v[i]) end
        return "{" .. concat(parts, ", ") .. "}"
      end
      for _, k in ipairs(sorted_keys(v)) do parts[#parts + 1] = tostring(k) .. " = " .. value_text(v[k]) end
      return "{" .. concat(parts, ", ") .. "}"
    end
    if type(v) == "string" then return sfmt("%q", v) end
    return tostring(v)
  end
  M.value_text = value_text
  -- }====

  -- {==== TensorSpec
  local TensorSpec = {kind = "TensorSpec"}
  TensorSpec.__index = TensorSpec
  TensorSpec.__name = "tf.TensorSpec"

  local function new_spec(dims, dtype, name)
    return setmetatable({_dims = dims, dtype = dtype, name = name}, TensorSpec)
  end

  --- tf.TensorSpec(shape, dtype=tf.float32, name=nil): the type of a tensor
  -- argument. shape: table (-1/tf.None unknown dims), TensorShape, or nil
  -- (unknown rank). Also tf.TensorSpec{shape=, dtype=, name=}.
  local function TensorSpec_new(shape, dtype, name)
    if type(shape) == "table" and getmetatable(shape) == nil and
       (shape.shape ~= nil or shape.dtype ~= nil or shape.name ~= nil) then
      for k in pairs(shape) do
        if k ~= "shape" and k ~= "dtype" and k ~= "name" then
          raise("TypeError", sfmt("TensorSpec: unknown option '%s' (accepted: dtype, name, shape)", tostring(k)), 2)
        end
      end
      shape, dtype, name = shape.shape, shape.dtype, shape.name
    end
    local dims = as_dims(shape, "TensorSpec")
    local dt = tf.float32
    if dtype ~= nil then
      dt = dtype_of(dtype)
      if not dt then raise("TypeError", "TensorSpec: dtype must be a tf.DType, got " .. tostring(dtype), 2) end
    end
    if name ~= nil and type(name) ~= "string" then
      raise("TypeError", "TensorSpec: name must be a string, got " .. type(name), 2)
    end
    return new_spec(dims, dt, name)
  end

  function TensorSpec.__index(s, k)
    if k == "shape" then return TensorShape.new(s._dims) end
    return TensorSpec[k]
  end

  function TensorSpec.__tostring(s)
    return sfmt("TensorSpec(shape=%s, dtype=tf.%s, name=%s)", shape_text(s._dims), s.dtype.name,
      s.name and ("'" .. s.name .. "'") or "None")
  end

  function TensorSpec.__eq(a, b)
    return getmetatable(b) == TensorSpec and a:key() == b:key()
  end

  function TensorSpec.key(s)
    local k = s._key
    if not k then
      k = "T" .. s.dtype.enum .. shape_key(s._dims) .. (s.name and ("'" .. s.name) or "")
      s._key = k
    end
    return k
  end

  function TensorSpec.is_subtype_of(a, b)
    if getmetatable(b) ~= TensorSpec then return false end
    if a.name ~= nil and a.name ~= b.name then return false end
    return a.dtype == b.dtype and shape_subtype(a._dims, b._dims)
  end

  --- Most specific common supertype with 'others' (a type or a list of types).
  function TensorSpec.most_specific_common_supertype(a, others)
    if getmetatable(others) == TensorSpec then others = {others} end
    local dims, name = a._dims, a.name
    for _, b in ipairs(others) do
      if getmetatable(b) ~= TensorSpec or b.dtype ~= a.dtype then return nil end
      dims = shape_super(dims, b._dims)
      if name ~= b.name then name = nil end
    end
    return new_spec(dims, a.dtype, name)
  end

  --- True when tensor or spec 'x' fits this spec (dtype equal, shape compatible).
  function TensorSpec.is_compatible_with(s, x)
    local dt, dims
    if is_tensor(x) then
      dt, dims = x.dtype, x.shape:as_list()
    elseif getmetatable(x) == TensorSpec then
      dt, dims = x.dtype, x._dims
    else
      return false
    end
    if dt ~= s.dtype then return false end
    return TensorShape.new(dims):is_compatible_with(TensorShape.new(s._dims))
  end

  function TensorSpec.from_tensor(t, name)
    return new_spec(t.shape:as_list(), t.dtype, name)
  end

  function TensorSpec.placeholder(s, _, ctx)
    return core.graph_placeholder(ctx.graph, s.dtype, s._dims, s.name or ctx.name)
  end

  function TensorSpec.flatten(_, value, out)
    out[#out + 1] = value
  end

  --- A call's value checked against this spec: a tensor of the same dtype and
  -- a shape that is a subtype, or a Lua value converted to the spec's dtype.
  function TensorSpec.cast(s, v)
    local t = v
    if getmetatable(v) == Variable then
      t = v:value()
    elseif getmetatable(v) == TensorSpec then
      if v:is_subtype_of(s) or (v.name ~= s.name and new_spec(v._dims, v.dtype, s.name):is_subtype_of(s)) then
        return v
      end
      return nil, sfmt("Can not cast %s to %s", tostring(v), tostring(s))
    elseif not is_tensor(v) then
      if v == nil then return nil, sfmt("Can not cast None to %s", tostring(s)) end
      local ok, r = pcall(tf.constant, v, s.dtype)
      if not ok then return nil, sfmt("Can not cast %s to %s", value_text(v), tostring(s)) end
      t = r
    end
    local dims = t.shape:as_list()
    if t.dtype ~= s.dtype or not shape_subtype(dims, s._dims) then
      -- a symbolic tensor with a more general shape is accepted (TensorFlow narrows it)
      local narrowable = t:is_symbolic() and t.dtype == s.dtype and
        TensorShape.new(dims):is_compatible_with(TensorShape.new(s._dims))
      if not narrowable then
        return nil, sfmt("Can not cast %s to %s", tostring(new_spec(dims, t.dtype)), tostring(s))
      end
    end
    return t
  end

  function TensorSpec.describe(s)
    return s.dtype.name .. shape_text(s._dims)
  end

  function TensorSpec.diff(a, b, path, out)
    if getmetatable(b) ~= TensorSpec then
      out[#out + 1] = path .. ": " .. b:describe() .. " -> " .. a:describe()
    elseif a:key() ~= b:key() then
      out[#out + 1] = path .. ": " .. b:describe() .. " -> " .. a:describe()
    end
  end
  -- }====

  -- {==== Literal
  local Literal = {kind = "Literal"}
  Literal.__index = Literal
  Literal.__name = "tf.trace_type.Literal"

  local function literal_key(v)
    local tv = type(v)
    if v == nil then return "n" end
    if tv == "boolean" then return v and "b1" or "b0" end
    if tv == "string" then return "s" .. #v .. ":" .. v end
    if mtype(v) == "integer" then return "i" .. v end
    if v ~= v then return "fnan" end
    return "f" .. sfmt("%.17g", v)
  end

  local function new_literal(v)
    return setmetatable({value = v, _key = literal_key(v)}, Literal)
  end
  M.Literal = new_literal

  function Literal.__tostring(l) return "Literal[" .. py_repr(l.value) .. "]" end
  function Literal.__eq(a, b) return getmetatable(b) == Literal and a._key == b._key end
  function Literal.key(l) return l._key end
  function Literal.is_subtype_of(a, b) return getmetatable(b) == Literal and a._key == b._key end
  function Literal.most_specific_common_supertype(a, others)
    if getmetatable(others) == Literal then others = {others} end
    for _, b in ipairs(others) do
      if not a:is_subtype_of(b) then return nil end
    end
    return a
  end
  function Literal.placeholder(l) return l.value end
  function Literal.flatten() end
  function Literal.cast(l, v)
    if v == nil then return l.value end      -- absent: the traced value is the default
    if literal_key(v) == l._key then return v end
    return nil, sfmt("Can not cast %s to %s", py_repr(v), tostring(l))
  end
  function Literal.describe(l) return lua_repr(l.value) end
  function Literal.diff(a, b, path, out)
    if not (getmetatable(b) == Literal and a._key == b._key) then
      out[#out + 1] = path .. ": " .. b:describe() .. " -> " .. a:describe()
    end
  end
  -- }====

  -- {==== VariableSpec: identity (captured by reference), shape, dtype, trainable, alias_id
  local VariableSpec = {kind = "VariableSpec"}
  VariableSpec.__index = VariableSpec
  VariableSpec.__name = "tf.VariableSpec"

  function VariableSpec.__tostring(s)
    return sfmt("VariableSpec(shape=%s, dtype=tf.%s, trainable=%s, alias_id=%d)", shape_text(s._dims), s.dtype.name,
      s.trainable and "True" or "False", s.alias_id)
  end
  function VariableSpec.__eq(a, b) return getmetatable(b) == VariableSpec and a:key() == b:key() end
  function VariableSpec.key(s) return "V" .. s.var_id end
  function VariableSpec.is_subtype_of(a, b) return getmetatable(b) == VariableSpec and a.var_id == b.var_id end
  function VariableSpec.most_specific_common_supertype(a, others)
    if getmetatable(others) == VariableSpec then others = {others} end
    for _, b in ipairs(others) do
      if not a:is_subtype_of(b) then return nil end
    end
    return a
  end
  function VariableSpec.placeholder(_, v) return v end
  function VariableSpec.flatten() end
  function VariableSpec.cast(s, v)
    if getmetatable(v) == Variable and select(5, core.variable_info(v._handle)) == s.var_id then return v end
    return nil, sfmt("Can not cast %s to %s (the function was traced for variable '%s')", value_text(v), tostring(s),
      s.var_name)
  end
  function VariableSpec.describe(s) return sfmt("variable '%s'", s.var_name) end
  function VariableSpec.diff(a, b, path, out)
    if not (getmetatable(b) == VariableSpec and a.var_id == b.var_id) then
      out[#out + 1] = path .. ": " .. b:describe() .. " -> " .. a:describe() ..
        (getmetatable(b) == VariableSpec and " (variables are typed by identity)" or "")
    end
  end
  -- }====

  -- {==== Weakref: any other object, by identity; never matches once collected
  local ids = setmetatable({}, {__mode = "k"})
  local next_id = 0
  local function object_id(obj)
    local id = ids[obj]
    if not id then
      next_id = next_id + 1
      id = next_id
      ids[obj] = id
    end
    return id
  end
  M.object_id = object_id

  local Weakref = {kind = "Weakref"}
  Weakref.__index = Weakref
  Weakref.__name = "tf.trace_type.Weakref"

  local function new_weakref(obj)
    local ref = setmetatable({obj}, {__mode = "v"})
    return setmetatable({ref = ref, id = object_id(obj), text = tostring(obj)}, Weakref)
  end

  function Weakref.__tostring(w) return "Weakref[" .. w.text .. "]" end
  function Weakref.__eq(a, b) return getmetatable(b) == Weakref and a:is_subtype_of(b) end
  function Weakref.key(w) return "W" .. w.id end
  function Weakref.alive(w) return w.ref[1] ~= nil end
  function Weakref.is_subtype_of(a, b)
    if getmetatable(b) ~= Weakref then return false end
    local x, y = a.ref[1], b.ref[1]
    if x == nil or y == nil then return false end
    return rawequal(x, y) or x == y
  end
  function Weakref.most_specific_common_supertype(a, others)
    if getmetatable(others) == Weakref then others = {others} end
    for _, b in ipairs(others) do
      if not a:is_subtype_of(b) then return nil end
    end
    return a
  end
  function Weakref.placeholder(_, v) return v end
  function Weakref.flatten() end
  function Weakref.cast(w, v)
    local x = w.ref[1]
    if x ~= nil and (rawequal(x, v) or x == v) then return v end
    return nil, sfmt("Can not cast %s to %s", tostring(v), tostring(w))
  end
  function Weakref.describe(w) return w.text end
  function Weakref.diff(a, b, path, out)
    if a:is_subtype_of(b) then return end
    if getmetatable(b) == Weakref then
      out[#out + 1] = path .. ": " .. b:describe() .. (b:alive() and "" or " (garbage-collected)") .. " -> " ..
        a:describe() .. " (objects are typed by identity)"
    else
      out[#out + 1] = path .. ": " .. b:describe() .. " -> " .. a:describe()
    end
  end
  -- }====

  -- {==== Custom: a user type from __tf_tracing_type
  local Custom = {kind = "Custom"}
  Custom.__index = Custom
  Custom.__name = "tf.trace_type.Custom"

  local function new_custom(t)
    if type(t) ~= "table" and type(t) ~= "userdata" then
      raise("TypeError", sfmt("Expected an instance of TraceType for Tracing Protocol call to __tf_tracing_type " ..
        "but got %s", type(t)), 4)
    end
    for _, m in ipairs({"is_subtype_of", "most_specific_common_supertype", "placeholder_value"}) do
      if t[m] == nil then
        raise("TypeError", sfmt("Expected an instance of TraceType for Tracing Protocol call to __tf_tracing_type: " ..
          "the returned type has no method '%s'", m), 4)
      end
    end
    local h = t.hash and t:hash() or 0
    return setmetatable({t = t, h = h}, Custom)
  end

  function Custom.__tostring(c) return tostring(c.t) end
  function Custom.__eq(a, b) return getmetatable(b) == Custom and a.t == b.t end
  -- not unique: the cache compares custom types with == after a key match
  function Custom.key(c) return "C" .. tostring(c.h) end
  Custom.unverified = true
  function Custom.is_subtype_of(a, b) return getmetatable(b) == Custom and a.t:is_subtype_of(b.t) and true or false end
  function Custom.most_specific_common_supertype(a, others)
    if getmetatable(others) == Custom then others = {others} end
    local list = {}
    for i, b in ipairs(others) do
      if getmetatable(b) ~= Custom then return nil end
      list[i] = b.t
    end
    local s = a.t:most_specific_common_supertype(list)
    if s == nil then return nil end
    return new_custom(s)
  end
  function Custom.placeholder(c, _, ctx) return c.t:placeholder_value(ctx) end
  function Custom.flatten(c, v, out)
    if c.t.to_tensors then
      for _, t in ipairs(c.t:to_tensors(v)) do out[#out + 1] = t end
    end
  end
  function Custom.cast(c, v)
    local ok, t = pcall(M.from_value, v, {})
    if ok and t:is_subtype_of(c) then return v end
    return nil, sfmt("Can not cast %s to %s", value_text(v), tostring(c))
  end
  function Custom.describe(c) return tostring(c.t) end
  function Custom.diff(a, b, path, out)
    if not (getmetatable(b) == Custom and a.t == b.t) then
      out[#out + 1] = path .. ": " .. b:describe() .. " -> " .. a:describe()
    end
  end
  -- }====

  -- {==== List and Dict (plain tables)
  local List = {kind = "List"}
  List.__index = List
  List.__name = "tf.trace_type.List"

  local Dict = {kind = "Dict"}
  Dict.__index = Dict
  Dict.__name = "tf.trace_type.Dict"

  local function new_list(items)
    local unverified = false
    for _, t in ipairs(items) do unverified = unverified or t.unverified end
    return setmetatable({items = items, unverified = unverified or nil}, List)
  end

  local function new_dict(keys, map)
    local unverified = false
    for _, k in ipairs(keys) do unverified = unverified or map[k].unverified end
    return setmetatable({keys = keys, map = map, unverified = unverified or nil}, Dict)
  end

  function List.__tostring(l)
    local parts = {}
    for i, t in ipairs(l.items) do parts[i] = tostring(t) end
    return "List[" .. concat(parts, ", ") .. "]"
  end
  function List.key(l)
    local k = l._key
    if not k then
      local parts = {}
      for i, t in ipairs(l.items) do parts[i] = t:key() end
      k = "[" .. concat(parts, ";") .. "]"
      l._key = k
    end
    return k
  end
  function List.__eq(a, b)
    return getmetatable(b) == List and a:key() == b:key() and (not a.unverified or a:equals(b))
  end
  function List.equals(a, b)
    if getmetatable(b) ~= List or #a.items ~= #b.items then return false end
    for i, t in ipairs(a.items) do
      if t ~= b.items[i] then return false end
    end
    return true
  end
  function List.is_subtype_of(a, b)
    if getmetatable(b) ~= List or #a.items ~= #b.items then return false end
    for i, t in ipairs(a.items) do
      if not t:is_subtype_of(b.items[i]) then return false end
    end
    return true
  end
  function List.most_specific_common_supertype(a, others)
    if getmetatable(others) == List then others = {others} end
    local items = {}
    for i, t in ipairs(a.items) do
      local list = {}
      for j, b in ipairs(others) do
        if getmetatable(b) ~= List or #b.items ~= #a.items then return nil end
        list[j] = b.items[i]
      end
      items[i] = t:most_specific_common_supertype(list)
      if items[i] == nil then return nil end
    end
    return new_list(items)
  end
  function List.placeholder(l, v, ctx)
    local out = {}
    local name = ctx.name
    for i, t in ipairs(l.items) do
      out[i] = t:placeholder(v and v[i], ctx)
    end
    ctx.name = name
    return out
  end
  function List.flatten(l, v, out)
    for i, t in ipairs(l.items) do t:flatten(v[i], out) end
  end
  function List.cast(l, v)
    if type(v) ~= "table" or getmetatable(v) ~= nil or not is_array(v) or #v ~= #l.items then
      return nil, sfmt("Can not cast %s to %s", value_text(v), tostring(l))
    end
    local out = {}
    for i, t in ipairs(l.items) do
      local c, err = t:cast(v[i])
      if err then return nil, err end
      out[i] = c
    end
    return out
  end
  function List.describe(l) return sfmt("a table of %d values", #l.items) end
  function List.diff(a, b, path, out)
    if getmetatable(b) ~= List then
      out[#out + 1] = path .. ": " .. b:describe() .. " -> " .. a:describe()
    elseif #a.items ~= #b.items then
      out[#out + 1] = path .. ": " .. b:describe() .. " -> " .. a:describe()
    else
      for i, t in ipairs(a.items) do t:diff(b.items[i], path .. "[" .. i .. "]", out) end
    end
  end

  local function key_text(k)
    if type(k) == "string" then return "'" .. k .. "'" end
    return tostring(k)
  end
  local function key_path(path, k)
    if type(k) == "string" and k:match("^[%a_][%w_]*$") then return path .. "." .. k end
    return path .. "[" .. lua_repr(k) .. "]"
  end

  function Dict.__tostring(d)
    local parts = {}
    for i, k in ipairs(d.keys) do parts[i] = "[" .. key_text(k) .. ", " .. tostring(d.map[k]) .. "]" end
    return "Dict[" .. concat(parts, ", ") .. "]"
  end
  function Dict.key(d)
    local k = d._key
    if not k then
      local parts = {}
      for i, key in ipairs(d.keys) do parts[i] = literal_key(key) .. "=" .. d.map[key]:key() end
      k = "{" .. concat(parts, ";") .. "}"
      d._key = k
    end
    return k
  end
  function Dict.equals(a, b)
    if getmetatable(b) ~= Dict or #a.keys ~= #b.keys then return false end
    for _, k in ipairs(a.keys) do
      if b.map[k] == nil or a.map[k] ~= b.map[k] then return false end
    end
    return true
  end
  function Dict.__eq(a, b)
    return getmetatable(b) == Dict and a:key() == b:key() and (not a.unverified or a:equals(b))
  end
  function Dict.is_subtype_of(a, b)
    if getmetatable(b) ~= Dict or #a.keys ~= #b.keys then return false end
    for _, k in ipairs(a.keys) do
      if b.map[k] == nil or not a.map[k]:is_subtype_of(b.map[k]) then return false end
    end
    return true
  end
  function Dict.most_specific_common_supertype(a, others)
    if getmetatable(others) == Dict then others = {others} end
    local map = {}
    for _, k in ipairs(a.keys) do
      local list = {}
      for j, b in ipairs(others) do
        if getmetatable(b) ~= Dict or #b.keys ~= #a.keys or b.map[k] == nil then return nil end
        list[j] = b.map[k]
      end
      map[k] = a.map[k]:most_specific_common_supertype(list)
      if map[k] == nil then return nil end
    end
    return new_dict(a.keys, map)
  end
  function Dict.placeholder(d, v, ctx)
    local out = {}
    local name = ctx.name
    for _, k in ipairs(d.keys) do
      if type(k) == "string" and k:match("^[%a_][%w_]*$") then ctx.name = name .. "_" .. k end
      out[k] = d.map[k]:placeholder(v and v[k], ctx)
    end
    ctx.name = name
    return out
  end
  function Dict.flatten(d, v, out)
    for _, k in ipairs(d.keys) do d.map[k]:flatten(v[k], out) end
  end
  function Dict.cast(d, v)
    if type(v) ~= "table" or getmetatable(v) ~= nil then
      return nil, sfmt("Can not cast %s to %s", value_text(v), tostring(d))
    end
    local n = 0
    for _ in pairs(v) do n = n + 1 end
    if n ~= #d.keys then return nil, sfmt("Can not cast %s to %s", value_text(v), tostring(d)) end
    local out = {}
    for _, k in ipairs(d.keys) do
      if v[k] == nil then return nil, sfmt("Can not cast %s to %s", value_text(v), tostring(d)) end
      local c, err = d.map[k]:cast(v[k])
      if err then return nil, err end
      out[k] = c
    end
    return out
  end
  function Dict.describe(d)
    local parts = {}
    for i, k in ipairs(d.keys) do parts[i] = tostring(k) end
    return "a table with keys {" .. concat(parts, ", ") .. "}"
  end
  function Dict.diff(a, b, path, out)
    if getmetatable(b) ~= Dict or #a.keys ~= #b.keys then
      out[#out + 1] = path .. ": " .. b:describe() .. " -> " .. a:describe()
      return
    end
    for _, k in ipairs(a.keys) do
      if b.map[k] == nil then
        out[#out + 1] = path .. ": " .. b:describe() .. " -> " .. a:describe()
        return
      end
    end
    for _, k in ipairs(a.keys) do a.map[k]:diff(b.map[k], key_path(path, k), out) end
  end
  -- }====

  -- {==== from_value
  --- The trace type of a value. 'ctx' carries the call's variable aliases
  -- ({aliases = {[var_id] = alias_id}, n = count}); specs are their own type
  -- when 'allow_specs' (input_signature, get_concrete_function).
  function M.from_value(v, ctx, allow_specs)
    local tv = type(v)
    if tv == "userdata" then
      if is_tensor(v) then
        if v:_dtype_id() == 7 then   -- ORDER DTYPE: LTF_DTYPE_RESOURCE (nested in a table: fn.lua checks the top level)
          raise("TypeError", "tf.fn: an argument holds a variable handle (dtype resource), which a traced function " ..
            "does not take: pass the tf.Variable itself (v) or its value (v:value())")
        end
        return new_spec(v.shape:as_list(), v.dtype, nil)
      end
    elseif tv == "table" then
      local mt = getmetatable(v)
      if mt == nil then
        if is_array(v) then
          local items = {}
          for i = 1, #v do items[i] = M.from_value(v[i], ctx, allow_specs) end
          return new_list(items)
        end
        local keys = sorted_keys(v)
        local map = {}
        for _, k in ipairs(keys) do
          local tk = type(k)
          if tk ~= "string" and tk ~= "number" and tk ~= "boolean" then
            raise("TypeError", sfmt("tf.fn: a table argument has a key of type %s; only strings, numbers and " ..
              "booleans are supported as keys", tk), 4)
          end
          map[k] = M.from_value(v[k], ctx, allow_specs)
        end
        return new_dict(keys, map)
      end
      if mt == Variable then
        local name, trainable, dt, dims, id = core.variable_info(v._handle)
        ctx.aliases = ctx.aliases or {}
        local alias = ctx.aliases[id]
        if not alias then
          ctx.nalias = (ctx.nalias or 0) + 1
          alias = ctx.nalias - 1
          ctx.aliases[id] = alias
        end
        return setmetatable({_dims = dims, dtype = by_enum[dt], trainable = trainable, alias_id = alias,
                             var_id = id, var_name = name .. ":0"}, VariableSpec)
      end
      if mt == TensorSpec then
        if allow_specs then return v end
        return new_weakref(v)
      end
      local tt = mt.__tf_tracing_type
      if tt ~= nil then return new_custom(tt(v, ctx)) end
      if mt == Literal or mt == List or mt == Dict or mt == VariableSpec or mt == Weakref or mt == Custom then
        if allow_specs then return v end
      end
    elseif tv ~= "function" and tv ~= "thread" then
      return new_literal(v)
    end
    return new_weakref(v)
  end
  -- }====

  M.TensorSpec = TensorSpec
  M.VariableSpec = VariableSpec
  M.Weakref = Weakref
  M.Custom = Custom
  M.List = List
  M.Dict = Dict
  M.LiteralMT = Literal
  M.new_spec = new_spec
  M.is_array = is_array

  --- True for a trace type object.
  function M.is_trace_type(x)
    local mt = getmetatable(x)
    return mt == TensorSpec or mt == Literal or mt == VariableSpec or mt == Weakref or mt == Custom or mt == List or
      mt == Dict
  end

  tf.TensorSpec = setmetatable({mt = TensorSpec, from_tensor = TensorSpec.from_tensor},
                               {__call = function(_, shape, dtype, name) return TensorSpec_new(shape, dtype, name) end})
  tf.trace_type = M
  tf.types = tf.types or {}
  tf.types.experimental = tf.types.experimental or {}
  tf.types.experimental.TraceType = M
end
