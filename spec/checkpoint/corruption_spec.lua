-- Corrupted checkpoint files are refused (DataLossError), never restored
-- into wrong values: luatf's files carry a format marker at a fixed place
-- and a CRC32C over every byte; duplicate JSON keys are refused in any file
-- (fuzz-repro 14 and 15; docs/checkpoints.md, "Corruption").
local support = require("support")
local tmpdir, slurp, spit = support.tmpdir, support.slurp, support.spit
local tf = require("tf")
local cjson = require("cjson")

local MAGIC = '{"__metadata__":{"luatf.format":"luatf-checkpoint-2","luatf.crc32c":"'

local function flip(s, i, mask) return s:sub(1, i - 1) .. string.char(s:byte(i) ~ mask) .. s:sub(i + 1) end

local crc32c = support.crc32c   -- an independent bit-by-bit CRC32C

-- a luatf file made here: `header` starts with MAGIC .. "00000000\"";
-- the checksum is the CRC32C of every byte but its own 8 digits
local function seal(header, data)
  header = header .. string.rep(" ", (8 - #header % 8) % 8)
  local s = string.pack("<I8", #header) .. header .. data
  local at = 8 + #MAGIC
  local crc = crc32c(s:sub(1, at) .. s:sub(at + 9))
  return s:sub(1, at) .. ("%08x"):format(crc) .. s:sub(at + 9)
end

local function plain(header, data) return string.pack("<I8", #header) .. header .. data end

describe("corrupted checkpoints", function()
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("the checksum covers every byte of the file: length, header, padding and data (independent CRC32C)", function()
    local x = tf.Variable(tf.constant({1, 2, 3}, tf.float32))
    tf.train.Checkpoint{x = x}:write(dir .. "/f")
    local s = slurp(dir .. "/f")
    assert.equal(MAGIC, s:sub(9, 8 + #MAGIC))
    assert.equal("luatf-checkpoint-2", tf.train.load_checkpoint(dir .. "/f"):metadata()["luatf.format"])
    local at = 8 + #MAGIC
    assert.equal(("%08x"):format(crc32c(s:sub(1, at) .. s:sub(at + 9))), s:sub(at + 1, at + 8))
    -- and a file sealed here by that rule is read
    local n = string.unpack("<I8", s)
    local h = s:sub(9, 8 + n):gsub(" +$", "")
    local resealed = seal(h:sub(1, #MAGIC) .. "00000000" .. h:sub(#MAGIC + 9), s:sub(9 + n))
    assert.equal(s, resealed)
  end)

  it("a key renamed by one bit is refused, nothing restored (fuzz-repro 14)", function()
    local a, c = tf.Variable(tf.constant({1.0, 2.0})), tf.Variable(tf.constant({3.0, 4.0}))
    local ck = tf.train.Checkpoint{a = a, c = c}
    ck:write(dir .. "/f")
    local s = slurp(dir .. "/f")
    local i = assert(s:find('"c/.ATTRIBUTES/VARIABLE_VALUE"', 1, true))
    spit(dir .. "/f", flip(s, i + 1, 2))   -- "c/..." -> "a/...": a duplicate key
    a:assign(tf.constant({0.0, 0.0}))
    c:assign(tf.constant({0.0, 0.0}))
    assert.tf_error("DataLossError", "checkpoint: '" .. dir .. "/f' is corrupted: checksum mismatch",
      function() ck:restore(dir .. "/f") end)
    assert.same({0, 0}, a:numpy())
    assert.same({0, 0}, c:numpy())
  end)

  it("a renamed checksum key cannot turn the check off (fuzz-repro 15)", function()
    local a = tf.Variable(tf.constant({1.0, 2.0, 3.0, 4.0}))
    local ck = tf.train.Checkpoint{a = a}
    ck:write(dir .. "/f")
    local s = slurp(dir .. "/f")
    local i = assert(s:find("luatf.crc32c", 1, true))
    s = s:sub(1, i + 5) .. "b" .. s:sub(i + 7)              -- "luatf.crc32c" -> "luatf.brc32c"
    s = flip(s, 8 + string.unpack("<I8", s) + 4, 0x40)        -- a's first float: 1.0 -> 1.5
    spit(dir .. "/f", s)
    a:assign(tf.zeros({4}))
    assert.tf_error("DataLossError",
      "checkpoint: '" .. dir .. "/f' is corrupted: its first header bytes are 1 bits away from luatf's format marker",
      function() ck:restore(dir .. "/f") end)
    assert.same({0, 0, 0, 0}, a:numpy())
  end)

  -- (every bit of every byte: core/tests/test_checkpoint.c at the C level, and tools/fuzz/ckpt_corrupt.lua)
  it("a bit flip in every byte and every truncation of a small checkpoint is a DataLossError that changes nothing", function()
    local x = tf.Variable(tf.constant({1.5, -2}, tf.float32))
    local n = tf.Variable(tf.constant(7, tf.int64))
    local ck = tf.train.Checkpoint{x = x, n = n}
    ck:write(dir .. "/f")
    local good = slurp(dir .. "/f")
    local kinds, wrong = {}, 0
    local function try(bytes)
      x:assign(tf.constant({0, 0}, tf.float32))
      n:assign(tf.constant(0, tf.int64))
      spit(dir .. "/g", bytes)
      local ok, err = pcall(ck.restore, ck, dir .. "/g")
      local kind = ok and "restored" or err.kind
      kinds[kind] = (kinds[kind] or 0) + 1
      if x:numpy()[1] ~= 0 or x:numpy()[2] ~= 0 or n:item() ~= 0 then wrong = wrong + 1 end
    end
    for i = 1, #good do try(flip(good, i, 1 << (i % 8))) end
    for len = 0, #good - 1 do try(good:sub(1, len)) end
    assert.same({DataLossError = 2 * #good}, kinds)
    assert.equal(0, wrong)
    try(good)
    assert.same({1.5, -2}, x:numpy())
    assert.equal(7, n:item())
  end)

  it("a header whose marker is damaged is refused, whatever else it holds", function()
    local x = tf.Variable(tf.constant({1, 2}, tf.float32))
    tf.train.Checkpoint{x = x}:write(dir .. "/f")
    local s = slurp(dir .. "/f")
    -- zeroing the whole marker is far from it, and then NUL bytes are not JSON
    spit(dir .. "/g", s:sub(1, 8) .. string.rep("\0", #MAGIC) .. s:sub(9 + #MAGIC))
    assert.tf_error("DataLossError", "not a JSON object", function() tf.train.load_checkpoint(dir .. "/g") end)
    -- a checksum digit that is not lowercase hex
    spit(dir .. "/g", s:sub(1, 8 + #MAGIC) .. "Z" .. s:sub(10 + #MAGIC))
    assert.tf_error("DataLossError", "its checksum is not 8 lowercase hex digits", function() tf.train.load_checkpoint(dir .. "/g") end)
    -- the header length flipped: the marker is still found at its place, the checksum differs
    spit(dir .. "/g", flip(s, 1, 1))
    assert.tf_error("DataLossError", "checksum mismatch", function() tf.train.load_checkpoint(dir .. "/g") end)
  end)

  describe("duplicate JSON keys", function()
    local data = string.pack("<ffff", 1, 2, 3, 4)
    it("are refused in a plain safetensors file, at any level, escapes decoded", function()
      spit(dir .. "/p", plain('{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},' ..
        '"x":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}', data))
      assert.tf_error("DataLossError", "checkpoint '" .. dir .. "/p': the header repeats the key 'x' (the file is corrupted)",
        function() tf.train.load_checkpoint(dir .. "/p") end)
      spit(dir .. "/p", plain('{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},' ..
        '"\\u0078":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}', data))
      assert.tf_error("DataLossError", "the header repeats the key 'x'", function() tf.train.load_checkpoint(dir .. "/p") end)
      spit(dir .. "/p", plain('{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"shape":[1]}}', data))
      assert.tf_error("DataLossError", "the header repeats the key 'shape'", function() tf.train.load_checkpoint(dir .. "/p") end)
      -- distinct keys that differ only after a NUL are distinct
      spit(dir .. "/p", plain('{"x\\u0000a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},' ..
        '"x\\u0000b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}', data))
      assert.equal(2, #tf.train.load_checkpoint(dir .. "/p"):list_variables())
    end)

    it("are refused in the JSON a luatf file keeps in its metadata (luatf.aliases)", function()
      local meta = '00000000","luatf.aliases":"{\\"b\\":\\"x\\",\\"b\\":\\"y\\"}","luatf.variables":"{}"}'
      local entry = ',"x/.ATTRIBUTES/VARIABLE_VALUE":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}'
      spit(dir .. "/s", seal(MAGIC .. meta .. entry, data))
      assert.tf_error("DataLossError", "checkpoint '" .. dir .. "/s': luatf.aliases repeats the key 'b'",
        function() tf.train.load_checkpoint(dir .. "/s") end)
      -- the same file without the repeat is read: the sealing above is the format's
      spit(dir .. "/s", seal(MAGIC .. meta:gsub('\\"b\\":\\"y\\"', '\\"c\\":\\"y\\"') .. entry, data))
      assert.same({1, 2, 3, 4}, tf.train.load_checkpoint(dir .. "/s"):get_tensor("x/.ATTRIBUTES/VARIABLE_VALUE"):numpy())
    end)
  end)

  it("a file with luatf metadata but no valid marker is refused, not read as a plain file", function()
    spit(dir .. "/p", plain('{"__metadata__":{"luatf.variables":"{}"},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}',
      string.pack("<f", 1)))
    assert.tf_error("DataLossError", "has luatf metadata ('luatf.variables') but no valid luatf format marker",
      function() tf.train.load_checkpoint(dir .. "/p") end)
    -- a plain file with other metadata is read, unchecked
    spit(dir .. "/p", plain('{"__metadata__":{"format":"pt"},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}',
      string.pack("<f", 1)))
    assert.same({1}, tf.train.load_checkpoint(dir .. "/p"):get_tensor("x"):numpy())
  end)

  describe("files of the previous format (luatf-checkpoint-1)", function()
    -- written as luatf before this format did: sorted metadata, the CRC32C of the data only
    local function v1(data_values)
      local data = string.pack("<ff", 1, 2) .. string.pack("<i8", 5)
      -- keys in sorted order, as that writer wrote them (cjson.encode's order
      -- follows the table's hash order, which changes from run to run: with
      -- luatf.format first the header would sit 2 bits from today's marker)
      local h = '{"__metadata__":{"luatf.crc32c":"' .. ("%08x"):format(crc32c(data)) .. '",' ..
        '"luatf.format":"luatf-checkpoint-1",' ..
        '"luatf.variables":' .. cjson.encode('{"x/.ATTRIBUTES/VARIABLE_VALUE":{"name":"x","trainable":true}}') .. '},' ..
        '"n/.ATTRIBUTES/VARIABLE_VALUE":{"dtype":"I64","shape":[],"data_offsets":[8,16]},' ..
        '"x/.ATTRIBUTES/VARIABLE_VALUE":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
      h = h .. string.rep(" ", (8 - #h % 8) % 8)
      return string.pack("<I8", #h) .. h .. (data_values or data)
    end

    it("are refused with the way to read them", function()
      spit(dir .. "/old", v1())
      local x = tf.Variable(tf.constant({0, 0}, tf.float32))
      assert.tf_error("FailedPreconditionError", "checkpoint '" .. dir .. "/old': written by an older luatf " ..
        "(format luatf-checkpoint-1, whose checksum does not cover the header); read it once with " ..
        "tf.train.upgrade_checkpoint(path, new_path)", function() tf.train.Checkpoint{x = x}:restore(dir .. "/old") end)
      assert.same({0, 0}, x:numpy())
    end)

    it("tf.train.upgrade_checkpoint rewrites them in the current format (their data checksum checked)", function()
      spit(dir .. "/old", v1())
      assert.equal(dir .. "/new", tf.train.upgrade_checkpoint(dir .. "/old", dir .. "/new"))
      assert.equal(MAGIC, slurp(dir .. "/new"):sub(9, 8 + #MAGIC))
      local x = tf.Variable(tf.constant({0, 0}, tf.float32))
      local n = tf.Variable(tf.constant(0, tf.int64))
      local st = tf.train.Checkpoint{x = x, n = n}:restore(dir .. "/new")
      assert.same({"n/.ATTRIBUTES/VARIABLE_VALUE", "x/.ATTRIBUTES/VARIABLE_VALUE"}, st:report_table().matched)
      -- the variables' names and flags come along
      assert.equal('{"n/.ATTRIBUTES/VARIABLE_VALUE":{"name":"n/.ATTRIBUTES/VARIABLE_VALUE","trainable":false},' ..
        '"x/.ATTRIBUTES/VARIABLE_VALUE":{"name":"x","trainable":true}}',
        tf.train.load_checkpoint(dir .. "/new"):metadata()["luatf.variables"])
      assert.same({1, 2}, x:numpy())
      assert.equal(5, n:item())
      spit(dir .. "/old", v1(string.pack("<ff", 1, 2.5) .. string.pack("<i8", 5)))
      assert.tf_error("DataLossError", "checksum mismatch", function() tf.train.upgrade_checkpoint(dir .. "/old", dir .. "/n2") end)
      assert.is_nil(io.open(dir .. "/n2", "rb"))
    end)
  end)
end)
