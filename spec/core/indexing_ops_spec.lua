-- The indexing family: gather_nd, scatter_nd, tensor_scatter_nd_*,
-- tf.where(condition), boolean_mask, unique(+counts), roll, repeat,
-- meshgrid, sequence_mask, ensure_shape, identity_n. Index values are
-- 1-based. Expected values are hand-worked or recomputed in plain Lua over
-- the flat row-major data (references below); each op also runs inside
-- tf.fn, with unknown dimensions where the output size depends on data.
local tf = require("tf")
local support = require("support")
local lcg, numel, nest, flatten = support.lcg, support.numel, support.nest, support.flatten

-- {==== plain Lua references (flat, row-major)
local function strides(dims)
  local s, acc = {}, 1
  for d = #dims, 1, -1 do
    s[d] = acc
    acc = acc * dims[d]
  end
  return s
end

-- gather_nd: rows of K 1-based indices into the first K dims
local function ref_gather_nd(flat, dims, rows, K)
  local st, slice = strides(dims), 1
  for d = K + 1, #dims do slice = slice * dims[d] end
  local out = {}
  for _, row in ipairs(rows) do
    local off = 0
    for k = 1, K do off = off + (row[k] - 1) * st[k] end
    for q = 1, slice do out[#out + 1] = flat[off + q] end
  end
  return out
end

-- scatter of rows into 'base' (a flat copy): combine(old, new) per element
local function ref_scatter(base, dims, rows, K, upd, combine)
  local st, slice = strides(dims), 1
  for d = K + 1, #dims do slice = slice * dims[d] end
  local out = table.move(base, 1, #base, 1, {})
  for r, row in ipairs(rows) do
    local off = 0
    for k = 1, K do off = off + (row[k] - 1) * st[k] end
    for q = 1, slice do out[off + q] = combine(out[off + q], upd[(r - 1) * slice + q]) end
  end
  return out
end

-- uniform in [0, 1) from support's lcg (which gives [-1, 1))
local function unit(seed)
  local r = lcg(seed)
  return function() return (r() + 1) / 2 end
end

local function random_rows(n, dims, K, seed)
  local r, rows = unit(seed), {}
  for i = 1, n do
    rows[i] = {}
    for k = 1, K do rows[i][k] = 1 + math.floor(r() * dims[k]) end
  end
  return rows
end

local function random_flat(n, seed)
  local r, out = unit(seed), {}
  for i = 1, n do out[i] = math.floor(r() * 2000 - 1000) / 100 end
  return out
end
-- }====

describe("tf.gather_nd", function()
  it("gathers elements and slices at 1-based positions (hand-worked)", function()
    local p = tf.constant({{1, 2}, {3, 4}})
    assert.tensor_near({3, 2}, tf.gather_nd(p, {{2, 1}, {1, 2}}))
    assert.tensor_near({{3, 4}, {1, 2}}, tf.gather_nd(p, {{2}, {1}}))
    assert.tensor_near({{4}, {1}}, tf.gather_nd(p, {{{2, 2}}, {{1, 1}}}))
    assert.equal(tf.int32, tf.gather_nd(p, {{1, 1}}).dtype)
  end)

  it("matches a float64 reference over random shapes and int64 indices", function()
    for seed = 1, 4 do
      local dims = {2 + seed % 3, 3, 2 + seed % 2}
      local flat = random_flat(numel(dims), seed)
      for K = 1, 3 do
        local rows = random_rows(5, dims, K, seed * 10 + K)
        local got = tf.gather_nd(tf.constant(nest(flat, dims), tf.float64), tf.constant(rows, tf.int64))
        local want_dims = {5}
        for d = K + 1, 3 do want_dims[#want_dims + 1] = dims[d] end
        assert.shape(want_dims, got)
        assert.tensor_near(ref_gather_nd(flat, dims, rows, K), flatten(got:totable()))
      end
    end
  end)

  it("gathers strings", function()
    assert.same({"d", "a"}, tf.gather_nd(tf.constant({{"a", "b"}, {"c", "d"}}), {{2, 2}, {1, 1}}):totable())
  end)

  it("refuses out-of-range positions, naming the row and the index", function()
    local p = tf.constant({{1, 2}, {3, 4}})
    assert.tf_error("InvalidArgumentError",
      "gather_nd: indices[2] = [3, 1] does not index into param shape (2, 2) (indices are 1-based)",
      tf.gather_nd, p, {{1, 1}, {3, 1}})
    assert.tf_error("InvalidArgumentError", "gather_nd: indices[1] = [0, 1] does not index into param shape",
      tf.gather_nd, p, {{0, 1}})
    assert.tf_error("InvalidArgumentError", "gather_nd: indices[1, 2] = [-1]", tf.gather_nd, p, {{{1}, {-1}}})
  end)

  it("checks positions only when the result is not empty (as gather)", function()
    assert.shape({2, 0}, tf.gather_nd(tf.zeros({3, 0}), {{7}, {1}}))
    assert.shape({0}, tf.gather_nd(tf.constant({{1, 2}, {3, 4}}), tf.zeros({0, 2}, tf.int32)))
    assert.shape({2, 0}, tf.scatter_nd({{9}}, tf.zeros({1, 0}), {2, 0}))
  end)

  it("refuses bad dtypes and shapes", function()
    local p = tf.constant({{1, 2}, {3, 4}})
    assert.tf_error("TypeError", "gather_nd: 'indices' has dtype float32, expected int32 or int64",
      tf.gather_nd, p, tf.constant({{1.0}}))
    assert.tf_error("InvalidArgumentError", "gather_nd: the last dimension of indices (1, 3) (3) is larger than the "
      .. "rank of the indexed shape (2, 2)", tf.gather_nd, p, {{1, 1, 1}})
    assert.tf_error("InvalidArgumentError", "gather_nd: 'indices' must have rank >= 1, got a scalar",
      tf.gather_nd, p, tf.constant(1))
    assert.tf_error("InvalidArgumentError", "gather_nd: 'batch_dims' 2 must be in 0..1",
      tf.gather_nd, p, {{1}}, {batch_dims = 2})
  end)

  it("matches batch rows pairwise with batch_dims (a Lua reference)", function()
    local dims = {2, 3, 4}
    local flat = random_flat(24, 6)
    local idx = {{{3, 1}, {1, 4}}, {{2, 2}, {3, 3}}}
    local got = tf.gather_nd(tf.constant(nest(flat, dims), tf.float64), idx, {batch_dims = 1})
    assert.shape({2, 2}, got)
    local want = {}
    for b = 1, 2 do
      for r = 1, 2 do want[#want + 1] = flat[(b - 1) * 12 + (idx[b][r][1] - 1) * 4 + idx[b][r][2]] end
    end
    assert.tensor_near(want, flatten(got:totable()))
    assert.tf_error("InvalidArgumentError", "gather_nd: the first 1 (batch) dims of params (2, 3, 4) and indices "
      .. "(3, 1) must match", tf.gather_nd, tf.constant(nest(flat, dims)), {{1}, {1}, {1}}, {batch_dims = 1})
    local f = tf.fn(function(pp, ii) return tf.gather_nd(pp, ii, {batch_dims = 1}) end,
      {input_signature = {tf.TensorSpec({tf.None, 3, 4}, tf.float64), tf.TensorSpec({tf.None, 2, 2}, tf.int32)}})
    assert.tensor_near(want, flatten(f(tf.constant(nest(flat, dims), tf.float64), tf.constant(idx)):totable()))
  end)

  it("runs inside tf.fn with an unknown number of rows", function()
    local f = tf.fn(function(p, i) return tf.gather_nd(p, i) end,
      {input_signature = {tf.TensorSpec({3, 2}), tf.TensorSpec({tf.None, 2}, tf.int32)}})
    local p = tf.constant({{1, 2}, {3, 4}, {5, 6}}, tf.float32)
    assert.tensor_near({6, 1, 3}, f(p, tf.constant({{3, 2}, {1, 1}, {2, 1}})))
    assert.tensor_near({4}, f(p, tf.constant({{2, 2}})))
    assert.tf_error("InvalidArgumentError", "gather_nd: indices[1] = [4, 1] does not index into param shape (3, 2)",
      f, p, tf.constant({{4, 1}}))
  end)

  it("has scatter_nd's adjoint as its gradient (duplicates add up)", function()
    local p = tf.constant({{1.0, 2.0}, {3.0, 4.0}})
    local tape = tf.GradientTape()
    tape:watch(p)
    local y = tape:record(function() return tf.gather_nd(p, {{2, 1}, {2, 1}, {1, 2}}) end)
    assert.tensor_near({{0, 1}, {2, 0}}, tape:gradient(y, p))
  end)
end)

describe("tf.scatter_nd", function()
  it("adds updates into zeros of the shape (hand-worked, duplicates sum)", function()
    assert.tensor_near({4, 0, 2, 0}, tf.scatter_nd({{1}, {3}, {1}}, tf.constant({1.0, 2.0, 3.0}), {4}))
    assert.tensor_near({{0, 0}, {5, 6}, {0, 0}}, tf.scatter_nd({{2}}, tf.constant({{5, 6}}), {3, 2}))
  end)

  it("matches a float64 reference", function()
    local dims = {3, 4, 2}
    for K = 1, 3 do
      local rows = random_rows(6, dims, K, 40 + K)
      local slice = 1
      for d = K + 1, 3 do slice = slice * dims[d] end
      local upd = random_flat(6 * slice, K)
      local udims = {6}
      for d = K + 1, 3 do udims[#udims + 1] = dims[d] end
      local zeros = {}
      for i = 1, numel(dims) do zeros[i] = 0 end
      local got = tf.scatter_nd(tf.constant(rows), tf.constant(nest(upd, udims), tf.float64), dims)
      assert.tensor_near(ref_scatter(zeros, dims, rows, K, upd, function(a, b) return a + b end),
        flatten(got:totable()), {atol = 1e-12})
    end
  end)

  it("refuses out-of-range positions and mismatched updates", function()
    assert.tf_error("InvalidArgumentError", "scatter_nd: indices[2] = [5] does not index into shape (4,)",
      tf.scatter_nd, {{1}, {5}}, tf.constant({1, 2}), {4})
    assert.tf_error("InvalidArgumentError", "scatter_nd: 'updates' has shape (3,), expected (2,)",
      tf.scatter_nd, {{1}, {2}}, tf.constant({1, 2, 3}), {4})
    assert.tf_error("InvalidArgumentError", "scatter_nd: 'shape' must have sizes >= 0",
      tf.scatter_nd, {{1}}, tf.constant({1}), {-1})
    assert.tf_error("TypeError", "scatter_nd: 'updates' has dtype bool", tf.scatter_nd, {{1}}, tf.constant({true}), {2})
  end)

  it("runs inside tf.fn with an unknown number of updates", function()
    local f = tf.fn(function(i, u) return tf.scatter_nd(i, u, {3}) end,
      {input_signature = {tf.TensorSpec({tf.None, 1}, tf.int32), tf.TensorSpec({tf.None})}})
    assert.tensor_near({0, 7, 1}, f(tf.constant({{2}, {3}, {2}}), tf.constant({3, 1, 4}, tf.float32)))
  end)
end)

describe("tf.tensor_scatter_nd_update/add/sub/max/min", function()
  local base = {{1, 2, 3}, {4, 5, 6}}
  local rows = {{2, 3}, {1, 1}, {2, 3}}
  local upd = {10, -7, 20}

  it("wrap integer sums around, as TensorFlow (no undefined overflow)", function()
    local big = tf.constant({2147483647, -2147483648}, tf.int32)
    assert.same({-2147483648, -2147483648},
                tf.tensor_scatter_nd_add(big, {{1}, {2}}, tf.constant({1, 0}, tf.int32)):totable())
    assert.same({2147483647, 2147483647},
                tf.tensor_scatter_nd_sub(big, {{1}, {2}}, tf.constant({0, 1}, tf.int32)):totable())
    assert.same({math.mininteger}, tf.scatter_nd({{1}, {1}}, tf.constant({math.maxinteger, 1}, tf.int64), {1}):totable())
  end)

  it("combine each update with the tensor (hand-worked)", function()
    local t = tf.constant(base)
    -- update: the last duplicate wins
    assert.tensor_near({{-7, 2, 3}, {4, 5, 20}}, tf.tensor_scatter_nd_update(t, rows, upd))
    assert.tensor_near({{-6, 2, 3}, {4, 5, 36}}, tf.tensor_scatter_nd_add(t, rows, upd))
    assert.tensor_near({{8, 2, 3}, {4, 5, -24}}, tf.tensor_scatter_nd_sub(t, rows, upd))
    assert.tensor_near({{1, 2, 3}, {4, 5, 20}}, tf.tensor_scatter_nd_max(t, rows, upd))
    assert.tensor_near({{-7, 2, 3}, {4, 5, 6}}, tf.tensor_scatter_nd_min(t, rows, upd))
    assert.tensor_near(base, t)   -- the input is unchanged
  end)

  it("match a float64 reference with slices", function()
    local dims = {4, 3}
    local flat = random_flat(12, 9)
    local r = random_rows(5, dims, 1, 77)
    local u = random_flat(15, 8)
    local combine = {
      update = function(_, b) return b end, add = function(a, b) return a + b end,
      sub = function(a, b) return a - b end, max = math.max, min = math.min,
    }
    for how, fn in pairs(combine) do
      local got = tf["tensor_scatter_nd_" .. how](tf.constant(nest(flat, dims), tf.float64), r,
        tf.constant(nest(u, {5, 3}), tf.float64))
      assert.tensor_near(ref_scatter(flat, dims, r, 1, u, fn), flatten(got:totable()), {atol = 1e-12})
    end
  end)

  it("update strings", function()
    local t = tf.tensor_scatter_nd_update(tf.constant({"a", "b", "c"}), {{3}, {1}}, tf.constant({"z", "x"}))
    assert.same({"x", "b", "z"}, t:totable())
  end)

  it("refuse mismatched dtypes and out-of-range positions", function()
    assert.tf_error("TypeError", "tensor_scatter_nd_add: tensor and updates must have the same dtype",
      tf.tensor_scatter_nd_add, tf.constant({1, 2}), {{1}}, tf.constant({1.5}))
    assert.tf_error("InvalidArgumentError",
      "tensor_scatter_nd_max: indices[1] = [3] does not index into tensor shape (2,) (indices are 1-based)",
      tf.tensor_scatter_nd_max, tf.constant({1, 2}), {{3}}, {1})
    assert.tf_error("TypeError", "tensor_scatter_nd_min: 'tensor' has dtype string",
      tf.tensor_scatter_nd_min, tf.constant({"a"}), {{1}}, {"b"})
  end)

  it("run inside tf.fn", function()
    local f = tf.fn(function(t, i, u)
      return tf.tensor_scatter_nd_update(t, i, u), tf.tensor_scatter_nd_add(t, i, u), tf.tensor_scatter_nd_sub(t, i, u),
             tf.tensor_scatter_nd_max(t, i, u), tf.tensor_scatter_nd_min(t, i, u)
    end, {input_signature = {tf.TensorSpec({tf.None}, tf.int32), tf.TensorSpec({tf.None, 1}, tf.int32),
                             tf.TensorSpec({tf.None}, tf.int32)}})
    local up, add, sub, mx, mn = f(tf.constant({1, 2, 3}), tf.constant({{1}, {3}}), tf.constant({10, -30}))
    assert.tensor_near({10, 2, -30}, up)
    assert.tensor_near({11, 2, -27}, add)
    assert.tensor_near({-9, 2, 33}, sub)
    assert.tensor_near({10, 2, 3}, mx)
    assert.tensor_near({1, 2, -30}, mn)
  end)

  it("split the max gradient between tied elements, as TensorFlow", function()
    local t, u = tf.constant({1.0, 5.0}), tf.constant({5.0})
    local tape = tf.GradientTape({persistent = true})
    tape:watch(t)
    tape:watch(u)
    local y = tape:record(function() return tf.tensor_scatter_nd_max(t, {{2}}, u) end)
    assert.tensor_near({1, 0.5}, tape:gradient(y, t))
    assert.tensor_near({0.5}, tape:gradient(y, u))
  end)
end)

describe("tf.where with one argument", function()
  it("gives the 1-based coordinates of the true elements, int64 (num_true, rank)", function()
    local w = tf.where(tf.constant({{true, false, true}, {false, false, true}}))
    assert.equal(tf.int64, w.dtype)
    assert.same({{1, 1}, {1, 3}, {2, 3}}, w:totable())
    assert.same({{2}, {4}}, tf.where(tf.constant({0.0, 2.5, 0.0, -1.0})):totable())
    assert.shape({0, 1}, tf.where(tf.constant({false, false})))
    assert.shape({1, 0}, tf.where(tf.constant(true)))
  end)

  it("matches a plain Lua scan of a random 3-D condition", function()
    local r, flat, dims = unit(5), {}, {3, 2, 4}
    for i = 1, 24 do flat[i] = r() < 0.4 end
    local want, i = {}, 0
    for a = 1, 3 do for b = 1, 2 do for c = 1, 4 do
      i = i + 1
      if flat[i] then want[#want + 1] = {a, b, c} end
    end end end
    assert.same(want, tf.where(tf.constant(nest(flat, dims))):totable())
  end)

  it("keeps the three-argument form", function()
    assert.tensor_near({1, 20}, tf.where(tf.constant({true, false}), tf.constant({1, 2}), tf.constant({10, 20})))
    assert.tf_error("ValueError", "where: 'x' and 'y' must both be given or both be omitted",
      tf.where, tf.constant({true}), tf.constant({1}))
  end)

  it("sizes its output when a traced function runs", function()
    local f = tf.fn(function(c) return tf.where(c) end,
      {input_signature = {tf.TensorSpec({tf.None}, tf.bool)}})
    local cf = f:get_concrete_function(tf.TensorSpec({tf.None}, tf.bool))
    assert.same({{1}, {3}}, f(tf.constant({true, false, true})):totable())
    assert.same({{2}}, f(tf.constant({false, true})):totable())
    assert.matches("None, 1", tostring(cf))
  end)
end)

describe("tf.boolean_mask", function()
  local x = tf.constant({{1, 2}, {3, 4}, {5, 6}})

  it("keeps the slices where the mask is true (hand-worked)", function()
    assert.tensor_near({{1, 2}, {5, 6}}, tf.boolean_mask(x, tf.constant({true, false, true})))
    assert.tensor_near({1, 4, 5, 6}, tf.boolean_mask(x, tf.constant({{true, false}, {false, true}, {true, true}})))
    assert.tensor_near({{2}, {4}, {6}}, tf.boolean_mask(x, tf.constant({false, true}), {axis = 2}))
    assert.shape({0, 2}, tf.boolean_mask(x, tf.constant({false, false, false})))
  end)

  it("blames the caller's line for a bad argument", function()
    local _, e = pcall(function() local y = tf.boolean_mask(x, tf.constant(true)) return y end)
    assert.matches("indexing_ops_spec%.lua:%d+:", e.where)
  end)

  it("refuses masks that do not fit", function()
    assert.tf_error("ValueError", "boolean_mask: shapes (2,) and (3, 2) are incompatible",
      tf.boolean_mask, x, tf.constant({true, false}))
    assert.tf_error("ValueError", "boolean_mask: 'mask' cannot be a scalar", tf.boolean_mask, x, tf.constant(true))
    assert.tf_error("TypeError", "boolean_mask: 'mask' has dtype int32, expected bool",
      tf.boolean_mask, x, tf.constant({1, 0, 1}))
  end)

  it("runs inside tf.fn with an unknown number of rows", function()
    local f = tf.fn(function(t, m) return tf.boolean_mask(t, m) end,
      {input_signature = {tf.TensorSpec({tf.None, 2}, tf.int32), tf.TensorSpec({tf.None}, tf.bool)}})
    assert.tensor_near({{3, 4}}, f(x, tf.constant({false, true, false})))
    assert.tensor_near({{1, 2}, {3, 4}}, f(tf.constant({{1, 2}, {3, 4}}), tf.constant({true, true})))
  end)

  it("sends the gradient back to the kept slices", function()
    local p = tf.constant({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}})
    local tape = tf.GradientTape()
    tape:watch(p)
    local y = tape:record(function() return tf.boolean_mask(p, tf.constant({true, false, true})) * 3 end)
    assert.tensor_near({{3, 3}, {0, 0}, {3, 3}}, tape:gradient(y, p))
  end)

  it("has a gradient inside tf.fn over unknown dims (gather_nd's)", function()
    local f = tf.fn(function(t, m)
      local tape = tf.GradientTape()
      tape:watch(t)
      local y = tape:record(function() return tf.reduce_sum(tf.boolean_mask(t, m) * 2) end)
      return tape:gradient(y, t)
    end, {input_signature = {tf.TensorSpec({tf.None, tf.None}), tf.TensorSpec({tf.None}, tf.bool)}})
    assert.tensor_near({{2, 2}, {0, 0}, {2, 2}}, f(tf.ones({3, 2}), tf.constant({true, false, true})))
    assert.tensor_near({{0, 0, 0}}, f(tf.ones({1, 3}), tf.constant({false})))
  end)
end)

describe("tf.unique and tf.unique_with_counts", function()
  it("give the values in order of first appearance and 1-based positions", function()
    local y, idx = tf.unique(tf.constant({1, 1, 2, 4, 4, 4, 7, 8, 8}))
    assert.same({1, 2, 4, 7, 8}, y:totable())
    assert.same({1, 1, 2, 3, 3, 3, 4, 5, 5}, idx:totable())
    assert.equal(tf.int32, idx.dtype)
    local y2, i2, c2 = tf.unique_with_counts(tf.constant({"b", "a", "b", "c", "a"}), tf.int64)
    assert.same({"b", "a", "c"}, y2:totable())
    assert.same({1, 2, 1, 3, 2}, i2:totable())
    assert.same({2, 2, 1}, c2:totable())
    assert.equal(tf.int64, c2.dtype)
  end)

  it("treat -0.0 as 0.0 and keep every NaN apart, as TensorFlow", function()
    local y, idx = tf.unique(tf.constant({0.0, -0.0, 0 / 0, 1.0, 0 / 0}, tf.float64))
    local v = y:totable()
    assert.equal(4, #v)
    assert.equal(0, v[1])
    assert.is_true(v[2] ~= v[2])
    assert.same({1, 1, 2, 3, 4}, idx:totable())
  end)

  for _, size in ipairs({{50, 12}, {5000, 700}}) do
  it(("rebuild x as gather(y, idx) on %d random values in 0..%d (a Lua reference)"):format(size[1], size[2] - 1),
    function()
    local r, vals = unit(3), {}
    for i = 1, size[1] do vals[i] = math.floor(r() * size[2]) end
    local y, idx, count = tf.unique_with_counts(tf.constant(vals, tf.int64))
    local seen, order, counts = {}, {}, {}
    for _, v in ipairs(vals) do
      if not seen[v] then
        order[#order + 1] = v
        seen[v] = #order
      end
      counts[seen[v]] = (counts[seen[v]] or 0) + 1
    end
    assert.same(order, y:totable())
    assert.same(counts, count:totable())
    assert.same(vals, tf.gather(y, idx):totable())
  end)
  end

  it("refuse inputs that are not 1-D", function()
    assert.tf_error("InvalidArgumentError", "unique: 'x' must be 1-D, got shape (2, 1)", tf.unique,
      tf.constant({{1}, {2}}))
    assert.tf_error("TypeError", "unique: 'out_idx' must be tf.int32 or tf.int64", tf.unique, tf.constant({1}),
      tf.float32)
  end)

  it("size their outputs when a traced function runs", function()
    local f = tf.fn(function(x) return tf.unique_with_counts(x) end,
      {input_signature = {tf.TensorSpec({tf.None}, tf.int32)}})
    local y, idx, c = f(tf.constant({5, 3, 5}))
    assert.same({5, 3}, y:totable())
    assert.same({1, 2, 1}, idx:totable())
    assert.same({2, 1}, c:totable())
  end)
end)

describe("tf.roll", function()
  it("shifts elements along 1-based axes (hand-worked)", function()
    local x = tf.constant({{1, 2, 3}, {4, 5, 6}})
    assert.tensor_near({{3, 1, 2}, {6, 4, 5}}, tf.roll(x, 1, 2))
    assert.tensor_near({{6, 4, 5}, {3, 1, 2}}, tf.roll(x, {1, 1}, {1, 2}))
    assert.tensor_near({{2, 3, 1}, {5, 6, 4}}, tf.roll(x, -1, -1))
    assert.tensor_near({{2, 3, 1}, {5, 6, 4}}, tf.roll(x, {1, 1}, {2, 2}))   -- shifts of one axis add up
    assert.tensor_near({0, 1, 2, 3, 4}, tf.roll(tf.range(5), 10, 1))
  end)

  it("matches a Lua reference with shifts on every axis", function()
    local dims = {3, 4, 2}
    local flat = random_flat(24, 2)
    local shifts = {2, -5, 7}
    local got = flatten(tf.roll(tf.constant(nest(flat, dims), tf.float64), shifts, {1, 2, 3}):totable())
    local i = 0
    for a = 0, 2 do for b = 0, 3 do for c = 0, 1 do
      i = i + 1
      local sa, sb, sc = (a - 2) % 3, (b + 5) % 4, (c - 7) % 2
      assert.equal(flat[sa * 8 + sb * 2 + sc + 1], got[i])
    end end end
  end)

  it("refuses bad axes", function()
    assert.tf_error("InvalidArgumentError", "roll: 'axis' 3 is out of range", tf.roll, tf.constant({{1}}), 1, 3)
    assert.tf_error("InvalidArgumentError", "roll: 'axis' entry 1 is 0, but axes are 1-based", tf.roll,
      tf.constant({1}), 1, 0)
    assert.tf_error("InvalidArgumentError", "roll: 'shift' and 'axis' must have the same length, got 2 and 1",
      tf.roll, tf.constant({1}), {1, 2}, {1})
  end)

  it("runs inside tf.fn over unknown dims and rolls its gradient back", function()
    local f = tf.fn(function(x) return tf.roll(x, 1, 1) end, {input_signature = {tf.TensorSpec({tf.None})}})
    assert.tensor_near({3, 1, 2}, f(tf.constant({1, 2, 3}, tf.float32)))
    local x = tf.constant({1.0, 2.0, 3.0})
    local tape = tf.GradientTape()
    tape:watch(x)
    local y = tape:record(function() return tf.roll(x, 1, 1) * tf.constant({1.0, 10.0, 100.0}) end)
    assert.tensor_near({10, 100, 1}, tape:gradient(y, x))
  end)
end)

describe("tf.repeat", function()
  it("repeats elements or slices (hand-worked)", function()
    local x = tf.constant({{1, 2}, {3, 4}})
    assert.tensor_near({1, 1, 2, 2, 3, 3, 4, 4}, tf["repeat"](x, 2))
    assert.tensor_near({{1, 2}, {1, 2}, {3, 4}, {3, 4}}, tf["repeat"](x, 2, 1))
    assert.tensor_near({{1, 2, 2, 2}, {3, 4, 4, 4}}, tf.repeat_(x, {1, 3}, 2))
    assert.tensor_near({{3, 4}}, tf["repeat"](x, {0, 1}, {axis = 1}))
  end)

  it("refuses counts that do not fit", function()
    assert.tf_error("InvalidArgumentError", "repeat: 'repeats' has 3 entries but axis 1 of input has size 2",
      tf["repeat"], tf.constant({{1, 2}, {3, 4}}), {1, 2, 3}, 1)
    assert.tf_error("InvalidArgumentError", "repeat: 'repeats' must be non-negative integers, got -1",
      tf["repeat"], tf.constant({1}), -1)
  end)

  it("runs inside tf.fn with an unknown dim", function()
    local f = tf.fn(function(x) return tf["repeat"](x, 3, 1) end, {input_signature = {tf.TensorSpec({tf.None})}})
    assert.tensor_near({1, 1, 1, 2, 2, 2}, f(tf.constant({1, 2}, tf.float32)))
  end)
end)

describe("tf.meshgrid", function()
  it("builds xy and ij grids (hand-worked)", function()
    local g = tf.meshgrid(tf.constant({1, 2, 3}), tf.constant({4, 5}))
    assert.tensor_near({{1, 2, 3}, {1, 2, 3}}, g[1])
    assert.tensor_near({{4, 4, 4}, {5, 5, 5}}, g[2])
    local h = tf.meshgrid(tf.constant({1, 2, 3}), tf.constant({4, 5}), {indexing = "ij"})
    assert.tensor_near({{1, 1}, {2, 2}, {3, 3}}, h[1])
    assert.tensor_near({{4, 5}, {4, 5}, {4, 5}}, h[2])
    local k = tf.meshgrid(tf.constant({1, 2}), tf.constant({3}), tf.constant({4, 5, 6}))
    assert.shape({1, 2, 3}, k[1])
    assert.tensor_near({{{4, 5, 6}, {4, 5, 6}}}, k[3])
  end)

  it("refuses an unknown indexing", function()
    assert.tf_error("ValueError", "meshgrid: 'indexing' must be 'xy' or 'ij', got xx",
      tf.meshgrid, tf.constant({1}), {indexing = "xx"})
  end)

  it("runs inside tf.fn over unknown lengths", function()
    local f = tf.fn(function(a, b) return tf.meshgrid(a, b) end,
      {input_signature = {tf.TensorSpec({tf.None}), tf.TensorSpec({tf.None})}})
    local g = f(tf.constant({1, 2}, tf.float32), tf.constant({3, 4, 5}, tf.float32))
    assert.tensor_near({{1, 2}, {1, 2}, {1, 2}}, g[1])
    assert.tensor_near({{3, 3}, {4, 4}, {5, 5}}, g[2])
  end)
end)

describe("tf.sequence_mask", function()
  it("marks the first lengths[i] positions (hand-worked)", function()
    assert.same({{true, false, false, false}, {true, true, true, false}, {false, false, false, false}},
      tf.sequence_mask(tf.constant({1, 3, 0}), 4):totable())
    assert.shape({3, 3}, tf.sequence_mask(tf.constant({1, 3, 2})))
    assert.tensor_near({{1, 1, 0}}, tf.sequence_mask(tf.constant({2}), 3, tf.float32))
    assert.equal(tf.float32, tf.sequence_mask(tf.constant({2}), {maxlen = 3, dtype = tf.float32}).dtype)
  end)

  it("runs inside tf.fn, its width the largest length when maxlen is absent", function()
    local f = tf.fn(function(l) return tf.sequence_mask(l, 3) end)
    assert.same({{true, true, false}}, f(tf.constant({2})):totable())
    local g = tf.fn(function(l) return tf.sequence_mask(l, nil, tf.int32) end,
      {input_signature = {tf.TensorSpec({tf.None}, tf.int32)}})
    assert.same({{1, 0}, {1, 1}}, g(tf.constant({1, 2})):totable())
    assert.same({{1, 1, 1, 1}}, g(tf.constant({4})):totable())
    assert.shape({0, 0}, g(tf.zeros({0}, tf.int32)))
  end)

  it("refuses float lengths and negative maxlen", function()
    assert.tf_error("TypeError", "sequence_mask: 'lengths' has dtype float32, expected int32 or int64",
      tf.sequence_mask, tf.constant({1.5}))
    assert.tf_error("InvalidArgumentError", "sequence_mask: 'maxlen' must be a non-negative integer, got -1",
      tf.sequence_mask, tf.constant({1}), -1)
  end)
end)

describe("tf.ensure_shape", function()
  it("returns x when the shape fits, raises otherwise", function()
    local x = tf.constant({{1, 2, 3}})
    assert.tensor_near({{1, 2, 3}}, tf.ensure_shape(x, {1, -1}))
    assert.tensor_near({{1, 2, 3}}, tf.ensure_shape(x, nil))
    assert.tf_error("InvalidArgumentError",
      "ensure_shape: shape of tensor (1, 3) is not compatible with expected shape (1, 4)", tf.ensure_shape, x, {1, 4})
    assert.tf_error("InvalidArgumentError", "is not compatible with expected shape (3,)", tf.ensure_shape, x, {3})
  end)

  it("refines the traced shape and checks when the function runs", function()
    local seen
    local f = tf.fn(function(x)
      local y = tf.ensure_shape(x, {tf.None, 3})
      seen = tostring(y.shape)
      return y * 2
    end, {input_signature = {tf.TensorSpec({tf.None, tf.None})}})
    assert.tensor_near({{2, 4, 6}}, f(tf.constant({{1, 2, 3}}, tf.float32)))
    assert.equal("(None, 3)", seen)
    assert.tf_error("InvalidArgumentError",
      "ensure_shape: shape of tensor (1, 2) is not compatible with expected shape (None, 3)",
      f, tf.constant({{1, 2}}, tf.float32))
  end)
end)

describe("tf.identity_n", function()
  it("returns a list of identities", function()
    local out = tf.identity_n({tf.constant({1, 2}), tf.constant("a")})
    assert.equal(2, #out)
    assert.tensor_near({1, 2}, out[1])
    assert.equal("a", out[2]:item())
    assert.tf_error("TypeError", "identity_n: 'input' must be a list of tensors", tf.identity_n, tf.constant(1))
  end)

  it("runs inside tf.fn", function()
    local f = tf.fn(function(a, b) return tf.identity_n({a, b}) end)
    local out = f(tf.constant({1, 2}), tf.constant({3.5}))
    assert.tensor_near({1, 2}, out[1])
    assert.tensor_near({3.5}, out[2])
  end)
end)
