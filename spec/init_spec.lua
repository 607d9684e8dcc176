-- lua/tf/init.lua: how `require("tf")` assembles the tf table. The parts
-- beyond tensors load on the first index of a name they install (lazy
-- loading, docs/internals.md), and the engine's private helpers stay out of
-- the public names. Each case runs in a fresh lua5.4 process, since the
-- point is what a new state loads.
local build = os.getenv("BUILD_DIR") or "build"

-- Runs `code` (a Lua chunk) in a fresh process; returns its stdout and
-- whether it exited with 0.
local function run(code)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(code)
  f:close()
  local p = io.popen(("LUA_PATH_5_4='lua/?.lua;lua/?/init.lua;;' LUA_CPATH_5_4='%s/?.so;;' lua5.4 %s 2>&1")
    :format(build, path))
  local out = p:read("a")
  local ok, _, rc = p:close()
  os.remove(path)
  return out, ok and rc == 0
end

local function lines(s)
  local t = {}
  for l in s:gmatch("[^\n]+") do t[#t + 1] = l end
  return t
end

-- Every key of tf and of its tables two levels down, sorted; `first` is a
-- dotted name indexed before the walk (the walk's pairs loads the rest).
local function dump_code(first)
  return ([[
local tf = require("tf")
local first = %q
if first ~= "" then
  local x = tf
  for p in first:gmatch("[^.]+") do x = x[p] end
  assert(x ~= nil, first .. " is nil")
end
local all = {}
local function walk(t, pre, d)
  for k, v in pairs(t) do
    all[#all + 1] = pre .. tostring(k) .. " " .. type(v)
    if type(v) == "table" and d < 2 and k ~= "core" then walk(v, pre .. tostring(k) .. ".", d + 1) end
  end
end
walk(tf, "", 0)
table.sort(all)
print(table.concat(all, "\n"))
]]):format(first)
end

-- The modules that load lazily (lua/tf/init.lua's LAZY table) and the
-- modules only they require.
local LAZY_MODULES = {"tf.format", "tf.variable", "tf.math_ops", "tf.nn_ops", "tf.indexing_ops", "tf.linalg_ops", "tf.fn",
  "tf.trace_type", "tf.tensor_array", "tf.control_flow", "tf.autograph", "tf.autograph.parser",
  "tf.autograph.transformer", "tf.autograph.operators", "tf.keras", "tf.keras.layer", "tf.keras.training",
  "tf.keras.optimizers", "tf.data", "tf.train.checkpoint", "tf.einsum", "tf.sort_ops", "tf.string_ops",
  "tf.image_ops", "tf.gradient_tape", "tf.onnx", "tf.onnx.import"}

local LOADED_CODE = [[
local loaded = {}
for _, m in ipairs({"%s"}) do if package.loaded[m] then loaded[#loaded + 1] = m end end
print("loaded: " .. table.concat(loaded, " "))
]]
local loaded_code = LOADED_CODE:format(table.concat(LAZY_MODULES, '", "'))

describe("require('tf')", function()
  describe("lazy loading", function()
    it("loads only what tensors need: no tf.fn, AutoGraph, Keras, tf.data or checkpoints", function()
      local out, ok = run([[
local tf = require("tf")
local x = tf.constant({{1, 2}, {3, 4}}) + 1
print(table.concat(x[2]:numpy(), " "))
print(tf.reduce_sum(tf.maximum(x - 3, 0)):item())
]] .. loaded_code .. [[
print(tostring(x[2]))
]] .. loaded_code)
      assert.is_true(ok, out)
      assert.same({"4 5", "3", "loaded: ", "tf.Tensor([4 5], shape=(2,), dtype=int32)", "loaded: tf.format"},
                  lines(out))
    end)

    it("loads a part on the first index of a name it installs, with what it needs", function()
      local out, ok = run([[
local tf = require("tf")
local _ = tf.fn
]] .. loaded_code .. [[
local _ = tf.config.run_functions_eagerly
local f = tf.fn(function(x)
  if x > 0 then return x * 2 end
  return -x
end)
print(f(tf.constant(3.0)):item())
]] .. loaded_code .. [[
local _ = tf.keras.layers.Dense
]] .. loaded_code)
      assert.is_true(ok, out)
      assert.same({
        "loaded: tf.variable tf.fn tf.trace_type",
        "6.0",
        -- the first trace converts f: AutoGraph now, and what its operators use
        "loaded: tf.variable tf.fn tf.trace_type tf.tensor_array tf.control_flow tf.autograph tf.autograph.parser tf.autograph.transformer " ..
          "tf.autograph.operators",
        "loaded: tf.variable tf.fn tf.trace_type tf.tensor_array tf.control_flow tf.autograph tf.autograph.parser tf.autograph.transformer " ..
          "tf.autograph.operators tf.keras tf.keras.layer tf.keras.training tf.keras.optimizers",
      }, lines(out))
    end)

    it("gives the same tf whichever name is touched first, and pairs(tf) sees every name", function()
      local ref, ok = run(dump_code(""))
      assert.is_true(ok, ref)
      assert.truthy(ref:find("\nkeras.Sequential table\n", 1, true))
      assert.truthy(ref:find("\nconfig.run_functions_eagerly function\n", 1, true))
      assert.truthy(ref:find("\nnn.top_k function\n", 1, true))
      for _, first in ipairs({"keras.Model", "data.Dataset", "train.Checkpoint", "fn", "autograph.to_code",
                              "TensorArray", "cond", "TensorSpec", "GradientTape", "strings.split", "sort",
                              "image.resize", "einsum", "config.functions_run_eagerly", "math.top_k"}) do
        local out = run(dump_code(first))
        assert.equal(ref, out, "touching tf." .. first .. " first")
      end
    end)

    it("declares every name the lazy parts install (each one, indexed first, loads its part)", function()
      -- the names present only after pairs(tf) loaded everything
      local out, ok = run([[
local tf = require("tf")
local NS = {"config", "math", "nn", "linalg", "strings", "image"}
local before = {}
for k in next, tf do before[k] = true end
for _, ns in ipairs(NS) do for k in next, tf[ns] do before[ns .. "." .. k] = true end end
for _ in pairs(tf) do end
for _, ns in ipairs(NS) do for _ in pairs(tf[ns]) do end end
local new = {}
for k in next, tf do if not before[k] then new[#new + 1] = k end end
for _, ns in ipairs(NS) do for k in next, tf[ns] do
  if not before[ns .. "." .. k] then new[#new + 1] = ns .. "." .. k end
end end
table.sort(new)
print(table.concat(new, "\n"))
]])
      assert.is_true(ok, out)
      local names = lines(out)
      assert.is_true(#names >= 40, out)
      -- each in a fresh state: indexed first, it is there
      local checks = {}
      for _, n in ipairs(names) do
        checks[#checks + 1] = ([[
local x = %s
for p in (%q):gmatch("[^.]+") do x = x[p] end
if x == nil then print("missing: " .. %q) end]]):format('require("tf")', n, n)
      end
      -- one process per name: run them from a shell loop
      local dir = os.tmpname()
      os.remove(dir)
      assert(os.execute("mkdir -p " .. dir))
      for i, c in ipairs(checks) do
        local f = assert(io.open(("%s/%03d.lua"):format(dir, i), "w"))
        f:write(c)
        f:close()
      end
      local p = io.popen(("for f in %s/*.lua; do LUA_PATH_5_4='lua/?.lua;lua/?/init.lua;;' " ..
        "LUA_CPATH_5_4='%s/?.so;;' lua5.4 $f 2>&1; done; rm -rf %s"):format(dir, build, dir))
      local res = p:read("a")
      p:close()
      assert.equal("", res)
    end)

    it("lets no lazy part replace a name already there at start-up (it must be declared)", function()
      -- a module that replaces an engine function (indexing_ops's tf.where)
      -- declares it, so the engine's is taken out until the module loads;
      -- an undeclared replacement would depend on what was touched first
      local out, ok = run([[
local tf = require("tf")
local NS = {"config", "math", "nn", "linalg", "strings", "image", "random", "bitwise", "dtypes", "errors",
            "debugging", "test", "experimental"}
local before = {}
for k, v in next, tf do before[#before + 1] = {tf, k, v, k} end
for _, ns in ipairs(NS) do for k, v in next, tf[ns] do before[#before + 1] = {tf[ns], k, v, ns .. "." .. k} end end
local methods = tf.core.Tensor[1]
for k, v in next, methods do before[#before + 1] = {methods, k, v, "Tensor:" .. k} end
for _ in pairs(tf) do end
for _, ns in ipairs(NS) do for _ in pairs(tf[ns]) do end end
local changed = {}
for _, b in ipairs(before) do
  if rawget(b[1], b[2]) ~= b[3] then changed[#changed + 1] = b[4] end
end
table.sort(changed)
print("replaced: " .. table.concat(changed, " "))
]])
      assert.is_true(ok, out)
      assert.equal("replaced: Tensor:iter\n", out)   -- the stub AutoGraph replaces
    end)
  end)

  describe("public names", function()
    local INTERNAL = {"TensorArray_new", "__index_tensor", "__place", "set_seed", "join", "bitwise_and",
      "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift", "op_names", "memory_limit",
      "set_memory_limit"}
    local NS_INTERNAL = {"dtypes._by_enum", "keras._raise", "keras._is_layer", "keras._snake_case",
      "keras._layer_props", "keras._shape_text", "train._save_weights", "train._load_weights", "train._walk",
      "train._install_keras", "autograph._stats"}

    it("has no internal names at the top level or in the namespaces", function()
      local out, ok = run([[
local tf = require("tf")
local bad = {}
for k, v in pairs(tf) do
  if type(k) == "string" and ((k:match("^_") and k ~= "__version__") or k:match("_new$")) then
    bad[#bad + 1] = k
  end
  -- namespaces (not classes, whose metatables hold __index etc.)
  if type(v) == "table" and k:match("^%l") and k ~= "core" and getmetatable(v) == nil or
     k == "config" or k == "math" then
    for k2 in pairs(v) do
      if type(k2) == "string" and (k2:match("^__") or k2:match("_new$")) then bad[#bad + 1] = k .. "." .. k2 end
    end
  end
end
for _, n in ipairs({"]] .. table.concat(INTERNAL, '", "') .. [["}) do
  if rawget(tf, n) ~= nil then bad[#bad + 1] = n end
end
for _, n in ipairs({"]] .. table.concat(NS_INTERNAL, '", "') .. [["}) do
  local ns, k = n:match("^(%w+)%.(.*)$")
  if rawget(tf[ns], k) ~= nil then bad[#bad + 1] = n end
end
table.sort(bad)
print("internal: " .. table.concat(bad, " "))
]])
      assert.is_true(ok, out)
      assert.equal("internal: \n", out)
    end)

    it("keeps TensorFlow's spellings of the functions moved off the top level", function()
      local tf = require("tf")
      tf.random.set_seed(7)
      local a = tf.random.uniform({3}):numpy()
      tf.random.set_seed(7)
      assert.same(a, tf.random.uniform({3}):numpy())
      assert.same({"a-c", "b-d"}, tf.strings.join({tf.constant({"a", "b"}), tf.constant({"c", "d"})}, "-"):numpy())
      assert.equal(8, tf.bitwise.bitwise_and(tf.constant(12), tf.constant(10)):item())      -- 1100 & 1010
      assert.equal(14, tf.bitwise.bitwise_or(tf.constant(12), tf.constant(10)):item())
      assert.equal(6, tf.bitwise.bitwise_xor(tf.constant(12), tf.constant(10)):item())
      assert.equal(-13, tf.bitwise.invert(tf.constant(12)):item())
      assert.equal(48, tf.bitwise.left_shift(tf.constant(12), tf.constant(2)):item())
      assert.equal(3, tf.bitwise.right_shift(tf.constant(12), tf.constant(2)):item())
      assert.equal(0, tf.config.memory_limit())
      local ops = tf.core.op_names()
      assert.is_true(#ops > 100)
      -- x[i] and TensorArray go through the private helpers
      assert.same({3, 4}, tf.constant({{1, 2}, {3, 4}})[2]:numpy())
      assert.same({0, 5}, tf.TensorArray{tf.int32, size = 2}:write(2, tf.constant(5)):stack():numpy())
    end)
  end)
end)
