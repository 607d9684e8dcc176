-- tf.keras.mixed_precision: policies, layers computing in float16/bfloat16
-- with float32 variables (autocast reads), LossScaleOptimizer's dynamic
-- loss scaling, and mixed-precision models that train in fit.
local tf = require("tf")
local L = tf.keras.layers
local mp = tf.keras.mixed_precision

local function err_of(f)
  local ok, e = pcall(f)
  assert.is_false(ok, "expected an error")
  return e
end

describe("tf.keras.mixed_precision", function()
  after_each(function() mp.set_global_policy("float32") end)

  describe("Policy", function()
    it("names compute and variable dtypes", function()
      local p = mp.Policy("mixed_float16")
      assert.equal("mixed_float16", p.name)
      assert.equal("float16", p.compute_dtype)
      assert.equal("float32", p.variable_dtype)
      assert.equal('<Policy "mixed_float16">', tostring(p))
      local b = mp.Policy("mixed_bfloat16")
      assert.same({"bfloat16", "float32"}, {b.compute_dtype, b.variable_dtype})
      local f = mp.Policy("float64")
      assert.same({"float64", "float64"}, {f.compute_dtype, f.variable_dtype})
      assert.equal("float16", mp.Policy(tf.float16).name)
      assert.same({name = "mixed_float16"}, p:get_config())
      assert.equal(p, mp.Policy.from_config(p:get_config()))
    end)

    it("sets and reads the global policy", function()
      assert.equal("float32", mp.global_policy().name)
      mp.set_global_policy("mixed_bfloat16")
      assert.equal("mixed_bfloat16", mp.global_policy().name)
      mp.set_global_policy(mp.Policy("mixed_float16"))
      assert.equal("mixed_float16", mp.global_policy().name)
      mp.set_global_policy(nil)
      assert.equal("float32", mp.global_policy().name)
    end)

    it("raises on unknown and non-floating policies", function()
      local e = err_of(function() return mp.Policy("mixed_float32") end)
      assert.equal("ValueError", e.kind)
      assert.equal("Cannot convert value mixed_float32 to a mixed precision Policy. Valid policies include " ..
        "'mixed_float16', 'mixed_bfloat16', and the name of any dtype such as 'float32'.", e.message)
      e = err_of(function() return mp.set_global_policy("int32") end)
      assert.equal("ValueError", e.kind)
      assert.equal("set_global_policy can only be used to set the global policy to floating-point policies, such " ..
        "as 'float32' and 'mixed_float16', but got policy: int32", e.message)
      assert.equal("float32", mp.global_policy().name)
    end)
  end)

  describe("layers under mixed_float16", function()
    it("compute in float16 and keep float32 variables; dtype = 'float32' overrides", function()
      mp.set_global_policy("mixed_float16")
      local d = L.Dense{3, kernel_initializer = "ones", bias_initializer = "ones"}
      local x = tf.constant({{0.5, 1.0}, {2.0, -1.0}})
      local y = d(x)
      assert.equal(tf.float16, y.dtype)
      assert.equal(tf.float32, d.kernel.dtype)
      assert.equal(tf.float32, d.kernel:value().dtype)     -- outside a call: the float32 value
      assert.equal(tf.float16, d.compute_dtype)
      assert.equal(tf.float32, d.variable_dtype)
      assert.equal(tf.float32, d.dtype)
      assert.equal("mixed_float16", d.dtype_policy.name)
      assert.tensor_near({{2.5, 2.5, 2.5}, {2, 2, 2}}, tf.cast(y, tf.float32), {atol = 1e-3})
      local f = L.Dense{3, dtype = "float32"}
      assert.equal(tf.float32, f(y).dtype)
      assert.equal(tf.float32, f.compute_dtype)
      local b = L.Dense{3, dtype = mp.Policy("mixed_bfloat16")}
      assert.equal(tf.bfloat16, b(x).dtype)
      assert.equal(tf.float32, b.kernel.dtype)
      -- the softmax Keras recommends last, in float32
      local act = L.Activation{"softmax", dtype = "float32"}
      assert.equal(tf.float32, act(y).dtype)
    end)

    it("read float32 variables as float16 inside call (autocast), and get float32 gradients", function()
      mp.set_global_policy("mixed_float16")
      local Probe = L.Layer:extend("Probe")
      local seen = {}
      function Probe:build() self.w = self:add_weight("w", {2}, {initializer = "ones"}) end
      function Probe:call(x)
        seen[#seen + 1] = self.w:value().dtype
        return x * self.w
      end
      local p = Probe()
      local x = tf.constant({1.5, 2.0})
      local tape = tf.GradientTape()
      local y = tape:record(function() return tf.reduce_sum(tf.cast(p(x), tf.float32)) end)
      assert.equal(tf.float16, seen[1])
      assert.equal(tf.float32, p.w:value().dtype)
      local g = tape:gradient(y, {p.w})[1]
      assert.equal(tf.float32, g.dtype)
      assert.tensor_near({1.5, 2.0}, g, {atol = 1e-3})
      -- a float32 layer reads the same kind of variable as float32
      local Probe32 = L.Layer:extend("Probe32")
      function Probe32:call(x) seen[#seen + 1] = p.w:value().dtype; return x end
      Probe32{dtype = "float32"}(x)
      assert.equal(tf.float32, seen[2])
    end)

    it("restore the autocast state when a call raises", function()
      mp.set_global_policy("mixed_float16")
      local Bad = L.Layer:extend("Bad")
      function Bad:build() self.w = self:add_weight("w", {1}) end
      function Bad:call() error("boom") end
      local ok, err = pcall(function() return Bad()(tf.ones({1})) end)
      assert.is_false(ok)
      assert.truthy(tostring(err):find("boom", 1, true))
      assert.is_nil(tf.Variable.autocast.dtype)
    end)

    it("keep normalization statistics in float32", function()
      mp.set_global_policy("mixed_float16")
      local bn = L.BatchNormalization{}
      local ln = L.LayerNormalization{}
      local x = tf.constant({{1.0, 2.0}, {3.0, 6.0}, {5.0, 10.0}})
      local y = bn(x, {training = true})
      assert.equal(tf.float16, y.dtype)
      assert.equal(tf.float32, bn.moving_mean:value().dtype)
      assert.tensor_near({0.03, 0.06}, bn.moving_mean:value(), {atol = 1e-6})
      local z = ln(x)
      assert.equal(tf.float16, z.dtype)
      assert.tensor_near({{-1, 1}, {-1, 1}, {-1, 1}}, tf.cast(z, tf.float32), {atol = 2e-3})
    end)

    it("round-trips the policy through get_config", function()
      mp.set_global_policy("mixed_float16")
      local d = L.EinsumDense{"ab,bc->ac", 3}
      local c = d:get_config()
      assert.equal("mixed_float16", c.dtype)
      mp.set_global_policy("float32")
      local d2 = L.EinsumDense.from_config(c)
      assert.equal(tf.float16, d2.compute_dtype)
      assert.equal(tf.float32, d2.variable_dtype)
      assert.equal("float32", L.EinsumDense{"ab,bc->ac", 3}:get_config().dtype)
      assert.equal(tf.float16, d2(tf.ones({2, 2})).dtype)
    end)

    it("attention layers compute in float16", function()
      mp.set_global_policy("mixed_float16")
      local mha = L.MultiHeadAttention{num_heads = 2, key_dim = 4}
      local x = tf.random.normal({2, 5, 8}, 0, 1, tf.float32, 3)
      local out, s = table.unpack(mha(x, x, {use_causal_mask = true, return_attention_scores = true}))
      assert.equal(tf.float16, out.dtype)
      assert.equal(tf.float16, s.dtype)
      assert.equal(tf.float32, mha._query_dense.kernel.dtype)
      assert.equal(0, tf.reduce_max(tf.cast(s, tf.float32) * tf.linalg.band_part(tf.ones({5, 5}), 0, -1)
        - tf.cast(s, tf.float32) * tf.eye(5)):item())
    end)
  end)

  describe("LossScaleOptimizer", function()
    local function setup(opts)
      local v = tf.Variable(tf.constant({1.0, 2.0}))
      opts = opts or {}
      local inner = tf.keras.optimizers.SGD{learning_rate = 0.5}
      opts[1] = inner
      return mp.LossScaleOptimizer(opts), v, inner
    end

    it("scales losses and unscales gradients", function()
      local opt = setup()
      assert.equal(2 ^ 15, opt.loss_scale:item())
      assert.equal(3 * 2 ^ 15, opt:get_scaled_loss(tf.constant(3.0)):item())
      local g = opt:get_unscaled_gradients({tf.constant({2 ^ 15, 2 ^ 16})})
      assert.tensor_near({1, 2}, g[1])
      assert.is_true(opt.dynamic)
      assert.equal(2000, opt.dynamic_growth_steps)
      assert.equal(0.5, opt.learning_rate)
    end)

    it("skips steps with non-finite gradients and halves the scale; doubles it after growth_steps", function()
      local opt, v, inner = setup({initial_scale = 8, dynamic_growth_steps = 2})
      opt:apply_gradients({tf.constant({math.huge, 1.0})}, {v})
      assert.tensor_near({1, 2}, v:value())                 -- skipped
      assert.equal(4, opt.loss_scale:item())
      assert.equal(0, inner.iterations:item())
      opt:apply_gradients({tf.constant({0 / 0, 1.0})}, {v})
      assert.equal(2, opt.loss_scale:item())
      opt:apply_gradients({tf.constant({1.0, 1.0})}, {v})
      assert.tensor_near({0.5, 1.5}, v:value())             -- applied: 1 - 0.5 * 1
      assert.equal(2, opt.loss_scale:item())
      assert.equal(1, opt.dynamic_counter:item())
      opt:apply_gradients({{tf.constant({1.0, 1.0}), v}})
      assert.equal(4, opt.loss_scale:item())        -- 2 finite steps in a row
      assert.equal(0, opt.dynamic_counter:item())
      assert.equal(2, inner.iterations:item())
      -- never below 1
      for _ = 1, 4 do opt:apply_gradients({tf.constant({math.huge, 0})}, {v}) end
      assert.equal(1, opt.loss_scale:item())
      assert.tensor_near({0, 1}, v:value())
    end)

    it("does the same inside tf.fn, with Adam's slots", function()
      local v = tf.Variable(tf.constant({1.0, 2.0}))
      local opt = mp.LossScaleOptimizer{tf.keras.optimizers.Adam{learning_rate = 0.1}, initial_scale = 16,
                                        dynamic_growth_steps = 3}
      local step = tf.fn(function(g) opt:apply_gradients({g}, {v}) end)
      step(tf.constant({math.huge, 1.0}))
      assert.tensor_near({1, 2}, v:value())
      assert.equal(8, opt.loss_scale:item())
      step(tf.constant({1.0, -1.0}))
      assert.tensor_near({0.9, 2.1}, v:value(), {atol = 1e-5})   -- Adam's first step: lr * sign
      step(tf.constant({1.0, -1.0}))
      step(tf.constant({1.0, -1.0}))
      assert.equal(16, opt.loss_scale:item())
      assert.equal(3, opt.iterations:item())
    end)

    it("minimize differentiates the scaled loss", function()
      local opt, v = setup({initial_scale = 2 ^ 10})
      local loss = opt:minimize(function() return tf.reduce_sum(v * v) end, {v})
      assert.equal(5, loss:item())
      assert.tensor_near({0, 0}, v:value())       -- 1 - 0.5 * 2, 2 - 0.5 * 4
    end)

    it("with dynamic = false keeps a fixed scale and applies every step", function()
      local opt, v = setup({dynamic = false, initial_scale = 4})
      opt:apply_gradients({tf.constant({1.0, 1.0})}, {v})
      assert.equal(4, opt.loss_scale:item())
      assert.tensor_near({0.5, 1.5}, v:value())
    end)

    it("saves and restores its loss scale, counter and the inner optimizer's slots", function()
      local dir = os.tmpname()
      os.remove(dir)
      local v = tf.Variable(tf.constant({1.0, 2.0}))
      local opt = mp.LossScaleOptimizer{tf.keras.optimizers.Adam{}, initial_scale = 8, dynamic_growth_steps = 5}
      opt:apply_gradients({tf.constant({1.0, 1.0})}, {v})
      opt:apply_gradients({tf.constant({math.huge, 1.0})}, {v})
      opt:apply_gradients({tf.constant({1.0, 1.0})}, {v})
      local path = tf.train.Checkpoint{optimizer = opt, v = v}:save(dir .. "/ck")
      local v2 = tf.Variable(tf.constant({0.0, 0.0}))
      local opt2 = mp.LossScaleOptimizer{tf.keras.optimizers.Adam{}, initial_scale = 8, dynamic_growth_steps = 5}
      tf.train.Checkpoint{optimizer = opt2, v = v2}:restore(path)
      assert.equal(4, opt2.loss_scale:item())
      assert.equal(1, opt2.dynamic_counter:item())
      assert.equal(2, opt2.iterations:item())
      assert.tensor_near(v:value(), v2:value())
      opt:apply_gradients({tf.constant({1.0, 1.0})}, {v})
      opt2:apply_gradients({tf.constant({1.0, 1.0})}, {v2})
      assert.tensor_near(opt:get_slot(v, "m"):value(), opt2:get_slot(v2, "m"):value())   -- restored slots
      assert.tensor_near(v:value(), v2:value())
      os.execute("rm -rf '" .. dir .. "'")
    end)

    it("raises on bad arguments", function()
      local sgd = tf.keras.optimizers.SGD{}
      local e = err_of(function() return mp.LossScaleOptimizer{42} end)
      assert.equal("TypeError", e.kind)
      assert.equal("LossScaleOptimizer: 'inner_optimizer' must be an optimizer, got 42", e.message)
      e = err_of(function() return mp.LossScaleOptimizer{sgd, dynamic = false} end)
      assert.equal("LossScaleOptimizer: 'initial_scale' must be specified if 'dynamic' is false", e.message)
      e = err_of(function() return mp.LossScaleOptimizer{sgd, dynamic = false, initial_scale = 2,
                                                       dynamic_growth_steps = 3} end)
      assert.equal("LossScaleOptimizer: 'dynamic_growth_steps' cannot be specified if 'dynamic' is false", e.message)
      e = err_of(function() return mp.LossScaleOptimizer{mp.LossScaleOptimizer(sgd)} end)
      assert.truthy(e.message:find("already wrapped by a LossScaleOptimizer", 1, true))
      e = err_of(function() return mp.LossScaleOptimizer{sgd, scale = 2} end)
      assert.equal("TypeError", e.kind)
    end)
  end)

  describe("training", function()
    local function data()
      local x = tf.random.normal({96, 6, 6, 1}, 0, 1, tf.float32, 5)
      -- class: which half (top/bottom) has the larger sum, 1-based
      local top = tf.reduce_sum(tf.slice(x, {1, 1, 1, 1}, {96, 3, 6, 1}), {axis = {2, 3, 4}})
      local bottom = tf.reduce_sum(tf.slice(x, {1, 4, 1, 1}, {96, 3, 6, 1}), {axis = {2, 3, 4}})
      local y = tf.cast(tf.greater(top, bottom), tf.int32) + 1
      return x, y
    end

    for _, pol in ipairs({"mixed_float16", "mixed_bfloat16"}) do
      it("a " .. pol .. " Conv2D/Dense model trains in fit; a float32 softmax outputs float32", function()
        tf.random.set_seed(1)
        mp.set_global_policy(pol)
        local low = pol == "mixed_float16" and tf.float16 or tf.bfloat16
        local conv = L.Conv2D{4, 3, activation = "relu"}
        local dense = L.Dense{2}
        local model = tf.keras.Sequential{conv, L.Flatten{}, dense, L.Activation{"softmax", dtype = "float32"}}
        local x, y = data()
        model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.01},
                      loss = "sparse_categorical_crossentropy"}
        local out = model(x)
        assert.equal(tf.float32, out.dtype)
        assert.equal(low, dense(tf.ones({1, 64})).dtype)
        assert.equal(tf.float32, conv.kernel.dtype)
        if pol == "mixed_float16" then
          assert.equal(getmetatable(mp.LossScaleOptimizer(tf.keras.optimizers.SGD{})), getmetatable(model.optimizer))
        else
          assert.equal("Adam", model.optimizer._name)   -- Keras wraps only for float16
        end
        local h = model:fit(x, y, {epochs = 12, batch_size = 32, verbose = 0})
        local loss = h.history.loss
        assert.is_true(loss[#loss] < 0.7 * loss[1], ("loss %g -> %g"):format(loss[1], loss[#loss]))
        for _, v in ipairs(model.trainable_variables) do assert.equal(tf.float32, v.dtype) end
      end)
    end
  end)
end)
