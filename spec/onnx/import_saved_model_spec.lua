-- An ONNX model imported with tf.onnx.load is an ordinary concrete function:
-- tf.saved_model saves it and loads it back, with no ONNX file and no Lua
-- source, computing the same outputs (docs/onnx.md, docs/saved_model.md).
-- Pending where tf.saved_model is not part of the tree.
local tf = require("tf")

local MLP = "examples/data/mlp.onnx"

describe("tf.onnx.load + tf.saved_model", function()
  it("saves an imported model and loads it back with the same outputs", function()
    if not tf.saved_model then pending("tf.saved_model is not in this tree") return end
    local f = tf.onnx.load(MLP)
    local dir = os.tmpname()
    os.remove(dir)
    tf.saved_model.save(f, dir, {signatures = f})
    local m = tf.saved_model.load(dir)
    local x = tf.random.normal({5, 8}, 0, 1, tf.float32, 21)
    assert.same(f(x):totable(), m(x):totable())
    -- the signature takes the model's input and output names
    assert.same({"input"}, m.signatures.serving_default.inputs)
    assert.same({"output"}, m.signatures.serving_default.outputs)
    assert.same(f(x):totable(), m.signatures.serving_default{input = x}.output:totable())
    os.execute("rm -rf '" .. dir .. "'")
  end)

  it("saves an imported recurrent model (fused LSTM ops) the same way", function()
    if not tf.saved_model then pending("tf.saved_model is not in this tree") return end
    local path = "/usr/share/libonnx-testdata/data/node/test_lstm_defaults/model.onnx"
    local fh = io.open(path, "rb")
    if not fh then pending("libonnx-testdata is not installed") return end
    fh:close()
    local f = tf.onnx.load(path)
    local dir = os.tmpname()
    os.remove(dir)
    tf.saved_model.save(f, dir, {signatures = f})
    local m = tf.saved_model.load(dir)
    local args = {}
    for i, s in ipairs(f.onnx.inputs) do
      local shp = {}
      for k = 1, s.shape.n do shp[k] = s.shape[k] end
      args[i] = tf.random.normal(shp, 0, 1, s.dtype, i)
    end
    local a, b = table.pack(f(table.unpack(args))), table.pack(m(table.unpack(args)))
    assert.equals(a.n, b.n)
    for k = 1, a.n do assert.same(a[k]:totable(), b[k]:totable()) end
    os.execute("rm -rf '" .. dir .. "'")
  end)
end)
