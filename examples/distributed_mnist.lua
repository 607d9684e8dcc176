-- examples/distributed_mnist.lua: the MNIST convnet (examples/mnist_cnn.lua)
-- trained with compile/fit on several processes:
--
--   mpirun -np 2 lua5.4 examples/distributed_mnist.lua
--   lua5.4 examples/distributed_mnist.lua          (one process: same code)
--
-- The model is built and compiled in a MultiWorkerMirroredStrategy's
-- scope: its variables start from the chief's values and stay identical on
-- every worker; fit splits each global batch (CNN_BATCH, default 64) over
-- the workers and averages their gradients, so N workers train the same
-- model as one process with the same global batch. Only the chief (task 0)
-- prints progress. Settings (environment): CNN_EPOCHS (default 3),
-- CNN_TRAIN (training samples used; default all), CNN_BATCH, MNIST_DATA.
local tf = require("tf")

local epochs = tonumber(os.getenv("CNN_EPOCHS") or "3")
local n_train = tonumber(os.getenv("CNN_TRAIN") or "0")
local global_batch = tonumber(os.getenv("CNN_BATCH") or "64")

local strategy = tf.distribute.MultiWorkerMirroredStrategy()
local chief = strategy.cluster_resolver.task_id == 0
local function say(...) if chief then print(...) end end
say(("%d worker(s), global batch %d"):format(strategy.num_replicas_in_sync, global_batch))

tf.random.set_seed(1)
local train, test = tf.keras.datasets.mnist.load_data(os.getenv("MNIST_DATA"))
local function prepare(images, labels, n)
  if n and n > 0 and n < images.shape[1] then images, labels = images[{{1, n}}], labels[{{1, n}}] end
  -- pixels in [0, 1] with a channel axis; digit d is class d + 1 (1-based)
  return tf.expand_dims(tf.cast(images, tf.float32) / 255, -1), tf.cast(labels, tf.int64) + 1
end
local x_train, y_train = prepare(train[1], train[2], n_train)
local x_test, y_test = prepare(test[1], test[2])

local layers = tf.keras.layers
local model
do
  local _ <close> = strategy:scope()
  model = tf.keras.Sequential{
    layers.Input{shape = {28, 28, 1}},
    layers.Conv2D{32, {3, 3}, activation = "relu"},
    layers.MaxPooling2D{pool_size = {2, 2}},
    layers.Conv2D{64, {3, 3}, activation = "relu"},
    layers.MaxPooling2D{pool_size = {2, 2}},
    layers.Flatten{},
    layers.Dropout{rate = 0.5},
    layers.Dense{10, activation = "softmax"},
  }
  model:compile{loss = "sparse_categorical_crossentropy", optimizer = "adam", metrics = {"accuracy"}}
end

local t0 = tf.timestamp()
model:fit(x_train, y_train, {batch_size = global_batch, epochs = epochs, verbose = 2})
local seconds = (tf.timestamp() - t0):item()

local loss, accuracy = model:evaluate(x_test, y_test, {batch_size = 256, verbose = 0})
say(("Test loss: %.4f"):format(loss))
say(("Test accuracy: %.4f"):format(accuracy))
say(("training: %.1f s for %d epochs"):format(seconds, epochs))
