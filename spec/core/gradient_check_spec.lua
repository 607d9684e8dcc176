-- Every differentiable op's gradient against central finite differences in
-- float64, over the whole op registry: an op that is neither checked here
-- nor listed as non-differentiable fails the suite.
local tf = require("tf")
local harness = require("gradcheck.harness")

local families = {"elementwise", "reduce", "movement", "matmul", "nn", "random", "init_ops", "state", "control",
                  "linalg", "image", "indexing", "sort", "strings", "optim", "rnn", "example", "io", "csv", "collective"}
local cases, nondiff = {}, {}
for _, fam in ipairs(families) do
  local ok, mod = pcall(require, "gradcheck." .. fam .. "_cases")
  if ok then
    for name, case in pairs(mod.cases or {}) do cases[name] = case end
    for _, name in ipairs(mod.nondifferentiable or {}) do nondiff[name] = true end
  end
end

describe("gradient check", function()
  it("covers every op in the registry", function()
    local missing = {}
    for _, op in ipairs(tf.core.op_names()) do
      if not cases[op] and not nondiff[op] then missing[#missing + 1] = op end
    end
    table.sort(missing)
    assert.are.same({}, missing)
  end)

  local names = {}
  for name in pairs(cases) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    it("matches finite differences for " .. name, function()
      local ok, msg = harness.check(name, cases[name])
      assert.is_true(ok, msg)
    end)
  end
end)
