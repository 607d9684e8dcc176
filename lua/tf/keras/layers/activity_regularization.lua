--- ActivityRegularization{l1 = 0, l2 = 0}: passes its input through and
-- adds l1 * sum|x| + l2 * sum x^2, divided by the batch size (Keras's
-- activity regularization), to the layer's losses.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer

  local AR = Layer:extend("ActivityRegularization")
  L.ActivityRegularization = AR
  AR._repr_args = {"l1", "l2"}
  AR.supports_masking = true
  function AR.compute_output_shape(_, shape) return shape end
  function AR.init(self, opts)
    opts = self:_options(opts, {"l1", "l2"}, 0)
    local r = keras.regularizers.L1L2{l1 = opts.l1 or 0.0, l2 = opts.l2 or 0.0}
    self.l1, self.l2 = r.l1, r.l2
    rawset(self, "activity_regularizer", r)
  end
  function AR.call(self, x) return self:_activity_regularize(tf.identity(x)) end
  function AR.get_config(self)
    local c = Layer.get_config(self)
    c.activity_regularizer = nil
    c.l1, c.l2 = self.l1, self.l2
    return c
  end
end
