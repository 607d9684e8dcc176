--- dtypes: tf.float32, tf.int32, ... as DType objects (singletons, so `==`
-- compares them), and tf.dtypes.as_dtype.
return function(tf)
  local DType = {}
  DType.__index = DType
  DType.__name = "tf.DType"
  function DType.__tostring(d) return "<dtype: '" .. d.name .. "'>" end

  local specs = { -- ORDER DTYPE (core/include/ltf.h): name, enum, size, kind
    {"float32", 0, 4, "float"}, {"float64", 1, 8, "float"}, {"int32", 2, 4, "int"}, {"int64", 3, 8, "int"},
    {"uint8", 4, 1, "int"}, {"bool", 5, 1, "bool"}, {"string", 6, 8, "string"},
    -- 7 is resource (variable handles), not a user dtype
    {"float16", 8, 2, "float"}, {"bfloat16", 9, 2, "float"},
  }
  local by_enum, by_name = {}, {}
  for _, s in ipairs(specs) do
    local d = setmetatable({name = s[1], enum = s[2], size = s[3],
                            is_floating = s[4] == "float", is_integer = s[4] == "int",
                            is_bool = s[4] == "bool", is_numeric = s[4] == "float" or s[4] == "int"}, DType)
    by_enum[s[2]] = d
    by_name[s[1]] = d
    tf[s[1]] = d
    tf.dtypes[s[1]] = d
  end
  tf.float = tf.float32
  tf.double = tf.float64
  tf.half = tf.float16
  tf.dtypes.half = tf.float16
  tf.DType = DType
  tf.dtypes.DType = DType
  tf.core.internal.dtype_by_enum = by_enum   -- private: enum -> DType
  tf.int32.min, tf.int32.max = -2147483648, 2147483647
  tf.int64.min, tf.int64.max = math.mininteger, math.maxinteger
  tf.uint8.min, tf.uint8.max = 0, 255
  tf.float32.min, tf.float32.max = -3.4028234663852886e38, 3.4028234663852886e38
  tf.float64.min, tf.float64.max = -math.huge, math.huge
  tf.float16.min, tf.float16.max = -65504.0, 65504.0
  tf.bfloat16.min, tf.bfloat16.max = -3.3895313892515355e38, 3.3895313892515355e38

  --- The DType for a DType or a name ("float32").
  function tf.dtypes.as_dtype(x)
    if getmetatable(x) == DType then return x end
    local d = by_name[x]
    if not d then tf.errors.raise("TypeError", "as_dtype: unknown dtype " .. tostring(x), 2) end
    return d
  end
  tf.as_dtype = tf.dtypes.as_dtype
  tf.dtypes.cast = tf.cast
end
