--- tf.keras.metrics: Mean, Sum, Accuracy, SparseCategoricalAccuracy,
-- CategoricalAccuracy, BinaryAccuracy, Precision, Recall, AUC,
-- TopKCategoricalAccuracy, SparseTopKCategoricalAccuracy,
-- RootMeanSquaredError, BinaryCrossentropy, CategoricalCrossentropy,
-- SparseCategoricalCrossentropy, MeanIoU, F1Score, FBetaScore. A metric keeps its
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
      o._options = NOOPT
      if opts then
        o._options = {}
        for k, v in pairs(opts) do
          o._options[k] = true
          if args[k] == nil then o[k] = v else o[k] = args[k] end
        end
      end
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
    yt, yp = tf.core.internal.keras.same_rank(yt, yp)   -- labels [batch] against [batch, 1], as Keras
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
    yt, yp = tf.core.internal.keras.same_rank(yt, yp)   -- labels [batch] against [batch, 1], as Keras
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

  --- The weights broadcast to 'like' (squeezing a trailing 1, adding
  -- trailing axes: [batch] weights against [batch, k] values).
  local function broadcast_weights(w, like)
    w = as_tensor(w, tf.float32)
    if w.dtype ~= tf.float32 then w = tf.cast(w, tf.float32) end
    local rw, rl = w.shape:rank(), like.shape:rank()
    if rw and rl then
      if rw == rl + 1 and w.shape[rw] == 1 then w = tf.squeeze(w, -1); rw = rw - 1 end
      while rw > 0 and rw < rl do w = tf.expand_dims(w, -1); rw = rw + 1 end
    end
    return tf.broadcast_to(w, tf.shape(like))
  end

  local function floats(t)
    t = as_tensor(t)
    if t.dtype ~= tf.float32 then t = tf.cast(t, tf.float32) end
    return t
  end

  local function div_no_nan(a, b)
    local zero = tf.equal(b, 0)
    return tf.where(zero, tf.zeros_like(a), a / tf.where(zero, tf.ones_like(b), b))
  end

  --- Labels checked as the losses check them (1..classes, the op's own
  -- InvalidArgumentError), the check tied into 'value' so a traced step keeps it.
  local function check_labels(labels, like, value)
    if labels.dtype ~= tf.int64 then labels = tf.cast(labels, tf.int64) end
    local logits = tf.zeros_like(like)   -- [n, classes] float32
    local checked = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
    return tf.where(tf.math.is_nan(tf.reduce_sum(checked)), value, value)
  end

  -- {==== Precision, Recall: thresholds (a number or a list), top_k, class_id (1-based)
  local NEG_INF = -1e10
  local function confusion_init(o, args)
    o._options = {thresholds = true, top_k = true, class_id = true}
    o.top_k, o.class_id = args.top_k, args.class_id
    if o.top_k ~= nil and (math.type(o.top_k) ~= "integer" or o.top_k < 1) then
      raise("ValueError", sfmt("%s: 'top_k' must be a positive integer, got %s", o._class, tostring(o.top_k)), 3)
    end
    if o.class_id ~= nil and (math.type(o.class_id) ~= "integer" or o.class_id < 1) then
      raise("ValueError", sfmt("%s: 'class_id' must be a 1-based class index, got %s", o._class,
        tostring(o.class_id)), 3)
    end
    local th = args.thresholds
    if th == nil then th = o.top_k and NEG_INF or 0.5 end
    o.thresholds = th
    local list = type(th) == "table" and th or {th}
    for i, t in ipairs(list) do
      if type(t) ~= "number" or (t ~= NEG_INF and (t < 0 or t > 1)) then
        raise("ValueError", sfmt("%s: thresholds must be numbers in [0, 1], got %s at %d", o._class, tostring(t), i),
          3)
      end
    end
    if #list == 0 then raise("ValueError", sfmt("%s: 'thresholds' is empty", o._class), 3) end
    o._thresholds = tf.constant(list, tf.float32)
    o._single = type(th) == "number"
    local shape = o._single and {} or {#list}
    o:add_weight("true_positives", shape)
    o:add_weight(o._class == "Precision" and "false_positives" or "false_negatives", shape)
  end
  local function filter_top_k(x, k)
    local _, idx = tf.math.top_k(x, k)
    local n = x.shape[x.shape:rank()]
    local mask = tf.reduce_sum(tf.one_hot(idx, n, {dtype = x.dtype}), -2)
    return x * mask + NEG_INF * (1 - mask)
  end
  local function class_slice(t, id)
    local r = t.shape:rank()
    local n = t.shape[r]
    if n and n > 0 and id > n then
      raise("InvalidArgumentError", sfmt("class_id %d is past the last of %d classes", id, n), 5)
    end
    return tf.gather(t, tf.constant(id, tf.int64), r)
  end
  --- Per-threshold counts: pred [N, T] > thresholds, label [N, 1], weight [N, 1].
  local function threshold_counts(self, y_true, y_pred, sample_weight)
    local yt, yp = floats(y_true), floats(y_pred)
    if self.top_k then yp = filter_top_k(yp, self.top_k) end
    if self.class_id then
      yt, yp = class_slice(yt, self.class_id), class_slice(yp, self.class_id)
    end
    local w = sample_weight ~= nil and tf.reshape(broadcast_weights(sample_weight, yp), {-1, 1}) or nil
    local pos = tf.cast(tf.greater(tf.reshape(yp, {-1, 1}), tf.reshape(self._thresholds, {1, -1})), tf.float32)
    local lab = tf.cast(tf.not_equal(tf.reshape(yt, {-1, 1}), 0), tf.float32)
    return pos, lab, w
  end
  local function add_counts(var, x, w, single)
    local c = tf.reduce_sum(w and x * w or x, 1)
    var:assign_add(single and tf.reshape(c, {}) or c)
  end
  local function confusion_update(self, y_true, y_pred, sample_weight)
    local p, t, w = threshold_counts(self, y_true, y_pred, sample_weight)
    add_counts(self.true_positives, p * t, w, self._single)
    if self.false_positives then
      add_counts(self.false_positives, p * (1 - t), w, self._single)
    else
      add_counts(self.false_negatives, (1 - p) * t, w, self._single)
    end
  end
  local function ratio(a, b) return div_no_nan(a, a + b) end
  local Precision = class("Precision", "precision", confusion_init)
  Precision.update_state = confusion_update
  function Precision:result() return ratio(self.true_positives:value(), self.false_positives:value()) end
  local Recall = class("Recall", "recall", confusion_init)
  Recall.update_state = confusion_update
  function Recall:result() return ratio(self.true_positives:value(), self.false_negatives:value()) end
  -- }====

  -- {==== AUC{num_thresholds=200, curve="ROC", summation_method="interpolation", thresholds=, from_logits=false}
  local AUC = class("AUC", "auc", function(o, args)
    o._options = {num_thresholds = true, curve = true, summation_method = true, thresholds = true,
                  multi_label = true, from_logits = true}
    local curve = args.curve or "ROC"
    if curve ~= "ROC" and curve ~= "PR" then
      raise("ValueError", sfmt("AUC: 'curve' must be \"ROC\" or \"PR\", got %s", tostring(curve)), 3)
    end
    local sm = args.summation_method or "interpolation"
    if sm ~= "interpolation" and sm ~= "minoring" and sm ~= "majoring" then
      raise("ValueError", sfmt("AUC: 'summation_method' must be \"interpolation\", \"minoring\" or \"majoring\", " ..
        "got %s", tostring(sm)), 3)
    end
    if args.multi_label then raise("ValueError", "AUC: multi_label = true is not supported", 3) end
    o.curve, o.summation_method, o.multi_label = curve, sm, false
    o.from_logits = args.from_logits or false
    local eps = 1e-7
    local th
    if args.thresholds ~= nil then
      if type(args.thresholds) ~= "table" then raise("TypeError", "AUC: 'thresholds' must be a list of numbers", 3) end
      th = {-eps}
      for i, t in ipairs(args.thresholds) do
        if type(t) ~= "number" or t < 0 or t > 1 then
          raise("ValueError", sfmt("AUC: thresholds must be numbers in [0, 1], got %s at %d", tostring(t), i), 3)
        end
        th[#th + 1] = t
      end
      th[#th + 1] = 1 + eps
      o.thresholds = args.thresholds
      o.num_thresholds = #th
    else
      local n = args.num_thresholds or 200
      if math.type(n) ~= "integer" or n <= 1 then
        raise("ValueError", sfmt("AUC: 'num_thresholds' must be an integer > 1, got %s", tostring(n)), 3)
      end
      o.num_thresholds = n
      th = {-eps}
      for i = 1, n - 2 do th[#th + 1] = i / (n - 1) end
      th[#th + 1] = 1 + eps
    end
    o._thresholds = tf.constant(th, tf.float32)
    o._th_list = th
    local n = o.num_thresholds
    o:add_weight("true_positives", {n})
    o:add_weight("false_positives", {n})
    o:add_weight("true_negatives", {n})
    o:add_weight("false_negatives", {n})
  end)
  function AUC:update_state(y_true, y_pred, sample_weight)
    local yt, yp = floats(y_true), floats(y_pred)
    if self.from_logits then yp = tf.sigmoid(yp) end
    local w = sample_weight ~= nil and tf.reshape(broadcast_weights(sample_weight, yp), {-1, 1}) or nil
    local p = tf.cast(tf.greater(tf.reshape(yp, {-1, 1}), tf.reshape(self._thresholds, {1, -1})), tf.float32)
    local t = tf.cast(tf.not_equal(tf.reshape(yt, {-1, 1}), 0), tf.float32)
    local function add(var, x) var:assign_add(tf.reduce_sum(w and x * w or x, 1)) end
    add(self.true_positives, p * t)
    add(self.false_positives, p * (1 - t))
    add(self.true_negatives, (1 - p) * (1 - t))
    add(self.false_negatives, (1 - p) * t)
  end
  function AUC:result()
    local n = self.num_thresholds
    local tp, fp = self.true_positives:value(), self.false_positives:value()
    local tn, fn = self.true_negatives:value(), self.false_negatives:value()
    local function head(x) return tf.slice(x, {1}, {n - 1}) end
    local function tail(x) return tf.slice(x, {2}, {n - 1}) end
    if self.curve == "PR" and self.summation_method == "interpolation" then
      -- Davis & Goadrich's interpolation, as Keras
      local dtp = head(tp) - tail(tp)
      local pp = tp + fp
      local dp = head(pp) - tail(pp)
      local slope = div_no_nan(dtp, tf.maximum(dp, 0))
      local intercept = tail(tp) - slope * tail(pp)
      local both = tf.logical_and(tf.greater(head(pp), 0), tf.greater(tail(pp), 0))
      local safe = tf.where(both, div_no_nan(head(pp), tf.maximum(tail(pp), 0)), tf.ones_like(tail(pp)))
      local inc = div_no_nan(slope * (dtp + intercept * tf.math.log(safe)), tf.maximum(tail(tp) + tail(fn), 0))
      return tf.reduce_sum(inc)
    end
    local recall = div_no_nan(tp, tp + fn)
    local x, y
    if self.curve == "ROC" then
      x, y = div_no_nan(fp, fp + tn), recall
    else
      x, y = recall, div_no_nan(tp, tp + fp)
    end
    local h
    if self.summation_method == "interpolation" then
      h = (head(y) + tail(y)) / 2
    elseif self.summation_method == "minoring" then
      h = tf.minimum(head(y), tail(y))
    else
      h = tf.maximum(head(y), tail(y))
    end
    return tf.reduce_sum((head(x) - tail(x)) * h)
  end
  -- }====

  -- {==== top-k accuracies (a target counts when fewer than k scores beat it: ties are in, as tf.math.in_top_k)
  local function in_top_k(yp, target, k)
    local n = yp.shape[yp.shape:rank()]
    if not n or n < 0 then
      raise("InvalidArgumentError", "top-k accuracy: y_pred needs a known number of classes (its last dimension)", 5)
    end
    local score = tf.reduce_sum(yp * tf.one_hot(target, n, {dtype = yp.dtype}), -1, true)
    local beat = tf.reduce_sum(tf.cast(tf.greater(yp, score), tf.float32), -1)
    return tf.cast(tf.less(beat, k), tf.float32)
  end
  mean_of("TopKCategoricalAccuracy", "top_k_categorical_accuracy", function(self, yt, yp)
    return in_top_k(floats(yp), tf.argmax(yt, -1), self.k)
  end, {k = 5})
  mean_of("SparseTopKCategoricalAccuracy", "sparse_top_k_categorical_accuracy", function(self, yt, yp)
    yp = floats(yp)
    yt = squeeze_last(yt, yp.shape:rank())
    if yt.dtype ~= tf.int64 then yt = tf.cast(yt, tf.int64) end
    local m = in_top_k(yp, yt, self.k)
    -- labels checked as SparseCategoricalAccuracy checks them
    local checked = tf.nn.sparse_softmax_cross_entropy_with_logits(yt, yp)
    return tf.where(tf.math.is_nan(checked), m, m)
  end, {k = 5})
  -- }====

  -- {==== RootMeanSquaredError: sqrt of the (weighted) mean of the per-sample mean squared errors
  local RMSE = mean_of("RootMeanSquaredError", "root_mean_squared_error", function(_, yt, yp)
    yp = floats(yp)
    yt = floats(yt)
    local e = tf.square(yp - yt)
    local r = e.shape:rank()
    if r and r > 1 then
      local axes = {}
      for i = 2, r do axes[#axes + 1] = i end
      e = tf.reduce_mean(e, axes)
    end
    return e
  end)
  function RMSE:result() return tf.sqrt(Mean.result(self)) end
  -- }====

  -- {==== the crossentropies as metrics: the mean of the per-sample loss
  mean_of("BinaryCrossentropy", "binary_crossentropy", function(self, yt, yp)
    local ls = self.label_smoothing
    if ls and ls > 0 then yt = floats(yt) * (1 - ls) + 0.5 * ls end
    return tf.keras.losses.binary_crossentropy(yt, yp, self.from_logits)
  end, {from_logits = false, label_smoothing = 0})
  mean_of("CategoricalCrossentropy", "categorical_crossentropy", function(self, yt, yp)
    return tf.keras.losses.categorical_crossentropy(yt, yp, self.from_logits, self.label_smoothing)
  end, {from_logits = false, label_smoothing = 0})
  mean_of("SparseCategoricalCrossentropy", "sparse_categorical_crossentropy", function(self, yt, yp)
    return tf.keras.losses.sparse_categorical_crossentropy(yt, yp, self.from_logits)
  end, {from_logits = false})
  -- }====

  -- {==== MeanIoU{num_classes, ignore_class=nil, sparse_y_true=true, sparse_y_pred=true}: 1-based class ids
  local MeanIoU = class("MeanIoU", "mean_iou", function(o, args)
    o._options = {num_classes = true, ignore_class = true, sparse_y_true = true, sparse_y_pred = true}
    local n = args.num_classes
    if math.type(n) ~= "integer" or n < 1 then
      raise("ValueError", sfmt("MeanIoU: 'num_classes' must be a positive integer, got %s", tostring(n)), 3)
    end
    o.num_classes = n
    o.ignore_class = args.ignore_class
    o.sparse_y_true = args.sparse_y_true ~= false
    o.sparse_y_pred = args.sparse_y_pred ~= false
    o:add_weight("total_cm", {n, n})
  end)
  function MeanIoU:update_state(y_true, y_pred, sample_weight)
    local yt, yp = as_tensor(y_true), as_tensor(y_pred)
    if not self.sparse_y_true then yt = tf.argmax(yt, -1) end
    if not self.sparse_y_pred then yp = tf.argmax(yp, -1) end
    if yt.dtype ~= tf.int64 then yt = tf.cast(yt, tf.int64) end
    if yp.dtype ~= tf.int64 then yp = tf.cast(yp, tf.int64) end
    yt, yp = tf.reshape(yt, {-1}), tf.reshape(yp, {-1})
    local n = self.num_classes
    local w = sample_weight ~= nil and tf.reshape(broadcast_weights(sample_weight, as_tensor(y_true)), {-1, 1})
      or nil
    local keep
    if self.ignore_class then
      keep = tf.reshape(tf.cast(tf.not_equal(yt, self.ignore_class), tf.float32), {-1, 1})
      -- an ignored label counts nowhere (and is not checked: it may lie outside 1..num_classes)
      yt = tf.where(tf.equal(yt, self.ignore_class), tf.ones_like(yt), yt)
      w = w and w * keep or keep
    end
    local ot = tf.one_hot(yt, n, {dtype = tf.float32})
    local op = tf.one_hot(yp, n, {dtype = tf.float32})
    if w then ot = ot * w end
    local cm = tf.matmul(ot, op, {transpose_a = true})
    cm = check_labels(yt, op, cm)
    cm = check_labels(yp, op, cm)
    self.total_cm:assign_add(cm)
  end
  function MeanIoU:result()
    local cm = self.total_cm:value()
    local rows = tf.reduce_sum(cm, 2)   -- true counts
    local cols = tf.reduce_sum(cm, 1)   -- predicted counts
    local tp = tf.linalg.diag_part(cm)
    local denom = rows + cols - tp
    local valid = tf.reduce_sum(tf.cast(tf.not_equal(denom, 0), tf.float32))
    return div_no_nan(tf.reduce_sum(div_no_nan(tp, denom)), valid)
  end
  -- }====

  -- {==== F1Score / FBetaScore{average=nil|"micro"|"macro"|"weighted", beta=1, threshold=nil}
  local function fbeta_init(o, args)
    o._options = {average = true, beta = true, threshold = true}
    local avg = args.average
    if avg ~= nil and avg ~= "micro" and avg ~= "macro" and avg ~= "weighted" then
      raise("ValueError", sfmt("%s: 'average' must be nil, \"micro\", \"macro\" or \"weighted\", got %s", o._class,
        tostring(avg)), 3)
    end
    o.average = avg
    o.beta = o._class == "F1Score" and 1.0 or (args.beta or 1.0)
    if o._class == "F1Score" then o._options.beta = nil end
    if type(o.beta) ~= "number" or o.beta <= 0 then
      raise("ValueError", sfmt("%s: 'beta' must be a number > 0, got %s", o._class, tostring(o.beta)), 3)
    end
    o.threshold = args.threshold
    if o.threshold ~= nil and (type(o.threshold) ~= "number" or o.threshold > 1 or o.threshold <= 0) then
      raise("ValueError", sfmt("%s: 'threshold' must be a number in (0, 1], got %s", o._class,
        tostring(o.threshold)), 3)
    end
  end
  local function fbeta_update(self, y_true, y_pred, sample_weight)
    local yt, yp = floats(y_true), floats(y_pred)
    local r = yp.shape:rank()
    if r ~= 2 then
      raise("ValueError", sfmt("%s: y_pred must have rank 2 (batch, classes), got shape %s", self._class,
        tostring(yp.shape)), 3)
    end
    if not self.true_positives then
      local n = yp.shape[2]
      local shape = self.average == "micro" and {} or {n}
      for _, name in ipairs({"true_positives", "false_positives", "false_negatives", "intermediate_weights"}) do
        self:add_weight(name, shape)
      end
    end
    if self.threshold == nil then
      local mx = tf.reduce_max(yp, -1, true)
      yp = tf.cast(tf.logical_and(tf.greater_equal(yp, mx), tf.greater(tf.abs(yp), 1e-9)), tf.float32)
    else
      yp = tf.cast(tf.greater(yp, self.threshold), tf.float32)
    end
    local w = sample_weight ~= nil and tf.expand_dims(floats(sample_weight), -1) or nil
    local micro = self.average == "micro"
    local function wsum(x)
      if w then x = x * w end
      return micro and tf.reduce_sum(x) or tf.reduce_sum(x, 1)
    end
    self.true_positives:assign_add(wsum(yp * yt))
    self.false_positives:assign_add(wsum(yp * (1 - yt)))
    self.false_negatives:assign_add(wsum((1 - yp) * yt))
    self.intermediate_weights:assign_add(wsum(yt))
  end
  local function fbeta_result(self)
    if not self.true_positives then return tf.constant(0, tf.float32) end
    local eps = 1e-7
    local tp = self.true_positives:value()
    local precision = tp / (tp + self.false_positives:value() + eps)
    local recall = tp / (tp + self.false_negatives:value() + eps)
    local b2 = self.beta * self.beta
    local f = precision * recall / (b2 * precision + recall + eps) * (1 + b2)
    if self.average == "weighted" then
      local iw = self.intermediate_weights:value()
      return tf.reduce_sum(f * (iw / (tf.reduce_sum(iw) + eps)))
    elseif self.average ~= nil then
      return tf.reduce_mean(f)
    end
    return f
  end
  for _, cname in ipairs({"FBetaScore", "F1Score"}) do
    local cls = class(cname, cname == "F1Score" and "f1_score" or "fbeta_score", fbeta_init)
    cls.update_state = fbeta_update
    cls.result = fbeta_result
  end
  -- }====

  --- m:get_config(): name, dtype and the constructor's keywords;
  -- Class.from_config(config) = Class(config).
  function Metric:get_config()
    local c = {name = self.name, dtype = "float32"}
    for k in pairs(self._options or {}) do
      if rawget(self, k) ~= nil then c[k] = self[k] end
    end
    return c
  end
  function Metric.from_config(cls, config)
    local o = {}
    for k, v in pairs(config) do if k ~= "dtype" then o[k] = v end end
    return cls(o)
  end

  --- tf.keras.metrics.get(identifier): a metric object from a name or an object.
  local BY_NAME = {
    mean = "Mean", sum = "Sum", accuracy = "Accuracy", acc = "Accuracy",
    sparse_categorical_accuracy = "SparseCategoricalAccuracy", categorical_accuracy = "CategoricalAccuracy",
    binary_accuracy = "BinaryAccuracy", precision = "Precision", recall = "Recall", auc = "AUC",
    top_k_categorical_accuracy = "TopKCategoricalAccuracy",
    sparse_top_k_categorical_accuracy = "SparseTopKCategoricalAccuracy",
    root_mean_squared_error = "RootMeanSquaredError", rmse = "RootMeanSquaredError",
    binary_crossentropy = "BinaryCrossentropy", categorical_crossentropy = "CategoricalCrossentropy",
    sparse_categorical_crossentropy = "SparseCategoricalCrossentropy", f1_score = "F1Score",
    mse = "MeanSquaredError", mean_squared_error = "MeanSquaredError",
    mae = "MeanAbsoluteError", mean_absolute_error = "MeanAbsoluteError",
  }
  function metrics.get(x)
    if type(x) == "string" then
      local cls = rawget(metrics, x)
      if type(cls) == "table" and cls._class == x then return cls{} end   -- a class name: its default name
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
