--- tf.fn: TensorFlow's tf.function for Lua closures (DESIGN section 5).
--
-- `local g = tf.fn(f, opts)` is a polymorphic function. A call computes the
-- trace type of its arguments (lua/tf/trace_type.lua), dispatches to the most
-- specific cached concrete function whose type it is a subtype of, or traces
-- a new one: `f` runs once with symbolic tensors while the engine records a
-- graph (core/graph.c), which is optimized and planned once, then replayed.
--
-- The hot path (all arguments tensors or simple Lua values) builds its cache
-- key in one C call (core.trace_key) and replays the plan (core.graph_run).
-- Under a recording GradientTape a call runs the plan and records a single
-- custom-gradient entry whose gradient is another traced graph, built once
-- per concrete function.
return function(tf)
  local core = tf.core
  local raise = tf.errors.raise
  local TT = tf.trace_type
  local Variable = tf.Variable.mt
  local is_tensor = tf.is_tensor
  local by_enum = tf.core.internal.dtype_by_enum
  local trace_key = core.trace_key
  local graph_run = core.graph_run
  local graph_run_paused = core.graph_run_paused
  local pack, unpack, concat = table.pack, table.unpack, table.concat
  local sfmt = string.format
  local select, getmetatable, rawequal = select, getmetatable, rawequal

  local run_eagerly = false
  local traced_f
  local trace_stack = {}   -- one state per trace in progress: {pf=, policy=, created=}

  -- {==== logger (warnings)
  local logger = {}
  --- The warnings of tf.fn (retracing) go through this logger; by default to
  -- stderr as `WARNING:tf:<text>`. `logger:set_handler(function(level, text) end)`.
  function logger.warning(self, text)
    if self.handler then
      self.handler("WARNING", text)
    else
      io.stderr:write("WARNING:tf:", text, "\n")
    end
  end
  function logger.set_handler(self, fn)
    if fn ~= nil and type(fn) ~= "function" then
      raise("TypeError", "set_handler: expected a function or nil, got " .. type(fn), 2)
    end
    self.handler = fn
  end
  function tf.get_logger() return logger end
  -- }====

  -- {==== tf.config.run_functions_eagerly
  --- Run every tf.fn as its plain Lua closure (no tracing): for debugging.
  function tf.config.run_functions_eagerly(flag) run_eagerly = flag and true or false end
  function tf.config.functions_run_eagerly() return run_eagerly end
  -- }====

  -- {==== keyword arguments
  local KW = {__name = "tf.kwargs"}
  --- tf.kwargs{b = 3}: keyword arguments for a tf.fn or concrete function call,
  -- bound by parameter name (`square(x, tf.kwargs{b = 3})`).
  function tf.kwargs(t)
    local k = {}
    for key, v in pairs(t) do k[key] = v end
    return setmetatable(k, KW)
  end
  -- }====

  -- {==== parameters and binding
  local function param_names(f)
    local info = debug.getinfo(f, "Su")
    local names = {}
    if info.what ~= "C" then
      -- a stripped chunk (string.dump(f, true), luac -s) has no local names:
      -- its parameters are then args_1, args_2, ... (positional as before)
      for i = 1, info.nparams do names[i] = debug.getlocal(f, i) or ("args_" .. i) end
    end
    return names, info.isvararg or info.what == "C", info
  end

  local function pname(pf, i)
    local np = #pf._names
    if i <= np then return pf._names[i] end
    return "args_" .. (i - np)
  end

  local function pkind(pf, i)
    if pf._vararg then return "POSITIONAL_ONLY" end
    return i <= #pf._names and "POSITIONAL_OR_KEYWORD" or "POSITIONAL_ONLY"
  end

  local function args_text(values, count)
    local parts = {}
    for i = 1, count do parts[i] = TT.value_text(values[i]) end
    return "(" .. concat(parts, ", ") .. ")"
  end

  local function bind_error(what, values, count, sig)
    return sfmt("Binding inputs to tf.fn failed due to `%s`. Received args: %s for signature: %s.", what,
      args_text(values, count), sig)
  end

  --- Arguments by parameter position: values, count (varargs extend the list).
  local RESOURCE = 7    -- ORDER DTYPE: LTF_DTYPE_RESOURCE, a variable's handle
  local function bind(pf, sigtext, ...)
    local n = select("#", ...)
    local values = {...}
    local kw
    if n > 0 and getmetatable(values[n]) == KW then
      kw = values[n]
      values[n] = nil
      n = n - 1
    end
    local np = #pf._names
    local count = np
    if n > np then
      if not pf._vararg then
        raise("TypeError", bind_error("too many positional arguments", values, n, sigtext()), 4)
      end
      count = n
    end
    if kw then
      for k, v in pairs(kw) do
        local idx = pf._index[k]
        if not idx or pf._vararg then
          raise("TypeError", bind_error(sfmt("got an unexpected keyword argument '%s'", tostring(k)), values, n,
            sigtext()), 4)
        end
        if idx <= n and values[idx] ~= nil then
          raise("TypeError", bind_error(sfmt("multiple values for argument '%s'", k), values, n, sigtext()), 4)
        end
        values[idx] = v
      end
    end
    for i = 1, count do
      local v = values[i]
      if is_tensor(v) and v:_dtype_id() == RESOURCE then
        raise("TypeError", sfmt("tf.fn '%s': argument '%s' is a variable handle (dtype resource), which a traced " ..
          "function does not take: pass the tf.Variable itself (v) or its value (v:value())", pf._name,
          pname(pf, i)), 4)
      end
    end
    return values, count
  end
  -- }====

  -- {==== FunctionType: one trace type per parameter
  local FT = {}
  FT.__index = FT

  local function make_ft(pf, types, n)
    local keys = {}
    local unverified = false
    for i = 1, n do
      keys[i] = types[i]:key()
      unverified = unverified or types[i].unverified
    end
    return setmetatable({pf = pf, types = types, n = n, key = concat(keys, ";"), unverified = unverified}, FT)
  end

  local function ft_of_values(pf, values, n, allow_specs)
    local ctx, types = {}, {}
    for i = 1, n do types[i] = TT.from_value(values[i], ctx, allow_specs) end
    return make_ft(pf, types, n)
  end

  function FT.equals(a, b)
    if a.n ~= b.n or a.key ~= b.key then return false end
    if not a.unverified then return true end
    for i = 1, a.n do
      if a.types[i] ~= b.types[i] then return false end
    end
    return true
  end

  function FT.is_subtype_of(a, b)
    if a.n ~= b.n then return false end
    for i = 1, a.n do
      if not a.types[i]:is_subtype_of(b.types[i]) then return false end
    end
    return true
  end

  function FT.supertype(a, b)
    if a.n ~= b.n then return nil end
    local types = {}
    for i = 1, a.n do
      types[i] = a.types[i]:most_specific_common_supertype({b.types[i]})
      if types[i] == nil then return nil end
    end
    return make_ft(a.pf, types, a.n)
  end

  function FT.params_text(ft)
    local parts = {}
    for i = 1, ft.n do parts[i] = pname(ft.pf, i) .. ": " .. tostring(ft.types[i]) end
    return "(" .. concat(parts, ", ") .. ")"
  end
  FT.__tostring = FT.params_text
  -- }====

  -- {==== outputs: structure templates
  -- A returned value becomes {k="t", i=} (a tensor: graph output i),
  -- {k="v", v=} (a Lua value, returned as is) or {k="tab", keys=, items=}.
  local function encode(v, flat)
    if is_tensor(v) then
      flat[#flat + 1] = v
      return {k = "t", i = #flat}
    end
    if getmetatable(v) == Variable then
      flat[#flat + 1] = v:value()
      return {k = "t", i = #flat}
    end
    if type(v) == "table" and getmetatable(v) == nil then
      local keys = TT.sorted_keys(v)
      local items = {}
      for j, key in ipairs(keys) do items[j] = encode(v[key], flat) end
      return {k = "tab", keys = keys, items = items, array = TT.is_array(v)}
    end
    return {k = "v", v = v}
  end

  local function decode(node, outs)
    local k = node.k
    if k == "t" then return outs[node.i] end
    if k == "v" then return node.v end
    local t = {}
    for j, key in ipairs(node.keys) do t[key] = decode(node.items[j], outs) end
    return t
  end

  local function out_type(node, otypes)
    local k = node.k
    if k == "t" then
      local o = otypes[node.i]
      return TT.new_spec(o.shape, by_enum[o.dtype], nil)
    end
    if k == "v" then return TT.from_value(node.v, {}) end
    if node.array then
      local items = {}
      for j, it in ipairs(node.items) do items[j] = out_type(it, otypes) end
      return setmetatable({items = items}, TT.List)
    end
    local map = {}
    for j, key in ipairs(node.keys) do map[key] = out_type(node.items[j], otypes) end
    return setmetatable({keys = node.keys, map = map}, TT.Dict)
  end
  -- }====

  -- {==== Graph: cf.graph
  local Graph = {}
  Graph.__index = Graph
  Graph.__name = "tf.Graph"

  local function new_graph(G, name)
    return setmetatable({_G = G, name = name}, Graph)
  end

  function Graph.__tostring(g) return sfmt("<tf.Graph '%s'>", g.name) end

  local function type_text(o)
    return by_enum[o.dtype] and by_enum[o.dtype].name or "resource", TT.shape_text(o.shape)
  end

  --- The nodes in program order: {name=, op=, inputs={"x:0", ...}, outputs=
  -- {{dtype=, shape=}}, live=, stateful=}; the live ones (those that run)
  -- unless opts.all.
  -- the names of a control-flow node's functions, in order
  local FUNCTION_NAMES = {cond = {"true_fn", "false_fn"}, ["while"] = {"cond", "body"}}

  function Graph.nodes(g, opts)
    local nodes = core.graph_nodes(g._G, opts and opts.all)
    for _, n in ipairs(nodes) do
      for _, o in ipairs(n.outputs) do
        local dt, sh = type_text(o)
        o.dtype = by_enum[o.dtype] or "resource"
        o.shape = tf.TensorShape.new(o.shape)
        o.text = dt .. sh
      end
      if n.functions then   -- cond: {true_fn=, false_fn=}; while: {cond=, body=} (tf.Graph each)
        local names, fns = FUNCTION_NAMES[n.op] or {"f1", "f2"}, {}
        for k, G in ipairs(n.functions) do fns[names[k]] = new_graph(G, n.name .. "/" .. names[k]) end
        n.functions = fns
      end
    end
    return nodes
  end
  Graph.get_operations = Graph.nodes

  --- TensorFlow's GraphDef view: {node = {{name=, op=, input={"a", "a"}}, ...}}
  -- (inputs named "node" for output 0, "node:k" otherwise).
  function Graph.as_graph_def(g)
    local out = {}
    for i, n in ipairs(core.graph_nodes(g._G)) do
      local input = {}
      for j, s in ipairs(n.inputs) do input[j] = s:gsub(":0$", "") end
      out[i] = {name = n.name, op = n.op, input = input}
    end
    return {node = out}
  end

  local function dot_escape(s) return (s:gsub('[\\"]', "\\%0")) end

  --- The graph in Graphviz's dot language: one box per live node, edges
  -- labelled with the producer's dtype and shape; the functions of
  -- control-flow nodes (cond branches, while cond and body) are drawn as
  -- clusters inside, joined to their node by dashed edges.
  function Graph.to_dot(g)
    local lines = {sfmt('digraph "%s" {', dot_escape(g.name)), '  node [shape=box, fontname="Helvetica"];'}
    local function emit(G, prefix, indent)
      local nodes = core.graph_nodes(G)
      local types = {}
      local function id(name) return dot_escape(prefix .. name) end
      for _, n in ipairs(nodes) do
        local shape = ""
        if n.op == "Placeholder" then shape = ", shape=ellipse"
        elseif n.op == "Const" then shape = ", shape=note"
        elseif n.stateful then shape = ", style=bold" end
        local o = n.outputs[1]
        local text = ""
        if o then
          local dt, sh = type_text(o)
          text = "\\n" .. dt .. " " .. sh
        end
        for k, ot in ipairs(n.outputs) do
          local dt, sh = type_text(ot)
          types[n.name .. ":" .. (k - 1)] = dt .. " " .. sh
        end
        lines[#lines + 1] = sfmt('%s"%s" [label="%s\\n%s%s"%s];', indent, id(n.name), dot_escape(n.name),
          dot_escape(n.op), text, shape)
        if n.functions then
          local names = FUNCTION_NAMES[n.op] or {"f1", "f2"}
          for k, F in ipairs(n.functions) do
            local sub = prefix .. n.name .. "/" .. names[k] .. "/"
            lines[#lines + 1] = sfmt('%ssubgraph "cluster_%s" {', indent, dot_escape(sub))
            lines[#lines + 1] = sfmt('%s  label="%s"; style=rounded;', indent, dot_escape(prefix .. n.name .. "/" .. names[k]))
            local first = emit(F, sub, indent .. "  ")
            lines[#lines + 1] = indent .. "}"
            if first then
              lines[#lines + 1] = sfmt('%s"%s" -> "%s" [style=dashed, label="%s"];', indent, id(n.name),
                dot_escape(sub .. first), names[k])
            end
          end
        end
      end
      for _, n in ipairs(nodes) do
        for _, s in ipairs(n.inputs) do
          local src = s:match("^(.*):%d+$")
          lines[#lines + 1] = sfmt('%s"%s" -> "%s" [label="%s"];', indent, id(src), id(n.name),
            dot_escape(types[s] or ""))
        end
      end
      return nodes[1] and nodes[1].name
    end
    emit(g._G, "", "  ")
    lines[#lines + 1] = "}"
    return concat(lines, "\n") .. "\n"
  end
  -- }====

  -- {==== ConcreteFunction
  local CF = {}
  CF.__index = CF
  CF.__name = "tf.ConcreteFunction"

  local FLOAT = {[0] = true, [1] = true, [8] = true, [9] = true}   -- float32, float64, float16, bfloat16 (ORDER DTYPE)

  local function new_cf(pf, G, ft, ret, nret, nflat, nth)
    local _, otypes = core.graph_signature(G)
    local direct = nret == #otypes
    for i = 1, nret do
      if ret[i].k ~= "t" or ret[i].i ~= i then direct = false end
    end
    local cf = setmetatable({_pf = pf, _G = G, _ft = ft, _ret = ret, _nret = nret, _direct = direct,
                             _nflat = nflat, _otypes = otypes, name = pf._name}, CF)
    cf.graph = new_graph(G, pf._gname .. "_" .. nth)
    -- gradients: a graph of the backward pass when the forward pass has no
    -- side effects but variable reads; otherwise op by op on the tape
    local grad_ok = true
    for _, n in ipairs(core.graph_nodes(G)) do
      if n.stateful and n.op ~= "read_variable" then grad_ok = false end
    end
    local diff = {}
    for k, o in ipairs(otypes) do
      if FLOAT[o.dtype] then diff[#diff + 1] = k end
    end
    local vars, captures = {}, {}
    for _, h in ipairs(core.graph_captures(G)) do
      local name, trainable, dt, _, id = core.variable_info(h)
      captures[#captures + 1] = {id = id, name = name}
      if trainable and FLOAT[dt] then vars[#vars + 1] = h end
    end
    cf._captures = captures
    cf._consts = core.graph_consts(G)   -- eager tensors read: a tape watching one gets its gradient
    cf._grad_ok = grad_ok and #diff > 0
    cf._diff_outs = diff
    cf._train_vars = vars
    cf.function_type = setmetatable({cf = cf}, {
      __tostring = function(t) return t.cf:pretty_printed_signature(false) end,
      __name = "tf.FunctionType"})
    return cf
  end

  --- A concrete function over a finished graph made elsewhere (tf.saved_model.load):
  -- opts.name, opts.params (parameter names), opts.types (one trace type per
  -- parameter), opts.ret / opts.nret (the output template, as encode makes it).
  function CF._from_graph(G, opts)
    local names = opts.params or {}
    local index = {}
    for i, n in ipairs(names) do index[n] = i end
    local name = opts.name or "fn"
    local pf = {_name = name, _gname = name:gsub("[^%w_]", "_"):sub(1, 40), _names = names, _vararg = false,
                _index = index}
    local ft = make_ft(pf, opts.types, #opts.types)
    local nflat = #core.graph_signature(G)
    return new_cf(pf, G, ft, opts.ret, opts.nret, nflat, 1)
  end

  function CF.output_type(cf)
    if cf._nret == 0 then return TT.Literal(nil) end
    if cf._nret == 1 then return out_type(cf._ret[1], cf._otypes) end
    local parts = {}
    for i = 1, cf._nret do parts[i] = tostring(out_type(cf._ret[i], cf._otypes)) end
    return setmetatable({}, {__tostring = function() return "Tuple[" .. concat(parts, ", ") .. "]" end})
  end

  --- TensorFlow's layout: verbose lists parameters, output type and captures;
  -- otherwise `(a: TensorSpec(...)) -> TensorSpec(...)`.
  function CF.pretty_printed_signature(cf, verbose)
    if verbose == nil then verbose = true end
    local ft = cf._ft
    if not verbose then return ft:params_text() .. " -> " .. tostring(cf:output_type()) end
    local lines = {"Input Parameters:"}
    for i = 1, ft.n do
      lines[#lines + 1] = sfmt("  %s (%s): %s", pname(cf._pf, i), pkind(cf._pf, i), tostring(ft.types[i]))
    end
    lines[#lines + 1] = "Output Type:"
    lines[#lines + 1] = "  " .. tostring(cf:output_type())
    lines[#lines + 1] = "Captures:"
    if #cf._captures == 0 then
      lines[#lines + 1] = "  None"
    else
      for _, c in ipairs(cf._captures) do
        lines[#lines + 1] = sfmt("  %d: TensorSpec(shape=(), dtype=tf.resource, name=None)", c.id)
      end
    end
    return concat(lines, "\n")
  end

  function CF.__tostring(cf) return "ConcreteFunction " .. cf:pretty_printed_signature(true) end

  --- The variables the graph reads or writes (captured by reference).
  function CF.captured_variables(cf)
    local out = {}
    for i, c in ipairs(cf._captures) do out[i] = c.name .. ":0" end
    return out
  end

  function CF._outputs(cf, ...)
    if cf._direct then return ... end
    local outs = pack(...)
    local res = {}
    for i = 1, cf._nret do res[i] = decode(cf._ret[i], outs) end
    return unpack(res, 1, cf._nret)
  end

  -- {==== gradients across the call
  --- The backward graph: (flat inputs..., dy...) -> gradients of the
  -- differentiable outputs for the float inputs and the trainable variables
  -- read. It recomputes the forward pass under a tape while traced, once.
  function CF._backward(cf, consts, key)
    consts = consts or {}
    key = key or ""
    cf._bwds = cf._bwds or {}
    local bwd = cf._bwds[key]
    if bwd then return bwd end
    local itypes = core.graph_signature(cf._G)
    local G = core.graph_begin(cf.graph.name .. "_grad")
    local ok, res = pcall(function()
      local xs, dys = {}, {}
      for i, t in ipairs(itypes) do xs[i] = core.graph_placeholder(G, by_enum[t.dtype], t.shape, t.name) end
      for k, idx in ipairs(cf._diff_outs) do
        local o = cf._otypes[idx]
        dys[k] = core.graph_placeholder(G, by_enum[o.dtype], o.shape, "dy")
      end
      local tape = core.tape_new(false, false)
      local sources, slots = {}, {}
      for i, x in ipairs(xs) do
        if FLOAT[itypes[i].dtype] then
          sources[#sources + 1] = x
          slots[#sources] = i
        end
      end
      for j, h in ipairs(cf._train_vars) do
        sources[#sources + 1] = h
        slots[#sources] = #xs + j
      end
      for j, c in ipairs(consts) do   -- captured eager tensors a tape watches
        sources[#sources + 1] = c
        slots[#sources] = #xs + #cf._train_vars + j
      end
      for _, s in ipairs(sources) do core.tape_watch(tape, s) end
      core.tape_push(tape)
      local ys = pack(pcall(graph_run, cf._G, unpack(xs, 1, #xs)))
      core.tape_pop(tape)
      if not ys[1] then error(ys[2], 0) end
      local targets = {}
      for k, idx in ipairs(cf._diff_outs) do targets[k] = ys[idx + 1] end
      local grads = core.tape_gradient(tape, targets, sources, dys, 0)
      local outs, map = {}, {}
      for j = 1, #sources do
        if grads[j] ~= nil then
          outs[#outs + 1] = grads[j]
          map[#outs] = slots[j]
        end
      end
      return {outs = outs, map = map}
    end)
    if not ok then
      core.graph_abort(G)
      error(res, 0)
    end
    core.graph_end(G, res.outs)
    bwd = {G = G, map = res.map, graph = new_graph(G, cf.graph.name .. "_grad")}
    cf._bwds[key] = bwd
    cf._bwd = bwd
    return bwd
  end

  local function backprop(cf, inputs, n, snaps, douts, consts, key, ...)
    local bwd = cf:_backward(consts, key)
    local vars = cf._train_vars
    -- a variable assigned since the forward pass: its value then is used
    local restore
    for i, h in ipairs(vars) do
      local cur = core.variable_peek(h)
      if not core.same_data(cur, snaps[i]) then
        restore = restore or {}
        restore[i] = cur
        core.variable_assign(h, snaps[i])
      end
    end
    local args = {}
    for i = 1, n do args[i] = inputs[i] end
    for k = 1, #douts do
      local d = select(k, ...)
      args[n + k] = d or tf.zeros_like(douts[k])
    end
    local res = pack(pcall(graph_run, bwd.G, unpack(args, 1, n + #douts)))
    if restore then
      for i, cur in pairs(restore) do core.variable_assign(vars[i], cur) end
    end
    if not res[1] then error(res[2], 0) end
    local grads = {}
    for j, slot in pairs(bwd.map) do grads[slot] = res[j + 1] end
    return grads
  end

  --- A call while a tape records: the plan runs, then one custom-gradient
  -- entry stands for the whole call on every tape that watches an input.
  function CF._call_taped(cf, flat)
    local n = cf._nflat
    local outs = pack(graph_run_paused(cf._G, unpack(flat, 1, n)))
    local vars = cf._train_vars
    local snaps = {}
    -- read each variable once on the tapes: they watch what is accessed
    for i = 1, #vars do snaps[i] = core.variable_read(vars[i]) end
    local inputs = {}
    for i = 1, n do inputs[i] = flat[i] end
    for i = 1, #vars do inputs[n + i] = vars[i] end
    -- captured eager tensors that a recording tape tracks are inputs too
    local consts, key = {}, {}
    for j, c in ipairs(cf._consts) do
      if core.tapes_track(c) then
        consts[#consts + 1] = c
        key[#key + 1] = j
        inputs[#inputs + 1] = c
      end
    end
    key = table.concat(key, ",")
    local douts = {}
    for k, idx in ipairs(cf._diff_outs) do douts[k] = outs[idx] end
    core.record_custom(inputs, douts, function(...)
      return backprop(cf, inputs, n, snaps, douts, consts, key, ...)
    end)
    return cf:_outputs(unpack(outs, 1, outs.n))
  end
  -- }====

  --- Run on the flat tensor inputs; 'mode' from core.trace_key.
  function CF._call_flat(cf, mode, flat)
    if mode == 1 and cf._grad_ok then return cf:_call_taped(flat) end
    if mode == 1 then
      -- replayed op by op on the tapes: a variable read only inside a
      -- control-flow function (cond/while) is not an eager read the tapes
      -- see, so read each trainable variable once: watch_accessed_variables
      -- then watches it, and the control-flow op's gradient reaches it
      for _, h in ipairs(cf._train_vars) do core.variable_read(h) end
    end
    return cf:_outputs(graph_run(cf._G, unpack(flat, 1, cf._nflat)))
  end

  --- cf(...): the arguments are checked against the traced types (tensors:
  -- same dtype and a shape that fits; Lua values: equal to the traced ones,
  -- which are also their defaults).
  function CF.__call(cf, ...)
    local pf, ft = cf._pf, cf._ft
    local sig = function() return cf:pretty_printed_signature(false) end
    local values, count = bind(pf, sig, ...)
    if count > ft.n then
      raise("TypeError", bind_error("too many positional arguments", values, count, sig()), 2)
    end
    local cast = {}
    for i = 1, ft.n do
      local c, err = ft.types[i]:cast(values[i])
      if err then raise("TypeError", bind_error(err, values, count, sig()), 2) end
      cast[i] = c
    end
    local flat = {}
    for i = 1, ft.n do ft.types[i]:flatten(cast[i], flat) end
    local _, mode = trace_key()
    if mode == 2 then
      return cf:_outputs(graph_run(cf._G, unpack(flat, 1, cf._nflat)))
    end
    return cf:_call_flat(mode, flat)
  end

  --- The graph of the backward pass (used when a tape records through a
  -- call), nil until a gradient has needed it.
  function CF.gradient_graph(cf) return cf._bwd and cf._bwd.graph end

  --- The raw graph function: flat tensor inputs (one per placeholder), flat outputs.
  function CF.inference_fn(cf, ...) return graph_run(cf._G, ...) end
  -- }====

  -- {==== retracing: reasons, TensorFlow's frequent-tracing detector
  local detectors = {}
  local HISTORY, THRESHOLD, MAX_WARNINGS = 10, 5, 2

  local function detector_for(f)
    local key
    if type(f) == "function" then
      local info = debug.getinfo(f, "S")
      key = info.what == "C" and tostring(f) or (info.source .. ":" .. info.linedefined)
    else
      key = tostring(f)     -- a callable object
    end
    local d = detectors[key]
    if not d then
      d = {slots = {}, count = 0, warnings = 0, pending = 0}
      detectors[key] = d
    end
    return d
  end

  local function det_flush(d)
    if d.pending > 0 then
      local s = d.slots
      if #s == 0 then s[1] = 0 end
      s[#s] = s[#s] + d.pending
      d.count = d.count + d.pending
      d.pending = 0
    end
  end

  --- A call that traced: returns the text of a warning when one is due.
  local function det_traced(d, fname)
    det_flush(d)
    local s = d.slots
    d.count = d.count + 1
    s[#s + 1] = 1
    while #s > 0 and d.count - s[1] > HISTORY do d.count = d.count - table.remove(s, 1) end
    if d.warnings >= MAX_WARNINGS or #s < THRESHOLD then return nil end
    d.warnings = d.warnings + 1
    return sfmt("%d out of the last %d calls to %s triggered tf.fn retracing. Tracing is expensive and the " ..
      "excessive number of tracings could be due to (1) creating tf.fn repeatedly in a loop, (2) passing tensors " ..
      "with different shapes, (3) passing Lua objects instead of tensors. For (1), please define your tf.fn " ..
      "outside of the loop. For (2), tf.fn has reduce_retracing=true option that can avoid unnecessary " ..
      "retracing. For (3), please refer to https://www.tensorflow.org/guide/function#controlling_retracing and " ..
      "https://www.tensorflow.org/api_docs/python/tf/function for more details.", #s, d.count, fname)
  end
  -- }====

  -- {==== tf.init_scope
  --- tf.init_scope(f, ...): f(...) with every trace in progress set aside
  -- and the tapes paused (TensorFlow's init_scope): ops inside run eagerly
  -- even while a tf.fn traces, so their effects happen now, once, and are
  -- not part of the graph. Without 'f', the <close> form:
  -- `do local _ <close> = tf.init_scope() ... end`.
  local ScopeMT = {__name = "tf.init_scope"}
  ScopeMT.__index = ScopeMT
  function ScopeMT.__close(s) core.init_scope_exit(s._token) end
  ScopeMT.exit = ScopeMT.__close
  function tf.init_scope(f, ...)
    if f == nil then return setmetatable({_token = core.init_scope_enter()}, ScopeMT) end
    if type(f) ~= "function" then
      raise("TypeError", sfmt("init_scope: argument 1 ('f') expected function or nothing, got %s", type(f)), 2)
    end
    return core.init_scope(f, ...)
  end
  -- }====

  -- {==== variables created while tracing
  local MSG_SINGLETON = "tf.fn '%s': tf.function only supports singleton tf.Variables created on the first call. " ..
    "Make sure the tf.Variable is only created once or created outside tf.fn. See " ..
    "https://www.tensorflow.org/guide/function#creating_tfvariables for more information."
  local MSG_LATER = "tf.fn '%s': Creating variables on a non-first call to a function decorated with tf.function " ..
    "(tf.fn); create them outside, or on the first call only (if not self.v then self.v = tf.Variable(...) end)."

  local function creation_allowed()
    local st = trace_stack[#trace_stack]
    return st == nil or st.policy == "allow"
  end

  tf.Variable.creation_hooks[#tf.Variable.creation_hooks + 1] = function()
    local st = trace_stack[#trace_stack]
    if not st then return end
    if st.policy == "singleton" then
      raise("ValueError", sfmt(MSG_SINGLETON, st.pf._name), 4)
    elseif st.policy == "later" then
      raise("ValueError", sfmt(MSG_LATER, st.pf._name), 4)
    end
    st.created = true
  end

  -- An initial value computed inside a trace is symbolic: lift it (compute
  -- it now, from the nodes it depends on), as TensorFlow's init_scope.
  do
    local vmt = getmetatable(tf.Variable)
    local create = vmt.__call
    vmt.__call = function(self, init, opts)
      if #trace_stack > 0 and creation_allowed() and core.is_tracing() then
        if type(init) == "function" then init = init() end
        if is_tensor(init) and init:is_symbolic() then
          local ok, r = pcall(core.graph_lift, init)
          if not ok then
            local msg = type(r) == "table" and r.message or tostring(r)
            raise(type(r) == "table" and r.kind or "ValueError", "tf.Variable: the initial value " ..
              msg:gsub("^lift: the value ", ""), 2)
          end
          init = r
        end
      end
      return create(self, init, opts)
    end
  end
  -- }====

  -- {==== PolymorphicFunction
  local PF = {}
  local PFmt = {__index = PF, __name = "tf.fn"}

  function PFmt.__tostring(pf)
    if pf._named then return sfmt("<tf.fn '%s' (%s)>", pf._name, pf._where) end
    return sfmt("<tf.fn %s>", pf._name)
  end

  local function sig_text_of(pf)
    return function()
      if pf._sig then return pf._sig:params_text() end
      local parts = {}
      for i = 1, #pf._names do parts[i] = pf._names[i] end
      if pf._vararg then parts[#parts + 1] = "..." end
      return "(" .. concat(parts, ", ") .. ")"
    end
  end

  --- Most specific cached concrete function for call type 'ft', or nil.
  local function lookup(pf, ft)
    local cf = pf._by_key[ft.key]
    if cf and (not ft.unverified or ft:equals(cf._ft)) then return cf end
    local best
    for _, c in ipairs(pf._cache) do
      if ft:is_subtype_of(c._ft) and (best == nil or c._ft:is_subtype_of(best._ft)) then best = c end
    end
    return best
  end

  local function add_cf(pf, cf)
    pf._cache[#pf._cache + 1] = cf
    if not pf._by_key[cf._ft.key] then pf._by_key[cf._ft.key] = cf end
    pf._fast, pf._nfast = {}, 0     -- memoized answers may have become less specific
  end

  --- The function a trace runs: AutoGraph's conversion of f (lua/tf/autograph),
  -- made at the first trace, unless autograph = false.
  function traced_f(pf)
    local g = pf._agf
    if g then return g end
    g = pf._f
    if pf.autograph and tf.autograph then g = tf.autograph.convert(g) end
    pf._agf = g
    return g
  end

  --- Trace 'f' once for type 'ft' (placeholders from it, other values as given).
  local function trace_once(pf, ft, values, policy)
    local G = core.graph_begin(pf._gname)
    local state = {pf = pf, policy = policy, created = false}
    trace_stack[#trace_stack + 1] = state
    -- The closure runs in a coroutine of its own: a trace belongs to the
    -- code that started it, so a yield out of the traced function (which
    -- would leave the trace open while other code runs) ends it with an error.
    local co = coroutine.create(function()
      local args = {}
      local ctx = {graph = G}
      for i = 1, ft.n do
        ctx.name = pname(pf, i)
        args[i] = ft.types[i]:placeholder(values and values[i], ctx)
      end
      return pack(traced_f(pf)(unpack(args, 1, ft.n)))
    end)
    local ok, res = coroutine.resume(co)
    trace_stack[#trace_stack] = nil
    if ok and coroutine.status(co) ~= "dead" then
      coroutine.close(co)
      ok, res = false, tf.errors.new("RuntimeError", sfmt("tf.fn: '%s' yielded while being traced; a traced "
        .. "function cannot yield (call coroutine.yield outside it, or use tf.config.run_functions_eagerly)",
        pf._name))
    end
    if not ok then
      core.graph_abort(G)
      error(tf.autograph and tf.autograph.explain(res) or res, 0)
    end
    local flat, ret = {}, {}
    for i = 1, res.n do ret[i] = encode(res[i], flat) end
    local ok2, err = pcall(core.graph_end, G, flat)
    if not ok2 then
      core.graph_abort(G)
      error(err, 0)
    end
    pf._nth = pf._nth + 1
    local nflat = 0
    for _ in ipairs(core.graph_signature(G)) do nflat = nflat + 1 end
    return new_cf(pf, G, ft, ret, res.n, nflat, pf._nth), state.created
  end

  --- A new trace for 'ft', with TensorFlow's variable-creation rule: the
  -- first trace may create variables, and is then traced again with creation
  -- forbidden (a function creating variables at every call fails there).
  local function trace(pf, ft, values)
    local first = pf._ntraces == 0 and not pf._traced_before
    local cf, created = trace_once(pf, ft, values, first and "allow" or "later")
    pf._ntraces = pf._ntraces + 1
    pf._traced_before = true
    if created then
      cf = trace_once(pf, ft, values, "singleton")
      pf._ntraces = pf._ntraces + 1
    end
    add_cf(pf, cf)
    return cf
  end

  --- Why a call retraces: its type against the concrete function used last.
  local function retrace_reason(pf, ft, target)
    local ref = pf._last_cf or pf._cache[#pf._cache]
    local out = {}
    if ref then
      local rt = ref._ft
      if rt.n ~= ft.n then
        out[1] = sfmt("%d arguments -> %d arguments", rt.n, ft.n)
      else
        for i = 1, ft.n do ft.types[i]:diff(rt.types[i], pname(pf, i), out) end
      end
    end
    if #out == 0 then out[1] = "no cached trace fits " .. ft:params_text() end
    local r = concat(out, ", ")
    if target ~= ft then
      local g = {}
      for i = 1, target.n do
        if target.types[i]:key() ~= ft.types[i]:key() then
          g[#g + 1] = pname(pf, i) .. ": " .. target.types[i]:describe()
        end
      end
      if #g > 0 then r = r .. " (traced as " .. concat(g, ", ") .. ")" end
    end
    return r
  end

  --- A call that found no concrete function: generalize (reduce_retracing),
  -- account the retrace, trace.
  local function trace_for_call(pf, ft, values, eager_call)
    local target = ft
    if pf._reduce then
      for _, c in ipairs(pf._cache) do
        local s = target:supertype(c._ft)
        if s then target = s end
      end
    end
    if pf._ntraces > 0 then
      local reason = retrace_reason(pf, ft, target)
      local reasons = pf._reasons
      reasons[#reasons + 1] = reason
      local limit = pf._max_traces
      local policy = pf._on_retrace
      if policy ~= nil and pf._ntraces + 1 > limit then
        local text = sfmt("tf.fn '%s' retraces (trace %d, max_traces = %d): %s", pf._name, pf._ntraces + 1, limit,
          reason)
        if policy == "error" then
          table.remove(reasons)
          raise("RuntimeError", text, 4)
        elseif policy == "warn" then
          logger:warning(text)
        else
          policy({fn = pf, reason = reason, count = pf._ntraces + 1})
        end
      end
    end
    local cf = trace(pf, target, values)
    if eager_call then
      local w = det_traced(pf._det, tostring(pf))
      if w then
        local recent = {}
        for i = math.max(1, #pf._reasons - 4), #pf._reasons do recent[#recent + 1] = "  " .. pf._reasons[i] end
        if #recent > 0 then w = w .. "\nRecent retrace reasons:\n" .. concat(recent, "\n") end
        logger:warning(w)
      end
    end
    return cf
  end

  --- Remember the answer for a C key: the tensor positions among the raw
  -- arguments, and the objects whose identity the key holds.
  local function memo(pf, key, has_objects, cf, ...)
    local n = select("#", ...)
    local pos, all, objs = {}, true, nil
    for i = 1, n do
      local v = select(i, ...)
      if is_tensor(v) then
        pos[#pos + 1] = i
      else
        all = false
        if has_objects and v ~= nil then
          local tv = type(v)
          if tv ~= "number" and tv ~= "string" and tv ~= "boolean" and getmetatable(v) ~= Variable then
            objs = objs or setmetatable({n = 0}, {__mode = "v"})
            objs.n = objs.n + 1
            objs[objs.n] = v
          end
        end
      end
    end
    if #pos ~= cf._nflat then return end
    if pf._nfast >= 4096 then pf._fast, pf._nfast = {}, 0 end
    pf._nfast = pf._nfast + 1
    pf._fast[key] = {cf = cf, all = all and n == cf._nflat, pos = pos, objs = objs}
  end

  local function casted(pf, values, count)
    local sig = pf._sig
    if count > sig.n then
      raise("TypeError", bind_error("too many positional arguments", values, count, sig:params_text()), 4)
    end
    local cast, changed = {}, false
    for i = 1, sig.n do
      local c, err = sig.types[i]:cast(values[i])
      if err then raise("TypeError", bind_error(err, values, count, sig:params_text()), 4) end
      cast[i] = c
      changed = changed or not rawequal(c, values[i])
    end
    return cast, changed
  end

  local function sig_cf(pf)
    local cf = pf._cache[1]
    if not cf then cf = trace(pf, pf._sig, nil) end
    return cf
  end

  --- Calls that the memo did not answer.
  local function slow_call(pf, key, mode, has_objects, ...)
    local values, count = bind(pf, pf._sigtext, ...)
    local cf, flatvalues, types
    if pf._sig then
      local changed
      flatvalues, changed = casted(pf, values, count)
      if #pf._cache > 0 then
        cf = pf._cache[1]
        pf._det.pending = pf._det.pending + 1
      else
        cf = sig_cf(pf)
        det_traced(pf._det, tostring(pf))     -- one trace: never reaches the warning
      end
      if changed then key = nil end
      types = pf._sig.types
    else
      local ft = ft_of_values(pf, values, count)
      cf = lookup(pf, ft)
      if cf then
        pf._det.pending = pf._det.pending + 1
      else
        cf = trace_for_call(pf, ft, values, true)
      end
      flatvalues = values
      types = cf._ft.types
    end
    pf._last_cf = cf
    local n = select("#", ...)
    if key and not (n > 0 and getmetatable((select(n, ...))) == KW) then memo(pf, key, has_objects, cf, ...) end
    local flat = {}
    for i = 1, cf._ft.n do types[i]:flatten(flatvalues[i], flat) end
    return cf:_call_flat(mode, flat)
  end

  --- A call while another function is traced: the closure runs inline.
  local function inline_call(pf, ...)
    local res
    if pf._sig then
      local values, count = bind(pf, pf._sigtext, ...)
      local cast = casted(pf, values, count)
      res = pack(traced_f(pf)(unpack(cast, 1, pf._sig.n)))
    else
      res = pack(traced_f(pf)(...))
    end
    for i = 1, res.n do
      if getmetatable(res[i]) == Variable then res[i] = res[i]:value() end
    end
    return unpack(res, 1, res.n)
  end

  -- tf.summary.trace_on's hook: told of every tf.fn call until trace_export
  local call_hook = nil
  function tf.core.internal.set_fn_call_hook(f)
    if f ~= nil and type(f) ~= "function" then
      tf.errors.raise("TypeError", ("set_fn_call_hook: expected a function or nil, got %s"):format(
        tf.is_tensor(f) and "a tf.Tensor" or type(f)), 2)
    end
    call_hook = f
  end

  function PFmt.__call(pf, ...)
    if call_hook then call_hook(pf) end
    if run_eagerly then return traced_f(pf)(...) end
    local key, mode, has_objects = trace_key(...)
    if mode == 2 then return inline_call(pf, ...) end
    if key then
      local e = pf._fast[key]
      if e then
        local objs = e.objs
        local alive = true
        if objs then
          for i = 1, objs.n do
            if objs[i] == nil then alive = false break end
          end
        end
        if alive then
          local det = pf._det
          det.pending = det.pending + 1
          local cf = e.cf
          pf._last_cf = cf
          if e.all then
            if mode == 0 then
              if cf._direct then return graph_run(cf._G, ...) end
              return cf:_outputs(graph_run(cf._G, ...))
            end
            return cf:_call_flat(mode, {...})
          end
          local flat, pos = {}, e.pos
          for j = 1, #pos do flat[j] = (select(pos[j], ...)) end
          return cf:_call_flat(mode, flat)
        end
        pf._fast[key] = nil
      end
    end
    return slow_call(pf, key, mode, has_objects, ...)
  end

  --- The concrete function for these arguments (tensors, tf.TensorSpec, Lua
  -- values, nested tables of them), traced when not cached yet.
  function PF.get_concrete_function(pf, ...)
    if pf._sig then
      if select("#", ...) > 0 then
        local values, count = bind(pf, pf._sigtext, ...)
        local sig = pf._sig
        if count > sig.n then
          raise("TypeError", bind_error("too many positional arguments", values, count, sig:params_text()), 2)
        end
        for i = 1, sig.n do
          local _, err = sig.types[i]:cast(values[i])
          if err then raise("TypeError", bind_error(err, values, count, sig:params_text()), 2) end
        end
      end
      return sig_cf(pf)
    end
    local values, count = bind(pf, pf._sigtext, ...)
    local ft = ft_of_values(pf, values, count, true)
    local cf = lookup(pf, ft)
    if not cf then cf = trace_for_call(pf, ft, values, false) end
    return cf
  end
  PF.experimental_get_concrete_function = PF.get_concrete_function

  --- Every cached concrete function's signature, in the order they were traced.
  function PF.pretty_printed_concrete_signatures(pf, verbose)
    if verbose == nil then verbose = true end
    if pf._sig then sig_cf(pf) end
    local parts = {}
    for i, cf in ipairs(pf._cache) do parts[i] = cf:pretty_printed_signature(verbose) end
    return concat(parts, verbose and "\n\n" or "\n")
  end

  --- Number of traces made (TensorFlow's experimental_get_tracing_count).
  function PF.tracing_count(pf) return pf._ntraces end
  PF.experimental_get_tracing_count = PF.tracing_count

  --- Why each retrace happened, oldest first: "x: float32(3,) -> float32(5,)".
  function PF.retrace_reasons(pf)
    local out = {}
    for i, r in ipairs(pf._reasons) do out[i] = r end
    return out
  end

  --- The cached concrete functions, in the order they were traced.
  function PF.concrete_functions(pf)
    local out = {}
    for i, cf in ipairs(pf._cache) do out[i] = cf end
    return out
  end

  --- Forget every trace (the tracing count goes back to 0).
  function PF.clear_cache(pf)
    pf._cache, pf._by_key, pf._fast, pf._nfast = {}, {}, {}, 0
    pf._ntraces, pf._last_cf = 0, nil
  end

  --- The Lua function being traced.
  function PF.lua_function(pf) return pf._f end
  PF.python_function = PF.lua_function

  local OPTIONS = {input_signature = true, reduce_retracing = true, experimental_relax_shapes = true,
                   autograph = true, name = true, max_traces = true, on_retrace = true, jit_compile = true}

  local function check_signature(sig)
    if type(sig) ~= "table" or getmetatable(sig) ~= nil then
      raise("TypeError", sfmt("input_signature must be either a tuple or a list, got %s.", type(sig)), 4)
    end
    local bad = {}
    local function walk(x)
      local mt = getmetatable(x)
      if mt == TT.TensorSpec then return end
      if type(x) == "table" and mt == nil then
        for _, v in pairs(x) do walk(v) end
        return
      end
      bad[#bad + 1] = x
    end
    for _, s in ipairs(sig) do walk(s) end
    if #bad > 0 then
      local a, t = {}, {}
      for i, b in ipairs(bad) do
        a[i] = tostring(b)
        t[i] = getmetatable(b) == TT.VariableSpec and "VariableSpec" or type(b)
      end
      raise("TypeError", sfmt("input_signature must be a possibly nested sequence of TensorSpec objects, got " ..
        "invalid args [%s] with types [%s].", concat(a, ", "), concat(t, ", ")), 4)
    end
  end

  --- tf.fn(f, {input_signature=, reduce_retracing=false, autograph=true, name=,
  -- max_traces=, on_retrace=}) -> a polymorphic function (tf.function).
  -- tf.fn(opts) returns a decorator: `local g = tf.fn{reduce_retracing = true}(f)`.
  function tf.fn(f, opts)
    if type(f) == "table" and getmetatable(f) == nil and opts == nil then
      local o = f
      return function(g) return tf.fn(g, o) end
    end
    if type(f) ~= "function" and not (getmetatable(f) and getmetatable(f).__call) then
      raise("TypeError", "tf.fn: expected a function, got " .. type(f), 2)
    end
    opts = opts or {}
    for k in pairs(opts) do
      if not OPTIONS[k] then
        raise("TypeError", sfmt("tf.fn: unknown option '%s' (accepted: autograph, input_signature, jit_compile, " ..
          "max_traces, name, on_retrace, reduce_retracing)", tostring(k)), 2)
      end
    end
    local names, vararg, info
    if type(f) == "function" then
      names, vararg, info = param_names(f)
    else
      names, vararg, info = {}, true, {short_src = "?", linedefined = 0, what = "C"}
    end
    local where = info.what == "C" and "C function" or (info.short_src .. ":" .. info.linedefined)
    local name = opts.name or "fn"
    if type(name) ~= "string" then raise("TypeError", "tf.fn: name must be a string", 2) end
    local on_retrace = opts.on_retrace
    if on_retrace ~= nil and on_retrace ~= "error" and on_retrace ~= "warn" and type(on_retrace) ~= "function" then
      raise("ValueError", "tf.fn: on_retrace must be \"error\", \"warn\" or a function, got " ..
        tostring(on_retrace), 2)
    end
    local max_traces = opts.max_traces
    if max_traces ~= nil and (math.type(max_traces) ~= "integer" or max_traces < 1) then
      raise("ValueError", "tf.fn: max_traces must be a positive integer", 2)
    end
    if max_traces ~= nil and on_retrace == nil then on_retrace = "error" end
    local reduce = opts.reduce_retracing
    if reduce == nil then reduce = opts.experimental_relax_shapes end
    local index = {}
    for i, n in ipairs(names) do index[n] = i end
    local pf = setmetatable({
      _f = f, _name = opts.name or (info.what == "C" and "fn" or ("function at " .. where)), _where = where,
      _named = opts.name ~= nil,
      _gname = name:gsub("[^%w_]", "_"):sub(1, 40),
      _names = names, _vararg = vararg, _index = index,
      _cache = {}, _by_key = {}, _fast = {}, _nfast = 0,
      _ntraces = 0, _nth = 0, _reasons = {}, _reduce = reduce and true or false,
      _max_traces = max_traces or 1, _on_retrace = on_retrace,
      _det = detector_for(f),
      autograph = opts.autograph ~= false,
    }, PFmt)
    pf._sigtext = sig_text_of(pf)
    if opts.input_signature ~= nil then
      local sig = opts.input_signature
      check_signature(sig)
      local np = #names
      if #sig > np and not vararg then
        raise("TypeError", sfmt("input_signature contains %d extra type constraints.", #sig - np), 2)
      end
      local count = math.max(#sig, np)
      local types = {}
      for i = 1, count do
        if i <= #sig then
          types[i] = TT.from_value(sig[i], {}, true)
        else
          types[i] = TT.Literal(nil)
        end
      end
      pf._sig = make_ft(pf, types, count)
      pf._reduce = false
    end
    return pf
  end

  tf["function"] = tf.fn

  --- True for a tf.fn polymorphic function.
  function tf.is_fn(x) return getmetatable(x) == PFmt end
  tf.ConcreteFunction = CF
  -- }====
end
