--- tf.keras.mixed_precision: dtype policies (Policy, set_global_policy,
-- global_policy) and LossScaleOptimizer (dynamic loss scaling).
--
-- Under "mixed_float16" / "mixed_bfloat16" a layer keeps its variables in
-- float32 and computes in the low dtype: the layer base casts floating
-- inputs to `layer.compute_dtype`, and a float32 variable made by add_weight
-- reads as the compute dtype inside the layer's call (Keras's
-- AutoCastVariable; see tf.Variable.autocast). model:compile under
-- "mixed_float16" wraps the optimizer in a LossScaleOptimizer, as Keras does.
return function(tf)
  tf.keras = tf.keras or {}
  local keras = tf.keras
  if keras.mixed_precision and keras.mixed_precision._loaded then return end
  local function load(name)
    local m = require(name)
    if type(m) == "function" then m(tf) end
  end
  load("tf.keras.optimizers")
  local raise = (tf.core.internal.keras and tf.core.internal.keras.raise) or tf.errors.raise
  local sfmt = string.format

  local M = {_loaded = true}
  keras.mixed_precision = M

  -- {==== Policy
  local Policy = {}
  Policy.__index = Policy
  Policy.__name = "tf.keras.mixed_precision.Policy"

  local MIXED = {mixed_float16 = "float16", mixed_bfloat16 = "bfloat16"}

  local function is_policy(x) return getmetatable(x) == Policy end
  M._is_policy = is_policy

  --- Policy(name): "mixed_float16" (compute float16, variables float32),
  -- "mixed_bfloat16", or the name of a dtype ("float32", "float16", ...: both
  -- dtypes that one). Fields: name, compute_dtype, variable_dtype (dtype names).
  local function new_policy(name)
    if type(name) == "table" and getmetatable(name) == nil then name = name[1] or name.name end
    if type(name) ~= "string" then
      local ok, dt = pcall(tf.dtypes.as_dtype, name)
      if ok and dt then
        name = dt.name
      else
        raise("TypeError", sfmt("Policy: 'name' must be a string or a dtype, got %s", tostring(name)))
      end
    end
    local self = setmetatable({name = name}, Policy)
    if MIXED[name] then
      self.compute_dtype, self.variable_dtype = MIXED[name], "float32"
    else
      local ok, dt = pcall(tf.dtypes.as_dtype, name)
      if not ok or dt == nil then
        raise("ValueError", sfmt("Cannot convert value %s to a mixed precision Policy. Valid policies include " ..
          "'mixed_float16', 'mixed_bfloat16', and the name of any dtype such as 'float32'.", name))
      end
      self.compute_dtype, self.variable_dtype = dt.name, dt.name
    end
    return self
  end
  M.Policy = setmetatable({mt = Policy}, {__call = function(_, name) return new_policy(name) end})

  function Policy.__tostring(p) return sfmt('<Policy "%s">', p.name) end
  function Policy.__eq(a, b) return a.name == b.name end
  --- policy:get_config() -> {name = ...}; Policy.from_config(c).
  function Policy.get_config(p) return {name = p.name} end
  function M.Policy.from_config(c) return new_policy(c.name) end

  local global = new_policy("float32")

  --- set_global_policy(policy): a Policy, a policy name, or nil (float32).
  -- Layers made afterwards take it (a layer's dtype = ... overrides it).
  function M.set_global_policy(policy)
    if policy == nil then policy = "float32" end
    if not is_policy(policy) then policy = new_policy(policy) end
    local cdt = tf.dtypes.as_dtype(policy.compute_dtype)
    if not cdt.is_floating then
      raise("ValueError", sfmt("set_global_policy can only be used to set the global policy to floating-point " ..
        "policies, such as 'float32' and 'mixed_float16', but got policy: %s", policy.name))
    end
    global = policy
    if policy.name == "float32" then
      keras._policy = nil
    else
      keras._policy = {policy = policy, compute = cdt, variable = tf.dtypes.as_dtype(policy.variable_dtype)}
    end
  end

  --- global_policy(): the current global Policy ("float32" by default).
  function M.global_policy() return global end
  -- }====

  -- {==== LossScaleOptimizer
  local LSO = {}
  LSO.__name = "tf.keras.mixed_precision.LossScaleOptimizer"
  local LSO_METHODS = {}

  local function is_optimizer(x)
    return type(x) == "table" and getmetatable(x) ~= nil and type(x.apply_gradients) == "function"
  end

  function LSO.__index(self, k)
    local m = LSO_METHODS[k]
    if m then return m end
    if k == "loss_scale" then return rawget(self, "_loss_scale"):value() end
    if k == "dynamic_counter" then return rawget(self, "_counter"):value() end
    -- the slots are the inner optimizer's (checkpoints find them under it)
    if k == "_checkpoint_slots" then return nil end
    return rawget(self, "inner_optimizer")[k]      -- learning_rate, iterations, name, ...
  end
  function LSO.__newindex(self, k, v)
    if k == "learning_rate" then rawget(self, "inner_optimizer").learning_rate = v; return end
    rawset(self, k, v)
  end
  function LSO.__tostring(self)
    return sfmt("<tf.keras.mixed_precision.LossScaleOptimizer inner=%s dynamic=%s>",
      tostring(rawget(self, "inner_optimizer")), tostring(rawget(self, "dynamic")))
  end

  local LSO_KEYS = {inner_optimizer = true, dynamic = true, initial_scale = true, dynamic_growth_steps = true}

  --- LossScaleOptimizer{inner_optimizer, dynamic=true, initial_scale=2^15,
  -- dynamic_growth_steps=2000} (or LossScaleOptimizer(inner)): multiplies
  -- the loss by the loss scale before differentiation and divides the
  -- gradients by it. Dynamic: a step whose gradients are not all finite is
  -- skipped and the scale halved (not below 1); after dynamic_growth_steps
  -- finite steps in a row the scale doubles.
  local function new_lso(args)
    if is_optimizer(args) then args = {args} end
    if type(args) ~= "table" then
      raise("TypeError", sfmt("LossScaleOptimizer: expected an optimizer or a keyword table, got %s", type(args)))
    end
    for k in pairs(args) do
      if not (k == 1 or LSO_KEYS[k]) then
        raise("TypeError", sfmt("LossScaleOptimizer: unknown option '%s' (accepted: dynamic, dynamic_growth_steps, " ..
          "initial_scale, inner_optimizer)", tostring(k)))
      end
    end
    local inner = args[1] or args.inner_optimizer
    if type(inner) == "string" then inner = keras.optimizers.get(inner) end
    if not is_optimizer(inner) then
      raise("TypeError", sfmt("LossScaleOptimizer: 'inner_optimizer' must be an optimizer, got %s", tostring(inner)))
    end
    if getmetatable(inner) == LSO then
      raise("TypeError", "LossScaleOptimizer: 'inner_optimizer' is already wrapped by a LossScaleOptimizer. An " ..
        "optimizer can only be wrapped by a single LossScaleOptimizer")
    end
    local dynamic = args.dynamic ~= false
    local scale, steps = args.initial_scale, args.dynamic_growth_steps
    if dynamic then
      scale = scale or 2 ^ 15
      steps = steps or 2000
      if math.type(steps) ~= "integer" or steps < 1 then
        raise("ValueError", sfmt("LossScaleOptimizer: 'dynamic_growth_steps' must be a positive integer, got %s",
          tostring(steps)))
      end
    else
      if scale == nil then
        raise("ValueError", "LossScaleOptimizer: 'initial_scale' must be specified if 'dynamic' is false")
      end
      if steps ~= nil then
        raise("ValueError", "LossScaleOptimizer: 'dynamic_growth_steps' cannot be specified if 'dynamic' is false")
      end
    end
    if type(scale) ~= "number" or scale <= 0 or scale ~= scale or scale == math.huge then
      raise("ValueError", sfmt("LossScaleOptimizer: 'initial_scale' must be a positive finite number, got %s",
        tostring(scale)))
    end
    local self = setmetatable({}, LSO)
    rawset(self, "inner_optimizer", inner)
    rawset(self, "dynamic", dynamic)
    rawset(self, "initial_scale", scale)
    rawset(self, "dynamic_growth_steps", steps)
    rawset(self, "_loss_scale", tf.Variable(tf.constant(scale, tf.float32), {name = "loss_scale", trainable = false}))
    rawset(self, "_counter", tf.Variable(tf.constant(0, tf.int64), {name = "good_steps", trainable = false}))
    return self
  end
  M.LossScaleOptimizer = setmetatable({mt = LSO}, {__call = function(_, args) return new_lso(args) end})

  --- opt:get_scaled_loss(loss): loss * loss scale (a function gives a function).
  function LSO_METHODS.get_scaled_loss(self, loss)
    if type(loss) == "function" then
      return function(...) return self:get_scaled_loss(loss(...)) end
    end
    local s = self._loss_scale:value()
    if loss.dtype ~= s.dtype then s = tf.cast(s, loss.dtype) end
    return loss * s
  end

  --- opt:get_unscaled_gradients(grads): each gradient divided by the loss
  -- scale (nil entries stay nil).
  function LSO_METHODS.get_unscaled_gradients(self, grads)
    local inv = 1.0 / self._loss_scale:value()
    local out = {}
    for i, g in pairs(grads) do
      local r = inv
      if g.dtype ~= r.dtype then r = tf.cast(r, g.dtype) end
      out[i] = g * r
    end
    return out
  end

  -- a bool scalar: every gradient is finite
  local function all_finite(grads, n)
    local ok
    for i = 1, n do
      local g = grads[i]
      if g ~= nil then
        local f = tf.reduce_all(tf.is_finite(g))
        ok = ok and tf.logical_and(ok, f) or f
      end
    end
    return ok or tf.constant(true)
  end

  --- opt:apply_gradients(grads, vars) or ({{g, v}, ...}): the inner
  -- optimizer's update, skipped (dynamic) when a gradient is not finite;
  -- the loss scale and its counter updated as Keras's DynamicLossScale.
  -- Returns the inner optimizer's iterations.
  function LSO_METHODS.apply_gradients(self, a, b)
    local inner = self.inner_optimizer
    local grads, vars = {}, {}
    local n
    if b ~= nil then
      n = #b
      for i = 1, n do grads[i], vars[i] = a[i], b[i] end
    else
      if type(a) ~= "table" then
        raise("TypeError", "LossScaleOptimizer.apply_gradients: expected (grads, vars) or a table of {grad, var} pairs")
      end
      n = #a
      for i = 1, n do grads[i], vars[i] = a[i][1], a[i][2] end
    end
    if not self.dynamic then return inner:apply_gradients(grads, vars) end
    -- slots first, outside the conditional (a traced cond branch cannot make variables)
    local live = {}
    for i = 1, n do if grads[i] ~= nil then live[#live + 1] = vars[i] end end
    if inner.build then inner:build(live) end
    local finite = all_finite(grads, n)
    local scale, counter = self._loss_scale, self._counter
    local steps = self.dynamic_growth_steps
    tf.cond(finite, function()
      inner:apply_gradients(grads, vars)
      local c = counter:value() + tf.constant(1, tf.int64)
      local grow = tf.greater_equal(c, tf.constant(steps, tf.int64))
      local s = scale:value()
      local doubled = s * 2.0
      doubled = tf.where(tf.is_finite(doubled), doubled, s)
      scale:assign(tf.where(grow, doubled, s))
      counter:assign(tf.where(grow, tf.constant(0, tf.int64), c))
      return tf.constant(true)
    end, function()
      scale:assign(tf.maximum(scale:value() / 2.0, 1.0))
      counter:assign(tf.constant(0, tf.int64))
      return tf.constant(false)
    end)
    return inner.iterations
  end

  --- opt:minimize(loss_fn, vars): gradients of the scaled loss, unscaled and
  -- applied. Returns the (unscaled) loss.
  function LSO_METHODS.minimize(self, loss, var_list)
    if type(var_list) == "function" then var_list = var_list() end
    if type(loss) ~= "function" then
      raise("TypeError", "LossScaleOptimizer.minimize: 'loss' must be a function")
    end
    local tape = tf.GradientTape()
    local scaled
    local value = tape:record(function()
      local l = loss()
      scaled = self:get_scaled_loss(l)
      return l
    end)
    local grads = self:get_unscaled_gradients(tape:gradient(scaled, var_list))
    self:apply_gradients(grads, var_list)
    return value
  end

  -- the rest is the inner optimizer's
  for _, name in ipairs({"build", "get_slot", "slot_names", "get_learning_rate",
                         "_current_lr"}) do
    LSO_METHODS[name] = function(self, ...)
      local inner = rawget(self, "inner_optimizer")
      return inner[name](inner, ...)
    end
  end
  --- Checkpoint children: the inner optimizer, the loss scale and its counter.
  function LSO_METHODS._checkpoint_children(self)
    return {{"inner_optimizer", self.inner_optimizer}, {"loss_scale", self._loss_scale},
            {"good_steps", self._counter}}
  end

  --- The optimizer compile uses for `model`: wrapped in a LossScaleOptimizer
  -- when the model's policy is mixed_float16 (as Keras's compile).
  function M._maybe_wrap(model, opt)
    local p = type(model) == "table" and rawget(model, "_policy") or nil
    if p and p.name == "mixed_float16" and getmetatable(opt) ~= LSO then return new_lso({opt}) end
    return opt
  end
  -- }====
end
