--- Small helpers shared by luatf's Lua modules.
local util = {}

--- The keys of table 't' in a stable order (numbers, then strings, each
-- sorted): anything saved, compared or flattened uses it (pairs order is not
-- stable).
function util.sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    return a < b
  end)
  return keys
end

--- The keys of table 't' outside its array part 1..#t, in sorted_keys'
-- order, and #t: nested structures are flattened array part first, then
-- these keys.
function util.nonarray_keys(t)
  local keys, n = {}, #t
  for k in pairs(t) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    return a < b
  end)
  return keys, n
end

return util
