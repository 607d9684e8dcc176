-- Ranks that disagree on a collective (shapes, dtypes, reduction) or on a
-- check_same text get an InvalidArgumentError naming the first rank that
-- differs from rank 0 and both sides, on every rank, and the communicator
-- stays usable. Run under mpirun by scripts/mpi-specs.sh.
local tf = require("tf")
local C = require("tf.distribute.collective")

local comm = C.init()
local r, n = comm.rank, comm.size

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "no error")
  assert.are.equal("table", type(e), tostring(e))
  return e
end

describe("collective mismatches", function()
  it("different shapes in an all_reduce name both ranks", function()
    if n == 1 then return pending("a group of one here: scripts/mpi-specs.sh runs this file under mpirun -np 2 and 3") end
    local last = n - 1   -- only the last rank differs: the message names it
    local x = r == last and tf.zeros({2, 3}) or tf.zeros({3, 2})
    local e = err_of(C.all_reduce, x)
    assert.are.equal("InvalidArgumentError", e.kind)
    assert.are.equal(("all_reduce: the ranks disagree: rank 0 has 'SUM float32, 1 tensor of 6 elements: (3, 2)', " ..
                      "rank %d has 'SUM float32, 1 tensor of 6 elements: (2, 3)'"):format(last), e.message)
    -- still usable afterwards
    assert.tensor_near({n}, C.all_reduce(tf.constant({1.0})))
  end)

  it("different dtypes and reductions", function()
    if n == 1 then return pending("a group of one here: scripts/mpi-specs.sh runs this file under mpirun -np 2 and 3") end
    local e = err_of(C.all_reduce, r == 1 and tf.constant({1}, tf.int64) or tf.constant({1}, tf.int32))
    assert.truthy(e.message:find("rank 0 has 'SUM int32", 1, true), e.message)
    assert.truthy(e.message:find("rank 1 has 'SUM int64", 1, true), e.message)
    e = err_of(C.all_reduce, tf.constant({1.0}), r == 1 and "MAX" or "SUM")
    assert.truthy(e.message:find("rank 1 has 'MAX float32", 1, true), e.message)
    e = err_of(C.broadcast, tf.constant({1.0}), r == 1 and 1 or 0)
    assert.truthy(e.message:find("broadcast: the ranks disagree: rank 0 has 'root 0, float32 (1,)', rank 1 has 'root 1", 1, true),
                  e.message)
    assert.tensor_near({n}, C.all_reduce(tf.constant({1.0})))
  end)

  it("check_same names the first differing rank and both values", function()
    if n == 1 then return pending("a group of one here: scripts/mpi-specs.sh runs this file under mpirun -np 2 and 3") end
    assert.has_no.errors(function() C.check_same("variables", "dense/kernel:(4, 2) dense/bias:(2,)") end)
    local v = r == n - 1 and "dense/kernel:(4, 3)" or "dense/kernel:(4, 2)"
    local e = err_of(C.check_same, "variables", v)
    assert.are.equal("InvalidArgumentError", e.kind)
    assert.are.equal(("variables: the ranks disagree: rank 0 has 'dense/kernel:(4, 2)', rank %d has 'dense/kernel:(4, 3)'")
                       :format(n - 1), e.message)
    -- a long text is shown around the first difference
    local parts = {}
    for i = 1, 200 do parts[i] = ("v%d:(8,)"):format(i) end
    local long = table.concat(parts, " ") .. " "
    local mine = long .. (r == 1 and "extra:(1,)" or "")
    e = err_of(C.check_same, "variables", mine)
    assert.truthy(e.message:find("rank 1 has '...", 1, true), e.message)
    assert.truthy(e.message:find("extra:(1,)'", 1, true), e.message)
  end)
end)
