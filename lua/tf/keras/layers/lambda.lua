--- Lambda: a layer that applies a Lua function.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise

  local Lambda = Layer:extend("Lambda")
  L.Lambda = Lambda
  Lambda._repr_args = {}
  --- Lambda{function}: a layer that applies a Lua function (no variables).
  function Lambda.init(self, opts)
    if type(opts) == "function" then opts = {opts} end
    opts = self:_options(opts, {"function"}, 1)
    self.fn = opts[1] or opts["function"]
    if type(self.fn) ~= "function" then raise("TypeError", "Lambda: expected a function", 3) end
  end
  function Lambda.call(self, x, opts) return self.fn(x, opts) end
  --- The config holds the Lua function itself: from_config remakes the
  -- layer within this process, but the function cannot be written to a
  -- file (as Keras cannot safely serialize a Python lambda): a config
  -- meant for a file must replace it (see docs/keras_regularizers.md).
  function Lambda.get_config(self)
    local c = Layer.get_config(self)
    c["function"] = self.fn
    return c
  end
end
