--- Run ONNX's node test cases (Debian's libonnx-testdata: node/<case>/model.onnx
-- with test_data_set_*/input_*.pb, output_*.pb) through tf.onnx.load.
--   lua5.4 tools/onnx_testdata.lua [--markdown] [DIR]
-- prints one line per case (PASS, FAIL with the reason, or REFUSED: the
-- importer's load-time refusal: an operator, attribute or dtype luatf cannot
-- express), then per-operator totals; --markdown prints the table that
-- docs/onnx.md carries instead. Also a module: require("onnx_testdata").run(tf, dir).
local M = {}

M.DEFAULT_DIR = "/usr/share/libonnx-testdata/data/node"

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function list_dir(dir)
  local p = io.popen('ls -1 "' .. dir .. '" 2>/dev/null')
  local t = {}
  for l in p:read("a"):gmatch("[^\n]+") do t[#t + 1] = l end
  p:close()
  return t
end

-- ONNX's backend tests compare with rtol 1e-3, atol 1e-7
local function close(tf, got, ref)
  if got.dtype ~= ref.dtype then return false, ("dtype %s, expected %s"):format(tostring(got.dtype), tostring(ref.dtype)) end
  local gs, rs = got.shape:as_list(), ref.shape:as_list()
  if #gs ~= #rs then return false, ("shape %s, expected %s"):format(tostring(got.shape), tostring(ref.shape)) end
  for i = 1, #gs do
    if gs[i] ~= rs[i] then return false, ("shape %s, expected %s"):format(tostring(got.shape), tostring(ref.shape)) end
  end
  if ref.dtype == tf.string or ref.dtype == tf.bool then
    if not tf.reduce_all(tf.equal(got, ref)):item() then return false, "values differ" end
    return true
  end
  local g, r = tf.cast(got, tf.float64), tf.cast(ref, tf.float64)
  local nan_r, nan_g = tf.math.is_nan(r), tf.math.is_nan(g)
  if not tf.reduce_all(tf.equal(nan_r, nan_g)):item() then return false, "NaNs differ" end
  g = tf.where(nan_g, tf.zeros_like(g), g)
  r = tf.where(nan_r, tf.zeros_like(r), r)
  local same = tf.equal(g, r)   -- infinities
  local ok = tf.logical_or(same, tf.less_equal(tf.abs(g - r), tf.abs(r) * 1e-3 + 1e-7))
  if not tf.reduce_all(ok):item() then
    return false, ("max error %g"):format(tf.reduce_max(tf.where(same, tf.zeros_like(g), tf.abs(g - r))):item())
  end
  return true
end

--- The operator a case tests: its one node's op_type, else "(composite)".
local function case_op(tf, model)
  local ops, n = {}, 0
  for _, node in ipairs(model.graph.nodes) do
    if not ops[node.op_type] then ops[node.op_type] = true; n = n + 1 end
  end
  if n == 1 then return next(ops) end
  return "(composite)"
end

--- Run every case under dir: a list of {name=, op=, status = "PASS"|"FAIL"|"REFUSED", why=}.
function M.run(tf, dir)
  dir = dir or M.DEFAULT_DIR
  local out = {}
  for _, name in ipairs(list_dir(dir)) do
    local base = dir .. "/" .. name
    local bytes = read(base .. "/model.onnx")
    if bytes then
      local r = {name = name}
      local okm, model = pcall(tf.core.internal.onnx_read, bytes, true)
      r.op = okm and case_op(tf, model) or "(unreadable)"
      local ok, f = pcall(tf.onnx.load, bytes, {bytes = true})
      if not ok then
        local kind = type(f) == "table" and f.kind or "?"
        local msg = type(f) == "table" and f.message or tostring(f)
        r.status = (kind == "UnimplementedError") and "REFUSED" or "FAIL"
        r.why = msg
      else
        local ins, i = {}, 0
        local data = base .. "/test_data_set_0"
        local okr, err = pcall(function()
          while true do
            local s = read(("%s/input_%d.pb"):format(data, i))
            if not s then break end
            ins[#ins + 1] = tf.core.internal.onnx_read_tensor(s)
            i = i + 1
          end
        end)
        if not okr then
          r.status, r.why = "REFUSED", "test data: " .. (type(err) == "table" and err.message or tostring(err))
        else
          -- inputs the model declares but the case omits (optional ones) are refused
          local okc, res = pcall(function() return table.pack(f(table.unpack(ins))) end)
          if not okc then
            r.status, r.why = "FAIL", "call: " .. (type(res) == "table" and res.message or tostring(res))
          else
            r.status = "PASS"
            local k = 0
            while true do
              local s = read(("%s/output_%d.pb"):format(data, k))
              if not s then break end
              local okt, ref = pcall(tf.core.internal.onnx_read_tensor, s)
              if not okt then r.status, r.why = "REFUSED", "test data: " .. tostring(ref.message or ref); break end
              local got = res[k + 1]
              if got == nil then r.status, r.why = "FAIL", "missing output " .. k; break end
              local same, why = close(tf, got, ref)
              if not same then r.status, r.why = "FAIL", ("output %d: %s"):format(k, why); break end
              k = k + 1
            end
          end
        end
      end
      out[#out + 1] = r
    end
  end
  return out
end

--- Per-operator totals: sorted list of {op=, cases=, pass=, refused=, fail=}.
function M.table(results)
  local by = {}
  for _, r in ipairs(results) do
    local e = by[r.op]
    if not e then e = {op = r.op, cases = 0, pass = 0, refused = 0, fail = 0}; by[r.op] = e end
    e.cases = e.cases + 1
    if r.status == "PASS" then e.pass = e.pass + 1
    elseif r.status == "REFUSED" then e.refused = e.refused + 1
    else e.fail = e.fail + 1 end
  end
  local t = {}
  for _, e in pairs(by) do t[#t + 1] = e end
  table.sort(t, function(a, b) return a.op < b.op end)
  return t
end

function M.markdown(tf, results)
  local t = M.table(results)
  local lines = {}
  local tot = {cases = 0, pass = 0, refused = 0, fail = 0}
  for _, e in ipairs(t) do for k in pairs(tot) do tot[k] = tot[k] + e[k] end end
  lines[#lines + 1] = ("%d node test cases: %d pass, %d refused at load time (an operator, attribute or dtype luatf cannot express), %d fail."):format(tot.cases, tot.pass, tot.refused, tot.fail)
  lines[#lines + 1] = ""
  lines[#lines + 1] = "| operator | in the importer's table | cases | pass | refused | fail |"
  lines[#lines + 1] = "|---|---|---|---|---|---|"
  local known = {}
  for _, op in ipairs(tf.onnx.supported_ops()) do known[op] = true end
  for _, e in ipairs(t) do
    lines[#lines + 1] = ("| %s | %s | %d | %d | %d | %d |"):format(e.op, known[e.op] and "yes" or (e.op:match("^%(") and "" or "no"),
      e.cases, e.pass, e.refused, e.fail)
  end
  return table.concat(lines, "\n")
end

--- The operators of the importer's table, as a markdown paragraph.
function M.ops_markdown(tf)
  local ops = tf.onnx.supported_ops()
  local t = {}
  for i, op in ipairs(ops) do t[i] = "`" .. op .. "`" end
  return ("%d operators (domain `ai.onnx`, opsets 1 to 17): %s."):format(#ops, table.concat(t, ", "))
end

local BEGIN, END = "<!-- onnx-import-table:begin (tools/onnx_testdata.lua --update-docs) -->", "<!-- onnx-import-table:end -->"
--- docs/onnx.md's generated part: the operator list and the test data table.
function M.generated(tf, results)
  return BEGIN .. "\n" .. M.ops_markdown(tf) .. "\n\n" .. M.markdown(tf, results) .. "\n" .. END
end
--- The generated part as it stands in a docs file (nil when absent).
function M.in_docs(path)
  local s = read(path)
  if not s then return nil end
  local a = s:find(BEGIN, 1, true)
  local _, b = s:find(END, 1, true)
  if not a or not b then return nil end
  return s:sub(a, b), s, a, b
end

if arg and arg[0] and arg[0]:match("onnx_testdata%.lua$") then
  local tf = require("tf")
  local md, dir, update = false, nil, nil
  local i = 1
  while arg[i] do
    if arg[i] == "--markdown" then md = true
    elseif arg[i] == "--update-docs" then update = arg[i + 1]; i = i + 1
    else dir = arg[i] end
    i = i + 1
  end
  local res = M.run(tf, dir)
  if update then
    local _, s, a, b = M.in_docs(update)
    assert(s, update .. " has no generated table markers")
    local f = assert(io.open(update, "w"))
    f:write(s:sub(1, a - 1) .. M.generated(tf, res) .. s:sub(b + 1))
    f:close()
  elseif md then print(M.generated(tf, res)) else
    for _, r in ipairs(res) do print(r.status, r.op, r.name, r.why or "") end
    for _, e in ipairs(M.table(res)) do print(("%-28s %4d cases %4d pass %4d refused %4d fail"):format(e.op, e.cases, e.pass, e.refused, e.fail)) end
  end
end

return M
