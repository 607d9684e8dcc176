--- tools/fuzz/fuzz.lua: one batch of random luatf API calls (run it in a
-- child process; tools/fuzz/run.lua does, and classifies how it ended).
--
--   lua5.4 tools/fuzz/fuzz.lua --seed N --calls K [--log FILE]   generate and run
--   lua5.4 tools/fuzz/fuzz.lua --replay FILE                      run a logged batch again
--
-- Every call is written to the log (and flushed) before it runs, as one line
-- of Lua source; replaying a log runs the same lines the same way. On stderr:
--   FUZZ-NONCRASH <call> <text>   an error that is a bug but not a crash (once per text)
--   FUZZ-FAIL <kind> <text>       an error value no Lua code should raise; exit 3
--   FUZZ-DONE calls=... ok=...    the batch ran to its end
-- Which caught errors are fine is documented in README.md ("Errors").
local dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
package.path = dir .. "/?.lua;" .. package.path

local opts = {calls = 200, seed = 1}
do
  local i = 1
  while arg[i] do
    local a = arg[i]
    if a == "--seed" then opts.seed = math.tointeger(tonumber(arg[i + 1])); i = i + 2
    elseif a == "--calls" then opts.calls = math.tointeger(tonumber(arg[i + 1])); i = i + 2
    elseif a == "--log" then opts.log = arg[i + 1]; i = i + 2
    elseif a == "--replay" then opts.replay = arg[i + 1]; i = i + 2
    elseif a == "--gc" then opts.gc = arg[i + 1]; i = i + 2
    elseif a == "--verbose" then opts.verbose = true; i = i + 1
    elseif a == "--chains" then opts.chains = tonumber(arg[i + 1]); i = i + 2
    else io.stderr:write("fuzz.lua: unknown option ", a, "\n"); os.exit(2) end
  end
end

local tf = require("tf")
local prelude = require("prelude")
local Gen = require("gen")

warn("@on")   -- errors in __gc metamethods become visible ("Lua warning: ...")

