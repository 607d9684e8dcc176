-- MultiHeadAttention, EinsumDense, Attention and AdditiveAttention against
-- float64 references computed in Lua arithmetic, finite-difference
-- gradients, masks, errors, and a Transformer encoder block that trains.
local tf = require("tf")
local L = tf.keras.layers
local K = tf.core.internal.keras

local function rand(dims, seed)
  return tf.random.normal(dims, 0, 1, tf.float64, seed)
end

local function err_of(f)
  local ok, e = pcall(f)
  assert.is_false(ok, "expected an error")
  return e
end

-- {==== Lua references
local function softmax_row(row, keep)
  local m = -math.huge
  local xs = {}
  for j = 1, #row do
    xs[j] = row[j] + (keep[j] and 0 or -1e9)
    if xs[j] > m then m = xs[j] end
  end
  local s = 0
  for j = 1, #xs do xs[j] = math.exp(xs[j] - m); s = s + xs[j] end
  for j = 1, #xs do xs[j] = xs[j] / s end
  return xs
end

-- x [B][T][D] . W [D][N][H] + b [N][H] -> [B][T][N][H]
local function project(x, W, b)
  local out = {}
  for bi = 1, #x do
    out[bi] = {}
    for t = 1, #x[bi] do
      local r = {}
      for n = 1, #W[1] do
        r[n] = {}
        for h = 1, #W[1][n] do
          local s = b and b[n][h] or 0
          for d = 1, #W do s = s + x[bi][t][d] * W[d][n][h] end
          r[n][h] = s
        end
      end
      out[bi][t] = r
    end
  end
  return out
end

-- The Keras MultiHeadAttention of rank-3 inputs; keep(b, t, s) says whether
-- query t of example b may attend to key s. Returns output, scores.
local function mha_ref(w, q, v, k, keep)
  local Q, Kp, V = project(q, w[1], w[2]), project(k, w[3], w[4]), project(v, w[5], w[6])
  local Wo, bo = w[7], w[8]
  local H = #w[1][1][1]
  local out, scores = {}, {}
  for b = 1, #q do
    out[b], scores[b] = {}, {}
    for n = 1, #w[1][1] do scores[b][n] = {} end
    for t = 1, #q[b] do
      local heads = {}
      for n = 1, #w[1][1] do
        local row, mask = {}, {}
        for s = 1, #k[b] do
          local d = 0
          for h = 1, H do d = d + Q[b][t][n][h] / math.sqrt(H) * Kp[b][s][n][h] end
          row[s], mask[s] = d, keep(b, t, s)
        end
        local p = softmax_row(row, mask)
        scores[b][n][t] = p
        heads[n] = {}
        for hv = 1, #V[b][1][n] do
          local a = 0
          for s = 1, #k[b] do a = a + p[s] * V[b][s][n][hv] end
          heads[n][hv] = a
        end
      end
      local o = {}
      for j = 1, #bo do
        local a = bo[j]
        for n = 1, #heads do for hv = 1, #heads[n] do a = a + heads[n][hv] * Wo[n][hv][j] end end
        o[j] = a
      end
      out[b][t] = o
    end
  end
  return out, scores
end

local function weights_of(layer)
  local w = {}
  for i, x in ipairs(layer:get_weights()) do w[i] = x:totable() end
  return w
end

local function always() return true end
-- }====

