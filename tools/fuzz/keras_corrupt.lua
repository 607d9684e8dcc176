--- tools/fuzz/keras_corrupt.lua: the .keras corruption campaign
-- (docs/keras_saving.md, "The file"). Saves a small compiled and trained
-- model, then damages the file and loads each damaged copy with
-- tf.keras.models.load_model. Each load must either raise a luatf error
-- object (ValueError, DataLossError, FailedPreconditionError, ...), or
-- succeed with a model whose predictions, weights and optimizer state are
-- exactly the original's (a byte nothing reads: a timestamp, "version made
-- by"). Counted failures:
--   raw      an error that is not a luatf error object (a Lua runtime error:
--            a reader bug)
--   silent   a load that succeeded with a different model
-- Damage: truncation at every length; bit flips of every byte; zeroed
-- ranges (lengths 1, 8, 64 and to the end) from every byte; then hostile
-- configs in well-formed archives: each value of config.json replaced by
-- one of another type or removed (a hostile config may load a different
-- model; it must not raise anything but a luatf error). --quick (for a
-- sanitizer run): every 7th truncation, one bit per byte (rotating with
-- the position), zeroed ranges of 8 bytes from every 5th byte, every 3rd
-- config value.
--
--   . scripts/env.sh; lua5.4 tools/fuzz/keras_corrupt.lua [--quick] [--verbose]
-- Ends with "keras-corrupt: N loads, ..., F failures"; exits 1 when F > 0.
local tf = require("tf")
local L = tf.keras.layers

local quick, verbose = false, false
for _, a in ipairs(arg or {}) do
  if a == "--quick" then quick = true
  elseif a == "--verbose" then verbose = true
  else io.stderr:write("usage: lua5.4 tools/fuzz/keras_corrupt.lua [--quick] [--verbose]\n"); os.exit(2) end
end

local p = io.popen("mktemp -d /tmp/luatf-keras-corrupt-XXXXXX")
local dir = p:read("l")
p:close()
local path = dir .. "/m.keras"

local function slurp(f)
  local h = assert(io.open(f, "rb"))
  local s = h:read("a")
  h:close()
  return s
end
local function spit(f, s)
  local h = assert(io.open(f, "wb"))
  h:write(s)
  h:close()
end

tf.random.set_seed(1)
local model = tf.keras.Sequential{L.Dense{3, activation = "relu", input_shape = {2}}, L.Dense{1}}
model:compile{optimizer = "adam", loss = "mse", metrics = {"mae"}}
local x = tf.random.normal({4, 2})
model:fit(x, tf.random.normal({4, 1}), {epochs = 1, verbose = 0})
model:save(path)
local good = slurp(path)
local N = #good
local want = model(x):totable()
local want_w = {}
for i, w in ipairs(model:get_weights()) do want_w[i] = w:totable() end
local want_iter = model.optimizer.iterations:value():item()

local function same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b end
  if #a ~= #b then return false end
  for i = 1, #a do if not same(a[i], b[i]) then return false end end
  return true
end

local count = {loads = 0, refused = 0, loaded = 0, raw = 0, silent = 0}
local kinds, shown = {}, 0
local function report(what, why)
  if verbose or shown < 20 then io.stderr:write(("keras-corrupt: %s: %s\n"):format(what, why)) end
  shown = shown + 1
end

local function try(bytes, what)
  spit(path, bytes)
  count.loads = count.loads + 1
  local ok, res = pcall(tf.keras.models.load_model, path)
  if ok then
    count.loaded = count.loaded + 1
    local good_model = same(res(x):totable(), want) and res.optimizer ~= nil and
      res.optimizer.iterations:value():item() == want_iter
    if good_model then
      for i, w in ipairs(res:get_weights()) do
        if not same(w:totable(), want_w[i]) then good_model = false end
      end
    end
    if not good_model then
      count.silent = count.silent + 1
      report(what, "loaded a different model")
    end
  else
    count.refused = count.refused + 1
    if not tf.errors.is_error(res) then
      count.raw = count.raw + 1
      report(what, "a raw Lua error: " .. tostring(res))
    else
      kinds[res.kind] = (kinds[res.kind] or 0) + 1
    end
  end
