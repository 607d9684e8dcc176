-- TFRecord files read into string blocks (core/tfrecord.c: an uncompressed
-- file is read() in 256 KB blocks and each record becomes a string in place):
-- files of several blocks with records of every alignment, empty records,
-- records bigger than a block, corruption and truncation past the first
-- block (the offsets in the errors), and strings that outlive their dataset
-- and their file (deleted, or replaced by a rename).
local tf = require("tf")
if not tf.io or not tf.io.TFRecordWriter then require("tf.io_tfrecord")(tf) end

local BLOCK = 256 * 1024
local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
local function path(name) return dir .. "/" .. name end
local function slurp(p) local f = assert(io.open(p, "rb")); local s = f:read("a"); f:close(); return s end
local function spit(p, s) local f = assert(io.open(p, "wb")); f:write(s); f:close() end
local function write(p, records)
  local w <close> = tf.io.TFRecordWriter(p)
  for _, r in ipairs(records) do w:write(r) end
end

-- a record of n bytes, its number and length spelled at the front, then a
-- byte pattern (NULs included) that differs from record to record
local function record(i, n)
  local head = string.format("%d:%d:", i, n)
  if n <= #head then return head:sub(1, n) end
  local t = {head}
  local k = n - #head
  local unit = string.char(i % 251, 0, (i * 7) % 256, 65 + i % 26)
  t[2] = string.rep(unit, k // 4) .. unit:sub(1, k % 4)
  return table.concat(t)
end

-- lengths: a run of 1 KB records (16 + 1024: every entry 8-aligned), odd
-- lengths (most places not 8-aligned: copied), empties, one record just
-- under a block, two bigger than a block, then small ones again
local lens = {}
for _ = 1, 300 do lens[#lens + 1] = 1024 end
for i = 1, 700 do lens[#lens + 1] = (i * 37) % 1500 end
lens[#lens + 1] = BLOCK - 200
lens[#lens + 1] = BLOCK + 5
for i = 1, 50 do lens[#lens + 1] = i % 9 end
lens[#lens + 1] = 3 * BLOCK + 3
for i = 1, 400 do lens[#lens + 1] = 1024 + (i % 3) end
local recs, offs = {}, {}
local at = 0
for i, n in ipairs(lens) do
  recs[i] = record(i, n)
  offs[i] = at
  at = at + 16 + n
end
local big = path("big.tfrecord")
write(big, recs)

local function read_all(p, opts, b)
  local got = {}
  local ds = tf.data.TFRecordDataset(p, opts)
  if b then
    for x in ds:batch(b):iter() do for _, s in ipairs(x:totable()) do got[#got + 1] = s end end
  else
    for x in ds:iter() do got[#got + 1] = x:item() end
  end
  return got
end
local function first(ds)
  local it = ds:iter()
  return it()
end
local function same_records(want, got)
  assert.equal(#want, #got)
  for i = 1, #want do
    if want[i] ~= got[i] then
      error(string.format("record %d (%d bytes) differs: got %d bytes", i, #want[i], #got[i]))
    end
  end
end

describe("TFRecord string blocks", function()
  it("the file spans many blocks", function()
    assert.is_true(#slurp(big) > 8 * BLOCK)
    assert.equal(at, #slurp(big))
  end)

  it("every record comes back exactly, one at a time and in batches of 1, 7 and 1000", function()
    same_records(recs, read_all(big))
    same_records(recs, read_all(big, nil, 1))
    same_records(recs, read_all(big, nil, 7))
    same_records(recs, read_all(big, nil, 1000))
  end)

  it("strings made in place end where the record does (lengths, string ops, numbers)", function()
    local p = path("numbers.tfrecord")
    local nums = {}
    for i = 1, 2000 do nums[i] = tostring(i * 3) end
    write(p, nums)
    local x = first(tf.data.TFRecordDataset(p):batch(2000))
    local lens_got = tf.strings.length(x):totable()
    local vals = tf.strings.to_number(x, tf.int64):totable()
    for i = 1, 2000 do
      assert.equal(#nums[i], lens_got[i])
      assert.equal(i * 3, vals[i])
    end
    assert.equal("3|6", tf.strings.reduce_join(x[{{1, 2}}], {separator = "|"}):item())
  end)

  it("a flipped bit past the first blocks: DataLossError naming the file and that record's offset", function()
    local k = 1200   -- a record several blocks in
    assert.is_true(offs[k] > 4 * BLOCK)
    local s = slurp(big)
    local q = path("bad.tfrecord")
    local pos = offs[k] + 12 + 2 + 1   -- a data byte (1-based)
    spit(q, s:sub(1, pos - 1) .. string.char(s:byte(pos) ~ 4) .. s:sub(pos + 1))
    local got = {}
    local ok, err = pcall(function()
      for x in tf.data.TFRecordDataset(q):batch(64):iter() do
        for _, r in ipairs(x:totable()) do got[#got + 1] = r end
      end
    end)
    assert.is_false(ok)
    assert.equal("DataLossError", err.kind)
    assert.truthy(err.message:find(q .. ": corrupted record at " .. offs[k] .. " (the data's checksum does not match)", 1, true),
      err.message)
    -- the batches before it (the batch the error hits is not handed out, as in TensorFlow)
    local whole = (k - 1) // 64 * 64
    assert.equal(whole, #got)
    same_records({table.unpack(recs, 1, whole)}, got)
    -- skip_corrupt: every record but that one
    local want = {}
    for i = 1, #recs do if i ~= k then want[#want + 1] = recs[i] end end
    same_records(want, read_all(q, {skip_corrupt = true}, 100))
  end)

  it("a file cut inside a record past the first blocks: 'truncated record at' its offset", function()
    local k = #recs - 10
    local q = path("cut.tfrecord")
    spit(q, slurp(big):sub(1, offs[k] + 16 + 5))
    local n = 0
    local ok, err = pcall(function()
      for x in tf.data.TFRecordDataset(q):iter() do n = n + 1; assert.equal(recs[n], x:item()) end
    end)
    assert.is_false(ok)
    assert.equal("DataLossError", err.kind)
    assert.truthy(err.message:find(q .. ": truncated record at " .. offs[k], 1, true), err.message)
    assert.equal(k - 1, n)
  end)

  it("a bad length's checksum past the first blocks ends the file under skip_corrupt", function()
    local k = 1100
    local s = slurp(big)
    local q = path("badlen.tfrecord")
    local pos = offs[k] + 3
    spit(q, s:sub(1, pos - 1) .. string.char(s:byte(pos) ~ 1) .. s:sub(pos + 1))
    same_records({table.unpack(recs, 1, k - 1)}, read_all(q, {skip_corrupt = true}, 50))
    local ok, err = pcall(read_all, q)
    assert.is_false(ok)
    assert.truthy(err.message:find(q .. ": corrupted record at " .. offs[k] .. " (the length's checksum", 1, true),
      err.message)
  end)
end)

describe("TFRecord strings outlive their dataset and file", function()
  local function keep_batch(p)
    local ds = tf.data.TFRecordDataset(p)
    local x = first(ds:batch(#recs))
    ds = nil   -- luacheck: ignore
    collectgarbage()
    collectgarbage()
    return x
  end

  it("after the file is deleted", function()
    local p = path("gone.tfrecord")
    write(p, recs)
    local x = keep_batch(p)
    assert.is_true(os.remove(p))
    collectgarbage()
    same_records(recs, x:totable())
    assert.equal(#recs[1], tf.strings.length(x[1]):item())
  end)

  it("after the file is replaced by a rename (same name, other bytes)", function()
    local p, tmp = path("swapped.tfrecord"), path("swapped.tmp")
    write(p, recs)
    local x = keep_batch(p)
    local other = {}
    for i = 1, #recs do other[i] = string.rep("z", #recs[i]) end
    write(tmp, other)
    assert.is_true(os.rename(tmp, p))
    collectgarbage()
    same_records(recs, x:totable())
    same_records(other, read_all(p, nil, 500))
    -- and the old batch still reads after a second dataset over the new file is gone
    collectgarbage()
    same_records(recs, x:totable())
  end)

  it("single records kept past their iterator", function()
    local p = path("single.tfrecord")
    write(p, recs)
    local kept = {}
    for x in tf.data.TFRecordDataset(p):iter() do
      if #kept < 5 or #kept % 97 == 0 then kept[#kept + 1] = x else kept[#kept + 1] = false end
    end
    os.remove(p)
    collectgarbage()
    for i, x in ipairs(kept) do
      if x then assert.equal(recs[i], x:item()) end
    end
  end)
end)