describe("keras MultiHeadAttention", function()
  local q = rand({2, 3, 5}, 1)
  local v = rand({2, 4, 4}, 2)
  local k = rand({2, 4, 6}, 3)

  it("has Keras's weights: names, shapes and order", function()
    local mha = L.MultiHeadAttention{num_heads = 2, key_dim = 3, value_dim = 2, dtype = "float64"}
    mha(q, v, k)
    local got = {}
    for i, x in ipairs(mha.weights) do got[i] = x.name .. " " .. tostring(x.shape) end
    assert.same({"query/kernel:0 (5, 2, 3)", "query/bias:0 (2, 3)", "key/kernel:0 (6, 2, 3)", "key/bias:0 (2, 3)",
      "value/kernel:0 (4, 2, 2)", "value/bias:0 (2, 2)", "attention_output/kernel:0 (2, 2, 5)",
      "attention_output/bias:0 (5,)"}, got)
    local nb = L.MultiHeadAttention{num_heads = 2, key_dim = 3, use_bias = false, output_shape = 7}
    local y = nb(tf.cast(q, tf.float32), tf.cast(v, tf.float32))
    assert.shape({2, 3, 7}, y)
    assert.equal(4, #nb.weights)
  end)

  it("matches a float64 reference with value, key, query mask, attention mask and causal mask", function()
    local mha = L.MultiHeadAttention{num_heads = 2, key_dim = 3, value_dim = 2, dtype = "float64"}
    mha(q, v, k)
    -- nonzero biases so that they are checked too
    local ws = mha:get_weights()
    for i = 2, 8, 2 do ws[i] = rand(ws[i]:_dims(), 10 + i) end
    mha:set_weights(ws)
    local w = weights_of(mha)
    local qt, vt, kt = q:totable(), v:totable(), k:totable()
    local out, scores = table.unpack(mha(q, v, k, {return_attention_scores = true}))
    local want_o, want_s = mha_ref(w, qt, vt, kt, always)
    assert.tensor_near(want_o, out, {atol = 1e-10})
    assert.tensor_near(want_s, scores, {atol = 1e-12})
    -- masks: query mask (example 1: step 3 padded), value mask (example 2:
    -- key 4 padded), an explicit mask and causal
    local qm = tf.constant({{true, true, false}, {true, true, true}})
    local vm = tf.constant({{true, true, true, true}, {true, true, true, false}})
    local am = {{{true, false, true, true}, {true, true, true, true}, {true, true, false, true}},
                {{true, true, true, true}, {false, true, true, true}, {true, true, true, true}}}
    local qmt, vmt = qm:totable(), vm:totable()
    local function keep(b, t, s) return qmt[b][t] and vmt[b][s] and am[b][t][s] and s <= t end
    local qq = K.set_mask(tf.identity(q), qm)
    local vv = K.set_mask(tf.identity(v), vm)
    local o2, s2 = table.unpack(mha(qq, {value = vv, key = k, attention_mask = tf.constant(am),
                                         use_causal_mask = true, return_attention_scores = true}))
    local ro, rs = mha_ref(w, qt, vt, kt, keep)
    assert.tensor_near(ro, o2, {atol = 1e-10})
    assert.tensor_near(rs, s2, {atol = 1e-12})
    -- a (T, S) mask applies to every example
    local am2 = {{true, false, true, true}, {true, true, false, true}, {false, true, true, true}}
    local o3 = mha(q, v, k, {attention_mask = tf.constant(am2)})
    assert.tensor_near(mha_ref(w, qt, vt, kt, function(_, t, s) return am2[t][s] end), o3, {atol = 1e-10})
    -- the output carries the query's mask; the scores none
    assert.same(qmt, K.get_mask(o2):totable())
    assert.is_nil(K.get_mask(s2))
  end)

  it("gives future positions exactly zero weight with use_causal_mask", function()
    local mha = L.MultiHeadAttention{num_heads = 4, key_dim = 8}
    local x = tf.random.normal({2, 6, 16}, 0, 1, tf.float32, 7)   -- scale 1: no allowed weight underflows to 0
    local _, s = table.unpack(mha(x, x, {use_causal_mask = true, return_attention_scores = true}))
    local st = s:totable()
    local zeros, positive = 0, 0
    for b = 1, 2 do for h = 1, 4 do for i = 1, 6 do
      local sum = 0
      for j = 1, 6 do
        sum = sum + st[b][h][i][j]
        if j > i then
          assert.equal(0, st[b][h][i][j])
          zeros = zeros + 1
        elseif st[b][h][i][j] > 0 then
          positive = positive + 1
        end
      end
      assert.near(1, sum, 1e-5)
    end end end
    assert.equal(2 * 4 * 15, zeros)
    assert.equal(2 * 4 * 21, positive)
  end)

  it("accepts Keras's call forms: (q, v), (q, v, k), ({q, v, k}), (q, {value =, key =})", function()
    local mha = L.MultiHeadAttention{num_heads = 2, key_dim = 3, dtype = "float64"}
    local a = mha(q, v, k)
    assert.tensor_near(a, mha({q, v, k}), {atol = 1e-12})
    assert.tensor_near(a, mha(q, {value = v, key = k}), {atol = 1e-12})
    assert.tensor_near(a, mha(q, v, k, {training = false}), {atol = 1e-12})
    -- key defaults to value
    local m2 = L.MultiHeadAttention{num_heads = 2, key_dim = 3, dtype = "float64"}
    assert.tensor_near(m2(q, v, v), m2(q, v), {atol = 1e-12})
    assert.tensor_near(m2(q, v, v), m2(q, v, nil, {training = false}), {atol = 1e-12})
  end)

  it("attends over several axes (attention_axes) as over the flattened positions", function()
    local m4 = L.MultiHeadAttention{num_heads = 2, key_dim = 3, attention_axes = {2, 3}, dtype = "float64"}
    local m3 = L.MultiHeadAttention{num_heads = 2, key_dim = 3, dtype = "float64"}
    local x4, y4 = rand({2, 2, 3, 5}, 4), rand({2, 3, 2, 5}, 5)
    local o4, s4 = table.unpack(m4(x4, y4, {return_attention_scores = true}))
    m3(tf.reshape(x4, {2, 6, 5}), tf.reshape(y4, {2, 6, 5}))
    m3:set_weights(m4:get_weights())
    local o3, s3 = table.unpack(m3(tf.reshape(x4, {2, 6, 5}), tf.reshape(y4, {2, 6, 5}),
                                   {return_attention_scores = true}))
    assert.shape({2, 2, 2, 3, 3, 2}, s4)
    assert.tensor_near(o3, tf.reshape(o4, {2, 6, 5}), {atol = 1e-10})
    assert.tensor_near(s3, tf.reshape(s4, {2, 2, 6, 6}), {atol = 1e-12})
    -- one attention axis of a rank-4 input: the other axis acts as a batch axis
    local ma = L.MultiHeadAttention{num_heads = 2, key_dim = 3, attention_axes = {2}, dtype = "float64"}
    local oa = ma(x4, x4)
    local mb = L.MultiHeadAttention{num_heads = 2, key_dim = 3, dtype = "float64"}
    local xt = tf.reshape(tf.transpose(x4, {1, 3, 2, 4}), {6, 2, 5})
    mb(xt, xt)
    mb:set_weights(ma:get_weights())
    assert.tensor_near(tf.reshape(tf.transpose(oa, {1, 3, 2, 4}), {6, 2, 5}), mb(xt, xt), {atol = 1e-10})
    -- the generic einsum path agrees with the batched-matmul path of rank 3
    rawset(m3, "_fast", false)
    assert.tensor_near(o3, m3(tf.reshape(x4, {2, 6, 5}), tf.reshape(y4, {2, 6, 5})), {atol = 1e-10})
  end)

  it("has the gradients of finite differences (float64) for inputs and weights", function()
    local mha = L.MultiHeadAttention{num_heads = 2, key_dim = 2, value_dim = 3, dtype = "float64"}
    local q0, v0 = rand({1, 2, 3}, 21), rand({1, 3, 3}, 22)
    local c = rand({1, 2, 3}, 23)
    local am = tf.constant({{{true, true, false}, {true, false, true}}})
    local function f(qq, vv) return tf.reduce_sum(mha(qq, vv, {attention_mask = am}) * c) end
    f(q0, v0)
    local qv, vv = tf.Variable(q0), tf.Variable(v0)
    local tape = tf.GradientTape()
    local y = tape:record(function() return f(qv, vv) end)
    local wk = mha._key_dense.kernel
    local gq, gv, gk = table.unpack(tape:gradient(y, {qv, vv, wk}))
    local h = 1e-6
    local function check(base, g, eval)
      local flat = base:totable()
      local gt = g:totable()
      local function walk(t, gtab, path)
        for i = 1, #t do
          if type(t[i]) == "table" then
            walk(t[i], gtab[i], path .. i .. ",")
          else
            local x = t[i]
            t[i] = x + h; local fp = eval(tf.constant(flat, tf.float64))
            t[i] = x - h; local fm = eval(tf.constant(flat, tf.float64))
            t[i] = x
            local fd = (fp - fm) / (2 * h)
            assert.is_true(math.abs(fd - gtab[i]) < 1e-6, ("[%s%d]: fd %g vs %g"):format(path, i, fd, gtab[i]))
          end
        end
      end
      walk(flat, gt, "")
    end
    check(q0, gq, function(t) return f(t, v0):item() end)
    check(v0, gv, function(t) return f(q0, t):item() end)
    local k0 = wk:value()
    check(k0, gk, function(t) wk:assign(t); local r = f(q0, v0):item(); wk:assign(k0); return r end)
  end)

  it("runs inside tf.fn with the eager values, and drops out scores only when training", function()
    local mha = L.MultiHeadAttention{num_heads = 2, key_dim = 4, dropout = 0.5}
    local x = tf.random.normal({3, 5, 8}, 0, 1, tf.float32, 9)
    local eager = mha(x, x, {use_causal_mask = true})
    local f = tf.fn(function(t) return mha(t, t, {use_causal_mask = true}) end)
    assert.tensor_near(eager, f(x), {atol = 1e-5})
    local g = tf.fn(function(t) return mha(t, t) end, {input_signature = {tf.TensorSpec({-1, -1, 8})}})
    assert.tensor_near(mha(x, x), g(x), {atol = 1e-5})
    -- a causal mask over sequences of unknown length
    local gc = tf.fn(function(t) return mha(t, t, {use_causal_mask = true}) end,
                     {input_signature = {tf.TensorSpec({-1, -1, 8})}})
    assert.tensor_near(eager, gc(x), {atol = 1e-5})
    -- query and value masks of unknown size
    local qm = tf.constant({{true, true, false, true, true}, {true, true, true, true, true},
                            {true, false, true, true, true}})
    local gm = tf.fn(function(t, m) return mha(t, t, {query_mask = m, value_mask = m}) end,
                     {input_signature = {tf.TensorSpec({-1, -1, 8}), tf.TensorSpec({-1, -1}, tf.bool)}})
    assert.tensor_near(mha(x, x, {query_mask = qm, value_mask = qm}), gm(x, qm), {atol = 1e-5})
    local att = L.Attention{}
    local ga = tf.fn(function(t) return att({t, t}, {use_causal_mask = true}) end,
                     {input_signature = {tf.TensorSpec({-1, -1, 8})}})
    assert.tensor_near(att({x, x}, {use_causal_mask = true}), ga(x), {atol = 1e-5})
    local _, s = table.unpack(mha(x, x, {training = true, return_attention_scores = true}))
    -- returned scores are before dropout: rows still sum to 1
    assert.tensor_near(tf.ones({3, 2, 5}), tf.reduce_sum(s, {axis = -1}), {atol = 1e-5})
    local t1 = mha(x, x, {training = true})
    assert.is_true(tf.reduce_max(tf.abs(t1 - mha(x, x))):item() > 1e-3)
  end)

  it("round-trips get_config through from_config", function()
    local mha = L.MultiHeadAttention{num_heads = 3, key_dim = 4, value_dim = 5, dropout = 0.25, use_bias = false,
      output_shape = {6}, attention_axes = {2}, kernel_initializer = "he_normal", name = "mha1"}
    local c = mha:get_config()
    assert.same({name = "mha1", trainable = true, dtype = "float32", num_heads = 3, key_dim = 4, value_dim = 5,
      dropout = 0.25, use_bias = false, output_shape = {6}, attention_axes = {2}, kernel_initializer = "he_normal",
      bias_initializer = "zeros"}, c)
    local m2 = L.MultiHeadAttention.from_config(c)
    assert.same(c, m2:get_config())
    assert.shape({2, 3, 6}, m2(tf.ones({2, 3, 4}), tf.ones({2, 2, 4})))
  end)

  it("raises errors naming the layer and the argument", function()
    local e = err_of(function() return L.MultiHeadAttention{key_dim = 2} end)
    assert.equal("ValueError", e.kind)
    assert.equal("MultiHeadAttention: 'num_heads' must be a positive integer, got nil", e.message)
    e = err_of(function() return L.MultiHeadAttention{num_heads = 2, key_dim = 2, dropout = 1} end)
    assert.equal("MultiHeadAttention: 'dropout' must be a number in [0, 1), got 1", e.message)
    local mha = L.MultiHeadAttention{num_heads = 2, key_dim = 2}
    local x = tf.ones({2, 3, 4})
    e = err_of(function() return mha(x) end)
    assert.equal("ValueError", e.kind)
    assert.truthy(e.message:find("MultiHeadAttention: 'value' must be given", 1, true))
    e = err_of(function() return mha(x, x, {causal = true}) end)
    assert.equal("TypeError", e.kind)
    assert.truthy(e.message:find("MultiHeadAttention: unknown call option 'causal' (accepted: ", 1, true))
    e = err_of(function() return mha(x, x, {attention_mask = tf.ones({2, 4, 3}, tf.bool)}) end)
    assert.equal("ValueError", e.kind)
    assert.equal("MultiHeadAttention: 'attention_mask' of shape (2, 4, 3) does not fit queries and values " ..
      "(batch, T, S) = (2, 3, 3)", e.message)
    e = err_of(function() return mha(x, x, {attention_mask = tf.ones({3}, tf.bool)}) end)
    assert.equal("MultiHeadAttention: 'attention_mask' must have shape (batch, T, S) (rank 3), got (3,)", e.message)
    e = err_of(function() return L.MultiHeadAttention{num_heads = 2, key_dim = 2}(x, tf.ones({2, 3})) end)
    assert.equal("ValueError", e.kind)
    assert.equal("MultiHeadAttention: query, value and key must have the same rank, got (2, 3, 4), (2, 3) and (2, 3)",
      e.message)
    e = err_of(function() return mha(x, tf.ones({2, 3, 4}), tf.ones({2, 5, 4})) end)
    assert.equal("MultiHeadAttention: key and value must have the same sequence shape, got key (2, 5, 4) and " ..
      "value (2, 3, 4)", e.message)
    e = err_of(function() return L.MultiHeadAttention{num_heads = 1, key_dim = 2}(tf.ones({2, 3}), tf.ones({2, 3})) end)
    assert.equal("MultiHeadAttention: query must have rank >= 3 (batch, ..., features), got shape (2, 3)", e.message)
  end)
end)

describe("keras EinsumDense", function()
  it("computes einsum + bias with Keras's kernel and bias shapes", function()
    local ed = L.EinsumDense{"abc,cd->abd", {-1, 4}, bias_axes = "d", dtype = "float64"}
    local x = rand({2, 3, 5}, 31)
    local y = ed(x)
    assert.shape({5, 4}, ed.kernel:value())
    assert.shape({4}, ed.bias:value())
    ed.bias:assign(rand({4}, 32))
    local xt, w, b = x:totable(), ed.kernel:numpy(), ed.bias:numpy()
    local want = {}
    for i = 1, 2 do
      want[i] = {}
      for t = 1, 3 do
        want[i][t] = {}
        for j = 1, 4 do
          local s = b[j]
          for c = 1, 5 do s = s + xt[i][t][c] * w[c][j] end
          want[i][t][j] = s
        end
      end
    end
    y = ed(x)
    assert.tensor_near(want, y, {atol = 1e-12})
    -- a bias over a middle axis is shaped to broadcast: (4, 1)
    local e2 = L.EinsumDense{"abc,cde->ade", {4, 2}, bias_axes = "d"}
    assert.shape({2, 4, 2}, e2(tf.ones({2, 3, 5})))
    assert.shape({4, 1}, e2.bias:value())
    -- ellipses on the left and right
    local e3 = L.EinsumDense{"...b,bc->...c", 6}
    assert.shape({2, 3, 7, 6}, e3(tf.ones({2, 3, 7, 5})))
    assert.shape({5, 6}, e3.kernel:value())
    local e4 = L.EinsumDense{"ab...,bc->ac...", {4, 7}}
    assert.shape({2, 4, 7}, e4(tf.ones({2, 3, 7})))
  end)

  it("round-trips get_config and raises on bad equations", function()
    local ed = L.EinsumDense{"ab,bc->ac", 4, bias_axes = "c", activation = "relu"}
    local c = ed:get_config()
    assert.equal("relu", c.activation)
    assert.same(c, L.EinsumDense.from_config(c):get_config())
    local e = err_of(function() return L.EinsumDense{"ab,bc", 4}(tf.ones({2, 3})) end)
    assert.equal("ValueError", e.kind)
    assert.equal("EinsumDense: invalid equation 'ab,bc'; equations must be in the form [X],[Y]->[Z], " ..
      "...[X],[Y]->...[Z] or [X]...,[Y]->[Z]...", e.message)
    e = err_of(function() return L.EinsumDense{"ab,bc->ac", 4, bias_axes = "x"}(tf.ones({2, 3})) end)
    assert.equal("EinsumDense: bias dimension 'x' is not part of the output 'ac'", e.message)
    e = err_of(function() return L.EinsumDense{"ab,bc->ac", 4}(tf.ones({2, 3, 4})) end)
    assert.equal("EinsumDense: the equation 'ab,bc->ac' expects inputs of rank 2, got shape (2, 3, 4)", e.message)
  end)
end)

-- {==== Attention / AdditiveAttention references
local function dense_att_ref(q, v, k, score, keep, qkeep)
  local out, weights = {}, {}
  for b = 1, #q do
    out[b], weights[b] = {}, {}
    for i = 1, #q[b] do
      local row, mask = {}, {}
      for j = 1, #k[b] do row[j], mask[j] = score(q[b][i], k[b][j]), keep(b, i, j) end
      local p = softmax_row(row, mask)
      weights[b][i] = p
      local o = {}
      for d = 1, #v[b][1] do
        local a = 0
        for j = 1, #k[b] do a = a + p[j] * v[b][j][d] end
        o[d] = qkeep(b, i) and a or 0
      end
      out[b][i] = o
    end
  end
  return out, weights
end
-- }====

describe("keras Attention and AdditiveAttention", function()
  local q, v, k = rand({2, 3, 4}, 41), rand({2, 5, 4}, 42), rand({2, 5, 4}, 43)
  local qt, vt, kt = q:totable(), v:totable(), k:totable()
  local qm = tf.constant({{true, false, true}, {true, true, true}})
  local vm = tf.constant({{true, true, true, false, false}, {true, true, true, true, true}})
  local qmt, vmt = qm:totable(), vm:totable()
  local function dot(a, b) local s = 0; for i = 1, #a do s = s + a[i] * b[i] end; return s end

  it("Attention: dot scores, value and query masks, causal mask and scores", function()
    local att = L.Attention{dtype = "float64"}
    local o, w = table.unpack(att({q, v, k}, {mask = {qm, vm}, return_attention_scores = true}))
    local ro, rw = dense_att_ref(qt, vt, kt, dot, function(b, _, j) return vmt[b][j] end,
      function(b, i) return qmt[b][i] end)
    assert.tensor_near(ro, o, {atol = 1e-12})
    assert.tensor_near(rw, w, {atol = 1e-12})
    assert.same(qmt, K.get_mask(o):totable())
    -- causal over a self-attention; masks carried by the tensors
    local x = K.set_mask(tf.identity(k), vm)
    local oc = att({x, x}, {use_causal_mask = true})
    local rc = dense_att_ref(kt, kt, kt, dot, function(b, i, j) return vmt[b][j] and j <= i end,
      function(b, i) return vmt[b][i] end)
    assert.tensor_near(rc, oc, {atol = 1e-12})
  end)

  it("Attention: use_scale and concat scores", function()
    local att = L.Attention{use_scale = true, score_mode = "concat", dtype = "float64"}
    att({q, v, k})
    att.scale:assign(tf.constant(0.5, tf.float64))
    att.concat_score_weight:assign(tf.constant(1.5, tf.float64))
    local function concat(a, b)
      local s = 0
      for i = 1, #a do s = s + math.tanh(0.5 * (a[i] + b[i])) end
      return 1.5 * s
    end
    local ro = dense_att_ref(qt, vt, kt, concat, always, always)
    assert.tensor_near(ro, att({q, v, k}), {atol = 1e-12})
    local sc = L.Attention{use_scale = true, dtype = "float64"}
    sc({q, v})
    sc.scale:assign(tf.constant(0.25, tf.float64))
    local rs = dense_att_ref(qt, vt, vt, function(a, b) return 0.25 * dot(a, b) end, always, always)
    assert.tensor_near(rs, sc({q, v}), {atol = 1e-12})
  end)

  it("AdditiveAttention: Bahdanau scores with a scale per feature", function()
    local add = L.AdditiveAttention{dtype = "float64"}
    add({q, v, k})
    assert.shape({4}, add.scale:value())
    local sc = add.scale:numpy()
    local function score(a, b)
      local s = 0
      for i = 1, #a do s = s + sc[i] * math.tanh(a[i] + b[i]) end
      return s
    end
    local o, w = table.unpack(add({q, v, k}, {mask = {qm, vm}, return_attention_scores = true}))
    local ro, rw = dense_att_ref(qt, vt, kt, score, function(b, _, j) return vmt[b][j] end,
      function(b, i) return qmt[b][i] end)
    assert.tensor_near(ro, o, {atol = 1e-12})
    assert.tensor_near(rw, w, {atol = 1e-12})
    local plain = L.AdditiveAttention{use_scale = false, dtype = "float64"}
    local rp = dense_att_ref(qt, vt, vt, function(a, b)
      local s = 0
      for i = 1, #a do s = s + math.tanh(a[i] + b[i]) end
      return s
    end, always, always)
    assert.tensor_near(rp, plain({q, v}), {atol = 1e-12})
    assert.equal(0, #plain.weights)
  end)

  it("has finite-difference gradients (AdditiveAttention, float64)", function()
    local add = L.AdditiveAttention{dtype = "float64"}
    local q0, v0 = rand({1, 2, 3}, 51), rand({1, 3, 3}, 52)
    local function f(a, b) return tf.reduce_sum(tf.square(add({a, b}))) end
    f(q0, v0)
    local qv = tf.Variable(q0)
    local tape = tf.GradientTape()
    local y = tape:record(function() return f(qv, v0) end)
    local g = tape:gradient(y, {qv})[1]:totable()
    local base = q0:totable()
    local h = 1e-6
    for i = 1, 2 do for j = 1, 3 do
      local x = base[1][i][j]
      base[1][i][j] = x + h; local fp = f(tf.constant(base, tf.float64), v0):item()
      base[1][i][j] = x - h; local fm = f(tf.constant(base, tf.float64), v0):item()
      base[1][i][j] = x
      assert.is_true(math.abs((fp - fm) / (2 * h) - g[1][i][j]) < 1e-6)
    end end
  end)

  it("round-trips configs and raises on bad inputs", function()
    local a = L.Attention{use_scale = true, score_mode = "concat", dropout = 0.1}
    assert.same(a:get_config(), L.Attention.from_config(a:get_config()):get_config())
    local b = L.AdditiveAttention{use_scale = false}
    assert.same({name = b.name, trainable = true, dtype = "float32", use_scale = false, dropout = 0},
      b:get_config())
    local e = err_of(function() return L.Attention{score_mode = "add"} end)
    assert.equal("Attention: 'score_mode' must be \"dot\" or \"concat\", got add", e.message)
    e = err_of(function() return L.Attention{}(tf.ones({2, 3, 4})) end)
    assert.equal("ValueError", e.kind)
    assert.equal("Attention: expects a table of inputs {query, value} or {query, value, key}, got one tensor",
      e.message)
    e = err_of(function() return L.AdditiveAttention{}({tf.ones({2, 3, 4}), tf.ones({2, 5, 4}), tf.ones({2, 4, 4})})
    end)
    assert.equal("AdditiveAttention: key and value must have the same length, got key (2, 4, 4) and value (2, 5, 4)",
      e.message)
    e = err_of(function() return L.Attention{}({tf.ones({2, 3, 4}), tf.ones({2, 5, 4})}, {causal = true}) end)
    assert.equal("TypeError", e.kind)
  end)
end)

describe("a Transformer encoder block (Model:extend)", function()
  it("trains on a toy task: the loss falls", function()
    tf.random.set_seed(3)
    local Encoder = tf.keras.Model:extend("Encoder")
    function Encoder:init()
      self.att = L.MultiHeadAttention{num_heads = 2, key_dim = 8}
      self.add1 = L.Add and L.Add{} or nil
      self.ln1 = L.LayerNormalization{epsilon = 1e-6}
      self.ff1 = L.Dense{32, activation = "relu"}
      self.ff2 = L.Dense{16}
      self.ln2 = L.LayerNormalization{epsilon = 1e-6}
      self.embed = L.Dense{16}
      self.head = L.Dense{2}
    end
    function Encoder:call(x, opts)
      local h = self.embed(x)
      local a = self.att(h, h, {training = opts and opts.training})
      h = self.ln1(self.add1 and self.add1({h, a}) or h + a)
      h = self.ln2(h + self.ff2(self.ff1(h)))
      return self.head(tf.reduce_mean(h, {axis = 2}))
    end
    -- the label: whether token 1's feature equals the last token's (needs attention across positions)
    local n, T = 128, 6
    local x = tf.random.uniform({n, T, 4}, -1, 1, tf.float32, 11)
    local first = tf.slice(x, {1, 1, 1}, {n, 1, 1})
    local last = tf.slice(x, {1, T, 1}, {n, 1, 1})
    local y = tf.reshape(tf.cast(tf.greater(first * last, 0), tf.int32), {n}) + 1   -- 1-based classes
    local model = Encoder()
    model:compile{optimizer = tf.keras.optimizers.Adam{learning_rate = 0.01},
                  loss = tf.keras.losses.SparseCategoricalCrossentropy{from_logits = true}}
    local h = model:fit(x, y, {epochs = 40, batch_size = 32, verbose = 0})
    local loss = h.history.loss
    assert.is_true(loss[#loss] < 0.6 * loss[1], ("loss %g -> %g"):format(loss[1], loss[#loss]))
    assert.equal(8 + 6 * 2, #model.trainable_variables)   -- attention 8, embed, 2 norms, 2 feed-forward, head
  end)
end)
