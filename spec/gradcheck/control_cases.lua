-- Gradient-check cases for the control family: print has no outputs; cond
-- and while nodes exist inside traced functions, so each case calls a
-- tf.fn (made once) and the harness's tape differentiates through it.
local fns = {}
local function traced(tf, key, f)
  fns[key] = fns[key] or tf.fn(f)
  return fns[key]
end

local function one(shape, fn, gen) return {inputs = {{shape, gen}}, fn = fn} end
local function two(sa, sb, fn) return {inputs = {{sa}, {sb}}, fn = fn} end

return {
  cases = {
    cond = one({3}, function(tf, x)
      return traced(tf, "cond", function(v)
        return tf.cond(tf.greater(tf.reduce_sum(v), 0), function() return v * v end, function() return tf.sin(v) end)
      end)(x)
    end, "positive"),
    cond_false_branch = one({3}, function(tf, x)
      return traced(tf, "cond_false", function(v)
        return tf.cond(tf.greater(tf.reduce_sum(v), 100), function() return v * v end, function() return tf.sin(v) * v end)
      end)(x)
    end),
    cond_captures = two({2}, {2}, function(tf, a, b)   -- both branches read outer tensors
      return traced(tf, "cond_captures", function(x, y)
        local r = tf.cond(tf.less(tf.reduce_sum(x), tf.reduce_sum(y)),
                          function() return {x * y, y} end, function() return {x + y, x * x} end)
        return r[1] + r[2] * 2
      end)(a, b)
    end),
    ["while"] = one({2}, function(tf, x)                  -- v <- v * v + x, 3 times
      return traced(tf, "while", function(v)
        return tf.while_loop(function(i, _) return tf.less(i, 3) end,
                             function(i, s) return {i + 1, s * s * 0.5 + v} end, {tf.constant(0), v})[2]
      end)(x)
    end),
    while_two_vars = two({2}, {}, function(tf, a, w)      -- data-dependent trip count
      return traced(tf, "while_two", function(x, y)
        local r = tf.while_loop(function(s, p) return tf.less(tf.reduce_sum(p), 50) end,
                                function(s, p) return {s + p * y, p * 2.0 + 1.0} end, {x, tf.ones({2}, tf.float64)})
        return r[1] * r[2]
      end)(a, w)
    end),
    tensor_array_write = two({3, 2}, {2}, function(tf, buf, v)   -- row 2 replaced
      return tf.core.internal.tensor_array_write(buf, tf.constant(2, tf.int64), v, false) * buf
    end),
    tensor_array_write_grows = two({2, 2}, {2}, function(tf, buf, v)
      return tf.core.internal.tensor_array_write(buf, tf.constant(4, tf.int64), v * v, true)
    end),
    tensor_array_read = one({3, 2}, function(tf, buf)
      return tf.core.internal.tensor_array_read(buf, tf.constant(3, tf.int32)) * 2.0
    end),
    tensor_array_loop = one({}, function(tf, x)             -- x + x^2 + x^3 through a TensorArray in a loop
      return traced(tf, "ta_loop", function(v)
        local ta = tf.TensorArray{dtype = tf.float64, size = 3, element_shape = {}}
        local r = tf.while_loop(function(i) return tf.less_equal(i, 3) end,
                                function(i, p, a) return {i + 1, p * v, a:write(i, p * v)} end,
                                {tf.constant(1), tf.constant(1.0, tf.float64), ta})
        return tf.reduce_sum(r[3]:stack())
      end)(x)
    end),
    -- tf.custom_gradient traced: the gradient function (here the true
    -- gradient, capturing the forward sin(x)) must agree with differences
    custom_gradient = two({3}, {3}, function(tf, a, b)
      return traced(tf, "custom_gradient", function(x, y)
        local f = tf.custom_gradient(function(u, v)
          local s = tf.sin(u)
          return s * u * v, function(dy) return dy * (tf.cos(u) * u + s) * v, dy * s * u end
        end)
        return f(x, y)
      end)(a, b)
    end),
  },
  nondifferentiable = {"print", "tensor_array_unwrite", "write_summary"},
}
