--- JSON for the .keras container's config.json and metadata.json, written
-- and read here rather than with lua-cjson because configs need Lua's
-- number types kept: an integer (`units = 10`) is written without a
-- fraction and read back as an integer, a float always with one (or an
-- exponent) and read back as a float, so a config round-trips exactly
-- (cjson reads every number as a float). Floats are written with 17
-- significant digits; NaN and the infinities as Python's json does (NaN,
-- Infinity, -Infinity). A table whose keys are exactly 1..n is an array,
-- any other an object with sorted keys; integer keys of a mixed table are
-- written as strings ("1") and read back as integers. Values the encoder
-- cannot write (functions, userdata) go to `opts.convert(v, path)`, which
-- returns something it can (or raises).
return function(_)
  local sfmt = string.format
  local M = {}

  local ESC = {['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n",
               ["\r"] = "\\r", ["\t"] = "\\t"}
  local function str(s)
    return '"' .. s:gsub('[%c"\\]', function(c) return ESC[c] or sfmt("\\u%04x", c:byte()) end) .. '"'
  end

  local function num(x)
    if math.type(x) == "integer" then return sfmt("%d", x) end
    if x ~= x then return "NaN" end
    if x == math.huge then return "Infinity" end
    if x == -math.huge then return "-Infinity" end
    local s = sfmt("%.17g", x)
    -- the shortest form that reads back the same
    for digits = 1, 16 do
      local t = sfmt("%." .. digits .. "g", x)
      if tonumber(t) == x then s = t; break end
    end
    if not s:find("[%.eEn]") then s = s .. ".0" end
    return s
  end

  local function keycmp(a, b)
    if type(a) ~= type(b) then return type(a) == "number" end
    return a < b
  end

  local function encode(v, out, opts, path, depth, seen)
    if depth > 100 then error(sfmt("config: nested too deeply at %s", path), 0) end
    local t = type(v)
    if t == "string" then out[#out + 1] = str(v)
    elseif t == "number" then out[#out + 1] = num(v)
    elseif t == "boolean" then out[#out + 1] = tostring(v)
    elseif v == nil then out[#out + 1] = "null"
    elseif t == "table" and getmetatable(v) == nil then
      if seen[v] then error(sfmt("config: the table at %s contains itself", path), 0) end
      seen[v] = true
      local keys, n = {}, #v
      for k in pairs(v) do keys[#keys + 1] = k end
      local array = n > 0 and #keys == n
      if array then
        out[#out + 1] = "["
        for i = 1, n do
          if i > 1 then out[#out + 1] = "," end
          encode(v[i], out, opts, path .. "[" .. i .. "]", depth + 1, seen)
        end
        out[#out + 1] = "]"
      else
        for _, k in ipairs(keys) do
          if type(k) ~= "string" and math.type(k) ~= "integer" then
            error(sfmt("config: the table at %s has a key of type %s", path, type(k)), 0)
          end
        end
        table.sort(keys, keycmp)
        out[#out + 1] = "{"
        for i, k in ipairs(keys) do
          if i > 1 then out[#out + 1] = "," end
          out[#out + 1] = str(tostring(k))
          out[#out + 1] = ":"
          encode(v[k], out, opts, path .. "." .. tostring(k), depth + 1, seen)
        end
        out[#out + 1] = "}"
      end
      seen[v] = nil
    else
      local conv = opts and opts.convert
      local c = conv and conv(v, path)
      if c == nil then error(sfmt("config: cannot write a %s (at %s)", t, path), 0) end
      encode(c, out, opts, path, depth + 1, seen)
    end
  end

  --- The JSON text of `v`.
  function M.encode(v, opts)
    local out = {}
    encode(v, out, opts, "config", 0, {})
    return table.concat(out)
  end

  -- {==== decoding
  local function fail(s, p, what) error(sfmt("bad JSON at byte %d: %s", p, what), 0) end

  local function skip(s, p)
    return s:find("[^ \t\r\n]", p) or #s + 1
  end

  local decode_value

  local function decode_string(s, p)
    -- p at the opening quote
    local out, i = {}, p + 1
    while true do
      local j = s:find('["\\%c]', i)
      if not j then fail(s, p, "unterminated string") end
      out[#out + 1] = s:sub(i, j - 1)
      local c = s:sub(j, j)
      if c == '"' then return table.concat(out), j + 1 end
      if c ~= "\\" then fail(s, j, "control character in a string") end
      local e = s:sub(j + 1, j + 1)
      local simple = ({['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t"})[e]
      if simple then
        out[#out + 1] = simple
        i = j + 2
      elseif e == "u" then
        local hex = s:match("^%x%x%x%x", j + 2)
        if not hex then fail(s, j, "bad \\u escape") end
        local cp = tonumber(hex, 16)
        i = j + 6
        if cp >= 0xD800 and cp <= 0xDBFF then
          local lo = s:match("^\\u(%x%x%x%x)", i)
          local l = lo and tonumber(lo, 16)
          if l and l >= 0xDC00 and l <= 0xDFFF then
            cp = 0x10000 + ((cp - 0xD800) << 10) + (l - 0xDC00)
            i = i + 6
          end
        end
        out[#out + 1] = utf8.char(cp)
      else
        fail(s, j, "bad escape")
      end
    end
  end

  local function decode_number(s, p)
    local m = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", p)
    if not m or not (m:match("^-?0$") or m:match("^-?[1-9]%d*$") or m:match("^-?0[%.eE]") or
        m:match("^-?[1-9]%d*[%.eE]")) then
      fail(s, p, "bad number")
    end
    local x = tonumber(m)
    if x == nil then fail(s, p, "bad number") end
    if not m:find("[%.eE]") then x = math.tointeger(x) or x end
    if m:find("[%.eE]") then x = x + 0.0 end
    return x, p + #m
  end

  function decode_value(s, p, depth)
    if depth > 200 then fail(s, p, "nested too deeply") end
    p = skip(s, p)
    local c = s:sub(p, p)
    if c == "{" then
      local obj = {}
      p = skip(s, p + 1)
      if s:sub(p, p) == "}" then return obj, p + 1 end
      while true do
        if s:sub(p, p) ~= '"' then fail(s, p, "expected a string key") end
        local k
        k, p = decode_string(s, p)
        p = skip(s, p)
        if s:sub(p, p) ~= ":" then fail(s, p, "expected ':'") end
        local v
        v, p = decode_value(s, p + 1, depth + 1)
        local key = k:match("^[1-9]%d*$") and math.tointeger(tonumber(k)) or k
        if obj[key] ~= nil then fail(s, p, "repeated key '" .. k .. "'") end
        obj[key] = v
        p = skip(s, p)
        local d = s:sub(p, p)
        if d == "}" then return obj, p + 1 end
        if d ~= "," then fail(s, p, "expected ',' or '}'") end
        p = skip(s, p + 1)
      end
    elseif c == "[" then
      local arr = {}
      p = skip(s, p + 1)
      if s:sub(p, p) == "]" then return arr, p + 1 end
      while true do
        local v
        v, p = decode_value(s, p, depth + 1)
        arr[#arr + 1] = v
        if v == nil then fail(s, p, "null inside an array") end
        p = skip(s, p)
        local d = s:sub(p, p)
        if d == "]" then return arr, p + 1 end
        if d ~= "," then fail(s, p, "expected ',' or ']'") end
        p = p + 1
      end
    elseif c == '"' then
      return decode_string(s, p)
    elseif s:sub(p, p + 3) == "true" then return true, p + 4
    elseif s:sub(p, p + 4) == "false" then return false, p + 5
    elseif s:sub(p, p + 3) == "null" then return nil, p + 4
    elseif s:sub(p, p + 2) == "NaN" then return 0 / 0, p + 3
    elseif s:sub(p, p + 7) == "Infinity" then return math.huge, p + 8
    elseif s:sub(p, p + 8) == "-Infinity" then return -math.huge, p + 9
    elseif c:match("[-%d]") then return decode_number(s, p)
    end
    fail(s, p, c == "" and "unexpected end" or "unexpected character '" .. c .. "'")
  end

  --- The value of JSON text `s` (errors: "bad JSON at byte N: ...").
  function M.decode(s)
    local v, p = decode_value(s, 1, 0)
    p = skip(s, p)
    if p <= #s then fail(s, p, "trailing characters") end
    return v
  end
  -- }====

  return M
end
