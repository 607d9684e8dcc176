--- tf.keras.Model (a Layer that groups layers: `layers`, `summary`) and
-- tf.keras.Sequential{...} (a linear stack of layers).
return function(tf)
  local keras = tf.keras
  local Layer = keras.layers.Layer
  local raise = tf.core.internal.keras.raise
  local sfmt = string.format
  local is_layer = tf.core.internal.keras.is_layer
  local PROPS = tf.core.internal.keras.layer_props

  local Model = Layer:extend("Model")
  keras.Model = Model
  keras.models = keras.models or {}
  keras.models.Model = Model

  --- The layers this model tracks directly (Sequential: its stack), in order.
  PROPS.layers = function(self) return self:_sublayers() end

  -- A model without a build of its own is built by its layers, each on its
  -- first call.
  function Model._maybe_build(self, input_shape)
    local b = self.build
    if b ~= Model.build then b(self, input_shape) end
    rawset(self, "built", true)
  end

  --- model:build(input_shape): builds the model by calling it on a symbolic
  -- input of that shape (batch size unknown: -1) in a throwaway trace, so
  -- that its layers make their variables and record their output shapes.
  function Model.build(self, input_shape)
    if input_shape == nil then return end
    if rawget(self, "_building") then return end
    if getmetatable(input_shape) == tf.TensorShape.mt then input_shape = input_shape:as_list() end
    if self._build_from_shapes and self:_build_from_shapes(tf.TensorShape(input_shape)) then
      rawset(self, "built", true)
      return
    end
    rawset(self, "_building", true)
    local spec = tf.TensorSpec(input_shape, self._input_dtype or self._dtype)
    local ok, err = pcall(function()
      local f = tf.fn(function(x) return self(x) end)
      f:get_concrete_function(spec)
    end)
    rawset(self, "_building", nil)
    if not ok then error(err, 0) end
    rawset(self, "built", true)
  end

  -- {==== summary
  local function commas(n)
    local s = tostring(n)
    local out = s:reverse():gsub("(%d%d%d)", "%1,"):reverse()
    return (out:gsub("^,", ""))
  end

  -- Cut `text` into pieces of at most `w` characters.
  local function chunks(text, w)
    local out = {}
    while #text > w do
      out[#out + 1] = text:sub(1, w)
      text = text:sub(w + 1)
    end
    out[#out + 1] = text
    return out
  end

  local function row(fields, widths)
    local cols, nlines = {}, 1
    for i, f in ipairs(fields) do
      cols[i] = chunks(f, widths[i] - (i < #fields and 1 or 0))
      if #cols[i] > nlines then nlines = #cols[i] end
    end
    local lines = {}
    for l = 1, nlines do
      local parts = {}
      for i = 1, #fields do
        local piece = cols[i][l] or ""
        parts[i] = piece .. string.rep(" ", widths[i] - #piece)
      end
      lines[l] = (table.concat(parts):gsub("%s+$", ""))
    end
    return table.concat(lines, "\n")
  end

  --- The summary as text (what model:summary() prints).
  function Model.summary_text(self, opts)
    opts = opts or {}
    local width = opts.line_length or 65
    local widths = {math.floor(width * 0.45), math.floor(width * 0.85) - math.floor(width * 0.45)}
    widths[3] = width - widths[1] - widths[2]
    if not self.built then
      raise("ValueError", sfmt("model \"%s\": this model has not yet been built. Build the model first by calling " ..
        "build() or by calling the model on a batch of data.", self.name), 3)
    end
    local out = {}
    out[#out + 1] = sfmt('Model: "%s"', self.name)
    out[#out + 1] = string.rep("_", width)
    out[#out + 1] = row({"Layer (type)", "Output Shape", "Param #"}, widths)
    out[#out + 1] = string.rep("=", width)
    local layers = self.layers
    for i, layer in ipairs(layers) do
      local shape = rawget(layer, "_output_shape_text") or (layer.built and "multiple" or "?")
      out[#out + 1] = row({sfmt("%s (%s)", layer.name, layer._class_name), shape, tostring(layer:count_params())},
                          widths)
      out[#out + 1] = string.rep(i == #layers and "=" or "_", width)
    end
    if #layers == 0 then out[#out + 1] = string.rep("=", width) end
    local tr, nt = 0, 0
    for _, v in ipairs(self.trainable_variables) do tr = tr + (v.shape:num_elements() or 0) end
    for _, v in ipairs(self.non_trainable_variables) do nt = nt + (v.shape:num_elements() or 0) end
    out[#out + 1] = "Total params: " .. commas(tr + nt)
    out[#out + 1] = "Trainable params: " .. commas(tr)
    out[#out + 1] = "Non-trainable params: " .. commas(nt)
    out[#out + 1] = string.rep("_", width)
    return table.concat(out, "\n")
  end

  --- model:summary{line_length = 65, print_fn = print}: prints the table of
  -- layers (name and type, output shape with the batch as None, parameter
  -- count) and the totals.
  function Model.summary(self, opts)
    opts = opts or {}
    local text = self:summary_text(opts)
    local pf = opts.print_fn or print
    for line in (text .. "\n"):gmatch("(.-)\n") do pf(line) end
  end

  --- model:save_weights(path) / model:load_weights(path): the model's
  -- variables in a checkpoint file (lua/tf/train/checkpoint.lua, docs/checkpoints.md).
  -- Indexing tf.train loads that module (lua/tf/init.lua) on first use.
  local function checkpoint()
    local _ = tf.train
    return tf.core.internal.checkpoint
  end
  function Model.save_weights(self, path) return checkpoint().save_weights(self, path) end
  function Model.load_weights(self, path) return checkpoint().load_weights(self, path) end

  --- tostring(model): the summary once built; before, a tree of its layers
  -- as torch/nn's Sequential prints.
  function Model.__tostring_layer(self)
    if self.built then return self:summary_text() end
    local lines = {sfmt("%s(name=%s, not built) {", self._class_name, self.name)}
    for i, l in ipairs(self.layers) do
      lines[#lines + 1] = sfmt("  (%d): %s", i, (tostring(l):gsub("\n", "\n  ")))
    end
    lines[#lines + 1] = "}"
    return table.concat(lines, "\n")
  end
  -- }====

  -- {==== Sequential
  local Sequential = Model:extend("Sequential")
  keras.Sequential = Sequential
  keras.models.Sequential = Sequential

  --- Sequential{layer1, layer2, ..., name=}: calls its layers in order;
  -- `training` goes to each. A first layer given input_shape builds it now.
  function Sequential.init(self, opts)
    opts = opts or {}
    if type(opts) ~= "table" or is_layer(opts) then
      raise("TypeError", "Sequential: expected a table {layer, ..., name=}", 3)
    end
    rawset(self, "_layers", {})
    local layers = {}
    for k, v in pairs(opts) do
      if type(k) == "number" then layers[k] = v
      elseif k == "layers" then for i, l in ipairs(v) do layers[i] = l end
      elseif k ~= "name" and k ~= "trainable" then
        raise("TypeError", sfmt("Sequential: unknown keyword argument '%s' (accepted: layers, name, trainable)",
          tostring(k)), 3)
      end
    end
    if opts.name then rawset(self, "name", tostring(opts.name)) end
    if opts.trainable ~= nil then rawset(self, "trainable", opts.trainable and true or false) end
    for i = 1, #layers do self:add(layers[i]) end
  end

  --- Append a layer; the first layer's input_shape builds the model.
  function Sequential.add(self, layer)
    local K = tf.core.internal.keras
    if K.is_keras_tensor and K.is_keras_tensor(layer) and layer._keras_history.node.is_input then
      layer = layer._keras_history.layer            -- tf.keras.Input{shape = ...} as the first element
    end
    if not is_layer(layer) then
      raise("TypeError", sfmt("Sequential.add: expected a layer, got %s", type(layer) == "table" and "a table" or
        type(layer)), 2)
    end
    local ls = self._layers
    for _, l in ipairs(ls) do
      if l.name == layer.name then
        raise("ValueError", sfmt("Sequential: all layers added to a Sequential model should have unique names. " ..
          "Name \"%s\" is already the name of a layer in this model", layer.name), 2)
      end
    end
    if rawget(layer, "_is_input_layer") then
      if #ls > 0 then
        raise("ValueError", "Sequential.add: an Input can only be the first element of a Sequential model", 2)
      end
      rawset(self, "_batch_input_shape", layer._batch_input_shape)
      rawset(self, "_input_dtype", layer._dtype)
      return
    end
    ls[#ls + 1] = layer
    rawset(self, "built", false)
    local bis = rawget(self, "_batch_input_shape") or rawget(ls[1], "_batch_input_shape")
    if bis then self:build(bis) end
  end

  --- Remove the last layer.
  function Sequential.pop(self)
    local ls = self._layers
    if #ls == 0 then raise("TypeError", "Sequential.pop: there are no layers in the model", 2) end
    ls[#ls] = nil
  end

  function Sequential._sublayers(self)
    local out, seen = {}, {}
    for _, l in ipairs(self._layers) do
      if not seen[l] then seen[l] = true; out[#out + 1] = l end
    end
    for _, l in ipairs(Layer._sublayers(self)) do
      if not seen[l] then seen[l] = true; out[#out + 1] = l end
    end
    return out
  end

  -- Build eagerly from shapes when every layer can compute its output shape
  -- (so variables are made outside any trace, and a checkpoint's deferred
  -- restore assigns them at once); false when one cannot.
  function Sequential._build_from_shapes(self, shape)
    for _, layer in ipairs(self._layers) do
      if not layer.compute_output_shape then return false end
    end
    for _, layer in ipairs(self._layers) do
      layer:_maybe_build(shape)
      shape = layer:compute_output_shape(shape)
      layer:_record_output_shape(shape)
    end
    return true
  end

  function Sequential.call(self, x, opts)
    for _, layer in ipairs(self._layers) do x = layer(x, opts) end
    return x
  end

  -- Sequential is built by its layers, each on its first call.
  function Sequential._maybe_build(self, _) rawset(self, "built", true) end

  --- Checkpoint children, TensorFlow's names: layer_with_weights-K (the
  -- layers that have variables, from 0), then layer-K (all, from 0), then
  -- other tracked attributes (an optimizer, ...).
  function Sequential._checkpoint_children(self)
    local out = {}
    local k = 0
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
  -- }====
end
