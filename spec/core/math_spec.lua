-- spec/core/math_spec.lua: the math ops of issue 12 (inverse trigonometric
-- and hyperbolic functions, erf/erfc, lgamma, digamma, polygamma, zeta,
-- is_inf, atan2, xlogy, xdivy, divide_no_nan, truncatediv/truncatemod,
-- cumprod, cumsum's options, log_sigmoid and the composed reductions)
-- against plain-Lua float64 recomputations and hand values.
local tf = require("tf")

local PI = math.pi
local EULER = 0.5772156649015329
local nan, inf = 0 / 0, math.huge

local function map(t, f)
  local r = {}
  for i, v in ipairs(t) do r[i] = f(v) end
  return r
end

local function log1p(x) return math.log(1 + x) end   -- only for moderate x below
local function cosh(x) return (math.exp(x) + math.exp(-x)) / 2 end
local function sinh(x) return (math.exp(x) - math.exp(-x)) / 2 end

local XS = {-0.9, -0.5, -0.1, 0.0, 0.3, 0.75, 0.95}
local BIG = {-3.0, -1.2, -0.2, 0.0, 0.4, 1.7, 2.5}
local GE1 = {1.0, 1.1, 1.5, 2.0, 4.0, 10.0}

describe("inverse trigonometric and hyperbolic functions", function()
  local cases = {
    {"acos", tf.acos, XS, math.acos},
    {"asin", tf.asin, XS, math.asin},
    {"atan", tf.atan, BIG, function(x) return math.atan(x) end},
    {"tan", tf.tan, BIG, math.tan},
    {"cosh", tf.cosh, BIG, cosh},
    {"sinh", tf.sinh, BIG, sinh},
    {"acosh", tf.acosh, GE1, function(x) return math.log(x + math.sqrt(x * x - 1)) end},
    {"asinh", tf.asinh, BIG, function(x)
      local a = math.abs(x)
      local r = math.log(a + math.sqrt(a * a + 1))
      return x < 0 and -r or r
    end},
    {"atanh", tf.atanh, XS, function(x) return 0.5 * (log1p(x) - log1p(-x)) end},
  }
  for _, c in ipairs(cases) do
    local name, fn, xs, ref = c[1], c[2], c[3], c[4]
    it(name .. " matches a float64 reference in float64 and float32", function()
      assert.tensor_near(map(xs, ref), fn(tf.constant(xs, tf.float64)), {atol = 1e-14, rtol = 1e-13})
      assert.tensor_near(map(xs, ref), fn(tf.constant(xs, tf.float32)), {atol = 1e-6, rtol = 1e-6})
    end)
    it(name .. " is tf.math." .. name .. " and a top-level alias, as in TensorFlow", function()
      assert.equal(fn, tf.math[name])
      assert.equal(fn, tf[name])
    end)
  end

  it("gives TensorFlow's values at the ends of the domains", function()
    assert.tensor_near({inf, -inf, nan, nan}, tf.atanh(tf.constant({1.0, -1.0, 2.0, -1.5}, tf.float64)))
    assert.tensor_near({0, nan}, tf.acosh(tf.constant({1.0, 0.5})))
    assert.tensor_near({0, PI, nan}, tf.acos(tf.constant({1.0, -1.0, 1.5}, tf.float64)), {atol = 1e-15})
    assert.tensor_near({PI / 2, -PI / 2}, tf.atan(tf.constant({inf, -inf}, tf.float64)), {atol = 1e-15})
    assert.tensor_near({inf, inf}, tf.cosh(tf.constant({1000.0, -1000.0})))
  end)

  it("refuses integer tensors with the dtypes it accepts", function()
    assert.tf_error("TypeError", "acos: 'x' has dtype int32, expected one of: float32, float64", tf.acos, {1, 0})
  end)
end)

describe("tf.atan2", function()
  it("gives the angle of (x, y), y first, over all four quadrants and broadcasts", function()
    local y = tf.constant({{1.0, 1.0, -1.0, -1.0}, {0.0, 0.0, 2.0, -0.5}}, tf.float64)
    local x = tf.constant({{1.0, -1.0, -1.0, 1.0}, {1.0, -1.0, 0.0, 0.0}}, tf.float64)
    assert.tensor_near({{PI / 4, 3 * PI / 4, -3 * PI / 4, -PI / 4}, {0, PI, PI / 2, -PI / 2}}, tf.atan2(y, x),
      {atol = 1e-15})
    assert.tensor_near({math.atan(2, 3), math.atan(-2, 3)}, tf.math.atan2(tf.constant({2.0, -2.0}), 3.0))
  end)
end)

describe("tf.math.erf and tf.math.erfc", function()
  it("match tabulated values", function()
    local x = tf.constant({-1.0, 0.0, 0.5, 1.0, 2.0, 3.5}, tf.float64)
    local erf = {-0.8427007929497149, 0.0, 0.5204998778130465, 0.8427007929497149, 0.9953222650189527,
                 0.9999992569016276}
    assert.tensor_near(erf, tf.math.erf(x), {atol = 1e-15, rtol = 1e-14})
    assert.tensor_near(map(erf, function(v) return 1 - v end), tf.math.erfc(x), {atol = 1e-15, rtol = 1e-12})
    -- erfc keeps its precision where 1 - erf would lose it
    assert.tensor_near({1.5374597944280349e-12}, tf.math.erfc(tf.constant({5.0}, tf.float64)), {rtol = 1e-13})
    assert.tensor_near({0.8427007929497149}, tf.math.erf(tf.constant({1.0})), {atol = 1e-7})
  end)
  it("live in tf.math only, as in TensorFlow", function()
    assert.is_nil(tf.erf)
    assert.is_nil(tf.lgamma)
    assert.is_nil(tf.xlogy)
    assert.is_nil(tf.cumprod)
    assert.is_function(tf.math.cumprod)
  end)
end)

describe("tf.math.lgamma, digamma and polygamma", function()
  it("lgamma matches log|Gamma| at known points", function()
    local x = tf.constant({0.5, 1.0, 2.0, 3.0, 10.0, -0.5, -1.5, 0.0}, tf.float64)
    local want = {math.log(math.sqrt(PI)), 0, 0, math.log(2), math.log(362880), math.log(2 * math.sqrt(PI)),
                  math.log(4 / 3 * math.sqrt(PI)), inf}
    assert.tensor_near(want, tf.math.lgamma(x), {atol = 1e-14, rtol = 1e-13})
    assert.tensor_near({math.log(math.sqrt(PI))}, tf.math.lgamma(tf.constant({0.5})), {atol = 1e-6})
  end)
  it("digamma matches known values, with NaN at the poles", function()
    local x = tf.constant({1.0, 0.5, 2.0, 10.0, -0.5, 1e-8, 0.0, -2.0}, tf.float64)
    local h9 = 0
    for k = 1, 9 do h9 = h9 + 1 / k end
    local want = {-EULER, -EULER - 2 * math.log(2), 1 - EULER, h9 - EULER, 0.03648997397857652,
                  -1e8 - EULER, nan, nan}
    assert.tensor_near(want, tf.math.digamma(x), {atol = 1e-13, rtol = 1e-13})
    assert.tensor_near({-EULER}, tf.math.digamma(tf.constant({1.0})), {atol = 1e-6})
  end)
  it("digamma stays accurate next to the negative poles (plain-Lua recurrence and series)", function()
    local function psi(x)
      local r = 0
      while x < 20 do r = r - 1 / x; x = x + 1 end
      local f = 1 / (x * x)
      return r + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))
    end
    local xs = {-3 + 1e-9, -3 - 1e-9, -10.0000001, -0.999999, -1.5, -25.3, -1e-300, -7.25}
    assert.tensor_near(map(xs, psi), tf.math.digamma(tf.constant(xs, tf.float64)), {atol = 0, rtol = 1e-13})
  end)
  it("polygamma(n, x): order 0 is digamma, then (-1)^(n+1) n! zeta(n+1, x); other orders are NaN", function()
    local a = tf.constant({0.0, 1.0, 1.0, 2.0, 3.0, 1.0, 1.5, -1.0}, tf.float64)
    local x = tf.constant({1.0, 1.0, 0.5, 1.0, 1.0, -0.5, 1.0, 1.0}, tf.float64)
    local want = {-EULER, PI ^ 2 / 6, PI ^ 2 / 2, -2.4041138063191885, PI ^ 4 / 15, PI ^ 2 / 2 + 4, nan, nan}
    assert.tensor_near(want, tf.math.polygamma(a, x), {atol = 1e-13, rtol = 1e-13})
  end)
  it("zeta(x, q) is Hurwitz's zeta: NaN below 1, inf at 1 and at the poles", function()
    local x = tf.constant({2.0, 4.0, 2.0, 3.0, 0.5, 1.0, 2.0}, tf.float64)
    local q = tf.constant({1.0, 1.0, 2.0, 0.5, 1.0, 1.0, -1.0}, tf.float64)
    local want = {PI ^ 2 / 6, PI ^ 4 / 90, PI ^ 2 / 6 - 1, 7 * 1.2020569031595942, nan, inf, inf}
    assert.tensor_near(want, tf.math.zeta(x, q), {atol = 1e-13, rtol = 1e-13})
  end)
  it("zeta and polygamma at the poles q = 0, -1, -2, ...: inf for an even integer x, NaN otherwise (Eigen)", function()
    -- Eigen's zeta_impl (TensorFlow's kernel): q <= 0 an integer -> x even integer ? inf : NaN
    local x = tf.constant({2.0, 3.0, 4.0, 2.5, 5.0, 1.0, 0.5}, tf.float64)
    local q = tf.constant({0.0, 0.0, -2.0, -1.0, -3.0, -1.0, 0.0}, tf.float64)
    local z = tf.math.zeta(x, q):totable()
    assert.equal(inf, z[1]); assert.equal(inf, z[3])
    for _, i in ipairs({2, 4, 5}) do assert.is_true(z[i] ~= z[i], "zeta at pole " .. i) end
    assert.equal(inf, z[6])                    -- x == 1 comes first: inf
    assert.is_true(z[7] ~= z[7])               -- x < 1: NaN
    -- polygamma(n, pole) = (-1)^(n+1) n! zeta(n + 1, pole): odd n -> +inf, even n >= 2 -> NaN
    local p = tf.math.polygamma(tf.constant({1.0, 2.0, 3.0, 4.0}, tf.float32),
                                tf.constant({0.0, -1.0, -4.0, 0.0}, tf.float32)):totable()
    assert.equal(inf, p[1]); assert.equal(inf, p[3])
    assert.is_true(p[2] ~= p[2]); assert.is_true(p[4] ~= p[4])
  end)
  it("zeta(x, q) for q far below 0 is NaN at once, not a sum of millions of terms (libFuzzer hang)", function()
    -- zeta(2, -1.5) = sum over k of (k - 1.5)^-2 = 1/2.25 + 1/0.25 + zeta(2, 0.5) = 4.444... + pi^2 / 2
    local got = tf.math.zeta(tf.constant({2.0, 2.0, 2.0}, tf.float64), tf.constant({-1.5, -3e6 + 0.5, -1e300 - 0.5}, tf.float64))
    local v = got:totable()
    assert.near(1 / 2.25 + 4 + PI ^ 2 / 2, v[1], 1e-12)
    assert.is_true(v[2] ~= v[2])
    assert.equal(inf, v[3])   -- -1e300 is an integer: a pole
  end)
  it("lgamma's gradient is digamma and digamma's is polygamma(1, x), as TensorFlow", function()
    local x = tf.constant({0.5, 1.0, 3.0}, tf.float64)
    local tape = tf.GradientTape({persistent = true})
    tape:watch(x)
    local l = tape:record(function() return tf.math.lgamma(x) end)
    local d = tape:record(function() return tf.math.digamma(x) end)
    assert.tensor_near({-EULER - 2 * math.log(2), -EULER, 1.5 - EULER}, tape:gradient(l, x), {atol = 1e-13})
    assert.tensor_near({PI ^ 2 / 2, PI ^ 2 / 6, PI ^ 2 / 6 - 1.25}, tape:gradient(d, x), {atol = 1e-12})
  end)
