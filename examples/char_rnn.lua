-- examples/char_rnn.lua: Torch7's char-rnn (Karpathy's character-level
-- language model, the classic Lua example) in Keras form: Embedding ->
-- LSTM(return_sequences) -> Dense over the characters, trained with
-- compile/fit on windows of a text to predict each next character, then
-- sampling text one character at a time with a temperature (the LSTM's
-- cell stepped with its states, as char-rnn's sample.lua).
--
-- The text: data/char_rnn/gpl-3.txt, the GNU GPL version 3 copied verbatim
-- from /usr/share/common-licenses/GPL-3 (its terms allow verbatim copies;
-- see data/char_rnn/README.md).
--
-- Settings (environment): CHAR_RNN_TEXT (a text file), CHAR_RNN_CHARS
-- (characters of it used; default all), CHAR_RNN_EPOCHS (default 10),
-- CHAR_RNN_SEQ (sequence length, default 50), CHAR_RNN_UNITS (default 128),
-- CHAR_RNN_SAMPLE (characters sampled, default 300), CHAR_RNN_TEMPERATURE
-- (default 0.8).
local tf = require("tf")
local L = tf.keras.layers

local here = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
local path = os.getenv("CHAR_RNN_TEXT") or here .. "/../data/char_rnn/gpl-3.txt"
local n_chars = tonumber(os.getenv("CHAR_RNN_CHARS") or "0")
local epochs = tonumber(os.getenv("CHAR_RNN_EPOCHS") or "10")
local seq_len = tonumber(os.getenv("CHAR_RNN_SEQ") or "50")
local units = tonumber(os.getenv("CHAR_RNN_UNITS") or "128")
local n_sample = tonumber(os.getenv("CHAR_RNN_SAMPLE") or "300")
local temperature = tonumber(os.getenv("CHAR_RNN_TEMPERATURE") or "0.8")

tf.random.set_seed(1)
math.randomseed(1)

-- {==== the text as character ids (1-based, as Embedding's indices)
local f = assert(io.open(path, "rb"))
local text = f:read("a")
f:close()
if n_chars > 0 and n_chars < #text then text = text:sub(1, n_chars) end
local seen, vocab = {}, {}
for ch in text:gmatch(".") do
  if not seen[ch] then seen[ch] = true; vocab[#vocab + 1] = ch end
end
table.sort(vocab)
local id = {}
for i, ch in ipairs(vocab) do id[ch] = i end
local V = #vocab
print(("text: %s, %d characters, vocabulary of %d"):format(path:match("[^/]*$"), #text, V))

-- non-overlapping windows: x = characters t .. t+seq_len-1, y = the next ones
local xs, ys = {}, {}
for start = 1, #text - seq_len, seq_len do
  local x, y = {}, {}
  for k = 0, seq_len - 1 do
    x[k + 1] = id[text:sub(start + k, start + k)]
    y[k + 1] = id[text:sub(start + k + 1, start + k + 1)]
  end
  xs[#xs + 1], ys[#ys + 1] = x, y
end
print(("%d sequences of %d characters"):format(#xs, seq_len))
-- }====

-- {==== the model and its training
local embedding = L.Embedding{V, 64}
local lstm = L.LSTM{units, return_sequences = true}
local dense = L.Dense{V}
local model = tf.keras.Sequential{embedding, lstm, dense}
model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.005},
              loss = tf.keras.losses.SparseCategoricalCrossentropy{from_logits = true}}
local t0 = tf.timestamp()
local history = model:fit(tf.constant(xs, tf.int32), tf.constant(ys, tf.int32),
                          {epochs = epochs, batch_size = 32, shuffle = true, verbose = 0})
local seconds = (tf.timestamp() - t0):item()
for e, loss in ipairs(history.history.loss) do print(("epoch %d: loss %.4f"):format(e, loss)) end
local first, last = history.history.loss[1], history.history.loss[#history.history.loss]
print(("loss %.4f -> %.4f in %.1f s (%.0f characters/s)"):format(first, last, seconds,
  epochs * #xs * seq_len / seconds))
-- }====

-- {==== sampling: the cell stepped one character at a time
local function sample(prime, n, temp)
  local cell = lstm.cell
  local h, c = tf.zeros({1, units}), tf.zeros({1, units})
  local out = {}
  local logits
  local function feed(ch)
    local e = embedding(tf.constant({{id[ch]}}, tf.int32))[{{}, 1}]
    local y, st = cell:call(e, {h, c})
    h, c = st[1], st[2]
    logits = dense(y)
  end
  for ch in prime:gmatch(".") do feed(ch) end
  for _ = 1, n do
    local p = tf.nn.softmax(logits / temp):totable()[1]
    local u, acc, k = math.random(), 0, V
    for i = 1, V do
      acc = acc + p[i]
      if u <= acc then k = i break end
    end
    out[#out + 1] = vocab[k]
    feed(vocab[k])
  end
  return prime .. table.concat(out)
end

local prime = text:sub(1, 4)
print(("sample (temperature %.2f, primed with %q):"):format(temperature, prime))
print(sample(prime, n_sample, temperature))
-- }====
