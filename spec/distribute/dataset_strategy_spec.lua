-- Distributed datasets under mpirun -np 2 and 3: in every epoch the
-- workers' shards cover every example exactly once, with auto-sharding
-- (each worker its part of every global batch), by hand (ds:shard) and
-- from a function of the input context;
-- strategy:reduce along an axis and strategy:gather inside tf.fn.
local mpi = require("distribute.mpi_support")

describe("experimental_distribute_dataset over workers", function()
  local why = mpi.unavailable()
  if why then
    pending("multi-process specs skipped: " .. why)
    return
  end
  local all = {}
  for i = 0, 49 do all[#all + 1] = tostring(i) end
  table.sort(all, function(a, b) return tonumber(a) < tonumber(b) end)
  local expected = table.concat(all, " ")

  for _, np in ipairs({2, 3}) do
    it(("covers every example once per epoch with %d workers"):format(np), function()
      local out_file = mpi.tmpdir() .. "/shards.txt"
      local ok, out = mpi.run(np, "spec/distribute/workers/shards.lua", {out_file})
      assert.is_true(ok, out)
      local lines = {}
      for l in io.lines(out_file) do lines[#lines + 1] = l end
      local gathered = {}
      for r = 0, np - 1 do gathered[#gathered + 1] = ("%d 1"):format(r) end
      assert.same({"auto 1: " .. expected, "hand 1: " .. expected, "fn 1: " .. expected,
                   "auto 2: " .. expected, "hand 2: " .. expected, "fn 2: " .. expected,
                   ("traced mean: %g 1"):format((np - 1) / 2), "traced gather: " .. table.concat(gathered, " ")},
        lines)
    end)
  end
end)
