-- spec/distribute/workers/shards.lua OUT: one worker of an MPI job
-- (spec/distribute/dataset_strategy_spec.lua). Over 2 epochs of a
-- distributed dataset (range 0..49 in global batches of 12: the last batch
-- has 2 rows) and of a dataset sharded by hand (ds:shard(N, task_id + 1),
-- batches of 4, auto_shard_policy "OFF"), the examples every worker saw are
-- gathered; the chief writes one line per epoch and kind: the values, sorted.
local tf = require("tf")
local out = arg[1]
local strategy = tf.distribute.MultiWorkerMirroredStrategy()
local n, rank = strategy.num_replicas_in_sync, strategy.cluster_resolver.task_id

local lines = {}
local function record(kind, epoch, seen)
  local mine = #seen > 0 and tf.constant(seen, tf.int64) or tf.zeros({0}, tf.int64)
  local all = strategy:gather(mine, 1):totable()
  table.sort(all)
  local s = {}
  for i, v in ipairs(all) do s[i] = tostring(v) end
  lines[#lines + 1] = ("%s %d: %s"):format(kind, epoch, table.concat(s, " "))
end

local ds = tf.data.Dataset.range(0, 50):batch(12)
local dist = strategy:experimental_distribute_dataset(ds)
local by_hand = strategy:experimental_distribute_dataset(
  tf.data.Dataset.range(0, 50):shard(n, rank + 1):batch(4), {auto_shard_policy = "OFF"})
local from_fn = strategy:distribute_datasets_from_function(function(ctx)
  return tf.data.Dataset.range(0, 50):shard(ctx.num_input_pipelines, ctx.input_pipeline_id + 1)
    :batch(ctx:get_per_replica_batch_size(12))
end)
for epoch = 1, 2 do
  for _, e in ipairs({{"auto", dist}, {"hand", by_hand}, {"fn", from_fn}}) do
    local seen = {}
    for x in e[2]:iter() do
      for _, v in ipairs(x:totable()) do seen[#seen + 1] = v end
    end
    record(e[1], epoch, seen)
  end
end
-- reduce along an axis and gather along axis 2 inside tf.fn (a None batch dimension)
local f = tf.fn(function(x) return strategy:reduce("MEAN", x, 1), strategy:gather(x, 2) end,
  {input_signature = {tf.TensorSpec({tf.None, 2}, tf.float32)}})
local m, g = f(tf.constant({{rank * 1.0, 1.0}}))
local function join(t) local o = {} for i, v in ipairs(t) do o[i] = ("%g"):format(v) end return table.concat(o, " ") end
lines[#lines + 1] = "traced mean: " .. join(m:totable())
lines[#lines + 1] = "traced gather: " .. join(g:totable()[1])
if rank == 0 then
  local f = assert(io.open(out, "w"))
  f:write(table.concat(lines, "\n"), "\n")
  f:close()
end
