-- ONNX import: run a model exported from PyTorch (docs/onnx.md).
-- examples/data/mlp.onnx is a small MLP (8 -> 16 -> 16 -> 4, random weights)
-- that PyTorch 1.13 exported at opset 17 with a dynamic batch axis; its
-- reference input and PyTorch's output are in examples/data/mlp_onnx/.
-- Regenerate them with
--   /usr/bin/python3 tools/onnx_models.py /tmp/m --models mlp --opsets 17 --seed 7
--   cp /tmp/m/mlp_op17.onnx examples/data/mlp.onnx; cp /tmp/m/mlp_op17/*.pb examples/data/mlp_onnx/
local tf = require("tf")
local dir = os.getenv("ONNX_EXAMPLE_DIR") or "examples/data"

-- the model becomes a concrete function: typed inputs, unknown batch
local f = tf.onnx.load(dir .. "/mlp.onnx")
print(f)
-- f.onnx lists the model's inputs and outputs: name, dtype, dims (nil: unknown)
local function dims(s)
  local t = {}
  for i = 1, s.n do t[i] = tostring(s[i]) end
  return "(" .. table.concat(t, ", ") .. ")"
end
for _, i in ipairs(f.onnx.inputs) do print("input", i.name, i.dtype, dims(i.shape)) end
for _, o in ipairs(f.onnx.outputs) do print("output", o.name, o.dtype, dims(o.shape)) end

-- run it on the input PyTorch saw and compare with PyTorch's output
local function read_tensor(path)
  local fh = assert(io.open(path, "rb"))
  local t = tf.core.internal.onnx_read_tensor(fh:read("a"))
  fh:close()
  return t
end
local x = read_tensor(dir .. "/mlp_onnx/input_0.pb")
local want = read_tensor(dir .. "/mlp_onnx/output_0.pb")
local y = f(x)
print("output shape", y.shape)
print(("max difference from PyTorch: %.2e"):format(tf.reduce_max(tf.abs(y - want)):item()))

-- any batch size works, and gradients flow through the imported graph
local xs = tf.random.normal({5, 8}, 0, 1, tf.float32, 1)
local tape = tf.GradientTape()
tape:watch(xs)
local loss = tape:record(function() return tf.reduce_sum(f(xs) ^ 2) end)
print("gradient shape", tape:gradient(loss, xs).shape)
