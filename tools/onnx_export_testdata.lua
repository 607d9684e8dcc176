--- ONNX's node test cases (Debian's libonnx-testdata) through both
-- directions: each case tf.onnx.load can import is written again with
-- tf.onnx.save, checked by onnx.checker (python3-onnx) and run under ONNX
-- Runtime (tools/ort_run.js --batch) on the case's inputs; the outputs must
-- match the case's expected outputs (ONNX's tolerance: rtol 1e-3, atol 1e-7).
--   . scripts/env.sh
--   LTF_ORT_NODE_PATH=build/npm/node_modules lua5.4 tools/onnx_export_testdata.lua [--verbose]
--     [--match LUA_PATTERN] [DIR]
-- prints the failures (and with --verbose every case), then the totals:
-- imported, exported, refused by the exporter (the op named), checker
-- failures, ORT failures, value mismatches, passes.
local tf = require("tf")
local cjson = require("cjson")

local DIR = "/usr/share/libonnx-testdata/data/node"
local verbose, dir, match = false, DIR, nil
local i = 1
while arg[i] do
  if arg[i] == "--verbose" then verbose = true
  elseif arg[i] == "--match" then match = arg[i + 1]; i = i + 1
  else dir = arg[i] end
  i = i + 1
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end
local function write(path, s) local f = assert(io.open(path, "wb")) f:write(s) f:close() end
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function flatten(v, out)
  out = out or {}
  if type(v) == "table" then for _, e in ipairs(v) do flatten(e, out) end else out[#out + 1] = v end
  return out
end

local JSON_DTYPES = {float32 = true, float64 = true, int32 = true, int64 = true, uint8 = true, bool = true}
local function spec_of(t)
  local flat = flatten(t:totable())
  for k, v in ipairs(flat) do   -- JSON has no NaN or infinities: strings that ort_run.js reads back as numbers
    if type(v) == "number" and (v ~= v or v == math.huge or v == -math.huge) then
      flat[k] = v ~= v and "NaN" or (v > 0 and "Infinity" or "-Infinity")
    end
  end
  local dims = t.shape:as_list()
  return {dtype = t.dtype.name, dims = setmetatable(dims, cjson.array_mt), data = setmetatable(flat, cjson.array_mt)}
end

-- expected (tf.Tensor) against ORT's {dtype, dims, data}
local SPECIAL = {Infinity = math.huge, ["-Infinity"] = -math.huge, NaN = 0 / 0}
local function close(ref, o)
  local dims = ref.shape:as_list()
  local od = type(o.dims) == "table" and o.dims or {}
  if #dims ~= #od then return false, "rank differs" end
  for i = 1, #dims do if dims[i] ~= od[i] then return false, "shape differs" end end
  local flat = flatten(ref:totable())
  local data = type(o.data) == "table" and o.data or {}
  if #flat ~= #data then return false, "size differs" end
  for k = 1, #flat do
    local a, b = flat[k], data[k]
    if SPECIAL[b] then b = SPECIAL[b] end
    if type(a) == "number" and type(b) == "number" then
      if a ~= a then
        if b == b then return false, ("element %d: NaN, got %s"):format(k, b) end
      elseif a ~= b and math.abs(a - b) > 1e-7 + 1e-3 * math.abs(a) then
        return false, ("element %d: %.9g, got %.9g"):format(k, a, b)
      end
    elseif a ~= b then
      return false, ("element %d: %s, got %s"):format(k, tostring(a), tostring(b))
    end
  end
  return true
end

local p = io.popen("mktemp -d /tmp/luatf-export-testdata-XXXXXX")
local tmp = p:read("l")
p:close()
local names = {}
do
  local l = io.popen("ls -1 " .. q(dir) .. " 2>/dev/null")
  for n in l:read("a"):gmatch("[^\n]+") do
    if not match or n:match(match) then names[#names + 1] = n end
  end
  l:close()
end

local cases, jobs = {}, {}
local count = {cases = 0, imported = 0, exported = 0, refused = 0, other = 0}
local refused_ops = {}
for _, name in ipairs(names) do
  local base = dir .. "/" .. name
  local bytes = read(base .. "/model.onnx")
  if bytes then
    count.cases = count.cases + 1
    local ok, f = pcall(tf.onnx.load, bytes, {bytes = true})
    if ok then
      count.imported = count.imported + 1
      local c = {name = name, base = base}
      local path = tmp .. "/" .. name .. ".onnx"
      local oks, err = pcall(tf.onnx.save, f, path)
      if not oks then
        c.status, c.why = "EXPORT-REFUSED", type(err) == "table" and err.message or tostring(err)
        if type(err) == "table" and err.kind == "UnimplementedError" then
          count.refused = count.refused + 1
          local op = c.why:match("op '([^']+)'")
          if op then refused_ops[op] = (refused_ops[op] or 0) + 1 end
        else
          c.status = "EXPORT-ERROR"
          count.other = count.other + 1
        end
      else
        count.exported = count.exported + 1
        c.path = path
        -- the case's inputs under the exported model's input names
        local feeds, k, skip = {}, 0, nil
        local inames = {}
        for i, s in ipairs(tf.core.graph_signature(f._G)) do inames[i] = s.name end
        while true do
          local s = read(("%s/test_data_set_0/input_%d.pb"):format(base, k))
          if not s then break end
          local okt, t = pcall(tf.core.internal.onnx_read_tensor, s)
          if not okt then skip = "input: " .. tostring(type(t) == "table" and t.message or t)
          elseif not JSON_DTYPES[t.dtype.name] then skip = "input dtype " .. t.dtype.name end
          if not skip then feeds[inames[k + 1] or ("input_" .. k)] = spec_of(t) end
          k = k + 1
        end
        if skip then
          c.status, c.why = "SKIP", skip
        else
          cjson.encode_number_precision(14)
          write(tmp .. "/" .. name .. ".in.json", cjson.encode(feeds))
          jobs[#jobs + 1] = {model = path, inputs = tmp .. "/" .. name .. ".in.json",
                             outputs = tmp .. "/" .. name .. ".out.json"}
          c.job = jobs[#jobs]
        end
      end
      cases[#cases + 1] = c
    end
  end
end

-- one python process checks every exported file
local list = {}
for _, c in ipairs(cases) do if c.path then list[#list + 1] = c.path end end
write(tmp .. "/files.json", cjson.encode(list))
local py = [[
import onnx, sys, json
res = {}
for p in json.load(open(sys.argv[1])):
    try:
        onnx.checker.check_model(onnx.load(p), full_check=True)
        res[p] = ""
    except Exception as e:
        res[p] = str(e).splitlines()[0] if str(e) else type(e).__name__
json.dump(res, open(sys.argv[2], "w"))
]]
assert(os.execute("env -u LD_PRELOAD /usr/bin/python3 -c " .. q(py) .. " " .. q(tmp .. "/files.json") .. " " ..
  q(tmp .. "/checked.json")), "python3-onnx checker failed to run")
local checked = cjson.decode(read(tmp .. "/checked.json"))

-- one node process runs them all
write(tmp .. "/jobs.json", cjson.encode(jobs))
local root = (debug.getinfo(1, "S").source:match("^@(.*)/tools/[^/]*$")) or "."
assert(os.execute("env -u LD_PRELOAD node " .. q(root .. "/tools/ort_run.js") .. " --batch " .. q(tmp .. "/jobs.json")),
  "tools/ort_run.js failed (set LTF_ORT_NODE_PATH to onnxruntime-node's node_modules)")

local totals = {PASS = 0, ["CHECKER-FAIL"] = 0, ["ORT-FAIL"] = 0, MISMATCH = 0, SKIP = 0}
for _, c in ipairs(cases) do
  if c.path and checked[c.path] ~= "" then
    c.status, c.why = "CHECKER-FAIL", checked[c.path]
  elseif c.job then
    local out = cjson.decode(read(c.job.outputs) or '{"__error": "no output"}')
    if out.__error and out.__error:match("^Unsupported data type: 16") then
      c.status, c.why = "SKIP", "onnxruntime-node cannot return a bfloat16 output"
    elseif out.__error then
      c.status, c.why = "ORT-FAIL", out.__error
    else
      c.status = "PASS"
      local k = 0
      while true do
        local s = read(("%s/test_data_set_0/output_%d.pb"):format(c.base, k))
        if not s then break end
        local okr, ref = pcall(tf.core.internal.onnx_read_tensor, s)
        if not okr then c.status, c.why = "SKIP", "expected output unreadable" break end
        local o = out.__order and out[out.__order[k + 1]]
        if not o then c.status, c.why = "MISMATCH", "missing output " .. k break end
        local same, why = close(ref, o)
        if not same then c.status, c.why = "MISMATCH", ("output %d: %s"):format(k, why) break end
        k = k + 1
      end
    end
  end
  if totals[c.status] then totals[c.status] = totals[c.status] + 1 end
  if verbose or (c.status ~= "PASS" and c.status ~= "EXPORT-REFUSED") then
    print(c.status, c.name, c.why or "")
  end
end
os.execute("rm -rf " .. q(tmp))
local ops = {}
for op, n in pairs(refused_ops) do ops[#ops + 1] = ("%s %d"):format(op, n) end
table.sort(ops)
print(("%d cases, %d imported; of those %d exported, %d refused by the exporter (%s), %d other export errors"):format(
  count.cases, count.imported, count.exported, count.refused, table.concat(ops, ", "), count.other))
print(("exported: %d pass under ONNX Runtime, %d checker failures, %d ORT failures, %d mismatches, %d skipped"):format(
  totals.PASS, totals["CHECKER-FAIL"], totals["ORT-FAIL"], totals.MISMATCH, totals.SKIP))
os.exit((totals["CHECKER-FAIL"] + totals["ORT-FAIL"] + totals.MISMATCH + count.other) == 0 and 0 or 1)
