-- The losses of issue 19 against values computed by hand in Lua float64
-- arithmetic: KLDivergence, CosineSimilarity, Hinge, SquaredHinge,
-- CategoricalHinge, LogCosh, Poisson, MeanSquaredLogarithmicError,
-- MeanAbsolutePercentageError, BinaryFocalCrossentropy; reductions, string
-- names, get_config / from_config, tf.fn.
local S = require("keras.train_support")
local tf = S.tf
local L = tf.keras.losses
local log, exp, sqrt, max, abs = math.log, math.exp, math.sqrt, math.max, math.abs
local EPS = 1e-7

local function near(e, t, tol) assert.near(e, tf.is_tensor(t) and t:item() or t, tol or 1e-5) end
local function mean(t) local s = 0 for _, v in ipairs(t) do s = s + v end return s / #t end

-- per-sample references (rows of y_true, y_pred)
local REF = {}
function REF.kl(yt, yp)
  local s = 0
  for i = 1, #yt do
    local t, p = math.min(max(yt[i], EPS), 1), math.min(max(yp[i], EPS), 1)
    s = s + t * log(t / p)
  end
  return s
end
function REF.cos(yt, yp)
  local a, b, d = 0, 0, 0
  for i = 1, #yt do a, b, d = a + yt[i] ^ 2, b + yp[i] ^ 2, d + yt[i] * yp[i] end
  return -d / (sqrt(max(a, 1e-12)) * sqrt(max(b, 1e-12)))
end
local function signed(yt, all01)
  local r = {}
  for i, v in ipairs(yt) do r[i] = all01 and 2 * v - 1 or v end
  return r
end
function REF.hinge(yt, yp, all01)
  local s = signed(yt, all01)
  local r = {}
  for i = 1, #yt do r[i] = max(1 - s[i] * yp[i], 0) end
  return mean(r)
end
function REF.sqhinge(yt, yp, all01)
  local s = signed(yt, all01)
  local r = {}
  for i = 1, #yt do r[i] = max(1 - s[i] * yp[i], 0) ^ 2 end
  return mean(r)
end
function REF.cathinge(yt, yp)
  local pos, neg = 0, -math.huge
  for i = 1, #yt do
    pos = pos + yt[i] * yp[i]
    neg = max(neg, (1 - yt[i]) * yp[i])
  end
  return max(neg - pos + 1, 0)
end
function REF.logcosh(yt, yp)
  local r = {}
  for i = 1, #yt do local x = yp[i] - yt[i]; r[i] = log((exp(x) + exp(-x)) / 2) end
  return mean(r)
end
function REF.poisson(yt, yp)
  local r = {}
  for i = 1, #yt do r[i] = yp[i] - yt[i] * log(yp[i] + EPS) end
  return mean(r)
end
function REF.msle(yt, yp)
  local r = {}
  for i = 1, #yt do r[i] = (log(max(yp[i], EPS) + 1) - log(max(yt[i], EPS) + 1)) ^ 2 end
  return mean(r)
end
function REF.mape(yt, yp)
  local r = {}
  for i = 1, #yt do r[i] = abs((yt[i] - yp[i]) / max(abs(yt[i]), EPS)) end
  return 100 * mean(r)
end
function REF.focal(yt, yp, o)
  o = o or {}
  local r = {}
  for i = 1, #yt do
    local t, p = yt[i], yp[i]
    if o.label_smoothing then t = t * (1 - o.label_smoothing) + 0.5 * o.label_smoothing end
    if o.from_logits then p = 1 / (1 + exp(-p)) end
    local c = math.min(max(p, EPS), 1 - EPS)
    local bce = -(t * log(c) + (1 - t) * log(1 - c))
    local pt = t * p + (1 - t) * (1 - p)
    local l = (1 - pt) ^ (o.gamma or 2) * bce
    if o.apply_class_balancing then
      local a = o.alpha or 0.25
      l = (t * a + (1 - t) * (1 - a)) * l
    end
    r[i] = l
  end
  return mean(r)
end

