--- tf.keras.metrics: Mean, Sum, Accuracy, SparseCategoricalAccuracy,
-- CategoricalAccuracy, BinaryAccuracy, Precision, Recall. A metric keeps its
-- state in non-trainable float32 variables (so updates work inside tf.fn):
-- `m(values)` / `m(y_true, y_pred [, sample_weight])` updates and returns the
-- result, `m:update_state(...)` updates, `m:result()` reads (a scalar
-- tensor), `m:reset_state()` clears. Sparse labels are 1-based class ids.
return function(tf)
  tf.keras = tf.keras or {}
  if tf.keras.metrics and tf.keras.metrics._train then return end
  -- a sibling module installs itself (a test double may return a table instead)
  local function load(name)
    local m = require(name)
    if type(m) == "function" then m(tf) end
  end
  load("tf.keras.losses")   -- MeanSquaredError / MeanAbsoluteError use the loss functions
  local raise = tf.errors.raise
  local sfmt = string.format

  local metrics = tf.keras.metrics or {}
  tf.keras.metrics = metrics
  metrics._train = true

  local function as_tensor(x, dtype)
    if tf.is_variable(x) then x = x:value() end
    if not tf.is_tensor(x) then x = tf.constant(x, dtype) end
    return x
  end

  local Metric = {}
  Metric.__index = Metric
  Metric.__name = "tf.keras.metrics.Metric"
  metrics.Metric = Metric

  function Metric.__call(self, ...)
    self:update_state(...)
    return self:result()
  end
  function Metric.__tostring(self)
    return sfmt("<tf.keras.metrics.%s name=%s>", self._class, self.name)
  end

  --- A state variable of the metric (float32 zeros of 'shape').
  function Metric:add_weight(name, shape)
    local v = tf.Variable(tf.zeros(shape or {}, tf.float32), {name = self.name .. "/" .. name, trainable = false})
    self._weights[#self._weights + 1] = v
    self[name] = v
    return v
  end

  function Metric:reset_state()
    for _, v in ipairs(self._weights) do v:assign(tf.zeros_like(v:value())) end
  end
  Metric.reset_states = Metric.reset_state

  --- The metric's variables (in creation order).
  function Metric:_checkpoint_children()
    local r = {}
    for _, v in ipairs(self._weights) do r[#r + 1] = {v._name:match("[^/]*$"), v} end
    return r
  end

  local function class(cname, default_name, init, parent)
    local cls = setmetatable({}, {__index = parent or Metric})
    cls.__index = cls
    cls.__call = Metric.__call
    cls.__tostring = Metric.__tostring
    cls.__name = "tf.keras.metrics." .. cname
    cls._class = cname
    setmetatable(cls, {__index = parent or Metric, __call = function(_, args)
      if type(args) == "string" then args = {name = args} end
      args = args or {}
      if type(args) ~= "table" then raise("TypeError", sfmt("%s: expected a keyword table or a name", cname), 2) end
      local o = setmetatable({_weights = {}}, cls)
      o.name = args.name or args[1] or default_name
      o.dtype = tf.float32
      init(o, args)
      for k in pairs(args) do
        if k ~= "name" and k ~= 1 and k ~= "dtype" and not o._options[k] then
          raise("TypeError", sfmt("%s: unknown option '%s'", cname, tostring(k)), 2)
        end
      end
      return o
    end})
    metrics[cname] = cls
    return cls
  end

  local NOOPT = {}

  local function weights_for(values, sample_weight)
    if sample_weight == nil then return nil end
    local w = as_tensor(sample_weight, tf.float32)
    if w.dtype ~= tf.float32 then w = tf.cast(w, tf.float32) end
    local rv, rw = values.shape:rank(), w.shape:rank()
    if rv and rw then
      if rw == rv + 1 and w.shape[rw] == 1 then w = tf.squeeze(w, -1) end
    end
    return tf.broadcast_to(w, tf.shape(values))
  end

  -- {==== Mean, Sum
  local function reduce_init(o) o._options = NOOPT; o:add_weight("total"); o:add_weight("count") end
  local Mean = class("Mean", "mean", reduce_init)
  --- m:update_state(values [, sample_weight])
  function Mean:update_state(values, sample_weight)
    values = as_tensor(values, tf.float32)
    if values.dtype ~= tf.float32 then values = tf.cast(values, tf.float32) end
    local w = weights_for(values, sample_weight)
    if w then
      self.total:assign_add(tf.reduce_sum(values * w))
      self.count:assign_add(tf.reduce_sum(w))
    else
      self.total:assign_add(tf.reduce_sum(values))
      local n = values.shape:num_elements()
      self.count:assign_add(n and tf.constant(n, tf.float32) or tf.reduce_sum(tf.ones_like(values)))
    end
  end
  function Mean:result()
    local c = self.count:value()
    return self.total:value() / tf.maximum(c, 1e-30)   -- 0 when nothing was counted (div_no_nan)
  end

  local Sum = class("Sum", "sum", function(o) o._options = NOOPT; o:add_weight("total") end)
  function Sum:update_state(values, sample_weight)
    values = as_tensor(values, tf.float32)
    if values.dtype ~= tf.float32 then values = tf.cast(values, tf.float32) end
    local w = weights_for(values, sample_weight)
    self.total:assign_add(tf.reduce_sum(w and values * w or values))
  end
  function Sum:result() return self.total:value() end
  -- }====

  -- {==== Accuracies: the mean of a per-sample match
  local function mean_of(parent_name, default_name, match, opts)
    local cls = class(parent_name, default_name, function(o, args)
      reduce_init(o)
      o._options = opts or NOOPT
      if opts then for k, v in pairs(opts) do o[k] = args[k] == nil and v or args[k] end end
    end, Mean)
    function cls:update_state(y_true, y_pred, sample_weight)
      local m = match(self, as_tensor(y_true), as_tensor(y_pred))
      Mean.update_state(self, m, sample_weight)
    end
    return cls
  end

  local function squeeze_last(t, like_rank)
    local r = t.shape:rank()
    if r and like_rank and r == like_rank and r > 0 and t.shape[r] == 1 then return tf.squeeze(t, -1) end
    return t
  end

  mean_of("Accuracy", "accuracy", function(_, yt, yp)
    if yt.dtype ~= yp.dtype then yt = tf.cast(yt, yp.dtype) end
    return tf.cast(tf.equal(yt, yp), tf.float32)
  end)

  mean_of("SparseCategoricalAccuracy", "sparse_categorical_accuracy", function(_, yt, yp)
    yt = squeeze_last(yt, yp.shape:rank())
    local pred = tf.argmax(yp, -1)   -- 1-based class ids
    if yt.dtype ~= tf.int64 then yt = tf.cast(yt, tf.int64) end
    local match = tf.cast(tf.equal(yt, pred), tf.float32)
    -- labels are checked as the loss checks them (1..classes, the same
    -- error: a 0-based label must not silently score 0): by the loss's own
    -- op, whose result the match then depends on, so a traced step keeps
    -- the check; where(c, m, m) is m whatever the loss (NaN, inf) is
    local scores = yp
    if scores.dtype ~= tf.float32 and scores.dtype ~= tf.float64 then scores = tf.cast(scores, tf.float32) end
    local checked = tf.nn.sparse_softmax_cross_entropy_with_logits(yt, scores)
    return tf.where(tf.math.is_nan(checked), match, match)
  end)

  mean_of("CategoricalAccuracy", "categorical_accuracy", function(_, yt, yp)
    return tf.cast(tf.equal(tf.argmax(yt, -1), tf.argmax(yp, -1)), tf.float32)
  end)

  mean_of("BinaryAccuracy", "binary_accuracy", function(self, yt, yp)
    if not (yp.dtype == tf.float32 or yp.dtype == tf.float64) then yp = tf.cast(yp, tf.float32) end
    local p = tf.cast(tf.greater(yp, self.threshold), tf.float32)
    if yt.dtype ~= tf.float32 then yt = tf.cast(yt, tf.float32) end
    return tf.cast(tf.equal(yt, p), tf.float32)
  end, {threshold = 0.5})

  --- MeanSquaredError / MeanAbsoluteError: the mean of the per-sample loss.
  mean_of("MeanSquaredError", "mean_squared_error", function(_, yt, yp)
    return tf.keras.losses.mean_squared_error(yt, yp)
  end)
  mean_of("MeanAbsoluteError", "mean_absolute_error", function(_, yt, yp)
    return tf.keras.losses.mean_absolute_error(yt, yp)
  end)
  -- }====

  -- {==== Precision, Recall (binary, threshold 0.5)
  local function confusion_init(o, args)
    o._options = {thresholds = true}
    o.thresholds = args.thresholds or 0.5
    if type(o.thresholds) ~= "number" then
      raise("TypeError", sfmt("%s: only a single number is supported for 'thresholds'", o._class), 3)
    end
    o:add_weight("true_positives")
    o:add_weight(o._class == "Precision" and "false_positives" or "false_negatives")
  end
  local function confusion_update(self, y_true, y_pred, sample_weight)
    local yt, yp = as_tensor(y_true), as_tensor(y_pred)
    if yp.dtype ~= tf.float32 then yp = tf.cast(yp, tf.float32) end
    if yt.dtype ~= tf.float32 then yt = tf.cast(yt, tf.float32) end
    local p = tf.cast(tf.greater(yp, self.thresholds), tf.float32)
    local t = tf.cast(tf.greater(yt, 0.5), tf.float32)
    local w = weights_for(p, sample_weight)
    local function add(var, x) var:assign_add(tf.reduce_sum(w and x * w or x)) end
    add(self.true_positives, p * t)
    if self.false_positives then add(self.false_positives, p * (1 - t)) else add(self.false_negatives, (1 - p) * t) end
  end
  local function ratio(a, b)
    local d = a + b
    return a / tf.maximum(d, 1e-30)   -- 0 when a + b is 0
  end
  local Precision = class("Precision", "precision", confusion_init)
  Precision.update_state = confusion_update
  function Precision:result() return ratio(self.true_positives:value(), self.false_positives:value()) end
  local Recall = class("Recall", "recall", confusion_init)
  Recall.update_state = confusion_update
  function Recall:result() return ratio(self.true_positives:value(), self.false_negatives:value()) end
  -- }====

  --- tf.keras.metrics.get(identifier): a metric object from a name or an object.
  local BY_NAME = {
    mean = "Mean", sum = "Sum", accuracy = "Accuracy", acc = "Accuracy",
    sparse_categorical_accuracy = "SparseCategoricalAccuracy", categorical_accuracy = "CategoricalAccuracy",
    binary_accuracy = "BinaryAccuracy", precision = "Precision", recall = "Recall",
    mse = "MeanSquaredError", mean_squared_error = "MeanSquaredError",
    mae = "MeanAbsoluteError", mean_absolute_error = "MeanAbsoluteError",
  }
  function metrics.get(x)
    if type(x) == "string" then
      local c = BY_NAME[x:lower()]
      if not c then
        raise("ValueError", sfmt("Could not interpret metric identifier: '%s'", x), 2)
      end
      return metrics[c]{name = x}   -- named as given (history keys: "mae", "accuracy", ...)
    end
    if type(x) == "table" and x.update_state then return x end
    raise("ValueError", sfmt("Could not interpret metric identifier: %s", tostring(x)), 2)
  end
end
