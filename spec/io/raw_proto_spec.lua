-- tf.io.decode_raw, decode_compressed (zlib) and serialize_tensor /
-- parse_tensor (TensorFlow's TensorProto). References: string.pack for raw
-- bytes, Python's zlib/gzip for compressed data, python3-protobuf over
-- proto/tensor.proto for TensorProto bytes (spec/io/tensor_proto.py).
local tf = require("tf")
local cjson = require("cjson")
local support = require("support")

local function run(cmd)
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  assert(p:close(), "command failed: " .. cmd)
  return out
end

describe("tf.io.decode_raw", function()
  it("reinterprets bytes, little-endian by default", function()
    local s = string.pack("<i4i4i4", 1, -2, 300)
    local x = tf.io.decode_raw(s, tf.int32)
    assert.same({3}, x.shape:as_list())
    assert.same({1, -2, 300}, x:totable())
    local b = string.pack(">i4i4i4", 1, -2, 300)
    assert.same({1, -2, 300}, tf.io.decode_raw(b, tf.int32, {little_endian = false}):totable())
    local f = tf.io.decode_raw({string.pack("<ff", 1.5, -2.25), string.pack("<ff", 3, 4)}, "float32")
    assert.same({{1.5, -2.25}, {3, 4}}, f:totable())
    assert.same({104, 105}, tf.io.decode_raw("hi", tf.uint8):totable())
    local d = tf.io.decode_raw(string.pack("<d", math.pi), tf.float64)
    assert.equal(math.pi, d:totable()[1])
    local i64 = tf.io.decode_raw(string.pack(">i8", -5), tf.int64, {little_endian = false})
    assert.same({-5}, i64:totable())
  end)

  it("pads to fixed_length with zeros", function()
    local x = tf.io.decode_raw({"\1\0\2\0", "\3\0"}, tf.uint8, {fixed_length = 4})
    assert.same({{1, 0, 2, 0}, {3, 0, 0, 0}}, x:totable())
    local y = tf.io.decode_raw({string.pack("<i4", 7), ""}, tf.int32, {fixed_length = 8})
    assert.same({{7, 0}, {0, 0}}, y:totable())
  end)

  it("refuses lengths that do not fit", function()
    assert.tf_error("InvalidArgumentError", "decode_raw: input of 3 bytes is not a multiple of the size of int32 (4)",
                    tf.io.decode_raw, "abc", tf.int32)
    assert.tf_error("InvalidArgumentError", "decode_raw: all inputs must have the same length: element 2 has 8 bytes",
                    tf.io.decode_raw, {"abcd", "abcdefgh"}, tf.int32)
    assert.tf_error("InvalidArgumentError", "decode_raw: 'fixed_length' 6 is not a multiple of the size of int32 (4)",
                    tf.io.decode_raw, "abcd", tf.int32, {fixed_length = 6})
    -- the result adds a dimension: rank 8 input has no room (fuzz_ops found the overflow)
    local deep = tf.reshape(tf.constant({"abcd"}), {1, 1, 1, 1, 1, 1, 1, 1})
    assert.tf_error("InvalidArgumentError", "decode_raw: 'input_bytes' has rank 8; the result's rank would exceed 8",
                    tf.io.decode_raw, deep, tf.uint8)
  end)

  it("works in tf.fn", function()
    local f = tf.fn(function(s) return tf.io.decode_raw(s, tf.int32) end)
    assert.same({9, 10}, f(tf.constant(string.pack("<i4i4", 9, 10))):totable())
  end)
end)

describe("tf.io.decode_compressed", function()
  local dir
  before_each(function() dir = support.tmpdir() end)
  after_each(function() os.execute("rm -rf " .. support.shell_quote(dir)) end)

  it("inflates what Python's zlib and gzip wrote", function()
    local text = ("luatf reads compressed strings. "):rep(50) .. "\0\1\2"
    support.spit(dir .. "/plain", text)
    run("env -u LD_PRELOAD /usr/bin/python3 -c \"import zlib,gzip,sys; d=open(sys.argv[1]+'/plain','rb').read(); "
        .. "open(sys.argv[1]+'/z','wb').write(zlib.compress(d)); "
        .. "open(sys.argv[1]+'/g','wb').write(gzip.compress(d[:100]) + gzip.compress(d[100:]))\" " .. dir)
    local z, g = support.slurp(dir .. "/z"), support.slurp(dir .. "/g")
    assert.equal(text, tf.io.decode_compressed(z, "ZLIB"):item())
    assert.equal(text, tf.io.decode_compressed(g, {compression_type = "GZIP"}):item())   -- two gzip members
    assert.equal("as is", tf.io.decode_compressed("as is"):item())
    local both = tf.io.decode_compressed(tf.constant({z, z}), "ZLIB")
    assert.same({2}, both.shape:as_list())
    assert.equal(text, both:totable()[2])
    assert.tf_error("InvalidArgumentError", "decode_compressed: invalid ZLIB data: ", tf.io.decode_compressed,
                    g, "ZLIB")
    assert.tf_error("InvalidArgumentError", "decode_compressed: invalid GZIP data: truncated stream",
                    tf.io.decode_compressed, g:sub(1, 30), "GZIP")
    assert.tf_error("ValueError", "decode_compressed: 'compression_type' must be \"\", \"ZLIB\" or \"GZIP\", got BZ2",
                    tf.io.decode_compressed, z, "BZ2")
  end)
end)

describe("tf.io.serialize_tensor / parse_tensor", function()
  local dir, desc
  setup(function()
    dir = support.tmpdir()
    desc = dir .. "/tensor.desc"
    run("env -u LD_PRELOAD protoc-c --proto_path=proto --descriptor_set_out=" .. desc .. " --include_imports proto/tensor.proto")
  end)
  teardown(function() os.execute("rm -rf " .. support.shell_quote(dir)) end)

  local function py_decode(bytes)
    support.spit(dir .. "/t.pb", bytes)
    return cjson.decode(run("env -u LD_PRELOAD /usr/bin/python3 spec/io/tensor_proto.py " .. desc .. " decode " .. dir .. "/t.pb"))
  end

  local function py_encode(json)
    run("env -u LD_PRELOAD /usr/bin/python3 spec/io/tensor_proto.py " .. desc .. " encode " .. dir .. "/p.pb " ..
        support.shell_quote(json))
    return support.slurp(dir .. "/p.pb")
  end

  it("writes TensorProto bytes that protobuf reads (TensorFlow's dtypes and layout)", function()
    local cases = {
      {tf.constant({{1.5, -2}, {3, 4}}), 1, {2, 2}, {1.5, -2, 3, 4}},
      {tf.constant({1, 2, 3}, tf.int32), 3, {3}, {1, 2, 3}},
      {tf.constant({{7}}, tf.int64), 9, {1, 1}, {7}},
      {tf.constant({0.25}, tf.float64), 2, {1}, {0.25}},
      {tf.constant({true, false}), 10, {2}, {1, 0}},
      {tf.constant({5, 255}, tf.uint8), 4, {2}, {5, 255}},
    }
    for _, c in ipairs(cases) do
      local s = tf.io.serialize_tensor(c[1])
      assert.equal("string", s.dtype.name)
      local got = py_decode(s:item())
      assert.equal(c[2], got.dtype)
      assert.same(c[3], got.shape)
      local content = {}
      for i, v in ipairs(got.content) do content[i] = v == true and 1 or v == false and 0 or v end
      assert.same(c[4], content)
      local back = tf.io.parse_tensor(s, c[1].dtype)
      assert.same(c[1]:totable(), back:totable())
      assert.same(c[3], back.shape:as_list())
    end
    local sc = py_decode(tf.io.serialize_tensor(tf.constant(2.5)):item())
    assert.same({}, sc.shape)
    local st = tf.constant({{"a", ""}, {"b\0c", "d"}})
    local got = py_decode(tf.io.serialize_tensor(st):item())
    assert.equal(7, got.dtype)
    assert.same({"a", "", "b\0c", "d"}, got.string_val)
    assert.same(st:totable(), tf.io.parse_tensor(tf.io.serialize_tensor(st), tf.string):totable())
  end)

  it("reads protos written by protobuf, value lists included", function()
    local x = tf.io.parse_tensor(py_encode('{"dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": 2}, {"size": 3}]},'
                                           .. ' "floatVal": [1.5, 2]}'), tf.float32)
    assert.same({{1.5, 2, 2}, {2, 2, 2}}, x:totable())   -- the last value repeats, as TensorFlow
    local i = tf.io.parse_tensor(py_encode('{"dtype": "DT_INT64", "tensorShape": {"dim": [{"size": 2}]},'
                                           .. ' "int64Val": ["-3", "4"]}'), tf.int64)
    assert.same({-3, 4}, i:totable())
    local z = tf.io.parse_tensor(py_encode('{"dtype": "DT_INT32", "tensorShape": {"dim": [{"size": 3}]}}'), tf.int32)
    assert.same({0, 0, 0}, z:totable())
    local s = tf.io.parse_tensor(py_encode('{"dtype": "DT_STRING", "tensorShape": {}, "stringVal": ["aGk="]}'),
                                 tf.string)
    assert.equal("hi", s:item())
    local e = tf.io.parse_tensor(py_encode('{"dtype": "DT_STRING", "tensorShape": {"dim": [{"size": 2}]}}'), tf.string)
    assert.same({"", ""}, e:totable())   -- no values: empty strings (found by fuzz_parse_tensor)
  end)

  it("refuses bad bytes and mismatched dtypes", function()
    local s = tf.io.serialize_tensor(tf.constant({1, 2}, tf.int32))
    assert.tf_error("InvalidArgumentError", "parse_tensor: type mismatch between the parsed tensor (int32) and "
                    .. "out_type (float32)", tf.io.parse_tensor, s, tf.float32)
    assert.tf_error("InvalidArgumentError", "parse_tensor: could not parse the bytes as a TensorProto",
                    tf.io.parse_tensor, "\255\255\255", tf.int32)
    local bad = py_encode('{"dtype": "DT_INT32", "tensorShape": {"dim": [{"size": 2}]}, "tensorContent": "AAAA"}')
    assert.tf_error("InvalidArgumentError", "parse_tensor: tensor_content has 3 bytes, the shape needs 8",
                    tf.io.parse_tensor, bad, tf.int32)
    assert.tf_error("InvalidArgumentError", "parse_tensor: TensorProto dtype 20 is not supported", tf.io.parse_tensor,
                    py_encode('{"dtype": "DT_RESOURCE"}'), tf.float32)
    -- a negative enum value (found by fuzz_parse_tensor: it matched resource)
    assert.tf_error("InvalidArgumentError", "parse_tensor: TensorProto dtype -1 is not supported", tf.io.parse_tensor,
                    "\8\255\255\255\255\255\255\255\255\255\1", tf.float32)
    local many = py_encode('{"dtype": "DT_INT32", "tensorShape": {"dim": [{"size": 1}]}, "intVal": [1, 2]}')
    assert.tf_error("InvalidArgumentError", "parse_tensor: the TensorProto has 2 values for 1 elements",
                    tf.io.parse_tensor, many, tf.int32)
  end)

  it("works in tf.fn", function()
    local f = tf.fn(function(x) return tf.io.parse_tensor(tf.io.serialize_tensor(x), tf.float32) end)
    assert.same({{1.5, 2}}, f(tf.constant({{1.5, 2}})):totable())
  end)
end)
