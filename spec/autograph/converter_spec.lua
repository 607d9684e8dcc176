-- tf.autograph: conversion of Lua functions (static analysis, generated code,
-- caching, upvalues, errors), run with Lua values and eager tensors. The
-- graph paths (symbolic conditions) are in control_flow_spec.lua.
local tf = require("tf")
local ag = tf.autograph

local THIS = debug.getinfo(1, "S").short_src

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return e
end

describe("tf.autograph.to_code", function()
  it("rewrites control flow into operator calls and the result compiles", function()
    local function f(x, n)
      local s = 0
      for i = 1, n do
        if i % 2 == 0 and x > 0 then s = s + i end
      end
      while s > 100 do s = s - 1 end
      return s
    end
    local code = ag.to_code(f)
    assert.truthy(code:find("ag__.for_range(1, n, nil, function(i)", 1, true), code)
    assert.truthy(code:find("ag__.if_stmt(ag__.and_(ag__.eq(i % 2, 0), function()\n      return ag__.gt(x, 0)\n" ..
      "    end)", 1, true), code)
    assert.truthy(code:find('function() return s end, function(...) s = ... end, {"s"}', 1, true), code)
    assert.truthy(code:find("ag__.while_stmt(function() return ag__.gt(s, 100) end", 1, true), code)
    local chunk, err = load(code, "=to_code")
    assert.is_nil(err)
    local g = chunk()
    assert.equal(30, g(1, 10))
    assert.equal(0, g(-1, 10))
  end)

  it("accepts a tf.fn and names the source lines", function()
    local line = debug.getinfo(1, "l").currentline + 1
    local g = tf.fn(function(x) return x end)
    assert.truthy(ag.to_code(g):find(("from %s:%d-%d"):format(THIS, line, line), 1, true))
  end)

  it("finds loop variables by static analysis: assigned outer locals, not locals of the body", function()
    local function f(a)
      local x, y, z = 0, 0, 0
      while x < a do
        local tmp = x + 1
        x = tmp
        y = y + x
      end
      return x, y, z
    end
    local code = ag.to_code(f)
    assert.truthy(code:find('{"x", "y"}', 1, true), code)
    assert.falsy(code:find('"tmp"', 1, true), code)
    assert.falsy(code:find('"z"', 1, true), code)
  end)

  it("does not carry a variable that each iteration assigns before reading it", function()
    local function f(x)
      local tmp, acc
      acc = 0
      while x > 0 do
        tmp = x * 2
        acc = acc + tmp
        x = x - 1
      end
      return acc
    end
    local code = ag.to_code(f)
    assert.truthy(code:find('{"tmp", "acc", "x"}, {undefined = {"tmp"}}', 1, true), code)
  end)

  it("marks a variable that is not read after the statement as allowed to be undefined", function()
    local function f(c)
      local t    -- luacheck: ignore 231
      if c then t = 1 end
      return 0
    end
    assert.truthy(ag.to_code(f):find('undefined = {"t"}', 1, true), ag.to_code(f))
    local function g(c)
      local t
      if c then t = 1 end
      return t
    end
    assert.falsy(ag.to_code(g):find("undefined", 1, true), ag.to_code(g))
  end)
end)

