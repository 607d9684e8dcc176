-- tf.strings.to_hash_bucket_fast / to_hash_bucket_strong: farmhash
-- Fingerprint64 (farmhashna::Hash64, what TensorFlow's Fingerprint64 is)
-- and SipHash-2-4. The 64-bit values are published test vectors of
-- Fingerprint64 (tecnickcom/farmhash64's tests, lengths 0 to 445, every
-- branch of the algorithm); the bucket values are TensorFlow's and Keras's
-- documented outputs.
local tf = require("tf")

local VECTORS = {
  {0x9ae16a3b2f90404f, ""},
  {0xb3454265b6df75e3, "a"},
  {0xaa8d6e5242ada51e, "ab"},
  {0x24a5b3a074e7f369, "abc"},
  {0x1a5502de4a1f8101, "abcd"},
  {0xc22f4663e54e04d4, "abcde"},
  {0xfee9d22990c82909, "abcdefgh"},
  {0x332c8ed4dae5ba42, "abcdefghi"},
  {0x46a7416ed4861e3b, "0123456789=012345"},
  {0xd78d5f852d522e6a, "0123456789$0123456789!0"},
  {0xb944f8a16261e414, "C is as portable as Stonehedge!!"},
  {0xe8f89ab6df9bdd25, "Discard medicine more than two years old."},
  {0x5d14f96c18fe3d5e, "Free! Free!/A trip/to Mars/for 900/empty jars/Burma Shave"},
  {0x55182f8859eca4ce, "For every action there is an equal and opposite government program."},
  {0x5a05644eb66e435e, "Even if I could be Shakespeare, I think I should still choose to be Faraday. - A. Huxley"},
  {0x098eff6958c5e91a, "The fugacity of a constituent in a mixture of gases at a given temperature is proportional "
                       .. "to its mole fraction.  Lewis-Randall Rule"},
  {0xc3f02c4ffd5d71e6, "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut "
                       .. "labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco "
                       .. "laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in "
                       .. "voluptate velit esse cillum dolore eu fugiat nulla pariatur. Excepteur sint occaecat "
                       .. "cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est laborum."},
}

-- u mod m for u read as an unsigned 64-bit integer (Lua integers are signed)
local function umod(u, m)
  if m == math.maxinteger then return u >= 0 and u % m or u - m end   -- u < 2^64 - 2 here
  return ((u >> 1) % m * 2 + (u & 1)) % m
end

describe("tf.strings.to_hash_bucket_fast", function()
  it("is Fingerprint64 mod num_buckets (published Fingerprint64 vectors)", function()
    local inputs = {}
    for i, v in ipairs(VECTORS) do inputs[i] = v[2] end
    for _, m in ipairs({math.maxinteger, 1000003, 7, 2}) do
      local got = tf.strings.to_hash_bucket_fast(inputs, m):totable()
      for i, v in ipairs(VECTORS) do
        assert.equal(umod(v[1], m), got[i], ("'%s' mod %d"):format(v[2]:sub(1, 20), m))
      end
    end
  end)
  it("gives TensorFlow's documented buckets", function()
    local r = tf.strings.to_hash_bucket_fast({"Hello", "TensorFlow", "2.x"}, 3)
    assert.equal(tf.int64, r.dtype)
    assert.same({0, 2, 2}, r:totable())
    assert.same({1, 0, 1, 1, 2}, tf.strings.to_hash_bucket_fast({"A", "B", "C", "D", "E"}, 3):totable())
    assert.shape({2, 1}, tf.strings.to_hash_bucket_fast(tf.constant({{"a"}, {"b"}}), 5))
  end)
  it("rejects bad arguments", function()
    assert.tf_error("InvalidArgumentError", "to_hash_bucket_fast: 'num_buckets' must be an integer >= 1, got 0",
                    tf.strings.to_hash_bucket_fast, {"a"}, 0)
    assert.tf_error("TypeError", "to_hash_bucket_fast: 'input' must be a string or a string tensor",
                    tf.strings.to_hash_bucket_fast, 5, 2)
  end)
  it("works inside tf.fn", function()
    local f = tf.fn(function(s) return tf.strings.to_hash_bucket_fast(s, 3) end)
    assert.same({0, 2, 2}, f(tf.constant({"Hello", "TensorFlow", "2.x"})):totable())
  end)
end)

describe("tf.strings.to_hash_bucket_strong", function()
  it("is SipHash-2-4 keyed by 'key' (Keras's Hashing salt example)", function()
    -- keras.layers.Hashing(num_bins=3, salt=[133, 137]) on A..E gives [1, 2, 1, 0, 2]
    assert.same({1, 2, 1, 0, 2},
                tf.strings.to_hash_bucket_strong({"A", "B", "C", "D", "E"}, 3, {133, 137}):totable())
    assert.tf_error("InvalidArgumentError", "to_hash_bucket_strong: 'key' must be a list of 2 integers",
                    tf.strings.to_hash_bucket_strong, {"a"}, 3, {1})
  end)
end)
