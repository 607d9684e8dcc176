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
end
