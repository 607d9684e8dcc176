-- Traced functions on a GPU keep their fused elementwise groups: each group
-- runs as one call of the backend's fused_run (on CUDA one NVRTC kernel; on
-- the simulated GPU the members' device bodies over blocks, on its stream),
-- counted in tf.config.experimental.get_device_kernel_stats().fused_group,
-- while the other steps run op by op on their device kernels.
local tf = require("tf")

local gpu = require("gpu_support")
local GPU, have_gpu, gpu_it = gpu.GPU, gpu.have_gpu, gpu.make_it(it, function(why) pending(why) end)

local function stats()
  return tf.config.experimental.get_device_kernel_stats()
end

-- 20 elementwise ops in one in-tree (each intermediate read once): unary,
-- binary with scalars, with a broadcast row and with the input again
local function chain(x, b)
  local y = x * 1.5 + b          -- 2
  y = tf.tanh(y) - 0.25          -- 4
  y = tf.exp(y) * b              -- 6
  y = tf.sqrt(tf.abs(y) + 1)     -- 9
  y = tf.maximum(y, 0.5) / 3     -- 11
  y = tf.square(tf.sigmoid(y))   -- 13
  y = tf.math.log1p(y) * 2 - x   -- 16
  y = tf.sin(tf.nn.relu(y)) + b  -- 19
  return tf.negative(y)          -- 20
end

describe("fused groups of traced functions on the GPU", function()
  gpu_it("a 20-op elementwise chain gives the CPU's values with one fused launch", function()
    local f = tf.fn(chain)
    local x = tf.constant({{0.1, -0.2, 0.3, 1.5}, {-1.25, 0.75, 2.0, -0.5}, {0, 0.3, -0.9, 0.45}})
    local b = tf.constant({0.5, -0.25, 1.0, 0.125})
    local c = f(x, b)
    tf.config.experimental.reset_device_kernel_stats()
    local g = tf.device("/gpu:0", function() return f(x:gpu(), b:gpu()) end)
    assert.equal(GPU, g.device)
    assert.tensor_near(c, g:cpu(), {rtol = 1e-5, atol = 1e-6})
    local s = stats()
    assert.same({device = 1, emulated = 0, host = 0}, s.fused_group)
    for _, op in ipairs({"add", "multiply", "tanh", "exp", "sqrt", "maximum", "sigmoid", "relu", "sin"}) do
      assert.is_nil(s[op], op .. " ran as its own kernel")
    end
    -- the second call is captured (one more fused launch, recorded), the
    -- third replays it (spec/gpu/graph_spec.lua): no new fused launch
    g = tf.device("/gpu:0", function() return f(x:gpu(), b:gpu()) end)
    assert.equal(2, stats().fused_group.device)
    assert.equal(1, stats().graph_capture.device)
    g = tf.device("/gpu:0", function() return f(x:gpu(), b:gpu()) end)
    assert.tensor_near(c, g:cpu(), {rtol = 1e-5, atol = 1e-6})
    assert.equal(2, stats().fused_group.device)
    assert.equal(1, stats().graph_replay.device)
  end)

  gpu_it("float64 and integer groups, beside ops that are not fused (matmul, reduce_sum)", function()
    local f = tf.fn(function(a, w, k)
      local h = tf.matmul(a, w)
      local y = tf.tanh(h * 0.5 + 1) * h - tf.square(h)
      local q = (k * 3 + 7) % 5 - k
      return tf.reduce_sum(y, 1), q
    end)
    local a = tf.constant({{0.5, -1}, {2, 0.25}, {1, 1}}, tf.float64)
    local w = tf.constant({{1, 2, -1}, {0.5, -0.5, 3}}, tf.float64)
    local k = tf.constant({-4, 9, 13, 0, 2}, tf.int32)
    local c1, c2 = f(a, w, k)
    tf.config.experimental.reset_device_kernel_stats()
    local g1, g2 = tf.device("/gpu:0", function() return f(a:gpu(), w:gpu(), k:gpu()) end)
    assert.equal(GPU, g1.device)
    assert.equal(GPU, g2.device)
    assert.tensor_near(c1, g1:cpu(), {rtol = 1e-12, atol = 1e-12})
    assert.same(c2:totable(), g2:cpu():totable())
    local s = stats()
    assert.equal(2, s.fused_group.device)
    assert.equal(1, s.matmul.device)
    assert.equal(1, s.reduce_sum.device)
  end)

  gpu_it("inputs on the host are copied to the group's device; results equal the eager GPU ones", function()
    local f = tf.fn(function(x) return tf.exp(x) * 2 - tf.abs(x) + 1 end)
    local x = tf.constant({-1.5, 0, 0.25, 3})
    local g = tf.device("/gpu:0", function() return f(x) end)
    assert.equal(GPU, g.device)
    local e = tf.device("/gpu:0", function() return tf.exp(x:gpu()) * 2 - tf.abs(x:gpu()) + 1 end)
    assert.tensor_near(e:cpu(), g:cpu(), {rtol = 1e-6, atol = 1e-6})
  end)

  gpu_it("an integer division by zero inside a fused group fails, as the eager kernel does", function()
    local f = tf.fn(function(a, b) return (a * 2) // b + 1 end)
    local a, b = tf.constant({4, 5, 6}, tf.int32), tf.constant({1, 0, 2}, tf.int32)
    local ok, err = pcall(function()
      local g = tf.device("/gpu:0", function() return f(a:gpu(), b:gpu()) end)
      return g:cpu()
    end)
    assert.is_false(ok)
    assert.matches("division by zero", tostring(err.message or err))
  end)

  gpu_it("gradients of a traced function on the GPU equal the CPU's (both passes fused on the device)", function()
    local f = tf.fn(function(x) return tf.tanh(x * 2 + 1) * x end)
    local function grad(x)
      local tape = tf.GradientTape()
      tape:watch(x)
      local y = tape:record(function() return tf.reduce_sum(f(x)) end)
      return tape:gradient(y, x)
    end
    local x = tf.constant({0.1, -0.4, 0.7})
    local c = grad(x)
    tf.config.experimental.reset_device_kernel_stats()
    local g = grad(x:gpu())
    assert.equal(GPU, g.device)
    assert.tensor_near(c, g:cpu(), {rtol = 1e-5, atol = 1e-6})
    assert.is_true(stats().fused_group.device >= 1)
  end)
end)
