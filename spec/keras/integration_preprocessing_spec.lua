-- Preprocessing and text layers inside functional models (the checks are
-- those of spec/keras/integration_support.lua): Normalization adapted
-- before the model is made, Rescaling, the Random* layers (active under
-- fit, the identity in predict), TextVectorization and StringLookup on
-- string inputs.
local tf = require("tf")
local S = require("spec.keras.integration_support")
local L = tf.keras.layers

describe("integration: preprocessing layers in functional models", function()
  before_each(function() tf.keras.backend.clear_session(); tf.random.set_seed(17) end)

  it("Normalization(adapt) -> Dense on numeric features", function()
    local x = tf.random.normal({32, 3}, 0, 1, tf.float32, 1) * tf.constant({{1, 10, 100}}, tf.float32)
      + tf.constant({{5, -5, 50}}, tf.float32)
    local norm = L.Normalization{}
    norm:adapt(x)
    local d1, d2 = L.Dense{8, activation = "relu"}, L.Dense{1}
    local inp = tf.keras.Input({3})
    local model = tf.keras.Model{inputs = inp, outputs = d2(d1(norm(inp)))}
    -- the adapted statistics are used: the normalized features have mean 0
    local z = norm(x)
    assert.is_true(tf.reduce_max(tf.abs(tf.reduce_mean(z, 1))):item() < 1e-4)
    local y = tf.reduce_sum(z, 2, {keepdims = true})
    S.check{model = model, eager = function(v) return d2(d1(norm(v))) end, x = x, y = y}
    -- the statistics are weights: from_config + set_weights carries them
    local copy = tf.keras.Model.from_config(model:get_config())
    copy:set_weights(model:get_weights())
    assert.is_true(S.identical(copy.layers[2].mean:value(), norm.mean:value()))
  end)

  it("Rescaling -> RandomFlip/RandomRotation/RandomZoom/RandomTranslation/RandomContrast -> Conv2D: random only in training", function()
    local pre = {
      L.Rescaling{1 / 255},
      L.RandomFlip{"horizontal", seed = 1},
      L.RandomRotation{0.1, seed = 2},
      L.RandomZoom{0.1, seed = 3},
      L.RandomTranslation{0.1, 0.1, seed = 4},
      L.RandomContrast{0.2, seed = 5},
    }
    local rest = {L.Conv2D{4, 3, activation = "relu"}, L.GlobalAveragePooling2D{}, L.Dense{1}}
    local inp = tf.keras.Input({8, 8, 1})
    local h = inp
    for _, l in ipairs(pre) do h = l(h) end
    for _, l in ipairs(rest) do h = l(h) end
    local model = tf.keras.Model{inputs = inp, outputs = h}
    local x = tf.floor(tf.random.uniform({12, 8, 8, 1}, 0, 256, tf.float32, 6))
    local function eager(v, training)
      for _, l in ipairs(pre) do v = l(v, {training = training or false}) end
      for _, l in ipairs(rest) do v = l(v) end
      return v
    end
    -- in inference the random layers pass images through (a direct call
    -- augments, as Keras's training = true default in their call)
    local plain = rest[3](rest[2](rest[1](x / 255)))
    assert.is_true(S.max_diff(model(x, {training = false}), plain) < 1e-6)
    assert.is_true(S.max_diff(model:predict(x, {verbose = 0}), plain) < 1e-6)
    -- in training they change them
    assert.is_true(S.max_diff(eager(x, true), plain) > 1e-4)
    local y = tf.reduce_mean(x, {2, 3, 4}) / 255
    S.check{model = model, eager = eager, x = x, y = tf.reshape(y, {12, 1}) + 1, epochs = 10}
  end)
end)

describe("integration: text layers in functional models", function()
  before_each(function() tf.keras.backend.clear_session(); tf.random.set_seed(19) end)

  local texts = {"the cat sat", "a good dog", "the good cat", "bad dog sat", "a bad cat", "good good dog",
                 "the bad bad cat", "a dog"}
  local labels = {{0}, {1}, {1}, {0}, {0}, {1}, {0}, {0}}

  it("TextVectorization inside a model on string inputs -> Embedding(mask_zero) -> GRU -> Dense", function()
    local tv = L.TextVectorization{max_tokens = 20, output_sequence_length = 4}
    tv:adapt(texts)
    local emb = L.Embedding{tv:vocabulary_size(), 4, mask_zero = true}
    local gru, dense = L.GRU{4}, L.Dense{1, activation = "sigmoid"}
    local inp = tf.keras.Input({1}, {dtype = tf.string})
    local model = tf.keras.Model{inputs = inp, outputs = dense(gru(emb(tv(inp))))}
    local x = tf.reshape(tf.constant(texts), {8, 1})
    S.check{model = model, eager = function(v) return dense(gru(emb(tv(v)))) end, x = x,
            y = tf.constant(labels, tf.float32), loss = "binary_crossentropy", learning_rate = 0.05}
    -- the copy keeps the vocabulary (it is in the config)
    local copy = tf.keras.Model.from_config(model:get_config())
    assert.same(tv:get_vocabulary(), copy.layers[2]:get_vocabulary())
  end)

  it("TextVectorization multi_hot and StringLookup one_hot side by side, merged", function()
    local tv = L.TextVectorization{max_tokens = 12, output_mode = "multi_hot"}
    tv:adapt(texts)
    local lookup = L.StringLookup{vocabulary = {"the", "a", "bad"}, output_mode = "one_hot"}
    local words = tf.keras.Input({1}, {dtype = tf.string})
    local first = tf.keras.Input({1}, {dtype = tf.string})
    local cat, dense = L.Concatenate{}, L.Dense{1, activation = "sigmoid"}
    local model = tf.keras.Model{inputs = {words, first}, outputs = dense(cat{tv(words), lookup(first)})}
    local x1 = tf.reshape(tf.constant(texts), {8, 1})
    local firsts = {}
    for i, t in ipairs(texts) do firsts[i] = t:match("^(%S+)") end
    local x2 = tf.reshape(tf.constant(firsts), {8, 1})
    S.check{model = model, eager = function(v) return dense(cat{tv(v[1]), lookup(v[2])}) end, x = {x1, x2},
            y = tf.constant(labels, tf.float32), loss = "binary_crossentropy", learning_rate = 0.05}
  end)
end)
