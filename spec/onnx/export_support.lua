-- spec/onnx/export_support.lua: what the tf.onnx.save specs share: the ONNX
-- checker (python3-onnx) and ONNX Runtime (onnxruntime-node through
-- tools/ort_run.js), each found or reported missing (the specs then call
-- pending() with the reason, never pass silently).
local cjson = require("cjson")
local support = require("support")
local assert = require("luassert")
local M = {}

local root = (debug.getinfo(1, "S").source:match("^@(.*)/spec/onnx/[^/]*$")) or "."
M.root = root
local PY = "/usr/bin/python3"
-- python children run without the sanitizer preload (scripts/sanitize.sh)
local function sh(cmd) return "env -u LD_PRELOAD " .. cmd end

local function run(cmd)
  local p = io.popen(sh(cmd) .. " 2>&1", "r")
  local out = p:read("a")
  local ok, _, code = p:close()
  return ok, out, code
end

--- The node_modules folder holding onnxruntime-node, or nil and why not.
function M.ort_dir()
  local cands = {}
  if os.getenv("LTF_ORT_NODE_PATH") then cands[#cands + 1] = os.getenv("LTF_ORT_NODE_PATH") end
  cands[#cands + 1] = root .. "/" .. (os.getenv("BUILD_DIR") or "build") .. "/npm/node_modules"
  for _, d in ipairs(cands) do
    local f = io.open(d .. "/onnxruntime-node/package.json", "r")
    if f then f:close() return d end
  end
  return nil, "onnxruntime-node not found (bash scripts/setup.sh installs it into build/npm, or set LTF_ORT_NODE_PATH)"
end

--- Reason to skip, or nil when node, onnxruntime-node and python3-onnx are all there.
function M.missing()
  if not run("node --version >/dev/null") then return "node is not installed (nodejs)" end
  local dir, why = M.ort_dir()
  if not dir then return why end
  if not run(PY .. " -c 'import onnx' >/dev/null") then return "python3-onnx is not installed" end
  return nil
end

local INFO = [[
import onnx, sys, json
m = onnx.load(sys.argv[1])
try:
    onnx.checker.check_model(m, full_check=True)
    ok, msg = True, ""
except Exception as e:
    ok, msg = False, str(e)
g = m.graph
print(json.dumps({"ok": ok, "msg": msg,
    "inputs": [i.name for i in g.input],
    "dims": [[d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim] for i in g.input],
    "ops": [n.op_type for n in g.node],
    "opset": m.opset_import[0].version,
    "ninit": len(g.initializer)}))
]]
local cache = {}

--- onnx.checker.check_model(full_check = True) on the file: ok, message, and
-- what the specs ask of the file (one python process): {inputs = names,
-- dims = each input's dims (dim_param names for unknown ones), ops = the
-- main graph's op types in order, opset =, ninit = initializers}.
function M.check(path)
  local ok, out = run(PY .. " -c " .. support.shell_quote(INFO) .. " " .. support.shell_quote(path))
  assert(ok, out)
  local info = cjson.decode(out:match("{.*}"))
  cache[path] = info
  return info.ok and true or nil, info.msg, info
end

--- The check's information about the file (checked now unless it was).
function M.info(path)
  if not cache[path] then M.check(path) end
  return cache[path]
end

local NAMES = {float32 = true, float64 = true, int32 = true, int64 = true, uint8 = true, bool = true}

local function spec_of(t)
  local dt = t.dtype.name
  assert(NAMES[dt], "ort_run: dtype " .. dt)
  local flat = support.flatten(t:totable())
  if type(flat) ~= "table" then flat = {flat} end
  local shape = t.shape:as_list()
  return {dtype = dt, dims = setmetatable(shape, cjson.array_mt), data = setmetatable(flat, cjson.array_mt)}
end

--- Run the model under ONNX Runtime with inputs {name = tf.Tensor}; returns
-- {name = {dtype=, dims=, data=}} and the output names in order.
function M.ort(path, inputs)
  local dir = assert(M.ort_dir())
  local tmp = support.tmpdir()
  local feeds = {}
  for name, t in pairs(inputs) do feeds[name] = spec_of(t) end
  cjson.encode_number_precision(14)
  support.spit(tmp .. "/in.json", cjson.encode(feeds))
  local ok, out = run("LTF_ORT_NODE_PATH=" .. support.shell_quote(dir) .. " node " ..
    support.shell_quote(root .. "/tools/ort_run.js") .. " " .. support.shell_quote(path) .. " " ..
    support.shell_quote(tmp .. "/in.json") .. " " .. support.shell_quote(tmp .. "/out.json"))
  assert(ok, "ort_run failed: " .. out)
  local res = cjson.decode(support.slurp(tmp .. "/out.json"))
  os.execute("rm -rf " .. support.shell_quote(tmp))
  return res, res.__order
end

--- Assert that ORT's output 'o' equals tensor 't' (shape, and values within rtol/atol).
function M.assert_close(t, o, rtol, atol)
  rtol, atol = rtol or 1e-5, atol or 1e-6
  local shape = t.shape:as_list()
  assert.are.same(shape, o.dims)
  local flat = support.flatten(t:totable())
  if type(flat) ~= "table" then flat = {flat} end
  assert.are.equal(#flat, #o.data)
  local SPECIAL = {Infinity = math.huge, ["-Infinity"] = -math.huge, NaN = 0 / 0}
  for k = 1, #flat do
    local a, b = flat[k], o.data[k]
    if SPECIAL[b] then b = SPECIAL[b] end
    if type(a) == "number" and type(b) == "number" and (a ~= a or a == b) then
      assert(a == b or (a ~= a and b ~= b), string.format("element %d: luatf %s, ONNX Runtime %s", k, a, b))
      goto continue
    end
    if type(a) == "number" and type(b) == "number" then
      if math.abs(a - b) > atol + rtol * math.abs(a) then
        error(string.format("element %d: luatf %.9g, ONNX Runtime %.9g", k, a, b), 2)
      end
    else
      assert.are.equal(a, b)
    end
    ::continue::
  end
end

local scratch = {}

--- A scratch file path for a model (in a fresh directory that M.cleanup removes).
function M.tmpfile(name)
  local dir = support.tmpdir()
  scratch[#scratch + 1] = dir
  return dir .. "/" .. name
end

--- Remove the scratch directories made so far (each spec file's teardown).
function M.cleanup()
  for _, dir in ipairs(scratch) do os.execute("rm -rf " .. support.shell_quote(dir)) end
  scratch = {}
end

return M
