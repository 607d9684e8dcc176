-- Ops that size their outputs from the data, on "the GPU" (a real one, or
-- the simulated one with LTF_GPU_SIM=1, which runs the CUDA kernels' bodies
-- compiled for the host): tf.where(condition), tf.unique,
-- tf.unique_with_counts, tf.math.bincount, tf.math.segment_sum / mean / max
-- and tf.sequence_mask without maxlen run device kernels (they compute the
-- sizes on the device, read them back, allocate their outputs there) and
-- give the CPU's results exactly, with the CPU's errors; the segment
-- gradients through the tape equal the CPU's.
local tf = require("tf")

local gpu = require("gpu_support")
local GPU, gpu_it = gpu.GPU, gpu.make_it(it, function(why) pending(why) end)
local values, flatten, same_value = gpu.values, gpu.flatten, gpu.same_value

local F32, F64, I32, I64, U8, B = tf.float32, tf.float64, tf.int32, tf.int64, tf.uint8, tf.bool
local ALL = {F32, F64, I32, I64, U8, B}
local REAL = {F32, F64, I32, I64}
local nan, inf = 0 / 0, math.huge

local ran_on_device = gpu.ran_on_device

-- f on host inputs and on their GPU copies: every output on the GPU, with
-- the CPU's dtype, shape and values EXACTLY (any NaN equals any NaN)
local function exact(label, f, inputs)
  local cpu = table.pack(f(table.unpack(inputs)))
  local ginputs = {}
  for i, x in ipairs(inputs) do ginputs[i] = x:gpu() end
  local out = tf.device("/gpu:0", function() return table.pack(f(table.unpack(ginputs))) end)
  assert.equal(cpu.n, out.n, label)
  for k = 1, cpu.n do
    local c, g = cpu[k], out[k]
    assert.equal(GPU, g.device, label .. ": output " .. k .. " is not on the GPU")
    assert.equal(c.dtype, g.dtype, label)
    assert.same(c.shape:as_list(), g.shape:as_list(), label)
    local cv, gv = flatten(c:totable()), flatten(g:totable())
    assert.equal(#cv, #gv, label)
    for i = 1, #cv do
      if not same_value(gv[i], cv[i], 0, 0) then
        error(("%s: output %d element %d: GPU %s, CPU %s"):format(label, k, i, tostring(gv[i]), tostring(cv[i])), 0)
      end
    end
  end
end

-- the same error (kind and message) on the CPU and the GPU
local function same_error(label, f, inputs)
  local ok1, e1 = pcall(f, table.unpack(inputs))
  assert.is_false(ok1, label .. ": the CPU did not fail")
  local ginputs = {}
  for i, x in ipairs(inputs) do ginputs[i] = x:gpu() end
  collectgarbage("collect")
  local before = tf.config.experimental.get_memory_info("GPU:0").current
  local ok2, e2 = pcall(function() return tf.device("/gpu:0", function() return f(table.unpack(ginputs)) end) end)
  assert.is_false(ok2, label .. ": the GPU did not fail")
  assert.equal(tostring(e1.message or e1), tostring(e2.message or e2), label)
  assert.equal(tostring(e1.kind or e1.type or ""), tostring(e2.kind or e2.type or ""), label)
  -- what the kernel allocated before failing went back
  collectgarbage("collect")
  assert.equal(before, tf.config.experimental.get_memory_info("GPU:0").current, label .. ": GPU bytes leaked")
  assert.is_true(tf.is_tensor(ginputs[1]))   -- the inputs stay alive across both measures
end

-- mostly false (zero) elements
local function sparse(shape, dt, seed)
  local x = values(shape, dt, nil, seed)
  local m = tf.cast(tf.greater(values(shape, I32, nil, seed + 3), 2), dt)
  if dt == B then return tf.logical_and(x, tf.cast(m, B)) end
  return x * m
end

describe("ops sizing their outputs from the data, on the GPU", function()
  gpu_it("tf.where(condition) gives the CPU's coordinates (every dtype, ranks 0 to 3, empty, past a scan chunk)", function()
    tf.config.experimental.reset_device_kernel_stats()
    local runs = 0
    for _, dt in ipairs(ALL) do
      for i, shape in ipairs({{0}, {7}, {3, 4}, {2, 3, 5}, {700}, {2, 0, 3}}) do
        exact(("where %s shape %d"):format(dt.name, i), function(c) return tf.where(c) end, {sparse(shape, dt, i)})
        runs = runs + 1
      end
    end
    exact("where of a scalar", function(c) return tf.where(c) end, {tf.constant(true)})
    exact("where of NaN and -0", function(c) return tf.where(c) end, {tf.constant({0.0, -0.0, nan, 1, -inf})})
    ran_on_device("where_indices", runs + 2)
  end)

  gpu_it("tf.unique and tf.unique_with_counts give the CPU's values, indices and counts (first-appearance order)", function()
    tf.config.experimental.reset_device_kernel_stats()
    for _, dt in ipairs(ALL) do
      for i, x in ipairs({values({40}, dt), values({1}, dt), values({300}, dt, nil, 2), tf.zeros({0}, dt)}) do
        local label = ("unique %s input %d"):format(dt.name, i)
        exact(label, function(v) return tf.unique(v) end, {x})
        exact(label .. " int64", function(v) return tf.unique(v, I64) end, {x})
        exact(label .. " with counts", function(v) return tf.unique_with_counts(v) end, {x})
      end
    end
    for _, dt in ipairs({F32, F64}) do   -- -0 equals 0 (the first kept), every NaN its own value
      exact("unique specials " .. dt.name, function(v) return tf.unique_with_counts(v, I64) end,
            {tf.constant({nan, 0.0, -0.0, 1, nan, inf, -inf, 1, -0.0, inf}, dt)})
    end
    local y, idx = tf.device("/gpu:0", function() return tf.unique(tf.constant({3, 1, 3, 2, 1}):gpu()) end)
    assert.same({3, 1, 2}, y:totable())
    assert.same({1, 2, 1, 3, 2}, idx:totable())
    -- the downstream gather (x = gather(y, idx)) on the device
    local back = tf.device("/gpu:0", function() return tf.gather(y, idx) end)
    assert.equal(GPU, back.device)
    assert.same({3, 1, 3, 2, 1}, back:totable())
    ran_on_device("unique", 49)
    ran_on_device("unique_with_counts", 26)
  end)

  gpu_it("tf.math.bincount gives the CPU's counts and weighted sums (options, dtypes, per slice)", function()
    tf.config.experimental.reset_device_kernel_stats()
    local runs = 0
    for _, it in ipairs({I32, I64}) do
      local arr = tf.cast(values({6, 50}, U8, nil, 1), it)   -- 0 .. 12, many repeats
      for _, o in ipairs({{minlength = 0}, {minlength = 20}, {maxlength = 5}, {binary_output = true}, {axis = -1},
                          {axis = -1, minlength = 15, binary_output = true}, {dtype = F64}, {dtype = I64}}) do
        exact("bincount " .. it.name, function(a) return tf.math.bincount(a, o) end, {arr})
        runs = runs + 1
      end
      for _, wt in ipairs(REAL) do
        exact("bincount weights " .. wt.name, function(a, w) return tf.math.bincount(a, w) end,
              {arr, values({6, 50}, wt, nil, 4)})
        exact("bincount weights per slice " .. wt.name, function(a, w) return tf.math.bincount(a, w, {axis = -1}) end,
              {arr, values({6, 50}, wt, nil, 5)})
        runs = runs + 2
      end
      exact("bincount empty " .. it.name, function(a) return tf.math.bincount(a, {minlength = 3}) end,
            {tf.zeros({0}, it)})
      runs = runs + 1
    end
    -- float sums in the CPU's order: bit for bit
    exact("bincount of many equal values", function(a, w) return tf.math.bincount(a, w) end,
          {tf.cast(values({3000}, U8, nil, 2), I32) % 3, values({3000}, F32, nil, 7) * 1.1})
    ran_on_device("bincount", runs + 1)
  end)

  gpu_it("tf.math.segment_sum / mean / max give the CPU's results (sorted ids with gaps, every dtype)", function()
    tf.config.experimental.reset_device_kernel_stats()
    local ids = {}
    for i = 1, 60 do ids[i] = 2 + (i * 3) // 7 end   -- starts at 2 (segment 1 empty), runs of 2 and 3
    ids[60] = ids[59] + 3                           -- a gap before the last
    for _, name in ipairs({"sum", "mean", "max"}) do
      local op = tf.math["segment_" .. name]
      for _, dt in ipairs(REAL) do
        for _, it in ipairs({I32, I64}) do
          exact(("segment_%s %s %s"):format(name, dt.name, it.name), function(d, s) return op(d, s) end,
                {values({60, 3}, dt, nil, 1), tf.constant(ids, it)})
          exact(("segment_%s vector %s"):format(name, dt.name), function(d, s) return op(d, s) end,
                {values({60}, dt, nil, 2), tf.constant(ids, it)})
        end
      end
      exact("segment_" .. name .. " with NaN", function(d, s) return op(d, s) end,
            {tf.constant({1, nan, 2, -inf, 5, 0.5}, F64), tf.constant({1, 1, 2, 2, 2, 4})})
      exact("segment_" .. name .. " empty", function(d, s) return op(d, s) end,
            {tf.zeros({0, 2}), tf.zeros({0}, I32)})
      ran_on_device("segment_" .. name, 18)
    end
  end)

  gpu_it("tf.sequence_mask without maxlen sizes its mask on the device", function()
    tf.config.experimental.reset_device_kernel_stats()
    for _, it in ipairs({I32, I64}) do
      exact("sequence_mask " .. it.name, function(l) return tf.sequence_mask(l) end,
            {tf.constant({{1, 4, 0}, {2, -1, 3}}, it)})
      exact("sequence_mask float " .. it.name, function(l) return tf.sequence_mask(l, {dtype = F32}) end,
            {tf.constant({3, 0, 5}, it)})
    end
    ran_on_device("sequence_mask", 4)
  end)

  gpu_it("raises the CPU's errors with its messages and leaks nothing", function()
    for _, it in ipairs({I32, I64}) do
      for _, name in ipairs({"sum", "mean", "max"}) do
        local op = tf.math["segment_" .. name]
        same_error("unsorted ids", op, {tf.constant({1.0, 2, 3, 4}), tf.constant({1, 3, 2, 4}, it)})
        same_error("id 0 first", op, {tf.constant({1.0, 2, 3}), tf.constant({0, 1, 1}, it)})
        same_error("negative id later", op, {tf.constant({{1.0}, {2}, {3}}), tf.constant({1, 2, -4}, it)})
      end
      same_error("bincount negative", function(a) return tf.math.bincount(a) end,
                 {tf.constant({1, 0, -2, 4, -1}, it)})
      same_error("bincount negative with weights", function(a, w) return tf.math.bincount(a, w) end,
                 {tf.constant({{3, -7}}, it), tf.constant({{1.0, 2.0}})})
    end
  end)
end)

describe("gradients of the segment ops through the tape on the GPU", function()
  local grad_of = gpu.grad_of

  gpu_it("segment_mean's and segment_max's gradients equal the CPU's", function()
    local ids = tf.constant({1, 1, 2, 4, 4, 4})
    for _, dt in ipairs({F32, F64}) do
      tf.config.experimental.reset_device_kernel_stats()
      local x = tf.constant({{1, 2}, {3, 2}, {5, 6}, {7, 9}, {7, 8}, {1, 9}}, dt)
      for _, name in ipairs({"mean", "max"}) do
        local op = tf.math["segment_" .. name]
        local f = grad_of(function(v, s)
          return tf.reduce_sum(op(v, s) * tf.reshape(tf.range(1, 9, 1, dt), {4, 2}))
        end)
        exact(("segment_%s gradient %s"):format(name, dt.name), f, {x, ids})
      end
      ran_on_device("segment_mean", 1)
      ran_on_device("segment_max", 1)
      ran_on_device("segment_sum", 2)   -- the counts of the mean's and max's gradients
    end
  end)
end)
