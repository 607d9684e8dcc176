--- Layer wrappers: Bidirectional (an RNN run forwards and backwards) and
-- TimeDistributed (a layer applied at every timestep).
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local K = tf.core.internal.keras
  local raise = K.raise
  local is_layer = K.is_layer
  local sfmt = string.format
  local H = L.RNN._util

  local function is_plain(v) return type(v) == "table" and getmetatable(v) == nil end

  -- A fresh copy of `layer` from its config (Keras's
  -- _recreate_layer_from_config), config entries in `over` replaced. The
  -- classes of the layer and of its cells resolve to themselves, so user
  -- cell classes need no registry.
  local function recreate(layer, over)
    local config = layer:get_config()
    for k, v in pairs(over or {}) do config[k] = v end
    local custom = {}
    local function note(l)
      if is_layer(l) then
        custom[l._class_name] = getmetatable(l)
        local cell = rawget(l, "cell")
        if cell then note(cell) end
        for _, c in ipairs(rawget(l, "cells") or {}) do note(c) end
      end
    end
    note(layer)
    local cls = getmetatable(layer)
    if cls.from_config == L.RNN.from_config then return L.RNN.from_config(config, custom) end
    return cls.from_config(config)
  end

  -- {==== Bidirectional
  local Bidirectional = Layer:extend("Bidirectional")
  L.Bidirectional = Bidirectional
  Bidirectional._repr_args = {"merge_mode"}
  local MERGE = {concat = true, sum = true, mul = true, ave = true}

  local function is_rnn(l)
    return is_layer(l) and l.return_sequences ~= nil and l.go_backwards ~= nil and l.return_state ~= nil
  end

  --- Bidirectional{layer, merge_mode = "concat", backward_layer =}: runs a
  -- copy of the RNN `layer` forwards and another backwards (a copy made
  -- from layer's config with go_backwards flipped, or `backward_layer`),
  -- reverses the backward sequence back to input order, and merges the two
  -- ("concat" on the last axis, "sum", "mul", "ave", or "none" / false for
  -- the array {forward, backward}). With return_state: {output, forward
  -- states..., backward states...}.
  function Bidirectional.init(self, opts)
    opts = self:_options(opts, {"layer", "merge_mode", "backward_layer", "weights"}, 1)
    local layer = opts[1] or opts.layer
    if not is_layer(layer) then
      raise("ValueError", sfmt("Bidirectional: please initialize `Bidirectional` layer with a " ..
        "`tf.keras.layers.Layer` instance. Received: %s", tostring(layer)))
    end
    if not is_rnn(layer) then
      raise("ValueError", sfmt("Bidirectional: the layer must be a recurrent layer (RNN, SimpleRNN, LSTM, GRU), " ..
        "got %s", layer._class_name))
    end
    local mm = opts.merge_mode
    if mm == nil then mm = "concat" end
    if mm == false or mm == "none" then mm = nil end
    if mm ~= nil and not MERGE[mm] then
      raise("ValueError", sfmt("Bidirectional: Invalid merge mode. Received: %s. Merge mode should be one of " ..
        "\"sum\", \"mul\", \"ave\", \"concat\", \"none\"", tostring(mm)))
    end
    if opts.weights ~= nil then
      raise("UnimplementedError", "Bidirectional: 'weights' is not supported; use set_weights after building")
    end
    rawset(self, "merge_mode", mm)
    rawset(self, "_layer_config", H.serialize(layer))
    local fwd = recreate(layer)
    local bwd = opts.backward_layer
    if bwd == nil then
      bwd = recreate(layer, {go_backwards = not layer.go_backwards})
    else
      if not is_rnn(bwd) then
        raise("ValueError", sfmt("Bidirectional: `backward_layer` must be a recurrent layer, got %s", tostring(bwd)))
      end
      rawset(self, "_backward_config", H.serialize(bwd))
    end
    if fwd.go_backwards == bwd.go_backwards then
      raise("ValueError", sfmt("Bidirectional: forward layer and backward layer should have different " ..
        "`go_backwards` value. Received: forward_layer.go_backwards = %s, backward_layer.go_backwards = %s",
        tostring(fwd.go_backwards), tostring(bwd.go_backwards)))
    end
    for _, a in ipairs({"return_sequences", "return_state", "stateful"}) do
      if fwd[a] ~= bwd[a] then
        raise("ValueError", sfmt("Bidirectional: forward layer and backward layer should have the same `%s` " ..
          "value. Received: forward_layer.%s = %s, backward_layer.%s = %s", a, a, tostring(fwd[a]), a,
          tostring(bwd[a])))
      end
    end
    rawset(fwd, "name", "forward_" .. layer.name)
    rawset(bwd, "name", "backward_" .. bwd.name)
    -- as Keras: the masked outputs are zeros when the sequences are returned
    if fwd.zero_output_for_mask ~= nil then fwd.zero_output_for_mask = fwd.return_sequences end
    if bwd.zero_output_for_mask ~= nil then bwd.zero_output_for_mask = bwd.return_sequences end
    self.forward_layer = fwd
    self.backward_layer = bwd
    rawset(self, "return_sequences", fwd.return_sequences)
    rawset(self, "return_state", fwd.return_state)
    rawset(self, "stateful", fwd.stateful)
    rawset(self, "time_major", fwd.time_major)
  end

  Bidirectional.supports_masking = true

  function Bidirectional.build(self, input_shape)
    local shape = input_shape
    if is_plain(shape) then shape = shape[1] end
    if shape == nil then return end
    -- weights named bidirectional/forward_lstm/lstm_cell/kernel, as Keras
    H.build_cell(self.forward_layer, self.name, shape)
    H.build_cell(self.backward_layer, self.name, shape)
  end

  --- The output's mask: the input's when the sequences are returned (one
  -- per output with merge_mode "none"); the states have none.
  function Bidirectional.compute_mask(self, _, mask)
    mask = H.bool_mask(mask)
    local m = nil
    if self.return_sequences then m = mask end
    if self.merge_mode == nil then return {m, m} end
    if self.return_state then return {m} end
    return m
  end

  --- layer(x [, {initial_state = {forward states..., backward states...},
  -- mask =, training =}])
  function Bidirectional.call(self, inputs, opts)
    opts = opts or {}
    local x, given = H.split_states(inputs, opts)
    local fo = {training = opts.training, mask = H.bool_mask(opts.mask)}
    local bo = {training = opts.training, mask = fo.mask}
    if given ~= nil then
      if tf.is_tensor(given) then given = {given} end
      if #given % 2 ~= 0 then
        raise("ValueError", sfmt("layer \"%s\": When passing `initial_state` to a Bidirectional RNN, the state " ..
          "should be a list containing the states of the underlying RNNs. Received: %d states", self.name, #given))
      end
      local half = #given // 2
      fo.initial_state = {table.unpack(given, 1, half)}
      bo.initial_state = {table.unpack(given, half + 1)}
    end
    local y = self.forward_layer(x, fo)
    local yr = self.backward_layer(x, bo)
    local states = {}
    if self.return_state then
      for i = 2, #y do states[#states + 1] = y[i] end
      for i = 2, #yr do states[#states + 1] = yr[i] end
      y, yr = y[1], yr[1]
    end
    if self.return_sequences then
      yr = tf.reverse(yr, {self.time_major and 1 or 2})
    end
    local out
    local mm = self.merge_mode
    if mm == "concat" then out = tf.concat({y, yr}, -1)
    elseif mm == "sum" then out = y + yr
    elseif mm == "ave" then out = (y + yr) * 0.5
    elseif mm == "mul" then out = y * yr
    else out = {y, yr} end
    if self.return_state then
      local r = mm == nil and {y, yr} or {out}
      for _, s in ipairs(states) do r[#r + 1] = s end
      return r
    end
    return out
  end

  function Bidirectional.compute_output_shape(self, shape)
    local o = self.forward_layer:compute_output_shape(shape)
    local first, states = o, {}
    if is_plain(o) then
      first = o[1]
      for i = 2, #o do states[#states + 1] = o[i] end
    end
    local out
    if self.merge_mode == "concat" then
      local d = first:as_list()
      if d[#d] >= 0 then d[#d] = d[#d] * 2 end
      out = {tf.TensorShape(d)}
    elseif self.merge_mode == nil then
      out = {first, first}
    else
      out = {first}
    end
    if not self.return_state then return #out == 1 and out[1] or out end
    for _ = 1, 2 do for _, s in ipairs(states) do out[#out + 1] = s end end
    return out
  end

  function Bidirectional.reset_states(self)
    self.forward_layer:reset_states()
    self.backward_layer:reset_states()
  end

  function Bidirectional.get_config(self)
    local c = Layer.get_config(self)
    c.layer = rawget(self, "_layer_config")
    c.merge_mode = self.merge_mode or "none"
    c.backward_layer = rawget(self, "_backward_config")
    return c
  end

  function Bidirectional.from_config(a, b, cu)
    local config, custom = a, b
    if a == Bidirectional then config, custom = b, cu end
    local copy = {}
    for k, v in pairs(config) do copy[k] = v end
    copy.layer = H.deserialize(config.layer, custom)
    if config.backward_layer ~= nil then copy.backward_layer = H.deserialize(config.backward_layer, custom) end
    return Bidirectional(copy)
  end
  -- }====

  -- {==== TimeDistributed
  local TimeDistributed = Layer:extend("TimeDistributed")
  L.TimeDistributed = TimeDistributed
  TimeDistributed.supports_masking = true
  --- TimeDistributed{layer}: applies `layer` to every timestep of a
  -- (batch, time, ...) input, by folding time into the batch.
  function TimeDistributed.init(self, opts)
    opts = self:_options(opts, {"layer"}, 1)
    local layer = opts[1] or opts.layer
    if not is_layer(layer) then
      raise("ValueError", sfmt("TimeDistributed: please initialize `TimeDistributed` layer with a " ..
        "`tf.keras.layers.Layer` instance. Received: %s", tostring(layer)))
    end
    self.layer = layer
  end

  function TimeDistributed.build(self, input_shape)
    local d = input_shape:as_list()
    if d == nil then return end
    if #d < 3 then
      raise("ValueError", sfmt("layer \"%s\": `TimeDistributed` Layer should be passed an `input_shape` with at " ..
        "least 3 dimensions, received: %s", self.name, tostring(input_shape)))
    end
    local inner = {-1}
    for i = 3, #d do inner[#inner + 1] = d[i] end
    local sub = self.layer
    if not sub.built then
      local name = sub.name
      rawset(sub, "name", self.name .. "/" .. name)
      local ok, err = pcall(sub._maybe_build, sub, tf.TensorShape(inner))
      rawset(sub, "name", name)
      if not ok then error(err, 0) end
    end
  end

  -- (b, t, rest...) -> (-1, rest...), and back; dims not known while
  -- tracing are read from tf.shape when the graph runs
  local function dim(x, d, i)
    if d[i] >= 0 then return d[i] end
    return tf.shape(x)[i]
  end
  local function fold(self, x)
    local d = x:_dims()
    local inner = {-1}
    for i = 3, #d do inner[#inner + 1] = dim(x, d, i) end
    return tf.reshape(x, inner), dim(x, d, 1), dim(x, d, 2)
  end
  local function unfold(self, y, b, t)
    local d = y:_dims()
    local out = {b, t}
    for i = 2, #d do out[#out + 1] = dim(y, d, i) end
    return tf.reshape(y, out)
  end

  function TimeDistributed.call(self, x, opts)
    opts = opts or {}
    self:_check_input(x, {min_ndim = 3})
    local folded, b, t = fold(self, x)
    local sub = {training = opts.training}
    local mask = H.bool_mask(opts.mask)
    if mask ~= nil then sub.mask = tf.reshape(mask, {-1}) end
    local y = self.layer(folded, sub)
    rawset(self, "_inner_mask", nil)
    local im = K.get_mask(y)
    local out = unfold(self, y, b, t)
    if tf.is_tensor(im) then rawset(self, "_inner_mask", unfold(self, im, b, t)) end
    return out
  end

  --- The output mask: the inner layer's (reshaped back, reduced to
  -- (batch, time) with any) when it makes one, else the input's.
  function TimeDistributed.compute_mask(self, _, mask)
    local im = rawget(self, "_inner_mask")
    if im ~= nil then
      rawset(self, "_inner_mask", nil)
      local n = #im:_dims()
      if n > 2 then
        local axes = {}
        for i = 3, n do axes[#axes + 1] = i end
        im = tf.reduce_any(im, {axis = axes})
      end
      return im
    end
    return H.bool_mask(mask)
  end

  function TimeDistributed.compute_output_shape(self, shape)
    local d = shape:as_list()
    local inner = {d[1]}
    for i = 3, #d do inner[#inner + 1] = d[i] end
    local o = self.layer:compute_output_shape(tf.TensorShape(inner)):as_list()
    local out = {d[1], d[2]}
    for i = 2, #o do out[#out + 1] = o[i] end
    return tf.TensorShape(out)
  end

  function TimeDistributed.get_config(self)
    local c = Layer.get_config(self)
    c.layer = H.serialize(self.layer)
    return c
  end

  function TimeDistributed.from_config(a, b, cu)
    local config, custom = a, b
    if a == TimeDistributed then config, custom = b, cu end
    local copy = {}
    for k, v in pairs(config) do copy[k] = v end
    copy.layer = H.deserialize(config.layer, custom)
    return TimeDistributed(copy)
  end
  -- }====
end
