-- Gradients of the collective ops across ranks, against central finite
-- differences of the global loss (the sum of every rank's loss, all-reduced):
-- each rank's input is perturbed in turn, element by element, with every
-- rank recomputing its loss, and the difference quotient is compared with
-- the gradient the perturbed rank's tape computed. float64. Run under
-- mpirun by scripts/mpi-specs.sh; alone it checks the group of one.
local tf = require("tf")
local C = require("tf.distribute.collective")

local comm = C.init()
local r, n = comm.rank, comm.size

-- x: this rank's input (float64 tensor); loss(x) -> this rank's scalar loss
local function check(x, loss, tol)
  tol = tol or 1e-6
  local tape = tf.GradientTape()
  tape:watch(x)
  local l = tape:record(function() return loss(x) end)
  local g = tf.reshape(tape:gradient(l, x), {-1}):totable()
  local flat = tf.reshape(x, {-1}):totable()
  local dims = x:_dims()
  local h = 1e-6
  local function global_at(k, j, v)
    local f = table.move(flat, 1, #flat, 1, {})
    if k == r then f[j] = v end
    local xl = tf.reshape(tf.constant(f, tf.float64), dims)
    return C.all_reduce(loss(xl)):totable()
  end
  -- every rank runs every collective before any asserts, so a failure on
  -- one rank leaves the others in step (no hang)
  local bad
  for k = 0, n - 1 do
    for j = 1, #flat do
      local lp = global_at(k, j, flat[j] + h)
      local lm = global_at(k, j, flat[j] - h)
      if k == r then
        local fd = (lp - lm) / (2 * h)
        if not bad and math.abs(fd - g[j]) > tol + 1e-4 * math.abs(fd) then
          bad = ("rank %d element %d: tape %.9g, finite differences %.9g"):format(r, j, g[j], fd)
        end
      end
    end
  end
  assert(not bad, bad)
end

-- rank-dependent weights, so each rank's loss differs
local function weights(shape, salt)
  local k = 1
  for _, d in ipairs(shape) do k = k * d end
  local w = {}
  for i = 1, k do w[i] = math.sin(i * 1.7 + r * 2.3 + salt) end
  return tf.reshape(tf.constant(w, tf.float64), shape)
end
local function input(shape, salt)
  return weights(shape, salt + 11) * 2 + r * 0.37
end

describe("collective gradients across ranks", function()
  it("all_reduce SUM and MEAN", function()
    local w = weights({2, 3}, 1)
    for _, op in ipairs({"SUM", "MEAN"}) do
      check(input({2, 3}, 1), function(x) return tf.reduce_sum(C.all_reduce(tf.square(x), op) * w) end)
    end
  end)

  it("all_reduce MAX and MIN (distinct values per rank)", function()
    local w = weights({4}, 2)
    for _, op in ipairs({"MAX", "MIN"}) do
      check(input({4}, 2), function(x) return tf.reduce_sum(C.all_reduce(x, op) * w) end)
    end
  end)

  it("a bucketed all_reduce of several tensors", function()
    local wa, wb = weights({3}, 3), weights({2, 2}, 4)
    local b = input({2, 2}, 5)
    check(input({3}, 3), function(x)
      local out = C.all_reduce_buckets({x * 3, tf.square(b) + tf.reduce_sum(x)}, "SUM", {bucket_bytes = 1 << 20})
      return tf.reduce_sum(out[1] * wa) + tf.reduce_sum(out[2] * wb)
    end)
  end)

  it("broadcast (the root's input collects every rank's gradient)", function()
    local w = weights({3}, 6)
    for root = 0, n - 1 do
      check(input({3}, 6), function(x) return tf.reduce_sum(tf.sin(C.broadcast(x, root)) * w) end)
    end
  end)

  it("all_gather and reduce_scatter", function()
    local wg = weights({2 * n, 2}, 7)
    check(input({2, 2}, 7), function(x) return tf.reduce_sum(C.all_gather(tf.square(x)) * wg) end)
    local ws = weights({2}, 8)
    for _, op in ipairs({"SUM", "MEAN", "MAX"}) do
      check(input({2 * n}, 8), function(x) return tf.reduce_sum(C.reduce_scatter(x, op) * ws) end)
    end
  end)

  it("inside tf.fn: the traced gradient replays", function()
    local w = weights({3}, 9)
    local step = tf.fn(function(x)
      local tape = tf.GradientTape()
      tape:watch(x)
      local l = tape:record(function() return tf.reduce_sum(C.all_reduce(x * x, "MEAN") * w) end)
      return tape:gradient(l, x)
    end)
    for s = 1, 2 do
      local x = input({3}, 9) * s
      -- d/dx_r of sum_k sum(w_k * mean_j(x_j^2)) = 2 x_r * mean-all-reduce... = 2 x_r * sum_k w_k / n
      local want = 2 * x * C.all_reduce(w) / n
      assert.tensor_near(want, step(x), {atol = 1e-12})
    end
  end)
end)
