--- Embedding (1-based indices).
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise
  local U = require("tf.keras.layers.util")(tf)

  local Embedding = Layer:extend("Embedding")
  function Embedding.compute_output_shape(self, shape)
    local d = shape:as_list()
    d[#d + 1] = self.output_dim
    return tf.TensorShape(d)
  end
  L.Embedding = Embedding
  Embedding._repr_args = {"input_dim", "output_dim"}
  --- Embedding{input_dim, output_dim, embeddings_initializer="uniform"}:
  -- looks up rows of an (input_dim, output_dim) matrix. Indices are 1-based
  -- (DESIGN section 2): index k selects row k; 0 or past input_dim is an
  -- InvalidArgumentError.
  function Embedding.init(self, opts)
    opts = self:_options(opts, {"input_dim", "output_dim", "embeddings_initializer", "input_length", "mask_zero",
                                "embeddings_regularizer", "embeddings_constraint"}, 2)
    U.reg_con(self, opts, {"embeddings_regularizer", "embeddings_constraint"})
    self.input_length = opts.input_length
    self.input_dim = U.positive_int("Embedding", "input_dim", opts[1] or opts.input_dim)
    self.output_dim = U.positive_int("Embedding", "output_dim", opts[2] or opts.output_dim)
    self.embeddings_initializer = keras.initializers.get(opts.embeddings_initializer or "uniform")
    if opts.mask_zero then raise("UnimplementedError", "Embedding: mask_zero is not supported", 3) end
  end
  function Embedding.build(self, _)
    self.embeddings = self:add_weight("embeddings", {self.input_dim, self.output_dim},
                                      {initializer = self.embeddings_initializer,
                                       regularizer = self.embeddings_regularizer,
                                       constraint = self.embeddings_constraint})
  end
  function Embedding.call(self, ids)
    if ids.dtype ~= tf.int32 and ids.dtype ~= tf.int64 then ids = tf.cast(ids, tf.int32) end
    return self:_activity_regularize(tf.gather(self.embeddings, ids))
  end

  function Embedding.get_config(self)
    local c = Layer.get_config(self)
    c.input_dim, c.output_dim, c.input_length = self.input_dim, self.output_dim, self.input_length
    c.embeddings_initializer = U.ser_initializer(self.embeddings_initializer)
    c.mask_zero = rawget(self, "mask_zero") or false
    return U.config_reg_con(self, c, {"embeddings_regularizer", "embeddings_constraint"})
  end
end
