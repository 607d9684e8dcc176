-- Layers whose inputs have an unknown batch size and unknown time or
-- spatial sizes: shapes read with tf.shape when the graph runs
-- (docs/tensors.md "Shapes as tensors"). Before, TimeDistributed needed the
-- batch or the steps known, UpSampling1D/2D the spatial sizes, EinsumDense
-- fell back to broadcast matmuls, and the random preprocessing layers drew
-- through categorical sampling.
require("helper")
local tf = require("tf")
local L = tf.keras.layers

local function const(v) return function(_, dtype) return tf.constant(v, dtype) end end

describe("keras layers with unknown batch and time", function()
  it("TimeDistributed(Dense) in a functional model with Input({nil, 3}) (batch and steps unknown)", function()
    local inp = tf.keras.Input{shape = {nil, 3}}
    local td = L.TimeDistributed{L.Dense{2, kernel_initializer = const({{1, 2}, {3, 4}, {5, 6}}),
                                         bias_initializer = const({1, -1})}}
    local model = tf.keras.Model({inputs = inp, outputs = td(inp)})
    local x = tf.constant({{{1, 0, 0}, {0, 1, 0}}, {{0, 0, 1}, {1, 1, 1}}}, tf.float32)
    assert.tensor_near({{{2, 1}, {4, 3}}, {{6, 5}, {10, 11}}}, model(x))
    local f = tf.fn(function(v) return model(v) end, {input_signature = {tf.TensorSpec({nil, nil, 3}, tf.float32)}})
    assert.tensor_near({{{2, 1}, {4, 3}}, {{6, 5}, {10, 11}}}, f(x))
    local y = f(tf.ones({1, 4, 3}))
    assert.same({1, 4, 2}, y.shape:as_list())
    assert.tensor_near({{{10, 11}, {10, 11}, {10, 11}, {10, 11}}}, y)
    -- and it trains: the gradient reaches the inner kernel
    local tape = tf.GradientTape()
    local loss = tape:record(function() return tf.reduce_sum(f(x)) end)
    local gk = tape:gradient(loss, td.layer.kernel)
    -- d sum / d kernel[i][j] = sum over rows of x[i]
    assert.tensor_near({{2, 2}, {2, 2}, {2, 2}}, gk)
  end)

  it("TimeDistributed(Flatten) with the dims after time unknown", function()
    local f = tf.fn(function(v) return L.TimeDistributed{L.Flatten{}}(v) end,
      {input_signature = {tf.TensorSpec({nil, nil, nil, 2}, tf.float32)}})
    local y = f(tf.reshape(tf.range(0, 24, 1, tf.float32), {2, 3, 2, 2}))
    assert.same({2, 3, 4}, y.shape:as_list())
    assert.tensor_near({20, 21, 22, 23}, y[{2, 3}])
  end)

  it("UpSampling1D and UpSampling2D (nearest) with unknown spatial sizes", function()
    local inp = tf.keras.Input{shape = {nil, 2}}
    local m1 = tf.keras.Model({inputs = inp, outputs = L.UpSampling1D{2}(inp)})
    local y = m1(tf.constant({{{1, 2}, {3, 4}}}, tf.float32))
    assert.tensor_near({{{1, 2}, {1, 2}, {3, 4}, {3, 4}}}, y)
    local f = tf.fn(function(v) return L.UpSampling2D{{2, 1}}(v) end,
      {input_signature = {tf.TensorSpec({nil, nil, nil, 1}, tf.float32)}})
    local z = f(tf.constant({{{{1}, {2}}, {{3}, {4}}}}, tf.float32))
    assert.same({1, 4, 2, 1}, z.shape:as_list())
    assert.tensor_near({{{{1}, {2}}, {{1}, {2}}, {{3}, {4}}, {{3}, {4}}}}, z)
    -- gradient: each input element counted once per copy
    local x = tf.Variable(tf.ones({1, 2, 2, 1}))
    local tape = tf.GradientTape()
    local s = tape:record(function() return tf.reduce_sum(f(x:value())) end)
    assert.tensor_near({{{{2}, {2}}, {{2}, {2}}}}, tape:gradient(s, x))
  end)

  it("EinsumDense with several unknown free dims (reshape with run-time shape)", function()
    local layer = tf.keras.layers.EinsumDense{"abc,cde->abde", output_shape = {-1, 2, 2},
                                              kernel_initializer = "ones", bias_axes = nil}
    local f = tf.fn(function(v) return layer(v) end, {input_signature = {tf.TensorSpec({nil, nil, 3}, tf.float32)}})
    local x = tf.reshape(tf.range(0, 12, 1, tf.float32), {2, 2, 3})
    local y = f(x)
    assert.same({2, 2, 2, 2}, y.shape:as_list())
    -- kernel of ones: every output entry is the sum over c of x[a][b]
    assert.tensor_near(tf.broadcast_to(tf.reshape(tf.reduce_sum(x, {axis = 3}), {2, 2, 1, 1}), {2, 2, 2, 2}), y)
    assert.tensor_near(tf.einsum("abc,cde->abde", x, layer.kernel), y)
  end)

  it("random preprocessing layers draw uniform values for an unknown batch", function()
    local layer = L.RandomContrast{0.5, seed = 1}
    local f = tf.fn(function(v) return layer(v, {training = true}) end,
      {input_signature = {tf.TensorSpec({nil, 2, 2, 1}, tf.float32)}})
    local x = tf.reshape(tf.range(0, 24, 1, tf.float32), {6, 2, 2, 1})
    local y = f(x)
    assert.same({6, 2, 2, 1}, y.shape:as_list())
    -- each image is scaled about its mean by one factor in [0.5, 1.5]
    for i = 1, 6 do
      local xi, yi = x[i], y[i]
      local mean = tf.reduce_mean(xi):item()
      local factor = (yi[{1, 1, 1}]:item() - mean) / (xi[{1, 1, 1}]:item() - mean)
      assert.is_true(factor >= 0.5 - 1e-5 and factor <= 1.5 + 1e-5, tostring(factor))
    end
  end)
end)

