-- examples/distributed_mnist_custom.lua: the MNIST convnet trained by a
-- custom loop under MultiWorkerMirroredStrategy (TensorFlow's "custom
-- training loop" tutorial):
--
--   mpirun -np 2 lua5.4 examples/distributed_mnist_custom.lua
--
-- strategy:experimental_distribute_dataset gives each worker its part of
-- every global batch; the step (one tf.fn) runs the replica function with
-- strategy:run, where the optimizer's apply_gradients averages the
-- gradients over the workers; strategy:reduce sums the loss for the log.
-- The chief saves a checkpoint each epoch (CKPT_DIR, default
-- /tmp/distributed_mnist_ckpt); a restarted job, with any number of
-- workers, resumes from it. Settings: CNN_EPOCHS (default 2), CNN_TRAIN,
-- CNN_BATCH (default 64), MNIST_DATA, CKPT_DIR.
local tf = require("tf")

local epochs = tonumber(os.getenv("CNN_EPOCHS") or "2")
local n_train = tonumber(os.getenv("CNN_TRAIN") or "0")
local global_batch = tonumber(os.getenv("CNN_BATCH") or "64")
local ckpt_dir = os.getenv("CKPT_DIR") or "/tmp/distributed_mnist_ckpt"

local strategy = tf.distribute.MultiWorkerMirroredStrategy()
local chief = strategy.cluster_resolver.task_id == 0
local function say(...) if chief then print(...) end end

tf.random.set_seed(1)
local train, test = tf.keras.datasets.mnist.load_data(os.getenv("MNIST_DATA"))
local function prepare(images, labels, n)
  if n and n > 0 and n < images.shape[1] then images, labels = images[{{1, n}}], labels[{{1, n}}] end
  return tf.expand_dims(tf.cast(images, tf.float32) / 255, -1), tf.cast(labels, tf.int64) + 1
end
local x_train, y_train = prepare(train[1], train[2], n_train)
local x_test, y_test = prepare(test[1], test[2])

-- global batches; a fixed shuffle seed: every worker must see the same order
local ds = tf.data.Dataset.from_tensor_slices({x_train, y_train}):shuffle(10000, 7):batch(global_batch)
local dist = strategy:experimental_distribute_dataset(ds)

local layers = tf.keras.layers
local model, optimizer, ckpt, manager
strategy:scope(function()
  model = tf.keras.Sequential{
    layers.Input{shape = {28, 28, 1}},
    layers.Conv2D{32, {3, 3}, activation = "relu"},
    layers.MaxPooling2D{pool_size = {2, 2}},
    layers.Conv2D{64, {3, 3}, activation = "relu"},
    layers.MaxPooling2D{pool_size = {2, 2}},
    layers.Flatten{},
    layers.Dense{10},
  }
  optimizer = tf.keras.optimizers.Adam{learning_rate = 1e-3}
  ckpt = tf.train.Checkpoint{model = model, optimizer = optimizer}
  manager = tf.train.CheckpointManager(ckpt, ckpt_dir, {max_to_keep = 2})
end)
-- every worker restores (only the chief writes)
if manager:restore_or_initialize() then say("resumed from " .. manager.latest_checkpoint) end

local loss_fn = tf.keras.losses.SparseCategoricalCrossentropy{from_logits = true}

local train_step = tf.fn(function(x, y)
  local function step(xb, yb)
    local tape = tf.GradientTape()
    local loss = tape:record(function() return loss_fn(yb, model(xb, {training = true})) end)
    local vars = model.trainable_variables
    optimizer:apply_gradients(tape:gradient(loss, vars), vars)   -- gradients averaged over the workers
    return loss
  end
  local per_replica = strategy:run(step, {args = {x, y}})
  return strategy:reduce("MEAN", per_replica)
end)

local first = ckpt.save_counter:item() + 1
for epoch = first, epochs do
  local total, steps = 0, 0
  for x, y in dist:iter() do
    total = total + train_step(x, y):item()
    steps = steps + 1
  end
  local path = manager:save()
  say(("epoch %d: loss %.4f (%d steps), saved %s"):format(epoch, total / steps, steps, path))
end

local logits = model(x_test, {training = false})
local accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, -1), y_test), tf.float32)):item()
say(("Test accuracy: %.4f"):format(accuracy))
