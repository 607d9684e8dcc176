-- spec/keras/recurrent_gated_support.lua: the checks LSTM and GRU share
-- Loaded into the calling spec's environment (busted's describe, it, assert).
-- (spec/keras/lstm_spec.lua, gru_spec.lua), each against the float64
-- step-by-step reference of spec/rnn_reference.lua.
local tf = require("tf")
local support = require("support")
local R = require("rnn_reference")
local L = tf.keras.layers
local K = tf.core.internal.keras

local M = {}

--- Run the shared describe blocks for 'kind' ("LSTM" or "GRU").
function M.describe(kind)
  local is_lstm = kind == "LSTM"
  local Layer, Cell = L[kind], L[kind .. "Cell"]
  local gates = is_lstm and 4 or 3
  local lname = is_lstm and "lstm" or "gru"
  local B, T, F, U = 2, 4, 3, 3
  local rnd = support.lcg(is_lstm and 3 or 4)
  local X = R.fill(rnd, {B, T, F})
  local W = {K = R.fill(rnd, {F, gates * U}, 0.6), RK = R.fill(rnd, {U, gates * U}, 0.6)}
  W.bias = is_lstm and R.fill(rnd, {gates * U}, 0.3) or R.fill(rnd, {2, gates * U}, 0.3)
  W.bias_before = R.fill(rnd, {gates * U}, 0.3)
  local H0 = R.fill(rnd, {B, U}, 0.5)
  local C0 = R.fill(rnd, {B, U}, 0.5)
  local MASK = {{true, true, false, true}, {false, true, true, false}}

  -- a float64 layer with the weights above
  local function make(opts)
    opts = opts or {}
    opts[1] = U
    opts.dtype = opts.dtype or "float64"
    local l = Layer(opts)
    l:build(tf.TensorShape({B, T, F}))
    l.cell.kernel:assign(tf.constant(W.K, tf.float64))
    l.cell.recurrent_kernel:assign(tf.constant(W.RK, tf.float64))
    if l.cell.use_bias then
      l.cell.bias:assign(tf.constant(opts.reset_after == false and W.bias_before or W.bias, tf.float64))
    end
    return l
  end

  local function reference(ropts, h0, c0, xs)
    xs = xs or X
    local zeros = {}
    for b = 1, B do zeros[b] = {} for j = 1, U do zeros[b][j] = 0 end end
    local bias = ropts.reset_after == false and W.bias_before or W.bias
    if ropts.no_bias then
      bias = {}
      local n = (is_lstm or ropts.reset_after == false) and 1 or 2
      for r = 1, n do
        local row = {}
        for j = 1, gates * U do row[j] = 0 end
        bias[r] = row
      end
      if n == 1 then bias = bias[1] end
    end
    if is_lstm then
      return R.lstm(xs, h0 or zeros, c0 or zeros, W.K, W.RK, bias, ropts)
    end
    return R.gru(xs, h0 or zeros, W.K, W.RK, bias, ropts)
  end

  local x = tf.constant(X, tf.float64)

  describe("keras " .. kind .. " against the float64 reference", function()
    it("returns the last output, the sequence, and the states", function()
      local y, hs, cs = reference({})
      assert.tensor_near(tf.constant(y, tf.float64)[{{}, -1}], make()(x), {atol = 1e-12})
      local seq = make({return_sequences = true})(x)
      assert.tensor_near(y, seq, {atol = 1e-12})
      local r = make({return_sequences = true, return_state = true})(x)
      assert.equal(is_lstm and 3 or 2, #r)
      assert.tensor_near(y, r[1], {atol = 1e-12})
      assert.tensor_near(hs, r[2], {atol = 1e-12})
      if is_lstm then assert.tensor_near(cs, r[3], {atol = 1e-12}) end
    end)

    it("takes initial states and goes backwards", function()
      local y = reference({go_backwards = true}, H0, C0)
      local init = {tf.constant(H0, tf.float64)}
      if is_lstm then init[2] = tf.constant(C0, tf.float64) end
      local seq = make({return_sequences = true, go_backwards = true})(x, {initial_state = init})
      assert.tensor_near(y, seq, {atol = 1e-12})
    end)

    it("carries the states over masked steps (mask from the input)", function()
      local y = reference({mask = MASK})
      local xm = tf.identity(x)
      K.set_mask(xm, tf.constant(MASK))
      assert.tensor_near(y, make({return_sequences = true})(xm), {atol = 1e-12})
      local y2 = reference({mask = MASK, go_backwards = true, zero_output_for_mask = true})
      local l = make({return_sequences = true, go_backwards = true, zero_output_for_mask = true})
      assert.tensor_near(y2, l(x, {mask = tf.constant(MASK)}), {atol = 1e-12})
    end)

    it("without a bias", function()
      local y = reference({no_bias = true})
      assert.tensor_near(y, make({return_sequences = true, use_bias = false})(x), {atol = 1e-12})
      assert.equal(2, #make({use_bias = false}).weights)
    end)

    if not is_lstm then
      it("with reset_after = false (bias of 3 units, reset before the recurrent product)", function()
        local y = reference({reset_after = false, mask = MASK})
        local l = make({return_sequences = true, reset_after = false})
        assert.shape({gates * U}, l.cell.bias:value())
        assert.tensor_near(y, l(x, {mask = tf.constant(MASK)}), {atol = 1e-12})
      end)
    end

    it("computes in float32", function()
      local l = Layer{U, return_sequences = true}
      l:build(tf.TensorShape({B, T, F}))
      l.cell.kernel:assign(tf.constant(W.K, tf.float32))
      l.cell.recurrent_kernel:assign(tf.constant(W.RK, tf.float32))
      l.cell.bias:assign(tf.constant(W.bias, tf.float32))
      assert.tensor_near(reference({}), l(tf.constant(X, tf.float32)), {atol = 1e-5})
    end)
  end)

  describe("keras " .. kind .. "Cell", function()
    it("equals the layer for one step, and the layer equals the cell loop", function()
      local l = make({return_sequences = true, return_state = true})
      local cell = l.cell
      local states = {tf.constant(H0, tf.float64)}
      if is_lstm then states[2] = tf.constant(C0, tf.float64) end
      local r = l(x[{{}, {1, 1}}], {initial_state = states})
      local out, ns = cell:call(x[{{}, 1}], states)
      assert.tensor_near(r[1][{{}, 1}], out, {atol = 1e-12})
      assert.tensor_near(r[2], ns[1], {atol = 1e-12})
      -- the cell in a generic RNN (the Lua loop) gives the fused layer's sequence
      local generic = L.RNN{cell, return_sequences = true, dtype = "float64"}
      assert.tensor_near(l(x)[1], generic(x), {atol = 1e-12})
    end)

    it("a non-default activation takes the cell loop, with the same gradients as the fused op", function()
      local fused = make({return_sequences = true})
      local looped = make({return_sequences = true, activation = function(v) return tf.tanh(v) end})
      local function grads(l)
        local tape = tf.GradientTape()
        local xv = tf.identity(x)
        tape:watch(xv)
        local loss = tape:record(function()
          local y = l(xv, {mask = tf.constant(MASK)})
          return tf.reduce_sum(y * y)
        end)
        local ws = l.trainable_weights
        local g = tape:gradient(loss, {xv, ws[1], ws[2], ws[3]})
        return g, loss
      end
      local gf, lf = grads(fused)
      local gl, ll = grads(looped)
      local function fused_nodes(l)
        local f = tf.fn(function(v) return l(v) end)
        local n = 0
        for _, node in ipairs(f:get_concrete_function(x).graph:nodes()) do
          if node.op == lname .. "_sequence" then n = n + 1 end
        end
        return n
      end
      assert.equal(0, fused_nodes(looped))
      assert.equal(1, fused_nodes(fused))
      assert.tensor_near(ll, lf, {atol = 1e-12})
      for k = 1, 4 do assert.tensor_near(gl[k], gf[k], {atol = 1e-10}) end
    end)

    it("is one fused op per call inside tf.fn", function()
      local l = make({return_sequences = true})
      local f = tf.fn(function(v) return l(v) end)
      assert.tensor_near(reference({}), f(x), {atol = 1e-12})
      local n, loops = 0, 0
      for _, node in ipairs(f:get_concrete_function(x).graph:nodes()) do
        if node.op == lname .. "_sequence" then n = n + 1 end
        if node.op == "matmul" then loops = loops + 1 end
      end
      assert.equal(1, n)
      assert.equal(0, loops)
    end)
  end)

  describe("keras " .. kind .. " weights, config, errors", function()
    it("names and orders its weights as Keras", function()
      local l = Layer{5, name = lname}
      l(tf.zeros({2, 3, 7}))
      local names, shapes = {}, {}
      for i, w in ipairs(l.weights) do names[i], shapes[i] = w.name, w.shape:as_list() end
      assert.same({lname .. "/" .. lname .. "_cell/kernel:0", lname .. "/" .. lname .. "_cell/recurrent_kernel:0",
                   lname .. "/" .. lname .. "_cell/bias:0"}, names)
      assert.same({7, gates * 5}, shapes[1])
      assert.same({5, gates * 5}, shapes[2])
      assert.same(is_lstm and {20} or {2, 15}, shapes[3])
      -- the recurrent kernel is orthogonal
      local rk = l.cell.recurrent_kernel:value()
      if is_lstm then
        local q = tf.matmul(rk, rk, {transpose_b = true})
        assert.tensor_near(tf.eye(5), q, {atol = 1e-5})
      end
    end)

    it("gets_config and from_config round-trip", function()
      local l = Layer{6, return_sequences = true, go_backwards = true, dropout = 0.25, recurrent_dropout = 0.1,
                      recurrent_activation = "hard_sigmoid", name = "rec"}
      local c = l:get_config()
      assert.equal(6, c.units)
      assert.equal("tanh", c.activation)
      assert.equal("hard_sigmoid", c.recurrent_activation)
      assert.equal("GlorotUniform", c.kernel_initializer.class_name)   -- Keras's {class_name =, config =}
      assert.equal("Orthogonal", c.recurrent_initializer.class_name)
      assert.equal(0.25, c.dropout)
      assert.is_true(c.return_sequences)
      if is_lstm then assert.is_true(c.unit_forget_bias) else assert.is_true(c.reset_after) end
      assert.same(c, Layer.from_config(c):get_config())
      local cc = Cell{4, name = "c"}:get_config()
      assert.same(cc, Cell.from_config(cc):get_config())
    end)

    it("rejects bad keywords and inputs", function()
      assert.tf_error("ValueError", kind, function() Layer{0} end)
      assert.tf_error("ValueError", kind, function() Layer{4, dropout = "x"} end)
      assert.tf_error("ValueError", "expected ndim=3", function() Layer{4}(tf.zeros({2, 3})) end)
    end)
  end)

  describe("keras " .. kind .. " in a model", function()
    it("trains with fit (the loss falls), with input dropout on the fused path", function()
      tf.random.set_seed(3)
      local n, steps = 32, 6
      local xs, ys = {}, {}
      local r = support.lcg(21)
      for i = 1, n do
        local row, s = {}, 0
        for t = 1, steps do row[t] = {r()}; s = s + row[t][1] end
        xs[i], ys[i] = row, {s > 0 and 1 or 0}
      end
      local model = tf.keras.Sequential{Layer{8, dropout = 0.1, input_shape = {steps, 1}},
                                        L.Dense{1, activation = "sigmoid"}}
      model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.05}, loss = "binary_crossentropy"}
      local h = model:fit(tf.constant(xs), tf.constant(ys, tf.float32), {epochs = 12, batch_size = 8, verbose = 0})
      local losses = h.history.loss
      assert.is_true(losses[#losses] < losses[1] * 0.7, ("loss %g -> %g"):format(losses[1], losses[#losses]))
    end)

    it("takes its mask from Embedding(mask_zero = true)", function()
      local emb = L.Embedding{10, F, mask_zero = true}
      local ids = tf.constant({{1, 2, 0, 3}, {0, 4, 5, 0}})
      local e = emb(ids)
      local l = make({return_sequences = true})
      local y = l(e)
      local ry = reference({mask = {{true, true, false, true}, {false, true, true, false}}}, nil, nil, e:totable())
      assert.tensor_near(ry, y, {atol = 1e-6})
      -- the mask travels on: the sequence output keeps it
      assert.same({{true, true, false, true}, {false, true, true, false}}, K.get_mask(y):totable())
    end)
  end)
end

return M
