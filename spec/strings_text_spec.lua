-- tf.strings.lower / upper / strip / reduce_join / ngrams (the strings
-- family's string_case, string_strip, reduce_join, string_ngrams). Expected
-- values are worked by hand or built with Lua's string library.
local tf = require("tf")

describe("tf.strings.lower / upper", function()
  it("maps ASCII letters by default, as Lua's string.lower/upper", function()
    local words = {"Hello World", "ABC xyz 123 !?", "", "\u{c9}t\u{c9}"}
    local lo, up = tf.strings.lower(words):totable(), tf.strings.upper(words):totable()
    for i, w in ipairs(words) do
      assert.equal(w:lower(), lo[i])   -- the C locale: bytes >= 0x80 unchanged
      assert.equal(w:upper(), up[i])
    end
  end)

  it("maps Latin-1, Latin Extended-A, Greek and Cyrillic letters with encoding utf-8", function()
    assert.same({"h\u{e9}llo w\u{f6}rld", "\u{e0}\u{e9}\u{ee} \u{3c3}\u{3b1}\u{3c3} \u{43f}\u{440}\u{438}", "\u{142}\u{17c}"},
                tf.strings.lower({"H\u{c9}LLO W\u{d6}RLD", "\u{c0}\u{c9}\u{ce} \u{3a3}\u{391}\u{3a3} \u{41f}\u{420}\u{418}",
                                  "\u{141}\u{17b}"}, "utf-8"):totable())
    assert.equal("STRA\u{df}E \u{178} \u{d1} \u{3a3}\u{3a3}", tf.strings.upper("stra\u{df}e \u{ff} \u{f1} \u{3c3}\u{3c2}",
                                                                             "utf-8"):item())
    -- invalid UTF-8 bytes are kept as they are
    assert.equal("a\xffb", tf.strings.lower("A\xffB", "utf-8"):item())
    assert.tf_error("ValueError", "upper: 'encoding' must be '' (ASCII) or 'utf-8', got latin1", tf.strings.upper,
                    "a", "latin1")
    assert.tf_error("TypeError", "string_case: 'input' has dtype float32, expected string", tf.strings.lower,
                    tf.constant({1.5}))
  end)
end)

describe("tf.strings.strip", function()
  it("removes ASCII whitespace at both ends only", function()
    assert.same({"a b", "x", "", "\u{a0}y"}, tf.strings.strip({" \t a b \n\r\v\f", "x", "   ", "\u{a0}y "}):totable())
  end)
end)

describe("tf.strings.reduce_join", function()
  local x = {{"a", "b", "c"}, {"d", "e", "f"}}
  it("joins every element in row-major order by default", function()
    assert.equal("abcdef", tf.strings.reduce_join(x):item())
    assert.equal("a b c d e f", tf.strings.reduce_join(x, {separator = " "}):item())
  end)
  it("joins along 1-based axes, negative from the end, with keepdims", function()
    assert.same({"a-d", "b-e", "c-f"}, tf.strings.reduce_join(x, 1, {separator = "-"}):totable())
    assert.same({"abc", "def"}, tf.strings.reduce_join(x, -1):totable())
    local k = tf.strings.reduce_join(x, 2, true, ",")
    assert.shape({2, 1}, k)
    assert.same({{"a,b,c"}, {"d,e,f"}}, k:totable())
    assert.equal("a b c d e f", tf.strings.reduce_join(x, {2, 1}, {separator = " "}):item())
    -- [2, 2, 2]: axes 1 and 3 joined: for each j, x[i, j, k] in (i, k) order
    local y = tf.constant({{{"a", "b"}, {"c", "d"}}, {{"e", "f"}, {"g", "h"}}})
    assert.same({"abef", "cdgh"}, tf.strings.reduce_join(y, {1, 3}):totable())
    assert.same({"", ""}, tf.strings.reduce_join(tf.zeros({2, 0}, tf.string), 2):totable())
  end)
  it("rejects bad axes", function()
    assert.tf_error("InvalidArgumentError", "reduce_join: 'axis' 3 is out of range for rank 2 (axes are 1-based: 1..2",
                    tf.strings.reduce_join, x, 3)
    assert.tf_error("InvalidArgumentError", "reduce_join: 'axis' 0 is out of range", tf.strings.reduce_join, x, 0)
    assert.tf_error("InvalidArgumentError", "reduce_join: 'axis' -1 is given twice", tf.strings.reduce_join, x,
                    {2, -1})
    assert.tf_error("TypeError", "reduce_join: 'inputs' has dtype int32, expected string", tf.strings.reduce_join,
                    tf.constant({1, 2}))
  end)
  it("works inside tf.fn", function()
    local f = tf.fn(function(t) return tf.strings.reduce_join(t, 2, {separator = "+"}) end)
    assert.same({"a+b+c", "d+e+f"}, f(tf.constant(x)):totable())
  end)
end)

describe("tf.strings.ngrams", function()
  it("makes the n-grams of the last axis of a dense tensor", function()
    assert.same({"a b", "b c", "c d"}, tf.strings.ngrams({"a", "b", "c", "d"}, 2):totable())
    assert.same({{"a_b_c"}, {"d_e_f"}}, tf.strings.ngrams(tf.constant({{"a", "b", "c"}, {"d", "e", "f"}}), 3, "_"):totable())
    -- a width larger than the row: no n-grams
    assert.shape({2, 0}, tf.strings.ngrams(tf.constant({{"a", "b"}, {"c", "d"}}), 3))
  end)
  it("pads with pad_values (width - 1 times by default, capped there) and takes several widths", function()
    assert.same({"# a", "a b", "b c", "c #"}, tf.strings.ngrams({"a", "b", "c"}, 2, {pad_values = "#"}):totable())
    assert.same({"< a b", "a b c", "b c >"},
                tf.strings.ngrams({"a", "b", "c"}, 3, {pad_values = {"<", ">"}, padding_width = 1}):totable())
    -- padding_width 5 > width - 1 = 1: capped
    assert.same({"L a", "a R"}, tf.strings.ngrams({"a"}, 2, {pad_values = {"L", "R"}, padding_width = 5}):totable())
    assert.same({"a", "b", "c", "a b", "b c"}, tf.strings.ngrams({"a", "b", "c"}, {1, 2}):totable())
  end)
  it("takes split's forms: a list of lists, or padded tokens with lengths", function()
    local rows = tf.strings.ngrams({{"a", "b", "c"}, {"d"}, {}}, 2, {preserve_short_sequences = true})
    assert.same({{"a b", "b c"}, {"d"}, {}}, rows)   -- the short row kept whole, the empty one empty
    local p, c = tf.strings.split({"the cat sat", "a dog", ""}, nil, {pad = ""})
    local g, n = tf.strings.ngrams(p, 2, {lengths = c})
    assert.same({{"the cat", "cat sat"}, {"a dog", ""}, {"", ""}}, g:totable())
    assert.same({2, 1, 0}, n:totable())
    local f = tf.fn(function(s)
      local q, k = tf.strings.split(s, nil, {pad = ""})
      return tf.strings.ngrams(q, 2, {lengths = k, separator = "_"})
    end)
    assert.same({{"x_y", "y_z"}, {"u_v", ""}}, f(tf.constant({"x y z", "u v"})):totable())
  end)
  it("rejects bad arguments", function()
    assert.tf_error("ValueError", "ngrams: 'ngram_width' must be >= 1, got 0", tf.strings.ngrams, {"a"}, 0)
    assert.tf_error("ValueError", "ngrams: 'padding_width' is set but 'pad_values' is not", tf.strings.ngrams,
                    {"a"}, 2, {padding_width = 1})
    assert.tf_error("InvalidArgumentError", "string_ngrams: 'data' must have rank >= 1, got a scalar",
                    tf.strings.ngrams, tf.constant("a b"), 2)
    assert.tf_error("InvalidArgumentError", "string_ngrams: length 3 of row 1 is outside 0..2", tf.strings.ngrams,
                    tf.constant({{"a", "b"}}), 2, {lengths = tf.constant({3})})
    assert.tf_error("InvalidArgumentError", "string_ngrams: 'lengths' (3,) must have the shape of the input without its last dimension (1, 2)",
                    tf.strings.ngrams, tf.constant({{"a", "b"}}), 2, {lengths = tf.constant({1, 2, 3})})
  end)
end)
