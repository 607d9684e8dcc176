--- tf.keras.losses: MeanSquaredError, MeanAbsoluteError,
-- SparseCategoricalCrossentropy, CategoricalCrossentropy,
-- BinaryCrossentropy, Huber, KLDivergence, CosineSimilarity, Hinge,
-- SquaredHinge, CategoricalHinge, LogCosh, Poisson,
-- MeanSquaredLogarithmicError, MeanAbsolutePercentageError,
-- BinaryFocalCrossentropy (objects: `loss(y_true, y_pred [, sample_weight])`)
-- and the functions of the same formulas (tf.keras.losses.mean_squared_error,
-- ...) returning the per-sample loss. Reductions: "sum_over_batch_size"
-- (the default: the weighted sum divided by the number of per-sample
-- values, Keras's rule), "sum", "none". Sparse labels are 1-based class
-- indices (label k selects y_pred[k]); 0 or a label past the last class is
-- an InvalidArgumentError.
return function(tf)
  tf.keras = tf.keras or {}
  if tf.keras.losses and tf.keras.losses._train then return end
  local raise = tf.errors.raise
  local sfmt = string.format

  local losses = tf.keras.losses or {}
  tf.keras.losses = losses
  losses._train = true

  local EPS = 1e-7

  local function as_tensor(x, dtype)
    if tf.is_variable(x) then x = x:value() end
    if not tf.is_tensor(x) then x = tf.constant(x, dtype) end
    return x
  end

  local function floaty(t)
    return t.dtype == tf.float32 or t.dtype == tf.float64
  end

  -- Keras's squeeze_or_expand_to_same_rank: ranks that differ by one where
  -- the larger ends in a dimension of 1 are made equal (a rank-1 tensor
  -- gains the axis, else the larger loses it), so labels [batch] against
  -- predictions [batch, 1] compare per sample instead of broadcasting to
  -- [batch, batch]
  local function same_rank(a, b)
    local ra, rb = a.shape:rank(), b.shape:rank()
    if ra == nil or rb == nil or ra == rb then return a, b end
    if ra == rb + 1 and a.shape:as_list()[ra] == 1 then
      if rb == 1 then b = tf.expand_dims(b, -1) else a = tf.squeeze(a, -1) end
    elseif rb == ra + 1 and b.shape:as_list()[rb] == 1 then
      if ra == 1 then a = tf.expand_dims(a, -1) else b = tf.squeeze(b, -1) end
    end
    return a, b
  end
  tf.core.internal.keras = tf.core.internal.keras or {}
  tf.core.internal.keras.same_rank = same_rank

  local function prep(name, y_true, y_pred)
    y_pred = as_tensor(y_pred)
    if not floaty(y_pred) then y_pred = tf.cast(y_pred, tf.float32) end
    y_true = as_tensor(y_true, y_pred.dtype)
    if y_true.dtype ~= y_pred.dtype then y_true = tf.cast(y_true, y_pred.dtype) end
    return same_rank(y_true, y_pred)
  end

  local function check_same(name, y_true, y_pred)
    local a, b = y_true.shape, y_pred.shape
    if a.rank and b.rank and a.rank ~= b.rank then
      raise("ValueError", sfmt("%s: y_true has shape %s, y_pred has shape %s (ranks differ)", name, tostring(a),
        tostring(b)), 4)
    end
  end

  --- Per-sample losses (the last axis averaged), as Keras's functions.
  function losses.mean_squared_error(y_true, y_pred)
    y_true, y_pred = prep("mean_squared_error", y_true, y_pred)
    return tf.reduce_mean(tf.square(y_pred - y_true), -1)
  end
  function losses.mean_absolute_error(y_true, y_pred)
    y_true, y_pred = prep("mean_absolute_error", y_true, y_pred)
    return tf.reduce_mean(tf.abs(y_pred - y_true), -1)
  end
  function losses.huber(y_true, y_pred, delta)
    delta = delta or 1.0
    y_true, y_pred = prep("huber", y_true, y_pred)
    local e = tf.abs(y_pred - y_true)
    local q = tf.minimum(e, delta)
    return tf.reduce_mean(0.5 * tf.square(q) + delta * (e - q), -1)
  end

  --- Sparse categorical cross-entropy: y_true 1-based class ids (shape
  -- [...] or [..., 1]), y_pred logits or probabilities [..., classes].
  function losses.sparse_categorical_crossentropy(y_true, y_pred, from_logits)
    y_pred = as_tensor(y_pred)
    if not floaty(y_pred) then y_pred = tf.cast(y_pred, tf.float32) end
    y_true = as_tensor(y_true, tf.int64)
    local rt, rp = y_true.shape:rank(), y_pred.shape:rank()
    if rt and rp and rt == rp then
      local d = y_true.shape:as_list()[rt]
      if d == 1 then
        y_true = tf.squeeze(y_true, -1)
      end
    end
    if y_true.dtype ~= tf.int32 and y_true.dtype ~= tf.int64 then
      if floaty(y_true) then
        y_true = tf.cast(y_true, tf.int64)
      else
        y_true = tf.cast(y_true, tf.int64)
      end
    end
    local logits = y_pred
    if not from_logits then
      logits = tf.math.log(tf.clip_by_value(y_pred, EPS, 1 - EPS))
    end
    return tf.nn.sparse_softmax_cross_entropy_with_logits(y_true, logits)
  end

  function losses.categorical_crossentropy(y_true, y_pred, from_logits, label_smoothing)
    y_true, y_pred = prep("categorical_crossentropy", y_true, y_pred)
    check_same("categorical_crossentropy", y_true, y_pred)
    if label_smoothing and label_smoothing > 0 then
      local k = y_pred.shape:as_list()[y_pred.shape:rank()]
      y_true = y_true * (1 - label_smoothing) + label_smoothing / k
    end
    if from_logits then
      return tf.nn.softmax_cross_entropy_with_logits(y_true, y_pred)
    end
    local p = y_pred / tf.reduce_sum(y_pred, -1, true)
    p = tf.clip_by_value(p, EPS, 1 - EPS)
    return -tf.reduce_sum(y_true * tf.math.log(p), -1)
  end

  function losses.binary_crossentropy(y_true, y_pred, from_logits)
    y_true, y_pred = prep("binary_crossentropy", y_true, y_pred)
    check_same("binary_crossentropy", y_true, y_pred)
    local l
    if from_logits then
      -- max(x, 0) - x z + log(1 + exp(-|x|))
      l = tf.maximum(y_pred, 0) - y_pred * y_true + tf.math.log1p(tf.exp(-tf.abs(y_pred)))
    else
      local p = tf.clip_by_value(y_pred, EPS, 1 - EPS)
      l = -(y_true * tf.math.log(p) + (1 - y_true) * tf.math.log(1 - p))
    end
    return tf.reduce_mean(l, -1)
  end

  --- The Keras losses of issue 19 (per-sample functions, the last axis
  -- averaged or summed as Keras does).
  local function l2_normalize(x, axis)
    return x * tf.math.rsqrt(tf.maximum(tf.reduce_sum(tf.square(x), axis, true), 1e-12))
  end
  function losses.kl_divergence(y_true, y_pred)
    y_true, y_pred = prep("kl_divergence", y_true, y_pred)
    y_true = tf.clip_by_value(y_true, EPS, 1)
    y_pred = tf.clip_by_value(y_pred, EPS, 1)
    return tf.reduce_sum(y_true * tf.math.log(y_true / y_pred), -1)
  end
  function losses.cosine_similarity(y_true, y_pred, axis)
    y_true, y_pred = prep("cosine_similarity", y_true, y_pred)
    axis = axis or -1
    return -tf.reduce_sum(l2_normalize(y_true, axis) * l2_normalize(y_pred, axis), axis)
  end
  -- labels in {0, 1} become {-1, 1} (Keras's rule: only when every label is 0 or 1)
  local function signed_labels(y_true)
    local is01 = tf.reduce_all(tf.logical_or(tf.equal(y_true, 0), tf.equal(y_true, 1)))
    return tf.where(is01, 2 * y_true - 1, y_true)
  end
  function losses.hinge(y_true, y_pred)
    y_true, y_pred = prep("hinge", y_true, y_pred)
    return tf.reduce_mean(tf.maximum(1 - signed_labels(y_true) * y_pred, 0), -1)
  end
  function losses.squared_hinge(y_true, y_pred)
    y_true, y_pred = prep("squared_hinge", y_true, y_pred)
    return tf.reduce_mean(tf.square(tf.maximum(1 - signed_labels(y_true) * y_pred, 0)), -1)
  end
  function losses.categorical_hinge(y_true, y_pred)
    y_true, y_pred = prep("categorical_hinge", y_true, y_pred)
    local pos = tf.reduce_sum(y_true * y_pred, -1)
    local neg = tf.reduce_max((1 - y_true) * y_pred, -1)
    return tf.maximum(neg - pos + 1, 0)
  end
  function losses.log_cosh(y_true, y_pred)
    y_true, y_pred = prep("log_cosh", y_true, y_pred)
    local x = y_pred - y_true
    return tf.reduce_mean(x + tf.nn.softplus(-2 * x) - math.log(2), -1)
  end
  function losses.poisson(y_true, y_pred)
    y_true, y_pred = prep("poisson", y_true, y_pred)
    return tf.reduce_mean(y_pred - y_true * tf.math.log(y_pred + EPS), -1)
  end
  function losses.mean_squared_logarithmic_error(y_true, y_pred)
    y_true, y_pred = prep("mean_squared_logarithmic_error", y_true, y_pred)
    local a = tf.math.log(tf.maximum(y_pred, EPS) + 1)
    local b = tf.math.log(tf.maximum(y_true, EPS) + 1)
    return tf.reduce_mean(tf.square(a - b), -1)
  end
  function losses.mean_absolute_percentage_error(y_true, y_pred)
    y_true, y_pred = prep("mean_absolute_percentage_error", y_true, y_pred)
    local d = tf.abs((y_true - y_pred) / tf.maximum(tf.abs(y_true), EPS))
    return 100 * tf.reduce_mean(d, -1)
  end
  --- binary_focal_crossentropy(y_true, y_pred, {apply_class_balancing=false,
  -- alpha=0.25, gamma=2, from_logits=false, label_smoothing=0}) (Keras 3's form).
  function losses.binary_focal_crossentropy(y_true, y_pred, o)
    o = o or {}
    y_true, y_pred = prep("binary_focal_crossentropy", y_true, y_pred)
    check_same("binary_focal_crossentropy", y_true, y_pred)
    local ls = o.label_smoothing or 0
    if ls > 0 then y_true = y_true * (1 - ls) + 0.5 * ls end
    if o.from_logits then y_pred = tf.sigmoid(y_pred) end
    local p = tf.clip_by_value(y_pred, EPS, 1 - EPS)
    local bce = -(y_true * tf.math.log(p) + (1 - y_true) * tf.math.log(1 - p))
    local p_t = y_true * y_pred + (1 - y_true) * (1 - y_pred)
    local l = tf.pow(1 - p_t, o.gamma or 2.0) * bce
    if o.apply_class_balancing then
      local alpha = o.alpha or 0.25
      l = (y_true * alpha + (1 - y_true) * (1 - alpha)) * l
    end
    return tf.reduce_mean(l, -1)
  end
  losses.kld = losses.kl_divergence
  losses.KLD = losses.kl_divergence
  losses.kullback_leibler_divergence = losses.kl_divergence
  losses.logcosh = losses.log_cosh
  losses.msle = losses.mean_squared_logarithmic_error
  losses.MSLE = losses.mean_squared_logarithmic_error
  losses.mape = losses.mean_absolute_percentage_error
  losses.MAPE = losses.mean_absolute_percentage_error

  losses.mse = losses.mean_squared_error
  losses.MSE = losses.mean_squared_error
  losses.mae = losses.mean_absolute_error
  losses.MAE = losses.mean_absolute_error

  local REDUCTIONS = {sum_over_batch_size = true, sum = true, none = true, auto = true}

  --- Reduce per-sample losses 'l' with optional weights.
  local function reduce(name, l, reduction, sample_weight)
    if sample_weight ~= nil then
      local w = as_tensor(sample_weight, l.dtype)
      if w.dtype ~= l.dtype then w = tf.cast(w, l.dtype) end
      -- weights of shape [batch, 1] against per-sample [batch]: squeeze; [batch] against [batch, k]: expand
      local rw, rl = w.shape:rank(), l.shape:rank()
      if rw and rl then
        if rw == rl + 1 and w.shape:as_list()[rw] == 1 then
          w = tf.squeeze(w, -1)
        else
          while rw and rw < rl and rw > 0 do
            w = tf.expand_dims(w, -1)
            rw = rw + 1
          end
        end
      end
      local ok, r = pcall(function() return l * w end)
      if not ok then
        raise("InvalidArgumentError", sfmt("%s: sample_weight of shape %s does not broadcast to the per-sample " ..
          "losses of shape %s", name, tostring(w.shape), tostring(l.shape)), 4)
      end
      l = r
    end
    if reduction == "none" then return l end
    if reduction == "sum" then return tf.reduce_sum(l) end
    return tf.reduce_mean(l)   -- the (weighted) sum over the number of values
  end
  losses._reduce = reduce

  local Loss = {}
  Loss.__index = Loss
  Loss.__name = "tf.keras.losses.Loss"
  losses.Loss = Loss

  function Loss.__call(self, y_true, y_pred, sample_weight)
    local l = self:call(y_true, y_pred)
    return reduce(self.name, l, self.reduction, sample_weight)
  end
  function Loss.__tostring(self) return sfmt("<tf.keras.losses.%s name=%s>", self._class, self.name) end

  local function class(cname, default_name, extra, positional, fn)
    local cls = setmetatable({}, {__index = Loss})
    cls.__index = cls
    cls.__call = Loss.__call
    cls.__tostring = Loss.__tostring
    cls.__name = "tf.keras.losses." .. cname
    cls._class = cname
    cls.call = fn
    cls._extra = extra
    setmetatable(cls, {__index = Loss, __call = function(_, args)
      args = args or {}
      if type(args) ~= "table" then raise("TypeError", sfmt("%s: expected a keyword table", cname), 2) end
      local o = {reduction = "sum_over_batch_size", name = default_name}
      for k, v in pairs(args) do
        if type(k) == "number" and positional and positional[k] then
          o[positional[k]] = v
        elseif k == "reduction" or k == "name" or extra[k] ~= nil then
          o[k] = v
        else
          raise("TypeError", sfmt("%s: unknown option '%s'", cname, tostring(k)), 2)
        end
      end
      for k, v in pairs(extra) do if o[k] == nil then o[k] = v end end
      if not REDUCTIONS[o.reduction] then
        raise("ValueError", sfmt("%s: invalid reduction '%s' (accepted: none, sum, sum_over_batch_size)", cname,
          tostring(o.reduction)), 2)
      end
      if o.reduction == "auto" then o.reduction = "sum_over_batch_size" end
      return setmetatable(o, cls)
    end})
    losses[cname] = cls
    return cls
  end

  --- loss:get_config(): name, reduction and the class's keywords;
  -- Class.from_config(config) = Class(config).
  function Loss:get_config()
    local c = {name = self.name, reduction = self.reduction}
    for k in pairs(self._extra or {}) do c[k] = self[k] end
    return c
  end
  function Loss.from_config(cls, config) return cls(config) end

  class("MeanSquaredError", "mean_squared_error", {}, nil,
    function(_, yt, yp) return losses.mean_squared_error(yt, yp) end)
  class("MeanAbsoluteError", "mean_absolute_error", {}, nil,
    function(_, yt, yp) return losses.mean_absolute_error(yt, yp) end)
  class("Huber", "huber_loss", {delta = 1.0}, {"delta"},
    function(self, yt, yp) return losses.huber(yt, yp, self.delta) end)
  class("SparseCategoricalCrossentropy", "sparse_categorical_crossentropy", {from_logits = false}, nil,
    function(self, yt, yp) return losses.sparse_categorical_crossentropy(yt, yp, self.from_logits) end)
  class("CategoricalCrossentropy", "categorical_crossentropy", {from_logits = false, label_smoothing = 0}, nil,
    function(self, yt, yp)
      return losses.categorical_crossentropy(yt, yp, self.from_logits, self.label_smoothing)
    end)
  class("BinaryCrossentropy", "binary_crossentropy", {from_logits = false}, nil,
    function(self, yt, yp) return losses.binary_crossentropy(yt, yp, self.from_logits) end)

  class("KLDivergence", "kl_divergence", {}, nil,
    function(_, yt, yp) return losses.kl_divergence(yt, yp) end)
  class("CosineSimilarity", "cosine_similarity", {axis = -1}, nil,
    function(self, yt, yp) return losses.cosine_similarity(yt, yp, self.axis) end)
  class("Hinge", "hinge", {}, nil, function(_, yt, yp) return losses.hinge(yt, yp) end)
  class("SquaredHinge", "squared_hinge", {}, nil, function(_, yt, yp) return losses.squared_hinge(yt, yp) end)
  class("CategoricalHinge", "categorical_hinge", {}, nil,
    function(_, yt, yp) return losses.categorical_hinge(yt, yp) end)
  class("LogCosh", "log_cosh", {}, nil, function(_, yt, yp) return losses.log_cosh(yt, yp) end)
  class("Poisson", "poisson", {}, nil, function(_, yt, yp) return losses.poisson(yt, yp) end)
  class("MeanSquaredLogarithmicError", "mean_squared_logarithmic_error", {}, nil,
    function(_, yt, yp) return losses.mean_squared_logarithmic_error(yt, yp) end)
  class("MeanAbsolutePercentageError", "mean_absolute_percentage_error", {}, nil,
    function(_, yt, yp) return losses.mean_absolute_percentage_error(yt, yp) end)
  class("BinaryFocalCrossentropy", "binary_focal_crossentropy",
    {apply_class_balancing = false, alpha = 0.25, gamma = 2.0, from_logits = false, label_smoothing = 0}, nil,
    function(self, yt, yp) return losses.binary_focal_crossentropy(yt, yp, self) end)

  local BY_NAME = {
    kl_divergence = "KLDivergence", kld = "KLDivergence", kullback_leibler_divergence = "KLDivergence",
    cosine_similarity = "CosineSimilarity", hinge = "Hinge", squared_hinge = "SquaredHinge",
    categorical_hinge = "CategoricalHinge", log_cosh = "LogCosh", logcosh = "LogCosh", poisson = "Poisson",
    mean_squared_logarithmic_error = "MeanSquaredLogarithmicError", msle = "MeanSquaredLogarithmicError",
    mean_absolute_percentage_error = "MeanAbsolutePercentageError", mape = "MeanAbsolutePercentageError",
    binary_focal_crossentropy = "BinaryFocalCrossentropy",
    mean_squared_error = "MeanSquaredError", mse = "MeanSquaredError",
    mean_absolute_error = "MeanAbsoluteError", mae = "MeanAbsoluteError",
    huber = "Huber", huber_loss = "Huber",
    sparse_categorical_crossentropy = "SparseCategoricalCrossentropy",
    categorical_crossentropy = "CategoricalCrossentropy",
    binary_crossentropy = "BinaryCrossentropy",
  }

  --- tf.keras.losses.get(identifier): a loss object from a name, an object,
  -- or a Lua function(y_true, y_pred) (returned as is).
  function losses.get(x)
    if type(x) == "string" then
      local c = BY_NAME[x] or BY_NAME[x:lower()]
      if not c and type(rawget(losses, x)) == "table" and rawget(losses, x)._class == x then c = x end
      if not c then
        local names = {}
        for n in pairs(BY_NAME) do names[#names + 1] = n end
        table.sort(names)
        raise("ValueError", sfmt("Could not interpret loss identifier: '%s' (known: %s)", x,
          table.concat(names, ", ")), 2)
      end
      return losses[c]{}
    end
    if type(x) == "function" or (type(x) == "table" and getmetatable(x) and getmetatable(x).__call) then return x end
    raise("ValueError", sfmt("Could not interpret loss identifier: %s", tostring(x)), 2)
  end
end