-- Known mismatches (tools/fuzz/known.lua entries of kind "mismatch") do not
-- end the batch: the oracle raises an ordinary error for them instead.
do
  local ok, list = pcall(dofile, dir .. "/known.lua")
  local pats = {}
  for _, k in ipairs(ok and type(list) == "table" and list or {}) do
    if k.kind == "mismatch" then pats[#pats + 1] = k.frame end
  end
  if #pats > 0 then
    rawset(_G, "FUZZ_KNOWN", function(class)
      for _, p in ipairs(pats) do if class:find(p, 1, true) then return true end end
      return false
    end)
  end
end

local P = {}
local H = prelude.make_helpers(tf, P)
local ErrorMT = tf.core.Error

-- {==== Classifying caught errors
local stats = {calls = 0, ok = 0, tf = 0, lua = 0, sentinel = 0, noncrash = 0}
local reported = {}

local cur, cur_src = 0, ""

-- calls that reach a function through an internal table (metatables, method
-- tables, tf.core, tf.trace_type, tf.format): their findings are listed apart
local INTERNAL = {"tf%.Tensor%[", "tf%.ConcreteFunction%.", "tf%.trace_type%.", "%.mt%.", "tf%.format%.",
  "tf%.Variable%.methods", "getmetatable%(", "tf%.DType%.", "tf%.core%.",
  "tf%.errors%.new", "tf%.TensorShape%.", "tf%.TensorSpec%.", ":_%a", "tf%.Tensor%.__", "tf%.Variable%.mt"}
local function internal(src)
  for _, p in ipairs(INTERNAL) do if src:find(p) then return true end end
  return false
end

local function noncrash(n, text)
  stats.noncrash = stats.noncrash + 1
  if internal(cur_src) then text = "[internal] " .. text end
  local key = text:match("^(lua/tf/[%w_/]+%.lua:%d+)") or text:match("^(%[internal%] lua/tf/[%w_/]+%.lua:%d+)")
    or text:gsub("%d+", "N")
  if reported[key] then return end
  reported[key] = true
  io.stderr:write(("FUZZ-NONCRASH\t%d\t%s\t%s\n"):format(n, (text:gsub("[\r\n\t]", " ")),
    (cur_src:sub(1, 400):gsub("[\r\n\t]", " "))))
end

local function fail(n, kind, text)
  io.stderr:write(("FUZZ-FAIL\t%s\t%d\t%s\n"):format(kind, n, (tostring(text):gsub("[\r\n]", " "))))
  io.stderr:flush()
  os.exit(3)
end

--- Fine: a tf error object (kind and message strings); a string (argument
-- checks in C or Lua, and runtime errors of the generated code itself);
-- our sentinel ("stack overflow" too: generated bodies may recurse without
-- end). Non-crash finding: a runtime error ("attempt to ...") raised
-- inside lua/tf/*.lua, an InternalError, an error of nil. Failure: any
-- other value (a plain table, a tensor, a malformed error object).
local function on_error(n, e)
  if opts.verbose then io.stderr:write(("FUZZ-ERR\t%d\t%s\n"):format(cur, (tostring(e):gsub("\n", " ")))) end
  if getmetatable(e) == ErrorMT then
    local kind, msg = rawget(e, "kind"), rawget(e, "message")
    if type(kind) ~= "string" or type(msg) ~= "string" then
      fail(n, "bad-error", "tf error object without string kind/message")
    end
    stats.tf = stats.tf + 1
    if kind == "InternalError" then noncrash(n, "InternalError: " .. msg) end
    return
  end
  local t = type(e)
  if t == "string" then
    stats.lua = stats.lua + 1
    local loc, msg = e:match(".*(lua/tf/[%w_/]+%.lua:%d+): (attempt to.*)$")
    if loc then noncrash(n, loc .. ": " .. msg) end
    return
  end
  if t == "table" then
    local mt = getmetatable(e)
    if type(mt) == "table" and rawget(mt, "__name") == "fuzz.sentinel" then
      stats.sentinel = stats.sentinel + 1
      return
    end
  end
  if e == nil then noncrash(n, "error value nil"); return end
  -- a tensor raised by a generated body (error(tf.constant(1))) comes back as is
  if getmetatable(e) == tf.Tensor then stats.sentinel = stats.sentinel + 1; return end
  fail(n, "bad-error", "error value of type " .. t)
end
-- }====

local function R(n, f)
  local ok, r = pcall(f)
  if ok then P[n] = r; stats.ok = stats.ok + 1 else on_error(n, r) end
end

local env = setmetatable({tf = tf, P = P, H = H, R = R}, {__index = _G})

local function exec(src)
  cur = cur + 1
  cur_src = src
  stats.calls = stats.calls + 1
  local chunk, err = load(src, "=call", "t", env)
  if not chunk then
    io.stderr:write("FUZZ-HARNESS\tbad source: ", err, "\n", src, "\n")
    os.exit(2)
  end
  local ok, e = pcall(chunk)
  if not ok then on_error(cur, e) end
end

local GC_MODES = {"default", "generational", "aggressive"}
local function set_gc(mode)
  if mode == "generational" then collectgarbage("generational")
  elseif mode == "aggressive" then collectgarbage("incremental", 110, 200) end
end

if opts.replay then
  local f = assert(io.open(opts.replay))
  local lines = {}
  for line in f:lines() do lines[#lines + 1] = line end
  f:close()
  local gc = (lines[1] or ""):match("gc=(%w+)") or "default"
  set_gc(gc)
  for _, line in ipairs(lines) do
    if line:find("%S") and not line:find("^%-%-") then exec(line) end
  end
else
  local gen = Gen.new(opts.seed, tf, P, Gen.enumerate(tf))
  if opts.chains then gen.chains = opts.chains end
  local gc = opts.gc or GC_MODES[opts.seed % #GC_MODES + 1]
  local log = opts.log and assert(io.open(opts.log, "w"))
  if log then
    log:write(("-- fuzz-lua seed=%d calls=%d gc=%s\n"):format(opts.seed, opts.calls, gc))
    log:flush()
  end
  set_gc(gc)
  for _ = 1, opts.calls do
    local src = gen:line()
    if log then log:write(src, "\n"); log:flush() end
    exec(src)
  end
  if log then log:close() end
end

io.stderr:write(("FUZZ-DONE\tcalls=%d ok=%d tf_errors=%d lua_errors=%d sentinel=%d noncrash=%d\n"):format(
  stats.calls, stats.ok, stats.tf, stats.lua, stats.sentinel, stats.noncrash))
io.stderr:flush()
