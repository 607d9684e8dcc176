-- Every op of tf.onnx.save's table, exported and run under ONNX Runtime
-- against luatf's own results (a few functions with many outputs each, to
-- keep the runtime's start-ups few). The last case checks that the traced
-- graphs above used every op of the table, so a new table entry without a
-- case here fails.
local tf = require("tf")
local X = require("onnx.export_support")
local export = require("tf.onnx.export")

local seen = {}

local function check(f, sig, inputs, rtol, atol, opset)
  local cf = f:get_concrete_function(table.unpack(sig))
  for _, n in ipairs(cf.graph:nodes()) do seen[n.op] = true end
  local path = X.tmpfile("ops.onnx")
  tf.onnx.save(cf, path, {opset = opset})
  local ok, msg, info = X.check(path)
  assert.is_truthy(ok, msg)
  assert.are.equal(opset or 17, info.opset)
  local names = X.info(path).inputs
  local feeds = {}
  for k, name in ipairs(names) do feeds[name] = inputs[k] end
  local res, order = X.ort(path, feeds)
  local want = {cf(table.unpack(inputs))}
  assert.are.equal(#want, #order)
  for k, w in ipairs(want) do
    local ok2, err = pcall(X.assert_close, w, res[order[k]], rtol or 1e-5, atol or 1e-5)
    if not ok2 then error(string.format("output %d: %s", k, tostring(err)), 0) end
  end
end

describe("tf.onnx.save: each op against ONNX Runtime", function()
  teardown(function() X.cleanup() end)
  local skip = X.missing()
  local F = tf.float32

  it("unary elementwise ops", function()
    if skip then return pending(skip) end
    local f = tf.fn(function(x, y)
      return -x, tf.abs(x - 0.5), tf.sign(x - 0.5), tf.exp(x), tf.math.log(x), tf.math.log1p(x), tf.math.expm1(x),
        tf.sqrt(x), tf.math.rsqrt(x), tf.square(x), tf.math.reciprocal(x), tf.tanh(x), tf.sigmoid(x),
        tf.nn.relu(x - 0.5), tf.nn.softplus(x), tf.sin(x), tf.cos(x), tf.tan(x), tf.asin(x), tf.acos(x), tf.atan(x),
        tf.sinh(x), tf.cosh(x), tf.asinh(x), tf.math.acosh(y), tf.math.atanh(x), tf.math.floor(y * 3),
        tf.math.ceil(y * 3), tf.math.round(y * 4), tf.math.erf(x), tf.math.erfc(x), tf.nn.gelu(x - 0.5),
        tf.nn.gelu(x - 0.5, {approximate = true}), tf.math.is_nan(x / (x - x)), tf.math.is_inf(y / (x - x)),
        tf.math.is_finite(y / (x - x)), tf.logical_not(x > 0.5), tf.identity(x), tf.stop_gradient(x),
        tf.debugging.check_numerics(x, "bad"), tf.ensure_shape(x, {2, 3}), tf.zeros_like(x), tf.ones_like(y),
        tf.cast(y * 3, tf.int32), tf.cast(x > 0.5, F), table.unpack(tf.custom_gradient(function(u)
          return {tf.tanh(u), u * 2}, function(d1, d2) return d1 + d2 end
        end)(x))
    end)
    local x = tf.constant({{0.1, 0.25, 0.5}, {0.6, 0.75, 0.9}})
    local y = tf.constant({{1.1, 1.5, 2.125}, {2.5, 2.875, 3}})
    check(f, {tf.TensorSpec({2, 3}), tf.TensorSpec({2, 3})}, {x, y}, 1e-5, 1e-6)
  end)

  it("binary elementwise ops on floats, comparisons, logic, where", function()
    if skip then return pending(skip) end
    local f = tf.fn(function(a, b)
      local p, q = a > 0, b > 0
      return a + b, a - b, a * b, a / b, tf.math.floordiv(a, b), tf.math.floormod(a, b), tf.abs(a) ^ b,
        tf.maximum(a, b), tf.minimum(a, b), tf.math.squared_difference(a, b),
        tf.math.divide_no_nan(a, b * tf.cast(q, F)), tf.math.xlogy(a * tf.cast(p, F), tf.abs(b) + 1),
        tf.math.xdivy(a * tf.cast(p, F), b + 10), tf.math.atan2(a, b), tf.linalg.det(tf.reshape(tf.concat({a, b}, 1), {3, 2, 2})), tf.equal(a, b), tf.not_equal(a, b), tf.less(a, b),
        tf.less_equal(a, b), tf.greater(a, b), tf.greater_equal(a, b), tf.logical_and(p, q), tf.logical_or(p, q),
        tf.math.logical_xor(p, q), tf.where(p, a, b)
    end)
    local a = tf.constant({{-3.5, 2, 7.25}, {0, -1, 4}})
    local b = tf.constant({{2, -1.5, 7.25}, {-3, -1, 0.5}})
    check(f, {tf.TensorSpec({2, 3}), tf.TensorSpec({2, 3})}, {a, b})
  end)

  it("integer arithmetic: divide, floor and truncated division, shifts", function()
    if skip then return pending(skip) end
    local I = tf.int32
    local f = tf.fn(function(a, b, s)
      return a / b, a // b, a % b, tf.math.truncatediv(a, b), tf.math.truncatemod(a, b),
        tf.bitwise.left_shift(a, s), tf.bitwise.right_shift(a, s)
    end)
    local a = tf.constant({-7, 7, -8, 9, 0, -1}, I)
    local b = tf.constant({2, -2, 3, 4, 5, 3}, I)
    local s = tf.constant({1, 2, 3, 0, 1, 1}, I)
    check(f, {tf.TensorSpec({6}, I), tf.TensorSpec({6}, I), tf.TensorSpec({6}, I)}, {a, b, s})
  end)

  it("reductions and scans", function()
    if skip then return pending(skip) end
    local f = tf.fn(function(x)
      local p = x > 0
      return tf.reduce_sum(x), tf.reduce_sum(x, {axis = 2, keepdims = true}), tf.reduce_mean(x, {axis = 1}),
        tf.reduce_max(x, {axis = {1, 2}}), tf.reduce_min(x, {axis = -1}), tf.reduce_prod(x, {axis = 2}),
        tf.reduce_all(p, {axis = 2}), tf.reduce_any(p), tf.argmax(x, {axis = 2}), tf.math.argmin(x, {axis = 1}),
        tf.math.cumsum(x, {axis = 2}), tf.math.cumsum(x, {axis = 1, exclusive = true, reverse = true})
    end)
    local x = tf.constant({{{1, -2, 3}, {4, 5, -6}}, {{0.5, 0.25, 2}, {-1, -3, 1}}})
    check(f, {tf.TensorSpec({2, 2, 3})}, {x})
    check(f, {tf.TensorSpec({2, 2, 3})}, {x}, nil, nil, 13)   -- ReduceSum's axes an input, the others attributes
  end)

  it("shapes and movement", function()
    if skip then return pending(skip) end
    local f = tf.fn(function(x, idx)
      local parts = tf.split(x, {1, -1}, {axis = 2})
      local eq = tf.split(x, 2, {axis = 1})
      local un = tf.unstack(x, {axis = 1})
      return tf.reshape(x, {3, -1}), tf.transpose(x), tf.transpose(x, {2, 1}), tf.expand_dims(x, 1),
        tf.squeeze(tf.expand_dims(x, 2), {2}), tf.concat({x, x}, 2), tf.stack({x, x}, {axis = 1}),
        parts[1], parts[2], eq[1], eq[2], un[1], un[2], tf.slice(x, {1, 2}, {-1, 2}),
        x[{{2, -1}, {1, 3, 2}}], x[{2}], x[{{}, -1}], tf.gather(x, idx), tf.gather(x, idx, {axis = 2}),
        tf.one_hot(idx, 3), tf.tile(x, {2, 1}), tf.pad(x, {{1, 0}, {0, 2}}),
        tf.pad(x, {{1, 1}, {2, 1}}, {mode = "REFLECT"}), tf.reverse(x, {2}), tf.broadcast_to(x, {3, 2, 3}),
        tf.shape(x), tf.size(x)
    end)
    local x = tf.constant({{1.0, 2, 3}, {4, 5, 6}})
    local idx = tf.constant({2, 1, 2}, tf.int32)
    check(f, {tf.TensorSpec({2, 3}), tf.TensorSpec({3}, tf.int32)}, {x, idx})
    check(f, {tf.TensorSpec({2, 3}), tf.TensorSpec({3}, tf.int32)}, {x, idx}, nil, nil, 13)   -- Reshape without allowzero
  end)

  it("strided slices with negative steps, masks and shrunk axes", function()
    if skip then return pending(skip) end
    local f = tf.fn(function(x)
      return x[{{-1, 1, -1}}], x[{{}, {4, 2, -2}}], x[{{3, 1, -2}, {-2, 1, -1}}], x[{{}, {nil, nil, -1}}],
        x[{-1, {2, -1}}], x[{{2, 3}, 1}]
    end)
    check(f, {tf.TensorSpec({tf.None, 4})}, {tf.constant({{1.0, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}})})
  end)

  it("matmul with transposes, softmax, log_softmax, a dynamic batch", function()
    if skip then return pending(skip) end
    local f = tf.fn(function(a, b)
      return tf.matmul(a, b), tf.matmul(a, b, {transpose_a = true}), tf.matmul(a, b, {transpose_b = true}),
        tf.nn.softmax(a), tf.nn.log_softmax(a, {axis = 2}), tf.nn.softmax(a, {axis = 1}),
        tf.nn.sparse_softmax_cross_entropy_with_logits(tf.constant({2, 1}), tf.reduce_sum(a, {axis = 2})),
        tf.nn.softmax_cross_entropy_with_logits(tf.nn.softmax(b), a),
        tf.shape(a), tf.size(b),   -- (batch unknown: computed when the model runs)
        tf.fill(tf.shape(a), 2.5), tf.broadcast_to(tf.constant({1.0, 2}), tf.shape(a)), tf.reshape(a, tf.shape(b))
    end)
    local a = tf.constant({{{1.0, 2}, {3, 4}}, {{-1, 0.5}, {2, -2}}})
    local b = tf.constant({{{0.5, 1}, {-1, 2}}, {{1, 1}, {0, 3}}})
    check(f, {tf.TensorSpec({tf.None, 2, 2}), tf.TensorSpec({tf.None, 2, 2})}, {a, b})
  end)

  it("ranges, matrix_transpose, top_k, sort, argsort (positions 1-based)", function()
    if skip then return pending(skip) end
    local f = tf.fn(function(x, n)
      local v, i = tf.math.top_k(x, {k = 2})
      return tf.range(2, 11, 3), tf.range(0.5, 2, 0.25), tf.range(n), tf.cast(tf.range(1, n, 2), tf.float32) * 2,
        tf.linalg.matrix_transpose(x), v, i, tf.sort(x), tf.sort(x, {direction = "DESCENDING"}), tf.argsort(x),
        tf.argsort(x, {direction = "DESCENDING"})
    end)
    local x = tf.constant({{3.0, 1, 2, 1}, {-1, 5, 0, 5}})
    check(f, {tf.TensorSpec({2, 4}), tf.TensorSpec({}, tf.int32)}, {x, tf.constant(7)})
  end)

  it("tf.image.resize: bilinear and nearest, up and down, a dynamic batch", function()
    if skip then return pending(skip) end
    local f = tf.fn(function(x)
      return tf.image.resize(x, {7, 5}), tf.image.resize(x, {2, 3}), tf.image.resize(x, {8, 9}, {method = "nearest"}),
        tf.image.resize(x, {3, 2}, {method = "nearest"})
    end)
    check(f, {tf.TensorSpec({tf.None, 4, 6, 2})}, {tf.random.normal({2, 4, 6, 2})}, 1e-5, 1e-5)
  end)

  it("indexing: gather_nd, scatters, where, unique, sequence_mask, roll (positions 1-based)", function()
    if skip then return pending(skip) end
    local f = tf.fn(function(x, idx, upd, lens, v)
      local uy, uidx = tf.unique(v)
      local cy, cidx, count = tf.unique_with_counts(v)
      return tf.gather_nd(x, idx), tf.scatter_nd(idx, upd, {3, 3}), tf.tensor_scatter_nd_update(x, idx, upd),
        tf.tensor_scatter_nd_add(x, idx, upd), tf.tensor_scatter_nd_sub(x, idx, upd), tf.where(x > 4),
        uy, uidx, cy, cidx, count, tf.sequence_mask(lens, 5), tf.sequence_mask(lens, nil, tf.float32),
        tf.roll(x, 1, 2), tf.roll(x, {-1, 2}, {1, 2})
    end)
    local x = tf.constant({{1.0, 2, 3}, {4, 5, 6}, {7, 8, 9}})
    local idx = tf.constant({{1, 2}, {3, 3}}, tf.int32)
    local upd = tf.constant({10.0, 20})
    local lens = tf.constant({1, 3, 0}, tf.int32)
    local v = tf.constant({4, 1, 4, 2, 1}, tf.int32)
    check(f, {tf.TensorSpec({3, 3}), tf.TensorSpec({2, 2}, tf.int32), tf.TensorSpec({2}), tf.TensorSpec({3}, tf.int32),
      tf.TensorSpec({5}, tf.int32)}, {x, idx, upd, lens, v})
  end)

  it("a tape's gradient inside the function (relu_grad, tanh_grad, sigmoid_grad, sum_to, broadcasts)", function()
    if skip then return pending(skip) end
    local w = tf.Variable(tf.constant({{1.0, -2}, {0.5, 3}}))
    local b = tf.Variable(tf.constant({0.25, -0.5}))
    local f = tf.fn(function(x, s)
      local tape = tf.GradientTape()
      tape:watch(x)
      tape:watch(s)
      local y = tape:record(function()
        local h = tf.nn.relu(tf.matmul(x, w) + b)
        return tf.reduce_sum(tf.tanh(h) * s + tf.sigmoid(x) * s + tf.sin(x) * x) + tf.reduce_sum(tf.reshape(x, {-1}) * 2)
      end)
      local g = tape:gradient(y, {x, s})
      return g[1], g[2]
    end)
    local x = tf.constant({{0.5, -1}, {2, 0.25}, {-0.75, 1}})
    -- the batch unknown: the gradients' sums and broadcasts are computed when the model runs
    check(f, {tf.TensorSpec({tf.None, 2}), tf.TensorSpec({2})}, {x, tf.constant({1.5, -0.5})}, 1e-5, 1e-5)
  end)

  it("recurrent layers: Keras LSTM and GRU (reset_after true and false), sequences and states", function()
    if skip then return pending(skip) end
    tf.random.set_seed(21)
    local L = tf.keras.layers
    local lstm = L.LSTM{5, return_sequences = true, return_state = true}
    local gru = L.GRU{4, return_sequences = true, return_state = true}
    local gru_v1 = L.GRU{3, reset_after = false}
    local f = tf.fn(function(x)
      local r = lstm(x)   -- {sequences, h, c}
      local r2 = gru(r[1])
      return r[1], r[2], r[3], r2[1], r2[2], gru_v1(r2[1])
    end)
    local x = tf.random.normal({2, 6, 3})
    check(f, {tf.TensorSpec({tf.None, 6, 3})}, {x}, 1e-4, 1e-5)
  end)

  it("masked recurrent layers (Embedding mask_zero, trailing padding): LSTM, GRU, Bidirectional", function()
    if skip then return pending(skip) end
    tf.random.set_seed(23)
    local L = tf.keras.layers
    local emb = L.Embedding{20, 4, mask_zero = true}
    local seq = L.LSTM{3, return_sequences = true}
    local seq0 = L.GRU{3, return_sequences = true, zero_output_for_mask = true}
    local bi = L.Bidirectional{L.LSTM{2}}
    local bis = L.Bidirectional{L.GRU{2, return_sequences = true}}
    local f = tf.fn(function(ids)
      local x = emb(ids)
      return seq(x), seq0(x), bi(x), bis(x)
    end)
    local ids = tf.constant({{3, 7, 1, 0, 0, 0}, {5, 2, 9, 4, 11, 8}, {6, 0, 0, 0, 0, 0}}, tf.int32)
    check(f, {tf.TensorSpec({tf.None, 6}, tf.int32)}, {ids}, 1e-4, 1e-5)
  end)

  it("go_backwards and Bidirectional LSTM/GRU", function()
    if skip then return pending(skip) end
    tf.random.set_seed(22)
    local L = tf.keras.layers
    local back = L.LSTM{3, return_sequences = true, go_backwards = true}
    local bi = L.Bidirectional{L.GRU{2, return_sequences = true}}
    local bi2 = L.Bidirectional{L.LSTM{2}}
    local f = tf.fn(function(x) return back(x), bi(x), bi2(x) end)
    check(f, {tf.TensorSpec({tf.None, 5, 3})}, {tf.random.normal({2, 5, 3})}, 1e-4, 1e-5)
  end)

  it("covered every op of the table", function()
    if skip then return pending(skip) end
    local missing = {}
    for _, o in ipairs(export.operators()) do
      if not seen[o.op] and o.op ~= "conv2d" and o.op ~= "depthwise_conv2d" and o.op ~= "max_pool2d"
        and o.op ~= "avg_pool2d" and o.op ~= "bitwise_and" and o.op ~= "bitwise_or" and o.op ~= "bitwise_xor"
        and o.op ~= "cond" and o.op ~= "while" and o.op ~= "conv2d_backprop_input" then
        -- (the window, bitwise and control-flow ops: export_convnet_spec, export_seeds_spec)
        missing[#missing + 1] = o.op
      end
    end
    assert.are.same({}, missing)
  end)
end)
