--- Long short-term memory: LSTMCell and LSTM (on the RNN base of rnn.lua).
--
-- Weights as Keras: kernel (features, 4 units), recurrent_kernel (units,
-- 4 units), bias (4 units), gates in the order i, f, c, o, named
-- lstm/lstm_cell/kernel and so on. LSTM runs the whole sequence as one
-- fused op (tf.nn.lstm_sequence, with its fused gradient) when the
-- activations are Keras's defaults (tanh, sigmoid), the dtype is float32 or
-- float64 and no recurrent dropout is active; otherwise it loops the cell.
-- Input dropout is applied to the whole sequence before the fused op (one
-- mask per sequence, as the cell does at each step).
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local RNN = L.RNN
  local H = RNN._util
  local K = tf.core.internal.keras
  local raise = K.raise
  local sfmt = string.format
  local A = keras.activations
  local U = require("tf.keras.layers.util")(tf)

  local concat = H.concat

  -- {==== shared with gru.lua (as L.LSTMCell._shared)
  local S = {}

  S.CELL_KEYS = {"units", "activation", "recurrent_activation", "use_bias", "kernel_initializer",
                 "recurrent_initializer", "bias_initializer", "kernel_regularizer", "recurrent_regularizer",
                 "bias_regularizer", "kernel_constraint", "recurrent_constraint", "bias_constraint", "dropout",
                 "recurrent_dropout", "seed", "implementation"}

  --- The keywords LSTMCell and GRUCell share (as given, for get_config).
  function S.settings(self, opts, cname)
    self.units = U.positive_int(cname, "units", opts[1] or opts.units)
    rawset(self, "_activation_arg", opts.activation == nil and "tanh" or opts.activation)
    rawset(self, "_recurrent_activation_arg",
      opts.recurrent_activation == nil and "sigmoid" or opts.recurrent_activation)
    self.activation = A.get(self._activation_arg)
    self.recurrent_activation = A.get(self._recurrent_activation_arg)
    self.use_bias = opts.use_bias ~= false
    local given = {
      kernel_initializer = opts.kernel_initializer or "glorot_uniform",
      recurrent_initializer = opts.recurrent_initializer or "orthogonal",
      bias_initializer = opts.bias_initializer or "zeros",
    }
    H.cell_weight_settings(self, cname, opts, given)
    local impl = opts.implementation
    if impl ~= nil and impl ~= 1 and impl ~= 2 then
      raise("ValueError", sfmt("%s: 'implementation' must be 1 or 2, got %s", cname, tostring(impl)))
    end
    self.implementation = impl or 2
  end

  function S.config(self, c)
    c.units = self.units
    c.activation = H.config_value(rawget(self, "_activation_arg"))
    c.recurrent_activation = H.config_value(rawget(self, "_recurrent_activation_arg"))
    c.use_bias = self.use_bias
    for k, v in pairs(rawget(self, "_given")) do c[k] = H.config_value(v, k) end
    c.dropout, c.recurrent_dropout, c.seed = self.dropout, self.recurrent_dropout, self.seed
    c.implementation = self.implementation
    return c
  end

  --- kernel and recurrent_kernel of (features, n * units) and (units, n * units).
  function S.build_kernels(self, input_shape, n)
    local f = input_shape[-1]
    if not f then
      raise("ValueError", sfmt("layer \"%s\": the last dimension of the inputs must be known, got %s", self.name,
        tostring(input_shape)))
    end
    self.kernel = self:add_weight("kernel", {f, n * self.units}, {initializer = self.kernel_initializer,
      regularizer = self.kernel_regularizer, constraint = self.kernel_constraint})
    self.recurrent_kernel = self:add_weight("recurrent_kernel", {self.units, n * self.units},
      {initializer = self.recurrent_initializer, regularizer = self.recurrent_regularizer,
       constraint = self.recurrent_constraint})
  end

  --- Dropout masks for one RNN call: rnn.lua's, shared with SimpleRNNCell.
  S.prepare_dropout = H.prepare_dropout

  --- Whether a layer's cell can run as a fused op on 'x'.
  function S.fusable(cell, x)
    return cell.activation == A.tanh and cell.recurrent_activation == A.sigmoid and rawget(cell, "_rdp_mask") == nil
      and (x.dtype == tf.float32 or x.dtype == tf.float64)
  end

  --- x with the cell's input dropout mask applied at every step, and the
  -- weights as tensors of x's dtype.
  function S.fused_inputs(cell, x)
    local dp = rawget(cell, "_dp_mask")
    if dp then x = x * tf.expand_dims(dp, 2) end
    local w = S.reader(x)
    return x, w(cell.kernel), w(cell.recurrent_kernel)
  end

  --- The RNN layer's keywords for the cell (name "<cell_name>") and itself.
  function S.layer_init(self, opts, keys, cname, Cell, cell_name)
    opts = self:_options(opts, concat(keys, RNN.KEYS, {"activity_regularizer"}), 1)
    local copts = {name = cell_name, dtype = opts.dtype, trainable = opts.trainable}
    for _, k in ipairs(keys) do copts[k] = opts[k] end
    copts.units = U.positive_int(cname, "units", opts[1] or opts.units)
    self.cell = Cell(copts)
    self.units = self.cell.units
    self:_rnn_options(opts)
    -- (a base layer that handles activity_regularizer has set it already)
    if rawget(self, "activity_regularizer") == nil then rawset(self, "activity_regularizer", opts.activity_regularizer) end
  end

  function S.layer_config(self, cell_config)
    local c = RNN.get_config(self)
    c.cell = nil
    cell_config(self.cell, c)
    if c.activity_regularizer == nil then
      c.activity_regularizer = H.config_value(rawget(self, "activity_regularizer"), "activity_regularizer")
    end
    return c
  end

  function S.from_config(Class)
    return function(a, b)
      local config = a
      if a == Class then config = b end          -- Class.from_config(config [, custom_objects]) or Class:from_config(config)
      local copy = {}
      for k, v in pairs(config) do copy[k] = v end
      return Class(copy)
    end
  end

  --- A function reading a weight in x's dtype (the compute dtype under
  -- mixed precision), as SimpleRNNCell.
  function S.reader(x)
    return function(v)
      if v.dtype ~= x.dtype then return tf.cast(v, x.dtype) end
      return v
    end
  end

  --- The last output of a (batch, time, units) sequence.
  function S.last(y)
    return y[{{}, -1}]
  end
  -- }====

  -- {==== LSTMCell
  local CELL_KEYS = concat(S.CELL_KEYS, {"unit_forget_bias"})
  local LSTMCell = Layer:extend("LSTMCell")
  L.LSTMCell = LSTMCell
  LSTMCell._shared = S
  LSTMCell._repr_args = {"units"}

  --- LSTMCell{units, activation="tanh", recurrent_activation="sigmoid",
  -- use_bias=true, kernel_initializer="glorot_uniform",
  -- recurrent_initializer="orthogonal", bias_initializer="zeros",
  -- unit_forget_bias=true, *_regularizer=, *_constraint=, dropout=0,
  -- recurrent_dropout=0, seed=}: one LSTM step; states {h, c}.
  function LSTMCell.init(self, opts)
    opts = self:_options(opts, CELL_KEYS, 1)
    S.settings(self, opts, "LSTMCell")
    self.unit_forget_bias = opts.unit_forget_bias ~= false
    rawset(self, "state_size", {self.units, self.units})
    rawset(self, "output_size", self.units)
  end

  function LSTMCell.build(self, input_shape)
    S.build_kernels(self, input_shape, 4)
    if not self.use_bias then return end
    local init, u = self.bias_initializer, self.units
    if self.unit_forget_bias then
      local base = init
      -- as Keras: the forget gate's bias starts at one
      init = function(_, dtype)
        return tf.concat({base({u}, dtype), tf.ones({u}, dtype), base({2 * u}, dtype)}, 1)
      end
    end
    self.bias = self:add_weight("bias", {4 * u}, {initializer = init, regularizer = self.bias_regularizer,
      constraint = self.bias_constraint})
  end

  function LSTMCell.get_initial_state(self, batch_size, dtype)
    if tf.is_tensor(batch_size) then batch_size = batch_size:item() end
    dtype = dtype or self.dtype
    return {tf.zeros({batch_size, self.units}, dtype), tf.zeros({batch_size, self.units}, dtype)}
  end

  LSTMCell._prepare_dropout = S.prepare_dropout

  function LSTMCell.call(self, x, states)
    local h, c = states[1], states[2]
    local w = S.reader(x)
    local dp, rdp = rawget(self, "_dp_mask"), rawget(self, "_rdp_mask")
    if dp then x = x * dp end
    local hr = rdp and h * rdp or h
    local z = tf.matmul(x, w(self.kernel)) + tf.matmul(hr, w(self.recurrent_kernel))
    if self.use_bias then z = z + w(self.bias) end
    local parts = tf.split(z, 4, {axis = 2})
    local ra, act = self.recurrent_activation, self.activation
    local i, f, o = ra(parts[1]), ra(parts[2]), ra(parts[4])
    local c2 = f * c + i * act(parts[3])
    local h2 = o * act(c2)
    return h2, {h2, c2}
  end

  local function cell_config(cell, c)
    S.config(cell, c)
    c.unit_forget_bias = cell.unit_forget_bias
    return c
  end

  function LSTMCell.get_config(self) return cell_config(self, Layer.get_config(self)) end
  -- }====

  -- {==== LSTM
  local LSTM = RNN:extend("LSTM")
  L.LSTM = LSTM
  LSTM._repr_args = {"units", "return_sequences", "return_state"}

  --- LSTM{units, ...LSTMCell's keywords, activity_regularizer=, ...RNN's
  -- keywords (return_sequences, return_state, go_backwards, stateful,
  -- unroll, time_major, zero_output_for_mask)}.
  function LSTM.init(self, opts)
    S.layer_init(self, opts, CELL_KEYS, "LSTM", LSTMCell, "lstm_cell")
  end

  --- The fused hook: one lstm_sequence op for the whole sequence.
  function LSTM._run(self, x, states, mask, training)
    local cell = self.cell
    if not S.fusable(cell, x) then return RNN._run(self, x, states, mask, training) end
    local k, rk
    x, k, rk = S.fused_inputs(cell, x)
    local bias = cell.use_bias and cell.bias or tf.zeros({4 * cell.units}, x.dtype)
    if bias.dtype ~= x.dtype then bias = tf.cast(bias, x.dtype) end
    local y, h, c = tf.nn.lstm_sequence(x, states[1], states[2], k, rk, bias,
      {mask = mask, go_backwards = self.go_backwards, zero_output_for_mask = self.zero_output_for_mask})
    return y, S.last(y), {h, c}
  end

  function LSTM.get_config(self) return S.layer_config(self, cell_config) end
  LSTM.from_config = S.from_config(LSTM)
  -- }====
end
