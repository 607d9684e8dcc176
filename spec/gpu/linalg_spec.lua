-- The factorizations' device kernels (core/cuda/kernels/linalg.cuh) against
-- the CPU's LAPACK kernels: cholesky, inv, det, slogdet, solve,
-- triangular_solve, qr, svd, eigh run on the host and on "the GPU" (a real
-- one, or the simulated one with LTF_GPU_SIM=1, which runs the same bodies
-- compiled for the host), float32 and float64; each case checks through
-- tf.config.experimental.get_device_kernel_stats that the op ran a device
-- kernel, and that its outputs are on the GPU.
--
-- Inputs are well conditioned (SPD: x x^T + n I; general: x + 3 I, with
-- x's entries in [-2.2, 2.2]). Tolerances, norm-wise over each output
-- (|gpu - cpu| <= tol * (max |cpu| + |cpu|)): float64 1e-10; float32 2e-4
-- (the CPU factors in float32, the device in float64, rounding once).
-- Eigenvectors and singular vectors: LAPACK does not fix their signs, so
-- they are compared column by column up to sign (the spectra here are
-- separated), and the device's own reconstructions are checked.
local tf = require("tf")

local gpu = require("gpu_support")
local GPU, gpu_it = gpu.GPU, gpu.make_it(it, function(why) pending(why) end)
local values, flatten = gpu.values, gpu.flatten

local F32, F64 = tf.float32, tf.float64
local FLOATS = {F32, F64}
local function tol(dt) return dt == F32 and 2e-4 or 1e-10 end

-- norm-wise comparison of two tensors' values (NaN equal to NaN)
local function close(label, want, got, t)
  assert.same(want.shape:as_list(), got.shape:as_list(), label)
  local w, g = flatten(want:totable()), flatten(got:totable())
  local mx = 0
  for _, x in ipairs(w) do
    if x == x and math.abs(x) ~= math.huge then mx = math.max(mx, math.abs(x)) end
  end
  for i = 1, #w do
    local a, b = w[i], g[i]
    local ok = (a ~= a and b ~= b) or a == b or math.abs(a - b) <= t * (mx + math.abs(a))
    if not ok then
      error(("%s: element %d: GPU %s, CPU %s (tol %g, max %g)"):format(label, i, tostring(b), tostring(a), t, mx), 0)
    end
  end
end

-- (.., rows, cols) tensors: the first 'ncols' columns of each matrix, each up to its sign
local function close_cols(label, want, got, t, ncols)
  local dims = want.shape:as_list()
  local rows, cols = dims[#dims - 1], dims[#dims]
  ncols = ncols or cols
  local w, g = flatten(want:totable()), flatten(got:totable())
  local per = rows * cols
  local wsel, gsel = {}, {}
  for base = 0, #w - 1, per do
    for j = 1, ncols do
      local dot = 0
      for i = 0, rows - 1 do dot = dot + w[base + i * cols + j] * g[base + i * cols + j] end
      local sg = dot < 0 and -1 or 1
      for i = 0, rows - 1 do
        wsel[#wsel + 1] = w[base + i * cols + j]
        gsel[#gsel + 1] = sg * g[base + i * cols + j]
      end
    end
  end
  close(label, tf.constant(wsel, F64), tf.constant(gsel, F64), t)
end

local function spd(shape, dt)
  local x = values(shape, dt)
  local n = shape[#shape]
  return tf.matmul(x, x, {transpose_b = true}) + tf.eye(n, nil, {dtype = dt}) * n
end
local function general(shape, dt, seed)
  return values(shape, dt, nil, seed) + tf.eye(shape[#shape], nil, {dtype = dt}) * 3
end

-- f on CPU inputs and on their GPU copies inside a GPU scope
local function run_both(f, inputs)
  local cpu = table.pack(f(table.unpack(inputs)))
  local ginputs = {}
  for i, x in ipairs(inputs) do ginputs[i] = x:gpu() end
  local dev = tf.device("/gpu:0", function() return table.pack(f(table.unpack(ginputs))) end)
  assert.equal(cpu.n, dev.n)
  for k = 1, dev.n do assert.equal(GPU, dev[k].device, "output " .. k .. " is not on the GPU") end
  return cpu, dev
end

local ran_on_device = gpu.ran_on_device

-- Cases whose outputs are compared by value: op, make(dt) -> f, inputs.
local cases = {
  {op = "cholesky", make = function(dt)
    return tf.linalg.cholesky, {spd({3, 4, 4}, dt)}
  end},
  {op = "inv", make = function(dt)
    return function(a) return tf.linalg.inv(a), tf.linalg.inv(a, {adjoint = true}) end, {general({2, 3, 3}, dt)}
  end},
  {op = "det", make = function(dt)
    -- a row swap in the second matrix: negative determinant
    return tf.linalg.det, {tf.stack({general({3, 3}, dt), tf.reverse(general({3, 3}, dt, 1), {1})})}
  end},
  {op = "slogdet", make = function(dt)
    return tf.linalg.slogdet, {tf.stack({general({4, 4}, dt), tf.reverse(general({4, 4}, dt, 2), {1})})}
  end},
  {op = "solve", make = function(dt)
    return function(a, b) return tf.linalg.solve(a, b), tf.linalg.solve(a, b, {adjoint = true}) end,
           {general({2, 3, 3}, dt), values({2, 3, 2}, dt, nil, 1)}
  end},
  {op = "triangular_solve", make = function(dt)
    -- a's batch (2, 1) broadcasts against b's (3): the output is (2, 3, 4, 2)
    return function(a, b)
      return tf.linalg.triangular_solve(a, b), tf.linalg.triangular_solve(a, b, {lower = false, adjoint = true})
    end, {general({2, 1, 4, 4}, dt), values({3, 4, 2}, dt, nil, 1)}
  end},
  {op = "qr", make = function(dt)
    -- Q and R directly: the device keeps LAPACK's signs
    return function(a, b)
      local q1, r1 = tf.linalg.qr(a)
      local q2, r2 = tf.linalg.qr(a, {full_matrices = true})
      local q3, r3 = tf.linalg.qr(b)
      return q1, r1, q2, r2, q3, r3
    end, {values({2, 5, 3}, dt), values({3, 5}, dt, nil, 1)}
  end},
}

describe("linalg device kernels against the CPU", function()
  for _, c in ipairs(cases) do
    gpu_it(("%s (float32, float64) runs a device kernel and matches the CPU"):format(c.op), function()
      tf.config.experimental.reset_device_kernel_stats()
      for _, dt in ipairs(FLOATS) do
        local f, inputs = c.make(dt)
        local cpu, dev = run_both(f, inputs)
        for k = 1, cpu.n do close(("%s %s output %d"):format(c.op, dt.name, k), cpu[k], dev[k], tol(dt)) end
      end
      ran_on_device(c.op, #FLOATS)
    end)
  end

  gpu_it("eigh: ascending eigenvalues as the CPU's, eigenvectors up to sign, V diag(e) V^T = a", function()
    tf.config.experimental.reset_device_kernel_stats()
    for _, dt in ipairs(FLOATS) do
      -- separated spectrum: diag(-2, 1, 3.5, 7) rotated by an orthogonal q (from a CPU qr)
      local q = tf.linalg.qr(values({4, 4}, F64, nil, 3))
      local a = tf.cast(tf.matmul(q * tf.constant({-2, 1, 3.5, 7}, F64), q, {transpose_b = true}), dt)
      local cpu, dev = run_both(tf.linalg.eigh, {tf.stack({a, spd({4, 4}, dt)})})
      close("eigh values " .. dt.name, cpu[1], dev[1], tol(dt))
      close_cols("eigh vectors " .. dt.name, cpu[2], dev[2], tol(dt) * 10)
      local v, e = dev[2]:cpu(), dev[1]:cpu()
      local back = tf.matmul(v * tf.expand_dims(e, -2), v, {transpose_b = true})
      close("eigh reconstruction " .. dt.name, tf.stack({a, spd({4, 4}, dt)}), back, tol(dt))
      local ev = flatten(dev[1]:totable())
      assert.near(-2, ev[1], tol(dt) * 10)
      assert.near(7, ev[4], tol(dt) * 10)
    end
    ran_on_device("eigh", #FLOATS)
  end)

  gpu_it("svd: descending singular values as the CPU's, u and v up to sign, u diag(s) v^T = a", function()
    tf.config.experimental.reset_device_kernel_stats()
    for _, dt in ipairs(FLOATS) do
      for _, shape in ipairs({{2, 5, 3}, {3, 4}}) do
        local a = values(shape, dt, nil, 4)
        local p = math.min(shape[#shape - 1], shape[#shape])
        local cpu, dev = run_both(function(x) return tf.linalg.svd(x, {compute_uv = false}) end, {a})
        close("svd values " .. dt.name, cpu[1], dev[1], tol(dt))
        local cpu_uv, dev_uv = run_both(function(x) return tf.linalg.svd(x, {compute_uv = true}) end, {a})
        close("svd values with vectors " .. dt.name, cpu_uv[1], dev_uv[1], tol(dt))
        close_cols("svd u " .. dt.name, cpu_uv[2], dev_uv[2], tol(dt) * 100, p)
        close_cols("svd v " .. dt.name, cpu_uv[3], dev_uv[3], tol(dt) * 100, p)
        local s, u, v = dev_uv[1]:cpu(), dev_uv[2]:cpu(), dev_uv[3]:cpu()
        close("svd reconstruction " .. dt.name, a, tf.matmul(u * tf.expand_dims(s, -2), v, {transpose_b = true}),
              tol(dt))
        local _, uf, vf = tf.device("/gpu:0", function()
          return tf.linalg.svd(a:gpu(), {full_matrices = true, compute_uv = true})
        end)
        assert.same({shape[#shape - 1], shape[#shape - 1]}, {uf.shape[#shape - 1], uf.shape[#shape]})
        assert.same({shape[#shape], shape[#shape]}, {vf.shape[#shape - 1], vf.shape[#shape]})
      end
    end
    ran_on_device("svd", 4 * #FLOATS)
  end)

  gpu_it("handles 1x1 matrices, n = 0 and empty batches as the CPU does", function()
    for _, dt in ipairs(FLOATS) do
      local cpu, dev = run_both(function(a, e, z)
        local s, l = tf.linalg.slogdet(a)
        return tf.linalg.cholesky(tf.abs(a)), tf.linalg.inv(a), tf.linalg.det(a), s, l,
               tf.linalg.det(e), tf.linalg.cholesky(z), tf.linalg.inv(z)
      end, {tf.constant({{{-2}}, {{0.5}}}, dt), tf.zeros({2, 0, 0}, dt), tf.zeros({0, 3, 3}, dt)})
      for k = 1, cpu.n do close(("edge %s output %d"):format(dt.name, k), cpu[k], dev[k], tol(dt)) end
      assert.same({1, 1}, flatten(dev[6]:totable()))   -- det of a 0 x 0 matrix
    end
  end)
end)

describe("linalg in traced functions on the GPU", function()
  gpu_it("run step by step, then are captured and replayed with new inputs, with the CPU's values", function()
    local f = tf.fn(function(a, b)
      local l = tf.linalg.cholesky(a)
      local _, logabs = tf.linalg.slogdet(a)
      local e = tf.linalg.eigh(a)   -- the values only: the vectors' signs are the device's own
      return tf.linalg.triangular_solve(l, b), logabs, e
    end)
    for _, dt in ipairs(FLOATS) do
      local inputs = {{spd({2, 3, 3}, dt), values({2, 3, 2}, dt, nil, 1)},
                      {spd({2, 3, 3}, dt) * 2, values({2, 3, 2}, dt, nil, 2)},
                      {spd({2, 3, 3}, dt) * 3, values({2, 3, 2}, dt, nil, 3)}}
      for call, ins in ipairs(inputs) do
        tf.config.experimental.reset_device_kernel_stats()
        local cpu, dev = run_both(f, ins)
        for k = 1, cpu.n do close(("traced %s call %d output %d"):format(dt.name, call, k), cpu[k], dev[k], tol(dt)) end
        local s = tf.config.experimental.get_device_kernel_stats()
        if call == 1 then       -- step by step
          assert.is_nil(s.graph_capture)
          ran_on_device("cholesky", 1)
        elseif call == 2 then   -- captured
          assert.equal(1, s.graph_capture.device)
          ran_on_device("eigh", 1)
        else                    -- replayed
          assert.same({device = 1, emulated = 0, host = 0}, s.graph_replay)
          assert.is_nil(s.cholesky)
        end
      end
    end
  end)
end)

describe("linalg device errors", function()
  -- a failure known only on the device is raised through the device's error
  -- flag, at the next read at the latest, with the CPU kernel's message
  local function fails_with(msg, f)
    local ok, err = pcall(function() return f():totable() end)
    assert.is_false(ok, "no error")
    assert.is_truthy(tostring(err.message or err):find(msg, 1, true), tostring(err.message or err))
  end

  gpu_it("cholesky of a matrix that is not positive definite", function()
    local a = tf.constant({{{4, 0}, {0, 1}}, {{1, 2}, {2, 1}}}, F64):gpu()
    fails_with("cholesky: Cholesky decomposition was not successful. The input might not be valid.", function()
      return tf.device("/gpu:0", function() return tf.linalg.cholesky(a) end)
    end)
    -- the device goes on working
    local l = tf.device("/gpu:0", function() return tf.linalg.cholesky(a[1]) end)
    assert.same({{2, 0}, {0, 1}}, l:totable())
  end)

  gpu_it("inv and solve of a singular matrix; det and slogdet give 0 and (0, -inf)", function()
    local a = tf.constant({{1, 2}, {2, 4}}, F32):gpu()
    fails_with("inv: Input is not invertible.", function()
      return tf.device("/gpu:0", function() return tf.linalg.inv(a) end)
    end)
    fails_with("solve: Input matrix is not invertible.", function()
      return tf.device("/gpu:0", function() return tf.linalg.solve(a, tf.ones({2, 1}, F32)) end)
    end)
    local d, s, l = tf.device("/gpu:0", function()
      local sign, logabs = tf.linalg.slogdet(a)
      return tf.linalg.det(a), sign, logabs
    end)
    assert.equal(GPU, d.device)
    assert.equal(0, d:item())
    assert.equal(0, s:item())
    assert.equal(-math.huge, l:item())
  end)

  gpu_it("refuses non-square matrices and integer dtypes as the CPU does", function()
    local x = tf.ones({2, 3}):gpu()
    assert.tf_error("InvalidArgumentError",
      "cholesky: 'input' must be a square matrix (or a batch of them), got shape (2, 3)",
      function() return tf.device("/gpu:0", function() return tf.linalg.cholesky(x) end) end)
    assert.tf_error("TypeError", "eigh: 'tensor' has dtype int32, expected float32 or float64",
      function() return tf.device("/gpu:0", function() return tf.linalg.eigh(tf.constant({{1, 0}, {0, 1}}):gpu()) end) end)
  end)
end)

describe("linalg gradients on the GPU", function()
  gpu_it("of log|det| and of cholesky run on the device and match the CPU's", function()
    tf.config.experimental.reset_device_kernel_stats()
    local function grads(a, c)
      local tape = tf.GradientTape()
      tape:watch(a)
      local y = tape:record(function()
        local _, logabs = tf.linalg.slogdet(a)
        return tf.reduce_sum(logabs) + tf.reduce_sum(tf.linalg.cholesky(a) * c)
      end)
      return tape:gradient(y, a)
    end
    for _, dt in ipairs(FLOATS) do
      local a, c = spd({2, 3, 3}, dt), values({2, 3, 3}, dt, nil, 5)
      local cpu, dev = run_both(grads, {a, c})
      close("gradient " .. dt.name, cpu[1], dev[1], tol(dt))
      -- d log|det a| / da = inv(a)^T: the gradient of the slogdet term alone
      local g = tf.device("/gpu:0", function()
        local ga = a:gpu()
        local tape = tf.GradientTape()
        tape:watch(ga)
        local y = tape:record(function() local _, l = tf.linalg.slogdet(ga); return tf.reduce_sum(l) end)
        return tape:gradient(y, ga)
      end)
      close("gradient of log|det| " .. dt.name, tf.transpose(tf.linalg.inv(a), {1, 3, 2}), g:cpu(), tol(dt))
    end
    for _, op in ipairs({"slogdet", "cholesky", "inv", "triangular_solve"}) do ran_on_device(op, 1) end
  end)
end)
