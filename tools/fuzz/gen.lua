--- tools/fuzz/gen.lua: the random call generator.
-- Each call is produced as Lua source (one statement, see prelude.lua), so
-- the log of a batch is the batch. The generator looks at the pool `P` (what
-- earlier calls returned) only through type() and getmetatable(), never
-- through the engine, so generating a call never runs engine code.
local Gen = {}
Gen.__index = Gen

local fmt, concat = string.format, table.concat

-- {==== Random numbers: splitmix64 over Lua integers (wrapping arithmetic)
function Gen:u64()
  self.s = self.s + 0x9E3779B97F4A7C15
  local z = self.s
  z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
  z = (z ~ (z >> 27)) * 0x94D049BB133111EB
  return z ~ (z >> 31)
end
function Gen:int(n) return ((self:u64() >> 1) % n) + 1 end          -- 1..n
function Gen:range(a, b) return a + self:int(b - a + 1) - 1 end      -- a..b
function Gen:chance(p) return (self:u64() >> 11) / 9007199254740992.0 < p end
function Gen:pick(list)
  if #list == 0 then return nil end
  return list[self:int(#list)]
end
-- {weight, value, weight, value, ...}
function Gen:wpick(wl)
  local total = 0
  for i = 1, #wl, 2 do total = total + wl[i] end
  local r = self:int(total)
  for i = 1, #wl, 2 do
    r = r - wl[i]
    if r <= 0 then return wl[i + 1] end
  end
  return wl[#wl]
end
-- }====

-- {==== API enumeration: every function reachable from `tf`, with a path
local KEYWORDS = {}
for w in ([[and break do else elseif end false for function goto if in local nil not or
  repeat return then true until while]]):gmatch("%a+") do KEYWORDS[w] = true end

local function is_ident(k) return type(k) == "string" and k:match("^[%a_][%w_]*$") and not KEYWORDS[k] end

local function key_src(base, k)
  if is_ident(k) then return base .. "." .. k end
  if type(k) == "string" then return fmt("%s[%q]", base, k) end
  return fmt("%s[%s]", base, tostring(k))
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do   -- pairs: tf's __pairs loads its lazy parts (lua/tf/init.lua)
    if type(k) == "string" or math.type(k) == "integer" then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b)
    if type(a) ~= type(b) then return type(a) == "number" end
    return a < b
  end)
  return keys
end
Gen.sorted_keys = sorted_keys

-- internal-looking paths get a lower weight (they are reachable, so fuzzed)
local function weight_of(path, name)
  if path:find("^tf%.core%.") then return 1 end
  if name:sub(1, 1) == "_" or path:find("getmetatable") or path:find("^tf%.trace_type")
     or path:find("^tf%.format") then return 1 end
  if path:find("^tf%.graph_") or path:find("^tf%.tape_") or path:find("^tf%.variable_") then return 2 end
  return 4
end

-- Loops whose termination is the caller's by design, as Lua's own `while
-- true do end`: AutoGraph's statement hooks run `while test() do` / `repeat
-- until c()` for converted code, so a generated test that never turns false
-- loops forever in Lua (a timeout, not an engine finding: seed 288 of CI's
-- run found `repeat_stmt(function() end)`). Converted loops still reach them
-- through tf.fn/tf.autograph.
local UNBOUNDED = {["tf.autograph.operators.while_stmt"] = true, ["tf.autograph.operators.repeat_stmt"] = true}

--- List every function reachable from `tf` (tables, their metatables), one
-- entry per function value: {path = "tf.math.add", name = "add", w = weight}
-- (UNBOUNDED ones left out).
function Gen.enumerate(tf)
  local best, seen = {}, {}
  local function better(a, b)  -- is path a preferable to path b?
    local ac, bc = a:find("^tf%.core") ~= nil, b:find("^tf%.core") ~= nil
    if ac ~= bc then return bc end
    if #a ~= #b then return #a < #b end
    return a < b
  end
  local function walk(t, path, depth)
    if seen[t] or depth > 5 then return end
    seen[t] = true
    for _, k in ipairs(sorted_keys(t)) do
      local v = rawget(t, k)
      local p = key_src(path, k)
      if type(v) == "function" then
        if not best[v] or better(p, best[v].path) then best[v] = {path = p, name = tostring(k)} end
      elseif type(v) == "table" then
        walk(v, p, depth + 1)
      end
    end
    local mt = getmetatable(t)
    if type(mt) == "table" then walk(mt, "getmetatable(" .. path .. ")", depth + 1) end
  end
  walk(tf, "tf", 0)
  local list = {}
  for _, e in pairs(best) do
    if not UNBOUNDED[e.path] then list[#list + 1] = e end
  end
  table.sort(list, function(a, b) return a.path < b.path end)
  for _, e in ipairs(list) do e.w = weight_of(e.path, e.name) end
  return list
end
-- }====

-- {==== Value vocabulary
local SCALARS = {"0", "1", "-1", "2", "3", "4", "7", "-2", "0.5", "-0.0", "2.5", "-3.75", "1e10",
  "math.mininteger", "math.maxinteger", "2^31", "2^32", "2^53", "(1 << 31)", "(1 << 32)", "(1 << 53)",
  "(1 << 62)", "(0/0)", "(1/0)", "(-1/0)", "1e308", "1e-320", "-2^63", "255", "256", "-129", "(1 << 32) + 1",
  "(1 << 32) + 2", "-(1 << 32) + 1"}
local STRINGS = {'""', '"float32"', '"float64"', '"int32"', '"int64"', '"uint8"', '"bool"',
  '"string"', '"resource"', '"float16"', '"VALID"', '"SAME"', '"none"', '"zero"', '"/cpu:0"',
  '"/gpu:0"', '"/gpu:7"', '"..."', '":"', '"x"', '"a b"', '"\\0"', '"%s%d%n"', '("x"):rep(5000)',
  '"\\xff\\xfe"', '"axis"', '"relu"', '"NHWC"', '"error"', '"warn"', '"1"', '"-1"', '"nan"'}
local DTYPES = {"tf.float32", "tf.float64", "tf.int32", "tf.int64", "tf.uint8", "tf.bool", "tf.string",
  "tf.float16", "tf.bfloat16"}
local ODD_DTYPES = {"tf.core.internal.dtype_by_enum[5]", "tf.core.internal.dtype_by_enum[1]", "tf.core.internal.dtype_by_enum[7]",
  '"resource"', '"float16"', '"int8"', "tf.DType", "3", '"Float32"'}
local SPECIALS = {"tf.all", "tf.newaxis", "tf.ellipsis", "tf.None", "H.ud()", "H.sentinel()",
  "H.cyclic()", "H.deep()", "H.bomb()", "H.tt_junk()", "H.tt_err()", "H.dead_co()", "H.open_trace()",
  "coroutine.create(function() end)", "print", "tf", "tf.math", "tf.core.Error", "tf.Tensor",
  "setmetatable({}, tf.Tensor)", "tf.GradientTape", "tf.kwargs({})", "{n = 3}", "{[0] = 1}",
  "{1, nil, 3}", "{[1.5] = 2}", "{{}}", "{[-1] = 1}"}
local KW_NAMES = {"axis", "keepdims", "seed", "dtype", "shape", "batch_dims", "output_gradients",
  "persistent", "input_signature", "reduce_retracing", "name", "unconnected_gradients",
  "watch_accessed_variables", "mean", "stddev", "minval", "maxval", "transpose_a", "transpose_b",
  "strides", "padding", "data_format", "dilations", "begin_mask", "end_mask", "ellipsis_mask",
  "new_axis_mask", "shrink_axis_mask", "exclusive", "reverse", "on_value", "off_value", "depth",
  "trainable", "max_traces", "on_retrace", "autograph", "argnums", "separator", "ksize", "labels",
  "logits", "perm", "multiples", "num", "num_or_size_splits", "message", "clip_norm", "ord",
  "variables", "experimental_relax_shapes", "jit_compile", "value", "size", "dynamic_size", "mode",
  "constant_values", "output_type", "axes", "adjoint_a", "adjoint_b", "batch_shape"}
local JUNK_KEYS = {"axiz", "foo", "_tape", "__index", "1", "keep_dims", "dtype ", "Shape", "__gc"}
-- }====

-- {==== Signature hints (by function or method name): letters are argument
-- kinds, see Gen:arg. Calls follow a hint most of the time, with noise.
local HINTS = {}
local function hint(names, h) for n in names:gmatch("%S+") do HINTS[n] = h end end
hint([[abs negative sign exp log log1p expm1 sqrt rsqrt square reciprocal tanh sigmoid relu
  softplus sin cos floor ceil round identity stop_gradient is_nan is_finite logical_not invert
  l2_loss numpy totable item numel size rank shape free cpu gpu is_symbolic _dims _dtype_id
  zeros_like ones_like get_shape value read_value]], "T")
hint([[add subtract multiply divide floordiv floormod mod pow maximum minimum squared_difference
  equal not_equal less less_equal greater greater_equal logical_and logical_or logical_xor
  bitwise_and bitwise_or bitwise_xor left_shift right_shift realdiv truediv eq ne lt le gt ge
  assign assign_add assign_sub same_data __add __sub __mul __div __mod __pow __idiv __band __bor
  __bxor __shl __shr __concat __eq __lt __le]], "T T")
hint("matmul", "T T O")
hint("join", "L O")
hint([[reduce_sum reduce_mean reduce_max reduce_min reduce_prod reduce_all reduce_any argmax
  argmin cumsum softmax log_softmax norm]], "T A O")
hint("check_numerics", "T X")
hint("cast", "T D")
hint("where", "T T T")
hint("clip_by_value", "T N N")
hint("clip_by_norm", "T N O")
hint("unsorted_segment_sum", "T T N")
hint("zeros ones", "S D")
hint("fill", "S N")
hint("constant convert_to_tensor", "V D S")
hint("range", "N N N O")
hint("linspace", "N N N")
hint("eye", "N N O")
hint("normal uniform", "S O")
hint("set_seed", "N")
hint("reshape broadcast_to", "T S")
hint("transpose", "T S")
hint("expand_dims", "T A")
hint("squeeze", "T A")
hint("concat stack", "L A")
hint("unstack", "T O")
hint("split", "T X A")
hint("slice", "T S S")
hint("strided_slice", "T S S S O")
hint("gather", "T T A O")
hint("one_hot", "T N O")
hint("tile", "T S")
hint("pad", "T X O")
hint("reverse", "T S")
hint("conv2d conv2d_transpose conv2d_backprop_input conv2d_backprop_filter depthwise_conv2d "
  .. "depthwise_conv2d_backprop_input depthwise_conv2d_backprop_filter", "T T S P O")
hint("max_pool max_pool2d avg_pool avg_pool2d", "T S S P O")
hint("bias_add", "T T")
hint("softmax_cross_entropy_with_logits sparse_softmax_cross_entropy_with_logits", "T T O")
hint("Variable", "V O")
hint("GradientTape", "O")
hint("watch", "T")
hint("record", "F T T")
hint("gradient jacobian", "T T O")
hint("batch_jacobian", "T T O")
hint("stop_recording", "F")
hint("fn function", "F O")
hint("custom_gradient", "C")
hint("grad value_and_grad", "F O")
hint("get_concrete_function", "Z Z")
hint("TensorSpec", "S D X")
hint("TensorShape", "S")
hint("as_dtype", "D")
hint("print", "T X")
hint("device", "X F")
hint("graph_begin", "X")
hint("graph_placeholder", "X D S")
hint("graph_end graph_abort graph_run graph_nodes graph_signature graph_captures graph_lift", "Y X X")
hint("tape_gradient", "Y L L L N")
hint("variable_new", "T X B S")
hint("record_custom", "F L L")
hint("_flat", "T N N")
hint("_index", "T X")
hint("kwargs", "O")
hint("run_functions_eagerly", "B")
hint("from_tensor", "T")
hint("is_subtype_of most_specific_common_supertype is_compatible_with", "Z")
Gen.HINTS = HINTS
-- }====

--- A new generator over pool `P` with the enumerated `api`.
function Gen.new(seed, tf, P, api)
  local self = setmetatable({s = seed * 0x2545F4914F6CDD1D + 1, tf = tf, P = P, api = api,
    slots = {}, next_slot = 1, mcache = {}, fnmeta = {}, chains = 0.3}, Gen)
  local total = 0
  for _, e in ipairs(api) do total = total + e.w end
  self.api_total = total
  -- kinds of pool values, by metatable (never by calling into the engine)
  self.kinds = {}
  self.kinds[tf.Tensor] = "tensor"
  self.kinds[tf.Variable.mt] = "variable"
  return self
end

--- Reserve a new pool slot (call results, values leaked from bodies).
function Gen:new_slot()
  local s = self.next_slot
  self.next_slot = s + 1
  self.slots[#self.slots + 1] = s
  return s
end

function Gen:kind(v)
  local t = type(v)
  if t ~= "table" and t ~= "userdata" then return t end
  local mt = getmetatable(v)
  if mt == nil then return t == "table" and "table" or "userdata" end
  local k = self.kinds[mt]
  if k then return k end
  if type(mt) == "table" then
    local name = rawget(mt, "__name")
    if name == "tf.fn" then return "fn" end
    if name == "tf.ConcreteFunction" then return "cf" end
    if name == "tf.GradientTape" then return "tape" end
    if name == "tf.Graph" then return "graph" end
  end
  return "object"
end

-- kinds that act like tensors in ops
local TENSORISH = {tensor = true, variable = true}
local CALLABLE = {fn = true, cf = true, ["function"] = true}

--- A reference to a live pool value whose kind passes `want` (a set or nil
-- for any); nil when none. Looks at the 48 most recent slots.
function Gen:pool(want)
  local P, cand = self.P, {}
  local slots = self.slots
  for i = #slots, math.max(1, #slots - 47), -1 do
    local s = slots[i]
    local v = P[s]
    if v ~= nil and (want == nil or want[self:kind(v)]) then cand[#cand + 1] = s end
  end
  if #cand == 0 then return nil end
  local s = self:pick(cand)
  local v = P[s]
  -- an element of an array returned by a call (split, unstack, gradients...)
  if type(v) == "table" and getmetatable(v) == nil and rawlen(v) > 0 and self:chance(0.5) then
    return fmt("P[%d][%d]", s, self:int(rawlen(v)))
  end
  return fmt("P[%d]", s)
end

-- {==== Argument generators (each returns Lua source)
function Gen:scalar()
  if self:chance(0.6) then return tostring(self:range(-3, 8)) end
  return self:pick(SCALARS)
end

function Gen:string() return self:pick(STRINGS) end

function Gen:dtype()
  if self:chance(0.85) then
    local d = self:pick(DTYPES)
    if self:chance(0.3) then return fmt("%q", d:sub(4)) end
    return d
  end
  return self:pick(ODD_DTYPES)
end

-- dims of a small shape: product <= 64 (rank up to 9)
function Gen:small_dims(maxrank)
  maxrank = maxrank or 9
  local rank = self:wpick({3, 0, 5, 1, 5, 2, 2, 3, 1, 4, 1, -1})
  if rank < 0 or rank > maxrank then rank = self:range(math.min(5, maxrank), maxrank) end
  local dims, n = {}, 1
  for i = 1, rank do
    local d
    if self:chance(0.05) then d = 0
    elseif rank > 4 then d = self:range(1, 2)
    else d = self:range(1, 4) end
    if n * math.max(d, 1) > 64 then d = 1 end
    dims[i] = d
    n = n * math.max(d, 1)
  end
  return dims
end

local function dims_src(dims)
  local t = {}
  for i, d in ipairs(dims) do t[i] = tostring(d) end
  return "{" .. concat(t, ", ") .. "}"
end

local function copy(t) local o = {} for i, v in ipairs(t) do o[i] = v end return o end
local function numel(shape) local n = 1 for _, d in ipairs(shape) do n = n * d end return n end

-- a shape argument: mostly small, sometimes odd or huge
function Gen:shape()
  local r = self:int(100)
  if r <= 70 then return dims_src(self:small_dims()) end
  if r <= 80 then  -- one odd entry in a small shape
    local dims = self:small_dims(4)
    local t = {}
    for i, d in ipairs(dims) do t[i] = tostring(d) end
    local odd = self:pick({"-1", "-2", "0", "2^31", "2^32", "(1 << 40)", "math.maxinteger",
      "math.mininteger", "1.5", '"2"', "nil", "(0/0)", "tf.None", "{}", "true", "1e300"})
    t[self:int(#t + 1)] = odd
    return "{" .. concat(t, ", ") .. "}"
  end
  if r <= 86 then return self:pick({"{2^31, 2^31}", "{(1 << 32), (1 << 32)}", "{math.maxinteger}",
    "{65536, 65536}", "{0, math.maxinteger}", "{3, -1, -1}", "{-1}", "{2^62, 4}", "{1e9}"}) end
  if r <= 92 then return self:pick({"{}", "nil", "tf.constant({2, 3})", "tf.constant({2, 3}, tf.int64)",
    "tf.TensorShape({2, 3})", "tf.TensorShape(nil)", "tf.constant({{2}})", "tf.constant({2.0, 3.0})"}) end
  return self:any(2)
end

function Gen:axis()
  local r = self:int(100)
  if r <= 70 then return self:pick({"1", "-1", "2", "-2", "3", "1", "-1"}) end
  if r <= 85 then return self:pick({"0", "4", "9", "-9", "math.maxinteger", "math.mininteger", "2^31",
    "1.5", '"1"', "nil", "(0/0)", "-2^63"}) end
  if r <= 93 then return self:pick({"{1, 2}", "{1, 1}", "{-1, 1}", "{}", "{0}", "{1, 9}"}) end
  return self:pick({"tf.constant(1)", "tf.constant({1, 2})", "tf.constant(1, tf.int64)",
    "tf.constant(1.0)", self:pool(TENSORISH) or "tf.constant(2)"})
end

-- a nested literal of `dims` with elements of `kind` ("tame": no finite
-- values near float32's overflow, which make equivalent graphs differ)
function Gen:literal(dims, kind, ragged, tame)
  local function elem()
    if kind == "int" then
      if self:chance(0.9) then return tostring(self:range(-5, 9)) end
      return self:pick({"math.maxinteger", "math.mininteger", "(1 << 31)", "2147483647", "-2147483648", "255", "256"})
    elseif kind == "float" then
      if self:chance(0.85) then return fmt("%.2f", self:range(-400, 400) / 100) end
      if tame then return self:pick({"(0/0)", "(1/0)", "(-1/0)", "-0.0", "1e-45", "1e-30", "65504.0"}) end
      return self:pick({"(0/0)", "(1/0)", "(-1/0)", "-0.0", "1e38", "1e-45", "3.5e38", "1e308"})
    elseif kind == "bool" then return self:chance(0.5) and "true" or "false"
    elseif kind == "string" then return self:pick({'"a"', '""', '"bc"', '"\\0x"', '"longer string"', '"\\xff"'})
    else return self:pick({"1", "1.5", "true", '"a"', "{}", "nil"}) end
  end
  local function build(level)
    if level > #dims then return elem() end
    local n = dims[level]
    if ragged and level < #dims and n > 1 and self:chance(0.3) then n = n - 1 end
    local parts = {}
    for i = 1, n do
      if ragged and level == #dims and i == n and self:chance(0.3) then
        parts[i] = build(level + 1) .. ", " .. elem()
      else
        parts[i] = build(level + 1)
      end
    end
    return "{" .. concat(parts, ", ") .. "}"
  end
  return build(1)
end

-- a freshly made tensor
function Gen:fresh_tensor()
  local r = self:int(100)
  if r <= 35 then
    local kind = self:wpick({4, "float", 3, "int", 1, "bool", 1, "string", 1, "mixed"})
    local dims = self:small_dims(4)
    local lit = self:literal(dims, kind, self:chance(0.05) or kind == "mixed")
    if self:chance(0.3) then return fmt("tf.constant(%s, %s)", lit, self:dtype()) end
    return fmt("tf.constant(%s)", lit)
  elseif r <= 50 then
    if self:chance(0.1) then   -- empty, with huge dimensions: cheap to make, costly to walk
      return fmt("tf.%s(%s, %s)", self:pick({"zeros", "ones"}), self:pick({"{(1 << 40), 0}", "{0, (1 << 40)}",
        "{2, 0, (1 << 31)}", "{(1 << 20), (1 << 20), 0}", "{0, math.maxinteger}", "{3000000000, 0}"}), self:pick(DTYPES))
    end
    return fmt("tf.%s(%s, %s)", self:pick({"zeros", "ones"}), dims_src(self:small_dims()), self:pick(DTYPES))
  elseif r <= 60 then
    return fmt("tf.fill(%s, %s)", dims_src(self:small_dims()), self:chance(0.7) and self:scalar() or self:string())
  elseif r <= 75 then
    local dims = self:small_dims()
    local n = 1
    for _, d in ipairs(dims) do n = n * d end
    local base = fmt("tf.reshape(tf.range(%d), %s)", n, dims_src(dims))
    if self:chance(0.5) then return fmt("tf.cast(%s, %s)", base, self:pick(DTYPES)) end
    return base
  elseif r <= 85 then
    return fmt("tf.random.%s(%s, {seed = %d})", self:pick({"uniform", "normal"}),
      dims_src(self:small_dims()), self:range(0, 9))
  elseif r <= 92 then
    return fmt("tf.constant(%s)", self:scalar())
  else
    return self:pick({"H.freed()", "H.leaked()", "H.dead_handle()", "H.dead_var()", "tf.constant({})",
      "tf.zeros({0, 3})", "tf.constant(\"\")", "tf.ones({1, 1, 1, 1, 1, 1, 1, 1, 1, 1})",
      "tf.zeros({2, 0, 2})", "tf.constant({{}})", "tf.cast(tf.range(6), tf.uint8)"})
  end
end

-- a tensor argument: the pool (often) or a fresh tensor
function Gen:tensor(locals)
  if locals and #locals > 0 and self:chance(0.6) then return self:pick(locals) end
  if self:chance(0.45) then
    local ref = self:pool(TENSORISH)
    if ref then return ref end
  end
  return self:fresh_tensor()
end

function Gen:tensor_list(locals)
  local n = self:wpick({1, 0, 3, 1, 5, 2, 2, 3, 1, 5})
  local t = {}
  for i = 1, n do t[i] = self:tensor(locals) end
  if self:chance(0.1) then t[#t + 1] = self:any(2, locals) end
  return "{" .. concat(t, ", ") .. "}"
end

function Gen:spec()
  local shape = self:wpick({5, "small", 2, "none", 3, "huge", 1, "unknown"})
  local s
  if shape == "small" then s = dims_src(self:small_dims(4))
  elseif shape == "none" then s = self:pick({"{tf.None}", "{-1, 3}", "{tf.None, tf.None}", "{2, -1}", "{-1, -1, -1}"})
  elseif shape == "huge" then s = self:pick({"{2^31, 2^31}", "{(1 << 40), 3}", "{math.maxinteger}",
    "{(1 << 32), (1 << 32)}", "{-1, 2^40}", "{0, 2^62}", "{65536, 65536, 65536}"})
  else s = "nil" end
  if self:chance(0.2) then return fmt("tf.TensorSpec({shape = %s, dtype = %s})", s, self:dtype()) end
  return fmt("tf.TensorSpec(%s, %s)", s, self:dtype())
end

-- the value of an option key
function Gen:kwvalue(k, locals)
  if k == "axis" or k == "batch_dims" or k == "num" then return self:axis()
  elseif k == "keepdims" or k == "persistent" or k == "reduce_retracing" or k == "exclusive"
      or k == "reverse" or k == "trainable" or k == "autograph" or k == "transpose_a"
      or k == "transpose_b" or k == "watch_accessed_variables" or k == "jit_compile"
      or k == "experimental_relax_shapes" or k == "dynamic_size" then
    return self:chance(0.85) and (self:chance(0.5) and "true" or "false") or self:any(1, locals)
  elseif k == "seed" or k == "max_traces" or k == "depth" or k == "size" then
    return self:chance(0.8) and tostring(self:range(0, 5)) or self:scalar()
  elseif k == "dtype" then return self:dtype()
  elseif k == "shape" or k == "perm" or k == "multiples" or k == "strides" or k == "ksize"
      or k == "dilations" then return self:shape()
  elseif k == "output_gradients" or k == "labels" or k == "logits" or k == "on_value"
      or k == "off_value" or k == "value" then return self:tensor(locals)
  elseif k == "input_signature" then
    local n = self:range(0, 3)
    local t = {}
    for i = 1, n do t[i] = self:spec() end
    if self:chance(0.1) then t[#t + 1] = self:any(1) end
    return "{" .. concat(t, ", ") .. "}"
  elseif k == "name" or k == "separator" or k == "message" or k == "data_format" then
    return self:chance(0.7) and self:pick({'"f"', '"x"', '"w"', '""', '"a:b"', '"NHWC"'}) or self:any(1)
  elseif k == "unconnected_gradients" then return self:pick({'"none"', '"zero"', '"zeros"', "1"})
  elseif k == "padding" then return self:pick({'"VALID"', '"SAME"', '"valid"', '"FULL"', "{1, 1}", "1"})
  elseif k == "on_retrace" then return self:pick({'"error"', '"warn"', '"ignore"', self:func(2, locals)})
  elseif k == "argnums" then return self:pick({"1", "2", "{1, 2}", "0", "{}", "-1"})
  elseif k:find("_mask$") then return self:pick({"0", "1", "2", "3", "-1", "255", "math.maxinteger"})
  elseif k == "mean" or k == "stddev" or k == "minval" or k == "maxval" or k == "clip_norm" or k == "ord" then
    return self:chance(0.8) and self:scalar() or self:tensor(locals)
  elseif k == "variables" then return "{" .. (self:pool({variable = true}) or "") .. "}"
  end
  return self:any(1, locals)
end

function Gen:opts(locals)
  local n = self:wpick({2, 0, 5, 1, 3, 2, 1, 3})
  local parts, used = {}, {}
  for _ = 1, n do
    local k = self:chance(0.9) and self:pick(KW_NAMES) or self:pick(JUNK_KEYS)
    if not used[k] then
      used[k] = true
      local ks = is_ident(k) and k or fmt("[%q]", k)
      parts[#parts + 1] = ks .. " = " .. self:kwvalue(k, locals)
    end
  end
  if self:chance(0.05) then parts[#parts + 1] = "[1] = " .. self:any(1, locals) end
  return "{" .. concat(parts, ", ") .. "}"
end

--- Any value at all; `depth` bounds nesting.
function Gen:any(depth, locals)
  depth = depth or 2
  local r = self:int(100)
  if locals and #locals > 0 and r <= 15 then return self:pick(locals) end
  if r <= 40 then
    local ref = self:pool()
    if ref then return ref end
  end
  if r <= 52 then return self:scalar() end
  if r <= 60 then return self:string() end
  if r <= 62 then return self:chance(0.5) and "nil" or self:pick({"true", "false"}) end
  if r <= 75 then return self:fresh_tensor() end
  if r <= 80 then return self:shape() end
  if r <= 84 and depth > 0 then return self:opts(locals) end
  if r <= 87 then return self:dtype() end
  if r <= 90 and depth > 0 then return self:func(depth - 1, locals) end
  if r <= 92 then return self:spec() end
  if r <= 94 and depth > 0 then return self:tensor_list(locals) end
  return self:pick(SPECIALS)
end

-- an argument for hint letter `c`
function Gen:arg(c, depth, locals)
  if self:chance(0.06) then return self:any(depth, locals) end
  if c == "T" then return self:tensor(locals)
  elseif c == "N" then
    if self:chance(0.2) then return self:tensor(locals) end
    return self:scalar()
  elseif c == "S" then return self:shape()
  elseif c == "A" then return self:axis()
  elseif c == "D" then return self:dtype()
  elseif c == "O" then return self:opts(locals)
  elseif c == "L" then return self:tensor_list(locals)
  elseif c == "F" then return self:func(math.max(depth - 1, 0), locals)
  elseif c == "C" then return self:cg_func(math.max(depth - 1, 0), locals)
  elseif c == "B" then return self:pick({"true", "false", "nil", "1"})
  elseif c == "P" then return self:pick({'"VALID"', '"SAME"', '"VALID"', '"SAME"', '"same"', '""', "1"})
  elseif c == "V" then  -- a value a constructor takes
    local r = self:int(10)
    if r <= 4 then return self:literal(self:small_dims(4), self:pick({"int", "float", "bool", "string"}),
      self:chance(0.1)) end
    if r <= 6 then return self:scalar() end
    if r <= 8 then return self:tensor(locals) end
    return self:any(depth, locals)
  elseif c == "Y" then  -- an object of the raw graph API
    return self:pool({userdata = true, object = true}) or self:any(depth, locals)
  elseif c == "Z" then  -- tensors, specs or literals
    local r = self:int(10)
    if r <= 4 then return self:spec() end
    if r <= 8 then return self:tensor(locals) end
    return self:scalar()
  end
  return self:any(depth, locals)
end

-- {==== Typed arguments: tensors of one dtype and related shapes, so that ops
-- reach their kernels instead of their argument checks
local INT_OPS = {bitwise_and = 1, bitwise_or = 1, bitwise_xor = 1, invert = 1, left_shift = 1, right_shift = 1,
  __band = 1, __bor = 1, __bxor = 1, __shl = 1, __shr = 1, __idiv = 1, floordiv = 1, floormod = 1, mod = 1,
  __mod = 1, one_hot = 1, unsorted_segment_sum = 1}
local BOOL_OPS = {logical_and = 1, logical_or = 1, logical_xor = 1, logical_not = 1, reduce_all = 1, reduce_any = 1}
local STRING_OPS = {join = 1, __concat = 1}

function Gen:typed_dtype(name)
  if INT_OPS[name] then return self:pick({"int32", "int64", "uint8"}) end
  if BOOL_OPS[name] then return "bool" end
  if STRING_OPS[name] then return "string" end
  return self:wpick({6, "float32", 2, "float64", 2, "int32", 1, "int64", 1, "uint8", 1, "bool", 1, "float16",
    1, "bfloat16"})
end

function Gen:typed_tensor(dtype, shape)
  local n = numel(shape)
  if dtype == "bool" then
    if n == 0 then return fmt("tf.zeros(%s, tf.bool)", dims_src(shape)) end
    return fmt("tf.constant(%s)", self:literal(shape, "bool"))
  elseif dtype == "string" then
    if n == 0 then return fmt("tf.fill(%s, \"\")", dims_src(shape)) end
    return fmt("tf.constant(%s)", self:literal(shape, "string"))
  elseif dtype == "float32" or dtype == "float64" or dtype == "float16" or dtype == "bfloat16" then
    local v = self:value_src(shape)
    if dtype ~= "float32" then return fmt("tf.cast(%s, tf.%s)", v, dtype) end
    return v
  end
  return self:value_src(shape, dtype)
end

local OPT_KEYS = {
  reduce_sum = "axis keepdims", reduce_mean = "axis keepdims", reduce_max = "axis keepdims",
  reduce_min = "axis keepdims", reduce_prod = "axis keepdims", reduce_all = "axis keepdims",
  reduce_any = "axis keepdims", argmax = "axis output_type", argmin = "axis output_type",
  cumsum = "axis exclusive reverse", matmul = "transpose_a transpose_b adjoint_a adjoint_b",
  pad = "mode constant_values", range = "dtype", one_hot = "on_value off_value dtype axis",
  gather = "batch_dims axis", normal = "seed dtype mean stddev", uniform = "seed dtype minval maxval",
  softmax = "axis", log_softmax = "axis", unstack = "axis num", eye = "dtype batch_shape",
  sparse_softmax_cross_entropy_with_logits = "labels logits",
  softmax_cross_entropy_with_logits = "labels logits axis", clip_by_norm = "axes",
  norm = "ord axis keepdims", join = "separator", Variable = "name trainable dtype shape",
  GradientTape = "persistent watch_accessed_variables", fn = "input_signature reduce_retracing name",
  strided_slice = "begin_mask end_mask ellipsis_mask new_axis_mask shrink_axis_mask",
}

function Gen:typed_opts(name)
  local keys = OPT_KEYS[name]
  if not keys or self:chance(0.2) then return "{}" end
  local parts = {}
  for k in keys:gmatch("%S+") do
    if self:chance(0.5) then
      local v
      if k == "mode" then v = self:pick({'"CONSTANT"', '"REFLECT"', '"SYMMETRIC"', '"constant"', '"edge"'})
      elseif k == "constant_values" then v = self:pick({"0", "1", "-1", "2.5"})
      elseif k == "output_type" then v = self:pick({"tf.int32", "tf.int64"})
      elseif k == "axes" then v = self:pick({"{1}", "{1, 2}", "{-1}"})
      elseif k == "batch_shape" then v = self:pick({"{2}", "{}", "{1, 2}"})
      else v = self:kwvalue(k) end
      parts[#parts + 1] = k .. " = " .. v
    end
  end
  return "{" .. concat(parts, ", ") .. "}"
end

function Gen:typed_args(name, h, depth)
  local dtype = self:typed_dtype(name)
  local base = self:small_dims(4)
  local out = {}
  for c in h:gmatch("%S") do
    local a
    if c == "T" then
      local shape = base
      if #out > 0 then
        local r = self:int(10)
        if r <= 2 then shape = self:bshape(base) elseif r == 3 then shape = self:small_dims(4) end
      end
      a = self:typed_tensor(dtype, shape)
    elseif c == "L" then
      local t = {}
      for i = 1, self:range(1, 3) do t[i] = self:typed_tensor(dtype, self:chance(0.8) and base or self:small_dims(4)) end
      a = "{" .. concat(t, ", ") .. "}"
    elseif c == "A" then
      a = tostring(#base == 0 and self:pick({1, -1}) or (self:chance(0.7) and self:range(1, #base) or -self:range(1, #base)))
    elseif c == "S" then
      if self:chance(0.5) then
        local r = {}
        for i = 1, #base do r[i] = base[#base - i + 1] end
        a = dims_src(r)   -- reshape/transpose/tile/reverse all take one entry per dimension
      else
        a = dims_src(self:chance(0.5) and base or {numel(base)})
      end
    elseif c == "N" then
      a = tostring(self:range(1, 4))
    elseif c == "D" then
      a = "tf." .. self:pick({"float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16"})
    elseif c == "O" then
      a = self:typed_opts(name)
    else
      a = self:arg(c, depth)
    end
    out[#out + 1] = a
  end
  return out
end
-- }====

-- an argument list for `name` (hinted most of the time)
function Gen:args(name, depth, locals)
  local h = HINTS[name]
  local out = {}
  if h and not locals and self:chance(0.4) then
    out = self:typed_args(name, h, depth)
    if #out > 1 and self:chance(0.3) then out[#out] = nil end
  elseif h and self:chance(0.8) then
    for c in h:gmatch("%S") do out[#out + 1] = self:arg(c, depth, locals) end
    if #out > 0 and self:chance(0.25) then   -- optional trailing arguments left out
      for _ = 1, self:int(#out) do out[#out] = nil end
    end
    if self:chance(0.05) then out[#out + 1] = self:any(depth, locals) end
  else
    local n = self:wpick({1, 0, 4, 1, 4, 2, 2, 3, 1, 4})
    for i = 1, n do
      if i == 1 and self:chance(0.6) then out[i] = self:tensor(locals)
      else out[i] = self:any(depth, locals) end
    end
  end
  return concat(out, ", ")
end
-- }====

-- {==== Functions with random bodies (traced, recorded, custom gradients)
local PARAMS = {"", "a", "a, b", "...", "a, ..."}

-- statements a body may run, each source using `a`, `b`
function Gen:stmt(depth, locals)
  local r = self:int(100)
  if r <= 12 then return fmt("coroutine.yield(%s)", self:pick(locals) or "") end
  if r <= 30 then return fmt("P[%d] = %s", self:new_slot(), self:pick(locals) or self:tensor()) end
  if r <= 55 then return "local _ = " .. self:call_expr(depth, locals) end
  if r <= 60 then return self:pick({'error("boom")', "error(H.sentinel())", "error(tf.constant(1))"}) end
  if r <= 72 then
    local tape = self:pool({tape = true})
    if tape then
      return fmt("%s:%s", tape, self:pick({"reset()", "watch(" .. self:tensor(locals) .. ")",
        "gradient(" .. self:tensor(locals) .. ", " .. self:tensor(locals) .. ")", "stop()",
        "start()", "record(function(...) return " .. self:tensor(locals) .. " * 2 end)"}))
    end
  end
  if r <= 80 then
    local f = self:pool(CALLABLE)
    if f then return fmt("local _ = %s(%s)", f, self:args("", depth, locals)) end
  end
  if r <= 85 then return "collectgarbage()" end
  if r <= 90 then return fmt("tf.print(%s)", self:tensor(locals)) end
  return "local _ = " .. self:op_expr(depth, locals)
end

function Gen:ret(depth, locals)
  local r = self:int(100)
  local a = self:pick(locals) or self:tensor()
  if r <= 25 then return a end
  if r <= 40 then return fmt("%s %s %s", a, self:pick({"*", "+", "-", "/", "^"}), self:tensor(locals)) end
  if r <= 55 then return self:call_expr(depth, locals) end
  if r <= 62 then return fmt("%s, %s", a, self:tensor(locals)) end
  if r <= 68 then return fmt("{%s, %s}", a, self:tensor(locals)) end
  if r <= 72 then return fmt("{x = %s, y = {%s}}", a, self:tensor(locals)) end
  if r <= 76 then return "nil" end
  if r <= 80 then return self:any(1, locals) end
  if r <= 85 then return fmt("tf.reduce_sum(%s)", a) end
  if r <= 90 then return fmt("tf.Variable(%s)", a) end
  return self:op_expr(depth, locals)
end

function Gen:func(depth, locals)
  local params = self:pick(PARAMS)
  local inner = {}
  for name in params:gmatch("[%a_]+") do inner[#inner + 1] = name end
  if params:find("%.%.%.") then inner[#inner + 1] = "(...)" end
  for _, l in ipairs(locals or {}) do
    if l ~= "(...)" then inner[#inner + 1] = l end  -- '...' is not visible in a nested function
  end
  local body = {}
  if depth > 0 then
    for _ = 1, self:wpick({3, 0, 4, 1, 2, 2}) do body[#body + 1] = self:stmt(depth - 1, inner) end
  end
  body[#body + 1] = "return " .. self:ret(math.max(depth - 1, 0), inner)
  return fmt("function(%s) %s end", params, concat(body, "; "))
end

-- a function for tf.custom_gradient: returns y and a gradient function
function Gen:cg_func(depth, locals)
  local inner = {"x"}
  local gbody = {}
  if self:chance(0.5) then gbody[#gbody + 1] = self:stmt(math.max(depth, 1), {"dy", "x"}) end
  local gret = self:pick({"dy", "dy * 2", "dy, dy", "{dy}", "nil", "tf.constant(1.0)", "dy * x",
    "tf.zeros_like(x)", "\"str\"", "dy, {dy}", self:tensor({"dy", "x"})})
  gbody[#gbody + 1] = "return " .. gret
  local y = self:pick({"x * 2", "tf.exp(x)", "tf.identity(x)", "x * x", "tf.reduce_sum(x)", "x",
    self:call_expr(0, inner), "tf.constant(1.0)"})
  local pre = ""
  if self:chance(0.3) then pre = self:stmt(math.max(depth, 1), inner) .. "; " end
  return fmt("function(x, ...) %sreturn %s, function(dy, ...) %s end end", pre, y, concat(gbody, "; "))
end
-- }====

-- {==== Expressions
function Gen:api_entry()
  local r = self:int(self.api_total)
  for _, e in ipairs(self.api) do
    r = r - e.w
    if r <= 0 then return e end
  end
  return self.api[#self.api]
end

function Gen:call_expr(depth, locals)
  local e = self:api_entry()
  return fmt("%s(%s)", e.path, self:args(e.name, depth, locals))
end

local BINOPS = {"+", "-", "*", "/", "//", "%", "^", "&", "|", "~", "<<", ">>", "..", "==", "<", "<=",
  ">", ">=", "~="}

function Gen:index_key(locals)
  local r = self:int(100)
  if r <= 40 then return self:pick({"1", "-1", "2", "0", "3", "-3", "5", "math.maxinteger",
    "math.mininteger", "1.5", "(0/0)", "2^31"}) end
  if r <= 80 then
    local n = self:range(0, 4)
    local t = {}
    for i = 1, n do
      t[i] = self:wpick({4, tostring(self:range(-3, 3)), 3, fmt("{%s, %s%s}",
        self:pick({"1", "2", "-1", "nil", "0", "-5", "math.mininteger"}),
        self:pick({"2", "-1", "nil", "3", "100", "math.maxinteger"}),
        self:chance(0.4) and (", " .. self:pick({"1", "-1", "2", "0", "-2", "math.mininteger"})) or ""),
        1, "tf.all", 1, "tf.newaxis", 1, "tf.ellipsis", 1, '":"', 1, '"..."', 1, self:any(0, locals)})
    end
    return "{" .. concat(t, ", ") .. "}"
  end
  if r <= 90 then return self:pick({"tf.constant({1, 2})", "tf.constant(1)", "tf.constant({0})",
    "tf.constant({true})", "tf.constant({{1}, {2}})", "tf.constant(1, tf.int64)", "tf.constant({-1, 9})"}) end
  return self:pick({'"shape"', '"dtype"', '"rank"', '"name"', '"device"', '"ndim"', '"graph"',
    '"handle"', '"foo"', "true", "nil", "tf.all"})
end

-- an operator or metamethod applied to a pool value
function Gen:op_expr(depth, locals)
  local x = self:tensor(locals)
  local r = self:int(100)
  if r <= 45 then
    local op = self:pick(BINOPS)
    local y = self:chance(0.6) and self:tensor(locals) or self:any(0, locals)
    if self:chance(0.3) then x, y = y, x end
    return fmt("(%s %s %s)", x, op, y)
  end
  if r <= 55 then return fmt("(%s%s)", self:pick({"-", "~", "#", "not "}), x) end
  if r <= 80 then return fmt("%s[%s]", x, self:index_key(locals)) end
  if r <= 88 then return fmt("tostring(%s)", x) end
  return fmt("%s.%s", x, self:pick({"shape", "dtype", "rank", "name", "device", "ndim", "handle",
    "graph", "trainable", "persistent", "shape[1]", "shape.rank", "dtype.name"}))
end

-- the names of the methods and fields an object offers, through its metatable
function Gen:methods_of(v)
  local mt = getmetatable(v)
  local key = mt
  if type(mt) ~= "table" then
    if type(v) ~= "table" then return nil end
    key = v
  end
  local cached = self.mcache[key]
  if cached then return cached end
  local set = {}
  local function add(t)
    if type(t) ~= "table" then return end
    for k, f in next, t do
      if type(k) == "string" and is_ident(k) and not k:find("^__") and type(f) == "function" then set[k] = true end
    end
  end
  if type(mt) == "table" then
    add(mt)
    add(rawget(mt, "__index"))
    for _, t in next, mt do if type(t) == "table" then add(t) end end
    if mt == self.tf.Variable.mt then add(self.tf.Variable.methods) end
  end
  if type(v) == "table" and getmetatable(v) == nil then add(v) end
  local list = sorted_keys(set)
  self.mcache[key] = list
  return list
end

function Gen:method_expr(depth)
  local ref = self:pool({tensor = true, variable = true, tape = true, fn = true, cf = true,
    graph = true, object = true, table = true})
  if not ref then return self:call_expr(depth) end
  local v = load("return " .. ref, "=ref", "t", {P = self.P})()
  local names = self:methods_of(v)
  if not names or #names == 0 then return self:op_expr(depth) end
  local name = self:pick(names)
  if self:chance(0.1) then return fmt("%s.%s", ref, name) end
  return fmt("%s:%s(%s)", ref, name, self:args(name, depth))
end
-- }====


-- {==== Op chains: float expressions whose shapes are tracked, so that most
-- calls are valid and reach kernels, tracing, fusion and gradients. The
-- oracle compares eager results with traced ones (H.check_same).
local UNARY = {"tf.exp(%s)", "tf.tanh(%s)", "tf.sigmoid(%s)", "tf.nn.relu(%s)", "tf.abs(%s)",
  "tf.square(%s)", "tf.negative(%s)", "tf.sin(%s)", "tf.cos(%s)", "tf.nn.softplus(%s)",
  "tf.sqrt(tf.abs(%s))", "tf.math.log1p(tf.abs(%s))", "(%s * 2.5)", "(%s + 1)", "(1 - %s)",
  "tf.floor(%s)", "tf.round(%s)", "tf.sign(%s)", "tf.clip_by_value(%s, -1, 1)", "(-%s)",
  "tf.cast(tf.cast(%s, tf.int32), tf.float32)", "tf.cast(tf.cast(%s, tf.float64), tf.float32)",
  "tf.identity(%s)", "tf.stop_gradient(%s)", "tf.math.reciprocal(%s + 3)", "tf.math.rsqrt(tf.abs(%s) + 1)",
  "tf.math.expm1(%s)", "(%s ^ 2)", "tf.where(tf.greater(%s, 0), %s, 0.5)"}
local BINARY = {"(%s + %s)", "(%s - %s)", "(%s * %s)", "(%s / (tf.abs(%s) + 1))", "tf.maximum(%s, %s)",
  "tf.minimum(%s, %s)", "tf.math.squared_difference(%s, %s)", "tf.where(tf.less(%s, %s), 1.5, -1.5)",
  "tf.cast(tf.equal(%s, %s), tf.float32)", "tf.where(tf.greater(%s, 0), %s, 0)"}


local LARGE = {{70000}, {300, 257}, {2, 40000}, {33000, 1}, {129, 3, 97}, {1, 65537}, {4099, 9}}

function Gen:chain_shape(maxrank)
  if self:chance(0.06) then
    local l = self:pick(LARGE)
    if not maxrank or #l <= maxrank then return copy(l) end
  end
  local rank = self:wpick({1, 0, 3, 1, 4, 2, 2, 3, 1, 4})
  if maxrank and rank > maxrank then rank = maxrank end
  local dims = {}
  for i = 1, rank do dims[i] = self:chance(0.04) and 0 or self:wpick({2, 1, 3, 2, 3, 3, 2, 4, 1, 5}) end
  return dims
end

-- a shape that broadcasts against `shape`
function Gen:bshape(shape)
  local out = {}
  local drop = self:chance(0.3) and self:range(0, #shape) or 0
  for i = drop + 1, #shape do out[#out + 1] = self:chance(0.3) and 1 or shape[i] end
  return out
end

-- a constant of `shape` (the same values at each evaluation): a literal when
-- small, else a function of the position; float32 unless `dtype` says
function Gen:value_src(shape, dtype)
  dtype = dtype or "float32"
  if numel(shape) == 0 then return fmt("tf.zeros(%s, tf.%s)", dims_src(shape), dtype) end
  if numel(shape) > 64 then
    if dtype == "float32" then
      return fmt("(tf.sin(tf.cast(tf.reshape(tf.range(%d), %s), tf.float32) * %.2f) * 3)", numel(shape),
        dims_src(shape), self:range(1, 300) / 100)
    end
    return fmt("tf.cast(tf.reshape(tf.range(%d), %s) %% %d - %d, tf.%s)", numel(shape), dims_src(shape),
      self:range(2, 300), dtype == "uint8" and 0 or self:range(0, 100), dtype)
  end
  if dtype == "float32" then return fmt("tf.constant(%s, tf.float32)", self:literal(shape, "float", false, true)) end
  local lit = self:literal(shape, "int")
  if dtype == "uint8" then lit = lit:gsub("%-", ""):gsub("math%.mininteger", "0"):gsub("math%.maxinteger", "255") end
  return fmt("tf.cast(tf.constant(%s, tf.int64), tf.%s)", lit, dtype)
end

--- A chain over `vars` ({src=, shape=} each); returns {src=, shape=}.
function Gen:chain(vars, depth)
  if depth <= 0 or self:chance(0.15) then
    local v = self:pick(vars)
    return {src = v.src, shape = copy(v.shape)}
  end
  local x = self:chain(vars, depth - 1)
  local sh, r = x.shape, self:int(100)
  local rank = #sh
  if r <= 30 then
    local u = self:pick(UNARY)
    return {src = u:format(x.src, x.src), shape = sh}
  elseif r <= 55 then
    -- a second operand that broadcasts: another chain of a compatible shape, or a constant
    local y
    local cands = {}
    for _, v in ipairs(vars) do
      local ok = #v.shape <= #sh or true
      if ok then cands[#cands + 1] = v end
    end
    local yshape = self:bshape(sh)
    if self:chance(0.5) then
      y = {src = self:value_src(yshape), shape = yshape}
    else
      local other = self:chain(vars, depth - 1)
      -- make it compatible by reducing to a scalar when it is not
      local ok = #other.shape <= #sh
      if ok then
        for i = 1, #other.shape do
          local a, b = other.shape[#other.shape - i + 1], sh[#sh - i + 1]
          if a ~= b and a ~= 1 then ok = false end
        end
      end
      if ok then y = other else y = {src = fmt("tf.reduce_mean(%s)", other.src), shape = {}} end
    end
    local b = self:pick(BINARY)
    if self:chance(0.3) then x, y = y, x end
    local out = {}
    local n = math.max(#x.shape, #y.shape)
    for i = 1, n do
      local a = x.shape[#x.shape - n + i] or 1
      local c = y.shape[#y.shape - n + i] or 1
      out[i] = (a == 1) and c or a
    end
    return {src = b:format(x.src, y.src, y.src), shape = out}
  elseif r <= 65 and rank >= 1 then
    local axis = self:range(1, rank)
    local keep = self:chance(0.3)
    local op = self:pick({"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod"})
    if rank > 0 and sh[axis] == 0 and (op == "reduce_max" or op == "reduce_min") then op = "reduce_sum" end
    local out = copy(sh)
    if keep then out[axis] = 1 else table.remove(out, axis) end
    local ax = self:chance(0.3) and tostring(axis - rank - 1) or tostring(axis)
    return {src = fmt("tf.%s(%s, {axis = %s, keepdims = %s})", op, x.src, ax, tostring(keep)), shape = out}
  elseif r <= 68 then
    return {src = fmt("tf.reduce_sum(%s)", x.src), shape = {}}
  elseif r <= 72 and rank >= 2 then
    local out = {}
    for i = 1, rank do out[i] = sh[rank - i + 1] end
    return {src = fmt("tf.transpose(%s)", x.src), shape = out}
  elseif r <= 75 then
    return {src = fmt("tf.reshape(%s, {-1})", x.src), shape = {numel(sh)}}
  elseif r <= 78 and rank < 6 then
    local k = self:range(1, rank + 1)
    local out = copy(sh)
    table.insert(out, k, 1)
    return {src = fmt("tf.expand_dims(%s, %d)", x.src, k), shape = out}
  elseif r <= 81 and rank >= 1 then
    local k = self:range(1, rank)
    local out = copy(sh)
    out[k] = out[k] * 2
    return {src = fmt("tf.concat({%s, %s}, %d)", x.src, x.src, k), shape = out}
  elseif r <= 83 and rank < 6 then
    local out = copy(sh)
    table.insert(out, 1, 2)
    return {src = fmt("tf.stack({%s, %s})", x.src, x.src), shape = out}
  elseif r <= 86 and rank >= 1 and sh[1] >= 1 then
    local a = self:range(1, sh[1])
    local b = self:range(a, sh[1])
    local out = copy(sh)
    out[1] = b - a + 1
    if self:chance(0.3) then
      out[1] = math.floor((b - a) / 2) + 1
      return {src = fmt("%s[{{%d, %d, 2}}]", x.src, a, b), shape = out}
    end
    return {src = fmt("%s[{{%d, %d}}]", x.src, a, b), shape = out}
  elseif r <= 88 and rank == 2 and sh[1] <= 512 then
    return {src = fmt("tf.matmul(%s, %s, {transpose_b = true})", x.src, x.src), shape = {sh[1], sh[1]}}
  elseif r <= 90 and rank >= 1 then
    local k = self:range(1, rank)
    return {src = fmt("tf.reverse(%s, {%d})", x.src, k), shape = sh}
  elseif r <= 92 and rank >= 1 then
    local m, out = {}, {}
    for i = 1, rank do m[i] = self:range(1, 2); out[i] = sh[i] * m[i] end
    return {src = fmt("tf.tile(%s, %s)", x.src, dims_src(m)), shape = out}
  elseif r <= 94 and rank >= 1 then
    local k = self:range(1, rank)
    return {src = fmt("tf.%s(%s, %d)", self:pick({"nn.softmax", "nn.log_softmax", "cumsum"}), x.src,
      k), shape = sh}
  elseif r <= 96 then
    local out = copy(sh)
    table.insert(out, 1, self:range(1, 2))
    return {src = fmt("tf.broadcast_to(%s, %s)", x.src, dims_src(out)), shape = out}
  elseif r <= 98 and rank >= 1 then
    local pads, out = {}, {}
    for i = 1, rank do
      local a, b = self:range(0, 1), self:range(0, 1)
      pads[i] = fmt("{%d, %d}", a, b)
      out[i] = sh[i] + a + b
    end
    return {src = fmt("tf.pad(%s, {%s})", x.src, concat(pads, ", ")), shape = out}
  end
  if rank >= 2 and self:chance(0.5) then
    -- a permutation, an inner-axis slice, or a squeeze of size-1 axes
    local w = self:int(3)
    if w == 1 then
      local perm, out = {}, {}
      for i = 1, rank do perm[i] = i end
      for i = rank, 2, -1 do local j = self:int(i); perm[i], perm[j] = perm[j], perm[i] end
      for i = 1, rank do out[i] = sh[perm[i]] end
      return {src = fmt("tf.transpose(%s, %s)", x.src, dims_src(perm)), shape = out}
    elseif w == 2 and sh[rank] >= 1 then
      local a = self:range(1, sh[rank])
      local out = copy(sh)
      out[rank] = sh[rank] - a + 1
      return {src = fmt("%s[{tf.ellipsis, {%d, -1}}]", x.src, a), shape = out}
    else
      local out = {}
      for _, d in ipairs(sh) do if d ~= 1 then out[#out + 1] = d end end
      if #out < rank then return {src = fmt("tf.squeeze(%s)", x.src), shape = out} end
      local r2 = copy(sh)
      local prod = sh[1] * sh[2]
      table.remove(r2, 1); r2[1] = prod
      return {src = fmt("tf.reshape(%s, %s)", x.src, dims_src(r2)), shape = r2}
    end
  end
  local u = self:pick(UNARY)
  return {src = u:format(x.src, x.src), shape = sh}
end

-- {==== Integer chains (fusion across integer dtypes, bitwise ops, casts)
local IUNARY = {"tf.abs(%s)", "(%s * 3)", "(%s + 7)", "(%s - 1)", "(~%s)", "(%s // 3)", "(%s %% 5)",
  "(%s >> 1)", "(%s << 2)", "tf.maximum(%s, 2)", "tf.minimum(%s, 9)", "tf.identity(%s)", "tf.square(%s)"}
local IBINARY = {"(%s + %s)", "(%s - %s)", "(%s * %s)", "(%s & %s)", "(%s | %s)", "(%s ~ %s)",
  "tf.maximum(%s, %s)", "tf.minimum(%s, %s)", "(%s // (tf.abs(%s) + 1))", "(%s %% (tf.abs(%s) + 1))",
  "tf.where(tf.greater(%s, %s), 1, 0)"}
local ICAST = {"int32", "int64", "uint8"}

function Gen:ichain(vars, depth)
  if depth <= 0 or self:chance(0.15) then
    local v = self:pick(vars)
    return {src = v.src, shape = copy(v.shape)}
  end
  local x = self:ichain(vars, depth - 1)
  local r = self:int(100)
  if r <= 40 then
    return {src = self:pick(IUNARY):format(x.src), shape = x.shape}
  elseif r <= 75 then
    local y = self:ichain(vars, depth - 1)
    local sx, sy = x.shape, y.shape
    if #sx ~= #sy then return {src = self:pick(IUNARY):format(x.src), shape = sx} end
    local out = {}
    for i = 1, #sx do
      if sx[i] ~= sy[i] and sx[i] ~= 1 and sy[i] ~= 1 then return {src = self:pick(IUNARY):format(x.src), shape = sx} end
      out[i] = sx[i] == 1 and sy[i] or sx[i]
    end
    local b = self:pick(IBINARY)
    return {src = b:format(x.src, y.src), shape = out}
  elseif r <= 85 then
    -- through another integer dtype and back
    local via, back = self:pick(ICAST), self.idtype
    return {src = fmt("tf.cast(tf.cast(%s, tf.%s), tf.%s)", x.src, via, back), shape = x.shape}
  elseif r <= 90 then
    return {src = fmt("tf.cast(tf.cast(%s, tf.float32) * 0.5, tf.%s)", x.src, self.idtype), shape = x.shape}
  elseif r <= 95 and #x.shape >= 1 then
    local k = self:range(1, #x.shape)
    local out = copy(x.shape)
    table.remove(out, k)
    return {src = fmt("tf.reduce_%s(%s, %d)", self:pick({"sum", "max", "min"}), x.src, k), shape = out}
  end
  return {src = fmt("tf.reshape(%s, {-1})", x.src), shape = {numel(x.shape)}}
end
-- }====

-- the TensorSpec of a shape, with dims (or the rank) relaxed at random
function Gen:relaxed_spec(shape)
  if self:chance(0.1) then return "tf.TensorSpec(nil, tf.float32)", nil end
  local t, relaxed = {}, {}
  for i, d in ipairs(shape) do
    if self:chance(0.5) then t[i] = "-1"; relaxed[i] = true else t[i] = tostring(d) end
  end
  return fmt("tf.TensorSpec({%s}, tf.float32)", concat(t, ", ")), relaxed
end

-- a shape that fits a relaxed spec (and sometimes does not)
function Gen:perturb(shape, relaxed)
  local out = {}
  if relaxed == nil then   -- unknown rank
    return self:chain_shape()
  end
  for i, d in ipairs(shape) do
    out[i] = relaxed[i] and self:pick({1, 2, 3, 5, 0, d}) or d
  end
  if self:chance(0.1) then out[#out + 1] = 2 end
  return out
end

--- A line that builds a chain over two inputs and runs it several ways.
function Gen:chain_line(n)
  local s1 = self:chain_shape()
  local s2 = self:chance(0.5) and self:bshape(s1) or self:chain_shape()
  local vars = {{src = "a", shape = s1}, {src = "b", shape = s2}}
  if self:chance(0.25) then
    -- integer chain: eager vs traced, inputs unchanged, called twice
    self.idtype = self:pick(ICAST)
    local s2i = self:chance(0.7) and copy(s1) or self:bshape(s1)
    while #s2i < #s1 do table.insert(s2i, 1, 1) end
    vars[2].shape = s2i
    local c = self:ichain(vars, self:range(1, 6))
    local A, B = self:value_src(s1, self.idtype), self:value_src(s2i, self.idtype)
    return fmt("R(%d, function() local f = function(a, b) return %s end; local a, b = %s, %s; local a0, b0 = a + 0, b + 0; local e = f(a, b); local g = tf.fn(f); H.check_same(e, g(a, b)); H.check_same(e, g(a, b)); return H.check_same({a0, b0}, {a, b}) end)",
      n, c.src, A, B)
  end
  local c = self:chain(vars, self:range(1, 7))
  local body = fmt("function(a, b) return %s end", c.src)
  local A, B = self:value_src(s1), self:value_src(s2)
  if self:chance(0.12) then
    -- the same chain traced over huge or unknown dimensions (shape inference
    -- only: nothing is allocated), with gradients half of the time
    local function huge_spec(shape)
      local t = {}
      local huge = self:chance(0.8) and self:int(math.max(#shape, 1)) or -1
      for i, d in ipairs(shape) do
        if i == huge or self:chance(0.1) then
          t[i] = self:pick({"(1 << 31)", "(1 << 32)", "(1 << 40)", "(1 << 59)", "(1 << 61) - 1", "-1",
            "(1 << 31) + 1", "3037000500", "(1 << 20)"})
        elseif self:chance(0.3) then t[i] = "-1"
        else t[i] = tostring(d) end
      end
      return fmt("tf.TensorSpec({%s}, tf.float32)", concat(t, ", "))
    end
    local inner = body
    if self:chance(0.5) then
      inner = fmt("function(a, b) local t = tf.GradientTape(); t:watch({a, b}); local y = t:record(function() return %s end); return t:gradient(y, {a, b}) end", c.src)
    end
    return fmt("R(%d, function() return tf.fn(%s, {input_signature = {%s, %s}}):get_concrete_function() end)",
      n, inner, huge_spec(s1), huge_spec(s2))
  end
  local mode = self:int(100)
  if mode <= 25 then
    -- eager vs traced (fused) on the same values
    return fmt("R(%d, function() local f = %s; local a, b = %s, %s; local a0, b0 = a + 0, b + 0; local g = tf.fn(f); local e = H.both(f, g, a, b); H.check_same(e, g(a, b)); return H.check_same({a0, b0}, {a, b}) end)",
      n, body, A, B)
  elseif mode <= 45 then
    -- a traced function with relaxed input shapes, kept in the pool for later
    -- calls (recall_line compares them with its Lua function); a gradient
    -- body some of the time (broadcasting gradients over unknown dimensions)
    if self:chance(0.4) then
      body = fmt("function(a, b) local t = tf.GradientTape(); t:watch({a, b}); local y = t:record(function() return %s end); return t:gradient(y, {a, b}) end", c.src)
    end
    local sp1, r1 = self:relaxed_spec(s1)
    local sp2, r2 = self:relaxed_spec(s2)
    self.fnmeta[n] = {body = body, s = {s1, s2}, r = {r1, r2}}
    local opts = self:chance(0.7) and fmt("{input_signature = {%s, %s}}", sp1, sp2) or "{reduce_retracing = true}"
    return fmt("R(%d, function() local g = %s; local f = tf.fn(g, %s); local a, b = %s, %s; H.both(g, f, a, b); return f end)",
      n, body, opts, A, B)
  elseif mode <= 70 then
    -- gradients: eager tape vs the same inside a traced function
    local persistent = self:chance(0.3)
    local g = fmt("function(a, b) local t = tf.GradientTape(%s); t:watch({a, b}); local y = t:record(function() return %s end); return t:gradient(y, {a, b}%s) end",
      persistent and "{persistent = true}" or "", c.src,
      self:chance(0.3) and ', {unconnected_gradients = "zero"}' or "")
    if self:chance(0.5) then
      return fmt("R(%d, function() local g = %s; local a, b = %s, %s; return H.both(g, tf.fn(g), a, b) end)",
        n, g, A, B)
    end
    return fmt("R(%d, function() local g = %s; return g(%s, %s) end)", n, g, A, B)
  elseif mode <= 80 then
    -- a tape around a traced call (its gradient graph) vs around the eager body
    return fmt("R(%d, function() local f = %s; local a, b = %s, %s; local tf_f = tf.fn(f); return H.modes(function(traced) local t = tf.GradientTape(); t:watch({a, b}); local y = t:record(function() return (traced and tf_f or f)(a, b) end); return t:gradient(y, {a, b}) end) end)",
      n, body, A, B)
  elseif mode <= 88 then
    -- second order
    return fmt("R(%d, function() local a, b = %s, %s; local o = tf.GradientTape(); o:watch(a); local d = o:record(function() local i = tf.GradientTape(); i:watch({a, b}); local y = i:record(function() return %s end); return i:gradient(y, a) end); if d == nil then return nil end; return o:gradient(d, a) end)",
      n, A, B, c.src)
  else
    -- eager only, then the values as Lua tables
    return fmt("R(%d, function() local a, b = %s, %s; local y = %s; local _ = y:numpy(); return y end)",
      n, A, B, c.src)
  end
end

-- an expression of `shape` over vars (a chain, brought back to `shape`)
function Gen:same_shape_expr(vars, shape, depth)
  local c = self:chain(vars, depth)
  local same = #c.shape == #shape
  if same then for i = 1, #shape do if c.shape[i] ~= shape[i] then same = false end end end
  if same then return c.src end
  return fmt("(tf.zeros(%s) + tf.reduce_mean(%s))", dims_src(shape), c.src)
end

--- Stateful code: variables read and assigned in program order, eager vs
-- traced (automatic control dependencies, CSE and fusion around assigns),
-- with gradients through variable reads.
function Gen:var_line(n)
  local s = self:chain_shape(3)
  local vars = {{src = "v:value()", shape = s}, {src = "a", shape = s}, {src = "x1", shape = s}}
  local stmts = {"local x1 = v * 1"}
  for _ = 1, self:range(1, 4) do
    local r = self:int(6)
    local e = self:same_shape_expr(vars, s, self:range(1, 3))
    if r == 1 then stmts[#stmts + 1] = fmt("v:assign(%s)", e)
    elseif r == 2 then stmts[#stmts + 1] = fmt("v:assign_add(%s)", e)
    elseif r == 3 then stmts[#stmts + 1] = fmt("v:assign_sub(%s)", e)
    elseif r == 4 then stmts[#stmts + 1] = fmt("x1 = %s", e)
    elseif r == 5 then stmts[#stmts + 1] = fmt("w:assign_add(tf.reduce_sum(%s))", e)
    else stmts[#stmts + 1] = fmt("x1 = x1 + v:read_value() * w") end
  end
  local ret = self:pick({"x1", "x1 - v", "{x1, v:value()}", "v * x1", "tf.reduce_sum(x1) + w", "nil", "x1 * w"})
  local body = fmt("function(v, w, a) %s; return %s end", concat(stmts, "; "), ret)
  local init = self:value_src(s)
  if self:chance(0.3) then   -- a variable whose declared shape is partial or unknown
    init = fmt("%s, {shape = %s}", init, self:pick({"tf.TensorShape(nil)", "{-1}", dims_src(s)}))
  end
  local A = self:value_src(s)
  local mode = self:int(3)
  if mode == 1 then
    return fmt("R(%d, function() local f = %s; local a = %s; local g = tf.fn(f); H.modes(function(traced) local v, w = tf.Variable(%s), tf.Variable(0.5); local out = {}; for i = 1, 2 do out[i] = (traced and g or f)(v, w, a) end; return {out, v:value(), w:value()} end); return g end)",
      n, body, A, init)
  elseif mode == 2 then
    -- gradients through variable reads, eager vs traced, variables changed after the call
    return fmt("R(%d, function() local f = %s; local a = %s; local function run(ff) local v, w = tf.Variable(%s), tf.Variable(0.5); local t = tf.GradientTape({persistent = true}); local y = t:record(function() return ff(v, w, a) end); v:assign(v * 3); return {t:gradient(y, {v, w}), v:value(), w:value()} end; local tf_f = tf.fn(f); return H.modes(function(traced) return run(traced and tf_f or f) end) end)",
      n, body, A, init)
  end
  -- a training step inside the trace: forward, gradient and update
  return fmt("R(%d, function() local f = %s; local a = %s; local function step(v, w) local t = tf.GradientTape(); local y = t:record(function() return tf.reduce_sum(f(v, w, a) or 0) end); local g = t:gradient(y, {v, w}); if g[1] then v:assign_sub(g[1] * 0.1) end; if g[2] then w:assign_sub(g[2] * 0.1) end; return y end; local ts = tf.fn(step); return H.modes(function(traced) local v, w = tf.Variable(%s), tf.Variable(0.5); local out = {}; for i = 1, 2 do out[i] = (traced and ts or step)(v, w) end; return {out, v:value(), w:value()} end) end)",
    n, body, A, init)
end

--- tf.fn used against itself: its own cache, concrete functions, retrace
-- callbacks, eager mode switched while tracing, kwargs and structured
-- arguments, custom tracing types.
local REENTRY = {"f:clear_cache()", "local _ = f:get_concrete_function(a)", "local _ = f:tracing_count()",
  "local _ = f(a * 1)", "tf.config.run_functions_eagerly(true)",
  "tf.config.run_functions_eagerly(false)", "local _ = f:concrete_functions()", "local _ = f:retrace_reasons()",
  "local _ = tostring(f)", "local _ = f:pretty_printed_concrete_signatures()",
  "local _ = f(tf.constant({1.0, 2.0, 3.0}))",
  "local _ = f:get_concrete_function(tf.TensorSpec({-1}, tf.float32))", "collectgarbage()"}
function Gen:reentry_line(n)
  local stmts = {}
  for i = 1, self:range(1, 3) do
    -- bounded: a body that traces itself again without end only overflows the C stack
    stmts[i] = fmt("if depth < 3 then depth = depth + 1; %s end", self:pick(REENTRY))
  end
  local opts = self:pick({"nil", "{reduce_retracing = true}", "{max_traces = 1, on_retrace = \"warn\"}",
    "{max_traces = 1, on_retrace = function(info) if depth < 3 then depth = depth + 1; local _ = f(info.count and tf.constant(1.0) or nil) end end}",
    "{max_traces = 1, on_retrace = function(info) f:clear_cache() end}",
    "{max_traces = 2, on_retrace = function() error(\"stop\") end}",
    "{input_signature = {tf.TensorSpec({-1}, tf.float32)}}", "{name = \"self\"}"})
  local calls = {}
  for i = 1, self:range(1, 4) do
    calls[i] = fmt("R(0, function() return f(%s) end)", self:pick({"tf.constant({1.0, 2.0})", "tf.constant({1.0, 2.0, 3.0})",
      "tf.constant(2.0)", "tf.constant({{1.0}})", "tf.constant({1, 2})", "tf.kwargs({a = tf.constant(1.0)})",
      "tf.constant(1.0), tf.kwargs({a = tf.constant(2.0)})", "{tf.constant(1.0), x = tf.constant(2.0)}",
      "H.custom_tt(1)", "H.custom_tt(2)", "setmetatable({}, {})", "3", "3.0", "\"s\"", "nil"}))
  end

  return fmt("R(%d, function() local depth = 0; local f; f = tf.fn(function(a) %s; if type(a) == \"table\" and not tf.is_tensor(a) then return a end; return a * 2 end, %s); %s; return f end)",
    n, concat(stmts, "; "), opts, concat(calls, "; "))
end

--- Early release: a tensor freed (or dropped and collected) while something
-- else still needs its memory (a view, a traced function's capture, a
-- variable's initial value, a tape entry); new tensors of the same size then
-- take its recycled block, and the user's results must not change. ASan
-- cannot see these reuses inside the engine's block cache; values can.
local USERS = {
  "function(c) local v = tf.reshape(c, {-1}); return function() return v * 1 end end",
  "function(c) local v = tf.expand_dims(c, 1); return function() return v * 1 end end",
  "function(c) local v = c[{tf.ellipsis}]; return function() return v * 1 end end",
  "function(c) local v = tf.identity(c); return function() return v * 1 end end",
  "function(c) local f = tf.fn(function(a) return a + c end); local a = tf.ones_like(c); return function() return f(a) end end",
  "function(c) local f = tf.fn(function() return c * 2 end); f(); return function() return f() end end",
  "function(c) local v = tf.Variable(c); return function() return v:value() * 1 end end",
  "function(c) local x = tf.ones_like(c); local t = tf.GradientTape({persistent = true}); t:watch(x); local y = t:record(function() return x * c end); return function() return t:gradient(y, x) end end",
  "function(c) local t = tf.GradientTape({persistent = true}); t:watch(c); local y = t:record(function() return c * c end); return function() return t:gradient(y, c) end end",
  "function(c) local s = tf.unstack(tf.reshape(c, {-1})); return function() return tf.stack(s) end end",
  "function(c) local g = tf.fn(function(a) return tf.reshape(a, {-1}) end); local v = g(c); return function() return v * 1 end end",
}
function Gen:free_line(n)
  local shape = self:chain_shape(3)
  if numel(shape) == 0 then shape = {3} end
  local C = self:value_src(shape)
  local user = self:pick(USERS)
  local drop = self:pick({"c:free()", "c = nil; collectgarbage(); collectgarbage()"})
  return fmt("R(%d, function() local c = %s; local use = (%s)(c); local before = use(); %s; local junk = {}; for i = 1, 8 do junk[i] = tf.fill(%s, 777.0) end; return H.check_same(before, use()) end)",
    n, C, user, drop, dims_src(shape))
end

--- Convolutions and pools: eager vs traced, forward and gradients; the tape's
-- input gradient against conv2d_backprop_input.
function Gen:nn_line(n)
  local N, H, W, C = self:range(1, 2), self:range(1, 7), self:range(1, 7), self:range(1, 3)
  local KH, KW, O = self:range(1, 4), self:range(1, 4), self:range(1, 3)
  local X = self:value_src({N, H, W, C})
  local F = self:value_src({KH, KW, C, O})
  local strides = self:pick({"1", "2", "{1, 2}", "{2, 1}", "3", "{1, 1, 1, 1}", "{1, 2, 3, 1}"})
  local pad = self:pick({'"VALID"', '"SAME"', '"SAME"', '"VALID"',
    fmt("{{0, 0}, {%d, %d}, {%d, %d}, {0, 0}}", self:range(0, 2), self:range(0, 2), self:range(0, 2), self:range(0, 2))})
  local opts = self:chance(0.3) and fmt(", {dilations = %s}", self:pick({"2", "{1, 2}", "{2, 1}", "1"})) or ""
  local r = self:int(5)
  local op
  if r <= 2 then
    op = fmt("tf.nn.conv2d(x, f, %s, %s%s)", strides, pad, opts)
  elseif r == 3 then
    op = fmt("tf.nn.%s(x, {%d, %d}, %s, %s)", self:pick({"max_pool2d", "avg_pool2d"}), KH, KW, strides,
      pad:find("{") and '"SAME"' or pad)
  elseif r == 4 then
    op = fmt("tf.nn.relu(tf.nn.conv2d(tf.nn.%s(x, 2, 1, \"SAME\"), f, %s, %s%s)) * 2",
      self:pick({"max_pool2d", "avg_pool2d"}), strides, pad, opts)
  else
    -- the input gradient two ways (tape vs the explicit op)
    return fmt("R(%d, function() local x, f = %s, %s; local t = tf.GradientTape(); t:watch(x); local y = t:record(function() return tf.nn.conv2d(x, f, %s, %s%s) end); local g = t:gradient(y, x); local dy = tf.ones_like(y); return H.check_same(g, tf.nn.conv2d_backprop_input({%d, %d, %d, %d}, f, dy, %s, %s%s)) end)",
      n, X, F, strides, pad, opts, N, H, W, C, strides, pad, opts)
  end
  if self:chance(0.5) then
    return fmt("R(%d, function() local fx = function(x, f) return %s end; local x, f = %s, %s; local e = fx(x, f); local g = tf.fn(fx); H.check_same(e, g(x, f)); return H.check_same(e, g(x, f)) end)",
      n, op, X, F)
  end
  return fmt("R(%d, function() local fx = function(x, f) local t = tf.GradientTape(); t:watch({x, f}); local y = t:record(function() return %s end); return t:gradient(y, {x, f}) end; local x, f = %s, %s; return H.check_same(fx(x, f), tf.fn(fx)(x, f)) end)",
    n, op, X, F)
end

--- Call a traced chain function from the pool with shapes that fit (or not) its signature.
function Gen:recall_line(n)
  local slots = {}
  for s, m in pairs(self.fnmeta) do if self.P[s] ~= nil then slots[#slots + 1] = s end end
  if #slots == 0 then return nil end
  table.sort(slots)
  local s = self:pick(slots)
  local m = self.fnmeta[s]
  local sh1, sh2 = self:perturb(m.s[1], m.r[1]), self:perturb(m.s[2], m.r[2])
  local A, B = self:value_src(sh1), self:value_src(sh2)
  if self:chance(0.3) then
    -- under a tape: the call's gradient graph
    return fmt("R(%d, function() local a, b = %s, %s; local t = tf.GradientTape(); t:watch({a, b}); local y = t:record(function() return P[%d](a, b) end); return t:gradient(y, {a, b}) end)",
      n, A, B, s)
  end
  return fmt("R(%d, function() local a, b = %s, %s; return H.both(P[%d]:lua_function(), P[%d], a, b) end)",
    n, A, B, s, s)
end
-- }====

-- {==== Lines (one statement per call)
-- scenarios that keep state across calls: traced functions, tapes, coroutines
function Gen:scenario(n, depth)
  local r = self:int(100)
  local tensor_or_spec = function() return self:chance(0.7) and self:tensor() or self:spec() end
  if r <= 14 then
    local opts = self:chance(0.5) and (", " .. self:opts()) or ""
    if self:chance(0.3) then
      local sig = {}
      for i = 1, self:range(0, 3) do sig[i] = self:spec() end
      opts = fmt(", {input_signature = {%s}%s}", concat(sig, ", "),
        self:chance(0.3) and ", reduce_retracing = true" or "")
    end
    return fmt("tf.fn(%s%s)", self:func(depth), opts)
  elseif r <= 30 then
    local f = self:pool(CALLABLE)
    if f then
      local args = {}
      for i = 1, self:wpick({1, 0, 4, 1, 3, 2, 1, 3}) do args[i] = self:chance(0.8) and self:tensor() or self:any(1) end
      return fmt("%s(%s)", f, concat(args, ", "))
    end
  elseif r <= 36 then
    local f = self:pool({fn = true})
    if f then
      local args = {}
      for i = 1, self:range(0, 3) do args[i] = tensor_or_spec() end
      return fmt("%s:get_concrete_function(%s)", f, concat(args, ", "))
    end
  elseif r <= 42 then
    local cf = self:pool({cf = true, fn = true})
    if cf then
      return fmt("%s%s", cf, self:pick({".graph:nodes()", ".graph:to_dot()", ".graph:as_graph_def()",
        ":gradient_graph()", ":captured_variables()", ":inference_fn(" .. self:tensor() .. ")",
        ":pretty_printed_concrete_signatures()", ":retrace_reasons()", ":clear_cache()",
        ":concrete_functions()", ":tracing_count()", "._G", ".graph"}))
    end
  elseif r <= 50 then
    return fmt("tf.GradientTape(%s)", self:chance(0.7) and self:pick({"{persistent = true}", "{}",
      "{persistent = true, watch_accessed_variables = false}", "nil"}) or self:opts())
  elseif r <= 60 then
    local tape = self:pool({tape = true})
    if tape then
      local what = self:int(6)
      if what <= 2 then
        return fmt("%s:record(%s, %s)", tape, self:func(depth), self:tensor())
      elseif what == 3 then
        return fmt("%s:watch(%s)", tape, self:tensor())
      elseif what == 4 then
        return fmt("(function() local _ <close> = %s:start(); return %s end)()", tape, self:call_expr(depth))
      else
        local src = self:pool(TENSORISH) or self:tensor()
        local y = self:pool(TENSORISH) or self:tensor()
        return fmt("%s:%s(%s, %s%s)", tape, self:pick({"gradient", "gradient", "jacobian", "batch_jacobian"}),
          y, self:chance(0.2) and ("{" .. src .. ", " .. self:tensor() .. "}") or src,
          self:chance(0.3) and (", " .. self:opts()) or "")
      end
    end
  elseif r <= 66 then
    return fmt("tf.custom_gradient(%s)", self:cg_func(depth))
  elseif r <= 74 then
    -- a one-shot traced call (leaks, yields, tapes inside)
    local args = {}
    for i = 1, self:range(0, 2) do args[i] = self:tensor() end
    return fmt("tf.fn(%s)(%s)", self:func(depth), concat(args, ", "))
  elseif r <= 82 then
    local co = self:pool({thread = true})
    if co and self:chance(0.7) then
      if self:chance(0.2) then return fmt("coroutine.close(%s)", co) end
      return fmt("select(2, coroutine.resume(%s, %s))", co, self:tensor())
    end
    local f = self:pool(CALLABLE)
    local body = f and self:chance(0.5) and fmt("function(...) return %s(...) end", f) or self:func(depth)
    return fmt("coroutine.create(%s)", body)
  elseif r <= 88 then
    return fmt("tf.Variable(%s%s)", self:arg("V", depth), self:chance(0.4) and (", " .. self:opts()) or "")
  elseif r <= 94 then
    local t = self:pool()
    if t then
      return self:pick({fmt("%s:free()", t), fmt("tf.identity(%s)", t)})
    end
  else
    local f = self:pool(CALLABLE)
    if f then return fmt("tf.GradientTape():record(%s, %s)", f, self:tensor()) end
  end
  return self:call_expr(depth)
end

--- The source of call `n` (reserving its result slot).
function Gen:line()
  local n = self:new_slot()
  local depth = self:wpick({3, 1, 4, 2, 1, 3})
  local r = self:int(100)
  local expr
  if self.chains > 0 and self:chance(self.chains) then
    local k = self:int(14)
    if k <= 2 then return self:var_line(n) end
    if k == 14 then return self:free_line(n) end
    if k == 13 then return self:reentry_line(n) end
    if k >= 11 then return self:nn_line(n) end
    return (k <= 5 and self:recall_line(n)) or self:chain_line(n)
  end
  if r <= 40 then expr = self:call_expr(depth)
  elseif r <= 55 then expr = self:method_expr(depth)
  elseif r <= 68 then expr = self:op_expr(depth)
  elseif r <= 94 then expr = self:scenario(n, depth)
  else
    local victim = self:pool()
    local h = self:int(4)
    if h == 1 and victim then return fmt("P[%s] = nil", victim:match("^P%[(%d+)%]")) end
    if h == 2 then return fmt("R(%d, function() collectgarbage() end)", n) end
    if h == 3 then return fmt("R(%d, function() collectgarbage(\"step\", %d) end)", n, self:range(0, 100)) end
    expr = fmt("%s[%s] = %s", self:tensor(), self:index_key(), self:any(1))
    return fmt("R(%d, function() %s end)", n, expr)
  end
  return fmt("R(%d, function() return %s end)", n, expr)
end
-- }====

return Gen
