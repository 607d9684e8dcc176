-- tf.keras.layers.StringLookup / IntegerLookup / Hashing
-- (lua/tf/keras/layers/text.lua). Expected indices are Keras's documented
-- outputs or worked by hand from Keras's rules: with a mask token, index 0
-- is the mask (output_mode "int" only), then num_oov_indices OOV indices,
-- then the vocabulary; adapt orders tokens by count, ties by token
-- descending (numpy lexsort((tokens, counts))[::-1]).
local tf = require("tf")
local L = tf.keras.layers

describe("StringLookup", function()
  it("maps tokens to Keras's indices (OOV 0 by default)", function()
    local layer = L.StringLookup{vocabulary = {"a", "b", "c", "d"}}
    local r = layer(tf.constant({{"a", "c", "d"}, {"d", "z", "b"}}))
    assert.equal(tf.int64, r.dtype)
    assert.same({{1, 3, 4}, {4, 0, 2}}, r:totable())
    assert.same({"[UNK]", "a", "b", "c", "d"}, layer:get_vocabulary())
    assert.same({"a", "b", "c", "d"}, layer:get_vocabulary(false))
    assert.equal(5, layer:vocabulary_size())
  end)
  it("reads a vocabulary file (one token per line)", function()
    local path = os.tmpname()
    local f = assert(io.open(path, "w"))
    f:write("[UNK]\nred\ngreen\n")   -- a leading special token is accepted
    f:close()
    local layer = L.StringLookup{vocabulary = path}
    os.remove(path)
    assert.same({"[UNK]", "red", "green"}, layer:get_vocabulary())
    assert.same({2, 0, 1}, layer({"green", "blue", "red"}):totable())
    assert.tf_error("NotFoundError", "StringLookup: cannot open vocabulary file", L.StringLookup, {vocabulary = path})
  end)
  it("hashes OOV tokens into several OOV indices (Keras's example)", function()
    local layer = L.StringLookup{vocabulary = {"a", "b", "c", "d"}, num_oov_indices = 2}
    assert.same({{2, 4, 5}, {0, 1, 3}}, layer({{"a", "c", "d"}, {"m", "z", "b"}}):totable())
  end)
  it("puts the mask token at index 0 and inverts", function()
    local layer = L.StringLookup{vocabulary = {"a", "b"}, mask_token = ""}
    assert.same({2, 0, 1, 3}, layer({"a", "", "q", "b"}):totable())
    assert.same({"", "[UNK]", "a", "b"}, layer:get_vocabulary())
    local inv = L.StringLookup{vocabulary = {"a", "b"}, mask_token = "", invert = true}
    assert.same({{"", "[UNK]", "a", "b", "[UNK]"}}, inv(tf.constant({{0, 1, 2, 3, 7}})):totable())
  end)
  it("encodes one_hot, multi_hot, count and tf_idf", function()
    local v = {"a", "b", "c"}
    assert.same({{0, 1, 0, 0}, {1, 0, 0, 0}}, L.StringLookup{vocabulary = v, output_mode = "one_hot"}({"a", "z"}):totable())
    local x = tf.constant({{"a", "b", "a"}, {"c", "z", "z"}})
    assert.same({{0, 1, 1, 0}, {1, 0, 0, 1}}, L.StringLookup{vocabulary = v, output_mode = "multi_hot"}(x):totable())
    assert.same({{0, 2, 1, 0}, {2, 0, 0, 1}}, L.StringLookup{vocabulary = v, output_mode = "count"}(x):totable())
    -- tf_idf: count * idf; the OOV index gets the mean of the idf weights given
    local t = L.StringLookup{vocabulary = v, output_mode = "tf_idf", idf_weights = {0.5, 0.25, 0.75}}
    assert.tensor_near({{0, 1.0, 0.25, 0}, {2 * 0.5, 0, 0, 0.75}}, t(x))
    -- pad_to_max_tokens widens the encoding to max_tokens
    local p = L.StringLookup{vocabulary = v, output_mode = "multi_hot", max_tokens = 6, pad_to_max_tokens = true}
    assert.same({{0, 1, 0, 0, 0, 0}}, p({{"a"}}):totable())
  end)
  it("adapts to data: by count, ties by token descending, capped by max_tokens", function()
    local layer = L.StringLookup{}
    layer:adapt({"b", "c", "a", "c", "b", "d", "[UNK]"})
    assert.same({"[UNK]", "c", "b", "d", "a"}, layer:get_vocabulary())
    local small = L.StringLookup{max_tokens = 3, mask_token = ""}
    small:adapt(tf.constant({{"x", "y"}, {"y", ""}, {"z", "y"}}))   -- the mask token is not counted
    assert.same({"", "[UNK]", "y"}, small:get_vocabulary())
    local ds = L.StringLookup{}
    ds:adapt(tf.data.Dataset.from_tensor_slices({"p", "q", "q"}):batch(2))
    assert.same({"[UNK]", "q", "p"}, ds:get_vocabulary())
  end)
  it("learns idf weights log(1 + documents / (1 + document count)) in tf_idf mode", function()
    local layer = L.StringLookup{output_mode = "tf_idf"}
    layer:adapt(tf.constant({{"a", "a"}, {"a", "b"}, {"c", "c"}}))
    -- counts: a 3, c 2, b 1; documents: a 2, b 1, c 1 (of 3)
    assert.same({"[UNK]", "a", "c", "b"}, layer:get_vocabulary())
    local ia, ic, ib = math.log(1 + 3 / 3), math.log(1 + 3 / 2), math.log(1 + 3 / 2)
    local oov = (ia + ic + ib) / 3
    assert.tensor_near({{oov, 2 * ia, 0, ib}}, layer(tf.constant({{"a", "a", "b", "q"}})))
  end)
  it("works inside tf.fn and a tf.data map", function()
    local layer = L.StringLookup{vocabulary = {"x", "y"}}
    local f = tf.fn(function(s) return layer(s) end)
    assert.same({2, 0, 1}, f(tf.constant({"y", "q", "x"})):totable())
    local out = {}
    for v in tf.data.Dataset.from_tensor_slices({"x", "y", "q"}):map(function(s) return layer(s) end):iter() do
      out[#out + 1] = v:item()
    end
    assert.same({1, 2, 0}, out)
  end)
  it("computes output shapes (for Sequential's build and summary)", function()
    local v = {"a", "b", "c"}
    local S = function(d) return tf.TensorShape(d) end
    assert.same({-1, 5}, L.StringLookup{vocabulary = v}:compute_output_shape(S({-1, 5})):as_list())
    assert.same({-1, 4}, L.StringLookup{vocabulary = v, output_mode = "multi_hot"}:compute_output_shape(S({-1, 5})):as_list())
    assert.same({7, 4}, L.StringLookup{vocabulary = v, output_mode = "one_hot"}:compute_output_shape(S({7})):as_list())
    assert.same({-1, 6}, L.Hashing{6, output_mode = "count"}:compute_output_shape(S({-1, 3})):as_list())
    local model = tf.keras.Sequential{L.StringLookup{vocabulary = v, output_mode = "count"}, L.Dense{2}}
    assert.shape({1, 2}, model(tf.constant({{"a", "q"}})))
  end)
  it("round-trips get_config", function()
    local layer = L.StringLookup{vocabulary = {"a", "b"}, num_oov_indices = 2, mask_token = "", name = "sl"}
    local c = layer:get_config()
    assert.same({"a", "b"}, c.vocabulary)
    assert.equal(2, c.num_oov_indices)
    local again = L.StringLookup.from_config(c)
    assert.same(c, again:get_config())
    assert.same(layer({"a", "", "b", "zz"}):totable(), again({"a", "", "b", "zz"}):totable())
  end)
  it("reports errors", function()
    assert.tf_error("ValueError", "StringLookup: reserved token \"[UNK]\" found in 'vocabulary' at 2",
                    L.StringLookup, {vocabulary = {"a", "[UNK]"}})
    assert.tf_error("ValueError", "StringLookup: the vocabulary repeats \"a\" (entries 1 and 3)", L.StringLookup,
                    {vocabulary = {"a", "b", "a"}})
    assert.tf_error("ValueError", "StringLookup: a vocabulary of 3 tokens (4 with the special ones) is larger than "
                    .. "max_tokens 3", L.StringLookup, {vocabulary = {"a", "b", "c"}, max_tokens = 3})
    assert.tf_error("ValueError", "StringLookup: 'idf_weights' must be given with the vocabulary in output_mode "
                    .. "'tf_idf'", L.StringLookup, {vocabulary = {"a"}, output_mode = "tf_idf"})
    assert.tf_error("ValueError", "StringLookup: 'output_mode' must be 'int', 'one_hot', 'multi_hot', 'count' or "
                    .. "'tf_idf', got binary", L.StringLookup, {output_mode = "binary"})
    assert.tf_error("FailedPreconditionError", "no vocabulary: give 'vocabulary' or call adapt() first",
                    L.StringLookup{}, {"a"})
    assert.tf_error("TypeError", "StringLookup: inputs must be strings, got dtype int32", L.StringLookup{vocabulary = {"a"}},
                    tf.constant({1}))
    local strict = L.StringLookup{vocabulary = {"a"}, num_oov_indices = 0}
    assert.same({0}, strict({"a"}):totable())
    assert.tf_error("InvalidArgumentError", "StringLookup: with num_oov_indices = 0 every input must be in the "
                    .. "vocabulary", strict, {"a", "b"})
  end)
end)

describe("IntegerLookup", function()
  it("gives Keras's documented indices", function()
    local vocab = {12, 36, 1138, 42}
    local data = tf.constant({{12, 1138, 42}, {42, 1000, 36}})
    assert.same({{1, 3, 4}, {4, 0, 2}}, L.IntegerLookup{vocabulary = vocab}(data):totable())
    -- several OOV indices: an unknown integer k goes to k mod num_oov_indices
    local two = L.IntegerLookup{vocabulary = vocab, num_oov_indices = 2}
    assert.same({{2, 4, 5}, {1, 0, 3}}, two(tf.constant({{12, 1138, 42}, {37, 1000, 36}})):totable())
    assert.same({-1, 12, 36, 1138, 42}, L.IntegerLookup{vocabulary = vocab}:get_vocabulary())
    local inv = L.IntegerLookup{vocabulary = vocab, invert = true}
    assert.same({{12, 1138, 42}, {42, -1, 36}}, inv(tf.constant({{1, 3, 4}, {4, 0, 2}})):totable())
  end)
  it("adapts, with a mask token", function()
    local layer = L.IntegerLookup{mask_token = 0}
    layer:adapt(tf.constant({{12, 1138, 42}, {42, 1000, 36}, {0, 42, 1000}}))
    -- counts: 42 3, 1000 2, then 1138, 36, 12 (count 1, descending)
    assert.same({0, -1, 42, 1000, 1138, 36, 12}, layer:get_vocabulary())
    assert.same({2, 0, 1, 6}, layer(tf.constant({42, 0, 7, 12})):totable())
  end)
end)

describe("Hashing", function()
  it("gives Keras's documented bins (farmhash Fingerprint64, SipHash with a salt)", function()
    local inp = {{"A"}, {"B"}, {"C"}, {"D"}, {"E"}}
    local r = L.Hashing{num_bins = 3}(inp)
    assert.equal(tf.int64, r.dtype)
    assert.same({{1}, {0}, {1}, {1}, {2}}, r:totable())
    assert.same({{1}, {1}, {0}, {2}, {2}}, L.Hashing{3, mask_value = ""}({{"A"}, {"B"}, {""}, {"C"}, {"D"}}):totable())
    assert.same({{1}, {2}, {1}, {0}, {2}}, L.Hashing{3, salt = {133, 137}}(inp):totable())
  end)
  it("hashes integers as their decimal text, and encodes", function()
    assert.same(tf.strings.to_hash_bucket_fast({"12", "-7"}, 5):totable(), L.Hashing{5}(tf.constant({12, -7})):totable())
    assert.same({{0, 1, 0}, {0, 0, 1}}, L.Hashing{3, output_mode = "one_hot"}({"A", "E"}):totable())
    assert.same({{1, 1, 0}}, L.Hashing{3, output_mode = "multi_hot"}({{"A", "B", "C"}}):totable())
    assert.same({{1, 2, 0}}, L.Hashing{3, output_mode = "count"}({{"A", "B", "C"}}):totable())
  end)
  it("round-trips get_config and checks arguments", function()
    local h = L.Hashing{7, salt = 5, mask_value = "-"}
    local again = L.Hashing.from_config(h:get_config())
    assert.same(h:get_config(), again:get_config())
    assert.same({5, 5}, h:get_config().salt)
    assert.same(h({"a", "-", "b"}):totable(), again({"a", "-", "b"}):totable())
    assert.tf_error("ValueError", "Hashing: 'num_bins' must be an integer >= 1, got 0", L.Hashing, {0})
    assert.tf_error("ValueError", "Hashing: 'salt' must be an integer or a list of 2 integers", L.Hashing,
                    {3, salt = {1, 2, 3}})
    assert.tf_error("TypeError", "Hashing: inputs must be strings or integers, got dtype float32", L.Hashing{3},
                    tf.constant({1.5}))
  end)
end)
