-- Device kernels of the indexing ops (gather_nd, scatter_nd,
-- tensor_scatter_nd_*, roll, ensure_shape, sequence_mask), the image resizes
-- and their gradients, the matrix moves of tf.linalg (band_part, diag,
-- diag_part, matrix_transpose), split_like and check_numerics
-- (core/cuda/kernels/index.cuh) against the CPU backend on "the GPU" (a real
-- one, or the simulated one with LTF_GPU_SIM=1, which runs the kernels'
-- __host__ __device__ bodies compiled for the host). Every dtype each op
-- takes; the values must be the CPU's exactly for moves and integers
-- (scatter sums, the bilinear weights and the resize gradients' sums are
-- computed in the CPU's order, so floats match too: float tolerances are
-- kernels_spec's, float32 rtol 1e-5, atol 1e-6; float64 1e-12). Each case
-- checks through tf.config.experimental.get_device_kernel_stats that the op
-- ran a device kernel, not the CPU kernel over copies.
local tf = require("tf")

local gpu = require("gpu_support")
local GPU, gpu_it = gpu.GPU, gpu.make_it(it, function(why) pending(why) end)
local values, flatten, compare = gpu.values, gpu.flatten, gpu.compare

local F32, F64, I32, I64, U8, B = tf.float32, tf.float64, tf.int32, tf.int64, tf.uint8, tf.bool
local FLOATS = {F32, F64}
local NUMERIC = {F32, F64, I32, I64, U8}
local ALL = {F32, F64, I32, I64, U8, B}

-- indices with duplicate positions (1-based)
local function idx(t, dtype) return tf.constant(t, dtype or tf.int32) end

-- op (the engine's op name, for the counts), dtypes, make(dtype) -> f, inputs
local cases = {
  {op = "gather_nd", dtypes = ALL, make = function(dt)
    return function(x, i, j)
      return tf.gather_nd(x, i), tf.gather_nd(x, j), tf.gather_nd(x, j, {batch_dims = 1})
    end, {values({3, 4, 2}, dt), idx({{2, 4}, {1, 1}, {3, 2}, {2, 4}}), idx({{3}, {1}, {2}}, tf.int64)}
  end},
  {op = "scatter_nd", dtypes = NUMERIC, make = function(dt)
    return function(i, u, j, v)
      return tf.scatter_nd(i, u, {5, 3}), tf.scatter_nd(j, v, {3, 2})
    end, {idx({{2}, {5}, {2}, {1}, {2}}), values({5, 3}, dt), idx({{1, 2}, {3, 1}, {1, 2}}, tf.int64),
          values({3}, dt, nil, 1)}
  end},
  {op = "tensor_scatter_nd_update", dtypes = ALL, make = function(dt)
    return function(t, i, u) return tf.tensor_scatter_nd_update(t, i, u) end,
           {values({4, 3}, dt), idx({{2}, {4}, {2}}), values({3, 3}, dt, nil, 2)}
  end},
  {op = "tensor_scatter_nd_add", dtypes = NUMERIC, make = function(dt)
    return function(t, i, u) return tf.tensor_scatter_nd_add(t, i, u) end,
           {values({4, 3}, dt), idx({{2}, {4}, {2}, {2}}), values({4, 3}, dt, nil, 2)}
  end},
  {op = "tensor_scatter_nd_sub", dtypes = NUMERIC, make = function(dt)
    return function(t, i, u) return tf.tensor_scatter_nd_sub(t, i, u) end,
           {values({4, 3}, dt), idx({{3, 1}, {1, 3}, {3, 1}}, tf.int64), values({3}, dt, nil, 2)}
  end},
  {op = "tensor_scatter_nd_max", dtypes = NUMERIC, make = function(dt)
    return function(t, i, u) return tf.tensor_scatter_nd_max(t, i, u) end,
           {values({6}, dt), idx({{2}, {6}, {2}, {1}}), values({4}, dt, nil, 3)}
  end},
  {op = "tensor_scatter_nd_min", dtypes = NUMERIC, make = function(dt)
    return function(t, i, u) return tf.tensor_scatter_nd_min(t, i, u) end,
           {values({6}, dt), idx({{2}, {6}, {2}, {1}}), values({4}, dt, nil, 3)}
  end},
  {op = "roll", dtypes = ALL, make = function(dt)
    return function(x) return tf.roll(x, 2, 1), tf.roll(x, {-1, 5, 1}, {2, 3, 2}) end, {values({3, 4, 5}, dt)}
  end},
  {op = "ensure_shape", dtypes = ALL, make = function(dt)
    return function(x) return tf.ensure_shape(x, {2, -1}) end, {values({2, 3}, dt)}
  end},
  {op = "sequence_mask", dtypes = ALL, make = function(dt)
    return function(l) return tf.sequence_mask(l, 5, dt), tf.sequence_mask(l, 2, dt) end,
           {tf.constant({{0, 3}, {-1, 7}, {5, 2}}, tf.int32)}
  end},
  {op = "resize_bilinear", dtypes = FLOATS, make = function(dt)
    return function(x) return tf.image.resize(x, {7, 5}), tf.image.resize(x, {2, 3}) end, {values({2, 4, 6, 3}, dt)}
  end},
  {op = "resize_nearest", dtypes = NUMERIC, make = function(dt)
    return function(x)
      return tf.image.resize(x, {7, 5}, {method = "nearest"}), tf.image.resize(x, {2, 3}, {method = "nearest"})
    end, {values({2, 4, 6, 3}, dt)}
  end},
  {op = "band_part", dtypes = ALL, make = function(dt)
    return function(x)
      return tf.linalg.band_part(x, 0, -1), tf.linalg.band_part(x, 1, 0), tf.linalg.band_part(x, -1, 2)
    end, {values({2, 4, 5}, dt)}
  end},
  {op = "diag", dtypes = ALL, make = function(dt)
    return function(d) return tf.linalg.diag(d), tf.linalg.diag(d, {num_rows = 3, num_cols = 5}) end,
           {values({2, 3}, dt)}
  end},
  {op = "diag_part", dtypes = ALL, make = function(dt)
    return function(x) return tf.linalg.diag_part(x) end, {values({2, 3, 5}, dt)}
  end},
  {op = "matrix_transpose", dtypes = ALL, make = function(dt)
    return function(x) return tf.linalg.matrix_transpose(x) end, {values({2, 3, 4}, dt)}
  end},
  {op = "check_numerics", dtypes = FLOATS, make = function(dt)
    return function(x) return tf.debugging.check_numerics(x, "fine") end, {values({3, 4}, dt)}
  end},
}

local function stats_of(op) return tf.config.experimental.get_device_kernel_stats()[op] end

local function assert_device(op, runs)
  local s = stats_of(op)
  assert.is_table(s, op .. " did not run on the GPU")
  assert.is_true(s.device >= runs, ("%s: %d device kernel runs, %d emulated, %d on the host")
                 :format(op, s.device, s.emulated, s.host))
  assert.equal(0, s.host, op .. " fell back to the host")
end

describe("index, image and matrix-move device kernels against the CPU", function()
  for _, c in ipairs(cases) do
    local names = {}
    for _, dt in ipairs(c.dtypes) do names[#names + 1] = dt.name end
    gpu_it(("%s (%s) runs a device kernel and matches the CPU"):format(c.op, table.concat(names, ", ")), function()
      tf.config.experimental.reset_device_kernel_stats()
      for _, dt in ipairs(c.dtypes) do
        local f, inputs = c.make(dt)
        compare(("%s %s"):format(c.op, dt.name), f, inputs)
      end
      assert_device(c.op, #c.dtypes)
    end)
  end

  gpu_it("scatters apply duplicate positions in order (update: the last wins; add: summed in order)", function()
    local i = idx({{2}, {2}, {1}, {2}})
    local u = tf.constant({1.5, 1e8, 3, -1e8}, tf.float32)
    local t = tf.constant({10, 20}, tf.float32)
    local function f(t_, i_, u_)
      return tf.tensor_scatter_nd_update(t_, i_, u_), tf.tensor_scatter_nd_add(t_, i_, u_), tf.scatter_nd(i_, u_, {2})
    end
    tf.config.experimental.reset_device_kernel_stats()
    local up, add, nd = tf.device("/gpu:0", function() return f(t:gpu(), i:gpu(), u:gpu()) end)
    assert.same({3, -1e8}, up:totable())
    -- in order, in float32: 20 + 1.5 = 21.5, + 1e8 rounds to 100000024, - 1e8 = 24
    -- (1e8 - 1e8 first would give 21.5)
    assert.same(flatten(select(2, f(t, i, u)):totable()), flatten(add:totable()))
    assert.same({13, 24}, add:totable())
    assert.same({3, 0}, nd:totable())
    assert_device("tensor_scatter_nd_add", 1)
    assert_device("scatter_nd", 1)
  end)

  gpu_it("sequence_mask without maxlen sizes its output from the data on the device", function()
    tf.config.experimental.reset_device_kernel_stats()
    local l = tf.constant({2, 0, 3}, tf.int64)
    local m = tf.device("/gpu:0", function() return tf.sequence_mask(l:gpu()) end)
    assert.equal(GPU, m.device)
    assert.same({{true, true, false}, {false, false, false}, {true, true, true}}, m:totable())
    local s = stats_of("sequence_mask")
    assert.equal(0, s.host)
    assert.equal(1, s.device)
  end)

  gpu_it("split_like (concat's gradient over unknown sizes) runs on the device in a traced gradient", function()
    local f = tf.fn(function(x, d)
      local tape = tf.GradientTape()
      tape:watch(x)
      local y = tape:record(function() return tf.concat({x, x * 2.0, x}, 1) end)
      return tape:gradient(y, x, {output_gradients = d})
    end, {input_signature = {tf.TensorSpec({-1, 3}, tf.float64), tf.TensorSpec({-1, 3}, tf.float64)}})
    for _, rows in ipairs({2, 3}) do
      local x = tf.zeros({rows, 3}, tf.float64)
      local d = values({3 * rows, 3}, F64)
      tf.config.experimental.reset_device_kernel_stats()
      compare("split_like rows " .. rows, f, {x, d})
      assert_device("split_like", 1)
    end
  end)
end)

describe("errors of the index device kernels", function()
  gpu_it("check_numerics raises the CPU's InvalidArgumentError text on the GPU", function()
    for _, dt in ipairs(FLOATS) do
      local cases_ = {
        {tf.constant({1, 0 / 0, 3}, dt), "NaN"},
        {tf.constant({1, 1 / 0, 3}, dt), "Inf"},
        {tf.constant({-1 / 0, 0 / 0, 3}, dt), "Inf and NaN"},
      }
      for _, c in ipairs(cases_) do
        local ok1, e1 = pcall(tf.debugging.check_numerics, c[1], "layer 2")
        local ok2, e2 = pcall(function()
          return tf.device("/gpu:0", function() return tf.debugging.check_numerics(c[1]:gpu(), "layer 2") end)
        end)
        assert.is_false(ok1)
        assert.is_false(ok2)
        assert.equal("InvalidArgumentError", e2.kind)
        assert.equal(e1.message, e2.message)
        assert.equal("check_numerics: layer 2 : Tensor had " .. c[2] .. " values", e2.message)
      end
    end
  end)

  gpu_it("an index out of range fails on the GPU as on the CPU", function()
    local x = values({3, 2}, F32)
    local bad = {
      function(p) return tf.gather_nd(p, tf.constant({{1, 1}, {4, 1}})) end,
      function(p) return tf.tensor_scatter_nd_add(p, tf.constant({{0}}), tf.ones({1, 2})) end,
      function(_) return tf.scatter_nd(tf.constant({{2}, {7}}), tf.ones({2}), {6}) end,
    }
    for k, f in ipairs(bad) do
      local ok1, e1 = pcall(function() return f(x):cpu() end)
      assert.is_false(ok1)
      assert.equal("InvalidArgumentError", e1.kind)
      assert.matches("indices are 1%-based", e1.message)
      local ok2, e2 = pcall(function()
        return tf.device("/gpu:0", function() return f(x:gpu()) end):cpu()
      end)
      assert.is_false(ok2, "case " .. k)
      -- reported where the host next waits for the device (the device's flag)
      assert.matches("index is out of range %(indices are 1%-based%)", tostring(e2.message or e2))
    end
  end)
end)

describe("gradients through the tape on the GPU", function()
  local grad_of = gpu.grad_of

  gpu_it("gather_nd's gradient (tensor_scatter_nd_add into zeros, duplicates summed) equals the CPU's", function()
    for _, dt in ipairs(FLOATS) do
      tf.config.experimental.reset_device_kernel_stats()
      local f = grad_of(function(x, i)
        return tf.reduce_sum(tf.gather_nd(x, i) * tf.reshape(tf.range(1, 13, 1, dt), {4, 3}))
      end)
      compare("gather_nd gradient " .. dt.name, f, {values({3, 2, 3}, dt), idx({{2, 1}, {3, 2}, {2, 1}, {1, 2}})})
      assert_device("gather_nd", 1)
      assert_device("tensor_scatter_nd_add", 1)
    end
  end)

  gpu_it("resize_bilinear's gradient (resize_bilinear_grad) equals the CPU's", function()
    for _, dt in ipairs(FLOATS) do
      for _, size in ipairs({{7, 9}, {2, 3}, {5, 5}}) do
        tf.config.experimental.reset_device_kernel_stats()
        local f = grad_of(function(x)
          local y = tf.image.resize(x, size)
          return tf.reduce_sum(tf.square(y))
        end)
        compare(("resize_bilinear gradient %s to %dx%d"):format(dt.name, size[1], size[2]), f,
                {values({2, 4, 5, 3}, dt)})
        assert_device("resize_bilinear", 1)
        assert_device("resize_bilinear_grad", 1)
      end
    end
  end)

  gpu_it("resize_nearest's gradient (resize_nearest_grad: each pixel sums what read it) equals the CPU's", function()
    for _, dt in ipairs(FLOATS) do
      for _, size in ipairs({{5, 7}, {2, 3}}) do
        tf.config.experimental.reset_device_kernel_stats()
        local w = tf.reshape(tf.range(1, size[1] * size[2] * 2 + 1, 1, dt), {1, size[1], size[2], 2})
        local f = grad_of(function(x)
          return tf.reduce_sum(tf.image.resize(x, size, {method = "nearest"}) * w)
        end)
        compare(("resize_nearest gradient %s to %dx%d"):format(dt.name, size[1], size[2]), f,
                {values({1, 3, 4, 2}, dt)})
        assert_device("resize_nearest_grad", 1)
      end
    end
  end)
end)
