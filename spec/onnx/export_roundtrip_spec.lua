-- Round trips: models PyTorch 1.13 exports (tools/onnx_models.py: MLP,
-- MNIST convnet, LSTM, GRU, bidirectional LSTM and GRU, TransformerEncoder,
-- an upsampling convnet, at opsets 13 and 17) loaded
-- with tf.onnx.load, written again with tf.onnx.save, checked by
-- onnx.checker and run under ONNX Runtime on PyTorch's reference inputs:
-- the outputs agree with PyTorch's own within 1e-4 relative, at a batch
-- size other than the one PyTorch traced (the dynamic batch survives).
-- resnet18 and mobilenet_v2 are included unless LTF_ONNX_BIG=0.
local tf = require("tf")
local X = require("onnx.export_support")

local MODELS = {"mlp", "convnet", "lstm", "gru", "bilstm", "bigru", "transformer", "upsample"}
if os.getenv("LTF_ONNX_BIG") ~= "0" then   -- as spec/onnx/import_models_spec.lua: LTF_ONNX_BIG=0 leaves them out
  MODELS[#MODELS + 1] = "resnet18"
  MODELS[#MODELS + 1] = "mobilenet_v2"
end

local function read_tensor(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local t = tf.core.internal.onnx_read_tensor(f:read("a"))
  f:close()
  return t
end

local function have_torch()
  local p = io.popen("env -u LD_PRELOAD /usr/bin/python3 -c 'import torch, onnx' 2>/dev/null && echo yes")
  local out = p:read("a")
  p:close()
  return out:match("yes") ~= nil
end

describe("tf.onnx.save after tf.onnx.load (PyTorch exports)", function()
  local skip = X.missing() or (not have_torch() and "no /usr/bin/python3 with torch: no PyTorch exports")
  local dir
  setup(function()
    if skip then return end
    dir = require("support").tmpdir()
    assert(os.execute(("env -u LD_PRELOAD /usr/bin/python3 tools/onnx_models.py %s --models %s >/dev/null 2>&1")
      :format(dir, table.concat(MODELS, ","))), "tools/onnx_models.py failed")
  end)
  teardown(function() if dir then os.execute("rm -rf " .. dir) end end)

  for _, name in ipairs(MODELS) do
    for _, opset in ipairs({13, 17}) do
      local case = ("%s_op%d"):format(name, opset)
      it(case .. ": exported again, ONNX Runtime agrees with PyTorch within 1e-4", function()
        if skip then return pending(skip) end
        local f = tf.onnx.load(dir .. "/" .. case .. ".onnx")
        local path = dir .. "/" .. case .. "_luatf.onnx"
        tf.onnx.save(f, path, {opset = opset})
        local ok, msg = X.check(path)
        assert.is_truthy(ok, msg)
        assert.are.equal(opset, X.info(path).opset)
        local names = X.info(path).inputs
        local feeds, k = {}, 0
        while true do
          local t = read_tensor(("%s/%s/input_%d.pb"):format(dir, case, k))
          if not t then break end
          feeds[names[k + 1]] = t
          k = k + 1
        end
        assert.are.equal(#names, k)
        local res, order = X.ort(path, feeds)
        local n = 0
        while true do
          local ref = read_tensor(("%s/%s/output_%d.pb"):format(dir, case, n))
          if not ref then break end
          n = n + 1
          local got = res[order[n]]
          local scale = tf.reduce_max(tf.abs(tf.cast(ref, tf.float64))):item()
          X.assert_close(ref, got, 0, 1e-4 * scale)
        end
        assert.are.equal(n, #order)
      end)
    end
  end
end)
