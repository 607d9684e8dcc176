--- tools/fuzz/ckpt_corrupt.lua: the checkpoint corruption campaign
-- (docs/checkpoints.md, "Corruption"). Writes a small checkpoint (a few
-- variables of several dtypes, a string tensor, an alias), then damages it
-- in every way below and restores each damaged file into variables holding
-- sentinel values. Each restore must either raise a DataLossError and leave
-- every variable at its sentinel (nothing half-restored), or succeed on an
-- unchanged file with exactly the original values. Counted failures:
--   silent   a restore that succeeded with values other than the original
--   accepted a changed file that restored without an error
--   half     a refused restore that changed a variable anyway
--   kind     a refusal that was not a DataLossError
-- Damage: truncation at every length; every single-bit flip of every byte;
-- zeroed ranges from every byte (lengths 1, 2, 3, 4, 7, 8, 9, 16, 31, 64
-- and to the end). --quick (CI, scripts/sanitize.sh): every truncation, one
-- bit flip per byte (the bit rotates with the position) and bit 7 of every
-- byte, zeroed ranges of 1, 8 and to the end.
--
--   . scripts/env.sh; lua5.4 tools/fuzz/ckpt_corrupt.lua [--quick] [--verbose]
-- Ends with "ckpt-corrupt: N restores, ..., F failures"; exits 1 when F > 0.
local tf = require("tf")

local quick, verbose = false, false
for _, a in ipairs(arg or {}) do
  if a == "--quick" then quick = true
  elseif a == "--verbose" then verbose = true
  else io.stderr:write("usage: lua5.4 tools/fuzz/ckpt_corrupt.lua [--quick] [--verbose]\n"); os.exit(2) end
end

