-- spec/core/graph_spec.lua: tracing through the raw core API
-- (core.graph_begin / graph_placeholder / graph_end / graph_run /
-- graph_nodes), below tf.fn. Expected values are computed by hand or in
-- plain Lua.
local tf = require("tf")
local core = tf.core

-- Live nodes of a graph as {name -> node}, and their op names in order.
local function nodes_of(G, all)
  local by_name, ops = {}, {}
  for i, n in ipairs(core.graph_nodes(G, all)) do
    by_name[n.name] = n
    ops[i] = n.op
  end
  return by_name, ops
end

local function trace(name, types, body)
  local G = core.graph_begin(name)
  local ph = {}
  for i, t in ipairs(types) do ph[i] = core.graph_placeholder(G, t[1], t[2], t[3] or ("x" .. i)) end
  local ok, outs = pcall(body, table.unpack(ph))
  if not ok then
    core.graph_abort(G)
    error(outs, 0)
  end
  core.graph_end(G, outs)
  return G
end

describe("graph tracing (core API)", function()
  it("makes symbolic placeholders and op outputs named like TensorFlow's", function()
    local G = core.graph_begin("f")
    local x = core.graph_placeholder(G, "float32", {2, 3}, "x")
    assert.equal('Tensor("x:0", shape=(2, 3), dtype=float32)', tostring(x))
    local y = x * 2
    assert.equal('Tensor("multiply:0", shape=(2, 3), dtype=float32)', tostring(y))
    local z = x * 3
    assert.equal("multiply_1:0", core.symbolic_name(z))
    assert.is_true(core.is_tracing())
    core.graph_end(G, {y + z})
    assert.is_false(core.is_tracing())
  end)

  it("infers partial shapes: unknown dims stay unknown", function()
    local G = core.graph_begin("f")
    local x = core.graph_placeholder(G, "float32", {-1, 3}, "x")
    local y = tf.reduce_sum(x * 2, 2)
    assert.equal("(None,)", tostring(y.shape))
    core.graph_end(G, {y})
    assert.tensor_near({3, 12}, core.graph_run(G, tf.constant({{0, 1, 0.5}, {1, 2, 3}})))
    assert.tensor_near({0, 6, 3}, core.graph_run(G, tf.constant({{0, 0, 0}, {1, 1, 1}, {0.5, 0.5, 0.5}})))
  end)

  it("lists placeholders, captured constants, ops and an Identity per output", function()
    local G = trace("f", {{"float32", {3}, "a"}}, function(a)
      return {a + tf.constant({1, 2, 3}, tf.float32)}
    end)
    local _, ops = nodes_of(G)
    assert.same({"Placeholder", "Const", "add", "identity"}, ops)
    local n = nodes_of(G)
    assert.same({"a:0", "Const:0"}, n.add.inputs)
    assert.same({"add:0"}, n.Identity.inputs)
    assert.same({1, 3}, {n.add.outputs[1].dtype + 1, n.add.outputs[1].shape[1]})
  end)

  it("gives repeated op names a suffix", function()
    local G = trace("f", {{"float32", {}}}, function(x)
      return {tf.tanh(tf.tanh(tf.tanh(x)))}
    end)
    local n = nodes_of(G)
    assert.is_table(n.tanh)
    assert.is_table(n.tanh_1)
    assert.is_table(n.tanh_2)
  end)

  it("replays with new values and several outputs", function()
    local G = trace("f", {{"float32", {2}}, {"float32", {2}}}, function(a, b)
      return {a + b, a * b, a - 1}
    end)
    local s, p, m = core.graph_run(G, tf.constant({1, 2}, tf.float32), tf.constant({10, 20}, tf.float32))
    assert.tensor_near({11, 22}, s)
    assert.tensor_near({10, 40}, p)
    assert.tensor_near({0, 1}, m)
    s, p = core.graph_run(G, tf.constant({3, 4}, tf.float32), tf.constant({-1, 0.5}, tf.float32))
    assert.tensor_near({2, 4.5}, s)
    assert.tensor_near({-3, 2}, p)
  end)

  it("returns a concrete output as a constant, and an input as itself", function()
    local G = trace("f", {{"int32", {2}}}, function(x) return {x, tf.constant(7, tf.int32)} end)
    local x = tf.constant({4, 5}, tf.int32)
    local a, b = core.graph_run(G, x)
    assert.same({4, 5}, a:totable())
    assert.equal(7, b:item())
  end)

  it("checks the inputs against the placeholders", function()
    local G = trace("f", {{"float32", {2}}}, function(x) return {x + 1} end)
    assert.tf_error("InvalidArgumentError", "was expected to have shape (2,) but has shape (3,)",
                    core.graph_run, G, tf.constant({1, 2, 3}, tf.float32))
    assert.tf_error("InvalidArgumentError", "was expected to be a float32 tensor but is a int32 tensor",
                    core.graph_run, G, tf.constant({1, 2}, tf.int32))
    assert.tf_error("InvalidArgumentError", "expected 1 inputs, got 2",
                    core.graph_run, G, tf.constant({1, 2}, tf.float32), tf.constant({1, 2}, tf.float32))
  end)

  it("refuses a symbolic tensor once its trace is over", function()
    local leaked
    local G = trace("f", {{"float32", {2}}}, function(x)
      leaked = x * 2
      return {leaked}
    end)
    assert.tf_error("FailedPreconditionError", "symbolic tensor from a finished trace",
                    function() return leaked + 1 end)
    assert.tensor_near({2, 4}, core.graph_run(G, tf.constant({1, 2}, tf.float32)))
  end)

  it("refuses a symbolic tensor of another trace", function()
    local G1 = core.graph_begin("outer")
    local x = core.graph_placeholder(G1, "float32", {2}, "x")
    local G2 = core.graph_begin("inner")
    assert.tf_error("InvalidArgumentError", "of another trace", function() return x + 1 end)
    core.graph_abort(G2)
    core.graph_abort(G1)
  end)

  it("inlines a finished graph's replay into the graph being traced", function()
    local inner = trace("inner", {{"float32", {3}}}, function(x) return {tf.square(x) + 1} end)
    local outer = trace("outer", {{"float32", {3}}}, function(y)
      return {core.graph_run(inner, y * 2)}
    end)
    local _, ops = nodes_of(outer)
    assert.is_true(#ops >= 5)   -- the inner ops appear as nodes of the outer graph
    assert.tensor_near({1, 5, 17}, core.graph_run(outer, tf.constant({0, 1, 2}, tf.float32)))
  end)

  it("runs op by op under a tape, which then has the gradient", function()
    local G = trace("f", {{"float32", {3}}}, function(x) return {tf.tanh(x * 2) * 3 + x} end)
    local x = tf.constant({0.1, -0.4, 0.8}, tf.float32)
    local tape = tf.GradientTape()
    tape:watch(x)
    local y = tape:record(function() return core.graph_run(G, x) end)
    local g = tape:gradient(y, x)
    local want = {}
    for i, v in ipairs({0.1, -0.4, 0.8}) do
      local t = math.tanh(2 * v)
      want[i] = 6 * (1 - t * t) + 1
    end
    assert.tensor_near(want, g, {atol = 1e-5})
  end)

  it("runs stateful ops at every replay", function()
    local v = tf.Variable(tf.constant({1, 2}, tf.float32))
    local G = trace("f", {{"float32", {2}}}, function(x)
      v:assign_add(x)
      return {}
    end)
    core.graph_run(G, tf.constant({1, 1}, tf.float32))
    core.graph_run(G, tf.constant({0.5, 0.5}, tf.float32))
    assert.tensor_near({2.5, 3.5}, v:read_value())
  end)

  it("fails at graph_end with the op's error when folding finds it certainly wrong", function()
    local G = core.graph_begin("f")
    core.graph_placeholder(G, "int32", {2}, "x")
    local bad = tf.floordiv(tf.constant({1, 2}, tf.int32), tf.constant({0, 1}, tf.int32))
    assert.tf_error("InvalidArgumentError", "floordiv: integer division by zero", core.graph_end, G, {bad})
  end)
end)

describe("a trace left open by an error", function()
  it("is cleaned up at exit without a crash", function()
    local build = os.getenv("BUILD_DIR") or "build"
    local script = os.tmpname()
    local f = io.open(script, "w")
    f:write([[
local tf = require("tf"); local core = tf.core
local G = core.graph_begin("j")
local a = core.graph_placeholder(G, "string", {}, "a")
local z = tf.concat({a, a}, 1)   -- scalars: an error while tracing
]])
    f:close()
    local cmd = ("LUA_PATH_5_4='lua/?.lua;lua/?/init.lua;;' LUA_CPATH_5_4='%s/?.so;;' lua5.4 %s 2>&1"):format(build, script)
    local p = io.popen(cmd)
    local out = p:read("a")
    local _, _, code = p:close()
    os.remove(script)
    assert.equal(1, code, out)   -- the Lua error, not a signal
    assert.truthy(out:find("concat: cannot concatenate scalars", 1, true), out)
  end)
end)

describe("ops with many inputs while tracing", function()
  it("trace and run (no fixed limit on inputs)", function()
    local core = tf.core
    local G = core.graph_begin("wide")
    local ps = {}
    for i = 1, 70 do ps[i] = core.graph_placeholder(G, "float32", {1}, "p" .. i) end
    core.graph_end(G, {tf.concat(ps, 1)})
    local args = {}
    for i = 1, 70 do args[i] = tf.constant({i + 0.0}) end
    local out = core.graph_run(G, table.unpack(args))
    assert.shape({70}, out)
    assert.equal(70.0, out:totable()[70])
  end)
end)
