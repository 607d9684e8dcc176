--- tf.keras.activations: Keras's activation functions, by function or by
-- name (`Dense{10, activation = "relu"}`). Those the engine lacks as one op
-- (gelu, elu, selu, swish, ...) are composed from existing ops, so their
-- gradients come from the ops' own rules.
return function(tf)
  local keras = tf.keras
  local A = {}
  keras.activations = A

  local SQRT2 = math.sqrt(2)
  local SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
  -- SELU's constants (Klambauer et al., as Keras)
  local SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946

  local function t(x)
    if tf.is_tensor(x) then return x end
    if tf.is_variable(x) then return x:value() end
    return tf.convert_to_tensor(x)
  end
  local function opt(opts, k, d)
    if type(opts) == "table" and opts[k] ~= nil then return opts[k] end
    return d
  end

  function A.linear(x) return t(x) end
  function A.relu(x, opts)
    x = t(x)
    local alpha, max_value, threshold = opt(opts, "alpha", 0), opt(opts, "max_value"), opt(opts, "threshold", 0)
    if alpha == 0 and max_value == nil and threshold == 0 then return tf.relu(x) end
    local y
    if threshold ~= 0 then
      y = tf.where(tf.greater(x, threshold), x, tf.zeros_like(x))
    else
      y = tf.relu(x)
    end
    if max_value ~= nil then y = tf.minimum(y, max_value) end
    if alpha ~= 0 then
      y = y + tf.where(tf.less(x, threshold), (x - threshold) * alpha, tf.zeros_like(x))
    end
    return y
  end
  function A.relu6(x) return tf.minimum(tf.relu(t(x)), 6) end
  function A.leaky_relu(x, opts)
    x = t(x)
    local alpha = opt(opts, "alpha", opt(opts, "negative_slope", 0.2))
    return tf.where(tf.greater_equal(x, 0), x, x * alpha)
  end
  function A.sigmoid(x) return tf.sigmoid(t(x)) end
  function A.tanh(x) return tf.tanh(t(x)) end
  function A.softmax(x, opts)
    return tf.nn.softmax(t(x), opt(opts, "axis", -1))
  end
  function A.log_softmax(x, opts)
    return tf.nn.log_softmax(t(x), opt(opts, "axis", -1))
  end
  function A.softplus(x) return tf.softplus(t(x)) end
  function A.softsign(x) x = t(x); return x / (tf.abs(x) + 1) end
  function A.exponential(x) return tf.exp(t(x)) end
  --- elu: x for x > 0, alpha * (exp(x) - 1) otherwise (alpha 1).
  function A.elu(x, opts)
    x = t(x)
    local alpha = opt(opts, "alpha", 1.0)
    local neg = tf.expm1(tf.minimum(x, 0)) * alpha   -- minimum keeps exp finite
    return tf.where(tf.greater(x, 0), x, neg)
  end
  function A.selu(x)
    x = t(x)
    local neg = tf.expm1(tf.minimum(x, 0)) * SELU_ALPHA
    return tf.where(tf.greater(x, 0), x, neg) * SELU_SCALE
  end
  --- swish (silu): x * sigmoid(x).
  function A.swish(x) x = t(x); return x * tf.sigmoid(x) end
  A.silu = A.swish
  --- gelu: 0.5 x (1 + erf(x / sqrt 2)), or with {approximate = true}
  -- 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
  function A.gelu(x, opts)
    x = t(x)
    if opt(opts, "approximate", false) then
      return x * 0.5 * (tf.tanh((x + x * x * x * 0.044715) * SQRT_2_OVER_PI) + 1)
    end
    return x * 0.5 * (tf.math.erf(x / SQRT2) + 1)
  end
  --- hard_sigmoid: Keras 2's clip(0.2 x + 0.5, 0, 1).
  function A.hard_sigmoid(x) return tf.clip_by_value(t(x) * 0.2 + 0.5, 0, 1) end
  function A.mish(x) x = t(x); return x * tf.tanh(tf.softplus(x)) end

  local NAMES = {}
  for k in pairs(A) do NAMES[#NAMES + 1] = k end
  table.sort(NAMES)

  --- The activation function for `identifier`: a name, a function (returned
  -- as is) or nil (linear).
  function A.get(identifier)
    if identifier == nil then return A.linear end
    if type(identifier) == "function" then return identifier end
    if type(identifier) == "table" and getmetatable(identifier) and getmetatable(identifier).__call then
      return identifier
    end
    if type(identifier) == "string" then
      local f = rawget(A, identifier)
      if f and identifier ~= "get" and identifier ~= "serialize" and identifier ~= "deserialize" then return f end
      tf.core.internal.keras.raise("ValueError", ("Unknown activation function: '%s' (known: %s)"):format(identifier,
        table.concat(NAMES, ", ")), 2)
    end
    tf.core.internal.keras.raise("TypeError", ("Could not interpret activation function identifier: %s"):format(
      tostring(identifier)), 2)
  end

  --- The name of a known activation function, else nil.
  function A.serialize(f)
    for _, k in ipairs(NAMES) do if A[k] == f then return k end end
    return nil
  end

  --- The activation function for a name (as get).
  function A.deserialize(name) return A.get(name) end
end
