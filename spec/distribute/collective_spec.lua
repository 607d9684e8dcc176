-- tf.distribute.collective: values of the collective ops across the ranks
-- of an MPI job, checked against hand computation of rank-dependent inputs
-- (rank r, 0-based, of n). scripts/mpi-specs.sh runs this file under
-- `mpirun -np 2` and `-np 3`; run alone (one process) it checks the group
-- of one (every collective the identity) and leaves the multi-rank cases
-- pending.
local tf = require("tf")
local C = require("tf.distribute.collective")

local comm = C.init()
local r, n = comm.rank, comm.size
local function multi()
  if n == 1 then pending("a group of one here: scripts/mpi-specs.sh runs this file under mpirun -np 2 and 3") end
  return n > 1
end

-- 1 + 2 + ... + n
local tri = n * (n + 1) / 2

describe("tf.distribute.collective", function()
  it("reports the communicator", function()
    if not C.available() then
      -- a build without MPI: the collectives still work, as a group of one
      assert.are.same({rank = 0, size = 1, backend = "self"}, comm)
      return pending("tf/mpi.so is not built (CMake found no MPI: apt-get install libopenmpi-dev)")
    end
    assert.are.equal(n, C.size())
    assert.are.equal(r, C.rank())
    assert.is_true(r >= 0 and r < n)
    if n > 1 then assert.are.equal("mpi", comm.backend) else assert.are.equal("self", comm.backend) end
  end)

  it("is the identity in a group of one", function()
    if n ~= 1 then return end
    local x = tf.constant({{1, 2}, {3, 4}}, tf.float32)
    assert.tensor_near(x, C.all_reduce(x))
    assert.tensor_near(x, C.all_reduce(x, "MEAN"))
    assert.tensor_near(x, C.broadcast(x))
    assert.tensor_near(x, C.all_gather(x))
    assert.tensor_near(x, C.reduce_scatter(x, "MAX"))
    assert.has_no.errors(function() C.check_same("anything", "a" .. r) end)
    assert.has_no.errors(C.barrier)
    assert.tf_error("InvalidArgumentError", "broadcast: root 1 is not a rank of this group of 1 (0-based)",
                    C.broadcast, x, 1)
  end)

  it("all_reduce SUM, MEAN, MAX, MIN of rank-dependent float32 values", function()
    if not multi() then return end
    local x = tf.constant({{1, -2, 3}, {0.5, 4, -1}}, tf.float32) * (r + 1)
    assert.tensor_near(tf.constant({{1, -2, 3}, {0.5, 4, -1}}) * tri, C.all_reduce(x))
    assert.tensor_near(tf.constant({{1, -2, 3}, {0.5, 4, -1}}) * (tri / n), C.all_reduce(x, "MEAN"))
    assert.tensor_near({{n, -2, 3 * n}, {0.5 * n, 4 * n, -1}}, C.all_reduce(x, "max"))
    assert.tensor_near({{1, -2 * n, 3}, {0.5, 4, -n}}, C.all_reduce(x, "MIN"))
  end)

  it("all_reduce on every numeric dtype", function()
    if not multi() then return end
    for _, dt in ipairs({tf.float64, tf.float16, tf.bfloat16, tf.int32, tf.int64, tf.uint8}) do
      local x = tf.cast(tf.constant({1, 2, 3}) * (r + 1), dt)
      local s = C.all_reduce(x)
      assert.are.equal(dt, s.dtype)
      assert.tensor_near({tri, 2 * tri, 3 * tri}, tf.cast(s, tf.float64))
      assert.tensor_near({n, 2 * n, 3 * n}, tf.cast(C.all_reduce(x, "MAX"), tf.float64))
    end
    -- an integer MEAN truncates, as an integer division
    local m = C.all_reduce(tf.constant({r + 1}, tf.int32), "MEAN")
    assert.are.same({tri // n}, m:totable())
  end)

  it("broadcast from any root", function()
    if not multi() then return end
    for root = 0, n - 1 do
      local x = tf.constant({{r, 10 * r}}, tf.float64)
      assert.tensor_near({{root, 10 * root}}, C.broadcast(x, root))
    end
    assert.tf_error("InvalidArgumentError", ("root %d is not a rank of this group of %d"):format(n, n),
                    C.broadcast, tf.constant({1}), n)
  end)

  it("all_gather concatenates along the first axis in rank order", function()
    if not multi() then return end
    local x = tf.constant({{r, r + 0.5}}, tf.float32)
    local g = C.all_gather(x)
    local want = {}
    for k = 0, n - 1 do want[#want + 1] = {k, k + 0.5} end
    assert.shape({n, 2}, g)
    assert.tensor_near(want, g)
    assert.tf_error("InvalidArgumentError", "all_gather: argument 1 must have rank >= 1", C.all_gather, tf.constant(1))
  end)

  it("reduce_scatter gives each rank its block of the reduction", function()
    if not multi() then return end
    local vals = {}
    for i = 1, 2 * n do vals[i] = i * (r + 1) end
    local y = C.reduce_scatter(tf.constant(vals, tf.float32))
    assert.tensor_near({(2 * r + 1) * tri, (2 * r + 2) * tri}, y)
    local ym = C.reduce_scatter(tf.constant(vals, tf.float32), "MEAN")
    assert.tensor_near({(2 * r + 1) * tri / n, (2 * r + 2) * tri / n}, ym)
    assert.tf_error("InvalidArgumentError",
                    ("reduce_scatter: argument 1's first dimension (%d) must divide evenly by the group size %d"):format(
                      n + 1, n), C.reduce_scatter, tf.zeros({n + 1}))
  end)

  it("all_reduce_buckets packs many tensors into few calls", function()
    local list, want = {}, {}
    for i = 1, 100 do
      list[i] = tf.fill({i % 7 + 1}, (r + 1) * i + 0.0)   -- float32, 4 to 28 bytes
      want[i] = tf.fill({i % 7 + 1}, tri * i + 0.0)
    end
    list[101] = tf.constant({r + 1}, tf.int64)       -- another dtype: a bucket of its own
    local out = C.all_reduce_buckets(list, "SUM", {bucket_bytes = 400})
    for i = 1, 100 do assert.tensor_near(want[i], out[i]) end
    assert.are.same({tri}, out[101]:totable())
    assert.is_true(C.last_bucket_calls >= 5 and C.last_bucket_calls <= 8, tostring(C.last_bucket_calls))
    -- the default fusion buffer (25 MiB) takes them all in one call per dtype
    out = C.all_reduce_buckets(list, "MEAN")
    assert.are.equal(2, C.last_bucket_calls)
    assert.tensor_near(tf.fill({4}, tri / n * 3), out[3])
    assert.tf_error("InvalidArgumentError", "all_reduce_buckets: bucket_bytes must be a positive integer, got 0",
                    C.all_reduce_buckets, list, "SUM", {bucket_bytes = 0})
  end)

  it("takes variables, Lua numbers and tables, and nil holes in a bucket list", function()
    local v = tf.Variable({r + 1.0, 1.0})
    assert.tensor_near({tri, n}, C.all_reduce(v))
    assert.tensor_near({n + 0.0, 1.0}, C.broadcast(v, n - 1))   -- rank n-1 holds {n, 1}
    assert.tensor_near(n * 2.5, C.all_reduce(2.5))
    assert.are.same({n, 2 * n}, C.all_reduce({1, 2}):totable())
    local out = C.all_reduce_buckets({v, nil, 3.0})
    assert.tensor_near({tri, n}, out[1])
    assert.is_nil(out[2])
    assert.tensor_near(3.0 * n, out[3])
  end)

  it("traces into tf.fn and replays", function()
    local f = tf.fn(function(x) return C.all_reduce(x * 2, "SUM") + C.all_gather(x)[1] end)
    for step = 1, 3 do
      local x = tf.constant({r + step, 1}, tf.float32)
      -- sum over k of 2 (k + step, 1), plus rank 0's first row element... all_gather(x)[1] is rank 0's x[1]
      local s = 2 * (tri - n + n * step)
      assert.tensor_near({s + step, 2 * n + step}, f(x))
    end
  end)

  it("refuses a bad reduction, a string tensor and bool", function()
    assert.tf_error("InvalidArgumentError", 'all_reduce: argument \'op\' must be one of "SUM", "MEAN", "MAX", "MIN", got "PROD"',
                    C.all_reduce, tf.constant({1}), "PROD")
    assert.tf_error("TypeError", "all_reduce: argument 1 has dtype string, expected a numeric dtype",
                    C.all_reduce, tf.constant({"a"}))
    assert.tf_error("TypeError", "broadcast: argument 1 has dtype bool, expected a numeric dtype",
                    C.broadcast, tf.constant({true}))
  end)
end)
