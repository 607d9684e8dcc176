-- bench/sort_contraction.lua: the sorting and contraction figures (einsum,
-- batched matmul, top_k, sort) for luatf (peers:
-- bench/sort_contraction_peers.py, same sizes, same method: median of 5
-- timed loops of about 0.25 s after a warm-up, bench/timing.lua).
-- Run both with: bash bench/sort_contraction.sh
--   einsum_ms   einsum "bij,bjk->bik" on (64, 128, 128) float32 operands (best of 25 alternating samples of 10 calls)
--   bmm_ms      tf.matmul of the same operands (the equivalent matmul), same method
--   topk_ms     tf.math.top_k(x, 10) on x (1000, 10000) float32
--   sort_ms     tf.sort of 1,000,000 float32 (uniform random)
local tf = require("tf")
local timing = require("timing")

local function result(name, secs)
  print(string.format("RESULT %s %.6g ms", name, secs * 1e3))
end

tf.random.set_seed(0)
local a = tf.random.uniform({64, 128, 128})
local b = tf.random.uniform({64, 128, 128})
-- the pair alternates in short samples (10 calls each) and each keeps its
-- best: the two differ only by einsum's Lua-side lowering, and on a shared
-- machine a neighbour's job would otherwise decide the ratio
local best_e, best_m = math.huge, math.huge
local function sample(f)
  local t0 = timing.now()
  for _ = 1, 10 do f() end
  return (timing.now() - t0) / 10
end
local function ein() return tf.einsum("bij,bjk->bik", a, b) end
local function mm() return tf.matmul(a, b) end
ein(); mm()
for _ = 1, 25 do
  best_e = math.min(best_e, sample(ein))
  best_m = math.min(best_m, sample(mm))
end
result("einsum_ms", best_e)
result("bmm_ms", best_m)
a, b = nil, nil
local x = tf.random.uniform({1000, 10000})
result("topk_ms", timing.timed(function(n) for _ = 1, n do tf.math.top_k(x, 10) end end))
x = nil
local v = tf.random.uniform({1000000})
result("sort_ms", timing.timed(function(n) for _ = 1, n do tf.sort(v) end end))
