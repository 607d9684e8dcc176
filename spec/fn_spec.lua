local tf = require("tf")

-- Runs fn, returning what Lua print and tf.print wrote (one entry per line;
-- Lua print's arguments joined by a space, like Python's print).
local function capture(fn)
  local out = {}
  local saved = _G.print
  local fmt = debug.getregistry()["tf.print_formatter"]
  _G.print = function(...)
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring((select(i, ...))) end
    out[#out + 1] = table.concat(parts, " ")
  end
  tf.core.set_print_formatter(function(o, ...)
    out[#out + 1] = tf.format.print_text(o, ...)
    return nil   -- nothing written
  end)
  local ok, err = pcall(fn)
  _G.print = saved
  tf.core.set_print_formatter(fmt)
  if not ok then error(err, 0) end
  return out
end

-- Names of a concrete function's live nodes, in program order.
local function node_names(cf)
  local names = {}
  for i, n in ipairs(cf.graph:nodes()) do names[i] = n.name end
  return names
end

local function err_of(fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok, "expected an error")
  return err
end

describe("tf.fn", function()
  -- retracing warnings that tests provoke on purpose stay out of the output
  before_each(function() tf.get_logger():set_handler(function() end) end)
  after_each(function() tf.get_logger():set_handler(nil) end)

  describe("basics (the guide's add and dense_layer)", function()
    local add = tf.fn(function(a, b) return a + b end)

    it("runs like the op it wraps", function()
      assert.tensor_near({{2, 2}, {2, 2}}, add(tf.ones({2, 2}), tf.ones({2, 2})))
    end)

    it("computes gradients through a tape", function()
      local v = tf.Variable(1.0)
      local tape = tf.GradientTape()
      local result = tape:record(function() return add(v, 1.0) end)
      assert.equal(2.0, result:item())
      assert.equal(1.0, tape:gradient(result, v):item())
    end)

    it("calls another tf.fn inside (dense_layer)", function()
      local dense_layer = tf.fn(function(x, w, b) return add(tf.matmul(x, w), b) end)
      assert.tensor_near({{3, 3}, {3, 3}, {3, 3}}, dense_layer(tf.ones({3, 2}), tf.ones({2, 2}), tf.ones({2})))
      local tape = tf.GradientTape()
      local w = tf.Variable(tf.ones({2, 2}))
      local y = tape:record(function() return tf.reduce_sum(dense_layer(tf.ones({3, 2}), w, tf.ones({2}))) end)
      assert.tensor_near({{3, 3}, {3, 3}}, tape:gradient(y, w))
    end)
  end)

  describe("tracing", function()
    it("traces double once per input type and reuses the traces (the guide)", function()
      local double = tf.fn(function(a)
        print("Tracing with", a)
        return a + a
      end)
      local out = capture(function()
        print(double(tf.constant(1)))
        print(double(tf.constant(1.1)))
        print(double(tf.constant("a")))
        print(double(tf.constant("b")))
        print(double(tf.constant(5)))
      end)
      assert.same({
        'Tracing with Tensor("a:0", shape=(), dtype=int32)',
        "tf.Tensor(2, shape=(), dtype=int32)",
        'Tracing with Tensor("a:0", shape=(), dtype=float32)',
        "tf.Tensor(2.2, shape=(), dtype=float32)",
        'Tracing with Tensor("a:0", shape=(), dtype=string)',
        "tf.Tensor(b'aa', shape=(), dtype=string)",
        "tf.Tensor(b'bb', shape=(), dtype=string)",
        "tf.Tensor(10, shape=(), dtype=int32)",
      }, out)
      assert.equal(3, double:tracing_count())
      assert.equal(table.concat({
        "Input Parameters:",
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.int32, name=None)",
        "Output Type:",
        "  TensorSpec(shape=(), dtype=tf.int32, name=None)",
        "Captures:",
        "  None",
        "",
        "Input Parameters:",
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.float32, name=None)",
        "Output Type:",
        "  TensorSpec(shape=(), dtype=tf.float32, name=None)",
        "Captures:",
        "  None",
        "",
        "Input Parameters:",
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.string, name=None)",
        "Output Type:",
        "  TensorSpec(shape=(), dtype=tf.string, name=None)",
        "Captures:",
        "  None",
      }, "\n"), double:pretty_printed_concrete_signatures())
      assert.equal(table.concat({
        "(a: TensorSpec(shape=(), dtype=tf.int32, name=None)) -> TensorSpec(shape=(), dtype=tf.int32, name=None)",
        "(a: TensorSpec(shape=(), dtype=tf.float32, name=None)) -> TensorSpec(shape=(), dtype=tf.float32, name=None)",
        "(a: TensorSpec(shape=(), dtype=tf.string, name=None)) -> TensorSpec(shape=(), dtype=tf.string, name=None)",
      }, "\n"), double:pretty_printed_concrete_signatures(false))
    end)

    it("runs Lua print only while tracing and tf.print at every call", function()
      local f = tf.fn(function(x)
        print("Traced with", x)
        tf.print("Executed with", x)
      end)
      local out = capture(function()
        f(1)
        f(1)
        f(2)
      end)
      assert.same({"Traced with 1", "Executed with 1", "Executed with 1", "Traced with 2", "Executed with 2"}, out)
    end)

    it("names symbolic tensors after their node", function()
      local names = {}
      local f = tf.fn(function(a, b)
        local c = a * b
        names = {a.name, b.name, c.name, tostring(c)}
        return c
      end)
      f(tf.constant({1.0, 2.0}), tf.constant(2.0))
      assert.same({"a:0", "b:0", "multiply:0", 'Tensor("multiply:0", shape=(2,), dtype=float32)'}, names)
      assert.is_nil(tf.constant(1).name)
    end)

    it("retraces for new Lua values but not for new tensor values (train(num_steps))", function()
      local train = tf.fn(function(num_steps)
        print("Tracing with num_steps =", num_steps)
        tf.print("Executing with num_steps =", num_steps)
      end)
      local out = capture(function()
        train(10)
        train(20)
        train(tf.constant(10))
        train(tf.constant(20))
      end)
      assert.same({
        "Tracing with num_steps = 10", "Executing with num_steps = 10",
        "Tracing with num_steps = 20", "Executing with num_steps = 20",
        'Tracing with num_steps = Tensor("num_steps:0", shape=(), dtype=int32)',
        "Executing with num_steps = 10", "Executing with num_steps = 20",
      }, out)
      assert.equal(3, train:tracing_count())
    end)

    it("shares no traces between two tf.fn of one closure", function()
      local function f()
        print("Tracing!")
        tf.print("Executing")
      end
      local out = capture(function()
        tf.fn(f)()
        tf.fn(f)()
      end)
      assert.same({"Tracing!", "Executing", "Tracing!", "Executing"}, out)
    end)

    it("binds keyword arguments by parameter name (tf.kwargs) to the same trace", function()
      local f = tf.fn(function(x, scale) return x * scale end)
      assert.equal(6, f(tf.constant(2), 3):item())
      assert.equal(6, f(tf.constant(2), tf.kwargs{scale = 3}):item())
      assert.equal(6, f(tf.kwargs{x = tf.constant(2), scale = 3}):item())
      assert.equal(1, f:tracing_count())
      assert.tf_error("TypeError", "got an unexpected keyword argument 'c'", f, tf.constant(1), tf.kwargs{c = 1})
      assert.tf_error("TypeError", "multiple values for argument 'x'", f, tf.constant(1), tf.kwargs{x = 1})
      assert.tf_error("TypeError", "too many positional arguments", f, 1, 2, 3)
    end)

    it("names varargs args_1, args_2, ...", function()
      local f = tf.fn(function(...) return select("#", ...) end)
      assert.equal(2, f(tf.constant(1), 5))
      assert.truthy(f:pretty_printed_concrete_signatures():find(
        "  args_1 (POSITIONAL_ONLY): TensorSpec(shape=(), dtype=tf.int32, name=None)\n" ..
        "  args_2 (POSITIONAL_ONLY): Literal[5]", 1, true))
    end)

    it("takes its options as a decorator table", function()
      local g = tf.fn{input_signature = {tf.TensorSpec({-1}, tf.int32)}}(function(x) return x end)
      assert.equal("(x: TensorSpec(shape=(None,), dtype=tf.int32, name=None)) -> " ..
        "TensorSpec(shape=(None,), dtype=tf.int32, name=None)", g:pretty_printed_concrete_signatures(false))
      assert.tf_error("TypeError", "unknown option 'relax'", tf.fn, function() end, {relax = true})
      assert.tf_error("TypeError", "expected a function", tf.fn, 3)
    end)
  end)

  describe("dispatch", function()
    -- each trace returns, besides its input, the shape it was traced for
    local function shaped()
      return tf.fn(function(x) return x, tostring(x.shape) end)
    end

    it("picks the most specific trace whose type the call is a subtype of", function()
      local f = shaped()
      -- specific ones first: a spec that fits an existing trace gets that trace (as TensorFlow)
      for _, s in ipairs({{-1, 1, 2}, {-1, 2, 2}, {-1, 1, -1}, {-1, -1, -1}}) do
        f:get_concrete_function(tf.TensorSpec(s))
      end
      assert.equal(4, f:tracing_count())
      assert.equal("(None, 1, 2)", select(2, f(tf.zeros({1, 1, 2}))))
      assert.equal("(None, 1, None)", select(2, f(tf.zeros({1, 1, 3}))))
      assert.equal("(None, None, None)", select(2, f(tf.zeros({1, 3, 3}))))
      assert.equal("(None, 2, 2)", select(2, f(tf.zeros({5, 2, 2}))))
      assert.equal("(None, 1, 2)", select(2, f(tf.zeros({7, 1, 2}))))
      assert.equal(4, f:tracing_count())
      assert.equal("(1, 2)", select(2, f(tf.zeros({1, 2}))))    -- another rank: a new trace
      assert.equal(5, f:tracing_count())
    end)

    it("gives get_concrete_function an existing trace that fits the spec", function()
      local f = shaped()
      local general = f:get_concrete_function(tf.TensorSpec({-1, -1}))
      assert.equal(general, f:get_concrete_function(tf.TensorSpec({-1, 1})))
      assert.equal(general, f:get_concrete_function(tf.zeros({2, 2})))
      assert.equal(1, f:tracing_count())
    end)

    it("breaks ties between unrelated traces by age", function()
      local f = shaped()
      f:get_concrete_function(tf.TensorSpec({-1, 1}))
      f:get_concrete_function(tf.TensorSpec({1, -1}))
      assert.equal("(None, 1)", select(2, f(tf.zeros({1, 1}))))
      local g = shaped()
      g:get_concrete_function(tf.TensorSpec({1, -1}))
      g:get_concrete_function(tf.TensorSpec({-1, 1}))
      assert.equal("(1, None)", select(2, g(tf.zeros({1, 1}))))
    end)

    it("uses a concrete function made from a spec for later calls", function()
      local f = shaped()
      local cf = f:get_concrete_function(tf.TensorSpec({-1}, tf.int32))
      assert.equal(cf, f:get_concrete_function(tf.TensorSpec({-1}, tf.int32)))
      f(tf.constant({1, 2}))
      f(tf.constant({1, 2, 3}))
      assert.equal(1, f:tracing_count())
    end)
  end)

  describe("input_signature", function()
    local traced
    local next_collatz = tf.fn(function(x)
      traced[#traced + 1] = tostring(x)
      return tf.where(tf.equal(x % 2, 0), x // 2, 3 * x + 1)
    end, {input_signature = {tf.TensorSpec({-1}, tf.int32)}})

    it("accepts calls that fit and traces once (next_collatz)", function()
      traced = {}
      assert.same({4, 1}, next_collatz(tf.constant({1, 2})):totable())
      assert.same({4, 1, 10, 2, 16}, next_collatz(tf.constant({1, 2, 3, 4, 5})):totable())
      assert.same({'Tensor("x:0", shape=(None,), dtype=int32)'}, traced)
      assert.equal(1, next_collatz:tracing_count())
    end)

    it("refuses a 2x2 and a float input with a TypeError naming the spec and the value", function()
      assert.tf_error("TypeError", "Binding inputs to tf.fn failed due to `Can not cast TensorSpec(shape=(2, 2), " ..
        "dtype=tf.int32, name=None) to TensorSpec(shape=(None,), dtype=tf.int32, name=None)`. Received args: " ..
        "(<tf.Tensor: shape=(2, 2), dtype=int32>) for signature: (x: TensorSpec(shape=(None,), dtype=tf.int32, " ..
        "name=None)).", next_collatz, tf.constant({{1, 2}, {3, 4}}))
      assert.tf_error("TypeError", "Can not cast TensorSpec(shape=(2,), dtype=tf.float32, name=None) to " ..
        "TensorSpec(shape=(None,), dtype=tf.int32, name=None)", next_collatz, tf.constant({1.0, 2.0}))
      assert.tf_error("TypeError", "too many positional arguments", next_collatz, tf.constant({1}), 2)
    end)

    it("converts Lua values to the spec's dtype", function()
      local f = tf.fn(function(b, x) return tf.where(b, x, -x) end,
        {input_signature = {tf.TensorSpec({}, tf.bool), tf.TensorSpec({}, tf.float32)}})
      assert.equal(-2.0, f(false, 2):item())
      assert.equal(2.0, f(true, tf.constant(2.0)):item())
      assert.equal(1, f:tracing_count())
    end)

    it("gives the signature's concrete function and checks specs against it", function()
      local cf = next_collatz:get_concrete_function()
      assert.equal(cf, next_collatz:get_concrete_function(tf.TensorSpec({3}, tf.int32)))
      assert.tf_error("TypeError", "Can not cast TensorSpec(shape=(3,), dtype=tf.float32, name=None) to " ..
        "TensorSpec(shape=(None,), dtype=tf.int32, name=None)",
        function() next_collatz:get_concrete_function(tf.TensorSpec({3}, tf.float32)) end)
    end)

    it("is validated when tf.fn is made", function()
      assert.tf_error("TypeError", "input_signature must be either a tuple or a list, got number.",
        tf.fn, function(x) return x end, {input_signature = 3})
      assert.tf_error("TypeError", "input_signature must be a possibly nested sequence of TensorSpec objects",
        tf.fn, function(x) return x end, {input_signature = {1}})
      assert.tf_error("TypeError", "input_signature contains 1 extra type constraints.",
        tf.fn, function(x) return x end, {input_signature = {tf.TensorSpec({}), tf.TensorSpec({})}})
    end)

    it("takes nested specs", function()
      local f = tf.fn(function(p) return p[1] + p[2] end,
        {input_signature = {{tf.TensorSpec({-1}), tf.TensorSpec({-1})}}})
      assert.tensor_near({4, 6}, f({tf.constant({1.0, 2.0}), tf.constant({3.0, 4.0})}))
      assert.tensor_near({4}, f({tf.constant({1.0}), tf.constant({3.0})}))
      assert.equal(1, f:tracing_count())
    end)
  end)

  describe("reduce_retracing", function()
    it("traces [3], then [None], and no more (the guide)", function()
      local g = tf.fn(function(x)
        print("Tracing with", x)
        return x
      end, {reduce_retracing = true})
      local out = capture(function()
        for _, n in ipairs({3, 5, 7, 9}) do
          local t = {}
          for i = 1, n do t[i] = i end
          print(g(tf.constant(t)))
        end
      end)
      assert.same({
        'Tracing with Tensor("x:0", shape=(3,), dtype=int32)', "tf.Tensor([1 2 3], shape=(3,), dtype=int32)",
        'Tracing with Tensor("x:0", shape=(None,), dtype=int32)', "tf.Tensor([1 2 3 4 5], shape=(5,), dtype=int32)",
        "tf.Tensor([1 2 3 4 5 6 7], shape=(7,), dtype=int32)",
        "tf.Tensor([1 2 3 4 5 6 7 8 9], shape=(9,), dtype=int32)",
      }, out)
      assert.equal(2, g:tracing_count())
      assert.same({"x: int32(3,) -> int32(5,) (traced as x: int32(None,))"}, g:retrace_reasons())
    end)

    it("generalizes a rank change to an unknown shape, and never across dtypes or literals", function()
      local g = tf.fn(function(x, _) return x, tostring(x.shape) end, {reduce_retracing = true})
      g(tf.constant(1.0), 1)
      assert.equal("<unknown>", select(2, g(tf.constant({1.0, 2.0, 3.0}), 1)))
      assert.equal("(2,)", select(2, g(tf.constant({1, 2}), 1)))
      assert.equal("(4,)", select(2, g(tf.constant({1.0, 2.0, 3.0, 4.0}), 2)))
      assert.equal(4, g:tracing_count())
    end)
  end)

  describe("concrete functions", function()
    local double = tf.fn(function(a) return a + a end, {name = "double"})
    local double_strings = double:get_concrete_function(tf.constant("a"))

    it("are callable, positionally or by name", function()
      assert.equal("aa", double_strings(tf.constant("a")):item())
      assert.equal("bb", double_strings(tf.kwargs{a = tf.constant("b")}):item())
      assert.equal(double_strings, double:get_concrete_function(tf.TensorSpec({}, tf.string)))
      assert.equal("cc", double:get_concrete_function(tf.TensorSpec({}, tf.string))(tf.constant("c")):item())
    end)

    it("print their signature in TensorFlow's layout", function()
      assert.equal(table.concat({
        "ConcreteFunction Input Parameters:",
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=tf.string, name=None)",
        "Output Type:",
        "  TensorSpec(shape=(), dtype=tf.string, name=None)",
        "Captures:",
        "  None",
      }, "\n"), tostring(double_strings))
      assert.equal("(a: TensorSpec(shape=(), dtype=tf.string, name=None)) -> " ..
        "TensorSpec(shape=(), dtype=tf.string, name=None)", tostring(double_strings.function_type))
    end)

    it("refuse inputs of another type (the string function with an int32 tensor)", function()
      local err = err_of(double_strings, tf.constant(1))
      assert.equal("TypeError", err.kind)
      assert.equal("Binding inputs to tf.fn failed due to `Can not cast TensorSpec(shape=(), dtype=tf.int32, " ..
        "name=None) to TensorSpec(shape=(), dtype=tf.string, name=None)`. Received args: (<tf.Tensor: shape=(), " ..
        "dtype=int32>) for signature: (a: TensorSpec(shape=(), dtype=tf.string, name=None)) -> " ..
        "TensorSpec(shape=(), dtype=tf.string, name=None).", err.message)
      assert.tf_error("TypeError", "Can not cast TensorSpec(shape=(3,)", double_strings, tf.constant({"a", "b", "c"}))
      assert.tf_error("TypeError", "Can not cast None to TensorSpec", double_strings)
    end)

    it("keep Lua arguments as literal constraints with their traced value as default (pow)", function()
      local pow = tf.fn(function(a, b) return a ^ b end)
      local square = pow:get_concrete_function(tf.TensorSpec(nil, tf.float32), 2)
      assert.equal(table.concat({
        "ConcreteFunction Input Parameters:",
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)",
        "  b (POSITIONAL_OR_KEYWORD): Literal[2]",
        "Output Type:",
        "  TensorSpec(shape=<unknown>, dtype=tf.float32, name=None)",
        "Captures:",
        "  None",
      }, "\n"), tostring(square))
      assert.equal(100, square(tf.constant(10.0)):item())
      assert.equal(100, square(tf.constant(10.0), 2):item())
      assert.tf_error("TypeError", "Binding inputs to tf.fn failed due to `Can not cast 3 to Literal[2]`",
        square, tf.constant(10.0), 3)
      assert.tf_error("TypeError", "Can not cast 3 to Literal[2]", square, tf.constant(10.0), tf.kwargs{b = 3})
    end)

    it("can be called with no arguments when every argument was a Lua value", function()
      local f = tf.fn(function(n, s) return tf.fill({n}, s) end)
      local cf = f:get_concrete_function(2, 7)
      assert.same({7, 7}, cf():totable())
      assert.tf_error("TypeError", "Can not cast 3 to Literal[2]", cf, 3)
    end)

    it("list their graph's nodes (double_strings: a, add, Identity)", function()
      local lines = {}
      for _, node in ipairs(double_strings.graph:as_graph_def().node) do
        lines[#lines + 1] = "[" .. table.concat(node.input, ", ") .. "] -> " .. node.name
      end
      assert.same({"[] -> a", "[a, a] -> add", "[add] -> Identity"}, lines)
      local nodes = double_strings.graph:nodes()
      assert.same({"Placeholder", "add", "identity"}, {nodes[1].op, nodes[2].op, nodes[3].op})
      assert.same({"a:0", "a:0"}, nodes[2].inputs)
      assert.equal(tf.string, nodes[2].outputs[1].dtype)
      assert.equal("()", tostring(nodes[2].outputs[1].shape))
    end)

    it("draw their graph in dot", function()
      local dot = double_strings.graph:to_dot()
      assert.truthy(dot:find('^digraph "double_%d+" {'))
      assert.truthy(dot:find('"a" [label="a\\nPlaceholder\\nstring ()", shape=ellipse];', 1, true))
      assert.truthy(dot:find('"a" -> "add" [label="string ()"];', 1, true))
      assert.truthy(dot:find('"add" -> "Identity" [label="string ()"];', 1, true))
      assert.truthy(dot:find("}\n$"))
    end)

    it("list the variables they capture", function()
      local v = tf.Variable(2.0, {name = "scale"})
      local id = select(5, tf.core.variable_info(v.handle))
      local f = tf.fn(function(x) return x * v end)
      local cf = f:get_concrete_function(tf.constant(1.0))
      assert.truthy(tostring(cf):find("Captures:\n  " .. id .. ": TensorSpec(shape=(), dtype=tf.resource, name=None)",
        1, true))
      assert.same({"scale:0"}, cf:captured_variables())
    end)

    it("run inlined when called while another function is traced", function()
      local inner = tf.fn(function(x) return x * 3 end):get_concrete_function(tf.TensorSpec({-1}))
      local outer = tf.fn(function(x) return inner(x) + 1 end)
      assert.tensor_near({4, 7}, outer(tf.constant({1.0, 2.0})))
      local ops = {}
      for _, n in ipairs(outer:concrete_functions()[1].graph:nodes()) do ops[#ops + 1] = n.op end
      -- the inner graph's nodes are now the outer graph's (its output Identity
      -- is no step of its plan: the value's own slot is the output)
      assert.same({"Placeholder", "Const", "multiply", "Const", "add", "identity"}, ops)
    end)
  end)

  describe("retracing you can understand", function()
    it("records why each retrace happened, by argument path", function()
      local f = tf.fn(function(x, lr, cfg) return x * lr, cfg.depth end)
      f(tf.zeros({3}), 0.01, {depth = 2, names = {"a"}})
      f(tf.zeros({5}), 0.01, {depth = 2, names = {"a"}})
      f(tf.zeros({5}), 0.009, {depth = 2, names = {"a"}})
      f(tf.zeros({5}), 0.009, {depth = 3, names = {"b"}})
      f(tf.zeros({5}, tf.float64), 0.009, {depth = 3, names = {"b"}})
      f(tf.zeros({5}, tf.float64), 0.009, {depth = 3})
      assert.same({
        "x: float32(3,) -> float32(5,)",
        "lr: 0.01 -> 0.009",
        'cfg.depth: 2 -> 3, cfg.names[1]: "a" -> "b"',
        "x: float32(5,) -> float64(5,)",
        "cfg: a table with keys {depth, names} -> a table with keys {depth}",
      }, f:retrace_reasons())
    end)

    it("says when an object typed by identity was collected", function()
      local f = tf.fn(function(obj) return obj.n end)
      local Obj = {__name = "Obj"}
      f(setmetatable({n = 1}, Obj))
      collectgarbage()
      collectgarbage()
      f(setmetatable({n = 1}, Obj))
      local r = f:retrace_reasons()[1]
      assert.truthy(r:find("^obj: Obj: 0x%x+ %(garbage%-collected%) %-> Obj: 0x%x+ " ..
        "%(objects are typed by identity%)$"), r)
    end)

    it("warns after 5 retraces with TensorFlow's advice, at most twice", function()
      local warnings = {}
      local logger = tf.get_logger()
      logger:set_handler(function(level, text) warnings[#warnings + 1] = level .. ": " .. text end)
      local f = tf.fn(function(x) return x end, {name = "f"})
      for i = 1, 4 do f(i) end
      assert.equal(0, #warnings)
      f(5)
      assert.equal(1, #warnings)
      for i = 6, 10 do f(i) end
      logger:set_handler(nil)
      assert.equal(2, #warnings)
      assert.truthy(warnings[1]:find("^WARNING: 5 out of the last 5 calls to <tf.fn 'f' %(.-%)> triggered tf.fn " ..
        "retracing%. Tracing is expensive"))
      assert.truthy(warnings[1]:find("For (2), tf.fn has reduce_retracing=true option", 1, true))
      assert.truthy(warnings[1]:find("Recent retrace reasons:\n  x: 1 -> 2\n", 1, true))
      assert.truthy(warnings[2]:find("6 out of the last 6 calls", 1, true))
    end)

    it("does not warn when calls hit the cache in between", function()
      local warnings = 0
      tf.get_logger():set_handler(function() warnings = warnings + 1 end)
      local f = tf.fn(function(x) return x end)
      for i = 1, 5 do
        f(i)
        for _ = 1, 3 do f(i) end
      end
      tf.get_logger():set_handler(nil)
      assert.equal(0, warnings)
    end)

    it("turns an unexpected retrace into an error with max_traces and on_retrace = 'error'", function()
      local f = tf.fn(function(x) return x end, {max_traces = 1, on_retrace = "error", name = "step"})
      f(tf.zeros({3}))
      f(tf.ones({3}))
      assert.tf_error("RuntimeError", "tf.fn 'step' retraces (trace 2, max_traces = 1): x: float32(3,) -> float32(5,)",
        f, tf.zeros({5}))
      assert.equal(1, f:tracing_count())
      local g = tf.fn(function(x) return x end, {max_traces = 2})
      g(1)
      g(2)
      assert.tf_error("RuntimeError", "x: 2 -> 3", g, 3)
    end)

    it("warns or calls back for each retrace beyond max_traces", function()
      local seen, warnings = {}, {}
      local f = tf.fn(function(x) return x end, {on_retrace = function(info) seen[#seen + 1] = info.reason end})
      f(1)
      f(2)
      f(3)
      assert.same({"x: 1 -> 2", "x: 2 -> 3"}, seen)
      tf.get_logger():set_handler(function(_, text) warnings[#warnings + 1] = text end)
      local g = tf.fn(function(x) return x end, {on_retrace = "warn", max_traces = 2, name = "g"})
      g(1)
      g(2)
      g(3)
      tf.get_logger():set_handler(nil)
      assert.same({"tf.fn 'g' retraces (trace 3, max_traces = 2): x: 2 -> 3"}, warnings)
    end)
  end)

  describe("Lua objects as arguments", function()
    local get_mixed_flavor = function()
      return tf.fn(function(fruit_a, fruit_b) return fruit_a.flavor + fruit_b.flavor end)
    end

    it("traces again for new plain objects (typed by weak identity)", function()
      local Apple = {flavor = tf.constant({1, 2})}
      Apple.__index = Apple
      local Mango = {flavor = tf.constant({3, 4})}
      Mango.__index = Mango
      local f = get_mixed_flavor()
      assert.same({4, 6}, f(setmetatable({}, Apple), setmetatable({}, Mango)):totable())
      assert.same({4, 6}, f(setmetatable({}, Apple), setmetatable({}, Mango)):totable())
      assert.equal(2, f:tracing_count())
      local a = setmetatable({}, Apple)
      f(a, a)
      f(a, a)
      assert.equal(3, f:tracing_count())
    end)

    it("reuses one trace for objects whose __tf_tracing_type says they are alike (Fruit)", function()
      local FruitTraceType = {}
      FruitTraceType.__index = FruitTraceType
      function FruitTraceType.new(fruit)
        return setmetatable({fruit_type = getmetatable(fruit), fruit_value = fruit}, FruitTraceType)
      end
      function FruitTraceType:is_subtype_of(other)
        return getmetatable(other) == FruitTraceType and self.fruit_type == other.fruit_type
      end
      function FruitTraceType:most_specific_common_supertype(others)
        for _, o in ipairs(others) do if self ~= o then return nil end end
        return self
      end
      function FruitTraceType:placeholder_value() return self.fruit_value end
      function FruitTraceType.__eq(a, b) return getmetatable(b) == FruitTraceType and a.fruit_type == b.fruit_type end
      function FruitTraceType:hash() return tostring(self.fruit_type) end

      local FruitWithTraceType = {__tf_tracing_type = function(self) return FruitTraceType.new(self) end}
      local function subclass(flavor)
        local c = setmetatable({flavor = tf.constant(flavor)}, {__index = FruitWithTraceType})
        c.__index = c
        return c
      end
      local AppleWithTraceType, MangoWithTraceType = subclass({1, 2}), subclass({3, 4})
      local f = get_mixed_flavor()
      assert.same({4, 6}, f(setmetatable({}, AppleWithTraceType), setmetatable({}, MangoWithTraceType)):totable())
      assert.same({4, 6}, f(setmetatable({}, AppleWithTraceType), setmetatable({}, MangoWithTraceType)):totable())
      assert.equal(1, f:tracing_count())
      f(setmetatable({}, MangoWithTraceType), setmetatable({}, AppleWithTraceType))
      assert.equal(2, f:tracing_count())
    end)

    it("does not retrace when a traced object is mutated (its fields were baked in)", function()
      local obj = setmetatable({scale = 2}, {})
      local f = tf.fn(function(o, x) return x * o.scale end)
      assert.equal(6, f(obj, tf.constant(3)):item())
      obj.scale = 10
      assert.equal(6, f(obj, tf.constant(3)):item())
      assert.equal(1, f:tracing_count())
    end)

    it("types plain tables by their contents", function()
      local f = tf.fn(function(t) return t[1] + t[2] end)
      local t = {1, 2}
      assert.equal(3, f(t))
      t[2] = 5
      assert.equal(6, f(t))
      assert.equal(3, f({1, 2}))
      assert.equal(2, f:tracing_count())
    end)
  end)

  describe("state", function()
    it("reads captured variables at each call", function()
      local v = tf.Variable(1.0)
      local f = tf.fn(function(x) return x + v end)
      assert.equal(2, f(tf.constant(1.0)):item())
      v:assign(100.0)
      assert.equal(101, f(tf.constant(1.0)):item())
    end)

    it("types variable arguments by identity and writes through them", function()
      local bump = tf.fn(function(v, x) v:assign_add(x) return v:value() end)
      local a, b = tf.Variable(1.0), tf.Variable(10.0)
      assert.equal(2, bump(a, tf.constant(1.0)):item())
      assert.equal(3, bump(a, tf.constant(1.0)):item())
      assert.equal(1, bump:tracing_count())
      assert.equal(11, bump(b, tf.constant(1.0)):item())
      assert.equal(2, bump:tracing_count())
      assert.equal(3, a:item())
      assert.truthy(bump:retrace_reasons()[1]:find("v: variable 'Variable:0' -> variable 'Variable:0' " ..
        "(variables are typed by identity)", 1, true))
    end)

    it("runs assigns and prints in program order (automatic control dependencies)", function()
      local v = tf.Variable(5)
      local find_next_odd = tf.fn(function()
        v:assign(v + 1)
        tf.print("v is", v)
        v:assign(v + 1)
      end)
      local out = capture(function() find_next_odd() end)
      assert.same({"v is 6"}, out)
      assert.equal(7, v:item())
      local a, b = tf.Variable(1.0), tf.Variable(1.0)
      local f = tf.fn(function()
        a:assign(2.0)
        b:assign(3.0)
        return a + b
      end)
      assert.equal(5, f():item())
    end)

    it("draws new random numbers at every call", function()
      local f = tf.fn(function() return tf.random.uniform({4}) end)
      assert.are_not.same(f():totable(), f():totable())
    end)

    it("prunes work nobody needs but keeps side effects", function()
      local v = tf.Variable(0.0)
      local f = tf.fn(function(x)
        local _ = tf.exp(x) * 2     -- nobody needs it
        v:assign_add(tf.reduce_sum(x))
      end)
      f(tf.constant({1.0, 2.0}))
      f(tf.constant({1.0, 2.0}))
      assert.equal(6, v:item())
      local ops = {}
      for _, n in ipairs(f:concrete_functions()[1].graph:nodes()) do ops[#ops + 1] = n.op end
      assert.is_nil(table.concat(ops, " "):find("exp"))
    end)

    describe("variables created while tracing", function()
      it("raise a ValueError naming the function when created at every call", function()
        local f = tf.fn(function(x)
          local v = tf.Variable(1.0)
          return x + v
        end, {name = "f"})
        assert.tf_error("ValueError", "tf.fn 'f': tf.function only supports singleton tf.Variables created on the " ..
          "first call.", f, tf.constant(1.0))
      end)

      it("work when created lazily on the first call (traced twice, as TensorFlow)", function()
        local model = {}
        local traces = 0
        local f = tf.fn(function(x)
          traces = traces + 1
          if not model.w then model.w = tf.Variable(tf.ones({3}) * 2) end
          if not model.b then model.b = tf.Variable(tf.random.normal({3}, {seed = 7})) end
          return x * model.w + model.b
        end, {name = "lazy"})
        local y = f(tf.constant({1.0, 2.0, 3.0}))
        local b = model.b:numpy()
        assert.tensor_near({2 + b[1], 4 + b[2], 6 + b[3]}, y)
        assert.equal(2, traces)
        assert.equal(2, f:tracing_count())
        assert.tensor_near({2 + b[1], 4 + b[2], 6 + b[3]}, f(tf.constant({1.0, 2.0, 3.0})))
        assert.tensor_near(b, model.b:value())    -- the initializer does not run again
        for _, n in ipairs(f:concrete_functions()[1].graph:nodes()) do assert.are_not.equal("random_normal", n.op) end
        assert.equal(2, traces)
      end)

      it("raise a ValueError when created on a later trace", function()
        local state = {}
        local f = tf.fn(function(x)
          if x.shape[1] == 2 and not state.v then state.v = tf.Variable(1.0) end
          return x
        end, {name = "later"})
        f(tf.zeros({1}))
        assert.tf_error("ValueError", "tf.fn 'later': Creating variables on a non-first call", f, tf.zeros({2}))
      end)

      it("refuse initial values that depend on the arguments", function()
        local f = tf.fn(function(x) return tf.Variable(x * 2):value() end)
        assert.tf_error("ValueError", "tf.Variable: the initial value depends on 'x', an input of the traced " ..
          "function", f, tf.constant(1.0))
      end)
    end)
  end)

  describe("outputs", function()
    it("keeps the structure of what the function returns", function()
      local f = tf.fn(function(x)
        return {x, 3, {y = x * 2, tag = "t"}}, "s", nil
      end)
      local a, b, c = f(tf.constant(1))
      assert.equal(1, a[1]:item())
      assert.equal(3, a[2])
      assert.equal(2, a[3].y:item())
      assert.equal("t", a[3].tag)
      assert.equal("s", b)
      assert.is_nil(c)
      assert.equal("Tuple[List[TensorSpec(shape=(), dtype=tf.int32, name=None), Literal[3], Dict[['tag', " ..
        "Literal['t']], ['y', TensorSpec(shape=(), dtype=tf.int32, name=None)]]], Literal['s'], Literal[None]]",
        tostring(f:concrete_functions()[1]:output_type()))
    end)

    it("returns nothing, nil, captured tensors and variable values", function()
      assert.equal(0, select("#", tf.fn(function() end)()))
      assert.is_nil(tf.fn(function() return nil end)())
      local c = tf.constant({1, 2})
      assert.same({1, 2}, tf.fn(function() return c end)():totable())
      local v = tf.Variable(3.0)
      local r = tf.fn(function() return v end)()
      assert.is_true(tf.is_tensor(r))
      assert.equal(3, r:item())
      local none = tf.fn(function() end):get_concrete_function()
      assert.equal("Output Type:\n  Literal[None]", none:pretty_printed_signature():match("Output Type:\n[^\n]*"))
    end)

    it("refuses to return a symbolic tensor of another trace", function()
      local leaked
      local f = tf.fn(function(x) leaked = x * 2 return x end)
      f(tf.constant(1.0))
      local g = tf.fn(function() return leaked end)
      assert.tf_error("InvalidArgumentError", "symbolic tensor of another trace", g)
    end)
  end)

  describe("composition", function()
    it("inlines a tf.fn called while tracing another", function()
      local inner = tf.fn(function(x)
        print("tracing inner")
        return x * 2
      end)
      local outer = tf.fn(function(x) return inner(x) + 1 end)
      local out = capture(function()
        assert.equal(5, outer(tf.constant(2)):item())
        assert.equal(7, outer(tf.constant(3)):item())
      end)
      assert.same({"tracing inner"}, out)
      assert.equal(0, inner:tracing_count())
      assert.equal(1, outer:tracing_count())
    end)

    it("checks an inner tf.fn's input_signature while inlining", function()
      local inner = tf.fn(function(x) return x end, {input_signature = {tf.TensorSpec({2}, tf.float32)}})
      local outer = tf.fn(function(x) return inner(x) end)
      assert.tensor_near({1, 2}, outer(tf.constant({1.0, 2.0})))
      assert.tf_error("TypeError", "Can not cast TensorSpec(shape=(3,), dtype=tf.float32, name=None)",
        outer, tf.constant({1.0, 2.0, 3.0}))
    end)

    describe("gradients across a call", function()
      local w = tf.Variable(tf.constant({{1.0, 2.0}, {3.0, 4.0}}), {name = "w"})
      local b = tf.Variable(tf.constant({0.5, -0.5}), {name = "b"})
      local function body(x) return tf.reduce_sum(tf.tanh(tf.matmul(x, w) + b) * x) end
      local x = tf.constant({{0.1, 0.2}, {0.3, -0.4}})
      local function grads(fun)
        local tape = tf.GradientTape()
        tape:watch(x)
        local y = tape:record(function() return fun(x) end)
        return y, tape:gradient(y, {x, w, b})
      end

      it("match eager gradients for arguments and captured variables", function()
        local f = tf.fn(body)
        local y1, g1 = grads(f)
        local y2, g2 = grads(body)
        assert.tensor_near(y2, y1)
        for i = 1, 3 do assert.tensor_near(g2[i], g1[i], {atol = 1e-6}) end
      end)

      it("come from a backward graph built once per concrete function", function()
        local f = tf.fn(body)
        grads(f)
        local cf = f:concrete_functions()[1]
        local bg = cf:gradient_graph()
        assert.truthy(bg)
        local ops = {}
        for _, n in ipairs(bg:nodes()) do ops[n.op] = true end
        assert.is_true(ops.tanh_grad)
        grads(f)
        assert.equal(bg, cf:gradient_graph())
      end)

      it("give the gradient of the value the call read, even if the variable changed since", function()
        local v = tf.Variable(3.0)
        local f = tf.fn(function(t) return v * v * t end)
        local tape = tf.GradientTape()
        local y = tape:record(function() return f(tf.constant(1.0)) end)
        v:assign(100.0)
        assert.equal(6, tape:gradient(y, v):item())
        assert.equal(100, v:item())
      end)

      it("are higher order", function()
        local cube = tf.fn(function(t) return t * t * t end)
        local xx = tf.constant(2.0)
        local outer = tf.GradientTape()
        outer:watch(xx)
        local dy = outer:record(function()
          local inner = tf.GradientTape()
          inner:watch(xx)
          local y = inner:record(function() return cube(xx) end)
          return inner:gradient(y, xx)
        end)
        assert.equal(12, dy:item())
        assert.equal(12, outer:gradient(dy, xx):item())
      end)

      it("go op by op when the function has side effects, which still run once", function()
        local v = tf.Variable(0.0)
        local f = tf.fn(function(t)
          v:assign_add(1.0)
          tf.print("called")
          return t * t
        end)
        local xx = tf.constant(3.0)
        local tape = tf.GradientTape()
        tape:watch(xx)
        local y
        local out = capture(function() y = tape:record(function() return f(xx) end) end)
        assert.equal(6, tape:gradient(y, xx):item())
        assert.same({"called"}, out)
        assert.equal(1, v:item())
        assert.is_nil(f:concrete_functions()[1]:gradient_graph())
      end)

      it("record nothing when no tape watches an input", function()
        local f = tf.fn(function(t) return t * 2 end)
        local tape = tf.GradientTape()
        local y = tape:record(function() return f(tf.constant(1.0)) end)
        assert.equal(2, y:item())
        assert.is_nil(tape:gradient(y, tf.constant(1.0)))
      end)
    end)

    it("records gradients inside a traced closure (train_one_step) and trains in one tf.fn", function()
      tf.random.set_seed(3)
      local W = tf.Variable(tf.zeros({2, 1}))
      local B = tf.Variable(tf.zeros({1}))
      local xs = tf.random.normal({50, 2})
      local ys = tf.matmul(xs, tf.constant({{3.0}, {-1.0}})) + 2.0
      local function train_one_step(x, y, lr)
        local tape = tf.GradientTape()
        local loss = tape:record(function() return tf.reduce_mean(tf.square(tf.matmul(x, W) + B - y)) end)
        local g = tape:gradient(loss, {W, B})
        W:assign_sub(lr * g[1])
        B:assign_sub(lr * g[2])
        return loss
      end
      local train = tf.fn(train_one_step)
      local first = train(xs, ys, tf.constant(0.1)):item()
      local loss
      for _ = 1, 150 do loss = train(xs, ys, tf.constant(0.1)) end
      assert.is_true(loss:item() < 1e-4 * first, tostring(loss))
      assert.tensor_near({{3.0}, {-1.0}}, W:value(), {atol = 1e-3})
      assert.tensor_near({2.0}, B:value(), {atol = 1e-3})
      assert.equal(1, train:tracing_count())
      local ops = {}
      for _, n in ipairs(train:concrete_functions()[1].graph:nodes()) do ops[n.op] = true end
      assert.is_true(ops.matmul and ops.assign_sub_variable and true)
    end)
  end)

  describe("tf.config.run_functions_eagerly", function()
    it("runs the Lua closure at every call, and get_concrete_function still traces", function()
      local f = tf.fn(function(x)
        print("running", x:is_symbolic())
        return x + 1
      end)
      tf.config.run_functions_eagerly(true)
      assert.is_true(tf.config.functions_run_eagerly())
      local out = capture(function()
        f(tf.constant(1))
        f(tf.constant(2))
        assert.equal(0, f:tracing_count())
        f:get_concrete_function(tf.constant(1))
      end)
      tf.config.run_functions_eagerly(false)
      assert.same({"running false", "running false", "running true"}, out)
      assert.equal(1, f:tracing_count())
    end)
  end)

  describe("symbolic tensors in Lua control flow", function()
    it("raise pointing to tf.cond / autograph", function()
      local f = tf.fn(function(x) if x > 0 then return x end return -x end, {autograph = false})
      assert.tf_error("TypeError", "cannot be used as a Lua boolean", f, tf.constant(1.0))
      local g = tf.fn(function(x) if x:item() > 0 then return x end return -x end)
      local err = err_of(g, tf.constant(1.0))
      assert.equal("TypeError", err.kind)
      assert.truthy(err.message:find("tf.cond", 1, true), err.message)
    end)
  end)

  describe("the CharUnpack layer", function()
    local CharUnpack = {}
    CharUnpack.__index = CharUnpack
    function CharUnpack.new()
      local self = setmetatable({}, CharUnpack)
      -- range [7, 6, ..., 0] to bit-shift integers
      self._shifting_range = tf.reshape(tf.cast(tf.range(7, -1, -1), tf.uint8), {1, 1, 8})
      self._selection_bit = tf.constant(1, tf.uint8)
      return self
    end
    function CharUnpack:call(inputs)
      local s = inputs.shape
      return tf.cast(tf.reshape(tf.bitwise.bitwise_and(
        tf.bitwise.right_shift(tf.expand_dims(inputs, -1), self._shifting_range), self._selection_bit),
        {s[1] or -1, s[2] * 8}), tf.float32)
    end
    local layer = CharUnpack.new()
    local bytes = {}
    for i = 1, 400 do bytes[i] = (i * 37) % 256 end
    local rows = {}
    for r = 1, 64 do rows[r] = bytes end
    local inputs = tf.constant(rows, tf.uint8)

    local function expected_row()
      local bits = {}
      for _, byte in ipairs(bytes) do
        for k = 7, 0, -1 do bits[#bits + 1] = (byte >> k) & 1 end
      end
      return bits
    end

    it("unpacks uint8 [64,400] to float32 [64,3200] in a graph, as eagerly", function()
      local fun = tf.fn(function(x) return layer:call(x) end)
      local y = fun(inputs)
      assert.shape({64, 3200}, y)
      assert.equal(tf.float32, y.dtype)
      assert.same(expected_row(), y[1]:totable())
      assert.same(expected_row(), y[64]:totable())
      assert.tensor_near(layer:call(inputs), y)
    end)

    it("does no work in a function that returns nothing and has no side effect", function()
      local fun = tf.fn(function(x) layer:call(x) end)
      assert.equal(0, select("#", fun(inputs)))
      assert.same({"x"}, node_names(fun:concrete_functions()[1]))
    end)

    it("keeps the work that feeds a side effect", function()
      local sink = tf.Variable(tf.zeros({64, 3200}))
      local fun = tf.fn(function(x) sink:assign(layer:call(x)) end)
      fun(inputs)
      assert.same(expected_row(), sink:value()[5]:totable())
      local names = node_names(fun:concrete_functions()[1])
      assert.equal("assign_variable", names[#names])
      assert.is_true(#names > 5)
    end)
  end)

  describe("a cached call", function()
    it("dispatches without tracing and without a slow path for tensors", function()
      local a, b, c = tf.constant({1.0}), tf.constant({2.0}), tf.constant({3.0})
      local f = tf.fn(function(x, y, z) return x + y + z end)
      f(a, b, c)
      local key = tf.core.trace_key(a, b, c)
      assert.is_truthy(key)
      for _ = 1, 100 do f(a, b, c) end
      assert.equal(1, f:tracing_count())
      assert.equal(6, f(a, b, c):item())
    end)
  end)
end)

describe("tf.fn of a stripped chunk (no debug information)", function()
  local warnings
  before_each(function()
    warnings = {}
    tf.get_logger():set_handler(function(level, text) warnings[#warnings + 1] = level .. ": " .. text end)
  end)
  after_each(function() tf.get_logger():set_handler(nil) end)

  local function stripped(f) return load(string.dump(f, true), "=stripped", "b") end

  it("binds its arguments by position and traces unconverted, with the documented warning", function()
    local f = tf.fn(stripped(function(a, b) return a * b + 1 end))
    assert.equal(7, f(tf.constant(2.0), tf.constant(3.0)):item())
    assert.equal(13, f(tf.constant(3.0), tf.constant(4.0)):item())
    assert.equal(1, f:tracing_count())
    assert.equal(1, #warnings)
    assert.matches("^WARNING: AutoGraph could not convert the function at .*: its source is not available " ..
      "%(a C function, a stripped chunk, or a file that cannot be read%); tracing it unconverted", warnings[1])
    -- positional parameters get generated names
    assert.matches("args_1 %(POSITIONAL_OR_KEYWORD%).*args_2 %(POSITIONAL_OR_KEYWORD%)",
      f:pretty_printed_concrete_signatures(true))
  end)

  it("still counts its parameters: a missing argument is nil, an extra one an error", function()
    local f = tf.fn(stripped(function(a, b) if b == nil then return a end return a + b end), {autograph = false})
    assert.equal(2, f(tf.constant(2.0)):item())
    assert.tf_error("TypeError", "too many positional arguments", f, tf.constant(1.0), tf.constant(2.0),
      tf.constant(3.0))
  end)

  it("works for a chunk compiled by luac -s", function()
    local dir = os.tmpname()
    local src, out = dir .. ".lua", dir .. ".luac"
    local fh = assert(io.open(src, "w"))
    fh:write("return function(x, y) return x - y end\n")
    fh:close()
    assert(os.execute("luac5.4 -s -o " .. out .. " " .. src))
    local f = tf.fn(dofile(out))
    os.remove(src); os.remove(out); os.remove(dir)
    assert.equal(5, f(tf.constant(8.0), tf.constant(3.0)):item())
    assert.equal(1, #warnings)
  end)
end)

describe("tf.fn given a variable handle", function()
  local MSG = "argument 'x' is a variable handle (dtype resource), which a traced function does not take: " ..
    "pass the tf.Variable itself (v) or its value (v:value())"
  it("raises a TypeError saying what to pass instead", function()
    local v = tf.Variable(tf.ones({2}))
    local f = tf.fn(function(x) return x * 2 end)
    assert.tf_error("TypeError", MSG, f, v.handle)
    assert.tf_error("TypeError", MSG, f, tf.kwargs{x = v.handle})
    local g = tf.fn(function(x) return x end, {input_signature = {tf.TensorSpec({2})}})
    assert.tf_error("TypeError", MSG, g, v.handle)
    assert.tf_error("TypeError", "an argument holds a variable handle (dtype resource)", f, {v.handle})
    -- what it suggests works
    assert.same({2, 2}, f(v):totable())
    assert.same({2, 2}, f(v:value()):totable())
  end)
end)
