-- map(f, {num_parallel_calls = P}): the map's traced graph runs on P worker
-- threads (bindings/mapparallel.c) when the thread contract allows it (a
-- stateless graph on numeric tensors): the same elements in the same order
-- as the sequential map and as values computed here, a worker's error
-- raised at its element's turn with its kind, and the cases that must stay
-- on the Lua thread (strings, variables, a caller's tf.fn) still right.
local tf = require("tf")
local D = tf.data.Dataset
local internal = tf.core.internal

local function collect(ds)
  local out = {}
  for a, b in ds:as_table_iterator() do out[#out + 1] = {a, b} end
  return out
end

local function f(x)
  local y = tf.cast(x, tf.float32)
  return y * y - 0.5 * y, x * 3
end

describe("map with num_parallel_calls", function()
  it("gives the sequential map's elements in order, on worker threads", function()
    for _, case in ipairs({{2, 23}, {3, 5}, {tf.data.AUTOTUNE, 1}}) do
      local P, n = case[1], case[2]
      local want = {}
      for x = 1, n do want[x] = {x * x - 0.5 * x, 3 * x} end
      local ds = D.range(1, n + 1):map(f, {num_parallel_calls = P})
      assert.are.same(want, collect(ds))
      assert.is_nil(ds._refused)
    end
    -- vectors, batched before the map
    local ds = D.range(1, 41):batch(4):map(function(x) return tf.reduce_sum(x * x) end, {num_parallel_calls = 4})
    local got = {}
    for v in ds:as_table_iterator() do got[#got + 1] = v end
    local want = {}
    for b = 0, 9 do
      local s = 0
      for x = 4 * b + 1, 4 * b + 4 do s = s + x * x end
      want[#want + 1] = s
    end
    assert.are.same(want, got)
    collectgarbage(); collectgarbage()
    local base = internal.read_pool_threads()
    local it = D.range(1, 100):map(f, {num_parallel_calls = 3}):iter()
    it(); it()   -- the second element came from a worker
    assert.are.equal(base + 3, internal.read_pool_threads())
    it = nil
    collectgarbage(); collectgarbage()
    assert.are.equal(base, internal.read_pool_threads())
  end)

  it("a worker's error comes at its element, after the ones before it", function()
    local params = tf.constant({10, 20, 30})
    local ds = D.range(1, 9):map(function(x) return tf.gather(params, x) end, {num_parallel_calls = 3})
    local got = {}
    assert.tf_error("InvalidArgumentError", "gather: indices = 4 is out of range", function()
      for x in ds:as_table_iterator() do got[#got + 1] = x end
    end)
    assert.are.same({10, 20, 30}, got)
    assert.is_nil(ds._refused)
    assert.tf_error("InvalidArgumentError", "map: 'num_parallel_calls' must be positive or AUTOTUNE, got 0",
      function() D.range(3):map(f, {num_parallel_calls = 0}) end)
  end)

  it("strings, variables and a caller's tf.fn stay on the Lua thread, with the same results", function()
    local s = D.from_tensor_slices(tf.constant({"a", "bbb", "cc"})):map(function(x) return tf.strings.length(x) end,
      {num_parallel_calls = 2})
    local got = {}
    for v in s:as_table_iterator() do got[#got + 1] = v end
    assert.are.same({1, 3, 2}, got)
    assert.matches("not a concrete numeric CPU tensor", s._refused)
    local v = tf.Variable(2.0)
    local dv = D.range(1, 6):map(function(x) return tf.cast(x, tf.float32) * v end, {num_parallel_calls = 2})
    got = {}
    for y in dv:as_table_iterator() do got[#got + 1] = y end
    assert.are.same({2, 4, 6, 8, 10}, got)
    assert.matches("stateful node", dv._refused)
    local g = tf.fn(function(x) return x + 1 end)
    local dg = D.range(1, 6):map(g, {num_parallel_calls = 2})
    got = {}
    for y in dg:as_table_iterator() do got[#got + 1] = y end
    assert.are.same({2, 3, 4, 5, 6}, got)
    assert.is_nil(dg._par)
  end)
end)
