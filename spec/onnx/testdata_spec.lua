-- ONNX's node test cases (Debian's libonnx-testdata) through tf.onnx.load
-- (tools/onnx_testdata.lua): every case whose model the importer accepts
-- gives ONNX's expected outputs (rtol 1e-3, atol 1e-7, as ONNX's backend
-- tests), every other case is refused at load time with UnimplementedError,
-- and docs/onnx.md's table is the one the code generates.
package.path = "tools/?.lua;" .. package.path
local tf = require("tf")
local TD = require("onnx_testdata")

local function have_data()
  local f = io.open(TD.DEFAULT_DIR .. "/test_relu/model.onnx", "rb")
  if f then f:close() return true end
  return false
end

describe("libonnx-testdata node cases", function()
  local results
  setup(function()
    if have_data() then results = TD.run(tf) end
  end)

  it("every accepted case passes; the others are refused at load time", function()
    if not results then pending("libonnx-testdata is not installed (" .. TD.DEFAULT_DIR .. ")") return end
    local fails, pass, refused = {}, 0, 0
    for _, r in ipairs(results) do
      if r.status == "FAIL" then fails[#fails + 1] = r.name .. ": " .. tostring(r.why)
      elseif r.status == "PASS" then pass = pass + 1
      else refused = refused + 1 end
    end
    assert.same({}, fails)
    assert.is_true(#results > 900, "cases found: " .. #results)
    assert.is_true(pass >= 696, "cases passing: " .. pass)
  end)

  it("covers the operators PyTorch exports use", function()
    if not results then pending("libonnx-testdata is not installed") return end
    local by = {}
    for _, e in ipairs(TD.table(results)) do by[e.op] = e end
    for _, op in ipairs({"Gemm", "MatMul", "Conv", "BatchNormalization", "MaxPool", "GlobalAveragePool", "Flatten",
                         "Relu", "Clip", "Add", "Reshape", "Transpose", "Softmax", "Gather", "Where", "Erf", "Split",
                         "ReduceMean", "Pow", "Sqrt", "Div", "Concat", "Unsqueeze", "LSTM", "GRU", "LayerNormalization"}) do
      assert.truthy(by[op], op)
      assert.is_true(by[op].pass > 0, op)
      assert.equals(0, by[op].fail, op)
    end
  end)

  it("docs/onnx.md carries the generated operator table", function()
    if not results then pending("libonnx-testdata is not installed") return end
    local in_docs = TD.in_docs("docs/onnx.md")
    assert.truthy(in_docs, "docs/onnx.md has no generated table (lua5.4 tools/onnx_testdata.lua --update-docs docs/onnx.md)")
    assert.equals(TD.generated(tf, results), in_docs)
  end)
end)
