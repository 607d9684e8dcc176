-- tools/onnx_export_ops.lua: the operator list of docs/onnx_export.md,
-- generated from tf.onnx.save's own table (lua/tf/onnx/export.lua, OPS).
--
--   lua5.4 tools/onnx_export_ops.lua                 print the list (Markdown)
--   lua5.4 tools/onnx_export_ops.lua --write [doc]   rewrite it in the doc
--   lua5.4 tools/onnx_export_ops.lua --check [doc]   exit 1 when the doc is stale
-- (doc defaults to docs/onnx_export.md; the list lies between the lines
-- "<!-- onnx-export-ops:begin -->" and "<!-- onnx-export-ops:end -->").
-- Run with scripts/env.sh sourced; spec/onnx/export_docs_spec.lua checks
-- the doc is current.
local M = {}
local BEGIN, END = "<!-- onnx-export-ops:begin -->", "<!-- onnx-export-ops:end -->"

--- The list as Markdown lines (a table of luatf op -> ONNX form).
function M.markdown()
  local ops = require("tf.onnx.export").operators()
  local lines = {
    string.format("%d luatf ops have an ONNX form (opsets 13 to 17). Placeholders, constants and variable "
      .. "reads become graph inputs and initializers.", #ops),
    "",
    "| luatf op | ONNX |",
    "|---|---|",
  }
  for _, o in ipairs(ops) do lines[#lines + 1] = string.format("| `%s` | %s |", o.op, o.onnx) end
  return table.concat(lines, "\n") .. "\n"
end

--- 'text' with the list between the markers replaced; nil and why when the markers are missing.
function M.rewrite(text)
  local b = text:find(BEGIN, 1, true)
  local e = text:find(END, 1, true)
  if not b or not e or e < b then return nil, "markers " .. BEGIN .. " ... " .. END .. " not found" end
  return text:sub(1, b + #BEGIN) .. M.markdown() .. text:sub(e)
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function main(args)
  local mode, doc = args[1], args[2] or "docs/onnx_export.md"
  if not mode then io.write(M.markdown()) return 0 end
  local text = read(doc)
  local new, why = M.rewrite(text)
  if not new then io.stderr:write(doc, ": ", why, "\n") return 1 end
  if mode == "--check" then
    if new ~= text then
      io.stderr:write(doc, ": the operator list is stale: run lua5.4 tools/onnx_export_ops.lua --write\n")
      return 1
    end
    return 0
  elseif mode == "--write" then
    local f = assert(io.open(doc, "wb"))
    f:write(new)
    f:close()
    return 0
  end
  io.stderr:write("usage: lua5.4 tools/onnx_export_ops.lua [--write|--check] [doc]\n")
  return 2
end

if arg and arg[0] and arg[0]:match("onnx_export_ops%.lua$") then
  os.exit(main(arg))
end
return M
