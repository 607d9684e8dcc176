-- The functional API: tf.keras.Input, KerasTensors, tf.keras.Model{inputs =,
-- outputs =}, shared layers, nested models, summary, errors, get_config.
local tf = require("tf")
local L = tf.keras.layers

local function np(t) return t:numpy() end

-- bit-identical tensors (same shape, same values)
local function same_values(a, b)
  assert.same(a.shape:as_list(), b.shape:as_list())
  assert.same(np(a), np(b))
end

describe("tf.keras.Input and KerasTensor", function()
  it("takes the shape positionally or as shape =, and prints as Keras", function()
    tf.keras.backend.clear_session()
    local a = tf.keras.Input({28, 28, 1})
    assert.equal("<KerasTensor shape=(None, 28, 28, 1), dtype=float32, name=input_1>", tostring(a))
    local b = tf.keras.Input{shape = {5}, dtype = "int32", name = "ids"}
    assert.equal("<KerasTensor shape=(None, 5), dtype=int32, name=ids>", tostring(b))
    local c = tf.keras.Input({3}, {batch_size = 8})
    assert.same({8, 3}, c.shape:as_list())
    local d = tf.keras.layers.Input{shape = {2}}
    assert.equal("input_3", d.name)
    local e = tf.keras.Input{shape = {nil, 4}}
    assert.equal("(None, None, 4)", tostring(e.shape))
    assert.equal("InputLayer", a._keras_history.layer._class_name)
  end)

  it("rejects a missing shape and unknown keywords", function()
    assert.tf_error("ValueError", "Input: 'shape' (without the batch dimension) is required", function()
      tf.keras.Input{}
    end)
    assert.tf_error("TypeError", "Input: unknown keyword argument 'units'", function()
      tf.keras.Input{shape = {2}, units = 3}
    end)
  end)

  it("a layer called on an Input returns a KerasTensor and builds its weights", function()
    local inp = tf.keras.Input({4})
    local d = L.Dense{3}
    local out = d(inp)
    assert.truthy(tf.core.internal.keras.is_keras_tensor(out))
    assert.same({-1, 3}, out.shape:as_list())
    assert.equal(tf.float32, out.dtype)
    assert.is_true(d.built)
    assert.same({4, 3}, d.kernel.shape:as_list())
    assert.is_true(tf.is_tensor(d.kernel:value()))          -- an eager variable, made outside the trace
  end)

  it("a layer called on a layer object is a TypeError naming both (not a shape error)", function()
    assert.tf_error("TypeError", 'layer "dense_in" (Dense): expected a tensor input, got a layer (InputLayer', function()
      L.Dense{2, name = "dense_in"}(L.InputLayer{input_shape = {4}})
    end)
  end)
end)

