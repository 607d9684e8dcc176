--- A text classifier in Keras form: TextVectorization + Embedding(mask_zero)
-- + Bidirectional(LSTM) + Dense, trained with fit on raw strings.
-- The data is made here: short "reviews" built from positive and negative
-- word lists mixed with neutral words (a fixed seed, so every run is the
-- same). TEXT_CLASSIFIER_EPOCHS and TEXT_CLASSIFIER_SIZE shrink the run
-- (the tests use a reduced one).
--   lua5.4 examples/text_classifier.lua
local tf = require("tf")
local L = tf.keras.layers

local EPOCHS = tonumber(os.getenv("TEXT_CLASSIFIER_EPOCHS") or "") or 8
local SIZE = tonumber(os.getenv("TEXT_CLASSIFIER_SIZE") or "") or 400

-- {==== The data
local POSITIVE = {"great", "wonderful", "loved", "excellent", "fun", "brilliant", "moving", "superb", "charming",
                  "delightful"}
local NEGATIVE = {"awful", "boring", "hated", "terrible", "dull", "poor", "weak", "bland", "tedious", "painful"}
local NEUTRAL = {"the", "movie", "film", "was", "a", "plot", "and", "acting", "story", "it", "this", "really",
                 "with", "of", "cast", "ending", "music", "very", "quite", "script"}

math.randomseed(42)
local function pick(list) return list[math.random(#list)] end

-- A review: 4 to 8 neutral words with 1 to 2 words of its class, some
-- capitalized and followed by punctuation (TextVectorization removes both).
local function review(positive)
  local words = {}
  for _ = 1, math.random(4, 8) do words[#words + 1] = pick(NEUTRAL) end
  for _ = 1, math.random(1, 2) do
    table.insert(words, math.random(#words + 1), pick(positive and POSITIVE or NEGATIVE))
  end
  if math.random() < 0.3 then words[1] = words[1]:sub(1, 1):upper() .. words[1]:sub(2) end
  return table.concat(words, " ") .. (math.random() < 0.5 and "!" or ".")
end

local function make(n)
  local texts, labels = {}, {}
  for i = 1, n do
    local positive = i % 2 == 0
    texts[i] = review(positive)
    labels[i] = {positive and 1 or 0}
  end
  return tf.constant(texts), tf.constant(labels, tf.float32)
end

local train_x, train_y = make(SIZE)
local test_x, test_y = make(math.max(SIZE // 4, 20))
print("example review: " .. train_x[2]:item())
-- }====

-- {==== The model
local vectorize = L.TextVectorization{max_tokens = 64, output_sequence_length = 12}
vectorize:adapt(train_x)
local vocab_size = vectorize:vocabulary_size()
print(("vocabulary: %d tokens (0 padding, 1 [UNK]): %s ..."):format(vocab_size,
  table.concat({table.unpack(vectorize:get_vocabulary(), 1, 8)}, " ")))
print("vectorized: " .. tostring(vectorize(tf.constant({train_x[2]:item()}))))

tf.random.set_seed(7)
local model = tf.keras.Sequential{
  vectorize,                                                -- strings -> ids (batch, 12), 0 = padding
  L.Embedding{vocab_size, 16, mask_zero = true},            -- id k -> row k; the padding is masked
  L.Bidirectional{L.LSTM{16}},
  L.Dense{1, activation = "sigmoid"},
}
model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.01}, loss = "binary_crossentropy",
              metrics = {"accuracy"}}
-- }====

-- {==== Training on a tf.data pipeline of raw strings
local train = tf.data.Dataset.from_tensor_slices({train_x, train_y}):shuffle(SIZE, 1):batch(32)
local history = model:fit(train, {epochs = EPOCHS, verbose = 0})
local loss = history.history.loss
print(("loss: first epoch %.4f, last epoch %.4f"):format(loss[1], loss[#loss]))
local result = model:evaluate(test_x, test_y, {verbose = 0, return_dict = true})
print(("test accuracy: %.3f"):format(result.accuracy))

local samples = tf.constant({"a wonderful and moving film", "the plot was dull and the acting weak",
                             "Brilliant music, superb cast!"})
local p = model:predict(samples, {verbose = 0}):totable()
for i, s in ipairs(samples:totable()) do
  print(("%-40s %s (%.2f)"):format(s, p[i][1] > 0.5 and "positive" or "negative", p[i][1]))
end
-- }====
