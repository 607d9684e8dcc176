-- TensorFlow 2's default placement on "the GPU" (a real one, or the
-- simulated one: LTF_GPU_SIM=1, as scripts/test.sh runs this folder): with
-- a GPU visible, ops with no scope and no input on a device run on /GPU:0
-- where it has a kernel, tf.constant and tf.Variable make their tensors
-- there, results stay there until read; tf.data and Keras' batching run on
-- the host and batches are copied to the device; tf.config's device
-- settings behave as TensorFlow's. Values are checked against the CPU
-- (a /cpu:0 scope in this process, or a child process with no GPU visible)
-- and hand-computed ones. Without a GPU every case is pending.
local tf = require("tf")

local gpu = require("gpu_support")
local GPU, CPU, gpu_it = gpu.GPU, gpu.CPU, gpu.make_it(it, function(why) pending(why) end)
local run_child = gpu.run_child
local stats = tf.config.experimental.get_device_kernel_stats

-- an environment prefix for children with the simulated GPU (a real GPU
-- machine: its own) and the same settings as this process
local SIM = os.getenv("LTF_GPU_SIM") == "1" and "LTF_GPU_SIM=1" or ""
local function sim_env(extra) return SIM .. " " .. (extra or "") end

describe("the default placement", function()
  gpu.default_placement(before_each, after_each)

  gpu_it("runs ops with no scope on /GPU:0, makes constants and variables there, keeps results there", function()
    assert.equal("/gpu:0", tf.current_device())
    tf.config.experimental.reset_device_kernel_stats()
    local a = tf.constant({{1.5, -2}, {3, 0.5}})
    assert.equal(GPU, a.device)
    local b = tf.matmul(a, a)
    assert.equal(GPU, b.device)
    assert.same({{-3.75, -4}, {6, -5.75}}, b:totable())   -- by hand
    assert.same({device = 1, emulated = 0, host = 0}, stats().matmul)
    assert.equal(GPU, tf.zeros({3}).device)
    assert.equal(GPU, tf.random.uniform({2}).device)
    assert.equal(GPU, tf.constant({true, false}).device)
    local v = tf.Variable({1.0, 2.0})
    assert.equal(GPU, v.device)
    v:assign_add({0.5, 0.5})
    assert.equal(GPU, v.device)
    assert.equal(GPU, v:read_value().device)
    assert.same({1.5, 2.5}, v:read_value():totable())
    -- results stay on the device until read: a 1 MiB result holds device memory
    local before = tf.config.experimental.get_memory_info("GPU:0").current
    local big = tf.fill({512, 512}, 2.0) * 3
    assert.is_true(tf.config.experimental.get_memory_info("GPU:0").current >= before + 4 * 512 * 512)
    assert.equal(GPU, big.device)
    assert.equal(6, big[1][1]:item())
  end)

  gpu_it("leaves small int32/int64 tensors and ops on the host (TensorFlow pins them to the CPU)", function()
    local i = tf.constant({1, 2, 3})
    assert.equal(CPU, i.device)
    assert.equal(CPU, (i + 1).device)
    assert.equal(CPU, tf.range(5).device)
    assert.equal(CPU, tf.shape(tf.constant({{1.0, 2.0}})).device)
    local big = tf.range(100)            -- 100 elements: not pinned
    assert.equal(GPU, big.device)
    assert.equal(GPU, tf.constant({1, 2}, tf.float32).device)
    assert.equal(GPU, tf.random.uniform({2}, 0, 10, tf.int32).device)   -- random ops are not pinned
  end)

  gpu_it("gives the CPU's values for a mix of ops, and a /cpu:0 scope still keeps work on the host", function()
    local function work()
      local x = tf.constant({{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}})
      local w = tf.constant({{0.2, -0.4}, {0.3, 0.8}, {-1.0, 0.5}})
      local h = tf.nn.relu(tf.matmul(x, w) + tf.constant({0.1, -0.2}))
      return tf.nn.softmax(h), tf.reduce_sum(tf.tanh(x), 2)
    end
    local c1, c2 = tf.device("/cpu:0", work)
    assert.equal(CPU, c1.device)
    assert.equal(CPU, c2.device)
    local g1, g2 = work()
    assert.equal(GPU, g1.device)
    assert.equal(GPU, g2.device)
    assert.tensor_near(c1, g1:cpu(), {rtol = 1e-6, atol = 1e-7})
    assert.tensor_near(c2, g2:cpu(), {rtol = 1e-6, atol = 1e-7})
    assert.equal(CPU, tf.device("/cpu:0", function() return tf.constant({1.0}) end).device)
  end)

  gpu_it("runs host-only ops (strings, decode, csv, lookup) on the CPU and keeps their results there", function()
    tf.config.experimental.reset_device_kernel_stats()
    local img = tf.constant({{{0}, {255}}, {{128}, {7}}}, tf.uint8)   -- on the GPU
    local png = tf.io.encode_png(img)
    assert.equal(CPU, png.device)
    local defaults = {tf.constant({0}, tf.int32), tf.constant({0.0})}   -- (the float one on the GPU)
    local mem = tf.config.experimental.get_memory_info("GPU:0").current
    local kept = {}
    for k = 1, 3 do   -- every call on the host: no device memory taken, no copies back and forth
      local dec = tf.io.decode_png(png)
      local num = tf.strings.to_number(tf.constant({"1.5", "-2"}))
      local csv = {tf.io.decode_csv(tf.constant({"1,2.5", "3,4"}), defaults)}
      assert.equal(CPU, dec.device)
      assert.equal(CPU, num.device)
      assert.equal(CPU, csv[2].device)
      kept[k] = {dec, num, csv}
    end
    assert.equal(mem, tf.config.experimental.get_memory_info("GPU:0").current)
    assert.same({{{0}, {255}}, {{128}, {7}}}, kept[3][1]:totable())
    assert.same({1.5, -2}, kept[3][2]:totable())
    assert.same({2.5, 4}, kept[3][3][2]:totable())
    local table_ = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(tf.constant({"a", "b"}),
                                             tf.constant({7, 9}, tf.int64)), -1)
    local found = table_:lookup(tf.constant({"b", "z"}))
    assert.equal(CPU, found.device)
    assert.same({9, -1}, found:totable())
    for op, s in pairs(stats()) do assert.equal(0, s.host, op .. " went to the GPU and back") end
  end)

  gpu_it("writes TFRecords and summaries of GPU values, reads and parses them on the host", function()
    local dir = os.tmpname()
    os.remove(dir)
    os.execute("mkdir -p '" .. dir .. "'")
    local w_value = tf.constant({{1.5, 2.5}, {3.0, 4.0}})           -- on the GPU
    assert.equal(GPU, w_value.device)
    do
      local w <close> = tf.io.TFRecordWriter(dir .. "/a.tfrecord", "GZIP")
      for k = 1, 2 do
        local flat = tf.reshape(w_value * k, {-1}):totable()
        w:write(tf.train.Example{features = {w = {float_list = flat}}}:SerializeToString())
      end
    end
    tf.config.experimental.reset_device_kernel_stats()
    local spec = {w = tf.io.FixedLenFeature({2, 2}, tf.float32)}
    local got = {}
    for rec in tf.data.TFRecordDataset(dir .. "/a.tfrecord", {compression_type = "GZIP"})
                 :map(function(r) return tf.io.parse_single_example(r, spec).w end):iter() do
      assert.equal(CPU, rec.device)
      got[#got + 1] = (rec * w_value):totable()                   -- meets a GPU value: computed there
    end
    assert.same({{{2.25, 6.25}, {9, 16}}, {{4.5, 12.5}, {18, 32}}}, got)
    assert.same({device = 2, emulated = 0, host = 0}, stats().multiply)
    local writer = tf.summary.create_file_writer(dir .. "/logs")
    do
      local _ <close> = writer:as_default()
      tf.summary.scalar("loss", tf.reduce_mean(w_value), {step = 1})
      tf.summary.histogram("w", w_value, {step = 1})
    end
    writer:flush()
    local p = io.popen("cat '" .. dir .. "'/logs/events.out.tfevents.* | wc -c")
    assert.is_true(tonumber(p:read("a")) > 100)
    p:close()
    os.execute("rm -rf '" .. dir .. "'")
  end)

  gpu_it("runs tf.data pipelines on the host; their elements meet GPU values on the GPU", function()
    local seen = {}
    local ds = tf.data.Dataset.from_tensor_slices(tf.constant({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}}))
      :map(function(x) seen[#seen + 1] = tf.current_device(); return x * 2 end):batch(2)
    local w = tf.constant({10.0, 100.0})
    local out = {}
    for x in ds:iter() do
      assert.equal(CPU, x.device)
      local y = x * w
      assert.equal(GPU, y.device)
      out[#out + 1] = y:totable()
    end
    assert.same({{{20, 400}, {60, 800}}, {{100, 1200}}}, out)
    for _, d in ipairs(seen) do assert.equal("/cpu:0", d) end
    -- inside a GPU scope too (TensorFlow runs tf.data on the CPU)
    tf.device("/gpu:0", function()
      for x in ds:iter() do assert.equal(CPU, x.device) end
    end)
  end)

  gpu_it("tf.data.experimental.prefetch_to_device copies elements to the GPU, buffer_size ahead", function()
    local made = 0
    local ds = tf.data.Dataset.from_generator(function()
      return function()
        made = made + 1
        if made > 4 then return nil end
        return tf.constant({made * 0.5}), tf.constant("s" .. made)
      end
    end):apply(tf.data.experimental.prefetch_to_device("/gpu:0", 2))
    assert.equal(-2, ds:cardinality())                -- unknown, as its input
    local it = ds:iter()
    local x, s = it()
    assert.equal(3, made)                             -- element 1 handed out, 2 and 3 copied ahead
    assert.equal(GPU, x.device)
    assert.equal(CPU, s.device)                       -- strings stay on the host
    assert.same({0.5}, x:totable())
    assert.equal("s1", s:item())
    local rest = {}
    for y in it do rest[#rest + 1] = y:totable()[1] end
    assert.same({1, 1.5, 2}, rest)
    assert.tf_error("InvalidArgumentError", "prefetch_to_device: 'buffer_size' must be >= 1, got 0",
                    tf.data.experimental.prefetch_to_device, "/gpu:0", 0)
    assert.tf_error("ValueError", "prefetch_to_device: cannot parse device name \"/tpu:0\"",
                    tf.data.experimental.prefetch_to_device, "/tpu:0")
    -- an absent GPU: the elements stay on the host (soft placement)
    local host = tf.data.Dataset.from_tensor_slices(tf.constant({1.0, 2.0}))
      :apply(tf.data.experimental.prefetch_to_device("/gpu:7"))
    for y in host:iter() do assert.equal(CPU, y.device) end
  end)

  gpu_it("Keras makes batches on the host and copies each to /GPU:0 one batch ahead of the step (prefetch)", function()
    local made, where = 0, {}
    local function make()
      where[#where + 1] = tf.current_device()
      return function()
        made = made + 1
        if made > 3 then return nil end
        where[#where + 1] = tf.current_device()
        return tf.constant({made * 1.5}), {y = tf.constant({made}, tf.int64)}
      end
    end
    local batches = tf.keras.training._device_batches(make)
    assert.equal(1, made)                  -- the first batch is made (and its copy queued) before it is asked for
    local x, y = batches()
    assert.equal(2, made)                  -- asking for batch 1 readies batch 2
    assert.equal(GPU, x.device)
    assert.equal(GPU, y.y.device)
    assert.same({1.5}, x:totable())
    assert.same({1}, y.y:totable())
    assert.same({3}, batches():totable())
    assert.same({4.5}, batches():totable())
    assert.is_nil(batches())
    assert.same({"/cpu:0", "/cpu:0", "/cpu:0", "/cpu:0"}, where)
    -- in a scope: the iterator itself, nothing moved
    made = 0
    local host = tf.device("/cpu:0", function()
      local it = tf.keras.training._device_batches(make)
      return (it())
    end)
    assert.equal(CPU, host.device)
  end)

  -- fit(scope) -> per-epoch losses, the first kernel and the model: the same
  -- weights (set by hand: GPU random numbers differ from the CPU's), no shuffle
  local function keras_fit(scope, with_dataset)
    local function go()
      local x = tf.constant({{0.1, 0.2, -0.3}, {0.5, -0.1, 0.4}, {-0.6, 0.3, 0.2}, {0.9, -0.8, 0.1},
                             {0.2, 0.2, 0.2}, {-0.4, -0.5, 0.6}, {0.3, 0.7, -0.2}, {0.0, -0.3, 0.8}})
      local y = tf.constant({1, 2, 1, 3, 2, 3, 1, 2}, tf.int64)
      local model = tf.keras.Sequential{
        tf.keras.layers.Dense{4, activation = "relu", input_shape = {3}},
        tf.keras.layers.Dense{3, activation = "softmax"},
      }
      model:set_weights({
        tf.constant({{0.2, -0.3, 0.5, 0.1}, {-0.4, 0.6, 0.2, -0.2}, {0.3, 0.1, -0.5, 0.4}}),
        tf.constant({0.01, -0.02, 0.03, 0.0}),
        tf.constant({{0.5, -0.2, 0.1}, {-0.3, 0.4, 0.2}, {0.2, 0.1, -0.6}, {0.1, -0.5, 0.3}}),
        tf.constant({0.0, 0.1, -0.1}),
      })
      model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.05},
                    loss = "sparse_categorical_crossentropy", metrics = {"accuracy"}}
      local h
      if with_dataset then
        h = model:fit(tf.data.Dataset.from_tensor_slices({x, y}):batch(3), {epochs = 4, verbose = 0})
      else
        h = model:fit(x, y, {batch_size = 3, epochs = 4, shuffle = false, verbose = 0, validation_split = 0.25})
      end
      local loss = model:evaluate(x, y, {verbose = 0})
      local pred = model:predict(x, {verbose = 0, batch_size = 4})
      return h.history.loss, model.trainable_variables[1]:read_value(), loss, pred
    end
    if scope then return tf.device(scope, go) end
    return go()
  end

  for _, with_dataset in ipairs({false, true}) do
    gpu_it("fits a Keras model with no tf.device on the GPU like on the CPU (" ..
           (with_dataset and "a tf.data dataset" or "tensors, validation_split, evaluate, predict") .. ")", function()
      local closs, cw, ceval, cpred = keras_fit("/cpu:0", with_dataset)
      assert.equal(CPU, cw.device)
      tf.config.experimental.reset_device_kernel_stats()
      local gloss, gw, geval, gpred = keras_fit(nil, with_dataset)
      assert.equal(GPU, gw.device)
      assert.equal(GPU, gpred.device)
      for e = 1, #closs do assert.near(closs[e], gloss[e], 1e-5) end
      assert.is_true(gloss[#gloss] < gloss[1])
      assert.near(ceval, geval, 1e-5)
      assert.tensor_near(cw, gw:cpu(), {atol = 1e-5})
      assert.tensor_near(cpred, gpred:cpu(), {atol = 1e-5})
      local s = stats()
      for _, op in ipairs({"matmul", "relu", "softmax"}) do
        assert.is_true(s[op] ~= nil and s[op].device > 0, op .. " ran no device kernel")
      end
      for op, r in pairs(s) do assert.equal(0, r.host, op .. " fell back to the host") end
    end)
  end

  gpu_it("saves and restores checkpoints of GPU variables with no tf.device", function()
    local dir = os.tmpname()
    os.remove(dir)
    local v = tf.Variable({{1.0, 2.0}, {3.0, 4.0}})
    local step = tf.Variable(tf.constant(7, tf.int64))
    assert.equal(GPU, v.device)
    local ckpt = tf.train.Checkpoint{v = v, step = step}
    local path = ckpt:save(dir .. "/ckpt")
    v:assign({{0.0, 0.0}, {0.0, 0.0}})
    step:assign(1)
    ckpt:restore(path)
    assert.equal(GPU, v.device)
    assert.same({{1, 2}, {3, 4}}, v:read_value():totable())
    assert.equal(7, step:read_value():item())
    -- a variable made on the host reads the same file
    local hv = tf.device("/cpu:0", function() return tf.Variable(tf.zeros({2, 2})) end)
    tf.train.Checkpoint{v = hv, step = tf.Variable(tf.constant(0, tf.int64))}:restore(path)
    assert.equal(CPU, hv.device)
    assert.same({{1, 2}, {3, 4}}, hv:read_value():totable())
    os.execute("rm -rf '" .. dir .. "'")
  end)
end)

describe("tf.config and tf.debugging device settings", function()
  gpu_it("soft-places an op the GPU has no kernel for on the CPU, keeping its result there", function()
    local out, ok = run_child([[
      local tf = require("tf")
      tf.config.experimental.reset_device_kernel_stats()
      local x = tf.constant({1.0, 2.0, 3.0})
      local h = tf.device("/cpu:0", function() return tf.constant({1.0, 2.0, 3.0}) end)
      local c = tf.cumsum(h)                       -- host input, no GPU kernel: the CPU, no copies
      print(x.device, c.device, table.concat(c:totable(), " "))
      local s = tf.config.experimental.get_device_kernel_stats().cumsum
      print(s == nil and "not counted" or "counted")
      local g = tf.cumsum(x)                        -- a GPU input: soft placement, back on the GPU
      print(g.device, table.concat(g:totable(), " "))
    ]], sim_env("LTF_GPU_SIM_NO_KERNEL=cumsum"))
    assert.is_true(ok, out)
    assert.truthy(out:find(GPU .. "\t" .. CPU .. "\t1.0 3.0 6.0\nnot counted\n" .. GPU .. "\t1.0 3.0 6.0\n", 1, true), out)
  end)

  gpu_it("with soft placement off, refuses an op a GPU scope cannot run, and an absent GPU", function()
    local out, ok = run_child([[
      local tf = require("tf")
      print(tf.config.get_soft_device_placement())
      tf.config.set_soft_device_placement(false)
      print(tf.config.get_soft_device_placement())
      local x = tf.constant({1.0, 2.0})
      local ok1, e1 = pcall(function() return tf.device("/gpu:0", function() return tf.cumsum(x) end) end)
      print(ok1, e1.kind, e1.message)
      local ok2, e2 = pcall(tf.device, "/gpu:3")
      print(ok2, e2.kind, e2.message)
      print(table.concat(tf.cumsum(x):totable(), " "))   -- no scope: the CPU, as TensorFlow picks a device with a kernel
      tf.config.set_soft_device_placement(true)
      print(tf.device("/gpu:0", function() return tf.cumsum(x) end).device)
    ]], sim_env("LTF_GPU_SIM_NO_KERNEL=cumsum"))
    assert.is_true(ok, out)
    assert.truthy(out:find("true\nfalse\nfalse\tInvalidArgumentError\tcumsum: Could not satisfy explicit device " ..
      "specification '/device:GPU:0' because no supported kernel for GPU devices is available\n", 1, true), out)
    assert.truthy(out:find("false\tInvalidArgumentError\tdevice: Could not satisfy explicit device specification " ..
      "'/device:GPU:3' because no devices matching that specification are registered in this process", 1, true), out)
    assert.truthy(out:find("1.0 3.0\n" .. GPU .. "\n", 1, true), out)
  end)

  gpu_it("logs where each op ran as TensorFlow does (set_log_device_placement)", function()
    local out, ok = run_child([[
      local tf = require("tf")
      print(tf.debugging.get_log_device_placement())
      tf.debugging.set_log_device_placement(true)
      local a = tf.constant({{1.0, 2.0}, {3.0, 4.0}})
      local c = tf.matmul(a, a)
      local d = tf.device("/cpu:0", function() return tf.nn.relu(tf.constant({-1.0})) end)
      local s = tf.strings.length(tf.constant({"ab"}))
      local i = tf.constant({1, 2}) + 1
      tf.debugging.set_log_device_placement(false)
      local e = c + 1
      print("done")
    ]], sim_env())
    assert.is_true(ok, out)
    assert.truthy(out:find("^false\n"), out)
    local want = {
      "Executing op MatMul in device /job:localhost/replica:0/task:0/device:GPU:0",
      "Executing op Relu in device /job:localhost/replica:0/task:0/device:CPU:0",
      "Executing op StringLength in device /job:localhost/replica:0/task:0/device:CPU:0",
      "Executing op AddV2 in device /job:localhost/replica:0/task:0/device:CPU:0",
    }
    local at = 1
    for _, line in ipairs(want) do
      local s, e = out:find(line .. "\n", at, true)
      assert.truthy(s, line .. " not in order in:\n" .. out)
      at = e + 1
    end
    assert.is_nil(out:find("AddV2 in device /job:localhost/replica:0/task:0/device:GPU:0", 1, true), out)
  end)

  gpu_it("set_visible_devices / get_visible_devices: before the runtime initializes, as TensorFlow", function()
    local out, ok = run_child([[
      local tf = require("tf")
      local gpus = tf.config.list_physical_devices("GPU")
      print(#gpus, tostring(gpus[2]))
      tf.config.set_visible_devices({gpus[2]}, "GPU")
      print(#tf.config.list_physical_devices("GPU"), #tf.config.list_logical_devices("GPU"))
      local vis = tf.config.get_visible_devices()
      print(#vis, tostring(vis[1]), tostring(vis[2]))
      print(tostring(tf.config.list_logical_devices("GPU")[1]))
      local x = tf.constant({1.0})
      print(x.device)
      tf.config.set_visible_devices({gpus[2]}, "GPU")                 -- the same list: no change, no error
      local ok1, e1 = pcall(tf.config.set_visible_devices, gpus, "GPU")
      print(ok1, e1.kind, e1.message)
      local ok2, e2 = pcall(tf.config.set_visible_devices, {{name = "/physical_device:GPU:5", device_type = "GPU"}}, "GPU")
      print(ok2, e2.kind, e2.message)
      local ok3, e3 = pcall(tf.config.set_visible_devices, {tf.config.list_physical_devices("CPU")[1]}, "GPU")
      print(ok3, e3.kind, e3.message)
    ]], sim_env("LTF_GPU_SIM_COUNT=2"))
    assert.is_true(ok, out)
    assert.truthy(out:find("^2\tPhysicalDevice%(name='/physical_device:GPU:1', device_type='GPU'%)\n"), out)
    assert.truthy(out:find("\n2\t1\n2\tPhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')\t" ..
      "PhysicalDevice(name='/physical_device:GPU:1', device_type='GPU')\n" ..
      "LogicalDevice(name='/device:GPU:0', device_type='GPU')\n" .. GPU .. "\n", 1, true), out)
    assert.truthy(out:find("false\tRuntimeError\tVisible devices cannot be modified after being initialized\n", 1, true), out)
    assert.truthy(out:find("false\tValueError\tset_visible_devices: Unrecognized device: " ..
      "PhysicalDevice(name='/physical_device:GPU:5', device_type='GPU')\n", 1, true), out)
    assert.truthy(out:find("false\tValueError\tset_visible_devices: Unrecognized device: " ..
      "PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')\n", 1, true), out)
  end)

  gpu_it("hiding every GPU (set_visible_devices({}, 'GPU') or CUDA_VISIBLE_DEVICES) keeps everything on the host", function()
    local code = [[
      local tf = require("tf")
      if os.getenv("HIDE") then tf.config.set_visible_devices({}, "GPU") end
      print(#tf.config.list_physical_devices("GPU"), #tf.config.list_logical_devices("GPU"), tf.current_device())
      local y = tf.matmul(tf.constant({{2.0}}), tf.constant({{3.0}}))
      print(y.device, y:item(), tf.Variable({1.0}).device)
    ]]
    local host = "0\t0\t/cpu:0\n" .. CPU .. "\t6.0\t" .. CPU .. "\n"
    local out, ok = run_child(code, sim_env("HIDE=1"))
    assert.is_true(ok, out)
    assert.truthy(out:find("^1\t" .. host:sub(3)), out)   -- the physical GPU is still listed
    for _, v in ipairs({"", "-1", "5"}) do
      out, ok = run_child(code, sim_env("CUDA_VISIBLE_DEVICES=" .. v))
      assert.is_true(ok, out)
      assert.equal(host, out)
    end
    out, ok = run_child(code, sim_env("LTF_GPU_SIM_COUNT=3 CUDA_VISIBLE_DEVICES=2,0,7,1"))
    assert.is_true(ok, out)
    assert.truthy(out:find("^2\t2\t/gpu:0\n" .. GPU .. "\t6.0\t" .. GPU .. "\n"), out)
  end)

  gpu_it("set_memory_growth / get_memory_growth as TensorFlow (before the runtime initializes)", function()
    local out, ok = run_child([[
      local tf = require("tf")
      local g = tf.config.list_physical_devices("GPU")[1]
      print(tf.config.experimental.get_memory_growth(g))
      tf.config.experimental.set_memory_growth(g, true)
      print(tf.config.experimental.get_memory_growth(g))
      local ok1, e1 = pcall(tf.config.experimental.set_memory_growth, tf.config.list_physical_devices("CPU")[1], true)
      print(ok1, e1.kind, e1.message)
      local ok2, e2 = pcall(tf.config.experimental.set_memory_growth, {name = "/physical_device:GPU:9"}, true)
      print(ok2, e2.kind, e2.message)
      local x = tf.constant({1.0})
      tf.config.experimental.set_memory_growth(g, true)          -- no change: allowed
      local ok3, e3 = pcall(tf.config.experimental.set_memory_growth, g, false)
      print(ok3, e3.kind, e3.message)
    ]], sim_env())
    assert.is_true(ok, out)
    assert.equal("false\ntrue\nfalse\tValueError\tset_memory_growth: Cannot set memory growth on non-GPU and " ..
      "non-Pluggable devices\nfalse\tValueError\tset_memory_growth: Unrecognized device: " ..
      "PhysicalDevice(name='/physical_device:GPU:9', device_type='nil')\n" ..
      "false\tRuntimeError\tPhysical devices cannot be modified after being initialized\n", out)
  end)
end)
