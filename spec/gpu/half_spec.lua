-- float16 and bfloat16 on "the GPU" (a real one, or the simulated one with
-- LTF_GPU_SIM=1, which runs the CUDA kernels' bodies compiled for the
-- host): each op runs on the host (float32 copies, rounded back) and on the
-- GPU on the same inputs, and the values must agree: moves, casts and
-- comparisons exactly, the rest within one step of the half dtype (2^-10
-- for float16, 2^-7 for bfloat16: both sides round float32 values that may
-- differ by an ulp). Kernel statistics show each op ran a device kernel:
-- natively (elementwise, reductions, softmax, matmul, moves, optimizer
-- updates) or on float32 copies made on the device (scans, conv2d, pools).
local tf = require("tf")

local gpu = require("gpu_support")
local GPU, gpu_it = gpu.GPU, gpu.make_it(it, function(why) pending(why) end)
local values, compare = gpu.values, gpu.compare

local F16, BF16 = tf.float16, tf.bfloat16
local HALVES = {F16, BF16}

local cases = {
  {op = "add", make = function(dt)
    return function(a, b) return a + b, a - b, a * b, a / b end, {values({2, 3}, dt), values({3}, dt, "pos", 1)}
  end},
  {op = "maximum", make = function(dt)
    return tf.maximum, {values({3, 4}, dt), values({3, 1}, dt, nil, 1)}
  end},
  {op = "less", make = function(dt)
    return function(a, b) return tf.less(a, b), tf.equal(a, b) end, {values({5}, dt), values({5}, dt, nil, 4)}
  end},
  {op = "exp", make = function(dt)
    return function(x) return tf.exp(x), tf.tanh(x), tf.sigmoid(x), tf.sqrt(tf.abs(x)), tf.math.log1p(tf.abs(x)) end,
           {values({3, 5}, dt)}
  end},
  {op = "cast", make = function(dt)
    local other = dt == F16 and BF16 or F16
    return function(x, f)
      return tf.cast(x, tf.float32), tf.cast(x, tf.int32), tf.cast(x, tf.bool), tf.cast(x, other), tf.cast(f, dt)
    end, {values({2, 5}, dt), tf.constant({1 / 3, 2049, 65520, 1e-8, -3e38, 0 / 0}, tf.float32)}
  end},
  {op = "where", make = function(dt)
    return tf.where, {values({2, 4}, tf.bool), values({2, 4}, dt), values({4}, dt, nil, 2)}
  end},
  {op = "reduce_sum", make = function(dt)
    return function(x)
      return tf.reduce_sum(x), tf.reduce_sum(x, -1), tf.reduce_mean(x, 1), tf.reduce_max(x, {1, 3}, true),
             tf.reduce_prod(x, -1)
    end, {values({3, 4, 5}, dt)}, true
  end},
  {op = "argmax", make = function(dt)
    return function(x) return tf.argmax(x, -1), tf.argmin(x, -2) end, {values({4, 6}, dt)}
  end},
  {op = "softmax", make = function(dt)
    return function(x) return tf.nn.softmax(x), tf.nn.log_softmax(x, -2) end, {values({3, 5}, dt)}, true
  end},
  {op = "sparse_softmax_cross_entropy_with_logits", make = function(dt)
    return function(logits, labels) return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits) end,
           {values({4, 5}, dt), tf.constant({1, 5, 3, 2}, tf.int32)}, true
  end},
  {op = "matmul", make = function(dt)
    return function(a, b)
      return tf.matmul(a, b), tf.matmul(a, b, {transpose_a = true}), tf.matmul(b, a, {transpose_b = true})
    end, {values({2, 4, 4}, dt), values({4, 4}, dt, nil, 3)}, true
  end},
  {op = "transpose", make = function(dt)
    return function(x) return tf.transpose(x), tf.transpose(x, {2, 3, 1}) end, {values({2, 3, 4}, dt)}
  end},
  {op = "concat", make = function(dt)
    return function(a, b) return tf.concat({a, b}, -1), tf.stack({a, b}) end,
           {values({2, 3}, dt), values({2, 3}, dt, nil, 1)}
  end},
  {op = "gather", make = function(dt)
    return function(x, i) return tf.gather(x, i), tf.gather(x, i, {axis = -1}) end,
           {values({3, 3}, dt), tf.constant({3, 1, 2, 1}, tf.int64)}
  end},
  {op = "pad", make = function(dt)
    return function(x) return tf.pad(x, {{1, 0}, {2, 1}}), tf.tile(x, {2, 1}), tf.reverse(x, {1}), x[{2, {1, 3}}] end,
           {values({3, 4}, dt)}
  end},
  {op = "fill", make = function(dt)
    return function()
      return tf.fill({2, 3}, tf.constant(-2.5, dt)), tf.zeros({4}, dt), tf.ones({2, 2}, dt), tf.eye(3, {dtype = dt})
    end, {}
  end},
  -- run on float32 copies the device makes with its cast kernel
  {op = "cumsum", make = function(dt)
    return function(x) return tf.cumsum(x), tf.cumsum(x, -1, {exclusive = true}) end, {values({3, 4}, dt)}, true
  end},
  {op = "conv2d", make = function(dt)
    return function(x, w) return tf.nn.conv2d(x, w, 1, "SAME"), tf.nn.max_pool2d(x, 2, 2, "VALID") end,
           {values({1, 4, 4, 2}, dt), values({2, 2, 2, 3}, dt, nil, 1)}, true
  end},
}