local p = io.popen("mktemp -d /tmp/luatf-ckpt-corrupt-XXXXXX")
local dir = p:read("l")
p:close()

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end
local function spit(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- the objects: names and values as in fuzz-repro 14 and 15, plus more dtypes
local ORIG = {
  a = tf.constant({1.0, 2.0}, tf.float32),
  c = tf.constant({3.0, 4.0}, tf.float32),
  kernel = tf.constant({{0.5, -1.25, 3}, {1e-3, 7, -8}}, tf.float64),
  step = tf.constant(9007199254740993, tf.int64),
  mask = tf.constant({true, false, true}),
  ids = tf.constant({-1, 2, 300}, tf.int32),
  half = tf.constant({1.5, -2}, tf.float16),
  names = tf.constant({"ab", "", "c\0d"}),
}
local SENTINEL = {
  a = tf.constant({0, 0}, tf.float32), c = tf.constant({0, 0}, tf.float32),
  kernel = tf.zeros({2, 3}, tf.float64), step = tf.constant(0, tf.int64),
  mask = tf.constant({false, false, false}), ids = tf.constant({0, 0, 0}, tf.int32),
  half = tf.constant({0, 0}, tf.float16), names = tf.constant({"", "", ""}),
}
local NAMES = {"a", "c", "kernel", "step", "mask", "ids", "half", "names"}

local function objects(values)
  local v = {}
  for _, k in ipairs(NAMES) do v[k] = tf.Variable(values[k], {name = k}) end
  -- 'net.kernel' is also reachable as 'again.k': the file records an alias
  local root = {a = v.a, c = v.c, net = {kernel = v.kernel, mask = v.mask}, again = {k = v.kernel},
                step = v.step, ids = v.ids, half = v.half, names = v.names}
  return tf.train.Checkpoint(root), v
end

local ck, vars = objects(ORIG)
local path = dir .. "/ckpt"
ck:write(path)
local good = slurp(path)
local N = #good

local function same(x, y)
  if type(x) ~= type(y) then return false end
  if type(x) ~= "table" then return x == y end
  if #x ~= #y then return false end
  for i = 1, #x do if not same(x[i], y[i]) then return false end end
  return true
end
local function holds(values)
  for _, k in ipairs(NAMES) do
    if not same(vars[k]:numpy(), values[k]:numpy()) then return false, k end
  end
  return true
end

local count = {restores = 0, refused = 0, restored = 0, silent = 0, accepted = 0, half = 0, kind = 0}
local kinds = {}
local shown = 0

local function report(what, why)
  if verbose or shown < 20 then io.stderr:write(("ckpt-corrupt: %s: %s\n"):format(what, why)) end
  shown = shown + 1
end

local function try(bytes, what)
  for _, k in ipairs(NAMES) do vars[k]:assign(SENTINEL[k]) end
  spit(path, bytes)
  count.restores = count.restores + 1
  -- the restore itself: values it leaves wrong are wrong whatever the
  -- status says (assert_consumed is the caller's choice)
  local ok, err = pcall(ck.restore, ck, path)
  if ok then
    count.restored = count.restored + 1
    local right, bad = holds(ORIG)
    if not right then
      count.silent = count.silent + 1
      report(what, "silent wrong restore ('" .. bad .. "')")
    elseif bytes ~= good then
      count.accepted = count.accepted + 1
      report(what, "a changed file was accepted")
    end
  else
    count.refused = count.refused + 1
    local kind = type(err) == "table" and err.kind or "string: " .. tostring(err)
    kinds[kind] = (kinds[kind] or 0) + 1
    if kind ~= "DataLossError" then
      count.kind = count.kind + 1
      report(what, "refused with " .. kind .. ": " .. tostring(type(err) == "table" and err.message or err))
    end
    local untouched, changed = holds(SENTINEL)
    if not untouched then
      count.half = count.half + 1
      report(what, "refused but '" .. changed .. "' changed (half-restored)")
    end
  end
end

local t0 = os.clock()
-- the file as written restores exactly
try(good, "the file as written")
if count.restored ~= 1 or count.silent + count.accepted ~= 0 then
  io.stderr:write("ckpt-corrupt: the undamaged file does not restore: nothing to test\n")
  os.execute("rm -rf '" .. dir .. "'")
  os.exit(1)
end
for n = 0, N - 1 do try(good:sub(1, n), ("truncated to %d bytes"):format(n)) end
for i = 1, N do
  local b = good:byte(i)
  local bits = quick and {(i - 1) % 8, 7} or {0, 1, 2, 3, 4, 5, 6, 7}
  if quick and bits[1] == 7 then bits = {7} end
  for _, bit in ipairs(bits) do
    try(good:sub(1, i - 1) .. string.char(b ~ (1 << bit)) .. good:sub(i + 1), ("byte %d bit %d flipped"):format(i - 1, bit))
  end
end
local lens = quick and {1, 8, math.huge} or {1, 2, 3, 4, 7, 8, 9, 16, 31, 64, math.huge}
for i = 1, N do
  for _, len in ipairs(lens) do
    local e = math.min(N, i + len - 1)
    if len == math.huge or i + len - 1 <= N then
      try(good:sub(1, i - 1) .. string.rep("\0", e - i + 1) .. good:sub(e + 1), ("bytes %d..%d zeroed"):format(i - 1, e - 1))
    end
  end
end
os.execute("rm -rf '" .. dir .. "'")

local failures = count.silent + count.accepted + count.half + count.kind
local kl = {}
for k, n in pairs(kinds) do kl[#kl + 1] = k .. " " .. n end
table.sort(kl)
print(("ckpt-corrupt: a %d-byte checkpoint, %s campaign: %d restores in %.1f s: %d refused (%s), %d restored; "
  .. "silent wrong restores %d, changed files accepted %d, half-restored %d, other error kinds %d; %d failures"):format(
  N, quick and "quick" or "full", count.restores, os.clock() - t0, count.refused, table.concat(kl, ", "),
  count.restored, count.silent, count.accepted, count.half, count.kind, failures))
os.exit(failures == 0 and 0 or 1)
