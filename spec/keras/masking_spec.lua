-- Masks from Embedding{mask_zero = true} and Masking, carried into
-- recurrent layers; RepeatVector and Permute. Values against plain-Lua
-- references and hand-computed numbers.
local tf = require("tf")
local L = tf.keras.layers
local K = tf.core.internal.keras

local function const(v) return function(_, dtype) return tf.constant(v, dtype) end end

describe("keras Embedding{mask_zero = true}", function()
  it("maps the padding index 0 to a zero vector and masks it; rows 1..input_dim as usual", function()
    local e = L.Embedding{3, 2, mask_zero = true, embeddings_initializer = const({{1, 2}, {3, 4}, {5, 6}})}
    local ids = tf.constant({{1, 3, 0}, {0, 2, 2}})
    local y = e(ids)
    assert.tensor_near({{{1, 2}, {5, 6}, {0, 0}}, {{0, 0}, {3, 4}, {3, 4}}}, y)
    assert.tensor_near({{true, true, false}, {false, true, true}}, K.get_mask(y))
    assert.tensor_near({{true, true, false}, {false, true, true}}, e:compute_mask(ids))
    assert.shape({3, 2}, e.embeddings:value())     -- no row for the padding index
  end)

  it("without mask_zero: no mask and 0 stays an error", function()
    local e = L.Embedding{3, 2}
    local y = e(tf.constant({{1, 2}}))
    assert.is_nil(K.get_mask(y))
    assert.is_nil(e:compute_mask(tf.constant({{1, 2}})))
    assert.tf_error("InvalidArgumentError", "1-based", function() e(tf.constant({0, 1})) end)
  end)

  it("get_config round-trips", function()
    local e = L.Embedding{10, 4, mask_zero = true, input_length = 7, name = "emb"}
    local c = e:get_config()
    assert.equal(10, c.input_dim)
    assert.equal(4, c.output_dim)
    assert.is_true(c.mask_zero)
    assert.equal(7, c.input_length)
    local ei = c.embeddings_initializer   -- a name, or Keras's {class_name =} with initializers.serialize
    assert.is_true(ei == "uniform" or (type(ei) == "table" and ei.class_name == "RandomUniform"))
    assert.same(c, L.Embedding.from_config(c):get_config())
  end)

  it("masks a SimpleRNN in a Sequential model: padded steps leave the state alone", function()
    -- a padded sequence gives the same last output as the unpadded one
    tf.random.set_seed(11)
    local emb = L.Embedding{5, 3, mask_zero = true}
    local rnn = L.SimpleRNN{4}
    local model = tf.keras.Sequential{emb, rnn}
    local a = model(tf.constant({{2, 4, 1, 0, 0}}))
    local b = model(tf.constant({{2, 4, 1}}))
    assert.tensor_near(b, a, {atol = 1e-6})
    -- leading padding too (the state starts at zero and stays there)
    local c = model(tf.constant({{0, 0, 2, 4, 1}}))
    assert.tensor_near(b, c, {atol = 1e-6})
    -- without the mask the padding would count
    local d = tf.keras.Sequential{L.Embedding{5, 3}, L.SimpleRNN{4}}
    assert.tf_error("InvalidArgumentError", "1-based", function() d(tf.constant({{2, 4, 1, 0, 0}})) end)
  end)
end)

describe("keras Masking", function()
  local x = tf.constant({{{1, 2}, {0, 0}, {0, 3}}, {{0, 0}, {0, 0}, {5, 5}}}, tf.float32)
  it("masks steps whose features all equal mask_value and zeroes them", function()
    local m = L.Masking{}
    local y = m(x)
    assert.tensor_near({{true, false, true}, {false, false, true}}, K.get_mask(y))
    assert.tensor_near(x, y)
    local m5 = L.Masking{mask_value = 5}
    local y5 = m5(x)
    assert.tensor_near({{true, true, true}, {true, true, false}}, K.get_mask(y5))
    assert.tensor_near({{{1, 2}, {0, 0}, {0, 3}}, {{0, 0}, {0, 0}, {0, 0}}}, y5)
    assert.equal(5, m5:get_config().mask_value)
    assert.same(m5:get_config(), L.Masking.from_config(m5:get_config()):get_config())
    assert.tf_error("TypeError", "Masking: 'mask_value' must be a number, got string", function()
      L.Masking{mask_value = "x"}
    end)
  end)

  it("feeds the mask to a recurrent layer: outputs repeat at masked steps", function()
    local K1 = {{0.5, -0.25}, {0.75, 0.5}}
    local R1 = {{0.1, 0.2}, {-0.3, 0.4}}
    local model = tf.keras.Sequential{L.Masking{}, L.SimpleRNN{2, return_sequences = true,
      kernel_initializer = const(K1), recurrent_initializer = const(R1), use_bias = false}}
    local y = model(x)
    -- batch 1: step 1 h = tanh(x1 K), step 2 masked (repeats), step 3 from h
    local function step(xv, h)
      local out = {}
      for j = 1, 2 do
        out[j] = math.tanh(xv[1] * K1[1][j] + xv[2] * K1[2][j] + h[1] * R1[1][j] + h[2] * R1[2][j])
      end
      return out
    end
    local h1 = step({1, 2}, {0, 0})
    local h3 = step({0, 3}, h1)
    local g3 = step({5, 5}, {0, 0})
    assert.tensor_near({{h1, h1, h3}, {{0, 0}, {0, 0}, g3}}, y, {atol = 1e-6})
    assert.tensor_near({{true, false, true}, {false, false, true}}, K.get_mask(y))
  end)
end)

describe("keras RepeatVector", function()
  it("repeats a (batch, features) input n times", function()
    local r = L.RepeatVector{3}
    local y = r(tf.constant({{1, 2}, {3, 4}}, tf.float32))
    assert.tensor_near({{{1, 2}, {1, 2}, {1, 2}}, {{3, 4}, {3, 4}, {3, 4}}}, y)
    assert.equal(3, r:get_config().n)
    assert.same(r:get_config(), L.RepeatVector.from_config(r:get_config()):get_config())
    assert.tf_error("ValueError", "expected ndim=2, found ndim=3", function() r(tf.ones({1, 2, 3})) end)
    assert.tf_error("TypeError", "RepeatVector: expected `n` to be a positive integer. Received: n=0", function()
      L.RepeatVector{0}
    end)
  end)
end)

describe("keras Permute", function()
  it("permutes the non-batch axes by 1-based dims", function()
    local x = tf.reshape(tf.range(0, 24), {2, 3, 4})
    local p = L.Permute{{2, 1}}
    local y = p(x)
    assert.shape({2, 4, 3}, y)
    assert.tensor_near(tf.transpose(x, {1, 3, 2}), y)
    assert.equal(9, y[{1, 2, 3}]:item())   -- x[1][3][2]: 0-based (0, 2, 1) = 2 * 4 + 1
    local p3 = L.Permute{{3, 1, 2}}
    assert.shape({1, 5, 3, 4}, p3(tf.ones({1, 3, 4, 5})))
    assert.same({3, 1, 2}, p3:get_config().dims)
    assert.same(p3:get_config(), L.Permute.from_config(p3:get_config()):get_config())
    assert.tf_error("ValueError", "The set of indices in `dims` must be consecutive and start from 1. Received " ..
      "dims={0, 1}", function() L.Permute{{0, 1}} end)
    assert.tf_error("ValueError", "Received dims={1, 1}", function() L.Permute{{1, 1}} end)
    assert.tf_error("ValueError", "expected ndim=3, found ndim=4", function() p(tf.ones({1, 2, 3, 4})) end)
  end)
end)