describe("float16 and bfloat16 device kernels against the CPU", function()
  for _, c in ipairs(cases) do
    gpu_it(c.op .. " (float16, bfloat16)", function()
      tf.config.experimental.reset_device_kernel_stats()
      for _, dt in ipairs(HALVES) do
        local f, inputs, loose = c.make(dt)
        compare(("%s %s"):format(c.op, dt.name), f, inputs, loose)
      end
      local s = tf.config.experimental.get_device_kernel_stats()[c.op]
      assert.is_table(s, c.op .. " did not run on the GPU")
      if ("," .. (os.getenv("LTF_GPU_SIM_NO_KERNEL") or "") .. ","):find("," .. c.op .. ",", 1, true) then
        assert.is_true(s.host > 0)   -- the simulated GPU was told it has no kernel: soft placement
        return
      end
      assert.is_true(s.device >= #HALVES, ("%s: %d device kernel runs, %d emulated, %d on the host")
                     :format(c.op, s.device, s.emulated, s.host))
      assert.equal(0, s.host, c.op .. " fell back to the host")
    end)
  end

  gpu_it("keeps the dtype on the GPU and rounds as the CPU does", function()
    local x = tf.constant({2048, 256}, F16):gpu()
    assert.equal(GPU, x.device)
    assert.equal(F16, x.dtype)
    local y = x + tf.constant(1, F16)
    assert.equal(GPU, y.device)
    assert.same({2048, 257}, y:totable())                              -- 2049 rounds to 2048, 257 is exact
    assert.equal(2052, tf.reduce_sum(tf.constant({2048, 1, 1, 1, 1}, F16):gpu()):item())   -- float32 sums
    assert.equal(1004, tf.matmul(tf.constant({{1000, 1, 1, 1, 1}}, BF16):gpu(), tf.ones({5, 1}, BF16):gpu()):item())
    assert.equal(0.333251953125, tf.cast(tf.constant(1 / 3, tf.float64):gpu(), F16):item())
  end)
end)

describe("random values of a half dtype on the GPU", function()
  gpu_it("are the float32 draws rounded (the kernel runs on a float32 buffer)", function()
    tf.config.experimental.reset_device_kernel_stats()
    for _, dt in ipairs(HALVES) do
      local h, f = tf.device("/gpu:0", function()
        return tf.random.stateless_uniform({64}, {1, 2}, {dtype = dt}), tf.random.stateless_uniform({64}, {1, 2})
      end)
      assert.equal(GPU, h.device)
      assert.equal(dt, h.dtype)
      assert.same(tf.cast(f, dt):totable(), h:totable())
      local n = tf.device("/gpu:0", function() return tf.random.normal({64}, {dtype = dt, seed = 5}) end)
      assert.equal(dt, n.dtype)
    end
    local st = tf.config.experimental.get_device_kernel_stats()
    assert.equal(4, st.random_uniform.device)
    assert.equal(2, st.random_normal.device)
  end)
end)

