-- Gradient-check cases for the nn family (see harness.lua). Window ops run
-- on small NHWC images with distinct values (no ties at the maxima); the
-- cross-entropies take their labels from a closure (sparse) or as rows that
-- sum to 1 (dense: TensorFlow's logits gradient assumes a distribution).
-- The pool gradient ops are reached through nested tapes, as a second-order
-- gradient reaches them.

-- distinct, well separated values for max pooling
local function distinct(i) return ((i * 37) % 101) / 10 - 5 end
-- each run of 3 sums to 1 (a distribution along a last axis of 3)
local function dist3(i) return ({0.2, 0.3, 0.5})[(i - 1) % 3 + 1] end

local function conv(xs, fs, strides, padding, opts)
  return {inputs = {{xs}, {fs}}, fn = function(tf, x, f) return tf.nn.conv2d(x, f, strides, padding, opts) end}
end

-- d(pool(x) . dy)/dx through a tape: max_pool2d_grad / avg_pool2d_grad(x, dy)
local function pool_grad(pool, xs, ys, ksize, strides, padding)
  return {inputs = {{xs, distinct}, {ys}}, wrt = {2}, fn = function(tf, x, dy)
    local t = tf.GradientTape()
    t:watch(x)
    local y = t:record(function() return tf.nn[pool](x, ksize, strides, padding) end)
    return t:gradient(y, x, {output_gradients = dy})
  end}
end

return {
  cases = {
    softmax = {inputs = {{{2, 3}}}, fn = function(tf, x) return tf.nn.softmax(x) end},
    softmax_axis1 = {inputs = {{{3, 2}}}, fn = function(tf, x) return tf.nn.softmax(x, 1) end},
    log_softmax = {inputs = {{{2, 3}}}, fn = function(tf, x) return tf.nn.log_softmax(x) end},
    log_softmax_axis1 = {inputs = {{{3, 2, 2}}}, fn = function(tf, x) return tf.nn.log_softmax(x, {axis = 1}) end},
    sparse_softmax_cross_entropy_with_logits = {inputs = {{{2, 3}}}, fn = function(tf, logits)
      return tf.nn.sparse_softmax_cross_entropy_with_logits({labels = tf.constant({3, 1}), logits = logits})
    end},
    sparse_softmax_cross_entropy_with_logits_batch = {inputs = {{{2, 2, 4}}}, fn = function(tf, logits)
      local labels = tf.constant({{4, 1}, {2, 2}}, tf.int64)
      return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
    end},
    -- labels fixed by a closure
    softmax_cross_entropy_with_logits = {inputs = {{{2, 3}}}, fn = function(tf, logits)
      local labels = tf.constant({{0.1, 0.6, 0.3}, {1, 0, 0}}, tf.float64)
      return tf.nn.softmax_cross_entropy_with_logits({labels = labels, logits = logits})
    end},
    -- with respect to the labels too (d/dlabels = -log_softmax(logits))
    softmax_cross_entropy_with_logits_labels = {inputs = {{{2, 3}, dist3}, {{2, 3}}}, fn = function(tf, labels, logits)
      return tf.nn.softmax_cross_entropy_with_logits(labels, logits)
    end},
    softmax_cross_entropy_with_logits_axis1 = {inputs = {{{3, 2}, function(i) return dist3(i // 2 + 1 + (i % 2)) end},
                                                         {{3, 2}}},
      fn = function(tf, labels, logits) return tf.nn.softmax_cross_entropy_with_logits(labels, logits, {axis = 1}) end},

    conv2d = conv({2, 5, 5, 2}, {3, 3, 2, 3}, 1, "VALID"),
    conv2d_same = conv({1, 5, 4, 2}, {3, 2, 2, 2}, 1, "SAME"),
    conv2d_stride2_same = conv({2, 6, 5, 1}, {3, 3, 1, 2}, 2, "SAME"),
    conv2d_stride2_valid = conv({1, 7, 6, 2}, {3, 2, 2, 2}, {2, 3}, "VALID"),
    conv2d_dilation2 = conv({1, 6, 6, 2}, {2, 3, 2, 2}, 1, "VALID", {dilations = 2}),
    conv2d_dilation2_same = conv({1, 5, 6, 1}, {3, 2, 1, 2}, 1, "SAME", {dilations = {2, 2}}),
    conv2d_explicit = conv({1, 4, 4, 2}, {3, 3, 2, 2}, 2, {{0, 0}, {1, 2}, {0, 1}, {0, 0}}),
    conv2d_pointwise = conv({2, 3, 3, 3}, {1, 1, 3, 2}, 1, "VALID"),
    conv2d_whole_image = conv({2, 3, 2, 2}, {3, 2, 2, 3}, 1, "VALID"),
    -- d/dx of sum(conv(x, f)^2) is 2 * backprop_input(f, conv(x, f)): its
    -- gradient goes through conv2d_backprop_input's gradient
    conv2d_second_order = {inputs = {{{1, 5, 5, 2}}, {{3, 3, 2, 2}}}, fn = function(tf, x, f)
      local t = tf.GradientTape()
      t:watch(x)
      local z = t:record(function() local y = tf.nn.conv2d(x, f, 2, "SAME") return y * y end)
      return t:gradient(z, x)
    end},
    conv2d_backprop_input = {inputs = {{{3, 3, 2, 3}}, {{2, 3, 3, 3}}}, fn = function(tf, f, dy)
      return tf.nn.conv2d_backprop_input({2, 5, 5, 2}, f, dy, 1, "VALID")
    end},
    conv2d_backprop_input_stride2_same = {inputs = {{{3, 3, 1, 2}}, {{1, 3, 3, 2}}}, fn = function(tf, f, dy)
      return tf.nn.conv2d_backprop_input({1, 6, 5, 1}, f, dy, 2, "SAME")
    end},
    conv2d_transpose = {inputs = {{{1, 3, 2, 2}}, {{2, 3, 3, 2}}}, fn = function(tf, x, f)
      return tf.nn.conv2d_transpose(x, f, {1, 5, 4, 3}, 2, "SAME")
    end},
    -- the output shape a tensor known only when the graph runs (height and width unknown while tracing)
    conv2d_backprop_input_dyn = {inputs = {{{1, 3, 2, 2}}, {{2, 3, 3, 2}}}, fn = function(tf, x, f)
      local g = rawget(_G, "__conv2d_bpi_dyn_fn")
      if not g then
        g = tf.fn(function(a, b)
          local s = tf.shape(a)
          return tf.nn.conv2d_transpose(a, b, tf.stack({s[1], s[2] * 2 - 1, s[3] * 2, tf.constant(3)}), 2, "SAME")
        end, {input_signature = {tf.TensorSpec({nil, nil, nil, 2}, tf.float64), tf.TensorSpec({2, 3, 3, 2}, tf.float64)}})
        rawset(_G, "__conv2d_bpi_dyn_fn", g)
      end
      return g(x, f)
    end},
    conv2d_backprop_filter = {inputs = {{{2, 5, 5, 2}}, {{2, 3, 3, 3}}}, fn = function(tf, x, dy)
      return tf.nn.conv2d_backprop_filter(x, {3, 3, 2, 3}, dy, 1, "VALID")
    end},
    conv2d_backprop_filter_dilation2 = {inputs = {{{1, 6, 6, 2}}, {{1, 4, 2, 2}}}, fn = function(tf, x, dy)
      return tf.nn.conv2d_backprop_filter(x, {2, 3, 2, 2}, dy, 1, "VALID", {dilations = 2})
    end},

    max_pool2d = {inputs = {{{2, 4, 4, 2}, distinct}}, fn = function(tf, x)
      return tf.nn.max_pool2d(x, 2, 2, "VALID")
    end},
    max_pool2d_same_overlapping = {inputs = {{{1, 5, 5, 2}, distinct}}, fn = function(tf, x)
      return tf.nn.max_pool2d(x, 3, 2, "SAME")
    end},
    max_pool2d_valid_rect = {inputs = {{{2, 5, 6, 1}, distinct}}, fn = function(tf, x)
      return tf.nn.max_pool2d(x, {2, 3}, {1, 2}, "VALID")
    end},
    avg_pool2d = {inputs = {{{2, 4, 4, 2}}}, fn = function(tf, x) return tf.nn.avg_pool2d(x, 2, 2, "VALID") end},
    avg_pool2d_same_overlapping = {inputs = {{{1, 5, 4, 2}}}, fn = function(tf, x)
      return tf.nn.avg_pool2d(x, 3, 2, "SAME")
    end},
    avg_pool2d_valid_rect = {inputs = {{{1, 5, 6, 2}}}, fn = function(tf, x)
      return tf.nn.avg_pool2d(x, {3, 2}, {1, 2}, "VALID")
    end},
    max_pool2d_grad = pool_grad("max_pool2d", {1, 5, 5, 2}, {1, 3, 3, 2}, 3, 2, "SAME"),
    max_pool2d_grad_valid = pool_grad("max_pool2d", {2, 4, 4, 1}, {2, 2, 2, 1}, 2, 2, "VALID"),
    avg_pool2d_grad = pool_grad("avg_pool2d", {1, 5, 4, 2}, {1, 3, 2, 2}, 3, 2, "SAME"),
    -- the gradient of max_pool2d_grad with respect to dy: max_pool2d_grad_grad(x, g)
    max_pool2d_grad_grad = {inputs = {{{1, 5, 5, 2}, distinct}, {{1, 5, 5, 2}}}, wrt = {2}, fn = function(tf, x, g)
      local dy = tf.zeros({1, 3, 3, 2}, tf.float64)
      local outer = tf.GradientTape()
      outer:watch(dy)
      local dx = outer:record(function()
        local t = tf.GradientTape()
        t:watch(x)
        local y = t:record(function() return tf.nn.max_pool2d(x, 3, 2, "SAME") end)
        return t:gradient(y, x, {output_gradients = dy})
      end)
      return outer:gradient(dx, dy, {output_gradients = g})
    end},
    gelu = {inputs = {{{2, 3}}}, fn = function(tf, x) return tf.nn.gelu(x) end},
    gelu_approximate = {inputs = {{{2, 3}}}, fn = function(tf, x) return tf.nn.gelu(x, {approximate = true}) end},
    -- gelu_grad(dy, x) through an inner tape: d/ddy and d/dx (gelu'')
    gelu_grad = {inputs = {{{2, 3}}, {{2, 3}}}, fn = function(tf, x, dy)
      local t = tf.GradientTape()
      t:watch(x)
      local y = t:record(function() return tf.nn.gelu(x) end)
      return t:gradient(y, x, {output_gradients = dy})
    end},
    gelu_grad_approximate = {inputs = {{{3, 2}}, {{3, 2}}}, fn = function(tf, x, dy)
      local t = tf.GradientTape()
      t:watch(x)
      local y = t:record(function() return tf.nn.gelu(x, true) end)
      return t:gradient(y, x, {output_gradients = dy})
    end},
    -- composites
    leaky_relu = {inputs = {{{2, 3}, "nonzero"}}, fn = function(tf, x) return tf.nn.leaky_relu(x, 0.3) end},
    elu = {inputs = {{{2, 3}, "nonzero"}}, fn = function(tf, x) return tf.nn.elu(x) end},
    selu = {inputs = {{{2, 3}, "nonzero"}}, fn = function(tf, x) return tf.nn.selu(x) end},
    silu = {inputs = {{{2, 3}}}, fn = function(tf, x) return tf.nn.silu(x, 1.5) end},
    softsign = {inputs = {{{2, 3}, "nonzero"}}, fn = function(tf, x) return tf.nn.softsign(x) end},
    l2_normalize = {inputs = {{{2, 3}, "nonzero"}}, fn = function(tf, x) return tf.nn.l2_normalize(x, 2) end},
    moments = {inputs = {{{3, 2}}}, fn = function(tf, x)
      local m, v = tf.nn.moments(x, {1})
      return m * 2 + v
    end},
    batch_normalization = {inputs = {{{2, 3}}, {{3}}, {{3}, "positive"}, {{3}}, {{3}}}, fn = function(tf, x, m, v, o, s)
      return tf.nn.batch_normalization(x, m, v, o, s, 1e-3)
    end},
    sigmoid_cross_entropy_with_logits = {inputs = {{{2, 3}, "unit"}, {{2, 3}}}, fn = function(tf, z, x)
      return tf.nn.sigmoid_cross_entropy_with_logits({labels = z, logits = x})
    end},
    -- the same mask at every call: the seeds restart
    dropout = {inputs = {{{3, 4}}}, fn = function(tf, x)
      tf.random.set_seed(5)
      return tf.nn.dropout(x, 0.4, {seed = 7})
    end},
    depthwise_conv2d = {inputs = {{{1, 4, 5, 2}}, {{2, 3, 2, 2}}}, fn = function(tf, x, f)
      return tf.nn.depthwise_conv2d(x, f, {1, 2, 2, 1}, "SAME")
    end},
    depthwise_conv2d_dilated = {inputs = {{{1, 5, 5, 2}}, {{2, 2, 2, 1}}}, fn = function(tf, x, f)
      return tf.nn.depthwise_conv2d(x, f, 1, "VALID", {dilations = 2})
    end},
    depthwise_conv2d_backprop_input = {inputs = {{{3, 2, 2, 2}}, {{1, 3, 3, 4}}}, fn = function(tf, f, dy)
      return tf.nn.depthwise_conv2d_backprop_input({1, 5, 5, 2}, f, dy, 2, "SAME")
    end},
    depthwise_conv2d_backprop_filter = {inputs = {{{1, 5, 4, 2}}, {{1, 2, 1, 2}}}, fn = function(tf, x, dy)
      return tf.nn.depthwise_conv2d_backprop_filter(x, {2, 3, 2, 1}, dy, {2, 2}, "VALID")
    end},
    conv1d = {inputs = {{{2, 6, 2}}, {{3, 2, 3}}}, fn = function(tf, x, f) return tf.nn.conv1d(x, f, 2, "SAME") end},
    conv2d_groups = conv({1, 4, 4, 4}, {3, 3, 2, 4}, 1, "SAME"),
    max_pool2d_explicit = {inputs = {{{1, 4, 4, 2}, distinct}}, fn = function(tf, x)
      return tf.nn.max_pool2d(x, 2, 2, {{0, 0}, {1, 1}, {1, 1}, {0, 0}})
    end},
    depth_to_space = {inputs = {{{1, 2, 2, 8}}}, fn = function(tf, x) return tf.nn.depth_to_space(x, 2) end},
    space_to_depth = {inputs = {{{1, 4, 2, 2}}}, fn = function(tf, x) return tf.nn.space_to_depth(x, 2) end},
    clip_by_global_norm = {inputs = {{{2, 2}}, {{3}}}, fn = function(tf, a, b)
      local l = tf.clip_by_global_norm({a, b}, 1.5)
      return tf.concat({tf.reshape(l[1], {-1}), l[2]}, 1)
    end},
  },
  -- random noise: dropout's gradient flows through the multiplication by its mask
  nondifferentiable = {"dropout_noise"},
}
