-- docs/onnx_export.md's operator list is generated from tf.onnx.save's
-- table (tools/onnx_export_ops.lua): this fails when someone changes the
-- table without regenerating the doc.
local support = require("support")

describe("docs/onnx_export.md", function()
  local tool = dofile("tools/onnx_export_ops.lua")

  it("lists every op of the export table, as generated", function()
    local doc = support.slurp("docs/onnx_export.md")
    local new = assert(tool.rewrite(doc))
    assert.are.equal(new, doc)   -- else: lua5.4 tools/onnx_export_ops.lua --write
    for _, o in ipairs(require("tf.onnx.export").operators()) do
      assert.truthy(doc:find("| `" .. o.op .. "` |", 1, true), o.op)
    end
  end)

  it("notices a stale list", function()
    local doc = support.slurp("docs/onnx_export.md")
    local stale = doc:gsub("| `relu` | Relu |\n", "")
    assert.are_not.equal(doc, stale)
    assert.are_not.equal(stale, tool.rewrite(stale))
    assert.are.equal(doc, tool.rewrite(stale))
    assert.is_nil((tool.rewrite("no markers here")))
  end)
end)
