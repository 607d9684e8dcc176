-- tf.sort, tf.argsort, tf.math.top_k, tf.searchsorted, tf.math.bincount and
-- tf.math.segment_sum/mean/max (lua/tf/sort_ops.lua over the sort family).
-- Expected values come from plain-Lua references (table.sort with the
-- position as tie-break, linear scans) or are worked by hand.
local tf = require("tf")
local support = require("support")

-- {==== Plain-Lua references
local function rand_list(n, seed, scale, int)
  local r = support.lcg(seed)
  local t = {}
  for i = 1, n do
    local v = (r() - 0.5) * (scale or 10)
    t[i] = int and math.floor(v) or v
  end
  return t
end

-- stable order of 'v' (NaN above everything): positions, 1-based
local function ref_argsort(v, desc)
  local idx = {}
  for i = 1, #v do idx[i] = i end
  local function key_less(x, y)   -- x < y with NaN largest
    if x ~= x then return false end
    if y ~= y then return true end
    return x < y
  end
  table.sort(idx, function(i, j)
    local a, b = v[i], v[j]
    if desc then a, b = b, a end
    if key_less(a, b) then return true end
    if key_less(b, a) then return false end
    return i < j
  end)
  return idx
end

local function pick(v, idx)
  local r = {}
  for i = 1, #idx do r[i] = v[idx[i]] end
  return r
end
-- }====

describe("tf.sort", function()
  it("sorts float64 rows ascending and descending like table.sort", function()
    local v = rand_list(500, 7)
    assert.tensor_near(pick(v, ref_argsort(v)), tf.sort(tf.constant(v, tf.float64)), {atol = 0, rtol = 0})
    assert.tensor_near(pick(v, ref_argsort(v, true)), tf.sort(tf.constant(v, tf.float64), {direction = "DESCENDING"}),
                       {atol = 0, rtol = 0})
  end)

  it("sorts short and long int32 rows with negatives, and int64 beyond 2^32", function()
    for _, n in ipairs({5, 40, 3000}) do
      local v = rand_list(n, n, 2e6, true)
      assert.same(pick(v, ref_argsort(v)), tf.sort(tf.constant(v, tf.int32)):totable())
    end
    local big = {5000000000, -3, -7000000000, 2, 0}
    assert.same({-7000000000, -3, 0, 2, 5000000000}, tf.sort(tf.constant(big, tf.int64)):totable())
    assert.same({9, 3, 0}, tf.sort(tf.constant({3, 0, 9}, tf.uint8), -1, "DESCENDING"):totable())
  end)

  it("sorts long rows of every dtype at the insertion/radix boundary and beyond", function()
    for _, n in ipairs({48, 49, 700}) do
      local u = rand_list(n, n + 3, 500, true)
      for i = 1, n do u[i] = u[i] % 256 end
      assert.same(pick(u, ref_argsort(u)), tf.sort(tf.constant(u, tf.uint8)):totable())
      local w = rand_list(n, n + 4, 2 ^ 40, true)
      assert.same(pick(w, ref_argsort(w, true)), tf.sort(tf.constant(w, tf.int64), -1, "DESCENDING"):totable())
      assert.same(ref_argsort(w), tf.argsort(tf.constant(w, tf.int64), {index_type = tf.int64}):totable())
      local f = rand_list(n, n + 5, 1e6)
      assert.same(ref_argsort(f, true), tf.argsort(tf.constant(f, tf.float64), -1, "DESCENDING"):totable())
    end
  end)

  it("puts NaN above +inf and keeps -inf first", function()
    local nan = 0 / 0
    local s = tf.sort(tf.constant({1, nan, -math.huge, math.huge, -2}, tf.float32)):totable()
    assert.same({-math.huge, -2, 1, math.huge}, {s[1], s[2], s[3], s[4]})
    assert.is_true(s[5] ~= s[5])
  end)

  it("sorts along another axis (1-based) of a rank-3 tensor", function()
    local flat = rand_list(24, 3)
    local x = tf.reshape(tf.constant(flat, tf.float64), {2, 3, 4})
    local got = tf.sort(x, 2):totable()
    for i = 1, 2 do
      for k = 1, 4 do
        local col = {}
        for j = 1, 3 do col[j] = flat[(i - 1) * 12 + (j - 1) * 4 + k] end
        table.sort(col)
        for j = 1, 3 do assert.equal(col[j], got[i][j][k]) end
      end
    end
  end)

  it("rejects a bad direction, axis 0 and a scalar", function()
    assert.tf_error("ValueError", "sort: 'direction' must be 'ASCENDING' or 'DESCENDING', got UP",
                    tf.sort, {1, 2}, {direction = "UP"})
    assert.tf_error("InvalidArgumentError", "axes are 1-based", tf.sort, {{1, 2}}, 0)
    assert.tf_error("InvalidArgumentError", "'axis' 3 is out of range for rank 2", tf.sort, {{1, 2}}, 3)
    assert.tf_error("InvalidArgumentError", "scalar", tf.sort, tf.constant(1.5))
    assert.tf_error("TypeError", "sort: unknown option 'axes'", tf.sort, {1, 2}, {axes = 1})
    assert.tf_error("TypeError", "expected float32, float64, float16, bfloat16, int32, int64 or uint8", tf.sort, {"b", "a"})
  end)

  it("blames the caller's line", function()
    for _, f in ipairs({
      function() local r = tf.sort({{1, 2}}, 3); return r end,
      function() local r = tf.sort({1, 2}, {axes = 1}); return r end,
      function() local r = tf.argsort({1, 2}, {direction = "UP"}); return r end,
    }) do
      local ok, e = pcall(f)
      assert.is_false(ok)
      assert.matches("sort_ops_spec%.lua:%d+:", e.where)
    end
  end)

  it("passes the gradient back to where each value came from", function()
    local x = tf.constant({3, 1, 2}, tf.float64)
    local tape = tf.GradientTape()
    tape:watch(x)
    local y = tape:record(function() return tf.sort(x) * tf.constant({10, 20, 30}, tf.float64) end)
    assert.tensor_near({30, 10, 20}, tape:gradient(y, x))
  end)

  it("has a gradient inside tf.fn with unknown dims", function()
    local f = tf.fn(function(x)
      local tape = tf.GradientTape()
      tape:watch(x)
      local y = tape:record(function() return tf.sort(x) * tf.constant({1, 10, 100}, tf.float64) end)
      return tape:gradient(y, x)
    end, {input_signature = {tf.TensorSpec({tf.None, tf.None}, tf.float64)}})
    assert.tensor_near({{100, 1, 10}, {10, 100, 1}}, f(tf.constant({{3, 1, 2}, {5, 9, -4}}, tf.float64)))
  end)

  it("runs inside tf.fn with an unknown row length", function()
    local f = tf.fn(function(x) return tf.sort(x, {direction = "DESCENDING"}) end,
                    {input_signature = {tf.TensorSpec({2, tf.None}, tf.float32)}})
    assert.tensor_near({{3, 2, 1}, {5, 4, 0}}, f(tf.constant({{1, 3, 2}, {0, 4, 5}}, tf.float32)))
    assert.tensor_near({{9}, {8}}, f(tf.constant({{9}, {8}}, tf.float32)))
  end)
end)

