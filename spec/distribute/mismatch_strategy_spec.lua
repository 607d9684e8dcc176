-- MultiWorkerMirroredStrategy under mpirun: workers that create a mirrored
-- variable of different shapes all get an error naming both sides.
local mpi = require("distribute.mpi_support")

describe("a mirrored variable that differs between workers", function()
  local why = mpi.unavailable()
  if why then
    pending("multi-process specs skipped: " .. why)
    return
  end
  for _, np in ipairs({2, 3}) do
    it(("is an error on every one of %d workers, naming both sides"):format(np), function()
      local dir = mpi.tmpdir()
      local ok, out = mpi.run(np, "spec/distribute/workers/mismatch.lua", {dir}, 60)
      assert.is_true(ok, out)
      for r = 0, np - 1 do
        local f = assert(io.open(dir .. "/err-" .. r .. ".txt"), out)
        assert.equals("InvalidArgumentError: mirrored variable: the ranks disagree: rank 0 has " ..
          "'#1 'w' shape=(2,) dtype=float32', rank 1 has '#1 'w' shape=(3,) dtype=float32'\n", f:read("a"))
        f:close()
      end
    end)
  end
end)
