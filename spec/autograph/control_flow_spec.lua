-- AutoGraph over symbolic tensors: converted if/while/for become tf.cond /
-- tf.while_loop inside tf.fn. These need the functional control flow ops;
-- where they are missing the cases are pending.
local tf = require("tf")
local ag = tf.autograph
local has_cf = tf.while_loop ~= nil and tf.cond ~= nil
local cf_it = has_cf and it or pending

local THIS = debug.getinfo(1, "S").short_src

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return e
end

-- run a tf.fn traced and with run_functions_eagerly, compare the results
local function both(g, ...)
  local traced = table.pack(g(...))
  tf.config.run_functions_eagerly(true)
  local ok, eager = pcall(function(...) return table.pack(g(...)) end, ...)
  tf.config.run_functions_eagerly(false)
  assert.is_true(ok, tostring(eager))
  for i = 1, math.max(traced.n, eager.n) do
    local a, b = traced[i], eager[i]
    if tf.is_tensor(a) then a = a:totable() end
    if tf.is_tensor(b) then b = b:totable() end
    assert.same(b, a, "result " .. i)
  end
  return table.unpack(traced, 1, traced.n)
end

-- cases whose values a stand-in tf.cond / tf.while_loop (bounded unrolling,
-- spec/autograph/standin_cf.lua) can check: the real ops when present
local standin = require("autograph.standin_cf")
local function sim_it(name, fn)
  it(name .. (has_cf and "" or " (stand-in tf.cond / tf.while_loop)"), function()
    local restore = standin.install(tf)
    local ok, err = pcall(fn)
    restore()
    if not ok then error(err, 0) end
  end)
end

local function count_ops(g, pattern, ...)
  local n = 0
  for _, node in ipairs(g:get_concrete_function(...).graph:nodes()) do
    if node.op:lower():find(pattern) then n = n + 1 end
  end
  return n
end