describe("converted functions with Lua values", function()
  -- each case: the converted function returns what the original returns
  local cases = {
    ["if / elseif / else"] = function(a)
      local r
      if a < 0 then r = "neg" elseif a == 0 then r = "zero" else r = "pos" end
      return r
    end,
    ["return inside if branches"] = function(a)
      if a > 2 then return a * 10 end
      if a == 1 then return 1, 2 end
      return -a
    end,
    ["break and return inside loops"] = function(a)
      local s = 0
      for i = 1, 100 do
        if i > a then break end
        s = s + i
      end
      local j = 0
      while true do
        j = j + 1
        if j >= 3 then break end
      end
      for k = 1, 10 do
        if k == a then return s, j, k end
      end
      return s, j
    end,
    ["goto continue"] = function(a)
      local s = 0
      for i = 1, a do
        if i % 2 == 0 then goto continue end
        s = s + i
        ::continue::
      end
      return s
    end,
    ["goto that stays within converted bodies"] = function(a)
      local n = a
      do goto skip end
      n = n + 100  -- luacheck: ignore 511
      ::skip::
      if n > 1 then
        do goto inner end
        n = n * 100  -- luacheck: ignore 511
        ::inner::
        n = n + 1
      end
      return n
    end,
    ["repeat until reading body locals"] = function(a)
      local n = 0
      repeat
        local next_n = n + 1
        n = next_n
      until next_n >= a
      return n
    end,
    ["generic for over pairs/ipairs and nested loops"] = function(a)
      local s = 0
      for _, v in ipairs({1, 2, 3}) do
        for k = 1, a do s = s + v * k end
      end
      return s
    end,
    ["and / or / not keep Lua semantics"] = function(a)
      local t = {}
      local x = t.missing or a
      local y = a > 1 and "big" or "small"
      return x, y, not a, nil and 1, false or nil
    end,
    ["varargs inside converted blocks"] = function(...)
      local n = select("#", ...)
      if n > 1 then return ..., n end
      return n
    end,
    ["nested functions are converted too"] = function(a)
      local function sign(v)
        if v < 0 then return -1 elseif v > 0 then return 1 end
        return 0
      end
      return sign(a), sign(-a), sign(0)
    end,
  }
  for name, f in pairs(cases) do
    it(name, function()
      local g = ag.to_graph(f)
      assert.are_not.equal(f, g)
      for _, a in ipairs({-1, 0, 1, 2, 3, 5}) do
        assert.same({f(a)}, {g(a)}, name .. " with " .. a)
      end
      assert.same({f(1, 2, 3)}, {g(1, 2, 3)})
    end)
  end

  it("unrolls a loop over a Lua bound while tracing", function()
    local g = tf.fn(function(x, n)
      for _ = 1, n do x = x * 2 end
      return x
    end)
    assert.equal(24, g(tf.constant(3), 3):item())
    local muls = 0
    for _, node in ipairs(g:get_concrete_function(tf.TensorSpec({}, tf.int32), 3).graph:nodes()) do
      if node.op == "multiply" then muls = muls + 1 end
    end
    assert.equal(3, muls)
  end)

  it("decides eager tensor conditions by their value", function()
    local g = ag.to_graph(function(x)
      local y
      if x > 0 then y = x else y = -x end
      local n = 0
      while x > 0 do x = x - 1; n = n + 1 end
      for row in tf.constant({{1, 2}, {3, 4}}):iter() do n = n + row[1]:item() end
      return y, n
    end)
    local y, n = g(tf.constant(3))
    assert.equal(3, y:item())
    assert.equal(3 + 1 + 3, n)
    assert.equal(2, (g(tf.constant(-2))):item())
  end)

  it("keeps Lua's operators on eager tensors outside traces (== is whole-value equality)", function()
    local g = ag.to_graph(function(a, b) return a == b, a ~= b, a[1] < b[1] end)
    local eq, ne, lt = g(tf.constant({1, 2}), tf.constant({1, 2}))
    assert.is_true(eq)
    assert.is_false(ne)
    assert.is_false(lt)
    assert.same({false, true, true}, {g(tf.constant({1, 2}), tf.constant({2, 2}))})
  end)

  it("turns comparisons on symbolic tensors into tensors (tf.less, ...) inside tf.fn", function()
    local g = tf.fn(function(x) return x > 1, x <= 1, x == 2, x ~= 2, not (x > 1) end)  -- luacheck: ignore 581
    local a, b, c, d, e = g(tf.constant({1, 2, 3}))
    assert.same({false, true, true}, a:totable())
    assert.same({true, false, false}, b:totable())
    assert.same({false, true, false}, c:totable())
    assert.same({true, false, true}, d:totable())
    assert.same({true, false, false}, e:totable())
  end)
end)

