--- A small Transformer encoder classifier written with the functional API:
-- token ids -> Embedding + a learned position embedding ->
-- MultiHeadAttention + Add + LayerNormalization -> Dense feed-forward +
-- Add + LayerNormalization -> GlobalAveragePooling1D -> Dense softmax.
--
-- The task is made here (a fixed seed, so every run is the same): each
-- sequence holds one marker A (token 1) and one marker B (token 2) among
-- random filler tokens; the class says whether A comes before B. Every
-- sequence of a pair of classes holds the same bag of tokens, so the model
-- must relate positions of two tokens to each other: a bag-of-words model
-- stays at chance (50%).
--
-- Settings (environment): TRANSFORMER_EPOCHS (default 12), TRANSFORMER_SIZE
-- (training sequences, default 1024), TRANSFORMER_BLOCKS (encoder blocks,
-- default 1). The tests run a reduced form. The full run reaches 0.99 test
-- accuracy in 12 epochs (0.992 in one run, under a second on 2 cores).
--   lua5.4 examples/transformer_classifier.lua
local tf = require("tf")
local L = tf.keras.layers

local EPOCHS = tonumber(os.getenv("TRANSFORMER_EPOCHS") or "") or 12
local SIZE = tonumber(os.getenv("TRANSFORMER_SIZE") or "") or 1024
local BLOCKS = tonumber(os.getenv("TRANSFORMER_BLOCKS") or "") or 1

local SEQ_LEN, VOCAB = 10, 12          -- token ids 1..VOCAB (1 = A, 2 = B, 3.. = filler)
local DIM, HEADS, FF = 32, 2, 64

-- {==== The data
math.randomseed(42)
local function make(n)
  local seqs, labels = {}, {}
  for i = 1, n do
    local s = {}
    for t = 1, SEQ_LEN do s[t] = math.random(3, VOCAB) end
    local a = math.random(SEQ_LEN)
    local b = math.random(SEQ_LEN - 1)
    if b >= a then b = b + 1 end       -- two distinct positions
    s[a], s[b] = 1, 2
    seqs[i] = s
    labels[i] = a < b and 2 or 1       -- classes are 1-based: 2 = "A before B"
  end
  return tf.constant(seqs, tf.int32), tf.constant(labels, tf.int64)
end
local train_x, train_y = make(SIZE)
local test_x, test_y = make(math.max(SIZE // 4, 64))
print(("%d training sequences of %d tokens, %d test sequences"):format(SIZE, SEQ_LEN, test_x.shape[1]))
-- }====

-- {==== A learned position embedding: a custom layer adding row t of a
-- (SEQ_LEN, DIM) weight to the vector at position t
local PositionEmbedding = L.Layer:extend("PositionEmbedding")
function PositionEmbedding:init(opts)
  L.Layer.init(self, {name = opts.name})
  self.sequence_length, self.output_dim = opts.sequence_length, opts.output_dim
end
function PositionEmbedding:build(input_shape)
  self.position_embeddings = self:add_weight("embeddings", {self.sequence_length, self.output_dim},
                                             {initializer = tf.keras.initializers.RandomUniform{
                                               minval = -0.05, maxval = 0.05}})
end
function PositionEmbedding:call(x)
  return x + tf.cast(self.position_embeddings, x.dtype)   -- broadcasts over the batch
end
function PositionEmbedding:compute_output_shape(shape) return shape end
-- }====

-- {==== The model
tf.random.set_seed(7)
local function encoder_block(x)
  local attn = L.MultiHeadAttention{num_heads = HEADS, key_dim = DIM // HEADS}(x, x)
  x = L.LayerNormalization{epsilon = 1e-6}(L.Add{}{x, attn})
  local ff = L.Dense{FF, activation = "relu"}(x)
  ff = L.Dense{DIM}(ff)
  return L.LayerNormalization{epsilon = 1e-6}(L.Add{}{x, ff})
end

local inputs = tf.keras.Input({SEQ_LEN}, {dtype = tf.int32, name = "tokens"})
local x = L.Embedding{VOCAB + 1, DIM}(inputs)
x = PositionEmbedding{sequence_length = SEQ_LEN, output_dim = DIM}(x)
for _ = 1, BLOCKS do x = encoder_block(x) end
x = L.GlobalAveragePooling1D{}(x)
local outputs = L.Dense{2, activation = "softmax"}(x)
local model = tf.keras.Model{inputs = inputs, outputs = outputs, name = "transformer_classifier"}
model:summary()

model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 3e-3},
              loss = "sparse_categorical_crossentropy", metrics = {"accuracy"}}
-- }====

-- {==== Training
local history = model:fit(train_x, train_y, {epochs = EPOCHS, batch_size = 32, verbose = 0, shuffle = true})
local loss, acc = history.history.loss, history.history.accuracy
for e = 1, #loss do print(("epoch %d: loss %.4f, accuracy %.3f"):format(e, loss[e], acc[e])) end
print(("loss: first epoch %.4f, last epoch %.4f"):format(loss[1], loss[#loss]))
local result = model:evaluate(test_x, test_y, {verbose = 0, return_dict = true})
print(("test accuracy: %.3f (chance: 0.5)"):format(result.accuracy))

-- two hand-made sequences: A before B, then B before A
local probe = tf.constant({{5, 1, 7, 8, 9, 2, 4, 6, 3, 10}, {5, 2, 7, 8, 9, 1, 4, 6, 3, 10}}, tf.int32)
local p = model:predict(probe, {verbose = 0}):totable()
print(("P(A before B): %.3f for 'x A x x x B ...', %.3f for 'x B x x x A ...'"):format(p[1][2], p[2][2]))
-- }====
