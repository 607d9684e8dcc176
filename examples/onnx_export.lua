-- examples/onnx_export.lua: train a small Keras model, write it as ONNX with
-- tf.onnx.save (docs/onnx_export.md), load the file back with tf.onnx.load
-- and check that both give the same predictions at a new batch size.
-- The file runs anywhere ONNX does (ONNX Runtime: tools/ort_run.js).
-- Run: . scripts/env.sh && lua5.4 examples/onnx_export.lua [model.onnx]
local tf = require("tf")
tf.random.set_seed(1)

-- y = 1 when the point lies inside the unit circle
local x = tf.random.uniform({256, 2}, {minval = -1.5, maxval = 1.5})
local y = tf.cast(tf.less(tf.reduce_sum(x * x, {axis = 2, keepdims = true}), 1), tf.float32)

local model = tf.keras.Sequential{
  tf.keras.layers.Dense{16, activation = "relu", input_shape = {2}},
  tf.keras.layers.BatchNormalization{},
  tf.keras.layers.Dropout{rate = 0.2},
  tf.keras.layers.Dense{1, activation = "sigmoid"},
}
model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.05}, loss = "binary_crossentropy",
              metrics = {"accuracy"}}
model:fit(x, y, {epochs = tonumber(os.getenv("ONNX_EXPORT_EPOCHS") or 60), batch_size = 32, verbose = 0})
local res = table.pack(model:evaluate(x, y, {verbose = 0}))
local acc = type(res[1]) == "table" and res[1][2] or res[2]
print(("trained: accuracy %.2f"):format(acc))

-- the model declares its input shape: no input_signature needed (batch unknown)
local path = arg[1] or os.tmpname()
local bytes = tf.onnx.save(model, path)
print(("wrote %d bytes"):format(#bytes))

-- back in through the importer: a concrete function with the batch unknown
local f = tf.onnx.load(path)
local spec = f.onnx.inputs[1]
local dims = {}
for d = 1, spec.shape.n do dims[d] = spec.shape[d] and tostring(spec.shape[d]) or "None" end
print(("input: %s (%s)"):format(spec.name, table.concat(dims, ", ")))
local probe = tf.constant({{0, 0}, {1.2, 1.2}, {0.3, -0.5}})
local a, b = model(probe), f(probe)
print(("max difference on a batch of 3: %.1e"):format(tf.reduce_max(tf.abs(a - b)):item()))
if not arg[1] then os.remove(path) end
