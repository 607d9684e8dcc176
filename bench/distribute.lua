-- bench/distribute.lua [STEPS] [BATCH]: the MNIST convnet's training
-- throughput (examples per second) under MultiWorkerMirroredStrategy, one
-- worker per process (run by bench/distribute.sh with mpirun -np 1 and 2).
-- Each worker takes BATCH examples per step (default 64: the global batch
-- is BATCH x workers, as data-parallel scaling is measured); synthetic
-- 28x28 inputs. 3 warm-up steps (traces), then STEPS timed steps between
-- two barriers, wall clock; the chief prints one line.
local tf = require("tf")
local steps = tonumber(arg[1] or "30")
local batch = tonumber(arg[2] or "64")

local strategy = tf.distribute.MultiWorkerMirroredStrategy()
local n = strategy.num_replicas_in_sync
local L = tf.keras.layers
local model, opt
strategy:scope(function()
  tf.random.set_seed(1)
  model = tf.keras.Sequential{
    L.Input{shape = {28, 28, 1}},
    L.Conv2D{32, {3, 3}, activation = "relu"},
    L.MaxPooling2D{pool_size = {2, 2}},
    L.Conv2D{64, {3, 3}, activation = "relu"},
    L.MaxPooling2D{pool_size = {2, 2}},
    L.Flatten{},
    L.Dense{10},
  }
  opt = tf.keras.optimizers.Adam{learning_rate = 1e-3}
end)
local loss_fn = tf.keras.losses.SparseCategoricalCrossentropy{from_logits = true}
-- each worker's part of a global batch (its own synthetic examples)
local x = tf.random.uniform({batch, 28, 28, 1})
local y = tf.cast(tf.random.uniform({batch}, 1, 11), tf.int64)
local step = tf.fn(function(xb, yb)
  return strategy:run(function(a, b)
    local tape = tf.GradientTape()
    local loss = tape:record(function() return loss_fn(b, model(a, {training = true})) end)
    local vars = model.trainable_variables
    opt:apply_gradients(tape:gradient(loss, vars), vars)
    return loss
  end, {args = {xb, yb}})
end)
for _ = 1, 3 do step(x, y) end
-- this process's CPU seconds (user + system, /proc/self/stat): a diagnostic
-- beside the wall clock, which is the figure (busy-waiting in MPI counts too)
local function cpu()
  local f = io.open("/proc/self/stat")
  if not f then return 0 end
  local st = f:read("a")
  f:close()
  local fields = {}
  for w in st:gsub("^.-%) ", ""):gmatch("%S+") do fields[#fields + 1] = w end
  return (tonumber(fields[12]) + tonumber(fields[13])) / 100
end
local C = strategy._C
C.barrier()
local c0 = cpu()
local t0 = tf.timestamp():item()
local last
for _ = 1, steps do last = step(x, y) end
last:item()
C.barrier()
local dt = tf.timestamp():item() - t0
local dc = cpu() - c0
if strategy.cluster_resolver.task_id == 0 then
  print(("convnet training, %d worker(s), %d examples per worker per step: %.1f examples/s (%.1f ms/step; " ..
    "the chief's CPU %.1f ms/step)"):format(n, batch, steps * batch * n / dt, dt / steps * 1e3, dc / steps * 1e3))
end
