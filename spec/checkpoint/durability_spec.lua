-- A process killed (SIGKILL) at any point of a save leaves the previous
-- checkpoint and the state file valid. The writer's test hook
-- LTF_CKPT_CRASH_AT=<point>:<path substring> makes it kill itself at a
-- named point: write (half the data written), fsync (before the file's
-- fsync), rename (after it, before the rename), dirsync (after the rename,
-- before the directory's fsync).
local tmpdir = require("support").tmpdir
local tf = require("tf")

local build = os.getenv("BUILD_DIR") or "build"

-- run a Lua chunk in a child process; returns how it ended ("exit"/"signal") and the code
local function child(code, env)
  local f = os.tmpname()
  local h = assert(io.open(f, "w"))
  h:write(code)
  h:close()
  local cmd = ("LUA_PATH_5_4='lua/?.lua;lua/?/init.lua;;' LUA_CPATH_5_4='%s/?.so;;' %s exec lua5.4 %s >/dev/null 2>&1"):format(
    build, env or "", f)
  local _, how, n = os.execute(cmd)
  os.remove(f)
  return how, n
end

local SAVE = [[
local tf = require("tf")
local dir, value = ...
local x = tf.Variable(tf.fill({1000}, 0.0))   -- 4000 bytes: the crash falls inside the data
local ckpt = tf.train.Checkpoint{x = x}
ckpt:restore(tf.train.latest_checkpoint(DIR))
x:assign(tf.fill({1000}, VALUE))
ckpt:save(DIR .. "/ckpt")
]]

local function save_code(dir, value)
  return ("local DIR, VALUE = %q, %.1f\n"):format(dir, value) .. SAVE
end

describe("a save killed part-way", function()
  local cases = {
    -- point, file whose write is killed, value restored afterwards
    {"write", "ckpt-2", 1}, {"fsync", "ckpt-2", 1}, {"rename", "ckpt-2", 1}, {"dirsync", "ckpt-2", 1},
    {"write", "/checkpoint", 1}, {"fsync", "/checkpoint", 1}, {"rename", "/checkpoint", 1},
    {"dirsync", "/checkpoint", 2},
  }
  for _, c in ipairs(cases) do
    it(("at %s of %s leaves a valid last checkpoint"):format(c[1], c[2]), function()
      local dir = tmpdir()
      local how, n = child(save_code(dir, 1))
      assert.equal("exit", how)
      assert.equal(0, n)
      how, n = child(save_code(dir, 2), ("LTF_CKPT_CRASH_AT='%s:%s'"):format(c[1], c[2]))
      assert.equal("signal", how)
      assert.equal(9, n)
      local latest = tf.train.latest_checkpoint(dir)
      assert.equal(dir .. "/ckpt-" .. c[3], latest)
      local x = tf.Variable(tf.zeros({1000}))
      local ckpt = tf.train.Checkpoint{x = x}
      ckpt:restore(latest):assert_consumed()
      assert.equal(c[3], x:numpy()[1000])
      assert.equal(c[3], ckpt.save_counter:item())
      -- and saving goes on from there
      x:assign(tf.fill({1000}, 3.0))
      assert.equal(dir .. "/ckpt-" .. (c[3] + 1), ckpt:save(dir .. "/ckpt"))
      ckpt:restore(tf.train.latest_checkpoint(dir)):assert_consumed()
      assert.equal(3, x:numpy()[1])
      os.execute("rm -rf '" .. dir .. "'")
    end)
  end

  it("never leaves a partial file under the final name", function()
    local dir = tmpdir()
    assert.equal("exit", (child(save_code(dir, 1))))
    child(save_code(dir, 2), "LTF_CKPT_CRASH_AT='write:ckpt-2'")
    local f = io.open(dir .. "/ckpt-2", "rb")
    assert.is_nil(f)
    os.execute("rm -rf '" .. dir .. "'")
  end)
end)
