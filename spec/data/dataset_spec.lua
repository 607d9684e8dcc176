-- tf.data.Dataset: sources, element order and structure, transformations,
-- cardinality and errors, against hand-written expected values.
local tf = require("tf")
local D = tf.data.Dataset

-- the values of a dataset's elements: one entry per element, a Lua value
-- (scalar tensors) or table (others); tuples become arrays of those
local function values(ds)
  local out = {}
  local function v(x)
    if tf.is_tensor(x) then return x:totable() end
    if type(x) == "table" then
      local r = {}
      for k, y in pairs(x) do r[k] = v(y) end
      return r
    end
    return x
  end
  for a, b, c in ds:iter() do
    if b == nil then out[#out + 1] = v(a)
    elseif c == nil then out[#out + 1] = {v(a), v(b)}
    else out[#out + 1] = {v(a), v(b), v(c)} end
  end
  return out
end

describe("tf.data.Dataset sources", function()
  it("from_tensor_slices gives the rows of a tensor, in order", function()
    local x = tf.constant({{1, 2}, {3, 4}, {5, 6}})
    assert.same({{1, 2}, {3, 4}, {5, 6}}, values(D.from_tensor_slices(x)))
    assert.same({10, 20, 30}, values(D.from_tensor_slices({10, 20, 30})))   -- a Lua literal is a tensor
    local e = D.from_tensor_slices(x):iter()()
    assert.equal(tf.int32, e.dtype)
    assert.same({2}, e.shape:as_list())
  end)

  it("from_tensor_slices of an array table gives tuples: for x, y in ds:iter()", function()
    local ds = D.from_tensor_slices({tf.constant({{1, 2}, {3, 4}}), tf.constant({7, 8})})
    assert.same({{{1, 2}, 7}, {{3, 4}, 8}}, values(ds))
    local n = 0
    for x, y in ds:iter() do
      n = n + 1
      assert.equal(1, x.rank)
      assert.equal(0, y.rank)
    end
    assert.equal(2, n)
  end)

  it("from_tensor_slices of a dict table gives dict elements (nested tables too)", function()
    local ds = D.from_tensor_slices({image = tf.constant({{1, 1}, {2, 2}}),
                                     meta = {id = tf.constant({5, 6}), w = tf.constant({0.5, 1.5})}})
    local got = values(ds)
    assert.same({{image = {1, 1}, meta = {id = 5, w = 0.5}}, {image = {2, 2}, meta = {id = 6, w = 1.5}}}, got)
  end)

  it("from_tensors gives one element, the whole value", function()
    assert.same({{{1, 2}, {3, 4}}}, values(D.from_tensors(tf.constant({{1, 2}, {3, 4}}))))
    assert.same({{{1, 2}, 3}}, values(D.from_tensors({tf.constant({1, 2}), tf.constant(3)})))
    assert.equal(1, D.from_tensors(tf.constant(1)):cardinality())
  end)

  it("range has tf.range's values (0-based, never shifted), int64", function()
    assert.same({0, 1, 2, 3, 4}, values(D.range(5)))
    assert.same({2, 4, 6}, values(D.range(2, 8, 2)))
    assert.same({5, 3, 1}, values(D.range(5, 0, -2)))
    assert.same({}, values(D.range(3, 1)))
    assert.equal(tf.int64, D.range(3):iter()().dtype)
    assert.equal(tf.int32, D.range(3, {dtype = tf.int32}):iter()().dtype)
    assert.equal(3, D.range(5, 0, -2):cardinality())
  end)

  it("from_generator calls a Lua iterator, converting values (output_signature dtype)", function()
    local ds = D.from_generator(function()
      local i = 0
      return function()
        i = i + 1
        if i <= 3 then return {i, i * 10}, i * 0.5 end
      end
    end, {output_signature = {tf.TensorSpec({2}, tf.int64), tf.TensorSpec({}, tf.float32)}})
    assert.same({{{1, 10}, 0.5}, {{2, 20}, 1.0}, {{3, 30}, 1.5}}, values(ds))
    local x, y = ds:iter()()
    assert.equal(tf.int64, x.dtype)
    assert.equal(tf.float32, y.dtype)
    assert.equal(tf.data.UNKNOWN_CARDINALITY, ds:cardinality())
    -- each iteration calls the generator again
    assert.equal(3, #values(ds))
  end)

  it("from_generator checks values against output_signature", function()
    local ds = D.from_generator(function()
      local done = false
      return function() if not done then done = true; return tf.constant({1, 2, 3}) end end
    end, {output_signature = tf.TensorSpec({2}, tf.int32)})
    assert.tf_error("InvalidArgumentError", "from_generator: element component 1 has shape (3,), output_signature " ..
      "says (2,)", function() values(ds) end)
    local bad = D.from_generator(function() return 5 end)
    assert.tf_error("TypeError", "from_generator: the generator must return an iterator function", function()
      values(bad)
    end)
    assert.tf_error("TypeError", "from_generator: 'generator' must be a function", D.from_generator, 5)
  end)

  it("zip pairs elements and stops at the shortest", function()
    local z = D.zip(D.range(3), D.from_tensor_slices({10, 20, 30, 40}))
    assert.same({{0, 10}, {1, 20}, {2, 30}}, values(z))
    assert.equal(3, z:cardinality())
    assert.same(values(z), values(D.zip({D.range(3), D.from_tensor_slices({10, 20, 30, 40})})))
    -- a tuple element of one input becomes an array table
    local zz = D.zip(D.range(2), D.from_tensor_slices({tf.constant({1, 2}), tf.constant({3, 4})}))
    assert.same({{0, {1, 3}}, {1, {2, 4}}}, values(zz))
    assert.tf_error("TypeError", "zip: 'datasets[2]' must be a tf.data.Dataset", D.zip, D.range(2), 5)
  end)
end)

describe("tf.data.Dataset transformations", function()
  it("take, skip and repeat (repeat_ and ds['repeat'])", function()
    assert.same({0, 1}, values(D.range(5):take(2)))
    assert.same({0, 1, 2, 3, 4}, values(D.range(5):take(-1)))
    assert.same({3, 4}, values(D.range(5):skip(3)))
    assert.same({}, values(D.range(5):skip(-1)))
    assert.same({0, 1, 0, 1, 0, 1}, values(D.range(2):repeat_(3)))
    assert.same({0, 1, 0, 1}, values(D.range(2)["repeat"](D.range(2), 2)))
    assert.same({0, 1, 0, 1, 0}, values(D.range(2):repeat_():take(5)))
    assert.same({}, values(D.range(2):repeat_(0)))
    -- the same on a tensor-slices pipeline (row indices, then gathered)
    local s = D.from_tensor_slices({1, 2, 3})
    assert.same({2, 3, 1, 2, 3}, values(s:repeat_(2):skip(1)))
    assert.same({2, 3}, values(s:skip(1):take(2)))
    assert.same({1, 2, 3, 1}, values(s:repeat_():take(4)))
  end)

  it("map traces its function once and gives its values as the element", function()
    local calls = 0
    local ds = D.from_tensor_slices({tf.constant({1, 2, 3}), tf.constant({10, 20, 30})}):map(function(x, y)
      calls = calls + 1
      return x + y, x * y
    end)
    assert.same({{11, 10}, {22, 40}, {33, 90}}, values(ds))
    assert.same({{11, 10}, {22, 40}, {33, 90}}, values(ds))
    assert.equal(1, calls)   -- one trace, replayed as a graph
    local dict = D.range(2):map(function(v) return {v = v, sq = v * v} end)
    assert.same({{v = 0, sq = 0}, {v = 1, sq = 1}}, values(dict))
    assert.tf_error("ValueError", "map: the function returned no value", function()
      values(D.range(2):map(function(v) end))
    end)
  end)

  it("filter keeps the elements whose predicate is true", function()
    local ds = D.range(10):filter(function(v) return tf.equal(v % 3, 0) end)
    assert.same({0, 3, 6, 9}, values(ds))
    assert.equal(tf.data.UNKNOWN_CARDINALITY, ds:cardinality())
    local bad = D.range(3):filter(function(v) return v end)
    assert.tf_error("InvalidArgumentError", "filter: the predicate must return a bool scalar, got int64 ()",
      function() values(bad) end)
  end)

  it("enumerate counts from 1 (luatf positions are 1-based), or from start", function()
    local got = {}
    for i, v in D.from_tensor_slices({7, 8, 9}):enumerate():iter() do
      assert.equal(tf.int64, i.dtype)
      got[#got + 1] = {i:item(), v:item()}
    end
    assert.same({{1, 7}, {2, 8}, {3, 9}}, got)
    assert.same({{0, 7}, {1, 8}}, values(D.from_tensor_slices({7, 8}):enumerate(0)))
    -- tuple elements stay flat: (index, x, y)
    assert.same({{1, 1, 3}, {2, 2, 4}},
      values(D.from_tensor_slices({tf.constant({1, 2}), tf.constant({3, 4})}):enumerate()))
  end)

  it("cache replays the first complete iteration", function()
    local n = 0
    local ds = D.from_generator(function()
      n = n + 1
      local i = 0
      return function() i = i + 1; if i <= 2 then return i + 10 * n end end
    end):cache()
    assert.same({11, 12}, values(ds))
    assert.same({11, 12}, values(ds))
    assert.equal(1, n)
    -- cache(filename) is a file cache: spec/data/files_spec.lua
    assert.tf_error("TypeError", "cache: 'filename' must be a string", function() D.range(2):cache(3) end)
  end)

  it("prefetch passes the elements through unchanged", function()
    assert.same({0, 1, 2, 3}, values(D.range(4):prefetch(2)))
    assert.same({0, 1, 2}, values(D.range(3):prefetch(tf.data.AUTOTUNE)))
    assert.equal(4, D.range(4):prefetch(1):cardinality())
  end)

  it("prefetch of batches of tensor slices (a worker thread) gives the same batches, in order", function()
    local x = tf.reshape(tf.range(0, 200, 1, tf.float32), {50, 2, 2})
    local y = tf.range(0, 50, 1, tf.int64)
    local function batches(ds)
      local out = {}
      for e in ds:iter() do out[#out + 1] = {e.x:totable(), e.y:totable()} end
      return out
    end
    local base = D.from_tensor_slices({x = x, y = y})
    for _, mk in ipairs({
      function(d) return d:batch(8) end,
      function(d) return d:batch(8, true) end,
      function(d) return d:shuffle(50, 4):batch(7) end,
      function(d) return d:shuffle(10, 4):skip(3):take(40):repeat_(2):batch(16) end,
    }) do
      local plain = batches(mk(base))
      assert.same(plain, batches(mk(base):prefetch(3)))
      assert.same(plain, batches(mk(base):prefetch(tf.data.AUTOTUNE)))
    end
    -- the element dtypes and shapes are kept
    local it = base:batch(8):prefetch(2):iter()
    local e = it()
    assert.equal(tf.float32, e.x.dtype)
    assert.same({8, 2, 2}, e.x.shape:as_list())
    -- an abandoned iteration stops its worker when collected; the dataset stays usable
    for i = 1, 5 do local it2 = base:batch(4):prefetch(1):iter(); it2() end
    collectgarbage()
    collectgarbage()
    assert.equal(7, #batches(base:batch(8):prefetch(2)))
    -- string sources (not shareable) take the buffering path
    local s = D.from_tensor_slices(tf.constant({"a", "b", "c"})):batch(2):prefetch(2)
    local got = {}
    for t in s:iter() do got[#got + 1] = t:totable() end
    assert.same({{"a", "b"}, {"c"}}, got)
  end)

  it("concatenate", function()
    assert.same({0, 1, 0, 1, 2}, values(D.range(2):concatenate(D.range(3))))
  end)

  it("iter: a fresh iterator each time; get_next raises OutOfRangeError at the end", function()
    local ds = D.range(2)
    local it = ds:iter()
    assert.equal(0, it:get_next():item())
    assert.equal(1, it:get_next():item())
    assert.tf_error("OutOfRangeError", "end of sequence", function() it:get_next() end)
    assert.same({0, 1}, values(ds))
    -- an early break leaves the dataset reusable
    for _ in ds:iter() do break end
    assert.same({0, 1}, values(ds))
  end)

  it("reduce folds the elements eagerly", function()
    local s = D.range(1, 5):reduce(tf.constant(0, tf.int64), function(acc, v) return acc + v end)
    assert.equal(10, s:item())
    local t = D.from_tensor_slices({tf.constant({1, 2}), tf.constant({3, 4})}):reduce({tf.constant(0), tf.constant(1)},
      function(st, x, y) return {st[1] + x, st[2] * y} end)
    assert.equal(3, t[1]:item())
    assert.equal(12, t[2]:item())
  end)
end)

describe("tf.data.Dataset:cardinality", function()
  local INF, UNK = tf.data.INFINITE_CARDINALITY, tf.data.UNKNOWN_CARDINALITY
  it("is a Lua integer, or INFINITE (-1) / UNKNOWN (-2)", function()
    assert.equal(-1, INF)
    assert.equal(-2, UNK)
    local ds = D.from_tensor_slices(tf.zeros({10, 3}))
    assert.equal(10, ds:cardinality())
    assert.equal(4, ds:batch(3):cardinality())
    assert.equal(3, ds:batch(3, true):cardinality())
    assert.equal(3, ds:batch(3, {drop_remainder = true}):cardinality())
    assert.equal(7, ds:skip(3):cardinality())
    assert.equal(0, ds:skip(30):cardinality())
    assert.equal(2, ds:take(2):cardinality())
    assert.equal(30, ds:repeat_(3):cardinality())
    assert.equal(INF, ds:repeat_():cardinality())
    assert.equal(5, ds:repeat_():take(5):cardinality())
    assert.equal(INF, ds:repeat_():skip(5):cardinality())
    assert.equal(10, ds:shuffle(4):map(function(x) return x end):enumerate():cardinality())
    assert.equal(UNK, ds:unbatch():cardinality())
    assert.equal(UNK, ds:filter(function() return true end):cardinality())
    assert.equal(0, D.range(0):repeat_():cardinality())
    assert.equal(10, #ds)
    assert.tf_error("TypeError", "the length of a dataset is infinite", function() return #ds:repeat_() end)
  end)
end)

describe("tf.data.Dataset errors", function()
  it("names the transformation and the argument", function()
    local ds = D.range(4)
    assert.tf_error("InvalidArgumentError", "batch: 'batch_size' must be positive, got 0", function() ds:batch(0) end)
    assert.tf_error("TypeError", "batch: 'batch_size' must be an integer, got string", function() ds:batch("a") end)
    assert.tf_error("InvalidArgumentError", "shuffle: 'buffer_size' must be positive", function() ds:shuffle(0) end)
    assert.tf_error("InvalidArgumentError", "take: 'count' must be >= -1, got -5", function() ds:take(-5) end)
    assert.tf_error("TypeError", "map: expected a function, got number", function() ds:map(3) end)
    assert.tf_error("TypeError", "batch: unexpected keyword argument 'drop'", function() ds:batch(2, {drop = true}) end)
    assert.tf_error("InvalidArgumentError", "range: 'step' must not be 0", D.range, 0, 4, 0)
    assert.tf_error("InvalidArgumentError", "from_tensor_slices: components have different first dimensions: " ..
      "(2,) and (3,)", D.from_tensor_slices, {tf.constant({1, 2}), tf.constant({1, 2, 3})})
    assert.tf_error("InvalidArgumentError", "from_tensor_slices: component 1 is a scalar", D.from_tensor_slices,
      tf.constant(3))
    assert.tf_error("TypeError", "from_tensor_slices: expected a tensor or a (nested) table of tensors",
      D.from_tensor_slices, {a = print})
    assert.tf_error("InvalidArgumentError", "reduce: the dataset is infinite", function()
      ds:repeat_():reduce(0, function(a) return a end)
    end)
    assert.tf_error("InvalidArgumentError", "as_list: the dataset is infinite", function() ds:repeat_():as_list() end)
  end)
end)

describe("Dataset.from_generator at the end of its data", function()
  -- a generator whose iterator raises when called again after it ended (as
  -- io.lines does), counting how often the factory runs
  local function strict(n)
    local made = 0
    local gen = function()
      made = made + 1
      local i, ended = 0, false
      return function()
        if ended then error("iterator resumed after its end", 0) end
        i = i + 1
        if i > n then ended = true return nil end
        return i
      end
    end
    return gen, function() return made end
  end

  it("never resumes a finished generator; each epoch restarts it through the factory", function()
    local gen, made = strict(5)
    local ds = tf.data.Dataset.from_generator(gen, {output_signature = tf.TensorSpec({}, tf.int32)}):batch(2)
    for epoch = 1, 3 do
      local got = {}
      for b in ds:iter() do got[#got + 1] = b:totable() end
      assert.same({{1, 2}, {3, 4}, {5}}, got)
      assert.equal(epoch, made())
    end
  end)

  it("reads a file with io.lines over several epochs, partial last batch included", function()
    local path = os.tmpname()
    local fh = assert(io.open(path, "w"))
    fh:write("1\n2\n3\n4\n5\n")
    fh:close()
    local ds = tf.data.Dataset.from_generator(function() return io.lines(path, "n") end,
      {output_signature = tf.TensorSpec({}, tf.float32)}):repeat_(2):batch(3)
    local got = {}
    for b in ds:iter() do got[#got + 1] = b:totable() end
    os.remove(path)
    assert.same({{1, 2, 3}, {4, 5, 1}, {2, 3, 4}, {5}}, got)
  end)

  it("trains for several epochs with model:fit", function()
    local gen, made = strict(6)
    local ds = tf.data.Dataset.from_generator(function()
      local it = gen()
      return function()
        local i = it()
        if i == nil then return nil end
        return tf.constant({i / 6}, tf.float32), tf.constant({2 * i / 6}, tf.float32)
      end
    end, {output_signature = {tf.TensorSpec({1}, tf.float32), tf.TensorSpec({1}, tf.float32)}}):batch(4)
    local model = tf.keras.Sequential{tf.keras.layers.Dense{1}}
    model:compile{optimizer = tf.keras.optimizers.SGD{learning_rate = 0.1}, loss = "mse"}
    local h = model:fit(ds, {epochs = 3, verbose = 0})
    assert.equal(3, #h.history.loss)
    assert.equal(3, made())
  end)
end)

describe("prefetch on the Lua thread", function()
  it("hands out each element as it is made, not after filling its buffer", function()
    local made = 0
    local ds = tf.data.Dataset.from_generator(function()
      local i = 0
      return function() i = i + 1; made = made + 1; return i end
    end, {output_signature = tf.TensorSpec({}, tf.int32)})
    local it = ds:prefetch(1000):iter()
    assert.equal(1, it():item())
    assert.equal(1, made)
    assert.equal(2, it():item())
    assert.equal(2, made)
  end)

  it("gives the first element of an infinite input with a huge buffer", function()
    local ds = tf.data.Dataset.from_tensor_slices(tf.constant({1.0, 2.0, 3.0})):repeat_()
    local it = ds:prefetch(2 ^ 40 // 1):iter()
    assert.equal(1, it():item())
    assert.equal(2, it():item())
  end)
end)
