-- The random ops on "the GPU" (a real one, or the simulated one with
-- LTF_GPU_SIM=1, which runs the CUDA kernels' bodies compiled for the host):
-- random_uniform, random_normal, truncated_normal, random_gamma,
-- categorical, random_shuffle and dropout_noise run device kernels over a
-- counter-based Philox4x32-10, so their values differ from the CPU's for the
-- same seed (docs/cuda.md). The specs check, on 1e5 samples with fixed seeds,
-- on the GPU and (the same function) on the CPU: means and variances within
-- 5 standard errors (the variance's from the sample's fourth moment), ranges,
-- chi-square tests for discrete draws (limits at p of about 1e-4), and the
-- seeding rules: the same seed gives the same values on every run, the
-- context's generator new values at each call, a stateless seed pair the
-- same values at every call.
local tf = require("tf")

local gpu = require("gpu_support")
local GPU, gpu_it = gpu.GPU, gpu.make_it(it, function(why) pending(why) end)
local flatten = gpu.flatten

local F32, F64, I32, I64 = tf.float32, tf.float64, tf.int32, tf.int64
local N = 100000

local function on_gpu(f) return tf.device("/gpu:0", f) end
local function on_cpu(f) return tf.device("/cpu:0", f) end

-- mean, unbiased variance, fourth central moment and count of a tensor's values
local function moments(t)
  local x = flatten(t:totable())
  local n, m = #x, 0
  for i = 1, n do m = m + x[i] end
  m = m / n
  local v, m4 = 0, 0
  for i = 1, n do
    local d = x[i] - m
    v = v + d * d
    m4 = m4 + d * d * d * d
  end
  return m, v / (n - 1), m4 / n, n, x
end

local function check_moments(label, t, mean, var)
  local m, v, m4, n = moments(t)
  local se_m, se_v = math.sqrt(var / n), math.sqrt(math.abs(m4 - v * v) / n)
  assert(math.abs(m - mean) <= 5 * se_m,
         ("%s: mean %.6g, expected %.6g (standard error %.3g)"):format(label, m, mean, se_m))
  assert(math.abs(v - var) <= 5 * se_v,
         ("%s: variance %.6g, expected %.6g (standard error %.3g)"):format(label, v, var, se_v))
end

local function chi2(counts, p)
  local n, c = 0, 0
  for k in pairs(p) do n = n + (counts[k] or 0) end
  for k, pk in pairs(p) do
    if pk == 0 then
      assert.equal(0, counts[k] or 0, "a class of probability 0 was drawn")
    else
      local e = n * pk
      c = c + ((counts[k] or 0) - e) ^ 2 / e
    end
  end
  return c
end

local ran_on_device = gpu.ran_on_device

local function same_values(a, b)
  local x, y = flatten(a:totable()), flatten(b:totable())
  if #x ~= #y then return false end
  for i = 1, #x do
    if x[i] ~= y[i] and not (x[i] ~= x[i] and y[i] ~= y[i]) then return false end
  end
  return true
end

describe("random ops on the GPU", function()
  gpu_it("make their tensors on the GPU with device kernels", function()
    tf.config.experimental.reset_device_kernel_stats()
    on_gpu(function()
      local outs = {
        {tf.random.uniform({3, 4}), F32, {3, 4}},
        {tf.random.uniform({5}, {minval = 1, maxval = 9, dtype = I64}), I64, {5}},
        {tf.random.normal({2, 3}, {dtype = F64}), F64, {2, 3}},
        {tf.random.truncated_normal({7}), F32, {7}},
        {tf.random.gamma({4}, tf.constant({0.5, 2.0})), F32, {4, 2}},
        {tf.random.categorical(tf.constant({{0.0, 1.0, 2.0}}), 6), I64, {1, 6}},
        {tf.random.shuffle(tf.constant({{1, 2}, {3, 4}, {5, 6}}, I32)), I32, {3, 2}},
        {tf.nn.dropout(tf.ones({4, 4}), 0.5), F32, {4, 4}},
        {tf.random.stateless_uniform({3}, {1, 2}), F32, {3}},
        {tf.random.stateless_normal({3}, {1, 2}), F32, {3}},
      }
      for i, o in ipairs(outs) do
        assert.equal(GPU, o[1].device, "output " .. i)
        assert.equal(o[2], o[1].dtype, "output " .. i)
        assert.same(o[3], o[1].shape:as_list(), "output " .. i)
      end
    end)
    for op, runs in pairs({random_uniform = 3, random_normal = 2, truncated_normal = 1, random_gamma = 1,
                           categorical = 1, random_shuffle = 1, dropout_noise = 1}) do
      ran_on_device(op, runs)
    end
  end)

  gpu_it("draw uniform floats in [minval, maxval) with the right moments (float32, float64), as on the CPU",
         function()
    for _, scope in ipairs({"/gpu:0", "/cpu:0"}) do
      for _, dt in ipairs({F32, F64}) do
        tf.random.set_seed(1)
        local x = tf.device(scope, function() return tf.random.uniform({N}, {minval = -2, maxval = 3, dtype = dt}) end)
        local label = ("uniform %s on %s"):format(dt.name, scope)
        check_moments(label, x, 0.5, 25 / 12)
        assert.is_true(tf.reduce_min(x):item() >= -2, label)
        assert.is_true(tf.reduce_max(x):item() < 3, label)
      end
    end
  end)

  gpu_it("draw integers in [minval, maxval) without bias (int32, int64; chi-square), as on the CPU", function()
    for _, scope in ipairs({"/gpu:0", "/cpu:0"}) do
      for _, dt in ipairs({I32, I64}) do
        tf.random.set_seed(2)
        local x = tf.device(scope, function() return tf.random.uniform({N}, {minval = -3, maxval = 4, dtype = dt}) end)
        local counts, p = {}, {}
        for v = -3, 3 do p[v] = 1 / 7 end
        for _, v in ipairs(flatten(x:totable())) do
          assert(v >= -3 and v < 4, ("uniform %s on %s: %d out of [-3, 4)"):format(dt.name, scope, v))
          counts[v] = (counts[v] or 0) + 1
        end
        local c = chi2(counts, p)
        assert(c < 31, ("uniform %s on %s: chi-square %.3g (6 dof)"):format(dt.name, scope, c))
      end
    end
    -- the whole int64 range
    local x = on_gpu(function()
      return tf.random.uniform({1000}, {minval = math.mininteger, maxval = math.maxinteger, dtype = I64})
    end)
    local neg = 0
    for _, v in ipairs(flatten(x:totable())) do
      assert(v < math.maxinteger)
      if v < 0 then neg = neg + 1 end
    end
    assert(neg > 400 and neg < 600, "int64 over its whole range: " .. neg .. " of 1000 negative")
  end)

  gpu_it("draw normals and truncated normals (within 2 stddev) with the right moments, as on the CPU", function()
    for _, scope in ipairs({"/gpu:0", "/cpu:0"}) do
      for _, dt in ipairs({F32, F64}) do
        tf.random.set_seed(3)
        local x, t = tf.device(scope, function()
          return tf.random.normal({N}, {mean = 1, stddev = 2, dtype = dt}),
                 tf.random.truncated_normal({N}, {mean = -1, stddev = 0.5, dtype = dt})
        end)
        check_moments(("normal %s on %s"):format(dt.name, scope), x, 1, 4)
        -- the variance of N(0, 1) given |z| <= 2: 1 - 4 phi(2) / (2 Phi(2) - 1)
        check_moments(("truncated_normal %s on %s"):format(dt.name, scope), t, -1, 0.25 * 0.77374130)
        assert.is_true(tf.reduce_min(t):item() >= -2 - 1e-6)
        assert.is_true(tf.reduce_max(t):item() <= 1e-6)
      end
    end
  end)

  gpu_it("draw gamma values with mean alpha / beta and variance alpha / beta^2, alpha below and above 1", function()
    for _, scope in ipairs({"/gpu:0", "/cpu:0"}) do
      for _, dt in ipairs({F32, F64}) do
        for _, alpha in ipairs({0.25, 1, 4.5}) do
          tf.random.set_seed(4)
          local x = tf.device(scope, function()
            return tf.random.gamma({N}, alpha, {beta = 2, dtype = dt})
          end)
          check_moments(("gamma(%g, 2) %s on %s"):format(alpha, dt.name, scope), x, alpha / 2, alpha / 4)
          assert.is_true(tf.reduce_min(x):item() >= 0)
        end
      end
    end
  end)

  gpu_it("draw categorical classes (1-based) with the frequencies of softmax(logits), as on the CPU", function()
    local logits = {{1.0, 2.0, 0.5, -1.0, 3.0}, {0.0, -math.huge, 1.0, 0.25, 0.0}}
    for _, scope in ipairs({"/gpu:0", "/cpu:0"}) do
      for _, dt in ipairs({F32, F64}) do
        for _, it in ipairs({I32, I64}) do
          tf.random.set_seed(5)
          local x = tf.device(scope, function()
            return tf.random.categorical(tf.constant(logits, dt), N // 2, {dtype = it})
          end)
          assert.equal(it, x.dtype)
          local rows = x:totable()
          for b = 1, 2 do
            local mx, s, p, counts = -math.huge, 0, {}, {}
            for _, l in ipairs(logits[b]) do mx = math.max(mx, l) end
            for _, l in ipairs(logits[b]) do s = s + math.exp(l - mx) end
            for c, l in ipairs(logits[b]) do p[c] = math.exp(l - mx) / s end
            for _, v in ipairs(rows[b]) do counts[v] = (counts[v] or 0) + 1 end
            local c = chi2(counts, p)
            assert(c < 25, ("categorical %s -> %s on %s row %d: chi-square %.3g"):format(dt.name, it.name, scope, b, c))
          end
        end
      end
    end
  end)

  gpu_it("shuffle the rows of every dtype into a permutation of them, as on the CPU", function()
    local n = 40
    for _, dt in ipairs({F32, F64, I32, I64, tf.uint8, tf.bool}) do
      local rows = {}
      for r = 1, n do
        if dt == tf.bool then rows[r] = {r % 2 == 0, r % 3 == 0}
        else rows[r] = {r, (r * 7) % n} end
      end
      local x = tf.constant(rows, dt)
      local c = on_cpu(function() return tf.random.shuffle(x) end)
      local g = on_gpu(function() return tf.random.shuffle(x:gpu()) end)
      assert.equal(GPU, g.device)
      local function str(v) return type(v) == "number" and ("%g"):format(v) or tostring(v) end
      local function key(row) return str(row[1]) .. "," .. str(row[2]) end
      for _, out in ipairs({c, g}) do
        local want, got = {}, {}
        for _, row in ipairs(rows) do want[#want + 1] = key(row) end
        for _, row in ipairs(out:totable()) do got[#got + 1] = key(row) end
        table.sort(want)
        table.sort(got)
        assert.same(want, got)
      end
      if dt ~= tf.bool then assert.is_false(same_values(x, g), "the identity (probability 1/40!)") end
    end
    ran_on_device("random_shuffle", 6)
  end)

  gpu_it("drop with the CPU's dropout semantics: zeros at the rate, the rest scaled by 1 / (1 - rate)", function()
    for _, scope in ipairs({"/gpu:0", "/cpu:0"}) do
      for _, dt in ipairs({F32, F64}) do
        tf.random.set_seed(6)
        local y = tf.device(scope, function() return tf.nn.dropout(tf.fill({N}, tf.constant(2, dt)), 0.3) end)
        local zeros, other = 0, 0
        for _, v in ipairs(flatten(y:totable())) do
          if v == 0 then zeros = zeros + 1
          elseif math.abs(v - 2 / 0.7) > 1e-6 then other = other + 1 end
        end
        assert.equal(0, other, "kept values are x / (1 - rate)")
        local se = math.sqrt(N * 0.3 * 0.7)
        assert(math.abs(zeros - 0.3 * N) < 5 * se, ("dropout %s on %s: %d zeros of %d"):format(dt.name, scope, zeros, N))
      end
    end
    -- the noise itself: uniform [0, 1) of x's shape
    local u = on_gpu(function() return tf.core.dropout_noise(tf.zeros({N // 10, 10}, F64)) end)
    assert.equal(GPU, u.device)
    check_moments("dropout_noise", u, 0.5, 1 / 12)
  end)
end)

describe("random seeds on the GPU", function()
  local function draws()
    return on_gpu(function()
      return {tf.random.uniform({20}), tf.random.normal({3, 3}, {dtype = F64}), tf.random.truncated_normal({5}),
              tf.random.gamma({6}, 0.7), tf.random.categorical(tf.constant({{0.0, 0.5, 1.0}}), 10),
              tf.random.shuffle(tf.range(1, 31)), tf.nn.dropout(tf.ones({16}), 0.5),
              tf.random.uniform({8}, {seed = 3}), tf.random.uniform({8}, {seed = 3})}
    end)
  end

  gpu_it("give the same values for the same tf.random.set_seed and sequence of ops", function()
    tf.random.set_seed(123)
    local a = draws()
    tf.random.set_seed(123)
    local b = draws()
    for i = 1, #a do assert.is_true(same_values(a[i], b[i]), "draw " .. i) end
    -- op-level seeds: a new stream at each call of the same seed, restarted by set_seed
    assert.is_false(same_values(a[8], a[9]))
    -- the context's generator moves on: other values at the next calls
    local c = draws()
    for i = 1, 4 do assert.is_false(same_values(a[i], c[i]), "draw " .. i) end
  end)

  gpu_it("give the same values for a stateless seed pair at every call, others for another pair", function()
    local function stateless(seed)
      return on_gpu(function()
        return tf.random.stateless_uniform({50}, seed), tf.random.stateless_normal({50}, seed, {dtype = F64}),
               tf.random.stateless_uniform({50}, seed, {minval = 0, maxval = 1000, dtype = I64})
      end)
    end
    local a = table.pack(stateless({7, 8}))
    tf.random.uniform({10})   -- the context's generator moves: stateless values do not
    tf.random.set_seed(99)
    local b = table.pack(stateless({7, 8}))
    local c = table.pack(stateless({7, 9}))
    for i = 1, 3 do
      assert.is_true(same_values(a[i], b[i]), "draw " .. i)
      assert.is_false(same_values(a[i], c[i]), "draw " .. i)
    end
  end)

  gpu_it("draws other values than the CPU for the same seed (another generator: Philox on the device)", function()
    tf.random.set_seed(8)
    local c = on_cpu(function() return tf.random.uniform({16}) end)
    tf.random.set_seed(8)
    local g = on_gpu(function() return tf.random.uniform({16}) end)
    assert.is_false(same_values(c, g))
  end)
end)
