--- ONNX import: tf.onnx.load (docs/onnx.md).
--
-- The model is read by the C reader (core/onnx_reader.c via
-- core.internal.onnx_read: protobuf-c; each initializer's bytes are read
-- straight into its tensor when it is taken, conv weights into luatf's layout),
-- checked against the operator table OPS below (every operator, attribute
-- and attribute value luatf cannot express is collected and refused in one
-- error), then interpreted node by node with tf ops inside tf.fn over an
-- input_signature of TensorSpecs: the result is an ordinary traced concrete
-- function (optimized, planned, differentiable, saveable).
--
-- Layout: ONNX is NCHW, luatf's convolutions and pools are NHWC. A 4-d value
-- produced by Conv/pool/BatchNormalization stays NHWC while the ops that
-- read it understand that layout (elementwise ops, more convolutions and
-- pools); any other reader gets it transposed back once (`get`).
local M = {}

local sfmt = string.format
local unpack = table.unpack

-- ONNX TensorProto.DataType -> luatf dtype name
local DTYPES = {[1] = "float32", [2] = "uint8", [6] = "int32", [7] = "int64", [8] = "string", [9] = "bool",
                [10] = "float16", [11] = "float64", [16] = "bfloat16"}
local ONNX_TYPE_NAMES = {[0] = "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING",
                         "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"}

local OPS = {}       -- [op_type] = {attrs = {[name] = true | check(value, node) -> problem}, run = function(cx, node, ins) -> outs}
M.OPS = OPS

local tf        -- set by load
local function raise(kind, fmt, ...) tf.errors.raise(kind, sfmt(fmt, ...), 3) end

-- {==== helpers
local function is_sym(t) return t:is_symbolic() end
local function vals(t) return t:totable() end    -- a concrete tensor's values (nested for rank > 1)
local function flat_vals(t)
  local v = t:totable()
  if type(v) ~= "table" then return {v} end
  local out = {}
  local function walk(x) if type(x) == "table" then for i = 1, #x do walk(x[i]) end else out[#out + 1] = x end end
  walk(v)
  return out
end
local function int_list(t, what)
  if t == nil then return nil end
  if is_sym(t) then raise("UnimplementedError", "onnx: %s must be a constant (it depends on the inputs)", what) end
  return flat_vals(t)
end
local function rank_of(t) return #t.shape end
local function dims_of(t)   -- static dims, nil for unknown
  local s = t.shape
  local d = {n = #s}
  for i = 1, #s do d[i] = s[i] end
  return d
end
local function all_known(d) for i = 1, d.n or #d do if d[i] == nil then return false end end return true end
local function norm_axis(a, r) if a < 0 then a = a + r end return a + 1 end   -- 0-based ONNX -> 1-based
local function dtype_of(et) return tf[DTYPES[et]] end
local function const(v, dt) return tf.init_scope(function() return tf.constant(v, dt) end) end
local function eager(f, ...) return tf.init_scope(f, ...) end
local function all_const(ins)
  for i = 1, ins.n or #ins do if ins[i] ~= nil and is_sym(ins[i]) then return false end end
  return true
end
-- the shape tensor of x (int64): a constant when its dims are known
local function shape_of(x)
  local d = dims_of(x)
  if all_known(d) then
    local v = {}
    for i = 1, d.n do v[i] = d[i] end
    return const(v, tf.int64)
  end
  return tf.cast(tf.shape(x), tf.int64)
end
local function same_dtype(a, b)
  if a.dtype ~= b.dtype then b = tf.cast(b, a.dtype) end
  return b
end
-- reshape x so that it broadcasts against a rank-r value along axis `axis` (1-based)
local function channel_vec(v, r, axis)
  local shp = {}
  for i = 1, r do shp[i] = 1 end
  shp[axis] = -1
  return tf.reshape(v, shp)
end
-- }====

-- {==== attribute checks
local function any() return nil end
local function one_of(...)
  local ok = {}
  for _, v in ipairs({...}) do ok[v] = true end
  return function(v) if not ok[v] then return sfmt("value %s", tostring(v)) end end
end
local function ones_only(v)
  for _, x in ipairs(v) do if x ~= 1 then return "values other than 1" end end
end
local function zero_only(v) if v ~= 0 then return sfmt("value %s", tostring(v)) end end
-- }====

local SUBGRAPH = function() return nil end   -- the check of a GRAPH attribute interpreted as a branch
local run_subgraph                            -- defined with the interpreter below
local function def(names, attrs, run, note)
  if type(names) == "string" then names = {names} end
  for _, n in ipairs(names) do OPS[n] = {attrs = attrs or {}, run = run, note = note} end
end

-- {==== elementwise
local UNARY = {
  Relu = function(x) return tf.nn.relu(x) end, Sigmoid = function(x) return tf.sigmoid(x) end,
  Tanh = function(x) return tf.tanh(x) end, Exp = function(x) return tf.exp(x) end,
  Log = function(x) return tf.log(x) end, Sqrt = function(x) return tf.sqrt(x) end,
  Neg = function(x) return -x end, Abs = function(x) return tf.abs(x) end,
  Reciprocal = function(x) return tf.math.reciprocal(x) end, Floor = function(x) return tf.floor(x) end,
  Ceil = function(x) return tf.ceil(x) end, Round = function(x) return tf.round(x) end,
  Sin = function(x) return tf.sin(x) end, Cos = function(x) return tf.cos(x) end,
  Tan = function(x) return tf.tan(x) end, Asin = function(x) return tf.math.asin(x) end,
  Acos = function(x) return tf.math.acos(x) end, Atan = function(x) return tf.math.atan(x) end,
  Sinh = function(x) return tf.math.sinh(x) end, Cosh = function(x) return tf.math.cosh(x) end,
  Asinh = function(x) return tf.math.asinh(x) end, Acosh = function(x) return tf.math.acosh(x) end,
  Atanh = function(x) return tf.math.atanh(x) end, Erf = function(x) return tf.math.erf(x) end,
  Sign = function(x) return tf.sign(x) end, Softplus = function(x) return tf.nn.softplus(x) end,
  Softsign = function(x) return tf.nn.softsign(x) end, Not = function(x) return tf.logical_not(x) end,
  IsNaN = function(x) return tf.math.is_nan(x) end,
  HardSwish = function(x) return x * tf.clip_by_value(x / 6 + 0.5, 0, 1) end,
  Mish = function(x) return x * tf.tanh(tf.nn.softplus(x)) end,
}
local LAYOUT_FREE = {}   -- ops that keep an NHWC value NHWC
for name, f in pairs(UNARY) do
  LAYOUT_FREE[name] = true
  def(name, {}, function(cx, node, ins) return {f(ins[1])} end)
end
def("Identity", {}, function(_, _, ins) return {ins[1]} end)
LAYOUT_FREE.Identity = true
def("Elu", {alpha = any}, function(_, node, ins)
  local a = node.attrs.alpha and node.attrs.alpha.value or 1.0
  local x = ins[1]
  return {tf.where(tf.greater(x, tf.zeros_like(x)), x, (tf.exp(x) - 1) * a)}
end)
def("Celu", {alpha = any}, function(_, node, ins)
  local a = node.attrs.alpha and node.attrs.alpha.value or 1.0
  local x = ins[1]
  return {tf.maximum(x, 0) + tf.minimum(tf.zeros_like(x), (tf.exp(x / a) - 1) * a)}
end)
def("Selu", {alpha = any, gamma = any}, function(_, node, ins)
  local a = node.attrs.alpha and node.attrs.alpha.value or 1.67326319217681884765625
  local g = node.attrs.gamma and node.attrs.gamma.value or 1.05070102214813232421875
  local x = ins[1]
  return {tf.where(tf.greater(x, tf.zeros_like(x)), x * g, (tf.exp(x) - 1) * (a * g))}
end)
def("LeakyRelu", {alpha = any}, function(_, node, ins)
  local a = node.attrs.alpha and node.attrs.alpha.value or 0.01
  local x = ins[1]
  return {tf.where(tf.greater(x, tf.zeros_like(x)), x, x * a)}
end)
def("ThresholdedRelu", {alpha = any}, function(_, node, ins)
  local a = node.attrs.alpha and node.attrs.alpha.value or 1.0
  local x = ins[1]
  return {tf.where(tf.greater(x, tf.cast(a, x.dtype)), x, tf.zeros_like(x))}
end)
def("HardSigmoid", {alpha = any, beta = any}, function(_, node, ins)
  local a = node.attrs.alpha and node.attrs.alpha.value or 0.2
  local b = node.attrs.beta and node.attrs.beta.value or 0.5
  return {tf.clip_by_value(ins[1] * a + b, 0, 1)}
end)
def("IsInf", {detect_negative = any, detect_positive = any}, function(_, node, ins)
  local neg = not node.attrs.detect_negative or node.attrs.detect_negative.value ~= 0
  local pos = not node.attrs.detect_positive or node.attrs.detect_positive.value ~= 0
  local x = ins[1]
  local inf = tf.math.is_inf(x)
  if neg and pos then return {inf} end
  if pos then return {tf.logical_and(inf, tf.greater(x, tf.zeros_like(x)))} end
  if neg then return {tf.logical_and(inf, tf.less(x, tf.zeros_like(x)))} end
  return {tf.logical_and(inf, tf.logical_not(inf))}
end)
for _, n in ipairs({"Elu", "Celu", "Selu", "LeakyRelu", "ThresholdedRelu", "HardSigmoid"}) do LAYOUT_FREE[n] = true end

def("Clip", {min = any, max = any}, function(_, node, ins)
  local x, lo, hi = ins[1], ins[2], ins[3]
  if node.attrs.min then lo = node.attrs.min.value end
  if node.attrs.max then hi = node.attrs.max.value end
  if lo ~= nil then x = tf.maximum(x, type(lo) == "number" and tf.cast(lo, x.dtype) or same_dtype(x, lo)) end
  if hi ~= nil then x = tf.minimum(x, type(hi) == "number" and tf.cast(hi, x.dtype) or same_dtype(x, hi)) end
  return {x}
end)
LAYOUT_FREE.Clip = true

local BINARY = {
  Add = function(a, b) return a + b end, Sub = function(a, b) return a - b end,
  Mul = function(a, b) return a * b end,
  Div = function(a, b)
    if a.dtype == tf.float32 or a.dtype == tf.float64 or a.dtype == tf.float16 or a.dtype == tf.bfloat16 then
      return a / b
    end
    return tf.math.truncatediv and tf.math.truncatediv(a, b) or tf.cast(tf.cast(a, tf.float64) / tf.cast(b, tf.float64), a.dtype)
  end,
  Pow = function(a, b) return tf.pow(a, same_dtype(a, b)) end,
  Equal = function(a, b) return tf.equal(a, b) end, Less = function(a, b) return tf.less(a, b) end,
  Greater = function(a, b) return tf.greater(a, b) end,
  LessOrEqual = function(a, b) return tf.less_equal(a, b) end,
  GreaterOrEqual = function(a, b) return tf.greater_equal(a, b) end,
  And = function(a, b) return tf.logical_and(a, b) end, Or = function(a, b) return tf.logical_or(a, b) end,
  Xor = function(a, b) return tf.logical_xor(a, b) end,
}
for name, f in pairs(BINARY) do
  LAYOUT_FREE[name] = "binary"
  def(name, {}, function(_, _, ins) return {f(ins[1], ins[2])} end)
end
def("Mod", {fmod = any}, function(_, node, ins)
  local a, b = ins[1], ins[2]
  if node.attrs.fmod and node.attrs.fmod.value == 1 then
    return {a - tf.cast(tf.cast(a / b, tf.int64), a.dtype) * b}   -- C fmod: the sign of the dividend
  end
  return {tf.math.floormod(a, b)}
end)
local VARIADIC = {
  Sum = function(a, b) return a + b end, Max = function(a, b) return tf.maximum(a, b) end,
  Min = function(a, b) return tf.minimum(a, b) end, Mean = function(a, b) return a + b end,
}
for name, f in pairs(VARIADIC) do
  LAYOUT_FREE[name] = "binary"
  def(name, {}, function(_, _, ins)
    local acc = ins[1]
    for i = 2, ins.n do acc = f(acc, ins[i]) end
    if name == "Mean" then acc = acc / ins.n end
    return {acc}
  end)
end
def("PRelu", {}, function(_, _, ins)
  local x, s = ins[1], ins[2]
  return {tf.where(tf.less(x, tf.zeros_like(x)), x * s, x)}
end)
def("Where", {}, function(_, _, ins) return {tf.where(ins[1], ins[2], ins[3])} end)
local function cast(x, dt)
  if (x.dtype == tf.string) ~= (dt == tf.string) then
    raise("UnimplementedError", "onnx: Cast between strings and numbers (%s to %s)", tostring(x.dtype), tostring(dt))
  end
  return tf.cast(x, dt)
end
def("Cast", {to = function(v) if not DTYPES[v] then return "to " .. (ONNX_TYPE_NAMES[v] or tostring(v)) end end,
             saturate = any},
    function(_, node, ins) return {cast(ins[1], dtype_of(node.attrs.to.value))} end)
def("CastLike", {saturate = any}, function(_, _, ins) return {cast(ins[1], ins[2].dtype)} end)
-- }====

-- {==== matrix products
def("MatMul", {}, function(_, _, ins)
  local a, b = ins[1], ins[2]
  local ra, rb = rank_of(a), rank_of(b)
  if ra == 1 and rb == 1 then return {tf.reduce_sum(a * b)} end
  if ra == 1 then return {tf.squeeze(tf.matmul(tf.expand_dims(a, 1), b), {-2})} end
  if rb == 1 then return {tf.squeeze(tf.matmul(a, tf.expand_dims(b, -1)), {-1})} end
  return {tf.matmul(a, b)}
end)
def("Gemm", {alpha = any, beta = any, transA = any, transB = any}, function(_, node, ins)
  local at = node.attrs
  local alpha = at.alpha and at.alpha.value or 1.0
  local beta = at.beta and at.beta.value or 1.0
  local ta = at.transA and at.transA.value ~= 0
  local tb = at.transB and at.transB.value ~= 0
  local y = tf.matmul(ins[1], ins[2], {transpose_a = ta or nil, transpose_b = tb or nil})
  if alpha ~= 1 then y = y * alpha end
  if ins[3] ~= nil then
    local c = ins[3]
    if beta ~= 1 then c = c * beta end
    y = y + c
  end
  return {y}
end)
def("Einsum", {equation = any}, function(_, node, ins)
  local eq = node.attrs.equation.value:gsub("%s", "")
  return {tf.einsum(eq, unpack(ins, 1, ins.n))}
end)
-- }====

-- {==== reductions
local function reduce_def(name, f)
  def(name, {axes = any, keepdims = any, noop_with_empty_axes = any}, function(cx, node, ins)
    local x = ins[1]
    local axes = node.attrs.axes and node.attrs.axes.value or int_list(ins[2], name .. " axes")
    local keep = not node.attrs.keepdims or node.attrs.keepdims.value ~= 0
    local r = rank_of(x)
    if axes == nil or #axes == 0 then
      if node.attrs.noop_with_empty_axes and node.attrs.noop_with_empty_axes.value ~= 0 then return {x} end
      axes = {}
      for i = 0, r - 1 do axes[#axes + 1] = i end
    end
    local ax = {}
    for i, a in ipairs(axes) do ax[i] = norm_axis(a, r) end
    if r == 0 then return {f(x, nil, false)} end
    return {f(x, ax, keep)}
  end)
end
reduce_def("ReduceMean", function(x, a, k) return tf.reduce_mean(x, a, k) end)
reduce_def("ReduceSum", function(x, a, k) return tf.reduce_sum(x, a, k) end)
reduce_def("ReduceMax", function(x, a, k) return tf.reduce_max(x, a, k) end)
reduce_def("ReduceMin", function(x, a, k) return tf.reduce_min(x, a, k) end)
reduce_def("ReduceProd", function(x, a, k) return tf.reduce_prod(x, a, k) end)
reduce_def("ReduceL1", function(x, a, k) return tf.reduce_sum(tf.abs(x), a, k) end)
reduce_def("ReduceL2", function(x, a, k) return tf.sqrt(tf.reduce_sum(x * x, a, k)) end)
reduce_def("ReduceSumSquare", function(x, a, k) return tf.reduce_sum(x * x, a, k) end)
reduce_def("ReduceLogSum", function(x, a, k) return tf.log(tf.reduce_sum(x, a, k)) end)
reduce_def("ReduceLogSumExp", function(x, a, k) return tf.reduce_logsumexp(x, a, k) end)
local function arg_def(name, f)
  def(name, {axis = any, keepdims = any, select_last_index = any}, function(_, node, ins)
    local x = ins[1]
    local r = rank_of(x)
    local a = norm_axis(node.attrs.axis and node.attrs.axis.value or 0, r)
    local y
    if node.attrs.select_last_index and node.attrs.select_last_index.value ~= 0 then
      -- the last of equal values: the first along the reversed axis, counted from the end
      local n = dims_of(x)[a]
      if n == nil then raise("UnimplementedError", "onnx: %s select_last_index over an unknown dimension", name) end
      y = (n - 1) - (f(tf.reverse(x, {a}), a) - 1)
    else
      y = f(x, a) - 1
    end
    if not node.attrs.keepdims or node.attrs.keepdims.value ~= 0 then y = tf.expand_dims(y, a) end
    return {tf.cast(y, tf.int64)}
  end)
end
arg_def("ArgMax", function(x, a) return tf.argmax(x, a) end)
arg_def("ArgMin", function(x, a) return tf.argmin(x, a) end)
-- softmax family: opset >= 13 over one axis; before, over the axes from `axis` on, flattened
local function softmax_def(name, f)
  def(name, {axis = any}, function(cx, node, ins)
    local x = ins[1]
    local r = rank_of(x)
    if cx.opset >= 13 then
      local a = norm_axis(node.attrs.axis and node.attrs.axis.value or -1, r)
      if a == r then return {f(x)} end
      local perm = {}
      for i = 1, r do perm[i] = i end
      perm[a], perm[r] = r, a
      return {tf.transpose(f(tf.transpose(x, perm)), perm)}
    end
    local a = norm_axis(node.attrs.axis and node.attrs.axis.value or 1, r)
    local shp = shape_of(x)
    local d = dims_of(x)
    local tail = 1
    for i = a, r do tail = (tail and d[i]) and tail * d[i] or nil end
    if tail == nil then raise("UnimplementedError", "onnx: %s (opset %d) over axes of unknown size", node.op_type, cx.opset) end
    local y = f(tf.reshape(x, {-1, tail}))
    return {tf.reshape(y, shp)}
  end)
end
softmax_def("Softmax", function(x) return tf.nn.softmax(x) end)
softmax_def("LogSoftmax", function(x) return tf.nn.log_softmax(x) end)
def("Hardmax", {axis = any}, function(cx, node, ins)
  local x = ins[1]
  local r = rank_of(x)
  local a = norm_axis(node.attrs.axis and node.attrs.axis.value or (cx.opset >= 13 and -1 or 1), r)
  local d = dims_of(x)
  return {tf.one_hot(tf.argmax(x, a), d[a], {axis = a, dtype = x.dtype})}
end)
-- NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss: input (N, C, d...),
-- target (N, d...) of class indices, optional per-class weights
local function nll(x, target, weight, node)
  local at = node.attrs
  local red = at.reduction and at.reduction.value or "mean"
  local c = dims_of(x)[2]
  if c == nil then raise("UnimplementedError", "onnx: %s over an unknown number of classes", node.op_type) end
  local t = tf.cast(target, tf.int64)
  local keep
  if at.ignore_index then keep = tf.not_equal(t, tf.cast(at.ignore_index.value, tf.int64)) end
  local safe = keep and tf.where(keep, t, tf.zeros_like(t)) or t
  local oh = tf.one_hot(safe + 1, c, {axis = 2, dtype = x.dtype})
  local picked = tf.reduce_sum(x * oh, {2})
  local w
  if weight ~= nil then w = tf.gather(weight, safe + 1) end
  if keep then
    local k = tf.cast(keep, x.dtype)
    w = w and w * k or k
  end
  local loss = w and -(picked * w) or -picked
  if red == "none" then return loss end
  if red == "sum" then return tf.reduce_sum(loss) end
  if w then return tf.reduce_sum(loss) / tf.reduce_sum(w) end
  return tf.reduce_mean(loss)
end
local LOSS_ATTRS = {reduction = one_of("none", "sum", "mean"), ignore_index = any}
def("NegativeLogLikelihoodLoss", LOSS_ATTRS, function(_, node, ins) return {nll(ins[1], ins[2], ins[3], node)} end)
def("SoftmaxCrossEntropyLoss", LOSS_ATTRS, function(_, node, ins)
  local x = ins[1]
  local r = rank_of(x)
  local perm = {}
  for i = 1, r do perm[i] = i end
  perm[2], perm[r] = r, 2
  local lp = r == 2 and tf.nn.log_softmax(x) or tf.transpose(tf.nn.log_softmax(tf.transpose(x, perm)), perm)
  return {nll(lp, ins[2], ins[3], node), lp}
end)
def("CumSum", {exclusive = any, reverse = any}, function(_, node, ins)
  local x = ins[1]
  local r = rank_of(x)
  local opts = {exclusive = (node.attrs.exclusive and node.attrs.exclusive.value ~= 0) and true or false,
                reverse = (node.attrs.reverse and node.attrs.reverse.value ~= 0) and true or false}
  if is_sym(ins[2]) then
    -- an axis known only at run time: one branch per axis (the shape is the same in all)
    local ax = tf.reshape(tf.cast(ins[2], tf.int64), {})
    ax = tf.where(tf.less(ax, const(0, tf.int64)), ax + r, ax) + 1
    local fns = {}
    for a = 1, r do fns[a] = function() return tf.cumsum(x, a, opts) end end
    return {tf.switch_case(ax, fns)}
  end
  local a = norm_axis(int_list(ins[2], "CumSum axis")[1], r)
  return {tf.cumsum(x, a, opts)}
end)
-- }====

-- {==== shapes and data movement
def("Shape", {start = any, ["end"] = any}, function(cx, node, ins)
  local s = shape_of(ins[1])
  local st, en = node.attrs.start, node.attrs["end"]
  if not st and not en and is_sym(s) then cx.shapeinfo[node.outputs[1]] = dims_of(ins[1]) end
  if st or en then
    local r = rank_of(ins[1])
    local a = st and st.value or 0
    local b = en and en.value or r
    if a < 0 then a = a + r end
    if b < 0 then b = b + r end
    a, b = math.max(0, math.min(a, r)), math.max(0, math.min(b, r))
    if b <= a then return {const({}, tf.int64)} end
    s = s[{{a + 1, b}}]
  end
  return {s}
end)
def("Size", {}, function(_, _, ins)
  local d = dims_of(ins[1])
  if all_known(d) then
    local n = 1
    for i = 1, d.n do n = n * d[i] end
    return {const(n, tf.int64)}
  end
  return {tf.cast(tf.size(ins[1]), tf.int64)}
end)
def("Reshape", {allowzero = any}, function(_, node, ins)
  local x, s = ins[1], ins[2]
  local allowzero = node.attrs.allowzero and node.attrs.allowzero.value ~= 0
  if not is_sym(s) then
    local shp = flat_vals(s)
    local d = dims_of(x)
    local sym_copy = false
    for i, v in ipairs(shp) do
      if v == 0 and not allowzero then
        if d[i] == nil then sym_copy = true else shp[i] = d[i] end
      end
    end
    if not sym_copy then return {tf.reshape(x, shp)} end
    local xs = tf.cast(tf.shape(x), tf.int64)
    local parts = {}
    for i, v in ipairs(shp) do
      parts[i] = (v == 0 and not allowzero) and xs[{{i, i}}] or const({v}, tf.int64)
    end
    return {tf.reshape(x, tf.concat(parts, 1))}
  end
  if not allowzero then
    local xs = tf.cast(tf.shape(x), tf.int64)
    local n = s.shape[1]
    local r = rank_of(x)
    if n and n <= r then
      s = tf.where(tf.equal(s, tf.zeros_like(s)), xs[{{1, n}}], s)
    elseif n then   -- a 0 past x's rank stays 0
      s = tf.where(tf.equal(s, tf.zeros_like(s)), tf.concat({xs, tf.zeros({n - r}, tf.int64)}, 1), s)
    end
  end
  return {tf.reshape(x, s)}
end)
def("Flatten", {axis = any}, function(_, node, ins)
  local x = ins[1]
  local r = rank_of(x)
  local a = node.attrs.axis and node.attrs.axis.value or 1
  if a < 0 then a = a + r end
  local d = dims_of(x)
  local lead, tail = 1, 1
  for i = 1, a do lead = (d[i] and lead) and lead * d[i] or nil end
  for i = a + 1, r do tail = (d[i] and tail) and tail * d[i] or nil end
  if lead then return {tf.reshape(x, {lead, -1})} end
  if tail then return {tf.reshape(x, {-1, tail})} end
  local xs = tf.cast(tf.shape(x), tf.int64)
  return {tf.reshape(x, tf.stack({tf.reduce_prod(xs[{{1, a}}]), const(-1, tf.int64)}))}
end)
def("Transpose", {perm = any}, function(_, node, ins)
  local x = ins[1]
  local r = rank_of(x)
  local perm = {}
  if node.attrs.perm then
    for i, p in ipairs(node.attrs.perm.value) do perm[i] = p + 1 end
  else
    for i = 1, r do perm[i] = r - i + 1 end
  end
  return {tf.transpose(x, perm)}
end)
local function axes_arg(node, ins, i, what)
  if node.attrs.axes then return node.attrs.axes.value end
  return int_list(ins[i], what)
end
def("Squeeze", {axes = any}, function(_, node, ins)
  local x = ins[1]
  local axes = axes_arg(node, ins, 2, "Squeeze axes")
  local r = rank_of(x)
  if axes == nil then
    local d = dims_of(x)
    axes = {}
    for i = 1, r do
      if d[i] == nil then raise("UnimplementedError", "onnx: Squeeze without axes needs known dimensions") end
      if d[i] == 1 then axes[#axes + 1] = i - 1 end
    end
  end
  local ax = {}
  for i, a in ipairs(axes) do ax[i] = norm_axis(a, r) end
  if #ax == 0 then return {x} end
  return {tf.squeeze(x, ax)}
end)
def("Unsqueeze", {axes = any}, function(_, node, ins)
  local x = ins[1]
  local axes = axes_arg(node, ins, 2, "Unsqueeze axes")
  local r = rank_of(x) + #axes
  local ax = {}
  for i, a in ipairs(axes) do ax[i] = norm_axis(a, r) end
  table.sort(ax)
  for _, a in ipairs(ax) do x = tf.expand_dims(x, a) end
  return {x}
end)
def("Concat", {axis = any}, function(_, node, ins)
  local parts = {}
  for i = 1, ins.n do
    if ins[i] ~= nil then parts[#parts + 1] = ins[i] end
  end
  local r = rank_of(parts[1])
  local a = norm_axis(node.attrs.axis.value, r)
  -- empty 1-d pieces (shape lists) are left out
  local kept = {}
  for _, p in ipairs(parts) do
    local d = dims_of(p)
    if not (d.n == 1 and d[1] == 0) or #parts == 1 then kept[#kept + 1] = p end
  end
  if #kept == 0 then kept = {parts[1]} end
  if #kept == 1 then return {kept[1]} end
  return {tf.concat(kept, a)}
end)
def("Split", {axis = any, split = any, num_outputs = any}, function(_, node, ins)
  local x = ins[1]
  local r = rank_of(x)
  local a = norm_axis(node.attrs.axis and node.attrs.axis.value or 0, r)
  local sizes = node.attrs.split and node.attrs.split.value or int_list(ins[2], "Split sizes")
  local n = #node.outputs
  if sizes == nil or #sizes == 0 then
    local d = dims_of(x)[a]
    if d == nil then return tf.split(x, n, a) end
    local k = math.ceil(d / n)
    sizes = {}
    local left = d
    for i = 1, n do sizes[i] = math.min(k, left); left = left - sizes[i] end
  end
  return tf.split(x, sizes, a)
end)
-- Slice with starts/ends known only when the graph runs (a length from
-- Shape): clamped as ONNX does, in the graph, then tf.slice; steps 1 only
local function slice_dynamic(x, starts, ends, axes, steps)
  local r = rank_of(x)
  local n = starts.shape[1]
  if n == nil then raise("UnimplementedError", "onnx: Slice with starts of unknown length") end
  for _, st in ipairs(steps or {}) do
    if st ~= 1 then raise("UnimplementedError", "onnx: Slice with step %d and starts/ends known only at run time", st) end
  end
  local xs = tf.cast(tf.shape(x), tf.int64)
  starts, ends = tf.cast(starts, tf.int64), tf.cast(ends, tf.int64)
  local zero = const(0, tf.int64)
  local begin, size = {}, {}
  for i = 1, r do begin[i] = const({1}, tf.int64); size[i] = const({-1}, tf.int64) end
  for i = 1, n do
    local a = axes and norm_axis(axes[i], r) or i
    local dim = xs[{{a, a}}]
    local st, en = starts[{{i, i}}], ends[{{i, i}}]
    st = tf.where(tf.less(st, zero), st + dim, st)
    en = tf.where(tf.less(en, zero), en + dim, en)
    st = tf.minimum(tf.maximum(st, zero), dim)
    en = tf.minimum(tf.maximum(en, zero), dim)
    begin[a] = st + 1
    size[a] = tf.maximum(en - st, zero)
  end
  return tf.slice(x, tf.concat(begin, 1), tf.concat(size, 1))
end
def("Slice", {starts = any, ends = any, axes = any}, function(_, node, ins)
  local x = ins[1]
  local r = rank_of(x)
  if not node.attrs.starts and (is_sym(ins[2]) or is_sym(ins[3])) then
    return {slice_dynamic(x, ins[2], ins[3], int_list(ins[4], "Slice axes"), int_list(ins[5], "Slice steps"))}
  end
  local starts = node.attrs.starts and node.attrs.starts.value or int_list(ins[2], "Slice starts")
  local ends = node.attrs.ends and node.attrs.ends.value or int_list(ins[3], "Slice ends")
  local axes = node.attrs.axes and node.attrs.axes.value or int_list(ins[4], "Slice axes")
  local steps = int_list(ins[5], "Slice steps")
  local key = {}
  for i = 1, r do key[i] = tf.all end
  local d = dims_of(x)
  for i = 1, #starts do
    local a = axes and norm_axis(axes[i], r) or i
    local st, en, step = starts[i], ends[i], steps and steps[i] or 1
    local n = d[a]
    if n then   -- clamp as ONNX does, then a 1-based inclusive range
      if st < 0 then st = st + n end
      if en < 0 then en = en + n end
      if step > 0 then
        st = math.max(0, math.min(st, n)); en = math.max(0, math.min(en, n))
        if en <= st then key[a] = {1, 0} else key[a] = {st + 1, en, step} end
      else
        st = math.max(-1, math.min(st, n - 1)); en = math.max(-1, math.min(en, n - 1))
        if st <= en then key[a] = {1, 0} else key[a] = {st + 1, en + 2, step} end
      end
    else
      if step ~= 1 then raise("UnimplementedError", "onnx: Slice with step %d over an unknown dimension", step) end
      local lo = st >= 0 and st + 1 or st
      local hi
      if en >= 2 ^ 31 - 1 then hi = nil elseif en > 0 then hi = en elseif en < 0 then hi = en - 1 else hi = 0 end
      key[a] = {lo, hi}
    end
  end
  local empty = false
  for i = 1, r do if type(key[i]) == "table" and key[i][2] == 0 and key[i][1] == 1 and #key[i] == 2 then empty = true end end
  if empty then
    local shp = {}
    for i = 1, r do
      if type(key[i]) == "table" and key[i][2] == 0 and key[i][1] == 1 and #key[i] == 2 then shp[i] = 0
      elseif key[i] == tf.all then shp[i] = d[i] or -1
      else
        local k = key[i]
        shp[i] = #tf.range(k[1], k[2] + (k[3] and k[3] > 0 and 1 or -1), k[3] or 1):totable()
      end
    end
    return {tf.zeros(shp, x.dtype)}
  end
  return {x[key]}
end)
local function gather_index(idx, n)
  if is_sym(idx) or n == nil then
    local one = tf.cast(1, idx.dtype)
    if n ~= nil then return tf.where(tf.less(idx, tf.zeros_like(idx)), idx + (n + 1), idx + one) end
    return idx + one
  end
  return eager(function() return tf.where(tf.less(idx, tf.zeros_like(idx)), idx + (n + 1), idx + 1) end)
end
def("Gather", {axis = any}, function(cx, node, ins)
  local x, idx = ins[1], ins[2]
  local r = rank_of(x)
  local a = norm_axis(node.attrs.axis and node.attrs.axis.value or 0, r)
  local known = cx.shapeinfo[node.inputs[1]]
  if known and not is_sym(idx) then   -- a known dimension out of a partly known shape
    local iv = idx:totable()
    local function dim(i) if i < 0 then i = i + known.n end return known[i + 1] end
    if type(iv) == "number" and dim(iv) then return {const(dim(iv), tf.int64)} end
    if type(iv) == "table" and #idx.shape == 1 then
      local out = {}
      for i, v in ipairs(iv) do out[i] = dim(v); if out[i] == nil then out = nil; break end end
      if out then return {const(out, tf.int64)} end
    end
  end
  local n = dims_of(x)[a]
  if n == nil and not is_sym(idx) then
    for _, v in ipairs(flat_vals(idx)) do
      if v < 0 then
        local xs = tf.cast(tf.shape(x), idx.dtype)[a]
        return {tf.gather(x, tf.where(tf.less(idx, tf.zeros_like(idx)), idx + xs + 1, idx + 1), {axis = a})}
      end
    end
  end
  return {tf.gather(x, gather_index(idx, n), {axis = a})}
end)
-- GatherElements/ScatterElements: the full 1-based coordinates of each
-- element of `idx` into `x` (the index along the node's axis, the position
-- elsewhere), stacked on a last axis for gather_nd / tensor_scatter_nd_*
local function element_coords(op, node, x, idx)
  local r = rank_of(x)
  local a = norm_axis(node.attrs.axis and node.attrs.axis.value or 0, r)
  local dx, di = dims_of(x), dims_of(idx)
  if not all_known(di) or not all_known(dx) then
    raise("UnimplementedError", "onnx: " .. op .. " needs known shapes")
  end
  idx = tf.cast(idx, tf.int64)
  idx = tf.where(tf.less(idx, tf.zeros_like(idx)), idx + dx[a], idx)
  local coords = {}
  for k = 1, r do
    if k == a then coords[k] = idx + 1
    else
      local shp = {}
      for j = 1, r do shp[j] = 1 end
      shp[k] = di[k]
      coords[k] = tf.broadcast_to(tf.reshape(tf.range(1, di[k] + 1, 1, tf.int64), shp), {unpack(di, 1, r)})
    end
  end
  return tf.stack(coords, r + 1)
end
def("GatherElements", {axis = any}, function(_, node, ins)
  return {tf.gather_nd(ins[1], element_coords("GatherElements", node, ins[1], ins[2]))}
end)
def("GatherND", {batch_dims = zero_only}, function(_, _, ins)
  local x, idx = ins[1], ins[2]
  local d = dims_of(x)
  local k = dims_of(idx)
  local m = k[k.n]
  local lim = {}
  for i = 1, m do lim[i] = d[i] end
  idx = tf.cast(idx, tf.int64)
  if all_known(lim) then idx = tf.where(tf.less(idx, tf.zeros_like(idx)), idx + const(lim, tf.int64), idx) end
  return {tf.gather_nd(x, idx + 1)}
end)
local function nd_index(idx, data)   -- ONNX's 0-based (negative from the end) -> luatf's 1-based
  idx = tf.cast(idx, tf.int64)
  local k = dims_of(idx)
  local m = k[k.n]
  local d = dims_of(data)
  local lim = {}
  for i = 1, m do lim[i] = d[i] end
  if m and all_known({n = m, unpack(lim, 1, m)}) then
    idx = tf.where(tf.less(idx, tf.zeros_like(idx)), idx + const(lim, tf.int64), idx)
  end
  return idx + 1
end
def("ScatterND", {reduction = one_of("none", "add")}, function(_, node, ins)
  local red = node.attrs.reduction and node.attrs.reduction.value or "none"
  local f = red == "add" and tf.tensor_scatter_nd_add or tf.tensor_scatter_nd_update
  return {f(ins[1], nd_index(ins[2], ins[1]), ins[3])}
end)
def("ScatterElements", {axis = any, reduction = one_of("none", "add")}, function(_, node, ins)
  local red = node.attrs.reduction and node.attrs.reduction.value or "none"
  local f = red == "add" and tf.tensor_scatter_nd_add or tf.tensor_scatter_nd_update
  return {f(ins[1], element_coords("ScatterElements", node, ins[1], ins[2]), ins[3])}
end)
OPS.Scatter = OPS.ScatterElements   -- its opset 9-10 name
-- Loop: tf.while_loop over (iteration, condition, carried values, one
-- TensorArray per scan output); the body is interpreted as a closure with its
-- inputs bound to the loop variables
def("Loop", {body = SUBGRAPH}, function(cx, node, ins)
  local body = node.attrs.body.value
  local M, c0 = ins[1], ins[2]
  local ncarried = ins.n - 2
  local nscan = #body.outputs - 1 - ncarried
  local vars = {const(0, tf.int64), c0 ~= nil and tf.reshape(tf.cast(c0, tf.bool), {}) or const(true, tf.bool)}
  for k = 1, ncarried do vars[#vars + 1] = ins[2 + k] end
  local probe   -- a scan output's dtype not declared: the body traced once on the initial values (dead code after)
  for k = 1, nscan do
    local o = body.outputs[1 + ncarried + k]
    local dt = DTYPES[o.elem_type] and dtype_of(o.elem_type)
    if not dt then
      if not probe then
        local env = {[body.inputs[1].name] = vars[1]}
        if body.inputs[2] then env[body.inputs[2].name] = vars[2] end
        for j = 1, ncarried do env[body.inputs[2 + j].name] = vars[2 + j] end
        probe = run_subgraph(cx, body, env)
      end
      dt = probe[1 + ncarried + k].dtype
    end
    vars[#vars + 1] = tf.TensorArray{dtype = dt, size = 0, dynamic_size = true}
  end
  local limit = M ~= nil and tf.reshape(tf.cast(M, tf.int64), {}) or nil
  local function cond_fn(i, c)
    if limit ~= nil then return tf.logical_and(c, tf.less(i, limit)) end
    return c
  end
  local function body_fn(i, c, ...)
    local args = table.pack(...)
    local env = {}
    env[body.inputs[1].name] = i
    if body.inputs[2] then env[body.inputs[2].name] = c end
    for k = 1, ncarried do env[body.inputs[2 + k].name] = args[k] end
    local outs = run_subgraph(cx, body, env)
    local new = {i + 1, tf.reshape(tf.cast(outs[1], tf.bool), {})}
    for k = 1, ncarried do new[#new + 1] = tf.cast(outs[1 + k], args[k].dtype) end
    for k = 1, nscan do new[#new + 1] = args[ncarried + k]:write(i + 1, outs[1 + ncarried + k]) end
    return new
  end
  local shape_inv = {{}, {}}
  for k = 1, ncarried do
    local inv = {}
    for d = 1, rank_of(vars[2 + k]) do inv[d] = tf.None end
    shape_inv[2 + k] = inv
  end
  for k = 1, nscan do shape_inv[#shape_inv + 1] = nil end
  local res = tf.while_loop(cond_fn, body_fn, vars, ncarried > 0 and {shape_invariants = shape_inv} or nil)
  local outs = {}
  for k = 1, ncarried do outs[k] = res[2 + k] end
  for k = 1, nscan do outs[ncarried + k] = res[2 + ncarried + k]:stack() end
  return outs
end)
-- If: a constant condition picks its branch while tracing; otherwise tf.cond
-- over the two branches, each interpreted as a closure (outer values visible)
def("If", {then_branch = SUBGRAPH, else_branch = SUBGRAPH}, function(cx, node, ins)
  local c = ins[1]
  local tb, eb = node.attrs.then_branch.value, node.attrs.else_branch.value
  if not is_sym(c) then
    local v = flat_vals(c)[1]
    return run_subgraph(cx, (v == true or v == 1) and tb or eb)
  end
  local function branch(g) return function() return unpack(run_subgraph(cx, g)) end end
  local outs = table.pack(tf.cond(tf.reshape(c, {}), branch(tb), branch(eb)))
  outs.n = nil
  return outs
end)
def("Compress", {axis = any}, function(_, node, ins)
  local x, cond = ins[1], ins[2]
  local a
  if node.attrs.axis then a = norm_axis(node.attrs.axis.value, rank_of(x)) else x = tf.reshape(x, {-1}); a = 1 end
  local idx = tf.reshape(tf.where(tf.cast(cond, tf.bool)), {-1})   -- 1-based positions of the true entries
  return {tf.gather(x, idx, {axis = a})}
end)
def("Shrink", {bias = any, lambd = any}, function(_, node, ins)
  local x = ins[1]
  local b = node.attrs.bias and node.attrs.bias.value or 0
  local l = node.attrs.lambd and node.attrs.lambd.value or 0.5
  local lo, hi = tf.cast(-l, x.dtype), tf.cast(l, x.dtype)
  local zero = tf.zeros_like(x)
  return {tf.where(tf.less(x, lo), x + tf.cast(b, x.dtype), tf.where(tf.greater(x, hi), x - tf.cast(b, x.dtype), zero))}
end)
def("Det", {}, function(_, _, ins) return {tf.linalg.det(ins[1])} end)
def("EyeLike", {dtype = function(v) if not DTYPES[v] then return "dtype " .. (ONNX_TYPE_NAMES[v] or tostring(v)) end end,
                k = any}, function(_, node, ins)
  local x = ins[1]
  local d = dims_of(x)
  if not all_known(d) then raise("UnimplementedError", "onnx: EyeLike needs a known shape") end
  local dt = node.attrs.dtype and dtype_of(node.attrs.dtype.value) or x.dtype
  local k = node.attrs.k and node.attrs.k.value or 0
  local rows = tf.reshape(tf.range(0, d[1], 1, tf.int64), {d[1], 1})
  local cols = tf.reshape(tf.range(0, d[2], 1, tf.int64), {1, d[2]})
  return {tf.cast(tf.equal(cols - rows, tf.cast(k, tf.int64)), dt)}
end)
def("Expand", {}, function(_, _, ins)
  local x, s = ins[1], ins[2]
  if not is_sym(s) then
    local shp = flat_vals(s)
    local d = dims_of(x)
    -- numpy broadcasting of both shapes (a 1 in the target keeps x's dim)
    local r = math.max(#shp, d.n)
    local out = {}
    for i = 1, r do
      local a = shp[#shp - r + i] or 1
      local b = d[d.n - r + i]
      if d.n - r + i < 1 then b = 1 end
      if a == 1 then out[i] = b else out[i] = a end
      if out[i] == nil then out[i] = -1 end
    end
    local known = true
    for i = 1, r do if out[i] == -1 then known = false end end
    if known then return {tf.broadcast_to(x, out)} end
    return {x * tf.ones(tf.shape(x), x.dtype)}
  end
  return {x * tf.ones(tf.cast(s, tf.int32), x.dtype)}
end)
def("Tile", {}, function(_, _, ins) return {tf.tile(ins[1], ins[2])} end)
def("Pad", {mode = one_of("constant", "reflect", "edge"), pads = any, value = any}, function(_, node, ins)
  local x = ins[1]
  local r = rank_of(x)
  local pads = node.attrs.pads and node.attrs.pads.value or int_list(ins[2], "Pad pads")
  local cv = node.attrs.value and node.attrs.value.value or (ins[3] ~= nil and int_list(ins[3], "Pad value")[1]) or 0
  local axes = int_list(ins[4], "Pad axes")
  local p = {}
  for i = 1, r do p[i] = {0, 0} end
  local n = #pads // 2
  for i = 1, n do
    local a = axes and norm_axis(axes[i], r) or i
    p[a] = {pads[i], pads[i + n]}
  end
  for i = 1, r do
    if p[i][1] < 0 or p[i][2] < 0 then raise("UnimplementedError", "onnx: Pad with negative pads") end
  end
  local mode = node.attrs.mode and node.attrs.mode.value or "constant"
  if mode == "constant" then return {tf.pad(x, p, "CONSTANT", cv)} end
  if mode == "reflect" then return {tf.pad(x, p, "REFLECT")} end
  return {tf.pad(x, p, "SYMMETRIC_EDGE")}
end)
def("Constant", {value = any, value_float = any, value_floats = any, value_int = any, value_ints = any,
                 value_string = any, value_strings = any}, function(_, node)
  local at = node.attrs
  if at.value then return {at.value.value} end
  if at.value_float then return {const(at.value_float.value, tf.float32)} end
  if at.value_floats then return {const(at.value_floats.value, tf.float32)} end
  if at.value_int then return {const(at.value_int.value, tf.int64)} end
  if at.value_ints then return {const(at.value_ints.value, tf.int64)} end
  if at.value_string then return {const(at.value_string.value, tf.string)} end
  if at.value_strings then return {const(at.value_strings.value, tf.string)} end
  raise("InvalidArgumentError", "onnx: Constant node without a value")
end)
def("ConstantOfShape", {value = any}, function(_, node, ins)
  local v = node.attrs.value and node.attrs.value.value
  local dt = v and v.dtype or tf.float32
  local x = v and v:totable() or 0
  if type(x) == "table" then x = x[1] end
  local s = ins[1]
  if not is_sym(s) then
    local shp = flat_vals(s)
    return {eager(function() return tf.fill(#shp > 0 and shp or {}, tf.constant(x, dt)) end)}
  end
  return {tf.fill(tf.cast(s, tf.int32), const(x, dt))}
end)
def("Range", {}, function(_, _, ins)
  local a, b, c = ins[1], ins[2], ins[3]
  return {tf.range(a, b, c, a.dtype)}
end)
def("Dropout", {seed = any, ratio = any}, function(_, node, ins)
  local x = ins[1]
  if ins[3] ~= nil and (is_sym(ins[3]) or ins[3]:totable() ~= false) then
    raise("UnimplementedError", "onnx: Dropout in training mode")
  end
  if #node.outputs > 1 and node.outputs[2] ~= "" then return {x, tf.ones(tf.shape(x), tf.bool)} end
  return {x}
end)
LAYOUT_FREE.Dropout = true
def("OneHot", {axis = any}, function(_, node, ins)
  local idx, depth, values = ins[1], ins[2], ins[3]
  local n = int_list(depth, "OneHot depth")[1]
  n = math.floor(n)
  local r = rank_of(idx) + 1
  local a = norm_axis(node.attrs.axis and node.attrs.axis.value or -1, r)
  idx = tf.cast(idx, tf.int64)
  idx = tf.where(tf.less(idx, tf.zeros_like(idx)), idx + n, idx)
  local oh = tf.one_hot(idx + 1, n, {axis = a, dtype = values.dtype})
  local off, on = values[1], values[2]
  return {oh * (on - off) + off}
end)
def("TopK", {axis = any, largest = any, sorted = one_of(1)}, function(_, node, ins)
  local x = ins[1]
  local smallest = node.attrs.largest and node.attrs.largest.value == 0
  if smallest then x = -x end
  local r = rank_of(x)
  local a = norm_axis(node.attrs.axis and node.attrs.axis.value or -1, r)
  local k = int_list(ins[2], "TopK k")[1]
  local perm
  if a ~= r then
    perm = {}
    for i = 1, r do perm[i] = i end
    perm[a], perm[r] = r, a
    x = tf.transpose(x, perm)
  end
  local v, i = tf.math.top_k(x, k)
  if smallest then v = -v end
  i = tf.cast(i, tf.int64) - 1
  if perm then v, i = tf.transpose(v, perm), tf.transpose(i, perm) end
  return {v, i}
end)
def("Trilu", {upper = any}, function(_, node, ins)
  local x = ins[1]
  local k = ins[2] or 0
  if type(k) ~= "number" then k = tf.cast(tf.reshape(k, {}), tf.int64) end
  local d = dims_of(x)
  local n, m = d[d.n - 1], d[d.n]
  local upper = not node.attrs.upper or node.attrs.upper.value ~= 0
  local rows = tf.reshape(tf.range(0, n, 1, tf.int64), {n, 1})
  local cols = tf.reshape(tf.range(0, m, 1, tf.int64), {1, m})
  local keep = upper and tf.greater_equal(cols - rows, k) or tf.less_equal(cols - rows, k)
  return {tf.where(keep, x, tf.zeros_like(x))}
end)
def("DepthToSpace", {blocksize = any, mode = one_of("DCR", "CRD")}, function(_, node, ins)
  local x = ins[1]
  local b = node.attrs.blocksize.value
  local d = dims_of(x)
  local n, c, h, w = d[1] or -1, d[2], d[3], d[4]
  local mode = node.attrs.mode and node.attrs.mode.value or "DCR"
  if mode == "DCR" then
    local t = tf.reshape(x, {n, b, b, c // (b * b), h, w})
    t = tf.transpose(t, {1, 4, 5, 2, 6, 3})
    return {tf.reshape(t, {n, c // (b * b), h * b, w * b})}
  end
  local t = tf.reshape(x, {n, c // (b * b), b, b, h, w})
  t = tf.transpose(t, {1, 2, 5, 3, 6, 4})
  return {tf.reshape(t, {n, c // (b * b), h * b, w * b})}
end)
def("SpaceToDepth", {blocksize = any}, function(_, node, ins)
  local x = ins[1]
  local b = node.attrs.blocksize.value
  local d = dims_of(x)
  local n, c, h, w = d[1] or -1, d[2], d[3], d[4]
  local t = tf.reshape(x, {n, c, h // b, b, w // b, b})
  t = tf.transpose(t, {1, 4, 6, 2, 3, 5})
  return {tf.reshape(t, {n, c * b * b, h // b, w // b})}
end)
-- }====

-- {==== convolutions, pools, normalization (NHWC inside)
local TO_NHWC, TO_NCHW = {1, 3, 4, 2}, {1, 4, 2, 3}

local function spatial_pads(node, nsp)
  local at = node.attrs
  local auto = at.auto_pad and at.auto_pad.value or "NOTSET"
  if auto == "SAME_UPPER" then return "SAME" end
  if auto == "VALID" then return "VALID" end
  if auto == "SAME_LOWER" then return "SAME_LOWER" end
  local pads = at.pads and at.pads.value
  local p = {}
  for i = 1, nsp do p[i] = {pads and pads[i] or 0, pads and pads[i + nsp] or 0} end
  return p
end
-- SAME_LOWER: the extra padding goes first; needs the spatial size
local function same_lower(xd, k, s, dl)
  local p = {}
  for i = 1, #k do
    local n = xd[i]
    if n == nil then raise("UnimplementedError", "onnx: auto_pad SAME_LOWER over an unknown spatial size") end
    local o = math.ceil(n / s[i])
    local total = math.max(0, (o - 1) * s[i] + (k[i] - 1) * (dl and dl[i] or 1) + 1 - n)
    p[i] = {total - total // 2, total // 2}
  end
  return p
end
local function is_zero_pad(p)
  if type(p) ~= "table" then return false end
  for _, q in ipairs(p) do if q[1] ~= 0 or q[2] ~= 0 then return false end end
  return true
end

local function conv_attrs()
  return {auto_pad = one_of("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"), dilations = any, group = any,
          kernel_shape = any, pads = any, strides = any}
end
-- OIHW -> HWIO; depthwise (C*M, 1, kh, kw) -> (kh, kw, C, M). A constant
-- goes through core.internal.onnx_hwio (bindings/onnx.c: a blocked copy).
local function hwio_filter(t)
  if not is_sym(t) and (t.dtype == tf.float32 or t.dtype == tf.float64) then return tf.core.internal.onnx_hwio(t) end
  return tf.transpose(t, {3, 4, 2, 1})
end
local function dw_filter(t, g)
  local d = dims_of(t)
  return tf.reshape(hwio_filter(t), {d[3], d[4], g, d[1] // g})
end
M.hwio_filter, M.dw_filter = hwio_filter, dw_filter
def("Conv", conv_attrs(), function(cx, node, ins)
  local w, b = ins[2], ins[3]
  local wd = cx.prepped[node.inputs[2]] and cx.prepped[node.inputs[2]] or dims_of(w)   -- OIHW dims
  local nsp = #wd - 2
  if nsp ~= 2 and nsp ~= 1 then raise("UnimplementedError", "onnx: Conv over %d spatial dimensions", nsp) end
  local at = node.attrs
  local strides = at.strides and at.strides.value or {1, 1}
  local dil = at.dilations and at.dilations.value or {1, 1}
  local g = at.group and at.group.value or 1
  local x
  if nsp == 1 then
    x = tf.expand_dims(cx:get_nhwc(node.inputs[1], 3), 2)   -- (N, 1, W, C)
    w = tf.expand_dims(w, 3)
    wd = dims_of(w)
    strides, dil = {1, strides[1]}, {1, dil[1]}
  else
    x = cx:get_nhwc(node.inputs[1], 4)
  end
  local pad = spatial_pads(node, nsp)
  if nsp == 1 and type(pad) == "table" then pad = {{0, 0}, pad[1]} end
  local xd = dims_of(x)
  if pad == "SAME_LOWER" then pad = same_lower({xd[2], xd[3]}, {wd[3], wd[4]}, strides, dil) end
  local cin = xd[4]
  local cout = wd[1]
  local y
  local conv_pad = pad
  if type(pad) == "table" then
    conv_pad = is_zero_pad(pad) and "VALID" or {{0, 0}, pad[1], pad[2], {0, 0}}
  end
  if g > 1 and cin and g == cin and wd[2] == 1 then
    -- depthwise: OIHW (C*M, 1, kh, kw) -> (kh, kw, C, M)
    local m = cout // g
    local f = cx.prepped[node.inputs[2]] and w or cx:weight(w, function(t) return dw_filter(t, g) end)
    if type(conv_pad) == "table" then
      x = tf.pad(x, conv_pad)
      conv_pad = "VALID"
    end
    y = tf.nn.depthwise_conv2d(x, f, {1, strides[1], strides[2], 1}, conv_pad, {dilations = dil})
  else
    local f = cx.prepped[node.inputs[2]] and w or cx:weight(w, hwio_filter)
    y = tf.nn.conv2d(x, f, strides, conv_pad, {dilations = dil})
  end
  if b ~= nil then y = y + b end
  if nsp == 1 then return {tf.transpose(tf.squeeze(y, {2}), {1, 3, 2})} end
  return {y}, "NHWC"
end)

def("ConvTranspose", {auto_pad = one_of("NOTSET", "VALID"), dilations = ones_only, group = one_of(1),
                      kernel_shape = any, output_padding = any, output_shape = any, pads = any, strides = any},
    function(cx, node, ins)
  local w, b = ins[2], ins[3]
  local wd = dims_of(w)
  if wd.n ~= 4 then raise("UnimplementedError", "onnx: ConvTranspose over %d spatial dimensions", wd.n - 2) end
  local at = node.attrs
  local x = cx:get_nhwc(node.inputs[1], 4)
  local xd = dims_of(x)
  if xd[2] == nil or xd[3] == nil then raise("UnimplementedError", "onnx: ConvTranspose over an unknown spatial size") end
  local s = at.strides and at.strides.value or {1, 1}
  local op = at.output_padding and at.output_padding.value or {0, 0}
  local pads = at.pads and at.pads.value or {0, 0, 0, 0}
  local k = {wd[3], wd[4]}
  local full = {(xd[2] - 1) * s[1] + k[1], (xd[3] - 1) * s[2] + k[2]}
  local total = {full[1] + op[1], full[2] + op[2]}
  if at.output_shape then
    -- pads from the requested size (ONNX's rule for auto_pad NOTSET: the odd one at the start);
    -- a size past the full output grows it with zeros at the end
    local o = at.output_shape.value
    o = {o[#o - 1], o[#o]}
    for i = 1, 2 do
      local t = total[i] - o[i]
      if t >= 0 then pads[i], pads[i + 2] = t - t // 2, t // 2
      else pads[i], pads[i + 2] = 0, 0; op[i] = op[i] - t; total[i] = total[i] - t end
    end
  end
  local f = cx:weight(w, function(t) return tf.transpose(t, {3, 4, 2, 1}) end)   -- (Cin, Cout, kh, kw) -> (kh, kw, Cout, Cin)
  local n = xd[1] or -1
  local y = tf.nn.conv2d_transpose(x, f, n == -1 and tf.stack({tf.shape(x)[1], full[1], full[2], wd[2]}) or
                                   {n, full[1], full[2], wd[2]}, {1, s[1], s[2], 1}, "VALID")
  if op[1] > 0 or op[2] > 0 then y = tf.pad(y, {{0, 0}, {0, op[1]}, {0, op[2]}, {0, 0}}) end
  y = y[{tf.all, {pads[1] + 1, total[1] - pads[3]}, {pads[2] + 1, total[2] - pads[4]}, tf.all}]
  if b ~= nil then y = y + b end
  return {y}, "NHWC"
end)

local function pool_attrs(extra)
  local a = {auto_pad = one_of("NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"), kernel_shape = any, pads = any,
             strides = any, ceil_mode = zero_only, dilations = ones_only, storage_order = zero_only}
  for k, v in pairs(extra or {}) do a[k] = v end
  return a
end
local function pool_def(name, is_max)
  def(name, pool_attrs(is_max and {ceil_mode = any} or {count_include_pad = any}), function(cx, node, ins)
    local at = node.attrs
    local k = at.kernel_shape.value
    local nsp = #k
    if nsp ~= 2 and nsp ~= 1 then raise("UnimplementedError", "onnx: %s over %d spatial dimensions", name, nsp) end
    if #node.outputs > 1 and node.outputs[2] ~= "" then
      raise("UnimplementedError", "onnx: MaxPool's Indices output")
    end
    local strides = at.strides and at.strides.value or {1, 1}
    local x
    if nsp == 1 then
      x = tf.expand_dims(cx:get_nhwc(node.inputs[1], 3), 2)
      k, strides = {1, k[1]}, {1, strides[1]}
    else
      x = cx:get_nhwc(node.inputs[1], 4)
    end
    local pad = spatial_pads(node, nsp)
    if nsp == 1 and type(pad) == "table" then pad = {{0, 0}, pad[1]} end
    local xd = dims_of(x)
    if pad == "SAME_LOWER" then pad = same_lower({xd[2], xd[3]}, k, strides) end
    if at.ceil_mode and at.ceil_mode.value ~= 0 then
      -- ceil_mode: the end padding grown so that the last partial window counts
      if type(pad) ~= "table" then raise("UnimplementedError", "onnx: %s ceil_mode with auto_pad", name) end
      for i = 1, 2 do
        local n = xd[i + 1]
        if n == nil then raise("UnimplementedError", "onnx: %s ceil_mode over an unknown spatial size", name) end
        local p0, p1 = pad[i][1], pad[i][2]
        local out = math.ceil((n + p0 + p1 - k[i]) / strides[i]) + 1
        if (out - 1) * strides[i] >= n + p0 then out = out - 1 end   -- no window starts in the end padding
        local need = (out - 1) * strides[i] + k[i] - (n + p0 + p1)
        if need > 0 then pad[i] = {p0, p1 + need} end
      end
    end
    local ksize = {1, k[1], k[2], 1}
    local st = {1, strides[1], strides[2], 1}
    local y
    if is_max then
      local p = pad
      if type(pad) == "table" then p = is_zero_pad(pad) and "VALID" or {{0, 0}, pad[1], pad[2], {0, 0}} end
      y = tf.nn.max_pool2d(x, ksize, st, p)
    elseif type(pad) ~= "table" or is_zero_pad(pad) then
      if pad == "SAME" and not (at.count_include_pad and at.count_include_pad.value ~= 0) then
        y = tf.nn.avg_pool2d(x, ksize, st, "SAME")
      elseif pad == "SAME" then
        raise("UnimplementedError", "onnx: AveragePool with auto_pad SAME and count_include_pad")
      else
        y = tf.nn.avg_pool2d(x, ksize, st, "VALID")
      end
    else
      local p4 = {{0, 0}, pad[1], pad[2], {0, 0}}
      local xp = tf.pad(x, p4)
      y = tf.nn.avg_pool2d(xp, ksize, st, "VALID")
      if not (at.count_include_pad and at.count_include_pad.value ~= 0) then
        local d = dims_of(x)
        local ones = tf.pad(tf.ones({1, d[2], d[3], 1}, x.dtype), p4)
        y = y / tf.nn.avg_pool2d(ones, ksize, st, "VALID")
      end
    end
    if nsp == 1 then return {tf.transpose(tf.squeeze(y, {2}), {1, 3, 2})} end
    return {y}, "NHWC"
  end)
end
pool_def("MaxPool", true)
pool_def("AveragePool", false)
local function global_pool(name, f)
  def(name, {}, function(cx, node, ins)
    local r = rank_of(ins[1])
    if r == 4 then
      return {f(cx:get_nhwc(node.inputs[1], 4), {2, 3})}, "NHWC"
    end
    local ax = {}
    for i = 3, r do ax[#ax + 1] = i end
    return {f(ins[1], ax)}
  end)
end
global_pool("GlobalAveragePool", function(x, ax) return tf.reduce_mean(x, ax, true) end)
global_pool("GlobalMaxPool", function(x, ax) return tf.reduce_max(x, ax, true) end)

def("BatchNormalization", {epsilon = any, momentum = any, training_mode = zero_only, spatial = one_of(1)},
    function(cx, node, ins)
  local eps = node.attrs.epsilon and node.attrs.epsilon.value or 1e-5
  local scale, bias, mean, var = ins[2], ins[3], ins[4], ins[5]
  local a, b
  local function fold()
    local aa = scale / tf.sqrt(var + tf.cast(eps, var.dtype))
    return aa, bias - mean * aa
  end
  if all_const({scale, bias, mean, var, n = 4}) then a, b = eager(fold) else a, b = fold() end
  local r = rank_of(ins[1])
  if r == 4 then
    local x = cx:get_nhwc(node.inputs[1], 4)
    return {x * a + b}, "NHWC"
  end
  local x = ins[1]
  return {x * channel_vec(a, r, 2) + channel_vec(b, r, 2)}
end)
-- Resize / Upsample of a 4-d NCHW input by constant scales or sizes (height
-- and width only): nearest neighbour at integer factors where ONNX's
-- coordinates make it a repeat, linear with half-pixel centres
-- (tf.image.resize's bilinear); anything else is refused
local function resize(cx, node, ins, scales, sizes)
  local at = node.attrs
  local mode = at.mode and at.mode.value or "nearest"
  local ctm = at.coordinate_transformation_mode and at.coordinate_transformation_mode.value or "half_pixel"
  local nm = at.nearest_mode and at.nearest_mode.value or "round_prefer_floor"
  local x = ins[1]
  local d = dims_of(x)
  if d.n ~= 4 then raise("UnimplementedError", "onnx: %s of a %d-d input", node.op_type, d.n) end
  if d[3] == nil or d[4] == nil then raise("UnimplementedError", "onnx: %s over an unknown spatial size", node.op_type) end
  local oh, ow
  if sizes then
    if sizes[1] ~= d[1] and d[1] ~= nil or sizes[2] ~= d[2] then raise("UnimplementedError", "onnx: %s of the batch or channels", node.op_type) end
    oh, ow = sizes[3], sizes[4]
  else
    if scales[1] ~= 1 or scales[2] ~= 1 then raise("UnimplementedError", "onnx: %s of the batch or channels", node.op_type) end
    oh, ow = math.floor(d[3] * scales[3]), math.floor(d[4] * scales[4])
  end
  local xh = cx:get_nhwc(node.inputs[1], 4)
  if mode == "nearest" then
    local fh, fw = oh // d[3], ow // d[4]
    local repeat_ok = fh * d[3] == oh and fw * d[4] == ow and fh >= 1 and fw >= 1 and
      (((ctm == "half_pixel" or ctm == "pytorch_half_pixel") and nm:match("^round")) or (ctm == "asymmetric" and nm == "floor"))
    if not repeat_ok then
      raise("UnimplementedError", "onnx: %s nearest %s/%s from %dx%d to %dx%d", node.op_type, ctm, nm, d[3], d[4], oh, ow)
    end
    local n = d[1] or -1
    local y = tf.reshape(xh, {n, d[3], 1, d[4], 1, d[2]})
    y = y * tf.ones({1, 1, fh, 1, fw, 1}, x.dtype)
    return {tf.reshape(y, {n, oh, ow, d[2]})}, "NHWC"
  end
  if mode == "linear" and (ctm == "half_pixel" or (ctm == "pytorch_half_pixel" and oh > 1 and ow > 1)) then
    return {tf.image.resize(xh, {oh, ow}, {method = "bilinear"})}, "NHWC"
  end
  raise("UnimplementedError", "onnx: %s mode %s with coordinate_transformation_mode %s", node.op_type, mode, ctm)
end
local RESIZE_ATTRS = {mode = one_of("nearest", "linear"), coordinate_transformation_mode = any, nearest_mode = any,
                      cubic_coeff_a = any, exclude_outside = zero_only, extrapolation_value = any}
def("Resize", RESIZE_ATTRS, function(cx, node, ins)
  local scales, sizes
  if ins[4] ~= nil then sizes = int_list(ins[4], "Resize sizes")
  elseif ins[3] ~= nil then scales = int_list(ins[3], "Resize scales")
  elseif ins[2] ~= nil and cx.opset < 11 then scales = int_list(ins[2], "Resize scales") end
  if (sizes == nil or #sizes == 0) and (scales == nil or #scales == 0) then
    raise("UnimplementedError", "onnx: Resize without scales or sizes")
  end
  if sizes and #sizes == 0 then sizes = nil end
  return resize(cx, node, ins, scales, sizes)
end)
def("Upsample", {mode = one_of("nearest", "linear"), scales = any}, function(cx, node, ins)
  local scales = node.attrs.scales and node.attrs.scales.value or int_list(ins[2], "Upsample scales")
  return resize(cx, node, ins, scales, nil)
end)
LAYOUT_FREE.Resize, LAYOUT_FREE.Upsample = nil, nil
def("InstanceNormalization", {epsilon = any}, function(_, node, ins)
  local x, s, b = ins[1], ins[2], ins[3]
  local eps = node.attrs.epsilon and node.attrs.epsilon.value or 1e-5
  local r = rank_of(x)
  local ax = {}
  for i = 3, r do ax[#ax + 1] = i end
  local mean, var = tf.nn.moments(x, ax, {keepdims = true})
  return {(x - mean) / tf.sqrt(var + eps) * channel_vec(s, r, 2) + channel_vec(b, r, 2)}
end)
def("LayerNormalization", {axis = any, epsilon = any, stash_type = one_of(1)}, function(_, node, ins)
  local x, s, b = ins[1], ins[2], ins[3]
  local eps = node.attrs.epsilon and node.attrs.epsilon.value or 1e-5
  local r = rank_of(x)
  local a = norm_axis(node.attrs.axis and node.attrs.axis.value or -1, r)
  local ax = {}
  for i = a, r do ax[#ax + 1] = i end
  local mean, var = tf.nn.moments(x, ax, {keepdims = true})
  local inv = tf.math.rsqrt and tf.math.rsqrt(var + eps) or 1 / tf.sqrt(var + eps)
  local y = (x - mean) * inv * s
  if b ~= nil then y = y + b end
  local outs = {y}
  if #node.outputs > 1 then outs[2] = mean end
  if #node.outputs > 2 then outs[3] = inv end
  return outs
end)
def("LRN", {alpha = any, beta = any, bias = any, size = any}, function(_, node, ins)
  local x = ins[1]
  local at = node.attrs
  local alpha = at.alpha and at.alpha.value or 1e-4
  local beta = at.beta and at.beta.value or 0.75
  local bias = at.bias and at.bias.value or 1.0
  local n = at.size.value
  local sq = x * x
  local r = rank_of(x)
  local p = {}
  for i = 1, r do p[i] = {0, 0} end
  p[2] = {(n - 1) // 2, n - 1 - (n - 1) // 2}
  local sp = tf.pad(sq, p)
  local c = dims_of(x)[2]
  local acc
  for i = 1, n do
    local key = {}
    for j = 1, r do key[j] = tf.all end
    key[2] = {i, i + c - 1}
    acc = acc and acc + sp[key] or sp[key]
  end
  return {x / tf.pow(acc * (alpha / n) + bias, tf.cast(beta, x.dtype))}
end)
-- }====

-- {==== recurrent layers: one fused op per direction
-- ONNX LSTM: W (dirs, 4H, I) gates i, o, f, c; R (dirs, 4H, H); B (dirs, 8H) Wb then Rb.
-- luatf lstm_sequence: kernel (I, 4H) gates i, f, c, o; recurrent (H, 4H); bias (4H).
local function gate_cols(t, order, h)   -- t (rows, k*H) in ONNX gate order -> luatf order
  local parts = {}
  for i, g in ipairs(order) do parts[i] = t[{tf.all, {g * h + 1, (g + 1) * h}}] end
  return tf.concat(parts, 2)
end
local RNN_ATTRS = {activation_alpha = any, activation_beta = any, hidden_size = any,
                   clip = function(v) return sfmt("value %g", v) end,
                   direction = one_of("forward", "reverse", "bidirectional"), layout = one_of(0, 1),
                   input_forget = zero_only, linear_before_reset = any,
                   -- only the defaults (the fused ops' activations), per direction
                   activations = function(v, node)
                     local want = ({LSTM = {"Sigmoid", "Tanh", "Tanh"}, GRU = {"Sigmoid", "Tanh"}, RNN = {"Tanh"}})[node.op_type]
                     for i, a in ipairs(v) do
                       if a ~= want[(i - 1) % #want + 1] then return "value " .. table.concat(v, ",") end
                     end
                   end}
-- layout = 1 (batch first): inputs to ONNX's default layout, outputs back
local function batch_first_in(ins, layout)
  if layout ~= 1 then return ins end
  local t = {n = ins.n}
  for i = 1, ins.n do t[i] = ins[i] end
  t[1] = tf.transpose(ins[1], {2, 1, 3})                       -- (batch, seq, in) -> (seq, batch, in)
  if t[6] ~= nil then t[6] = tf.transpose(ins[6], {2, 1, 3}) end   -- (batch, dirs, H) -> (dirs, batch, H)
  if t[7] ~= nil then t[7] = tf.transpose(ins[7], {2, 1, 3}) end
  return t
end
local function batch_first_out(outs, layout)
  if layout ~= 1 then return outs end
  local t = {tf.transpose(outs[1], {3, 1, 2, 4})}               -- (seq, dirs, batch, H) -> (batch, seq, dirs, H)
  for i = 2, #outs do t[i] = tf.transpose(outs[i], {2, 1, 3}) end
  return t
end
local function rnn_def(name, ngates, onnx_order)
  def(name, RNN_ATTRS, function(_, node, ins)
    local at = node.attrs
    if at.clip then raise("UnimplementedError", "onnx: %s attribute 'clip'", name) end
    if at.activations then
      local want = ngates == 4 and {"Sigmoid", "Tanh", "Tanh"} or {"Sigmoid", "Tanh"}
      for i, a in ipairs(at.activations.value) do
        if a ~= want[(i - 1) % #want + 1] then
          raise("UnimplementedError", "onnx: %s activations %s", name, table.concat(at.activations.value, ","))
        end
      end
    end
    local layout = at.layout and at.layout.value or 0
    ins = batch_first_in(ins, layout)
    local x, W, R, B, seq_lens, h0, c0 = ins[1], ins[2], ins[3], ins[4], ins[5], ins[6], ins[7]
    if seq_lens ~= nil then raise("UnimplementedError", "onnx: %s sequence_lens", name) end
    local H = at.hidden_size and at.hidden_size.value or dims_of(R)[3]
    local dir = at.direction and at.direction.value or "forward"
    local ndir = dir == "bidirectional" and 2 or 1
    local lbr = at.linear_before_reset and at.linear_before_reset.value ~= 0
    local xb = tf.transpose(x, {2, 1, 3})   -- (seq, batch, in) -> (batch, seq, in)
    local batch = tf.shape(xb)[{{1, 1}}]
    local ys, hs, cs = {}, {}, {}
    for d = 1, ndir do
      local k = gate_cols(tf.transpose(W[d], {2, 1}), onnx_order, H)
      local rk = gate_cols(tf.transpose(R[d], {2, 1}), onnx_order, H)
      local wb, rb
      if B ~= nil then
        wb = gate_cols(tf.reshape(B[d][{{1, ngates * H}}], {1, -1}), onnx_order, H)
        rb = gate_cols(tf.reshape(B[d][{{ngates * H + 1, 2 * ngates * H}}], {1, -1}), onnx_order, H)
      else
        wb = tf.zeros({1, ngates * H}, x.dtype)
        rb = wb
      end
      local hz = h0 ~= nil and h0[d] or tf.zeros(tf.concat({batch, tf.constant({H})}, 1), x.dtype)
      local back = dir == "reverse" or d == 2
      local y, h, c
      if ngates == 4 then
        local cz = c0 ~= nil and c0[d] or hz * 0
        if #node.inputs >= 8 and node.inputs[8] ~= "" then raise("UnimplementedError", "onnx: LSTM peepholes") end
        y, h, c = tf.nn.lstm_sequence(xb, hz, cz, k, rk, tf.reshape(wb + rb, {-1}), {go_backwards = back})
      else
        local bias = lbr and tf.concat({wb, rb}, 1) or tf.reshape(wb + rb, {-1})
        if not lbr then
          -- without reset_after the recurrent bias of the candidate cannot be split off: only zero is exact
          bias = tf.reshape(wb + rb, {-1})
        end
        y, h = tf.nn.gru_sequence(xb, hz, k, rk, bias, {go_backwards = back, reset_after = lbr and true or false})
      end
      if back then y = tf.reverse(y, {2}) end
      ys[d] = tf.expand_dims(tf.transpose(y, {2, 1, 3}), 2)   -- (seq, 1, batch, H)
      hs[d] = tf.expand_dims(h, 1)
      if c then cs[d] = tf.expand_dims(c, 1) end
    end
    local Y = ndir == 1 and ys[1] or tf.concat(ys, 2)
    local Yh = ndir == 1 and hs[1] or tf.concat(hs, 1)
    local outs = {Y, Yh}
    if ngates == 4 then outs[3] = ndir == 1 and cs[1] or tf.concat(cs, 1) end
    return batch_first_out(outs, layout)
  end)
end
def("RNN", RNN_ATTRS, function(_, node, ins)
  local at = node.attrs
  if at.clip then raise("UnimplementedError", "onnx: RNN attribute 'clip'") end
  if at.activations then
    for _, a in ipairs(at.activations.value) do
      if a ~= "Tanh" then raise("UnimplementedError", "onnx: RNN activation %s", a) end
    end
  end
  local layout = at.layout and at.layout.value or 0
  ins = batch_first_in(ins, layout)
  local x, W, R, B, seq_lens, h0 = ins[1], ins[2], ins[3], ins[4], ins[5], ins[6]
  if seq_lens ~= nil then raise("UnimplementedError", "onnx: RNN sequence_lens") end
  local T = dims_of(x)[1]
  if T == nil then raise("UnimplementedError", "onnx: RNN over a sequence of unknown length") end
  local dir = at.direction and at.direction.value or "forward"
  local ndir = dir == "bidirectional" and 2 or 1
  local H = at.hidden_size and at.hidden_size.value or dims_of(R)[3]
  local ys, hs = {}, {}
  for d = 1, ndir do
    local w, r = tf.transpose(W[d], {2, 1}), tf.transpose(R[d], {2, 1})
    local b = B ~= nil and (B[d][{{1, H}}] + B[d][{{H + 1, 2 * H}}]) or tf.zeros({H}, x.dtype)
    local h = h0 ~= nil and h0[d] or tf.zeros(tf.stack({tf.shape(x)[2], H}), x.dtype)
    local back = dir == "reverse" or d == 2
    local out = {}
    for step = 1, T do
      local t = back and (T - step + 1) or step
      h = tf.tanh(tf.matmul(x[t], w) + tf.matmul(h, r) + b)
      out[t] = h
    end
    ys[d] = tf.expand_dims(tf.stack(out, 1), 2)   -- (seq, 1, batch, H)
    hs[d] = tf.expand_dims(h, 1)
  end
  return batch_first_out({ndir == 1 and ys[1] or tf.concat(ys, 2), ndir == 1 and hs[1] or tf.concat(hs, 1)}, layout)
end)
rnn_def("LSTM", 4, {0, 2, 3, 1})   -- luatf i, f, c, o from ONNX i(0), o(1), f(2), c(3)
rnn_def("GRU", 3, {0, 1, 2})       -- z, r, h in both
-- inputs the fused ops have no form for, refused with the rest at load time
local function rnn_inputs(node)
  local p = {}
  if node.inputs[5] and node.inputs[5] ~= "" then p[#p + 1] = "input sequence_lens" end
  if node.op_type == "LSTM" and node.inputs[8] and node.inputs[8] ~= "" then p[#p + 1] = "input P (peepholes)" end
  if #p > 0 then return table.concat(p, ", ") end
end
OPS.LSTM.check_node, OPS.GRU.check_node, OPS.RNN.check_node = rnn_inputs, rnn_inputs, rnn_inputs
-- }====

--- The operators the importer knows: a sorted list of names.
function M.supported_ops()
  local t = {}
  for k in pairs(OPS) do t[#t + 1] = k end
  table.sort(t)
  return t
end

-- Everything in the model luatf cannot import, as one list of lines.
local function problems(model)
  local out, seen = {}, {}
  local function add(s) if not seen[s] then seen[s] = true; out[#out + 1] = s end end
  for dom, v in pairs(model.opsets) do
    if dom ~= "" and dom ~= "ai.onnx" then add(sfmt("operator set '%s' (version %d)", dom, v)) end
  end
  if model.nfunctions > 0 then add("model-local functions") end
  local g = model.graph
  if g.sparse_initializers then add("sparse initializers") end
  local inits = {}
  for _, e in ipairs(g.initializers) do inits[e[1]] = true end
  for _, v in ipairs(g.inputs) do
    if not inits[v.name] and not DTYPES[v.elem_type] then
      add(sfmt("input '%s' of type %s", v.name, v.elem_type == -1 and "non-tensor" or (ONNX_TYPE_NAMES[v.elem_type] or v.elem_type)))
    end
  end
  for _, v in ipairs(g.outputs) do
    if v.elem_type ~= 0 and not DTYPES[v.elem_type] then
      add(sfmt("output '%s' of type %s", v.name, v.elem_type == -1 and "non-tensor" or (ONNX_TYPE_NAMES[v.elem_type] or v.elem_type)))
    end
  end
  local function walk(nodes)
    for _, node in ipairs(nodes) do
      local op = node.op_type
      local spec = OPS[op]
      if node.domain ~= "" and node.domain ~= "ai.onnx" then
        add(sfmt("operator %s of domain '%s'", op, node.domain))
      elseif not spec then
        add(sfmt("operator %s", op))
      else
        if spec.check_node then
          local p = spec.check_node(node)
          if p then add(sfmt("%s %s", op, p)) end
        end
        for an, a in pairs(node.attrs) do
          local check = spec.attrs[an]
          if check == nil then
            add(sfmt("%s attribute '%s'", op, an))
          elseif a.type == "GRAPH" and check == SUBGRAPH and a.value then
            walk(a.value.nodes)   -- a branch: its operators are checked as the graph's
            if a.value.sparse_initializers then add("sparse initializers") end
          elseif a.type == "REF" or a.type == "GRAPH" or a.type == "GRAPHS" or a.type:find("SPARSE") or a.type:find("TYPE_PROTO") then
            add(sfmt("%s attribute '%s' of type %s", op, an, a.type))
          else
            local p = check(a.value, node)
            if p then add(sfmt("%s attribute '%s' %s", op, an, p)) end
          end
        end
      end
    end
  end
  walk(g.nodes)
  return out
end

-- the interpreter's state during a trace
local CX = {}
CX.__index = CX
function CX:get(name)
  if name == nil or name == "" then return nil end
  local v = self.env[name]
  if v == nil then raise("InvalidArgumentError", "onnx: value '%s' is used before it is computed", name) end
  if self.layout[name] == "NHWC" then
    local c = self.nchw[name]
    if not c then
      c = tf.transpose(v, TO_NCHW)
      self.nchw[name] = c
    end
    return c
  end
  return v
end
-- a rank-r value (4 for 2-d spatial, 3 for 1-d) in channels-last layout
function CX:get_nhwc(name, r)
  local v = self.env[name]
  if self.layout[name] == "NHWC" then return v end
  if r == 3 then return tf.transpose(v, {1, 3, 2}) end
  local c = self.nhwc[name]
  if not c then
    c = tf.transpose(v, TO_NHWC)
    self.nhwc[name] = c
  end
  return c
end
-- a weight rearranged once: eagerly for a constant (the original is dropped with the model)
function CX:weight(w, f)
  if is_sym(w) then return f(w) end
  return eager(f, w)
end

local NO_FOLD = {Conv = true, ConvTranspose = true, Resize = true, Upsample = true, MaxPool = true, AveragePool = true, BatchNormalization = true, LSTM = true,
                 GRU = true, GlobalAveragePool = true, GlobalMaxPool = true}   -- inputs seen NHWC, or big
local function run_node(cx, node)
  local spec = OPS[node.op_type]
  local ins = {n = #node.inputs}
  local lay = LAYOUT_FREE[node.op_type]
  local nhwc_in = false
  if lay then
    -- keep channels-last when every 4-d input is channels-last and the others broadcast trivially
    local any_nhwc, ok = false, true
    for i, nm in ipairs(node.inputs) do
      if nm ~= "" then
        if cx.layout[nm] == "NHWC" then any_nhwc = true
        else
          -- a scalar, or a constant of rank <= 4 (a per-channel (C, 1, 1) bias): rearranged to match
          local v = cx.env[nm]
          if v ~= nil and not (rank_of(v) == 0 or (rank_of(v) <= 4 and not is_sym(v))) then ok = false end
        end
      end
    end
    nhwc_in = any_nhwc and ok
  end
  for i, nm in ipairs(node.inputs) do
    if nm ~= "" then
      if nhwc_in then
        local v = cx.env[nm]
        if cx.layout[nm] ~= "NHWC" and rank_of(v) > 0 then
          v = eager(function()
            local d = dims_of(v)
            local shp = {}
            for j = 1, 4 - d.n do shp[#shp + 1] = 1 end
            for j = 1, d.n do shp[#shp + 1] = d[j] end
            return tf.transpose(tf.reshape(v, shp), TO_NHWC)
          end)
        end
        ins[i] = v
      else
        ins[i] = cx:get(nm)
      end
    end
  end
  local outs, layout
  local eager_ins = true
  for i = 1, ins.n do if ins[i] ~= nil and is_sym(ins[i]) then eager_ins = false end end
  if eager_ins and not nhwc_in and not NO_FOLD[node.op_type] then
    -- constant inputs: computed now, the graph gets the result (shape arithmetic)
    outs, layout = eager(spec.run, cx, node, ins)
  else
    outs, layout = spec.run(cx, node, ins)
  end
  if nhwc_in then layout = "NHWC" end
  for i, nm in ipairs(node.outputs) do
    if nm ~= "" then
      local v = outs[i]
      if v == nil then raise("UnimplementedError", "onnx: %s output %d ('%s') is not computed", node.op_type, i, nm) end
      cx.env[nm] = v
      if layout == "NHWC" and rank_of(v) == 4 then cx.layout[nm] = "NHWC" end
    end
  end
end

-- a branch (If): a child state whose names fall back on the parent's
function run_subgraph(cx, g, bound)
  local child = setmetatable({env = setmetatable(bound or {}, {__index = cx.env}),
                              layout = setmetatable({}, {__index = cx.layout}), nchw = {}, nhwc = {},
                              opset = cx.opset, prepped = cx.prepped,
                              shapeinfo = setmetatable({}, {__index = cx.shapeinfo})}, CX)
  for _, e in ipairs(g.initializers) do child.env[e[1]] = e[2] end
  for _, node in ipairs(g.nodes) do run_node(child, node) end
  local res = {}
  for i, o in ipairs(g.outputs) do res[i] = child:get(o.name) end
  return res
end

local function valid_ident(s)
  s = s:gsub("[^%w_]", "_")
  if s == "" or s:match("^%d") then s = "_" .. s end
  local kw = {["and"] = 1, ["break"] = 1, ["do"] = 1, ["else"] = 1, ["elseif"] = 1, ["end"] = 1, ["false"] = 1,
              ["for"] = 1, ["function"] = 1, ["goto"] = 1, ["if"] = 1, ["in"] = 1, ["local"] = 1, ["nil"] = 1,
              ["not"] = 1, ["or"] = 1, ["repeat"] = 1, ["return"] = 1, ["then"] = 1, ["true"] = 1, ["until"] = 1,
              ["while"] = 1}
  if kw[s] then s = s .. "_" end
  return s
end

--- tf.onnx.load(path_or_bytes [, opts]) -> concrete function.
-- opts: bytes = true (the string is the model itself; guessed when it does
-- not name a file), name = the function's name (default the graph's name).
function M.load(tf_, src, opts)
  tf = tf_
  opts = opts or {}
  if type(src) ~= "string" then
    tf.errors.raise("TypeError", sfmt("onnx.load: argument 1 ('src') expected string (a path or the model's bytes), got %s", type(src)), 3)
  end
  for k in pairs(opts) do
    if k ~= "bytes" and k ~= "name" then tf.errors.raise("TypeError", sfmt("onnx.load: unknown option '%s' (accepted: bytes, name)", tostring(k)), 3) end
  end
  local is_bytes = opts.bytes
  if is_bytes == nil then is_bytes = src:find("\0", 1, true) ~= nil or #src > 4096 end
  local model = tf.core.internal.onnx_read(src, is_bytes)
  local probs = problems(model)
  if #probs > 0 then
    tf.errors.raise("UnimplementedError",
      sfmt("onnx.load: the model uses what luatf cannot import: %s", table.concat(probs, "; ")), 3)
  end
  local g = model.graph
  local opset = model.opsets[""] or model.opsets["ai.onnx"] or 1
  local inits, index = {}, {}
  for _, e in ipairs(g.initializers) do index[e[1]] = e[2] end   -- the last of a name counts
  local inputs, specs, params = {}, {}, {}
  local used = {}
  for _, v in ipairs(g.inputs) do
    if not index[v.name] then
      local shape
      if v.shape then
        shape = {}
        for i, d in ipairs(v.shape) do shape[i] = type(d) == "number" and d or -1 end
      end
      local dt = dtype_of(v.elem_type)
      local dims   -- unknown dims nil, the rank in n (nil: unknown rank)
      if shape then
        dims = {n = #shape}
        for i, d in ipairs(shape) do if d >= 0 then dims[i] = d end end
      end
      inputs[#inputs + 1] = {name = v.name, dtype = dt, shape = dims}
      specs[#specs + 1] = tf.TensorSpec(shape, dt, v.name)
      local p = valid_ident(v.name)
      while used[p] do p = p .. "_" end
      used[p] = true
      params[#params + 1] = p
    end
  end
  -- the initializers are taken from the reader now, each read once into its
  -- tensor; conv weights used only as Conv weights are read straight into
  -- luatf's layout (HWIO), so the ONNX layout is never in memory
  local prepped = {}
  do
    local other, conv_group = {}, {}
    local function uses(graph, top)
      for _, node in ipairs(graph.nodes) do
        for i, nm in ipairs(node.inputs) do
          if top and node.op_type == "Conv" and i == 2 then
            if conv_group[nm] == nil then conv_group[nm] = node.attrs.group and node.attrs.group.value or 1 end
          else
            other[nm] = true
          end
        end
        for _, a in pairs(node.attrs) do   -- a subgraph sees the outer names as they are
          if a.type == "GRAPH" and a.value then uses(a.value, false) end
          if a.type == "GRAPHS" and a.value then for _, sg in ipairs(a.value) do uses(sg, false) end end
        end
      end
      for _, v in ipairs(graph.outputs) do other[v.name] = true end
    end
    uses(g, true)
    for nm, i in pairs(index) do
      local gr = not other[nm] and conv_group[nm]
      local w = gr and model.initializer(i, "hwio")   -- (kh, kw, I, O) from (O, I, kh, kw)
      if w then
        local d = dims_of(w)
        local oihw = {d[4], d[3], d[1], d[2], n = 4}
        if gr > 1 and oihw[2] == 1 then w = tf.reshape(w, {d[1], d[2], gr, d[4] // gr}) end
        inits[nm], prepped[nm] = w, oihw
      else
        inits[nm] = model.initializer(i)
      end
    end
  end
  model.close()
  g.initializers = nil
  local nodes = g.nodes
  local outputs = {}
  for i, v in ipairs(g.outputs) do
    local dims
    if v.shape then
      dims = {n = #v.shape}
      for k, d in ipairs(v.shape) do if type(d) == "number" then dims[k] = d end end
    end
    outputs[i] = {name = v.name, dtype = DTYPES[v.elem_type] and dtype_of(v.elem_type), shape = dims}
  end
  local function body(...)
    local cx = setmetatable({env = {}, layout = {}, nchw = {}, nhwc = {}, opset = opset, prepped = prepped,
                             shapeinfo = {}}, CX)
    for name, t in pairs(inits) do cx.env[name] = t end
    local args = table.pack(...)
    for i, inp in ipairs(inputs) do cx.env[inp.name] = args[i] end
    for _, node in ipairs(nodes) do
      -- LTF_ONNX_DEBUG=1: the Lua traceback of a failing node on stderr
      local ok, err = xpcall(run_node, function(e)
        if os.getenv("LTF_ONNX_DEBUG") then io.stderr:write(debug.traceback(tostring(type(e) == "table" and e.message or e)), "\n") end
        return e
      end, cx, node)
      if not ok then
        local msg = type(err) == "table" and err.message or tostring(err)
        local kind = type(err) == "table" and err.kind or "InvalidArgumentError"
        tf.errors.raise(kind, sfmt("onnx.load: node '%s' (%s): %s", node.name ~= "" and node.name or node.outputs[1] or "?",
                                   node.op_type, msg), 1)
      end
    end
    local res = {}
    for i, o in ipairs(outputs) do
      local v = cx:get(o.name)
      if inits[o.name] and not is_sym(v) then v = tf.identity(v) end
      res[i] = v
    end
    return unpack(res, 1, #outputs)
  end
  -- a function whose parameters carry the model's input names
  local wrapper = load(sfmt("local body = ...; return function(%s) return body(%s) end",
                            table.concat(params, ", "), table.concat(params, ", ")), "=onnx", "t")(body)
  local name = opts.name or (g.name ~= "" and valid_ident(g.name)) or "onnx_model"
  local pf = tf.fn(wrapper, {input_signature = specs, autograph = false, name = name})
  local cf = pf:get_concrete_function()
  model = nil
  cf.onnx = {inputs = inputs, outputs = outputs, opset = opset}
  return cf
end

return M
