-- tf.onnx.save of convolutional Keras models: the MNIST convnet
-- (examples/mnist_cnn.lua's architecture), a model with
-- BatchNormalization and Dropout exported in inference mode (moving
-- statistics as initializers, Dropout gone), and the other window ops
-- (SAME padding, strides, dilations, depthwise convolution, average pooling).
local tf = require("tf")
local X = require("onnx.export_support")
local layers = tf.keras.layers

local function ops_of(path)
  return X.info(path).ops
end

describe("tf.onnx.save: convnets", function()
  teardown(function() X.cleanup() end)
  local skip = X.missing()

  it("the MNIST convnet (Conv2D, MaxPooling2D, Flatten, Dropout, Dense)", function()
    if skip then return pending(skip) end
    tf.random.set_seed(3)
    local model = tf.keras.Sequential{
      layers.Conv2D{32, {3, 3}, activation = "relu"},
      layers.MaxPooling2D{pool_size = {2, 2}},
      layers.Conv2D{64, {3, 3}, activation = "relu"},
      layers.MaxPooling2D{pool_size = {2, 2}},
      layers.Flatten{},
      layers.Dropout{rate = 0.5},
      layers.Dense{10, activation = "softmax"},
    }
    local path = X.tmpfile("mnist_cnn.onnx")
    tf.onnx.save(model, path, {input_signature = {tf.TensorSpec({tf.None, 28, 28, 1}, tf.float32)}})
    local ok, msg = X.check(path)
    assert.is_truthy(ok, msg)
    assert.are.same({{"batch", 28, 28, 1}}, X.info(path).dims)
    local x = tf.random.uniform({3, 28, 28, 1})
    local res = X.ort(path, {inputs = x})
    X.assert_close(model(x), res.output_1, 1e-4, 1e-6)
    -- Dropout in inference is the identity: no random op in the file
    for _, op in ipairs(ops_of(path)) do assert.is_nil(op:match("Random") or op:match("Dropout"), op) end
  end)

  it("BatchNormalization and Dropout in inference mode, after some training", function()
    if skip then return pending(skip) end
    tf.random.set_seed(5)
    local model = tf.keras.Sequential{
      layers.Conv2D{4, {3, 3}, padding = "same"},
      layers.BatchNormalization{},
      layers.ReLU{},
      layers.Dropout{rate = 0.3},
      layers.GlobalAveragePooling2D{},
      layers.Dense{6},
      layers.BatchNormalization{},
      layers.Dropout{rate = 0.5},
      layers.Dense{2},
    }
    model:compile{optimizer = "adam", loss = "mse"}
    local xs, ys = tf.random.normal({16, 8, 8, 3}, {mean = 1, stddev = 2}), tf.random.normal({16, 2})
    model:fit(xs, ys, {epochs = 2, batch_size = 8, verbose = 0})
    -- the moving statistics moved away from their initial 0 and 1
    local bn = model.layers[2]
    assert.is_true(math.abs(bn.moving_mean:numpy()[1]) > 1e-3)
    local path = X.tmpfile("bn.onnx")
    tf.onnx.save(model, path, {input_signature = {tf.TensorSpec({tf.None, 8, 8, 3}, tf.float32)}})
    local ok, msg = X.check(path)
    assert.is_truthy(ok, msg)
    local x = tf.random.normal({5, 8, 8, 3})
    local res = X.ort(path, {inputs = x})
    local want = model(x, {training = false})
    X.assert_close(want, res.output_1, 1e-4, 1e-5)
    -- and it is not the training-mode output (batch statistics, dropout)
    local train = model(x, {training = true})
    local far = false
    for k, v in ipairs(require("support").flatten(train:totable())) do
      if math.abs(v - res.output_1.data[k]) > 1e-3 then far = true end
    end
    assert.is_true(far)
  end)

  it("SAME/VALID padding, strides, dilations, depthwise convolution, average pooling", function()
    if skip then return pending(skip) end
    tf.random.set_seed(11)
    local model = tf.keras.Sequential{
      layers.Conv2D{5, {3, 3}, strides = {2, 2}, padding = "same", activation = "relu"},
      layers.Conv2D{4, {2, 3}, dilation_rate = {2, 1}, padding = "same"},
      layers.DepthwiseConv2D{{3, 3}, depth_multiplier = 2, padding = "same"},
      layers.AveragePooling2D{pool_size = {2, 2}, strides = {1, 1}, padding = "same"},
      layers.MaxPooling2D{pool_size = {3, 3}, strides = {2, 2}, padding = "same"},
      layers.Flatten{},
      layers.Dense{3},
    }
    local path = X.tmpfile("windows.onnx")
    tf.onnx.save(model, path, {input_signature = {tf.TensorSpec({tf.None, 11, 9, 2}, tf.float32)}})
    local ok, msg = X.check(path)
    assert.is_truthy(ok, msg)
    local x = tf.random.normal({2, 11, 9, 2})
    X.assert_close(model(x), X.ort(path, {inputs = x}).output_1, 1e-4, 1e-5)
  end)
  it("a model declared with input_shape needs no input_signature (batch unknown)", function()
    if skip then return pending(skip) end
    tf.random.set_seed(9)
    local model = tf.keras.Sequential{
      layers.Conv2D{3, {3, 3}, activation = "relu", input_shape = {6, 6, 2}},
      layers.Flatten{},
      layers.Dense{2},
    }
    local path = X.tmpfile("declared.onnx")
    tf.onnx.save(model, path)
    assert.is_truthy(X.check(path))
    assert.are.same({{"batch", 6, 6, 2}}, X.info(path).dims)
    local x = tf.random.normal({3, 6, 6, 2})
    X.assert_close(model(x), X.ort(path, {inputs = x}).output_1, 1e-4, 1e-6)
  end)
  it("Conv2DTranspose (SAME and VALID, strides 1 to 3) as ConvTranspose", function()
    if skip then return pending(skip) end
    tf.random.set_seed(13)
    local model = tf.keras.Sequential{
      layers.Conv2DTranspose{4, {3, 3}, strides = {2, 2}, padding = "same", activation = "relu"},
      layers.Conv2DTranspose{3, {2, 3}, strides = {3, 1}, padding = "valid"},
      layers.Conv2DTranspose{2, {4, 4}, strides = {2, 2}, padding = "same"},
      layers.Conv2DTranspose{2, {3, 3}, padding = "same"},
    }
    local path = X.tmpfile("deconv.onnx")
    tf.onnx.save(model, path, {input_signature = {tf.TensorSpec({tf.None, 3, 5, 2}, tf.float32)}})
    local ok, msg = X.check(path)
    assert.is_truthy(ok, msg)
    local x = tf.random.normal({2, 3, 5, 2})
    X.assert_close(model(x), X.ort(path, {inputs = x}).output_1, 1e-4, 1e-5)
  end)
end)
