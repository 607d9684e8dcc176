--- tf.format: `tostring(x)` for tensors, exactly as TensorFlow prints them.
-- TensorFlow's text is NumPy's `str` of the value inside
-- `tf.Tensor(<value>, shape=(...), dtype=...)`, so this module follows
-- NumPy's array2string (numpy/core/arrayprint.py, legacy=False): elements
-- share one width, floats print the shortest digits that identify the value
-- in its own dtype (at most 8 after the point, scientific when NumPy would
-- switch), lines wrap at 75 columns, and more than 1000 elements summarize
-- as `[0 1 2 ... 997 998 999]`. Values are read with `x:_flat(first,
-- count)`, only the shown ones when summarizing.
return function(tf)
  local core = tf.core
  local format = {}

  local DEFAULTS = {threshold = 1000, edgeitems = 3, linewidth = 75, precision = 8}
  local OPTION_KEYS = {threshold = true, edgeitems = true, linewidth = true, precision = true}

  local sfmt, srep, ssub, sfind = string.format, string.rep, string.sub, string.find
  local spack, sunpack = string.pack, string.unpack
  local huge = math.huge

  -- {==== Numbers
  local function isnan(v) return v ~= v end
  local function isfinite(v) return v == v and v ~= huge and v ~= -huge end
  local function signbit(v) return v < 0 or (v == 0 and 1 / v < 0) end
  local function to_f32(v) return (sunpack("<f", spack("<f", v))) end

  --- Mantissa digits and decimal exponent of a "%.Ne" string ("1.25e-03" -> "125", -3).
  local function parse_e(s)
    local m, e = s:match("^(%d[%.%d]*)e([-+]%d+)$")
    return (m:gsub("%.", "")), tonumber(e)
  end

  local function strip_zeros(d)
    d = d:gsub("0+$", "")
    return d == "" and "0" or d
  end

  --- Shortest digits that read back as 'v' (> 0, finite) in its dtype:
  -- returns digits (no trailing zeros) and the exponent of the first one.
  -- The closest N-digit decimal is tried first; at a power of two the
  -- rounding interval is lopsided, so its neighbour on the far side too.
  -- 'is32' below says which dtype a value is read back in: false float64,
  -- true float32, "float16" / "bfloat16" those
  local memo = {[true] = {}, [false] = {}, float16 = {}, bfloat16 = {}}   -- per format.array call: v -> {digits, exponent}
  local function to_half(v, kind) return core.internal.half_round(v, kind == "bfloat16") end

  local function shortest_uncached(v, is32)
    local function same(s)
      local r = tonumber(s)
      if is32 == true then return to_f32(r) == v end
      if is32 then return to_half(r, is32) == v end
      return r == v
    end
    for p = 0, 16 do
      local s = sfmt("%." .. p .. "e", v)
      if same(s) then
        local d, e = parse_e(s)
        return strip_zeros(d), e
      end
      local d, e = parse_e(s)
      local m = math.tointeger(tonumber(d))
      local other = tonumber(s) < v and m + 1 or m - 1
      local od = tostring(other)
      if #od == #d then
        local cand = ssub(od, 1, 1) .. (p > 0 and "." .. ssub(od, 2) or "") .. sfmt("e%+d", e)
        if same(cand) then return strip_zeros(od), e end
      end
    end
    local d, e = parse_e(sfmt("%.16e", v))
    return strip_zeros(d), e
  end

  local function shortest(v, is32)
    local m = memo[is32][v]
    if not m then
      m = {shortest_uncached(v, is32)}
      memo[is32][v] = m
    end
    return m[1], m[2]
  end

  --- Positional text of |v| with at most 'prec' digits after the point
  -- (fewer when fewer identify the value): integer part and fraction
  -- (trailing zeros trimmed; "" when none). With 'exact_int' the integer
  -- part holds the value's own digits (NumPy's min_digits=0: float32
  -- 67623208 prints so, not as its shortest form 67623210).
  local function positional(v, is32, prec, exact_int)
    v = math.abs(v)
    if v == 0 then return "0", "" end
    local d, e = shortest(v, is32)
    local nfrac = #d - 1 - e
    if exact_int and nfrac < 0 then return sfmt("%.0f", v), "" end
    if prec and nfrac > prec then
      local s = sfmt("%." .. prec .. "f", v)
      local ip, fp = s:match("^(%d+)%.?(%d*)$")
      return ip, (fp:gsub("0+$", ""))
    end
    if e >= 0 then
      if #d <= e + 1 then return d .. srep("0", e + 1 - #d), "" end
      return ssub(d, 1, e + 1), ssub(d, e + 2)
    end
    return "0", srep("0", -e - 1) .. d
  end

  --- Scientific text of |v| with at most 'prec' digits after the point:
  -- mantissa digits (first one, then the fraction) and exponent.
  local function scientific(v, is32, prec)
    v = math.abs(v)
    if v == 0 then return "0", "", 0 end
    local d, e = shortest(v, is32)
    if prec and #d - 1 > prec then
      d, e = parse_e(sfmt("%." .. prec .. "e", v))
      d = strip_zeros(d)
    end
    return ssub(d, 1, 1), ssub(d, 2), e
  end

  local function exp_text(e, digits)
    local a = tostring(math.abs(e))
    if #a < digits then a = srep("0", digits - #a) .. a end
    return (e < 0 and "-" or "+") .. a
  end

  --- NumPy's FloatingFormat (floatmode 'maxprec'): a function formatting
  -- one value so that all of 'vals' line up.
  local function float_formatter(vals, is32, prec)
    local finite, has_nonfinite, neginf = {}, false, false
    for _, v in ipairs(vals) do
      if isfinite(v) then finite[#finite + 1] = v
      else
        has_nonfinite = true
        if v == -huge then neginf = true end
      end
    end
    local maxv, minv
    for _, v in ipairs(finite) do
      local a = math.abs(v)
      if a ~= 0 then
        if not maxv or a > maxv then maxv = a end
        if not minv or a < minv then minv = a end
      end
    end
    local exp_format = false
    if maxv then
      local ratio = maxv / minv
      if is32 == true then ratio = to_f32(ratio)   -- NumPy divides in the dtype
      elseif is32 then ratio = to_half(ratio, is32) end
      exp_format = maxv >= 1e8 or minv < 0.0001 or ratio > 1000
    end
    local pad_left, pad_right, precision, exp_size = 0, 0, prec, -1
    if #finite == 0 then
      pad_left, pad_right = 0, 0
    elseif exp_format then
      precision, exp_size = 0, 0
      for _, v in ipairs(finite) do
        local _, frac, e = scientific(v, is32, prec)
        if #frac > precision then precision = #frac end
        local el = #tostring(math.abs(e))
        if el < 2 then el = 2 end
        if el > exp_size then exp_size = el end
        local il = signbit(v) and 2 or 1
        if il > pad_left then pad_left = il end
      end
      pad_right = exp_size + 2 + precision
    else
      for _, v in ipairs(finite) do
        local ip, fp = positional(v, is32, prec)
        local il = #ip + (signbit(v) and 1 or 0)
        if il > pad_left then pad_left = il end
        if #fp > pad_right then pad_right = #fp end
      end
    end
    if has_nonfinite then
      local offset = pad_right + 1
      pad_left = math.max(pad_left, 3 - offset, 3 + (neginf and 1 or 0) - offset)
    end
    return function(v)
      if not isfinite(v) then
        local s = isnan(v) and "nan" or (v < 0 and "-inf" or "inf")
        return srep(" ", pad_left + pad_right + 1 - #s) .. s
      end
      local sign = signbit(v) and "-" or ""
      if exp_format then
        local first, frac, e = scientific(v, is32, precision)
        if #frac < precision then
          -- NumPy's min_digits: the digits past the shortest ones are the
          -- value's own, not zeros (float32 4.2857141 in a column of 7)
          local d
          d, e = parse_e(sfmt("%." .. precision .. "e", math.abs(v)))
          first, frac = ssub(d, 1, 1), ssub(d, 2)
        end
        local ip = sign .. first
        return srep(" ", pad_left - #ip) .. ip .. "." .. frac .. "e" .. exp_text(e, exp_size)
      end
      local ip, fp = positional(v, is32, prec, true)
      ip = sign .. ip
      return srep(" ", pad_left - #ip) .. ip .. "." .. fp .. srep(" ", pad_right - #fp)
    end
  end

  --- NumPy's str of a float scalar: positional when 1e-4 <= |v| < 1e16
  -- (or zero), shortest digits, "1.0" keeps one zero; else "1e+16".
  local function float_scalar(v, is32)
    if isnan(v) then return "nan" end
    if v == huge then return "inf" end
    if v == -huge then return "-inf" end
    local sign = signbit(v) and "-" or ""
    local a = math.abs(v)
    if a == 0 or (a >= 1e-4 and a < 1e16) then
      local ip, fp = positional(v, is32, nil)
      return sign .. ip .. "." .. (fp == "" and "0" or fp)
    end
    local first, frac, e = scientific(v, is32, nil)
    return sign .. first .. (frac ~= "" and "." .. frac or "") .. "e" .. exp_text(e, 2)
  end
  -- }====

  -- {==== Other dtypes
  --- Python's repr of a bytes value: b'abc', b"it's", b'\x00\n'.
  local function bytes_repr(s)
    local quote = "'"
    if sfind(s, "'", 1, true) and not sfind(s, '"', 1, true) then quote = '"' end
    local out = s:gsub("[%c\\'\"\128-\255]", function(c)
      if c == "\\" then return "\\\\" end
      if c == quote then return "\\" .. c end
      if c == "'" or c == '"' then return c end
      if c == "\t" then return "\\t" end
      if c == "\n" then return "\\n" end
      if c == "\r" then return "\\r" end
      return sfmt("\\x%02x", c:byte())
    end)
    return "b" .. quote .. out .. quote
  end
  format.bytes_repr = bytes_repr

  local function int_formatter(vals)
    local width = 0
    local maxv, minv
    for _, v in ipairs(vals) do
      if not maxv or v > maxv then maxv = v end
      if not minv or v < minv then minv = v end
    end
    if maxv then width = math.max(#sfmt("%d", maxv), #sfmt("%d", minv)) end
    return function(v)
      local s = sfmt("%d", v)
      return srep(" ", width - #s) .. s
    end
  end

  --- The element formatter for the shown values of a tensor of 'dtype'.
  local function formatter(dtype, vals, opts)
    local name = dtype.name
    if name == "float32" or name == "float64" then
      return float_formatter(vals, name == "float32", opts.precision)
    elseif name == "float16" or name == "bfloat16" then
      return float_formatter(vals, name, opts.precision)
    elseif name == "bool" then
      return function(v) return v and " True" or "False" end
    elseif name == "string" then
      return bytes_repr
    end
    return int_formatter(vals)
  end

  local function scalar_text(dtype, v)
    local name = dtype.name
    if name == "float32" or name == "float64" then return float_scalar(v, name == "float32") end
    if name == "float16" or name == "bfloat16" then return float_scalar(v, name) end
    if name == "bool" then return v and "True" or "False" end
    if name == "string" then return bytes_repr(v) end
    return sfmt("%d", v)
  end
  -- }====

  -- {==== Reading the shown values
  --- Values in row-major order over the shown grid, the grid's dims, and
  -- per axis whether it is summarized (only its first and last
  -- 'edgeitems' shown).
  local function shown_values(x, dims, numel, opts)
    local rank = #dims
    if numel <= opts.threshold then
      return x:_flat(1, numel), dims, {}
    end
    local edge = opts.edgeitems
    local kept, rdims, summ = {}, {}, {}
    for a = 1, rank do
      local d, k = dims[a], {}
      if d > 2 * edge then
        summ[a] = true
        for i = 0, edge - 1 do k[#k + 1] = i end
        for i = d - edge, d - 1 do k[#k + 1] = i end
      else
        for i = 0, d - 1 do k[#k + 1] = i end
      end
      kept[a], rdims[a] = k, #k
    end
    local strides = {}
    local s = 1
    for a = rank, 1, -1 do
      strides[a] = s
      s = s * dims[a]
    end
    -- runs of the last axis: contiguous stretches of kept indices
    local runs, last = {}, kept[rank]
    local i = 1
    while i <= #last do
      local j = i
      while j < #last and last[j + 1] == last[j] + 1 do j = j + 1 end
      runs[#runs + 1] = {last[i], j - i + 1}
      i = j + 1
    end
    local vals, idx = {}, {}
    for a = 1, rank - 1 do idx[a] = 1 end
    while true do
      local base = 0
      for a = 1, rank - 1 do base = base + kept[a][idx[a]] * strides[a] end
      for _, r in ipairs(runs) do
        local part = x:_flat(base + r[1] + 1, r[2])
        table.move(part, 1, #part, #vals + 1, vals)
      end
      local a = rank - 1
      while a >= 1 do
        idx[a] = idx[a] + 1
        if idx[a] <= rdims[a] then break end
        idx[a] = 1
        a = a - 1
      end
      if a < 1 then break end
    end
    return vals, rdims, summ
  end
  -- }====

  -- {==== Layout (NumPy's _formatArray)
  local function rstrip(s) return (s:gsub("%s+$", "")) end

  local function extend_line(s, line, word, width, prefix)
    local needs_wrap = #line + #word > width
    if #line <= #prefix then needs_wrap = false end   -- wrapping would not help
    if needs_wrap then
      s = s .. rstrip(line) .. "\n"
      line = prefix
    end
    return s, line .. word
  end

  local function layout(vals, rdims, summ, fmt, opts)
    local rank = #rdims
    local edge = opts.edgeitems
    local strides, s = {}, 1
    for a = rank, 1, -1 do
      strides[a] = s
      s = s * rdims[a]
    end
    local function recurse(axis, off, hang, width)
      if axis > rank then return fmt(vals[off + 1]) end
      local next_hang, next_width = hang .. " ", width - 1
      local len, stride = rdims[axis], strides[axis]
      local lead, trail = 0, len
      if summ[axis] then lead, trail = edge, edge end
      local out = {}
      if axis == rank then
        local elem_width = width - 1
        local acc, line = "", hang
        for i = 0, lead - 1 do
          acc, line = extend_line(acc, line, recurse(axis + 1, off + i * stride, next_hang, next_width),
                                  elem_width, hang)
          line = line .. " "
        end
        if summ[axis] then
          acc, line = extend_line(acc, line, "...", elem_width, hang)
          line = line .. " "
        end
        for i = trail, 2, -1 do
          acc, line = extend_line(acc, line, recurse(axis + 1, off + (len - i) * stride, next_hang, next_width),
                                  elem_width, hang)
          line = line .. " "
        end
        acc, line = extend_line(acc, line, recurse(axis + 1, off + (len - 1) * stride, next_hang, next_width),
                                elem_width, hang)
        out[1] = acc .. line
      else
        local line_sep = srep("\n", rank - axis)
        for i = 0, lead - 1 do
          out[#out + 1] = hang .. recurse(axis + 1, off + i * stride, next_hang, next_width) .. line_sep
        end
        if summ[axis] then out[#out + 1] = hang .. "..." .. line_sep end
        for i = trail, 2, -1 do
          out[#out + 1] = hang .. recurse(axis + 1, off + (len - i) * stride, next_hang, next_width) .. line_sep
        end
        out[#out + 1] = hang .. recurse(axis + 1, off + (len - 1) * stride, next_hang, next_width)
      end
      return "[" .. ssub(table.concat(out), #hang + 1) .. "]"
    end
    return recurse(1, 0, " ", opts.linewidth)
  end
  -- }====

  local function options(opts)
    local o = {}
    for k, v in pairs(DEFAULTS) do o[k] = v end
    if opts ~= nil then
      if type(opts) ~= "table" then
        tf.errors.raise("TypeError", "format: 'opts' expected a table, got " .. type(opts), 3)
      end
      for k, v in pairs(opts) do
        if not OPTION_KEYS[k] then
          tf.errors.raise("TypeError", ("format: unknown option '%s' (accepted: edgeitems, linewidth, " ..
            "precision, threshold)"):format(tostring(k)), 3)
        end
        if math.type(v) ~= "integer" or v < 0 then
          tf.errors.raise("TypeError", ("format: option '%s' expected a non-negative integer, got %s")
            :format(k, tostring(v)), 3)
        end
        o[k] = v
      end
    end
    return o
  end

  --- NumPy's str of the tensor's value: "3", "[1 2 3]", "[[1 2]\n [3 4]]".
  -- opts: threshold (1000), edgeitems (3), linewidth (75), precision (8).
  function format.array(x, opts)
    local o = options(opts)
    memo[true], memo[false], memo.float16, memo.bfloat16 = {}, {}, {}, {}
    local dims = x:_dims()
    local dtype = x.dtype
    if #dims == 0 then return scalar_text(dtype, x:_flat(1, 1)[1]) end
    local numel = 1
    for _, d in ipairs(dims) do numel = numel * d end
    if numel == 0 then return "[]" end
    local vals, rdims, summ = shown_values(x, dims, numel, o)
    return layout(vals, rdims, summ, formatter(dtype, vals, o), o)
  end

  --- TensorFlow's text of a tensor: `tf.Tensor(<value>, shape=(2, 2), dtype=int32)`,
  -- the value on its own lines when it spans several; a symbolic tensor
  -- (while tracing) prints `Tensor("name", shape=(None, 3), dtype=float32)`.
  function format.tensor(x, opts)
    if x:is_symbolic() then
      local name = x.name
      return ('Tensor("%s", shape=%s, dtype=%s)'):format(name ~= nil and tostring(name) or "Tensor",
                                                         tostring(x.shape), x.dtype.name)
    end
    local text = format.array(x, opts)
    if sfind(text, "\n", 1, true) then text = "\n" .. text end
    return ("tf.Tensor(%s, shape=%s, dtype=%s)"):format(text, tostring(x.shape), x.dtype.name)
  end

  core.Tensor.__tostring = function(x) return format.tensor(x) end

  -- {==== tf.print
  -- tf.print(v1, ..., vn [, {output_stream=, summarize=, sep=, end_=}]):
  -- TensorFlow's signature. The print op (stateful: in a traced function it
  -- prints at every call) carries the options; its text is made here, at
  -- every print, eagerly or in a replayed graph.
  local STDERR, STDOUT = 0, 1
  -- streams other than stdout/stderr, by id (>= 2): a graph holds the id
  local streams, stream_ids = {}, {}
  local next_stream = 2

  local function stream_id(s)
    if s == nil or s == io.stderr then return STDERR end
    if s == io.stdout then return STDOUT end
    local key = s
    local ok = type(s) == "function" or io.type(s) == "file"
    if type(s) == "string" then
      ok = s:sub(1, 7) == "file://" and #s > 7
      key = "path:" .. s
    end
    if not ok then
      tf.errors.raise("TypeError", ("print: 'output_stream' expected io.stdout, io.stderr, an open file, a " ..
        "function or a 'file://path' string, got %s"):format(type(s) == "string" and ("'" .. s .. "'") or
        io.type(s) == "closed file" and "a closed file" or type(s)), 3)
    end
    local id = stream_ids[key]
    if not id then
      id = next_stream
      next_stream = next_stream + 1
      stream_ids[key], streams[id] = id, s
    end
    return id
  end

  --- The text tf.print writes for values t1..tn (without 'end'): string
  -- scalars as they are, other tensors as NumPy would, the first and last
  -- 'summarize' entries of each longer dimension (-1: all).
  function format.print_text(o, ...)
    local parts = {}
    local summ = o.summarize or 3
    local aopts = summ < 0 and {threshold = math.maxinteger} or {threshold = 0, edgeitems = summ}
    for i = 1, select("#", ...) do
      local t = select(i, ...)
      if t.dtype == tf.string and #t:_dims() == 0 then
        parts[i] = t:item()
      else
        parts[i] = format.array(t, aopts)
      end
    end
    return table.concat(parts, o.sep or " ")
  end

  local function write(o, text)
    local id = o.stream
    if id == STDOUT or id == STDERR then
      local f = id == STDOUT and io.stdout or io.stderr
      f:write(text, o["end"])
      f:flush()
      return
    end
    local s = streams[id]
    if type(s) == "function" then
      s(text)       -- a logging function gets the text alone, as TensorFlow's logging streams
    elseif type(s) == "string" then
      local f, err = io.open(s:sub(8), "a")
      if not f then tf.errors.raise("NotFoundError", "print: cannot open " .. s .. ": " .. tostring(err)) end
      f:write(text, o["end"])
      f:close()
    elseif s then
      s:write(text, o["end"])
      s:flush()
    else
      io.stderr:write(text, o["end"])
    end
  end

  local function print_formatter(o, ...) write(o, format.print_text(o, ...)) end
  core.set_print_formatter(print_formatter)
  core.internal.print_formatter = print_formatter   -- init.lua's stub calls it (format loads lazily)

  local PRINT_KEYS = {output_stream = true, summarize = true, sep = true, end_ = true, ["end"] = true, name = true}
  function tf.print(...)
    local n = select("#", ...)
    local o = n > 0 and select(n, ...) or nil
    if type(o) == "table" and getmetatable(o) == nil then
      n = n - 1
    else
      o = {}
    end
    for k in pairs(o) do
      if not PRINT_KEYS[k] then
        tf.errors.raise("TypeError", ("print: unknown keyword '%s' (accepted: output_stream, summarize, sep, " ..
          "end_, name)"):format(tostring(k)), 2)
      end
    end
    local sep, fin = o.sep or " ", o.end_
    if fin == nil then fin = o["end"] end
    if fin == nil then fin = "\n" end
    if type(sep) ~= "string" then
      tf.errors.raise("TypeError", "print: 'sep' expected a string, got " .. type(sep), 2)
    end
    if type(fin) ~= "string" then
      tf.errors.raise("TypeError", "print: 'end' expected a string, got " .. type(fin), 2)
    end
    local summ = o.summarize
    if summ == nil then summ = 3 end
    if math.type(summ) ~= "integer" or summ < -1 then
      tf.errors.raise("ValueError", "print: 'summarize' expected an integer >= -1 (-1: every element), got " ..
        tostring(summ), 2)
    end
    local id = stream_id(o.output_stream)
    if n == select("#", ...) then return core.print(sep, fin, summ, id, ...) end
    return core.print(sep, fin, summ, id, table.unpack({...}, 1, n))
  end
  -- }====

  tf.format = format
end
