--- Whole Keras models in one file (docs/keras_saving.md): model:save("m.keras"),
-- tf.keras.models.load_model / tf.keras.saving.save_model / load_model, and
-- the registry of custom classes (tf.keras.saving.register_keras_serializable,
-- get_registered_object, get_registered_name).
--
-- A .keras file is a zip archive (lua/tf/keras/saving_zip.lua) holding, as
-- Keras 3's, metadata.json and config.json (the model's serialized config
-- with its compile_config and build_config), and the weights: Keras 3 stores
-- them as model.weights.h5; luatf has no HDF5, so they are
-- model.weights.safetensors, a luatf checkpoint file (safetensors; written
-- by lua/tf/train/checkpoint.lua) keyed by Keras 3's weight paths:
-- "layers/dense/vars/0" (a layer's own variables in creation order, its
-- sublayers under "layers/<name>"), "optimizer/vars/0" (iterations), then
-- the optimizer's slots.
return function(tf)
  local keras = tf.keras
  local K = tf.core.internal.keras
  local raise = K.raise
  local is_layer = K.is_layer
  local sfmt = string.format
  local L = keras.layers
  local Layer = L.Layer
  local Model = keras.Model
  local Sequential = keras.Sequential
  local Functional = K.Functional
  local json = require("tf.keras.saving_json")(tf)
  local zip = require("tf.keras.saving_zip")(tf)

  local saving = keras.saving or {}
  keras.saving = saving
  keras.models = keras.models or {}

  local FORMAT = "luatf.keras"
  local FORMAT_VERSION = 1
  local KERAS_VERSION = "3.0.0"      -- the Keras format this file follows (its layout and config forms)
  local WEIGHTS = "model.weights.safetensors"

  local function is_plain(v) return type(v) == "table" and getmetatable(v) == nil end

  -- true when instance `obj`'s class is `cls` or derives from it
  local function is_a(obj, cls)
    local c = getmetatable(obj)
    local n = 0
    while type(c) == "table" and n < 100 do
      if c == cls then return true end
      local mt = getmetatable(c)
      c = mt and mt.__index
      n = n + 1
    end
    return false
  end

  -- {==== the registry of custom objects
  local registry = {}      -- "package>name" -> class or function
  local names_of = {}      -- class or function -> "package>name"

  --- tf.keras.saving.register_keras_serializable{package = "Custom", name = <class name>}:
  -- a function that registers a class (made by extend) or a function under
  -- "package>name" and returns it. Also register_keras_serializable(obj [, opts]).
  function saving.register_keras_serializable(a, b)
    local function register(obj, opts)
      opts = opts or {}
      if type(obj) ~= "function" and not (type(obj) == "table" and (obj._class_name or obj.get_config)) then
        raise("TypeError", sfmt("register_keras_serializable: expected a class (made by extend) or a function, " ..
          "got %s", type(obj)))
      end
      local pkg = opts.package or "Custom"
      local name = opts.name or (type(obj) == "table" and obj._class_name)
      if type(name) ~= "string" then
        raise("ValueError", "register_keras_serializable: a function needs a name: {package =, name =}")
      end
      if type(pkg) ~= "string" or pkg:find(">", 1, true) or name:find(">", 1, true) then
        raise("ValueError", "register_keras_serializable: package and name must be strings without '>'")
      end
      if type(obj) == "table" and obj._class_name and not obj.get_config then
        raise("ValueError", sfmt("register_keras_serializable: class %s has no get_config", obj._class_name))
      end
      local key = pkg .. ">" .. name
      registry[key] = obj
      names_of[obj] = key
      return obj
    end
    if a ~= nil and (type(a) == "function" or (type(a) == "table" and getmetatable(a) ~= nil)) then
      return register(a, b)
    end
    if a ~= nil and not is_plain(a) then
      raise("TypeError", "register_keras_serializable: expected {package =, name =} or a class")
    end
    return function(obj) return register(obj, a) end
  end

  --- tf.keras.saving.get_registered_name(obj): "package>name", or the class
  -- name (a function: nil) when it is not registered.
  function saving.get_registered_name(obj)
    if names_of[obj] then return names_of[obj] end
    if type(obj) == "table" then return obj._class_name end
    return nil
  end

  --- tf.keras.saving.get_registered_object(name [, custom_objects]): the
  -- class or function registered as `name` ("package>name"), or given in
  -- custom_objects; nil when none.
  function saving.get_registered_object(name, custom_objects)
    if custom_objects and custom_objects[name] ~= nil then return custom_objects[name] end
    return registry[name]
  end

  --- tf.keras.saving.get_custom_objects(): a copy of the registry ("package>name" -> object).
  function saving.get_custom_objects()
    local out = {}
    for k, v in pairs(registry) do out[k] = v end
    return out
  end
  keras.utils = keras.utils or {}
  keras.utils.register_keras_serializable = saving.register_keras_serializable
  keras.utils.get_registered_object = saving.get_registered_object
  keras.utils.get_registered_name = saving.get_registered_name

  -- the table deserialize looks classes up in: the registry by its names and
  -- by class name, then the caller's custom_objects
  local function lookup_table(custom_objects)
    local t = {}
    for k, v in pairs(registry) do
      t[k] = v
      if type(v) == "table" and v._class_name then t[v._class_name] = v end
    end
    for k, v in pairs(custom_objects or {}) do t[k] = v end
    return t
  end
  -- }====

  -- {==== recording the input shape (Keras's build_config)
  local function shape_rec(x)
    if tf.is_tensor(x) or tf.is_variable(x) then
      if K.is_keras_tensor and K.is_keras_tensor(x) then return nil end
      local dims = x.shape:as_list()
      if dims == nil then return nil end
      local d = {}
      for i, v in ipairs(dims) do d[i] = (i == 1 or v == nil or v < 0) and -1 or v end
      return {shape = d, dtype = x.dtype.name}
    end
    if is_plain(x) then
      local out, any = {}, false
      for k, v in pairs(x) do
        local r = shape_rec(v)
        if r == nil then return nil end
        out[k] = r
        any = true
      end
      return any and out or nil
    end
    return nil
  end

  local base_call = Layer.__call_layer
  function Model.__call_layer(self, inputs, opts)
    if not rawget(self, "_build_input") and not (K.has_keras_tensor and K.has_keras_tensor(inputs)) then
      local ok, rec = pcall(shape_rec, inputs)
      if ok and rec then rawset(self, "_build_input", rec) end
    end
    return base_call(self, inputs, opts)
  end
  local base_build = Model.build
  function Model.build(self, input_shape)
    if input_shape ~= nil and not rawget(self, "_build_input") then
      local dims = getmetatable(input_shape) == tf.TensorShape.mt and input_shape:as_list() or input_shape
      if is_plain(dims) and (#dims == 0 or type(dims[1]) == "number") then
        local d = {}
        for i, v in ipairs(dims) do d[i] = (i == 1 or v < 0) and -1 or v end
        rawset(self, "_build_input", {shape = d, dtype = (self._input_dtype or self._dtype).name})
      end
    end
    return base_build(self, input_shape)
  end
  -- }====

  -- {==== weights: Keras 3's paths
  -- The sublayers of `layer` with their path names: a Sequential's and a
  -- functional model's layers by their names (which configs keep), any
  -- other layer's by the attribute holding them ("dense1", "blocks/0").
  local function named_children(layer)
    local out, seen = {}, {}
    local function add(name, l)
      if not seen[l] and l ~= layer then seen[l] = true; out[#out + 1] = {name, l} end
    end
    if is_a(layer, Sequential) or is_a(layer, Functional) then
      for _, l in ipairs(rawget(layer, "_layers") or {}) do add(l.name, l) end
    end
    local function scan(v, path, tseen)
      if is_layer(v) then add(path, v); return end
      if not is_plain(v) or tseen[v] then return end
      tseen[v] = true
      local n = #v
      for i = 1, n do scan(v[i], path .. "/" .. (i - 1), tseen) end
      local keys = require("tf.util").nonarray_keys(v)
      for _, k in ipairs(keys) do scan(v[k], path .. "/" .. tostring(k), tseen) end
    end
    for _, k in ipairs(rawget(layer, "_attr_order") or {}) do
      if type(k) == "string" and k:sub(1, 1) ~= "_" then scan(rawget(layer, k), k, {}) end
    end
    -- anything tracked another way (a layer's own _sublayers)
    for _, l in ipairs(layer:_sublayers()) do add(l.name, l) end
    return out
  end

  --- Array of {key =, var =} for every variable of `model`, by Keras 3's
  -- paths, each variable once (the first path that reaches it).
  local function model_weights(model)
    local out, vseen, lseen, kseen = {}, {}, {}, {}
    local function visit(layer, prefix)
      if lseen[layer] then return end
      lseen[layer] = true
      local own = layer:_own_variables()
      for i, v in ipairs(own) do
        if not vseen[v] then
          vseen[v] = true
          local key = prefix .. "vars/" .. (i - 1)
          if kseen[key] then
            raise("ValueError", sfmt("save: two layers have the path '%s' (layers in one model need unique names)",
              prefix))
          end
          kseen[key] = true
          out[#out + 1] = {key = key, var = v}
        end
      end
      for _, c in ipairs(named_children(layer)) do visit(c[2], prefix .. "layers/" .. c[1] .. "/") end
    end
    visit(model, "")
    return out
  end

  --- Array of {key =, var =} for the optimizer's variables: "optimizer/vars/0"
  -- the iteration count, then its other state (Nadam's u_product), then per
  -- trainable variable of the model (in order) its slots in slot_names order,
  -- numbered over every possible slot so that a slot never created (a
  -- variable without a gradient yet) leaves a gap and the others keep their
  -- numbers.
  local function optimizer_weights(opt, model, create)
    local out = {}
    local n = 0
    -- a LossScaleOptimizer: the inner optimizer's state, then the loss scale's
    local inner = rawget(opt, "inner_optimizer")
    local base = inner or opt
    local function add(var, what)
      out[#out + 1] = {key = "optimizer/vars/" .. n, var = var, what = what}
      n = n + 1
    end
    add(base.iterations, "iterations")
    for _, c in ipairs(base:_checkpoint_children()) do
      if tf.is_variable(c[2]) and not rawequal(c[2], base.iterations) then add(c[2], c[1]) end
    end
    if inner then
      for _, c in ipairs(opt:_checkpoint_children()) do
        if tf.is_variable(c[2]) then add(c[2], c[1]) end
      end
    end
    local names = base:slot_names()
    if create then base:build(model.trainable_variables) end
    for _, v in ipairs(model.trainable_variables) do
      local slots = base._slots and base._slots[v]
      for _, sname in ipairs(names) do
        local s = slots and slots[sname]
        if s then out[#out + 1] = {key = "optimizer/vars/" .. n, var = s, what = sname} end
        n = n + 1
      end
    end
    return out
  end
  -- }====

  -- {==== configs to plain data
  local function fail_save(msg) raise("ValueError", "save: " .. msg) end

  -- functions and other values in configs: a registered function by its
  -- name (Keras's {class_name = "function", registered_name =}); a dtype by
  -- name; a shape as its list; a tensor as a nested list with its dtype
  local function convert(v, path)
    if type(v) == "function" or (type(v) == "table" and names_of[v]) then
      local name = names_of[v]
      if not name then
        fail_save(sfmt("the config holds a Lua function at %s, which cannot be saved: register it with " ..
          "tf.keras.saving.register_keras_serializable{package =, name =}(fn) (and register it again before " ..
          "loading)", path))
      end
      return {class_name = "function", config = name, registered_name = name, module = "luatf.registered"}
    end
    if tf.is_tensor(v) or tf.is_variable(v) then
      local t = tf.is_variable(v) and v:value() or v
      return {class_name = "__tensor__", config = {dtype = t.dtype.name, value = t:totable()}}
    end
    if type(v) == "table" and getmetatable(v) == tf.TensorShape.mt then return v:as_list() end
    if type(v) == "table" and v.name and v.is_floating ~= nil then return v.name end   -- a DType
    if type(v) == "table" and type(v.get_config) == "function" then
      local mt = getmetatable(v)
      local cname = v._class_name or v._class or (mt and mt.__name and mt.__name:match("[^.]*$"))
      return {class_name = cname, config = v:get_config(), registered_name = names_of[mt] or nil}
    end
    return nil
  end

  -- and back: registered functions and tensors
  local function revive(v, lookup)
    if not is_plain(v) then return v end
    if v.class_name == "function" and v.registered_name ~= nil then
      local f = lookup[v.registered_name]
      if f == nil then
        raise("ValueError", sfmt("load_model: unknown function '%s' in the config: register it with " ..
          "tf.keras.saving.register_keras_serializable{package =, name =}(fn) or pass it in " ..
          "custom_objects = {[\"%s\"] = fn}", v.registered_name, v.registered_name))
      end
      return f
    end
    if v.class_name == "__tensor__" and is_plain(v.config) then
      return tf.constant(v.config.value, tf.dtypes.as_dtype(v.config.dtype))
    end
    local out = {}
    for k, x in pairs(v) do out[k] = revive(x, lookup) end
    return out
  end

  -- a loss / metric / optimizer identifier of compile as data
  local function serialize_obj(x, what)
    if x == nil or type(x) == "string" or type(x) == "number" or type(x) == "boolean" then return x end
    if names_of[x] then return {class_name = "function", config = names_of[x], registered_name = names_of[x]} end
    if type(x) == "function" then
      fail_save(sfmt("the %s is a Lua function, which cannot be saved: register it with " ..
        "tf.keras.saving.register_keras_serializable{package =, name =}(fn), or save without the compile state " ..
        "(model:save(path, {include_optimizer = false}))", what))
    end
    if is_plain(x) then
      local out = {}
      for k, v in pairs(x) do out[k] = serialize_obj(v, what) end
      return out
    end
    if type(x) == "table" and type(x.get_config) == "function" then
      local mt = getmetatable(x)
      local cname = x._class or x._name or (mt and mt.__name and mt.__name:match("[^.]*$"))
      return {class_name = cname, config = x:get_config(), registered_name = names_of[mt]}
    end
    fail_save(sfmt("cannot serialize the %s (%s)", what, tostring(x)))
  end

  local function compile_config(model)
    local st = rawget(model, "_compile_state")
    if not st then return nil end
    local args = rawget(model, "_compile_args") or {}
    local opt = st.optimizer
    local c = {}
    local oc = opt:get_config()
    if type(oc.learning_rate) == "function" then
      fail_save("the optimizer's learning_rate is a Lua function, which cannot be saved: use a " ..
        "tf.keras.optimizers.schedules class (or a registered LearningRateSchedule)")
    end
    c.optimizer = {class_name = opt._name, config = oc, registered_name = names_of[getmetatable(opt)]}
    c.loss = serialize_obj(args.loss, "loss")
    c.metrics = serialize_obj(args.metrics, "metric")
    c.loss_weights = serialize_obj(args.loss_weights, "loss weight")
    c.run_eagerly = args.run_eagerly
    c.jit_compile = args.jit_compile
    c.steps_per_execution = args.steps_per_execution
    return c
  end

  local BUILTIN_MODULE = "keras.layers"
  local function model_config(model)
    local s = L.serialize(model)
    local cls = getmetatable(model)
    local builtin = cls == Functional or cls == Sequential or cls == Model or rawget(L, cls._class_name) == cls
    local reg = names_of[cls]
    if not builtin and not reg then
      fail_save(sfmt("the model's class %s is not registered: register it with " ..
        "tf.keras.saving.register_keras_serializable{package =, name =}(%s) so that load_model can find it",
        cls._class_name, cls._class_name))
    end
    if not builtin and cls.get_config == Layer.get_config and rawget(model, "_init_positional") then
      fail_save(sfmt("class %s has no get_config and was made with positional arguments: define " ..
        "%s:get_config() returning its constructor arguments (and %s.from_config(config) if its init does " ..
        "not take that table)", cls._class_name, cls._class_name, cls._class_name))
    end
    local c = {module = builtin and (cls == Functional and "keras.src.models.functional" or
                 cls == Sequential and "keras.src.models.sequential" or BUILTIN_MODULE) or nil,
               class_name = s.class_name, config = s.config, registered_name = reg or s.class_name}
    -- the model's own dtype policy (a Sequential's or functional model's
    -- config has none; compile wraps the optimizer for mixed_float16)
    local pol = rawget(model, "_policy")
    if pol then c.dtype_policy = pol.name end
    local bi = rawget(model, "_build_input")
    if bi then
      if bi.shape then
        c.build_config = {input_shape = bi.shape, dtype = bi.dtype}
      else
        local shapes, dtypes = {}, {}
        for k, r in pairs(bi) do shapes[k] = r.shape; dtypes[k] = r.dtype end
        c.build_config = {input_shape = shapes, dtype = dtypes}
      end
    end
    return c
  end
  -- }====

  -- {==== save
  local function has_suffix(s, suf) return #s >= #suf and s:sub(-#suf) == suf end

  local function checkpoint()
    local _ = tf.train
    return tf.core.internal.checkpoint
  end

  local function file_exists(path)
    local f = io.open(path, "rb")
    if f then f:close(); return true end
    return false
  end

  --- tf.keras.saving.save_model(model, path [, {overwrite = true, include_optimizer = true}])
  function saving.save_model(model, path, opts)
    if not is_layer(model) then raise("TypeError", sfmt("save: expected a model, got %s", type(model))) end
    if type(path) ~= "string" then raise("TypeError", sfmt("save: the path must be a string, got %s", type(path))) end
    opts = opts or {}
    if not is_plain(opts) then raise("TypeError", "save: the options must be a table {overwrite =, include_optimizer =}") end
    for k in pairs(opts) do
      if k ~= "overwrite" and k ~= "include_optimizer" and k ~= "save_format" then
        raise("TypeError", sfmt("save: unknown option '%s' (accepted: include_optimizer, overwrite)", tostring(k)))
      end
    end
    if has_suffix(path, ".h5") or has_suffix(path, ".hdf5") then
      raise("ValueError", sfmt("save: '%s': luatf has no HDF5 (the legacy .h5 format); save to a .keras file",
        path))
    end
    if not has_suffix(path, ".keras") then
      if package.searchpath("tf.saved_model", package.path) and tf.saved_model then
        return tf.saved_model.save(model, path)
      end
      raise("ValueError", sfmt("save: '%s' has no .keras extension. Save the whole model to one file with " ..
        "model:save(\"name.keras\"); TensorFlow 2 writes a SavedModel directory for other paths: use " ..
        "tf.saved_model.save(model, dir) for that", path))
    end
    if opts.overwrite == false and file_exists(path) then
      raise("AlreadyExistsError", sfmt("save: '%s' exists and overwrite is false", path))
    end
    if not model.built then
      raise("ValueError", sfmt("save: model \"%s\" is not built: call it on data or model:build(shape) first",
        model.name))
    end
    local config = model_config(model)
    local entries = model_weights(model)
    if opts.include_optimizer ~= false then
      config.compile_config = compile_config(model)
      local st = rawget(model, "_compile_state")
      if st then
        for _, e in ipairs(optimizer_weights(st.optimizer, model, false)) do entries[#entries + 1] = e end
      end
    end
    local okj, config_text = pcall(json.encode, config, {convert = convert})
    if not okj then
      if tf.errors.is_error(config_text) then error(config_text, 0) end
      fail_save(tostring(config_text))   -- a value no JSON holds (userdata, a table that contains itself)
    end
    local meta_text = json.encode({keras_version = KERAS_VERSION, format = FORMAT, format_version = FORMAT_VERSION,
                                   luatf_version = tostring(tf.__version__), weights = WEIGHTS,
                                   date_saved = os.date("!%Y-%m-%d@%H:%M:%S")})
    -- the weights: a checkpoint file written next to the target, read back
    -- into the archive, removed
    table.sort(entries, function(a, b) return a.key < b.key end)
    local tmp = sfmt("%s.weights-%d-%d.tmp", path, os.time(), math.random(1 << 30))
    local ok, err = pcall(checkpoint().write_file, tmp, entries)
    if not ok then os.remove(tmp); error(err, 0) end
    local f = io.open(tmp, "rb")
    local wbytes = f and f:read("a")
    if f then f:close() end
    os.remove(tmp)
    if not wbytes then raise("InternalError", sfmt("save: could not read back '%s'", tmp)) end
    local bytes = zip.write({{"metadata.json", meta_text}, {"config.json", config_text}, {WEIGHTS, wbytes}})
    wbytes = nil
    collectgarbage()
    tf.core.internal.file_write_atomic(path, bytes)
    return path
  end

  --- model:save(path [, opts]): tf.keras.saving.save_model(model, path, opts).
  function Model.save(self, path, opts) return saving.save_model(self, path, opts) end
  keras.models.save_model = saving.save_model
  -- }====

  -- {==== load
  local function bad(path, msg) raise("ValueError", sfmt("load_model: '%s': %s", path, msg)) end

  -- deserialize with the registry: an unknown class names itself and says to register it
  local function deserialize(spec, lookup, custom_objects, path)
    local name = spec.registered_name or spec.class_name
    local cls = lookup[name] or lookup[spec.class_name]
    local function unknown(cname)
      raise("ValueError", sfmt("%s: unknown class '%s': register it with " ..
        "tf.keras.saving.register_keras_serializable{package =, name =}(%s) before loading, or pass it in " ..
        "custom_objects = {%s = %s}", path and sfmt("load_model: '%s'", path) or "deserialize_keras_object", cname, cname:match("[^>]*$"), cname:match("[^>]*$"), cname:match("[^>]*$")))
    end
    local config = revive(spec.config or {}, lookup)
    if cls == nil then
      if spec.class_name == "Functional" or spec.class_name == "Model" or spec.class_name == "Sequential" or
         rawget(L, spec.class_name) then
        cls = nil
      else
        unknown(name)
      end
    end
    local ok, res = pcall(function()
      if cls ~= nil then
        local f = cls.from_config
        if type(f) ~= "function" then unknown(name) end
        -- a from_config written as a method (`function C:from_config(config)`) gets the class first
        local first = debug.getlocal(f, 1)
        if (first == "self" or first == "cls") and f ~= Functional.from_config and f ~= Sequential.from_config then
          return f(cls, config, lookup)
        end
        if f == Functional.from_config or f == Sequential.from_config then return f(config, lookup) end
        return f(config, lookup)
      end
      return L.deserialize({class_name = spec.class_name, config = config}, lookup)
    end)
    if not ok then
      local msg = type(res) == "table" and res.message or tostring(res)
      local cname = msg:match("unknown layer class '([^']*)'")
      if cname then unknown(cname) end
      error(res, 0)
    end
    return res
  end

  local function build_model(model, bc, path)
    if model.built and #model.variables > 0 and not rawget(model, "_building") then
      if is_a(model, Functional) then return end
    end
    if not bc or bc.input_shape == nil then return end
    local shape, dtype = bc.input_shape, bc.dtype
    if is_plain(shape) and (next(shape) == nil or type(shape[1]) == "number") then
      local dt = tf.dtypes.as_dtype(dtype or "float32")
      if dt.is_floating and model._build_from_shapes then
        rawset(model, "_input_dtype", rawget(model, "_input_dtype") or dt)
        model:build(shape)
      else
        local f = tf.fn(function(x) return model(x) end)
        f:get_concrete_function(tf.TensorSpec(shape, dt))
        rawset(model, "built", true)
      end
    else
      local specs = {}
      for k, s in pairs(shape) do specs[k] = tf.TensorSpec(s, tf.dtypes.as_dtype(dtype and dtype[k] or "float32")) end
      local f = tf.fn(function(x) return model(x) end)
      f:get_concrete_function(specs)
      rawset(model, "built", true)
    end
    if not rawget(model, "_build_input") then
      rawset(model, "_build_input", is_plain(shape) and type(shape[1]) == "number" and {shape = shape,
        dtype = dtype or "float32"} or nil)
    end
    local _ = path
  end

  local function dims_text(d)
    local t = {}
    for i, x in ipairs(d) do t[i] = tostring(x) end
    return "(" .. table.concat(t, ", ") .. (#d == 1 and ",)" or ")")
  end

  -- assign the file's values to `wanted` ({key =, var =}): every check first
  -- (missing, unexpected, dtype and shape), then the copies
  local function assign_all(cf, wanted, path, optional_prefix)
    local problems = {}
    local used = {}
    for _, w in ipairs(wanted) do
      local e = cf.entries[w.key]
      if e == nil then
        if not (optional_prefix and w.key:sub(1, #optional_prefix) == optional_prefix) then
          problems[#problems + 1] = sfmt("'%s' (variable %s) is missing from the file", w.key, w.var._name or "?")
        end
      else
        used[w.key] = true
        local vdims = w.var.shape:as_list()
        local same = e.dtype == w.var.dtype and #vdims == #(e.string_dims or e.dims)
        if same then
          for i, d in ipairs(e.string_dims or e.dims) do if vdims[i] ~= d then same = false end end
        end
        if not same then
          problems[#problems + 1] = sfmt("'%s': the file has %s %s, the variable is %s %s", w.key,
            e.dtype and e.dtype.name or e.st, dims_text(e.string_dims or e.dims), w.var.dtype.name, dims_text(vdims))
        end
      end
    end
    for _, k in ipairs(cf.keys) do
      if not used[k] then problems[#problems + 1] = sfmt("'%s' in the file matches no variable of the model", k) end
    end
    if #problems > 0 then
      tf.core.internal.ckpt_close(cf.file)
      raise("ValueError", sfmt("load_model: '%s': the weights do not fit the model rebuilt from its config " ..
        "(nothing was loaded):\n  %s", path, table.concat(problems, "\n  ")))
    end
    for _, w in ipairs(wanted) do
      local e = cf.entries[w.key]
      if e then w.var:assign(checkpoint().entry_tensor(cf, e)) end
    end
  end

  local function compile_from_config(model, cc, lookup, path)
    local function obj(x, module, what)
      if x == nil or type(x) ~= "table" then return x end
      if x.class_name == "function" then return revive(x, lookup) end
      if x.class_name ~= nil and x.config ~= nil then
        local cls = (x.registered_name and lookup[x.registered_name]) or rawget(module, x.class_name)
        if type(cls) ~= "table" or type(cls.from_config) ~= "function" then
          raise("ValueError", sfmt("load_model: '%s': unknown %s class '%s': register it with " ..
            "tf.keras.saving.register_keras_serializable{package =, name =}(Class) or pass it in custom_objects",
            path, what, tostring(x.class_name)))
        end
        return cls:from_config(revive(x.config, lookup))
      end
      local out = {}
      for k, v in pairs(x) do out[k] = obj(v, module, what) end
      return out
    end
    local args = {}
    args.optimizer = obj(cc.optimizer, keras.optimizers, "optimizer")
    args.loss = obj(cc.loss, keras.losses, "loss")
    args.metrics = obj(cc.metrics, keras.metrics, "metric")
    args.loss_weights = cc.loss_weights
    args.run_eagerly = cc.run_eagerly
    args.jit_compile = cc.jit_compile
    args.steps_per_execution = cc.steps_per_execution
    model:compile(args)
  end

  --- tf.keras.models.load_model(path [, {custom_objects =, compile = true}])
  -- (also tf.keras.saving.load_model): the model a .keras file holds, its
  -- weights, and (when it was compiled) compiled with its loss, metrics and
  -- optimizer, whose state (iterations, slots) is restored.
  function saving.load_model(path, opts)
    if type(path) ~= "string" then raise("TypeError", sfmt("load_model: the path must be a string, got %s", type(path))) end
    opts = opts or {}
    if not is_plain(opts) then raise("TypeError", "load_model: the options must be a table {custom_objects =, compile =}") end
    for k in pairs(opts) do
      if k ~= "custom_objects" and k ~= "compile" and k ~= "safe_mode" then
        raise("TypeError", sfmt("load_model: unknown option '%s' (accepted: compile, custom_objects, safe_mode)",
          tostring(k)))
      end
    end
    if has_suffix(path, ".h5") or has_suffix(path, ".hdf5") then
      raise("ValueError", sfmt("load_model: '%s': luatf has no HDF5 (the legacy .h5 format); it loads .keras files " ..
        "(model:save(\"name.keras\"))", path))
    end
    if not has_suffix(path, ".keras") then
      -- TensorFlow 2 loads a SavedModel directory here
      if package.searchpath("tf.saved_model", package.path) and tf.saved_model then
        return tf.saved_model.load(path)
      end
      raise("ValueError", sfmt("load_model: '%s' is not a .keras file: luatf loads whole models from .keras " ..
        "files (model:save(\"name.keras\")); a SavedModel directory is loaded with tf.saved_model.load(dir)", path))
    end
    local f, oerr = io.open(path, "rb")
    if not f then raise("NotFoundError", sfmt("load_model: cannot open '%s': %s", path, tostring(oerr))) end
    local bytes = f:read("a")
    f:close()
    local ok, files = pcall(zip.read, bytes)
    bytes = nil                       -- the archive's bytes: not needed past here (a large model holds copies)
    if not ok then bad(path, sfmt("not a valid .keras file (%s)", tostring(files))) end
    local mtext, ctext, wbytes = files["metadata.json"], files["config.json"], files[WEIGHTS]
    if not ctext then
      bad(path, "not a .keras file: the archive has no config.json")
    end
    if files["model.weights.h5"] and not wbytes then
      bad(path, "its weights are in HDF5 (model.weights.h5: a file written by Keras), which luatf cannot read; " ..
        "luatf's .keras files hold model.weights.safetensors")
    end
    if not mtext then bad(path, "not a .keras file: the archive has no metadata.json") end
    local okm, meta = pcall(json.decode, mtext)
    if not okm or not is_plain(meta) then bad(path, "metadata.json: " .. tostring(meta)) end
    if meta.format ~= FORMAT then
      bad(path, sfmt("written by %s (keras_version %s), not by luatf: luatf reads the .keras files it writes",
        meta.format and tostring(meta.format) or "another program", tostring(meta.keras_version)))
    end
    if math.type(meta.format_version) ~= "integer" or meta.format_version > FORMAT_VERSION or meta.format_version < 1 then
      raise("FailedPreconditionError", sfmt("load_model: '%s' has format version %s (luatf %s); this luatf (%s) " ..
        "reads format version %d: load it with a luatf that reads its version", path, tostring(meta.format_version),
        tostring(meta.luatf_version), tostring(tf.__version__), FORMAT_VERSION))
    end
    if not wbytes then bad(path, "the archive has no " .. WEIGHTS) end
    local okc, config = pcall(json.decode, ctext)
    if not okc or not is_plain(config) or type(config.class_name) ~= "string" then
      bad(path, "config.json: " .. (okc and "not a model config" or tostring(config)))
    end
    -- the weights file: checked whole (layout, checksum) before anything is built
    local cf = checkpoint().open_file(path .. "!" .. WEIGHTS, false, wbytes)
    files, wbytes = nil, nil          -- the reader holds its own copy
    collectgarbage()
    local lookup = lookup_table(opts.custom_objects)
    local okd, model = pcall(function()
      local m = deserialize(config, lookup, opts.custom_objects, path)
      if not is_layer(m) then bad(path, "config.json does not describe a model") end
      if type(config.dtype_policy) == "string" then m:_options({dtype = config.dtype_policy}, {}, 0) end
      build_model(m, config.build_config, path)
      return m
    end)
    if not okd then
      tf.core.internal.ckpt_close(cf.file)
      if not tf.errors.is_error(model) then
        -- a config no luatf code wrote: whatever it broke, a ValueError
        bad(path, "config.json does not describe a model luatf can build (" .. tostring(model) .. ")")
      end
      error(model, 0)
    end
    local wanted = model_weights(model)
    local cc = config.compile_config
    if cc and opts.compile ~= false then
      local okc2, err = pcall(compile_from_config, model, cc, lookup, path)
      if not okc2 then
        tf.core.internal.ckpt_close(cf.file)
        if not tf.errors.is_error(err) then
          bad(path, "config.json's compile_config cannot be compiled (" .. tostring(err) .. ")")
        end
        error(err, 0)
      end
      for _, e in ipairs(optimizer_weights(model.optimizer, model, true)) do wanted[#wanted + 1] = e end
    elseif cf.entries then
      -- not compiled: the file's optimizer values are not wanted
      local keep, kept = {}, {}
      for _, k in ipairs(cf.keys) do
        if k:sub(1, 10) ~= "optimizer/" then keep[#keep + 1] = k; kept[k] = cf.entries[k] end
      end
      cf.keys, cf.entries = keep, kept
    end
    assign_all(cf, wanted, path, "optimizer/")
    tf.core.internal.ckpt_close(cf.file)
    return model
  end
  keras.models.load_model = saving.load_model
  -- }====

  -- {==== serialize_keras_object / deserialize_keras_object
  --- tf.keras.saving.serialize_keras_object(obj): plain data for a layer or
  -- model ({module, class_name, config, registered_name}), an optimizer,
  -- loss, metric or schedule ({class_name, config, registered_name}), a
  -- registered function ({class_name = "function", config = name,
  -- registered_name = name}); strings, numbers, booleans and nil as is.
  function saving.serialize_keras_object(obj)
    if is_layer(obj) then
      local s = L.serialize(obj)
      local cls = getmetatable(obj)
      return {module = rawget(L, cls._class_name) == cls and BUILTIN_MODULE or nil, class_name = s.class_name,
              config = s.config, registered_name = names_of[cls] or s.class_name}
    end
    local c = convert(obj, "object")
    if c ~= nil then return c end
    if obj == nil or type(obj) ~= "table" then return obj end
    return serialize_obj(obj, "object")
  end

  --- tf.keras.saving.deserialize_keras_object(config [, custom_objects]):
  -- the object serialize_keras_object described (a new one; a registered
  -- function itself). Classes are looked up in custom_objects, the
  -- registry, then tf.keras.layers, the model classes, optimizers, losses,
  -- metrics and learning-rate schedules.
  function saving.deserialize_keras_object(config, custom_objects)
    if type(config) == "string" then
      local lookup = lookup_table(custom_objects)
      if lookup[config] ~= nil then return lookup[config] end
      for _, mod in ipairs({keras.losses, keras.metrics, keras.optimizers}) do
        local ok, o = pcall(mod.get, config)
        if ok and o ~= nil then return o end
      end
      raise("ValueError", sfmt("deserialize_keras_object: unknown identifier '%s'", config))
    end
    if not is_plain(config) or type(config.class_name) ~= "string" then return config end
    local lookup = lookup_table(custom_objects)
    if config.class_name == "function" then return revive(config, lookup) end
    local name = config.class_name
    local cls = (config.registered_name and lookup[config.registered_name]) or lookup[name]
    if cls == nil then
      for _, mod in ipairs({keras.optimizers, keras.losses, keras.metrics, keras.optimizers.schedules}) do
        local c = rawget(mod, name)
        if type(c) == "table" and type(c.from_config) == "function" then
          return c:from_config(revive(config.config or {}, lookup))
        end
      end
    end
    if (cls ~= nil and cls._class_name) or cls == nil then
      return deserialize(config, lookup, custom_objects, nil)
    end
    return cls:from_config(revive(config.config or {}, lookup))
  end
  -- }====
end
