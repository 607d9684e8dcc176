--- Functional models: layers called on KerasTensors, and
-- tf.keras.Model{inputs =, outputs =}, a model that replays those calls.
--
-- A layer called on KerasTensors (K.call_symbolic) runs its call once on
-- placeholders of their shapes in a throwaway trace (tf.fn's
-- get_concrete_function: the layer builds its variables there, outside the
-- trace), reads the output shapes and dtypes, records a node {layer, args,
-- kwargs, outputs} on the layer and returns KerasTensors. A functional model
-- keeps the nodes between its inputs and outputs in a topological order and
-- calls their layers on real tensors in that order (masks travel with the
-- tensors as in any layer call). Layers are serialized as
-- {class_name =, config =} (tf.keras.layers.serialize / deserialize); a
-- functional model's config is Keras's {layers, input_layers, output_layers}.
return function(tf)
  local keras = tf.keras
  local L = keras.layers
  local Layer = L.Layer
  local Model = keras.Model
  local K = tf.core.internal.keras
  local raise = K.raise
  local is_kt = K.is_keras_tensor
  local is_layer = K.is_layer
  local sfmt = string.format

  local function is_plain(v) return type(v) == "table" and getmetatable(v) == nil end

  -- A copy of structure `v` (plain tables copied, at any depth) with each
  -- leaf replaced by fn(leaf).
  local function map(v, fn)
    if is_plain(v) then
      local out = {}
      for k, x in pairs(v) do out[k] = map(x, fn) end
      return out
    end
    return fn(v)
  end

  -- The leaves of structure `v` satisfying `pred`, in order (arrays by
  -- index, then string keys sorted), appended to `out`.
  local sorted_keys = require("tf.util").nonarray_keys
  local function flatten(v, pred, out)
    out = out or {}
    if is_plain(v) then
      local keys, n = sorted_keys(v)
      for i = 1, n do flatten(v[i], pred, out) end
      for _, k in ipairs(keys) do flatten(v[k], pred, out) end
    elseif v ~= nil and (pred == nil or pred(v)) then
      out[#out + 1] = v
    end
    return out
  end

  local function is_array(t)
    if not is_plain(t) or #t == 0 then return false end
    local count = 0
    for _ in pairs(t) do count = count + 1 end
    return count == #t
  end

  local function dims_text(dims)
    local parts = {}
    for i, d in ipairs(dims) do parts[i] = (d == nil or d < 0) and "None" or tostring(d) end
    if #parts == 1 then return "(" .. parts[1] .. ",)" end
    return "(" .. table.concat(parts, ", ") .. ")"
  end
  K.dims_text = dims_text

  -- {==== calling a layer on KerasTensors
  local function spec_of(v)
    if is_kt(v) then return tf.TensorSpec(v.shape:as_list(), v.dtype) end
    return v
  end

  --- layer(KerasTensors [, opts]): the KerasTensors of the layer's outputs;
  -- records a node on the layer. KerasTensors may also be in opts
  -- (initial_state = {h, c}, ...).
  function K.call_symbolic(layer, inputs, opts)
    if opts ~= nil and not is_plain(opts) then
      raise("TypeError", sfmt("layer \"%s\": the second argument must be an options table {training = bool}, got %s",
        layer.name, type(opts)))
    end
    opts = opts or {}
    local desc
    local f = tf.fn(function(a, o)
      local out = layer(a, o)
      desc = map(out, function(t)
        if tf.is_tensor(t) then return {dims = t:_dims(), dtype = t.dtype, tensor = true} end
        return t
      end)
    end, {autograph = false, name = "keras_" .. layer.name:gsub("[^%w_]", "_")})
    f:get_concrete_function(map(inputs, spec_of), map(opts, spec_of))
    local nodes = rawget(layer, "_inbound_nodes")
    if not nodes then nodes = {}; rawset(layer, "_inbound_nodes", nodes) end
    local node = {layer = layer, args = inputs, kwargs = opts, index = #nodes + 1}
    node.inbound = flatten({inputs, opts}, is_kt)
    local outs = {}
    local nout = #flatten(desc, function(d) return is_plain(d) and d.tensor end)
    local struct
    local function mk(d)
      if is_plain(d) and d.tensor then
        local i = #outs + 1
        local name = layer.name
        if nout > 1 then name = sfmt("%s/%d", layer.name, i) end
        local kt = K.new_keras_tensor(d.dims, d.dtype, name, node, i)
        outs[i] = kt
        return kt
      end
      return d
    end
    -- a tensor description is a plain table {dims, dtype, tensor}: map by hand
    local function build(d)
      if is_plain(d) and not d.tensor then
        local keys, n = sorted_keys(d)
        local out = {}
        for i = 1, n do out[i] = build(d[i]) end
        for _, k in ipairs(keys) do out[k] = build(d[k]) end
        return out
      end
      return mk(d)
    end
    struct = build(desc)
    node.outputs = outs
    node.output_structure = struct
    nodes[#nodes + 1] = node
    return struct
  end

  -- {==== TFOpLambda: plain tf operations on KerasTensors
  local TFOpLambda = Layer:extend("TFOpLambda")
  L.TFOpLambda = TFOpLambda
  local OPNAMES = {add = "tf.math.add", sub = "tf.math.subtract", mul = "tf.math.multiply", div = "tf.math.truediv",
                   pow = "tf.math.pow", mod = "tf.math.floormod", neg = "tf.math.negative",
                   getitem = "tf.__operators__.getitem"}
  --- TFOpLambda{function, name =}: the layer an operator applied to a
  -- KerasTensor becomes (`x + 1`, `2 * x`, `-x`); its call is fn(inputs)
  -- with the inputs array.
  function TFOpLambda.init(self, opts)
    opts = self:_options(opts, {"function"}, 1)
    rawset(self, "fn", opts[1] or opts["function"])
    if type(self.fn) ~= "function" then raise("TypeError", "TFOpLambda: expected a function") end
  end
  function TFOpLambda.call(self, x) return self.fn(x) end

  --- op(args...) applied to KerasTensors: the KerasTensor entries of `args`
  -- become the inputs of a TFOpLambda layer, the other values are kept.
  function K.op_lambda(opname, op, args, nargs)
    nargs = nargs or #args
    local kts, index = {}, {}
    for i = 1, nargs do
      for _, kt in ipairs(flatten(args[i], is_kt)) do
        if not index[kt] then kts[#kts + 1] = kt; index[kt] = #kts end
      end
    end
    local fixed = {}
    for i = 1, nargs do fixed[i] = args[i] end
    local function fn(xs)
      local a = {}
      for i = 1, nargs do
        a[i] = map(fixed[i], function(v)
          if is_kt(v) then return xs[index[v]] end
          return v
        end)
      end
      return op(table.unpack(a, 1, nargs))
    end
    local layer = TFOpLambda{fn, name = K.unique_name(OPNAMES[opname] or opname)}
    -- for get_config: the operation by TF's name, its other arguments
    -- with each KerasTensor as {__keras_input__ = i} (i: in the inputs array)
    local saved = {}
    for i = 1, nargs do
      saved[i] = map(fixed[i], function(v)
        if is_kt(v) then return {__keras_input__ = index[v]} end
        return v
      end)
    end
    rawset(layer, "_op_config", {name = OPNAMES[opname] or opname, arguments = saved, nargs = nargs})
    return layer(kts)
  end

  -- the operations a TFOpLambda's config names (TensorFlow's names)
  local OPS = {["tf.math.add"] = function(a, b) return a + b end,
               ["tf.math.subtract"] = function(a, b) return a - b end,
               ["tf.math.multiply"] = function(a, b) return a * b end,
               ["tf.math.truediv"] = function(a, b) return a / b end,
               ["tf.math.pow"] = function(a, b) return a ^ b end,
               ["tf.math.floormod"] = function(a, b) return a % b end,
               ["tf.math.negative"] = function(a) return -a end,
               ["tf.__operators__.getitem"] = function(x, k) return x[k] end}

  --- get_config: the base's fields, `function` (the operation's TensorFlow
  -- name), `arguments` and `nargs` for a layer made by an operator; a
  -- TFOpLambda made from a Lua function keeps the function.
  function TFOpLambda.get_config(self)
    local c = Layer.get_config(self)
    local oc = rawget(self, "_op_config")
    if oc then
      c["function"], c.arguments, c.nargs = oc.name, oc.arguments, oc.nargs
    else
      c["function"] = self.fn
    end
    return c
  end
  function TFOpLambda.from_config(a, b)
    local config = a
    if a == TFOpLambda then config = b end
    local fname = config["function"]
    if type(fname) ~= "string" then
      local c = {}
      for k, v in pairs(config) do if k ~= "arguments" and k ~= "nargs" then c[k] = v end end
      return TFOpLambda(c)
    end
    local op = OPS[fname]
    if not op then raise("ValueError", sfmt("TFOpLambda.from_config: unknown operation '%s'", fname)) end
    local args, nargs = config.arguments or {}, config.nargs or #(config.arguments or {})
    local function sub(v, xs)
      if not is_plain(v) then return v end
      if v.__keras_input__ ~= nil then return xs[v.__keras_input__] end
      local out = {}
      for k, x in pairs(v) do out[k] = sub(x, xs) end
      return out
    end
    local layer = TFOpLambda{function(xs)
      local a2 = {}
      for i = 1, nargs do a2[i] = sub(args[i], xs) end
      return op(table.unpack(a2, 1, nargs))
    end, name = config.name, trainable = config.trainable, dtype = config.dtype}
    rawset(layer, "_op_config", {name = fname, arguments = args, nargs = nargs})
    return layer
  end

  -- }====
  -- }====

  -- {==== Functional
  local Functional = Model:extend("Functional")
  keras.Functional = Functional
  K.Functional = Functional

  local function check_structure(v, what)
    if is_kt(v) then return end
    if not is_plain(v) or next(v) == nil then
      raise("TypeError", sfmt("Model: '%s' must be a KerasTensor (from tf.keras.Input or a layer called on one) or " ..
        "an array or dict of them, got %s", what, is_layer(v) and "a layer" or type(v)))
    end
    for k, x in pairs(v) do
      if not is_kt(x) then
        raise("TypeError", sfmt("Model: '%s' must hold KerasTensors (from tf.keras.Input or a layer called on " ..
          "one), but %s[%s] is %s", what, what, tostring(k), is_layer(x) and "a layer" or
          (tf.is_tensor(x) and "an eager tensor" or type(x))))
      end
    end
  end

  local function flat_kts(v)
    if is_kt(v) then return {v} end
    local keys, n = sorted_keys(v)
    local out = {}
    for i = 1, n do out[#out + 1] = v[i] end
    for _, k in ipairs(keys) do out[#out + 1] = v[k] end
    return out, keys
  end

  --- Functional.init(self, {inputs =, outputs =, name =, trainable =}).
  function Functional.init(self, opts)
    local inputs, outputs = opts.inputs, opts.outputs
    if inputs == nil then inputs = opts[1] end
    if outputs == nil then outputs = opts[2] end
    for k in pairs(opts) do
      if k ~= "inputs" and k ~= "outputs" and k ~= 1 and k ~= 2 and k ~= "name" and k ~= "trainable" then
        raise("TypeError", sfmt("Model: unknown keyword argument '%s' (accepted: inputs, outputs, name, trainable)",
          tostring(k)))
      end
    end
    if inputs == nil or outputs == nil then raise("ValueError", "Model: both 'inputs' and 'outputs' must be given") end
    check_structure(inputs, "inputs")
    check_structure(outputs, "outputs")
    rawset(self, "name", opts.name ~= nil and tostring(opts.name) or K.unique_name("model"))
    if opts.trainable ~= nil then rawset(self, "trainable", opts.trainable and true or false) end
    local ins, in_keys = flat_kts(inputs)
    local outs, out_keys = flat_kts(outputs)
    for i, kt in ipairs(ins) do
      if not kt._keras_history.node.is_input then
        raise("ValueError", sfmt("Model: input %d (%s) is not the output of tf.keras.Input (an InputLayer); a " ..
          "functional model's inputs must come from tf.keras.Input", i, tostring(kt)))
      end
    end
    -- the nodes between the inputs and the outputs, in a topological order
    local is_input = {}
    for _, kt in ipairs(ins) do is_input[kt] = true end
    local order, visited, reached = {}, {}, {}
    local function visit(kt)
      local node = kt._keras_history.node
      if visited[node] then return end
      visited[node] = true
      if node.is_input then
        if not is_input[kt] then
          local seen = {}
          for _, n in ipairs(order) do seen[#seen + 1] = "\"" .. n.layer.name .. "\"" end
          raise("ValueError", sfmt("Model: graph disconnected: cannot obtain the value of %s at layer \"%s\": it is " ..
            "not among the model's inputs (%d given). The following previous layers were accessed without issue: " ..
            "[%s]", tostring(kt), node.layer.name, #ins, table.concat(seen, ", ")))
        end
        reached[kt] = true
        return
      end
      for _, t in ipairs(node.inbound) do visit(t) end
      order[#order + 1] = node
    end
    for _, kt in ipairs(outs) do visit(kt) end
    rawset(self, "_input_structure", inputs)
    rawset(self, "_output_structure", outputs)
    rawset(self, "_input_keys", in_keys)
    rawset(self, "_output_keys", out_keys)
    rawset(self, "_nodes", order)
    rawset(self, "inputs", ins)
    rawset(self, "outputs", outs)
    -- input_names / output_names: dict keys, else the layers' names
    local inames, onames = {}, {}
    for i, kt in ipairs(ins) do inames[i] = kt._keras_history.layer.name end
    for i, kt in ipairs(outs) do onames[i] = kt._keras_history.layer.name end
    if is_plain(inputs) and in_keys and #in_keys > 0 and #inputs == 0 then inames = in_keys end
    if is_plain(outputs) and out_keys and #out_keys > 0 and #outputs == 0 then onames = out_keys end
    rawset(self, "input_names", inames)
    rawset(self, "output_names", onames)
    -- layers: the input layers, then the others in call order, each once
    local layers, seen = {}, {}
    for _, kt in ipairs(ins) do
      local l = kt._keras_history.layer
      if not seen[l] then seen[l] = true; layers[#layers + 1] = l end
    end
    for _, node in ipairs(order) do
      local l = node.layer
      if not seen[l] then seen[l] = true; layers[#layers + 1] = l end
    end
    rawset(self, "_layers", layers)
    -- each layer's nodes in this model, numbered from 1 in the layer's order
    local node_index = {}
    for _, l in ipairs(layers) do
      local k = 0
      for _, n in ipairs(rawget(l, "_inbound_nodes") or {}) do
        if visited[n] or n.is_input then
          k = k + 1
          node_index[n] = k
        end
      end
    end
    rawset(self, "_node_index", node_index)
    rawset(self, "built", true)
    local dims = {}
    if #outs == 1 then dims = outs[1].shape:as_list() end
    if #outs == 1 then self:_record_output_shape(tf.TensorShape(dims)) end
    rawset(self, "_input_dtype", ins[1].dtype)
    rawset(self, "input", #ins == 1 and ins[1] or ins)
    rawset(self, "output", #outs == 1 and outs[1] or outs)
  end

  -- self._layers, then the layers tracked as attributes: as Sequential's.
  Functional._sublayers = keras.Sequential._sublayers

  function Functional._maybe_build(self) rawset(self, "built", true) end
  function Functional.build() end

  local function keys_text(t)
    local ks = {}
    for k in pairs(t) do ks[#ks + 1] = "\"" .. tostring(k) .. "\"" end
    table.sort(ks)
    return "[" .. table.concat(ks, ", ") .. "]"
  end

  --- The model's input tensors, one per model input (in `inputs` order),
  -- from what the caller gave: one tensor, an array, or a dict keyed by
  -- input name (or by the keys of a dict of inputs).
  function Functional._bind_inputs(self, x)
    local ins, names = self.inputs, self.input_names
    local n = #ins
    if not is_plain(x) then
      if n ~= 1 then
        raise("ValueError", sfmt("model \"%s\" expects %d inputs (%s), but it received 1 input tensor", self.name,
          n, table.concat(names, ", ")))
      end
      return {x}
    end
    local out = {}
    local count = 0
    for _ in pairs(x) do count = count + 1 end
    if #x > 0 and count == #x then
      if #x ~= n then
        raise("ValueError", sfmt("model \"%s\" expects %d input(s) (%s), but it received %d input tensors", self.name,
          n, table.concat(names, ", "), #x))
      end
      for i = 1, n do out[i] = x[i] end
      return out
    end
    if #x == 0 then
      for i, name in ipairs(names) do
        local v = x[name]
        if v == nil then
          local expected = {}
          for j, nm in ipairs(names) do expected[j] = "\"" .. nm .. "\"" end
          raise("ValueError", sfmt("Missing data for input \"%s\". You passed a data dictionary with keys %s. " ..
            "Expected the following keys: [%s]", name, keys_text(x), table.concat(expected, ", ")))
        end
        out[i] = v
      end
      return out
    end
    raise("ValueError", sfmt("model \"%s\": inputs must be a tensor, an array of %d tensors or a dict keyed by input " ..
      "name, got a table mixing both", self.name, n))
  end

  local function bind(struct, value, tmap, layer)
    if is_kt(struct) then
      tmap[struct] = value
    elseif is_plain(struct) then
      if type(value) ~= "table" then
        raise("ValueError", sfmt("layer \"%s\" returned %s where its symbolic call returned a table", layer.name,
          type(value)))
      end
      for k, s in pairs(struct) do bind(s, value[k], tmap, layer) end
    end
  end

  function Functional.call(self, x, opts)
    local values = self:_bind_inputs(x)
    local tmap = {}
    for i, kt in ipairs(self.inputs) do
      local v = values[i]
      if not tf.is_tensor(v) then v = tf.is_variable(v) and v:value() or tf.constant(v) end
      if v.dtype ~= kt.dtype then v = tf.cast(v, kt.dtype) end   -- as Keras, to the Input's dtype
      tmap[kt] = v
    end
    -- a mask given with the call (or lost by a cast) goes to the input it belongs to
    local mask = opts and opts.mask
    if mask ~= nil then
      local masks = (#self.inputs == 1 and not is_plain(mask)) and {mask} or self:_bind_inputs(mask)
      for i, kt in ipairs(self.inputs) do
        if masks[i] ~= nil and K.get_mask(tmap[kt]) == nil then K.set_mask(tmap[kt], masks[i]) end
      end
    end
    local training = opts and opts.training
    local function look(v)
      if is_kt(v) then return tmap[v] end
      return v
    end
    for _, node in ipairs(self._nodes) do
      local args = map(node.args, look)
      local kw = map(node.kwargs, look)
      if kw.training == nil then kw.training = training end
      bind(node.output_structure, node.layer(args, kw), tmap, node.layer)
    end
    local out = map(self._output_structure, look)
    rawset(self, "_last_output_mask", K.get_mask(out))
    return out
  end

  function Functional.compute_mask(self) return rawget(self, "_last_output_mask") end

  --- model:get_layer(name) or model:get_layer{index = i} (1-based).
  function Model.get_layer(self, name)
    local layers = self.layers
    if type(name) == "table" then
      local i = name.index
      if math.type(i) ~= "integer" or i < 1 or i > #layers then
        raise("ValueError", sfmt("get_layer: was asked to retrieve layer at index %s but model only has %d layers",
          tostring(i), #layers))
      end
      return layers[i]
    end
    for _, l in ipairs(layers) do if l.name == name then return l end end
    raise("ValueError", sfmt("get_layer: no such layer: %s. Existing layers are: [%s]", tostring(name),
      table.concat((function() local t = {} for i, l in ipairs(layers) do t[i] = l.name end return t end)(), ", ")))
  end

  --- Checkpoint children as TensorFlow names them: layer_with_weights-K,
  -- then layer-K (input layers included), from 0.
  function Functional._checkpoint_children(self)
    local out, k = {}, 0
    for _, l in ipairs(self._layers) do
      if #l.variables > 0 then
        out[#out + 1] = {"layer_with_weights-" .. k, l}
        k = k + 1
      end
    end
    for i, l in ipairs(self._layers) do out[#out + 1] = {"layer-" .. (i - 1), l} end
    for _, c in ipairs(Layer._checkpoint_children(self)) do out[#out + 1] = c end
    return out
  end

  -- tf.keras.Model{inputs =, outputs =} and tf.keras.Model(inputs, outputs)
  -- make a functional model; other forms are a plain (subclassed) Model.
  local base_new = Model.new
  function Model.new(cls, a, b, ...)
    if cls == Model and ((is_plain(a) and (a.inputs ~= nil or a.outputs ~= nil)) or b ~= nil or is_kt(a)) then
      local opts
      if b ~= nil or is_kt(a) or (is_plain(a) and a.inputs == nil and a.outputs == nil) then
        opts = {inputs = a, outputs = b}
        local c = ...
        if is_plain(c) then for k, v in pairs(c) do opts[k] = v end end
      else
        opts = a
      end
      return base_new(Functional, opts)
    end
    return base_new(cls, a, b, ...)
  end
  -- }====

  -- {==== summary with the connections column
  local function commas(n)
    local s = tostring(n)
    local out = s:reverse():gsub("(%d%d%d)", "%1,"):reverse()
    return (out:gsub("^,", ""))
  end

  local function cells(fields, widths)
    local parts = {}
    for i, f in ipairs(fields) do
      local w = widths[i] - (i < #fields and 1 or 0)
      if #f > w then f = f:sub(1, w) end
      parts[i] = f .. string.rep(" ", widths[i] - #f)
    end
    return (table.concat(parts):gsub("%s+$", ""))
  end

  --- The summary as text: layer (type), output shape, param #, connected to
  -- (the inbound tensors as `layer[node][tensor]`, from 0 as Keras).
  function Functional.summary_text(self, opts)
    opts = opts or {}
    local width = opts.line_length or 98
    local pos = {0.33, 0.55, 0.67, 1}
    local widths, prev = {}, 0
    for i, p in ipairs(pos) do
      local x = math.floor(width * p)
      widths[i] = x - prev
      prev = x
    end
    local out = {}
    out[#out + 1] = sfmt('Model: "%s"', self.name)
    out[#out + 1] = string.rep("_", width)
    out[#out + 1] = cells({"Layer (type)", "Output Shape", "Param #", "Connected to"}, widths)
    out[#out + 1] = string.rep("=", width)
    local node_index = self._node_index
    local layers = self._layers
    for li, layer in ipairs(layers) do
      local conns = {}
      for _, n in ipairs(rawget(layer, "_inbound_nodes") or {}) do
        if node_index[n] and not n.is_input then
          for _, t in ipairs(n.inbound) do
            local h = t._keras_history
            conns[#conns + 1] = sfmt("%s[%d][%d]", h.layer.name, (node_index[h.node] or 1) - 1, h.tensor_index - 1)
          end
        end
      end
      local shape = rawget(layer, "_output_shape_text") or "multiple"
      if rawget(layer, "_is_input_layer") then shape = "[" .. dims_text(layer._batch_input_shape) .. "]" end
      out[#out + 1] = cells({sfmt("%s (%s)", layer.name, layer._class_name), shape, tostring(layer:count_params()),
                             conns[1] or ""}, widths)
      for i = 2, #conns do out[#out + 1] = cells({"", "", "", conns[i]}, widths) end
      out[#out + 1] = string.rep(li == #layers and "=" or "_", width)
    end
    local tr, nt = 0, 0
    for _, v in ipairs(self.trainable_variables) do tr = tr + (v.shape:num_elements() or 0) end
    for _, v in ipairs(self.non_trainable_variables) do nt = nt + (v.shape:num_elements() or 0) end
    out[#out + 1] = "Total params: " .. commas(tr + nt)
    out[#out + 1] = "Trainable params: " .. commas(tr)
    out[#out + 1] = "Non-trainable params: " .. commas(nt)
    out[#out + 1] = string.rep("_", width)
    return table.concat(out, "\n")
  end
  -- }====

  -- {==== serialization
  local Base_get_config = Layer.get_config

  --- tf.keras.layers.serialize(layer): {class_name =, config =}. A class
  -- without a get_config of its own gives the base's fields and the
  -- keywords it was made with.
  function L.serialize(layer)
    if not is_layer(layer) then
      raise("TypeError", sfmt("serialize: expected a layer, got %s", type(layer)))
    end
    local config = layer:get_config()
    if layer.get_config == Base_get_config then
      local args = rawget(layer, "_init_args")
      if args then
        local c = {}
        for k, v in pairs(args) do c[k] = v end
        for k, v in pairs(config) do c[k] = v end
        config = c
      end
    end
    return {class_name = layer._class_name, config = config}
  end

  --- tf.keras.layers.deserialize({class_name =, config =} [, custom_objects]):
  -- a new layer of that class (looked up in custom_objects, then among
  -- tf.keras.layers and the model classes).
  function L.deserialize(spec, custom_objects)
    if not is_plain(spec) or type(spec.class_name) ~= "string" then
      raise("TypeError", "deserialize: expected a table {class_name = ..., config = {...}}")
    end
    local name = spec.class_name
    local cls = (custom_objects and custom_objects[name]) or rawget(L, name)
    if cls == nil then
      if name == "Functional" or name == "Model" then cls = Functional
      elseif name == "Sequential" then cls = keras.Sequential end
    end
    if type(cls) ~= "table" or type(cls.from_config) ~= "function" then
      raise("ValueError", sfmt("deserialize: unknown layer class '%s'; pass it in custom_objects = {%s = Class}",
        name, name))
    end
    return cls.from_config(spec.config or {}, custom_objects)
  end

  local function ref_of(self, kt)
    local h = kt._keras_history
    return {h.layer.name, self._node_index[h.node] - 1, h.tensor_index - 1}
  end

  local function struct_config(self, v)
    if is_kt(v) then return ref_of(self, v) end
    local keys, n = sorted_keys(v)
    local out = {}
    if n > 0 and #keys == 0 then
      for i = 1, n do out[i] = ref_of(self, v[i]) end
    else
      for _, k in ipairs(keys) do out[k] = ref_of(self, v[k]) end
    end
    return out
  end

  --- model:get_config(): {name, trainable, layers = {{class_name, config,
  -- name, inbound_nodes}, ...}, input_layers, output_layers} as Keras.
  -- inbound_nodes: per node an array of {layer_name, node_index,
  -- tensor_index, kwargs} (indices from 0), or {args =, kwargs =} for a
  -- call on a dict; KerasTensors inside kwargs are {__keras_tensor__ = ref}.
  function Functional.get_config(self)
    local layers = {}
    local function kw_config(kw)
      local c = map(kw, function(v)
        if is_kt(v) then return {__keras_tensor__ = ref_of(self, v)} end
        return v
      end)
      c.training = nil
      return c
    end
    for i, l in ipairs(self._layers) do
      local s = L.serialize(l)
      s.name = l.name
      s.inbound_nodes = {}
      for _, n in ipairs(rawget(l, "_inbound_nodes") or {}) do
        if self._node_index[n] and not n.is_input then
          local entry
          if is_kt(n.args) or is_array(n.args) then
            entry = {}
            local args = is_kt(n.args) and {n.args} or n.args
            for j, kt in ipairs(args) do
              local r = ref_of(self, kt)
              r[4] = kw_config(n.kwargs)
              entry[j] = r
            end
            if not is_kt(n.args) and #args == 1 then entry.list = true end
          else
            entry = {args = map(n.args, function(v) return is_kt(v) and {__keras_tensor__ = ref_of(self, v)} or v end),
                     kwargs = kw_config(n.kwargs)}
          end
          s.inbound_nodes[#s.inbound_nodes + 1] = entry
        end
      end
      layers[i] = s
    end
    local c = {name = self.name, trainable = self.trainable, layers = layers,
               input_layers = struct_config(self, self._input_structure),
               output_layers = struct_config(self, self._output_structure)}
    if is_kt(self._input_structure) then c.input_single = true end
    if is_kt(self._output_structure) then c.output_single = true end
    return c
  end

  --- Functional.from_config(config [, custom_objects]): the model rebuilt
  -- by calling new layers (tf.keras.layers.deserialize) in the same graph.
  function Functional.from_config(a, b, c)
    local config, custom = a, b
    if a == Functional then config, custom = b, c end
    if not is_plain(config) or type(config.layers) ~= "table" then
      raise("TypeError", "Model.from_config: expected the table of model:get_config()")
    end
    local by_name, created = {}, {}
    local pending = {}
    for _, lc in ipairs(config.layers) do
      local layer = L.deserialize(lc, custom)
      by_name[lc.name or layer.name] = layer
      local outs = {}
      if rawget(layer, "_is_input_layer") then outs[1] = layer._inbound_nodes[1].output_structure end
      created[layer] = outs
      pending[#pending + 1] = {layer = layer, nodes = lc.inbound_nodes or {}, next = 1}
    end
    local function resolve(ref)
      local layer = by_name[ref[1]]
      if not layer then raise("ValueError", sfmt("Model.from_config: unknown layer '%s'", tostring(ref[1]))) end
      local st = created[layer][ref[2] + 1]
      if st == nil then return nil end
      local flat = flatten(st, is_kt)
      return flat[ref[3] + 1]
    end
    local missing = false
    local function deref(v)
      if is_plain(v) and v.__keras_tensor__ then
        local t = resolve(v.__keras_tensor__)
        if t == nil then missing = true end
        return t
      end
      return v
    end
    local function deref_map(v)
      if is_plain(v) and v.__keras_tensor__ then return deref(v) end
      if is_plain(v) then
        local out = {}
        for k, x in pairs(v) do out[k] = deref_map(x) end
        return out
      end
      return v
    end
    local progress = true
    while progress do
      progress = false
      for _, p in ipairs(pending) do
        while p.next <= #p.nodes do
          local nd = p.nodes[p.next]
          missing = false
          local args, kw
          if nd.args ~= nil then
            args = deref_map(nd.args)
            kw = deref_map(nd.kwargs or {})
          else
            args = {}
            for j, r in ipairs(nd) do
              local t = resolve(r)
              if t == nil then missing = true end
              args[j] = t
            end
            kw = deref_map((nd[1] and nd[1][4]) or {})
            if #args == 1 and not nd.list then args = args[1] end
          end
          if missing then break end
          local outs = p.layer(args, kw)
          local list = created[p.layer]
          list[#list + 1] = outs
          p.next = p.next + 1
          progress = true
        end
      end
    end
    for _, p in ipairs(pending) do
      if p.next <= #p.nodes then
        raise("ValueError", sfmt("Model.from_config: cannot rebuild node %d of layer \"%s\": its inputs are never " ..
          "made", p.next, p.layer.name))
      end
    end
    local function outs_of(st, single)
      if single then return resolve(st) end
      local out = {}
      for k, r in pairs(st) do out[k] = resolve(r) end
      return out
    end
    return Functional{inputs = outs_of(config.input_layers, config.input_single),
                      outputs = outs_of(config.output_layers, config.output_single),
                      name = config.name, trainable = config.trainable}
  end
  Model.from_config = function(a, b, c)
    if a == Model or a == Functional then return Functional.from_config(b, c) end
    return Functional.from_config(a, b)
  end

  --- Sequential:get_config(): {name, layers = {{class_name, config}, ...}},
  -- an InputLayer first when the input shape is known.
  local Sequential = keras.Sequential
  function Sequential.get_config(self)
    local layers = {}
    local bis = rawget(self, "_batch_input_shape")
    if bis then
      layers[1] = {class_name = "InputLayer", config = {batch_input_shape = bis,
        dtype = (rawget(self, "_input_dtype") or tf.float32).name}}
    end
    for _, l in ipairs(self._layers) do layers[#layers + 1] = L.serialize(l) end
    return {name = self.name, trainable = self.trainable, layers = layers}
  end
  function Sequential.from_config(a, b, c)
    local config, custom = a, b
    if a == Sequential then config, custom = b, c end
    if not is_plain(config) or type(config.layers) ~= "table" then
      raise("TypeError", "Sequential.from_config: expected the table of model:get_config()")
    end
    local layers = {}
    for i, lc in ipairs(config.layers) do layers[i] = L.deserialize(lc, custom) end
    return Sequential{layers = layers, name = config.name, trainable = config.trainable}
  end

  --- tf.keras.models.clone_model(model): a new model of the same
  -- structure with new (freshly initialized) weights.
  keras.models.clone_model = function(model)
    return L.deserialize(L.serialize(model))
  end
  keras.models.model_from_config = function(config, custom_objects) return L.deserialize(config, custom_objects) end
  -- }====

end
