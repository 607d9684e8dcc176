--- tf.saved_model: save traced functions, their graphs and variables to a
-- directory, and load them back with no Lua source of the original
-- (docs/saved_model.md). The files are written and read by core/saved_model.c
-- (a C host loads the same directory with ltf_saved_model_load); this module
-- chooses what to save (tf.fn concrete functions reachable from the object,
-- signatures, a Keras model's call) and keeps, per function, the structure of
-- its arguments and results as JSON ("meta") so the loaded function is
-- called like the original.
return function(tf)
  local core = tf.core
  local raise = tf.errors.raise
  local TT = tf.trace_type
  local CF = tf.ConcreteFunction
  local sfmt, concat = string.format, table.concat

  local M = {}
  tf.saved_model = M
  M.SERVING = "serve"
  M.DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"

  local json
  local function get_json()
    if not json then
      local ok, cjson = pcall(require, "cjson")
      if not ok then
        raise("UnimplementedError", "tf.saved_model needs lua-cjson (Debian: apt-get install lua-cjson; or " ..
          "luarocks install lua-cjson): " .. tostring(cjson), 4)
      end
      json = cjson.new()
      json.encode_sparse_array(true)
      json.decode_max_depth(64)
    end
    return json
  end
  local NULL = {}   -- stands for json.null in templates

  -- {==== trace types and output templates <-> JSON
  local function literal_json(v, what)
    local t = type(v)
    if t == "nil" then return {k = "L", t = "nil"} end
    if t == "boolean" or t == "string" then return {k = "L", t = t, v = v} end
    if t == "number" then
      if math.type(v) == "integer" then return {k = "L", t = "int", v = sfmt("%d", v)} end
      if v ~= v or v == math.huge or v == -math.huge then return {k = "L", t = "float", v = tostring(v)} end
      return {k = "L", t = "float", v = sfmt("%.17g", v)}
    end
    raise("ValueError", sfmt("tf.saved_model.save: %s is a %s, which a SavedModel cannot hold (tensors, numbers, " ..
      "strings, booleans and tables of them can)", what, t), 5)
  end

  local function literal_value(j)
    if j.t == "nil" then return nil end
    if j.t == "int" then return math.tointeger(tonumber(j.v)) end
    if j.t == "float" then
      if j.v == "nan" or j.v == "-nan" then return 0 / 0 end
      if j.v == "inf" then return math.huge end
      if j.v == "-inf" then return -math.huge end
      return tonumber(j.v) + 0.0
    end
    if j.t == "boolean" or j.t == "string" then return j.v end
    error("bad literal")
  end

  local function type_json(t, what)
    local mt = getmetatable(t)
    if mt == TT.TensorSpec then
      local dims = t._dims
      return {k = "T", dtype = t.dtype.name, shape = dims and {table.unpack(dims)} or false, name = t.name}
    elseif mt == TT.LiteralMT then
      return literal_json(t.value, what)
    elseif mt == TT.List then
      local items = {}
      for i, it in ipairs(t.items) do items[i] = type_json(it, what .. "[" .. i .. "]") end
      return {k = "list", items = items}
    elseif mt == TT.Dict then
      local keys, items = {}, {}
      for i, key in ipairs(t.keys) do
        keys[i] = literal_json(key, what)
        items[i] = type_json(t.map[key], what .. "." .. tostring(key))
      end
      return {k = "dict", keys = keys, items = items}
    elseif mt == TT.VariableSpec then
      return {k = "var"}
    end
    raise("ValueError", sfmt("tf.saved_model.save: %s is traced as %s, which a SavedModel cannot hold (tensors, " ..
      "numbers, strings, booleans and tables of them can)", what, tostring(t)), 5)
  end

  -- a parameter that took a variable: the loaded graph reads its own copy
  local AnyVar = {kind = "AnyVariable"}
  AnyVar.__index = AnyVar
  AnyVar.__tostring = function() return "VariableSpec(saved)" end
  function AnyVar.key() return "AV" end
  function AnyVar.cast(_, v) return v end
  function AnyVar.flatten() end
  function AnyVar.is_subtype_of(a, b) return getmetatable(b) == AnyVar end
  function AnyVar.most_specific_common_supertype(a) return a end

  local function type_of_json(j)
    if type(j) ~= "table" then error("bad type") end
    if j.k == "T" then
      local dims = nil
      if type(j.shape) == "table" then
        dims = {}
        for i, d in ipairs(j.shape) do dims[i] = math.tointeger(d) end
      end
      local name = type(j.name) == "string" and j.name or nil
      return TT.new_spec(dims, tf.dtypes.as_dtype(j.dtype), name)
    elseif j.k == "L" then
      return TT.Literal(literal_value(j))
    elseif j.k == "list" then
      local items = {}
      for i, it in ipairs(j.items) do items[i] = type_of_json(it) end
      return setmetatable({items = items}, TT.List)
    elseif j.k == "dict" then
      local keys, map = {}, {}
      for i, kj in ipairs(j.keys) do
        keys[i] = literal_value(kj)
        map[keys[i]] = type_of_json(j.items[i])
      end
      return setmetatable({keys = keys, map = map}, TT.Dict)
    elseif j.k == "var" then
      return setmetatable({}, AnyVar)
    end
    error("bad type kind")
  end

  local function ret_json(node, what)
    if node.k == "t" then return {k = "t", i = node.i} end
    if node.k == "v" then return {k = "v", v = literal_json(node.v, what)} end
    local keys, items = {}, {}
    for j, key in ipairs(node.keys) do
      keys[j] = literal_json(key, what)
      items[j] = ret_json(node.items[j], what .. "." .. tostring(key))
    end
    return {k = "tab", keys = keys, items = items, array = node.array and true or false}
  end

  local function ret_of_json(j)
    if j.k == "t" then return {k = "t", i = math.tointeger(j.i)} end
    if j.k == "v" then return {k = "v", v = literal_value(j.v)} end
    if j.k ~= "tab" then error("bad result kind") end
    local keys, items = {}, {}
    for i, kj in ipairs(j.keys) do
      keys[i] = literal_value(kj)
      items[i] = ret_of_json(j.items[i])
    end
    return {k = "tab", keys = keys, items = items, array = j.array == true}
  end
  -- }====

  -- {==== saving
  local function param_names(cf)
    local names = {}
    local pn = cf._pf._names or {}
    for i = 1, cf._ft.n do names[i] = pn[i] or ("args_" .. (i - #pn)) end
    return names
  end

  local function meta_of(cf, kind, path)
    local types, ret = {}, {}
    local names = param_names(cf)
    for i = 1, cf._ft.n do types[i] = type_json(cf._ft.types[i], sfmt("%s: argument '%s'", path, names[i])) end
    for i = 1, cf._nret do ret[i] = ret_json(cf._ret[i], sfmt("%s: result %d", path, i)) end
    return get_json().encode({kind = kind, path = path, params = names, types = types, ret = ret, nret = cf._nret})
  end

  local function input_names(cf)
    local names = {}
    for i, t in ipairs(core.graph_signature(cf._G)) do names[i] = t.name end
    return names
  end

  -- A signature's outputs: the keys of a returned table of tensors, else output_0, output_1, ...
  local function output_names(cf)
    local n = #cf._otypes
    local names = {}
    for i = 1, n do names[i] = "output_" .. (i - 1) end
    -- an imported ONNX model: its outputs' names (distinct in a valid model)
    local onnx = rawget(cf, "onnx")
    if onnx and #onnx.outputs == n and cf._nret == n then
      local seen = {}
      for i, o in ipairs(onnx.outputs) do
        if type(o.name) ~= "string" or o.name == "" or seen[o.name] then return names end
        seen[o.name] = true
      end
      for i, o in ipairs(onnx.outputs) do names[i] = o.name end
      return names
    end
    if cf._nret == 1 and cf._ret[1].k == "tab" and not cf._ret[1].array then
      local node = cf._ret[1]
      local ok = #node.items == n
      for j, it in ipairs(node.items) do
        if it.k ~= "t" or it.i ~= j or type(node.keys[j]) ~= "string" then ok = false end
      end
      if ok then
        for j = 1, n do names[j] = node.keys[j] end
      end
    end
    return names
  end

  local function is_cf(x) return getmetatable(x) == CF end
  local LoadedFn = {}   -- metatable of a loaded function (below)
  local Loaded = {}     -- metatable of a loaded object
  local Signature = {}  -- metatable of a loaded signature

  local function concrete_of_signature(f, key)
    if is_cf(f) then return f end
    if tf.is_fn(f) then
      if not f._sig then
        raise("ValueError", sfmt("tf.saved_model.save: signature '%s' is a tf.fn without an input_signature; give " ..
          "it one, or pass f:get_concrete_function(specs...)", key), 4)
      end
      return f:get_concrete_function()
    end
    if getmetatable(f) == LoadedFn then return f._cfs[1] end
    raise("TypeError", sfmt("tf.saved_model.save: signature '%s' must be a tf.fn with an input_signature or a " ..
      "concrete function, got %s", key, type(f)), 4)
  end

  local function is_keras_model(obj)
    local keras = rawget(tf, "keras")
    return type(obj) == "table" and keras ~= nil and keras.Model ~= nil and obj.built ~= nil and
      type(obj.call) == "function" and type(obj.trainable_variables) == "table"
  end

  -- A Keras model's call for its input spec: recorded at its first call, or from its input shape.
  local function keras_signature(model)
    local spec = rawget(model, "_saved_input_spec")
    if spec == nil then
      local bis = rawget(model, "_batch_input_shape")
      if bis == nil then
        local ok, ls = pcall(function() return model.layers end)
        if ok and type(ls) == "table" and ls[1] then bis = rawget(ls[1], "_batch_input_shape") end
      end
      if bis ~= nil then
        local dims = {}
        for i = 1, #bis do dims[i] = bis[i] == nil and -1 or bis[i] end
        if #dims > 0 then dims[1] = -1 end
        spec = tf.TensorSpec(dims, model._input_dtype or tf.float32)
      end
    end
    if spec == nil then
      raise("ValueError", sfmt("tf.saved_model.save: the input shape of model '%s' is not known: call the model " ..
        "once, build it (model:build(shape)), give its first layer an input_shape, or pass signatures", 
        tostring(model.name)), 4)
    end
    -- named as Keras names them: the first layer's name .. "_input" (or the
    -- model's Input), the outputs by the last layer's name
    local first, last
    pcall(function()
      local ls = model.layers
      first, last = ls[1], ls[#ls]
    end)
    local in_name = spec.name or "input_1"
    if first and first.name then
      -- a functional model's Input layer gives its own name; a Sequential's first layer "<name>_input"
      in_name = spec.name or (first._class_name == "InputLayer" and first.name or (first.name .. "_input"))
    end
    local out_name = last and last.name or "output_0"
    spec = tf.TensorSpec(spec._dims, spec.dtype, in_name)
    return tf.fn(function(inputs)
      local y = model(inputs, {training = false})
      if tf.is_tensor(y) then return {[out_name] = y} end
      return y
    end, {input_signature = {spec}, name = "serving_default"})
  end

  -- A Keras model's call in inference mode, as a concrete function for its input spec.
  local function keras_call(model)
    local spec = rawget(model, "_saved_input_spec")
    if spec == nil then spec = keras_signature(model):get_concrete_function()._ft.types[1] end
    local call = tf.fn(function(inputs) return model(inputs, {training = false}) end, {input_signature = {spec},
                       name = "call"})
    return call:get_concrete_function()
  end

  local function add_entry(list, names, e)
    if names[e.name] then
      raise("ValueError", sfmt("tf.saved_model.save: two functions would be saved as '%s'", e.name), 4)
    end
    names[e.name] = true
    list[#list + 1] = e
  end

  local function add_function(list, names, path, cfs)
    for k, cf in ipairs(cfs) do
      local name = #cfs == 1 and path or (path .. "#" .. k)
      add_entry(list, names, {name = name, graph = cf._G, signature = false, inputs = input_names(cf),
                              outputs = output_names(cf), meta = meta_of(cf, "fn", path)})
    end
  end

  -- Every tf.fn (with concrete functions) and concrete function reachable from obj.
  local function walk(obj, path, seen, list, names, depth)
    if depth > 8 then return end
    if tf.is_fn(obj) then
      local cfs = obj:concrete_functions()
      -- one with an input_signature is traced now if it never was (TensorFlow's)
      if #cfs == 0 and rawget(obj, "_sig") then cfs = {obj:get_concrete_function()} end
      if #cfs > 0 then add_function(list, names, path, cfs) end
      return
    end
    if is_cf(obj) then
      add_function(list, names, path, {obj})
      return
    end
    if getmetatable(obj) == LoadedFn then
      add_function(list, names, path, obj._cfs)
      return
    end
    if type(obj) ~= "table" or seen[obj] or tf.is_variable(obj) or tf.is_tensor(obj) then return end
    seen[obj] = true
    if is_keras_model(obj) and path ~= "" then   -- a model held by the object: its call, by its path
      add_function(list, names, path, {keras_call(obj)})
      return
    end
    local keys = {}
    for k, v in next, obj do
      if type(k) == "string" and k:sub(1, 1) ~= "_" and k ~= "signatures" and
         (type(v) == "table" or type(v) == "userdata") then
        keys[#keys + 1] = k
      end
    end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local sub = path == "" and k or (path .. "." .. k)
      walk(rawget(obj, k), sub, seen, list, names, depth + 1)
    end
  end

  --- tf.saved_model.save(obj, dir, {signatures = f | {name = f, ...}}): write
  -- every tf.fn reachable from obj that has concrete functions (or an
  -- input_signature: traced now), the
  -- signatures (a Keras model: its call, traced for its input spec, as
  -- "serving_default"), their graphs and the variables they capture.
  function M.save(obj, dir, opts)
    if type(dir) ~= "string" or dir == "" then
      raise("TypeError", "tf.saved_model.save: the directory must be a non-empty string", 2)
    end
    opts = opts or {}
    -- TensorFlow's positional form: save(obj, dir, signatures)
    if tf.is_fn(opts) or is_cf(opts) then opts = {signatures = opts} end
    if type(opts) ~= "table" then raise("TypeError", "tf.saved_model.save: options must be a table", 2) end
    for k in pairs(opts) do
      if k ~= "signatures" and k ~= "options" then
        raise("TypeError", sfmt("tf.saved_model.save: unknown option '%s' (accepted: options, signatures)",
          tostring(k)), 2)
      end
    end
    local list, names = {}, {}
    -- signatures first
    local sigs = opts.signatures
    if sigs == nil and getmetatable(obj) == Loaded then sigs = rawget(obj, "signatures") end
    if sigs == nil and is_keras_model(obj) then sigs = keras_signature(obj) end
    if sigs ~= nil then
      if type(sigs) == "table" and getmetatable(sigs) == nil then
        local keys = {}
        for k in pairs(sigs) do
          if type(k) ~= "string" then
            raise("TypeError", "tf.saved_model.save: signatures must be keyed by name (strings)", 2)
          end
          keys[#keys + 1] = k
        end
        table.sort(keys)
        local t = {}
        for _, k in ipairs(keys) do t[#t + 1] = {k, sigs[k]} end
        sigs = t
      else
        sigs = {{"serving_default", sigs}}
      end
      for _, kv in ipairs(sigs) do
        local sig = kv[2]
        if getmetatable(sig) == Signature then   -- a loaded signature, saved again as it was
          add_entry(list, names, {name = kv[1], graph = sig._cf._G, signature = true, inputs = sig.inputs,
                                  outputs = sig.outputs, meta = sig._meta})
        else
          local cf = concrete_of_signature(sig, kv[1])
          add_entry(list, names, {name = kv[1], graph = cf._G, signature = true, inputs = input_names(cf),
                                  outputs = output_names(cf), meta = meta_of(cf, "signature", kv[1])})
        end
      end
    end
    local seen = {}
    if is_keras_model(obj) and list[1] then
      -- the model itself calls like its serving signature
      add_function(list, names, "__call__", {keras_call(obj)})
      seen[obj] = true   -- its layers' own traces are internal
    elseif getmetatable(obj) == Loaded then
      local fns = rawget(obj, "_functions")
      for _, path in ipairs(fns) do add_function(list, names, path, obj._by_path[path]._cfs) end
      seen[obj] = true
    else
      local callable = tf.is_fn(obj) or is_cf(obj) or getmetatable(obj) == LoadedFn
      walk(obj, callable and "__call__" or "", seen, list, names, 0)
    end
    if #list == 0 then
      raise("ValueError", "tf.saved_model.save: nothing to save: the object has no tf.fn with concrete functions " ..
        "(call it once, or use get_concrete_function) and no signatures", 2)
    end
    core.saved_model_save(dir, list)
  end
  -- }====

  -- {==== loading
  LoadedFn.__index = LoadedFn
  LoadedFn.__name = "tf.saved_model.LoadedFunction"

  --- A loaded function: the concrete function whose input types accept the arguments.
  function LoadedFn.__call(f, ...)
    local cfs = f._cfs
    if #cfs == 1 then return cfs[1](...) end
    local n = select("#", ...)
    local args = {...}
    local errs = {}
    for _, cf in ipairs(cfs) do
      local ft = cf._ft
      local fits = n <= ft.n
      for i = 1, ft.n do
        if not fits then break end
        local _, err = ft.types[i]:cast(args[i])
        if err then fits = false end
      end
      if fits then return cf(...) end
      errs[#errs + 1] = "  " .. cf:pretty_printed_signature(false)
    end
    raise("TypeError", sfmt("%s: the arguments match none of the saved concrete functions:\n%s", f.name,
      concat(errs, "\n")), 2)
  end
  function LoadedFn.concrete_functions(f) return {table.unpack(f._cfs)} end
  function LoadedFn.get_concrete_function(f, ...)
    if select("#", ...) == 0 then return f._cfs[1] end
    for _, cf in ipairs(f._cfs) do
      local ok = true
      for i = 1, cf._ft.n do
        local v = select(i, ...)
        if tf.is_tensor(v) then v = tf.TensorSpec(v.shape, v.dtype) end
        if getmetatable(v) == TT.TensorSpec then
          if not v:is_subtype_of(cf._ft.types[i]) then ok = false end
        elseif select(2, cf._ft.types[i]:cast(v)) then
          ok = false
        end
      end
      if ok then return cf end
    end
    raise("ValueError", sfmt("%s: no saved concrete function for these arguments", f.name), 2)
  end
  function LoadedFn.__tostring(f) return sfmt("<tf.saved_model function '%s' (%d concrete)>", f.name, #f._cfs) end

  -- A signature: a table of named inputs in, a table of named outputs back.
  Signature.__index = Signature
  Signature.__name = "tf.saved_model.Signature"
  function Signature.__call(s, inputs, ...)
    if select("#", ...) > 0 or type(inputs) ~= "table" or tf.is_tensor(inputs) or getmetatable(inputs) ~= nil then
      raise("TypeError", sfmt("signature '%s': call it with one table of named inputs {%s = tensor, ...}", s.name,
        concat(s.inputs, " = ..., ")), 2)
    end
    for k in pairs(inputs) do
      if not s._index[k] then
        raise("TypeError", sfmt("signature '%s' got an unexpected keyword argument '%s' (its inputs: %s)", s.name,
          tostring(k), concat(s.inputs, ", ")), 2)
      end
    end
    local flat = {}
    for i, name in ipairs(s.inputs) do
      local x = inputs[name]
      if x == nil then
        raise("TypeError", sfmt("signature '%s' is missing input '%s' (its inputs: %s)", s.name, name,
          concat(s.inputs, ", ")), 2)
      end
      local spec = s._specs[i]
      if not tf.is_tensor(x) then x = tf.constant(x, spec.dtype) end
      flat[i] = x
    end
    -- through the concrete function (shape and dtype checks, gradients)
    local outs = table.pack(s._cf(table.unpack(flat, 1, #s.inputs)))
    local res = {}
    for i, name in ipairs(s.outputs) do res[name] = outs[i] end
    return res
  end
  function Signature.__tostring(s)
    return sfmt("<tf.saved_model signature '%s' (%s) -> (%s)>", s.name, concat(s.inputs, ", "), concat(s.outputs, ", "))
  end
  function Signature.get_concrete_function(s) return s._cf end

  Loaded.__name = "tf.saved_model.Loaded"
  Loaded.__call = function(m, ...)
    local fn = rawget(m, "__call__")
    if not fn then raise("TypeError", "tf.saved_model: the loaded object is not callable (it saved no __call__)", 2) end
    return fn(...)
  end
  Loaded.__tostring = function(m)
    return sfmt("<tf.saved_model object from '%s': %d functions, %d signatures, %d variables>", m._dir,
      #m._functions, #m._signature_names, #m.variables)
  end

  local function check_meta(dir, name, ok, res)
    if not ok then
      raise("DataLossError", sfmt("tf.saved_model.load: '%s': function '%s' has a corrupted description (%s)", dir,
        name, tostring(res)), 4)
    end
    return res
  end

  --- tf.saved_model.load(dir) -> an object: its functions (by the names they
  -- were saved under; `m(x)` for __call__), `m.signatures` (named inputs ->
  -- named outputs), `m.variables` / `m.trainable_variables`.
  function M.load(dir, opts)
    if type(dir) ~= "string" then raise("TypeError", "tf.saved_model.load: the directory must be a string", 2) end
    local raw = core.saved_model_load(dir)
    local variables, trainable = {}, {}
    for i, v in ipairs(raw.variables) do
      local _, train = core.variable_info(v.handle)
      variables[i] = setmetatable({_handle = v.handle, _name = v.name, trainable = train}, tf.Variable.mt)
      if train then trainable[#trainable + 1] = variables[i] end
    end
    local m = {signatures = {}, variables = variables, trainable_variables = trainable, _dir = dir,
               _functions = {}, _signature_names = {}, _by_path = {}}
    local J = get_json()
    for _, f in ipairs(raw.functions) do
      local meta
      if f.meta == "" or f.meta == "{}" then
        -- saved from C (ltf_saved_model_save) with no description: the flat
        -- inputs, as TensorSpecs named by the inputs' names; the flat outputs
        meta = {types = {}, params = {}, ret = {}, path = f.name}
        for i, t in ipairs(core.graph_signature(f.graph)) do
          meta.params[i] = f.inputs[i]
          meta.types[i] = {k = "T", dtype = tf.core.internal.dtype_by_enum[t.dtype].name, shape = t.shape or false,
                           name = f.inputs[i]}
        end
        for i = 1, #f.outputs do meta.ret[i] = {k = "t", i = i} end
        meta.nret = #f.outputs
      else
        meta = check_meta(dir, f.name, pcall(J.decode, f.meta))
      end
      local cf = check_meta(dir, f.name, pcall(function()
        local types, ret = {}, {}
        for i, tj in ipairs(meta.types) do types[i] = type_of_json(tj) end
        for i, rj in ipairs(meta.ret) do ret[i] = ret_of_json(rj) end
        local params = {}
        for i, p in ipairs(meta.params) do params[i] = tostring(p) end
        return CF._from_graph(f.graph, {name = f.name, params = params, types = types, ret = ret,
                                        nret = math.tointeger(meta.nret) or #ret})
      end))
      if f.signature then
        -- a signature's concrete function takes the flat inputs and returns the flat outputs
        local specs, params, ret = {}, {}, {}
        for i, t in ipairs(core.graph_signature(f.graph)) do
          specs[i] = TT.new_spec(t.shape, tf.core.internal.dtype_by_enum[t.dtype], f.inputs[i])
          params[i] = f.inputs[i]
        end
        for i = 1, #f.outputs do ret[i] = {k = "t", i = i} end
        local scf = CF._from_graph(f.graph, {name = f.name, params = params, types = specs, ret = ret,
                                             nret = #ret})
        local index = {}
        for i, n in ipairs(f.inputs) do index[n] = i end
        local s = setmetatable({name = f.name, inputs = f.inputs, outputs = f.outputs, _index = index,
                                _specs = specs, _cf = scf, _meta = f.meta}, Signature)
        m.signatures[f.name] = s
        m._signature_names[#m._signature_names + 1] = f.name
      else
        local path = type(meta.path) == "string" and meta.path or f.name
        local lf = m._by_path[path]
        if not lf then
          lf = setmetatable({name = path, _cfs = {}}, LoadedFn)
          m._by_path[path] = lf
          m._functions[#m._functions + 1] = path
          -- dotted paths become nested tables: m.encoder.encode(x)
          local t = m
          local parts = {}
          for p in path:gmatch("[^.]+") do parts[#parts + 1] = p end
          for i = 1, #parts - 1 do
            local sub = rawget(t, parts[i])
            if type(sub) ~= "table" or getmetatable(sub) ~= nil then
              sub = {}
              rawset(t, parts[i], sub)
            end
            t = sub
          end
          if #parts > 0 then rawset(t, parts[#parts], lf) end
        end
        lf._cfs[#lf._cfs + 1] = cf
      end
    end
    return setmetatable(m, Loaded)
  end
  -- }====
end