end)

describe("tf.math.is_inf", function()
  it("flags +-inf only, in float32 and float64", function()
    local v = {inf, -inf, nan, 1.0, 0.0, 3.4e38}
    assert.same({true, true, false, false, false, false}, tf.math.is_inf(tf.constant(v)):totable())
    assert.same({true, true, false, false, false, false}, tf.math.is_inf(tf.constant(v, tf.float64)):totable())
    assert.equal(tf.bool, tf.math.is_inf(tf.constant({1.0})).dtype)
  end)
  it("stores true as 1 for -inf too (counts and casts see 1)", function()
    local r = tf.math.is_inf(tf.constant({-inf, inf, 1.0}))
    assert.same({1, 1, 0}, tf.cast(r, tf.int32):totable())
    assert.same({1, 1, 0}, tf.cast(tf.math.is_inf(tf.constant({-inf, inf, 1.0}, tf.float64)), tf.uint8):totable())
  end)
  it("refuses integers (as is_nan and is_finite)", function()
    assert.tf_error("TypeError", "is_inf: 'x' has dtype int32", tf.math.is_inf, {1})
  end)
end)

describe("tf.math.xlogy, xdivy and divide_no_nan", function()
  it("xlogy is 0 where x is 0 (even at y = 0), else x log y", function()
    local x = tf.constant({0.0, 0.0, 2.0, -1.5, 3.0}, tf.float64)
    local y = tf.constant({0.0, 5.0, 3.0, 0.5, 0.0}, tf.float64)
    assert.tensor_near({0, 0, 2 * math.log(3), -1.5 * math.log(0.5), -inf}, tf.math.xlogy(x, y))
  end)
  it("xdivy is 0 where x is 0, else x / y", function()
    assert.tensor_near({0, 0, 2 / 3, inf},
      tf.math.xdivy(tf.constant({0.0, 0.0, 2.0, 1.0}), tf.constant({0.0, 4.0, 3.0, 0.0})))
  end)
  it("divide_no_nan is 0 where y is 0, else x / y, broadcasting", function()
    local r = tf.math.divide_no_nan(tf.constant({{1.0, 0.0}, {6.0, -2.0}}), tf.constant({0.0, 4.0}))
    assert.tensor_near({{0, 0}, {0, -0.5}}, r)
    assert.tensor_near({0, 2}, tf.math.divide_no_nan(tf.constant({inf, 6.0}), tf.constant({0.0, 3.0})))
  end)
  it("give gradient 0 where they are defined as 0 (TensorFlow's gradients)", function()
    local x = tf.constant({0.0, 2.0}, tf.float64)
    local y = tf.constant({0.0, 4.0}, tf.float64)
    local tape = tf.GradientTape({persistent = true})
    tape:watch(x)
    tape:watch(y)
    local d = tape:record(function() return tf.math.divide_no_nan(x, y) end)
    local g = tape:gradient(d, {x, y})
    assert.tensor_near({0, 0.25}, g[1])
    assert.tensor_near({0, -2 / 16}, g[2])
    local xl = tape:record(function() return tf.math.xlogy(x, y + 1) end)
    g = tape:gradient(xl, {x, y})
    assert.tensor_near({0, math.log(5)}, g[1])   -- xlogy(x != 0, y): 0 at x = 0
    assert.tensor_near({0, 2 / 5}, g[2])
  end)
  it("refuse integer tensors", function()
    assert.tf_error("TypeError", "divide_no_nan: 'x' has dtype int32", tf.math.divide_no_nan, {1}, {0})
  end)
end)

