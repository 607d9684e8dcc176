--- tf.keras: layers, models, activations and initializers (this module),
-- and, when present, the modules of optimizers, losses, metrics, callbacks,
-- training (compile/fit/evaluate/predict) and datasets, each loaded here.
return function(tf)
  tf.keras = tf.keras or {}
  local raise = tf.errors.raise
  -- Keras's own helpers, shared by its files and out of the public
  -- namespace: tf.core.internal.keras (raise, is_layer, snake_case,
  -- layer_props, shape_text)
  tf.core.internal.keras = tf.core.internal.keras or {}

  --- Raise an error object blamed on the user's line: the first caller
  -- outside tf/keras/ (layer and model code calls itself several frames
  -- deep: constructors, build, call, Sequential). The level argument the
  -- other raise helpers take is accepted and ignored.
  function tf.core.internal.keras.raise(kind, message)
    local d = 2
    while true do
      local info = debug.getinfo(d, "S")
      if info == nil then d = 2; break end
      if info.what ~= "C" and not info.source:find("tf/keras/", 1, true) then break end
      d = d + 1
    end
    raise(kind, message, d)
  end

  --- Check a constructor's one keyword table (regularizers, constraints):
  -- nil gives {}; only `keys` and, when npos >= 1, entry [1] are accepted.
  function tf.core.internal.keras.check_keys(cname, opts, keys, npos)
    local kraise, sfmt = tf.core.internal.keras.raise, string.format
    if opts == nil then return {} end
    if type(opts) ~= "table" then
      kraise("TypeError", sfmt("%s: expected one keyword table, e.g. %s{...}, got %s", cname, cname, type(opts)))
    end
    local acc = {}
    for _, k in ipairs(keys) do acc[k] = true end
    for k in pairs(opts) do
      if type(k) == "number" then
        if k ~= 1 or npos < 1 then
          kraise("TypeError", sfmt("%s: takes %d positional argument(s), got an entry at [%s]", cname, npos,
            tostring(k)))
        end
      elseif not acc[k] then
        kraise("TypeError", sfmt("%s: unknown keyword argument '%s' (accepted: %s)", cname, tostring(k),
          table.concat(keys, ", ")))
      end
    end
    return opts
  end

  --- serialize(obj) and get(id) for a module of callable objects
  -- (regularizers, constraints): `module` its name ("regularizers"), `noun`
  -- one of them ("regularizer"), is_obj the test for one, deserialize the
  -- module's. serialize: nil, a plain function as is, an object as
  -- {class_name =, config =}. get: nil, a function or an object as is, a
  -- name or a plain table through deserialize.
  function tf.core.internal.keras.serialize_and_get(module, noun, is_obj, deserialize)
    local kraise, sfmt = tf.core.internal.keras.raise, string.format
    local function serialize(o)
      if o == nil then return nil end
      if type(o) == "function" then return o end
      if is_obj(o) then return {class_name = o._class_name, config = o:get_config()} end
      kraise("TypeError", sfmt("%s.serialize: expected a %s, got %s", module, noun, type(o)))
    end
    local function get(id)
      if id == nil then return nil end
      if type(id) == "function" or is_obj(id) then return id end
      if type(id) == "string" or (type(id) == "table" and getmetatable(id) == nil) then return deserialize(id) end
      kraise("TypeError", sfmt("Could not interpret %s identifier: %s", noun, tostring(id)))
    end
    return serialize, get
  end

  --- A variable's value, a tensor as is, anything else converted.
  function tf.core.internal.keras.tensor_value(x)
    if tf.is_variable(x) then return x:value() end
    if tf.is_tensor(x) then return x end
    return tf.convert_to_tensor(x)
  end
  for _, name in ipairs({
    "tf.keras.activations",
    "tf.keras.initializers",
    "tf.keras.regularizers",
    "tf.keras.constraints",
    "tf.keras.layer",
    "tf.keras.layers.dense",
    "tf.keras.layers.activation",
    "tf.keras.layers.reshaping",
    "tf.keras.layers.dropout",
    "tf.keras.layers.embedding",
    "tf.keras.layers.lambda",
    "tf.keras.layers.conv",
    "tf.keras.layers.pooling",
    "tf.keras.layers.spatial",
    "tf.keras.layers.batch_normalization",
    "tf.keras.layers.layer_normalization",
    "tf.keras.layers.rnn",
    "tf.keras.layers.lstm",
    "tf.keras.layers.gru",
    "tf.keras.layers.wrappers",
    "tf.keras.layers.sequence",
    "tf.keras.layers.noise",
    "tf.keras.layers.activity_regularization",
    "tf.keras.layers.preprocessing",
    "tf.keras.layers.text",
    "tf.keras.layers.einsum_dense",
    "tf.keras.layers.attention",
    "tf.keras.model",
    "tf.keras.input_layer",
    "tf.keras.functional",
    "tf.keras.layers.merging",
  }) do
    require(name)(tf)
  end
  -- The other Keras modules, if this build has them (written separately):
  -- a module found on the path is loaded (and its errors shown); a missing
  -- one is skipped. A module returning a function is called with tf; one
  -- returning a table becomes tf.keras.<name> (unless it set that itself).
  for _, name in ipairs({
    "tf.keras.optimizers", "tf.keras.schedules", "tf.keras.losses", "tf.keras.metrics",
    "tf.keras.callbacks", "tf.keras.datasets", "tf.keras.mixed_precision", "tf.keras.training", "tf.keras.utils",
    "tf.keras.dataset_utils",
    "tf.keras.callbacks_tensorboard",
    "tf.keras.saving",
  }) do
    if package.searchpath(name, package.path) then
      local m = require(name)
      if type(m) == "function" then
        m(tf)                                -- installs itself, as tf's modules do
      elseif type(m) == "table" then
        local short = name:match("([^.]+)$")
        if tf.keras[short] == nil then tf.keras[short] = m end
      end
    end
  end
end
