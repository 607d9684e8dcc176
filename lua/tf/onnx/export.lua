--- tf.onnx.save: a traced function (or a Keras model) written as an ONNX
-- model (docs/onnx_export.md).
--
-- The concrete function's graph is read node by node (core.onnx_graph_read:
-- the traced ops, before fusion), each op goes through the one table OPS
-- below (luatf op -> ONNX emitter), variables and captured constants become
-- initializers (read at export time), and bindings/onnx_export.c packs the
-- ModelProto with protobuf-c (proto/onnx.proto).
local M = {}

local sfmt = string.format
local MIN_OPSET, MAX_OPSET = 13, 17
local INT64_MAX = math.maxinteger

-- luatf dtype enum (ORDER DTYPE, core/include/ltf.h) -> ONNX TensorProto.DataType
local ONNX_TYPE = {[0] = 1, [1] = 11, [2] = 6, [3] = 7, [4] = 2, [5] = 9, [6] = 8, [8] = 10, [9] = 16}
local FLOATS = {[0] = true, [1] = true, [8] = true, [9] = true}
local DT = {float32 = 0, float64 = 1, int32 = 2, int64 = 3, uint8 = 4, bool = 5, string = 6, float16 = 8,
            bfloat16 = 9}

local emit_graph   -- function(e, G, in_names): below, used by the control-flow emitters
local value_info   -- function(name, type, dim_name, what): below

-- a tf error object (tf.errors), blamed on the caller of tf.onnx.save's helpers
local function fail(kind, fmt, ...)
  require("tf").errors.raise(kind, sfmt(fmt, ...), 3)
end