describe("tf.argsort", function()
  it("is stable in both directions (ties keep the lower position first)", function()
    local v = {2, 1, 2, 1, 3, 2}
    assert.same({2, 4, 1, 3, 6, 5}, tf.argsort(v):totable())
    assert.same({5, 1, 3, 6, 2, 4}, tf.argsort(v, {direction = "DESCENDING"}):totable())
  end)

  it("matches a stable reference on long rows with many ties, -0 equal to +0", function()
    local v = rand_list(2000, 11, 20, true)
    for i = 1, #v, 7 do v[i] = 0.0 end
    for i = 3, #v, 11 do v[i] = -0.0 end
    for _, desc in ipairs({false, true}) do
      local got = tf.argsort(tf.constant(v, tf.float32), {direction = desc and "DESCENDING" or "ASCENDING"})
      assert.same(ref_argsort(v, desc), got:totable())
    end
  end)

  it("sorts one long row stably (radix passes), values and positions", function()
    local v = rand_list(150000, 5, 1000, true)   -- many ties
    for i = 1, #v, 5 do v[i] = v[i] + 0.5 end
    for _, desc in ipairs({false, true}) do
      local order = ref_argsort(v, desc)
      local dir = desc and "DESCENDING" or "ASCENDING"
      assert.same(order, tf.argsort(tf.constant(v, tf.float32), {direction = dir}):totable())
      assert.same(pick(v, order), tf.sort(tf.constant(v, tf.float32), {direction = dir}):totable())
      local iv = {}
      for i = 1, #v do iv[i] = math.floor(v[i]) end
      assert.same(ref_argsort(iv, desc), tf.argsort(tf.constant(iv, tf.int32), {direction = dir}):totable())
    end
  end)

  it("returns int64 positions on request and works along axis 1", function()
    local r = tf.argsort({{3, 1}, {1, 2}}, 1, nil, nil, {index_type = tf.int64})
    assert.equal(tf.int64, r.dtype)
    assert.same({{2, 1}, {1, 2}}, r:totable())
  end)
end)

