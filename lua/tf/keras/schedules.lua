--- tf.keras.optimizers.schedules: learning rates as functions of the step
-- (the optimizer's iteration count before the update, from 0).
-- ExponentialDecay, PiecewiseConstantDecay, CosineDecay, PolynomialDecay,
-- InverseTimeDecay, CosineDecayRestarts, and the LearningRateSchedule base
-- that user schedules extend; any Lua function of the step works as well. A schedule called with a Lua number returns a
-- number; with a tensor (inside tf.fn), a float32 scalar tensor.
return function(tf)
  tf.keras = tf.keras or {}
  tf.keras.optimizers = tf.keras.optimizers or {}
  if tf.keras.optimizers.schedules then return end
  local raise = tf.errors.raise
  local sfmt = string.format

  local schedules = {}
  tf.keras.optimizers.schedules = schedules

  local function class(name, keys, positional)
    local cls = {}
    cls.__index = cls
    cls.__name = "tf.keras.optimizers.schedules." .. name
    cls.__call = function(self, step)
      if tf.is_variable(step) then step = step:value() end
      if tf.is_tensor(step) then
        if step.dtype ~= tf.float32 then step = tf.cast(step, tf.float32) end
        return self:_tensor(step)
      end
      if type(step) ~= "number" then
        raise("TypeError", sfmt("%s: the step must be a number or a tensor, got %s", name, type(step)), 2)
      end
      return self:_number(step)
    end
    cls.__tostring = function(self) return sfmt("<%s>", cls.__name) end
    cls._keys = keys
    cls.get_config = function(self)
      local c = {}
      for k in pairs(keys) do if rawget(self, k) ~= nil then c[k] = self[k] end end
      return c
    end
    cls.from_config = function(c, config) return schedules[name](config) end
    schedules[name] = setmetatable(cls, {__call = function(_, args)
      if type(args) ~= "table" then raise("TypeError", sfmt("%s: expected a keyword table", name), 2) end
      local o = {}
      for k, v in pairs(args) do
        if type(k) == "number" and positional[k] then
          o[positional[k]] = v
        elseif keys[k] then
          o[k] = v
        else
          raise("TypeError", sfmt("%s: unknown option '%s'", name, tostring(k)), 2)
        end
      end
      return setmetatable(o, cls):_init()
    end})
    return cls
  end

  local function need(name, o, k)
    if type(o[k]) ~= "number" then
      raise("ValueError", sfmt("%s: '%s' must be a number, got %s", name, k, tostring(o[k])), 4)
    end
  end

  --- ExponentialDecay{initial_learning_rate, decay_steps, decay_rate, staircase=false}:
  -- lr * decay_rate ^ (step / decay_steps) (the exponent floored when staircase).
  local Exp = class("ExponentialDecay",
    {initial_learning_rate = true, decay_steps = true, decay_rate = true, staircase = true, name = true},
    {"initial_learning_rate", "decay_steps", "decay_rate"})
  function Exp:_init()
    need("ExponentialDecay", self, "initial_learning_rate")
    need("ExponentialDecay", self, "decay_steps")
    need("ExponentialDecay", self, "decay_rate")
    if self.decay_steps <= 0 then raise("ValueError", "ExponentialDecay: 'decay_steps' must be positive", 3) end
    self.staircase = self.staircase or false
    return self
  end
  function Exp:_number(step)
    local p = step / self.decay_steps
    if self.staircase then p = math.floor(p) end
    return self.initial_learning_rate * self.decay_rate ^ p
  end
  function Exp:_tensor(step)
    local p = step / self.decay_steps
    if self.staircase then p = tf.floor(p) end
    return self.initial_learning_rate * tf.pow(tf.constant(self.decay_rate, tf.float32), p)
  end

  --- PiecewiseConstantDecay{boundaries, values}: values[1] while step <=
  -- boundaries[1], values[2] while step <= boundaries[2], ..., values[n+1] after.
  local Piece = class("PiecewiseConstantDecay", {boundaries = true, values = true, name = true},
    {"boundaries", "values"})
  function Piece:_init()
    if type(self.boundaries) ~= "table" or type(self.values) ~= "table" or #self.values ~= #self.boundaries + 1 then
      raise("ValueError", sfmt("PiecewiseConstantDecay: 'values' must have one more entry than 'boundaries' " ..
        "(got %d boundaries, %d values)", type(self.boundaries) == "table" and #self.boundaries or 0,
        type(self.values) == "table" and #self.values or 0), 3)
    end
    return self
  end
  function Piece:_number(step)
    for i, b in ipairs(self.boundaries) do
      if step <= b then return self.values[i] end
    end
    return self.values[#self.values]
  end
  function Piece:_tensor(step)
    local r = tf.constant(self.values[#self.values], tf.float32)
    for i = #self.boundaries, 1, -1 do
      r = tf.where(step <= self.boundaries[i], tf.constant(self.values[i], tf.float32), r)
    end
    return r
  end

  --- CosineDecay{initial_learning_rate, decay_steps, alpha=0}:
  -- lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha).
  local Cos = class("CosineDecay", {initial_learning_rate = true, decay_steps = true, alpha = true, name = true},
    {"initial_learning_rate", "decay_steps"})
  function Cos:_init()
    need("CosineDecay", self, "initial_learning_rate")
    need("CosineDecay", self, "decay_steps")
    if self.decay_steps <= 0 then raise("ValueError", "CosineDecay: 'decay_steps' must be positive", 3) end
    self.alpha = self.alpha or 0.0
    return self
  end
  function Cos:_number(step)
    local s = math.min(step, self.decay_steps)
    local c = 0.5 * (1 + math.cos(math.pi * s / self.decay_steps))
    return self.initial_learning_rate * ((1 - self.alpha) * c + self.alpha)
  end
  function Cos:_tensor(step)
    local s = tf.minimum(step, self.decay_steps)
    local c = 0.5 * (1 + tf.cos(math.pi * s / self.decay_steps))
    return self.initial_learning_rate * ((1 - self.alpha) * c + self.alpha)
  end

  --- PolynomialDecay{initial_learning_rate, decay_steps, end_learning_rate=1e-4, power=1, cycle=false}:
  -- (lr - end) * (1 - min(step, decay_steps) / decay_steps) ^ power + end; with
  -- cycle, decay_steps grows to the next multiple of itself past the step.
  local Poly = class("PolynomialDecay", {initial_learning_rate = true, decay_steps = true, end_learning_rate = true,
    power = true, cycle = true, name = true}, {"initial_learning_rate", "decay_steps", "end_learning_rate", "power"})
  function Poly:_init()
    need("PolynomialDecay", self, "initial_learning_rate")
    need("PolynomialDecay", self, "decay_steps")
    if self.decay_steps <= 0 then raise("ValueError", "PolynomialDecay: 'decay_steps' must be positive", 3) end
    self.end_learning_rate = self.end_learning_rate or 0.0001
    self.power = self.power or 1.0
    self.cycle = self.cycle or false
    return self
  end
  function Poly:_number(step)
    local ds = self.decay_steps
    if self.cycle then
      ds = ds * (step == 0 and 1 or math.ceil(step / ds))
    else
      step = math.min(step, ds)
    end
    local p = step / ds
    return (self.initial_learning_rate - self.end_learning_rate) * (1 - p) ^ self.power + self.end_learning_rate
  end
  function Poly:_tensor(step)
    local ds
    if self.cycle then
      local mult = tf.where(tf.equal(step, 0), tf.constant(1, tf.float32), tf.math.ceil(step / self.decay_steps))
      ds = mult * self.decay_steps
    else
      step = tf.minimum(step, self.decay_steps)
      ds = tf.constant(self.decay_steps, tf.float32)
    end
    local p = step / ds
    return (self.initial_learning_rate - self.end_learning_rate) * tf.pow(1 - p, tf.constant(self.power, tf.float32))
      + self.end_learning_rate
  end

  --- InverseTimeDecay{initial_learning_rate, decay_steps, decay_rate, staircase=false}:
  -- lr / (1 + decay_rate * step / decay_steps) (the ratio floored when staircase).
  local Inv = class("InverseTimeDecay",
    {initial_learning_rate = true, decay_steps = true, decay_rate = true, staircase = true, name = true},
    {"initial_learning_rate", "decay_steps", "decay_rate"})
  function Inv:_init()
    need("InverseTimeDecay", self, "initial_learning_rate")
    need("InverseTimeDecay", self, "decay_steps")
    need("InverseTimeDecay", self, "decay_rate")
    if self.decay_steps <= 0 then raise("ValueError", "InverseTimeDecay: 'decay_steps' must be positive", 3) end
    self.staircase = self.staircase or false
    return self
  end
  function Inv:_number(step)
    local p = step / self.decay_steps
    if self.staircase then p = math.floor(p) end
    return self.initial_learning_rate / (1 + self.decay_rate * p)
  end
  function Inv:_tensor(step)
    local p = step / self.decay_steps
    if self.staircase then p = tf.floor(p) end
    return self.initial_learning_rate / (1 + self.decay_rate * p)
  end

  --- CosineDecayRestarts{initial_learning_rate, first_decay_steps, t_mul=2, m_mul=1, alpha=0}:
  -- cosine decay over first_decay_steps, then restarts, each period t_mul
  -- times longer and its peak m_mul times lower (SGDR).
  local CosR = class("CosineDecayRestarts", {initial_learning_rate = true, first_decay_steps = true, t_mul = true,
    m_mul = true, alpha = true, name = true}, {"initial_learning_rate", "first_decay_steps"})
  function CosR:_init()
    need("CosineDecayRestarts", self, "initial_learning_rate")
    need("CosineDecayRestarts", self, "first_decay_steps")
    if self.first_decay_steps <= 0 then
      raise("ValueError", "CosineDecayRestarts: 'first_decay_steps' must be positive", 3)
    end
    self.t_mul = self.t_mul or 2.0
    self.m_mul = self.m_mul or 1.0
    self.alpha = self.alpha or 0.0
    return self
  end
  function CosR:_number(step)
    local f = step / self.first_decay_steps
    local t_mul, i
    t_mul = self.t_mul
    if t_mul == 1 then
      i = math.floor(f)
      f = f - i
    else
      i = math.floor(math.log(1 - f * (1 - t_mul)) / math.log(t_mul))
      local sum_r = (1 - t_mul ^ i) / (1 - t_mul)
      f = (f - sum_r) / t_mul ^ i
    end
    local c = 0.5 * self.m_mul ^ i * (1 + math.cos(math.pi * f))
    return self.initial_learning_rate * ((1 - self.alpha) * c + self.alpha)
  end
  function CosR:_tensor(step)
    local f = step / self.first_decay_steps
    local t_mul = self.t_mul
    local i
    if t_mul == 1 then
      i = tf.floor(f)
      f = f - i
    else
      i = tf.floor(tf.math.log(1 - f * (1 - t_mul)) / math.log(t_mul))
      local tp = tf.pow(tf.constant(t_mul, tf.float32), i)
      local sum_r = (1 - tp) / (1 - t_mul)
      f = (f - sum_r) / tp
    end
    local c = 0.5 * tf.pow(tf.constant(self.m_mul, tf.float32), i) * (1 + tf.cos(math.pi * f))
    return self.initial_learning_rate * ((1 - self.alpha) * c + self.alpha)
  end

  --- LearningRateSchedule: the base of user schedules.
  --   local Warmup = schedules.LearningRateSchedule:extend("Warmup", {
  --     init = function(self, o) self.peak = o.peak end,        -- optional
  --     call = function(self, step) return self.peak * tf.minimum(1, (step + 1) / 100) end,
  --   })
  --   opt = tf.keras.optimizers.Adam{learning_rate = Warmup{peak = 1e-3}}
  -- `call` gets the step as a float32 scalar tensor (a number given to the
  -- schedule is made one) and returns a number or a scalar tensor. The
  -- default get_config returns the constructor's keyword table;
  -- schedules.deserialize({class_name =, config =}) rebuilds any schedule
  -- (user classes are found by the name given to extend).
  local custom = {}
  local Base = {}
  Base.__index = Base
  Base.__name = "tf.keras.optimizers.schedules.LearningRateSchedule"
  schedules.LearningRateSchedule = Base
  function Base:call()
    raise("UnimplementedError", sfmt("%s: a LearningRateSchedule must define call(self, step)",
      (getmetatable(self) or Base).__name), 3)
  end
  function Base:get_config()
    local c = {}
    for k, v in pairs(rawget(self, "_config") or {}) do c[k] = v end
    return c
  end
  function Base.from_config(cls, config) return cls(config) end
  function Base.extend(parent, name, methods)
    if type(name) ~= "string" then
      raise("TypeError", "LearningRateSchedule:extend: expected a class name (a string)", 2)
    end
    local cls = methods or {}
    cls.__index = cls
    cls.__name = name
    cls.__tostring = function(self) return sfmt("<%s>", name) end
    cls.__call = function(self, step)
      if tf.is_variable(step) then step = step:value() end
      if type(step) == "number" then step = tf.constant(step, tf.float32) end
      if not tf.is_tensor(step) then
        raise("TypeError", sfmt("%s: the step must be a number or a tensor, got %s", name, type(step)), 2)
      end
      if step.dtype ~= tf.float32 then step = tf.cast(step, tf.float32) end
      return self:call(step)
    end
    cls.extend = Base.extend
    custom[name] = cls
    return setmetatable(cls, {__index = parent, __call = function(c, args)
      local o = setmetatable({_config = args or {}}, c)
      if o.init then o:init(args or {}) end
      return o
    end})
  end

  --- schedules.serialize(s): {class_name =, config =}; deserialize: the inverse.
  function schedules.serialize(s)
    local mt = getmetatable(s)
    if type(s) ~= "table" or not mt or not s.get_config then
      raise("TypeError", sfmt("serialize: not a learning rate schedule: %s", tostring(s)), 2)
    end
    return {class_name = (mt.__name or ""):match("[^.]*$"), config = s:get_config()}
  end
  function schedules.deserialize(d)
    if type(d) ~= "table" or type(d.class_name) ~= "string" then
      raise("TypeError", "deserialize: expected {class_name = <string>, config = <table>}", 2)
    end
    local cls = custom[d.class_name] or (d.class_name ~= "LearningRateSchedule" and rawget(schedules, d.class_name))
    if type(cls) ~= "table" then
      raise("ValueError", sfmt("deserialize: unknown schedule class '%s'", d.class_name), 2)
    end
    return cls(d.config or {})
  end
end
