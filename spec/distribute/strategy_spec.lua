-- tf.distribute in one process: the default strategy, OneDeviceStrategy and
-- a MultiWorkerMirroredStrategy of one worker (started without mpirun);
-- the multi-process behaviour is in equivalence_strategy_spec.lua.
local tf = require("tf")
local cases = require("distribute.workers.cases")

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok)
  return e
end

describe("tf.distribute", function()
  describe("the default strategy", function()
    it("is current outside any scope, with one replica", function()
      local s = tf.distribute.get_strategy()
      assert.equals(1, s.num_replicas_in_sync)
      assert.is_false(tf.distribute.has_strategy())
      assert.equals("DefaultStrategy(num_replicas_in_sync=1)", tostring(s))
    end)

    it("runs a function with its arguments and returns its results", function()
      local s = tf.distribute.get_strategy()
      local a, b = s:run(function(x, y) return x + y, x * y end, {args = {tf.constant(2.0), tf.constant(3.0)}})
      assert.equals(5, a:item())
      assert.equals(6, b:item())
    end)

    it("reduces along an axis (SUM and MEAN) and gathers as the identity", function()
      local s = tf.distribute.get_strategy()
      local v = tf.constant({{1.0, 2.0}, {3.0, 5.0}})
      assert.same({4, 7}, s:reduce("SUM", v, 1):totable())
      assert.same({1.5, 4}, s:reduce("MEAN", v, {axis = 2}):totable())
      assert.same({{1, 2}, {3, 5}}, s:reduce("SUM", v):totable())
      assert.same({{1, 2}, {3, 5}}, s:gather(v, 1):totable())
    end)

    it("rejects an unknown reduce op, naming it", function()
      local e = err_of(function() tf.distribute.get_strategy():reduce("MAX", 1) end)
      assert.equals("ValueError", e.kind)
      assert.equals("reduce: argument 1 ('reduce_op') must be \"SUM\" or \"MEAN\", got \"MAX\"", e.message)
    end)

    it("rejects a run of something that is not a function", function()
      local e = err_of(function() tf.distribute.get_strategy():run(42) end)
      assert.equals("TypeError", e.kind)
      assert.equals("run: argument 1 ('fn') expected function, got number", e.message)
    end)

    it("rejects distributing something that is not a dataset", function()
      local e = err_of(function() tf.distribute.get_strategy():experimental_distribute_dataset({1, 2}) end)
      assert.equals("TypeError", e.kind)
      assert.equals("experimental_distribute_dataset: argument 1 ('dataset') expected a tf.data.Dataset, got table",
        e.message)
    end)

    it("rejects unknown strategy options, naming the accepted ones", function()
      local e = err_of(function() tf.distribute.MultiWorkerMirroredStrategy{workers = 2} end)
      assert.equals("TypeError", e.kind)
      assert.equals("MultiWorkerMirroredStrategy: unknown option 'workers' (accepted: cluster_resolver, " ..
        "communication_options)", e.message)
    end)

    it("rejects unknown run options", function()
      local e = err_of(function() tf.distribute.get_strategy():run(print, {argz = {}}) end)
      assert.equals("TypeError", e.kind)
      assert.equals("run: unknown option 'argz' (accepted: args, kwargs, options)", e.message)
    end)
  end)

  describe("OneDeviceStrategy", function()
    it("is current inside its scope (both forms) and gone after", function()
      local s = tf.distribute.OneDeviceStrategy("/cpu:0")
      do
        local _ <close> = s:scope()
        assert.equals(s, tf.distribute.get_strategy())
        assert.is_true(tf.distribute.has_strategy())
        assert.equals("/cpu:0", tf.current_device())
      end
      assert.is_false(tf.distribute.has_strategy())
      assert.equals(7, s:scope(function() return 7 end))
      assert.is_false(tf.distribute.has_strategy())
    end)

    it("refuses to enter a second strategy's scope inside the first", function()
      local a, b = tf.distribute.OneDeviceStrategy(), tf.distribute.OneDeviceStrategy()
      local e = err_of(function() a:scope(function() b:scope(function() end) end) end)
      assert.equals("RuntimeError", e.kind)
      assert.matches("Mixing different tf.distribute.Strategy objects", e.message, 1, true)
      assert.is_false(tf.distribute.has_strategy())
    end)

    it("trains a custom loop to the same weights as no strategy", function()
      local ref = cases.weights(cases.custom(tf.distribute.get_strategy(), "mlp", "adam"))
      local got = cases.weights(cases.custom(tf.distribute.OneDeviceStrategy(), "mlp", "adam"))
      assert.same(ref, got)
    end)
  end)

  describe("MultiWorkerMirroredStrategy without mpirun", function()
    if require("distribute.mpi_support").job_size() then
      pending("started by mpirun (scripts/mpi-specs.sh): the one-worker cases need a plain busted run")
      return
    end
    local s = tf.distribute.MultiWorkerMirroredStrategy()

    it("is one worker, the chief", function()
      assert.equals(1, s.num_replicas_in_sync)
      assert.equals(0, s.cluster_resolver.task_id)
      assert.equals("worker", s.cluster_resolver.task_type)
      assert.equals("MultiWorkerMirroredStrategy(num_replicas_in_sync=1, task_id=0)", tostring(s))
    end)

    it("mirrors variables created in its scope", function()
      local v = s:scope(function() return tf.Variable(1.5) end)
      local w = tf.Variable(2.5)
      assert.is_true(tf.distribute._is_mirrored(v))
      assert.is_false(tf.distribute._is_mirrored(w))
    end)

    it("distributes a dataset of global batches unchanged", function()
      local ds = tf.data.Dataset.range(0, 10):batch(4)
      local dist = s:experimental_distribute_dataset(ds)
      local got = {}
      for x in dist:iter() do got[#got + 1] = x:totable() end
      assert.same({{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}, got)
      assert.equals(3, dist:cardinality())
    end)

    it("builds each worker's dataset from a function of the input context", function()
      local seen
      local dist = s:distribute_datasets_from_function(function(ctx)
        seen = {ctx.num_input_pipelines, ctx.input_pipeline_id, ctx:get_per_replica_batch_size(8)}
        return tf.data.Dataset.range(0, 4):batch(2)
      end)
      assert.same({1, 0, 8}, seen)
      local got = {}
      for x in dist:iter() do got[#got + 1] = x:totable() end
      assert.same({{0, 1}, {2, 3}}, got)
    end)

    it("rejects an unknown auto_shard_policy", function()
      local e = err_of(function()
        s:experimental_distribute_dataset(tf.data.Dataset.range(0, 4), {auto_shard_policy = "ROWS"})
      end)
      assert.equals("ValueError", e.kind)
      assert.equals("experimental_distribute_dataset: unknown auto_shard_policy \"ROWS\" (accepted: AUTO, DATA, OFF)",
        e.message)
    end)

    it("fits in its scope to the same weights as without it", function()
      local ref, lref = cases.fit(tf.distribute.get_strategy(), "mlp", "sgd")
      local got, lgot = cases.fit(s, "mlp", "sgd")
      assert.same(cases.weights(ref), cases.weights(got))
      assert.equals(lref, lgot)
    end)
  end)

  describe("the split of a global batch", function()
    it("gives each worker a contiguous part, the first ones one row more", function()
      local share = tf.distribute._share
      -- 10 rows over 3 workers: 4, 3, 3
      assert.same({1, 4}, {share(10, 0, 3)})
      assert.same({5, 3}, {share(10, 1, 3)})
      assert.same({8, 3}, {share(10, 2, 3)})
      -- 2 rows over 3 workers: the last has none
      assert.same({3, 0}, {share(2, 2, 3)})
    end)
  end)
end)

describe("tf.distribute inside tf.fn", function()
  it("reduces MEAN along an axis of unknown size", function()
    if require("distribute.mpi_support").job_size() then
      pending("started by mpirun: dataset_strategy_spec.lua covers this on several workers")
      return
    end
    local s = tf.distribute.MultiWorkerMirroredStrategy()
    local f = tf.fn(function(x) return s:reduce("MEAN", x, 1) end,
      {input_signature = {tf.TensorSpec({tf.None, 2}, tf.float32)}})
    assert.same({2, 3}, f(tf.constant({{1.0, 2.0}, {3.0, 4.0}})):totable())
    assert.same({{1, 2}}, s:gather(tf.constant({{1.0, 2.0}}), 1):totable())
  end)
end)

describe("tf.distribute.collective", function()
  it("is the collective module, reachable from the namespace", function()
    local C = tf.distribute.collective
    assert.equals("function", type(C.all_reduce))
    assert.same({1, 2}, C.all_reduce(tf.constant({1.0, 2.0}), "MEAN"):totable())
  end)
end)

describe("MultiWorkerMirroredStrategy without the MPI module", function()
  -- a child lua5.4 in which tf/mpi.so fails to load (as on a build without MPI)
  local function child(env)
    local code = "package.preload['tf.mpi'] = function() error('not built') end " ..
      "local tf = require('tf') local ok, s = pcall(tf.distribute.MultiWorkerMirroredStrategy) " ..
      "if ok then print('workers ' .. s.num_replicas_in_sync) else print(s.kind .. ': ' .. s.message) end"
    local p = io.popen(("env -u OMPI_COMM_WORLD_SIZE -u PMI_SIZE -u PMIX_SIZE %s lua5.4 -e \"%s\" 2>&1"):format(env, code))
    local out = p:read("a")
    p:close()
    return out
  end

  it("is one worker when the script was not started by an MPI launcher", function()
    assert.equals("workers 1\n", child(""))
  end)

  it("refuses to start in a job of several processes, saying why", function()
    assert.equals("UnavailableError: MultiWorkerMirroredStrategy: this process is one of 2 started by an MPI " ..
      "launcher, but luatf's MPI module (tf/mpi.so) is not available: install libopenmpi-dev and rebuild " ..
      "(docs/distribute.md)\n", child("OMPI_COMM_WORLD_SIZE=2"))
  end)
end)
