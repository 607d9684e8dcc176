-- bench/attention.lua: a MultiHeadAttention block forward + backward (issue
-- 19): tf.keras.layers.MultiHeadAttention{num_heads = 4, key_dim = 32} on
-- x of shape (16, 64, 128), self-attention, loss = sum of the output,
-- gradients of all 8 weights and of x. Prints RESULT lines (ms per step):
--   mha_fwd_bwd_traced  the step as one tf.fn (forward, tape, gradients)
--   mha_fwd_bwd_eager   the same step eagerly
--   mha_fwd_traced      forward only, traced
-- Peer: bench/attention_peers.py (torch.nn.MultiheadAttention, same sizes).
-- Usage: lua5.4 bench/attention.lua   (or bash bench/attention.sh for the table)
local tf = require("tf")
package.path = "bench/?.lua;" .. package.path
local timing = require("timing")

tf.random.set_seed(1)
local B, T, D, H = 16, 64, 128, 4
local mha = tf.keras.layers.MultiHeadAttention{num_heads = H, key_dim = D // H}
local x = tf.Variable(tf.random.normal({B, T, D}), {trainable = false, name = "x"})
mha(x, x)   -- build
local sources = {}
for i, v in ipairs(mha.trainable_variables) do sources[i] = v end
sources[#sources + 1] = x

local function step()
  local tape = tf.GradientTape()
  local loss = tape:record(function() return tf.reduce_sum(mha(x, x)) end)
  return tape:gradient(loss, sources)
end
local traced = tf.fn(step)
local fwd = tf.fn(function() return mha(x, x) end)

-- the traced gradients agree with the eager ones
local ge, gt = step(), traced()
for i = 1, #ge do
  local d = tf.reduce_max(tf.abs(ge[i] - gt[i])):item()
  assert(d < 1e-3, "traced and eager gradients differ")
end

timing.result("mha_fwd_bwd_traced", timing.timed(function(n) for _ = 1, n do traced() end end) * 1e3, "ms")
timing.result("mha_fwd_bwd_eager", timing.timed(function(n) for _ = 1, n do step() end end) * 1e3, "ms")
timing.result("mha_fwd_traced", timing.timed(function(n) for _ = 1, n do fwd() end end) * 1e3, "ms")
