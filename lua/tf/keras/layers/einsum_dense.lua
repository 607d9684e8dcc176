--- EinsumDense: a dense layer whose contraction is an einsum equation
-- ("abc,cd->abd"), the projection MultiHeadAttention is made of.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format
  local A = keras.activations

  local ED = Layer:extend("EinsumDense")
  L.EinsumDense = ED
  ED._repr_args = {"equation", "bias_axes"}

  local KEYS = {"equation", "output_shape", "activation", "bias_axes", "kernel_initializer", "bias_initializer",
                "kernel_regularizer", "bias_regularizer", "activity_regularizer", "kernel_constraint",
                "bias_constraint"}

  local function dims_text(d)
    local p = {}
    for i, x in ipairs(d) do p[i] = (x == nil or x < 0) and "None" or tostring(x) end
    return "(" .. table.concat(p, ", ") .. (#p == 1 and ",)" or ")")
  end

  --- EinsumDense{equation, output_shape, activation=, bias_axes=,
  -- kernel_initializer="glorot_uniform", bias_initializer="zeros",
  -- kernel/bias/activity regularizers, kernel/bias constraints}:
  -- activation(einsum(equation, x, kernel) + bias). output_shape is the
  -- output's shape without the batch dimension (a number for rank 2; -1 or
  -- tf.None for a dimension taken from the input); bias_axes names the output
  -- letters the bias spans ("de"), nil for no bias. Equations are Keras's:
  -- "X,Y->Z", "...X,Y->...Z" or "X...,Y->Z...".
  function ED.init(self, opts)
    opts = self:_options(opts, KEYS, 2)
    local eq = opts[1] or opts.equation
    if type(eq) ~= "string" then
      raise("TypeError", sfmt("EinsumDense: 'equation' must be a string, got %s", type(eq)))
    end
    local os_ = opts[2] or opts.output_shape
    if math.type(os_) == "integer" then os_ = {os_} end
    if type(os_) ~= "table" then
      raise("TypeError", sfmt("EinsumDense: 'output_shape' must be an integer or a table of dims, got %s",
        tostring(os_)))
    end
    self.equation = eq
    local shp = {}
    for i, d in ipairs(os_) do shp[i] = d end
    self.partial_output_shape = shp
    self.activation = A.get(opts.activation)
    self.bias_axes = opts.bias_axes
    self._init_ids = {kernel = opts.kernel_initializer or "glorot_uniform", bias = opts.bias_initializer or "zeros"}
    self.kernel_initializer = keras.initializers.get(self._init_ids.kernel)
    self.bias_initializer = keras.initializers.get(self._init_ids.bias)
    self._reg = {kernel_regularizer = opts.kernel_regularizer, bias_regularizer = opts.bias_regularizer,
                 activity_regularizer = opts.activity_regularizer, kernel_constraint = opts.kernel_constraint,
                 bias_constraint = opts.bias_constraint}
    -- applied by the base after call, once tf.keras.regularizers exists
    local R = keras.regularizers
    if opts.activity_regularizer ~= nil and R and R.get then self.activity_regularizer = R.get(opts.activity_regularizer) end
  end

  local function index_of(s, c) local i = s:find(c, 1, true); return i end

  -- Keras's _analyze_split_string: the kernel's shape, the bias's shape
  -- (broadcast against the output) and the full output shape (batch first).
  local function analyze(self, input_spec, weight_spec, output_spec, input_shape, left_elided)
    local eq = self.equation
    local nin = #input_shape
    local elided = nin - #input_spec
    local out = {input_shape[1]}
    for _, d in ipairs(self.partial_output_shape) do out[#out + 1] = d end
    if elided > 0 and left_elided then
      for i = 2, elided do table.insert(out, 2, input_shape[i]) end
    elseif elided > 0 then
      for i = nin - elided + 1, nin do out[#out + 1] = input_shape[i] end
    end
    local in_map, out_map = {}, {}
    for i = 1, #input_spec do
      local c = input_spec:sub(i, i)
      in_map[c] = left_elided and (i + elided) or i
    end
    for i = 1, #output_spec do
      local c = output_spec:sub(i, i)
      out_map[c] = left_elided and (i + elided) or i
    end
    for i = 1, #input_spec do
      local c = input_spec:sub(i, i)
      local di = input_shape[in_map[c]]
      if out_map[c] then
        local dout = out[out_map[c]]
        if dout ~= nil and dout >= 0 and di >= 0 and dout ~= di then
          raise("ValueError", sfmt("EinsumDense: input shape and output shape do not match at shared dimension " ..
            "'%s' of '%s': input shape is %s, output shape is %s", c, eq, dims_text(input_shape), dims_text(out)))
        end
        if dout == nil or dout < 0 then out[out_map[c]] = di end
      end
    end
    for i = 1, #output_spec do
      local c = output_spec:sub(i, i)
      if not index_of(input_spec, c) and not index_of(weight_spec, c) then
        raise("ValueError", sfmt("EinsumDense: dimension '%s' of the output '%s' has no matching dimension in the " ..
          "input '%s' or the weight '%s'", c, output_spec, input_spec, weight_spec))
      end
    end
    local wshape = {}
    for i = 1, #weight_spec do
      local c = weight_spec:sub(i, i)
      local d
      if in_map[c] then d = input_shape[in_map[c]] elseif out_map[c] then d = out[out_map[c]] end
      if d == nil then
        raise("ValueError", sfmt("EinsumDense: weight dimension '%s' of '%s' matches neither the input '%s' nor " ..
          "the output '%s'", c, eq, input_spec, output_spec))
      end
      if d < 0 then
        raise("ValueError", sfmt("EinsumDense: weight dimension '%s' of '%s' must be known, got None (input " ..
          "shape %s)", c, eq, dims_text(input_shape)))
      end
      wshape[i] = d
    end
    local bshape
    if self.bias_axes then
      local first
      for i = 1, #self.bias_axes do
        local c = self.bias_axes:sub(i, i)
        local at = index_of(output_spec, c)
        if not at then
          raise("ValueError", sfmt("EinsumDense: bias dimension '%s' is not part of the output '%s'", c, output_spec))
        end
        first = first and math.min(first, at) or at
      end
      bshape = {}
      for i = first, #output_spec do
        local c = output_spec:sub(i, i)
        bshape[#bshape + 1] = index_of(self.bias_axes, c) and out[out_map[c]] or 1
      end
      if not left_elided then for _ = 1, elided do bshape[#bshape + 1] = 1 end end
    end
    return wshape, bshape, out
  end

  function ED.build(self, input_shape)
    local dims = input_shape:as_list()
    if dims == nil then raise("ValueError", sfmt("layer \"%s\": the input rank must be known", self.name)) end
    local eq = self.equation:gsub("%s", ""):gsub("%.%.%.", "0")
    local a, b, c = eq:match("^(%a+),(%a+)%->(%a+)$")
    local wshape, bshape, out
    if a then
      if #a ~= #dims then
        raise("ValueError", sfmt("EinsumDense: the equation '%s' expects inputs of rank %d, got shape %s",
          self.equation, #a, tostring(input_shape)))
      end
      wshape, bshape, out = analyze(self, a, b, c, dims, false)
    else
      a, b, c = eq:match("^0(%a+),(%a+)%->0(%a+)$")
      if a then
        wshape, bshape, out = analyze(self, a, b, c, dims, true)
      else
        a, b, c = eq:match("^(%a%a+)0,(%a+)%->(%a+)0$")
        if not a then
          raise("ValueError", sfmt("EinsumDense: invalid equation '%s'; equations must be in the form " ..
            "[X],[Y]->[Z], ...[X],[Y]->...[Z] or [X]...,[Y]->[Z]...", self.equation))
        end
        wshape, bshape, out = analyze(self, a, b, c, dims, false)
      end
    end
    self.full_output_shape = out
    local r = self._reg
    self.kernel = self:add_weight("kernel", wshape, {initializer = self.kernel_initializer,
      regularizer = r.kernel_regularizer, constraint = r.kernel_constraint})
    if bshape then
      self._bias_shape = bshape
      -- Keras stores the bias in bias_shape's form
      self.bias = self:add_weight("bias", bshape, {initializer = self.bias_initializer,
        regularizer = r.bias_regularizer, constraint = r.bias_constraint})
    end
  end

  function ED.compute_output_shape(self, shape)
    if not self.full_output_shape then self:_maybe_build(shape) end
    local d = {}
    for i, x in ipairs(self.full_output_shape) do d[i] = x end
    local s = shape:as_list()
    if s then d[1] = s[1] end
    return tf.TensorShape(d)
  end

  -- The projection form "<free><bound>,<bound><out>-><free><out>" (what
  -- MultiHeadAttention uses): one matmul over the flattened free dims, which
  -- may be of unknown size. Returns nfree, nbound, the output dims, or nil.
  local function projection_form(eq, kernel_dims)
    local a, b, c = eq:gsub("%s", ""):match("^(%a+),(%a+)%->(%a+)$")
    if not a then return nil end
    for nfree = 1, #a - 1 do
      local free, bound = a:sub(1, nfree), a:sub(nfree + 1)
      if b:sub(1, #bound) == bound and c == free .. b:sub(#bound + 1) and #b > #bound then
        local outd = {}
        for i = #bound + 1, #b do outd[#outd + 1] = kernel_dims[i] end
        return nfree, #bound, outd
      end
    end
    return nil
  end

  function ED.call(self, x)
    local proj = rawget(self, "_proj")
    if proj == nil then
      local nfree, nbound, outd = projection_form(self.equation, self.kernel.shape:as_list())
      proj = nfree and {nfree = nfree, nbound = nbound, outd = outd} or false
      if proj then
        local kd = self.kernel.shape:as_list()
        local kin, kout = 1, 1
        for i = 1, nbound do kin = kin * kd[i] end
        for _, d in ipairs(outd) do kout = kout * d end
        proj.kin, proj.kout = kin, kout
      end
      rawset(self, "_proj", proj)
    end
    local y
    local xd = x:_dims()
    if proj and xd and #xd == proj.nfree + proj.nbound then
      local unknown, shape = 0, {}
      local xs
      for i = 1, proj.nfree do
        shape[i] = xd[i]
        if xd[i] < 0 then
          unknown = unknown + 1
          if unknown > 1 then   -- several unknown dims: read them when the graph runs
            xs = xs or tf.shape(x)
            shape[i] = xs[i]
          end
        end
      end
      for _, d in ipairs(proj.outd) do shape[#shape + 1] = d end
      local kernel = self.kernel:value()
      if unknown > 1 and proj.nbound == 1 and #proj.outd == 1 then
        y = tf.matmul(x, kernel)   -- one broadcast matmul: no reshapes needed
      else
        -- [free.., bound..] as (-1, kin) . (kin, kout), back to [free.., out..]
        if proj.nbound > 1 or #proj.outd > 1 then kernel = tf.reshape(kernel, {proj.kin, proj.kout}) end
        local flat = (proj.nfree == 1 and proj.nbound == 1) and x or tf.reshape(x, {-1, proj.kin})
        y = tf.reshape(tf.matmul(flat, kernel), shape)
      end
    end
    if y == nil then y = tf.einsum(self.equation, x, self.kernel) end
    if self.bias then y = y + self.bias end
    return self.activation(y)
  end

  function ED.get_config(self)
    local c = Layer.get_config(self)
    c.equation = self.equation
    c.output_shape = {table.unpack(self.partial_output_shape)}
    c.activation = A.serialize(self.activation) or self.activation
    c.bias_axes = self.bias_axes
    c.kernel_initializer = self._init_ids.kernel
    c.bias_initializer = self._init_ids.bias
    for k, v in pairs(self._reg) do c[k] = v end
    return c
  end
end
