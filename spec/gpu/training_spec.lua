-- Training on "the GPU" (a real one, or the simulated one with
-- LTF_GPU_SIM=1): the fused optimizer updates run as device kernels on
-- variables that live there (the engine makes their values writable on the
-- device, and moves slots beside their variable), with the CPU's values;
-- a Keras model fits under tf.device("/gpu:0") as it does on the host.
local tf = require("tf")

local gpu = require("gpu_support")
local GPU, have_gpu, gpu_it = gpu.GPU, gpu.have_gpu, gpu.make_it(it, function(why) pending(why) end)
local K = tf.keras.optimizers


-- fit(scope) -> per-epoch losses, first weight: the same fit on the CPU and
-- on the GPU agree, the loss falls, the weights live on the GPU, each op of
-- 'ops' ran a device kernel, and no op ran emulated or fell back to the host.
local function fit_on_both(fit, ops)
  local closs, cw = fit("/cpu:0")
  tf.config.experimental.reset_device_kernel_stats()
  local gloss, gw = fit("/gpu:0")
  assert.equal(GPU, gw.device)
  for e = 1, #closs do assert.near(closs[e], gloss[e], 1e-4) end
  assert.tensor_near(cw, gw:cpu(), {atol = 1e-4})
  assert.is_true(gloss[#gloss] < gloss[1])
  local stats = tf.config.experimental.get_device_kernel_stats()
  for _, op in ipairs(ops) do
    assert.is_table(stats[op], op .. " did not run on the GPU")
    assert.is_true(stats[op].device > 0, op .. " ran no device kernel")
  end
  for op, s in pairs(stats) do
    assert.equal(0, s.emulated, op .. " ran without a device body (emulated)")
    assert.equal(0, s.host, op .. " fell back to the host")
  end
end

local G = {{0.5, -1.0, 2.0, 0.25}, {-0.25, 0.75, 1.5, -2.0}, {1.0, 0.1, -3.0, 0.5}}   -- three steps' gradients
local X0 = {1.0, -2.0, 0.5, 3.0}

-- Three steps of 'make()' on a variable of 'dtype' in device scope 'scope';
-- the variable's value after each step (on the host) and where it lives.
local function run(make, dtype, scope)
  return tf.device(scope, function()
    local v = tf.Variable(tf.constant(X0, dtype), {name = "w"})
    local opt = make()
    local out = {}
    for s = 1, #G do
      opt:apply_gradients({{tf.constant(G[s], dtype), v}})
      out[s] = v:value()
    end
    return out, v:value().device
  end)
end

local optimizers = {
  {"apply_sgd", "SGD", function() return K.SGD{learning_rate = 0.1} end},
  {"apply_momentum", "SGD with momentum", function() return K.SGD{learning_rate = 0.1, momentum = 0.9} end},
  {"apply_momentum", "SGD with Nesterov momentum",
   function() return K.SGD{learning_rate = 0.1, momentum = 0.5, nesterov = true} end},
  {"apply_adam", "Adam", function() return K.Adam{learning_rate = 0.05} end},
  {"apply_adam", "Adam with amsgrad", function() return K.Adam{learning_rate = 0.05, amsgrad = true} end},
  {"apply_adam", "AdamW", function() return K.AdamW{learning_rate = 0.05, weight_decay = 0.01} end},
  {"apply_rmsprop", "RMSprop centered with momentum",
   function() return K.RMSprop{learning_rate = 0.01, momentum = 0.5, centered = true} end},
  {"apply_rmsprop", "RMSprop", function() return K.RMSprop{learning_rate = 0.01} end},
  {"apply_adagrad", "Adagrad", function() return K.Adagrad{learning_rate = 0.1} end},
}

describe("optimizer steps on GPU variables", function()
  for _, o in ipairs(optimizers) do
    local op, name, make = o[1], o[2], o[3]
    gpu_it(name .. " runs " .. op .. " on the GPU with the CPU's values (float32 and float64)", function()
      for _, case in ipairs({{tf.float32, 1e-6}, {tf.float64, 1e-12}}) do
        local dtype, tol = case[1], case[2]
        tf.config.experimental.reset_device_kernel_stats()
        local c = run(make, dtype, "/cpu:0")
        local g, where = run(make, dtype, "/gpu:0")
        assert.equal(GPU, where)
        for s = 1, #G do
          assert.equal(GPU, g[s].device)
          assert.tensor_near(c[s], g[s]:cpu(), {atol = tol, rtol = tol})
        end
        local st = tf.config.experimental.get_device_kernel_stats()[op]
        assert.is_table(st, op .. " did not run on the GPU")
        assert.equal(#G, st.device)
        assert.equal(0, st.host)
      end
    end)
  end

  gpu_it("leaves a value read before the step unchanged (copy-on-write on the device)", function()
    local v = tf.device("/gpu:0", function() return tf.Variable({1.0, 2.0}) end)
    local before = v:value()
    K.SGD{learning_rate = 1}:apply_gradients({{tf.constant({1.0, 1.0}), v}})
    assert.same({1, 2}, before:totable())
    assert.same({0, 1}, v:value():totable())
    assert.equal(GPU, v:value().device)
  end)

  gpu_it("moves a slot made on the host beside its GPU variable", function()
    local v = tf.device("/gpu:0", function() return tf.Variable({1.0, 2.0}) end)
    local opt = K.SGD{learning_rate = 0.1, momentum = 0.9}
    opt:apply_gradients({{tf.constant({1.0, 1.0}), v}})   -- slots made outside any scope
    opt:apply_gradients({{tf.constant({1.0, 1.0}), v}})
    assert.tensor_near({1 - 0.1 - 0.19, 2 - 0.1 - 0.19}, v:value():cpu(), {atol = 1e-6})
  end)

  gpu_it("refuses a gradient of another shape, naming the op and both shapes", function()
    local v = tf.device("/gpu:0", function() return tf.Variable({1.0, 2.0}) end)
    local msg = "apply_sgd: shape mismatch: variable 'Variable' has shape (2,), the value has shape (3,)"
    assert.tf_error("ValueError", msg, function()
      tf.core.apply_sgd(v._handle, tf.constant({1.0, 2.0, 3.0}):gpu(), tf.constant(0.1))
    end)
  end)
end)

-- Initial weights drawn on the host, so that the CPU and the GPU fits start
-- from the same values: the device's random ops draw from another generator
-- (Philox4x32-10) than the CPU's and give other values for the same seed
-- (docs/cuda.md, "Random ops").
local function host_glorot(shape, dtype)
  return tf.device("/cpu:0", function() return tf.keras.initializers.GlorotUniform()(shape, dtype) end)
end

describe("Keras on the GPU", function()
  gpu_it("fits a small model under tf.device('/gpu:0') like on the CPU, every op on device kernels", function()
    local function fit(scope)
      return tf.device(scope, function()
        tf.random.set_seed(7)
        local model = tf.keras.Sequential{tf.keras.layers.Dense{8, activation = "relu", kernel_initializer = host_glorot},
                                          tf.keras.layers.Dense{3, kernel_initializer = host_glorot}}
        model:compile{optimizer = K.Adam{0.02},
                      loss = tf.keras.losses.SparseCategoricalCrossentropy{from_logits = true},
                      metrics = {"accuracy"}}
        local xs, ys = {}, {}
        for i = 1, 60 do
          local k = i % 3
          xs[i] = {math.cos(i) * 0.3 + k, math.sin(i) * 0.3 - k}
          ys[i] = k + 1
        end
        local x, y = tf.constant(xs, tf.float32), tf.constant(ys, tf.int32)
        local h = model:fit(x, y, {epochs = 5, batch_size = 20, verbose = 0, shuffle = false})
        return h.history.loss, model.trainable_variables[1]:value()
      end)
    end
    fit_on_both(fit, {"matmul", "apply_adam", "sparse_softmax_cross_entropy_with_logits", "add"})
  end)
  gpu_it("fits the guide's convnet (Conv2D, MaxPooling2D, Dense, Adam) like on the CPU, "
         .. "every op on device kernels", function()
    local L = tf.keras.layers
    local function fit(scope)
      return tf.device(scope, function()
        tf.random.set_seed(11)
        local model = tf.keras.Sequential{
          L.Conv2D{4, {3, 3}, activation = "relu", input_shape = {8, 8, 1}, kernel_initializer = host_glorot},
          L.MaxPooling2D{{2, 2}},
          L.Conv2D{4, {2, 2}, padding = "same", activation = "relu", kernel_initializer = host_glorot},
          L.Flatten{},
          L.Dense{3, kernel_initializer = host_glorot},
        }
        model:compile{optimizer = K.Adam{0.01},
                      loss = tf.keras.losses.SparseCategoricalCrossentropy{from_logits = true},
                      metrics = {"accuracy"}}
        local xs, ys = {}, {}
        for i = 1, 30 do
          local k = i % 3
          local img = {}
          for r = 1, 8 do
            img[r] = {}
            for c = 1, 8 do
              local on = (k == 0 and r <= 4) or (k == 1 and c <= 4) or (k == 2 and (r + c) % 2 == 0)
              img[r][c] = {(on and 1 or 0) + 0.1 * math.sin(i * r + c)}
            end
          end
          xs[i], ys[i] = img, k + 1
        end
        local x, y = tf.constant(xs, tf.float32), tf.constant(ys, tf.int32)
        local h = model:fit(x, y, {epochs = 4, batch_size = 10, verbose = 0, shuffle = false})
        return h.history.loss, model.trainable_variables[1]:value()
      end)
    end
    fit_on_both(fit, {"conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "max_pool2d",
                      "max_pool2d_grad", "matmul", "apply_adam"})
  end)
end)
