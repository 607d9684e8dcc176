--- Activation layers: Activation, ReLU, LeakyReLU, Softmax.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local A = keras.activations

  local function same(_, shape) return shape end
  local Activation = Layer:extend("Activation")
  Activation.compute_output_shape = same
  L.Activation = Activation
  Activation._repr_args = {"activation"}
  --- Activation{"relu"} (or a function): applies the activation.
  function Activation.init(self, opts)
    if type(opts) == "string" or type(opts) == "function" then opts = {opts} end
    opts = self:_options(opts, {"activation"}, 1)
    self.activation = A.get(opts[1] or opts.activation)
  end
  function Activation.call(self, x) return self.activation(x) end
  function Activation.get_config(self)
    local c = Layer.get_config(self)
    c.activation = A.serialize(self.activation) or self.activation
    return c
  end

  local ReLU = Layer:extend("ReLU")
  ReLU.compute_output_shape = same
  L.ReLU = ReLU
  ReLU._repr_args = {"max_value", "negative_slope", "threshold"}
  --- ReLU{max_value=, negative_slope=0, threshold=0}
  function ReLU.init(self, opts)
    opts = self:_options(opts, {"max_value", "negative_slope", "threshold"}, 0)
    self.max_value, self.negative_slope, self.threshold = opts.max_value, opts.negative_slope or 0, opts.threshold or 0
  end
  function ReLU.call(self, x)
    return A.relu(x, {alpha = self.negative_slope, max_value = self.max_value, threshold = self.threshold})
  end
  function ReLU.get_config(self)
    local c = Layer.get_config(self)
    c.max_value, c.negative_slope, c.threshold = self.max_value, self.negative_slope, self.threshold
    return c
  end

  local LeakyReLU = Layer:extend("LeakyReLU")
  LeakyReLU.compute_output_shape = same
  L.LeakyReLU = LeakyReLU
  LeakyReLU._repr_args = {"alpha"}
  --- LeakyReLU{alpha = 0.3} (Keras 2's default; negative_slope is accepted too)
  function LeakyReLU.init(self, opts)
    opts = self:_options(opts, {"alpha", "negative_slope"}, 0)
    self.alpha = opts.alpha or opts.negative_slope or 0.3
  end
  function LeakyReLU.call(self, x) return A.leaky_relu(x, {alpha = self.alpha}) end
  function LeakyReLU.get_config(self)
    local c = Layer.get_config(self)
    c.alpha = self.alpha
    return c
  end

  local Softmax = Layer:extend("Softmax")
  Softmax.compute_output_shape = same
  L.Softmax = Softmax
  Softmax._repr_args = {"axis"}
  --- Softmax{axis = -1}
  function Softmax.init(self, opts)
    opts = self:_options(opts, {"axis"}, 0)
    self.axis = opts.axis or -1
  end
  function Softmax.call(self, x) return tf.nn.softmax(x, self.axis) end
  function Softmax.get_config(self)
    local c = Layer.get_config(self)
    c.axis = self.axis
    return c
  end
end
