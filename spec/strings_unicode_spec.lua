-- tf.strings.unicode_split / unicode_decode / unicode_encode (the strings
-- family's unicode_decode and unicode_encode). Expected code points come
-- from Lua's utf8 library; ill-formed input follows Unicode's "maximal
-- subpart" rule (one U+FFFD per bad sequence), as ICU does for TensorFlow.
local tf = require("tf")

local function lua_codes(s)
  local r = {}
  for _, c in utf8.codes(s) do r[#r + 1] = c end
  return r
end

local function lua_chars(s)
  local r = {}
  for _, c in utf8.codes(s) do r[#r + 1] = utf8.char(c) end
  return r
end

local WORDS = {"h\u{e9}llo", "", "\u{20ac}5 \u{1f600}!", "\u{43f}\u{440}\u{438}"}

describe("tf.strings.unicode_decode / unicode_split", function()
  it("give each string's code points / characters as Lua tables (as split without pad)", function()
    local codes = tf.strings.unicode_decode(WORDS, "UTF-8")
    local chars = tf.strings.unicode_split(WORDS, "UTF-8")
    for i, w in ipairs(WORDS) do
      assert.same(lua_codes(w), codes[i])
      assert.same(lua_chars(w), chars[i])
    end
    assert.same(lua_codes("h\u{e9}"), tf.strings.unicode_decode("h\u{e9}", "UTF-8"))
  end)

  it("give a padded tensor and the counts with {pad =}, also inside tf.fn", function()
    local p, n = tf.strings.unicode_decode({"h\u{e9}", "abc"}, "UTF-8", {pad = -1})
    assert.same({{104, 233, -1}, {97, 98, 99}}, p:totable())
    assert.same({2, 3}, n:totable())
    local f = tf.fn(function(s) return tf.strings.unicode_split(s, "UTF-8", {pad = "?"}) end)
    local q, k = f(tf.constant({"h\u{e9}", "abc"}))
    assert.same({{"h", "\u{e9}", "?"}, {"a", "b", "c"}}, q:totable())
    assert.same({2, 3}, k:totable())
    assert.tf_error("UnimplementedError", "unicode_split: inside tf.fn the result must be a tensor",
                    tf.fn(function(s) return tf.strings.unicode_split(s, "UTF-8") end), tf.constant({"a"}))
  end)

  it("handle ill-formed UTF-8 with errors = replace (default), ignore or strict", function()
    -- 'a', a stray 0xff, 'b', a truncated 3-byte sequence (e2 82), an overlong c0 80 (two bad bytes)
    local s = "a\xffb\xe2\x82c\xc0\x80"
    assert.same({97, 0xfffd, 98, 0xfffd, 99, 0xfffd, 0xfffd}, tf.strings.unicode_decode(s, "UTF-8"))
    assert.same({97, 98, 99}, tf.strings.unicode_decode(s, "UTF-8", "ignore"))
    assert.same({97, 63, 98, 63, 99, 63, 63}, tf.strings.unicode_decode(s, "UTF-8", "replace", 63))
    -- split keeps the bad bytes of each replaced character
    assert.same({"a", "\xff", "b", "\xe2\x82", "c", "\xc0", "\x80"}, tf.strings.unicode_split(s, "UTF-8"))
    assert.tf_error("InvalidArgumentError", "unicode_decode: invalid UTF-8 at byte 2 of element 1",
                    tf.strings.unicode_decode, s, "UTF-8", "strict")
    assert.tf_error("InvalidArgumentError", "unicode_split: invalid UTF-8 at byte 3 of element 2",
                    tf.strings.unicode_split, {"ok", "ab\xed\xa0\x80"}, "UTF-8", {errors = "strict"})   -- a surrogate
  end)

  it("reject other encodings and bad options", function()
    assert.tf_error("InvalidArgumentError", "unicode_decode: 'input_encoding' must be 'UTF-8' (the one encoding luatf "
                    .. "supports), got UTF-16-BE", tf.strings.unicode_decode, "a", "UTF-16-BE")
    assert.tf_error("ValueError", "unicode_split: 'errors' must be 'strict', 'replace' or 'ignore', got loose",
                    tf.strings.unicode_split, "a", "UTF-8", "loose")
    assert.tf_error("InvalidArgumentError", "unicode_decode: 'replacement_char' 55296 is not a Unicode scalar value",
                    tf.strings.unicode_decode, "\xff", "UTF-8", "replace", 0xd800)
    -- the result adds a dimension: a rank-8 input has no room
    local deep = tf.reshape(tf.constant({"abcd"}), {1, 1, 1, 1, 1, 1, 1, 1})
    assert.tf_error("InvalidArgumentError", "unicode_decode: 'input' has rank 8; the result's rank would exceed 8",
                    tf.strings.unicode_decode, deep, "UTF-8")
  end)
end)

describe("tf.strings.unicode_encode", function()
  it("encodes code points as UTF-8 (Lua's utf8.char)", function()
    local cps = {104, 233, 0x20ac, 0x1f600, 0x10ffff}
    assert.equal(utf8.char(table.unpack(cps)), tf.strings.unicode_encode(cps, "UTF-8"):item())
    assert.same({utf8.char(104, 233), "A", ""}, tf.strings.unicode_encode({{104, 233}, {65}, {}}, "UTF-8"):totable())
    local t = tf.constant({{104, 105, 0}, {65, 0, 0}}, tf.int32)
    assert.same({"hi", "A"}, tf.strings.unicode_encode(t, "UTF-8", {lengths = tf.constant({2, 1})}):totable())
    -- decode then encode gives the strings back
    local p, n = tf.strings.unicode_decode(WORDS, "UTF-8", {pad = 0})
    assert.same(WORDS, tf.strings.unicode_encode(p, "UTF-8", {lengths = n}):totable())
  end)
  it("handles invalid code points with errors", function()
    assert.equal("h\u{fffd}\u{fffd}\u{fffd}", tf.strings.unicode_encode({104, -5, 0xd800, 0x110000}, "UTF-8"):item())
    assert.equal("h", tf.strings.unicode_encode({104, -5, 0xd800}, "UTF-8", "ignore"):item())
    assert.equal("h??", tf.strings.unicode_encode({104, -5, 0xd800}, "UTF-8", "replace", 63):item())
    assert.tf_error("InvalidArgumentError", "unicode_encode: code point -5 (row 1, position 2) is not a Unicode scalar "
                    .. "value", tf.strings.unicode_encode, {104, -5}, "UTF-8", "strict")
    assert.tf_error("InvalidArgumentError", "unicode_encode: 'input' must have rank >= 1, got a scalar",
                    tf.strings.unicode_encode, tf.constant(65), "UTF-8")
  end)
end)

describe("tf.strings.substr with unit UTF8_CHAR", function()
  it("counts characters with 1-based positions", function()
    assert.same({"\u{e9}ll", "\u{43f}\u{440}"}, tf.strings.substr({"h\u{e9}llo", "\u{43f}\u{440}\u{438}"}, {2, 1}, {3, 2},
                                                                "UTF8_CHAR"):totable())
  end)
end)
