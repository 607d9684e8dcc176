-- tf.lookup: KeyValueTensorInitializer, TextFileInitializer, StaticHashTable,
-- StaticVocabularyTable (lua/tf/lookup_ops.lua over the hash_table_find op).
-- OOV ids are checked against Fingerprint64 values computed independently
-- (published vectors, see spec/strings_hash_spec.lua).
local tf = require("tf")

local function umod(u, m) return ((u >> 1) % m * 2 + (u & 1)) % m end

describe("tf.lookup.StaticHashTable", function()
  local init = tf.lookup.KeyValueTensorInitializer({"apple", "banana", "cherry"}, {10, 20, 30})
  it("maps keys of any shape to values, default_value for the others", function()
    local t = tf.lookup.StaticHashTable(init, -1)
    local r = t:lookup(tf.constant({{"banana", "kiwi"}, {"cherry", "apple"}}))
    assert.equal(tf.int64, r.dtype)   -- Lua integers are int64, as TensorFlow's Python ints
    assert.same({{20, -1}, {30, 10}}, r:totable())
    assert.same({10}, t({"apple"}):totable())
    assert.equal(3, t:size():item())
    local k, v = t:export()
    assert.same({"apple", "banana", "cherry"}, k:totable())
    assert.same({10, 20, 30}, v:totable())
  end)
  it("takes integer keys and string or float values", function()
    local s = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer({1, 2, -7}, {"one", "two", "minus"}), "?")
    assert.same({"two", "?", "minus"}, s:lookup({2, 3, -7}):totable())
    assert.same({"one"}, s:lookup(tf.constant({1}, tf.int32)):totable())   -- int32 keys are cast
    local f = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer({"x"}, tf.constant({0.5})), 0)
    assert.equal(tf.float32, f:lookup({"x"}).dtype)
    assert.same({0.5, 0}, f:lookup({"x", "y"}):totable())
  end)
  it("works inside tf.fn and a tf.data map", function()
    local t = tf.lookup.StaticHashTable(init, 0)
    local f = tf.fn(function(x) return t:lookup(x) * 2 end)
    assert.same({40, 0}, f(tf.constant({"banana", "x"})):totable())
    local ds = tf.data.Dataset.from_tensor_slices({"cherry", "apple", "nope"}):map(function(x) return t:lookup(x) end)
    local got = {}
    for x in ds:iter() do got[#got + 1] = x:item() end
    assert.same({30, 10, 0}, got)
  end)
  it("reports errors", function()
    assert.tf_error("InvalidArgumentError", "KeyValueTensorInitializer: keys (2,) and values (3,) must be vectors of "
                    .. "one length", tf.lookup.KeyValueTensorInitializer, {"a", "b"}, {1, 2, 3})
    assert.tf_error("TypeError", "KeyValueTensorInitializer: keys must be strings or integers, got float32",
                    tf.lookup.KeyValueTensorInitializer, {1.5}, {1})
    assert.tf_error("TypeError", "StaticHashTable: 'initializer' must be a tf.lookup.KeyValueTensorInitializer",
                    tf.lookup.StaticHashTable, {}, 0)
    local dup = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer({"a", "b", "a"}, {1, 2, 3}), 0)
    assert.tf_error("InvalidArgumentError", "hash_table_find: key 'a' appears twice with different values (keys 1 and 3)",
                    dup.lookup, dup, {"b"})
    local t = tf.lookup.StaticHashTable(init, -1)
    assert.tf_error("TypeError", "StaticHashTable.lookup: keys have dtype int32, the table's keys string", t.lookup, t,
                    tf.constant({1}))
  end)
end)

describe("tf.lookup.StaticVocabularyTable", function()
  it("gives vocabulary ids, and size + Fingerprint64 mod num_oov_buckets for the others", function()
    local init = tf.lookup.KeyValueTensorInitializer({"emerson", "lake", "palmer"}, {0, 1, 2})
    local t = tf.lookup.StaticVocabularyTable(init, 5)
    -- Fingerprint64("abc") = 0x24a5b3a074e7f369, ("abcd") = 0x1a5502de4a1f8101
    local r = t:lookup({"emerson", "abc", "palmer", "abcd", "lake"}):totable()
    assert.same({0, 3 + umod(0x24a5b3a074e7f369, 5), 2, 3 + umod(0x1a5502de4a1f8101, 5), 1}, r)
    assert.equal(8, t:size():item())
    local f = tf.fn(function(x) return t:lookup(x) end)
    assert.same(r, f(tf.constant({"emerson", "abc", "palmer", "abcd", "lake"})):totable())
  end)
  it("checks its arguments", function()
    local init = tf.lookup.KeyValueTensorInitializer({"a"}, {0})
    assert.tf_error("ValueError", "StaticVocabularyTable: 'num_oov_buckets' must be an integer >= 1, got 0",
                    tf.lookup.StaticVocabularyTable, init, 0)
    assert.tf_error("TypeError", "StaticVocabularyTable: values must be int64, got string",
                    tf.lookup.StaticVocabularyTable, tf.lookup.KeyValueTensorInitializer({"a"}, {"x"}), 1)
  end)
end)

describe("tf.lookup.TextFileInitializer", function()
  it("reads keys and values from the columns or lines of a file", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write("cat\t7\ndog\t9\nemu\t11\n")
    f:close()
    local whole = tf.lookup.TextFileInitializer(path, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
                                                tf.lookup.TextFileIndex.LINE_NUMBER)
    local t = tf.lookup.StaticHashTable(whole, -1)
    assert.same({1, -1}, t:lookup({"dog\t9", "dog"}):totable())
    local cols = tf.lookup.TextFileInitializer(path, tf.string, 0, tf.int64, 1)
    assert.same({9, 11, -1}, tf.lookup.StaticHashTable(cols, -1):lookup({"dog", "emu", "cow"}):totable())
    assert.tf_error("InvalidArgumentError", "TextFileInitializer: line 1 of '" .. path .. "' has 2 columns, column 4 asked",
                    tf.lookup.TextFileInitializer, path, tf.string, 4, tf.int64, 1)
    os.remove(path)
    assert.tf_error("NotFoundError", "TextFileInitializer: cannot open '" .. path .. "'",
                    tf.lookup.TextFileInitializer, path, tf.string, 0, tf.int64, 1)
  end)
end)
