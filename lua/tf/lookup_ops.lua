--- tf.lookup: immutable key -> value tables (KeyValueTensorInitializer,
-- TextFileInitializer, StaticHashTable, StaticVocabularyTable). A table
-- keeps its keys and values as constant tensors; `lookup` is one op of the
-- registry (hash_table_find, core/cpu/strings.c) taking them as inputs, so
-- a table works eagerly, inside tf.fn (the tensors are captured as
-- constants) and in tf.data map functions. See docs/lookup.md.
return function(tf)
  tf.lookup = tf.lookup or {}
  local lookup = tf.lookup
  local internal = tf.core.internal

  local function raise(kind, fmt, ...)
    -- blamed on the first caller outside this file
    local d = 2
    while true do
      local info = debug.getinfo(d, "S")
      if info == nil then d = 2; break end
      if info.what ~= "C" and not info.source:find("lookup_ops.lua", 1, true) then break end
      d = d + 1
    end
    tf.errors.raise(kind, string.format(fmt, ...), d)
  end

  local function class(name)
    local c = {}
    c.__index = c
    c.__name = name
    c.__tostring = function(self) return string.format("<tf.lookup.%s>", name) end
    return setmetatable(c, {__call = function(cls, ...) return cls.new(...) end})
  end

  local KEY_DTYPES = {string = true, int32 = true, int64 = true}

  local function to_tensor(v, dtype, what, op)
    if tf.is_tensor(v) then
      if dtype and v.dtype ~= dtype then
        if v.dtype == tf.string or dtype == tf.string then
          raise("TypeError", "%s: %s have dtype %s, expected %s", op, what, v.dtype.name, dtype.name)
        end
        v = tf.cast(v, dtype)
      end
      return v
    end
    if type(v) ~= "table" and type(v) ~= "string" and type(v) ~= "number" then
      raise("TypeError", "%s: %s must be a tensor or a Lua list, got %s", op, what, type(v))
    end
    if type(v) == "table" and #v == 0 then
      raise("InvalidArgumentError", "%s: %s are empty", op, what)
    end
    if dtype then return tf.constant(v, dtype) end
    local t = tf.constant(v)
    if t.dtype == tf.int32 then t = tf.cast(t, tf.int64) end   -- TensorFlow's integer default here
    return t
  end

  -- {==== Initializers
  local KeyValueTensorInitializer = class("KeyValueTensorInitializer")
  lookup.KeyValueTensorInitializer = KeyValueTensorInitializer
  --- KeyValueTensorInitializer(keys, values [, key_dtype] [, value_dtype]):
  -- keys and values are vectors of one length (tensors or Lua lists; Lua
  -- integers become int64 as in TensorFlow).
  function KeyValueTensorInitializer.new(keys, values, key_dtype, value_dtype, opts)
    if type(key_dtype) == "table" and getmetatable(key_dtype) == nil then
      opts, key_dtype = key_dtype, nil
    end
    opts = opts or {}
    key_dtype = key_dtype or opts.key_dtype
    value_dtype = value_dtype or opts.value_dtype
    if key_dtype then key_dtype = tf.dtypes.as_dtype(key_dtype) end
    if value_dtype then value_dtype = tf.dtypes.as_dtype(value_dtype) end
    local op = "KeyValueTensorInitializer"
    local k = to_tensor(keys, key_dtype, "keys", op)
    local v = to_tensor(values, value_dtype, "values", op)
    if not KEY_DTYPES[k.dtype.name] then
      raise("TypeError", "%s: keys must be strings or integers, got %s", op, k.dtype.name)
    end
    local ks, vs = k.shape:as_list(), v.shape:as_list()
    if not ks or not vs or #ks ~= 1 or #vs ~= 1 or (ks[1] >= 0 and vs[1] >= 0 and ks[1] ~= vs[1]) then
      raise("InvalidArgumentError", "%s: keys %s and values %s must be vectors of one length", op, tostring(k.shape),
            tostring(v.shape))
    end
    return setmetatable({keys = k, values = v, key_dtype = k.dtype, value_dtype = v.dtype}, KeyValueTensorInitializer)
  end

  local TextFileIndex = {WHOLE_LINE = -2, LINE_NUMBER = -1}
  lookup.TextFileIndex = TextFileIndex

  local TextFileInitializer = class("TextFileInitializer")
  lookup.TextFileInitializer = TextFileInitializer
  --- TextFileInitializer(filename, key_dtype, key_index, value_dtype,
  -- value_index [, vocab_size] [, delimiter = "\t"]): keys and values from
  -- the lines of a text file, read when the initializer is made. An index is
  -- a 0-based column (TensorFlow's), TextFileIndex.WHOLE_LINE (-2) or
  -- TextFileIndex.LINE_NUMBER (-1: the 0-based line number).
  function TextFileInitializer.new(filename, key_dtype, key_index, value_dtype, value_index, vocab_size, delimiter)
    local op = "TextFileInitializer"
    if type(filename) ~= "string" then raise("TypeError", "%s: 'filename' must be a string", op) end
    key_dtype, value_dtype = tf.dtypes.as_dtype(key_dtype), tf.dtypes.as_dtype(value_dtype)
    delimiter = delimiter or "\t"
    local f, err = io.open(filename, "r")
    if not f then raise("NotFoundError", "%s: cannot open '%s': %s", op, filename, tostring(err)) end
    local keys, values, n = {}, {}, 0
    local function field(line, cols, idx, dtype, lineno)
      local s
      if idx == TextFileIndex.WHOLE_LINE then s = line
      elseif idx == TextFileIndex.LINE_NUMBER then return lineno
      else
        s = cols[idx + 1]
        if s == nil then
          f:close()
          raise("InvalidArgumentError", "%s: line %d of '%s' has %d columns, column %d asked", op, lineno + 1,
                filename, #cols, idx)
        end
      end
      if dtype == tf.string then return s end
      local v = dtype.is_integer and math.tointeger(tonumber(s)) or tonumber(s)
      if v == nil then
        f:close()
        raise("InvalidArgumentError", "%s: cannot read '%s' (line %d of '%s') as %s", op, s, lineno + 1, filename,
              dtype.name)
      end
      return v
    end
    for line in f:lines() do
      if vocab_size and n >= vocab_size then break end
      line = line:gsub("\r$", "")
      local cols = {}
      for c in (line .. delimiter):gmatch("(.-)" .. delimiter:gsub("%p", "%%%0")) do cols[#cols + 1] = c end
      keys[n + 1] = field(line, cols, key_index, key_dtype, n)
      values[n + 1] = field(line, cols, value_index, value_dtype, n)
      n = n + 1
    end
    f:close()
    if vocab_size and n < vocab_size then
      raise("InvalidArgumentError", "%s: '%s' has %d lines, vocab_size is %d", op, filename, n, vocab_size)
    end
    local init = KeyValueTensorInitializer.new(keys, values, key_dtype, value_dtype)
    return setmetatable(init, TextFileInitializer)
  end
  -- }====

  -- {==== Tables
  local function check_init(op, init)
    local mt = getmetatable(init)
    if mt ~= KeyValueTensorInitializer and mt ~= TextFileInitializer then
      raise("TypeError", "%s: 'initializer' must be a tf.lookup.KeyValueTensorInitializer or TextFileInitializer, "
            .. "got %s", op, tostring(init))
    end
  end

  -- The keys looked up as a tensor of the table's key dtype.
  local function query(op, self, keys)
    if not tf.is_tensor(keys) then keys = tf.constant(keys, self.key_dtype) end
    if keys.dtype ~= self.key_dtype then
      local ok = keys.dtype.is_integer and self.key_dtype.is_integer
      if not ok then
        raise("TypeError", "%s.lookup: keys have dtype %s, the table's keys %s", op, keys.dtype.name,
              self.key_dtype.name)
      end
      keys = tf.cast(keys, self.key_dtype)
    end
    return keys
  end

  local StaticHashTable = class("StaticHashTable")
  lookup.StaticHashTable = StaticHashTable
  --- StaticHashTable(initializer, default_value): an immutable table;
  -- table:lookup(keys) (or table(keys)) gives the values of keys of any
  -- shape, default_value for a missing key. Keys repeated with different
  -- values are an InvalidArgumentError on lookup.
  function StaticHashTable.new(initializer, default_value, opts)
    check_init("StaticHashTable", initializer)
    if default_value == nil then raise("TypeError", "StaticHashTable: 'default_value' is required") end
    local d = default_value
    if tf.is_tensor(d) then
      if d.dtype ~= initializer.value_dtype then d = tf.cast(d, initializer.value_dtype) end
    else
      d = tf.constant(d, initializer.value_dtype)
    end
    if d.shape:rank() ~= 0 then
      raise("InvalidArgumentError", "StaticHashTable: 'default_value' must be a scalar, got shape %s", tostring(d.shape))
    end
    return setmetatable({_keys = initializer.keys, _values = initializer.values, key_dtype = initializer.key_dtype,
                         value_dtype = initializer.value_dtype, default_value = d,
                         name = opts and opts.name}, StaticHashTable)
  end
  function StaticHashTable.lookup(self, keys)
    return internal.lookup_find(self._keys, self._values, query("StaticHashTable", self, keys), self.default_value, 0)
  end
  StaticHashTable.__call = StaticHashTable.lookup
  --- Number of entries (int64 scalar).
  function StaticHashTable.size(self)
    return tf.constant(self._keys.shape:as_list()[1], tf.int64)
  end
  --- keys, values (two tensors).
  function StaticHashTable.export(self) return self._keys, self._values end

  local StaticVocabularyTable = class("StaticVocabularyTable")
  lookup.StaticVocabularyTable = StaticVocabularyTable
  --- StaticVocabularyTable(initializer, num_oov_buckets [, {lookup_key_dtype =}]):
  -- int64 ids of the vocabulary; a missing key gets size + (Fingerprint64 of
  -- the key, integers as decimal text) mod num_oov_buckets, TensorFlow's ids.
  function StaticVocabularyTable.new(initializer, num_oov_buckets, opts)
    check_init("StaticVocabularyTable", initializer)
    if math.type(num_oov_buckets) ~= "integer" or num_oov_buckets < 1 then
      raise("ValueError", "StaticVocabularyTable: 'num_oov_buckets' must be an integer >= 1, got %s",
            tostring(num_oov_buckets))
    end
    if initializer.value_dtype ~= tf.int64 then
      raise("TypeError", "StaticVocabularyTable: values must be int64, got %s", initializer.value_dtype.name)
    end
    return setmetatable({_keys = initializer.keys, _values = initializer.values, key_dtype = initializer.key_dtype,
                         value_dtype = tf.int64, num_oov_buckets = num_oov_buckets,
                         name = opts and opts.name}, StaticVocabularyTable)
  end
  function StaticVocabularyTable.lookup(self, keys)
    return internal.lookup_find(self._keys, self._values, query("StaticVocabularyTable", self, keys),
                                tf.constant(-1, tf.int64), self.num_oov_buckets)
  end
  StaticVocabularyTable.__call = StaticVocabularyTable.lookup
  --- Number of entries, OOV buckets included (int64 scalar), as TensorFlow's.
  function StaticVocabularyTable.size(self)
    return tf.constant(self._keys.shape:as_list()[1] + self.num_oov_buckets, tf.int64)
  end
  function StaticVocabularyTable.export(self) return self._keys, self._values end
  -- }====
end
