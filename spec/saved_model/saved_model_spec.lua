-- tf.saved_model.save / load: functions, signatures, control flow, strings,
-- TensorArrays, variables (read, fine-tuned with a tape, saved again), Keras
-- models, and a loaded model used by a process that has none of the source.
local support = require("support")
local tf = require("tf")

local function values(t) return t:totable() end

describe("tf.saved_model", function()
  local dir
  before_each(function() dir = support.tmpdir() end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("round-trips a tf.fn with one variable: same outputs, the variable's value and name", function()
    local v = tf.Variable(tf.constant({1.5, -2.0, 3.0}), {name = "w"})
    local f = tf.fn(function(x) return x * v + 1 end)
    local x = tf.constant({2.0, 1.0, -1.0})
    assert.same({4.0, -1.0, -2.0}, values(f(x)))
    tf.saved_model.save(f, dir)
    local m = tf.saved_model.load(dir)
    assert.same({4.0, -1.0, -2.0}, values(m(x)))
    assert.equal(1, #m.variables)
    assert.equal("w:0", m.variables[1].name)
    assert.same({1.5, -2.0, 3.0}, values(m.variables[1]:value()))
    -- the loaded variable is the graph's: assigning it changes the results
    m.variables[1]:assign(tf.constant({1.0, 1.0, 1.0}))
    assert.same({3.0, 2.0, 0.0}, values(m(x)))
    -- and the original is untouched
    assert.same({4.0, -1.0, -2.0}, values(f(x)))
  end)

  it("saves every concrete function of every tf.fn reachable from a table, dispatching by input type", function()
    local obj = {scale = tf.Variable(2.0, {name = "scale"})}
    obj.double = tf.fn(function(x) return x * obj.scale end)
    obj.nested = {add = tf.fn(function(a, b, k) return a + b * k end)}
    obj.double(tf.constant({1.0, 2.0}))
    obj.double(tf.constant(3.0))
    obj.nested.add(tf.constant(1.0), tf.constant(2.0), 3)
    tf.saved_model.save(obj, dir)
    local m = tf.saved_model.load(dir)
    assert.same({2.0, 4.0}, values(m.double(tf.constant({1.0, 2.0}))))
    assert.same(6.0, m.double(tf.constant(3.0)):item())
    assert.same(7.0, m.nested.add(tf.constant(1.0), tf.constant(2.0), 3):item())
    -- a literal argument is part of the type, as for the original
    assert.tf_error("TypeError", "the arguments match none", function()
      m.double(tf.constant({1, 2}, tf.int32))
    end)
    assert.tf_error("TypeError", "", function() m.nested.add(tf.constant(1.0), tf.constant(2.0), 4) end)
    assert.equal(2, #m.double:concrete_functions())
  end)

  it("saves a concrete function given as the object, and signatures given as the third argument", function()
    local f = tf.fn(function(x) return x + 1 end, {input_signature = {tf.TensorSpec({2}, tf.float32, "x")}})
    tf.saved_model.save(f:get_concrete_function(), dir, f)
    local m = tf.saved_model.load(dir)
    assert.same({2.0, 3.0}, values(m(tf.constant({1.0, 2.0}))))
    assert.same({2.0, 3.0}, values(m.signatures.serving_default{x = tf.constant({1.0, 2.0})}.output_0))
  end)

  it("keeps structured results (tables of tensors and Lua values)", function()
    local f = tf.fn(function(x) return {sum = tf.reduce_sum(x), parts = {x * 2, "tag"}}, 7 end)
    f(tf.constant({1.0, 2.0}))
    tf.saved_model.save(f, dir)
    local m = tf.saved_model.load(dir)
    local r, n = m(tf.constant({1.0, 2.0}))
    assert.equal(3.0, r.sum:item())
    assert.same({2.0, 4.0}, values(r.parts[1]))
    assert.equal("tag", r.parts[2])
    assert.equal(7, n)
  end)

  it("keeps ops with many outputs (unstack into 40)", function()
    local f = tf.fn(function(x)
      local parts = tf.unstack(x)
      return parts[1] + parts[40] * 2
    end)
    local x = tf.reshape(tf.range(0, 80, 1, tf.float32), {40, 2})
    f(x)
    tf.saved_model.save(f, dir)
    assert.same({156.0, 159.0}, values(tf.saved_model.load(dir)(x)))
  end)

  it("calls signatures with named inputs and returns named outputs (TensorFlow's convention)", function()
    local w = tf.Variable(tf.constant({{1.0, 0.0}, {0.0, 2.0}}), {name = "kernel"})
    local sig = tf.fn(function(features)
      local logits = tf.matmul(features, w)
      return {logits = logits, probs = tf.nn.softmax(logits)}
    end, {input_signature = {tf.TensorSpec({nil, 2}, tf.float32, "features")}})
    tf.saved_model.save({}, dir, {signatures = {serving_default = sig, other = sig}})
    local m = tf.saved_model.load(dir)
    local s = m.signatures.serving_default
    assert.same({"features"}, s.inputs)
    assert.same({"logits", "probs"}, s.outputs)
    local out = s{features = tf.constant({{1.0, 1.0}})}
    assert.same({{1.0, 2.0}}, values(out.logits))
    local e1, e2 = math.exp(1), math.exp(2)
    assert.tensor_near({{e1 / (e1 + e2), e2 / (e1 + e2)}}, out.probs, {atol = 1e-6})
    assert.truthy(m.signatures.other)
    assert.tf_error("TypeError", "signature 'serving_default' is missing input 'features'", function() s{} end)
    assert.tf_error("TypeError", "unexpected keyword argument 'x'", function()
      s{features = tf.constant({{1.0, 1.0}}), x = 1}
    end)
    assert.tf_error("TypeError", "", function() s{features = tf.constant({{1, 1}}, tf.int32)} end)
  end)

  it("saves control flow (cond, while), TensorArrays and strings", function()
    local v = tf.Variable(tf.constant({1.0, 2.0, 3.0}), {name = "v"})
    local obj = {}
    obj.f = tf.fn(function(x, n)
      local y = x
      if tf.reduce_sum(x) > 0 then y = x * v else y = x - v end
      local i = tf.constant(0)
      while i < n do
        y = y * 2
        i = i + 1
      end
      return y
    end)
    obj.g = tf.fn(function(s) return tf.strings.upper(s) .. "!" end)
    obj.ta = tf.fn(function(x)
      local ta = tf.TensorArray{dtype = tf.float32, size = 3, element_shape = {2}}
      for i = 1, 3 do ta = ta:write(i, x * i) end
      return ta:stack()
    end)
    local x = tf.constant({1.0, 1.0, 1.0})
    obj.f(x, tf.constant(2))
    obj.g(tf.constant({"ab", "c"}))
    obj.ta(tf.constant({1.0, -1.0}))
    tf.saved_model.save(obj, dir)
    local m = tf.saved_model.load(dir)
    assert.same({4.0, 8.0, 12.0}, values(m.f(x, tf.constant(2))))
    assert.same({-2.0, -3.0, -4.0}, values(m.f(-x, tf.constant(0))))
    assert.same({-32.0, -48.0, -64.0}, values(m.f(-x, tf.constant(4))))
    assert.same({"AB!", "C!"}, values(m.g(tf.constant({"ab", "c"}))))
    assert.same({{1.0, -1.0}, {2.0, -2.0}, {3.0, -3.0}}, values(m.ta(tf.constant({1.0, -1.0}))))
  end)

  it("differentiates loaded functions (control flow included) and fine-tunes their variables", function()
    local v = tf.Variable(tf.constant({1.0, 2.0, 3.0}), {name = "v"})
    local f = tf.fn(function(x, n)
      local y = x
      if tf.reduce_sum(x) > 0 then y = x * v * v else y = x - v end
      local i = tf.constant(0)
      while i < n do
        y = y * 2
        i = i + 1
      end
      return tf.reduce_sum(y)
    end)
    local x = tf.constant({1.0, -1.0, 2.0})
    f(x, tf.constant(1))
    tf.saved_model.save(f, dir)
    local m = tf.saved_model.load(dir)
    local w = m.variables[1]
    local tape = tf.GradientTape()
    local loss = tape:record(function() return m(x, tf.constant(1)) end)
    -- loss = 2 * sum(x * v^2): d/dv = 4 x v
    assert.equal(2 * (1 - 4 + 18), loss:item())
    assert.same({4.0, -8.0, 24.0}, values(tape:gradient(loss, {w})[1]))
    -- gradient with respect to the input too
    local t2 = tf.GradientTape()
    t2:watch(x)
    local l2 = t2:record(function() return m(x, tf.constant(1)) end)
    assert.same({2.0, 8.0, 18.0}, values(t2:gradient(l2, {x})[1]))
    -- a few SGD steps: the same as the same steps on the original
    local opt1, opt2 = tf.keras.optimizers.SGD{learning_rate = 0.01}, tf.keras.optimizers.SGD{learning_rate = 0.01}
    for _ = 1, 3 do
      local ta, tb = tf.GradientTape(), tf.GradientTape()
      local la = ta:record(function() return f(x, tf.constant(1)) end)
      opt1:apply_gradients({{ta:gradient(la, {v})[1], v}})
      local lb = tb:record(function() return m(x, tf.constant(1)) end)
      opt2:apply_gradients({{tb:gradient(lb, {w})[1], w}})
    end
    assert.same(values(v:value()), values(w:value()))
    assert.are_not.same({1.0, 2.0, 3.0}, values(w:value()))
    -- and saved again, with the fine-tuned values
    local dir2 = dir .. "/again"
    tf.saved_model.save(m, dir2)
    local m2 = tf.saved_model.load(dir2)
    assert.same(values(w:value()), values(m2.variables[1]:value()))
    assert.equal(m(x, tf.constant(1)):item(), m2(x, tf.constant(1)):item())
  end)

  it("saves a Keras model's call as serving_default, traced for the input spec of its first call", function()
    local K = tf.keras
    tf.random.set_seed(3)
    local model = K.Sequential{
      K.layers.Conv2D{4, {3, 3}, activation = "relu", name = "conv"},
      K.layers.MaxPooling2D{},
      K.layers.Flatten{},
      K.layers.Dense{5, name = "logits"},
    }
    local x = tf.random.normal({3, 8, 8, 1}, {seed = 5})
    local y = model(x)
    tf.saved_model.save(model, dir)
    local m = tf.saved_model.load(dir)
    assert.same({"conv_input"}, m.signatures.serving_default.inputs)
    assert.same({"logits"}, m.signatures.serving_default.outputs)
    assert.same(values(y), values(m(x)))
    -- any batch size
    local x1 = tf.random.normal({1, 8, 8, 1}, {seed = 6})
    assert.same(values(model(x1)), values(m.signatures.serving_default{conv_input = x1}.logits))
    assert.equal(#model.trainable_variables, #m.trainable_variables)
  end)

  it("saves a Keras model's inference mode: Dropout off, BatchNormalization on its moving statistics", function()
    local K = tf.keras
    local model = K.Sequential{
      K.layers.Dense{6, input_shape = {3}},
      K.layers.BatchNormalization{},
      K.layers.Dropout{rate = 0.5},
      K.layers.Dense{2},
    }
    model:compile{optimizer = K.optimizers.SGD{learning_rate = 0.1}, loss = "mse"}
    local x = tf.random.normal({16, 3}, {seed = 11})
    model:fit(x, tf.random.normal({16, 2}, {seed = 12}), {epochs = 2, batch_size = 8, verbose = 0})
    local y = model(x, {training = false})
    tf.saved_model.save(model, dir)
    local m = tf.saved_model.load(dir)
    -- the same at every call (no dropout), equal to the original's inference
    assert.same(values(y), values(m(x)))
    assert.same(values(y), values(m(x)))
    -- the moving statistics are variables of the model, not trainable
    assert.is_true(#m.variables > #m.trainable_variables)
  end)

  it("saves functional and subclassed Keras models", function()
    local K = tf.keras
    local inp = K.Input{shape = {3}, name = "features"}
    local h = K.layers.Dense{4, activation = "relu"}(inp)
    local out = K.layers.Dense{1, name = "score"}(h)
    local fm = K.Model{inputs = inp, outputs = out}
    local x = tf.random.normal({2, 3}, {seed = 9})
    local y = fm(x)
    tf.saved_model.save(fm, dir .. "/functional")
    local m = tf.saved_model.load(dir .. "/functional")
    assert.same({"features"}, m.signatures.serving_default.inputs)
    assert.same({"score"}, m.signatures.serving_default.outputs)
    assert.same(values(y), values(m.signatures.serving_default{features = x}.score))
    local My = K.Model:extend("SavedModelSpecModel")
    function My:init()
      K.Model.init(self)
      self.d = K.layers.Dense{2}
    end
    function My:call(z) return self.d(z) * 2 end
    local mm = My()
    local y2 = mm(x)
    tf.saved_model.save(mm, dir .. "/subclassed")
    assert.same(values(y2), values(tf.saved_model.load(dir .. "/subclassed")(x)))
  end)

  it("loads functions saved from C with no description: flat inputs and outputs", function()
    local f = tf.fn(function(a, b) return a + b, a * b end)
    local cf = f:get_concrete_function(tf.TensorSpec({2}, tf.float32), tf.TensorSpec({2}, tf.float32))
    tf.core.saved_model_save(dir, {{name = "pair", graph = cf._G}, {name = "sig", graph = cf._G, signature = true,
                                                                 inputs = {"u", "v"}, outputs = {"s", "p"}}})
    local m = tf.saved_model.load(dir)
    local s, p = m.pair(tf.constant({1.0, 2.0}), tf.constant({3.0, 4.0}))
    assert.same({4.0, 6.0}, values(s))
    assert.same({3.0, 8.0}, values(p))
    local out = m.signatures.sig{u = tf.constant({1.0, 2.0}), v = tf.constant({3.0, 4.0})}
    assert.same({3.0, 8.0}, values(out.p))
  end)

  it("saves a Keras model held by a table as a function at its path", function()
    local model = tf.keras.Sequential{tf.keras.layers.Dense{2, input_shape = {3}}}
    local x = tf.ones({4, 3})
    local obj = {model = model, post = tf.fn(function(y) return tf.nn.softmax(y) end)}
    obj.post(model(x))
    tf.saved_model.save(obj, dir)
    local m = tf.saved_model.load(dir)
    assert.same(values(model(x)), values(m.model(x)))
    assert.same(values(obj.post(model(x))), values(m.post(m.model(x))))
  end)

  it("refuses a Keras model whose input shape is unknown, naming the ways out", function()
    local model = tf.keras.Sequential{tf.keras.layers.Dense{2}}
    assert.tf_error("ValueError", "the input shape of model", function() tf.saved_model.save(model, dir) end)
  end)

  it("refuses objects with nothing to save, bad signatures and unknown options", function()
    assert.tf_error("ValueError", "nothing to save", function() tf.saved_model.save({}, dir) end)
    local f = tf.fn(function(x) return x end)
    assert.tf_error("ValueError", "signature 'serving_default' is a tf.fn without an input_signature", function()
      tf.saved_model.save({}, dir, {signatures = f})
    end)
    assert.tf_error("TypeError", "unknown option 'sigs'", function() tf.saved_model.save(f, dir, {sigs = 1}) end)
    assert.tf_error("NotFoundError", "does not exist", function() tf.saved_model.load(dir .. "/none") end)
  end)

  it("is loaded and run by a process that has none of the model's Lua source", function()
    local v = tf.Variable(tf.constant({{0.5}, {-1.0}}), {name = "dense/kernel"})
    local sig = tf.fn(function(x) return tf.nn.relu(tf.matmul(x, v)) end,
      {input_signature = {tf.TensorSpec({nil, 2}, tf.float32, "x")}})
    tf.saved_model.save({}, dir, {signatures = sig})
    local script = dir .. "/child.lua"
    local fh = assert(io.open(script, "w"))
    fh:write([[
local tf = require("tf")
local m = tf.saved_model.load(arg[1])
local out = m.signatures.serving_default{x = tf.constant({{2.0, 0.5}, {0.0, 1.0}})}
io.write(table.concat({out.output_0[1][1]:item(), out.output_0[2][1]:item(), m.variables[1].name}, " "))
]])
    fh:close()
    local p = io.popen("lua5.4 '" .. script .. "' '" .. dir .. "' 2>&1")
    local text = p:read("a")
    p:close()
    assert.equal("0.5 0.0 dense/kernel:0", text)
  end)
end)
