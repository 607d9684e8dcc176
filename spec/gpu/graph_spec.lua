-- Graph replay of device plans: a traced function whose inputs are all on
-- one GPU and whose steps all run on that device's stream (device kernels,
-- fused groups) is captured as a graph of its launches at its first call
-- (CUDA: stream capture; the simulated GPU records its queued work) and
-- replayed at later calls with inputs of the same shapes: one launch, no
-- per-node dispatch. tf.config.experimental.get_device_kernel_stats()
-- counts captures (graph_capture) and replays (graph_replay).
local tf = require("tf")

local gpu = require("gpu_support")
local GPU, have_gpu, gpu_it = gpu.GPU, gpu.have_gpu, gpu.make_it(it, function(why) pending(why) end)

local function stats() return tf.config.experimental.get_device_kernel_stats() end
local function on_gpu(fn) return tf.device("/gpu:0", fn) end

local function model(x, w, b)
  local h = tf.nn.relu(tf.matmul(x, w) + b)
  return tf.reduce_sum(tf.tanh(h * 0.5) - h, 1), tf.nn.softmax(h)
end

describe("graph replay of device plans", function()
  gpu_it("the second call replays the first's launches, with the CPU's values", function()
    local f = tf.fn(model)
    local x = tf.constant({{0.5, -1, 2}, {1.5, 0.25, -0.75}})
    local w = tf.constant({{0.2, -0.4, 1}, {0.3, 0.8, -0.6}, {-1, 0.5, 0.1}})
    local b = tf.constant({0.1, -0.2, 0.3})
    local c1, c2 = f(x, w, b)
    local gx, gw, gb = x:gpu(), w:gpu(), b:gpu()
    tf.config.experimental.reset_device_kernel_stats()
    local g1, g2 = on_gpu(function() return f(gx, gw, gb) end)      -- captured
    assert.equal(GPU, g1.device)
    assert.tensor_near(c1, g1:cpu(), {rtol = 1e-5, atol = 1e-6})
    assert.tensor_near(c2, g2:cpu(), {rtol = 1e-5, atol = 1e-6})
    local s = stats()
    assert.equal(1, s.graph_capture.device)
    assert.is_nil(s.graph_replay)
    assert.equal(1, s.matmul.device)
    tf.config.experimental.reset_device_kernel_stats()
    local r1, r2 = on_gpu(function() return f(gx, gw, gb) end)      -- replayed
    assert.equal(GPU, r1.device)
    assert.tensor_near(c1, r1:cpu(), {rtol = 1e-5, atol = 1e-6})
    assert.tensor_near(c2, r2:cpu(), {rtol = 1e-5, atol = 1e-6})
    s = stats()
    assert.same({device = 1, emulated = 0, host = 0}, s.graph_replay)
    for op in pairs(s) do
      assert.is_true(op == "graph_replay", op .. " ran on its own during a replay")
    end
  end)

  gpu_it("replays read the new inputs, and earlier results are not overwritten", function()
    local f = tf.fn(function(x) return tf.exp(x) * 2 - tf.square(x) + tf.reduce_max(x) end)
    local a, b = tf.constant({0.1, -0.5, 1.25, 2}), tf.constant({3, -1, 0.5, 0})
    local ga = on_gpu(function() return f(a:gpu()) end)
    local gb = on_gpu(function() return f(b:gpu()) end)              -- replay with other values
    local ga2 = on_gpu(function() return f(a:gpu()) end)
    assert.tensor_near(f(a), ga:cpu(), {rtol = 1e-5, atol = 1e-6})
    assert.tensor_near(f(b), gb:cpu(), {rtol = 1e-5, atol = 1e-6})
    assert.tensor_near(f(a), ga2:cpu(), {rtol = 1e-5, atol = 1e-6})
  end)

  gpu_it("a call with other shapes runs the plan step by step (the capture stays for its shapes)", function()
    local f = tf.fn(function(x) return tf.reduce_sum(x * x + 1) end, {input_signature = {tf.TensorSpec({tf.None})}})
    local x3, x5 = tf.constant({1.0, 2, 3}), tf.constant({1.0, 2, 3, 4, 5})
    on_gpu(function() return f(x3:gpu()) end)
    tf.config.experimental.reset_device_kernel_stats()
    local y5 = on_gpu(function() return f(x5:gpu()) end)
    assert.near(60, y5:cpu():item(), 1e-5)
    assert.is_nil(stats().graph_replay)
    assert.equal(1, stats().reduce_sum.device)
    local y3 = on_gpu(function() return f(x3:gpu()) end)
    assert.near(17, y3:cpu():item(), 1e-5)
    assert.equal(1, stats().graph_replay.device)
  end)

  gpu_it("plans with stateful ops, variables or host inputs are not captured", function()
    local v = on_gpu(function() return tf.Variable({1.0, 2.0}) end)
    local fv = tf.fn(function(x) return v * x end)
    local fr = tf.fn(function(x) return x + tf.random.uniform({2}) end)
    local fh = tf.fn(function(x) return x * 3 end)
    local host = tf.constant({2.0, 3.0})   -- made outside the scope: on the host
    tf.config.experimental.reset_device_kernel_stats()
    for _ = 1, 2 do
      assert.same({2, 6}, on_gpu(function() return fv(host:gpu()) end):cpu():totable())
      on_gpu(function() return fr(host:gpu()) end)
      assert.same({6, 9}, on_gpu(function() return fh(host) end):cpu():totable())
    end
    local s = stats()
    assert.is_nil(s.graph_capture)
    assert.is_nil(s.graph_replay)
  end)

  gpu_it("a failure inside a replayed group is reported (integer division by zero)", function()
    local f = tf.fn(function(a, b) return (a + 1) // b end)
    local a = tf.constant({4, 5}, tf.int32):gpu()
    assert.same({5, 3}, on_gpu(function() return f(a, tf.constant({1, 2}, tf.int32):gpu()) end):cpu():totable())
    local ok = pcall(function()
      return on_gpu(function() return f(a, tf.constant({1, 0}, tf.int32):gpu()) end):cpu()
    end)
    assert.is_false(ok)
    assert.same({5, 3}, on_gpu(function() return f(a, tf.constant({1, 2}, tf.int32):gpu()) end):cpu():totable())
  end)
end)
