-- train_and_save.lua: trains a small Keras classifier on synthetic data,
-- saves it with tf.saved_model.save, and writes a few test inputs and the
-- outputs the trained model gives for them, for the C host examples/embed/serve.c
-- (which loads the directory with no Lua at all) to reproduce.
--   lua5.4 examples/embed/train_and_save.lua DIR
local tf = require("tf")
local dir = assert(arg[1], "usage: train_and_save.lua DIR")
local K = tf.keras

tf.random.set_seed(7)
local x = tf.random.normal({256, 4}, {seed = 1})
local y = tf.cast(tf.greater(tf.reduce_sum(x, 2), 0), tf.int32) + 1   -- class 2: the sum is positive (1-based)
local model = K.Sequential{
  K.layers.Dense{8, activation = "relu", input_shape = {4}, name = "hidden"},
  K.layers.Dense{2, name = "scores"},
}
model:compile{optimizer = K.optimizers.Adam{learning_rate = 0.05},
              loss = K.losses.SparseCategoricalCrossentropy{from_logits = true}}
model:fit(x, y, {epochs = 3, batch_size = 32, verbose = 0})
tf.saved_model.save(model, dir)

local test = tf.random.normal({5, 4}, {seed = 2})
local out = model(test)
local fi = assert(io.open(dir .. "/inputs.txt", "w"))
local fe = assert(io.open(dir .. "/expected.txt", "w"))
for i = 1, 5 do
  local row, pred = {}, {"scores"}
  for j = 1, 4 do row[j] = string.format("%.9g", test[i][j]:item()) end
  for j = 1, 2 do pred[j + 1] = string.format("%.9g", out[i][j]:item()) end
  fi:write(table.concat(row, " "), "\n")
  fe:write(table.concat(pred, " "), "\n")
end
fi:close()
fe:close()
print("saved " .. dir)
