-- Device kernels against the CPU backend: each op runs on the host and on
-- "the GPU" (a real one, or the simulated one with LTF_GPU_SIM=1, which runs
-- the CUDA kernels' __host__ __device__ bodies compiled for the host) on the
-- same inputs, for every dtype the op takes, and the values must agree:
--   integers, bool, and moves of any dtype: exactly;
--   float64: rtol 1e-12, atol 1e-12;
--   float32: rtol 1e-5, atol 1e-6 (the CPU's float32 exp/tanh/sigmoid are its
--            own polynomials, the device's are libm's / CUDA's);
--   reductions, matmul and the cross-entropies: float32 atol 1e-4, float64
--            atol 1e-10 (another summation order).
-- Each case also checks, through tf.config.experimental.get_device_kernel_stats,
-- that the op ran a device kernel (not the CPU kernel over copies).
local tf = require("tf")

local gpu = require("gpu_support")
local GPU, have_gpu, gpu_it = gpu.GPU, gpu.have_gpu, gpu.make_it(it, function(why) pending(why) end)

local F32, F64, I32, I64, U8, B = tf.float32, tf.float64, tf.int32, tf.int64, tf.uint8, tf.bool
local FLOATS = {F32, F64}
local NUMERIC = {F32, F64, I32, I64}
local ALL = {F32, F64, I32, I64, U8, B}

local values, flatten, compare = gpu.values, gpu.flatten, gpu.compare

local function dname(dt) return dt.name end

-- The cases: op (the engine's op name, for the counts), dtypes, and
-- make(dtype) -> f, inputs [, loose].
local cases = {
  {op = "add", dtypes = {F32, F64, I32, I64, U8}, make = function(dt)
    return function(a, b) return a + b end, {values({2, 3}, dt), values({3}, dt, nil, 1)}
  end},
  {op = "subtract", dtypes = NUMERIC, make = function(dt)
    return tf.subtract, {values({4, 1}, dt), values({1, 5}, dt, nil, 2)}
  end},
  {op = "multiply", dtypes = {F32, F64, I32, I64, U8}, make = function(dt)
    return tf.multiply, {values({2, 3, 4}, dt), values({4}, dt, nil, 3)}
  end},
  {op = "divide", dtypes = FLOATS, make = function(dt)
    return tf.divide, {values({3, 4}, dt), values({3, 4}, dt, "pos", 1)}
  end},
  {op = "floordiv", dtypes = NUMERIC, make = function(dt)
    return tf.math.floordiv, {values({3, 4}, dt), values({3, 4}, dt, "pos", 1)}
  end},
  {op = "floormod", dtypes = NUMERIC, make = function(dt)
    return tf.math.floormod, {values({3, 4}, dt), values({3, 4}, dt, "pos", 1)}
  end},
  {op = "pow", dtypes = FLOATS, make = function(dt)
    return tf.pow, {values({3, 4}, dt, "pos"), values({4}, dt, nil, 1)}
  end},
  {op = "maximum", dtypes = {F32, F64, I32, I64, U8}, make = function(dt)
    return tf.maximum, {values({3, 4}, dt), values({3, 1}, dt, nil, 1)}
  end},
  {op = "minimum", dtypes = NUMERIC, make = function(dt)
    return tf.minimum, {values({3, 4}, dt), values({3, 1}, dt, nil, 1)}
  end},
  {op = "less", dtypes = {F32, F64, I32, I64, U8}, make = function(dt)
    return tf.less, {values({5}, dt), values({5}, dt, nil, 4)}
  end},
  {op = "equal", dtypes = ALL, make = function(dt)
    return tf.equal, {values({5}, dt), values({5}, dt, nil, 4)}
  end},
  {op = "logical_and", dtypes = {B}, make = function(dt)
    return tf.logical_and, {values({6}, dt), values({6}, dt, nil, 1)}
  end},
  {op = "negative", dtypes = NUMERIC, make = function(dt) return tf.negative, {values({7}, dt)} end},
  {op = "abs", dtypes = NUMERIC, make = function(dt) return tf.abs, {values({7}, dt)} end},
  {op = "square", dtypes = NUMERIC, make = function(dt) return tf.square, {values({7}, dt)} end},
  {op = "relu", dtypes = NUMERIC, make = function(dt) return tf.nn.relu, {values({7}, dt)} end},
  {op = "exp", dtypes = FLOATS, make = function(dt) return tf.exp, {values({3, 5}, dt)} end},
  {op = "log", dtypes = FLOATS, make = function(dt) return tf.math.log, {values({3, 5}, dt, "pos")} end},
  {op = "sqrt", dtypes = FLOATS, make = function(dt) return tf.sqrt, {values({3, 5}, dt, "pos")} end},
  {op = "tanh", dtypes = FLOATS, make = function(dt) return tf.tanh, {values({3, 5}, dt)} end},
  {op = "sigmoid", dtypes = FLOATS, make = function(dt) return tf.sigmoid, {values({3, 5}, dt)} end},
  {op = "sin", dtypes = FLOATS, make = function(dt) return tf.sin, {values({3, 5}, dt)} end},
  {op = "cast", dtypes = ALL, make = function(dt)
    return function(x) return tf.cast(x, tf.float32), tf.cast(x, tf.int64), tf.cast(x, tf.bool) end,
           {values({2, 5}, dt)}
  end},
  {op = "where", dtypes = ALL, make = function(dt)
    return tf.where, {values({2, 4}, B), values({2, 4}, dt), values({4}, dt, nil, 2)}
  end},
  {op = "reduce_sum", dtypes = NUMERIC, make = function(dt)
    return function(x) return tf.reduce_sum(x), tf.reduce_sum(x, -1), tf.reduce_sum(x, {1, 3}, true) end,
           {values({3, 4, 5}, dt)}, true
  end},
  {op = "reduce_mean", dtypes = FLOATS, make = function(dt)
    return function(x) return tf.reduce_mean(x, -2) end, {values({3, 70}, dt)}, true
  end},
  {op = "reduce_max", dtypes = NUMERIC, make = function(dt)
    return function(x) return tf.reduce_max(x, -1), tf.reduce_min(x) end, {values({4, 6}, dt)}
  end},
  {op = "reduce_prod", dtypes = NUMERIC, make = function(dt)
    return function(x) return tf.reduce_prod(x, -1) end, {values({4, 3}, dt)}, true
  end},
  {op = "reduce_any", dtypes = {B}, make = function(dt)
    return function(x) return tf.reduce_any(x, -1), tf.reduce_all(x) end, {values({4, 3}, dt)}
  end},
  {op = "argmax", dtypes = NUMERIC, make = function(dt)
    return function(x) return tf.argmax(x, -1), tf.argmin(x, -2) end, {values({4, 6}, dt)}
  end},
  {op = "softmax", dtypes = FLOATS, make = function(dt)
    return function(x) return tf.nn.softmax(x), tf.nn.log_softmax(x, -2) end, {values({3, 5}, dt)}, true
  end},
  {op = "sparse_softmax_cross_entropy_with_logits", dtypes = FLOATS, make = function(dt)
    return function(logits, labels)
      return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
    end, {values({4, 5}, dt), tf.constant({1, 5, 3, 2}, tf.int32)}, true
  end},
  {op = "matmul", dtypes = NUMERIC, make = function(dt)
    return function(a, b)
      return tf.matmul(a, b), tf.matmul(a, b, {transpose_a = true}), tf.matmul(b, a, {transpose_b = true})
    end, {values({2, 4, 4}, dt), values({4, 4}, dt, nil, 3)}, true
  end},
  {op = "transpose", dtypes = ALL, make = function(dt)
    return function(x) return tf.transpose(x), tf.transpose(x, {2, 3, 1}) end, {values({2, 3, 4}, dt)}
  end},
  {op = "slice", dtypes = ALL, make = function(dt)
    return function(x) return tf.slice(x, {1, 2}, {-1, 2}) end, {values({3, 4}, dt)}
  end},
  {op = "concat", dtypes = ALL, make = function(dt)
    return function(a, b) return tf.concat({a, b}, -1), tf.stack({a, b}) end,
           {values({2, 3}, dt), values({2, 3}, dt, nil, 1)}
  end},
  {op = "gather", dtypes = ALL, make = function(dt)
    return function(x, i) return tf.gather(x, i), tf.gather(x, i, {axis = -1}) end,
           {values({3, 3}, dt), tf.constant({3, 1, 2, 1}, tf.int64)}
  end},
  {op = "fill", dtypes = {F32, F64, I32, I64}, make = function(dt)
    return function() return tf.fill({2, 3}, tf.constant(-2, dt)), tf.zeros({4}, dt), tf.ones({2, 2}, dt) end, {}
  end},
  {op = "cumsum", dtypes = {F32, F64, I32, I64, U8}, make = function(dt)
    return function(x)
      return tf.cumsum(x), tf.cumsum(x, -1, {exclusive = true}), tf.cumsum(x, 1, {reverse = true})
    end, {values({3, 4}, dt)}, true
  end},
  {op = "cumprod", dtypes = NUMERIC, make = function(dt)
    return function(x) return tf.math.cumprod(x, -1), tf.math.cumprod(x, 1, {exclusive = true, reverse = true}) end,
           {values({3, 4}, dt)}, true
  end},
  {op = "reverse", dtypes = ALL, make = function(dt)
    return function(x) return tf.reverse(x, -1), tf.reverse(x, {1, 2}) end, {values({3, 4}, dt)}
  end},
  {op = "broadcast_to", dtypes = ALL, make = function(dt)
    return function(x) return tf.broadcast_to(x, {2, 3, 4}) end, {values({3, 1}, dt)}
  end},
  {op = "tile", dtypes = ALL, make = function(dt)
    return function(x) return tf.tile(x, {2, 3}), tf.tile(x, {0, 1}) end, {values({2, 3}, dt)}
  end},
  {op = "pad", dtypes = ALL, make = function(dt)
    return function(x)
      return tf.pad(x, {{1, 2}, {0, 3}}), tf.pad(x, {{2, 1}, {1, 1}}, "REFLECT"),
             tf.pad(x, {{2, 1}, {3, 0}}, "SYMMETRIC")
    end, {values({3, 4}, dt)}
  end},
  {op = "split", dtypes = ALL, make = function(dt)
    return function(x)
      local a, b = table.unpack(tf.split(x, 2, {axis = -1}))
      local c, d, e = table.unpack(tf.split(x, {1, 0, -1}))
      return a, b, c, d, e
    end, {values({3, 4}, dt)}
  end},
  {op = "unstack", dtypes = ALL, make = function(dt)
    return function(x) return table.unpack(tf.unstack(x, nil, -1)) end, {values({3, 4}, dt)}
  end},
  {op = "one_hot", dtypes = {F32, F64, I32, I64}, make = function(dt)
    return function(i) return tf.one_hot(i, 4, {dtype = dt}), tf.one_hot(i, 3, {axis = 1, dtype = dt}) end,
           {tf.constant({{1, 4}, {0, 2}, {3, 5}}, tf.int32)}
  end},
  -- Gradients through a tape: loss = sum(y * c) with a fixed c, so dy = c.
  {op = "conv2d", dtypes = FLOATS, make = function(dt)
    return function(x, w)
      return tf.nn.conv2d(x, w, 1, "SAME"), tf.nn.conv2d(x, w, {2, 1}, "VALID", {dilations = {1, 2}}),
             tf.nn.conv2d(x, w, 2, {{0, 0}, {1, 2}, {0, 1}, {0, 0}})
    end, {values({2, 6, 5, 3}, dt), values({3, 2, 3, 4}, dt, nil, 1)}, true
  end},
  {op = "conv2d_backprop_input", dtypes = FLOATS, make = function(dt)
    return function(x, w, c)
      local tape = tf.GradientTape()
      tape:watch(x)
      tape:watch(w)
      local y = tape:record(function() return tf.reduce_sum(tf.nn.conv2d(x, w, {2, 1}, "SAME") * c) end)
      return table.unpack(tape:gradient(y, {x, w}))
    end, {values({2, 6, 5, 3}, dt), values({3, 2, 3, 4}, dt, nil, 1), values({2, 3, 5, 4}, dt, nil, 2)}, true
  end},
  {op = "conv2d_backprop_filter", dtypes = FLOATS, make = function(dt)
    return function(x, w, c)
      local tape = tf.GradientTape()
      tape:watch(w)
      local y = tape:record(function()
        return tf.reduce_sum(tf.nn.conv2d(x, w, 1, "VALID", {dilations = {2, 1}}) * c)
      end)
      return tape:gradient(y, w)
    end, {values({2, 6, 5, 3}, dt), values({3, 2, 3, 4}, dt, nil, 1), values({2, 2, 4, 4}, dt, nil, 2)}, true
  end},
  {op = "max_pool2d", dtypes = {F32, F64, I32, I64}, make = function(dt)
    return function(x) return tf.nn.max_pool2d(x, 2, 2, "VALID"), tf.nn.max_pool2d(x, 3, {1, 2}, "SAME") end,
           {values({2, 6, 5, 3}, dt)}
  end},
  {op = "avg_pool2d", dtypes = FLOATS, make = function(dt)
    return function(x) return tf.nn.avg_pool2d(x, 2, 2, "VALID"), tf.nn.avg_pool2d(x, 3, {1, 2}, "SAME") end,
           {values({2, 6, 5, 3}, dt)}
  end},
  {op = "max_pool2d_grad", dtypes = FLOATS, make = function(dt)
    return function(x, c)
      local tape = tf.GradientTape()
      tape:watch(x)
      local y = tape:record(function() return tf.reduce_sum(tf.nn.max_pool2d(x, 3, 1, "SAME") * c) end)
      return tape:gradient(y, x)
    end, {values({2, 6, 5, 3}, dt), values({2, 6, 5, 3}, dt, nil, 1)}
  end},
  {op = "avg_pool2d_grad", dtypes = FLOATS, make = function(dt)
    return function(x, c)
      local tape = tf.GradientTape()
      tape:watch(x)
      local y = tape:record(function() return tf.reduce_sum(tf.nn.avg_pool2d(x, 3, 2, "SAME") * c) end)
      return tape:gradient(y, x)
    end, {values({2, 6, 5, 3}, dt), values({2, 3, 3, 3}, dt, nil, 1)}
  end},
  {op = "gelu", dtypes = FLOATS, make = function(dt)
    return function(x) return tf.nn.gelu(x), tf.nn.gelu(x, true) end, {values({3, 4}, dt)}
  end},
  {op = "gelu_grad", dtypes = FLOATS, make = function(dt)
    return function(x)
      local tape = tf.GradientTape()
      tape:watch(x)
      local y = tape:record(function() return tf.reduce_sum(tf.nn.gelu(x, true)) end)
      return tape:gradient(y, x)
    end, {values({3, 4}, dt)}
  end},
  {op = "strided_slice", dtypes = ALL, make = function(dt)
    return function(x) return tf.strided_slice(x, {2, 4}, {5, 1}, {2, -1}), x[{tf.all, 2}], x[-1] end,
           {values({5, 4}, dt)}
  end},
  {op = "strided_slice_grad", dtypes = FLOATS, make = function(dt)
    return function(x)
      local tape = tf.GradientTape()
      tape:watch(x)
      local y = tape:record(function()
        return tf.reduce_sum(tf.square(tf.strided_slice(x, {2, 4}, {5, 1}, {2, -1})))
      end)
      return tape:gradient(y, x)
    end, {values({5, 4}, dt)}
  end},
  {op = "unsorted_segment_sum", dtypes = NUMERIC, make = function(dt)
    return function(x, ids) return tf.math.unsorted_segment_sum(x, ids, 4) end,
           {values({5, 3}, dt), tf.constant({2, 4, -1, 2, 1}, tf.int32)}, true
  end},
  {op = "range", dtypes = NUMERIC, make = function(dt)
    return function() return tf.range(1, 20, 3, dt), tf.range(9, 0, -2, dt) end, {}
  end},
  {op = "linspace", dtypes = FLOATS, make = function(dt)
    return function() return tf.linspace(-1.5, 2.25, 7, {dtype = dt}) end, {}
  end},
  {op = "eye", dtypes = ALL, make = function(dt)
    return function() return tf.eye(3, 4, {dtype = dt}), tf.eye(2, nil, {batch_shape = {2}, dtype = dt}) end, {}
  end},
}

describe("device kernels against the CPU", function()
  for _, c in ipairs(cases) do
    local names = {}
    for _, dt in ipairs(c.dtypes) do names[#names + 1] = dname(dt) end
    gpu_it(("%s (%s) runs a device kernel and matches the CPU"):format(c.op, table.concat(names, ", ")), function()
      tf.config.experimental.reset_device_kernel_stats()
      for _, dt in ipairs(c.dtypes) do
        local f, inputs, loose = c.make(dt)
        compare(("%s %s"):format(c.op, dname(dt)), f, inputs, loose)
      end
      local s = tf.config.experimental.get_device_kernel_stats()[c.op]
      assert.is_table(s, c.op .. " did not run on the GPU")
      if ("," .. (os.getenv("LTF_GPU_SIM_NO_KERNEL") or "") .. ","):find("," .. c.op .. ",", 1, true) then
        assert.is_true(s.host > 0)   -- the simulated GPU was told it has no kernel: soft placement
        return
      end
      assert.is_true(s.device >= #c.dtypes, ("%s: %d device kernel runs, %d emulated, %d on the host")
                     :format(c.op, s.device, s.emulated, s.host))
      assert.equal(0, s.host, c.op .. " fell back to the host")
    end)
  end
end)

describe("tf.config.experimental.get_device_kernel_stats", function()
  it("is a table (empty without a GPU), and reset clears it", function()
    tf.config.experimental.reset_device_kernel_stats()
    assert.same({}, tf.config.experimental.get_device_kernel_stats())
  end)
  gpu_it("counts soft placement as host and device kernels as device", function()
    tf.config.experimental.reset_device_kernel_stats()
    local x = tf.constant({3, 1, 2, 3}, tf.int32):gpu()
    local u = tf.unique(x)   -- sizes its output from the data: on the device since alloc.cuh
    assert.equal(GPU, u.device)
    local y = x + 1
    assert.equal(GPU, y.device)
    -- scripts/test.sh leaves cumsum without a kernel on the simulated GPU (soft placement)
    local soft = (os.getenv("LTF_GPU_SIM_NO_KERNEL") or ""):find("cumsum") ~= nil
    local c = tf.cumsum(tf.constant({1.0, 2.0}):gpu())
    assert.equal(GPU, c.device)
    local s = tf.config.experimental.get_device_kernel_stats()
    assert.equal(0, s.unique.host)
    assert.equal(1, s.unique.device)
    assert.equal(1, s.add.device)
    assert.equal(0, s.add.host)
    assert.equal(soft and 1 or 0, s.cumsum.host)
    assert.equal(soft and 0 or 1, s.cumsum.device)
  end)
end)
