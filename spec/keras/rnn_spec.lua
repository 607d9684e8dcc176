-- tf.keras.layers.RNN, StackedRNNCells, SimpleRNNCell, SimpleRNN: values
-- against a float64 reference written in plain Lua (masks, go_backwards,
-- initial and stateful states, time_major), finite-difference gradients,
-- graphs with an unknown time length, configs and errors.
local tf = require("tf")
local L = tf.keras.layers

-- {==== plain-Lua reference
local function lua_rand(seed)
  local s = seed
  return function()
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 2147483648 * 2 - 1
  end
end

local function rand_table(dims, rnd)
  local function make(d)
    local out = {}
    for i = 1, dims[d] do out[i] = d == #dims and rnd() or make(d + 1) end
    return out
  end
  return make(1)
end

local function vecmat(v, m)   -- v (n) . m (n, k)
  local out = {}
  for j = 1, #m[1] do
    local s = 0
    for i = 1, #v do s = s + v[i] * m[i][j] end
    out[j] = s
  end
  return out
end

--- SimpleRNN in Lua: x (B, T, F); returns sequence (B, T, U) in processing
-- order, last output (B, U), final state (B, U).
local function ref_rnn(x, K, R, b, opts)
  opts = opts or {}
  local act = opts.act or math.tanh
  local seq, last, hs = {}, {}, {}
  for bi = 1, #x do
    local T = #x[bi]
    local h = opts.h0 and {table.unpack(opts.h0[bi])} or {}
    if not opts.h0 then for j = 1, #K[1] do h[j] = 0 end end
    local prev = {}
    for j = 1, #K[1] do prev[j] = 0 end
    seq[bi] = {}
    for step = 1, T do
      local t = opts.backwards and (T + 1 - step) or step
      local on = not opts.mask or opts.mask[bi][t]
      local out
      if on then
        local a, c = vecmat(x[bi][t], K), vecmat(h, R)
        local nh = {}
        for j = 1, #a do nh[j] = act(a[j] + c[j] + (b and b[j] or 0)) end
        h, out = nh, nh
      else
        out = {}
        for j = 1, #h do out[j] = opts.zero_output and 0 or prev[j] end
      end
      seq[bi][step] = out
      prev = out
    end
    last[bi], hs[bi] = prev, h
  end
  return seq, last, hs
end
-- }====

local function const(v) return function(_, dtype) return tf.constant(v, dtype) end end
-- an initializer's config entry: its name, or Keras's {class_name =} once
-- tf.keras.initializers has serialize
local function is_init(v, name, class)
  return v == name or (type(v) == "table" and v.class_name == class)
end

-- a SimpleRNN with the given weights (F inputs, U units)
local function rnn_with(K, R, b, opts)
  opts = opts or {}
  opts[1] = #K[1]
  opts.kernel_initializer = const(K)
  opts.recurrent_initializer = const(R)
  if b then opts.bias_initializer = const(b) else opts.use_bias = false end
  return L.SimpleRNN(opts)
end

local rnd = lua_rand(42)
local X = rand_table({2, 4, 3}, rnd)       -- batch 2, 4 steps, 3 features
local K = rand_table({3, 2}, rnd)
local R = rand_table({2, 2}, rnd)
local B = {0.1, -0.2}
local MASK = {{true, true, false, true}, {false, true, true, false}}