describe("keras Flatten and Reshape with the batch and another dim unknown", function()
  it("flattens and reshapes with the batch read when the graph runs", function()
    local f = tf.fn(function(v) return L.Flatten{}(v), L.Reshape{{-1, 2}}(v) end,
      {input_signature = {tf.TensorSpec({nil, nil, 2}, tf.float32)}})
    local x = tf.reshape(tf.range(0, 12, 1, tf.float32), {2, 3, 2})
    local a, b = f(x)
    assert.same({2, 6}, a.shape:as_list())
    assert.tensor_near({{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}}, a)
    assert.same({2, 3, 2}, b.shape:as_list())
    assert.tensor_near(x, b)
  end)
end)

describe("convolutions with unknown height and width", function()
  local SIG = {input_signature = {tf.TensorSpec({nil, nil, nil, 1}, tf.float32)}}

  it("Conv2DTranspose in a functional model with Input({nil, nil, 1}): values and gradients as eagerly", function()
    tf.random.set_seed(3)
    local layer = L.Conv2DTranspose{2, 3, strides = 2, padding = "same"}
    local valid = L.Conv2DTranspose{1, {2, 3}, strides = {1, 2}, padding = "valid"}
    local inp = tf.keras.Input{shape = {nil, nil, 1}}
    local model = tf.keras.Model({inputs = inp, outputs = valid(layer(inp))})
    local x = tf.random.normal({2, 3, 4, 1})
    local eager = valid(layer(x))
    -- (3, 4) -> same, stride 2: (6, 8) -> valid, kernel (2, 3), strides (1, 2): (7, 17)
    assert.same({2, 7, 17, 1}, eager.shape:as_list())
    local f = tf.fn(function(v) return model(v) end, SIG)
    assert.tensor_near(eager, f(x), {atol = 1e-5})
    local t1, t2 = tf.GradientTape(), tf.GradientTape()
    local l1 = t1:record(function() return tf.reduce_sum(f(x) ^ 2) end)
    local l2 = t2:record(function() return tf.reduce_sum(valid(layer(x)) ^ 2) end)
    local g1, g2 = t1:gradient(l1, layer.kernel), t2:gradient(l2, layer.kernel)
    assert.tensor_near(g2, g1, {atol = 1e-4})
  end)

  it("conv2d's input gradient inside tf.fn with the spatial sizes unknown (was UnimplementedError)", function()
    tf.random.set_seed(4)
    local c = L.Conv2D{2, 3, padding = "valid"}
    local h = tf.fn(function(v) return tf.reduce_sum(c(v) ^ 2) end, SIG)
    local xv = tf.Variable(tf.random.normal({2, 5, 6, 1}))
    local t1, t2 = tf.GradientTape(), tf.GradientTape()
    local l1 = t1:record(function() return h(xv:value()) end)
    local l2 = t2:record(function() return tf.reduce_sum(c(xv:value()) ^ 2) end)
    assert.near(l2:item(), l1:item(), 1e-3)
    local g1, g2 = t1:gradient(l1, xv), t2:gradient(l2, xv)
    assert.tensor_near(g2, g1, {atol = 1e-4})
    -- central difference on input element 8
    local eps = 1e-2
    local bump = tf.reshape(tf.one_hot(tf.constant({8}), 60), {2, 5, 6, 1}) * eps
    local fd = (h(xv:value() + bump):item() - h(xv:value() - bump):item()) / (2 * eps)
    local an = tf.reshape(g1, {-1})[8]:item()
    assert.near(fd, an, 2e-2 * math.max(1, math.abs(fd)))
  end)
end)
