-- tf.keras.layers.Bidirectional: a forward and a backward copy of an RNN,
-- merged, against a float64 plain-Lua SimpleRNN reference; masks, states,
-- weight names, configs and errors.
local tf = require("tf")
local L = tf.keras.layers
local K = tf.core.internal.keras

local function vecmat(v, m)
  local out = {}
  for j = 1, #m[1] do
    local s = 0
    for i = 1, #v do s = s + v[i] * m[i][j] end
    out[j] = s
  end
  return out
end

-- SimpleRNN reference: outputs aligned with the input's timesteps (the
-- backward pass's outputs put back in input order), zeros at masked steps,
-- and the final state.
local function ref(x, Kw, Rw, b, backwards, mask)
  local seq, hs = {}, {}
  for bi = 1, #x do
    local T = #x[bi]
    local h = {}
    for j = 1, #Kw[1] do h[j] = 0 end
    seq[bi] = {}
    for step = 1, T do
      local t = backwards and (T + 1 - step) or step
      if not mask or mask[bi][t] then
        local a, c = vecmat(x[bi][t], Kw), vecmat(h, Rw)
        local nh = {}
        for j = 1, #a do nh[j] = math.tanh(a[j] + c[j] + b[j]) end
        h = nh
        seq[bi][t] = nh
      else
        local z = {}
        for j = 1, #h do z[j] = 0 end
        seq[bi][t] = z
      end
    end
    hs[bi] = h
  end
  return seq, hs
end

local function const(v) return function(_, dtype) return tf.constant(v, dtype) end end
local X = {{{0.5, -1.0}, {0.25, 0.75}, {-0.5, 0.5}}, {{1.0, 0.0}, {-0.25, -0.5}, {0.5, 1.0}}}
local KW = {{0.3, -0.6}, {0.9, 0.2}}
local RW = {{0.1, -0.4}, {0.5, 0.3}}
local BW = {0.05, -0.1}
local function srnn(opts)
  opts = opts or {}
  opts[1] = 2
  opts.kernel_initializer, opts.recurrent_initializer, opts.bias_initializer = const(KW), const(RW), const(BW)
  return L.SimpleRNN(opts)
end

