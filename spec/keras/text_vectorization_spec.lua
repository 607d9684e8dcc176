-- tf.keras.layers.TextVectorization (lua/tf/keras/layers/text.lua).
-- Vocabularies and ids are worked by hand from Keras's rules: standardize
-- (lowercase, strip Keras's punctuation set), split, n-grams, then a
-- StringLookup with mask "" (index 0, int mode only) and OOV "[UNK]";
-- adapt orders tokens by count, ties by token descending; tf_idf weights
-- are log(1 + documents / (1 + document count)), the OOV one their mean.
local tf = require("tf")
local L = tf.keras.layers

local TEXTS = {"The cat sat.", "the DOG sat!", "a cat, a hat"}

describe("TextVectorization", function()
  it("adapts and maps to int ids (0 padding, 1 OOV), padded or cut to output_sequence_length", function()
    local tv = L.TextVectorization{}
    tv:adapt(TEXTS)
    -- counts: the 2, sat 2, cat 2, a 2, dog 1, hat 1 -> ties descending: the, sat, cat, a; then hat, dog
    assert.same({"", "[UNK]", "the", "sat", "cat", "a", "hat", "dog"}, tv:get_vocabulary())
    local r = tv({"The hat sat on the cat", "dog"})
    assert.equal(tf.int64, r.dtype)
    assert.same({{2, 6, 3, 1, 2, 4}, {7, 0, 0, 0, 0, 0}}, r:totable())   -- padded to the longest row
    local fixed = L.TextVectorization{output_sequence_length = 3, vocabulary = tv:get_vocabulary()}
    assert.same({{2, 6, 3}, {7, 0, 0}}, fixed({"The hat sat on the cat", "dog"}):totable())
    assert.same({"the", "sat", "cat", "a", "hat", "dog"}, fixed:get_vocabulary(false))
  end)

  it("adapts on a tensor, a (batch, 1) tensor or a tf.data dataset the same way", function()
    local a = L.TextVectorization{}
    a:adapt(tf.constant(TEXTS))
    local b = L.TextVectorization{}
    b:adapt(tf.data.Dataset.from_tensor_slices(TEXTS):batch(2))
    local c = L.TextVectorization{}
    c:adapt(tf.reshape(tf.constant(TEXTS), {3, 1}), {batch_size = 1})
    assert.same(a:get_vocabulary(), b:get_vocabulary())
    assert.same(a:get_vocabulary(), c:get_vocabulary())
    local d = L.TextVectorization{max_tokens = 4}
    d:adapt(TEXTS)
    assert.same({"", "[UNK]", "the", "sat"}, d:get_vocabulary())
  end)

  it("standardizes and splits as asked", function()
    local keep = L.TextVectorization{standardize = false, vocabulary = {"The", "cat."}}
    assert.same({{2, 3, 1}}, keep({"The cat. the"}):totable())
    local lower = L.TextVectorization{standardize = "lower", vocabulary = {"cat.", "the"}}
    assert.same({{3, 2}}, lower({"THE cat."}):totable())
    -- lowercasing is ASCII only, as Keras's tf.strings.lower(inputs): \u{c9} stays
    local accents = L.TextVectorization{vocabulary = {"\u{e9}t\u{e9}"}}
    assert.same({{1, 2}}, accents({"\u{c9}T\u{c9} \u{e9}t\u{e9}"}):totable())
    local chars = L.TextVectorization{split = "character", standardize = "strip_punctuation", vocabulary = {"a", "b"}}
    assert.same({{1, 2, 3, 1}}, chars({"A!ab\u{e9}"}):totable())
    local nosplit = L.TextVectorization{split = false, vocabulary = {"hello world"}}
    assert.same({{2}, {1}}, nosplit({"Hello, world!", "x"}):totable())
    local custom = L.TextVectorization{
      standardize = function(x) return tf.strings.regex_replace(x, "-", " ") end,
      split = function(x) return tf.strings.split(x, " ", {pad = ""}) end,
      vocabulary = {"a", "b"}}
    assert.same({{2, 3, 3}}, custom({"a-b b"}):totable())
  end)

  it("makes n-grams", function()
    local tv = L.TextVectorization{ngrams = 2, output_mode = "multi_hot"}
    tv:adapt({"a b c", "a b"})
    -- a 2, b 2, "a b" 2, c 1, "b c" 1 -> b, a b, a, c, b c (ties descending)
    assert.same({"[UNK]", "b", "a b", "a", "c", "b c"}, tv:get_vocabulary())
    assert.same({{1, 1, 1, 1, 0, 0}}, tv({"a b x"}):totable())
    local only2 = L.TextVectorization{ngrams = {2}, vocabulary = {"a b"}}
    assert.same({{2, 1}}, only2({"a b c"}):totable())
  end)

  it("encodes multi_hot, count and tf_idf (no padding index in these modes)", function()
    local v = {"the", "cat", "sat"}
    assert.same({{1, 1, 1, 0}, {0, 0, 0, 0}},
                L.TextVectorization{output_mode = "multi_hot", vocabulary = v}({"the the cat dog", ""}):totable())
    assert.same({{1, 2, 1, 0}},
                L.TextVectorization{output_mode = "count", vocabulary = v}({"the the cat dog"}):totable())
    local padded = L.TextVectorization{output_mode = "count", vocabulary = v, max_tokens = 6, pad_to_max_tokens = true}
    assert.same({{0, 0, 1, 0, 0, 0}}, padded({"cat"}):totable())
    local tfidf = L.TextVectorization{output_mode = "tf_idf"}
    tfidf:adapt(TEXTS)
    -- 3 documents; document counts: the 2, sat 2, cat 2, a 1, hat 1, dog 1
    assert.same({"[UNK]", "the", "sat", "cat", "a", "hat", "dog"}, tfidf:get_vocabulary())
    local i2, i1 = math.log(1 + 3 / 3), math.log(1 + 3 / 2)
    local oov = (3 * i2 + 3 * i1) / 6
    assert.tensor_near({{2 * oov, 0, 0, i2, 0, 0, i1}}, tfidf({"cat dog zebra zebra"}))
  end)

  it("works in a Sequential model trained by fit, inside tf.fn and in a tf.data map", function()
    local tv = L.TextVectorization{output_mode = "multi_hot"}
    local texts = {"good great", "bad awful", "great fine", "awful bad bad", "fine good", "terrible"}
    tv:adapt(texts)
    tf.random.set_seed(1)
    local model = tf.keras.Sequential{tv, L.Dense{1, activation = "sigmoid"}}
    model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.1}, loss = "binary_crossentropy"}
    local y = tf.constant({{1}, {0}, {1}, {0}, {1}, {0}}, tf.float32)
    local h = model:fit(tf.constant(texts), y, {epochs = 30, verbose = 0})
    assert.is_true(h.history.loss[30] < 0.5 * h.history.loss[1])
    local p = model:predict(tf.constant({"good fine", "bad awful"}), {verbose = 0}):totable()
    assert.is_true(p[1][1] > 0.5 and p[2][1] < 0.5)
    local ids = L.TextVectorization{output_sequence_length = 4, vocabulary = {"x", "y"}}
    local f = tf.fn(function(s) return ids(s) end)
    assert.same({{2, 1, 3, 0}, {3, 0, 0, 0}}, f(tf.constant({"x z y", "Y"})):totable())
    local ds = tf.data.Dataset.from_tensor_slices({"x y", "y"}):batch(2):map(function(s) return ids(s) end)
    local got = {}
    for b in ds:iter() do got[#got + 1] = b:totable() end
    assert.same({{{2, 3, 0, 0}, {3, 0, 0, 0}}}, got)
  end)

  it("round-trips get_config", function()
    local tv = L.TextVectorization{max_tokens = 10, ngrams = 2, output_mode = "tf_idf", name = "tv"}
    tv:adapt({"a b", "b c"})
    local c = tv:get_config()
    local again = L.TextVectorization.from_config(c)
    assert.same(c, again:get_config())
    assert.same(tv({"a b c d"}):totable(), again({"a b c d"}):totable())
    local plain = L.TextVectorization{split = false, standardize = false, vocabulary = {"q"}, output_sequence_length = 2}
    assert.same(plain:get_config(), L.TextVectorization.from_config(plain:get_config()):get_config())
  end)

  it("reports errors", function()
    assert.tf_error("ValueError", "TextVectorization: 'standardize' must be 'lower_and_strip_punctuation', 'lower', "
                    .. "'strip_punctuation', false or a function, got upper", L.TextVectorization, {standardize = "upper"})
    assert.tf_error("ValueError", "TextVectorization: 'split' must be 'whitespace', 'character', false or a function, "
                    .. "got comma", L.TextVectorization, {split = "comma"})
    assert.tf_error("ValueError", "TextVectorization: 'output_sequence_length' is only for output_mode 'int', got "
                    .. "'count'", L.TextVectorization, {output_mode = "count", output_sequence_length = 3})
    assert.tf_error("ValueError", "TextVectorization: 'ngrams' must be nil, an integer >= 1 or a list of them, got 0",
                    L.TextVectorization, {ngrams = 0})
    assert.tf_error("TypeError", "TextVectorization: unknown keyword argument 'max_token'", L.TextVectorization,
                    {max_token = 3})
    assert.tf_error("FailedPreconditionError", "no vocabulary: give 'vocabulary' or call adapt() first",
                    L.TextVectorization{}, {"a"})
    local tv = L.TextVectorization{vocabulary = {"a"}}
    assert.tf_error("TypeError", "TextVectorization: inputs must be strings, got dtype float32", tv, tf.constant({1.5}))
    assert.tf_error("InvalidArgumentError", "TextVectorization: inputs of rank 2 must have shape (batch, 1), got (1, 2)",
                    tv, tf.constant({{"a", "b"}}))
  end)
end)
