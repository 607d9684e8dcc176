-- saved_model.lua: train a small Keras classifier, save it with
-- tf.saved_model.save, then load it back as a program with none of this
-- file's model code would: predict through the serving signature, fine-tune
-- the loaded variables with a GradientTape, save the fine-tuned model again;
-- then a function with a custom gradient, whose gradient the SavedModel keeps.
--   lua5.4 examples/saved_model.lua [DIR]
local tf = require("tf")
local K = tf.keras
local dir = arg[1] or os.tmpname()
os.remove(dir)

-- data: is the sum of four features positive (class 2) or not (class 1)
tf.random.set_seed(1)
local x = tf.random.normal({512, 4}, {seed = 1})
local y = tf.cast(tf.greater(tf.reduce_sum(x, 2), 0), tf.int32) + 1
local test_x = tf.random.normal({128, 4}, {seed = 2})
local test_y = tf.cast(tf.greater(tf.reduce_sum(test_x, 2), 0), tf.int32) + 1

local model = K.Sequential{
  K.layers.Dense{16, activation = "relu", input_shape = {4}, name = "hidden"},
  K.layers.Dense{2, name = "scores"},
}
local loss_fn = K.losses.SparseCategoricalCrossentropy{from_logits = true}
model:compile{optimizer = K.optimizers.Adam{learning_rate = 0.02}, loss = loss_fn}
model:fit(x, y, {epochs = 3, batch_size = 64, verbose = 0})

local function accuracy(scores, labels)
  local pred = tf.cast(tf.argmax(scores, 2), tf.int32)   -- 1-based, as the labels
  return tf.reduce_mean(tf.cast(tf.equal(pred, labels), tf.float32)):item()
end
print(string.format("trained: test accuracy %.3f", accuracy(model(test_x), test_y)))

tf.saved_model.save(model, dir)
print("saved to " .. dir)

-- what a program without the model's code does
local m = tf.saved_model.load(dir)
local serve = m.signatures.serving_default
print(string.format("signature serving_default: inputs %s, outputs %s", table.concat(serve.inputs, ", "),
  table.concat(serve.outputs, ", ")))
local scores = serve{hidden_input = test_x}.scores
print(string.format("loaded: test accuracy %.3f (same scores as the original: %s)", accuracy(scores, test_y),
  tostring(tf.reduce_max(tf.abs(scores - model(test_x))):item() == 0)))

-- fine-tune the loaded variables
local opt = K.optimizers.SGD{learning_rate = 0.1}
local first, last
for step = 1, 50 do
  local tape = tf.GradientTape()
  local loss = tape:record(function() return loss_fn(y, m(x)) end)
  local grads = tape:gradient(loss, m.trainable_variables)
  local pairs_ = {}
  for i, g in ipairs(grads) do pairs_[i] = {g, m.trainable_variables[i]} end
  opt:apply_gradients(pairs_)
  if step == 1 then first = loss:item() end
  last = loss:item()
end
print(string.format("fine-tuned the loaded model: loss %.4f -> %.4f, test accuracy %.3f", first, last,
  accuracy(m(test_x), test_y)))

tf.saved_model.save(m, dir .. "/tuned")
local again = tf.saved_model.load(dir .. "/tuned")
print(string.format("saved again and reloaded: test accuracy %.3f", accuracy(again(test_x), test_y)))
-- a custom gradient travels with the graph: the loaded function clips the
-- gradient flowing through clip_grad to [-1, 1] with no Lua closure behind it
local clip_grad = tf.custom_gradient(function(v)
  return tf.identity(v), function(dy) return tf.clip_by_value(dy, -1, 1) end
end)
local module = {scale = tf.Variable(3.0)}
module.f = tf.fn(function(v) return clip_grad(v * module.scale) * 10 end,
  {input_signature = {tf.TensorSpec({}, tf.float32)}})
tf.saved_model.save(module, dir .. "/clipped")
local loaded = tf.saved_model.load(dir .. "/clipped")
local tape = tf.GradientTape()
local out = tape:record(function() return loaded.f(tf.constant(2.0)) end)
print(string.format("loaded custom gradient: d out / d scale = %.1f (10 clipped to 1, times v = 2)",
  tape:gradient(out, loaded.variables[1]):item()))
os.execute("rm -rf '" .. dir .. "'")
