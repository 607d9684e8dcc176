-- tf.train.Example building and serializing (wire bytes by hand), and
-- tf.io.parse_example / parse_single_example with every feature kind:
-- values, shapes, defaults, padding, errors; eagerly, in tf.fn, in a map.
local tf = require("tf")
if not tf.io or not tf.io.parse_example then require("tf.io_tfrecord")(tf) end

local function ex(t) return tf.train.Example{features = t}:SerializeToString() end

describe("tf.train.Example", function()
  it("serializes to the protobuf wire bytes worked out by hand", function()
    -- Example.features (1, LEN) > Features.feature entry (1, LEN) > key (1) "a",
    -- value (2) Feature > int64_list (3) > packed value (1) varint 1
    assert.equal("\x0a\x0c\x0a\x0a\x0a\x01a\x12\x05\x1a\x03\x0a\x01\x01", ex{a = {int64_list = {1}}})
    -- float_list (2) packed: 1.0f = 00 00 80 3f; bytes_list (1): repeated "hi"
    assert.equal("\x0a\x0f\x0a\x0d\x0a\x01f\x12\x08\x12\x06\x0a\x04\x00\x00\x80\x3f", ex{f = {float_list = {1.0}}})
    assert.equal("\x0a\x0d\x0a\x0b\x0a\x01s\x12\x06\x0a\x04\x0a\x02hi", ex{s = {bytes_list = {"hi"}}})
    -- negative int64: ten-byte varint
    assert.equal("\x0a\x15\x0a\x13\x0a\x01n\x12\x0e\x1a\x0c\x0a\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01",
      ex{n = {int64_list = {-1}}})
  end)

  it("the Keras/TF constructors and the Lua form give the same message", function()
    local T = tf.train
    local a = T.Example{features = T.Features{feature = {
      age = T.Feature{int64_list = T.Int64List{value = {29}}},
      name = T.Feature{bytes_list = T.BytesList{value = {"ann", "bo"}}},
      w = T.Feature{float_list = T.FloatList{value = {0.5, -2}}}}}}
    local b = T.Example{features = {age = {int64_list = {29}}, name = {bytes_list = {"ann", "bo"}},
                                    w = {float_list = tf.constant({0.5, -2})}}}
    assert.equal(a:SerializeToString(), b:SerializeToString())
    local back = T.Example.FromString(a:SerializeToString())
    assert.same({age = {int64_list = {29}}, name = {bytes_list = {"ann", "bo"}}, w = {float_list = {0.5, -2}}},
      back:to_table())
    assert.same({29}, back.features.feature.age.int64_list.value)
  end)

  it("rejects wrong values and malformed bytes", function()
    assert.tf_error("TypeError", "Int64List: value 2 must be an integer", tf.train.Int64List, {1, 2.5})
    assert.tf_error("TypeError", "BytesList: value 1 must be a string", tf.train.BytesList, {3})
    assert.tf_error("TypeError", "unexpected keyword argument 'int_list'", tf.train.Feature, {int_list = {1}})
    assert.tf_error("InvalidArgumentError", "could not parse a tf.train.Example", tf.train.Example.FromString, "\x0a\xff")
  end)
end)