describe("tf.math.top_k", function()
  it("returns the k largest per row and their 1-based positions", function()
    for _, n in ipairs({30, 1000}) do
      local v = rand_list(3 * n, n + 1)
      local vals, idx = tf.math.top_k(tf.reshape(tf.constant(v, tf.float64), {3, n}), 5)
      assert.shape({3, 5}, vals)
      assert.equal(tf.int32, idx.dtype)
      for r = 1, 3 do
        local row = {}
        for i = 1, n do row[i] = v[(r - 1) * n + i] end
        local order = ref_argsort(row, true)
        for q = 1, 5 do
          assert.equal(order[q], idx:totable()[r][q])
          assert.equal(row[order[q]], vals:totable()[r][q])
        end
      end
    end
  end)

  it("breaks ties by the lower position, also on long rows", function()
    local _, idx = tf.math.top_k({1, 5, 5, 2, 5}, 2)
    assert.same({2, 3}, idx:totable())
    local row = {}
    for i = 1, 500 do row[i] = i % 3 end
    local _, i2 = tf.math.top_k(tf.constant(row, tf.float32), 4)
    assert.same({2, 5, 8, 11}, i2:totable())
  end)

  it("takes k = 0 and k = the row length; refuses more", function()
    local v, i = tf.math.top_k({{1, 2}}, 0)
    assert.shape({1, 0}, v)
    assert.shape({1, 0}, i)
    local v2 = tf.math.top_k({3, 1, 2}, 3)
    assert.same({3, 2, 1}, v2:totable())
    assert.tf_error("InvalidArgumentError", "top_k: input (3,) must have at least k = 4 columns", tf.math.top_k,
                    {1, 2, 3}, 4)
    assert.tf_error("InvalidArgumentError", "'k' is -1", tf.math.top_k, {1, 2, 3}, -1)
    assert.tf_error("TypeError", "top_k: 'k' must be an integer", tf.math.top_k, {1, 2, 3}, 1.5)
    assert.tf_error("TypeError", "top_k: 'index_type' must be int32 or int64, got float32", tf.math.top_k,
                    {1, 2, 3}, 1, {index_type = tf.float32})
  end)

  it("has a gradient inside tf.fn too (values scattered back to their positions)", function()
    local f = tf.fn(function(x)
      local tape = tf.GradientTape()
      tape:watch(x)
      local y = tape:record(function()
        local v = tf.math.top_k(x, 2)
        return tf.reduce_sum(v * tf.constant({{1, 10}}, tf.float64))
      end)
      return tape:gradient(y, x)
    end, {input_signature = {tf.TensorSpec({tf.None, tf.None}, tf.float64)}})
    assert.tensor_near({{0, 1, 10, 0}, {10, 0, 0, 1}}, f(tf.constant({{1, 5, 3, 2}, {4, 0, -1, 6}}, tf.float64)))
    assert.tensor_near({{10, 1}}, f(tf.constant({{7, 8}}, tf.float64)))
  end)

  it("is tf.nn.top_k too and runs inside tf.fn", function()
    assert.equal(tf.math.top_k, tf.nn.top_k)
    local f = tf.fn(function(x) return tf.math.top_k(x, 2) end,
                    {input_signature = {tf.TensorSpec({tf.None, tf.None}, tf.float32)}})
    local v, i = f(tf.constant({{1, 9, 3}, {7, 2, 8}}, tf.float32))
    assert.tensor_near({{9, 3}, {8, 7}}, v)
    assert.same({{2, 3}, {3, 1}}, i:totable())
  end)
end)

