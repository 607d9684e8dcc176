--- tf.keras.Input, tf.keras.layers.InputLayer and KerasTensor: the symbolic
-- tensors a functional model is written with.
--
-- A KerasTensor stands for the tensor a layer will produce: it has a shape
-- (the batch dimension None), a dtype, a name and `_keras_history`, the node
-- (one call of one layer) that makes it. `tf.keras.Input(shape)` makes one
-- from an InputLayer; a layer called on KerasTensors returns KerasTensors
-- (lua/tf/keras/functional.lua) and records a node.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local K = tf.core.internal.keras
  local raise = K.raise
  local sfmt = string.format

  -- {==== KerasTensor
  local KT = {}
  KT.__name = "KerasTensor"
  local KTmt = {__name = "KerasTensor"}

  local function is_keras_tensor(x) return type(x) == "table" and getmetatable(x) == KTmt end
  K.is_keras_tensor = is_keras_tensor

  --- True when `x` is a KerasTensor or a plain table holding one (at any depth).
  local function has_keras_tensor(x, seen)
    if type(x) ~= "table" then return false end
    if getmetatable(x) == KTmt then return true end
    if getmetatable(x) ~= nil then return false end
    seen = seen or {}
    if seen[x] then return false end
    seen[x] = true
    for _, v in pairs(x) do if has_keras_tensor(v, seen) then return true end end
    return false
  end
  K.has_keras_tensor = has_keras_tensor

  --- A new KerasTensor: dims (a Lua array, -1 unknown), dtype, name, and
  -- the node that makes it with its index among that node's outputs.
  function K.new_keras_tensor(dims, dtype, name, node, index)
    local t = {
      shape = tf.TensorShape(dims),
      dtype = dtype,
      name = name,
      _keras_history = {layer = node and node.layer, node = node, tensor_index = index or 1},
    }
    return setmetatable(t, KTmt)
  end

  function KTmt.__index(t, k)
    local v = KT[k]
    if v ~= nil then return v end
    if k == "ndim" then return rawget(t, "shape"):rank() end
    -- x[{{}, {2, 5}}]: slicing, as tensors slice, becomes a TFOpLambda
    if type(k) == "table" then return K.op_lambda("getitem", function(x, kk) return x[kk] end, {t, k}) end
    return nil
  end

  function KTmt.__tostring(t)
    return sfmt("<KerasTensor shape=%s, dtype=%s, name=%s>", tostring(t.shape), t.dtype.name, t.name)
  end

  function KT.get_shape(t) return t.shape end
  function KT._dims(t) return t.shape:as_list() end

  -- Plain tf ops on a KerasTensor: the arithmetic operators and indexing
  -- become a TFOpLambda layer (functional.lua installs K.op_lambda).
  local function binop(name, f)
    KTmt["__" .. name] = function(a, b) return K.op_lambda(name, f, {a, b}) end
  end
  binop("add", function(a, b) return a + b end)
  binop("sub", function(a, b) return a - b end)
  binop("mul", function(a, b) return a * b end)
  binop("div", function(a, b) return a / b end)
  binop("pow", function(a, b) return a ^ b end)
  binop("mod", function(a, b) return a % b end)
  KTmt.__unm = function(a) return K.op_lambda("neg", function(x) return -x end, {a}) end

  -- Any other tf operation given a KerasTensor (the engine asks an object
  -- for its tensor through __tf_tensor): a TypeError saying what to do.
  function KTmt.__tf_tensor(t)
    raise("TypeError", sfmt("a KerasTensor (%s) was given to a tf operation: it is a symbolic input of a " ..
      "functional model and has no value until the model runs. The operators (x + 1, x * y, -x, ...) work on " ..
      "KerasTensors; wrap any other operation in a layer, e.g. tf.keras.layers.Lambda{function(x) return " ..
      "tf.concat(x, 2) end}({a, b})", tostring(t)))
  end
  -- }====

  -- {==== InputLayer
  local InputLayer = Layer:extend("InputLayer")
  L.InputLayer = InputLayer
  K.InputLayer = InputLayer

  -- The shape argument: a Lua array of sizes (nil or -1 unknown), or a
  -- TensorShape; returns a copy as a Lua array.
  local function shape_arg(s, what)
    if getmetatable(s) == tf.TensorShape.mt then s = s:as_list() end
    if type(s) ~= "table" then
      raise("TypeError", sfmt("%s: 'shape' must be a table of sizes such as {28, 28, 1}, got %s", what, type(s)))
    end
    local out, n = {}, 0
    for k in pairs(s) do
      if math.type(k) ~= "integer" or k < 1 then
        raise("TypeError", sfmt("%s: 'shape' must be an array of sizes, got a key %s", what, tostring(k)))
      end
      if k > n then n = k end
    end
    for i = 1, n do
      local d = s[i]
      if d == nil then d = -1 end
      if math.type(d) ~= "integer" or d < -1 then
        raise("ValueError", sfmt("%s: 'shape' entries must be sizes >= 0 (or nil/-1 for unknown), got %s at %d",
          what, tostring(d), i))
      end
      out[i] = d
    end
    return out
  end

  --- InputLayer{input_shape = {...}, batch_size =, dtype =, name =} (also
  -- `shape =` for input_shape, or batch_input_shape). Its output is the
  -- model's input; in a Sequential model it declares the input shape.
  function InputLayer.init(self, opts)
    opts = opts or {}
    if type(opts) ~= "table" then
      raise("TypeError", sfmt("InputLayer: expected one keyword table, got %s", type(opts)))
    end
    local o = {}
    for k, v in pairs(opts) do if k ~= "shape" and k ~= "sparse" and k ~= "ragged" then o[k] = v end end
    if opts.shape ~= nil then o.input_shape = opts.shape end
    if o.input_shape ~= nil then o.input_shape = shape_arg(o.input_shape, "InputLayer") end
    if o.batch_input_shape ~= nil then o.batch_input_shape = shape_arg(o.batch_input_shape, "InputLayer") end
    if opts.sparse or opts.ragged then
      raise("UnimplementedError", "InputLayer: sparse and ragged inputs are not supported")
    end
    if o.name == nil then
      -- Keras numbers its inputs from 1: input_1, input_2, ...
      local k = K.unique_name("input"):match("_(%d+)$")
      rawset(self, "name", "input_" .. (k and tonumber(k) + 1 or 1))
    end
    self:_options(o, {}, 0)
    if not rawget(self, "_batch_input_shape") then
      raise("ValueError", "Input: 'shape' (without the batch dimension) is required, e.g. tf.keras.Input({28, 28, 1})")
    end
    rawset(self, "_is_input_layer", true)
    rawset(self, "built", true)
    local bis = self._batch_input_shape
    local dims = {}
    for i, d in ipairs(bis) do dims[i] = d end
    local node = {layer = self, inbound = {}, kwargs = {}, outputs = nil, index = 1, is_input = true}
    local kt = K.new_keras_tensor(dims, self._dtype, self.name, node, 1)
    node.outputs = {kt}
    node.output_structure = kt
    rawset(self, "_inbound_nodes", {node})
    rawset(self, "_keras_tensor", kt)
    self:_record_output_shape(tf.TensorShape(dims))
  end
  function InputLayer.call(_, x) return x end
  function InputLayer.get_config(self)
    return {batch_input_shape = self._batch_input_shape, dtype = self._dtype.name, name = self.name}
  end

  --- tf.keras.Input(shape [, {batch_size =, dtype =, name =}]) or
  -- tf.keras.Input{shape =, batch_size =, dtype =, name =}: a KerasTensor,
  -- the input of a functional model (shape without the batch dimension).
  function keras.Input(a, b)
    local opts = {}
    if type(a) == "table" and getmetatable(a) == nil and a.shape == nil and a.batch_shape == nil and a[1] ~= nil then
      local o, shape = {}, {}                  -- Input({28, 28, 1}), Input{28, 28, 1, name = "x"}
      for k, v in pairs(a) do
        if math.type(k) == "integer" then shape[k] = v else o[k] = v end
      end
      o.shape = shape
      a = o
    elseif getmetatable(a) == tf.TensorShape.mt then
      a = {shape = a}
    end
    if a == nil then a = {} end
    if type(a) ~= "table" then
      raise("TypeError", sfmt("Input: expected a shape such as {28, 28, 1} or a keyword table {shape = ...}, got %s",
        type(a)))
    end
    for k, v in pairs(a) do opts[k] = v end
    if b ~= nil then
      if type(b) ~= "table" then raise("TypeError", "Input: the second argument must be a keyword table") end
      for k, v in pairs(b) do opts[k] = v end
    end
    for k in pairs(opts) do
      if k ~= "shape" and k ~= "batch_size" and k ~= "dtype" and k ~= "name" and k ~= "batch_shape"
         and k ~= "sparse" and k ~= "ragged" then
        raise("TypeError", sfmt("Input: unknown keyword argument '%s' (accepted: batch_shape, batch_size, dtype, " ..
          "name, shape)", tostring(k)))
      end
    end
    if opts.shape == nil and opts.batch_shape == nil then
      raise("ValueError", "Input: 'shape' (without the batch dimension) is required, e.g. tf.keras.Input({28, 28, 1})")
    end
    local o = {batch_size = opts.batch_size, dtype = opts.dtype, name = opts.name, sparse = opts.sparse,
               ragged = opts.ragged}
    if opts.batch_shape ~= nil then o.batch_input_shape = opts.batch_shape else o.shape = opts.shape end
    return InputLayer(o)._keras_tensor
  end
  L.Input = keras.Input
  -- }====
end
