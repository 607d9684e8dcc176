-- The seeds' examples and the MNIST convnet under TensorFlow 2's default
-- placement, with no tf.device in their code: each runs in a child process
-- on "the GPU" (the simulated one under LTF_GPU_SIM=1) and in one with no
-- GPU visible (CUDA_VISIBLE_DEVICES=, which the simulated GPU honours as the
-- CUDA driver does); both pass the checks spec/examples_spec.lua and
-- spec/keras/train_examples_spec.lua make, their deterministic output is
-- the same, and the GPU run's ops ran on device kernels. Random numbers
-- drawn on a GPU differ from the CPU's (docs/devices.md), so runs that
-- draw them are compared on what they reach, not digit for digit; the
-- convnet with host-drawn weights and no dropout is compared step by step.
local tf = require("tf")

local gpu = require("gpu_support")
local gpu_it = gpu.make_it(it, function(why) pending(why) end)
-- the longer example runs (a minute or more each under ASan's slower code
-- on the simulated GPU) are left to the plain run of this folder when the
-- sanitizers are preloaded (scripts/sanitize.sh): visibly pending
local sanitized = (os.getenv("LD_PRELOAD") or ""):find("libasan", 1, true) ~= nil
local function long_it(name, fn)
  gpu_it(name, function()
    if sanitized then
      pending("under the sanitizers: this example run is checked by the plain spec/gpu run (scripts/test.sh)")
      return
    end
    fn()
  end)
end
local run_child = gpu.run_child
-- (a device of 512 MiB: the convnet's evaluate batches of 256 need more than
-- the 64 MiB scripts/test.sh gives the other specs)
local SIM = os.getenv("LTF_GPU_SIM") == "1" and "LTF_GPU_SIM=1 LTF_GPU_SIM_MEMORY=512M " or ""
local CPU_ONLY = "LTF_GPU_SIM= CUDA_VISIBLE_DEVICES= "

