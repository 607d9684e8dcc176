-- Convolution, pooling, padding, cropping and upsampling layers, merge
-- layers, and regularizers + constraints in functional models (the checks
-- are those of spec/keras/integration_support.lua).
local tf = require("tf")
local S = require("spec.keras.integration_support")
local L = tf.keras.layers

describe("integration: convolution and shape layers in functional models", function()
  before_each(function() tf.keras.backend.clear_session(); tf.random.set_seed(11) end)

  it("Conv1D (causal, dilated) -> ZeroPadding1D -> MaxPooling1D -> Cropping1D -> UpSampling1D -> AveragePooling1D", function()
    local layers = {
      L.Conv1D{4, 3, padding = "causal", dilation_rate = 2, activation = "relu"},
      L.ZeroPadding1D{{1, 2}},
      L.MaxPooling1D{2},
      L.Cropping1D{{1, 0}},
      L.UpSampling1D{2},
      L.AveragePooling1D{2, strides = 1, padding = "same"},
      L.Conv1D{3, 2, strides = 2},
      L.GlobalMaxPooling1D{},
      L.Dense{2},
    }
    local inp = tf.keras.Input({10, 3})
    local h = inp
    for _, l in ipairs(layers) do h = l(h) end
    local model = tf.keras.Model{inputs = inp, outputs = h}
    local function eager(x)
      for _, l in ipairs(layers) do x = l(x) end
      return x
    end
    local x = tf.random.normal({8, 10, 3}, 0, 1, tf.float32, 1)
    local y = tf.random.normal({8, 2}, 0, 1, tf.float32, 2)
    S.check{model = model, eager = eager, x = x, y = y}
  end)

  it("Conv2D -> DepthwiseConv2D -> SeparableConv2D -> Conv2DTranspose with ZeroPadding2D, Cropping2D, UpSampling2D, pools", function()
    local layers = {
      L.Conv2D{4, 3, padding = "same", activation = "relu"},
      L.DepthwiseConv2D{3, depth_multiplier = 2, padding = "same"},
      L.ZeroPadding2D{1},
      L.SeparableConv2D{5, 3, activation = "relu"},
      L.MaxPooling2D{2},
      L.Conv2DTranspose{3, 3, strides = 2, padding = "same"},
      L.Cropping2D{{{1, 1}, {0, 2}}},
      L.UpSampling2D{{2, 1}, interpolation = "bilinear"},
      L.AveragePooling2D{2},
      L.GlobalAveragePooling2D{},
      L.Dense{2},
    }
    local inp = tf.keras.Input({8, 8, 2})
    local h = inp
    for _, l in ipairs(layers) do h = l(h) end
    local model = tf.keras.Model{inputs = inp, outputs = h}
    local function eager(x)
      for _, l in ipairs(layers) do x = l(x) end
      return x
    end
    local x = tf.random.normal({6, 8, 8, 2}, 0, 1, tf.float32, 3)
    local y = tf.random.normal({6, 2}, 0, 1, tf.float32, 4)
    S.check{model = model, eager = eager, x = x, y = y}
  end)

  it("TimeDistributed(Conv2D) + TimeDistributed(GlobalMaxPooling2D) -> LSTM on a sequence of images", function()
    local conv = L.TimeDistributed{L.Conv2D{3, 3, activation = "relu"}}
    local pool = L.TimeDistributed{L.GlobalMaxPooling2D{}}
    local lstm = L.LSTM{4}
    local dense = L.Dense{1}
    local inp = tf.keras.Input({3, 5, 5, 1})
    local model = tf.keras.Model{inputs = inp, outputs = dense(lstm(pool(conv(inp))))}
    local x = tf.random.normal({5, 3, 5, 5, 1}, 0, 1, tf.float32, 5)
    local y = tf.random.normal({5, 1}, 0, 1, tf.float32, 6)
    S.check{model = model, eager = function(v) return dense(lstm(pool(conv(v)))) end, x = x, y = y}
  end)
end)

