-- spec/core/movement_spec.lua: the movement ops through the bindings.
-- Expected values are worked by hand, or recomputed in plain Lua for the
-- larger cases (transpose tiles, 3-d permutations).
local tf = require("tf")

local function m23() return tf.constant({{1, 2, 3}, {4, 5, 6}}) end

local function totables(list)
  local out = {}
  for i, t in ipairs(list) do out[i] = t:totable() end
  return out
end

describe("tf.reshape", function()
  it("keeps the row-major order", function()
    local y = tf.reshape(m23(), {3, 2})
    assert.shape({3, 2}, y)
    assert.same({{1, 2}, {3, 4}, {5, 6}}, y:totable())
  end)
  it("infers a -1 dimension", function()
    assert.shape({6}, tf.reshape(m23(), {-1}))
    assert.same({{{1, 2, 3}}, {{4, 5, 6}}}, tf.reshape(m23(), {2, -1, 3}):totable())
  end)
  it("turns a one-element tensor into a scalar and back", function()
    local s = tf.reshape(tf.constant({7.5}), {})
    assert.shape({}, s)
    assert.equal(7.5, s:item())
    assert.same({{7.5}}, tf.reshape(s, {1, 1}):totable())
  end)
  it("reshapes string, bool, float64 and int64 tensors", function()
    assert.same({{"a", "b"}, {"c", "d"}}, tf.reshape(tf.constant({"a", "b", "c", "d"}), {2, 2}):totable())
    assert.same({{true}, {false}}, tf.reshape(tf.constant({true, false}), {2, 1}):totable())
    local d = tf.reshape(tf.constant({1.5, 2.5}, tf.float64), {2, 1})
    assert.equal(tf.float64, d.dtype)
    assert.same({{1.5}, {2.5}}, d:totable())
    assert.same({{1 << 40, 2}}, tf.reshape(tf.constant({1 << 40, 2}), {1, 2}):totable())
  end)
  it("accepts an integer tensor as the shape and works as a method", function()
    assert.shape({3, 2}, tf.reshape(m23(), tf.constant({3, 2})))
    assert.same({{1, 2, 3, 4, 5, 6}}, m23():reshape({1, 6}):totable())
  end)
  it("names both shapes when the element counts differ", function()
    assert.tf_error("InvalidArgumentError",
      "reshape: cannot reshape a tensor of shape (2, 3) (6 elements) into shape (4,) (4 elements)",
      tf.reshape, m23(), {4})
  end)
  it("refuses a -1 that does not divide evenly", function()
    assert.tf_error("InvalidArgumentError",
      "reshape: cannot reshape a tensor of shape (2, 3) (6 elements) into shape (4, -1): "
        .. "the elements do not divide evenly",
      tf.reshape, m23(), {4, -1})
  end)
  it("refuses two -1 and negative dimensions", function()
    assert.tf_error("InvalidArgumentError", "only one dimension of 'shape' can be -1, got (-1, -1)",
      tf.reshape, m23(), {-1, -1})
    assert.tf_error("InvalidArgumentError", "'shape' (-2, -3) has a negative dimension -2",
      tf.reshape, m23(), {-2, -3})
  end)
  it("refuses a shape that is not a list", function()
    assert.tf_error("TypeError", "reshape: argument 2 ('shape') expected table of integers, got string",
      tf.reshape, m23(), "x")
  end)
end)

