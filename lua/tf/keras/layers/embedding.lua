--- Embedding (1-based indices; with mask_zero, 0 is the padding index).
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local U = require("tf.keras.layers.util")(tf)

  -- a config entry: through tf.keras.<kind>.serialize when there is one
  local function ser(kind, v)
    local m = keras[kind]
    if v ~= nil and m and type(m.serialize) == "function" then return m.serialize(m.get(v)) end
    return v
  end

  local Embedding = Layer:extend("Embedding")
  function Embedding.compute_output_shape(self, shape)
    local d = shape:as_list()
    d[#d + 1] = self.output_dim
    return tf.TensorShape(d)
  end
  L.Embedding = Embedding
  Embedding._repr_args = {"input_dim", "output_dim"}
  --- Embedding{input_dim, output_dim, embeddings_initializer="uniform",
  -- embeddings_regularizer=, activity_regularizer=, embeddings_constraint=,
  -- mask_zero=false, input_length=}: looks up rows of an (input_dim,
  -- output_dim) matrix. Indices are 1-based (DESIGN section 2): index k
  -- selects row k; past input_dim is an InvalidArgumentError, and so is 0
  -- unless mask_zero is set. With mask_zero = true, 0 is the padding
  -- index: its output is a zero vector and its timestep is masked (the
  -- output carries the mask ids ~= 0). Keras reserves row 0 of its matrix
  -- for padding (input_dim = vocabulary + 1); here the padding index has
  -- no row, so input_dim is the vocabulary size.
  function Embedding.init(self, opts)
    opts = self:_options(opts, {"input_dim", "output_dim", "embeddings_initializer", "embeddings_regularizer",
                                "activity_regularizer", "embeddings_constraint", "input_length", "mask_zero"}, 2)
    self.input_dim = U.positive_int("Embedding", "input_dim", opts[1] or opts.input_dim)
    self.output_dim = U.positive_int("Embedding", "output_dim", opts[2] or opts.output_dim)
    rawset(self, "_init_arg", opts.embeddings_initializer or "uniform")
    self.embeddings_initializer = keras.initializers.get(self._init_arg)
    self.embeddings_regularizer = opts.embeddings_regularizer
    self.embeddings_constraint = opts.embeddings_constraint
    if rawget(self, "activity_regularizer") == nil then rawset(self, "activity_regularizer", opts.activity_regularizer) end
    self.mask_zero = opts.mask_zero and true or false
    self.input_length = opts.input_length
  end
  function Embedding.build(self, _)
    self.embeddings = self:add_weight("embeddings", {self.input_dim, self.output_dim},
                                      {initializer = self.embeddings_initializer,
                                       regularizer = self.embeddings_regularizer,
                                       constraint = self.embeddings_constraint})
  end
  local function ids_of(ids)
    if ids.dtype ~= tf.int32 and ids.dtype ~= tf.int64 then ids = tf.cast(ids, tf.int32) end
    return ids
  end
  function Embedding.call(self, ids)
    ids = ids_of(ids)
    local out
    if self.mask_zero then
      -- 0 looks up row 1 (any valid row) and is then zeroed
      local pad = tf.equal(ids, 0)
      local rows = tf.where(pad, tf.ones_like(ids), ids)
      out = tf.gather(self.embeddings, rows)
      local keep = tf.cast(tf.logical_not(pad), out.dtype)
      out = out * tf.expand_dims(keep, -1)
    else
      out = tf.gather(self.embeddings, ids)
    end
    if type(self._activity_regularize) == "function" and rawget(self, "activity_regularizer") ~= nil then
      self:_activity_regularize(out)
    end
    return out
  end
  --- The mask: ids ~= 0 with mask_zero, else none.
  function Embedding.compute_mask(self, ids, _)
    if not self.mask_zero then return nil end
    return tf.not_equal(ids_of(ids), 0)
  end
  function Embedding.get_config(self)
    local c = Layer.get_config(self)
    c.input_dim, c.output_dim = self.input_dim, self.output_dim
    c.embeddings_initializer = ser("initializers", rawget(self, "_init_arg"))
    c.embeddings_regularizer = ser("regularizers", self.embeddings_regularizer)
    if c.activity_regularizer == nil then
      c.activity_regularizer = ser("regularizers", rawget(self, "activity_regularizer"))
    end
    c.embeddings_constraint = ser("constraints", self.embeddings_constraint)
    c.mask_zero = self.mask_zero
    c.input_length = self.input_length
    return c
  end
end
