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
for epoch = 1, 2 do
  for _, e in ipairs({{"auto", dist}, {"hand", by_hand}}) do
    local seen = {}
    for x in e[2]:iter() do
      for _, v in ipairs(x:totable()) do seen[#seen + 1] = v end
    end
    record(e[1], epoch, seen)
  end
end
if rank == 0 then
  local f = assert(io.open(out, "w"))
  f:write(table.concat(lines, "\n"), "\n")
  f:close()
end