describe("tf.transpose", function()
  it("reverses the axes by default", function()
    assert.same({{1, 4}, {2, 5}, {3, 6}}, tf.transpose(m23()):totable())
    local x = tf.reshape(tf.constant({1, 2, 3, 4, 5, 6, 7, 8}), {2, 2, 2})
    assert.same({{{1, 5}, {3, 7}}, {{2, 6}, {4, 8}}}, tf.transpose(x):totable())
  end)
  it("takes a 1-based perm, negative entries counting from the end", function()
    local x = tf.reshape(tf.constant({1, 2, 3, 4, 5, 6}), {1, 2, 3})
    local y = tf.transpose(x, {2, 1, 3})
    assert.shape({2, 1, 3}, y)
    assert.same({{{1, 2, 3}}, {{4, 5, 6}}}, y:totable())
    assert.same(y:totable(), tf.transpose(x, {-2, 1, -1}):totable())
    assert.same(y:totable(), tf.transpose(x, {perm = {2, 1, 3}}):totable())
  end)
  it("transposes strings and float64", function()
    assert.same({{"a", "c"}, {"b", "d"}}, tf.transpose(tf.constant({{"a", "b"}, {"c", "d"}})):totable())
    local d = tf.transpose(tf.constant({{0.5, 1.5}}, tf.float64))
    assert.equal(tf.float64, d.dtype)
    assert.same({{0.5}, {1.5}}, d:totable())
  end)
  it("transposes a matrix larger than one tile (blocked copy)", function()
    local rows, cols = 70, 45
    local t = {}
    for i = 1, rows do
      t[i] = {}
      for j = 1, cols do t[i][j] = i * 1000 + j end
    end
    local y = tf.transpose(tf.constant(t, tf.float32)):totable()
    assert.equal(cols, #y)
    local bad = 0
    for j = 1, cols do
      for i = 1, rows do if y[j][i] ~= i * 1000 + j then bad = bad + 1 end end
    end
    assert.equal(0, bad)
  end)
  it("permutes 3-d uint8 and int64 tensors like a plain-Lua recomputation", function()
    local A, B, C = 9, 10, 11
    local flat = {}
    for i = 1, A * B * C do flat[i] = (i * 7) % 256 end
    for _, dt in ipairs({tf.uint8, tf.int64}) do
      local x = tf.reshape(tf.constant(flat, dt), {A, B, C})
      local y = tf.transpose(x, {3, 1, 2}):totable()   -- y[c][a][b] = x[a][b][c]
      local bad = 0
      for a = 1, A do
        for b = 1, B do
          for c = 1, C do
            if y[c][a][b] ~= flat[((a - 1) * B + (b - 1)) * C + c] then bad = bad + 1 end
          end
        end
      end
      assert.equal(0, bad)
    end
  end)
  it("transposes a matrix large enough to be split across threads", function()
    local rows, cols = 300, 257
    local t = {}
    for i = 1, rows do
      t[i] = {}
      for j = 1, cols do t[i][j] = (i - 1) * cols + j end
    end
    local y = tf.transpose(tf.constant(t)):totable()
    local bad = 0
    for j = 1, cols do
      for i = 1, rows do if y[j][i] ~= (i - 1) * cols + j then bad = bad + 1 end end
    end
    assert.equal(0, bad)
  end)
  it("says perm entries are 1-based", function()
    assert.tf_error("InvalidArgumentError", "transpose: 'perm' entry 1 is 0, but positions are 1-based",
      tf.transpose, m23(), {0, 1})
  end)
  it("refuses a perm that is not a permutation or has the wrong length", function()
    assert.tf_error("InvalidArgumentError", "transpose: 'perm' (1, 1) is not a permutation of 1..2",
      tf.transpose, m23(), {1, 1})
    assert.tf_error("InvalidArgumentError", "transpose: 'perm' (1, 2, 3) has 3 entries but x has rank 2: shape (2, 3)",
      tf.transpose, m23(), {1, 2, 3})
  end)
end)

describe("tf.expand_dims", function()
  it("inserts a size-1 axis at a 1-based position", function()
    assert.shape({1, 2, 3}, tf.expand_dims(m23(), 1))
    assert.shape({2, 1, 3}, tf.expand_dims(m23(), 2))
    assert.shape({2, 3, 1}, tf.expand_dims(m23(), 3))
  end)
  it("appends with -1 and keeps the values", function()
    local y = tf.expand_dims(tf.constant({"a", "b"}), -1)
    assert.same({{"a"}, {"b"}}, y:totable())
    assert.shape({1}, tf.expand_dims(tf.constant(5), 1))
  end)
  it("says axes are 1-based for axis 0", function()
    assert.tf_error("InvalidArgumentError", "expand_dims: 'axis' is 0, but axes are 1-based",
      tf.expand_dims, m23(), 0)
  end)
  it("refuses an axis past rank + 1", function()
    assert.tf_error("InvalidArgumentError",
      "expand_dims: 'axis' 4 is out of range for a new axis next to rank 2 (expected 1..3 or -3..-1)",
      tf.expand_dims, m23(), 4)
  end)
end)

describe("tf.squeeze", function()
  local x = function() return tf.reshape(tf.constant({1, 2, 3}), {1, 3, 1}) end
  it("drops every size-1 axis by default", function()
    assert.shape({3}, tf.squeeze(x()))
    assert.same({1, 2, 3}, tf.squeeze(x()):totable())
  end)
  it("drops only the listed axes", function()
    assert.shape({3, 1}, tf.squeeze(x(), 1))
    assert.shape({1, 3}, tf.squeeze(x(), -1))
    assert.shape({3}, tf.squeeze(x(), {1, 3}))
    assert.shape({3, 1}, tf.squeeze(x(), {axis = 1}))
  end)
  it("refuses to squeeze an axis whose size is not 1", function()
    assert.tf_error("InvalidArgumentError", "squeeze: cannot squeeze axis 2 of shape (1, 3, 1): its size is 3, not 1",
      tf.squeeze, x(), 2)
  end)
  it("refuses axis 0 and out-of-range axes", function()
    assert.tf_error("InvalidArgumentError", "squeeze: 'axis' is 0, but positions are 1-based", tf.squeeze, x(), 0)
    assert.tf_error("InvalidArgumentError", "squeeze: 'axis' 4 is out of range for rank 3", tf.squeeze, x(), 4)
  end)
end)

describe("tf.concat", function()
  it("joins along the first and last axes", function()
    local a, b = m23(), tf.constant({{7, 8, 9}})
    assert.same({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, tf.concat({a, b}, 1):totable())
    assert.same({{1, 2, 3, 10}, {4, 5, 6, 20}}, tf.concat({a, tf.constant({{10}, {20}})}, -1):totable())
    assert.same({{1, 2, 3, 1, 2, 3}, {4, 5, 6, 4, 5, 6}}, tf.concat({a, a}, 2):totable())
  end)
  it("joins three inputs along a middle axis", function()
    local x = tf.reshape(tf.constant({1, 2, 3, 4}), {2, 1, 2})
    local y = tf.concat({x, x * 10, x * 100}, 2)
    assert.shape({2, 3, 2}, y)
    assert.same({{{1, 2}, {10, 20}, {100, 200}}, {{3, 4}, {30, 40}, {300, 400}}}, y:totable())
  end)
  it("converts Lua tables to the tensors' dtype", function()
    local y = tf.concat({tf.constant({1.5}), {2, 3}}, 1)
    assert.equal(tf.float32, y.dtype)
    assert.same({1.5, 2.0, 3.0}, y:totable())
  end)
  it("joins strings, bools and empty tensors", function()
    assert.same({"a", "b", "c"}, tf.concat({tf.constant({"a"}), tf.constant({"b", "c"})}, 1):totable())
    assert.same({true, false}, tf.concat({tf.constant({true}), tf.constant({false})}, 1):totable())
    local empty = tf.reshape(tf.constant({1}), {1, 1})
    empty = tf.slice(empty, {1, 1}, {0, 1})
    assert.same({{5}}, tf.concat({empty, tf.constant({{5}})}, 1):totable())
  end)
  it("names the shapes when they differ off the axis", function()
    assert.tf_error("InvalidArgumentError",
      "concat: shapes must match except along axis 2: values[1] is (2, 3), values[2] is (3, 3)",
      tf.concat, {m23(), tf.constant({{1, 2, 3}, {1, 2, 3}, {1, 2, 3}})}, 2)
  end)
  it("refuses different ranks, dtypes and scalars", function()
    assert.tf_error("InvalidArgumentError",
      "concat: values must have the same rank: values[1] is (2, 3), values[2] is (3,)",
      tf.concat, {m23(), tf.constant({1, 2, 3})}, 1)
    assert.tf_error("TypeError", "concat: values[2] has dtype float32 but values[1] has dtype int32",
      tf.concat, {m23(), tf.constant({{1.5, 2, 3}})}, 1)
    assert.tf_error("InvalidArgumentError", "concat: cannot concatenate scalars",
      tf.concat, {tf.constant(1), tf.constant(2)}, 1)
  end)
  it("refuses axis 0, a missing axis and an empty list", function()
    assert.tf_error("InvalidArgumentError", "concat: 'axis' is 0, but axes are 1-based", tf.concat, {m23()}, 0)
    assert.tf_error("TypeError", "concat: argument 2 ('axis') expected integer axis, got nil", tf.concat, {m23()})
    assert.tf_error("InvalidArgumentError", "concat: 'values' is empty", tf.concat, {}, 1)
    assert.tf_error("InvalidArgumentError", "concat: 'axis' 3 is out of range for rank 2", tf.concat, {m23()}, 3)
  end)
end)

describe("tf.stack", function()
  it("stacks along a new first axis by default", function()
    local y = tf.stack({tf.constant({1, 2}), tf.constant({3, 4}), tf.constant({5, 6})})
    assert.shape({3, 2}, y)
    assert.same({{1, 2}, {3, 4}, {5, 6}}, y:totable())
  end)
  it("stacks along a later or negative axis", function()
    local a, b = tf.constant({1, 2}), tf.constant({3, 4})
    assert.same({{1, 3}, {2, 4}}, tf.stack({a, b}, 2):totable())
    assert.same({{1, 3}, {2, 4}}, tf.stack({a, b}, -1):totable())
    assert.same({{1, 3}, {2, 4}}, tf.stack({a, b}, {axis = 2}):totable())
  end)
  it("stacks scalars, Lua numbers and strings", function()
    assert.same({1.5, 2.0}, tf.stack({tf.constant(1.5), 2}):totable())
    assert.same({{"x", "y"}}, tf.stack({tf.constant({"x", "y"})}):totable())
  end)
  it("names the shapes when they differ", function()
    assert.tf_error("InvalidArgumentError",
      "stack: values must have the same shape: values[1] is (2,), values[2] is (3,)",
      tf.stack, {tf.constant({1, 2}), tf.constant({1, 2, 3})})
  end)
end)

describe("tf.split", function()
  it("splits into equal parts and returns a list", function()
    local parts = tf.split(tf.constant({1, 2, 3, 4, 5, 6}), 3)
    assert.equal(3, #parts)
    assert.same({{1, 2}, {3, 4}, {5, 6}}, totables(parts))
  end)
  it("splits by sizes, one of them -1, along axis 2", function()
    local x = tf.constant({{1, 2, 3, 4}, {5, 6, 7, 8}})
    local parts = tf.split(x, {1, -1}, 2)
    assert.same({{{1}, {5}}, {{2, 3, 4}, {6, 7, 8}}}, totables(parts))
    assert.same({{{1, 2}, {5, 6}}, {{3, 4}, {7, 8}}}, totables(tf.split(x, 2, {axis = -1})))
  end)
  it("splits strings and allows empty parts", function()
    local parts = tf.split(tf.constant({"a", "b", "c"}), {0, 3})
    assert.shape({0}, parts[1])
    assert.same({"a", "b", "c"}, parts[2]:totable())
  end)
  it("refuses a dimension that does not divide evenly", function()
    assert.tf_error("InvalidArgumentError", "split: axis 1 of size 5 cannot be split into 2 equal parts",
      tf.split, tf.constant({1, 2, 3, 4, 5}), 2)
  end)
  it("refuses sizes that do not add up", function()
    assert.tf_error("InvalidArgumentError", "split: sizes (1, 2) add up to 3 but axis 1 has size 5",
      tf.split, tf.constant({1, 2, 3, 4, 5}), {1, 2})
    assert.tf_error("InvalidArgumentError", "split: sizes (4, -1) add up to 4 but axis 1 has size 3",
      tf.split, tf.constant({1, 2, 3}), {4, -1})
    assert.tf_error("InvalidArgumentError", "split: 'num_or_size_splits' is 0, must be positive",
      tf.split, tf.constant({1, 2, 3}), 0)
  end)
end)

describe("tf.unstack", function()
  it("unstacks along the first axis by default", function()
    assert.same({{1, 2, 3}, {4, 5, 6}}, totables(tf.unstack(m23())))
  end)
  it("unstacks along a given axis, as TensorFlow's (value, num, axis) or a table", function()
    assert.same({{1, 4}, {2, 5}, {3, 6}}, totables(tf.unstack(m23(), {axis = 2})))
    assert.same({{1, 4}, {2, 5}, {3, 6}}, totables(tf.unstack(m23(), nil, -1)))
    assert.same({{1, 4}, {2, 5}, {3, 6}}, totables(tf.unstack(m23(), 3, 2)))
  end)
  it("unstacks strings into scalars", function()
    local parts = tf.unstack(tf.constant({"p", "q"}))
    assert.shape({}, parts[1])
    assert.equal("q", parts[2]:item())
  end)
  it("refuses a wrong num and a scalar", function()
    assert.tf_error("InvalidArgumentError", "unstack: 'num' is 4 but axis 1 has size 2", tf.unstack, m23(), 4)
    assert.tf_error("InvalidArgumentError", "unstack: cannot unstack a scalar", tf.unstack, tf.constant(1))
  end)
end)

describe("tf.slice", function()
  it("takes a 1-based begin and sizes, -1 meaning to the end", function()
    assert.same({{2, 3}, {5, 6}}, tf.slice(m23(), {1, 2}, {-1, 2}):totable())
    assert.same({{5}}, tf.slice(m23(), {2, 2}, {1, 1}):totable())
    assert.same({"c", "d"}, tf.slice(tf.constant({"a", "b", "c", "d"}), 3, -1):totable())
  end)
  it("counts a negative begin from the end", function()
    assert.same({{3}, {6}}, tf.slice(m23(), {1, -1}, {2, 1}):totable())
  end)
  it("says begin is 1-based", function()
    assert.tf_error("InvalidArgumentError", "slice: 'begin' entry 1 is 0, but positions are 1-based",
      tf.slice, m23(), {0, 1}, {1, 1})
  end)
  it("refuses a slice past the end", function()
    assert.tf_error("InvalidArgumentError", "slice: 'begin' 2 with 'size' 3 goes past the end of axis 2 (size 3)",
      tf.slice, m23(), {1, 2}, {1, 3})
    assert.tf_error("InvalidArgumentError", "slice: 'begin' 5 is out of range for axis 1 of size 2",
      tf.slice, m23(), {5, 1}, {1, 1})
    assert.tf_error("InvalidArgumentError", "slice: 'begin' has 1 entries, expected one per dimension (2)",
      tf.slice, m23(), {1}, {1})
  end)
end)

describe("tf.strided_slice", function()
  local x = function() return tf.constant({10, 20, 30, 40, 50}) end
  it("selects begin..end inclusive with a step", function()
    assert.same({20, 30, 40}, tf.strided_slice(x(), {2}, {4}):totable())
    assert.same({10, 30, 50}, tf.strided_slice(x(), {1}, {5}, {2}):totable())
    assert.same({40, 50}, tf.strided_slice(x(), {-2}, {-1}):totable())
  end)
  it("walks backwards with a negative step", function()
    assert.same({50, 40, 30, 20, 10}, tf.strided_slice(x(), {-1}, {1}, {-1}):totable())
    assert.same({40, 20}, tf.strided_slice(x(), {4}, {1}, {-2}):totable())
  end)
  it("clamps out-of-range bounds and gives empty results for empty ranges", function()
    assert.same({30, 40, 50}, tf.strided_slice(x(), {3}, {100}):totable())
    assert.shape({0}, tf.strided_slice(x(), {4}, {2}))
  end)
  it("honours begin, end, shrink and new-axis masks", function()
    local m = m23()
    assert.same({{1, 2}, {4, 5}}, tf.strided_slice(m, {9, 1}, {9, 2}, nil, {begin_mask = 1, end_mask = 1}):totable())
    assert.same({4, 5, 6}, tf.strided_slice(m, {2, 1}, {2, 1}, {1, 1}, {shrink_axis_mask = 1, end_mask = 2}):totable())
    assert.shape({2, 1, 3}, tf.strided_slice(m, {1, 1, 1}, {2, 1, 3}, nil, {new_axis_mask = 2}))
    assert.same({3, 6}, tf.strided_slice(m, {1, -1}, {1, -1}, nil, {ellipsis_mask = 1, shrink_axis_mask = 2}):totable())
  end)
  it("refuses a zero stride and an out-of-range index", function()
    assert.tf_error("InvalidArgumentError", "strided_slice: 'strides' entry 1 is 0, must be nonzero",
      tf.strided_slice, x(), {1}, {2}, {0})
    assert.tf_error("InvalidArgumentError", "strided_slice: index 6 is out of range for axis 1 of size 5",
      tf.strided_slice, x(), {6}, {6}, nil, {shrink_axis_mask = 1})
    assert.tf_error("InvalidArgumentError", "strided_slice: 'begin' entry 1 is 0, but positions are 1-based",
      tf.strided_slice, x(), {0}, {2})
  end)
end)

describe("tf.gather", function()
  it("gathers rows with 1-based indices", function()
    assert.same({{4, 5, 6}, {1, 2, 3}, {4, 5, 6}}, tf.gather(m23(), {2, 1, 2}):totable())
  end)
  it("gathers along another axis, positional or as an option", function()
    assert.same({{3, 1}, {6, 4}}, tf.gather(m23(), {3, 1}, 2):totable())
    assert.same({{3, 1}, {6, 4}}, tf.gather(m23(), {3, 1}, {axis = -1}):totable())
  end)
  it("takes 2-d and scalar indices, int32 or int64", function()
    local y = tf.gather(tf.constant({"a", "b", "c"}), {{3, 1}, {2, 2}})
    assert.same({{"c", "a"}, {"b", "b"}}, y:totable())
    assert.same({4, 5, 6}, tf.gather(m23(), tf.constant(2)):totable())
    assert.same({{1, 2, 3}}, tf.gather(m23(), tf.constant({1}, tf.int64)):totable())
  end)
  it("keeps float values", function()
    assert.tensor_near({0.25, 0.5}, tf.gather(tf.constant({0.5, 0.25}, tf.float64), {2, 1}))
  end)
  it("gathers many single elements and many rows (threaded runs)", function()
    local rows, cols = 400, 300
    local t = {}
    for i = 1, rows do
      t[i] = {}
      for j = 1, cols do t[i][j] = (i - 1) * cols + j end
    end
    local x = tf.constant(t)
    local rev = {}
    for j = 1, cols do rev[j] = cols + 1 - j end
    local byc = tf.gather(x, rev, 2):totable()
    local revr = {}
    for i = 1, rows do revr[i] = rows + 1 - i end
    local byr = tf.gather(x, revr):totable()
    local bad = 0
    for i = 1, rows do
      for j = 1, cols do
        if byc[i][j] ~= (i - 1) * cols + (cols + 1 - j) then bad = bad + 1 end
        if byr[i][j] ~= (rows - i) * cols + j then bad = bad + 1 end
      end
    end
    assert.equal(0, bad)
  end)
  it("supports batch_dims", function()
    local params = tf.constant({{1, 2, 3}, {4, 5, 6}})
    local y = tf.gather(params, {{3, 1}, {2, 2}}, {axis = 2, batch_dims = 1})
    assert.same({{3, 1}, {5, 5}}, y:totable())
  end)
  it("takes axis = batch_dims + 1 when batch_dims is given without an axis (as TensorFlow)", function()
    local params = tf.constant({{1, 2, 3}, {4, 5, 6}})
    assert.same({{3, 1}, {5, 5}}, tf.gather(params, {{3, 1}, {2, 2}}, {batch_dims = 1}):totable())
    assert.same({{3, 1}, {5, 5}}, tf.gather(params, {{3, 1}, {2, 2}}, {batch_dims = -1}):totable())
    -- batch_dims = 0 keeps the first axis
    assert.same({{4, 5, 6}}, tf.gather(params, {2}, {batch_dims = 0}):totable())
    local f = tf.fn(function(p, i) return tf.gather(p, i, {batch_dims = 1}) end,
      {input_signature = {tf.TensorSpec({-1, 3}, tf.int32), tf.TensorSpec({-1, 2}, tf.int32)}})
    assert.same({{3, 1}, {5, 5}}, f(params, tf.constant({{3, 1}, {2, 2}})):totable())
  end)
  it("checks index ranges only when the output is not empty (as TensorFlow)", function()
    local y = tf.gather(tf.zeros({3, 0}), {7, 9})        -- rows of zero elements
    assert.shape({2, 0}, y)
    assert.shape({0, 2}, tf.gather(tf.zeros({3, 2}), tf.zeros({0}, tf.int32)))
    assert.shape({3, 0}, tf.gather(tf.zeros({3, 4}), tf.zeros({0}, tf.int32), 2))
    -- its gradient reads nothing either
    local p = tf.zeros({3, 0}, tf.float64)
    local tape = tf.GradientTape()
    tape:watch(p)
    local g = tape:gradient(tape:record(function() return tf.gather(p, {7, 9}) end), p)
    assert.shape({3, 0}, g)
    -- a non-empty output still checks
    assert.tf_error("InvalidArgumentError",
      "gather: indices[1] = 1 is out of range: axis 1 of params has size 0", tf.gather, tf.zeros({0, 2}), {1})
  end)
  it("says indices are 1-based for an index of 0 and gives the range", function()
    assert.tf_error("InvalidArgumentError",
      "gather: indices[2] = 0 is out of range: indices are 1-based, expected 1..2 (axis 1 of params)",
      tf.gather, m23(), {1, 0})
  end)
  it("refuses indices past the end or negative", function()
    assert.tf_error("InvalidArgumentError",
      "gather: indices[1, 2] = 4 is out of range: indices are 1-based, expected 1..3",
      tf.gather, m23(), {{1, 4}}, 2)
    assert.tf_error("InvalidArgumentError", "gather: indices[1] = -1 is out of range", tf.gather, m23(), {-1})
  end)
  it("refuses float indices", function()
    assert.tf_error("TypeError", "gather: 'indices' has dtype float32, expected int32 or int64",
      tf.gather, m23(), tf.constant({1.0}))
  end)
end)

describe("tf.one_hot", function()
  it("sets position k for index k (1-based), float32 by default", function()
    local y = tf.one_hot({1, 3, 2}, 3)
    assert.equal(tf.float32, y.dtype)
    assert.same({{1, 0, 0}, {0, 0, 1}, {0, 1, 0}}, y:totable())
  end)
  it("gives all off_value for indices outside 1..depth", function()
    assert.same({{0, 0}, {0, 0}, {0, 1}}, tf.one_hot({0, 3, 2}, 2):totable())
  end)
  it("takes on/off values, an axis and a dtype", function()
    assert.same({{5, -1}, {-1, 5}}, tf.one_hot({1, 2}, 2, {on_value = 5, off_value = -1}):totable())
    assert.equal(tf.int32, tf.one_hot({1}, 2, {on_value = 5, off_value = -1}).dtype)
    local y = tf.one_hot({2, 1, 1}, 2, {axis = 1, dtype = tf.int64})
    assert.equal(tf.int64, y.dtype)
    assert.same({{0, 1, 1}, {1, 0, 0}}, y:totable())
    assert.same({{"y", "n"}, {"n", "y"}}, tf.one_hot({1, 2}, 2, {on_value = "y", off_value = "n"}):totable())
    assert.same({{true, false}}, tf.one_hot({1}, 2, {dtype = tf.bool}):totable())
  end)
  it("expands 2-d indices", function()
    local y = tf.one_hot(tf.constant({{1, 2}, {2, 1}}), 2)
    assert.shape({2, 2, 2}, y)
    assert.same({{{1, 0}, {0, 1}}, {{0, 1}, {1, 0}}}, y:totable())
  end)
  it("refuses float indices and mismatched on/off dtypes", function()
    assert.tf_error("TypeError", "one_hot: 'indices' has dtype float32", tf.one_hot, tf.constant({1.0}), 2)
    assert.tf_error("TypeError", "one_hot: 'off_value' has dtype string but the result's dtype is int32",
      tf.one_hot, {1}, 2, {on_value = 1, off_value = "x"})
  end)
end)

describe("tf.tile", function()
  it("repeats along each axis", function()
    assert.same({{1, 2, 1, 2}, {3, 4, 3, 4}, {1, 2, 1, 2}, {3, 4, 3, 4}},
      tf.tile(tf.constant({{1, 2}, {3, 4}}), {2, 2}):totable())
    assert.same({1, 2, 1, 2, 1, 2}, tf.tile(tf.constant({1, 2}), {3}):totable())
  end)
  it("tiles strings and accepts zero multiples", function()
    local s = tf.constant({"a", "b"})
    local t = tf.tile(s, {2})
    s:free()
    collectgarbage()
    assert.same({"a", "b", "a", "b"}, t:totable())
    assert.shape({0, 2}, tf.tile(tf.constant({{1, 2}}), {0, 1}))
  end)
  it("refuses a wrong number of multiples or a negative one", function()
    assert.tf_error("InvalidArgumentError", "tile: 'multiples' has 1 entries, expected one per dimension (2)",
      tf.tile, m23(), {2})
    assert.tf_error("InvalidArgumentError", "tile: 'multiples' entry 2 is -1, must be >= 0", tf.tile, m23(), {1, -1})
  end)
end)

describe("tf.pad", function()
  it("pads with zeros by default", function()
    assert.same({{0, 0, 0, 0}, {0, 1, 2, 0}, {0, 0, 0, 0}},
      tf.pad(tf.constant({{1, 2}}), {{1, 1}, {1, 1}}):totable())
  end)
  it("pads with constant_values", function()
    assert.same({9, 9, 1, 2}, tf.pad(tf.constant({1, 2}), {{2, 0}}, {constant_values = 9}):totable())
    assert.tensor_near({-1.5, 0.5}, tf.pad(tf.constant({0.5}), {{1, 0}}, "CONSTANT", -1.5))
    assert.same({"-", "a", "-"}, tf.pad(tf.constant({"a"}), {{1, 1}}, {constant_values = "-"}):totable())
  end)
  it("fills exactly the border of a 4-d constant pad (a loop as reference)", function()
    local xd, pads = {2, 3, 4, 5}, {{1, 0}, {0, 2}, {1, 1}, {2, 3}}
    local vals, k = {}, 0
    for _ = 1, 2 * 3 * 4 * 5 do k = k + 1; vals[k] = k end
    for _, dt in ipairs({tf.float32, tf.int64, tf.uint8}) do
      local x = tf.reshape(tf.cast(tf.constant(vals), dt), xd)
      local y = tf.pad(x, pads, {constant_values = 7}):totable()
      local od = {}
      for d = 1, 4 do od[d] = xd[d] + pads[d][1] + pads[d][2] end
      for a = 1, od[1] do for b = 1, od[2] do for c = 1, od[3] do for e = 1, od[4] do
        local i = {a - pads[1][1], b - pads[2][1], c - pads[3][1], e - pads[4][1]}
        local inside = true
        for d = 1, 4 do inside = inside and i[d] >= 1 and i[d] <= xd[d] end
        local want = inside and ((((i[1] - 1) * 3 + i[2] - 1) * 4 + i[3] - 1) * 5 + i[4]) or 7
        assert.equal(want, y[a][b][c][e])
      end end end end
    end
  end)
  it("reflects and mirrors", function()
    local x = tf.constant({1, 2, 3})
    assert.same({3, 2, 1, 2, 3, 2, 1}, tf.pad(x, {{2, 2}}, "REFLECT"):totable())
    assert.same({2, 1, 1, 2, 3, 3, 2}, tf.pad(x, {{2, 2}}, {mode = "symmetric"}):totable())
    assert.same({{6, 5, 4, 5, 6, 5, 4}, {3, 2, 1, 2, 3, 2, 1}, {6, 5, 4, 5, 6, 5, 4}, {3, 2, 1, 2, 3, 2, 1}},
      tf.pad(m23(), {{1, 1}, {2, 2}}, "REFLECT"):totable())
  end)
  it("pads empty tensors: constants fill, zero-width symmetric padding passes, REFLECT refuses (as TensorFlow)",
     function()
    local empty = tf.constant({1})[{{2, nil}}]
    assert.same({7, 7}, tf.pad(empty, {{1, 1}}, {constant_values = 7}):totable())
    assert.shape({0}, tf.pad(empty, {{0, 0}}, "SYMMETRIC"))
    assert.tf_error("InvalidArgumentError",
      "pad: REFLECT mode needs every dimension to have size >= 1, but axis 1 has size 0",
      tf.pad, empty, {{0, 0}}, "REFLECT")
    assert.tf_error("InvalidArgumentError",
      "pad: REFLECT mode needs every dimension to have size >= 1, but axis 1 has size 0",
      tf.pad, tf.zeros({0, 2}), {{0, 0}, {1, 1}}, "REFLECT")
    assert.shape({0, 4}, tf.pad(tf.zeros({0, 2}), {{0, 0}, {1, 1}}, "SYMMETRIC"))
    assert.tf_error("InvalidArgumentError",
      "SYMMETRIC paddings for axis 1 are {1, 0}, but at most 0 fit a dimension of size 0",
      tf.pad, empty, {{1, 0}}, "SYMMETRIC")
  end)
  it("accepts paddings as an integer tensor", function()
    assert.same({0, 1, 2, 0, 0}, tf.pad(tf.constant({1, 2}), tf.constant({{1, 2}})):totable())
  end)
  it("refuses negative paddings, too-wide reflections and a wrong count", function()
    assert.tf_error("InvalidArgumentError", "pad: paddings for axis 1 are {-1, 0}, must be >= 0",
      tf.pad, tf.constant({1}), {{-1, 0}})
    assert.tf_error("InvalidArgumentError",
      "pad: REFLECT paddings for axis 1 are {3, 0}, but at most 2 fit a dimension of size 3",
      tf.pad, tf.constant({1, 2, 3}), {{3, 0}}, "REFLECT")
    assert.tf_error("InvalidArgumentError", "pad: 'paddings' has 1 pairs, expected one per dimension (2)",
      tf.pad, m23(), {{1, 1}})
    assert.tf_error("InvalidArgumentError", "pad: unknown mode 'WRAP'", tf.pad, m23(), {{1, 1}, {1, 1}}, "WRAP")
  end)
end)

describe("tf.reverse", function()
  it("reverses the listed axes", function()
    assert.same({{3, 2, 1}, {6, 5, 4}}, tf.reverse(m23(), {2}):totable())
    assert.same({{4, 5, 6}, {1, 2, 3}}, tf.reverse(m23(), 1):totable())
    assert.same({{6, 5, 4}, {3, 2, 1}}, tf.reverse(m23(), {1, -1}):totable())
    assert.same({"b", "a"}, tf.reverse(tf.constant({"a", "b"}), {1}):totable())
  end)
  it("refuses a repeated axis and axis 0", function()
    assert.tf_error("InvalidArgumentError", "reverse: 'axis' repeats axis 2", tf.reverse, m23(), {2, -1})
    assert.tf_error("InvalidArgumentError", "reverse: 'axis' is 0, but positions are 1-based", tf.reverse, m23(), 0)
  end)
end)

describe("tf.broadcast_to", function()
  it("broadcasts rows, columns and scalars", function()
    assert.same({{1, 2, 3}, {1, 2, 3}}, tf.broadcast_to(tf.constant({1, 2, 3}), {2, 3}):totable())
    assert.same({{1, 1}, {2, 2}}, tf.broadcast_to(tf.constant({{1}, {2}}), {2, 2}):totable())
    assert.same({{"s", "s"}}, tf.broadcast_to(tf.constant("s"), {1, 2}):totable())
  end)
  it("names both shapes when they are incompatible", function()
    assert.tf_error("InvalidArgumentError", "broadcast_to: cannot broadcast shape (2, 3) to (4, 3)",
      tf.broadcast_to, m23(), {4, 3})
    assert.tf_error("InvalidArgumentError", "broadcast_to: cannot broadcast shape (2, 3) to (3,)",
      tf.broadcast_to, m23(), {3})
  end)
end)

describe("tf.shape, tf.size and tf.rank", function()
  it("return int32 tensors of the static shape", function()
    local s = tf.shape(m23())
    assert.equal(tf.int32, s.dtype)
    assert.same({2, 3}, s:totable())
    assert.same({}, tf.shape(tf.constant(1)):totable())
    assert.equal(6, tf.size(m23()):item())
    assert.equal(2, tf.rank(m23()):item())
    assert.equal(tf.int32, tf.rank(m23()).dtype)
  end)
  it("give int64 with out_type", function()
    assert.equal(tf.int64, tf.shape(m23(), tf.int64).dtype)
    assert.equal(tf.int64, tf.size(m23(), {out_type = tf.int64}).dtype)
    assert.tf_error("TypeError", "shape: 'out_type' must be int32 or int64, got float32", tf.shape, m23(), tf.float32)
  end)
end)