describe("tf.truncatediv and tf.truncatemod", function()
  it("round toward zero on integers, C's / and %", function()
    local x, y = tf.constant({-7, 7, -7, 7, 0}), tf.constant({2, -2, -2, 2, 5})
    assert.same({-3, -3, 3, 3, 0}, tf.truncatediv(x, y):totable())
    assert.same({-1, 1, -1, 1, 0}, tf.truncatemod(x, y):totable())
    assert.same({-3, -3, 3, 3, 0}, tf.math.truncatediv(tf.cast(x, tf.int64), tf.cast(y, tf.int64)):totable())
    assert.same({2, 1}, tf.truncatediv(tf.constant({7, 9}, tf.uint8), tf.constant({3, 5}, tf.uint8)):totable())
  end)
  it("wraps the most negative integer over -1, as TensorFlow's kernels", function()
    assert.same({-2147483648}, tf.truncatediv(tf.constant({-2147483648}), -1):totable())
    assert.same({0}, tf.truncatemod(tf.constant({-2147483648}), -1):totable())
  end)
  it("round toward zero on floats (trunc(x / y), fmod)", function()
    local x, y = tf.constant({-7.5, 7.5, 5.0}, tf.float64), tf.constant({2.0, -2.0, 0.0}, tf.float64)
    assert.tensor_near({-3, -3, inf}, tf.truncatediv(x, y))
    assert.tensor_near({-1.5, 1.5, nan}, tf.truncatemod(x, y))
  end)
  it("refuse an integer zero divisor, eagerly and fused", function()
    assert.tf_error("InvalidArgumentError", "truncatediv: integer division by zero", tf.truncatediv, {1, 2}, {1, 0})
    assert.tf_error("InvalidArgumentError", "truncatemod: integer division by zero", tf.truncatemod, {1, 2}, {1, 0})
    local f = tf.fn(function(a, b) return tf.truncatediv(a * 2, b) + 1 end)
    assert.same({4, 5}, f(tf.constant({3, 4}), tf.constant({2, 2})):totable())
    assert.tf_error("InvalidArgumentError", "truncatediv: integer division by zero", f, tf.constant({3, 4}),
      tf.constant({2, 0}))
  end)
end)

