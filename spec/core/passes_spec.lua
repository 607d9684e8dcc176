-- spec/core/passes_spec.lua: the graph passes one by one (prune, constant
-- folding, CSE, elementwise fusion) and the plan's in-place reuse, through
-- the raw core API. Fused results are compared bit for bit with the same
-- ops run eagerly (integers exactly, floats to the last bit).
local tf = require("tf")
local core = tf.core

local function trace(types, body)
  local G = core.graph_begin("f")
  local ph = {}
  for i, t in ipairs(types) do ph[i] = core.graph_placeholder(G, t[1], t[2], "x" .. i) end
  local ok, outs = pcall(body, table.unpack(ph))
  if not ok then
    core.graph_abort(G)
    error(outs, 0)
  end
  core.graph_end(G, outs)
  return G
end

-- Live nodes by name.
local function live(G)
  local t = {}
  for _, n in ipairs(core.graph_nodes(G)) do t[n.name] = n end
  return t
end

local function count_op(G, op)
  local c = 0
  for _, n in ipairs(core.graph_nodes(G)) do c = c + (n.op == op and 1 or 0) end
  return c
end

-- Steps the plan runs: ops outside groups, plus one per fused group.
local function steps(G)
  local n, groups = 0, {}
  for _, nd in ipairs(core.graph_nodes(G)) do
    if nd.op ~= "Placeholder" and nd.op ~= "Const" then
      if nd.fused then groups[nd.fused] = true else n = n + 1 end
    end
  end
  for _ in pairs(groups) do n = n + 1 end
  return n
end

-- Fused groups: {group id -> sorted list of op names}.
local function groups(G)
  local g = {}
  for _, nd in ipairs(core.graph_nodes(G)) do
    if nd.fused then
      g[nd.fused] = g[nd.fused] or {}
      table.insert(g[nd.fused], nd.op)
    end
  end
  return g
end

local function ngroups(G)
  local c = 0
  for _ in pairs(groups(G)) do c = c + 1 end
  return c
end