describe("integration: merge layers, regularizers and constraints in functional models", function()
  before_each(function() tf.keras.backend.clear_session(); tf.random.set_seed(13) end)

  it("two inputs through shared and separate Dense layers merged by every merge layer", function()
    local shared = L.Dense{4, activation = "tanh"}
    local other = L.Dense{4}
    local merges = {L.Add{}, L.Subtract{}, L.Multiply{}, L.Average{}, L.Maximum{}, L.Minimum{}}
    local cat = L.Concatenate{}
    local dot = L.Dot{axes = 2, normalize = true}
    local out = L.Dense{1}
    local a = tf.keras.Input({3}, {name = "a"})
    local b = tf.keras.Input({3}, {name = "b"})
    local function graph(xa, xb)
      local ha, hb = shared(xa), other(shared(xb))
      local parts = {}
      for i, m in ipairs(merges) do parts[i] = m{ha, hb} end
      parts[#parts + 1] = dot{ha, hb}
      return out(cat(parts))
    end
    local model = tf.keras.Model{inputs = {a, b}, outputs = graph(a, b)}
    local xa = tf.random.normal({10, 3}, 0, 1, tf.float32, 7)
    local xb = tf.random.normal({10, 3}, 0, 1, tf.float32, 8)
    local y = tf.random.normal({10, 1}, 0, 1, tf.float32, 9)
    S.check{model = model, eager = function(xs) return graph(xs[1], xs[2]) end, x = {xa, xb}, y = y}
  end)

  it("regularizers add their losses under fit; constraints hold after every step", function()
    local d1 = L.Dense{5, activation = "relu", kernel_regularizer = tf.keras.regularizers.l2{0.01},
                       bias_regularizer = "l1", kernel_constraint = tf.keras.constraints.MaxNorm{max_value = 0.5}}
    local conv = L.Conv1D{3, 2, kernel_regularizer = tf.keras.regularizers.L1L2{l1 = 0.001, l2 = 0.001},
                          kernel_constraint = "non_neg"}
    local emb = L.Embedding{8, 4, embeddings_regularizer = "l2", embeddings_constraint = "unit_norm"}
    local gru = L.GRU{3, kernel_regularizer = "l2", recurrent_constraint = tf.keras.constraints.MaxNorm{max_value = 1}}
    local flat = L.Flatten{}
    local act = L.ActivityRegularization{l1 = 0.01}
    local cat = L.Concatenate{}
    local out = L.Dense{1}
    local ids = tf.keras.Input({4}, {dtype = tf.int32})
    local seq = tf.keras.Input({6, 2})
    local function graph(i, s)
      return out(act(cat{d1(gru(emb(i))), flat(conv(s))}))
    end
    local model = tf.keras.Model{inputs = {ids, seq}, outputs = graph(ids, seq)}
    local xi = tf.constant({{1, 2, 3, 4}, {5, 6, 7, 8}, {2, 2, 3, 3}, {8, 1, 8, 1}, {4, 3, 2, 1}, {7, 7, 1, 2}},
                           tf.int32)
    local xs = tf.random.normal({6, 6, 2}, 0, 1, tf.float32, 10)
    local y = tf.random.normal({6, 1}, 0, 1, tf.float32, 11)
    -- the model's losses: one per regularizer (kernel, bias, conv kernel,
    -- embeddings, gru kernel) and the activity penalty
    model({xi, xs})
    assert.equal(6, #model.losses)
    S.check{model = model, eager = function(v) return graph(v[1], v[2]) end, x = {xi, xs}, y = y, epochs = 6}
    model:fit({xi, xs}, y, {epochs = 3, verbose = 0})
    -- the constraints held through training
    local col_norms = tf.sqrt(tf.reduce_sum(tf.square(d1.kernel), 1))
    assert.is_true(tf.reduce_max(col_norms):item() <= 0.5 + 1e-6)
    assert.is_true(tf.reduce_min(conv.kernel):item() >= 0)
    -- unit_norm's default axis is Keras's 0 (1 here): each column has norm 1
    local norms = tf.sqrt(tf.reduce_sum(tf.square(emb.embeddings), 1))
    assert.is_true(tf.reduce_max(tf.abs(norms - 1)):item() < 1e-5)
  end)
end)
