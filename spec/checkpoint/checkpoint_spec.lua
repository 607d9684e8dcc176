-- tf.train.Checkpoint: object graph keys, save/write/restore, save counter,
-- status and report, all-or-nothing restores, deferred restores, strings.
local tmpdir = require("support").tmpdir
local tf = require("tf")

local function keys_of(path)
  local out = {}
  for _, v in ipairs(tf.train.load_checkpoint(path):list_variables()) do out[#out + 1] = v[1] end
  return out
end

-- a Keras-like layer double: variables created lazily in build, announced
-- through tf.train._restore_on_create as the contract says
local function Dense(units)
  local layer = {units = units, built = false}
  function layer:build(n_in)
    self.kernel = tf.Variable(tf.zeros({n_in, self.units}), {name = "kernel"})
    tf.train._restore_on_create(self, "kernel", self.kernel)
    self.bias = tf.Variable(tf.zeros({self.units}), {name = "bias"})
    tf.train._restore_on_create(self, "bias", self.bias)
    self.built = true
  end
  function layer:_checkpoint_children()
    local out = {}
    if self.kernel then out[#out + 1] = {"kernel", self.kernel} end
    if self.bias then out[#out + 1] = {"bias", self.bias} end
    return out
  end
  return layer
end

-- a Sequential double named as TensorFlow's: layer_with_weights-K for the
-- layers that have weights, then layer-K for every layer
local function Sequential(layers)
  local m = {layers = layers}
  function m:_checkpoint_children()
    local out, k = {}, 0
    for i, l in ipairs(self.layers) do
      if l.kernel then
        out[#out + 1] = {"layer_with_weights-" .. k, l}
        k = k + 1
      end
      out[#out + 1] = {"layer-" .. (i - 1), l}
    end
    return out
  end
  return m
end

-- an optimizer double: iterations, lazily created slots
local function Momentum()
  local opt = {iterations = tf.Variable(tf.constant(0, tf.int64), {name = "iter", trainable = false}), _slots = {}, _order = {}}
  function opt:get_slot(v, name)
    local s = self._slots[v]
    if not s then
      s = tf.Variable(tf.zeros(v.shape), {name = "m", trainable = false})
      self._slots[v] = s
      self._order[#self._order + 1] = v
      tf.train._restore_on_create(self, {for_var = v, slot = "m"}, s)
    end
    return s
  end
  function opt:_checkpoint_children() return {{"iter", self.iterations}} end
  function opt:_checkpoint_slots()
    local out = {}
    for _, v in ipairs(self._order) do out[#out + 1] = {v, "m", self._slots[v]} end
    return out
  end
  return opt
end

describe("tf.train.Checkpoint", function()
  local dir
  before_each(function() dir = tmpdir() end)
  after_each(function() os.execute("rm -rf '" .. dir .. "'") end)

  it("runs the guide's example: save after assign(2), assign(11), restore latest -> 2", function()
    local x = tf.Variable(10.0)
    local checkpoint = tf.train.Checkpoint{x = x}
    x:assign(2)
    local path = checkpoint:save(dir .. "/")
    assert.equal(dir .. "/-1", path)
    x:assign(11)
    checkpoint:restore(tf.train.latest_checkpoint(dir)):assert_consumed()
    assert.equal(2, x:item())
  end)

  it("keys variables by their path, in a stable order whatever the table order", function()
    local x = tf.Variable(1.0)
    local nested = {b = tf.Variable(2.0), a = {tf.Variable(3.0), tf.Variable(4.0)}, [1] = tf.Variable(5.0)}
    local c = tf.train.Checkpoint{x = x, nested = nested, step = tf.Variable(tf.constant(7, tf.int64))}
    c:write(dir .. "/w")
    assert.same({"nested/1/.ATTRIBUTES/VARIABLE_VALUE", "nested/a/1/.ATTRIBUTES/VARIABLE_VALUE",
                 "nested/a/2/.ATTRIBUTES/VARIABLE_VALUE", "nested/b/.ATTRIBUTES/VARIABLE_VALUE",
                 "save_counter/.ATTRIBUTES/VARIABLE_VALUE", "step/.ATTRIBUTES/VARIABLE_VALUE",
                 "x/.ATTRIBUTES/VARIABLE_VALUE"}, keys_of(dir .. "/w"))
    local r = tf.train.load_checkpoint(dir .. "/w")
    assert.equal(4.0, r:get_tensor("nested/a/2/.ATTRIBUTES/VARIABLE_VALUE"):item())
    assert.equal(5.0, r:get_tensor("nested/1/.ATTRIBUTES/VARIABLE_VALUE"):item())
    assert.equal(tf.int64, r:get_tensor("step/.ATTRIBUTES/VARIABLE_VALUE").dtype)
    -- names are escaped as TensorFlow does: "." -> "..", "/" -> ".S"
    tf.train.Checkpoint{["a/b"] = tf.Variable(1.0), ["v1.2"] = {[".ATTRIBUTES"] = tf.Variable(2.0)}}:write(dir .. "/esc")
    assert.same({"a.Sb/.ATTRIBUTES/VARIABLE_VALUE", "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
                 "v1..2/..ATTRIBUTES/.ATTRIBUTES/VARIABLE_VALUE"}, keys_of(dir .. "/esc"))
    -- the same variable reachable twice is saved once, under its first (shortest) path
    local v = tf.Variable(9.0)
    tf.train.Checkpoint{a = {deep = {v = v}}, b = v}:write(dir .. "/once")
    assert.same({"b/.ATTRIBUTES/VARIABLE_VALUE", "save_counter/.ATTRIBUTES/VARIABLE_VALUE"}, keys_of(dir .. "/once"))
  end)

  it("keys Keras-like models and optimizer slots as TensorFlow does", function()
    local model = Sequential{Dense(3), Dense(2)}
    model.layers[1]:build(4)
    model.layers[2]:build(3)
    local opt = Momentum()
    opt:get_slot(model.layers[1].kernel, "m"):assign(tf.fill({4, 3}, 0.5))
    tf.train.Checkpoint{model = model, optimizer = opt}:write(dir .. "/m")
    assert.same({
      "model/layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE",
      "model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE",
      "model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
      "model/layer_with_weights-1/bias/.ATTRIBUTES/VARIABLE_VALUE",
      "model/layer_with_weights-1/kernel/.ATTRIBUTES/VARIABLE_VALUE",
      "optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE",
      "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
    }, keys_of(dir .. "/m"))
  end)

  it("numbers saves with a counter that is itself saved; write does not advance it", function()
    local x = tf.Variable(1.0)
    local c = tf.train.Checkpoint{x = x}
    assert.equal(dir .. "/p-1", c:save(dir .. "/p"))
    assert.equal(dir .. "/p-2", c:save(dir .. "/p"))
    c:write(dir .. "/plain")
    assert.equal(2, c.save_counter:item())
    local c2 = tf.train.Checkpoint{x = tf.Variable(0.0)}
    c2:restore(dir .. "/p-2")
    assert.equal(2, c2.save_counter:item())
    assert.equal(dir .. "/p-3", c2:save(dir .. "/p"))
    c2:restore(dir .. "/p-1")
    assert.equal(dir .. "/p-2", c2:save(dir .. "/p"))
    assert.equal(dir .. "/p-2", tf.train.latest_checkpoint(dir))
    -- read is restore; write + read round-trips without the counter moving
    x:assign(5)
    c:write(dir .. "/w5")
    x:assign(6)
    c:read(dir .. "/w5"):assert_consumed()
    assert.equal(5, x:item())
  end)

  it("round-trips every dtype exactly, strings with NUL and non-UTF-8 bytes included", function()
    local vals = {
      f32 = tf.Variable(tf.constant({{1.5, -2.25}, {1e-30, 3.4e38}}, tf.float32)),
      f64 = tf.Variable(tf.constant({0.1, -1e300, 5e-324}, tf.float64)),
      i32 = tf.Variable(tf.constant({-2147483648, 2147483647}, tf.int32)),
      i64 = tf.Variable(tf.constant({math.mininteger, math.maxinteger, 0}, tf.int64)),
      u8 = tf.Variable(tf.constant({0, 255, 7}, tf.uint8)),
      b = tf.Variable(tf.constant({true, false, true})),
      s = tf.Variable(tf.constant({{"a\0b", ""}, {"\255\254", "plain"}})),
      scalar = tf.Variable(3.0),
    }
    local c = tf.train.Checkpoint(vals)
    c:write(dir .. "/all")
    local before = {}
    for k, v in pairs(vals) do before[k] = v:numpy() end
    for k, v in pairs(vals) do
      if k == "s" then v:assign(tf.constant({{"x", "y"}, {"z", "w"}}))
      elseif k == "b" then v:assign(tf.constant({false, false, false}))
      else v:assign(tf.zeros_like(v:value())) end
    end
    c:restore(dir .. "/all"):assert_consumed()
    for k, v in pairs(vals) do assert.same(before[k], v:numpy(), k) end
    assert.equal(3, #vals.s:numpy()[1][1])
    assert.equal(tf.float64, vals.f64.dtype)
  end)

  it("returns a status whose report lists matched, missing and unexpected keys", function()
    local a, b = tf.Variable(1.0), tf.Variable(2.0)
    tf.train.Checkpoint{a = a, b = b}:write(dir .. "/ab")
    local c = tf.Variable(3.0)
    local a2 = tf.Variable(0.0)
    local st = tf.train.Checkpoint{a = a2, c = c}:restore(dir .. "/ab")
    assert.equal(1, a2:item())
    local r = st:report_table()
    assert.same({"a/.ATTRIBUTES/VARIABLE_VALUE", "save_counter/.ATTRIBUTES/VARIABLE_VALUE"}, r.matched)
    assert.same({"c/.ATTRIBUTES/VARIABLE_VALUE"}, r.missing)
    assert.same({"b/.ATTRIBUTES/VARIABLE_VALUE"}, r.unexpected)
    assert.same({}, r.shape_mismatched)
    local text = tostring(st)
    assert.truthy(text:find("missing%s+c/.ATTRIBUTES/VARIABLE_VALUE"))
    assert.truthy(text:find("unexpected%s+b/.ATTRIBUTES/VARIABLE_VALUE"))
    assert.tf_error("AssertionError", "c/.ATTRIBUTES/VARIABLE_VALUE", function() st:assert_consumed() end)
    assert.tf_error("AssertionError", "objects without a value", function() st:assert_existing_objects_matched() end)
    assert.equal(st, st:expect_partial())
    -- only unexpected values: existing objects matched, but not consumed
    local st2 = tf.train.Checkpoint{a = tf.Variable(0.0)}:restore(dir .. "/ab")
    assert.equal(st2, st2:assert_existing_objects_matched())
    assert.tf_error("AssertionError", "b/.ATTRIBUTES/VARIABLE_VALUE", function() st2:assert_consumed() end)
  end)

  it("refuses a shape or dtype mismatch naming the key and both shapes, changing no variable", function()
    tf.train.Checkpoint{a = tf.Variable(tf.ones({2, 3})), z = tf.Variable(7.0)}:write(dir .. "/s")
    local a, z = tf.Variable(tf.zeros({3, 2})), tf.Variable(0.0)
    local c = tf.train.Checkpoint{a = a, z = z}
    assert.tf_error("InvalidArgumentError",
      "'a/.ATTRIBUTES/VARIABLE_VALUE': the checkpoint has float32 (2, 3), the variable is float32 (3, 2)",
      function() c:restore(dir .. "/s") end)
    assert.equal(0, z:item())           -- nothing restored, not even the variable that fits
    assert.equal(0, c.save_counter:item())
    assert.same({{0, 0}, {0, 0}, {0, 0}}, a:numpy())
    local d = tf.Variable(tf.zeros({2, 3}, tf.float64))
    assert.tf_error("InvalidArgumentError", "the checkpoint has float32 (2, 3), the variable is float64 (2, 3)",
      function() tf.train.Checkpoint{a = d, z = z}:restore(dir .. "/s") end)
    assert.equal(0, z:item())
  end)

  it("restores into a variable whose value is held elsewhere without changing that value", function()
    local v = tf.Variable(tf.constant({1.0, 2.0}))
    local c = tf.train.Checkpoint{v = v}
    c:write(dir .. "/v")
    v:assign(tf.constant({5.0, 6.0}))
    local held = v:value()
    c:restore(dir .. "/v")
    assert.same({5, 6}, held:numpy())
    assert.same({1, 2}, v:numpy())
  end)

  it("defers values for layers not built and slots not created until they are", function()
    local model = Sequential{Dense(3)}
    model.layers[1]:build(2)
    model.layers[1].kernel:assign(tf.constant({{1, 2, 3}, {4, 5, 6}}, tf.float32))
    model.layers[1].bias:assign(tf.constant({0.5, 0.25, 0.125}, tf.float32))
    local opt = Momentum()
    opt.iterations:assign(tf.constant(12, tf.int64))
    opt:get_slot(model.layers[1].kernel, "m"):assign(tf.fill({2, 3}, 0.75))
    tf.train.Checkpoint{model = model, optimizer = opt}:save(dir .. "/ckpt")

    -- rebuilt from scratch: the model's layer and the optimizer's slots do not exist yet
    local layer = Dense(3)
    local model2 = {_layer = layer}
    function model2:_checkpoint_children()
      return layer.built and {{"layer_with_weights-0", layer}} or {}
    end
    local opt2 = Momentum()
    local st = tf.train.Checkpoint{model = model2, optimizer = opt2}:restore(tf.train.latest_checkpoint(dir))
    assert.equal(12, opt2.iterations:item())
    assert.equal(3, #st:report_table().unexpected)   -- kernel, bias, slot: pending
    st:assert_existing_objects_matched()
    assert.tf_error("AssertionError", "still pending", function() st:assert_consumed() end)
    -- the layer is not reachable from model2 until built: register its path
    -- the way Keras does (the model holds it as layer_with_weights-0)
    st = tf.train.Checkpoint{model = {["layer_with_weights-0"] = layer}, optimizer = opt2}:restore(tf.train.latest_checkpoint(dir))
    layer:build(2)
    assert.same({{1, 2, 3}, {4, 5, 6}}, layer.kernel:numpy())
    assert.same({0.5, 0.25, 0.125}, layer.bias:numpy())
    local m = opt2:get_slot(layer.kernel, "m")
    assert.same({{0.75, 0.75, 0.75}, {0.75, 0.75, 0.75}}, m:numpy())
    st:assert_consumed()
  end)

  it("defers values for layers that a model lists only once they are built", function()
    local model = Sequential{Dense(2), Dense(1)}
    model.layers[1]:build(3)
    model.layers[2]:build(2)
    model.layers[1].kernel:assign(tf.constant({{1, 2}, {3, 4}, {5, 6}}, tf.float32))
    model.layers[2].kernel:assign(tf.constant({{7}, {8}}, tf.float32))
    tf.train.Checkpoint{model = model}:write(dir .. "/seq")
    -- a fresh model: no layer built, so the model has no children at restore time
    local fresh = Sequential{Dense(2), Dense(1)}
    local st = tf.train.Checkpoint{model = fresh}:restore(dir .. "/seq")
    assert.equal(4, #st:report_table().pending)
    fresh.layers[1]:build(3)
    fresh.layers[2]:build(2)
    assert.same({{7}, {8}}, fresh.layers[2].kernel:numpy())
    st:assert_consumed()
    -- built in the other order, or partly built when restored: each layer
    -- still gets its own values (the file records "layer-1" as an alias of
    -- "layer_with_weights-1")
    local other = Sequential{Dense(2), Dense(1)}
    st = tf.train.Checkpoint{model = other}:restore(dir .. "/seq")
    other.layers[2]:build(2)
    other.layers[1]:build(3)
    assert.same({{7}, {8}}, other.layers[2].kernel:numpy())
    assert.same({{1, 2}, {3, 4}, {5, 6}}, other.layers[1].kernel:numpy())
    st:assert_consumed()
    local partial = Sequential{Dense(2), Dense(1)}
    partial.layers[2]:build(2)   -- now "layer_with_weights-0" names the second layer
    st = tf.train.Checkpoint{model = partial}:restore(dir .. "/seq")
    assert.same({{7}, {8}}, partial.layers[2].kernel:numpy())
    partial.layers[1]:build(3)
    assert.same({{1, 2}, {3, 4}, {5, 6}}, partial.layers[1].kernel:numpy())
    st:assert_consumed()
  end)

  it("creates the directory of a save's prefix", function()
    local c = tf.train.Checkpoint{x = tf.Variable(1.0)}
    assert.equal(dir .. "/a/b/ckpt-1", c:save(dir .. "/a/b/ckpt"))
    assert.equal(dir .. "/a/b/ckpt-1", tf.train.latest_checkpoint(dir .. "/a/b"))
    local f = io.open(dir .. "/file", "w"); f:write("x"); f:close()
    assert.tf_error("FailedPreconditionError", "is not a directory", function() c:save(dir .. "/file/ckpt") end)
    assert.equal(1, c.save_counter:item())
  end)

  it("refuses a deferred value whose shape does not fit when the variable is created", function()
    local l = Dense(3)
    l:build(2)
    tf.train.Checkpoint{l = l}:write(dir .. "/l")
    local l2 = Dense(3)
    tf.train.Checkpoint{l = l2}:restore(dir .. "/l")
    assert.tf_error("InvalidArgumentError", "kernel/.ATTRIBUTES/VARIABLE_VALUE': the checkpoint has float32 (2, 3), the variable is float32 (5, 3)",
      function() l2:build(5) end)
  end)

  it("escapes names with quotes, backslashes and control characters in the header", function()
    local v = tf.Variable(4.0, {name = 'odd "name"\n'})
    local key = 'we"ird\\key\t\1'
    tf.train.Checkpoint{[key] = v}:write(dir .. "/esc")
    local r = tf.train.load_checkpoint(dir .. "/esc")
    assert.equal(4, r:get_tensor(key .. "/.ATTRIBUTES/VARIABLE_VALUE"):item())
    v:assign(0)
    tf.train.Checkpoint{[key] = v}:restore(dir .. "/esc"):assert_consumed()
    assert.equal(4, v:item())
    assert.truthy(r:metadata()["luatf.variables"]:find('odd \\"name\\"\\n', 1, true))
  end)

  it("checks its arguments", function()
    assert.tf_error("TypeError", "'n' is a number", function() tf.train.Checkpoint{n = 3} end)
    assert.tf_error("ValueError", "save_counter is reserved", function() tf.train.Checkpoint{save_counter = tf.Variable(1)} end)
    assert.tf_error("TypeError", "must be a string", function() tf.train.Checkpoint{}:save(3) end)
    -- restore(nil) (no checkpoint yet) does nothing
    local st = tf.train.Checkpoint{x = tf.Variable(1.0)}:restore(tf.train.latest_checkpoint(dir))
    assert.same({}, st:report_table().matched)
  end)

  it("gives Keras models save_weights / load_weights keyed from the model", function()
    local model = Sequential{Dense(2)}
    model.layers[1]:build(2)
    model.layers[1].kernel:assign(tf.constant({{1, 2}, {3, 4}}, tf.float32))
    tf.core.internal.checkpoint.save_weights(model, dir .. "/weights")
    assert.same({"layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE",
                 "layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"}, keys_of(dir .. "/weights"))
    model.layers[1].kernel:assign(tf.zeros({2, 2}))
    tf.core.internal.checkpoint.load_weights(model, dir .. "/weights"):assert_consumed()
    assert.same({{1, 2}, {3, 4}}, model.layers[1].kernel:numpy())
    -- tf.keras.Model's methods are these
    local km = tf.keras.Sequential{tf.keras.layers.Dense{2, input_shape = {2}}}
    km.layers[1].kernel:assign(tf.constant({{5, 6}, {7, 8}}, tf.float32))
    km:save_weights(dir .. "/kweights")
    assert.same(keys_of(dir .. "/weights"), keys_of(dir .. "/kweights"))
    km.layers[1].kernel:assign(tf.zeros({2, 2}))
    km:load_weights(dir .. "/kweights"):assert_consumed()
    assert.same({{5, 6}, {7, 8}}, km.layers[1].kernel:numpy())
  end)
end)
