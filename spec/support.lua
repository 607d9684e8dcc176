-- spec/support.lua: small pure-Lua helpers shared by specs (references
-- computed outside the engine): a seeded generator, shapes, nesting.
local M = {}

--- A seeded linear congruential generator giving floats in [-1, 1).
function M.lcg(seed)
  local s = seed
  return function()
    s = (s * 1103515245 + 12345) % 2147483648
    return s / 1073741824 - 1
  end
end

--- Number of elements of a shape.
function M.numel(dims)
  local n = 1
  for _, d in ipairs(dims) do n = n * d end
  return n
end

--- Nested table of shape 'dims' from a flat row-major array.
function M.nest(flat, dims)
  local pos = 0
  local function build(level)
    local t = {}
    for i = 1, dims[level] do
      if level == #dims then
        pos = pos + 1
        t[i] = flat[pos]
      else
        t[i] = build(level + 1)
      end
    end
    return t
  end
  return build(1)
end

--- Flat row-major array of a nested table.
function M.flatten(v, out)
  out = out or {}
  if type(v) == "table" then
    for _, e in ipairs(v) do M.flatten(e, out) end
  else
    out[#out + 1] = v
  end
  return out
end

-- {==== files and child processes (specs that write files or run lua5.4)
--- A fresh directory under /tmp (the caller removes it).
function M.tmpdir()
  local p = io.popen("mktemp -d /tmp/luatf-spec-XXXXXX")
  local d = p:read("l")
  p:close()
  return d
end

--- The bytes of the file at 'path'.
function M.slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

--- Write 's' as the whole file at 'path'.
function M.spit(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

--- 's' quoted for sh.
function M.shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

--- An independent bit-by-bit CRC32C (Castagnoli, reflected 0x82F63B78) of
-- 's', the reference the checkpoint specs check the engine's against.
function M.crc32c(s)
  local c = 0xffffffff
  for i = 1, #s do
    c = c ~ s:byte(i)
    for _ = 1, 8 do c = (c & 1 == 1) and ((c >> 1) ~ 0x82F63B78) or (c >> 1) end
  end
  return c ~ 0xffffffff
end
-- }====

return M
