-- LTF_PLAN_PROFILE (core/plan.c, a developer's switch read once per
-- process): each step of each plan run prints "plan-step <i> <op or fused>
-- <output dims> <microseconds>" to stderr; unset, nothing.
local q = require("support").shell_quote

local CODE = [[
local tf = require('tf')
local f = tf.fn(function(x, w) return tf.nn.relu(tf.nn.conv2d(x, w, 1, 'SAME') + 1) * 2 end)
local x = tf.random.normal({1, 5, 6, 3}, 0, 1, tf.float32, 1)
local w = tf.random.normal({3, 3, 3, 8}, 0, 1, tf.float32, 2)
f(x, w)
f(x, w)
]]

-- stderr of CODE run with 'env' ("NAME=value" or "")
local function stderr_of(env)
  local err = os.tmpname()
  local cmd = string.format("env -u LTF_PLAN_PROFILE %s LUA_PATH_5_4=%s LUA_CPATH_5_4=%s lua5.4 -e %s >/dev/null 2>%s", env,
    q(package.path), q(package.cpath), q(CODE), err)
  assert(os.execute(cmd))
  local f = io.open(err, "rb")
  local s = f:read("a")
  f:close()
  os.remove(err)
  return s
end

describe("LTF_PLAN_PROFILE", function()
  it("prints each plan step with its op, output dims and time, per run", function()
    local lines = {}
    for line in stderr_of("LTF_PLAN_PROFILE=1"):gmatch("[^\n]+") do
      if line:match("^plan%-step") then lines[#lines + 1] = line end
    end
    -- two runs of two steps: the conv, then add, relu and mul as one fused group
    assert.equal(4, #lines)
    for r = 0, 1 do
      local i, op, dims, us = lines[2 * r + 1]:match("^plan%-step (%d+) (%S+) (%S+) ([%d.]+)$")
      assert.same({"0", "conv2d", "1x5x6x8"}, {i, op, dims})
      assert.is_true(tonumber(us) >= 0)
      i, op, dims, us = lines[2 * r + 2]:match("^plan%-step (%d+) (%S+) (%S+) ([%d.]+)$")
      assert.same({"1", "fused", "1x5x6x8"}, {i, op, dims})
      assert.is_true(tonumber(us) >= 0)
    end
  end)
  it("prints nothing when unset or 0", function()
    assert.is_nil(stderr_of(""):match("plan%-step"))
    assert.is_nil(stderr_of("LTF_PLAN_PROFILE=0"):match("plan%-step"))
  end)
end)
