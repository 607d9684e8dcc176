-- spec/distribute/workers/checkpoint.lua MODE DIR: one worker of an MPI job
-- (spec/distribute/checkpoint_strategy_spec.lua). MODE "first": train the
-- MLP with Adam on global batches 1..10, save with a CheckpointManager in
-- DIR/ckpt, Checkpoint:write to DIR/rank-<task_id> and model:save_weights
-- to DIR/weights-<task_id> (only the chief's files may appear). MODE
-- "resume": restore the latest checkpoint (every worker), write the
-- restored weights to DIR/restored-<task_id>.txt, train on batches 11..20
-- and the chief writes DIR/final.txt.
package.path = "spec/?.lua;" .. package.path
local tf = require("tf")
local cases = require("distribute.workers.cases")
local mode, dir = arg[1], arg[2]

local strategy = tf.distribute.MultiWorkerMirroredStrategy()
local rank = strategy.cluster_resolver.task_id

local model, opt, ckpt, manager
strategy:scope(function()
  model = cases.model("mlp")
  opt = cases.optimizer("adam")
  ckpt = tf.train.Checkpoint{model = model, optimizer = opt}
  manager = tf.train.CheckpointManager(ckpt, dir .. "/ckpt", {max_to_keep = 2})
end)

local function dump(path, m)
  local f = assert(io.open(path, "w"))
  for _, w in ipairs(cases.weights(m)) do
    for _, x in ipairs(w) do f:write(("%.9g\n"):format(x)) end
  end
  f:close()
end

if mode == "first" then
  cases.custom(strategy, "mlp", "adam", nil, {model = model, opt = opt, first = 1, last = 10})
  manager:save()
  ckpt:write(dir .. "/rank-" .. rank)
  model:save_weights(dir .. "/weights-" .. rank)
else
  local status = manager:restore_or_initialize()
  assert(status, "no checkpoint to resume from")
  dump(dir .. "/restored-" .. rank .. ".txt", model)
  cases.custom(strategy, "mlp", "adam", nil, {model = model, opt = opt, first = 11, last = 20})
  if rank == 0 then dump(dir .. "/final.txt", model) end
end