describe("tf.math.cumprod and tf.math.cumsum", function()
  -- plain-Lua scans along axis 2 of a 2-D table
  local function scan(rows, op, init, exclusive, reverse)
    local out = {}
    for i, row in ipairs(rows) do
      local n, acc, r = #row, init, {}
      for k = 1, n do
        local j = reverse and n + 1 - k or k
        if exclusive then r[j] = acc; acc = op(acc, row[j]) else acc = op(acc, row[j]); r[j] = acc end
      end
      out[i] = r
    end
    return out
  end
  local rows = {{1.5, -2.0, 3.0, 0.5}, {2.0, 0.0, -1.0, 4.0}, {-0.5, 1.0, 2.0, 2.5}}
  local mul = function(a, b) return a * b end
  local add = function(a, b) return a + b end
  for _, flags in ipairs({{false, false}, {true, false}, {false, true}, {true, true}}) do
    local ex, rev = flags[1], flags[2]
    it(("cumprod and cumsum with exclusive=%s, reverse=%s match a Lua scan"):format(ex, rev), function()
      local x = tf.constant(rows, tf.float64)
      assert.tensor_near(scan(rows, mul, 1, ex, rev), tf.math.cumprod(x, 2, {exclusive = ex, reverse = rev}))
      assert.tensor_near(scan(rows, add, 0, ex, rev), tf.math.cumsum(x, -1, ex, rev))
      -- along the first axis: the transposed problem
      local t = tf.transpose(x)
      assert.tensor_near(tf.transpose(tf.constant(scan(rows, mul, 1, ex, rev), tf.float64)),
        tf.math.cumprod(t, 1, {exclusive = ex, reverse = rev}))
    end)
  end
  it("defaults to the first axis and works on integers (wrapping)", function()
    assert.same({{1, 2}, {3, 8}}, tf.math.cumprod(tf.constant({{1, 2}, {3, 4}})):totable())
    assert.same({65536, 0}, tf.math.cumprod(tf.constant({65536, 65536})):totable())
    assert.same({1, 3, 9}, tf.math.cumprod(tf.constant({3, 3, 3}, tf.int64), {exclusive = true}):totable())
  end)
  it("runs traced with unknown dims", function()
    local f = tf.fn(function(x) return tf.math.cumprod(x, 2, {reverse = true}) end,
      {input_signature = {tf.TensorSpec({-1, -1}, tf.float64)}})
    assert.tensor_near(scan(rows, mul, 1, false, true), f(tf.constant(rows, tf.float64)))
  end)
  it("refuses bool and names the axis 1-based", function()
    assert.tf_error("TypeError", "cumprod: 'x' has dtype bool", tf.math.cumprod, tf.constant({true}))
    assert.tf_error("InvalidArgumentError", "cumprod", tf.math.cumprod, tf.constant({1, 2}), 2)
  end)
  it("has TensorFlow's gradient: cumsum of y * g the other way, over x", function()
    local x = tf.constant({2.0, 3.0, 4.0}, tf.float64)
    local tape = tf.GradientTape()
    tape:watch(x)
    local y = tape:record(function() return tf.reduce_sum(tf.math.cumprod(x)) end)
    -- y = a + ab + abc: dy/da = 1 + b + bc, dy/db = a + ac, dy/dc = ab
    assert.tensor_near({1 + 3 + 12, 2 + 8, 6}, tape:gradient(y, x))
  end)
end)