describe("tf.io.parse_single_example / parse_example", function()
  local s1 = ex{age = {int64_list = {29}}, name = {bytes_list = {"ann"}}, w = {float_list = {1.5, 2.5, 3, 4}},
               seq = {int64_list = {1, 2, 3, 4}}, tags = {bytes_list = {"x", "y", "z"}}}
  local s2 = ex{age = {int64_list = {7}}, w = {float_list = {0, 0, 1, 1}}, seq = {int64_list = {5, 6}},
               tags = {bytes_list = {}}}
  local spec = {
    age = tf.io.FixedLenFeature({}, tf.int64),
    name = tf.io.FixedLenFeature({}, tf.string, "nobody"),
    w = tf.io.FixedLenFeature({2, 2}, tf.float32),
    seq = tf.io.FixedLenSequenceFeature({2}, tf.int64, true, -1),
    tags = tf.io.VarLenFeature(tf.string),
    missing = tf.io.FixedLenFeature({3}, tf.float32, {1, 2, 3}),
  }

  it("one Example: each kind's values and shapes", function()
    local p = tf.io.parse_single_example(s1, spec)
    assert.equal(29, p.age:item())
    assert.equal(tf.int64, p.age.dtype)
    assert.equal("ann", p.name:item())
    assert.same({{1.5, 2.5}, {3, 4}}, p.w:totable())
    assert.same({{1, 2}, {3, 4}}, p.seq:totable())
    assert.same({{0}, {1}, {2}}, p.tags.indices:totable())
    assert.same({"x", "y", "z"}, p.tags.values:totable())
    assert.same({3}, p.tags.dense_shape:totable())
    assert.same({1, 2, 3}, p.missing:totable())
  end)

  it("a batch: leading dimension, defaults, sequences padded with the default, sparse indices", function()
    local p = tf.io.parse_example(tf.constant({s1, s2}), spec)
    assert.same({29, 7}, p.age:totable())
    assert.same({"ann", "nobody"}, p.name:totable())
    assert.same({2, 2, 2}, p.w.shape:as_list())
    assert.same({{{1, 2}, {3, 4}}, {{5, 6}, {-1, -1}}}, p.seq:totable())
    assert.same({{0, 0}, {0, 1}, {0, 2}}, p.tags.indices:totable())
    assert.same({2, 3}, p.tags.dense_shape:totable())
    assert.same({{1, 2, 3}, {1, 2, 3}}, p.missing:totable())
  end)

  it("errors name the feature, the record and the reason", function()
    local P = tf.io.parse_example
    assert.tf_error("InvalidArgumentError", "feature 'age' (FixedLenFeature, int64) is required but missing in record 2",
      P, {s1, ex{}}, {age = tf.io.FixedLenFeature({}, tf.int64)})
    assert.tf_error("InvalidArgumentError", "feature 'age' in record 1: expected float_list (float32), got int64_list",
      P, {s1}, {age = tf.io.FixedLenFeature({}, tf.float32)})
    assert.tf_error("InvalidArgumentError", "feature 'w' in record 1: 4 values, the shape needs 3",
      P, {s1}, {w = tf.io.FixedLenFeature({3}, tf.float32)})
    assert.tf_error("InvalidArgumentError", "3 values is not a multiple of 2",
      P, {s1}, {tags = tf.io.FixedLenSequenceFeature({2}, tf.string, true)})
    assert.tf_error("InvalidArgumentError", "allow_missing is false",
      P, {s1}, {nope = tf.io.FixedLenSequenceFeature({}, tf.int64)})
    assert.tf_error("InvalidArgumentError", "record 2: could not parse a tf.train.Example",
      P, {s1, "\x0a\x05\x0a"}, {age = tf.io.FixedLenFeature({}, tf.int64)})
    assert.tf_error("InvalidArgumentError", "must be a vector", P, tf.constant(s1), spec)
    assert.tf_error("TypeError", "'dtype' must be tf.string, tf.float32 or tf.int64", tf.io.FixedLenFeature, {}, tf.int32)
  end)

  it("works inside tf.fn and in a dataset map", function()
    local f = tf.fn(function(x)
      local p = tf.io.parse_example(x, {w = tf.io.FixedLenFeature({4}, tf.float32), tags = tf.io.VarLenFeature(tf.string)})
      return p.w, p.tags.dense_shape
    end)
    local w, ds = f(tf.constant({s1, s2}))
    assert.same({{1.5, 2.5, 3, 4}, {0, 0, 1, 1}}, w:totable())
    assert.same({2, 3}, ds:totable())
    local d = tf.data.Dataset.from_tensor_slices(tf.constant({s1, s2, s1})):batch(2)
      :map(function(x) return tf.io.parse_example(x, {age = tf.io.FixedLenFeature({}, tf.int64)}).age end)
    local got = {}
    for x in d:iter() do got[#got + 1] = x:totable() end
    assert.same({{29, 7}, {29}}, got)
  end)
end)
