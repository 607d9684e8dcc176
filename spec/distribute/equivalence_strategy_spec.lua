-- MultiWorkerMirroredStrategy under mpirun -np 2 and 3: N workers with a
-- global batch B (12) end 20 steps with the weights of one process with
-- batch B (MLP and convnet, SGD and Adam, a custom loop; and compile/fit),
-- within 1e-5 relative + 1e-7 absolute; after every step the workers'
-- weights (gathered) are identical.
local tf = require("tf")
local cases = require("distribute.workers.cases")
local mpi = require("distribute.mpi_support")

local RTOL, ATOL = 1e-5, 1e-7

local function flat(ws)
  local out = {}
  for _, w in ipairs(ws) do for _, x in ipairs(w) do out[#out + 1] = x end end
  return out
end

-- the worst |a - b| / (ATOL + RTOL |b|) (<= 1 passes) and where
local function worst(got, ref)
  assert.equals(#ref, #got)
  local m, at = 0, 0
  for i = 1, #ref do
    local r = math.abs(got[i] - ref[i]) / (ATOL + RTOL * math.abs(ref[i]))
    if r > m then m, at = r, i end
  end
  return m, at
end

describe("MultiWorkerMirroredStrategy", function()
  local why = mpi.unavailable()
  if why then
    pending("multi-process specs skipped: " .. why)
    return
  end

  -- references: one process, the default strategy, the same global batches
  local refs = {}
  local default = tf.distribute.get_strategy()
  for _, kind in ipairs({"mlp", "conv"}) do
    for _, opt in ipairs({"sgd", "adam"}) do
      local model, _, traces = cases.custom(default, kind, opt)
      refs[kind .. "_" .. opt] = flat(cases.weights(model))
      refs[kind .. "_" .. opt .. "_traces"] = traces
    end
  end
  local fit_model, fit_loss, _, fit_eval = cases.fit(default, "mlp", "adam")
  refs.fit_mlp_adam = flat(cases.weights(fit_model))
  local part_model, part_loss = cases.fit(default, "mlp", "sgd", 5)
  refs.fit_partial = flat(cases.weights(part_model))

  for _, np in ipairs({2, 3}) do
    describe(("with %d workers"):format(np), function()
      local dir = mpi.tmpdir()
      local ok, out = mpi.run(np, "spec/distribute/workers/equivalence.lua", {dir})

      it("runs every worker to the end", function()
        assert.is_true(ok, out)
      end)

      for _, name in ipairs({"mlp_sgd", "mlp_adam", "conv_sgd", "conv_adam"}) do
        it(("trains %s (custom loop) to one process's weights, identical on every worker"):format(name), function()
          local got, words = mpi.read_numbers(dir .. "/" .. name .. ".txt")
          assert.is_not_nil(got, out)
          assert.equals(("workers %d"):format(np), words[1])
          assert.equals("mirror ok", words[2])
          -- the step with its all-reduces traces as in one process (once; Adam's
          -- first call, which creates the slots, once more, as tf.function), then replays
          assert.equals(("traces %d"):format(refs[name .. "_traces"]), words[3])
          local m, at = worst(got, refs[name])
          assert.is_true(m <= 1, ("weight %d: %.9g, one process %.9g"):format(at, got[at] or 0 / 0, refs[name][at]))
        end)
      end

      it("trains with compile/fit to one process's weights and loss", function()
        local got, words = mpi.read_numbers(dir .. "/fit_mlp_adam.txt")
        assert.is_not_nil(got, out)
        local m, at = worst(got, refs.fit_mlp_adam)
        assert.is_true(m <= 1, ("weight %d: %.9g, one process %.9g"):format(at, got[at] or 0 / 0, refs.fit_mlp_adam[at]))
        local loss = tonumber(words[2]:match("^loss (.*)$"))
        assert.near(fit_loss, loss, 1e-5 * math.abs(fit_loss))
        assert.equals(("rows %d"):format(cases.STEPS * cases.BATCH // np), words[3])   -- the chief's share
        -- evaluate: each worker its part of every batch, the metrics summed
        local el, ea = words[4]:match("^eval (%S+) (%S+)$")
        assert.near(fit_eval[1], tonumber(el), 1e-5 * math.abs(fit_eval[1]))
        assert.near(fit_eval[2], tonumber(ea), 1e-6)
      end)

      it("fits a dataset of global batches to one process's weights and loss", function()
        local got, words = mpi.read_numbers(dir .. "/fit_dataset.txt")
        assert.is_not_nil(got, out)
        local m, at = worst(got, refs.fit_mlp_adam)
        assert.is_true(m <= 1, ("weight %d: %.9g, one process %.9g"):format(at, got[at] or 0 / 0, refs.fit_mlp_adam[at]))
        local loss = tonumber(words[2]:match("^loss (.*)$"))
        assert.near(fit_loss, loss, 1e-5 * math.abs(fit_loss))
        assert.equals(("rows %d"):format(cases.STEPS * cases.BATCH // np), words[3])   -- the chief's share
        -- evaluate: each worker its part of every batch, the metrics summed
        local el, ea = words[4]:match("^eval (%S+) (%S+)$")
        assert.near(fit_eval[1], tonumber(el), 1e-5 * math.abs(fit_eval[1]))
        assert.near(fit_eval[2], tonumber(ea), 1e-6)
      end)

      it("fits a last batch that does not split evenly to one process's weights and loss", function()
        local got, words = mpi.read_numbers(dir .. "/fit_partial.txt")
        assert.is_not_nil(got, out)
        local m, at = worst(got, refs.fit_partial)
        assert.is_true(m <= 1, ("weight %d: %.9g, one process %.9g"):format(at, got[at] or 0 / 0, refs.fit_partial[at]))
        local loss = tonumber(words[2]:match("^loss (.*)$"))
        assert.near(part_loss, loss, 1e-5 * math.abs(part_loss))
        -- the chief's share: 12 / np rows of 20 batches, then 3 of 5 (2 workers) or 2 of 5 (3)
        assert.equals(("rows %d"):format(cases.STEPS * cases.BATCH // np + (np == 2 and 3 or 2)), words[3])
      end)
    end)
  end
end)