-- The raw bits of every element (floats through their IEEE double image).
local function bits(t)
  local out = {}
  local function walk(x)
    if type(x) == "table" then
      for _, e in ipairs(x) do walk(e) end
    else
      out[#out + 1] = type(x) == "number" and string.pack("<d", x) or tostring(x)
    end
  end
  walk(t:totable())
  return out
end

local function assert_identical(want, got)
  assert.same(want:_dims(), got:_dims())
  assert.equal(want.dtype, got.dtype)
  local a, b = bits(want), bits(got)
  assert.equal(#a, #b)
  for i = 1, #a do
    if a[i] ~= b[i] then
      error(("element %d differs: %s vs %s"):format(i, tostring(want), tostring(got)), 2)
    end
  end
end

-- Trace 'body' on placeholders typed like 'values', run it, and check the
-- result is identical to calling body eagerly. Returns the graph.
local function check_same(body, values)
  local types = {}
  for i, v in ipairs(values) do types[i] = {v.dtype.name, v:_dims()} end
  local G = trace(types, function(...) return {body(...)} end)
  local want = body(table.unpack(values))
  assert_identical(want, core.graph_run(G, table.unpack(values)))
  return G
end

-- Print capture (tf.print goes through the print formatter).
local function capture(fn)
  local out = {}
  local fmt = debug.getregistry()["tf.print_formatter"]
  core.set_print_formatter(function(o, ...)
    out[#out + 1] = tf.format.print_text(o, ...)
    return nil
  end)
  local ok, err = pcall(fn)
  core.set_print_formatter(fmt)
  if not ok then error(err, 0) end
  return out
end

-- Deterministic inputs.
local function uniform_u8(dims, seed)
  local n = 1
  for _, d in ipairs(dims) do n = n * d end
  local flat, s = {}, seed
  for i = 1, n do
    s = (s * 1103515245 + 12345) % 2147483648
    flat[i] = s % 256
  end
  return tf.reshape(tf.constant(flat, tf.uint8), dims), flat
end

describe("graph passes", function()
  describe("prune", function()
    it("removes ops whose values nobody needs", function()
      local G = trace({{"float32", {2}}}, function(x)
        local _ = tf.exp(x) * 3   -- unused
        return {x + 1}
      end)
      local n = live(G)
      assert.is_nil(n.exp)
      assert.is_nil(n.multiply)
      assert.is_table(n.add)
      local all = {}
      for _, nd in ipairs(core.graph_nodes(G, true)) do all[nd.name] = nd end
      assert.is_false(all.exp.live)
    end)

    it("keeps a print whose result nobody uses, and runs it at every call", function()
      local G = trace({{"float32", {2}}}, function(x)
        tf.print("x is", x)
        return {x * 2}
      end)
      assert.equal(1, count_op(G, "print"))
      local out = capture(function()
        core.graph_run(G, tf.constant({1, 2}, tf.float32))
        core.graph_run(G, tf.constant({3, 4}, tf.float32))
      end)
      assert.equal(2, #out)
      assert.truthy(out[2]:find("3", 1, true))
    end)

    it("keeps an assign whose result nobody uses, with the ops feeding it", function()
      local v = tf.Variable(tf.constant({0, 0}, tf.float32))
      local G = trace({{"float32", {2}}}, function(x)
        v:assign(tf.square(x) + 1)
        return {}
      end)
      assert.equal(1, count_op(G, "square"))
      core.graph_run(G, tf.constant({2, 3}, tf.float32))
      assert.tensor_near({5, 10}, v:read_value())
    end)
  end)

  describe("fold_constants", function()
    it("turns ops on constants into Const nodes", function()
      local G = trace({{"float32", {3}}}, function(x)
        local c = tf.constant({1, 2, 3}, tf.float32) * 2 + 1
        return {x + c}
      end)
      local n = live(G)
      assert.equal("Const", n.add.op)            -- the folded c (its multiply is pruned after folding)
      assert.same({}, n.add.inputs)
      assert.equal(0, count_op(G, "multiply"))
      assert.equal("add", n.add_1.op)            -- x + c stays an op
      assert.same({"x1:0", "add:0"}, n.add_1.inputs)
      assert.tensor_near({4, 6, 8}, core.graph_run(G, tf.constant({1, 1, 1}, tf.float32)))
    end)

    it("folds a whole constant subgraph, leaving the output's Identity", function()
      local G = trace({}, function()
        return {tf.reduce_sum(tf.range(5)) * 2}
      end)
      for _, nd in ipairs(core.graph_nodes(G)) do
        assert.truthy(nd.op == "Const" or nd.op == "identity")
      end
      assert.equal(20, (core.graph_run(G)):item())
    end)

    it("never folds random ops", function()
      local G = trace({}, function()
        return {tf.random.uniform({4}) * 2}
      end)
      assert.equal(1, count_op(G, "random_uniform"))
      assert.equal(1, count_op(G, "multiply"))
      local a, b = core.graph_run(G), core.graph_run(G)
      assert.are_not.same(a:totable(), b:totable())
    end)
  end)

  describe("cse", function()
    it("merges two identical ops", function()
      local G = trace({{"float32", {3}}}, function(x)
        local a, b = tf.exp(x), tf.exp(x)
        return {a + b}
      end)
      assert.equal(1, count_op(G, "exp"))
      local n = live(G)
      assert.same({"exp:0", "exp:0"}, n.add.inputs)
      local x = tf.constant({0, 1, 2}, tf.float32)
      assert.tensor_near((tf.exp(x) * 2):totable(), core.graph_run(G, x))
    end)

    it("merges chains, not ops with other attributes or inputs", function()
      local G = trace({{"float32", {2, 3}}}, function(x)
        local a = tf.reduce_sum(tf.square(x), 1)
        local b = tf.reduce_sum(tf.square(x), 1)
        local c = tf.reduce_sum(tf.square(x), 2)
        return {a, b, c}
      end)
      assert.equal(1, count_op(G, "square"))
      assert.equal(2, count_op(G, "reduce_sum"))
    end)

    it("never merges random ops", function()
      local G = trace({}, function()
        return {tf.random.uniform({4}), tf.random.uniform({4})}
      end)
      assert.equal(2, count_op(G, "random_uniform"))
      local a, b = core.graph_run(G)
      assert.are_not.same(a:totable(), b:totable())
    end)
  end)

  describe("fuse_elementwise", function()
    it("runs a float chain as one step, identical to eager", function()
      local x = tf.random.normal({1000})
      local G = check_same(function(v)
        for i = 0, 29 do
          local k = i % 3
          if k == 0 then v = v * 1.0001 elseif k == 1 then v = v + 0.5 else v = tf.tanh(v) end
        end
        return v
      end, {x})
      assert.equal(2, steps(G))   -- the group and the output's Identity
      assert.equal(1, ngroups(G))
    end)

    it("fuses float64, unary, binary and comparisons, identical to eager", function()
      local x = tf.cast(tf.random.normal({5, 7}), tf.float64)
      local y = tf.cast(tf.random.normal({5, 7}), tf.float64)
      local G = check_same(function(a, b)
        local m = tf.where(tf.greater(a, b), a, b)
        return tf.sigmoid(m) * tf.exp(a) - tf.sqrt(tf.abs(b)) + tf.cast(tf.less(a, 0), tf.float64)
      end, {x, y})
      assert.is_true(ngroups(G) >= 1)
    end)

    it("fuses integer ops and casts exactly, the output dtype differing from the inputs'", function()
      local a = tf.constant({{-7, 3, 100000, -2147483647}, {5, -1, 0, 2147483647}}, tf.int32)
      local b = tf.constant({{2, -3, 7, 3}, {-2, 5, 1, 9}}, tf.int32)
      local G = check_same(function(x, y)
        local q = tf.floordiv(x, y) + tf.floormod(x, y) * 3
        local s = tf.bitwise.bitwise_xor(tf.bitwise.left_shift(q, 2), y)
        return tf.cast(s, tf.float32) * 0.5
      end, {a, b})
      assert.equal(1, ngroups(G))   -- floordiv and floormod feed one add: two branches merge
      assert.equal(8, #groups(G)[1])
      assert.equal(2, steps(G))
    end)

    it("shifts uint8 by every count like eager (counts past 7 clamp)", function()
      local xs, ys = {}, {}
      for c = 0, 255 do
        for _, v in ipairs({0, 1, 37, 128, 200, 255}) do
          xs[#xs + 1] = v
          ys[#ys + 1] = c
        end
      end
      local x, y = tf.constant(xs, tf.uint8), tf.constant(ys, tf.uint8)
      for _, op in ipairs({tf.bitwise.right_shift, tf.bitwise.left_shift}) do
        local G = check_same(function(a, b) return tf.bitwise.bitwise_or(op(a, b), op(b, a)) + 1 end, {x, y})
        assert.equal(1, ngroups(G))
      end
      for _, dt in ipairs({tf.int32, tf.int64}) do
        local xi = tf.cast(x, dt) - 100
        local yi = tf.cast(y, dt) - 64
        check_same(function(a, b)
          return tf.bitwise.right_shift(a, b) + tf.bitwise.left_shift(a, b)
        end, {xi, yi})
      end
    end)

    it("fuses CharUnpack (expand_dims, broadcast shift, and, reshape, cast) into one step", function()
      local R, C = 64, 400
      local x, flat = uniform_u8({R, C}, 7)
      local shifts = tf.constant({7, 6, 5, 4, 3, 2, 1, 0}, tf.uint8)
      local function unpack(v)
        return tf.cast(tf.reshape(tf.bitwise.bitwise_and(tf.bitwise.right_shift(tf.expand_dims(v, -1), shifts), 1),
                                  {R, C * 8}), tf.float32)
      end
      local G = check_same(unpack, {x})
      assert.equal(2, steps(G))
      local g = groups(G)[1]
      table.sort(g)
      assert.same({"bitwise_and", "cast", "expand_dims", "reshape", "right_shift"}, g)
      -- against the bits computed in Lua
      local got = core.graph_run(G, x)
      local row = got:totable()[3]
      for j = 1, C * 8 do
        local byte = flat[2 * C + (j - 1) // 8 + 1]
        assert.equal((byte >> (7 - (j - 1) % 8)) & 1, row[j])
      end
    end)

    it("broadcasts inputs inside a group: rows, columns, scalars, periods that do not divide a block", function()
      local cases = {
        {{4, 1}, {1, 5}},          -- both broadcast, two ways
        {{3, 7}, {7}},             -- a period of 7
        {{2, 3, 1000}, {3, 1}},    -- a middle axis
        {{1, 1}, {600, 9}},        -- one element of rank 2
        {{2, 1, 3}, {5, 1}},       -- result (2, 5, 3)
        {{700, 3}, {700, 1}},      -- repeated elements
      }
      for _, c in ipairs(cases) do
        local a, b = tf.random.normal(c[1]), tf.random.normal(c[2])
        local G = check_same(function(x, y) return tf.tanh(x * y + y) - x end, {a, b})
        assert.equal(1, ngroups(G))
        local ai = tf.cast(tf.random.uniform(c[1], -50, 50, tf.int32), tf.int32)
        local bi = tf.cast(tf.random.uniform(c[2], 1, 9, tf.int32), tf.int32)
        check_same(function(x, y) return tf.floordiv(x * y + y, y) - x end, {ai, bi})
      end
    end)

    it("treats views between members and on inputs as index remapping", function()
      local a = tf.random.normal({6, 4})
      local b = tf.random.normal({4})
      local G = check_same(function(x, y)
        local t = tf.reshape(tf.exp(x), {3, 8})
        local u = tf.squeeze(tf.expand_dims(t * 2, 2), 2)
        return tf.reshape(u + 1, {6, 4}) * tf.reshape(y, {1, 4})
      end, {a, b})
      assert.equal(2, steps(G))
    end)

    it("keeps a value that is read outside its group as the group's output", function()
      local a = tf.random.normal({50})
      local G = check_same(function(x)
        local t = tf.tanh(x * 2)                -- read twice below
        return (t + 1) * (t - 1) + tf.reduce_sum(t)
      end, {a})
      -- the group ends at t; the reduction and the second group read it
      local n = live(G)
      assert.is_not_nil(n.tanh.fused)
      assert.is_true(ngroups(G) >= 2)
    end)

    it("lets a member feed another member twice", function()
      local a = tf.random.normal({33})
      local G = check_same(function(x) local t = x * 3; return t * t + 1 end, {a})
      assert.equal(1, ngroups(G))
    end)

    it("returns a member that is also a graph output from the group's own step", function()
      local types = {{"float32", {10}}}
      local G = trace(types, function(x)
        local t = tf.exp(x)
        local u = tf.tanh(t) * 2
        return {t, u}
      end)
      local x = tf.random.normal({10})
      local t, u = core.graph_run(G, x)
      assert_identical(tf.exp(x), t)
      assert_identical(tf.tanh(tf.exp(x)) * 2, u)
    end)

    it("does not fuse values of unknown shape, and still computes them", function()
      local G = trace({{"float32", {-1}}}, function(x) return {tf.tanh(x * 2 + 1)} end)
      assert.equal(0, ngroups(G))
      local x = tf.random.normal({17})
      assert_identical(tf.tanh(x * 2 + 1), core.graph_run(G, x))
    end)

    it("reports an integer division by zero inside a group as eager does", function()
      local G = trace({{"int32", {4}}, {"int32", {4}}}, function(x, y) return {tf.floordiv(x + 1, y) * 2} end)
      assert.equal(1, ngroups(G))
      local x, y = tf.constant({1, 2, 3, 4}, tf.int32), tf.constant({1, 0, 1, 1}, tf.int32)
      assert.tf_error("InvalidArgumentError", "floordiv: integer division by zero", core.graph_run, G, x, y)
      assert.tf_error("InvalidArgumentError", "floordiv: integer division by zero", tf.floordiv, x + 1, y)
    end)

    it("splits large groups across threads and blocks like small ones", function()
      -- large results are compared elementwise in the engine (no NaN here)
      local function same_big(body, values)
        local types = {}
        for i, v in ipairs(values) do types[i] = {v.dtype.name, v:_dims()} end
        local G = trace(types, function(...) return {body(...)} end)
        local want, got = body(table.unpack(values)), core.graph_run(G, table.unpack(values))
        assert.same(want:_dims(), got:_dims())
        assert.is_true(tf.reduce_all(tf.equal(want, got)):item())
        assert.equal(1, ngroups(G))
      end
      local a = tf.random.normal({3, 70001})
      local b = tf.random.normal({70001})
      same_big(function(x, y) return tf.sigmoid(x - y) * y + tf.square(x) end, {a, b})
      local u = tf.cast(tf.random.uniform({1024, 400}, 0, 256, tf.int32), tf.uint8)
      same_big(function(x)
        return tf.cast(tf.bitwise.bitwise_and(tf.bitwise.right_shift(tf.expand_dims(x, -1),
                                                                   tf.constant({7, 6, 5, 4, 3, 2, 1, 0}, tf.uint8)), 1),
                       tf.float32)
      end, {u})
    end)

    it("never puts random or stateful ops in a group", function()
      local G = trace({{"float32", {8}}}, function(x)
        local r = tf.random.uniform({8})
        return {tf.tanh(x * r + r) * 2}
      end)
      for _, nd in ipairs(core.graph_nodes(G)) do
        if nd.op == "random_uniform" then assert.is_nil(nd.fused) end
      end
      assert.equal(1, ngroups(G))
    end)
  end)

  describe("in place", function()
    it("never writes into the caller's inputs or captured constants", function()
      local c = tf.constant({1, 2, 3, 4}, tf.float32)
      local G = trace({{"float32", {4}}}, function(x) return {tf.exp(x + c) * 2} end)
      local x = tf.constant({0.5, 0.25, 0, -1}, tf.float32)
      local before = x:totable()
      for _ = 1, 3 do core.graph_run(G, x) end
      assert.same(before, x:totable())
      assert.same({1, 2, 3, 4}, c:totable())
    end)

    it("never writes into a variable's value, nor into a value also returned", function()
      local v = tf.Variable(tf.constant({1, 2, 3}, tf.float32))
      local G = trace({{"float32", {3}}}, function(x)
        local r = v:read_value()
        local t = tf.tanh(x * 3)               -- read twice: ends a group
        return {r * 2 + t * t + t, t}
      end)
      local x = tf.constant({0.1, 0.2, 0.3}, tf.float32)
      local a, t = core.graph_run(G, x)
      assert.same({1, 2, 3}, v:read_value():totable())
      assert_identical(tf.tanh(x * 3), t)
      assert_identical(v:read_value() * 2 + tf.tanh(x * 3) * tf.tanh(x * 3) + tf.tanh(x * 3), a)
    end)

    it("reuses a dying intermediate and keeps earlier results intact", function()
      local G = trace({{"float32", {4096}}}, function(x)
        local y = x
        for _ = 1, 4 do
          local a = tf.tanh(y)                 -- read twice: a group output that dies in the next group
          y = a * (a + 1)
        end
        return {y}
      end)
      local x1, x2 = tf.random.normal({4096}), tf.random.normal({4096})
      local function eager(y)
        for _ = 1, 4 do
          local a = tf.tanh(y)
          y = a * (a + 1)
        end
        return y
      end
      local r1 = core.graph_run(G, x1)
      local keep = r1:totable()
      local r2 = core.graph_run(G, x2)
      assert_identical(eager(x1), r1)
      assert_identical(eager(x2), r2)
      assert.same(keep, r1:totable())
    end)

    it("writes in place for a single elementwise op between other ops", function()
      local w = tf.random.normal({16, 16})
      local G = trace({{"float32", {16, 16}}}, function(x)
        local y = tf.matmul(x, w)
        y = y * 0.5                             -- a one-op step whose input dies here
        return {tf.matmul(y, w), y}
      end)
      local x = tf.random.normal({16, 16})
      local a, y = core.graph_run(G, x)
      assert_identical(tf.matmul(x, w) * 0.5, y)
      assert_identical(tf.matmul(tf.matmul(x, w) * 0.5, w), a)
    end)
  end)
end)