describe("traced functions on float16 GPU tensors", function()
  gpu_it("replay as a captured graph when every kernel takes them, step by step when one runs on copies", function()
    local native = tf.fn(function(a, b) return tf.nn.relu(a * b + 1), tf.reduce_sum(a) end, {autograph = false})
    local staged = tf.fn(function(a, b) return tf.nn.relu(a * b + 1), tf.nn.gelu(a) end, {autograph = false})
    local x = tf.constant({{1, -2}, {3, 4}}, F16)
    local want_y = {{2, 5}, {10, 17}}
    local g = x:gpu()
    tf.config.experimental.reset_device_kernel_stats()
    for _ = 1, 3 do
      local y, s = native(g, g)
      assert.equal(GPU, y.device)
      assert.same(want_y, y:totable())
      assert.equal(6, s:item())
    end
    local st = tf.config.experimental.get_device_kernel_stats()
    assert.is_table(st.graph_replay, "no replay of the captured plan")   -- captured at a first or second call
    assert.is_true(st.graph_replay.device >= 1)
    tf.config.experimental.reset_device_kernel_stats()
    local want_gelu = tf.nn.gelu(x):totable()
    for _ = 1, 3 do
      local y, c = staged(g, g)
      assert.same(want_y, y:totable())
      assert.same(want_gelu, c:totable())
    end
    st = tf.config.experimental.get_device_kernel_stats()
    -- gelu's float32 temporaries are not the graph's: no capture
    assert.is_nil(st.graph_replay)
    assert.equal(3, st.gelu.device)
  end)
end)

describe("float16 and bfloat16 variables on the GPU", function()
  local G = {{0.5, -1.0, 2.0, 0.25}, {-0.25, 0.75, 1.5, -2.0}, {1.0, 0.1, -3.0, 0.5}}
  local function run(make, dtype, scope)
    return tf.device(scope, function()
      local v = tf.Variable(tf.constant({1.0, -2.0, 0.5, 3.0}, dtype))
      local opt = make()
      local out = {}
      for s = 1, #G do
        opt:apply_gradients({{tf.constant(G[s], dtype), v}})
        out[s] = v:value()
      end
      return out, v:value()
    end)
  end
  for _, o in ipairs({
    {"apply_sgd", "SGD", function() return tf.keras.optimizers.SGD{learning_rate = 0.1} end},
    {"apply_momentum", "SGD with momentum", function() return tf.keras.optimizers.SGD{learning_rate = 0.1, momentum = 0.9} end},
    {"apply_adam", "Adam", function() return tf.keras.optimizers.Adam{learning_rate = 0.05} end},
    {"apply_rmsprop", "RMSprop", function() return tf.keras.optimizers.RMSprop{learning_rate = 0.01} end},
  }) do
    local op, name, make = o[1], o[2], o[3]
    gpu_it(name .. " updates them in place on the GPU with the CPU's values", function()
      for _, dtype in ipairs(HALVES) do
        tf.config.experimental.reset_device_kernel_stats()
        local c = run(make, dtype, "/cpu:0")
        local g, last = run(make, dtype, "/gpu:0")
        assert.equal(GPU, last.device)
        assert.equal(dtype, last.dtype)
        for s = 1, #G do
          -- the same float computations per element, rounded once: equal
          assert.same(c[s]:totable(), g[s]:totable())
        end
        local st = tf.config.experimental.get_device_kernel_stats()[op]
        assert.is_table(st, op .. " did not run on the GPU")
        assert.equal(#G, st.device)
      end
    end)
  end
  gpu_it("trains a float16 Dense layer under tf.device('/gpu:0') as on the CPU", function()
    local w0 = tf.cast(tf.random.normal({3, 2}, {seed = 1}), F16)   -- on the host, the same start for both
    local function fit(scope)
      return tf.device(scope, function()
        local w = tf.Variable(tf.identity(w0))
        local b = tf.Variable(tf.zeros({2}, F16))
        local x = tf.cast(tf.constant({{1, 2, 3}, {0.5, -1, 2}, {-1, 0, 1}, {2, 2, -2}}), F16)
        local y = tf.constant({1, 2, 2, 1})
        local opt = tf.keras.optimizers.SGD{learning_rate = 0.1}
        local losses = {}
        for step = 1, 5 do
          local tape = tf.GradientTape()
          local loss = tape:record(function()
            return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, tf.matmul(x, w) + b))
          end)
          local gw, gb = table.unpack(tape:gradient(loss, {w, b}))
          opt:apply_gradients({{gw, w}, {gb, b}})
          losses[step] = loss:item()
        end
        return losses, w:value()
      end)
    end
    local lc, wc = fit("/cpu:0")
    local lg, wg = fit("/gpu:0")
    assert.equal(GPU, wg.device)
    assert.equal(F16, wg.dtype)
    assert.is_true(lc[5] < lc[1])
    for s = 1, 5 do assert.near(lc[s], lg[s], 4 * 2 ^ -10 * math.abs(lc[s]) + 1e-3) end
    assert.tensor_near(wc, wg:cpu(), {atol = 1e-2, rtol = 4 * 2 ^ -10})
  end)
end)
