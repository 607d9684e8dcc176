--- luatf: TensorFlow 2's programming model for Lua 5.4.
-- `local tf = require("tf")` gives what `import tensorflow as tf` gives in
-- Python. The engine is the C module `tf.core`; this file assembles the
-- namespaces and loads the pure-Lua parts, each of which extends `tf`.
local core = require("tf.core")

local tf = {}
tf.core = core
tf.__version__ = core.version   -- ltf_version(): the C library's

-- Every public C function lands at the top level; the namespaces the
-- bindings made (math, nn, bitwise, strings, random, linalg, ...) become
-- tf.<ns>. The engine's raw functions (core.internal: traces, tapes,
-- variable resources) stay in tf.core, for the Lua modules built on them.
-- The bindings also register each namespaced function at core's top level;
-- those TensorFlow has only in a namespace (tf.strings.join,
-- tf.random.set_seed, tf.bitwise.*) stay there, and core's own helpers that
-- tf.config or tf.core already offer stay off the top level.
local internal = core.internal
local NOT_TOP = {join = true, set_seed = true, bitwise_and = true, bitwise_or = true, bitwise_xor = true,
                 invert = true, left_shift = true, right_shift = true, op_names = true,
                 memory_limit = true, set_memory_limit = true}
for k, v in pairs(core) do
  if type(v) == "function" then
    if not internal[k] and not NOT_TOP[k] then tf[k] = v end
  elseif type(v) == "table" and k ~= "Tensor" and k ~= "Error" and k ~= "internal" then
    tf[k] = tf[k] or {}
    for name, f in pairs(v) do tf[k][name] = f end
  end
end

for _, ns in ipairs({"math", "nn", "bitwise", "strings", "random", "linalg", "image", "debugging",
                     "dtypes", "config", "errors", "experimental", "test"}) do
  tf[ns] = tf[ns] or {}
end

tf.None = -1

-- The memory budget of this state's context (ltf_ctx_set_memory_limit):
-- live tensor bytes; past it an allocation runs a full collection, then
-- raises ResourceExhaustedError. 0: no limit.
tf.config.set_memory_limit = core.set_memory_limit
tf.config.memory_limit = core.memory_limit

-- The parts written in Lua that every script needs (tensors, array
-- composites and indexing, constructors, devices), in dependency order. Each
-- returns a function that installs itself into `tf`.
for _, name in ipairs({
  "tf.errors",        -- error objects and tf.errors.* kinds
  "tf.dtypes",        -- tf.float32 ... and tf.dtypes
  "tf.tensor_shape",  -- TensorShape
  "tf.tensor",        -- Tensor fields/methods
  "tf.array_ops",     -- composite array ops, x[i] indexing and slicing
  "tf.random_ops",    -- constructors (zeros, ones, ...) and tf.random
  "tf.device",        -- tf.device scopes, tf.config devices (replaces tf.constant)
}) do
  require(name)(tf)
end

