-- bench/gpu.lua: luatf on the GPU (scripts/gpu-check.sh runs it with
-- bench/gpu_peers.py, PyTorch's figures for the same work, and prints one
-- table). Prints "RESULT name value unit" lines (bench/report.py's form);
-- without a GPU, "no GPU: skipped" and exit 0.
--   lua5.4 bench/gpu.lua            (from the root, with scripts/env.sh)
-- Each figure is the median of 5 timed loops (bench/timing.lua); a loop ends
-- by reading one value back, so queued kernels are counted.
local tf = require("tf")

-- LTF_BENCH_CPU=1 runs the same work on the CPU (the script's own check,
-- and a CPU column); LTF_BENCH_SMALL=1 shrinks the sizes (a quick check)
local use_gpu = os.getenv("LTF_BENCH_CPU") ~= "1"
local small = os.getenv("LTF_BENCH_SMALL") == "1"
if use_gpu and not (tf.test.is_gpu_available and tf.test.is_gpu_available()) then
  print("no GPU: skipped")
  os.exit(0)
end

local timing = dofile("bench/timing.lua")
local result = timing.result

-- wait for everything queued on the device: read one value back
local function sync(x) return tf.reduce_max(x):item() end

local function on_gpu(fn)
  if use_gpu then return tf.device("/gpu:0", fn) end
  return fn()
end
local function G(x)   -- a tensor on the device the benchmark runs on
  if use_gpu then return x:gpu() end
  return x
end

on_gpu(function()
  -- x = x @ x, 1000 x 1000 float32 (the identity keeps the values finite)
  do
    local x = G(tf.eye(1000, 1000, {dtype = tf.float32}))
    local t = timing.timed(function(n)
      local y = x
      for _ = 1, n do y = tf.matmul(y, y) end
      sync(y)
    end)
    result("matmul_1000_loop", t * 1e6, "us")
  end

  -- 4096^2 float32 matmul throughput
  do
    local m = small and 512 or 4096
    local a = G(tf.random.normal({m, m}, {dtype = tf.float32, seed = 1}))
    local b = G(tf.random.normal({m, m}, {dtype = tf.float32, seed = 2}))
    local t = timing.timed(function(n)
      local c
      for _ = 1, n do c = tf.matmul(a, b) end
      sync(c)
    end)
    result(small and "matmul_512_gflops" or "matmul_4096_gflops", 2 * m ^ 3 / t / 1e9, "GFLOP/s")
  end

  -- eager cost of a small op (one add on a scalar, launch included)
  do
    local a = G(tf.constant(1.0))
    local t = timing.timed(function(n)
      local y = a
      for _ = 1, n do y = y + 1 end
      sync(y)
    end)
    result("small_op_eager", t * 1e6, "us")
  end

  -- 100-op elementwise chain over 1M floats: eager vs tf.fn (a fused group)
  do
    local x = G(tf.random.uniform({1024, 1024}, {dtype = tf.float32, seed = 3}))
    local eager = timing.timed(function(n)
      local y
      for _ = 1, n do y = timing.chain100(x) end
      sync(y)
    end)
    local g = tf.fn(timing.chain100)
    sync(g(x))
    local traced = timing.timed(function(n)
      local y
      for _ = 1, n do y = g(x) end
      sync(y)
    end)
    result("chain100_eager", eager * 1e6, "us")
    result("chain100_fn", traced * 1e6, "us")
  end

  -- 1 GiB elementwise add (3 GiB moved) vs a copy of 1 GiB (2 GiB moved)
  do
    local n = (small and 4 or 256) * 1024 * 1024
    local x = G(tf.ones({n}, tf.float32))
    local y = G(tf.ones({n}, tf.float32))
    local t = timing.timed(function(k)
      local z
      for _ = 1, k do z = x + y end
      sync(z)
    end, 5)
    result(small and "add_4mi_bandwidth" or "add_1gib_bandwidth", 3 * 4 * n / t / 1e9, "GB/s")
    local c = timing.timed(function(k)
      local z
      for _ = 1, k do z = tf.concat({x}, 1) end
      sync(z)
    end, 5)
    result(small and "copy_4mi_bandwidth" or "copy_1gib_bandwidth", 2 * 4 * n / c / 1e9, "GB/s")
  end

  -- an MLP training step's forward and backward at batch 256 (784-512-10)
  do
    local x = G(tf.random.normal({256, 784}, {dtype = tf.float32, seed = 4}))
    local labels = G(tf.constant((function() local t = {} for i = 1, 256 do t[i] = (i % 10) + 1 end return t end)()))
    local w1 = tf.Variable(tf.random.normal({784, 512}, {dtype = tf.float32, seed = 5}) * 0.05)
    local b1 = tf.Variable(tf.zeros({512}))
    local w2 = tf.Variable(tf.random.normal({512, 10}, {dtype = tf.float32, seed = 6}) * 0.05)
    local b2 = tf.Variable(tf.zeros({10}))
    local vars = {w1, b1, w2, b2}
    local function step()
      local tape = tf.GradientTape()
      local loss = tape:record(function()
        local h = tf.nn.relu(tf.matmul(x, w1) + b1)
        local logits = tf.matmul(h, w2) + b2
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
      end)
      return tape:gradient(loss, vars)
    end
    local t = timing.timed(function(n)
      local g
      for _ = 1, n do g = step() end
      sync(g[1])
    end)
    result("mlp_step_b256", t * 1e6, "us")
  end

  -- the classic MNIST convnet's training step (forward, backward, SGD update)
  -- at batch 256: conv 3x3x32 relu, max-pool 2, conv 3x3x64 relu, max-pool 2,
  -- dense 1600 -> 10, sparse softmax cross-entropy
  do
    local b = small and 32 or 256
    local x = G(tf.random.uniform({b, 28, 28, 1}, {dtype = tf.float32, seed = 7}))
    local labels = G(tf.constant((function() local t = {} for i = 1, b do t[i] = (i % 10) + 1 end return t end)()))
    local k1 = tf.Variable(tf.random.normal({3, 3, 1, 32}, {dtype = tf.float32, seed = 8}) * 0.3)
    local c1 = tf.Variable(tf.zeros({32}))
    local k2 = tf.Variable(tf.random.normal({3, 3, 32, 64}, {dtype = tf.float32, seed = 9}) * 0.06)
    local c2 = tf.Variable(tf.zeros({64}))
    local w = tf.Variable(tf.random.normal({1600, 10}, {dtype = tf.float32, seed = 10}) * 0.03)
    local c3 = tf.Variable(tf.zeros({10}))
    local vars = {k1, c1, k2, c2, w, c3}
    local function step()
      local tape = tf.GradientTape()
      local loss = tape:record(function()
        local h = tf.nn.max_pool2d(tf.nn.relu(tf.nn.conv2d(x, k1, 1, "VALID") + c1), 2, 2, "VALID")
        h = tf.nn.max_pool2d(tf.nn.relu(tf.nn.conv2d(h, k2, 1, "VALID") + c2), 2, 2, "VALID")
        local logits = tf.matmul(tf.reshape(h, {b, 1600}), w) + c3
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
      end)
      local g = tape:gradient(loss, vars)
      for i, v in ipairs(vars) do v:assign_sub(g[i] * 0.01) end
      return loss
    end
    local t = timing.timed(function(n)
      local loss
      for _ = 1, n do loss = step() end
      sync(loss)
    end)
    result(small and "convnet_step_b32" or "convnet_step_b256", t * 1e6, "us")
  end
end)