local YT = {{0.2, 0.3, 0.5}, {0.6, 0.1, 0.3}}
local YP = {{0.1, 0.6, 0.3}, {0.5, 0.25, 0.25}}
local function batch(ref, yt, yp, ...)
  local r = {}
  for i = 1, #yt do r[i] = ref(yt[i], yp[i], ...) end
  return r
end

describe("tf.keras.losses (issue 19)", function()
  local cases = {
    {"KLDivergence", REF.kl, YT, YP},
    {"CosineSimilarity", REF.cos, {{1.0, -2.0, 0.5}, {0.0, 3.0, 1.0}}, {{0.5, 1.0, -1.0}, {2.0, 1.0, 1.0}}},
    {"CategoricalHinge", REF.cathinge, {{0, 1, 0}, {1, 0, 0}}, {{0.3, 0.5, 0.9}, {2.0, -0.5, 0.1}}},
    {"LogCosh", REF.logcosh, {{1.0, 2.0, -1.0}, {0.0, 0.5, 3.0}}, {{1.5, 0.0, -1.2}, {2.0, 0.5, 1.0}}},
    {"Poisson", REF.poisson, {{1.0, 2.0, 0.0}, {3.0, 0.5, 1.0}}, {{1.5, 0.5, 0.2}, {2.0, 0.5, 4.0}}},
    {"MeanSquaredLogarithmicError", REF.msle, {{1.0, 2.0, 0.0}, {3.0, 0.5, 1.0}}, {{1.5, 0.5, -0.2}, {2.0, 0.5, 4.0}}},
    {"MeanAbsolutePercentageError", REF.mape, {{1.0, -2.0, 4.0}, {3.0, 0.5, 1.0}}, {{1.5, 0.5, 3.0}, {2.0, 0.5, 4.0}}},
  }
  for _, c in ipairs(cases) do
    local name, ref, yt, yp = c[1], c[2], c[3], c[4]
    it(name .. ": per-sample values, the three reductions and sample weights", function()
      local per = batch(ref, yt, yp)
      local l = L[name]{}
      near(mean(per), l(yt, yp))
      near(per[1] + per[2], L[name]{reduction = "sum"}(yt, yp))
      assert.tensor_near(per, L[name]{reduction = "none"}(yt, yp), {atol = 1e-5})
      near((per[1] * 2 + per[2] * 0.5) / 2, l(yt, yp, {2.0, 0.5}))
    end)
  end

  it("Hinge / SquaredHinge: 0/1 labels become -1/1, other labels are used as they are", function()
    local yt, yp = {{0, 1, 1}, {1, 0, 0}}, {{0.3, 0.8, -0.4}, {1.5, -2.0, 0.2}}
    near(mean(batch(REF.hinge, yt, yp, true)), L.Hinge{}(yt, yp))
    near(mean(batch(REF.sqhinge, yt, yp, true)), L.SquaredHinge{}(yt, yp))
    local ys = {{-1, 1, 1}, {1, -1, -1}}
    near(mean(batch(REF.hinge, ys, yp, false)), L.Hinge{}(ys, yp))
    near(mean(batch(REF.sqhinge, ys, yp, false)), L.SquaredHinge{}(ys, yp))
    -- the -1/1 form of the same labels gives the same loss
    near(L.Hinge{}(yt, yp):item(), L.Hinge{}(ys, yp))
  end)

  it("CosineSimilarity takes an axis (1-based)", function()
    local yt, yp = {{1.0, -2.0}, {0.5, 3.0}}, {{0.5, 1.0}, {2.0, 1.0}}
    local c1 = REF.cos({1.0, 0.5}, {0.5, 2.0})
    local c2 = REF.cos({-2.0, 3.0}, {1.0, 1.0})
    assert.tensor_near({c1, c2}, L.CosineSimilarity{axis = 1, reduction = "none"}(yt, yp), {atol = 1e-6})
    near(-1, L.CosineSimilarity{}({{1.0, 2.0}}, {{2.0, 4.0}}))
  end)

  it("BinaryFocalCrossentropy: gamma, alpha with apply_class_balancing, from_logits, label_smoothing", function()
    local yt, yp = {{1, 0, 1}, {0, 0, 1}}, {{0.9, 0.2, 0.4}, {0.6, 0.1, 0.7}}
    near(mean(batch(REF.focal, yt, yp)), L.BinaryFocalCrossentropy{}(yt, yp))
    local o = {gamma = 3.0, alpha = 0.4, apply_class_balancing = true}
    near(mean(batch(REF.focal, yt, yp, o)), L.BinaryFocalCrossentropy(o)(yt, yp))
    local logits = {{2.0, -1.0, 0.3}, {0.5, -3.0, 1.2}}
    o = {from_logits = true, label_smoothing = 0.1}
    near(mean(batch(REF.focal, yt, logits, o)), L.BinaryFocalCrossentropy(o)(yt, logits))
    -- gamma = 0 without balancing is plain binary cross-entropy
    near(L.BinaryCrossentropy{}(yt, yp):item(), L.BinaryFocalCrossentropy{gamma = 0}(yt, yp))
  end)

  it("string names and tf.keras.losses.get", function()
    local names = {kl_divergence = "KLDivergence", kld = "KLDivergence", cosine_similarity = "CosineSimilarity",
      hinge = "Hinge", squared_hinge = "SquaredHinge", categorical_hinge = "CategoricalHinge",
      log_cosh = "LogCosh", logcosh = "LogCosh", poisson = "Poisson", msle = "MeanSquaredLogarithmicError",
      mean_squared_logarithmic_error = "MeanSquaredLogarithmicError", mape = "MeanAbsolutePercentageError",
      mean_absolute_percentage_error = "MeanAbsolutePercentageError",
      binary_focal_crossentropy = "BinaryFocalCrossentropy", huber = "Huber", Poisson = "Poisson"}
    for n, cls in pairs(names) do
      assert.equal(L[cls], getmetatable(L.get(n)), n)
    end
    -- the functions
    assert.tensor_near(batch(REF.kl, YT, YP), L.kld(YT, YP), {atol = 1e-6})
    assert.tensor_near(batch(REF.mape, YT, YP), L.MAPE(YT, YP), {atol = 1e-3})
  end)

  it("get_config round-trips through from_config", function()
    local l = L.BinaryFocalCrossentropy{gamma = 1.5, alpha = 0.3, apply_class_balancing = true, reduction = "sum",
      name = "bfc"}
    local c = l:get_config()
    assert.same({name = "bfc", reduction = "sum", gamma = 1.5, alpha = 0.3, apply_class_balancing = true,
      from_logits = false, label_smoothing = 0}, c)
    local l2 = L.BinaryFocalCrossentropy:from_config(c)
    assert.same(c, l2:get_config())
    assert.same({name = "cosine_similarity", reduction = "sum_over_batch_size", axis = 2},
      L.CosineSimilarity{axis = 2}:get_config())
    assert.same({name = "huber_loss", reduction = "sum_over_batch_size", delta = 2},
      L.Huber{delta = 2}:get_config())
  end)

  it("work inside tf.fn (the same values as eagerly)", function()
    local yt, yp = tf.constant(YT), tf.constant(YP)
    local objs = {}
    for i, name in ipairs({"KLDivergence", "CosineSimilarity", "Hinge", "SquaredHinge", "CategoricalHinge",
                           "LogCosh", "Poisson", "MeanSquaredLogarithmicError", "MeanAbsolutePercentageError",
                           "BinaryFocalCrossentropy"}) do
      objs[i] = L[name]{}
    end
    local f = tf.fn(function(a, b)
      local r = {}
      for i, l in ipairs(objs) do r[i] = l(a, b) end
      return table.unpack(r)
    end)
    local traced = {f(yt, yp)}
    assert.equal(#objs, #traced)
    for i, l in ipairs(objs) do near(l(yt, yp):item(), traced[i], 1e-6) end
  end)

  it("bad options are errors naming the loss", function()
    assert.tf_error("TypeError", "Hinge: unknown option 'delta'", function() L.Hinge{delta = 1} end)
    assert.tf_error("ValueError", "LogCosh: invalid reduction 'mean'", function() L.LogCosh{reduction = "mean"} end)
    assert.tf_error("ValueError", "Could not interpret loss identifier: 'hinges'", function() L.get("hinges") end)
  end)
end)
