-- Gradient-check cases for the elementwise family (see harness.lua).
-- Broadcasting cases undo broadcasting in the gradient (sums over axes).
local S = {{2, 3}}
local function un(fn, gen) return {inputs = {{{2, 3}, gen}}, fn = fn} end
local function bin(fn, ga, gb, sa, sb)
  return {inputs = {{sa or {2, 3}, ga}, {sb or {2, 3}, gb}}, fn = fn}
end

return {
  cases = {
    negative = un(function(tf, x) return -x end),
    abs = un(function(tf, x) return tf.abs(x) end, "nonzero"),
    exp = un(function(tf, x) return tf.exp(x) end),
    log = un(function(tf, x) return tf.log(x) end, "positive"),
    log1p = un(function(tf, x) return tf.math.log1p(x) end, "positive"),
    expm1 = un(function(tf, x) return tf.math.expm1(x) end),
    sqrt = un(function(tf, x) return tf.sqrt(x) end, "positive"),
    rsqrt = un(function(tf, x) return tf.math.rsqrt(x) end, "positive"),
    square = un(function(tf, x) return tf.square(x) end),
    reciprocal = un(function(tf, x) return tf.math.reciprocal(x) end, "nonzero"),
    tanh = un(function(tf, x) return tf.tanh(x) end),
    sigmoid = un(function(tf, x) return tf.sigmoid(x) end),
    relu = un(function(tf, x) return tf.nn.relu(x) end, "nonzero"),
    softplus = un(function(tf, x) return tf.math.softplus(x) end),
    sin = un(function(tf, x) return tf.sin(x) end),
    cos = un(function(tf, x) return tf.cos(x) end),
    sign = un(function(tf, x) return tf.sign(x) * 3 + x end, "nonzero"),
    floor = un(function(tf, x) return tf.floor(x) + x end, function(i) return i + 0.25 end),
    ceil = un(function(tf, x) return tf.math.ceil(x) + x end, function(i) return i + 0.25 end),
    round = un(function(tf, x) return tf.round(x) + x end, function(i) return i + 0.25 end),
    identity = un(function(tf, x) return tf.identity(x) * 2 end),
    -- through float32: a wider step keeps float32 rounding out of the difference
    cast = {inputs = {{{2, 3}}}, fn = function(tf, x) return tf.cast(tf.cast(x, tf.float32), tf.float64) end,
            h = 1e-2, atol = 1e-4},
    -- casts between any two float dtypes carry the gradient back to the input's dtype (TensorFlow's
    -- _CastGrad): half types one way and back, and half <-> float32 (a Keras float16 layer's loss).
    -- The step is wide against the half types' rounding (2^-10 resp. 2^-7 relative)
    cast_float16 = {inputs = {{{2, 3}}}, h = 0.25, atol = 1e-2,
                    fn = function(tf, x) return tf.cast(tf.cast(x, tf.float16), tf.float64) end},
    cast_bfloat16 = {inputs = {{{2, 3}}}, h = 0.5, atol = 2e-2,
                     fn = function(tf, x) return tf.cast(tf.cast(x, tf.bfloat16), tf.float64) end},
    cast_float16_float32 = {inputs = {{{2, 3}}}, h = 0.25, atol = 1e-2, fn = function(tf, x)
      return tf.cast(tf.cast(tf.cast(tf.cast(x, tf.float32), tf.float16), tf.float32), tf.float64) end},
    cast_bfloat16_float32 = {inputs = {{{2, 3}}}, h = 0.5, atol = 2e-2, fn = function(tf, x)
      return tf.cast(tf.cast(tf.cast(tf.cast(x, tf.float32), tf.bfloat16), tf.float32), tf.float64) end},
    cast_float16_bfloat16 = {inputs = {{{2, 3}}}, h = 0.5, atol = 2e-2, fn = function(tf, x)
      return tf.cast(tf.cast(tf.cast(x, tf.float16), tf.bfloat16), tf.float64) end},
    check_numerics = un(function(tf, x) return tf.debugging.check_numerics(x, "m") * x end),
    add = bin(function(tf, a, b) return a + b end),
    add_broadcast = bin(function(tf, a, b) return a + b end, nil, nil, {2, 3}, {3}),
    add_broadcast_column = bin(function(tf, a, b) return a + b end, nil, nil, {2, 1}, {1, 3}),
    subtract = bin(function(tf, a, b) return a - b end, nil, nil, {3}, {2, 3}),
    multiply = bin(function(tf, a, b) return a * b end, nil, nil, {2, 3}, {2, 1}),
    divide = bin(function(tf, a, b) return a / b end, nil, "nonzero", {2, 3}, {3}),
    floormod = bin(function(tf, a, b) return tf.math.floormod(a, b) end,
      function(i) return i + 0.3 end, function() return 7.5 end),
    pow = bin(function(tf, a, b) return tf.pow(a, b) end, "positive", "any"),
    maximum = bin(function(tf, a, b) return tf.maximum(a, b) end, function(i) return i end, function(i) return 3.5 - i end),
    minimum = bin(function(tf, a, b) return tf.minimum(a, b) end, function(i) return i end, function(i) return 3.5 - i end),
    squared_difference = bin(function(tf, a, b) return tf.math.squared_difference(a, b) end, nil, nil, {2, 3}, {3}),
    -- relu's backward op, reached through an inner tape: linear in g, flat in x
    relu_grad = {inputs = {{{2, 3}, "nonzero"}, {{2, 3}}}, fn = function(tf, x, g)
      local t = tf.GradientTape()
      t:watch(x)
      local y = t:record(function() return tf.nn.relu(x) end)
      return t:gradient(y, x, {output_gradients = g})
    end},
    -- tanh's and sigmoid's backward ops, through an inner tape: second order in x and in g
    tanh_grad = {inputs = {{{2, 3}}, {{2, 3}}}, fn = function(tf, x, g)
      local t = tf.GradientTape()
      t:watch(x)
      local y = t:record(function() return tf.tanh(x) end)
      return t:gradient(y, x, {output_gradients = g})
    end},
    sigmoid_grad = {inputs = {{{2, 3}}, {{2, 3}}}, fn = function(tf, x, g)
      local t = tf.GradientTape()
      t:watch(x)
      local y = t:record(function() return tf.sigmoid(x) end)
      return t:gradient(y, x, {output_gradients = g})
    end},
    acos = un(function(tf, x) return tf.acos(x) end, "unit"),
    asin = un(function(tf, x) return tf.math.asin(x) end, "unit"),
    acosh = un(function(tf, x) return tf.acosh(x) end, function(i) return 1.1 + 0.3 * i end),
    asinh = un(function(tf, x) return tf.asinh(x) end),
    atan = un(function(tf, x) return tf.atan(x) end),
    atanh = un(function(tf, x) return tf.math.atanh(x) end, "unit"),
    cosh = un(function(tf, x) return tf.cosh(x) end),
    sinh = un(function(tf, x) return tf.sinh(x) end),
    tan = un(function(tf, x) return tf.tan(x) end, "unit"),
    erf = un(function(tf, x) return tf.math.erf(x) end),
    erfc = un(function(tf, x) return tf.math.erfc(x) end),
    lgamma = un(function(tf, x) return tf.math.lgamma(x) end, "positive"),
    lgamma_negative = un(function(tf, x) return tf.math.lgamma(x) end, function(i) return -(0.37 * i + 0.1) end),
    digamma = un(function(tf, x) return tf.math.digamma(x) end, "positive"),
    digamma_negative = un(function(tf, x) return tf.math.digamma(x) end, function(i) return -(0.37 * i + 0.1) end),
    -- digamma's gradient is polygamma(1, x): differentiating it again reaches polygamma(2, x)
    digamma_second_order = un(function(tf, x)
      local t = tf.GradientTape()
      t:watch(x)
      local y = t:record(function() return tf.math.digamma(x) end)
      return t:gradient(y, x)
    end, "positive"),
    -- orders 0, 1, 2 against x; no gradient for the order (as TensorFlow)
    polygamma = {inputs = {{{2, 3}, function(i) return (i - 1) % 3 end}, {{2, 3}, "positive"}},
                 fn = function(tf, a, x) return tf.math.polygamma(a, x) end, wrt = {2}},
    zeta = {inputs = {{{2, 3}, function(i) return 2 + (i - 1) % 3 end}, {{3}, "positive"}},
            fn = function(tf, x, q) return tf.math.zeta(x, q) end, wrt = {2}},
    atan2 = bin(function(tf, y, x) return tf.atan2(y, x) end, "nonzero", "nonzero", {2, 3}, {3}),
    xlogy = bin(function(tf, x, y) return tf.math.xlogy(x, y) end, "nonzero", "positive", {2, 3}, {3}),
    xdivy = bin(function(tf, x, y) return tf.math.xdivy(x, y) end, "nonzero", "nonzero", {2, 1}, {2, 3}),
    divide_no_nan = bin(function(tf, x, y) return tf.math.divide_no_nan(x, y) end, nil, "nonzero", {2, 3}, {3}),
    truncatemod = bin(function(tf, a, b) return tf.truncatemod(a, b) end,
      function(i) return (i % 2 == 0 and -1 or 1) * (i + 0.3) end, function() return 2.5 end),
    log_sigmoid = un(function(tf, x) return tf.math.log_sigmoid(x) end),
    where = {inputs = {{{2, 3}}, {{2, 3}}}, fn = function(tf, a, b)
      return tf.where(tf.constant({{true, false, true}, {false, true, false}}), a, b) end},
  },
  -- ops of this family through which no gradient flows
  nondifferentiable = {
    "floordiv", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "left_shift", "right_shift", "invert", "is_nan", "is_finite",
    "stop_gradient", "string_join", "zeros_like", "ones_like", "is_inf", "truncatediv",
  },
}