describe("tf.searchsorted", function()
  local seq = {1, 3, 3, 5}
  local function ref(v, right)   -- 1-based insertion position
    local p = 1
    for i = 1, #seq do
      if (right and seq[i] <= v) or (not right and seq[i] < v) then p = i + 1 end
    end
    return p
  end

  it("gives 1-based insertion positions on the left and right of equal entries", function()
    local vals = {0, 1, 2, 3, 4, 5, 6}
    local left, right = {}, {}
    for i, v in ipairs(vals) do left[i], right[i] = ref(v, false), ref(v, true) end
    assert.same(left, tf.searchsorted(seq, vals):totable())
    assert.same(right, tf.searchsorted(seq, vals, "right"):totable())
    assert.same({1, 1, 2, 2, 4, 4, 5}, left)   -- the reference itself, by hand
  end)

  it("searches each row of a batch and returns int64 on request", function()
    local r = tf.searchsorted(tf.constant({{1, 2, 3}, {10, 20, 30}}, tf.float32),
                              tf.constant({{2.5, 0}, {25, 31}}, tf.float32), {out_type = tf.int64})
    assert.equal(tf.int64, r.dtype)
    assert.same({{3, 1}, {3, 4}}, r:totable())
  end)

  it("rejects mismatched leading dims, dtypes and sides", function()
    assert.tf_error("InvalidArgumentError", "same rank and leading dims", tf.searchsorted,
                    tf.constant({{1, 2}}), tf.constant({{1}, {2}}))
    assert.tf_error("TypeError", "'values' has dtype float32, 'sorted_sequence' has int32", tf.searchsorted,
                    tf.constant({1, 2}), tf.constant({1.5}))
    assert.tf_error("ValueError", "'side' must be 'left' or 'right'", tf.searchsorted, {1, 2}, {1}, "middle")
  end)
end)

describe("tf.math.bincount", function()
  it("counts each value v at position v + 1", function()
    assert.same({1, 2, 0, 1}, tf.math.bincount({1, 1, 3, 0}):totable())
    assert.same({0, 0, 2}, tf.math.bincount({{2}, {2}}):totable())
  end)

  it("honours minlength, maxlength, weights, dtype and binary_output", function()
    assert.same({1, 2, 0, 1, 0, 0}, tf.math.bincount({1, 1, 3, 0}, {minlength = 6}):totable())
    assert.same({1, 2}, tf.math.bincount({1, 1, 3, 0}, {maxlength = 2}):totable())
    assert.tensor_near({3, 1.5, 0, 2}, tf.math.bincount({1, 1, 3, 0}, tf.constant({0.5, 1, 2, 3}, tf.float64)))
    local c = tf.math.bincount({2, 2}, nil, nil, nil, tf.float32)
    assert.equal(tf.float32, c.dtype)
    assert.same({0, 0, 1}, tf.math.bincount({2, 2, 2}, {binary_output = true}):totable())
    assert.same({}, tf.math.bincount(tf.zeros({0}, tf.int32)):totable())
  end)

  it("refuses negative values and mismatched weights", function()
    assert.tf_error("InvalidArgumentError", "bincount: 'arr' must be non-negative, got -1 at position 2",
                    tf.math.bincount, {1, -1})
    assert.tf_error("InvalidArgumentError", "must have the shape of 'arr'", tf.math.bincount, {1, 2},
                    tf.constant({1.0}))
    assert.tf_error("InvalidArgumentError", "bincount: 'axis' must be nil or 1", tf.math.bincount, {1}, {axis = 2})
  end)

  it("counts each slice along the last axis with axis = -1", function()
    local arr = {{1, 0, 1}, {2, 2, 2}}
    assert.same({{1, 2, 0}, {0, 0, 3}}, tf.math.bincount(arr, {axis = -1}):totable())
    assert.same({{1, 1, 0}, {0, 0, 1}}, tf.math.bincount(arr, {axis = -1, binary_output = true}):totable())
    assert.shape({2, 5}, tf.math.bincount({{1}, {0}}, {axis = -1, minlength = 5}))
    assert.tensor_near({{1, 2.5}}, tf.math.bincount({{1, 0, 1}}, tf.constant({{0.5, 1, 2}}, tf.float64), {axis = -1}))
    assert.same({1, 2, 0, 3}, tf.math.bincount({{1, 0, 1}, {3, 3, 3}}, {axis = 1}):totable())
  end)

  it("runs inside tf.fn (its length is decided when it runs)", function()
    local f = tf.fn(function(x) return tf.math.bincount(x) end)
    assert.same({0, 1, 0, 2}, f(tf.constant({3, 1, 3})):totable())
    assert.same({3}, f(tf.constant({0, 0, 0})):totable())
  end)
end)

