-- Checkpoints under MultiWorkerMirroredStrategy: only the chief writes;
-- every worker restores; a job trained 10 steps on 2 workers and resumed
-- for 10 more on 3 workers ends where one process ends after 20 steps.
local tf = require("tf")
local cases = require("distribute.workers.cases")
local mpi = require("distribute.mpi_support")

describe("checkpoints under MultiWorkerMirroredStrategy", function()
  local why = mpi.unavailable()
  if why then
    pending("multi-process specs skipped: " .. why)
    return
  end
  local dir = mpi.tmpdir()
  local ok1, out1 = mpi.run(2, "spec/distribute/workers/checkpoint.lua", {"first", dir})
  local ok2, out2 = mpi.run(3, "spec/distribute/workers/checkpoint.lua", {"resume", dir})

  it("is written by the chief only", function()
    assert.is_true(ok1, out1)
    assert.is_not_nil(io.open(dir .. "/rank-0"))
    assert.is_nil(io.open(dir .. "/rank-1"))
    assert.is_not_nil(io.open(dir .. "/weights-0"))
    assert.is_nil(io.open(dir .. "/weights-1"))
    assert.equals(dir .. "/ckpt/ckpt-1", tf.train.latest_checkpoint(dir .. "/ckpt"))
  end)

  it("is restored by every worker of a job with another worker count", function()
    assert.is_true(ok2, out2)
    local r0 = mpi.read_numbers(dir .. "/restored-0.txt")
    -- the first job's weights after 10 steps, computed in one process
    local ref = cases.weights((cases.custom(tf.distribute.get_strategy(), "mlp", "adam", nil, {last = 10})))
    local flat = {}
    for _, w in ipairs(ref) do for _, x in ipairs(w) do flat[#flat + 1] = x end end
    for r = 0, 2 do
      local got = mpi.read_numbers(dir .. "/restored-" .. r .. ".txt")
      assert.same(r0, got)
    end
    for i = 1, #flat do assert.near(flat[i], r0[i], 1e-7 + 1e-5 * math.abs(flat[i])) end
  end)

  it("resumes to the state of an uninterrupted run", function()
    local got = mpi.read_numbers(dir .. "/final.txt")
    assert.is_not_nil(got, out2)
    local ref = cases.weights((cases.custom(tf.distribute.get_strategy(), "mlp", "adam")))
    local i = 0
    for _, w in ipairs(ref) do
      for _, x in ipairs(w) do
        i = i + 1
        assert.near(x, got[i], 1e-7 + 1e-5 * math.abs(x))
      end
    end
  end)
end)