-- {==== Lazy loading
-- The other parts load on the first index of a name they install (as
-- TensorFlow's LazyLoader does for its submodules): a script that only
-- makes tensors never compiles tf.fn, AutoGraph, Keras, tf.data or
-- checkpoints. Each entry: the module, then the names it installs ("ns.k":
-- a key of namespace tf.ns; "Tensor:m": a tensor method). A name the engine
-- already gave (tf.where, tf.nn.conv2d) and the module replaces is taken
-- out until the module loads; the module reads the engine's from tf.core.
-- A module that needs another indexes its name, which loads it (tf.fn reads
-- tf.trace_type; tf.fn's first conversion reads tf.autograph) or calls
-- core.internal.load_part, so the result is the same whichever name comes
-- first. pairs() on tf or a namespace loads everything pending there first
-- (a __pairs). docs/internals.md "Lazy loading"; spec/init_spec.lua.
local LAZY = {
  {"tf.format", "format", "print"},  -- tostring(tensor) and tf.print (stubs below)
  {"tf.variable", "Variable", "is_variable"},
  {"tf.math_ops", "reduce_logsumexp", "math.log_sigmoid", "math.reduce_euclidean_norm", "math.reduce_logsumexp",
   "math.reduce_std", "math.reduce_variance"},
  {"tf.nn_ops", "clip_by_global_norm", "clip_by_norm", "clip_by_value", "linalg.global_norm",
   "math.l2_normalize", "math.softsign", "nn.avg_pool1d", "nn.batch_normalization", "nn.bias_add", "nn.conv1d",
   "nn.conv1d_transpose", "nn.conv2d", "nn.conv3d", "nn.depth_to_space", "nn.depthwise_conv2d", "nn.dropout",
   "nn.elu", "nn.l2_loss", "nn.l2_normalize", "nn.leaky_relu", "nn.max_pool", "nn.max_pool1d", "nn.max_pool2d",
   "nn.moments", "nn.relu", "nn.selu", "nn.separable_conv2d", "nn.sigmoid",
   "nn.sigmoid_cross_entropy_with_logits", "nn.silu", "nn.softmax_cross_entropy_with_logits_v2",
   "nn.softplus", "nn.softsign", "nn.space_to_depth", "nn.swish", "nn.tanh"},
  {"tf.indexing_ops", "boolean_mask", "gather_nd", "identity_n", "meshgrid", "repeat", "repeat_",
   "sequence_mask", "where"},
  {"tf.linalg_ops", "norm", "linalg.norm", "linalg.adjoint", "linalg.eigvalsh", "linalg.eye", "linalg.logdet",
   "linalg.lstsq", "linalg.matrix_rank", "linalg.pinv", "linalg.set_diag", "linalg.trace"},
  {"tf.sort_ops", "sort", "argsort", "bincount", "searchsorted", "math.bincount", "math.searchsorted",
   "math.segment_max", "math.segment_mean", "math.segment_sum", "math.top_k", "nn.top_k"},
  {"tf.einsum", "einsum", "tensordot", "linalg.einsum", "linalg.tensordot"},  -- lowered to batched matmul
  {"tf.string_ops", "strings.format", "strings.length", "strings.regex_full_match", "strings.regex_replace",
   "strings.split", "strings.substr", "strings.to_number", "strings.lower", "strings.upper", "strings.strip",
   "strings.reduce_join", "strings.ngrams", "strings.unicode_split", "strings.unicode_decode",
   "strings.unicode_encode", "strings.to_hash_bucket_fast", "strings.to_hash_bucket_strong"},
  {"tf.lookup_ops", "lookup"},     -- tf.lookup: KeyValueTensorInitializer, StaticHashTable, StaticVocabularyTable
  {"tf.image_ops", "image.ResizeMethod", "image.flip_left_right", "image.flip_up_down", "image.resize",
   "image.transform"},
  {"tf.gradient_tape", "GradientTape", "custom_gradient", "grad", "value_and_grad"},
  {"tf.trace_type", "TensorSpec", "trace_type", "types"},  -- trace types, tf.TensorSpec
  {"tf.fn", "fn", "function", "ConcreteFunction", "is_fn", "kwargs", "get_logger", "init_scope",  -- tf.fn
   "config.run_functions_eagerly", "config.functions_run_eagerly"},
  {"tf.tensor_array", "TensorArray"},                      -- tf.TensorArray
  {"tf.control_flow", "cond", "while_loop", "switch_case", "case"},
  {"tf.autograph", "autograph", "Tensor:iter"},   -- Lua control flow on tensors inside tf.fn; x:iter()
  {"tf.keras", "keras"},           -- layers, models, optimizers, losses, fit, datasets
  {"tf.data", "data"},             -- tf.data.Dataset (input pipelines)
  {"tf.io", "io",                  -- tf.io: files, gfile, image codecs, decode_raw, decode_compressed (docs/io.md)
   "image.decode_png", "image.decode_jpeg", "image.decode_gif", "image.decode_image", "image.encode_png",
   "image.encode_jpeg", "image.is_jpeg"},
  {"tf.train.checkpoint", "train"},  -- tf.train.Checkpoint, CheckpointManager, ...
  {"tf.summary", "summary"},       -- tf.summary: TensorBoard event files
  {"tf.distribute", "distribute"}, -- tf.distribute: strategies (MPI workers: docs/distribute.md)
  {"tf.saved_model", "saved_model"},  -- tf.saved_model.save / load (docs/saved_model.md)
  {"tf.onnx", "onnx"},             -- tf.onnx: ONNX import (load) and export (save), docs/onnx.md
}
local pending = {}    -- [namespace table] = {[key] = module}: names not installed yet
local state = {}      -- [module] = "loading" | "loaded"
local methods = core.Tensor[1]

local function load(module)
  if state[module] then return end
  state[module] = "loading"
  -- its names read as plain (absent) keys while it installs: `tf.keras =
  -- tf.keras or {}` inside keras's installer sees nil, not itself
  local taken = {}
  for _, keys in pairs(pending) do
    for k, m in pairs(keys) do
      if m == module then keys[k] = nil; taken[#taken + 1] = {keys, k} end
    end
  end
  local ok, err = pcall(function() require(module)(tf) end)
  if not ok then
    state[module] = nil
    for _, e in ipairs(taken) do e[1][e[2]] = module end
    error(err, 0)
  end
  state[module] = "loaded"
end
internal.load_part = load   -- for a module that needs another before its names are read

local lazy_mt = {
  __index = function(t, k)
    local keys = pending[t]
    local m = keys and keys[k]
    if m then
      load(m)
      return rawget(t, k)
    end
    return nil
  end,
  __pairs = function(t)
    local keys = pending[t]
    while keys and next(keys) do
      local _, m = next(keys)
      load(m)
    end
    return next, t, nil
  end,
}
for _, entry in ipairs(LAZY) do
  local module = entry[1]
  for i = 2, #entry do
    local method = entry[i]:match("^Tensor:([%w_]+)$")
    if method then
      -- a tensor method: a stub that loads the module, which replaces it
      local function stub(...)
        load(module)
        if methods[method] == stub then error("tf: " .. module .. " did not install x:" .. method .. "()", 2) end
        return methods[method](...)
      end
      methods[method] = stub
    else
      local ns, k = entry[i]:match("^(%w+)%.([%w_]+)$")
      local t = ns and tf[ns] or tf
      k = k or entry[i]
      if not pending[t] then pending[t] = {}; setmetatable(t, lazy_mt) end
      pending[t][k] = module
      t[k] = nil   -- the engine's function it replaces (still in tf.core)
    end
  end
end

-- tostring(tensor) and tf.print load tf.format on first use
core.Tensor.__tostring = function(x)
  load("tf.format")
  return core.Tensor.__tostring(x)
end
core.set_print_formatter(function(...)
  load("tf.format")
  return internal.print_formatter(...)
end)
-- }====

return tf
