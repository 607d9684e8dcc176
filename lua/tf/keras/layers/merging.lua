--- Merge layers: Add, Subtract, Multiply, Average, Maximum, Minimum,
-- Concatenate, Dot, and their functional forms (tf.keras.layers.add{a, b}, ...).
-- Each takes an array of tensors (at least 2; Subtract and Dot exactly 2).
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local K = tf.core.internal.keras
  local raise = K.raise
  local sfmt = string.format

  local function shape_text(s)
    local dims = s:as_list()
    if dims == nil then return "<unknown>" end
    return K.dims_text(dims)
  end

  local function shapes_text(shapes)
    local parts = {}
    for i, s in ipairs(shapes) do parts[i] = shape_text(s) end
    return table.concat(parts, ", ")
  end

  -- The input shapes as an array of TensorShapes, checked to be a list of
  -- at least `min` (exactly `exact`) inputs.
  local function input_shapes(self, input_shape, min, exact)
    local cname = self._class_name
    if getmetatable(input_shape) == tf.TensorShape.mt or type(input_shape) ~= "table" or #input_shape == 0 then
      raise("ValueError", sfmt("%s: layer \"%s\" should be called on an array of inputs {a, b, ...}, got a single " ..
        "tensor", cname, self.name))
    end
    if exact and #input_shape ~= exact then
      raise("ValueError", sfmt("%s: layer \"%s\" should be called on exactly %d inputs, got %d", cname, self.name,
        exact, #input_shape))
    end
    if #input_shape < min then
      raise("ValueError", sfmt("%s: layer \"%s\" should be called on an array of at least %d inputs, got %d",
        cname, self.name, min, #input_shape))
    end
    return input_shape
  end

  -- {==== elementwise merges
  local function elementwise(name, reduce)
    local cls = Layer:extend(name)
    L[name] = cls
    cls._repr_args = {}
    cls.supports_masking = true
    local exact = name == "Subtract" and 2 or nil
    function cls.init(self, opts) self:_options(opts, {}, 0) end
    --- Inputs broadcast against each other (sizes equal, or 1, or unknown),
    -- counted from the last dimension.
    function cls.build(self, input_shape)
      local shapes = input_shapes(self, input_shape, 2, exact)
      local out = shapes[1]:as_list()
      for i = 2, #shapes do
        local d = shapes[i]:as_list()
        if out and d then
          local n = math.max(#out, #d)
          local r = {}
          for k = 0, n - 1 do
            local a, b = out[#out - k], d[#d - k]
            local v
            if a == nil then v = b elseif b == nil then v = a
            elseif a == b or b == 1 then v = a
            elseif a == 1 then v = b
            elseif a < 0 then v = b elseif b < 0 then v = a
            elseif k == n - 1 then v = a          -- the batch dimension
            else
              raise("ValueError", sfmt("%s: layer \"%s\": inputs have incompatible shapes: received shapes %s",
                name, self.name, shapes_text(shapes)))
            end
            r[n - k] = v
          end
          out = r
        end
      end
    end
    function cls.call(_, inputs)
      local out = inputs[1]
      for i = 2, #inputs do out = reduce(out, inputs[i]) end
      if name == "Average" then out = out / #inputs end
      return out
    end
    --- The output mask: the inputs' masks and-ed (nil when none has one).
    function cls.compute_mask(_, _, mask)
      if mask == nil then return nil end
      local out
      for _, m in pairs(mask) do
        if out == nil then out = m else out = tf.logical_and(out, m) end
      end
      return out
    end
    return cls
  end
  elementwise("Add", function(a, b) return a + b end)
  elementwise("Subtract", function(a, b) return a - b end)
  elementwise("Multiply", function(a, b) return a * b end)
  elementwise("Average", function(a, b) return a + b end)
  elementwise("Maximum", function(a, b) return tf.maximum(a, b) end)
  elementwise("Minimum", function(a, b) return tf.minimum(a, b) end)
  -- }====

  -- {==== Concatenate
  local Concatenate = Layer:extend("Concatenate")
  L.Concatenate = Concatenate
  Concatenate._repr_args = {"axis"}
  Concatenate.supports_masking = true
  --- Concatenate{axis = -1}: joins its inputs along `axis` (1-based, the
  -- batch is axis 1; negative from the end).
  function Concatenate.init(self, opts)
    opts = self:_options(opts, {"axis"}, 1)
    local axis = opts.axis or opts[1] or -1
    if math.type(axis) ~= "integer" or axis == 0 then
      raise("ValueError", sfmt("Concatenate: 'axis' must be a nonzero integer (1-based, negative from the end), got %s",
        tostring(axis)))
    end
    self.axis = axis
  end
  function Concatenate.build(self, input_shape)
    local shapes = input_shapes(self, input_shape, 1)
    local rank
    for _, s in ipairs(shapes) do
      local d = s:as_list()
      if d then
        if rank and #d ~= rank then rank = -1; break end
        rank = rank or #d
      end
    end
    local bad = rank == -1
    if not bad and rank then
      local ax = self.axis < 0 and rank + 1 + self.axis or self.axis
      if ax < 1 or ax > rank then
        raise("ValueError", sfmt("Concatenate: layer \"%s\": axis %d is out of range for inputs of rank %d",
          self.name, self.axis, rank))
      end
      for k = 2, rank do
        if k ~= ax then
          local size
          for _, s in ipairs(shapes) do
            local d = s:as_list()
            if d and d[k] >= 0 then
              if size and d[k] ~= size then bad = true end
              size = size or d[k]
            end
          end
        end
      end
    end
    if bad then
      raise("ValueError", sfmt("Concatenate: layer \"%s\" requires inputs with matching shapes except for the " ..
        "concatenation axis %d, received shapes %s", self.name, self.axis, shapes_text(shapes)))
    end
  end
  function Concatenate.call(self, inputs)
    if #inputs == 1 then return inputs[1] end
    return tf.concat(inputs, self.axis)
  end
  --- The output mask: the inputs' masks (all-true where an input has none)
  -- joined along the axis when it is not the last one, all-and otherwise.
  function Concatenate.compute_mask(self, inputs, mask)
    if mask == nil then return nil end
    local ms = {}
    for i, x in ipairs(inputs) do
      local m = mask[i]
      if m == nil then
        local shp = tf.shape(x)
        local r = #x:_dims()
        m = tf.fill(tf.slice(shp, {1}, {r - 1}), true)
      end
      ms[i] = m
    end
    local r = #inputs[1]:_dims()
    local ax = self.axis < 0 and r + 1 + self.axis or self.axis
    if ax == r then
      local out = ms[1]
      for i = 2, #ms do out = tf.logical_and(out, ms[i]) end
      return out
    end
    return tf.concat(ms, ax)
  end
  function Concatenate.get_config(self)
    local c = Layer.get_config(self)
    c.axis = self.axis
    return c
  end
  -- }====

  -- {==== Dot
  local Dot = Layer:extend("Dot")
  L.Dot = Dot
  Dot._repr_args = {"axes", "normalize"}
  --- Dot{axes =, normalize = false}: the dot product of two inputs along
  -- `axes` (one axis for both, or {axis_a, axis_b}; 1-based, the batch is
  -- axis 1, negative from the end) per sample; normalize: L2-normalize the
  -- inputs along those axes first (cosine proximity).
  function Dot.init(self, opts)
    opts = self:_options(opts, {"axes", "normalize"}, 1)
    local axes = opts.axes or opts[1]
    if axes == nil then raise("TypeError", "Dot: 'axes' is required, e.g. Dot{axes = 2}") end
    local list = type(axes) == "table" and axes or {axes, axes}
    if #list ~= 2 or math.type(list[1]) ~= "integer" or math.type(list[2]) ~= "integer" or list[1] == 0 or
       list[2] == 0 then
      raise("TypeError", "Dot: 'axes' must be a nonzero integer or a table of two, e.g. Dot{axes = {2, 3}}")
    end
    self.axes = axes
    self._ax = {list[1], list[2]}
    self.normalize = opts.normalize or false
  end
  local function resolve(ax, r) return ax < 0 and r + 1 + ax or ax end
  function Dot.build(self, input_shape)
    local shapes = input_shapes(self, input_shape, 2, 2)
    local a, b = shapes[1]:as_list(), shapes[2]:as_list()
    if not a or not b then return end
    if #a < 2 or #a > 3 or #b < 2 or #b > 3 then
      raise("ValueError", sfmt("Dot: layer \"%s\" supports inputs of rank 2 or 3, received shapes %s", self.name,
        shapes_text(shapes)))
    end
    local xa, xb = resolve(self._ax[1], #a), resolve(self._ax[2], #b)
    if xa < 2 or xa > #a or xb < 2 or xb > #b then
      raise("ValueError", sfmt("Dot: layer \"%s\": axes {%d, %d} are out of range (or the batch axis) for shapes %s",
        self.name, self._ax[1], self._ax[2], shapes_text(shapes)))
    end
    if a[xa] >= 0 and b[xb] >= 0 and a[xa] ~= b[xb] then
      raise("ValueError", sfmt("Dot: layer \"%s\": dimension incompatibility: %d ~= %d. Layer shapes: %s. Chosen " ..
        "axes: {%d, %d}", self.name, a[xa], b[xb], shapes_text(shapes), self._ax[1], self._ax[2]))
    end
  end
  -- batch_dot of a (rank 2 or 3) and b along axes xa, xb (1-based).
  function Dot.call(self, inputs)
    local a, b = inputs[1], inputs[2]
    local ra, rb = #a:_dims(), #b:_dims()
    local xa, xb = resolve(self._ax[1], ra), resolve(self._ax[2], rb)
    if self.normalize then
      a = tf.math.l2_normalize(a, xa)
      b = tf.math.l2_normalize(b, xb)
    end
    if ra == 2 and rb == 2 then return tf.reduce_sum(a * b, 2, true) end
    -- contract: a's axis last, b's axis second, then a matmul
    if ra == 2 then a = tf.expand_dims(a, 2); ra = 3; xa = 3 end
    local squeeze_b = false
    if rb == 2 then b = tf.expand_dims(b, 3); rb = 3; squeeze_b = true end
    if xa ~= 3 then a = tf.transpose(a, {1, 3, 2}) end
    if xb ~= 2 then b = tf.transpose(b, {1, 3, 2}) end
    local out = tf.matmul(a, b)
    if inputs[1]:_dims() and #inputs[1]:_dims() == 2 then out = tf.squeeze(out, {2}) end
    if squeeze_b then out = tf.squeeze(out, {-1}) end
    return out
  end
  function Dot.get_config(self)
    local c = Layer.get_config(self)
    c.axes = self.axes
    c.normalize = self.normalize
    return c
  end
  -- }====

  -- {==== functional forms: tf.keras.layers.add{a, b [, name = ...]}
  local function functional(cls)
    return function(inputs, opts)
      if type(inputs) ~= "table" or getmetatable(inputs) ~= nil then
        raise("ValueError", sfmt("%s: expected an array of inputs {a, b, ...}", cls._class_name))
      end
      local xs, kw = {}, {}
      for k, v in pairs(inputs) do
        if math.type(k) == "integer" then xs[k] = v else kw[k] = v end
      end
      for k, v in pairs(opts or {}) do kw[k] = v end
      return cls(kw)(xs)
    end
  end
  L.add = functional(L.Add)
  L.subtract = functional(L.Subtract)
  L.multiply = functional(L.Multiply)
  L.average = functional(L.Average)
  L.maximum = functional(L.Maximum)
  L.minimum = functional(L.Minimum)
  L.concatenate = functional(Concatenate)
  L.dot = functional(Dot)
  -- }====
end
