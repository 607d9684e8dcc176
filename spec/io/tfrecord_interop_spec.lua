-- TFRecord + tf.train.Example interop with an independent implementation:
-- spec/io/tfrecord_interop.py (Debian's python3-protobuf against a
-- descriptor set compiled by protoc-c from proto/*.proto, its own CRC32C
-- and framing, Python's gzip/zlib) reads luatf's files and compares the
-- messages; luatf reads the files that script writes.
local tf = require("tf")
if not tf.io or not tf.io.TFRecordWriter then require("tf.io_tfrecord")(tf) end
local cjson = require("cjson")

local PY = "/usr/bin/python3"
local SCRIPT = "spec/io/tfrecord_interop.py"
local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
local desc = dir .. "/example.desc"

local function sh(cmd)
  -- the helpers are not under test: no sanitizer preloaded into them (ASan runs of this spec)
  local p = assert(io.popen("env -u LD_PRELOAD " .. cmd .. " 2>&1"))
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

local function hex(s) return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end)) end

-- the examples luatf writes, and the JSON form the script prints for them
local function luatf_examples()
  local exs, want = {}, {}
  for i = 1, 6 do
    local t = {
      idx = {int64_list = {i, -i * 3000000000, math.mininteger}},
      vals = {float_list = {i * 0.5, -0.125, 2.0 ^ 40}},   -- float32-exact
      blob = {bytes_list = {"lua" .. i, "\0\1\255"}},
    }
    if i % 3 == 0 then t.none = {bytes_list = {}} end
    exs[i] = tf.train.Example{features = t}
    local w = {}
    for k, f in pairs(t) do
      local kind, vs = next(f)
      local c = {}
      for j, v in ipairs(vs) do c[j] = kind == "bytes_list" and hex(v) or v end
      w[k] = {[kind] = c}
    end
    want[i] = w
  end
  return exs, want
end

local function same_json(got, want)
  -- cjson reads every number as a float or an integer: compare as numbers
  assert.equal(#want, #got)
  for i = 1, #want do
    for k, f in pairs(want[i]) do
      local kind, vs = next(f)
      assert.is_table(got[i][k], "record " .. i .. " lacks " .. k)
      local gv = got[i][k][kind]
      assert.is_table(gv, "record " .. i .. " feature " .. k .. " is not a " .. kind)
      assert.equal(#vs, #gv)
      for j = 1, #vs do
        if type(vs[j]) == "number" then assert.is_true(vs[j] == gv[j], k .. "[" .. j .. "]: " .. tostring(vs[j]) .. " vs " .. tostring(gv[j]))
        else assert.equal(vs[j], gv[j]) end
      end
    end
    local n = 0
    for _ in pairs(got[i]) do n = n + 1 end
    local m = 0
    for _ in pairs(want[i]) do m = m + 1 end
    assert.equal(m, n)
  end
end

describe("TFRecord interop with python3-protobuf", function()
  local have = sh(PY .. " -c 'import google.protobuf'")
  local ok_desc = have and sh("protoc-c --proto_path=proto --descriptor_set_out=" .. desc .. " example.proto feature.proto")
  if not ok_desc then
    pending("needs /usr/bin/python3 with python3-protobuf and protoc-c")
    return
  end

  for _, c in ipairs({"", "GZIP", "ZLIB"}) do
    it("Python decodes luatf's Examples exactly (compression '" .. c .. "')", function()
      local path = dir .. "/luatf" .. c .. ".tfrecord"
      local exs, want = luatf_examples()
      do
        local w <close> = tf.io.TFRecordWriter(path, c)
        for _, e in ipairs(exs) do w:write(e) end
      end
      local ok, out = sh(PY .. " " .. SCRIPT .. " read " .. desc .. " " .. path .. " '" .. c .. "'")
      assert.is_true(ok, out)
      same_json(cjson.decode(out), want)
    end)

    it("luatf reads the Python script's file (compression '" .. c .. "')", function()
      local path = dir .. "/py" .. c .. ".tfrecord"
      local ok, out = sh(PY .. " " .. SCRIPT .. " write " .. desc .. " " .. path .. " '" .. c .. "'")
      assert.is_true(ok, out)
      local got = {}
      for rec in tf.data.TFRecordDataset(path, {compression_type = c}):iter() do
        got[#got + 1] = tf.train.Example.FromString(rec):to_table()
      end
      assert.equal(5, #got)
      for i = 0, 4 do
        local g = got[i + 1]
        assert.same({i, -i * 1000000007, 1 << 62}, g.id.int64_list)
        assert.same({i * 0.25, -1.5}, g.score.float_list)
        assert.same({"py" .. i, "\0\255"}, g.name.bytes_list)
        if i % 2 == 0 then assert.same({float_list = {}}, g.empty) else assert.is_nil(g.empty) end
      end
      -- and through parse_example in a pipeline
      local ds = tf.data.TFRecordDataset(path, {compression_type = c}):batch(5):map(function(x)
        local p = tf.io.parse_example(x, {id = tf.io.FixedLenFeature({3}, tf.int64),
                                          name = tf.io.VarLenFeature(tf.string)})
        return p.id, p.name.values
      end)
      for id, names in ds:iter() do
        assert.same({0, 0, 1 << 62}, id:totable()[1])
        assert.same({-4000000028}, {id:totable()[5][2]})
        assert.equal("py3", names:totable()[7])
      end
    end)
  end
end)
