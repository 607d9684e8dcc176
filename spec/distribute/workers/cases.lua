-- spec/distribute/workers/cases.lua: the training runs the strategy specs
-- compare: the same code runs in one process (the default strategy: the
-- reference) and in every worker of an MPI job (MultiWorkerMirroredStrategy).
-- Data come from a seeded LCG, so every process sees the same global batches.
local tf = require("tf")
local M = {}

M.STEPS = 20
M.BATCH = 12          -- the global batch: a multiple of 2 and of 3

local function lcg(seed)
  local s = seed
  return function()
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 1073741824 - 1
  end
end

--- The data of a case: n examples, features of 'shape', 'classes' labels (1-based).
function M.data(kind, n)
  local r = lcg(kind == "mlp" and 7 or 11)
  local dims = kind == "mlp" and {n, 8} or {n, 12, 12, 1}
  local count = 1
  for _, d in ipairs(dims) do count = count * d end
  local xs = {}
  for i = 1, count do xs[i] = r() end
  local ys = {}
  for i = 1, n do ys[i] = math.floor((r() + 1) * 2.5) % 5 + 1 end
  return tf.reshape(tf.constant(xs, tf.float32), dims), tf.constant(ys, tf.int64)
end

--- The model of a case (MLP, or the MNIST convnet shape without dropout:
-- dropout's masks are random per worker), built with fixed initial values.
function M.model(kind)
  local L = tf.keras.layers
  tf.random.set_seed(3)
  if kind == "mlp" then
    return tf.keras.Sequential{L.Input{shape = {8}}, L.Dense{16, activation = "relu"}, L.Dense{5}}
  end
  return tf.keras.Sequential{
    L.Input{shape = {12, 12, 1}},
    L.Conv2D{4, {3, 3}, activation = "relu"},
    L.MaxPooling2D{pool_size = {2, 2}},
    L.Conv2D{8, {3, 3}, activation = "relu"},
    L.Flatten{},
    L.Dense{5},
  }
end

function M.optimizer(name)
  if name == "sgd" then return tf.keras.optimizers.SGD{learning_rate = 0.1} end
  return tf.keras.optimizers.Adam{learning_rate = 0.01}
end

--- Train a custom loop (strategy:run over a distributed dataset, tf.fn
-- step) on global batches first..last (default 1..M.STEPS); 'each'
-- (optional) is called after every step. 'o' may hold a model and an
-- optimizer to continue (o.model, o.opt). Returns the model, the optimizer
-- and the number of traces of the step.
function M.custom(strategy, kind, opt_name, each, o)
  o = o or {}
  local first, last = o.first or 1, o.last or M.STEPS
  local model, opt = o.model, o.opt
  if not model then
    strategy:scope(function()
      model = M.model(kind)
      opt = M.optimizer(opt_name)
    end)
  end
  local loss_fn = tf.keras.losses.SparseCategoricalCrossentropy{from_logits = true}
  local x, y = M.data(kind, M.STEPS * M.BATCH)
  local ds = tf.data.Dataset.from_tensor_slices({x, y}):batch(M.BATCH):skip(first - 1):take(last - first + 1)
  local dist = strategy:experimental_distribute_dataset(ds)
  local step = tf.fn(function(xb, yb)
    local function replica(a, b)
      local tape = tf.GradientTape()
      local loss = tape:record(function() return loss_fn(b, model(a, {training = true})) end)
      local vars = model.trainable_variables
      opt:apply_gradients(tape:gradient(loss, vars), vars)
      return loss
    end
    local l = strategy:run(replica, {args = {xb, yb}})
    return strategy:reduce("MEAN", l)
  end)
  local i = 0
  for xb, yb in dist:iter() do
    step(xb, yb)
    i = i + 1
    if each then each(i, model) end
  end
  return model, opt, step:experimental_get_tracing_count()
end

--- Train with compile/fit (global batch M.BATCH, no shuffle) for M.STEPS steps.
-- 'extra' rows past M.STEPS global batches make a last partial batch;
-- extra = "dataset": fit reads the global batches from a tf.data.Dataset.
function M.fit(strategy, kind, opt_name, extra)
  local model
  strategy:scope(function()
    model = M.model(kind)
    model:compile{optimizer = M.optimizer(opt_name),
                  loss = tf.keras.losses.SparseCategoricalCrossentropy{from_logits = true}, metrics = {"accuracy"}}
  end)
  local x, y = M.data(kind, M.STEPS * M.BATCH + (math.type(extra) == "integer" and extra or 0))
  local h
  -- the rows this worker trained on (the loss tracker's count before the
  -- epoch's end sums it over the workers)
  local rows = 0
  local cb = tf.keras.callbacks.LambdaCallback{on_train_batch_end = function()
    rows = rawget(model, "_compile_state").loss_tracker.count:item()
  end}
  if extra == "dataset" then   -- global batches from a dataset
    x, y = M.data(kind, M.STEPS * M.BATCH)
    h = model:fit(tf.data.Dataset.from_tensor_slices({x, y}):batch(M.BATCH), {epochs = 1, verbose = 0,
                  callbacks = {cb}})
  else
    h = model:fit(x, y, {batch_size = M.BATCH, epochs = 1, shuffle = false, verbose = 0, callbacks = {cb}})
  end
  -- evaluate: 50 examples in batches of 7 (the last has one row: some workers get none)
  local xe, ye = M.data(kind, 50)
  local eloss, eacc = model:evaluate(xe, ye, {batch_size = 7, verbose = 0})
  return model, h.history.loss[1], rows, {eloss, eacc}
end

--- The model's weights as flat Lua arrays.
function M.weights(model)
  local out = {}
  for i, v in ipairs(model.trainable_variables) do out[i] = tf.reshape(v:value(), {-1}):totable() end
  return out
end

return M
