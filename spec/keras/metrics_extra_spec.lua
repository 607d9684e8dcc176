-- The metrics of issue 19 against values computed by hand or in plain Lua:
-- AUC (ROC / PR, interpolation / minoring / majoring), Precision and Recall
-- (thresholds, top_k, class_id), TopKCategoricalAccuracy,
-- SparseTopKCategoricalAccuracy, RootMeanSquaredError, the crossentropy
-- metrics, MeanIoU, F1Score / FBetaScore; label-range checks; eagerly, in a
-- tf.fn, in compile{metrics =} by object and by name; reset_state;
-- get_config / from_config.
local S = require("keras.train_support")
local tf = S.tf
local M = tf.keras.metrics
local log, exp, sqrt = math.log, math.exp, math.sqrt

local function near(e, t, tol) assert.near(e, tf.is_tensor(t) and t:item() or t, tol or 1e-6) end

-- {==== AUC references in Lua: counts per threshold, then Keras's sums
local function thresholds(n)
  local th = {-1e-7}
  for i = 1, n - 2 do th[#th + 1] = i / (n - 1) end
  th[#th + 1] = 1 + 1e-7
  return th
end
local function counts(th, labels, preds, w)
  local tp, fp, tn, fn = {}, {}, {}, {}
  for j, t in ipairs(th) do
    tp[j], fp[j], tn[j], fn[j] = 0, 0, 0, 0
    for i = 1, #labels do
      local wi = w and w[i] or 1
      local pos, lab = preds[i] > t, labels[i] ~= 0
      if pos and lab then tp[j] = tp[j] + wi elseif pos then fp[j] = fp[j] + wi
      elseif lab then fn[j] = fn[j] + wi else tn[j] = tn[j] + wi end
    end
  end
  return tp, fp, tn, fn
end
local function dnn(a, b) return b == 0 and 0 or a / b end
local function ref_auc(curve, method, th, labels, preds, w)
  local tp, fp, tn, fn = counts(th, labels, preds, w)
  local n, s = #th, 0
  if curve == "PR" and method == "interpolation" then
    for i = 1, n - 1 do
      local dtp = tp[i] - tp[i + 1]
      local p0, p1 = tp[i] + fp[i], tp[i + 1] + fp[i + 1]
      local slope = dnn(dtp, math.max(p0 - p1, 0))
      local intercept = tp[i + 1] - slope * p1
      local ratio = (p0 > 0 and p1 > 0) and dnn(p0, p1) or 1
      s = s + dnn(slope * (dtp + intercept * log(ratio)), math.max(tp[i + 1] + fn[i + 1], 0))
    end
    return s
  end
  local x, y = {}, {}
  for i = 1, n do
    local rec = dnn(tp[i], tp[i] + fn[i])
    if curve == "ROC" then x[i], y[i] = dnn(fp[i], fp[i] + tn[i]), rec
    else x[i], y[i] = rec, dnn(tp[i], tp[i] + fp[i]) end
  end
  for i = 1, n - 1 do
    local h = method == "interpolation" and (y[i] + y[i + 1]) / 2 or method == "minoring" and math.min(y[i], y[i + 1])
      or math.max(y[i], y[i + 1])
    s = s + (x[i] - x[i + 1]) * h
  end
  return s
end
-- }====

local LABELS = {0, 1, 1, 0, 1, 0, 0, 1, 1, 0}
local PREDS = {0.12, 0.83, 0.41, 0.35, 0.67, 0.71, 0.05, 0.52, 0.94, 0.26}
local WEIGHTS = {1, 2, 0.5, 1, 1, 3, 1, 0.5, 1, 2}

describe("tf.keras.metrics (issue 19)", function()
  describe("AUC", function()
    it("Keras's documented example: num_thresholds = 3 gives 0.75", function()
      local m = M.AUC{num_thresholds = 3}
      m:update_state({0, 0, 1, 1}, {0, 0.5, 0.3, 0.9})
      near(0.75, m:result())
    end)

    it("ROC with many thresholds is the Mann-Whitney statistic (pairs ranked right)", function()
      local good, pairs_ = 0, 0
      for i = 1, #LABELS do
        for j = 1, #LABELS do
          if LABELS[i] == 1 and LABELS[j] == 0 then
            pairs_ = pairs_ + 1
            if PREDS[i] > PREDS[j] then good = good + 1 end
          end
        end
      end
      near(good / pairs_, M.AUC{num_thresholds = 1001}(LABELS, PREDS), 1e-5)
    end)

    for _, curve in ipairs({"ROC", "PR"}) do
      for _, method in ipairs({"interpolation", "minoring", "majoring"}) do
        it(curve .. " / " .. method .. " equals Keras's sums recomputed in Lua (weighted, 2 updates, 7 thresholds)",
          function()
          local m = M.AUC{num_thresholds = 7, curve = curve, summation_method = method}
          local a, b = {table.unpack(LABELS, 1, 5)}, {table.unpack(LABELS, 6)}
          m:update_state(a, {table.unpack(PREDS, 1, 5)}, {table.unpack(WEIGHTS, 1, 5)})
          m:update_state(tf.constant(b), tf.constant({table.unpack(PREDS, 6)}), tf.constant({table.unpack(WEIGHTS, 6)}))
          near(ref_auc(curve, method, thresholds(7), LABELS, PREDS, WEIGHTS), m:result(), 1e-5)
        end)
      end
    end

    it("explicit thresholds, from_logits, reset_state", function()
      local th = {-1e-7, 0.3, 0.5, 0.8, 1 + 1e-7}
      local m = M.AUC{thresholds = {0.3, 0.5, 0.8}, curve = "PR"}
      assert.equal(5, m.num_thresholds)
      near(ref_auc("PR", "interpolation", th, LABELS, PREDS), m(LABELS, PREDS), 1e-5)
      m:reset_state()
      near(0, m:result())
      local logits = {}
      for i, p in ipairs(PREDS) do logits[i] = log(p / (1 - p)) end
      near(ref_auc("ROC", "interpolation", thresholds(200), LABELS, PREDS),
        M.AUC{from_logits = true}(LABELS, logits), 1e-5)
    end)
  end)

  describe("Precision / Recall", function()
    it("a list of thresholds gives one value per threshold", function()
      local yt, yp = {1, 0, 1, 1, 0}, {0.9, 0.8, 0.2, 0.7, 0.4}
      -- t=0.3: predicted 1,2,4,5 -> tp 2 (1, 4), fp 2; t=0.75: 1, 2 -> tp 1, fp 1
      assert.tensor_near({2 / 4, 1 / 2}, M.Precision{thresholds = {0.3, 0.75}}(yt, yp))
      assert.tensor_near({2 / 3, 1 / 3}, M.Recall{thresholds = {0.3, 0.75}}(yt, yp))
    end)

    it("top_k keeps each sample's k highest scores; class_id (1-based) picks one class", function()
      local yt = {{0, 1, 0}, {0, 1, 0}, {1, 0, 0}, {0, 0, 1}}
      local yp = {{0.2, 0.5, 0.3}, {0.6, 0.3, 0.1}, {0.4, 0.35, 0.25}, {0.1, 0.6, 0.3}}
      -- top_k = 1: predicted positive exactly the argmax: samples' argmax 2, 1, 1, 2
      -- positives (pred, label): (s1,c2: 1) (s2,c1: 0) (s3,c1: 1) (s4,c2: 0) -> tp 2, fp 2; fn: s2 c2, s4 c3 -> 2
      near(2 / 4, M.Precision{top_k = 1}(yt, yp))
      near(2 / 4, M.Recall{top_k = 1}(yt, yp))
      -- class 2 only: predicted in s1, s4 (top 1); labels s1, s2 -> tp 1, fp 1, fn 1
      near(1 / 2, M.Precision{top_k = 1, class_id = 2}(yt, yp))
      near(1 / 2, M.Recall{top_k = 1, class_id = 2}(yt, yp))
      -- class 2 at 0.5 without top_k: predicted s1 (0.5 is not > 0.5), s4 -> none... 0.6 in s4 only
      near(0, M.Precision{class_id = 2}(yt, yp))
      -- top_k = 2, class 3: s1 (0.3 in top 2: yes), s2 (0.1: no), s3 (0.25: no), s4 (0.3: yes) -> tp 1 (s4), fp 1
      near(1 / 2, M.Precision{top_k = 2, class_id = 3}(yt, yp))
    end)

    it("sample weights; the old scalar form still holds", function()
      near(0.9 / (0.9 + 0.8), M.Precision{}({1, 0, 1}, {0.9, 0.8, 0.2}, {0.9, 0.8, 1}))
      local p = M.Precision{}
      assert.equal(0, #p.true_positives:value():_dims())
    end)

    it("bad options", function()
      assert.tf_error("ValueError", "Precision: 'top_k' must be a positive integer, got 0",
        function() M.Precision{top_k = 0} end)
      assert.tf_error("ValueError", "Recall: 'class_id' must be a 1-based class index, got 0",
        function() M.Recall{class_id = 0} end)
      assert.tf_error("ValueError", "Precision: thresholds must be numbers in [0, 1], got 1.5 at 2",
        function() M.Precision{thresholds = {0.5, 1.5}} end)
      assert.tf_error("InvalidArgumentError", "class_id 4 is past the last of 3 classes",
        function() M.Recall{class_id = 4}({{0, 1, 0}}, {{0.1, 0.2, 0.7}}) end)
    end)
  end)

  describe("top-k accuracies", function()
    local yp = {{0.1, 0.6, 0.3, 0.0}, {0.5, 0.2, 0.2, 0.1}, {0.25, 0.25, 0.25, 0.25}, {0.0, 0.1, 0.2, 0.7}}
    it("TopKCategoricalAccuracy: target within the k highest scores (ties count in)", function()
      local yt = {{0, 0, 1, 0}, {0, 0, 0, 1}, {1, 0, 0, 0}, {0, 1, 0, 0}}
      -- k = 1: s1 c3 no, s2 c4 no, s3 c1 tie yes, s4 c2 no
      near(1 / 4, M.TopKCategoricalAccuracy{k = 1}(yt, yp))
      -- k = 2: s1 yes, s2 c4 (0.1 beaten by 3) no, s3 yes, s4 c2 (0.1 beaten by 2) no
      near(2 / 4, M.TopKCategoricalAccuracy{k = 2}(yt, yp))
      near(1, M.TopKCategoricalAccuracy{}(yt, yp))   -- k = 5 > classes
    end)
    it("SparseTopKCategoricalAccuracy: 1-based labels, [batch] or [batch, 1], weights", function()
      near(2 / 4, M.SparseTopKCategoricalAccuracy{k = 2}({3, 4, 1, 2}, yp))
      near(2 / 4, M.SparseTopKCategoricalAccuracy{k = 2}({{3}, {4}, {1}, {2}}, yp))
      near((1 + 0 + 2) / (1 + 1 + 2 + 1), M.SparseTopKCategoricalAccuracy{k = 2}({3, 4, 1, 2}, yp, {1, 1, 2, 1}))
    end)
    it("SparseTopKCategoricalAccuracy checks label ranges as the losses do (eagerly and traced)", function()
      local m = M.SparseTopKCategoricalAccuracy{k = 2}
      assert.tf_error("InvalidArgumentError", "labels are 1-based class indices, valid range 1..4", function()
        m({0, 4, 1, 2}, yp)
      end)
      local f = tf.fn(function(a, b) m:update_state(a, b) return m:result() end)
      assert.tf_error("InvalidArgumentError", "got 5 at labels[2]", function()
        f(tf.constant({1, 5, 1, 2}, tf.int64), tf.constant(yp))
      end)
    end)
  end)

  it("RootMeanSquaredError: sqrt of the (weighted) mean of per-sample mean squared errors", function()
    local yt, yp = {{1, 2}, {3, 4}, {0, 0}}, {{1, 3}, {3, 6}, {1, -1}}
    local per = {0.5, 2, 1}
    near(sqrt((0.5 + 2 + 1) / 3), M.RootMeanSquaredError{}(yt, yp))
    near(sqrt((0.5 * 2 + 2 * 1 + 1 * 0.5) / 3.5), M.RootMeanSquaredError{}(yt, yp, {2, 1, 0.5}))
    local m = M.RootMeanSquaredError{}
    m(yt, yp)
    m({{0, 0}}, {{2, 2}})
    near(sqrt((per[1] + per[2] + per[3] + 4) / 4), m:result())
  end)

  it("the crossentropy metrics are the mean of the per-sample losses", function()
    local function bce(t, p) return -(t * log(p) + (1 - t) * log(1 - p)) end
    near((bce(1, 0.8) + bce(0, 0.3)) / 2, M.BinaryCrossentropy{}({{1}, {0}}, {{0.8}, {0.3}}))
    near((bce(0.95, 0.8) + bce(0.05, 0.3)) / 2, M.BinaryCrossentropy{label_smoothing = 0.1}({{1}, {0}}, {{0.8}, {0.3}}))
    local function sp(x) return log(1 + exp(x)) end
    near((sp(-2) + sp(-1)) / 2, M.BinaryCrossentropy{from_logits = true}({{1}, {0}}, {{2.0}, {-1.0}}))
    near((-log(0.5) - log(0.3)) / 2, M.CategoricalCrossentropy{}({{0, 0, 1}, {0, 1, 0}}, {{0.2, 0.3, 0.5}, {0.2, 0.3, 0.5}}))
    local lse = log(exp(1) + exp(2) + exp(3))
    near(((lse - 1) + (lse - 3)) / 2, M.SparseCategoricalCrossentropy{from_logits = true}({1, 3}, {{1, 2, 3}, {1, 2, 3}}))
    near((-log(0.2) * 1 - log(0.5) * 3) / 4, M.SparseCategoricalCrossentropy{}({1, 3}, {{0.2, 0.3, 0.5}, {0.2, 0.3, 0.5}},
      {1, 3}))
    assert.tf_error("InvalidArgumentError", "labels are 1-based class indices, valid range 1..3", function()
      M.SparseCategoricalCrossentropy{}({0, 3}, {{0.2, 0.3, 0.5}, {0.2, 0.3, 0.5}})
    end)
  end)

  describe("MeanIoU", function()
    it("the mean over classes present of tp / (tp + fp + fn), weights, ignore_class", function()
      local m = M.MeanIoU{num_classes = 3}
      -- true 1 1 2 2 3 ; pred 1 2 2 2 1
      -- c1: tp 1, fp 1 (s5), fn 1 (s2) -> 1/3; c2: tp 2, fp 1 -> 2/3; c3: tp 0, fn 1 -> 0
      near((1 / 3 + 2 / 3 + 0) / 3, m({1, 1, 2, 2, 3}, {1, 2, 2, 2, 1}))
      m:reset_state()
      -- a class never seen (denominator 0) is left out of the mean: c1 1/2, c2 1/2
      near((1 / 2 + 1 / 2) / 2, m({1, 1, 2}, {1, 2, 2}))
      -- weights: s1 w2, s2 w1, s3 w0.5: c1 tp 2, fn 1 -> 2/3; c2 tp 0.5, fp 1 -> 1/3
      near((2 / 3 + 1 / 3) / 2, M.MeanIoU{num_classes = 2}({1, 1, 2}, {1, 2, 2}, {2, 1, 0.5}))
      -- ignore_class: samples with label 3 count nowhere
      near((1 / 2 + 1 / 2) / 2, M.MeanIoU{num_classes = 3, ignore_class = 3}({1, 1, 2, 3}, {1, 2, 2, 1}))
      near((1 / 3 + 1 / 2 + 0) / 3, M.MeanIoU{num_classes = 3}({1, 1, 2, 3}, {1, 2, 2, 1}))
      -- probabilities with sparse_y_pred = false (argmax)
      near(1, M.MeanIoU{num_classes = 2, sparse_y_pred = false}({1, 2}, {{0.9, 0.1}, {0.3, 0.7}}))
    end)
    it("labels and predictions outside 1..num_classes are InvalidArgumentErrors (eagerly and traced)", function()
      local m = M.MeanIoU{num_classes = 2}
      assert.tf_error("InvalidArgumentError", "valid range 1..2 (label k selects logits[k]), got 0 at labels[1]",
        function() m({0, 1}, {1, 1}) end)
      assert.tf_error("InvalidArgumentError", "got 3 at labels[2]", function() m({1, 1}, {1, 3}) end)
      local f = tf.fn(function(a, b) m:update_state(a, b) end)
      assert.tf_error("InvalidArgumentError", "got 3 at labels[1]", function()
        f(tf.constant({3, 1}, tf.int64), tf.constant({1, 1}, tf.int64))
      end)
      assert.tf_error("ValueError", "MeanIoU: 'num_classes' must be a positive integer, got nil", function() M.MeanIoU{} end)
    end)
  end)

  describe("F1Score / FBetaScore", function()
    local yt = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 0, 0}}
    local yp = {{0.9, 0.1, 0.0}, {0.2, 0.6, 0.2}, {0.5, 0.2, 0.3}, {0.3, 0.4, 0.3}}
    -- argmax predictions: 1, 2, 1, 2 -> c1 tp 1 fp 1 fn 1; c2 tp 1 fp 1 fn 0; c3 tp 0 fp 0 fn 1
    local function f(tp, fp, fn, b)
      b = b or 1
      local eps = 1e-7
      local p, r = tp / (tp + fp + eps), tp / (tp + fn + eps)
      return p * r / (b * b * p + r + eps) * (1 + b * b)
    end
    it("per class (average = nil), macro, weighted, micro", function()
      local per = {f(1, 1, 1), f(1, 1, 0), f(0, 0, 1)}
      assert.tensor_near(per, M.F1Score{}(yt, yp), {atol = 1e-6})
      near((per[1] + per[2] + per[3]) / 3, M.F1Score{average = "macro"}(yt, yp))
      near((per[1] * 2 + per[2] * 1 + per[3] * 1) / 4, M.F1Score{average = "weighted"}(yt, yp), 1e-6)
      near(f(2, 2, 2), M.F1Score{average = "micro"}(yt, yp))
    end)
    it("threshold, beta, sample weights", function()
      -- > 0.25: s1 c1; s2 c2; s3 c1, c3; s4 c1, c2, c3 -> c1 tp 2 fp 1; c2 tp 1 fp 1; c3 tp 1 fp 1
      near(f(2, 1, 0) / 3 + f(1, 1, 0) / 3 + f(1, 1, 0) / 3, M.F1Score{average = "macro", threshold = 0.25}(yt, yp), 1e-6)
      near(f(1, 1, 1, 2), M.FBetaScore{beta = 2}(yt, yp):totable()[1], 1e-6)
      -- weights 2,1,1,0: c1 tp 2 fp 1 fn 0
      near(f(2, 1, 0), M.F1Score{}(yt, yp, {2, 1, 1, 0}):totable()[1], 1e-6)
    end)
    it("bad options", function()
      assert.tf_error("ValueError", "F1Score: 'average' must be nil, \"micro\", \"macro\" or \"weighted\", got mean",
        function() M.F1Score{average = "mean"} end)
      assert.tf_error("TypeError", "F1Score: unknown option 'beta'", function() M.F1Score{beta = 2} end)
      assert.tf_error("ValueError", "F1Score: 'threshold' must be a number in (0, 1], got 0",
        function() M.F1Score{threshold = 0} end)
    end)
  end)

  it("every new metric updates in a tf.fn as it does eagerly", function()
    local yb, pb = {{0, 1, 0}, {1, 0, 0}, {0, 0, 1}}, {{0.2, 0.5, 0.3}, {0.6, 0.3, 0.1}, {0.1, 0.2, 0.7}}
    local ids = {2, 1, 3}
    local makers = {
      function() return M.AUC{}, yb, pb end,
      function() return M.AUC{curve = "PR"}, yb, pb end,
      function() return M.Precision{top_k = 2}, yb, pb end,
      function() return M.Recall{thresholds = {0.2, 0.4}}, yb, pb end,
      function() return M.TopKCategoricalAccuracy{k = 1}, yb, pb end,
      function() return M.SparseTopKCategoricalAccuracy{k = 1}, ids, pb end,
      function() return M.RootMeanSquaredError{}, yb, pb end,
      function() return M.BinaryCrossentropy{}, yb, pb end,
      function() return M.CategoricalCrossentropy{}, yb, pb end,
      function() return M.SparseCategoricalCrossentropy{}, ids, pb end,
      function() return M.MeanIoU{num_classes = 3}, ids, {2, 2, 3} end,
      function() return M.F1Score{}, yb, pb end,
      function() return M.F1Score{average = "micro"}, yb, pb end,
    }
    for _, mk in ipairs(makers) do
      local eager, yt, yp = mk()
      eager(yt, yp)
      eager(yt, yp)
      local traced = mk()
      local f = tf.fn(function(a, b) traced:update_state(a, b) end)
      f(tf.constant(yt), tf.constant(yp))
      f(tf.constant(yt), tf.constant(yp))
      assert.tensor_near(eager:result(), traced:result(), {atol = 1e-6})
      traced:reset_state()
      assert.tensor_near(tf.zeros_like(traced:result()), traced:result())
    end
  end)

  it("compile{metrics =} by object and by name: fit's history and evaluate agree with the metric on predict", function()
    tf.random.set_seed(3)
    local x = tf.random.normal({16, 4})
    local y = tf.cast(tf.greater(tf.reduce_sum(x, -1, true), 0), tf.float32)
    local model = tf.keras.Sequential{tf.keras.layers.Dense{1, activation = "sigmoid"}}
    model:compile{optimizer = "adam", loss = "binary_crossentropy",
                  metrics = {"auc", M.Precision{name = "p"}, M.Recall{thresholds = {0.3, 0.7}, name = "r"},
                             "binary_crossentropy", "root_mean_squared_error", M.F1Score{threshold = 0.5}}}
    local h = model:fit(x, y, {epochs = 2, batch_size = 8, verbose = 0, shuffle = false})
    for _, k in ipairs({"loss", "auc", "p", "r", "binary_crossentropy", "root_mean_squared_error", "f1_score"}) do
      assert.equal(2, #h.history[k], k)
    end
    assert.equal(2, #h.history.r[1])   -- one value per threshold
    local logs = model:evaluate(x, y, {verbose = 0, return_dict = true, batch_size = 16})
    local p = model:predict(x, {verbose = 0})
    near(M.AUC{}(y, p):item(), logs.auc, 1e-6)
    near(M.Precision{}(y, p):item(), logs.p, 1e-6)
    near(M.BinaryCrossentropy{}(y, p):item(), logs.binary_crossentropy, 1e-6)
    near(M.RootMeanSquaredError{}(y, p):item(), logs.root_mean_squared_error, 1e-6)
    assert.same(M.Recall{thresholds = {0.3, 0.7}}(y, p):totable(), logs.r)
  end)

  it("multi-class metrics in compile by name and by object; a 0-based label in fit is an error from the metric",
    function()
    tf.random.set_seed(5)
    local x = tf.random.normal({12, 4})
    local ids = tf.constant({1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3}, tf.int64)
    local function make()
      return tf.keras.Sequential{tf.keras.layers.Dense{3, activation = "softmax"}}
    end
    local m = make()
    m:compile{optimizer = "adam", loss = "sparse_categorical_crossentropy",
              metrics = {"sparse_top_k_categorical_accuracy", "sparse_categorical_crossentropy",
                         M.MeanIoU{num_classes = 3, sparse_y_pred = false}}}
    local h = m:fit(x, ids, {epochs = 2, batch_size = 4, verbose = 0})
    assert.equal(2, #h.history.mean_iou)
    local logs = m:evaluate(x, ids, {verbose = 0, return_dict = true, batch_size = 12})
    local p = m:predict(x, {verbose = 0})
    near(1, logs.sparse_top_k_categorical_accuracy)   -- k = 5 > 3 classes
    near(M.SparseCategoricalCrossentropy{}(ids, p):item(), logs.sparse_categorical_crossentropy, 1e-6)
    near(M.MeanIoU{num_classes = 3, sparse_y_pred = false}(ids, p):item(), logs.mean_iou, 1e-6)

    local oh = tf.keras.utils.to_categorical(ids, 3)
    local m2 = make()
    m2:compile{optimizer = "adam", loss = "categorical_crossentropy",
               metrics = {"top_k_categorical_accuracy", "categorical_crossentropy", M.F1Score{average = "macro"},
                          M.TopKCategoricalAccuracy{k = 1, name = "top1"}}}
    m2:fit(x, oh, {epochs = 1, batch_size = 4, verbose = 0})
    logs = m2:evaluate(x, oh, {verbose = 0, return_dict = true, batch_size = 12})
    p = m2:predict(x, {verbose = 0})
    near(M.CategoricalAccuracy{}(oh, p):item(), logs.top1, 1e-6)
    near(M.F1Score{average = "macro"}(oh, p):item(), logs.f1_score, 1e-6)

    local m3 = make()
    m3:compile{optimizer = "sgd", loss = function(_, pred) return tf.reduce_mean(pred) end,
               metrics = {"sparse_top_k_categorical_accuracy"}}
    assert.tf_error("InvalidArgumentError", "labels are 1-based class indices, valid range 1..3", function()
      m3:fit(x, ids - 1, {epochs = 1, batch_size = 4, verbose = 0})
    end)
  end)

  it("get_config round-trips through from_config; string and class names", function()
    local cases = {
      M.AUC{num_thresholds = 50, curve = "PR", summation_method = "minoring", name = "prauc"},
      M.Precision{thresholds = {0.2, 0.4}, top_k = 2, class_id = 1},
      M.TopKCategoricalAccuracy{k = 3},
      M.MeanIoU{num_classes = 4, ignore_class = 1},
      M.F1Score{average = "weighted", threshold = 0.4},
      M.FBetaScore{beta = 2},
      M.CategoricalCrossentropy{label_smoothing = 0.1},
    }
    for _, m in ipairs(cases) do
      local c = m:get_config()
      local cls = getmetatable(m)
      assert.same(c, cls:from_config(c):get_config())
    end
    assert.same({name = "prauc", dtype = "float32", num_thresholds = 50, curve = "PR", summation_method = "minoring",
                 multi_label = false, from_logits = false}, cases[1]:get_config())
    assert.same({name = "top_k_categorical_accuracy", dtype = "float32", k = 3}, cases[3]:get_config())
    local names = {auc = "AUC", AUC = "AUC", top_k_categorical_accuracy = "TopKCategoricalAccuracy",
      sparse_top_k_categorical_accuracy = "SparseTopKCategoricalAccuracy", root_mean_squared_error = "RootMeanSquaredError",
      binary_crossentropy = "BinaryCrossentropy", categorical_crossentropy = "CategoricalCrossentropy",
      sparse_categorical_crossentropy = "SparseCategoricalCrossentropy", f1_score = "F1Score", F1Score = "F1Score"}
    for n, c in pairs(names) do assert.equal(M[c], getmetatable(M.get(n)), n) end
    assert.equal("auc", M.get("AUC").name)
    assert.tf_error("ValueError", "MeanIoU: 'num_classes' must be a positive integer", function() M.get("MeanIoU") end)
  end)
end)
