--- examples/keras_save.lua: a whole model in one file (docs/keras_saving.md).
-- Trains a small functional classifier for 3 epochs and saves it to
-- model.keras; a second Lua process that has none of this script's model
-- code loads the file, checks that it predicts exactly as the saved model
-- did, and trains 2 more epochs; the losses equal those of an uninterrupted
-- 5-epoch run.
--
--   lua5.4 examples/keras_save.lua [dir]        (dir: where model.keras goes; default a temporary one)
local tf = require("tf")
local L = tf.keras.layers

local mode, dir = arg[1], arg[2]
if mode ~= "--resume" then dir = mode end

-- the data: the same in both processes (seeded)
local function data()
  tf.random.set_seed(42)
  local x = tf.random.normal({64, 6})
  local y = tf.argmax(tf.matmul(x, tf.random.normal({6, 3})), 2)     -- classes 1..3 (1-based)
  return x, y
end
local FIT = {batch_size = 16}

local function fmt(losses)
  local t = {}
  for i, l in ipairs(losses) do t[i] = string.format("%.6f", l) end
  return table.concat(t, " ")
end

if mode == "--resume" then
  -- a fresh process: the model comes only from the file
  local x, y = data()
  local model = tf.keras.models.load_model(dir .. "/model.keras")
  local saved = tf.io.parse_tensor(tf.io.read_file(dir .. "/predictions.bin"), tf.float32)
  print("loaded: " .. model.name .. ", " .. #model.layers .. " layers, optimizer " .. model.optimizer._name ..
    " at step " .. model.optimizer.iterations:value():item())
  print("predictions identical: " .. tostring(tf.reduce_all(tf.equal(model:predict(x, {verbose = 0}), saved)):item()))
  local h = model:fit(x, y, {epochs = 2, batch_size = FIT.batch_size, shuffle = false, verbose = 0})
  print("resumed epochs 4-5 loss: " .. fmt(h.history.loss))
  os.exit(0)
end

local function build()
  tf.keras.backend.clear_session()
  tf.random.set_seed(7)
  local inp = tf.keras.Input({6}, {name = "features"})
  local h = L.Dense{16, activation = "relu"}(inp)
  h = L.BatchNormalization{}(h)
  local out = L.Dense{3, activation = "softmax", name = "class"}(h)
  local model = tf.keras.Model{inputs = inp, outputs = out, name = "classifier"}
  local lr = tf.keras.optimizers.schedules.ExponentialDecay{initial_learning_rate = 0.05, decay_steps = 4,
                                                             decay_rate = 0.8}
  model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = lr}, loss = "sparse_categorical_crossentropy",
                metrics = {"accuracy"}}
  return model
end

local scratch = not dir
if scratch then
  local p = io.popen("mktemp -d /tmp/luatf-keras-save-XXXXXX")
  dir = p:read("l")
  p:close()
end
local x, y = data()

local straight = build()
local hs = straight:fit(x, y, {epochs = 5, batch_size = FIT.batch_size, shuffle = false, verbose = 0})
print("uninterrupted epochs 1-5 loss: " .. fmt(hs.history.loss))

local model = build()
local h = model:fit(x, y, {epochs = 3, batch_size = FIT.batch_size, shuffle = false, verbose = 0})
print("epochs 1-3 loss: " .. fmt(h.history.loss))
model:save(dir .. "/model.keras")
tf.io.write_file(dir .. "/predictions.bin", tf.io.serialize_tensor(model:predict(x, {verbose = 0})))
print("saved " .. dir .. "/model.keras")

-- the second process
local cmd = ("lua5.4 %s --resume %s"):format(arg[0], dir)
local p = io.popen(cmd)
io.write(p:read("a"))
local ok = p:close()
if scratch then os.execute("rm -rf '" .. dir .. "'") end
if not ok then error("the resuming process failed") end
