-- tf.cond, tf.while_loop, tf.switch_case, tf.case and tf.TensorArray:
-- eagerly (plain Lua) and inside tf.fn (one cond/while node running
-- function graphs), the same values both ways, gradients first and second
-- order against hand-computed derivatives, and the errors.
local tf = require("tf")

local function ops_of(f, ...)
  local ops = {}
  for _, n in ipairs(f:get_concrete_function(...).graph:nodes()) do ops[#ops + 1] = n.op end
  return ops
end

local function count(list, x)
  local c = 0
  for _, v in ipairs(list) do if v == x then c = c + 1 end end
  return c
end

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok)
  return e
end

describe("tf.cond", function()
  local function branchy(x)
    return tf.cond(tf.greater(tf.reduce_sum(x), 0), function() return x * 2 end, function() return x - 1 end)
  end

  it("calls one branch for a Lua boolean or an eager pred", function()
    local calls = {}
    local r = tf.cond(true, function() calls[#calls + 1] = "t" return 1 end, function() calls[#calls + 1] = "f" return 2 end)
    assert.are.equal(1, r)
    assert.are.same({"t"}, calls)
    assert.are.same({0, 2}, branchy(tf.constant({1.0, 2.0}) - 1):totable())
    assert.are.same({-3, -4}, branchy(tf.constant({-2.0, -3.0})):totable())
  end)

  it("is one cond node inside tf.fn, and takes either branch at run time", function()
    local f = tf.fn(branchy)
    assert.are.same({2, 4}, f(tf.constant({1.0, 2.0})):totable())
    assert.are.same({-2, -3}, f(tf.constant({-1.0, -2.0})):totable())
    assert.are.equal(1, f:tracing_count())
    local ops = ops_of(f, tf.constant({1.0, 2.0}))
    assert.are.equal(1, count(ops, "cond"))
    assert.are.equal(0, count(ops, "multiply"))   -- the branches live in the node's functions
  end)

  it("returns nested tables and several values", function()
    local f = tf.fn(function(x)
      return tf.cond(tf.less(x, 0), function() return {a = -x, b = {x, x * x}}, 7 end,
                     function() return {a = x, b = {x + 1, x}}, 8 end)
    end)
    local r, n = f(tf.constant(-3.0))
    assert.are.equal(3, r.a:item())
    assert.are.equal(-3, r.b[1]:item())
    assert.are.equal(9, r.b[2]:item())
    assert.are.equal(7, n:item())
    r, n = f(tf.constant(2.0))
    assert.are.same({2, 3, 2, 8}, {r.a:item(), r.b[1]:item(), r.b[2]:item(), n:item()})
  end)

  it("merges branch shapes to the common partial shape", function()
    local f = tf.fn(function(x)
      return tf.cond(tf.greater(tf.reduce_sum(x), 0), function() return tf.ones({2, 3}) end,
                     function() return tf.zeros({4, 3}) end)
    end)
    assert.are.same({2, 3}, f(tf.constant({1.0})):_dims())
    assert.are.same({4, 3}, f(tf.constant({-1.0})):_dims())
  end)

  it("names the output path and both types when the branches differ", function()
    local f = tf.fn(function(x)
      return tf.cond(tf.greater(x, 0), function() return {v = x, w = {x}} end, function() return {v = x, w = x} end)
    end)
    local e = err_of(f, tf.constant(1.0))
    assert.are.equal("ValueError", e.kind)
    assert.matches("output.w is a table in true_fn and a tensor in false_fn", e.message, 1, true)
    local g = tf.fn(function(x)
      return tf.cond(tf.greater(x, 0), function() return {x, 1} end, function() return {x, 1.5} end)
    end)
    e = err_of(g, tf.constant(1.0))
    assert.are.equal("TypeError", e.kind)
    assert.matches("cond: output[2] is int32 in true_fn and float32 in false_fn", e.message, 1, true)
  end)

  it("refuses a pred that is not a bool scalar", function()
    local e = err_of(tf.cond, tf.constant(1.0), function() end, function() end)
    assert.are.equal("TypeError", e.kind)
    assert.matches("cond: 'pred' must be a bool tensor, got dtype float32", e.message, 1, true)
    e = err_of(tf.cond, tf.constant({true, false}), function() end, function() end)
    assert.are.equal("InvalidArgumentError", e.kind)
    assert.matches("'pred' must be a scalar, got shape (2,)", e.message, 1, true)
  end)

  it("runs the effects of the taken branch only (find_next_odd)", function()
    local v = tf.Variable(1)
    local find_next_odd = tf.fn(function()
      v:assign(v + 1)
      tf.cond(tf.equal(v % 2, 0), function() v:assign(v + 1) return 0 end, function() return 0 end)
    end)
    find_next_odd()
    assert.are.equal(3, v:numpy())
    find_next_odd()
    assert.are.equal(5, v:numpy())
    v:assign(2)
    find_next_odd()
    assert.are.equal(3, v:numpy())
    assert.are.equal(1, find_next_odd:tracing_count())
  end)

  it("differentiates through the taken branch, first and second order", function()
    local f = tf.fn(function(x)
      local t2 = tf.GradientTape()
      t2:watch(x)
      local g = t2:record(function()
        local t1 = tf.GradientTape()
        t1:watch(x)
        local y = t1:record(function()
          return tf.cond(tf.greater(x, 0), function() return x * x * x end, function() return tf.sin(x) end)
        end)
        return t1:gradient(y, x)
      end)
      return {g, t2:gradient(g, x)}
    end)
    local r = f(tf.constant(2.0, tf.float64))
    assert.are.equal(12, r[1]:item())       -- 3x^2
    assert.are.equal(12, r[2]:item())       -- 6x
    r = f(tf.constant(-0.5, tf.float64))
    assert.is_true(math.abs(r[1]:item() - math.cos(-0.5)) < 1e-12)
    assert.is_true(math.abs(r[2]:item() + math.sin(-0.5)) < 1e-12)
  end)

  it("differentiates a traced cond from a tape outside the tf.fn", function()
    local f = tf.fn(function(x, w)
      return tf.cond(tf.greater(tf.reduce_sum(x), 0), function() return x * w end, function() return x + w end)
    end)
    local x, w = tf.constant({1.0, 2.0}), tf.constant(3.0)
    local t = tf.GradientTape()
    t:watch({x, w})
    local y = t:record(function() return tf.reduce_sum(f(x, w)) end)
    local g = t:gradient(y, {x, w})
    assert.are.same({3, 3}, g[1]:totable())
    assert.are.equal(3, g[2]:item())
  end)
end)

describe("tf.while_loop", function()
  local function countdown(x)
    return tf.while_loop(function(v) return tf.greater(v, 0) end, function(v) return v - 1 end, {x})[1]
  end

  it("loops in Lua eagerly and returns a table of the final values", function()
    local r = tf.while_loop(function(i, s) return tf.less(i, 10) end, function(i, s) return i + 1, s * 2 end,
                            {tf.constant(0), tf.constant(1.0)})
    assert.are.equal(10, r[1]:item())
    assert.are.equal(1024, r[2]:item())
    assert.are.equal(0, countdown(tf.constant(5)):item())
  end)

  it("is one while node inside tf.fn with x its only loop variable", function()
    local f = tf.fn(countdown)
    assert.are.equal(0, f(tf.constant(5)):item())
    assert.are.equal(0, f(tf.constant(17)):item())
    assert.are.equal(1, f:tracing_count())
    local cf = f:get_concrete_function(tf.constant(5))
    local whiles = 0
    for _, n in ipairs(cf.graph:nodes()) do
      if n.op == "while" then
        whiles = whiles + 1
        assert.are.equal(1, #n.inputs)
      end
    end
    assert.are.equal(1, whiles)
  end)

  it("gives the same values traced as eagerly, with captures and nested structures", function()
    local function body_fn(x)
      return tf.while_loop(function(s) return tf.less(s.i, 5) end,
                           function(s) return {{i = s.i + 1, acc = {s.acc[1] + x, s.acc[2] * 2}}} end,
                           {{i = tf.constant(0), acc = {tf.zeros({2}), tf.constant(1.0)}}})[1]
    end
    local x = tf.constant({1.0, 2.0})
    local e, t = body_fn(x), tf.fn(body_fn)(x)
    assert.are.same(e.acc[1]:totable(), t.acc[1]:totable())
    assert.are.same({5, 10}, t.acc[1]:totable())
    assert.are.equal(32, t.acc[2]:item())
    assert.are.equal(5, t.i:item())
  end)

  it("stops at maximum_iterations", function()
    local f = tf.fn(function(x)
      return tf.while_loop(function(v) return tf.constant(true) end, function(v) return v + 1 end, {x},
                           {maximum_iterations = 7})[1]
    end)
    assert.are.equal(7, f(tf.constant(0)):item())
    local e = tf.while_loop(function() return true end, function(v) return v + 1 end, {0}, {maximum_iterations = 3})
    assert.are.equal(3, e[1])
  end)

  it("refuses a loop variable whose dtype or shape changes, unless a shape invariant allows it", function()
    local f = tf.fn(function(x)
      return tf.while_loop(function(v) return tf.less(tf.reduce_sum(v), 10) end,
                           function(v) return tf.concat({v, v}, 1) end, {x})[1]
    end)
    local e = err_of(f, tf.constant({1.0}))
    assert.are.equal("ValueError", e.kind)
    assert.matches("while_loop: loop_vars[1] has shape (1,) before the loop and (2,) after one iteration", e.message, 1, true)
    local g = tf.fn(function(x)
      return tf.while_loop(function(v) return tf.less(tf.reduce_sum(v), 10) end,
                           function(v) return tf.concat({v, v}, 1) end, {x}, {shape_invariants = {{tf.None}}})[1]
    end)
    assert.are.same({16}, g(tf.constant({1.0})):_dims())
    local h = tf.fn(function(x)
      return tf.while_loop(function(v) return tf.less(v, 10) end, function(v) return tf.cast(v, tf.float32) end, {x})[1]
    end)
    e = err_of(h, tf.constant(1))
    assert.are.equal("TypeError", e.kind)
    assert.matches("loop_vars[1] enters the loop as int32 and the body returns float32", e.message, 1, true)
  end)

  it("differentiates a loop with a data-dependent trip count", function()
    -- v <- v * v while i < n: y = x^(2^n), dy/dx = 2^n x^(2^n - 1)
    local g = tf.fn(function(x, n)
      local t = tf.GradientTape()
      t:watch(x)
      local y = t:record(function()
        return tf.while_loop(function(i) return tf.less(i, n) end, function(i, v) return {i + 1, v * v} end,
                             {tf.constant(0), x})[2]
      end)
      return t:gradient(y, x)
    end)
    assert.are.equal(4 * 1.5 ^ 3, g(tf.constant(1.5, tf.float64), tf.constant(2)):item())
    assert.are.equal(8 * 1.5 ^ 7, g(tf.constant(1.5, tf.float64), tf.constant(3)):item())
    assert.are.equal(1, g(tf.constant(1.5, tf.float64), tf.constant(0)):item())
  end)

  it("differentiates captured tensors and second order", function()
    local f = tf.fn(function(x, w)
      local t2 = tf.GradientTape()
      t2:watch(w)
      local gw = t2:record(function()
        local t = tf.GradientTape()
        t:watch({x, w})
        local y = t:record(function()
          return tf.while_loop(function(i) return tf.less(i, 3) end, function(i, v) return {i + 1, v * w} end,
                               {tf.constant(0), x})[2]
        end)
        return t:gradient(y, w)   -- 3 x w^2
      end)
      return {gw, t2:gradient(gw, w)}   -- 6 x w
    end)
    local r = f(tf.constant(2.0, tf.float64), tf.constant(3.0, tf.float64))
    assert.are.equal(54, r[1]:item())
    assert.are.equal(36, r[2]:item())
  end)
end)

describe("tf.switch_case and tf.case", function()
  it("pick the 1-based branch, the last one when out of range", function()
    local f = tf.fn(function(i)
      return tf.switch_case(i, {function() return tf.constant(10) end, function() return tf.constant(20) end,
                                function() return tf.constant(30) end})
    end)
    assert.are.same({10, 20, 30, 30}, {f(tf.constant(1)):item(), f(tf.constant(2)):item(), f(tf.constant(3)):item(),
                                       f(tf.constant(9)):item()})
    assert.are.equal(20, tf.switch_case(2, {function() return 10 end, function() return 20 end}))
  end)

  it("tf.case takes the first true pred, else the default", function()
    local f = tf.fn(function(x)
      return tf.case({{tf.less(x, 0), function() return tf.constant(-1) end},
                      {tf.equal(x, 0), function() return tf.constant(0) end}}, function() return tf.constant(1) end)
    end)
    assert.are.same({-1, 0, 1}, {f(tf.constant(-5)):item(), f(tf.constant(0)):item(), f(tf.constant(5)):item()})
    local e = err_of(tf.case, {{true, function() return 1 end}, {true, function() return 2 end}}, nil, true)
    assert.are.equal("InvalidArgumentError", e.kind)
  end)
end)

describe("tf.TensorArray", function()
  it("writes, reads, stacks, gathers eagerly with 1-based indices", function()
    local ta = tf.TensorArray{dtype = tf.float32, size = 3}
    ta = ta:write(1, tf.constant({1.0, 2.0})):write(3, tf.constant({5.0, 6.0}))
    assert.are.same({{1, 2}, {0, 0}, {5, 6}}, ta:stack():totable())
    assert.are.same({5, 6}, ta:read(3):totable())
    assert.are.same({{5, 6}, {1, 2}}, ta:gather({3, 1}):totable())
    assert.are.equal(3, ta:size():item())
    local e = err_of(ta.write, ta, 4, tf.constant({0.0, 0.0}))
    assert.matches("index 4 is out of range for a TensorArray of size 3", e.message, 1, true)
    local u = tf.TensorArray{dtype = tf.float32}:unstack(tf.constant({{1.0}, {2.0}}))
    assert.are.same({2}, u:read(2):totable())
    assert.are.same({1, 2}, u:concat():totable())
  end)

  it("a fixed size with no element_shape inside tf.fn: the first write settles it (known or run-time dims)", function()
    local f = tf.fn(function(x)
      local ta = tf.TensorArray{dtype = tf.float32, size = 3}
      return ta:write(1, x):write(2, x * 2):write(3, x * 3):stack()
    end)
    assert.are.same({{1, 2}, {2, 4}, {3, 6}}, f(tf.constant({1.0, 2.0})):totable())
    local g = tf.fn(function(x)
      return tf.TensorArray{dtype = tf.float32, size = 3}:write(2, x * 2):stack()
    end, {input_signature = {tf.TensorSpec({nil, 2}, tf.float32)}})
    assert.are.same({{{0, 0}}, {{2, 4}}, {{0, 0}}}, g(tf.constant({{1.0, 2.0}})):totable())
  end)

  it("is a loop variable that grows inside tf.fn (fizzbuzz)", function()
    local fizzbuzz = tf.fn(function(n)
      local ta = tf.TensorArray{dtype = tf.string, size = 0, dynamic_size = true}
      return tf.while_loop(function(i) return tf.less_equal(i, n) end, function(i, a)
        local s = tf.case({{tf.equal(i % 15, 0), function() return tf.constant("FizzBuzz") end},
                           {tf.equal(i % 3, 0), function() return tf.constant("Fizz") end},
                           {tf.equal(i % 5, 0), function() return tf.constant("Buzz") end}},
                          function() return tf.constant("-") end)
        return {i + 1, a:write(i, s)}
      end, {tf.constant(1), ta})[2]:stack()
    end)
    assert.are.same({"-", "-", "Fizz", "-", "Buzz", "Fizz", "-", "-", "Fizz", "Buzz", "-", "Fizz", "-", "-", "FizzBuzz"},
                    fizzbuzz(tf.constant(15)):totable())
    assert.are.equal(4, #fizzbuzz(tf.constant(4)):totable())
  end)

  it("is differentiable inside a loop", function()
    local g = tf.fn(function(x)
      local t = tf.GradientTape()
      t:watch(x)
      local y = t:record(function()
        local ta = tf.TensorArray{dtype = tf.float64, size = 3, element_shape = {}}
        local r = tf.while_loop(function(i) return tf.less_equal(i, 3) end,
                                function(i, p, a) return {i + 1, p * x, a:write(i, p * x)} end,
                                {tf.constant(1), tf.constant(1.0, tf.float64), ta})
        return tf.reduce_sum(r[3]:stack())    -- x + x^2 + x^3
      end)
      return t:gradient(y, x)
    end)
    assert.are.equal(1 + 2 * 2 + 3 * 4, g(tf.constant(2.0, tf.float64)):item())
  end)
end)

describe("examples/control_flow.lua", function()
  it("runs the seeds' control-flow examples with the functional API", function()
    local build = os.getenv("BUILD_DIR") or "build"
    local p = io.popen(("LUA_PATH_5_4='lua/?.lua;lua/?/init.lua;;' LUA_CPATH_5_4='%s/?.so;;' lua5.4 examples/control_flow.lua 2>&1")
      :format(build))
    local out = p:read("a")
    local ok = p:close()
    assert.is_true(ok, out)
    assert.truthy(out:find("next odd after 1:\t3\nnext odd after 4:\t5\ttraces:\t1\n", 1, true), out)
    assert.truthy(out:find("countdown from 5:\t0", 1, true), out)
    assert.truthy(out:find("model(-):\ttf.Tensor([-2 -3]", 1, true), out)
    assert.truthy(out:find("fizzbuzz:\t. . Fizz . Buzz Fizz . . Fizz Buzz . Fizz . . FizzBuzz", 1, true), out)
    local w = tonumber(out:match("w = ([%d%.]+), traces: 1"))
    assert.truthy(w, out)
    assert.is_true(math.abs(w - 3 * (1 - 0.8 ^ 60)) < 1e-4, out)
  end)
end)

describe("while loop bodies", function()
  it("hoist nothing with an effect: random draws and variable reads stay per iteration", function()
    local v = tf.Variable(0.0)
    local f = tf.fn(function(w)
      local r = tf.while_loop(function(i) return tf.less(i, 4) end, function(i, acc, ta)
        v:assign_add(1.0)
        local draw = tf.random.uniform({})                 -- depends on no loop variable
        return {i + 1, acc + v:value() * w, ta:write(i + 1, draw)}
      end, {tf.constant(0), tf.constant(0.0), tf.TensorArray{dtype = tf.float32, size = 4, element_shape = {}}})
      return {r[2], r[3]:stack()}
    end)
    local out = f(tf.constant(2.0))
    assert.are.equal(2 * (1 + 2 + 3 + 4), out[1]:item())  -- each iteration read the new value
    local d = out[2]:totable()
    assert.is_true(d[1] ~= d[2] and d[2] ~= d[3] and d[3] ~= d[4])
  end)

  it("compute values that depend on no loop variable once, with the same results", function()
    local W = tf.reshape(tf.range(1, 10, 1, tf.float32), {3, 3})
    local f = tf.fn(function(x)
      return tf.while_loop(function(i) return tf.less(i, 5) end,
                           function(i, s) return {i + 1, s + tf.reduce_sum(tf.matmul(W, W)) + x} end,
                           {tf.constant(0), tf.constant(0.0)})[2]
    end)
    local once = tf.reduce_sum(tf.matmul(W, W)):item()
    assert.are.equal(5 * (once + 1), f(tf.constant(1.0)):item())
    assert.are.equal(5 * (once + 2), f(tf.constant(2.0)):item())
  end)
end)
