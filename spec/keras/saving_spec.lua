-- Whole-model saving (docs/keras_saving.md): model:save("m.keras") and
-- tf.keras.models.load_model for Sequential, functional and subclassed
-- models: the same predictions bit for bit, training that resumes exactly
-- (3 epochs + save/load + 2 == 5 straight), compile state, the registry of
-- custom classes, the file's layout (read by Python's zipfile) and refusals
-- of bad files.
local tf = require("tf")
local L = tf.keras.layers
local saving = tf.keras.saving

local dir = os.tmpname()
os.remove(dir)
os.execute("mkdir -p " .. dir)
local function path(name) return dir .. "/" .. name end

local function same(a, b)
  return tf.reduce_all(tf.equal(a, b)):item()
end

local function same_weights(m1, m2)
  local a, b = m1:get_weights(), m2:get_weights()
  assert.equal(#a, #b)
  for i = 1, #a do assert.is_true(same(a[i], b[i]), "weight " .. i .. " differs") end
end

local function read(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  return s
end
local function write(p, s)
  local f = assert(io.open(p, "wb"))
  f:write(s)
  f:close()
end

local function data(n, din, dout, seed)
  tf.random.set_seed(seed or 3)
  return tf.random.normal({n, din}), tf.random.normal({n, dout})
end

local function seq_model()
  tf.keras.backend.clear_session()      -- layer names dense, dense_1
  tf.random.set_seed(7)
  return tf.keras.Sequential{L.Dense{8, activation = "relu", input_shape = {4}}, L.Dense{3}}
end

describe("model:save / load_model (.keras)", function()
  it("Sequential: a loaded model predicts bit-identically and has the same weights", function()
    local m = seq_model()
    local x = data(10, 4, 3)
    local p = path("seq.keras")
    assert.equal(p, m:save(p))
    local m2 = tf.keras.models.load_model(p)
    assert.equal(tf.keras.Sequential, getmetatable(m2))
    assert.equal(m.name, m2.name)
    assert.is_false(rawequal(m.variables[1], m2.variables[1]))
    same_weights(m, m2)
    assert.is_true(same(m(x), m2(x)))
    assert.is_true(same(m:predict(x, {verbose = 0}), m2:predict(x, {verbose = 0})))
    -- a model never compiled loads uncompiled
    assert.is_nil(rawget(m2, "_compile_state"))
  end)

  it("Sequential built by a call (no input_shape) is rebuilt from the recorded input shape", function()
    tf.random.set_seed(2)
    local m = tf.keras.Sequential{L.Dense{5}, L.BatchNormalization{}, L.Dense{2, activation = "tanh"}}
    local x = data(6, 3, 2)
    m(x, {training = true})         -- moves BatchNormalization's moving statistics
    local p = path("seq_call.keras")
    m:save(p)
    local m2 = tf.keras.saving.load_model(p)
    same_weights(m, m2)
    assert.is_true(same(m(x), m2(x)))
  end)

  it("training resumes exactly: 3 epochs, save, load, 2 more == 5 straight (Adam with a schedule)", function()
    local x, y = data(24, 4, 3, 11)
    local function compiled()
      local m = seq_model()
      local lr = tf.keras.optimizers.schedules.ExponentialDecay{initial_learning_rate = 0.05, decay_steps = 2,
                                                                 decay_rate = 0.5}
      m:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = lr, amsgrad = true}, loss = "mse",
                metrics = {"mae"}}
      return m
    end
    local straight = compiled()
    local hs = straight:fit(x, y, {epochs = 5, batch_size = 8, shuffle = false, verbose = 0})
    local a = compiled()
    local ha = a:fit(x, y, {epochs = 3, batch_size = 8, shuffle = false, verbose = 0})
    local p = path("resume.keras")
    a:save(p)
    local b = tf.keras.models.load_model(p)
    assert.equal(9, b.optimizer.iterations:value():item())
    assert.equal("Adam", b.optimizer._name)
    assert.is_true(b.optimizer.amsgrad)
    assert.equal("ExponentialDecay", getmetatable(b.optimizer.learning_rate).__name:match("[^.]*$"))
    local hb = b:fit(x, y, {epochs = 2, batch_size = 8, shuffle = false, verbose = 0})
    for i = 1, 3 do assert.equal(hs.history.loss[i], ha.history.loss[i]) end
    for i = 1, 2 do
      assert.equal(hs.history.loss[3 + i], hb.history.loss[i])
      assert.equal(hs.history.mae[3 + i], hb.history.mae[i])
    end
    same_weights(straight, b)
    -- and the slots match too
    for i, v in ipairs(straight.trainable_variables) do
      for _, s in ipairs({"m", "v", "vhat"}) do
        assert.is_true(same(straight.optimizer:get_slot(v, s), b.optimizer:get_slot(b.trainable_variables[i], s)))
      end
    end
  end)

  it("training resumes exactly with SGD momentum (nesterov) and a loss object", function()
    local x, y = data(16, 4, 3, 5)
    local function compiled()
      local m = seq_model()
      m:compile{optimizer = tf.keras.optimizers.SGD{learning_rate = 0.1, momentum = 0.9, nesterov = true},
                loss = tf.keras.losses.Huber{delta = 0.5}}
      return m
    end
    local straight = compiled()
    straight:fit(x, y, {epochs = 5, batch_size = 4, shuffle = false, verbose = 0})
    local a = compiled()
    a:fit(x, y, {epochs = 3, batch_size = 4, shuffle = false, verbose = 0})
    a:save(path("sgd.keras"))
    local b = tf.keras.models.load_model(path("sgd.keras"))
    assert.equal(0.5, b.compiled_loss.delta)
    assert.is_true(b.optimizer.nesterov)
    b:fit(x, y, {epochs = 2, batch_size = 4, shuffle = false, verbose = 0})
    same_weights(straight, b)
  end)

  it("compile = false loads weights only; include_optimizer = false saves no optimizer", function()
    local x, y = data(8, 4, 3)
    local m = seq_model()
    m:compile{optimizer = "adam", loss = "mse"}
    m:fit(x, y, {epochs = 1, batch_size = 4, verbose = 0})
    m:save(path("c.keras"))
    local m2 = tf.keras.models.load_model(path("c.keras"), {compile = false})
    assert.is_nil(rawget(m2, "_compile_state"))
    assert.is_true(same(m(x), m2(x)))
    m:save(path("noopt.keras"), {include_optimizer = false})
    local m3 = tf.keras.models.load_model(path("noopt.keras"))
    assert.is_nil(rawget(m3, "_compile_state"))
    assert.is_true(same(m(x), m3(x)))
  end)

  it("functional: several inputs and outputs, per-output losses and metrics; fit works after load", function()
    tf.keras.backend.clear_session()
    tf.random.set_seed(4)
    local img = tf.keras.Input({8}, {name = "img"})
    local meta = tf.keras.Input({2}, {name = "meta"})
    local h = L.Concatenate{}({L.Dense{6, activation = "relu"}(img), meta})
    local score = L.Dense{1, name = "score"}(h)
    local class = L.Dense{3, activation = "softmax", name = "class"}(L.Dropout{0.2}(h))
    local model = tf.keras.Model{inputs = {img = img, meta = meta}, outputs = {score = score, class = class}}
    model:compile{optimizer = tf.keras.optimizers.RMSprop{learning_rate = 0.01, momentum = 0.5, centered = true},
                  loss = {score = "mse", class = "sparse_categorical_crossentropy"},
                  loss_weights = {score = 1, class = 0.5}, metrics = {class = "accuracy"}}
    local x = {img = tf.random.normal({8, 8}), meta = tf.random.normal({8, 2})}
    local y = {score = tf.random.normal({8, 1}), class = tf.constant({1, 2, 3, 1, 2, 3, 1, 2})}
    model:fit(x, y, {epochs = 1, batch_size = 4, shuffle = false, verbose = 0})
    local p = path("functional.keras")
    model:save(p)
    local m2 = tf.keras.models.load_model(p)
    assert.equal(tf.keras.Functional, getmetatable(m2))
    local o1, o2 = model(x), m2(x)
    assert.is_true(same(o1.score, o2.score))
    assert.is_true(same(o1.class, o2.class))
    tf.random.set_seed(21)              -- the same Dropout masks in both
    local h1 = model:fit(x, y, {epochs = 2, batch_size = 4, shuffle = false, verbose = 0})
    tf.random.set_seed(21)
    local h2 = m2:fit(x, y, {epochs = 2, batch_size = 4, shuffle = false, verbose = 0})
    for _, k in ipairs({"loss", "score_loss", "class_loss", "class_accuracy"}) do
      assert.same(h1.history[k], h2.history[k])
    end
    same_weights(model, m2)
  end)

  it("subclassed: a registered class with get_config round-trips; unregistered ones are refused", function()
    local Block = tf.keras.layers.Layer:extend("SaveBlock")
    function Block:init(opts)
      tf.keras.layers.Layer.init(self, {name = opts.name})
      self.units = opts.units
      self.inner = L.Dense{opts.units, activation = "tanh"}
    end
    function Block:build() self.scale = self:add_weight("scale", {1}, {initializer = "ones"}) end
    function Block:call(x) return self.inner(x) * self.scale end
    function Block:get_config()
      local c = tf.keras.layers.Layer.get_config(self)
      c.units = self.units
      return c
    end
    saving.register_keras_serializable{package = "spec"}(Block)

    local Net = tf.keras.Model:extend("SaveNet")
    function Net:init(units, depth)
      tf.keras.layers.Layer.init(self, {})
      self.units, self.depth = units, depth
      self.blocks = {}
      for i = 1, depth do self.blocks[i] = Block{units = units} end
      self.out = L.Dense{2}
      self.bias = tf.Variable(tf.constant({0.5, -0.5}), {name = "bias"})
    end
    function Net:call(x)
      for _, b in ipairs(self.blocks) do x = b(x) end
      return self.out(x) + self.bias
    end
    function Net:get_config() return {units = self.units, depth = self.depth} end
    function Net.from_config(config) return Net(config.units, config.depth) end

    tf.random.set_seed(9)
    local net = Net(4, 2)
    local x, y = data(12, 3, 2)
    net:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.02}, loss = "mse"}
    net:fit(x, y, {epochs = 2, batch_size = 4, shuffle = false, verbose = 0})
    -- not registered yet
    assert.tf_error("ValueError", "the model's class SaveNet is not registered: register it with " ..
      "tf.keras.saving.register_keras_serializable", function() net:save(path("net.keras")) end)
    assert.equal(Net, saving.register_keras_serializable{package = "spec", name = "Net"}(Net))
    assert.equal("spec>Net", saving.get_registered_name(Net))
    assert.equal(Net, saving.get_registered_object("spec>Net"))
    assert.equal(Block, saving.get_registered_object("spec>SaveBlock"))
    net:save(path("net.keras"))
    local n2 = tf.keras.models.load_model(path("net.keras"))
    assert.equal(Net, getmetatable(n2))
    assert.equal(2, #n2.blocks)
    assert.is_true(same(net(x), n2(x)))
    same_weights(net, n2)
    local h1 = net:fit(x, y, {epochs = 2, batch_size = 4, shuffle = false, verbose = 0})
    local h2 = n2:fit(x, y, {epochs = 2, batch_size = 4, shuffle = false, verbose = 0})
    assert.same(h1.history.loss, h2.history.loss)
    -- the weights keys: attribute paths below a subclassed model
    local keys = {}
    local files = require("tf.keras.saving_zip")(tf).read(read(path("net.keras")))
    local r = tf.train.load_checkpoint
    local wp = path("net_weights.safetensors")
    write(wp, files["model.weights.safetensors"])
    for _, kv in ipairs(r(wp):list_variables()) do keys[#keys + 1] = kv[1] end
    assert.same({"layers/blocks/0/layers/inner/vars/0", "layers/blocks/0/layers/inner/vars/1",
                 "layers/blocks/0/vars/0", "layers/blocks/1/layers/inner/vars/0",
                 "layers/blocks/1/layers/inner/vars/1", "layers/blocks/1/vars/0", "layers/out/vars/0",
                 "layers/out/vars/1", "optimizer/vars/0"}, {table.unpack(keys, 1, 9)})
    assert.equal("vars/0", keys[#keys])          -- the model's own variable (bias)
  end)

  it("a registered custom layer inside a Sequential; an unbuilt model is refused", function()
    local Scale = tf.keras.layers.Layer:extend("SaveScale")
    function Scale:init(opts)
      opts = self:_options(opts, {"factor"}, 1)
      self.factor = opts.factor or opts[1] or 1
    end
    function Scale:build(shape) self.w = self:add_weight("w", {shape[#shape]}, {initializer = "ones"}) end
    function Scale:call(x) return x * self.w * self.factor end
    function Scale:get_config()
      local c = tf.keras.layers.Layer.get_config(self)
      c.factor = self.factor
      return c
    end
    saving.register_keras_serializable{package = "spec"}(Scale)
    local m = tf.keras.Sequential{L.Dense{3, input_shape = {2}}, Scale{2.5}}
    local x = tf.ones({2, 2})
    m.layers[2].w:assign(tf.constant({1.0, 2.0, 3.0}))
    m:save(path("custom_in_seq.keras"))
    local m2 = tf.keras.models.load_model(path("custom_in_seq.keras"))
    assert.equal(Scale, getmetatable(m2.layers[2]))
    assert.equal(2.5, m2.layers[2].factor)
    assert.is_true(same(m(x), m2(x)))
    local a = tf.keras.Input({2})
    local dup = tf.keras.Model(a, L.Dense{2, name = "d"}(L.Dense{2, name = "d"}(a)))
    assert.tf_error("ValueError", "save: two layers have the path 'layers/d/' (layers in one model need unique names)",
      function() dup:save(path("dup.keras")) end)
    local u = tf.keras.Sequential{L.Dense{3}}
    assert.tf_error("ValueError", "is not built: call it on data or model:build(shape) first",
      function() u:save(path("unbuilt.keras")) end)
  end)

  it("subclassed models first called on integer ids or on a dict of inputs are rebuilt for them", function()
    local Emb = tf.keras.Model:extend("SaveEmb")
    function Emb:init() tf.keras.layers.Layer.init(self, {}); self.e = L.Embedding{10, 3}; self.d = L.Dense{1} end
    function Emb:call(x) return self.d(tf.reduce_mean(self.e(x), 2)) end
    function Emb:get_config() return {} end
    saving.register_keras_serializable{package = "spec"}(Emb)
    local ids = tf.constant({{1, 2, 3}, {4, 5, 6}})
    local e = Emb()
    e(ids)
    e:save(path("emb.keras"))
    local e2 = tf.keras.models.load_model(path("emb.keras"))
    assert.is_true(same(e(ids), e2(ids)))
    local Dict = tf.keras.Model:extend("SaveDict")
    function Dict:init() tf.keras.layers.Layer.init(self, {}); self.d = L.Dense{1} end
    function Dict:call(x) return self.d(tf.concat({x.a, x.b}, 2)) end
    function Dict:get_config() return {} end
    saving.register_keras_serializable{package = "spec"}(Dict)
    local xin = {a = tf.ones({2, 2}), b = tf.constant({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}})}
    local d = Dict()
    d(xin)
    d:save(path("dict.keras"))
    local d2 = tf.keras.models.load_model(path("dict.keras"))
    assert.is_true(same(d(xin), d2(xin)))
  end)

  it("a config value no JSON holds is a ValueError naming where it is", function()
    local Odd = tf.keras.layers.Layer:extend("SaveOdd")
    function Odd:call(x) return x end
    function Odd:get_config()
      local c = tf.keras.layers.Layer.get_config(self)
      c.handle = io.stdout
      return c
    end
    saving.register_keras_serializable{package = "spec"}(Odd)
    local m = tf.keras.Sequential{L.Dense{2, input_shape = {2}}, Odd{}}
    assert.tf_error("ValueError", "save: config: cannot write a userdata (at config.config.layers[2].config.handle)",
      function() m:save(path("odd.keras")) end)
  end)

  it("a class without get_config made with positional arguments is refused with a clear message", function()
    local P = tf.keras.Model:extend("SavePositional")
    function P:init(n) tf.keras.layers.Layer.init(self, {}); self.d = L.Dense{n} end
    function P:call(x) return self.d(x) end
    saving.register_keras_serializable{package = "spec"}(P)
    local m = P(2)
    m(tf.ones({1, 3}))
    assert.tf_error("ValueError", "class SavePositional has no get_config and was made with positional arguments",
      function() m:save(path("pos.keras")) end)
  end)

  it("registered functions (a Lambda, a custom loss) are saved by name", function()
    local double = saving.register_keras_serializable{package = "spec", name = "double"}(function(x) return x * 2 end)
    local myloss = saving.register_keras_serializable{package = "spec", name = "myloss"}(function(yt, yp)
      return tf.reduce_mean(tf.abs(yt - yp))
    end)
    tf.random.set_seed(1)
    local m = tf.keras.Sequential{L.Dense{3, input_shape = {4}}, L.Lambda{double}}
    m:compile{optimizer = "sgd", loss = myloss}
    local x = data(4, 4, 3)
    m:save(path("lambda.keras"))
    local m2 = tf.keras.models.load_model(path("lambda.keras"))
    assert.equal(double, m2.layers[2].fn or m2.layers[2].function_ or m2.layers[2]:get_config()["function"])
    assert.equal(myloss, m2.compiled_loss)
    assert.is_true(same(m(x), m2(x)))
    -- an unregistered function is refused at save
    local m3 = tf.keras.Sequential{L.Dense{3, input_shape = {4}}, L.Lambda{function(v) return v end}}
    assert.tf_error("ValueError", "which cannot be saved: register it with", function() m3:save(path("l2.keras")) end)
  end)

  it("nested models: a functional model holding a Sequential, inside a Sequential (Nadam state)", function()
    tf.keras.backend.clear_session()
    tf.random.set_seed(3)
    local inner = tf.keras.Sequential{L.Dense{4, activation = "relu"}, L.BatchNormalization{}}
    local a = tf.keras.Input({3})
    local fin = tf.keras.Model(a, L.Dense{2}(inner(a)))
    local function outer_model() return tf.keras.Sequential{tf.keras.Input({3}), fin, L.Dense{1}} end
    local outer = outer_model()
    outer:compile{optimizer = "nadam", loss = "mse"}
    local x, y = data(8, 3, 1)
    outer:fit(x, y, {epochs = 2, batch_size = 4, shuffle = false, verbose = 0})
    outer:save(path("nested.keras"))
    local o2 = tf.keras.models.load_model(path("nested.keras"))
    assert.equal(10, #o2.variables)
    assert.equal(tf.keras.Functional, getmetatable(o2.layers[1]))
    assert.equal(tf.keras.Sequential, getmetatable(o2.layers[1].layers[2]))
    assert.is_true(same(outer(x), o2(x)))
    same_weights(outer, o2)
    assert.is_true(same(outer.optimizer.u_product, o2.optimizer.u_product))
    local h1 = outer:fit(x, y, {epochs = 1, batch_size = 4, shuffle = false, verbose = 0})
    local h2 = o2:fit(x, y, {epochs = 1, batch_size = 4, shuffle = false, verbose = 0})
    assert.same(h1.history.loss, h2.history.loss)
  end)

  it("mixed_float16: the LossScaleOptimizer's inner state and loss scale come back; training resumes exactly",
    function()
    local x, y = data(8, 4, 1)
    local function compiled()
      tf.keras.backend.clear_session()
      tf.random.set_seed(6)
      tf.keras.mixed_precision.set_global_policy("mixed_float16")
      local m = tf.keras.Sequential{L.Dense{4, input_shape = {4}}, L.Dense{1, dtype = "float32"}}
      tf.keras.mixed_precision.set_global_policy("float32")
      m:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.01}, loss = "mse"}
      return m
    end
    local straight = compiled()
    straight:fit(x, y, {epochs = 3, batch_size = 4, shuffle = false, verbose = 0})
    local a = compiled()
    a:fit(x, y, {epochs = 2, batch_size = 4, shuffle = false, verbose = 0})
    a:save(path("mixed.keras"))
    local b = tf.keras.models.load_model(path("mixed.keras"))
    assert.equal(tf.keras.mixed_precision.LossScaleOptimizer.mt, getmetatable(b.optimizer))
    assert.equal(a.optimizer.iterations:value():item(), b.optimizer.iterations:value():item())
    assert.equal(a.optimizer.loss_scale:item(), b.optimizer.loss_scale:item())
    assert.equal(a.optimizer.dynamic_counter:item(), b.optimizer.dynamic_counter:item())
    assert.is_true(same(a(x), b(x)))
    b:fit(x, y, {epochs = 1, batch_size = 4, shuffle = false, verbose = 0})
    same_weights(straight, b)
  end)

  it("the registry: names, lookups, bad registrations; an unregistered loss function is refused at save", function()
    local f = function(x) return x end
    assert.tf_error("ValueError", "a function needs a name", function() saving.register_keras_serializable{}(f) end)
    assert.tf_error("TypeError", "expected a class (made by extend) or a function, got number",
      function() saving.register_keras_serializable{name = "x"}(3) end)
    assert.tf_error("ValueError", "without '>'",
      function() saving.register_keras_serializable{package = "a>b", name = "x"}(f) end)
    assert.equal(f, saving.register_keras_serializable(f, {package = "spec", name = "ident"}))
    assert.equal("spec>ident", saving.get_registered_name(f))
    assert.equal(f, saving.get_custom_objects()["spec>ident"])
    assert.equal(f, tf.keras.utils.get_registered_object("spec>ident"))
    local g = function(x) return x end
    assert.equal(g, saving.get_registered_object("spec>ident", {["spec>ident"] = g}))
    assert.is_nil(saving.get_registered_object("spec>nothing"))
    assert.is_nil(saving.get_registered_name(g))
    assert.equal("Dense", saving.get_registered_name(L.Dense))
    local m = seq_model()
    m:compile{optimizer = "sgd", loss = function(yt, yp) return tf.reduce_mean(yt - yp) end}
    assert.tf_error("ValueError", "the loss is a Lua function, which cannot be saved: register it with " ..
      "tf.keras.saving.register_keras_serializable{package =, name =}(fn), or save without the compile state",
      function() m:save(path("fnloss.keras")) end)
    m:save(path("fnloss.keras"), {include_optimizer = false})
    assert.is_nil(rawget(tf.keras.models.load_model(path("fnloss.keras")), "_compile_state"))
  end)

  it("serialize_keras_object / deserialize_keras_object: layers, models, optimizers, losses, schedules, functions",
    function()
    local d = L.Dense{3, activation = "relu", name = "sko_dense"}
    local c = saving.serialize_keras_object(d)
    assert.same({"Dense", "keras.layers", "Dense", 3}, {c.class_name, c.module, c.registered_name, c.config.units})
    local d2 = saving.deserialize_keras_object(c)
    assert.equal(L.Dense, getmetatable(d2))
    assert.same(d:get_config(), d2:get_config())
    local m = seq_model()
    local m2 = saving.deserialize_keras_object(saving.serialize_keras_object(m))
    assert.equal(tf.keras.Sequential, getmetatable(m2))
    assert.equal(2, #m2.layers)
    local o = saving.deserialize_keras_object(saving.serialize_keras_object(tf.keras.optimizers.Adam{learning_rate = 0.5}))
    assert.equal(tf.keras.optimizers.Adam, getmetatable(o))
    assert.equal(0.5, o.learning_rate)
    assert.equal(2, saving.deserialize_keras_object(saving.serialize_keras_object(tf.keras.losses.Huber{delta = 2})).delta)
    local s = saving.deserialize_keras_object(saving.serialize_keras_object(
      tf.keras.optimizers.schedules.ExponentialDecay{initial_learning_rate = 1, decay_steps = 2, decay_rate = 0.5}))
    assert.equal(0.5, s(2))
    local f = saving.register_keras_serializable{package = "spec", name = "sko_fn"}(function(x) return x end)
    assert.equal(f, saving.deserialize_keras_object(saving.serialize_keras_object(f)))
    assert.equal("mean_squared_error", saving.deserialize_keras_object("mse").name)
    assert.tf_error("ValueError", "deserialize_keras_object: unknown class 'Nope': register it with",
      function() saving.deserialize_keras_object({class_name = "Nope", config = {}}) end)
  end)

  it("the file is a zip archive Python's zipfile reads: metadata.json, config.json, model.weights.safetensors",
    function()
    local m = seq_model()
    m:compile{optimizer = "adam", loss = "mse"}
    local p = path("layout.keras")
    m:save(p)
    local zp = require("tf.keras.saving_zip")(tf)
    local files, names = zp.read(read(p))
    assert.same({"metadata.json", "config.json", "model.weights.safetensors"}, names)
    local json = require("tf.keras.saving_json")(tf)
    local meta = json.decode(files["metadata.json"])
    assert.equal("3.0.0", meta.keras_version)
    assert.equal(1, meta.format_version)
    local config = json.decode(files["config.json"])
    assert.equal("Sequential", config.class_name)
    assert.equal(8, config.config.layers[1].config.units)
    assert.equal("integer", math.type(config.config.layers[1].config.units))
    assert.equal("Adam", config.compile_config.optimizer.class_name)
    assert.equal(0.001, config.compile_config.optimizer.config.learning_rate)
    if not io.open("/usr/bin/python3") then
      pending("/usr/bin/python3 is absent: the check with Python's zipfile is skipped")
      return
    end
    local h = io.popen("env -u LD_PRELOAD /usr/bin/python3 -c \"import zipfile,sys,json,struct; " ..
      "z=zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None; w=z.read('model.weights.safetensors'); " ..
      "n=struct.unpack('<Q',w[:8])[0]; h=json.loads(w[8:8+n]); " ..
      "print(' '.join(sorted(k for k in h if k!='__metadata__'))); print(json.loads(z.read('config.json'))['class_name'])\" " ..
      p)
    local out = h:read("a")
    h:close()
    assert.equal("layers/dense/vars/0 layers/dense/vars/1 layers/dense_1/vars/0 layers/dense_1/vars/1 " ..
      "optimizer/vars/0\nSequential\n", out)
  end)

  it("reads a .keras archive whose members are deflated (as Python's zipfile writes with ZIP_DEFLATED)", function()
    if not io.open("/usr/bin/python3") then
      pending("/usr/bin/python3 is absent: the deflated archive is not made")
      return
    end
    local m = seq_model()
    local p = path("plain.keras")
    m:save(p)
    local q = path("deflated.keras")
    os.execute("env -u LD_PRELOAD /usr/bin/python3 -c \"import zipfile,sys; a=zipfile.ZipFile(sys.argv[1]); " ..
      "b=zipfile.ZipFile(sys.argv[2],'w',zipfile.ZIP_DEFLATED); [b.writestr(i.filename, a.read(i.filename)) " ..
      "for i in a.infolist()]; b.close()\" " .. p .. " " .. q)
    assert.is_true(#read(q) < #read(p))
    local m2 = tf.keras.models.load_model(q)
    local x = data(3, 4, 3)
    assert.is_true(same(m(x), m2(x)))
  end)
end)

describe("model:save / load_model errors", function()
  teardown(function() os.execute("rm -rf '" .. dir .. "'") end)

  local m = seq_model()
  m:compile{optimizer = "adam", loss = "mse"}
  tf.keras.backend.clear_session()      -- names of the layers load_model makes: from the file
  local good = path("good.keras")
  m:save(good)
  local bytes = read(good)

  it("a path without .keras names tf.saved_model.save (or .h5: no HDF5)", function()
    if not tf.saved_model then
      assert.tf_error("ValueError", "has no .keras extension", function() m:save(path("somedir")) end)
      assert.tf_error("ValueError", "tf.saved_model.save(model, dir)", function() m:save(path("somedir")) end)
    end
    assert.tf_error("ValueError", "luatf has no HDF5", function() m:save(path("m.h5")) end)
    assert.tf_error("ValueError", "luatf has no HDF5", function() tf.keras.models.load_model(path("m.h5")) end)
    if not tf.saved_model then
      assert.tf_error("ValueError", "is not a .keras file: luatf loads whole models from .keras files",
        function() tf.keras.models.load_model(path("somedir")) end)
    end
  end)

  it("a missing file, a file that is not a zip, an unknown option", function()
    assert.tf_error("NotFoundError", "cannot open", function() tf.keras.models.load_model(path("nope.keras")) end)
    write(path("text.keras"), "hello, this is not a zip archive at all")
    assert.tf_error("ValueError", "not a valid .keras file (zip: the file is not a zip archive",
      function() tf.keras.models.load_model(path("text.keras")) end)
    assert.tf_error("TypeError", "unknown option 'bogus'", function() tf.keras.models.load_model(good, {bogus = 1}) end)
    assert.tf_error("TypeError", "unknown option 'bogus'", function() m:save(path("x.keras"), {bogus = 1}) end)
    assert.tf_error("AlreadyExistsError", "exists and overwrite is false",
      function() m:save(good, {overwrite = false}) end)
  end)

  it("a truncated file is refused at every length, never a crash", function()
    local p = path("trunc.keras")
    local step = math.max(1, #bytes // 97)
    for n = 0, #bytes - 1, step do
      write(p, bytes:sub(1, n))
      local ok, err = pcall(tf.keras.models.load_model, p)
      assert.is_false(ok, "truncated at " .. n)
      assert.is_true(tf.errors.is_error(err), tostring(err))
    end
    write(p, bytes:sub(1, #bytes - 1))
    assert.tf_error("ValueError", "no end of central directory record", function() tf.keras.models.load_model(p) end)
  end)

  it("a flipped bit anywhere is refused or leaves the same model, never a crash", function()
    local p = path("flip.keras")
    local x = data(2, 4, 3)
    local want = m(x)
    local step = math.max(1, #bytes // 211)
    local refused = 0
    for i = 1, #bytes, step do
      local b = bytes:byte(i) ~ (1 << (i % 8))
      write(p, bytes:sub(1, i - 1) .. string.char(b) .. bytes:sub(i + 1))
      local ok, res = pcall(tf.keras.models.load_model, p)
      if ok then
        -- a bit in a field nothing reads (a timestamp, the version-made-by)
        assert.is_true(same(want, res(x)), "flip at byte " .. i .. " changed the model")
      else
        assert.is_true(tf.errors.is_error(res), tostring(res))
        refused = refused + 1
      end
    end
    assert.is_true(refused > 0)
    -- a flipped bit in the weights' data fails the zip member's CRC-32
    local files = require("tf.keras.saving_zip")(tf).read(bytes)
    local w = files["model.weights.safetensors"]
    local at = bytes:find(w, 1, true) + #w - 3
    write(p, bytes:sub(1, at - 1) .. string.char(bytes:byte(at) ~ 1) .. bytes:sub(at + 1))
    assert.tf_error("ValueError", "member 'model.weights.safetensors' fails its CRC-32 check",
      function() tf.keras.models.load_model(p) end)
  end)

  local zp = require("tf.keras.saving_zip")(tf)
  local json = require("tf.keras.saving_json")(tf)
  local function rewrite(name, edit)
    local files, names = zp.read(bytes)
    local members = {}
    for _, n in ipairs(names) do members[#members + 1] = {n, n == name and edit(files[n]) or files[n]} end
    local p = path("edited.keras")
    write(p, zp.write(members))
    return p
  end

  it("a newer format version is refused naming both versions", function()
    local p = rewrite("metadata.json", function(s)
      local t = json.decode(s)
      t.format_version = 7
      t.luatf_version = "9.9.9"
      return json.encode(t)
    end)
    assert.tf_error("FailedPreconditionError", "has format version 7 (luatf 9.9.9); this luatf (" ..
      tostring(tf.__version__) .. ") reads format version 1", function() tf.keras.models.load_model(p) end)
    local q = rewrite("metadata.json", function(s)
      local t = json.decode(s)
      t.format = nil
      return json.encode(t)
    end)
    assert.tf_error("ValueError", "not by luatf", function() tf.keras.models.load_model(q) end)
  end)

  it("an unknown class is named, with how to register it", function()
    local p = rewrite("config.json", function(s)
      local t = json.decode(s)
      t.config.layers[2].class_name = "GhostLayer"
      return json.encode(t)
    end)
    assert.tf_error("ValueError", "unknown class 'GhostLayer': register it with " ..
      "tf.keras.saving.register_keras_serializable{package =, name =}(GhostLayer)",
      function() tf.keras.models.load_model(p) end)
    local q = rewrite("config.json", function(s)
      local t = json.decode(s)
      t.class_name, t.registered_name = "Gone", "pkg>Gone"
      return json.encode(t)
    end)
    assert.tf_error("ValueError", "unknown class 'pkg>Gone'", function() tf.keras.models.load_model(q) end)
  end)

  it("a hostile config (values of the wrong type) is a luatf error, not a Lua runtime error", function()
    local p = rewrite("config.json", function(s)
      local t = json.decode(s)
      t.compile_config.metrics = 5
      return json.encode(t)
    end)
    assert.tf_error("ValueError", "config.json's compile_config cannot be compiled (",
      function() tf.keras.models.load_model(p) end)
    local q = rewrite("config.json", function(s)
      local t = json.decode(s)
      t.config.layers = 7
      return json.encode(t)
    end)
    local ok, err = pcall(tf.keras.models.load_model, q)
    assert.is_false(ok)
    assert.is_true(tf.errors.is_error(err), tostring(err))
  end)

  it("a .keras file written by Keras (HDF5 weights) is refused with the reason", function()
    write(path("fromkeras.keras"), zp.write({
      {"metadata.json", '{"keras_version": "3.3.3", "date_saved": "2024-05-01@10:00:00"}'},
      {"config.json", '{"module": "keras", "class_name": "Sequential", "config": {"layers": []}}'},
      {"model.weights.h5", "\137HDF\r\n\26\n"}}))
    assert.tf_error("ValueError", "its weights are in HDF5 (model.weights.h5: a file written by Keras), which luatf " ..
      "cannot read", function() tf.keras.models.load_model(path("fromkeras.keras")) end)
  end)

  it("bad JSON, a missing member, weights that do not fit the config", function()
    local p = rewrite("config.json", function(s) return s:sub(1, 40) end)
    assert.tf_error("ValueError", "config.json: bad JSON at byte", function() tf.keras.models.load_model(p) end)
    local q = rewrite("config.json", function(s)
      local t = json.decode(s)
      t.config.layers[2].config.units = 4
      return json.encode(t)
    end)
    assert.tf_error("ValueError", "'layers/dense_1/vars/0': the file has float32 (8, 3), the variable is float32 (8, 4)",
      function() tf.keras.models.load_model(q) end)
    local files, names = zp.read(bytes)
    local members = {}
    for _, n in ipairs(names) do
      if n ~= "config.json" then members[#members + 1] = {n, files[n]} end
    end
    write(path("noconfig.keras"), zp.write(members))
    assert.tf_error("ValueError", "the archive has no config.json",
      function() tf.keras.models.load_model(path("noconfig.keras")) end)
  end)
end)