-- runs 'script' (with settings 'env') on the GPU and on the CPU; the GPU
-- run also prints its kernel stats after the example: "stats <op> <device> <host>"
local function both(script, env)
  local code = ([[
    local tf = require("tf")
    arg = {[0] = %q}
    dofile(%q)
    local devs = tf.config.list_logical_devices("GPU")
    print("gpus " .. #devs)
    for op, s in pairs(tf.config.experimental.get_device_kernel_stats()) do
      print(("stats %%s %%d %%d"):format(op, s.device, s.host))
    end
  ]]):format(script, script)
  local g, gok = run_child(code, SIM .. (env or ""))
  local c, cok = run_child(code, CPU_ONLY .. (env or ""))
  assert.is_true(gok, g)
  assert.is_true(cok, c)
  assert.truthy(g:find("\ngpus 1\n", 1, true), g)
  assert.truthy(c:find("\ngpus 0\n", 1, true), c)
  assert.is_nil(c:find("\nstats ", 1, true), c)
  return g, c
end

local function ran_on_device(out, op)
  local d = out:match("\nstats " .. op .. " (%d+) %d+")
  assert.truthy(d and tonumber(d) > 0, op .. " ran no device kernel:\n" .. out)
end

-- the output without the kernel stats and timing lines
local function stable(out)
  local keep = {}
  for line in out:gmatch("[^\n]*") do
    if not line:find("^stats ") and not line:find("^gpus ") and not line:find("secs") and not line:find("%d+m?s/step")
       and not line:find("s for %d+ epochs") then
      keep[#keep + 1] = line
    end
  end
  return table.concat(keep, "\n")
end

describe("the examples under the default placement, on the GPU and on the CPU", function()
  long_it("eager_basics.lua prints the same on both", function()
    local g, c = both("examples/eager_basics.lua", "EAGER_BASICS_STEPS=2")
    assert.truthy(g:find("tf.Tensor(\n[[1 2]\n [3 4]], shape=(2, 2), dtype=int32)", 1, true), g)
    assert.truthy(g:find("1\n2\nFizz\n4\nBuzz\nFizz\n7\n8\nFizz\nBuzz\n11\nFizz\n13\n14\nFizzBuzz\n", 1, true), g)
    assert.truthy(g:find("GPU: ", 1, true), g)            -- the guide's GPU timing runs only with a GPU
    assert.equal(stable(c), (stable(g):gsub("\nGPU: [^\n]*", "")))
    ran_on_device(g, "matmul")
  end)

  gpu_it("linear_regression.lua ends near W = 3, B = 2 on both", function()
    local g, c = both("examples/linear_regression.lua")
    for _, out in ipairs({g, c}) do
      local w, b = out:match("W = ([%d%.%-]+), B = ([%d%.%-]+)")
      assert.truthy(w, out)
      assert.is_true(math.abs(tonumber(w) - 3) < 0.1, out)
      assert.is_true(math.abs(tonumber(b) - 2) < 0.1, out)
    end
    ran_on_device(g, "multiply")
    ran_on_device(g, "reduce_mean")
  end)

  gpu_it("line_search.lua prints the same on both", function()
    local g, c = both("examples/line_search.lua")
    assert.equal(stable(c), stable(g))
    ran_on_device(g, "multiply")
  end)

  gpu_it("checkpoint.lua resumes from its checkpoint with the uninterrupted run's losses on both", function()
    -- (Adam divides by sqrt(v): bias gradients near 0 flip sign with rounding,
    -- so GPU and CPU losses part after a few steps; each run matches itself)
    local g, c = both("examples/checkpoint.lua")
    for _, out in ipairs({g, c}) do
      assert.truthy(out:find("losses identical to the uninterrupted run", 1, true), out)
    end
    local g1, c1 = g:match("step  1  loss ([%d%.]+)"), c:match("step  1  loss ([%d%.]+)")
    assert.near(tonumber(c1), tonumber(g1), 1e-6)
    ran_on_device(g, "tanh")
    ran_on_device(g, "matmul")
  end)

  long_it("mlp.lua (Keras fit on MNIST) learns on both", function()
    local g, c = both("examples/mlp.lua", "MLP_EPOCHS=1 MLP_TRAIN=2000")
    for _, out in ipairs({g, c}) do
      local acc = tonumber(out:match("Test accuracy: ([%d%.]+)"))
      assert.truthy(acc, out)
      assert.is_true(acc >= 0.7, out)
    end
    ran_on_device(g, "matmul")
  end)

  long_it("mnist_cnn.lua (the MNIST convnet through fit/evaluate) learns on both", function()
    local g, c = both("examples/mnist_cnn.lua", "CNN_EPOCHS=1 CNN_TRAIN=1000 CNN_TEST=256")
    for _, out in ipairs({g, c}) do
      assert.truthy(out:find("val_accuracy: ", 1, true), out)
      local acc = tonumber(out:match("Test accuracy: ([%d%.]+)"))
      assert.truthy(acc, out)
      assert.is_true(acc >= 0.5, out)
    end
    for _, op in ipairs({"conv2d", "conv2d_backprop_filter", "max_pool2d", "matmul", "softmax", "apply_adam"}) do
      ran_on_device(g, op)
    end
    assert.is_nil(g:match("\nstats [%w_]+ %d+ [1-9]"), g)   -- no op fell back to the host
  end)

  gpu_it("the MNIST convnet's fit gives the CPU's losses and weights with the same initial weights", function()
    local code = [[
      local tf = require("tf")
      local train = tf.keras.datasets.mnist.load_data()
      local x = tf.expand_dims(tf.cast(train[1][{{1, 96}}], tf.float32) / 255, -1)
      local y = tf.cast(train[2][{{1, 96}}], tf.int64) + 1
      local layers = tf.keras.layers
      local model = tf.keras.Sequential{
        layers.Conv2D{8, {3, 3}, activation = "relu", input_shape = {28, 28, 1}},
        layers.MaxPooling2D{pool_size = {2, 2}},
        layers.Conv2D{16, {3, 3}, activation = "relu"},
        layers.MaxPooling2D{pool_size = {2, 2}},
        layers.Flatten{},
        layers.Dense{10, activation = "softmax"},
      }
      -- initial weights drawn on the host from a fixed seed: the same on both
      tf.random.set_seed(3)
      local w = {}
      for i, v in ipairs(model:get_weights()) do
        w[i] = tf.device("/cpu:0", function() return tf.random.uniform(v.shape, -0.2, 0.2) end)
      end
      model:set_weights(w)
      model:compile{loss = "sparse_categorical_crossentropy", optimizer = "adam", metrics = {"accuracy"}}
      local h = model:fit(x, y, {batch_size = 32, epochs = 3, shuffle = false, verbose = 0})
      print("device " .. model.trainable_variables[1].device)
      for _, l in ipairs(h.history.loss) do print(("loss %.9g"):format(l)) end
      for _, v in ipairs(model:get_weights()) do
        local s = tf.device("/cpu:0", function() return tf.reduce_sum(tf.abs(v:cpu())) end)
        print(("weights %.9g"):format(s:item()))
      end
    ]]
    local g, gok = run_child(code, SIM)
    local c, cok = run_child(code, CPU_ONLY)
    assert.is_true(gok, g)
    assert.is_true(cok, c)
    assert.truthy(g:find("device " .. gpu.GPU, 1, true), g)
    assert.truthy(c:find("device " .. gpu.CPU, 1, true), c)
    local gv, cv = {}, {}
    for v in g:gmatch("\n?%a+ ([%d%.e%-]+)\n") do gv[#gv + 1] = tonumber(v) end
    for v in c:gmatch("\n?%a+ ([%d%.e%-]+)\n") do cv[#cv + 1] = tonumber(v) end
    assert.equal(3 + 6, #cv, c)
    assert.equal(#cv, #gv, g)
    for i = 1, #cv do assert.near(cv[i], gv[i], 1e-4 * math.max(1, math.abs(cv[i])), g .. "\n" .. c) end
    assert.is_true(cv[3] < cv[1], c)
  end)
end)
