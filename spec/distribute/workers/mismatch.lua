-- spec/distribute/workers/mismatch.lua OUT_DIR: one worker of an MPI job
-- (spec/distribute/mismatch_strategy_spec.lua) whose workers create a
-- mirrored variable of different shapes (task 1: (3,), the others: (2,));
-- each writes the error it gets to OUT_DIR/err-<task_id>.txt.
local tf = require("tf")
local strategy = tf.distribute.MultiWorkerMirroredStrategy()
local rank = strategy.cluster_resolver.task_id
local ok, err = pcall(function()
  strategy:scope(function()
    tf.Variable(rank == 1 and {1.0, 2.0, 3.0} or {1.0, 2.0}, {name = "w"})
  end)
end)
local f = assert(io.open(arg[1] .. "/err-" .. rank .. ".txt", "w"))
f:write(ok and "no error" or (tostring(err.kind) .. ": " .. tostring(err.message)), "\n")
f:close()