describe("keras SimpleRNN", function()
  it("matches the float64 reference: last output, sequence and state", function()
    local seq, last, h = ref_rnn(X, K, R, B)
    local l = rnn_with(K, R, B, {return_sequences = true, return_state = true})
    local r = l(tf.constant(X))
    assert.equal(2, #r)
    assert.tensor_near(seq, r[1], {atol = 1e-5})
    assert.tensor_near(h, r[2], {atol = 1e-5})
    assert.tensor_near(last, rnn_with(K, R, B)(tf.constant(X)), {atol = 1e-5})
  end)

  it("names and orders its weights as Keras: kernel, recurrent_kernel, bias", function()
    local l = L.SimpleRNN{4, name = "enc"}
    l(tf.ones({1, 2, 3}))
    local v = l.trainable_variables
    assert.equal(3, #v)
    assert.equal("enc/simple_rnn_cell/kernel:0", v[1].name)
    assert.equal("enc/simple_rnn_cell/recurrent_kernel:0", v[2].name)
    assert.equal("enc/simple_rnn_cell/bias:0", v[3].name)
    assert.shape({3, 4}, v[1]:value())
    assert.shape({4, 4}, v[2]:value())
    -- recurrent_initializer = "orthogonal" by default
    local q = v[2]:value()
    assert.tensor_near(tf.eye(4), tf.matmul(q, q, {transpose_a = true}), {atol = 1e-5})
    assert.tensor_near({0, 0, 0, 0}, v[3]:value())
    assert.equal(3 * 4 + 4 * 4 + 4, l:count_params())
  end)

  it("go_backwards: processes the sequence from its end and returns it in that order", function()
    local seq, last = ref_rnn(X, K, R, B, {backwards = true})
    local r = rnn_with(K, R, B, {return_sequences = true, go_backwards = true})(tf.constant(X))
    assert.tensor_near(seq, r, {atol = 1e-5})
    assert.tensor_near(last, rnn_with(K, R, B, {go_backwards = true})(tf.constant(X)), {atol = 1e-5})
  end)

  it("masks: the state carries over a masked step and the output repeats the previous one", function()
    local seq, last, h = ref_rnn(X, K, R, B, {mask = MASK})
    local l = rnn_with(K, R, B, {return_sequences = true, return_state = true})
    local r = l(tf.constant(X), {mask = tf.constant(MASK)})
    assert.tensor_near(seq, r[1], {atol = 1e-5})
    assert.tensor_near(h, r[2], {atol = 1e-5})
    local only = rnn_with(K, R, B)(tf.constant(X), {mask = tf.constant(MASK)})
    assert.tensor_near(last, only, {atol = 1e-5})
    -- with zero_output_for_mask the masked outputs are zeros
    local zseq = ref_rnn(X, K, R, B, {mask = MASK, zero_output = true})
    local z = rnn_with(K, R, B, {return_sequences = true, zero_output_for_mask = true})(tf.constant(X),
      {mask = tf.constant(MASK)})
    assert.tensor_near(zseq, z, {atol = 1e-5})
    assert.tensor_near({0, 0}, z[{2, 1}])
    -- backwards with a mask
    local bseq = ref_rnn(X, K, R, B, {mask = MASK, backwards = true})
    local bw = rnn_with(K, R, B, {return_sequences = true, go_backwards = true})(tf.constant(X),
      {mask = tf.constant(MASK)})
    assert.tensor_near(bseq, bw, {atol = 1e-5})
  end)

  it("passes the mask on with return_sequences, drops it otherwise", function()
    local get = tf.core.internal.keras.get_mask
    local x = tf.constant(X)
    tf.core.internal.keras.set_mask(x, tf.constant(MASK))
    local seq = L.SimpleRNN{2, return_sequences = true}(x)
    assert.tensor_near(MASK, get(seq))
    assert.is_nil(get(L.SimpleRNN{2}(x)))
    local r = L.SimpleRNN{2, return_sequences = true, return_state = true}(x)
    assert.tensor_near(MASK, get(r[1]))
    assert.is_nil(get(r[2]))
  end)

  it("takes initial_state as an option or after the input", function()
    local h0 = {{0.5, -0.5}, {0.25, 1.0}}
    local seq, _, h = ref_rnn(X, K, R, B, {h0 = h0})
    local l = rnn_with(K, R, B, {return_sequences = true, return_state = true})
    local r = l(tf.constant(X), {initial_state = {tf.constant(h0)}})
    assert.tensor_near(seq, r[1], {atol = 1e-5})
    assert.tensor_near(h, r[2], {atol = 1e-5})
    local r2 = l({tf.constant(X), tf.constant(h0)})
    assert.tensor_near(seq, r2[1], {atol = 1e-5})
    assert.tf_error("ValueError", "Layer has 1 states but was passed 2 initial states", function()
      l(tf.constant(X), {initial_state = {tf.constant(h0), tf.constant(h0)}})
    end)
    assert.tf_error("ValueError", "An `initial_state` was passed that is not compatible with `cell.state_size`",
      function() l(tf.constant(X), {initial_state = {tf.ones({2, 3})}}) end)
  end)

  it("get_initial_state gives zero states for a batch of inputs", function()
    local l = L.RNN{{L.SimpleRNNCell{2}, L.SimpleRNNCell{3}}}
    local st = l:get_initial_state(tf.ones({4, 5, 6}))
    assert.equal(2, #st)
    assert.tensor_near(tf.zeros({4, 2}), st[1])
    assert.tensor_near(tf.zeros({4, 3}), st[2])
    local tm = L.SimpleRNN{2, time_major = true}:get_initial_state(tf.ones({5, 4, 6}))
    assert.shape({4, 2}, tm[1])
  end)

  it("time_major: (time, batch, features) in and out", function()
    local seq = ref_rnn(X, K, R, B)
    local xt = tf.transpose(tf.constant(X), {2, 1, 3})
    local r = rnn_with(K, R, B, {return_sequences = true, time_major = true})(xt)
    assert.shape({4, 2, 2}, r)
    assert.tensor_near(seq, tf.transpose(r, {2, 1, 3}), {atol = 1e-5})
  end)

  it("stateful: the last states start the next call; reset_states zeroes them", function()
    local x1, x2 = {}, {}
    for bi = 1, 2 do x1[bi] = {X[bi][1], X[bi][2]}; x2[bi] = {X[bi][3], X[bi][4]} end
    local _, _, h_all = ref_rnn(X, K, R, B)
    local _, _, h_second = ref_rnn(x2, K, R, B)
    local l = rnn_with(K, R, B, {stateful = true})
    l(tf.constant(x1))
    assert.tensor_near(h_all, l(tf.constant(x2)), {atol = 1e-5})
    assert.equal(1, #l.states)
    assert.equal(3, #l.variables)    -- the states are not weights
    l:reset_states()
    assert.tensor_near({{0, 0}, {0, 0}}, l.states[1]:value())
    assert.tensor_near(h_second, l(tf.constant(x2)), {atol = 1e-5})
    l:reset_states({tf.constant({{1, 2}, {3, 4}}, tf.float32)})
    assert.tensor_near({{1, 2}, {3, 4}}, l.states[1]:value())
    assert.tf_error("ValueError", "State 1 is incompatible with layer " .. l.name .. ": expected shape=(2, 2) " ..
      "but found shape=(1, 2)", function() l:reset_states({tf.ones({1, 2})}) end)
    assert.tf_error("ValueError", "expected shape=(2, None, 3), found shape=(3, 2, 3)", function()
      l(tf.ones({3, 2, 3}))
    end)
    assert.tf_error("AttributeError", "Layer must be stateful.", function() L.SimpleRNN{2}:reset_states() end)
  end)

  it("stateful inside tf.fn: the states variables carry across calls of the trace", function()
    local x1, x2 = {}, {}
    for bi = 1, 2 do x1[bi] = {X[bi][1], X[bi][2]}; x2[bi] = {X[bi][3], X[bi][4]} end
    local _, _, h_all = ref_rnn(X, K, R, B)
    local l = rnn_with(K, R, B, {stateful = true})
    local f = tf.fn(function(v) return l(v) end, {input_signature = {tf.TensorSpec({2, -1, 3}, tf.float32)}})
    f(tf.constant(x1))
    assert.tensor_near(h_all, f(tf.constant(x2)), {atol = 1e-5})
    assert.tensor_near(h_all, l.states[1]:value(), {atol = 1e-5})
  end)

  it("checks the input rank with Keras's message", function()
    local l = L.SimpleRNN{2}
    assert.tf_error("ValueError", "Input 0 of layer \"" .. l.name .. "\" is incompatible with the layer: " ..
      "expected ndim=3, found ndim=2. Full shape received: (2, 3)", function() l(tf.ones({2, 3})) end)
    l(tf.ones({1, 2, 3}))
    assert.tf_error("ValueError", "expected ndim=3, found ndim=4", function() l(tf.ones({1, 2, 3, 1})) end)
  end)

  it("checks its arguments", function()
    assert.tf_error("ValueError", "SimpleRNN: 'units' must be a positive integer, got 0", function()
      L.SimpleRNN{0}
    end)
    assert.tf_error("TypeError", "SimpleRNN: unknown keyword argument 'unit'", function() L.SimpleRNN{unit = 2} end)
    assert.tf_error("ValueError", "Unknown activation function: 'tanhh'", function()
      L.SimpleRNN{2, activation = "tanhh"}
    end)
  end)

  it("dropout: one mask per sequence, only in training", function()
    tf.random.set_seed(3)
    local l = L.SimpleRNN{8, dropout = 0.5, recurrent_dropout = 0.5, return_sequences = true}
    local x = tf.ones({4, 5, 6})
    local a = l(x)
    assert.tensor_near(a, l(x, {training = false}))
    local t = l(x, {training = true})
    assert.is_true(tf.reduce_max(tf.abs(t - a)):item() > 1e-3)
    -- input dropout alone at step 1 (the state is zero): x * mask / (1 - rate) . kernel
    local d = L.SimpleRNN{3, dropout = 0.5, use_bias = false, recurrent_initializer = "zeros",
                          activation = "linear", kernel_initializer = "ones", return_sequences = true}
    local y = d(tf.ones({1, 3, 4}), {training = true})
    -- every step sees the same mask: with recurrent kernel 0, all steps are equal
    assert.tensor_near(y[{{}, 1}], y[{{}, 3}])
    local v = y[{1, 1, 1}]:item()
    assert.is_true(v == 0 or v == 2 or v == 4 or v == 6 or v == 8)
  end)

  it("gets_config and from_config round-trip", function()
    local l = L.SimpleRNN{5, activation = "relu", return_sequences = true, go_backwards = true, dropout = 0.25,
                          recurrent_initializer = "glorot_uniform", name = "r1"}
    local c = l:get_config()
    assert.equal(5, c.units)
    assert.equal("relu", c.activation)
    assert.is_true(is_init(c.recurrent_initializer, "glorot_uniform", "GlorotUniform"))
    assert.is_true(is_init(c.kernel_initializer, "glorot_uniform", "GlorotUniform"))
    assert.equal(0.25, c.dropout)
    assert.is_true(c.return_sequences)
    assert.is_true(c.go_backwards)
    assert.is_false(c.stateful)
    assert.is_nil(c.cell)
    local m = L.SimpleRNN.from_config(c)
    assert.same(c, m:get_config())
    local cell = L.SimpleRNNCell{3, use_bias = false}
    local cc = cell:get_config()
    assert.is_false(cc.use_bias)
    assert.is_true(is_init(cc.recurrent_initializer, "orthogonal", "Orthogonal"))
    assert.same(cc, L.SimpleRNNCell.from_config(cc):get_config())
  end)
end)

describe("keras RNN", function()
  it("runs a user cell (a Layer with state_size and call)", function()
    -- h' = h + x . 1 (a running sum of the features)
    local Acc = L.Layer:extend("Acc", {
      init = function(self) L.Layer.init(self); self.state_size = 1 end,
      call = function(_, x, states)
        local h = states[1] + tf.reduce_sum(x, {axis = -1, keepdims = true})
        return h, {h}
      end,
    })
    local x = tf.constant({{{1, 2}, {3, 4}, {5, 6}}}, tf.float32)
    local r = L.RNN{Acc(), return_sequences = true}(x)
    assert.tensor_near({{{3}, {10}, {21}}}, r)
    assert.tensor_near({{21}}, L.RNN{Acc()}(x))
    -- a mask skips step 2
    assert.tensor_near({{{3}, {3}, {14}}}, L.RNN{Acc(), return_sequences = true}(x,
      {mask = tf.constant({{true, false, true}})}))
  end)

  it("wraps SimpleRNNCell like SimpleRNN", function()
    local seq = ref_rnn(X, K, R, B)
    local cell = L.SimpleRNNCell{2, kernel_initializer = const(K), recurrent_initializer = const(R),
                                 bias_initializer = const(B)}
    local l = L.RNN{cell, return_sequences = true}
    assert.tensor_near(seq, l(tf.constant(X)), {atol = 1e-5})
    assert.equal(l.name .. "/" .. cell.name .. "/kernel:0", l.variables[1].name)
  end)

  it("stacks cells: an array of cells is a StackedRNNCells", function()
    local K2, R2 = rand_table({2, 3}, rnd), rand_table({3, 3}, rnd)
    local seq1, _, h1 = ref_rnn(X, K, R, B)
    local _, last2, h2 = ref_rnn(seq1, K2, R2, nil)
    local c1 = L.SimpleRNNCell{2, kernel_initializer = const(K), recurrent_initializer = const(R),
                               bias_initializer = const(B)}
    local c2 = L.SimpleRNNCell{3, kernel_initializer = const(K2), recurrent_initializer = const(R2), use_bias = false}
    local l = L.RNN{{c1, c2}, return_state = true}
    local r = l(tf.constant(X))
    assert.equal(3, #r)
    assert.tensor_near(last2, r[1], {atol = 1e-5})
    assert.tensor_near(h1, r[2], {atol = 1e-5})
    assert.tensor_near(h2, r[3], {atol = 1e-5})
    assert.equal("StackedRNNCells", l.cell._class_name)
    assert.same({2, 3}, l.cell.state_size)
    assert.equal(5, #l.variables)
  end)

  it("get_config / from_config round-trip with the cell (stacked too)", function()
    local l = L.RNN{L.SimpleRNNCell{4, activation = "relu"}, return_state = true, stateful = true}
    local c = l:get_config()
    assert.equal("SimpleRNNCell", c.cell.class_name)
    assert.equal(4, c.cell.config.units)
    local m = L.RNN.from_config(c)
    assert.equal("SimpleRNNCell", m.cell._class_name)
    assert.same(c, m:get_config())
    local s = L.RNN{{L.SimpleRNNCell{2}, L.SimpleRNNCell{3}}}
    local sc = s:get_config()
    assert.equal("StackedRNNCells", sc.cell.class_name)
    assert.equal(2, #sc.cell.config.cells)
    local s2 = L.RNN.from_config(sc)
    assert.same({2, 3}, s2.cell.state_size)
    assert.shape({2, 3}, s2(tf.ones({2, 4, 5})))
  end)

  it("runs a cell with several states of different sizes (output_size given), eagerly and as a graph loop", function()
    -- states {a (batch, 1), b (batch, 2)}: a' = a + sum(x), b' = b * 0.5 + x; output = b' * a'
    local Two = L.Layer:extend("Two", {
      init = function(self) L.Layer.init(self); self.state_size = {1, 2}; self.output_size = 2 end,
      call = function(_, x, st)
        local a = st[1] + tf.reduce_sum(x, {axis = -1, keepdims = true})
        local b = st[2] * 0.5 + x
        return b * a, {a, b}
      end,
    })
    local l = L.RNN{Two(), return_sequences = true, return_state = true}
    local x = tf.constant({{{1, 2}, {3, 4}}}, tf.float32)
    local r = l(x)
    -- step 1: a = 3, b = (1, 2), out = (3, 6); step 2: a = 10, b = (3.5, 5), out = (35, 50)
    assert.tensor_near({{{3, 6}, {35, 50}}}, r[1])
    assert.tensor_near({{10}}, r[2])
    assert.tensor_near({{3.5, 5}}, r[3])
    local f = tf.fn(function(v) return l(v) end, {input_signature = {tf.TensorSpec({-1, -1, 2}, tf.float32)}})
    local g = f(x)
    for i = 1, 3 do assert.tensor_near(r[i], g[i]) end
  end)

  it("time_major with a (time, batch) mask; unroll needs a known time length", function()
    local seq = ref_rnn(X, K, R, B, {mask = MASK})
    local xt = tf.transpose(tf.constant(X), {2, 1, 3})
    local mt = tf.transpose(tf.constant(MASK), {2, 1})
    local r = rnn_with(K, R, B, {return_sequences = true, time_major = true})(xt, {mask = mt})
    assert.tensor_near(seq, tf.transpose(r, {2, 1, 3}), {atol = 1e-5})
    local u = rnn_with(K, R, B, {unroll = true})
    assert.tensor_near(rnn_with(K, R, B)(tf.constant(X)), u(tf.constant(X)), {atol = 1e-6})
    local f = tf.fn(function(v) return u(v) end, {input_signature = {tf.TensorSpec({-1, -1, 3}, tf.float32)}})
    assert.tf_error("ValueError", "Cannot unroll a RNN if the time dimension is undefined", function()
      f(tf.constant(X))
    end)
  end)

  it("checks the cell", function()
    assert.tf_error("ValueError", "argument `cell` should have a `call` method", function() L.RNN{42} end)
    local NoState = L.Layer:extend("NoState", {call = function(_, x) return x, {} end})
    assert.tf_error("ValueError", "should have a `state_size` attribute", function() L.RNN{NoState()} end)
  end)

  it("runs in tf.fn with an unknown time length (a while loop) as eagerly", function()
    local l = rnn_with(K, R, B, {return_sequences = true, return_state = true})
    local x = tf.constant(X)
    local eager = l(x)
    local f = tf.fn(function(v, m) return l(v, {mask = m}) end,
                    {input_signature = {tf.TensorSpec({-1, -1, 3}, tf.float32), tf.TensorSpec({-1, -1}, tf.bool)}})
    local m = tf.constant(MASK)
    local masked = l(x, {mask = m})
    local g = f(x, m)
    assert.tensor_near(masked[1], g[1], {atol = 1e-5})
    assert.tensor_near(masked[2], g[2], {atol = 1e-5})
    local ones = tf.ones({2, 4}, tf.bool)
    assert.tensor_near(eager[1], f(x, ones)[1], {atol = 1e-5})
    -- other lengths through the same trace
    local x6 = tf.random.normal({3, 6, 3})
    assert.tensor_near(l(x6)[1], f(x6, tf.ones({3, 6}, tf.bool))[1], {atol = 1e-5})
  end)

  it("differentiates through the graph loop as through the eager one", function()
    local l = rnn_with(K, R, B)
    local x = tf.constant(X)
    local function grads(v)
      local t = tf.GradientTape()
      local y = t:record(function() return tf.reduce_sum(l(v) * tf.constant({{1, 2}, {-1, 0.5}})) end)
      return t:gradient(y, l.trainable_variables)
    end
    local eager = grads(x)
    local f = tf.fn(grads, {input_signature = {tf.TensorSpec({-1, -1, 3}, tf.float32)}})
    local g = f(x)
    for i = 1, 3 do assert.tensor_near(eager[i], g[i], {atol = 1e-5}) end
  end)
end)

describe("keras SimpleRNN gradients", function()
  -- central differences in float64 of sum(layer(x) * w), w fixed
  it("match finite differences for inputs, kernel, recurrent kernel and bias (with a mask)", function()
    local l = rnn_with(K, R, B, {dtype = "float64", return_sequences = true})
    local x = tf.Variable(tf.constant(X, tf.float64))
    local mask = tf.constant(MASK)
    local w = tf.constant(rand_table({2, 4, 2}, rnd), tf.float64)
    local function loss() return tf.reduce_sum(l(x, {mask = mask}) * w) end
    loss()
    local targets = {x, table.unpack(l.trainable_variables)}
    local t = tf.GradientTape()
    local y = t:record(loss)
    local grads = t:gradient(y, targets)
    local eps = 1e-6
    for i, v in ipairs(targets) do
      local base = v:value()
      local flat = tf.reshape(base, {-1}):totable()
      local num = {}
      for k = 1, #flat do
        local p = {table.unpack(flat)}
        p[k] = flat[k] + eps
        v:assign(tf.reshape(tf.constant(p, tf.float64), base.shape:as_list()))
        local up = loss():item()
        p[k] = flat[k] - eps
        v:assign(tf.reshape(tf.constant(p, tf.float64), base.shape:as_list()))
        local down = loss():item()
        num[k] = (up - down) / (2 * eps)
      end
      v:assign(base)
      assert.tensor_near(num, tf.reshape(grads[i], {-1}), {atol = 1e-7, rtol = 1e-6})
    end
  end)
end)

describe("keras RNN loop gradients (spec/gradcheck harness)", function()
  local harness = require("gradcheck.harness")
  -- the SimpleRNN step as a user cell over the harness's tensors, so the
  -- harness differentiates x, kernel, recurrent kernel and bias through the loop
  local function run(x, k, r, b, mask)
    local Cell = L.Layer:extend("GradCell", {
      init = function(self) L.Layer.init(self, {dtype = "float64"}); self.state_size = 2 end,
      call = function(_, xt, st)
        local h = tf.tanh(tf.matmul(xt, k) + b + tf.matmul(st[1], r))
        return h, {h}
      end,
    })
    return L.RNN{Cell(), return_sequences = true, go_backwards = true, dtype = "float64"}(x, {mask = mask})
  end
  -- the weights enter tf.fn as arguments (gradients do not reach eager
  -- tensors a tf.fn captures)
  local graph_run = tf.fn(run, {input_signature = {tf.TensorSpec({-1, -1, 3}, tf.float64),
    tf.TensorSpec({3, 2}, tf.float64), tf.TensorSpec({2, 2}, tf.float64), tf.TensorSpec({2}, tf.float64),
    tf.TensorSpec({-1, -1}, tf.bool)}})
  local function case(graph)
    return {inputs = {{{2, 4, 3}}, {{3, 2}}, {{2, 2}, "unit"}, {{2}}}, fn = function(_, x, k, r, b)
      return (graph and graph_run or run)(x, k, r, b, tf.constant(MASK))
    end}
  end
  it("match finite differences, unrolled and as a graph while loop", function()
    local ok, msg = harness.check("rnn_loop", case(false))
    assert.is_true(ok, msg)
    ok, msg = harness.check("rnn_while_loop", case(true))
    assert.is_true(ok, msg)
  end)
end)

describe("keras initializers.Orthogonal", function()
  it("gives orthonormal columns (or rows), scaled by gain", function()
    local q = tf.keras.initializers.Orthogonal{gain = 2, seed = 1}({5, 3}, tf.float64)
    assert.tensor_near(tf.eye(3, {dtype = tf.float64}) * 4, tf.matmul(q, q, {transpose_a = true}), {atol = 1e-9})
    local w = tf.keras.initializers.get("orthogonal")({2, 6})
    assert.tensor_near(tf.eye(2), tf.matmul(w, w, {transpose_b = true}), {atol = 1e-5})
    local c = tf.keras.initializers.Orthogonal()({2, 2, 4})   -- (4, 4) reshaped
    local m = tf.reshape(c, {4, 4})
    assert.tensor_near(tf.eye(4), tf.matmul(m, m, {transpose_a = true}), {atol = 1e-5})
    assert.tf_error("ValueError", "Orthogonal: the tensor to initialize must be at least two-dimensional", function()
      tf.keras.initializers.Orthogonal()({3})
    end)
  end)
end)

describe("keras SimpleRNN in a model", function()
  it("trains in a Sequential model with fit (the loss falls)", function()
    tf.random.set_seed(5)
    local n, T = 32, 6
    local xs, ys = {}, {}
    local r = lua_rand(9)
    for i = 1, n do
      local row, s = {}, 0
      for t = 1, T do row[t] = {r()}; s = s + row[t][1] end
      xs[i], ys[i] = row, {s > 0 and 1 or 0}
    end
    local model = tf.keras.Sequential{L.SimpleRNN{8, input_shape = {T, 1}}, L.Dense{1, activation = "sigmoid"}}
    model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.05}, loss = "binary_crossentropy"}
    local h = model:fit(tf.constant(xs), tf.constant(ys, tf.float32), {epochs = 15, batch_size = 8, verbose = 0})
    local losses = h.history.loss
    assert.is_true(losses[#losses] < losses[1] * 0.7)
  end)
end)