end

local t0 = os.time()
try(good, "the file as written")
if count.loaded ~= 1 or count.silent ~= 0 then
  io.stderr:write("keras-corrupt: the undamaged file does not load: nothing to test\n")
  os.execute("rm -rf '" .. dir .. "'")
  os.exit(1)
end
for n = 0, N - 1, quick and 7 or 1 do try(good:sub(1, n), ("truncated to %d bytes"):format(n)) end
for i = 1, N do
  local b = good:byte(i)
  local bits = quick and {(i - 1) % 8} or {0, 1, 2, 3, 4, 5, 6, 7}
  for _, bit in ipairs(bits) do
    try(good:sub(1, i - 1) .. string.char(b ~ (1 << bit)) .. good:sub(i + 1), ("byte %d bit %d flipped"):format(i - 1, bit))
  end
end
local lens = quick and {8} or {1, 8, 64, math.huge}
for i = 1, N, quick and 5 or 1 do
  for _, len in ipairs(lens) do
    local e = math.min(N, i + len - 1)
    if len == math.huge or i + len - 1 <= N then
      try(good:sub(1, i - 1) .. string.rep("\0", e - i + 1) .. good:sub(e + 1), ("bytes %d..%d zeroed"):format(i - 1, e - 1))
    end
  end
end
-- hostile configs in a well-formed archive: each leaf of config.json (and
-- each table) replaced by a value of another type, or removed
local zipm = require("tf.keras.saving_zip")(tf)
local json = require("tf.keras.saving_json")(tf)
local files, names = zipm.read(good)
local config = json.decode(files["config.json"])
local paths = {}
local function collect(v, path)
  paths[#paths + 1] = path
  if type(v) == "table" then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do collect(v[k], (function() local q = {table.unpack(path)}; q[#q + 1] = k; return q end)()) end
  end
end
collect(config, {})
local REPL = {"x", -1, 0.5, true, {}, {1, 2}, "__nil__"}
local function deep(v)
  if type(v) ~= "table" then return v end
  local o = {}
  for k, x in pairs(v) do o[k] = deep(x) end
  return o
end
for pi, path in ipairs(paths) do
  if #path > 0 and (not quick or pi % 3 == 1) then
    for _, r in ipairs(REPL) do
      local c = deep(config)
      local t = c
      for i = 1, #path - 1 do t = t[path[i]] end
      if r == "__nil__" then t[path[#path]] = nil else t[path[#path]] = deep(r) end
      local members = {}
      for _, n in ipairs(names) do
        members[#members + 1] = {n, n == "config.json" and json.encode(c) or files[n]}
      end
      local where = {}
      for i, k in ipairs(path) do where[i] = tostring(k) end
      local ok, err = pcall(function()
        spit(path and dir .. "/m.keras", zipm.write(members))
        local ok2, res = pcall(tf.keras.models.load_model, dir .. "/m.keras")
        count.loads = count.loads + 1
        if ok2 then
          count.loaded = count.loaded + 1
        else
          count.refused = count.refused + 1
          if not tf.errors.is_error(res) then
            count.raw = count.raw + 1
            report("config " .. table.concat(where, ".") .. " = " .. tostring(r), "a raw Lua error: " .. tostring(res))
          else
            kinds[res.kind] = (kinds[res.kind] or 0) + 1
          end
        end
      end)
      if not ok then io.stderr:write("keras-corrupt: " .. tostring(err) .. "\n") end
    end
  end
end
os.execute("rm -rf '" .. dir .. "'")

local failures = count.raw + count.silent
local kl = {}
for k, n in pairs(kinds) do kl[#kl + 1] = k .. " " .. n end
table.sort(kl)
print(("keras-corrupt: a %d-byte .keras file, %s campaign: %d loads in %d s: %d refused (%s), %d loaded; " ..
  "raw Lua errors %d, different models loaded %d; %d failures"):format(N, quick and "quick" or "full", count.loads,
  os.time() - t0, count.refused, table.concat(kl, ", "), count.loaded, count.raw, count.silent, failures))
os.exit(failures == 0 and 0 or 1)
