-- The new layer families working together in functional models, as a user
-- combines them: each model builds, predicts as its layers called eagerly
-- in order, trains under fit, prints a summary, round-trips through
-- get_config/from_config and through a tf.train.Checkpoint (the checks are
-- in spec/keras/integration_support.lua). Mixed precision across the layer
-- classes: spec/keras/integration_mixed_spec.lua.
local tf = require("tf")
local S = require("spec.keras.integration_support")
local L = tf.keras.layers

-- integer token ids (batch, T) with trailing zero padding of varying length
local function padded_ids(batch, T, vocab, seed)
  local rows = {}
  local r = seed
  for b = 1, batch do
    rows[b] = {}
    local len = T - (b % 3)
    for t = 1, T do
      r = (r * 1103515245 + 12345) % 2147483648
      rows[b][t] = t <= len and (r % (vocab - 1) + 1) or 0
    end
  end
  return tf.constant(rows, tf.int32)
end

describe("integration: recurrent layers in functional models", function()
  before_each(function() tf.keras.backend.clear_session(); tf.random.set_seed(3) end)

  it("Embedding(mask_zero) -> Bidirectional(LSTM, sequences) -> GRU -> Dense: the mask reaches every layer", function()
    local emb = L.Embedding{12, 6, mask_zero = true}
    local bi = L.Bidirectional{L.LSTM{5, return_sequences = true}}
    local gru = L.GRU{4}
    local dense = L.Dense{1}
    local inp = tf.keras.Input({7}, {dtype = tf.int32})
    local model = tf.keras.Model{inputs = inp, outputs = dense(gru(bi(emb(inp))))}
    local x = padded_ids(12, 7, 12, 5)
    local function eager(v)
      local e = emb(v)
      local m = tf.core.internal.keras.get_mask(e)
      assert.truthy(m)
      local s = bi(e)
      assert.truthy(tf.core.internal.keras.get_mask(s), "Bidirectional(return_sequences) keeps the mask")
      return dense(gru(s))
    end
    -- the mask matters: the padded sample differs from the unpadded one
    local y = tf.reduce_sum(tf.cast(x, tf.float32), 2, {keepdims = true}) / 40
    S.check{model = model, eager = eager, x = x, y = y}
    -- masked steps are skipped: sample 1 (6 tokens, 1 of padding) gives
    -- what its 6 tokens alone give
    local full = model(x)[1]
    local alone = eager(x[{{1, 1}, {1, 6}}])[1]
    assert.is_true(S.max_diff(full, alone) < 1e-6, "padding changed the result by " .. S.max_diff(full, alone))
  end)

  it("Masking -> SimpleRNN(sequences) -> LSTM(return_state) -> Concatenate of output and states", function()
    local masking = L.Masking{mask_value = 0}
    local rnn = L.SimpleRNN{4, return_sequences = true}
    local lstm = L.LSTM{3, return_state = true}
    local cat = L.Concatenate{}
    local out = L.Dense{2}
    local inp = tf.keras.Input({6, 3})
    local o, h, c = table.unpack(lstm(rnn(masking(inp))))
    local model = tf.keras.Model{inputs = inp, outputs = out(cat{o, h, c})}
    local x = tf.random.normal({10, 6, 3}, 0, 1, tf.float32, 2)
    -- zero the last two steps of half the samples: masked
    local keep = tf.constant({1, 1, 1, 1, 0, 0}, tf.float32)
    x = tf.concat({x[{{1, 5}}] * tf.reshape(keep, {1, 6, 1}), x[{{6, 10}}]}, 1)
    local function eager(v)
      local r = lstm(rnn(masking(v)))
      return out(cat{r[1], r[2], r[3]})
    end
    local y = tf.random.normal({10, 2}, 0, 1, tf.float32, 4)
    S.check{model = model, eager = eager, x = x, y = y}
  end)

  it("TimeDistributed(Dense) on a GRU's sequences, then GlobalAveragePooling1D", function()
    local gru = L.GRU{6, return_sequences = true, reset_after = true}
    local td = L.TimeDistributed{L.Dense{3, activation = "tanh"}}
    local pool = L.GlobalAveragePooling1D{}
    local inp = tf.keras.Input({5, 4})
    local model = tf.keras.Model{inputs = inp, outputs = pool(td(gru(inp)))}
    local x = tf.random.normal({8, 5, 4}, 0, 1, tf.float32, 9)
    local y = tf.random.uniform({8, 3}, -0.5, 0.5, tf.float32, 10)
    S.check{model = model, eager = function(v) return pool(td(gru(v))) end, x = x, y = y}
  end)
end)