describe("functional models", function()
  it("compute the same values as the layers called eagerly in order", function()
    local inp = tf.keras.Input({6})
    local d1, bn, d2 = L.Dense{5, activation = "relu"}, L.BatchNormalization{}, L.Dense{2}
    local out = d2(bn(d1(inp)))
    local m = tf.keras.Model{inputs = inp, outputs = out}
    local x = tf.random.normal({7, 6})
    local ref = d2(bn(d1(x)))
    same_values(ref, m(x))
    same_values(d2(bn(d1(x), {training = true})), m(x, {training = true}))
    -- and inside tf.fn (the moving statistics have changed: a new reference)
    ref = d2(bn(d1(x)))
    local f = tf.fn(function(v) return m(v) end)
    assert.tensor_near(ref, f(x))
    assert.equal(6, #m.trainable_variables)   -- 2 + 2 (gamma, beta) + 2
    assert.equal(2, #m.non_trainable_variables)
  end)

  it("positional Model(inputs, outputs), several inputs and outputs as arrays or dicts", function()
    local a = tf.keras.Input({3}, {name = "a"})
    local b = tf.keras.Input({2}, {name = "b"})
    local da, db = L.Dense{4, name = "da"}, L.Dense{4, name = "db"}
    local s = L.Add{}({da(a), db(b)})
    local o1, o2 = L.Dense{1, name = "o1"}(s), L.Dense{2, name = "o2"}(s)
    local m = tf.keras.Model({a, b}, {o1, o2})
    assert.same({"a", "b"}, m.input_names)
    assert.same({"o1", "o2"}, m.output_names)
    assert.equal(2, #m.inputs)
    assert.equal(o2, m.outputs[2])
    local xa, xb = tf.random.normal({3, 3}), tf.random.normal({3, 2})
    local y = m({xa, xb})
    local y2 = m{a = xa, b = xb}
    local s_ref = da(xa) + db(xb)
    same_values(m:get_layer("o1")(s_ref), y[1])
    same_values(m:get_layer("o2")(s_ref), y[2])
    same_values(y[1], y2[1])
    -- dict outputs come back keyed
    local md = tf.keras.Model{inputs = {x = a, y = b}, outputs = {first = o1, second = o2}}
    assert.same({"x", "y"}, md.input_names)
    assert.same({"first", "second"}, md.output_names)
    local yd = md{x = xa, y = xb}
    same_values(y[1], yd.first)
    same_values(y[2], yd.second)
  end)

  it("name the missing key and count inputs in their errors", function()
    local a = tf.keras.Input({3}, {name = "left"})
    local b = tf.keras.Input({3}, {name = "right"})
    local m = tf.keras.Model({a, b}, L.Add{}({a, b}))
    assert.tf_error("ValueError", 'Missing data for input "right". You passed a data dictionary with keys ["left"]. ' ..
      'Expected the following keys: ["left", "right"]', function() m{left = tf.ones{1, 3}} end)
    assert.tf_error("ValueError", "expects 2 input(s) (left, right), but it received 3 input tensors", function()
      m({tf.ones{1, 3}, tf.ones{1, 3}, tf.ones{1, 3}})
    end)
    assert.tf_error("ValueError", "expects 2 inputs (left, right), but it received 1 input tensor", function()
      m(tf.ones{1, 3})
    end)
  end)

  it("an output not connected to the inputs is a graph-disconnected ValueError", function()
    local a = tf.keras.Input({3}, {name = "conn_a"})
    local b = tf.keras.Input({3}, {name = "conn_b"})
    local out = L.Dense{2, name = "conn_d"}(b)
    assert.tf_error("ValueError", 'Model: graph disconnected: cannot obtain the value of <KerasTensor shape=(None, 3), ' ..
      'dtype=float32, name=conn_b> at layer "conn_b"', function() tf.keras.Model(a, out) end)
    assert.tf_error("TypeError", "Model: 'outputs' must hold KerasTensors", function()
      tf.keras.Model(a, {tf.ones{2}})
    end)
    assert.tf_error("ValueError", "is not the output of tf.keras.Input", function() tf.keras.Model(out, out) end)
  end)

  it("a shared layer has one set of variables and gives the eager values at each call", function()
    local a, b = tf.keras.Input({4}), tf.keras.Input({4})
    local shared = L.Dense{3, name = "shared"}
    local out = L.Subtract{}({shared(a), shared(b)})
    local m = tf.keras.Model({a, b}, out)
    assert.equal(2, #m.trainable_variables)
    assert.equal(shared.kernel, m.trainable_variables[1])
    assert.equal(2, #rawget(shared, "_inbound_nodes"))
    local xa, xb = tf.random.normal({2, 4}), tf.random.normal({2, 4})
    same_values(shared(xa) - shared(xb), m({xa, xb}))
    -- a gradient reaches the one kernel from both branches
    local tape = tf.GradientTape()
    local loss = tape:record(function() return tf.reduce_sum(m({xa, xb})) end)
    local g = tape:gradient(loss, {shared.kernel})[1]
    -- d/dW sum((xa - xb) W + (b - b)) = (xa - xb)^T 1
    local ref = tf.matmul(tf.transpose(xa - xb), tf.ones{2, 3})
    assert.tensor_near(ref, g, {atol = 1e-5})
  end)

  it("nest: a functional model as a layer, Sequential inside functional and functional inside Sequential", function()
    local i1 = tf.keras.Input({4})
    local inner = tf.keras.Model(i1, L.Dense{3, name = "inner_d"}(i1), {name = "inner"})
    local seq = tf.keras.Sequential{L.Dense{2, name = "seq_d"}}
    local i2 = tf.keras.Input({4})
    local out = seq(inner(i2))
    local outer = tf.keras.Model(i2, out)
    assert.equal(4, #outer.trainable_variables)
    local x = tf.random.normal({5, 4})
    same_values(seq(inner(x)), outer(x))
    -- functional inside Sequential
    local s2 = tf.keras.Sequential{tf.keras.Input{shape = {4}}, inner, L.Dense{1, name = "after_inner"}}
    same_values(s2:get_layer("after_inner")(inner(x)), s2(x))
    assert.same({"Functional", "Sequential"}, {outer.layers[2]._class_name, outer.layers[3]._class_name})
  end)

  it("operators on KerasTensors become TFOpLambda layers; other tf operations ask for a Lambda layer", function()
    local a = tf.keras.Input({3})
    local b = tf.keras.Input({2})
    local y = L.Lambda{function(xs) return tf.concat(xs, 2) end}({a * 2 + 1, -b})
    local z = L.Lambda{function(x) return tf.reshape(x, {-1, 5, 1}) end}(y % 4 - 1)
    local m = tf.keras.Model({a, b}, z)
    assert.same({-1, 5, 1}, z.shape:as_list())
    local xa, xb = tf.constant({{1, 2, 3}}), tf.constant({{4, 5}})
    local got = m({xa, xb})
    -- (2a + 1, -b) % 4 - 1 = (3, 5, 7, -4, -5) % 4 - 1
    assert.same({{{2}, {0}, {2}, {-1}, {2}}}, np(got))
    assert.equal(tf.float32, got.dtype)   -- int32 data cast to the Inputs' float32, as Keras
    assert.equal("TFOpLambda", m.layers[3]._class_name)
    assert.equal("tf.math.multiply", m.layers[3].name:match("^tf%.math%.multiply"))
    -- slicing as tensors slice
    local first_two = a[{{}, {1, 2}}]
    assert.same({-1, 2}, first_two.shape:as_list())
    assert.same({{1, 2}}, np(tf.keras.Model(a, first_two)(xa)))
    assert.tf_error("TypeError", "a KerasTensor (<KerasTensor shape=(None, 3), dtype=float32, name=" .. a.name ..
      ">) was given to a tf operation: it is a symbolic input of a functional model and has no value until the " ..
      "model runs", function() return tf.concat({a, a}, 2) end)
    assert.tf_error("TypeError", "wrap any other operation in a layer, e.g. tf.keras.layers.Lambda", function()
      return tf.reshape(a, {-1, 3, 1})
    end)
  end)

  it("propagates masks through the graph (a layer sees its input's mask when the model runs)", function()
    local K = tf.core.internal.keras
    local Masker = L.Layer:extend("ZeroMasker", {
      call = function(_, x) return x end,
      compute_mask = function(_, x) return tf.not_equal(x, 0) end,
    })
    local seen = {}
    local Reader = L.Layer:extend("MaskReader", {
      supports_masking = true,
      call = function(_, x, opts)
        seen[#seen + 1] = opts.mask
        return x * 2
      end,
    })
    local inp = tf.keras.Input({4})
    local out = Reader{}(Masker{}(inp))
    local m = tf.keras.Model(inp, out)
    seen = {}
    local y = m(tf.constant({{1, 0, 2, 0}}))
    assert.equal(1, #seen)
    assert.same({{true, false, true, false}}, np(seen[1]))
    assert.same({{true, false, true, false}}, np(K.get_mask(y)))
  end)

  it("a nested model passes the mask of its input to its first layer", function()
    local K = tf.core.internal.keras
    local seen
    local Reader = L.Layer:extend("MaskReader2", {
      supports_masking = true,
      call = function(_, x, opts) seen = opts.mask; return x end,
    })
    local i1 = tf.keras.Input({3})
    local inner = tf.keras.Model(i1, Reader{}(i1))
    local x = tf.constant({{1, 2, 3}}, tf.float32)
    local y = inner(x, {mask = tf.constant({{true, false, true}})})
    assert.same({{true, false, true}}, np(seen))
    assert.same({{true, false, true}}, np(K.get_mask(y)))
  end)

  it("a layer returning a table (return_state style) gives a table of KerasTensors", function()
    local Split = L.Layer:extend("SplitHalf", {
      call = function(_, x) return {x * 2, x[{{}, {1, 1}}]} end,
    })
    local inp = tf.keras.Input({3})
    local out, state = table.unpack(Split{}(inp))
    assert.same({-1, 3}, out.shape:as_list())
    assert.same({-1, 1}, state.shape:as_list())
    local m = tf.keras.Model(inp, {out, L.Dense{2, name = "after_state"}(state)})
    local x = tf.constant({{1, 2, 3}}, tf.float32)
    local y = m(x)
    assert.same({{2, 4, 6}}, np(y[1]))
    same_values(m:get_layer("after_state")(tf.constant({{1}}, tf.float32)), y[2])
  end)

  it("summary shows the connections", function()
    tf.keras.backend.clear_session()
    local a = tf.keras.Input({4})
    local b = tf.keras.Input({3}, {name = "aux"})
    local h = L.Dense{3}(a)
    local s = L.Add{}({h, b})
    local out = L.Dense{2, name = "out"}(L.Concatenate{}({s, h}))
    local m = tf.keras.Model({a, b}, out)
    local lines = {}
    m:summary{print_fn = function(l) lines[#lines + 1] = l end}
    local want = {
      'Model: "model"',
      string.rep("_", 98),
      "Layer (type)                    Output Shape         Param #     Connected to",
      string.rep("=", 98),
      "input_1 (InputLayer)            [(None, 4)]          0",
      string.rep("_", 98),
      "aux (InputLayer)                [(None, 3)]          0",
      string.rep("_", 98),
      "dense (Dense)                   (None, 3)            15          input_1[0][0]",
      string.rep("_", 98),
      "add (Add)                       (None, 3)            0           dense[0][0]",
      "                                                                 aux[0][0]",
      string.rep("_", 98),
      "concatenate (Concatenate)       (None, 6)            0           add[0][0]",
      "                                                                 dense[0][0]",
      string.rep("_", 98),
      "out (Dense)                     (None, 2)            14          concatenate[0][0]",
      string.rep("=", 98),
      "Total params: 29",
      "Trainable params: 29",
      "Non-trainable params: 0",
      string.rep("_", 98),
    }
    assert.same(want, lines)
    assert.equal(table.concat(want, "\n"), tostring(m))
  end)

  it("get_layer by name or index", function()
    local a = tf.keras.Input({2})
    local d = L.Dense{1, name = "gl_dense"}
    local m = tf.keras.Model(a, d(a))
    assert.equal(d, m:get_layer("gl_dense"))
    assert.equal(d, m:get_layer{index = 2})
    assert.tf_error("ValueError", "get_layer: no such layer: nope", function() m:get_layer("nope") end)
  end)
end)

describe("merge layers", function()
  local a = tf.constant({{1, 2, 3}, {4, 5, 6}}, tf.float32)
  local b = tf.constant({{2, 2, 2}, {-1, 0, 8}}, tf.float32)
  local c = tf.constant({{0, 1, 0}, {1, 1, 1}}, tf.float32)

  it("compute their elementwise values", function()
    assert.same({{3, 5, 5}, {4, 6, 15}}, np(L.Add{}({a, b, c})))
    assert.same({{-1, 0, 1}, {5, 5, -2}}, np(L.Subtract{}({a, b})))
    assert.same({{0, 4, 0}, {-4, 0, 48}}, np(L.Multiply{}({a, b, c})))
    assert.tensor_near({{1, 5 / 3, 5 / 3}, {4 / 3, 2, 5}}, L.Average{}({a, b, c}))
    assert.same({{2, 2, 3}, {4, 5, 8}}, np(L.Maximum{}({a, b, c})))
    assert.same({{0, 1, 0}, {-1, 0, 1}}, np(L.Minimum{}({a, b, c})))
    assert.same({{1, 2, 3, 2, 2, 2}, {4, 5, 6, -1, 0, 8}}, np(L.Concatenate{}({a, b})))
    assert.same({{1, 2, 3}, {4, 5, 6}, {2, 2, 2}, {-1, 0, 8}}, np(L.Concatenate{axis = 1}({a, b})))
    -- the functional forms
    assert.same({{3, 5, 5}, {4, 6, 15}}, np(L.add{a, b, c}))
    assert.same({{1, 2, 3, 2, 2, 2}, {4, 5, 6, -1, 0, 8}}, np(L.concatenate{a, b, axis = -1}))
    assert.same({{-1, 0, 1}, {5, 5, -2}}, np(L.subtract({a, b}, {name = "sub_fn"})))
  end)

  it("Dot contracts the chosen (1-based) axes per sample, optionally normalized", function()
    assert.same({{12}, {44}}, np(L.Dot{axes = 2}({a, b})))
    assert.same({{12}, {44}}, np(L.dot{a, b, axes = {2, 2}}))
    local n = L.Dot{axes = 2, normalize = true}({a, b})
    local function cos(u, v)
      local d, nu, nv = 0, 0, 0
      for i = 1, #u do d, nu, nv = d + u[i] * v[i], nu + u[i] ^ 2, nv + v[i] ^ 2 end
      return d / math.sqrt(nu * nv)
    end
    assert.tensor_near({{cos({1, 2, 3}, {2, 2, 2})}, {cos({4, 5, 6}, {-1, 0, 8})}}, n)
    -- rank 3: (batch, 2, 3) . (batch, 4, 3) over the last axes -> (batch, 2, 4)
    local x = tf.random.normal({2, 2, 3})
    local y = tf.random.normal({2, 4, 3})
    assert.tensor_near(tf.matmul(x, y, {transpose_b = true}), L.Dot{axes = 3}({x, y}), {atol = 1e-5})
    assert.tensor_near(tf.matmul(x, y, {transpose_b = true}),
      L.Dot{axes = {2, 2}}({tf.transpose(x, {1, 3, 2}), tf.transpose(y, {1, 3, 2})}), {atol = 1e-5})
  end)

  it("check their inputs' shapes, naming the layer and the shapes", function()
    local p, q = tf.keras.Input({4}), tf.keras.Input({5})
    assert.tf_error("ValueError", 'Add: layer "bad_add": inputs have incompatible shapes: received shapes ' ..
      "(None, 4), (None, 5)", function() L.Add{name = "bad_add"}({p, q}) end)
    local r = tf.keras.Input({2, 3})
    assert.tf_error("ValueError", 'Concatenate: layer "bad_cat" requires inputs with matching shapes except for the ' ..
      "concatenation axis 2, received shapes (None, 4), (None, 2, 3)", function()
        L.Concatenate{axis = 2, name = "bad_cat"}({p, r})
      end)
    assert.tf_error("ValueError", 'Concatenate: layer "bad_cat2" requires inputs with matching shapes', function()
      L.Concatenate{axis = 2, name = "bad_cat2"}({tf.ones{2, 3, 1}, tf.ones{2, 3, 2}})
    end)
    assert.tf_error("ValueError", 'Subtract: layer "sub3" should be called on exactly 2 inputs, got 3', function()
      L.Subtract{name = "sub3"}({p, p, p})
    end)
    assert.tf_error("ValueError", 'Add: layer "add1" should be called on an array of inputs {a, b, ...}, got a single ' ..
      "tensor", function() L.Add{name = "add1"}(p) end)
    assert.tf_error("ValueError", 'Dot: layer "bad_dot": dimension incompatibility: 4 ~= 5. Layer shapes: (None, 4), ' ..
      "(None, 5). Chosen axes: {2, 2}", function() L.Dot{axes = 2, name = "bad_dot"}({p, q}) end)
    assert.tf_error("TypeError", "Dot: 'axes' is required", function() L.Dot{} end)
  end)

  it("round-trip their configs", function()
    local c1 = L.Concatenate{axis = 2}:get_config()
    assert.equal(2, L.Concatenate.from_config(c1).axis)
    local d = L.Dot.from_config(L.Dot{axes = {2, 3}, normalize = true}:get_config())
    assert.same({2, 3}, d.axes)
    assert.is_true(d.normalize)
  end)
end)

describe("functional models in training", function()
  it("fit lowers the loss (gradients reach every layer through Add and Concatenate)", function()
    tf.random.set_seed(3)
    local inp = tf.keras.Input({4})
    local h = L.Dense{8, activation = "tanh"}(inp)
    local skip = L.Dense{8}(inp)
    local out = L.Dense{1}(L.concatenate{L.add{h, skip}, inp})
    local m = tf.keras.Model(inp, out)
    m:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.02}, loss = "mse"}
    local x = tf.random.normal({64, 4})
    local y = tf.reduce_sum(x * tf.constant({1, -2, 0.5, 3}), 2, true)
    local before = m:evaluate(x, y, {verbose = 0})
    m:fit(x, y, {epochs = 30, batch_size = 16, verbose = 0})
    local after = m:evaluate(x, y, {verbose = 0})
    assert.is_true(after < 0.1 * before, ("loss %g -> %g"):format(before, after))
  end)

  it("fit with dict inputs and outputs, per-output losses, loss_weights and metrics, logged as Keras", function()
    tf.random.set_seed(5)
    local a = tf.keras.Input({3}, {name = "num"})
    local b = tf.keras.Input({2}, {name = "extra"})
    local h = L.Dense{8, activation = "relu"}(L.concatenate{a, b})
    local reg = L.Dense{1, name = "reg"}(h)
    local cls = L.Dense{2, activation = "softmax", name = "cls"}(h)
    local m = tf.keras.Model{inputs = {num = a, extra = b}, outputs = {reg = reg, cls = cls}}
    m:compile{optimizer = "adam", loss = {reg = "mse", cls = "sparse_categorical_crossentropy"},
              loss_weights = {reg = 1, cls = 0.5}, metrics = {cls = "accuracy"}}
    local xa, xb = tf.random.normal({32, 3}), tf.random.normal({32, 2})
    local yr = tf.reduce_sum(xa, 2, true)
    local yc = tf.cast(tf.greater(xa[{{}, 1}], 0), tf.int32) + 1
    local hist = m:fit({num = xa, extra = xb}, {reg = yr, cls = yc}, {epochs = 3, batch_size = 8, verbose = 0})
    local keys = {}
    for k in pairs(hist.history) do keys[#keys + 1] = k end
    table.sort(keys)
    assert.same({"cls_accuracy", "cls_loss", "loss", "reg_loss"}, keys)
    -- loss = reg_loss + 0.5 cls_loss, each a mean over the epoch's samples
    local logs = m:evaluate({num = xa, extra = xb}, {reg = yr, cls = yc}, {verbose = 0, return_dict = true})
    assert.is_true(math.abs(logs.loss - (logs.reg_loss + 0.5 * logs.cls_loss)) < 1e-4)
    local pred = m{num = xa, extra = xb}
    local mse = tf.reduce_mean(tf.square(pred.reg - yr)):item()
    assert.is_true(math.abs(mse - logs.reg_loss) < 1e-4, ("%g vs %g"):format(mse, logs.reg_loss))
    -- arrays of targets in output_names order (a dict's keys sorted) work too
    assert.same({"cls", "reg"}, m.output_names)
    local l2 = m:evaluate({num = xa, extra = xb}, {yc, yr}, {verbose = 0, return_dict = true})
    assert.is_true(math.abs(l2.loss - logs.loss) < 1e-6)
    local p = m:predict({num = xa, extra = xb}, {batch_size = 10, verbose = 0})
    assert.tensor_near(pred.reg, p.reg, {atol = 1e-6})
    assert.tensor_near(pred.cls, p.cls, {atol = 1e-6})
    -- a missing input key
    assert.tf_error("ValueError", 'Missing data for input "extra"', function()
      m:fit({num = xa}, {reg = yr, cls = yc}, {verbose = 0})
    end)
    assert.tf_error("ValueError", 'compile: unknown entry "nope" in \'loss\'', function()
      m:compile{optimizer = "adam", loss = {nope = "mse"}}
    end)
  end)
end)

describe("functional models: arrays of losses and metrics, validation, checkpoints", function()
  it("take per-output losses and loss_weights as arrays and apply a flat metrics list to each output", function()
    tf.random.set_seed(7)
    local a = tf.keras.Input({2}, {name = "arr_in"})
    local o1 = L.Dense{1, name = "first"}(a)
    local o2 = L.Dense{1, name = "second"}(a)
    local m = tf.keras.Model(a, {o1, o2})
    m:compile{optimizer = "sgd", loss = {"mse", "mae"}, loss_weights = {2, 0}, metrics = {"mae"}}
    local x = tf.random.normal({12, 2})
    local y1, y2 = tf.random.normal({12, 1}), tf.random.normal({12, 1})
    local logs = m:evaluate(x, {y1, y2}, {verbose = 0, return_dict = true, batch_size = 4})
    local p = m(x)
    local mse1 = tf.reduce_mean(tf.square(p[1] - y1)):item()
    local mae1 = tf.reduce_mean(tf.abs(p[1] - y1)):item()
    local mae2 = tf.reduce_mean(tf.abs(p[2] - y2)):item()
    assert.is_true(math.abs(logs.first_loss - mse1) < 1e-5)
    assert.is_true(math.abs(logs.second_loss - mae2) < 1e-5)
    assert.is_true(math.abs(logs.loss - 2 * mse1) < 1e-5)          -- the second output weighs 0
    assert.is_true(math.abs(logs.first_mae - mae1) < 1e-5)
    assert.is_true(math.abs(logs.second_mae - mae2) < 1e-5)
    local values = {m:evaluate(x, {y1, y2}, {verbose = 0, batch_size = 4})}
    assert.same({logs.loss, logs.first_loss, logs.second_loss, logs.first_mae, logs.second_mae}, values)
    local h = m:fit(x, {y1, y2}, {epochs = 1, batch_size = 4, verbose = 0, validation_data = {x, {y1, y2}}})
    assert.truthy(h.history.val_second_mae)
    assert.tf_error("ValueError", "compile: 'loss' has 1 entries but the model has 2 outputs", function()
      m:compile{optimizer = "sgd", loss = {"mse"}}
    end)
  end)

  it("save and load their weights through a checkpoint", function()
    local function make()
      local inp = tf.keras.Input({3})
      return tf.keras.Model(inp, L.Dense{2}(L.Dense{4, activation = "relu"}(inp)))
    end
    local m1, m2 = make(), make()
    local path = os.tmpname()
    m1:save_weights(path)
    m2:load_weights(path)
    os.remove(path)
    local x = tf.random.normal({3, 3})
    same_values(m1(x), m2(x))
  end)
end)

describe("functional get_config / from_config", function()
  it("rebuilds an equal model: same structure, bit-identical predictions after set_weights", function()
    local a = tf.keras.Input({5}, {name = "cfg_a"})
    local b = tf.keras.Input({5}, {name = "cfg_b"})
    local shared = L.Dense{4, activation = "relu", name = "cfg_shared"}
    local sa, sb = shared(a), shared(b)
    local i1 = tf.keras.Input({4})
    local inner = tf.keras.Model(i1, L.Dense{3, name = "cfg_inner_d"}(i1), {name = "cfg_inner"})
    local seq = tf.keras.Sequential{tf.keras.Input{shape = {3}}, L.Dense{2, name = "cfg_seq_d"}, L.Dropout{0.5}}
    local out1 = seq(inner(L.Maximum{name = "cfg_max"}({sa, sb})))
    local out2 = L.Dot{axes = 2, normalize = true, name = "cfg_dot"}({sa, sb})
    local m = tf.keras.Model({a, b}, {out1, out2}, {name = "cfg_model"})
    local config = m:get_config()
    assert.equal("cfg_model", config.name)
    assert.same({{"cfg_a", 0, 0}, {"cfg_b", 0, 0}}, config.input_layers)
    local max_cfg
    for _, lc in ipairs(config.layers) do if lc.name == "cfg_max" then max_cfg = lc end end
    assert.same({{{"cfg_shared", 0, 0, {}}, {"cfg_shared", 1, 0, {}}}}, max_cfg.inbound_nodes)
    assert.equal("Maximum", max_cfg.class_name)
    local m2 = tf.keras.Model.from_config(config)
    assert.equal("Functional", m2._class_name)
    local names1, names2 = {}, {}
    for i, l in ipairs(m.layers) do names1[i] = l._class_name .. ":" .. l.name end
    for i, l in ipairs(m2.layers) do names2[i] = l._class_name .. ":" .. l.name end
    assert.same(names1, names2)
    assert.equal(#m.variables, #m2.variables)
    assert.equal(2, #rawget(m2:get_layer("cfg_shared"), "_inbound_nodes"))
    m2:set_weights(m:get_weights())
    local xa, xb = tf.random.normal({6, 5}), tf.random.normal({6, 5})
    local y1, y2 = m({xa, xb}), m2({xa, xb})
    same_values(y1[1], y2[1])
    same_values(y1[2], y2[2])
    -- the config of the rebuilt model is the same
    assert.same(config.output_layers, m2:get_config().output_layers)
  end)

  it("round-trips Sequential through get_config / from_config", function()
    local s = tf.keras.Sequential{tf.keras.Input{shape = {3}}, L.Dense{4, activation = "tanh"}, L.Dense{1}}
    local c = s:get_config()
    assert.equal("InputLayer", c.layers[1].class_name)
    assert.equal("Dense", c.layers[2].class_name)
    local s2 = tf.keras.Sequential.from_config(c)
    assert.is_true(s2.built)
    s2:set_weights(s:get_weights())
    local x = tf.random.normal({4, 3})
    same_values(s(x), s2(x))
    local s3 = L.deserialize(L.serialize(s))
    assert.equal("Sequential", s3._class_name)
    assert.tf_error("ValueError", "deserialize: unknown layer class 'Nope'", function()
      L.deserialize{class_name = "Nope", config = {}}
    end)
  end)
end)
