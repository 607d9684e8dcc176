-- Sorting on "the GPU" (a real one, or the simulated one with LTF_GPU_SIM=1,
-- which runs the CUDA kernels' bodies compiled for the host): tf.sort,
-- tf.argsort, tf.math.top_k, tf.searchsorted and the gradients of sort and
-- top_k (sort_grad) run device kernels and give the CPU's results exactly:
-- every dtype, both directions, ties in index order, NaN above +inf, -0
-- before +0 in sorted values, empty inputs, k = 0, other axes.
local tf = require("tf")

local gpu = require("gpu_support")
local GPU, gpu_it = gpu.GPU, gpu.make_it(it, function(why) pending(why) end)
local values, flatten, compare = gpu.values, gpu.flatten, gpu.compare

local F32, F64, I32, I64, U8 = tf.float32, tf.float64, tf.int32, tf.int64, tf.uint8
local SORTABLE = {F32, F64, I32, I64, U8}
local nan, inf = 0 / 0, math.huge

local ran_on_device = gpu.ran_on_device

-- rows with many ties (values() repeats with period 13), and a float row of specials
local function inputs(dt)
  local t = {values({3, 17}, dt), values({2, 2, 33}, dt, nil, 4), values({1}, dt)}
  if dt == F32 or dt == F64 then
    t[#t + 1] = tf.constant({{3, nan, -1, inf, 3, -0.0, 0.0, -inf, nan, -1, 0.0, -0.0}}, dt)
  end
  return t
end

describe("sorting on the GPU", function()
  gpu_it("tf.sort and tf.argsort give the CPU's results (every dtype, both directions, other axes)", function()
    tf.config.experimental.reset_device_kernel_stats()
    for _, dt in ipairs(SORTABLE) do
      for i, x in ipairs(inputs(dt)) do
        for _, dir in ipairs({"ASCENDING", "DESCENDING"}) do
          local label = ("%s input %d %s"):format(dt.name, i, dir)
          compare("sort " .. label, function(v) return tf.sort(v, {direction = dir}) end, {x})
          compare("argsort " .. label, function(v)
            return tf.argsort(v, {direction = dir}), tf.argsort(v, {direction = dir, index_type = I64})
          end, {x})
          if #x.shape > 1 then
            compare("sort axis 1 " .. label, function(v) return tf.sort(v, {axis = 1, direction = dir}) end, {x})
          end
        end
      end
    end
    ran_on_device("sort", 30)
    ran_on_device("argsort", 30)
  end)

  gpu_it("keeps -0 before +0 in sorted values, and NaN last (first when descending)", function()
    local x = tf.constant({0.0, -0.0, nan, 1.0, -0.0, 0.0, -inf}, F64)
    local up = tf.device("/gpu:0", function() return tf.sort(x:gpu()) end)
    local down = tf.device("/gpu:0", function() return tf.sort(x:gpu(), {direction = "DESCENDING"}) end)
    local u, d = up:totable(), down:totable()
    -- 1 / v tells -0 (-inf) from +0 (inf)
    assert.same({-inf, -inf, -inf, inf, inf, 1}, {u[1], 1 / u[2], 1 / u[3], 1 / u[4], 1 / u[5], u[6]})
    assert.is_true(u[7] ~= u[7])
    assert.is_true(d[1] ~= d[1])
    assert.same({1, inf, inf, -inf, -inf, -inf}, {d[2], 1 / d[3], 1 / d[4], 1 / d[5], 1 / d[6], d[7]})
    -- positions: -0 and +0 are equal, in input order
    local p = tf.device("/gpu:0", function() return tf.argsort(x:gpu()) end)
    assert.same({7, 1, 2, 5, 6, 4, 3}, p:totable())
  end)

  gpu_it("tf.math.top_k gives the CPU's values and indices (ties: the lower position first; k = 0 .. n)", function()
    tf.config.experimental.reset_device_kernel_stats()
    local runs = 0
    for _, dt in ipairs(SORTABLE) do
      for i, x in ipairs(inputs(dt)) do
        local n = x.shape[#x.shape]
        for _, k in ipairs({0, 1, n // 2, n}) do
          compare(("top_k %s input %d k %d"):format(dt.name, i, k), function(v)
            local vals, idx = tf.math.top_k(v, k)
            local _, idx64 = tf.math.top_k(v, k, {index_type = I64})
            return vals, idx, idx64
          end, {x})
          runs = runs + 2
        end
      end
    end
    ran_on_device("top_k", runs)
  end)

  gpu_it("tf.searchsorted gives the CPU's positions (left and right, int32 and int64)", function()
    tf.config.experimental.reset_device_kernel_stats()
    for _, dt in ipairs(SORTABLE) do
      local seq = tf.sort(values({3, 17}, dt))
      local v = values({3, 9}, dt, nil, 2)
      for _, side in ipairs({"left", "right"}) do
        compare(("searchsorted %s %s"):format(dt.name, side), function(s, q)
          return tf.searchsorted(s, q, {side = side}), tf.searchsorted(s, q, {side = side, out_type = I64})
        end, {seq, v})
      end
    end
    ran_on_device("searchsorted", 20)
  end)

  gpu_it("handles empty inputs and one-element rows", function()
    for _, shape in ipairs({{0, 4}, {3, 0}, {4, 1}}) do
      local x = tf.zeros(shape, F32)
      compare("sort " .. table.concat(shape, "x"), function(v) return tf.sort(v), tf.argsort(v) end, {x})
      compare("top_k " .. table.concat(shape, "x"), function(v) return tf.math.top_k(v, 0) end, {x})
    end
  end)

  gpu_it("computes the gradients of sort and top_k with sort_grad on the device, as the CPU", function()
    tf.config.experimental.reset_device_kernel_stats()
    for _, dt in ipairs({F32, F64}) do
      local x = values({3, 17}, dt)
      local w = values({3, 17}, dt, nil, 5)
      compare("sort gradient " .. dt.name, function(v, wt)
        local t = tf.GradientTape()
        t:watch(v)
        local y = t:record(function() return tf.reduce_sum(tf.sort(v, {direction = "DESCENDING"}) * wt) end)
        return t:gradient(y, v)
      end, {x, w})
      compare("top_k gradient " .. dt.name, function(v, wt)
        local t = tf.GradientTape()
        t:watch(v)
        local y = t:record(function() return tf.reduce_sum(tf.math.top_k(v, 5) * wt) end)
        return t:gradient(y, v)
      end, {x, tf.slice(w, {1, 1}, {3, 5})})
    end
    ran_on_device("sort_grad", 4)
  end)

  gpu_it("raises the CPU's errors", function()
    local x = tf.constant({{1.0, 2.0, 3.0}}):gpu()
    assert.tf_error("InvalidArgumentError", "top_k: input (1, 3) must have at least k = 4 columns (last axis)",
                    function() tf.device("/gpu:0", function() return tf.math.top_k(x, 4) end) end)
    assert.tf_error("TypeError", "expected float32, float64, float16, bfloat16, int32, int64 or uint8",
                    function() tf.device("/gpu:0", function() return tf.sort(tf.constant({true, false}):gpu()) end) end)
  end)
end)
