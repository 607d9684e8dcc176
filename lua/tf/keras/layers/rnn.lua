--- Recurrent layers: the RNN base (tf.keras.layers.RNN), StackedRNNCells,
-- SimpleRNNCell and SimpleRNN.
--
-- A cell (Keras's contract) is a layer with `state_size` (a number or an
-- array of numbers), `output_size`, and `cell:call(x_t, states, opts)`
-- returning `output, new_states` (states an array of (batch, n) tensors);
-- it is built with the shape (batch, features). The RNN base resolves all
-- that is generic (rank checks, time_major, initial states, masks,
-- return_sequences / return_state, stateful variables) and runs the
-- sequence through one hook, `self:_run(x, states, mask, training)`, that
-- LSTM and GRU override with their fused ops. The default hook loops the
-- cell over time in Lua: unrolled when the number of steps is known (also
-- while tf.fn traces), a tf.while_loop over TensorArrays when it is not
-- (an Input of shape {nil, 8} in a graph).
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local K = tf.core.internal.keras
  local raise = K.raise
  local is_layer = K.is_layer
  local is_variable = tf.is_variable
  local sfmt = string.format
  local A = keras.activations
  local U = require("tf.keras.layers.util")(tf)

  local function is_plain(v) return type(v) == "table" and getmetatable(v) == nil end

  local function concat(...)
    local out = {}
    for _, t in ipairs({...}) do for _, v in ipairs(t) do out[#out + 1] = v end end
    return out
  end

  -- {==== helpers shared with lstm.lua / gru.lua (as L.RNN._util)
  local H = {}
  H.concat = concat

  --- The cell's state sizes as an array of numbers.
  function H.state_sizes(cell)
    local s = cell.state_size
    if type(s) == "number" then return {s} end
    if is_plain(s) then return s end
    raise("ValueError", sfmt("The RNN cell should have a `state_size` attribute (an integer or a table of integers, " ..
      "one per state). Received: cell=%s", tostring(cell)))
  end

  --- The cell's output size (its first state size when it has none).
  function H.output_size(cell)
    local o = cell.output_size
    if type(o) == "number" then return o end
    return H.state_sizes(cell)[1]
  end

  --- Zeros of shape (batch, n) whose batch is x's first dimension (x
  -- batch-major, rank 3): from the static batch when known, else built
  -- from x itself so that an unknown batch works while tracing.
  function H.zeros_like_batch(x, n, dtype)
    dtype = dtype or x.dtype
    local dims = x:_dims()
    local b = dims and dims[1]
    if b and b >= 0 then return tf.zeros({b, n}, dtype) end
    local col = tf.reshape(tf.zeros_like(x[{{}, 1, 1}]), {-1, 1})
    if col.dtype ~= dtype then col = tf.cast(col, dtype) end
    return col + tf.zeros({n}, dtype)
  end

  -- The mask as bool [batch, time] (nil stays nil; a table of masks: the
  -- first, as Keras).
  function H.bool_mask(mask)
    if is_plain(mask) then mask = mask[1] end
    if mask ~= nil and mask.dtype ~= tf.bool then mask = tf.cast(mask, tf.bool) end
    return mask
  end

  -- Build `cell` for input shape `shape` with its weights named
  -- "<prefix>/<cell>/<weight>" (Keras's name scopes: simple_rnn/simple_rnn_cell/kernel).
  function H.build_cell(cell, prefix, shape)
    if is_layer(cell) then
      if cell.built then return end
      local name = cell.name
      rawset(cell, "name", prefix .. "/" .. name)
      local ok, err = pcall(cell._maybe_build, cell, shape)
      rawset(cell, "name", name)
      if not ok then error(err, 0) end
    elseif type(cell.build) == "function" then
      cell:build(shape)
    end
  end

  -- While a graph loop runs the cell, its variables (and its sublayers')
  -- are replaced by their values read once before the loop: one read per
  -- call instead of one per step (faster). Gradients do not depend on it:
  -- a variable read inside a tf.while_loop body gets its gradient too.
  -- Returns a function that puts the variables back.
  function H.read_variables(layer)
    local saved, seen = {}, {}
    local function visit(l)
      if seen[l] then return end
      seen[l] = true
      for _, k in ipairs(rawget(l, "_attr_order") or {}) do
        local v = rawget(l, k)
        if is_variable(v) then
          saved[#saved + 1] = {l, k, v}
          rawset(l, k, v:value())
        elseif is_layer(v) then
          visit(v)
        elseif is_plain(v) then
          for _, e in ipairs(v) do if is_layer(e) then visit(e) end end
        end
      end
    end
    if is_layer(layer) then visit(layer) end
    return function()
      for i = #saved, 1, -1 do
        local s = saved[i]
        rawset(s[1], s[2], s[3])
      end
    end
  end

  -- A config entry for an activation, initializer, regularizer or
  -- constraint `v` (as the user gave it: a name, an object or a function).
  -- With `key` ("kernel_initializer", "bias_regularizer", ...) the value
  -- goes through that module's serialize when it has one (Keras's
  -- {class_name =, config =}); otherwise it is kept as given (it
  -- round-trips through from_config either way). An activation function
  -- becomes its name.
  local KINDS = {initializer = "initializers", regularizer = "regularizers", constraint = "constraints"}
  function H.config_value(v, key)
    if v == nil then return nil end
    local kind = type(key) == "string" and KINDS[key:match("_(%a+)$") or ""]
    local m = kind and keras[kind]
    if m and type(m.serialize) == "function" and type(m.get) == "function" then return m.serialize(m.get(v)) end
    if type(v) == "function" then return A.serialize(v) or v end
    return v
  end

  --- The input and the initial states of an RNN layer's call: layer(x,
  -- {initial_state = {...}}) or layer({x, h, ...}) (the states after x).
  function H.split_states(inputs, opts)
    local x, given = inputs, opts.initial_state
    if is_plain(inputs) then
      x = inputs[1]
      if #inputs > 1 then given = {table.unpack(inputs, 2)} end
    end
    return x, given
  end

  --- The weight and dropout keywords every cell shares (SimpleRNNCell,
  -- LSTMCell, GRUCell): `given` holds the three initializers as given; the
  -- regularizers and constraints are added, all kept as given in
  -- self._given (for get_config) and set on self (initializers resolved);
  -- dropout rates checked (nil is 0; Keras clips them to [0, 1]).
  function H.cell_weight_settings(self, cname, opts, given)
    local function rate(arg, v)
      if v == nil then return 0 end
      if type(v) ~= "number" or v ~= v then
        raise("ValueError", sfmt("%s: '%s' must be a number in [0, 1], got %s", cname, arg, tostring(v)))
      end
      return math.min(1, math.max(0, v))   -- Keras clips it
    end
    for _, k in ipairs({"kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "kernel_constraint",
                        "recurrent_constraint", "bias_constraint"}) do
      given[k] = opts[k]
    end
    rawset(self, "_given", given)
    for k, v in pairs(given) do
      if k:match("_initializer$") then rawset(self, k, keras.initializers.get(v)) else rawset(self, k, v) end
    end
    self.dropout = rate("dropout", opts.dropout)
    self.recurrent_dropout = rate("recurrent_dropout", opts.recurrent_dropout)
    self.seed = opts.seed
  end

  --- Dropout masks for one RNN call, a cell's _prepare_dropout (Keras's
  -- DropoutRNNCellMixin: one mask per sequence, the same at every step and,
  -- in LSTM/GRU, for every gate). x: the RNN's input (batch, time,
  -- features), or nil to drop the masks.
  function H.prepare_dropout(self, x, training)
    rawset(self, "_dp_mask", nil)
    rawset(self, "_rdp_mask", nil)
    if x == nil or not training then return end
    local function mask(n, r)
      local ones = H.zeros_like_batch(x, n, x.dtype) + 1
      if r >= 1 then return tf.zeros_like(ones) end
      return tf.nn.dropout(ones, r, {seed = self.seed})
    end
    if self.dropout > 0 then rawset(self, "_dp_mask", mask(self.kernel.shape[1], self.dropout)) end
    if self.recurrent_dropout > 0 then rawset(self, "_rdp_mask", mask(self.units, self.recurrent_dropout)) end
  end
  -- }====

  -- {==== RNN
  local RNN = Layer:extend("RNN")
  L.RNN = RNN
  RNN._util = H
  RNN._repr_args = {"return_sequences", "return_state"}
  RNN.supports_masking = true
  --- The keyword arguments every RNN layer takes (subclasses add theirs).
  RNN.KEYS = {"return_sequences", "return_state", "go_backwards", "stateful", "unroll", "time_major",
              "zero_output_for_mask"}

  --- Apply the generic keywords (after self:_options has checked them).
  function RNN._rnn_options(self, opts)
    self.return_sequences = opts.return_sequences and true or false
    self.return_state = opts.return_state and true or false
    self.go_backwards = opts.go_backwards and true or false
    self.stateful = opts.stateful and true or false
    self.unroll = opts.unroll and true or false
    self.time_major = opts.time_major and true or false
    self.zero_output_for_mask = opts.zero_output_for_mask and true or false
  end

  local function check_cell(cell)
    if type(cell) ~= "table" or type(cell.call) ~= "function" then
      raise("ValueError", sfmt("RNN: argument `cell` should have a `call` method. The RNN was passed: cell=%s",
        tostring(cell)))
    end
    if cell.state_size == nil then
      raise("ValueError", sfmt("RNN: the RNN cell should have a `state_size` attribute (an integer or a table of " ..
        "integers, one per state). Received: cell=%s", tostring(cell)))
    end
    H.state_sizes(cell)
    return cell
  end

  --- RNN{cell, return_sequences=false, return_state=false, go_backwards=false,
  -- stateful=false, unroll=false, time_major=false, zero_output_for_mask=false}:
  -- runs `cell` over the time axis. `cell` may be an array of cells (a
  -- StackedRNNCells is made of them).
  function RNN.init(self, opts)
    opts = self:_options(opts, concat(RNN.KEYS, {"cell"}), 1)
    local cell = opts[1] or opts.cell
    if is_plain(cell) then cell = L.StackedRNNCells{cell} end
    self.cell = check_cell(cell)
    self:_rnn_options(opts)
  end

  local function shape_dims(input_shape)
    if is_plain(input_shape) then input_shape = input_shape[1] end
    if input_shape == nil then return nil end
    return input_shape:as_list(), input_shape
  end

  function RNN.build(self, input_shape)
    local dims, shape = shape_dims(input_shape)
    if dims == nil then return end
    if #dims ~= 3 then
      raise("ValueError", sfmt("Input 0 of layer \"%s\" is incompatible with the layer: expected ndim=3, found " ..
        "ndim=%d. Full shape received: %s", self.name, #dims, tostring(shape)))
    end
    local b, f = dims[1], dims[3]
    if self.time_major then b = dims[2] end
    if f < 0 then
      raise("ValueError", sfmt("layer \"%s\": the last dimension (features) of the inputs must be known. Full " ..
        "shape received: %s", self.name, tostring(shape)))
    end
    H.build_cell(self.cell, self.name, tf.TensorShape({b, f}))
    if b >= 0 then rawset(self, "_batch_size", b) end
    if self.stateful then self:reset_states() end
  end

  function RNN.compute_output_shape(self, shape)
    local d = shape:as_list()
    local b, t = d[1], d[2]
    if self.time_major then b, t = t, b end
    local n = H.output_size(self.cell)
    local out
    if self.return_sequences then
      out = self.time_major and tf.TensorShape({t, b, n}) or tf.TensorShape({b, t, n})
    else
      out = tf.TensorShape({b, n})
    end
    if not self.return_state then return out end
    local r = {out}
    for _, s in ipairs(H.state_sizes(self.cell)) do r[#r + 1] = tf.TensorShape({b, s}) end
    return r
  end

  --- The output's mask: the input's when return_sequences, else none; with
  -- return_state, a table {output mask} (the states have none).
  function RNN.compute_mask(self, _, mask)
    mask = H.bool_mask(mask)
    local om = nil
    if self.return_sequences then om = mask end
    if self.return_state then return {om} end
    return om
  end

  local BATCH_HELP = "If a RNN is stateful, it needs to know its batch size. Specify the batch size of your input " ..
    "tensors: \n- If using a Sequential model, specify the batch size by passing a `batch_input_shape` argument to " ..
    "your first layer.\n- If using the functional API, specify the batch size by passing a `batch_shape` argument " ..
    "to your Input layer."

  --- layer:reset_states([states]): sets a stateful layer's states to zeros
  -- (or to `states`, an array of tensors of shape (batch, n)).
  function RNN.reset_states(self, states)
    if not self.stateful then raise("AttributeError", "Layer must be stateful.") end
    local b = rawget(self, "_batch_size")
    if not b then raise("ValueError", BATCH_HELP) end
    local sizes = H.state_sizes(self.cell)
    local vars = rawget(self, "states")
    local dtype = self.variable_dtype or self.dtype
    if vars == nil then
      vars = {}
      for i, n in ipairs(sizes) do
        vars[i] = tf.Variable(function() return tf.zeros({b, n}, dtype) end,
                              {name = sfmt("%s/state_%d", self.name, i), trainable = false, dtype = dtype})
      end
      rawset(self, "states", vars)   -- not tracked: states are not weights (as Keras)
    end
    if states == nil then
      for i, n in ipairs(sizes) do vars[i]:assign(tf.zeros({b, n}, dtype)) end
      return
    end
    if tf.is_tensor(states) then states = {states} end
    if #states ~= #vars then
      raise("ValueError", sfmt("Layer %s expects %d states, but it received %d state values.", self.name, #vars,
        #states))
    end
    for i, v in ipairs(states) do
      if not tf.is_tensor(v) then v = tf.constant(v, dtype) end
      local d = v:_dims()
      if d == nil or #d ~= 2 or d[1] ~= b or d[2] ~= sizes[i] then
        raise("ValueError", sfmt("State %d is incompatible with layer %s: expected shape=(%d, %d) but found " ..
          "shape=%s", i, self.name, b, sizes[i], tostring(v.shape)))
      end
      vars[i]:assign(tf.cast(v, dtype))
    end
  end

  -- The initial states: given ones (checked), the stateful variables, or zeros.
  local function initial_states(self, x, given)
    local cell = self.cell
    local sizes = H.state_sizes(cell)
    local dtype = x.dtype
    if given ~= nil then
      if tf.is_tensor(given) or is_variable(given) then given = {given} end
      if #given ~= #sizes then
        raise("ValueError", sfmt("layer \"%s\": Layer has %d states but was passed %d initial states.", self.name,
          #sizes, #given))
      end
      local out = {}
      for i, s in ipairs(given) do
        if is_variable(s) then s = s:value() end
        if not tf.is_tensor(s) then s = tf.constant(s, dtype) end
        local d = s:_dims()
        if d and (#d ~= 2 or (d[2] >= 0 and d[2] ~= sizes[i])) then
          local parts = {}
          for k, n in ipairs(sizes) do parts[k] = tostring(n) end
          raise("ValueError", sfmt("layer \"%s\": An `initial_state` was passed that is not compatible with " ..
            "`cell.state_size`. Received initial state %d of shape %s; however `cell.state_size` is {%s}", self.name,
            i, tostring(s.shape), table.concat(parts, ", ")))
        end
        if s.dtype ~= dtype then s = tf.cast(s, dtype) end
        out[i] = s
      end
      given = out
    end
    if self.stateful then
      local vars = rawget(self, "states")
      local out = {}
      for i, v in ipairs(vars) do out[i] = tf.cast(v:value(), dtype) end
      if given then
        -- as Keras: the recorded states win unless they are all zeros
        local nz = tf.constant(0, tf.int64)
        for _, s in ipairs(out) do nz = nz + tf.reduce_sum(tf.cast(tf.not_equal(s, 0), tf.int64)) end
        local use = tf.greater(nz, 0)
        for i = 1, #out do out[i] = tf.where(use, out[i], given[i]) end
      end
      return out
    end
    if given then return given end
    local b = x:_dims()[1]
    if b >= 0 and type(cell.get_initial_state) == "function" then
      local st = cell:get_initial_state(b, dtype)
      if tf.is_tensor(st) then st = {st} end
      return st
    end
    local out = {}
    for i, n in ipairs(sizes) do out[i] = H.zeros_like_batch(x, n, dtype) end
    return out
  end

  --- layer:get_initial_state(inputs): the zero states for a batch of
  -- `inputs` (batch, time, features) (time-major when the layer is), an
  -- array of (batch, n) tensors (Keras's get_initial_state).
  function RNN.get_initial_state(self, inputs)
    if is_plain(inputs) then inputs = inputs[1] end
    if not tf.is_tensor(inputs) then inputs = tf.constant(inputs, self.compute_dtype or self.dtype) end
    if self.time_major then inputs = tf.transpose(inputs, {2, 1, 3}) end
    local out = {}
    for i, n in ipairs(H.state_sizes(self.cell)) do out[i] = H.zeros_like_batch(inputs, n, inputs.dtype) end
    return out
  end

  --- layer(x [, {initial_state = {h, ...}, training =, mask =}]), or
  -- layer({x, h, ...}): the last output (or the whole sequence with
  -- return_sequences), and with return_state an array {output, state...}.
  function RNN.call(self, inputs, opts)
    opts = opts or {}
    local x, given = H.split_states(inputs, opts)
    self:_check_input(x, {ndim = 3})
    local mask = H.bool_mask(opts.mask)
    if self.time_major then
      x = tf.transpose(x, {2, 1, 3})
      if mask ~= nil then mask = tf.transpose(mask, {2, 1}) end
    end
    local dims = x:_dims()
    if dims[2] < 0 and self.unroll then
      raise("ValueError", sfmt("layer \"%s\": Cannot unroll a RNN if the time dimension is undefined. \n- If " ..
        "using a Sequential model, specify the time dimension by passing an `input_shape` or `batch_input_shape` " ..
        "argument to your first layer. If your first layer is an Embedding, you can also use the `input_length` " ..
        "argument.\n- If using the functional API, specify the time dimension by passing a `shape` or " ..
        "`batch_shape` argument to your Input layer.", self.name))
    end
    if dims[2] == 0 then
      raise("ValueError", sfmt("layer \"%s\": the input has no timesteps. Full shape received: %s", self.name,
        tostring(x.shape)))
    end
    if self.stateful then
      local b = rawget(self, "_batch_size")
      if dims[1] >= 0 and dims[1] ~= b then
        raise("ValueError", sfmt("Input 0 of layer \"%s\" is incompatible with the layer: expected shape=(%d, " ..
          "None, %d), found shape=%s (a stateful RNN keeps the batch size it was built with; reset_states() " ..
          "does not change it)", self.name, b, dims[3], tostring(x.shape)))
      end
    end
    local states = initial_states(self, x, given)
    local cell = self.cell
    if type(cell._prepare_dropout) == "function" then cell:_prepare_dropout(x, opts.training) end
    local outputs, last, new_states = self:_run(x, states, mask, opts.training)
    if type(cell._prepare_dropout) == "function" then cell:_prepare_dropout(nil, false) end
    if self.stateful then
      local vars = rawget(self, "states")
      for i, v in ipairs(vars) do v:assign(tf.cast(new_states[i], v.dtype)) end
    end
    local out = last
    if self.return_sequences then
      out = outputs
      if self.time_major then out = tf.transpose(out, {2, 1, 3}) end
    end
    local result = out
    if self.return_state then
      result = {out}
      for i, s in ipairs(new_states) do result[i + 1] = s end
    end
    -- (the base layer's activity regularization, where it has one: every output, as Keras)
    if type(self._activity_regularize) == "function" and rawget(self, "activity_regularizer") ~= nil then
      self:_activity_regularize(result)
    end
    return result
  end

  -- One step of the cell: output, new states (an array).
  local function step(cell, xt, states, training)
    local out, ns = cell:call(xt, states, {training = training})
    if tf.is_tensor(ns) then ns = {ns} end
    if not is_plain(ns) then
      raise("ValueError", sfmt("RNN: the cell's call must return output, new_states (an array of tensors); " ..
        "got %s for the states", type(ns)))
    end
    return out, ns
  end

  --- The default hook: the cell looped over time. x (batch, time,
  -- features) in input order, states an array, mask nil or bool (batch,
  -- time). Returns outputs (batch, time, units) in processing order,
  -- the last output and the new states. At a masked step the states carry
  -- over and the output is the previous one (zeros with
  -- zero_output_for_mask), as Keras's backend.rnn.
  function RNN._run(self, x, states, mask, training)
    local cell = self.cell
    local zero_out = self.zero_output_for_mask
    if self.go_backwards then
      x = tf.reverse(x, {2})
      if mask ~= nil then mask = tf.reverse(mask, {2}) end
    end
    local T = x:_dims()[2]
    if T >= 0 then
      -- the number of steps is known: unroll (eagerly, or into the trace)
      local xs = tf.unstack(x, {axis = 2})
      local ms = mask and tf.unstack(tf.expand_dims(mask, -1), {axis = 2})
      local outs, prev = {}, nil
      for t = 1, T do
        local out, ns = step(cell, xs[t], states, training)
        if ms then
          local m = ms[t]
          for i = 1, #ns do ns[i] = tf.where(m, ns[i], states[i]) end
          local keep = (zero_out or prev == nil) and tf.zeros_like(out) or prev
          out = tf.where(m, out, keep)
        end
        outs[t], prev, states = out, out, ns
      end
      return tf.stack(outs, {axis = 2}), outs[T], states
    end
    -- unknown number of steps (a graph): tf.while_loop over TensorArrays
    local xt = tf.transpose(x, {2, 1, 3})
    local n = tf.shape(xt)[1]
    local in_ta = tf.TensorArray{dtype = x.dtype}:unstack(xt)
    -- the mask rides in x's dtype: a bool TensorArray read in a loop breaks
    -- the loop's gradient (bool gradients get summed)
    local m_ta = mask and tf.TensorArray{dtype = x.dtype}:unstack(
      tf.stop_gradient(tf.cast(tf.expand_dims(tf.transpose(mask, {2, 1}), -1), x.dtype)))
    local osize = H.output_size(cell)
    local out_ta = tf.TensorArray{dtype = x.dtype}:unstack(
      tf.expand_dims(tf.zeros_like(xt[{{}, {}, 1}]), -1) + tf.zeros({osize}, x.dtype))
    local prev0 = H.zeros_like_batch(x, osize, x.dtype)
    local nstates = #states
    local function body(i, ota, prev, ...)
      local st = {...}
      local out, ns = step(cell, in_ta:read(i), st, training)
      if m_ta then
        local m = tf.cast(m_ta:read(i), tf.bool)
        for k = 1, #ns do ns[k] = tf.where(m, ns[k], st[k]) end
        out = tf.where(m, out, zero_out and tf.zeros_like(out) or prev)
      end
      if #ns ~= nstates then
        raise("ValueError", sfmt("RNN: the cell returned %d states, it has %d", #ns, nstates))
      end
      return {i + 1, ota:write(i, out), out, table.unpack(ns, 1, nstates)}
    end
    local restore = H.read_variables(cell)
    local ok, r = pcall(tf.while_loop, function(i) return tf.less_equal(i, n) end, body,
                        {tf.constant(1), out_ta, prev0, table.unpack(states, 1, nstates)})
    restore()
    if not ok then error(r, 0) end
    local new_states = {}
    for k = 1, nstates do new_states[k] = r[3 + k] end
    return tf.transpose(r[2]:stack(), {2, 1, 3}), r[3], new_states
  end

  -- (class_name, config) of a layer, and back
  local function serialize(layer)
    return {class_name = layer._class_name, config = layer:get_config()}
  end
  H.serialize = serialize
  local function deserialize(c, custom_objects)
    if is_layer(c) then return c end
    if type(c) ~= "table" or type(c.class_name) ~= "string" then
      raise("ValueError", sfmt("from_config: expected a layer or {class_name =, config =}, got %s", tostring(c)))
    end
    local cls = (custom_objects and custom_objects[c.class_name]) or L[c.class_name]
    if cls == nil then
      raise("ValueError", sfmt("from_config: unknown layer class '%s' (pass it in custom_objects)", c.class_name))
    end
    return cls.from_config(c.config)
  end
  H.deserialize = deserialize

  function RNN.get_config(self)
    local c = Layer.get_config(self)
    c.return_sequences, c.return_state, c.go_backwards = self.return_sequences, self.return_state, self.go_backwards
    c.stateful, c.unroll, c.time_major = self.stateful, self.unroll, self.time_major
    if self.zero_output_for_mask then c.zero_output_for_mask = true end
    c.cell = serialize(self.cell)
    return c
  end

  --- RNN.from_config(config [, custom_objects]): the cell comes from
  -- config.cell ({class_name =, config =}; custom cell classes by name in
  -- custom_objects).
  function RNN.from_config(a, b, c)
    local config, custom = a, b
    if a == RNN then config, custom = b, c end
    local copy = {}
    for k, v in pairs(config) do copy[k] = v end
    copy.cell = deserialize(config.cell, custom)
    return RNN(copy)
  end
  -- }====

  -- {==== StackedRNNCells
  local Stacked = Layer:extend("StackedRNNCells")
  L.StackedRNNCells = Stacked
  --- StackedRNNCells{{cell1, cell2, ...}} (or StackedRNNCells{cells = {...}}):
  -- the cells applied one after another at each step; its states are
  -- all the cells' states, in order.
  function Stacked.init(self, opts)
    opts = self:_options(opts, {"cells"}, 1)
    local cells = opts[1] or opts.cells
    if not is_plain(cells) or #cells == 0 then
      raise("ValueError", sfmt("StackedRNNCells: 'cells' must be a non-empty array of cells, got %s",
        tostring(cells)))
    end
    local sizes, counts = {}, {}
    for i, c in ipairs(cells) do
      check_cell(c)
      local s = H.state_sizes(c)
      counts[i] = #s
      for _, n in ipairs(s) do sizes[#sizes + 1] = n end
    end
    self.cells = cells
    rawset(self, "state_size", sizes)
    rawset(self, "_counts", counts)
    rawset(self, "output_size", H.output_size(cells[#cells]))
  end

  function Stacked.build(self, input_shape)
    local d = input_shape:as_list()
    local b, f = d[1], d[2]
    for _, c in ipairs(self.cells) do
      H.build_cell(c, self.name, tf.TensorShape({b, f}))
      f = H.output_size(c)
    end
  end

  function Stacked.call(self, x, states, opts)
    local all, pos = {}, 0
    for i, c in ipairs(self.cells) do
      local sub = {}
      for k = 1, self._counts[i] do sub[k] = states[pos + k] end
      pos = pos + self._counts[i]
      local ns
      x, ns = step(c, x, sub, opts and opts.training)
      for _, s in ipairs(ns) do all[#all + 1] = s end
    end
    return x, all
  end

  function Stacked.get_initial_state(self, batch_size, dtype)
    local all = {}
    for _, c in ipairs(self.cells) do
      local st
      if type(c.get_initial_state) == "function" then
        st = c:get_initial_state(batch_size, dtype)
        if tf.is_tensor(st) then st = {st} end
      else
        st = {}
        for k, n in ipairs(H.state_sizes(c)) do st[k] = tf.zeros({batch_size, n}, dtype) end
      end
      for _, s in ipairs(st) do all[#all + 1] = s end
    end
    return all
  end

  function Stacked._prepare_dropout(self, x, training)
    for _, c in ipairs(self.cells) do
      if type(c._prepare_dropout) == "function" then c:_prepare_dropout(x, training) end
    end
  end

  function Stacked.get_config(self)
    local c = Layer.get_config(self)
    local cells = {}
    for i, cell in ipairs(self.cells) do cells[i] = serialize(cell) end
    c.cells = cells
    return c
  end

  function Stacked.from_config(a, b, c)
    local config, custom = a, b
    if a == Stacked then config, custom = b, c end
    local copy = {}
    for k, v in pairs(config) do copy[k] = v end
    local cells = {}
    for i, cc in ipairs(config.cells or config[1] or {}) do cells[i] = deserialize(cc, custom) end
    copy.cells, copy[1] = cells, nil
    return Stacked(copy)
  end
  -- }====

  -- {==== SimpleRNNCell, SimpleRNN
  local CELL_KEYS = {"units", "activation", "use_bias", "kernel_initializer", "recurrent_initializer",
                     "bias_initializer", "kernel_regularizer", "recurrent_regularizer", "bias_regularizer",
                     "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout", "recurrent_dropout",
                     "seed"}

  local SimpleRNNCell = Layer:extend("SimpleRNNCell")
  L.SimpleRNNCell = SimpleRNNCell
  SimpleRNNCell._repr_args = {"units"}

  -- The cell keywords shared by SimpleRNNCell and SimpleRNN (as given, for configs).
  local function cell_settings(self, opts, cname)
    self.units = U.positive_int(cname, "units", opts[1] or opts.units)
    rawset(self, "_activation_arg", opts.activation == nil and "tanh" or opts.activation)
    self.activation = A.get(self._activation_arg)
    self.use_bias = opts.use_bias ~= false
    local given = {}
    for _, k in ipairs({"kernel_initializer", "recurrent_initializer", "bias_initializer"}) do
      given[k] = opts[k]
    end
    given.kernel_initializer = given.kernel_initializer or "glorot_uniform"
    given.recurrent_initializer = given.recurrent_initializer or "orthogonal"
    given.bias_initializer = given.bias_initializer or "zeros"
    H.cell_weight_settings(self, cname, opts, given)
  end

  --- SimpleRNNCell{units, activation="tanh", use_bias=true,
  -- kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
  -- bias_initializer="zeros", *_regularizer=, *_constraint=, dropout=0,
  -- recurrent_dropout=0, seed=}: h' = activation(x W + b + h U).
  function SimpleRNNCell.init(self, opts)
    opts = self:_options(opts, CELL_KEYS, 1)
    cell_settings(self, opts, "SimpleRNNCell")
    rawset(self, "state_size", self.units)
    rawset(self, "output_size", self.units)
  end

  function SimpleRNNCell.build(self, input_shape)
    local f = input_shape[-1]
    if not f then
      raise("ValueError", sfmt("layer \"%s\": the last dimension of the inputs must be known, got %s", self.name,
        tostring(input_shape)))
    end
    self.kernel = self:add_weight("kernel", {f, self.units}, {initializer = self.kernel_initializer,
      regularizer = self.kernel_regularizer, constraint = self.kernel_constraint})
    self.recurrent_kernel = self:add_weight("recurrent_kernel", {self.units, self.units},
      {initializer = self.recurrent_initializer, regularizer = self.recurrent_regularizer,
       constraint = self.recurrent_constraint})
    if self.use_bias then
      self.bias = self:add_weight("bias", {self.units}, {initializer = self.bias_initializer,
        regularizer = self.bias_regularizer, constraint = self.bias_constraint})
    end
  end

  function SimpleRNNCell.get_initial_state(self, batch_size, dtype)
    if tf.is_tensor(batch_size) then batch_size = batch_size:item() end
    return {tf.zeros({batch_size, self.units}, dtype or self.dtype)}
  end

  SimpleRNNCell._prepare_dropout = H.prepare_dropout

  function SimpleRNNCell.call(self, x, states)
    local prev = states
    if is_plain(states) then prev = states[1] end
    -- weights read in the inputs' dtype (the compute dtype under mixed precision)
    local function w(v)
      if v.dtype ~= x.dtype then return tf.cast(v, x.dtype) end
      return v
    end
    local dp, rdp = rawget(self, "_dp_mask"), rawget(self, "_rdp_mask")
    if dp then x = x * dp end
    local h = tf.matmul(x, w(self.kernel))
    if self.use_bias then h = h + w(self.bias) end
    if rdp then prev = prev * rdp end
    if prev.dtype ~= x.dtype then prev = tf.cast(prev, x.dtype) end
    local out = self.activation(h + tf.matmul(prev, w(self.recurrent_kernel)))
    return out, {out}
  end

  local function cell_config(self, c)
    c.units = self.units
    c.activation = H.config_value(rawget(self, "_activation_arg"))
    c.use_bias = self.use_bias
    for k, v in pairs(rawget(self, "_given")) do c[k] = H.config_value(v, k) end
    c.dropout, c.recurrent_dropout, c.seed = self.dropout, self.recurrent_dropout, self.seed
    return c
  end
  H.cell_config = cell_config

  function SimpleRNNCell.get_config(self) return cell_config(self, Layer.get_config(self)) end

  local SimpleRNN = RNN:extend("SimpleRNN")
  L.SimpleRNN = SimpleRNN
  SimpleRNN._repr_args = {"units", "return_sequences", "return_state"}
  --- SimpleRNN{units, ...SimpleRNNCell's keywords, activity_regularizer=,
  -- ...RNN's keywords}: a fully connected RNN whose output is fed back.
  function SimpleRNN.init(self, opts)
    opts = self:_options(opts, concat(CELL_KEYS, RNN.KEYS, {"activity_regularizer"}), 1)
    local copts = {name = "simple_rnn_cell", dtype = opts.dtype, trainable = opts.trainable}
    for _, k in ipairs(CELL_KEYS) do copts[k] = opts[k] end
    copts.units = U.positive_int("SimpleRNN", "units", opts[1] or opts.units)
    self.cell = SimpleRNNCell(copts)
    self.units = self.cell.units
    self:_rnn_options(opts)
    -- (a base layer that handles activity_regularizer has set it already)
    if rawget(self, "activity_regularizer") == nil then rawset(self, "activity_regularizer", opts.activity_regularizer) end
  end

  function SimpleRNN.get_config(self)
    local c = RNN.get_config(self)
    c.cell = nil
    cell_config(self.cell, c)
    if c.activity_regularizer == nil then
      c.activity_regularizer = H.config_value(rawget(self, "activity_regularizer"), "activity_regularizer")
    end
    return c
  end
  SimpleRNN.from_config = function(a, b)
    local config = a
    if a == SimpleRNN then config = b end        -- SimpleRNN.from_config(config [, custom_objects]) or SimpleRNN:from_config(config)
    local copy = {}
    for k, v in pairs(config) do copy[k] = v end
    return SimpleRNN(copy)
  end
  -- }====
end
