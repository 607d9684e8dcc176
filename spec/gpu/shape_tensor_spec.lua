-- Shapes given as tensors on "the GPU" (a real one, or the simulated one with
-- LTF_GPU_SIM=1): their values are read on the host when the op runs
-- (TensorFlow keeps shape inputs in host memory), and tf.range of a run-time
-- bound runs its own CPU op (a device range kernel reads attributes).
require("helper")
local tf = require("tf")

local gpu = require("gpu_support")
local gpu_it = gpu.make_it(it, function(why) pending(why) end)

describe("shape tensors on the GPU", function()
  gpu_it("reshape, zeros, broadcast_to, range, tile and Conv2DTranspose inside tf.fn", function()
    local x = tf.reshape(tf.range(8.0), {2, 4}):gpu()
    local f = tf.fn(function(v)
      local s = tf.shape(v)
      return tf.reshape(v, {s[1], -1, 2}), tf.zeros(s), tf.broadcast_to(tf.constant(1.0), s), tf.range(s[1]),
             tf.tile(v, tf.stack({s[1], tf.constant(1)}))
    end, {input_signature = {tf.TensorSpec({nil, 4}, tf.float32)}})
    local a, z, b, r, t = f(x)
    assert.tensor_near({{{0, 1}, {2, 3}}, {{4, 5}, {6, 7}}}, a:cpu())
    assert.tensor_near({{0, 0, 0, 0}, {0, 0, 0, 0}}, z:cpu())
    assert.tensor_near({{1, 1, 1, 1}, {1, 1, 1, 1}}, b:cpu())
    assert.same({0, 1}, r:cpu():totable())
    assert.same({4, 4}, t.shape:as_list())
    assert.tensor_near({{0, 1}, {2, 3}, {4, 5}, {6, 7}}, tf.reshape(x, tf.constant({4, 2}):gpu()):cpu())
    local layer = tf.keras.layers.Conv2DTranspose{2, 3, strides = 2, padding = "same"}
    local xi = tf.random.normal({1, 3, 4, 1})
    local g = tf.fn(function(v) return layer(v) end, {input_signature = {tf.TensorSpec({nil, nil, nil, 1}, tf.float32)}})
    local want = layer(xi)
    assert.tensor_near(want, g(xi:gpu()):cpu(), {atol = 1e-5})
  end)
end)
