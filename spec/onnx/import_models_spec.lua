-- tf.onnx.load on models PyTorch 1.13 exports (tools/onnx_models.py, run
-- here into a temporary directory): each agrees with PyTorch's own outputs
-- within 1e-4 relative, at a batch size other than the one exported (the
-- batch axis is dynamic; the transformer's sequence length too). Skips
-- visibly without /usr/bin/python3 + torch.
-- The big convnets (resnet18, mobilenet_v2: about 20 s more to export and
-- run on this 2-core machine) are included unless LTF_ONNX_BIG=0.
local tf = require("tf")

local function have_torch()
  local p = io.popen("env -u LD_PRELOAD /usr/bin/python3 -c 'import torch, onnx' 2>/dev/null && echo yes")
  local out = p and p:read("a") or ""
  if p then p:close() end
  return out:match("yes") ~= nil
end

local function read_tensor(path)
  local f = assert(io.open(path, "rb"))
  local t = tf.core.internal.onnx_read_tensor(f:read("a"))
  f:close()
  return t
end

local function ins_shape_of(dir, case)
  return read_tensor(("%s/%s/input_0.pb"):format(dir, case)).shape:as_list()
end

local MODELS = {"mlp", "convnet", "lstm", "gru", "bilstm", "bigru", "transformer", "upsample"}
if os.getenv("LTF_ONNX_BIG") ~= "0" then
  MODELS[#MODELS + 1] = "resnet18"
  MODELS[#MODELS + 1] = "mobilenet_v2"
end

describe("tf.onnx.load on PyTorch exports", function()
  local dir
  local torch = have_torch()
  setup(function()
    if not torch then return end
    dir = os.tmpname()
    os.remove(dir)
    local ok = os.execute(("env -u LD_PRELOAD /usr/bin/python3 tools/onnx_models.py %s --models %s >/dev/null 2>&1")
      :format(dir, table.concat(MODELS, ",")))
    assert(ok, "tools/onnx_models.py failed")
  end)
  teardown(function()
    if dir then os.execute("rm -rf " .. dir) end
  end)

  for _, name in ipairs(MODELS) do
    for _, opset in ipairs({13, 17}) do
      local case = ("%s_op%d"):format(name, opset)
      it(case .. " agrees with PyTorch within 1e-4 relative (dynamic batch)", function()
        if not torch then pending("no /usr/bin/python3 with torch and onnx: PyTorch exports not checked") return end
        local f = tf.onnx.load(dir .. "/" .. case .. ".onnx")
        assert.equals("tf.ConcreteFunction", getmetatable(f).__name)
        -- the batch axis is unknown in the signature
        local spec = f.onnx.inputs[1]
        local batch_axis = (name:match("lstm$") or name:match("gru$")) and 2 or 1
        assert.is_nil(spec.shape[batch_axis])
        if name == "transformer" then assert.is_nil(spec.shape[2]) end   -- the sequence length too
        assert.equals(#ins_shape_of(dir, case), spec.shape.n)
        local ins, i = {}, 0
        while io.open(("%s/%s/input_%d.pb"):format(dir, case, i)) do
          ins[#ins + 1] = read_tensor(("%s/%s/input_%d.pb"):format(dir, case, i))
          i = i + 1
        end
        local outs = table.pack(f(table.unpack(ins)))
        local k = 0
        while io.open(("%s/%s/output_%d.pb"):format(dir, case, k)) do
          local ref = read_tensor(("%s/%s/output_%d.pb"):format(dir, case, k))
          local got = outs[k + 1]
          assert.same(ref.shape:as_list(), got.shape:as_list())
          local r64, g64 = tf.cast(ref, tf.float64), tf.cast(got, tf.float64)
          local err = tf.reduce_max(tf.abs(g64 - r64)):item()
          local scale = tf.reduce_max(tf.abs(r64)):item()
          assert.is_true(err <= 1e-4 * scale, ("%s output %d: max error %g, scale %g"):format(case, k, err, scale))
          k = k + 1
        end
        assert.equals(k, outs.n)
      end)
    end
  end
end)