describe("tf.math.log_sigmoid", function()
  it("is log(sigmoid(x)) without overflow", function()
    local x = {-1000.0, -20.0, -1.0, 0.0, 1.0, 30.0, 1000.0}
    local want = map(x, function(v)
      if v < -50 then return v end
      return -math.log(1 + math.exp(-v))
    end)
    assert.tensor_near(want, tf.math.log_sigmoid(tf.constant(x, tf.float64)), {atol = 1e-13, rtol = 1e-13})
    assert.tensor_near(want, tf.math.log_sigmoid(tf.constant(x)), {atol = 1e-6, rtol = 1e-6})
  end)
end)

describe("composed reductions", function()
  local rows = {{1.0, 2.0, 3.0}, {4.0, -5.0, 1000.0}}
  local function lse(t)
    local m = -inf
    for _, v in ipairs(t) do if v > m then m = v end end
    local s = 0
    for _, v in ipairs(t) do s = s + math.exp(v - m) end
    return m + math.log(s)
  end
  local function var(t)
    local m = 0
    for _, v in ipairs(t) do m = m + v end
    m = m / #t
    local s = 0
    for _, v in ipairs(t) do s = s + (v - m) ^ 2 end
    return s / #t
  end

  it("reduce_logsumexp is stable for large values, over rows, columns and everything", function()
    local x = tf.constant(rows, tf.float64)
    assert.tensor_near({lse(rows[1]), lse(rows[2])}, tf.reduce_logsumexp(x, 2), {rtol = 1e-14})
    assert.tensor_near({{lse({1, 4}), lse({2, -5}), lse({3, 1000})}}, tf.math.reduce_logsumexp(x, 1, true))
    assert.tensor_near(lse({1, 2, 3, 4, -5, 1000}), tf.reduce_logsumexp(x))
    assert.tensor_near({lse(rows[1]), 1000}, tf.reduce_logsumexp(tf.constant(rows), {axis = -1}), {rtol = 1e-6})
  end)
  it("reduce_logsumexp handles -inf rows and empty reductions (-inf), as TensorFlow", function()
    local x = tf.constant({{-inf, -inf}, {-inf, 0.0}}, tf.float64)
    assert.tensor_near({-inf, 0}, tf.reduce_logsumexp(x, 2))
    assert.tensor_near({-inf, -inf, -inf}, tf.reduce_logsumexp(tf.zeros({0, 3}), 1))
  end)
  it("reduce_logsumexp's gradient is softmax", function()
    local x = tf.constant({1.0, 2.0, 1000.0}, tf.float64)
    local tape = tf.GradientTape()
    tape:watch(x)
    local g = tape:gradient(tape:record(function() return tf.reduce_logsumexp(x) end), x)
    assert.tensor_near({0, 0, 1}, g, {atol = 1e-300})
  end)
  it("reduce_variance and reduce_std divide by N", function()
    local x = tf.constant(rows, tf.float64)
    assert.tensor_near({var(rows[1]), var(rows[2])}, tf.math.reduce_variance(x, 2), {rtol = 1e-14})
    assert.tensor_near({{math.sqrt(var({1, 4})), math.sqrt(var({2, -5})), math.sqrt(var({3, 1000}))}},
      tf.math.reduce_std(x, {axis = 1, keepdims = true}), {rtol = 1e-14})
    assert.tensor_near(math.sqrt(var({1, 2, 3, 4, -5, 1000})), tf.math.reduce_std(x))
    assert.tensor_near(0, tf.math.reduce_variance(tf.constant({3.0, 3.0, 3.0})))
  end)
  it("reduce_euclidean_norm takes floats and integers", function()
    assert.tensor_near({5, 13}, tf.math.reduce_euclidean_norm(tf.constant({{3.0, 4.0}, {5.0, 12.0}}, tf.float64), 2))
    assert.same({5, 13}, tf.math.reduce_euclidean_norm(tf.constant({{3, 4}, {5, 12}}), -1):totable())
    assert.equal(tf.int32, tf.math.reduce_euclidean_norm(tf.constant({1, 1})).dtype)
  end)
  it("run traced with unknown dims and unknown rank", function()
    local f = tf.fn(function(x)
      return tf.reduce_logsumexp(x, 2), tf.math.reduce_std(x, 1), tf.math.reduce_variance(x)
    end, {input_signature = {tf.TensorSpec({-1, -1}, tf.float64)}})
    local a, b, c = f(tf.constant(rows, tf.float64))
    assert.tensor_near({lse(rows[1]), lse(rows[2])}, a)
    assert.tensor_near({1.5, 3.5, 498.5}, b)
    assert.tensor_near(var({1, 2, 3, 4, -5, 1000}), c)
    local g = tf.fn(function(x) return tf.reduce_logsumexp(x) end, {input_signature = {tf.TensorSpec(nil, tf.float64)}})
    assert.tensor_near(lse({1, 2, 3, 4, -5, 1000}), g(tf.constant(rows, tf.float64)))
  end)
  it("refuse integer inputs where TensorFlow does, and unknown options", function()
    assert.tf_error("TypeError", "reduce_logsumexp: 'input_tensor' has dtype int32, expected one of: float32, float64",
      tf.reduce_logsumexp, {1, 2})
    assert.tf_error("TypeError", "reduce_variance: 'input_tensor' has dtype int32", tf.math.reduce_variance, {1, 2})
    assert.tf_error("TypeError", "reduce_std: unknown option 'axes' (accepted: axis, keepdims, name)",
      tf.math.reduce_std, {1.0}, {axes = 1})
    assert.tf_error("TypeError", "reduce_std: got multiple values for argument 'axis'",
      tf.math.reduce_std, {1.0}, 1, {axis = 1})
    assert.tf_error("InvalidArgumentError", "reduce_logsumexp: 'axis' is 0, but axes are 1-based",
      tf.reduce_logsumexp, {1.0}, 0)
    assert.tf_error("InvalidArgumentError", "reduce_std: 'axis' is 0, but axes are 1-based",
      tf.math.reduce_std, {{1.0}}, {1, 0})
    assert.tf_error("TypeError", "reduce_variance: 'axis' expected integer or table of integers, got string",
      tf.math.reduce_variance, {1.0}, {axis = "x"})
    assert.tf_error("InvalidArgumentError",
      "reduce_euclidean_norm: 'axis' 3 is out of range for rank 1 (expected 1..1 or -1..-1)",
      tf.math.reduce_euclidean_norm, {1.0}, 3)
  end)
end)

