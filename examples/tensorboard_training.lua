--- Training visible in TensorBoard: a small regression model trained with
-- model:fit and the TensorBoard callback (train/ and validation/ runs: epoch
-- losses and metrics, batch losses, weight histograms, the train step's
-- graph), then a custom training loop that logs with tf.summary itself
-- inside a tf.fn step (scalars, a histogram of the predictions, the step a
-- tf.Variable) and exports the step's graph with trace_on / trace_export.
--   lua5.4 examples/tensorboard_training.lua [logdir]
--   tensorboard --logdir <logdir>          (on a machine that has TensorBoard)
-- TB_EPOCHS and TB_STEPS shrink the run (the tests use a reduced one).
local tf = require("tf")
local L = tf.keras.layers

local LOGDIR = arg[1] or "logs/tensorboard_example"
local EPOCHS = tonumber(os.getenv("TB_EPOCHS") or "") or 10
local STEPS = tonumber(os.getenv("TB_STEPS") or "") or 200

-- y = 2 x1 - 3 x2 + 0.5 x3 + 1 + noise
tf.random.set_seed(7)
local X = tf.random.normal({256, 3}, {seed = 1})
local Y = tf.matmul(X, tf.constant({{2.0}, {-3.0}, {0.5}})) + 1 + tf.random.normal({256, 1}, {stddev = 0.1, seed = 2})

-- {==== 1. model:fit with the TensorBoard callback
local model = tf.keras.Sequential{L.Dense{16, activation = "relu", name = "hidden"}, L.Dense{1, name = "out"}}
model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.01}, loss = "mse", metrics = {"mae"}}
local history = model:fit(X, Y, {
  epochs = EPOCHS, batch_size = 32, validation_split = 0.25, verbose = 0,
  callbacks = {tf.keras.callbacks.TensorBoard{log_dir = LOGDIR .. "/fit", histogram_freq = 1, update_freq = 4}},
})
print(("fit: loss %.4f -> %.4f, val_loss %.4f"):format(history.history.loss[1], history.history.loss[EPOCHS],
  history.history.val_loss[EPOCHS]))
-- }====

-- {==== 2. a custom loop writing its own summaries
local writer = tf.summary.create_file_writer(LOGDIR .. "/custom")
local step = tf.Variable(tf.constant(0, tf.int64))
tf.summary.experimental.set_step(step)
local W = tf.Variable(tf.zeros({3, 1}))
local b = tf.Variable(tf.zeros({1}))
local train_step = tf.fn(function(x, y)
  local tape = tf.GradientTape()
  local pred
  local loss = tape:record(function()
    pred = tf.matmul(x, W) + b
    return tf.reduce_mean(tf.square(pred - y))
  end)
  local gW, gb = table.unpack(tape:gradient(loss, {W, b}))
  W:assign_sub(gW * 0.05)
  b:assign_sub(gb * 0.05)
  step:assign_add(tf.constant(1, tf.int64))
  tf.summary.scalar("loss", loss)                         -- written at every call: part of the traced graph
  tf.summary.record_if(tf.equal(step % 10, 0), function()  -- a tensor condition, checked at every call
    tf.summary.histogram("predictions", pred)
  end)
  return loss
end)

local loss
writer:as_default(function()
  tf.summary.trace_on({graph = true})
  loss = train_step(X, Y)
  tf.summary.trace_export("train_step", {step = 0})
  for _ = 2, STEPS do loss = train_step(X, Y) end
  tf.summary.text("notes", ("trained %d steps, final loss %.4f"):format(STEPS, loss:numpy()), {step = STEPS})
end)
writer:close()
print(("custom loop: %d steps, loss %.4f, W = {%.2f, %.2f, %.2f}, b = %.2f"):format(STEPS, loss:numpy(),
  W:numpy()[1][1], W:numpy()[2][1], W:numpy()[3][1], b:numpy()[1]))
-- }====
print("event files under " .. LOGDIR .. " (view: tensorboard --logdir " .. LOGDIR .. ")")
