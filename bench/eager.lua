-- bench/eager.lua: the per-op cost of small eager ops against a stored
-- baseline (bench/eager_baseline.lua), so that a regression shows.
--
--   lua5.4 bench/eager.lua [--rounds N] [--instr] [--save]
--
-- Measures, in ROUNDS interleaved rounds (default 3), each side in a fresh
-- process: luatf's a + b on 2x2 float32 and the 100-op chain per op
-- (bench/bench.lua small_op chain100), and NumPy's same two loops
-- (bench/eager_peers.py, /usr/bin/python3). Absolute times vary across
-- machines and with a neighbour's load, so the figure compared is the ratio
-- luatf / NumPy (best of the rounds on each side); with --instr also
-- valgrind's instruction count per op (callgrind, two loop lengths
-- differenced: start-up cancels), which is nearly noise-free on a shared
-- machine. Prints a table beside the stored figures and flags a ratio or
-- instruction count more than 10% above the stored one; exits 1 then.
-- --save writes the figures of this run as the new baseline.
-- Internal: --loop add|chain N runs only that loop (for callgrind).
package.path = "bench/?.lua;" .. package.path

local BASELINE = "bench/eager_baseline.lua"
local TOLERANCE = 1.10

local function loop_mode(what, n)
  local tf = require("tf")
  local chain = require("timing").chain100
  local a, b = tf.random.uniform({2, 2}), tf.random.uniform({2, 2})
  local x = tf.random.uniform({64})
  for _ = 1, 1000 do local _ = a + b end   -- warm: block cache, collector
  for _ = 1, 10 do chain(x) end
  if what == "add" then
    for _ = 1, n do local _ = a + b end
  else
    for _ = 1, n do chain(x) end
  end
end

local args = {...}
if args[1] == "--loop" then
  loop_mode(args[2], tonumber(args[3]))
  return
end

local opts = { rounds = tonumber(os.getenv("ROUNDS") or 3) }
local i = 1
while i <= #args do
  local a = args[i]
  if a == "--rounds" then i = i + 1; opts.rounds = tonumber(args[i])
  elseif a == "--instr" then opts.instr = true
  elseif a == "--save" then opts.save = true
  else error("bench/eager.lua: unknown argument " .. a) end
  i = i + 1
end

local function run(cmd)
  local p = assert(io.popen(cmd, "r"))
  local out = p:read("a")
  local ok = p:close()
  if not ok then error("bench/eager.lua: failed: " .. cmd .. "\n" .. out) end
  return out
end

local function results(out, into)
  for name, value in out:gmatch("RESULT (%S+) (%S+)") do
    local v = tonumber(value)
    into[name] = into[name] and math.min(into[name], v) or v   -- best of the rounds
  end
end

local function line(cmd) return (run(cmd):gsub("%s+$", "")) end

-- {==== measure
local cur = {}
local rounds = {}
for r = 1, opts.rounds do
  local one = {}
  results(run("lua5.4 bench/bench.lua small_op chain100"), one)
  results(run("OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 /usr/bin/python3 bench/eager_peers.py"), one)
  rounds[r] = one
  for k, v in pairs(one) do cur[k] = cur[k] and math.min(cur[k], v) or v end
end
cur.small_op_ratio = cur.small_op_us / cur.numpy_small_op_us
cur.chain100_ratio = cur.chain100_eager_us_per_op / cur.numpy_chain100_us_per_op

if opts.instr then
  -- instructions per op: callgrind over two loop lengths, differenced
  local function irefs(what, n)
    local out = run(("valgrind --tool=callgrind --callgrind-out-file=/dev/null lua5.4 bench/eager.lua --loop %s %d 2>&1")
      :format(what, n))
    local s = assert(out:match("I%s+refs:%s+([%d,]+)"), "bench/eager.lua: no instruction count from valgrind")
    return tonumber((s:gsub(",", "")))
  end
  cur.small_op_instr = (irefs("add", 20000) - irefs("add", 10000)) / 10000
  cur.chain100_instr = (irefs("chain", 200) - irefs("chain", 100)) / (100 * 100)
end

cur.machine = line("grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'") .. ", " .. line("nproc") .. " cores"
cur.date = os.date("!%Y-%m-%d")
cur.commit = line("git rev-parse --short HEAD 2>/dev/null || echo unknown")
cur.load = line("cut -d' ' -f1 /proc/loadavg")
-- }====

-- {==== compare
local ok, base = pcall(dofile, BASELINE)
if not ok then base = nil end

local rows = {
  { "a + b, 2x2 float32, us/op", "small_op_us", "%.3f" },
  { "NumPy, same run, us/op", "numpy_small_op_us", "%.3f" },
  { "  luatf / NumPy", "small_op_ratio", "%.3f", true },
  { "  instructions per op", "small_op_instr", "%.0f", true },
  { "100-op chain, 64 floats, us/op", "chain100_eager_us_per_op", "%.3f" },
  { "NumPy, same run, us/op", "numpy_chain100_us_per_op", "%.3f" },
  { "  luatf / NumPy", "chain100_ratio", "%.3f", true },
  { "  instructions per op", "chain100_instr", "%.0f", true },
}
local function fmt(f, v) return v and f:format(v) or "-" end
print(("%-34s %10s %10s  %s"):format("eager per-op cost", "now", "baseline", ""))
local regressed = false
for _, r in ipairs(rows) do
  local label, key, f, checked = r[1], r[2], r[3], r[4]
  local now, was = cur[key], base and base[key]
  local flag = ""
  if checked and now and was then
    if now > was * TOLERANCE then
      flag = ("REGRESSION: %.0f%% above the baseline"):format((now / was - 1) * 100)
      regressed = true
    else
      flag = ("ok (%+.0f%%)"):format((now / was - 1) * 100)
    end
  end
  print(("%-34s %10s %10s  %s"):format(label, fmt(f, now), fmt(f, was), flag))
end
for r, one in ipairs(rounds) do
  print(("round %d: luatf %.3f / NumPy %.3f us (add), %.3f / %.3f us per op (chain)"):format(r,
    one.small_op_us, one.numpy_small_op_us, one.chain100_eager_us_per_op, one.numpy_chain100_us_per_op))
end
print(("now: %s, commit %s, %s, load %s"):format(cur.machine, cur.commit, cur.date, cur.load))
if base then
  print(("baseline: %s, commit %s, %s, load %s"):format(base.machine or "?", base.commit or "?", base.date or "?",
    base.load or "?"))
else
  print("no baseline (" .. BASELINE .. "): run with --save to store one")
end
-- }====

if opts.save then
  local keys = {}
  for k in pairs(cur) do keys[#keys + 1] = k end
  table.sort(keys)
  local f = assert(io.open(BASELINE, "w"))
  f:write("-- bench/eager_baseline.lua: the figures bench/eager.lua compares against\n",
    "-- (written by `lua5.4 bench/eager.lua --instr --save`; see bench/README.md).\n", "return {\n")
  for _, k in ipairs(keys) do
    local v = cur[k]
    f:write(("  %s = %s,\n"):format(k, type(v) == "number" and ("%.6g"):format(v) or ("%q"):format(v)))
  end
  f:write("}\n")
  f:close()
  print("saved " .. BASELINE)
end
if regressed then os.exit(1) end
