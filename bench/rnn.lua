-- bench/rnn.lua: the recurrent benchmarks of issue 19 (timing as
-- bench/timing.lua: median of 5 loops of about 0.25 s after a warm-up).
--   lua5.4 bench/rnn.lua lstm_layer   LSTM layer, batch 32, 50 steps, 128 inputs, 256 units:
--                                     forward + backward (gradients of the weights), ms per step
--   lua5.4 bench/rnn.lua char_rnn     char-rnn training step (Embedding 65x64 -> LSTM 128 ->
--                                     Dense 65, batch 32 x 50 characters, Adam): characters/second
-- Peers: bench/rnn_peers.py (PyTorch, torch.nn.LSTM, 1 and 2 threads).
local tf = require("tf")
package.path = "bench/?.lua;" .. package.path
local timing = require("timing")
require("tf.keras.training")(tf)
local L = tf.keras.layers

local which = arg[1] or "lstm_layer"
tf.random.set_seed(1)

local function result(name, value, unit) print(("RESULT %s %.6g %s"):format(name, value, unit)) end

if which == "lstm_layer" then
  local layer = L.LSTM{256, return_sequences = true}
  local x = tf.random.normal({32, 50, 128})
  layer(x)
  local vars = layer.trainable_variables
  local function step()
    local tape = tf.GradientTape()
    local loss = tape:record(function() return tf.reduce_sum(layer(x)) end)
    return tape:gradient(loss, vars)
  end
  local t = timing.timed(function(n) for _ = 1, n do step() end end)
  result("luatf_lstm_layer_ms", t * 1e3, "ms")
elseif which == "char_rnn" then
  local V, B, T = 65, 32, 50
  local model = tf.keras.Sequential{L.Embedding{V, 64}, L.LSTM{128, return_sequences = true}, L.Dense{V}}
  local opt = tf.keras.optimizers.Adam{learning_rate = 0.002}
  local loss_object = tf.keras.losses.SparseCategoricalCrossentropy{from_logits = true}
  local x = tf.cast(tf.random.uniform({B, T}, 1, V + 1), tf.int32)
  local y = tf.cast(tf.random.uniform({B, T}, 1, V + 1), tf.int32)
  model(x)
  local vars = model.trainable_variables
  local function step()
    local tape = tf.GradientTape()
    local loss = tape:record(function() return loss_object(y, model(x, {training = true})) end)
    opt:apply_gradients(tape:gradient(loss, vars), vars)
    return loss
  end
  local t = timing.timed(function(n) for _ = 1, n do step() end end)
  result("luatf_char_rnn_chars_per_s", B * T / t, "chars/s")
else
  error("bench/rnn.lua: unknown benchmark '" .. tostring(which) .. "'")
end
