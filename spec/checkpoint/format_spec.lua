-- The files are standard safetensors (an independent Python reader and
-- writer, json + struct only), and bad files are refused with clear errors,
-- never a crash and never a half-restored model.
local support = require("support")
local tmpdir, slurp, spit = support.tmpdir, support.slurp, support.spit
local tf = require("tf")
local cjson = require("cjson")

local PY = "env -u LD_PRELOAD /usr/bin/python3"   -- not under the sanitizers the specs may run with
local TOOL = "spec/checkpoint/st_tool.py"

local function u64(n) return string.pack("<I8", n) end

-- a file made of a header table (encoded here) and raw data
local function make(path, header, data, header_len)
  local h = cjson.encode(header)
  spit(path, u64(header_len or #h) .. h .. data)
end

describe("CRC32C", function()
  local ref = support.crc32c   -- an independent bit-by-bit CRC32C

  it("matches the standard check value and a bitwise reference on every path (short, 3-stream, tails)", function()
    assert.equal(0xe3069283, tf.core.crc32c("123456789"))
    local t, x = {}, 7
    for i = 1, 40000 do
      x = (x * 1103515245 + 12345) % 2147483648
      t[i] = string.char(x % 256)
    end
    local s = table.concat(t)
    for _, n in ipairs({0, 1, 7, 8, 33, 3 * 4096 - 1, 3 * 4096, 3 * 4096 + 13, 40000}) do
      local a = s:sub(1, n)
      assert.equal(ref(a), tf.core.crc32c(a), n)
      -- continued from a previous value: the same as in one go
      assert.equal(ref(a), tf.core.crc32c(a:sub(n // 2 + 1), tf.core.crc32c(a:sub(1, n // 2))), n)
    end
  end)
end)

describe("checkpoint files", function()
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("are read back by an independent safetensors reader (python3, json + struct)", function()
    local k = tf.Variable(tf.constant({{0.5, -1.25, 3}, {1e-3, 7, -8}}, tf.float32))
    local b = tf.Variable(tf.constant({0.1, 0.2}, tf.float64))
    local step = tf.Variable(tf.constant(9007199254740993, tf.int64))
    local flags = tf.Variable(tf.constant({true, false}))
    local ids = tf.Variable(tf.constant({{-1, 2}}, tf.int32))
    local bytes = tf.Variable(tf.constant({200, 1, 0}, tf.uint8))
    tf.train.Checkpoint{net = {kernel = k, bias = b}, step = step, flags = flags, ids = ids, bytes = bytes}:write(dir .. "/f")
    local p = io.popen(PY .. " " .. TOOL .. " read " .. dir .. "/f")
    local out = p:read("a")
    assert.truthy(p:close())
    local got = cjson.decode(out)
    assert.equal(0, (8 + got.__header_len__) % 8)             -- data 8-byte aligned
    local e = got["net/kernel/.ATTRIBUTES/VARIABLE_VALUE"]
    assert.equal("F32", e.dtype)
    assert.same({2, 3}, e.shape)
    assert.same({0.5, -1.25, 3, tf.constant(1e-3, tf.float32):item(), 7, -8}, e.values)
    assert.same({0.1, 0.2}, got["net/bias/.ATTRIBUTES/VARIABLE_VALUE"].values)
    assert.equal("I64", got["step/.ATTRIBUTES/VARIABLE_VALUE"].dtype)
    assert.same({}, got["step/.ATTRIBUTES/VARIABLE_VALUE"].shape)
    assert.same({true, false}, got["flags/.ATTRIBUTES/VARIABLE_VALUE"].values)
    assert.same({-1, 2}, got["ids/.ATTRIBUTES/VARIABLE_VALUE"].values)
    assert.same({200, 1, 0}, got["bytes/.ATTRIBUTES/VARIABLE_VALUE"].values)
    for key, v in pairs(got) do
      if type(v) == "table" and v.begin then assert.equal(0, v.begin % 8, key) end
    end
    local meta = got.__metadata__
    assert.equal("luatf-checkpoint-2", meta["luatf.format"])
    -- the checksum in the metadata is the CRC32C of every other byte of the file
    local raw = slurp(dir .. "/f")
    local at = 8 + #tf.core.ckpt_magic()
    assert.equal(("%08x"):format(tf.core.crc32c(raw:sub(at + 9), tf.core.crc32c(raw:sub(1, at)))), meta["luatf.crc32c"])
  end)

  it("are deterministic: the same values give the same bytes, whatever the table order", function()
    local function build(order)
      local t = {}
      for _, k in ipairs(order) do t[k] = tf.Variable(tf.constant({#k, 2 * #k}, tf.float32), {name = k}) end
      return tf.train.Checkpoint{net = t}
    end
    build({"alpha", "be", "c", "delta"}):write(dir .. "/one")
    build({"delta", "c", "be", "alpha"}):write(dir .. "/two")
    assert.equal(slurp(dir .. "/one"), slurp(dir .. "/two"))
    local r = tf.train.load_checkpoint(dir .. "/one")
    assert.same({2}, r:get_variable_to_shape_map()["net/be/.ATTRIBUTES/VARIABLE_VALUE"])
    assert.equal(tf.float32, r:get_variable_to_dtype_map()["net/be/.ATTRIBUTES/VARIABLE_VALUE"])
    assert.equal(tf.int64, r:get_variable_to_dtype_map()["save_counter/.ATTRIBUTES/VARIABLE_VALUE"])
    assert.is_true(r:has_tensor("net/c/.ATTRIBUTES/VARIABLE_VALUE"))
    assert.is_false(r:has_tensor("net/c"))
  end)

  it("loads a safetensors file luatf did not write (no checksum, no alignment)", function()
    assert.truthy(os.execute(PY .. " " .. TOOL .. " write " .. dir .. "/py.safetensors"))
    local r = tf.train.load_checkpoint(dir .. "/py.safetensors")
    assert.same({{"dense/bias", {3}}, {"dense/kernel", {2, 3}}, {"ids", {2, 2}}, {"mask", {4}}, {"step", {}}},
      r:list_variables())
    assert.same({{0.5, -1.25, 2.0}, {3.5, tf.constant(1e-3, tf.float32):item(), -7.0}}, r:get_tensor("dense/kernel"):numpy())
    assert.equal(tf.float64, r:get_tensor("dense/bias").dtype)
    assert.same({0.1, 0.2, 0.3}, r:get_tensor("dense/bias"):numpy())
    assert.equal(42, r:get_tensor("step"):item())
    assert.same({true, false, true, true}, r:get_tensor("mask"):numpy())
    assert.same({{1, -2}, {3, -4}}, r:get_tensor("ids"):numpy())
    assert.equal("st_tool.py", r:metadata().written_by)
    assert.tf_error("NotFoundError", "key 'nope' not found", function() r:get_tensor("nope") end)
    -- and restores variables from it: a foreign file's bare keys name the paths
    local step = tf.Variable(tf.constant(0, tf.int64))
    local kernel = tf.Variable(tf.zeros({2, 3}))
    local st = tf.core.internal.checkpoint.load_weights({step = step, dense = {kernel = kernel}}, dir .. "/py.safetensors")
    assert.equal(42, step:item())
    assert.equal(-7, kernel:numpy()[2][3])
    assert.same({"dense/kernel", "step"}, st:report_table().matched)
  end)

  describe("refuses bad input", function()
    local good, x, y
    before_each(function()
      x = tf.Variable(tf.constant({1, 2, 3, 4}, tf.float32))
      y = tf.Variable(tf.constant({5, 6}, tf.float64))
      tf.train.Checkpoint{x = x, y = y}:write(dir .. "/good")
      good = slurp(dir .. "/good")
      x:assign(tf.constant({0, 0, 0, 0}, tf.float32))
      y:assign(tf.constant({0, 0}, tf.float64))
    end)

    local function restore(name)
      return tf.train.Checkpoint{x = x, y = y}:restore(dir .. "/" .. name)
    end
    local function untouched()
      assert.same({0, 0, 0, 0}, x:numpy())
      assert.same({0, 0}, y:numpy())
    end

    it("a missing file and a directory without a state file (NotFoundError)", function()
      assert.tf_error("NotFoundError", "cannot open '" .. dir .. "/absent'", function() restore("absent") end)
      assert.is_nil(tf.train.latest_checkpoint(dir))
      assert.tf_error("NotFoundError", "is a directory", function() tf.train.load_checkpoint(dir) end)
      assert.tf_error("NotFoundError", "is a directory", function() tf.train.Checkpoint{x = x}:restore(dir) end)
    end)

    it("truncated files (DataLossError)", function()
      for _, n in ipairs({0, 5, 8, 20, #good - 1}) do
        spit(dir .. "/t", good:sub(1, n))
        assert.tf_error("DataLossError", "", function() restore("t") end)
        untouched()
      end
      spit(dir .. "/t", good:sub(1, 20))
      assert.tf_error("DataLossError", "truncated", function() restore("t") end)
      spit(dir .. "/t", good:sub(1, #good - 1))
      assert.tf_error("DataLossError", "checksum mismatch", function() restore("t") end)
    end)

    it("a flipped data byte (checksum mismatch, DataLossError)", function()
      local n = string.unpack("<I8", good)
      for _, at in ipairs({9 + n, 9 + n + 5, #good}) do
        local b = good:sub(1, at - 1) .. string.char(good:byte(at) ~ 0x10) .. good:sub(at + 1)
        spit(dir .. "/flip", b)
        assert.tf_error("DataLossError", "checksum mismatch", function() restore("flip") end)
        untouched()
      end
    end)

    it("a huge header length (DataLossError)", function()
      spit(dir .. "/huge", u64(1 << 62) .. good:sub(9))
      assert.tf_error("DataLossError", "over the limit", function() restore("huge") end)
      spit(dir .. "/huge", u64(0xffffffffffffffff) .. good:sub(9))
      assert.tf_error("DataLossError", "over the limit", function() restore("huge") end)
      untouched()
    end)

    it("a header that is not JSON, or not the format's (DataLossError)", function()
      spit(dir .. "/j", u64(5) .. "{nope")
      assert.tf_error("DataLossError", "not a JSON object", function() restore("j") end)
      spit(dir .. "/j", u64(2) .. "[]")
      assert.tf_error("DataLossError", "", function() restore("j") end)
      make(dir .. "/j", {x = {dtype = "F32", shape = {4}}}, string.rep("\0", 16))
      assert.tf_error("DataLossError", "two data_offsets", function() restore("j") end)
      make(dir .. "/j", {x = {dtype = "F32", shape = {-4}, data_offsets = {0, 16}}}, string.rep("\0", 16))
      assert.tf_error("DataLossError", "not a non-negative integer", function() restore("j") end)
      make(dir .. "/j", {x = {dtype = "F32", shape = {4.5}, data_offsets = {0, 16}}}, string.rep("\0", 16))
      assert.tf_error("DataLossError", "not a non-negative integer", function() restore("j") end)
      make(dir .. "/j", {__metadata__ = {a = 1}}, "")
      assert.tf_error("DataLossError", "must be strings", function() restore("j") end)
      untouched()
    end)

    it("offsets outside the data, of the wrong size, or overlapping (DataLossError)", function()
      local data = string.rep("\1", 24)
      make(dir .. "/o", {x = {dtype = "F32", shape = {4}, data_offsets = {16, 32}}}, data)
      assert.tf_error("DataLossError", "lie outside the 24 bytes of data", function() restore("o") end)
      make(dir .. "/o", {x = {dtype = "F32", shape = {4}, data_offsets = {0, 12}}}, data)
      assert.tf_error("DataLossError", "span 12 bytes but its dtype and shape need 16", function() restore("o") end)
      make(dir .. "/o", {x = {dtype = "F32", shape = {4}, data_offsets = {0, 16}},
                         y = {dtype = "F64", shape = {2}, data_offsets = {8, 24}}}, data)
      assert.tf_error("DataLossError", "overlap", function() restore("o") end)
      make(dir .. "/o", {x = {dtype = "F32", shape = {4}, data_offsets = {20, 4}}}, data)
      assert.tf_error("DataLossError", "lie outside", function() restore("o") end)
      make(dir .. "/o", {x = {dtype = "F32", shape = {1 << 40, 1 << 40}, data_offsets = {0, 16}}}, data)
      assert.tf_error("DataLossError", "", function() restore("o") end)
      untouched()
    end)

    it("unknown dtypes (InvalidArgumentError); known but unsupported ones only when used", function()
      make(dir .. "/d", {x = {dtype = "F33", shape = {4}, data_offsets = {0, 16}}}, string.rep("\0", 16))
      assert.tf_error("InvalidArgumentError", "unknown dtype 'F33'", function() restore("d") end)
      make(dir .. "/d", {h = {dtype = "I16", shape = {2}, data_offsets = {0, 4}}}, string.rep("\0", 8))
      local r = tf.train.load_checkpoint(dir .. "/d")
      assert.same({{"h", {2}}}, r:list_variables())
      assert.tf_error("InvalidArgumentError", "dtype I16, which luatf does not support", function() r:get_tensor("h") end)
      untouched()
    end)

    it("a corrupted string tensor (DataLossError)", function()
      local s = tf.Variable(tf.constant({"ab", "c"}))
      tf.train.Checkpoint{s = s}:write(dir .. "/s")
      local raw = slurp(dir .. "/s")
      -- rewrite the string's shape in the metadata: 3 strings cannot fit 2
      -- lengths (and seal the file again: its checksum covers the header)
      local old = '{\\"s/.ATTRIBUTES/VARIABLE_VALUE\\":[2]}'
      local i, j = raw:find(old, 1, true)
      assert.truthy(i)
      raw = raw:sub(1, i - 1) .. old:gsub("%[2%]", "[3]") .. raw:sub(j + 1)
      local at = 8 + #tf.core.ckpt_magic()
      local crc = tf.core.crc32c(raw:sub(at + 9), tf.core.crc32c(raw:sub(1, at)))
      spit(dir .. "/s2", raw:sub(1, at) .. ("%08x"):format(crc) .. raw:sub(at + 9))
      local r = tf.train.load_checkpoint(dir .. "/s2")
      assert.tf_error("DataLossError", "string", function() r:get_tensor("s/.ATTRIBUTES/VARIABLE_VALUE") end)
      local s3 = tf.Variable(tf.constant({"x", "y", "z"}))
      assert.tf_error("DataLossError", "string", function() tf.train.Checkpoint{s = s3}:restore(dir .. "/s2") end)
      assert.same({"x", "y", "z"}, s3:numpy())
    end)
  end)
end)
