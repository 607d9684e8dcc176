-- TFRecord files: framing bytes against a CRC32C computed here bit by bit,
-- round trips (plain, GZIP, ZLIB), corruption and truncation errors with
-- their offsets, the skip_corrupt option, batching, parallel reads, tf.fn.
local tf = require("tf")
if not tf.io or not tf.io.TFRecordWriter then require("tf.io_tfrecord")(tf) end

-- {==== independent reference: CRC32C bit by bit, TensorFlow's mask
local function crc32c(s)
  local c = 0xFFFFFFFF
  for i = 1, #s do
    c = c ~ s:byte(i)
    for _ = 1, 8 do
      if c & 1 == 1 then c = (c >> 1) ~ 0x82F63B78 else c = c >> 1 end
    end
  end
  return c ~ 0xFFFFFFFF
end
local function mask(c) return (((c >> 15) | (c << 17)) + 0xa282ead8) & 0xFFFFFFFF end
local function le64(n) return string.pack("<I8", n) end
local function le32(n) return string.pack("<I4", n) end
local function frame(data)
  local h = le64(#data)
  return h .. le32(mask(crc32c(h))) .. data .. le32(mask(crc32c(data)))
end
-- }====

local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
local function path(name) return dir .. "/" .. name end
local function slurp(p) local f = assert(io.open(p, "rb")); local s = f:read("a"); f:close(); return s end
local function spit(p, s) local f = assert(io.open(p, "wb")); f:write(s); f:close() end
local function write(p, records, opts)
  local w <close> = tf.io.TFRecordWriter(p, opts)
  for _, r in ipairs(records) do w:write(r) end
end
local function read(p, opts)
  local out = {}
  for x in tf.data.TFRecordDataset(p, opts):iter() do out[#out + 1] = x:item() end
  return out
end

describe("TFRecord framing", function()
  it("the reference CRC32C gives the standard check value", function()
    assert.equal(0xE3069283, crc32c("123456789"))
  end)

  it("the engine's masked CRC matches it at every length (one stream, three streams of 64k bytes, long inputs)", function()
    local mcrc = tf.core.internal.tfrecord_masked_crc
    local bytes = {}
    for i = 1, 13000 do bytes[i] = string.char((i * 131 + (i >> 5) * 7) % 256) end
    local data = table.concat(bytes)
    local lens = {}
    for n = 0, 1300 do lens[#lens + 1] = n end
    for _, n in ipairs({2047, 2048, 3071, 4097, 12287, 12288, 12999}) do lens[#lens + 1] = n end
    for _, n in ipairs(lens) do
      local s = data:sub(1 + n % 7, n + n % 7)   -- misaligned starts too
      local want, got = mask(crc32c(s)), mcrc(s)
      if want ~= got then assert.equal(want, got, "length " .. n) end
    end
  end)

  it("writes length, masked CRC of the length, data, masked CRC of the data", function()
    local p = path("frame.tfrecord")
    write(p, {"hello", "", string.rep("\0\255", 100)})
    assert.equal(frame("hello") .. frame("") .. frame(string.rep("\0\255", 100)), slurp(p))
    -- TensorFlow's masked CRC of the 8 length bytes of "hello"
    assert.equal(mask(crc32c(le64(5))), tf.core.internal.tfrecord_masked_crc(le64(5)))
  end)

  it("reads hand-framed files, records with NUL bytes intact", function()
    local p = path("hand.tfrecord")
    spit(p, frame("a\0b") .. frame("") .. frame("xyz"))
    assert.same({"a\0b", "", "xyz"}, read(p))
  end)
end)

describe("TFRecord round trips", function()
  local recs = {}
  for i = 1, 700 do recs[i] = string.rep(string.char(i % 256), (i * 37) % 1500) end
  recs[701] = string.rep("L", 600000)   -- longer than the read buffer
  recs[702] = ""
  for _, c in ipairs({"", "GZIP", "ZLIB"}) do
    it("compression '" .. c .. "'", function()
      local p = path("rt" .. c .. ".tfrecord")
      write(p, recs, c)
      local raw = slurp(p)
      if c == "GZIP" then assert.equal("\31\139", raw:sub(1, 2)) end
      if c == "ZLIB" then assert.equal(0x78, raw:byte(1)) end
      if c ~= "" then assert.is_true(#raw < 600000) end
      local got = read(p, {compression_type = c})
      assert.equal(#recs, #got)
      for i = 1, #recs do if got[i] ~= recs[i] then error("record " .. i .. " differs") end end
    end)
  end

  it("TFRecordOptions carries compression_type and compression_level", function()
    local p = path("lvl.tfrecord")
    write(p, {string.rep("abc", 1000)}, tf.io.TFRecordOptions{compression_type = "GZIP", compression_level = 9})
    assert.same({string.rep("abc", 1000)}, read(p, {compression_type = "GZIP"}))
    assert.has_error(function() tf.io.TFRecordOptions{compression_type = "LZ4"} end)
    assert.tf_error("InvalidArgumentError", "'compression_level' must be an integer 0..9",
      tf.io.TFRecordOptions, {compression_type = "GZIP", compression_level = 12})
  end)

  it("writes string tensors (each element a record) and Examples", function()
    local p = path("tensors.tfrecord")
    local ex = tf.train.Example{features = {a = {int64_list = {1}}}}
    do
      local w <close> = tf.io.TFRecordWriter(p)
      w:write(tf.constant({"x", "yy"}))
      w:write(ex)
      w:flush()
    end
    assert.same({"x", "yy", ex:SerializeToString()}, read(p))
  end)

  it("TensorFlow's positional options and a tiny buffer_size (the buffer grows to the record)", function()
    local p = path("pos.tfrecord")
    write(p, {"x", string.rep("y", 5000), ""}, "ZLIB")
    local got = {}
    for x in tf.data.TFRecordDataset(p, "ZLIB", 64, 1):iter() do got[#got + 1] = x:item() end
    assert.same({"x", string.rep("y", 5000), ""}, got)
    assert.same({"x", string.rep("y", 5000), ""}, read(p, {compression_type = "ZLIB", buffer_size = 1}))
  end)

  it("a closed writer refuses writes; a missing file is NotFoundError", function()
    local w = tf.io.TFRecordWriter(path("closed.tfrecord"))
    w:close()
    w:close()
    assert.tf_error("FailedPreconditionError", "the writer is closed", function() w:write("x") end)
    assert.tf_error("NotFoundError", "no/such/file", function() read(path("no/such/file")) end)
    assert.tf_error("InvalidArgumentError", "compression_type", tf.data.TFRecordDataset, "x", {compression_type = "BZ2"})
  end)
end)

describe("TFRecord corruption", function()
  local recs = {"first", "second!", "third record"}
  local p = path("good.tfrecord")
  write(p, recs)
  local good = slurp(p)
  local off2 = 16 + #recs[1]            -- offset of record 2
  local off3 = off2 + 16 + #recs[2]
  local function flip(s, at) return s:sub(1, at - 1) .. string.char(s:byte(at) ~ 1) .. s:sub(at + 1) end
  local function collect(q, opts)
    local got = {}
    local ok, err = pcall(function()
      for x in tf.data.TFRecordDataset(q, opts):iter() do got[#got + 1] = x:item() end
    end)
    return got, ok, err
  end

  it("a flipped bit in the data: DataLossError naming the file and the offset, after the good records", function()
    local q = path("bad_data.tfrecord")
    spit(q, flip(good, off2 + 12 + 3))
    local got, ok, err = collect(q)
    assert.is_false(ok)
    assert.same({"first"}, got)
    assert.equal("DataLossError", err.kind)
    assert.truthy(err.message:find(q .. ": corrupted record at " .. off2, 1, true), err.message)
  end)

  it("a flipped bit in the length or in a CRC", function()
    for _, at in ipairs({off3 + 1, off3 + 9, off3 + 12 + #recs[3] + 2}) do
      local q = path("bad_" .. at .. ".tfrecord")
      spit(q, flip(good, at))
      local got, ok, err = collect(q)
      assert.is_false(ok)
      assert.same({"first", "second!"}, got)
      assert.equal("DataLossError", err.kind)
      assert.truthy(err.message:find("corrupted record at " .. off3, 1, true), err.message)
    end
  end)

  it("truncation inside a record (header or data) is DataLossError 'truncated record at'", function()
    for _, cut in ipairs({off3 + 5, off3 + 14, #good - 1}) do
      local q = path("trunc_" .. cut .. ".tfrecord")
      spit(q, good:sub(1, cut))
      local got, ok, err = collect(q)
      assert.is_false(ok)
      assert.same({"first", "second!"}, got)
      assert.equal("DataLossError", err.kind)
      assert.truthy(err.message:find(q .. ": truncated record at " .. off3, 1, true), err.message)
    end
    local q = path("clean_cut.tfrecord")
    spit(q, good:sub(1, off3))   -- between records: a clean end
    assert.same({"first", "second!"}, (collect(q)))
  end)

  it("a named pipe (read(), not mapped like a plain file) gives the same records and errors", function()
    local q = path("fifo.tfrecord")
    for _, case in ipairs({{good, true}, {good:sub(1, off3 + 14), false}}) do
      local src = path("fifo_src.tfrecord")
      spit(src, case[1])
      os.remove(q)
      assert.is_true(os.execute("mkfifo '" .. q .. "'"))
      os.execute("(cat '" .. src .. "' > '" .. q .. "') &")
      local got, ok, err = collect(q)
      if case[2] then
        assert.is_true(ok, err and err.message)
        assert.same(recs, got)
      else
        assert.is_false(ok)
        assert.same({"first", "second!"}, got)
        assert.equal("DataLossError", err.kind)
        assert.truthy(err.message:find(q .. ": truncated record at " .. off3, 1, true), err.message)
      end
    end
    os.remove(q)
  end)

  it("skip_corrupt skips a record whose data CRC fails, and a bad length ends the file", function()
    local q = path("skip.tfrecord")
    spit(q, flip(good, off2 + 12 + 1))
    local got, ok = collect(q, {skip_corrupt = true})
    assert.is_true(ok)
    assert.same({"first", "third record"}, got)
    spit(q, flip(good, off2 + 2))
    got, ok = collect(q, {skip_corrupt = true})
    assert.is_true(ok)
    assert.same({"first"}, got)
  end)

  it("a corrupt GZIP stream is DataLossError", function()
    local q = path("gz.tfrecord")
    write(q, {string.rep("z", 5000), "b"}, "GZIP")
    local s = slurp(q)
    spit(q, s:sub(1, 20) .. string.rep("\0", 10) .. s:sub(31))
    local _, ok, err = collect(q, {compression_type = "GZIP"})
    assert.is_false(ok)
    assert.equal("DataLossError", err.kind)
  end)
end)

describe("TFRecordDataset", function()
  local a, b = path("a.tfrecord"), path("b.tfrecord")
  write(a, {"a1", "a2", "a3"})
  write(b, {"b1", "b2"})

  it("reads several files in order; num_parallel_reads interleaves them record by record", function()
    assert.same({"a1", "a2", "a3", "b1", "b2"}, read({a, b}))
    assert.same({"a1", "b1", "a2", "b2", "a3"}, read({a, b}, {num_parallel_reads = 2}))
    assert.same({"a1", "b1", "a2", "b2", "a3"}, read(tf.constant({a, b}), {num_parallel_reads = 2}))
  end)

  it("batch gives string vectors across file ends, drop_remainder drops the last", function()
    local bs = {}
    for x in tf.data.TFRecordDataset({a, b}):batch(2):iter() do bs[#bs + 1] = x:totable() end
    assert.same({{"a1", "a2"}, {"a3", "b1"}, {"b2"}}, bs)
    local n = 0
    for x in tf.data.TFRecordDataset({a, b, a}):batch(4, true):iter() do n = n + 1; assert.same({4}, x.shape:as_list()) end
    assert.equal(2, n)
  end)

  it("iterates inside tf.fn (the records read while tracing)", function()
    local f = tf.fn(function(ds)
      local s = tf.constant(0, tf.int32)
      for x in ds:iter() do s = s + tf.strings.length(x) end
      return s
    end)
    assert.equal(10, f(tf.data.TFRecordDataset({a, b})):item())
  end)

  it("maps and takes like other datasets", function()
    local ds = tf.data.TFRecordDataset(a):map(function(x) return tf.strings.length(x) end):take(2)
    local got = {}
    for x in ds:iter() do got[#got + 1] = x:item() end
    assert.same({2, 2}, got)
  end)
end)
