-- bench/saved_model.lua: tf.saved_model.load of the MNIST convnet of
-- examples/mnist_cnn.lua (Conv2D 32, MaxPooling, Conv2D 64, MaxPooling,
-- Flatten, Dropout, Dense 10: 34,826 parameters), wall clock, median of RUNS
-- loads in one process (the first, with a cold op cache, shown apart), and a
-- call of the loaded serving signature on one image. Target (issue 22): under 20 ms.
--   lua5.4 bench/saved_model.lua [DIR] [RUNS]
local tf = require("tf")
local now = tf.core.monotonic
local dir = arg[1] or "/tmp/luatf-bench-saved-model"
local runs = tonumber(arg[2] or "20")
local K, layers = tf.keras, tf.keras.layers

local model = K.Sequential{
  layers.Conv2D{32, {3, 3}, activation = "relu"},
  layers.MaxPooling2D{pool_size = {2, 2}},
  layers.Conv2D{64, {3, 3}, activation = "relu"},
  layers.MaxPooling2D{pool_size = {2, 2}},
  layers.Flatten{},
  layers.Dropout{rate = 0.5},
  layers.Dense{10, activation = "softmax"},
}
local x = tf.random.normal({1, 28, 28, 1}, {seed = 1})
local y = model(x)
os.execute("rm -rf '" .. dir .. "'")
local t0 = now()
tf.saved_model.save(model, dir)
local save_s = now() - t0
local nparams = 0
for _, v in ipairs(model.trainable_variables) do nparams = nparams + v:value():size() end

local times = {}
local m
for r = 1, runs + 1 do
  collectgarbage()
  local t = now()
  m = tf.saved_model.load(dir)
  times[r] = now() - t
end
local first = table.remove(times, 1)
table.sort(times)
local med = times[(#times + 1) // 2]
local out = m.signatures.serving_default{conv2d_input = x}
local key = next(out)
local diff = tf.reduce_max(tf.abs(out[key] - y)):item()
local t = now()
for _ = 1, 100 do m(x) end
local call_us = (now() - t) / 100 * 1e6
local f = io.open(dir .. "/saved_model.ltf", "rb")
local gbytes = f:seek("end")
f:close()
print(string.format("MNIST convnet, %d parameters; saved_model.ltf %d bytes", nparams, gbytes))
print(string.format("tf.saved_model.save                 %8.2f ms", save_s * 1e3))
print(string.format("tf.saved_model.load (first)         %8.2f ms", first * 1e3))
print(string.format("tf.saved_model.load (median of %d)  %8.2f ms   target < 20 ms", runs, med * 1e3))
print(string.format("loaded model(x), one 28x28 image    %8.1f us   (max |difference| from the original %.1g)",
  call_us, diff))
print(string.format("RESULT saved_model_load_ms %.3f", med * 1e3))
