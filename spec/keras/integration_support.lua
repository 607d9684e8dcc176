-- spec/keras/integration_support.lua: the checks every functional model of
-- spec/keras/integration_*_spec.lua goes through, as a user combines layers:
-- it builds; predict equals the layers called eagerly in order; summary()
-- names every layer; from_config(get_config()) + set_weights predicts
-- bit-identically; a tf.train.Checkpoint save/restore round trip restores
-- the predictions exactly; fit makes the loss fall.
local tf = require("tf")
local assert = require("luassert")
local M = {}

local function tensors(x)
  if type(x) == "table" and getmetatable(x) == nil then return x end
  return {x}
end

--- The largest |a - b| over tensors (or arrays of tensors), in float64.
function M.max_diff(a, b)
  local ta, tb = tensors(a), tensors(b)
  assert.equal(#ta, #tb)
  local m = 0
  for i = 1, #ta do
    assert.same(ta[i].shape:as_list(), tb[i].shape:as_list())
    local d = tf.reduce_max(tf.abs(tf.cast(ta[i], tf.float64) - tf.cast(tb[i], tf.float64))):item()
    if d ~= d then return math.huge end
    m = math.max(m, d)
  end
  return m
end

local function identical(a, b)
  local ta, tb = tensors(a), tensors(b)
  for i = 1, #ta do
    -- equal as values, NaN-free
    if not tf.reduce_all(tf.equal(ta[i], tb[i])):item() then return false end
  end
  return true
end
M.identical = identical

local tmpdirs = 0
local function tmpdir()
  tmpdirs = tmpdirs + 1
  local d = os.tmpname()
  os.remove(d)
  d = d .. "_integ" .. tmpdirs
  assert(os.execute("mkdir -p " .. d))
  return d
end

--- Runs the checks on a built functional model.
-- spec = {model =, eager = function(x) -> output (the layers in order),
--   x = input(s), y = target(s), loss =, epochs = 8, optimizer =,
--   tolerance = 1e-5 (predict vs eager), fit = true, batch_size =,
--   custom_objects = }
function M.check(spec)
  local model, x = spec.model, spec.x
  -- predict vs the layers called eagerly in order
  local want = spec.eager(x)
  local got = model:predict(x, {verbose = 0})
  assert.is_true(M.max_diff(got, want) <= (spec.tolerance or 1e-5),
    "predict differs from the eager layers by " .. M.max_diff(got, want))
  local direct = model(x, {training = false})
  assert.is_true(M.max_diff(direct, want) <= (spec.tolerance or 1e-5))

  -- summary names every layer
  local lines = {}
  model:summary{print_fn = function(s) lines[#lines + 1] = s end}
  local text = table.concat(lines, "\n")
  for _, layer in ipairs(model.layers) do
    assert.truthy(text:find(layer.name:sub(1, 20), 1, true), "summary lacks " .. layer.name .. "\n" .. text)
  end
  assert.truthy(text:find("Total params: ", 1, true), text)

  -- from_config + set_weights: bit-identical predictions
  local copy = tf.keras.Model.from_config(model:get_config(), spec.custom_objects)
  copy:set_weights(model:get_weights())
  assert.is_true(identical(copy(x, {training = false}), direct), "from_config copy predicts differently")

  -- checkpoint round trip: save, train (or perturb), restore
  local dir = tmpdir()
  local ckpt = tf.train.Checkpoint{model = model}
  local path = ckpt:save(dir .. "/ckpt")

  if spec.fit ~= false then
    model:compile{optimizer = spec.optimizer or tf.keras.optimizers.Adam{learning_rate = spec.learning_rate or 0.01},
                  loss = spec.loss or "mse"}
    local h = model:fit(x, spec.y, {epochs = spec.epochs or 8, batch_size = spec.batch_size, verbose = 0,
                                    shuffle = false})
    local loss = h.history.loss
    assert.is_true(loss[#loss] < loss[1], ("loss did not fall: %s"):format(table.concat(loss, ", ")))
  else
    for _, v in ipairs(model.trainable_variables) do v:assign(v + 1) end
  end
  assert.is_false(identical(model(x, {training = false}), direct), "training changed nothing")
  ckpt:restore(path)
  assert.is_true(identical(model(x, {training = false}), direct), "checkpoint restore did not restore the predictions")
  os.execute("rm -rf " .. dir)
  return direct
end

return M
