-- tf.onnx.load: the function it returns (signature, calls, gradients) and
-- how it refuses models (one error listing everything unsupported, at load
-- time; unreadable bytes; missing files). Models: the shipped MLP
-- (examples/data/mlp.onnx), libonnx-testdata's cases, and models built here
-- with python3-onnx's helper (skipped visibly without it).
local tf = require("tf")

local MLP = "examples/data/mlp.onnx"
local TD = "/usr/share/libonnx-testdata/data/node"

local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert.is_false(ok, "expected an error")
  return e
end

-- a model made by python3-onnx's helper from Python source (nil without python3-onnx)
local function make_model(py)
  local path = os.tmpname()
  local script = os.tmpname()
  local f = assert(io.open(script, "w"))
  f:write("import onnx\nfrom onnx import helper, TensorProto\n", py, "\nopen(%q, 'wb').write(m.SerializeToString())\n")
  f:close()
  local src = slurp(script):gsub("%%q", ("%q"):format(path))
  f = assert(io.open(script, "w"))
  f:write(src)
  f:close()
  local ok = os.execute("env -u LD_PRELOAD /usr/bin/python3 " .. script .. " 2>/dev/null")
  os.remove(script)
  if not ok then os.remove(path) return nil end
  local bytes = slurp(path)
  os.remove(path)
  return bytes
end

