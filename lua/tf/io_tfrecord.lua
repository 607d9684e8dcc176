--- tf.io's TFRecord part (docs/tfrecord.md): TFRecordWriter, TFRecordOptions,
-- and the Example parsing functions (parse_example, parse_single_example,
-- FixedLenFeature, VarLenFeature, FixedLenSequenceFeature, in
-- lua/tf/train/example.lua). lua/tf/io.lua installs it: require("tf.io_tfrecord")(tf).
return function(tf)
  local core = tf.core
  local internal = core.internal
  local sfmt = string.format
  local function raise(kind, fmt, ...) internal.raise(kind, sfmt(fmt, ...)) end

  local io = rawget(tf, "io") or {}
  tf.io = io

  local COMP = {[""] = "", NONE = "", ZLIB = "ZLIB", GZIP = "GZIP"}

  -- {==== TFRecordOptions
  local Options = {__name = "tf.io.TFRecordOptions"}
  Options.__index = Options

  --- tf.io.TFRecordOptions{compression_type = "" | "ZLIB" | "GZIP", compression_level = 0..9}
  -- (or TFRecordOptions("GZIP")).
  function io.TFRecordOptions(opts)
    if type(opts) == "string" or opts == nil then opts = {compression_type = opts} end
    if type(opts) ~= "table" then
      raise("TypeError", "TFRecordOptions: expected a keyword table or a compression type, got %s", type(opts))
    end
    local o = {compression_type = opts.compression_type or opts[1], compression_level = opts.compression_level}
    for k in pairs(opts) do
      if k ~= 1 and k ~= "compression_type" and k ~= "compression_level" then
        raise("TypeError", "TFRecordOptions: unexpected keyword argument '%s'", tostring(k))
      end
    end
    local c = o.compression_type
    if c == nil then c = "" end
    if type(c) ~= "string" or COMP[c] == nil then
      raise("InvalidArgumentError", "TFRecordOptions: 'compression_type' must be \"\", \"ZLIB\" or \"GZIP\", got %s",
        type(c) == "string" and ("'" .. c .. "'") or type(c))
    end
    o.compression_type = COMP[c]
    local l = o.compression_level
    if l ~= nil and (math.type(l) ~= "integer" or l < 0 or l > 9) then
      raise("InvalidArgumentError", "TFRecordOptions: 'compression_level' must be an integer 0..9, got %s", tostring(l))
    end
    return setmetatable(o, Options)
  end

  local function as_options(x)
    if getmetatable(x) == Options then return x end
    return io.TFRecordOptions(x)
  end
  -- }====

  -- {==== TFRecordWriter
  local Writer = {__name = "tf.io.TFRecordWriter"}
  Writer.__index = Writer

  --- tf.io.TFRecordWriter(path [, options]): options a TFRecordOptions, its
  -- keyword table, or a compression type string ("", "ZLIB", "GZIP").
  -- w:write(record) (a Lua string, or a string tensor: each element one
  -- record), w:flush(), w:close(); `local w <close> = ...` closes it.
  function io.TFRecordWriter(path, options)
    if type(path) ~= "string" then
      if tf.is_tensor(path) and path.dtype == tf.string and path.rank == 0 then path = path:item()
      else raise("TypeError", "TFRecordWriter: 'path' must be a string, got %s", type(path)) end
    end
    local o = as_options(options)
    local h = internal.tfrecord_writer_open(path, o.compression_type, o.compression_level or -1)
    return setmetatable({_h = h, path = path, options = o}, Writer)
  end

  local function check(w, m)
    if getmetatable(w) ~= Writer then
      raise("TypeError", "TFRecordWriter.%s: expected a TFRecordWriter as the receiver (call w:%s(...))", m, m)
    end
    if w._closed then raise("FailedPreconditionError", "TFRecordWriter.%s: %s: the writer is closed", m, w.path) end
  end

  function Writer:write(record)
    check(self, "write")
    if type(record) ~= "string" and not (tf.is_tensor(record) and record.dtype == tf.string) then
      local mt = getmetatable(record)
      if mt and mt.SerializeToString then record = record:SerializeToString()
      else
        raise("TypeError", "TFRecordWriter.write: 'record' must be a string, a string tensor or a tf.train.Example, got %s",
          tf.is_tensor(record) and ("a " .. record.dtype.name .. " tensor") or type(record))
      end
    end
    internal.tfrecord_write(self._h, record)
  end
  function Writer:flush()
    check(self, "flush")
    internal.tfrecord_writer_flush(self._h)
  end
  function Writer:close()
    if getmetatable(self) ~= Writer then raise("TypeError", "TFRecordWriter.close: expected a TFRecordWriter") end
    if self._closed then return end
    self._closed = true
    internal.tfrecord_writer_close(self._h)
  end
  Writer.__close = function(w) w:close() end
  function Writer:__tostring() return sfmt("<tf.io.TFRecordWriter %s%s>", self.path, self._closed and " (closed)" or "") end
  -- }====

  -- parse_example & co. and tf.train.Example (lua/tf/train/example.lua)
  if package.searchpath("tf.train.example", package.path) then require("tf.train.example")(tf) end
  return io
end