describe("tf.math.segment_sum / segment_mean / segment_max", function()
  local data = {{1, 2}, {3, 4}, {5, 6}, {7, -8}}
  local ids = {1, 1, 3, 3}

  it("reduce the rows of each 1-based segment; empty segments are 0", function()
    assert.same({{4, 6}, {0, 0}, {12, -2}}, tf.math.segment_sum(data, ids):totable())
    assert.tensor_near({{2, 3}, {0, 0}, {6, -1}}, tf.math.segment_mean(tf.constant(data, tf.float64), ids))
    assert.same({{3, 4}, {0, 0}, {7, 6}}, tf.math.segment_max(data, ids):totable())
    assert.same({{1, 1}, {0, 0}, {6, -1}},
                tf.math.segment_mean(tf.constant({{1, 1}, {2, 2}, {5, 6}, {7, -8}}), ids):totable())
  end)

  it("keeps -inf maxima and truncates integer means", function()
    local m = tf.math.segment_max(tf.constant({-math.huge, -math.huge, 1}, tf.float32), {1, 1, 2})
    assert.same({-math.huge, 1}, m:totable())
    assert.same({1, -1}, tf.math.segment_mean(tf.constant({1, 2, -1, -2}), {1, 1, 2, 2}):totable())
  end)

  it("take uint8 as TensorFlow: sums wrap modulo 256, means truncate", function()
    local u = tf.constant({200, 100, 7, 8, 250}, tf.uint8)
    local s = tf.math.segment_sum(u, {1, 1, 2, 2, 4})
    assert.are.equal(tf.uint8, s.dtype)
    assert.same({44, 15, 0, 250}, s:totable())                       -- 300 mod 256 = 44
    assert.same({22, 7, 0, 250}, tf.math.segment_mean(u, {1, 1, 2, 2, 4}):totable())   -- 44 / 2, 15 / 2
    assert.same({200, 8, 0, 250}, tf.math.segment_max(u, {1, 1, 2, 2, 4}):totable())
    local m = tf.math.unsorted_segment_sum(u, tf.constant({2, 2, 1, -1, 1}), 3)
    assert.are.equal(tf.uint8, m.dtype)
    assert.same({1, 44, 0}, m:totable())                              -- 7 + 250 = 257 -> 1; 8 dropped
    -- 300 rows of 1 in one segment: the sum wraps to 44, the mean divides by 300, not by 300 mod 256
    local ones = tf.ones({300}, tf.uint8)
    assert.same({44}, tf.math.segment_sum(ones, tf.zeros({300}, tf.int32) + 1):totable())
    assert.same({0}, tf.math.segment_mean(ones, tf.zeros({300}, tf.int32) + 1):totable())
  end)

  it("refuses bool and string data, naming the dtypes they take", function()
    assert.tf_error("TypeError", "segment_sum: 'data' has dtype bool, expected float32, float64, float16, bfloat16, "
      .. "int32, int64 or uint8", tf.math.segment_sum, tf.constant({true, false}), {1, 1})
  end)

  it("refuses unsorted ids, id 0 and a wrong length", function()
    assert.tf_error("InvalidArgumentError", "segment_sum: 'segment_ids' must be sorted: 1 at position 3 follows 2",
                    tf.math.segment_sum, {1, 2, 3}, {1, 2, 1})
    assert.tf_error("InvalidArgumentError", "segment id 0 at position 1 is out of range: ids are 1-based",
                    tf.math.segment_max, {1, 2}, {0, 1})
    assert.tf_error("InvalidArgumentError", "must be a vector as long as the first dim of 'data' (3,)",
                    tf.math.segment_mean, {1, 2, 3}, {1, 1})
  end)

  it("shares segment_max's gradient among tied maxima", function()
    local x = tf.constant({2, 2, 1, 5}, tf.float64)
    local tape = tf.GradientTape()
    tape:watch(x)
    local y = tape:record(function() return tf.math.segment_max(x, {1, 1, 1, 2}) end)
    assert.tensor_near({0.5, 0.5, 0, 1}, tape:gradient(y, x))
  end)

  it("runs inside tf.fn with an unknown number of rows", function()
    local f = tf.fn(function(d, i) return tf.math.segment_sum(d, i) end,
                    {input_signature = {tf.TensorSpec({tf.None}, tf.float32), tf.TensorSpec({tf.None}, tf.int32)}})
    assert.tensor_near({3, 0, 3}, f(tf.constant({1, 2, 3}, tf.float32), tf.constant({1, 1, 3})))
    assert.tensor_near({7}, f(tf.constant({7}, tf.float32), tf.constant({1})))
  end)
end)
