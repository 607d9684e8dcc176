--- Functional control flow: tf.cond, tf.while_loop, tf.switch_case,
-- tf.case and tf.TensorArray.
--
-- Eagerly (no symbolic tensor involved) these run as plain Lua: the chosen
-- branch is called, the loop iterates in Lua, each op runs (and is taped)
-- as usual, as in TensorFlow 2. While a tf.fn traces, each branch, loop
-- condition and body is traced once into a function graph (symbolic tensors
-- of the enclosing trace it uses are captured as inputs) and the call adds
-- one cond/while node: the plan executor runs the chosen branch, or the
-- whole loop, with no Lua per branch or iteration. Gradients of those
-- nodes are built from their functions (core/ops/control.c), so tapes work
-- through them, first and higher order.
return function(tf)
  local core = tf.core
  local internal = core.internal
  local is_tensor = tf.is_tensor
  local pack, unpack = table.pack, table.unpack

  local function raise(kind, fmt, ...)
    internal.raise(kind, fmt:format(...))
  end

  local function symbolic(v) return is_tensor(v) and v:is_symbolic() end

  -- {==== Nested structures of tensors
  -- A structure is a tensor, a Lua number/boolean (converted to a tensor
  -- where a node needs one), a TensorArray, nil, or a table of structures
  -- (array part in order, then the other keys sorted). flatten gives the
  -- leaves in a fixed order and a skeleton that pack_as refills.
  local sorted_keys = require("tf.util").nonarray_keys

  local function is_ta(v) return type(v) == "table" and tf.TensorArray ~= nil and getmetatable(v) == tf.TensorArray end

  local function flatten(v, flat, path)
    flat = flat or {}
    path = path or "output"
    if v == nil then return {kind = "nil", path = path}, flat end
    if is_tensor(v) then
      flat[#flat + 1] = v
      return {kind = "tensor", path = path}, flat
    end
    local mt = type(v) == "table" and getmetatable(v)
    if mt and mt.__tf_tensor then    -- a variable: its value
      flat[#flat + 1] = tf.convert_to_tensor(v)
      return {kind = "tensor", path = path}, flat
    end
    if is_ta(v) then
      flat[#flat + 1] = v:_buffer()
      return {kind = "ta", path = path, ta = v}, flat
    end
    if type(v) == "number" or type(v) == "boolean" then
      flat[#flat + 1] = tf.constant(v)
      return {kind = "tensor", path = path}, flat
    end
    if type(v) == "table" and not mt then
      local keys, n = sorted_keys(v)
      local node = {kind = "table", path = path, n = n, keys = keys, items = {}}
      for i = 1, n do node.items[i] = flatten(v[i], flat, path .. "[" .. i .. "]") end
      for _, k in ipairs(keys) do
        node.items[k] = flatten(v[k], flat, path .. (type(k) == "string" and ("." .. k) or ("[" .. tostring(k) .. "]")))
      end
      return node, flat
    end
    raise("TypeError", "%s is a %s: control flow carries tensors, numbers, booleans, TensorArrays and tables of them",
          path, type(v))
  end

  local function pack_as(node, flat, pos)
    pos = pos or {1}
    if node.kind == "nil" then return nil end
    if node.kind == "tensor" then
      local t = flat[pos[1]]
      pos[1] = pos[1] + 1
      return t
    end
    if node.kind == "ta" then
      local t = flat[pos[1]]
      pos[1] = pos[1] + 1
      return node.ta:_with_buffer(t)
    end
    local out = {}
    for i = 1, node.n do out[i] = pack_as(node.items[i], flat, pos) end
    for _, k in ipairs(node.keys) do out[k] = pack_as(node.items[k], flat, pos) end
    return out
  end

  local function kind_text(node)
    if node.kind == "table" then return "a table" end
    if node.kind == "nil" then return "nil" end
    if node.kind == "ta" then return "a TensorArray" end
    return "a tensor"
  end

  -- the first difference between two skeletons: path, what each has
  local function same_structure(a, b)
    if a.kind ~= b.kind then return a.path, kind_text(a), kind_text(b) end
    if a.kind ~= "table" then return nil end
    if a.n ~= b.n then return a.path, ("a table of %d entries"):format(a.n), ("a table of %d entries"):format(b.n) end
    if #a.keys ~= #b.keys then return a.path, "a table with other keys", "a table with other keys" end
    for i, k in ipairs(a.keys) do
      if b.keys[i] ~= k then return a.path .. "." .. tostring(k), "a value", "nil" end
    end
    for i = 1, a.n do
      local p, x, y = same_structure(a.items[i], b.items[i])
      if p then return p, x, y end
    end
    for _, k in ipairs(a.keys) do
      local p, x, y = same_structure(a.items[k], b.items[k])
      if p then return p, x, y end
    end
    return nil
  end

  -- leaves in flat order with their paths
  local function leaf_paths(node, out)
    out = out or {}
    if node.kind == "tensor" or node.kind == "ta" then
      out[#out + 1] = node.path
    elseif node.kind == "table" then
      for i = 1, node.n do leaf_paths(node.items[i], out) end
      for _, k in ipairs(node.keys) do leaf_paths(node.items[k], out) end
    end
    return out
  end
  -- }====

  --- Trace `fn(...)` into a function graph whose placeholders are typed like
  -- `inputs` (a flat array of tensors or {dtype=, shape=} specs): returns
  -- the graph (finished), the skeleton of what fn returned, and the count of
  -- returned values. `wrap` turns the placeholders back into fn's arguments.
  local function trace_function(name, specs, wrap, fn)
    local G = core.graph_begin(name, true)
    local ok, res = pcall(function()
      local ph = {}
      for i, s in ipairs(specs) do
        ph[i] = core.graph_placeholder(G, s.dtype, s.shape, s.name or "loop_var")
      end
      local r = pack(fn(wrap(ph)))
      local skel, flat = flatten(r.n <= 1 and r[1] or {unpack(r, 1, r.n)}, {}, "output")
      return {skel = skel, flat = flat, n = r.n}
    end)
    if not ok then
      core.graph_abort(G)
      error(res, 0)
    end
    local ok2, err = pcall(core.graph_end, G, res.flat)
    if not ok2 then
      core.graph_abort(G)
      error(err, 0)
    end
    return G, res.skel, res.n, res.flat
  end

  local function spec_of(t, shape)
    return {dtype = t.dtype, shape = shape or t:_dims()}
  end

  -- {==== tf.cond
  local function as_pred(pred, op)
    if type(pred) == "boolean" then return pred end
    local mt = type(pred) == "table" and getmetatable(pred)
    if not is_tensor(pred) and not (mt and mt.__tf_tensor) then
      raise("TypeError", "%s: 'pred' must be a boolean or a bool tensor, got %s", op,
            pred == nil and "nil" or type(pred))
    end
    pred = tf.convert_to_tensor(pred)
    if pred.dtype ~= tf.bool then
      raise("TypeError", "%s: 'pred' must be a bool tensor, got dtype %s", op, pred.dtype.name)
    end
    local dims = pred:_dims()
    if dims and #dims > 0 then
      raise("InvalidArgumentError", "%s: 'pred' must be a scalar, got shape %s", op, tostring(pred.shape))
    end
    return pred
  end

  --- tf.cond(pred, true_fn, false_fn): the value(s) of true_fn() when pred
  -- holds, else of false_fn(). A Lua boolean or an eager pred just calls one
  -- branch; a symbolic pred traces both and adds one cond node. Branches
  -- return the same structure (nested tables of tensors) with the same
  -- dtypes; shapes may differ (they merge to the common partial shape).
  function tf.cond(pred, true_fn, false_fn, name)
    if type(true_fn) ~= "function" or type(false_fn) ~= "function" then
      raise("TypeError", "cond: 'true_fn' and 'false_fn' must be functions")
    end
    pred = as_pred(pred, "cond")
    if type(pred) == "boolean" then
      if pred then return true_fn() end
      return false_fn()
    end
    if not symbolic(pred) then
      if pred:item() then return true_fn() end
      return false_fn()
    end
    name = name or "cond"
    local none = function() return end
    local Gt, st, nt, ft = trace_function(name .. "_true", {}, none, true_fn)
    local Gf, sf, nf, ff = trace_function(name .. "_false", {}, none, false_fn)
    local path, a, b = same_structure(st, sf)
    if path or nt ~= nf then
      if not path then path, a, b = "output", nt .. " values", nf .. " values" end
      raise("ValueError", "cond: true_fn and false_fn return different structures: %s is %s in true_fn and %s in false_fn",
            path, a, b)
    end
    local paths = leaf_paths(st)
    for i, p in ipairs(paths) do
      if ft[i].dtype ~= ff[i].dtype then
        raise("TypeError", "cond: %s is %s in true_fn and %s in false_fn", p, ft[i].dtype.name, ff[i].dtype.name)
      end
    end
    local outs = pack(internal.cond(pred, Gt, Gf, core.graph_captured(Gt), core.graph_captured(Gf)))
    local res = pack_as(st, outs)
    if nt <= 1 then return res end
    return unpack(res, 1, nt)
  end
  -- }====

  -- {==== tf.while_loop
  -- the values a body returned, as the list of loop variables
  local function body_values(n, r)
    if r.n == 1 and n > 1 and type(r[1]) == "table" and not is_tensor(r[1]) and not getmetatable(r[1]) then
      return r[1]
    end
    if r.n == 1 and n == 1 and type(r[1]) == "table" and not is_tensor(r[1]) and not getmetatable(r[1])
       and #r[1] == 1 and next(r[1], 1) == nil then
      return r[1]
    end
    return {unpack(r, 1, r.n)}
  end

  local function invariant_dims(inv, path)
    if inv == nil then return nil end
    if getmetatable(inv) == tf.TensorShape.mt then
      if not inv._known then return "unknown" end
      return {table.unpack(inv._dims)}
    end
    if type(inv) == "table" then
      local d = {}
      for i = 1, #inv do d[i] = (inv[i] == nil or inv[i] == tf.None) and -1 or inv[i] end
      return d
    end
    raise("TypeError", "while_loop: shape invariant of %s must be a TensorShape or a table of dims", path)
  end

  --- tf.while_loop(cond, body, loop_vars, {maximum_iterations=,
  -- shape_invariants=, parallel_iterations=}): repeat `vars = body(vars...)`
  -- while `cond(vars...)` holds; returns the final loop variables as a
  -- table. cond and body receive the loop variables as separate arguments;
  -- body returns them as a table or as several values. Loop variables are
  -- tensors, numbers, booleans, TensorArrays or nested tables of them.
  function tf.while_loop(cond, body, loop_vars, opts)
    if type(cond) ~= "function" or type(body) ~= "function" then
      raise("TypeError", "while_loop: 'cond' and 'body' must be functions")
    end
    if type(loop_vars) ~= "table" or is_tensor(loop_vars) or getmetatable(loop_vars) then
      raise("TypeError", "while_loop: 'loop_vars' must be a table of loop variables")
    end
    opts = opts or {}
    local maxit = opts.maximum_iterations
    if maxit ~= nil and is_tensor(maxit) then
      if maxit:is_symbolic() then
        raise("UnimplementedError", "while_loop: 'maximum_iterations' must be a number or an eager tensor")
      end
      maxit = maxit:item()
    end
    if maxit ~= nil and (math.type(maxit) ~= "integer" or maxit < 0) then
      raise("InvalidArgumentError", "while_loop: 'maximum_iterations' must be an integer >= 0, got %s", tostring(maxit))
    end
    local n = #loop_vars
    local skel, flat = flatten(loop_vars, {}, "loop_vars")
    local traced = internal.is_tracing()
    for _, t in ipairs(flat) do if t:is_symbolic() then traced = true end end
    if not traced then
      -- eager: a Lua loop, each op run (and taped) as usual
      local vars, it = loop_vars, 0
      while true do
        if maxit and it >= maxit then break end
        local c = cond(unpack(vars, 1, n))
        if is_tensor(c) then c = c:item() end
        if not c then break end
        vars = body_values(n, pack(body(unpack(vars, 1, n))))
        it = it + 1
      end
      return vars
    end
    local paths = leaf_paths(skel)
    local invs = opts.shape_invariants
    local specs = {}
    local flat_inv = {}
    if invs ~= nil then
      -- one invariant per leaf, in the loop variables' structure
      local function walk(node, inv)
        if node.kind == "tensor" then
          flat_inv[#flat_inv + 1] = invariant_dims(inv, node.path) or false
        elseif node.kind == "ta" then
          flat_inv[#flat_inv + 1] = false
        elseif node.kind == "table" then
          for i = 1, node.n do walk(node.items[i], type(inv) == "table" and getmetatable(inv) == nil and inv[i] or nil) end
          for _, k in ipairs(node.keys) do walk(node.items[k], type(inv) == "table" and inv[k] or nil) end
        end
      end
      walk(skel, invs)
    end
    for i, t in ipairs(flat) do
      local d = flat_inv[i]
      local shape = t:_dims()
      if d == "unknown" then shape = nil elseif d then shape = d end
      local ta = nil
      specs[i] = {dtype = t.dtype, shape = shape, name = "loop_var"}
    end
    -- TensorArrays of dynamic size grow: their first dim is not invariant
    do
      local pos = 0
      local function tas(node)
        if node.kind == "tensor" then pos = pos + 1
        elseif node.kind == "ta" then
          pos = pos + 1
          local sp = specs[pos]
          if sp.shape then sp.shape = node.ta:_invariant(sp.shape) end
        elseif node.kind == "table" then
          for i = 1, node.n do tas(node.items[i]) end
          for _, k in ipairs(node.keys) do tas(node.items[k]) end
        end
      end
      tas(skel)
    end
    local function wrap(ph) return unpack(pack_as(skel, ph), 1, n) end
    local Gc, csk, cn, cflat = trace_function("while_cond", specs, wrap, function(...)
      local c = cond(...)
      if type(c) == "boolean" then c = tf.constant(c) end
      if not is_tensor(c) then
        raise("TypeError", "while_loop: cond must return a bool tensor or a boolean, got %s", type(c))
      end
      return c
    end)
    local _ = csk, cn
    if cflat[1].dtype ~= tf.bool then
      raise("TypeError", "while_loop: cond must return a bool tensor, got dtype %s", cflat[1].dtype.name)
    end
    local Gb, bsk, _, bflat = trace_function("while_body", specs, wrap, function(...)
      return body_values(n, pack(body(...)))
    end)
    local path, a, b = same_structure(skel, bsk)
    if path then
      path = path:gsub("^output", "loop_vars")
      raise("ValueError", "while_loop: body returns a different structure: %s is %s before the loop and %s after body",
            path, a, b)
    end
    for i, p in ipairs(paths) do
      if bflat[i].dtype ~= specs[i].dtype then
        raise("TypeError", "while_loop: %s enters the loop as %s and the body returns %s", p, specs[i].dtype.name,
              bflat[i].dtype.name)
      end
      local bd, sd = bflat[i]:_dims(), specs[i].shape
      local ok = bd == nil or sd == nil or #bd == #sd
      if ok and bd and sd then
        for k = 1, #bd do if bd[k] >= 0 and sd[k] >= 0 and bd[k] ~= sd[k] then ok = false end end
      end
      if not ok then
        raise("ValueError", "while_loop: %s has shape %s before the loop and %s after one iteration "
              .. "(give it a shape invariant to let it change)", p, tostring(flat[i].shape), tostring(bflat[i].shape))
      end
    end
    local outs = pack(internal.while_loop(Gc, Gb, flat, core.graph_captured(Gc), core.graph_captured(Gb), maxit or -1))
    return pack_as(skel, outs)
  end
  -- }====

  -- {==== tf.switch_case, tf.case
  --- tf.switch_case(branch_index, branch_fns [, default]): the value of
  -- branch_fns[branch_index]() (1-based); an index out of range runs
  -- `default`, or the last branch when there is none (TensorFlow's rule).
  function tf.switch_case(branch_index, branch_fns, default, name)
    if type(branch_fns) ~= "table" or #branch_fns == 0 then
      raise("ValueError", "switch_case: 'branch_fns' must be a non-empty array of functions")
    end
    for i, f in ipairs(branch_fns) do
      if type(f) ~= "function" then raise("TypeError", "switch_case: branch_fns[%d] is not a function", i) end
    end
    local nb = #branch_fns
    default = default or branch_fns[nb]
    if math.type(branch_index) == "integer" or (is_tensor(branch_index) and not branch_index:is_symbolic()) then
      local i = is_tensor(branch_index) and branch_index:item() or branch_index
      local f = branch_fns[i] or default
      return f()
    end
    if not is_tensor(branch_index) or (branch_index.dtype ~= tf.int32 and branch_index.dtype ~= tf.int64) then
      raise("TypeError", "switch_case: 'branch_index' must be an integer or an int32/int64 scalar tensor")
    end
    local function from(i)
      if i > nb then return default() end
      if i == nb and default == branch_fns[nb] then return branch_fns[nb]() end
      return tf.cond(tf.equal(branch_index, tf.cast(i, branch_index.dtype)), branch_fns[i],
                     function() return from(i + 1) end, (name or "switch_case") .. "_" .. i)
    end
    return from(1)
  end

  --- tf.case(pred_fn_pairs [, default [, exclusive]]): the value of the fn of
  -- the first pair {pred, fn} whose pred holds, else of default (or the last
  -- fn). With exclusive = true, more than one true pred is an error (checked
  -- where the preds are known: eagerly).
  function tf.case(pairs_, default, exclusive, name)
    if type(pairs_) ~= "table" or #pairs_ == 0 then
      raise("ValueError", "case: 'pred_fn_pairs' must be a non-empty array of {pred, fn}")
    end
    for i, p in ipairs(pairs_) do
      if type(p) ~= "table" or type(p[2]) ~= "function" then
        raise("TypeError", "case: pred_fn_pairs[%d] must be {pred, fn}", i)
      end
    end
    default = default or pairs_[#pairs_][2]
    if exclusive then
      local count, known = 0, true
      for _, p in ipairs(pairs_) do
        local v = as_pred(p[1], "case")
        if type(v) == "boolean" then count = count + (v and 1 or 0)
        elseif v:is_symbolic() then known = false
        else count = count + (v:item() and 1 or 0) end
      end
      if known and count > 1 then
        raise("InvalidArgumentError", "case: more than one condition holds (exclusive = true)")
      end
    end
    local function from(i)
      if i > #pairs_ then return default() end
      return tf.cond(pairs_[i][1], pairs_[i][2], function() return from(i + 1) end, (name or "case") .. "_" .. i)
    end
    return from(1)
  end
  -- }====
end
