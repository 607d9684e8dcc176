--- tf.distribute: strategies (docs/distribute.md). MultiWorkerMirroredStrategy
-- trains one replica per process over MPI (the communicator of the
-- processes `mpirun` started: rank = task_id, size = num_replicas_in_sync);
-- OneDeviceStrategy and the default strategy let the same code run in one
-- process without MPI.
--
-- What a multi-worker strategy does:
--   * variables created in its scope are mirrored: checked for the same
--     name, shape and dtype on every worker, then set to the chief's value
--     by a broadcast (tf.Variable's constructor is wrapped below);
--   * an optimizer's apply_gradients on mirrored variables all-reduces the
--     gradients (MEAN, in buckets) before applying them (the hook
--     tf.core.internal.aggregate_gradients that lua/tf/keras/optimizers.lua
--     calls), so every worker applies the same update;
--   * a distributed dataset gives each worker its part of every global
--     batch (rows split as evenly as possible, in rank order);
--   * model:fit (lua/tf/keras/training.lua) uses the hooks in `fit_hooks`.
-- The collectives come from tf.distribute.collective (MPI, lua/tf/distribute/
-- collective.lua); without it, a one-process stand-in.
return function(tf)
  local core = tf.core
  local raise = tf.errors.raise
  local sfmt = string.format

  local distribute = tf.distribute or {}
  tf.distribute = distribute

  -- {==== collectives
  -- The one-process stand-in: every collective of a group of one is the identity.
  local SOLO = {
    available = function() return false end,
    init = function() return {rank = 0, size = 1} end,
    all_reduce = function(t) return t end,
    broadcast = function(t) return t end,
    all_gather = function(t) return t end,
    all_reduce_buckets = function(list) return list end,
    check_same = function() end,
    barrier = function() end,
  }

  local C
  --- The collective module (MPI) or the stand-in when it is not installed.
  local function collective()
    if C then return C end
    if package.searchpath("tf.distribute.collective", package.path) then
      local m = require("tf.distribute.collective")
      if type(m) == "function" then m = m(tf) or rawget(distribute, "collective") end
      C = m
    else
      C = SOLO
    end
    return C
  end

  -- The size of the MPI job this process belongs to, from the launcher's
  -- environment (OpenMPI, MPICH/Slurm PMI), or nil when not started by one.
  local function launcher_size()
    for _, k in ipairs({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) do
      local v = tonumber(os.getenv(k) or "")
      if v then return v end
    end
    return nil
  end
  -- }====

  -- {==== ReduceOp
  distribute.ReduceOp = {SUM = "SUM", MEAN = "MEAN"}
  local function check_op(op, what)
    if type(op) == "table" and op.value then op = op.value end
    if op ~= "SUM" and op ~= "MEAN" then
      raise("ValueError", sfmt("%s: argument 1 ('reduce_op') must be \"SUM\" or \"MEAN\", got %s", what,
        type(op) == "string" and sfmt("%q", op) or type(op)), 3)
    end
    return op
  end
  -- }====

  -- {==== structures (a tensor or a nested plain table of tensors)
  local function is_plain(v) return type(v) == "table" and getmetatable(v) == nil end
  local function smap(v, f)
    if is_plain(v) then
      local out = {}
      for k, e in pairs(v) do out[k] = smap(e, f) end
      return out
    end
    if v == nil then return nil end
    return f(v)
  end
  local function as_tensor(x)
    if tf.is_variable(x) then return x:value() end
    if tf.is_tensor(x) then return x end
    return tf.constant(x)
  end
  -- }====

  -- {==== the strategy stack
  local stack = {}           -- strategies whose scope is entered, innermost last
  local mirrored = setmetatable({}, {__mode = "k"})   -- variable -> the strategy that mirrors it
  local replica_depth = 0    -- > 0 inside strategy:run

  local Strategy = {}
  Strategy.__index = Strategy
  local default_strategy

  --- The strategy in scope, or the default strategy.
  function distribute.get_strategy()
    return stack[#stack] or default_strategy
  end
  --- True inside a (non-default) strategy's scope.
  function distribute.has_strategy() return #stack > 0 end
  --- True in a strategy's scope outside strategy:run (TensorFlow's cross-replica context).
  function distribute.in_cross_replica_context() return #stack > 0 and replica_depth == 0 end

  local Scope = {__name = "tf.distribute.Scope"}
  Scope.__index = Scope
  function Scope.__close(s)
    if s._closed then return end
    s._closed = true
    for i = #stack, 1, -1 do
      if stack[i] == s._strategy then table.remove(stack, i); break end
    end
    if s._device then s._device:__close() end
  end
  Scope.exit = Scope.__close

  --- strategy:scope(): a to-be-closed scope (`local _ <close> = strategy:scope()`),
  -- or strategy:scope(fn) running fn in it (returns fn's results).
  function Strategy:scope(fn)
    if getmetatable(self) ~= Strategy and not (getmetatable(self) and getmetatable(self).__index == Strategy) then
      raise("TypeError", "scope: call it as a method: strategy:scope()", 2)
    end
    local top = stack[#stack]
    if top and top ~= self then
      raise("RuntimeError", sfmt("scope: Mixing different tf.distribute.Strategy objects: %s is in scope, " ..
        "entering %s", top._class, self._class), 2)
    end
    stack[#stack + 1] = self
    local s = setmetatable({_strategy = self}, Scope)
    if self._device_name then s._device = tf.device(self._device_name) end
    if fn == nil then return s end
    local res = table.pack(pcall(fn))
    Scope.__close(s)
    if not res[1] then error(res[2], 0) end
    return table.unpack(res, 2, res.n)
  end

  function Strategy:__tostring()
    return sfmt("%s(num_replicas_in_sync=%d%s)", self._class, self.num_replicas_in_sync,
      self._class == "MultiWorkerMirroredStrategy" and sfmt(", task_id=%d", self.cluster_resolver.task_id) or "")
  end

  local RUN_KEYS = {args = true, kwargs = true, options = true}
  --- strategy:run(fn, {args = {...}}): fn(table.unpack(args)) on this
  -- worker's replica, inside the strategy's scope, in a replica context
  -- (an optimizer's apply_gradients all-reduces the gradients). Returns
  -- fn's results (this replica's values: reduce them with strategy:reduce).
  function Strategy:run(fn, opts)
    if type(fn) ~= "function" and not (getmetatable(fn) and getmetatable(fn).__call) then
      raise("TypeError", sfmt("run: argument 1 ('fn') expected function, got %s", type(fn)), 2)
    end
    opts = opts or {}
    if not is_plain(opts) then raise("TypeError", "run: argument 2 expected a keyword table {args = {...}}", 2) end
    for k in pairs(opts) do
      if not RUN_KEYS[k] then
        raise("TypeError", sfmt("run: unknown option '%s' (accepted: args, kwargs, options)", tostring(k)), 2)
      end
    end
    local args = opts.args or {}
    if not is_plain(args) then raise("TypeError", "run: 'args' must be a table of arguments", 2) end
    local n = args.n or #args
    if opts.kwargs ~= nil then n = n + 1; args = {table.unpack(args, 1, n - 1)}; args[n] = opts.kwargs end
    local s = self:scope()
    replica_depth = replica_depth + 1
    local res = table.pack(pcall(fn, table.unpack(args, 1, n)))
    replica_depth = replica_depth - 1
    s:__close()
    if not res[1] then error(res[2], 0) end
    return table.unpack(res, 2, res.n)
  end

  --- The replica's values of a run result (a one-entry list: one replica per worker).
  function Strategy:experimental_local_results(v) return {v} end

  -- reduce along 'axis' (1-based) first: (sum, count); the count is a
  -- tensor when the dimension is unknown (inside tf.fn)
  local function local_reduce(v, axis)
    if axis == nil then return v, nil end
    local s = tf.reduce_sum(v, {axis = axis})
    local a = axis < 0 and #v.shape + axis + 1 or axis
    local n = v.shape[a]
    if n == nil then n = tf.gather(tf.shape(v), a) end
    return s, n
  end

  --- strategy:reduce("SUM"|"MEAN", value [, axis]) or (op, value, {axis=}):
  -- the value reduced over every replica (and along 'axis', 1-based, when
  -- given), the same on every worker. value: a tensor, a Lua number or a
  -- nested table of them.
  function Strategy:reduce(op, value, axis)
    op = check_op(op, "reduce")
    if is_plain(axis) then axis = axis.axis end
    if axis ~= nil and math.type(axis) ~= "integer" then
      raise("TypeError", sfmt("reduce: 'axis' must be an integer (1-based) or nil, got %s", type(axis)), 2)
    end
    if value == nil then raise("ValueError", "reduce: argument 2 ('value') must be given", 2) end
    local coll = self._size > 1 and self._C or nil
    return smap(value, function(v)
      v = as_tensor(v)
      local s, n = local_reduce(v, axis)
      if not coll then
        if op == "MEAN" and n then return s / (tf.is_tensor(n) and tf.cast(n, s.dtype) or n) end
        return s
      end
      if op == "SUM" then return coll.all_reduce(s, "SUM") end
      if n == nil then return coll.all_reduce(s, "MEAN") end
      local total = coll.all_reduce(s, "SUM")
      local count = coll.all_reduce(tf.is_tensor(n) and tf.cast(n, tf.float64) or tf.constant(n, tf.float64), "SUM")
      return total / tf.cast(count, total.dtype)
    end)
  end

  --- strategy:gather(value, axis): the replicas' values concatenated along
  -- 'axis' (1-based, default 1) in task order; sizes along 'axis' may differ.
  function Strategy:gather(value, axis)
    if is_plain(axis) then axis = axis.axis end
    axis = axis or 1
    if math.type(axis) ~= "integer" then
      raise("TypeError", sfmt("gather: 'axis' must be an integer (1-based), got %s", type(axis)), 2)
    end
    local coll = self._size > 1 and self._C or nil
    return smap(value, function(v)
      v = as_tensor(v)
      if not coll then return v end
      local r = #v.shape
      local a = axis < 0 and r + axis + 1 or axis
      if a < 1 or a > r then
        raise("InvalidArgumentError", sfmt("gather: 'axis' %d is out of range for a value of rank %d", axis, r), 4)
      end
      if a ~= 1 then
        local perm = {a}
        for d = 1, r do if d ~= a then perm[#perm + 1] = d end end
        v = tf.transpose(v, perm)
      end
      -- sizes may differ (a last partial batch): pad to the largest, gather,
      -- cut (eagerly; inside tf.fn the sizes must be equal)
      if core.is_tracing() or v:is_symbolic() then
        local g = coll.all_gather(v)
        if a ~= 1 then
          local inv = {}
          for d = 2, a do inv[d - 1] = d end
          inv[a] = 1
          for d = a + 1, r do inv[d] = d end
          g = tf.transpose(g, inv)
        end
        return g
      end
      local sizes = coll.all_gather(tf.constant({v.shape[1]}, tf.int64)):totable()
      local m, same = 0, true
      for _, k in ipairs(sizes) do m = math.max(m, k); if k ~= sizes[1] then same = false end end
      local g
      if same then
        g = coll.all_gather(v)
      else
        local pad = {{0, m - v.shape[1]}}
        for d = 2, r do pad[d] = {0, 0} end
        local all = coll.all_gather(tf.pad(v, pad))
        local parts = {}
        for i, k in ipairs(sizes) do
          local b, sz = {(i - 1) * m + 1}, {k}
          for d = 2, r do b[d], sz[d] = 1, -1 end
          parts[i] = tf.slice(all, b, sz)
        end
        g = tf.concat(parts, 1)
      end
      if a ~= 1 then
        local inv = {}
        for d = 2, a do inv[d - 1] = d end
        inv[a] = 1
        for d = a + 1, r do inv[d] = d end
        g = tf.transpose(g, inv)
      end
      return g
    end)
  end
  -- }====

  -- {==== distributed datasets
  --- The rows of a global batch of 'n' rows that worker 'rank' (0-based) of
  -- 'size' takes: as evenly as possible, the first n % size workers one more.
  local function share(n, rank, size)
    local base, extra = n // size, n % size
    local start = rank * base + math.min(rank, extra)
    return start + 1, base + (rank < extra and 1 or 0)
  end
  distribute._share = share

  local function batch_rows(v)
    local t = v
    while is_plain(t) do
      local _, e = next(t)
      if e == nil then return nil end
      t = e
    end
    if tf.is_tensor(t) and t.rank > 0 then return t.shape[1] end
    return nil
  end

  --- This worker's part of one global batch (every tensor of the structure
  -- cut along its first axis).
  function Strategy:_split(v)
    if self._size == 1 or v == nil then return v end
    return smap(v, function(t)
      t = as_tensor(t)
      if t.rank == 0 then
        raise("InvalidArgumentError", "experimental_distribute_dataset: an element has a scalar component; " ..
          "batch the dataset (its elements must be global batches)", 5)
      end
      local b, k = share(t.shape[1], self._rank, self._size)
      local begin, size = {b}, {k}
      for d = 2, t.rank do begin[d], size[d] = 1, -1 end
      return tf.slice(t, begin, size)
    end)
  end

  local DistributedDataset = {__name = "tf.distribute.DistributedDataset"}
  DistributedDataset.__index = DistributedDataset

  --- dist:iter(): an iterator of this worker's batches: `for x, y in dist:iter() do`.
  function DistributedDataset:iter()
    local it = self._dataset:iter()
    local strategy, split = self._strategy, self._split
    return function()
      local e = table.pack(it())
      if e[1] == nil then return nil end
      if split then
        for i = 1, e.n do e[i] = strategy:_split(e[i]) end
      end
      return table.unpack(e, 1, e.n)
    end
  end
  DistributedDataset.__call = DistributedDataset.iter
  --- The number of steps (global batches), as the dataset's cardinality.
  function DistributedDataset:cardinality() return self._dataset:cardinality() end
  function DistributedDataset:__tostring()
    return sfmt("<tf.distribute.DistributedDataset over %d worker(s), policy %s>", self._strategy._size, self._policy)
  end

  local POLICIES = {AUTO = true, DATA = true, OFF = true, FILE = true}
  --- strategy:experimental_distribute_dataset(ds [, {auto_shard_policy = "AUTO"|"DATA"|"OFF"}]):
  -- 'ds' yields global batches; each worker reads every one and takes its
  -- part (AUTO, DATA). With "OFF" each worker's batches are its own
  -- (sharded by hand: ds:shard(n, task_id + 1) before batching).
  function Strategy:experimental_distribute_dataset(ds, opts)
    if type(ds) ~= "table" or type(ds.iter) ~= "function" then
      raise("TypeError", sfmt("experimental_distribute_dataset: argument 1 ('dataset') expected a tf.data.Dataset, got %s",
        type(ds)), 2)
    end
    opts = opts or {}
    local policy = opts.auto_shard_policy or "AUTO"
    if not POLICIES[policy] then
      raise("ValueError", sfmt("experimental_distribute_dataset: unknown auto_shard_policy %q (accepted: AUTO, DATA, OFF)",
        tostring(policy)), 2)
    end
    if policy == "FILE" then
      raise("UnimplementedError", "experimental_distribute_dataset: auto_shard_policy FILE is not supported; " ..
        "shard the file list by hand (ds:shard) and use \"OFF\", or use \"DATA\"", 2)
    end
    return setmetatable({_dataset = ds, _strategy = self, _policy = policy,
                         _split = policy ~= "OFF" and self._size > 1}, DistributedDataset)
  end

  --- strategy:distribute_datasets_from_function(fn): fn(input_context) gives
  -- this worker's dataset (input_context: num_input_pipelines,
  -- input_pipeline_id (0-based, as task_id), num_replicas_in_sync,
  -- get_per_replica_batch_size(global)).
  function Strategy:distribute_datasets_from_function(fn)
    local size, rank = self._size, self._rank
    local ctx = {num_input_pipelines = size, input_pipeline_id = rank, num_replicas_in_sync = size}
    function ctx.get_per_replica_batch_size(_, b)
      if b == nil then b = _ end
      if b % size ~= 0 then
        raise("ValueError", sfmt("The `global_batch_size` %d is not divisible by `num_replicas_in_sync` %d", b, size), 2)
      end
      return b // size
    end
    local ds = fn(ctx)
    return setmetatable({_dataset = ds, _strategy = self, _policy = "OFF", _split = false}, DistributedDataset)
  end
  -- }====

  -- {==== strategies
  local function new_strategy(class, size, rank, coll)
    local s = setmetatable({_class = class, _size = size, _rank = rank, _C = coll,
                            num_replicas_in_sync = size,
                            cluster_resolver = {task_type = "worker", task_id = rank, num_workers = size}},
                           Strategy)
    s.extended = {_is_chief = rank == 0, should_checkpoint = rank == 0, should_save_summary = rank == 0}
    return s
  end

  default_strategy = new_strategy("DefaultStrategy", 1, 0, nil)
  default_strategy.cluster_resolver = nil

  --- tf.distribute.OneDeviceStrategy(device): one replica on 'device'
  -- ("/cpu:0", "/gpu:0"); its scope places ops there.
  function distribute.OneDeviceStrategy(device)
    if device ~= nil and type(device) ~= "string" then
      raise("TypeError", sfmt("OneDeviceStrategy: argument 1 ('device') expected string, got %s", type(device)), 2)
    end
    local s = new_strategy("OneDeviceStrategy", 1, 0, nil)
    s._device_name = device or "/cpu:0"
    s.cluster_resolver = nil
    return s
  end

  local MWMS_KEYS = {communication_options = true, cluster_resolver = true}
  local the_mwms   -- one per process (as TensorFlow: the collective group is the process's)

  --- tf.distribute.MultiWorkerMirroredStrategy([{communication_options = {bytes_per_pack = n}}]):
  -- one replica per process of the MPI job (mpirun -np N); task_id is the
  -- MPI rank, 0 the chief. Started without mpirun: one worker.
  function distribute.MultiWorkerMirroredStrategy(opts)
    opts = opts or {}
    if not is_plain(opts) then
      raise("TypeError", "MultiWorkerMirroredStrategy: expected a keyword table or nothing", 2)
    end
    for k in pairs(opts) do
      if not MWMS_KEYS[k] then
        raise("TypeError", sfmt("MultiWorkerMirroredStrategy: unknown option '%s' (accepted: cluster_resolver, " ..
          "communication_options)", tostring(k)), 2)
      end
    end
    local coll = collective()
    local ok = coll ~= SOLO and coll.available()
    if not ok then
      local n = launcher_size()
      if n and n > 1 then
        raise("UnavailableError", sfmt("MultiWorkerMirroredStrategy: this process is one of %d started by an MPI " ..
          "launcher, but luatf's MPI module (tf/mpi.so) is not available: install libopenmpi-dev and rebuild " ..
          "(docs/distribute.md)", n), 2)
      end
      coll = SOLO
    end
    local comm = coll.init()
    local s = new_strategy("MultiWorkerMirroredStrategy", comm.size, comm.rank, coll)
    local co = opts.communication_options or {}
    s._bucket_bytes = co.bytes_per_pack
    if the_mwms == nil then the_mwms = s end
    return s
  end
  distribute.experimental = distribute.experimental or {}
  distribute.experimental.MultiWorkerMirroredStrategy = distribute.MultiWorkerMirroredStrategy
  --- tf.distribute.experimental.CommunicationOptions{bytes_per_pack = n}
  function distribute.experimental.CommunicationOptions(o) return o or {} end

  --- The replica context inside strategy:run (nil outside).
  function distribute.get_replica_context()
    if replica_depth == 0 then
      if #stack == 0 then
        return {num_replicas_in_sync = 1, replica_id_in_sync_group = 0, strategy = default_strategy,
                all_reduce = function(_, _, v) return v end}
      end
      return nil
    end
    local s = stack[#stack]
    return {num_replicas_in_sync = s._size, replica_id_in_sync_group = 0, strategy = s,
            all_reduce = function(_, op, v) return s:reduce(op, v) end}
  end
  -- }====

  -- {==== mirrored variables: created in a strategy's scope, set from the chief
  local count = 0
  local function mirror(s, v)
    mirrored[v] = s
    if s._size == 1 then return end
    count = count + 1
    local coll = s._C
    tf.init_scope(function()
      local value = core.variable_peek(v._handle)
      coll.check_same("mirrored variable", sfmt("#%d '%s' shape=%s dtype=%s", count, v._name,
        tostring(value.shape), value.dtype.name))
      v:assign(coll.broadcast(v:value(), 0))
    end)
  end
  do
    local vmt = getmetatable(tf.Variable)
    local create = vmt.__call
    vmt.__call = function(self, init, opts)
      local v = create(self, init, opts)
      local s = stack[#stack]
      if s and s._class == "MultiWorkerMirroredStrategy" then mirror(s, v) end
      return v
    end
  end
  --- True when 'v' is mirrored by a strategy (created in its scope).
  function distribute._is_mirrored(v) return mirrored[v] ~= nil end

  -- Gradients of mirrored variables are averaged over the workers (one
  -- bucketed all-reduce) before an optimizer applies them.
  core.internal.aggregate_gradients = function(grads, vars, n)
    local s
    for i = 1, n do
      local m = grads[i] ~= nil and mirrored[vars[i]]
      if m and m._size > 1 then s = m; break end
    end
    if not s then return grads end
    local idx, list = {}, {}
    for i = 1, n do
      local g = grads[i]
      if g ~= nil and mirrored[vars[i]] == s then
        idx[#idx + 1] = i
        list[#list + 1] = as_tensor(g)
      end
    end
    local coll = s._C
    local out
    if coll.all_reduce_buckets then
      out = coll.all_reduce_buckets(list, "MEAN", s._bucket_bytes and {bucket_bytes = s._bucket_bytes} or nil)
    else
      out = {}
      for i, g in ipairs(list) do out[i] = coll.all_reduce(g, "MEAN") end
    end
    local r = {}
    for i = 1, n do r[i] = grads[i] end
    for j, i in ipairs(idx) do r[i] = out[j] end
    return r
  end
  -- }====

  -- {==== hooks for model:fit (lua/tf/keras/training.lua) and checkpoints
  local fit_hooks = {}
  distribute._fit_hooks = fit_hooks
  --- The strategy in scope (nil: default).
  function fit_hooks.current() return stack[#stack] end
  --- A value the same on every worker (the chief's): the order of a shuffle.
  function fit_hooks.same(s, t)
    if s._size == 1 then return t end
    return s._C.broadcast(t, 0)
  end
  fit_hooks.split = function(s, v) return s:_split(v) end
  fit_hooks.rows = batch_rows
  fit_hooks.share = share
  --- Sum the state of metrics over the workers (each metric's result is
  -- then the global one: its state variables are totals and counts).
  function fit_hooks.sync_metrics(s, list)
    if s._size == 1 then return end
    for _, m in ipairs(list) do
      for _, w in ipairs(rawget(m, "_weights") or {}) do w:assign(s._C.all_reduce(w:value(), "SUM")) end
    end
  end
  -- installed into Keras's training loop when it is (or once it is) loaded
  core.internal.distribute_fit = fit_hooks

  -- checkpoints: only the chief of a multi-worker strategy writes; every
  -- worker waits at a barrier after a save so that it can then read it
  local function writer()
    local s = stack[#stack] or the_mwms
    return s == nil or s._rank == 0
  end
  local function after_save()
    local s = stack[#stack] or the_mwms
    if s and s._size > 1 then s._C.barrier() end
  end
  core.internal.checkpoint_writer = writer
  core.internal.checkpoint_after_save = after_save
  -- }====

  distribute.Strategy = Strategy
  distribute.DistributedDataset = DistributedDataset
  -- tf.distribute.collective: the collectives themselves (loaded on first use)
  setmetatable(distribute, {__index = function(t, k)
    if k == "collective" then
      local c = collective()
      rawset(t, k, c)
      return c
    end
  end})
  return distribute
end
