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
    opts = self:_options(opts, {"input_dim", "output_dim", "embeddings_initializer", "input_length", "mask_zero"}, 2)
    self.input_dim = U.positive_int("Embedding", "input_dim", opts[1] or opts.input_dim)
    self.output_dim = U.positive_int("Embedding", "output_dim", opts[2] or opts.output_dim)
    self.embeddings_initializer = keras.initializers.get(opts.embeddings_initializer or "uniform")
    if opts.mask_zero then raise("UnimplementedError", "Embedding: mask_zero is not supported", 3) end
  end
  function Embedding.build(self, _)
    self.embeddings = self:add_weight("embeddings", {self.input_dim, self.output_dim},
                                      {initializer = self.embeddings_initializer})
  end
  function Embedding.call(self, ids)
    if ids.dtype ~= tf.int32 and ids.dtype ~= tf.int64 then ids = tf.cast(ids, tf.int32) end
    return tf.gather(self.embeddings, ids)
  end
end