describe("the converted closure", function()
  it("shares the original's upvalues (not copies) and its _ENV", function()
    local count = 0
    local function f(a)
      if a then count = count + 1 end
      return count
    end
    local g = ag.to_graph(f)
    assert.equal(1, g(true))
    assert.equal(1, count)
    count = 10
    assert.equal(11, g(true))
    assert.equal(11, f(false))
    local env = {seen = 0}
    local h = load("return function(a) if a then seen = seen + a end return seen end", "=envchunk", "t", env)
    local hh = h()
    env.tag = 1
    tf.get_logger():set_handler(function() end)
    local conv = ag.to_graph(hh)
    tf.get_logger():set_handler(nil)
    -- no source for "=envchunk": unconverted, still right
    assert.equal(2, conv(2))
    local src = "return function(a) if a then seen = seen + a end return seen end"
    local k = load(src, src, "t", env)()
    local kk = ag.to_graph(k)
    assert.are_not.equal(k, kk)
    assert.equal(5, kk(3))
    assert.equal(5, env.seen)
  end)

  it("is converted once per prototype, not per closure or per trace", function()
    local function make(c) return function(x) if c then return x + c end return x end end
    local stats = tf.core.internal.autograph_stats
    local before = stats.conversions
    local g1, g2 = tf.fn(make(1)), tf.fn(make(2))
    assert.equal(2, g1(tf.constant(1)):item())
    assert.equal(3, g2(tf.constant(1)):item())
    assert.equal(2.5, g1(tf.constant(1.5)):item())
    assert.equal(before + 1, stats.conversions)
  end)

  it("converts called functions recursively, but not luatf's own or C functions", function()
    local function positive(v) return v > 0 end
    local g = tf.fn(function(x) return positive(x) end)
    assert.same({true, false}, g(tf.constant({1, -1})):totable())
    local unconv = tf.fn(function(x) return positive(x) end, {autograph = false})
    assert.tf_error("TypeError", "a symbolic tensor cannot be used as a Lua boolean", unconv, tf.constant({1, -1}))
    assert.equal(tf.reduce_sum, ag.to_graph(tf.reduce_sum))
    assert.equal(print, ag.to_graph(print))
  end)

  it("converts methods called on a variable (self:helper(x))", function()
    local Model = {}
    Model.__index = Model
    function Model:sign(v) return v > 0 end  -- luacheck: ignore 212
    function Model:call(x) return self:sign(x) end
    local m = setmetatable({}, Model)
    local g = tf.fn(function(x) return m:call(x) end)
    assert.same({true, false}, g(tf.constant({1, -1})):totable())
    assert.truthy(ag.to_code(Model.call):find("ag__.fn(self.sign)(self, x)", 1, true), ag.to_code(Model.call))
  end)

  it("leaves functions marked do_not_convert alone", function()
    local f = ag.do_not_convert(function(x) return x > 0 end)
    assert.equal(f, ag.to_graph(f))
    local g = tf.fn(f)
    assert.tf_error("TypeError", "tf.cond / tf.while_loop (or autograph)", g, tf.constant(1))
    assert.tf_error("TypeError", "do_not_convert: expected a function, got number", ag.do_not_convert, 1)
  end)

  it("warns once and traces unconverted without source (a stripped chunk)", function()
    local f = load(string.dump(load("return function(...) local x = ... return x + 1 end")(), true))
    local warnings = {}
    tf.get_logger():set_handler(function(_, text) warnings[#warnings + 1] = text end)
    local g = tf.fn(f)
    local ok, r = pcall(g, tf.constant(1))
    local g2 = tf.fn(f)
    pcall(g2, tf.constant(2))
    tf.get_logger():set_handler(nil)
    assert.is_true(ok, tostring(r))
    assert.equal(2, r:item())
    assert.equal(1, #warnings)
    assert.truthy(warnings[1]:find("AutoGraph could not convert", 1, true), warnings[1])
    assert.truthy(warnings[1]:find("source is not available", 1, true), warnings[1])
  end)
end)

describe("errors of converted code", function()
  it("point at the user's file and line", function()
    local line = debug.getinfo(1, "l").currentline + 3
    local g = tf.fn(function(x)
      if x ~= nil then
        error("boom")
      end
      return x
    end)
    local e = err_of(g, tf.constant(1))
    assert.truthy(tostring(e):find(("%s:%d: boom"):format(THIS, line), 1, true), tostring(e))
  end)

  it("keep every line: debug.getinfo and tracebacks inside converted code see the source lines", function()
    local first = debug.getinfo(1, "l").currentline + 2
    local g = ag.to_graph(function(n)
      local lines = {}
      for i = 1, n do
        if i % 2 == 0 then
          lines[#lines + 1] = debug.getinfo(1, "l").currentline
        else
          while false do end  -- luacheck: ignore 512
          lines[#lines + 1] = debug.getinfo(1, "l").currentline
        end
      end
      local ok, err = pcall(function() local t = nil; return t.x end)
      return lines, ok, err
    end)
    local lines, ok, err = g(2)
    assert.same({first + 6, first + 3}, lines)
    assert.is_false(ok)
    assert.truthy(err:find(("%s:%d: attempt to index a nil value (local 't')"):format(THIS, first + 9), 1, true), err)
  end)

  it("refuse a goto out of a converted block, with the reason and the fix", function()
    local line = debug.getinfo(1, "l").currentline + 4
    local g = tf.fn(function(x)
      for i = 1, 3 do
        x = x + i
        if i == 2 then goto done end
      end
      ::done::
      return x
    end)
    local e = err_of(g, tf.constant(1))
    assert.equal("UnimplementedError", e.kind)
    assert.truthy(e.message:find(("%s:%d: goto done"):format(THIS, line), 1, true), e.message)
    assert.truthy(e.message:find("use break", 1, true), e.message)
    assert.truthy(e.message:find("autograph = false", 1, true), e.message)
  end)

  it("refuse a repeat loop that breaks and whose until reads the body's locals", function()
    local line = debug.getinfo(1, "l").currentline + 3
    local g = tf.fn(function(x)
      local i = 0
      repeat
        i = i + 1
        if i > 10 then break end
        local done = i >= 3
      until done
      return x + i
    end)
    local e = err_of(g, tf.constant(1))
    assert.equal("UnimplementedError", e.kind)
    assert.truthy(e.message:find(("%s:%d: a repeat loop whose `until` condition reads locals"):format(THIS, line), 1,
      true), e.message)
  end)

  it("explain a symbolic tensor as a Lua for bound without conversion", function()
    local g = tf.fn(function(n)
      local s = 0
      for i = 1, n do s = s + i end
      return s
    end, {autograph = false})
    local e = err_of(g, tf.constant(3))
    assert.equal("TypeError", e.kind)
    assert.truthy(e.message:find("tf.while_loop", 1, true), e.message)
    assert.truthy(e.message:find("autograph", 1, true), e.message)
    local h = tf.fn(function(x) return x:item() end, {autograph = false})
    assert.tf_error("TypeError", "branch with tf.cond / tf.where and loop with tf.while_loop (or let autograph " ..
      "convert", h, tf.constant(1))
  end)

  it("reject a non-scalar eager condition", function()
    local g = ag.to_graph(function(x) if x:gt(0) then return 1 end return 2 end)
    assert.tf_error("ValueError", "must be a scalar (use tf.reduce_all / tf.reduce_any)", g, tf.constant({1, 2}))
    assert.equal(1, g(tf.constant({3})))
  end)
end)