describe("integration: attention in functional models", function()
  before_each(function() tf.keras.backend.clear_session(); tf.random.set_seed(5) end)

  it("MultiHeadAttention on KerasTensors with Embedding masks and return_attention_scores", function()
    local emb = L.Embedding{10, 8, mask_zero = true}
    local mha = L.MultiHeadAttention{num_heads = 2, key_dim = 4}
    local add = L.Add{}
    local norm = L.LayerNormalization{}
    local pool = L.GlobalAveragePooling1D{}
    local dense = L.Dense{1}
    local inp = tf.keras.Input({6}, {dtype = tf.int32})
    local e = emb(inp)
    local att, scores = table.unpack(mha(e, e, {return_attention_scores = true}))
    assert.same({-1, 2, 6, 6}, scores.shape:as_list())
    local model = tf.keras.Model{inputs = inp, outputs = {dense(pool(norm(add{e, att}))), scores}}
    local x = padded_ids(9, 6, 10, 11)
    local function eager(v)
      local ev = emb(v)
      local r = mha(ev, ev, {return_attention_scores = true})
      return {dense(pool(norm(add{ev, r[1]}))), r[2]}
    end
    local direct = model(x)
    -- the key at the padding position gets weight 0 from the 5 real
    -- queries of sample 1 (the padded query attends uniformly, as in Keras)
    assert.equal(0, tf.reduce_max(tf.abs(direct[2][1][{{}, {1, 5}, 6}])):item())
    assert.near(1 / 6, direct[2][1][1][6][6]:item(), 1e-6)
    local y = {tf.random.normal({9, 1}, 0, 1, tf.float32, 3), tf.zeros({9, 2, 6, 6})}
    S.check{model = model, eager = eager, x = x, y = y, loss = {"mse", "mse"}}
  end)

  it("MultiHeadAttention with a causal mask, cross-attention from a second input", function()
    local mha = L.MultiHeadAttention{num_heads = 2, key_dim = 3, value_dim = 2}
    local dense = L.Dense{2}
    local q = tf.keras.Input({4, 5}, {name = "q"})
    local v = tf.keras.Input({4, 5}, {name = "v"})
    local model = tf.keras.Model{inputs = {q, v}, outputs = dense(mha(q, v, {use_causal_mask = true}))}
    local xq = tf.random.normal({6, 4, 5}, 0, 1, tf.float32, 1)
    local xv = tf.random.normal({6, 4, 5}, 0, 1, tf.float32, 2)
    local y = tf.random.normal({6, 4, 2}, 0, 1, tf.float32, 3)
    S.check{model = model, eager = function(xs) return dense(mha(xs[1], xs[2], {use_causal_mask = true})) end,
            x = {xq, xv}, y = y}
  end)

  it("Attention and AdditiveAttention merged by Concatenate", function()
    local att, add_att = L.Attention{}, L.AdditiveAttention{}
    local cat, dense = L.Concatenate{}, L.Dense{1}
    local q = tf.keras.Input({3, 4})
    local v = tf.keras.Input({5, 4})
    local model = tf.keras.Model{inputs = {q, v}, outputs = dense(cat{att{q, v}, add_att{q, v}})}
    local xq = tf.random.normal({6, 3, 4}, 0, 1, tf.float32, 4)
    local xv = tf.random.normal({6, 5, 4}, 0, 1, tf.float32, 5)
    local y = tf.random.normal({6, 3, 1}, 0, 1, tf.float32, 6)
    S.check{model = model, eager = function(xs) return dense(cat{att{xs[1], xs[2]}, add_att{xs[1], xs[2]}}) end,
            x = {xq, xv}, y = y}
  end)
end)
