-- bench/conv_layers.lua: resnet18's convolutions one by one (NHWC, the
-- shapes and padding tf.onnx.load gives them), each alone: milliseconds and
-- GMAC/s, the count of that layer in the network, and beside each the plain
-- GEMM of the same size (tf.matmul of the im2col shape: the ceiling the
-- im2col path can reach). At 1 thread the times are process CPU time
-- (os.clock: steadier than wall time on a loaded machine, and equal to it
-- when the one thread runs alone); at more threads, wall time.
--   lua5.4 bench/conv_layers.lua [BATCH] [THREADS]
--   LTF_CONV_PACKED=0 lua5.4 bench/conv_layers.lua ...   (without the packed kernel)
local tf = require("tf")
local T = require("timing")
local n, threads = tonumber(arg[1] or "16"), tonumber(arg[2] or "1")
tf.core.set_num_threads(threads)
local clock = threads == 1 and os.clock or T.now
local function timed(fn)   -- bench/timing.lua's method (median of 5 loops of ~0.25 s) on 'clock'
  fn(1)
  local inner = 1
  while true do
    local t0 = clock()
    fn(inner)
    if clock() - t0 > 0.05 then break end
    inner = inner * 2
  end
  inner = math.max(1, math.floor(inner * 0.25 / 0.05))
  local s = {}
  for r = 1, 5 do
    local t0 = clock()
    fn(inner)
    s[r] = (clock() - t0) / inner
  end
  table.sort(s)
  return s[3]
end
-- {name, h, c, o, k, stride, pad, count in resnet18}
local layers = {
  {"stem 7x7/2 3->64", 224, 3, 64, 7, 2, 3, 1},
  {"3x3 64->64 @56", 56, 64, 64, 3, 1, 1, 4},
  {"3x3/2 64->128", 56, 64, 128, 3, 2, 1, 1},
  {"1x1/2 64->128", 56, 64, 128, 1, 2, 0, 1},
  {"3x3 128->128 @28", 28, 128, 128, 3, 1, 1, 3},
  {"3x3/2 128->256", 28, 128, 256, 3, 2, 1, 1},
  {"1x1/2 128->256", 28, 128, 256, 1, 2, 0, 1},
  {"3x3 256->256 @14", 14, 256, 256, 3, 1, 1, 3},
  {"3x3/2 256->512", 14, 256, 512, 3, 2, 1, 1},
  {"1x1/2 256->512", 14, 256, 512, 1, 2, 0, 1},
  {"3x3 512->512 @7", 7, 512, 512, 3, 1, 1, 3},
}
print(("batch %d, %d threads"):format(n, threads))
print(("%-20s %5s %9s %8s %9s %8s %9s"):format("layer", "count", "conv ms", "GMAC/s", "gemm ms", "GMAC/s", "total ms"))
local total, gtotal, macs_all = 0, 0, 0
for _, L in ipairs(layers) do
  local name, h, c, o, k, s, p, count = table.unpack(L)
  local oh = (h + 2 * p - k) // s + 1
  local x = tf.random.normal({n, h, h, c}, 0, 1, tf.float32, 1)
  local f = tf.random.normal({k, k, c, o}, 0, 0.1, tf.float32, 2)
  local pad = p == 0 and "VALID" or {{0, 0}, {p, p}, {p, p}, {0, 0}}
  local t = timed(function(r) for _ = 1, r do tf.nn.conv2d(x, f, s, pad) end end)
  local m, kk = n * oh * oh, k * k * c
  local a = tf.random.normal({m, kk}, 0, 1, tf.float32, 3)
  local b = tf.reshape(f, {kk, o})
  local tg = timed(function(r) for _ = 1, r do tf.matmul(a, b) end end)
  local macs = m * kk * o
  print(("%-20s %5d %9.2f %8.1f %9.2f %8.1f %9.1f"):format(name, count, t * 1e3, macs / t / 1e9, tg * 1e3,
        macs / tg / 1e9, t * 1e3 * count))
  total = total + t * count
  gtotal = gtotal + tg * count
  macs_all = macs_all + macs * count
end
print(("all convolutions: %.1f ms (%.1f GMAC/s); as plain GEMMs: %.1f ms; %.2f GMAC"):format(total * 1e3,
      macs_all / total / 1e9, gtotal * 1e3, macs_all / 1e9))
