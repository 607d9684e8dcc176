-- The eager backward pass frees each intermediate gradient once the ops
-- that read it have run (core/tape.c): a long chain's gradient needs a few
-- gradient buffers at a time, not one per op; intermediate sources and
-- persistent tapes still get their gradients.
local tf = require("tf")
local core = tf.core

describe("GradientTape memory", function()
  local N, n = 24, 256 * 1024                  -- 24 ops on 1 MiB float32 tensors
  local bytes = 4 * n

  local function chain(x)
    local y = x
    for _ = 1, N do y = y * 1.01 end
    return tf.reduce_sum(y)
  end

  it("keeps a chain's gradient buffers few while walking back", function()
    local x = tf.ones({n})
    local tape = tf.GradientTape()
    tape:watch(x)
    local loss = tape:record(function() return chain(x) end)
    collectgarbage(); collectgarbage()
    local before = core.memory_stats().live_bytes
    core.reset_peak_memory()
    local g = tape:gradient(loss, x)
    local grew = core.memory_stats().peak_bytes - before
    -- every gradient of the chain alive at once would be N MiB
    assert.is_true(grew <= 4 * bytes, ("the backward pass held %.1f MiB"):format(grew / 2^20))
    assert.near(1.01 ^ N, g[1]:item(), 1e-4)
    assert.near(1.01 ^ N, g[n]:item(), 1e-4)
  end)

  it("still returns the gradients of intermediate sources, also from a persistent tape twice", function()
    local x = tf.constant({1.0, 2.0, 3.0})
    local tape = tf.GradientTape({persistent = true})
    tape:watch(x)
    local h, loss
    tape:record(function()
      h = tf.square(x)                 -- an intermediate, asked for below
      loss = tf.reduce_sum(tf.sin(h) * 2.0)
    end)
    for _ = 1, 2 do
      local gx, gh = table.unpack(tape:gradient(loss, {x, h}))
      for i, v in ipairs({1, 2, 3}) do
        assert.near(2 * math.cos(v * v), gh[i]:item(), 1e-5)
        assert.near(2 * math.cos(v * v) * 2 * v, gx[i]:item(), 1e-5)
      end
    end
  end)

  it("gives a tensor used twice the sum of both uses", function()
    local x = tf.constant({0.5, -1.5})
    local tape = tf.GradientTape()
    tape:watch(x)
    local loss = tape:record(function()
      local a = tf.tanh(x)
      return tf.reduce_sum(a * a + a)   -- a read by two ops
    end)
    local g = tape:gradient(loss, x)
    for i, v in ipairs({0.5, -1.5}) do
      local t = math.tanh(v)
      assert.near((2 * t + 1) * (1 - t * t), g[i]:item(), 1e-6)
    end
  end)

  it("skips a matmul operand's gradient when no source depends on it (the data of a first layer)", function()
    local x = tf.random.normal({512, 256}, 0, 1, tf.float32, 1)   -- 512 KiB, not a source
    local w = tf.Variable(tf.random.normal({256, 64}, 0, 1, tf.float32, 2))
    local tape = tf.GradientTape()
    local loss = tape:record(function() return tf.reduce_sum(tf.matmul(x, w)) end)
    collectgarbage(); collectgarbage()
    local before = core.memory_stats().live_bytes
    core.reset_peak_memory()
    local g = tape:gradient(loss, w)
    local grew = core.memory_stats().peak_bytes - before
    assert.is_true(grew < 512 * 1024, ("the backward pass made %d KiB: x's gradient too"):format(grew // 1024))
    -- d sum(x w) / dw = x^T 1: each row of g is a column sum of x
    local want = tf.reduce_sum(x, 1)
    assert.is_true(tf.reduce_max(tf.abs(g[{{}, 7}] - want)):item() < 1e-3)
    -- the other way round: only x a source (w constant), both transposed
    local wc = w:value()
    local tape2 = tf.GradientTape()
    tape2:watch(x)
    local l2 = tape2:record(function()
      return tf.reduce_sum(tf.matmul(wc, x, {transpose_a = true, transpose_b = true}))
    end)
    local gx = tape2:gradient(l2, x)
    assert.is_true(tf.reduce_max(tf.abs(gx[5] - tf.reduce_sum(wc, 2))):item() < 1e-3)   -- every row
  end)
end)
