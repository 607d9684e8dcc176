-- Reading event files independently of luatf (spec/summary, the TensorBoard
-- callback spec, the example spec): spec/summary/read_events.py checks the
-- TFRecord framing and decodes every Event with python3-protobuf against a
-- descriptor set built by protoc-c from proto/*.proto.
local cjson = require("cjson")
local M = {}

local PY = "env -u LD_PRELOAD /usr/bin/python3"   -- not under the sanitizers the specs may run with
local desc

local function run(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return ok, out
end

function M.descriptor()
  if desc then return desc end
  desc = os.tmpname()
  local ok, out = run(("protoc-c --proto_path=proto --descriptor_set_out=%s --include_imports proto/event.proto proto/graph.proto")
    :format(desc))
  assert(ok, "protoc-c: " .. out)
  return desc
end

--- The events of one file (a list of tables, see read_events.py).
function M.read(path)
  local ok, out = run(("%s spec/summary/read_events.py %s '%s'"):format(PY, M.descriptor(), path))
  assert(ok, "read_events.py: " .. out)
  return cjson.decode(out)
end

--- The event files of a directory, sorted.
function M.files(dir)
  local p = io.popen("ls '" .. dir .. "' 2>/dev/null")
  local t = {}
  for name in p:lines() do
    if name:find("tfevents", 1, true) then t[#t + 1] = dir .. "/" .. name end
  end
  p:close()
  table.sort(t)
  return t
end

--- All events of the single event file in 'dir'.
function M.read_dir(dir)
  local f = M.files(dir)
  assert(#f == 1, ("expected one event file in %s, found %d"):format(dir, #f))
  return M.read(f[1]), f[1]
end

--- The summary values of events: list of {step=, tag=, value table}
function M.values(events, tag)
  local out = {}
  for _, e in ipairs(events) do
    for _, v in ipairs(e.values or {}) do
      if tag == nil or v.tag == tag then out[#out + 1] = {step = e.step, v = v, wall_time = e.wall_time} end
    end
  end
  return out
end

return M
