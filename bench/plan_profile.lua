-- bench/plan_profile.lua: where a loaded ONNX model's time goes, per plan
-- step (a developer's tool; core/plan.c's LTF_PLAN_PROFILE switch).
--   lua5.4 bench/plan_profile.lua MODEL.onnx N T [RUNS]
-- runs the model at batch N on T threads RUNS times (default 20, after 3
-- warm-ups) with LTF_PLAN_PROFILE=1 and prints each step's median time,
-- (and fastest) time, sorted, then the per-op-kind totals of the medians.
if not os.getenv("LTF_PLAN_PROFILE") then
  local a = {}
  for i = 0, #arg do a[#a + 1] = ("%q"):format(arg[i]) end
  local cmd = ("LTF_PLAN_PROFILE=1 lua5.4 %s 2>&1 >/dev/null"):format(table.concat(a, " "))
  local p = io.popen(cmd)
  local steps, order = {}, {}
  for line in p:lines() do
    local i, op, dims, us = line:match("^plan%-step (%d+) (%S+) (%S+) (%S+)")
    if i then
      local k = tonumber(i)
      if not steps[k] then
        steps[k] = { op = op, dims = dims, t = {} }
        order[#order + 1] = k
      end
      table.insert(steps[k].t, tonumber(us))
    end
  end
  p:close()
  local runs = tonumber(arg[4] or "20")
  local rows, kinds, total = {}, {}, 0
  for _, k in ipairs(order) do
    local s = steps[k]
    local t = {}
    for j = #s.t - runs + 1, #s.t do t[#t + 1] = s.t[j] end   -- the timed runs, not the warm-ups
    table.sort(t)
    local med = t[(#t + 1) // 2] or 0
    rows[#rows + 1] = { k = k, op = s.op, dims = s.dims, med = med, min = t[1] or 0 }
    kinds[s.op] = (kinds[s.op] or 0) + med
    total = total + med
  end
  table.sort(rows, function(a, b) return a.med > b.med end)
  print(("%-6s %-28s %-20s %10s %10s"):format("step", "op", "output", "median us", "min us"))
  for _, r in ipairs(rows) do print(("%-6d %-28s %-20s %10.1f %10.1f"):format(r.k, r.op, r.dims, r.med, r.min)) end
  print(("total of the medians: %.1f us over %d steps"):format(total, #rows))
  local ks = {}
  for op, t in pairs(kinds) do ks[#ks + 1] = { op, t } end
  table.sort(ks, function(a, b) return a[2] > b[2] end)
  for _, kv in ipairs(ks) do print(("  %-28s %10.1f us"):format(kv[1], kv[2])) end
  return
end
local tf = require("tf")
local path, n, threads, runs = arg[1], tonumber(arg[2] or "1"), tonumber(arg[3] or "2"), tonumber(arg[4] or "20")
tf.core.set_num_threads(threads)
local f = tf.onnx.load(path)
local x = tf.random.normal({n, 3, 224, 224}, 0, 1, tf.float32, 1)
for _ = 1, 3 + runs do f(x) end
