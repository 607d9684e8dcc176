--- tf.autograph: Lua control flow on tensors inside tf.fn (DESIGN section 6).
--
-- tf.fn(f) (autograph = true, the default) traces convert(f) instead of f:
-- f's source is found through debug info (short_src/source, linedefined,
-- lastlinedefined), parsed (tf.autograph.parser), rewritten
-- (tf.autograph.transformer) and compiled under f's own chunk name with each
-- statement on its source line, so errors and tracebacks name the user's
-- file and lines. The converted closure shares f's upvalues
-- (debug.upvaluejoin) and _ENV. Conversion is cached per function
-- prototype (source, first and last line); each closure of the prototype
-- gets its own instance, cached weakly.
local transformer = require("tf.autograph.transformer")

local THIS = debug.getinfo(1, "S").source
local LIB_PREFIX = THIS:match("^(.*[/\\])autograph[/\\]init%.lua$")   -- "@.../lua/tf/"

return function(tf)
  local ops = require("tf.autograph.operators")(tf)
  local autograph = {}
  tf.autograph = autograph
  autograph.operators = ops
  autograph.experimental = {}
  -- conversions made (private: spec/autograph/converter_spec.lua counts them)
  local stats = {conversions = 0}
  tf.core.internal.autograph_stats = stats
  --- tf.autograph.experimental.set_loop_options{shape_invariants = {{x, {tf.None}}},
  -- maximum_iterations = n}: as the first statement of a loop body, the
  -- converter evaluates it before the loop and gives it to the loop (a
  -- shape invariant relaxes the shape check of loop variable x). Called
  -- anywhere else (unconverted code) it does nothing.
  function autograph.experimental.set_loop_options(opts)
    if opts ~= nil and type(opts) ~= "table" then
      tf.errors.raise("TypeError", "set_loop_options: expected a table of options, got " .. type(opts), 2)
    end
  end
  local sfmt = string.format

  local no_convert = setmetatable({}, {__mode = "k"})
  local is_converted = setmetatable({}, {__mode = "k"})
  local instances = setmetatable({}, {__mode = "k"})
  local protos = {}        -- prototype key -> {loader=, pretty=, err=}
  local chunks = setmetatable({}, {__mode = "v"})   -- source -> parsed chunk (kept while memory allows)
  local warned = setmetatable({}, {__mode = "k"})   -- places (strings) and stripped closures

  local function warn(key, text)
    if warned[key] then return end
    warned[key] = true
    tf.get_logger():warning(text)
  end

  --- tf.autograph.do_not_convert(f): f is traced as written (its Lua
  -- control flow must not depend on symbolic tensors).
  function autograph.do_not_convert(f)
    if type(f) ~= "function" then
      tf.errors.raise("TypeError", "do_not_convert: expected a function, got " .. type(f), 2)
    end
    no_convert[f] = true
    return f
  end

  local function read_source(info)
    local s = info.source
    if s:sub(1, 1) == "@" then
      local fh = io.open(s:sub(2), "rb")
      if not fh then return nil end
      local text = fh:read("a")
      fh:close()
      return text
    elseif s:sub(1, 1) == "=" then
      return nil
    end
    return s
  end

  local function parsed_chunk(info)
    local key = info.source
    local c = chunks[key]
    if c == nil then
      local text = read_source(info)
      if not text then
        c = false
      else
        local ok, res = pcall(transformer.parse, text, info.short_src)
        c = ok and res or {error = res}
      end
      chunks[key] = c
    end
    return c
  end

  local function upvalue_names(f)
    local names, list = {}, {}
    local i = 1
    while true do
      local n = debug.getupvalue(f, i)
      if n == nil then break end
      names[n] = true
      list[i] = n
      i = i + 1
    end
    return names, list
  end

  local function error_object(kind, e)
    local msg = type(e) == "table" and e.message or tostring(e)
    local err = tf.errors.new(kind, msg)
    local at = msg:match("^([^:]+:%d+):")
    if at then err.where = at .. ": " end
    return err
  end

  --- The prototype's conversion: {loader=, pretty=} or {skip=reason} or
  -- raises (an unsupported construct).
  local function proto_for(f, info)
    -- several functions may share their lines (a function literal passed in
    -- a call on the same line): the key also holds the parameter and upvalue
    -- names, or one would be converted as the other
    local names = {}
    for i = 1, info.nparams do names[#names + 1] = debug.getlocal(f, i) or "?" end
    local ups = {}
    for i = 1, info.nups do ups[#ups + 1] = (debug.getupvalue(f, i)) end
    table.sort(ups)
    local key = info.source .. ":" .. info.linedefined .. ":" .. info.lastlinedefined .. ":" .. info.nparams
                .. ":" .. table.concat(names, ",") .. ":" .. table.concat(ups, ",")
    local p = protos[key]
    if p then return p end
    local chunk = parsed_chunk(info)
    if not chunk then
      p = {skip = "its source is not available (a C function, a stripped chunk, or a file that cannot be read)"}
    elseif chunk.error then
      local e = chunk.error
      p = {skip = "its source does not parse: " .. (type(e) == "table" and e.message or tostring(e))}
    else
      local cands = transformer.find_functions(chunk, info.linedefined, info.lastlinedefined)
      -- the definition: same lines, same parameters (names included: a
      -- file edited after loading must not convert other code), and free
      -- names that cover the closure's upvalues (several functions may
      -- share the lines)
      local pnames = {}
      for i = 1, info.nparams do pnames[i] = debug.getlocal(f, i) end
      local fits = {}
      for _, c in ipairs(cands) do
        local ok = #c.params == info.nparams and (c.vararg and true or false) == info.isvararg
        for i = 1, info.nparams do
          if ok and pnames[i] and c.params[i] ~= pnames[i] then ok = false end
        end
        if ok then fits[#fits + 1] = c end
      end
      local unames = upvalue_names(f)
      local nup = 0
      for n in pairs(unames) do if n ~= "_ENV" then nup = nup + 1 end end
      if nup > 0 then
        local better = {}
        for _, c in ipairs(fits) do
          local free = transformer.free_names(c)
          local ok = true
          for n in pairs(unames) do
            if n ~= "_ENV" and not free[n] then ok = false end
          end
          if ok then better[#better + 1] = c end
        end
        fits = better
      end
      if #fits == 0 then
        p = {skip = "its definition was not found in its source (was the file changed after loading?)"}
      else
        local ok, node = pcall(transformer.convert, fits[1], info.short_src, unames)
        if not ok then
          if type(node) == "table" and node.autograph_unsupported then
            p = {err = error_object("UnimplementedError", node)}
          else
            p = {skip = "conversion failed: " .. tostring(type(node) == "table" and node.message or node)}
          end
        else
          local ulist = {}
          for n in pairs(unames) do
            if n ~= "ag__" then ulist[#ulist + 1] = n end
          end
          table.sort(ulist)
          local header = "local ag__ = ...; "
          if #ulist > 0 then header = header .. "local " .. table.concat(ulist, ", ") .. "; " end
          local lines = transformer.generate(node, "lines", header)
          local loader, lerr = load(lines, info.source, "t")
          if not loader then
            p = {skip = "the converted code does not compile (an AutoGraph bug): " .. tostring(lerr), code = lines}
          else
            p = {loader = loader, node = node, lines = lines}
            stats.conversions = stats.conversions + 1
          end
        end
      end
    end
    protos[key] = p
    return p
  end

  --- The converted closure for 'f' (f itself when it is not converted).
  function autograph.convert(f)
    if type(f) ~= "function" then return f end
    local inst = instances[f]
    if inst then return inst end
    if no_convert[f] or is_converted[f] then return f end
    local info = debug.getinfo(f, "Su")
    if info.what == "C" then
      instances[f] = f
      return f
    end
    if LIB_PREFIX and info.source:sub(1, #LIB_PREFIX) == LIB_PREFIX then
      instances[f] = f      -- luatf's own functions are not converted
      return f
    end
    if info.what == "main" then
      instances[f] = f
      return f
    end
    -- a closure made by converted code (a nested function) is converted
    for i = 1, info.nups do
      local n, v = debug.getupvalue(f, i)
      if n == "ag__" and v == ops then
        instances[f] = f
        return f
      end
    end
    local p = proto_for(f, info)
    if p.err then error(p.err, 0) end
    if p.skip then
      -- a stripped chunk has no place to be known by ("=?" and a line that
      -- others share): it warns once per closure
      warn(info.source == "=?" and f or info.source .. ":" .. info.linedefined, sfmt("AutoGraph could not convert the function at %s:%d: %s; " ..
        "tracing it unconverted (Lua control flow on symbolic tensors will fail). Use " ..
        "tf.autograph.do_not_convert(f) to silence this.", info.short_src, info.linedefined, p.skip))
      instances[f] = f
      return f
    end
    local g = p.loader(ops)
    -- share f's upvalues (and _ENV) with the converted closure
    local _, flist = upvalue_names(f)
    local index = {}
    for i, n in ipairs(flist) do index[n] = i end
    local i = 1
    while true do
      local n = debug.getupvalue(g, i)
      if n == nil then break end
      if n ~= "ag__" and index[n] then debug.upvaluejoin(g, i, f, index[n]) end
      i = i + 1
    end
    is_converted[g] = true
    instances[f] = g
    return g
  end

  --- Converted calls: `f(x)` becomes `ag__.fn(f)(x)` (the call itself stays
  -- in the user's code, so error levels and debug.getinfo are unchanged);
  -- called functions convert recursively.
  function ops.fn(f)
    if type(f) ~= "function" then return f end
    local g = instances[f]
    if g == nil then g = autograph.convert(f) end
    return g
  end

  --- tf.autograph.to_code(f): the converted Lua source of f, readable; it
  -- compiles (`load(code)` gives a chunk returning the converted function,
  -- with f's upvalues as globals).
  function autograph.to_code(f)
    if tf.is_fn and tf.is_fn(f) then f = f:lua_function() end
    if type(f) ~= "function" then
      tf.errors.raise("TypeError", "to_code: expected a function, got " .. type(f), 2)
    end
    local info = debug.getinfo(f, "Su")
    if info.what == "C" then tf.errors.raise("ValueError", "to_code: a C function has no Lua source", 2) end
    local p = proto_for(f, info)
    if p.err then error(p.err, 0) end
    if p.skip then tf.errors.raise("ValueError", "to_code: cannot convert the function: " .. p.skip, 2) end
    p.pretty = p.pretty or transformer.generate(p.node, "pretty", "")
    return sfmt("-- converted by tf.autograph from %s:%d-%d\nlocal ag__ = require(\"tf\").autograph.operators\n%s\n",
      info.short_src, info.linedefined, info.lastlinedefined, p.pretty)
  end

  --- tf.autograph.to_graph(f): the converted closure (runs eagerly or
  -- inside a trace).
  function autograph.to_graph(f)
    if type(f) ~= "function" then
      tf.errors.raise("TypeError", "to_graph: expected a function, got " .. type(f), 2)
    end
    local g = autograph.convert(f)
    return g
  end

  --- A Lua error while tracing unconverted code that means "a symbolic
  -- tensor where Lua needs a number/boolean": explained (used by tf.fn).
  function autograph.explain(err)
    if type(err) ~= "string" then return err end
    local at, what = err:match("^(.-:%d+): bad 'for' (%a+ ?%a*) %(number expected")
    if not at then at, what = err:match("^(.-:%d+): 'for' (%a+ ?%a*) must be a number") end
    if at then
      local e = tf.errors.new("TypeError", sfmt("%s: a Lua numeric for loop's %s is not a number (a symbolic " ..
        "tensor while tracing?): Lua cannot loop a graph value; use tf.while_loop, or let autograph convert the " ..
        "loop (tf.fn(f) with autograph = true, the default, and f's source available)", at, what))
      e.where = at .. ": "
      return e
    end
    return err
  end

  --- tf.Tensor:iter(): an iterator over the first dimension; a Lua
  -- iterator for eager tensors, and a graph loop under AutoGraph (__tf_for).
  local Iter = {__name = "tf.TensorIterator"}
  Iter.__index = Iter
  function Iter.__call(it)
    it.i = it.i + 1
    if it.i > it.n then return nil end
    return it.t[it.i]
  end
  function Iter.__tf_for(it, loop) return ops.tensor_for(it.t, loop) end
  local methods = tf.core.Tensor[1]
  function methods.iter(t)
    local n = t.shape[1]
    if t:is_symbolic() and n == nil then
      -- n is needed only by the Lua iterator; converted loops use __tf_for
      n = math.huge
    end
    return setmetatable({t = t, i = 0, n = n or 0}, Iter)
  end
end
