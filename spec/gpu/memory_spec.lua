-- GPU memory: the caching allocator's counters, out-of-memory after one
-- emergency collection, recovery when tensors die. The out-of-memory cases
-- need a small device: they run on the simulated GPU only (scripts/test.sh
-- sets LTF_GPU_SIM_MEMORY=64M), and are pending elsewhere.
local tf = require("tf")

local have_gpu = #tf.config.list_physical_devices("GPU") > 0
local sim = os.getenv("LTF_GPU_SIM") == "1"
local MB = 1024 * 1024

local function gpu_it(name, fn, sim_only)
  it(name, function()
    if not have_gpu then
      pending("no GPU: tf.config.list_physical_devices('GPU') is empty (scripts/test.sh runs these with LTF_GPU_SIM=1)")
      return
    end
    if sim_only and not sim then
      pending("needs the simulated GPU's small memory (LTF_GPU_SIM=1 LTF_GPU_SIM_MEMORY=64M)")
      return
    end
    fn()
  end)
end

-- 'mb' MiB of float32 on the GPU
local function block(mb) return tf.device("/gpu:0", function() return tf.zeros({mb * MB // 4}) end) end

describe("GPU memory", function()
  before_each(function() collectgarbage() end)

  gpu_it("counts bytes in use and their peak (get_memory_info)", function()
    local before = tf.config.experimental.get_memory_info("GPU:0")
    local x = block(4)
    local during = tf.config.experimental.get_memory_info("GPU:0")
    assert.equal(before.current + 4 * MB, during.current)
    assert.is_true(during.peak >= during.current)
    x = nil   -- luacheck: ignore
    collectgarbage()
    local after = tf.config.experimental.get_memory_info("GPU:0")
    assert.equal(before.current, after.current)
    assert.equal(during.peak, after.peak)
    tf.config.experimental.reset_memory_stats("GPU:0")
    assert.equal(after.current, tf.config.experimental.get_memory_info("GPU:0").peak)
  end)

  gpu_it("keeps freed blocks reserved in its cache and reuses them", function()
    local x = block(4)
    local reserved = tf.config.experimental.get_memory_reserved("GPU:0")
    local in_use = tf.config.experimental.get_memory_info("GPU:0").current
    x = nil   -- luacheck: ignore
    collectgarbage()
    assert.equal(in_use - 4 * MB, tf.config.experimental.get_memory_info("GPU:0").current)
    assert.equal(reserved, tf.config.experimental.get_memory_reserved("GPU:0"))
    local y = block(4)   -- the cached block: nothing more reserved
    assert.equal(reserved, tf.config.experimental.get_memory_reserved("GPU:0"))
    assert.equal(0, y[1]:item())
  end)

  gpu_it("refuses past the device's memory with ResourceExhaustedError naming the op, the bytes and the device's error",
         function()
    local keep = {}
    local ok, err
    for i = 1, 64 do
      ok, err = pcall(block, 8)
      if not ok then break end
      keep[i] = err
    end
    assert.is_false(ok)
    assert.equal("ResourceExhaustedError", err.kind)
    assert.truthy(err.message:find("fill: out of memory on /gpu:0 allocating a tensor of 8388608 bytes: gpusim: out of memory", 1, true),
                  err.message)
    keep = nil   -- luacheck: ignore
    collectgarbage()
    local again = block(8)   -- the memory came back when the tensors died
    assert.equal(0, again[1]:item())
  end, true)

  gpu_it("frees dead tensors with one emergency collection before refusing", function()
    collectgarbage("stop")
    local ok, err = pcall(function()
      for _ = 1, 40 do block(8) end   -- 320 MiB through a 64 MiB device: only garbage holds them
    end)
    collectgarbage("restart")
    assert.is_true(ok, err and tostring(err))
  end, true)

  gpu_it("keeps an op's memory on the device: a trim after the collection gives the cache back", function()
    local sizes = {}
    for i = 1, 6 do sizes[i] = block(i) end   -- blocks of six different size classes
    sizes = nil   -- luacheck: ignore
    collectgarbage()
    local reserved = tf.config.experimental.get_memory_reserved("GPU:0")
    assert.is_true(reserved >= 21 * MB)
    -- a size no cached block has, larger than what is left: needs the trim
    local big = block(40)
    assert.equal(40 * MB, big.shape[1] * 4)
  end, true)
end)
