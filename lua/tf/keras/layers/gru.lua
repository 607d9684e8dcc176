--- Gated recurrent unit: GRUCell and GRU (on the RNN base of rnn.lua).
--
-- Weights as Keras: kernel (features, 3 units), recurrent_kernel (units,
-- 3 units), gates in the order z, r, h; with reset_after (Keras's default)
-- bias (2, 3 units): the input bias row and the recurrent bias row, and the
-- reset gate multiplies the recurrent product (h_prev U_h + b_rh); without
-- it, bias (3 units) and the reset gate multiplies h_prev before U_h. GRU
-- runs the whole sequence as one fused op (tf.nn.gru_sequence) under the
-- same conditions as LSTM (lstm.lua).
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local RNN = L.RNN
  local S = L.LSTMCell._shared

  local function concat(...)
    local out = {}
    for _, t in ipairs({...}) do for _, v in ipairs(t) do out[#out + 1] = v end end
    return out
  end

  -- {==== GRUCell
  local CELL_KEYS = concat(S.CELL_KEYS, {"reset_after"})
  local GRUCell = Layer:extend("GRUCell")
  L.GRUCell = GRUCell
  GRUCell._repr_args = {"units"}

  --- GRUCell{units, activation="tanh", recurrent_activation="sigmoid",
  -- use_bias=true, kernel_initializer="glorot_uniform",
  -- recurrent_initializer="orthogonal", bias_initializer="zeros",
  -- *_regularizer=, *_constraint=, dropout=0, recurrent_dropout=0,
  -- reset_after=true, seed=}: one GRU step; state {h}.
  function GRUCell.init(self, opts)
    opts = self:_options(opts, CELL_KEYS, 1)
    S.settings(self, opts, "GRUCell")
    self.reset_after = opts.reset_after ~= false
    rawset(self, "state_size", self.units)
    rawset(self, "output_size", self.units)
  end

  function GRUCell.build(self, input_shape)
    S.build_kernels(self, input_shape, 3)
    if not self.use_bias then return end
    local shape = self.reset_after and {2, 3 * self.units} or {3 * self.units}
    self.bias = self:add_weight("bias", shape, {initializer = self.bias_initializer,
      regularizer = self.bias_regularizer, constraint = self.bias_constraint})
  end

  function GRUCell.get_initial_state(self, batch_size, dtype)
    if tf.is_tensor(batch_size) then batch_size = batch_size:item() end
    return {tf.zeros({batch_size, self.units}, dtype or self.dtype)}
  end

  GRUCell._prepare_dropout = S.prepare_dropout

  function GRUCell.call(self, x, states)
    local h = states
    if type(states) == "table" and getmetatable(states) == nil then h = states[1] end
    local w = S.reader(x)
    local dp, rdp = rawget(self, "_dp_mask"), rawget(self, "_rdp_mask")
    if dp then x = x * dp end
    local hr = rdp and h * rdp or h
    local u = self.units
    local bi, br
    if self.use_bias then
      if self.reset_after then
        local rows = tf.unstack(w(self.bias), {axis = 1})
        bi, br = rows[1], rows[2]
      else
        bi = w(self.bias)
      end
    end
    local mx = tf.matmul(x, w(self.kernel))
    if bi then mx = mx + bi end
    local xz, xr, xh = table.unpack(tf.split(mx, 3, {axis = 2}))
    local ra, act = self.recurrent_activation, self.activation
    local rk = w(self.recurrent_kernel)
    local z, r, hh
    if self.reset_after then
      local mi = tf.matmul(hr, rk)
      if br then mi = mi + br end
      local rz, rr, rh = table.unpack(tf.split(mi, 3, {axis = 2}))
      z, r = ra(xz + rz), ra(xr + rr)
      hh = act(xh + r * rh)
    else
      local rk_zr, rk_h = rk[{{}, {1, 2 * u}}], rk[{{}, {2 * u + 1, 3 * u}}]
      local mi = tf.matmul(hr, rk_zr)
      local rz, rr = table.unpack(tf.split(mi, 2, {axis = 2}))
      z, r = ra(xz + rz), ra(xr + rr)
      hh = act(xh + tf.matmul(r * hr, rk_h))
    end
    local h2 = z * h + (1 - z) * hh
    return h2, {h2}
  end

  local function cell_config(cell, c)
    S.config(cell, c)
    c.reset_after = cell.reset_after
    return c
  end

  function GRUCell.get_config(self) return cell_config(self, Layer.get_config(self)) end
  -- }====

  -- {==== GRU
  local GRU = RNN:extend("GRU")
  L.GRU = GRU
  GRU._repr_args = {"units", "return_sequences", "return_state"}

  --- GRU{units, ...GRUCell's keywords, activity_regularizer=, ...RNN's keywords}.
  function GRU.init(self, opts)
    S.layer_init(self, opts, CELL_KEYS, "GRU", GRUCell, "gru_cell")
  end

  --- The fused hook: one gru_sequence op for the whole sequence.
  function GRU._run(self, x, states, mask, training)
    local cell = self.cell
    if not S.fusable(cell, x) then return RNN._run(self, x, states, mask, training) end
    local k, rk
    x, k, rk = S.fused_inputs(cell, x)
    local u = cell.units
    local bias = cell.use_bias and cell.bias or tf.zeros(cell.reset_after and {2, 3 * u} or {3 * u}, x.dtype)
    if bias.dtype ~= x.dtype then bias = tf.cast(bias, x.dtype) end
    local y, h = tf.nn.gru_sequence(x, states[1], k, rk, bias,
      {mask = mask, go_backwards = self.go_backwards, zero_output_for_mask = self.zero_output_for_mask,
       reset_after = cell.reset_after})
    return y, S.last(y), {h}
  end

  function GRU.get_config(self) return S.layer_config(self, cell_config) end
  GRU.from_config = S.from_config(GRU)
  -- }====
end