local function cat(a, b)   -- concat on the last axis of (B, T, n) tables
  local out = {}
  for i = 1, #a do
    out[i] = {}
    for t = 1, #a[i] do
      local row = {table.unpack(a[i][t])}
      for _, v in ipairs(b[i][t]) do row[#row + 1] = v end
      out[i][t] = row
    end
  end
  return out
end

describe("keras Bidirectional", function()
  it("concatenates the forward sequence and the backward one put back in input order", function()
    local f = ref(X, KW, RW, BW, false)
    local b = ref(X, KW, RW, BW, true)
    local l = L.Bidirectional{srnn{return_sequences = true}}
    local y = l(tf.constant(X))
    assert.shape({2, 3, 4}, y)
    assert.tensor_near(cat(f, b), y, {atol = 1e-6})
  end)

  it("merges the last outputs with sum, ave, mul, concat and none", function()
    local _, hf = ref(X, KW, RW, BW, false)
    local _, hb = ref(X, KW, RW, BW, true)
    local function map(fn)
      local out = {}
      for i = 1, 2 do out[i] = {fn(hf[i][1], hb[i][1]), fn(hf[i][2], hb[i][2])} end
      return out
    end
    local x = tf.constant(X)
    assert.tensor_near(map(function(a, b) return a + b end), L.Bidirectional{srnn(), merge_mode = "sum"}(x),
      {atol = 1e-6})
    assert.tensor_near(map(function(a, b) return (a + b) / 2 end), L.Bidirectional{srnn(), merge_mode = "ave"}(x),
      {atol = 1e-6})
    assert.tensor_near(map(function(a, b) return a * b end), L.Bidirectional{srnn(), merge_mode = "mul"}(x),
      {atol = 1e-6})
    local c = L.Bidirectional{srnn()}(x)
    assert.tensor_near({{hf[1][1], hf[1][2], hb[1][1], hb[1][2]}, {hf[2][1], hf[2][2], hb[2][1], hb[2][2]}}, c,
      {atol = 1e-6})
    local n = L.Bidirectional{srnn(), merge_mode = "none"}(x)
    assert.equal(2, #n)
    assert.tensor_near(hf, n[1], {atol = 1e-6})
    assert.tensor_near(hb, n[2], {atol = 1e-6})
  end)

  it("returns the forward and backward states with return_state", function()
    local _, hf = ref(X, KW, RW, BW, false)
    local _, hb = ref(X, KW, RW, BW, true)
    local r = L.Bidirectional{srnn{return_state = true}, merge_mode = "sum"}(tf.constant(X))
    assert.equal(3, #r)
    assert.tensor_near(hf, r[2], {atol = 1e-6})
    assert.tensor_near(hb, r[3], {atol = 1e-6})
    -- initial states: forward ones, then backward ones
    local z = tf.zeros({2, 2})
    local r2 = L.Bidirectional{srnn{return_state = true}, merge_mode = "sum"}(tf.constant(X), {initial_state = {z, z}})
    assert.tensor_near(r[1], r2[1], {atol = 1e-6})
    local h0 = tf.constant({{1, 1}, {1, 1}}, tf.float32)
    local r3 = L.Bidirectional{srnn{return_state = true}, merge_mode = "sum"}(tf.constant(X), {initial_state = {z, h0}})
    assert.tensor_near(hf, r3[2], {atol = 1e-6})
    assert.is_true(tf.reduce_max(tf.abs(r3[3] - r[3])):item() > 1e-3)
    assert.tf_error("ValueError", "the state should be a list containing the states of the underlying RNNs", function()
      L.Bidirectional{srnn()}(tf.constant(X), {initial_state = {z}})
    end)
  end)

  it("masks both directions: masked steps output zeros and keep the state", function()
    local mask = {{true, true, false}, {false, true, true}}
    local f, hf = ref(X, KW, RW, BW, false, mask)
    local b, hb = ref(X, KW, RW, BW, true, mask)
    local l = L.Bidirectional{srnn{return_sequences = true}}
    local y = l(tf.constant(X), {mask = tf.constant(mask)})
    assert.tensor_near(cat(f, b), y, {atol = 1e-6})
    assert.tensor_near(mask, K.get_mask(y))
    local last = L.Bidirectional{srnn()}(tf.constant(X), {mask = tf.constant(mask)})
    assert.tensor_near({{hf[1][1], hf[1][2], hb[1][1], hb[1][2]}, {hf[2][1], hf[2][2], hb[2][1], hb[2][2]}}, last,
      {atol = 1e-6})
    assert.is_nil(K.get_mask(last))
  end)

  it("names its weights as Keras: bidirectional/forward_<rnn>/<cell>/kernel, forward first", function()
    local inner = L.SimpleRNN{3, name = "enc"}
    local l = L.Bidirectional{inner, name = "bi"}
    l(tf.ones({1, 2, 4}))
    local v = l.trainable_variables
    assert.equal(6, #v)
    assert.equal("bi/forward_enc/simple_rnn_cell/kernel:0", v[1].name)
    assert.equal("bi/forward_enc/simple_rnn_cell/bias:0", v[3].name)
    assert.equal("bi/backward_enc/simple_rnn_cell/kernel:0", v[4].name)
    assert.is_false(inner.built)     -- the wrapped layer is a template, as in Keras
    assert.is_false(l.forward_layer.go_backwards)
    assert.is_true(l.backward_layer.go_backwards)
  end)

  it("takes a backward_layer and checks it", function()
    local l = L.Bidirectional{srnn{return_sequences = true}, backward_layer = srnn{return_sequences = true,
                                                                                    go_backwards = true}}
    local f = ref(X, KW, RW, BW, false)
    local b = ref(X, KW, RW, BW, true)
    assert.tensor_near(cat(f, b), l(tf.constant(X)), {atol = 1e-6})
    assert.tf_error("ValueError", "should have different `go_backwards` value", function()
      L.Bidirectional{srnn(), backward_layer = srnn()}
    end)
    assert.tf_error("ValueError", "should have the same `return_sequences` value", function()
      L.Bidirectional{srnn(), backward_layer = srnn{go_backwards = true, return_sequences = true}}
    end)
    assert.tf_error("ValueError", "Invalid merge mode. Received: max", function()
      L.Bidirectional{srnn(), merge_mode = "max"}
    end)
    assert.tf_error("ValueError", "with a `tf.keras.layers.Layer` instance", function() L.Bidirectional{42} end)
    assert.tf_error("ValueError", "must be a recurrent layer", function() L.Bidirectional{L.Dense{2}} end)
  end)

  it("computes its output shape without a call", function()
    local s = tf.TensorShape({-1, 7, 3})
    assert.equal("(None, 10)", tostring(L.Bidirectional{L.SimpleRNN{5}}:compute_output_shape(s)))
    assert.equal("(None, 7, 5)", tostring(L.Bidirectional{L.SimpleRNN{5, return_sequences = true},
      merge_mode = "sum"}:compute_output_shape(s)))
    local r = L.Bidirectional{L.SimpleRNN{5, return_state = true}}:compute_output_shape(s)
    assert.equal(3, #r)
    assert.equal("(None, 10)", tostring(r[1]))
    assert.equal("(None, 5)", tostring(r[3]))
    local n = L.Bidirectional{L.SimpleRNN{5}, merge_mode = "none"}:compute_output_shape(s)
    assert.equal(2, #n)
  end)

  it("get_config / from_config round-trip", function()
    local l = L.Bidirectional{L.SimpleRNN{3, return_sequences = true}, merge_mode = "ave"}
    local c = l:get_config()
    assert.equal("ave", c.merge_mode)
    assert.equal("SimpleRNN", c.layer.class_name)
    assert.equal(3, c.layer.config.units)
    local m = L.Bidirectional.from_config(c)
    assert.same(c, m:get_config())
    assert.shape({2, 5, 3}, m(tf.ones({2, 5, 4})))
    local n = L.Bidirectional{L.SimpleRNN{2}, merge_mode = "none"}
    assert.equal("none", n:get_config().merge_mode)
    assert.is_nil(L.Bidirectional.from_config(n:get_config()).merge_mode)
  end)

  it("runs in tf.fn with an unknown time length and trains in a Sequential model", function()
    local l = L.Bidirectional{srnn{return_sequences = true}}
    local x = tf.constant(X)
    local eager = l(x)
    local f = tf.fn(function(v) return l(v) end, {input_signature = {tf.TensorSpec({-1, -1, 2}, tf.float32)}})
    assert.tensor_near(eager, f(x), {atol = 1e-6})
    tf.random.set_seed(2)
    local model = tf.keras.Sequential{L.Bidirectional{L.SimpleRNN{4}, input_shape = {3, 2}}, L.Dense{1}}
    model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.05}, loss = "mse"}
    local y = tf.constant({{1}, {-1}}, tf.float32)
    local h = model:fit(x, y, {epochs = 20, verbose = 0})
    assert.is_true(h.history.loss[20] < h.history.loss[1] * 0.5)
  end)
end)