describe("the new binary ops inside tf.fn", function()
  it("give the eager results with unknown dims and broadcasting", function()
    local a = tf.constant({{0.5, 2.0, 1.0}, {0.0, 3.0, 1.0}}, tf.float64)
    local b = tf.constant({1.5, 0.0, 2.5}, tf.float64)
    local sig = {input_signature = {tf.TensorSpec({-1, -1}, tf.float64), tf.TensorSpec({-1}, tf.float64)}}
    for _, fn in ipairs({tf.atan2, tf.math.xlogy, tf.math.xdivy, tf.math.divide_no_nan, tf.truncatediv,
                         tf.truncatemod, tf.math.polygamma, tf.math.zeta}) do
      local f = tf.fn(function(x, y) return fn(x, y + 1) end, sig)
      assert.tensor_near(fn(a, b + 1), f(a, b), {atol = 0, rtol = 0})
    end
  end)
  it("refuse mixed dtypes with a TypeError naming both", function()
    assert.tf_error("TypeError", "atan2: x and y must have the same dtype, got x: float32 and y: float64",
      tf.atan2, tf.constant({1.0}), tf.constant({1.0}, tf.float64))
    assert.tf_error("TypeError", "truncatediv: x and y must have the same dtype, got x: int32 and y: float32",
      tf.truncatediv, tf.constant({1}), tf.constant({1.0}))
  end)
  it("differentiate inside tf.fn (the gradient is part of the graph)", function()
    local f = tf.fn(function(x)
      local tape = tf.GradientTape()
      tape:watch(x)
      local y = tape:record(function() return tf.reduce_sum(tf.math.lgamma(x) + tf.math.erf(x)) end)
      return tape:gradient(y, x)
    end, {input_signature = {tf.TensorSpec({-1}, tf.float64)}})
    local g = f(tf.constant({1.0, 2.0}, tf.float64))
    local c = 2 / math.sqrt(PI)
    assert.tensor_near({-EULER + c * math.exp(-1), 1 - EULER + c * math.exp(-4)}, g, {atol = 1e-13})
  end)
end)

describe("the new unary ops inside tf.fn", function()
  it("give the eager results with unknown dims", function()
    local xs = tf.constant({{0.3, 0.6}, {0.9, 0.2}}, tf.float64)
    for _, name in ipairs({"acos", "asin", "atan", "atanh", "cosh", "sinh", "tan", "asinh", "erf", "erfc",
                           "lgamma", "digamma", "is_inf"}) do
      local fn = tf.math[name]
      local f = tf.fn(function(x) return fn(x) end, {input_signature = {tf.TensorSpec({-1, -1}, tf.float64)}})
      assert.tensor_near(fn(xs), f(xs), {atol = 0, rtol = 0})
    end
    local f = tf.fn(function(x) return tf.acosh(x + 1) end, {input_signature = {tf.TensorSpec({-1, 2}, tf.float64)}})
    assert.tensor_near(tf.acosh(xs + 1), f(xs), {atol = 0, rtol = 0})
  end)
end)
