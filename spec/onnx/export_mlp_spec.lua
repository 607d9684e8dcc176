-- tf.onnx.save of an MLP (a Keras Sequential of Dense layers and a tf.fn
-- written with raw ops): onnx.checker accepts the file and ONNX Runtime
-- computes what luatf computes, over a dynamic batch.
local tf = require("tf")
local X = require("onnx.export_support")

describe("tf.onnx.save: MLP", function()
  teardown(function() X.cleanup() end)
  local skip = X.missing()

  it("a Keras Sequential MLP: checker, ORT outputs, a dynamic batch", function()
    if skip then return pending(skip) end
    tf.random.set_seed(7)
    local model = tf.keras.Sequential{
      tf.keras.layers.Dense{units = 16, activation = "relu"},
      tf.keras.layers.Dense{units = 8, activation = "tanh"},
      tf.keras.layers.Dense{units = 3, activation = "softmax"},
    }
    local path = X.tmpfile("mlp.onnx")
    tf.onnx.save(model, path, {input_signature = {tf.TensorSpec({tf.None, 5}, tf.float32)}})
    local ok, msg = X.check(path)
    assert.is_truthy(ok, msg)
    -- the unknown batch is a dim_param, the feature size a dim_value
    assert.are.same({{"batch", 5}}, X.info(path).dims)
    assert.are.same({"inputs"}, X.info(path).inputs)
    -- the weights are initializers, read at export time
    assert.are.equal(6, X.info(path).ninit)
    for _, batch in ipairs({1, 4}) do
      local x = tf.random.normal({batch, 5})
      local res, order = X.ort(path, {inputs = x})
      assert.are.same({"output_1"}, order)
      X.assert_close(model(x), res.output_1, 1e-5, 1e-6)
    end
  end)

  it("a tf.fn with its own input_signature, two inputs, two outputs", function()
    if skip then return pending(skip) end
    local w = tf.Variable(tf.constant({{1, -2}, {0.5, 3}, {-1, 0.25}}))
    local b = tf.constant({0.1, -0.2})
    local f = tf.fn(function(x, y)
      local h = tf.nn.relu(tf.matmul(x, w) + b)
      return h * y, tf.reduce_sum(h, {axis = 2})
    end, {input_signature = {tf.TensorSpec({tf.None, 3}), tf.TensorSpec({tf.None, 2})}})
    local path = X.tmpfile("two.onnx")
    tf.onnx.save(f, path)
    assert.is_truthy(X.check(path))
    local x = tf.constant({{1.0, 2, 3}, {-1, 0.5, 2}})
    local y = tf.constant({{2.0, 3}, {-1, 1}})
    local res, order = X.ort(path, {x = x, y = y})
    assert.are.same({"output_1", "output_2"}, order)
    local a, s = f(x, y)
    -- hand-computed: h = relu({{-0.9, 4.55}, {-2.65, 3.8}}), times y
    X.assert_close(tf.constant({{0, 13.65}, {0, 3.8}}), res.output_1, 1e-6, 1e-5)
    X.assert_close(a, res.output_1)
    X.assert_close(s, res.output_2)
  end)
  it("a fused elementwise chain is exported as its ops (the graph before fusion)", function()
    if skip then return pending(skip) end
    local f = tf.fn(function(x) return tf.nn.relu(x * 2 + 1) - 3 end)
    local cf = f:get_concrete_function(tf.TensorSpec({2, 4}))   -- (fusion needs known shapes)
    local fused = 0
    for _, n in ipairs(cf.graph:nodes()) do if n.fused then fused = fused + 1 end end
    assert.are.equal(4, fused)   -- multiply, add, relu, subtract run as one loop in luatf
    local path = X.tmpfile("fused.onnx")
    tf.onnx.save(cf, path)
    assert.is_truthy(X.check(path))
    assert.are.same({"Mul", "Add", "Relu", "Sub", "Identity", "Identity"}, X.info(path).ops)
    local x = tf.constant({{-2.0, -0.5, 0, 1}, {3, -1, 0.25, 2}})
    local res = X.ort(path, {x = x})
    -- hand-computed: relu(2x + 1) - 3
    X.assert_close(tf.constant({{-3, -3, -2, 0}, {4, -3, -1.5, 2}}), res.output_1)
  end)
end)
