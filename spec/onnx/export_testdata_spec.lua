-- A slice of ONNX's node tests (libonnx-testdata) through both directions:
-- imported, exported again, checked, run under ONNX Runtime against the
-- cases' expected outputs (tools/onnx_export_testdata.lua; the whole set is
-- a developer run of about 30 s, docs/onnx_export.md has its figures).
local X = require("onnx.export_support")

describe("tf.onnx.save on ONNX's node tests", function()
  it("the cases test_[cgmlw]* (conv, cast, concat, gather, gemm, GRU, LSTM, matmul, max, where, ...) agree", function()
    local skip = X.missing()
    if skip then return pending(skip) end
    local f = io.open("/usr/share/libonnx-testdata/data/node/test_relu/model.onnx", "rb")
    if not f then return pending("libonnx-testdata is not installed") end
    f:close()
    local dir = assert(X.ort_dir())
    local p = io.popen("LTF_ORT_NODE_PATH='" .. dir .. "' lua5.4 tools/onnx_export_testdata.lua --match " ..
      "'^test_[cgmlw]' 2>&1")
    local out = p:read("a")
    local ok = p:close()
    local imported, exported, refused, list, other = out:match(
      "(%d+) imported; of those (%d+) exported, (%d+) refused by the exporter %(([^)]*)%), (%d+) other export errors")
    assert.truthy(imported, out)
    assert.is_true(tonumber(imported) > 100, out)
    assert.are.equal(tonumber(imported), tonumber(exported) + tonumber(refused), out)
    assert.are.equal("0", other, out)
    -- a refusal names an op without an ONNX form (TensorArrays of imported Loops): none of the table's
    local table_ops = {}
    for _, o in ipairs(require("tf.onnx.export").operators()) do table_ops[o.op] = true end
    for op in list:gmatch("([%w_]+) %d+") do assert.is_nil(table_ops[op], op .. " is in the table but was refused") end
    local pass, checker, ortf, mism = out:match("exported: (%d+) pass under ONNX Runtime, (%d+) checker failures, " ..
      "(%d+) ORT failures, (%d+) mismatches")
    assert.truthy(pass, out)
    assert.are.equal("0", checker, out)
    assert.are.equal("0", mism, out)
    assert.are.equal("0", ortf, out)
    assert.is_true(ok, out)
  end)
end)
