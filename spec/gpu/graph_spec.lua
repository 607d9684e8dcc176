-- Graph replay of device plans: a traced function whose inputs are all on
-- one GPU and whose steps all run on that device's stream (device kernels,
-- fused groups) runs step by step at its first call, is captured as a graph
-- of its launches at its second (CUDA: stream capture; the simulated GPU
-- records its queued work) and replayed at later calls with inputs of the
-- same shapes: one launch, no per-node dispatch.
-- tf.config.experimental.get_device_kernel_stats() counts captures
-- (graph_capture) and replays (graph_replay); the device memory captures
-- hold is bounded (set_device_graph_limit, get_device_graph_info).
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
  gpu_it("the first call runs step by step, the second is captured, the third replays it", function()
    local f = tf.fn(model)
    local x = tf.constant({{0.5, -1, 2}, {1.5, 0.25, -0.75}})
    local w = tf.constant({{0.2, -0.4, 1}, {0.3, 0.8, -0.6}, {-1, 0.5, 0.1}})
    local b = tf.constant({0.1, -0.2, 0.3})
    local c1, c2 = f(x, w, b)
    local gx, gw, gb = x:gpu(), w:gpu(), b:gpu()
    tf.config.experimental.reset_device_kernel_stats()
    local w1, w2 = on_gpu(function() return f(gx, gw, gb) end)      -- warm-up: step by step
    assert.tensor_near(c1, w1:cpu(), {rtol = 1e-5, atol = 1e-6})
    assert.tensor_near(c2, w2:cpu(), {rtol = 1e-5, atol = 1e-6})
    assert.is_nil(stats().graph_capture)
    assert.equal(1, stats().matmul.device)
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
    on_gpu(function() return f(x3:gpu()) end)                        -- captured for (3)
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

describe("the memory graph captures hold", function()
  local MB = 1024 * 1024
  local sim = os.getenv("LTF_GPU_SIM") == "1"
  local limit0
  before_each(function()
    limit0 = tf.config.experimental.get_device_graph_info().limit
    collectgarbage()
  end)
  after_each(function() tf.config.experimental.set_device_graph_limit(limit0) end)

  -- a plan whose capture holds about 'n' float32 elements per step output
  local function plan(scale)
    return tf.fn(function(x) return tf.reduce_sum(tf.exp(x * scale) + tf.square(x)) end)
  end
  local function run3(f, x)
    local r
    for _ = 1, 3 do r = on_gpu(function() return f(x) end) end
    return r
  end

  gpu_it("is counted, and released when the function dies", function()
    tf.config.experimental.set_device_graph_limit(64 * MB)
    local x = on_gpu(function() return tf.fill({4096}, 0.5) end)
    local before = tf.config.experimental.get_device_graph_info()
    local f = plan(2)
    local y = run3(f, x)
    assert.near(4096 * (math.exp(1) + 0.25), y:cpu():item(), 1e-1)
    local info = tf.config.experimental.get_device_graph_info()
    assert.equal(before.count + 1, info.count)
    -- at least the input's copy and the fused group's 4096-element result
    assert.is_true(info.bytes - before.bytes >= 2 * 4096 * 4, tostring(info.bytes - before.bytes))
    f = nil   -- luacheck: ignore
    collectgarbage()
    collectgarbage()
    info = tf.config.experimental.get_device_graph_info()
    assert.equal(before.count, info.count)
    assert.equal(before.bytes, info.bytes)
  end)

  gpu_it("limit 0 turns capture off; the results stay right", function()
    tf.config.experimental.set_device_graph_limit(0)
    local f = plan(1)
    local x = tf.constant({0.5, -1, 2}):gpu()
    tf.config.experimental.reset_device_kernel_stats()
    local y = run3(f, x)
    assert.near(math.exp(0.5) + math.exp(-1) + math.exp(2) + 0.25 + 1 + 4, y:cpu():item(), 1e-4)
    assert.is_nil(stats().graph_capture)
    assert.equal(3, stats().reduce_sum.device)
  end)

  gpu_it("a capture larger than the limit is not kept, and not tried again", function()
    local x = on_gpu(function() return tf.fill({65536}, 0.25) end)   -- 256 KiB per intermediate
    tf.config.experimental.set_device_graph_limit(128 * 1024)
    local f = plan(1)
    tf.config.experimental.reset_device_kernel_stats()
    local count0 = tf.config.experimental.get_device_graph_info().count
    for _ = 1, 4 do
      local y = on_gpu(function() return f(x) end)
      assert.near(65536 * (math.exp(0.25) + 0.0625), y:cpu():item(), 1)
    end
    assert.equal(1, stats().graph_capture.device)   -- captured once, ran, dropped
    assert.is_nil(stats().graph_replay)
    assert.equal(count0, tf.config.experimental.get_device_graph_info().count)
  end)

  gpu_it("evicts the least recently replayed capture to make room", function()
    tf.config.experimental.set_device_graph_limit(64 * MB)
    local x = on_gpu(function() return tf.fill({16384}, 0.1) end)
    local f, g = plan(1), plan(2)
    local before = tf.config.experimental.get_device_graph_info().bytes
    run3(f, x)
    local one = tf.config.experimental.get_device_graph_info()
    -- room for the captures alive now and half of one more of f's size
    tf.config.experimental.set_device_graph_limit(one.bytes + (one.bytes - before) // 2)
    local base = tf.config.experimental.get_device_graph_info()
    tf.config.experimental.reset_device_kernel_stats()
    run3(g, x)                                          -- g captured: f (least recent) dropped
    assert.equal(1, stats().graph_capture.device)
    local info = tf.config.experimental.get_device_graph_info()
    assert.is_true(info.bytes <= info.limit)
    assert.is_true(info.count <= base.count)
    tf.config.experimental.reset_device_kernel_stats()
    local y = run3(f, x)                                -- f: warm-up, capture (drops g), replay
    assert.near(16384 * (math.exp(0.1) + 0.01), y:cpu():item(), 0.5)
    assert.equal(1, stats().graph_capture.device)
    assert.equal(1, stats().graph_replay.device)
    tf.config.experimental.reset_device_kernel_stats()
    run3(g, x)                                          -- g dropped once before: captured again
    assert.equal(1, stats().graph_capture.device)
    tf.config.experimental.reset_device_kernel_stats()
    run3(f, x)                                          -- f dropped twice: runs step by step now
    assert.is_nil(stats().graph_capture)
    assert.is_nil(stats().graph_replay)
    assert.equal(3, stats().reduce_sum.device)
  end)

  gpu_it("captures are dropped before an allocation would fail (the emergency collection)", function()
    if not sim or os.getenv("LTF_GPU_SIM_MEMORY") ~= "64M" then
      pending("needs the simulated GPU's small memory (LTF_GPU_SIM=1 LTF_GPU_SIM_MEMORY=64M)")
      return
    end
    tf.config.experimental.set_device_graph_limit(1024 * MB)
    local x = on_gpu(function() return tf.fill({2 * MB}, 0.5) end)   -- 8 MiB
    local f = plan(1)
    run3(f, x)
    local held = tf.config.experimental.get_device_graph_info()
    assert.is_true(held.bytes >= 16 * MB)
    -- blocks up to the device's end: the last ones fit only once the capture is gone
    local keep, ok, err = {}, true, nil
    for i = 1, 6 do   -- 8 (x) + 48 MiB: fits a 64 MiB device only without the capture
      ok, err = pcall(function() return on_gpu(function() return tf.zeros({2 * MB}) end) end)
      if not ok then break end
      keep[i] = err
    end
    assert.is_true(ok, err and tostring(err))
    local info = tf.config.experimental.get_device_graph_info()
    assert.is_true(info.bytes < held.bytes)
    keep = nil   -- luacheck: ignore
  end)

  it("set_device_graph_limit refuses what is not a byte count", function()
    local ok, err = pcall(tf.config.experimental.set_device_graph_limit, -1)
    assert.is_false(ok)
    assert.equal("ValueError", err.kind)
    assert.equal("set_device_graph_limit: expected a byte count >= 0, got -1", err.message)
    ok, err = pcall(tf.config.experimental.set_device_graph_limit, 1.5)
    assert.is_false(ok)
    assert.equal("set_device_graph_limit: expected a byte count >= 0, got 1.5", err.message)
  end)
end)
