-- bench/startup.lua: start-up of `lua5.4 -e 'require("tf")'` beside a bare
-- `lua5.4 -e ''`, and what touching the lazily loaded parts adds
-- (lua/tf/init.lua, docs/internals.md "Lazy loading"). Each row runs its
-- command in fresh processes, alternating with the bare run, and keeps the
-- best of N wall-clock times (the machine's load only adds time; the best
-- run is the steady figure). Resident memory (VmHWM, peak RSS) comes from
-- one more run of each command that reads /proc/self/status at its end.
--   lua5.4 bench/startup.lua [runs]     (default 7; needs scripts/env.sh)
-- Prints a table, then RESULT lines for bench/report.py.
local monotonic = require("tf.core").monotonic   -- wall clock (CLOCK_MONOTONIC), not os.clock
local runs = tonumber(arg and arg[1]) or 7

local ROWS = {
  {"bare lua5.4", ""},
  {"require tf.core (C engine only)", 'require("tf.core")'},
  {"require tf", 'require("tf")'},
  {"require tf + a tensor op, printed", 'local tf = require("tf") local _ = tostring(tf.constant({1, 2}) + 1)'},
  {"require tf + tf.fn traced once", 'local tf = require("tf") tf.fn(function(x) return x * 2 end)(tf.constant(1.0))'},
  {"require tf + tf.keras", 'local tf = require("tf") local _ = tf.keras.layers.Dense'},
  {"Keras: Sequential, compile, fit 1 epoch",
   'local tf = require("tf") local m = tf.keras.Sequential{tf.keras.layers.Dense{4, activation = "relu"}, ' ..
   'tf.keras.layers.Dense{1}} m:compile{optimizer = "adam", loss = "mse"} ' ..
   'm:fit(tf.ones({8, 3}), tf.zeros({8, 1}), {epochs = 1, batch_size = 4, verbose = 0})'},
}

local function quote(code) return "'" .. code:gsub("'", "'\\''") .. "'" end

local function once(code)
  local t0 = monotonic()
  local ok = os.execute("lua5.4 -e " .. quote(code) .. " >/dev/null 2>&1")
  local t = monotonic() - t0
  if not ok then error("bench/startup.lua: this failed: lua5.4 -e " .. quote(code)) end
  return t
end

local function rss_kb(code)
  local probe = code .. ' for l in io.lines("/proc/self/status") do ' ..
    'local v = l:match("^VmHWM:%s+(%d+)") if v then io.write(v) end end'
  local p = io.popen("lua5.4 -e " .. quote(probe))
  local v = tonumber(p:read("a"))
  p:close()
  return v
end

local best = {}
for i = 1, #ROWS do best[i] = math.huge end
for _ = 1, runs do                       -- interleaved: each round runs every row once
  for i, row in ipairs(ROWS) do
    local t = once(row[2])
    if t < best[i] then best[i] = t end
  end
end

print(("start-up, best of %d fresh processes each (wall clock)"):format(runs))
print(("| %-40s | %9s | %9s | %9s |"):format("command", "ms", "x bare", "VmHWM MB"))
print(("|%s|%s|%s|%s|"):format(("-"):rep(42), ("-"):rep(11), ("-"):rep(11), ("-"):rep(11)))
for i, row in ipairs(ROWS) do
  print(("| %-40s | %9.2f | %9.2f | %9.2f |"):format(row[1], best[i] * 1e3, best[i] / best[1],
    (rss_kb(row[2]) or 0) / 1024))
end
print(("RESULT startup_lua_ms %.4g ms"):format(best[1] * 1e3))
print(("RESULT startup_require_tf_ms %.4g ms"):format(best[3] * 1e3))
print(("RESULT startup_keras_fit_ms %.4g ms"):format(best[#ROWS] * 1e3))
