-- spec/distribute/workers/equivalence.lua OUT_DIR: one worker of an MPI job
-- (spec/distribute/equivalence_strategy_spec.lua starts it with mpirun -np N).
-- Trains each case under MultiWorkerMirroredStrategy; after every step the
-- weights of all workers are gathered and compared (they must be identical).
-- The chief writes each case's final weights to OUT_DIR/<case>.txt
-- (one "%.9g" value a line) and "mirror ok"/"mirror differs" lines.
package.path = "spec/?.lua;" .. package.path
local tf = require("tf")
local cases = require("distribute.workers.cases")
local out_dir = assert(arg[1], "usage: equivalence.lua OUT_DIR [case...]")

local strategy = tf.distribute.MultiWorkerMirroredStrategy()
local n, rank = strategy.num_replicas_in_sync, strategy.cluster_resolver.task_id

local function write(name, model, extra)
  if rank ~= 0 then return end
  local f = assert(io.open(out_dir .. "/" .. name .. ".txt", "w"))
  f:write(("workers %d\n"):format(n))
  for _, line in ipairs(extra or {}) do f:write(line, "\n") end
  for _, w in ipairs(cases.weights(model)) do
    for _, x in ipairs(w) do f:write(("%.9g\n"):format(x)) end
  end
  f:close()
end

-- every worker's copy of every weight, gathered along a new first axis:
-- all rows must be equal, bit for bit
local function mirror_check(model)
  for _, v in ipairs(model.trainable_variables) do
    local flat = tf.reshape(v:value(), {1, -1})
    local all = strategy:gather(flat, 1):totable()
    for r = 2, #all do
      for j = 1, #all[1] do
        if all[r][j] ~= all[1][j] then return false end
      end
    end
  end
  return true
end

local which = {}
for i = 2, #arg do which[arg[i]] = true end
for _, kind in ipairs({"mlp", "conv"}) do
  for _, opt in ipairs({"sgd", "adam"}) do
    local name = kind .. "_" .. opt
    if next(which) == nil or which[name] then
      local ok = true
      local model, _, traces = cases.custom(strategy, kind, opt, function(_, m) ok = mirror_check(m) and ok end)
      write(name, model, {ok and "mirror ok" or "mirror differs", ("traces %d"):format(traces)})
    end
  end
end
if next(which) == nil or which.fit then
  local model, loss, rows, ev = cases.fit(strategy, "mlp", "adam")
  write("fit_mlp_adam", model, {("loss %.9g"):format(loss), ("rows %d"):format(rows), ("eval %.9g %.9g"):format(ev[1], ev[2])})
end
if next(which) == nil or which.fit_dataset then
  local model, loss, rows, ev = cases.fit(strategy, "mlp", "adam", "dataset")
  write("fit_dataset", model, {("loss %.9g"):format(loss), ("rows %d"):format(rows), ("eval %.9g %.9g"):format(ev[1], ev[2])})
end
if next(which) == nil or which.fit_partial then
  -- a last global batch of 5 rows: 3 + 2 or 2 + 2 + 1 rows per worker
  local model, loss, rows, ev = cases.fit(strategy, "mlp", "sgd", 5)
  write("fit_partial", model, {("loss %.9g"):format(loss), ("rows %d"):format(rows), ("eval %.9g %.9g"):format(ev[1], ev[2])})
end
