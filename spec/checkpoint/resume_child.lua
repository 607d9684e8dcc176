-- A training run that may be cut in two by a checkpoint, for
-- spec/checkpoint/resume_spec.lua (run as a child process: the resumed half
-- starts in a fresh process, as after a kill).
--   lua5.4 resume_child.lua OPTIMIZER MODE PHASE DIR
-- OPTIMIZER: a key of `configs`; MODE: eager | fn | fit; PHASE: full (8
-- steps), save (3 steps, then CheckpointManager:save) or resume (restore,
-- then 5 steps). Prints every variable (model, slots, iterations) in hex
-- floats, so runs compare bit for bit.
local tf = require("tf")
local opt_name, mode, phase, dir = arg[1], arg[2], arg[3], arg[4]

local configs = {
  sgd_momentum = function() return tf.keras.optimizers.SGD{learning_rate = 0.05, momentum = 0.9} end,
  sgd_nesterov = function() return tf.keras.optimizers.SGD{learning_rate = 0.05, momentum = 0.9, nesterov = true} end,
  adam = function() return tf.keras.optimizers.Adam{learning_rate = 0.1} end,
  adam_amsgrad = function() return tf.keras.optimizers.Adam{learning_rate = 0.1, amsgrad = true} end,
  adamw = function() return tf.keras.optimizers.AdamW{learning_rate = 0.1, weight_decay = 0.01} end,
  rmsprop = function() return tf.keras.optimizers.RMSprop{learning_rate = 0.05, momentum = 0.5, centered = true} end,
  adagrad = function() return tf.keras.optimizers.Adagrad{learning_rate = 0.1} end,
  nadam = function() return tf.keras.optimizers.Nadam{learning_rate = 0.1} end,
  adamax = function() return tf.keras.optimizers.Adamax{learning_rate = 0.1} end,
  adadelta = function() return tf.keras.optimizers.Adadelta{learning_rate = 1.0} end,
  ftrl = function()
    return tf.keras.optimizers.Ftrl{learning_rate = 0.1, l1_regularization_strength = 0.01,
      l2_regularization_strength = 0.01, l2_shrinkage_regularization_strength = 0.01, beta = 0.1}
  end,
  lion = function() return tf.keras.optimizers.Lion{learning_rate = 0.01} end,
}

local model = tf.keras.Sequential{
  tf.keras.layers.Dense{4, activation = "tanh", kernel_initializer = "ones"},
  tf.keras.layers.Dense{2, kernel_initializer = "ones"},
}
model:build({-1, 3})
local opt = configs[opt_name]()
local x = tf.constant({{1, 2, 3}, {3, 2, 1}, {0.5, 0.1, 0.2}, {-1, 0, 1}}, tf.float32)
local y = tf.constant({{1, 0}, {0, 1}, {1, 1}, {0, 0}}, tf.float32)

local function step()
  local tape = tf.GradientTape()
  local loss = tape:record(function() return tf.reduce_mean(tf.square(model(x) - y)) end)
  opt:apply_gradients(tape:gradient(loss, model.trainable_variables), model.trainable_variables)
end
local traced = tf.fn(step)

local function train(n)
  if mode == "fit" then
    model:compile{optimizer = opt, loss = "mse"}
    model:fit(x, y, {epochs = n, batch_size = 4, shuffle = false, verbose = 0})
  else
    for _ = 1, n do if mode == "fn" then traced() else step() end end
  end
end

local ckpt = tf.train.Checkpoint{model = model, optimizer = opt}
local manager = tf.train.CheckpointManager(ckpt, dir, {max_to_keep = 1})
local status
if phase == "full" then
  train(8)
elseif phase == "save" then
  train(3)
  manager:save()
else
  status = ckpt:restore(manager.latest_checkpoint)
  train(5)
end

local out = {}
local function put(name, v)
  local flat = tf.reshape(v, {-1}):totable()
  for i, e in ipairs(flat) do flat[i] = string.format("%a", e) end
  out[#out + 1] = name .. " " .. table.concat(flat, " ")
end
for i, v in ipairs(model.trainable_variables) do
  put("var" .. i, v:value())
  for _, s in ipairs(opt:slot_names()) do
    local ok, slot = pcall(opt.get_slot, opt, v, s)
    if ok then put("var" .. i .. "/" .. s, slot:value()) end
  end
end
if opt.u_product then put("u_product", opt.u_product:value()) end
out[#out + 1] = "iterations " .. tostring(opt.iterations:value():item())
if status then
  out[#out + 1] = "pending " .. #status:report_table().pending
  status:assert_consumed()
  out[#out + 1] = "consumed"
end
io.write(table.concat(out, "\n"), "\n")