-- {==== the emitter state: ONNX nodes, initializers, value names
local E = {}
E.__index = E

local function new_emitter(tf, opset)
  return setmetatable({tf = tf, opset = opset, nodes = {}, inits = {}, names = {}, count = 0, nnodes = 0}, E)
end

--- A value name not used yet, from 'base'.
function E:fresh(base)
  base = base or "v"
  local name = base
  while self.names[name] do
    self.count = self.count + 1
    name = base .. "_" .. self.count
  end
  self.names[name] = true
  return name
end

--- Add an ONNX node; returns its output names ('nout' of them, default 1).
function E:node(op_type, inputs, attrs, nout)
  local outs = {}
  for k = 1, nout or 1 do outs[k] = self:fresh((self.prefix or op_type) .. "/" .. op_type) end
  local list = {}
  for name, a in pairs(attrs or {}) do list[#list + 1] = {name = name, type = a[1], value = a[2]} end
  table.sort(list, function(p, q) return p.name < q.name end)
  self.nodes[#self.nodes + 1] = {op_type = op_type, name = self:fresh_node(op_type), inputs = inputs,
                                 outputs = outs, attrs = list}
  return table.unpack(outs)
end

function E:fresh_node(op_type)
  self.nnodes = self.nnodes + 1
  return sfmt("%s/%s_%d", self.prefix or "graph", op_type, self.nnodes)
end

--- An initializer holding 'value' (a tf.Tensor, or a Lua number/list made
-- into a tensor of dtype 'dtype'); returns its name.
function E:const(value, dtype, base)
  local tf = self.tf
  if type(value) ~= "userdata" then value = tf.constant(value, dtype) end
  local name = self:fresh(base or ((self.prefix or "const") .. "/const"))
  self.inits[#self.inits + 1] = {name = name, value = value}
  return name
end

function E:ints(list) return self:const(list, self.tf.int64) end
function E:scalar(v, dtype_enum)
  return self:const(v, self.tf.core.internal.dtype_by_enum[dtype_enum])
end
-- }====

-- {==== helpers the emitters share
local function attr_i(n, k) return n.attrs.i[k + 1] end   -- C's a->i[k]
local function out_dtype(n, k) return n.outputs[k or 1].dtype end
local function in_type(e, n, k) return e.types[n.inputs[k]] end
local function in_rank(e, n, k)
  local t = in_type(e, n, k)
  return t and t.shape and #t.shape or nil
end

local function need_rank(e, n, k, what)
  local r = in_rank(e, n, k)
  if not r then
    fail("UnimplementedError", "tf.onnx.save: op '%s' (node '%s') needs the rank of its %s to be known",
      n.op, n.name, what or "input")
  end
  return r
end

local function unsupported(n, why)
  fail("UnimplementedError", "tf.onnx.save: op '%s' (node '%s') has no ONNX form%s", n.op, n.name,
    why and (": " .. why) or "")
end

local function unary(op_type)
  return function(e, n, x) return e:node(op_type, {x[1]}) end
end
local function binary(op_type)
  return function(e, n, x) return e:node(op_type, {x[1], x[2]}) end
end

local function cast_to(e, x, dt)
  return e:node("Cast", {x}, {to = {"int", ONNX_TYPE[dt]}})
end

-- NHWC <-> NCHW around the convolution and pooling ops
local function to_nchw(e, x) return e:node("Transpose", {x}, {perm = {"ints", {0, 3, 1, 2}}}) end
local function to_nhwc(e, x) return e:node("Transpose", {x}, {perm = {"ints", {0, 2, 3, 1}}}) end

-- padding attributes of Conv/MaxPool/AveragePool from luatf's i[0] (and
-- explicit pads in ints[4..7] for conv2d). TensorFlow's SAME puts the
-- smaller half before: explicit pads when the input's height and width are
-- known (ONNX Runtime refuses auto_pad with dilations), else SAME_UPPER.
local function window_padding(e, n, attrs, k, s, d)
  local p = attr_i(n, 0)
  if p == 1 then
    local t = in_type(e, n, 1)
    local hw = t.shape and #t.shape == 4 and {t.shape[2], t.shape[3]}
    if hw and hw[1] >= 0 and hw[2] >= 0 and k[1] >= 0 and k[2] >= 0 then
      local before, after = {}, {}
      for j = 1, 2 do
        local out = (hw[j] + s[j] - 1) // s[j]
        local total = math.max((out - 1) * s[j] + (k[j] - 1) * d[j] + 1 - hw[j], 0)
        before[j], after[j] = total // 2, total - total // 2
      end
      attrs.pads = {"ints", {before[1], before[2], after[1], after[2]}}
    elseif d[1] == 1 and d[2] == 1 then
      attrs.auto_pad = {"string", "SAME_UPPER"}
    else
      unsupported(n, "SAME padding with dilations over an unknown height or width")
    end
  elseif p == 2 then
    local v = n.attrs.ints
    attrs.pads = {"ints", {v[5], v[7], v[6], v[8]}}   -- top, left, bottom, right
  else attrs.auto_pad = {"string", "VALID"} end
end

local function filter_hw(e, n)
  local ft = in_type(e, n, 2)
  if ft.shape and #ft.shape == 4 then return {ft.shape[1], ft.shape[2]} end
  return {-1, -1}
end

local function reduce(op_type, axes_as_input)
  return function(e, n, x)
    local axes, keep = n.attrs.ints, attr_i(n, 0) ~= 0 and 1 or 0
    if axes and #axes == 0 then return e:node("Identity", {x[1]}) end
    local attrs = {keepdims = {"int", keep}}
    if axes_as_input then
      return e:node(op_type, axes and {x[1], e:ints(axes)} or {x[1]}, attrs)
    end
    if axes then attrs.axes = {"ints", axes} end
    return e:node(op_type, {x[1]}, attrs)
  end
end

-- reduce_all / reduce_any on booleans: min / max over int32 0/1
local function bool_reduce(op_type)
  local r = reduce(op_type, false)
  return function(e, n, x)
    local i = cast_to(e, x[1], DT.int32)
    return cast_to(e, r(e, n, {i}), DT.bool)
  end
end

-- argmax / argmin: ONNX's positions are 0-based, luatf's 1-based
local function arg_reduce(op_type)
  return function(e, n, x)
    local y = e:node(op_type, {x[1]}, {axis = {"int", attr_i(n, 1)}, keepdims = {"int", 0}})
    y = e:node("Add", {y, e:scalar(1, DT.int64)})
    if out_dtype(n) ~= DT.int64 then y = cast_to(e, y, out_dtype(n)) end
    return y
  end
end

local function like(value)   -- zeros_like / ones_like
  return function(e, n, x)
    local dt = out_dtype(n)
    local shape = e:node("Shape", {x[1]})
    local v = e.tf.constant({value}, e.tf.core.internal.dtype_by_enum[dt])
    return e:node("ConstantOfShape", {shape}, {value = {"tensor", v}})
  end
end

-- strided_slice: luatf's 'end' is inclusive, ONNX's exclusive
local function strided_slice(e, n, x)
  local a = n.attrs
  local m = #a.ints // 2
  local begin_mask, end_mask, shrink, extra = attr_i(n, 0), attr_i(n, 1), attr_i(n, 2), attr_i(n, 3)
  if extra ~= 0 then unsupported(n, "new_axis_mask and ellipsis_mask are not exported") end
  local starts, ends, axes, steps, squeeze = {}, {}, {}, {}, {}
  for k = 1, m do
    local b, en, s = a.ints[k], a.ints[m + k], a.ints2 and a.ints2[k] or 1
    local bit = 1 << (k - 1)
    if shrink & bit ~= 0 then
      s = 1
      en = b == -1 and INT64_MAX or b + 1
      squeeze[#squeeze + 1] = k - 1
    else
      if begin_mask & bit ~= 0 then b = s > 0 and 0 or INT64_MAX end
      if end_mask & bit ~= 0 then en = s > 0 and INT64_MAX or math.mininteger
      elseif s > 0 then en = en == -1 and INT64_MAX or en + 1
      else en = en == 0 and math.mininteger or en - 1 end
    end
    starts[k], ends[k], axes[k], steps[k] = b, en, k - 1, s
  end
  local y = e:node("Slice", {x[1], e:ints(starts), e:ints(ends), e:ints(axes), e:ints(steps)})
  if #squeeze > 0 then y = e:node("Squeeze", {y, e:ints(squeeze)}) end
  return y
end

local function gelu(e, n, x)
  local dt = out_dtype(n)
  local half, one = e:scalar(0.5, dt), e:scalar(1, dt)
  local inner
  if attr_i(n, 0) ~= 0 then   -- tanh approximation
    local x3 = e:node("Mul", {x[1], e:node("Mul", {x[1], x[1]})})
    local s = e:node("Add", {x[1], e:node("Mul", {x3, e:scalar(0.044715, dt)})})
    inner = e:node("Tanh", {e:node("Mul", {s, e:scalar(math.sqrt(2 / math.pi), dt)})})
  else
    inner = e:node("Erf", {e:node("Mul", {x[1], e:scalar(1 / math.sqrt(2), dt)})})
  end
  return e:node("Mul", {e:node("Mul", {x[1], half}), e:node("Add", {inner, one})})
end

-- bitwise and/or/xor (ONNX has them from opset 18 only): on uint8, bit by
-- bit in int32 arithmetic, sum of 2^k * f(bit_k(a), bit_k(b))
local function bitwise(kind)
  return function(e, n, x)
    if out_dtype(n) ~= DT.uint8 then
      unsupported(n, "bitwise ops on " .. (({[2] = "int32", [3] = "int64"})[out_dtype(n)] or "this dtype") ..
        " need opset 18 (only uint8 is exported)")
    end
    local a, b = cast_to(e, x[1], DT.int32), cast_to(e, x[2], DT.int32)
    local two = e:scalar(2, DT.int32)
    local sum
    for k = 0, 7 do
      local p = e:scalar(1 << k, DT.int32)
      local ba = e:node("Mod", {e:node("Div", {a, p}), two}, {fmod = {"int", 0}})
      local bb = e:node("Mod", {e:node("Div", {b, p}), two}, {fmod = {"int", 0}})
      local bit
      if kind == "and" then bit = e:node("Mul", {ba, bb})
      elseif kind == "or" then bit = e:node("Max", {ba, bb})
      else bit = e:node("Mod", {e:node("Add", {ba, bb}), two}, {fmod = {"int", 0}}) end
      local term = e:node("Mul", {bit, p})
      sum = sum and e:node("Add", {sum, term}) or term
    end
    return cast_to(e, sum, DT.uint8)
  end
end

-- shifts: BitShift on uint8; on signed integers x * 2^y and floor(x / 2^y)
local function int_floordiv(e, a, b)
  local r = e:node("Mod", {a, b}, {fmod = {"int", 0}})
  return e:node("Div", {e:node("Sub", {a, r}), b})
end

local function shift(direction)
  return function(e, n, x)
    local dt = out_dtype(n)
    if dt == DT.uint8 then return e:node("BitShift", {x[1], x[2]}, {direction = {"string", direction}}) end
    local p = e:node("Pow", {e:scalar(2, dt), x[2]})
    if direction == "LEFT" then return e:node("Mul", {x[1], p}) end
    return int_floordiv(e, x[1], p)
  end
end

-- {==== recurrent layers: luatf's fused ops (Keras layouts, batch-major)
-- as ONNX LSTM/GRU (time-major, ONNX gate orders, weights transposed)
local function gates(e, w, order, nparts)
  local parts = {e:node("Split", {w}, {axis = {"int", 1}}, nparts)}
  local sorted = {}
  for k, g in ipairs(order) do sorted[k] = parts[g] end
  return e:node("Concat", sorted, {axis = {"int", 1}})
end

-- A mask becomes ONNX's sequence_lens (the count of true steps per row): exact
-- when the padding trails, as Keras' mask_zero gives for sequences padded at
-- the end (a mask with holes is not representable; docs/onnx_export.md).
local function rnn_common(e, n, x, what)
  local m = x[what == "LSTM" and 7 or 6]
  local lens = ""
  if m then
    lens = cast_to(e, e:node("ReduceSum", {cast_to(e, m, DT.int32), e:ints({1})}, {keepdims = {"int", 0}}), DT.int32)
  end
  local t = in_type(e, n, 4)
  local units = t.shape and t.shape[2] and t.shape[2] >= 0 and t.shape[2] // (what == "LSTM" and 4 or 3)
  if not units then unsupported(n, "the kernel's shape must be known") end
  return units, e:node("Transpose", {x[1]}, {perm = {"ints", {1, 0, 2}}}), lens, m
end

local function rnn_outputs(e, n, m, y, yh, yc)
  -- Y (T, 1, B, U) -> (B, T, U); Y_h, Y_c (1, B, U) -> (B, U). go_backwards: ONNX's reverse direction
  -- keeps Y aligned with the input's steps, luatf's outputs are in processing order (reversed)
  local seq = e:node("Squeeze", {y, e:ints({1})})
  if attr_i(n, 0) ~= 0 then
    seq = e:node("Slice", {seq, e:ints({-1}), e:ints({math.mininteger}), e:ints({0}), e:ints({-1})})
  end
  local out = e:node("Transpose", {seq}, {perm = {"ints", {1, 0, 2}}})
  local h = e:node("Squeeze", {yh, e:ints({0})})
  if m and attr_i(n, 0) == 0 and attr_i(n, 1) == 0 then
    -- Keras repeats the last output over masked steps (ONNX: zeros); trailing padding: that is h
    out = e:node("Where", {e:node("Unsqueeze", {m, e:ints({-1})}), out, e:node("Unsqueeze", {h, e:ints({1})})})
  end
  if yc then return out, h, e:node("Squeeze", {yc, e:ints({0})}) end
  return out, h
end

local function direction(n) return {"string", attr_i(n, 0) ~= 0 and "reverse" or "forward"} end

local function weight(e, w, order, nparts)   -- (I, nU) Keras order -> (1, nU, I) ONNX order
  local g = gates(e, w, order, nparts)
  return e:node("Unsqueeze", {e:node("Transpose", {g}, {perm = {"ints", {1, 0}}}), e:ints({0})})
end

local function lstm(e, n, x)
  local units, xs, lens, m = rnn_common(e, n, x, "LSTM")
  local order = {1, 4, 2, 3}   -- Keras i, f, c, o -> ONNX i, o, f, c
  local W, R = weight(e, x[4], order, 4), weight(e, x[5], order, 4)
  local b = gates(e, e:node("Unsqueeze", {x[6], e:ints({0})}), order, 4)
  local B = e:node("Concat", {b, e:node("Sub", {b, b})}, {axis = {"int", 1}})
  local h0 = e:node("Unsqueeze", {x[2], e:ints({0})})
  local c0 = e:node("Unsqueeze", {x[3], e:ints({0})})
  local y, yh, yc = e:node("LSTM", {xs, W, R, B, lens, h0, c0}, {hidden_size = {"int", units},
    direction = direction(n)}, 3)
  return rnn_outputs(e, n, m, y, yh, yc)
end

local function gru(e, n, x)
  local units, xs, lens, m = rnn_common(e, n, x, "GRU")
  local order = {1, 2, 3}   -- Keras z, r, h = ONNX z, r, h
  local W, R = weight(e, x[3], order, 3), weight(e, x[4], order, 3)
  local reset_after = attr_i(n, 2) ~= 0
  local B
  if reset_after then   -- (2, 3U): input row, recurrent row
    B = e:node("Reshape", {x[5], e:ints({1, 6 * units})})
  else
    local b = e:node("Unsqueeze", {x[5], e:ints({0})})
    B = e:node("Concat", {b, e:node("Sub", {b, b})}, {axis = {"int", 1}})
  end
  local h0 = e:node("Unsqueeze", {x[2], e:ints({0})})
  local y, yh = e:node("GRU", {xs, W, R, B, lens, h0},
    {hidden_size = {"int", units}, linear_before_reset = {"int", reset_after and 1 or 0}, direction = direction(n)}, 2)
  return rnn_outputs(e, n, m, y, yh)
end
-- }====

-- sorting along the last axis with TopK (ties: the lower position first,
-- as luatf); positions come back 1-based
local function last_dim(e, x)
  return e:node("Reshape", {e:node("Gather", {e:node("Shape", {x}), e:scalar(-1, DT.int64)}, {axis = {"int", 0}}),
    e:ints({1})})
end

local function topk(e, n, x, k, largest)
  local v, i = e:node("TopK", {x, k}, {axis = {"int", -1}, largest = {"int", largest and 1 or 0},
    sorted = {"int", 1}}, 2)
  return v, e:node("Add", {i, e:scalar(1, DT.int64)})
end

local function index_out(e, n, i, k)
  local dt = out_dtype(n, k)
  if dt ~= DT.int64 then i = cast_to(e, i, dt) end
  return i
end

-- tf.image.resize (TensorFlow 2: half-pixel centers): ONNX Resize on NCHW
-- to the sizes (batch, channels from the input when the model runs)
local function resize(e, n, x, attrs)
  local hw = n.attrs.ints
  local nchw = to_nchw(e, x[1])
  local shape = e:node("Shape", {nchw})
  local nc = e:node("Slice", {shape, e:ints({0}), e:ints({2}), e:ints({0})})
  local sizes = e:node("Concat", {nc, e:ints({hw[1], hw[2]})}, {axis = {"int", 0}})
  return to_nhwc(e, e:node("Resize", {nchw, "", "", sizes}, attrs))
end

-- luatf's 1-based positions as ONNX's 0-based int64 ones
local function zero_based(e, idx)
  return e:node("Sub", {cast_to(e, idx, DT.int64), e:scalar(1, DT.int64)})
end

local function scatter(reduction)
  return function(e, n, x)
    local updates = x[3]
    if reduction == "sub" then updates, reduction = e:node("Neg", {updates}), "add" end
    if reduction == "max" or reduction == "min" then unsupported(n, "ScatterND's max/min need opset 18") end
    local attrs
    if reduction then
      if e.opset < 16 then unsupported(n, "ScatterND's reduction needs opset 16") end
      attrs = {reduction = {"string", reduction}}
    end
    return e:node("ScatterND", {x[1], zero_based(e, x[2]), updates}, attrs)
  end
end

local function unique(e, n, x)
  -- ONNX Runtime's Unique takes float, int64, int8 and strings: other integers go through int64
  local dt = out_dtype(n)
  local v = (dt == DT.int32 or dt == DT.uint8) and cast_to(e, x[1], DT.int64) or x[1]
  local y, _, inverse, counts = e:node("Unique", {v}, {sorted = {"int", 0}}, 4)
  if v ~= x[1] then y = cast_to(e, y, dt) end
  local idx = index_out(e, n, e:node("Add", {inverse, e:scalar(1, DT.int64)}), 2)
  if #n.outputs == 3 then return y, idx, index_out(e, n, counts, 3) end
  return y, idx
end
-- }====

-- {==== control flow: cond -> If (branches capture outer values by name),
-- while -> Loop (the condition computed before the loop and at the end of
-- every iteration)
local function concat_lists(a, b)
  local r = table.move(a, 1, #a, 1, {})
  return table.move(b, 1, #b, #r + 1, r)
end

-- a subgraph of its own nodes: emit(G) runs with e.nodes switched
local function subgraph(e, label, inputs, body)
  local saved = e.nodes
  e.nodes = {}
  local outs, otypes = body()
  local outputs = {}
  for k, o in ipairs(outs) do
    if not otypes[k].shape then
      fail("UnimplementedError", "tf.onnx.save: output %d of '%s' has an unknown rank, which ONNX subgraphs cannot have",
        k, label)
    end
    local name = e:fresh(label .. "/out")
    e.nodes[#e.nodes + 1] = {op_type = "Identity", name = e:fresh_node("Identity"), inputs = {o}, outputs = {name},
                             attrs = {}}
    outputs[k] = value_info(name, otypes[k], nil, "output")
  end
  local g = {name = e:fresh(label), nodes = e.nodes, inputs = inputs, outputs = outputs}
  e.nodes = saved
  return g
end

local function cond(e, n, x)
  local nthen = attr_i(n, 2)
  local then_in = table.move(x, 2, 1 + nthen, 1, {})
  local else_in = table.move(x, 2 + nthen, #x, 1, {})
  local tg = subgraph(e, n.name .. "/then", {}, function() return emit_graph(e, n.functions[1], then_in) end)
  local eg = subgraph(e, n.name .. "/else", {}, function() return emit_graph(e, n.functions[2], else_in) end)
  return e:node("If", {x[1]}, {then_branch = {"graph", tg}, else_branch = {"graph", eg}}, #n.outputs)
end

local function while_loop(e, n, x)
  local nvars, ncond = attr_i(n, 2), attr_i(n, 3)
  local ints = n.attrs.ints or {}
  if ints[2] and ints[2] ~= 0 then unsupported(n, "the per-iteration stacks a gradient keeps") end
  local vars = table.move(x, 1, nvars, 1, {})
  local cond_in = table.move(x, nvars + 1, nvars + ncond, 1, {})
  local body_in = table.move(x, nvars + ncond + 1, #x, 1, {})
  local cg, bg = n.functions[1], n.functions[2]
  local c0 = emit_graph(e, cg, concat_lists(vars, cond_in))[1]
  local iter, cin = e:fresh(n.name .. "/iteration"), e:fresh(n.name .. "/cond")
  local inputs = {value_info(iter, {dtype = DT.int64, shape = {}}, nil, "input"),
                  value_info(cin, {dtype = DT.bool, shape = {}}, nil, "input")}
  local bvars = {}
  for k = 1, nvars do
    if not n.outputs[k].shape then unsupported(n, ("loop variable %d has an unknown rank"):format(k)) end
    bvars[k] = e:fresh(n.name .. "/var")
    inputs[#inputs + 1] = value_info(bvars[k], n.outputs[k], nil, "input")
  end
  local body = subgraph(e, n.name .. "/body", inputs, function()
    local new, ntypes = emit_graph(e, bg, concat_lists(bvars, body_in))
    local c, ct = emit_graph(e, cg, concat_lists(new, cond_in))
    return concat_lists({c[1]}, new), concat_lists({ct[1]}, ntypes)
  end)
  local m = ints[1] and ints[1] >= 0 and e:scalar(ints[1], DT.int64) or ""
  return e:node("Loop", concat_lists({m, c0}, vars), {body = {"graph", body}}, nvars)
end
-- }====

--- The one table: luatf op name -> {onnx = "what it becomes", emit = f}
-- (f(e, node, inputs) returns the ONNX names of the node's outputs). The
-- operator list of docs/onnx_export.md is generated from it
-- (tools/onnx_export_ops.lua). Placeholders, constants and variable reads
-- are handled by save() itself.
local OPS = {
  -- elementwise, unary
  negative = {onnx = "Neg", emit = unary("Neg")},
  abs = {onnx = "Abs", emit = unary("Abs")},
  sign = {onnx = "Sign", emit = unary("Sign")},
  exp = {onnx = "Exp", emit = unary("Exp")},
  log = {onnx = "Log", emit = unary("Log")},
  log1p = {onnx = "Log(Add(x, 1))", emit = function(e, n, x)
    return e:node("Log", {e:node("Add", {x[1], e:scalar(1, out_dtype(n))})}) end},
  expm1 = {onnx = "Sub(Exp(x), 1)", emit = function(e, n, x)
    return e:node("Sub", {e:node("Exp", {x[1]}), e:scalar(1, out_dtype(n))}) end},
  sqrt = {onnx = "Sqrt", emit = unary("Sqrt")},
  rsqrt = {onnx = "Reciprocal(Sqrt(x))", emit = function(e, n, x)
    return e:node("Reciprocal", {e:node("Sqrt", {x[1]})}) end},
  square = {onnx = "Mul(x, x)", emit = function(e, n, x) return e:node("Mul", {x[1], x[1]}) end},
  reciprocal = {onnx = "Reciprocal", emit = unary("Reciprocal")},
  tanh = {onnx = "Tanh", emit = unary("Tanh")},
  sigmoid = {onnx = "Sigmoid", emit = unary("Sigmoid")},
  relu = {onnx = "Relu", emit = unary("Relu")},
  softplus = {onnx = "Softplus", emit = unary("Softplus")},
  sin = {onnx = "Sin", emit = unary("Sin")},
  cos = {onnx = "Cos", emit = unary("Cos")},
  tan = {onnx = "Tan", emit = unary("Tan")},
  asin = {onnx = "Asin", emit = unary("Asin")},
  acos = {onnx = "Acos", emit = unary("Acos")},
  atan = {onnx = "Atan", emit = unary("Atan")},
  sinh = {onnx = "Sinh", emit = unary("Sinh")},
  cosh = {onnx = "Cosh", emit = unary("Cosh")},
  asinh = {onnx = "Asinh", emit = unary("Asinh")},
  acosh = {onnx = "Acosh", emit = unary("Acosh")},
  atanh = {onnx = "Atanh", emit = unary("Atanh")},
  floor = {onnx = "Floor", emit = unary("Floor")},
  ceil = {onnx = "Ceil", emit = unary("Ceil")},
  round = {onnx = "Round (half to even, as TensorFlow)", emit = unary("Round")},
  erf = {onnx = "Erf", emit = unary("Erf")},
  erfc = {onnx = "Sub(1, Erf(x))", emit = function(e, n, x)
    return e:node("Sub", {e:scalar(1, out_dtype(n)), e:node("Erf", {x[1]})}) end},
  logical_not = {onnx = "Not", emit = unary("Not")},
  is_nan = {onnx = "IsNaN", emit = unary("IsNaN")},
  is_inf = {onnx = "IsInf", emit = unary("IsInf")},
  is_finite = {onnx = "Not(Or(IsNaN(x), IsInf(x)))", emit = function(e, n, x)
    return e:node("Not", {e:node("Or", {e:node("IsNaN", {x[1]}), e:node("IsInf", {x[1]})})}) end},
  identity = {onnx = "Identity", emit = unary("Identity")},
  stop_gradient = {onnx = "Identity", emit = unary("Identity")},
  check_numerics = {onnx = "Identity (the check is not exported)", emit = unary("Identity")},
  ensure_shape = {onnx = "Identity (the check is not exported)", emit = unary("Identity")},
  custom_gradient = {onnx = "Identity of each output (the gradient function is not exported)",
    emit = function(e, n, x)
      local nx, outs = attr_i(n, 1), {}
      for j = 1, #n.outputs do outs[j] = e:node("Identity", {x[nx + j]}) end
      return table.unpack(outs)
    end},
  zeros_like = {onnx = "ConstantOfShape(Shape(x))", emit = like(0)},
  ones_like = {onnx = "ConstantOfShape(Shape(x))", emit = like(1)},
  cast = {onnx = "Cast", emit = function(e, n, x)
    local to = out_dtype(n)
    if not ONNX_TYPE[to] then unsupported(n, "no ONNX dtype for the result") end
    return cast_to(e, x[1], to)
  end},
  gelu = {onnx = "Mul, Add, Erf (or Tanh when approximate)", emit = gelu},
  -- elementwise, binary (broadcasting as NumPy in both)
  add = {onnx = "Add", emit = function(e, n, x)
    if out_dtype(n) == DT.string then unsupported(n, "string concatenation") end
    return e:node("Add", {x[1], x[2]})
  end},
  subtract = {onnx = "Sub", emit = binary("Sub")},
  multiply = {onnx = "Mul", emit = binary("Mul")},
  divide = {onnx = "Div", emit = function(e, n, x)
    local dt = out_dtype(n)
    local a, b = x[1], x[2]
    if in_type(e, n, 1).dtype ~= dt then a, b = cast_to(e, a, dt), cast_to(e, b, dt) end
    return e:node("Div", {a, b})
  end},
  floordiv = {onnx = "Floor(Div(a, b)) (floats), Div(Sub(a, Mod(a, b)), b) (integers)", emit = function(e, n, x)
    if FLOATS[out_dtype(n)] then return e:node("Floor", {e:node("Div", {x[1], x[2]})}) end
    return int_floordiv(e, x[1], x[2])
  end},
  floormod = {onnx = "Mod (integers), Sub(a, Mul(b, Floor(Div(a, b)))) (floats)", emit = function(e, n, x)
    if not FLOATS[out_dtype(n)] then return e:node("Mod", {x[1], x[2]}, {fmod = {"int", 0}}) end
    local q = e:node("Floor", {e:node("Div", {x[1], x[2]})})
    return e:node("Sub", {x[1], e:node("Mul", {x[2], q})})
  end},
  truncatediv = {onnx = "Div", emit = binary("Div")},
  truncatemod = {onnx = "Mod (fmod = 1)", emit = function(e, n, x)
    return e:node("Mod", {x[1], x[2]}, {fmod = {"int", 1}}) end},
  pow = {onnx = "Pow", emit = binary("Pow")},
  maximum = {onnx = "Max", emit = binary("Max")},
  minimum = {onnx = "Min", emit = binary("Min")},
  squared_difference = {onnx = "Mul(Sub(a, b), Sub(a, b))", emit = function(e, n, x)
    local d = e:node("Sub", {x[1], x[2]})
    return e:node("Mul", {d, d})
  end},
  divide_no_nan = {onnx = "Where(Equal(b, 0), 0, Div(a, b))", emit = function(e, n, x)
    local dt = out_dtype(n)
    local zero = e:scalar(0, dt)
    local z = e:node("Equal", {x[2], zero})
    local safe = e:node("Where", {z, e:scalar(1, dt), x[2]})
    return e:node("Where", {z, zero, e:node("Div", {x[1], safe})})
  end},
  xlogy = {onnx = "Where(Equal(x, 0), 0, Mul(x, Log(y)))", emit = function(e, n, x)
    local zero = e:scalar(0, out_dtype(n))
    return e:node("Where", {e:node("Equal", {x[1], zero}), zero, e:node("Mul", {x[1], e:node("Log", {x[2]})})})
  end},
  xdivy = {onnx = "Where(Equal(x, 0), 0, Div(x, y))", emit = function(e, n, x)
    local zero = e:scalar(0, out_dtype(n))
    return e:node("Where", {e:node("Equal", {x[1], zero}), zero, e:node("Div", {x[1], x[2]})})
  end},
  atan2 = {onnx = "Atan(y / x) with the quadrant from Where", emit = function(e, n, x)
    local dt = out_dtype(n)
    local y, xx = x[1], x[2]
    local zero = e:scalar(0, dt)
    local base = e:node("Atan", {e:node("Div", {y, xx})})
    local pi = e:scalar(math.pi, dt)
    local ypos = e:node("GreaterOrEqual", {y, zero})
    -- x < 0: add pi when y >= 0, subtract it otherwise
    local shifted = e:node("Where", {ypos, e:node("Add", {base, pi}), e:node("Sub", {base, pi})})
    local r = e:node("Where", {e:node("Less", {xx, zero}), shifted, base})
    -- x == 0: +-pi/2 by y's sign, 0 when y is 0 too
    local half = e:node("Mul", {e:node("Sign", {y}), e:scalar(math.pi / 2, dt)})
    return e:node("Where", {e:node("Equal", {xx, zero}), half, r})
  end},
  equal = {onnx = "Equal", emit = binary("Equal")},
  not_equal = {onnx = "Not(Equal(a, b))", emit = function(e, n, x)
    return e:node("Not", {e:node("Equal", {x[1], x[2]})}) end},
  less = {onnx = "Less", emit = binary("Less")},
  less_equal = {onnx = "LessOrEqual", emit = binary("LessOrEqual")},
  greater = {onnx = "Greater", emit = binary("Greater")},
  greater_equal = {onnx = "GreaterOrEqual", emit = binary("GreaterOrEqual")},
  logical_and = {onnx = "And", emit = binary("And")},
  logical_or = {onnx = "Or", emit = binary("Or")},
  logical_xor = {onnx = "Xor", emit = binary("Xor")},
  bitwise_and = {onnx = "uint8: bit by bit with Div, Mod, Mul, Add (BitwiseAnd is opset 18)", emit = bitwise("and")},
  bitwise_or = {onnx = "uint8: bit by bit with Div, Mod, Max, Add (BitwiseOr is opset 18)", emit = bitwise("or")},
  bitwise_xor = {onnx = "uint8: bit by bit with Div, Mod, Add (BitwiseXor is opset 18)", emit = bitwise("xor")},
  left_shift = {onnx = "BitShift (uint8), Mul(x, Pow(2, y)) (signed)", emit = shift("LEFT")},
  right_shift = {onnx = "BitShift (uint8), floor(x / Pow(2, y)) (signed)", emit = shift("RIGHT")},
  where = {onnx = "Where", emit = function(e, n, x) return e:node("Where", {x[1], x[2], x[3]}) end},
  -- reductions
  reduce_sum = {onnx = "ReduceSum", emit = reduce("ReduceSum", true)},
  reduce_mean = {onnx = "ReduceMean", emit = reduce("ReduceMean", false)},
  reduce_max = {onnx = "ReduceMax", emit = reduce("ReduceMax", false)},
  reduce_min = {onnx = "ReduceMin", emit = reduce("ReduceMin", false)},
  reduce_prod = {onnx = "ReduceProd", emit = reduce("ReduceProd", false)},
  reduce_all = {onnx = "Cast, ReduceMin, Cast", emit = bool_reduce("ReduceMin")},
  reduce_any = {onnx = "Cast, ReduceMax, Cast", emit = bool_reduce("ReduceMax")},
  argmax = {onnx = "Add(ArgMax(x), 1) (luatf's positions are 1-based)", emit = arg_reduce("ArgMax")},
  argmin = {onnx = "Add(ArgMin(x), 1) (luatf's positions are 1-based)", emit = arg_reduce("ArgMin")},
  cumsum = {onnx = "CumSum", emit = function(e, n, x)
    return e:node("CumSum", {x[1], e:ints({attr_i(n, 1)})},
      {exclusive = {"int", attr_i(n, 2) ~= 0 and 1 or 0}, reverse = {"int", attr_i(n, 3) ~= 0 and 1 or 0}})
  end},
  -- shapes and movement
  reshape = {onnx = "Reshape (allowzero = 1 from opset 14: a 0 is a zero-sized dimension, as in luatf)",
    emit = function(e, n, x)
    local attrs = e.opset >= 14 and {allowzero = {"int", 1}} or nil
    if x[2] then   -- the shape as a tensor, read when the model runs
      return e:node("Reshape", {x[1], cast_to(e, x[2], DT.int64)}, attrs)
    end
    if not attrs then
      for _, d in ipairs(n.attrs.ints) do
        if d == 0 then unsupported(n, "a zero-sized dimension at opset 13 (Reshape reads 0 as 'copy')") end
      end
    end
    return e:node("Reshape", {x[1], e:ints(n.attrs.ints)}, attrs)
  end},
  fill = {onnx = "ConstantOfShape", emit = function(e, n, x)
    local dt = out_dtype(n)
    if dt == DT.string or not ONNX_TYPE[dt] then unsupported(n, "a fill of this dtype") end
    local v = FLOATS[dt] and n.attrs.f[1] or n.attrs.i[2]
    if dt == DT.bool then v = v ~= 0 end
    local value = e.tf.constant({v}, e.tf.core.internal.dtype_by_enum[dt])
    local shape = x[1] and cast_to(e, x[1], DT.int64) or e:ints(n.attrs.ints)
    return e:node("ConstantOfShape", {shape}, {value = {"tensor", value}})
  end},
  transpose = {onnx = "Transpose", emit = function(e, n, x)
    return e:node("Transpose", {x[1]}, n.attrs.ints and {perm = {"ints", n.attrs.ints}} or nil)
  end},
  expand_dims = {onnx = "Unsqueeze", emit = function(e, n, x)
    return e:node("Unsqueeze", {x[1], e:ints({attr_i(n, 0)})}) end},
  squeeze = {onnx = "Squeeze", emit = function(e, n, x)
    return e:node("Squeeze", n.attrs.ints and {x[1], e:ints(n.attrs.ints)} or {x[1]}) end},
  concat = {onnx = "Concat", emit = function(e, n, x)
    return e:node("Concat", x, {axis = {"int", attr_i(n, 0)}}) end},
  stack = {onnx = "Unsqueeze each, Concat", emit = function(e, n, x)
    local axis, parts = attr_i(n, 0), {}
    for k, v in ipairs(x) do parts[k] = e:node("Unsqueeze", {v, e:ints({axis})}) end
    return e:node("Concat", parts, {axis = {"int", axis}})
  end},
  split = {onnx = "Split", emit = function(e, n, x)
    local axis, sizes = attr_i(n, 0), n.attrs.ints
    if sizes then
      local known, unknown = 0, nil
      for k, s in ipairs(sizes) do if s < 0 then unknown = k else known = known + s end end
      if unknown then
        local t = in_type(e, n, 1)
        local r = t.shape and #t.shape
        local ax = r and (axis < 0 and axis + r or axis)
        local dim = r and t.shape[ax + 1]
        if not dim or dim < 0 then unsupported(n, "a size of -1 over an unknown dimension") end
        sizes = table.move(sizes, 1, #sizes, 1, {})
        sizes[unknown] = dim - known
      end
      return e:node("Split", {x[1], e:ints(sizes)}, {axis = {"int", axis}}, #n.outputs)
    end
    return e:node("Split", {x[1]}, {axis = {"int", axis}}, #n.outputs)
  end},
  unstack = {onnx = "Split, Squeeze", emit = function(e, n, x)
    local axis = attr_i(n, 0)
    local parts = {e:node("Split", {x[1]}, {axis = {"int", axis}}, #n.outputs)}
    for k, p in ipairs(parts) do parts[k] = e:node("Squeeze", {p, e:ints({axis})}) end
    return table.unpack(parts)
  end},
  slice = {onnx = "Slice", emit = function(e, n, x)
    local b, size = n.attrs.ints, n.attrs.ints2
    local ends, axes = {}, {}
    for k = 1, #b do
      ends[k] = size[k] < 0 and INT64_MAX or b[k] + size[k]
      axes[k] = k - 1
    end
    return e:node("Slice", {x[1], e:ints(b), e:ints(ends), e:ints(axes)})
  end},
  strided_slice = {onnx = "Slice (+ Squeeze for shrunk axes)", emit = strided_slice},
  gather = {onnx = "Gather(params, Sub(indices, 1)) (luatf's indices are 1-based)", emit = function(e, n, x)
    if attr_i(n, 1) ~= 0 then unsupported(n, "batch_dims") end
    local idx = e:node("Sub", {x[2], e:scalar(1, in_type(e, n, 2).dtype)})
    return e:node("Gather", {x[1], idx}, {axis = {"int", attr_i(n, 0)}})
  end},
  one_hot = {onnx = "OneHot (indices made 0-based, out-of-range ones kept out of range)", emit = function(e, n, x)
    -- ONNX Runtime's OneHot kernels: int64 indices and depth, float values (cast around them)
    local depth = attr_i(n, 0)
    local idx = e:node("Sub", {cast_to(e, x[1], DT.int64), e:scalar(1, DT.int64)})
    -- ONNX counts negative indices from the end; luatf's 0 and below give all off
    local neg = e:node("Less", {idx, e:scalar(0, DT.int64)})
    idx = e:node("Where", {neg, e:scalar(depth, DT.int64), idx})
    local dt = out_dtype(n)
    local on, off = x[2], x[3]
    if dt ~= DT.float32 then on, off = cast_to(e, on, DT.float32), cast_to(e, off, DT.float32) end
    local values = e:node("Concat", {e:node("Reshape", {off, e:ints({1})}), e:node("Reshape", {on, e:ints({1})})},
      {axis = {"int", 0}})
    local y = e:node("OneHot", {idx, e:ints({depth}), values}, {axis = {"int", attr_i(n, 1)}})
    if dt ~= DT.float32 then y = cast_to(e, y, dt) end
    return y
  end},
  tile = {onnx = "Tile", emit = function(e, n, x) return e:node("Tile", {x[1], e:ints(n.attrs.ints)}) end},
  pad = {onnx = "Pad", emit = function(e, n, x)
    local mode = attr_i(n, 0)
    if mode == 2 then unsupported(n, "SYMMETRIC padding") end
    local v, r = n.attrs.ints, #n.attrs.ints // 2
    local pads = {}
    for k = 1, r do pads[k], pads[r + k] = v[2 * k - 1], v[2 * k] end
    local ins = {x[1], e:ints(pads)}
    if x[2] then ins[3] = x[2] end
    return e:node("Pad", ins, {mode = {"string", mode == 1 and "reflect" or "constant"}})
  end},
  reverse = {onnx = "Slice (steps -1)", emit = function(e, n, x)
    local axes = n.attrs.ints
    if #axes == 0 then return e:node("Identity", {x[1]}) end
    local starts, ends, steps = {}, {}, {}
    for k = 1, #axes do starts[k], ends[k], steps[k] = -1, math.mininteger, -1 end
    return e:node("Slice", {x[1], e:ints(starts), e:ints(ends), e:ints(axes), e:ints(steps)})
  end},
  broadcast_to = {onnx = "Expand", emit = function(e, n, x)
    return e:node("Expand", {x[1], x[2] and cast_to(e, x[2], DT.int64) or e:ints(n.attrs.ints)}) end},
  shape = {onnx = "Shape (+ Cast)", emit = function(e, n, x)
    local y = e:node("Shape", {x[1]})
    if out_dtype(n) ~= DT.int64 then y = cast_to(e, y, out_dtype(n)) end
    return y
  end},
  size = {onnx = "Size (+ Cast)", emit = function(e, n, x)
    local y = e:node("Size", {x[1]})
    if out_dtype(n) ~= DT.int64 then y = cast_to(e, y, out_dtype(n)) end
    return y
  end},
  range_dyn = {onnx = "Range", emit = function(e, n, x)
    local dt = out_dtype(n)
    local ins = {}
    for k = 1, 3 do ins[k] = in_type(e, n, k).dtype == dt and x[k] or cast_to(e, x[k], dt) end
    return e:node("Range", ins)
  end},
  matrix_transpose = {onnx = "Transpose (the last two axes)", emit = function(e, n, x)
    local r = need_rank(e, n, 1)
    local perm = {}
    for d = 1, r do perm[d] = d - 1 end
    perm[r - 1], perm[r] = r - 1, r - 2
    return e:node("Transpose", {x[1]}, {perm = {"ints", perm}})
  end},
  top_k = {onnx = "TopK (indices made 1-based)", emit = function(e, n, x)
    local v, i = topk(e, n, x[1], e:ints({attr_i(n, 0)}), true)
    return v, index_out(e, n, i, 2)
  end},
  sort = {onnx = "TopK over the whole last axis", emit = function(e, n, x)
    return (topk(e, n, x[1], last_dim(e, x[1]), attr_i(n, 0) ~= 0))
  end},
  argsort = {onnx = "TopK over the whole last axis (indices made 1-based)", emit = function(e, n, x)
    local _, i = topk(e, n, x[1], last_dim(e, x[1]), attr_i(n, 0) ~= 0)
    return index_out(e, n, i)
  end},
  resize_bilinear = {onnx = "Resize (linear, half_pixel) between Transposes", emit = function(e, n, x)
    return resize(e, n, x, {mode = {"string", "linear"}, coordinate_transformation_mode = {"string", "half_pixel"}})
  end},
  resize_nearest = {onnx = "Resize (nearest, tf_half_pixel_for_nn, floor) between Transposes", emit = function(e, n, x)
    return resize(e, n, x, {mode = {"string", "nearest"}, nearest_mode = {"string", "floor"},
      coordinate_transformation_mode = {"string", "tf_half_pixel_for_nn"}})
  end},
  gather_nd = {onnx = "GatherND (positions made 0-based)", emit = function(e, n, x)
    return e:node("GatherND", {x[1], zero_based(e, x[2])})
  end},
  scatter_nd = {onnx = "ScatterND (reduction add) into zeros (opset 16+)", emit = function(e, n, x)
    local v = e.tf.constant({0}, e.tf.core.internal.dtype_by_enum[out_dtype(n)])
    local zeros = e:node("ConstantOfShape", {e:ints(n.attrs.ints)}, {value = {"tensor", v}})
    return scatter("add")(e, n, {zeros, x[1], x[2]})
  end},
  tensor_scatter_nd_update = {onnx = "ScatterND", emit = scatter(nil)},
  tensor_scatter_nd_add = {onnx = "ScatterND (reduction add, opset 16+)", emit = scatter("add")},
  tensor_scatter_nd_sub = {onnx = "ScatterND (reduction add of Neg(updates), opset 16+)", emit = scatter("sub")},
  where_indices = {onnx = "Add(Transpose(NonZero(x)), 1)", emit = function(e, n, x)
    local nz = e:node("Transpose", {e:node("NonZero", {x[1]})}, {perm = {"ints", {1, 0}}})
    return e:node("Add", {nz, e:scalar(1, DT.int64)})
  end},
  unique = {onnx = "Unique (sorted = 0; idx made 1-based)", emit = unique},
  unique_with_counts = {onnx = "Unique (sorted = 0; idx made 1-based)", emit = unique},
  sequence_mask = {onnx = "Less(Range(0, maxlen), Unsqueeze(lengths, -1)) (+ Cast)", emit = function(e, n, x)
    local len = cast_to(e, x[1], DT.int64)
    local maxlen = attr_i(n, 0)
    local m
    if maxlen >= 0 then m = e:scalar(maxlen, DT.int64)
    else m = e:node("ReduceMax", {e:node("Concat", {e:node("Reshape", {len, e:ints({-1})}), e:ints({0})},
      {axis = {"int", 0}})}, {keepdims = {"int", 0}}) end
    local r = e:node("Range", {e:scalar(0, DT.int64), m, e:scalar(1, DT.int64)})
    local y = e:node("Less", {r, e:node("Unsqueeze", {len, e:ints({-1})})})
    if out_dtype(n) ~= DT.bool then y = cast_to(e, y, out_dtype(n)) end
    return y
  end},
  roll = {onnx = "Concat of two Slices per axis (dims known)", emit = function(e, n, x)
    local t = in_type(e, n, 1)
    local shifts, axes = n.attrs.ints, n.attrs.ints2
    local r = t.shape and #t.shape
    local total = {}
    for k, ax in ipairs(axes) do
      if not r then unsupported(n, "an input of unknown rank") end
      ax = ax < 0 and ax + r or ax
      total[ax] = (total[ax] or 0) + shifts[k]
    end
    local y = x[1]
    for ax, sh in pairs(total) do
      local d = t.shape[ax + 1]
      if not d or d < 0 then unsupported(n, "a roll over an unknown dimension") end
      if d > 0 then
        local s = sh % d
        if s ~= 0 then
          local a = e:node("Slice", {y, e:ints({d - s}), e:ints({d}), e:ints({ax})})
          local b = e:node("Slice", {y, e:ints({0}), e:ints({d - s}), e:ints({ax})})
          y = e:node("Concat", {a, b}, {axis = {"int", ax}})
        end
      end
    end
    return y == x[1] and e:node("Identity", {y}) or y
  end},
  det = {onnx = "Det", emit = unary("Det")},
  -- what gradients are made of (a traced function may return a tape's gradient)
  relu_grad = {onnx = "Where(Greater(x, 0), dy, 0)", emit = function(e, n, x)
    return e:node("Where", {e:node("Greater", {x[2], e:scalar(0, in_type(e, n, 2).dtype)}), x[1],
      e:scalar(0, out_dtype(n))})
  end},
  tanh_grad = {onnx = "Mul(dy, Sub(1, Mul(y, y)))", emit = function(e, n, x)
    return e:node("Mul", {x[1], e:node("Sub", {e:scalar(1, out_dtype(n)), e:node("Mul", {x[2], x[2]})})})
  end},
  sigmoid_grad = {onnx = "Mul(dy, Mul(y, Sub(1, y)))", emit = function(e, n, x)
    return e:node("Mul", {x[1], e:node("Mul", {x[2], e:node("Sub", {e:scalar(1, out_dtype(n)), x[2]})})})
  end},
  broadcast_like = {onnx = "Expand(g, Shape(x))", emit = function(e, n, x)
    return e:node("Expand", {x[1], e:node("Shape", {x[2]})})
  end},
  reshape_like = {onnx = "Reshape(g, Shape(x))", emit = function(e, n, x)
    return e:node("Reshape", {x[1], e:node("Shape", {x[2]})})
  end},
  sum_to = {onnx = "ReduceSum over the axes where x (padded with leading 1s) is 1, Reshape to Shape(x)",
    emit = function(e, n, x)
    local rg, rx = need_rank(e, n, 1, "gradient"), need_rank(e, n, 2, "target")
    if rx > rg then unsupported(n, "a target of higher rank") end
    local xs = e:node("Shape", {x[2]})
    local padded = rg > rx and e:node("Concat", {e:ints((function()
      local ones = {}
      for k = 1, rg - rx do ones[k] = 1 end
      return ones
    end)()), xs}, {axis = {"int", 0}}) or xs
    local axes = e:node("Reshape", {e:node("NonZero", {e:node("Equal", {padded, e:scalar(1, DT.int64)})}),
      e:ints({-1})})
    local sum = e:node("ReduceSum", {x[1], axes}, {keepdims = {"int", 1}, noop_with_empty_axes = {"int", 1}})
    return e:node("Reshape", {sum, xs})
  end},
  -- neural networks
  sparse_softmax_cross_entropy_with_logits = {
    onnx = "Neg(GatherElements(LogSoftmax(logits), labels - 1)) (labels 1-based)", emit = function(e, n, x)
    local lsm = e:node("LogSoftmax", {x[2]}, {axis = {"int", -1}})
    local idx = e:node("Unsqueeze", {zero_based(e, x[1]), e:ints({-1})})
    local picked = e:node("GatherElements", {lsm, idx}, {axis = {"int", -1}})
    return e:node("Neg", {e:node("Squeeze", {picked, e:ints({-1})})})
  end},
  softmax_cross_entropy_with_logits = {onnx = "Neg(ReduceSum(Mul(labels, LogSoftmax(logits))))",
    emit = function(e, n, x)
    local axis = attr_i(n, 0)
    local lsm = e:node("LogSoftmax", {x[2]}, {axis = {"int", axis}})
    return e:node("Neg", {e:node("ReduceSum", {e:node("Mul", {x[1], lsm}), e:ints({axis})}, {keepdims = {"int", 0}})})
  end},
  matmul = {onnx = "MatMul (+ Transpose for transpose_a/b)", emit = function(e, n, x)
    local a, b = x[1], x[2]
    local function swap(v, k)
      local r = need_rank(e, n, k, k == 1 and "first input" or "second input")
      local perm = {}
      for d = 1, r do perm[d] = d - 1 end
      perm[r - 1], perm[r] = r - 1, r - 2
      return e:node("Transpose", {v}, {perm = {"ints", perm}})
    end
    if attr_i(n, 0) ~= 0 then a = swap(a, 1) end
    if attr_i(n, 1) ~= 0 then b = swap(b, 2) end
    return e:node("MatMul", {a, b})
  end},
  cond = {onnx = "If (each branch a subgraph)", emit = cond},
  ["while"] = {onnx = "Loop (the condition before the loop and after each iteration)", emit = while_loop},
  lstm_sequence = {onnx = "LSTM (gates reordered, time-major between Transposes; go_backwards: reverse; a mask as sequence_lens)",
    emit = lstm},
  gru_sequence = {onnx = "GRU (linear_before_reset = Keras' reset_after; go_backwards: reverse; a mask as sequence_lens)",
    emit = gru},
  softmax = {onnx = "Softmax", emit = function(e, n, x)
    return e:node("Softmax", {x[1]}, {axis = {"int", attr_i(n, 0)}}) end},
  log_softmax = {onnx = "LogSoftmax", emit = function(e, n, x)
    return e:node("LogSoftmax", {x[1]}, {axis = {"int", attr_i(n, 0)}}) end},
  conv2d = {onnx = "Conv between Transposes (NHWC, HWIO -> NCHW, OIHW)", emit = function(e, n, x)
    local v = n.attrs.ints
    local s, d = {v[1], v[2]}, {v[3] or 1, v[4] or 1}
    local attrs = {strides = {"ints", s}, dilations = {"ints", d}}
    window_padding(e, n, attrs, filter_hw(e, n), s, d)
    local w = e:node("Transpose", {x[2]}, {perm = {"ints", {3, 2, 0, 1}}})
    return to_nhwc(e, e:node("Conv", {to_nchw(e, x[1]), w}, attrs))
  end},
  depthwise_conv2d = {onnx = "Conv with group = C between Transposes", emit = function(e, n, x)
    local ft = in_type(e, n, 2)
    if not (ft.shape and #ft.shape == 4 and ft.shape[3] >= 0 and ft.shape[4] >= 0) then
      unsupported(n, "the filter's shape must be known")
    end
    local kh, kw, c, mult = table.unpack(ft.shape)
    local v = n.attrs.ints
    local s, d = {v[1], v[2]}, {v[3] or 1, v[4] or 1}
    local attrs = {strides = {"ints", s}, dilations = {"ints", d}, group = {"int", c}}
    window_padding(e, n, attrs, {kh, kw}, s, d)
    local w = e:node("Reshape", {x[2], e:ints({kh, kw, 1, c * mult})})
    w = e:node("Transpose", {w}, {perm = {"ints", {3, 2, 0, 1}}})
    return to_nhwc(e, e:node("Conv", {to_nchw(e, x[1]), w}, attrs))
  end},
  conv2d_backprop_input = {onnx = "ConvTranspose between Transposes (conv2d_transpose, Conv2DTranspose)",
    emit = function(e, n, x)
    -- inputs (filters HWIO, dy NHWO); the result is conv2d's input (N, H, W, C), H and W in ints2
    local ft = in_type(e, n, 1)
    if not (ft.shape and #ft.shape == 4 and ft.shape[1] >= 0 and ft.shape[2] >= 0) then
      unsupported(n, "the filter's height and width must be known")
    end
    local v, hw = n.attrs.ints, n.attrs.ints2
    local s, d = {v[1], v[2]}, {v[3] or 1, v[4] or 1}
    local k = {ft.shape[1], ft.shape[2]}
    local p = attr_i(n, 0)
    local before, after, extra = {}, {}, {}
    for j = 1, 2 do
      local span = (k[j] - 1) * d[j] + 1
      local out
      if p == 1 then   -- SAME
        out = (hw[j] + s[j] - 1) // s[j]
        local total = math.max((out - 1) * s[j] + span - hw[j], 0)
        before[j], after[j] = total // 2, total - total // 2
      elseif p == 2 then
        before[j], after[j] = v[5 + 2 * (j - 1)], v[6 + 2 * (j - 1)]
        out = (hw[j] + before[j] + after[j] - span) // s[j] + 1
      else
        before[j], after[j] = 0, 0
        out = (hw[j] - span) // s[j] + 1
      end
      -- the rows the forward conv never read come back as output_padding
      extra[j] = hw[j] - ((out - 1) * s[j] + span - before[j] - after[j])
    end
    local w = e:node("Transpose", {x[1]}, {perm = {"ints", {3, 2, 0, 1}}})
    local y = e:node("ConvTranspose", {to_nchw(e, x[2]), w}, {strides = {"ints", s}, dilations = {"ints", d},
      pads = {"ints", {before[1], before[2], after[1], after[2]}}, output_padding = {"ints", extra}})
    return to_nhwc(e, y)
  end},
  max_pool2d = {onnx = "MaxPool between Transposes", emit = function(e, n, x)
    local v = n.attrs.ints
    local attrs = {kernel_shape = {"ints", {v[1], v[2]}}, strides = {"ints", {v[3], v[4]}}}
    window_padding(e, n, attrs, {v[1], v[2]}, {v[3], v[4]}, {1, 1})
    return to_nhwc(e, e:node("MaxPool", {to_nchw(e, x[1])}, attrs))
  end},
  avg_pool2d = {onnx = "AveragePool (padding not counted) between Transposes", emit = function(e, n, x)
    local v = n.attrs.ints
    local attrs = {kernel_shape = {"ints", {v[1], v[2]}}, strides = {"ints", {v[3], v[4]}},
                   count_include_pad = {"int", 0}}
    window_padding(e, n, attrs, {v[1], v[2]}, {v[3], v[4]}, {1, 1})
    return to_nhwc(e, e:node("AveragePool", {to_nchw(e, x[1])}, attrs))
  end},
}
M.OPS = OPS

--- The operator table as a sorted list {{op=, onnx=}} (docs generation).
function M.operators()
  local list = {}
  for op, d in pairs(OPS) do list[#list + 1] = {op = op, onnx = d.onnx} end
  table.sort(list, function(a, b) return a.op < b.op end)
  return list
end

-- {==== save
local function is_cf(f) local mt = getmetatable(f) return mt and mt.__name == "tf.ConcreteFunction" end
local function is_pf(f) local mt = getmetatable(f) return mt and mt.__name == "tf.fn" end

-- the concrete function to export
local function concrete(tf, f, opts)
  if is_cf(f) then
    if opts.input_signature then
      fail("ValueError", "tf.onnx.save: input_signature is given, but a concrete function has its own")
    end
    return f
  end
  local sig = opts.input_signature
  if sig ~= nil and type(sig) ~= "table" then
    fail("TypeError", "tf.onnx.save: input_signature must be a list of tf.TensorSpec, got %s", type(sig))
  end
  if not sig and type(f) == "table" then   -- a Keras model declared with an input_shape: its batch unknown
    local ok, bis = pcall(function()
      return rawget(f, "_batch_input_shape") or (f.layers and f.layers[1] and rawget(f.layers[1], "_batch_input_shape"))
    end)
    if ok and type(bis) == "table" then
      local rank = 0
      for k in pairs(bis) do if math.type(k) == "integer" and k > rank then rank = k end end
      local dims = {}
      for i = 1, rank do dims[i] = bis[i] or -1 end
      sig = {tf.TensorSpec(dims, rawget(f, "_input_dtype") or tf.float32)}
    end
  end
  if not is_pf(f) then
    if type(f) ~= "function" and not (type(f) == "table" and getmetatable(f) and getmetatable(f).__call) then
      fail("TypeError", "tf.onnx.save: expected a tf.fn, a concrete function, a Keras model or a Lua function, got %s",
        type(f))
    end
    local obj = f
    if sig and #sig == 1 then   -- a Keras model's one input is named 'inputs', as Keras names call's argument
      f = tf.fn(function(inputs) return obj(inputs) end)
    else
      f = tf.fn(function(...) return obj(...) end)
    end
  end
  if sig then return f:get_concrete_function(table.unpack(sig, 1, sig.n or #sig)) end
  local ok, cf = pcall(f.get_concrete_function, f)
  if ok then return cf end
  local cfs = f:concrete_functions()
  if #cfs == 1 then return cfs[1] end
  fail("ValueError", "tf.onnx.save: give opts.input_signature (a list of tf.TensorSpec): the function has %d traces",
    #cfs)
end

value_info = function(name, o, dim_name, what)
  if not o.shape then
    fail("ValueError", "tf.onnx.save: %s '%s' has an unknown rank, which an ONNX model's %ss cannot have: %s",
      what, name, what, what == "input" and "give a tf.TensorSpec with a shape (nil or -1 dims are fine)"
        or "make the function's output rank known (e.g. tf.ensure_shape or a reshape)")
  end
  local dims
  if o.shape then
    dims = {}
    for k, d in ipairs(o.shape) do
      if d >= 0 then dims[k] = d else dims[k] = dim_name and dim_name(k) or false end
    end
  end
  local et = ONNX_TYPE[o.dtype]
  if not et then fail("TypeError", "tf.onnx.save: '%s' has a dtype ONNX has not", name) end
  -- false entries (unnamed unknown dims) are packed as empty dimensions
  for k = 1, dims and #dims or 0 do if dims[k] == false then dims[k] = true end end
  return {name = name, elem_type = et, dims = dims}
end

local OPTS = {input_signature = true, opset = true, producer_name = true, doc_string = true, output_names = true,
              input_names = true}

-- {==== graphs: the main one and control flow's functions (If branches, Loop bodies)
--- Emit the nodes of luatf graph G into e.nodes; 'in_names' are the ONNX
-- names of its inputs (placeholders, then the values a function captured).
-- Returns the ONNX names of its outputs and their types.
emit_graph = function(e, G, in_names)
  local tf = e.tf
  local core = tf.core
  local nodes, outputs = core.onnx_graph_read(G)
  local saved_types, saved_prefix = e.types, e.prefix
  local types, ref = {}, {}
  e.types = types
  local pk = 0
  for _, n in ipairs(nodes) do
    for k, o in ipairs(n.outputs) do types[n.name .. ":" .. (k - 1)] = o end
    if n.op == "Placeholder" then
      pk = pk + 1
      ref[n.name .. ":0"] = in_names[pk]
    end
  end
  if pk ~= #in_names then
    fail("InternalError", "tf.onnx.save: graph has %d placeholders for %d inputs", pk, #in_names)
  end
  -- constants: captured tensors and variables become initializers (read now)
  for _, n in ipairs(nodes) do
    if n.value then
      local v = n.value
      if n.outputs[1] and n.outputs[1].dtype == 7 then   -- a variable handle (LTF_DTYPE_RESOURCE)
        local name = core.variable_info(v)
        ref[n.name .. ":0"] = e:const(core.variable_read(v), nil, e.names[name] and n.name or name)
      elseif n.outputs[1] and ONNX_TYPE[n.outputs[1].dtype] then
        ref[n.name .. ":0"] = e:const(v, nil, n.name)
      else
        unsupported(n, "a constant of a dtype ONNX has not")
      end
    end
  end
  for _, n in ipairs(nodes) do
    if n.op == "read_variable" then
      ref[n.name .. ":0"] = ref[n.inputs[1]]
    elseif n.op ~= "Placeholder" and not n.value then
      local d = OPS[n.op]
      if not d then
        fail("UnimplementedError", "tf.onnx.save: op '%s' (node '%s') has no ONNX form", n.op, n.name)
      end
      local x = {}
      for k, s in ipairs(n.inputs) do
        x[k] = ref[s]
        if not x[k] then
          fail("UnimplementedError", "tf.onnx.save: input %d of op '%s' (node '%s') is '%s', which has no ONNX form",
            k, n.op, n.name, s)
        end
      end
      e.prefix = n.name
      local outs = {d.emit(e, n, x)}
      -- (an output left out, as the recurrent ops' gradient workspace, is refused where it is used)
      for k = 1, #n.outputs do ref[n.name .. ":" .. (k - 1)] = outs[k] end
    end
  end
  local outs, otypes = {}, {}
  for k, s in ipairs(outputs) do
    outs[k], otypes[k] = ref[s], types[s]
    if not outs[k] then fail("UnimplementedError", "tf.onnx.save: output %d ('%s') has no ONNX form", k, s) end
  end
  e.types, e.prefix = saved_types, saved_prefix
  return outs, otypes
end
-- }====

--- tf.onnx.save(f, path, opts) -> the bytes written (also when path is nil:
-- then nothing is written). opts: input_signature = {tf.TensorSpec, ...}
-- (a tf.fn without its own signature, a Keras model, a Lua function),
-- opset = 13..17 (default 17), input_names/output_names, doc_string.
function M.save(f, path, opts)
  local tf = require("tf")
  opts = opts or {}
  if type(opts) ~= "table" then fail("TypeError", "tf.onnx.save: options must be a table, got %s", type(opts)) end
  for k in pairs(opts) do
    if not OPTS[k] then fail("ValueError", "tf.onnx.save: unknown option '%s'", tostring(k)) end
  end
  if path ~= nil and type(path) ~= "string" then
    fail("TypeError", "tf.onnx.save: path must be a string, got %s", type(path))
  end
  for _, key in ipairs({"input_names", "output_names"}) do
    local v = opts[key]
    if v ~= nil then
      if type(v) ~= "table" then fail("TypeError", "tf.onnx.save: %s must be a list of strings, got %s", key, type(v)) end
      for k, name in pairs(v) do
        if math.type(k) ~= "integer" or type(name) ~= "string" or name == "" then
          fail("TypeError", "tf.onnx.save: %s must be a list of non-empty strings", key)
        end
      end
    end
  end
  for _, key in ipairs({"doc_string", "producer_name"}) do
    if opts[key] ~= nil and type(opts[key]) ~= "string" then
      fail("TypeError", "tf.onnx.save: %s must be a string, got %s", key, type(opts[key]))
    end
  end
  local opset = opts.opset or MAX_OPSET
  if math.type(opset) ~= "integer" or opset < MIN_OPSET or opset > MAX_OPSET then
    fail("ValueError", "tf.onnx.save: opset %s is not supported (%d to %d)", tostring(opset), MIN_OPSET, MAX_OPSET)
  end
  local cf = concrete(tf, f, opts)
  local G = cf._G
  local inputs = tf.core.graph_signature(G)
  local e = new_emitter(tf, opset)
  -- inputs (placeholders, in order), with dim_params for unknown dims
  local gin, in_names = {}, {}
  for k, t in ipairs(inputs) do
    local name = opts.input_names and opts.input_names[k] or t.name
    if e.names[name] then fail("ValueError", "tf.onnx.save: input name '%s' is used twice", name) end
    e.names[name] = true
    gin[k] = value_info(name, t, function(d) return d == 1 and "batch" or sfmt("%s_dim%d", name, d) end, "input")
    in_names[k] = name
  end
  -- every op, control flow's functions included, has an ONNX form: refused by name before anything else
  local function precheck(g)
    for _, n in ipairs(tf.core.onnx_graph_read(g)) do
      if n.op ~= "Placeholder" and n.op ~= "read_variable" and not n.value and not OPS[n.op] then
        fail("UnimplementedError", "tf.onnx.save: op '%s' (node '%s') has no ONNX form", n.op, n.name)
      end
      for _, fg in ipairs(n.functions or {}) do precheck(fg) end
    end
  end
  precheck(G)
  local out_values, out_types = emit_graph(e, G, in_names)
  if #out_values == 0 then
    fail("ValueError", "tf.onnx.save: the function returns no tensor: an ONNX model needs at least one output")
  end
  e.prefix = "outputs"
  -- outputs: an Identity each, named output_1, ... (or opts.output_names)
  local gout = {}
  for k = 1, #out_values do
    local name = opts.output_names and opts.output_names[k] or ("output_" .. k)
    if e.names[name] then fail("ValueError", "tf.onnx.save: output name '%s' is used already", name) end
    e.names[name] = true
    e.nodes[#e.nodes + 1] = {op_type = "Identity", name = e:fresh_node("Identity"), inputs = {out_values[k]},
                             outputs = {name}, attrs = {}}
    gout[k] = value_info(name, out_types[k], nil, "output")
  end
  local model = {
    ir_version = 8,
    opsets = {{domain = "", version = opset}},
    producer_name = opts.producer_name or "luatf",
    producer_version = tf.__version__ or tf.version or "",
    doc_string = opts.doc_string,
    graph = {name = cf.name or "luatf", nodes = e.nodes, initializers = e.inits, inputs = gin, outputs = gout},
  }
  local bytes = tf.core.onnx_pack(model)
  local st = path and tf.core.internal.fs_stat(path)
  if st and not st.is_regular then
    -- a device, pipe or socket (/dev/stdout, a FIFO): written in place, never renamed over
    if st.is_directory then fail("InvalidArgumentError", "tf.onnx.save: '%s' is a directory", path) end
    local fh, err = io.open(path, "wb")
    if not fh then fail("NotFoundError", "tf.onnx.save: cannot write '%s': %s", path, tostring(err)) end
    local okw, werr = fh:write(bytes)
    local okc, cerr = fh:close()
    if not okw or not okc then fail("DataLossError", "tf.onnx.save: cannot write '%s': %s", path, tostring(werr or cerr)) end
  elseif path then
    local tmp = path .. ".tmp"
    local fh, err = io.open(tmp, "wb")
    if not fh then fail("NotFoundError", "tf.onnx.save: cannot write '%s': %s", path, tostring(err)) end
    local okw, werr = fh:write(bytes)
    local okc, cerr = fh:close()
    if not okw or not okc then
      os.remove(tmp)
      fail("DataLossError", "tf.onnx.save: cannot write '%s': %s", path, tostring(werr or cerr))
    end
    local ok, rerr = os.rename(tmp, path)
    if not ok then os.remove(tmp) fail("NotFoundError", "tf.onnx.save: cannot write '%s': %s", path, tostring(rerr)) end
  end
  return bytes
end
-- }====

return M
