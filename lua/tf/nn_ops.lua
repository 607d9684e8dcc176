--- Composite nn ops, written over primitive ops (so they need no gradient
-- rule of their own): tf.clip_by_value, tf.clip_by_norm, tf.nn.l2_loss,
-- tf.nn.bias_add, the vector norms of tf.linalg.norm (installed by
-- linalg_ops.lua); the tf.nn aliases of the activations (tf.nn.relu, ...).
-- The primitives (matmul, softmax, cross-entropies, conv2d, pools, gelu)
-- are C functions from bindings/nn.c. Also composed here, as TensorFlow
-- composes them (docs/nn.md): the activations leaky_relu, elu, selu,
-- silu/swish, softsign; l2_normalize, moments, batch_normalization,
-- sigmoid_cross_entropy_with_logits, dropout, conv1d, depthwise_conv2d,
-- separable_conv2d, conv3d, conv1d_transpose, max_pool1d, avg_pool1d,
-- conv2d with groups, max_pool2d with explicit padding,
-- depth_to_space/space_to_depth, clip_by_global_norm.
return function(tf)
  local nn, linalg = tf.nn, tf.linalg

  -- Raise an error object blamed on the user's line: `level` 1 when called
  -- from the API function itself, 2 from a helper it calls.
  local function raise_at(level, kind, fmt, ...)
    tf.errors.raise(kind, string.format(fmt, ...), level + 2)   -- errors.raise and raise_at are frames too
  end
  local function raise(kind, fmt, ...) raise_at(2, kind, fmt, ...) end

  -- Options table check: unknown keys are a TypeError naming the accepted ones.
  local function check_options(op, opts, accepted)
    if opts == nil then return {} end
    if type(opts) ~= "table" or tf.is_tensor(opts) then
      raise_at(2, "TypeError", "%s: options must be a table, got %s", op, type(opts))
    end
    for k in pairs(opts) do
      local ok = false
      for _, a in ipairs(accepted) do if k == a then ok = true end end
      if not ok then
        raise_at(2, "TypeError", "%s: unknown option '%s' (accepted: %s)", op, tostring(k),
              table.concat(accepted, ", "))
      end
    end
    return opts
  end

  local function as_tensor(x, op, arg)
    if tf.is_tensor(x) then return x end
    if tf.is_variable(x) then return x:value() end
    if x == nil then raise_at(2, "TypeError", "%s: '%s' is required", op, arg) end
    return tf.constant(x)
  end

  -- a filter argument: a tensor, a variable's value, or a constant of dtype
  local function operand(v, dtype)
    if tf.is_tensor(v) then return v end
    if tf.is_variable(v) then return v:value() end
    return tf.constant(v, dtype)
  end

  -- whether two (partial) shapes may be the same: an unknown rank or
  -- dimension proves no difference (TensorShape.is_compatible_with)
  local function same_dims(a, b)
    local da, db = a:_dims(), b:_dims()
    if da == nil or db == nil then return true end
    if #da ~= #db then return false end
    for i = 1, #da do
      if da[i] ~= db[i] and da[i] >= 0 and db[i] >= 0 then return false end
    end
    return true
  end

  -- {==== aliases
  nn.relu, nn.sigmoid, nn.tanh, nn.softplus = tf.relu, tf.sigmoid, tf.tanh, tf.softplus
  -- }====

  --- Clip `t` to [clip_value_min, clip_value_max]: minimum(maximum(t, min), max).
  -- Lua numbers take `t`'s dtype; the clip values may broadcast against `t`
  -- but not enlarge it (TensorFlow's rule).
  -- @param t tensor (or Lua value)
  -- @param clip_value_min number or tensor
  -- @param clip_value_max number or tensor
  -- @return tensor of `t`'s shape and dtype
  function tf.clip_by_value(t, clip_value_min, clip_value_max)
    t = as_tensor(t, "clip_by_value", "t")
    if clip_value_min == nil or clip_value_max == nil then
      raise("TypeError", "clip_by_value: 'clip_value_min' and 'clip_value_max' are required")
    end
    local r = tf.minimum(tf.maximum(t, clip_value_min), clip_value_max)
    if not same_dims(r, t) then
      raise("InvalidArgumentError", "clip_by_value: clip values broadcast t of shape %s to shape %s",
            tostring(t.shape), tostring(r.shape))
    end
    return r
  end

  --- Rescale `t` so that its L2 norm (over `axes`, all by default) is at most
  -- `clip_norm`: t * clip_norm / max(l2norm(t), clip_norm), as TensorFlow
  -- (a zero norm is kept out of sqrt, so that gradients stay finite).
  -- @param t float tensor
  -- @param clip_norm positive number or scalar tensor
  -- @param opts {axes = integer or list (1-based)}
  function tf.clip_by_norm(t, clip_norm, opts)
    opts = check_options("clip_by_norm", opts, {"axes", "name"})
    t = as_tensor(t, "clip_by_norm", "t")
    if clip_norm == nil then raise("TypeError", "clip_by_norm: 'clip_norm' is required") end
    local l2sum = tf.reduce_sum(t * t, {axis = opts.axes, keepdims = true})
    local pred = tf.greater(l2sum, 0)
    local l2sum_safe = tf.where(pred, l2sum, 1)
    local l2norm = tf.where(pred, tf.sqrt(l2sum_safe), l2sum)
    return (t * clip_norm) / tf.maximum(l2norm, clip_norm)
  end

  --- Half the squared L2 norm of `t`: sum(t ^ 2) / 2, a scalar.
  function nn.l2_loss(t)
    t = as_tensor(t, "l2_loss", "t")
    return tf.reduce_sum(t * t) / 2
  end

  --- Add a 1-D `bias` along the last dimension of `value` (NHWC).
  function nn.bias_add(value, bias, opts)
    opts = check_options("bias_add", opts, {"data_format", "name"})
    if opts.data_format ~= nil and opts.data_format ~= "NHWC" and opts.data_format ~= "N...C" then
      raise("UnimplementedError", "bias_add: data_format '%s' is not supported (only NHWC)",
            tostring(opts.data_format))
    end
    value = as_tensor(value, "bias_add", "value")
    if not tf.is_tensor(bias) then bias = tf.constant(bias, value.dtype) end
    local dv, db = value:_dims(), bias:_dims()
    if db and #db ~= 1 then
      raise("InvalidArgumentError", "bias_add: 'bias' must be 1-D, got shape %s", tostring(bias.shape))
    end
    if dv and #dv < 1 then
      raise("InvalidArgumentError", "bias_add: 'value' must have rank >= 1, got shape %s",
            tostring(value.shape))
    end
    if dv and db and dv[#dv] >= 0 and db[1] >= 0 and dv[#dv] ~= db[1] then
      raise("InvalidArgumentError",
            "bias_add: 'bias' has %d entries but the last dimension of 'value' is %d: value is %s",
            db[1], dv[#dv], tostring(value.shape))
    end
    return value + bias
  end

  --- Vector norms: ord "euclidean" (default, also "fro" and 2), 1, math.huge
  -- ("inf"), or any p > 0 (sum(|x|^p)^(1/p)); over all elements, one `axis`,
  -- or for "euclidean"/"fro" a pair of axes.
  -- @param tensor float tensor
  -- @param opts {ord =, axis = (1-based), keepdims = false}
  local function vector_norm(tensor, opts)
    opts = check_options("norm", opts, {"ord", "axis", "keepdims", "name"})
    local x = as_tensor(tensor, "norm", "tensor")
    local ord, axis = opts.ord or "euclidean", opts.axis
    local red = {axis = axis, keepdims = opts.keepdims or false}
    if type(axis) == "table" and #axis == 2 and not (ord == "euclidean" or ord == "fro") then
      raise("UnimplementedError", "norm: matrix norm ord=%s is not supported (only 'euclidean' and 'fro')",
            tostring(ord))
    end
    if ord == "euclidean" or ord == "fro" or ord == 2 then
      return tf.sqrt(tf.reduce_sum(x * x, red))
    elseif ord == 1 then
      return tf.reduce_sum(tf.abs(x), red)
    elseif ord == math.huge or ord == "inf" then
      return tf.reduce_max(tf.abs(x), red)
    elseif type(ord) == "number" and ord > 0 then
      return tf.pow(tf.reduce_sum(tf.pow(tf.abs(x), ord), red), 1 / ord)
    end
    raise("ValueError", "norm: 'ord' must be 'euclidean', 'fro', 'inf' or a positive number, got %s",
          tostring(ord))
  end
  tf.core.internal.vector_norm = vector_norm   -- private: linalg_ops.lua's tf.linalg.norm calls it
  -- {==== activations (elementwise compositions: fused inside tf.fn)
  local function float_features(x, op)
    x = as_tensor(x, op, "features")
    if not x.dtype.is_floating then
      if x.dtype == tf.int32 or x.dtype == tf.int64 or x.dtype == tf.uint8 then return tf.cast(x, tf.float32) end
      raise_at(2, "TypeError", "%s: 'features' has dtype %s, expected a float or integer dtype", op, x.dtype.name)
    end
    return x
  end

  --- tf.nn.leaky_relu(features [, alpha = 0.2]): x where x > 0, alpha * x elsewhere.
  function nn.leaky_relu(features, alpha)
    if type(alpha) == "table" and not tf.is_tensor(alpha) then
      alpha = check_options("leaky_relu", alpha, {"alpha", "name"}).alpha
    end
    local x = float_features(features, "leaky_relu")
    alpha = alpha or 0.2
    return tf.where(tf.greater(x, 0), x, x * alpha)
  end

  --- tf.nn.elu(features): x where x > 0, exp(x) - 1 elsewhere.
  function nn.elu(features)
    local x = float_features(features, "elu")
    return tf.where(tf.greater(x, 0), x, tf.expm1(tf.minimum(x, 0)))
  end

  local SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
  --- tf.nn.selu(features): scale * (x where x > 0, alpha * (exp(x) - 1) elsewhere).
  function nn.selu(features)
    local x = float_features(features, "selu")
    return tf.where(tf.greater(x, 0), x * SELU_SCALE, tf.expm1(tf.minimum(x, 0)) * (SELU_ALPHA * SELU_SCALE))
  end

  --- tf.nn.silu(features [, beta = 1]): x * sigmoid(beta * x) (also tf.nn.swish).
  function nn.silu(features, beta)
    if type(beta) == "table" and not tf.is_tensor(beta) then
      beta = check_options("silu", beta, {"beta", "name"}).beta
    end
    local x = float_features(features, "silu")
    if beta == nil or beta == 1 then return x * tf.sigmoid(x) end
    return x * tf.sigmoid(x * beta)
  end
  nn.swish = nn.silu

  --- tf.nn.softsign(features): x / (1 + |x|).
  function nn.softsign(features)
    local x = float_features(features, "softsign")
    return x / (tf.abs(x) + 1)
  end
  tf.math.softsign = nn.softsign
  -- }====

  --- tf.math.l2_normalize(x [, axis [, epsilon = 1e-12]]): x / sqrt(max(sum(x^2, axis), epsilon)).
  function nn.l2_normalize(x, axis, epsilon)
    if type(axis) == "table" and not tf.is_tensor(axis) and axis.axis ~= nil or
       (type(axis) == "table" and next(axis) ~= nil and axis[1] == nil) then
      local o = check_options("l2_normalize", axis, {"axis", "epsilon", "name"})
      axis, epsilon = o.axis, o.epsilon
    end
    x = as_tensor(x, "l2_normalize", "x")
    local sq = tf.reduce_sum(tf.square(x), {axis = axis, keepdims = true})
    return x * tf.rsqrt(tf.maximum(sq, epsilon or 1e-12))
  end
  tf.math.l2_normalize = nn.l2_normalize

  --- tf.nn.moments(x, axes [, {keepdims = false, shift =}]): mean and
  -- variance over `axes` (1-based), variance as mean((x - mean)^2).
  -- @return mean, variance
  function nn.moments(x, axes, opts, keepdims)
    if keepdims ~= nil or (opts ~= nil and (type(opts) ~= "table" or tf.is_tensor(opts))) then
      opts = {shift = opts, keepdims = keepdims}   -- TensorFlow's positional (x, axes, shift, keepdims)
    end
    opts = check_options("moments", opts, {"shift", "keepdims", "name"})
    x = as_tensor(x, "moments", "x")
    if axes == nil then raise("TypeError", "moments: 'axes' is required") end
    local mean = tf.reduce_mean(x, {axis = axes, keepdims = true})
    local variance = tf.reduce_mean(tf.squared_difference(x, tf.stop_gradient(mean)), {axis = axes, keepdims = true})
    if not opts.keepdims then
      local ax = type(axes) == "table" and axes or {axes}
      mean = tf.squeeze(mean, ax)
      variance = tf.squeeze(variance, ax)
    end
    return mean, variance
  end

  --- tf.nn.batch_normalization(x, mean, variance, offset, scale, variance_epsilon):
  -- (x - mean) * scale / sqrt(variance + epsilon) + offset; offset and
  -- scale may be nil.
  function nn.batch_normalization(x, mean, variance, offset, scale, variance_epsilon)
    x = as_tensor(x, "batch_normalization", "x")
    if mean == nil or variance == nil then
      raise("TypeError", "batch_normalization: 'mean' and 'variance' are required")
    end
    if type(variance_epsilon) ~= "number" and not tf.is_tensor(variance_epsilon) then
      raise("TypeError", "batch_normalization: 'variance_epsilon' must be a number, got %s", type(variance_epsilon))
    end
    local inv = tf.rsqrt(variance + variance_epsilon)
    if scale ~= nil then inv = inv * scale end
    local shift = offset ~= nil and (offset - mean * inv) or -(mean * inv)
    return x * inv + shift
  end

  -- {==== losses
  -- labels and logits from a keyword table {labels=, logits=} or positionally
  local function loss_args(op, a, b)
    if type(a) == "table" and not tf.is_tensor(a) and (a.labels ~= nil or a.logits ~= nil) then
      check_options(op, a, {"labels", "logits", "name"})
      a, b = a.labels, a.logits
    end
    if a == nil then raise_at(2, "TypeError", "%s: missing 'labels'", op) end
    if b == nil then raise_at(2, "TypeError", "%s: missing 'logits'", op) end
    local logits = as_tensor(b, op, "logits")
    local labels = tf.is_tensor(a) and a or tf.constant(a, logits.dtype)
    return labels, logits
  end

  --- tf.nn.sigmoid_cross_entropy_with_logits{labels=, logits=} (or
  -- positional): max(x, 0) - x * z + log(1 + exp(-|x|)), elementwise.
  function nn.sigmoid_cross_entropy_with_logits(labels, logits)
    local z, x = loss_args("sigmoid_cross_entropy_with_logits", labels, logits)
    if z.dtype ~= x.dtype then
      raise("TypeError", "sigmoid_cross_entropy_with_logits: labels and logits must have the same dtype, got "
            .. "labels: %s and logits: %s (use tf.cast)", z.dtype.name, x.dtype.name)
    end
    if not same_dims(z, x) or (z:_dims() and x:_dims() and #z:_dims() ~= #x:_dims()) then
      raise("ValueError", "sigmoid_cross_entropy_with_logits: logits and labels must have the same shape: "
            .. "labels is %s, logits is %s", tostring(z.shape), tostring(x.shape))
    end
    return tf.relu(x) - x * z + tf.log1p(tf.exp(-tf.abs(x)))
  end

  nn.softmax_cross_entropy_with_logits_v2 = nn.softmax_cross_entropy_with_logits
  -- }====

  --- tf.nn.dropout(x, rate [, {noise_shape =, seed =}]): each element
  -- (or each slice, along the dims where noise_shape is 1) kept with
  -- probability 1 - rate and scaled by 1 / (1 - rate), the others zeroed.
  -- rate 0 returns x unchanged. Works over unknown dims inside tf.fn (the
  -- noise is drawn for the shape x has when the function runs).
  function nn.dropout(x, rate, opts, seed)
    if (type(opts) == "table" and not tf.is_tensor(opts) and #opts > 0) or tf.is_tensor(opts) or seed ~= nil then
      opts = {noise_shape = opts, seed = seed}   -- TensorFlow's positional (x, rate, noise_shape, seed)
    end
    if type(rate) == "table" and not tf.is_tensor(rate) then
      opts = rate
      rate = opts.rate
      opts = check_options("dropout", opts, {"rate", "noise_shape", "seed", "name"})
    else
      opts = check_options("dropout", opts, {"noise_shape", "seed", "name"})
    end
    x = as_tensor(x, "dropout", "x")
    if not x.dtype.is_floating then
      raise("TypeError", "dropout: 'x' has dtype %s, expected a float dtype", x.dtype.name)
    end
    if type(rate) ~= "number" then raise("TypeError", "dropout: 'rate' must be a number, got %s", type(rate)) end
    if not (rate >= 0 and rate < 1) then
      raise("ValueError", "dropout: 'rate' must be a scalar in [0, 1), got %s", tostring(rate))
    end
    if rate == 0 then return tf.identity(x) end
    -- the noise has x's shape, with 1 where noise_shape says so (drawn when
    -- the op runs: x's dims may be known only then)
    local like = x
    if opts.noise_shape ~= nil then
      local ns = opts.noise_shape
      if tf.is_tensor(ns) then ns = ns:totable() end
      if type(ns) ~= "table" then raise("TypeError", "dropout: 'noise_shape' must be a list of integers") end
      local dims = x:_dims()
      if dims == nil then raise("ValueError", "dropout: the rank of 'x' must be known to use noise_shape") end
      if #ns ~= #dims then
        raise("InvalidArgumentError", "dropout: 'noise_shape' has %d entries but x has rank %d", #ns, #dims)
      end
      local ones = {}
      for i = 1, #ns do
        local d = ns[i]
        if d == 1 and dims[i] ~= 1 then
          ones[#ones + 1] = i
        elseif d ~= nil and d >= 0 and dims[i] >= 0 and d ~= dims[i] then
          raise("InvalidArgumentError", "dropout: 'noise_shape' %s does not broadcast to x's shape %s",
                tostring(tf.TensorShape.new(ns)), tostring(x.shape))
        end
      end
      if #ones > 0 then like = tf.reduce_max(tf.stop_gradient(x), {axis = ones, keepdims = true}) end
    end
    local u = tf.core.dropout_noise(like, opts.seed)
    local keep = tf.cast(tf.greater_equal(u, rate), x.dtype)
    return x * (1 / (1 - rate)) * keep
  end

  -- {==== convolutions and pools
  -- the engine's ops (this module replaces tf.nn.conv2d and max_pool2d)
  local conv2d_c, max_pool2d_c = tf.core.nn.conv2d, tf.core.nn.max_pool2d
  local depthwise_c = tf.core.nn.depthwise_conv2d

  local function dims_of(t, op, arg, rank)
    local d = t:_dims()
    if d == nil or #d ~= rank then
      raise_at(2, "InvalidArgumentError", "%s: '%s' must have rank %d, got shape %s", op, arg, rank, tostring(t.shape))
    end
    return d
  end

  --- tf.nn.conv2d(input, filters, strides, padding [, ...]): as the C op;
  -- when input's depth is a multiple g > 1 of the filters' input depth,
  -- a grouped convolution (TensorFlow's groups): input channels and filters'
  -- output channels split in g groups, each convolved on its own.
  function nn.conv2d(input, filters, strides, padding, ...)
    if tf.is_variable(input) then input = input:value() end
    if tf.is_variable(filters) then filters = filters:value() end
    if tf.is_tensor(input) and tf.is_tensor(filters) then
      local dx, df = input:_dims(), filters:_dims()
      if dx and df and #dx == 4 and #df == 4 and dx[4] >= 0 and df[3] > 0 and dx[4] ~= df[3] and
         dx[4] % df[3] == 0 then
        local g = dx[4] // df[3]
        if df[4] >= 0 and df[4] % g ~= 0 then
          raise("InvalidArgumentError", "conv2d: %d groups (input depth %d / filter depth %d) do not divide the "
                .. "filters' output depth %d", g, dx[4], df[3], df[4])
        end
        local xs, fs = tf.split(input, g, 4), tf.split(filters, g, 4)
        local ys = {}
        for i = 1, g do ys[i] = conv2d_c(xs[i], fs[i], strides, padding, ...) end
        return tf.concat(ys, 4)
      end
    end
    return conv2d_c(input, filters, strides, padding, ...)
  end

  -- TensorFlow's window padding along one dim: before, after, output size
  local function window_pad(padding, n, k, s, d)
    local eff = (k - 1) * d + 1
    if padding == "SAME" then
      local out = (n + s - 1) // s
      local total = math.max((out - 1) * s + eff - n, 0)
      return total // 2, total - total // 2, out
    end
    return 0, 0, math.max((n - eff) // s + 1, 0)
  end

  local function pair(v, op, arg)
    if v == nil then return 1, 1 end
    if type(v) == "number" then return v, v end
    if type(v) == "table" then
      if #v == 1 then return v[1], v[1] end
      if #v == 2 then return v[1], v[2] end
      if #v == 4 then return v[2], v[3] end
    end
    raise_at(2, "InvalidArgumentError", "%s: '%s' must be an integer or a list of 1, 2 or 4 integers", op, arg)
  end

  --- tf.nn.depthwise_conv2d(input, filter, strides, padding [, {dilations=}]):
  -- input (N, H, W, C), filter (KH, KW, C, M) -> (N, OH, OW, C * M), channel
  -- c * M + m the convolution of input channel c with filter[:, :, c, m].
  -- float32/float64: the engine's op (with its gradient ops); other float
  -- dtypes: a sum over the window's taps of strided slices times the filter.
  -- strides {1, s, s, 1} (equal spatial strides, as TensorFlow).
  function nn.depthwise_conv2d(input, filter, strides, padding, opts, dilations)
    if type(opts) == "string" or (opts == nil and dilations ~= nil) then   -- (..., data_format, dilations)
      opts = {data_format = opts, dilations = dilations}
    end
    opts = check_options("depthwise_conv2d", opts, {"dilations", "data_format", "name"})
    if opts.data_format ~= nil and opts.data_format ~= "NHWC" then
      raise("UnimplementedError", "depthwise_conv2d: data_format '%s' is not supported (only NHWC)",
            tostring(opts.data_format))
    end
    input = as_tensor(input, "depthwise_conv2d", "input")
    filter = operand(filter, input.dtype)
    local dx = dims_of(input, "depthwise_conv2d", "input", 4)
    local df = dims_of(filter, "depthwise_conv2d", "filter", 4)
    for i = 2, 4 do
      if dx[i] < 0 then
        raise("ValueError", "depthwise_conv2d: the input's height, width and depth must be known, got %s",
              tostring(input.shape))
      end
    end
    if dx[4] ~= df[3] then
      raise("InvalidArgumentError", "depthwise_conv2d: input depth %d does not match the filter's input depth %d: "
            .. "input is %s, filter is %s", dx[4], df[3], tostring(input.shape), tostring(filter.shape))
    end
    local sh, sw = pair(strides, "depthwise_conv2d", "strides")
    local dh, dw = pair(opts.dilations, "depthwise_conv2d", "dilations")
    if type(padding) ~= "string" then raise("TypeError", "depthwise_conv2d: 'padding' must be 'SAME' or 'VALID'") end
    local pad = padding:upper()
    if pad ~= "SAME" and pad ~= "VALID" then
      raise("ValueError", "depthwise_conv2d: 'padding' must be 'SAME' or 'VALID', got '%s'", padding)
    end
    if not input.dtype.is_floating then
      raise("TypeError", "depthwise_conv2d: 'input' has dtype %s, expected a float dtype", input.dtype.name)
    end
    if input.dtype == tf.float32 or input.dtype == tf.float64 then
      return depthwise_c(input, filter, {sh, sw}, pad, {dilations = {dh, dw}})
    end
    -- other float dtypes: a sum over the window's taps
    local KH, KW, C, M = df[1], df[2], df[3], df[4]
    local pt, pb, oh = window_pad(pad, dx[2], KH, sh, dh)
    local pl, pr, ow = window_pad(pad, dx[3], KW, sw, dw)
    local x = (pt + pb + pl + pr > 0) and tf.pad(input, {{0, 0}, {pt, pb}, {pl, pr}, {0, 0}}) or input
    if oh == 0 or ow == 0 then
      local n = dx[1] >= 0 and dx[1] or -1
      return tf.zeros({n, oh, ow, C * M}, input.dtype)
    end
    local x5 = tf.expand_dims(x, 5)   -- (N, H', W', C, 1)
    local acc
    for kh = 1, KH do
      for kw = 1, KW do
        local h0, w0 = (kh - 1) * dh + 1, (kw - 1) * dw + 1
        local tap = x5[{tf.all, {h0, h0 + (oh - 1) * sh, sh}, {w0, w0 + (ow - 1) * sw, sw}, tf.all, tf.all}]
        local term = tap * filter[{kh, kw}]   -- (N, OH, OW, C, M)
        acc = acc and acc + term or term
      end
    end
    return tf.reshape(acc, {-1, oh, ow, C * M})
  end

  --- tf.nn.conv1d(input, filters, stride, padding [, {dilations=, data_format="NWC"}]):
  -- input (N, W, C), filters (K, C, O): conv2d over a height of 1.
  function nn.conv1d(input, filters, stride, padding, opts, dilations)
    if type(opts) == "string" or (opts == nil and dilations ~= nil) then   -- (..., data_format, dilations)
      opts = {data_format = opts, dilations = dilations}
    end
    opts = check_options("conv1d", opts, {"dilations", "data_format", "name"})
    if opts.data_format ~= nil and opts.data_format ~= "NWC" then
      raise("UnimplementedError", "conv1d: data_format '%s' is not supported (only NWC)", tostring(opts.data_format))
    end
    input = as_tensor(input, "conv1d", "input")
    filters = operand(filters, input.dtype)
    dims_of(input, "conv1d", "input", 3)
    dims_of(filters, "conv1d", "filters", 3)
    local function one(v, arg)
      if v == nil then return 1 end
      if type(v) == "number" then return v end
      if type(v) == "table" and #v == 1 then return v[1] end
      if type(v) == "table" and #v == 3 then return v[2] end
      raise_at(2, "InvalidArgumentError", "conv1d: '%s' must be an integer or a list of 1 or 3 integers", arg)
    end
    local s, d = one(stride, "stride"), one(opts.dilations, "dilations")
    local y = nn.conv2d(tf.expand_dims(input, 2), tf.expand_dims(filters, 1), {1, s}, padding, {dilations = {1, d}})
    return tf.squeeze(y, 2)
  end

  -- an int, or a list of n integers, or of n + 2 with the batch and channel
  -- entries (TensorFlow's 1 / 3 / 5-entry strides): the n spatial values
  local function spatial(v, n, op, arg, default)
    if v == nil then v = default end
    if math.type(v) == "integer" and v >= 1 then
      local t = {}
      for i = 1, n do t[i] = v end
      return t
    end
    if type(v) == "table" then
      local ok = true
      for i = 1, #v do if math.type(v[i]) ~= "integer" or v[i] < 1 then ok = false end end
      if ok and #v == n then return {table.unpack(v)} end
      if ok and n > 1 and #v == 1 then
        local t = {}
        for i = 1, n do t[i] = v[1] end
        return t
      end
      if ok and #v == n + 2 then return {table.unpack(v, 2, n + 1)} end
    end
    raise_at(2, "InvalidArgumentError", "%s: '%s' must be a positive integer or a list of %s positive integers, "
             .. "got %s", op, arg, n > 1 and string.format("1, %d or %d", n, n + 2) or "1 or 3", tostring(v))
  end

  local function padding_of(padding, op)
    if type(padding) ~= "string" then
      raise_at(2, "TypeError", "%s: 'padding' must be 'SAME' or 'VALID', got %s", op, type(padding))
    end
    local pad = padding:upper()
    if pad ~= "SAME" and pad ~= "VALID" then
      raise_at(2, "ValueError", "%s: 'padding' must be 'SAME' or 'VALID', got '%s'", op, padding)
    end
    return pad
  end

  --- tf.nn.separable_conv2d(input, depthwise_filter, pointwise_filter, strides,
  -- padding [, {dilations=}]): depthwise_conv2d(input, depthwise_filter)
  -- (KH, KW, C, M), then a 1x1 conv2d with pointwise_filter (1, 1, C * M, O).
  function nn.separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, opts, dilations)
    if type(opts) == "string" or (opts == nil and dilations ~= nil) then   -- (..., data_format, dilations)
      opts = {data_format = opts, dilations = dilations}
    end
    opts = check_options("separable_conv2d", opts, {"dilations", "data_format", "name"})
    input = as_tensor(input, "separable_conv2d", "input")
    local dw = operand(depthwise_filter, input.dtype)
    local pw = operand(pointwise_filter, input.dtype)
    local dd = dims_of(dw, "separable_conv2d", "depthwise_filter", 4)
    local dp = dims_of(pw, "separable_conv2d", "pointwise_filter", 4)
    if dp[1] ~= 1 or dp[2] ~= 1 or dp[3] ~= dd[3] * dd[4] then
      raise("InvalidArgumentError", "separable_conv2d: 'pointwise_filter' must have shape (1, 1, %d, out) for a "
            .. "depthwise_filter of shape %s, got %s", dd[3] * dd[4], tostring(dw.shape), tostring(pw.shape))
    end
    local y = nn.depthwise_conv2d(input, dw, strides, padding, {dilations = opts.dilations,
                                                                 data_format = opts.data_format})
    return conv2d_c(y, pw, 1, "VALID")
  end

  --- tf.nn.conv3d(input, filters, strides, padding [, {dilations=}]): input
  -- (N, D, H, W, C), filters (KD, KH, KW, C, O) -> (N, OD, OH, OW, O). The
  -- KD depth taps are strided slices stacked into the channels (N * OD, H,
  -- W, KD * C) and convolved once by conv2d with the filters as (KH, KW,
  -- KD * C, O): its gradients are those of slice, stack and conv2d.
  function nn.conv3d(input, filters, strides, padding, opts, dilations)
    if type(opts) == "string" or (opts == nil and dilations ~= nil) then   -- (..., data_format, dilations)
      opts = {data_format = opts, dilations = dilations}
    end
    opts = check_options("conv3d", opts, {"dilations", "data_format", "name"})
    if opts.data_format ~= nil and opts.data_format ~= "NDHWC" then
      raise("UnimplementedError", "conv3d: data_format '%s' is not supported (only NDHWC)", tostring(opts.data_format))
    end
    input = as_tensor(input, "conv3d", "input")
    filters = operand(filters, input.dtype)
    local dx = dims_of(input, "conv3d", "input", 5)
    local df = dims_of(filters, "conv3d", "filters", 5)
    for i = 2, 5 do
      if dx[i] < 0 then
        raise("ValueError", "conv3d: the input's depth, height, width and channels must be known, got %s",
              tostring(input.shape))
      end
    end
    if dx[5] ~= df[4] then
      raise("InvalidArgumentError", "conv3d: input depth %d does not match the filters' input depth %d: input is %s, "
            .. "filters is %s", dx[5], df[4], tostring(input.shape), tostring(filters.shape))
    end
    if input.dtype ~= filters.dtype then
      raise("InvalidArgumentError", "conv3d: 'filters' has dtype %s, expected %s as 'input'", filters.dtype.name,
            input.dtype.name)
    end
    local s = spatial(strides, 3, "conv3d", "strides", 1)
    local d = spatial(opts.dilations, 3, "conv3d", "dilations", 1)
    local pad = padding_of(padding, "conv3d")
    local KD, C, O = df[1], df[4], df[5]
    local pf, pk, od = window_pad(pad, dx[2], KD, s[1], d[1])
    local _, _, oh = window_pad(pad, dx[3], df[2], s[2], d[2])
    local _, _, ow = window_pad(pad, dx[4], df[3], s[3], d[3])
    if od == 0 or oh == 0 or ow == 0 then
      return tf.zeros({dx[1] >= 0 and dx[1] or -1, od, oh, ow, O}, input.dtype)
    end
    local x = (pf + pk > 0) and tf.pad(input, {{0, 0}, {pf, pk}, {0, 0}, {0, 0}, {0, 0}}) or input
    local taps = {}
    for k = 1, KD do
      local d0 = (k - 1) * d[1] + 1
      taps[k] = x[{tf.all, {d0, d0 + (od - 1) * s[1], s[1]}}]
    end
    local stacked = KD == 1 and tf.expand_dims(taps[1], 5) or tf.stack(taps, 5)   -- (N, OD, H, W, KD, C)
    local x2 = tf.reshape(stacked, {-1, dx[3], dx[4], KD * C})
    local f2 = tf.reshape(tf.transpose(filters, {2, 3, 1, 4, 5}), {df[2], df[3], KD * C, O})
    local y = conv2d_c(x2, f2, {s[2], s[3]}, pad, {dilations = {d[2], d[3]}})
    return tf.reshape(y, {-1, od, oh, ow, O})
  end

  -- the 1-d pools: the 2-d pool over a height of 1
  local function pool1d(name, op2)
    return function(input, ksize, strides, padding, opts)
      if type(opts) == "string" then opts = {data_format = opts} end
      opts = check_options(name, opts, {"data_format", "name"})
      if opts.data_format ~= nil and opts.data_format ~= "NWC" then
        raise("UnimplementedError", "%s: data_format '%s' is not supported (only NWC)", name,
              tostring(opts.data_format))
      end
      input = as_tensor(input, name, "input")
      dims_of(input, name, "input", 3)
      local k = spatial(ksize, 1, name, "ksize")[1]
      local s = spatial(strides, 1, name, "strides")[1]
      local y = op2(tf.expand_dims(input, 2), {1, k}, {1, s}, padding_of(padding, name))
      return tf.squeeze(y, {2})
    end
  end
  --- tf.nn.max_pool1d(input, ksize, strides, padding): input (N, W, C).
  nn.max_pool1d = pool1d("max_pool1d", function(...) return max_pool2d_c(...) end)
  --- tf.nn.avg_pool1d(input, ksize, strides, padding): input (N, W, C).
  nn.avg_pool1d = pool1d("avg_pool1d", function(...) return tf.core.nn.avg_pool2d(...) end)

  --- tf.nn.conv1d_transpose(input, filters, output_shape, strides [, padding="SAME"
  -- [, {dilations=}]]): input (N, W, C), filters (K, out, C), output_shape
  -- {N, OW, out}: conv2d_transpose over a height of 1.
  function nn.conv1d_transpose(input, filters, output_shape, strides, padding, opts)
    opts = check_options("conv1d_transpose", opts, {"dilations", "data_format", "name"})
    input = as_tensor(input, "conv1d_transpose", "input")
    filters = operand(filters, input.dtype)
    dims_of(input, "conv1d_transpose", "input", 3)
    dims_of(filters, "conv1d_transpose", "filters", 3)
    if tf.is_tensor(output_shape) then output_shape = output_shape:totable() end
    if type(output_shape) ~= "table" or #output_shape ~= 3 then
      raise("InvalidArgumentError", "conv1d_transpose: 'output_shape' must be a list of 3 integers (N, W, C)")
    end
    local s = spatial(strides, 1, "conv1d_transpose", "strides")[1]
    local d = spatial(opts.dilations, 1, "conv1d_transpose", "dilations", 1)[1]
    local os = output_shape
    local y = nn.conv2d_transpose(tf.expand_dims(input, 2), tf.expand_dims(filters, 1), {os[1], 1, os[2], os[3]},
                                  {1, s}, padding_of(padding or "SAME", "conv1d_transpose"), {dilations = {1, d}})
    return tf.squeeze(y, {2})
  end

  --- tf.nn.max_pool2d(input, ksize, strides, padding [, ...]): as the C op;
  -- padding may also be explicit, {{0, 0}, {top, bottom}, {left, right}, {0, 0}}
  -- (padded positions never win: they hold the lowest value).
  function nn.max_pool2d(input, ksize, strides, padding, ...)
    if type(padding) == "table" and not tf.is_tensor(padding) then
      if #padding ~= 4 then
        raise("ValueError", "max_pool2d: explicit padding must have 4 pairs (NHWC), got %d", #padding)
      end
      for i = 1, 4 do
        local p = padding[i]
        if type(p) ~= "table" or #p ~= 2 or math.type(p[1]) ~= "integer" or math.type(p[2]) ~= "integer" or
           p[1] < 0 or p[2] < 0 then
          raise("ValueError", "max_pool2d: explicit padding entry %d must be a pair of integers >= 0", i)
        end
      end
      if padding[1][1] ~= 0 or padding[1][2] ~= 0 or padding[4][1] ~= 0 or padding[4][2] ~= 0 then
        raise("ValueError", "max_pool2d: explicit padding of the batch and depth dimensions must be 0")
      end
      input = as_tensor(input, "max_pool2d", "input")
      local low
      if input.dtype.is_floating then low = -math.huge
      elseif input.dtype == tf.int32 then low = -2147483648
      elseif input.dtype == tf.int64 then low = math.mininteger
      else low = 0 end
      local x = tf.pad(input, padding, {constant_values = low})
      return max_pool2d_c(x, ksize, strides, "VALID", ...)
    end
    return max_pool2d_c(input, ksize, strides, padding, ...)
  end
  nn.max_pool = nn.max_pool2d

  --- tf.nn.depth_to_space(input, block_size): (N, H, W, C) ->
  -- (N, H * b, W * b, C / b^2), output[n, h*b + i, w*b + j, c] = input[n, h, w, (i*b + j) * C/b^2 + c].
  function nn.depth_to_space(input, block_size, opts)
    if type(opts) == "string" then opts = {data_format = opts} end   -- positional data_format
    opts = check_options("depth_to_space", opts, {"data_format", "name"})
    if opts.data_format ~= nil and opts.data_format ~= "NHWC" then
      raise("UnimplementedError", "depth_to_space: data_format '%s' is not supported (only NHWC)",
            tostring(opts.data_format))
    end
    input = as_tensor(input, "depth_to_space", "input")
    local d = dims_of(input, "depth_to_space", "input", 4)
    local b = block_size
    if math.type(b) ~= "integer" or b < 2 then
      raise("InvalidArgumentError", "depth_to_space: 'block_size' must be an integer >= 2, got %s", tostring(b))
    end
    if d[4] < 0 then raise("ValueError", "depth_to_space: the input's depth must be known") end
    if d[4] % (b * b) ~= 0 then
      raise("InvalidArgumentError", "depth_to_space: input depth %d is not divisible by block_size^2 = %d",
            d[4], b * b)
    end
    local c = d[4] // (b * b)
    local t = tf.reshape(input, {d[1], d[2], d[3], b, b, c})
    t = tf.transpose(t, {1, 2, 4, 3, 5, 6})
    local h = d[2] >= 0 and d[2] * b or -1
    local w = d[3] >= 0 and d[3] * b or -1
    return tf.reshape(t, {d[1], h, w, c})
  end

  --- tf.nn.space_to_depth(input, block_size): the inverse of depth_to_space,
  -- (N, H, W, C) -> (N, H / b, W / b, C * b^2).
  function nn.space_to_depth(input, block_size, opts)
    if type(opts) == "string" then opts = {data_format = opts} end   -- positional data_format
    opts = check_options("space_to_depth", opts, {"data_format", "name"})
    if opts.data_format ~= nil and opts.data_format ~= "NHWC" then
      raise("UnimplementedError", "space_to_depth: data_format '%s' is not supported (only NHWC)",
            tostring(opts.data_format))
    end
    input = as_tensor(input, "space_to_depth", "input")
    local d = dims_of(input, "space_to_depth", "input", 4)
    local b = block_size
    if math.type(b) ~= "integer" or b < 2 then
      raise("InvalidArgumentError", "space_to_depth: 'block_size' must be an integer >= 2, got %s", tostring(b))
    end
    if d[2] < 0 or d[3] < 0 or d[4] < 0 then
      raise("ValueError", "space_to_depth: the input's height, width and depth must be known, got %s",
            tostring(input.shape))
    end
    if d[2] % b ~= 0 or d[3] % b ~= 0 then
      raise("InvalidArgumentError", "space_to_depth: height %d and width %d must be divisible by block_size %d",
            d[2], d[3], b)
    end
    local t = tf.reshape(input, {d[1], d[2] // b, b, d[3] // b, b, d[4]})
    t = tf.transpose(t, {1, 2, 4, 3, 5, 6})
    return tf.reshape(t, {d[1], d[2] // b, d[3] // b, b * b * d[4]})
  end
  -- }====

  --- tf.linalg.global_norm(t_list): sqrt of the sum of every tensor's squared
  -- L2 norm (nil entries skipped; t_list.n may give the length).
  function linalg.global_norm(t_list)
    if type(t_list) ~= "table" or tf.is_tensor(t_list) then
      raise("TypeError", "global_norm: 't_list' must be a list of tensors, got %s", type(t_list))
    end
    local n = t_list.n or #t_list
    local total
    for i = 1, n do
      local t = t_list[i]
      if t ~= nil then
        local s = tf.reduce_sum(tf.square(as_tensor(t, "global_norm", "t_list")))
        total = total and total + s or s
      end
    end
    if total == nil then return tf.constant(0.0) end
    return tf.sqrt(total)
  end

  --- tf.clip_by_global_norm(t_list, clip_norm [, use_norm]): every tensor
  -- times clip_norm / max(global_norm, clip_norm) (all NaN when the norm is
  -- infinite or NaN, as TensorFlow).
  -- @return the clipped list (nil entries kept), the global norm
  function tf.clip_by_global_norm(t_list, clip_norm, use_norm)
    if type(t_list) ~= "table" or tf.is_tensor(t_list) then
      raise("TypeError", "clip_by_global_norm: 't_list' must be a list of tensors, got %s", type(t_list))
    end
    if clip_norm == nil then raise("TypeError", "clip_by_global_norm: 'clip_norm' is required") end
    local norm = use_norm or linalg.global_norm(t_list)
    local n = t_list.n or #t_list
    local out = {n = t_list.n}
    local scale
    for i = 1, n do
      local t = t_list[i]
      if t ~= nil then
        t = as_tensor(t, "clip_by_global_norm", "t_list")
        -- clip_norm * min(1 / norm, 1 / clip_norm), plus (norm - norm): an
        -- infinite or NaN norm makes every entry NaN, as TensorFlow
        local nrm = tf.cast(norm, t.dtype)
        scale = tf.minimum(1 / nrm, 1 / clip_norm) * clip_norm + (nrm - nrm)
        out[i] = t * scale
      end
    end
    return out, norm
  end
end
