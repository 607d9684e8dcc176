-- Resuming from a checkpoint: a run cut in two (save, a fresh process,
-- restore, go on) is bit for bit the run that was never cut, whether the
-- steps run eagerly, in a tf.fn or through model:fit, for every optimizer
-- with slots. The slots are created by the first step after the restore
-- (inside the first trace for tf.fn and fit), and take their values there.
local tmpdir = require("support").tmpdir
local CHILD = "spec/checkpoint/resume_child.lua"

local q = require("support").shell_quote

-- the child's output lines; a child that fails fails the spec with its stderr
local function run(opt, mode, phase, dir)
  local cmd = string.format("LUA_PATH_5_4=%s LUA_CPATH_5_4=%s lua5.4 %s %s %s %s %s 2>&1",
    q(package.path), q(package.cpath), CHILD, opt, mode, phase, q(dir))
  local p = io.popen(cmd)
  local text = p:read("a")
  local ok = p:close()
  assert(ok, "child failed: " .. cmd .. "\n" .. text)
  local lines = {}
  for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
  return lines
end

local OPTIMIZERS = {"sgd_momentum", "sgd_nesterov", "adam", "adam_amsgrad", "adamw", "rmsprop", "adagrad",
                    "nadam", "adamax", "adadelta", "ftrl", "lion"}

describe("a run resumed from a checkpoint", function()
  for _, mode in ipairs({"eager", "fn", "fit"}) do
    describe("with steps " .. (mode == "eager" and "run eagerly" or mode == "fn" and "in a tf.fn" or "in model:fit"),
      function()
      for _, opt in ipairs(OPTIMIZERS) do
        it("equals the uninterrupted run bit for bit (" .. opt .. ")", function()
          local dir = tmpdir()
          local full = run(opt, mode, "full", dir .. "/full")
          run(opt, mode, "save", dir .. "/cut")
          local resumed = run(opt, mode, "resume", dir .. "/cut")
          os.execute("rm -rf " .. q(dir))
          -- every slot was restored from the file, none left waiting
          assert.equal("consumed", resumed[#resumed])
          assert.equal("pending 0", resumed[#resumed - 1])
          resumed[#resumed], resumed[#resumed - 1] = nil, nil
          assert.equal("iterations 8", full[#full])
          assert.same(full, resumed)
        end)
      end
    end)
  end
end)
