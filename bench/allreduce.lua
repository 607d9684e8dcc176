-- bench/allreduce.lua: tf.distribute.collective's all-reduce under
-- `mpirun -np 2` (bench/allreduce.sh runs it beside bench/mpi_allreduce.c).
--   all_reduce of 1 MB and 100 MB float32 (median of timed calls, each after
--   a barrier, as the C peer's)
--   a 100-variable model (50 dense layers 64x64 + bias, batch 128): step time
--   with and without the bucketed all-reduce of its gradients (MEAN), and
--   the number of all_reduce calls the buckets made
-- Prints "key value" lines (rank 0) for bench/allreduce.sh's table.
local tf = require("tf")
local C = require("tf.distribute.collective")
local comm = C.init()
local reps1, reps100, steps = tonumber(arg[1] or "50"), tonumber(arg[2] or "7"), tonumber(arg[3] or "30")

local function median(t)
  table.sort(t)
  return t[(#t + 1) // 2]
end
local function out(k, v)
  if comm.rank == 0 then print(k, v) end
end

for _, mb in ipairs({1, 100}) do
  local n = mb * (1 << 20) // 4
  local x = tf.fill({n}, comm.rank + 1.0)
  local y = C.all_reduce(x)   -- warm-up (and a check of the value)
  assert(y[n]:totable() == comm.size * (comm.size + 1) / 2)
  local t = {}
  y = nil
  for k = 1, (mb == 1 and reps1 or reps100) do
    -- the previous output goes back to the engine's block cache first (as
    -- the C peer reuses its buffer): the timing is the all-reduce's, not
    -- fresh pages'
    collectgarbage()
    C.barrier()
    local t0 = C.wtime()
    y = C.all_reduce(x)
    t[k] = C.wtime() - t0
    y = nil
  end
  out("luatf_allreduce " .. (mb << 20), ("%.6f"):format(median(t)))
  x = nil
  collectgarbage()
end

-- the 100-variable model
local L = 50
local vars = {}
tf.random.set_seed(1)
for i = 1, L do
  vars[#vars + 1] = tf.Variable(tf.random.normal({64, 64}, {stddev = 0.1}), {name = "w" .. i})
  vars[#vars + 1] = tf.Variable(tf.zeros({64}), {name = "b" .. i})
end
local xb = tf.random.normal({128, 64})
local function step(reduce)
  local tape = tf.GradientTape()
  local loss = tape:record(function()
    local h = xb
    for i = 1, L do h = tf.tanh(tf.matmul(h, vars[2 * i - 1]) + vars[2 * i]) end
    return tf.reduce_mean(tf.square(h))
  end)
  local g = tape:gradient(loss, vars)
  local tc
  if reduce == "aligned" then
    -- the communication alone: the workers first wait for each other (the
    -- imbalance of their compute on a shared machine is not the all-reduce's)
    C.barrier()
    local t0 = C.wtime()
    g = C.all_reduce_buckets(g, "MEAN")
    tc = C.wtime() - t0
  elseif reduce then
    g = C.all_reduce_buckets(g, "MEAN")
  end
  for i = 1, #vars do vars[i]:assign_sub(g[i] * 0.01) end
  return tc
end
step(true); step(false)
local tw, to, tc = {}, {}, {}
for s = 1, steps do   -- interleaved, so all three see the same machine load
  C.barrier()
  local t0 = C.wtime()
  step(true)
  tw[s] = C.wtime() - t0
  C.barrier()
  t0 = C.wtime()
  step(false)
  to[s] = C.wtime() - t0
  C.barrier()
  tc[s] = step("aligned")
end
out("allreduce_call_aligned", ("%.6f"):format(median(tc)))
out("step_with_allreduce", ("%.6f"):format(median(tw)))
out("step_without_allreduce", ("%.6f"):format(median(to)))
out("bucket_calls", C.last_bucket_calls)
local bytes = 0
for i = 1, #vars do bytes = bytes + vars[i]:read_value():numel() * 4 end
out("gradient_bytes", bytes)
