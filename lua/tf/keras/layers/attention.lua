--- Attention layers: MultiHeadAttention (Vaswani et al.'s, with Keras's
-- EinsumDense projections and weight names), Attention (Luong-style dot or
-- concat scores) and AdditiveAttention (Bahdanau-style scores), with
-- attention masks, causal masks and return_attention_scores.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local K = tf.core.internal.keras
  local raise = K.raise
  local sfmt = string.format
  local U = require("tf.keras.layers.util")(tf)

  local CHR = "abcdefghijklmnopqrstuvwxyz"
  local function chr(i) return CHR:sub(i, i) end

  local function is_plain(t) return type(t) == "table" and getmetatable(t) == nil end
  -- a tensor, a variable or a symbolic tensor (anything but a plain table)
  local function tensorish(x) return x ~= nil and not is_plain(x) and type(x) ~= "number" end

  local function dims_text(d)
    if d == nil then return "<unknown>" end
    local p = {}
    for i, x in ipairs(d) do p[i] = x < 0 and "None" or tostring(x) end
    return "(" .. table.concat(p, ", ") .. (#p == 1 and ",)" or ")")
  end

  -- The largest negative number added to masked scores: exp of it is
  -- exactly 0 next to any unmasked score, and it stays finite in float16.
  local function large_negative(dtype)
    if dtype == tf.float16 then return -65504.0 end
    return -1e9
  end

  -- softmax of `x` over the (sorted, 1-based) axes, positions where `mask`
  -- (bool, broadcast to x) is false getting no weight (Keras's Softmax with
  -- a mask: adds a large negative number there)
  local function masked_softmax(x, mask, axes)
    if mask ~= nil then
      x = x + (1.0 - tf.cast(mask, x.dtype)) * large_negative(x.dtype)
    end
    if #axes == 1 then return tf.nn.softmax(x, {axis = axes[1]}) end
    return tf.exp(x - tf.reduce_logsumexp(x, {axis = axes, keepdims = true}))
  end

  -- A lower-triangular bool [T, S] mask: query i sees keys j <= i.
  local function causal_mask(T, S)
    local rows = tf.reshape(tf.range(0, T, 1, tf.int32), {-1, 1})
    local cols = tf.reshape(tf.range(0, S, 1, tf.int32), {1, -1})
    return tf.greater_equal(rows, cols)
  end

  -- The causal mask [T, S] of queries `q` (sequence axis aq) over values
  -- `v` (axis av); sizes unknown while tracing come from the tensors.
  local function causal_mask_of(q, v, aq, av)
    local qd, vd = q:_dims(), v:_dims()
    local T, S = qd[aq], vd[av]
    if T >= 0 and S >= 0 then return causal_mask(T, S) end
    local function ones_along(x, ax, n)          -- ones of x's size along ax, as [n] after reshape
      local begin, size = {}, {}
      for i = 1, n do begin[i] = 1; size[i] = i == ax and -1 or 1 end
      return tf.ones_like(tf.slice(x, begin, size))
    end
    local rows = tf.reshape(ones_along(q, aq, #qd), {-1, 1})
    local cols = tf.reshape(ones_along(v, av, #vd), {1, -1})
    return tf.cast(tf.linalg.band_part(rows * cols, -1, 0), tf.bool)
  end

  local function band_and(a, b)
    if a == nil then return b end
    if b == nil then return a end
    return tf.logical_and(a, b)
  end

  local function as_bool(m)
    if m == nil then return nil end
    if tf.is_variable(m) then m = m:value() end
    if not tf.is_tensor(m) and is_plain(m) then m = tf.constant(m) end
    if m.dtype ~= tf.bool then m = tf.cast(m, tf.bool) end
    return m
  end

  -- {==== MultiHeadAttention
  local MHA = Layer:extend("MultiHeadAttention")
  L.MultiHeadAttention = MHA
  MHA._repr_args = {"num_heads", "key_dim", "value_dim"}
  MHA.supports_masking = true

  local MHA_KEYS = {"num_heads", "key_dim", "value_dim", "dropout", "use_bias", "output_shape", "attention_axes",
                    "kernel_initializer", "bias_initializer", "kernel_regularizer", "bias_regularizer",
                    "activity_regularizer", "kernel_constraint", "bias_constraint"}

  --- MultiHeadAttention{num_heads, key_dim, value_dim=key_dim, dropout=0,
  -- use_bias=true, output_shape=, attention_axes=, kernel_initializer=
  -- "glorot_uniform", bias_initializer="zeros", kernel/bias/activity
  -- regularizers, kernel/bias constraints}. attention_axes are 1-based axes of
  -- the query (default: every axis between the batch and the features).
  function MHA.init(self, opts)
    opts = self:_options(opts, MHA_KEYS, 2)
    self.num_heads = U.positive_int("MultiHeadAttention", "num_heads", opts[1] or opts.num_heads)
    self.key_dim = U.positive_int("MultiHeadAttention", "key_dim", opts[2] or opts.key_dim)
    self.value_dim = opts.value_dim and U.positive_int("MultiHeadAttention", "value_dim", opts.value_dim)
      or self.key_dim
    local rate = opts.dropout or 0
    if type(rate) ~= "number" or rate < 0 or rate >= 1 then
      raise("ValueError", sfmt("MultiHeadAttention: 'dropout' must be a number in [0, 1), got %s", tostring(rate)))
    end
    self.dropout = rate
    self.use_bias = opts.use_bias ~= false
    local os_ = opts.output_shape
    if os_ ~= nil then
      if math.type(os_) == "integer" then os_ = {os_} end
      if type(os_) ~= "table" then
        raise("TypeError", sfmt("MultiHeadAttention: 'output_shape' must be an integer or a table of them, got %s",
          tostring(opts.output_shape)))
      end
      os_ = {table.unpack(os_)}
    end
    self._output_shape = os_
    local ax = opts.attention_axes
    if math.type(ax) == "integer" then ax = {ax} end
    if ax ~= nil and type(ax) ~= "table" then
      raise("TypeError", sfmt("MultiHeadAttention: 'attention_axes' must be an integer or a table of them, got %s",
        tostring(ax)))
    end
    self._attention_axes_arg = ax and {table.unpack(ax)} or nil
    self._ids = {kernel_initializer = opts.kernel_initializer or "glorot_uniform",
                 bias_initializer = opts.bias_initializer or "zeros",
                 kernel_regularizer = opts.kernel_regularizer, bias_regularizer = opts.bias_regularizer,
                 activity_regularizer = opts.activity_regularizer, kernel_constraint = opts.kernel_constraint,
                 bias_constraint = opts.bias_constraint}
    keras.initializers.get(self._ids.kernel_initializer)   -- checked now
    keras.initializers.get(self._ids.bias_initializer)
  end

  -- Keras's _build_proj_equation: free dims kept, bound dims contracted,
  -- output dims added by the kernel (and spanned by the bias).
  local function proj_equation(free, bound, out)
    local i_s, k_s, o_s, bias = "", "", "", ""
    local n = 0
    for _ = 1, free do n = n + 1; i_s = i_s .. chr(n); o_s = o_s .. chr(n) end
    for _ = 1, bound do n = n + 1; i_s = i_s .. chr(n); k_s = k_s .. chr(n) end
    for _ = 1, out do n = n + 1; k_s = k_s .. chr(n); o_s = o_s .. chr(n); bias = bias .. chr(n) end
    return i_s .. "," .. k_s .. "->" .. o_s, bias
  end

  local function none_dims(n, last)
    local d = {}
    for i = 1, n do d[i] = -1 end
    for _, x in ipairs(last) do d[#d + 1] = x end
    return d
  end

  function MHA._sublayer(self, name, eq, out_shape, bias)
    local i = self._ids
    return L.EinsumDense{eq, out_shape, name = name, bias_axes = self.use_bias and bias or nil,
      kernel_initializer = i.kernel_initializer, bias_initializer = i.bias_initializer,
      kernel_regularizer = i.kernel_regularizer, bias_regularizer = i.bias_regularizer,
      activity_regularizer = i.activity_regularizer, kernel_constraint = i.kernel_constraint,
      bias_constraint = i.bias_constraint, dtype = self.dtype_policy or self.dtype}
  end

  --- Built from the shapes of query, value (and key).
  function MHA.build(self, shapes)
    local qs, vs, ks = shapes[1], shapes[2], shapes[3] or shapes[2]
    local qd, vd, kd = qs:as_list(), vs:as_list(), ks:as_list()
    if not (qd and vd and kd) then raise("ValueError", "MultiHeadAttention: the ranks of query, value and key must be known") end
    local rank = #qd
    if rank < 3 then
      raise("ValueError", sfmt("MultiHeadAttention: query must have rank >= 3 (batch, ..., features), got shape %s",
        dims_text(qd)))
    end
    if #vd ~= rank or #kd ~= rank then
      raise("ValueError", sfmt("MultiHeadAttention: query, value and key must have the same rank, got %s, %s and %s",
        dims_text(qd), dims_text(vd), dims_text(kd)))
    end
    for _, p in ipairs({{"query", qd}, {"value", vd}, {"key", kd}}) do
      if p[2][rank] < 0 then
        raise("ValueError", sfmt("MultiHeadAttention: the last dimension of %s must be known, got shape %s", p[1],
          dims_text(p[2])))
      end
    end
    self._rank = rank
    local nh = self.num_heads
    local eq, bias = proj_equation(rank - 1, 1, 2)
    self._query_dense = self:_sublayer("query", eq, none_dims(rank - 2, {nh, self.key_dim}), bias)
    self._key_dense = self:_sublayer("key", eq, none_dims(rank - 2, {nh, self.key_dim}), bias)
    self._value_dense = self:_sublayer("value", eq, none_dims(rank - 2, {nh, self.value_dim}), bias)
    self._query_dense:_maybe_build(qs)
    self._key_dense:_maybe_build(ks)
    self._value_dense:_maybe_build(vs)
    -- attention equations over the projected rank (+1: the heads axis)
    local r = rank + 1
    local axes = {}
    if self._attention_axes_arg then
      for i, a in ipairs(self._attention_axes_arg) do
        local b = a < 0 and rank + 1 + a or a
        if math.type(a) ~= "integer" or b < 2 or b > rank - 1 then
          raise("ValueError", sfmt("MultiHeadAttention: attention axis %s is out of range for a query of rank %d " ..
            "(axes 2..%d, or -%d..-2)", tostring(a), rank, rank - 1, rank - 1))
        end
        axes[i] = b
      end
      table.sort(axes)
    else
      for a = 2, rank - 1 do axes[#axes + 1] = a end
    end
    self._attention_axes = axes
    local is_attn = {}
    for _, a in ipairs(axes) do is_attn[a] = true end
    local target, source = "", ""
    local batch = {}
    local off = r
    for i = 1, r do
      target = target .. chr(i)
      if is_attn[i] then
        off = off + 1
        source = source .. chr(off)
      else
        source = source .. chr(i)
        if i ~= r then batch[#batch + 1] = i end
      end
    end
    local product = ""
    for _, i in ipairs(batch) do product = product .. chr(i) end
    for _, i in ipairs(axes) do product = product .. target:sub(i, i) end
    for _, i in ipairs(axes) do product = product .. source:sub(i, i) end
    self._dot_product_equation = source .. "," .. target .. "->" .. product
    self._combine_equation = product .. "," .. source .. "->" .. target
    local nr = #product
    self._norm_axes = {}
    for i = nr - #axes + 1, nr do self._norm_axes[#self._norm_axes + 1] = i end
    -- the mask [batch, T.., S..] gets the heads axis at -#axes*2 - 1
    self._mask_expand_axis = nr - 2 * #axes
    local out_eq, out_bias = proj_equation(rank - 1, 2, self._output_shape and #self._output_shape or 1)
    self._output_dense = self:_sublayer("attention_output", out_eq,
      none_dims(rank - 2, self._output_shape or {qd[rank]}), out_bias)
    local pd = {}
    for i = 1, rank - 1 do pd[i] = qd[i] end
    pd[rank], pd[rank + 1] = nh, self.value_dim
    self._output_dense:_maybe_build(tf.TensorShape(pd))
    -- the default layout (batch, T, heads, dim) runs as batched matmuls
    self._fast = #axes == 1 and rank == 3
  end

  local CALL_KEYS = {training = true, mask = true, attention_mask = true, use_causal_mask = true,
                     return_attention_scores = true, value = true, key = true, query_mask = true,
                     value_mask = true, key_mask = true}

  --- mha(query, value [, key] [, opts]), mha({query, value [, key]} [, opts])
  -- or mha(query, {value =, key =, ...}); opts: attention_mask (bool
  -- [batch, T, S], true = may attend), use_causal_mask, return_attention_scores
  -- (then the result is {output, scores}, scores [batch, heads, T, S]),
  -- training (attention dropout), query_mask / value_mask / key_mask (default:
  -- the masks the tensors carry).
  function MHA.__call_layer(self, query, a, b, c)
    local value, key, opts
    if is_plain(query) and tensorish(query[1]) then
      value, key, opts = query[2], query[3], a
      query = query[1]
      if b ~= nil then
        raise("TypeError", "MultiHeadAttention: with a table of inputs {query, value [, key]}, the only other " ..
          "argument is the options table")
      end
    elseif tensorish(a) then
      value = a
      if tensorish(b) then
        key, opts = b, c
      elseif b == nil and c ~= nil then
        opts = c                        -- mha(query, value, nil, opts): no key
      else
        opts = b
      end
    else
      opts = a
      if is_plain(opts) then value, key = opts.value, opts.key end
    end
    if opts ~= nil and not is_plain(opts) then
      raise("TypeError", sfmt("MultiHeadAttention: the options must be a table, got %s", type(opts)))
    end
    opts = opts or {}
    for k in pairs(opts) do
      if not CALL_KEYS[k] then
        local names = {}
        for n in pairs(CALL_KEYS) do names[#names + 1] = n end
        table.sort(names)
        raise("TypeError", sfmt("MultiHeadAttention: unknown call option '%s' (accepted: %s)", tostring(k),
          table.concat(names, ", ")))
      end
    end
    if value == nil then
      raise("ValueError", "MultiHeadAttention: 'value' must be given: mha(query, value [, key] [, opts]), " ..
        "mha({query, value [, key]} [, opts]) or mha(query, {value = value})")
    end
    local o = {}
    for k, v in pairs(opts) do if k ~= "value" and k ~= "key" then o[k] = v end end
    rawset(self, "_return_scores", opts.return_attention_scores and true or false)
    return Layer.__call_layer(self, {query, value, key}, o)
  end

  --- The output carries the query's mask (the scores carry none).
  function MHA.compute_mask(self, _, mask)
    local qm = type(mask) == "table" and getmetatable(mask) == nil and mask[1] or nil
    if rawget(self, "_return_scores") then return {qm} end
    return qm
  end

  -- Keras's _compute_attention_mask: query, value and key masks, the
  -- explicit mask and the causal mask combined (bool, true = attend).
  function MHA._compute_attention_mask(self, q, v, qm, vm, km, attention_mask, causal)
    local rank = self._rank
    local auto
    local function expand(m, where)   -- [batch, T..] -> [batch, T.., 1..] or [batch, 1.., S..]
      for _ = 1, rank - 2 do m = tf.expand_dims(m, where == "q" and -1 or 2) end
      return m
    end
    if qm ~= nil then auto = expand(as_bool(qm), "q") end
    if vm ~= nil then auto = band_and(auto, expand(as_bool(vm), "v")) end
    if km ~= nil then auto = band_and(auto, expand(as_bool(km), "v")) end
    if causal then
      if rank ~= 3 then
        raise("UnimplementedError", "MultiHeadAttention: use_causal_mask needs inputs of rank 3 (batch, T, dim)")
      end
      auto = band_and(auto, tf.expand_dims(causal_mask_of(q, v, 2, 2), 1))
    end
    if attention_mask ~= nil then
      attention_mask = as_bool(attention_mask)
      local md = attention_mask:_dims()
      if md and #md ~= 2 * (rank - 2) + 1 and #md ~= 2 * (rank - 2) then
        raise("ValueError", sfmt("MultiHeadAttention: 'attention_mask' must have shape (batch, T, S) (rank %d), " ..
          "got %s", 2 * (rank - 2) + 1, dims_text(md)))
      end
      if md and #md == 2 * (rank - 2) then attention_mask = tf.expand_dims(attention_mask, 1) end   -- (T, S): every example
      md = attention_mask:_dims()
      if md and rank == 3 then
        local qd, vd = q:_dims(), v:_dims()
        local want = {qd[1], qd[2], vd[2]}
        for i = 1, 3 do
          local j = i - (3 - #md)
          if j >= 1 and md[j] >= 0 and want[i] >= 0 and md[j] ~= want[i] and md[j] ~= 1 then
            raise("ValueError", sfmt("MultiHeadAttention: 'attention_mask' of shape %s does not fit queries and " ..
              "values (batch, T, S) = %s", dims_text(md), dims_text(want)))
          end
        end
      end
      return band_and(attention_mask, auto)
    end
    return auto
  end

  function MHA.call(self, inputs, opts)
    local q, v = inputs[1], inputs[2]
    local k = inputs[3] or v
    local masks = opts.mask
    if not is_plain(masks) then masks = {} end
    local qm = opts.query_mask; if qm == nil then qm = masks[1] end
    local vm = opts.value_mask; if vm == nil then vm = masks[2] end
    local km = opts.key_mask; if km == nil then km = inputs[3] and masks[3] or nil end
    local rank = self._rank
    for i, x in ipairs({q, v, k}) do
      local d = x:_dims()
      if d and #d ~= rank then
        raise("ValueError", sfmt("MultiHeadAttention: %s has rank %d, the layer was built for rank %d (shape %s)",
          ({"query", "value", "key"})[i], #d, rank, dims_text(d)))
      end
    end
    local vd, kd = v:_dims(), k:_dims()
    for i = 2, rank - 1 do
      if vd[i] >= 0 and kd[i] >= 0 and vd[i] ~= kd[i] then
        raise("ValueError", sfmt("MultiHeadAttention: key and value must have the same sequence shape, got key %s " ..
          "and value %s", dims_text(kd), dims_text(vd)))
      end
    end
    local mask = self:_compute_attention_mask(q, v, qm, vm, km, opts.attention_mask, opts.use_causal_mask)
    local query = self._query_dense(q)          -- [B, T, N, H]
    local key = self._key_dense(k)              -- [B, S, N, H]
    local value = self._value_dense(v)          -- [B, S, N, Hv]
    query = query * (1.0 / math.sqrt(self.key_dim))
    local scores, out
    if mask ~= nil then mask = tf.expand_dims(mask, self._mask_expand_axis) end
    if self._fast then
      -- [B, N, T, H] x [B, N, H, S] -> [B, N, T, S]
      local qt = tf.transpose(query, {1, 3, 2, 4})
      local kt = tf.transpose(key, {1, 3, 2, 4})
      scores = tf.matmul(qt, kt, {transpose_b = true})
      scores = masked_softmax(scores, mask, self._norm_axes)
      local w = scores
      if opts.training and self.dropout > 0 then w = tf.nn.dropout(w, self.dropout) end
      local vt = tf.transpose(value, {1, 3, 2, 4})
      out = tf.transpose(tf.matmul(w, vt), {1, 3, 2, 4})    -- [B, T, N, Hv]
    else
      scores = tf.einsum(self._dot_product_equation, key, query)
      scores = masked_softmax(scores, mask, self._norm_axes)
      local w = scores
      if opts.training and self.dropout > 0 then w = tf.nn.dropout(w, self.dropout) end
      out = tf.einsum(self._combine_equation, w, value)
    end
    out = self._output_dense(out)
    if opts.return_attention_scores then return {out, scores} end
    return out
  end

  function MHA.get_config(self)
    local c = Layer.get_config(self)
    c.num_heads, c.key_dim, c.value_dim = self.num_heads, self.key_dim, self.value_dim
    c.dropout, c.use_bias = self.dropout, self.use_bias
    c.output_shape = self._output_shape and {table.unpack(self._output_shape)} or nil
    c.attention_axes = self._attention_axes_arg and {table.unpack(self._attention_axes_arg)} or nil
    for k, v in pairs(self._ids) do c[k] = v end
    return c
  end
  -- }====

  -- {==== Attention and AdditiveAttention (Keras's BaseDenseAttention)
  local function base_call_layer(cname)
    return function(self, inputs, opts)
      if not is_plain(inputs) or not tensorish(inputs[1]) then
        raise("ValueError", sfmt("%s: expects a table of inputs {query, value} or {query, value, key}, got %s",
          cname, tensorish(inputs) and "one tensor" or type(inputs)))
      end
      local n = #inputs
      if n < 2 or n > 3 then
        raise("ValueError", sfmt("%s: expects a table of inputs {query, value} or {query, value, key}, got %d " ..
          "inputs", cname, n))
      end
      if opts ~= nil and not is_plain(opts) then
        raise("TypeError", sfmt("%s: the options must be a table, got %s", cname, type(opts)))
      end
      opts = opts or {}
      for k in pairs(opts) do
        if k ~= "mask" and k ~= "training" and k ~= "return_attention_scores" and k ~= "use_causal_mask" then
          raise("TypeError", sfmt("%s: unknown call option '%s' (accepted: mask, return_attention_scores, training, " ..
            "use_causal_mask)", cname, tostring(k)))
        end
      end
      if opts.mask ~= nil and not is_plain(opts.mask) then
        raise("ValueError", sfmt("%s: 'mask' must be a table {query_mask, value_mask}", cname))
      end
      rawset(self, "_return_scores", opts.return_attention_scores and true or false)
      return Layer.__call_layer(self, inputs, opts)
    end
  end

  local function base_init(self, cname, opts, extra)
    local keys = {"dropout"}
    for _, k in ipairs(extra) do keys[#keys + 1] = k end
    opts = self:_options(opts, keys, 0)
    local rate = opts.dropout or 0
    if type(rate) ~= "number" or rate < 0 or rate >= 1 then
      raise("ValueError", sfmt("%s: 'dropout' must be a number in [0, 1), got %s", cname, tostring(rate)))
    end
    self.dropout = rate
    return opts
  end

  local function check_shapes(cname, q, v, k)
    local qd, vd, kd = q:_dims(), v:_dims(), k:_dims()
    if qd and #qd < 2 then
      raise("ValueError", sfmt("%s: query must have rank >= 2, got shape %s", cname, dims_text(qd)))
    end
    if qd and vd and #qd ~= #vd then
      raise("ValueError", sfmt("%s: query and value must have the same rank, got %s and %s", cname, dims_text(qd),
        dims_text(vd)))
    end
    if vd and kd and kd[#kd - 1] >= 0 and vd[#vd - 1] >= 0 and kd[#kd - 1] ~= vd[#vd - 1] then
      raise("ValueError", sfmt("%s: key and value must have the same length, got key %s and value %s", cname,
        dims_text(kd), dims_text(vd)))
    end
  end

  -- scores [.., Tq, Tv] -> (weighted values, weights); Keras's _apply_scores
  local function apply_scores(self, scores, v, q, qm, vm, opts)
    local smask
    if vm ~= nil then smask = tf.expand_dims(as_bool(vm), -2) end      -- [B, 1, Tv]
    if opts.use_causal_mask then
      smask = band_and(smask, causal_mask_of(q, v, #q:_dims() - 1, #v:_dims() - 1))
    end
    if smask ~= nil then
      local big = scores.dtype == tf.float16 and 65504.0 or 1e9
      scores = scores - big * tf.cast(tf.logical_not(smask), scores.dtype)
    end
    local weights = tf.nn.softmax(scores)
    local w = weights
    if opts.training and self.dropout > 0 then w = tf.nn.dropout(w, self.dropout) end
    local result = tf.matmul(w, v)
    if qm ~= nil then result = result * tf.cast(tf.expand_dims(as_bool(qm), -1), result.dtype) end
    if opts.return_attention_scores then return {result, weights} end
    return result
  end

  local function base_compute_mask(self, _, mask)
    local qm = is_plain(mask) and mask[1] or nil
    if rawget(self, "_return_scores") then return {qm} end
    return qm
  end

  local Attention = Layer:extend("Attention")
  L.Attention = Attention
  Attention._repr_args = {"use_scale", "score_mode"}
  Attention.supports_masking = true
  Attention.__call_layer = base_call_layer("Attention")
  Attention.compute_mask = base_compute_mask

  --- Attention{use_scale=false, score_mode="dot", dropout=0}: dot-product
  -- (or "concat") attention of queries [batch, Tq, dim] over values
  -- [batch, Tv, dim]: `att({query, value [, key]} [, {mask = {query_mask,
  -- value_mask}, use_causal_mask =, return_attention_scores =, training =}])`.
  function Attention.init(self, opts)
    opts = base_init(self, "Attention", opts, {"use_scale", "score_mode"})
    self.use_scale = opts.use_scale and true or false
    local mode = opts.score_mode or "dot"
    if mode ~= "dot" and mode ~= "concat" then
      raise("ValueError", sfmt("Attention: 'score_mode' must be \"dot\" or \"concat\", got %s", tostring(mode)))
    end
    self.score_mode = mode
  end

  function Attention.build(self, _)
    if self.use_scale then self.scale = self:add_weight("scale", {}, {initializer = "ones"}) end
    if self.score_mode == "concat" then
      self.concat_score_weight = self:add_weight("concat_score_weight", {}, {initializer = "ones"})
    end
  end

  function Attention.call(self, inputs, opts)
    local q, v = inputs[1], inputs[2]
    local k = inputs[3] or v
    check_shapes("Attention", q, v, k)
    local masks = is_plain(opts.mask) and opts.mask or {}
    local scores
    if self.score_mode == "dot" then
      scores = tf.matmul(q, k, {transpose_b = true})
      if self.scale then scores = scores * self.scale end
    else
      local qr, kr = tf.expand_dims(q, -2), tf.expand_dims(k, -3)
      local s = qr + kr
      if self.scale then s = s * self.scale end
      scores = self.concat_score_weight * tf.reduce_sum(tf.tanh(s), {axis = -1})
    end
    return apply_scores(self, scores, v, q, masks[1], masks[2], opts)
  end

  function Attention.get_config(self)
    local c = Layer.get_config(self)
    c.use_scale, c.score_mode, c.dropout = self.use_scale, self.score_mode, self.dropout
    return c
  end

  local Additive = Layer:extend("AdditiveAttention")
  L.AdditiveAttention = Additive
  Additive._repr_args = {"use_scale"}
  Additive.supports_masking = true
  Additive.__call_layer = base_call_layer("AdditiveAttention")
  Additive.compute_mask = base_compute_mask

  --- AdditiveAttention{use_scale=true, dropout=0}: Bahdanau-style scores
  -- sum(scale * tanh(query + key)) over the features; called as Attention.
  function Additive.init(self, opts)
    opts = base_init(self, "AdditiveAttention", opts, {"use_scale"})
    self.use_scale = opts.use_scale ~= false
  end

  function Additive.build(self, shapes)
    local vd = shapes[2]:as_list()
    local dim = vd and vd[#vd]
    if not dim or dim < 0 then
      raise("ValueError", sfmt("AdditiveAttention: the last dimension of value must be known, got %s",
        tostring(shapes[2])))
    end
    if self.use_scale then self.scale = self:add_weight("scale", {dim}, {initializer = "glorot_uniform"}) end
  end

  function Additive.call(self, inputs, opts)
    local q, v = inputs[1], inputs[2]
    local k = inputs[3] or v
    check_shapes("AdditiveAttention", q, v, k)
    local masks = is_plain(opts.mask) and opts.mask or {}
    local s = tf.tanh(tf.expand_dims(q, -2) + tf.expand_dims(k, -3))
    if self.scale then s = s * self.scale end
    local scores = tf.reduce_sum(s, {axis = -1})
    return apply_scores(self, scores, v, q, masks[1], masks[2], opts)
  end

  function Additive.get_config(self)
    local c = Layer.get_config(self)
    c.use_scale, c.dropout = self.use_scale, self.dropout
    return c
  end
  -- }====
end