describe("AutoGraph on tensor conditions", function()
  it("finds x as the only loop variable of `while x > 0 do x = x - 1 end`", function()
    local function f(x)
      local y = 0
      while x > 0 do x = x - 1 end
      return x, y
    end
    assert.truthy(ag.to_code(f):find('function() return x end, function(...) x = ... end, {"x"}', 1, true))
  end)

  it("without tf.cond / tf.while_loop, says what is missing", function()
    if has_cf then return assert.is_function(tf.cond) end
    local g = tf.fn(function(x) if x > 0 then x = x + 1 end return x end)
    local e = err_of(g, tf.constant(1))
    assert.equal("UnimplementedError", e.kind)
    assert.truthy(e.message:find("tf.cond / tf.while_loop", 1, true), e.message)
  end)

  cf_it("runs find_next_odd traced once, right for odd and even starts", function()
    local v = tf.Variable(5)
    local find_next_odd = tf.fn(function()
      v:assign(v + 1)
      if v % 2 == 0 then v:assign(v + 1) end
    end)
    find_next_odd()
    assert.equal(7, v:value():item())
    v:assign(8)
    find_next_odd()
    assert.equal(9, v:value():item())
    assert.equal(1, find_next_odd:tracing_count())
  end)

  sim_it("makes `while x > 0 do x = x - 1 end` one while node", function()
    local g = tf.fn(function(x)
      while x > 0 do x = x - 1 end
      return x
    end)
    assert.equal(0, both(g, tf.constant(5)):item())
    assert.equal(-3, both(g, tf.constant(-3)):item())
    if has_cf then assert.equal(1, count_ops(g, "while", tf.TensorSpec({}, tf.int32))) end
  end)

  sim_it("branches a model's call on tf.reduce_mean(x) > 0", function()
    local call = tf.fn(function(input_data)
      if tf.reduce_mean(input_data) > 0 then
        return input_data
      else
        return input_data // 2
      end
    end)
    assert.same({-1, -2}, both(call, tf.constant({-2, -4})):totable())
    assert.same({1, 2}, both(call, tf.constant({1, 2})):totable())
    assert.equal(1, call:tracing_count())
    if has_cf then assert.equal(1, count_ops(call, "cond", tf.TensorSpec({2}, tf.int32))) end
  end)

  sim_it("turns a Lua number assigned in a tensor loop into a tensor (step counts)", function()
    local g = tf.fn(function(ds)
      local step = 0
      for _ in ds:iter() do step = step + 1 end
      return step
    end)
    assert.equal(8, g(tf.zeros({8, 3})):item())
  end)

  sim_it("loops to a tensor bound: train(num_steps) traces once", function()
    local train = tf.fn(function(num_steps)
      local acc = tf.constant(0)
      for i = 1, num_steps do acc = acc + i end
      return acc
    end)
    assert.equal(55, both(train, tf.constant(10)):item())
    assert.equal(210, train(tf.constant(20)):item())
    assert.equal(1, train:tracing_count())
  end)

  sim_it("loops over tf.range with a symbolic bound: the guide's train(num_steps)", function()
    local train = tf.fn(function(num_steps)
      local total = tf.constant(0)
      for i in tf.range(num_steps) do total = total + i end
      local odd = tf.constant(0.0)
      for x in tf.range(1, num_steps, 2, tf.float32):iter() do odd = odd + x end
      return total, odd
    end)
    local total, odd = both(train, tf.constant(6))
    assert.equal(0 + 1 + 2 + 3 + 4 + 5, total:item())
    assert.equal(1 + 3 + 5, odd:item())
    assert.equal(1, train:tracing_count())
    -- outside a loop, tf.range of a symbolic bound is a tensor whose length the graph's run decides
    local sum = tf.fn(function(n) return tf.reduce_sum(tf.range(n)) end)
    assert.equal(0 + 1 + 2, sum(tf.constant(3)):item())
    assert.equal(0 + 1 + 2 + 3 + 4, sum(tf.constant(5)):item())
  end)

  sim_it("supports break and return inside tensor loops and ifs", function()
    local g = tf.fn(function(x)
      local i = tf.constant(0)
      while i < 100 do
        i = i + 1
        if i * i > x then break end
      end
      return i
    end)
    assert.equal(4, both(g, tf.constant(10)):item())
    local h = tf.fn(function(x)
      if x > 0 then return x * 2 end
      return -x
    end)
    assert.equal(6, both(h, tf.constant(3)):item())
    assert.equal(3, both(h, tf.constant(-3)):item())
  end)

  cf_it("runs a loop that carries nothing (only side effects) with a dummy counter", function()
    local v = tf.Variable(0)
    local g = tf.fn(function(n)
      while v < n do v:assign_add(1) end
    end)
    g(tf.constant(4))
    assert.equal(4, v:value():item())
  end)

  sim_it("leaves out of the loop variables a temporary assigned before it is read", function()
    local g = tf.fn(function(x)
      local tmp
      local acc = 0
      while x > 0 do
        tmp = x * 2
        acc = acc + tmp
        x = x - 1
      end
      return acc
    end)
    assert.equal(2 * (3 + 2 + 1), both(g, tf.constant(3)):item())
  end)

  sim_it("runs repeat-until on a tensor condition, and goto continue in a tensor loop", function()
    local h = tf.fn(function(n)
      local s, i = 0, 0
      repeat
        i = i + 1
        s = s + i
      until i >= n
      return s, i
    end)
    local s, i = both(h, tf.constant(4))
    assert.equal(10, s:item())
    assert.equal(4, i:item())
    local k = tf.fn(function(t)
      local total = tf.constant(0)
      for j = 1, tf.reduce_max(t) do
        if j % 2 == 0 then goto continue end
        total = total + j
        ::continue::
      end
      return total
    end, {input_signature = {tf.TensorSpec({-1}, tf.int32)}})
    assert.equal(16, both(k, tf.constant({3, 7, 2})):item())
  end)

  sim_it("runs a generic for over an object with __tf_for (eagerly as Lua, traced as a graph loop)", function()
    -- yields 10, 20, ..., 10 * n: a stand-in for a dataset
    local Counter = {}
    Counter.__index = Counter
    function Counter.__tf_for(c, loop)
      return loop:while_(function(i) return tf.less_equal(i, c.n) end, function(i) return {i + 1}, i * 10 end,
        {tf.constant(1)})
    end
    local g = tf.fn(function(n)
      local total, steps = 0, 0
      for v in setmetatable({n = n}, Counter) do
        total = total + v
        steps = steps + 1
      end
      return total, steps
    end)
    local total, steps = g(tf.constant(4))
    assert.equal(100, total:item())
    assert.equal(4, steps:item())
    local eager_total, eager_steps = ag.to_graph(g:lua_function())(3)
    assert.equal(60, eager_total:item())
    assert.equal(3, eager_steps)
  end)

  cf_it("runs fizzbuzz over a tensor range with a TensorArray", function()
    local fizzbuzz = tf.fn(function(n)
      local ta = tf.TensorArray{dtype = tf.int32, size = 0, dynamic_size = true}
      for i = 1, n do
        local code
        if i % 15 == 0 then code = tf.constant(-3)
        elseif i % 3 == 0 then code = tf.constant(-1)
        elseif i % 5 == 0 then code = tf.constant(-2)
        else code = i end
        ta = ta:write(i, code)
      end
      return ta:stack()
    end)
    assert.same({1, 2, -1, 4, -2, -1, 7, 8, -1, -2, 11, -1, 13, 14, -3}, fizzbuzz(tf.constant(15)):totable())
  end)

  cf_it("writes a TensorArray inside a tensor if within a tensor loop", function()
    local g = tf.fn(function(n)
      local ta = tf.TensorArray{dtype = tf.int32, size = 0, dynamic_size = true}
      for i = 1, n do
        if i % 2 == 0 then ta = ta:write(i // 2, i) end
      end
      return ta:stack()
    end)
    assert.same({2, 4, 6}, g(tf.constant(6)):totable())
  end)

  sim_it("carries plain tables of values through tensor branches and loops (numbers become tensors)", function()
    local g = tf.fn(function(x)
      local acc = {sum = 0, count = 0}
      if x > 0 then acc = {sum = acc.sum + x, count = acc.count + 1} end
      local n = 3
      while n > x do
        acc = {sum = acc.sum + n, count = acc.count + 1}
        n = n - 1
      end
      return acc.sum, acc.count
    end)
    local sum, count = both(g, tf.constant(1))
    assert.equal(1 + 3 + 2, sum:item())
    assert.equal(3, count:item())
  end)

  describe("errors at the user's line", function()
    sim_it("a loop variable whose dtype changes (TypeError, both dtypes)", function()
      local line = debug.getinfo(1, "l").currentline + 3
      local g = tf.fn(function(n)
        local x = tf.constant(0)
        while x < n do
          x = tf.cast(x, tf.float32) + 1
        end
        return x
      end)
      local e = err_of(g, tf.constant(3))
      assert.equal("TypeError", e.kind)
      assert.truthy(e.message:find(("%s:%d"):format(THIS, line), 1, true), e.message)
      assert.truthy(e.message:find("'x' has dtype int32 before a while loop but dtype float32", 1, true), e.message)
    end)

    sim_it("a loop variable whose shape changes (ValueError, both shapes)", function()
      local g = tf.fn(function(n)
        local x = tf.constant({1})
        while tf.size(x) < n do x = tf.concat({x, x}, 1) end
        return x
      end)
      local e = err_of(g, tf.constant(3))
      assert.equal("ValueError", e.kind)
      assert.truthy(e.message:find("'x' has shape (1,) before a while loop but shape (2,)", 1, true), e.message)
    end)

    it("set_loop_options is hoisted out of the loop body", function()
      local function f(n)
        local x = tf.constant({1})
        while tf.size(x) < n do
          tf.autograph.experimental.set_loop_options{shape_invariants = {{x, {tf.None}}}, maximum_iterations = 5}
          x = tf.concat({x, x}, 1)
        end
        return x
      end
      local code = ag.to_code(f)
      assert.truthy(code:find("loop_options = function() return {shape_invariants = {{x, {tf.None}}}, " ..
        "maximum_iterations = 5} end}", 1, true), code)
      assert.falsy(code:find("ag__.fn(tf.autograph.experimental.set_loop_options)", 1, true), code)
      -- eagerly (Lua values and eager tensors) it does nothing
      assert.same({1, 1, 1, 1}, ag.to_graph(f)(3):totable())
    end)

    cf_it("set_loop_options' shape_invariants let a loop variable change shape", function()
      local g = tf.fn(function(n)
        local x = tf.constant({1})
        while tf.size(x) < n do
          tf.autograph.experimental.set_loop_options{shape_invariants = {{x, {tf.None}}}}
          x = tf.concat({x, x}, 1)
        end
        return x
      end)
      assert.same({1, 1, 1, 1}, g(tf.constant(3)):totable())
    end)

    sim_it("a loop variable that does not fit its shape invariant", function()
      local g = tf.fn(function(n)
        local x = tf.constant({1})
        while tf.size(x) < n do
          tf.autograph.experimental.set_loop_options{shape_invariants = {{x, {1}}}}
          x = tf.concat({x, x}, 1)
        end
        return x
      end)
      assert.tf_error("ValueError", "'x' has shape (2,) after one iteration of a while loop, which does not fit its " ..
        "shape invariant (1,)", g, tf.constant(3))
    end)

    sim_it("a variable assigned in only one branch and used after (ValueError naming it)", function()
      local g = tf.fn(function(x)
        local y
        if x > 0 then y = x end
        return y
      end)
      local e = err_of(g, tf.constant(1))
      assert.equal("ValueError", e.kind)
      assert.truthy(e.message:find("'y' is nil at the end of the else branch", 1, true), e.message)
    end)

    sim_it("nil flowing into a tensor loop", function()
      local g = tf.fn(function(x)
        local last
        while x > 0 do x = x - 1; last = x end
        return last
      end)
      local e = err_of(g, tf.constant(3))
      assert.equal("ValueError", e.kind)
      assert.truthy(e.message:find("'last' is nil before a while loop", 1, true), e.message)
    end)

    sim_it("a Lua table grown inside a tensor loop, with the fix", function()
      local g = tf.fn(function(n)
        local out = {}
        for i = 1, n do out[#out + 1] = i end
        return out
      end)
      local e = err_of(g, tf.constant(3))
      assert.equal("ValueError", e.kind)
      assert.truthy(e.message:find("the Lua table 'out' grows inside a for loop", 1, true), e.message)
      assert.truthy(e.message:find("tf.TensorArray", 1, true), e.message)
    end)

    sim_it("a return inside a tensor loop, with the fix", function()
      local g = tf.fn(function(x)
        while x > 0 do
          x = x - 1
          if x == 3 then return x end
        end
        return x
      end)
      assert.tf_error("UnimplementedError", "a `return` inside a while loop over a tensor condition is not " ..
        "supported: assign the result to a variable", g, tf.constant(5))
    end)

    sim_it("a return under a tensor condition inside a Lua loop, with the fix", function()
      local g = tf.fn(function(x)
        for i = 1, 3 do
          if x > i then return x end
        end
        return -x
      end)
      assert.tf_error("UnimplementedError", "a `return` inside a loop, under an if over a tensor condition, is not " ..
        "supported", g, tf.constant(5))
    end)

    sim_it("a non-bool tensor condition", function()
      local g = tf.fn(function(x) if x then return 1 end return 2 end)
      assert.tf_error("TypeError", "the condition of an if is a int32 tensor; a tensor condition must be bool", g,
        tf.constant(1))
    end)
  end)
end)
