-- bench/onnx.lua: luatf's side of bench/onnx.sh. Loads an ONNX model with
-- tf.onnx.load and times it:
--   lua5.4 bench/onnx.lua load MODEL.onnx      load time (best of 5 fresh loads) and memory:
--     the RSS a loaded model keeps, and the peak RSS (VmHWM) while the first
--     load ran, both over the RSS before it (the peak reset first through
--     /proc/self/clear_refs where the kernel allows it)
--   lua5.4 bench/onnx.lua infer MODEL.onnx N T inference at batch N on T threads (median, bench/timing.lua)
-- RESULT lines for bench/onnx.sh's table.
local tf = require("tf")
local T = require("timing")
local what, path, n = arg[1], arg[2], tonumber(arg[3] or "1")

local function rss_kb()
  local f = io.open("/proc/self/status")
  local s = f:read("a")
  f:close()
  return tonumber(s:match("VmRSS:%s*(%d+)")), tonumber(s:match("VmHWM:%s*(%d+)"))
end

if what == "load" then
  local size = io.open(path, "rb"):seek("end")
  local _ = tf.fn, tf.onnx   -- the modules, loaded before the timing
  require("tf.onnx.import")
  collectgarbage()
  local cr = io.open("/proc/self/clear_refs", "w")   -- "5": VmHWM := VmRSS (Linux 4.0+)
  if cr then cr:write("5") cr:close() end
  local rss0, hwm0 = rss_kb()
  local t0 = T.now()
  local f = tf.onnx.load(path)
  local first = T.now() - t0
  local _, hwm1 = rss_kb()   -- the peak while it loaded (before a collection could lower anything)
  collectgarbage()
  -- memory one loaded model keeps, measured after the first load
  local rss1 = rss_kb()
  local live = tf.core.memory_stats().live_bytes
  local best = first
  for _ = 1, 4 do
    f = nil
    collectgarbage()
    t0 = T.now()
    f = tf.onnx.load(path)
    best = math.min(best, T.now() - t0)
  end
  print(("RESULT luatf_load_ms %.1f"):format(best * 1000))
  print(("RESULT luatf_first_load_ms %.1f"):format(first * 1000))
  print(("RESULT model_mb %.1f"):format(size / 1e6))
  print(("RESULT luatf_load_rss_mb %.1f"):format((rss1 - rss0) / 1024))
  print(("RESULT luatf_load_peak_rss_mb %.1f"):format((hwm1 - rss0) / 1024))
  print(("# RSS before the first load %.1f MB (VmHWM %.1f MB), after it %.1f MB; VmHWM after it %.1f MB"):format(
    rss0 / 1024, hwm0 / 1024, rss1 / 1024, hwm1 / 1024))
  print(("RESULT luatf_engine_live_mb %.1f"):format(live / 1e6))
elseif what == "infer" then
  local threads = tonumber(arg[4] or "2")
  tf.core.set_num_threads(threads)
  local f = tf.onnx.load(path)
  local x = tf.random.normal({n, 3, 224, 224}, 0, 1, tf.float32, 1)
  local s = T.timed(function(k) for _ = 1, k do f(x) end end)
  print(("RESULT luatf_t%d_resnet18_b%d_ms %.2f"):format(threads, n, s * 1000))
else
  error("usage: lua5.4 bench/onnx.lua load|infer MODEL.onnx [N]")
end
