--- tf.keras.layers.Layer: the base of every layer and model.
--
-- A class is a table made by `Parent:extend("Name" [, methods])`; calling the
-- class makes an instance and runs its `init(self, ...)`. Calling an
-- instance, `layer(x [, {training = bool}])`, builds it once from the input's
-- shape (`self:build(input_shape)`, input_shape a tf.TensorShape) and then
-- runs `self:call(x, opts)`. Layers, variables and tables of them assigned to
-- `self.x` are tracked in assignment order: `trainable_variables`,
-- `non_trainable_variables` and `variables` list the layer's own variables
-- (add_weight, then assigned ones) and then its sublayers', each once.
return function(tf)
  local keras = tf.keras
  local raise = tf.core.internal.keras.raise
  local is_variable = tf.is_variable
  local sfmt = string.format

  local Layer = {}
  Layer.__name = "tf.keras.layers.Layer"
  Layer._class_name = "Layer"

  local PROPS = {}          -- computed fields: layer.trainable_variables, ...

  local function is_plain(v)
    return type(v) == "table" and getmetatable(v) == nil
  end

  --- True when `x` is a layer (or model) instance.
  local function is_layer(x)
    return type(x) == "table" and rawget(x, "_keras_layer") == true
  end
  tf.core.internal.keras.is_layer = is_layer

  -- {==== names: TensorFlow's to_snake_case and per-state unique names
  local function snake(name)
    local s = name:gsub("(.)(%u[%l%d]+)", "%1_%2"):gsub("(%l)(%u)", "%1_%2")
    return s:lower()
  end
  tf.core.internal.keras.snake_case = snake
  local uids = {}
  local function unique_name(base)
    local n = uids[base]
    uids[base] = (n or 0) + 1
    if n == nil then return base end
    return base .. "_" .. n
  end
  tf.core.internal.keras.unique_name = unique_name
  keras.backend = keras.backend or {}
  --- Resets the layer-name counters (Keras's clear_session).
  function keras.backend.clear_session() for k in pairs(uids) do uids[k] = nil end end
  -- }====

  -- {==== classes
  local function instance_index(cls)
    return function(self, k)
      local p = PROPS[k]
      if p then return p(self) end
      return cls[k]
    end
  end

  -- Attribute assignment: remember the key's first assignment order, so that
  -- tracked layers/variables come out in that order.
  local function track_newindex(self, k, v)
    local order = rawget(self, "_attr_order")
    if order and not self._attr_seen[k] then
      self._attr_seen[k] = true
      order[#order + 1] = k
    end
    rawset(self, k, v)
  end

  local function layer_call(self, ...) return self:__call_layer(...) end
  local function layer_tostring(self) return self:__tostring_layer() end

  --- Class.from_config(config) (or Class:from_config(config)): a new layer
  -- made from get_config's table. Each class gets its own, bound to it.
  local function class_from_config(cls)
    return function(a, b)
      local config = a
      if a == cls then config = b end       -- Class:from_config(config); Class.from_config(config [, custom_objects])
      if type(config) ~= "table" then
        raise("TypeError", sfmt("%s.from_config: expected a config table, got %s", cls._class_name, type(config)), 2)
      end
      local c = {}
      for k, v in pairs(config) do c[k] = v end
      return cls(c)
    end
  end

  local function make_class(parent, name, methods)
    local cls = {}
    if methods then for k, v in pairs(methods) do cls[k] = v end end
    if not (methods and methods.from_config) then cls.from_config = class_from_config(cls) end
    cls._class_name = name
    cls.__name = name
    cls.__index = instance_index(cls)
    cls.__newindex = track_newindex
    cls.__call = layer_call
    cls.__tostring = layer_tostring
    cls.__close = nil
    return setmetatable(cls, {
      __index = parent,
      __call = function(c, ...) return c:new(...) end,
      __tostring = function(c) return "<class " .. c._class_name .. ">" end,
    })
  end

  --- `Parent:extend("Name" [, {init =, build =, call = ...}])`: a subclass.
  function Layer.extend(parent, name, methods)
    if type(name) ~= "string" then
      raise("TypeError", sfmt("extend: the class name must be a string, got %s", type(name)), 2)
    end
    return make_class(parent, name, methods)
  end

  --- Make an instance of class `cls` and run its init with the arguments.
  function Layer.new(cls, ...)
    local self = setmetatable({}, cls)
    rawset(self, "_keras_layer", true)
    rawset(self, "_attr_order", {})
    rawset(self, "_attr_seen", {})
    rawset(self, "_weights", {})        -- add_weight's: {name =, var =}, in creation order
    rawset(self, "built", false)
    rawset(self, "trainable", true)
    -- dtypes from the global policy (tf.keras.mixed_precision): variables
    -- in _dtype, computations in _compute_dtype
    local pol = keras._policy
    rawset(self, "_dtype", pol and pol.variable or tf.float32)
    rawset(self, "_compute_dtype", pol and pol.compute or tf.float32)
    if pol then rawset(self, "_policy", pol.policy) end
    rawset(self, "name", unique_name(snake(cls._class_name)))
    -- the constructor's keywords, for tf.keras.layers.serialize of a class
    -- without a get_config of its own (lua/tf/keras/functional.lua)
    local a = ...
    if is_plain(a) then
      local c = {}
      for k, v in pairs(a) do c[k] = v end
      rawset(self, "_init_args", c)
    elseif a ~= nil then
      rawset(self, "_init_args", {a})
      rawset(self, "_init_positional", true)   -- made with positional arguments (whole-model saving needs a get_config)
    end
    local init = cls.init
    if init then init(self, ...) end
    return self
  end
  -- }====

  -- {==== common options
  local COMMON = {name = true, trainable = true, dtype = true, input_shape = true, batch_input_shape = true,
                  input_dim = true, batch_size = true, activity_regularizer = true}

  --- Check a constructor's keyword table: keys outside `accepted` and the
  -- common ones (name, trainable, dtype, input_shape) are a TypeError; the
  -- common ones are applied. Returns opts (never nil).
  function Layer._options(self, opts, accepted, npos)
    if opts == nil then opts = {} end
    local cname = self._class_name
    if type(opts) ~= "table" or tf.is_tensor(opts) then
      raise("TypeError", sfmt("%s: expected one keyword table, e.g. %s{...}, got %s", cname, cname, type(opts)), 3)
    end
    local acc = {}
    for _, k in ipairs(accepted or {}) do acc[k] = true end
    for k in pairs(opts) do
      if type(k) == "number" then
        if math.type(k) ~= "integer" or k < 1 or k > (npos or 0) then
          raise("TypeError", sfmt("%s: takes %d positional argument(s), got an entry at [%s]", cname, npos or 0,
            tostring(k)), 3)
        end
      elseif not acc[k] and not COMMON[k] then
        local names = {}
        for n in pairs(acc) do names[#names + 1] = n end
        for n in pairs(COMMON) do names[#names + 1] = n end
        table.sort(names)
        raise("TypeError", sfmt("%s: unknown keyword argument '%s' (accepted: %s)", cname, tostring(k),
          table.concat(names, ", ")), 3)
      end
    end
    if opts.name ~= nil then rawset(self, "name", tostring(opts.name)) end
    if opts.trainable ~= nil then rawset(self, "trainable", opts.trainable and true or false) end
    if opts.dtype ~= nil then
      local mp = keras.mixed_precision
      local d = opts.dtype
      if mp and (mp._is_policy(d) or (type(d) == "string" and d:find("^mixed_"))) then
        if not mp._is_policy(d) then d = mp.Policy(d) end
        rawset(self, "_dtype", tf.dtypes.as_dtype(d.variable_dtype))
        rawset(self, "_compute_dtype", tf.dtypes.as_dtype(d.compute_dtype))
        rawset(self, "_policy", d)
      else
        local dt = tf.dtypes.as_dtype(d)
        rawset(self, "_dtype", dt)
        rawset(self, "_compute_dtype", dt)
        rawset(self, "_policy", nil)
      end
    end
    local bis = opts.batch_input_shape
    if bis == nil and opts.input_shape ~= nil then
      bis = {opts.batch_size or -1}
      for i, d in ipairs(opts.input_shape) do bis[i + 1] = d end
    elseif bis == nil and opts.input_dim ~= nil then
      bis = {opts.batch_size or -1, opts.input_dim}
    end
    if bis then rawset(self, "_batch_input_shape", bis) end
    if opts.activity_regularizer ~= nil then
      rawset(self, "activity_regularizer", keras.regularizers.get(opts.activity_regularizer))
    end
    return opts
  end

  --- Base init: Layer.init(self, {name=, trainable=, dtype=, input_shape=}).
  function Layer.init(self, opts) self:_options(opts, {}, 0) end
  -- }====

  -- {==== weights
  --- self:add_weight(name, shape [, {initializer=, trainable=true, dtype=,
  -- regularizer=, constraint=}]) or self:add_weight{name=, shape=, ...}:
  -- a new tf.Variable named "<layer>/<name>", tracked by the layer. The
  -- initializer defaults to glorot_uniform for floats (zeros otherwise).
  -- A regularizer's penalty of the variable's current value is part of
  -- `layer.losses`; a constraint (`var.constraint`) is applied by the
  -- optimizer after each update.
  function Layer.add_weight(self, name, shape, opts)
    if type(name) == "table" then
      opts = name
      name, shape = opts.name, opts.shape
    end
    opts = opts or {}
    if type(name) ~= "string" then raise("TypeError", "add_weight: 'name' must be a string", 2) end
    shape = shape or {}
    if getmetatable(shape) == tf.TensorShape.mt then shape = shape:as_list() end
    for i, d in ipairs(shape) do
      if type(d) ~= "number" or d < 0 then
        raise("ValueError", sfmt("add_weight: layer \"%s\": dimension %d of weight '%s' must be known, got %s",
          self.name, i, name, tostring(d)), 2)
      end
    end
    local dtype = tf.dtypes.as_dtype(opts.dtype or self._dtype)
    local init = opts.initializer
    if init == nil then init = dtype.is_floating and "glorot_uniform" or "zeros" end
    init = keras.initializers.get(init)
    local trainable = opts.trainable
    if trainable == nil then trainable = true end
    local var = tf.Variable(function() return init(shape, dtype) end,
                            {name = self.name .. "/" .. name, trainable = trainable, dtype = dtype})
    local w = self._weights
    local reg = opts.regularizer ~= nil and keras.regularizers.get(opts.regularizer) or nil
    if opts.constraint ~= nil then rawset(var, "constraint", keras.constraints.get(opts.constraint)) end
    w[#w + 1] = {name = name, var = var, regularizer = reg}
    -- mixed precision: a variable in the variable dtype reads as the compute
    -- dtype inside the calls of layers (Keras's AutoCastVariable)
    local cdt = rawget(self, "_compute_dtype")
    if dtype.is_floating and cdt ~= dtype and dtype == rawget(self, "_dtype") then
      local ac = tf.Variable.autocast
      ac.vars[var] = true
      ac.count = ac.count + 1
    end
    -- a restore can be pending only once tf.train (lazily loaded) is
    if rawget(tf, "train") and tf.train._restore_on_create then tf.train._restore_on_create(self, name, var) end
    return var
  end
  Layer.add_variable = Layer.add_weight

  -- Walk a plain table (arrays by index, then string keys sorted), calling
  -- fn on each non-table-plain leaf.
  local function walk(v, fn, seen)
    if is_plain(v) then
      if seen[v] then return end
      seen[v] = true
      local n = #v
      for i = 1, n do walk(v[i], fn, seen) end
      local keys = require("tf.util").nonarray_keys(v)
      for _, k in ipairs(keys) do walk(v[k], fn, seen) end
    else
      fn(v)
    end
  end

  -- The variables and layers held by value `v` (itself, or inside a plain
  -- table), appended to vars / layers in tracking order (each once).
  local Variable_mt = tf.Variable.mt
  local function scan(v, owner, vars, vseen, layers, lseen, tseen)
    if type(v) ~= "table" then return end
    local mt = getmetatable(v)
    if mt == Variable_mt then
      if not vseen[v] then vseen[v] = true; vars[#vars + 1] = v end
    elseif mt ~= nil then
      if layers and rawget(v, "_keras_layer") == true and v ~= owner and not lseen[v] then
        lseen[v] = true
        layers[#layers + 1] = v
      end
    elseif not tseen[v] then
      tseen[v] = true
      local n = #v
      for i = 1, n do scan(v[i], owner, vars, vseen, layers, lseen, tseen) end
      local keys
      for k in pairs(v) do
        if not (math.type(k) == "integer" and k >= 1 and k <= n) then
          keys = keys or {}
          keys[#keys + 1] = k
        end
      end
      if keys then
        table.sort(keys, function(a, b)
          if type(a) ~= type(b) then return type(a) < type(b) end
          return a < b
        end)
        for _, k in ipairs(keys) do scan(v[k], owner, vars, vseen, layers, lseen, tseen) end
      end
    end
  end

  --- The layer's own variables (add_weight's, then variables assigned to
  -- attributes) and the layers it tracks directly, in order, each once.
  function Layer._tracked(self)
    local vars, vseen, layers, lseen, tseen = {}, {}, {}, {}, {}
    for _, w in ipairs(self._weights) do
      local v = w.var
      if not vseen[v] then vseen[v] = true; vars[#vars + 1] = v end
    end
    for _, k in ipairs(self._attr_order) do scan(rawget(self, k), self, vars, vseen, layers, lseen, tseen) end
    return vars, layers
  end

  function Layer._own_variables(self) return (self:_tracked()) end

  --- The layers tracked directly by this one, in assignment order, each once.
  function Layer._sublayers(self)
    local _, layers = self:_tracked()
    return layers
  end

  -- trainable and non-trainable variables of `layer` and its sublayers,
  -- appended to tr / nt (each variable once, `seen` shared).
  local function gather(layer, tr, nt, seen, frozen, visiting)
    if visiting[layer] then return end
    visiting[layer] = true
    frozen = frozen or not layer.trainable
    local vars, subs = layer:_tracked()
    for _, v in ipairs(vars) do
      if not seen[v] then
        seen[v] = true
        if v.trainable and not frozen then tr[#tr + 1] = v else nt[#nt + 1] = v end
      end
    end
    if layer._sublayers ~= Layer._sublayers then subs = layer:_sublayers() end
    for _, sub in ipairs(subs) do gather(sub, tr, nt, seen, frozen, visiting) end
  end

  local function weights(self)
    local tr, nt = {}, {}
    gather(self, tr, nt, {}, false, {})
    return tr, nt
  end

  PROPS.trainable_variables = function(self) return (weights(self)) end
  PROPS.non_trainable_variables = function(self) local _, nt = weights(self); return nt end
  PROPS.variables = function(self)
    local tr, nt = weights(self)
    for _, v in ipairs(nt) do tr[#tr + 1] = v end
    return tr
  end
  PROPS.trainable_weights = PROPS.trainable_variables
  PROPS.non_trainable_weights = PROPS.non_trainable_variables
  PROPS.weights = PROPS.variables
  PROPS.dtype = function(self) return rawget(self, "_dtype") end
  PROPS.variable_dtype = PROPS.dtype
  PROPS.compute_dtype = function(self) return rawget(self, "_compute_dtype") or rawget(self, "_dtype") end
  --- layer.dtype_policy: the tf.keras.mixed_precision.Policy (once that module is loaded)
  PROPS.dtype_policy = function(self)
    local p = rawget(self, "_policy")
    if p then return p end
    local mp = keras.mixed_precision
    return mp and mp.Policy(rawget(self, "_dtype").name) or nil
  end

  --- The number of scalars in the layer's variables.
  function Layer.count_params(self)
    local n = 0
    for _, v in ipairs(self.variables) do n = n + (v.shape:num_elements() or 0) end
    return n
  end

  --- Values of the variables (eager tensors), in `variables` order.
  function Layer.get_weights(self)
    local out = {}
    for i, v in ipairs(self.variables) do out[i] = v:value() end
    return out
  end

  --- Assign values to the variables, in `variables` order.
  function Layer.set_weights(self, values)
    local vars = self.variables
    if #values ~= #vars then
      raise("ValueError", sfmt("set_weights: layer \"%s\" has %d weights, but %d values were given",
        self.name, #vars, #values), 2)
    end
    for i, v in ipairs(vars) do v:assign(values[i]) end
  end
  -- }====

  -- {==== calling
  local function shape_of(x)
    if tf.is_tensor(x) then return x.shape end
    if is_variable(x) then return x.shape end
    if type(x) == "table" then
      local out = {}
      for k, v in pairs(x) do out[k] = shape_of(v) end
      return out
    end
    return nil
  end

  -- Inputs: tensors pass, variables are read, nested Lua numbers become a
  -- tensor; floating inputs are cast to the layer's dtype (Keras's autocast).
  local function to_input(self, x)
    if is_variable(x) then x = x:value() end
    if tf.is_tensor(x) then
      local dt = x.dtype
      local cdt = self.compute_dtype
      if dt.is_floating and dt ~= cdt then x = tf.cast(x, cdt) end
      return x
    end
    if type(x) == "table" and getmetatable(x) ~= nil then
      local what = rawget(x, "_keras_layer") and sfmt("a layer (%s \"%s\")", x._class_name, x.name) or
        (getmetatable(x).__name or "an object")
      raise("TypeError", sfmt("layer \"%s\" (%s): expected a tensor input, got %s", self.name, self._class_name,
        what))
    end
    if type(x) == "table" then
      -- a table of tensors (several inputs) vs nested Lua numbers
      local first = x[1]
      if first == nil then first = select(2, next(x)) end
      if tf.is_tensor(first) or is_variable(first) or (type(first) == "table" and not is_plain(first)) then
        local out = {}
        for k, v in pairs(x) do out[k] = to_input(self, v) end
        return out
      end
    end
    if type(x) == "number" or type(x) == "table" then
      local t = tf.constant(x)
      if t.dtype.is_floating and t.dtype ~= self.compute_dtype then t = tf.cast(t, self.compute_dtype) end
      return t
    end
    return x
  end

  -- "(None, 26, 26, 16)": the output shape with the batch dimension unknown.
  local function shape_text(s)
    local dims = s:as_list()
    if dims == nil then return "<unknown>" end
    local parts = {}
    for i, d in ipairs(dims) do parts[i] = (i == 1 or d < 0) and "None" or tostring(d) end
    if #parts == 1 then return "(" .. parts[1] .. ",)" end
    return "(" .. table.concat(parts, ", ") .. ")"
  end

  -- Remember the output shape for summaries (the batch shown as None). A
  -- later call whose dims agree where both are known keeps the more general
  -- shape (a model built for (None, None, 1) then called on 28x28 images
  -- still shows None); dims that differ, or another rank, make "multiple".
  local function record_dims(self, dims)
    local last = rawget(self, "_output_dims")
    if last == nil then
      if dims then dims[1] = -1 end
      rawset(self, "_output_dims", dims)
      rawset(self, "_output_shape_text", dims and shape_text(tf.TensorShape(dims)) or "<unknown>")
      return
    end
    if dims == nil or #dims ~= #last then rawset(self, "_output_shape_text", "multiple"); return end
    local changed = false
    for i = 2, #dims do
      local a, b = last[i], dims[i]
      if a >= 0 and b >= 0 and a ~= b then rawset(self, "_output_shape_text", "multiple"); return end
      if a >= 0 and b < 0 then last[i] = -1; changed = true end
    end
    if changed then rawset(self, "_output_shape_text", shape_text(tf.TensorShape(last))) end
  end

  local function record_output(self, out)
    if rawget(self, "_output_shape_text") == "multiple" then return end
    if not tf.is_tensor(out) then rawset(self, "_output_shape_text", "multiple"); return end
    record_dims(self, out:_dims())
  end
  --- Record an output shape computed without a call (Sequential's build).
  function Layer._record_output_shape(self, shape)
    if rawget(self, "_output_shape_text") == "multiple" then return end
    record_dims(self, shape:as_list())
  end

  --- Build the layer once, from the input shape (a TensorShape, or a table
  -- of them for several inputs).
  function Layer._maybe_build(self, input_shape)
    if self.built then return end
    local build = self.build
    if build then build(self, input_shape) end
    rawset(self, "built", true)
  end

  -- {==== masks (Keras's _keras_mask): a boolean tensor attached to a
  -- tensor, kept in a weak-keyed table of this lua_State's tf (a tensor
  -- object cannot hold fields). A layer's call gets its input's mask as
  -- opts.mask; its output gets self:compute_mask(inputs, mask).
  local masks = setmetatable({}, {__mode = "k"})
  --- The mask attached to tensor `t` (nil when none); a table of tensors
  -- gives a table of their masks (nil when none has one).
  local function get_mask(t)
    if type(t) == "table" and getmetatable(t) == nil then
      local out, any = {}, false
      for k, v in pairs(t) do
        local m = get_mask(v)
        if m ~= nil then out[k] = m; any = true end
      end
      return any and out or nil
    end
    if t == nil then return nil end
    return masks[t]
  end
  --- Attach mask `m` (or nil) to tensor `t` (or the matching entries of a
  -- table of tensors); returns t.
  local function set_mask(t, m)
    if type(t) == "table" and getmetatable(t) == nil then
      local per = type(m) == "table" and getmetatable(m) == nil   -- a table of masks: entry k (nil: none)
      for k, v in pairs(t) do
        local mk = m
        if per then mk = m[k] end
        set_mask(v, mk)
      end
      return t
    end
    if t ~= nil and (type(t) == "userdata" or type(t) == "table") then masks[t] = m end
    return t
  end
  tf.core.internal.keras.get_mask = get_mask
  tf.core.internal.keras.set_mask = set_mask

  --- Layer.supports_masking (false by default): a layer that passes its
  -- input's mask through unchanged sets it to true.
  Layer.supports_masking = false
  --- compute_mask(inputs, mask): the output's mask. The default passes the
  -- mask through when the layer supports masking, and drops it otherwise.
  function Layer.compute_mask(self, _, mask)
    if self.supports_masking then return mask end
    return nil
  end
  -- }====

  -- {==== losses (Keras's add_loss / losses): activity losses of the last
  -- call and weight regularization computed from the current values each
  -- time `losses` is read. Each outermost layer call gets a number; a layer
  -- first called within a new outermost call drops its earlier losses (a
  -- layer called twice in one keeps both), and `losses` lists a sublayer's
  -- only when they come from the same outermost call as the layer's own.
  -- The depth of layer calls is kept per coroutine: an error inside a
  -- coroutine (tf.fn traces in one) leaves its to-be-closed guard unclosed,
  -- so a count shared by all would stay raised.
  local call_depth = setmetatable({}, {__mode = "k"})
  local outer_count = 0
  local Guard = {__close = function(g) call_depth[g.co] = call_depth[g.co] - 1 end}

  -- self and its sublayers (each once), depth first in tracking order
  local function flatten_layers(layer, out, seen)
    if seen[layer] then return out end
    seen[layer] = true
    out[#out + 1] = layer
    for _, sub in ipairs(layer:_sublayers()) do flatten_layers(sub, out, seen) end
    return out
  end

  --- self:add_loss(t): t a scalar tensor (or number) computed in call, or a
  -- function of no arguments evaluated each time `losses` is read.
  function Layer.add_loss(self, t)
    if not (tf.is_tensor(t) or type(t) == "number" or type(t) == "function" or is_variable(t)) then
      raise("TypeError", sfmt("add_loss: layer \"%s\": expected a tensor, a number or a function, got %s", self.name,
        type(t)), 2)
    end
    if type(t) == "function" then
      local cl = rawget(self, "_callable_losses")
      if not cl then cl = {}; rawset(self, "_callable_losses", cl) end
      cl[#cl + 1] = t
      return
    end
    local l = rawget(self, "_call_losses")
    if not l then l = {}; rawset(self, "_call_losses", l) end
    if type(t) == "number" then t = tf.constant(t, tf.float32) end
    l[#l + 1] = t
  end

  --- The activity regularizer's penalty of `out` (each tensor of a table),
  -- divided by the batch size as Keras does, added with add_loss. The base
  -- applies it after call unless call did (layers call it on their output).
  function Layer._activity_regularize(self, out)
    rawset(self, "_activity_done", true)
    local reg = rawget(self, "activity_regularizer")
    if reg == nil then return out end
    local function one(t)
      if not tf.is_tensor(t) then return end
      local loss = reg(t)
      if t.rank == 0 then self:add_loss(loss); return end   -- no batch axis
      local n = tf.cast(tf.shape(t)[1], loss.dtype)
      self:add_loss(loss / n)
    end
    if tf.is_tensor(out) then one(out) elseif type(out) == "table" then walk(out, one, {}) end
    return out
  end

  -- layer.losses: the penalties of this layer and its sublayers (scalars)
  PROPS.losses = function(self)
    local out = {}
    -- activity losses of a finished trace (a call inside tf.fn) are not
    -- values outside it: read eagerly, only eager ones are listed
    local eager = not tf.core.is_tracing()
    local outer = rawget(self, "_outer")
    for _, layer in ipairs(flatten_layers(self, {}, {})) do
      if rawget(layer, "_outer") == outer then
        for _, t in ipairs(rawget(layer, "_call_losses") or {}) do
          if not (eager and tf.is_tensor(t) and t:is_symbolic()) then out[#out + 1] = t end
        end
      end
      for _, f in ipairs(rawget(layer, "_callable_losses") or {}) do out[#out + 1] = tf.convert_to_tensor(f()) end
      for _, w in ipairs(layer._weights) do
        if w.regularizer then out[#out + 1] = w.regularizer(w.var:value()) end
      end
    end
    return out
  end
  -- }====

  local function run_call(self, call, inputs, opts)
    if type(call) ~= "function" and type(call) == "table" and call._names and not call._vararg and #call._names < 3 then
      -- a tf.fn-decorated call(self, inputs): tf.fn binds its arguments
      -- strictly, so the options go only to a call that takes them (as
      -- Keras passes `training` only to a call whose signature has it)
      return call(self, inputs)
    end
    return call(self, inputs, opts)
  end

  --- layer(inputs [, {training = bool, mask = tensor}])
  function Layer.__call_layer(self, inputs, opts)
    local K = tf.core.internal.keras
    if K.call_symbolic and (K.has_keras_tensor(inputs) or K.has_keras_tensor(opts)) then
      return K.call_symbolic(self, inputs, opts)      -- functional API: KerasTensors in, KerasTensors out
    end
    local co = coroutine.running()
    local depth = call_depth[co] or 0
    if depth == 0 then outer_count = outer_count + 1 end
    if rawget(self, "_outer") ~= outer_count then
      rawset(self, "_outer", outer_count)
      rawset(self, "_call_losses", nil)
    end
    call_depth[co] = depth + 1
    local _ <close> = setmetatable({co = co}, Guard)
    if opts ~= nil and (type(opts) ~= "table" or tf.is_tensor(opts)) then
      raise("TypeError", sfmt("layer \"%s\": the second argument must be an options table {training = bool}, got %s",
        self.name, type(opts)), 3)
    end
    opts = opts or {}
    local mask = opts.mask
    if mask == nil then
      mask = get_mask(inputs)
      if mask ~= nil then
        local o = {}
        for k, v in pairs(opts) do o[k] = v end
        o.mask = mask
        opts = o
      end
    end
    inputs = to_input(self, inputs)
    if depth == 0 and rawget(self, "_saved_input_spec") == nil and tf.is_tensor(inputs) then
      -- the spec tf.saved_model.save traces a model's call for (batch dimension unknown)
      local dims = inputs:_dims()
      if dims and #dims > 0 then
        dims = {table.unpack(dims)}
        dims[1] = -1
        rawset(self, "_saved_input_spec", tf.TensorSpec(dims, inputs.dtype))
      end
    end
    if not self.built then self:_maybe_build(shape_of(inputs)) end
    local call = self.call
    if not call then
      raise("UnimplementedError", sfmt("layer \"%s\" (%s) has no call method", self.name, self._class_name), 3)
    end
    local out
    rawset(self, "_activity_done", false)
    local ac = tf.Variable.autocast
    local prev = ac.dtype
    local want
    if ac.count > 0 then
      -- mixed precision: autocast variables read as this layer's compute dtype
      -- in its call (none for a layer that sets _autocast_variables = false)
      want = self._autocast_variables ~= false and self.compute_dtype or nil
      if want and not want.is_floating then want = nil end
    end
    if want ~= prev then
      ac.dtype = want
      local ok, res = pcall(run_call, self, call, inputs, opts)
      ac.dtype = prev
      if not ok then error(res, 0) end
      out = res
    else
      out = run_call(self, call, inputs, opts)
    end
    if rawget(self, "activity_regularizer") ~= nil and not rawget(self, "_activity_done") then
      self:_activity_regularize(out)
    end
    record_output(self, out)
    local out_mask = self:compute_mask(inputs, mask)
    if out_mask ~= nil or mask ~= nil then set_mask(out, out_mask) end
    return out
  end

  --- The default build does nothing (variables may be made in init).
  function Layer.build(_, _) end

  --- Check the input's rank against the layer's expectation; a ValueError
  -- naming the layer and the shape (Keras's InputSpec message).
  -- spec: {ndim =, min_ndim =, axes = {[axis] = size}}
  function Layer._check_input(self, x, spec, idx)
    local dims = x:_dims()
    if dims == nil then return end
    local n = #dims
    local head = sfmt("Input %d of layer \"%s\" is incompatible with the layer: ", idx or 0, self.name)
    if spec.ndim and n ~= spec.ndim then
      raise("ValueError", sfmt("%sexpected ndim=%d, found ndim=%d. Full shape received: %s", head, spec.ndim, n,
        tostring(x.shape)), 4)
    end
    if spec.min_ndim and n < spec.min_ndim then
      raise("ValueError", sfmt("%sexpected min_ndim=%d, found ndim=%d. Full shape received: %s", head,
        spec.min_ndim, n, tostring(x.shape)), 4)
    end
    if spec.axes then
      for axis, size in pairs(spec.axes) do
        local d = dims[axis < 0 and n + 1 + axis or axis]
        if d and d >= 0 and d ~= size then
          raise("ValueError", sfmt("%sexpected axis %d of input shape to have value %d, but received input with " ..
            "shape %s", head, axis, size, tostring(x.shape)), 4)
        end
      end
    end
  end
  -- }====

  -- {==== checkpoints (the contract's _checkpoint_children)
  local function has_trackable(v)
    local found = false
    walk(v, function(leaf)
      if is_variable(leaf) or is_layer(leaf) or
         (type(leaf) == "table" and type(leaf._checkpoint_children) == "function") then
        found = true
      end
    end, {})
    return found
  end

  --- Children for checkpoints: add_weight's variables by their names
  -- (kernel, bias, ...), then attributes holding variables, layers,
  -- checkpointable objects or tables of them, by attribute name.
  function Layer._checkpoint_children(self)
    local out, seen = {}, {}
    for _, w in ipairs(self._weights) do
      if not seen[w.var] then seen[w.var] = true; out[#out + 1] = {w.name, w.var} end
    end
    for _, k in ipairs(self._attr_order) do
      local v = rawget(self, k)
      if type(k) == "string" and v ~= nil and v ~= self and not seen[v] and
         (is_variable(v) or is_layer(v) or has_trackable(v)) then
        seen[v] = true
        out[#out + 1] = {k, v}
      end
    end
    return out
  end
  -- }====

  --- tostring(layer): one line, `Dense(units=10, activation=relu)`; the
  -- arguments come from the class's _repr_args (else the layer's name).
  local function repr_value(v)
    if type(v) == "table" and getmetatable(v) == nil then
      local parts = {}
      for i, x in ipairs(v) do parts[i] = repr_value(x) end
      return "{" .. table.concat(parts, ", ") .. "}"
    elseif type(v) == "function" then
      return keras.activations.serialize(v) or "function"
    end
    return tostring(v)
  end
  function Layer.__tostring_layer(self)
    local keys = self._repr_args
    local parts = {}
    if keys then
      for _, k in ipairs(keys) do
        local v = rawget(self, k)
        if v ~= nil then parts[#parts + 1] = k .. "=" .. repr_value(v) end
      end
    else
      parts[1] = "name=" .. self.name
    end
    return sfmt("%s(%s)", self._class_name, table.concat(parts, ", "))
  end

  -- {==== configs
  --- layer:get_config(): a plain table of the constructor's keyword
  -- arguments (Keras names), enough for `Class.from_config(config)` to make
  -- an equal, unbuilt layer. The base has name, trainable and dtype; a
  -- subclass adds its own (`local c = Parent.get_config(self); c.units = ...`).
  function Layer.get_config(self)
    local p = rawget(self, "_policy")
    local dtype = rawget(self, "_dtype").name
    if p and rawget(self, "_compute_dtype") ~= rawget(self, "_dtype") then dtype = p.name end
    local c = {name = self.name, trainable = self.trainable, dtype = dtype}
    local ar = rawget(self, "activity_regularizer")
    if ar ~= nil then c.activity_regularizer = keras.regularizers.serialize(ar) end
    return c
  end
  -- }====

  -- The root class: Layer itself is made like its subclasses.
  local Base = make_class(nil, "Layer", Layer)
  keras.layers = keras.layers or {}
  keras.layers.Layer = Base
  keras.Layer = Base
  tf.core.internal.keras.layer_props = PROPS
  tf.core.internal.keras.shape_text = shape_text
end
