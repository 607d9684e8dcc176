--- tf.distribute.collective: collective communication between the
-- processes of an MPI job (docs/distribute_collectives.md). The ops are
-- registry ops (core/ops/collective.c: eager, inside tf.fn, with
-- gradients); the transport is tf/mpi.so, loaded on demand by init() and
-- handed to this lua_State's engine context. Without MPI (module not
-- built, or the script not started by mpirun/srun) every collective is
-- the identity of a group of one (rank 0 of 1), as TensorFlow's default
-- strategy.
--
--   local C = require("tf.distribute.collective")
--   local comm = C.init()              -- {rank = 0-based, size = n}
--   local s = C.all_reduce(t, "MEAN")  -- "SUM" (default), "MEAN", "MAX", "MIN"
local tf = require("tf")
local core = tf.core

local C = {}

local REDUCE = {SUM = 0, MEAN = 1, MAX = 2, MIN = 3}
local DEFAULT_BUCKET_BYTES = 25 * 1024 * 1024   -- the fusion buffer (PyTorch DDP's default too)
C.DEFAULT_BUCKET_BYTES = DEFAULT_BUCKET_BYTES

local function raise(kind, fmt, ...)
  tf.errors.raise(kind, select("#", ...) > 0 and fmt:format(...) or fmt, 3)
end

local mpi_mod, mpi_err   -- tf/mpi.so (false when absent)
local function load_mpi()
  if mpi_mod == nil then
    local ok, m = pcall(require, "tf.mpi")
    if ok then mpi_mod = m else mpi_mod, mpi_err = false, tostring(m) end
  end
  return mpi_mod
end

--- C.available() -> true when tf/mpi.so is built and loads.
function C.available()
  return load_mpi() and true or false
end

local comm   -- this lua_State's {rank, size, backend}

--- C.init() -> {rank = r (0-based), size = n, backend = "mpi"|"self"}.
-- MPI_Init once per process (idempotent); a group of one when MPI is
-- absent or the process was not launched by an MPI starter.
function C.init()
  if comm then return comm end
  local m = load_mpi()
  local rank, size, ud = 0, 1, nil
  if m then rank, size, ud = m.init() end
  if ud then core.collective_set(ud) end
  comm = {rank = rank, size = size, backend = ud and "mpi" or "self"}
  return comm
end

--- C.rank(), C.size(): of this process (initializing on first use).
function C.rank() return C.init().rank end
function C.size() return C.init().size end

--- C.wtime() -> seconds (CLOCK_MONOTONIC when tf/mpi.so loads): for timings
-- that compare across processes of one host.
function C.wtime()
  local m = load_mpi()
  if m then return m.wtime() end
  return os.time()
end

--- C.info() -> what tf/mpi.so reports (library, timeout, lost) or nil.
function C.info()
  local m = load_mpi()
  if not m then return nil, mpi_err end
  C.init()
  return m.info()
end

local function reduce_code(op, what)
  if op == nil then return 0 end
  local c = type(op) == "string" and REDUCE[op:upper()]
  if not c then
    raise("InvalidArgumentError", "%s: argument 'op' must be one of \"SUM\", \"MEAN\", \"MAX\", \"MIN\", got %s",
          what, type(op) == "string" and ("\"" .. op .. "\"") or tostring(op))
  end
  return c
end

local function check_value(t, what)
  if t == nil then raise("TypeError", "%s: argument 'value' must be a tensor, got nil", what) end
end

--- C.all_reduce(t, op) -> the reduction of t over every rank (op: "SUM"
-- default, "MEAN", "MAX", "MIN"); same shape and dtype on every rank.
function C.all_reduce(t, op)
  check_value(t, "all_reduce")
  local code = reduce_code(op, "all_reduce")
  C.init()
  return (core.collective_all_reduce({t}, code))
end

--- C.broadcast(t, root) -> rank root's t (0-based, default 0) on every rank.
function C.broadcast(t, root)
  check_value(t, "broadcast")
  root = root or 0
  if math.type(root) ~= "integer" then
    raise("TypeError", "broadcast: argument 'root' must be an integer rank (0-based), got %s", tostring(root))
  end
  C.init()
  return core.collective_broadcast(t, root)
end

--- C.all_gather(t) -> every rank's t concatenated along the first axis, in rank order.
function C.all_gather(t)
  check_value(t, "all_gather")
  C.init()
  return core.collective_all_gather(t)
end

--- C.reduce_scatter(t, op) -> this rank's block of the reduction of t
-- (the first axis split evenly over the ranks: it must divide).
function C.reduce_scatter(t, op)
  check_value(t, "reduce_scatter")
  local code = reduce_code(op, "reduce_scatter")
  C.init()
  return core.collective_reduce_scatter(t, code)
end

--- C.all_reduce_buckets(list, op, {bucket_bytes = n}) -> list of reduced
-- tensors, in order. Consecutive tensors of one dtype are packed into
-- buckets of at most bucket_bytes (default C.DEFAULT_BUCKET_BYTES, 25 MiB;
-- a tensor larger than that is a bucket of its own), each reduced by one
-- all_reduce op over one fusion buffer. nil entries stay nil.
function C.all_reduce_buckets(list, op, opts)
  if type(list) ~= "table" then
    raise("TypeError", "all_reduce_buckets: argument 'list' must be a table of tensors, got %s", type(list))
  end
  local code = reduce_code(op, "all_reduce_buckets")
  local limit = DEFAULT_BUCKET_BYTES
  if opts ~= nil then
    if type(opts) ~= "table" then
      raise("TypeError", "all_reduce_buckets: argument 'opts' must be a table {bucket_bytes = n}, got %s", type(opts))
    end
    for k in pairs(opts) do
      if k ~= "bucket_bytes" then raise("TypeError", "all_reduce_buckets: unknown option '%s'", tostring(k)) end
    end
    if opts.bucket_bytes ~= nil then
      limit = opts.bucket_bytes
      if math.type(limit) ~= "integer" or limit < 1 then
        raise("InvalidArgumentError", "all_reduce_buckets: bucket_bytes must be a positive integer, got %s", tostring(limit))
      end
    end
  end
  C.init()
  local n = 0
  for k in pairs(list) do
    if math.type(k) == "integer" and k > n then n = k end
  end
  local is_tensor = tf.is_tensor
  local conv
  for i = 1, n do
    local t = list[i]
    if t ~= nil and not is_tensor(t) then
      conv = conv or table.move(list, 1, n, 1, {})
      conv[i] = type(t) == "table" and type(t.read_value) == "function" and t:read_value() or tf.convert_to_tensor(t)
    end
  end
  -- bindings/collective.c: the grouping and one all_reduce op per bucket
  local out, calls = core.collective_all_reduce_buckets(conv or list, n, code, limit)
  C.last_bucket_calls = calls
  return out
end

--- C.check_same(what, value_string): raises an InvalidArgumentError naming
-- the first rank whose string differs from rank 0's and both strings when
-- the ranks disagree (variable lists, shapes); nothing in a group of one.
function C.check_same(what, value)
  if type(what) ~= "string" then raise("TypeError", "check_same: argument 'what' must be a string, got %s", type(what)) end
  if type(value) ~= "string" then
    raise("TypeError", "check_same: argument 'value' must be a string, got %s", type(value))
  end
  C.init()
  core.collective_check(what, value)
end

--- C.barrier(): wait until every rank gets here.
function C.barrier()
  C.init()
  core.collective_barrier()
end

return C
