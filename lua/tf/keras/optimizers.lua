--- tf.keras.optimizers: SGD (momentum, nesterov), Adam (amsgrad), AdamW,
-- RMSprop, Adagrad, Nadam, Adamax, Adadelta, Ftrl, Lion with Keras's
-- defaults and update formulas, and
-- tf.keras.optimizers.schedules. Each variable's update is ONE fused C op
-- (core.apply_sgd, apply_momentum, apply_adam, apply_rmsprop, apply_adagrad:
-- family "optim"), eagerly and inside tf.fn. Slots are tf.Variables created
-- on a variable's first update (get_slot, slot_names, _checkpoint_slots).
return function(tf)
  tf.keras = tf.keras or {}
  if tf.keras.optimizers and tf.keras.optimizers._train then return end
  -- a sibling module installs itself (a test double may return a table instead)
  local function load(name)
    local m = require(name)
    if type(m) == "function" then m(tf) end
  end
  load("tf.keras.schedules")

  local core = tf.core
  local raise = tf.errors.raise
  local sfmt = string.format

  local optimizers = tf.keras.optimizers or {}
  tf.keras.optimizers = optimizers
  optimizers._train = true

  local Optimizer = {}
  Optimizer.__index = Optimizer
  Optimizer.__name = "tf.keras.optimizers.Optimizer"
  optimizers.Optimizer = Optimizer

  local COMMON = {learning_rate = true, clipnorm = true, clipvalue = true, global_clipnorm = true,
                  weight_decay = true, name = true}

  local function options(cls, args, extra, defaults)
    if type(args) == "number" or (type(args) == "table" and getmetatable(args) ~= nil) or type(args) == "function" then
      args = {args}
    end
    args = args or {}
    local o = {}
    for k, v in pairs(args) do
      if k == 1 then
        o.learning_rate = v
      elseif COMMON[k] or extra[k] then
        o[k] = v
      else
        local names = {}
        for n in pairs(COMMON) do names[#names + 1] = n end
        for n in pairs(extra) do names[#names + 1] = n end
        table.sort(names)
        raise("TypeError", sfmt("%s: unknown option '%s' (accepted: %s)", cls, tostring(k), table.concat(names, ", ")), 4)
      end
    end
    for k, v in pairs(defaults) do if o[k] == nil then o[k] = v end end
    local n = 0
    for _, k in ipairs({"clipnorm", "clipvalue", "global_clipnorm"}) do if o[k] ~= nil then n = n + 1 end end
    if n > 1 then
      raise("ValueError", sfmt("%s: only one of clipnorm, clipvalue and global_clipnorm can be set", cls), 4)
    end
    local lr = o.learning_rate
    if type(lr) ~= "number" and type(lr) ~= "function" and not (type(lr) == "table" and getmetatable(lr) and
        getmetatable(lr).__call) and not tf.is_tensor(lr) then
      raise("TypeError", sfmt("%s: learning_rate must be a number, a schedule or a function of the step, got %s",
        cls, type(lr)), 4)
    end
    return o
  end

  --- Create an optimizer object of class 'cls' (the slot names it uses).
  local function new(cls, o, slot_names)
    local self = setmetatable(o, cls)
    self.name = o.name or cls._name
    self._slot_names = slot_names
    self._slots = {}        -- var -> {name -> slot variable}
    self._slot_order = {}   -- {var, name, slot} in creation order
    self.iterations = tf.Variable(tf.constant(0, tf.int64), {name = "iteration", trainable = false})
    self._one = tf.constant(1, tf.int64)
    return self
  end

  local function class(name, parent)
    local cls = setmetatable({}, {__index = parent or Optimizer, __call = function(c, args) return c._new(args) end})
    cls.__index = cls
    cls.__name = "tf.keras.optimizers." .. name
    cls._name = name
    cls.__tostring = Optimizer.__tostring
    optimizers[name] = cls
    return cls
  end

  function Optimizer.__tostring(self)
    return sfmt("<tf.keras.optimizers.%s name=%s>", self._name, self.name)
  end

  --- The slot variable 'name' of 'var', created (zeros or 'init') on first use.
  function Optimizer:_slot(var, name, init)
    local slots = self._slots[var]
    if not slots then
      slots = {}
      self._slots[var] = slots
    end
    local s = slots[name]
    if s then return s end
    local value = core.variable_peek(var._handle)
    local zero = init and tf.fill(value.shape, tf.constant(init, value.dtype)) or tf.zeros_like(value)
    s = tf.Variable(zero, {name = var._name .. "/" .. name, trainable = false})
    slots[name] = s
    self._slot_order[#self._slot_order + 1] = {var, name, s}
    -- a restore can be pending only once tf.train (lazily loaded) is
    if rawget(tf, "train") and tf.train._restore_on_create then
      tf.train._restore_on_create(self, {for_var = var, slot = name}, s)
    end
    return s
  end

  --- opt:get_slot(var, name): the slot variable (an error if it does not exist yet).
  function Optimizer:get_slot(var, name)
    local s = self._slots[var] and self._slots[var][name]
    if not s then
      local known = false
      for _, n in ipairs(self._slot_names) do if n == name then known = true end end
      if not known then
        raise("ValueError", sfmt("%s: unknown slot '%s' (slots: %s)", self._name, tostring(name),
          table.concat(self._slot_names, ", ")), 2)
      end
      raise("ValueError", sfmt("%s: variable '%s' has no slot '%s' yet (slots are created on its first update)",
        self._name, tf.is_variable(var) and var.name or tostring(var), name), 2)
    end
    return s
  end

  --- opt:slot_names(): the names of the slots this optimizer creates.
  function Optimizer:slot_names()
    local r = {}
    for i, n in ipairs(self._slot_names) do r[i] = n end
    return r
  end

  --- Array of {var, slot_name, slot_var} (checkpoints).
  function Optimizer:_checkpoint_slots()
    local r = {}
    for i, e in ipairs(self._slot_order) do r[i] = {e[1], e[2], e[3]} end
    return r
  end

  --- Checkpoint children: the iteration counter.
  function Optimizer:_checkpoint_children()
    return {{"iter", self.iterations}}
  end

  --- Create the slots of 'vars' now (fit does this before tracing).
  function Optimizer:build(vars)
    for _, v in ipairs(vars) do self:_create_slots(v) end
  end
  function Optimizer:_create_slots(var) end

  local function tracing() return core.is_tracing() end

  --- The learning rate for this step: a number or a scalar tensor.
  function Optimizer:_current_lr()
    local lr = self.learning_rate
    if type(lr) == "number" or tf.is_tensor(lr) then return lr end
    if tf.is_variable(lr) then return lr:value() end
    -- the step (iterations before this update) as a float32 scalar tensor,
    -- so a Lua function can do arithmetic with numbers on it
    local step
    if tracing() then
      step = tf.cast(self.iterations:value(), tf.float32)
    else
      step = tf.cast(core.variable_peek(self.iterations._handle), tf.float32)
    end
    local r = lr(step)
    if tf.is_variable(r) then r = r:value() end
    return r
  end

  --- The current learning rate as a Lua number (eager).
  function Optimizer:get_learning_rate()
    local lr = self:_current_lr()
    if tf.is_tensor(lr) then return lr:item() end
    return lr
  end

  local function clip(self, grads)
    if self.clipvalue then
      for i, g in pairs(grads) do grads[i] = tf.clip_by_value(g, -self.clipvalue, self.clipvalue) end
    elseif self.clipnorm then
      for i, g in pairs(grads) do grads[i] = tf.clip_by_norm(g, self.clipnorm) end
    elseif self.global_clipnorm then
      local sq
      for _, g in pairs(grads) do
        local s = tf.reduce_sum(tf.square(tf.cast(g, tf.float64)))
        sq = sq and sq + s or s
      end
      if sq then
        local norm = tf.sqrt(sq)
        local scale = self.global_clipnorm / tf.maximum(norm, self.global_clipnorm)
        for i, g in pairs(grads) do grads[i] = g * tf.cast(scale, g.dtype) end
      end
    end
    return grads
  end

  --- opt:apply_gradients(grads, vars) or opt:apply_gradients({{g, v}, ...}).
  -- Variables whose gradient is nil are skipped (all nil is a ValueError).
  -- Returns opt.iterations.
  function Optimizer:apply_gradients(a, b)
    local grads, vars = {}, {}
    local n
    if b ~= nil then
      if type(a) ~= "table" or type(b) ~= "table" then
        raise("TypeError", sfmt("%s.apply_gradients: expected (grads, vars) tables", self._name), 2)
      end
      n = math.max(#b, #a)
      if #a ~= #b and #a > #b then
        raise("ValueError", sfmt("%s.apply_gradients: %d gradients for %d variables", self._name, #a, #b), 2)
      end
      for i = 1, #b do grads[i], vars[i] = a[i], b[i] end
      n = #b
    else
      if type(a) ~= "table" then
        raise("TypeError", sfmt("%s.apply_gradients: expected a table of {grad, var} pairs", self._name), 2)
      end
      n = #a
      for i = 1, n do
        local p = a[i]
        if type(p) ~= "table" or getmetatable(p) ~= nil then
          raise("TypeError", sfmt("%s.apply_gradients: entry %d is not a {grad, var} pair", self._name, i), 2)
        end
        grads[i], vars[i] = p[1], p[2]
      end
    end
    local any = false
    for i = 1, n do
      if not tf.is_variable(vars[i]) then
        raise("TypeError", sfmt("%s.apply_gradients: variable %d is not a tf.Variable (got %s)", self._name, i,
          type(vars[i]) == "table" and (getmetatable(vars[i]) or {}).__name or type(vars[i])), 2)
      end
      if grads[i] ~= nil then any = true end
    end
    if not any and n > 0 then
      local names = {}
      local stop
      local stop_of = core.internal.gradient_stop   -- set by tf.GradientTape once loaded
      for i = 1, n do
        names[i] = vars[i].name
        stop = stop or (stop_of and stop_of(vars[i]))
      end
      raise("ValueError", sfmt("No gradients provided for any variable: (%s)%s", table.concat(names, ", "),
        stop and "; no gradient defined for " .. stop .. " on the path to them" or ""), 2)
    end
    local agg = core.internal.aggregate_gradients   -- tf.distribute: the mean over the workers
    if agg then grads = agg(grads, vars, n) end
    grads = clip(self, grads)
    local lr = self:_current_lr()
    self._cur_step = self._needs_step and self:_step() or nil   -- once per call, not per variable
    if self._before_apply then self:_before_apply() end         -- once per call (Nadam's u_product)
    for i = 1, n do
      local g = grads[i]
      if g ~= nil then
        if self.weight_decay and self.weight_decay ~= 0 and not self._decoupled then
          local v = vars[i]
          v:assign_sub(v:value() * tf.cast(lr * self.weight_decay, v.dtype))
        end
        self:_update(vars[i], g, lr)
      end
    end
    -- Keras: each updated variable's constraint projects it (var.constraint)
    for i = 1, n do
      local v = vars[i]
      local c = grads[i] ~= nil and rawget(v, "constraint")
      if c then v:assign(c(v:value())) end
    end
    self.iterations:assign_add(self._one)
    return self.iterations
  end

  --- opt:minimize(loss_fn, vars): the gradients of loss_fn() with a tape,
  -- applied. Returns the loss.
  function Optimizer:minimize(loss, var_list)
    if type(var_list) == "function" then var_list = var_list() end
    local tape = tf.GradientTape()
    local value
    if type(loss) == "function" then
      value = tape:record(loss)
    else
      raise("TypeError", sfmt("%s.minimize: 'loss' must be a function (eager mode has no loss tensors to differentiate)",
        self._name), 2)
    end
    local grads = tape:gradient(value, var_list)
    self:apply_gradients(grads, var_list)
    return value
  end

  --- The step number for bias corrections: iterations + 1 (a number eagerly,
  -- a tensor while tracing).
  function Optimizer:_step()
    if tracing() then return tf.cast(self.iterations:value(), tf.float64) + 1 end
    return core.variable_peek(self.iterations._handle):item() + 1
  end

  -- {==== SGD
  local SGD = class("SGD")
  function SGD._new(args)
    local o = options("SGD", args, {momentum = true, nesterov = true},
      {learning_rate = 0.01, momentum = 0.0, nesterov = false})
    if type(o.momentum) ~= "number" or o.momentum < 0 or o.momentum > 1 then
      raise("ValueError", sfmt("SGD: 'momentum' must be a number between 0 and 1, got %s", tostring(o.momentum)), 3)
    end
    return new(SGD, o, o.momentum ~= 0 and {"momentum"} or {})
  end
  function SGD:_create_slots(var) if self.momentum ~= 0 then self:_slot(var, "momentum") end end
  function SGD:_update(var, g, lr)
    if self.momentum ~= 0 then
      core.apply_momentum(var._handle, self:_slot(var, "momentum")._handle, g, lr, self.momentum, self.nesterov)
    else
      core.apply_sgd(var._handle, g, lr)
    end
  end
  -- }====

  -- {==== Adam, AdamW
  local Adam = class("Adam")
  Adam._needs_step = true
  local ADAM = {beta_1 = true, beta_2 = true, epsilon = true, amsgrad = true}
  function Adam._new(args)
    local o = options("Adam", args, ADAM,
      {learning_rate = 0.001, beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-7, amsgrad = false})
    return new(Adam, o, o.amsgrad and {"m", "v", "vhat"} or {"m", "v"})
  end
  function Adam:_create_slots(var)
    self:_slot(var, "m")
    self:_slot(var, "v")
    if self.amsgrad then self:_slot(var, "vhat") end
  end
  function Adam:_update(var, g, lr)
    local vhat = self.amsgrad and self:_slot(var, "vhat")._handle or nil
    core.apply_adam(var._handle, self:_slot(var, "m")._handle, self:_slot(var, "v")._handle, vhat, g, lr,
      self._cur_step or self:_step(), self.beta_1, self.beta_2, self.epsilon, self._decoupled and self.weight_decay or 0)
  end

  local AdamW = class("AdamW", Adam)
  function AdamW._new(args)
    local o = options("AdamW", args, ADAM,
      {learning_rate = 0.001, weight_decay = 0.004, beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-7, amsgrad = false})
    o._decoupled = true
    return new(AdamW, o, o.amsgrad and {"m", "v", "vhat"} or {"m", "v"})
  end
  -- }====

  -- {==== RMSprop
  local RMSprop = class("RMSprop")
  function RMSprop._new(args)
    local o = options("RMSprop", args, {rho = true, momentum = true, epsilon = true, centered = true},
      {learning_rate = 0.001, rho = 0.9, momentum = 0.0, epsilon = 1e-7, centered = false})
    local names = {"rms"}
    if o.momentum ~= 0 then names[#names + 1] = "momentum" end
    if o.centered then names[#names + 1] = "mg" end
    return new(RMSprop, o, names)
  end
  function RMSprop:_create_slots(var)
    for _, n in ipairs(self._slot_names) do self:_slot(var, n) end
  end
  function RMSprop:_update(var, g, lr)
    local mom = self.momentum ~= 0 and self:_slot(var, "momentum")._handle or nil
    local mg = self.centered and self:_slot(var, "mg")._handle or nil
    core.apply_rmsprop(var._handle, self:_slot(var, "rms")._handle, mom, mg, g, lr, self.rho, self.momentum,
      self.epsilon)
  end
  -- }====

  -- {==== Adagrad
  local Adagrad = class("Adagrad")
  function Adagrad._new(args)
    local o = options("Adagrad", args, {initial_accumulator_value = true, epsilon = true},
      {learning_rate = 0.001, initial_accumulator_value = 0.1, epsilon = 1e-7})
    return new(Adagrad, o, {"accumulator"})
  end
  function Adagrad:_accumulator(var)
    return self:_slot(var, "accumulator", self.initial_accumulator_value)
  end
  Adagrad._create_slots = Adagrad._accumulator
  function Adagrad:_update(var, g, lr)
    core.apply_adagrad(var._handle, self:_accumulator(var)._handle, g, lr, self.epsilon)
  end
  -- }====

  -- {==== Nadam, Adamax, Adadelta, Ftrl, Lion: Keras's update_step
  -- formulas as tensor ops on the variable and its slots (several ops per
  -- variable, not one fused op). Scalars derived from the step are computed
  -- in Lua float64 eagerly (a float64 tensor while tracing), then cast to the
  -- variable's dtype.
  local function cast_to(x, dtype)
    if type(x) == "number" then return tf.constant(x, dtype) end
    if x.dtype ~= dtype then return tf.cast(x, dtype) end
    return x
  end
  local function pow(a, b)   -- a ^ b for numbers, or a tensor b
    if type(b) == "number" then return a ^ b end
    return tf.pow(tf.constant(a, tf.float64), b)
  end
  local function unit_interval(cls, o, k, open_low)
    local v = o[k]
    if type(v) ~= "number" or v > 1 or v < 0 or (open_low and v == 0) then
      raise("ValueError", sfmt("%s: '%s' must be a number in %s0, 1], got %s", cls, k, open_low and "(" or "[",
        tostring(v)), 4)
    end
  end

  --- Nadam{learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7}
  -- (Keras 3's form: u_t = beta_1 (1 - 0.5 * 0.96^t), the running product
  -- of the u_t kept in the variable opt.u_product, checkpointed).
  local Nadam = class("Nadam")
  Nadam._needs_step = true
  function Nadam._new(args)
    local o = options("Nadam", args, {beta_1 = true, beta_2 = true, epsilon = true},
      {learning_rate = 0.001, beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-7})
    local self = new(Nadam, o, {"m", "v"})
    self.u_product = tf.Variable(tf.constant(1, tf.float64), {name = "u_product", trainable = false})
    return self
  end
  function Nadam:_create_slots(var)
    self:_slot(var, "m")
    self:_slot(var, "v")
  end
  function Nadam:_checkpoint_children()
    return {{"iter", self.iterations}, {"u_product", self.u_product}}
  end
  function Nadam:_before_apply()
    local t = self._cur_step
    local u = self.beta_1 * (1 - 0.5 * pow(0.96, t))
    self.u_product:assign(self.u_product:value() * cast_to(u, tf.float64))
  end
  function Nadam:_update(var, g, lr)
    local dt = var.dtype
    local t = self._cur_step or self:_step()
    local b1, b2 = self.beta_1, self.beta_2
    local u_t = b1 * (1 - 0.5 * pow(0.96, t))
    local u_t1 = b1 * (1 - 0.5 * pow(0.96, t + 1))
    local up = self.u_product:value()
    local up1 = up * cast_to(u_t1, tf.float64)
    local m, v = self:_slot(var, "m"), self:_slot(var, "v")
    m:assign_add((g - m:value()) * (1 - b1))
    v:assign_add((tf.square(g) - v:value()) * (1 - b2))
    local m_hat = cast_to(u_t1, dt) * m:value() / cast_to(1 - up1, dt) + cast_to(1 - u_t, dt) * g / cast_to(1 - up, dt)
    local v_hat = v:value() / cast_to(1 - pow(b2, t), dt)
    var:assign_sub(m_hat * cast_to(lr, dt) / (tf.sqrt(v_hat) + self.epsilon))
  end

  --- Adamax{learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7}
  local Adamax = class("Adamax")
  Adamax._needs_step = true
  function Adamax._new(args)
    local o = options("Adamax", args, {beta_1 = true, beta_2 = true, epsilon = true},
      {learning_rate = 0.001, beta_1 = 0.9, beta_2 = 0.999, epsilon = 1e-7})
    return new(Adamax, o, {"m", "u"})
  end
  function Adamax:_create_slots(var)
    self:_slot(var, "m")
    self:_slot(var, "u")
  end
  function Adamax:_update(var, g, lr)
    local dt = var.dtype
    local t = self._cur_step or self:_step()
    local m, u = self:_slot(var, "m"), self:_slot(var, "u")
    m:assign_add((g - m:value()) * (1 - self.beta_1))
    u:assign(tf.maximum(u:value() * self.beta_2, tf.abs(g)))
    local denom = cast_to(1 - pow(self.beta_1, t), dt) * (u:value() + self.epsilon)
    var:assign_sub(cast_to(lr, dt) * m:value() / denom)
  end

  --- Adadelta{learning_rate=0.001, rho=0.95, epsilon=1e-7}
  local Adadelta = class("Adadelta")
  function Adadelta._new(args)
    local o = options("Adadelta", args, {rho = true, epsilon = true},
      {learning_rate = 0.001, rho = 0.95, epsilon = 1e-7})
    return new(Adadelta, o, {"accumulated_grad", "accumulated_delta_var"})
  end
  function Adadelta:_create_slots(var)
    self:_slot(var, "accumulated_grad")
    self:_slot(var, "accumulated_delta_var")
  end
  function Adadelta:_update(var, g, lr)
    local rho, eps = self.rho, self.epsilon
    local ag, adv = self:_slot(var, "accumulated_grad"), self:_slot(var, "accumulated_delta_var")
    ag:assign(ag:value() * rho + tf.square(g) * (1 - rho))
    local delta = -tf.sqrt(adv:value() + eps) * g / tf.sqrt(ag:value() + eps)
    adv:assign(adv:value() * rho + tf.square(delta) * (1 - rho))
    var:assign_add(delta * cast_to(lr, var.dtype))
  end

  --- Ftrl{learning_rate=0.001, learning_rate_power=-0.5,
  -- initial_accumulator_value=0.1, l1_regularization_strength=0,
  -- l2_regularization_strength=0, l2_shrinkage_regularization_strength=0, beta=0}
  local Ftrl = class("Ftrl")
  local FTRL = {learning_rate_power = true, initial_accumulator_value = true, l1_regularization_strength = true,
                l2_regularization_strength = true, l2_shrinkage_regularization_strength = true, beta = true}
  function Ftrl._new(args)
    local o = options("Ftrl", args, FTRL,
      {learning_rate = 0.001, learning_rate_power = -0.5, initial_accumulator_value = 0.1,
       l1_regularization_strength = 0.0, l2_regularization_strength = 0.0,
       l2_shrinkage_regularization_strength = 0.0, beta = 0.0})
    if type(o.initial_accumulator_value) ~= "number" or o.initial_accumulator_value < 0 then
      raise("ValueError", sfmt("Ftrl: 'initial_accumulator_value' must be >= 0, got %s",
        tostring(o.initial_accumulator_value)), 3)
    end
    if type(o.learning_rate_power) ~= "number" or o.learning_rate_power > 0 then
      raise("ValueError", sfmt("Ftrl: 'learning_rate_power' must be <= 0, got %s", tostring(o.learning_rate_power)), 3)
    end
    for _, k in ipairs({"l1_regularization_strength", "l2_regularization_strength",
                        "l2_shrinkage_regularization_strength"}) do
      if type(o[k]) ~= "number" or o[k] < 0 then
        raise("ValueError", sfmt("Ftrl: '%s' must be >= 0, got %s", k, tostring(o[k])), 3)
      end
    end
    return new(Ftrl, o, {"accumulator", "linear"})
  end
  function Ftrl:_create_slots(var)
    self:_slot(var, "accumulator", self.initial_accumulator_value)
    self:_slot(var, "linear")
  end
  function Ftrl:_update(var, g, lr)
    local dt = var.dtype
    local lrt = cast_to(lr, dt)
    local p = -self.learning_rate_power
    local accum, linear = self:_slot(var, "accumulator", self.initial_accumulator_value), self:_slot(var, "linear")
    local l2 = cast_to(self.l2_regularization_strength, dt) + self.beta / (2 * lrt)
    local w = var:value()
    local grad = g + w * (2 * self.l2_shrinkage_regularization_strength)
    local a = accum:value()
    local new_a = a + tf.square(g)
    local pa, pn = tf.pow(a, p), tf.pow(new_a, p)
    linear:assign_add(grad - (pn - pa) / lrt * w)
    local quadratic = pn / lrt + 2 * l2
    local l1 = self.l1_regularization_strength
    local lin = linear:value()
    var:assign((tf.clip_by_value(lin, -l1, l1) - lin) / quadratic)
    accum:assign(new_a)
  end

  --- Lion{learning_rate=0.001, beta_1=0.9, beta_2=0.99}
  local Lion = class("Lion")
  function Lion._new(args)
    local o = options("Lion", args, {beta_1 = true, beta_2 = true},
      {learning_rate = 0.001, beta_1 = 0.9, beta_2 = 0.99})
    if type(o.beta_1) ~= "number" or o.beta_1 <= 0 or o.beta_1 > 1 then
      raise("ValueError", sfmt("Lion: 'beta_1' must be in (0, 1] (otherwise the optimizer degenerates to " ..
        "SignSGD), got %s", tostring(o.beta_1)), 3)
    end
    return new(Lion, o, {"momentum"})
  end
  function Lion:_create_slots(var) self:_slot(var, "momentum") end
  function Lion:_update(var, g, lr)
    local m = self:_slot(var, "momentum")
    local mv = m:value()
    var:assign_sub(cast_to(lr, var.dtype) * tf.sign(mv * self.beta_1 + g * (1 - self.beta_1)))
    m:assign(mv * self.beta_2 + g * (1 - self.beta_2))
  end
  -- }====

  --- opt:get_config(): the constructor's keywords (learning_rate a number,
  -- or a schedule's get_config() as {class_name =, config =});
  -- Class.from_config(config) = Class(config).
  local CONFIG_KEYS = {"beta_1", "beta_2", "epsilon", "amsgrad", "momentum", "nesterov", "rho", "centered",
                       "initial_accumulator_value", "learning_rate_power", "l1_regularization_strength",
                       "l2_regularization_strength", "l2_shrinkage_regularization_strength", "beta",
                       "clipnorm", "clipvalue", "global_clipnorm", "weight_decay"}
  function Optimizer:get_config()
    local c = {name = self.name}
    local lr = self.learning_rate
    if type(lr) == "table" and lr.get_config then
      c.learning_rate = {class_name = (getmetatable(lr).__name or ""):match("[^.]*$"), config = lr:get_config()}
    elseif tf.is_variable(lr) then
      c.learning_rate = lr:value():item()
    else
      c.learning_rate = lr
    end
    for _, k in ipairs(CONFIG_KEYS) do if rawget(self, k) ~= nil then c[k] = self[k] end end
    return c
  end
  function Optimizer.from_config(cls, config)
    local o = {}
    for k, v in pairs(config) do o[k] = v end
    if type(o.learning_rate) == "table" and o.learning_rate.class_name then
      o.learning_rate = tf.keras.optimizers.schedules.deserialize(o.learning_rate)
    end
    return cls(o)
  end

  --- tf.keras.optimizers.get(name_or_object): "sgd", "adam", "adamw", "rmsprop", "adagrad", "nadam",
  -- "adamax", "adadelta", "ftrl", "lion".
  local BY_NAME = {sgd = SGD, adam = Adam, adamw = AdamW, rmsprop = RMSprop, adagrad = Adagrad, nadam = Nadam,
                   adamax = Adamax, adadelta = Adadelta, ftrl = Ftrl, lion = Lion}
  function optimizers.get(x)
    if type(x) == "string" then
      local cls = BY_NAME[x:lower()]
      if not cls then
        raise("ValueError", sfmt("Could not interpret optimizer identifier: '%s' (known: adadelta, adagrad, " ..
          "adam, adamax, adamw, ftrl, lion, nadam, rmsprop, sgd)", x), 2)
      end
      return cls{}
    end
    if type(x) == "table" and getmetatable(x) and x.apply_gradients then return x end
    raise("ValueError", sfmt("Could not interpret optimizer identifier: %s", tostring(x)), 2)
  end
end