describe("tf.onnx.load", function()
  it("returns a concrete function typed as the model's inputs and outputs", function()
    local f = tf.onnx.load(MLP)
    assert.equals("tf.ConcreteFunction", getmetatable(f).__name)
    local i = f.onnx.inputs[1]
    assert.equals("input", i.name)
    assert.equals(tf.float32, i.dtype)
    assert.equals(2, i.shape.n)
    assert.is_nil(i.shape[1])
    assert.equals(8, i.shape[2])
    assert.equals("output", f.onnx.outputs[1].name)
    assert.equals(17, f.onnx.opset)
    assert.truthy(tostring(f):find("input (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(None, 8), dtype=tf.float32, name='input')", 1, true))
    -- any batch; the wrong dtype or feature size is refused by the signature
    assert.same({7, 4}, f(tf.zeros({7, 8})).shape:as_list())
    assert.equals("TypeError", err_of(f, tf.zeros({7, 8}, tf.float64)).kind)
    assert.equals("TypeError", err_of(f, tf.zeros({7, 9})).kind)
  end)

  it("computes what the model's weights say (an MLP recomputed from its initializers)", function()
    local m = tf.core.internal.onnx_read(MLP)
    local w = {}
    for _, e in ipairs(m.graph.initializers) do w[e[1]] = m.initializer(e[2]) end
    local x = tf.random.normal({3, 8}, 0, 1, tf.float32, 3)
    -- PyTorch Linear: x W^T + b (relu, tanh, linear)
    local h = tf.nn.relu(tf.matmul(x, w["fc1.weight"], {transpose_b = true}) + w["fc1.bias"])
    h = tf.tanh(tf.matmul(h, w["fc2.weight"], {transpose_b = true}) + w["fc2.bias"])
    local want = tf.matmul(h, w["fc3.weight"], {transpose_b = true}) + w["fc3.bias"]
    local got = tf.onnx.load(MLP)(x)
    assert.is_true(tf.reduce_max(tf.abs(got - want)):item() < 1e-6)
  end)

  it("loads from the model's bytes as from its path", function()
    local bytes = assert(slurp(MLP))
    local x = tf.random.normal({2, 8}, 0, 1, tf.float32, 5)
    local a = tf.onnx.load(MLP)(x)
    local b = tf.onnx.load(bytes, {bytes = true})(x)
    local c = tf.onnx.load(bytes)(x)   -- guessed: the string holds NUL bytes
    assert.same(a:totable(), b:totable())
    assert.same(a:totable(), c:totable())
  end)

  it("composes: called inside another tf.fn it is inlined into that trace", function()
    local f = tf.onnx.load(MLP)
    local g = tf.fn(function(x) return f(x) * 2 end, {autograph = false})
    local x = tf.random.normal({4, 8}, 0, 1, tf.float32, 13)
    assert.same((f(x) * 2):totable(), g(x):totable())
  end)

  it("is differentiable: the gradient matches finite differences", function()
    local f = tf.onnx.load(MLP)
    local x0 = tf.random.normal({1, 8}, 0, 1, tf.float64, 9)
    local x = tf.cast(x0, tf.float32)
    local tape = tf.GradientTape()
    tape:watch(x)
    local y = tape:record(function() return tf.reduce_sum(f(x)) end)
    local g = tape:gradient(y, x):totable()[1]
    local h = 1e-2
    for k = 1, 8, 3 do
      local e = {}
      for j = 1, 8 do e[j] = j == k and h or 0 end
      local d = tf.constant({e}, tf.float32)
      local fd = (tf.reduce_sum(f(x + d)):item() - tf.reduce_sum(f(x - d)):item()) / (2 * h)
      assert.is_true(math.abs(fd - g[k]) < 1e-3, ("d/dx%d: %g vs %g"):format(k, fd, g[k]))
    end
  end)

  it("runs convolutions NHWC inside: one transpose in, weights rearranged at load", function()
    local path = TD .. "/test_conv_with_strides_padding/model.onnx"
    if not slurp(path) then pending("libonnx-testdata is not installed") return end
    local f = tf.onnx.load(path)
    local ops = {}
    for _, n in ipairs(f.graph:nodes()) do ops[n.op] = (ops[n.op] or 0) + 1 end
    assert.equals(1, ops.conv2d)
    -- x to NHWC, y back to NCHW, and W (a graph input in this case, not an initializer) to HWIO
    assert.equals(3, ops.transpose)
  end)

  it("keeps NHWC through a per-channel Add between Convs (one transpose in, one out)", function()
    local bytes = make_model([[
import numpy as np
from onnx import numpy_helper
rng = np.random.default_rng(0)
w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.standard_normal((4, 1, 1)).astype(np.float32), "b")
n1 = helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])
n2 = helper.make_node("Add", ["c", "b"], ["a"])
n3 = helper.make_node("Relu", ["a"], ["r"])
w2 = numpy_helper.from_array(rng.standard_normal((4, 4, 1, 1)).astype(np.float32), "w2")
n4 = helper.make_node("Conv", ["r", "w2"], ["y"])
g = helper.make_graph([n1, n2, n3, n4], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3, 5, 5])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 4, 5, 5])], [w, b, w2])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])]])
    if not bytes then pending("no /usr/bin/python3 with onnx") return end
    local f = tf.onnx.load(bytes, {bytes = true})
    local ops = {}
    for _, n in ipairs(f.graph:nodes()) do ops[n.op] = (ops[n.op] or 0) + 1 end
    assert.equals(2, ops.transpose)
    -- the reference: the same weights read back, NCHW arithmetic by hand
    local m = tf.core.internal.onnx_read(bytes, true)
    local init = {}
    for _, e in ipairs(m.graph.initializers) do init[e[1]] = m.initializer(e[2]) end
    local function conv(x, w, pad)   -- NCHW / OIHW through luatf's NHWC / HWIO conv2d
      return tf.transpose(tf.nn.conv2d(tf.transpose(x, {1, 3, 4, 2}), tf.transpose(w, {3, 4, 2, 1}), 1, pad), {1, 4, 2, 3})
    end
    local x = tf.random.normal({2, 3, 5, 5}, 0, 1, tf.float32, 17)
    local want = conv(tf.nn.relu(conv(x, init.w, "SAME") + init.b), init.w2, "VALID")
    assert.is_true(tf.reduce_max(tf.abs(f(x) - want)):item() < 1e-5)
  end)

  it("runs If as tf.cond, its branches reading the outer graph's values", function()
    local bytes = make_model([[
one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
tb = helper.make_graph([helper.make_node("Add", ["x", "one"], ["t"])], "then", [],
                       [helper.make_tensor_value_info("t", TensorProto.FLOAT, [3])], [one])
eb = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["e"])], "else", [],
                       [helper.make_tensor_value_info("e", TensorProto.FLOAT, [3])], [two])
n = helper.make_node("If", ["c"], ["y"], then_branch=tb, else_branch=eb)
g = helper.make_graph([n], "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                                 helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])]])
    if not bytes then pending("no /usr/bin/python3 with onnx") return end
    local f = tf.onnx.load(bytes, {bytes = true})
    local x = tf.constant({1, 2, 3}, tf.float32)
    assert.same({2, 3, 4}, f(tf.constant(true), x):totable())
    assert.same({2, 4, 6}, f(tf.constant(false), x):totable())
  end)

  it("runs Loop as tf.while_loop: one trace serves any trip count, scan outputs stacked", function()
    local bytes = make_model([[
body = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]),
     helper.make_node("Add", ["y_in", "x"], ["y_out"]),
     helper.make_node("Identity", ["y_out"], ["scan"])],
    "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []),
     helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("y_in", TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("y_out", TensorProto.FLOAT, [2]),
     helper.make_tensor_value_info("scan", TensorProto.FLOAT, [2])])
n = helper.make_node("Loop", ["m", "", "y0"], ["y", "ys"], body=body)
g = helper.make_graph([n], "g", [helper.make_tensor_value_info("m", TensorProto.INT64, []),
                                 helper.make_tensor_value_info("y0", TensorProto.FLOAT, [2]),
                                 helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2]),
                       helper.make_tensor_value_info("ys", TensorProto.FLOAT, [None, 2])])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])]])
    if not bytes then pending("no /usr/bin/python3 with onnx") return end
    local f = tf.onnx.load(bytes, {bytes = true})
    local y0, x = tf.constant({1, 2}, tf.float32), tf.constant({10, 20}, tf.float32)
    local y, ys = f(tf.constant(3, tf.int64), y0, x)
    assert.same({31, 62}, y:totable())
    assert.same({{11, 22}, {21, 42}, {31, 62}}, ys:totable())
    y = f(tf.constant(1, tf.int64), y0, x)
    assert.same({11, 22}, y:totable())
  end)

  it("refuses unreadable bytes and missing files", function()
    local e = err_of(tf.onnx.load, "\0\1\2garbage", {bytes = true})
    assert.equals("InvalidArgumentError", e.kind)
    assert.equals("onnx: not a valid ONNX model (the protobuf does not parse)", e.message)
    local bytes = assert(slurp(MLP))
    e = err_of(tf.onnx.load, bytes:sub(1, #bytes - 100), {bytes = true})
    assert.equals("InvalidArgumentError", e.kind)
    e = err_of(tf.onnx.load, "/nonexistent/model.onnx")
    assert.equals("NotFoundError", e.kind)
    assert.equals("onnx: /nonexistent/model.onnx: No such file or directory", e.message)
    e = err_of(tf.onnx.load, 42)
    assert.equals("TypeError", e.kind)
    assert.equals("onnx.load: argument 1 ('src') expected string (a path or the model's bytes), got number", e.message)
    e = err_of(tf.onnx.load, MLP, {bites = true})
    assert.equals("onnx.load: unknown option 'bites' (accepted: bytes, name)", e.message)
  end)

  it("refuses a raw_data initializer whose size does not match its shape", function()
    local bytes = make_model([[
w = TensorProto()
w.name = "w"
w.data_type = TensorProto.FLOAT
w.dims.extend([2, 3])
w.raw_data = b"\0" * 20
n = helper.make_node("Add", ["x", "w"], ["y"])
g = helper.make_graph([n], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])]])
    if not bytes then pending("no /usr/bin/python3 with onnx") return end
    local e = err_of(tf.onnx.load, bytes, {bytes = true})
    assert.equals("InvalidArgumentError", e.kind)
    assert.equals("onnx: tensor 'w': raw_data has 20 bytes, 24 expected", e.message)
  end)

  it("lists everything unsupported in one error, at load time", function()
    local bytes = make_model([[
n1 = helper.make_node("MaxPool", ["x"], ["p"], kernel_shape=[2, 2], dilations=[2, 2])
n2 = helper.make_node("Bernoulli", ["p"], ["b"])
n3 = helper.make_node("Frobnicate", ["b"], ["c"], domain="com.example")
n4 = helper.make_node("Relu", ["c"], ["d"], alpha=0.5)
n5 = helper.make_node("Bernoulli", ["d"], ["y"])
g = helper.make_graph([n1, n2, n3, n4, n5], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.INT8, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])]])
    if not bytes then pending("no /usr/bin/python3 with onnx") return end
    local e = err_of(tf.onnx.load, bytes, {bytes = true})
    assert.equals("UnimplementedError", e.kind)
    local m = e.message
    assert.truthy(m:find("^onnx.load: the model uses what luatf cannot import: "), m)
    for _, part in ipairs({"operator set 'com.example' (version 1)", "output 'y' of type INT8",
                           "MaxPool attribute 'dilations' values other than 1", "operator Bernoulli",
                           "operator Frobnicate of domain 'com.example'", "Relu attribute 'alpha'"}) do
      assert.truthy(m:find(part, 1, true), part .. " in: " .. m)
    end
    local _, count = m:gsub("operator Bernoulli", "")
    assert.equals(1, count)   -- each thing once
  end)

  it("names the node when tracing finds what it cannot express", function()
    local path = TD .. "/test_reduce_sum_default_axes_keepdims_example/model.onnx"
    if not slurp(path) then pending("libonnx-testdata is not installed") return end
    local e = err_of(tf.onnx.load, path)
    assert.equals("UnimplementedError", e.kind)
    assert.equals("onnx.load: node 'reduced' (ReduceSum): onnx: ReduceSum axes must be a constant (it depends on the inputs)", e.message)
  end)

  it("rearranges conv weights OIHW -> HWIO as tf.transpose does (core.internal.onnx_hwio)", function()
    local w = tf.random.normal({6, 4, 3, 2}, 0, 1, tf.float32, 11)
    assert.same(tf.transpose(w, {3, 4, 2, 1}):totable(), tf.core.internal.onnx_hwio(w):totable())
    local w64 = tf.cast(w, tf.float64)
    assert.same(tf.transpose(w64, {3, 4, 2, 1}):totable(), tf.core.internal.onnx_hwio(w64):totable())
    local e = err_of(tf.core.internal.onnx_hwio, tf.zeros({2, 3, 4}))
    assert.equals("InvalidArgumentError", e.kind)
    assert.equals("onnx_hwio: a concrete 4-d tensor expected", e.message)
  end)
end)
