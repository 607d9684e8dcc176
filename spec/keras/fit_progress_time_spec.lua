-- fit's progress line shows epochs of a minute or more as m:ss / h:mm:ss
-- (a float number of seconds once failed in string.format's %d). The clock
-- is replaced in a child process before Keras loads: each reading is
-- 61.5 seconds after the last.
local build = os.getenv("BUILD_DIR") or "build"

local function run(code)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  local p = io.popen(("LUA_PATH_5_4='lua/?.lua;lua/?/init.lua;;' LUA_CPATH_5_4='%s/?.so;;' lua5.4 %s 2>&1")
                     :format(build, path))
  local out = p:read("a")
  local ok, _, rc = p:close()
  os.remove(path)
  return out, ok and rc == 0
end

describe("Keras fit's progress line", function()
  it("prints an epoch of a minute or more as m:ss and an hour or more as h:mm:ss", function()
    local out, ok = run([[
      local tf = require("tf")
      local t, step = 0, tonumber(os.getenv("STEP") or "61.5")
      tf.core.monotonic = function() t = t + step; return t end
      local model = tf.keras.Sequential{tf.keras.layers.Dense{1, input_shape = {1}}}
      model:compile{optimizer = "sgd", loss = "mse"}
      model:fit(tf.constant({{1.0}, {2.0}}), tf.constant({{1.0}, {2.0}}), {epochs = 1, batch_size = 2, verbose = 1})
      t, step = 0, 3700.25
      model:fit(tf.constant({{1.0}, {2.0}}), tf.constant({{1.0}, {2.0}}), {epochs = 1, batch_size = 2, verbose = 1})
    ]])
    assert.is_true(ok, out)
    -- (fit reads the clock a few times per epoch: the elapsed time is a
    -- multiple of the step, a fraction of a second included)
    assert.truthy(out:find("%] %- %d+:%d%d %d+s/step"), out)          -- minutes
    assert.truthy(out:find("%] %- %d+:%d%d:%d%d %d+s/step"), out)     -- hours
  end)
end)
